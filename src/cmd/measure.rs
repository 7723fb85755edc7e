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
use iopath_validate::fio::{JobTarget, job_file};
use iopath_validate::measure::{
    EngineChoice, MeasureError, MeasureOptions, Progress, TargetSpec, measure, measure_active_ramp, select_targets,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Engine {
    /// io_uring, or threads with pread/pwrite when io_uring is unavailable
    Auto,
    IoUring,
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
    /// Size of file targets that are created ("1g"); default 256m
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON report to FILE (atomically; a device node, FIFO or symbolic link
    /// there is refused before the run)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write a fio job file that runs the same workload, to cross-check with fio (written
    /// after the run, so never for a run the write gate refused; checked like --out)
    #[arg(long, value_name = "FILE")]
    pub fio_job: Option<PathBuf>,
    /// No progress on stderr
    #[arg(long, short)]
    pub quiet: bool,
    /// I/O engine
    #[arg(long, value_enum, default_value = "auto")]
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

fn usage(msg: String) -> CliError {
    CliError::usage(anyhow!(msg))
}

fn parse_range(s: &str) -> Option<(usize, usize)> {
    let (a, b) = s.split_once("..")?;
    let b = b.trim_start_matches('=');
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

pub fn run(a: MeasureArgs, catalog: &Catalog) -> CliResult {
    if a.cpu {
        return super::cpu_bench::run(a, catalog);
    }
    // Output paths first: a refused one stops the run before any target is opened or created.
    for (flag, path) in [("--out", &a.out), ("--fio-job", &a.fio_job)] {
        if let Some(p) = path {
            super::output::check_file(flag, p)?;
        }
    }
    let (topo, pool, name) = target_pool(&a, catalog)?;

    // Workload; `--active A..B` is the ramp of the published tests.
    let mut wargs = a.workload.clone();
    let ramp_range = match &wargs.active {
        Some(s) if s.contains("..") => {
            let r = parse_range(s).ok_or_else(|| usage(format!("--active {s:?}: expected N or a range like 1..4")))?;
            wargs.active = Some(r.1.to_string());
            Some(r)
        }
        _ => None,
    };
    let mut spec = match &topo {
        Some(t) => wargs.spec(t)?,
        None => ad_hoc_spec(&wargs)?,
    };
    if let Some(s) = &a.size {
        spec.size = Some(s.clone());
    }
    let workload = resolve_workload(&spec)?;
    let size = match &a.size {
        None => 256 << 20,
        Some(s) => parse_size(s).map_err(|e| usage(format!("--size: {e}")))?.get(),
    };
    let runtime = Duration::from_nanos(workload.runtime.map(|d| d.nanos()).unwrap_or(5_000_000_000));
    let ramp = Duration::from_nanos(workload.ramp.map(|d| d.nanos()).unwrap_or(1_000_000_000));

    // Every selected drive needs a dev.
    let selected = select_targets(&workload, &pool).map_err(|e| match &e {
        MeasureError::Bind(b) => super::bind_error(&spec, b),
        _ => measure_err(e),
    })?;
    if let Some(t) = selected.iter().find(|t| t.path.as_os_str().is_empty()) {
        return Err(usage(format!(
            "drive {:?} has no dev; add dev = \"/dev/sdX\" (or a file path) to its [[drive]] table, or pick other drives with --drives",
            t.id
        )));
    }

    // Written only after the run: the write gate runs inside it, and a refused run must not
    // leave a job file that would do what iopath refused to.
    let fio_job = a.fio_job.as_ref().map(|f| {
        let jt: Vec<JobTarget> =
            selected.iter().map(|t| JobTarget { id: t.id.clone(), path: t.path.display().to_string() }).collect();
        (f, job_file(&workload, &jt, runtime, ramp))
    });

    let stop = interrupt_watch();
    let opts = MeasureOptions {
        topology: name,
        targets: pool,
        workload,
        allow_write: a.allow_write,
        destroy_data_on: a.destroy_data_on.clone(),
        size,
        engine: match a.engine {
            Engine::Auto => EngineChoice::Auto,
            Engine::IoUring => EngineChoice::IoUring,
            Engine::Threads => EngineChoice::Threads,
        },
        runtime,
        ramp,
        stop: stop.clone(),
    };

    let bar = super::show_progress(a.quiet).then(|| {
        let b = indicatif::ProgressBar::new(1000);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let progress = |p: &Progress| {
        if let Some(b) = &bar {
            let frac = p.elapsed.as_secs_f64() / p.total.as_secs_f64().max(1e-9);
            b.set_position((frac * 1000.0) as u64);
            let pt = p.point.map(|(i, n)| format!("point {i}/{n} ")).unwrap_or_default();
            b.set_message(format!(
                "{pt}{} {:.1}/{:.1} s  {:.1} MB/s",
                if p.in_ramp { "ramp" } else { "measuring" },
                p.elapsed.as_secs_f64(),
                p.total.as_secs_f64(),
                p.mb_s
            ));
        }
    };

    let outcome = match ramp_range {
        Some((from, to)) => measure_active_ramp(&opts, from, to, &progress).map(Outcome::Sweep),
        None => measure(&opts, &progress).map(Outcome::Report),
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let outcome = outcome.map_err(measure_err)?;
    if let Some((f, job)) = &fio_job {
        super::output::write_file("--fio-job", f, job.as_bytes())?;
    }
    let (json, partial, failed) = match &outcome {
        Outcome::Report(r) => (serde_json::to_string_pretty(r), r.partial, false),
        Outcome::Sweep(s) => (serde_json::to_string_pretty(s), s.partial, s.points.iter().any(|p| p.error.is_some())),
    };
    let json = json.map_err(|e| CliError::runtime(anyhow!(e)))?;
    if let Some(f) = &a.out {
        super::output::write_file("--out", f, format!("{json}\n").as_bytes())?;
    }
    if a.json {
        match &outcome {
            Outcome::Report(r) => print_json(r)?,
            Outcome::Sweep(s) => print_json(s)?,
        }
    } else {
        print_text(&match &outcome {
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
fn target_pool(
    a: &MeasureArgs,
    catalog: &Catalog,
) -> CliResult<(Option<iopath_model::Topology>, Vec<TargetSpec>, String)> {
    Ok(match (&a.topology, a.targets.is_empty()) {
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
            for (i, p) in a.targets.iter().enumerate() {
                let same = |q: &PathBuf| {
                    q == p || std::fs::canonicalize(q).ok().is_some_and(|c| Some(c) == std::fs::canonicalize(p).ok())
                };
                if let Some(first) = a.targets[..i].iter().find(|q| same(q)) {
                    return Err(usage(format!(
                        "--target {} is given twice (also as --target {}); name each target once",
                        p.display(),
                        first.display()
                    )));
                }
            }
            let pool = a.targets.iter().map(|p| TargetSpec { id: p.display().to_string(), path: p.clone() }).collect();
            (None, pool, "ad hoc".to_string())
        }
    })
}

/// Ctrl-C sets the binary's interrupt flag; this passes it on to the run's stop flag.
fn interrupt_watch() -> Arc<AtomicBool> {
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

fn ad_hoc_spec(w: &WorkloadArgs) -> CliResult<WorkloadSpec> {
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
    Ok(WorkloadSpec {
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
    })
}

#[allow(clippy::large_enum_variant)] // one per run: the size does not matter
enum Outcome {
    Report(Report),
    Sweep(Sweep),
}

/// The one table from measure's typed errors to the command line's words: the library
/// names the value at fault (the active range, the block size, the region), the CLI the
/// option that gave it. Exit codes stay those of [`super::exit`].
fn measure_err(e: MeasureError) -> CliError {
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
        _ => return CliError::from_lib(None, e),
    };
    CliError::reworded(&e, message)
}
