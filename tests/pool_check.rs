//! `iopath check` on a topology with pools, and pool workloads that are refused before
//! anything runs. Expected values come from the layouts' arithmetic and the Exos X18 data
//! sheet (270 MB/s sustained at the outer diameter, the rate the bound uses for an HDD).

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const CONFIG: &str = "configs/pools-9300-8i-exos.toml";

fn iopath() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iopath"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn check_json() -> Value {
    let out = iopath().args(["check", CONFIG, "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn check_shows_each_pool_with_capacity_and_bound() {
    let out = iopath().args(["check", CONFIG]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("tank [raidz2] z0, z1, z2, z3, z4, z5"), "{text}");
    assert!(text.contains("boot [mirror] m0, m1"), "{text}");

    let v = check_json();
    let tank = &v["pools"][0];
    assert_eq!(tank["id"], "tank");
    // RAIDZ2 of 6 at 128 KiB records, ashift 12: 32 data sectors over 4 data columns = 8 rows,
    // 16 parity sectors, 48 in all (a multiple of 3). Each 18e12-byte member has
    // floor(18e12 / 4096) = 4,394,531,250 sectors; 6 of them hold
    // floor(26,367,187,500 / 48) = 549,316,406 records of 131,072 bytes.
    assert_eq!(tank["usable_bytes"].as_u64(), Some(549_316_406 * 131_072));
    // Sequential reads read the 4 data columns: 4 x 270 MB/s; writes put 48/32 = 1.5 bytes
    // on the members per byte: 6 x 270 / 1.5 = 1,080 MB/s.
    let (read, write) = (&tank["bound"][0], &tank["bound"][1]);
    assert!(close(read["logical_mb_s"].as_f64().unwrap(), 4.0 * 270.0, 1e-3), "{read}");
    assert!(close(write["member_write_per_logical"].as_f64().unwrap(), 1.5, 1e-9), "{write}");
    assert!(close(write["logical_mb_s"].as_f64().unwrap(), 6.0 * 270.0 / 1.5, 1e-3), "{write}");
    assert_eq!(read["binding_kind"], "media");
    // A resilver of z3 at 60 % fill: every record of the vdev has 8 of its 48 sectors on z3,
    // written once per 32 data sectors (0.25 bytes per logical byte), so the replacement's
    // 270 MB/s limits the walk to 1,080 logical MB/s; 0.6 x usable / 1,080 MB/s.
    let r = &tank["workloads"]["resilver"];
    assert!(close(r["member_write_per_logical"].as_f64().unwrap(), 0.25, 1e-6), "{r}");
    let usable = tank["usable_bytes"].as_f64().unwrap();
    assert!(close(r["task_s"].as_f64().unwrap(), 0.6 * usable / 1080e6, 0.01), "{r}");
    // The md mirror rebuild reads m0 and writes m1 whole: 18e12 / 270 MB/s = 18.5 h.
    let m = &v["pools"][1]["workloads"]["mirror-rebuild"];
    assert!(close(m["task_s"].as_f64().unwrap(), 18e12 / 270e6, 0.01), "{m}");
}

#[test]
fn pool_options_that_survive_nothing_are_usage_errors() {
    iopath()
        .args(["simulate", CONFIG, "--pool", "tnak", "--runtime", "0.1s"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no pool has id \"tnak\"; did you mean \"tank\"?"));
    iopath()
        .args(["simulate", CONFIG, "--pool", "tank", "--failed", "z0", "--failed", "z1", "--failed", "z2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pool \"tank\" (raidz2) survives 2 failed member(s) per vdev, but 3"));
    iopath()
        .args(["simulate", CONFIG, "--pool", "tank", "--failed", "m0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("\"m0\" is not a member of pool \"tank\""));
    iopath()
        .args(["simulate", CONFIG, "--pool", "tank", "--task", "rebuild"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a rebuild rebuilds failed members"));
    iopath()
        .args(["simulate", CONFIG, "--pool", "tank", "--fill", "0.6"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no %"));
}

#[test]
fn the_schema_documents_the_pool_table() {
    let out = iopath().args(["schema"]).output().unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("RawPool") && s.contains("recordsize") && s.contains("write_mode"), "{s}");
}
