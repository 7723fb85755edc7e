//! Exporters: JSON, CSV and Markdown behind one small trait, one file per format, and the
//! functions that write a run's or a sweep's whole set of output files.
//!
//! Every file goes through [`output`]: a single file with [`write_atomic`], a directory of
//! files with [`write_set`]. A reader never sees half a file or a mix of two runs' files, and
//! nothing is written over a device node, FIFO, socket or symbolic link.

mod csv;
mod json;
mod markdown;
pub mod output;
mod target;

pub use csv::{CSV_COLUMNS, CsvExporter};
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use output::{check_output_dir, check_output_file, remove_stale_temporaries, write_atomic, write_set};
pub use target::{Bare, OutFormat, OutTarget};

use crate::error::ReportError;
use crate::plot::{self, MeasuredSeries, PlotOptions};
use iopath_model::report::{Report, Sweep};
use std::path::{Path, PathBuf};

/// A file format for results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// Pretty JSON, the documents of DESIGN.md §4.
    Json,
    /// Comma-separated values, one row per point per drive (see [`CSV_COLUMNS`]).
    Csv,
    /// A Markdown table with a short header.
    Markdown,
}

impl ExportFormat {
    /// Every format, in the order [`write_sweep_outputs`] writes them.
    pub const ALL: [ExportFormat; 3] = [ExportFormat::Json, ExportFormat::Csv, ExportFormat::Markdown];

    /// File extension without the dot: `json`, `csv`, `md`.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
            ExportFormat::Markdown => "md",
        }
    }

    /// The format a file name's extension asks for (`.json`, `.csv`, `.md`/`.markdown`).
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(ExportFormat::Json),
            "csv" => Some(ExportFormat::Csv),
            "md" | "markdown" => Some(ExportFormat::Markdown),
            _ => None,
        }
    }

    /// The same format as an output path names it.
    pub fn out_format(self) -> OutFormat {
        match self {
            ExportFormat::Json => OutFormat::Json,
            ExportFormat::Csv => OutFormat::Csv,
            ExportFormat::Markdown => OutFormat::Markdown,
        }
    }

    /// The exporter that writes this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            ExportFormat::Json => Box::new(JsonExporter),
            ExportFormat::Csv => Box::new(CsvExporter),
            ExportFormat::Markdown => Box::new(MarkdownExporter),
        }
    }
}

/// Turns results into the bytes of one file format.
pub trait Exporter {
    /// The format this exporter writes.
    fn format(&self) -> ExportFormat;
    /// A sweep as one document.
    fn sweep(&self, sweep: &Sweep) -> Result<Vec<u8>, ReportError>;
    /// One run as one document.
    fn report(&self, report: &Report) -> Result<Vec<u8>, ReportError>;
}

/// Every file name [`write_sweep_outputs`] may write: what an existing sweep directory may
/// hold for it to be replaced (see [`check_output_dir`]).
pub const SWEEP_SET: &[&str] =
    &["sweep.json", "sweep.csv", "sweep.md", "sweep.svg", "sweep.png", "latency.svg", "latency.png"];

/// Every file name [`write_report_outputs`] writes.
pub const REPORT_SET: &[&str] = &["report.json", "report.csv", "report.md"];

/// The files of `iopath report --out DIR`: the page and the full-load run.
pub const PAGE_SET: &[&str] = &["report.html", "report.json"];

/// The files of `iopath compare --out DIR`: the chart of measured against predicted.
pub const COMPARE_SET: &[&str] = &["compare.svg", "compare.png"];

/// Writes a sweep's files as the directory `dir` (created if missing, replaced whole if it
/// holds an older set; see [`write_set`]) and returns their paths in order: every file of
/// [`sweep_files`].
pub fn write_sweep_outputs(
    dir: &Path,
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    write_sweep_to(&OutTarget::Dir(dir.to_path_buf()), sweep, measured, opts)
}

/// Writes a sweep to an output target: one file of the format its extension names, or the
/// directory of all of [`sweep_files`].
pub fn write_sweep_to(
    target: &OutTarget,
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    target.check(SWEEP_SET)?;
    let files = sweep_files(sweep, measured, opts, &|f| target.wants(f))?;
    target.write(&files, SWEEP_SET)
}

/// The formats a sweep can be written as.
pub const SWEEP_FORMATS: &[OutFormat] =
    &[OutFormat::Json, OutFormat::Csv, OutFormat::Markdown, OutFormat::Svg, OutFormat::Png];

/// The formats one run can be written as.
pub const REPORT_FORMATS: &[OutFormat] = &[OutFormat::Json, OutFormat::Csv, OutFormat::Markdown];

/// A sweep's files, those of the formats `want` accepts: `sweep.json` (the sweep as
/// serialized, plus `overlay`: the measured series the chart was drawn with, when there
/// are any), `sweep.csv`, `sweep.md`; then `sweep.svg` and `sweep.png` (throughput against
/// the swept value, with the bound and the `measured` overlays); and when the first swept
/// parameter is `iodepth`, `latency.svg` and `latency.png` (p50 and p99 latency against
/// total throughput). The plots are skipped when no point of the sweep has a result, since
/// there is nothing to draw; the data files still record the failures.
pub fn sweep_files(
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
    want: &dyn Fn(OutFormat) -> bool,
) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
    let mut files = Vec::new();
    if want(OutFormat::Json) {
        files.push(("sweep.json".into(), json::sweep_with_overlay(sweep, measured)?));
    }
    for format in [ExportFormat::Csv, ExportFormat::Markdown] {
        if want(format.out_format()) {
            files.push((format!("sweep.{}", format.extension()), format.exporter().sweep(sweep)?));
        }
    }
    if sweep.points.iter().any(|p| p.report.is_some()) {
        let latency = sweep.points.first().is_some_and(|p| p.param == "iodepth");
        if want(OutFormat::Svg) {
            files.push(("sweep.svg".into(), plot::sweep_svg_string(sweep, measured, opts)?.into_bytes()));
            if latency {
                files.push(("latency.svg".into(), plot::latency_svg_string(sweep, opts)?.into_bytes()));
            }
        }
        if want(OutFormat::Png) {
            files.push(("sweep.png".into(), plot::sweep_png_bytes(sweep, measured, opts)?));
            if latency {
                files.push(("latency.png".into(), plot::latency_png_bytes(sweep, opts)?));
            }
        }
    }
    // The directory's files in the order of SWEEP_SET, whatever order they were drawn in.
    files.sort_by_key(|(n, _)| SWEEP_SET.iter().position(|s| s == n));
    Ok(files)
}

/// Writes one run's `report.json`, `report.csv` and `report.md` as the directory `dir`
/// (created if missing, replaced whole if it holds an older set) and returns their paths.
pub fn write_report_outputs(dir: &Path, report: &Report) -> Result<Vec<PathBuf>, ReportError> {
    write_report_to(&OutTarget::Dir(dir.to_path_buf()), report)
}

/// Writes one run to an output target: `report.json`, `.csv` or `.md` as one file of the
/// format its extension names, or all three as a directory.
pub fn write_report_to(target: &OutTarget, report: &Report) -> Result<Vec<PathBuf>, ReportError> {
    target.check(REPORT_SET)?;
    let mut files = Vec::new();
    for format in ExportFormat::ALL {
        if target.wants(format.out_format()) {
            files.push((format!("report.{}", format.extension()), format.exporter().report(report)?));
        }
    }
    target.write(&files, REPORT_SET)
}
