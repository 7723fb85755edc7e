//! This machine's storage topology from sysfs, written as a topology file that
//! `iopath check` loads.
//!
//! For every block device in `<sysfs>/class/block` (partitions skipped; loop, ram, zram,
//! dm, md skipped unless asked) the walk takes the resolved device path and classifies its
//! segments as udev's path_id and lsblk do:
//!
//! ```text
//! pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:08.0/0000:03:00.0/nvme/nvme0/nvme0n1
//!            root port    switch up    switch down  endpoint     NVMe controller
//! pci0000:00/0000:00:1f.2/ata3/host2/target2:1:0/2:1:0:0/block/sdc
//!            AHCI HBA     port host  channel 1 = port-multiplier port 1
//! pci0000:00/0000:00:03.0/0000:03:00.0/host4/port-4:0/expander-4:0/port-4:0:0/end_device-4:0:0/...
//!                         SAS HBA                     expander
//! ```
//!
//! It reads PCIe link speed and width, the Max Payload Size from config space (root only;
//! a comment says so when unreadable), SATA link speeds (`ata_link/linkN[.M]/sata_spd`),
//! AHCI capabilities (`scsi_host/hostN/ahci_host_caps`: ports, FBS, PMP, speed), SAS phy
//! link rates, rotational flag, model, logical block size and size. PCI ids are matched to
//! catalog parts; anything unknown becomes a `[[part]]` table in the file with what was
//! read (basis "measurement", source naming the sysfs file), so the file loads as is.
//!
//! The sysfs root is a parameter, so tests run on small fake trees
//! ([`materialise_manifest`]).

use iopath_model::Catalog;
use iopath_model::catalog::{Figure, Kind, Part, Value};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{path}: cannot list block devices: {cause}; is sysfs mounted there (try --sysfs-root /sys)?")]
    NoBlockClass { path: PathBuf, cause: io::Error },
}

/// Options of a discovery.
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Also list virtual devices (loop, dm, md, zram, ram) under a virtual controller.
    pub include_virtual: bool,
}

/// Where a node's or drive's part comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PartRef {
    /// A catalog part id.
    Catalog(String),
    /// A part defined in the written file (id of an entry in [`Discovered::parts`]).
    Local(String),
}

impl PartRef {
    pub fn id(&self) -> &str {
        match self {
            PartRef::Catalog(s) | PartRef::Local(s) => s,
        }
    }
}

/// A discovered switch, controller, port multiplier or expander.
#[derive(Debug, Clone, PartialEq)]
pub struct DNode {
    pub id: String,
    pub kind: Kind,
    pub part: PartRef,
    pub parent: String,
    pub port: Option<u32>,
    /// Link to the parent when it differs from the part's own ("pcie3x1").
    pub link: Option<String>,
    pub comments: Vec<String>,
    /// sysfs path this node came from (relative to the root), for keys.
    pub key: String,
}

/// A discovered drive.
#[derive(Debug, Clone, PartialEq)]
pub struct DDrive {
    pub id: String,
    pub dev: String,
    pub part: PartRef,
    pub parent: String,
    pub port: Option<u32>,
    pub link: Option<String>,
    pub comments: Vec<String>,
    pub model: String,
    pub rotational: bool,
    pub size_bytes: u64,
    pub logical_block_size: u32,
}

/// What a discovery found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    pub nodes: Vec<DNode>,
    pub drives: Vec<DDrive>,
    /// Parts defined in the file (unknown to the catalog).
    pub parts: Vec<Part>,
    /// Header comments: what was skipped or unreadable.
    pub notes: Vec<String>,
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn is_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && s.chars().enumerate().all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

fn num_suffix(s: &str, prefix: &str) -> Option<u32> {
    s.strip_prefix(prefix)?.parse().ok()
}

fn hctl(s: &str) -> Option<[u32; 4]> {
    let v: Vec<u32> = s.split(':').filter_map(|x| x.parse().ok()).collect();
    (v.len() == 4 && s.split(':').count() == 4).then(|| [v[0], v[1], v[2], v[3]])
}

/// PCIe generation from a `current_link_speed` string ("8.0 GT/s PCIe", "8 GT/s").
pub fn pcie_gen(speed: &str) -> Option<u8> {
    let gts: f64 = speed.split_whitespace().next()?.parse().ok()?;
    Some(match gts {
        x if x < 3.0 => 1,
        x if x < 6.0 => 2,
        x if x < 12.0 => 3,
        x if x < 24.0 => 4,
        x if x < 48.0 => 5,
        _ => 6,
    })
}

/// SATA generation from `sata_spd` ("6.0 Gbps"); `None` for "<unknown>".
pub fn sata_gen(spd: &str) -> Option<u8> {
    let g: f64 = spd.split_whitespace().next()?.parse().ok()?;
    Some(match g {
        x if x < 2.0 => 1,
        x if x < 4.0 => 2,
        _ => 3,
    })
}

/// SAS generation from `negotiated_linkrate` ("12.0 Gbit"); `None` for states.
pub fn sas_gen(rate: &str) -> Option<u8> {
    let g: f64 = rate.split_whitespace().next()?.parse().ok()?;
    Some(match g {
        x if x < 2.0 => 1,
        x if x < 4.0 => 1,
        x if x < 8.0 => 2,
        x if x < 16.0 => 3,
        _ => 4,
    })
}

/// AHCI CAP register fields (`ahci_host_caps`, hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AhciCaps {
    pub ports: u32,
    pub slots: u32,
    pub fbs: bool,
    pub pmp: bool,
    /// 1/2/3 = 1.5/3/6 Gb/s; 0 unknown.
    pub speed_gen: u8,
    pub ncq: bool,
}

pub fn parse_ahci_caps(s: &str) -> Option<AhciCaps> {
    let v = u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()?;
    Some(AhciCaps {
        ports: (v & 0x1f) + 1,
        slots: ((v >> 8) & 0x1f) + 1,
        fbs: v & (1 << 16) != 0,
        pmp: v & (1 << 17) != 0,
        speed_gen: ((v >> 20) & 0xf) as u8,
        ncq: v & (1 << 30) != 0,
    })
}

/// Max Payload Size from PCI config space: (supported by DevCap, configured in DevCtl).
/// `None` when the PCIe capability is beyond what could be read (64 bytes without root).
pub fn pcie_mps(config: &[u8]) -> Option<(u32, u32)> {
    if config.len() < 0x40 || config[0x06] & 0x10 == 0 {
        return None;
    }
    let mut p = (config[0x34] & !3) as usize;
    for _ in 0..48 {
        if p < 0x40 || p + 12 > config.len() {
            return None;
        }
        if config[p] == 0x10 {
            let devcap = u32::from_le_bytes([config[p + 4], config[p + 5], config[p + 6], config[p + 7]]);
            let devctl = u16::from_le_bytes([config[p + 8], config[p + 9]]);
            return Some((128 << (devcap & 7), 128 << ((devctl & 0xe0) >> 5)));
        }
        p = (config[p + 1] & !3) as usize;
    }
    None
}

struct Pci {
    bdf: String,
    dir: PathBuf,
    vendor: String,
    device: String,
    speed: Option<String>,
    width: Option<u32>,
    max_speed: Option<String>,
    max_width: Option<u32>,
}

impl Pci {
    fn read(dir: &Path) -> Pci {
        let hex = |n: &str| {
            read(&dir.join(n)).map(|s| s.trim_start_matches("0x").to_ascii_lowercase()).unwrap_or_else(|| "0000".into())
        };
        Pci {
            bdf: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            dir: dir.to_path_buf(),
            vendor: hex("vendor"),
            device: hex("device"),
            speed: read(&dir.join("current_link_speed")),
            width: read(&dir.join("current_link_width")).and_then(|s| s.parse().ok()),
            max_speed: read(&dir.join("max_link_speed")),
            max_width: read(&dir.join("max_link_width")).and_then(|s| s.parse().ok()),
        }
    }
    fn id(&self) -> String {
        format!("{}:{}", self.vendor, self.device)
    }
    fn link_comment(&self) -> String {
        match (&self.speed, self.width) {
            (Some(s), Some(w)) => format!(
                "PCIe link {s} x{w} (max {} x{})",
                self.max_speed.as_deref().unwrap_or("?"),
                self.max_width.map(|w| w.to_string()).unwrap_or("?".into())
            ),
            _ => "no PCIe link attributes (integrated or virtual function)".into(),
        }
    }
    fn mps_comment(&self) -> (Option<u32>, String) {
        match std::fs::read(self.dir.join("config")) {
            Ok(c) => match pcie_mps(&c) {
                Some((cap, ctl)) => {
                    (Some(cap), format!("Max Payload Size {ctl} bytes in use, {cap} supported (config space)"))
                }
                None if c.len() < 256 => (
                    None,
                    "Max Payload Size unreadable: config space beyond 64 bytes needs root (run discover as root)"
                        .into(),
                ),
                None => (None, "no PCIe capability in config space".into()),
            },
            Err(_) => (None, "Max Payload Size unreadable: no config file".into()),
        }
    }
}

fn fig(v: Value, source: String) -> Figure {
    Figure { value: v, source, basis: "measurement".into() }
}

fn inferred(v: Value, source: &str) -> Figure {
    Figure { value: v, source: source.into(), basis: "inferred".into() }
}

fn slug(s: &str) -> String {
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

fn pcie_gen_str(p: &Pci) -> Option<(u8, u32)> {
    Some((pcie_gen(p.speed.as_deref()?)?, p.width?))
}

struct Walker<'a> {
    root: PathBuf,
    catalog: &'a Catalog,
    d: Discovered,
}

impl Walker<'_> {
    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root).unwrap_or(p).display().to_string()
    }

    fn add_part(&mut self, p: Part) -> PartRef {
        let id = p.id.clone();
        if !self.d.parts.iter().any(|x| x.id == id) {
            self.d.parts.push(p);
        }
        PartRef::Local(id)
    }

    fn node_ix(&self, key: &str) -> Option<usize> {
        self.d.nodes.iter().position(|n| n.key == key)
    }

    fn unique_id(&self, base: &str) -> String {
        let taken =
            |s: &str| s == "host" || self.d.nodes.iter().any(|n| n.id == s) || self.d.drives.iter().any(|d| d.id == s);
        if !taken(base) {
            return base.to_string();
        }
        (2..).map(|i| format!("{base}-{i}")).find(|s| !taken(s)).unwrap_or_default()
    }

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
                    let pg = p.figures.get("uplink").map(|f| f.value.to_string());
                    let pl = p.figures.get("lanes").map(|f| f.value.to_string());
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
        rotational: bool,
        size: u64,
    ) -> PartRef {
        if let Some(p) = match_drive_model(self.catalog, model) {
            return PartRef::Catalog(p.id.clone());
        }
        let src = format!("discovered from sysfs class/block/{name}");
        let mut f = BTreeMap::new();
        let class = if interface == "nvme" {
            "nvme"
        } else if rotational {
            "hdd"
        } else {
            "ssd"
        };
        f.insert("class".into(), fig(Value::Str(class.into()), format!("{src}/queue/rotational")));
        f.insert("interface".into(), fig(Value::Str(interface.into()), format!("{src}: device path")));
        f.insert("interface_gen".into(), fig(Value::Num(f64::from(gen_)), format!("{src}: link speed")));
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

    fn walk_one(&mut self, name: &str, opts: &DiscoverOptions) {
        let entry = self.root.join("class/block").join(name);
        if entry.join("partition").exists() {
            return;
        }
        let Ok(real) = std::fs::canonicalize(&entry) else {
            self.d.notes.push(format!("{name}: cannot resolve {}", entry.display()));
            return;
        };
        let rel = self.rel(&real);
        let segs: Vec<&str> = rel.split('/').collect();
        let virt = segs.contains(&"virtual");
        let size = read(&real.join("size")).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0) * 512;
        let rotational = read(&real.join("queue/rotational")).as_deref() == Some("1");
        let lbs = read(&real.join("queue/logical_block_size")).and_then(|s| s.parse().ok()).unwrap_or(512);
        let model = read(&real.join("device/model")).unwrap_or_default();
        let vendor = read(&real.join("device/vendor")).unwrap_or_default();
        if virt {
            if !opts.include_virtual {
                self.d
                    .notes
                    .push(format!("skipped {name}: a virtual device (loop, dm, md, zram, ram); use --all to list it"));
                return;
            }
            if size == 0 {
                self.d.notes.push(format!("skipped {name}: size 0"));
                return;
            }
        }
        let pcis: Vec<Pci> = {
            let mut acc = self.root.clone();
            let mut v = Vec::new();
            for s in &segs {
                acc.push(s);
                if is_bdf(s) {
                    v.push(Pci::read(&acc));
                }
            }
            v
        };
        let find = |pfx: &str| segs.iter().find(|s| s.starts_with(pfx)).copied();
        let ata = segs.iter().find_map(|s| num_suffix(s, "ata"));
        let host = segs.iter().find(|s| num_suffix(s, "host").is_some()).copied();
        let addr = segs.iter().rev().find_map(|s| hctl(s));
        let nvme = segs.iter().any(|s| num_suffix(s, "nvme").is_some());
        let virtio = find("virtio").is_some();
        let expanders: Vec<String> = segs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.starts_with("expander-"))
            .map(|(i, _)| segs[..=i].join("/"))
            .collect();
        let mut comments = vec![format!("{} ({})", rel, if virt { "virtual" } else { "device path" })];
        comments.push(format!(
            "{} bytes, logical block {lbs} B, {}",
            size,
            if rotational { "rotational" } else { "non-rotational" }
        ));
        let dev = format!("/dev/{name}");
        let id = self.unique_id(&slug(name));

        if virt {
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
            let part = self.drive_part(name, &model, "sata", 3, None, rotational, size);
            self.push_drive(id, dev, part, parent, None, None, comments, model, rotational, size, lbs);
            return;
        }
        let Some(ep) = pcis.last() else {
            self.d.notes.push(format!("skipped {name}: no PCI function on its path ({rel})"));
            return;
        };
        let bridges = &pcis[..pcis.len() - 1];
        let up_parent = self.switches(bridges);

        if nvme || virtio {
            // A PCIe drive: attaches to the host or a switch.
            let known = pcie_gen_str(ep);
            let (g, w) = known.unwrap_or((3, 4));
            let model = if model.is_empty() && virtio {
                "virtio disk".to_string()
            } else {
                read(&real.join("device/model")).unwrap_or(model)
            };
            comments.push(format!("{} ({}): {}", ep.bdf, ep.id(), ep.link_comment()));
            comments.push(ep.mps_comment().1);
            if virtio {
                comments.push("virtio-blk: modelled as a PCIe drive; the link figures are nominal".into());
            }
            let part = self.drive_part(name, &model, "nvme", g, Some(w), false, size);
            if known.is_none() {
                self.mark_inferred(
                    &part,
                    &["interface_gen", "lanes"],
                    "no PCIe link attributes in sysfs (virtual function): PCIe 3.0 x4 assumed",
                );
            }
            self.push_drive(id, dev, part, up_parent, None, None, comments, model, rotational, size, lbs);
            return;
        }
        // SCSI disks: AHCI/libata or SAS.
        let sas_host_phys: Vec<String> = host
            .map(|h| {
                let hostdir = self.root.join(segs[..segs.iter().position(|s| s == &h).unwrap_or(0) + 1].join("/"));
                std::fs::read_dir(hostdir)
                    .map(|rd| {
                        let mut v: Vec<String> = rd
                            .flatten()
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .filter(|n| n.starts_with("phy-"))
                            .collect();
                        v.sort();
                        v
                    })
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let ctl = self.controller(ep, &up_parent, host, sas_host_phys);
        let ctl_sata_gen = self.ctl_figure(&ctl, "sata_gen").unwrap_or(3.0);
        if let Some(n) = ata {
            let port_no = read(&self.root.join(format!("class/ata_port/ata{n}/port_no")))
                .and_then(|s| s.parse::<u32>().ok())
                .unwrap_or(1);
            let pmp_links = read(&self.root.join(format!("class/ata_port/ata{n}/nr_pmp_links")))
                .and_then(|s| s.parse::<u32>().ok())
                .unwrap_or(0);
            let channel = addr.map(|a| a[1]).unwrap_or(0);
            let root = self.root.clone();
            let spd = |link: &str| read(&root.join(format!("class/ata_link/{link}/sata_spd")));
            let (parent, port, link_name) = if pmp_links > 0 {
                let key = format!("ata{n}-pmp");
                let pm = match self.node_ix(&key) {
                    Some(ix) => self.d.nodes[ix].id.clone(),
                    None => {
                        let up = spd(&format!("link{n}"));
                        let ug = up.as_deref().and_then(sata_gen);
                        let fbs = self.ctl_text(&ctl, "pm_support").map(|s| s == "fbs").unwrap_or(false);
                        let src = format!("discovered from sysfs class/ata_port/ata{n}");
                        let mut f = BTreeMap::new();
                        f.insert(
                            "ports".into(),
                            fig(Value::Num(f64::from(pmp_links.min(15))), format!("{src}/nr_pmp_links")),
                        );
                        f.insert(
                            "sata_gen".into(),
                            match ug {
                                Some(g) => fig(
                                    Value::Num(f64::from(g)),
                                    format!("discovered from sysfs class/ata_link/link{n}/sata_spd"),
                                ),
                                None => inferred(Value::Num(2.0), "upstream link speed unknown; SATA 3 Gb/s assumed"),
                            },
                        );
                        f.insert(
                            "fbs_capable".into(),
                            inferred(Value::Bool(fbs), "assumed to match the controller's FBS support (ahci_host_caps); the PM's own GSCR was not decoded"),
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
                            parent: ctl.clone(),
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
                };
                (pm, Some(channel), format!("link{n}.{channel}"))
            } else {
                (ctl.clone(), Some(port_no.saturating_sub(1)), format!("link{n}"))
            };
            let s = spd(&link_name);
            let g = s.as_deref().and_then(sata_gen);
            comments.push(format!("ata{n} {link_name}: {}", s.clone().unwrap_or_else(|| "speed unknown".into())));
            let link = g.filter(|g| f64::from(*g) < ctl_sata_gen).map(|g| format!("sata{g}"));
            let part = self.drive_part(name, &model, "sata", g.unwrap_or(3), None, rotational, size);
            let port = self.port_if_fits(&parent, port);
            self.push_drive(id, dev, part, parent, port, link, comments, model, rotational, size, lbs);
            return;
        }
        // SAS: expanders between the HBA and the drive.
        let mut parent = ctl.clone();
        for e in &expanders {
            let key = e.clone();
            if let Some(ix) = self.node_ix(&key) {
                parent = self.d.nodes[ix].id.clone();
                continue;
            }
            let dir = self.root.join(e);
            let mut phys: Vec<String> = std::fs::read_dir(&dir)
                .map(|rd| {
                    rd.flatten()
                        .map(|x| x.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.starts_with("phy-"))
                        .collect()
                })
                .unwrap_or_default();
            phys.sort();
            let rates: Vec<(String, Option<String>)> = phys
                .iter()
                .map(|p| {
                    let r = read(&dir.join(format!("{p}/sas_phy/{p}/negotiated_linkrate")))
                        .or_else(|| read(&self.root.join(format!("class/sas_phy/{p}/negotiated_linkrate"))));
                    (p.clone(), r)
                })
                .collect();
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
                parent: parent.clone(),
                port: None,
                link: None,
                comments: vec![format!("{name_e}: {}", rate_list.join(", "))],
                key,
            });
            parent = id_e;
        }
        let sata = vendor.trim() == "ATA";
        let iface = if sata { "sata" } else { "sas" };
        let mut drive_rate = None;
        if let Some(ed) = find("end_device-") {
            let r = read(
                &self
                    .root
                    .join(format!("class/sas_phy/phy-{}/negotiated_linkrate", ed.trim_start_matches("end_device-"))),
            );
            drive_rate = r.as_deref().and_then(sas_gen);
            comments.push(format!("{ed}{}", r.map(|r| format!(": {r}")).unwrap_or_default()));
        }
        // A SATA drive behind SAS runs SATA 6 Gb/s at most; a SAS drive its phy's rate.
        let gen_ = if sata { 3 } else { drive_rate.unwrap_or(3) };
        let part = self.drive_part(name, &model, iface, gen_, None, rotational, size);
        self.push_drive(id, dev, part, parent, None, None, comments, model, rotational, size, lbs);
    }

    fn mark_inferred(&mut self, part: &PartRef, names: &[&str], why: &str) {
        if let PartRef::Local(id) = part
            && let Some(p) = self.d.parts.iter_mut().find(|p| &p.id == id)
        {
            for n in names {
                if let Some(f) = p.figures.get_mut(*n) {
                    f.source = why.to_string();
                    f.basis = "inferred".into();
                }
            }
        }
    }

    fn ctl_figure(&self, id: &str, name: &str) -> Option<f64> {
        let n = self.d.nodes.iter().find(|n| n.id == id)?;
        let f = match &n.part {
            PartRef::Catalog(p) => self.catalog.get(p)?.figures.get(name)?.clone(),
            PartRef::Local(p) => self.d.parts.iter().find(|x| &x.id == p)?.figures.get(name)?.clone(),
        };
        match f.value {
            Value::Num(v) => Some(v),
            _ => None,
        }
    }

    fn ctl_text(&self, id: &str, name: &str) -> Option<String> {
        let n = self.d.nodes.iter().find(|n| n.id == id)?;
        let f = match &n.part {
            PartRef::Catalog(p) => self.catalog.get(p)?.figures.get(name)?.clone(),
            PartRef::Local(p) => self.d.parts.iter().find(|x| &x.id == p)?.figures.get(name)?.clone(),
        };
        match f.value {
            Value::Str(v) => Some(v),
            _ => None,
        }
    }

    /// A port number only when the parent has that many ports and it is free.
    fn port_if_fits(&self, parent: &str, port: Option<u32>) -> Option<u32> {
        let p = port?;
        let n = self.d.nodes.iter().find(|n| n.id == parent)?;
        let fig = if n.kind == Kind::Expander { "phys" } else { "ports" };
        let ports = self.ctl_figure(parent, fig)? as u32;
        let used = self.d.drives.iter().any(|d| d.parent == parent && d.port == Some(p))
            || self.d.nodes.iter().any(|x| x.parent == parent && x.port == Some(p));
        (p < ports && !used).then_some(p)
    }

    #[allow(clippy::too_many_arguments)]
    fn push_drive(
        &mut self,
        id: String,
        dev: String,
        part: PartRef,
        parent: String,
        port: Option<u32>,
        link: Option<String>,
        comments: Vec<String>,
        model: String,
        rotational: bool,
        size_bytes: u64,
        logical_block_size: u32,
    ) {
        self.d.drives.push(DDrive {
            id,
            dev,
            part,
            parent,
            port,
            link,
            comments,
            model,
            rotational,
            size_bytes,
            logical_block_size,
        });
    }
}

/// Walks `<root>/class/block` and returns what was found.
pub fn discover(root: &Path, catalog: &Catalog, opts: &DiscoverOptions) -> Result<Discovered, DiscoverError> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let dir = root.join("class/block");
    let rd = std::fs::read_dir(&dir).map_err(|e| DiscoverError::NoBlockClass { path: dir.clone(), cause: e })?;
    let mut names: Vec<String> = rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort_by_key(|a| natural_key(a));
    let mut w = Walker { root, catalog, d: Discovered::default() };
    for n in &names {
        w.walk_one(n, opts);
    }
    // Port multipliers need a controller that supports them; say so rather than fail.
    Ok(w.d)
}

fn natural_key(s: &str) -> (String, u64, String) {
    let i = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
    let j = s[i..].find(|c: char| !c.is_ascii_digit()).map(|k| i + k).unwrap_or(s.len());
    (s[..i].to_string(), s[i..j].parse().unwrap_or(0), s[j..].to_string())
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn value_toml(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Num(n) => {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{}", *n as i64)
            } else {
                format!("{n}")
            }
        }
        Value::Str(s) => q(s),
    }
}

fn comment_lines(out: &mut String, lines: &[String]) {
    for l in lines {
        for part in l.lines() {
            out.push_str("# ");
            out.push_str(part);
            out.push('\n');
        }
    }
}

/// Writes a discovery as topology TOML (with comments saying what was read).
pub fn to_toml(d: &Discovered, hostname: &str) -> String {
    let mut s = String::new();
    s += "# Written by `iopath discover` from sysfs. Parts not in the catalog are defined at the\n";
    s += "# end of this file with what sysfs told; figures it cannot tell are marked inferred.\n";
    comment_lines(&mut s, &d.notes);
    s += &format!("name = {}\n", q(&format!("{hostname} (discovered)")));
    s += &format!("description = {}\n", q(&format!("{} drives found by iopath discover", d.drives.len())));
    s += "source = \"iopath discover (sysfs)\"\n\n[host]\npart = \"generic-host\"\n";
    for n in &d.nodes {
        s += "\n";
        comment_lines(&mut s, &n.comments);
        s += "[[node]]\n";
        s += &format!("id = {}\npart = {}\nparent = {}\n", q(&n.id), q(n.part.id()), q(&n.parent));
        if let Some(p) = n.port {
            s += &format!("port = {p}\n");
        }
        if let Some(l) = &n.link {
            s += &format!("link = {}\n", q(l));
        }
    }
    for dr in &d.drives {
        s += "\n";
        comment_lines(&mut s, &dr.comments);
        s += "[[drive]]\n";
        s += &format!("id = {}\npart = {}\nparent = {}\n", q(&dr.id), q(dr.part.id()), q(&dr.parent));
        if let Some(p) = dr.port {
            s += &format!("port = {p}\n");
        }
        if let Some(l) = &dr.link {
            s += &format!("link = {}\n", q(l));
        }
        s += &format!("dev = {}\n", q(&dr.dev));
    }
    for p in &d.parts {
        s += "\n[[part]]\n";
        s += &format!("id = {}\nkind = {}\nname = {}\n", q(&p.id), q(p.kind.as_str()), q(&p.name));
        if !p.pci_ids.is_empty() {
            let ids: Vec<String> = p.pci_ids.iter().map(|i| q(i)).collect();
            s += &format!("pci_ids = [{}]\n", ids.join(", "));
        }
        if !p.notes.is_empty() {
            s += &format!("notes = {}\n", q(&p.notes));
        }
        for (k, f) in &p.figures {
            s += &format!(
                "figures.{k} = {{ value = {}, source = {}, basis = {} }}\n",
                value_toml(&f.value),
                q(&f.source),
                q(&f.basis)
            );
        }
    }
    s
}

/// Builds a fake sysfs tree from a manifest, one entry a line:
/// `d PATH` a directory, `f PATH CONTENT...` a file (content is the rest of the line plus a
/// newline), `x PATH HEX` a binary file, `l PATH TARGET` a symlink. `#` starts a comment.
pub fn materialise_manifest(manifest: &str, root: &Path) -> io::Result<()> {
    for (i, line) in manifest.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let mut it = line.splitn(3, ' ');
        let (op, path, rest) = (it.next().unwrap_or(""), it.next().unwrap_or(""), it.next().unwrap_or(""));
        let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("manifest line {}: {line:?}", i + 1));
        if path.is_empty() || path.starts_with('/') || path.contains("..") && op != "l" {
            return Err(bad());
        }
        let p = root.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match op {
            "d" => std::fs::create_dir_all(&p)?,
            "f" => std::fs::write(&p, format!("{rest}\n"))?,
            "x" => {
                let hex: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
                let bytes: Result<Vec<u8>, _> =
                    (0..hex.len() / 2).map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16)).collect();
                std::fs::write(&p, bytes.map_err(|_| bad())?)?;
            }
            "l" => {
                if rest.is_empty() {
                    return Err(bad());
                }
                let _ = std::fs::remove_file(&p);
                std::os::unix::fs::symlink(rest, &p)?;
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysfs_strings() {
        assert_eq!(pcie_gen("8.0 GT/s PCIe"), Some(3));
        assert_eq!(pcie_gen("2.5 GT/s"), Some(1));
        assert_eq!(pcie_gen("16.0 GT/s PCIe"), Some(4));
        assert_eq!(pcie_gen("Unknown"), None);
        assert_eq!(sata_gen("6.0 Gbps"), Some(3));
        assert_eq!(sata_gen("1.5 Gbps"), Some(1));
        assert_eq!(sata_gen("<unknown>"), None);
        assert_eq!(sas_gen("12.0 Gbit"), Some(3));
        assert_eq!(sas_gen("6.0 Gbit"), Some(2));
        assert_eq!(sas_gen("phy reset problem"), None);
        assert!(is_bdf("0000:00:1f.2"));
        assert!(!is_bdf("pci0000:00"));
        assert_eq!(hctl("2:1:0:0"), Some([2, 1, 0, 0]));
    }

    #[test]
    fn decodes_ahci_caps() {
        let c = parse_ahci_caps("c0331f05").unwrap();
        assert_eq!(c.ports, 6);
        assert_eq!(c.slots, 32);
        assert!(c.fbs && c.pmp && c.ncq);
        assert_eq!(c.speed_gen, 3);
        let c = parse_ahci_caps("0xe7220f05").unwrap();
        assert!(c.pmp && !c.fbs);
    }

    #[test]
    fn decodes_mps_from_config_space() {
        let mut c = vec![0u8; 256];
        c[0x06] = 0x10;
        c[0x34] = 0x40;
        c[0x40] = 0x01; // PM cap, next 0x70
        c[0x41] = 0x70;
        c[0x70] = 0x10; // PCIe cap
        c[0x74] = 0x02; // DevCap: 512 supported
        c[0x78] = 0x20; // DevCtl: MPS field 1 = 256
        assert_eq!(pcie_mps(&c), Some((512, 256)));
        assert_eq!(pcie_mps(&c[..64]), None);
    }
}
