//! A surface scan's outputs (`iopath measure --surface DRIVE --out DIR`): the terminal
//! table, `surface.json` (the [`Surface`] as serialized), `surface.csv` (a row per
//! position), `surface.md` and the drive curve, MB/s against the position on the drive in
//! percent of its LBA range, as SVG and PNG: the look of the sweep charts ([`crate::plot`]:
//! the bundled font, the colours, the grid), with an optional fitted zone curve dashed.

use crate::error::ReportError;
use crate::export::{check_output_dir, write_set};
use crate::font::ensure_registered;
use crate::plot::{
    BOUND_RED, GRID_BOLD, GRID_LIGHT, INK, LINE_COLOURS, PlotOptions, Scale, check_size, err, font, title_size,
};
use iopath_model::surface::{Surface, zone_rate};
use iopath_model::units::Bytes;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Every file name [`write_surface_outputs`] may write.
pub const SURFACE_SET: &[&str] = &["surface.json", "surface.csv", "surface.md", "surface.svg", "surface.png"];

/// An HDD zone curve fitted to a scan (`fit`), drawn dashed over the measured points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FittedZones {
    /// MB/s at LBA 0.
    pub outer_mb_s: f64,
    /// MB/s at the end of the LBA range.
    pub inner_mb_s: f64,
}

fn heading(s: &Surface) -> String {
    format!(
        "surface of {} ({}, {}): sequential reads of {} at depth {}, {:.1} s per point after a {:.1} s ramp, engine {}",
        s.id,
        s.path,
        human_bytes(s.size_bytes),
        Bytes::new(s.bs),
        s.iodepth,
        s.runtime_s,
        s.ramp_s,
        s.engine
    )
}

fn human_bytes(b: u64) -> String {
    let gb = b as f64 / 1e9;
    if gb >= 1.0 { format!("{gb:.1} GB") } else { format!("{:.1} MB", b as f64 / 1e6) }
}

/// Min, mean and max MB/s over the points that have a result.
fn stats(s: &Surface) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = s.points.iter().filter(|p| p.error.is_none()).map(|p| p.mb_s).collect();
    if v.is_empty() {
        return None;
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    Some((min, v.iter().sum::<f64>() / v.len() as f64, max))
}

/// The scan for a terminal: a row per position, then min/mean/max and the warnings.
pub fn surface_table(s: &Surface) -> String {
    let mut out = heading(s);
    out.push_str("\n\n");
    let _ = writeln!(
        out,
        "{:>9}  {:>12}  {:>10}  {:>10}  {:>10}",
        "position", "offset (GB)", "MB/s", "p50 (us)", "p99 (us)"
    );
    for p in &s.points {
        match &p.error {
            None => {
                let _ = writeln!(
                    out,
                    "{:>8.1}%  {:>12.3}  {:>10.1}  {:>10.1}  {:>10.1}",
                    p.position_pct,
                    p.offset_bytes as f64 / 1e9,
                    p.mb_s,
                    p.lat_p50_us,
                    p.lat_p99_us
                );
            }
            Some(e) => {
                let _ = writeln!(out, "{:>8.1}%  {:>12.3}  failed: {e}", p.position_pct, p.offset_bytes as f64 / 1e9);
            }
        }
    }
    if let Some((min, mean, max)) = stats(s) {
        let _ = writeln!(out, "\nmin {min:.1}  mean {mean:.1}  max {max:.1} MB/s (min/max {:.2})", min / max.max(1e-9));
    }
    if !s.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &s.warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    if s.partial {
        out.push_str("\n(interrupted: partial)\n");
    }
    out
}

/// A row per position: `position_pct,offset_bytes,window_bytes,mb_s,iops,lat_p50_us,
/// lat_p99_us,error` (numbers only, and an error's text quoted as RFC 4180 says).
pub fn surface_csv(s: &Surface) -> String {
    let mut out = String::from("position_pct,offset_bytes,window_bytes,mb_s,iops,lat_p50_us,lat_p99_us,error\n");
    for p in &s.points {
        let e = p.error.as_deref().map(|e| format!("\"{}\"", e.replace('"', "\"\""))).unwrap_or_default();
        let _ = writeln!(
            out,
            "{:.3},{},{},{:.3},{:.1},{:.1},{:.1},{e}",
            p.position_pct, p.offset_bytes, p.window_bytes, p.mb_s, p.iops, p.lat_p50_us, p.lat_p99_us
        );
    }
    out
}

/// The terminal table's rows as a GitHub table.
pub fn surface_markdown(s: &Surface) -> String {
    let mut out = format!(
        "# {}\n\n| position | offset (GB) | MB/s | p50 (us) | p99 (us) |\n|---:|---:|---:|---:|---:|\n",
        heading(s)
    );
    for p in &s.points {
        let mb = match &p.error {
            None => format!("{:.1}", p.mb_s),
            Some(e) => format!("failed: {}", e.replace('|', "\\|")),
        };
        let _ = writeln!(
            out,
            "| {:.1}% | {:.3} | {mb} | {:.1} | {:.1} |",
            p.position_pct,
            p.offset_bytes as f64 / 1e9,
            p.lat_p50_us,
            p.lat_p99_us
        );
    }
    out
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &Surface,
    fit: Option<FittedZones>,
    opts: &PlotOptions,
) -> Result<(), String> {
    let sc = Scale::of(opts);
    root.fill(&WHITE).map_err(err)?;
    let title = opts.title.clone().unwrap_or_else(|| format!("{}: read speed across the drive", s.id));
    let (w, _) = root.dim_in_pixel();
    let body = root.margin(sc.px(10.0), 0, 0, 0);
    let area = body.titled(&title, ("sans-serif", title_size(&title, w, sc)).into_font().color(&INK)).map_err(err)?;
    let pts: Vec<(f64, f64)> =
        s.points.iter().filter(|p| p.error.is_none()).map(|p| (p.mid_fraction(s.size_bytes) * 100.0, p.mb_s)).collect();
    let top = pts.iter().map(|p| p.1).chain(fit.map(|f| f.outer_mb_s.max(f.inner_mb_s))).fold(0.0, f64::max);
    let y_max = if top > 0.0 { top * 1.12 } else { 1.0 };
    let mut chart = ChartBuilder::on(&area)
        .margin(sc.px(16.0))
        .x_label_area_size(sc.px(60.0))
        .y_label_area_size(sc.px(90.0))
        .build_cartesian_2d(0f64..100f64, 0f64..y_max)
        .map_err(err)?;
    let x_desc = format!("position on the drive (% of its {} LBA range, from the start)", human_bytes(s.size_bytes));
    chart
        .configure_mesh()
        .x_labels(11)
        .y_labels(10)
        .max_light_lines(1)
        .x_label_formatter(&|x| format!("{x:.0}%"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc(x_desc.as_str())
        .y_desc("MB/s (10^6 bytes/s)")
        .label_style(font(sc, 18.0))
        .axis_desc_style(font(sc, 20.0))
        .bold_line_style(GRID_BOLD.stroke_width(1))
        .light_line_style(GRID_LIGHT.stroke_width(1))
        .axis_style(INK.stroke_width(sc.u(1.5)))
        .draw()
        .map_err(err)?;
    let colour = LINE_COLOURS[0];
    chart.draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(sc.u(3.0)))).map_err(err)?;
    chart.draw_series(pts.iter().map(|&p| Circle::new(p, sc.px(4.5), colour.filled()))).map_err(err)?;
    if let Some(f) = fit {
        // Dashed: short pieces of the curve every other 1% of the range.
        for k in (0..100).step_by(2) {
            let seg = (0..=4).map(|j| {
                let x = (k as f64 + j as f64 * 0.25) / 100.0;
                (x * 100.0, zone_rate(f.outer_mb_s, f.inner_mb_s, x))
            });
            chart.draw_series(LineSeries::new(seg, BOUND_RED.stroke_width(sc.u(2.0)))).map_err(err)?;
        }
        let label = format!("fitted zones: outer {:.1}, inner {:.1} MB/s", f.outer_mb_s, f.inner_mb_s);
        let style = font(sc, 18.0).color(&BOUND_RED).pos(Pos::new(HPos::Right, VPos::Top));
        chart.draw_series(std::iter::once(Text::new(label, (98.0, y_max * 0.98), style))).map_err(err)?;
    }
    if let Some((min, mean, max)) = stats(s) {
        let label = format!("min {min:.1}  mean {mean:.1}  max {max:.1} MB/s");
        let style = font(sc, 18.0).pos(Pos::new(HPos::Left, VPos::Top));
        chart.draw_series(std::iter::once(Text::new(label, (2.0, y_max * 0.98), style))).map_err(err)?;
    }
    root.present().map_err(err)
}

fn prepare(s: &Surface, opts: &PlotOptions) -> Result<(), ReportError> {
    ensure_registered()?;
    check_size(opts)?;
    if s.points.iter().all(|p| p.error.is_some()) {
        return Err(ReportError::NothingToPlot { chart: "surface", topology: s.id.clone() });
    }
    Ok(())
}

fn plot_error(message: String) -> ReportError {
    ReportError::Plot { chart: "surface", path: None, message }
}

/// The drive curve as an SVG document.
pub fn surface_svg_string(s: &Surface, fit: Option<FittedZones>, opts: &PlotOptions) -> Result<String, ReportError> {
    prepare(s, opts)?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (opts.width, opts.height)).into_drawing_area();
        draw(&root, s, fit, opts).map_err(plot_error)?;
    }
    Ok(out)
}

/// The drive curve as PNG bytes (encoded in memory, as the sweep charts are).
pub fn surface_png_bytes(s: &Surface, fit: Option<FittedZones>, opts: &PlotOptions) -> Result<Vec<u8>, ReportError> {
    use image::ImageEncoder;
    prepare(s, opts)?;
    let (w, h) = (opts.width, opts.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root, s, fit, opts).map_err(plot_error)?;
    }
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, w, h, image::ColorType::Rgb8)
        .map_err(|e| plot_error(format!("PNG encoding: {e}")))?;
    Ok(png)
}

/// Writes a scan's files as the directory `dir` (created if missing, replaced whole if it
/// holds an older set; see [`write_set`]) and returns their paths: always `surface.json`,
/// `surface.csv` and `surface.md`, and the plots when a point has a result.
pub fn write_surface_outputs(dir: &Path, s: &Surface, fit: Option<FittedZones>) -> Result<Vec<PathBuf>, ReportError> {
    check_output_dir(dir, SURFACE_SET)?;
    let json = serde_json::to_string_pretty(s).map_err(|e| ReportError::Json { what: "the surface", source: e })?;
    let mut files = vec![
        ("surface.json".to_string(), format!("{json}\n").into_bytes()),
        ("surface.csv".to_string(), surface_csv(s).into_bytes()),
        ("surface.md".to_string(), surface_markdown(s).into_bytes()),
    ];
    if s.points.iter().any(|p| p.error.is_none()) {
        let opts = PlotOptions::default();
        files.push(("surface.svg".into(), surface_svg_string(s, fit, &opts)?.into_bytes()));
        files.push(("surface.png".into(), surface_png_bytes(s, fit, &opts)?));
    }
    write_set(dir, &files, SURFACE_SET)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::surface::SurfacePoint;

    fn scan() -> Surface {
        let size = 1_000_000_000u64;
        let points = (0..5)
            .map(|k| {
                let offset = k * 200_000_000;
                SurfacePoint {
                    offset_bytes: offset,
                    window_bytes: 200_000_000,
                    position_pct: offset as f64 / size as f64 * 100.0,
                    mb_s: zone_rate(250.0, 125.0, offset as f64 / size as f64),
                    iops: 100.0,
                    read_bytes: 0,
                    lat_p50_us: 10.0,
                    lat_p99_us: 20.0,
                    error: if k == 2 { Some("read failed, \"EIO\"".into()) } else { None },
                }
            })
            .collect();
        Surface {
            schema_version: 1,
            kind: "surface".into(),
            id: "d1".into(),
            path: "/dev/sdz".into(),
            size_bytes: size,
            bs: 1 << 20,
            iodepth: 4,
            engine: "mock".into(),
            runtime_s: 1.0,
            ramp_s: 0.2,
            points,
            partial: false,
            warnings: vec![],
        }
    }

    #[test]
    fn csv_has_a_row_per_point_and_quotes_errors() {
        let csv = surface_csv(&scan());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 6);
        // The first point: 0%, the outer rate 250 MB/s.
        assert!(lines[1].starts_with("0.000,0,200000000,250.000,"), "{}", lines[1]);
        assert!(lines[3].ends_with("\"read failed, \"\"EIO\"\"\""), "{}", lines[3]);
    }

    #[test]
    fn the_plots_are_drawn_and_the_table_summarises() {
        let s = scan();
        let fit = Some(FittedZones { outer_mb_s: 250.0, inner_mb_s: 125.0 });
        let png = surface_png_bytes(&s, fit, &PlotOptions::default()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let svg = surface_svg_string(&s, fit, &PlotOptions::default()).unwrap();
        assert!(svg.contains("fitted zones: outer 250.0, inner 125.0 MB/s"), "no fit label");
        let t = surface_table(&s);
        // The outer rate is the max and the point at 80% the min: zone_rate(250, 125, 0.8)
        // = sqrt(62500 * 0.2 + 15625 * 0.8) = sqrt(25000) = 158.1 MB/s.
        assert!(t.contains("max 250.0"), "{t}");
        assert!(t.contains("min 158.1"), "{t}");
        assert!(t.contains("failed: read failed"), "{t}");
        let none = Surface { points: vec![], ..s };
        assert!(matches!(
            surface_png_bytes(&none, None, &PlotOptions::default()),
            Err(ReportError::NothingToPlot { .. })
        ));
    }
}
