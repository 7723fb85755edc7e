//! Exporters, the atomic writer and the sweep output set.

use crate::fixtures;
use iopath_model::report::Sweep;
use iopath_reports::export::CSV_COLUMNS;
use iopath_reports::{
    ExportFormat, MeasuredSeries, PlotOptions, write_atomic, write_report_outputs, write_sweep_outputs,
};
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// A small RFC 4180 reader: enough to check that what we write parses back.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && row.is_empty(), "CSV ends with a newline");
    rows
}

fn files_in(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn csv_has_a_row_per_point_per_drive_plus_totals() {
    let sweep = fixtures::active_sweep();
    let bytes = ExportFormat::Csv.exporter().sweep(&sweep).unwrap();
    let rows = parse_csv(std::str::from_utf8(&bytes).unwrap());
    assert_eq!(rows[0], CSV_COLUMNS.to_vec());
    // Points with n = 1..5 drives: n drive rows + 1 total each; the failed point: 1 row.
    assert_eq!(rows.len() - 1, (1..=5).map(|n| n + 1).sum::<usize>() + 1);
    assert!(rows.iter().all(|r| r.len() == CSV_COLUMNS.len()), "every row has a field per column");

    let col = |name: &str| CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
    let find = |value: &str, drive: &str| {
        rows.iter()
            .find(|r| r[col("value")] == value && r[col("drive")] == drive)
            .unwrap_or_else(|| panic!("row value={value} drive={drive}"))
    };
    let one = find("1", "D0");
    assert_eq!(one[col("param")], "active");
    // 520 x 0.98 = 509.6 in decimals; the f64 product is 509.59999..., which the CSV's
    // rounding to 0.01 MB/s prints as the decimal, not as float noise.
    assert_eq!(one[col("read_mb_s")], "509.6");
    assert_eq!(one[col("lat_p99_us")].parse::<f64>().unwrap(), 300.0);
    // A drive row names its own binding resource; these fixture drives carry none (as a
    // measured drive), so the cell is empty rather than the point's bottleneck repeated.
    assert_eq!(one[col("bottleneck")], "");
    assert_eq!(one[col("bound_mb_s")], "", "the bound belongs to the total row");
    let four = find("4", "total");
    assert_eq!(four[col("mb_s")], "1754.2", "1790 x 0.98");
    assert_eq!(four[col("bound_mb_s")].parse::<f64>().unwrap(), 1790.0);
    assert_eq!(four[col("bottleneck")], "hba.up");
    // The failed point: quoted error (it holds a comma), no numbers, bound kept.
    let failed = find("6", "total");
    assert_eq!(failed[col("error")], "drive D5 not found, the topology has D0..D4");
    assert_eq!(failed[col("mb_s")], "");
    assert_eq!(failed[col("bound_mb_s")], "1790");
}

#[test]
fn csv_of_a_grid_fills_param2_and_value2() {
    let bytes = ExportFormat::Csv.exporter().sweep(&fixtures::grid_sweep()).unwrap();
    let rows = parse_csv(std::str::from_utf8(&bytes).unwrap());
    assert_eq!(rows.len() - 1, 8 * 3, "8 points x (2 drives + total)");
    assert!(rows[1..].iter().all(|r| r[2] == "iodepth"));
    assert!(rows.iter().any(|r| r[1] == "128k" && r[3] == "32" && r[4] == "total"));
}

#[test]
fn csv_of_one_report_has_drives_and_total() {
    let bytes = ExportFormat::Csv.exporter().report(&fixtures::full_load()).unwrap();
    let rows = parse_csv(std::str::from_utf8(&bytes).unwrap());
    assert_eq!(rows.len(), 1 + 3 + 1);
    assert_eq!(rows[4][4], "total");
    // 512.34 + 498.5 + 480 = 1490.84, whatever the f64 sum's last bits.
    assert_eq!(rows[4][7], "1490.84");
}

#[test]
fn json_round_trips_to_the_same_sweep() {
    for sweep in [fixtures::active_sweep(), fixtures::grid_sweep(), fixtures::iodepth_sweep()] {
        let bytes = ExportFormat::Json.exporter().sweep(&sweep).unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.contains("\"schema_version\": 1"));
        assert!(text.contains("\n  \"points\": ["), "pretty-printed");
        let back: Sweep = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, sweep);
    }
    let r = fixtures::full_load();
    let bytes = ExportFormat::Json.exporter().report(&r).unwrap();
    let back: iopath_model::report::Report = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(back, r);
}

#[test]
fn markdown_names_the_topology_and_holds_the_table() {
    let bytes = ExportFormat::Markdown.exporter().sweep(&fixtures::active_sweep()).unwrap();
    let md = String::from_utf8(bytes).unwrap();
    assert!(md.starts_with("## Sweep: ASM1166 with six SATA SSDs\n"));
    assert!(md.contains("workload: `read bs=128k iodepth=32`"));
    assert!(md.contains("| active | total MB/s |"));
    assert!(md.contains("| :--- | ---: |"));
    assert!(md.contains("| active=4 | 1754.2 |"));
    insta::assert_snapshot!("sweep_markdown", md);
}

#[test]
fn report_markdown_snapshot() {
    let bytes = ExportFormat::Markdown.exporter().report(&fixtures::full_load()).unwrap();
    insta::assert_snapshot!("report_markdown", String::from_utf8(bytes).unwrap());
}

#[test]
fn formats_from_file_names() {
    assert_eq!(ExportFormat::from_path(Path::new("out/x.JSON")), Some(ExportFormat::Json));
    assert_eq!(ExportFormat::from_path(Path::new("x.markdown")), Some(ExportFormat::Markdown));
    assert_eq!(ExportFormat::from_path(Path::new("x.png")), None);
    for f in ExportFormat::ALL {
        assert_eq!(f.exporter().format(), f);
    }
}

#[test]
fn atomic_write_replaces_the_file_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sweep.json");
    fs::write(&path, b"old contents that are longer than the new ones").unwrap();
    write_atomic(&path, b"new").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"new");
    write_atomic(&path, b"newer").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"newer");
    assert_eq!(files_in(dir.path()), BTreeSet::from(["sweep.json".to_string()]));
}

#[test]
fn atomic_write_into_a_missing_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let err = write_atomic(&dir.path().join("no/such/dir/x.csv"), b"x").unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn sweep_outputs_for_an_iodepth_sweep_include_the_latency_chart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let measured = [MeasuredSeries { label: "fio".into(), points: vec![(1.0, 400.0), (32.0, 1700.0)] }];
    let opts = PlotOptions { width: 600, height: 400, ..Default::default() };
    let written = write_sweep_outputs(&out, &fixtures::iodepth_sweep(), &measured, &opts).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["sweep.json", "sweep.csv", "sweep.md", "sweep.svg", "sweep.png", "latency.svg", "latency.png"]);
    assert!(written.iter().all(|p| p.parent() == Some(out.as_path())));
    assert_eq!(files_in(&out), names.iter().cloned().collect(), "no temp files left");
}

#[test]
fn sweep_outputs_without_any_result_skip_the_plots() {
    let dir = tempfile::tempdir().unwrap();
    let mut sweep = fixtures::active_sweep();
    sweep.points.retain(|p| p.report.is_none());
    let written = write_sweep_outputs(dir.path(), &sweep, &[], &PlotOptions::default()).unwrap();
    assert_eq!(written.len(), 3);
    let back: Sweep = serde_json::from_slice(&fs::read(&written[0]).unwrap()).unwrap();
    assert_eq!(back, sweep, "the failures are still recorded");
}

#[test]
fn report_outputs_are_json_csv_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_report_outputs(dir.path(), &fixtures::full_load()).unwrap();
    assert_eq!(files_in(dir.path()), BTreeSet::from(["report.json", "report.csv", "report.md"].map(String::from)));
    assert_eq!(written.len(), 3);
}

#[test]
fn an_unwritable_output_directory_says_where_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, b"").unwrap();
    let err = write_report_outputs(&file.join("sub"), &fixtures::full_load()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("a-file"), "{msg}");
    assert!(msg.contains("help:"), "{msg}");
}

#[test]
fn csv_marks_the_rows_of_interrupted_runs_partial() {
    let mut sweep = fixtures::active_sweep();
    let col = CSV_COLUMNS.iter().position(|c| *c == "partial").expect("a partial column");
    let rows_of = |s: &Sweep| parse_csv(std::str::from_utf8(&ExportFormat::Csv.exporter().sweep(s).unwrap()).unwrap());
    assert!(rows_of(&sweep).iter().skip(1).all(|r| r[col] == "false"), "a complete sweep has no partial row");
    // The third point was still running at Ctrl-C; the points with no result did not run.
    sweep.partial = true;
    sweep.points[2].report.as_mut().expect("a result").partial = true;
    let value = sweep.points[2].value.to_string();
    for r in rows_of(&sweep).iter().skip(1) {
        let ran_whole = r[col - 1].is_empty() && r[1] != value;
        assert_eq!(r[col], if ran_whole { "false" } else { "true" }, "{r:?}");
    }
}
