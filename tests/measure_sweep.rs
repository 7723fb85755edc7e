//! `iopath measure` as DiskSpeed users run it: sweeps of the workload options with
//! `sweep`'s list and range syntax, written as `sweep` writes its outputs, and surface scans.
//!
//! - mock: a runner whose speed steps at a known offset; the surface scan finds the step;
//! - files (any user): a `--bs` x `--iodepth` grid on file targets gives its points in
//!   order, each run with its own values, and `--out DIR` writes sweep's files; `--offset`;
//! - rigs (root; skipped with a printed reason otherwise): a controller ramp on loop devices
//!   capped by cgroup v1 blkio throttles, drawn as a PNG, whose CSV matches the caps; a
//!   surface scan of a capped loop device, flat at its cap (a loop device has no zones).

use iopath_test_support::{self as rig, Rig};
use std::path::Path;
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

/// The rows of a CSV file with a header, as maps from column name to text (the files
/// iopath writes here hold no quoted commas: ids are paths).
fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
    lines.map(|l| head.iter().cloned().zip(l.split(',').map(str::to_string)).collect()).collect()
}

/// The width and height in a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

mod mock {
    use super::*;
    use iopath_model::WorkloadSpec;
    use iopath_validate::engine::{Clock, EngineError, JobCounters, JobResult, JobSpec, MockRunner, Runner};
    use iopath_validate::measure::surface::surface_scan_with;
    use iopath_validate::measure::{EngineChoice, MeasureOptions, Offset, TargetSpec};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    /// A drive that reads at `before` MB/s below byte `at` and at `after` from there on:
    /// each job runs at the rate of where its region starts (the mock's I/O plumbing).
    struct Step {
        at: u64,
        before: f64,
        after: f64,
    }

    impl Runner for Step {
        fn name(&self) -> &'static str {
            "mock"
        }
        fn run(&self, jobs: &[JobSpec], clock: &Clock, c: &[JobCounters]) -> Result<Vec<JobResult>, EngineError> {
            let rate = if jobs[0].region_start >= self.at { self.after } else { self.before };
            MockRunner { mb_s: vec![rate], lat_us: 10.0 }.run(jobs, clock, c)
        }
    }

    #[test]
    fn a_surface_scan_finds_a_step_at_its_offset() {
        let d = scratch("step");
        let size: u64 = 8 << 20;
        let step = 5 << 20;
        let o = MeasureOptions {
            topology: "mock".into(),
            targets: vec![TargetSpec { id: "d1".into(), path: d.path().join("t.img") }],
            workload: WorkloadSpec { bs: Some("64k".into()), ..Default::default() }.resolve().unwrap(),
            allow_write: false,
            destroy_data_on: vec![],
            size,
            engine: EngineChoice::Threads,
            runtime: Duration::from_millis(60),
            ramp: Duration::ZERO,
            offset: Offset::Start,
            stop: Arc::new(AtomicBool::new(false)),
        };
        let n = 17;
        let s = surface_scan_with(&o, Some(&Step { at: step, before: 200.0, after: 100.0 }), n, &|_| {}).unwrap();
        assert_eq!(s.points.len(), n);
        assert_eq!(s.size_bytes, size);
        // 128 blocks of 64 KiB in 17 windows of 7 blocks; the starts are k * 121 / 16 blocks,
        // so neighbours are 121/16 = 7.6 blocks (0.47 MiB) apart.
        let spacing = (size - 7 * 65536) as f64 / (n - 1) as f64;
        let first_slow = s.points.iter().position(|p| p.mb_s < 150.0).expect("a slow point");
        assert!(first_slow > 0, "{:?}", s.points);
        let found = s.points[first_slow].offset_bytes as f64;
        assert!(
            (found - step as f64).abs() <= spacing && (s.points[first_slow - 1].offset_bytes as f64) < step as f64,
            "the step at {step} found at {found} (spacing {spacing})"
        );
        // Every point on each side reads at its side's rate (within the mock's 5 ms ticks:
        // 5 ms of 60 = 8%).
        for (k, p) in s.points.iter().enumerate() {
            let want = if k < first_slow { 200.0 } else { 100.0 };
            assert!((p.mb_s - want).abs() <= want * 0.1, "point {k}: {} MB/s, want {want}", p.mb_s);
        }
    }
}

mod files {
    use super::*;

    #[test]
    fn a_grid_of_bs_and_iodepth_runs_four_points_in_order() {
        let d = scratch("grid");
        let out = d.path().join("out");
        let o = iopath()
            .args(["measure", "--target"])
            .arg(d.path().join("t.img"))
            .args(["--size", "4m", "--rw", "randread", "--iodepth", "1,8", "--bs", "4k,128k"])
            .args(["--runtime", "0.2s", "--ramp", "0s", "--engine", "threads", "--json", "--quiet", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
        let p = v["points"].as_array().unwrap();
        // sweep's order: the axes as sweep takes them (bs before iodepth), the first outermost.
        let want = [("4k", 4096, 1), ("4k", 4096, 8), ("128k", 131072, 1), ("128k", 131072, 8)];
        assert_eq!(p.len(), 4);
        for (x, (bs, bytes, qd)) in p.iter().zip(want) {
            assert_eq!((x["param"].as_str(), x["value"].as_str()), (Some("bs"), Some(bs)), "{x}");
            assert_eq!((x["param2"].as_str(), x["value2"].as_u64()), (Some("iodepth"), Some(qd)), "{x}");
            // Each point ran with its own values, not the first point's.
            let w = &x["report"]["workload"];
            assert_eq!((w["bs"].as_u64(), w["iodepth"].as_u64()), (Some(bytes), Some(qd)), "{w}");
            assert!(x["report"]["total"]["read_mb_s"].as_f64().unwrap() > 0.0);
        }
        // sweep's files, with a row per point for the target and one for the total.
        for f in ["sweep.json", "sweep.csv", "sweep.md", "sweep.svg", "sweep.png"] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
        let rows = csv_rows(&out.join("sweep.csv"));
        assert_eq!(rows.len(), 8, "{rows:?}");
        let totals: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r["drive"] == "total")
            .map(|r| (r["value"].as_str(), r["value2"].as_str()))
            .collect();
        assert_eq!(totals, [("4k", "1"), ("4k", "8"), ("128k", "1"), ("128k", "8")]);
        assert_eq!(png_size(&std::fs::read(out.join("sweep.png")).unwrap()), (1200, 800));
    }

    #[test]
    fn bad_sweep_values_and_offsets_are_usage_errors() {
        let d = scratch("badgrid");
        let t = d.path().join("t.img");
        let run = |args: &[&str]| {
            let o = iopath()
                .args(["measure", "--target"])
                .arg(&t)
                .args(["--size", "1m", "--quiet"])
                .args(args)
                .output()
                .unwrap();
            (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
        };
        // An empty list value, as sweep refuses it, before any target is created.
        let (code, err) = run(&["--iodepth", "1,,8"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("--iodepth 1,,8: value 2 of 3 is empty"), "{err}");
        assert!(!t.exists(), "a refused sweep created its target");
        // A point whose value is refused is named by the options of the point.
        let (code, err) = run(&["--iodepth", "1,0"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("--iodepth 0"), "{err}");
        // 1 MiB at offset 1m leaves no block.
        let (code, err) = run(&["--offset", "1m", "--bs", "4k", "--runtime", "0.1s"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("--offset 1048576 leaves no block of 4096 bytes"), "{err}");
        let (code, err) = run(&["--offset", "150%"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("--offset \"150%\""), "{err}");
        // A job file is one job: a bs list cannot be written as one.
        let (code, err) = run(&["--bs", "4k,8k", "--write-fio-job", d.path().join("j.fio").to_str().unwrap()]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("--write-fio-job writes one job"), "{err}");
    }

    #[test]
    fn a_surface_scan_of_a_file_writes_its_files() {
        let d = scratch("surf");
        let out = d.path().join("s");
        let t = d.path().join("t.img");
        let o = iopath()
            .args(["measure", "--surface"])
            .arg(&t)
            .args(["--size", "4m", "--points", "4", "--bs", "64k", "--runtime", "0.1s", "--ramp", "0s"])
            .args(["--engine", "threads", "--json", "--quiet", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
        assert_eq!(v["kind"], "surface");
        // 64 blocks of 64 KiB in 4 windows of 16 blocks: starts at k * 48 / 3 = 0, 16, 32, 48
        // blocks, i.e. 0%, 25%, 50%, 75%.
        let pos: Vec<f64> =
            v["points"].as_array().unwrap().iter().map(|p| p["position_pct"].as_f64().unwrap()).collect();
        assert_eq!(pos, [0.0, 25.0, 50.0, 75.0]);
        for f in ["surface.json", "surface.csv", "surface.md", "surface.svg", "surface.png"] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
        assert_eq!(csv_rows(&out.join("surface.csv")).len(), 4);
        // Writing options do not apply to a scan.
        let o = iopath().args(["measure", "--surface"]).arg(&t).args(["--allow-write"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let o = iopath().args(["measure", "--surface"]).arg(&t).args(["--points", "1"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--points 1: a surface scan of this drive takes 2 to"));
    }
}

mod fit {
    use super::*;

    /// A 4 TB drive's scan on the model's curve for 250 MB/s outer and 125 MB/s inner
    /// (zone_rate: sqrt(250^2 (1 - x) + 125^2 x) at the middle of each window's reads).
    fn scan(dir: &Path) -> std::path::PathBuf {
        let size: u64 = 4_000_000_000_000;
        let window = size / 11;
        let points: Vec<serde_json::Value> = (0..11u64)
            .map(|k| {
                let offset = k * (size - window) / 10;
                let read = 200_000_000u64;
                let x = (offset + read / 2) as f64 / size as f64;
                let mb_s = (250f64.powi(2) * (1.0 - x) + 125f64.powi(2) * x).sqrt();
                serde_json::json!({"offset_bytes": offset, "window_bytes": window,
                    "position_pct": offset as f64 / size as f64 * 100.0, "mb_s": mb_s, "iops": mb_s,
                    "read_bytes": read, "lat_p50_us": 1.0, "lat_p99_us": 2.0})
            })
            .collect();
        let s = serde_json::json!({"schema_version": 1, "kind": "surface", "id": "d1", "path": "/dev/sdz",
            "size_bytes": size, "bs": 1048576, "iodepth": 4, "engine": "mock", "runtime_s": 1.0, "ramp_s": 0.2,
            "points": points});
        let f = dir.join("surface.json");
        std::fs::write(&f, s.to_string()).unwrap();
        f
    }

    #[test]
    fn fit_takes_an_hdds_zone_rates_from_a_surface() {
        let d = scratch("zfit");
        let topo = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/marvell9172-pm-5hdd.toml");
        let parts = d.path().join("parts.toml");
        let o = iopath()
            .arg("fit")
            .arg(&topo)
            .arg(scan(d.path()))
            .args(["--free", "d1.outer_mb_s", "--free", "d1.inner_mb_s", "--json", "--quiet", "--out"])
            .arg(&parts)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
        let value = |name: &str| {
            v["params"].as_array().unwrap().iter().find(|p| p["param"] == name).unwrap()["value"].as_f64().unwrap()
        };
        // Points on the curve itself: the fit returns its rates.
        assert!((value("outer_mb_s") - 250.0).abs() < 0.01, "{v}");
        assert!((value("inner_mb_s") - 125.0).abs() < 0.01, "{v}");
        let text = std::fs::read_to_string(&parts).unwrap();
        assert!(text.contains("figures.outer_mb_s = { value = 250") && text.contains("basis = \"fit\""), "{text}");
        // Other figures cannot come from a surface.
        let o = iopath()
            .arg("fit")
            .arg(&topo)
            .arg(scan(d.path()))
            .args(["--free", "d1.outer_mb_s", "--quiet"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--free DRIVE.outer_mb_s --free DRIVE.inner_mb_s"));
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

    /// Tolerance of a rate under a blk-throttle cap over 1-2 s windows: the throttle grants
    /// bandwidth in slices of 100 ms (`throtl_slice`, HZ/10), so a window may start or end
    /// inside one, and 256 KiB requests at 20-40 MiB/s are 80-160 per second, so one more or
    /// less in a 1 s window is up to 1.25%: 7% in all. That bounds the rig, not the machine:
    /// other tests running beside this one can cost a whole slice (10% of a 1 s window), so a
    /// rate short of its window is measured again (`best_within`, at most three times, the
    /// highest kept); a rate above its cap fails at once.
    const TOL: f64 = 0.07;

    #[test]
    fn a_controller_ramp_is_one_command_and_one_picture() {
        if skip() {
            return;
        }
        let mut rig = Rig::new("mramp").unwrap();
        let dir = rig.dir.clone();
        let devs: Vec<_> = (0..2)
            .map(|i| {
                let f = rig.file(&dir, &format!("d{i}.img"), 96 << 20).unwrap();
                rig.loop_dev(&f).unwrap()
            })
            .collect();
        let cg = rig.cgroup().unwrap();
        let caps = [20.0 * MIB, 40.0 * MIB];
        for (d, c) in devs.iter().zip(caps) {
            cg.read_bps(d, c as u64).unwrap();
        }
        let out = dir.join("ramp");
        let (a, b) = (devs[0].to_str().unwrap(), devs[1].to_str().unwrap());
        // One drive alone: its own cap. Both: each its cap, the total their sum.
        let want = [caps[0] / 1e6, caps[0] / 1e6, caps[1] / 1e6, (caps[0] + caps[1]) / 1e6];
        let windows = want.map(|w| around(w, TOL));
        let got = best_within("controller ramp", &windows, || {
            let mut cmd = cg.command(Path::new(env!("CARGO_BIN_EXE_iopath")));
            cmd.arg("measure");
            for d in &devs {
                cmd.arg("--target").arg(d);
            }
            // 256 KiB: larger reads are split by the loop queue and charged twice (hw_measure.rs).
            cmd.args(["--rw", "read", "--bs", "256k", "--iodepth", "4", "--runtime", "2s", "--ramp", "0.5s"]);
            cmd.args(["--active", "1..2", "--quiet", "--out"]).arg(&out);
            ok(&cmd.output().unwrap());
            let rows = csv_rows(&out.join("sweep.csv"));
            let rate = |active: &str, drive: &str| -> f64 {
                let r = rows.iter().find(|r| r["value"] == active && r["drive"] == drive).expect("a row");
                r["read_mb_s"].parse().unwrap()
            };
            vec![rate("1", a), rate("2", a), rate("2", b), rate("2", "total")]
        });
        let what = ["active 1, first drive", "active 2, first drive", "active 2, second drive", "active 2, total"];
        for ((g, w), what) in got.iter().zip(want).zip(what) {
            within(what, *g, w, TOL);
        }
        let png = std::fs::read(out.join("sweep.png")).unwrap();
        assert_eq!(png_size(&png), (1200, 800));
        // A drawn chart, not an empty canvas: a blank 1200x800 PNG compresses to ~5 KB.
        assert!(png.len() > 20_000 && png.len() < 2_000_000, "{} bytes", png.len());
    }

    #[test]
    fn a_surface_scan_of_a_loop_device_is_flat_at_its_cap() {
        if skip() {
            return;
        }
        let mut rig = Rig::new("msurf").unwrap();
        let dir = rig.dir.clone();
        let f = rig.file(&dir, "s.img", 64 << 20).unwrap();
        let dev = rig.loop_dev(&f).unwrap();
        let cg = rig.cgroup().unwrap();
        let cap = 30.0 * MIB;
        cg.read_bps(&dev, cap as u64).unwrap();
        let out = dir.join("surface");
        let window = around(cap / 1e6, TOL);
        let rates = best_within("surface scan", &[window; 4], || {
            let o = cg
                .command(Path::new(env!("CARGO_BIN_EXE_iopath")))
                .args(["measure", "--surface"])
                .arg(&dev)
                .args([
                    "--points",
                    "4",
                    "--bs",
                    "256k",
                    "--runtime",
                    "1s",
                    "--ramp",
                    "0.3s",
                    "--json",
                    "--quiet",
                    "--out",
                ])
                .arg(&out)
                .output()
                .unwrap();
            let v: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
            v["points"].as_array().unwrap().iter().map(|p| p["mb_s"].as_f64().unwrap()).collect()
        });
        // A loop device has no zones: every position reads at the cap.
        for (k, r) in rates.iter().enumerate() {
            within(&format!("point {k}"), *r, cap / 1e6, TOL);
        }
        let png = std::fs::read(out.join("surface.png")).unwrap();
        assert_eq!(png_size(&png), (1200, 800));
        assert!(png.len() > 20_000, "{} bytes", png.len());
    }
}
