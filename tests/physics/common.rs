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
pub use iopath_test_support::within as assert_within;
