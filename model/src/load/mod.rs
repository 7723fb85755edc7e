//! Stage two of loading a topology, as passes. [`crate::topology::Topology::from_raw`] runs
//! them in this order on one [`Draft`], every pass reporting into the same sinks, so every
//! problem is reported at once and in the same order as the file:
//!
//! 1. [`parts`]: the file's `[[part]]` tables join the catalog;
//! 2. [`nodes`]: host, nodes and drives (`count` expanded), ids, part names, ports as numbers;
//! 3. [`params::command_line`]: `--set`/`--vary` overrides become params of their nodes;
//!    [`workloads`]: the `[workload.NAME]` tables (reported after the tree's problems);
//! 4. [`tree`]: parents and cycles (loading stops here if anything was wrong so far);
//! 5. [`params::apply`]: params checked and applied; figures resolved into typed ones
//!    ([`crate::parts`]), every figure a part does not state from its declared default;
//! 6. [`attach`]: what may attach to what, and ports;
//! 7. [`links`]: every link derived or checked as written;
//! 8. [`diagnostics`]: whole-file problems (nothing to model, no drives).

pub(crate) mod attach;
pub(crate) mod diagnostics;
pub(crate) mod links;
pub(crate) mod nodes;
pub(crate) mod params;
pub(crate) mod part_file;
pub(crate) mod parts;
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
