//! Topologies: a tree of parts joined by links, written in TOML, loaded in two stages.
//!
//! Stage one ([`RawTopology`]) mirrors the file with serde (`deny_unknown_fields`) and keeps
//! the span of every value. Stage two ([`Topology::from_raw`]) resolves part names against
//! the catalog, checks the tree (parents, ports, cycles, what may attach to what), applies
//! per-node `params`, derives every link, and reports *all* problems at once as
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
    Catalog, Figure, FigureType, Kind, Value, check_value, did_you_mean, figure_names, figure_spec,
    suggest,
};
use crate::link::{Family, GenerationFigures, LinkSpec, parse_generation};
use crate::units::parse_rate;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
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
    /// Named workloads: `[workload.seqread]`.
    #[serde(default)]
    pub workload: BTreeMap<String, WorkloadSpec>,
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
    pub port: Option<Spanned<i64>>,
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
    pub port: Option<Spanned<i64>>,
    /// Declare many identical drives at once (24 bays).
    #[schemars(with = "Option<u32>")]
    pub count: Option<Spanned<i64>>,
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

struct Sink<'a> {
    file: &'a str,
    text: &'a str,
    out: Vec<Diagnostic>,
}

impl Sink<'_> {
    fn at(
        &mut self,
        span: Option<Range<usize>>,
        key: impl Into<String>,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let (line, column) = span.map(|s| line_col(self.text, s.start)).unwrap_or((0, 0));
        self.out.push(Diagnostic {
            file: self.file.to_string(),
            line,
            column,
            key: key.into(),
            message: message.into(),
            help,
        });
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map(|i| before[i + 1..].chars().count() + 1)
        .unwrap_or(before.chars().count() + 1);
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
        let (lhs, rhs) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?} is not NODE.PARAM=VALUE, e.g. pm.fbs=false"))?;
        let (node, param) = lhs
            .trim()
            .split_once('.')
            .ok_or_else(|| format!("{lhs:?} is not NODE.PARAM, e.g. hba.lanes"))?;
        if node.is_empty() || param.is_empty() || rhs.trim().is_empty() {
            return Err(format!("{s:?} is not NODE.PARAM=VALUE, e.g. pm.fbs=false"));
        }
        Ok(ParamOverride {
            node: node.to_string(),
            param: param.to_string(),
            value: Value::parse_cli(rhs),
        })
    }
}

impl Topology {
    /// Reads and validates a topology file.
    pub fn load(path: &std::path::Path, catalog: &Catalog) -> Result<Topology, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            diagnostics: vec![Diagnostic {
                file: file.clone(),
                line: 0,
                column: 0,
                key: String::new(),
                message: format!("cannot read the file: {e}"),
                help: Some("check the path; `ls configs/` lists the built-in examples".to_string()),
            }],
        })?;
        Topology::parse(&file, &text, catalog)
    }

    /// Parses and validates topology text; `file` names it in messages.
    pub fn parse(file: &str, text: &str, catalog: &Catalog) -> Result<Topology, ConfigError> {
        let raw: RawTopology = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let mut sink = Sink {
                    file,
                    text,
                    out: Vec::new(),
                };
                let msg = e.message().trim().to_string();
                let help = serde_help(&msg);
                sink.at(e.span(), "", msg, help);
                return Err(ConfigError {
                    diagnostics: sink.out,
                });
            }
        };
        Topology::from_raw(file, text, raw, catalog, &[])
    }

    /// Returns a copy with figure overrides applied (`--set`, `--vary`, fitting), validated
    /// as if they had been written in the file.
    pub fn with_overrides(&self, overrides: &[ParamOverride]) -> Result<Topology, ConfigError> {
        Topology::from_raw(
            &self.file,
            &self.text,
            self.raw.clone(),
            &self.catalog,
            overrides,
        )
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
        mut raw: RawTopology,
        catalog: &Catalog,
        overrides: &[ParamOverride],
    ) -> Result<Topology, ConfigError> {
        let mut sink = Sink {
            file,
            text,
            out: Vec::new(),
        };
        let mut cat = catalog.clone();
        // Parts defined in the file extend the catalog for this topology.
        for p in &raw.part {
            let t = toml::to_string(&PartFileOut {
                part: vec![p.clone()],
            })
            .unwrap_or_default();
            if let Err(e) = cat.overlay(file, &t) {
                sink.at(
                    None,
                    format!("part.{}", p.id),
                    e.to_string(),
                    Some("see `iopath catalog` for the figure names of each kind".into()),
                );
            }
        }

        // Host.
        let host_raw = raw.host.clone().unwrap_or(RawHost {
            part: Spanned::new(0..0, "generic-host".to_string()),
            params: BTreeMap::new(),
        });
        let mut nodes: Vec<Node> = Vec::new();
        let mut params_of: Vec<BTreeMap<Spanned<String>, Spanned<toml::Value>>> = Vec::new();
        let mut key_of: Vec<String> = Vec::new();
        let host_part = resolve_part(&mut sink, &cat, &host_raw.part, "host.part", &[Kind::Host]);
        nodes.push(new_node("host", Kind::Host, host_part, None, None));
        params_of.push(host_raw.params.clone());
        key_of.push("host".into());

        // Nodes and drives, expanding `count`.
        struct Pending {
            key: String,
            parent: Spanned<String>,
            port: Option<Spanned<i64>>,
            link: Option<Spanned<String>>,
        }
        let mut pending: Vec<Pending> = vec![Pending {
            key: "host".into(),
            parent: Spanned::new(0..0, String::new()),
            port: None,
            link: None,
        }];
        let mut ids: HashMap<String, (NodeIx, Range<usize>)> = HashMap::new();
        ids.insert("host".to_string(), (0, 0..0));
        let check_id = |sink: &mut Sink,
                        id: &Spanned<String>,
                        key: &str,
                        ids: &HashMap<String, (NodeIx, Range<usize>)>|
         -> bool {
            let s = id.get_ref();
            if s.is_empty()
                || !s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                sink.at(
                    Some(id.span()),
                    key,
                    format!("id {s:?} must be letters, digits, '_' or '-'"),
                    Some("rename it, e.g. \"hba0\"".into()),
                );
                return false;
            }
            if let Some((_, prev)) = ids.get(s) {
                let (l, c) = line_col(sink.text, prev.start);
                sink.at(
                    Some(id.span()),
                    key,
                    format!("id {s:?} is used twice (first at line {l}, column {c})"),
                    Some("give every node and drive its own id".into()),
                );
                return false;
            }
            true
        };
        for (i, n) in raw.node.iter().enumerate() {
            let key = format!("node[{i}]");
            if !check_id(&mut sink, &n.id, &format!("{key}.id"), &ids) {
                continue;
            }
            let part = resolve_part(
                &mut sink,
                &cat,
                &n.part,
                &format!("{key}.part"),
                &[
                    Kind::Switch,
                    Kind::Controller,
                    Kind::PortMultiplier,
                    Kind::Expander,
                ],
            );
            let kind = part.as_ref().map(|p| p.kind).unwrap_or(Kind::Controller);
            ids.insert(n.id.get_ref().clone(), (nodes.len(), n.id.span()));
            nodes.push(new_node(n.id.get_ref(), kind, part, None, None));
            params_of.push(n.params.clone());
            key_of.push(key.clone());
            pending.push(Pending {
                key,
                parent: n.parent.clone(),
                port: n.port.clone(),
                link: n.link.clone(),
            });
        }
        for (i, d) in raw.drive.iter().enumerate() {
            let key = format!("drive[{i}]");
            let count = match &d.count {
                None => 1,
                Some(c) if (1..=4096).contains(c.get_ref()) => *c.get_ref() as usize,
                Some(c) => {
                    sink.at(
                        Some(c.span()),
                        format!("{key}.count"),
                        format!("count = {} is outside 1..4096", c.get_ref()),
                        Some("declare between 1 and 4096 identical drives".into()),
                    );
                    continue;
                }
            };
            let part = resolve_part(
                &mut sink,
                &cat,
                &d.part,
                &format!("{key}.part"),
                &[Kind::Drive],
            );
            for k in 0..count {
                let id = if d.count.is_some() {
                    Spanned::new(d.id.span(), format!("{}{}", d.id.get_ref(), k))
                } else {
                    d.id.clone()
                };
                if !check_id(&mut sink, &id, &format!("{key}.id"), &ids) {
                    continue;
                }
                let port = d
                    .port
                    .as_ref()
                    .map(|p| Spanned::new(p.span(), p.get_ref() + k as i64));
                ids.insert(id.get_ref().clone(), (nodes.len(), id.span()));
                nodes.push(new_node(
                    id.get_ref(),
                    Kind::Drive,
                    part.clone(),
                    None,
                    d.dev.clone(),
                ));
                params_of.push(d.params.clone());
                key_of.push(key.clone());
                pending.push(Pending {
                    key: key.clone(),
                    parent: d.parent.clone(),
                    port,
                    link: d.link.clone(),
                });
            }
        }

        // Overrides from the command line become params of their nodes.
        for o in overrides {
            match nodes.iter().position(|n| n.id == o.node) {
                Some(ix) => {
                    let v = match &o.value {
                        Value::Bool(b) => toml::Value::Boolean(*b),
                        Value::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
                            toml::Value::Integer(*n as i64)
                        }
                        Value::Num(n) => toml::Value::Float(*n),
                        Value::Str(s) => toml::Value::String(s.clone()),
                    };
                    params_of[ix]
                        .insert(Spanned::new(0..0, o.param.clone()), Spanned::new(0..0, v));
                }
                None => {
                    let s = suggest(&o.node, nodes.iter().map(|n| n.id.as_str()));
                    sink.at(
                        None,
                        format!("--set {}.{}", o.node, o.param),
                        format!("no node or drive has id {:?}{}", o.node, did_you_mean(&s)),
                        Some("ids are listed by `iopath check`".into()),
                    );
                }
            }
        }

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
        // Cycles: a node whose parent chain never reaches the host.
        for ix in 1..nodes.len() {
            let mut seen = vec![false; nodes.len()];
            let mut cur = ix;
            let mut cyc = false;
            while let Some(p) = nodes[cur].parent {
                if seen[p] {
                    cyc = true;
                    break;
                }
                seen[p] = true;
                cur = p;
            }
            if cyc {
                let pend = &pending[ix];
                sink.at(
                    Some(pend.parent.span()),
                    format!("{}.parent", pend.key),
                    format!(
                        "{:?} is in a cycle of parents and cannot reach the host",
                        nodes[ix].id
                    ),
                    Some("every chain of parents must end at \"host\"".into()),
                );
            }
        }
        if !sink.out.is_empty() {
            return Err(ConfigError {
                diagnostics: sink.out,
            });
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
                let key = format!("{}.params.{}", key_of[ix], k.get_ref());
                let span = if v.span().end > 0 {
                    Some(v.span())
                } else {
                    None
                };
                let Some(spec) = figure_spec(kind, k.get_ref()) else {
                    let s = suggest(k.get_ref(), figure_names(kind));
                    sink.at(
                        if k.span().end > 0 {
                            Some(k.span())
                        } else {
                            None
                        },
                        key,
                        format!(
                            "{:?} is not a figure of a {}{}",
                            k.get_ref(),
                            kind,
                            did_you_mean(&s)
                        ),
                        Some(format!(
                            "a {} accepts: {}",
                            kind,
                            figure_names(kind).collect::<Vec<_>>().join(", ")
                        )),
                    );
                    continue;
                };
                let value = match (spec.ty, v.get_ref()) {
                    (FigureType::Num, toml::Value::Integer(i)) => Value::Num(*i as f64),
                    (FigureType::Num, toml::Value::Float(f)) => Value::Num(*f),
                    (FigureType::Num, toml::Value::String(s)) if spec.name.ends_with("_mb_s") => {
                        match parse_rate(s) {
                            Ok(r) => Value::Num(r.mb_s()),
                            Err(e) => {
                                sink.at(
                                    span,
                                    key,
                                    e.to_string(),
                                    Some(format!(
                                        "write a rate with its unit, e.g. {} = \"550MB/s\"",
                                        spec.name
                                    )),
                                );
                                continue;
                            }
                        }
                    }
                    (FigureType::Bool, toml::Value::Boolean(b)) => Value::Bool(*b),
                    (FigureType::Str, toml::Value::String(s)) => Value::Str(s.clone()),
                    (_, other) => {
                        sink.at(
                            span,
                            key,
                            format!(
                                "expected {} ({}), found {}",
                                type_name(spec.ty),
                                spec.doc,
                                other
                            ),
                            None,
                        );
                        continue;
                    }
                };
                if let Err(m) = check_value(spec, &value) {
                    sink.at(span, key, m, Some(format!("{}: {}", spec.name, spec.doc)));
                    continue;
                }
                let source = if span.is_some() {
                    format!("{file}: params of {}", nodes[ix].id)
                } else {
                    "command line (--set)".to_string()
                };
                nodes[ix].figures.insert(
                    spec.name.to_string(),
                    Figure {
                        value,
                        source,
                        basis: "measurement".into(),
                    },
                );
            }
        }

        // Ports and what may attach to what.
        let mut used: HashMap<(NodeIx, u32), NodeIx> = HashMap::new();
        let mut next_port: HashMap<NodeIx, u32> = HashMap::new();
        for ix in 1..nodes.len() {
            let Some(pix) = nodes[ix].parent else {
                continue;
            };
            let key = pending[ix].key.clone();
            let (pk, ck) = (nodes[pix].kind, nodes[ix].kind);
            let pspan = Some(pending[ix].parent.span());
            let attach_err = |sink: &mut Sink, msg: String, help: &str| {
                sink.at(
                    pspan.clone(),
                    format!("{key}.parent"),
                    msg,
                    Some(help.to_string()),
                )
            };
            match (pk, ck) {
                (Kind::Host | Kind::Switch, Kind::Switch | Kind::Controller) => {}
                (Kind::Host | Kind::Switch, Kind::Drive)
                    if nodes[ix].text("interface") == Some("nvme") => {}
                (Kind::Controller, Kind::Drive | Kind::Expander) => {}
                (Kind::Controller, Kind::PortMultiplier) => {
                    let sup = nodes[pix].text("pm_support").unwrap_or("none");
                    if sup == "none" {
                        attach_err(
                            &mut sink,
                            format!(
                                "controller {:?} ({}) does not support port multipliers",
                                nodes[pix].id, nodes[pix].part
                            ),
                            "attach the port multiplier to a controller whose pm_support is cbs or fbs (e.g. marvell-88se9172, jmb585)",
                        );
                    } else if sup == "cbs" && nodes[ix].flag("fbs", false) {
                        sink.at(pspan.clone(), format!("{key}.params.fbs"), format!("controller {:?} supports only command-based switching, but the port multiplier has fbs = true", nodes[pix].id), Some("set params = { fbs = false } on the port multiplier".into()));
                    }
                }
                (Kind::PortMultiplier, Kind::Drive)
                | (Kind::Expander, Kind::Drive | Kind::Expander) => {}
                (_, Kind::Drive) if nodes[ix].text("interface") == Some("nvme") => {
                    attach_err(
                        &mut sink,
                        format!(
                            "NVMe drive {:?} cannot attach to a {} ({:?})",
                            nodes[ix].id, pk, nodes[pix].id
                        ),
                        "attach NVMe drives to \"host\" or a switch",
                    );
                }
                (Kind::Drive, _) => attach_err(
                    &mut sink,
                    format!("{:?} is a drive and cannot have children", nodes[pix].id),
                    "attach it to a controller, port multiplier or expander",
                ),
                _ => attach_err(
                    &mut sink,
                    format!("a {} cannot attach to a {} ({:?})", ck, pk, nodes[pix].id),
                    "controllers attach to host or a switch; drives to controllers, port multipliers or expanders",
                ),
            }
            // SAS drives need a SAS-capable parent.
            if ck == Kind::Drive && nodes[ix].text("interface") == Some("sas") {
                let sas_ok = match pk {
                    Kind::Controller => nodes[pix].num("sas_gen", 0.0) > 0.0,
                    Kind::Expander => true,
                    _ => false,
                };
                if !sas_ok {
                    attach_err(
                        &mut sink,
                        format!(
                            "SAS drive {:?} cannot attach to SATA-only {:?} ({})",
                            nodes[ix].id, nodes[pix].id, nodes[pix].part
                        ),
                        "use a SAS HBA (e.g. lsi-sas3008) or an expander",
                    );
                }
            }
            // Ports: controllers and port multipliers have numbered ports.
            if matches!(pk, Kind::Controller | Kind::PortMultiplier | Kind::Expander) {
                let nports = match pk {
                    Kind::Expander => nodes[pix].num("phys", 0.0) as u32,
                    _ => nodes[pix].num("ports", 0.0) as u32,
                };
                let port = match &pending[ix].port {
                    Some(p) => {
                        let v = *p.get_ref();
                        if v < 0 || v >= i64::from(nports) {
                            sink.at(
                                Some(p.span()),
                                format!("{key}.port"),
                                format!(
                                    "port {v} does not exist: {:?} ({}) has ports 0..{}",
                                    nodes[pix].id,
                                    nodes[pix].part,
                                    nports.saturating_sub(1)
                                ),
                                Some(format!("use a port from 0 to {}", nports.saturating_sub(1))),
                            );
                            continue;
                        }
                        v as u32
                    }
                    None => {
                        let np = next_port.entry(pix).or_insert(0);
                        while used.contains_key(&(pix, *np)) {
                            *np += 1;
                        }
                        if *np >= nports {
                            attach_err(
                                &mut sink,
                                format!(
                                    "{:?} ({}) has only {} ports, and all are taken",
                                    nodes[pix].id, nodes[pix].part, nports
                                ),
                                "add another controller or an expander, or remove a drive",
                            );
                            continue;
                        }
                        *np
                    }
                };
                if let Some(prev) = used.insert((pix, port), ix) {
                    let pspan2 = pending[ix]
                        .port
                        .as_ref()
                        .map(|p| p.span())
                        .or(pspan.clone());
                    sink.at(
                        pspan2,
                        format!("{key}.port"),
                        format!(
                            "port {port} of {:?} is already used by {:?}",
                            nodes[pix].id, nodes[prev].id
                        ),
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
                Some(l) => match parse_generation(l.get_ref()) {
                    Some((fam, g, lanes, _))
                        if fam == derived.family || derived.family == Family::Internal =>
                    {
                        LinkSpec {
                            family: fam,
                            generation: if derived.family == Family::Internal {
                                g
                            } else {
                                g.min(derived.generation)
                            },
                            lanes: lanes.unwrap_or(derived.lanes).min(
                                if derived.family == Family::Internal {
                                    u32::MAX
                                } else {
                                    derived.lanes.max(lanes.unwrap_or(0))
                                },
                            ),
                            ..derived
                        }
                    }
                    Some((fam, ..)) => {
                        sink.at(
                            Some(l.span()),
                            format!("{}.link", p.key),
                            format!(
                                "{:?} is a {:?} link, but this attachment is {:?}",
                                l.get_ref(),
                                fam,
                                derived.family
                            ),
                            Some(format!(
                                "write a {:?} link such as {}",
                                derived.family,
                                example_link(derived.family)
                            )),
                        );
                        derived
                    }
                    None => {
                        sink.at(Some(l.span()), format!("{}.link", p.key), format!("{:?} is not a link generation", l.get_ref()), Some("write e.g. \"pcie3x2\", \"pcie2x1\", \"sata1\", \"sas3x4\", \"dmi3\"".into()));
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
                        None,
                        format!("{}.link", p.key),
                        format!(
                            "no link generation {:?} in the catalog",
                            link.generation_key()
                        ),
                        None,
                    ),
                }
            }
            nodes[ix].link = link;
        }
        if nodes.iter().filter(|n| n.is_drive()).count() == 0 {
            sink.at(
                None,
                "drive",
                "the topology has no drives",
                Some("add a [[drive]] with id, part, parent and port".into()),
            );
        }
        if !sink.out.is_empty() {
            return Err(ConfigError {
                diagnostics: sink.out,
            });
        }
        let drives = (0..nodes.len()).filter(|&i| nodes[i].is_drive()).collect();
        let workloads = std::mem::take(&mut raw.workload);
        // Validate named workloads now, so a broken one is a config error, not a run-time one.
        for (name, w) in &workloads {
            if let Err(errs) = w.resolve() {
                for e in errs {
                    sink.at(
                        None,
                        format!("workload.{name}.{}", e.field),
                        e.message,
                        None,
                    );
                }
            }
        }
        if !sink.out.is_empty() {
            return Err(ConfigError {
                diagnostics: sink.out,
            });
        }
        raw.workload = workloads.clone();
        Ok(Topology {
            name: raw.name.clone().unwrap_or_else(|| {
                file.rsplit('/')
                    .next()
                    .unwrap_or(file)
                    .trim_end_matches(".toml")
                    .to_string()
            }),
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

#[derive(Serialize)]
struct PartFileOut {
    part: Vec<crate::catalog::Part>,
}

fn type_name(t: FigureType) -> &'static str {
    match t {
        FigureType::Num => "a number",
        FigureType::Bool => "true or false",
        FigureType::Str => "a string",
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

fn serde_help(msg: &str) -> Option<String> {
    if msg.contains("unknown field") {
        Some("remove the key or fix its spelling; `iopath schema` lists every key".to_string())
    } else if msg.contains("missing field") {
        Some("add the missing key; `iopath schema` lists what each table needs".to_string())
    } else if msg.contains("invalid type") {
        Some(
            "check the value's type: ids and parts are strings, ports and counts are integers"
                .to_string(),
        )
    } else {
        Some("fix the TOML syntax at this position".to_string())
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
    let span = if name.span().end > 0 {
        Some(name.span())
    } else {
        None
    };
    match cat.get(n) {
        Some(p) if kinds.contains(&p.kind) => Some(p.clone()),
        Some(p) => {
            let want: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            sink.at(span, key, format!("part {n:?} is a {}, but a {} is expected here", p.kind, want.join(" or ")), Some(match p.kind {
                Kind::Drive => "drives go in [[drive]] tables".to_string(),
                _ => "switches, controllers, port multipliers and expanders go in [[node]] tables".to_string(),
            }));
            None
        }
        None => {
            let mut s = Vec::new();
            for k in kinds {
                s.extend(cat.suggest(n, Some(*k)));
            }
            sink.at(span, key, format!("unknown part {n:?}{}", did_you_mean(&s)), Some("`iopath catalog` lists the built-in parts; a [[part]] table in this file can define a new one".into()));
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
                    LinkSpec {
                        family: Family::Pcie,
                        generation: g,
                        lanes,
                        mps,
                        completion_bytes: cpl,
                    }
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
            LinkSpec {
                family: Family::Sas,
                generation: g as u8,
                lanes: 4,
                mps: 0,
                completion_bytes: 0,
            }
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
                    let pg = if p.kind == Kind::Expander {
                        p.num("sas_gen", 3.0)
                    } else {
                        p.num("sas_gen", 3.0)
                    };
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
        assert_eq!(
            (hba.link.generation, hba.link.lanes, hba.link.mps),
            (3, 2, 512)
        );
        assert_eq!(t.nodes[t.drives[5]].port, Some(5));
    }

    #[test]
    fn reports_position_and_suggestion_for_a_misspelt_part() {
        let bad = ASM.replace("asm1166", "asm1116");
        let e = Topology::parse("t.toml", &bad, &Catalog::builtin()).unwrap_err();
        let d = &e.diagnostics[0];
        assert_eq!((d.line, d.key.as_str()), (7, "node[0].part"));
        assert!(
            d.message.contains("did you mean") && d.message.contains("\"asm1166\""),
            "{}",
            d.message
        );
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

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
