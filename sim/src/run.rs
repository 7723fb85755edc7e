//! One simulated run: jobs keep `iodepth` I/Os outstanding on their drives, as fio does,
//! and every I/O walks its path.
//!
//! The life of an I/O:
//!
//! ```text
//! issue -> [port multiplier token, CBS only] -> path latency/2 -> drive
//!   SSD read : media unit (access latency) -> data transfer (fluid) -> path latency/2 -> done
//!   SSD write: data transfer (fluid) -> media unit (write latency) -> path latency/2 -> done
//!   HDD read : read-ahead hit, or actuator (seek + rotation + media) -> transfer -> done
//!   HDD write: transfer -> write-back cache (sequential) or actuator -> done
//! ```
//!
//! Data transfers are fluid flows. Each drive and direction is a *class* whose transfers are
//! served first-in first-out at the class's rate; rates are the weighted max-min fair share
//! of every resource on the class's path (the costs of [`iopath_model::paths`]), recomputed
//! whenever a class starts or stops moving data. Between those moments nothing needs
//! simulating but the completion of each class's head transfer.
//!
//! Guarantees: integer-nanosecond time, FIFO order for simultaneous events, one seeded
//! generator per job; no I/O, no wall clock (the caller may pass one for the cost report).

use crate::engine::{Lane, Next, Scheduler};
use crate::hdd::{HddGeometry, ReadAhead, WriteBack};
use hdrhistogram::Histogram;
use iopath_model::bound::MaxMin;
use iopath_model::catalog::{Kind, did_you_mean, suggest};
use iopath_model::paths::{Cost, Dir, ResourceGraph, Side, pm_uses_fbs};
use iopath_model::report::{Bottleneck, Cost as RunCost, DriveResult, Latency, LinkUtil, Report, ReportKind, Total};
use iopath_model::topology::{NodeIx, Topology};
use iopath_model::units::SimDuration;
use iopath_model::workload::{Targets, Workload};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a workload cannot run on a topology (a usage error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("no drive has id {id:?}{hint}")]
    UnknownDrive { id: String, hint: String },
    #[error("{asked} active drives asked for, but the topology has only {have} drives")]
    TooManyActive { asked: usize, have: usize },
    #[error("drive {0:?} is both read and written by copies; copy between distinct drives")]
    CopyConflict(String),
    #[error(
        "{asked} replications: expected 1 to {max} seeds (the spread of a mean shrinks as \
         1/sqrt(n), so {max} seeds already put it at 3% of one seed's)"
    )]
    Replications { asked: u32, max: u32 },
    #[error(
        "{jobs} jobs (drives x numjobs) x iodepth {iodepth} = {} I/Os outstanding; at most {max} \
         (each is memory before the run starts): lower the iodepth, the jobs per drive or the drives used",
        jobs * u64::from(*iodepth)
    )]
    TooManyIos { jobs: u64, iodepth: u32, max: u64 },
}

/// Options of a run that are not part of the workload.
#[derive(Default)]
pub struct SimOptions<'a> {
    /// Stop early when set (Ctrl-C); the report is marked partial.
    pub cancel: Option<&'a AtomicBool>,
    /// A wall clock [s] for the cost report; the simulator itself never reads one.
    pub wall_clock: Option<&'a (dyn Fn() -> f64 + Sync)>,
}

/// The cancel flag is read every `CANCEL_CHECK_MASK + 1` events: a relaxed load costs
/// about a nanosecond, and even a 10,240-drive run (tens of thousands of events per wall
/// second in a debug build) honours Ctrl-C well within a second.
const CANCEL_CHECK_MASK: u64 = 0x3FF;

/// The most I/Os a run may keep outstanding (jobs x iodepth), checked before anything is
/// allocated: each costs ~100 bytes of I/O slot and queued event, so 2^20 stay near 100 MB
/// (10,240 drives at iodepth 64 fit; 4,096 jobs per drive at iodepth 65,536 would not).
pub const MAX_OUTSTANDING_IOS: u64 = 1 << 20;

/// Default measured time of a time-based run on SSDs only, and with HDDs.
const DEFAULT_SSD_RUNTIME_S: f64 = 2.0;
const DEFAULT_HDD_RUNTIME_S: f64 = 20.0;

#[derive(Debug, Clone, Copy)]
enum Ev {
    Issue { job: u32 },
    AtPort { io: u32 },
    Submitted { io: u32 },
    DriveDone { io: u32 },
    UnitDone { io: u32 },
    HddDone { drive: u32 },
    DataReady { io: u32 },
    Completed { io: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    Read,
    Write,
}

struct Io {
    job: u32,
    drive: u32,
    stage: Stage,
    offset: f64,
    len: f64,
    start: u64,
    /// Holding the CBS token of this port multiplier slot.
    pm: Option<u32>,
    /// The I/O is the read half of a copy; its write half follows.
    copy_to: Option<u32>,
}

struct Job {
    drive: u32,
    copy_to: Option<u32>,
    read_share: f64,
    random: bool,
    next_off: f64,
    region: f64,
    bs: f64,
    rng: ChaCha8Rng,
    /// Coverage mode: stop after this many bytes.
    budget: Option<f64>,
    issued: f64,
    /// Time limit for this job [ns] in coverage runs (SSDs in a sequential run).
    until: Option<u64>,
    stopped: bool,
    outstanding: u32,
}

struct Class {
    costs: Vec<Cost>,
    /// Payload moved inside the measured window [bytes], accounted up to `acc_t`.
    window_bytes: f64,
    acc_t: u64,
    fifo: VecDeque<(u32, f64)>,
    rate: f64,
    last: u64,
    version: u32,
}

struct DriveSt {
    node: NodeIx,
    hdd: Option<HddSt>,
    units_free: u32,
    unit_wait: VecDeque<u32>,
    /// Controller and hop latency before and after the drive [ns].
    fabric_half_ns: u64,
    pm: Option<u32>,
    class: [u32; 2],
    /// Scheduler lanes of this drive's fixed delays: host software time (before and after
    /// the command) + fabric (controller and hops), host, fabric, fabric + the port
    /// multiplier's handover, the read and the write latency.
    lanes: DriveLanes,
    st: DriveStats,
}

#[derive(Clone, Copy)]
struct DriveLanes {
    host_fabric: Lane,
    host: Lane,
    fabric: Lane,
    fabric_handover: Lane,
    read: Lane,
    write: Lane,
}

struct HddSt {
    geo: HddGeometry,
    head: f64,
    busy: bool,
    queue: Vec<(u32, bool)>,
    current: Option<(u32, bool)>,
    ra: ReadAhead,
    wb: WriteBack,
    busy_ns: f64,
}

struct PmSt {
    cbs: bool,
    holder: Option<u32>,
    last_holder: Option<u32>,
    waiting: VecDeque<u32>,
    handover_ns: u64,
}

struct DriveStats {
    read_bytes: f64,
    write_bytes: f64,
    ios: u64,
    /// Completion latencies [100 ns units], 2 significant digits (1%).
    hist: Histogram<u32>,
    lat_sum_ns: f64,
    first: Option<u64>,
    last: u64,
    used: bool,
}

/// Runs one workload on one topology and reports what the hardware would do.
pub fn simulate(t: &Topology, w: &Workload, opts: &SimOptions) -> Result<Report, SimError> {
    let mut s = Sim::new(t, w)?;
    s.wall_start = opts.wall_clock.map(|c| c());
    s.run(opts.cancel);
    let mut r = s.report(t, w);
    if let Some(clock) = opts.wall_clock {
        r.cost.wall_s = clock() - s.wall_start.unwrap_or(0.0);
    }
    Ok(r)
}

/// The drives a workload runs on, in order; for copies, sources and destinations.
pub fn target_drives(t: &Topology, w: &Workload) -> Result<Vec<NodeIx>, SimError> {
    let find = |id: &str| -> Result<NodeIx, SimError> {
        t.drives.iter().copied().find(|&d| t.nodes[d].id == id).ok_or_else(|| SimError::UnknownDrive {
            id: id.to_string(),
            hint: {
                let s = did_you_mean(&suggest(id, t.drives.iter().map(|&d| t.nodes[d].id.as_str())));
                if s.is_empty() {
                    let ids: Vec<&str> = t.drives.iter().take(12).map(|&d| t.nodes[d].id.as_str()).collect();
                    format!("; the drives are {}{}", ids.join(", "), if t.drives.len() > 12 { ", ..." } else { "" })
                } else {
                    s
                }
            },
        })
    };
    if !w.copies.is_empty() {
        let mut v = Vec::new();
        for c in &w.copies {
            for id in [&c.from, &c.to] {
                let d = find(id)?;
                if v.contains(&d) {
                    return Err(SimError::CopyConflict(id.clone()));
                }
                v.push(d);
            }
        }
        return Ok(v);
    }
    match &w.targets {
        Targets::All => Ok(t.drives.clone()),
        Targets::Active(n) if *n > t.drives.len() => Err(SimError::TooManyActive { asked: *n, have: t.drives.len() }),
        Targets::Active(n) => Ok(t.drives[..*n].to_vec()),
        Targets::Drives(ids) => ids.iter().map(|id| find(id)).collect(),
    }
}

/// Whether a run covers regions once (no runtime: a sequential job given a region), and
/// its ramp and measured time [ns] (the defaults when the workload names none).
fn plan(t: &Topology, w: &Workload, targets: &[NodeIx]) -> (bool, u64, u64) {
    let any_hdd = targets.iter().any(|&d| t.nodes[d].text("class") == Some("hdd"));
    let sequential = !w.rw.is_random();
    // Without a runtime, a sequential job given a region reads (writes) it once.
    let coverage = w.runtime.is_none() && sequential && w.region_given;
    let runtime_ns = match w.runtime {
        Some(r) => r.nanos(),
        None => SimDuration::from_secs_f64(if any_hdd { DEFAULT_HDD_RUNTIME_S } else { DEFAULT_SSD_RUNTIME_S }).nanos(),
    };
    let ramp_ns = match (w.ramp, coverage) {
        (_, true) => 0,
        (Some(r), _) => r.nanos(),
        (None, _) => runtime_ns / 10,
    };
    (coverage, ramp_ns, runtime_ns)
}

/// The simulated time a time-based run will cover, ramp included; `None` for a run that
/// covers each drive's region once (its length depends on the rates it reaches).
pub fn planned_sim_time(t: &Topology, w: &Workload) -> Result<Option<SimDuration>, SimError> {
    let targets = target_drives(t, w)?;
    let (coverage, ramp_ns, runtime_ns) = plan(t, w, &targets);
    Ok((!coverage).then(|| SimDuration::from_nanos(ramp_ns.saturating_add(runtime_ns))))
}

struct Sim {
    sched: Scheduler<Ev>,
    graph: ResourceGraph,
    jobs: Vec<Job>,
    ios: Vec<Io>,
    free_ios: Vec<u32>,
    classes: Vec<Class>,
    drives: Vec<DriveSt>,
    pms: Vec<PmSt>,
    /// Classes that share no resource cannot change each other's rates: each connected group
    /// (a component, e.g. one HBA's subtree) is reallocated on its own.
    comps: Vec<Comp>,
    comp_of: Vec<u32>,
    /// Components whose set of moving classes changed since their last allocation.
    dirty: Vec<u32>,
    /// Each class's index in its component's `active` list (u32::MAX when idle).
    active_pos: Vec<u32>,
    /// Moving classes using each resource.
    res_active: Vec<u32>,
    /// Whether a resource is in its component's `loaded` list.
    is_loaded: Vec<bool>,
    /// Current load of each resource (sum of rate x cost) and its integral over the window.
    load: Vec<f64>,
    util_ns: Vec<f64>,
    win_start: u64,
    win_end: u64,
    time_based: bool,
    iodepth: u32,
    completed: u64,
    partial: bool,
    /// Simulated time the run reached [ns] (ramp included).
    reached: u64,
    wall_start: Option<f64>,
}

impl Sim {
    fn new(t: &Topology, w: &Workload) -> Result<Sim, SimError> {
        let targets = target_drives(t, w)?;
        let jobs_n =
            if w.copies.is_empty() { targets.len() as u64 * u64::from(w.numjobs) } else { w.copies.len() as u64 };
        let outstanding = jobs_n * u64::from(w.iodepth);
        if outstanding > MAX_OUTSTANDING_IOS {
            return Err(SimError::TooManyIos { jobs: jobs_n, iodepth: w.iodepth, max: MAX_OUTSTANDING_IOS });
        }
        let graph = ResourceGraph::new(t);
        let bs = w.bs.get() as f64;
        let (coverage, ramp_ns, runtime_ns) = plan(t, w, &targets);
        // Port multipliers in use.
        let mut pms: Vec<PmSt> = Vec::new();
        let mut pm_of_node: Vec<Option<u32>> = vec![None; t.nodes.len()];
        for (ix, n) in t.nodes.iter().enumerate() {
            if n.kind == Kind::PortMultiplier {
                pm_of_node[ix] = Some(pms.len() as u32);
                pms.push(PmSt {
                    cbs: !pm_uses_fbs(t, ix),
                    holder: None,
                    last_holder: None,
                    waiting: VecDeque::new(),
                    handover_ns: (n.num("cbs_handover_us", 0.0) * 1e3) as u64,
                });
            }
        }
        let mut sched = Scheduler::default();
        let mut drives = Vec::new();
        let mut classes = Vec::new();
        let random = w.rw.is_random();
        for &d in &targets {
            let n = &t.nodes[d];
            let hdd = (n.text("class") == Some("hdd")).then(|| {
                let geo = HddGeometry::from_node(n);
                HddSt {
                    geo,
                    head: 0.0,
                    busy: false,
                    queue: Vec::new(),
                    current: None,
                    ra: ReadAhead::default(),
                    wb: WriteBack::default(),
                    busy_ns: 0.0,
                }
            });
            let mut class = [0u32; 2];
            for (k, dir) in [Dir::Read, Dir::Write].into_iter().enumerate() {
                class[k] = classes.len() as u32;
                classes.push(Class {
                    costs: graph.class_costs(t, d, dir, w.bs.get(), random, false),
                    window_bytes: 0.0,
                    acc_t: 0,
                    fifo: VecDeque::new(),
                    rate: 0.0,
                    last: 0,
                    version: 0,
                });
            }
            let lat = graph.latencies(t, d);
            let pm = t.path_to_host(d).iter().find_map(|&ix| pm_of_node[ix]);
            let host_half_ns = (lat.host_us * 500.0) as u64;
            let fabric_half_ns = (lat.fabric_us * 500.0) as u64;
            let read_lat_ns = (n.num("read_latency_us", 50.0) * 1e3) as u64;
            let write_lat_ns = (n.num("write_latency_us", 30.0) * 1e3) as u64;
            let handover_ns = pm.map_or(0, |p| pms[p as usize].handover_ns);
            let lanes = DriveLanes {
                host_fabric: sched.lane(host_half_ns + fabric_half_ns),
                host: sched.lane(host_half_ns),
                fabric: sched.lane(fabric_half_ns),
                fabric_handover: sched.lane(fabric_half_ns + handover_ns),
                read: sched.lane(read_lat_ns),
                write: sched.lane(write_lat_ns),
            };
            drives.push(DriveSt {
                node: d,
                hdd,
                units_free: n.num("parallelism", 8.0).max(1.0) as u32,
                unit_wait: VecDeque::new(),
                fabric_half_ns,
                pm,
                class,
                lanes,
                st: DriveStats {
                    read_bytes: 0.0,
                    write_bytes: 0.0,
                    ios: 0,
                    hist: new_histogram(),
                    lat_sum_ns: 0.0,
                    first: None,
                    last: 0,
                    used: false,
                },
            });
        }
        let slot_of = |d: NodeIx| targets.iter().position(|&x| x == d).expect("target drive") as u32;
        let mut jobs = Vec::new();
        let mut seed_index = 0u64;
        let mut new_rng = || {
            seed_index += 1;
            ChaCha8Rng::seed_from_u64(w.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed_index)
        };
        let region_of = |slot: u32| -> f64 {
            let n = &t.nodes[targets[slot as usize]];
            let cap = n.num("capacity_gb", 1000.0) * 1e9;
            ((cap * w.region / bs).floor() * bs).max(bs)
        };
        let ssd_until = |slot: u32| -> Option<u64> {
            (coverage && t.nodes[targets[slot as usize]].text("class") != Some("hdd")).then_some(runtime_ns)
        };
        let hdd_budget = |slot: u32| -> Option<f64> {
            (coverage && t.nodes[targets[slot as usize]].text("class") == Some("hdd")).then(|| region_of(slot))
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
        let n_res = graph.resources.len();
        let n_classes = classes.len();
        let (comp_of, n_comps) = components(&classes, n_res);
        let (win_start, win_end) = if coverage { (0, u64::MAX) } else { (ramp_ns, ramp_ns + runtime_ns) };
        Ok(Sim {
            sched,
            graph,
            jobs,
            ios: Vec::new(),
            free_ios: Vec::new(),
            classes,
            drives,
            pms,
            comps: (0..n_comps).map(|_| Comp { maxmin: MaxMin::new(n_res), ..Default::default() }).collect(),
            comp_of,
            dirty: Vec::new(),
            active_pos: vec![u32::MAX; n_classes],
            res_active: vec![0; n_res],
            is_loaded: vec![false; n_res],
            load: vec![0.0; n_res],
            util_ns: vec![0.0; n_res],
            win_start,
            win_end,
            time_based: !coverage,
            iodepth: w.iodepth,
            completed: 0,
            partial: false,
            reached: 0,
            wall_start: None,
        })
    }

    fn run(&mut self, cancel: Option<&AtomicBool>) {
        for j in 0..self.jobs.len() as u32 {
            for _ in 0..self.iodepth {
                self.sched.at(0, Ev::Issue { job: j });
            }
        }
        while let Some(next) = self.sched.pop() {
            let now = self.sched.now().nanos();
            if self.time_based && now >= self.win_end {
                break;
            }
            match next {
                Next::Event(ev) => self.handle(ev),
                Next::Timer(class) => self.xfer_done(class as u32),
            }
            if !self.dirty.is_empty() {
                self.reallocate();
            }
            if self.sched.processed() & CANCEL_CHECK_MASK == 0 && cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                self.partial = true;
                break;
            }
        }
        self.reached = self.sched.now().nanos();
        if self.partial && self.time_based {
            // The measured window ends where the run stopped, never where it would have
            // ended: [ramp end, time reached], empty when stopped inside the ramp.
            self.win_end = self.reached.clamp(self.win_start, self.win_end);
        }
        let end = if self.time_based { self.win_end } else { self.reached };
        for k in 0..self.comps.len() {
            self.integrate(k, end);
            for &c in &self.comps[k].active {
                account(&mut self.classes[c as usize], end, self.win_start, self.win_end);
            }
        }
        if !self.time_based {
            self.win_end = end;
        }
    }

    fn alloc_io(&mut self, io: Io) -> u32 {
        match self.free_ios.pop() {
            Some(i) => {
                self.ios[i as usize] = io;
                i
            }
            None => {
                self.ios.push(io);
                (self.ios.len() - 1) as u32
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Issue { job } => self.issue(job),
            Ev::AtPort { io } => self.at_port(io),
            Ev::Submitted { io } => self.at_drive(io),
            Ev::DriveDone { io } => self.drive_done(io),
            Ev::UnitDone { io } => self.unit_done(io),
            Ev::HddDone { drive } => self.hdd_done(drive),
            Ev::DataReady { io } => self.start_transfer(io),
            Ev::Completed { io } => self.completed(io),
        }
    }

    fn issue(&mut self, j: u32) {
        let now = self.sched.now().nanos();
        let job = &mut self.jobs[j as usize];
        if job.stopped || job.until.is_some_and(|u| now >= u) || job.budget.is_some_and(|b| job.issued >= b) {
            job.stopped = true;
            return;
        }
        let bs = job.bs;
        let read = job.read_share >= 1.0 || (job.read_share > 0.0 && job.rng.random::<f64>() < job.read_share);
        let offset = if job.random {
            let blocks = (job.region / bs).floor().max(1.0) as u64;
            job.rng.random_range(0..blocks) as f64 * bs
        } else {
            if job.next_off + bs > job.region {
                job.next_off = 0.0;
            }
            let o = job.next_off;
            job.next_off += bs;
            o
        };
        job.issued += bs;
        job.outstanding += 1;
        let drive = job.drive;
        let copy_to = job.copy_to;
        let io = self.alloc_io(Io {
            job: j,
            drive,
            stage: if read { Stage::Read } else { Stage::Write },
            offset,
            len: bs,
            start: now,
            pm: None,
            copy_to,
        });
        self.begin_command(io);
    }

    /// A command leaves the host for its drive (first for a copy's read, again for its write).
    fn begin_command(&mut self, io: u32) {
        let now = self.sched.now().nanos();
        self.ios[io as usize].start = now;
        let d = self.ios[io as usize].drive as usize;
        let dr = &self.drives[d];
        if dr.pm.is_some_and(|pm| self.pms[pm as usize].cbs) {
            self.sched.push(dr.lanes.host, Ev::AtPort { io });
        } else {
            // Nothing to wait for at the controller: one event to the drive.
            self.sched.push(dr.lanes.host_fabric, Ev::Submitted { io });
        }
    }

    /// The command reaches the controller; under command-based switching it first waits for
    /// its port multiplier's upstream link.
    fn at_port(&mut self, io: u32) {
        let d = self.ios[io as usize].drive as usize;
        if let Some(pm) = self.drives[d].pm {
            let p = &mut self.pms[pm as usize];
            if p.cbs {
                if p.holder.is_some() {
                    p.waiting.push_back(io);
                    return;
                }
                self.grant_pm(pm, io);
                return;
            }
        }
        let lane = self.drives[d].lanes.fabric;
        self.sched.push(lane, Ev::Submitted { io });
    }

    fn grant_pm(&mut self, pm: u32, io: u32) {
        let d = self.ios[io as usize].drive;
        let p = &mut self.pms[pm as usize];
        let handover = p.last_holder.is_some_and(|h| h != d);
        p.holder = Some(d);
        p.last_holder = Some(d);
        self.ios[io as usize].pm = Some(pm);
        let lanes = &self.drives[d as usize].lanes;
        // The handover is this drive's port multiplier's (pm holds its drives only).
        let lane = if handover { lanes.fabric_handover } else { lanes.fabric };
        self.sched.push(lane, Ev::Submitted { io });
    }

    fn at_drive(&mut self, io: u32) {
        let now = self.sched.now().nanos();
        let (d, stage, offset, len) = {
            let x = &self.ios[io as usize];
            (x.drive as usize, x.stage, x.offset, x.len)
        };
        let dr = &mut self.drives[d];
        if let Some(h) = dr.hdd.as_mut() {
            match stage {
                Stage::Read if h.ra.hits(&h.geo, offset, now as f64) => {
                    let ready = h.ra.request(&h.geo, offset, len, now as f64);
                    // The media reads this instead of writing back cached data.
                    h.wb.pause(now as f64, len / h.geo.rate_at(offset) * 1e9);
                    h.busy_ns += len / h.geo.rate_at(offset) * 1e9;
                    self.sched.at(ceil_ns(ready), Ev::DataReady { io });
                }
                Stage::Read => {
                    h.queue.push((io, true));
                    self.hdd_dispatch(d);
                }
                Stage::Write => self.start_transfer(io),
            }
            return;
        }
        match stage {
            Stage::Read => self.acquire_unit(d, io),
            Stage::Write => self.start_transfer(io),
        }
    }

    fn acquire_unit(&mut self, d: usize, io: u32) {
        let dr = &mut self.drives[d];
        if dr.units_free == 0 {
            dr.unit_wait.push_back(io);
            return;
        }
        dr.units_free -= 1;
        let lane = if self.ios[io as usize].stage == Stage::Read { dr.lanes.read } else { dr.lanes.write };
        self.sched.push(lane, Ev::UnitDone { io });
    }

    fn unit_done(&mut self, io: u32) {
        let d = self.ios[io as usize].drive as usize;
        self.drives[d].units_free += 1;
        if let Some(next) = self.drives[d].unit_wait.pop_front() {
            self.acquire_unit(d, next);
        }
        match self.ios[io as usize].stage {
            Stage::Read => self.start_transfer(io),
            Stage::Write => self.finish_at_drive(io),
        }
    }

    fn hdd_dispatch(&mut self, d: usize) {
        let now = self.sched.now().nanos() as f64;
        let half = self.drives[d].fabric_half_ns;
        let ios = &self.ios;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        // Queued commands that a stream now serves need no positioning.
        let mut k = 0;
        while k < h.queue.len() {
            let (io, is_read) = h.queue[k];
            let x = &ios[io as usize];
            if is_read && h.ra.hits(&h.geo, x.offset, now) {
                h.queue.remove(k);
                let ready = h.ra.request(&h.geo, x.offset, x.len, now);
                h.wb.pause(now, x.len / h.geo.rate_at(x.offset) * 1e9);
                h.busy_ns += x.len / h.geo.rate_at(x.offset) * 1e9;
                self.sched.at(ceil_ns(ready), Ev::DataReady { io });
            } else if !is_read && h.wb.hits(&h.geo, x.offset) {
                h.queue.remove(k);
                let ack = h.wb.accept(&h.geo, x.offset, x.len, now);
                h.busy_ns += x.len / (h.geo.rate_at(x.offset) * h.geo.write_eff) * 1e9;
                self.sched.at(ceil_ns(ack) + half, Ev::DriveDone { io });
            } else {
                k += 1;
            }
        }
        if h.busy || h.queue.is_empty() {
            return;
        }
        // Rotational position ordering over the queued commands (NCQ: at most 32 looked at).
        let mut best = 0;
        let mut best_t = f64::INFINITY;
        for (k, &(io, _)) in h.queue.iter().take(32).enumerate() {
            let p = h.geo.position_ns(h.head, now, ios[io as usize].offset);
            if p < best_t {
                best_t = p;
                best = k;
            }
        }
        let (io, is_read) = h.queue.remove(best);
        let x = &ios[io as usize];
        let rate = h.geo.rate_at(x.offset) * if is_read { 1.0 } else { h.geo.write_eff };
        let service = best_t + x.len / rate * 1e9;
        // Writes still in the cache wait while the head serves this command elsewhere, and
        // for the seek back: the backlog is neither lost nor allowed to block the command.
        h.wb.pause(now, service + best_t);
        h.busy = true;
        h.current = Some((io, is_read));
        h.busy_ns += service;
        h.head = h.geo.stroke(x.offset + x.len);
        self.sched.at(ceil_ns(now + service), Ev::HddDone { drive: d as u32 });
    }

    fn hdd_done(&mut self, d: u32) {
        let now = self.sched.now().nanos() as f64;
        let d = d as usize;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        h.busy = false;
        let Some((io, is_read)) = h.current.take() else { return };
        let x = &self.ios[io as usize];
        let end = x.offset + x.len;
        if is_read {
            h.ra.start(&h.geo, end, now);
            self.start_transfer(io);
        } else {
            // A new write stream starts here; what the cache still held is written first.
            let backlog = h.wb.backlog_ns(now);
            h.wb.start(&h.geo, end, now + backlog);
            h.ra.active = false;
            self.finish_at_drive(io);
        }
        self.hdd_dispatch(d);
    }

    fn start_transfer(&mut self, io: u32) {
        let x = &self.ios[io as usize];
        let d = x.drive as usize;
        let c = self.drives[d].class[if x.stage == Stage::Read { 0 } else { 1 }] as usize;
        let len = x.len;
        let was_idle = self.classes[c].fifo.is_empty();
        self.classes[c].fifo.push_back((io, len));
        if was_idle {
            let k = self.comp_of[c] as usize;
            self.active_pos[c] = self.comps[k].active.len() as u32;
            self.comps[k].active.push(c as u32);
            let now = self.sched.now().nanos();
            self.classes[c].acc_t = now;
            self.classes[c].last = now;
            for cost in &self.classes[c].costs {
                self.res_active[cost.resource] += 1;
            }
            if !self.try_join(c, k, now) {
                self.mark_dirty(k);
            }
        }
    }

    fn xfer_done(&mut self, c: u32) {
        let now = self.sched.now().nanos();
        if self.classes[c as usize].fifo.is_empty() {
            return;
        }
        let (ws, we) = (self.win_start, self.win_end);
        let cl = &mut self.classes[c as usize];
        // Account for what moved up to now while the class still counts as moving.
        account(cl, now, ws, we);
        let (io, _) = cl.fifo.pop_front().expect("non-empty");
        cl.last = now;
        if let Some(&(_, rem)) = cl.fifo.front() {
            cl.version += 1;
            let dt = if cl.rate.is_infinite() {
                0
            } else if cl.rate > 0.0 {
                ceil_ns(rem / cl.rate * 1e9)
            } else {
                u64::MAX / 4
            };
            self.sched.set_timer(c as usize, now + dt.max(1));
        } else {
            // The class stops moving data: the others take its share.
            let old_rate = cl.rate;
            cl.rate = 0.0;
            cl.version += 1;
            let k = self.comp_of[c as usize] as usize;
            let pos = self.active_pos[c as usize] as usize;
            self.comps[k].active.swap_remove(pos);
            if let Some(&moved) = self.comps[k].active.get(pos) {
                self.active_pos[moved as usize] = pos as u32;
            }
            self.active_pos[c as usize] = u32::MAX;
            for cost in &self.classes[c as usize].costs {
                self.res_active[cost.resource] -= 1;
            }
            if !self.try_leave(c as usize, k, old_rate, now) {
                self.mark_dirty(k);
            }
        }
        let x = &self.ios[io as usize];
        match x.stage {
            Stage::Read => self.finish_at_drive(io),
            Stage::Write => {
                let d = x.drive as usize;
                let (offset, len) = (x.offset, x.len);
                if let Some(h) = self.drives[d].hdd.as_mut() {
                    if h.wb.hits(&h.geo, offset) {
                        let ack = h.wb.accept(&h.geo, offset, len, now as f64);
                        h.busy_ns += len / (h.geo.rate_at(offset) * h.geo.write_eff) * 1e9;
                        self.sched.at(ceil_ns(ack) + self.drives[d].fabric_half_ns, Ev::DriveDone { io });
                    } else {
                        h.queue.push((io, false));
                        self.hdd_dispatch(d);
                    }
                } else {
                    self.acquire_unit(d, io);
                }
            }
        }
    }

    /// The drive is done with the command; the completion travels back to the controller.
    fn finish_at_drive(&mut self, io: u32) {
        let d = self.ios[io as usize].drive as usize;
        let dr = &self.drives[d];
        if self.ios[io as usize].pm.is_some() {
            self.sched.push(dr.lanes.fabric, Ev::DriveDone { io });
        } else {
            // No port multiplier token to hand back: one event to the host.
            self.sched.push(dr.lanes.host_fabric, Ev::Completed { io });
        }
    }

    /// The completion reaches the controller: a CBS port multiplier's upstream is free again,
    /// and the host's completion path follows.
    fn drive_done(&mut self, io: u32) {
        if let Some(pm) = self.ios[io as usize].pm.take() {
            let p = &mut self.pms[pm as usize];
            p.holder = None;
            if let Some(next) = p.waiting.pop_front() {
                self.grant_pm(pm, next);
            }
        }
        let d = self.ios[io as usize].drive as usize;
        self.sched.push(self.drives[d].lanes.host, Ev::Completed { io });
    }

    fn completed(&mut self, io: u32) {
        let now = self.sched.now().nanos();
        let (job, d, stage, len, start, pm, copy_to) = {
            let x = &self.ios[io as usize];
            (x.job, x.drive as usize, x.stage, x.len, x.start, x.pm, x.copy_to)
        };
        debug_assert!(pm.is_none(), "the CBS token is released at the controller");
        if now >= self.win_start && now <= self.win_end {
            let st = &mut self.drives[d].st;
            match stage {
                Stage::Read => st.read_bytes += len,
                Stage::Write => st.write_bytes += len,
            }
            st.ios += 1;
            let lat = now - start;
            st.lat_sum_ns += lat as f64;
            st.hist.saturating_record((lat / LAT_UNIT_NS).max(1));
            st.first.get_or_insert(now);
            st.last = now;
            st.used = true;
            self.completed += 1;
        }
        if stage == Stage::Read
            && let Some(dst) = copy_to
        {
            // The read half of a copy is in the host's buffer: write it to the destination.
            let x = &mut self.ios[io as usize];
            x.stage = Stage::Write;
            x.drive = dst;
            x.copy_to = None;
            self.begin_command(io);
            return;
        }
        self.free_ios.push(io);
        let j = &mut self.jobs[job as usize];
        j.outstanding -= 1;
        self.issue(job);
    }

    /// A class starts moving data. If it touches no full shared resource and what stops it
    /// is a resource no other moving class uses (its own media or link, typically), the
    /// max-min allocation of everyone else is unchanged: give it the leftover and stop there.
    /// Otherwise the component needs a full reallocation (returns false).
    fn try_join(&mut self, c: usize, k: usize, now: u64) -> bool {
        if self.comps[k].dirty || self.classes[c].costs.is_empty() {
            return false;
        }
        let mut rate = f64::INFINITY;
        for cost in &self.classes[c].costs {
            if cost.s_per_byte > 0.0 {
                rate = rate.min((1.0 - self.load[cost.resource]).max(0.0) / cost.s_per_byte);
            }
        }
        if !(rate.is_finite() && rate > 0.0) {
            return false;
        }
        // Every resource this rate fills must be the class's alone.
        for cost in &self.classes[c].costs {
            let headroom = (1.0 - self.load[cost.resource]).max(0.0) / cost.s_per_byte;
            if cost.s_per_byte > 0.0 && headroom <= rate * (1.0 + 1e-9) && self.res_active[cost.resource] > 1 {
                return false;
            }
        }
        self.integrate(k, now);
        for cost in &self.classes[c].costs {
            self.load[cost.resource] += rate * cost.s_per_byte;
            if !self.is_loaded[cost.resource] {
                self.is_loaded[cost.resource] = true;
                self.comps[k].loaded.push(cost.resource);
            }
        }
        let cl = &mut self.classes[c];
        cl.rate = rate;
        cl.version += 1;
        let rem = cl.fifo.front().map(|h| h.1).unwrap_or(0.0);
        self.sched.set_timer(c, now.saturating_add(ceil_ns(rem / rate * 1e9).max(1)));
        true
    }

    /// A class stops moving data. If no resource it used is both full and used by another
    /// moving class, nobody else was held back by it: release its load and stop there.
    fn try_leave(&mut self, c: usize, k: usize, old_rate: f64, now: u64) -> bool {
        if self.comps[k].dirty || !old_rate.is_finite() {
            return false;
        }
        for cost in &self.classes[c].costs {
            if self.res_active[cost.resource] > 0 && self.load[cost.resource] >= 1.0 - 1e-9 {
                return false;
            }
        }
        self.integrate(k, now);
        for cost in &self.classes[c].costs {
            self.load[cost.resource] = (self.load[cost.resource] - old_rate * cost.s_per_byte).max(0.0);
        }
        true
    }

    fn mark_dirty(&mut self, k: usize) {
        if !self.comps[k].dirty {
            self.comps[k].dirty = true;
            self.dirty.push(k as u32);
        }
    }

    /// For each component whose moving classes changed: brings its active classes' head
    /// transfers up to now, recomputes their max-min rates, and reschedules the head
    /// completions whose rate changed.
    fn reallocate(&mut self) {
        let now = self.sched.now().nanos();
        let dirty = std::mem::take(&mut self.dirty);
        for &k in &dirty {
            self.reallocate_component(k as usize, now);
        }
        self.dirty = dirty;
        self.dirty.clear();
    }

    fn reallocate_component(&mut self, k: usize, now: u64) {
        self.comps[k].dirty = false;
        self.integrate(k, now);
        let (ws, we) = (self.win_start, self.win_end);
        let comp = &mut self.comps[k];
        for &c in &comp.active {
            let cl = &mut self.classes[c as usize];
            account(cl, now, ws, we);
            let dt = (now - cl.last) as f64 * 1e-9;
            if let Some(h) = cl.fifo.front_mut() {
                h.1 = (h.1 - cl.rate * dt).max(0.0);
            }
            cl.last = now;
        }
        let flows: Vec<&[Cost]> = comp.active.iter().map(|&c| self.classes[c as usize].costs.as_slice()).collect();
        comp.maxmin.solve(&flows, &[]);
        drop(flows);
        // Resource loads: only those the previous or this allocation touched can be non-zero.
        for &r in &comp.loaded {
            self.load[r] = 0.0;
            self.is_loaded[r] = false;
        }
        comp.loaded.clear();
        for (i, &r) in comp.maxmin.res.iter().enumerate() {
            self.load[r] = comp.maxmin.used[i];
            self.is_loaded[r] = true;
            comp.loaded.push(r);
        }
        for (i, &c) in comp.active.iter().enumerate() {
            let cl = &mut self.classes[c as usize];
            // A class that crosses no modelled resource moves its data at once.
            let rate = if cl.costs.is_empty() { f64::INFINITY } else { comp.maxmin.rates()[i] };
            if rate == cl.rate && cl.version > 0 {
                continue; // its head's completion is already scheduled at this rate
            }
            cl.rate = rate;
            cl.version += 1;
            let rem = cl.fifo.front().map(|h| h.1).unwrap_or(0.0);
            let dt = if cl.rate.is_infinite() {
                0
            } else if cl.rate > 0.0 {
                ceil_ns(rem / cl.rate * 1e9)
            } else {
                u64::MAX / 4
            };
            self.sched.set_timer(c as usize, now.saturating_add(dt.max(1)));
        }
    }

    /// Adds a component's resources' busy time since its last allocation, clipped to the
    /// measured window.
    fn integrate(&mut self, k: usize, now: u64) {
        let comp = &mut self.comps[k];
        let a = comp.last.max(self.win_start);
        let b = now.min(self.win_end);
        if b > a {
            let dt = (b - a) as f64;
            for &r in &comp.loaded {
                self.util_ns[r] += self.load[r].min(1.0) * dt;
            }
        }
        comp.last = now;
    }

    fn report(&self, t: &Topology, w: &Workload) -> Report {
        // The measured window; empty only when an interrupt stopped the run inside the ramp,
        // and then nothing is divided by it: rates are 0 and a warning says why.
        let window_ns = self.win_end.saturating_sub(self.win_start) as f64;
        let per_s = |x: f64, secs: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let mut drives = Vec::new();
        let mut total = Total::default();
        let mut all = new_histogram();
        let mut lat_sum = 0.0;
        let mut nios = 0u64;
        for dr in &self.drives {
            let st = &dr.st;
            // Coverage runs: each drive's rate over its own active time.
            let span = if self.time_based { window_ns } else { st.last as f64 };
            let secs = span * 1e-9;
            let lat = latency(&st.hist, st.lat_sum_ns, st.ios);
            // Time-based runs count the bytes that crossed the drive's link inside the window
            // (as the bound does); coverage runs count completed I/Os over the drive's span.
            let (rd, wr) = if self.time_based {
                (self.classes[dr.class[0] as usize].window_bytes, self.classes[dr.class[1] as usize].window_bytes)
            } else {
                (st.read_bytes, st.write_bytes)
            };
            let r = DriveResult {
                id: t.nodes[dr.node].id.clone(),
                read_mb_s: per_s(rd, secs) / 1e6,
                write_mb_s: per_s(wr, secs) / 1e6,
                iops: per_s(st.ios as f64, secs),
                lat_us: lat,
                read_bytes: rd as u64,
                write_bytes: wr as u64,
                ios: st.ios,
            };
            total.read_mb_s += r.read_mb_s;
            total.write_mb_s += r.write_mb_s;
            total.iops += r.iops;
            let _ = all.add(&st.hist);
            lat_sum += st.lat_sum_ns;
            nios += st.ios;
            drives.push(r);
        }
        total.mb_s = total.read_mb_s + total.write_mb_s;
        total.lat_us = latency(&all, lat_sum, nios);

        // Link utilization, by node.
        let g = &self.graph;
        let span = if self.time_based { window_ns } else { self.win_end as f64 };
        let util = |r: usize| per_s(self.util_ns[r], span).min(1.0);
        let mut links: Vec<LinkUtil> = Vec::new();
        for ix in 0..t.nodes.len() {
            let res = g.link_resources(ix);
            if res.is_empty() {
                continue;
            }
            let r0 = &g.resources[res[0]];
            let id = r0.id.trim_end_matches(".up").to_string();
            let (up, down) =
                if r0.side == Side::Both { (util(res[0]), util(res[0])) } else { (util(res[0]), util(res[1])) };
            links.push(LinkUtil {
                id,
                util_up: up,
                util_down: down,
                capacity_mb_s: r0.nominal_mb_s,
                kind: r0.kind.to_string(),
            });
        }
        let mut bottleneck = Bottleneck { id: "none".into(), util: 0.0 };
        for (r, res) in g.resources.iter().enumerate() {
            let mut u = util(r);
            if res.kind == "media"
                && let Some(dr) = self.drives.iter().find(|d| d.node == res.node)
                && let Some(h) = &dr.hdd
            {
                u = per_s(h.busy_ns, span).min(1.0);
            }
            if u > bottleneck.util + 1e-9 {
                bottleneck = Bottleneck { id: res.id.clone(), util: u };
            }
        }
        let sim_s = window_ns * 1e-9;
        Report {
            schema_version: iopath_model::report::SCHEMA_VERSION,
            kind: ReportKind::Simulated,
            topology: t.name.clone(),
            workload: serde_json::to_value(w).unwrap_or_default(),
            total,
            drives,
            links,
            bottleneck,
            cost: RunCost {
                events: self.sched.processed(),
                ios: self.completed,
                wall_s: 0.0,
                sim_s: if self.time_based { sim_s } else { self.win_end as f64 * 1e-9 },
                cpu_s: None,
            },
            partial: self.partial,
            covered_s: self.partial.then_some(self.reached as f64 * 1e-9),
            warnings: if self.partial { vec![self.partial_warning()] } else { Vec::new() },
            spread: None,
        }
    }

    /// What an interrupted run covered, in words.
    fn partial_warning(&self) -> String {
        let s = |ns: u64| ns as f64 * 1e-9;
        if !self.time_based {
            return format!(
                "interrupted at {:.3} s of simulated time, before every drive covered its region: \
                 each drive's numbers are over the I/Os it completed",
                s(self.reached)
            );
        }
        if self.win_end <= self.win_start {
            format!(
                "interrupted at {:.3} s of simulated time, inside the {:.3} s ramp: nothing was measured, \
                 so there is no throughput (reported as 0); run longer or shorten --ramp",
                s(self.reached),
                s(self.win_start)
            )
        } else {
            format!(
                "interrupted at {:.3} s of simulated time: the numbers cover the {:.3} s from the end of \
                 the ramp ({:.3} s) to there, not the whole measured time",
                s(self.reached),
                s(self.win_end - self.win_start),
                s(self.win_start)
            )
        }
    }
}

/// A group of classes linked by shared resources.
#[derive(Default)]
struct Comp {
    /// Classes moving data.
    active: Vec<u32>,
    /// Resources this component's last allocation loaded.
    loaded: Vec<usize>,
    /// Time up to which `loaded` is integrated into utilization.
    last: u64,
    dirty: bool,
    maxmin: MaxMin,
}

/// Groups classes that share any resource (union-find over resources).
fn components(classes: &[Class], n_res: usize) -> (Vec<u32>, usize) {
    let n = classes.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut first = vec![usize::MAX; n_res];
    for (c, cl) in classes.iter().enumerate() {
        for cost in &cl.costs {
            match first[cost.resource] {
                usize::MAX => first[cost.resource] = c,
                o => {
                    let (a, b) = (find(&mut parent, c), find(&mut parent, o));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut comp_of = vec![0u32; n];
    let mut count = 0;
    for (c, slot) in comp_of.iter_mut().enumerate() {
        let r = find(&mut parent, c);
        if id[r] == u32::MAX {
            id[r] = count;
            count += 1;
        }
        *slot = id[r];
    }
    (comp_of, count as usize)
}

/// `x.ceil() as u64`, without a call to libm's `ceil` (the default x86-64 target has no
/// rounding instruction): the same value for every f64, NaN and infinities included.
#[inline(always)]
fn ceil_ns(x: f64) -> u64 {
    let t = x as u64; // truncates toward zero, saturating
    if (t as f64) < x { t.saturating_add(1) } else { t }
}

/// Adds what a class moved since it was last accounted, clipped to the measured window.
fn account(cl: &mut Class, now: u64, win_start: u64, win_end: u64) {
    let a = cl.acc_t.max(win_start);
    let b = now.min(win_end);
    if b > a && !cl.fifo.is_empty() && cl.rate.is_finite() {
        cl.window_bytes += cl.rate * (b - a) as f64 * 1e-9;
    }
    cl.acc_t = now;
}

/// Latency histograms count in units of 100 ns from 100 ns to 1 h with 2 significant
/// digits: percentiles within 1%, a few kilobytes per drive (1,024 drives stay cheap).
const LAT_UNIT_NS: u64 = 100;

fn new_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, 36_000_000_000, 2).expect("valid histogram bounds")
}

fn latency(h: &Histogram<u32>, sum_ns: f64, n: u64) -> Latency {
    if n == 0 {
        return Latency::default();
    }
    Latency {
        mean: sum_ns / n as f64 / 1e3,
        p50: (h.value_at_quantile(0.5) * LAT_UNIT_NS) as f64 / 1e3,
        p99: (h.value_at_quantile(0.99) * LAT_UNIT_NS) as f64 / 1e3,
        max: (h.max() * LAT_UNIT_NS) as f64 / 1e3,
    }
}

#[cfg(test)]
mod tests {
    use super::ceil_ns;

    #[test]
    fn ceil_ns_is_ceil_as_u64() {
        let mut xs = vec![0.0, -0.0, 0.5, 1.0, 1.5, -0.5, -3.0, 1e-300, 2.0f64.powi(52) + 0.5, 2.0f64.powi(53) + 2.0];
        xs.extend([2.0f64.powi(63), 2.0f64.powi(64), 2.0f64.powi(65), f64::MAX, f64::INFINITY, f64::NEG_INFINITY]);
        xs.extend([f64::NAN, (u64::MAX - 1024) as f64, f64::EPSILON, 1.0 - f64::EPSILON, 1.0 + f64::EPSILON]);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            xs.push(f64::from_bits(x));
            xs.push((x >> 11) as f64 / 1024.0);
        }
        for v in xs {
            assert_eq!(ceil_ns(v), v.ceil() as u64, "{v:e}");
        }
    }
}
