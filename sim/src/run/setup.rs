//! Building a run's state from the topology and the workload: jobs, classes, drives,
//! port multipliers.

use super::*;
use std::sync::Arc;

impl Sim {
    pub(super) fn new(t: &Topology, w: &Workload) -> Result<Sim, SimError> {
        Sim::with_segment(t, w, 0)
    }

    /// A run's state; a pool's scrub or rebuild walks part `segment` of its plan (`pool.rs`).
    pub(super) fn with_segment(t: &Topology, w: &Workload, segment: u64) -> Result<Sim, SimError> {
        let targets = target_drives(t, w)?;
        let jobs_n = jobs_count(w, targets.len());
        let outstanding = jobs_n * u64::from(w.iodepth);
        if outstanding > MAX_OUTSTANDING_IOS {
            return Err(SimError::TooManyIos { jobs: jobs_n, iodepth: w.iodepth, max: MAX_OUTSTANDING_IOS });
        }
        let graph = ResourceGraph::new(t);
        let (coverage, ramp, runtime) = plan(t, w, &targets);
        // Port multipliers in use.
        let mut pms: Vec<PmSt> = Vec::new();
        let mut pm_of_node: Vec<Option<u32>> = vec![None; t.nodes.len()];
        for (ix, n) in t.nodes.iter().enumerate() {
            if let Some(pm) = n.spec.port_multiplier() {
                pm_of_node[ix] = Some(pms.len() as u32);
                pms.push(PmSt::new(!pm_uses_fbs(t, ix), pm.cbs_handover_us));
            }
        }
        let pool_setup = pool::setup(t, w)?;
        let mut sched = Scheduler::default();
        let mut drives = Vec::with_capacity(targets.len());
        let mut classes = Vec::with_capacity(2 * targets.len());
        let random = w.rw.is_random();
        // One geometry per distinct set of HDD figures, shared by the drives that have it.
        let mut geos: Vec<Arc<HddGeometry>> = Vec::new();
        for &d in &targets {
            let n = t.drive_figures(d);
            let hdd = n.is_hdd().then(|| hdd_state(n, &mut geos, spindle_phase(w.seed, drives.len() as u32)));
            let pm = t.up_from(d).find_map(|ix| pm_of_node[ix]);
            let mut class = [0u32; 2];
            for (k, dir) in [Dir::Read, Dir::Write].into_iter().enumerate() {
                class[k] = classes.len() as u32;
                // A pool's member classes: at the mean member I/O size, with the pool's own
                // costs per member byte (`pool.rs`).
                let bs = pool_setup.as_ref().map_or(w.bs.get(), |p| p.class_bs(d, k, w.bs.get()));
                let mut costs = graph.class_costs(t, d, dir, bs, random, false);
                match &pool_setup {
                    None => costs.extend(graph.job_cpu_cost(t, d, bs, w.numjobs)),
                    Some(p) => {
                        costs.extend(p.extra_costs(t, &graph, k));
                        costs = pool::merged(costs);
                    }
                }
                let mut cl = Class::new(costs);
                if let (Some(p), Some(sw)) = (pm, graph.fbs_switch_cost(t, d, bs)) {
                    cl.pm_switch = fbs_switch_of(&cl.costs, p, sw).map(Box::new);
                    pms[p as usize].fbs_classes.push((class[k], drives.len() as u32));
                }
                classes.push(cl);
            }
            let flash = (!n.is_hdd()).then(|| {
                let slot = drives.len() as u32;
                Box::new(flash::FlashSt::new(t, &graph, d, slot, w.seed, &classes[class[1] as usize].costs))
            });
            let lat = graph.latencies(t, d);
            // Truncated to the nanosecond (not rounded), as the run always has.
            let ns = |us: f64| SimDuration::from_nanos((us * 1e3) as u64);
            let host_half = ns(lat.host_us * 0.5);
            let fabric_half = ns(lat.fabric_us * 0.5);
            let lanes = DriveLanes {
                host_fabric: sched.lane(host_half + fabric_half),
                host: sched.lane(host_half),
                fabric: sched.lane(fabric_half),
                read: sched.lane(ns(n.read_latency_us)),
                write: sched.lane(ns(n.write_latency_us)),
            };
            drives.push(DriveSt {
                node: d,
                hdd,
                flash,
                units_free: n.parallelism.max(1),
                unit_wait: VecDeque::new(),
                fabric_half,
                pm,
                class,
                lanes,
                st: DriveStats::new(),
            });
        }
        let mut seed_index = 0u64;
        let mut new_rng = || {
            seed_index += 1;
            ChaCha8Rng::seed_from_u64(w.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed_index)
        };
        let jobs = match &pool_setup {
            Some(p) => {
                let any_hdd = targets.iter().any(|&d| t.drive_figures(d).is_hdd());
                p.jobs(w, coverage, (coverage && !any_hdd).then_some(SimTime::ZERO + runtime), &mut new_rng)
            }
            None => drive_jobs(t, w, &targets, coverage, runtime, &mut new_rng),
        };
        // A class no job can ever set moving (the write classes of a pure read run without
        // copies or a pool, the read classes of a pure write run) crosses nothing: the
        // resources it would share with its drive's other class stay private to that one.
        let idle: Vec<bool> = {
            let share = w.rw.read_share(w.rwmixread);
            let fixed = pool_setup.is_none() && w.copies.is_empty();
            let stage_idle = [fixed && share <= 0.0, fixed && share >= 1.0];
            let mut idle = vec![false; classes.len()];
            for dr in &drives {
                for (k, &c) in dr.class.iter().enumerate() {
                    idle[c as usize] = stage_idle[k];
                }
            }
            idle
        };
        dominated::split_dominated(&mut classes, &drives, &idle, graph.resources.len());
        let alloc = Alloc::new(&classes, &idle, graph.resources.len());
        let iodepth = pool_setup.as_ref().map_or(w.iodepth, |p| p.iodepth(t, w, jobs_n));
        let pool = pool_setup.map(|p| p.into_state(t, &graph, &targets, jobs_n as usize, segment));
        let win = Window::new(coverage, ramp, runtime);
        // Every job's I/Os in flight at once (32,768 at QD 32 on 1,024 drives): sized once, so
        // the start-up does not copy the slab at every doubling. A pool's member I/Os are
        // counted as they come.
        let slab = if pool.is_none() { outstanding as usize } else { 0 };
        Ok(Sim {
            sched,
            graph,
            jobs,
            ios: Vec::with_capacity(slab),
            free_ios: Vec::with_capacity(slab),
            class_drive: class_drives(&drives, classes.len()),
            classes,
            drives,
            pms,
            alloc,
            win,
            iodepth,
            wall_start: None,
            pool,
        })
    }
}

/// Each class's drive, with [`WRITE_CLASS`] set on a write class ([`Sim::class_drive`]).
fn class_drives(drives: &[DriveSt], n_classes: usize) -> Vec<u32> {
    let mut class_drive = vec![0u32; n_classes];
    for (d, dr) in drives.iter().enumerate() {
        class_drive[dr.class[0] as usize] = d as u32;
        class_drive[dr.class[1] as usize] = d as u32 | WRITE_CLASS;
    }
    class_drive
}

/// The jobs of a per-drive workload: one per copy, else `numjobs` on each target drive, each
/// starting at its share of the drive's region (a run that covers the regions once: an HDD's
/// job stops after its share of the bytes, an SSD's at the runtime).
fn drive_jobs(
    t: &Topology,
    w: &Workload,
    targets: &[NodeIx],
    coverage: bool,
    runtime: SimDuration,
    new_rng: &mut impl FnMut() -> ChaCha8Rng,
) -> Vec<Job> {
    let bs = w.bs.get() as f64;
    let random = w.rw.is_random();
    let slot_of = |d: NodeIx| targets.iter().position(|&x| x == d).expect("target drive") as u32;
    // Each job carries its own generator (a few hundred bytes): sized once, not regrown.
    let mut jobs =
        Vec::with_capacity(if w.copies.is_empty() { targets.len() * w.numjobs as usize } else { w.copies.len() });
    let region_of = |slot: u32| -> f64 {
        let cap = t.drive_figures(targets[slot as usize]).capacity_gb * 1e9;
        // fio's `size` in bytes bounds the region as its share does.
        let len = w.size.map_or(cap * w.region, |s| (cap * w.region).min(s.as_f64()));
        ((len / bs).floor() * bs).max(bs)
    };
    let ssd_until = |slot: u32| -> Option<SimTime> {
        (coverage && !t.drive_figures(targets[slot as usize]).is_hdd()).then_some(SimTime::ZERO + runtime)
    };
    let hdd_budget = |slot: u32| -> Option<f64> {
        (coverage && t.drive_figures(targets[slot as usize]).is_hdd()).then(|| region_of(slot))
    };
    if !w.copies.is_empty() {
        for c in &w.copies {
            let src = slot_of(t.drives.iter().copied().find(|&d| t.nodes[d].id == c.from).expect("checked"));
            let dst = slot_of(t.drives.iter().copied().find(|&d| t.nodes[d].id == c.to).expect("checked"));
            let region = region_of(src).min(region_of(dst));
            jobs.push(Job {
                drive: src,
                copy_to: Some(dst),
                read_share: 1.0,
                random: false,
                next_off: 0.0,
                region,
                bs,
                blocks: Job::blocks_of(region, bs),
                rng: new_rng(),
                budget: hdd_budget(src).map(|b| b.min(region)),
                issued: 0.0,
                until: ssd_until(src).and(ssd_until(dst)),
                stopped: false,
                outstanding: 0,
            });
        }
    } else {
        for slot in 0..targets.len() as u32 {
            let region = region_of(slot);
            for k in 0..w.numjobs {
                let start = ((region / f64::from(w.numjobs) * f64::from(k)) / bs).floor() * bs;
                jobs.push(Job {
                    drive: slot,
                    copy_to: None,
                    read_share: w.rw.read_share(w.rwmixread),
                    random,
                    next_off: start,
                    region,
                    bs,
                    blocks: Job::blocks_of(region, bs),
                    rng: new_rng(),
                    budget: hdd_budget(slot).map(|b| b / f64::from(w.numjobs)),
                    issued: 0.0,
                    until: ssd_until(slot),
                    stopped: false,
                    outstanding: 0,
                });
            }
        }
    }
    jobs
}

/// How many jobs a workload runs: one per copy, else `numjobs` on a pool or on each drive.
pub(crate) fn jobs_count(w: &Workload, targets: usize) -> u64 {
    if w.pool.is_some() && w.task != iopath_model::pool::Task::Io {
        1
    } else if w.pool.is_some() {
        u64::from(w.numjobs)
    } else if w.copies.is_empty() {
        targets as u64 * u64::from(w.numjobs)
    } else {
        w.copies.len() as u64
    }
}

impl Class {
    fn new(costs: Vec<Cost>) -> Class {
        Class {
            n_grp: costs.len() as u32,
            costs,
            window_bytes: 0.0,
            grp_bytes: 0.0,
            acc_t: SimTime::ZERO,
            fifo: Fifo::default(),
            rate: 0.0,
            last: SimTime::ZERO,
            version: 0,
            pm_switch: None,
        }
    }
}

/// The switch term `sw` of an FBS multiplier `pm` on the upstream among `costs`.
fn fbs_switch_of(costs: &[Cost], pm: u32, sw: Cost) -> Option<PmSwitch> {
    let ix = costs.iter().position(|c| c.resource == sw.resource)?;
    Some(PmSwitch { pm, ix, base: costs[ix].s_per_byte, extra: sw.s_per_byte })
}

impl DriveStats {
    fn new() -> DriveStats {
        DriveStats {
            read_bytes: 0.0,
            write_bytes: 0.0,
            ios: 0,
            hist: LatCounts::new(),
            lat_sum_ns: 0.0,
            first: None,
            last: SimTime::ZERO,
            used: false,
        }
    }
}

impl Window {
    /// The measured window of a run: after the ramp for `runtime`, or for a run that
    /// covers each region once, from 0 to wherever it ends.
    fn new(coverage: bool, ramp: SimDuration, runtime: SimDuration) -> Window {
        let start = SimTime::ZERO + ramp;
        let (start, end) = if coverage { (SimTime::ZERO, SimTime::MAX) } else { (start, start + runtime) };
        Window { start, end, time_based: !coverage, completed: 0, partial: false, reached: SimTime::ZERO }
    }
}

/// `geo`, as the one record shared by every drive with the same figures.
fn shared_geometry(geos: &mut Vec<Arc<HddGeometry>>, geo: HddGeometry) -> Arc<HddGeometry> {
    if let Some(g) = geos.iter().find(|g| ***g == geo) {
        return Arc::clone(g);
    }
    geos.push(Arc::new(geo));
    Arc::clone(&geos[geos.len() - 1])
}

/// A new HDD's state: at rest at the outer edge, its spindle `phase` of a turn on.
fn hdd_state(n: &iopath_model::parts::DriveFigures, geos: &mut Vec<Arc<HddGeometry>>, phase: f64) -> HddSt {
    let geo = shared_geometry(geos, HddGeometry::from_drive(n));
    HddSt {
        spin_ns: phase * geo.rev_ns,
        geo,
        head: 0.0,
        busy: false,
        queue: Vec::new(),
        current: None,
        ra: ReadAhead::default(),
        wb: WriteBack::default(),
        busy_ns: 0.0,
        write_cache: n.write_cache,
        dirty: VecDeque::new(),
        dirty_bytes: 0.0,
        destage: (0.0, 0.0),
        wait_room: VecDeque::new(),
        last_write_end: -1.0,
        smr: hdd_queue::smr_log(n),
    }
}

/// The share of a turn the spindle of target `slot` has made at time zero, drawn for the run's
/// seed: independent spindles are never synchronised, so identical drives started together do
/// not reach their first sectors on the same nanosecond (and a replication over seeds averages
/// over their phases, as repeated runs on real drives do).
fn spindle_phase(seed: u64, slot: u32) -> f64 {
    // SplitMix64's finaliser over the seed and the slot.
    let mut z = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (0x5B1D_u64 << 32 | u64::from(slot));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::spindle_phase;

    /// The phases of 1,024 drives fill the turn evenly (each sixteenth holds 64 expected,
    /// 7.7 standard deviations: 40 to 90 is over three), for every seed tried, and a seed's
    /// phases are not another's.
    #[test]
    fn spindle_phases_spread_over_the_turn() {
        for seed in [0, 1, 2, 42, u64::MAX] {
            let mut bins = [0u32; 16];
            for slot in 0..1024 {
                let p = spindle_phase(seed, slot);
                assert!((0.0..1.0).contains(&p), "seed {seed} slot {slot}: {p}");
                bins[(p * 16.0) as usize] += 1;
            }
            assert!(bins.iter().all(|&n| (40..=90).contains(&n)), "seed {seed}: {bins:?}");
            let moved = (0..1024).filter(|&s| spindle_phase(seed, s) != spindle_phase(seed.wrapping_add(1), s)).count();
            assert_eq!(moved, 1024, "seed {seed} and the next share phases");
        }
    }
}
