//! Calibration: fit part figures to measurements, and compare predictions with them.
//!
//! - [`measurements`]: measured reports and ramps from `iopath measure`, fio JSON output and
//!   CSV tables of published points, each read into [`Point`]s (workload, observed value,
//!   metric, optionally one drive);
//! - [`host_cost`]: the host's CPU time per I/O from measured runs' CPU time (CPU seconds
//!   over I/Os), fitted directly, not by simulation;
//! - [`fit`]: Levenberg-Marquardt least squares (the `levenberg-marquardt` crate on nalgebra)
//!   over chosen free figures, each point predicted by simulating the workload it was
//!   measured with; residuals in log space; bounds kept by optimising a transformed
//!   parameter; standard errors and correlations from the Jacobian; a part file the catalog
//!   can load (`iopath --parts FILE`).
//!
//! Invariants: the objective is deterministic (fixed seed, capped simulated time), so a fit
//! of the same inputs gives the same figures whatever the thread count; bad input is a
//! [`CalibrateError`] naming the file, line and column or the figure, never a panic.

pub mod fit;
pub mod host_cost;
pub mod measurements;
pub mod zones;

pub use fit::{
    ErrorStats, FitOptions, FitProgress, FitResult, FittedParam, Free, FreeSpec, PointResult, fit, part_file,
    predict_reports, resolve_free,
};
pub use host_cost::{CpuCost, cpu_param, cpu_per_io, direct_result, is_cpu_cost};
pub use measurements::{
    LoadOptions, Measured, Metric, Point, Series, Table, load, overlay, parse, parse_map, points, read, recognise,
};

/// Why measurements cannot be read or fitted. Messages say what is wrong in the terms of
/// the files and figures; a caller adds the option that gave them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    /// A measurement file cannot be read.
    #[error("{file}: cannot read: {cause}")]
    Read { file: String, cause: String },
    /// A measurement file is not in a format iopath reads, or holds nothing usable.
    #[error("{file}: {message}")]
    Format { file: String, message: String },
    /// A cell (or row) of a CSV table is wrong: the file, line and, when known, the column
    /// (1-based, with its name).
    #[error("{file}:{line}{}: {message}", column.as_ref().map(|(n, name)| format!(": column {n} ({name})")).unwrap_or_default())]
    Csv { file: String, line: u64, column: Option<(usize, String)>, message: String },
    /// A job-to-drive mapping entry is not `JOB=DRIVE`.
    #[error("{entry:?}: expected JOB=DRIVE, e.g. job0=D")]
    Map { entry: String },
    /// A free figure cannot be fitted: `figure` as given (`NODE.PARAM`), and why.
    #[error("{figure}: {message}")]
    Free { figure: String, message: String },
    /// A measured target or fio job that maps to no drive of the topology: `key` is what a
    /// job-to-drive mapping (`KEY=DRIVE`) would name.
    #[error("{file}: cannot tell which drive {what} ran on; map {key}=DRIVE to one of the drives ({drives})")]
    Unmapped { file: String, what: String, key: String, drives: String },
    /// A fio group (`group_reporting`) whose drives fio's JSON does not list: its rate is the
    /// sum over the group's drives, so it cannot be credited to the one file it names; a
    /// job-to-drive mapping `JOB=D1+D2` names them.
    #[error(
        "{file}: fio job {job:?} reports a group (group_reporting) of {} jobs whose files fio's JSON does not list (it names only {named:?}): its rate is the sum over the group's drives, not one drive's; map {job}=D1+D2 to name them (drives of {drives})",
        jobs.map_or("several".to_string(), |n| n.to_string())
    )]
    UnlistedGroup {
        file: String,
        job: String,
        /// Jobs in the group, when fio's JSON tells.
        jobs: Option<u32>,
        named: String,
        /// The topology's name and its drives: `NAME: D1, D2`.
        drives: String,
    },
    /// Nothing to fit: no free figure was given.
    #[error("nothing to fit: no free figure NODE.PARAM was given")]
    NothingToFit,
    /// A measured point cannot be used: `point` is its label (or its file), `message` what
    /// is wrong with its content.
    #[error("{point}: {message}")]
    Point { point: String, message: String },
    /// A drive a measurement names is not in the topology.
    #[error("{file}: drive {drive:?} is not in topology {topology} (its drives: {drives})")]
    NoSuchDrive { file: String, drive: String, topology: String, drives: String },
    /// The measurements hold no point to fit.
    #[error("no measured points to fit")]
    NoPoints,
    /// A simulation failed or the fit could not proceed (exit code 1).
    #[error("{0}")]
    Run(String),
}
