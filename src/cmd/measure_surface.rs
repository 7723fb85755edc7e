//! `iopath measure --surface DRIVE [--points N]`: a surface scan, read speed at evenly
//! spaced windows across one drive (`iopath_validate::measure::surface`), printed as a
//! table and written with `--out DIR` as surface.json, .csv, .md and the drive curve as
//! SVG and PNG (`iopath_reports::surface`). Exit codes as `measure`'s.

use super::measure::{
    MeasureArgs, ad_hoc_spec, engine_choice, interrupt_watch, measure_err, progress_bar, show, target_pool, usage,
};
use super::{CliError, CliResult, print_json, print_text, resolve_workload};
use anyhow::anyhow;
use iopath_model::Catalog;
use iopath_reports::surface::{SURFACE_SET, surface_table, write_surface_outputs};
use iopath_validate::measure::surface::surface_scan_with;
use iopath_validate::measure::{MeasureOptions, Offset, Progress, TargetSpec};
use std::path::PathBuf;
use std::time::Duration;

/// Eleven points: every 10% of the drive, 0% to 100%, as DiskSpeed's drive curve.
const DEFAULT_POINTS: usize = 11;

/// The drive to scan: a topology drive's id, a `--target` path, or, with neither a topology
/// nor targets, the path itself.
fn scan_target(a: &MeasureArgs, drive: &str, catalog: &Catalog) -> CliResult<(TargetSpec, String)> {
    if a.topology.is_none() && a.targets.is_empty() {
        return Ok((TargetSpec { id: drive.to_string(), path: PathBuf::from(drive) }, "ad hoc".to_string()));
    }
    let (_, pool, name) = target_pool(a, None, catalog)?;
    let t = pool.iter().find(|t| t.id == drive || t.path == std::path::Path::new(drive)).cloned().ok_or_else(|| {
        let ids: Vec<&str> = pool.iter().map(|t| t.id.as_str()).collect();
        usage(format!("--surface {drive}: no drive or target has that id or path; the drives are {}", ids.join(", ")))
    })?;
    if t.path.as_os_str().is_empty() {
        return Err(usage(format!(
            "--surface {drive}: the drive has no dev; add dev = \"/dev/sdX\" (or a file path) to its [[drive]] table"
        )));
    }
    Ok((t, name))
}

/// Options that a scan sets itself or that make no sense for one drive's reads.
fn refuse_options(a: &MeasureArgs) -> CliResult<()> {
    let w = &a.workload;
    let given = [
        ("--offset", a.offset.is_some()),
        ("--fio-job", a.fio_job.is_some()),
        ("--write-fio-job", a.write_fio_job.is_some()),
        ("--active", w.active.is_some()),
        ("--drives", w.drives.is_some()),
        ("--copy", !w.copy.is_empty()),
        ("--region", w.region.is_some()),
        ("--numjobs", w.numjobs.is_some()),
        ("--rwmixread", w.rwmixread.is_some()),
        ("--allow-write", a.allow_write),
    ];
    if let Some((flag, _)) = given.iter().find(|g| g.1) {
        return Err(usage(format!(
            "{flag} does not apply to --surface: a scan reads one drive sequentially, each point at its own offset"
        )));
    }
    for (flag, v) in [("--bs", &w.bs), ("--iodepth", &w.iodepth)] {
        if let Some(v) = v
            && super::sweep::is_multi(v)
        {
            return Err(usage(format!("{flag} {v}: a surface scan takes one value (lists and ranges sweep)")));
        }
    }
    Ok(())
}

pub fn run(a: MeasureArgs, catalog: &Catalog) -> CliResult {
    let drive = a.surface.clone().unwrap_or_default();
    refuse_options(&a)?;
    if let Some(p) = &a.out {
        if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            super::output::check_file("--out", p)?;
        } else {
            super::output::check_dir("--out", p, SURFACE_SET)?;
        }
    }
    let (target, name) = scan_target(&a, &drive, catalog)?;
    let mut wargs = a.workload.clone();
    wargs.rw = Some(wargs.rw.unwrap_or_else(|| "read".into()));
    wargs.bs = Some(wargs.bs.unwrap_or_else(|| "1m".into()));
    wargs.iodepth = Some(wargs.iodepth.unwrap_or_else(|| "4".into()));
    let spec = ad_hoc_spec(&wargs)?;
    let mut workload = resolve_workload(&spec)?;
    // --size is the size of a file target the scan creates (default 256m); the windows
    // cover the whole target, so it bounds no region here.
    let size = workload.size.map_or(256 << 20, |b| b.get());
    workload.size = None;
    let runtime = Duration::from_nanos(workload.runtime.map(|d| d.nanos()).unwrap_or(1_000_000_000));
    let ramp = Duration::from_nanos(workload.ramp.map(|d| d.nanos()).unwrap_or(200_000_000));
    let opts = MeasureOptions {
        topology: name,
        targets: vec![target],
        workload,
        allow_write: false,
        destroy_data_on: a.destroy_data_on.clone(),
        size,
        engine: engine_choice(None, a.engine),
        runtime,
        ramp,
        offset: Offset::Start,
        stop: interrupt_watch(),
    };
    let bar = progress_bar(a.quiet);
    let progress = |p: &Progress| show(&bar, p);
    let scan = surface_scan_with(&opts, None, a.points.unwrap_or(DEFAULT_POINTS), &progress);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let scan = scan.map_err(measure_err)?;
    match &a.out {
        Some(p) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) => {
            let json = serde_json::to_string_pretty(&scan).map_err(|e| CliError::runtime(anyhow!(e)))?;
            super::output::write_file("--out", p, format!("{json}\n").as_bytes())?;
        }
        Some(dir) => {
            let written = write_surface_outputs(dir, &scan, None).map_err(|e| super::output::error("--out", e))?;
            if !a.quiet {
                for p in written {
                    eprintln!("wrote {}", p.display());
                }
            }
        }
        None => {}
    }
    if a.json {
        print_json(&scan)?;
    } else {
        print_text(&surface_table(&scan))?;
    }
    Ok(if scan.partial {
        super::exit::INTERRUPTED
    } else if scan.points.iter().any(|p| p.error.is_some()) {
        super::exit::RUNTIME
    } else {
        super::exit::OK
    })
}
