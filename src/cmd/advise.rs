//! `iopath advise TOPOLOGY [workload] [--goal ...]`: the changes that raise the answer,
//! each simulated, best first (logic in `iopath_sim::advise`).
use super::{CliError, CliResult, WorkloadArgs, interrupt_flag, load_topology, print_json, print_text};
use iopath_model::Catalog;
use iopath_sim::SimOptions;
use iopath_sim::advise::{Advice, AdviseError, AdviseOptions, Goal, advise};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct AdviseArgs {
    /// Topology file (see configs/ for examples).
    pub topology: PathBuf,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// What to improve: all-drives-full-speed | saturate-client | scrub-under HOURS |
    /// rebuild-under HOURS | iops N. Default: the workload's answer (MB/s, or a task's hours).
    #[arg(long, num_args = 1..=2, value_name = "GOAL")]
    pub goal: Vec<String>,
    /// A price list, CSV `part,price` (iopath ships no prices): rank by gain per money.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Show this many suggestions.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Simulate at most this many candidates (those with the highest bounds).
    #[arg(long, default_value_t = 48)]
    pub max_simulated: usize,
    /// Write the topology with suggestion N (1 = the first) applied to --out.
    #[arg(long, value_name = "N", requires = "out")]
    pub apply: Option<usize>,
    /// The file --apply writes (atomically; never over a device node, FIFO or symbolic link).
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub out: Option<PathBuf>,
    /// Print the advice as one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// An advise error with the option that gave the value at fault.
pub fn advise_error(e: AdviseError) -> CliError {
    match e {
        AdviseError::Goal(g) => CliError::usage(anyhow::anyhow!("--goal: {g}")),
        AdviseError::Workload(m) => CliError::usage(anyhow::anyhow!("{m}")),
        AdviseError::Sim(s) => super::simulate::sim_error(s),
        AdviseError::Plan(m) => CliError::usage(anyhow::anyhow!("{m}")),
    }
}

/// Reads `--prices FILE`.
pub fn read_prices(p: &Path) -> CliResult<BTreeMap<String, f64>> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| CliError::usage(anyhow::anyhow!("--prices {}: cannot read: {e}", p.display())))?;
    iopath_sim::advise::parse_prices(&text)
        .map_err(|m| CliError::usage(anyhow::anyhow!("--prices {}:{m}", p.display())))
}

pub fn run(a: AdviseArgs, cat: &Catalog) -> CliResult {
    if let Some(out) = &a.out {
        super::output::check_file("--out", out)?;
    }
    let topo = load_topology(&a.topology, cat, &[])?;
    let spec = a.workload.spec(&topo)?;
    let goal =
        if a.goal.is_empty() { Goal::Answer } else { Goal::parse(&a.goal).map_err(|e| advise_error(e.into()))? };
    let prices = a.prices.as_deref().map(read_prices).transpose()?;
    let opts = AdviseOptions { max_simulated: a.max_simulated.max(1), prices };
    let sim = SimOptions { cancel: Some(interrupt_flag()), ..Default::default() };
    let advice = advise(&topo, &goal, &spec, &opts, &sim).map_err(advise_error)?;
    if let (Some(n), Some(out)) = (a.apply, &a.out) {
        let s = n.checked_sub(1).and_then(|i| advice.suggestions.get(i)).ok_or_else(|| {
            CliError::usage(anyhow::anyhow!("--apply {n}: there are {} suggestions", advice.suggestions.len()))
        })?;
        let text = format!(
            "# {} with the change suggested by `iopath advise`: {}\n# (comments of the original are not kept)\n{}",
            topo.file, s.change, s.topology_toml
        );
        super::output::write_file("--out", out, text.as_bytes())?;
    }
    if a.json {
        print_json(&advice)?;
    } else {
        print_text(&advice_text(&topo.file, &advice, a.top))?;
    }
    Ok(if interrupt_flag().load(std::sync::atomic::Ordering::SeqCst) { super::exit::INTERRUPTED } else { 0 })
}

fn value(v: f64, unit: &str) -> String {
    match unit {
        "h" => format!("{v:.2} h"),
        "IOPS" => format!("{v:.0} IOPS"),
        _ => format!("{v:.1} MB/s"),
    }
}

/// The advice as text: today's answer, then the suggestions best first.
pub fn advice_text(file: &str, a: &Advice, top: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let met = |m: Option<bool>| match m {
        Some(true) => " (goal met)",
        Some(false) => " (goal not met)",
        None => "",
    };
    let _ = writeln!(s, "{file}: goal: {}", a.goal_text);
    let _ = writeln!(
        s,
        "today: {}{}; bound {:.1} MB/s; binds {} ({:.1}%){}",
        value(a.value, a.unit),
        a.target.map(|t| format!(" of {} wanted", value(t, a.unit))).unwrap_or_default(),
        a.bound_mb_s,
        a.bottleneck.id,
        100.0 * a.bottleneck.util,
        met(a.met)
    );
    let _ = writeln!(
        s,
        "{} changes considered: {} refused by the loader, {} pruned by the bound, {} simulated",
        a.considered, a.invalid, a.pruned, a.simulated
    );
    if a.suggestions.is_empty() {
        let _ = writeln!(s, "no change considered improves it");
    }
    for (i, x) in a.suggestions.iter().take(top).enumerate() {
        let gain =
            if a.unit == "h" { format!("{:.2} h faster", x.gain) } else { format!("+{}", value(x.gain, a.unit)) };
        let _ = writeln!(s, "{}. {}", i + 1, x.change);
        let _ = writeln!(
            s,
            "   {} -> {} ({gain}, {:+.1}%); bound {:.1} MB/s; then binds {} ({:.1}%){}",
            value(a.value, a.unit),
            value(x.value, a.unit),
            x.gain_pct,
            x.bound_mb_s,
            x.bottleneck.id,
            100.0 * x.bottleneck.util,
            met(x.met)
        );
        let price = x.price.map(|p| format!("; price {p:.2}")).unwrap_or_default();
        let _ = writeln!(s, "   costs: {}{price}", x.cost);
        if !x.alternatives.is_empty() {
            let alts: Vec<String> = x
                .alternatives
                .iter()
                .map(|y| {
                    // A NIC bought for both ends is listed once.
                    let mut parts = y.parts.clone();
                    parts.dedup();
                    format!("{} ({})", parts.join(" + "), value(y.value, a.unit))
                })
                .collect();
            let _ = writeln!(s, "   the same with: {} (same gain within 1%, same bottleneck)", alts.join(", "));
        }
    }
    s
}
