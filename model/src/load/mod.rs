//! Stage two of loading a topology, by concern. [`crate::topology::Topology::from_raw`]
//! runs these in order and collects every problem into one [`crate::topology::Diagnostic`]
//! list.

pub(crate) mod part_file;
pub(crate) mod workloads;
