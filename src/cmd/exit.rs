//! The one table from errors to exit codes, for every command:
//!
//! | code | when |
//! |------|------|
//! | 0    | success; also a closed stdout (`iopath ... \| head`) |
//! | 1    | a run-time failure (I/O error, a simulation or fit that could not proceed) |
//! | 2    | a usage or configuration error, found before anything runs |
//! | 130  | interrupted by Ctrl-C; what was computed is still printed and written, marked partial |
//!
//! Libraries never choose an exit code: each error type they return is classified here,
//! once, by variant ([`Classify`]), and [`CliError::from_lib`] adds the command-line option
//! that carried the value (libraries do not know their callers' flag names).
use super::CliError;
use iopath_model::catalog::CatalogError;
use iopath_model::topology::ConfigError;
use iopath_reports::ReportError;
use iopath_sim::{SimError, SweepError};
use iopath_validate::MeasureError;
use iopath_validate::calibrate::CalibrateError;
use iopath_validate::discover::DiscoverError;
use iopath_validate::target::TargetError;

/// Success, and a closed stdout.
pub const OK: u8 = 0;
/// A run-time failure.
pub const RUNTIME: u8 = 1;
/// A usage or configuration error.
pub const USAGE: u8 = 2;
/// Interrupted by Ctrl-C (128 + SIGINT, as shells report it); the partial result is kept.
pub const INTERRUPTED: u8 = 130;

/// What kind of failure an error is, which decides its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Bad input: the command line, a topology, a part file, a measurement file.
    Usage,
    /// Something failed while running.
    Runtime,
    /// Ctrl-C stopped it before anything could be kept.
    Interrupted,
}

impl Class {
    /// The exit code of this class.
    pub fn code(self) -> u8 {
        match self {
            Class::Usage => USAGE,
            Class::Runtime => RUNTIME,
            Class::Interrupted => INTERRUPTED,
        }
    }
}

/// A library error's class: the rows of the table.
pub trait Classify {
    fn class(&self) -> Class;
}

impl Classify for ConfigError {
    fn class(&self) -> Class {
        Class::Usage
    }
}

impl Classify for CatalogError {
    fn class(&self) -> Class {
        Class::Usage
    }
}

/// Every refusal of the simulator is about the workload or topology it was given.
impl Classify for SimError {
    fn class(&self) -> Class {
        Class::Usage
    }
}

impl Classify for SweepError {
    fn class(&self) -> Class {
        Class::Usage
    }
}

impl Classify for CalibrateError {
    fn class(&self) -> Class {
        match self {
            CalibrateError::Read { .. }
            | CalibrateError::Format { .. }
            | CalibrateError::Csv { .. }
            | CalibrateError::Map { .. }
            | CalibrateError::Free { .. }
            | CalibrateError::Unmapped { .. }
            | CalibrateError::UnlistedGroup { .. }
            | CalibrateError::NothingToFit
            | CalibrateError::Point { .. }
            | CalibrateError::NoSuchDrive { .. }
            | CalibrateError::NoPoints => Class::Usage,
            CalibrateError::Run(_) => Class::Runtime,
        }
    }
}

/// A refused output path is a usage error (before the run); a failed write is not.
impl Classify for ReportError {
    fn class(&self) -> Class {
        if self.is_refusal() { Class::Usage } else { Class::Runtime }
    }
}

impl Classify for DiscoverError {
    fn class(&self) -> Class {
        Class::Usage
    }
}

impl Classify for TargetError {
    fn class(&self) -> Class {
        match self {
            TargetError::Interrupted { .. } => Class::Interrupted,
            TargetError::Open { .. } | TargetError::Io { .. } => Class::Runtime,
            TargetError::MemoryFs { .. } | TargetError::NotATarget { .. } | TargetError::Invalid { .. } => Class::Usage,
        }
    }
}

/// Refusals by the write gate and bad options are usage errors; a target follows its own
/// row; the engine fails only while running.
impl Classify for MeasureError {
    fn class(&self) -> Class {
        match self {
            MeasureError::Target(t) => t.class(),
            MeasureError::Engine(_) => Class::Runtime,
            e => {
                debug_assert!(e.is_usage());
                Class::Usage
            }
        }
    }
}

impl Classify for std::io::Error {
    fn class(&self) -> Class {
        Class::Runtime
    }
}

impl CliError {
    /// A library error with its exit code from the table, prefixed with the command-line
    /// option that carried the value at fault (`--out DIR: ...`), when there is one.
    pub fn from_lib<E>(option: Option<&str>, e: E) -> CliError
    where
        E: Classify + std::fmt::Display,
    {
        let code = e.class().code();
        // The message as the library wrote it (its Display already names its causes; a
        // chain would repeat them).
        let err = match option {
            Some(o) => anyhow::anyhow!("{o}: {e}"),
            None => anyhow::anyhow!("{e}"),
        };
        CliError { code, err }
    }
}

impl CliError {
    /// A library error reworded by the command line (with the option spelled where it
    /// belongs), still with its exit code from the table.
    pub fn reworded<E: Classify>(e: &E, message: String) -> CliError {
        CliError { code: e.class().code(), err: anyhow::anyhow!(message) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_class_its_code() {
        assert_eq!([Class::Usage.code(), Class::Runtime.code(), Class::Interrupted.code()], [2, 1, 130]);
        let e = CalibrateError::Point { point: "p.json".into(), message: "no workload".into() };
        assert_eq!(CliError::from_lib(None, e).code, USAGE);
        assert_eq!(CliError::from_lib(None, CalibrateError::NoPoints).code, USAGE);
        assert_eq!(CliError::from_lib(None, CalibrateError::Run("x".into())).code, RUNTIME);
        let t = TargetError::Interrupted { path: "f".into(), done: 1, size: 2 };
        assert_eq!(CliError::from_lib(None, MeasureError::Target(t)).code, INTERRUPTED);
        let io = std::io::Error::other("disk on fire");
        assert_eq!(CliError::from_lib(None, io).code, RUNTIME);
    }

    #[test]
    fn the_option_comes_first_in_the_message() {
        let e = CliError::from_lib(Some("--map job0"), CalibrateError::Map { entry: "job0".into() });
        assert_eq!(e.to_string(), "error: --map job0: \"job0\": expected JOB=DRIVE, e.g. job0=D");
    }
}
