//! Pass 2: the host, every `[[node]]` and every `[[drive]]` (a `count` group expanded), with
//! ids checked, parts resolved and ports read as numbers.

use super::parts::resolve_part;
use super::{Draft, Pending};
use crate::catalog::{Catalog, Kind, Part};
use crate::link::LinkSpec;
use crate::parts::PartSpec;
use crate::topology::{Node, NodeIx, RawDrive, RawHost, RawTopology, Sink, found, known, line_col};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use toml::Spanned;

/// Collects the nodes of the file in file order, the host first, reporting bad ids, counts,
/// ports and part names.
pub(crate) fn collect(sink: &mut Sink, cat: &Catalog, raw: &RawTopology) -> Draft {
    let host_raw = raw.host.clone().unwrap_or(RawHost {
        part: Spanned::new(0..0, "generic-host".to_string()),
        board: None,
        bios: None,
        params: BTreeMap::new(),
    });
    let mut d = Draft {
        nodes: Vec::new(),
        params_of: Vec::new(),
        part_span_of: Vec::new(),
        key_of: Vec::new(),
        pending: Vec::new(),
        ids: HashMap::new(),
        rejected: HashSet::new(),
        drives_complete: true,
        given_as: HashMap::new(),
    };
    let host_part = resolve_part(sink, cat, &host_raw.part, "host.part", &[Kind::Host]);
    let host = Pending {
        key: "host".into(),
        parent: Spanned::new(0..0, String::new()),
        port: None,
        offset: 0,
        count: 1,
        link: None,
    };
    d.push(new_node("host", Kind::Host, host_part, None), host_raw.params.clone(), known(&host_raw.part), host);
    d.ids.insert("host".to_string(), (0, 0..0));
    for (i, n) in raw.node.iter().enumerate() {
        let key = format!("node[{i}]");
        if check_id(sink, &n.id, &format!("{key}.id"), &d.ids).is_err() {
            d.rejected.insert(n.id.get_ref().clone());
            continue;
        }
        let part = resolve_part(
            sink,
            cat,
            &n.part,
            &format!("{key}.part"),
            &[Kind::Switch, Kind::Controller, Kind::PortMultiplier, Kind::Expander, Kind::Nic],
        );
        let kind = part.as_ref().map(|p| p.kind).unwrap_or(Kind::Controller);
        let port = port_of(sink, &n.port, &key);
        d.ids.insert(n.id.get_ref().clone(), (d.nodes.len(), n.id.span()));
        let pending = Pending { key, parent: n.parent.clone(), port, offset: 0, count: 1, link: n.link.clone() };
        d.push(new_node(n.id.get_ref(), kind, part, None), n.params.clone(), known(&n.part), pending);
    }
    for (i, drive) in raw.drive.iter().enumerate() {
        add_drives(sink, cat, &mut d, i, drive);
    }
    shared_devs(sink, raw);
    d
}

/// Two `[[drive]]` tables naming the same `dev`: the hardware mode would run both drives on
/// one device at once. Reported at the second table's id (`dev` is kept without a position).
fn shared_devs(sink: &mut Sink, raw: &RawTopology) {
    let mut first: HashMap<&str, &str> = HashMap::new();
    for (i, drive) in raw.drive.iter().enumerate() {
        let Some(dev) = drive.dev.as_deref() else { continue };
        match first.get(dev) {
            Some(other) => sink.at(
                Some(drive.id.span()),
                format!("drive[{i}].dev"),
                format!("dev = {dev:?} is also drive {other:?}'s; each drive needs its own device"),
                Some("give each drive its own dev".into()),
            ),
            None => {
                first.insert(dev, drive.id.get_ref());
            }
        }
    }
}

/// The drives of one `[[drive]]` table: one, or `count` of them with ids ID0, ID1, ...
fn add_drives(sink: &mut Sink, cat: &Catalog, d: &mut Draft, i: usize, drive: &RawDrive) {
    let key = format!("drive[{i}]");
    let count = match &drive.count {
        None => 1,
        Some(c) => match integer(
            sink,
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
                d.rejected.insert(drive.id.get_ref().clone());
                d.drives_complete = false;
                return;
            }
            None => {
                d.rejected.insert(drive.id.get_ref().clone());
                d.drives_complete = false;
                return;
            }
        },
    };
    if let (Some(c), Some(dev)) = (&drive.count, &drive.dev)
        && count > 1
    {
        // One device for several drives: the hardware mode would run them all on it at once
        // and credit each with a share of one device's rate.
        sink.at(
            Some(c.span()),
            format!("{key}.dev"),
            format!(
                "count = {count} declares {count} drives, but dev = {dev:?} is one device; each drive needs its own"
            ),
            Some("give each drive its own dev or drop count".into()),
        );
        d.rejected.insert(drive.id.get_ref().clone());
        d.drives_complete = false;
        return;
    }
    let part = resolve_part(sink, cat, &drive.part, &format!("{key}.part"), &[Kind::Drive]);
    let port = port_of(sink, &drive.port, &key);
    for k in 0..count {
        let id = if drive.count.is_some() {
            Spanned::new(drive.id.span(), format!("{}{}", drive.id.get_ref(), k))
        } else {
            drive.id.clone()
        };
        match check_id(sink, &id, &format!("{key}.id"), &d.ids) {
            Ok(()) => {}
            Err(IdProblem::Duplicate) => {
                d.rejected.insert(id.get_ref().clone());
                d.drives_complete = false;
                continue;
            }
            Err(IdProblem::Invalid) => {
                // Every id of the group has the same fault: report it once.
                d.rejected.insert(drive.id.get_ref().clone());
                d.rejected.insert(id.get_ref().clone());
                d.drives_complete = false;
                break;
            }
        }
        d.ids.insert(id.get_ref().clone(), (d.nodes.len(), id.span()));
        let pending = Pending {
            key: key.clone(),
            parent: drive.parent.clone(),
            port: port.clone(),
            offset: k,
            count,
            link: drive.link.clone(),
        };
        let node = new_node(id.get_ref(), Kind::Drive, part.clone(), drive.dev.clone());
        d.push(node, drive.params.clone(), known(&drive.part), pending);
    }
}

/// A `port = N` as written, as a number.
fn port_of(sink: &mut Sink, p: &Option<Spanned<toml::Value>>, key: &str) -> Option<Spanned<i64>> {
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

fn new_node(id: &str, kind: Kind, part: Option<Part>, dev: Option<String>) -> Node {
    let (pid, pname, figures) = match part {
        Some(p) => (p.id, p.name, p.figures),
        None => (String::new(), String::new(), BTreeMap::new()),
    };
    Node {
        id: id.to_string(),
        kind,
        part: pid,
        part_name: pname,
        parent: None,
        children: Vec::new(),
        port: None,
        link: LinkSpec::internal(),
        training: None,
        figures,
        dev,
        spec: PartSpec::Unresolved,
        defaults: BTreeMap::new(),
    }
}
