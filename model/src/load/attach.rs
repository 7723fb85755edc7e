//! Pass 5: what may attach to what (NVMe only on PCIe, expanders and SAS drives only below
//! SAS, port multipliers only where the controller supports them), and every child's port.

use super::Draft;
use crate::catalog::Kind;
use crate::parts::{Interface, PmSupport};
use crate::topology::{NodeIx, Sink, known};
use std::collections::{HashMap, HashSet};

/// Ports taken so far, per parent.
#[derive(Default)]
struct Ports {
    used: HashMap<(NodeIx, u32), NodeIx>,
    next_port: HashMap<NodeIx, u32>,
    /// Port problems of a `count` group are reported once, for its first drive.
    port_reported: HashSet<String>,
}

/// Checks every attachment and gives every child of a controller, port multiplier or
/// expander its port (the one written, or the next free one).
pub(crate) fn check(sink: &mut Sink, d: &mut Draft) {
    let mut ports = Ports::default();
    for ix in 1..d.nodes.len() {
        let Some(pix) = d.nodes[ix].parent else {
            continue;
        };
        rules(sink, d, ix, pix);
        assign_port(sink, d, &mut ports, ix, pix);
    }
}

/// What may attach to what.
fn rules(sink: &mut Sink, d: &Draft, ix: NodeIx, pix: NodeIx) {
    let Draft { nodes, pending, params_of, .. } = d;
    let key = pending[ix].key.clone();
    let (pk, ck) = (nodes[pix].kind, nodes[ix].kind);
    let (cid, pid, ppart) = (nodes[ix].id.clone(), nodes[pix].id.clone(), nodes[pix].part.clone());
    let pspan = Some(pending[ix].parent.span());
    let attach_err = |sink: &mut Sink, msg: String, help: &str| {
        sink.at(pspan.clone(), format!("{key}.parent"), msg, Some(help.to_string()))
    };
    let interface = nodes[ix].spec.drive().map(|d| d.interface);
    let nvme = interface == Some(Interface::Nvme);
    let sas_controller = nodes[pix].spec.controller().is_some_and(|c| c.has_sas());
    if nvme {
        // NVMe is PCIe: only the root complex or a PCIe switch carries it.
        if !matches!(pk, Kind::Host | Kind::Switch) {
            attach_err(
                sink,
                format!("NVMe drive {cid:?} cannot attach to a {pk} ({pid:?})"),
                "attach NVMe drives to \"host\" or a PCIe switch; SATA and SAS controllers, port multipliers and expanders cannot carry NVMe",
            );
        }
    } else {
        match (pk, ck) {
            (Kind::Host | Kind::Switch, Kind::Switch | Kind::Controller | Kind::Nic) => {}
            (Kind::Nic, _) => attach_err(
                sink,
                format!("{pid:?} is a NIC and cannot have children"),
                "attach drives to a controller, port multiplier or expander; clients name a NIC in [[client]] nic = ...",
            ),
            (Kind::Controller, Kind::Drive) => {}
            (Kind::Controller, Kind::Expander) => {
                if !sas_controller {
                    attach_err(
                        sink,
                        format!(
                            "SAS expander {cid:?} cannot attach to SATA-only {pid:?} ({ppart}), which has no SAS ports (no sas_gen)"
                        ),
                        "attach the expander to a SAS HBA (e.g. lsi-sas3008) or cascade it from another expander",
                    );
                }
            }
            (Kind::Controller, Kind::PortMultiplier) => {
                let sup = nodes[pix].spec.controller().map_or(PmSupport::None, |c| c.pm_support);
                // The catalog's fbs figure says what the PM can do; under a CBS-only
                // controller it falls back to command-based switching
                // (`paths::pm_uses_fbs`). Only an fbs = true the user asked for is wrong.
                let asked_fbs = params_of[ix]
                    .iter()
                    .find(|(k, v)| k.get_ref() == "fbs" && v.get_ref() == &toml::Value::Boolean(true));
                if sup == PmSupport::None {
                    attach_err(
                        sink,
                        format!("controller {pid:?} ({ppart}) does not support port multipliers"),
                        "attach the port multiplier to a controller whose pm_support is cbs or fbs (e.g. marvell-88se9172, jmb585)",
                    );
                } else if let (true, Some((_, v))) = (sup == PmSupport::Cbs, asked_fbs) {
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
                sink,
                format!("{pid:?} is a drive and cannot have children"),
                "attach it to a controller, port multiplier or expander",
            ),
            _ => attach_err(
                sink,
                format!("a {ck} cannot attach to a {pk} ({pid:?})"),
                "controllers attach to host or a switch; drives to controllers, port multipliers or expanders",
            ),
        }
    }
    // SAS drives need a SAS-capable parent.
    if interface == Some(Interface::Sas) {
        let sas_ok = match pk {
            Kind::Controller => sas_controller,
            Kind::Expander => true,
            _ => false,
        };
        if !sas_ok {
            attach_err(
                sink,
                format!("SAS drive {cid:?} cannot attach to SATA-only {pid:?} ({ppart})"),
                "use a SAS HBA (e.g. lsi-sas3008) or an expander",
            );
        }
    }
}

/// The port of a child of a controller, port multiplier or expander; a port written for a
/// child of the host or a switch is an error.
fn assign_port(sink: &mut Sink, d: &mut Draft, ports: &mut Ports, ix: NodeIx, pix: NodeIx) {
    let Ports { used, next_port, port_reported } = ports;
    let Draft { nodes, pending, .. } = d;
    let key = pending[ix].key.clone();
    let pk = nodes[pix].kind;
    let (pid, ppart) = (nodes[pix].id.clone(), nodes[pix].part.clone());
    let pspan = Some(pending[ix].parent.span());
    let attach_err = |sink: &mut Sink, msg: String, help: &str| {
        sink.at(pspan.clone(), format!("{key}.parent"), msg, Some(help.to_string()))
    };
    // The host and switches have no numbered ports: a port there means nothing.
    if matches!(pk, Kind::Host | Kind::Switch)
        && let Some(p) = &pending[ix].port
    {
        if port_reported.insert(key.clone()) {
            sink.at(
                Some(p.span()),
                format!("{key}.port"),
                format!("port = {} means nothing here: {pid:?} is a {pk}, which has no numbered ports", p.get_ref()),
                Some(format!(
                    "remove port from {key}; ports number the connectors of controllers, port multipliers and expanders"
                )),
            );
        }
        return;
    }
    // Ports: controllers, port multipliers and expanders have numbered ports.
    if let Some((nports, _)) = nodes[pix].spec.ports() {
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
                        return;
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
                            sink,
                            format!("{pid:?} ({ppart}) has only {nports} ports, and all are taken"),
                            "add another controller or an expander, or remove a drive",
                        );
                    }
                    return;
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
