//! CSV export: one row per point per drive plus a `total` row per point.
//!
//! Columns (in this order): `param, value, param2, value2, drive, read_mb_s, write_mb_s,
//! mb_s, iops, lat_mean_us, lat_p50_us, lat_p99_us, bottleneck, bound_mb_s, error, partial`.
//! Rates are MB/s (10^6 bytes per second), latencies microseconds. A drive row's
//! `bottleneck` is that drive's own binding resource (empty for a measured drive), the
//! `total` row's the run's. `bound_mb_s` is the
//! closed-form bound on the point's total, so it is filled on the `total` row only; a failed
//! point has a single `total` row with empty numbers and its `error`. A single report exports
//! the same columns with empty `param`/`value`. Written with the `csv` crate, which quotes a
//! field as RFC 4180 says (only when it holds a comma, a quote or a line break), so a label
//! such as `Smith, 2023` reads back whole.
//!
//! Numbers are rounded to what a measurement can tell apart, and printed without trailing
//! zeros: MB/s to 0.01 (10 kB/s: three significant digits down to 1 MB/s, where a 4 KiB
//! random read on a disk sits), IOPS to a whole I/O per second, latencies to 0.1 µs (the
//! resolution fio's `clat` percentiles are usually read at). The JSON keeps full precision.
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

/// Rounds `v` to `step` (a power of ten) and prints the shortest text that parses back to
/// the rounded value, so `560.0000000000072` prints as `560` and `0.30000000000000004` as
/// `0.3`. Rounding by dividing a whole number of steps gives the f64 nearest that decimal.
fn rounded(v: f64, per_unit: f64) -> String {
    let r = (v * per_unit).round() / per_unit;
    // -0.0 prints as "-0"; a rounded zero is zero.
    format!("{}", if r == 0.0 { 0.0 } else { r })
}

fn mb_s(v: f64) -> String {
    rounded(v, 100.0)
}

fn iops(v: f64) -> String {
    rounded(v, 1.0)
}

fn us(v: f64) -> String {
    rounded(v, 10.0)
}

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new())
}

fn push_row(out: &mut csv::Writer<Vec<u8>>, cells: &[String]) -> Result<(), ReportError> {
    out.write_record(cells).map_err(csv_error)
}

fn csv_error(e: csv::Error) -> ReportError {
    ReportError::Write { path: "CSV".into(), source: std::io::Error::other(e) }
}

fn finish(out: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, ReportError> {
    out.into_inner().map_err(|e| csv_error(e.into_error().into()))
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
    iops_v: f64,
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
        mb_s(read),
        mb_s(write),
        mb_s(read + write),
        iops(iops_v),
        us(lat.mean),
        us(lat.p50),
        us(lat.p99),
        bottleneck.to_string(),
        bound.map(mb_s).unwrap_or_default(),
        String::new(),
        partial.to_string(),
    ]
}

fn report_rows(out: &mut csv::Writer<Vec<u8>>, key: &Key, r: &Report, bound: Option<f64>) -> Result<(), ReportError> {
    let b = &r.bottleneck.id;
    for d in &r.drives {
        // Each drive's own binding resource (simulated runs); a measured drive has none.
        let own = d.bottleneck.as_ref().map_or("", |b| b.id.as_str());
        let row = measurement_row(key, &d.id, d.read_mb_s, d.write_mb_s, d.iops, &d.lat_us, own, None, r.partial);
        push_row(out, &row)?;
    }
    let t = &r.total;
    let mut row = measurement_row(key, "total", t.read_mb_s, t.write_mb_s, t.iops, &t.lat_us, b, bound, r.partial);
    // The total's own mb_s, which a producer may have computed more precisely than read + write.
    row[7] = mb_s(t.mb_s);
    push_row(out, &row)
}

fn header() -> Result<csv::Writer<Vec<u8>>, ReportError> {
    let mut w = writer();
    w.write_record(CSV_COLUMNS).map_err(csv_error)?;
    Ok(w)
}

impl Exporter for CsvExporter {
    fn format(&self) -> ExportFormat {
        ExportFormat::Csv
    }

    fn sweep(&self, sweep: &Sweep) -> Result<Vec<u8>, ReportError> {
        let mut out = header()?;
        for p in &sweep.points {
            let key = Key::of(p);
            match &p.report {
                Some(r) => report_rows(&mut out, &key, r, p.bound_mb_s)?,
                None => {
                    let mut row = vec![String::new(); CSV_COLUMNS.len()];
                    row[0] = key.param;
                    row[1] = key.value;
                    row[2] = key.param2;
                    row[3] = key.value2;
                    row[4] = "total".into();
                    row[13] = p.bound_mb_s.map(mb_s).unwrap_or_default();
                    row[14] = p.error.clone().unwrap_or_else(|| "no result".into());
                    // A point without a result in an interrupted sweep is one the interrupt stopped.
                    row[15] = sweep.partial.to_string();
                    push_row(&mut out, &row)?;
                }
            }
        }
        finish(out)
    }

    fn report(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let mut out = header()?;
        report_rows(&mut out, &Key::none(), report, None)?;
        finish(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        let mut w = writer();
        for cells in [["plain", "a,b"], ["say \"hi\"", "two\nlines"]] {
            w.write_record(cells).unwrap();
        }
        let text = String::from_utf8(finish(w).unwrap()).unwrap();
        assert_eq!(text, "plain,\"a,b\"\n\"say \"\"hi\"\"\",\"two\nlines\"\n");
    }

    #[test]
    fn numbers_carry_what_a_measurement_tells_apart() {
        // 0.1 + 0.2 is 0.30000000000000004 in binary: printed as its rounded decimal.
        assert_eq!(mb_s(0.1 + 0.2), "0.3");
        assert_eq!(mb_s(560.0000000000072), "560");
        assert_eq!(mb_s(1790.123456789), "1790.12");
        assert_eq!(mb_s(0.004), "0");
        assert_eq!(mb_s(-0.001), "0");
        assert_eq!(iops(4043.6), "4044");
        assert_eq!(us(247.04999), "247");
        assert_eq!(us(1.25001), "1.3");
    }
}
