//! Measurements to fit or compare against: each becomes a [`Point`] (a workload, the value
//! observed, its metric, optionally one drive).
//!
//! Accepted inputs:
//! - a `Report` (JSON) from `iopath measure` (or `iopath simulate`): one point, total MB/s;
//! - a `Sweep` (JSON) whose points carry reports (`iopath measure --active 1..N`): one point
//!   per report;
//! - fio's JSON output (`--output-format=json`, old and new field names, duplicate keys):
//!   one point, the jobs' summed MB/s; jobs map to drives with `--map JOB=DRIVE`, by filename
//!   (a drive's `dev`), or by a drive id equal to the job name;
//! - a CSV of published points with a header: `rw,bs,iodepth,numjobs,rwmixread,active|drives,
//!   region,set,runtime,drive,label` and one of `mb_s`, `mib_s` (x 1.048576) or `iops`, plus
//!   an optional `weight`. `drives` and `set` hold several entries separated by `;` or spaces.

use super::CalibrateError;
use crate::fio;
use iopath_model::topology::ParamOverride;
use iopath_model::{Topology, WorkloadSpec};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What a point's value measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Total (or one drive's) MB/s, 10^6 bytes per second.
    MbS,
    /// Total (or one drive's) I/Os per second.
    Iops,
}

impl Metric {
    pub fn unit(self) -> &'static str {
        match self {
            Metric::MbS => "MB/s",
            Metric::Iops => "IOPS",
        }
    }
}

/// One observation: the workload it was measured with and what was observed.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Where it came from: `file` or `file:line` or `file#point`.
    pub label: String,
    /// The workload, with drives named as in the topology.
    #[serde(skip)]
    pub spec: WorkloadSpec,
    /// A short description (`read bs=128k iodepth=1 active=3`).
    pub workload: String,
    /// Figure overrides this point was measured with (`pm.fbs=false`).
    #[serde(skip)]
    pub sets: Vec<ParamOverride>,
    pub observed: f64,
    pub metric: Metric,
    /// When set, `observed` is this drive's rate, not the total.
    pub drive: Option<String>,
    pub weight: f64,
    /// Measured seconds, when known (the simulation runs at most this long).
    pub runtime_s: Option<f64>,
}

/// How to read measurement files.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// fio job name, target id or path -> drive id (`--map JOB=DRIVE`).
    pub map: BTreeMap<String, String>,
}

/// Parses `--map` entries `JOB=DRIVE`.
pub fn parse_map(entries: &[String]) -> Result<BTreeMap<String, String>, CalibrateError> {
    let mut m = BTreeMap::new();
    for e in entries {
        for item in e.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item.split_once('=') {
                Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
                    m.insert(a.trim().to_string(), b.trim().to_string());
                }
                _ => return Err(CalibrateError::Map { entry: item.to_string() }),
            }
        }
    }
    Ok(m)
}

/// Reads one measurement file into points, checking every drive it names against `topo`.
pub fn load(path: &Path, topo: &Topology, opts: &LoadOptions) -> Result<Vec<Point>, CalibrateError> {
    let name = path.display().to_string();
    let points = points(&name, &read(path)?, topo, opts)?;
    if points.is_empty() {
        return Err(CalibrateError::Format { file: name, message: "no measured points in the file".to_string() });
    }
    Ok(points)
}

/// A measurement file as read, its format recognised by content: the one reader of
/// measured files for fitting, comparing and overlaying points on a chart.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// A report from `iopath measure` or `iopath simulate` (JSON).
    Report(Value),
    /// A sweep or ramp from iopath (JSON); points without a report failed.
    Sweep(Value),
    /// fio's JSON output (`--output-format=json`): the whole text and its last document.
    Fio {
        /// The text as read (fio's own reader wants it whole).
        text: String,
        /// The last JSON document in it.
        doc: Value,
    },
    /// A CSV table with a header row.
    Table(Table),
}

/// A CSV table: the header (lowercased, trimmed) and every data row with its line number.
/// Fields follow RFC 4180 (a quoted field may hold commas, quotes and line breaks); lines
/// starting with `#` and empty lines are skipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// The file, as named in messages.
    pub file: String,
    /// Line of the header row (1-based).
    pub header_line: u64,
    /// Column names.
    pub header: Vec<String>,
    /// Data rows.
    pub rows: Vec<TableRow>,
}

/// One data row of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    /// Line the row starts on (1-based).
    pub line: u64,
    /// Cells, trimmed.
    pub cells: Vec<String>,
}

/// The columns of iopath's own `sweep.csv` that a reader needs.
const SWEEP_CSV_COLUMNS: &[&str] = &["param", "value", "drive", "mb_s", "error"];

impl Table {
    /// Reads CSV text. Every row has the header's number of cells, or the error names it.
    pub fn parse(file: &str, text: &str) -> Result<Table, CalibrateError> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .comment(Some(b'#'))
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let mut t = Table { file: file.to_string(), ..Default::default() };
        for rec in r.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                CalibrateError::Csv { file: file.to_string(), line, column: None, message: e.to_string() }
            })?;
            let line = rec.position().map(|p| p.line()).unwrap_or(0);
            let cells: Vec<String> = rec.iter().map(str::to_string).collect();
            if cells.iter().all(|c| c.is_empty()) {
                continue;
            }
            if t.header.is_empty() {
                t.header = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
                t.header_line = line;
            } else {
                t.rows.push(TableRow { line, cells });
            }
        }
        Ok(t)
    }

    /// Index of a column.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|c| c == name)
    }

    /// Whether this is iopath's own `sweep.csv` (`iopath sweep --out`).
    pub fn is_sweep_csv(&self) -> bool {
        SWEEP_CSV_COLUMNS.iter().all(|c| self.column(c).is_some())
    }

    /// An error at a row's cell, naming file, line and column.
    pub fn error(&self, line: u64, column: Option<usize>, message: String) -> CalibrateError {
        CalibrateError::Csv {
            file: self.file.clone(),
            line,
            column: column.map(|c| (c + 1, self.header.get(c).cloned().unwrap_or_default())),
            message,
        }
    }
}

/// Reads a measurement file and recognises its format.
pub fn read(path: &Path) -> Result<Measured, CalibrateError> {
    let file = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| CalibrateError::Read { file: file.clone(), cause: e.to_string() })?;
    recognise(&file, &text)
}

/// Recognises measurement text (`file` names it in messages): a `.csv` name, or text that is
/// neither a JSON document nor fio output, is a CSV table.
pub fn recognise(file: &str, text: &str) -> Result<Measured, CalibrateError> {
    let trimmed = text.trim_start();
    if file.to_ascii_lowercase().ends_with(".csv") || !(trimmed.starts_with('{') || text.contains("\"jobs\"")) {
        return Table::parse(file, text).map(Measured::Table);
    }
    let bad = |message: String| CalibrateError::Format { file: file.to_string(), message };
    let start = text.find('{').unwrap_or(0);
    // fio output may hold several documents and text before the first `{`: read the last one.
    let mut last: Option<Value> = None;
    for doc in serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>() {
        match doc {
            Ok(v) => last = Some(v),
            Err(_) if last.is_some() => break,
            Err(e) => return Err(bad(format!("not JSON, nor a CSV: {e}"))),
        }
    }
    let v = last.ok_or_else(|| bad("empty".to_string()))?;
    if v.get("jobs").is_some() {
        return Ok(Measured::Fio { text: text.to_string(), doc: v });
    }
    if v.get("points").and_then(Value::as_array).is_some() {
        return Ok(Measured::Sweep(v));
    }
    if v.get("total").is_some() && v.get("workload").is_some() {
        return Ok(Measured::Report(v));
    }
    Err(bad("not a report or sweep from iopath, nor fio JSON output (--output-format=json), nor a CSV".to_string()))
}

/// Parses measurement text (`file` names it in messages); the format is recognised by content.
pub fn parse(file: &str, text: &str, topo: &Topology, opts: &LoadOptions) -> Result<Vec<Point>, CalibrateError> {
    points(file, &recognise(file, text)?, topo, opts)
}

/// The points of a measurement file, checking every drive it names against `topo`.
pub fn points(file: &str, m: &Measured, topo: &Topology, opts: &LoadOptions) -> Result<Vec<Point>, CalibrateError> {
    match m {
        Measured::Fio { text, doc } => fio_points(file, text, doc, topo, opts).map(|p| vec![p]),
        Measured::Sweep(v) => {
            let mut out = Vec::new();
            for (i, p) in v["points"].as_array().into_iter().flatten().enumerate() {
                match p.get("report") {
                    Some(r) if !r.is_null() => out.push(report_point(&format!("{file}#{i}"), r, topo, opts)?),
                    _ => {} // a failed point of the ramp: nothing measured
                }
            }
            Ok(out)
        }
        Measured::Report(v) => Ok(vec![report_point(file, v, topo, opts)?]),
        Measured::Table(t) if t.is_sweep_csv() => Err(CalibrateError::Format {
            file: file.to_string(),
            message: "is a sweep.csv, which holds rates but not the workload they were measured with; \
                      use the sweep.json written beside it"
                .to_string(),
        }),
        Measured::Table(t) => table_points(t, topo),
    }
}

/// Points to draw over a chart: one series per label, each point (x, total MB/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend label.
    pub label: String,
    /// (x, MB/s) pairs in file order.
    pub points: Vec<(f64, f64)>,
}

/// The points of a measurement file to overlay on a chart against the number of drives (or
/// the swept value). `name` labels series that carry no label of their own.
///
/// - a report: one point at x = its number of drives; a sweep: one point per run point, at
///   its swept value; fio output: one point at x = its number of jobs (label `NAME (fio)`);
/// - iopath's `sweep.csv`: the `total` rows of points that ran, at their swept value;
/// - a CSV with columns `x` (or `active`) and `mb_s` (optional `label`), or a CSV without a
///   header whose columns are x, MB/s and an optional label.
pub fn overlay(name: &str, m: &Measured) -> Result<Vec<Series>, CalibrateError> {
    let one = |label: String, points: Vec<(f64, f64)>| Ok(vec![Series { label, points }]);
    let mb_s = |r: &Value| r.get("total").and_then(|t| t.get("mb_s")).and_then(Value::as_f64);
    match m {
        Measured::Report(r) => {
            let drives = r.get("drives").and_then(Value::as_array).map_or(0, Vec::len);
            one(name.to_string(), mb_s(r).map(|y| (drives as f64, y)).into_iter().collect())
        }
        Measured::Sweep(s) => one(
            name.to_string(),
            s["points"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| Some((p.get("value")?.as_f64()?, mb_s(p.get("report")?)?)))
                .collect(),
        ),
        Measured::Fio { text, .. } => {
            let out = fio::parse_fio_json(name, text)
                .map_err(|e| CalibrateError::Format { file: name.to_string(), message: e.to_string() })?;
            // The point's x is the drives the run covered: a group entry counts its devices.
            let mut drives = 0;
            for job in &out.jobs {
                drives += out.drives_of(job).ok_or_else(|| CalibrateError::Format {
                    file: name.to_string(),
                    message: format!(
                        "fio job {:?} reports a group (group_reporting) over files fio's JSON does not list, so how many drives its point covers is unknown; run the jobs without group_reporting, or on block devices (whose disk_util fio lists)",
                        job.jobname
                    ),
                })?;
            }
            let r = fio::to_report(&out, &Default::default(), "fio");
            one(format!("{name} (fio)"), vec![(drives as f64, r.total.mb_s)])
        }
        Measured::Table(t) => table_series(name, t),
    }
}

fn table_series(name: &str, t: &Table) -> Result<Vec<Series>, CalibrateError> {
    let mut series: Vec<Series> = Vec::new();
    let mut add = |label: String, x: f64, y: f64| match series.iter_mut().find(|s| s.label == label) {
        Some(s) => s.points.push((x, y)),
        None => series.push(Series { label, points: vec![(x, y)] }),
    };
    let number = |line: u64, cells: &[String], c: usize| -> Result<f64, CalibrateError> {
        let v = cells.get(c).map(String::as_str).unwrap_or("");
        v.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .ok_or_else(|| t.error(line, Some(c), format!("expected a number, found {v:?}")))
    };
    // Without a header (the first row is numbers): x, MB/s and an optional label.
    if t.header.first().is_some_and(|c| c.parse::<f64>().is_ok()) {
        let first = TableRow { line: t.header_line, cells: t.header.clone() };
        for row in std::iter::once(&first).chain(&t.rows) {
            let (x, y) = (number(row.line, &row.cells, 0)?, number(row.line, &row.cells, 1)?);
            add(row.cells.get(2).cloned().unwrap_or_else(|| name.to_string()), x, y);
        }
        return Ok(series);
    }
    if t.is_sweep_csv() {
        let (value, drive, y, error) = (t.column("value"), t.column("drive"), t.column("mb_s"), t.column("error"));
        let (value, drive, y, error) = (value.unwrap_or(0), drive.unwrap_or(0), y.unwrap_or(0), error.unwrap_or(0));
        let second = t.column("value2");
        for row in &t.rows {
            let cell = |c: usize| row.cells.get(c).map(String::as_str).unwrap_or("");
            if cell(drive) != "total" || !cell(error).is_empty() || cell(y).is_empty() {
                continue; // a drive's row, or a point that did not run
            }
            let label = match (t.column("param2"), second) {
                (Some(p2), Some(v2)) if !cell(v2).is_empty() => format!("{name} {}={}", cell(p2), cell(v2)),
                _ => name.to_string(),
            };
            add(label, number(row.line, &row.cells, value)?, number(row.line, &row.cells, y)?);
        }
        return Ok(series);
    }
    let x = t.column("x").or_else(|| t.column("active"));
    let (Some(x), Some(y)) = (x, t.column("mb_s")) else {
        return Err(t.error(
            t.header_line,
            None,
            "a chart overlay needs columns x (or active) and mb_s, e.g. x,mb_s,label".to_string(),
        ));
    };
    let label = t.column("label");
    for row in &t.rows {
        if row.cells.len() != t.header.len() {
            return Err(t.error(
                row.line,
                None,
                format!("{} cells, the header has {}", row.cells.len(), t.header.len()),
            ));
        }
        let l = label.map(|c| row.cells[c].clone()).filter(|l| !l.is_empty()).unwrap_or_else(|| name.to_string());
        add(l, number(row.line, &row.cells, x)?, number(row.line, &row.cells, y)?);
    }
    Ok(series)
}

fn drive_ids(topo: &Topology) -> Vec<String> {
    topo.drives.iter().map(|&ix| topo.nodes[ix].id.clone()).collect()
}

/// Maps a target (id or path) to a drive: `--map`, a drive id, a drive's `dev`, else `None`.
fn map_target(topo: &Topology, opts: &LoadOptions, keys: &[&str]) -> Option<String> {
    for k in keys {
        if let Some(d) = opts.map.get(*k) {
            return Some(d.clone());
        }
    }
    for k in keys {
        for &ix in &topo.drives {
            let n = &topo.nodes[ix];
            if n.id == *k || n.dev.as_deref() == Some(*k) {
                return Some(n.id.clone());
            }
        }
    }
    None
}

fn check_drive(file: &str, topo: &Topology, d: &str) -> Result<(), CalibrateError> {
    if topo.drives.iter().any(|&ix| topo.nodes[ix].id == d) {
        Ok(())
    } else {
        Err(CalibrateError::NoSuchDrive {
            file: file.to_string(),
            drive: d.to_string(),
            topology: topo.name.clone(),
            drives: drive_ids(topo).join(", "),
        })
    }
}

fn num_str(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// `262144` -> `256k`, `1048576` -> `1m` (fio's units, k = 1024); anything else as is.
fn short_size(s: &str) -> String {
    match s.parse::<u64>() {
        Ok(b) if b > 0 && b % (1 << 20) == 0 => format!("{}m", b >> 20),
        Ok(b) if b > 0 && b % 1024 == 0 => format!("{}k", b >> 10),
        _ => s.to_string(),
    }
}

fn describe(spec: &WorkloadSpec) -> String {
    let mut s = format!(
        "{} bs={} iodepth={}",
        spec.rw.as_deref().unwrap_or("read"),
        spec.bs.as_deref().unwrap_or("128k"),
        spec.iodepth.unwrap_or(1)
    );
    if let Some(n) = spec.numjobs.filter(|n| *n > 1) {
        s += &format!(" numjobs={n}");
    }
    if let Some(r) = &spec.region {
        s += &format!(" region={r}");
    }
    if let Some(a) = spec.active {
        s += &format!(" active={a}");
    }
    if let Some(d) = &spec.drives {
        s += &format!(" drives={}", d.join(";"));
    }
    s
}

/// A point from a report (measured, or simulated by iopath).
fn report_point(label: &str, r: &Value, topo: &Topology, opts: &LoadOptions) -> Result<Point, CalibrateError> {
    let bad = |m: &str| CalibrateError::Point { point: label.to_string(), message: m.to_string() };
    let w = r.get("workload").ok_or_else(|| bad("no workload"))?;
    let total =
        r.get("total").and_then(|t| t.get("mb_s")).and_then(Value::as_f64).ok_or_else(|| bad("no total.mb_s"))?;
    let u32_of = |k: &str| w.get(k).and_then(Value::as_u64).map(|n| n as u32);
    let mut spec = WorkloadSpec {
        rw: w.get("rw").and_then(Value::as_str).map(str::to_string),
        bs: w.get("bs").and_then(num_str).map(|b| short_size(&b)),
        iodepth: u32_of("iodepth"),
        numjobs: u32_of("numjobs"),
        rwmixread: u32_of("rwmixread"),
        region: w.get("region").and_then(Value::as_f64).filter(|f| *f < 1.0).map(|f| format!("{}%", f * 100.0)),
        seed: w.get("seed").and_then(Value::as_u64),
        ..Default::default()
    };
    if let Some(c) = w.get("copies").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        let _ = c;
        return Err(bad("copies cannot be fitted yet; fit plain reads or writes"));
    }
    // Targets: measured reports list {id, path} (in `measured`, or inside `workload` in
    // reports written before that section existed); simulated ones carry the Targets enum.
    let measured = r.get("measured").filter(|m| m.is_object());
    match measured.and_then(|m| m.get("targets")).or_else(|| w.get("targets")) {
        Some(Value::Array(ts)) => {
            let mut drives = Vec::new();
            for (k, t) in ts.iter().enumerate() {
                let id = t.get("id").and_then(Value::as_str).unwrap_or("");
                let path = t.get("path").and_then(Value::as_str).unwrap_or("");
                // Positional fallback: the k-th target of the measurement is the k-th drive.
                let d = map_target(topo, opts, &[id, path]).or_else(|| drive_ids(topo).get(k).cloned()).ok_or_else(
                    || CalibrateError::Unmapped {
                        file: label.to_string(),
                        what: format!("target {id:?}"),
                        key: id.to_string(),
                        drives: drive_ids(topo).join(", "),
                    },
                )?;
                check_drive(label, topo, &d)?;
                drives.push(d);
            }
            spec.drives = Some(drives);
        }
        Some(Value::Object(m)) if m.contains_key("active") => {
            spec.active = m.get("active").and_then(Value::as_u64).map(|n| n as usize);
        }
        Some(Value::Object(m)) if m.contains_key("drives") => {
            let ds: Vec<String> =
                m["drives"].as_array().into_iter().flatten().filter_map(|d| d.as_str().map(str::to_string)).collect();
            for d in &ds {
                check_drive(label, topo, d)?;
            }
            spec.drives = Some(ds);
        }
        _ => {}
    }
    let runtime_s = measured
        .and_then(|m| m.get("runtime_s"))
        .or_else(|| w.get("runtime_s"))
        .and_then(Value::as_f64)
        .or_else(|| r.get("cost").and_then(|c| c.get("sim_s")).and_then(Value::as_f64))
        .filter(|s| *s > 0.0);
    Ok(Point {
        label: label.to_string(),
        workload: describe(&spec),
        spec,
        sets: Vec::new(),
        observed: total,
        metric: Metric::MbS,
        drive: None,
        weight: 1.0,
        runtime_s,
    })
}

/// One point of fio's JSON output: its jobs' summed MB/s over the drives they ran on. A job
/// entry fio reports as a group (`group_reporting`) is the sum over every drive of the
/// group, never one drive's: its drives are named by `--map JOB=D1+D2`, else found in fio's
/// `disk_util` (the devices the run touched, when the output holds one group), else it is
/// the group's one file (every job on the global `filename`, or as many jobs as one
/// section's `numjobs`); otherwise the point is refused rather than credited to one drive.
fn fio_points(
    file: &str,
    text: &str,
    _root: &Value,
    topo: &Topology,
    opts: &LoadOptions,
) -> Result<Point, CalibrateError> {
    let out = fio::parse_fio_json(file, text)
        .map_err(|e| CalibrateError::Format { file: file.to_string(), message: e.to_string() })?;
    let bad = |message: String| CalibrateError::Point { point: file.to_string(), message };
    let mut spec: Option<WorkloadSpec> = None;
    let mut drives: Vec<String> = Vec::new();
    let mut total = 0.0;
    let mut secs: f64 = 0.0;
    for job in &out.jobs {
        let s = fio_job_spec(job).map_err(|m| bad(format!("job {:?}: {m}", job.jobname)))?;
        match &spec {
            None => spec = Some(s),
            Some(prev) if *prev != s => {
                return Err(bad(format!(
                    "job {:?} runs {} but an earlier job runs {}; put jobs with different workloads in separate files",
                    job.jobname,
                    describe(&s),
                    describe(prev)
                )));
            }
            Some(_) => {}
        }
        for d in job_drives(file, &out, job, topo, opts)? {
            check_drive(file, topo, &d)?;
            if drives.contains(&d) {
                return Err(bad(format!(
                    "drive {d} is named by two jobs (job {:?}); one job entry per drive, or one group over them",
                    job.jobname
                )));
            }
            drives.push(d);
        }
        total += (job.read.bw_bytes + job.write.bw_bytes) / 1e6;
        secs = secs.max(job.read.runtime_ms.max(job.write.runtime_ms) as f64 / 1000.0);
    }
    let mut spec = spec.ok_or_else(|| bad("fio output holds no jobs".to_string()))?;
    spec.drives = Some(drives);
    Ok(Point {
        label: file.to_string(),
        workload: describe(&spec),
        spec,
        sets: Vec::new(),
        observed: total,
        metric: Metric::MbS,
        drive: None,
        weight: 1.0,
        runtime_s: if secs > 0.0 { Some(secs) } else { None },
    })
}

/// The workload of one fio job entry, with fio's meanings: sizes under its `kb_base`, a
/// synchronous engine (fio's default psync, pvsync, pvsync2, sync) at depth 1, `numjobs`
/// from the options of a group (fio folds the clones in), `size` as the region.
fn fio_job_spec(job: &fio::FioJob) -> Result<WorkloadSpec, String> {
    use iopath_model::units::{KbBase, parse_fio_size};
    let o = &job.options;
    let int = |k: &str| -> Result<Option<u32>, String> {
        o.get(k).map(|v| v.trim().parse::<u32>().map_err(|_| format!("{k}={v:?} is not a whole number"))).transpose()
    };
    let kb = o
        .get("kb_base")
        .map_or(Some(KbBase::Binary), |v| KbBase::from_option(v))
        .ok_or("kb_base is not 1024 or 1000")?;
    let size = |v: &str| parse_fio_size(v, kb).map(|b| b.get().to_string()).map_err(|e| e.to_string());
    let rw = o.get("rw").or_else(|| o.get("readwrite")).cloned().unwrap_or_else(|| "read".to_string());
    let bs = match o.get("bs").or_else(|| o.get("blocksize")) {
        None => "4096".to_string(),
        // A range `4k-16k` runs sizes iopath does not model; its low end is kept as before.
        Some(b) => b
            .split(',')
            .map(|side| size(side.split([':', '-']).next().unwrap_or(side)))
            .collect::<Result<Vec<_>, _>>()?
            .join(","),
    };
    let sync = matches!(o.get("ioengine").map(String::as_str), None | Some("psync" | "pvsync" | "pvsync2" | "sync"));
    let mut spec = WorkloadSpec {
        rw: Some(if rw == "readwrite" { "rw".to_string() } else { rw }),
        bs: Some(bs),
        // fio's HOWTO, iodepth: a synchronous engine runs at depth 1 whatever iodepth says.
        iodepth: if sync { Some(1) } else { int("iodepth")? },
        numjobs: Some(if job.group_reporting { int("numjobs")?.unwrap_or(1) } else { job.clones.max(1) }),
        rwmixread: match (int("rwmixread")?, int("rwmixwrite")?) {
            (None, Some(w)) if w <= 100 => Some(100 - w),
            (r, _) => r,
        },
        ..Default::default()
    };
    if let Some(v) = o.get("size") {
        if v.trim().ends_with('%') {
            spec.region = Some(v.trim().to_string());
        } else {
            spec.size = Some(size(v)?);
        }
    }
    if let Some(v) = o.get("offset").filter(|v| !matches!(v.trim(), "0" | "0%")) {
        return Err(format!(
            "offset={v}: iopath's workloads start at the beginning of each drive; a run from an offset cannot be compared yet"
        ));
    }
    Ok(spec)
}

/// The drives one fio job entry ran on (see [`fio_points`]).
fn job_drives(
    file: &str,
    out: &fio::FioOutput,
    job: &fio::FioJob,
    topo: &Topology,
    opts: &LoadOptions,
) -> Result<Vec<String>, CalibrateError> {
    let fname = job.filename.clone().unwrap_or_default();
    let unmapped = |what: String| CalibrateError::Unmapped {
        file: file.to_string(),
        what,
        key: job.jobname.clone(),
        drives: drive_ids(topo).join(", "),
    };
    if !job.group_reporting {
        let d = map_target(topo, opts, &[&job.jobname, &fname])
            .ok_or_else(|| unmapped(format!("fio job {:?} (filename {fname:?})", job.jobname)))?;
        return Ok(vec![d]);
    }
    if let Some(m) = opts.map.get(&job.jobname) {
        return Ok(m.split('+').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect());
    }
    // fio's disk_util names each device the run touched; with one group they are its drives.
    let groups: std::collections::BTreeSet<u64> = out.jobs.iter().map(|j| j.groupid).collect();
    if groups.len() == 1 {
        let by_util: Vec<String> = topo
            .drives
            .iter()
            .filter(|&&ix| {
                topo.nodes[ix].dev.as_deref().is_some_and(|d| {
                    let name = d.rsplit('/').next().unwrap_or(d);
                    d.starts_with("/dev/") && out.disk_util.iter().any(|u| u == name)
                })
            })
            .map(|&ix| topo.nodes[ix].id.clone())
            .collect();
        if !by_util.is_empty() {
            return Ok(by_util);
        }
    }
    // One file for the whole group: every job on the global filename, or the group holds
    // just one section's numjobs clones.
    match map_target(topo, opts, &[&fname]) {
        Some(d) if out.group_on_one_file(job) => Ok(vec![d]),
        _ => Err(CalibrateError::UnlistedGroup {
            file: file.to_string(),
            job: job.jobname.clone(),
            jobs: job.jobs_in_entry(),
            named: fname.to_string(),
            drives: format!("{}: {}", topo.name, drive_ids(topo).join(", ")),
        }),
    }
}

const CSV_COLUMNS: &[&str] = &[
    "rw",
    "bs",
    "iodepth",
    "numjobs",
    "rwmixread",
    "active",
    "drives",
    "region",
    "set",
    "runtime",
    "drive",
    "label",
    "mb_s",
    "mib_s",
    "iops",
    "weight",
];

fn table_points(t: &Table, topo: &Topology) -> Result<Vec<Point>, CalibrateError> {
    let file = &t.file;
    if t.header.is_empty() {
        return Err(CalibrateError::Format {
            file: file.clone(),
            message: "not a report or sweep (JSON) and no CSV header; the first line names the columns, e.g. rw,bs,iodepth,active,mb_s".to_string(),
        });
    }
    let h = &t.header;
    for (c, name) in h.iter().enumerate() {
        if !CSV_COLUMNS.contains(&name.as_str()) {
            return Err(t.error(
                t.header_line,
                Some(c),
                format!("unknown column {name:?}; columns are {}", CSV_COLUMNS.join(", ")),
            ));
        }
    }
    if !h.iter().any(|c| c == "mb_s" || c == "mib_s" || c == "iops") {
        return Err(t.error(t.header_line, None, "the header needs a column mb_s, mib_s or iops".to_string()));
    }
    let mut out = Vec::new();
    for row in &t.rows {
        out.push(table_point(t, row, topo)?);
    }
    Ok(out)
}

/// One point of a CSV table of published points (columns in [`CSV_COLUMNS`]).
fn table_point(t: &Table, row: &TableRow, topo: &Topology) -> Result<Point, CalibrateError> {
    let (h, cells) = (&t.header, &row.cells);
    let at = format!("{}:{}", t.file, row.line);
    let bad = |c: Option<usize>, m: String| t.error(row.line, c, m);
    if cells.len() != h.len() {
        return Err(bad(None, format!("{} cells, the header has {}", cells.len(), h.len())));
    }
    let col = |k: &str| t.column(k);
    let get = |k: &str| col(k).map(|ix| cells[ix].as_str()).filter(|v| !v.is_empty());
    let int = |k: &str| -> Result<Option<u32>, CalibrateError> {
        get(k)
            .map(|v| v.parse::<u32>().map_err(|_| bad(col(k), format!("{k}={v:?}: expected a whole number"))))
            .transpose()
    };
    let float = |k: &str| -> Result<Option<f64>, CalibrateError> {
        get(k)
            .map(|v| match v.parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
                _ => Err(bad(col(k), format!("{k}={v:?}: expected a positive number"))),
            })
            .transpose()
    };
    let list = |k: &str| -> Vec<String> {
        get(k).map(|v| v.split([';', ' ']).filter(|s| !s.is_empty()).map(str::to_string).collect()).unwrap_or_default()
    };
    let (observed, metric) = if let Some(v) = float("mb_s")? {
        (v, Metric::MbS)
    } else if let Some(v) = float("mib_s")? {
        (v * 1.048576, Metric::MbS)
    } else if let Some(v) = float("iops")? {
        (v, Metric::Iops)
    } else {
        return Err(bad(None, "no value in mb_s, mib_s or iops".to_string()));
    };
    let drives = list("drives");
    for d in &drives {
        check_drive(&at, topo, d)?;
    }
    let drive = get("drive").map(str::to_string);
    if let Some(d) = &drive {
        check_drive(&at, topo, d)?;
    }
    let active = int("active")?.map(|n| n as usize);
    if let Some(n) = active
        && (n == 0 || n > topo.drives.len())
    {
        return Err(bad(col("active"), format!("active={n}: topology {} has {} drives", topo.name, topo.drives.len())));
    }
    let sets = list("set")
        .iter()
        .map(|s| s.parse::<ParamOverride>().map_err(|m| bad(col("set"), format!("set: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    if !sets.is_empty() {
        // Named as the CSV's set cell, not as a command-line override.
        let origins: Vec<String> = list("set").iter().map(|s| format!("set {s}")).collect();
        topo.with_overrides_from(&sets, &origins)
            .map_err(|e| bad(col("set"), e.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")))?;
    }
    let spec = WorkloadSpec {
        rw: get("rw").map(str::to_string),
        bs: get("bs").map(str::to_string),
        iodepth: int("iodepth")?,
        numjobs: int("numjobs")?,
        rwmixread: int("rwmixread")?,
        region: get("region").map(str::to_string),
        active,
        drives: if drives.is_empty() { None } else { Some(drives) },
        ..Default::default()
    };
    spec.resolve().map_err(|errs| {
        let first = errs.first().and_then(|e| col(e.field));
        bad(first, errs.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; "))
    })?;
    let runtime_s = match get("runtime") {
        None => None,
        Some(r) => Some(
            iopath_model::units::parse_duration(r).map_err(|e| bad(col("runtime"), format!("runtime: {e}")))?.nanos()
                as f64
                / 1e9,
        ),
    };
    let mut workload = describe(&spec);
    if !sets.is_empty() {
        workload += &format!(" set={}", list("set").join(";"));
    }
    Ok(Point {
        label: get("label").map(|l| format!("{at} {l}")).unwrap_or(at.clone()),
        workload,
        spec,
        sets,
        observed,
        metric,
        drive,
        weight: float("weight")?.unwrap_or(1.0),
        runtime_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::Catalog;

    const TOPO: &str = r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "ssd0"
part = "micron-5300pro-3840"
parent = "hba"
dev = "/dev/sdx"
[[drive]]
id = "ssd1"
part = "micron-5300pro-3840"
parent = "hba"
[[drive]]
id = "ssd2"
part = "micron-5300pro-3840"
parent = "hba"
"#;

    fn topo() -> Topology {
        Topology::parse("t.toml", TOPO, &Catalog::builtin()).unwrap()
    }

    #[test]
    fn csv_points_with_units_sets_and_weights() {
        let text = "# a comment\nrw,bs,iodepth,active,set,mib_s,weight\nread,128k,1,2,hba.lanes=1,100,2\n\
                    randread,4k,32,,,\"50\",\n";
        let p = parse("p.csv", text, &topo(), &LoadOptions::default()).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].label, "p.csv:4");
        assert!((p[1].observed - 50.0 * 1.048576).abs() < 1e-9, "a quoted cell");
        assert_eq!(p[1].weight, 1.0);
        let text = "rw,bs,iodepth,active,set,mib_s,weight\nread,128k,1,2,hba.lanes=1;hba.mps=256,100,2\n";
        let p = parse("p.csv", text, &topo(), &LoadOptions::default()).unwrap();
        assert_eq!(p.len(), 1);
        assert!((p[0].observed - 104.8576).abs() < 1e-9);
        assert_eq!(p[0].sets.len(), 2);
        assert_eq!(p[0].weight, 2.0);
        assert_eq!(p[0].spec.active, Some(2));
    }

    #[test]
    fn csv_errors_name_the_line() {
        for (text, want) in [
            ("rw,mb_s\nread\n", "1 cells, the header has 2"),
            ("rw,active,mb_s\nread,9,5\n", "active=9"),
            ("rw,mb_s\nread,-3\n", "positive"),
            ("rw,mb_s\nreed,3\n", "rw"),
            ("rw,set,mb_s\nread,nope.x=1,3\n", "set"),
        ] {
            let e = parse("p.csv", text, &topo(), &LoadOptions::default()).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("p.csv:2"), "{text:?}: {e}");
        }
        let e = parse("p.csv", "rw,bs\nread,1m\n", &topo(), &LoadOptions::default()).unwrap_err().to_string();
        assert!(e.contains("p.csv:1") && e.contains("mb_s, mib_s or iops"), "{e}");
        // A bad set value is the CSV cell's, not a --set option's.
        let e = parse("p.csv", "rw,set,mb_s\nread,hba.uplink=bogus,3\n", &topo(), &LoadOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("p.csv:2: column 2 (set): set hba.uplink=bogus: uplink: expected") && !e.contains("--set"),
            "{e}"
        );
    }

    /// fio's JSON of one group (`group_reporting`) of sections d0 and d1 on two loop
    /// devices, 52.26 MB/s for the group (`job_runtime` 4000 over `runtime` 2000: two jobs).
    fn fio_group(disk_util: bool) -> String {
        let util = if disk_util { r#", "disk_util" : [ { "name" : "loop250" }, { "name" : "loop251" } ]"# } else { "" };
        format!(
            r#"{{ "fio version" : "fio-3.33", "global options" : {{ "rw" : "read", "group_reporting" : "1" }},
  "jobs" : [ {{ "jobname" : "d0", "groupid" : 0, "job options" : {{ "filename" : "/dev/loop251" }},
      "read" : {{ "io_bytes" : 104520000, "bw_bytes" : 52260000, "iops" : 49.84, "runtime" : 2000,
                 "total_ios" : 100, "lat_ns" : {{ "mean" : 80000000.0, "max" : 90000000 }} }},
      "write" : {{ "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0, "runtime" : 0, "total_ios" : 0 }},
      "job_runtime" : 4000 }} ]{util} }}"#
        )
    }

    #[test]
    fn a_fio_group_is_plotted_at_its_devices_or_refused() {
        // Two devices in disk_util: the group's 52.26 MB/s is a point at 2 drives, not 1.
        let s = overlay("g", &recognise("g.json", &fio_group(true)).unwrap()).unwrap();
        assert_eq!(s[0].points, vec![(2.0, 52.26)]);
        // Without disk_util the group's files are not listed: its x is unknown, so no point.
        let e = overlay("g", &recognise("g.json", &fio_group(false)).unwrap()).unwrap_err().to_string();
        assert!(e.contains("job \"d0\"") && e.contains("group_reporting") && e.contains("unknown"), "{e}");
        // The report made of it says the numbers are the group's.
        let r = fio::to_report(&fio::parse_fio_json("g.json", &fio_group(true)).unwrap(), &Default::default(), "t");
        assert!(r.warnings.iter().any(|w| w.contains("group") && w.contains("over 2 devices")), "{:?}", r.warnings);
    }

    #[test]
    fn a_quoted_label_keeps_its_comma() {
        let text = "rw,bs,active,mb_s,label\nread,128k,2,500,\"Smith, 2023\"\n";
        let p = parse("p.csv", text, &topo(), &LoadOptions::default()).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].label, "p.csv:2 Smith, 2023");
        assert_eq!(p[0].observed, 500.0);
        // The same in an overlay: one series named by the label.
        let m = recognise("o.csv", "x,mb_s,label\n1,100,\"Smith, 2023\"\n2,190,\"Smith, 2023\"\n").unwrap();
        let s = overlay("o", &m).unwrap();
        assert_eq!(s, [Series { label: "Smith, 2023".into(), points: vec![(1.0, 100.0), (2.0, 190.0)] }]);
    }

    #[test]
    fn csv_errors_name_file_line_and_column() {
        let e = parse("p.csv", "rw,bs,iodepth,mb_s\nread,1m,x,5\n", &topo(), &LoadOptions::default()).unwrap_err();
        assert_eq!(
            e,
            CalibrateError::Csv {
                file: "p.csv".into(),
                line: 2,
                column: Some((3, "iodepth".into())),
                message: "iodepth=\"x\": expected a whole number".into()
            }
        );
        assert_eq!(e.to_string(), "p.csv:2: column 3 (iodepth): iodepth=\"x\": expected a whole number");
        let m = recognise("o.csv", "# note\nx,mb_s\n1,fast\n").unwrap();
        let e = overlay("o", &m).unwrap_err().to_string();
        assert_eq!(e, "o.csv:3: column 2 (mb_s): expected a number, found \"fast\"");
    }

    #[test]
    fn overlays_from_every_format() {
        // Without a header: x, MB/s, optional label.
        let s = overlay("n", &recognise("n.csv", "1,100\n2,150,b\n").unwrap()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].label.as_str(), s[0].points.clone()), ("n", vec![(1.0, 100.0)]));
        assert_eq!((s[1].label.as_str(), s[1].points.clone()), ("b", vec![(2.0, 150.0)]));
        // iopath's own sweep.csv: the total rows of points that ran, at their swept value.
        let csv = "param,value,param2,value2,drive,read_mb_s,write_mb_s,mb_s,iops,lat_mean_us,lat_p50_us,\
                   lat_p99_us,bottleneck,bound_mb_s,error,partial\n\
                   active,1,,,ssd0,500,0,500,1,1,1,1,,,,false\n\
                   active,1,,,total,500,0,500,1,1,1,1,ssd0,550,,false\n\
                   active,2,,,total,900,0,900,1,1,1,1,hba,1000,,false\n\
                   active,3,,,total,,,,,,,,,,\"--active 3: too many, really\",false\n";
        let m = recognise("sweep.csv", csv).unwrap();
        assert!(matches!(&m, Measured::Table(t) if t.is_sweep_csv()));
        let s = overlay("sweep", &m).unwrap();
        assert_eq!(s, [Series { label: "sweep".into(), points: vec![(1.0, 500.0), (2.0, 900.0)] }]);
        // ...which holds no workload, so it cannot be fitted: said so, not ignored.
        let e = points("sweep.csv", &m, &topo(), &LoadOptions::default()).unwrap_err().to_string();
        assert!(e.contains("sweep.csv") && e.contains("sweep.json"), "{e}");
        // A sweep (JSON): one point per report, at its value.
        let sweep = serde_json::json!({ "points": [
            { "param": "active", "value": 1, "report": { "total": { "mb_s": 10.0 }, "drives": [{}] } },
            { "param": "active", "value": 2, "report": null, "error": "x" } ] });
        let s = overlay("s", &recognise("s.json", &sweep.to_string()).unwrap()).unwrap();
        assert_eq!(s[0].points, [(1.0, 10.0)]);
        assert!(recognise("x.json", "{\"foo\": 1}").is_err());
    }

    #[test]
    fn measured_targets_map_to_drives() {
        let r = serde_json::json!({
            "kind": "measured", "topology": "x",
            "workload": { "rw": "read", "bs": 1048576, "iodepth": 8, "numjobs": 1, "rwmixread": 50,
                          "region": 1.0, "seed": 1, "runtime_s": 5.0,
                          "targets": [ {"id": "/dev/loop7", "path": "/dev/loop7"},
                                       {"id": "/dev/sdx", "path": "/dev/sdx"} ] },
            "total": { "read_mb_s": 10.0, "write_mb_s": 0.0, "mb_s": 10.0, "iops": 10.0,
                       "lat_us": {"mean": 1.0, "p50": 1.0, "p99": 1.0} },
            "drives": [], "links": [], "bottleneck": {"id": "", "util": 0.0},
            "cost": {"events": 0, "ios": 0, "wall_s": 0.0}
        });
        let mut o = LoadOptions::default();
        o.map.insert("/dev/loop7".into(), "ssd2".into());
        let p = parse("r.json", &r.to_string(), &topo(), &o).unwrap();
        // --map first, then a drive's dev.
        assert_eq!(p[0].spec.drives.as_deref(), Some(&["ssd2".to_string(), "ssd0".to_string()][..]));
        assert_eq!(p[0].spec.bs.as_deref(), Some("1m"));
        assert_eq!(p[0].runtime_s, Some(5.0));
        assert!(parse_map(&["a".into()]).is_err());
        assert!(parse("x.json", "{\"foo\": 1}", &topo(), &o).is_err());
    }
}
