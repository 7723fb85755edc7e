//! The fit behind the SAS3 expander's figures in model/catalog/fits.toml: a grid search over
//! (hop_latency_us, stp_write_turnaround_us, stp_write_efficiency), each point scored by
//! simulating source 004's relative changes (expander drive vs onboard drive) and summing
//! squared errors in percentage points.
//! Run: cargo run --release -p iopath-sim --example fit_expander
use iopath_model::report::Report;
use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};
use rayon::prelude::*;

fn run(t: &Topology, drive: &str, rw: &str, bs: &str, qd: u32) -> Report {
    let w = WorkloadSpec {
        rw: Some(rw.into()),
        bs: Some(bs.into()),
        iodepth: Some(qd),
        drives: Some(vec![drive.into()]),
        runtime: Some("0.5s".into()),
        ..Default::default()
    };
    iopath_sim::simulate(t, &w.resolve().unwrap(), &Default::default()).unwrap()
}

/// The cases of source 004 the tests check: (name, rw, bs, iodepth, metric, published change %).
type Case = (&'static str, &'static str, &'static str, u32, fn(&Report) -> f64, f64);
const CASES: [Case; 8] = [
    ("write 1m qd32 MB/s", "write", "1m", 32, |r| r.total.mb_s, -15.3),
    ("write 4k qd32 MB/s", "write", "4k", 32, |r| r.total.mb_s, -18.6),
    ("randwrite 4k qd32 IOPS", "randwrite", "4k", 32, |r| r.total.iops, -15.6),
    ("randread 4k qd1 latency", "randread", "4k", 1, |r| r.total.lat_us.mean, 4.0),
    ("randwrite 4k qd1 latency", "randwrite", "4k", 1, |r| r.total.lat_us.mean, 12.0),
    ("read 1m qd32 MB/s", "read", "1m", 32, |r| r.total.mb_s, 0.0),
    ("randread 4k qd32 IOPS", "randread", "4k", 32, |r| r.total.iops, 0.0),
    ("randrw 50/50 4k qd32 IOPS", "randrw", "4k", 32, |r| r.total.iops, 0.0),
];

/// A scored grid point: error, (hop latency, turnaround, efficiency), the predicted points.
type Scored = (f64, [f64; 3], Vec<(&'static str, f64, f64)>);

fn main() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/c622-vs-9300-expander.toml");
    let base = Topology::load(&path, &Catalog::builtin()).unwrap();
    // The onboard drive does not depend on the expander's figures: simulate it once.
    let onboard: Vec<f64> = CASES.iter().map(|&(_, rw, bs, qd, f, _)| f(&run(&base, "onboard", rw, bs, qd))).collect();
    let mut grid = Vec::new();
    for h in 0..=15 {
        for tt in 0..=6 {
            for e in 78..=100 {
                grid.push([h as f64 * 0.1, tt as f64 * 0.5, e as f64 * 0.01]);
            }
        }
    }
    let mut res: Vec<Scored> = grid
        .par_iter()
        .map(|&g| {
            let o: Vec<ParamOverride> = [
                format!("exp.hop_latency_us={}", g[0]),
                format!("exp.stp_write_turnaround_us={}", g[1]),
                format!("exp.stp_write_efficiency={}", g[2]),
            ]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
            let t = base.with_overrides(&o).unwrap();
            let p: Vec<_> = CASES
                .iter()
                .zip(&onboard)
                .map(|(&(name, rw, bs, qd, f, published), on)| {
                    (name, (f(&run(&t, "expander", rw, bs, qd)) / on - 1.0) * 100.0, published)
                })
                .collect();
            (p.iter().map(|(_, a, b)| (a - b).powi(2)).sum::<f64>(), g, p)
        })
        .collect();
    res.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
    for r in res.iter().take(5) {
        println!(
            "score {:.2} hop_latency_us {:.1} stp_write_turnaround_us {:.1} stp_write_efficiency {:.2}",
            r.0, r.1[0], r.1[1], r.1[2]
        );
        for (n, a, b) in &r.2 {
            println!("    {n:<26} {a:+6.1}%  published {b:+6.1}%");
        }
    }
}
