//! `sweep --vary pool.ID.FIELD=...`: layouts compared on the same drives (issue #14). The
//! expected rates are derived in comments from the drives' datasheet figures and each
//! layout's arithmetic, never from the model's own output.

mod common;
use common::command as iopath;

use iopath_model::report::Sweep;
use iopath_test_support::within;

/// The N100 build's six WD Red Plus 4 TB (catalog: 175 MB/s at the outer zone) written
/// sequentially as four pools of the same drives. Every drive writes at its media rate, so
/// the pool's logical rate is 6 x 175 MB/s over its member bytes per logical byte; a
/// 128 KiB record is 32 sectors of 4 KiB (ashift 12):
/// - raidz1 (one vdev of 6: 5 data columns): ceil(32/5) = 7 rows, 7 parity sectors, 39
///   sectors padded to a multiple of p + 1 = 2: 40, so 40/32 = 1.25 and 1050/1.25 = 840 MB/s;
/// - raidz2 (4 data columns): 8 rows, 16 parity, 48 sectors (a multiple of 3): 1.5, 700 MB/s;
/// - zfs-mirror:2 (three 2-way mirrors): 2 copies, 525 MB/s;
/// - zfs-mirror (the members as written: one 6-way mirror): 6 copies, 175 MB/s.
///
/// raidz1 over raidz2 is therefore 1.5/1.25 = 1.2, not the 5/4 of the data columns alone:
/// RAIDZ1's padding sector costs it. The ramp (1.5 s) outlasts the 128 MiB write cache: five
/// of the drives share the JMB585's PCIe 3.0 x2 (about 1,780 MB/s of payload, 356 MB/s
/// each), so their caches fill at 356 - 175 = 181 MB/s, in 0.74 s.
#[test]
fn a_layout_sweep_orders_pools_on_the_same_drives_as_their_member_bytes_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("vary");
    let o = iopath()
        .args(["sweep", "configs/nas-n100-jmb585-raidz2.toml", "--pool", "tank", "--rw", "write", "--bs", "1m"])
        .args(["--iodepth", "8", "--ramp", "1.5s", "--runtime", "0.5s", "--json", "--quiet"])
        .args(["--vary", "pool.tank.layout=raidz1,raidz2,zfs-mirror:2,zfs-mirror", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Sweep = serde_json::from_slice(&o.stdout).expect("sweep JSON");
    let labels: Vec<String> = s.points.iter().map(|p| p.value.as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(labels, ["raidz1", "raidz2", "zfs-mirror:2", "zfs-mirror"]);
    let mb: Vec<f64> = s.points.iter().map(|p| p.report.as_ref().expect("a report").total.mb_s).collect();
    let overhead: Vec<f64> =
        s.points.iter().map(|p| p.report.as_ref().unwrap().pool.as_ref().expect("a pool section").overhead).collect();
    for (i, (want_mb, want_over)) in [(840.0, 1.25), (700.0, 1.5), (525.0, 2.0), (175.0, 6.0)].iter().enumerate() {
        within(&format!("{} member bytes per logical byte", labels[i]), overhead[i], *want_over, 0.01);
        within(&format!("{} logical MB/s", labels[i]), mb[i], *want_mb, 0.04);
        let bound = s.points[i].bound_mb_s.expect("a pool bound");
        within(&format!("{} bound", labels[i]), bound, *want_mb, 0.01);
    }
    within("raidz1 over raidz2", mb[0] / mb[1], 1.2, 0.02);
    within("three 2-way mirrors over raidz2", mb[2] / mb[1], 0.75, 0.02);
    // The outputs name each point by its layout.
    let csv = std::fs::read_to_string(out.join("sweep.csv")).expect("sweep.csv");
    for l in &labels {
        assert!(csv.contains(&format!("pool.tank.layout,{l},")), "{l} in sweep.csv:\n{csv}");
    }
    assert!(std::fs::metadata(out.join("sweep.png")).is_ok_and(|m| m.len() > 1000));
}

/// A bad layout, a pool that does not exist and a vdev width that does not divide the
/// members are usage errors (exit 2) named by the option, before any point runs.
#[test]
fn a_bad_layout_value_is_refused_with_the_option_that_gave_it() {
    for (vary, says) in [
        ("pool.tank.layout=raidz1,raidz9", "--vary pool.tank.layout=raidz9: \"raidz9\" is not a layout"),
        ("pool.tnak.layout=raidz1", "no pool has id \"tnak\"; did you mean \"tank\"?"),
        // Six members split into vdevs of 1, 2, 3 or 6, not 4.
        ("pool.tank.layout=zfs-mirror:4", "6 members do not split into vdevs of 4"),
        ("pool.tank.layout=raid6:2", "a vdev width (:2) applies to ZFS layouts only"),
        ("pool.tank.layuot=raid6", "did you mean \"layout\"?"),
    ] {
        let o = iopath()
            .args(["sweep", "configs/nas-n100-jmb585-raidz2.toml", "--pool", "tank", "--rw", "read"])
            .args(["--runtime", "0.2s", "--quiet", "--vary", vary])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{vary}: {err}");
        assert!(err.contains(says), "{vary}: {err}");
        assert!(err.contains("no point was simulated") || err.contains("--vary"), "{vary}: {err}");
        assert!(!err.contains("no pool has id \"tank\""), "a refused pool is not reported missing again: {err}");
    }
}

/// A sweep point's overrides add to the `--set`s, not replace them: drive D of the ASM1166
/// build set to 100 MB/s of sequential reads stays at 100 MB/s at every point of an `--vary`
/// of the controller's MPS (it read at its catalog 560 MB/s when the point's topology was
/// built from the file alone).
#[test]
fn a_vary_keeps_the_set_figures() {
    let o = iopath()
        .args(["sweep", "configs/asm1166-6ssd.toml", "--rw", "read", "--bs", "1m", "--active", "1"])
        .args(["--set", "D.seq_read_mb_s=100", "--vary", "hba.mps=128,256", "--runtime", "0.2s", "--json", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Sweep = serde_json::from_slice(&o.stdout).expect("sweep JSON");
    for p in &s.points {
        within("drive D's reads at its --set rate", p.report.as_ref().unwrap().total.mb_s, 100.0, 0.03);
    }
}
