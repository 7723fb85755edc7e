//! The result type that the simulator, the hardware mode and the reports all share.
//!
//! Its JSON form is the contract of DESIGN.md §4: rates in MB/s (10^6 bytes per second),
//! latencies in microseconds, utilizations as fractions of capacity. Fields may be added;
//! the named ones never go away or change meaning.

use serde::{Deserialize, Serialize};

/// Version of the JSON documents iopath writes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    Simulated,
    Measured,
}

/// Latency summary [us].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    #[serde(default)]
    pub max: f64,
}

/// Totals over all drives.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    pub kind: ReportKind,
    pub topology: String,
    pub workload: serde_json::Value,
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
}

fn schema_version() -> u32 {
    SCHEMA_VERSION
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
}
