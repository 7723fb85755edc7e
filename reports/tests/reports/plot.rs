//! Charts.

use crate::fixtures;
use iopath_reports::{
    MeasuredSeries, PlotOptions, ReportError, latency_svg_string, sweep_svg_string, write_latency_png, write_sweep_png,
};
use std::collections::HashSet;
use std::fs;
use std::path::Path;

/// Decodes a PNG into (width, height, number of distinct colours).
fn decode(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.color_type.samples();
    let colours: HashSet<&[u8]> = buf[..info.buffer_size()].chunks(bpp).collect();
    (info.width, info.height, colours.len())
}

/// Whether the SVG has a `<text>` element with exactly this content (plotters writes the
/// content on its own line).
fn has_text(svg: &str, text: &str) -> bool {
    svg.contains(&format!(">\n{text}\n</text>"))
}

fn measured() -> Vec<MeasuredSeries> {
    vec![
        MeasuredSeries {
            label: "measured on the bench".into(),
            points: vec![(1.0, 500.0), (2.0, 1010.0), (4.0, 1720.0)],
        },
        MeasuredSeries { label: "published".into(), points: vec![(3.0, 1500.0), (5.0, 1780.0)] },
    ]
}

#[test]
fn png_has_the_requested_size_and_is_not_blank() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h) in [(1200, 800), (640, 480)] {
        let path = dir.path().join(format!("sweep-{w}.png"));
        let opts = PlotOptions { width: w, height: h, ..Default::default() };
        write_sweep_png(&path, &fixtures::active_sweep(), &measured(), &opts).unwrap();
        let (pw, ph, colours) = decode(&path);
        assert_eq!((pw, ph), (w, h));
        assert!(colours > 20, "a chart with text and lines has many colours, got {colours}");
    }
    // Keep a copy to look at when asked (IOPATH_REPORTS_PREVIEW=dir).
    if let Ok(preview) = std::env::var("IOPATH_REPORTS_PREVIEW") {
        let p = Path::new(&preview);
        fs::create_dir_all(p).unwrap();
        let o = PlotOptions::default();
        write_sweep_png(&p.join("active.png"), &fixtures::active_sweep(), &measured(), &o).unwrap();
        write_sweep_png(&p.join("grid.png"), &fixtures::grid_sweep(), &[], &o).unwrap();
        write_sweep_png(&p.join("iodepth.png"), &fixtures::iodepth_sweep(), &[], &o).unwrap();
        write_latency_png(&p.join("latency.png"), &fixtures::iodepth_sweep(), &o).unwrap();
    }
}

#[test]
fn latency_png_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latency.png");
    write_latency_png(&path, &fixtures::iodepth_sweep(), &PlotOptions::default()).unwrap();
    let (w, h, colours) = decode(&path);
    assert_eq!((w, h), (1200, 800));
    assert!(colours > 20);
}

#[test]
fn svg_has_title_dashed_bound_bottleneck_and_measured_legend() {
    let svg = sweep_svg_string(&fixtures::active_sweep(), &measured(), &PlotOptions::default()).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("ASM1166 with six SATA SSDs: throughput, read bs=128k iodepth=32"));
    // The bound is dashed: many short two-point strokes in the bound's red.
    let dashes = svg
        .lines()
        .filter(|l| l.contains("stroke=\"#D62728\"") && l.contains("<polyline"))
        .filter(|l| l.matches(',').count() == 2)
        .count();
    assert!(dashes >= 10, "expected a dashed bound, found {dashes} dashes");
    assert!(has_text(&svg, "closed-form bound"));
    // The bottleneck is named where it changes: D0 at 1 drive, hba.up from 4.
    assert!(has_text(&svg, "D0") && has_text(&svg, "hba.up"));
    assert!(has_text(&svg, "measured on the bench") && has_text(&svg, "published"));
    // Per-drive lines are in the legend, drives on one visible line in one entry (the
    // fixture's drives D0..D4 share bound x 0.98 / n at each count; its sixth point failed,
    // so there is no D5); the x axis is numeric with ticks 1..6.
    assert!(has_text(&svg, "drives D0 to D4 (one line)"), "{svg}");
    assert!(!has_text(&svg, "drive D4"));
    assert!(svg.contains("active (active drives)"));
}

#[test]
fn grid_svg_draws_one_total_per_second_value_on_a_size_axis() {
    let svg = sweep_svg_string(&fixtures::grid_sweep(), &[], &PlotOptions::default()).unwrap();
    assert!(has_text(&svg, "total, iodepth=1"));
    // Both groups have the same bound, so it is drawn once.
    assert!(has_text(&svg, "closed-form bound"));
    assert!(!has_text(&svg, "bound, iodepth=1"));
    assert!(has_text(&svg, "total, iodepth=32"));
    assert!(!has_text(&svg, "drive D0"), "no per-drive lines in a grid");
    for tick in ["4k", "32k", "128k", "1m"] {
        assert!(has_text(&svg, tick), "tick {tick}");
    }
    assert!(svg.contains("log scale"));
}

#[test]
fn latency_svg_labels_points_with_their_queue_depth() {
    let svg = latency_svg_string(&fixtures::iodepth_sweep(), &PlotOptions::default()).unwrap();
    // The swept parameter is left out of the workload in the title.
    assert!(has_text(&svg, "ASM1166 with six SATA SSDs: latency against throughput, read bs=128k"));
    assert!(has_text(&svg, "iodepth=1"));
    assert!(has_text(&svg, "32"));
    assert!(has_text(&svg, "p50") && has_text(&svg, "p99"));
    assert!(svg.contains("latency [us]"));
}

#[test]
fn a_custom_title_is_used_as_is() {
    let opts = PlotOptions { title: Some("My <title> & more".into()), ..Default::default() };
    let svg = sweep_svg_string(&fixtures::active_sweep(), &[], &opts).unwrap();
    assert!(svg.contains("My &lt;title&gt; &amp; more"));
}

#[test]
fn nothing_to_plot_and_tiny_sizes_are_errors_that_say_what_to_do() {
    let mut failed = fixtures::active_sweep();
    failed.points.retain(|p| p.report.is_none());
    let e = sweep_svg_string(&failed, &[], &PlotOptions::default()).unwrap_err();
    assert!(matches!(e, ReportError::NothingToPlot { .. }));
    assert!(e.to_string().contains("help:"));
    let tiny = PlotOptions { width: 10, height: 10, ..Default::default() };
    let e = sweep_svg_string(&fixtures::active_sweep(), &[], &tiny).unwrap_err();
    assert!(matches!(e, ReportError::PlotSize { .. }));
    // A failed PNG leaves no file behind.
    let dir = tempfile::tempdir().unwrap();
    assert!(write_sweep_png(&dir.path().join("x.png"), &failed, &[], &PlotOptions::default()).is_err());
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn many_drives_share_one_grey_legend_entry() {
    let mut sweep = fixtures::active_sweep();
    let r = sweep.points[0].report.as_mut().unwrap();
    r.drives = (0..12).map(|i| fixtures::drive(&format!("D{i}"), 40.0, 0.0, 100.0)).collect();
    let svg = sweep_svg_string(&sweep, &[], &PlotOptions::default()).unwrap();
    assert!(has_text(&svg, "each of 12 drives"));
    assert!(!has_text(&svg, "drive D11"));
}

#[test]
fn words_make_a_categorical_axis_and_measured_points_use_the_index() {
    let mut sweep = fixtures::active_sweep();
    sweep.points.truncate(2);
    for (p, v) in sweep.points.iter_mut().zip(["fbs", "cbs"]) {
        p.param = "pm.switching".into();
        p.value = serde_json::json!(v);
    }
    let m = [MeasuredSeries { label: "bench".into(), points: vec![(0.0, 500.0), (1.0, 900.0)] }];
    let svg = sweep_svg_string(&sweep, &m, &PlotOptions::default()).unwrap();
    assert!(has_text(&svg, "fbs") && has_text(&svg, "cbs"));
    assert!(has_text(&svg, "bench"));
    assert!(!svg.contains("log scale"));
}
