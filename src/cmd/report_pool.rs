//! `iopath report --pool ID [--client ID]`: the page's pool section, the chain from the
//! client to the drives (`iopath_reports::page_pool`; its runs are defined there).
use super::{CliError, CliResult};
use iopath_model::Topology;
use iopath_model::catalog::{did_you_mean, suggest};
use iopath_reports::HtmlSection;
use iopath_reports::page_pool::{PoolRun, pool_runs, pool_section};
use iopath_sim::SimOptions;

/// Checks `--pool` and `--client` against the topology before anything runs.
pub fn check(t: &Topology, pool: Option<&str>, client: Option<&str>) -> CliResult<()> {
    let usage = |m: String| Err(CliError::usage(anyhow::anyhow!(m)));
    if let Some(c) = client {
        if pool.is_none() {
            return usage(format!("--client {c}: a client reads or writes a pool; add --pool ID"));
        }
        if t.client(c).is_none() {
            let ids: Vec<&str> = t.clients.iter().map(|c| c.id.as_str()).collect();
            return usage(format!(
                "--client {c}: no client has id {c:?}{}",
                did_you_mean(&suggest(c, ids.iter().copied()))
            ));
        }
    }
    if let Some(p) = pool
        && t.pool(p).is_none()
    {
        let ids: Vec<&str> = t.pools.iter().map(|p| p.id.as_str()).collect();
        let more = if ids.is_empty() { " (the topology has no [[pool]])".to_string() } else { String::new() };
        return usage(format!(
            "--pool {p}: no pool has id {p:?}{}{more}",
            did_you_mean(&suggest(p, ids.iter().copied()))
        ));
    }
    Ok(())
}

/// Runs the page's pool workloads and builds the section (`None` without `--pool`); the
/// second value is whether a run was interrupted.
pub fn section(
    t: &Topology,
    pool: Option<&str>,
    client: Option<&str>,
    runtime: &str,
    opts: &SimOptions,
) -> CliResult<(Option<HtmlSection>, bool)> {
    let Some(pool) = pool else { return Ok((None, false)) };
    let mut done = Vec::new();
    for (label, spec) in pool_runs(pool, client, runtime) {
        let w = super::resolve_workload(&spec)?;
        let (r, chain) = iopath_sim::run::simulate_chain(t, &w, opts)
            .map_err(super::simulate::sim_error)?
            .ok_or_else(|| CliError::usage(anyhow::anyhow!("--pool {pool}: the workload names no pool")))?;
        done.push((label, r, chain));
    }
    let partial = done.iter().any(|(_, r, _)| r.partial);
    let runs: Vec<PoolRun> = done.iter().map(|(label, report, chain)| PoolRun { label, report, chain }).collect();
    Ok((pool_section(pool, client, &runs), partial))
}
