//! Charts of a sweep, drawn with plotters into SVG and PNG.
//!
//! The throughput chart ([`sweep_svg_string`], [`write_sweep_svg`], [`write_sweep_png`])
//! shows, against the swept value:
//!
//! - the total MB/s as a thick line with dots (for a grid, one line per value of `param2`);
//! - each drive's MB/s as thin lines (one-dimensional sweeps; more than eight drives share
//!   one grey style and one legend entry);
//! - the closed-form bound (`SweepPoint::bound_mb_s`) as a dashed line;
//! - the bottleneck element's id, written next to the total at the first point and wherever
//!   it changes, with a ring around that point;
//! - measured series ([`MeasuredSeries`]) as markers without lines, each with its own shape.
//!
//! The x axis is numeric when every swept value is a number (or a size such as `"128k"`,
//! drawn in bytes and labelled `128k`), with ticks at the swept values; `bs`, `iodepth` and
//! `numjobs` sweeps spanning a factor of 8 or more use a log-2 scale. Other values are
//! categories, in the sweep's order. The legend sits in its own column right of the plot so
//! it never hides data.
//!
//! The latency chart ([`latency_svg_string`], [`write_latency_svg`], [`write_latency_png`])
//! is for `iodepth` sweeps: p50 (dashed) and p99 (solid) latency against total MB/s, each
//! point labelled with its queue depth, showing where more outstanding I/O stops buying
//! throughput and only adds latency.
//!
//! All text uses the bundled DejaVu Sans, so charts render identically on machines without
//! fonts. PNGs are encoded in memory ([`sweep_png_bytes`], [`latency_png_bytes`]) and every
//! file is written through [`crate::export::write_atomic`].

use crate::error::ReportError;
use crate::export::write_atomic;
use crate::font::ensure_registered;
use crate::tables::{sweep_workload_label, value_label};
use iopath_model::report::Sweep;
use iopath_model::units::{Bytes, parse_size};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;
use std::path::Path;

/// Measured points to overlay on a sweep's throughput chart, drawn as markers with no line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasuredSeries {
    /// Legend text, e.g. `"measured (fio, 2024-05)"`.
    pub label: String,
    /// `(x, MB/s)` pairs. `x` is in the swept parameter's own unit: the number for numeric
    /// values, bytes for sizes (`bs`: 131072 for `128k`), the point's index (0, 1, ...) for
    /// categorical values.
    pub points: Vec<(f64, f64)>,
}

/// How charts are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Width in pixels (PNG) or user units (SVG). Default 1200.
    pub width: u32,
    /// Height in pixels (PNG) or user units (SVG). Default 800.
    pub height: u32,
    /// Title; `None` builds one from the topology name and the workload.
    pub title: Option<String>,
    /// Log-2 x axis: `None` decides (yes for `bs`/`iodepth`/`numjobs` spanning a factor of
    /// 8 or more); `Some(true)` is ignored when a value is not positive.
    pub log_x: Option<bool>,
    /// Draw each drive's MB/s (one-dimensional sweeps only). Default true.
    pub per_drive: bool,
    /// Plot IOPS instead of MB/s (small-block sweeps): totals, drives and the bound (its
    /// MB/s over the point's block size). Default false.
    pub iops: bool,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions { width: 1200, height: 800, title: None, log_x: None, per_drive: true, iops: false }
    }
}

// ---------------------------------------------------------------------------------------
// Colours and shapes.

pub(crate) const INK: RGBColor = RGBColor(0x21, 0x21, 0x21);
pub(crate) const GRID_LIGHT: RGBColor = RGBColor(0xee, 0xee, 0xee);
pub(crate) const GRID_BOLD: RGBColor = RGBColor(0xcc, 0xcc, 0xcc);
pub(crate) const BOUND_RED: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const MANY_DRIVES_GREY: RGBColor = RGBColor(0xa0, 0xa0, 0xa0);
/// Lines for drives or grid groups (tab10 without red, which the bound uses).
pub(crate) const LINE_COLOURS: [RGBColor; 9] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x7f, 0x7f, 0x7f),
];
/// Measured markers: strong colours that differ from the first drive lines.
const MARKER_COLOURS: [RGBColor; 5] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x6a, 0x3d, 0x9a),
    RGBColor(0x00, 0x80, 0x80),
    RGBColor(0xb1, 0x59, 0x28),
    RGBColor(0x33, 0x33, 0x99),
];
/// The ring of an interrupted run's point (and its legend entry).
const PARTIAL_ORANGE: RGBColor = RGBColor(230, 110, 0);

/// More drives than this share one grey style and one legend entry.
const MAX_DRIVE_LEGEND: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Marker {
    Cross,
    Triangle,
    Square,
    Diamond,
    Ring,
}

const MARKERS: [Marker; 5] = [Marker::Cross, Marker::Triangle, Marker::Square, Marker::Diamond, Marker::Ring];

// ---------------------------------------------------------------------------------------
// The x axis.

#[derive(Debug, Clone, PartialEq)]
enum XKind {
    /// Numbers; `log`: plot coordinate is log2 of the value; `sizes`: label as `128k`.
    Numeric { log: bool, sizes: bool },
    /// Labels in sweep order; plot coordinate is the index.
    Categorical(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
struct XAxis {
    kind: XKind,
    /// Plot coordinates of the ticks (the swept values).
    ticks: Vec<f64>,
    lo: f64,
    hi: f64,
    desc: String,
}

/// A swept value as a number, and whether it was written as a size (`128k`).
fn raw_number(v: &Value) -> Option<(f64, bool)> {
    match v {
        Value::Number(n) => n.as_f64().map(|f| (f, false)),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(f) = s.parse::<f64>() {
                return Some((f, false));
            }
            parse_size(s).ok().map(|b| (b.as_f64(), true))
        }
        _ => None,
    }
}

/// What a swept parameter means, for the axis title.
fn param_desc(param: &str) -> String {
    let what = match param {
        "bs" => "block size",
        "iodepth" => "I/Os outstanding per job",
        "active" => "active drives",
        "numjobs" => "jobs per drive",
        "rwmixread" => "% reads",
        "region" => "part of each drive touched",
        _ => "",
    };
    if what.is_empty() { param.to_string() } else { format!("{param} ({what})") }
}

fn fmt_number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{:.0}", v.round())
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

impl XAxis {
    fn new(param: &str, values: &[&Value], log_x: Option<bool>) -> XAxis {
        let numbers: Option<Vec<(f64, bool)>> = values.iter().map(|v| raw_number(v)).collect();
        let kind = match numbers {
            Some(nums) if !nums.is_empty() => {
                let min = nums.iter().map(|n| n.0).fold(f64::INFINITY, f64::min);
                let max = nums.iter().map(|n| n.0).fold(f64::NEG_INFINITY, f64::max);
                let positive = min > 0.0;
                let auto = matches!(param, "bs" | "iodepth" | "numjobs") && max / min >= 8.0;
                let log = positive && log_x.unwrap_or(auto);
                let sizes = param == "bs" || nums.iter().any(|n| n.1);
                XKind::Numeric { log, sizes }
            }
            _ => {
                let mut labels: Vec<String> = Vec::new();
                for v in values {
                    let l = value_label(v);
                    if !labels.contains(&l) {
                        labels.push(l);
                    }
                }
                XKind::Categorical(labels)
            }
        };
        let mut axis = XAxis { kind, ticks: Vec::new(), lo: 0.0, hi: 1.0, desc: param_desc(param) };
        let mut ticks: Vec<f64> = values.iter().filter_map(|v| axis.plot_x(v)).collect();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        // Keep the axis legible: at most 16 ticks, evenly thinned, always the first and last.
        if ticks.len() > 16 {
            let step = ticks.len().div_ceil(16);
            let last = *ticks.last().unwrap_or(&0.0);
            ticks = ticks.iter().copied().step_by(step).collect();
            if ticks.last() != Some(&last) {
                ticks.push(last);
            }
        }
        let (lo, hi) = match (ticks.first(), ticks.last()) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0.0, 1.0),
        };
        let pad = match &axis.kind {
            XKind::Categorical(_) => 0.5,
            _ if hi > lo => (hi - lo) * 0.05,
            _ => 0.5,
        };
        axis.lo = lo - pad;
        axis.hi = hi + pad;
        axis.ticks = ticks;
        if let XKind::Numeric { log: true, .. } = axis.kind {
            axis.desc.push_str(", log scale");
        }
        axis
    }

    /// The plot coordinate of a swept value.
    fn plot_x(&self, v: &Value) -> Option<f64> {
        match &self.kind {
            XKind::Numeric { .. } => raw_number(v).map(|(f, _)| self.plot_raw(f)),
            XKind::Categorical(labels) => {
                let l = value_label(v);
                labels.iter().position(|x| *x == l).map(|i| i as f64)
            }
        }
    }

    /// The plot coordinate of a number in the parameter's unit (measured overlays).
    fn plot_raw(&self, x: f64) -> f64 {
        match self.kind {
            XKind::Numeric { log: true, .. } => x.log2(),
            _ => x,
        }
    }

    /// The tick label at a plot coordinate.
    fn label(&self, px: f64) -> String {
        match &self.kind {
            XKind::Numeric { log, sizes } => {
                let raw = if *log { px.exp2() } else { px };
                if *sizes && raw >= 1.0 { Bytes::new(raw.round() as u64).to_string() } else { fmt_number(raw) }
            }
            XKind::Categorical(labels) => {
                let i = px.round();
                if (px - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
        }
    }
}

/// The x coordinate of a chart: linear in plot coordinates, ticks at the swept values,
/// labelled by the axis (`128k`, `32`, `fbs`).
struct XCoord(XAxis);

impl Ranged for XCoord {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.0.hi - self.0.lo;
        let t = if span > 0.0 { (value - self.0.lo) / span } else { 0.5 };
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.0.ticks.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.lo..self.0.hi
    }
}

impl ValueFormatter<f64> for XCoord {
    fn format_ext(&self, value: &f64) -> String {
        self.0.label(*value)
    }
}

// ---------------------------------------------------------------------------------------
// The data of a chart, separated from drawing so it can be tested.

#[derive(Debug, Clone, PartialEq)]
struct PlotPoint {
    x: f64,
    label: String,
    total: f64,
    p50: f64,
    p99: f64,
    bottleneck: String,
    /// The point's run was interrupted: drawn hollow, with a legend entry.
    partial: bool,
}

/// One line of totals: the whole sweep, or one value of `param2` in a grid.
#[derive(Debug, Clone, PartialEq)]
struct Group {
    /// `param2=value2` for a grid.
    name: Option<String>,
    points: Vec<PlotPoint>,
    bound: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
struct ChartData {
    title: String,
    param: String,
    axis: XAxis,
    groups: Vec<Group>,
    drives: Vec<(String, Vec<(f64, f64)>)>,
    /// The values are IOPS, not MB/s.
    iops: bool,
}

fn sweep_title(sweep: &Sweep, opts: &PlotOptions, what: &str) -> String {
    let title = if let Some(t) = &opts.title {
        t.clone()
    } else {
        match sweep_workload_label(sweep) {
            Some(w) => format!("{}: {what}, {w}", sweep.topology),
            None => format!("{}: {what}", sweep.topology),
        }
    };
    if sweep.partial { format!("{title} (PARTIAL: interrupted)") } else { title }
}

fn chart_data(sweep: &Sweep, opts: &PlotOptions, chart: &'static str) -> Result<ChartData, ReportError> {
    if sweep.points.iter().all(|p| p.report.is_none()) {
        return Err(ReportError::NothingToPlot { chart, topology: sweep.topology.clone() });
    }
    let param = sweep.points[0].param.clone();
    let values: Vec<&Value> = sweep.points.iter().map(|p| &p.value).collect();
    let axis = XAxis::new(&param, &values, opts.log_x);
    let mut groups: Vec<Group> = Vec::new();
    let mut drives: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in &sweep.points {
        let Some(x) = axis.plot_x(&p.value) else {
            continue;
        };
        let name = p.param2.as_ref().map(|p2| {
            let v2 = p.value2.as_ref().map(value_label).unwrap_or_default();
            format!("{p2}={v2}")
        });
        let gi = match groups.iter().position(|g| g.name == name) {
            Some(i) => i,
            None => {
                groups.push(Group { name, points: Vec::new(), bound: Vec::new() });
                groups.len() - 1
            }
        };
        let g = &mut groups[gi];
        // IOPS: a bound in MB/s over the point's block size (from its run).
        let per_io = p.report.as_ref().map(|r| r.workload.bs.get() as f64 / 1e6);
        if let Some(b) = p.bound_mb_s.filter(|b| b.is_finite()) {
            match (opts.iops, per_io) {
                (false, _) => g.bound.push((x, b)),
                (true, Some(m)) if m > 0.0 => g.bound.push((x, b / m)),
                _ => {}
            }
        }
        if let Some(r) = &p.report {
            g.points.push(PlotPoint {
                x,
                label: value_label(&p.value),
                total: if opts.iops { r.total.iops } else { r.total.mb_s },
                p50: r.total.lat_us.p50,
                p99: r.total.lat_us.p99,
                bottleneck: r.bottleneck.id.clone(),
                partial: r.partial,
            });
            for d in &r.drives {
                let mb_s = if opts.iops { d.iops } else { d.read_mb_s + d.write_mb_s };
                match drives.iter_mut().find(|(id, _)| *id == d.id) {
                    Some((_, pts)) => pts.push((x, mb_s)),
                    None => drives.push((d.id.clone(), vec![(x, mb_s)])),
                }
            }
        }
    }
    for g in &mut groups {
        g.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        g.bound.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    groups.retain(|g| !g.points.is_empty() || !g.bound.is_empty());
    if groups.len() > 1 || !opts.per_drive {
        drives.clear();
    }
    for (_, pts) in &mut drives {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let what = if opts.iops { "IOPS" } else { "throughput" };
    Ok(ChartData { title: sweep_title(sweep, opts, what), param, axis, groups, drives, iops: opts.iops })
}

// ---------------------------------------------------------------------------------------
// Legend, drawn by hand in its own column.

#[derive(Debug, Clone)]
enum Glyph {
    Line {
        colour: RGBColor,
        width: f64,
        dot: bool,
    },
    Dashed {
        colour: RGBColor,
        width: f64,
    },
    Marker {
        colour: RGBColor,
        marker: Marker,
    },
    Ring,
    /// A hollow point: a run that was interrupted.
    Hollow {
        colour: RGBColor,
    },
}

struct Legend(Vec<(Glyph, String)>);

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Scales sizes designed for an 800-pixel-high chart.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale(f64);

impl Scale {
    pub(crate) fn of(opts: &PlotOptions) -> Scale {
        Scale((opts.width as f64 / 1200.0).min(opts.height as f64 / 800.0).max(0.4))
    }
    pub(crate) fn px(self, v: f64) -> i32 {
        (v * self.0).round().max(1.0) as i32
    }
    pub(crate) fn f(self, v: f64) -> f64 {
        v * self.0
    }
    pub(crate) fn u(self, v: f64) -> u32 {
        self.px(v) as u32
    }
}

pub(crate) fn font(s: Scale, size: f64) -> TextStyle<'static> {
    ("sans-serif", s.f(size)).into_font().color(&INK)
}

type DrawResult = Result<(), String>;

pub(crate) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    marker: Marker,
    colour: RGBColor,
    s: Scale,
) -> DrawResult {
    let r = s.px(7.0);
    let style = colour.stroke_width(s.u(2.5));
    match marker {
        Marker::Cross => area.draw(&Cross::new(at, r, style)).map_err(err),
        Marker::Triangle => area.draw(&TriangleMarker::new(at, r + 1, colour.filled())).map_err(err),
        Marker::Square => area
            .draw(&Rectangle::new([(at.0 - r + 1, at.1 - r + 1), (at.0 + r - 1, at.1 + r - 1)], colour.filled()))
            .map_err(err),
        Marker::Diamond => area
            .draw(&Polygon::new(
                vec![(at.0, at.1 - r - 1), (at.0 + r + 1, at.1), (at.0, at.1 + r + 1), (at.0 - r - 1, at.1)],
                colour.filled(),
            ))
            .map_err(err),
        Marker::Ring => area.draw(&Circle::new(at, r, style)).map_err(err),
    }
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, legend: &Legend, s: Scale) -> DrawResult {
    let row = s.px(30.0);
    let x0 = s.px(12.0);
    let x1 = s.px(52.0);
    let mut y = s.px(36.0);
    for (glyph, label) in &legend.0 {
        let mid = ((x0 + x1) / 2, y);
        match glyph {
            Glyph::Line { colour, width, dot } => {
                area.draw(&PathElement::new(vec![(x0, y), (x1, y)], colour.stroke_width(s.u(*width)))).map_err(err)?;
                if *dot {
                    area.draw(&Circle::new(mid, s.px(4.5), colour.filled())).map_err(err)?;
                }
            }
            Glyph::Dashed { colour, width } => {
                let third = (x1 - x0) / 3;
                for (a, b) in [(x0, x0 + third), (x1 - third, x1)] {
                    area.draw(&PathElement::new(vec![(a, y), (b, y)], colour.stroke_width(s.u(*width))))
                        .map_err(err)?;
                }
            }
            Glyph::Marker { colour, marker } => draw_marker(area, mid, *marker, *colour, s)?,
            Glyph::Ring => area.draw(&Circle::new(mid, s.px(9.0), INK.stroke_width(s.u(1.5)))).map_err(err)?,
            Glyph::Hollow { colour } => {
                area.draw(&Circle::new(mid, s.px(7.0), WHITE.filled())).map_err(err)?;
                area.draw(&Circle::new(mid, s.px(7.0), colour.stroke_width(s.u(2.5)))).map_err(err)?;
            }
        }
        let style = font(s, 18.0).pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(truncate(label, 30), (x1 + s.px(10.0), y), style)).map_err(err)?;
        y += row;
    }
    Ok(())
}

/// Whether two drives' lines show as one: the same value (within 0.5%) at every x both
/// have (a drive's line starts where it becomes active).
fn one_visible_line(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    let mut common = 0;
    for &(x, y) in a {
        if let Some(&(_, z)) = b.iter().find(|p| p.0 == x) {
            common += 1;
            if (y - z).abs() > 0.005 * y.abs().max(z.abs()) {
                return false;
            }
        }
    }
    common > 0
}

/// Whether two polylines are the same points (to draw a shared bound once).
fn same_line(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| close(p.0, q.0) && close(p.1, q.1))
}

/// Title font size that fits the title on one line.
pub(crate) fn title_size(title: &str, width: u32, s: Scale) -> f64 {
    let want = s.f(30.0);
    // DejaVu Sans averages about 0.55 em per character.
    let fits = width as f64 * 0.95 / (title.chars().count().max(1) as f64 * 0.55);
    want.min(fits).max(s.f(14.0))
}

/// The chart column and the legend column.
type Columns<DB> = (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>);

/// Splits the root into the chart and legend columns under a title.
fn layout<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str, s: Scale) -> Result<Columns<DB>, String> {
    root.fill(&WHITE).map_err(err)?;
    let (w, _) = root.dim_in_pixel();
    let size = title_size(title, w, s);
    let body = root.margin(s.px(10.0), 0, 0, 0);
    let body = body.titled(title, ("sans-serif", size).into_font().color(&INK)).map_err(err)?;
    let legend_w = s.px(290.0).min(w as i32 / 3);
    let (chart, legend) = body.split_horizontally(w as i32 - legend_w);
    Ok((chart, legend))
}

// ---------------------------------------------------------------------------------------
// The throughput chart.

fn draw_throughput<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &ChartData,
    measured: &[MeasuredSeries],
    s: Scale,
) -> DrawResult {
    let (area, legend_area) = layout(root, &d.title, s)?;
    let grid = d.groups.len() > 1 || d.groups.iter().any(|g| g.name.is_some());

    let y_max = y_max(d, measured);

    let axis = &d.axis;
    let mut chart = ChartBuilder::on(&area)
        .margin(s.px(16.0))
        .x_label_area_size(s.px(60.0))
        .y_label_area_size(s.px(90.0))
        .build_cartesian_2d(XCoord(axis.clone()), 0f64..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(axis.ticks.len().max(2))
        .y_labels(10)
        .max_light_lines(1)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc(axis.desc.as_str())
        .y_desc(if d.iops { "IOPS (I/Os per second)" } else { "MB/s (10^6 bytes/s)" })
        .label_style(font(s, 18.0))
        .axis_desc_style(font(s, 20.0))
        .bold_line_style(GRID_BOLD.stroke_width(1))
        .light_line_style(GRID_LIGHT.stroke_width(1))
        .axis_style(INK.stroke_width(s.u(1.5)))
        .draw()
        .map_err(err)?;

    let mut legend = Legend(Vec::new());
    draw_drives(&mut chart, d, s, &mut legend)?;
    draw_groups(&mut chart, d, grid, s, &mut legend)?;
    draw_measured(&mut chart, axis, measured, s, &mut legend)?;
    draw_bottlenecks(&mut chart, d, s, &mut legend)?;
    draw_legend(&legend_area, &legend, s)
}

/// The throughput chart's plotting context: the sweep's x axis, MB/s or IOPS up.
type ThroughputChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<XCoord, plotters::coord::types::RangedCoordf64>>;

/// The top of the y axis: 12% above the highest total, bound, drive or measured point.
fn y_max(d: &ChartData, measured: &[MeasuredSeries]) -> f64 {
    let mut y_max: f64 = 0.0;
    for g in &d.groups {
        y_max = g.points.iter().map(|p| p.total).fold(y_max, f64::max);
        y_max = g.bound.iter().map(|b| b.1).fold(y_max, f64::max);
    }
    for (_, pts) in &d.drives {
        y_max = pts.iter().map(|p| p.1).fold(y_max, f64::max);
    }
    for m in measured {
        y_max = m.points.iter().map(|p| p.1).fold(y_max, f64::max);
    }
    if y_max > 0.0 && y_max.is_finite() { y_max * 1.12 } else { 1.0 }
}

/// Each drive's line (drives on the same points as one line with one legend entry), or one
/// grey entry for many drives.
fn draw_drives<DB: DrawingBackend>(
    chart: &mut ThroughputChart<'_, DB>,
    d: &ChartData,
    s: Scale,
    legend: &mut Legend,
) -> DrawResult {
    // Per-drive lines first, so the totals are drawn over them.
    let many = d.drives.len() > MAX_DRIVE_LEGEND;
    // Drives whose lines are the same points show as one line: one legend entry for them.
    let mut shown: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, (_, pts)) in d.drives.iter().enumerate() {
        if let Some(k) = shown.iter().position(|(j, _)| one_visible_line(&d.drives[*j].1, pts)) {
            shown[k].1.push(i);
            continue;
        }
        shown.push((i, vec![i]));
        let colour = if many { MANY_DRIVES_GREY } else { LINE_COLOURS[(shown.len() - 1) % LINE_COLOURS.len()] };
        let width = if many { 1.2 } else { 2.0 };
        chart.draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(s.u(width)))).map_err(err)?;
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(3.0), colour.filled()))).map_err(err)?;
    }
    if !many {
        for (k, (_, ids)) in shown.iter().enumerate() {
            let colour = LINE_COLOURS[k % LINE_COLOURS.len()];
            let id = |i: &usize| d.drives[*i].0.as_str();
            let label = match ids.as_slice() {
                [one] => format!("drive {}", id(one)),
                [a, b] => format!("drives {} and {} (one line)", id(a), id(b)),
                // A run of drives in file order: its first and last.
                [first, .., last] if last - first + 1 == ids.len() => {
                    format!("drives {} to {} (one line)", id(first), id(last))
                }
                many => {
                    format!("{} drives on one line: {}", many.len(), many.iter().map(id).collect::<Vec<_>>().join(", "))
                }
            };
            legend.0.push((Glyph::Line { colour, width: 2.0, dot: true }, label));
        }
    }
    if many {
        legend.0.push((
            Glyph::Line { colour: MANY_DRIVES_GREY, width: 1.2, dot: false },
            format!("each of {} drives", d.drives.len()),
        ));
    }
    Ok(())
}

/// The bounds (dashed; once where a grid's groups share one) and each group's totals, with
/// interrupted points hollow.
fn draw_groups<DB: DrawingBackend>(
    chart: &mut ThroughputChart<'_, DB>,
    d: &ChartData,
    grid: bool,
    s: Scale,
    legend: &mut Legend,
) -> DrawResult {
    // A grid whose groups share one bound (it rarely depends on queue depth) draws it once.
    let shared_bound =
        grid && d.groups.windows(2).all(|w| same_line(&w[0].bound, &w[1].bound)) && !d.groups[0].bound.is_empty();
    if shared_bound {
        chart
            .draw_series(DashedLineSeries::new(
                d.groups[0].bound.iter().copied(),
                s.px(12.0),
                s.px(7.0),
                BOUND_RED.stroke_width(s.u(2.5)),
            ))
            .map_err(err)?;
        legend.0.push((Glyph::Dashed { colour: BOUND_RED, width: 2.5 }, "closed-form bound".to_string()));
    }
    let mut any_partial = false;
    for (gi, g) in d.groups.iter().enumerate() {
        let colour = if grid { LINE_COLOURS[gi % LINE_COLOURS.len()] } else { INK };
        let bound_colour = if grid { colour } else { BOUND_RED };
        if !g.bound.is_empty() && !shared_bound {
            chart
                .draw_series(DashedLineSeries::new(
                    g.bound.iter().copied(),
                    s.px(12.0),
                    s.px(7.0),
                    bound_colour.stroke_width(s.u(2.5)),
                ))
                .map_err(err)?;
            let label = match &g.name {
                Some(n) => format!("bound, {n}"),
                None => "closed-form bound".to_string(),
            };
            legend.0.push((Glyph::Dashed { colour: bound_colour, width: 2.5 }, label));
        }
        let line: Vec<(f64, f64)> = g.points.iter().map(|p| (p.x, p.total)).collect();
        chart.draw_series(LineSeries::new(line.iter().copied(), colour.stroke_width(s.u(3.5)))).map_err(err)?;
        chart.draw_series(line.iter().map(|&p| Circle::new(p, s.px(5.5), colour.filled()))).map_err(err)?;
        let label = match &g.name {
            Some(n) => format!("total, {n}"),
            None => "total".to_string(),
        };
        legend.0.push((Glyph::Line { colour, width: 3.5, dot: true }, label));
        // Interrupted points: hollow, so a reader never takes them for complete runs.
        let cut: Vec<(f64, f64)> = g.points.iter().filter(|p| p.partial).map(|p| (p.x, p.total)).collect();
        chart.draw_series(cut.iter().map(|&p| Circle::new(p, s.px(7.0), WHITE.filled()))).map_err(err)?;
        chart
            .draw_series(cut.iter().map(|&p| Circle::new(p, s.px(7.0), PARTIAL_ORANGE.stroke_width(s.u(3.0)))))
            .map_err(err)?;
        any_partial |= !cut.is_empty();
    }
    // The bound again over the totals, so it stays visible where a total meets it.
    for (gi, g) in d.groups.iter().enumerate() {
        if g.bound.is_empty() || (shared_bound && gi > 0) {
            continue;
        }
        let colour = if grid && !shared_bound { LINE_COLOURS[gi % LINE_COLOURS.len()] } else { BOUND_RED };
        chart
            .draw_series(DashedLineSeries::new(
                g.bound.iter().copied(),
                s.px(12.0),
                s.px(7.0),
                colour.stroke_width(s.u(2.0)),
            ))
            .map_err(err)?;
    }
    if any_partial {
        legend.0.push((Glyph::Hollow { colour: PARTIAL_ORANGE }, "partial: interrupted run".to_string()));
    }
    Ok(())
}

/// Measured points as markers with no line, one marker and colour per series.
fn draw_measured<DB: DrawingBackend>(
    chart: &mut ThroughputChart<'_, DB>,
    axis: &XAxis,
    measured: &[MeasuredSeries],
    s: Scale,
    legend: &mut Legend,
) -> DrawResult {
    for (i, m) in measured.iter().enumerate() {
        let colour = MARKER_COLOURS[i % MARKER_COLOURS.len()];
        let marker = MARKERS[i % MARKERS.len()];
        let r = s.px(7.0);
        let pts: Vec<(f64, f64)> = m
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| (axis.plot_raw(x), y))
            .filter(|(x, _)| x.is_finite())
            .collect();
        let at = |p: &(f64, f64)| EmptyElement::at(*p);
        let line = colour.stroke_width(s.u(2.5));
        let fill = colour.filled();
        let drawn = match marker {
            Marker::Cross => chart.draw_series(pts.iter().map(|p| at(p) + Cross::new((0, 0), r, line))).map(|_| ()),
            Marker::Triangle => {
                chart.draw_series(pts.iter().map(|p| at(p) + TriangleMarker::new((0, 0), r + 1, fill))).map(|_| ())
            }
            Marker::Square => chart
                .draw_series(pts.iter().map(|p| at(p) + Rectangle::new([(-r + 1, -r + 1), (r - 1, r - 1)], fill)))
                .map(|_| ()),
            Marker::Diamond => chart
                .draw_series(
                    pts.iter()
                        .map(|p| at(p) + Polygon::new(vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)], fill)),
                )
                .map(|_| ()),
            Marker::Ring => chart.draw_series(pts.iter().map(|p| at(p) + Circle::new((0, 0), r, line))).map(|_| ()),
        };
        drawn.map_err(err)?;
        legend.0.push((Glyph::Marker { colour, marker }, m.label.clone()));
    }
    Ok(())
}

/// Bottleneck annotations, drawn last so nothing covers them: the first point and
/// wherever the binding element changes, as a boxed label next to a ring.
fn draw_bottlenecks<DB: DrawingBackend>(
    chart: &mut ThroughputChart<'_, DB>,
    d: &ChartData,
    s: Scale,
    legend: &mut Legend,
) -> DrawResult {
    let axis = &d.axis;
    let mid_x = (axis.lo + axis.hi) / 2.0;
    let mut annotated = false;
    let plotting = chart.plotting_area().strip_coord_spec();
    for g in &d.groups {
        let mut prev: Option<&str> = None;
        for p in &g.points {
            if prev == Some(p.bottleneck.as_str()) || p.bottleneck.is_empty() {
                prev = Some(&p.bottleneck);
                continue;
            }
            prev = Some(&p.bottleneck);
            annotated = true;
            let style = font(s, 17.0).pos(Pos::new(HPos::Left, VPos::Top));
            let (tw, th) = plotting.estimate_text_size(&p.bottleneck, &style).map_err(err)?;
            let (tw, th) = (tw as i32, th as i32);
            let pad = s.px(4.0);
            let gap = s.px(12.0);
            let x0 = if p.x > mid_x { -gap - tw - 2 * pad } else { gap };
            let y0 = -gap - th - 2 * pad;
            let corners = [(x0, y0), (x0 + tw + 2 * pad, y0 + th + 2 * pad)];
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((p.x, p.total))
                        + Circle::new((0, 0), s.px(10.0), INK.stroke_width(s.u(1.5)))
                        + Rectangle::new(corners, WHITE.mix(0.9).filled())
                        + Rectangle::new(corners, INK.stroke_width(1))
                        + Text::new(p.bottleneck.clone(), (x0 + pad, y0 + pad), style),
                ))
                .map_err(err)?;
        }
    }
    if annotated {
        legend.0.push((Glyph::Ring, "bottleneck, where it changes".to_string()));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The latency chart.

fn draw_latency<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, d: &ChartData, s: Scale) -> DrawResult {
    let (area, legend_area) = layout(root, &d.title, s)?;
    let grid = d.groups.len() > 1 || d.groups.iter().any(|g| g.name.is_some());
    let pts = || d.groups.iter().flat_map(|g| g.points.iter());
    let x_max = pts().map(|p| p.total).fold(0.0, f64::max);
    let y_max = pts().map(|p| p.p99.max(p.p50)).fold(0.0, f64::max);
    let x_max = if x_max > 0.0 { x_max * 1.12 } else { 1.0 };
    let y_max = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    let mut chart = ChartBuilder::on(&area)
        .margin(s.px(16.0))
        .x_label_area_size(s.px(60.0))
        .y_label_area_size(s.px(90.0))
        .build_cartesian_2d(0f64..x_max, 0f64..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(10)
        .y_labels(10)
        .max_light_lines(1)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| fmt_number(*y))
        .x_desc("total MB/s (10^6 bytes/s)")
        .y_desc("latency [us]")
        .label_style(font(s, 18.0))
        .axis_desc_style(font(s, 20.0))
        .bold_line_style(GRID_BOLD.stroke_width(1))
        .light_line_style(GRID_LIGHT.stroke_width(1))
        .axis_style(INK.stroke_width(s.u(1.5)))
        .draw()
        .map_err(err)?;
    let mut legend = Legend(Vec::new());
    for (gi, g) in d.groups.iter().enumerate() {
        let (c50, c99) = if grid {
            let c = LINE_COLOURS[gi % LINE_COLOURS.len()];
            (c, c)
        } else {
            (LINE_COLOURS[0], LINE_COLOURS[2])
        };
        let suffix = g.name.as_ref().map(|n| format!(", {n}")).unwrap_or_default();
        let p50: Vec<(f64, f64)> = g.points.iter().map(|p| (p.total, p.p50)).collect();
        let p99: Vec<(f64, f64)> = g.points.iter().map(|p| (p.total, p.p99)).collect();
        chart
            .draw_series(DashedLineSeries::new(p50.iter().copied(), s.px(10.0), s.px(6.0), c50.stroke_width(s.u(2.5))))
            .map_err(err)?;
        chart.draw_series(p50.iter().map(|&p| TriangleMarker::new(p, s.px(6.0), c50.filled()))).map_err(err)?;
        chart.draw_series(LineSeries::new(p99.iter().copied(), c99.stroke_width(s.u(3.0)))).map_err(err)?;
        chart.draw_series(p99.iter().map(|&p| Circle::new(p, s.px(5.0), c99.filled()))).map_err(err)?;
        // Label each p99 point with its swept value (the queue depth).
        for (i, p) in g.points.iter().enumerate() {
            let text = if i == 0 { format!("{}={}", d.param, p.label) } else { p.label.clone() };
            let style = font(s, 16.0).pos(Pos::new(HPos::Right, VPos::Bottom));
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((p.total, p.p99)) + Text::new(text, (-s.px(8.0), -s.px(8.0)), style),
                ))
                .map_err(err)?;
        }
        legend.0.push((Glyph::Dashed { colour: c50, width: 2.5 }, format!("p50{suffix}")));
        legend.0.push((Glyph::Line { colour: c99, width: 3.0, dot: true }, format!("p99{suffix}")));
    }
    draw_legend(&legend_area, &legend, s)
}

// ---------------------------------------------------------------------------------------
// Public entry points.

#[derive(Debug, Clone, Copy)]
enum Chart {
    Throughput,
    Latency,
}

impl Chart {
    fn name(self) -> &'static str {
        match self {
            Chart::Throughput => "throughput",
            Chart::Latency => "latency",
        }
    }
}

pub(crate) fn check_size(opts: &PlotOptions) -> Result<(), ReportError> {
    if opts.width < 200 || opts.height < 150 {
        return Err(ReportError::PlotSize { width: opts.width, height: opts.height });
    }
    Ok(())
}

fn prepare(sweep: &Sweep, opts: &PlotOptions, chart: Chart) -> Result<ChartData, ReportError> {
    ensure_registered()?;
    check_size(opts)?;
    let mut d = chart_data(sweep, opts, chart.name())?;
    if let Chart::Latency = chart {
        d.title = sweep_title(sweep, opts, "latency against throughput");
    }
    Ok(d)
}

fn draw_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: Chart,
    d: &ChartData,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
) -> DrawResult {
    let s = Scale::of(opts);
    match chart {
        Chart::Throughput => draw_throughput(root, d, measured, s)?,
        Chart::Latency => draw_latency(root, d, s)?,
    }
    root.present().map_err(err)
}

fn svg_string(
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
    chart: Chart,
) -> Result<String, ReportError> {
    let d = prepare(sweep, opts, chart)?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (opts.width, opts.height)).into_drawing_area();
        draw_on(&root, chart, &d, measured, opts).map_err(|message| ReportError::Plot {
            chart: chart.name(),
            path: None,
            message,
        })?;
    }
    Ok(out)
}

fn png_bytes(
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
    chart: Chart,
) -> Result<Vec<u8>, ReportError> {
    use image::ImageEncoder;
    let d = prepare(sweep, opts, chart)?;
    let (w, h) = (opts.width, opts.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw_on(&root, chart, &d, measured, opts).map_err(|message| ReportError::Plot {
            chart: chart.name(),
            path: None,
            message,
        })?;
    }
    // The encoder plotters' own PNG files go through (image's `save_buffer`), so the bytes
    // are the same as when plotters wrote the file itself.
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, w, h, image::ColorType::Rgb8)
        .map_err(|e| ReportError::Plot { chart: chart.name(), path: None, message: format!("PNG encoding: {e}") })?;
    Ok(png)
}

/// The throughput chart of a sweep as an SVG document (for files and inline HTML).
///
/// Fails with [`ReportError::NothingToPlot`] when no point has a result.
pub fn sweep_svg_string(sweep: &Sweep, measured: &[MeasuredSeries], opts: &PlotOptions) -> Result<String, ReportError> {
    svg_string(sweep, measured, opts, Chart::Throughput)
}

/// Writes the throughput chart of a sweep as SVG, atomically.
pub fn write_sweep_svg(
    path: &Path,
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
) -> Result<(), ReportError> {
    write_atomic(path, sweep_svg_string(sweep, measured, opts)?.as_bytes())
}

/// Writes the throughput chart of a sweep as PNG (`opts.width` x `opts.height` pixels), atomically.
pub fn write_sweep_png(
    path: &Path,
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
) -> Result<(), ReportError> {
    write_atomic(path, &sweep_png_bytes(sweep, measured, opts)?)
}

/// The throughput chart of a sweep as a PNG file's bytes (`opts.width` x `opts.height`).
pub fn sweep_png_bytes(sweep: &Sweep, measured: &[MeasuredSeries], opts: &PlotOptions) -> Result<Vec<u8>, ReportError> {
    png_bytes(sweep, measured, opts, Chart::Throughput)
}

/// The latency chart of a sweep as a PNG file's bytes.
pub fn latency_png_bytes(sweep: &Sweep, opts: &PlotOptions) -> Result<Vec<u8>, ReportError> {
    png_bytes(sweep, &[], opts, Chart::Latency)
}

/// The latency chart (p50 and p99 against total MB/s) of a sweep as an SVG document.
pub fn latency_svg_string(sweep: &Sweep, opts: &PlotOptions) -> Result<String, ReportError> {
    svg_string(sweep, &[], opts, Chart::Latency)
}

/// Writes the latency chart of a sweep as SVG, atomically.
pub fn write_latency_svg(path: &Path, sweep: &Sweep, opts: &PlotOptions) -> Result<(), ReportError> {
    write_atomic(path, latency_svg_string(sweep, opts)?.as_bytes())
}

/// Writes the latency chart of a sweep as PNG, atomically.
pub fn write_latency_png(path: &Path, sweep: &Sweep, opts: &PlotOptions) -> Result<(), ReportError> {
    write_atomic(path, &latency_png_bytes(sweep, opts)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_get_a_log_axis_labelled_like_fio() {
        let vals = [json!("4k"), json!("128k"), json!("1m")];
        let refs: Vec<&Value> = vals.iter().collect();
        let a = XAxis::new("bs", &refs, None);
        assert_eq!(a.kind, XKind::Numeric { log: true, sizes: true });
        assert_eq!(a.ticks, vec![12.0, 17.0, 20.0]);
        assert_eq!(a.label(17.0), "128k");
        assert_eq!(a.plot_raw(131072.0), 17.0);
        assert!(a.desc.contains("log scale"));
    }

    #[test]
    fn small_integer_ranges_stay_linear() {
        let vals: Vec<Value> = (1..=6).map(|i| json!(i)).collect();
        let refs: Vec<&Value> = vals.iter().collect();
        let a = XAxis::new("active", &refs, None);
        assert_eq!(a.kind, XKind::Numeric { log: false, sizes: false });
        assert_eq!(a.label(3.0), "3");
        assert!(a.lo < 1.0 && a.hi > 6.0);
    }

    #[test]
    fn words_are_categories_in_sweep_order() {
        let vals = [json!("fbs"), json!("cbs")];
        let refs: Vec<&Value> = vals.iter().collect();
        let a = XAxis::new("pm.mode", &refs, Some(true));
        assert_eq!(a.kind, XKind::Categorical(vec!["fbs".into(), "cbs".into()]));
        assert_eq!(a.plot_x(&json!("cbs")), Some(1.0));
        assert_eq!(a.label(0.0), "fbs");
        assert_eq!(a.label(0.5), "");
    }

    #[test]
    fn many_ticks_are_thinned_but_keep_the_ends() {
        let vals: Vec<Value> = (1..=40).map(|i| json!(i)).collect();
        let refs: Vec<&Value> = vals.iter().collect();
        let a = XAxis::new("active", &refs, None);
        assert!(a.ticks.len() <= 17);
        assert_eq!(a.ticks.first(), Some(&1.0));
        assert_eq!(a.ticks.last(), Some(&40.0));
    }

    #[test]
    fn long_labels_are_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
