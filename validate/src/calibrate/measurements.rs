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
                _ => return Err(CalibrateError::Input(format!("--map {item:?}: expected JOB=DRIVE, e.g. job0=D"))),
            }
        }
    }
    Ok(m)
}

/// Reads one measurement file into points, checking every drive it names against `topo`.
pub fn load(path: &Path, topo: &Topology, opts: &LoadOptions) -> Result<Vec<Point>, CalibrateError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CalibrateError::Input(format!("{name}: cannot read: {e}")))?;
    let points = parse(&name, &text, topo, opts)?;
    if points.is_empty() {
        return Err(CalibrateError::Input(format!("{name}: no measured points in the file")));
    }
    Ok(points)
}

/// Parses measurement text (`file` names it in messages); the format is recognised by content.
pub fn parse(file: &str, text: &str, topo: &Topology, opts: &LoadOptions) -> Result<Vec<Point>, CalibrateError> {
    let trimmed = text.trim_start();
    if file.to_ascii_lowercase().ends_with(".csv") || !(trimmed.starts_with('{') || text.contains("\"jobs\"")) {
        return parse_csv(file, text, topo);
    }
    let start = text.find('{').unwrap_or(0);
    // fio output may hold several documents and text before the first `{`: read the last one.
    let mut last: Option<Value> = None;
    for doc in serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>() {
        match doc {
            Ok(v) => last = Some(v),
            Err(_) if last.is_some() => break,
            Err(e) => return Err(CalibrateError::Input(format!("{file}: not JSON, nor a CSV: {e}"))),
        }
    }
    let v = last.ok_or_else(|| CalibrateError::Input(format!("{file}: empty")))?;
    if v.get("jobs").is_some() {
        return fio_points(file, text, &v, topo, opts).map(|p| vec![p]);
    }
    if let Some(points) = v.get("points").and_then(Value::as_array) {
        let mut out = Vec::new();
        for (i, p) in points.iter().enumerate() {
            match p.get("report") {
                Some(r) if !r.is_null() => out.push(report_point(&format!("{file}#{i}"), r, topo, opts)?),
                _ => {} // a failed point of the ramp: nothing measured
            }
        }
        return Ok(out);
    }
    if v.get("total").is_some() && v.get("workload").is_some() {
        return Ok(vec![report_point(file, &v, topo, opts)?]);
    }
    Err(CalibrateError::Input(format!(
        "{file}: not a report or sweep from `iopath measure`, nor fio JSON output (--output-format=json), nor a CSV"
    )))
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
        Err(CalibrateError::Input(format!(
            "{file}: drive {d:?} is not in topology {} (its drives: {})",
            topo.name,
            drive_ids(topo).join(", ")
        )))
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
    let bad = |m: &str| CalibrateError::Input(format!("{label}: {m}"));
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
                    || {
                        bad(&format!(
                            "target {id:?} maps to no drive of {} (it has {}); give --map {id}=DRIVE",
                            topo.name,
                            topo.drives.len()
                        ))
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

/// fio's `bs` option: `4k`, `4096`, `4k,8k` (read,write) or `4k-16k` (the first value).
fn fio_bs(s: &str) -> String {
    s.split([',', '-', ':']).next().unwrap_or(s).trim().to_string()
}

fn fio_points(
    file: &str,
    text: &str,
    root: &Value,
    topo: &Topology,
    opts: &LoadOptions,
) -> Result<Point, CalibrateError> {
    let out = fio::parse_fio_json(file, text).map_err(|e| CalibrateError::Input(e.to_string()))?;
    let bad = |m: String| CalibrateError::Input(format!("{file}: {m}"));
    // Options of each job, global ones first (duplicate keys: the last value wins).
    let global = root.get("global options").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut per_job: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for j in root.get("jobs").and_then(Value::as_array).into_iter().flatten() {
        let name = j.get("jobname").and_then(Value::as_str).unwrap_or("job").to_string();
        let mut o: BTreeMap<String, String> = BTreeMap::new();
        for src in [Some(&global), j.get("job options").and_then(Value::as_object)].into_iter().flatten() {
            for (k, v) in src {
                o.insert(k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
            }
        }
        per_job.entry(name).or_insert(o);
    }
    let mut spec: Option<WorkloadSpec> = None;
    let mut drives = Vec::new();
    let mut total = 0.0;
    let mut secs: f64 = 0.0;
    for job in &out.jobs {
        let o = per_job.get(&job.jobname).cloned().unwrap_or_default();
        let int = |k: &str| -> Result<Option<u32>, CalibrateError> {
            match o.get(k) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| bad(format!("job {:?}: {k}={v:?} is not a whole number", job.jobname))),
            }
        };
        let rw = o.get("rw").or_else(|| o.get("readwrite")).cloned().unwrap_or_else(|| "read".to_string());
        let rw = match rw.as_str() {
            "readwrite" => "rw".to_string(),
            x => x.to_string(),
        };
        let s = WorkloadSpec {
            rw: Some(rw),
            bs: Some(o.get("bs").or_else(|| o.get("blocksize")).map(|b| fio_bs(b)).unwrap_or_else(|| "4k".into())),
            iodepth: int("iodepth")?,
            numjobs: Some(job.clones.max(1)),
            rwmixread: int("rwmixread")?,
            ..Default::default()
        };
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
        let fname = job.filename.clone().unwrap_or_default();
        let d = map_target(topo, opts, &[&job.jobname, &fname]).ok_or_else(|| {
            bad(format!(
                "cannot tell which drive fio job {:?} (filename {fname:?}) ran on; give --map {}=DRIVE (drives: {})",
                job.jobname,
                job.jobname,
                drive_ids(topo).join(", ")
            ))
        })?;
        check_drive(file, topo, &d)?;
        drives.push(d);
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

fn split_cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
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

fn parse_csv(file: &str, text: &str, topo: &Topology) -> Result<Vec<Point>, CalibrateError> {
    let mut header: Option<Vec<String>> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", i + 1);
        let bad = |m: String| CalibrateError::Input(format!("{at}: {m}"));
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let cells = split_cells(t);
        let Some(h) = &header else {
            let h: Vec<String> = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
            for c in &h {
                if !CSV_COLUMNS.contains(&c.as_str()) {
                    return Err(bad(format!("unknown column {c:?}; columns are {}", CSV_COLUMNS.join(", "))));
                }
            }
            if !h.iter().any(|c| c == "mb_s" || c == "mib_s" || c == "iops") {
                return Err(bad("the header needs a column mb_s, mib_s or iops".to_string()));
            }
            header = Some(h);
            continue;
        };
        if cells.len() != h.len() {
            return Err(bad(format!("{} cells, the header has {}", cells.len(), h.len())));
        }
        let get = |k: &str| h.iter().position(|c| c == k).map(|ix| cells[ix].as_str()).filter(|v| !v.is_empty());
        let int = |k: &str| -> Result<Option<u32>, CalibrateError> {
            get(k).map(|v| v.parse::<u32>().map_err(|_| bad(format!("{k}={v:?}: expected a whole number")))).transpose()
        };
        let float = |k: &str| -> Result<Option<f64>, CalibrateError> {
            get(k)
                .map(|v| match v.parse::<f64>() {
                    Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
                    _ => Err(bad(format!("{k}={v:?}: expected a positive number"))),
                })
                .transpose()
        };
        let list = |k: &str| -> Vec<String> {
            get(k)
                .map(|v| v.split([';', ' ']).filter(|s| !s.is_empty()).map(str::to_string).collect())
                .unwrap_or_default()
        };
        let (observed, metric) = if let Some(v) = float("mb_s")? {
            (v, Metric::MbS)
        } else if let Some(v) = float("mib_s")? {
            (v * 1.048576, Metric::MbS)
        } else if let Some(v) = float("iops")? {
            (v, Metric::Iops)
        } else {
            return Err(bad("no value in mb_s, mib_s or iops".to_string()));
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
            return Err(bad(format!("active={n}: topology {} has {} drives", topo.name, topo.drives.len())));
        }
        let sets = list("set")
            .iter()
            .map(|s| s.parse::<ParamOverride>().map_err(|m| bad(format!("set: {m}"))))
            .collect::<Result<Vec<_>, _>>()?;
        if !sets.is_empty() {
            // Named as the CSV's set cell, not as a --set option.
            let origins: Vec<String> = list("set").iter().map(|s| format!("set {s}")).collect();
            topo.with_overrides_from(&sets, &origins)
                .map_err(|e| bad(e.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")))?;
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
            bad(errs.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; "))
        })?;
        let runtime_s = match get("runtime") {
            None => None,
            Some(r) => Some(
                iopath_model::units::parse_duration(r).map_err(|e| bad(format!("runtime: {e}")))?.nanos() as f64 / 1e9,
            ),
        };
        let mut workload = describe(&spec);
        if !sets.is_empty() {
            workload += &format!(" set={}", list("set").join(";"));
        }
        out.push(Point {
            label: get("label").map(|l| format!("{at} {l}")).unwrap_or(at.clone()),
            workload,
            spec,
            sets,
            observed,
            metric,
            drive,
            weight: float("weight")?.unwrap_or(1.0),
            runtime_s,
        });
    }
    if header.is_none() {
        return Err(CalibrateError::Input(format!(
            "{file}: not a report or sweep (JSON) and no CSV header; the first line names the columns, e.g. rw,bs,iodepth,active,mb_s"
        )));
    }
    Ok(out)
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
id = "ssd"
count = 3
part = "micron-5300pro-3840"
parent = "hba"
dev = "/dev/sdx"
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
        assert!(e.contains("p.csv:2: set hba.uplink=bogus: uplink: expected") && !e.contains("--set"), "{e}");
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
