//! Helpers shared by the physics tests: a topology from inline TOML over the built-in
//! catalog, and a simulated run of an fio-style workload.
#![allow(dead_code)]

use iopath_model::report::Report;
use iopath_model::{Catalog, Topology, WorkloadSpec};

/// A topology parsed from `text` over the built-in catalog; panics with the diagnostics.
pub fn topology(name: &str, text: &str) -> Topology {
    Topology::parse(name, text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// An fio-style workload: `rw`, block size, queue depth; the rest as `WorkloadSpec` defaults.
pub fn ws(rw: &str, bs: &str, qd: u32) -> WorkloadSpec {
    WorkloadSpec { rw: Some(rw.into()), bs: Some(bs.into()), iodepth: Some(qd), ..Default::default() }
}

/// One seeded simulated run.
pub fn sim(t: &Topology, spec: WorkloadSpec) -> Report {
    iopath_sim::simulate(t, &spec.resolve().expect("workload"), &Default::default()).expect("simulate")
}

/// `predicted` within `tol` (a fraction) of `expected`, with the numbers in the message.
pub fn assert_within(what: &str, predicted: f64, expected: f64, tol: f64) {
    let err = predicted / expected - 1.0;
    println!("{what:<60} expected {expected:>10.1} predicted {predicted:>10.1} error {:>+6.1}%", err * 100.0);
    assert!(
        err.abs() <= tol,
        "{what}: predicted {predicted:.1}, expected {expected:.1} (error {:+.1}%, tolerance {:.0}%)",
        err * 100.0,
        tol * 100.0
    );
}
