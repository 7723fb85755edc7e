//! `iopath measure --cpu`: time the storage stack's CPU kernels on this machine
//! (`iopath_validate::cpubench`), print them, and with `--out` write a host part file that
//! `--parts` loads, every figure with basis `measurement`.

use super::measure::MeasureArgs;
use super::{CliError, CliResult, print_json, print_text};
use anyhow::anyhow;
use iopath_model::Catalog;
use iopath_model::catalog::Kind;
use iopath_model::cpu::Kernel;
use iopath_validate::cpubench::{Machine, bench, part_file, table};

fn usage(msg: String) -> CliError {
    CliError::usage(anyhow!(msg))
}

pub fn run(a: MeasureArgs, catalog: &Catalog) -> CliResult {
    if !a.targets.is_empty() || a.fio_job.is_some() || a.allow_write || !a.destroy_data_on.is_empty() {
        return Err(usage(
            "--cpu times CPU kernels, no I/O: drop --target, --fio-job, --allow-write and --destroy-data-on".into(),
        ));
    }
    let seconds = a.seconds.unwrap_or(0.3);
    if !(0.01..=60.0).contains(&seconds) {
        return Err(usage(format!("--seconds {seconds}: expected 0.01 to 60 seconds per kernel")));
    }
    if let Some(n) = a.cores
        && !(1..=4096).contains(&n)
    {
        return Err(usage(format!("--cores {n}: expected 1 to 4096 (the cpu_cores figure's range)")));
    }
    // The host part the file overrides: --part, else the topology's host, else generic-host.
    let part_id = match (&a.part, &a.topology) {
        (Some(p), _) => p.clone(),
        (None, Some(t)) => super::load_topology(t, catalog, &[])?.host().part.clone(),
        (None, None) => "generic-host".to_string(),
    };
    let part = catalog.get_kind(&part_id, Kind::Host).ok_or_else(|| {
        let hosts: Vec<&str> = catalog.parts().filter(|p| p.kind == Kind::Host).map(|p| p.id.as_str()).collect();
        usage(format!("--part {part_id:?} is not a host part; host parts: {}", hosts.join(", ")))
    })?;
    if let Some(out) = &a.out {
        super::output::check_file("--out", out)?;
    }
    let mut kernels = Vec::new();
    for name in &a.kernels {
        let k = Kernel::parse(name).ok_or_else(|| {
            let all: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
            usage(format!("--kernel {name:?}: expected one of {}", all.join(", ")))
        })?;
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    if kernels.is_empty() {
        kernels = Kernel::ALL.to_vec();
    }
    let m = Machine::this();
    let mut rates = Vec::new();
    for k in kernels {
        if !a.quiet {
            eprint!("\r{:<60}", format!("timing {} ({:.1} s)", k.name(), seconds));
        }
        rates.push(bench(k, seconds));
    }
    if !a.quiet {
        eprint!("\r{:<60}\r", "");
    }
    let cores = match a.cores {
        Some(n) => (f64::from(n), format!("--cores {n}, as given to iopath measure --cpu")),
        None => (
            m.logical_cpus as f64,
            "the logical CPUs the OS offers (SMT siblings count; give --cores N for physical cores)".to_string(),
        ),
    };
    if a.json {
        let rows: Vec<_> = rates
            .iter()
            .map(|r| {
                serde_json::json!({
                    "kernel": r.kernel, "figure": r.kernel.figure(), "mb_s_per_core": r.mb_s,
                    "implementation": r.implementation, "buffer": r.buffer, "compressed_ratio": r.ratio,
                })
            })
            .collect();
        print_json(&serde_json::json!({ "cpu": m.cpu, "logical_cpus": m.logical_cpus, "date": m.date,
            "part": part.id, "cores": cores.0, "kernels": rows }))?;
    } else {
        print_text(&format!(
            "{} ({} logical CPUs), {}: one core each, in cache (memcpy: out of cache)\n",
            m.cpu, m.logical_cpus, m.date
        ))?;
        print_text(&table(&rates, cores.0))?;
    }
    if let Some(out) = &a.out {
        let text =
            part_file(&part.id, &part.name, &rates, Some((cores.0, &cores.1)), &m).map_err(super::CliError::runtime)?;
        super::output::write_file("--out", out, text.as_bytes())?;
        if !a.quiet {
            eprintln!("wrote {} (host part {}): load it with --parts {}", out.display(), part.id, out.display());
        }
    }
    Ok(0)
}
