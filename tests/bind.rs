//! One binding of a workload to a topology's drives, whichever command asks: a topology's own
//! `[workload.*]` table (`check`), the flags of `simulate`, and `measure` on files (no root
//! needed) accept the same copies and refuse the same ones with the same message.

mod common;
use common::command as iopath;

use iopath_test_support as rig;
use std::path::Path;
use std::process::Output;

const TOPOLOGY: &str = "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n";

/// A topology with drives D, E, F on one controller, each on a file next to it, and the
/// named workloads appended as written.
fn write_topology(dir: &Path, name: &str, workloads: &str) -> std::path::PathBuf {
    let mut s = TOPOLOGY.to_string();
    for d in ["D", "E", "F"] {
        s += &format!("[[drive]]\nid = \"{d}\"\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\ndev = \"{d}.img\"\n");
    }
    s += workloads;
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const CHAIN: &str =
    "drive \"E\" is both the destination of copy D:E and the source of copy E:F; chains of copies are not supported";

#[test]
fn a_copy_chain_is_refused_by_check_simulate_and_measure_with_one_message() {
    let d = tempfile::tempdir().unwrap();
    let bad = write_topology(d.path(), "chain.toml", "[workload.c]\ncopy = [\"D:E\", \"E:F\"]\n");
    let o = iopath().arg("check").arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "check: {}", stderr(&o));
    // Located at the second pair, the one that closes the chain.
    assert!(stderr(&o).contains("chain.toml:23:16: workload.c.copy[1]: copy \"E:F\": "), "check: {}", stderr(&o));
    assert!(stderr(&o).contains(CHAIN), "check: {}", stderr(&o));

    let good = write_topology(d.path(), "plain.toml", "");
    let chain = ["--copy", "D:E", "--copy", "E:F"];
    let o = iopath().arg("simulate").arg(&good).args(chain).args(["--runtime", "10ms"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "simulate: {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("--copy E:F: {CHAIN}")), "simulate: {}", stderr(&o));

    // measure refuses before the write gate and before any file is laid out.
    let o = iopath().arg("measure").arg(&good).args(chain).args(["--allow-write", "--size", "1m"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "measure: {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("--copy E:F: {CHAIN}")), "measure: {}", stderr(&o));
    assert!(!d.path().join("F.img").exists() && !d.path().join("E.img").exists(), "measure laid out files");
}

#[test]
fn a_destination_with_two_sources_is_refused_everywhere() {
    let d = tempfile::tempdir().unwrap();
    let msg = "drive \"F\" is the destination of copies D:F and E:F";
    let bad = write_topology(d.path(), "two.toml", "[workload.c]\ncopy = [\"D:F\", \"E:F\"]\n");
    let o = iopath().arg("check").arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(msg), "check: {}", stderr(&o));
    let good = write_topology(d.path(), "plain.toml", "");
    for cmd in ["simulate", "measure"] {
        let o = iopath().arg(cmd).arg(&good).args(["--copy", "D:F", "--copy", "E:F", "--runtime", "10ms"]).output();
        let o = o.unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("--copy E:F: {msg}")), "{cmd}: {}", stderr(&o));
    }
}

fn drive<'a>(r: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    r["drives"].as_array().unwrap().iter().find(|d| d["id"] == id).unwrap_or_else(|| panic!("no drive {id} in {r}"))
}

/// D read once per destination, E and F each written: the bytes show both copies ran.
fn assert_fan_out(what: &str, r: &serde_json::Value) {
    let (dd, e, f) = (drive(r, "D"), drive(r, "E"), drive(r, "F"));
    let bytes = |d: &serde_json::Value, k: &str| d[k].as_u64().unwrap();
    assert!(bytes(e, "write_bytes") > 0 && bytes(f, "write_bytes") > 0, "{what}: both destinations written: {r}");
    assert_eq!(bytes(dd, "write_bytes"), 0, "{what}: the source is only read: {r}");
    assert_eq!(bytes(e, "read_bytes") + bytes(f, "read_bytes"), 0, "{what}: destinations are only written: {r}");
    // What D gave is what E and F took, up to the copies in flight at the window's edges.
    let written = bytes(e, "write_bytes") as f64 + bytes(f, "write_bytes") as f64;
    let read = bytes(dd, "read_bytes") as f64;
    assert!((read - written).abs() <= 0.15 * written, "{what}: D read {read} B, E and F took {written} B: {r}");
}

#[test]
fn one_source_copied_to_two_destinations_runs_in_check_simulate_and_measure() {
    let d = tempfile::tempdir().unwrap();
    let t = write_topology(d.path(), "fan.toml", "[workload.c]\ncopy = [\"D:E\", \"D:F\"]\n");
    let o = iopath().arg("check").arg(&t).output().unwrap();
    assert!(o.status.success(), "check: {}", stderr(&o));
    let o = iopath().arg("simulate").arg(&t).args(["--workload", "c", "--runtime", "50ms", "--json"]).output().unwrap();
    assert!(o.status.success(), "simulate: {}", stderr(&o));
    assert_fan_out("simulate", &serde_json::from_slice(&o.stdout).unwrap());

    // measure needs a disk-backed directory for O_DIRECT files.
    let base = rig::scratch_dir();
    if iopath_validate::target::memory_fs(&base).is_some() {
        rig::skip(&format!(
            "measure part: no disk-backed scratch directory ({} is a memory filesystem)",
            base.display()
        ));
        return;
    }
    let m = tempfile::Builder::new().prefix("iopath-bind-").tempdir_in(base).unwrap();
    let t = write_topology(m.path(), "fan.toml", "");
    let o = iopath()
        .arg("measure")
        .arg(&t)
        .args(["--copy", "D:E", "--copy", "D:F", "--allow-write", "--bs", "64k", "--size", "2m"])
        .args(["--runtime", "300ms", "--ramp", "0s", "--quiet", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "measure: {}", stderr(&o));
    assert_fan_out("measure", &serde_json::from_slice(&o.stdout).unwrap());
}
