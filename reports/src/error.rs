//! Errors of the reports crate: each says what failed, where (a path, a chart), and how to fix it.

use std::path::PathBuf;

/// Everything that can go wrong while writing tables, exports, plots and pages.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be written (or renamed into place).
    #[error(
        "cannot write {}: {source}\n  help: check that the directory exists, is writable and has free space",
        path.display()
    )]
    Write {
        /// The file that was being written.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },

    /// An output path names something iopath will not write or replace: a device node,
    /// FIFO, socket, symbolic link, a directory holding files iopath did not write, ...
    #[error("refusing to write {}: {why}\n  help: {help}", path.display())]
    Refused {
        /// The path as given.
        path: PathBuf,
        /// What is there, and why iopath will not replace it.
        why: String,
        /// What to do instead.
        help: String,
    },

    /// An output path's extension names no format the command writes.
    #[error(
        "cannot write {}: `.{extension}` is not a format this command writes\n  help: end the name in one of .{}, or name a directory (ending in /) for all of them",
        path.display(),
        known.join(", .")
    )]
    Format {
        /// The path as given.
        path: PathBuf,
        /// Its extension, without the dot.
        extension: String,
        /// The extensions the command writes, without the dot.
        known: Vec<&'static str>,
    },

    /// A file of a format was asked for that this result cannot give (a chart of a sweep
    /// where no point ran).
    #[error(
        "nothing to write to {}: this result has no {format} output (a chart needs at least one point that ran)\n  help: write the .json or .csv instead, which record every point's error",
        path.display()
    )]
    NothingToWrite {
        /// The file asked for.
        path: PathBuf,
        /// Its format's extension.
        format: &'static str,
    },

    /// The output directory could not be created.
    #[error(
        "cannot create the output directory {}: {source}\n  help: name an output directory you can write to",
        path.display()
    )]
    CreateDir {
        /// The directory that was asked for.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },

    /// A result could not be serialized (a number that JSON cannot hold, such as NaN, is the usual cause).
    #[error(
        "cannot serialize {what} as JSON: {source}\n  help: this is a bug in whatever produced the result (a NaN or infinite number?); please report it"
    )]
    Json {
        /// What was being serialized ("the sweep", "the report").
        what: &'static str,
        /// serde_json's reason.
        #[source]
        source: serde_json::Error,
    },

    /// plotters failed while drawing a chart.
    #[error(
        "cannot draw the {chart} chart{}: {message}\n  help: check the plot size (at least 200x150) and that the target is writable",
        path.as_ref().map(|p| format!(" into {}", p.display())).unwrap_or_default()
    )]
    Plot {
        /// Which chart: "throughput" or "latency".
        chart: &'static str,
        /// The file being drawn into; `None` for an SVG string.
        path: Option<PathBuf>,
        /// plotters' error.
        message: String,
    },

    /// A sweep has no point that succeeded, so there is nothing to draw.
    #[error(
        "nothing to plot for the {chart} chart of {topology:?}: no point of the sweep has a result\n  help: look at the failed points' errors (the sweep table lists them) and fix those first"
    )]
    NothingToPlot {
        /// Which chart: "throughput" or "latency".
        chart: &'static str,
        /// The sweep's topology name.
        topology: String,
    },

    /// The requested plot size is too small to draw into.
    #[error("plot size {width}x{height} is too small\n  help: use at least 200x150 pixels (the default is 1200x800)")]
    PlotSize {
        /// Requested width in pixels.
        width: u32,
        /// Requested height in pixels.
        height: u32,
    },

    /// The bundled font could not be loaded.
    #[error(
        "the bundled font {asset} could not be parsed\n  help: the file is damaged; restore it from the repository and rebuild"
    )]
    Font {
        /// The font file's path in the repository.
        asset: &'static str,
    },
}

impl ReportError {
    /// Whether this is a refused output path (a usage error: exit 2 in the CLI) rather than
    /// a failure while writing.
    pub fn is_refusal(&self) -> bool {
        matches!(self, ReportError::Refused { .. } | ReportError::Format { .. })
    }
}
