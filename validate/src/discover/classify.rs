//! Classifying what sysfs showed: switches, controllers, port multipliers, expanders and
//! drives, matched to catalog parts or written as `[[part]]` tables with what was read.

use super::sysfs::{BlockDev, Pci, expander_rates, parse_ahci_caps, pcie_gen_str, phys_in, read, sas_gen, sata_gen};
use super::{DNode, DeviceClass, DiscoverOptions, DriveFacts, PartRef, Place, Walker};
use iopath_model::Catalog;
use iopath_model::catalog::{Figure, Kind, Part, Value};
use iopath_model::parts::{self, PartSpec, PmSupport};
use std::collections::BTreeMap;

pub(super) fn fig(v: Value, source: String) -> Figure {
    Figure { value: v, source, basis: "measurement".into() }
}

pub(super) fn inferred(v: Value, source: &str) -> Figure {
    Figure { value: v, source: source.into(), basis: "inferred".into() }
}

pub(super) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().to_ascii_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn norm(s: &str) -> String {
    s.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// A catalog drive whose id or alias appears in the model string.
pub fn match_drive_model<'a>(catalog: &'a Catalog, model: &str) -> Option<&'a Part> {
    let m = norm(model);
    if m.len() < 4 {
        return None;
    }
    catalog.parts().filter(|p| p.kind == Kind::Drive).find(|p| {
        std::iter::once(&p.id)
            .chain(p.aliases.iter())
            .map(|a| norm(a))
            .any(|a| a.len() >= 6 && (m.contains(&a) || a.contains(&m)))
    })
}

impl Walker<'_> {
    /// The switches for the bridges between root port and endpoint; returns the parent id.
    fn switches(&mut self, bridges: &[Pci]) -> String {
        let mut parent = "host".to_string();
        // bridges[0] is the root port (part of the host); then (upstream, downstream) pairs.
        let mut i = 1;
        while i < bridges.len() {
            let up = &bridges[i];
            let key = self.rel(&up.dir);
            if let Some(ix) = self.node_ix(&key) {
                parent = self.d.nodes[ix].id.clone();
                i += 2;
                continue;
            }
            let src = format!("discovered from sysfs {key}");
            let (part, link) = match self.catalog.by_pci_id(&up.id()) {
                Some(p) if p.kind == Kind::Switch => (PartRef::Catalog(p.id.clone()), None),
                _ => {
                    let mut f = BTreeMap::new();
                    let (g, w) = pcie_gen_str(up).unwrap_or((3, 1));
                    f.insert("uplink".into(), fig(Value::Str(format!("pcie{g}")), format!("{src}/current_link_speed")));
                    f.insert("lanes".into(), fig(Value::Num(f64::from(w)), format!("{src}/current_link_width")));
                    let part = Part {
                        id: format!("pci-{}-{}", up.vendor, up.device),
                        kind: Kind::Switch,
                        name: format!("PCIe switch {} (not in the catalog)", up.id()),
                        aliases: vec![],
                        pci_ids: vec![up.id()],
                        notes: "written by iopath discover".into(),
                        figures: f,
                    };
                    (self.add_part(part), None)
                }
            };
            let id = self.unique_id(&format!("switch-{}", slug(&up.bdf)));
            self.d.nodes.push(DNode {
                id: id.clone(),
                kind: Kind::Switch,
                part,
                parent: parent.clone(),
                port: None,
                link,
                comments: vec![format!("{} ({}): {}", up.bdf, up.id(), up.link_comment())],
                key,
            });
            parent = id;
            i += 2;
        }
        parent
    }

    fn controller(&mut self, ep: &Pci, parent: &str, host: Option<&str>, sas_phys: Vec<String>) -> String {
        let key = self.rel(&ep.dir);
        if let Some(ix) = self.node_ix(&key) {
            return self.d.nodes[ix].id.clone();
        }
        let src = format!("discovered from sysfs {key}");
        let caps = host.and_then(|h| {
            read(&self.root.join(format!("class/scsi_host/{h}/ahci_host_caps"))).and_then(|s| parse_ahci_caps(&s))
        });
        let ata_ports = std::fs::read_dir(&ep.dir)
            .map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("ata")).count() as u32)
            .unwrap_or(0);
        let sas_rates: Vec<u8> = sas_phys
            .iter()
            .filter_map(|p| {
                read(&self.root.join(format!("class/sas_phy/{p}/negotiated_linkrate"))).and_then(|r| sas_gen(&r))
            })
            .collect();
        let (mps_cap, mps_note) = ep.mps_comment();
        let mut comments = vec![format!("{} ({}): {}", ep.bdf, ep.id(), ep.link_comment()), mps_note];
        if let Some(c) = caps {
            comments.push(format!(
                "AHCI: {} ports, {} command slots, speed gen {}, PMP {}, FBS {}",
                c.ports,
                c.slots,
                c.speed_gen,
                if c.pmp { "yes" } else { "no" },
                if c.fbs { "yes" } else { "no" }
            ));
        }
        let (part, link) = match self.catalog.by_pci_id(&ep.id()) {
            Some(p) if p.kind == Kind::Controller => {
                let mut link = None;
                if let Some((g, w)) = pcie_gen_str(ep) {
                    // The link as sysfs shows it, where it differs from the part's own.
                    let spec = parts::spec_of(p);
                    let pg = spec.as_ref().and_then(|s| s.uplink().map(str::to_string));
                    let pl = spec.as_ref().and_then(PartSpec::lanes).map(|l| l.to_string());
                    if pg.as_deref() != Some(&format!("pcie{g}")) || pl != Some(w.to_string()) {
                        link = Some(format!("pcie{g}x{w}"));
                    }
                }
                (PartRef::Catalog(p.id.clone()), link)
            }
            _ => {
                let mut f = BTreeMap::new();
                match pcie_gen_str(ep) {
                    Some((g, w)) => {
                        f.insert(
                            "uplink".into(),
                            fig(Value::Str(format!("pcie{g}")), format!("{src}/current_link_speed")),
                        );
                        f.insert("lanes".into(), fig(Value::Num(f64::from(w)), format!("{src}/current_link_width")));
                    }
                    None => {
                        f.insert(
                            "uplink".into(),
                            inferred(
                                Value::Str("internal".into()),
                                "no PCIe link attributes in sysfs: an integrated or virtual function",
                            ),
                        );
                        f.insert("lanes".into(), inferred(Value::Num(1.0), "no PCIe link attributes in sysfs"));
                    }
                }
                let ports = caps
                    .map(|c| c.ports)
                    .or((!sas_phys.is_empty()).then_some(sas_phys.len() as u32))
                    .or((ata_ports > 0).then_some(ata_ports))
                    .unwrap_or(8);
                f.insert(
                    "ports".into(),
                    fig(
                        Value::Num(f64::from(ports)),
                        format!(
                            "{src}: {}",
                            if caps.is_some() {
                                "ahci_host_caps ports"
                            } else if !sas_phys.is_empty() {
                                "SAS phys of the host"
                            } else {
                                "ata ports found (or 8 when none)"
                            }
                        ),
                    ),
                );
                let sg = caps.map(|c| c.speed_gen).filter(|g| (1..=3).contains(g));
                f.insert(
                    "sata_gen".into(),
                    match sg {
                        Some(g) => fig(Value::Num(f64::from(g)), format!("{src}: ahci_host_caps interface speed")),
                        None => inferred(Value::Num(3.0), "not readable from sysfs; SATA 6 Gb/s assumed"),
                    },
                );
                if let Some(g) = sas_rates.iter().max() {
                    f.insert(
                        "sas_gen".into(),
                        fig(Value::Num(f64::from(*g)), format!("{src}: negotiated_linkrate of its SAS phys")),
                    );
                }
                let pm = match caps {
                    Some(c) if c.pmp && c.fbs => "fbs",
                    Some(c) if c.pmp => "cbs",
                    _ => "none",
                };
                f.insert(
                    "pm_support".into(),
                    if caps.is_some() {
                        fig(Value::Str(pm.into()), format!("{src}: ahci_host_caps PMP and FBS bits"))
                    } else {
                        inferred(Value::Str("none".into()), "no AHCI capabilities in sysfs")
                    },
                );
                if let Some(m) = mps_cap {
                    f.insert("mps".into(), fig(Value::Num(f64::from(m)), format!("{src}/config: PCIe DevCap")));
                }
                let part = Part {
                    id: format!("pci-{}-{}", ep.vendor, ep.device),
                    kind: Kind::Controller,
                    name: format!("Storage controller {} (not in the catalog)", ep.id()),
                    aliases: vec![],
                    pci_ids: vec![ep.id()],
                    notes: "written by iopath discover".into(),
                    figures: f,
                };
                (self.add_part(part), None)
            }
        };
        let id = self.unique_id(&format!("hba-{}", slug(&ep.bdf)));
        self.d.nodes.push(DNode {
            id: id.clone(),
            kind: Kind::Controller,
            part,
            parent: parent.to_string(),
            port: None,
            link,
            comments,
            key,
        });
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn drive_part(
        &mut self,
        name: &str,
        model: &str,
        interface: &str,
        gen_: u8,
        lanes: Option<u32>,
        (class, rotational): (DeviceClass, bool),
        size: u64,
    ) -> PartRef {
        if let Some(p) = match_drive_model(self.catalog, model) {
            return PartRef::Catalog(p.id.clone());
        }
        let src = format!("discovered from sysfs class/block/{name}");
        let mut f = BTreeMap::new();
        let medium = if rotational { "hdd" } else { "ssd" };
        let flag = format!("{src}/queue/rotational = {}", u8::from(rotational));
        let (class_fig, link_why) = match class {
            DeviceClass::Hdd | DeviceClass::Ssd => (fig(Value::Str(medium.into()), flag), None),
            DeviceClass::Nvme => {
                (fig(Value::Str("nvme".into()), format!("{src}: an NVMe controller on the device path")), None)
            }
            DeviceClass::Virtio { .. } => (
                inferred(
                    Value::Str(medium.into()),
                    &format!(
                        "virtio-blk: the guest sees neither medium nor link; {flag} is the flag the host passed on, taken as the medium"
                    ),
                ),
                Some(
                    "virtio-blk is a PCIe function of the virtio vendor (0x1af4), not NVMe: modelled as a PCIe drive on a nominal link",
                ),
            ),
            DeviceClass::Loop | DeviceClass::Virtual => (
                inferred(
                    Value::Str(medium.into()),
                    &format!("a kernel-made device: {flag} describes its backing store at best"),
                ),
                Some(
                    "a loop or other kernel-made device has no physical link: its I/O goes to the backing store through the kernel; SATA 3 is nominal",
                ),
            ),
        };
        f.insert("class".into(), class_fig);
        match link_why {
            None => {
                f.insert("interface".into(), fig(Value::Str(interface.into()), format!("{src}: device path")));
                f.insert("interface_gen".into(), fig(Value::Num(f64::from(gen_)), format!("{src}: link speed")));
            }
            Some(why) => {
                f.insert("interface".into(), inferred(Value::Str(interface.into()), why));
                f.insert("interface_gen".into(), inferred(Value::Num(f64::from(gen_)), why));
            }
        }
        if let Some(l) = lanes {
            f.insert("lanes".into(), fig(Value::Num(f64::from(l.clamp(1, 16))), format!("{src}: PCIe link width")));
        }
        let gb = (size as f64 / 1e9).max(0.001);
        f.insert("capacity_gb".into(), fig(Value::Num((gb * 1000.0).round() / 1000.0), format!("{src}/size")));
        let id = format!(
            "disk-{}-{}",
            if model.trim().is_empty() { interface.to_string() } else { slug(model) },
            (gb.round() as u64).max(1)
        );
        self.add_part(Part {
            id,
            kind: Kind::Drive,
            name: format!(
                "{} ({interface}, {:.0} GB, not in the catalog)",
                if model.is_empty() { "unnamed disk" } else { model },
                gb
            ),
            aliases: vec![],
            pci_ids: vec![],
            notes: "written by iopath discover".into(),
            figures: f,
        })
    }

    /// Reads one block device and adds it (and the nodes on its path) to the discovery.
    pub(super) fn walk_one(&mut self, name: &str, opts: &DiscoverOptions) {
        let b = match BlockDev::read(&self.root, name) {
            Ok(Some(b)) => b,
            Ok(None) => return,
            Err(note) => {
                self.d.notes.push(note);
                return;
            }
        };
        if b.virt {
            if !opts.include_virtual {
                self.d.notes.push(format!("skipped {name}: a virtual device (loop, dm, md, zram, ram)"));
                self.d.skipped_virtual.push(name.to_string());
                return;
            }
            if b.size == 0 {
                self.d.notes.push(format!("skipped {name}: size 0"));
                return;
            }
        }
        let pcis = b.pcis(&self.root);
        let mut comments = vec![format!("{} ({})", b.rel, if b.virt { "virtual" } else { "device path" })];
        comments.push(format!(
            "{} bytes, logical block {} B, {}",
            b.size,
            b.lbs,
            if b.rotational { "rotational" } else { "non-rotational" }
        ));
        let class = device_class(&b);
        comments.push(format!("class: {}", class.as_str()));
        let facts = DriveFacts {
            id: self.unique_id(&slug(name)),
            dev: format!("/dev/{name}"),
            class,
            comments,
            model: b.model.clone(),
            rotational: b.rotational,
            size_bytes: b.size,
            logical_block_size: b.lbs,
        };
        if b.virt {
            return self.virtual_drive(name, &b, facts);
        }
        let Some(ep) = pcis.last() else {
            self.d.notes.push(format!("skipped {name}: no PCI function on its path ({})", b.rel));
            return;
        };
        let up_parent = self.switches(&pcis[..pcis.len() - 1]);
        if matches!(class, DeviceClass::Nvme | DeviceClass::Virtio { .. }) {
            return self.pcie_drive(name, &b, ep, up_parent, facts);
        }
        // SCSI disks: AHCI/libata or SAS.
        let sas_host_phys = b.host().map(|h| b.host_phys(&self.root, h)).unwrap_or_default();
        let ctl = self.controller(ep, &up_parent, b.host(), sas_host_phys);
        match b.ata() {
            Some(n) => self.ata_drive(name, &b, n, &ctl, facts),
            None => self.sas_drive(name, &b, ctl, facts),
        }
    }

    /// A virtual block device, under one shared "virtual" controller.
    ///
    /// Its link is the controller's nominal one, every figure of it inferred with why.
    fn virtual_drive(&mut self, name: &str, b: &BlockDev, facts: DriveFacts) {
        let key = "virtual".to_string();
        let parent = match self.node_ix(&key) {
            Some(ix) => self.d.nodes[ix].id.clone(),
            None => {
                let mut f = BTreeMap::new();
                let s = "virtual block devices have no hardware path";
                f.insert("uplink".into(), inferred(Value::Str("internal".into()), s));
                f.insert("lanes".into(), inferred(Value::Num(1.0), s));
                f.insert("ports".into(), inferred(Value::Num(64.0), s));
                f.insert("sata_gen".into(), inferred(Value::Num(3.0), s));
                f.insert("pm_support".into(), inferred(Value::Str("none".into()), s));
                let part = self.add_part(Part {
                    id: "virtual-block".into(),
                    kind: Kind::Controller,
                    name: "Virtual block devices (loop, dm, md, zram)".into(),
                    aliases: vec![],
                    pci_ids: vec![],
                    notes: "written by iopath discover".into(),
                    figures: f,
                });
                self.d.nodes.push(DNode {
                    id: "virtual".into(),
                    kind: Kind::Controller,
                    part,
                    parent: "host".into(),
                    port: None,
                    link: None,
                    comments: vec!["devices under /sys/devices/virtual".into()],
                    key,
                });
                "virtual".into()
            }
        };
        let part = self.drive_part(name, &b.model, "sata", 3, None, (facts.class, b.rotational), b.size);
        self.push_drive(facts, Place { part, parent, port: None, link: None });
    }

    /// A PCIe drive (NVMe, virtio-blk): attaches to the host or a switch.
    fn pcie_drive(&mut self, name: &str, b: &BlockDev, ep: &Pci, parent: String, mut facts: DriveFacts) {
        let known = pcie_gen_str(ep);
        let (g, w) = known.unwrap_or((3, 4));
        let model = if b.model.is_empty() && b.virtio() {
            "virtio disk".to_string()
        } else {
            read(&b.real.join("device/model")).unwrap_or(b.model.clone())
        };
        facts.comments.push(format!("{} ({}): {}", ep.bdf, ep.id(), ep.link_comment()));
        facts.comments.push(ep.mps_comment().1);
        if b.virtio() {
            facts.comments.push("virtio-blk: modelled as a PCIe drive; the link figures are nominal".into());
        }
        let part = self.drive_part(name, &model, "nvme", g, Some(w), (facts.class, b.rotational), b.size);
        if known.is_none() {
            self.mark_inferred(
                &part,
                &["interface_gen", "lanes"],
                "no PCIe link attributes in sysfs (virtual function): PCIe 3.0 x4 assumed",
            );
        }
        facts.model = model;
        self.push_drive(facts, Place { part, parent, port: None, link: None });
    }

    /// A libata disk on port `ataN` of controller `ctl`, directly or behind a port multiplier.
    fn ata_drive(&mut self, name: &str, b: &BlockDev, n: u32, ctl: &str, mut facts: DriveFacts) {
        // A controller that does not resolve is none of the catalog's nor of this walk's
        // (ata ports hang off a controller the walk has placed): SATA 3 is the fastest there is.
        let ctl_sata_gen =
            self.part_spec(ctl).as_ref().and_then(PartSpec::controller).map_or(3.0, |c| f64::from(c.sata_gen));
        let port_no = read(&self.root.join(format!("class/ata_port/ata{n}/port_no")))
            .and_then(|s| s.parse::<u32>().ok())
            .unwrap_or(1);
        let pmp_links = read(&self.root.join(format!("class/ata_port/ata{n}/nr_pmp_links")))
            .and_then(|s| s.parse::<u32>().ok())
            .unwrap_or(0);
        let channel = b.addr().map(|a| a[1]).unwrap_or(0);
        let root = self.root.clone();
        let spd = |link: &str| read(&root.join(format!("class/ata_link/{link}/sata_spd")));
        let (parent, port, link_name) = if pmp_links > 0 {
            let pm = self.port_multiplier(n, ctl, port_no, pmp_links);
            (pm, Some(channel), format!("link{n}.{channel}"))
        } else {
            (ctl.to_string(), Some(port_no.saturating_sub(1)), format!("link{n}"))
        };
        let s = spd(&link_name);
        let g = s.as_deref().and_then(sata_gen);
        facts.comments.push(format!("ata{n} {link_name}: {}", s.clone().unwrap_or_else(|| "speed unknown".into())));
        let link = g.filter(|g| f64::from(*g) < ctl_sata_gen).map(|g| format!("sata{g}"));
        let part = self.drive_part(name, &b.model, "sata", g.unwrap_or(3), None, (facts.class, b.rotational), b.size);
        let port = self.port_if_fits(&parent, port);
        self.push_drive(facts, Place { part, parent, port, link });
    }

    /// The port multiplier on `ataN` (added once); returns its id.
    fn port_multiplier(&mut self, n: u32, ctl: &str, port_no: u32, pmp_links: u32) -> String {
        let key = format!("ata{n}-pmp");
        if let Some(ix) = self.node_ix(&key) {
            return self.d.nodes[ix].id.clone();
        }
        let up = read(&self.root.join(format!("class/ata_link/link{n}/sata_spd")));
        let ug = up.as_deref().and_then(sata_gen);
        let fbs =
            self.part_spec(ctl).and_then(|s| s.controller().map(|c| c.pm_support == PmSupport::Fbs)).unwrap_or(false);
        let src = format!("discovered from sysfs class/ata_port/ata{n}");
        let mut f = BTreeMap::new();
        f.insert("ports".into(), fig(Value::Num(f64::from(pmp_links.min(15))), format!("{src}/nr_pmp_links")));
        f.insert(
            "sata_gen".into(),
            match ug {
                Some(g) => {
                    fig(Value::Num(f64::from(g)), format!("discovered from sysfs class/ata_link/link{n}/sata_spd"))
                }
                None => inferred(Value::Num(2.0), "upstream link speed unknown; SATA 3 Gb/s assumed"),
            },
        );
        f.insert(
            "fbs_capable".into(),
            inferred(
                Value::Bool(fbs),
                "assumed to match the controller's FBS support (ahci_host_caps); the PM's own GSCR was not decoded",
            ),
        );
        let part = self.add_part(Part {
            id: format!("pm-{}port-sata{}", pmp_links, ug.unwrap_or(2)),
            kind: Kind::PortMultiplier,
            name: format!("SATA port multiplier, {pmp_links} ports (model not readable from sysfs)"),
            aliases: vec![],
            pci_ids: vec![],
            notes: "written by iopath discover".into(),
            figures: f,
        });
        let pid = self.unique_id(&format!("pm-ata{n}"));
        self.d.nodes.push(DNode {
            id: pid.clone(),
            kind: Kind::PortMultiplier,
            part,
            parent: ctl.to_string(),
            port: Some(port_no.saturating_sub(1)),
            link: None,
            comments: vec![format!(
                "port multiplier on ata{n}, host link link{n}: {}",
                up.unwrap_or_else(|| "speed unknown".into())
            )],
            key,
        });
        pid
    }

    /// A SAS or SATA disk behind a SAS HBA `ctl`, through its expanders.
    fn sas_drive(&mut self, name: &str, b: &BlockDev, ctl: String, mut facts: DriveFacts) {
        let mut parent = ctl;
        for e in &b.expanders() {
            parent = self.expander(e, parent);
        }
        let sata = b.vendor.trim() == "ATA";
        let iface = if sata { "sata" } else { "sas" };
        let mut drive_rate = None;
        if let Some(ed) = b.find("end_device-") {
            let r = read(
                &self
                    .root
                    .join(format!("class/sas_phy/phy-{}/negotiated_linkrate", ed.trim_start_matches("end_device-"))),
            );
            drive_rate = r.as_deref().and_then(sas_gen);
            facts.comments.push(format!("{ed}{}", r.map(|r| format!(": {r}")).unwrap_or_default()));
        }
        // A SATA drive behind SAS runs SATA 6 Gb/s at most; a SAS drive its phy's rate.
        let gen_ = if sata { 3 } else { drive_rate.unwrap_or(3) };
        let part = self.drive_part(name, &b.model, iface, gen_, None, (facts.class, b.rotational), b.size);
        self.push_drive(facts, Place { part, parent, port: None, link: None });
    }

    /// The expander at path `e` under `parent` (added once); returns its id.
    fn expander(&mut self, e: &str, parent: String) -> String {
        let key = e.to_string();
        if let Some(ix) = self.node_ix(&key) {
            return self.d.nodes[ix].id.clone();
        }
        let phys = phys_in(&self.root.join(e));
        let rates = expander_rates(&self.root, e, &phys);
        let g = rates.iter().filter_map(|(_, r)| r.as_deref().and_then(sas_gen)).max();
        let src = format!("discovered from sysfs {e}");
        let mut f = BTreeMap::new();
        f.insert(
            "sas_gen".into(),
            match g {
                Some(g) => fig(Value::Num(f64::from(g)), format!("{src}: highest negotiated_linkrate of its phys")),
                None => inferred(Value::Num(3.0), "no phy link rate readable; SAS3 assumed"),
            },
        );
        f.insert("phys".into(), fig(Value::Num(phys.len().max(1) as f64), format!("{src}: phy-* entries")));
        let fitted = "not readable from sysfs; the fit of the one expander measured in a stored source \
                      (broadcom-sas3x28, model/catalog/fits.toml); fit yours with iopath fit";
        f.insert("hop_latency_us".into(), inferred(Value::Num(0.5), fitted));
        f.insert("stp_write_turnaround_us".into(), inferred(Value::Num(0.5), fitted));
        f.insert("stp_write_efficiency".into(), inferred(Value::Num(0.86), fitted));
        f.insert(
            "store_forward".into(),
            inferred(
                Value::Bool(g.unwrap_or(3) >= 3),
                "not readable from sysfs; assumed for 12 Gb/s expanders (store-and-forward buffering came with SAS3) and not for older ones",
            ),
        );
        let part = self.add_part(Part {
            id: format!("sas-expander-{}phys-sas{}", phys.len().max(1), g.unwrap_or(3)),
            kind: Kind::Expander,
            name: format!("SAS expander, {} phys (model not readable from sysfs)", phys.len()),
            aliases: vec![],
            pci_ids: vec![],
            notes: "written by iopath discover".into(),
            figures: f,
        });
        let name_e = e.rsplit('/').next().unwrap_or(e).to_string();
        let id_e = self.unique_id(&slug(&name_e));
        let rate_list: Vec<String> =
            rates.iter().map(|(p, r)| format!("{p} {}", r.clone().unwrap_or_else(|| "?".into()))).collect();
        self.d.nodes.push(DNode {
            id: id_e.clone(),
            kind: Kind::Expander,
            part,
            parent,
            port: None,
            link: None,
            comments: vec![format!("{name_e}: {}", rate_list.join(", "))],
            key,
        });
        id_e
    }
}

/// What a block device is, from what sysfs says: a loop device by its `loop/backing_file` (or
/// name under devices/virtual), another kernel-made device by its place under
/// devices/virtual, virtio-blk by its driver (`device/driver` -> virtio_blk), its modalias
/// (`virtio:d00000002v00001AF4`: device 2 is a block device, vendor 0x1af4 virtio's) or a
/// `virtioN` device on its path, NVMe by an `nvmeN` controller on its path, and a SCSI disk
/// (SATA or SAS) as rotating or solid-state by `queue/rotational`. A rotational virtio disk
/// is a virtual one whose host passed the flag on, never an NVMe drive.
pub(super) fn device_class(b: &BlockDev) -> DeviceClass {
    if b.backing_file.is_some() || b.virt && b.segs.last().is_some_and(|s| s.starts_with("loop")) {
        DeviceClass::Loop
    } else if b.virt {
        DeviceClass::Virtual
    } else if b.virtio() {
        DeviceClass::Virtio { rotational: b.rotational }
    } else if b.nvme() {
        DeviceClass::Nvme
    } else if b.rotational {
        DeviceClass::Hdd
    } else {
        DeviceClass::Ssd
    }
}
