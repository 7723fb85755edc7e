//! `plan`: candidate builds from a board (or a host with slots), a set of drives and a goal.
//!
//! Every build is a topology file written here and loaded through the normal loader (a build
//! that breaks a board's sharing rule, or puts a card where it cannot go, is dropped):
//! catalog controller cards in up to three of the places (every set of places, every card
//! that fits each), the drives spread over the cards by free ports, with every number of
//! them (all to none) on the board's onboard SATA ports. The closed-form bound of the goal's workload ranks them; the best
//! `max_simulated` are simulated in parallel, and the result is ranked by the goal, then by
//! slots used and price. A client (`10GbE`) adds the smallest catalog NIC of that speed in
//! the widest place left, the client, and a pool of all drives.

use super::candidates::{card_controllers, card_nics};
use super::{AdviseError, Goal};
use crate::run::{SimOptions, simulate};
use crate::sweep::workload_bound;
use iopath_model::board::Place;
use iopath_model::parts::ControllerFigures;
use iopath_model::report::Bottleneck;
use iopath_model::{Catalog, Topology, WorkloadSpec};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Where the build starts from.
#[derive(Debug, Clone)]
pub enum Platform {
    /// A catalog board: its slots, M.2 sockets and onboard SATA ports.
    Board(String),
    /// A host part with CPU-attached slots wired as given (`pcie3x2`) and onboard SATA
    /// controllers (catalog parts inside the host or chipset).
    Host { part: String, slots: Vec<String>, onboard: Vec<String> },
}

/// What to plan.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    pub platform: Platform,
    /// The drive part and how many.
    pub drive: String,
    pub count: usize,
    /// A client's link (`10GbE`): a NIC, the client and a pool of all drives are added.
    pub client: Option<String>,
    /// The pool's layout with a client (default raidz2).
    pub pool_layout: Option<String>,
    pub goal: Goal,
    /// The workload as given (runtime, block size, ...); the goal fills in the rest.
    pub workload: WorkloadSpec,
    pub max_simulated: usize,
    pub prices: Option<BTreeMap<String, f64>>,
}

/// One build, simulated.
#[derive(Debug, Clone, Serialize)]
pub struct PlanBuild {
    /// The build in words.
    pub summary: String,
    /// Controller cards: (part, place).
    pub cards: Vec<(String, String)>,
    /// Drives on the onboard SATA ports.
    pub onboard_drives: usize,
    /// Slots and M.2 sockets used (the NIC's included).
    pub slots_used: usize,
    pub value: f64,
    pub bound_mb_s: f64,
    pub bottleneck: Bottleneck,
    /// The busiest link (PCIe, SATA, SAS, network) in the simulated run, either direction:
    /// the build's headroom. Among builds of equal answer, slots and price the one with the
    /// most room on it ranks first (a link at 98% has none left for anything else).
    pub busiest_link: Bottleneck,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// Parts bought: the cards (and the NICs).
    pub parts: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
    /// The build as a topology file.
    pub topology_toml: String,
}

/// The plan: the best builds and the trade-off between the answer, slots and price.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub goal_text: String,
    pub unit: &'static str,
    pub workload: WorkloadSpec,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// Builds enumerated; of them, those with a dominated card (not loaded: another card does
    /// all it does in that place, and no price list says it is cheaper), those the loader
    /// refused, those the bound pruned, and those simulated.
    pub considered: usize,
    pub dominated: usize,
    pub invalid: usize,
    pub pruned: usize,
    pub simulated: usize,
    /// Best first.
    pub builds: Vec<PlanBuild>,
    /// For each number of slots used, the best build (those no build with fewer slots beats).
    pub tradeoff: Vec<PlanBuild>,
}

/// A place a card can take: its name, the TOML keys that put a card there, and its lanes.
struct Spot {
    name: String,
    keys: String,
    lanes: u32,
    /// The widest card it takes (its physical length; any for an open-ended slot).
    fits: u32,
}

/// The platform's header, places for cards, and onboard SATA ports as (TOML keys of a
/// drive there).
fn platform(req: &PlanRequest, cat: &Catalog) -> Result<(String, Vec<Spot>, Vec<String>), AdviseError> {
    match &req.platform {
        Platform::Board(id) => {
            let b = iopath_model::board::find(id)
                .ok_or_else(|| AdviseError::Plan(format!("no board {id:?}{}", iopath_model::board::suggestion(id))))?;
            let mut spots = Vec::new();
            for p in b.places() {
                match &p {
                    Place::Slot(n) => {
                        let lanes = b.slot(n).map_or(1, |s| u32::from(s.electrical_lanes));
                        let fits =
                            b.slot(n).map_or(1, |s| if s.open_end { u32::MAX } else { u32::from(s.physical_lanes) });
                        spots.push(Spot { name: p.to_string(), keys: format!("slot = {n:?}\n"), lanes, fits })
                    }
                    Place::M2(n) if b.m2_socket(n).is_some_and(|m| m.pcie_gen.is_some()) => {
                        let lanes = b.m2_socket(n).map_or(1, |m| u32::from(m.pcie_lanes));
                        // An M.2 card (JMB585/ASM1166 M.2 boards) takes the socket's lanes.
                        spots.push(Spot { name: p.to_string(), keys: format!("m2 = {n:?}\n"), lanes, fits: lanes })
                    }
                    _ => {}
                }
            }
            let sata = b.sata.iter().flat_map(|g| g.ports.iter().map(|p| format!("port = {p:?}\n"))).collect();
            Ok((format!("[host]\nboard = {:?}\n", b.id), spots, sata))
        }
        Platform::Host { part, slots, onboard } => {
            let mut head = format!("[host]\npart = {part:?}\n");
            let spots = slots
                .iter()
                .enumerate()
                .map(|(i, l)| Spot {
                    name: format!("CPU slot {} ({l})", i + 1),
                    keys: format!("parent = \"host\"\nlink = {l:?}\n"),
                    lanes: l.rsplit('x').next().and_then(|n| n.parse().ok()).unwrap_or(1),
                    // A slot as wired: a wider card in it trains narrower (an open-ended slot
                    // or a riser); the width written is the link.
                    fits: u32::MAX,
                })
                .collect();
            let mut sata = Vec::new();
            for (i, o) in onboard.iter().enumerate() {
                let ports = card_ports(cat, o)
                    .ok_or_else(|| AdviseError::Plan(format!("{o:?} is not a catalog controller")))?;
                let id = format!("onboard{i}");
                let _ = write!(head, "\n[[node]]\nid = {id:?}\npart = {o:?}\nparent = \"host\"\n");
                sata.extend((0..ports).map(|p| format!("parent = {id:?}\nport = {p}\n")));
            }
            Ok((head, spots, sata))
        }
    }
}

fn card_ports(cat: &Catalog, part: &str) -> Option<u32> {
    use iopath_model::parts::{PartSpec, resolve};
    let p = cat.get_kind(part, iopath_model::catalog::Kind::Controller)?;
    match resolve(p.kind, &p.figures).ok()?.spec {
        PartSpec::Controller(c) => Some(c.ports),
        _ => None,
    }
}

/// All k-subsets of 0..n, in lexicographic order.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    go(0, n, k, &mut cur, &mut out);
    out
}

/// One candidate build before it is loaded.
struct Draft {
    summary: String,
    cards: Vec<(String, String)>,
    onboard: usize,
    slots: usize,
    parts: Vec<String>,
    text: String,
}

/// The NICs for a client link (`10GbE`): the catalog NICs of that speed as (id, lanes),
/// fewest lanes first.
fn nics_for(t_cat: &Catalog, link: &str) -> Option<Vec<(String, u32)>> {
    let gbps: f64 = link.trim().trim_end_matches("GbE").trim_end_matches("gbe").parse().ok()?;
    let mut nics: Vec<(String, u32)> = card_nics(t_cat)
        .into_iter()
        .filter(|(_, f)| f.port_gbps == gbps)
        .map(|(p, f)| (p.id.clone(), f.lanes))
        .collect();
    nics.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    (!nics.is_empty()).then_some(nics)
}

/// The builds to load, and (in `dominated`) how many were not written because a card in
/// them is dominated in its place by another ([`dominates`]).
fn drafts(req: &PlanRequest, cat: &Catalog, dominated: &mut usize) -> Result<Vec<Draft>, AdviseError> {
    let (head, spots, sata) = platform(req, cat)?;
    let n = req.count;
    let nic = match &req.client {
        Some(l) => Some(nics_for(cat, l).ok_or_else(|| {
            AdviseError::Plan(format!(
                "no catalog NIC has a port of {l} (write it as 1GbE, 2.5GbE, 10GbE, 25GbE or 40GbE)"
            ))
        })?),
        None => None,
    };
    let mut out = Vec::new();
    let cards = card_controllers_of(cat);
    // Every number of drives on the onboard ports, most first: an onboard controller behind a
    // narrow uplink (an ASM1064 on PCIe 3.0 x1) may carry fewer drives at full speed than it
    // has ports, and the bound finds the split that lets them all stream.
    for on in (0..=sata.len().min(n)).rev() {
        let rest = n - on;
        if rest == 0 {
            out.push(draft(req, &head, &spots, &sata, on, &[], &[], nic.as_ref()));
            continue;
        }
        // Every set of up to three places, every part that fits each, as long as the ports
        // take the drives and a place is left for the NIC.
        let most = spots.len().saturating_sub(usize::from(nic.is_some())).min(3);
        for k in 1..=most {
            for set in subsets(spots.len(), k) {
                let choices: Vec<Vec<&(String, u32, u32, ControllerFigures)>> =
                    set.iter().map(|&i| cards.iter().filter(|c| c.2 <= spots[i].fits).collect()).collect();
                let kept: Vec<Vec<&(String, u32, u32, ControllerFigures)>> = set
                    .iter()
                    .map(|&i| {
                        let fit: Vec<_> = cards.iter().filter(|c| c.2 <= spots[i].fits).collect();
                        if req.prices.is_some() {
                            return fit;
                        }
                        // Of cards that dominate each other both ways the first by id stays.
                        fit.iter()
                            .enumerate()
                            .filter(|(x, a)| {
                                !fit.iter().enumerate().any(|(y, b)| {
                                    y != *x
                                        && dominates(&b.3, &a.3, spots[i].lanes)
                                        && (!dominates(&a.3, &b.3, spots[i].lanes) || y < *x)
                                })
                            })
                            .map(|(_, c)| *c)
                            .collect()
                    })
                    .collect();
                let mut pick = vec![0usize; k];
                'all: loop {
                    if choices.iter().all(|c| !c.is_empty()) {
                        let chosen: Vec<(String, u32)> =
                            (0..k).map(|j| (choices[j][pick[j]].0.clone(), choices[j][pick[j]].1)).collect();
                        let ports: usize = chosen.iter().map(|c| c.1 as usize).sum();
                        let undominated = (0..k).all(|j| kept[j].iter().any(|c| std::ptr::eq(*c, choices[j][pick[j]])));
                        if ports >= rest && !undominated {
                            *dominated += 1;
                        } else if ports >= rest && out.len() < MAX_DRAFTS {
                            out.push(draft(req, &head, &spots, &sata, on, &chosen, &set, nic.as_ref()));
                        }
                    } else {
                        break;
                    }
                    // Next combination (odometer).
                    let mut j = 0;
                    loop {
                        if j == k {
                            break 'all;
                        }
                        pick[j] += 1;
                        if pick[j] < choices[j].len() {
                            break;
                        }
                        pick[j] = 0;
                        j += 1;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The most builds `plan` writes (each is loaded; the bound then ranks them).
const MAX_DRAFTS: usize = 20_000;

/// Catalog cards as (id, ports, lanes, figures).
fn card_controllers_of(cat: &Catalog) -> Vec<(String, u32, u32, ControllerFigures)> {
    card_controllers(cat).into_iter().map(|(p, c)| (p.id.clone(), c.ports, c.lanes, c)).collect()
}

/// Whether card `b` does everything `a` does in a place of `lanes` lanes: as many ports, at
/// least its PCIe generation and trained width there, SATA/SAS generations and command rate.
/// Without a price list a dominated card is not tried (it cannot beat the other).
fn dominates(b: &ControllerFigures, a: &ControllerFigures, lanes: u32) -> bool {
    let g = |c: &ControllerFigures| c.uplink.trim_start_matches("pcie").parse::<u32>().unwrap_or(0);
    b.ports >= a.ports
        && g(b) >= g(a)
        && b.lanes.min(lanes) >= a.lanes.min(lanes)
        && b.sata_gen >= a.sata_gen
        && b.sas_gen >= a.sas_gen
        && b.max_iops >= a.max_iops
        && b.pm_support as u8 >= a.pm_support as u8
}

#[allow(clippy::too_many_arguments)]
fn draft(
    req: &PlanRequest,
    head: &str,
    spots: &[Spot],
    sata: &[String],
    on: usize,
    chosen: &[(String, u32)],
    set: &[usize],
    nic: Option<&Vec<(String, u32)>>,
) -> Draft {
    let mut text = format!("name = \"plan\"\n{head}");
    let mut cards = Vec::new();
    let mut parts = Vec::new();
    let mut drive_ids = Vec::new();
    for (i, keys) in sata.iter().take(on).enumerate() {
        let id = format!("s{i}");
        let _ = write!(text, "\n[[drive]]\nid = {id:?}\npart = {:?}\n{keys}", req.drive);
        drive_ids.push(id);
    }
    let rest = req.count - on;
    // Drives one at a time to the card with the most free ports (the lower index on a tie).
    let mut shares = vec![0usize; chosen.len()];
    for _ in 0..rest {
        let free = |j: usize| chosen[j].1 as usize - shares[j];
        if let Some(j) = (0..chosen.len()).filter(|&j| free(j) > 0).max_by_key(|&j| (free(j), std::cmp::Reverse(j))) {
            shares[j] += 1;
        }
    }
    {
        for (j, &s) in set.iter().enumerate() {
            let part = &chosen[j].0;
            let id = format!("hba{j}");
            let share = shares[j];
            let _ = write!(text, "\n[[node]]\nid = {id:?}\npart = {part:?}\n{}", spots[s].keys);
            if share > 0 {
                let _ = write!(
                    text,
                    "\n[[drive]]\nid = \"d{j}_\"\ncount = {share}\npart = {:?}\nparent = {id:?}\nport = 0\n",
                    req.drive
                );
                drive_ids.extend((0..share).map(|x| format!("d{j}_{x}")));
            }
            cards.push((part.clone(), spots[s].name.clone()));
            parts.push(part.clone());
        }
    }
    let mut slots = set.len();
    if let (Some(nics), Some(link)) = (nic, &req.client) {
        // The widest place no card took, and the narrowest NIC that fits it.
        let place =
            (0..spots.len()).filter(|i| !set.contains(i)).max_by_key(|&i| (spots[i].lanes, std::cmp::Reverse(i)));
        let fit = place.and_then(|s| nics.iter().find(|n| n.1 <= spots[s].fits).map(|n| (s, &n.0)));
        if let Some((s, nic)) = fit {
            let _ = write!(text, "\n[[node]]\nid = \"nic\"\npart = {nic:?}\n{}", spots[s].keys);
            let _ = write!(text, "\n[[client]]\nid = \"client\"\nnic = \"nic\"\nlink = {link:?}\n");
            let layout = req.pool_layout.as_deref().unwrap_or("raidz2");
            let members: Vec<String> = drive_ids.iter().map(|d| format!("{d:?}")).collect();
            let _ =
                write!(text, "\n[[pool]]\nid = \"tank\"\nlayout = {layout:?}\nmembers = [{}]\n", members.join(", "));
            parts.push(nic.clone());
            slots += 1;
        }
    }
    // Ids of count groups: `d0_` expands to d0_0, d0_1, ...
    let summary = if cards.is_empty() {
        format!("all {on} drives on onboard SATA")
    } else {
        let each: Vec<String> = cards
            .iter()
            .zip(&shares)
            .map(|((p, at), n)| format!("{p} in {at} ({n} drive{})", if *n == 1 { "" } else { "s" }))
            .collect();
        format!("{}{}", each.join(", "), if on > 0 { format!(", {on} on onboard SATA") } else { String::new() })
    };
    Draft { summary, cards, onboard: on, slots, parts, text }
}

/// Build `d` loaded, with the goal's workload on it; `None`: the loader refuses it.
fn load(req: &PlanRequest, cat: &Catalog, d: &Draft) -> Option<(Topology, WorkloadSpec)> {
    let t = Topology::parse("plan.toml", &d.text, cat).ok()?;
    let spec = req.goal.workload(&t, &req.workload).ok()?;
    Some((t, spec))
}

/// Plans builds for `req` over `cat`.
pub fn plan(req: &PlanRequest, cat: &Catalog, sim: &SimOptions) -> Result<Plan, AdviseError> {
    if req.count == 0 || req.count > 1024 {
        return Err(AdviseError::Plan(format!("{} drives: plan takes 1 to 1,024", req.count)));
    }
    if cat.get_kind(&req.drive, iopath_model::catalog::Kind::Drive).is_none() {
        let s = iopath_model::catalog::did_you_mean(&cat.suggest(&req.drive, Some(iopath_model::catalog::Kind::Drive)));
        return Err(AdviseError::Plan(format!("no drive part {:?}{s}", req.drive)));
    }
    let mut dominated = 0;
    let drafts = drafts(req, cat, &mut dominated)?;
    let considered = drafts.len() + dominated;
    // Each build is loaded and bounded, and only its bound kept: with a price list there are
    // up to `MAX_DRAFTS` builds, and holding every loaded topology took gigabytes. The few
    // simulated are loaded again below.
    let loaded: Vec<Option<(Draft, WorkloadSpec, f64)>> = drafts
        .into_par_iter()
        .map(|d| {
            let (t, spec) = load(req, cat, &d)?;
            let w = spec.resolve().ok()?;
            let b = workload_bound(&t, &w)?;
            Some((d, spec, b))
        })
        .collect();
    let invalid = loaded.iter().filter(|l| l.is_none()).count();
    let mut keep: Vec<(Draft, WorkloadSpec, f64)> = loaded.into_iter().flatten().collect();
    if keep.is_empty() {
        let head = if considered == 0 {
            "no build has the ports".to_string()
        } else {
            format!("none of the {considered} builds loads")
        };
        return Err(AdviseError::Plan(format!(
            "{head}: no set of up to three catalog cards in the places here{} takes {} \
             drives (with the onboard SATA ports)",
            if req.client.is_some() { ", one place left for the NIC," } else { "" },
            req.count
        )));
    }
    // Highest bound first; among equal bounds fewer slots, then fewer cards (stable).
    keep.sort_by(|a, b| {
        b.2.total_cmp(&a.2).then(a.0.slots.cmp(&b.0.slots)).then(a.0.cards.len().cmp(&b.0.cards.len()))
    });
    let total = keep.len();
    keep.truncate(req.max_simulated.max(1));
    let simulated = keep.len();
    let reload = |d: &Draft| {
        load(req, cat, d).ok_or_else(|| AdviseError::Plan(format!("build {:?} loaded once and not again", d.summary)))
    };
    let (unit, higher, workload, target) = {
        let (t, spec) = reload(&keep[0].0)?;
        (req.goal.unit(&spec), req.goal.higher_is_better(&spec), spec.clone(), req.goal.target(&t, &spec))
    };
    let runs: Vec<Result<PlanBuild, AdviseError>> = keep
        .into_par_iter()
        .map(|(d, _, bound)| {
            let (t, spec) = reload(&d)?;
            let w = spec.resolve().map_err(|e| AdviseError::Workload(format!("{e:?}")))?;
            let r = simulate(&t, &w, sim)?;
            let s = req.goal.score(&t, &spec, &r);
            let price =
                req.prices.as_ref().and_then(|p| d.parts.iter().map(|id| p.get(id).copied()).sum::<Option<f64>>());
            Ok(PlanBuild {
                summary: d.summary,
                cards: d.cards,
                onboard_drives: d.onboard,
                slots_used: d.slots,
                value: s.value,
                bound_mb_s: bound,
                busiest_link: r
                    .busiest_link(|_| true)
                    .map_or_else(Bottleneck::default, |(l, u)| Bottleneck { id: l.id.clone(), util: u }),
                bottleneck: r.bottleneck,
                met: s.met,
                parts: d.parts,
                price,
                topology_toml: d.text,
            })
        })
        .collect();
    let mut builds = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
    let better = |a: f64, b: f64| if higher { b.total_cmp(&a) } else { a.total_cmp(&b) };
    // The goal first (met before not), then the value within 1% counted equal, then fewer
    // slots, then the lower price, then more room on the busiest link (to the percent), then
    // the value itself. Values within 1% are a tie: a simulation's last 0.1% is not a reason
    // to pick a build whose uplink runs at 98% over one whose runs at 84%.
    let step = builds.iter().map(|b| b.value.abs()).fold(0.0, f64::max) * 0.01;
    let bucket = |v: f64| if step > 0.0 { (v / step).round() } else { v };
    let room = |b: &PlanBuild| (b.busiest_link.util * 100.0).round();
    builds.sort_by(|a, b| {
        (b.met == Some(true))
            .cmp(&(a.met == Some(true)))
            .then(better(bucket(a.value), bucket(b.value)))
            .then(a.slots_used.cmp(&b.slots_used))
            .then(a.price.unwrap_or(f64::INFINITY).total_cmp(&b.price.unwrap_or(f64::INFINITY)))
            .then(room(a).total_cmp(&room(b)))
            .then(better(a.value, b.value))
    });
    let mut tradeoff: Vec<PlanBuild> = Vec::new();
    let mut by_slots: Vec<&PlanBuild> = builds.iter().collect();
    by_slots.sort_by(|a, b| a.slots_used.cmp(&b.slots_used).then(better(a.value, b.value)));
    for b in by_slots {
        let beats =
            tradeoff.last().is_none_or(|l| if higher { b.value > l.value * 1.01 } else { b.value < l.value * 0.99 });
        if tradeoff.last().is_none_or(|l| l.slots_used != b.slots_used) && beats {
            tradeoff.push(b.clone());
        }
    }
    Ok(Plan {
        goal_text: req.goal.describe(),
        unit,
        workload,
        target,
        considered,
        dominated,
        invalid,
        pruned: total - simulated,
        simulated,
        builds,
        tradeoff,
    })
}
