//! Output paths of every subcommand (`--out`, `--fio-job`): checked before any work starts
//! (a refused path is a usage error, exit 2, before a simulation or measurement runs) and
//! written through the one writer in `iopath_reports::export::output`, which refuses device
//! nodes, FIFOs, sockets and symbolic links, uses random `O_EXCL` temporaries, and swaps a
//! directory of outputs in whole.
use super::{CliError, CliResult, interrupt_flag};
use iopath_reports::ReportError;
use iopath_reports::export::{Bare, OutFormat, OutTarget, output};
use std::path::{Path, PathBuf};

/// A writer's error as the CLI reports it: a refused path is a usage error (exit 2),
/// anything else a run-time failure (exit 1).
pub fn error(flag: &str, e: ReportError) -> CliError {
    CliError::from_lib(Some(flag), e)
}

/// What an `--out` path asks for (a file of the format its extension names, or a directory
/// of every file), checked before the work that produces it: an extension the command does
/// not write, or a path the writer would refuse, is a usage error before any run.
pub fn target(flag: &str, path: &Path, formats: &[OutFormat], bare: Bare, names: &[&str]) -> CliResult<OutTarget> {
    let t = OutTarget::parse(path, formats, bare).map_err(|e| error(flag, e))?;
    t.check(names).map_err(|e| error(flag, e))?;
    Ok(t)
}

/// Writes `files` (named as in a directory) to a target: the one of its format, or all.
pub fn write_target(
    flag: &str,
    target: &OutTarget,
    files: &[(String, Vec<u8>)],
    names: &[&str],
) -> CliResult<Vec<PathBuf>> {
    interrupt_flag();
    target.write(files, names).map_err(|e| error(flag, e))
}

/// Checks an output file's path before the work that produces it.
pub fn check_file(flag: &str, path: &Path) -> CliResult<()> {
    output::check_output_file(path).map_err(|e| error(flag, e))
}

/// Checks a directory of outputs (`names`) before the work that produces it.
pub fn check_dir(flag: &str, dir: &Path, names: &[&str]) -> CliResult<()> {
    output::check_output_dir(dir, names).map_err(|e| error(flag, e))
}

/// Writes one output file atomically.
pub fn write_file(flag: &str, path: &Path, bytes: &[u8]) -> CliResult<()> {
    // With the Ctrl-C handler installed, an interrupt only sets a flag: the write finishes
    // (and cleans up after itself) instead of the process dying half way.
    interrupt_flag();
    output::write_atomic(path, bytes).map_err(|e| error(flag, e))
}
