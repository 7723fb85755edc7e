//! Stage two of loading a topology, as passes. [`crate::topology::Topology::from_raw`] runs
//! them in this order on one [`Draft`], every pass reporting into the same sinks, so every
//! problem is reported at once and in the same order as the file:
//!
//! 1. [`parts`]: the file's `[[part]]` tables join the catalog;
//!    [`boards`]: a board's chipset, onboard devices, slots and ports become nodes and links,
//!    its sharing rules applied (conflicts reported at the place as written);
//! 2. [`nodes`]: host, nodes and drives (`count` expanded), ids, part names, ports as numbers;
//! 3. [`params::command_line`]: `--set`/`--vary` overrides become params of their nodes;
//!    [`workloads`]: the `[workload.NAME]` tables (reported after the tree's problems);
//! 4. [`tree`]: parents and cycles (loading stops here if anything was wrong so far);
//! 5. [`params::apply`]: params checked and applied; figures resolved into typed ones
//!    ([`crate::parts`]), every figure a part does not state from its declared default;
//! 6. [`attach`]: what may attach to what, and ports;
//! 7. [`links`]: every link derived or checked as written;
//! 8. [`diagnostics`]: whole-file problems (nothing to model, no drives);
//! 9. [`clients`]: the `[[client]]` tables (their NIC, link, protocol) and workloads' `client`.
//! 10. [`pools`]: the `[[pool]]` tables (members, layout, options) and the pool fields of
//!     the workloads (pool ids, failed members the layout survives).

pub(crate) mod attach;
pub(crate) mod boards;
pub(crate) mod clients;
pub(crate) mod diagnostics;
pub(crate) mod links;
pub(crate) mod nodes;
pub(crate) mod params;
pub(crate) mod parts;
pub(crate) mod pools;
pub(crate) mod tree;
pub(crate) mod workloads;

use crate::topology::{Node, NodeIx};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use toml::Spanned;

/// A node's `params = { ... }` as written (command-line overrides added with span 0..0).
pub(crate) type Params = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// How a node was written: what the passes after [`nodes`] need besides the node itself.
pub(crate) struct Pending {
    /// Key path of its table: `node[2]`, `drive[0]`.
    pub key: String,
    pub parent: Spanned<String>,
    /// The port as written (with `count`, the first of the group's ports).
    pub port: Option<Spanned<i64>>,
    /// This drive's place in its `count` group: its port is `port + offset`.
    pub offset: u32,
    /// Drives in the group (1 without `count`).
    pub count: u32,
    pub link: Option<Spanned<String>>,
}

/// The topology being loaded: nodes in file order (host first) and, index by index, how each
/// was written.
pub(crate) struct Draft {
    pub nodes: Vec<Node>,
    pub params_of: Vec<Params>,
    /// Where each node's part is named, for problems of its figures taken together.
    pub part_span_of: Vec<Option<Range<usize>>>,
    pub key_of: Vec<String>,
    pub pending: Vec<Pending>,
    pub ids: HashMap<String, (NodeIx, Range<usize>)>,
    /// Ids that were rejected: references to them are not reported again.
    pub rejected: HashSet<String>,
    /// False when some [[drive]] was skipped, so drive counts and names are incomplete.
    pub drives_complete: bool,
    /// The command-line option that gave a node's param, by (node, param).
    pub given_as: HashMap<(NodeIx, String), String>,
}

impl Draft {
    fn push(&mut self, node: Node, params: Params, part_span: Option<Range<usize>>, pending: Pending) {
        self.key_of.push(pending.key.clone());
        self.nodes.push(node);
        self.params_of.push(params);
        self.part_span_of.push(part_span);
        self.pending.push(pending);
    }
}

/// One test per pass, through the loader (each pass needs the ones before it).
#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::topology::{Diagnostic, Topology};

    fn load(text: &str) -> Result<Topology, Vec<Diagnostic>> {
        Topology::parse("t.toml", text, &Catalog::builtin()).map_err(|e| e.diagnostics)
    }

    const HEAD: &str = "[host]\npart = \"amd-am5\"\n";

    #[test]
    fn parts_a_misspelt_part_is_reported_with_the_closest_ids() {
        let e = load(&format!(
            "{HEAD}[[node]]\nid = \"hba\"\npart = \"asm1165\"\nparent = \"host\"\n[[drive]]\nid = \"d\"\npart = \"kingston-dc600m-1920\"\nparent = \"hba\"\n"
        ))
        .unwrap_err();
        assert_eq!((e[0].key.as_str(), e[0].line), ("node[0].part", 5), "{e:?}");
        assert!(e[0].message.contains("did you mean one of \"asm1166\""), "{e:?}");
    }

    #[test]
    fn nodes_a_count_group_gets_consecutive_ids_and_ports() {
        let t = load(&format!(
            "{HEAD}[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n[[drive]]\nid = \"d\"\ncount = 3\npart = \"kingston-dc600m-1920\"\nparent = \"hba\"\nport = 2\n"
        ))
        .unwrap();
        let got: Vec<(String, Option<u32>)> =
            t.drives.iter().map(|&d| (t.nodes[d].id.clone(), t.nodes[d].port)).collect();
        assert_eq!(got, [("d0".into(), Some(2)), ("d1".into(), Some(3)), ("d2".into(), Some(4))]);
    }

    #[test]
    fn tree_an_unknown_parent_is_reported_with_the_closest_id() {
        let e = load(&format!(
            "{HEAD}[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n[[drive]]\nid = \"d\"\npart = \"kingston-dc600m-1920\"\nparent = \"hab\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].key, "drive[0].parent");
        assert!(e[0].message.contains("no node has id \"hab\"; did you mean \"hba\"?"), "{e:?}");
    }

    #[test]
    fn params_apply_over_the_part_and_the_typed_figures_follow() {
        let t = load(&format!(
            "{HEAD}[[node]]\nid = \"hba\"\npart = \"jmb585\"\nparent = \"host\"\nparams = {{ dma_read_efficiency = 0.5 }}\n[[drive]]\nid = \"d\"\npart = \"kingston-dc600m-1920\"\nparent = \"hba\"\n"
        ))
        .unwrap();
        let hba = &t.nodes[t.node("hba").unwrap()];
        let c = hba.spec.controller().unwrap();
        assert_eq!((c.dma_read_efficiency, c.dma_write_efficiency), (0.5, 0.5));
        assert_eq!(hba.figures["dma_read_efficiency"].basis, "measurement", "a param is stated, not a default");
        assert!(!hba.defaults.contains_key("dma_read_efficiency"));
        assert_eq!(hba.defaults["dma_write_efficiency"].basis, "default");
    }

    #[test]
    fn attach_an_nvme_drive_below_a_sata_controller_is_refused() {
        let e = load(&format!(
            "{HEAD}[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n[[drive]]\nid = \"n\"\npart = \"samsung-990pro-2tb\"\nparent = \"hba\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].message.contains("NVMe drive \"n\" cannot attach to a controller"), "{e:?}");
    }

    #[test]
    fn links_an_nvme_drive_takes_its_mps_default_and_a_switch_without_mps_limits_to_128() {
        // Below the root (512): the drive's own default, 256.
        let t =
            load(&format!("{HEAD}[[drive]]\nid = \"n\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\n")).unwrap();
        let n = &t.nodes[t.node("n").unwrap()];
        assert_eq!((n.link.lanes, n.link.mps), (4, 256));
        assert!(!n.defaults.contains_key("lanes"), "the part states its lanes");
        assert_eq!(n.defaults["mps"].value, crate::catalog::Value::Num(256.0));
        // A switch part that states no mps: the PCIe minimum, 128, for everything below it.
        let t = load(&format!(
            r#"{HEAD}[[part]]
id = "my-switch"
kind = "switch"
name = "a switch of mine"
figures.uplink = {{ value = "pcie3", source = "test: a switch without mps" }}
figures.lanes = {{ value = 8, source = "test: a switch without mps" }}
[[node]]
id = "sw"
part = "my-switch"
parent = "host"
[[drive]]
id = "n"
part = "samsung-990pro-2tb"
parent = "sw"
"#
        ))
        .unwrap();
        assert_eq!(t.nodes[t.node("sw").unwrap()].link.mps, 128);
        assert_eq!(t.nodes[t.node("n").unwrap()].link.mps, 128);
    }

    const NIC: &str = "[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n[[node]]\nid = \"nic0\"\npart = \"intel-i226-v\"\nparent = \"host\"\n[[drive]]\nid = \"d\"\npart = \"kingston-dc600m-1920\"\nparent = \"hba\"\n";

    #[test]
    fn clients_a_client_names_its_nic_link_and_protocol() {
        let t = load(&format!(
            "{HEAD}{NIC}[[client]]\nid = \"laptop\"\nnic = \"nic0\"\nlink = \"intel-i225-v\"\nmtu = 9000\n"
        ))
        .unwrap();
        let c = t.client("laptop").unwrap();
        assert_eq!((c.nic, c.mtu, c.protocol), (t.node("nic0").unwrap(), 9000, crate::net::Protocol::Smb3));
        assert_eq!(c.link, crate::net::ClientLink::Ethernet { gbps: 2.5 }, "a NIC part's port rate");
        // The I226-V's PCIe 2.1 x1 end trains at pcie2 x1.
        let nic = &t.nodes[t.node("nic0").unwrap()];
        assert_eq!((nic.link.generation, nic.link.lanes), (2, 1));
    }

    #[test]
    fn clients_every_problem_is_reported_at_its_value() {
        let e = load(&format!(
            "{HEAD}{NIC}[[client]]\nid = \"laptop\"\nnic = \"hba\"\nlink = \"2.5Gbit\"\nmtu = 100000\nprotocol = \"smb\"\n[workload.w]\nclient = \"lapto\"\n"
        ))
        .unwrap_err();
        let keys: Vec<&str> = e.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            keys,
            ["client[0].nic", "client[0].link", "client[0].protocol", "client[0].mtu", "workload.w.client"],
            "{e:?}"
        );
        assert!(e[0].message.contains("\"hba\" is a controller, not a NIC"), "{e:?}");
        assert!(e[2].message.contains("did you mean \"smb3\""), "{e:?}");
        assert!(e[4].message.contains("did you mean \"laptop\""), "{e:?}");
        assert!(e.iter().all(|d| d.line > 0 && d.help.is_some()), "{e:?}");
    }

    #[test]
    fn diagnostics_a_topology_without_drives_says_so() {
        let e = load(&format!("{HEAD}[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n")).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].key.as_str(), e[0].message.as_str()), ("drive", "the topology has no drives"));
    }
}
