//! # iopath-sim: a deterministic discrete-event simulator of storage I/O paths
//!
//! A run takes a validated [`Topology`] and a [`Workload`] and reports what the hardware
//! would do, in the same [`Report`] type a measured run produces:
//!
//! ```
//! use iopath_model::{Catalog, Topology, WorkloadSpec};
//! let text = r#"
//! [host]
//! part = "amd-am5"
//! [[node]]
//! id = "hba"
//! part = "asm1166"
//! parent = "host"
//! [[drive]]
//! id = "ssd"
//! count = 6
//! part = "micron-5300pro-3840"
//! parent = "hba"
//! "#;
//! let topo = Topology::parse("doc.toml", text, &Catalog::builtin()).unwrap();
//! let spec = WorkloadSpec { rw: Some("read".into()), bs: Some("1m".into()), iodepth: Some(8),
//!                           runtime: Some("0.5s".into()), ..Default::default() };
//! let report = iopath_sim::simulate(&topo, &spec.resolve().unwrap(), &Default::default()).unwrap();
//! // Six SSDs that read 540 MB/s each share a PCIe 3.0 x2 uplink: the uplink binds.
//! assert!(report.total.read_mb_s < 6.0 * 540.0);
//! assert_eq!(report.bottleneck.id, "hba.uplink.up");
//! ```
//!
//! Modules: [`engine`] (clock and event queue, no storage types), [`hdd`] (disk mechanics),
//! [`run`] (the storage model: jobs, drives, port multipliers, fluid transfers),
//! [`sweep`] (many runs in parallel with rayon, deterministic whatever the thread count).
//!
//! Invariants: this crate does no I/O and never reads the wall clock (a caller may pass one
//! in [`SimOptions`] to report wall time). The same inputs and seed give the same report.

pub mod advise;
pub mod engine;
pub mod hdd;
pub mod latency;
pub mod points;
pub mod run;
pub mod ssd;
pub mod sweep;

pub use iopath_model::report::Report;
pub use iopath_model::{Topology, Workload};
pub use run::{SimError, SimOptions, planned_sim_time, simulate, target_drives};
pub use sweep::{Axis, MAX_REPLICATIONS, SweepError, costliest_point, replicate, sweep};
