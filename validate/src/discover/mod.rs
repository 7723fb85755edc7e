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

mod classify;
mod sysfs;
mod write;

use iopath_model::Catalog;
use iopath_model::catalog::{Kind, Part};
use iopath_model::parts::{self, PartSpec};
use std::io;
use std::path::{Path, PathBuf};

pub use classify::match_drive_model;
pub use sysfs::{AhciCaps, hostname, parse_ahci_caps, pcie_gen, pcie_mps, sas_gen, sata_gen};
pub use write::{materialise_manifest, to_toml};

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// The CLI names the option that sets the root.
    #[error("{path}: cannot list block devices: {cause}; is sysfs mounted there?")]
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

/// What a block device is, from what sysfs says about it (`classify::device_class`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceClass {
    /// A rotating disk on SATA or SAS (`queue/rotational` = 1).
    Hdd,
    /// A SATA or SAS solid-state drive (`queue/rotational` = 0).
    Ssd,
    /// An NVMe namespace (an `nvmeN` controller on the path, driver `nvme`).
    Nvme,
    /// A virtio-blk disk (driver `virtio_blk`, virtio vendor 0x1af4): the guest sees neither
    /// the medium nor the link; `rotational` is the flag the host passed on.
    Virtio { rotational: bool },
    /// A loop device (`loop/backing_file`): a file or device seen through the page cache.
    Loop,
    /// Another kernel-made device (dm, md, zram, ram).
    Virtual,
}

impl DeviceClass {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceClass::Hdd => "hdd",
            DeviceClass::Ssd => "ssd",
            DeviceClass::Nvme => "nvme",
            DeviceClass::Virtio { rotational: true } => "virtual-rotational",
            DeviceClass::Virtio { rotational: false } => "virtual",
            DeviceClass::Loop => "loop",
            DeviceClass::Virtual => "virtual",
        }
    }
}

/// A discovered drive.
#[derive(Debug, Clone, PartialEq)]
pub struct DDrive {
    pub id: String,
    /// The block device, its own (no two drives share one).
    pub dev: String,
    pub class: DeviceClass,
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
    /// Virtual devices left out (loop, dm, md, zram, ram), by name: listed when asked
    /// ([`DiscoverOptions::include_virtual`]).
    pub skipped_virtual: Vec<String>,
}

struct Walker<'a> {
    root: PathBuf,
    catalog: &'a Catalog,
    d: Discovered,
}

/// What every discovered drive records, whatever it is attached to.
struct DriveFacts {
    id: String,
    dev: String,
    class: DeviceClass,
    comments: Vec<String>,
    model: String,
    rotational: bool,
    size_bytes: u64,
    logical_block_size: u32,
}

/// Where a drive attaches, and its part.
struct Place {
    part: PartRef,
    parent: String,
    port: Option<u32>,
    link: Option<String>,
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

    /// The typed figures of node `id`'s part, from the catalog or as this walk wrote it
    /// (its declared defaults filled in).
    fn part_spec(&self, id: &str) -> Option<PartSpec> {
        let n = self.d.nodes.iter().find(|n| n.id == id)?;
        let part = match &n.part {
            PartRef::Catalog(p) => self.catalog.get(p)?,
            PartRef::Local(p) => self.d.parts.iter().find(|x| &x.id == p)?,
        };
        parts::spec_of(part)
    }

    /// A port number only when the parent has that many ports and it is free.
    fn port_if_fits(&self, parent: &str, port: Option<u32>) -> Option<u32> {
        let p = port?;
        let (ports, _) = self.part_spec(parent)?.ports()?;
        let used = self.d.drives.iter().any(|d| d.parent == parent && d.port == Some(p))
            || self.d.nodes.iter().any(|x| x.parent == parent && x.port == Some(p));
        (p < ports && !used).then_some(p)
    }

    fn push_drive(&mut self, f: DriveFacts, at: Place) {
        self.d.drives.push(DDrive {
            id: f.id,
            dev: f.dev,
            class: f.class,
            part: at.part,
            parent: at.parent,
            port: at.port,
            link: at.link,
            comments: f.comments,
            model: f.model,
            rotational: f.rotational,
            size_bytes: f.size_bytes,
            logical_block_size: f.logical_block_size,
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

#[cfg(test)]
mod tests {
    use super::sysfs::{hctl, is_bdf};
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
