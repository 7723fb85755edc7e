//! Terminal tables.

use crate::fixtures;
use iopath_reports::{report_table, sweep_table};

#[test]
fn report_table_shows_each_drive_total_links_bottleneck_and_cost() {
    let t = report_table(&fixtures::full_load());
    // Drives: read MB/s, IOPS (512.34e6 / 131072), latency mean/p50/p99 [us].
    let d0 = t.lines().find(|l| l.starts_with("D0 ")).expect("a D0 row");
    for cell in ["512.3", "0.0", "3909", "150.0", "125.0", "250.0"] {
        assert!(d0.split_whitespace().any(|c| c == cell), "{cell} in {d0:?}");
    }
    assert!(t.contains("1234.5"), "D2's p99");
    let total = t.lines().find(|l| l.starts_with("total ")).expect("a total row");
    assert!(total.contains("1490.8"), "{total}");
    assert!(total.contains("1234.5"), "the total p99 is the worst drive's: {total}");
    // Units in the headers.
    for h in ["read MB/s", "write MB/s", "IOPS", "lat p99 us", "capacity MB/s", "util up %"] {
        assert!(t.contains(h), "header {h}");
    }
    // Links: capacity and utilization in percent; a link without a kind prints "-".
    let link = t.lines().find(|l| l.starts_with("hba.up ")).expect("a link row");
    for cell in ["pcie3x2", "1790.0", "98.7", "1.2"] {
        assert!(link.split_whitespace().any(|c| c == cell), "{cell} in {link:?}");
    }
    assert!(t.contains("bottleneck: hba.up at 98.7%"));
    assert!(t.contains("cost: 1234567 events, 54321 I/Os, 0.500 s wall, 2.000 s simulated, 2469134 events/s"));
    assert!(t.contains("warning: high variance between seeds"));
    assert!(!t.contains("partial"));
    assert!(t.contains("workload: read bs=128k iodepth=32"));
}

#[test]
fn report_table_marks_partial_runs() {
    let mut r = fixtures::full_load();
    r.partial = true;
    assert!(report_table(&r).contains("partial: interrupted"));
}

#[test]
fn report_table_columns_line_up() {
    let t = report_table(&fixtures::full_load());
    let lines: Vec<&str> = t.lines().skip_while(|l| !l.starts_with("drive")).take_while(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 5, "header, three drives, total");
    // Right-aligned numbers: every row ends at the same column.
    let width = lines[0].len();
    assert!(lines.iter().all(|l| l.len() == width), "{lines:#?}");
}

#[test]
fn report_table_snapshot() {
    insta::assert_snapshot!(report_table(&fixtures::full_load()));
}

#[test]
fn sweep_table_has_one_row_per_point_with_bound_and_bottleneck() {
    let t = sweep_table(&fixtures::active_sweep());
    let row = |v: &str| {
        t.lines()
            .find(|l| l.starts_with(&format!("active={v} ")))
            .unwrap_or_else(|| panic!("row active={v} in\n{t}"))
            .to_string()
    };
    // One drive at 520 * 0.98 MB/s, bound by the drive.
    assert!(row("1").contains("509.6"));
    assert!(row("1").contains("520.0"));
    assert!(row("1").contains("D0 (98.0%)"));
    // Four drives: the 1790 MB/s uplink binds.
    assert!(row("4").contains("1754.2"));
    assert!(row("4").contains("1790.0"));
    assert!(row("4").ends_with("hba.up (98.0%)"));
    // The failed point keeps its row and shows why.
    assert!(row("6").contains("FAILED: drive D5 not found, the topology has D0..D4"));
    assert!(t.contains("1 of 6 points failed"));
    for h in ["total MB/s", "read MB/s", "write MB/s", "IOPS", "p99 us", "bound MB/s"] {
        assert!(t.contains(h), "header {h}");
    }
}

#[test]
fn sweep_table_of_a_grid_names_both_parameters() {
    let t = sweep_table(&fixtures::grid_sweep());
    let row =
        t.lines().find(|l| l.starts_with("bs=128k ") && l.contains("iodepth=32")).expect("a bs=128k iodepth=32 row");
    assert!(row.contains("1790.0"), "{row}");
    assert!(row.contains("hba.up"), "{row}");
    assert!(t.contains("bs=4k    iodepth=1"), "{t}");
    assert!(t.contains("partial: interrupted"), "the grid fixture is partial");
}

#[test]
fn sweep_table_header_leaves_out_the_swept_parameter() {
    let t = sweep_table(&fixtures::iodepth_sweep());
    assert_eq!(t.lines().next(), Some("sweep: ASM1166 with six SATA SSDs (read bs=128k)"));
}

#[test]
fn sweep_table_without_bounds_has_no_bound_column() {
    let mut s = fixtures::iodepth_sweep();
    for p in &mut s.points {
        p.bound_mb_s = None;
    }
    assert!(!sweep_table(&s).contains("bound MB/s"));
}

#[test]
fn sweep_table_snapshots() {
    insta::assert_snapshot!("active", sweep_table(&fixtures::active_sweep()));
    insta::assert_snapshot!("grid", sweep_table(&fixtures::grid_sweep()));
}
