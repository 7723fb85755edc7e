//! # iopath-model: the shared vocabulary of iopath
//!
//! Everything the simulator, the hardware mode and the reports agree on:
//!
//! - [`units`]: sizes, rates and simulated time as newtypes, and the parsers for `128k`,
//!   `550MB/s`, `6Gbps`, `10%`, `20s`;
//! - [`link`]: link generations (SATA, SAS, PCIe/DMI) and their payload arithmetic;
//! - [`catalog`]: the built-in parts, every figure with its source;
//! - [`board`]: boards (slots, M.2 sockets, SATA ports, sharing rules) a topology sits on;
//! - [`topology`]: topology files, loaded in two stages into a validated tree;
//! - [`cpu`]: the per-byte CPU cost of checksums, parity, encryption and compression;
//! - [`paths`]: the physics of a topology as shared resources and per-byte costs;
//! - [`net`]: NICs, clients, Ethernet/IP/TCP framing and file-protocol costs;
//! - [`readreq`]: the PCIe read-request path of disk writes (tags x MRRS over the round trip);
//! - [`bound`]: the closed-form bottleneck estimate (weighted max-min water-filling);
//! - [`workload`]: jobs in fio's vocabulary;
//! - [`bind`]: a workload's drives and copy pairs resolved against a topology's drives;
//! - [`report`]: the result type of simulated and measured runs (the JSON contract);
//! - [`toml_out`]: the one writer of part files and topologies.
//!
//! This crate does no I/O except reading a topology file the caller names, and never reads
//! the wall clock.

pub mod bind;
pub mod board;
pub mod bound;
pub mod catalog;
pub mod cpu;
pub mod latency;
pub mod link;
mod load;
pub mod net;
pub mod parts;
pub mod paths;
pub mod pool;
pub mod readreq;
pub mod report;
pub mod surface;
pub mod toml_out;
pub mod topology;
pub mod units;
pub mod workload;

pub use catalog::Catalog;
pub use topology::{ConfigError, Diagnostic, ParamOverride, Topology};
pub use workload::{Rw, Workload, WorkloadSpec};
