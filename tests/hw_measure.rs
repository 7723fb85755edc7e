//! `iopath measure` as a user runs it.
//!
//! - files: the report's shape and contract, engines, --fio-job, --out, copy, refusals;
//! - the mock runner: the measurement plumbing without devices;
//! - rigs (root; skipped with a printed reason otherwise): loop devices capped by cgroup v1
//!   blkio throttles, measured alone and together (each within 5% of its cap), and a
//!   shared "uplink" (inner loop devices on ext4 on one capped outer loop device) whose
//!   ramp saturates at the outer cap while one drive alone reaches its own cap.

use iopath_model::report::{Report, Sweep};
use iopath_test_support::{self as rig, Rig};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn iopath() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iopath"))
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("iopath-{tag}-")).tempdir_in(rig::scratch_dir()).unwrap()
}

mod files {
    use super::*;

    #[test]
    fn random_reads_on_a_created_file_report_the_contract() {
        let d = scratch("files");
        let f = d.path().join("t.img");
        let job = d.path().join("job.fio");
        let out = d.path().join("r.json");
        let o = iopath()
            .args(["measure", "--target"])
            .arg(&f)
            .args([
                "--size",
                "16m",
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--runtime",
                "1s",
                "--ramp",
                "0.2s",
                "--json",
                "--quiet",
            ])
            .arg("--write-fio-job")
            .arg(&job)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let text = ok(&o);
        let r: Report = serde_json::from_str(&text).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["kind"], "measured");
        assert_eq!(r.drives.len(), 1);
        assert_eq!(r.drives[0].id, f.display().to_string());
        assert!(r.drives[0].iops > 100.0 && r.drives[0].read_mb_s > 0.0 && r.drives[0].write_mb_s == 0.0);
        let l = &r.drives[0].lat_us;
        assert!(l.p50 > 0.0 && l.p50 <= l.p99 && l.p99 <= l.max, "{l:?}");
        assert!((r.cost.sim_s - 1.0).abs() < 0.15, "{}", r.cost.sim_s);
        assert!(r.cost.cpu_s.unwrap() > 0.0);
        assert!(r.links.is_empty() && r.bottleneck.id.is_empty());
        assert_eq!(r.total.mb_s, r.total.read_mb_s);
        assert_eq!(r.measured.as_ref().map(|m| m.engine.as_str()), Some("io_uring"));
        // Not sparse: every byte was written before the reads.
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 16 << 20);
        // --out holds the same report.
        let saved: Report = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(saved, r);
        let j = std::fs::read_to_string(&job).unwrap();
        for want in [
            "direct=1",
            "ioengine=io_uring",
            "rw=randread",
            "bs=4096",
            "iodepth=8",
            "runtime=1",
            "ramp_time=200ms",
            &format!("filename={}", f.display()),
        ] {
            assert!(j.contains(want), "{want:?} missing in\n{j}");
        }
    }

    #[test]
    fn the_thread_engine_and_the_table() {
        let d = scratch("threads");
        let f = d.path().join("t.img");
        let o = iopath()
            .args(["measure", "--target"])
            .arg(&f)
            .args([
                "--size",
                "8m",
                "--rw",
                "read",
                "--bs",
                "128k",
                "--iodepth",
                "4",
                "--runtime",
                "0.5s",
                "--ramp",
                "0s",
                "--engine",
                "threads",
            ])
            .output()
            .unwrap();
        let t = ok(&o);
        assert!(t.contains("engine threads") && t.contains("read MB/s") && t.contains("p99"), "{t}");
    }

    #[test]
    fn writes_need_allow_write_and_copy_moves_the_same_bytes() {
        let d = scratch("copy");
        let a = d.path().join("a.img");
        let b = d.path().join("b.img");
        let base = |c: &mut Command| {
            c.args(["measure", "--target"]).arg(&a).arg("--target").arg(&b).args([
                "--size",
                "4m",
                "--bs",
                "1m",
                "--iodepth",
                "2",
                "--runtime",
                "0.5s",
                "--ramp",
                "0s",
                "--quiet",
                "--json",
            ]);
        };
        let mut c = iopath();
        base(&mut c);
        c.arg("--copy").arg(format!("{}:{}", a.display(), b.display()));
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--allow-write"));
        let mut c = iopath();
        base(&mut c);
        c.arg("--copy").arg(format!("{}:{}", a.display(), b.display())).arg("--allow-write");
        let r: Report = serde_json::from_str(&ok(&c.output().unwrap())).unwrap();
        let src = r.drive(&a.display().to_string()).unwrap();
        let dst = r.drive(&b.display().to_string()).unwrap();
        assert!(src.read_mb_s > 0.0 && src.write_mb_s == 0.0);
        assert!(dst.write_mb_s > 0.0 && dst.read_mb_s == 0.0);
        // Sequential copy wraps around the 4 MiB file many times in 0.5 s: the files match.
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }

    #[test]
    fn tmpfs_is_refused_with_a_clear_message() {
        let shm = Path::new("/dev/shm");
        if iopath_validate::target::memory_fs(shm).is_none() {
            rig::skip("/dev/shm is not tmpfs here");
            return;
        }
        let o = iopath()
            .args(["measure", "--target", "/dev/shm/iopath-refused.img", "--runtime", "0.2s"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("tmpfs") && e.contains("disk-backed"), "{e}");
        assert!(!Path::new("/dev/shm/iopath-refused.img").exists());
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        let o = iopath().args(["measure"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let o = iopath().args(["measure", "--target", "/dev/nonexistent-disk"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("no such device"));
        let d = scratch("bad");
        let o = iopath()
            .args(["measure", "--target"])
            .arg(d.path().join("x.img"))
            .args(["--size", "1m", "--active", "1..3"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        // The same binding, and message, as simulate's (model::bind).
        let err = String::from_utf8_lossy(&o.stderr);
        // The first point past the targets is named, as simulate names its own --active.
        assert!(err.contains("--active 2: 2 active drives asked for, but the topology has only 1 drive"), "{err}");
    }
}

mod mock {
    use super::*;
    use iopath_model::WorkloadSpec;
    use iopath_validate::engine::MockRunner;
    use iopath_validate::measure::{EngineChoice, MeasureOptions, TargetSpec, measure_active_ramp_with, measure_with};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    fn opts(dir: &Path, n: usize) -> MeasureOptions {
        MeasureOptions {
            topology: "mock".into(),
            targets: (0..n).map(|i| TargetSpec { id: format!("D{i}"), path: dir.join(format!("m{i}.img")) }).collect(),
            workload: WorkloadSpec { bs: Some("64k".into()), ..Default::default() }.resolve().unwrap(),
            allow_write: false,
            destroy_data_on: vec![],
            size: 1 << 20,
            engine: EngineChoice::Auto,
            runtime: Duration::from_millis(1200),
            ramp: Duration::from_millis(100),
            offset: iopath_validate::measure::Offset::Start,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    #[test]
    fn reports_the_rates_the_runner_delivers() {
        let d = scratch("mock");
        let r = measure_with(&opts(d.path(), 2), Some(&MockRunner { mb_s: vec![50.0, 100.0], lat_us: 80.0 }), &|_| {})
            .unwrap();
        assert!((r.drives[0].read_mb_s - 50.0).abs() < 5.0, "{:?}", r.drives[0]);
        assert!((r.drives[1].read_mb_s - 100.0).abs() < 10.0);
        assert!((r.total.mb_s - 150.0).abs() < 15.0);
        assert!((r.drives[0].lat_us.p50 - 80.0).abs() < 1.0);
        let m = r.measured.as_ref().expect("a measured section");
        assert_eq!(m.engine, "mock");
        let ids: Vec<&str> = m.targets.iter().map(|t| t.id.as_str()).collect();
        let drives: Vec<&str> = r.drives.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, drives);
        assert!(m.targets.iter().all(|t| !t.path.is_empty()), "{:?}", m.targets);
    }

    #[test]
    fn an_active_ramp_has_one_point_per_count() {
        let d = scratch("mockramp");
        let s: Sweep = measure_active_ramp_with(
            &opts(d.path(), 3),
            Some(&MockRunner { mb_s: vec![10.0], lat_us: 5.0 }),
            1,
            3,
            &|_| {},
        )
        .unwrap();
        let n: Vec<usize> = s.points.iter().map(|p| p.report.as_ref().unwrap().drives.len()).collect();
        assert_eq!(n, [1, 2, 3]);
        assert_eq!(s.points[2].param, "active");
    }

    #[test]
    fn ctrl_c_gives_a_partial_report() {
        let d = scratch("mockstop");
        let o = opts(d.path(), 1);
        let stop = o.stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let r = measure_with(&o, Some(&MockRunner { mb_s: vec![10.0], lat_us: 5.0 }), &|_| {}).unwrap();
        assert!(r.partial);
        assert!(r.cost.sim_s < 0.9, "{}", r.cost.sim_s);
        assert!(r.warnings.iter().any(|w| w.contains("interrupted")));
    }
}

mod rigs {
    use super::*;
    use iopath_test_support::retry::{around, best_within, within};

    const MIB: f64 = 1048576.0;

    fn skip() -> bool {
        match rig::available() {
            Ok(()) => false,
            Err(why) => {
                rig::skip(&why);
                true
            }
        }
    }

    /// `iopath measure --json ARGS` inside the cgroup.
    fn measure_in(cg: &rig::Cgroup, args: &[&str]) -> serde_json::Value {
        let o = cg
            .command(Path::new(env!("CARGO_BIN_EXE_iopath")))
            .arg("measure")
            .args(args)
            .args(["--json", "--quiet"])
            .output()
            .unwrap();
        serde_json::from_str(&ok(&o)).unwrap()
    }

    /// A rate under a blk-throttle cap over a 5 s window: one 100 ms throttle slice more or
    /// less is 2%.
    const TOL: f64 = 0.05;

    #[test]
    fn throttled_loop_devices_alone_and_together() {
        if skip() {
            return;
        }
        let mut rig = Rig::new("caps").unwrap();
        let dir = rig.dir.clone();
        let fa = rig.file(&dir, "a.img", 192 << 20).unwrap();
        let fb = rig.file(&dir, "b.img", 192 << 20).unwrap();
        let a = rig.loop_dev(&fa).unwrap();
        let b = rig.loop_dev(&fb).unwrap();
        let cg = rig.cgroup().unwrap();
        let (ca, cb) = (20.0 * MIB, 40.0 * MIB);
        cg.read_bps(&a, ca as u64).unwrap();
        cg.read_bps(&b, cb as u64).unwrap();
        let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
        // 256 KiB: larger reads are split by the loop queue (128 segments) and blk-throttle
        // then charges the split bios twice (fio measures the same half rate at 1 MiB).
        let job = ["--rw", "read", "--bs", "256k", "--iodepth", "4", "--runtime", "5s", "--ramp", "1s"];
        // Alone: each device measured by its own process, both at the same time (the caps are
        // per device, so the two runs do not interact).
        // Each cap is an upper bound that other load on the machine can only fall short of:
        // a short rate is measured again (`best_within`), one above its window fails at once.
        let want = [ca / 1e6, cb / 1e6, ca / 1e6, cb / 1e6, (ca + cb) / 1e6];
        let got = best_within("throttled loop devices", &want.map(|w| around(w, TOL)), || {
            let (ra, rb) = std::thread::scope(|s| {
                let ha = s.spawn(|| measure_in(&cg, &[&["--target", sa][..], &job].concat()));
                let hb = s.spawn(|| measure_in(&cg, &[&["--target", sb][..], &job].concat()));
                (ha.join().unwrap(), hb.join().unwrap())
            });
            // Together, in one run.
            let r = measure_in(&cg, &[&["--target", sa, "--target", sb][..], &job].concat());
            let mb = |v: &serde_json::Value| v["read_mb_s"].as_f64().unwrap();
            vec![mb(&ra["drives"][0]), mb(&rb["drives"][0]), mb(&r["drives"][0]), mb(&r["drives"][1]), mb(&r["total"])]
        });
        let what = ["loop A alone", "loop B alone", "loop A together", "loop B together", "total together"];
        for ((g, w), what) in got.iter().zip(want).zip(what) {
            within(what, *g, w, TOL);
        }
    }

    #[test]
    fn a_shared_uplink_saturates_at_its_cap() {
        if skip() {
            return;
        }
        let mut rig = Rig::new("uplink").unwrap();
        let dir = rig.dir.clone();
        let outer_file = rig.file(&dir, "outer.img", 448 << 20).unwrap();
        let outer = rig.loop_dev(&outer_file).unwrap();
        let mnt = rig.ext4(&outer).unwrap();
        let inner: Vec<PathBuf> = (0..2)
            .map(|i| {
                let f = rig.file(&mnt, &format!("d{i}.img"), 160 << 20).unwrap();
                rig.loop_dev(&f).unwrap()
            })
            .collect();
        let cg = rig.cgroup().unwrap();
        let (drive_cap, uplink_cap) = (25.0 * MIB, 30.0 * MIB);
        for d in &inner {
            cg.read_bps(d, drive_cap as u64).unwrap();
        }
        cg.read_bps(&outer, uplink_cap as u64).unwrap();
        let mut args: Vec<&str> = Vec::new();
        for d in &inner {
            args.extend(["--target", d.to_str().unwrap()]);
        }
        args.extend([
            "--rw",
            "read",
            "--bs",
            "256k", // see throttled_loop_devices_alone_and_together
            "--iodepth",
            "4",
            "--runtime",
            "5s",
            "--ramp",
            "1s",
            "--active",
            "1..2",
        ]);
        let want = [drive_cap / 1e6, uplink_cap / 1e6];
        let got = best_within("shared uplink", &want.map(|w| around(w, TOL)), || {
            let s = measure_in(&cg, &args);
            let p = s["points"].as_array().unwrap();
            assert_eq!(p.len(), 2);
            for x in p {
                eprintln!("active={}: warnings {}", x["value"], x["report"]["warnings"]);
            }
            p.iter().map(|x| x["report"]["total"]["read_mb_s"].as_f64().unwrap()).collect()
        });
        within("one inner drive alone (its own cap)", got[0], want[0], TOL);
        within("two inner drives (the uplink cap)", got[1], want[1], TOL);
    }
}
