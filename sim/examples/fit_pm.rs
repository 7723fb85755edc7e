//! The fit behind source 003's figures in model/catalog/fits.toml: a grid search over the
//! free figures, each point scored by simulating the published workloads (squared log
//! errors). Run: cargo run --release -p iopath-sim --example fit_pm -- [random|fbs|cbs]
//!
//! The simulated mechanism (sim/src/run/pm.rs): under FBS the switch cost is paid per
//! command only while another drive of the multiplier moves data; under CBS the drive with
//! commands outstanding keeps its queue and `cbs_handover_us` is paid when the link passes
//! to another drive (libata's `sata_pmp_qc_defer_cmd_switch`). Fit `fbs` first, then `cbs`
//! (it runs with the FBS figures of the catalog), then `random`.
use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};
use rayon::prelude::*;

fn topo(sets: &[String]) -> Topology {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/marvell9172-pm-5hdd.toml");
    let t = Topology::load(&path, &Catalog::builtin()).unwrap();
    let o: Vec<ParamOverride> = sets.iter().map(|s| s.parse().unwrap()).collect();
    t.with_overrides(&o).unwrap()
}

fn seq(t: &Topology, bs: &str, n: usize) -> f64 {
    let w = WorkloadSpec {
        rw: Some("read".into()),
        bs: Some(bs.into()),
        iodepth: Some(1),
        active: Some(n),
        runtime: Some("4s".into()),
        ..Default::default()
    };
    iopath_sim::simulate(t, &w.resolve().unwrap(), &Default::default()).unwrap().total.mb_s / 1.048576
}

fn rand(t: &Topology, region: &str) -> f64 {
    let w = WorkloadSpec {
        rw: Some("randread".into()),
        bs: Some("512".into()),
        iodepth: Some(1),
        numjobs: Some(2),
        active: Some(5),
        region: Some(region.into()),
        runtime: Some("20s".into()),
        ..Default::default()
    };
    iopath_sim::replicate(t, &w.resolve().unwrap(), 4, &Default::default()).unwrap().total.iops
}

fn err(p: f64, q: f64) -> f64 {
    (p / q).ln().powi(2)
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let extra: Vec<String> = std::env::args().skip(2).collect();
    match what.as_str() {
        "random" => {
            let mut grid = Vec::new();
            for s in (40..=200).step_by(5) {
                for c in (0..=4500).step_by(250) {
                    grid.push((s as f64 / 10.0, c as f64));
                }
            }
            let mut res: Vec<(f64, f64, f64, f64, f64, f64)> = grid
                .par_iter()
                .map(|&(s, c)| {
                    let mut sets = vec![format!("d0.avg_seek_ms={s}"), format!("d0.cmd_overhead_us={c}")];
                    for d in 1..5 {
                        sets.push(format!("d{d}.avg_seek_ms={s}"));
                        sets.push(format!("d{d}.cmd_overhead_us={c}"));
                    }
                    sets.extend(extra.iter().cloned());
                    let t = topo(&sets);
                    let a = rand(&t, "10%");
                    let b = rand(&t, "1%");
                    sets.push("pm.fbs=false".to_string());
                    let cbs = rand(&topo(&sets), "10%");
                    (err(a, 419.0) + err(b, 509.0) + err(cbs, 100.0), s, c, a, b, cbs)
                })
                .collect();
            res.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
            for r in res.iter().take(8) {
                println!(
                    "score {:.5} avg_seek_ms {} cmd_overhead_us {} -> FBS 10%: {:.1} (419)  FBS 1%: {:.1} (509)  CBS 10%: {:.1} (100)",
                    r.0, r.1, r.2, r.3, r.4, r.5
                );
            }
        }
        "fbs" => {
            let mut grid = Vec::new();
            for e in (80..=100).step_by(2) {
                for c in (0..=40).step_by(4) {
                    for h in (0..=300).step_by(25) {
                        grid.push((e as f64 / 100.0, c as f64, h as f64));
                    }
                }
            }
            let pubs = [("32k", 3, 195.94), ("32k", 5, 223.0), ("128k", 3, 234.19), ("128k", 5, 249.0)];
            let mut res: Vec<(f64, f64, f64, f64, Vec<f64>)> = grid
                .par_iter()
                .map(|&(e, c, h)| {
                    let mut sets = vec![
                        // One FIS relay, one efficiency: both sides of the PM move together.
                        format!("pm.upstream_efficiency={e}"),
                        format!("pm.downstream_efficiency={e}"),
                        format!("pm.switch_cost_us={c}"),
                        format!("host.io_overhead_us={h}"),
                    ];
                    sets.extend(extra.iter().cloned());
                    let t = topo(&sets);
                    let preds: Vec<f64> = pubs.iter().map(|(bs, n, _)| seq(&t, bs, *n)).collect();
                    let score = preds.iter().zip(&pubs).map(|(p, (_, _, q))| err(*p, *q)).sum();
                    (score, e, c, h, preds)
                })
                .collect();
            res.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
            for r in res.iter().take(8) {
                println!(
                    "score {:.5} eff {} switch_us {} host_us {} -> {:?} (195.9, 223, 234.2, 249)",
                    r.0,
                    r.1,
                    r.2,
                    r.3,
                    r.4.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>()
                );
            }
        }
        "cbs" => {
            let mut res: Vec<(f64, f64, f64, f64)> = (0..=300)
                .step_by(10)
                .collect::<Vec<_>>()
                .par_iter()
                .map(|&h| {
                    let mut sets = vec!["pm.fbs=false".to_string(), format!("pm.cbs_handover_us={h}")];
                    sets.extend(extra.iter().cloned());
                    let t = topo(&sets);
                    let a = seq(&t, "32k", 5);
                    let b = seq(&t, "128k", 5);
                    (err(a, 101.0) + err(b, 115.0), h as f64, a, b)
                })
                .collect();
            res.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
            for r in res.iter().take(5) {
                println!("score {:.5} cbs_handover_us {} -> 32k {:.1} (101)  128k {:.1} (115)", r.0, r.1, r.2, r.3);
            }
        }
        _ => eprintln!("usage: fit_pm random|fbs|cbs [NODE.PARAM=VALUE ...]"),
    }
}
