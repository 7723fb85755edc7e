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

/// One point's topology (`None`: the base one, when the point overrides no part figure)
/// and workload.
fn point_setup(
    t: &Topology,
    base: &WorkloadSpec,
    axes: &[(&Axis, &String)],
) -> Result<(Option<Topology>, Workload), String> {
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
    let owned =
        if overrides.is_empty() { None } else { Some(t.with_overrides(&overrides).map_err(|e| e.to_string())?) };
    let w = spec.resolve().map_err(|errs| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?;
    Ok((owned, w))
}

/// Runs one point: the topology with its overrides, the workload with its values.
fn run_point(
    t: &Topology,
    base: &WorkloadSpec,
    axes: &[(&Axis, &String)],
    replications: u32,
    opts: &SimOptions,
) -> Result<(Report, Option<f64>), String> {
    let (owned, w) = point_setup(t, base, axes)?;
    let topo = owned.as_ref().unwrap_or(t);
    let r = replicate(topo, &w, replications, opts).map_err(|e| e.to_string())?;
    Ok((r, workload_bound(topo, &w)))
}

fn combinations(axes: &[Axis]) -> Vec<Vec<(&Axis, &String)>> {
    let mut combos: Vec<Vec<(&Axis, &String)>> = vec![Vec::new()];
    for a in axes {
        combos =
            combos.into_iter().flat_map(|c| a.values.iter().map(move |v| [c.clone(), vec![(a, v)]].concat())).collect();
    }
    combos
}

/// The sweep's costliest point by the same rough measure that orders the points (most
/// drives, deepest queues, smallest blocks), for estimating a sweep's wall time from one
/// run: its topology (`None`: the base one) and workload.
pub fn costliest_point(
    t: &Topology,
    base: &WorkloadSpec,
    axes: &[Axis],
) -> Result<(Option<Topology>, Workload), String> {
    let combos = combinations(axes);
    let c = combos.iter().max_by(|a, b| cost_hint(a).total_cmp(&cost_hint(b))).ok_or("a sweep without points")?;
    point_setup(t, base, c)
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
    let combos = combinations(axes);
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

/// The most seeds one run may be replicated over. The spread of a mean over n seeds shrinks
/// as 1/sqrt(n): 1,000 seeds put it at 3% of one seed's, far below the model's own error
/// (a few percent against published points), so more would only cost time.
pub const MAX_REPLICATIONS: u32 = 1000;

/// Runs a workload with `n` seeds (`seed`, `seed+1`, ...) in parallel and reports the mean,
/// with the spread of the totals. `n == 1` is a single run; `n` outside
/// 1..=[`MAX_REPLICATIONS`] is refused before anything runs.
///
/// Seeds run in chunks of a few per thread and are summed in seed order as chunks finish, so
/// memory does not grow with `n` and the result does not depend on the thread count. The
/// cancel flag is checked before every seed: after an interrupt the report is the mean over
/// the seeds that ran to the end, marked partial (or, if none did, the interrupted run itself,
/// whose numbers cover the time it reached).
pub fn replicate(t: &Topology, w: &Workload, n: u32, opts: &SimOptions) -> Result<Report, SimError> {
    if !(1..=MAX_REPLICATIONS).contains(&n) {
        return Err(SimError::Replications { asked: n, max: MAX_REPLICATIONS });
    }
    if n == 1 {
        return simulate(t, w, opts);
    }
    let cancelled = || opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let chunk = (rayon::current_num_threads().max(1) * 4) as u32;
    let mut acc: Option<Mean> = None;
    let mut interrupted: Option<Report> = None;
    let mut start = 0;
    while start < n && !cancelled() {
        let end = n.min(start + chunk);
        let runs: Vec<Option<Result<Report, SimError>>> = (start..end)
            .into_par_iter()
            .map(|i| {
                (!cancelled()).then(|| {
                    let mut wi = w.clone();
                    wi.seed = w.seed.wrapping_add(u64::from(i));
                    simulate(t, &wi, opts)
                })
            })
            .collect();
        for r in runs.into_iter().flatten() {
            let r = r?;
            if r.partial {
                interrupted.get_or_insert(r);
            } else {
                match &mut acc {
                    None => acc = Some(Mean::new(r)),
                    Some(m) => m.add(&r),
                }
            }
        }
        start = end;
    }
    let Some(acc) = acc else {
        // Interrupted before any seed finished: the first interrupted run (or, if the flag
        // was set before anything started, a run that stops at once) says what was covered.
        return match interrupted {
            Some(r) => Ok(r),
            None => simulate(t, w, opts),
        };
    };
    let k = acc.k;
    let mut r = acc.finish(w);
    if interrupted.is_some() || k < n {
        r.partial = true;
        r.warnings.push(format!(
            "interrupted after {k} of {n} replications: the mean and spread are over the {k} seeds that ran to the end"
        ));
    }
    Ok(r)
}

/// Running sums over replications, in seed order.
struct Mean {
    base: Report,
    k: u32,
    total: [f64; 7],
    lat_max: f64,
    drives: Vec<[f64; 6]>,
    links: Vec<[f64; 2]>,
    bottleneck_util: f64,
    events: u64,
    ios: u64,
    wall_s: f64,
    mb_s: (f64, f64),
    iops: (f64, f64),
}

impl Mean {
    fn new(r: Report) -> Mean {
        let mut m = Mean {
            total: [0.0; 7],
            lat_max: 0.0,
            drives: vec![[0.0; 6]; r.drives.len()],
            links: vec![[0.0; 2]; r.links.len()],
            bottleneck_util: 0.0,
            events: 0,
            ios: 0,
            wall_s: 0.0,
            mb_s: (f64::INFINITY, 0.0),
            iops: (f64::INFINITY, 0.0),
            k: 0,
            base: r,
        };
        let first = m.base.clone();
        m.add(&first);
        m
    }

    fn add(&mut self, x: &Report) {
        self.k += 1;
        let t = &x.total;
        for (s, v) in self.total.iter_mut().zip([
            t.read_mb_s,
            t.write_mb_s,
            t.mb_s,
            t.iops,
            t.lat_us.mean,
            t.lat_us.p50,
            t.lat_us.p99,
        ]) {
            *s += v;
        }
        self.lat_max = self.lat_max.max(t.lat_us.max);
        for (s, d) in self.drives.iter_mut().zip(&x.drives) {
            for (a, v) in
                s.iter_mut().zip([d.read_mb_s, d.write_mb_s, d.iops, d.lat_us.mean, d.lat_us.p50, d.lat_us.p99])
            {
                *a += v;
            }
        }
        for (s, l) in self.links.iter_mut().zip(&x.links) {
            s[0] += l.util_up;
            s[1] += l.util_down;
        }
        self.bottleneck_util += x.bottleneck.util;
        self.events += x.cost.events;
        self.ios += x.cost.ios;
        self.wall_s += x.cost.wall_s;
        self.mb_s = (self.mb_s.0.min(t.mb_s), self.mb_s.1.max(t.mb_s));
        self.iops = (self.iops.0.min(t.iops), self.iops.1.max(t.iops));
    }

    fn finish(self, w: &Workload) -> Report {
        let k = f64::from(self.k);
        let mut r = self.base;
        r.workload = serde_json::to_value(w).unwrap_or_default();
        let [read, write, mb, iops, mean, p50, p99] = self.total.map(|v| v / k);
        r.total.read_mb_s = read;
        r.total.write_mb_s = write;
        r.total.mb_s = mb;
        r.total.iops = iops;
        r.total.lat_us.mean = mean;
        r.total.lat_us.p50 = p50;
        r.total.lat_us.p99 = p99;
        r.total.lat_us.max = self.lat_max;
        for (d, s) in r.drives.iter_mut().zip(&self.drives) {
            let [read, write, iops, mean, p50, p99] = s.map(|v| v / k);
            d.read_mb_s = read;
            d.write_mb_s = write;
            d.iops = iops;
            d.lat_us.mean = mean;
            d.lat_us.p50 = p50;
            d.lat_us.p99 = p99;
        }
        for (l, s) in r.links.iter_mut().zip(&self.links) {
            l.util_up = s[0] / k;
            l.util_down = s[1] / k;
        }
        r.bottleneck.util = self.bottleneck_util / k;
        r.cost.events = self.events;
        r.cost.ios = self.ios;
        r.cost.wall_s = self.wall_s;
        r.partial = false;
        r.spread = Some(Spread {
            replications: self.k,
            mb_s_min: self.mb_s.0,
            mb_s_max: self.mb_s.1,
            iops_min: self.iops.0,
            iops_max: self.iops.1,
        });
        r
    }
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
