//! One measurement: a workload run as real direct I/O on its targets, all at once, and
//! reported in the simulator's [`Report`] (`kind: measured`).
//!
//! By concern: [`plan`] selects targets (drives by `active`/`drives`, or the ends of
//! `copy`), passes every written target through the [`safety`](crate::safety) gate, opens
//! (and lays out) targets, checks alignment and builds one job per target and `numjobs`;
//! [`run`] picks the engine and runs the jobs with a ramp and a measured window while a
//! sampler takes per-second rates; [`summary`] turns the tallies into the report, compares
//! `/proc/diskstats` with our own byte counts and writes warnings that say what to do.

mod plan;
mod run;
mod summary;
pub mod surface;

use crate::engine::{EngineError, Runner};
use crate::safety::Refusal;
use crate::target::TargetError;
use iopath_model::report::{Report, Sweep, SweepPoint};
use iopath_model::workload::{Targets, Workload};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use plan::select_targets;
pub use summary::coefficient_of_variation;

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

/// Where each target's region starts (fio's `offset`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Offset {
    /// At this byte, a multiple of the targets' direct-I/O alignment.
    Bytes(u64),
    /// At this share of each target's size, in [0, 1], aligned up to the block size.
    Fraction(f64),
    /// At the start.
    #[default]
    Start,
}

impl Offset {
    /// The first byte of a region in a target of `size` bytes with blocks of `bs` bytes.
    pub fn start(self, size: u64, bs: u64) -> u64 {
        match self {
            Offset::Bytes(b) => b,
            Offset::Fraction(f) => ((size as f64 * f.clamp(0.0, 1.0)) as u64).div_ceil(bs.max(1)) * bs.max(1),
            Offset::Start => 0,
        }
    }
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
    /// Where each target's region starts.
    pub offset: Offset,
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
    /// The workload's drives or copies do not fit the targets.
    #[error(transparent)]
    Bind(#[from] iopath_model::bind::BindError),
    /// An `active` ramp that is not a range from at least 1.
    #[error("active drives {from}..{to}: expected a range like 1..4")]
    ActiveRange { from: usize, to: usize },
    /// An `active` ramp past the number of targets.
    #[error("active drives {from}..{to}: there are only {targets} targets")]
    ActiveBeyondTargets { from: usize, to: usize, targets: usize },
    /// The workload selects no target.
    #[error("no targets: name a topology whose drives have dev = \"/dev/...\", or give a target path")]
    NoTargets,
    /// A target under /dev that does not exist (never created as a file).
    #[error("{}: no such device; check the name with lsblk", path.display())]
    NoSuchDevice { path: PathBuf },
    /// The block size is not a multiple of a target's direct-I/O alignment.
    #[error("{}: block size {bs} is not a multiple of its direct-I/O alignment of {align} bytes (from {from}); use a block size of {}k or larger", path.display(), min_kib(*align))]
    Misaligned { path: PathBuf, bs: u64, align: u64, from: String },
    /// The region of a target holds no whole block.
    #[error("{}: the region ({region} of {size} bytes) holds no block of {bs} bytes; raise the region or the file size", path.display())]
    RegionTooSmall { path: PathBuf, region: f64, size: u64, bs: u64 },
    /// The region's start is not a multiple of a target's direct-I/O alignment.
    #[error("{}: offset {offset} is not a multiple of its direct-I/O alignment of {align} bytes", path.display())]
    OffsetMisaligned { path: PathBuf, offset: u64, align: u64 },
    /// The region's start leaves no whole block before the end of the target.
    #[error("{}: offset {offset} leaves no block of {bs} bytes before the end ({size} bytes)", path.display())]
    OffsetPastEnd { path: PathBuf, offset: u64, size: u64, bs: u64 },
    /// A surface scan of fewer than two points, or of more than the target has blocks.
    #[error("a surface scan takes {min} to {max} points; {points} were asked for")]
    SurfacePoints { points: usize, min: usize, max: usize },
    /// A surface scan of other than one target, or of a workload that is not a read.
    #[error("a surface scan reads one target sequentially; {what}")]
    SurfaceWorkload { what: String },
}

/// The smallest block size, in KiB, that suits a direct-I/O alignment (at least 4k).
pub fn min_kib(align: u64) -> u64 {
    align.div_ceil(1024).max(4)
}

impl MeasureError {
    /// A refusal or bad input: the same at every point, so a usage error (exit 2 in the CLI).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            MeasureError::Refused(_)
                | MeasureError::Bind(_)
                | MeasureError::ActiveRange { .. }
                | MeasureError::ActiveBeyondTargets { .. }
                | MeasureError::NoTargets
                | MeasureError::NoSuchDevice { .. }
                | MeasureError::Misaligned { .. }
                | MeasureError::RegionTooSmall { .. }
                | MeasureError::OffsetMisaligned { .. }
                | MeasureError::OffsetPastEnd { .. }
                | MeasureError::SurfacePoints { .. }
                | MeasureError::SurfaceWorkload { .. }
        )
    }

    /// Whether the error ends a sweep at once instead of being recorded at its point: a
    /// refusal or bad input (the same at every point) and a Ctrl-C during a layout. The
    /// exit code each error gives is the CLI's business (`src/cmd/exit.rs`).
    pub fn stops_a_sweep(&self) -> bool {
        // A target that cannot be opened or read, or a failing engine, belongs to its point.
        self.is_usage()
            || !matches!(
                self,
                MeasureError::Target(TargetError::Open { .. } | TargetError::Io { .. }) | MeasureError::Engine(_)
            )
    }
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
    let mut warnings = Vec::new();
    let plan = plan::plan(o, &mut warnings)?;
    let runner = run::choose_runner(runner, o, &mut warnings)?;
    let ran = run::run(o, &plan, runner, progress, point)?;
    Ok(summary::summarise(o, plan, ran, runner.name(), warnings, wall0))
}

/// One point of a measured sweep: the swept values that make it, as `(parameter, value)`
/// pairs in axis order (`("bs", "128k")`), and its workload.
#[derive(Debug, Clone)]
pub struct SweepAt {
    pub at: Vec<(String, serde_json::Value)>,
    pub workload: Workload,
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
        return Err(MeasureError::ActiveRange { from, to });
    }
    if to > o.targets.len() {
        return Err(MeasureError::ActiveBeyondTargets { from, to, targets: o.targets.len() });
    }
    let points: Vec<SweepAt> = (from..=to)
        .map(|active| {
            let mut workload = o.workload.clone();
            workload.targets = Targets::Active(active);
            SweepAt { at: vec![("active".into(), active.into())], workload }
        })
        .collect();
    measure_sweep_with(o, runner, &points, progress)
}

/// A measured sweep: each point's workload run in turn, in the order given (one point at a
/// time: points running at once would share the devices). `o.workload` is unused; each
/// point brings its own. Stops early (marked partial) on Ctrl-C; a point that fails on its
/// own (an I/O error) is recorded and the sweep goes on, while a refusal or bad input, the
/// same at every point, ends it at once.
pub fn measure_sweep_with(
    o: &MeasureOptions,
    runner: Option<&dyn Runner>,
    points: &[SweepAt],
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Sweep, MeasureError> {
    let mut out = Vec::new();
    let mut partial = false;
    let n = points.len();
    for (k, p) in points.iter().enumerate() {
        if o.stop.load(Ordering::Relaxed) {
            partial = true;
            break;
        }
        let mut oo = o.clone();
        oo.workload = p.workload.clone();
        let (report, error) = match measure_point(&oo, runner, progress, Some((k + 1, n))) {
            Ok(r) => {
                partial |= r.partial;
                (Some(r), None)
            }
            Err(e) if e.stops_a_sweep() => return Err(e),
            Err(e) => (None, Some(e.to_string())),
        };
        out.push(SweepPoint {
            param: p.at.first().map(|a| a.0.clone()).unwrap_or_default(),
            value: p.at.first().map(|a| a.1.clone()).unwrap_or_default(),
            param2: p.at.get(1).map(|a| a.0.clone()),
            value2: p.at.get(1).map(|a| a.1.clone()),
            report,
            error,
            bound_mb_s: None,
        });
    }
    Ok(Sweep {
        schema_version: iopath_model::report::SCHEMA_VERSION,
        topology: o.topology.clone(),
        points: out,
        partial,
    })
}

#[cfg(test)]
mod tests {
    use super::plan::{Role, roles};
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
        assert!(e.to_string().contains("no drive has id \"zz\""), "{e}");
        // A chain is refused, not run with its second pair dropped.
        let w = WorkloadSpec { copy: Some(vec!["a:b".into(), "b:c".into()]), ..Default::default() }.resolve().unwrap();
        let e = select_targets(&w, &pool()).unwrap_err();
        assert!(e.to_string().contains("chains of copies are not supported"), "{e}");
    }

    fn options(targets: Vec<TargetSpec>) -> MeasureOptions {
        MeasureOptions {
            topology: "t".into(),
            targets,
            workload: WorkloadSpec::default().resolve().unwrap(),
            allow_write: false,
            destroy_data_on: Vec::new(),
            size: 1 << 20,
            engine: EngineChoice::Threads,
            runtime: Duration::from_millis(10),
            ramp: Duration::ZERO,
            offset: Offset::Start,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    #[test]
    fn an_offset_starts_at_its_byte_or_its_share_aligned_up() {
        // 50% of 10 blocks of 4096 = 5 blocks; 33% of 10 blocks = 3.3 -> up to 4 blocks, as
        // fio aligns a percentage offset up to the block size.
        assert_eq!(Offset::Fraction(0.5).start(40960, 4096), 20480);
        assert_eq!(Offset::Fraction(0.33).start(40960, 4096), 16384);
        assert_eq!(Offset::Bytes(8192).start(40960, 4096), 8192);
        assert_eq!(Offset::Start.start(40960, 4096), 0);
    }

    /// A bad `active` ramp or an empty selection is a typed error carrying the values, found
    /// before any target is touched (the targets do not exist), and its message names no
    /// command-line option: the CLI adds `--active` (src/cmd/measure.rs).
    #[test]
    fn usage_errors_are_typed_and_name_no_option() {
        let o = options(pool());
        let quiet = |_: &Progress| {};
        let e = measure_active_ramp_with(&o, None, 3, 2, &quiet).unwrap_err();
        assert!(matches!(e, MeasureError::ActiveRange { from: 3, to: 2 }), "{e:?}");
        let e = measure_active_ramp_with(&o, None, 0, 2, &quiet).unwrap_err();
        assert!(matches!(e, MeasureError::ActiveRange { from: 0, to: 2 }), "{e:?}");
        // Three targets in the pool: 2..4 asks for a fourth.
        let e = measure_active_ramp_with(&o, None, 2, 4, &quiet).unwrap_err();
        assert!(matches!(e, MeasureError::ActiveBeyondTargets { from: 2, to: 4, targets: 3 }), "{e:?}");
        assert!(e.stops_a_sweep());
        let w = WorkloadSpec::default().resolve().unwrap();
        let e = select_targets(&w, &[]).unwrap_err();
        assert!(matches!(e, MeasureError::NoTargets), "{e:?}");
        let typed = [
            e,
            MeasureError::ActiveRange { from: 3, to: 2 },
            MeasureError::ActiveBeyondTargets { from: 2, to: 4, targets: 3 },
            MeasureError::NoSuchDevice { path: "/dev/nope".into() },
            MeasureError::Misaligned { path: "/dev/sdz".into(), bs: 512, align: 4096, from: "statx".into() },
            MeasureError::RegionTooSmall { path: "/tmp/f".into(), region: 0.001, size: 4096, bs: 4096 },
            MeasureError::OffsetMisaligned { path: "/dev/sdz".into(), offset: 512, align: 4096 },
            MeasureError::OffsetPastEnd { path: "/tmp/f".into(), offset: 4096, size: 4096, bs: 4096 },
            MeasureError::SurfacePoints { points: 1, min: 2, max: 1000 },
            MeasureError::SurfaceWorkload { what: "rw=write".into() },
        ];
        for e in &typed {
            let m = e.to_string();
            assert!(!m.contains("--"), "a library message names a CLI option: {m}");
            assert!(e.stops_a_sweep(), "{m}");
        }
        // The alignment hint: 4096-byte alignment -> 4k; 8192 -> 8k; 512 -> still 4k.
        assert!(typed[4].to_string().contains("use a block size of 4k or larger"), "{}", typed[4]);
        assert_eq!((min_kib(512), min_kib(4096), min_kib(8192)), (4, 4, 8));
    }
}
