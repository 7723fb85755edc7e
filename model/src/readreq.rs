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
    t.up_from(drive).find(|&ix| requester(t, ix).is_some())
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
    requester(t, ix).is_some() && t.path_to_host(ix).iter().any(|&p| t.nodes[p].link.family == Family::Pcie)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;
    use crate::paths::ResourceGraph;

    /// An ASM1166 (PCIe 3.0 x2) on the AM5 root port directly, and one below a Promontory 21.
    fn topo() -> Topology {
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "chipset"
part = "amd-promontory21"
parent = "host"
[[node]]
id = "direct"
part = "asm1166"
parent = "host"
[[node]]
id = "below"
part = "asm1166"
parent = "chipset"
[[drive]]
id = "a"
part = "samsung-870evo-1tb"
parent = "direct"
port = 0
[[drive]]
id = "b"
part = "samsung-870evo-1tb"
parent = "below"
port = 0
"#;
        Topology::parse("t.toml", text, &Catalog::builtin()).unwrap()
    }

    fn ix(t: &Topology, id: &str) -> NodeIx {
        t.nodes.iter().position(|n| n.id == id).unwrap()
    }

    #[test]
    fn every_chipset_hop_lengthens_the_round_trip_and_lowers_the_rate() {
        let t = topo();
        let g = ResourceGraph::new(&t);
        let host = t.host_figures().dma_read_latency_us;
        let hop = t.nodes[ix(&t, "chipset")].spec.switch().unwrap().hop_latency_us;
        assert_eq!(round_trip_us(&t, ix(&t, "direct")), host);
        assert_eq!(round_trip_us(&t, ix(&t, "below")), host + 2.0 * hop);
        let rates: Vec<_> = (0..t.nodes.len()).map(|i| g.link_rates(i).copied()).collect();
        let direct = request_rate(&t, ix(&t, "direct"), &rates).unwrap();
        let below = request_rate(&t, ix(&t, "below"), &rates).unwrap();
        assert!(below < direct, "{below} vs {direct}");
        // tags x MRRS over (round trip + MRRS at the slowest write payload rate on the path).
        let r = requester(&t, ix(&t, "direct")).unwrap();
        let link = g.link_rates(ix(&t, "direct")).unwrap().write_payload_bytes_per_s;
        let want = f64::from(r.tags) * f64::from(r.mrrs) / (host * 1e-6 + f64::from(r.mrrs) / link);
        assert!((direct / want - 1.0).abs() < 1e-12);
        // The drives' writes cost their controller's request resource; reads do not.
        assert_eq!(requester_of(&t, ix(&t, "a")), Some(ix(&t, "direct")));
        let res = g.resources.iter().position(|r| r.id == "direct.rdreq").unwrap();
        let costs = |dir| g.class_costs(&t, ix(&t, "a"), dir, 1 << 20, false, true);
        assert!(costs(crate::paths::Dir::Write).iter().any(|c| c.resource == res));
        assert!(costs(crate::paths::Dir::Read).iter().all(|c| c.resource != res));
    }
}
