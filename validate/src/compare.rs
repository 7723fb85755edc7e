//! Predictions against measurements, point by point: each point's error, the mean absolute
//! percentage error (MAPE), the RMS of log errors, and the worst point. `iopath compare`
//! prints and plots this; the statistics live here so any front end gets the same numbers.
//!
//! Error of a point: `predicted / measured - 1`, in percent (positive: the model predicts
//! more than was measured). The worst point is the one with the largest absolute error (the
//! last of equals).

use crate::calibrate::{ErrorStats, Metric, Point};
use serde::Serialize;

/// One point: what was measured and what the model predicts for the same workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Where the point came from (`file:line label`).
    pub label: String,
    /// The workload, short (`read bs=128k iodepth=1 active=3`).
    pub workload: String,
    /// What the values measure.
    pub metric: Metric,
    /// The drive whose rate this is, when not the total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<String>,
    /// The measured value.
    pub measured: f64,
    /// The predicted value.
    pub predicted: f64,
    /// `(predicted / measured - 1) x 100`.
    pub error_pct: f64,
}

impl Row {
    /// The row of a measured point and its prediction.
    pub fn new(p: &Point, predicted: f64) -> Row {
        Row {
            label: p.label.clone(),
            workload: p.workload.clone(),
            metric: p.metric,
            drive: p.drive.clone(),
            measured: p.observed,
            predicted,
            error_pct: (predicted / p.observed - 1.0) * 100.0,
        }
    }
}

/// Every point of a comparison with its summary statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The topology's name.
    pub topology: String,
    /// The points, in the order they were read.
    pub points: Vec<Row>,
    /// Mean absolute percentage error [%].
    pub mape_pct: f64,
    /// Root mean square of ln(predicted / measured).
    pub rms_log: f64,
    /// The point with the largest absolute error (`None` without points).
    pub worst: Option<Row>,
}

impl Comparison {
    /// Summarises the rows.
    pub fn new(topology: &str, points: Vec<Row>) -> Comparison {
        let stats = ErrorStats::of(
            &points.iter().map(|r| r.predicted).collect::<Vec<_>>(),
            &points.iter().map(|r| r.measured).collect::<Vec<_>>(),
        );
        let worst = points.iter().max_by(|x, y| x.error_pct.abs().total_cmp(&y.error_pct.abs())).cloned();
        Comparison { topology: topology.to_string(), points, mape_pct: stats.mape_pct, rms_log: stats.rms_log, worst }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, measured: f64, predicted: f64) -> Row {
        Row {
            label: label.into(),
            workload: "read".into(),
            metric: Metric::MbS,
            drive: None,
            measured,
            predicted,
            error_pct: (predicted / measured - 1.0) * 100.0,
        }
    }

    #[test]
    fn mape_rms_and_worst_by_hand() {
        // Errors +10%, -20%, +5%: MAPE = 35/3 = 11.667%; the worst is the -20% point.
        let c = Comparison::new("t", vec![row("a", 100.0, 110.0), row("b", 200.0, 160.0), row("c", 400.0, 420.0)]);
        assert!((c.mape_pct - 35.0 / 3.0).abs() < 1e-9, "{}", c.mape_pct);
        let rms = ((1.1f64.ln().powi(2) + 0.8f64.ln().powi(2) + 1.05f64.ln().powi(2)) / 3.0).sqrt();
        assert!((c.rms_log - rms).abs() < 1e-12, "{} vs {rms}", c.rms_log);
        assert_eq!(c.worst.as_ref().map(|w| w.label.as_str()), Some("b"));
        assert!((c.worst.unwrap().error_pct + 20.0).abs() < 1e-9);
    }

    #[test]
    fn the_last_of_equal_errors_is_the_worst_and_no_points_have_none() {
        let c = Comparison::new("t", vec![row("a", 100.0, 90.0), row("b", 100.0, 110.0), row("c", 100.0, 101.0)]);
        assert_eq!(c.worst.map(|w| w.label), Some("b".to_string()));
        let c = Comparison::new("t", Vec::new());
        assert!(c.worst.is_none());
        assert_eq!(c.mape_pct, 0.0);
    }

    #[test]
    fn a_row_takes_the_points_fields() {
        let p = Point {
            label: "p.csv:2".into(),
            spec: Default::default(),
            workload: "read bs=1m iodepth=8".into(),
            sets: Vec::new(),
            observed: 250.0,
            metric: Metric::Iops,
            drive: Some("D".into()),
            weight: 1.0,
            runtime_s: None,
        };
        let r = Row::new(&p, 300.0);
        assert_eq!((r.measured, r.predicted, r.metric, r.drive.as_deref()), (250.0, 300.0, Metric::Iops, Some("D")));
        assert!((r.error_pct - 20.0).abs() < 1e-9);
    }
}
