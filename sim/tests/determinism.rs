//! Determinism: the same topology, workload and seed give the same report, byte for byte,
//! however often and on however many threads they run; a different seed gives different
//! numbers where chance plays a part (HDD random I/O).
//!
//! Only `cost.wall_s` may differ between two runs: it is the caller's wall clock.

use iopath_model::{Catalog, Topology, WorkloadSpec};
use iopath_sim::{Axis, Report, SimOptions, Workload, simulate, sweep};

/// Two SSDs and two HDDs on one ASM1166, and a Marvell with a port multiplier and three HDDs:
/// fluid sharing, HDD mechanics and command-based switching all in one topology.
const TOPOLOGY: &str = r#"
name = "determinism"
[host]
part = "amd-am5"

[[node]]
id = "hba"
part = "asm1166"
parent = "host"

[[node]]
id = "mv"
part = "marvell-88se9172"
parent = "host"

[[node]]
id = "pm"
part = "sata2-pm-generic"
parent = "mv"
port = 0
params = { fbs = false }

[[drive]]
id = "ssd"
count = 2
part = "micron-5300pro-3840"
parent = "hba"

[[drive]]
id = "hdd"
count = 2
part = "seagate-ironwolf-8tb"
parent = "hba"
port = 2

[[drive]]
id = "pmd"
count = 3
part = "generic-hdd-sata2"
parent = "pm"
port = 0
"#;

fn topology() -> Topology {
    Topology::parse("determinism.toml", TOPOLOGY, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

fn spec(rw: &str, bs: &str, seed: u64) -> WorkloadSpec {
    WorkloadSpec {
        rw: Some(rw.into()),
        bs: Some(bs.into()),
        iodepth: Some(8),
        rwmixread: Some(70),
        runtime: Some("0.3s".into()),
        seed: Some(seed),
        ..Default::default()
    }
}

fn workload(rw: &str, bs: &str, seed: u64) -> Workload {
    spec(rw, bs, seed).resolve().unwrap_or_else(|e| panic!("{e:?}"))
}

/// The report as JSON text, with the wall clock zeroed.
fn json(mut r: Report) -> String {
    r.cost.wall_s = 0.0;
    serde_json::to_string(&r).expect("a report serializes")
}

/// A wall clock that differs between calls, to show it is the only thing that varies.
fn ticking_clock() -> impl Fn() -> f64 + Sync {
    let t0 = std::time::Instant::now();
    move || t0.elapsed().as_secs_f64()
}

#[test]
fn same_inputs_and_seed_give_identical_json() {
    let t = topology();
    let clock = ticking_clock();
    let opts = SimOptions { wall_clock: Some(&clock), ..Default::default() };
    for rw in ["read", "randread", "randwrite", "randrw", "rw"] {
        let w = workload(rw, "64k", 42);
        let first = json(simulate(&t, &w, &opts).unwrap());
        for _ in 0..3 {
            assert_eq!(json(simulate(&t, &w, &opts).unwrap()), first, "{rw}: a rerun differs");
        }
        // A topology parsed again from the same text is the same input.
        assert_eq!(json(simulate(&topology(), &w, &SimOptions::default()).unwrap()), first, "{rw}: a reparse differs");
    }
}

#[test]
fn a_sweep_is_the_same_on_one_thread_and_on_two() -> Result<(), rayon::ThreadPoolBuildError> {
    let t = topology();
    let axes = [Axis::parse("active", "1..7").unwrap(), Axis::parse("rw", "randread,rw").unwrap()];
    let base = WorkloadSpec { active: None, ..spec("randread", "128k", 9) };
    let run = |threads: usize| -> Result<String, rayon::ThreadPoolBuildError> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
        let mut s = pool.install(|| sweep(&t, &base, &axes, 2, &SimOptions::default(), &|| {}));
        assert_eq!(s.points.len(), 14);
        for p in &mut s.points {
            assert!(p.error.is_none(), "{}={}: {:?}", p.param, p.value, p.error);
            if let Some(r) = &mut p.report {
                r.cost.wall_s = 0.0;
            }
        }
        Ok(serde_json::to_string(&s).expect("a sweep serializes"))
    };
    let one = run(1)?;
    assert_eq!(run(2)?, one, "2 threads differ from 1");
    assert_eq!(run(2)?, one, "a second 2-thread run differs");
    Ok(())
}

#[test]
fn the_seed_matters_for_hdd_random_io() {
    let t = topology();
    let mut w = workload("randread", "4k", 1);
    w.targets = iopath_model::workload::Targets::Drives(vec!["hdd0".into(), "hdd1".into()]);
    let a = simulate(&t, &w, &SimOptions::default()).unwrap();
    w.seed = 2;
    let b = simulate(&t, &w, &SimOptions::default()).unwrap();
    assert!(a.total.iops > 0.0 && b.total.iops > 0.0);
    assert_ne!(a.total.iops, b.total.iops, "seeds 1 and 2 gave the same IOPS");
    assert_ne!(a.total.lat_us.mean, b.total.lat_us.mean, "seeds 1 and 2 gave the same mean latency");
}
