//! JSON export: the `Sweep` or `Report` exactly as serialized, pretty-printed.
//!
//! The documents carry their own `schema_version` (DESIGN.md §4), so this exporter adds no
//! wrapper; reading a file back with serde gives the value that was written.

use super::{ExportFormat, Exporter};
use crate::error::ReportError;
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
