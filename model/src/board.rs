//! Boards: catalog parts that say where a card or a drive can go and what the board's wiring
//! does to it.
//!
//! A board (`catalog/boards.toml`) names its expansion slots (physical and electrical width,
//! PCIe generation, CPU- or chipset-attached), its M.2 sockets (PCIe lanes and/or a SATA
//! port), its SATA ports and the onboard controller that serves them, its onboard NICs and
//! controllers with their links, the chipset (whose uplink to the CPU everything behind it
//! shares), bifurcation options, and the sharing rules its manual states: an M.2 socket that
//! disables SATA ports when populated, a slot that drops to x4 when another is used. Every
//! element cites the manual or specification page it comes from.
//!
//! A topology names its board in `[host]` (`board = "asrock-n100dc-itx"`), places cards in
//! slots (`slot = "PCIE1"`) and M.2 sockets (`m2 = "M2_1"`), and drives on ports
//! (`port = "SATA3"`) and sockets. The loader (`load/boards.rs`) applies the rules and expands
//! the board into the ordinary tree (host -> chipset -> controller -> drive, links at their
//! effective width), so paths, the bound and the simulator need no change.

use crate::catalog::{did_you_mean, suggest};
use crate::topology::{Diagnostic, RawTopology, Topology};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use toml::Spanned;

/// Where a slot's or socket's lanes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Attach {
    /// A CPU root port.
    Cpu,
    /// The chipset (PCH, Promontory): behind its uplink to the CPU.
    Chipset,
}

impl Attach {
    pub fn as_str(self) -> &'static str {
        match self {
            Attach::Cpu => "CPU",
            Attach::Chipset => "chipset",
        }
    }
}

/// How a place is used: a PCIe device (card, NVMe SSD) or a SATA device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Pcie,
    Sata,
}

/// A place on a board where a card or a drive can go.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Place {
    Slot(String),
    M2(String),
    Sata(String),
}

impl Place {
    /// The place's name on the board (`PCIE1`, `M2_1`, `SATA3`).
    pub fn name(&self) -> &str {
        match self {
            Place::Slot(s) | Place::M2(s) | Place::Sata(s) => s,
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Slot(s) => write!(f, "slot {s}"),
            Place::M2(s) => write!(f, "M.2 socket {s}"),
            Place::Sata(s) => write!(f, "SATA port {s}"),
        }
    }
}

/// An expansion slot.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Slot {
    pub name: String,
    /// The connector's width: the widest card that fits (unless `open_end`).
    #[serde(rename = "physical")]
    pub physical_lanes: u8,
    /// The lanes wired to it. In a loaded topology's board: after the sharing rules.
    #[serde(rename = "electrical")]
    pub electrical_lanes: u8,
    /// PCIe generation (`gen` in the file; `gen` is a reserved word in Rust 2024).
    #[serde(rename = "gen")]
    pub generation: u8,
    pub attach: Attach,
    /// An open-ended connector takes a longer card (it trains at the slot's width).
    #[serde(default)]
    pub open_end: bool,
    pub source: String,
    #[serde(default = "datasheet")]
    pub basis: String,
}

/// An M.2 (key M) socket: PCIe lanes, a SATA port, or either.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct M2Socket {
    pub name: String,
    /// PCIe generation of its lanes; none for a SATA-only socket.
    #[serde(default)]
    pub pcie_gen: Option<u8>,
    #[serde(default)]
    pub pcie_lanes: u8,
    /// The SATA port (a name in one of the board's SATA groups) a SATA M.2 SSD uses.
    #[serde(default)]
    pub sata_port: Option<String>,
    pub attach: Attach,
    pub source: String,
    #[serde(default = "datasheet")]
    pub basis: String,
}

/// SATA ports served by one onboard controller, in the controller's port order.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SataGroup {
    /// The id of the onboard controller (an [`Onboard`]) that serves them.
    pub controller: String,
    pub ports: Vec<String>,
    pub source: String,
    #[serde(default = "datasheet")]
    pub basis: String,
}

/// A device soldered on the board: a SATA controller (the chipset's AHCI, a JMB585), a NIC.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Onboard {
    /// Its node id in the topology (`sata`, `lan`); a NIC's id is what `[[client]] nic` names.
    pub id: String,
    /// A catalog part (controller or NIC).
    pub part: String,
    pub attach: Attach,
    /// Its wiring when narrower than the part's own end (a JMB585 on PCIe 3.0 x1).
    #[serde(default)]
    pub link: Option<String>,
    /// Figure overrides the board implies (e.g. `ports` of a chipset SATA controller).
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    pub source: String,
    #[serde(default = "datasheet")]
    pub basis: String,
}

/// The chipset and its uplink to the CPU (a catalog switch part).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Chipset {
    pub part: String,
    pub source: String,
    #[serde(default = "datasheet")]
    pub basis: String,
}

/// How a slot's lanes may be split (a BIOS option, for cards that carry several devices).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Bifurcation {
    pub slot: String,
    /// e.g. "x8x8", "x4x4x4x4".
    pub modes: Vec<String>,
    pub source: String,
}

/// A sharing rule of the manual: when every place of `when` is populated (by a device of
/// `mode`, if given), the places of `disables` cannot be used and `narrows` drops a slot's
/// or socket's lanes.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SharingRule {
    /// A short id, named in conflict messages (`m2_2-sata56`).
    pub id: String,
    pub when: Vec<String>,
    /// Only when the `when` places hold a device of this mode (a SATA M.2 SSD).
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub disables: Vec<String>,
    #[serde(default)]
    pub narrows: Option<Narrow>,
    /// What the manual says, in short.
    pub manual: String,
    pub source: String,
    /// The BIOS lane mode the rule holds in ([`BiosMode`]; `default` = none chosen); none:
    /// every mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bios: Option<String>,
}

/// A BIOS lane setting the manual lists (`[host] bios = "cpu-mode"`): it rewires places
/// (their lanes, generation, CPU or chipset) and the rules written for another mode lapse.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BiosMode {
    pub id: String,
    /// The setting as the manual names it.
    pub setting: String,
    pub places: Vec<Rewire>,
    pub source: String,
}

/// A place as a BIOS mode wires it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rewire {
    pub place: String,
    #[serde(default)]
    pub lanes: Option<u8>,
    #[serde(default, rename = "gen")]
    pub generation: Option<u8>,
    #[serde(default)]
    pub attach: Option<Attach>,
}

/// The name of the BIOS mode a board runs in when the topology chooses none.
pub const DEFAULT_BIOS: &str = "default";

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Narrow {
    pub place: String,
    pub lanes: u8,
}

/// A board: its slots, sockets, ports, onboard devices and sharing rules.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The host part a topology on this board takes unless `[host] part` says otherwise.
    pub host: String,
    #[serde(default)]
    pub chipset: Option<Chipset>,
    #[serde(default, rename = "slot")]
    pub slots: Vec<Slot>,
    #[serde(default, rename = "m2")]
    pub m2: Vec<M2Socket>,
    #[serde(default, rename = "sata")]
    pub sata: Vec<SataGroup>,
    #[serde(default)]
    pub onboard: Vec<Onboard>,
    #[serde(default, rename = "bifurcation")]
    pub bifurcation: Vec<Bifurcation>,
    #[serde(default, rename = "rule")]
    pub rules: Vec<SharingRule>,
    /// BIOS lane modes besides the default.
    #[serde(default, rename = "bios")]
    pub bios: Vec<BiosMode>,
    /// In a loaded topology's board: the BIOS mode chosen (`None`: the default).
    #[serde(skip)]
    pub bios_chosen: Option<String>,
    /// The manual or specification page the board comes from.
    pub source: String,
    #[serde(default)]
    pub notes: String,
}

fn datasheet() -> String {
    "datasheet".to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardsFile {
    board: Vec<Board>,
}

/// The node id of a board's chipset in a topology.
pub const CHIPSET_ID: &str = "chipset";

const BOARDS_TOML: &str = include_str!("../catalog/boards.toml");

/// The built-in boards (`catalog/boards.toml`). The file is part of the program; a broken one
/// fails the catalog's tests.
pub fn builtin() -> &'static [Board] {
    static BOARDS: OnceLock<Vec<Board>> = OnceLock::new();
    BOARDS.get_or_init(|| match toml::from_str::<BoardsFile>(BOARDS_TOML) {
        Ok(f) => f.board,
        Err(e) => panic!("catalog/boards.toml does not parse: {e}"),
    })
}

/// A built-in board by id or alias (case-insensitive).
pub fn find(id: &str) -> Option<&'static Board> {
    let key = id.trim().to_ascii_lowercase();
    builtin().iter().find(|b| b.id == key || b.aliases.iter().any(|a| a.eq_ignore_ascii_case(&key)))
}

/// Board ids close to a misspelt one, as "; did you mean ...?".
pub fn suggestion(id: &str) -> String {
    did_you_mean(&suggest(id, builtin().iter().map(|b| b.id.as_str())))
}

/// What the sharing rules make of a set of populated places.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleState {
    /// Places that cannot be used, with the rule that disables them.
    pub disabled: BTreeMap<String, SharingRule>,
    /// Slots and sockets whose lanes a rule drops, with the lanes and the rule.
    pub narrowed: BTreeMap<String, (u8, SharingRule)>,
}

impl Board {
    pub fn slot(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    pub fn m2_socket(&self, name: &str) -> Option<&M2Socket> {
        self.m2.iter().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The SATA group serving a port and the port's index in it.
    pub fn sata_port(&self, name: &str) -> Option<(&SataGroup, usize)> {
        self.sata.iter().find_map(|g| g.ports.iter().position(|p| p.eq_ignore_ascii_case(name)).map(|i| (g, i)))
    }

    /// The board in a BIOS mode (`None` or `default`: as wired): places rewired as the mode
    /// says, the rules of other modes dropped. `Err`: no such mode, with the board's modes.
    pub fn with_bios(&self, mode: Option<&str>) -> Result<Board, String> {
        let mode = mode.filter(|m| !m.eq_ignore_ascii_case(DEFAULT_BIOS));
        let mut b = self.clone();
        let chosen = match mode {
            None => DEFAULT_BIOS,
            Some(m) => {
                let Some(bm) = self.bios.iter().find(|x| x.id.eq_ignore_ascii_case(m)) else {
                    let ids: Vec<&str> =
                        std::iter::once(DEFAULT_BIOS).chain(self.bios.iter().map(|x| x.id.as_str())).collect();
                    return Err(format!(
                        "{} has no BIOS mode {m:?}{}; its modes: {}",
                        self.name,
                        did_you_mean(&suggest(m, ids.iter().copied())),
                        ids.join(", ")
                    ));
                };
                for r in &bm.places {
                    if let Some(sl) = b.slots.iter_mut().find(|x| x.name.eq_ignore_ascii_case(&r.place)) {
                        sl.electrical_lanes = r.lanes.unwrap_or(sl.electrical_lanes);
                        sl.generation = r.generation.unwrap_or(sl.generation);
                        sl.attach = r.attach.unwrap_or(sl.attach);
                    }
                    if let Some(m2) = b.m2.iter_mut().find(|x| x.name.eq_ignore_ascii_case(&r.place)) {
                        m2.pcie_lanes = r.lanes.unwrap_or(m2.pcie_lanes);
                        m2.pcie_gen = r.generation.or(m2.pcie_gen);
                        m2.attach = r.attach.unwrap_or(m2.attach);
                    }
                }
                b.bios_chosen = Some(bm.id.clone());
                bm.id.as_str()
            }
        };
        b.rules.retain(|r| r.bios.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(chosen)));
        Ok(b)
    }

    pub fn onboard_device(&self, id: &str) -> Option<&Onboard> {
        self.onboard.iter().find(|o| o.id == id)
    }

    /// Every place of the board: slots, M.2 sockets, then SATA ports.
    pub fn places(&self) -> Vec<Place> {
        let slots = self.slots.iter().map(|s| Place::Slot(s.name.clone()));
        let m2 = self.m2.iter().map(|s| Place::M2(s.name.clone()));
        let sata = self.sata.iter().flat_map(|g| g.ports.iter().map(|p| Place::Sata(p.clone())));
        slots.chain(m2).chain(sata).collect()
    }

    /// The place with this name, whatever its kind.
    pub fn place(&self, name: &str) -> Option<Place> {
        self.places().into_iter().find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// A place in words: `slot PCI_E4: chipset, PCIe 3.0 x4, x16 long`.
    pub fn describe(&self, place: &Place) -> String {
        match place {
            Place::Slot(n) => self.slot(n).map_or_else(
                || format!("slot {n}"),
                |s| {
                    format!(
                        "slot {}: {}, PCIe {}.0 x{}, x{} long{}",
                        s.name,
                        s.attach.as_str(),
                        s.generation,
                        s.electrical_lanes,
                        s.physical_lanes,
                        if s.open_end { ", open-ended" } else { "" }
                    )
                },
            ),
            Place::M2(n) => self.m2_socket(n).map_or_else(
                || format!("M.2 {n}"),
                |m| {
                    let pcie = m.pcie_gen.map(|g| format!("PCIe {g}.0 x{}", m.pcie_lanes));
                    let sata = m.sata_port.as_ref().map(|p| format!("SATA (as {p})"));
                    let modes: Vec<String> = pcie.into_iter().chain(sata).collect();
                    format!("M.2 {}: {}, {}", m.name, m.attach.as_str(), modes.join(" or "))
                },
            ),
            Place::Sata(n) => match self.sata_port(n) {
                Some((g, i)) => format!("SATA port {n}: port {i} of {}", g.controller),
                None => format!("SATA port {n}"),
            },
        }
    }

    /// The node id of what a place attaches to.
    pub fn attach_id(&self, a: Attach) -> &'static str {
        match a {
            Attach::Cpu => "host",
            Attach::Chipset => CHIPSET_ID,
        }
    }

    /// The rules that apply to these populated places (name and mode of what is in each).
    pub fn apply_rules(&self, populated: &[(String, Mode)]) -> RuleState {
        let mut st = RuleState::default();
        let holds = |name: &str, mode: Option<Mode>| {
            populated.iter().any(|(p, m)| p.eq_ignore_ascii_case(name) && mode.is_none_or(|want| want == *m))
        };
        for r in &self.rules {
            if !r.when.iter().all(|w| holds(w, r.mode)) {
                continue;
            }
            for d in &r.disables {
                st.disabled.entry(d.clone()).or_insert_with(|| r.clone());
            }
            if let Some(n) = &r.narrows {
                let e = st.narrowed.entry(n.place.clone()).or_insert_with(|| (n.lanes, r.clone()));
                if n.lanes < e.0 {
                    *e = (n.lanes, r.clone());
                }
            }
        }
        st
    }

    /// The lanes a slot or socket runs at with these places populated (its electrical width,
    /// lowered by any rule that applies); `None` for a place without lanes.
    pub fn effective_lanes(&self, place: &str, populated: &[(String, Mode)]) -> Option<u8> {
        let wired = match (self.slot(place), self.m2_socket(place)) {
            (Some(s), _) => s.electrical_lanes,
            (None, Some(m)) if m.pcie_gen.is_some() => m.pcie_lanes,
            _ => return None,
        };
        let st = self.apply_rules(populated);
        Some(st.narrowed.get(place).map_or(wired, |(l, _)| wired.min(*l)))
    }

    /// Problems of the board's own data: names every rule, socket and group refers to exist,
    /// widths are PCIe widths, sources are given. The catalog's tests run it on every board.
    pub fn check(&self) -> Vec<String> {
        let mut out = Vec::new();
        let widths = [1u8, 2, 4, 8, 16];
        let names: Vec<String> = self.places().iter().map(|p| p.name().to_string()).collect();
        for (i, n) in names.iter().enumerate() {
            if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
                out.push(format!("{}: place {n} is named twice", self.id));
            }
        }
        for s in &self.slots {
            if !widths.contains(&s.physical_lanes) || !widths.contains(&s.electrical_lanes) {
                out.push(format!("{}: slot {} has a width that is not a PCIe width", self.id, s.name));
            }
            if s.electrical_lanes > s.physical_lanes || !(1..=5).contains(&s.generation) {
                out.push(format!("{}: slot {}: electrical above physical, or no such generation", self.id, s.name));
            }
        }
        for m in &self.m2 {
            if m.pcie_gen.is_some() && !widths.contains(&m.pcie_lanes) {
                out.push(format!("{}: M.2 {} has {} lanes", self.id, m.name, m.pcie_lanes));
            }
            if m.pcie_gen.is_none() && m.sata_port.is_none() {
                out.push(format!("{}: M.2 {} has neither PCIe lanes nor a SATA port", self.id, m.name));
            }
            if let Some(p) = &m.sata_port
                && self.sata_port(p).is_none()
            {
                out.push(format!("{}: M.2 {} uses SATA port {p}, which no group has", self.id, m.name));
            }
        }
        for g in &self.sata {
            if self.onboard_device(&g.controller).is_none() {
                out.push(format!("{}: SATA ports served by {:?}, which is not onboard", self.id, g.controller));
            }
        }
        for o in &self.onboard {
            if o.attach == Attach::Chipset && self.chipset.is_none() {
                out.push(format!("{}: {} attaches to a chipset the board does not have", self.id, o.id));
            }
        }
        for r in &self.rules {
            for n in r.when.iter().chain(&r.disables).chain(r.narrows.iter().map(|n| &n.place)) {
                if self.place(n).is_none() {
                    out.push(format!("{}: rule {} names {n}, which the board does not have", self.id, r.id));
                }
            }
            if r.narrows.as_ref().is_some_and(|n| !widths.contains(&n.lanes)) {
                out.push(format!("{}: rule {} narrows to a width that is not a PCIe width", self.id, r.id));
            }
        }
        for m in &self.bios {
            for r in &m.places {
                if self.slot(&r.place).is_none() && self.m2_socket(&r.place).is_none() {
                    out.push(format!(
                        "{}: BIOS mode {} rewires {}, which is no slot or socket",
                        self.id, m.id, r.place
                    ));
                }
                if r.lanes.is_some_and(|l| !widths.contains(&l)) || r.generation.is_some_and(|g| !(1..=5).contains(&g))
                {
                    out.push(format!(
                        "{}: BIOS mode {} gives {} a width or generation PCIe lacks",
                        self.id, m.id, r.place
                    ));
                }
            }
        }
        for r in &self.rules {
            if let Some(m) = &r.bios
                && m != DEFAULT_BIOS
                && !self.bios.iter().any(|x| &x.id == m)
            {
                out.push(format!("{}: rule {} holds in BIOS mode {m}, which the board does not have", self.id, r.id));
            }
        }
        for b in &self.bifurcation {
            if self.slot(&b.slot).is_none() {
                out.push(format!("{}: bifurcation of {}, which is no slot", self.id, b.slot));
            }
        }
        let sources = std::iter::once(&self.source)
            .chain(self.slots.iter().map(|s| &s.source))
            .chain(self.m2.iter().map(|s| &s.source))
            .chain(self.sata.iter().map(|s| &s.source))
            .chain(self.onboard.iter().map(|s| &s.source))
            .chain(self.rules.iter().map(|s| &s.source))
            .chain(self.bios.iter().map(|s| &s.source))
            .chain(self.chipset.iter().map(|s| &s.source));
        for s in sources {
            if s.trim().len() < 12 {
                out.push(format!("{}: a source is missing or too short: {s:?}", self.id));
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// A topology on a board: what is where, and what may move (the API `advise` and `plan` use).

impl Topology {
    /// Whether a place holds a card or drive now.
    pub fn occupied(&self, place: &Place) -> bool {
        self.placement.iter().any(|(_, p)| p == place)
    }

    /// The places of the board that hold nothing and that no sharing rule disables, given
    /// what is populated now. Empty without a board.
    pub fn free_places(&self) -> Vec<Place> {
        let Some(b) = &self.board else {
            return Vec::new();
        };
        let st = b.apply_rules(&self.populated());
        b.places().into_iter().filter(|p| !self.occupied(p) && !st.disabled.contains_key(p.name())).collect()
    }

    /// What is populated, by place name and mode.
    pub fn populated(&self) -> Vec<(String, Mode)> {
        self.placement
            .iter()
            .map(|(ix, p)| {
                let mode = match p {
                    Place::Sata(_) => Mode::Sata,
                    Place::Slot(_) => Mode::Pcie,
                    Place::M2(_) => {
                        if self.nodes[*ix].link.family == crate::link::Family::Sata {
                            Mode::Sata
                        } else {
                            Mode::Pcie
                        }
                    }
                };
                (p.name().to_string(), mode)
            })
            .collect()
    }

    /// The lanes a slot or M.2 socket would run at with a device in it and everything else
    /// as it is now (the sharing rules applied).
    pub fn slot_lanes(&self, place: &str) -> Option<u8> {
        let b = self.board.as_ref()?;
        let mut populated = self.populated();
        if !populated.iter().any(|(p, _)| p.eq_ignore_ascii_case(place)) {
            populated.push((place.to_string(), Mode::Pcie));
        }
        // The board as loaded holds the effective widths; the rules start from the wiring
        // (in the BIOS mode chosen).
        let wired = find(&b.id).and_then(|w| w.with_bios(b.bios_chosen.as_deref()).ok());
        wired.as_ref().unwrap_or(b).effective_lanes(place, &populated)
    }

    /// The file as written, with a card (a `[[node]]`) or a drive moved to another place:
    /// load it with [`Topology::with_raw`] to see what the move does (a sharing rule it breaks
    /// is reported then, with the rule).
    pub fn with_card_moved(&self, card: &str, to: &Place) -> Result<RawTopology, Diagnostic> {
        let problem = |message: String, help: &str| Diagnostic {
            file: self.file.clone(),
            line: 0,
            column: 0,
            key: String::new(),
            message,
            help: Some(help.to_string()),
        };
        let Some(b) = &self.board else {
            return Err(problem(
                format!("{:?} is not on a board", self.name),
                "name a board in [host]: board = \"...\"",
            ));
        };
        if b.place(to.name()).as_ref() != Some(to) {
            let names: Vec<String> = b.places().iter().map(|p| p.name().to_string()).collect();
            return Err(problem(
                format!(
                    "{} has no {to}{}",
                    b.name,
                    did_you_mean(&suggest(to.name(), names.iter().map(|s| s.as_str())))
                ),
                "`iopath catalog BOARD` lists its slots, sockets and ports",
            ));
        }
        let mut raw = self.raw().clone();
        let at = |s: &str| Some(Spanned::new(0..0, s.to_string()));
        let none = || Spanned::new(0..0, String::new());
        if let Some(n) = raw.node.iter_mut().find(|n| n.id.get_ref() == card) {
            match to {
                Place::Slot(s) => (n.slot, n.m2) = (at(s), None),
                Place::M2(s) => (n.slot, n.m2) = (None, at(s)),
                Place::Sata(_) => {
                    return Err(problem(format!("{card:?} is a card; a SATA port takes a drive"), "move it to a slot"));
                }
            }
            (n.parent, n.link, n.port) = (none(), None, None);
            return Ok(raw);
        }
        if let Some(d) = raw.drive.iter_mut().find(|d| d.id.get_ref() == card && d.count.is_none()) {
            match to {
                Place::Slot(_) => {
                    return Err(problem(format!("{card:?} is a drive; a slot takes a card"), "move it to a port"));
                }
                Place::M2(s) => (d.m2, d.port) = (at(s), None),
                Place::Sata(s) => {
                    (d.m2, d.port) = (None, Some(Spanned::new(0..0, toml::Value::String(s.clone()))));
                }
            }
            (d.parent, d.link) = (none(), None);
            return Ok(raw);
        }
        Err(problem(
            format!("no [[node]] or single [[drive]] has id {card:?}"),
            "name a card's id, or a drive written without count",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_board_is_consistent_and_its_parts_exist() {
        let cat = crate::Catalog::builtin();
        assert!(!builtin().is_empty());
        for b in builtin() {
            assert!(b.check().is_empty(), "{:?}", b.check());
            assert!(cat.get_kind(&b.host, crate::catalog::Kind::Host).is_some(), "{}: host {}", b.id, b.host);
            if let Some(c) = &b.chipset {
                assert!(cat.get_kind(&c.part, crate::catalog::Kind::Switch).is_some(), "{}: {}", b.id, c.part);
            }
            for o in &b.onboard {
                assert!(cat.get(&o.part).is_some(), "{}: onboard part {}", b.id, o.part);
            }
        }
        let ids: Vec<&str> = builtin().iter().map(|b| b.id.as_str()).collect();
        for (i, id) in ids.iter().enumerate() {
            assert!(!ids[..i].contains(id), "board {id} twice");
            assert!(cat.get(id).is_none(), "board {id} has the id of a part");
        }
    }

    fn board(text: &str) -> Board {
        toml::from_str::<BoardsFile>(text).unwrap().board.remove(0)
    }

    const TOY: &str = r#"
[[board]]
id = "toy"
name = "Toy board"
host = "generic-host"
source = "a board made up for this test"
slot = [
  { name = "A", physical = 16, electrical = 16, gen = 4, attach = "cpu", source = "made up for the test" },
  { name = "B", physical = 16, electrical = 4, gen = 3, attach = "cpu", source = "made up for the test" },
]
m2 = [{ name = "M1", pcie_gen = 3, pcie_lanes = 4, attach = "cpu", source = "made up for the test" }]
rule = [
  { id = "b-halves-a", when = ["B"], narrows = { place = "A", lanes = 8 }, manual = "A runs x8 when B is used", source = "made up for the test" },
  { id = "m1-narrows-b", when = ["M1"], mode = "pcie", narrows = { place = "B", lanes = 2 }, manual = "B x2 with an NVMe M1", source = "made up for the test" },
  { id = "m1-sata-kills-b", when = ["M1"], mode = "sata", disables = ["B"], manual = "B off with a SATA M1", source = "made up for the test" },
]
"#;

    #[test]
    fn rules_narrow_and_disable_only_when_their_places_hold_the_right_device() {
        let b = board(TOY);
        assert!(b.check().is_empty(), "{:?}", b.check());
        let p = |v: &[(&str, Mode)]| v.iter().map(|(n, m)| (n.to_string(), *m)).collect::<Vec<_>>();
        // Nothing else populated: the wiring.
        assert_eq!(b.effective_lanes("A", &p(&[("A", Mode::Pcie)])), Some(16));
        // B in use: A drops to the rule's x8; B itself keeps its x4.
        assert_eq!(b.effective_lanes("A", &p(&[("A", Mode::Pcie), ("B", Mode::Pcie)])), Some(8));
        assert_eq!(b.effective_lanes("B", &p(&[("A", Mode::Pcie), ("B", Mode::Pcie)])), Some(4));
        // An NVMe M1 drops B to x2; a SATA one leaves B's lanes but disables it.
        assert_eq!(b.effective_lanes("B", &p(&[("B", Mode::Pcie), ("M1", Mode::Pcie)])), Some(2));
        let st = b.apply_rules(&p(&[("M1", Mode::Sata)]));
        assert_eq!(st.disabled.get("B").map(|r| r.id.as_str()), Some("m1-sata-kills-b"));
        assert!(st.narrowed.is_empty());
        // A SATA port is no lane place.
        assert_eq!(b.effective_lanes("nope", &[]), None);
    }

    #[test]
    fn check_finds_a_rule_naming_a_place_the_board_lacks() {
        let b = board(&TOY.replace("when = [\"B\"]", "when = [\"C\"]"));
        assert!(b.check().iter().any(|e| e.contains("rule b-halves-a names C")), "{:?}", b.check());
    }
}
