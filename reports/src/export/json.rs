//! JSON export: the `Sweep` or `Report` exactly as serialized, pretty-printed.
//!
//! The documents carry their own `schema_version` (DESIGN.md §4), so this exporter adds no
//! wrapper; reading a file back with serde gives the value that was written. A sweep drawn
//! with measured points (`sweep --measured`) carries them as `overlay`, a list of
//! `{ "label", "points": [[x, mb_s], ...] }`, which a `Sweep` reader ignores.

use super::{ExportFormat, Exporter};
use crate::error::ReportError;
use crate::plot::MeasuredSeries;
use iopath_model::report::{Report, Sweep};

/// Writes pretty JSON with a final newline.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExporter;

fn pretty<T: serde::Serialize>(v: &T, what: &'static str) -> Result<Vec<u8>, ReportError> {
    let mut bytes = serde_json::to_vec_pretty(v).map_err(|source| ReportError::Json { what, source })?;
    bytes.push(b'\n');
    Ok(bytes)
}

impl Exporter for JsonExporter {
    fn format(&self) -> ExportFormat {
        ExportFormat::Json
    }

    fn sweep(&self, sweep: &Sweep) -> Result<Vec<u8>, ReportError> {
        pretty(sweep, "the sweep")
    }

    fn report(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        pretty(report, "the report")
    }
}

/// A sweep as [`JsonExporter`] writes it, with the measured series its chart overlays as
/// `overlay` (absent when there are none, so such a document is the sweep as serialized).
pub(super) fn sweep_with_overlay(sweep: &Sweep, measured: &[MeasuredSeries]) -> Result<Vec<u8>, ReportError> {
    if measured.is_empty() {
        return pretty(sweep, "the sweep");
    }
    let mut v = serde_json::to_value(sweep).map_err(|source| ReportError::Json { what: "the sweep", source })?;
    let overlay: Vec<serde_json::Value> = measured
        .iter()
        .map(|m| serde_json::json!({ "label": m.label, "points": m.points.iter().map(|(x, y)| [*x, *y]).collect::<Vec<_>>() }))
        .collect();
    if let Some(o) = v.as_object_mut() {
        o.insert("overlay".into(), serde_json::Value::Array(overlay));
    }
    pretty(&v, "the sweep")
}
