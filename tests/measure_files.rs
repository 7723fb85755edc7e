//! File targets of `iopath measure` (no root needed): where a topology's relative `dev`
//! points, and layouts that are interrupted or killed.
//!
//! Each needs a disk-backed scratch directory (O_DIRECT on tmpfs is refused); without one
//! the test says so and skips, and fails when `CI` is set.

use iopath_test_support as rig;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn iopath() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iopath"))
}

fn scratch(tag: &str) -> Option<tempfile::TempDir> {
    let base = rig::scratch_dir();
    if iopath_validate::target::memory_fs(&base).is_some() {
        let why = format!("no disk-backed scratch directory ({} is a memory filesystem)", base.display());
        rig::skip(&why);
        return None;
    }
    Some(tempfile::Builder::new().prefix(&format!("iopath-{tag}-")).tempdir_in(base).unwrap())
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn a_relative_dev_is_the_file_next_to_the_topology_whatever_the_cwd() {
    let (Some(topo_dir), Some(cwd)) = (scratch("topo"), scratch("cwd")) else {
        return;
    };
    let topo = topo_dir.path().join("one.toml");
    std::fs::write(
        &topo,
        "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n\
         [[drive]]\nid = \"D\"\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\ndev = \"disk.img\"\n",
    )
    .unwrap();
    let o = iopath()
        .current_dir(cwd.path())
        .arg("measure")
        .arg(&topo)
        .args(["--rw", "write", "--allow-write", "--bs", "64k", "--runtime", "300ms", "--ramp", "0s"])
        .args(["--size", "2m", "--quiet", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let next_to = topo_dir.path().join("disk.img");
    assert_eq!(std::fs::metadata(&next_to).map(|m| m.len()).ok(), Some(2 << 20), "the file next to the topology");
    assert!(names(cwd.path()).is_empty(), "nothing may be created in the cwd: {:?}", names(cwd.path()));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["total"]["write_mb_s"].as_f64().unwrap() > 0.0, "{r}");
}

/// Starts a layout of a big file target and waits until its temporary file is growing.
#[allow(clippy::zombie_processes)] // the caller waits for the child it gets back
fn start_layout(dir: &Path, name: &str) -> (Child, PathBuf) {
    let target = dir.join(name);
    let mut child = iopath()
        .arg("measure")
        .arg("--target")
        .arg(&target)
        .args(["--rw", "read", "--bs", "1m", "--runtime", "1s", "--ramp", "0s", "--size", "8g", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let growing = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains(".iopath-layout-") && e.metadata().unwrap().len() > 0);
        // Old versions write the target itself: that counts as started too.
        if growing || std::fs::metadata(&target).map(|m| m.len() > 0).unwrap_or(false) {
            return (child, target);
        }
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the layout never started: {:?}", names(dir));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &Child, sig: &str) {
    assert!(Command::new("kill").args(["-s", sig, &child.id().to_string()]).status().unwrap().success());
}

/// Waits for the child at most `limit`; kills it (and fails) when it is still running.
fn wait_within(mut child: Child, limit: Duration) -> (Option<i32>, Duration, String) {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (st.code(), t0.elapsed(), err);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn ctrl_c_stops_a_layout_within_a_second() {
    let Some(d) = scratch("layout-int") else {
        return;
    };
    let (child, target) = start_layout(d.path(), "big.img");
    signal(&child, "INT");
    let (code, took, err) = wait_within(child, Duration::from_secs(20));
    eprintln!("Ctrl-C during the layout: exit {code:?} after {took:?}");
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(1), "took {took:?} to stop");
    assert!(err.contains("interrupted while laying it out"), "{err}");
    assert!(!target.exists(), "no unfinished file under the target's name");
    assert!(names(d.path()).is_empty(), "the temporary file is removed: {:?}", names(d.path()));
}

#[test]
fn a_killed_layout_is_never_reused_as_if_complete() {
    let Some(d) = scratch("layout-kill") else {
        return;
    };
    for sig in ["TERM", "KILL"] {
        let (child, target) = start_layout(d.path(), "t.img");
        signal(&child, sig);
        let _ = wait_within(child, Duration::from_secs(20));
        assert!(!target.exists(), "SIG{sig} left a short file under the target's name ({:?})", names(d.path()));
    }
    // The next run lays the file out afresh, at the size it asks for, and names the leftover.
    let target = d.path().join("t.img");
    let o = iopath()
        .arg("measure")
        .arg("--target")
        .arg(&target)
        .args(["--rw", "read", "--bs", "64k", "--runtime", "300ms", "--ramp", "0s", "--size", "3m", "--quiet"])
        .args(["--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 3 << 20);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("unfinished layout"), "{warnings}");
}
