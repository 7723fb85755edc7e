//! `iopath sweep TOPOLOGY [workload] --active 1..6 | --bs 4k,1m | --iodepth 1,32 |
//! --rwmixread 0..100:10 | --vary NODE.PARAM=V1,V2`: many runs in parallel (rayon).
use super::{
    CliError, CliResult, WorkloadArgs, interrupt_flag, load_topology, print_json, print_text, resolve_workload,
    wall_clock,
};
use iopath_model::{Catalog, Topology, WorkloadSpec};
use iopath_reports::plot::{MeasuredSeries, PlotOptions};
use iopath_sim::points::{AxisValue, PointProblem};
use iopath_sim::{Axis, SimOptions};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Topology file (see configs/ for examples).
    pub topology: PathBuf,
    /// Workload options; --active, --bs, --iodepth, --numjobs and --rwmixread take lists
    /// (4k,128k) or ranges (1..6, 0..100:10) to sweep.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Vary a part figure: NODE.PARAM=V1,V2,... (e.g. hba.lanes=1,2,4, pm.fbs=true,false),
    /// or a pool's option: pool.ID.FIELD=V1,V2 (pool.tank.layout=raidz1,raidz2,zfs-mirror:2,
    /// a ZFS layout's ":N" splitting the members into vdevs of N).
    #[arg(long, value_name = "NODE.PARAM=V1,V2")]
    pub vary: Vec<String>,
    /// Override a part figure for every point: NODE.PARAM=VALUE (repeatable).
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    pub set: Vec<String>,
    /// Seeds per point; the mean is reported with its spread.
    #[arg(long, default_value_t = 1, value_parser = super::replications_arg)]
    pub replications: u32,
    /// Measured points to overlay on the plot: a report or sweep from `iopath measure`, fio
    /// JSON output, or a CSV with columns x,mb_s[,label] (repeatable).
    #[arg(long, value_name = "FILE")]
    pub measured: Vec<PathBuf>,
    /// Print the sweep as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Write the sweep as one file in the format its extension names (.json, .csv, .md,
    /// .svg, .png), or sweep.json, sweep.csv, sweep.md and plots (SVG, PNG) as a directory
    /// (a path without an extension, an existing directory, or one ending in /): built aside
    /// and swapped in whole, so it never mixes two runs' files. An existing DIR must hold
    /// only those files; a symbolic link is refused.
    #[arg(long, value_name = "FILE|DIR")]
    pub out: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Whether a workload option's value is a list or range to sweep (`4k,128k`, `1..6`).
pub fn is_multi(v: &str) -> bool {
    v.contains(',') || v.contains("..")
}

/// Checks a list or range as written before it is expanded: an empty value (`1,2,,4`) is
/// a mistake, not a value to drop, and a range of drives cannot pass the topology's count.
fn check_list(option: &str, vals: &str, drives: usize) -> CliResult<()> {
    let usage = |m: String| Err(CliError::usage(anyhow::anyhow!("{option}: {m}")));
    if !vals.contains("..") {
        let parts: Vec<&str> = vals.split(',').collect();
        if let Some(i) = parts.iter().position(|v| v.trim().is_empty()) {
            return usage(format!(
                "value {} of {} is empty (a stray comma?); write the values separated by single commas",
                i + 1,
                parts.len()
            ));
        }
        return Ok(());
    }
    // A range that is well written but too long says so, not "is not a range".
    if let Some((a, rest)) = vals.split_once("..")
        && let Some((b, step)) = Some(rest.split_once(':').unwrap_or((rest, "1")))
        && let (Ok(lo), Ok(hi), Ok(step)) =
            (a.trim().parse::<i64>(), b.trim().parse::<i64>(), step.trim().parse::<i64>())
        && step > 0
        && lo <= hi
        && (hi - lo) / step > 10_000
        && !option.starts_with("--active")
    {
        return usage(format!(
            "{} values; a sweep takes at most 10,001 points per axis (use a step, e.g. {lo}..{hi}:{})",
            (hi - lo) / step + 1,
            ((hi - lo) / 100).max(1)
        ));
    }
    if option.starts_with("--active")
        && let Some((a, rest)) = vals.split_once("..")
        && let (Ok(lo), Ok(hi)) = (a.trim().parse::<u64>(), rest.split(':').next().unwrap_or("").trim().parse::<u64>())
        && lo <= hi
        && hi > drives as u64
    {
        return usage(format!(
            "the topology has only {drives} drive{}; sweep at most 1..{drives}",
            if drives == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

/// Splits the workload options into the fixed ones and the swept axes. `drives` is the
/// number of drives in the topology (for `--active` ranges).
pub fn axes_of(a: &mut WorkloadArgs, vary: &[String], drives: usize) -> CliResult<Vec<Axis>> {
    let mut axes = Vec::new();
    for (name, slot) in [
        ("active", &mut a.active),
        ("bs", &mut a.bs),
        ("iodepth", &mut a.iodepth),
        ("numjobs", &mut a.numjobs),
        ("rwmixread", &mut a.rwmixread),
    ] {
        if let Some(v) = slot.clone()
            && is_multi(&v)
        {
            let option = format!("--{name} {v}");
            check_list(&option, &v, drives)?;
            axes.push(Axis::parse(name, &v).map_err(|e| CliError::usage(anyhow::anyhow!("{option}: {e}")))?);
            *slot = None;
        }
    }
    for v in vary {
        let option = format!("--vary {v}");
        let (p, vals) = v
            .split_once('=')
            .ok_or_else(|| CliError::usage(anyhow::anyhow!("{option}: expected NODE.PARAM=V1,V2,...")))?;
        check_list(&option, vals, drives)?;
        axes.push(Axis::parse(p, vals).map_err(|e| CliError::usage(anyhow::anyhow!("{option}: {e}")))?);
    }
    if axes.is_empty() {
        return Err(CliError::usage(anyhow::anyhow!(
            "nothing to sweep: give a list or range, e.g. --active 1..6, --bs 4k,128k,1m, --iodepth 1,8,32 or --vary hba.lanes=1,2"
        )));
    }
    if axes.len() > 2 {
        return Err(CliError::usage(anyhow::anyhow!(
            "a sweep varies one or two parameters; {} were given",
            axes.len()
        )));
    }
    Ok(axes)
}

/// Reads points to overlay through the one reader of measured files
/// (`iopath_validate::calibrate::read`): iopath reports and sweeps (JSON), iopath's own
/// `sweep.csv`, fio JSON output, or a CSV of `x,mb_s[,label]`.
pub fn load_measured(path: &Path) -> CliResult<Vec<MeasuredSeries>> {
    let label = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let m = iopath_validate::calibrate::read(path).map_err(super::fit::input)?;
    let series = iopath_validate::calibrate::overlay(&label, &m).map_err(super::fit::input)?;
    Ok(series.into_iter().map(|s| MeasuredSeries { label: s.label, points: s.points }).collect())
}

/// The option that gave an axis value, as the user wrote it (`--bs 0`, `--vary hba.lanes=3`).
fn option_of(at: &AxisValue) -> String {
    if at.is_figure() { format!("--vary {}={}", at.param, at.value) } else { format!("--{} {}", at.param, at.value) }
}

/// One problem of a sweep point as the command line reports it: named by the options that
/// make up the point.
fn point_message(p: &PointProblem) -> String {
    let named = |at: &[AxisValue]| at.iter().map(option_of).collect::<Vec<_>>().join(" ");
    match p {
        PointProblem::Empty { .. } | PointProblem::Figure(_) => p.to_string(),
        PointProblem::Value { at, message } => format!("{}: {message}", option_of(at)),
        PointProblem::Workload { at, .. } | PointProblem::Run { at, .. } => format!("{}: {p}", named(at)),
    }
}

/// Checks every point's topology and workload, with the checks `simulate` makes, before any
/// point runs (`iopath_sim::points`): a bad axis value is a usage error (exit 2) listing
/// every problem, and nothing is simulated.
pub fn check_points(topo: &Topology, base: &WorkloadSpec, axes: &[Axis]) -> CliResult<()> {
    // Drives and copies named outside the axes are wrong at every point: say so once.
    if let Ok(w) = base.resolve() {
        super::check_targets(topo, base, &w)?;
    }
    let problems: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for p in iopath_sim::points::check_points(topo, base, axes, &option_of) {
            let m = point_message(&p);
            if !v.contains(&m) {
                v.push(m);
            }
        }
        v
    };
    if problems.is_empty() {
        return Ok(());
    }
    let n = problems.len();
    Err(CliError::usage(anyhow::anyhow!(
        "{}\n{n} problem{} found before running; no point was simulated",
        problems.join("\nerror: "),
        if n == 1 { "" } else { "s" }
    )))
}

pub fn run(mut a: SweepArgs, cat: &Catalog) -> CliResult {
    use iopath_reports::export::{Bare, SWEEP_FORMATS, SWEEP_SET};
    let out = match &a.out {
        Some(p) => Some(super::output::target("--out", p, SWEEP_FORMATS, Bare::Dir, SWEEP_SET)?),
        None => None,
    };
    let topo = load_topology(&a.topology, cat, &a.set)?;
    let replications = super::replications(a.replications)?;
    let axes = axes_of(&mut a.workload, &a.vary, topo.drives.len())?;
    let base = a.workload.spec(&topo)?;
    // Check the fixed part of the workload, then every point, before any point runs.
    resolve_workload(&base)?;
    check_points(&topo, &base, &axes)?;
    let mut measured = Vec::new();
    for m in &a.measured {
        measured.extend(load_measured(m)?);
    }
    let total: usize = axes.iter().map(|x| x.values.len()).product();
    // A point that cannot run fails on its own, in the sweep; only a runnable one is timed.
    if let Ok((owned, w)) = iopath_sim::costliest_point(&topo, &base, &axes)
        && let Ok(p) = super::estimate::pilot(owned.as_ref().unwrap_or(&topo), &w)
    {
        let (sim_s, per_s) = p.rate();
        let runs = total as f64 * f64::from(a.replications);
        let what = format!("this sweep of {total} points");
        if let Some(msg) = super::estimate::warning(&what, sim_s, per_s, runs)
            && !a.quiet
        {
            eprintln!("warning: {msg} (the estimate times the costliest point)");
        }
    }
    let bar = super::progress::bar(a.quiet, total as u64, super::progress::Unit::Steps("points"));
    let clock = wall_clock();
    let opts = SimOptions { cancel: Some(interrupt_flag()), wall_clock: Some(&clock), ..Default::default() };
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let sweep = iopath_sim::sweep(&topo, &base, &axes, replications, &opts, &tick);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(out) = &out {
        let opts = PlotOptions::default();
        let written = iopath_reports::export::write_sweep_to(out, &sweep, &measured, &opts)
            .map_err(|e| super::output::error("--out", e))?;
        if !a.quiet {
            for p in written {
                eprintln!("wrote {}", p.display());
            }
        }
    }
    if a.json {
        print_json(&sweep)?;
    } else {
        print_text(&iopath_reports::tables::sweep_table(&sweep))?;
    }
    if sweep.partial {
        let not_run = sweep.points.iter().filter(|p| p.report.is_none()).count();
        let cut = sweep.points.iter().filter(|p| p.report.as_ref().is_some_and(|r| r.partial)).count();
        eprintln!(
            "warning: interrupted: {cut} of {} points cover only part of their run and {not_run} did not run; \
             every output marks them partial",
            sweep.points.len()
        );
        return Ok(super::exit::INTERRUPTED);
    }
    let failed = sweep.points.iter().filter(|p| p.error.is_some()).count();
    if failed > 0 {
        eprintln!("error: {failed} of {} points failed; see their `error` fields", sweep.points.len());
        return Ok(super::exit::RUNTIME);
    }
    Ok(0)
}
