//! Fidelity: every published data point in tests/data/seed-measurements.toml, predicted
//! through configs/ and the catalog only, within the tolerances of the project's issue #3.
//!
//! Each test prints a table (run with `--nocapture` to see it): published, predicted, error.
//! No figure in this file tunes the model: the workloads are the published ones, the
//! expected values are read from the data file.

use iopath_model::report::Report;
use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};
use std::path::Path;

fn seeds() -> toml::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/seed-measurements.toml");
    toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn case(id: &str) -> toml::Value {
    let all = seeds();
    all["case"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("no case {id}"))
        .clone()
}

fn num(v: &toml::Value) -> f64 {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap()
}

fn topo(cfg: &str, sets: &[&str]) -> Topology {
    let t =
        Topology::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(cfg), &Catalog::builtin()).unwrap();
    let o: Vec<ParamOverride> = sets.iter().map(|s| s.parse().unwrap()).collect();
    t.with_overrides(&o).unwrap()
}

fn sim(t: &Topology, spec: WorkloadSpec, seeds: u32) -> Report {
    iopath_sim::replicate(t, &spec.resolve().unwrap(), seeds, &Default::default()).unwrap()
}

fn ws(rw: &str, bs: &str, qd: u32) -> WorkloadSpec {
    WorkloadSpec { rw: Some(rw.into()), bs: Some(bs.into()), iodepth: Some(qd), ..Default::default() }
}

/// Collects checks and fails once, listing every point out of tolerance.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    fn rel(&mut self, name: &str, predicted: f64, published: f64, tol: f64) {
        let err = predicted / published - 1.0;
        let ok = err.abs() <= tol;
        println!(
            "{name:<52} published {published:>9.2} predicted {predicted:>9.2} error {:>+6.1}% (tolerance {:.0}%){}",
            err * 100.0,
            tol * 100.0,
            if ok { "" } else { "  FAIL" }
        );
        if !ok {
            self.0.push(format!(
                "{name}: predicted {predicted:.2}, published {published:.2}, error {:+.1}%",
                err * 100.0
            ));
        }
    }
    fn pp(&mut self, name: &str, predicted_pct: f64, published_pct: f64, tol_pp: f64) {
        let ok = (predicted_pct - published_pct).abs() <= tol_pp;
        println!(
            "{name:<52} published {published_pct:>+8.1}% predicted {predicted_pct:>+8.1}% (tolerance {tol_pp} pp){}",
            if ok { "" } else { "  FAIL" }
        );
        if !ok {
            self.0.push(format!("{name}: predicted {predicted_pct:+.1}%, published {published_pct:+.1}%"));
        }
    }
    fn range(&mut self, name: &str, v: f64, lo: f64, hi: f64) {
        let ok = (lo..=hi).contains(&v);
        println!("{name:<52} predicted {v:.3} (published range {lo}..{hi}){}", if ok { "" } else { "  FAIL" });
        if !ok {
            self.0.push(format!("{name}: {v:.3} outside {lo}..{hi}"));
        }
    }
    fn done(self) {
        assert!(self.0.is_empty(), "points out of tolerance:\n{}", self.0.join("\n"));
    }
}

// --- Source 000: ASM1166 (PCIe 3.0 x2) with six SATA SSDs ------------------------------

#[test]
fn asm1166_sequential_read_on_2_to_6_drives() {
    let t = topo("asm1166-6ssd.toml", &[]);
    let mut c = Checks::default();
    for p in case("asm1166-seqread")["points"].as_array().unwrap() {
        let n = p["drives"].as_integer().unwrap() as usize;
        let r = sim(&t, WorkloadSpec { active: Some(n), runtime: Some("2s".into()), ..ws("read", "1m", 8) }, 1);
        c.rel(&format!("asm1166 read, {n} drives [MB/s]"), r.total.mb_s, num(&p["total"]), 0.05);
        if let Some(pd) = p.get("per_drive") {
            c.rel(&format!("asm1166 read, {n} drives, per drive [MB/s]"), r.total.mb_s / n as f64, num(pd), 0.05);
        }
        if n >= 4 {
            assert_eq!(r.bottleneck.id, "hba.uplink.up", "from 4 drives on the PCIe 3.0 x2 uplink binds");
        }
    }
    c.done();
}

#[test]
fn asm1166_three_concurrent_copies() {
    let t = topo("asm1166-6ssd.toml", &[]);
    let p = &case("asm1166-copy")["points"][0];
    let r = sim(
        &t,
        WorkloadSpec {
            copy: Some(vec!["D:E".into(), "F:G".into(), "H:I".into()]),
            runtime: Some("2s".into()),
            ..ws("read", "1m", 8)
        },
        1,
    );
    let mut c = Checks::default();
    c.rel(
        "asm1166 copies D->E, F->G, H->I, read + write [MB/s]",
        r.total.read_mb_s + r.total.write_mb_s,
        num(&p["total"]),
        0.07,
    );
    // Full duplex: the copies move more than one direction of the uplink can carry.
    let up = r.links.iter().find(|l| l.id == "hba.uplink").unwrap();
    assert!(up.util_up > 0.0 && up.util_down > 0.0);
    c.done();
}

// --- Source 002: Z87 Extreme6, three controllers, SSD and HDD ------------------------------

/// Source 002's points of one drive kind: (config, drive, published read, published write).
/// The passthrough point runs on its own topology: the LSI card under the ESXi guest's host.
fn z87_points(kind: &str) -> Vec<(&'static str, String, f64, f64)> {
    let prefix = match kind {
        "ssd" => "z87-asm1062-lsi9211-ssd",
        _ => "z87-asm1062-lsi9211-hdd",
    };
    case(prefix)["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let (file, id) = z87_controller(p["controller"].as_str().unwrap());
            (file, format!("{id}_{kind}"), num(&p["read"]), num(&p["write"]))
        })
        .collect()
}

/// The config and drive prefix of one of source 002's controllers.
fn z87_controller(name: &str) -> (&'static str, &'static str) {
    match name {
        "Intel Z87" => ("z87-extreme6.toml", "intel"),
        "ASM1062" => ("z87-extreme6.toml", "asm"),
        "LSI 9211-8i" => ("z87-extreme6.toml", "lsi"),
        "LSI 9211-8i, passed through to a VM (ESXi 5.5)" => ("z87-extreme6-esxi-passthrough.toml", "lsi"),
        other => panic!("source 002 controller {other:?} has no topology"),
    }
}

fn z87_label(file: &str, drive: &str) -> String {
    if file.contains("passthrough") { format!("{drive} (VM passthrough)") } else { drive.to_string() }
}

#[test]
fn z87_extreme6_ssd_on_each_controller() {
    let mut c = Checks::default();
    for (file, drive, read, write) in z87_points("ssd") {
        let t = topo(file, &[]);
        for (rw, published) in [("read", read), ("write", write)] {
            let r = sim(
                &t,
                WorkloadSpec { drives: Some(vec![drive.clone()]), runtime: Some("1s".into()), ..ws(rw, "1m", 4) },
                1,
            );
            c.rel(&format!("z87 {} {rw} [MB/s]", z87_label(file, &drive)), r.total.mb_s, published, 0.05);
        }
    }
    c.done();
}

#[test]
fn z87_extreme6_hdd_whole_surface_on_each_controller() {
    // No runtime and --region 100%: a sequential job reads (writes) its whole region once,
    // as the published benchmark averaged over the whole surface.
    let mut c = Checks::default();
    for (file, drive, read, write) in z87_points("hdd") {
        let t = topo(file, &[]);
        for (rw, published) in [("read", read), ("write", write)] {
            let spec =
                WorkloadSpec { drives: Some(vec![drive.clone()]), region: Some("100%".into()), ..ws(rw, "1m", 4) };
            let r = sim(&t, spec, 1);
            c.rel(
                &format!("z87 {} {rw}, whole surface [MB/s]", z87_label(file, &drive)),
                r.total.mb_s,
                published,
                0.03,
            );
        }
    }
    c.done();
}

// --- Source 001: Z87 Deluxe, ASM106SE vs Intel PCH -----------------------------------------

#[test]
fn asm106se_against_intel_ratio() {
    let t = topo("z87-deluxe-asm106se.toml", &[]);
    let p = &case("asm106se-vs-intel")["points"][0];
    // The source reports 25-27% lower; the band around it is 0.70-0.78.
    let (lo, hi) = (num(&p["ratio_low"]) - 0.03, num(&p["ratio_high"]) + 0.03);
    let mut c = Checks::default();
    for rw in ["read", "write"] {
        let run = |d: &str| {
            sim(&t, WorkloadSpec { drives: Some(vec![d.into()]), runtime: Some("1s".into()), ..ws(rw, "128k", 32) }, 1)
                .total
                .mb_s
        };
        c.range(&format!("asm106se / intel, {rw} 128k QD32"), run("asmedia") / run("intel"), lo, hi);
    }
    c.done();
}

// --- Source 003: Marvell 88SE9172 + port multiplier + five HDDs ---------------------------

const MIB: f64 = 1.048576;

#[test]
fn port_multiplier_fbs_sequential_reads() {
    let t = topo("marvell9172-pm-5hdd.toml", &[]);
    let mut c = Checks::default();
    for p in case("marvell9172-pm-fbs-seqread")["points"].as_array().unwrap() {
        let (n, bs) = (p["drives"].as_integer().unwrap() as usize, p["bs_kib"].as_integer().unwrap());
        let r = sim(
            &t,
            WorkloadSpec { active: Some(n), runtime: Some("5s".into()), ..ws("read", &format!("{bs}k"), 1) },
            1,
        );
        c.rel(&format!("pm FBS read {bs} KiB, {n} drives [MiB/s]"), r.total.mb_s / MIB, num(&p["total"]), 0.10);
    }
    c.done();
}

#[test]
fn port_multiplier_cbs_sequential_reads() {
    let t = topo("marvell9172-pm-5hdd.toml", &["pm.fbs=false"]);
    let mut c = Checks::default();
    for p in case("marvell9172-pm-nofbs-seqread")["points"].as_array().unwrap() {
        let bs = p["bs_kib"].as_integer().unwrap();
        let r = sim(
            &t,
            WorkloadSpec { active: Some(5), runtime: Some("5s".into()), ..ws("read", &format!("{bs}k"), 1) },
            1,
        );
        c.rel(&format!("pm CBS read {bs} KiB, 5 drives [MiB/s]"), r.total.mb_s / MIB, num(&p["total"]), 0.15);
        // Command-based switching serves one drive at a time: shares are equal.
        let per: Vec<f64> = r.drives.iter().map(|d| d.read_mb_s).collect();
        let (lo, hi) = (per.iter().copied().fold(f64::INFINITY, f64::min), per.iter().copied().fold(0.0, f64::max));
        assert!(hi / lo < 1.05, "CBS shares should be even: {per:?}");
    }
    c.done();
}

#[test]
fn port_multiplier_random_reads() {
    let mut c = Checks::default();
    for p in case("marvell9172-pm-randread")["points"].as_array().unwrap() {
        let fbs = p["fbs"].as_bool().unwrap();
        let region = num(&p["region"]);
        let t = topo("marvell9172-pm-5hdd.toml", &[if fbs { "pm.fbs=true" } else { "pm.fbs=false" }]);
        let spec = WorkloadSpec {
            active: Some(5),
            numjobs: Some(2),
            region: Some(format!("{}%", region * 100.0)),
            runtime: Some("20s".into()),
            ..ws("randread", "512", 1)
        };
        let r = sim(&t, spec, 4);
        let s = r.spread.clone().unwrap();
        println!("  spread over {} seeds: {:.1}..{:.1} TPS", s.replications, s.iops_min, s.iops_max);
        c.rel(
            &format!("pm randread 512 B, FBS {fbs}, region {:.0}% [TPS]", region * 100.0),
            r.total.iops,
            num(&p["total"]),
            0.15,
        );
    }
    c.done();
}

// --- Source 004: one SSD on onboard C622 vs 9300-8i + SAS3 expander ------------------------

fn expander_change(rw: &str, bs: &str, qd: u32, f: fn(&Report) -> f64) -> f64 {
    let t = topo("c622-vs-9300-expander.toml", &[]);
    let run = |d: &str| {
        f(&sim(&t, WorkloadSpec { drives: Some(vec![d.into()]), runtime: Some("1s".into()), ..ws(rw, bs, qd) }, 1))
    };
    (run("expander") / run("onboard") - 1.0) * 100.0
}

fn published_change(metric: &str, mix: &str, bs: Option<i64>) -> f64 {
    let c = case("expander-relative");
    let p = c["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["metric"].as_str() == Some(metric)
                && p["mix"].as_str() == Some(mix)
                && bs.is_none_or(|b| p["bs_kib"].as_integer() == Some(b))
        })
        .unwrap();
    num(&p["change"]) * 100.0
}

#[test]
fn expander_changes_within_tolerance() {
    let mut c = Checks::default();
    let write_1m = expander_change("write", "1m", 32, |r| r.total.mb_s);
    c.pp("expander write 1m QD32, MB/s change", write_1m, published_change("throughput", "write", Some(1024)), 4.0);
    let write_4k = expander_change("write", "4k", 32, |r| r.total.mb_s);
    c.pp("expander write 4k QD32, MB/s change", write_4k, published_change("throughput", "write", Some(4)), 4.0);
    let randwrite = expander_change("randwrite", "4k", 32, |r| r.total.iops);
    c.pp("expander randwrite 4k QD32, IOPS change", randwrite, published_change("iops", "100% write", None), 4.0);
    c.pp(
        "expander write saturation (randwrite 4k QD32), IOPS change",
        randwrite,
        published_change("write-saturation iops", "100% write", None),
        4.0,
    );
    c.pp(
        "expander randread 4k QD1, mean latency change",
        expander_change("randread", "4k", 1, |r| r.total.lat_us.mean),
        published_change("latency", "100% read", None),
        4.0,
    );
    c.pp(
        "expander randwrite 4k QD1, mean latency change",
        expander_change("randwrite", "4k", 1, |r| r.total.lat_us.mean),
        published_change("latency", "100% write", None),
        4.0,
    );
    let read = expander_change("read", "1m", 32, |r| r.total.mb_s);
    c.pp("expander read 1m QD32, MB/s change", read, 0.0, 3.0);
    c.done();
}

/// The source gives "about the same" IOPS for 100% read and a 50/50 mix (4 KiB random, QD32).
/// The mix is the telling one: writes alone lose about 16%, yet a 50/50 mix, bound by the
/// NAND that reads and writes share, does not; the STP intake must be a separate stage.
#[test]
fn expander_reads_and_mixes_about_unchanged() {
    let mut c = Checks::default();
    c.pp(
        "expander randread 4k QD32, IOPS change (about the same)",
        expander_change("randread", "4k", 32, |r| r.total.iops),
        published_change("iops", "100% read", None),
        4.0,
    );
    c.pp(
        "expander randrw 50/50 4k QD32, IOPS change (about the same)",
        expander_change("randrw", "4k", 32, |r| r.total.iops),
        published_change("iops", "50/50", None),
        4.0,
    );
    c.done();
}

#[test]
fn z87_extreme6_hdd_access_time() {
    // The benchmark's "average access time": random single reads over the whole disk.
    let mut c = Checks::default();
    for p in case("z87-asm1062-lsi9211-hdd")["points"].as_array().unwrap() {
        let (file, id) = z87_controller(p["controller"].as_str().unwrap());
        let id = format!("{id}_hdd");
        let t = topo(file, &[]);
        let r = sim(
            &t,
            WorkloadSpec { drives: Some(vec![id.clone()]), runtime: Some("20s".into()), ..ws("randread", "4k", 1) },
            2,
        );
        c.rel(
            &format!("z87 {} random read access time [ms]", z87_label(file, &id)),
            r.total.lat_us.mean / 1e3,
            num(&p["access_ms"]),
            0.10,
        );
    }
    c.done();
}
