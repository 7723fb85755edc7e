//! The runners that issue direct I/O, behind one trait ([`Runner`]):
//!
//! - [`UringRunner`]: one thread per job, one io_uring per thread, `iodepth` I/Os in flight;
//! - [`ThreadRunner`]: `iodepth` threads per job doing `pread`/`pwrite` (fio's psync with as
//!   many threads as the queue depth), for kernels or sandboxes without io_uring;
//! - [`MockRunner`]: moves no data; reports configured rates, for tests of everything above
//!   the engine.
//!
//! Every runner keeps the same contract: all jobs start together and stop submitting when
//! the [`Clock`] says so (end of run or Ctrl-C); completions are counted only inside the
//! measured window (after the ramp); every completed byte, ramp included, is added to the
//! job's [`JobCounters`] so a sampler can compute per-second rates while the run goes on;
//! latencies go into an HDR histogram in nanoseconds. A failed or short I/O stops every
//! job and is returned as an error naming the target, the operation and the offset.

use crate::target::AlignedBuf;
use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io;
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Errors of a run. Their hints name what to change in words ([`Knob`]); a front end that
/// has its own name for a knob (a command-line option) words them with
/// [`EngineError::message`].
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    Io {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        len: u64,
        cause: io::Error,
        hint: IoHint,
    },
    /// The target ended before the region did.
    Short {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        len: u64,
        got: u64,
    },
    /// io_uring could not be set up.
    Uring(io::Error),
    Panic(String),
}

/// What an engine error suggests changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    /// The block size (to a multiple of the logical block size).
    BlockSize,
    /// The measured region (lower).
    Region,
    /// The thread engine instead of io_uring.
    ThreadEngine,
}

impl Knob {
    /// The knob in words, as the message reads without a front end's names.
    pub fn words(self) -> &'static str {
        match self {
            Knob::BlockSize => "a block size",
            Knob::Region => "the region",
            Knob::ThreadEngine => "the thread engine",
        }
    }
}

/// What a failed I/O's error number says about its cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoHint {
    None,
    /// EINVAL on direct I/O: the offset, length or buffer is not aligned.
    Misaligned,
    /// EIO: a media or transport error.
    Media,
    /// ENOSPC.
    NoSpace,
}

fn hint_for(e: &io::Error) -> IoHint {
    match e.raw_os_error() {
        Some(libc::EINVAL) => IoHint::Misaligned,
        Some(libc::EIO) => IoHint::Media,
        Some(libc::ENOSPC) => IoHint::NoSpace,
        _ => IoHint::None,
    }
}

impl EngineError {
    /// The message, with each knob named by `name` (a command line passes its options).
    pub fn message(&self, name: &dyn Fn(Knob) -> String) -> String {
        match self {
            EngineError::Io { path, op, offset, len, cause, hint } => {
                let hint = match hint {
                    IoHint::None => String::new(),
                    IoHint::Misaligned => format!(
                        "; the offset, length or buffer is not aligned for direct I/O on this target (use {} that is a multiple of the logical block size)",
                        name(Knob::BlockSize)
                    ),
                    IoHint::Media => "; the device reported a media or transport error (check dmesg)".into(),
                    IoHint::NoSpace => "; the filesystem is full".into(),
                };
                format!("{}: {op} of {len} bytes at offset {offset} failed: {cause}{hint}", path.display())
            }
            EngineError::Short { path, op, offset, len, got } => format!(
                "{}: short {op}: {got} of {len} bytes at offset {offset}; the target ends before the region does (lower {}, or check the device size)",
                path.display(),
                name(Knob::Region)
            ),
            EngineError::Uring(e) => format!(
                "io_uring is unavailable ({e}); use {}, or enable io_uring (sysctl kernel.io_uring_disabled=0, or allow io_uring_setup in the container's seccomp profile)",
                name(Knob::ThreadEngine)
            ),
            EngineError::Panic(m) => format!("a worker thread panicked: {m}"),
        }
    }
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(&|k| k.words().to_string()))
    }
}

/// Timing shared by all jobs of one run.
#[derive(Debug, Clone)]
pub struct Clock {
    pub start: Instant,
    pub ramp_end: Instant,
    pub end: Instant,
    /// Set by Ctrl-C or by a failing job: stop submitting now.
    pub stop: Arc<AtomicBool>,
}

impl Clock {
    pub fn new(ramp: Duration, runtime: Duration, stop: Arc<AtomicBool>) -> Clock {
        let start = Instant::now();
        Clock { start, ramp_end: start + ramp, end: start + ramp + runtime, stop }
    }
    #[inline]
    pub fn should_stop(&self, now: Instant) -> bool {
        now >= self.end || self.stop.load(Ordering::Relaxed)
    }
    #[inline]
    pub fn in_window(&self, t: Instant) -> bool {
        t >= self.ramp_end && t < self.end
    }
}

/// One side of a job: a target's index (for reporting), its descriptor and its path.
#[derive(Debug, Clone)]
pub struct Side {
    pub target: usize,
    pub fd: RawFd,
    pub path: PathBuf,
}

/// What a job does.
#[derive(Debug, Clone)]
pub enum JobKind {
    /// Reads and writes on one target; `read_pct` of the I/Os are reads.
    Mix { read_pct: u8 },
    /// Reads the job's target and writes each block to `to` at the same offset.
    Copy { to: Side },
}

/// One job: a closed loop keeping `iodepth` I/Os outstanding, as fio's.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub io: Side,
    pub kind: JobKind,
    /// Block size [bytes], a multiple of the targets' offset alignment.
    pub bs: u64,
    pub iodepth: u32,
    /// First byte of the region I/O touches.
    pub region_start: u64,
    /// Bytes of the region, a multiple of `bs` and at least `bs`.
    pub region_len: u64,
    pub random: bool,
    pub seed: u64,
    /// Buffer alignment [bytes].
    pub mem_align: usize,
}

/// Bytes completed so far by one job (index 0: its target, 1: a copy's destination),
/// ramp included. Padded so jobs on different cores do not share a cache line.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct JobCounters {
    pub bytes: [AtomicU64; 2],
    pub ios: AtomicU64,
}

impl JobCounters {
    #[inline]
    fn add(&self, side: usize, bytes: u64) {
        self.bytes[side].fetch_add(bytes, Ordering::Relaxed);
        self.ios.fetch_add(1, Ordering::Relaxed);
    }
    pub fn total_bytes(&self) -> u64 {
        self.bytes[0].load(Ordering::Relaxed) + self.bytes[1].load(Ordering::Relaxed)
    }
}

/// What one job did to one target inside the measured window.
#[derive(Debug, Clone)]
pub struct Tally {
    pub target: usize,
    pub read_bytes: u64,
    pub read_ios: u64,
    pub write_bytes: u64,
    pub write_ios: u64,
    /// Completion latencies [ns].
    pub hist: Histogram<u64>,
}

/// Longest latency the histograms hold exactly [ns]; longer ones saturate.
pub const HIST_MAX_NS: u64 = 3_600_000_000_000;

pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid histogram bounds")
}

impl Tally {
    pub fn new(target: usize) -> Tally {
        Tally { target, read_bytes: 0, read_ios: 0, write_bytes: 0, write_ios: 0, hist: new_hist() }
    }
    #[inline]
    fn record(&mut self, write: bool, bytes: u64, lat: Duration) {
        if write {
            self.write_bytes += bytes;
            self.write_ios += 1;
        } else {
            self.read_bytes += bytes;
            self.read_ios += 1;
        }
        self.hist.saturating_record((lat.as_nanos() as u64).max(1));
    }
    pub fn merge(&mut self, o: &Tally) {
        self.read_bytes += o.read_bytes;
        self.read_ios += o.read_ios;
        self.write_bytes += o.write_bytes;
        self.write_ios += o.write_ios;
        let _ = self.hist.add(&o.hist);
    }
}

/// A job's result: one tally per target it touched.
#[derive(Debug, Clone)]
pub struct JobResult {
    pub tallies: Vec<Tally>,
}

/// Something that runs jobs.
pub trait Runner: Sync {
    /// "io_uring", "threads", "mock".
    fn name(&self) -> &'static str;
    /// Runs every job at once; returns when all have stopped.
    fn run(&self, jobs: &[JobSpec], clock: &Clock, counters: &[JobCounters]) -> Result<Vec<JobResult>, EngineError>;
}

/// Offsets and directions of one stream of I/Os.
struct Stream {
    random: bool,
    start: u64,
    nblocks: u64,
    bs: u64,
    cursor: u64,
    rng: ChaCha8Rng,
}

impl Stream {
    fn new(job: &JobSpec, stream: u64) -> Stream {
        Stream {
            random: job.random,
            start: job.region_start,
            nblocks: (job.region_len / job.bs).max(1),
            bs: job.bs,
            cursor: 0,
            rng: ChaCha8Rng::seed_from_u64(job.seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        }
    }
    #[inline]
    fn next_offset(&mut self) -> u64 {
        let b = if self.random {
            self.rng.next_u64() % self.nblocks
        } else {
            let b = self.cursor;
            self.cursor = if b + 1 >= self.nblocks { 0 } else { b + 1 };
            b
        };
        self.start + b * self.bs
    }
    /// The next command's operation: the read half of a copy, or a read or a write by the
    /// job's read share.
    #[inline]
    fn next_op(&mut self, read_pct: u8, copy: bool) -> Op {
        if copy {
            Op::CopyRead
        } else if self.is_read(read_pct) {
            Op::Read
        } else {
            Op::Write
        }
    }
    #[inline]
    fn is_read(&mut self, read_pct: u8) -> bool {
        match read_pct {
            100.. => true,
            0 => false,
            p => (self.rng.next_u32() % 100) < u32::from(p),
        }
    }
}

fn run_jobs<F>(jobs: &[JobSpec], clock: &Clock, counters: &[JobCounters], f: F) -> Result<Vec<JobResult>, EngineError>
where
    F: Fn(&JobSpec, &Clock, &JobCounters) -> Result<JobResult, EngineError> + Sync,
{
    let results: Vec<Result<JobResult, EngineError>> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .zip(counters)
            .map(|(j, c)| {
                let f = &f;
                s.spawn(move || {
                    let r = f(j, clock, c);
                    if r.is_err() {
                        clock.stop.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|p| {
                    clock.stop.store(true, Ordering::Relaxed);
                    Err(EngineError::Panic(
                        p.downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_default(),
                    ))
                })
            })
            .collect()
    });
    results.into_iter().collect()
}

fn new_tallies(job: &JobSpec) -> Vec<Tally> {
    let mut v = vec![Tally::new(job.io.target)];
    if let JobKind::Copy { to } = &job.kind {
        v.push(Tally::new(to.target));
    }
    v
}

// ---------------------------------------------------------------------------------------
// io_uring

/// io_uring with one ring per job thread.
#[derive(Debug, Default)]
pub struct UringRunner;

/// Checks that io_uring can be set up here (kernel, sysctl, seccomp).
pub fn uring_available() -> Result<(), io::Error> {
    io_uring::IoUring::new(2).map(|_| ())
}

fn build_ring(entries: u32) -> io::Result<io_uring::IoUring> {
    // As fio: try the cheaper task-running modes first, fall back on older kernels.
    let mut b = io_uring::IoUring::builder();
    b.setup_coop_taskrun().setup_single_issuer().setup_defer_taskrun();
    if let Ok(r) = b.build(entries) {
        return Ok(r);
    }
    let mut b = io_uring::IoUring::builder();
    b.setup_coop_taskrun();
    if let Ok(r) = b.build(entries) {
        return Ok(r);
    }
    io_uring::IoUring::new(entries)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    /// The read half of a copy: its completion issues the write.
    CopyRead,
    CopyWrite,
}

struct Slot {
    buf: AlignedBuf,
    issued: Instant,
    offset: u64,
    op: Op,
}

impl Runner for UringRunner {
    fn name(&self) -> &'static str {
        "io_uring"
    }
    fn run(&self, jobs: &[JobSpec], clock: &Clock, counters: &[JobCounters]) -> Result<Vec<JobResult>, EngineError> {
        run_jobs(jobs, clock, counters, uring_job)
    }
}

/// The buffers of one io_uring job's slots, and how many of them the kernel may be using.
///
/// Invariant: a buffer is freed only when no I/O is in flight. `uring_job` declares this
/// before the ring, so it is dropped after it; when I/Os may still be in flight (an error
/// while waiting, or a panic that unwinds), drop leaks the buffers instead of freeing them.
struct Buffers {
    slots: Vec<Slot>,
    inflight: usize,
}

impl Drop for Buffers {
    fn drop(&mut self) {
        if self.inflight > 0 {
            std::mem::forget(std::mem::take(&mut self.slots));
        }
    }
}

fn uring_job(job: &JobSpec, clock: &Clock, ctr: &JobCounters) -> Result<JobResult, EngineError> {
    use io_uring::{opcode, types};
    let qd = job.iodepth.max(1);
    let read_pct = match &job.kind {
        JobKind::Mix { read_pct } => *read_pct,
        JobKind::Copy { .. } => 100,
    };
    // The buffers are declared before the ring, so they are dropped after it (locals drop
    // in reverse order), and `Buffers` leaks them when I/Os may still be in flight: the
    // kernel never writes into freed memory, even when this function unwinds.
    let mut bufs = Buffers {
        slots: (0..qd)
            .map(|i| {
                let mut buf = AlignedBuf::new(job.bs as usize, job.mem_align);
                if read_pct < 100 {
                    buf.fill_random(job.seed.wrapping_add(u64::from(i)));
                }
                Slot { buf, issued: Instant::now(), offset: 0, op: Op::Read }
            })
            .collect(),
        inflight: 0,
    };
    let mut ring = build_ring(qd.next_power_of_two()).map_err(EngineError::Uring)?;
    let mut stream = Stream::new(job, 0);
    let mut tallies = new_tallies(job);
    let copy_to = match &job.kind {
        JobKind::Copy { to } => Some(to.clone()),
        _ => None,
    };
    let len = job.bs as u32;
    let (submitter, mut sq, mut cq) = ring.split();
    let entry = |slot: &mut Slot, ix: usize| -> io_uring::squeue::Entry {
        let (fd, write) = match slot.op {
            Op::Read | Op::CopyRead => (job.io.fd, false),
            Op::Write => (job.io.fd, true),
            Op::CopyWrite => (copy_to.as_ref().map(|t| t.fd).unwrap_or(job.io.fd), true),
        };
        if write {
            opcode::Write::new(types::Fd(fd), slot.buf.as_mut_ptr(), len)
                .offset(slot.offset)
                .build()
                .user_data(ix as u64)
        } else {
            opcode::Read::new(types::Fd(fd), slot.buf.as_mut_ptr(), len)
                .offset(slot.offset)
                .build()
                .user_data(ix as u64)
        }
    };
    let now = Instant::now();
    if !clock.should_stop(now) {
        for (ix, slot) in bufs.slots.iter_mut().enumerate() {
            slot.offset = stream.next_offset();
            slot.op = stream.next_op(read_pct, copy_to.is_some());
            slot.issued = Instant::now();
            let e = entry(slot, ix);
            // SAFETY: the entry points into this slot's buffer, owned by `bufs`, which is
            // dropped after the ring and is leaked while any I/O is in flight.
            unsafe { sq.push(&e).expect("submission queue sized to the depth") };
            bufs.inflight += 1;
        }
    }
    let mut failure: Option<EngineError> = None;
    while bufs.inflight > 0 {
        sq.sync();
        match submitter.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
            Err(e) => {
                // Cannot wait for the I/Os in flight: `bufs` leaks their buffers on drop
                // rather than risk the kernel writing into freed memory.
                return Err(EngineError::Uring(e));
            }
        }
        // The kernel consumed the submissions: refresh our view of the queue head.
        sq.sync();
        cq.sync();
        let now = Instant::now();
        let stop = clock.should_stop(now) || failure.is_some();
        let counted = clock.in_window(now);
        for cqe in &mut cq {
            let ix = cqe.user_data() as usize;
            let res = cqe.result();
            let slot = &mut bufs.slots[ix];
            let (side, write, path) = match slot.op {
                Op::Read | Op::CopyRead => (0, false, &job.io.path),
                Op::Write => (0, true, &job.io.path),
                Op::CopyWrite => (1, true, &copy_to.as_ref().expect("copy").path),
            };
            let opname = if write { "write" } else { "read" };
            if res < 0 {
                let e = io::Error::from_raw_os_error(-res);
                failure.get_or_insert(EngineError::Io {
                    path: path.clone(),
                    op: opname,
                    offset: slot.offset,
                    len: job.bs,
                    hint: hint_for(&e),
                    cause: e,
                });
                clock.stop.store(true, Ordering::Relaxed);
                bufs.inflight -= 1;
                continue;
            }
            if res as u64 != job.bs {
                failure.get_or_insert(EngineError::Short {
                    path: path.clone(),
                    op: opname,
                    offset: slot.offset,
                    len: job.bs,
                    got: res as u64,
                });
                clock.stop.store(true, Ordering::Relaxed);
                bufs.inflight -= 1;
                continue;
            }
            ctr.add(side, job.bs);
            if counted {
                tallies[side].record(write, job.bs, now - slot.issued);
            }
            if slot.op == Op::CopyRead && failure.is_none() {
                slot.op = Op::CopyWrite;
                slot.issued = now;
                let e = entry(slot, ix);
                // SAFETY: the same slot's buffer, still owned by `bufs` (see above).
                unsafe { sq.push(&e).expect("submission queue sized to the depth") };
                continue;
            }
            if stop {
                bufs.inflight -= 1;
                continue;
            }
            slot.offset = stream.next_offset();
            slot.op = stream.next_op(read_pct, copy_to.is_some());
            slot.issued = Instant::now();
            let e = entry(slot, ix);
            // SAFETY: the same slot's buffer, still owned by `bufs` (see above).
            unsafe { sq.push(&e).expect("submission queue sized to the depth") };
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(JobResult { tallies }),
    }
}

// ---------------------------------------------------------------------------------------
// Threads with pread/pwrite

/// `iodepth` threads per job, each with one synchronous I/O outstanding.
#[derive(Debug, Default)]
pub struct ThreadRunner;

impl Runner for ThreadRunner {
    fn name(&self) -> &'static str {
        "threads"
    }
    fn run(&self, jobs: &[JobSpec], clock: &Clock, counters: &[JobCounters]) -> Result<Vec<JobResult>, EngineError> {
        run_jobs(jobs, clock, counters, |job, clock, ctr| {
            let cursor = AtomicU64::new(0);
            let results: Vec<Result<Vec<Tally>, EngineError>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..job.iodepth.max(1))
                    .map(|t| {
                        let cursor = &cursor;
                        s.spawn(move || sync_worker(job, clock, ctr, u64::from(t), cursor))
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(EngineError::Panic("pread worker".into()))))
                    .collect()
            });
            let mut tallies = new_tallies(job);
            for r in results {
                for (acc, t) in tallies.iter_mut().zip(r?.iter()) {
                    acc.merge(t);
                }
            }
            Ok(JobResult { tallies })
        })
    }
}

fn pio(fd: RawFd, buf: &mut AlignedBuf, off: u64, write: bool) -> io::Result<usize> {
    loop {
        // SAFETY: buf is valid for its length; fd stays open for the run.
        let r = unsafe {
            if write {
                libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), off as libc::off_t)
            } else {
                libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off as libc::off_t)
            }
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

fn sync_worker(
    job: &JobSpec,
    clock: &Clock,
    ctr: &JobCounters,
    thread: u64,
    cursor: &AtomicU64,
) -> Result<Vec<Tally>, EngineError> {
    let mut stream = Stream::new(job, thread + 1);
    let mut tallies = new_tallies(job);
    let mut buf = AlignedBuf::new(job.bs as usize, job.mem_align);
    let (read_pct, copy_to) = match &job.kind {
        JobKind::Mix { read_pct } => (*read_pct, None),
        JobKind::Copy { to } => (100, Some(to)),
    };
    if read_pct < 100 {
        buf.fill_random(job.seed.wrapping_add(thread));
    }
    let nblocks = (job.region_len / job.bs).max(1);
    loop {
        let t0 = Instant::now();
        if clock.should_stop(t0) {
            break;
        }
        let off = if job.random {
            stream.next_offset()
        } else {
            job.region_start + (cursor.fetch_add(1, Ordering::Relaxed) % nblocks) * job.bs
        };
        let write = !stream.is_read(read_pct);
        let mut step = |fd: RawFd, path: &PathBuf, write: bool, side: usize, t0: Instant| {
            let opname = if write { "write" } else { "read" };
            match pio(fd, &mut buf, off, write) {
                Ok(n) if n as u64 == job.bs => {
                    let t1 = Instant::now();
                    ctr.add(side, job.bs);
                    if clock.in_window(t1) {
                        tallies[side].record(write, job.bs, t1 - t0);
                    }
                    Ok(t1)
                }
                Ok(n) => {
                    Err(EngineError::Short { path: path.clone(), op: opname, offset: off, len: job.bs, got: n as u64 })
                }
                Err(e) => Err(EngineError::Io {
                    path: path.clone(),
                    op: opname,
                    offset: off,
                    len: job.bs,
                    hint: hint_for(&e),
                    cause: e,
                }),
            }
        };
        let t1 = step(job.io.fd, &job.io.path, write, 0, t0)?;
        if let Some(to) = copy_to {
            step(to.fd, &to.path, true, 1, t1)?;
        }
    }
    Ok(tallies)
}

// ---------------------------------------------------------------------------------------
// Mock

/// Moves no data: each job "completes" I/Os at a configured rate and latency. For tests of
/// the measurement plumbing (timing, samples, reports) without devices.
#[derive(Debug, Clone)]
pub struct MockRunner {
    /// MB/s per target index; targets past the end use the last value.
    pub mb_s: Vec<f64>,
    /// Latency of every I/O [us].
    pub lat_us: f64,
}

impl Runner for MockRunner {
    fn name(&self) -> &'static str {
        "mock"
    }
    fn run(&self, jobs: &[JobSpec], clock: &Clock, counters: &[JobCounters]) -> Result<Vec<JobResult>, EngineError> {
        run_jobs(jobs, clock, counters, |job, clock, ctr| {
            let rate = |t: usize| self.mb_s.get(t).or(self.mb_s.last()).copied().unwrap_or(0.0);
            let read_pct = match &job.kind {
                JobKind::Mix { read_pct } => f64::from(*read_pct) / 100.0,
                JobKind::Copy { .. } => 1.0,
            };
            let mut tallies = new_tallies(job);
            let lat = Duration::from_nanos((self.lat_us * 1000.0) as u64);
            let mut last = clock.start;
            let mut carry = [0.0f64; 2];
            loop {
                std::thread::sleep(Duration::from_millis(5));
                let now = Instant::now();
                let until = now.min(clock.end);
                let dt = until.saturating_duration_since(last).as_secs_f64();
                let win = until.saturating_duration_since(last.max(clock.ramp_end)).as_secs_f64();
                for (side, t) in tallies.iter_mut().enumerate() {
                    let bps = rate(t.target) * 1e6;
                    carry[side] += bps * dt;
                    let ios = (carry[side] / job.bs as f64).floor() as u64;
                    carry[side] -= ios as f64 * job.bs as f64;
                    for _ in 0..ios {
                        ctr.add(side, job.bs);
                    }
                    let wios = (bps * win / job.bs as f64).round() as u64;
                    let reads = if side == 1 { 0 } else { (wios as f64 * read_pct).round() as u64 };
                    for k in 0..wios {
                        t.record(k >= reads, job.bs, lat);
                    }
                }
                last = until;
                if clock.should_stop(now) {
                    break;
                }
            }
            Ok(JobResult { tallies })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hint is chosen by the error number, and a knob reads in words unless the caller
    /// names it (the CLI passes its option names).
    #[test]
    fn hints_name_knobs_in_words_or_as_the_caller_names_them() {
        let io = |errno| EngineError::Io {
            path: "/dev/x".into(),
            op: "read",
            offset: 512,
            len: 4096,
            hint: hint_for(&io::Error::from_raw_os_error(errno)),
            cause: io::Error::from_raw_os_error(errno),
        };
        let e = io(libc::EINVAL);
        assert!(e.to_string().contains("(use a block size that is a multiple of the logical block size)"), "{e}");
        let named = e.message(&|k| if k == Knob::BlockSize { "a --bs".into() } else { k.words().into() });
        assert!(named.starts_with("/dev/x: read of 4096 bytes at offset 512 failed: "), "{named}");
        assert!(named.contains("(use a --bs that is a multiple"), "{named}");
        assert!(io(libc::EIO).to_string().ends_with("(check dmesg)"));
        assert!(!io(libc::EPERM).to_string().contains("; "), "no hint for EPERM");
        let short = EngineError::Short { path: "f".into(), op: "write", offset: 0, len: 8, got: 4 };
        assert!(short.to_string().contains("(lower the region, or check the device size)"), "{short}");
        let uring = EngineError::Uring(io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(uring.message(&|_| "X".into()).contains("; use X, or enable io_uring"), "{uring}");
    }

    fn job(random: bool) -> JobSpec {
        JobSpec {
            io: Side { target: 0, fd: -1, path: "x".into() },
            kind: JobKind::Mix { read_pct: 70 },
            bs: 4096,
            iodepth: 4,
            region_start: 0,
            region_len: 4096 * 10,
            random,
            seed: 7,
            mem_align: 4096,
        }
    }

    #[test]
    fn sequential_offsets_are_block_aligned_and_wrap() {
        let mut s = Stream::new(&job(false), 0);
        let offs: Vec<u64> = (0..12).map(|_| s.next_offset()).collect();
        assert_eq!(offs[0], 0);
        assert_eq!(offs[9], 9 * 4096);
        assert_eq!(offs[10], 0);
    }

    #[test]
    fn random_offsets_stay_in_the_region_and_repeat_with_the_seed() {
        let mut a = Stream::new(&job(true), 3);
        let mut b = Stream::new(&job(true), 3);
        for _ in 0..1000 {
            let o = a.next_offset();
            assert_eq!(o, b.next_offset());
            assert!(o.is_multiple_of(4096) && o < 4096 * 10);
        }
        let mut c = Stream::new(&job(true), 4);
        let differ = (0..100).any(|_| a.next_offset() != c.next_offset());
        assert!(differ, "streams must differ");
    }

    #[test]
    fn read_share_follows_rwmixread() {
        let mut s = Stream::new(&job(true), 0);
        let reads = (0..10000).filter(|_| s.is_read(70)).count();
        assert!((6700..7300).contains(&reads), "{reads}");
    }

    #[test]
    fn mock_runner_counts_only_the_window() {
        let stop = Arc::new(AtomicBool::new(false));
        let clock = Clock::new(Duration::from_millis(50), Duration::from_millis(200), stop);
        let counters = vec![JobCounters::default()];
        let r = MockRunner { mb_s: vec![100.0], lat_us: 50.0 }.run(&[job(true)], &clock, &counters).unwrap();
        let t = &r[0].tallies[0];
        let mb = (t.read_bytes + t.write_bytes) as f64 / 1e6;
        assert!((15.0..25.0).contains(&mb), "{mb}");
        assert!(counters[0].total_bytes() as f64 / 1e6 > mb);
    }
}
