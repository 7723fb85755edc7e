//! Subcommands, one module each, and what they share: the error type with its exit code,
//! workload options in fio's vocabulary, and topology loading.

pub mod advise;
pub mod board;
pub mod catalog;
pub mod check;
pub mod compare;
pub mod complete;
pub mod cpu_bench;
pub mod discover;
pub mod estimate;
pub mod exit;
pub mod fio_job;
pub mod fit;
pub mod measure;
pub mod measure_surface;
pub mod output;
pub mod plan;
pub mod progress;
pub mod report;
pub mod report_pool;
pub mod schema;
pub mod simulate;
pub mod spell;
pub mod sweep;

use clap::{Args, Parser, Subcommand};
use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};
use std::fmt;
use std::path::{Path, PathBuf};

/// Predict and check the throughput of storage I/O paths.
#[derive(Debug, Parser)]
#[command(name = "iopath", version, about, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Load a part file (e.g. written by `iopath fit`) over the built-in catalog.
    #[arg(long, global = true, value_name = "FILE")]
    pub parts: Vec<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a topology, print its tree, links and the closed-form bound.
    Check(check::CheckArgs),
    /// Simulate one workload on a topology.
    Simulate(simulate::SimulateArgs),
    /// Simulate a workload while varying one or two parameters, in parallel.
    Sweep(sweep::SweepArgs),
    /// Write one self-contained HTML page: tree, bound, standard sweeps, link utilization.
    Report(report::ReportArgs),
    /// Rank the changes that raise the answer (controllers, slots, drives, pool, NIC), each simulated.
    Advise(advise::AdviseArgs),
    /// Plan a build from a board or host, drives and a goal: the best controller choices.
    Plan(plan::PlanArgs),
    /// Run a workload as real direct I/O on files or block devices.
    Measure(measure::MeasureArgs),
    /// Fit part figures to measurements (least squares); write a part file for --parts.
    Fit(fit::FitArgs),
    /// Compare predictions with measurements, point by point, with a plot.
    Compare(compare::CompareArgs),
    /// Write this machine's storage topology as a topology file.
    Discover(discover::DiscoverArgs),
    /// List the built-in parts, or show one part with every figure and its source.
    Catalog(catalog::CatalogArgs),
    /// Print the JSON Schema of topology files.
    Schema,
    /// Print shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// An error with the exit code it maps to (the table: [`exit`]).
pub struct CliError {
    pub code: u8,
    pub err: anyhow::Error,
}

impl CliError {
    pub fn usage(e: impl Into<anyhow::Error>) -> Self {
        CliError { code: exit::USAGE, err: e.into() }
    }
    pub fn runtime(e: impl Into<anyhow::Error>) -> Self {
        CliError { code: exit::RUNTIME, err: e.into() }
    }
    pub fn is_broken_pipe(&self) -> bool {
        self.err
            .chain()
            .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = format!("{:#}", self.err);
        if s.starts_with("error:") { write!(f, "{s}") } else { write!(f, "error: {s}") }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        // Kept as the error itself, so a closed pipe is recognised (`is_broken_pipe`).
        CliError { code: exit::Classify::class(&e).code(), err: e.into() }
    }
}

pub type CliResult<T = u8> = Result<T, CliError>;

pub fn run(cli: Cli) -> CliResult {
    let catalog = load_catalog(&cli.parts)?;
    match cli.command {
        Command::Check(a) => check::run(a, &catalog),
        Command::Simulate(a) => simulate::run(a, &catalog),
        Command::Sweep(a) => sweep::run(a, &catalog),
        Command::Report(a) => report::run(a, &catalog),
        Command::Advise(a) => advise::run(a, &catalog),
        Command::Plan(a) => plan::run(a, &catalog),
        Command::Measure(a) => measure::run(a, &catalog),
        Command::Fit(a) => fit::run(a, &catalog),
        Command::Compare(a) => compare::run(a, &catalog),
        Command::Discover(a) => discover::run(a, &catalog),
        Command::Catalog(a) => catalog::run(a, &catalog),
        Command::Schema => schema::run(&catalog),
        Command::Completions { shell } => {
            // With the fixed values (`--rw`, `--kind`) as possible values; part ids and
            // workload names need the dynamic completer (`COMPLETE=bash iopath`, `complete.rs`).
            let mut c = complete::command();
            // Into a buffer first: clap_complete panics on a write error, and a closed pipe
            // (`iopath completions bash | head`) is a quiet success here as everywhere.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut c, "iopath", &mut script);
            print_text(&String::from_utf8_lossy(&script))?;
            Ok(0)
        }
    }
}

/// The built-in catalog with any `--parts` files loaded over it.
pub fn load_catalog(parts: &[PathBuf]) -> CliResult<Catalog> {
    let mut c = Catalog::builtin();
    for p in parts {
        let bytes = std::fs::read(p)
            .map_err(|e| CliError::usage(anyhow::anyhow!("--parts {}: cannot read part file: {e}", p.display())))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let prefix = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
            let (l, c) = iopath_model::topology::line_col(prefix, at);
            CliError::usage(anyhow::anyhow!(
                "{}:{l}:{c}: byte {at} (line {l}, column {c}): not valid UTF-8",
                p.display()
            ))
        })?;
        c.overlay(&p.display().to_string(), &text).map_err(|e| CliError::from_lib(None, e))?;
    }
    Ok(c)
}

/// Loads and validates a topology; config errors exit 2.
pub fn load_topology(path: &Path, catalog: &Catalog, sets: &[String]) -> CliResult<Topology> {
    let t = Topology::load(path, catalog).map_err(|e| CliError::from_lib(None, e))?;
    if sets.is_empty() {
        return Ok(t);
    }
    let overrides = parse_sets(sets)?;
    // Problems with a --set value are the command line's, not the topology file's.
    let origins: Vec<String> = sets.iter().map(|s| format!("--set {s}")).collect();
    t.with_overrides_from(&overrides, &origins).map_err(|e| CliError::from_lib(None, e))
}

pub fn parse_sets(sets: &[String]) -> CliResult<Vec<ParamOverride>> {
    sets.iter()
        .map(|s| s.parse::<ParamOverride>().map_err(|m| CliError::usage(anyhow::anyhow!("--set {s}: {m}"))))
        .collect()
}

/// `--replications N`: at least one run (0 would still run once and say nothing).
pub fn replications(n: u32) -> CliResult<u32> {
    if n == 0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "--replications 0: at least one run is needed; give 1 for a single run, or more for a mean and spread"
        )));
    }
    Ok(n)
}

/// Workload options, with fio's names and meanings.
#[derive(Debug, Clone, Args, Default)]
pub struct WorkloadArgs {
    /// A workload named in the topology file ([workload.NAME]); options below override it.
    #[arg(long, value_name = "NAME", help_heading = "Workload")]
    pub workload: Option<String>,
    /// read | write | randread | randwrite | rw (= readwrite) | randrw
    #[arg(long, visible_alias = "readwrite", help_heading = "Workload")]
    pub rw: Option<String>,
    /// Block size with fio's units under its default kb_base=1024: 4k = 4KB = 4096 bytes,
    /// 4KiB = 4000 (as fio), 4000 = bytes; "4k,8k" gives reads 4k and writes 8k as in fio (a
    /// mixed workload needs one size). In sweep and measure ramps a comma lists values instead
    #[arg(long, visible_alias = "blocksize", help_heading = "Workload", allow_hyphen_values = true)]
    pub bs: Option<String>,
    /// I/Os each job keeps outstanding
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub iodepth: Option<String>,
    /// Jobs per drive
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub numjobs: Option<String>,
    /// Percent reads for rw/randrw
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub rwmixread: Option<String>,
    /// Percent writes for rw/randrw (fio: the same as --rwmixread 100-N)
    #[arg(long, value_name = "N", help_heading = "Workload", conflicts_with = "rwmixread")]
    pub rwmixwrite: Option<String>,
    /// fio's size: the bytes of each drive the I/O touches, from its start ("1g"), or a share
    /// ("10%", as --region); on a file measure creates, also its size (default 256m)
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// fio's filename: the targets, colon-separated ("/dev/sdb:/dev/sdc", "\:" for a colon in
    /// a name); with a topology, the drives whose dev they are
    #[arg(long, value_name = "PATH[:PATH...]", help_heading = "Workload", conflicts_with_all = ["active", "drives"])]
    pub filename: Option<String>,
    /// fio's job name: accepted for fio's command lines; names the sections of a written job file
    #[arg(long, value_name = "NAME", help_heading = "Workload")]
    pub name: Option<String>,
    /// fio's time_based: run for --runtime whatever the region (needs --runtime; iopath always
    /// runs a given runtime in full)
    #[arg(long, help_heading = "Workload", requires = "runtime")]
    pub time_based: bool,
    /// fio's direct: 1 only (iopath measures direct I/O, O_DIRECT, never the page cache)
    #[arg(long, value_name = "1", help_heading = "Workload")]
    pub direct: Option<String>,
    /// Part of each drive that I/O touches, from its start ("10%")
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Measured time ("20s"). Default: a sequential job given --region covers it once (a
    /// whole-surface read with --region 100%); otherwise 2 s on SSDs, 20 s with HDDs
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub runtime: Option<String>,
    /// Warm-up time before measuring ("1s"; fio's ramp_time)
    #[arg(long, visible_alias = "ramp_time", help_heading = "Workload", allow_hyphen_values = true)]
    pub ramp: Option<String>,
    /// Use the first N drives in file order
    #[arg(long, value_name = "N", help_heading = "Workload", conflicts_with = "drives", allow_hyphen_values = true)]
    pub active: Option<String>,
    /// Use these drives (comma-separated ids)
    #[arg(long, value_delimiter = ',', help_heading = "Workload")]
    pub drives: Option<Vec<String>>,
    /// Copy SRC to DST (repeatable): read one drive and write the data to the other
    #[arg(long, value_name = "SRC:DST", help_heading = "Workload")]
    pub copy: Vec<String>,
    /// Seed of the random streams (random offsets, flash service times, HDD spindle phases)
    #[arg(long, help_heading = "Workload", allow_hyphen_values = true)]
    pub seed: Option<u64>,
    /// Run the I/O as this [[client]]'s requests over the network (its NIC, link, protocol)
    #[arg(long, value_name = "ID", help_heading = "Workload")]
    pub client: Option<String>,
    /// Run on a [[pool]] of the topology: offsets are the pool's logical bytes
    #[arg(long, value_name = "ID", help_heading = "Pool")]
    pub pool: Option<String>,
    /// A failed member of the pool (repeatable): degraded I/O, or what --task rebuild rebuilds
    #[arg(long, value_name = "DRIVE", help_heading = "Pool")]
    pub failed: Vec<String>,
    /// How full the pool is ("60%"): ZFS and btrfs scrub and rebuild only allocated space
    #[arg(long, help_heading = "Pool", allow_hyphen_values = true)]
    pub fill: Option<String>,
    /// io (the workload's I/O, default), scrub, or rebuild (of the --failed members)
    #[arg(long, value_name = "io|scrub|rebuild", help_heading = "Pool")]
    pub task: Option<String>,
}

impl WorkloadArgs {
    /// The workload as written on the command line, merged over a named one.
    /// `active` may be a range (`1..6`) for sweeps; here only a single number is accepted.
    pub fn spec(&self, topo: &Topology) -> CliResult<WorkloadSpec> {
        let base = match &self.workload {
            None => WorkloadSpec::default(),
            Some(name) => topo.workloads.get(name).cloned().ok_or_else(|| {
                let names: Vec<&str> = topo.workloads.keys().map(|s| s.as_str()).collect();
                CliError::usage(anyhow::anyhow!(
                    "--workload {name}: {} has no workload named {name:?}{}",
                    topo.file,
                    if names.is_empty() {
                        "; it defines none".to_string()
                    } else {
                        format!("; it defines {}", names.join(", "))
                    }
                ))
            })?,
        };
        let active = match &self.active {
            None => None,
            Some(a) => Some(a.trim().parse::<usize>().map_err(|_| {
                CliError::usage(anyhow::anyhow!(
                    "--active {a:?}: expected a number of drives (ranges like 1..6 are for `iopath sweep`)"
                ))
            })?),
        };
        let int = whole_number;
        let cli = WorkloadSpec {
            rw: self.rw.clone(),
            bs: self.bs.clone(),
            iodepth: int("iodepth", &self.iodepth)?,
            numjobs: int("numjobs", &self.numjobs)?,
            rwmixread: int("rwmixread", &self.rwmixread)?,
            region: self.region.clone(),
            runtime: self.runtime.clone(),
            ramp: self.ramp.clone(),
            active,
            drives: self.drives.clone(),
            copy: if self.copy.is_empty() { None } else { Some(self.copy.clone()) },
            seed: self.seed,
            size: None,
            client: self.client.clone(),
            pool: self.pool.clone(),
            failed: if self.failed.is_empty() { None } else { Some(self.failed.clone()) },
            fill: self.fill.clone(),
            task: self.task.clone(),
        };
        let mut cli = cli;
        fio_job::apply_fio_options(self, &mut cli, Some(topo))?;
        Ok(base.merged(&cli))
    }
}

/// Parses a whole-number workload option (`--iodepth 8`); lists and ranges are for sweeps.
pub fn whole_number(name: &str, v: &Option<String>) -> CliResult<Option<u32>> {
    match v {
        None => Ok(None),
        Some(s) => s.trim().parse::<u32>().map(Some).map_err(|_| {
            CliError::usage(anyhow::anyhow!(
                "--{name} {s:?}: expected a whole number (lists and ranges are for `iopath sweep`)"
            ))
        }),
    }
}

/// Checks that the drives a workload names exist, before anything runs, with the same
/// [`bind`](iopath_model::bind) as `check` and `measure`; a problem is reported against the
/// option that named them (`--copy D:X: no drive has id "X"`).
pub fn check_targets(topo: &Topology, spec: &WorkloadSpec, w: &iopath_model::Workload) -> CliResult<()> {
    if let Err(e) = iopath_model::bind::bind_pool(topo, w) {
        return Err(CliError::usage(anyhow::anyhow!("--pool {}: {e}", w.pool.as_deref().unwrap_or_default())));
    }
    if let Some(c) = &w.client
        && topo.client(c).is_none()
    {
        let ids: Vec<&str> = topo.clients.iter().map(|c| c.id.as_str()).collect();
        let have = if ids.is_empty() {
            "it has no [[client]] tables".to_string()
        } else {
            format!("its clients are {}", ids.join(", "))
        };
        return Err(CliError::usage(anyhow::anyhow!("--client {c}: {} has no client {c:?}; {have}", topo.file)));
    }
    let ids: Vec<&str> = topo.drives.iter().map(|&d| topo.nodes[d].id.as_str()).collect();
    match iopath_model::bind::bind_workload(&ids, w) {
        Ok(_) => Ok(()),
        Err(e) => Err(bind_error(spec, &e)),
    }
}

/// A binding problem as a usage error, prefixed with the option it came from.
pub fn bind_error(spec: &WorkloadSpec, e: &iopath_model::bind::BindError) -> CliError {
    use iopath_model::bind::BindField;
    let option = match (e.field(), e.index()) {
        (BindField::Copy, Some(i)) => spec.copy.as_ref().and_then(|c| c.get(i)).map(|c| format!("--copy {c}")),
        (BindField::Copy, None) => spec.copy.as_ref().map(|c| format!("--copy {}", c.join(" --copy "))),
        (BindField::Drives, _) => spec.drives.as_ref().map(|d| format!("--drives {}", d.join(","))),
        (BindField::Active, _) => spec.active.map(|n| format!("--active {n}")),
    };
    CliError::usage(anyhow::anyhow!("{}: {e}", option.unwrap_or_else(|| "the workload".to_string())))
}

/// Resolves a workload spec, mapping every problem to one usage error.
pub fn resolve_workload(spec: &WorkloadSpec) -> CliResult<iopath_model::Workload> {
    spec.resolve().map_err(|errs| {
        let lines: Vec<String> = errs.iter().map(|e| format!("--{}: {}", e.field, e.message)).collect();
        CliError::usage(anyhow::anyhow!("{}", lines.join("\n       ")))
    })
}

/// `--replications N`: a count of seeds in 1..=MAX_REPLICATIONS, checked before anything runs.
pub fn replications_arg(s: &str) -> Result<u32, String> {
    let max = iopath_sim::MAX_REPLICATIONS;
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=u64::from(max)).contains(&n) => Ok(n as u32),
        _ => Err(format!(
            "--replications {}: expected a number of seeds from 1 to {max} (the spread of a mean \
             shrinks as 1/sqrt(n): {max} seeds already put it at 3% of one seed's)",
            s.trim()
        )),
    }
}

/// A wall clock for cost reports (the simulator never reads one itself).
pub fn wall_clock() -> impl Fn() -> f64 + Sync {
    let t0 = std::time::Instant::now();
    move || t0.elapsed().as_secs_f64()
}

/// Sets the returned flag on Ctrl-C, so long runs stop cleanly and keep what they have.
pub fn interrupt_flag() -> &'static std::sync::atomic::AtomicBool {
    static FLAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| FLAG.store(true, std::sync::atomic::Ordering::SeqCst));
    });
    &FLAG
}

/// Whether progress may be drawn: stderr is a terminal and the user did not ask for quiet.
pub fn show_progress(quiet: bool) -> bool {
    use std::io::IsTerminal;
    !quiet && std::io::stderr().is_terminal()
}

/// Writes a JSON document to stdout (a closed pipe is a quiet success, as for text).
pub fn print_json<T: serde::Serialize>(v: &T) -> CliResult<()> {
    let mut text = serde_json::to_string_pretty(v).map_err(|e| CliError::runtime(anyhow::Error::from(e)))?;
    text.push('\n');
    print_text(&text)
}

/// Prints text to stdout, turning a closed pipe into a quiet success.
pub fn print_text(s: &str) -> CliResult<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}
