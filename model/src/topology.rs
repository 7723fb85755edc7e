//! Topologies: a tree of parts joined by links, written in TOML, loaded in two stages.
//!
//! Stage one ([`RawTopology`]) mirrors the file with serde (`deny_unknown_fields`) and keeps
//! the span of every value. Ports, counts and workload values stay TOML values there, so that
//! a wrong type is reported in stage two, in words and together with every other problem.
//! Stage two ([`Topology::from_raw`]) resolves part names against the catalog, checks the tree
//! (parents, ports, cycles, what may attach to what), applies per-node `params`, derives every
//! link, checks the named workloads against the drives, and reports *all* problems at once as
//! [`Diagnostic`]s with file, line, column, key path, what was expected and a suggestion.
//! The simulator accepts only the validated [`Topology`].
//!
//! ```toml
//! name = "ASM1166 with six SATA SSDs"
//! [host]
//! part = "amd-am5"
//! [[node]]
//! id = "hba"
//! part = "asm1166"
//! parent = "host"
//! [[drive]]
//! id = "D"
//! part = "kingston-dc600m-1920"
//! parent = "hba"
//! port = 0
//! ```

use crate::catalog::{
    Accepts, Catalog, CatalogError, Figure, FigureSpec, FigureType, Kind, Value, check_together, check_value,
    did_you_mean, expectation, figure_names, figure_spec, suggest,
};
use crate::link::{Family, GenerationFigures, LinkSpec, parse_generation, parse_link};
use crate::load::part_file::PartFileOut;
use crate::load::workloads::check_workloads;
use crate::units::parse_rate;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Range;
use toml::Spanned;

// ---------------------------------------------------------------------------------------
// Stage one: the file as written.

/// The topology file as written.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    /// A short name for reports.
    pub name: Option<String>,
    pub description: Option<String>,
    /// Where the setup comes from (a published measurement, a build log).
    pub source: Option<String>,
    /// The host: CPU root complex and operating system.
    pub host: Option<RawHost>,
    /// Switches, chipsets, controllers, port multipliers and expanders.
    #[serde(default)]
    pub node: Vec<RawNode>,
    /// Drives.
    #[serde(default)]
    pub drive: Vec<RawDrive>,
    /// Parts defined in this file (as `iopath discover` writes unknown ones), same form as the catalog.
    #[serde(default)]
    #[schemars(with = "Vec<serde_json::Value>")]
    pub part: Vec<crate::catalog::Part>,
    /// Named workloads: `[workload.seqread]`. Kept with the position of every value; the
    /// loader turns each into a [`WorkloadSpec`] ([`Topology::workloads`]).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, WorkloadSpec>")]
    pub workload: BTreeMap<String, RawWorkload>,
}

/// A `[workload.NAME]` table as written, every value with its position. Values are kept as
/// TOML values so that a wrong type is reported in stage two, in words and with the others.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub rw: Option<Spanned<toml::Value>>,
    pub bs: Option<Spanned<toml::Value>>,
    pub iodepth: Option<Spanned<toml::Value>>,
    pub numjobs: Option<Spanned<toml::Value>>,
    pub rwmixread: Option<Spanned<toml::Value>>,
    pub region: Option<Spanned<toml::Value>>,
    pub runtime: Option<Spanned<toml::Value>>,
    pub ramp: Option<Spanned<toml::Value>>,
    pub active: Option<Spanned<toml::Value>>,
    pub drives: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub copy: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    pub seed: Option<Spanned<toml::Value>>,
    pub size: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    /// A host part from the catalog, e.g. "amd-am5".
    #[schemars(with = "String")]
    pub part: Spanned<String>,
    /// Figure overrides, e.g. { completion_bytes = 64 }.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawNode {
    /// Unique id, used by children's `parent` and by `--set ID.PARAM=VALUE`.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// A switch, controller, port_multiplier or expander part from the catalog.
    #[schemars(with = "String")]
    pub part: Spanned<String>,
    /// Id of the parent: "host", a switch, a controller (for a port multiplier or expander),
    /// or an expander (cascade).
    #[schemars(with = "String")]
    pub parent: Spanned<String>,
    /// Port on the parent (controllers' ports for port multipliers and expanders).
    #[schemars(with = "Option<u32>")]
    pub port: Option<Spanned<toml::Value>>,
    /// The link to the parent when it differs from the part's own: a slot that trains an x2
    /// card at x1 ("pcie2x1"), an expander's wide port ("sas3x4").
    #[schemars(with = "Option<String>")]
    pub link: Option<Spanned<String>>,
    /// Figure overrides, e.g. { fbs = false } or { mps = 128 }.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDrive {
    /// Unique id; with `count`, the prefix of `id0`, `id1`, ...
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// A drive part from the catalog.
    #[schemars(with = "String")]
    pub part: Spanned<String>,
    /// Id of the controller, port multiplier, expander, switch or host it attaches to.
    #[schemars(with = "String")]
    pub parent: Spanned<String>,
    /// Port on the parent; with `count`, the first of consecutive ports. Default: the next free.
    #[schemars(with = "Option<u32>")]
    pub port: Option<Spanned<toml::Value>>,
    /// Declare many identical drives at once (24 bays).
    #[schemars(with = "Option<u32>")]
    pub count: Option<Spanned<toml::Value>>,
    /// The drive's own link when slower than both ends allow ("sata1").
    #[schemars(with = "Option<String>")]
    pub link: Option<Spanned<String>>,
    /// Block device or file for the hardware mode ("/dev/sdb").
    pub dev: Option<String>,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

// ---------------------------------------------------------------------------------------
// Diagnostics.

/// One problem in a topology file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based; 0 when no position is known.
    pub line: usize,
    pub column: usize,
    /// TOML key path, e.g. `drive[2].port`.
    pub key: String,
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// Every problem found in one file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {d}")?;
        }
        Ok(())
    }
}

pub(crate) struct Sink<'a> {
    file: &'a str,
    text: &'a str,
    pub(crate) out: Vec<Diagnostic>,
    /// Ids of `[[part]]` tables that were rejected: uses of them are not reported again.
    broken_parts: HashSet<String>,
}

impl Sink<'_> {
    pub(crate) fn at(
        &mut self,
        span: Option<Range<usize>>,
        key: impl Into<String>,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let (line, column) = span.map(|s| line_col(self.text, s.start)).unwrap_or((0, 0));
        let d =
            Diagnostic { file: self.file.to_string(), line, column, key: key.into(), message: message.into(), help };
        // The same problem from every drive of a `count` group is reported once.
        if !self.out.contains(&d) {
            self.out.push(d);
        }
    }

    /// A problem with a value given on the command line: `label` is the option as written.
    fn cli(&mut self, label: &str, message: impl Into<String>, help: Option<String>) {
        let d = Diagnostic {
            file: label.to_string(),
            line: 0,
            column: 0,
            key: String::new(),
            message: message.into(),
            help,
        };
        if !self.out.contains(&d) {
            self.out.push(d);
        }
    }

    /// Everything found, this sink's problems first, then `later`'s.
    fn into_error(self, later: Sink) -> ConfigError {
        let mut diagnostics = self.out;
        diagnostics.extend(later.out);
        ConfigError { diagnostics }
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| before[i + 1..].chars().count() + 1).unwrap_or(before.chars().count() + 1);
    (line, col)
}

// ---------------------------------------------------------------------------------------
// Stage two: the validated tree.

/// Index of a node in [`Topology::nodes`]. The host is always 0.
pub type NodeIx = usize;

/// A validated node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    pub id: String,
    pub kind: Kind,
    pub part: String,
    pub part_name: String,
    pub parent: Option<NodeIx>,
    pub children: Vec<NodeIx>,
    pub port: Option<u32>,
    /// The link to the parent (the host has none: `Internal`).
    pub link: LinkSpec,
    /// The part's figures with this node's overrides applied.
    pub figures: BTreeMap<String, Figure>,
    pub dev: Option<String>,
}

impl Node {
    /// A numeric figure, or `default` when the part does not state it.
    pub fn num(&self, name: &str, default: f64) -> f64 {
        match self.figures.get(name).map(|f| &f.value) {
            Some(Value::Num(n)) => *n,
            _ => default,
        }
    }
    pub fn flag(&self, name: &str, default: bool) -> bool {
        match self.figures.get(name).map(|f| &f.value) {
            Some(Value::Bool(b)) => *b,
            _ => default,
        }
    }
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.figures.get(name).map(|f| &f.value) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }
    pub fn is_drive(&self) -> bool {
        self.kind == Kind::Drive
    }
}

/// A validated topology: what the simulator, the bound and the reports consume.
#[derive(Debug, Clone, Serialize)]
pub struct Topology {
    pub name: String,
    pub description: String,
    pub source: String,
    pub file: String,
    pub nodes: Vec<Node>,
    /// Drive nodes in file order.
    pub drives: Vec<NodeIx>,
    #[serde(skip)]
    pub workloads: BTreeMap<String, WorkloadSpec>,
    /// Figures of every link generation in use, keyed `sata3`, `pcie3`, ...
    pub generations: BTreeMap<String, GenerationFigures>,
    #[serde(skip)]
    raw: RawTopology,
    #[serde(skip)]
    text: String,
    #[serde(skip)]
    catalog: Catalog,
}

/// An override of one figure of one node: `--set pm.fbs=false`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamOverride {
    pub node: String,
    pub param: String,
    pub value: Value,
}

impl std::str::FromStr for ParamOverride {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (lhs, rhs) =
            s.split_once('=').ok_or_else(|| format!("{s:?} is not NODE.PARAM=VALUE, e.g. pm.fbs=false"))?;
        let (node, param) =
            lhs.trim().split_once('.').ok_or_else(|| format!("{lhs:?} is not NODE.PARAM, e.g. hba.lanes"))?;
        if node.is_empty() || param.is_empty() || rhs.trim().is_empty() {
            return Err(format!("{s:?} is not NODE.PARAM=VALUE, e.g. pm.fbs=false"));
        }
        Ok(ParamOverride { node: node.to_string(), param: param.to_string(), value: Value::parse_cli(rhs) })
    }
}

impl Topology {
    /// Reads and validates a topology file.
    pub fn load(path: &std::path::Path, catalog: &Catalog) -> Result<Topology, ConfigError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ConfigError {
            diagnostics: vec![Diagnostic {
                file: file.clone(),
                line: 0,
                column: 0,
                key: String::new(),
                message: format!("cannot read the file: {e}"),
                help: Some("check the path; `ls configs/` lists the built-in examples".to_string()),
            }],
        })?;
        Topology::parse_bytes(&file, &bytes, catalog)
    }

    /// Parses and validates a topology file's bytes: text that is not UTF-8 is reported at
    /// the first bad byte (offset, line and column), not as an unreadable file.
    pub fn parse_bytes(file: &str, bytes: &[u8], catalog: &Catalog) -> Result<Topology, ConfigError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Topology::parse(file, text, catalog),
            Err(e) => {
                let at = e.valid_up_to();
                // The valid prefix is text: count lines and columns in it.
                let prefix = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
                let (line, column) = line_col(prefix, at);
                Err(ConfigError {
                    diagnostics: vec![Diagnostic {
                        file: file.to_string(),
                        line,
                        column,
                        key: key_at(prefix, at),
                        message: format!(
                            "byte {at} (line {line}, column {column}): not valid UTF-8 (byte 0x{:02x})",
                            bytes[at]
                        ),
                        help: Some(
                            "a topology is UTF-8 text; re-save the file as UTF-8 or remove the byte (e.g. a Latin-1 character)"
                                .into(),
                        ),
                    }],
                })
            }
        }
    }

    /// Parses and validates topology text; `file` names it in messages.
    pub fn parse(file: &str, text: &str, catalog: &Catalog) -> Result<Topology, ConfigError> {
        let raw: RawTopology = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let mut sink = Sink { file, text, out: Vec::new(), broken_parts: HashSet::new() };
                let msg = e.message().trim().to_string();
                // The reader gives no position for nesting beyond its limit: point at the
                // most deeply nested header or key.
                let span = e.span().or_else(|| Some(deepest_line(text)));
                let key = span.clone().map(|s| key_at(text, s.start)).unwrap_or_default();
                let key = if key.len() > 80 { format!("{}...", key.chars().take(77).collect::<String>()) } else { key };
                let help = serde_help(&msg, &key);
                let msg = if msg.contains("recursion limit") {
                    "tables or values are nested too deeply for the TOML reader (recursion limit)".to_string()
                } else {
                    msg
                };
                sink.at(span, key, msg, Some(help));
                return Err(ConfigError { diagnostics: sink.out });
            }
        };
        Topology::from_raw(file, text, raw, catalog, &[], &[])
    }

    /// Returns a copy with figure overrides applied (`--set`, `--vary`, fitting), validated
    /// as if they had been written in the file.
    pub fn with_overrides(&self, overrides: &[ParamOverride]) -> Result<Topology, ConfigError> {
        Topology::from_raw(&self.file, &self.text, self.raw.clone(), &self.catalog, overrides, &[])
    }

    /// [`Topology::with_overrides`], naming in each problem the option that gave the
    /// override: `origins[i]` is how override `i` was written (`--vary hba.mps=nan`).
    pub fn with_overrides_from(
        &self,
        overrides: &[ParamOverride],
        origins: &[String],
    ) -> Result<Topology, ConfigError> {
        Topology::from_raw(&self.file, &self.text, self.raw.clone(), &self.catalog, overrides, origins)
    }

    /// The catalog this topology was resolved against.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn raw(&self) -> &RawTopology {
        &self.raw
    }

    pub fn node(&self, id: &str) -> Option<NodeIx> {
        self.nodes.iter().position(|n| n.id == id)
    }

    pub fn host(&self) -> &Node {
        &self.nodes[0]
    }

    /// Nodes from `ix` up to the host, `ix` first.
    pub fn path_to_host(&self, ix: NodeIx) -> Vec<NodeIx> {
        let mut v = vec![ix];
        let mut cur = ix;
        while let Some(p) = self.nodes[cur].parent {
            v.push(p);
            cur = p;
        }
        v
    }

    pub fn generation(&self, link: &LinkSpec) -> Option<&GenerationFigures> {
        self.generations.get(&link.generation_key())
    }

    fn from_raw(
        file: &str,
        text: &str,
        raw: RawTopology,
        catalog: &Catalog,
        overrides: &[ParamOverride],
        origins: &[String],
    ) -> Result<Topology, ConfigError> {
        let mut sink = Sink { file, text, out: Vec::new(), broken_parts: HashSet::new() };
        // Workload problems are collected apart and reported after the tree's, in file order.
        let mut wsink = Sink { file, text, out: Vec::new(), broken_parts: HashSet::new() };
        if raw.host.is_none()
            && raw.node.is_empty()
            && raw.drive.is_empty()
            && raw.part.is_empty()
            && raw.workload.is_empty()
        {
            let message = if raw.name.is_none() && raw.description.is_none() && raw.source.is_none() {
                "the file is empty: it has no [[drive]], no [[node]] and no [host]"
            } else {
                "the file has a name but no [[drive]], no [[node]] and no [host]"
            };
            sink.at(None, "drive", message, Some(minimal_topology_help()));
            return Err(sink.into_error(wsink));
        }
        let mut cat = catalog.clone();
        // Parts defined in the file extend the catalog for this topology.
        load_parts(&mut sink, &mut cat, &raw.part);

        // Host.
        let host_raw = raw
            .host
            .clone()
            .unwrap_or(RawHost { part: Spanned::new(0..0, "generic-host".to_string()), params: BTreeMap::new() });
        let mut nodes: Vec<Node> = Vec::new();
        let mut params_of: Vec<BTreeMap<Spanned<String>, Spanned<toml::Value>>> = Vec::new();
        // Where each node's part is named, for problems of its figures taken together.
        let mut part_span_of: Vec<Option<Range<usize>>> = Vec::new();
        let mut key_of: Vec<String> = Vec::new();
        let host_part = resolve_part(&mut sink, &cat, &host_raw.part, "host.part", &[Kind::Host]);
        nodes.push(new_node("host", Kind::Host, host_part, None, None));
        params_of.push(host_raw.params.clone());
        part_span_of.push(known(&host_raw.part));
        key_of.push("host".into());

        // Nodes and drives, expanding `count`.
        struct Pending {
            key: String,
            parent: Spanned<String>,
            /// The port as written (with `count`, the first of the group's ports).
            port: Option<Spanned<i64>>,
            /// This drive's place in its `count` group: its port is `port + offset`.
            offset: u32,
            /// Drives in the group (1 without `count`).
            count: u32,
            link: Option<Spanned<String>>,
        }
        let mut pending: Vec<Pending> = vec![Pending {
            key: "host".into(),
            parent: Spanned::new(0..0, String::new()),
            port: None,
            offset: 0,
            count: 1,
            link: None,
        }];
        let mut ids: HashMap<String, (NodeIx, Range<usize>)> = HashMap::new();
        ids.insert("host".to_string(), (0, 0..0));
        // Ids that were rejected: references to them are not reported again.
        let mut rejected: HashSet<String> = HashSet::new();
        // False when some [[drive]] was skipped, so drive counts and names are incomplete.
        let mut drives_complete = true;
        let port_of = |sink: &mut Sink, p: &Option<Spanned<toml::Value>>, key: &str| {
            p.as_ref().and_then(|p| {
                integer(
                    sink,
                    p,
                    &format!("{key}.port"),
                    "a port number, a whole number from 0 (e.g. port = 0)",
                    "ports are numbered from 0 on the parent; leave port out to take the next free one",
                )
                .map(|v| Spanned::new(p.span(), v))
            })
        };
        for (i, n) in raw.node.iter().enumerate() {
            let key = format!("node[{i}]");
            if check_id(&mut sink, &n.id, &format!("{key}.id"), &ids).is_err() {
                rejected.insert(n.id.get_ref().clone());
                continue;
            }
            let part = resolve_part(
                &mut sink,
                &cat,
                &n.part,
                &format!("{key}.part"),
                &[Kind::Switch, Kind::Controller, Kind::PortMultiplier, Kind::Expander],
            );
            let kind = part.as_ref().map(|p| p.kind).unwrap_or(Kind::Controller);
            let port = port_of(&mut sink, &n.port, &key);
            ids.insert(n.id.get_ref().clone(), (nodes.len(), n.id.span()));
            nodes.push(new_node(n.id.get_ref(), kind, part, None, None));
            params_of.push(n.params.clone());
            part_span_of.push(known(&n.part));
            key_of.push(key.clone());
            pending.push(Pending { key, parent: n.parent.clone(), port, offset: 0, count: 1, link: n.link.clone() });
        }
        for (i, d) in raw.drive.iter().enumerate() {
            let key = format!("drive[{i}]");
            let count = match &d.count {
                None => 1,
                Some(c) => match integer(
                    &mut sink,
                    c,
                    &format!("{key}.count"),
                    "a whole number of drives (e.g. count = 24)",
                    "count declares that many identical drives, from 1 to 4096, with ids ID0, ID1, ...",
                ) {
                    Some(n) if (1..=4096).contains(&n) => n as u32,
                    Some(n) => {
                        sink.at(
                            Some(c.span()),
                            format!("{key}.count"),
                            format!("count = {n} is outside 1..4096"),
                            Some("declare between 1 and 4096 identical drives".into()),
                        );
                        rejected.insert(d.id.get_ref().clone());
                        drives_complete = false;
                        continue;
                    }
                    None => {
                        rejected.insert(d.id.get_ref().clone());
                        drives_complete = false;
                        continue;
                    }
                },
            };
            let part = resolve_part(&mut sink, &cat, &d.part, &format!("{key}.part"), &[Kind::Drive]);
            let port = port_of(&mut sink, &d.port, &key);
            for k in 0..count {
                let id = if d.count.is_some() {
                    Spanned::new(d.id.span(), format!("{}{}", d.id.get_ref(), k))
                } else {
                    d.id.clone()
                };
                match check_id(&mut sink, &id, &format!("{key}.id"), &ids) {
                    Ok(()) => {}
                    Err(IdProblem::Duplicate) => {
                        rejected.insert(id.get_ref().clone());
                        drives_complete = false;
                        continue;
                    }
                    Err(IdProblem::Invalid) => {
                        // Every id of the group has the same fault: report it once.
                        rejected.insert(d.id.get_ref().clone());
                        rejected.insert(id.get_ref().clone());
                        drives_complete = false;
                        break;
                    }
                }
                ids.insert(id.get_ref().clone(), (nodes.len(), id.span()));
                nodes.push(new_node(id.get_ref(), Kind::Drive, part.clone(), None, d.dev.clone()));
                params_of.push(d.params.clone());
                part_span_of.push(known(&d.part));
                key_of.push(key.clone());
                pending.push(Pending {
                    key: key.clone(),
                    parent: d.parent.clone(),
                    port: port.clone(),
                    offset: k,
                    count,
                    link: d.link.clone(),
                });
            }
        }

        // Overrides from the command line become params of their nodes; their problems are
        // reported against the option that gave them (`--set hba.uplink=bogus: ...`).
        let mut given_as: HashMap<(NodeIx, String), String> = HashMap::new();
        for (i, o) in overrides.iter().enumerate() {
            let label = origins.get(i).cloned().unwrap_or_else(|| format!("--set {}.{}={}", o.node, o.param, o.value));
            match nodes.iter().position(|n| n.id == o.node) {
                Some(ix) => {
                    // A figure that is a word takes the text as written (`--set hba.uplink=3`
                    // is the word "3", refused as a link name, not the number 3).
                    let wants_text = figure_spec(nodes[ix].kind, &o.param).is_some_and(|s| s.ty == FigureType::Str);
                    let v = match &o.value {
                        v if wants_text => toml::Value::String(v.to_string()),
                        Value::Bool(b) => toml::Value::Boolean(*b),
                        Value::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => toml::Value::Integer(*n as i64),
                        Value::Num(n) => toml::Value::Float(*n),
                        Value::Str(s) => toml::Value::String(s.clone()),
                    };
                    params_of[ix].insert(Spanned::new(0..0, o.param.clone()), Spanned::new(0..0, v));
                    given_as.insert((ix, o.param.clone()), label);
                }
                None => {
                    let s = suggest(&o.node, nodes.iter().map(|n| n.id.as_str()));
                    sink.cli(
                        &label,
                        format!("no node or drive has id {:?}{}", o.node, did_you_mean(&s)),
                        Some("ids are listed by `iopath check`".into()),
                    );
                }
            }
        }

        // Named workloads, validated now so a broken one is a config error, not a run-time one.
        let drive_ids: Vec<&str> = nodes.iter().filter(|n| n.is_drive()).map(|n| n.id.as_str()).collect();
        let workloads = check_workloads(&mut wsink, &raw.workload, &drive_ids, drives_complete);

        // Parents.
        for ix in 1..nodes.len() {
            let p = &pending[ix];
            let pid = p.parent.get_ref();
            match ids.get(pid) {
                Some((pix, _)) if *pix == ix => {
                    sink.at(
                        Some(p.parent.span()),
                        format!("{}.parent", p.key),
                        format!("{:?} is its own parent", nodes[ix].id),
                        Some("attach it to a controller, switch or \"host\"".into()),
                    );
                }
                Some((pix, _)) => nodes[ix].parent = Some(*pix),
                // Its id was rejected and reported already.
                None if rejected.contains(pid) => {}
                None => {
                    let s = suggest(pid, ids.keys().map(|k| k.as_str()));
                    sink.at(
                        Some(p.parent.span()),
                        format!("{}.parent", p.key),
                        format!("no node has id {pid:?}{}", did_you_mean(&s)),
                        Some("parent must be \"host\" or the id of a [[node]]".into()),
                    );
                }
            }
        }
        // Cycles: parent chains that never reach the host. Each cycle is reported once, at its
        // member that comes first in the file; nodes that merely hang below a cycle are not.
        let mut state = vec![Walk::New; nodes.len()];
        for start in 1..nodes.len() {
            let mut walk = Vec::new();
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state[c] {
                    Walk::New => {
                        state[c] = Walk::OnPath;
                        walk.push(c);
                        cur = nodes[c].parent;
                    }
                    Walk::OnPath => {
                        let from = walk.iter().position(|&w| w == c).unwrap_or(0);
                        let first = walk[from..].iter().copied().min().unwrap_or(c);
                        let mut names = vec![format!("{:?}", nodes[first].id)];
                        let mut m = nodes[first].parent;
                        while let Some(x) = m {
                            names.push(format!("{:?}", nodes[x].id));
                            if x == first || names.len() > walk.len() + 1 {
                                break;
                            }
                            m = nodes[x].parent;
                        }
                        let pend = &pending[first];
                        sink.at(
                            Some(pend.parent.span()),
                            format!("{}.parent", pend.key),
                            format!(
                                "{:?} is in a cycle of parents and cannot reach the host: {}",
                                nodes[first].id,
                                names.join(" -> ")
                            ),
                            Some(format!(
                                "every chain of parents must end at \"host\"; attach one of the cycle to \"host\" or a controller outside it, e.g. parent = \"host\" in {}",
                                pend.key
                            )),
                        );
                        break;
                    }
                    Walk::Done => break,
                }
            }
            for w in walk {
                state[w] = Walk::Done;
            }
        }
        if !sink.out.is_empty() {
            return Err(sink.into_error(wsink));
        }
        for ix in 1..nodes.len() {
            if let Some(p) = nodes[ix].parent {
                nodes[p].children.push(ix);
            }
        }

        // Params: figure overrides, type- and range-checked.
        for ix in 0..nodes.len() {
            let kind = nodes[ix].kind;
            let prm = params_of[ix].clone();
            for (k, v) in &prm {
                let cli = given_as.get(&(ix, k.get_ref().clone()));
                // A problem of a value from the command line is reported against its option.
                let report = |sink: &mut Sink, span: Option<Range<usize>>, key: String, m: String, h: String| match cli
                {
                    Some(label) => sink.cli(label, m, Some(h)),
                    None => sink.at(span, key, m, Some(h)),
                };
                let key = format!("{}.params.{}", key_of[ix], k.get_ref());
                let span = known(v);
                let Some(spec) = figure_spec(kind, k.get_ref()) else {
                    let s = suggest(k.get_ref(), figure_names(kind));
                    report(
                        &mut sink,
                        known(k),
                        key,
                        format!("{:?} is not a figure of a {}{}", k.get_ref(), kind, did_you_mean(&s)),
                        format!("a {} accepts: {}", kind, figure_names(kind).collect::<Vec<_>>().join(", ")),
                    );
                    continue;
                };
                let value = match (spec.ty, v.get_ref()) {
                    (FigureType::Num, toml::Value::Integer(i)) => Value::Num(*i as f64),
                    (FigureType::Num, toml::Value::Float(f)) => Value::Num(*f),
                    (FigureType::Num, toml::Value::String(s)) if spec.name.ends_with("_mb_s") => match parse_rate(s) {
                        Ok(r) => Value::Num(r.mb_s()),
                        Err(e) => {
                            report(
                                &mut sink,
                                span,
                                key,
                                e.to_string(),
                                format!("write a rate with its unit, e.g. {} = \"550MB/s\"", spec.name),
                            );
                            continue;
                        }
                    },
                    (FigureType::Bool, toml::Value::Boolean(b)) => Value::Bool(*b),
                    (FigureType::Str, toml::Value::String(s)) => Value::Str(s.clone()),
                    (_, other) => {
                        report(
                            &mut sink,
                            span,
                            key,
                            format!("expected {} ({}), found {}", expectation(spec), spec.doc, found(other)),
                            param_type_help(spec),
                        );
                        continue;
                    }
                };
                if let Err(m) = check_value(spec, &value) {
                    report(&mut sink, span, key, m, param_type_help(spec));
                    continue;
                }
                let source = if span.is_some() {
                    format!("{file}: params of {}", nodes[ix].id)
                } else {
                    "command line (--set)".to_string()
                };
                nodes[ix].figures.insert(spec.name.to_string(), Figure { value, source, basis: "measurement".into() });
            }
            // Figures that must agree (a SATA drive's generation is 1 to 3), at the param
            // that made them disagree, else at the part.
            if let Err((fig, m)) = check_together(kind, &nodes[ix].figures) {
                let help = Some(
                    "SATA generations are 1 to 3 (1.5, 3, 6 Gb/s), SAS 1 to 4, NVMe the PCIe generation 1 to 5"
                        .to_string(),
                );
                let from_params = ["interface", fig]
                    .iter()
                    .find_map(|f| prm.iter().find(|(k, _)| k.get_ref() == f).map(|(k, v)| (k.get_ref().clone(), v)));
                match from_params {
                    Some((k, _)) if given_as.contains_key(&(ix, k.clone())) => {
                        sink.cli(&given_as[&(ix, k)], m, help);
                    }
                    Some((k, v)) => sink.at(known(v), format!("{}.params.{k}", key_of[ix]), m, help),
                    None => sink.at(
                        part_span_of[ix].clone(),
                        format!("{}.part", key_of[ix]),
                        format!("part {:?}: {m}", nodes[ix].part),
                        help,
                    ),
                }
            }
        }

        // Ports and what may attach to what.
        let mut used: HashMap<(NodeIx, u32), NodeIx> = HashMap::new();
        let mut next_port: HashMap<NodeIx, u32> = HashMap::new();
        // Port problems of a `count` group are reported once, for its first drive.
        let mut port_reported: HashSet<String> = HashSet::new();
        for ix in 1..nodes.len() {
            let Some(pix) = nodes[ix].parent else {
                continue;
            };
            let key = pending[ix].key.clone();
            let (pk, ck) = (nodes[pix].kind, nodes[ix].kind);
            let (cid, pid, ppart) = (nodes[ix].id.clone(), nodes[pix].id.clone(), nodes[pix].part.clone());
            let pspan = Some(pending[ix].parent.span());
            let attach_err = |sink: &mut Sink, msg: String, help: &str| {
                sink.at(pspan.clone(), format!("{key}.parent"), msg, Some(help.to_string()))
            };
            let nvme = ck == Kind::Drive && nodes[ix].text("interface") == Some("nvme");
            let sas_controller = pk == Kind::Controller && nodes[pix].num("sas_gen", 0.0) > 0.0;
            if nvme {
                // NVMe is PCIe: only the root complex or a PCIe switch carries it.
                if !matches!(pk, Kind::Host | Kind::Switch) {
                    attach_err(
                        &mut sink,
                        format!("NVMe drive {cid:?} cannot attach to a {pk} ({pid:?})"),
                        "attach NVMe drives to \"host\" or a PCIe switch; SATA and SAS controllers, port multipliers and expanders cannot carry NVMe",
                    );
                }
            } else {
                match (pk, ck) {
                    (Kind::Host | Kind::Switch, Kind::Switch | Kind::Controller) => {}
                    (Kind::Controller, Kind::Drive) => {}
                    (Kind::Controller, Kind::Expander) => {
                        if !sas_controller {
                            attach_err(
                                &mut sink,
                                format!(
                                    "SAS expander {cid:?} cannot attach to SATA-only {pid:?} ({ppart}), which has no SAS ports (no sas_gen)"
                                ),
                                "attach the expander to a SAS HBA (e.g. lsi-sas3008) or cascade it from another expander",
                            );
                        }
                    }
                    (Kind::Controller, Kind::PortMultiplier) => {
                        let sup = nodes[pix].text("pm_support").unwrap_or("none");
                        // The catalog's fbs figure says what the PM can do; under a CBS-only
                        // controller it falls back to command-based switching
                        // (`paths::pm_uses_fbs`). Only an fbs = true the user asked for is wrong.
                        let asked_fbs = params_of[ix]
                            .iter()
                            .find(|(k, v)| k.get_ref() == "fbs" && v.get_ref() == &toml::Value::Boolean(true));
                        if sup == "none" {
                            attach_err(
                                &mut sink,
                                format!("controller {pid:?} ({ppart}) does not support port multipliers"),
                                "attach the port multiplier to a controller whose pm_support is cbs or fbs (e.g. marvell-88se9172, jmb585)",
                            );
                        } else if let (true, Some((_, v))) = (sup == "cbs", asked_fbs) {
                            sink.at(
                                known(v).or(pspan.clone()),
                                format!("{key}.params.fbs"),
                                format!(
                                    "controller {pid:?} ({ppart}) supports only command-based switching, but the port multiplier {cid:?} asks for fbs = true"
                                ),
                                Some(
                                    "remove fbs = true (the port multiplier then switches by command), or attach it to a controller whose pm_support is fbs (e.g. asm1166)"
                                        .into(),
                                ),
                            );
                        }
                    }
                    (Kind::PortMultiplier, Kind::Drive) | (Kind::Expander, Kind::Drive | Kind::Expander) => {}
                    (Kind::Drive, _) => attach_err(
                        &mut sink,
                        format!("{pid:?} is a drive and cannot have children"),
                        "attach it to a controller, port multiplier or expander",
                    ),
                    _ => attach_err(
                        &mut sink,
                        format!("a {ck} cannot attach to a {pk} ({pid:?})"),
                        "controllers attach to host or a switch; drives to controllers, port multipliers or expanders",
                    ),
                }
            }
            // SAS drives need a SAS-capable parent.
            if ck == Kind::Drive && nodes[ix].text("interface") == Some("sas") {
                let sas_ok = match pk {
                    Kind::Controller => sas_controller,
                    Kind::Expander => true,
                    _ => false,
                };
                if !sas_ok {
                    attach_err(
                        &mut sink,
                        format!("SAS drive {cid:?} cannot attach to SATA-only {pid:?} ({ppart})"),
                        "use a SAS HBA (e.g. lsi-sas3008) or an expander",
                    );
                }
            }
            // The host and switches have no numbered ports: a port there means nothing.
            if matches!(pk, Kind::Host | Kind::Switch)
                && let Some(p) = &pending[ix].port
            {
                if port_reported.insert(key.clone()) {
                    sink.at(
                        Some(p.span()),
                        format!("{key}.port"),
                        format!(
                            "port = {} means nothing here: {pid:?} is a {pk}, which has no numbered ports",
                            p.get_ref()
                        ),
                        Some(format!(
                            "remove port from {key}; ports number the connectors of controllers, port multipliers and expanders"
                        )),
                    );
                }
                continue;
            }
            // Ports: controllers, port multipliers and expanders have numbered ports.
            if matches!(pk, Kind::Controller | Kind::PortMultiplier | Kind::Expander) {
                let nports = match pk {
                    Kind::Expander => nodes[pix].num("phys", 0.0) as u32,
                    _ => nodes[pix].num("ports", 0.0) as u32,
                };
                let (offset, count) = (pending[ix].offset, pending[ix].count);
                let port = match &pending[ix].port {
                    Some(p) => {
                        let base = *p.get_ref();
                        // With `count`, this drive's port is base + offset; checked, since
                        // base can be any i64.
                        let v = base.checked_add(i64::from(offset));
                        match v.and_then(|v| u32::try_from(v).ok()).filter(|v| *v < nports) {
                            Some(v) => v,
                            None => {
                                if port_reported.insert(key.clone()) {
                                    let shown = v.map_or_else(|| format!("{base} + {offset}"), |v| v.to_string());
                                    let help = if count > 1 && count > nports {
                                        format!(
                                            "count = {count} needs {count} ports, but {pid:?} has {nports}; lower count or spread the drives over more controllers"
                                        )
                                    } else if count > 1 {
                                        format!(
                                            "count = {count} from port {base} needs ports {base} to {}; start at a port from 0 to {}",
                                            i128::from(base) + i128::from(count) - 1,
                                            nports - count
                                        )
                                    } else {
                                        format!("use a port from 0 to {}", nports.saturating_sub(1))
                                    };
                                    sink.at(
                                        Some(p.span()),
                                        format!("{key}.port"),
                                        format!(
                                            "port {shown} does not exist: {pid:?} ({ppart}) has ports 0..{}",
                                            nports.saturating_sub(1)
                                        ),
                                        Some(help),
                                    );
                                }
                                continue;
                            }
                        }
                    }
                    None => {
                        let np = next_port.entry(pix).or_insert(0);
                        while used.contains_key(&(pix, *np)) {
                            *np += 1;
                        }
                        if *np >= nports {
                            if port_reported.insert(key.clone()) {
                                attach_err(
                                    &mut sink,
                                    format!("{pid:?} ({ppart}) has only {nports} ports, and all are taken"),
                                    "add another controller or an expander, or remove a drive",
                                );
                            }
                            continue;
                        }
                        *np
                    }
                };
                if let Some(prev) = used.insert((pix, port), ix) {
                    let pspan2 = pending[ix].port.as_ref().map(|p| p.span()).or(pspan.clone());
                    sink.at(
                        pspan2,
                        format!("{key}.port"),
                        format!("port {port} of {pid:?} is already used by {:?}", nodes[prev].id),
                        Some("give each drive its own port".into()),
                    );
                }
                nodes[ix].port = Some(port);
            }
        }

        // Links.
        let mut generations = BTreeMap::new();
        let host_mps = nodes[0].num("root_mps", 256.0) as u32;
        let cpl = nodes[0].num("completion_bytes", 64.0) as u32;
        for ix in 1..nodes.len() {
            let Some(pix) = nodes[ix].parent else {
                continue;
            };
            let p = &pending[ix];
            let derived = derive_link(&nodes, ix, pix, host_mps, cpl);
            let link = match &p.link {
                None => derived,
                Some(l) => match written_link(&nodes[pix], &derived, l.get_ref()) {
                    Ok(link) => link,
                    Err((message, help)) => {
                        sink.at(Some(l.span()), format!("{}.link", p.key), message, Some(help));
                        derived
                    }
                },
            };
            if link.family != Family::Internal {
                match cat.get_kind(&link.generation_key(), Kind::Link) {
                    Some(part) => {
                        generations.insert(link.generation_key(), generation_figures(part));
                    }
                    None => sink.at(
                        p.link.as_ref().map(|l| l.span()),
                        format!("{}.link", p.key),
                        format!(
                            "no link generation {:?} in the catalog",
                            link.generation_key()
                        ),
                        Some(
                            "`iopath catalog` lists the link generations; a [[part]] of kind link in this file can add one"
                                .into(),
                        ),
                    ),
                }
            }
            nodes[ix].link = link;
        }
        if nodes.iter().filter(|n| n.is_drive()).count() == 0 && drives_complete {
            sink.at(
                None,
                "drive",
                "the topology has no drives",
                Some(
                    "add a [[drive]] with id, part, parent and port, e.g.\n      [[drive]]\n      id = \"d\"\n      part = \"kingston-dc600m-1920\"\n      parent = \"hba\"\n      port = 0"
                        .into(),
                ),
            );
        }
        if !sink.out.is_empty() || !wsink.out.is_empty() {
            return Err(sink.into_error(wsink));
        }
        let drives = (0..nodes.len()).filter(|&i| nodes[i].is_drive()).collect();
        Ok(Topology {
            name: raw
                .name
                .clone()
                .unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file).trim_end_matches(".toml").to_string()),
            description: raw.description.clone().unwrap_or_default(),
            source: raw.source.clone().unwrap_or_default(),
            file: file.to_string(),
            nodes,
            drives,
            workloads,
            generations,
            raw,
            text: text.to_string(),
            catalog: cat,
        })
    }
}

/// Why an id was not accepted.
enum IdProblem {
    /// Not letters, digits, '_' or '-'.
    Invalid,
    /// Another node or drive already has it.
    Duplicate,
}

/// Checks an id's characters and that it is new; reports the problem.
fn check_id(
    sink: &mut Sink,
    id: &Spanned<String>,
    key: &str,
    ids: &HashMap<String, (NodeIx, Range<usize>)>,
) -> Result<(), IdProblem> {
    let s = id.get_ref();
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        sink.at(
            Some(id.span()),
            key,
            format!("id {s:?} must be letters, digits, '_' or '-'"),
            Some("rename it, e.g. \"hba0\"".into()),
        );
        return Err(IdProblem::Invalid);
    }
    if let Some((_, prev)) = ids.get(s) {
        let (l, c) = line_col(sink.text, prev.start);
        sink.at(
            Some(id.span()),
            key,
            format!("id {s:?} is used twice (first at line {l}, column {c})"),
            Some("give every node and drive its own id".into()),
        );
        return Err(IdProblem::Duplicate);
    }
    Ok(())
}

/// Where a node's parent chain walk stands, for finding cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Walk {
    New,
    OnPath,
    Done,
}

/// The span of a value written in the file; `None` for values made up by the loader or
/// given on the command line (span 0..0).
pub(crate) fn known<T>(v: &Spanned<T>) -> Option<Range<usize>> {
    let s = v.span();
    (s.end > 0).then_some(s)
}

/// A TOML value as a message names it: `2.5`, `the string "zero"`, `a table`.
pub(crate) fn found(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the string {s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "a list".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// A whole number, or a diagnostic that says in words what is expected (`what`).
fn integer(sink: &mut Sink, v: &Spanned<toml::Value>, key: &str, what: &str, help: &str) -> Option<i64> {
    match v.get_ref() {
        toml::Value::Integer(i) => Some(*i),
        other => {
            sink.at(known(v), key, format!("expected {what}, found {}", found(other)), Some(help.to_string()));
            None
        }
    }
}

/// The help for a param of the wrong type or value: what the figure is and how to write it.
fn param_type_help(spec: &FigureSpec) -> String {
    let n = spec.name;
    let how = match spec.accepts {
        Accepts::Number if n.ends_with("_mb_s") => {
            format!("{}, or a rate with its unit such as {n} = \"550MB/s\"", expectation(spec))
        }
        Accepts::Number | Accepts::Integer => {
            format!("{} without quotes, e.g. {n} = {}", expectation(spec), spec.range.0)
        }
        Accepts::IntegerOf(of) => format!("{} without quotes, e.g. {n} = {}", expectation(spec), of[0]),
        Accepts::Flag => format!("true or false without quotes, e.g. {n} = false"),
        Accepts::Link { .. } => format!("{} in quotes, e.g. {n} = \"pcie3\"", expectation(spec)),
        Accepts::OneOf(of) => format!("{} in quotes, e.g. {n} = \"{}\"", expectation(spec), of[0]),
    };
    format!("{n} is {}; write {how}", spec.doc)
}

/// The help for a file with nothing to model: a complete minimal topology.
fn minimal_topology_help() -> String {
    [
        "a minimal topology has a host, a controller and a drive:",
        "[host]",
        "part = \"amd-am5\"",
        "",
        "[[node]]",
        "id = \"hba\"",
        "part = \"asm1166\"",
        "parent = \"host\"",
        "",
        "[[drive]]",
        "id = \"d\"",
        "part = \"kingston-dc600m-1920\"",
        "parent = \"hba\"",
        "port = 0",
        "",
        "`iopath catalog` lists the parts; configs/ holds complete examples",
    ]
    .join("\n      ")
}

/// Adds the file's `[[part]]` tables to the catalog, reporting each broken one at the
/// figure, kind or id it is about.
fn load_parts(sink: &mut Sink, cat: &mut Catalog, parts: &[crate::catalog::Part]) {
    if parts.is_empty() {
        return;
    }
    let positions = crate::catalog::part_positions(sink.text);
    for (i, p) in parts.iter().enumerate() {
        let pos = positions.get(i);
        // Every figure's value by its kind, each at its own position, all reported at once.
        let mut found_here = Vec::new();
        for (k, f) in &p.figures {
            let Some(spec) = figure_spec(p.kind, k) else {
                continue;
            };
            if let Err(m) = check_value(spec, &f.value) {
                let at = pos.and_then(|pp| pp.figures.iter().find(|(pk, _)| pk.get_ref() == k));
                let span = at.and_then(|(pk, v)| v.get_ref().value.as_ref().and_then(known).or_else(|| known(pk)));
                found_here.push((span, format!("part[{i}].figures.{k}"), format!("part {:?}: {m}", p.id), spec));
            }
        }
        // In file order.
        found_here.sort_by_key(|(span, ..)| span.as_ref().map_or(usize::MAX, |s| s.start));
        let bad = !found_here.is_empty();
        for (span, key, message, spec) in found_here {
            sink.at(span, key, message, Some(param_type_help(spec)));
        }
        if bad {
            sink.broken_parts.insert(p.id.to_ascii_lowercase());
            continue;
        }
        let t = toml::to_string(&PartFileOut { part: vec![p.clone()] }).unwrap_or_default();
        let Err(e) = cat.overlay(sink.file, &t) else {
            continue;
        };
        // The error's own text without the file name, which the diagnostic already shows.
        let message = match e {
            CatalogError::Parse { message, .. } | CatalogError::Part { message, .. } => message,
        };
        let figure = pos.and_then(|pp| {
            pp.figures.keys().find(|k| {
                message.contains(&format!("figure {:?}", k.get_ref()))
                    || message.starts_with(&format!("{} ", k.get_ref()))
            })
        });
        let (span, key, help) = match figure {
            Some(k) => (
                known(k),
                format!("part[{i}].figures.{}", k.get_ref()),
                if message.contains("unknown figure") {
                    format!(
                        "a {} has the figures: {}",
                        p.kind,
                        figure_names(p.kind).collect::<Vec<_>>().join(", ")
                    )
                } else {
                    format!(
                        "write it as figures.{} = {{ value = ..., source = \"where the number comes from\", basis = \"datasheet\" }}",
                        k.get_ref()
                    )
                },
            ),
            None if message.contains("in the catalog, not a") => (
                pos.and_then(|pp| pp.kind.as_ref()).and_then(known),
                format!("part[{i}].kind"),
                "a [[part]] with a catalog id changes that part's figures and keeps its kind; use a new id for a new part".to_string(),
            ),
            None => (
                pos.and_then(|pp| pp.id.as_ref()).and_then(known),
                format!("part[{i}].id"),
                "see `iopath catalog` for complete parts of each kind to copy from".to_string(),
            ),
        };
        sink.at(span, key, format!("part {:?}: {message}", p.id), Some(help));
        sink.broken_parts.insert(p.id.to_ascii_lowercase());
    }
}

/// The link a user wrote for an attachment, checked against what the two ends allow.
/// A PCIe link trains at the narrower and older of slot and card; a width nothing can have
/// (0 lanes, a SATA link with lanes, a wide port wider than the parent) is an error.
fn written_link(parent: &Node, derived: &LinkSpec, s: &str) -> Result<LinkSpec, (String, String)> {
    // Names that are no link, widths no link of the family has (pcie3x3, pcie3x-1, sata3x2,
    // x0) and generations that do not exist are refused here, with the reason.
    let name = parse_link(s).map_err(|e| (e.message, e.help))?;
    let (fam, g) = (name.family, name.generation);
    if fam != derived.family && derived.family != Family::Internal {
        return Err((
            format!("{s:?} is a {} link, but this attachment is {}", family_name(fam), family_name(derived.family)),
            format!("write a {} link such as {}", family_name(derived.family), example_link(derived.family)),
        ));
    }
    let lanes = match (fam, name.lanes) {
        (Family::Sata, _) => 1,
        (Family::Sas, Some(n)) => {
            let (have, what) = match parent.kind {
                Kind::Expander => (parent.num("phys", 0.0), "phys"),
                _ => (parent.num("ports", 0.0), "ports"),
            };
            if f64::from(n) > have {
                return Err((
                    format!(
                        "{s:?} asks for a x{n} wide port, but {:?} ({}) has only {have} {what}",
                        parent.id, parent.part
                    ),
                    format!("write a width from 1 to {have}, e.g. \"sas3x4\""),
                ));
            }
            n
        }
        // Slot and card: the link trains at the narrower of the two.
        (Family::Pcie, n) if derived.family == Family::Pcie => n.map_or(derived.lanes, |n| n.min(derived.lanes)),
        (_, n) => n.unwrap_or(derived.lanes),
    };
    Ok(LinkSpec {
        family: fam,
        generation: if derived.family == Family::Internal { g } else { g.min(derived.generation) },
        lanes,
        ..*derived
    })
}

fn family_name(f: Family) -> &'static str {
    match f {
        Family::Pcie => "PCIe",
        Family::Sata => "SATA",
        Family::Sas => "SAS",
        Family::Internal => "internal",
    }
}

fn example_link(f: Family) -> &'static str {
    match f {
        Family::Pcie => "\"pcie3x2\"",
        Family::Sata => "\"sata2\"",
        Family::Sas => "\"sas3x4\"",
        Family::Internal => "\"internal\"",
    }
}

/// Help for a problem the TOML reader found (syntax, unknown or missing keys, types), given
/// the key path it is at ([`key_at`]).
fn serde_help(msg: &str, key: &str) -> String {
    let last = key.rsplit(['.', ']']).next().unwrap_or_default();
    if msg.contains("unknown field") {
        "remove the key or fix its spelling; `iopath schema` lists every key".to_string()
    } else if msg.contains("missing field `source`") {
        "every figure needs a source, e.g. figures.ports = { value = 4, source = \"datasheet, table 1\" }".to_string()
    } else if msg.contains("missing field") {
        "add the missing key: a [[node]] and a [[drive]] need id, part and parent; `iopath schema` lists what each table needs".to_string()
    } else if msg.contains("invalid type") && msg.contains("expected a string") {
        format!(
            "write {} in double quotes, e.g. {} = \"hba\"",
            if last.is_empty() { "the value" } else { last },
            if last.is_empty() { "parent" } else { last }
        )
    } else if msg.contains("invalid type") && msg.contains("expected a map") {
        "write a table, e.g. params = { fbs = false }".to_string()
    } else if msg.contains("invalid type") && msg.contains("expected a sequence") {
        "write a list in brackets, e.g. drives = [\"d0\", \"d1\"]".to_string()
    } else if msg.contains("invalid type") || msg.contains("invalid value") {
        "check the value's type: ids, parts, parents and links are strings in quotes; ports and counts are whole numbers".to_string()
    } else if msg.contains("string values must be quoted") {
        "put text in double quotes, e.g. part = \"asm1166\"".to_string()
    } else if msg.contains("duplicate key") {
        "a key may appear once per table; remove one of the two".to_string()
    } else if msg.contains("unclosed array table") {
        "close the header with ]], e.g. [[drive]]".to_string()
    } else if msg.contains("unclosed table") {
        "close the header with ], e.g. [host]".to_string()
    } else if msg.contains("basic string") {
        "close the string with a double quote on the same line".to_string()
    } else if msg.contains("recursion limit") {
        "nest tables and values a few levels deep at most; a topology needs no more than [[drive]] and params = { ... }"
            .to_string()
    } else {
        "fix the TOML syntax at this position".to_string()
    }
}

/// The span of the start of the line nested most deeply (dots, brackets and braces in a
/// header or before a value), for reader errors that come without a position.
fn deepest_line(text: &str) -> Range<usize> {
    let mut best = (0usize, 0usize);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let depth = line.chars().filter(|c| matches!(c, '.' | '[' | '{')).count();
        let indent = line.len() - line.trim_start().len();
        if depth > best.0 {
            best = (depth, offset + indent);
        }
        offset += line.len();
    }
    best.1..best.1 + 1
}

/// The key path at a byte offset, read from the text around it: the table in effect (with
/// its index for `[[node]]`-style arrays) and the key on that line, e.g. `drive[1].count`.
/// For messages from the TOML reader, which knows positions but not key paths.
fn key_at(text: &str, offset: usize) -> String {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut lines: Vec<&str> = text[..end].split('\n').collect();
    let current = lines.pop().unwrap_or_default();
    // `[host]` -> "host"; the n-th `[[drive]]` -> "drive[n]".
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut header = |line: &str| {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("[[") {
            let name = h.split(']').next().unwrap_or(h).trim().to_string();
            let n = seen.entry(name.clone()).or_insert(0);
            *n += 1;
            Some(format!("{name}[{}]", *n - 1))
        } else {
            t.strip_prefix('[').map(|h| h.split(']').next().unwrap_or(h).trim().to_string())
        }
    };
    let mut table = String::new();
    for line in lines {
        if let Some(h) = header(line) {
            table = h;
        }
    }
    if let Some(h) = header(current) {
        return h;
    }
    let key = match current.split_once('=') {
        Some((k, _)) if !k.trim().starts_with('#') && !k.contains('"') => k.trim(),
        _ => "",
    };
    match (table.is_empty(), key.is_empty()) {
        (_, true) => table,
        (true, false) => key.to_string(),
        (false, false) => format!("{table}.{key}"),
    }
}

fn new_node(
    id: &str,
    kind: Kind,
    part: Option<crate::catalog::Part>,
    parent: Option<NodeIx>,
    dev: Option<String>,
) -> Node {
    let (pid, pname, figures) = match part {
        Some(p) => (p.id, p.name, p.figures),
        None => (String::new(), String::new(), BTreeMap::new()),
    };
    Node {
        id: id.to_string(),
        kind,
        part: pid,
        part_name: pname,
        parent,
        children: Vec::new(),
        port: None,
        link: LinkSpec::internal(),
        figures,
        dev,
    }
}

fn resolve_part(
    sink: &mut Sink,
    cat: &Catalog,
    name: &Spanned<String>,
    key: &str,
    kinds: &[Kind],
) -> Option<crate::catalog::Part> {
    let n = name.get_ref();
    let span = if name.span().end > 0 { Some(name.span()) } else { None };
    match cat.get(n) {
        // A [[part]] of this file that was rejected, and reported where it is written.
        None if sink.broken_parts.contains(&n.trim().to_ascii_lowercase()) => None,
        Some(p) if kinds.contains(&p.kind) => Some(p.clone()),
        Some(p) => {
            let want: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            sink.at(
                span,
                key,
                format!("part {n:?} is a {}, but a {} is expected here", p.kind, want.join(" or ")),
                Some(match p.kind {
                    Kind::Drive => "drives go in [[drive]] tables".to_string(),
                    _ => "switches, controllers, port multipliers and expanders go in [[node]] tables".to_string(),
                }),
            );
            None
        }
        None => {
            let mut s = Vec::new();
            for k in kinds {
                s.extend(cat.suggest(n, Some(*k)));
            }
            sink.at(
                span,
                key,
                format!("unknown part {n:?}{}", did_you_mean(&s)),
                Some(
                    "`iopath catalog` lists the built-in parts; a [[part]] table in this file can define a new one"
                        .into(),
                ),
            );
            None
        }
    }
}

fn generation_figures(p: &crate::catalog::Part) -> GenerationFigures {
    let f = |k: &str| match p.figures.get(k).map(|f| &f.value) {
        Some(Value::Num(n)) => *n,
        _ => 0.0,
    };
    GenerationFigures {
        line_gbps: f("line_gbps"),
        encoding: f("encoding"),
        frame_overhead_bytes: f("frame_overhead_bytes"),
        frame_payload_bytes: f("frame_payload_bytes"),
        handshake_bytes: f("handshake_bytes"),
        management_share: f("management_share"),
        command_overhead_bytes: f("command_overhead_bytes"),
        write_frame_extra_bytes: f("write_frame_extra_bytes"),
    }
}

/// The link a node has to its parent, from both parts' figures.
fn derive_link(nodes: &[Node], ix: NodeIx, pix: NodeIx, host_mps: u32, cpl: u32) -> LinkSpec {
    let n = &nodes[ix];
    let p = &nodes[pix];
    let sata = |g: f64| LinkSpec {
        family: Family::Sata,
        generation: g.clamp(1.0, 3.0) as u8,
        lanes: 1,
        mps: 0,
        completion_bytes: 0,
    };
    // The MPS of a PCIe link is the smallest any element on the way to the root supports.
    let mps_up = |start: NodeIx| -> u32 {
        let mut m = host_mps;
        let mut cur = Some(start);
        while let Some(c) = cur {
            if nodes[c].kind == Kind::Switch {
                m = m.min(nodes[c].num("mps", 4096.0) as u32);
            }
            cur = nodes[c].parent;
        }
        m
    };
    match n.kind {
        Kind::Switch | Kind::Controller => {
            let up = n.text("uplink").unwrap_or("internal");
            match parse_generation(up) {
                Some((Family::Pcie, g, lanes_in_name, _)) => {
                    let lanes = lanes_in_name.unwrap_or(n.num("lanes", 1.0) as u32);
                    let mps = (n.num("mps", 256.0) as u32).min(mps_up(pix));
                    LinkSpec { family: Family::Pcie, generation: g, lanes, mps, completion_bytes: cpl }
                }
                _ => LinkSpec::internal(),
            }
        }
        Kind::PortMultiplier => sata(n.num("sata_gen", 2.0).min(p.num("sata_gen", 3.0))),
        Kind::Expander => {
            let g = n.num("sas_gen", 3.0).min(if p.kind == Kind::Expander {
                p.num("sas_gen", 3.0)
            } else {
                p.num("sas_gen", 3.0).max(1.0)
            });
            LinkSpec { family: Family::Sas, generation: g as u8, lanes: 4, mps: 0, completion_bytes: 0 }
        }
        Kind::Drive => {
            let dg = n.num("interface_gen", 3.0);
            match n.text("interface").unwrap_or("sata") {
                "nvme" => LinkSpec {
                    family: Family::Pcie,
                    generation: dg as u8,
                    lanes: n.num("lanes", 4.0) as u32,
                    mps: 256.min(mps_up(pix)),
                    completion_bytes: cpl,
                },
                "sas" => {
                    // A controller's or an expander's SAS generation alike.
                    let pg = p.num("sas_gen", 3.0);
                    LinkSpec {
                        family: Family::Sas,
                        generation: dg.min(pg).max(1.0) as u8,
                        lanes: 1,
                        mps: 0,
                        completion_bytes: 0,
                    }
                }
                _ => {
                    // SATA: the slower of the drive and its port; an expander's SAS3 phy runs SATA at 6G.
                    let pg = match p.kind {
                        Kind::Expander => (p.num("sas_gen", 3.0) + 1.0).min(3.0),
                        _ => p.num("sata_gen", 3.0),
                    };
                    sata(dg.min(pg))
                }
            }
        }
        Kind::Host | Kind::Link => LinkSpec::internal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASM: &str = r#"
name = "t"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "d"
count = 6
part = "kingston-dc600m-1920"
parent = "hba"
port = 0
"#;

    #[test]
    fn loads_a_small_tree() {
        let t = Topology::parse("t.toml", ASM, &Catalog::builtin()).unwrap();
        assert_eq!(t.drives.len(), 6);
        let hba = &t.nodes[t.node("hba").unwrap()];
        assert_eq!(hba.link.family, Family::Pcie);
        assert_eq!((hba.link.generation, hba.link.lanes, hba.link.mps), (3, 2, 512));
        assert_eq!(t.nodes[t.drives[5]].port, Some(5));
    }

    #[test]
    fn reports_position_and_suggestion_for_a_misspelt_part() {
        let bad = ASM.replace("asm1166", "asm1116");
        let e = Topology::parse("t.toml", &bad, &Catalog::builtin()).unwrap_err();
        let d = &e.diagnostics[0];
        assert_eq!((d.line, d.key.as_str()), (7, "node[0].part"));
        assert!(d.message.contains("did you mean") && d.message.contains("\"asm1166\""), "{}", d.message);
    }

    #[test]
    fn too_many_drives_is_an_error() {
        let bad = ASM.replace("count = 6", "count = 7");
        let e = Topology::parse("t.toml", &bad, &Catalog::builtin()).unwrap_err();
        assert!(e.to_string().contains("port 6 does not exist"), "{e}");
    }

    #[test]
    fn overrides_apply_and_validate() {
        let t = Topology::parse("t.toml", ASM, &Catalog::builtin()).unwrap();
        let o: ParamOverride = "hba.lanes=1".parse().unwrap();
        let t2 = t.with_overrides(&[o]).unwrap();
        assert_eq!(t2.nodes[t2.node("hba").unwrap()].link.lanes, 1);
        let bad: ParamOverride = "hba.lanez=1".parse().unwrap();
        let e = t.with_overrides(&[bad]).unwrap_err();
        assert!(e.to_string().contains("did you mean \"lanes\""), "{e}");
    }

    fn errors(text: &str) -> Vec<Diagnostic> {
        match Topology::parse("t.toml", text, &Catalog::builtin()) {
            Ok(_) => panic!("loaded, but should fail:\n{text}"),
            Err(e) => e.diagnostics,
        }
    }

    #[test]
    fn a_link_wider_than_the_card_trains_at_the_cards_width() {
        // Was tests/bad-configs/pending/link-wider-than-card.toml: an x8 HBA in an x16 slot.
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "lsi-sas3008"
parent = "host"
link = "pcie3x16"
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "hba"
port = 0
"#;
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap();
        let link = t.nodes[t.node("hba").unwrap()].link;
        assert_eq!((link.family, link.generation, link.lanes), (Family::Pcie, 3, 8));
        // A narrower slot still narrows the link, and an older one slows it.
        let t = Topology::parse("t.toml", &text.replace("pcie3x16", "pcie2x4"), &Catalog::builtin()).unwrap();
        let link = t.nodes[t.node("hba").unwrap()].link;
        assert_eq!((link.generation, link.lanes), (2, 4));
    }

    #[test]
    fn impossible_link_widths_are_errors() {
        let base = ASM.replace("parent = \"host\"", "parent = \"host\"\nlink = \"L\"");
        for (link, want) in [
            ("pcie3x0", "has no lanes"),
            ("pcie3x99", "not a PCIe width"),
            ("pcie3x99999999999999999999", "not a PCIe width"),
            ("pcie3x-1", "not a number of lanes"),
            ("pcie3x3", "x3 is not a PCIe width"),
            ("pcie9", "PCIe has generations 1 to 5"),
        ] {
            let d = errors(&base.replace("\"L\"", &format!("{link:?}")));
            assert!(d[0].message.contains(want), "{link}: {}", d[0]);
            assert_eq!((d[0].line, d[0].key.as_str()), (9, "node[0].link"));
        }
        let sata = ASM.replace("port = 0", "port = 0\nlink = \"sata3x2\"");
        assert!(errors(&sata)[0].message.contains("a SATA link has one"));
    }

    #[test]
    fn an_fbs_capable_pm_under_a_cbs_controller_loads_and_switches_by_command() {
        // Was tests/bad-configs/pending/fbs-capable-pm-on-cbs-controller.toml: the JMB575's
        // catalog figure fbs = true says what it can do, not what the user asked for.
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1062"
parent = "host"
[[node]]
id = "pm"
part = "jmb575"
parent = "hba"
port = 0
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "pm"
port = 0
"#;
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap();
        let pm = t.node("pm").unwrap();
        assert!(t.nodes[pm].flag("fbs", false), "the catalog figure stays");
        assert!(!crate::paths::pm_uses_fbs(&t, pm));
        // Asking for FBS explicitly is the error, in the file or with --set.
        let asked = text.replace("port = 0\n[[drive]]", "port = 0\nparams = { fbs = true }\n[[drive]]");
        let d = errors(&asked);
        assert_eq!((d.len(), d[0].line, d[0].key.as_str()), (1, 13, "node[1].params.fbs"));
        let set: ParamOverride = "pm.fbs=true".parse().unwrap();
        assert!(t.with_overrides(&[set]).is_err());
    }

    #[test]
    fn a_cycle_is_reported_once_and_not_for_the_nodes_below_it() {
        let text = r#"
[[node]]
id = "a"
part = "broadcom-sas3x28"
parent = "b"
[[node]]
id = "b"
part = "broadcom-sas3x28"
parent = "a"
[[drive]]
id = "d"
part = "kingston-dc600m-1920"
parent = "a"
"#;
        let d = errors(text);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].line, d[0].key.as_str()), (5, "node[0].parent"));
        assert!(d[0].message.contains("\"a\" -> \"b\" -> \"a\""), "{}", d[0]);
    }

    #[test]
    fn a_rejected_id_causes_no_follow_on_errors() {
        let bad = ASM.replace("id = \"hba\"", "id = \"hba 0\"").replace("parent = \"hba\"", "parent = \"hba 0\"");
        let d = errors(&bad);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.contains("must be letters"));
        // An invalid id with count is reported once, not once per drive.
        let bad = ASM.replace("id = \"d\"", "id = \"d x\"");
        assert_eq!(errors(&bad).len(), 1);
    }

    #[test]
    fn workloads_name_existing_drives_and_keep_their_positions() {
        let ok = format!("{ASM}\n[workload.w]\nrw = \"read\"\ndrives = [\"d0\", \"d5\"]\ncopy = [\"d1:d2\"]\n");
        let t = Topology::parse("t.toml", &ok, &Catalog::builtin()).unwrap();
        let w = &t.workloads["w"];
        assert_eq!(w.drives.as_deref(), Some(&["d0".to_string(), "d5".to_string()][..]));
        assert!(w.resolve().is_ok());
        let bad = format!("{ASM}\n[workload.w]\ndrives = [\"d0\", \"d9\"]\ncopy = [\"d1:dd2\"]\nactive = 7\n");
        let d = errors(&bad);
        let shown: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert!(
            shown[0].contains("t.toml:17:17: workload.w.drives[1]: no drive has id \"d9\"; did you mean"),
            "{shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|s| s.contains("t.toml:18:9: workload.w.copy[0]: copy \"d1:dd2\": no drive has id \"dd2\"")),
            "{shown:?}"
        );
        assert!(
            shown.iter().any(|s| s.contains("workload.w.active: active = 7, but the topology has only 6 drives")),
            "{shown:?}"
        );
        assert!(d.iter().all(|d| d.help.is_some()));
    }

    #[test]
    fn huge_and_negative_numbers_are_errors_not_panics() {
        for v in ["9223372036854775807", "-9223372036854775808", "4294967296", "-1"] {
            let port = ASM.replace("port = 0", &format!("port = {v}"));
            assert!(errors(&port)[0].message.contains("does not exist"), "port = {v}");
            let count = ASM.replace("count = 6", &format!("count = {v}"));
            assert!(errors(&count)[0].message.contains("outside 1..4096"), "count = {v}");
            for field in ["iodepth", "numjobs", "rwmixread", "active", "seed"] {
                let w = format!("{ASM}\n[workload.w]\n{field} = {v}\n");
                if let Err(e) = Topology::parse("t.toml", &w, &Catalog::builtin()) {
                    assert!(e.diagnostics[0].key.starts_with("workload.w."), "{e}");
                }
            }
        }
        // The last port of a count group overflows i64.
        let d = errors(&ASM.replace("port = 0", "port = 9223372036854775806"));
        assert_eq!(d.len(), 1, "{d:?}");
    }

    #[test]
    fn an_empty_file_says_so_and_shows_a_minimal_topology() {
        for text in ["", "# nothing\n"] {
            let d = errors(text);
            assert_eq!(d.len(), 1);
            assert!(d[0].message.contains("the file is empty"));
            // The example in the help loads.
            let help = d[0].help.clone().unwrap();
            let example: String = help
                .lines()
                .skip(1)
                .map(|l| l.trim())
                .take_while(|l| !l.starts_with('`'))
                .map(|l| format!("{l}\n"))
                .collect();
            Topology::parse("example.toml", &example, &Catalog::builtin()).unwrap();
        }
    }

    #[test]
    fn reader_errors_name_the_key_path() {
        assert_eq!(key_at("[[drive]]\nid = 1\n[[drive]]\ncount = 2.5\n", 30), "drive[1].count");
        assert_eq!(key_at("name = 5\n", 7), "name");
        assert_eq!(key_at("[host]\n[[node]]\n", 7), "node[0]");
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
