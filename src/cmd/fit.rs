//! `iopath fit TOPOLOGY MEASUREMENTS... --free NODE.PARAM[=LO..HI] ...`: least squares over
//! the free figures, each measured point predicted by simulating its workload; prints the
//! fitted figures with standard errors, the residuals and the error before and after, and
//! writes a part file (`--out`) that `iopath --parts FILE` loads over the catalog.
use super::{CliError, CliResult, interrupt_flag, load_topology, parse_sets, print_json, print_text, show_progress};
use iopath_model::Catalog;
use iopath_validate::calibrate::{self, CalibrateError, FitOptions, FitResult, FreeSpec, LoadOptions, Point};
use std::path::PathBuf;

/// What `fit` and `compare` share: the topology, the measurements, and how each measured
/// point is simulated.
#[derive(Debug, clap::Args)]
pub struct MeasuredArgs {
    /// Topology file the measurements were taken on.
    pub topology: PathBuf,
    /// Measured reports or ramps (`iopath measure --json --out`), fio JSON output, or CSV
    /// tables of published points (columns rw,bs,iodepth,numjobs,active|drives,region,set,
    /// mb_s|mib_s|iops[,weight]).
    #[arg(required = true, value_name = "MEASUREMENTS")]
    pub measurements: Vec<PathBuf>,
    /// fio job (or target) to drive: JOB=DRIVE,... (repeatable).
    #[arg(long, value_name = "JOB=DRIVE,...")]
    pub map: Vec<String>,
    /// Override a figure for every point (for `fit`, also the starting value of a free one).
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    pub set: Vec<String>,
    /// Simulated seconds per point at most (the measured runtime, capped here).
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub sim_runtime: f64,
    /// Seeds per simulated point (their mean is what counts).
    #[arg(long, default_value_t = 1, value_parser = super::replications_arg)]
    pub replications: u32,
    /// Seed of the simulations.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl MeasuredArgs {
    /// Checks the options, loads the topology with `--set` applied, and returns the options
    /// every point is simulated with.
    pub fn topology_and_options(&self, cat: &Catalog) -> CliResult<(iopath_model::Topology, FitOptions<'static>)> {
        check_runtime(self.sim_runtime)?;
        let sets = parse_sets(&self.set)?;
        let topo = load_topology(&self.topology, cat, &self.set)?;
        let opts = FitOptions {
            max_runtime_s: self.sim_runtime,
            seed: self.seed,
            replications: super::replications(self.replications)?,
            sets,
            cancel: Some(interrupt_flag()),
            ..Default::default()
        };
        Ok((topo, opts))
    }
}

#[derive(Debug, clap::Args)]
pub struct FitArgs {
    #[command(flatten)]
    pub measured: MeasuredArgs,
    /// A figure to fit: NODE.PARAM or NODE.PARAM=LO..HI (repeatable); default bounds are
    /// the figure's range. The value is set on every node of the node's part.
    #[arg(long, required = true, value_name = "NODE.PARAM[=LO..HI]")]
    pub free: Vec<String>,
    /// Evaluations of all points at most.
    #[arg(long, default_value_t = 60)]
    pub max_evaluations: usize,
    /// Write the fitted figures as a part file (TOML) for `iopath --parts FILE` (atomically;
    /// a device node, FIFO or symbolic link there is refused).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the result as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A calibration error as the command line reports it: with the option that gave the value
/// (`--map`, `--free`); exit code from the table in [`super::exit`].
pub fn input(e: CalibrateError) -> CliError {
    match &e {
        CalibrateError::Map { .. } | CalibrateError::Free { .. } => {
            CliError::reworded(&e, format!("{} {e}", option_of(&e)))
        }
        CalibrateError::Unmapped { file, what, key, drives } => CliError::reworded(
            &e,
            format!("{file}: cannot tell which drive {what} ran on; give --map {key}=DRIVE (drives: {drives})"),
        ),
        CalibrateError::UnlistedGroup { file, job, jobs, named, drives } => CliError::reworded(
            &e,
            format!(
                "{file}: fio job {job:?} reports a group (group_reporting) of {} jobs whose files fio's JSON does not list (it names only {named:?}): its rate is the sum over the group's drives, not one drive's; name them with --map {job}=D1+D2 (drives of {drives})",
                jobs.map_or("several".to_string(), |n| n.to_string())
            ),
        ),
        CalibrateError::NothingToFit => {
            CliError::reworded(&e, "nothing to fit: give at least one --free NODE.PARAM".to_string())
        }
        _ => CliError::from_lib(None, e),
    }
}

fn option_of(e: &CalibrateError) -> &'static str {
    if matches!(e, CalibrateError::Map { .. }) { "--map" } else { "--free" }
}

/// Reads every measurement file into points (shared with `iopath compare`).
pub fn load_points(
    files: &[PathBuf],
    map: &[String],
    topo: &iopath_model::Topology,
) -> CliResult<(Vec<Point>, Vec<String>)> {
    let opts = LoadOptions { map: calibrate::parse_map(map).map_err(input)? };
    let mut points = Vec::new();
    let mut names = Vec::new();
    for f in files {
        points.extend(calibrate::load(f, topo, &opts).map_err(input)?);
        names.push(f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| f.display().to_string()));
    }
    Ok((points, names))
}

/// The CPU time per I/O of the measured runs among `files`.
fn cpu_cost(files: &[PathBuf]) -> CliResult<calibrate::CpuCost> {
    let mut read = Vec::new();
    for f in files {
        let name = f.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| f.display().to_string());
        read.push((name, calibrate::read(f).map_err(input)?));
    }
    calibrate::cpu_per_io(&read).map_err(|e| match &e {
        CalibrateError::Free { .. } => CliError::reworded(&e, format!("--free host.{e}")),
        _ => input(e),
    })
}

pub fn check_runtime(s: f64) -> CliResult<()> {
    if s.is_finite() && s > 0.0 && s <= 3600.0 {
        Ok(())
    } else {
        Err(CliError::usage(anyhow::anyhow!("--sim-runtime {s}: expected seconds in (0, 3600]")))
    }
}

pub fn run(a: FitArgs, cat: &Catalog) -> CliResult {
    if let Some(out) = &a.out {
        super::output::check_file("--out", out)?;
    }
    let m = &a.measured;
    let (topo, mut opts) = m.topology_and_options(cat)?;
    opts.max_evaluations = a.max_evaluations.max(2);
    let specs = a
        .free
        .iter()
        .map(|s| s.parse::<FreeSpec>().map_err(|m| CliError::usage(anyhow::anyhow!("--free {m}"))))
        .collect::<CliResult<Vec<_>>>()?;
    let frees = calibrate::resolve_free(&topo, &specs).map_err(input)?;
    if let Some(r) = surface_fit(&m.measurements, &frees)? {
        let names: Vec<String> = m.measurements.iter().map(|f| f.display().to_string()).collect();
        return finish(&a, &r, &names);
    }
    // The host's CPU time per I/O is fitted from the runs' measured CPU time, not simulated.
    let (cpu, frees): (Vec<_>, Vec<_>) = frees.into_iter().partition(calibrate::is_cpu_cost);
    let (points, names) = load_points(&m.measurements, &m.map, &topo)?;
    let cpu = match cpu.first() {
        Some(f) => Some((f.clone(), cpu_cost(&m.measurements)?)),
        None => None,
    };
    let base = iopath_model::Topology::load(&m.topology, cat).map_err(|e| CliError::usage(anyhow::anyhow!("{e}")))?;
    let show = show_progress(a.quiet);
    if !a.quiet {
        for f in &frees {
            if f.nodes.len() > 1 {
                eprintln!("note: {} is set on every node of part {}: {}", f.name(), f.part, f.nodes.join(", "));
            }
            let raw = base.raw();
            let mut set_in_file: Vec<String> = Vec::new();
            if f.nodes.iter().any(|n| n == "host")
                && raw.host.as_ref().is_some_and(|h| h.params.contains_key(f.param.as_str()))
            {
                set_in_file.push("host".into());
            }
            for n in
                raw.node.iter().filter(|n| f.nodes.contains(n.id.get_ref()) && n.params.contains_key(f.param.as_str()))
            {
                set_in_file.push(n.id.get_ref().clone());
            }
            for d in raw.drive.iter().filter(|d| d.part.get_ref() == &f.part && d.params.contains_key(f.param.as_str()))
            {
                set_in_file.push(d.id.get_ref().clone());
            }
            if !set_in_file.is_empty() {
                eprintln!(
                    "note: {} sets {} in its params in {}; those params win over --parts files, so remove them to use the fitted value",
                    set_in_file.join(", "),
                    f.param,
                    m.topology.display()
                );
            }
            if base.raw().part.iter().any(|p| p.id == f.part) {
                eprintln!(
                    "note: part {} is defined in {}; its [[part]] there wins over --parts files, so copy the fitted {} into it",
                    f.part,
                    m.topology.display(),
                    f.param
                );
            }
        }
    }
    let progress = |p: calibrate::FitProgress| {
        if show {
            eprint!(
                "\rfit: evaluation {}, {} simulations, RMS log error {:.4}   ",
                p.evaluations, p.simulations, p.rms_log
            );
        }
    };
    let r = if frees.is_empty() && cpu.is_some() {
        Ok(calibrate::direct_result())
    } else {
        calibrate::fit(&topo, &frees, &points, &opts, &progress)
    };
    if show {
        eprintln!();
    }
    if opts.cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
        // Predictions simulated after Ctrl-C cover only part of their runs: a figure fitted
        // to them would be wrong, so nothing is written.
        eprintln!("error: interrupted: the fit stopped before it converged; no part file was written");
        return Ok(super::exit::INTERRUPTED);
    }
    let mut r = r.map_err(input)?;
    if let Some((f, c)) = &cpu {
        r.params.push(calibrate::cpu_param(f, c));
    }
    finish(&a, &r, &names)
}

/// Writes the part file (`--out`) and prints the result.
fn finish(a: &FitArgs, r: &FitResult, names: &[String]) -> CliResult {
    if let Some(out) = &a.out {
        let text = calibrate::part_file(r, names).map_err(super::CliError::runtime)?;
        super::output::write_file("--out", out, text.as_bytes())?;
        if !a.quiet {
            eprintln!("wrote {}", out.display());
        }
    }
    if a.json {
        print_json(r)?;
    } else {
        print_text(&table(r))?;
    }
    if !a.quiet && !a.json {
        for w in &r.warnings {
            eprintln!("warning: {w}");
        }
        if r.termination == "evaluation budget spent" {
            eprintln!("  help: the evaluation limit is --max-evaluations");
        }
    }
    Ok(0)
}

/// The fit of an HDD's `outer_mb_s` and `inner_mb_s` to surface scans (`measure --surface`):
/// direct least squares on the zone curve (`calibrate::zones`), no simulation. `None` when
/// the measurements are not surface scans.
fn surface_fit(files: &[PathBuf], frees: &[calibrate::Free]) -> CliResult<Option<FitResult>> {
    use calibrate::zones;
    let mut scans = Vec::new();
    for f in files {
        scans.push(zones::read_surface(f).map_err(input)?);
    }
    if scans.iter().all(Option::is_none) {
        return Ok(None);
    }
    if scans.iter().any(Option::is_none) {
        return Err(CliError::usage(anyhow::anyhow!(
            "surface scans and other measurements cannot be fitted together: fit the surface scans on their own"
        )));
    }
    let find = |p: &str| frees.iter().find(|f| f.param == p);
    let (Some(o), Some(i)) = (find("outer_mb_s"), find("inner_mb_s")) else {
        return Err(CliError::usage(anyhow::anyhow!(
            "a surface scan fits an HDD's zone rates: give --free DRIVE.outer_mb_s --free DRIVE.inner_mb_s"
        )));
    };
    if frees.len() != 2 || o.node != i.node {
        return Err(CliError::usage(anyhow::anyhow!(
            "--free: a surface scan fits outer_mb_s and inner_mb_s of one drive, and nothing else"
        )));
    }
    let pts: Vec<(f64, f64)> = scans.iter().flatten().flat_map(zones::surface_points).collect();
    let z = zones::fit_zones(&pts).map_err(input)?;
    let mut r = calibrate::direct_result();
    let source = format!(
        "iopath fit: {}: least squares of the zone curve sqrt(outer^2 (1 - x) + inner^2 x) over {} surface points, RMS residual {:.2} MB/s",
        files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
        z.points,
        z.rms_mb_s
    );
    r.params.push(calibrate::FittedParam::of(o, z.outer_mb_s, z.outer_se, Some(source.clone())));
    r.params.push(calibrate::FittedParam::of(i, z.inner_mb_s, z.inner_se, Some(source)));
    let before: Vec<f64> = pts.iter().map(|p| iopath_model::surface::zone_rate(o.start, i.start, p.0)).collect();
    let after: Vec<f64> =
        pts.iter().map(|p| iopath_model::surface::zone_rate(z.outer_mb_s, z.inner_mb_s, p.0)).collect();
    let obs: Vec<f64> = pts.iter().map(|p| p.1).collect();
    r.before = calibrate::ErrorStats::of(&before, &obs);
    r.after = calibrate::ErrorStats::of(&after, &obs);
    r.termination = "fitted to the surface scans' zone curve by least squares, no simulation".to_string();
    Ok(Some(r))
}

fn table(r: &FitResult) -> String {
    let mut s = String::new();
    s += &format!("{:<34} {:>12} {:>12} {:>12}  part\n", "figure", "start", "fitted", "std err");
    for p in &r.params {
        let se = p.std_err.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
        s += &format!(
            "{:<34} {:>12.4} {:>12.4} {:>12}  {}\n",
            format!("{}.{}", p.node, p.param),
            p.start,
            p.value,
            se,
            p.part
        );
    }
    for (a, b, c) in &r.correlations {
        s += &format!("correlation {a} / {b}: {c:+.3}\n");
    }
    s += &format!(
        "\n{:<44} {:>10} {:>10} {:>8} {:>10} {:>8}\n",
        "point", "observed", "before", "err %", "after", "err %"
    );
    for p in &r.points {
        let what = match &p.drive {
            Some(d) => format!("{} [{d}]", p.workload),
            None => p.workload.clone(),
        };
        s += &format!(
            "{:<44} {:>10.2} {:>10.2} {:>+8.1} {:>10.2} {:>+8.1}  {} {}\n",
            what,
            p.observed,
            p.before,
            p.err_before_pct,
            p.after,
            p.err_after_pct,
            p.metric.unit(),
            p.label
        );
    }
    s += &format!(
        "\nerror before: RMS log {:.4}, MAPE {:.2}%\nerror after:  RMS log {:.4}, MAPE {:.2}%\n{} evaluations, {} simulations ({})\n",
        r.before.rms_log,
        r.before.mape_pct,
        r.after.rms_log,
        r.after.mape_pct,
        r.evaluations,
        r.simulations,
        r.termination
    );
    s
}
