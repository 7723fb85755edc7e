//! Pass 1b: a board (`[host] board = "..."`) becomes nodes and links of the ordinary tree.
//!
//! The file as written names places: `slot = "PCIE1"` and `m2 = "M2_1"` on a `[[node]]`,
//! `port = "SATA3"` and `m2 = "M2_2"` on a `[[drive]]`. This pass checks each against the
//! board ([`crate::board`]), applies the board's sharing rules to everything populated, and
//! rewrites the file's tables as the tree they stand for: the chipset and the onboard
//! controllers and NICs become `[[node]]`s, a card's parent is the CPU or the chipset and its
//! link the slot's effective wiring (`pcie3x4`), a drive on a named port hangs on the port's
//! controller at the port's number. The passes after it see a plain topology, so paths, the
//! bound and the simulator need no change. A conflict (a drive on a port that a populated M.2
//! socket disables, a card wider than its slot) is reported at the value that names the place,
//! with the rule and its source.

use crate::board::{Attach, Board, CHIPSET_ID, Mode, Place};
use crate::catalog::{Catalog, did_you_mean, suggest};
use crate::parts::PartSpec;
use crate::topology::{NodeIx, RawDrive, RawNode, RawTopology, Sink, is_unwritten, known};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

use super::Draft;

/// What the pass found: the board (its slot widths the effective ones) and, by id, where each
/// card and drive sits.
pub(crate) struct Layout {
    board: Board,
    placed: Vec<(String, Place)>,
}

/// Something populated: its place, its mode, and where the file names the place.
struct Occupant {
    place: Place,
    mode: Mode,
    span: Option<Range<usize>>,
    key: String,
    /// The node or drive table it comes from (`node[i]`, or `drive[i]` and the drive's index
    /// in its `count` group).
    table: Table,
}

#[derive(Clone, Copy)]
enum Table {
    Node(usize),
    Drive(usize, u32),
}

/// Expands the board of `raw`, if it names one; without a board, reports places written
/// anyway and tables that lack a parent.
pub(crate) fn expand(sink: &mut Sink, cat: &Catalog, mut raw: RawTopology) -> (RawTopology, Option<Layout>) {
    let board_name = raw.host.as_ref().and_then(|h| h.board.clone());
    let Some(name) = board_name else {
        no_board(sink, &mut raw);
        return (raw, None);
    };
    let Some(builtin) = crate::board::find(name.get_ref()) else {
        sink.at(
            known(&name),
            "host.board",
            format!("no board {:?} in the catalog{}", name.get_ref(), crate::board::suggestion(name.get_ref())),
            Some(format!(
                "the catalog's boards: {}",
                crate::board::builtin().iter().map(|b| b.id.as_str()).collect::<Vec<_>>().join(", ")
            )),
        );
        // Nothing placed on the unknown board is reported again.
        if let Some(h) = raw.host.as_mut()
            && is_unwritten(&h.part)
        {
            h.part = Spanned::new(0..0, "generic-host".to_string());
        }
        drop_named_ports(&mut raw);
        return (raw, None);
    };
    let bios = raw.host.as_ref().and_then(|h| h.bios.clone());
    let in_mode = builtin.with_bios(bios.as_ref().map(|b| b.get_ref().as_str()));
    let board = &in_mode.unwrap_or_else(|message| {
        sink.at(
            bios.as_ref().and_then(known),
            "host.bios",
            message,
            Some(format!("`iopath catalog {}` lists its BIOS modes; leave bios out for the default", builtin.id)),
        );
        builtin.clone()
    });
    if let Some(h) = raw.host.as_mut()
        && is_unwritten(&h.part)
    {
        h.part = Spanned::new(0..0, board.host.clone());
    }
    let mut occupants = Vec::new();
    for (i, n) in raw.node.iter().enumerate() {
        if let Some(o) = place_node(sink, cat, board, i, n) {
            occupants.push(o);
        }
    }
    for (i, d) in raw.drive.iter().enumerate() {
        occupants.extend(place_drives(sink, cat, board, i, d));
    }
    let board_ids = board_node_ids(board);
    for (i, n) in raw.node.iter().enumerate() {
        if board_ids.contains(&n.id.get_ref().as_str()) {
            sink.at(
                known(&n.id),
                format!("node[{i}].id"),
                format!("id {:?} is the board's own {}", n.id.get_ref(), board_node_part(board, n.id.get_ref())),
                Some("rename this node; the board's devices take their ids from the board".into()),
            );
        }
    }
    let populated: Vec<(String, Mode)> = occupants.iter().map(|o| (o.place.name().to_string(), o.mode)).collect();
    let rules = board.apply_rules(&populated);
    conflicts(sink, board, &occupants, &rules);
    let mut effective = board.clone();
    for s in &mut effective.slots {
        s.electrical_lanes = board.effective_lanes(&s.name, &populated).unwrap_or(s.electrical_lanes);
    }
    for m in &mut effective.m2 {
        m.pcie_lanes = board.effective_lanes(&m.name, &populated).unwrap_or(m.pcie_lanes);
    }
    let placed = write_tree(&mut raw, &effective, &occupants);
    // A named port that could not be placed was reported here, not again as a bad number.
    drop_named_ports(&mut raw);
    (raw, Some(Layout { board: effective, placed }))
}

/// Removes port names left in the drive tables (their problem is reported).
fn drop_named_ports(raw: &mut RawTopology) {
    for d in &mut raw.drive {
        if d.port.as_ref().is_some_and(|p| p.get_ref().is_str()) {
            d.port = None;
        }
    }
}

/// After the nodes pass: a table left without a parent had its problem reported by this pass
/// (a missing parent, a place that could not be used), so the tree pass does not report the
/// empty parent again.
pub(crate) fn after_nodes(d: &mut Draft) {
    d.rejected.insert(String::new());
}

/// The ids the board's own devices take in the tree.
fn board_node_ids(b: &Board) -> Vec<&str> {
    let chipset = b.chipset.as_ref().map(|_| CHIPSET_ID);
    chipset.into_iter().chain(b.onboard.iter().map(|o| o.id.as_str())).collect()
}

fn board_node_part(b: &Board, id: &str) -> String {
    match (b.chipset.as_ref().filter(|_| id == CHIPSET_ID), b.onboard_device(id)) {
        (Some(c), _) => format!("chipset ({})", c.part),
        (None, Some(o)) => format!("onboard device ({})", o.part),
        _ => "device".into(),
    }
}

/// Without a board: a slot, socket or named port cannot be placed, and a table must name its
/// parent (the file reader's words, at the table's header, as before boards existed).
fn no_board(sink: &mut Sink, raw: &mut RawTopology) {
    if let Some(h) = raw.host.as_mut()
        && is_unwritten(&h.part)
    {
        // Reported here; the nodes pass then resolves a part that exists, not "".
        h.part = Spanned::new(0..0, "generic-host".to_string());
        let at = sink.text.find("[host]").or_else(|| sink.text.find("host")).map(|i| i..i + 1);
        sink.at(
            at,
            "host",
            "missing field `part`",
            Some("name the host part (part = \"amd-am5\") or a board (board = \"...\"), whose host it takes".into()),
        );
    }
    let help = || {
        Some(format!(
            "name the board in [host], e.g. board = \"msi-meg-b550-unify\" (the catalog has {} boards)",
            crate::board::builtin().len()
        ))
    };
    if let Some(b) = raw.host.as_ref().and_then(|h| h.bios.as_ref()) {
        sink.at(known(b), "host.bios", format!("bios = {:?} needs a board", b.get_ref()), help());
    }
    for (i, n) in raw.node.iter().enumerate() {
        for (what, v) in [("slot", &n.slot), ("m2", &n.m2)] {
            if let Some(v) = v {
                sink.at(
                    known(v),
                    format!("node[{i}].{what}"),
                    format!("{what} = {:?} needs a board", v.get_ref()),
                    help(),
                );
            }
        }
        if is_unwritten(&n.parent) && n.slot.is_none() && n.m2.is_none() {
            missing_parent(sink, "node", i);
        }
    }
    for (i, d) in raw.drive.iter().enumerate() {
        if let Some(v) = &d.m2 {
            sink.at(known(v), format!("drive[{i}].m2"), format!("m2 = {:?} needs a board", v.get_ref()), help());
        }
        if is_unwritten(&d.parent) && d.m2.is_none() {
            missing_parent(sink, "drive", i);
        }
    }
}

fn missing_parent(sink: &mut Sink, table: &str, i: usize) {
    let span = header_span(sink.text, table, i);
    sink.at(
        span,
        format!("{table}[{i}]"),
        "missing field `parent`",
        Some(format!(
            "a [[{table}]] needs parent = \"host\" or the id of a [[node]]; on a board, a place instead (`iopath schema`)"
        )),
    );
}

/// The span of the `i`-th `[[table]]` header of the file.
fn header_span(text: &str, table: &str, i: usize) -> Option<Range<usize>> {
    let mut offset = 0;
    let mut seen = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.strip_prefix("[[").and_then(|h| h.split(']').next()).is_some_and(|h| h.trim() == table) {
            if seen == i {
                let at = offset + line.len() - t.len();
                return Some(at..at + 1);
            }
            seen += 1;
        }
        offset += line.len();
    }
    None
}

/// The typed figures of a catalog part, when it has one that resolves (an unknown part is
/// the parts pass's to report).
fn spec(cat: &Catalog, part: &str) -> Option<PartSpec> {
    cat.get(part).and_then(crate::parts::spec_of)
}

/// An unknown place's diagnostic: the board's places of that kind, closest first.
fn unknown_place(sink: &mut Sink, board: &Board, v: &Spanned<String>, key: &str, what: &str, names: Vec<String>) {
    let s = suggest(v.get_ref(), names.iter().map(|n| n.as_str()));
    sink.at(
        known(v),
        key,
        format!("{} has no {what} {:?}{}", board.name, v.get_ref(), did_you_mean(&s)),
        Some(format!("its {what}s: {}; `iopath catalog {}` shows the board", names.join(", "), board.id)),
    );
}

/// A card in a slot or M.2 socket: where, checked against the board.
fn place_node(sink: &mut Sink, cat: &Catalog, board: &Board, i: usize, n: &RawNode) -> Option<Occupant> {
    let key = format!("node[{i}]");
    let (what, v) = match (&n.slot, &n.m2) {
        (Some(s), None) => ("slot", s),
        (None, Some(m)) => ("m2", m),
        (None, None) => {
            if is_unwritten(&n.parent) {
                missing_parent(sink, "node", i);
            }
            return None;
        }
        (Some(_), Some(m)) => {
            sink.at(known(m), format!("{key}.m2"), "a card sits in a slot or an M.2 socket, not both", None);
            return None;
        }
    };
    if !is_unwritten(&n.parent) || n.link.is_some() {
        let (k, span) = match &n.link {
            Some(l) if is_unwritten(&n.parent) => ("link", known(l)),
            _ => ("parent", known(&n.parent)),
        };
        sink.at(
            span,
            format!("{key}.{k}"),
            format!("a card in {what} {:?} takes its {k} from the board", v.get_ref()),
            Some(format!("remove {k}: the board's wiring gives the link and the parent (CPU or chipset)")),
        );
        return None;
    }
    // A card whose part is unknown (reported by the parts pass) is placed as one lane, so
    // that this pass still reports the slot's own problems.
    let lanes = spec(cat, n.part.get_ref()).and_then(|s| s.lanes()).unwrap_or(1) as u8;
    let place = if what == "slot" {
        let Some(slot) = board.slot(v.get_ref()) else {
            unknown_place(
                sink,
                board,
                v,
                &format!("{key}.slot"),
                "slot",
                board.slots.iter().map(|s| s.name.clone()).collect(),
            );
            return None;
        };
        if lanes > slot.physical_lanes && !slot.open_end {
            sink.at(
                known(v),
                format!("{key}.slot"),
                format!(
                    "{:?} ({}) is a x{lanes} card; slot {} of the {} is x{} long and closed at the end",
                    n.id.get_ref(),
                    n.part.get_ref(),
                    slot.name,
                    board.name,
                    slot.physical_lanes
                ),
                Some(format!(
                    "put it in a slot at least x{lanes} long (`iopath catalog {}`); source: {}",
                    board.id, slot.source
                )),
            );
            return None;
        }
        Place::Slot(slot.name.clone())
    } else {
        let Some(m) = board.m2_socket(v.get_ref()) else {
            unknown_place(
                sink,
                board,
                v,
                &format!("{key}.m2"),
                "M.2 socket",
                board.m2.iter().map(|s| s.name.clone()).collect(),
            );
            return None;
        };
        if m.pcie_gen.is_none() {
            sink.at(
                known(v),
                format!("{key}.m2"),
                format!("M.2 socket {} of the {} is SATA only; a card needs PCIe lanes", m.name, board.name),
                Some(format!("use a socket with PCIe lanes; source: {}", m.source)),
            );
            return None;
        }
        Place::M2(m.name.clone())
    };
    Some(Occupant { place, mode: Mode::Pcie, span: known(v), key: format!("{key}.{what}"), table: Table::Node(i) })
}

/// A drive (or a `count` group) on named SATA ports or in an M.2 socket.
fn place_drives(sink: &mut Sink, cat: &Catalog, board: &Board, i: usize, d: &RawDrive) -> Vec<Occupant> {
    let key = format!("drive[{i}]");
    let named_port = match d.port.as_ref().map(|p| (p, p.get_ref())) {
        Some((p, toml::Value::String(s))) => Some(Spanned::new(p.span(), s.clone())),
        _ => None,
    };
    if named_port.is_none() && d.m2.is_none() {
        if is_unwritten(&d.parent) {
            missing_parent(sink, "drive", i);
        }
        return Vec::new();
    }
    if !is_unwritten(&d.parent) || d.link.is_some() {
        let (k, span) = if is_unwritten(&d.parent) {
            ("link", d.link.as_ref().and_then(known))
        } else {
            ("parent", known(&d.parent))
        };
        sink.at(
            span,
            format!("{key}.{k}"),
            format!(
                "a drive on a board's {} takes its {k} from the board",
                if d.m2.is_some() { "M.2 socket" } else { "named port" }
            ),
            Some(format!("remove {k}, or give a port number on the parent instead of a port name")),
        );
        return Vec::new();
    }
    let count = match d.count.as_ref().map(|c| c.get_ref()) {
        None => 1,
        Some(toml::Value::Integer(n)) if (1..=4096).contains(n) => *n as u32,
        // The nodes pass reports a bad count.
        Some(_) => return Vec::new(),
    };
    let interface =
        spec(cat, d.part.get_ref()).and_then(|s| s.drive().map(|d| d.interface.as_str())).unwrap_or_default();
    if let Some(m2) = &d.m2 {
        if d.port.is_some() {
            sink.at(
                d.port.as_ref().and_then(known),
                format!("{key}.port"),
                "a drive in an M.2 socket has no port",
                None,
            );
            return Vec::new();
        }
        return m2_drive(sink, board, &key, i, m2, count, interface).into_iter().collect();
    }
    let Some(p) = named_port else { return Vec::new() };
    let Some((group, first)) = board.sata_port(p.get_ref()) else {
        let names = board.sata.iter().flat_map(|g| g.ports.clone()).collect();
        unknown_place(sink, board, &p, &format!("{key}.port"), "SATA port", names);
        return Vec::new();
    };
    if interface == "nvme" {
        sink.at(
            known(&p),
            format!("{key}.port"),
            format!("an NVMe drive cannot use SATA port {}", p.get_ref()),
            Some("put it in an M.2 socket with PCIe lanes (m2 = \"...\")".into()),
        );
        return Vec::new();
    }
    if first + count as usize > group.ports.len() {
        sink.at(
            known(&p),
            format!("{key}.port"),
            format!(
                "{count} drives from {} need {} consecutive ports of {}, which has {} ({})",
                group.ports[first],
                count,
                group.controller,
                group.ports.len() - first,
                group.ports[first..].join(", ")
            ),
            Some("split the group into [[drive]] tables, one per controller's ports".into()),
        );
        return Vec::new();
    }
    (0..count)
        .map(|k| Occupant {
            place: Place::Sata(group.ports[first + k as usize].clone()),
            mode: Mode::Sata,
            span: known(&p),
            key: format!("{key}.port"),
            table: Table::Drive(i, k),
        })
        .collect()
}

fn m2_drive(
    sink: &mut Sink,
    board: &Board,
    key: &str,
    i: usize,
    m2: &Spanned<String>,
    count: u32,
    interface: &str,
) -> Option<Occupant> {
    let Some(m) = board.m2_socket(m2.get_ref()) else {
        unknown_place(
            sink,
            board,
            m2,
            &format!("{key}.m2"),
            "M.2 socket",
            board.m2.iter().map(|s| s.name.clone()).collect(),
        );
        return None;
    };
    if count != 1 {
        sink.at(known(m2), format!("{key}.m2"), "an M.2 socket holds one drive; remove count", None);
        return None;
    }
    let mode = if interface == "nvme" { Mode::Pcie } else { Mode::Sata };
    let fits = match mode {
        Mode::Pcie => m.pcie_gen.is_some(),
        Mode::Sata => m.sata_port.is_some() && interface == "sata",
    };
    if !fits {
        let has = match (m.pcie_gen, &m.sata_port) {
            (Some(g), Some(_)) => format!("PCIe {g}.0 x{} and SATA", m.pcie_lanes),
            (Some(g), None) => format!("PCIe {g}.0 x{} only", m.pcie_lanes),
            _ => "SATA only".to_string(),
        };
        sink.at(
            known(m2),
            format!("{key}.m2"),
            format!("M.2 socket {} of the {} takes {has}; this drive is {interface}", m.name, board.name),
            Some(format!("choose another socket or drive; source: {}", m.source)),
        );
        return None;
    }
    Some(Occupant {
        place: Place::M2(m.name.clone()),
        mode,
        span: known(m2),
        key: format!("{key}.m2"),
        table: Table::Drive(i, 0),
    })
}

/// A populated place that a rule disables is a conflict, reported at the place as written
/// with the rule, what triggers it, the manual's words and the source.
fn conflicts(sink: &mut Sink, board: &Board, occupants: &[Occupant], rules: &crate::board::RuleState) {
    for o in occupants {
        let Some(r) = rules.disabled.get(o.place.name()) else {
            continue;
        };
        let mode = match r.mode {
            Some(Mode::Sata) => " with a SATA device",
            Some(Mode::Pcie) => " with a PCIe device",
            None => "",
        };
        sink.at(
            o.span.clone(),
            o.key.clone(),
            format!(
                "{} cannot be used: {} {}{mode} disables it (rule {} of the {}: {})",
                o.place,
                r.when.join(" and "),
                if r.when.len() == 1 { "populated" } else { "populated together" },
                r.id,
                board.name,
                r.manual
            ),
            Some(format!(
                "use another place (`iopath catalog {}` lists them) or leave {} empty; source: {}",
                board.id,
                r.when.join(", "),
                r.source
            )),
        );
    }
}

/// Writes the board's devices and every placement into the file's tables; returns, by id,
/// where each card and drive sits.
fn write_tree(raw: &mut RawTopology, b: &Board, occupants: &[Occupant]) -> Vec<(String, Place)> {
    let mut placed = Vec::new();
    let unplaced = |s: &str| Spanned::new(0..0, s.to_string());
    for o in occupants {
        match o.table {
            Table::Node(i) => {
                let n = &mut raw.node[i];
                let (attach, g, lanes) = match &o.place {
                    Place::Slot(s) => b.slot(s).map(|s| (s.attach, s.generation, s.electrical_lanes)),
                    _ => b.m2_socket(o.place.name()).map(|m| (m.attach, m.pcie_gen.unwrap_or(1), m.pcie_lanes)),
                }
                .unwrap_or((Attach::Cpu, 1, 1));
                n.parent = unplaced(b.attach_id(attach));
                n.link = Some(unplaced(&format!("pcie{g}x{lanes}")));
                placed.push((n.id.get_ref().clone(), o.place.clone()));
            }
            Table::Drive(i, k) => {
                let d = &mut raw.drive[i];
                let id = if d.count.is_some() { format!("{}{k}", d.id.get_ref()) } else { d.id.get_ref().clone() };
                placed.push((id, o.place.clone()));
                if k > 0 {
                    continue;
                }
                let sata = match &o.place {
                    Place::Sata(p) => Some(p.clone()),
                    _ if o.mode == Mode::Sata => b.m2_socket(o.place.name()).and_then(|m| m.sata_port.clone()),
                    _ => None,
                };
                match sata.and_then(|p| b.sata_port(&p)) {
                    Some((g, ix)) => {
                        d.parent = unplaced(&g.controller);
                        let span = d.port.as_ref().map_or(0..0, |p| p.span());
                        d.port = Some(Spanned::new(span, toml::Value::Integer(ix as i64)));
                    }
                    None => {
                        let m = b.m2_socket(o.place.name());
                        let (attach, g, lanes) =
                            m.map_or((Attach::Cpu, 1, 1), |m| (m.attach, m.pcie_gen.unwrap_or(1), m.pcie_lanes));
                        d.parent = unplaced(b.attach_id(attach));
                        d.link = Some(unplaced(&format!("pcie{g}x{lanes}")));
                    }
                }
                d.m2 = None;
            }
        }
    }
    for n in &mut raw.node {
        n.slot = None;
        n.m2 = None;
    }
    raw.node.extend(board_nodes(b));
    placed
}

/// The board's chipset and onboard devices as `[[node]]`s, after the file's own.
fn board_nodes(b: &Board) -> Vec<RawNode> {
    let s = |v: &str| Spanned::new(0..0, v.to_string());
    let mut out = Vec::new();
    if let Some(c) = &b.chipset {
        out.push(RawNode {
            id: s(CHIPSET_ID),
            part: s(&c.part),
            parent: s("host"),
            slot: None,
            m2: None,
            port: None,
            link: None,
            params: BTreeMap::new(),
        });
    }
    for o in &b.onboard {
        let params = o.params.iter().map(|(k, v)| (s(k), Spanned::new(0..0, v.clone()))).collect();
        out.push(RawNode {
            id: s(&o.id),
            part: s(&o.part),
            parent: s(b.attach_id(o.attach)),
            slot: None,
            m2: None,
            port: None,
            link: o.link.as_deref().map(s),
            params,
        });
    }
    out
}

/// The loaded topology's board and placements, by node index.
pub(crate) fn placement(layout: Option<Layout>, d: &Draft) -> (Option<Board>, Vec<(NodeIx, Place)>) {
    let Some(l) = layout else {
        return (None, Vec::new());
    };
    let placed = l.placed.into_iter().filter_map(|(id, p)| d.ids.get(&id).map(|(ix, _)| (*ix, p))).collect();
    (Some(l.board), placed)
}

#[cfg(test)]
mod tests {
    use super::header_span;

    #[test]
    fn header_span_finds_the_nth_table_header_and_skips_other_tables() {
        let text = "[host]\npart = \"x\"\n[[node]]\nid = \"a\"\n[[drive]]\nid = \"d\"\n  [[node]]\nid = \"b\"\n";
        // The second [[node]] starts at line 7, column 3: offset of "[[" on that line.
        let at = header_span(text, "node", 1).unwrap().start;
        assert_eq!(crate::topology::line_col(text, at), (7, 3));
        assert_eq!(header_span(text, "drive", 0).map(|s| crate::topology::line_col(text, s.start)), Some((5, 1)));
        assert_eq!(header_span(text, "node", 2), None);
    }
}
