//! `iopath simulate TOPOLOGY [workload]`: one simulated run.
use super::{
    CliError, CliResult, WorkloadArgs, interrupt_flag, load_topology, print_json, print_text, resolve_workload,
    wall_clock,
};
use iopath_model::Catalog;
use iopath_sim::{SimError, SimOptions};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Topology file (see configs/ for examples).
    pub topology: PathBuf,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Override a part figure of one node: NODE.PARAM=VALUE (repeatable), e.g. pm.fbs=false.
    #[arg(long = "set", value_name = "NODE.PARAM=VALUE")]
    pub set: Vec<String>,
    /// Run this many seeds and report the mean with its spread (stochastic workloads).
    #[arg(long, default_value_t = 1, value_parser = super::replications_arg)]
    pub replications: u32,
    /// Print the report as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Also write the report to this file, in the format its extension names (.json, .csv,
    /// .md; no extension: JSON), or as report.json, report.csv and report.md in a directory
    /// (an existing one, or a path ending in /). Written atomically; a device node, FIFO or
    /// symbolic link there is refused, not replaced or followed.
    #[arg(long, value_name = "FILE|DIR")]
    pub out: Option<PathBuf>,
    /// No progress or notes on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Simulate the jobs of this fio job file on the drives its filenames name (a drive's
    /// dev, or --map FILE=DRIVE); workload options given here win over it
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    pub fio_job: Option<PathBuf>,
    /// With --fio-job: a job file's filename FILE is drive DRIVE (repeatable)
    #[arg(long, value_name = "FILE=DRIVE", requires = "fio_job")]
    pub map: Vec<String>,
}

/// A simulator refusal as the command line reports it: with the options that gave the
/// values at fault (the simulator speaks of the workload, not of flags); exit code from
/// the table in [`super::exit`].
pub fn sim_error(e: SimError) -> CliError {
    let option = match &e {
        SimError::TooManyActive { asked, .. } => Some(format!("--active {asked}")),
        SimError::Replications { asked, .. } => Some(format!("--replications {asked}")),
        SimError::TooManyIos { iodepth, .. } => Some(format!("--iodepth {iodepth} with --numjobs")),
        SimError::ClientWithoutPool { client } => Some(format!("--client {client} without --pool")),
        SimError::ClientInMaintenance { task } => Some(format!("--client with --task {task}")),
        // Drives and copies are named in the message itself.
        _ => None,
    };
    CliError::from_lib(option.as_deref(), e)
}

pub fn run(a: SimulateArgs, cat: &Catalog) -> CliResult {
    use iopath_reports::export::{Bare, OutFormat, REPORT_FORMATS, REPORT_SET};
    let out = match &a.out {
        Some(p) => Some(super::output::target("--out", p, REPORT_FORMATS, Bare::File(OutFormat::Json), REPORT_SET)?),
        None => None,
    };
    let topo = load_topology(&a.topology, cat, &a.set)?;
    let mut spec = a.workload.spec(&topo)?;
    if let Some(f) = &a.fio_job {
        spec = super::fio_job::job_spec(&super::fio_job::load(f)?, Some(&topo), &a.map)?.merged(&spec);
    }
    let w = resolve_workload(&spec)?;
    super::check_targets(&topo, &spec, &w)?;
    let clock = wall_clock();
    let opts = SimOptions { cancel: Some(interrupt_flag()), wall_clock: Some(&clock), ..Default::default() };
    let n = super::replications(a.replications)?;
    let report = if n == 1 {
        // One run: timed while it goes on, never run twice.
        let sim_s = iopath_sim::planned_sim_time(&topo, &w).map_err(sim_error)?.map(|d| d.secs_f64());
        let warn = |msg: &str| {
            if !a.quiet {
                eprintln!("warning: {msg}");
            }
        };
        super::estimate::watch("this run", sim_s, warn, |progress| {
            iopath_sim::simulate(&topo, &w, &SimOptions { progress: Some(progress), ..opts })
        })
        .map_err(sim_error)?
    } else {
        match super::estimate::pilot(&topo, &w).map_err(sim_error)? {
            // Stopped by Ctrl-C within the pilot: that run is the answer.
            super::estimate::Pilot::Done(r) if r.partial => *r,
            p => {
                let (sim_s, per_s) = p.rate();
                if let Some(msg) = super::estimate::warning("this run", sim_s, per_s, f64::from(n))
                    && !a.quiet
                {
                    eprintln!("warning: {msg}");
                }
                iopath_sim::replicate(&topo, &w, n, &opts).map_err(sim_error)?
            }
        }
    };
    if let Some(out) = &out {
        iopath_reports::export::write_report_to(out, &report).map_err(|e| super::output::error("--out", e))?;
    }
    if a.json {
        print_json(&report)?;
        if !a.quiet {
            // The table prints its warnings; JSON carries them, and a person should see them too.
            for w in &report.warnings {
                eprintln!("warning: {w}");
            }
        }
    } else {
        print_text(&iopath_reports::tables::report_table(&report))?;
    }
    Ok(if report.partial { super::exit::INTERRUPTED } else { 0 })
}
