//! Pass 6: every link, derived from both ends' figures or as written, checked. Every link
//! trains at the lower generation and the narrower width of the device's own end and its
//! port's (a root port, a switch's downstream port, a controller's or expander's phy, a port
//! multiplier's port) and of a link written for the attachment (the slot's or cable's
//! wiring); PCIe MPS is the smallest on the way to the root. `Node::training` keeps both
//! ends, so `check` can say why.

use super::Draft;
use crate::catalog::{Catalog, Kind};
use crate::link::{Family, GenerationFigures, LinkSpec, Training, parse_generation, parse_link};
use crate::parts::{Interface, PartSpec};
use crate::topology::{Node, NodeIx, Sink};
use std::collections::BTreeMap;

/// Gives every node its link to its parent; returns the figures of every generation in use.
pub(crate) fn derive(sink: &mut Sink, cat: &Catalog, d: &mut Draft) -> BTreeMap<String, GenerationFigures> {
    let Draft { nodes, pending, .. } = d;
    let mut generations = BTreeMap::new();
    for ix in 1..nodes.len() {
        let Some(pix) = nodes[ix].parent else {
            continue;
        };
        let p = &pending[ix];
        let ends = link_ends(nodes, ix, pix);
        let derived = ends.and_then(|(dev, port)| dev.trained_with(&port)).unwrap_or_else(LinkSpec::internal);
        let link = match &p.link {
            None => derived,
            Some(l) => match written_link(&nodes[pix], ends.map(|e| e.1), &derived, l.get_ref()) {
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
        nodes[ix].training = ends.filter(|_| link.family != Family::Internal).map(|(device, port)| Training {
            kind: nodes[ix].kind.to_string(),
            device,
            port_id: nodes[pix].id.clone(),
            port,
            written: p.link.as_ref().map(|l| l.get_ref().clone()),
        });
        nodes[ix].link = link;
    }
    generations
}

/// The link a user wrote for an attachment, checked against what the two ends allow.
/// A PCIe link trains at the narrower and older of slot and card; a width nothing can have
/// (0 lanes, a SATA link with lanes, a wide port wider than the parent) is an error.
fn written_link(
    parent: &Node,
    port: Option<LinkSpec>,
    derived: &LinkSpec,
    s: &str,
) -> Result<LinkSpec, (String, String)> {
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
        // A slot wider than its port cannot be trained: the port has no such lanes.
        (Family::Pcie, Some(n)) if port.is_some_and(|p| n > p.lanes) => {
            let have = port.map_or(0, |p| p.lanes);
            return Err((
                format!(
                    "{s:?} asks for x{n}, but the port of {:?} ({}) has at most {have} lane{}",
                    parent.id,
                    parent.part,
                    if have == 1 { "" } else { "s" }
                ),
                format!("write a width the port has, at most x{have}: e.g. \"pcie{g}x{have}\""),
            ));
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

/// The two ends of a node's link to its parent: what the device supports on its own and what
/// its parent's port offers (`None`: an internal path, or a pair of kinds the attachment
/// rules refuse, which is rejected anyway). The link trains at the lower of the two.
fn link_ends(nodes: &[Node], ix: NodeIx, pix: NodeIx) -> Option<(LinkSpec, LinkSpec)> {
    let host = nodes[0].spec.host();
    let (host_mps, cpl) = host.map_or((0, 0), |h| (h.root_mps, h.completion_bytes));
    let n = &nodes[ix];
    let p = &nodes[pix].spec;
    let sata = |g: u8| LinkSpec { family: Family::Sata, generation: g.clamp(1, 3), lanes: 1, ..LinkSpec::internal() };
    let sas = |g: u8, lanes: u32| LinkSpec { family: Family::Sas, generation: g.max(1), lanes, ..LinkSpec::internal() };
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
    let pcie = |g: u8, lanes: u32, mps: u32, mrrs: u32| LinkSpec {
        family: Family::Pcie,
        generation: g,
        lanes,
        mps: mps.min(mps_up(pix)),
        completion_bytes: cpl,
        mrrs,
    };
    // A PCIe device's own end, from its uplink name (`pcie3`, `dmi3`) and lanes.
    let pcie_named = |uplink: &str, lanes: u32, mps: u32, mrrs: u32| match parse_generation(uplink) {
        Some((Family::Pcie, g, lanes_in_name, _)) => Some(pcie(g, lanes_in_name.unwrap_or(lanes), mps, mrrs)),
        _ => None,
    };
    // The port a PCIe device sits in: a root port of the CPU, or a switch's downstream port
    // at the switch's generation.
    let pcie_port = || match p {
        PartSpec::Host(h) => Some(pcie(h.root_gen, 16, 4096, 0)),
        PartSpec::Switch(s) => match parse_generation(&s.uplink) {
            Some((Family::Pcie, g, _, _)) => Some(pcie(g, s.port_lanes, 4096, 0)),
            _ => None,
        },
        _ => None,
    };
    let both = |dev: Option<LinkSpec>, port: Option<LinkSpec>| dev.zip(port);
    match &n.spec {
        PartSpec::Switch(s) => both(pcie_named(&s.uplink, s.lanes, s.mps, 0), pcie_port()),
        PartSpec::Controller(c) => both(pcie_named(&c.uplink, c.lanes, c.mps, c.mrrs), pcie_port()),
        // A NIC's PCIe end as a controller's; a virtual one (`internal`) has no link.
        PartSpec::Nic(nic) => both(pcie_named(&nic.uplink, nic.lanes, nic.mps, 512), pcie_port()),
        PartSpec::PortMultiplier(pm) => p.controller().map(|c| (sata(pm.sata_gen), sata(c.sata_gen))),
        PartSpec::Expander(e) => match p {
            PartSpec::Expander(up) => Some((sas(e.sas_gen, 4), sas(up.sas_gen, 4))),
            PartSpec::Controller(c) => Some((sas(e.sas_gen, 4), sas(c.sas_gen, 4))),
            _ => None,
        },
        PartSpec::Drive(d) => match (d.interface, p) {
            (Interface::Nvme, _) => both(Some(pcie(d.interface_gen, d.lanes, d.mps, d.mrrs)), pcie_port()),
            // A controller's or an expander's SAS generation alike.
            (Interface::Sas, PartSpec::Controller(c)) => Some((sas(d.interface_gen, 1), sas(c.sas_gen, 1))),
            (Interface::Sas, PartSpec::Expander(e)) => Some((sas(d.interface_gen, 1), sas(e.sas_gen, 1))),
            // SATA: the slower of the drive and its port; an expander's SAS3 phy runs SATA at 6G.
            (Interface::Sata, PartSpec::Expander(e)) => Some((sata(d.interface_gen), sata((e.sas_gen + 1).min(3)))),
            (Interface::Sata, PartSpec::Controller(c)) => Some((sata(d.interface_gen), sata(c.sata_gen))),
            (Interface::Sata, PartSpec::PortMultiplier(pm)) => Some((sata(d.interface_gen), sata(pm.sata_gen))),
            _ => None,
        },
        PartSpec::Host(_) | PartSpec::Unresolved => None,
    }
}
