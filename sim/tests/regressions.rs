//! Regression tests named after what broke.
// --- sim/tests/regressions.rs -------------------------------------------------------------
use iopath_model::{Catalog, Topology, WorkloadSpec};
use iopath_sim::{SimOptions, simulate, sweep::workload_bound};

/// Regression: a read completing on an HDD used to drop the write-back cache unwritten
/// (found by the property tests; the cache is now flushed before the head moves).
#[test]
fn hdd_write_back_cache_is_not_forgotten_by_reads() {
    let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "c0"
part = "asm1166"
parent = "host"
[[drive]]
id = "hdd"
part = "seagate-es3-3tb"
parent = "c0"
port = 0
"#;
    let t = Topology::parse("bug.toml", text, &Catalog::builtin()).unwrap();
    let w = WorkloadSpec {
        rw: Some("rw".into()),
        rwmixread: Some(1),
        bs: Some("64k".into()),
        iodepth: Some(13),
        runtime: Some("10s".into()),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let r = simulate(&t, &w, &SimOptions::default()).unwrap();
    let b = workload_bound(&t, &w).unwrap();
    // Was 495 MB/s from a drive whose media writes ~170 MB/s (bound 172).
    assert!(r.total.mb_s <= b * 1.005 + 1.0, "{} MB/s > bound {b}", r.total.mb_s);
}

/// Regression: a read used to wait for the whole write-back cache (up to 128 MB) to reach
/// the media before the head moved, so a 20/80 sequential mix on one HDD ran at about a
/// quarter of its media rate, and a faster uplink (filling the cache sooner) could make a
/// short run several times slower. Reads now delay the write-back instead of waiting for it.
#[test]
fn reads_do_not_wait_for_the_whole_write_back_cache() {
    let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "c0"
part = "asm1166"
parent = "host"
[[drive]]
id = "hdd"
part = "seagate-es3-3tb"
parent = "c0"
port = 0
"#;
    let t = Topology::parse("bug.toml", text, &Catalog::builtin()).unwrap();
    let w = WorkloadSpec {
        rw: Some("rw".into()),
        rwmixread: Some(20),
        bs: Some("64k".into()),
        iodepth: Some(13),
        runtime: Some("10s".into()),
        ..Default::default()
    }
    .resolve()
    .unwrap();
    let r = simulate(&t, &w, &SimOptions::default()).unwrap();
    let b = workload_bound(&t, &w).unwrap();
    // Was 46 MB/s against a bound of ~170 MB/s.
    assert!(r.total.mb_s >= 0.5 * b, "{} MB/s against a bound of {b}", r.total.mb_s);
    assert!(r.total.mb_s <= b * 1.005 + 1.0, "{} MB/s > bound {b}", r.total.mb_s);
}
