//! Physics that transfers (issue #13): setups nobody published a measurement for, whose
//! answer follows from specifications. Each test states its derivation in a comment: the
//! expected value is computed from datasheet and specification figures, never read back
//! from the model.
//!
//! One file per mechanism family, so each can grow on its own:
//! - `pcie.rs`: link training, the read-request path (MRRS, completions, tags, hop latency);
//! - `fabric.rs`: port multipliers (CBS/FBS), controller command limits, expanders;
//! - `drives.rs`: SSD write caches, SMR, HDD write-back caching, latency spread;
//! - `host.rs`: IOMMU translation and the host CPU's per-I/O cost.

mod common;
mod drives;
mod fabric;
mod host;
mod pcie;
