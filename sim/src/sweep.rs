//! Sweeps and replications: many independent runs, in parallel with rayon.
//!
//! A sweep varies one or two [`Axis`]es. A workload axis (`active`, `bs`, `iodepth`,
//! `numjobs`, `rwmixread`, `region`, `rw`) changes the workload; any other name is
//! `NODE.PARAM` and overrides a part figure of one node, or `pool.ID.FIELD` and sets a pool's
//! option (`pool.tank.layout=raidz1,zfs-mirror:2`). Every point runs with the base seed,
//! so a point's report equals a single `simulate` with the same options; points are
//! collected in their order, so the result does not depend on the thread count.
//! A failed point is recorded with its error and the sweep goes on.

use crate::run::{SimError, SimOptions, bottleneck_of, simulate, simulate_with_utils, target_drives};
use iopath_model::bound::{Mix, bound_with_share};
use iopath_model::paths::ResourceGraph;
use iopath_model::report::{LatencyMean, Report, Spread, Sweep, SweepPoint};
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

const WORKLOAD_PARAMS: &[&str] =
    &["active", "bs", "iodepth", "numjobs", "rwmixread", "region", "rw", "runtime", "pool", "fill"];

impl Axis {
    /// Parses `PARAM=V1,V2` or a range `1..6` / `0..100:10` for numeric workload axes.
    pub fn parse(param: &str, values: &str) -> Result<Axis, SweepError> {
        let param = param.trim().to_string();
        if !WORKLOAD_PARAMS.contains(&param.as_str()) && !param.contains('.') {
            return Err(SweepError::Axis(format!(
                "{param:?} is neither a workload option ({}) nor NODE.PARAM nor pool.ID.FIELD",
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
        // Pools (a pool's logical totals are the point's value): one pool against another
        // on the same host, a scrub or rebuild at several fill levels.
        "pool" => spec.pool = Some(v.to_string()),
        "fill" => spec.fill = Some(v.to_string()),
        _ => return Err(format!("{param} is not a workload option")),
    }
    Ok(())
}

/// A swept value as a sweep point records it: a number, a boolean, or the text as written.
pub fn json_value(v: &str) -> serde_json::Value {
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
    if w.pool.is_some() {
        // A pool's bound is on its logical bytes (the pool's closed form), as its total is.
        let (pool, failed) = crate::run::resolve_pool(t, w).ok()??;
        return Some(iopath_model::pool::bound::pool_bound(t, &g, pool, w, &failed).logical_mb_s);
    }
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
    let mut pools = Vec::new();
    for (axis, v) in axes {
        if axis.is_workload() {
            apply_workload(&mut spec, &axis.param, v)?;
        } else if iopath_model::pool::vary::is_pool_param(&axis.param) {
            pools.push(format!("{}={}", axis.param, v).parse::<iopath_model::pool::vary::PoolOverride>()?);
        } else {
            let o: ParamOverride = format!("{}={}", axis.param, v).parse()?;
            overrides.push(o);
        }
    }
    // Only a point that overrides a part figure needs a topology of its own (a clone of the
    // 24-bay build's topology costs as much as simulating its one-drive point).
    let owned = if overrides.is_empty() && pools.is_empty() {
        None
    } else {
        Some(t.with_changes(&overrides, &[], &pools, &[]).map_err(|e| e.to_string())?)
    };
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
/// with the spread of the totals. The mean is defined field by field: rates, IOPS, latencies
/// and utilizations are means (latency max the largest), byte and I/O counts and the
/// simulated and wall times are sums, and the bottleneck is recomputed from the mean
/// utilizations of every resource (see `Mean`). `n == 1` is a single run; `n` outside
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
        let runs: Vec<Option<Result<RunUtils, SimError>>> = (start..end)
            .into_par_iter()
            .map(|i| {
                (!cancelled()).then(|| {
                    let mut wi = w.clone();
                    wi.seed = w.seed.wrapping_add(u64::from(i));
                    simulate_with_utils(t, &wi, opts)
                })
            })
            .collect();
        for r in runs.into_iter().flatten() {
            let (r, utils) = r?;
            if r.partial {
                interrupted.get_or_insert(r);
            } else {
                match &mut acc {
                    None => acc = Some(Mean::new(r, &utils)),
                    Some(m) => m.add(&r, &utils),
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
    let mut r = acc.finish(w, &ResourceGraph::new(t));
    if interrupted.is_some() || k < n {
        r.partial = true;
        r.warnings.push(format!(
            "interrupted after {k} of {n} replications: the mean and spread are over the {k} seeds that ran to the end"
        ));
    }
    Ok(r)
}

/// A run's report and the utilization of every resource of its graph.
type RunUtils = (Report, Vec<f64>);

/// Running sums over replications, in seed order, and the report they make.
///
/// A replicated report is defined field by field:
/// - rates (MB/s), IOPS, latency means and percentiles, link and resource utilizations: the
///   mean over the runs; latency `max`: the largest of any run; latency bins: every run's
///   counts added (`LatencyMean`);
/// - counts (each drive's `read_bytes`, `write_bytes`, `ios`; `cost.events`, `cost.ios`)
///   and times (`cost.sim_s`, `cost.wall_s`): the sum over the runs, so the drives' `ios` add
///   up to `cost.ios` as in one run, and in a time-based run a drive's bytes over `cost.sim_s`
///   are its mean rate;
/// - the bottleneck: the most utilized resource of the mean utilizations (recomputed, not
///   any one run's);
/// - warnings: every run's, each once; `spread`: min and max of the totals over the runs.
struct Mean {
    base: Report,
    k: u32,
    total: [f64; 4],
    lat: LatencyMean,
    drives: Vec<[f64; 3]>,
    drive_lat: Vec<LatencyMean>,
    counts: Vec<[u64; 3]>,
    links: Vec<[f64; 2]>,
    utils: Vec<f64>,
    events: u64,
    ios: u64,
    wall_s: f64,
    sim_s: f64,
    mb_s: (f64, f64),
    iops: (f64, f64),
    warnings: Vec<String>,
    /// A pool run's section: sums of the same kinds as above.
    pool: Option<PoolMean>,
}

/// Running sums of a pool section over replications: rates, latencies, overhead, a
/// maintenance task's rates and hours are means; bytes and I/O counts are sums.
#[derive(Default)]
struct PoolMean {
    rates: [f64; 5],
    lat: LatencyMean,
    counts: [u64; 5],
    maint: Vec<[f64; 2]>,
}

impl PoolMean {
    fn add(&mut self, p: &iopath_model::report::PoolResult) {
        let v = [p.read_mb_s, p.write_mb_s, p.mb_s, p.iops, p.overhead];
        for (s, v) in self.rates.iter_mut().zip(v) {
            *s += v;
        }
        self.lat.add(&p.lat_us, 1.0);
        let c = [p.read_bytes, p.write_bytes, p.ios, p.member_read_bytes, p.member_write_bytes];
        for (s, v) in self.counts.iter_mut().zip(c) {
            *s += v;
        }
        if let Some(m) = &p.maintenance {
            let v = std::iter::once([m.rate_mb_s, m.hours]).chain(m.segments.iter().map(|s| [s.rate_mb_s, s.hours]));
            self.maint.resize(1 + m.segments.len(), [0.0; 2]);
            for (s, v) in self.maint.iter_mut().zip(v) {
                s[0] += v[0];
                s[1] += v[1];
            }
        }
    }

    fn finish(&self, p: &mut iopath_model::report::PoolResult, k: f64) {
        let [read, write, mb, iops, overhead] = self.rates.map(|v| v / k);
        (p.read_mb_s, p.write_mb_s, p.mb_s, p.iops, p.overhead) = (read, write, mb, iops, overhead);
        p.lat_us = self.lat.finish(k);
        [p.read_bytes, p.write_bytes, p.ios, p.member_read_bytes, p.member_write_bytes] = self.counts;
        if let Some(m) = p.maintenance.as_mut() {
            let mut it = self.maint.iter().map(|s| [s[0] / k, s[1] / k]);
            if let Some([rate, hours]) = it.next() {
                (m.rate_mb_s, m.hours) = (rate, hours);
            }
            for (seg, [rate, hours]) in m.segments.iter_mut().zip(it) {
                (seg.rate_mb_s, seg.hours) = (rate, hours);
            }
        }
    }
}

impl Mean {
    fn new(r: Report, utils: &[f64]) -> Mean {
        let mut m = Mean {
            total: [0.0; 4],
            lat: LatencyMean::default(),
            drives: vec![[0.0; 3]; r.drives.len()],
            drive_lat: vec![LatencyMean::default(); r.drives.len()],
            counts: vec![[0; 3]; r.drives.len()],
            links: vec![[0.0; 2]; r.links.len()],
            utils: vec![0.0; utils.len()],
            events: 0,
            ios: 0,
            wall_s: 0.0,
            sim_s: 0.0,
            mb_s: (f64::INFINITY, 0.0),
            iops: (f64::INFINITY, 0.0),
            warnings: Vec::new(),
            k: 0,
            pool: r.pool.as_ref().map(|_| PoolMean::default()),
            base: r,
        };
        let first = m.base.clone();
        m.add(&first, utils);
        m
    }

    fn add(&mut self, x: &Report, utils: &[f64]) {
        self.k += 1;
        let t = &x.total;
        for (s, v) in self.total.iter_mut().zip([t.read_mb_s, t.write_mb_s, t.mb_s, t.iops]) {
            *s += v;
        }
        self.lat.add(&t.lat_us, 1.0);
        for (i, d) in x.drives.iter().enumerate().take(self.drives.len()) {
            for (a, v) in self.drives[i].iter_mut().zip([d.read_mb_s, d.write_mb_s, d.iops]) {
                *a += v;
            }
            self.drive_lat[i].add(&d.lat_us, 1.0);
            for (a, v) in self.counts[i].iter_mut().zip([d.read_bytes, d.write_bytes, d.ios]) {
                *a += v;
            }
        }
        for (s, l) in self.links.iter_mut().zip(&x.links) {
            s[0] += l.util_up;
            s[1] += l.util_down;
        }
        for (s, u) in self.utils.iter_mut().zip(utils) {
            *s += u;
        }
        self.events += x.cost.events;
        self.ios += x.cost.ios;
        self.wall_s += x.cost.wall_s;
        self.sim_s += x.cost.sim_s;
        self.mb_s = (self.mb_s.0.min(t.mb_s), self.mb_s.1.max(t.mb_s));
        self.iops = (self.iops.0.min(t.iops), self.iops.1.max(t.iops));
        for w in &x.warnings {
            if !self.warnings.contains(w) {
                self.warnings.push(w.clone());
            }
        }
        if let (Some(m), Some(p)) = (self.pool.as_mut(), &x.pool) {
            m.add(p);
        }
    }

    fn finish(self, w: &Workload, graph: &ResourceGraph) -> Report {
        let k = f64::from(self.k);
        let mut r = self.base;
        r.workload = w.clone();
        let [read, write, mb, iops] = self.total.map(|v| v / k);
        r.total.read_mb_s = read;
        r.total.write_mb_s = write;
        r.total.mb_s = mb;
        r.total.iops = iops;
        r.total.lat_us = self.lat.finish(k);
        for (i, d) in r.drives.iter_mut().enumerate() {
            let [read, write, iops] = self.drives[i].map(|v| v / k);
            d.read_mb_s = read;
            d.write_mb_s = write;
            d.iops = iops;
            d.lat_us = self.drive_lat[i].finish(k);
            [d.read_bytes, d.write_bytes, d.ios] = self.counts[i];
        }
        for (l, s) in r.links.iter_mut().zip(&self.links) {
            l.util_up = s[0] / k;
            l.util_down = s[1] / k;
        }
        let utils: Vec<f64> = self.utils.iter().map(|u| u / k).collect();
        r.bottleneck = bottleneck_of(graph, &utils);
        r.cost.events = self.events;
        r.cost.ios = self.ios;
        r.cost.wall_s = self.wall_s;
        r.cost.sim_s = self.sim_s;
        r.partial = false;
        r.covered_s = None;
        r.warnings = self.warnings;
        if let (Some(m), Some(p)) = (&self.pool, r.pool.as_mut()) {
            m.finish(p, k);
        }
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

    fn topology() -> Topology {
        let text = "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n\
                    [[drive]]\nid = \"ssd\"\ncount = 2\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\n";
        Topology::parse("t.toml", text, &iopath_model::Catalog::builtin()).unwrap()
    }

    fn run(t: &Topology, spec: WorkloadSpec) -> (Report, Vec<f64>) {
        let w = spec.resolve().unwrap();
        crate::run::simulate_with_utils(t, &w, &SimOptions::default()).unwrap()
    }

    /// N identical runs replicate to the run itself, but for the counts and times, which
    /// are sums (N times the run's), and the spread (min = max).
    #[test]
    fn identical_runs_replicate_to_the_run() {
        let t = topology();
        let spec = WorkloadSpec { rw: Some("read".into()), runtime: Some("50ms".into()), ..Default::default() };
        let (one, utils) = run(&t, spec.clone());
        assert!(one.cost.ios > 0);
        let mut m = Mean::new(one.clone(), &utils);
        for _ in 1..3 {
            m.add(&one, &utils);
        }
        let r = m.finish(&one.workload, &ResourceGraph::new(&t));
        let mut expect = one.clone();
        for d in &mut expect.drives {
            (d.read_bytes, d.write_bytes, d.ios) = (3 * d.read_bytes, 3 * d.write_bytes, 3 * d.ios);
        }
        expect.cost.events *= 3;
        expect.cost.ios *= 3;
        expect.cost.sim_s = one.cost.sim_s + one.cost.sim_s + one.cost.sim_s;
        expect.cost.wall_s *= 3.0;
        expect.spread = Some(Spread {
            replications: 3,
            mb_s_min: one.total.mb_s,
            mb_s_max: one.total.mb_s,
            iops_min: one.total.iops,
            iops_max: one.total.iops,
        });
        // Means of three equal numbers may differ from the number in the last bit.
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
        assert!(near(r.total.mb_s, expect.total.mb_s) && near(r.total.lat_us.mean, expect.total.lat_us.mean));
        assert_eq!(r.bottleneck.id, expect.bottleneck.id);
        assert!(near(r.bottleneck.util, expect.bottleneck.util));
        let exact = |mut x: Report| {
            x.total = Default::default();
            x.bottleneck.util = 0.0;
            for d in &mut x.drives {
                (d.read_mb_s, d.write_mb_s, d.iops, d.lat_us) = (0.0, 0.0, 0.0, Default::default());
            }
            for l in &mut x.links {
                (l.util_up, l.util_down) = (0.0, 0.0);
            }
            x
        };
        assert_eq!(exact(r.clone()), exact(expect));
        for (a, b) in r.drives.iter().zip(&one.drives) {
            assert!(near(a.read_mb_s, b.read_mb_s) && near(a.iops, b.iops) && near(a.lat_us.p99, b.lat_us.p99));
            assert_eq!(a.lat_us.max, b.lat_us.max);
        }
        // The drives' I/Os add up to the run's, as in one run.
        assert_eq!(r.drives.iter().map(|d| d.ios).sum::<u64>(), r.cost.ios);
    }

    /// Two different runs: rates and utilizations are means, counts sums, the latency max the
    /// larger, and the bottleneck the most utilized resource of the mean utilizations, which
    /// is neither run's own when each run has a different one.
    #[test]
    fn two_runs_replicate_by_field() {
        let t = topology();
        let g = ResourceGraph::new(&t);
        let spec = WorkloadSpec { rw: Some("read".into()), runtime: Some("20ms".into()), ..Default::default() };
        let (a, ua) = run(&t, spec.clone());
        let mut b = a.clone();
        for d in &mut b.drives {
            d.read_mb_s *= 3.0;
            d.ios += 7;
            d.read_bytes += 7 * 131072;
            d.lat_us.max = 1e6;
        }
        b.total.mb_s = a.total.mb_s * 3.0;
        b.cost.ios += 14;
        b.warnings = vec!["b's warning".into()];
        // Run a's utilizations put resource x first, run b's resource y (x's util is 0.6 in a
        // and 0.1 in b; y's 0.5 in both): the mean is x 0.35, y 0.5, so y binds.
        let (x, y) = (0, 1);
        let mut ua2 = vec![0.0; ua.len()];
        let mut ub2 = vec![0.0; ua.len()];
        (ua2[x], ua2[y]) = (0.6, 0.5);
        (ub2[x], ub2[y]) = (0.1, 0.5);
        assert_eq!(bottleneck_of(&g, &ua2).id, g.resources[x].id);
        let mut m = Mean::new(a.clone(), &ua2);
        m.add(&b, &ub2);
        let r = m.finish(&a.workload, &g);
        assert_eq!(r.total.mb_s, (a.total.mb_s + 3.0 * a.total.mb_s) / 2.0);
        for (d, da) in r.drives.iter().zip(&a.drives) {
            assert_eq!(d.read_mb_s, (da.read_mb_s + 3.0 * da.read_mb_s) / 2.0);
            assert_eq!(d.ios, 2 * da.ios + 7);
            assert_eq!(d.read_bytes, 2 * da.read_bytes + 7 * 131072);
            assert_eq!(d.lat_us.max, 1e6);
        }
        assert_eq!(r.cost.ios, 2 * a.cost.ios + 14);
        assert_eq!(r.drives.iter().map(|d| d.ios).sum::<u64>(), r.cost.ios);
        assert_eq!(r.bottleneck.id, g.resources[y].id);
        assert_eq!(r.bottleneck.util, 0.5);
        assert_eq!(r.warnings, ["b's warning"]);
        let s = r.spread.unwrap();
        assert_eq!((s.replications, s.mb_s_min, s.mb_s_max), (2, a.total.mb_s, 3.0 * a.total.mb_s));
    }

    /// The public path: a deterministic workload (a sequential read on drives without a
    /// latency spread draws nothing from its seed) replicated over 3 seeds is the single run,
    /// with counts tripled.
    #[test]
    fn replicate_of_a_deterministic_run_is_the_run() {
        let text = "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n\
                    [[drive]]\nid = \"ssd\"\ncount = 2\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\n\
                    params = { read_latency_p999_us = 80 }\n";
        let t = Topology::parse("t.toml", text, &iopath_model::Catalog::builtin()).unwrap();
        let w = WorkloadSpec { rw: Some("read".into()), runtime: Some("20ms".into()), ..Default::default() }
            .resolve()
            .unwrap();
        let one = simulate(&t, &w, &SimOptions::default()).unwrap();
        let r = replicate(&t, &w, 3, &SimOptions::default()).unwrap();
        assert_eq!(r.cost.ios, 3 * one.cost.ios);
        assert_eq!(r.bottleneck.id, one.bottleneck.id);
        assert!((r.bottleneck.util - one.bottleneck.util).abs() <= 1e-12);
        assert!((r.total.mb_s - one.total.mb_s).abs() <= 1e-9 * one.total.mb_s);
        assert_eq!(r.drives[0].read_bytes, 3 * one.drives[0].read_bytes);
    }

    #[test]
    fn axes_reject_unknown_names() {
        assert!(Axis::parse("colour", "1,2").is_err());
        assert!(Axis::parse("hba.lanes", "1,2").is_ok());
    }
}
