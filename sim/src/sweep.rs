//! Sweeps and replications: many independent runs, in parallel with rayon.
//!
//! A sweep varies one or two [`Axis`]es. A workload axis (`active`, `bs`, `iodepth`,
//! `numjobs`, `rwmixread`, `region`, `rw`) changes the workload; any other name is
//! `NODE.PARAM` and overrides a part figure of one node. Every point runs with the base seed,
//! so a point's report equals a single `simulate` with the same options; points are
//! collected in their order, so the result does not depend on the thread count.
//! A failed point is recorded with its error and the sweep goes on.

use crate::run::{SimError, SimOptions, simulate, target_drives};
use iopath_model::bound::{Mix, bound_with_share};
use iopath_model::paths::ResourceGraph;
use iopath_model::report::{Report, Spread, Sweep, SweepPoint};
use iopath_model::topology::ParamOverride;
use iopath_model::{Topology, Workload, WorkloadSpec};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// One varied parameter and its values, as written (`bs` = `4k,128k`; `pm.fbs` = `true,false`).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub param: String,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Axis(String),
}

const WORKLOAD_PARAMS: &[&str] = &["active", "bs", "iodepth", "numjobs", "rwmixread", "region", "rw", "runtime"];

impl Axis {
    /// Parses `PARAM=V1,V2` or a range `1..6` / `0..100:10` for numeric workload axes.
    pub fn parse(param: &str, values: &str) -> Result<Axis, SweepError> {
        let param = param.trim().to_string();
        if !WORKLOAD_PARAMS.contains(&param.as_str()) && !param.contains('.') {
            return Err(SweepError::Axis(format!(
                "{param:?} is neither a workload option ({}) nor NODE.PARAM",
                WORKLOAD_PARAMS.join(", ")
            )));
        }
        let values = expand_values(values).map_err(SweepError::Axis)?;
        if values.is_empty() {
            return Err(SweepError::Axis(format!("{param}: no values")));
        }
        Ok(Axis { param, values })
    }

    fn is_workload(&self) -> bool {
        WORKLOAD_PARAMS.contains(&self.param.as_str())
    }
}

/// `1..6` -> 1,2,..,6; `0..100:10` -> 0,10,..,100; `a,b,c` -> a,b,c.
pub fn expand_values(s: &str) -> Result<Vec<String>, String> {
    let s = s.trim();
    if let Some((a, rest)) = s.split_once("..") {
        let (b, step) = match rest.split_once(':') {
            Some((b, st)) => (b, st),
            None => (rest, "1"),
        };
        let (a, b, step): (i64, i64, i64) = match (a.trim().parse(), b.trim().parse(), step.trim().parse()) {
            (Ok(a), Ok(b), Ok(st)) if st > 0 && a <= b && (b - a) / st <= 10_000 => (a, b, st),
            _ => {
                return Err(format!(
                    "{s:?} is not a range START..END[:STEP] with START <= END, e.g. 1..6 or 0..100:10"
                ));
            }
        };
        return Ok((0..).map(|k| a + k * step).take_while(|v| *v <= b).map(|v| v.to_string()).collect());
    }
    Ok(s.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect())
}

/// Sets one workload axis value on a spec (as a sweep point does).
pub fn apply_workload(spec: &mut WorkloadSpec, param: &str, v: &str) -> Result<(), String> {
    let num = |v: &str| v.parse::<u32>().map_err(|_| format!("{param}={v}: expected a whole number"));
    match param {
        "active" => {
            spec.active = Some(num(v)? as usize);
            spec.drives = None;
        }
        "bs" => spec.bs = Some(v.to_string()),
        "iodepth" => spec.iodepth = Some(num(v)?),
        "numjobs" => spec.numjobs = Some(num(v)?),
        "rwmixread" => spec.rwmixread = Some(num(v)?),
        "region" => spec.region = Some(v.to_string()),
        "rw" => spec.rw = Some(v.to_string()),
        "runtime" => spec.runtime = Some(v.to_string()),
        _ => return Err(format!("{param} is not a workload option")),
    }
    Ok(())
}

fn json_value(v: &str) -> serde_json::Value {
    if let Ok(i) = v.parse::<i64>() {
        return serde_json::Value::from(i);
    }
    if let Ok(f) = v.parse::<f64>() {
        return serde_json::Value::from(f);
    }
    match v {
        "true" => serde_json::Value::Bool(true),
        "false" => serde_json::Value::Bool(false),
        _ => serde_json::Value::String(v.to_string()),
    }
}

/// The closed-form bound on total MB/s for a workload on a topology.
pub fn workload_bound(t: &Topology, w: &Workload) -> Option<f64> {
    let g = ResourceGraph::new(t);
    let drives = target_drives(t, w).ok()?;
    // A copy reads one drive and writes another: over the pair, half the bytes are reads.
    let share = if !w.copies.is_empty() { 0.5 } else { w.rw.read_share(w.rwmixread) };
    let mix = match share {
        s if s >= 1.0 => Mix::Read,
        s if s <= 0.0 => Mix::Write,
        _ => Mix::Mixed,
    };
    Some(bound_with_share(t, &g, &drives, mix, share, w.bs.get(), w.rw.is_random()).total_mb_s)
}

/// Runs one point: the topology with its overrides, the workload with its values.
fn run_point(
    t: &Topology,
    base: &WorkloadSpec,
    axes: &[(&Axis, &String)],
    replications: u32,
    opts: &SimOptions,
) -> Result<(Report, Option<f64>), String> {
    let mut spec = base.clone();
    let mut overrides = Vec::new();
    for (axis, v) in axes {
        if axis.is_workload() {
            apply_workload(&mut spec, &axis.param, v)?;
        } else {
            let o: ParamOverride = format!("{}={}", axis.param, v).parse()?;
            overrides.push(o);
        }
    }
    // Only a point that overrides a part figure needs a topology of its own (a clone of the
    // 24-bay build's topology costs as much as simulating its one-drive point).
    let owned;
    let topo = if overrides.is_empty() {
        t
    } else {
        owned = t.with_overrides(&overrides).map_err(|e| e.to_string())?;
        &owned
    };
    let w = spec.resolve().map_err(|errs| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?;
    let r = replicate(topo, &w, replications, opts).map_err(|e| e.to_string())?;
    Ok((r, workload_bound(topo, &w)))
}

/// Runs a sweep over one or two axes; `on_point` is called (from any thread) as points finish.
pub fn sweep(
    t: &Topology,
    base: &WorkloadSpec,
    axes: &[Axis],
    replications: u32,
    opts: &SimOptions,
    on_point: &(dyn Fn() + Sync),
) -> Sweep {
    let mut combos: Vec<Vec<(&Axis, &String)>> = vec![Vec::new()];
    for a in axes {
        combos =
            combos.into_iter().flat_map(|c| a.values.iter().map(move |v| [c.clone(), vec![(a, v)]].concat())).collect();
    }
    let cancelled = AtomicBool::new(false);
    // Start the costliest points first (largest first balances two or more workers best);
    // results are put back in point order, so the output does not depend on scheduling.
    // par_bridge hands out points one at a time in this order to whichever worker is free
    // (a shared queue); an indexed par_iter would split the list in halves, one per worker,
    // and balance only by stealing pieces of the other's half.
    let mut order: Vec<usize> = (0..combos.len()).collect();
    order.sort_by(|&a, &b| cost_hint(&combos[b]).total_cmp(&cost_hint(&combos[a])).then(a.cmp(&b)));
    let mut done: Vec<(usize, SweepPoint)> = order
        .iter()
        .par_bridge()
        .map(|&i| (i, &combos[i]))
        .map(|(i, c)| {
            let stop = opts.cancel.is_some_and(|x| x.load(Ordering::Relaxed));
            let result =
                if stop { Err("not run: interrupted".to_string()) } else { run_point(t, base, c, replications, opts) };
            if stop {
                cancelled.store(true, Ordering::Relaxed);
            }
            on_point();
            let (report, bound_mb_s, error) = match result {
                Ok((r, b)) => {
                    if r.partial {
                        cancelled.store(true, Ordering::Relaxed);
                    }
                    (Some(r), b, None)
                }
                Err(e) => (None, None, Some(e)),
            };
            (
                i,
                SweepPoint {
                    param: c.first().map(|(a, _)| a.param.clone()).unwrap_or_default(),
                    value: c.first().map(|(_, v)| json_value(v)).unwrap_or_default(),
                    param2: c.get(1).map(|(a, _)| a.param.clone()),
                    value2: c.get(1).map(|(_, v)| json_value(v)),
                    report,
                    error,
                    bound_mb_s,
                },
            )
        })
        .collect();
    done.sort_by_key(|(i, _)| *i);
    let points: Vec<SweepPoint> = done.into_iter().map(|(_, p)| p).collect();
    Sweep {
        schema_version: iopath_model::report::SCHEMA_VERSION,
        topology: t.name.clone(),
        points,
        partial: cancelled.load(Ordering::Relaxed),
    }
}

/// A rough relative cost of a point: more active drives, deeper queues and smaller blocks
/// mean more events. Only the order of starting points depends on it, never a result.
fn cost_hint(c: &[(&Axis, &String)]) -> f64 {
    c.iter()
        .map(|(a, v)| match a.param.as_str() {
            "active" | "iodepth" | "numjobs" => v.parse::<f64>().unwrap_or(1.0).max(1.0),
            "bs" => iopath_model::units::parse_size(v).map(|b| 1.0 / b.as_f64().max(512.0)).unwrap_or(1.0),
            _ => 1.0,
        })
        .product()
}

/// Runs a workload with `n` seeds (`seed`, `seed+1`, ...) in parallel and reports the mean,
/// with the spread of the totals. `n <= 1` is a single run.
pub fn replicate(t: &Topology, w: &Workload, n: u32, opts: &SimOptions) -> Result<Report, SimError> {
    if n <= 1 {
        return simulate(t, w, opts);
    }
    let runs: Vec<Result<Report, SimError>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut wi = w.clone();
            wi.seed = w.seed.wrapping_add(u64::from(i));
            simulate(t, &wi, opts)
        })
        .collect();
    let runs: Vec<Report> = runs.into_iter().collect::<Result<_, _>>()?;
    let k = runs.len() as f64;
    let mut r = runs[0].clone();
    r.workload = serde_json::to_value(w).unwrap_or_default();
    let avg = |f: &dyn Fn(&Report) -> f64| runs.iter().map(f).sum::<f64>() / k;
    r.total.read_mb_s = avg(&|x| x.total.read_mb_s);
    r.total.write_mb_s = avg(&|x| x.total.write_mb_s);
    r.total.mb_s = avg(&|x| x.total.mb_s);
    r.total.iops = avg(&|x| x.total.iops);
    r.total.lat_us.mean = avg(&|x| x.total.lat_us.mean);
    r.total.lat_us.p50 = avg(&|x| x.total.lat_us.p50);
    r.total.lat_us.p99 = avg(&|x| x.total.lat_us.p99);
    r.total.lat_us.max = runs.iter().map(|x| x.total.lat_us.max).fold(0.0, f64::max);
    for (i, d) in r.drives.iter_mut().enumerate() {
        d.read_mb_s = avg(&|x| x.drives[i].read_mb_s);
        d.write_mb_s = avg(&|x| x.drives[i].write_mb_s);
        d.iops = avg(&|x| x.drives[i].iops);
        d.lat_us.mean = avg(&|x| x.drives[i].lat_us.mean);
        d.lat_us.p50 = avg(&|x| x.drives[i].lat_us.p50);
        d.lat_us.p99 = avg(&|x| x.drives[i].lat_us.p99);
    }
    for (i, l) in r.links.iter_mut().enumerate() {
        l.util_up = avg(&|x| x.links[i].util_up);
        l.util_down = avg(&|x| x.links[i].util_down);
    }
    r.bottleneck.util = avg(&|x| x.bottleneck.util);
    r.cost.events = runs.iter().map(|x| x.cost.events).sum();
    r.cost.ios = runs.iter().map(|x| x.cost.ios).sum();
    r.cost.wall_s = runs.iter().map(|x| x.cost.wall_s).sum();
    r.partial = runs.iter().any(|x| x.partial);
    let mb: Vec<f64> = runs.iter().map(|x| x.total.mb_s).collect();
    let io: Vec<f64> = runs.iter().map(|x| x.total.iops).collect();
    r.spread = Some(Spread {
        replications: n,
        mb_s_min: mb.iter().copied().fold(f64::INFINITY, f64::min),
        mb_s_max: mb.iter().copied().fold(0.0, f64::max),
        iops_min: io.iter().copied().fold(f64::INFINITY, f64::min),
        iops_max: io.iter().copied().fold(0.0, f64::max),
    });
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand() {
        assert_eq!(expand_values("1..4").unwrap(), ["1", "2", "3", "4"]);
        assert_eq!(expand_values("0..100:50").unwrap(), ["0", "50", "100"]);
        assert_eq!(expand_values("4k, 128k").unwrap(), ["4k", "128k"]);
        assert!(expand_values("5..1").is_err());
        assert!(expand_values("1..x").is_err());
    }

    #[test]
    fn axes_reject_unknown_names() {
        assert!(Axis::parse("colour", "1,2").is_err());
        assert!(Axis::parse("hba.lanes", "1,2").is_ok());
    }
}
