//! Wall-time estimates before long runs: a short pilot of the run itself measures the wall
//! time the engine needs per simulated second on this topology and workload (it varies
//! 200-fold: 14 M events/s for one HDD, 77 k events/s for 1,024 HDDs sharing expanders,
//! where every transfer start re-solves a 256-drive max-min), and a run estimated to take
//! longer than [`WARN_AFTER_S`] gets a warning with the estimate and how to shorten it.
//!
//! A single run is timed while it goes on ([`watch`]): once it has taken [`PILOT_WALL`], the
//! simulated time it reached gives the estimate, and the run continues. Work of many runs
//! (replications, sweeps, the report page) is timed by a pilot: the costliest run itself,
//! stopped after [`PILOT_WALL`]; a run that finishes within it is simply the result, and
//! Ctrl-C during it is honoured.
use super::{interrupt_flag, wall_clock};
use iopath_model::report::Report;
use iopath_model::{Topology, Workload};
use iopath_sim::{SimError, SimOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Wall time a pilot runs at most before it is stopped and extrapolated.
pub const PILOT_WALL: Duration = Duration::from_millis(300);
/// Runs estimated to take longer than this [s] are announced with a warning.
pub const WARN_AFTER_S: f64 = 60.0;

/// What a pilot found.
pub enum Pilot {
    /// The run finished (or Ctrl-C stopped it) within the pilot: this is its report.
    Done(Box<Report>),
    /// Stopped after [`PILOT_WALL`]: the run's simulated time and the measured wall seconds
    /// per simulated second.
    Measured { sim_s: f64, wall_per_sim_s: f64 },
}

/// Runs `w` on `t` for at most [`PILOT_WALL`] of wall time (Ctrl-C stops it too).
pub fn pilot(t: &Topology, w: &Workload) -> Result<Pilot, SimError> {
    let stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let clock = wall_clock();
    let user = interrupt_flag();
    let report = std::thread::scope(|s| {
        s.spawn(|| {
            let t0 = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if t0.elapsed() >= PILOT_WALL || user.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let r = iopath_sim::simulate(
            t,
            w,
            &SimOptions { cancel: Some(&stop), wall_clock: Some(&clock), ..Default::default() },
        );
        done.store(true, Ordering::Relaxed);
        r
    })?;
    let sim_s = iopath_sim::planned_sim_time(t, w)?.map(|d| d.secs_f64());
    match (report.partial && !user.load(Ordering::Relaxed), sim_s, report.covered_s) {
        (true, Some(sim_s), Some(covered)) if covered > 0.0 => {
            Ok(Pilot::Measured { sim_s, wall_per_sim_s: report.cost.wall_s / covered })
        }
        // A region-covering run has no planned length, and a pilot that covered nothing
        // measured nothing: no estimate, the run just goes ahead.
        (true, _, _) => Ok(Pilot::Measured { sim_s: 0.0, wall_per_sim_s: 0.0 }),
        (false, _, _) => Ok(Pilot::Done(Box::new(report))),
    }
}

/// Runs `run` (one simulation, given where to publish its progress) while a watcher thread
/// times it: after [`PILOT_WALL`] of wall time, the simulated time it reached of `sim_s`
/// (`None`: a run whose length is not known in advance) gives the estimate, and a run that
/// will take longer than [`WARN_AFTER_S`] gets `warn` called with the warning, once. Nothing is
/// simulated twice.
pub fn watch<R>(what: &str, sim_s: Option<f64>, warn: impl Fn(&str) + Sync, run: impl FnOnce(&AtomicU64) -> R) -> R {
    let progress = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let t0 = Instant::now();
            while !done.load(Ordering::Relaxed) && t0.elapsed() < PILOT_WALL {
                std::thread::sleep(Duration::from_millis(5));
            }
            let reached = progress.load(Ordering::Relaxed) as f64 * 1e-9;
            if done.load(Ordering::Relaxed) || reached <= 0.0 {
                return;
            }
            if let Some(sim_s) = sim_s
                && let Some(msg) = warning(what, sim_s, t0.elapsed().as_secs_f64() / reached, 1.0)
            {
                warn(&msg);
            }
        });
        let r = run(&progress);
        done.store(true, Ordering::Relaxed);
        r
    })
}

impl Pilot {
    /// The run's simulated seconds and wall seconds per simulated second, as measured.
    pub fn rate(&self) -> (f64, f64) {
        match self {
            Pilot::Done(r) => {
                let sim = r.cost.sim_s.max(1e-9);
                (sim, r.cost.wall_s / sim)
            }
            Pilot::Measured { sim_s, wall_per_sim_s } => (*sim_s, *wall_per_sim_s),
        }
    }
}

/// `3 min 20 s`, `45 s`, `2 h 5 min`.
pub fn fmt_wall(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// The warning for a run of `runs` pilots' worth of work on the engine's worker threads, if
/// it will take longer than [`WARN_AFTER_S`]; `what` names the run ("this run", "this sweep
/// of 12 points").
pub fn warning(what: &str, sim_s: f64, wall_per_sim_s: f64, runs: f64) -> Option<String> {
    let threads = rayon::current_num_threads().max(1) as f64;
    let parallel = runs.min(threads).max(1.0);
    let wall = sim_s * wall_per_sim_s * runs / parallel;
    if wall.is_nan() || wall <= WARN_AFTER_S {
        return None;
    }
    // The runtime that would bring it under a minute (ramp included in the 10% rule).
    let per_s = wall / sim_s.max(1e-9);
    let short = (WARN_AFTER_S / per_s / 1.1).max(0.001);
    Some(format!(
        "{what} will take about {} of wall time ({:.1} s of simulated time at {:.2} s of wall time per \
         simulated second, measured on its first {} ms{}); to shorten it, lower --runtime \
         (e.g. --runtime {}) or use fewer drives (--active N)",
        fmt_wall(wall),
        sim_s,
        wall_per_sim_s,
        PILOT_WALL.as_millis(),
        if runs > 1.0 { format!(", x{runs:.0} runs on {threads:.0} threads") } else { String::new() },
        fmt_runtime(short)
    ))
}

fn fmt_runtime(s: f64) -> String {
    if s >= 1.0 { format!("{}s", s.floor()) } else { format!("{}ms", (s * 1000.0).floor().max(1.0)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run that has covered 1 ms of a 100 s plan after 300 ms of wall time is ~8 hours
    /// long: the watcher warns once, while the run goes on; one that ends sooner is not timed.
    #[test]
    fn a_watched_run_is_timed_while_it_goes_on() {
        use std::sync::Mutex;
        let said = Mutex::new(Vec::<String>::new());
        let warn = |m: &str| said.lock().unwrap().push(m.to_string());
        let out = watch("this run", Some(100.0), warn, |p| {
            p.store(1_000_000, Ordering::Relaxed);
            std::thread::sleep(PILOT_WALL + Duration::from_millis(200));
            7
        });
        assert_eq!(out, 7, "the run's own result comes back");
        let said = said.into_inner().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("this run will take about") && said[0].contains("--runtime"), "{said:?}");
        let quiet = Mutex::new(0);
        watch("this run", Some(100.0), |_| *quiet.lock().unwrap() += 1, |p| p.store(1, Ordering::Relaxed));
        assert_eq!(*quiet.lock().unwrap(), 0, "a run that ends within the pilot time is not timed");
    }

    #[test]
    fn long_runs_warn_and_short_ones_do_not() {
        assert!(warning("this run", 2.0, 1.0, 1.0).is_none());
        let w = warning("this run", 22.0, 11.0, 1.0).expect("4 minutes");
        assert!(w.contains("about 4 min 2 s"), "{w}");
        assert!(w.contains("--runtime 4s"), "{w}");
        // Many runs share the threads.
        assert!(warning("this sweep", 2.0, 1.0, 1000.0).is_some());
        assert_eq!(fmt_wall(59.4), "59 s");
        assert_eq!(fmt_wall(7322.0), "2 h 2 min");
    }
}
