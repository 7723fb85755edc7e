//! `iopath plan --board B | --host H --slot LINK... --drives NxPART [--client LINK] [--goal ...]`:
//! candidate builds from the catalog, pruned by the bound, the best simulated (logic in
//! `iopath_sim::advise::plan`).
use super::advise::{advise_error, read_prices};
use super::{CliError, CliResult, interrupt_flag, print_json, print_text};
use iopath_model::{Catalog, WorkloadSpec};
use iopath_sim::SimOptions;
use iopath_sim::advise::Goal;
use iopath_sim::advise::plan::{Plan, PlanBuild, PlanRequest, Platform, plan};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// A catalog board (`iopath catalog` lists them): its slots, M.2 sockets and SATA ports.
    #[arg(long, conflicts_with = "host", required_unless_present = "host")]
    pub board: Option<String>,
    /// Or a host part, with --slot and --onboard saying what it offers.
    #[arg(long)]
    pub host: Option<String>,
    /// A CPU-attached slot of the host, as wired (`pcie3x4`; repeatable).
    #[arg(long = "slot", value_name = "LINK", requires = "host")]
    pub slots: Vec<String>,
    /// An onboard SATA controller of the host (a catalog part, e.g. intel-n100-sata; repeatable).
    #[arg(long = "onboard", value_name = "PART", requires = "host")]
    pub onboard: Vec<String>,
    /// The drives: COUNTxPART, e.g. 8xtoshiba-n300-8tb.
    #[arg(long, value_name = "COUNTxPART")]
    pub drives: String,
    /// A client's link (1GbE, 2.5GbE, 10GbE, ...): adds a NIC, the client and a pool of all
    /// drives, and the goal becomes saturate-client unless given.
    #[arg(long, value_name = "LINK")]
    pub client: Option<String>,
    /// The pool's layout with --client (default raidz2).
    #[arg(long, value_name = "LAYOUT", requires = "client")]
    pub pool: Option<String>,
    /// all-drives-full-speed (default) | saturate-client | scrub-under HOURS | rebuild-under
    /// HOURS | iops N.
    #[arg(long, num_args = 1..=2, value_name = "GOAL")]
    pub goal: Vec<String>,
    /// A price list, CSV `part,price` (iopath ships no prices).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Simulated time of each build ("1s"; default: as `simulate`).
    #[arg(long)]
    pub runtime: Option<String>,
    /// Show this many builds.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Simulate at most this many builds (those with the highest bounds).
    #[arg(long, default_value_t = 24)]
    pub max_simulated: usize,
    /// Print the plan as one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// `8xtoshiba-n300-8tb` as (part, count).
fn drives_arg(s: &str) -> CliResult<(String, usize)> {
    let bad = || {
        CliError::usage(anyhow::anyhow!(
            "--drives {s:?}: expected COUNTxPART, e.g. 8xtoshiba-n300-8tb (1 to 1024 drives)"
        ))
    };
    let (n, part) = s.trim().split_once('x').ok_or_else(bad)?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || n > 1024 || part.trim().is_empty() {
        return Err(bad());
    }
    Ok((part.trim().to_string(), n))
}

pub fn run(a: PlanArgs, cat: &Catalog) -> CliResult {
    let (drive, count) = drives_arg(&a.drives)?;
    let platform = match (&a.board, &a.host) {
        (Some(b), _) => Platform::Board(b.clone()),
        (None, Some(h)) => {
            if a.slots.is_empty() && a.onboard.is_empty() {
                return Err(CliError::usage(anyhow::anyhow!(
                    "--host {h}: say what it offers: --slot LINK for each slot (pcie3x4) and --onboard PART for onboard SATA"
                )));
            }
            Platform::Host { part: h.clone(), slots: a.slots.clone(), onboard: a.onboard.clone() }
        }
        (None, None) => unreachable!("clap requires --board or --host"),
    };
    if let Some(r) = &a.runtime {
        iopath_model::units::parse_duration(r).map_err(|e| CliError::usage(anyhow::anyhow!("--runtime: {e}")))?;
    }
    let goal = match (a.goal.is_empty(), &a.client) {
        (false, _) => Goal::parse(&a.goal).map_err(|e| advise_error(e.into()))?,
        (true, Some(_)) => Goal::SaturateClient,
        (true, None) => Goal::AllDrivesFullSpeed,
    };
    let prices = a.prices.as_deref().map(read_prices).transpose()?;
    let req = PlanRequest {
        platform,
        drive,
        count,
        client: a.client.clone(),
        pool_layout: a.pool.clone(),
        goal,
        workload: WorkloadSpec { runtime: a.runtime.clone(), ..Default::default() },
        max_simulated: a.max_simulated,
        prices,
    };
    let sim = SimOptions { cancel: Some(interrupt_flag()), ..Default::default() };
    let p = plan(&req, cat, &sim).map_err(advise_error)?;
    if a.json {
        print_json(&p)?;
    } else {
        print_text(&plan_text(&p, a.top))?;
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

fn build_line(b: &PlanBuild, unit: &str) -> String {
    let met = match b.met {
        Some(true) => ", goal met",
        Some(false) => ", goal not met",
        None => "",
    };
    let price = b.price.map(|p| format!(", price {p:.2}")).unwrap_or_default();
    format!(
        "{} (bound {:.1} MB/s), binds {} ({:.0}%), busiest link {} ({:.0}%); {} slot{} used{price}{met}",
        value(b.value, unit),
        b.bound_mb_s,
        b.bottleneck.id,
        100.0 * b.bottleneck.util,
        b.busiest_link.id,
        100.0 * b.busiest_link.util,
        b.slots_used,
        if b.slots_used == 1 { "" } else { "s" }
    )
}

/// The plan as text: the best builds, then the trade-off by slots used.
pub fn plan_text(p: &Plan, top: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "goal: {}{}",
        p.goal_text,
        p.target.map(|t| format!(" ({} wanted)", value(t, p.unit))).unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "{} builds considered: {} with a card another does better in its place, {} refused by the loader, {} pruned \
         by the bound, {} simulated",
        p.considered, p.dominated, p.invalid, p.pruned, p.simulated
    );
    for (i, b) in p.builds.iter().take(top).enumerate() {
        let _ = writeln!(s, "{}. {}\n   {}", i + 1, b.summary, build_line(b, p.unit));
    }
    let _ = writeln!(s, "\ntrade-off (the best build for each number of slots used):");
    for b in &p.tradeoff {
        let _ = writeln!(s, "  {} slot(s): {}\n     {}", b.slots_used, b.summary, build_line(b, p.unit));
    }
    s
}
