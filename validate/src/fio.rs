//! fio interop: read fio's JSON output (`--output-format=json`, fio 2.x to 3.x) into
//! per-job results and a measured [`Report`], and write fio job files that run the same
//! workload as `iopath measure`, so users can cross-check one tool with the other.
//!
//! Ingest guarantees: duplicate keys (fio repeats keys in "job options") never fail the
//! parse (the last value wins); several concatenated documents (`--status-interval`) are
//! accepted and the last one is used; text before the first `{` (fio's warnings) is
//! skipped; the nanosecond fields (`clat_ns`, `lat_ns`, fio >= 2.99) and the older
//! microsecond ones (`clat`, `lat`) are both read. Clones of one job (`numjobs`) share a
//! jobname and are summed; their latency mean is weighted by I/Os and their percentiles
//! are the largest of the clones' (an upper bound).

pub mod jobfile;

use iopath_model::report::{
    Bottleneck, Cost, DriveResult, Latency, Measured, MeasuredTarget, Percentile, Report, ReportKind, Total,
};
use iopath_model::workload::{Rw, Workload};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("{file}: not fio JSON output: {message}; run fio with --output-format=json")]
    NotJson { file: String, message: String },
    #[error("{file}: fio JSON has no \"jobs\" array; was it written with --output-format=json?")]
    NoJobs { file: String },
}

/// Results of one direction of one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioDir {
    pub io_bytes: u64,
    /// [bytes/s]
    pub bw_bytes: f64,
    pub iops: f64,
    pub total_ios: u64,
    /// [ms]
    pub runtime_ms: u64,
    /// Latency [us] (lat if fio reported it, else clat).
    pub lat_us: Latency,
}

/// One job (clones with the same name summed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioJob {
    pub jobname: String,
    /// `filename` from the job's options, else from the global options.
    pub filename: Option<String>,
    pub read: FioDir,
    pub write: FioDir,
    /// How many fio job entries were summed into this one.
    pub clones: u32,
    /// fio's group id (`groupid`).
    pub groupid: u64,
    /// The entry is a whole group (`group_reporting`): every job of the group, clones and
    /// sections alike, summed by fio itself; `filename` is then only one of its files (fio
    /// prints the last job's options).
    pub group_reporting: bool,
    /// The job's options, global ones first (the last value of a repeated key wins).
    pub options: BTreeMap<String, String>,
    /// fio's `job_runtime` [ms]: the sum of every job's run time, which fio adds up over
    /// the jobs of a group (its `sum_thread_stats`); over the group's `runtime` it counts them.
    pub job_runtime_ms: u64,
}

impl FioJob {
    /// How many jobs fio summed into this entry: 1 per clone, or for a group
    /// (`group_reporting`) its `job_runtime` over its runtime, rounded; `None` when fio's
    /// JSON lacks the figures.
    pub fn jobs_in_entry(&self) -> Option<u32> {
        if !self.group_reporting {
            return Some(self.clones);
        }
        let rt = self.read.runtime_ms.max(self.write.runtime_ms);
        (rt > 0 && self.job_runtime_ms > 0).then(|| (self.job_runtime_ms as f64 / rt as f64).round() as u32)
    }
}

/// A parsed fio JSON document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FioOutput {
    pub version: String,
    pub global_options: BTreeMap<String, String>,
    pub jobs: Vec<FioJob>,
    /// The devices fio's `disk_util` names (`loop0`, `sdb`): every device the run touched.
    pub disk_util: Vec<String>,
}

fn num(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        Value::String(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn options(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Latency [us] from a fio stats object in `per_us` units per us (ns objects: 1000): the mean,
/// max, fio's percentile list (`percentile`, keyed by the percentage) and, from
/// `--output-format=json+`, the histogram `bins` (keyed by the bucket's value in the object's
/// unit; kept for ns objects, whose keys are fio's bucket values in ns).
fn lat_from(o: &Value, per_us: f64) -> Option<Latency> {
    let o = o.as_object()?;
    let mut percentiles: Vec<Percentile> = o
        .get("percentile")
        .and_then(Value::as_object)
        .map(|p| p.iter().filter_map(|(k, v)| Some(Percentile { pct: k.parse().ok()?, us: num(v) / per_us })).collect())
        .unwrap_or_default();
    percentiles.sort_by(|a, b| a.pct.total_cmp(&b.pct));
    let pct = |want: f64| percentiles.iter().find(|p| (p.pct - want).abs() < 1e-6).map(|p| p.us);
    let (p50, p99) = (pct(50.0).unwrap_or(0.0), pct(99.0).unwrap_or(0.0));
    let bins = match o.get("bins").and_then(Value::as_object) {
        Some(b) if per_us == 1e3 => b
            .iter()
            .filter_map(|(k, v)| Some((k.parse::<u64>().ok()?, num(v) as u64)))
            .filter(|&(_, c)| c > 0)
            .collect(),
        _ => BTreeMap::new(),
    };
    Some(Latency {
        mean: o.get("mean").map(num)? / per_us,
        p50,
        p99,
        max: o.get("max").map(num).unwrap_or(0.0) / per_us,
        percentiles,
        bins,
    })
}

fn dir_from(d: &Value) -> FioDir {
    let get = |k: &str| d.get(k).map(num).unwrap_or(0.0);
    let mut io_bytes = get("io_bytes") as u64;
    if io_bytes == 0 {
        io_bytes = (get("io_kbytes") * 1024.0) as u64;
    }
    let runtime_ms = get("runtime") as u64;
    let mut bw_bytes = get("bw_bytes");
    if bw_bytes == 0.0 {
        bw_bytes = get("bw") * 1024.0;
    }
    // Prefer total latency, then completion latency; ns (fio >= 2.99) before us (2.x).
    let lat = |name: &str| d.get(format!("{name}_ns").as_str()).and_then(|o| lat_from(o, 1e3));
    let lat_old = |name: &str| d.get(name).and_then(|o| lat_from(o, 1.0));
    let mut l =
        lat("lat").or_else(|| lat_old("lat")).or_else(|| lat("clat")).or_else(|| lat_old("clat")).unwrap_or_default();
    // fio computes percentiles (and json+ bins) for clat by default, for lat only on request.
    if l.percentiles.is_empty()
        && let Some(c) = lat("clat").or_else(|| lat_old("clat"))
    {
        (l.p50, l.p99, l.percentiles, l.bins) = (c.p50, c.p99, c.percentiles, c.bins);
    }
    FioDir { io_bytes, bw_bytes, iops: get("iops"), total_ios: get("total_ios") as u64, runtime_ms, lat_us: l }
}

fn merge_dir(a: &mut FioDir, b: &FioDir) {
    a.lat_us.merge(&b.lat_us, a.total_ios, b.total_ios);
    a.io_bytes += b.io_bytes;
    a.bw_bytes += b.bw_bytes;
    a.iops += b.iops;
    a.total_ios += b.total_ios;
    a.runtime_ms = a.runtime_ms.max(b.runtime_ms);
}

impl FioOutput {
    /// Whether every job of a group entry ran on one file: every job on the global
    /// `filename`, or the group holds just one section's `numjobs` clones.
    pub fn group_on_one_file(&self, job: &FioJob) -> bool {
        let numjobs = job.options.get("numjobs").and_then(|v| v.trim().parse::<u32>().ok()).unwrap_or(1);
        self.global_options.contains_key("filename") || job.jobs_in_entry() == Some(numjobs)
    }

    /// How many drives a job entry's numbers cover: 1 for a job of its own; for a group
    /// (`group_reporting`) the devices fio's `disk_util` names when the output holds that one
    /// group, else 1 when every job of the group ran on one file; `None` when fio's JSON
    /// does not tell.
    pub fn drives_of(&self, job: &FioJob) -> Option<usize> {
        if !job.group_reporting {
            return Some(1);
        }
        let groups: std::collections::BTreeSet<u64> = self.jobs.iter().map(|j| j.groupid).collect();
        if groups.len() == 1 && !self.disk_util.is_empty() {
            return Some(self.disk_util.len());
        }
        self.group_on_one_file(job).then_some(1)
    }
}

/// Parses fio's JSON output; `file` names it in errors.
pub fn parse_fio_json(file: &str, text: &str) -> Result<FioOutput, FioError> {
    let start =
        text.find('{').ok_or_else(|| FioError::NotJson { file: file.into(), message: "no '{' found".into() })?;
    let mut last: Option<Value> = None;
    for doc in serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>() {
        match doc {
            Ok(v) => last = Some(v),
            Err(e) if last.is_some() => {
                let _ = e; // trailing text after the last document
                break;
            }
            Err(e) => {
                return Err(FioError::NotJson { file: file.into(), message: e.to_string() });
            }
        }
    }
    let root = last.ok_or_else(|| FioError::NoJobs { file: file.into() })?;
    let jobs = root.get("jobs").and_then(Value::as_array).ok_or_else(|| FioError::NoJobs { file: file.into() })?;
    let global_options = options(root.get("global options").unwrap_or(&Value::Null));
    let mut out: Vec<FioJob> = Vec::new();
    for j in jobs {
        let name = j.get("jobname").and_then(Value::as_str).unwrap_or("job").to_string();
        let opts = options(j.get("job options").unwrap_or(&Value::Null));
        let filename = opts.get("filename").or_else(|| global_options.get("filename")).cloned();
        let mut all = global_options.clone();
        all.extend(opts);
        let flag = |k: &str| all.get(k).is_some_and(|v| v != "0");
        let group_reporting = flag("group_reporting");
        let groupid = j.get("groupid").and_then(Value::as_u64).unwrap_or(0);
        let job_runtime_ms = j.get("job_runtime").map(num).unwrap_or(0.0) as u64;
        let mixed = j.get("mixed").map(dir_from);
        let read = j.get("read").map(dir_from).unwrap_or_default();
        let write = j.get("write").map(dir_from).unwrap_or_default();
        let (read, write) = match mixed {
            Some(m) if read.io_bytes == 0 && write.io_bytes == 0 => (m, FioDir::default()),
            _ => (read, write),
        };
        match out.iter_mut().find(|x| x.jobname == name && x.groupid == groupid) {
            Some(x) => {
                merge_dir(&mut x.read, &read);
                merge_dir(&mut x.write, &write);
                x.clones += 1;
                x.job_runtime_ms += job_runtime_ms;
            }
            None => out.push(FioJob {
                jobname: name,
                filename,
                read,
                write,
                clones: 1,
                groupid,
                group_reporting,
                options: all,
                job_runtime_ms,
            }),
        }
    }
    Ok(FioOutput {
        version: root.get("fio version").and_then(Value::as_str).unwrap_or("").to_string(),
        global_options,
        jobs: out,
        disk_util: root
            .get("disk_util")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| d.get("name")?.as_str().map(str::to_string))
            .collect(),
    })
}

/// Converts fio results to a measured report. Jobs map to drive ids through `ids`
/// (jobname -> drive id); unmapped jobs use their filename, else their jobname.
pub fn to_report(out: &FioOutput, ids: &BTreeMap<String, String>, topology: &str) -> Report {
    let mut drives = Vec::new();
    let mut total = Total::default();
    let mut secs: f64 = 0.0;
    let mut ios = 0;
    let mut warnings = Vec::new();
    for j in &out.jobs {
        let id = ids.get(&j.jobname).cloned().or_else(|| j.filename.clone()).unwrap_or_else(|| j.jobname.clone());
        let n = j.read.total_ios + j.write.total_ios;
        let mut lat = j.read.lat_us.clone();
        lat.merge(&j.write.lat_us, j.read.total_ios, j.write.total_ios);
        let d = DriveResult {
            id,
            read_mb_s: j.read.bw_bytes / 1e6,
            write_mb_s: j.write.bw_bytes / 1e6,
            iops: j.read.iops + j.write.iops,
            lat_us: lat.clone(),
            read_bytes: j.read.io_bytes,
            write_bytes: j.write.io_bytes,
            ios: n,
            ..Default::default()
        };
        if j.group_reporting {
            let jobs = j.jobs_in_entry().map_or("several".to_string(), |n| n.to_string());
            let over = match out.drives_of(j) {
                Some(1) => "all on one file".to_string(),
                Some(n) => format!("over {n} devices"),
                None => "over files fio's JSON does not list".to_string(),
            };
            warnings.push(format!(
                "fio job {:?} is a group (group_reporting) of {jobs} jobs, {over}: its numbers, under {:?}, are the group's sum, not one drive's",
                j.jobname, d.id
            ));
        }
        secs = secs.max(j.read.runtime_ms.max(j.write.runtime_ms) as f64 / 1000.0);
        total.read_mb_s += d.read_mb_s;
        total.write_mb_s += d.write_mb_s;
        total.iops += d.iops;
        total.lat_us.merge(&lat, ios, n);
        ios += n;
        drives.push(d);
    }
    total.mb_s = total.read_mb_s + total.write_mb_s;
    let targets = out
        .jobs
        .iter()
        .zip(&drives)
        .map(|(j, d)| MeasuredTarget { id: d.id.clone(), path: j.filename.clone().unwrap_or_default() })
        .collect();
    let g = &out.global_options;
    let seconds = |k: &str| g.get(k).and_then(|v| v.trim_end_matches('s').parse::<f64>().ok());
    Report {
        schema_version: iopath_model::report::SCHEMA_VERSION,
        kind: ReportKind::Measured,
        topology: topology.to_string(),
        workload: fio_workload(g),
        measured: Some(Measured {
            engine: if out.version.is_empty() { "fio".into() } else { out.version.clone() },
            runtime_s: seconds("runtime").unwrap_or(secs),
            ramp_s: seconds("ramp_time").unwrap_or(0.0),
            targets,
            options: g.clone(),
        }),
        total,
        drives,
        links: Vec::new(),
        bottleneck: Bottleneck::default(),
        cost: Cost { events: 0, ios, wall_s: secs, sim_s: secs, cpu_s: None },
        partial: false,
        covered_s: None,
        warnings,
        spread: None,
        pool: None,
        cpu: Vec::new(),
    }
}

/// The workload of fio's global options, as far as iopath's vocabulary names it (`rw`,
/// `bs`, `iodepth`, `numjobs`, `rwmixread`); the defaults for what is absent or not
/// understood. Every option is also kept, as written, in the report's `measured.options`.
fn fio_workload(g: &BTreeMap<String, String>) -> Workload {
    let num = |k: &str| g.get(k).and_then(|v| v.parse::<u32>().ok());
    let spec = iopath_model::WorkloadSpec {
        rw: g.get("rw").or_else(|| g.get("readwrite")).cloned(),
        bs: g.get("bs").map(|b| b.split([',', '-', ':']).next().unwrap_or(b).to_string()),
        iodepth: num("iodepth"),
        numjobs: num("numjobs"),
        rwmixread: num("rwmixread"),
        ..Default::default()
    };
    spec.resolve().unwrap_or_default()
}

/// A target of a job file: section name and file or device.
#[derive(Debug, Clone)]
pub struct JobTarget {
    pub id: String,
    pub path: String,
}

fn section_name(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect();
    let s = s.trim_matches('_').to_string();
    if s.is_empty() || s == "global" { format!("t_{s}") } else { s }
}

/// How the run a job file repeats was made: what the workload alone does not say.
#[derive(Debug, Clone, Copy)]
pub struct JobFileOptions<'a> {
    /// The engine the run used, as its report names it: "io_uring" or "threads".
    pub engine: &'a str,
    /// fio's job name given on the command line: sections are then `NAME.TARGET`.
    pub name: Option<&'a str>,
}

/// A fio job file that runs `w` on `targets` as `iopath measure` did: one section per
/// target, all sections at once (no stonewall), time-based with the same ramp, the same
/// engine. iopath's `threads` engine runs `iodepth` threads per job, each with one
/// `pread`/`pwrite` outstanding: fio's `psync` at depth 1 with `numjobs x iodepth` clones
/// (fio runs a synchronous engine at depth 1 whatever `iodepth` says). No
/// `group_reporting`: iopath reports each target on its own, and so does fio without it.
pub fn job_file(w: &Workload, targets: &[JobTarget], runtime: Duration, ramp: Duration, o: &JobFileOptions) -> String {
    let mut s = String::new();
    s += "; Written by `iopath measure --write-fio-job`: the same workload for fio, to cross-check.\n";
    s += "; Run: fio THIS_FILE --output-format=json > fio.json\n";
    s += "; Each section is one target; numjobs clones of a section share its name.\n";
    let threads = o.engine == "threads";
    let (engine, iodepth, numjobs) =
        if threads { ("psync", 1, w.numjobs * w.iodepth) } else { ("io_uring", w.iodepth, w.numjobs) };
    if threads && w.iodepth > 1 {
        s += &format!(
            "; iopath's threads engine ran iodepth={} as {} threads of one synchronous I/O each per job.\n",
            w.iodepth, w.iodepth
        );
    }
    s += &format!("[global]\ndirect=1\nioengine={engine}\n");
    let mixed = w.copies.is_empty();
    if mixed {
        s += &format!("rw={}\n", w.rw.as_str());
        if matches!(w.rw, Rw::Rw | Rw::RandRw) {
            s += &format!("rwmixread={}\n", w.rwmixread);
        }
    }
    s += &format!("bs={}\n", w.bs.get());
    s += &format!("iodepth={iodepth}\nnumjobs={numjobs}\n");
    s += &format!("time_based=1\nruntime={}\nramp_time={}\n", secs_str(runtime), secs_str(ramp));
    s += "offset=0\n";
    match w.size {
        // fio's size bounds each file; iopath bounds it by the share too, whichever is less.
        Some(b) if w.region >= 1.0 => s += &format!("size={}\n", b.get()),
        Some(b) => {
            s += &format!("size={}%\n", trim_float(w.region * 100.0));
            s += &format!(
                "; iopath also bounded the region at {} bytes, which fio's size cannot say with a share\n",
                b.get()
            );
        }
        None if w.region < 1.0 => s += &format!("size={}%\n", trim_float(w.region * 100.0)),
        None => {}
    }
    s += &format!("randrepeat=1\nrandseed={}\n", w.seed);
    if !mixed {
        s += "; fio cannot copy between files: each copy runs as a sequential read of the\n";
        s += "; source and a sequential write of the destination, at the same time.\n";
    }
    for t in targets {
        let name = match o.name {
            Some(n) => format!("{}.{}", section_name(n), section_name(&t.id)),
            None => section_name(&t.id),
        };
        s += &format!("\n[{name}]\n");
        s += &format!("filename={}\n", t.path.replace(':', "\\:"));
        if !mixed {
            let is_dst = w.copies.iter().any(|c| c.to == t.id);
            s += if is_dst { "rw=write\n" } else { "rw=read\n" };
        }
    }
    s
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn secs_str(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) { format!("{}", ms / 1000) } else { format!("{ms}ms") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::WorkloadSpec;

    const FIO3: &str = r#"fio: some warning before the JSON
{
  "fio version" : "fio-3.33",
  "global options" : { "direct" : "1", "bs" : "1M", "filename" : "/dev/loop9" },
  "jobs" : [
    { "jobname" : "a", "groupid" : 0, "error" : 0,
      "job options" : { "filename" : "/dev/loop0", "rw" : "read", "rw" : "randread" },
      "read" : { "io_bytes" : 104857600, "io_kbytes" : 102400, "bw_bytes" : 20971520, "bw" : 20480,
                 "iops" : 20.0, "runtime" : 5000, "total_ios" : 100,
                 "clat_ns" : { "min" : 1000, "max" : 90000000, "mean" : 40000000.0,
                               "percentile" : { "50.000000" : 39000000, "99.000000" : 80000000 } },
                 "lat_ns" : { "min" : 1000, "max" : 91000000, "mean" : 41000000.0 } },
      "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0, "runtime" : 0, "total_ios" : 0,
                  "lat_ns" : { "min" : 0, "max" : 0, "mean" : 0.0 } } },
    { "jobname" : "a",
      "job options" : { "filename" : "/dev/loop0" },
      "read" : { "io_bytes" : 104857600, "bw_bytes" : 20971520, "iops" : 20.0, "runtime" : 5000,
                 "total_ios" : 100, "lat_ns" : { "mean" : 43000000.0, "max" : 95000000 } },
      "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0, "runtime" : 0, "total_ios" : 0 } }
  ]
}"#;

    const FIO2: &str = r#"{ "fio version" : "fio-2.2.10", "jobs" : [ { "jobname" : "sdb",
      "read" : { "io_bytes" : 1024, "bw" : 1000, "iops" : 250.5, "runtime" : 4000, "total_ios" : 1000,
                 "clat" : { "min" : 10, "max" : 900, "mean" : 120.5,
                            "percentile" : { "50.000000" : 110, "99.000000" : 700 } },
                 "lat" : { "min" : 11, "max" : 901, "mean" : 121.5 } },
      "write" : { "io_bytes" : 0, "bw" : 0, "iops" : 0, "runtime" : 0 } } ] }"#;

    #[test]
    fn reads_fio3_with_duplicate_keys_and_clones() {
        let o = parse_fio_json("t.json", FIO3).unwrap();
        assert_eq!(o.version, "fio-3.33");
        assert_eq!(o.jobs.len(), 1);
        let j = &o.jobs[0];
        assert_eq!(j.clones, 2);
        assert_eq!(j.filename.as_deref(), Some("/dev/loop0"));
        assert_eq!(j.read.io_bytes, 2 * 104857600);
        assert!((j.read.bw_bytes - 2.0 * 20971520.0).abs() < 1.0);
        assert!((j.read.lat_us.mean - 42000.0).abs() < 1e-6);
        assert_eq!(j.read.lat_us.p99, 80000.0);
        let r = to_report(&o, &BTreeMap::new(), "t");
        assert_eq!(r.kind, ReportKind::Measured);
        assert_eq!(r.drives[0].id, "/dev/loop0");
        assert!((r.total.read_mb_s - 41.94304).abs() < 1e-6);
        assert_eq!(r.cost.sim_s, 5.0);
    }

    #[test]
    fn reads_fio2_microsecond_fields_and_maps_ids() {
        let o = parse_fio_json("t.json", FIO2).unwrap();
        let j = &o.jobs[0];
        assert_eq!(j.read.lat_us.mean, 121.5);
        assert_eq!(j.read.lat_us.p50, 110.0);
        assert_eq!(j.read.bw_bytes, 1024000.0);
        let ids = BTreeMap::from([("sdb".to_string(), "D".to_string())]);
        let r = to_report(&o, &ids, "t");
        assert_eq!(r.drives[0].id, "D");
    }

    /// `fio --output-format=json+` of two jobs on two drives: job a did 90 reads in fio's
    /// bucket of 100 us (bucket value 99,840 ns: msb 16, 10 error bits, offset 97 & 63 = 33,
    /// so 2^16 + 33 * 2^10 + 2^9), job b 10 reads in the bucket of 1 ms (1,003,520 ns).
    const FIO_PLUS: &str = r#"{ "fio version" : "fio-3.33", "jobs" : [
      { "jobname" : "a", "job options" : { "filename" : "/dev/loop0" },
        "read" : { "io_bytes" : 368640, "bw_bytes" : 368640, "iops" : 90.0, "runtime" : 1000, "total_ios" : 90,
                   "clat_ns" : { "min" : 99000, "max" : 100500, "mean" : 100000.0,
                                 "percentile" : { "50.000000" : 99840, "99.000000" : 99840, "99.900000" : 99840 },
                                 "bins" : { "99840" : 90 } },
                   "lat_ns" : { "min" : 99500, "max" : 101000, "mean" : 100500.0 } },
        "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0, "runtime" : 0, "total_ios" : 0 } },
      { "jobname" : "b", "job options" : { "filename" : "/dev/loop1" },
        "read" : { "io_bytes" : 40960, "bw_bytes" : 40960, "iops" : 10.0, "runtime" : 1000, "total_ios" : 10,
                   "clat_ns" : { "min" : 999000, "max" : 1001000, "mean" : 1000000.0,
                                 "percentile" : { "50.000000" : 1003520, "99.000000" : 1003520, "99.900000" : 1003520 },
                                 "bins" : { "1003520" : 10 } },
                   "lat_ns" : { "min" : 999500, "max" : 1001500, "mean" : 1000500.0 } },
        "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0, "runtime" : 0, "total_ios" : 0 } } ] }"#;

    #[test]
    fn json_plus_bins_are_kept_and_a_total_reads_its_percentiles_from_them() {
        let o = parse_fio_json("t.json", FIO_PLUS).unwrap();
        let r = to_report(&o, &BTreeMap::new(), "t");
        let a = &r.drives[0].lat_us;
        // Percentiles come from clat (lat has none by default); the mean from lat.
        assert_eq!((a.mean, a.p50, a.at(99.9)), (100.5, 99.84, Some(99.84)));
        assert_eq!(a.bins, BTreeMap::from([(99_840, 90)]));
        // Together: 90 of 100 I/Os are in the 100 us bucket, so p50 and p90 are 99.84 us and
        // p99 is 1,003.52 us; the larger of the two jobs' p50 (the rule without bins) would
        // say 1,003.52 us for p50.
        let t = &r.total.lat_us;
        assert_eq!((t.p50, t.p99), (99.84, 1003.52));
        assert_eq!(t.bins.values().sum::<u64>(), 100);
        assert_eq!(t.at(99.9), Some(1003.52));
        assert!((t.mean - (90.0 * 100.5 + 10.0 * 1000.5) / 100.0).abs() < 1e-9, "{}", t.mean);
        // fio's 2.x microsecond objects carry no ns bins.
        assert!(parse_fio_json("t", FIO2).unwrap().jobs[0].read.lat_us.bins.is_empty());
    }

    #[test]
    fn concatenated_documents_use_the_last() {
        let fio3 = &FIO3[FIO3.find('{').unwrap()..];
        let two = format!("{FIO2}\n{fio3}");
        let o = parse_fio_json("t", &two).unwrap();
        assert_eq!(o.version, "fio-3.33");
    }

    #[test]
    fn rejects_non_fio_text() {
        assert!(parse_fio_json("x", "hello").is_err());
        assert!(parse_fio_json("x", "{\"a\":1}").is_err());
        assert!(parse_fio_json("x", "{\"jobs\": [").is_err());
    }

    #[test]
    fn job_file_has_the_workload() {
        let w = WorkloadSpec {
            rw: Some("randrw".into()),
            bs: Some("4k".into()),
            iodepth: Some(32),
            rwmixread: Some(70),
            region: Some("10%".into()),
            seed: Some(9),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        let t = vec![
            JobTarget { id: "D".into(), path: "/dev/sdb".into() },
            JobTarget { id: "/var/tmp/a:b.img".into(), path: "/var/tmp/a:b.img".into() },
        ];
        let o = JobFileOptions { engine: "io_uring", name: None };
        let f = job_file(&w, &t, Duration::from_secs(5), Duration::from_millis(1500), &o);
        for want in [
            "direct=1",
            "ioengine=io_uring",
            "rw=randrw",
            "rwmixread=70",
            "bs=4096",
            "iodepth=32",
            "time_based=1",
            "runtime=5\n",
            "ramp_time=1500ms",
            "size=10%",
            "randseed=9",
            "[D]\nfilename=/dev/sdb",
            "filename=/var/tmp/a\\:b.img",
        ] {
            assert!(f.contains(want), "missing {want:?} in\n{f}");
        }
        // The threads engine is fio's psync: a synchronous engine fio runs at depth 1, so
        // iopath's 32 threads of one I/O each are 32 clones (1 job x iodepth 32).
        let o = JobFileOptions { engine: "threads", name: Some("scan") };
        let f = job_file(&w, &t, Duration::from_secs(5), Duration::ZERO, &o);
        for want in ["ioengine=psync\n", "iodepth=1\n", "numjobs=32\n", "[scan.D]\n"] {
            assert!(f.contains(want), "missing {want:?} in\n{f}");
        }
        assert!(!f.contains("io_uring"), "{f}");
    }
}
