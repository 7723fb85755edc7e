//! `iopath report TOPOLOGY --out DIR`: one self-contained HTML page a person planning a
//! build would print: the tree, the bound, the standard sweeps, per-link utilization at
//! full load.
use super::sweep::load_measured;
use super::{CliError, CliResult, WorkloadArgs, interrupt_flag, load_topology, wall_clock};
use iopath_model::Catalog;
use iopath_model::paths::ResourceGraph;
use iopath_reports::export::PAGE_SET;
use iopath_reports::html::{BoundRow, HtmlReport, HtmlSection, SuggestionRow, TreeRow, Verdict, html_report};
use iopath_reports::plot::{MeasuredSeries, PlotOptions, sweep_svg_string};
use iopath_reports::tree::{bound_table, tree};
use iopath_sim::{Axis, SimOptions};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Topology file (see configs/ for examples).
    pub topology: PathBuf,
    /// Directory for report.html (and report.json, the full-load run), swapped in whole; an
    /// existing DIR must hold only those files, and a symbolic link is refused. A name
    /// ending in .html writes only the page, one in .json only the full-load run.
    #[arg(long, value_name = "DIR|FILE")]
    pub out: PathBuf,
    /// Override a part figure of one node: NODE.PARAM=VALUE (repeatable).
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    pub set: Vec<String>,
    /// Measured or published points to overlay on the sequential-read chart (CSV x,mb_s[,label] or iopath JSON).
    #[arg(long, value_name = "FILE")]
    pub measured: Vec<PathBuf>,
    /// The workload of the verdict and the utilization section (default: 1 MiB sequential
    /// reads at QD 8 on every drive); its --runtime is the simulated time of every point
    /// (default 1s).
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Suggestions from `iopath advise` shown under the verdict.
    #[arg(long, default_value_t = 3)]
    pub suggestions: usize,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: ReportArgs, cat: &Catalog) -> CliResult {
    use iopath_reports::export::{Bare, OutFormat};
    let out = super::output::target("--out", &a.out, &[OutFormat::Html, OutFormat::Json], Bare::Dir, PAGE_SET)?;
    let t = load_topology(&a.topology, cat, &a.set)?;
    super::report_pool::check(&t, a.workload.pool.as_deref(), a.workload.client.as_deref())?;
    let runtime = a.workload.runtime.clone().unwrap_or_else(|| "1s".to_string());
    iopath_model::units::parse_duration(&runtime).map_err(|e| CliError::usage(anyhow::anyhow!("--runtime: {e}")))?;
    let user = a.workload.spec(&t)?;
    let chosen = user != iopath_model::WorkloadSpec { runtime: user.runtime.clone(), ..Default::default() };
    let mut full_spec = if chosen { user } else { iopath_reports::page::full_load(&runtime) };
    full_spec.runtime.get_or_insert_with(|| runtime.clone());
    let full_w = super::resolve_workload(&full_spec)?;
    super::check_targets(&t, &full_spec, &full_w)?;
    let mut measured: Vec<MeasuredSeries> = Vec::new();
    for m in &a.measured {
        measured.extend(load_measured(m)?);
    }
    let g = ResourceGraph::new(&t);
    let tree_rows: Vec<TreeRow> = tree(&t, &g)
        .into_iter()
        .map(|n| TreeRow {
            depth: n.depth,
            id: n.id,
            part: n.part,
            link: n.link.as_ref().map(|l| l.spec.clone()).unwrap_or_default(),
            // The host has no link and an internal one has no modelled limit: both print "-".
            read_mb_s: n.link.as_ref().map(|l| l.read_payload_mb_s).filter(|v| v.is_finite()).unwrap_or(0.0),
            write_mb_s: n.link.as_ref().map(|l| l.write_payload_mb_s).filter(|v| v.is_finite()).unwrap_or(0.0),
        })
        .collect();
    let bounds: Vec<BoundRow> = bound_table(&t, &g, 1 << 20)
        .chunks(3)
        .map(|c| BoundRow {
            active: c[0].active,
            read_mb_s: c[0].total_mb_s,
            read_binding: c[0].binding.clone(),
            write_mb_s: c[1].total_mb_s,
            write_binding: c[1].binding.clone(),
            mixed_mb_s: c[2].total_mb_s,
            mixed_binding: c[2].binding.clone(),
        })
        .collect();
    let n = t.drives.len();
    let plan = iopath_reports::page::standard_sweeps(&t, &runtime);
    if let Ok(p) = super::estimate::pilot(&t, &full_w) {
        let (sim_s, per_s) = p.rate();
        let runs = iopath_reports::page::full_load_runs(n);
        if let Some(msg) = super::estimate::warning("this report", sim_s, per_s, runs)
            && !a.quiet
        {
            eprintln!("warning: {msg}");
        }
    }
    let bar = super::progress::bar(a.quiet, (plan.len() * n + 6) as u64, super::progress::Unit::Steps("runs"));
    let clock = wall_clock();
    let opts = SimOptions { cancel: Some(interrupt_flag()), wall_clock: Some(&clock), ..Default::default() };
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let mut sections = Vec::new();
    let mut partial = false;
    for s in &plan {
        let axis = Axis { param: s.param.to_string(), values: s.values.clone() };
        let sweep = iopath_sim::sweep(&t, &s.workload, std::slice::from_ref(&axis), 1, &opts, &tick);
        partial |= sweep.partial;
        let m: &[MeasuredSeries] = if s.overlay_measured { &measured } else { &[] };
        let svg =
            sweep_svg_string(&sweep, m, &PlotOptions { width: 900, height: 520, iops: s.iops, ..Default::default() })
                .ok();
        let mut section = HtmlSection::for_sweep(s.title, &sweep, svg);
        if let (Some(note), Some(text)) = (&s.note, section.text.as_mut()) {
            text.push(' ');
            text.push_str(note);
        }
        sections.push(section);
    }
    let (pool, cut) =
        super::report_pool::section(&t, a.workload.pool.as_deref(), a.workload.client.as_deref(), &runtime, &opts)?;
    sections.extend(pool);
    partial |= cut;
    let full = iopath_sim::simulate(&t, &full_w, &opts).map_err(super::simulate::sim_error)?;
    partial |= full.partial;
    let verdict = verdict(&t, &full_spec, &full_w, &full, a.suggestions, &opts);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let page = html_report(&HtmlReport {
        title: t.name.clone(),
        subtitle: Some(if t.source.is_empty() {
            t.description.clone()
        } else {
            format!("{} ({})", t.description, t.source)
        }),
        tree: tree_rows,
        bounds,
        verdict: Some(verdict),
        sections,
        full_load: Some(full.clone()),
        footer: vec![
            format!("Generated by iopath {} from {}.", env!("CARGO_PKG_VERSION"), t.file),
            "Simulated: every figure comes from the built-in catalog (iopath catalog PART shows its source)."
                .to_string(),
        ],
    });
    let bytes = serde_json::to_vec_pretty(&full).map_err(|e| CliError::runtime(anyhow::Error::from(e)))?;
    let files = [("report.html".to_string(), page.into_bytes()), ("report.json".to_string(), bytes)];
    let written = super::output::write_target("--out", &out, &files, PAGE_SET)?;
    if !a.quiet {
        eprintln!("wrote {}", written[0].display());
    }
    Ok(if partial { super::exit::INTERRUPTED } else { 0 })
}

/// The page's verdict: the sentence on the chosen workload's run, and the best changes
/// `advise` finds for it (each simulated with the same workload).
fn verdict(
    t: &iopath_model::Topology,
    spec: &iopath_model::WorkloadSpec,
    w: &iopath_model::Workload,
    full: &iopath_model::report::Report,
    top: usize,
    opts: &SimOptions,
) -> Verdict {
    use iopath_sim::advise::{AdviseOptions, Goal, advise};
    let drives = iopath_sim::target_drives(t, w).unwrap_or_default();
    let alone = iopath_reports::page::drives_alone_mb_s(t, w, &drives);
    let sentence = iopath_reports::page::verdict_sentence(full, alone);
    if top == 0 {
        return Verdict { sentence, note: None, suggestions: Vec::new() };
    }
    match advise(t, &Goal::Answer, spec, &AdviseOptions { max_simulated: 24, prices: None }, opts) {
        Ok(a) => {
            let unit = a.unit;
            let v = |x: f64| if unit == "h" { format!("{x:.2} h") } else { format!("{x:.1} {unit}") };
            let suggestions = a
                .suggestions
                .iter()
                .take(top)
                .map(|s| SuggestionRow {
                    change: s.change.clone(),
                    result: format!("{} -> {}", v(a.value), v(s.value)),
                    gain: if unit == "h" {
                        format!("{:.2} h faster ({:+.1}%)", s.gain, -s.gain_pct)
                    } else {
                        format!("+{} ({:+.1}%)", v(s.gain), s.gain_pct)
                    },
                    then_binds: format!("{} ({:.0}%)", s.bottleneck.id, 100.0 * s.bottleneck.util),
                    cost: s.cost.clone(),
                })
                .collect();
            let note = Some(format!(
                "Changes from iopath advise with the same workload: {} considered, {} refused by the loader, {} \
                 pruned by the closed-form bound, {} simulated; `iopath advise {}` lists them all.",
                a.considered, a.invalid, a.pruned, a.simulated, t.file
            ));
            Verdict { sentence, note, suggestions }
        }
        Err(e) => Verdict { sentence, note: Some(format!("No suggestions: {e}")), suggestions: Vec::new() },
    }
}
