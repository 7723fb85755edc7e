//! One simulated run: jobs keep `iodepth` I/Os outstanding on their drives, as fio does,
//! and every I/O walks its path.
//!
//! The life of an I/O:
//!
//! ```text
//! issue -> [CBS port multiplier: deferred while another drive holds the link] -> path latency/2 -> drive
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

mod alloc;
mod dominated;
mod events;
mod flash;
mod hdd_queue;
mod latcounts;
mod pm;
mod pool;
mod report;
mod setup;
mod targets;
mod vgroup;

use crate::engine::{Lane, Next, Scheduler};
use crate::hdd::{HddGeometry, ReadAhead, WriteBack};
use iopath_model::bound::MaxMin;
use iopath_model::paths::{Cost, Dir, ResourceGraph, Side, pm_uses_fbs};
use iopath_model::pool::Task;
use iopath_model::report::{
    Bottleneck, Cost as RunCost, DriveResult, Latency, LinkUtil, PoolResult, Report, ReportKind, Total,
};
use iopath_model::topology::{NodeIx, Topology};
use iopath_model::units::{SimDuration, SimTime};
use iopath_model::workload::Workload;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use alloc::{Alloc, account};
use latcounts::LatCounts;
use pm::{PmSt, PmSwitch};
pub(crate) use pool::resolve as resolve_pool;
pub use pool::simulate_chain;
use pool::{NO_PARENT, PoolSt};
use report::LAT_UNIT_NS;
pub(crate) use report::bottleneck_of;
pub(crate) use setup::jobs_count;
pub use targets::target_drives;

/// Why a workload cannot run on a topology (a usage error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("no drive has id {id:?}{hint}")]
    UnknownDrive { id: String, hint: String },
    #[error("{asked} active drives asked for, but the topology has only {have} drives")]
    TooManyActive { asked: usize, have: usize },
    /// A copy chain or a destination with two sources.
    #[error(transparent)]
    Bind(iopath_model::bind::BindError),
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
    #[error("no pool has id {id:?}{hint}")]
    UnknownPool { id: String, hint: String },
    #[error("{id:?} is not a member of pool {pool:?} (its members: {members})")]
    NotAMember { id: String, pool: String, members: String },
    /// The failed members are more than the pool survives.
    #[error("{0}")]
    Failed(String),
    /// A client's requests are simulated against a pool (the network's costs ride on the
    /// pool's member classes); a client with plain drive targets has only the closed form.
    #[error(
        "client {client:?}: a client's requests are simulated against a pool (name one); \
         over plain drives `iopath check` gives the client's closed-form bound"
    )]
    ClientWithoutPool { client: String },
    /// A scrub or rebuild runs inside the server; no client takes part.
    #[error("a {task} runs inside the server: no client takes part in it (drop the client)")]
    ClientInMaintenance { task: String },
}

/// Options of a run that are not part of the workload.
#[derive(Default)]
pub struct SimOptions<'a> {
    /// Stop early when set (Ctrl-C); the report is marked partial.
    pub cancel: Option<&'a AtomicBool>,
    /// A wall clock [s] for the cost report; the simulator itself never reads one.
    pub wall_clock: Option<&'a (dyn Fn() -> f64 + Sync)>,
    /// Where the run publishes the simulated nanoseconds it has reached (summed over a
    /// scrub's windows), as often as it reads `cancel`: another thread can time the run
    /// while it goes on, instead of running a pilot of it first.
    pub progress: Option<&'a AtomicU64>,
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
    Issue {
        job: u32,
    },
    AtPort {
        io: u32,
    },
    Submitted {
        io: u32,
    },
    DriveDone {
        io: u32,
    },
    UnitDone {
        io: u32,
    },
    HddDone {
        drive: u32,
    },
    DataReady {
        io: u32,
    },
    Completed {
        io: u32,
    },
    /// A pool's logical I/O issues its first phase (after a client's request round trip).
    LogicalStart {
        l: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    Read,
    Write,
}

/// One line each: at 56 bytes most records straddled two lines, so a completion that
/// reads the whole record (32,768 of them in flight at QD 32 on 1,024 drives, none cached)
/// waited for two misses, and a prefetch of its first line covered half of it.
#[repr(align(64))]
struct Io {
    job: u32,
    drive: u32,
    stage: Stage,
    offset: f64,
    len: f64,
    start: SimTime,
    /// Issued through this CBS port multiplier and not yet completed at the controller.
    pm: Option<u32>,
    /// The I/O is the read half of a copy; its write half follows.
    copy_to: Option<u32>,
    /// The logical I/O this member I/O serves (`pool::NO_PARENT` for per-drive jobs).
    parent: u32,
}

/// Laid out by hand (`repr(C)`) so that what every I/O reads or writes fills the first two
/// cache lines of the record, the random generator (304 bytes, read only by random or mixed
/// jobs) after them: with 1,024 jobs none stays in L1 between two I/Os of the same job, and
/// the compiler's order put the generator between the limits and the rest (three lines).
#[repr(C, align(64))]
struct Job {
    read_share: f64,
    next_off: f64,
    region: f64,
    bs: f64,
    issued: f64,
    /// Coverage mode: stop after this many bytes.
    budget: Option<f64>,
    outstanding: u32,
    drive: u32,
    /// Time limit for this job in coverage runs (SSDs in a sequential run).
    until: Option<SimTime>,
    /// Blocks of `bs` in the region, where a random job draws its offsets
    /// ([`Job::blocks_of`]: a division per I/O, done once).
    blocks: u64,
    copy_to: Option<u32>,
    random: bool,
    stopped: bool,
    rng: ChaCha8Rng,
}

/// Laid out by hand (`repr(C)`, two cache lines, aligned): what every start and end of a
/// transfer reads fills them (the queue, the rate and the counters in the first; the
/// accounting figures and the cost list in the second), and the multiplier's switch term,
/// read only when the topology has multipliers, is boxed. The compiler's order had put the
/// switch term first and the rest over three lines, unaligned.
#[repr(C, align(64))]
struct Class {
    /// Its transfers (I/O, bytes left of the head), oldest first.
    fifo: Fifo,
    rate: f64,
    version: u32,
    n_grp: u32,
    /// When the head transfer's remaining bytes were last brought up to date.
    last: SimTime,
    acc_t: SimTime,
    /// Payload moved inside the measured window [bytes], accounted up to `acc_t`.
    window_bytes: f64,
    /// Of those, what it moved as a group member not yet charged to the busy time of the
    /// resources it crosses ([`Sim::charge_group_bytes`]).
    grp_bytes: f64,
    /// Every resource it crosses, with its cost per byte; the first `n_grp` are the ones a
    /// group's bookkeeping needs (the rest can never bind: [`dominated`]).
    costs: Vec<Cost>,
    /// Behind an FBS port multiplier: the switch term of its upstream cost.
    pm_switch: Option<Box<PmSwitch>>,
}

/// A class's queue of transfers, its head kept in the class's own record: a drive at queue
/// depth 1 (one transfer at a time, every class of a large pool or JBOD) never reaches the
/// heap buffer behind it, one cache miss fewer on every start and end of a transfer.
#[repr(C)]
struct Fifo {
    /// The head (I/O, bytes left); `NO_IO` as its I/O: the queue is empty.
    head: (u32, f64),
    rest: VecDeque<(u32, f64)>,
}

/// [`Sim::class_drive`]'s mark of a write class (a drive index never reaches it).
const WRITE_CLASS: u32 = 1 << 31;

/// The I/O of an empty [`Fifo`]'s head (no I/O's index: the I/O slab never grows that far).
const NO_IO: u32 = u32::MAX;

impl Default for Fifo {
    fn default() -> Fifo {
        Fifo { head: (NO_IO, 0.0), rest: VecDeque::new() }
    }
}

impl Fifo {
    #[inline]
    fn is_empty(&self) -> bool {
        self.head.0 == NO_IO
    }

    #[inline]
    fn front(&self) -> Option<&(u32, f64)> {
        (!self.is_empty()).then_some(&self.head)
    }

    #[inline]
    fn front_mut(&mut self) -> Option<&mut (u32, f64)> {
        (!self.is_empty()).then_some(&mut self.head)
    }

    #[inline]
    fn push_back(&mut self, x: (u32, f64)) {
        if self.is_empty() {
            self.head = x;
        } else {
            self.rest.push_back(x);
        }
    }

    #[inline]
    fn pop_front(&mut self) -> Option<(u32, f64)> {
        if self.is_empty() {
            return None;
        }
        let h = self.head;
        self.head = self.rest.pop_front().unwrap_or((NO_IO, 0.0));
        Some(h)
    }
}

impl Job {
    /// Whole blocks of `bs` in `region`, at least one.
    fn blocks_of(region: f64, bs: f64) -> u64 {
        (region / bs).floor().max(1.0) as u64
    }
}

impl Class {
    /// The costs a group's bookkeeping needs: every one but those of dominated resources.
    #[inline]
    fn grp_costs(&self) -> &[Cost] {
        &self.costs[..self.n_grp as usize]
    }
}

struct DriveSt {
    node: NodeIx,
    hdd: Option<HddSt>,
    /// SLC cache and latency spread of a flash drive.
    flash: Option<Box<flash::FlashSt>>,
    units_free: u32,
    unit_wait: VecDeque<u32>,
    /// Controller and hop latency before and after the drive.
    fabric_half: SimDuration,
    pm: Option<u32>,
    class: [u32; 2],
    /// Scheduler lanes of this drive's fixed delays: host software time (before and after
    /// the command) + fabric (controller and hops), host, fabric, the read and the write
    /// latency.
    lanes: DriveLanes,
    st: DriveStats,
}

#[derive(Clone, Copy)]
struct DriveLanes {
    host_fabric: Lane,
    host: Lane,
    fabric: Lane,
    read: Lane,
    write: Lane,
}

/// Laid out by hand (`repr(C)`, aligned to a cache line): a read the read-ahead stream
/// serves (every read of a sequential stream) touches the stream and the geometry's pointer
/// in the first line and the write-back stream's flag and the busy time in the second;
/// the queue and the rest, which only a positioned command reads, follow.
#[repr(C, align(64))]
struct HddSt {
    ra: ReadAhead,
    /// Shared by every drive of the same figures (a JBOD of one model: one record, which
    /// stays in L1 where a copy per drive was another line missed on every read).
    geo: std::sync::Arc<HddGeometry>,
    /// Where this drive's platter is in its turn at time zero, as the time it has already
    /// turned [ns]: independent spindles are never in phase.
    spin_ns: f64,
    wb: WriteBack,
    busy_ns: f64,
    head: f64,
    busy: bool,
    queue: Vec<(u32, bool)>,
    current: Option<(u32, bool)>,
    /// Volatile write cache on: random writes are acknowledged from it.
    write_cache: bool,
    /// Acknowledged writes not yet on the media (offset, length), oldest first.
    dirty: VecDeque<(f64, f64)>,
    dirty_bytes: f64,
    /// Where the last write to arrive ended: a write starting there continues a stream.
    last_write_end: f64,
    /// Writes waiting for room in the write cache, oldest first.
    wait_room: VecDeque<u32>,
    /// The dirty entry being destaged (offset, length).
    destage: (f64, f64),
    /// Drive-managed SMR: the media cache random writes are logged into.
    smr: Option<crate::hdd::SmrLog>,
}

struct DriveStats {
    read_bytes: f64,
    write_bytes: f64,
    ios: u64,
    /// Completion latencies [100 ns units], 2 significant digits (1%).
    hist: LatCounts,
    lat_sum_ns: f64,
    first: Option<SimTime>,
    last: SimTime,
    used: bool,
}

/// Runs one workload on one topology and reports what the hardware would do.
pub fn simulate(t: &Topology, w: &Workload, opts: &SimOptions) -> Result<Report, SimError> {
    simulate_with_utils(t, w, opts).map(|(r, _)| r)
}

/// [`simulate`], and the utilization of every resource of the run's graph, in graph order.
pub(crate) fn simulate_with_utils(
    t: &Topology,
    w: &Workload,
    opts: &SimOptions,
) -> Result<(Report, Vec<f64>), SimError> {
    if w.pool.is_some() && w.task != Task::Io {
        let start = opts.wall_clock.map(|c| c());
        let (mut r, utils) = pool::simulate_maintenance(t, w, opts)?;
        if let (Some(clock), Some(start)) = (opts.wall_clock, start) {
            r.cost.wall_s = clock() - start;
        }
        return Ok((r, utils));
    }
    let mut s = Sim::new(t, w)?;
    s.wall_start = opts.wall_clock.map(|c| c());
    s.run(opts, 0);
    let (mut r, utils) = s.report(t, w);
    if let Some(clock) = opts.wall_clock {
        r.cost.wall_s = clock() - s.wall_start.unwrap_or(0.0);
    }
    Ok((r, utils))
}

/// Whether a run covers regions once (no runtime: a sequential job given a region), and
/// its ramp and measured time (the defaults when the workload names none).
fn plan(t: &Topology, w: &Workload, targets: &[NodeIx]) -> (bool, SimDuration, SimDuration) {
    let any_hdd = targets.iter().any(|&d| t.drive_figures(d).is_hdd());
    let sequential = !w.rw.is_random();
    // Without a runtime, a sequential job given a region reads (writes) it once.
    // A scrub or rebuild is projected from time-based windows (`pool.rs`).
    let maintenance = w.pool.is_some() && w.task != Task::Io;
    let coverage = w.runtime.is_none() && sequential && w.region_given && !maintenance;
    let runtime = match w.runtime {
        Some(r) => r,
        None => SimDuration::from_secs_f64(if any_hdd { DEFAULT_HDD_RUNTIME_S } else { DEFAULT_SSD_RUNTIME_S }),
    };
    let ramp = match (w.ramp, coverage) {
        (_, true) => SimDuration::ZERO,
        (Some(r), _) => r,
        (None, _) => runtime / 10,
    };
    (coverage, ramp, runtime)
}

/// The simulated time a time-based run will cover, ramp included (every window of a scrub
/// or rebuild); `None` for a run that
/// covers each drive's region once (its length depends on the rates it reaches).
pub fn planned_sim_time(t: &Topology, w: &Workload) -> Result<Option<SimDuration>, SimError> {
    let targets = target_drives(t, w)?;
    let (coverage, ramp, runtime) = plan(t, w, &targets);
    // A scrub or rebuild runs one window per part of its plan (`pool.rs`).
    let parts = if w.pool.is_some() && w.task != Task::Io { pool::SEGMENTS } else { 1 };
    Ok((!coverage).then(|| (ramp + runtime) * parts))
}

struct Sim {
    sched: Scheduler<Ev>,
    graph: ResourceGraph,
    jobs: Vec<Job>,
    ios: Vec<Io>,
    free_ios: Vec<u32>,
    classes: Vec<Class>,
    /// Each class's drive, with [`WRITE_CLASS`] set for a write class: what a transfer's end
    /// needs to know of its I/O, from a few kilobytes that stay in cache ([`Sim::transfer_ended`]).
    class_drive: Vec<u32>,
    drives: Vec<DriveSt>,
    pms: Vec<PmSt>,
    /// The fluid allocation: components, loads, utilization integrals.
    alloc: Alloc,
    /// The measured window and what the run reached.
    win: Window,
    iodepth: u32,
    wall_start: Option<f64>,
    /// A pool workload's logical I/Os (`None`: per-drive jobs, today's run exactly).
    pool: Option<Box<PoolSt>>,
}

/// The measured window and the run's progress: what the statistics are taken over.
struct Window {
    start: SimTime,
    end: SimTime,
    /// False for a run that covers each drive's region once (the window is then [0, end of
    /// the run]).
    time_based: bool,
    /// I/Os completed inside the window.
    completed: u64,
    /// Stopped by the cancel flag.
    partial: bool,
    /// Simulated time the run reached (ramp included).
    reached: SimTime,
}

impl Sim {
    /// Runs to the end of the workload (or until `opts.cancel` is set); `base_ns` is what
    /// earlier windows of the same run added to `opts.progress`.
    fn run(&mut self, opts: &SimOptions, base_ns: u64) {
        // Every job's first `iodepth` I/Os are due at once (32,768 of them for 1,024 drives at
        // QD 32): a lane of delay zero keeps them in order as a FIFO, where a heap that deep
        // would cost a cache miss per level on every pop. Same keys, same order.
        let start = self.sched.lane(SimDuration::ZERO);
        for j in 0..self.jobs.len() as u32 {
            for _ in 0..self.iodepth {
                self.sched.push(start, Ev::Issue { job: j });
            }
        }
        // A time-based run stops at its window's end; a coverage run when its jobs are done.
        let stop = if self.win.time_based { self.win.end } else { SimTime::MAX };
        while let Some(next) = self.sched.pop() {
            let now = self.sched.now();
            if now >= stop {
                break;
            }
            match next {
                Next::Event(ev) => self.handle(ev),
                Next::Timer(id) => match self.alloc.groups.group_of_timer(id) {
                    Some(g) => {
                        if let Some((c, io)) = self.group_fire(g) {
                            self.transfer_ended(c, io);
                        }
                    }
                    None => self.xfer_done(id as u32),
                },
            }
            if !self.alloc.dirty.is_empty() {
                self.reallocate();
            }
            #[cfg(test)]
            if self.alloc.groups.check_each_event {
                self.check_against_solve(now);
            }
            if self.sched.processed() & CANCEL_CHECK_MASK == 0 {
                if let Some(p) = opts.progress {
                    p.store(base_ns + now.nanos(), Ordering::Relaxed);
                }
                if opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    self.win.partial = true;
                    break;
                }
            }
        }
        self.win.reached = self.sched.now();
        if self.win.partial && self.win.time_based {
            // The measured window ends where the run stopped, never where it would have
            // ended: [ramp end, time reached], empty when stopped inside the ramp.
            self.win.end = self.win.reached.clamp(self.win.start, self.win.end);
        }
        let end = if self.win.time_based { self.win.end } else { self.win.reached };
        self.flush_groups(end);
        for k in 0..self.alloc.comps.len() {
            self.integrate(k, end);
            for &c in &self.alloc.comps[k].active {
                account(&mut self.classes[c as usize], end, self.win.start, self.win.end);
            }
        }
        if !self.win.time_based {
            self.win.end = end;
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
            Ev::LogicalStart { l } => self.start_phase(l),
        }
    }
}

/// A hint to the CPU to bring the cache line holding `x` into L1.
#[inline(always)]
pub(super) fn prefetch<T>(x: &T) {
    prefetch_at(x, 0);
}

/// [`prefetch`] of the line `off` bytes into `x` (within it).
#[inline(always)]
pub(super) fn prefetch_at<T>(x: &T, off: usize) {
    debug_assert!(off < std::mem::size_of::<T>().max(1), "a line inside the record");
    prefetch_addr((x as *const T as *const i8).wrapping_add(off));
}

/// [`prefetch_at`] of `v[i]`, with no bounds check: the address is only hinted, never
/// read, so an index past the end would cost a wasted hint, not a wrong answer (the hints
/// on every QD 1 end spent a third of their instructions checking bounds).
#[inline(always)]
pub(super) fn prefetch_in<T>(v: &[T], i: usize, off: usize) {
    debug_assert!(i < v.len() && off < std::mem::size_of::<T>().max(1), "a line of an element");
    prefetch_addr((v.as_ptr() as *const i8).wrapping_add(i.wrapping_mul(std::mem::size_of::<T>())).wrapping_add(off));
}

#[inline(always)]
fn prefetch_addr(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; it never faults, reads nothing the program
    // sees and writes nothing, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `x.ceil() as u64`, without a call to libm's `ceil` (the default x86-64 target has no
/// rounding instruction): the same value for every f64, NaN and infinities included.
#[inline(always)]
fn ceil_ns(x: f64) -> u64 {
    // Every time a run schedules (below 2^52 ns, 52 days) converts through i64 exactly both
    // ways, one instruction each; through u64 both conversions take a dozen.
    if (0.0..4_503_599_627_370_496.0).contains(&x) {
        // SAFETY: `x` is finite and in [0, 2^52), so its truncation fits an i64.
        let t = unsafe { x.to_int_unchecked::<i64>() };
        return if (t as f64) < x { t as u64 + 1 } else { t as u64 };
    }
    let t = x as u64; // truncates toward zero, saturating
    if (t as f64) < x { t.saturating_add(1) } else { t }
}

/// A time computed in continuous nanoseconds (a disk head's arithmetic), rounded up to the
/// integer nanosecond the clock counts: an event never runs before it is due.
#[inline(always)]
fn ceil_time(ns: f64) -> SimTime {
    SimTime::from_nanos(ceil_ns(ns))
}

/// A span in continuous nanoseconds, rounded up to the clock's integer nanosecond.
#[inline(always)]
fn ceil_span(ns: f64) -> SimDuration {
    SimDuration::from_nanos(ceil_ns(ns))
}

/// How long a class's head transfer of `rem` bytes takes at `rate` [bytes/s]: at once at
/// an infinite rate, never (far beyond any run) at rate 0; at least one nanosecond, so a
/// timer always moves the clock.
fn transfer_time(rem: f64, rate: f64) -> SimDuration {
    let dt = if rate.is_infinite() {
        SimDuration::ZERO
    } else if rate > 0.0 {
        ceil_span(rem / rate * 1e9)
    } else {
        SimDuration::from_nanos(u64::MAX / 4)
    };
    dt.max(SimDuration::from_nanos(1))
}

#[cfg(test)]
mod tests {
    use super::ceil_ns;

    #[test]
    fn ceil_ns_is_ceil_as_u64() {
        let mut xs = vec![0.0, -0.0, 0.5, 1.0, 1.5, -0.5, -3.0, 1e-300, 2.0f64.powi(53) + 2.0];
        // Either side of where the conversion through i64 stops.
        xs.extend([2.0f64.powi(52) - 0.5, 2.0f64.powi(52), 2.0f64.powi(52) + 1.0]);
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
