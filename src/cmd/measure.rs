//! `iopath measure`: run a workload as real direct I/O on files or block devices and report
//! it as the simulator does (`kind: "measured"`).
//!
//! Exit codes: 0 done, 1 an I/O failure, 2 bad input or a refused write (the safety gate),
//! 130 interrupted by Ctrl-C (what was measured is still printed, marked `partial`).

use super::{CliError, CliResult, WorkloadArgs, print_json, print_text, resolve_workload};
use anyhow::anyhow;
use iopath_model::report::{Report, Sweep};
use iopath_model::units::parse_size;
use iopath_model::{Catalog, WorkloadSpec};
use iopath_validate::fio::{JobFileOptions, JobTarget, job_file};
use iopath_validate::measure::{
    EngineChoice, MeasureError, MeasureOptions, Offset, Progress, SweepAt, TargetSpec, measure, measure_sweep_with,
    select_targets,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Engine {
    /// io_uring, or threads with pread/pwrite when io_uring is unavailable
    Auto,
    /// io_uring, iodepth I/Os in flight per job (fio's io_uring; fio's libaio, which also
    /// keeps iodepth direct I/Os in flight, runs as this)
    #[value(alias = "io_uring", alias = "libaio")]
    IoUring,
    /// iodepth threads per job, one pread/pwrite each (fio's psync, pvsync, pvsync2 and sync,
    /// synchronous engines: fio runs them at depth 1, so give --iodepth 1 to match fio)
    #[value(alias = "psync", alias = "pvsync", alias = "pvsync2", alias = "sync")]
    Threads,
}

#[derive(Debug, clap::Args)]
pub struct MeasureArgs {
    /// Topology whose drives carry dev = "/dev/..." (or a file path)
    #[arg(value_name = "TOPOLOGY.toml")]
    pub topology: Option<PathBuf>,
    /// A file or block device to measure (repeatable); its id in the report is the path.
    /// A file that does not exist is created at --size and fully written first
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<PathBuf>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Allow writes (write, randwrite, rw, randrw, copy destinations): destroys data there
    #[arg(long)]
    pub allow_write: bool,
    /// Allow writing over the partition table, filesystem or other data on this exact device
    /// or existing file (repeatable)
    #[arg(long, value_name = "PATH")]
    pub destroy_data_on: Vec<PathBuf>,
    /// Where each target's I/O starts: bytes ("1g", a multiple of the direct-I/O alignment)
    /// or a share of each target ("50%", aligned up to the block size), as fio's offset
    #[arg(long, value_name = "OFFSET", allow_hyphen_values = true)]
    pub offset: Option<String>,
    /// Scan this drive's surface (its id in the topology, or a --target path): sequential
    /// reads at --points evenly spaced windows from its start to its end, 1 s each after a
    /// 0.2 s ramp (set with --runtime, --ramp), 1 MiB blocks at depth 4 unless --bs/--iodepth
    #[arg(long, value_name = "DRIVE")]
    pub surface: Option<String>,
    /// With --surface: the number of positions (2 to 1,000; default 11, every 10%)
    #[arg(long, value_name = "N", requires = "surface")]
    pub points: Option<usize>,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Also write the result to FILE in the format its extension names (.json, .csv, .md; for
    /// a sweep, a list or range in --active, --bs, --iodepth, --numjobs or --rwmixread, also
    /// .svg, .png; no extension: JSON), or every format into a directory (an existing one, or
    /// ending in /), as `iopath sweep --out` writes them; atomically, a device node, FIFO or
    /// symbolic link there is refused before the run. A surface scan takes a directory or a
    /// .json file
    #[arg(long, value_name = "FILE|DIR")]
    pub out: Option<PathBuf>,
    /// Write a fio job file that runs the same workload, to cross-check with fio (written
    /// after the run, so never for a run the write gate refused; checked like --out). Before
    /// session 24 this was --fio-job, which now reads a job file
    #[arg(long, value_name = "FILE")]
    pub write_fio_job: Option<PathBuf>,
    /// Run the jobs of this fio job file ([global] and job sections) on the drives its
    /// filenames name (a drive's dev, or --map FILE=DRIVE), as fio would
    #[arg(long, value_name = "FILE", conflicts_with = "write_fio_job")]
    pub fio_job: Option<PathBuf>,
    /// With --fio-job: a job file's filename FILE is drive DRIVE of the topology (repeatable)
    #[arg(long, value_name = "FILE=DRIVE", requires = "fio_job")]
    pub map: Vec<String>,
    /// No progress on stderr
    #[arg(long, short)]
    pub quiet: bool,
    /// I/O engine (fio's spelling --ioengine and its values io_uring, libaio, psync, pvsync,
    /// pvsync2, sync are accepted)
    #[arg(long, visible_alias = "ioengine", value_enum, default_value = "auto")]
    pub engine: Engine,
    /// Time the storage stack's CPU kernels here instead (checksums, parity, encryption,
    /// compression; one core each); with --out, write a host part file for --parts
    #[arg(long)]
    pub cpu: bool,
    /// With --cpu: the cores the part file states (default: the logical CPUs here)
    #[arg(long, value_name = "N", requires = "cpu")]
    pub cores: Option<u32>,
    /// With --cpu: seconds per kernel (default 0.3)
    #[arg(long, value_name = "S", requires = "cpu")]
    pub seconds: Option<f64>,
    /// With --cpu: time only this kernel (repeatable): fletcher4, sha256, blake3, crc32c,
    /// xor, raid-pq, raid-pqr, aes-gcm, lz4, zstd
    #[arg(long = "kernel", value_name = "KERNEL", requires = "cpu")]
    pub kernels: Vec<String>,
    /// With --cpu: the host part the file overrides (default: the topology's host part,
    /// else generic-host)
    #[arg(long, value_name = "PART", requires = "cpu")]
    pub part: Option<String>,
}

pub(super) fn usage(msg: String) -> CliError {
    CliError::usage(anyhow!(msg))
}

/// `--out`'s target: a sweep (a list or range in an axis) writes a sweep's formats, one run a
/// report's.
fn out_target(a: &MeasureArgs, sweep: bool) -> CliResult<Option<iopath_reports::export::OutTarget>> {
    use iopath_reports::export::{Bare, OutFormat, REPORT_FORMATS, REPORT_SET, SWEEP_FORMATS, SWEEP_SET};
    let Some(p) = &a.out else { return Ok(None) };
    // A name without an extension means what it means to `sweep` (a directory of every file)
    // for a measured sweep, and a JSON report for one run, as for `simulate`.
    let (formats, names, bare) = if sweep {
        (SWEEP_FORMATS, SWEEP_SET, Bare::Dir)
    } else {
        (REPORT_FORMATS, REPORT_SET, Bare::File(OutFormat::Json))
    };
    super::output::target("--out", p, formats, bare, names).map(Some)
}

/// The points of a measured sweep from the workload options' lists and ranges, parsed by
/// `sweep`'s own parser (`super::sweep::axes_of`), in its order (the first axis outermost);
/// each point's workload is resolved and its targets selected before any point runs, so a
/// bad value is a usage error naming the options that make up the point. Empty when no
/// option is a list or range (one measurement).
fn sweep_points(
    wargs: &mut WorkloadArgs,
    topo: Option<&iopath_model::Topology>,
    pool: &[TargetSpec],
    base: Option<WorkloadSpec>,
) -> CliResult<(WorkloadSpec, Vec<SweepAt>)> {
    let multi = [&wargs.active, &wargs.bs, &wargs.iodepth, &wargs.numjobs, &wargs.rwmixread]
        .iter()
        .any(|v| v.as_deref().is_some_and(super::sweep::is_multi));
    // The targets' count is checked per point by the same binding as a single run, which
    // names the point's own --active.
    let axes = if multi { super::sweep::axes_of(wargs, &[], usize::MAX)? } else { Vec::new() };
    let mut spec = match topo {
        Some(t) => wargs.spec(t)?,
        None => ad_hoc_spec(wargs)?,
    };
    if let Some(b) = base {
        spec = b.merged(&spec);
    }
    let mut points = Vec::new();
    for at in iopath_sim::points::points(&axes).into_iter().filter(|at| !at.is_empty()) {
        let named = at.iter().map(|v| format!("--{} {}", v.param, v.value)).collect::<Vec<_>>().join(" ");
        let mut ps = spec.clone();
        for v in &at {
            iopath_sim::sweep::apply_workload(&mut ps, &v.param, &v.value)
                .map_err(|e| usage(format!("{named}: {e}")))?;
        }
        let workload = resolve_workload(&ps).map_err(|e| usage(format!("{named}: {}", e.err)))?;
        select_targets(&workload, pool).map_err(|e| match &e {
            MeasureError::Bind(b) => super::bind_error(&ps, b),
            _ => measure_err(e),
        })?;
        let at = at.iter().map(|v| (v.param.clone(), iopath_sim::sweep::json_value(&v.value))).collect();
        points.push(SweepAt { at, workload });
    }
    Ok((spec, points))
}

/// `--offset`: bytes, or a share of each target with `%`.
fn parse_offset(s: Option<&str>) -> CliResult<Offset> {
    let Some(s) = s.map(str::trim) else { return Ok(Offset::Start) };
    if let Some(p) = s.strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(f) if (0.0..=100.0).contains(&f) => Ok(Offset::Fraction(f / 100.0)),
            _ => Err(usage(format!("--offset {s:?}: expected a share from 0% to 100%, or a size such as 1g"))),
        };
    }
    if s == "0" {
        return Ok(Offset::Start);
    }
    parse_size(s)
        .map(|b| Offset::Bytes(b.get()))
        .map_err(|e| usage(format!("--offset {s:?}: {e}; expected a size such as 1g or a share such as 50%")))
}

pub fn run(a: MeasureArgs, catalog: &Catalog) -> CliResult {
    if a.cpu {
        return super::cpu_bench::run(a, catalog);
    }
    if a.surface.is_some() {
        return super::measure_surface::run(a, catalog);
    }
    let job = a.fio_job.as_deref().map(super::fio_job::load).transpose()?;
    if job.is_some() && !a.targets.is_empty() {
        return Err(usage("give --target paths or --fio-job, not both (the job file names its files)".to_string()));
    }
    if let (Some(_), Some(w)) = (&job, &a.workload.workload) {
        return Err(usage(format!("--workload {w} and --fio-job: give one workload")));
    }
    let (topo, pool, name) = target_pool(&a, job.as_ref(), catalog)?;
    // The job file is the base; options on the command line win, as over a named workload.
    let job_base = match &job {
        Some(j) => Some(super::fio_job::job_spec(j, topo.as_ref(), &a.map)?),
        None => None,
    };
    let mut wargs = a.workload.clone();
    let (spec, points) = sweep_points(&mut wargs, topo.as_ref(), &pool, job_base)?;
    // Output paths first: a refused one stops the run before any target is opened or created.
    let out = out_target(&a, !points.is_empty())?;
    if let Some(p) = &a.write_fio_job {
        super::output::check_file("--write-fio-job", p)?;
        if points.first().is_some_and(|p| p.at.len() > 1 || p.at[0].0 != "active") {
            return Err(usage(
                "--write-fio-job writes one job; give single values for --bs, --iodepth, --numjobs and --rwmixread (an --active range is written as its last point)".to_string(),
            ));
        }
    }
    let workload = match points.last() {
        Some(p) => p.workload.clone(),
        None => resolve_workload(&spec)?,
    };
    // A file measure creates has fio's size (default 256m); a share (`10%`) is a region.
    let size = workload.size.map_or(256 << 20, |b| b.get());
    let runtime = Duration::from_nanos(workload.runtime.map(|d| d.nanos()).unwrap_or(5_000_000_000));
    let ramp = Duration::from_nanos(workload.ramp.map(|d| d.nanos()).unwrap_or(1_000_000_000));

    // Every selected drive needs a dev.
    let selected = select_targets(&workload, &pool).map_err(|e| match &e {
        MeasureError::Bind(b) => super::bind_error(&spec, b),
        _ => measure_err(e),
    })?;
    check_devs(&selected)?;

    // Written only after the run: the write gate runs inside it, and a refused run must not
    // leave a job file that would do what iopath refused to.
    let fio_job = a.write_fio_job.as_ref().map(|f| {
        let jt: Vec<JobTarget> =
            selected.iter().map(|t| JobTarget { id: t.id.clone(), path: t.path.display().to_string() }).collect();
        (f, jt)
    });

    let stop = interrupt_watch();
    let opts = MeasureOptions {
        topology: name,
        targets: pool,
        workload,
        allow_write: a.allow_write,
        destroy_data_on: a.destroy_data_on.clone(),
        size,
        engine: engine_choice(job.as_ref(), a.engine),
        runtime,
        ramp,
        offset: parse_offset(a.offset.as_deref())?,
        stop: stop.clone(),
    };

    let bar = progress_bar(a.quiet);
    let progress = |p: &Progress| show(&bar, p);
    let outcome = if points.is_empty() {
        measure(&opts, &progress).map(Outcome::Report)
    } else {
        measure_sweep_with(&opts, None, &points, &progress).map(Outcome::Sweep)
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let outcome = outcome.map_err(measure_err)?;
    if let Some((f, jt)) = &fio_job {
        // The engine the run used (auto may have fallen back to threads), as the report says.
        let engine = match &outcome {
            Outcome::Report(r) => r.measured.as_ref().map(|m| m.engine.clone()),
            Outcome::Sweep(s) => {
                s.points.iter().find_map(|p| p.report.as_ref()?.measured.as_ref().map(|m| m.engine.clone()))
            }
        };
        let o = JobFileOptions { engine: engine.as_deref().unwrap_or("io_uring"), name: a.workload.name.as_deref() };
        super::output::write_file("--write-fio-job", f, job_file(&opts.workload, jt, runtime, ramp, &o).as_bytes())?;
    }
    write_outputs(&a, out.as_ref(), &outcome)
}

/// Every target a run selected has a file or device to run on.
fn check_devs(selected: &[TargetSpec]) -> CliResult<()> {
    match selected.iter().find(|t| t.path.as_os_str().is_empty()) {
        Some(t) => Err(usage(format!(
            "drive {:?} has no dev; add dev = \"/dev/sdX\" (or a file path) to its [[drive]] table, or pick other drives with --drives",
            t.id
        ))),
        None => Ok(()),
    }
}

/// The one progress style (`super::progress`), in milliseconds of the run (every point of a
/// sweep: the total).
pub(super) fn progress_bar(quiet: bool) -> Option<indicatif::ProgressBar> {
    super::progress::bar(quiet, 1, super::progress::Unit::Seconds)
}

pub(super) fn show(bar: &Option<indicatif::ProgressBar>, p: &Progress) {
    if let Some(b) = bar {
        b.set_length(p.total.as_millis().max(1) as u64);
        b.set_position(p.elapsed.as_millis() as u64);
        let pt = p.point.map(|(i, n)| format!("point {i}/{n} ")).unwrap_or_default();
        b.set_message(format!("{pt}{} {:.1} MB/s", if p.in_ramp { "ramp" } else { "measuring" }, p.mb_s));
    }
}

/// The run's outputs: `--out` (a file, or a sweep's directory), then stdout; the exit code.
fn write_outputs(a: &MeasureArgs, out: Option<&iopath_reports::export::OutTarget>, outcome: &Outcome) -> CliResult {
    let (partial, failed) = match outcome {
        Outcome::Report(r) => (r.partial, false),
        Outcome::Sweep(s) => (s.partial, s.points.iter().any(|p| p.error.is_some())),
    };
    if let Some(out) = out {
        let written = match outcome {
            Outcome::Report(r) => iopath_reports::export::write_report_to(out, r),
            Outcome::Sweep(s) => iopath_reports::export::write_sweep_to(out, s, &[], &Default::default()),
        }
        .map_err(|e| super::output::error("--out", e))?;
        if !a.quiet && written.len() > 1 {
            for p in written {
                eprintln!("wrote {}", p.display());
            }
        }
    }
    if a.json {
        match outcome {
            Outcome::Report(r) => print_json(r)?,
            Outcome::Sweep(s) => print_json(s)?,
        }
    } else {
        print_text(&match outcome {
            Outcome::Report(r) => iopath_reports::tables::measured_table(r),
            Outcome::Sweep(s) => iopath_reports::tables::measured_sweep_table(s),
        })?;
    }
    Ok(if partial {
        super::exit::INTERRUPTED
    } else if failed {
        super::exit::RUNTIME
    } else {
        super::exit::OK
    })
}

/// The workload options of ad hoc targets (no topology, so no named workloads).
/// The targets a run may use: a topology's drives (a relative dev names a file next to the
/// topology) or the ad hoc `--target` paths, each named once; with the topology and its name.
pub(super) fn target_pool(
    a: &MeasureArgs,
    job: Option<&iopath_validate::fio::jobfile::JobFileRun>,
    catalog: &Catalog,
) -> CliResult<(Option<iopath_model::Topology>, Vec<TargetSpec>, String)> {
    // fio's --filename list, or a job file's filenames, are the targets of a run without a
    // topology.
    let named: Vec<PathBuf> = match (&a.workload.filename, &a.topology, a.targets.is_empty()) {
        (_, None, true) if job.is_some() => {
            job.into_iter().flat_map(|j| &j.targets).map(|t| PathBuf::from(&t.path)).collect()
        }
        (Some(f), None, true) => super::fio_job::split_filenames(f).into_iter().map(PathBuf::from).collect(),
        (Some(_), None, false) => return Err(usage("give --target paths or --filename, not both".to_string())),
        _ => a.targets.clone(),
    };
    Ok(match (&a.topology, named.is_empty()) {
        (Some(_), false) => {
            return Err(usage("give a topology or --target paths, not both".to_string()));
        }
        (None, true) => {
            return Err(usage(
                "nothing to measure: give a topology whose drives have dev = \"/dev/...\", or --target PATH"
                    .to_string(),
            ));
        }
        (Some(p), true) => {
            let t = super::load_topology(p, catalog, &[])?;
            // A relative dev names a file next to the topology, wherever iopath runs from.
            let base = p.parent().unwrap_or(std::path::Path::new(""));
            let pool: Vec<TargetSpec> = t
                .drives
                .iter()
                .map(|&ix| {
                    let n = &t.nodes[ix];
                    TargetSpec {
                        id: n.id.clone(),
                        path: n.dev.as_deref().filter(|d| !d.is_empty()).map(|d| base.join(d)).unwrap_or_default(),
                    }
                })
                .collect();
            let name = t.name.clone();
            (Some(t), pool, name)
        }
        (None, false) => {
            // The same target twice would be two jobs on one device, and its second exclusive
            // open would fail as if another program held it.
            for (i, p) in named.iter().enumerate() {
                let same = |q: &PathBuf| {
                    q == p || std::fs::canonicalize(q).ok().is_some_and(|c| Some(c) == std::fs::canonicalize(p).ok())
                };
                if let Some(first) = named[..i].iter().find(|q| same(q)) {
                    return Err(usage(format!(
                        "--target {} is given twice (also as --target {}); name each target once",
                        p.display(),
                        first.display()
                    )));
                }
            }
            let pool = named.iter().map(|p| TargetSpec { id: p.display().to_string(), path: p.clone() }).collect();
            (None, pool, "ad hoc".to_string())
        }
    })
}

/// The engine to run: a job file's `ioengine` (async engines as io_uring, synchronous ones
/// as threads), else `--engine`.
pub(super) fn engine_choice(job: Option<&iopath_validate::fio::jobfile::JobFileRun>, engine: Engine) -> EngineChoice {
    use iopath_validate::fio::jobfile::JobEngine;
    match (job.map(|j| j.engine), engine) {
        (Some(JobEngine::Async), _) => EngineChoice::IoUring,
        (Some(JobEngine::Sync), _) => EngineChoice::Threads,
        (None, Engine::Auto) => EngineChoice::Auto,
        (None, Engine::IoUring) => EngineChoice::IoUring,
        (None, Engine::Threads) => EngineChoice::Threads,
    }
}

/// Ctrl-C sets the binary's interrupt flag; this passes it on to the run's stop flag.
pub(super) fn interrupt_watch() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = super::interrupt_flag();
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            loop {
                if flag.load(Ordering::SeqCst) {
                    stop.store(true, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    }
    stop
}

pub(super) fn ad_hoc_spec(w: &WorkloadArgs) -> CliResult<WorkloadSpec> {
    if w.pool.is_some() {
        return Err(usage("--pool names a [[pool]] of a topology: give the topology file".to_string()));
    }
    if let Some(c) = &w.client {
        return Err(usage(format!(
            "--client {c}: measure runs I/O on this machine's drives; a client's requests over the network are simulated (`iopath simulate --client`)"
        )));
    }
    if let Some(n) = &w.workload {
        return Err(usage(format!(
            "--workload {n}: named workloads live in a topology file; give the topology, or the options themselves"
        )));
    }
    let active = match &w.active {
        None => None,
        Some(a) => Some(
            a.trim().parse::<usize>().map_err(|_| usage(format!("--active {a:?}: expected a number of targets")))?,
        ),
    };
    // Works whether the shared args hold these as numbers or as strings.
    let int = |name: &str, v: Option<String>| -> CliResult<Option<u32>> {
        v.map(|s| s.trim().parse::<u32>().map_err(|_| usage(format!("--{name} {s:?}: expected a whole number"))))
            .transpose()
    };
    let mut spec = WorkloadSpec {
        rw: w.rw.clone(),
        bs: w.bs.clone(),
        iodepth: int("iodepth", w.iodepth.as_ref().map(|v| v.to_string()))?,
        numjobs: int("numjobs", w.numjobs.as_ref().map(|v| v.to_string()))?,
        rwmixread: int("rwmixread", w.rwmixread.as_ref().map(|v| v.to_string()))?,
        region: w.region.clone(),
        runtime: w.runtime.clone(),
        ramp: w.ramp.clone(),
        active,
        drives: w.drives.clone(),
        copy: if w.copy.is_empty() { None } else { Some(w.copy.clone()) },
        seed: w.seed,
        size: None,
        // The hardware mode measures the drives of this machine; a client is the simulator's.
        client: None,
        ..WorkloadSpec::default()
    };
    super::fio_job::apply_fio_options(w, &mut spec, None)?;
    Ok(spec)
}

#[allow(clippy::large_enum_variant)] // one per run: the size does not matter
enum Outcome {
    Report(Report),
    Sweep(Sweep),
}

/// The one table from measure's typed errors to the command line's words: the library
/// names the value at fault (the active range, the block size, the region), the CLI the
/// option that gave it. Exit codes stay those of [`super::exit`].
pub(super) fn measure_err(e: MeasureError) -> CliError {
    let message = match &e {
        MeasureError::ActiveRange { from, to } => format!("--active {from}..{to}: expected a range like 1..4"),
        MeasureError::ActiveBeyondTargets { from, to, targets } => {
            format!("--active {from}..{to}: there are only {targets} targets")
        }
        MeasureError::NoTargets => {
            "no targets: name a topology whose drives have dev = \"/dev/...\", or give --target PATH".to_string()
        }
        MeasureError::Misaligned { path, bs, align, from } => format!(
            "{}: --bs {bs} is not a multiple of its direct-I/O alignment of {align} bytes (from {from}); use --bs {}k or larger",
            path.display(),
            iopath_validate::measure::min_kib(*align)
        ),
        MeasureError::RegionTooSmall { path, region, size, bs } => format!(
            "{}: the region ({region} of {size} bytes) holds no block of {bs} bytes; raise --region or --size",
            path.display()
        ),
        MeasureError::Refused(r) => r.message(&super::spell::permission),
        MeasureError::Engine(x) => x.message(&super::spell::knob),
        MeasureError::OffsetMisaligned { path, offset, align } => format!(
            "{}: --offset {offset} is not a multiple of its direct-I/O alignment of {align} bytes; give a multiple, or a share such as 50%",
            path.display()
        ),
        MeasureError::OffsetPastEnd { path, offset, size, bs } => format!(
            "{}: --offset {offset} leaves no block of {bs} bytes before its end ({size} bytes); give a smaller --offset",
            path.display()
        ),
        MeasureError::SurfacePoints { points, min, max } => {
            format!("--points {points}: a surface scan of this drive takes {min} to {max} points")
        }
        MeasureError::SurfaceWorkload { what } => {
            format!("--surface reads one drive sequentially ({what}); drop --rw, or give --rw read")
        }
        _ => return CliError::from_lib(None, e),
    };
    CliError::reworded(&e, message)
}
