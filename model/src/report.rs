//! The result type that the simulator, the hardware mode and the reports all share.
//!
//! Its JSON form is the contract of DESIGN.md §4: rates in MB/s (10^6 bytes per second),
//! latencies in microseconds, utilizations as fractions of capacity. Fields may be added;
//! the named ones never go away or change meaning.

use crate::workload::{Targets, Workload};
use serde::{Deserialize, Serialize};

/// Version of the JSON documents iopath writes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    Simulated,
    Measured,
}

pub use crate::latency::{Latency, LatencyMean, PERCENTILES, Percentile};

/// Totals over all drives (for a pool workload, the pool's logical totals).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Total {
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub mb_s: f64,
    pub iops: f64,
    pub lat_us: Latency,
}

/// One drive's (or target's) results.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DriveResult {
    pub id: String,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub iops: f64,
    pub lat_us: Latency,
    /// Bytes moved in the measured window.
    #[serde(default)]
    pub read_bytes: u64,
    #[serde(default)]
    pub write_bytes: u64,
    #[serde(default)]
    pub ios: u64,
    /// This drive's own binding resource: the busiest resource its transfers cross (its
    /// media, its link, a shared uplink), from the simulator's allocation; absent for
    /// measured runs, which have no allocation to read it from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Bottleneck>,
}

/// Utilization of one link or shared element, by direction (fractions of its capacity).
/// `util_up` is towards the host (disk reads), `util_down` towards the drives.
/// A half-duplex link reports the same time share in both.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkUtil {
    pub id: String,
    pub util_up: f64,
    pub util_down: f64,
    #[serde(default)]
    pub capacity_mb_s: f64,
    #[serde(default)]
    pub kind: String,
}

/// The most utilized element.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Bottleneck {
    pub id: String,
    pub util: f64,
}

/// What a run cost to compute (simulated) or to measure.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Cost {
    pub events: u64,
    pub ios: u64,
    pub wall_s: f64,
    /// Simulated (or measured) seconds in the measured window.
    #[serde(default)]
    pub sim_s: f64,
    /// CPU time of the process (measured runs) [s].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
}

/// A report of one workload on one topology.
///
/// Reading accepts the shape of measured reports written before the `measured` section
/// existed: their `engine`, `runtime_s`, `ramp_s` and `targets` (a list of `{id, path}`)
/// sat inside `workload`; they are moved into [`Measured`] and the workload's targets
/// become the drives measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ReportIn")]
pub struct Report {
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    pub kind: ReportKind,
    pub topology: String,
    /// The workload that ran. Written with its keys in alphabetical order (the form of
    /// every report so far).
    #[serde(serialize_with = "sorted_keys")]
    pub workload: Workload,
    /// How a measured run ran; absent for simulated runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
    pub total: Total,
    pub drives: Vec<DriveResult>,
    pub links: Vec<LinkUtil>,
    pub bottleneck: Bottleneck,
    pub cost: Cost,
    /// True when the run was interrupted and the numbers cover only part of it.
    #[serde(default)]
    pub partial: bool,
    /// For a partial run, the time it reached [s] (simulated, ramp included); its numbers are
    /// over `cost.sim_s`, the part of the measured window before that time (0 when it stopped
    /// inside the ramp: then nothing was measured and the rates are 0, never a division by an
    /// empty window). Absent for complete runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_s: Option<f64>,
    /// Sentences that say what to do about a doubtful result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Spread over seeds when a stochastic run was replicated: (min, max) of total MB/s and IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// A pool workload's logical results (absent for per-drive workloads); `total` is then
    /// the pool's logical totals and `drives` the members' own traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolResult>,
    /// The host CPU's utilization by kind of work, where the run charged CPU work.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu: Vec<CpuUse>,
}

fn schema_version() -> u32 {
    SCHEMA_VERSION
}

/// How a measured run ran: what the simulator has no counterpart for.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Measured {
    /// What moved the data: `io_uring`, `threads`, `mock`, or the tool (`fio-3.33`).
    pub engine: String,
    /// Measured time asked for [s] (`cost.sim_s` is the time measured).
    pub runtime_s: f64,
    /// Warm-up before the measured time [s].
    pub ramp_s: f64,
    /// The targets, in the order of `drives`.
    pub targets: Vec<MeasuredTarget>,
    /// The tool's own options, as it named them, for runs iopath did not drive (fio's
    /// global options).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub options: std::collections::BTreeMap<String, String>,
}

/// One measured target: the drive id and the file or block device behind it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MeasuredTarget {
    pub id: String,
    pub path: String,
}

fn sorted_keys<S: serde::Serializer>(w: &Workload, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::Error;
    serde_json::to_value(w).map_err(S::Error::custom)?.serialize(s)
}

/// The wire form of a report, read before the workload is typed.
#[derive(Deserialize)]
struct ReportIn {
    #[serde(default = "schema_version")]
    schema_version: u32,
    kind: ReportKind,
    topology: String,
    workload: serde_json::Value,
    #[serde(default)]
    measured: Option<Measured>,
    total: Total,
    drives: Vec<DriveResult>,
    links: Vec<LinkUtil>,
    bottleneck: Bottleneck,
    cost: Cost,
    #[serde(default)]
    partial: bool,
    #[serde(default)]
    covered_s: Option<f64>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    spread: Option<Spread>,
    #[serde(default)]
    pool: Option<PoolResult>,
    #[serde(default)]
    cpu: Vec<CpuUse>,
}

impl TryFrom<ReportIn> for Report {
    type Error = String;

    fn try_from(r: ReportIn) -> Result<Report, String> {
        let (workload, old) = workload_of(r.workload)?;
        Ok(Report {
            schema_version: r.schema_version,
            kind: r.kind,
            topology: r.topology,
            workload,
            measured: r.measured.or(old),
            total: r.total,
            drives: r.drives,
            links: r.links,
            bottleneck: r.bottleneck,
            cost: r.cost,
            partial: r.partial,
            covered_s: r.covered_s,
            warnings: r.warnings,
            spread: r.spread,
            pool: r.pool,
            cpu: r.cpu,
        })
    }
}

/// The typed workload of a report, and the measured section an old measured report kept
/// inside it.
fn workload_of(mut v: serde_json::Value) -> Result<(Workload, Option<Measured>), String> {
    let mut old = None;
    if let Some(obj) = v.as_object_mut()
        && obj.contains_key("engine")
    {
        let f = |x: Option<serde_json::Value>| x.and_then(|x| x.as_f64()).unwrap_or(0.0);
        let engine = obj.remove("engine").and_then(|x| x.as_str().map(str::to_string)).unwrap_or_default();
        let runtime_s = f(obj.remove("runtime_s"));
        let ramp_s = f(obj.remove("ramp_s"));
        let mut targets = Vec::new();
        if let Some(serde_json::Value::Array(ts)) = obj.get("targets") {
            for t in ts {
                let g = |k: &str| t.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
                targets.push(MeasuredTarget { id: g("id"), path: g("path") });
            }
            let ids = targets.iter().map(|t| t.id.clone()).collect();
            obj.insert("targets".into(), serde_json::to_value(Targets::Drives(ids)).map_err(|e| e.to_string())?);
        }
        old = Some(Measured { engine, runtime_s, ramp_s, targets, options: Default::default() });
    }
    let w = serde_json::from_value(v).map_err(|e| format!("workload: {e}"))?;
    Ok((w, old))
}

/// What a pool workload did, as the pool's users see it (logical I/O) and as its members
/// carried it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PoolResult {
    pub id: String,
    /// The layout's name (`raidz2`, `md-raid6`, ...).
    pub layout: String,
    /// Logical rates and latencies of the pool's I/Os (for maintenance, of its stripes).
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub mb_s: f64,
    pub iops: f64,
    pub lat_us: Latency,
    /// Logical bytes and I/Os completed in the measured window.
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub ios: u64,
    /// What the members moved for them in the same window (completed member I/Os).
    pub member_read_bytes: u64,
    pub member_write_bytes: u64,
    /// Member bytes per logical byte: the parity, copy and read-modify-write overhead.
    pub overhead: f64,
    /// Member drives taken as failed (degraded mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// A scrub or rebuild: what it must process and how long it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<MaintenanceResult>,
}

/// A scrub's or rebuild's projection: the rate of a measured window at a few positions
/// across the members' processed range, and the time to process everything.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MaintenanceResult {
    /// `scrub` or `rebuild`.
    pub task: String,
    /// Fraction of the pool's usable space holding data.
    pub fill: f64,
    /// Logical bytes the task covers (data that is read and checked or reconstructed).
    pub logical_bytes: u64,
    /// Member bytes it moves doing so (reads and writes).
    pub member_bytes: u64,
    /// Mean logical rate over the whole task [MB/s] (logical bytes / time).
    pub rate_mb_s: f64,
    /// Projected time of the task [h].
    pub hours: f64,
    /// One per position across the members' processed range, in order.
    pub segments: Vec<MaintenanceSegment>,
    /// What binds it (the segment that takes longest).
    pub bottleneck: Bottleneck,
}

/// One position of a maintenance projection.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MaintenanceSegment {
    /// Start of the segment as a fraction of the members' processed range.
    pub from: f64,
    pub to: f64,
    /// Logical rate measured there [MB/s].
    pub rate_mb_s: f64,
    /// Time this segment takes [h].
    pub hours: f64,
    pub bottleneck: Bottleneck,
}

/// The host CPU's time spent on one kind of work (checksums, parity, ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuUse {
    /// The kernel (`fletcher4`, `raid-pq`, `aes-gcm`, ...) or `protocol` for the network's.
    pub kind: String,
    /// Fraction of all the host's cores it kept busy over the measured window.
    pub util: f64,
    /// Bytes it processed per second [MB/s].
    pub mb_s: f64,
}

/// Spread of totals over replications with different seeds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Spread {
    pub replications: u32,
    pub mb_s_min: f64,
    pub mb_s_max: f64,
    pub iops_min: f64,
    pub iops_max: f64,
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    pub param: String,
    pub value: serde_json::Value,
    /// For a grid, the second parameter and its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value2: Option<serde_json::Value>,
    /// `None` when the point failed; `error` says why.
    pub report: Option<Report>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Closed-form bound on total MB/s at this point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_mb_s: Option<f64>,
}

/// A sweep: `{ "points": [...] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    pub topology: String,
    pub points: Vec<SweepPoint>,
    #[serde(default)]
    pub partial: bool,
}

impl Report {
    /// Finds a drive's result by id.
    pub fn drive(&self, id: &str) -> Option<&DriveResult> {
        self.drives.iter().find(|d| d.id == id)
    }

    /// The link `keep` accepts with the highest utilization in either direction, and that
    /// utilization (the last of equals, as `Iterator::max_by`; `None` when it accepts none).
    pub fn busiest_link(&self, keep: impl Fn(&LinkUtil) -> bool) -> Option<(&LinkUtil, f64)> {
        self.links
            .iter()
            .filter(|l| keep(l))
            .map(|l| (l, l.util_up.max(l.util_down)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn simulated() -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            kind: ReportKind::Simulated,
            topology: "t".into(),
            workload: Workload { targets: Targets::Active(2), ..Default::default() },
            measured: None,
            total: Total::default(),
            drives: vec![DriveResult { id: "d0".into(), ..Default::default() }],
            links: Vec::new(),
            bottleneck: Bottleneck { id: "none".into(), util: 0.0 },
            cost: Cost::default(),
            partial: false,
            covered_s: None,
            warnings: vec!["w".into()],
            spread: None,
            pool: None,
            cpu: Vec::new(),
        }
    }

    #[test]
    fn the_workload_is_written_with_sorted_keys_and_no_measured_section() {
        let text = serde_json::to_string(&simulated()).unwrap();
        let w = &text[text.find("\"workload\":").unwrap()..];
        assert!(w.starts_with(r#""workload":{"bs":131072,"copies":[],"iodepth":1,"#), "{w}");
        assert!(!text.contains("measured\":"), "{text}");
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back, simulated());
    }

    #[test]
    fn a_measured_section_round_trips() {
        let mut r = simulated();
        r.kind = ReportKind::Measured;
        r.measured = Some(Measured {
            engine: "io_uring".into(),
            runtime_s: 5.0,
            ramp_s: 1.0,
            targets: vec![MeasuredTarget { id: "d0".into(), path: "/dev/sdb".into() }],
            options: Default::default(),
        });
        let back: Report = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn an_old_measured_report_loads_with_its_fields_moved_to_measured() {
        let r: Report = serde_json::from_str(include_str!("../tests/data/measured-report-old.json")).unwrap();
        let m = r.measured.as_ref().expect("measured section");
        assert_eq!(m.engine, "io_uring");
        assert_eq!((m.runtime_s, m.ramp_s), (5.0, 1.0));
        let paths: Vec<(&str, &str)> = m.targets.iter().map(|t| (t.id.as_str(), t.path.as_str())).collect();
        assert_eq!(paths, [("ssd0", "/dev/sdb"), ("ssd1", "/dev/sdc")]);
        assert_eq!(r.workload.targets, Targets::Drives(vec!["ssd0".into(), "ssd1".into()]));
        assert_eq!(r.workload.bs.get(), 1 << 20);
        assert_eq!(r.workload.iodepth, 8);
        // Written again, it takes the new shape.
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""measured":{"engine":"io_uring""#), "{text}");
        assert!(!text.contains("runtime_s\":5.0,\"rw"), "{text}");
    }

    #[test]
    fn a_workload_that_is_not_one_is_refused_with_the_field_named() {
        let mut v = serde_json::to_value(simulated()).unwrap();
        v["workload"] = serde_json::json!({"rw": "read"});
        let e = serde_json::from_value::<Report>(v).unwrap_err().to_string();
        assert!(e.starts_with("workload: missing field"), "{e}");
    }
}
