//! `iopath fit` and `iopath compare` (issue #6), as a user runs them.
//!
//! - round trip: points simulated with the catalog's figures, fitted from perturbed
//!   starting values (x 0.8), recover the figures within 2%;
//! - published data: source 003's 5-drive FBS points fix the port multiplier's figures, and
//!   the fitted model predicts the held-out 3-drive points within 10%;
//! - real I/O (root; skipped with a printed reason otherwise): a ramp measured on the
//!   shared-uplink loop-device rig, fitted, recovers the throttle caps within 5%;
//! - fio ingest: fio's own numbers come through, and `iopath compare` accepts its output;
//! - bad input: a bad `--free` exits 2 with a clear message.

mod common;
use common::command as iopath;

use iopath_model::{Catalog, Topology, WorkloadSpec};
use iopath_test_support::{self as rig, Rig, within};
use iopath_validate::calibrate::{self, LoadOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn data(name: &str) -> PathBuf {
    root().join("tests/data/calibration").join(name)
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&ok(o)).unwrap()
}

/// The fitted value of NODE.PARAM in `iopath fit --json` output.
fn fitted(r: &Value, node: &str, param: &str) -> f64 {
    r["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["node"] == node && p["param"] == param)
        .and_then(|p| p["value"].as_f64())
        .unwrap_or_else(|| panic!("{node}.{param} not in {r}"))
}

fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("iopath-cal-{tag}-")).tempdir_in(rig::scratch_dir()).unwrap()
}

#[test]
fn round_trip_recovers_known_figures_from_a_simulated_ramp() {
    // The "measurement": a ramp simulated with the catalog's figures, saved as `iopath sweep`
    // and `iopath measure --active` save theirs (a Sweep of reports).
    let cfg = root().join("configs/asm1166-6ssd.toml");
    let t = Topology::load(&cfg, &Catalog::builtin()).unwrap();
    let truth_eff = t.nodes[t.node("hba").unwrap()].spec.controller().unwrap().dma_read_efficiency;
    let truth_d = t.drive_figures(t.node("D").unwrap()).seq_read_mb_s;
    let base = WorkloadSpec {
        rw: Some("read".into()),
        bs: Some("1m".into()),
        iodepth: Some(8),
        runtime: Some("1s".into()),
        ..Default::default()
    };
    let axis = iopath_sim::Axis::parse("active", "1..6").unwrap();
    let sweep = iopath_sim::sweep(&t, &base, &[axis], 1, &Default::default(), &|| {});
    let dir = tempfile::tempdir().unwrap();
    let ramp = dir.path().join("ramp.json");
    std::fs::write(&ramp, serde_json::to_string_pretty(&sweep).unwrap()).unwrap();
    let parts = dir.path().join("fitted.toml");
    // Start 20% low on both figures.
    let o = iopath()
        .arg("fit")
        .arg(&cfg)
        .arg(&ramp)
        .args(["--free", "hba.dma_read_efficiency", "--free", "D.seq_read_mb_s"])
        .arg(format!("--set=hba.dma_read_efficiency={}", truth_eff * 0.8))
        .arg(format!("--set=D.seq_read_mb_s={}", truth_d * 0.8))
        .arg("--out")
        .arg(&parts)
        .args(["--json", "--quiet"])
        .output()
        .unwrap();
    let r = json(&o);
    within("hba.dma_read_efficiency", fitted(&r, "hba", "dma_read_efficiency"), truth_eff, 0.02);
    within("D.seq_read_mb_s", fitted(&r, "D", "seq_read_mb_s"), truth_d, 0.02);
    assert!(r["before"]["mape_pct"].as_f64().unwrap() > 5.0, "{r}");
    assert!(r["after"]["mape_pct"].as_f64().unwrap() < 0.5, "{r}");
    assert_eq!(r["points"].as_array().unwrap().len(), 6);
    // The part file sets the figures on the parts, and the catalog loads it.
    let text = std::fs::read_to_string(&parts).unwrap();
    assert!(text.contains("id = \"asm1166\"") && text.contains("id = \"kingston-dc600m-1920\""), "{text}");
    assert!(text.contains("basis = \"fit\"") && text.contains("iopath fit: ramp.json, 6 points"), "{text}");
    let mut cat = Catalog::builtin();
    cat.overlay("fitted.toml", &text).unwrap();
    let eff = &cat.get("asm1166").unwrap().figures["dma_read_efficiency"];
    assert_eq!(eff.basis, "fit");
    // And `iopath --parts` runs with it: compare the ramp against the fitted model.
    let o = iopath().arg("--parts").arg(&parts).arg("compare").arg(&cfg).arg(&ramp).args(["--json"]).output().unwrap();
    let c = json(&o);
    assert!(c["mape_pct"].as_f64().unwrap() < 0.5, "{c}");
}

#[test]
fn published_five_drive_points_predict_the_three_drive_points() {
    let cfg = root().join("configs/marvell9172-pm-5hdd.toml");
    let dir = tempfile::tempdir().unwrap();
    let parts = dir.path().join("pm.toml");
    // The catalog's fit (fits.toml) is 0.92 and 20 us; start 20% low.
    let o = iopath()
        .arg("fit")
        .arg(&cfg)
        .arg(data("marvell9172-fbs-5drives.csv"))
        .args(["--free", "pm.upstream_efficiency", "--free", "pm.switch_cost_us"])
        .args(["--set", "pm.upstream_efficiency=0.736", "--set", "pm.switch_cost_us=16"])
        .arg("--out")
        .arg(&parts)
        .args(["--json", "--quiet"])
        .output()
        .unwrap();
    let r = json(&o);
    let (eff, sw) = (fitted(&r, "pm", "upstream_efficiency"), fitted(&r, "pm", "switch_cost_us"));
    eprintln!("fitted pm.upstream_efficiency {eff:.4}, pm.switch_cost_us {sw:.2} us");
    for p in r["points"].as_array().unwrap() {
        eprintln!("  {}: published {:.2} MB/s, fitted model {:.2}", p["workload"], p["observed"], p["after"]);
    }
    assert!(r["after"]["rms_log"].as_f64().unwrap() < r["before"]["rms_log"].as_f64().unwrap() / 4.0, "{r}");
    // The fitted model reproduces each point it was fitted to (the bounds of the figures
    // are the transform's, so checking them would assert nothing), and the efficiency moved
    // up from its start 20% low, as the published rates need.
    for p in r["points"].as_array().unwrap() {
        let (obs, after) = (p["observed"].as_f64().unwrap(), p["after"].as_f64().unwrap());
        within(&format!("fitted 5-drive point {} (MB/s)", p["workload"]), after, obs, 0.05);
    }
    assert!(
        eff > 0.736 * 1.05,
        "pm.upstream_efficiency {eff} did not move up from its start 0.736 (switch cost {sw} us)"
    );
    // The held-out 3-drive points (195.94 and 234.19 MiB/s) with the fitted part file.
    let o = iopath()
        .arg("--parts")
        .arg(&parts)
        .arg("compare")
        .arg(&cfg)
        .arg(data("marvell9172-fbs-3drives.csv"))
        .arg("--json")
        .output()
        .unwrap();
    let c = json(&o);
    let pts = c["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    for (p, published_mib) in pts.iter().zip([195.94, 234.19]) {
        let predicted = p["predicted"].as_f64().unwrap();
        within(&format!("3 drives {} (MB/s)", p["workload"]), predicted, published_mib * 1.048576, 0.10);
    }
}

#[test]
fn a_ramp_measured_on_the_uplink_rig_recovers_its_caps() {
    if let Err(why) = rig::available() {
        rig::skip(&why);
        return;
    }
    const MIB: f64 = 1048576.0;
    let mut rig = Rig::new("fit").unwrap();
    let dir = rig.dir.clone();
    let outer_file = rig.file(&dir, "outer.img", 224 << 20).unwrap();
    let outer = rig.loop_dev(&outer_file).unwrap();
    let mnt = rig.ext4(&outer).unwrap();
    let inner: Vec<PathBuf> = (0..2)
        .map(|i| {
            let f = rig.file(&mnt, &format!("d{i}.img"), 80 << 20).unwrap();
            rig.loop_dev(&f).unwrap()
        })
        .collect();
    let cg = rig.cgroup().unwrap();
    let (drive_cap, uplink_cap) = (25.0 * MIB / 1e6, 30.0 * MIB / 1e6);
    for d in &inner {
        cg.read_bps(d, (drive_cap * 1e6) as u64).unwrap();
    }
    cg.read_bps(&outer, (uplink_cap * 1e6) as u64).unwrap();
    let mut c = cg.command(Path::new(env!("CARGO_BIN_EXE_iopath")));
    c.arg("measure");
    for d in &inner {
        c.arg("--target").arg(d);
    }
    // 256 KiB: larger reads are split by the loop queue and blk-throttle charges them twice
    // (see tests/hw_measure.rs).
    c.args([
        "--rw",
        "read",
        "--bs",
        "256k",
        "--iodepth",
        "4",
        "--runtime",
        "3s",
        "--ramp",
        "0.5s",
        "--active",
        "1..2",
        "--json",
        "--quiet",
    ]);
    let ramp_text = ok(&c.output().unwrap());
    let ramp = dir.join("ramp.json");
    std::fs::write(&ramp, &ramp_text).unwrap();
    let topo = data("loop-uplink-rig.toml");
    let rig_parts = data("loop-uplink-rig-parts.toml");
    let fitted_parts = dir.join("fitted.toml");
    let o = iopath()
        .arg("--parts")
        .arg(&rig_parts)
        .arg("fit")
        .arg(&topo)
        .arg(&ramp)
        .args(["--free", "hba.dma_read_efficiency", "--free", "d0.seq_read_mb_s", "--json", "--quiet", "--out"])
        .arg(&fitted_parts)
        .output()
        .unwrap();
    let r = json(&o);
    for p in r["points"].as_array().unwrap() {
        eprintln!("  {}: measured {:.2} MB/s, fitted model {:.2}", p["workload"], p["observed"], p["after"]);
    }
    eprintln!("  hba.dma_read_efficiency fitted {:.4}", fitted(&r, "hba", "dma_read_efficiency"));
    // A drive's cap is its media rate (the fitted figure itself).
    within("drive cap from d0.seq_read_mb_s (MB/s)", fitted(&r, "d0", "seq_read_mb_s"), drive_cap, 0.05);
    // The uplink's cap is the fitted model's rate with both drives active, where the uplink
    // binds: simulated with the part file the fit wrote, loaded over the rig's parts.
    let o = iopath()
        .arg("--parts")
        .arg(&rig_parts)
        .arg("--parts")
        .arg(&fitted_parts)
        .arg("simulate")
        .arg(&topo)
        .args(["--rw", "read", "--bs", "256k", "--iodepth", "4", "--active", "2", "--runtime", "2s", "--json"])
        .output()
        .unwrap();
    let rep = json(&o);
    assert_eq!(rep["bottleneck"]["id"], "hba.uplink.up", "the uplink binds with both drives in the fitted model");
    within(
        "uplink cap from the fitted model, 2 drives (MB/s)",
        rep["total"]["mb_s"].as_f64().unwrap(),
        uplink_cap,
        0.05,
    );
    let o = iopath()
        .arg("--parts")
        .arg(&rig_parts)
        .arg("--parts")
        .arg(&fitted_parts)
        .arg("simulate")
        .arg(&topo)
        .args(["--rw", "read", "--bs", "256k", "--iodepth", "4", "--active", "1", "--runtime", "2s", "--json"])
        .output()
        .unwrap();
    within("one drive in the fitted model (MB/s)", json(&o)["total"]["mb_s"].as_f64().unwrap(), drive_cap, 0.05);
}

#[test]
fn fio_json_is_ingested_with_fios_own_numbers() {
    let cfg = root().join("configs/asm1166-6ssd.toml");
    let t = Topology::load(&cfg, &Catalog::builtin()).unwrap();
    let map = LoadOptions { map: calibrate::parse_map(&["a=D".to_string()]).unwrap() };
    // Old field names (bw in KiB/s, clat/lat in us), text before the JSON, duplicate keys; an
    // asynchronous engine (libaio), since under fio's default psync iodepth has no effect.
    let old = data("fio-2.x-dupkeys.json");
    let pts = calibrate::load(&old, &t, &map).unwrap();
    assert_eq!(pts.len(), 1);
    assert!((pts[0].observed - 102400.0 * 1024.0 / 1e6).abs() < 1e-9, "{}", pts[0].observed);
    assert_eq!(pts[0].spec.iodepth, Some(8), "the last of duplicate keys wins");
    // fio's 128k under its default kb_base=1024: 128 x 1024 bytes, the last of the two bs keys.
    assert_eq!(pts[0].spec.bs.as_deref(), Some("131072"));
    assert_eq!(pts[0].spec.drives.as_deref(), Some(&["D".to_string()][..]));
    // Without a mapping, an unknown filename is a clear usage error.
    let o = iopath().arg("compare").arg(&cfg).arg(&old).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--map a=DRIVE"), "{}", String::from_utf8_lossy(&o.stderr));

    // Real fio, when installed.
    if Command::new("fio").arg("--version").output().is_err() {
        rig::skip("the real fio run: fio is not installed (Debian package fio)");
        return;
    }
    let d = scratch("fio");
    let file = d.path().join("fio.img");
    let out = d.path().join("fio.json");
    let o = Command::new("fio")
        .args(["--name=job0", "--rw=read", "--bs=128k", "--size=16m", "--direct=1", "--ioengine=psync"])
        .args(["--runtime=1", "--time_based", "--output-format=json"])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--output={}", out.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "fio failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let start = text.find('{').unwrap();
    let raw: Value = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>().next().unwrap().unwrap();
    let job = &raw["jobs"][0];
    let (bw_bytes, iops) = (job["read"]["bw_bytes"].as_f64().unwrap(), job["read"]["iops"].as_f64().unwrap());
    let pts =
        calibrate::load(&out, &t, &LoadOptions { map: calibrate::parse_map(&["job0=D".into()]).unwrap() }).unwrap();
    eprintln!("fio: bw_bytes {bw_bytes}, iops {iops:.1}; ingested {:.3} MB/s", pts[0].observed);
    assert!((pts[0].observed - bw_bytes / 1e6).abs() < 1e-6);
    assert_eq!(pts[0].spec.bs.as_deref(), Some("131072"));
    assert_eq!(pts[0].spec.rw.as_deref(), Some("read"));
    let rep = iopath_validate::fio::to_report(
        &iopath_validate::fio::parse_fio_json("fio.json", &text).unwrap(),
        &Default::default(),
        "t",
    );
    assert!((rep.total.iops - iops).abs() < 1e-9 && (rep.total.read_mb_s - bw_bytes / 1e6).abs() < 1e-9);
    // The filename maps the job to a drive when the topology names it as the drive's dev.
    let topo_text = format!(
        "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n\
         [[drive]]\nid = \"D\"\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\ndev = \"{}\"\n",
        file.display()
    );
    let topo_file = d.path().join("one.toml");
    std::fs::write(&topo_file, topo_text).unwrap();
    let o = iopath().arg("compare").arg(&topo_file).arg(&out).args(["--json"]).output().unwrap();
    let c = json(&o);
    assert!((c["points"][0]["measured"].as_f64().unwrap() - bw_bytes / 1e6).abs() < 1e-6, "{c}");
    assert!(c["points"][0]["predicted"].as_f64().unwrap() > 0.0);
    // And with --map on the built-in topology, with a plot.
    let plots = d.path().join("plots");
    let o = iopath()
        .arg("compare")
        .arg(&cfg)
        .arg(&out)
        .args(["--map", "job0=D", "--quiet", "--out"])
        .arg(&plots)
        .output()
        .unwrap();
    let t = ok(&o);
    assert!(t.contains("mean absolute error") && t.contains("worst:"), "{t}");
    assert!(plots.join("compare.svg").exists() && plots.join("compare.png").exists());
}

#[test]
fn a_bad_free_is_a_usage_error_with_a_clear_message() {
    let cfg = root().join("configs/marvell9172-pm-5hdd.toml");
    let pts = data("marvell9172-fbs-5drives.csv");
    for (free, want) in [
        ("pmx.upstream_efficiency", "no node or drive has id \"pmx\""),
        ("pm.upstream_efficency", "is not a figure of a port_multiplier"),
        ("pm.upstream_efficiency=0.9..0.5", "LO must be below HI"),
        ("pm.upstream_efficiency=0.5..0.5", "LO must be below HI"),
        ("pm.upstream_efficiency=0.5..2", "outside the figure's range"),
        ("pm.fbs", "only numbers can be fitted"),
        ("upstream_efficiency", "is not NODE.PARAM"),
    ] {
        let o = iopath().arg("fit").arg(&cfg).arg(&pts).args(["--free", free]).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--free {free}: {e}");
        assert!(e.contains(want) && e.starts_with("error:"), "--free {free}: {e:?} lacks {want:?}");
        assert!(!e.contains("panicked"), "{e}");
    }
    // Other bad input: a missing file, a CSV with an unknown column, an unknown drive.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "rw,bs,colour,mb_s\nread,1m,red,5\n").unwrap();
    let nod = dir.path().join("nodrive.csv");
    std::fs::write(&nod, "rw,bs,drives,mb_s\nread,1m,zz,5\n").unwrap();
    for (f, want) in [(dir.path().join("missing.json"), "cannot read"), (bad, "unknown column"), (nod, "drive \"zz\"")]
    {
        let o = iopath().arg("fit").arg(&cfg).arg(&f).args(["--free", "pm.switch_cost_us"]).output().unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    }
}

/// `fit --free host.cpu_per_io_us` takes the host's CPU time per I/O from measured runs'
/// CPU time, not from a simulation: expected = the report's cost.cpu_s / cost.ios, in us.
/// A report with CPU time (a simulated report given the CPU seconds a measured run of it
/// would carry: 0.25 s over its I/Os) goes in; the part file's host part carries the value
/// with basis fit and a source naming the file, and the catalog loads it.
#[test]
fn the_host_cpu_cost_is_fitted_from_measured_cpu_time() {
    let dir = scratch("cpu-fit");
    let topo = root().join("configs/z87-extreme6.toml");
    let o = iopath()
        .arg("simulate")
        .arg(&topo)
        .args([
            "--drives",
            "intel_ssd",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--runtime",
            "0.1s",
            "--json",
        ])
        .output()
        .unwrap();
    let mut rep = json(&o);
    let ios = rep["cost"]["ios"].as_u64().unwrap();
    assert!(ios > 1000, "{ios} I/Os");
    rep["cost"]["cpu_s"] = 0.25.into();
    let file = dir.path().join("measured.json");
    std::fs::write(&file, rep.to_string()).unwrap();
    let parts = dir.path().join("cpu.toml");
    let o = iopath()
        .arg("fit")
        .arg(&topo)
        .arg(&file)
        .args(["--free", "host.cpu_per_io_us", "--json", "--quiet", "--out"])
        .arg(&parts)
        .output()
        .unwrap();
    let r = json(&o);
    let want = 0.25 / ios as f64 * 1e6;
    within("host.cpu_per_io_us (CPU s / I/Os)", fitted(&r, "host", "cpu_per_io_us"), want, 1e-3);
    let text = std::fs::read_to_string(&parts).unwrap();
    assert!(text.contains("id = \"intel-lga1150\"") && text.contains("measured.json"), "{text}");
    let mut cat = Catalog::builtin();
    cat.overlay("cpu.toml", &text).unwrap();
    let f = &cat.get("intel-lga1150").unwrap().figures["cpu_per_io_us"];
    assert_eq!(f.basis, "fit");
    // Reports without CPU time (a simulated one as written) are refused, exit 2.
    let sim = dir.path().join("simulated.json");
    std::fs::write(
        &sim,
        ok(&iopath()
            .arg("simulate")
            .arg(&topo)
            .args(["--drives", "intel_ssd", "--runtime", "0.1s", "--json"])
            .output()
            .unwrap()),
    )
    .unwrap();
    let o =
        iopath().arg("fit").arg(&topo).arg(&sim).args(["--free", "host.cpu_per_io_us", "--quiet"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--free host.cpu_per_io_us") && err.contains("cost.cpu_s"), "{err}");
}

/// The same on a real measured run (root: a loop device; skipped with a reason otherwise):
/// `iopath measure` records the process's CPU seconds, and the fit is their ratio to the
/// I/Os completed, a few us per 4 KiB read on any current CPU.
#[test]
fn the_host_cpu_cost_of_a_real_measured_run() {
    if let Err(why) = rig::available() {
        rig::skip(&why);
        return;
    }
    let mut rig = Rig::new("cpufit").unwrap();
    let dir = rig.dir.clone();
    let devs: Vec<PathBuf> = (0..2)
        .map(|i| {
            let f = rig.file(&dir, &format!("d{i}.img"), 32 << 20).unwrap();
            rig.loop_dev(&f).unwrap()
        })
        .collect();
    let mut c = iopath();
    c.arg("measure");
    for d in &devs {
        c.arg("--target").arg(d);
    }
    c.args(["--rw", "randread", "--bs", "4k", "--iodepth", "8", "--runtime", "1s", "--json", "--quiet"]);
    let text = ok(&c.output().unwrap());
    let rep: Value = serde_json::from_str(&text).unwrap();
    let (cpu_s, ios) = (rep["cost"]["cpu_s"].as_f64().unwrap(), rep["cost"]["ios"].as_u64().unwrap());
    assert!(cpu_s > 0.0 && ios > 0, "cpu_s {cpu_s}, ios {ios}");
    let file = dir.join("measured.json");
    std::fs::write(&file, &text).unwrap();
    let o = iopath()
        .arg("--parts")
        .arg(data("loop-uplink-rig-parts.toml"))
        .arg("fit")
        .arg(data("loop-uplink-rig.toml"))
        .arg(&file)
        .args(["--free", "host.cpu_per_io_us", "--json", "--quiet"])
        .output()
        .unwrap();
    let got = fitted(&json(&o), "host", "cpu_per_io_us");
    eprintln!("measured {cpu_s:.4} CPU s over {ios} I/Os: {got:.3} us per I/O");
    within("host.cpu_per_io_us of a measured run", got, cpu_s / ios as f64 * 1e6, 1e-3);
    assert!((0.1..1000.0).contains(&got), "{got} us per I/O");
}
