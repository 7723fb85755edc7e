//! Running a plan: the engine, the ramp and measured window, a sampler for progress and
//! per-second rates, and the system counters around the run.

use super::plan::Plan;
use super::{EngineChoice, MeasureError, MeasureOptions, Progress};
use crate::engine::{Clock, EngineError, JobCounters, JobResult, Runner, ThreadRunner, UringRunner, uring_available};
use crate::sysstat::{self, DiskStat};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a run left: the engines' results, the samples and the counters around it.
pub(super) struct Ran {
    pub results: Vec<JobResult>,
    /// Per target, MB moved in each whole second of the measured window.
    pub samples: Vec<Vec<f64>>,
    pub counters: Vec<JobCounters>,
    pub disk0: HashMap<(u32, u32), (String, DiskStat)>,
    pub disk1: HashMap<(u32, u32), (String, DiskStat)>,
    pub cpu_s: f64,
    pub interrupted: bool,
    /// Length of the measured window [s].
    pub secs: f64,
}

/// The runner to use: the one given (tests), or the engine asked for.
pub(super) fn choose_runner<'a>(
    runner: Option<&'a dyn Runner>,
    o: &MeasureOptions,
    warnings: &mut Vec<String>,
) -> Result<&'a dyn Runner, MeasureError> {
    let w = &o.workload;
    let runner: &dyn Runner = match (runner, o.engine) {
        (Some(r), _) => r,
        (None, EngineChoice::Threads) => &ThreadRunner,
        (None, EngineChoice::IoUring) => {
            uring_available().map_err(EngineError::Uring)?;
            &UringRunner
        }
        (None, EngineChoice::Auto) => match uring_available() {
            Ok(()) => &UringRunner,
            Err(e) => {
                warnings.push(format!(
                    "io_uring is unavailable ({e}); ran {} threads per job with pread/pwrite instead, so latencies include thread wake-ups. Enable io_uring (sysctl kernel.io_uring_disabled=0, or the container's seccomp profile) for fio-like numbers",
                    w.iodepth
                ));
                &ThreadRunner
            }
        },
    };
    Ok(runner)
}

/// Bytes moved per target so far.
pub(super) fn per_target(counters: &[JobCounters], sides: &[[usize; 2]], ntargets: usize) -> Vec<u64> {
    let mut v = vec![0u64; ntargets];
    for (c, s) in counters.iter().zip(sides) {
        v[s[0]] += c.bytes[0].load(Ordering::Relaxed);
        if s[1] != s[0] {
            v[s[1]] += c.bytes[1].load(Ordering::Relaxed);
        }
    }
    v
}

/// Runs the jobs with a sampler for progress and per-second rates.
pub(super) fn run(
    o: &MeasureOptions,
    plan: &Plan,
    runner: &dyn Runner,
    progress: &(dyn Fn(&Progress) + Sync),
    point: Option<(usize, usize)>,
) -> Result<Ran, MeasureError> {
    let jobs = &plan.jobs;
    let counters: Vec<JobCounters> = jobs.iter().map(|_| JobCounters::default()).collect();
    let ntargets = plan.opened.len();
    let per_target = |counters: &[JobCounters]| per_target(counters, &plan.sides, ntargets);
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
        let r = runner.run(jobs, &clock, &counters);
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
    Ok(Ran { results, samples, counters, disk0, disk1, cpu_s, interrupted, secs })
}
