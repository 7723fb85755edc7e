//! One measurement: a workload run as real direct I/O on its targets, all at once, and
//! reported in the simulator's [`Report`] (`kind: measured`).
//!
//! Steps: select targets (drives by `active`/`drives`, or the ends of `copy`), pass every
//! written target through the [`safety`] gate, open (and lay out) targets, check alignment,
//! build one job per target and `numjobs`, run them with a ramp and a measured window while
//! a sampler takes per-second rates, then compare `/proc/diskstats` with our own byte
//! counts and write warnings that say what to do.

use crate::engine::{
    Clock, EngineError, JobCounters, JobKind, JobResult, JobSpec, Runner, Side, Tally, ThreadRunner, UringRunner,
    new_hist, uring_available,
};
use crate::safety::{self, Refusal, RefusalKind};
use crate::sysstat;
use crate::target::{self, OpenMode, Opened, TargetError};
use hdrhistogram::Histogram;
use iopath_model::report::{Bottleneck, Cost, DriveResult, Latency, Report, ReportKind, Sweep, SweepPoint, Total};
use iopath_model::workload::{Targets, Workload};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A target the workload may run on: a drive id and its file or block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    pub id: String,
    pub path: PathBuf,
}

/// Which engine to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineChoice {
    /// io_uring, or threads when io_uring cannot be set up (said in the warnings).
    #[default]
    Auto,
    IoUring,
    Threads,
}

/// Everything a measurement needs, as plain values (no clap here).
#[derive(Debug, Clone)]
pub struct MeasureOptions {
    /// Name for the report's `topology` field.
    pub topology: String,
    /// Every target the workload may name, in order (`active` takes the first N).
    pub targets: Vec<TargetSpec>,
    pub workload: Workload,
    pub allow_write: bool,
    pub destroy_data_on: Vec<PathBuf>,
    /// Size of file targets this run creates [bytes].
    pub size: u64,
    pub engine: EngineChoice,
    pub runtime: Duration,
    pub ramp: Duration,
    /// Set by Ctrl-C: stop now and report what was measured (`partial: true`).
    pub stop: Arc<AtomicBool>,
}

/// What the sampler reports while a run goes on.
#[derive(Debug, Clone)]
pub struct Progress {
    pub elapsed: Duration,
    pub total: Duration,
    pub in_ramp: bool,
    /// Total MB/s over the last sample.
    pub mb_s: f64,
    /// When sweeping, the point (1-based) and the number of points.
    pub point: Option<(usize, usize)>,
}

/// Why a measurement could not run.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{0}")]
    Usage(String),
}

impl MeasureError {
    /// 2 for refusals and bad input, 1 for failures while running, 130 for a Ctrl-C that
    /// stopped the run before anything was measured (a layout).
    pub fn exit_code(&self) -> u8 {
        match self {
            MeasureError::Refused(_) | MeasureError::Usage(_) => 2,
            MeasureError::Target(TargetError::Interrupted { .. }) => 130,
            MeasureError::Target(TargetError::Open { .. } | TargetError::Io { .. }) => 1,
            MeasureError::Target(_) => 2,
            MeasureError::Engine(_) => 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Mixed or pure I/O on this target; `read_pct` of the I/Os are reads.
    Mix {
        read_pct: u8,
    },
    CopySource,
    CopyDest,
}

/// Picks the targets a workload runs on.
pub fn select_targets(w: &Workload, pool: &[TargetSpec]) -> Result<Vec<TargetSpec>, MeasureError> {
    let find = |id: &str| {
        pool.iter().find(|t| t.id == id).cloned().ok_or_else(|| {
            let ids: Vec<&str> = pool.iter().map(|t| t.id.as_str()).collect();
            MeasureError::Usage(format!(
                "no target {id:?}; the targets are {}",
                if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
            ))
        })
    };
    if !w.copies.is_empty() {
        let mut v: Vec<TargetSpec> = Vec::new();
        for c in &w.copies {
            for id in [&c.from, &c.to] {
                let t = find(id)?;
                if !v.contains(&t) {
                    v.push(t);
                }
            }
        }
        return Ok(v);
    }
    let v = match &w.targets {
        Targets::All => pool.to_vec(),
        Targets::Active(n) if *n > pool.len() => {
            return Err(MeasureError::Usage(format!("--active {n}: there are only {} targets", pool.len())));
        }
        Targets::Active(n) => pool[..*n].to_vec(),
        Targets::Drives(ids) => ids.iter().map(|i| find(i)).collect::<Result<_, _>>()?,
    };
    if v.is_empty() {
        return Err(MeasureError::Usage(
            "no targets: name a topology whose drives have dev = \"/dev/...\", or give --target PATH".into(),
        ));
    }
    Ok(v)
}

fn roles(w: &Workload, targets: &[TargetSpec]) -> Vec<Role> {
    targets
        .iter()
        .map(|t| {
            if w.copies.is_empty() {
                Role::Mix { read_pct: (w.rw.read_share(w.rwmixread) * 100.0).round() as u8 }
            } else if w.copies.iter().any(|c| c.to == t.id) {
                Role::CopyDest
            } else {
                Role::CopySource
            }
        })
        .collect()
}

fn writes(r: Role) -> bool {
    match r {
        Role::Mix { read_pct } => read_pct < 100,
        Role::CopySource => false,
        Role::CopyDest => true,
    }
}

fn is_block(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

/// Opens a target the gate cleared for writing through the gate's own descriptor, and
/// says what `--destroy-data-on` let the run overwrite.
fn adopt_cleared(p: &Path, cleared: safety::Cleared, warnings: &mut Vec<String>) -> Result<Opened, TargetError> {
    if !cleared.destroyed.is_empty() {
        warnings.push(format!(
            "{}: overwrote data as --destroy-data-on allowed ({})",
            p.display(),
            cleared.destroyed.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("; ")
        ));
    }
    let meta =
        std::fs::metadata(p).map_err(|e| TargetError::Io { path: p.to_path_buf(), what: "stat".into(), cause: e })?;
    target::adopt(p, cleared.file, &meta, cleared.buffered)
}

/// Opens every target; block devices and existing files that are written go through the
/// safety gate first (file targets this run lays out are its own, and are only locked).
fn open_all(
    o: &MeasureOptions,
    targets: &[TargetSpec],
    roles: &[Role],
    warnings: &mut Vec<String>,
) -> Result<Vec<Opened>, MeasureError> {
    let write_paths: Vec<PathBuf> =
        targets.iter().zip(roles).filter(|(_, r)| writes(**r)).map(|(t, _)| t.path.clone()).collect();
    if !write_paths.is_empty() && !o.allow_write {
        let what = if o.workload.copies.is_empty() { format!("rw={}", o.workload.rw) } else { "copy".to_string() };
        return Err(Refusal {
            device: write_paths[0].clone(),
            kind: RefusalKind::NotAllowed,
            reason: format!("the workload ({what}) writes, and iopath is read-only by default"),
            found: format!(
                "writes would go to {}",
                write_paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
            fix: "writing destroys the data there; add --allow-write if that is what you want".into(),
        }
        .into());
    }
    safety::check_destroy_flags(&o.destroy_data_on, &write_paths, o.allow_write)?;
    let sys = safety::System::live();
    let mut out = Vec::new();
    for (t, r) in targets.iter().zip(roles) {
        let w = writes(*r);
        let p = &t.path;
        let opened = if is_block(p) {
            if w {
                adopt_cleared(p, safety::check_block_write(&sys, p, &o.destroy_data_on)?, warnings)?
            } else {
                let op = target::open_target(p, OpenMode { write: false, exclusive: false })?;
                let mounts = safety::parse_mountinfo(&sys.mountinfo);
                if let Some(m) = mounts.iter().find(|m| safety::depends_on(&sys.sysfs, m.dev, op.dev, 0)) {
                    warnings.push(format!(
                        "{}: is mounted on {}; the filesystem's own I/O may share the device during the run. Unmount it, or read a device nobody uses, for clean numbers",
                        p.display(),
                        m.mount_point
                    ));
                }
                op
            }
        } else {
            let mut created = false;
            if !p.exists() {
                if p.parent() == Some(Path::new("/dev")) {
                    return Err(MeasureError::Usage(format!(
                        "{}: no such device; check the name with lsblk",
                        p.display()
                    )));
                }
                for s in target::stale_layouts(p) {
                    warnings.push(format!(
                        "{}: an unfinished layout of this target, left by a run that was killed; it was not used (delete it to free the space)",
                        s.display()
                    ));
                }
                target::create_file_target(p, o.size, o.workload.seed, Some(&o.stop))?;
                created = true;
            } else if target::is_sparse(p) {
                warnings.push(format!(
                    "{}: the file has holes; reads of holes never reach the device. Write it fully first (e.g. with dd oflag=direct), or delete it and let iopath create it",
                    p.display()
                ));
            }
            let mut op = if w {
                adopt_cleared(p, safety::check_file_write(&sys, p, &o.destroy_data_on, created)?, warnings)?
            } else {
                target::open_target(p, OpenMode { write: false, exclusive: false })?
            };
            op.created = created;
            op
        };
        if opened.buffered {
            warnings.push(format!(
                "{}: the filesystem refused O_DIRECT (or reports no direct-I/O support), so the page cache is in the way and numbers may show RAM speed; put the file on ext4/xfs or name a block device",
                p.display()
            ));
        }
        out.push(opened);
    }
    Ok(out)
}

fn latency(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    Latency {
        mean: h.mean() / 1000.0,
        p50: h.value_at_quantile(0.5) as f64 / 1000.0,
        p99: h.value_at_quantile(0.99) as f64 / 1000.0,
        max: h.max() as f64 / 1000.0,
    }
}

/// Coefficient of variation of samples (std / mean); `None` with fewer than 3 samples.
pub fn coefficient_of_variation(samples: &[f64]) -> Option<f64> {
    if samples.len() < 3 {
        return None;
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

/// Runs one measurement.
pub fn measure(o: &MeasureOptions, progress: &(dyn Fn(&Progress) + Sync)) -> Result<Report, MeasureError> {
    measure_with(o, None, progress)
}

/// Runs one measurement with a given runner (tests pass a [`crate::engine::MockRunner`]).
pub fn measure_with(
    o: &MeasureOptions,
    runner: Option<&dyn Runner>,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Report, MeasureError> {
    measure_point(o, runner, progress, None)
}

fn measure_point(
    o: &MeasureOptions,
    runner: Option<&dyn Runner>,
    progress: &(dyn Fn(&Progress) + Sync),
    point: Option<(usize, usize)>,
) -> Result<Report, MeasureError> {
    let wall0 = Instant::now();
    let w = &o.workload;
    let targets = select_targets(w, &o.targets)?;
    let roles = roles(w, &targets);
    let mut warnings = Vec::new();
    let opened = open_all(o, &targets, &roles, &mut warnings)?;
    let bs = w.bs.get();

    // Alignment and regions.
    let mut regions = Vec::new();
    for t in &opened {
        let a = u64::from(t.align.offset);
        if !t.buffered && !bs.is_multiple_of(a) {
            return Err(TargetError::Invalid {
                path: t.path.clone(),
                message: format!(
                    "--bs {bs} is not a multiple of its direct-I/O alignment of {a} bytes (from {}); use --bs {}k or larger",
                    t.align.source,
                    a.div_ceil(1024).max(4)
                ),
            }
            .into());
        }
        let len = ((t.size as f64 * w.region) as u64 / bs) * bs;
        if len < bs {
            return Err(TargetError::Invalid {
                path: t.path.clone(),
                message: format!(
                    "the region ({} of {} bytes) holds no block of {bs} bytes; raise --region or --size",
                    w.region, t.size
                ),
            }
            .into());
        }
        regions.push(len);
    }

    // Jobs.
    let mut jobs = Vec::new();
    let mut sides: Vec<[usize; 2]> = Vec::new();
    for (i, (t, role)) in opened.iter().zip(&roles).enumerate() {
        let side = Side { target: i, fd: t.fd(), path: t.path.clone() };
        let mem_align = (t.align.mem as usize).max(4096);
        let (kind, region_len, to) = match role {
            Role::Mix { read_pct } => (JobKind::Mix { read_pct: *read_pct }, regions[i], i),
            Role::CopyDest => continue,
            Role::CopySource => {
                for c in w.copies.iter().filter(|c| c.from == targets[i].id) {
                    let j = targets.iter().position(|x| x.id == c.to).expect("copy destination selected");
                    for k in 0..w.numjobs {
                        jobs.push(JobSpec {
                            io: side.clone(),
                            kind: JobKind::Copy {
                                to: Side { target: j, fd: opened[j].fd(), path: opened[j].path.clone() },
                            },
                            bs,
                            iodepth: w.iodepth,
                            region_start: 0,
                            region_len: regions[i].min(regions[j]),
                            random: false,
                            seed: job_seed(w.seed, i, k),
                            mem_align: mem_align.max(opened[j].align.mem as usize),
                        });
                        sides.push([i, j]);
                    }
                }
                continue;
            }
        };
        for k in 0..w.numjobs {
            jobs.push(JobSpec {
                io: side.clone(),
                kind: kind.clone(),
                bs,
                iodepth: w.iodepth,
                region_start: 0,
                region_len,
                random: w.rw.is_random(),
                seed: job_seed(w.seed, i, k),
                mem_align,
            });
            sides.push([i, to]);
        }
    }

    // Engine.
    let uring = UringRunner;
    let threads = ThreadRunner;
    let runner: &dyn Runner = match (runner, o.engine) {
        (Some(r), _) => r,
        (None, EngineChoice::Threads) => &threads,
        (None, EngineChoice::IoUring) => {
            uring_available().map_err(EngineError::Uring)?;
            &uring
        }
        (None, EngineChoice::Auto) => match uring_available() {
            Ok(()) => &uring,
            Err(e) => {
                warnings.push(format!(
                    "io_uring is unavailable ({e}); ran {} threads per job with pread/pwrite instead, so latencies include thread wake-ups. Enable io_uring (sysctl kernel.io_uring_disabled=0, or the container's seccomp profile) for fio-like numbers",
                    w.iodepth
                ));
                &threads
            }
        },
    };

    // Run, with a sampler for progress and per-second rates.
    let counters: Vec<JobCounters> = jobs.iter().map(|_| JobCounters::default()).collect();
    let ntargets = opened.len();
    let per_target = |counters: &[JobCounters]| -> Vec<u64> {
        let mut v = vec![0u64; ntargets];
        for (c, s) in counters.iter().zip(&sides) {
            v[s[0]] += c.bytes[0].load(Ordering::Relaxed);
            if s[1] != s[0] {
                v[s[1]] += c.bytes[1].load(Ordering::Relaxed);
            }
        }
        v
    };
    let disk0 = sysstat::diskstats();
    let cpu0 = sysstat::cpu_seconds();
    let clock = Clock::new(o.ramp, o.runtime, o.stop.clone());
    let done = AtomicBool::new(false);
    let (results, samples, finished) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut samples: Vec<Vec<f64>> = vec![Vec::new(); ntargets];
            let mut last_sec = per_target(&counters);
            let mut last_tick = (Instant::now(), last_sec.iter().sum::<u64>());
            let mut next_sec = clock.ramp_end + Duration::from_secs(1);
            let total = o.ramp + o.runtime;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                let now = Instant::now();
                if now < clock.ramp_end {
                    last_sec = per_target(&counters);
                } else if now >= next_sec && next_sec <= clock.end {
                    let cur = per_target(&counters);
                    for (k, s) in samples.iter_mut().enumerate() {
                        s.push(cur[k].saturating_sub(last_sec[k]) as f64 / 1e6);
                    }
                    last_sec = cur;
                    next_sec += Duration::from_secs(1);
                }
                if now.duration_since(last_tick.0) >= Duration::from_millis(250) {
                    let b: u64 = counters.iter().map(|c| c.total_bytes()).sum();
                    let dt = now.duration_since(last_tick.0).as_secs_f64();
                    progress(&Progress {
                        elapsed: now.duration_since(clock.start).min(total),
                        total,
                        in_ramp: now < clock.ramp_end,
                        mb_s: b.saturating_sub(last_tick.1) as f64 / dt / 1e6,
                        point,
                    });
                    last_tick = (now, b);
                }
            }
            samples
        });
        let r = runner.run(&jobs, &clock, &counters);
        let finished = Instant::now();
        done.store(true, Ordering::Relaxed);
        let samples = sampler.join().unwrap_or_default();
        (r, samples, finished)
    });
    let results: Vec<JobResult> = results?;
    let cpu_s = sysstat::cpu_seconds() - cpu0;
    let disk1 = sysstat::diskstats();
    let interrupted = o.stop.load(Ordering::Relaxed);
    let window_end = finished.min(clock.end);
    let secs = window_end.saturating_duration_since(clock.ramp_end).as_secs_f64();
    if interrupted && secs <= 0.0 {
        warnings.push("stopped during the ramp: nothing was measured; let the run pass its ramp".into());
    }

    // Per target.
    let mut tallies: Vec<Tally> = (0..ntargets).map(Tally::new).collect();
    for r in &results {
        for t in &r.tallies {
            tallies[t.target].merge(t);
        }
    }
    let rate = |b: u64| if secs > 0.0 { b as f64 / secs / 1e6 } else { 0.0 };
    let mut total_hist = new_hist();
    let mut drives = Vec::new();
    let mut total = Total::default();
    let mut ios = 0;
    for (t, spec) in tallies.iter().zip(&targets) {
        let _ = total_hist.add(&t.hist);
        let n = t.read_ios + t.write_ios;
        ios += n;
        let d = DriveResult {
            id: spec.id.clone(),
            read_mb_s: rate(t.read_bytes),
            write_mb_s: rate(t.write_bytes),
            iops: if secs > 0.0 { n as f64 / secs } else { 0.0 },
            lat_us: latency(&t.hist),
            read_bytes: t.read_bytes,
            write_bytes: t.write_bytes,
            ios: n,
        };
        total.read_mb_s += d.read_mb_s;
        total.write_mb_s += d.write_mb_s;
        total.iops += d.iops;
        drives.push(d);
    }
    total.mb_s = total.read_mb_s + total.write_mb_s;
    total.lat_us = latency(&total_hist);

    // Warnings: variation, other I/O on the devices.
    for (k, s) in samples.iter().enumerate() {
        if let Some(cv) = coefficient_of_variation(s)
            && cv > 0.05
        {
            warnings.push(format!(
                "{}: throughput varied by {:.1}% from second to second (coefficient of variation of {} one-second samples); look for other load, caching or thermal throttling, and measure longer (--runtime 30s)",
                targets[k].id,
                cv * 100.0,
                s.len()
            ));
        }
    }
    let ours = per_target(&counters);
    let mut by_dev: Vec<((u32, u32), u64, Vec<String>)> = Vec::new();
    for (k, t) in opened.iter().enumerate() {
        match by_dev.iter_mut().find(|e| e.0 == t.dev) {
            Some(e) => {
                e.1 += ours[k];
                e.2.push(targets[k].id.clone());
            }
            None => by_dev.push((t.dev, ours[k], vec![targets[k].id.clone()])),
        }
    }
    for (dev, our_bytes, ids) in by_dev {
        if let (Some((name, a)), Some((_, b))) = (disk0.get(&dev), disk1.get(&dev)) {
            let moved = a.bytes_until(b);
            if moved as f64 > our_bytes as f64 * 1.10 + 8e6 {
                warnings.push(format!(
                    "{name} (holding {}) moved {:.1} MB during the run while iopath moved {:.1} MB: other I/O was running on the device. Stop it or use an idle device, then measure again",
                    ids.join(", "),
                    moved as f64 / 1e6,
                    our_bytes as f64 / 1e6
                ));
            }
        }
    }
    if interrupted {
        warnings.push(format!(
            "interrupted: the numbers cover {secs:.1} s of the {:.1} s asked for",
            o.runtime.as_secs_f64()
        ));
    }

    let mut wl = serde_json::to_value(w).unwrap_or(serde_json::Value::Null);
    if let Some(obj) = wl.as_object_mut() {
        obj.insert("engine".into(), runner.name().into());
        obj.insert("runtime_s".into(), o.runtime.as_secs_f64().into());
        obj.insert("ramp_s".into(), o.ramp.as_secs_f64().into());
        obj.insert(
            "targets".into(),
            serde_json::Value::Array(
                targets.iter().map(|t| serde_json::json!({"id": t.id, "path": t.path.display().to_string()})).collect(),
            ),
        );
    }
    drop(opened);
    Ok(Report {
        schema_version: iopath_model::report::SCHEMA_VERSION,
        kind: ReportKind::Measured,
        topology: o.topology.clone(),
        workload: wl,
        total,
        drives,
        links: Vec::new(),
        bottleneck: Bottleneck::default(),
        cost: Cost { events: 0, ios, wall_s: wall0.elapsed().as_secs_f64(), sim_s: secs, cpu_s: Some(cpu_s) },
        partial: interrupted,
        covered_s: None,
        warnings,
        spread: None,
    })
}

fn job_seed(seed: u64, target: usize, job: u32) -> u64 {
    seed.wrapping_mul(0x100_0000_01b3)
        ^ (target as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(job).rotate_left(32)
}

/// The ramp of the published tests: the first drive alone, then the first two at once, ...,
/// up to `to` at once. Stops early (marked partial) on Ctrl-C; a failed point is recorded
/// and the ramp goes on.
pub fn measure_active_ramp(
    o: &MeasureOptions,
    from: usize,
    to: usize,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Sweep, MeasureError> {
    measure_active_ramp_with(o, None, from, to, progress)
}

pub fn measure_active_ramp_with(
    o: &MeasureOptions,
    runner: Option<&dyn Runner>,
    from: usize,
    to: usize,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Sweep, MeasureError> {
    if from == 0 || from > to {
        return Err(MeasureError::Usage(format!("--active {from}..{to}: expected a range like 1..4")));
    }
    if to > o.targets.len() {
        return Err(MeasureError::Usage(format!("--active {from}..{to}: there are only {} targets", o.targets.len())));
    }
    let mut points = Vec::new();
    let mut partial = false;
    let n = to - from + 1;
    for (k, active) in (from..=to).enumerate() {
        if o.stop.load(Ordering::Relaxed) {
            partial = true;
            break;
        }
        let mut oo = o.clone();
        oo.workload.targets = Targets::Active(active);
        match measure_point(&oo, runner, progress, Some((k + 1, n))) {
            Ok(r) => {
                partial |= r.partial;
                points.push(SweepPoint {
                    param: "active".into(),
                    value: active.into(),
                    param2: None,
                    value2: None,
                    report: Some(r),
                    error: None,
                    bound_mb_s: None,
                });
            }
            // Refusals and bad input are the same at every point, and a Ctrl-C during a
            // layout ends the run: stop at once.
            Err(e) if matches!(e.exit_code(), 2 | 130) => return Err(e),
            Err(e) => points.push(SweepPoint {
                param: "active".into(),
                value: active.into(),
                param2: None,
                value2: None,
                report: None,
                error: Some(e.to_string()),
                bound_mb_s: None,
            }),
        }
    }
    Ok(Sweep { schema_version: iopath_model::report::SCHEMA_VERSION, topology: o.topology.clone(), points, partial })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::WorkloadSpec;

    #[test]
    fn cv_of_steady_and_varying_samples() {
        assert!(coefficient_of_variation(&[100.0, 100.0, 100.0]).unwrap() < 1e-9);
        assert!(coefficient_of_variation(&[50.0, 150.0, 100.0]).unwrap() > 0.4);
        assert_eq!(coefficient_of_variation(&[1.0, 2.0]), None);
    }

    fn pool() -> Vec<TargetSpec> {
        ["a", "b", "c"]
            .iter()
            .map(|i| TargetSpec { id: i.to_string(), path: PathBuf::from(format!("/nonexistent/{i}")) })
            .collect()
    }

    #[test]
    fn selects_active_drives_and_copy_ends() {
        let w = WorkloadSpec { active: Some(2), ..Default::default() }.resolve().unwrap();
        let s = select_targets(&w, &pool()).unwrap();
        assert_eq!(s.len(), 2);
        let w = WorkloadSpec { copy: Some(vec!["c:a".into()]), ..Default::default() }.resolve().unwrap();
        let s = select_targets(&w, &pool()).unwrap();
        assert_eq!(s[0].id, "c");
        assert_eq!(roles(&w, &s), vec![Role::CopySource, Role::CopyDest]);
        let w = WorkloadSpec { drives: Some(vec!["zz".into()]), ..Default::default() }.resolve().unwrap();
        let e = select_targets(&w, &pool()).unwrap_err();
        assert!(e.to_string().contains("a, b, c"), "{e}");
    }
}
