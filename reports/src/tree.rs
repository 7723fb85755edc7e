//! The topology as tables: the tree of nodes with every link's rates, and the closed-form
//! bound for the first 1..N drives. `iopath check` prints them and `iopath report` puts them
//! on its page, so another front end gets the same rows.

use iopath_model::Topology;
use iopath_model::bound::{BoundRow, Mix, bound_prefixes};
use iopath_model::link::Family;
use iopath_model::paths::ResourceGraph;
use iopath_model::topology::NodeIx;
use serde::Serialize;

/// One node of the printed tree.
#[derive(Debug, Clone, Serialize)]
pub struct TreeNode {
    /// Depth below the host (the host is 0).
    pub depth: usize,
    /// Node id as written in the topology.
    pub id: String,
    /// Node kind (host, controller, drive, ...).
    pub kind: String,
    /// Catalog part id.
    pub part: String,
    /// The part's full name.
    pub part_name: String,
    /// Port on the parent, where the topology names one.
    pub port: Option<u32>,
    /// The link to the parent with its rates (none for the host).
    pub link: Option<LinkInfo>,
}

/// A link with its rates per direction [MB/s].
#[derive(Debug, Clone, Serialize)]
pub struct LinkInfo {
    /// The link as written (`pcie3x4`, `sata3`, `internal`).
    pub spec: String,
    /// The generation key (`pcie3`, `sata3`, `internal`).
    pub generation: String,
    /// Lanes (0 for an internal link).
    pub lanes: u32,
    /// `half` or `full`.
    pub duplex: &'static str,
    /// Raw rate per direction [MB/s].
    pub raw_mb_s: f64,
    /// Payload rate of reads (towards the host) [MB/s].
    pub read_payload_mb_s: f64,
    /// Payload rate of writes (towards the drive) [MB/s].
    pub write_payload_mb_s: f64,
    /// The trained link as a link name (`pcie3x4`, `sata2`, `sas3x4`, `internal`).
    pub trained: String,
    /// PCIe Max Payload Size it runs at [bytes] (PCIe only).
    pub mps: Option<u32>,
    /// What the device supports on its own (`pcie4x4`), where the link was trained.
    pub device: Option<String>,
    /// The port it sits in and what that offers (`sw pcie3x4`).
    pub port: Option<String>,
    /// Why the link is what it is: `drive pcie4x4, trained to its port sw pcie3x4`.
    pub why: Option<String>,
}

/// Depth-first nodes from the host, children in file order.
pub fn tree(t: &Topology, g: &ResourceGraph) -> Vec<TreeNode> {
    let mut out = Vec::new();
    fn walk(t: &Topology, g: &ResourceGraph, ix: NodeIx, depth: usize, out: &mut Vec<TreeNode>) {
        let n = &t.nodes[ix];
        let link = g.link_rates(ix).map(|r| LinkInfo {
            spec: n.link.to_string(),
            generation: n.link.generation_key(),
            lanes: n.link.lanes,
            duplex: if r.half_duplex { "half" } else { "full" },
            raw_mb_s: r.raw_bytes_per_s / 1e6,
            read_payload_mb_s: r.read_payload_bytes_per_s / 1e6,
            write_payload_mb_s: r.write_payload_bytes_per_s / 1e6,
            trained: n.link.short_name(),
            mps: (n.link.family == Family::Pcie).then_some(n.link.mps),
            device: n.training.as_ref().map(|tr| tr.device.short_name()),
            port: n.training.as_ref().map(|tr| format!("{} {}", tr.port_id, tr.port.short_name())),
            why: n.training.as_ref().map(|tr| tr.why(&n.link)),
        });
        let link = if n.parent.is_some() && n.link.family == Family::Internal && link.is_none() {
            Some(LinkInfo {
                spec: "internal".into(),
                generation: "internal".into(),
                lanes: 0,
                duplex: "full",
                raw_mb_s: f64::INFINITY,
                read_payload_mb_s: f64::INFINITY,
                write_payload_mb_s: f64::INFINITY,
                trained: "internal".into(),
                mps: None,
                device: None,
                port: None,
                why: None,
            })
        } else {
            link
        };
        out.push(TreeNode {
            depth,
            id: n.id.clone(),
            kind: n.kind.to_string(),
            part: n.part.clone(),
            part_name: n.part_name.clone(),
            port: n.port,
            link,
        });
        for &c in &n.children {
            walk(t, g, c, depth + 1, out);
        }
    }
    walk(t, g, 0, 0, &mut out);
    out
}

/// The bound for the first 1..N drives, for reads, writes and a 50/50 mix.
pub fn bound_table(t: &Topology, g: &ResourceGraph, bs: u64) -> Vec<BoundRow> {
    let by_mix: Vec<Vec<BoundRow>> =
        [Mix::Read, Mix::Write, Mix::Mixed].into_iter().map(|mix| bound_prefixes(t, g, &t.drives, mix, bs)).collect();
    // Row order: for each drive count, read, write, mixed.
    (0..by_mix[0].len()).flat_map(|n| by_mix.iter().map(move |rows| rows[n].clone())).collect()
}
