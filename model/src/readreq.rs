//! The PCIe read-request path of disk writes.
//!
//! A disk write is the device *reading* host memory: its DMA engine sends non-posted memory
//! read requests of at most MRRS bytes each and waits for their completions. Only so many
//! requests can be outstanding (its tags), and each waits a round trip: the root complex and
//! DRAM (`dma_read_latency_us` of the host), twice the latency of every switch or chipset on
//! the way (`hop_latency_us`, request up and completion down), and the time the MRRS bytes of
//! completions take on the slowest link of the path. So a requester moves at most
//!
//! ```text
//!     tags x MRRS / (round trip + MRRS / slowest write payload rate)     [bytes/s]
//! ```
//!
//! of write data, whatever its links carry. That is a resource of its own (`X.rdreq`, kind
//! `pcie-reads`) that every write class whose data the requester fetches costs
//! `1 / that rate` per byte; the bound and the simulator both see it, and it is named as the
//! bottleneck when it binds. The requester of a drive's writes is the drive itself (NVMe) or
//! the first controller on its path (SATA, SAS: the controller's DMA engine reads the data).

use crate::catalog::Kind;
use crate::link::{Family, LinkRates};
use crate::parts::{Interface, PartSpec};
use crate::topology::{NodeIx, Topology};

/// Outstanding reads and request size of a node that reads host memory for disk writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Requester {
    pub tags: u32,
    pub mrrs: u32,
}

/// The requester figures of a node, when it is one: an NVMe drive or a controller.
pub fn requester(t: &Topology, ix: NodeIx) -> Option<Requester> {
    match &t.nodes[ix].spec {
        PartSpec::Drive(d) if d.interface == Interface::Nvme => Some(Requester { tags: d.read_tags, mrrs: d.mrrs }),
        PartSpec::Controller(c) => Some(Requester { tags: c.read_tags, mrrs: c.mrrs }),
        _ => None,
    }
}

/// The node whose memory reads carry a drive's writes: the drive (NVMe) or the first
/// controller above it.
pub fn requester_of(t: &Topology, drive: NodeIx) -> Option<NodeIx> {
    t.path_to_host(drive).into_iter().find(|&ix| requester(t, ix).is_some())
}

/// Fixed round trip of one read request from `ix` [us]: the host's DMA read latency and two
/// traversals of every switch (chipset) above it.
pub fn round_trip_us(t: &Topology, ix: NodeIx) -> f64 {
    let hops: f64 =
        t.path_to_host(ix).iter().filter_map(|&p| t.nodes[p].spec.switch()).map(|s| 2.0 * s.hop_latency_us).sum();
    t.host_figures().dma_read_latency_us + hops
}

/// Write data rate one requester's outstanding reads sustain [bytes/s], given the link rates
/// of every node (`rates[ix]`: the link of `ix` to its parent).
pub fn request_rate(t: &Topology, ix: NodeIx, rates: &[Option<LinkRates>]) -> Option<f64> {
    let r = requester(t, ix)?;
    let slowest = t
        .path_to_host(ix)
        .iter()
        .filter(|&&p| t.nodes[p].link.family == Family::Pcie)
        .filter_map(|&p| rates[p].map(|l| l.write_payload_bytes_per_s))
        .fold(f64::INFINITY, f64::min);
    let mrrs = f64::from(r.mrrs.max(128));
    let rtt = round_trip_us(t, ix) * 1e-6 + mrrs / slowest;
    Some(f64::from(r.tags.max(1)) * mrrs / rtt)
}

/// Whether a node's writes go through a request path worth a resource: a requester whose
/// reads cross at least one PCIe link (a controller on an internal path inside a chipset
/// still reads across the chipset's uplink).
pub fn has_request_path(t: &Topology, ix: NodeIx) -> bool {
    requester(t, ix).is_some()
        && t.path_to_host(ix).iter().any(|&p| t.nodes[p].link.family == Family::Pcie)
        && t.nodes[ix].kind != Kind::Host
}
