//! The changes `advise` considers, each an edit of the topology as written
//! ([`RawTopology`]): applied, written out and loaded again through the normal loader, so a
//! change the loader refuses (a card without the ports, SAS drives on a SATA chip) is
//! dropped, never simulated.

use iopath_model::Catalog;
use iopath_model::Topology;
use iopath_model::board::Place;
use iopath_model::catalog::{Kind, Part};
use iopath_model::parts::{ControllerFigures, NicFigures, PartSpec, resolve};
use iopath_model::pool::Layout;
use iopath_model::topology::{NodeIx, RawDrive, RawNode, RawTopology};
use serde::Serialize;
use toml::Spanned;

/// The sort of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Another catalog controller in the same slot.
    ReplaceController,
    /// Drives moved to free ports or to a card added for them.
    SpreadDrives,
    /// A card moved to another slot (a board's free slot or M.2 socket; without a board, a
    /// CPU-attached one).
    MoveCard,
    /// A slot wired at the card's full width.
    WiderSlot,
    /// Another pool layout of the same members, tolerating as many failed members.
    PoolLayout,
    /// A faster NIC (and the client's to match).
    UpgradeNic,
}

/// One candidate change: what it is, what it costs, and the topology with it applied.
#[derive(Debug, Clone)]
pub struct Change {
    pub kind: ChangeKind,
    /// What to do, in words.
    pub summary: String,
    /// What it costs in slots, ports or capacity.
    pub cost: String,
    /// Catalog parts bought for it (for a price list).
    pub parts: Vec<String>,
    /// PCIe slots it takes beyond those in use now.
    pub slots_added: u32,
    /// The topology as written with the change applied.
    pub raw: RawTopology,
}

fn sp<T>(v: T) -> Spanned<T> {
    Spanned::new(0..0, v)
}

/// A resolved catalog controller or NIC that is a card (not inside a chipset or SoC).
pub(crate) fn card_controllers(cat: &Catalog) -> Vec<(&Part, ControllerFigures)> {
    let mut out: Vec<(&Part, ControllerFigures)> = cat
        .parts()
        .filter(|p| p.kind == Kind::Controller)
        .filter_map(|p| match resolve(p.kind, &p.figures).ok()?.spec {
            PartSpec::Controller(c) if c.uplink != "internal" => Some((p, c)),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    out
}

pub(crate) fn card_nics(cat: &Catalog) -> Vec<(&Part, NicFigures)> {
    let mut out: Vec<(&Part, NicFigures)> = cat
        .parts()
        .filter(|p| p.kind == Kind::Nic)
        .filter_map(|p| match resolve(p.kind, &p.figures).ok()?.spec {
            PartSpec::Nic(n) if n.uplink != "internal" && n.port_gbps > 0.0 => Some((p, n)),
            _ => None,
        })
        .collect();
    out.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    out
}

fn uplink_name(gen_and_lanes: (&str, u32)) -> String {
    format!("{}x{}", gen_and_lanes.0, gen_and_lanes.1)
}

/// Every candidate change of `t`, in a fixed order.
pub fn candidates(t: &Topology) -> Vec<Change> {
    let mut out = Vec::new();
    replace_controllers(t, &mut out);
    spread_drives(t, &mut out);
    board_moves(t, &mut out);
    move_cards(t, &mut out);
    pool_layouts(t, &mut out);
    upgrade_nics(t, &mut out);
    out
}

/// Index in `raw.node` of the node with this id.
fn raw_node(raw: &RawTopology, id: &str) -> Option<usize> {
    raw.node.iter().position(|n| n.id.get_ref() == id)
}

/// The raw drive groups (index in `raw.drive`) whose drives attach below node `c`
/// (directly, or through port multipliers and expanders), with the nodes between.
fn groups_below(t: &Topology, c: NodeIx) -> (Vec<usize>, Vec<String>) {
    let raw = t.raw();
    let mut between = Vec::new();
    let mut stack = vec![c];
    let mut ids = vec![t.nodes[c].id.clone()];
    while let Some(n) = stack.pop() {
        for &ch in &t.nodes[n].children {
            if matches!(t.nodes[ch].kind, Kind::PortMultiplier | Kind::Expander) {
                between.push(t.nodes[ch].id.clone());
                ids.push(t.nodes[ch].id.clone());
                stack.push(ch);
            }
        }
    }
    let groups = (0..raw.drive.len()).filter(|&i| ids.iter().any(|id| id == raw.drive[i].parent.get_ref())).collect();
    (groups, between)
}

fn group_size(d: &RawDrive) -> usize {
    d.count.as_ref().and_then(|c| c.get_ref().as_integer()).map(|c| c.max(1) as usize).unwrap_or(1)
}

/// Attaches drive groups `groups` to `parent` on consecutive ports from `first`; removes
/// the nodes in `drop`.
fn reattach(raw: &mut RawTopology, groups: &[usize], parent: &str, first: u32, drop: &[String]) {
    let mut port = first;
    for &g in groups {
        raw.drive[g].parent = sp(parent.to_string());
        raw.drive[g].port = Some(sp(toml::Value::Integer(i64::from(port))));
        port += group_size(&raw.drive[g]) as u32;
    }
    raw.node.retain(|n| !drop.iter().any(|d| d == n.id.get_ref()));
}

/// Another card in a controller's slot: as wired (port multipliers and expanders kept, if
/// the new chip takes them), and with every drive below it on its own port.
fn replace_controllers(t: &Topology, out: &mut Vec<Change>) {
    let cards = card_controllers(t.catalog());
    for (ix, n) in t.nodes.iter().enumerate() {
        let PartSpec::Controller(cur) = &n.spec else { continue };
        if cur.uplink == "internal" {
            continue;
        }
        let Some(ri) = raw_node(t.raw(), &n.id) else { continue };
        let (groups, between) = groups_below(t, ix);
        let drives: usize = groups.iter().map(|&g| group_size(&t.raw().drive[g])).sum();
        let slot = match &t.raw().node[ri].link {
            Some(l) => format!("wired {}", l.get_ref()),
            None => format!(
                "{} now; the file writes no narrower `link`, so it is taken as wide as the card",
                n.link.short_name()
            ),
        };
        for (p, c) in &cards {
            if p.id == n.part {
                continue;
            }
            let mut raw = t.raw().clone();
            raw.node[ri].part = sp(p.id.clone());
            let cost = format!(
                "the same slot ({}); {} of its {} ports used",
                slot,
                if between.is_empty() { n.children.len() } else { drives },
                c.ports
            );
            if between.is_empty() {
                out.push(Change {
                    kind: ChangeKind::ReplaceController,
                    summary: format!("replace {} ({}) with {} ({})", n.id, n.part, p.id, p.name),
                    cost,
                    parts: vec![p.id.clone()],
                    slots_added: 0,
                    raw,
                });
            } else if c.ports as usize >= drives {
                reattach(&mut raw, &groups, &n.id, 0, &between);
                out.push(Change {
                    kind: ChangeKind::ReplaceController,
                    summary: format!(
                        "replace {} ({}) with {} ({}), every drive on its own port (no {})",
                        n.id,
                        n.part,
                        p.id,
                        p.name,
                        between.join(", ")
                    ),
                    cost,
                    parts: vec![p.id.clone()],
                    slots_added: 0,
                    raw,
                });
            }
        }
    }
}

/// Free consecutive ports of a controller for `k` drives: the first port of the run.
fn free_ports(t: &Topology, c: NodeIx, ports: u32, k: usize) -> Option<u32> {
    let used: Vec<u32> = t.nodes[c].children.iter().filter_map(|&ch| t.nodes[ch].port).collect();
    (0..ports).find(|&p| (p..p + k as u32).all(|q| q < ports && !used.contains(&q)))
}

/// A drive group behind a port multiplier or expander, or sharing its controller with
/// other groups, moved to free ports of another controller or to a card added for it.
fn spread_drives(t: &Topology, out: &mut Vec<Change>) {
    let raw = t.raw();
    let cards = card_controllers(t.catalog());
    // Where a card can go: on a board its free slots and M.2 sockets; else the host's root
    // ports and every switch (chipset) below it.
    let slots: Vec<NewSlot> = match &t.board {
        Some(b) => t
            .free_places()
            .into_iter()
            .filter(|p| matches!(p, Place::Slot(_) | Place::M2(_)))
            .map(|p| NewSlot { words: b.describe(&p), parent: String::new(), place: Some(p) })
            .collect(),
        None => std::iter::once("host")
            .chain(t.nodes.iter().filter(|n| n.kind == Kind::Switch).map(|n| n.id.as_str()))
            .map(|id| NewSlot {
                words: if id == "host" { "a CPU-attached slot".into() } else { format!("a slot of {id}") },
                parent: id.to_string(),
                place: None,
            })
            .collect(),
    };
    for (g, d) in raw.drive.iter().enumerate() {
        let Some(parent) = t.node(d.parent.get_ref()) else { continue };
        let behind = matches!(t.nodes[parent].kind, Kind::PortMultiplier | Kind::Expander);
        let shared = raw.drive.iter().enumerate().any(|(h, e)| h != g && e.parent.get_ref() == d.parent.get_ref());
        if !behind && !shared {
            continue;
        }
        let k = group_size(d);
        // A port multiplier or expander left without drives goes.
        let orphan: Vec<String> = if behind && !shared { vec![t.nodes[parent].id.clone()] } else { Vec::new() };
        for (cix, c) in t.nodes.iter().enumerate() {
            let PartSpec::Controller(cf) = &c.spec else { continue };
            if cix == parent || t.nodes[parent].parent == Some(cix) && !behind {
                continue;
            }
            if let Some(first) = free_ports(t, cix, cf.ports, k) {
                let mut raw = raw.clone();
                reattach(&mut raw, &[g], &c.id, first, &orphan);
                out.push(Change {
                    kind: ChangeKind::SpreadDrives,
                    summary: format!(
                        "move {} ({k} drive{}) from {} to free ports of {}",
                        d.id.get_ref(),
                        plural(k),
                        d.parent.get_ref(),
                        c.id
                    ),
                    cost: format!(
                        "{k} free port{} of {} ({} of its {} used now)",
                        plural(k),
                        c.id,
                        c.children.len(),
                        cf.ports
                    ),
                    parts: Vec::new(),
                    slots_added: 0,
                    raw,
                });
            }
        }
        for slot in &slots {
            for (p, cf) in &cards {
                if (cf.ports as usize) < k {
                    continue;
                }
                let mut raw = raw.clone();
                let id = unique_id(t, &format!("{}-new", d.id.get_ref()));
                raw.node.push(RawNode {
                    id: sp(id.clone()),
                    part: sp(p.id.clone()),
                    parent: sp(slot.parent.clone()),
                    port: None,
                    link: None,
                    params: Default::default(),
                    slot: match &slot.place {
                        Some(Place::Slot(n)) => Some(sp(n.clone())),
                        _ => None,
                    },
                    m2: match &slot.place {
                        Some(Place::M2(n)) => Some(sp(n.clone())),
                        _ => None,
                    },
                });
                reattach(&mut raw, &[g], &id, 0, &orphan);
                let at = &slot.words;
                out.push(Change {
                    kind: ChangeKind::SpreadDrives,
                    summary: format!(
                        "add a {} ({}) in {at} and move {} ({k} drive{}) to it",
                        p.id,
                        p.name,
                        d.id.get_ref(),
                        plural(k)
                    ),
                    cost: format!(
                        "one more PCIe slot ({} wide for full speed); {k} of its {} ports",
                        uplink_name((&cf.uplink, cf.lanes)),
                        cf.ports
                    ),
                    parts: vec![p.id.clone()],
                    slots_added: 1,
                    raw,
                });
            }
        }
    }
}

/// A place a new card could take.
struct NewSlot {
    /// The place in words.
    words: String,
    /// The parent node id (empty on a board: the slot says).
    parent: String,
    place: Option<Place>,
}

/// On a board: every card moved to each free slot or M.2 socket (the loader applies the
/// sharing rules to the moved file, so a move that breaks one is dropped).
fn board_moves(t: &Topology, out: &mut Vec<Change>) {
    let Some(b) = &t.board else { return };
    let free: Vec<Place> = t.free_places().into_iter().filter(|p| matches!(p, Place::Slot(_) | Place::M2(_))).collect();
    for (ix, at) in &t.placement {
        let n = &t.nodes[*ix];
        if !matches!(n.kind, Kind::Controller | Kind::Nic) || matches!(at, Place::Sata(_)) {
            continue;
        }
        for to in &free {
            let Ok(raw) = t.with_card_moved(&n.id, to) else { continue };
            out.push(Change {
                kind: ChangeKind::MoveCard,
                summary: format!("move {} from {at} to {to}", n.id),
                cost: format!("{} (frees {at}; {} now)", b.describe(to), n.link.short_name()),
                parts: Vec::new(),
                slots_added: 0,
                raw,
            });
        }
    }
}

fn plural(k: usize) -> &'static str {
    if k == 1 { "" } else { "s" }
}

fn unique_id(t: &Topology, base: &str) -> String {
    let mut id = base.to_string();
    let mut i = 2;
    while t.node(&id).is_some() || t.raw().node.iter().any(|n| n.id.get_ref() == &id) {
        id = format!("{base}{i}");
        i += 1;
    }
    id
}

/// A card in a chipset slot moved to a CPU-attached one; a card in a slot narrower than
/// the card put in one wired at its full width.
fn move_cards(t: &Topology, out: &mut Vec<Change>) {
    let raw = t.raw();
    for (ix, n) in t.nodes.iter().enumerate() {
        // A card on a board moves between the board's places (`board_moves`).
        if t.placement.iter().any(|(p, _)| *p == ix) {
            continue;
        }
        let lanes = match &n.spec {
            PartSpec::Controller(c) if c.uplink != "internal" => (c.uplink.clone(), c.lanes),
            PartSpec::Nic(c) if c.uplink != "internal" => (c.uplink.clone(), c.lanes),
            _ => continue,
        };
        let Some(ri) = raw_node(raw, &n.id) else { continue };
        let Some(parent) = n.parent else { continue };
        if t.nodes[parent].kind == Kind::Switch {
            let mut r = raw.clone();
            r.node[ri].parent = sp("host".to_string());
            out.push(Change {
                kind: ChangeKind::MoveCard,
                summary: format!("move {} from a slot of {} to a CPU-attached slot", n.id, t.nodes[parent].id),
                cost: format!(
                    "a CPU-attached slot ({} wide for full speed) instead of the chipset's",
                    uplink_name((&lanes.0, lanes.1))
                ),
                parts: Vec::new(),
                slots_added: 0,
                raw: r,
            });
        }
        if raw.node[ri].link.is_some() && n.link.lanes < lanes.1 {
            let mut r = raw.clone();
            r.node[ri].link = None;
            out.push(Change {
                kind: ChangeKind::WiderSlot,
                summary: format!(
                    "put {} in a slot wired at its full width ({} instead of {})",
                    n.id,
                    uplink_name((&lanes.0, lanes.1)),
                    n.link.short_name()
                ),
                cost: format!("a slot with {} electrical lanes", lanes.1),
                parts: Vec::new(),
                slots_added: 0,
                raw: r,
            });
        }
    }
}

/// Failed members a layout of `n` members survives (per vdev for ZFS).
fn tolerance(l: Layout, n: usize, unraid_parity: usize) -> usize {
    match l {
        Layout::Unraid => unraid_parity,
        Layout::Stripe | Layout::BtrfsRaid0 => 0,
        _ if l.parity() > 0 => l.parity(),
        _ => l.copies(n).saturating_sub(1),
    }
}

const LAYOUTS: [&str; 16] = [
    "stripe",
    "mirror",
    "raid10",
    "raid5",
    "raid6",
    "btrfs-raid0",
    "btrfs-raid1",
    "btrfs-raid1c3",
    "btrfs-raid10",
    "btrfs-raid5",
    "btrfs-raid6",
    "raidz1",
    "raidz2",
    "raidz3",
    "zfs-mirror",
    "unraid",
];

/// Another layout of a pool's members that survives as many failed members.
fn pool_layouts(t: &Topology, out: &mut Vec<Change>) {
    for (i, p) in t.pools.iter().enumerate() {
        let n = p.vdevs[0].len();
        let parity = t.raw().pool[i].parity.as_ref().map(|v| *v.get_ref() as usize).unwrap_or(1);
        let now = tolerance(p.layout, n, parity);
        for name in LAYOUTS {
            let Some(l) = Layout::parse(name) else { continue };
            if l == p.layout || tolerance(l, n, 1) < now {
                continue;
            }
            if p.vdevs.len() > 1 && l.family() != iopath_model::pool::Family::Zfs {
                continue;
            }
            let mut raw = t.raw().clone();
            let rp = &mut raw.pool[i];
            rp.layout = sp(name.to_string());
            if l.family() != p.layout.family() {
                rp.chunk = None;
                rp.recordsize = None;
                rp.ashift = None;
                rp.parity = None;
                rp.write_mode = None;
                rp.checksum = None;
                rp.compression = None;
                rp.encryption = None;
            }
            out.push(Change {
                kind: ChangeKind::PoolLayout,
                summary: format!("lay pool {} out as {name} instead of {}", p.id, p.layout.name()),
                // The capacity is filled in once the change is loaded (`capacity_note`).
                cost: format!(
                    "survives {} failed member{} per vdev (now {now})",
                    tolerance(l, n, 1),
                    plural(tolerance(l, n, 1))
                ),
                parts: Vec::new(),
                slots_added: 0,
                raw,
            });
        }
    }
}

/// The usable capacity of pool `id` before and after a change, in words.
pub(crate) fn capacity_note(before: &Topology, after: &Topology, id: &str) -> Option<String> {
    let a = before.pool(id)?.usable_bytes(before) as f64 / 1e12;
    let b = after.pool(id)?.usable_bytes(after) as f64 / 1e12;
    Some(format!("usable {a:.1} TB -> {b:.1} TB"))
}

/// A faster NIC in the server NIC's slot, and the same NIC for every client on it whose link
/// is slower.
fn upgrade_nics(t: &Topology, out: &mut Vec<Change>) {
    let nics = card_nics(t.catalog());
    for n in &t.nodes {
        let PartSpec::Nic(cur) = &n.spec else { continue };
        let Some(ri) = raw_node(t.raw(), &n.id) else { continue };
        for (p, f) in &nics {
            if f.port_gbps <= cur.port_gbps {
                continue;
            }
            let mut raw = t.raw().clone();
            raw.node[ri].part = sp(p.id.clone());
            let mut parts = vec![p.id.clone()];
            for c in raw.client.iter_mut().filter(|c| c.nic.get_ref() == &n.id) {
                c.link = sp(p.id.clone());
                parts.push(p.id.clone());
            }
            out.push(Change {
                kind: ChangeKind::UpgradeNic,
                summary: format!(
                    "replace {} ({}) with {} ({}), and the clients' NICs to match",
                    n.id, n.part, p.id, p.name
                ),
                cost: format!(
                    "the same slot ({} trained now; the card is {} wide)",
                    n.link.short_name(),
                    uplink_name((&f.uplink, f.lanes))
                ),
                parts,
                slots_added: 0,
                raw,
            });
        }
    }
}
