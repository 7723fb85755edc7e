//! Pass 6: every link, derived from both ends' figures (PCIe trains at the narrower and older
//! of slot and card, MPS the smallest on the way to the root) or as written, checked.

use super::Draft;
use crate::catalog::{Catalog, Kind};
use crate::link::{Family, GenerationFigures, LinkSpec, parse_generation, parse_link};
use crate::parts::{Interface, PartSpec};
use crate::topology::{Node, NodeIx, Sink};
use std::collections::BTreeMap;

/// Gives every node its link to its parent; returns the figures of every generation in use.
pub(crate) fn derive(sink: &mut Sink, cat: &Catalog, d: &mut Draft) -> BTreeMap<String, GenerationFigures> {
    let Draft { nodes, pending, .. } = d;
    let mut generations = BTreeMap::new();
    // The host's part was resolved (else loading stopped at the parts).
    let (host_mps, cpl) = nodes[0].spec.host().map_or((0, 0), |h| (h.root_mps, h.completion_bytes));
    for ix in 1..nodes.len() {
        let Some(pix) = nodes[ix].parent else {
            continue;
        };
        let p = &pending[ix];
        let derived = derive_link(nodes, ix, pix, host_mps, cpl);
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
                    generations.insert(link.generation_key(), crate::parts::generation_figures(part));
                }
                None => sink.at(
                    p.link.as_ref().map(|l| l.span()),
                    format!("{}.link", p.key),
                    format!("no link generation {:?} in the catalog", link.generation_key()),
                    Some(
                        "`iopath catalog` lists the link generations; a [[part]] of kind link in this file can add one"
                            .into(),
                    ),
                ),
            }
        }
        nodes[ix].link = link;
    }
    generations
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
            let (have, what) = parent.spec.ports().unwrap_or((0, "ports"));
            if n > have {
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

/// The link a node has to its parent, from both parts' figures. A pair of kinds the
/// attachment rules refuse gets an internal link (the topology is rejected anyway).
fn derive_link(nodes: &[Node], ix: NodeIx, pix: NodeIx, host_mps: u32, cpl: u32) -> LinkSpec {
    let n = &nodes[ix];
    let p = &nodes[pix].spec;
    let sata =
        |g: u8| LinkSpec { family: Family::Sata, generation: g.clamp(1, 3), lanes: 1, mps: 0, completion_bytes: 0 };
    let sas = |g: u8, lanes: u32| LinkSpec { family: Family::Sas, generation: g, lanes, mps: 0, completion_bytes: 0 };
    // The MPS of a PCIe link is the smallest any element on the way to the root supports.
    let mps_up = |start: NodeIx| -> u32 {
        let mut m = host_mps;
        let mut cur = Some(start);
        while let Some(c) = cur {
            if let Some(s) = nodes[c].spec.switch() {
                m = m.min(s.mps);
            }
            cur = nodes[c].parent;
        }
        m
    };
    let pcie = |uplink: &str, lanes: u32, mps: u32| match parse_generation(uplink) {
        Some((Family::Pcie, g, lanes_in_name, _)) => LinkSpec {
            family: Family::Pcie,
            generation: g,
            lanes: lanes_in_name.unwrap_or(lanes),
            mps: mps.min(mps_up(pix)),
            completion_bytes: cpl,
        },
        _ => LinkSpec::internal(),
    };
    match &n.spec {
        PartSpec::Switch(s) => pcie(&s.uplink, s.lanes, s.mps),
        PartSpec::Controller(c) => pcie(&c.uplink, c.lanes, c.mps),
        PartSpec::PortMultiplier(pm) => match p.controller() {
            Some(c) => sata(pm.sata_gen.min(c.sata_gen)),
            None => LinkSpec::internal(),
        },
        PartSpec::Expander(e) => match p {
            PartSpec::Expander(up) => sas(e.sas_gen.min(up.sas_gen), 4),
            PartSpec::Controller(c) => sas(e.sas_gen.min(c.sas_gen.max(1)), 4),
            _ => LinkSpec::internal(),
        },
        PartSpec::Drive(d) => match (d.interface, p) {
            (Interface::Nvme, _) => LinkSpec {
                family: Family::Pcie,
                generation: d.interface_gen,
                lanes: d.lanes,
                mps: d.mps.min(mps_up(pix)),
                completion_bytes: cpl,
            },
            // A controller's or an expander's SAS generation alike.
            (Interface::Sas, PartSpec::Controller(c)) => sas(d.interface_gen.min(c.sas_gen).max(1), 1),
            (Interface::Sas, PartSpec::Expander(e)) => sas(d.interface_gen.min(e.sas_gen).max(1), 1),
            // SATA: the slower of the drive and its port; an expander's SAS3 phy runs SATA at 6G.
            (Interface::Sata, PartSpec::Expander(e)) => sata(d.interface_gen.min((e.sas_gen + 1).min(3))),
            (Interface::Sata, PartSpec::Controller(c)) => sata(d.interface_gen.min(c.sata_gen)),
            (Interface::Sata, PartSpec::PortMultiplier(pm)) => sata(d.interface_gen.min(pm.sata_gen)),
            _ => LinkSpec::internal(),
        },
        PartSpec::Host(_) | PartSpec::Unresolved => LinkSpec::internal(),
    }
}
