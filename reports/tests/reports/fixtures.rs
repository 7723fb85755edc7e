//! Hand-built reports and sweeps with known numbers, shaped like the published setups
//! (six SATA SSDs behind an ASM1166 on PCIe 3.0 x2) so failures read naturally.

use iopath_model::report::{
    Bottleneck, Cost, DriveResult, Latency, LinkUtil, Report, ReportKind, SCHEMA_VERSION, Sweep, SweepPoint, Total,
};
use iopath_model::workload::Workload;
use serde_json::{Value, json};

/// A drive reading `read` MB/s and writing `write` MB/s with 128 KiB I/Os.
pub fn drive(id: &str, read: f64, write: f64, p99: f64) -> DriveResult {
    DriveResult {
        id: id.to_string(),
        read_mb_s: read,
        write_mb_s: write,
        iops: (read + write) * 1e6 / 131072.0,
        lat_us: Latency { mean: p99 * 0.6, p50: p99 * 0.5, p99, max: p99 * 2.0, ..Latency::default() },
        ..Default::default()
    }
}

/// A report over `drives`, totals summed, bottleneck as given.
pub fn report(drives: Vec<DriveResult>, bottleneck: &str, util: f64) -> Report {
    let read: f64 = drives.iter().map(|d| d.read_mb_s).sum();
    let write: f64 = drives.iter().map(|d| d.write_mb_s).sum();
    let iops: f64 = drives.iter().map(|d| d.iops).sum();
    let p99 = drives.iter().map(|d| d.lat_us.p99).fold(0.0, f64::max);
    Report {
        schema_version: SCHEMA_VERSION,
        kind: ReportKind::Simulated,
        topology: "ASM1166 with six SATA SSDs".into(),
        workload: Workload { iodepth: 32, ..Default::default() },
        measured: None,
        total: Total {
            read_mb_s: read,
            write_mb_s: write,
            mb_s: read + write,
            iops,
            lat_us: Latency { mean: p99 * 0.6, p50: p99 * 0.5, p99, max: p99 * 2.0, ..Latency::default() },
        },
        links: vec![
            LinkUtil {
                id: "hba.up".into(),
                util_up: util,
                util_down: 0.012,
                capacity_mb_s: 1790.0,
                kind: "pcie3x2".into(),
            },
            LinkUtil { id: "D0.link".into(), util_up: 0.5, util_down: 0.0, capacity_mb_s: 0.0, kind: String::new() },
        ],
        drives,
        bottleneck: Bottleneck { id: bottleneck.into(), util },
        cost: Cost { events: 1_234_567, ios: 54_321, wall_s: 0.5, sim_s: 2.0, cpu_s: None },
        partial: false,
        covered_s: None,
        warnings: Vec::new(),
        spread: None,
        pool: None,
        cpu: Vec::new(),
    }
}

/// The full-load report used by the table tests: three drives, known numbers.
pub fn full_load() -> Report {
    let mut r = report(
        vec![drive("D0", 512.34, 0.0, 250.0), drive("D1", 498.5, 0.0, 260.0), drive("D2", 480.0, 0.0, 1234.5)],
        "hba.up",
        0.987,
    );
    r.warnings.push("high variance between seeds: run with --replications 5".into());
    r
}

fn point(param: &str, value: Value, report: Option<Report>, bound: Option<f64>) -> SweepPoint {
    SweepPoint {
        param: param.into(),
        value,
        param2: None,
        value2: None,
        error: if report.is_none() { Some("drive D5 not found, the topology has D0..D4".into()) } else { None },
        report,
        bound_mb_s: bound,
    }
}

/// `--active 1..6`: drives add 520 MB/s each until the 1790 MB/s uplink binds at 4;
/// the point with 6 drives failed.
pub fn active_sweep() -> Sweep {
    let mut points = Vec::new();
    for n in 1..=6usize {
        let bound = (n as f64 * 520.0).min(1790.0);
        if n == 6 {
            points.push(point("active", json!(n), None, Some(bound)));
            continue;
        }
        let per = bound * 0.98 / n as f64;
        let drives = (0..n).map(|i| drive(&format!("D{i}"), per, 0.0, 200.0 + 100.0 * n as f64)).collect();
        let (b, u) = if n < 4 { ("D0", 0.98) } else { ("hba.up", 0.98) };
        points.push(point("active", json!(n), Some(report(drives, b, u)), Some(bound)));
    }
    Sweep { schema_version: SCHEMA_VERSION, topology: "ASM1166 with six SATA SSDs".into(), points, partial: false }
}

/// `--iodepth 1,2,4,8,16,32` on four drives: throughput saturates, latency grows.
pub fn iodepth_sweep() -> Sweep {
    let points = [1u32, 2, 4, 8, 16, 32]
        .iter()
        .map(|&qd| {
            let total = 1790.0 * (1.0 - (-(qd as f64) / 4.0).exp());
            let drives = (0..4).map(|i| drive(&format!("D{i}"), total / 4.0, 0.0, 80.0 * qd as f64)).collect();
            let b = if qd < 8 { "D0" } else { "hba.up" };
            point("iodepth", json!(qd), Some(report(drives, b, 0.9)), Some(1790.0))
        })
        .collect();
    Sweep { schema_version: SCHEMA_VERSION, topology: "ASM1166 with six SATA SSDs".into(), points, partial: false }
}

/// A grid: `bs` (as size strings) x `iodepth` 1 and 32.
pub fn grid_sweep() -> Sweep {
    let mut points = Vec::new();
    for qd in [1u32, 32] {
        for bs in ["4k", "32k", "128k", "1m"] {
            let kib: f64 = match bs {
                "4k" => 4.0,
                "32k" => 32.0,
                "128k" => 128.0,
                _ => 1024.0,
            };
            let total = (kib * if qd == 1 { 4.0 } else { 40.0 }).min(1790.0);
            let drives = (0..2).map(|i| drive(&format!("D{i}"), total / 2.0, 0.0, 100.0)).collect();
            let b = if total >= 1790.0 { "hba.up" } else { "D0" };
            points.push(SweepPoint {
                param: "bs".into(),
                value: json!(bs),
                param2: Some("iodepth".into()),
                value2: Some(json!(qd)),
                report: Some(report(drives, b, 0.95)),
                error: None,
                bound_mb_s: Some(1790.0),
            });
        }
    }
    Sweep { schema_version: SCHEMA_VERSION, topology: "ASM1166 with six SATA SSDs".into(), points, partial: true }
}
