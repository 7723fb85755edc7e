//! Exporters: JSON, CSV and Markdown behind one small trait, one file per format, and the
//! functions that write a run's or a sweep's whole set of output files.
//!
//! Every file is written with [`write_atomic`]: a reader never sees half a file, and an
//! existing file is replaced whole.

mod atomic;
mod csv;
mod json;
mod markdown;

pub use atomic::write_atomic;
pub(crate) use atomic::write_atomic_with;
pub use csv::{CSV_COLUMNS, CsvExporter};
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;

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

fn write_file(path: PathBuf, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    write_atomic(&path, bytes).map_err(|source| ReportError::Write { path: path.clone(), source })?;
    Ok(path)
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::CreateDir { path: dir.to_path_buf(), source })
}

/// Writes a sweep's files into `dir` (created if missing) and returns their paths in order.
///
/// Always `sweep.json`, `sweep.csv`, `sweep.md`; then `sweep.svg` and `sweep.png`
/// (throughput against the swept value, with the bound and the `measured` overlays); and
/// when the first swept parameter is `iodepth`, `latency.svg` and `latency.png` (p50 and p99
/// latency against total throughput). The plots are skipped when no point of the sweep has
/// a result, since there is nothing to draw; the data files still record the failures.
pub fn write_sweep_outputs(
    dir: &Path,
    sweep: &Sweep,
    measured: &[MeasuredSeries],
    opts: &PlotOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    create_dir(dir)?;
    let mut written = Vec::new();
    for format in ExportFormat::ALL {
        let bytes = format.exporter().sweep(sweep)?;
        let name = format!("sweep.{}", format.extension());
        written.push(write_file(dir.join(name), &bytes)?);
    }
    if sweep.points.iter().all(|p| p.report.is_none()) {
        return Ok(written);
    }
    let svg = dir.join("sweep.svg");
    plot::write_sweep_svg(&svg, sweep, measured, opts)?;
    written.push(svg);
    let png = dir.join("sweep.png");
    plot::write_sweep_png(&png, sweep, measured, opts)?;
    written.push(png);
    if sweep.points.first().is_some_and(|p| p.param == "iodepth") {
        let svg = dir.join("latency.svg");
        plot::write_latency_svg(&svg, sweep, opts)?;
        written.push(svg);
        let png = dir.join("latency.png");
        plot::write_latency_png(&png, sweep, opts)?;
        written.push(png);
    }
    Ok(written)
}

/// Writes one run's `report.json`, `report.csv` and `report.md` into `dir` (created if
/// missing) and returns their paths.
pub fn write_report_outputs(dir: &Path, report: &Report) -> Result<Vec<PathBuf>, ReportError> {
    create_dir(dir)?;
    let mut written = Vec::new();
    for format in ExportFormat::ALL {
        let bytes = format.exporter().report(report)?;
        let name = format!("report.{}", format.extension());
        written.push(write_file(dir.join(name), &bytes)?);
    }
    Ok(written)
}
