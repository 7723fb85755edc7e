//! Calibration: fit part figures to measurements, and compare predictions with them.
//!
//! - [`measurements`]: measured reports and ramps from `iopath measure`, fio JSON output and
//!   CSV tables of published points, each read into [`Point`]s (workload, observed value,
//!   metric, optionally one drive);
//! - [`fit`]: Levenberg-Marquardt least squares (the `levenberg-marquardt` crate on nalgebra)
//!   over chosen free figures, each point predicted by simulating the workload it was
//!   measured with; residuals in log space; bounds kept by optimising a transformed
//!   parameter; standard errors and correlations from the Jacobian; a part file the catalog
//!   can load (`iopath --parts FILE`).
//!
//! Invariants: the objective is deterministic (fixed seed, capped simulated time), so a fit
//! of the same inputs gives the same figures whatever the thread count; bad input is an
//! [`CalibrateError::Input`], never a panic.

pub mod fit;
pub mod measurements;

pub use fit::{
    ErrorStats, FitOptions, FitProgress, FitResult, FittedParam, Free, FreeSpec, PointResult, fit, part_file,
    predict_reports, resolve_free,
};
pub use measurements::{LoadOptions, Metric, Point, load, parse, parse_map};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    /// Bad input: a file, a `--free`, a `--map` (exit code 2 in the CLI).
    #[error("{0}")]
    Input(String),
    /// A simulation failed or the fit could not proceed (exit code 1).
    #[error("{0}")]
    Run(String),
}
