//! CSV export: one row per point per drive plus a `total` row per point.
//!
//! Columns (in this order): `param, value, param2, value2, drive, read_mb_s, write_mb_s,
//! mb_s, iops, lat_mean_us, lat_p50_us, lat_p99_us, bottleneck, bound_mb_s, error, partial`.
//! Rates are MB/s (10^6 bytes per second), latencies microseconds. `bound_mb_s` is the
//! closed-form bound on the point's total, so it is filled on the `total` row only; a failed
//! point has a single `total` row with empty numbers and its `error`. A single report exports
//! the same columns with empty `param`/`value`. Fields are quoted as RFC 4180 says (only when
//! they hold a comma, a quote or a line break); numbers are printed in full precision.
//! `partial` is `true` on every row of a run that was interrupted (its numbers cover only
//! the time it reached) and on the row of a point an interrupt kept from running, else `false`.

use super::{ExportFormat, Exporter};
use crate::error::ReportError;
use crate::tables::value_label;
use iopath_model::report::{Latency, Report, Sweep, SweepPoint};

/// The header row, in column order.
pub const CSV_COLUMNS: [&str; 16] = [
    "param",
    "value",
    "param2",
    "value2",
    "drive",
    "read_mb_s",
    "write_mb_s",
    "mb_s",
    "iops",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "bottleneck",
    "bound_mb_s",
    "error",
    "partial",
];

/// Writes the rows described in the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExporter;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn push_row(out: &mut String, cells: &[String]) {
    let line: Vec<String> = cells.iter().map(|c| field(c)).collect();
    out.push_str(&line.join(","));
    out.push('\n');
}

fn num(v: f64) -> String {
    // `{}` prints the shortest text that parses back to the same f64.
    format!("{v}")
}

struct Key {
    param: String,
    value: String,
    param2: String,
    value2: String,
}

impl Key {
    fn of(p: &SweepPoint) -> Self {
        Key {
            param: p.param.clone(),
            value: value_label(&p.value),
            param2: p.param2.clone().unwrap_or_default(),
            value2: p.value2.as_ref().map(value_label).unwrap_or_default(),
        }
    }

    fn none() -> Self {
        Key { param: String::new(), value: String::new(), param2: String::new(), value2: String::new() }
    }
}

#[allow(clippy::too_many_arguments)]
fn measurement_row(
    key: &Key,
    drive: &str,
    read: f64,
    write: f64,
    iops: f64,
    lat: &Latency,
    bottleneck: &str,
    bound: Option<f64>,
    partial: bool,
) -> Vec<String> {
    vec![
        key.param.clone(),
        key.value.clone(),
        key.param2.clone(),
        key.value2.clone(),
        drive.to_string(),
        num(read),
        num(write),
        num(read + write),
        num(iops),
        num(lat.mean),
        num(lat.p50),
        num(lat.p99),
        bottleneck.to_string(),
        bound.map(num).unwrap_or_default(),
        String::new(),
        partial.to_string(),
    ]
}

fn report_rows(out: &mut String, key: &Key, r: &Report, bound: Option<f64>) {
    let b = &r.bottleneck.id;
    for d in &r.drives {
        let row = measurement_row(key, &d.id, d.read_mb_s, d.write_mb_s, d.iops, &d.lat_us, b, None, r.partial);
        push_row(out, &row);
    }
    let t = &r.total;
    let mut row = measurement_row(key, "total", t.read_mb_s, t.write_mb_s, t.iops, &t.lat_us, b, bound, r.partial);
    // The total's own mb_s, which a producer may have computed more precisely than read + write.
    row[7] = num(t.mb_s);
    push_row(out, &row);
}

fn header() -> String {
    let mut s = CSV_COLUMNS.join(",");
    s.push('\n');
    s
}

impl Exporter for CsvExporter {
    fn format(&self) -> ExportFormat {
        ExportFormat::Csv
    }

    fn sweep(&self, sweep: &Sweep) -> Result<Vec<u8>, ReportError> {
        let mut out = header();
        for p in &sweep.points {
            let key = Key::of(p);
            match &p.report {
                Some(r) => report_rows(&mut out, &key, r, p.bound_mb_s),
                None => {
                    let mut row = vec![String::new(); CSV_COLUMNS.len()];
                    row[0] = key.param;
                    row[1] = key.value;
                    row[2] = key.param2;
                    row[3] = key.value2;
                    row[4] = "total".into();
                    row[13] = p.bound_mb_s.map(num).unwrap_or_default();
                    row[14] = p.error.clone().unwrap_or_else(|| "no result".into());
                    // A point without a result in an interrupted sweep is one the interrupt stopped.
                    row[15] = sweep.partial.to_string();
                    push_row(&mut out, &row);
                }
            }
        }
        Ok(out.into_bytes())
    }

    fn report(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let mut out = header();
        report_rows(&mut out, &Key::none(), report, None);
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn numbers_round_trip() {
        for v in [0.1, 1790.123456789, 1e-9, 250.0] {
            assert_eq!(num(v).parse::<f64>().unwrap(), v);
        }
    }
}
