//! A surface scan: sequential read speed at evenly spaced positions across one drive's
//! LBA range (`iopath measure --surface`), the curve DiskSpeed draws for a drive. On an HDD
//! it shows the zones (constant linear density: the rate falls with the radius from the
//! outer edge at LBA 0 inwards); `fit` reads it back to fit the drive's outer and inner
//! rates (`iopath_validate::calibrate::zones`).

use serde::{Deserialize, Serialize};

/// The `kind` of a surface file, which tells it from reports and sweeps.
pub const SURFACE_KIND: &str = "surface";

/// One drive's read speed across its LBA range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    pub schema_version: u32,
    /// Always [`SURFACE_KIND`].
    pub kind: String,
    /// The drive's id (a topology's drive id, or the path of an ad hoc target).
    pub id: String,
    /// The file or block device read.
    pub path: String,
    /// The target's size [bytes]: the LBA range the positions are shares of.
    pub size_bytes: u64,
    /// Block size of the reads [bytes].
    pub bs: u64,
    /// I/Os kept outstanding.
    pub iodepth: u32,
    /// The engine that ran the reads (`io_uring`, `threads`, `mock`).
    pub engine: String,
    /// Measured time per point [s], after a ramp of `ramp_s`.
    pub runtime_s: f64,
    pub ramp_s: f64,
    /// In the order read: from the start of the drive to its end.
    pub points: Vec<SurfacePoint>,
    /// Interrupted: the points cover only part of the range.
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One position of a surface scan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurfacePoint {
    /// First byte of the window read [bytes].
    pub offset_bytes: u64,
    /// Bytes of the window the reads stayed in (they wrap around inside it).
    pub window_bytes: u64,
    /// `offset_bytes` as a share of the drive [%].
    pub position_pct: f64,
    /// Read speed in the measured time [MB/s, 10^6 B/s].
    pub mb_s: f64,
    pub iops: f64,
    /// Bytes read in the measured time.
    pub read_bytes: u64,
    /// Latency p50 and p99 [us].
    pub lat_p50_us: f64,
    pub lat_p99_us: f64,
    /// Why the point has no result (an I/O error there); the scan went on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SurfacePoint {
    /// The middle of what the point read, as a share of the drive in [0, 1]: the position
    /// whose media rate it measured (the reads start at `offset_bytes` and move inwards,
    /// wrapping within the window).
    pub fn mid_fraction(&self, size_bytes: u64) -> f64 {
        if size_bytes == 0 {
            return 0.0;
        }
        let span = self.read_bytes.min(self.window_bytes) as f64;
        ((self.offset_bytes as f64 + span / 2.0) / size_bytes as f64).clamp(0.0, 1.0)
    }
}

/// An HDD's media rate at the LBA share `x` in [0, 1] with the rates `outer` at LBA 0 and
/// `inner` at the end, as the simulator's geometry has it (`iopath_sim::hdd`): with
/// constant linear density the rate is proportional to the radius, and LBAs fill the
/// platter's annulus from the outside in at constant area per byte, so the radius share at
/// `x` is `sqrt(1 - x (1 - rho^2))` with `rho = inner / outer`, and the rate is
/// `sqrt(outer^2 (1 - x) + inner^2 x)`. (The simulator steps it per zone, each zone at the
/// rate of its middle; this is the curve the steps sit on.)
pub fn zone_rate(outer: f64, inner: f64, x: f64) -> f64 {
    let x = x.clamp(0.0, 1.0);
    (outer * outer * (1.0 - x) + inner * inner * x).max(0.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zone_curve_runs_from_outer_to_inner() {
        // The ends are the two rates; halfway in LBA, the radius share is sqrt((1 + rho^2) / 2):
        // with 250 and 125 MB/s, sqrt((62500 + 15625) / 2) = sqrt(39062.5) = 197.64 MB/s, above
        // the mean of the rates (187.5): the outer half of the LBAs holds less than half the radius.
        assert_eq!(zone_rate(250.0, 125.0, 0.0), 250.0);
        assert_eq!(zone_rate(250.0, 125.0, 1.0), 125.0);
        assert!((zone_rate(250.0, 125.0, 0.5) - 197.642).abs() < 1e-3);
    }

    #[test]
    fn the_middle_of_a_point_is_inside_its_window() {
        let p = SurfacePoint {
            offset_bytes: 500,
            window_bytes: 100,
            position_pct: 50.0,
            mb_s: 1.0,
            iops: 1.0,
            read_bytes: 60,
            lat_p50_us: 0.0,
            lat_p99_us: 0.0,
            error: None,
        };
        // 500 + 60/2 = 530 of 1000.
        assert!((p.mid_fraction(1000) - 0.53).abs() < 1e-12);
        // Reads that wrapped cover the whole window: 500 + 100/2 = 550.
        let q = SurfacePoint { read_bytes: 1000, ..p.clone() };
        assert!((q.mid_fraction(1000) - 0.55).abs() < 1e-12);
        assert_eq!(p.mid_fraction(0), 0.0);
    }
}
