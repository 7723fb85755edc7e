//! `iopath check` on a topology with pools, and pool workloads that are refused before
//! anything runs. Expected values come from the layouts' arithmetic and the Exos X18 data
//! sheet (270 MB/s sustained at the outer diameter, the rate the bound uses for an HDD).

mod common;
use common::assert_command as iopath;

use predicates::prelude::*;
use serde_json::Value;

const CONFIG: &str = "configs/pools-9300-8i-exos.toml";

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
    // The md mirror rebuild reads m0 and writes m1 whole; the drives could do 270 MB/s but
    // md's resync ceiling, speed_limit_max = 200,000 KiB/s (drivers/md/md.c), is lower:
    // 18e12 / 204.8e6 s = 24.4 h, and md's limit is named as what binds.
    let m = &v["pools"][1]["workloads"]["mirror-rebuild"];
    assert!(close(m["task_s"].as_f64().unwrap(), 18e12 / 204.8e6, 0.01), "{m}");
    assert_eq!(m["binding"], "md.speed_limit_max");
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

/// md RAID 5 of 4 Exos X18 with 2 MiB chunks, 1 MiB sequential writes at QD 8, with the
/// stripe cache at `cache` (none: md's default, 256).
fn raid5_2m_chunks(cache: Option<&str>) -> String {
    format!(
        "name = \"r5\"\n[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"lsi-sas3008\"\nparent = \"host\"\n\
         [[drive]]\nid = \"d\"\ncount = 4\npart = \"seagate-exos-x18-18tb\"\nparent = \"hba\"\n\
         [[pool]]\nid = \"r5\"\nlayout = \"raid5\"\nmembers = [\"d\"]\nchunk = \"2m\"\n{}\
         [workload.w]\npool = \"r5\"\nrw = \"write\"\nbs = \"1m\"\niodepth = 8\n",
        cache.map(|c| format!("stripe_cache_size = {c}\n")).unwrap_or_default()
    )
}

/// `stripe_cache_size` (md(4)'s sysfs knob) decides whether md can gather a sequential
/// stream's row: a 2 MiB chunk is 2 MiB / 4 KiB = 512 stripe heads per row. A row holds
/// 3 x 2 MiB of data, touched by 6 consecutive 1 MiB writes, all in flight at QD 8.
/// - Default cache, 256 heads < 512: every write is handled alone, inside one chunk; each of
///   its stripe heads has 1 of 3 data pages written, so read-modify-write reads old data + P
///   (2 pages) and reconstruct-write the 2 other data pages (2 pages): 2 member bytes read
///   and 2 written (data + P) per logical byte.
/// - 512 heads: the row fits, is written whole when its last write arrives: no reads, and
///   (3 data + P) / 3 = 4/3 member bytes written per logical byte.
/// - 16 is below the kernel's floor (raid5.c refuses `size <= 16`): a located config error.
#[test]
fn a_larger_stripe_cache_gathers_rows_a_smaller_one_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str, cache: Option<&str>| {
        let f = dir.path().join(name);
        std::fs::write(&f, raid5_2m_chunks(cache)).unwrap();
        f.to_str().unwrap().to_string()
    };
    let w = |file: &str| {
        let out = iopath().args(["check", file, "--json"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["pools"][0].clone()
    };
    let small = w(&at("default.toml", None));
    let r = &small["workloads"]["w"];
    assert!(close(r["member_read_per_logical"].as_f64().unwrap(), 2.0, 1e-9), "{r}");
    assert!(close(r["member_write_per_logical"].as_f64().unwrap(), 2.0, 1e-9), "{r}");
    assert!(small["options"].get("stripe_cache_size").is_none(), "the default is not listed: {small}");
    let big = w(&at("big.toml", Some("512")));
    let r = &big["workloads"]["w"];
    assert_eq!(r["member_read_per_logical"].as_f64(), Some(0.0), "{r}");
    assert!(close(r["member_write_per_logical"].as_f64().unwrap(), 4.0 / 3.0, 1e-9), "{r}");
    assert_eq!(big["options"]["stripe_cache_size"], "512");
    // The text of check shows it too.
    let out = iopath().args(["check", &at("big2.toml", Some("512"))]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("stripe_cache_size 512"));

    // Out of the kernel's range: exit 2, at the value (line 18 of the file, column 21).
    let bad = at("bad.toml", Some("16"));
    let out = iopath().args(["check", &bad]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{bad}:18:21")), "located: {err}");
    assert!(err.contains("stripe_cache_size 16 is outside 17..32768"), "{err}");
    // And on a layout without a stripe cache.
    let mirror = raid5_2m_chunks(Some("1024")).replace("raid5", "raid10");
    let f = dir.path().join("raid10.toml");
    std::fs::write(&f, mirror).unwrap();
    let out = iopath().args(["check", f.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("stripe_cache_size does not apply to layout \"raid10\""), "{err}");
}
