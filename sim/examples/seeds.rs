//! Prints predicted against published for the seed measurements (a development aid; the
//! assertions live in tests/fidelity.rs).
use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};

fn run(cfg: &str, sets: &[&str], spec: WorkloadSpec, seeds: u32) -> iopath_model::report::Report {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs").join(cfg);
    let mut t = Topology::load(&path, &Catalog::builtin()).unwrap();
    if !sets.is_empty() {
        let o: Vec<ParamOverride> = sets.iter().map(|s| s.parse().unwrap()).collect();
        t = t.with_overrides(&o).unwrap();
    }
    let w = spec.resolve().unwrap();
    iopath_sim::replicate(&t, &w, seeds, &Default::default()).unwrap()
}

fn ws(rw: &str, bs: &str, qd: u32) -> WorkloadSpec {
    WorkloadSpec { rw: Some(rw.into()), bs: Some(bs.into()), iodepth: Some(qd), ..Default::default() }
}

fn main() {
    let which: String = std::env::args().nth(1).unwrap_or_default();
    let p = |name: &str, pred: f64, publ: f64| {
        println!("{name:<44} pred {pred:>9.1} pub {publ:>9.1} err {:>+6.1}%", (pred / publ - 1.0) * 100.0)
    };
    if which.is_empty() || which == "asm" {
        for (n, publ) in [(2, 1100.0), (3, 1660.0), (4, 1770.0), (5, 1780.0), (6, 1790.0)] {
            let r = run(
                "asm1166-6ssd.toml",
                &[],
                WorkloadSpec { active: Some(n), runtime: Some("1s".into()), ..ws("read", "1m", 8) },
                1,
            );
            p(&format!("asm1166 read active={n} [{}]", r.bottleneck.id), r.total.mb_s, publ);
        }
        let r = run(
            "asm1166-6ssd.toml",
            &[],
            WorkloadSpec {
                copy: Some(vec!["D:E".into(), "F:G".into(), "H:I".into()]),
                runtime: Some("1s".into()),
                ..ws("read", "1m", 8)
            },
            1,
        );
        p(&format!("asm1166 copy [{}]", r.bottleneck.id), r.total.mb_s, 3000.0);
    }
    if which.is_empty() || which == "z87" {
        for (d, rd, wr) in [("intel_ssd", 516.6, 527.4), ("asm_ssd", 402.2, 398.4), ("lsi_ssd", 546.9, 521.8)] {
            let r = run(
                "z87-extreme6.toml",
                &[],
                WorkloadSpec { drives: Some(vec![d.into()]), runtime: Some("1s".into()), ..ws("read", "1m", 4) },
                1,
            );
            p(&format!("z87 {d} read [{}]", r.bottleneck.id), r.total.mb_s, rd);
            let r = run(
                "z87-extreme6.toml",
                &[],
                WorkloadSpec { drives: Some(vec![d.into()]), runtime: Some("1s".into()), ..ws("write", "1m", 4) },
                1,
            );
            p(&format!("z87 {d} write [{}]", r.bottleneck.id), r.total.mb_s, wr);
        }
        for (d, rd, wr) in [("intel_hdd", 140.3, 136.1), ("asm_hdd", 140.3, 136.0), ("lsi_hdd", 140.3, 136.6)] {
            if which.is_empty() {
                continue;
            }
            let r =
                run("z87-extreme6.toml", &[], WorkloadSpec { drives: Some(vec![d.into()]), ..ws("read", "1m", 4) }, 1);
            p(&format!("z87 {d} read (whole surface) ev={}", r.cost.events), r.total.mb_s, rd);
            let r =
                run("z87-extreme6.toml", &[], WorkloadSpec { drives: Some(vec![d.into()]), ..ws("write", "1m", 4) }, 1);
            p(&format!("z87 {d} write"), r.total.mb_s, wr);
        }
        for rw in ["read", "write"] {
            let a = run(
                "z87-deluxe-asm106se.toml",
                &[],
                WorkloadSpec { drives: Some(vec!["asmedia".into()]), runtime: Some("1s".into()), ..ws(rw, "128k", 32) },
                1,
            );
            let i = run(
                "z87-deluxe-asm106se.toml",
                &[],
                WorkloadSpec { drives: Some(vec!["intel".into()]), runtime: Some("1s".into()), ..ws(rw, "128k", 32) },
                1,
            );
            println!(
                "asm106se/intel {rw}: {:.3} ({:.1}/{:.1}) target 0.70-0.78",
                a.total.mb_s / i.total.mb_s,
                a.total.mb_s,
                i.total.mb_s
            );
        }
    }
    if which.is_empty() || which == "pm" {
        let mib = 1.048576;
        for (bs, n, publ) in [
            ("32k", 1, 77.96),
            ("32k", 3, 195.94),
            ("32k", 5, 223.0),
            ("128k", 1, 78.49),
            ("128k", 3, 234.19),
            ("128k", 5, 249.0),
        ] {
            let r = run(
                "marvell9172-pm-5hdd.toml",
                &[],
                WorkloadSpec { active: Some(n), runtime: Some("5s".into()), ..ws("read", bs, 1) },
                1,
            );
            p(&format!("pm fbs read {bs} active={n} [{}]", r.bottleneck.id), r.total.mb_s / mib, publ);
        }
        for (bs, publ) in [("32k", 101.0), ("128k", 115.0)] {
            let r = run(
                "marvell9172-pm-5hdd.toml",
                &["pm.fbs=false"],
                WorkloadSpec { active: Some(5), runtime: Some("5s".into()), ..ws("read", bs, 1) },
                1,
            );
            p(&format!("pm cbs read {bs} active=5"), r.total.mb_s / mib, publ);
        }
        for (fbs, region, publ) in [("true", "10%", 419.0), ("true", "1%", 509.0), ("false", "10%", 100.0)] {
            let r = run(
                "marvell9172-pm-5hdd.toml",
                &[&format!("pm.fbs={fbs}")],
                WorkloadSpec {
                    active: Some(5),
                    numjobs: Some(2),
                    region: Some(region.into()),
                    runtime: Some("20s".into()),
                    ..ws("randread", "512", 1)
                },
                4,
            );
            let sp = r.spread.clone().unwrap();
            p(&format!("pm randread fbs={fbs} {region} [{:.0}-{:.0}]", sp.iops_min, sp.iops_max), r.total.iops, publ);
        }
    }
    if which.is_empty() || which == "exp" {
        let rel = |rw: &str, bs: &str, qd: u32, f: &dyn Fn(&iopath_model::report::Report) -> f64| {
            let o = run(
                "c622-vs-9300-expander.toml",
                &[],
                WorkloadSpec { drives: Some(vec!["onboard".into()]), runtime: Some("1s".into()), ..ws(rw, bs, qd) },
                1,
            );
            let e = run(
                "c622-vs-9300-expander.toml",
                &[],
                WorkloadSpec { drives: Some(vec!["expander".into()]), runtime: Some("1s".into()), ..ws(rw, bs, qd) },
                1,
            );
            (f(&e) / f(&o) - 1.0) * 100.0
        };
        let mbs = |r: &iopath_model::report::Report| r.total.mb_s;
        let iops = |r: &iopath_model::report::Report| r.total.iops;
        let lat = |r: &iopath_model::report::Report| r.total.lat_us.mean;
        println!("exp write 1m qd32   {:+.1}% pub -15.3", rel("write", "1m", 32, &mbs));
        println!("exp write 4k qd32   {:+.1}% pub -18.6", rel("write", "4k", 32, &mbs));
        println!("exp randwrite iops  {:+.1}% pub -15.6", rel("randwrite", "4k", 32, &iops));
        println!("exp randread lat    {:+.1}% pub +4", rel("randread", "4k", 1, &lat));
        println!("exp randwrite lat   {:+.1}% pub +12", rel("randwrite", "4k", 1, &lat));
        println!("exp read 1m qd32    {:+.1}% pub 0 (3%)", rel("read", "1m", 32, &mbs));
    }
}
