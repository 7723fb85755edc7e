//! `iopath`: predict and check the throughput of storage I/O paths.
//!
//! A thin main: parse the command line (clap), call the library crates, print. Exit codes
//! come from one table, `cmd::exit`: 0 success, 1 a run-time failure, 2 a usage or
//! configuration error, 130 interrupted by Ctrl-C (the partial result is still printed and
//! written). A closed stdout (`iopath ... | head`) exits 0.

mod cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // `COMPLETE=bash iopath ...`: the shell asking for completions (`cmd/complete.rs`).
    cmd::complete::complete_if_asked();
    let cli = match cmd::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { cmd::exit::USAGE } else { cmd::exit::OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cmd::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if e.is_broken_pipe() {
                return ExitCode::from(cmd::exit::OK);
            }
            eprintln!("{e}");
            ExitCode::from(e.code)
        }
    }
}
