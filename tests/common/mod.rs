//! Helpers shared by the CLI's integration tests (`mod common;` in a test file). Each test
//! binary uses only some of them.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The iopath binary built for these tests, to run from the repository root (so
/// `configs/...` paths work).
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iopath"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// [`command`] as an `assert_cmd` command (`.assert().success()`).
pub fn assert_command() -> assert_cmd::Command {
    assert_cmd::Command::from_std(command())
}

/// Runs the iopath binary with `args` ([`command`]) and returns what it printed.
pub fn iopath(args: &[&str]) -> Output {
    command().args(args).output().expect("run iopath")
}

/// The JSON document a successful run printed; fails the test, showing both streams, if the
/// run did not exit 0.
pub fn json(o: &Output) -> serde_json::Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}
