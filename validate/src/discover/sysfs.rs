//! Reading sysfs: a block device's resolved path and attributes, the PCI functions on it,
//! link speeds, AHCI capabilities, config space and SAS phys. Nothing here decides what a
//! device is; [`super::classify`] does.

use std::path::{Path, PathBuf};

pub(super) fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

pub(super) fn is_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && s.chars().enumerate().all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

pub(super) fn num_suffix(s: &str, prefix: &str) -> Option<u32> {
    s.strip_prefix(prefix)?.parse().ok()
}

pub(super) fn hctl(s: &str) -> Option<[u32; 4]> {
    let v: Vec<u32> = s.split(':').filter_map(|x| x.parse().ok()).collect();
    (v.len() == 4 && s.split(':').count() == 4).then(|| [v[0], v[1], v[2], v[3]])
}

/// This machine's host name (`/proc/sys/kernel/hostname`), for the discovered topology's
/// name; `None` where procfs does not say.
pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string())
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

/// A PCI function on a device's path, as sysfs shows it.
pub(super) struct Pci {
    pub bdf: String,
    pub dir: PathBuf,
    pub vendor: String,
    pub device: String,
    pub speed: Option<String>,
    pub width: Option<u32>,
    pub max_speed: Option<String>,
    pub max_width: Option<u32>,
}

impl Pci {
    pub fn read(dir: &Path) -> Pci {
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
    pub fn id(&self) -> String {
        format!("{}:{}", self.vendor, self.device)
    }
    pub fn link_comment(&self) -> String {
        match (&self.speed, self.width) {
            (Some(s), Some(w)) => format!(
                "PCIe link {s} x{w} (max {} x{})",
                self.max_speed.as_deref().unwrap_or("?"),
                self.max_width.map(|w| w.to_string()).unwrap_or("?".into())
            ),
            _ => "no PCIe link attributes (integrated or virtual function)".into(),
        }
    }
    pub fn mps_comment(&self) -> (Option<u32>, String) {
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

/// PCIe generation and width of a function's link, when sysfs has them.
pub(super) fn pcie_gen_str(p: &Pci) -> Option<(u8, u32)> {
    Some((pcie_gen(p.speed.as_deref()?)?, p.width?))
}

/// What sysfs says about one block device (`class/block/NAME`) and its device path.
pub(super) struct BlockDev {
    /// The resolved device path, and relative to the sysfs root.
    pub real: PathBuf,
    pub rel: String,
    /// `rel` split at `/`.
    pub segs: Vec<String>,
    /// Under `devices/virtual` (loop, dm, md, zram, ram).
    pub virt: bool,
    pub size: u64,
    pub rotational: bool,
    pub lbs: u32,
    pub model: String,
    pub vendor: String,
    /// The driver bound to the device (`device/driver`'s target's name: sd, nvme, virtio_blk).
    pub driver: Option<String>,
    /// The device's modalias (`device/modalias`; virtio: `virtio:d00000002v00001AF4`).
    pub modalias: Option<String>,
    /// A loop device's backing file (`loop/backing_file`).
    pub backing_file: Option<String>,
}

impl BlockDev {
    /// Reads `class/block/NAME`; `Ok(None)` for a partition, `Err(note)` when the entry
    /// cannot be resolved.
    pub fn read(root: &Path, name: &str) -> Result<Option<BlockDev>, String> {
        let entry = root.join("class/block").join(name);
        if entry.join("partition").exists() {
            return Ok(None);
        }
        let Ok(real) = std::fs::canonicalize(&entry) else {
            return Err(format!("{name}: cannot resolve {}", entry.display()));
        };
        let rel = real.strip_prefix(root).unwrap_or(&real).display().to_string();
        let segs: Vec<String> = rel.split('/').map(str::to_string).collect();
        Ok(Some(BlockDev {
            virt: segs.iter().any(|s| s == "virtual"),
            size: read(&real.join("size")).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0) * 512,
            rotational: read(&real.join("queue/rotational")).as_deref() == Some("1"),
            lbs: read(&real.join("queue/logical_block_size")).and_then(|s| s.parse().ok()).unwrap_or(512),
            model: read(&real.join("device/model")).unwrap_or_default(),
            vendor: read(&real.join("device/vendor")).unwrap_or_default(),
            driver: std::fs::read_link(real.join("device/driver"))
                .ok()
                .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned())),
            modalias: read(&real.join("device/modalias")),
            backing_file: read(&real.join("loop/backing_file")),
            real,
            rel,
            segs,
        }))
    }

    /// The PCI functions on the path, root port first, endpoint last.
    pub fn pcis(&self, root: &Path) -> Vec<Pci> {
        let mut acc = root.to_path_buf();
        let mut v = Vec::new();
        for s in &self.segs {
            acc.push(s);
            if is_bdf(s) {
                v.push(Pci::read(&acc));
            }
        }
        v
    }

    /// The first path segment starting with `pfx`.
    pub fn find(&self, pfx: &str) -> Option<&str> {
        self.segs.iter().find(|s| s.starts_with(pfx)).map(String::as_str)
    }

    /// The libata port number (`ataN`), for AHCI/libata disks.
    pub fn ata(&self) -> Option<u32> {
        self.segs.iter().find_map(|s| num_suffix(s, "ata"))
    }

    /// The SCSI host segment (`hostN`).
    pub fn host(&self) -> Option<&str> {
        self.segs.iter().find(|s| num_suffix(s, "host").is_some()).map(String::as_str)
    }

    /// The SCSI address (host:channel:target:lun) nearest the disk.
    pub fn addr(&self) -> Option<[u32; 4]> {
        self.segs.iter().rev().find_map(|s| hctl(s))
    }

    /// An NVMe namespace: an `nvmeN` controller on the path (the block device's own name,
    /// `nvme0n1`, does not count), or the nvme driver.
    pub fn nvme(&self) -> bool {
        self.segs.iter().any(|s| num_suffix(s, "nvme").is_some()) || self.driver.as_deref() == Some("nvme")
    }

    /// A virtio-blk disk: the virtio_blk driver, a virtio modalias, or a `virtioN` device on
    /// the path.
    pub fn virtio(&self) -> bool {
        self.driver.as_deref() == Some("virtio_blk")
            || self.modalias.as_deref().is_some_and(|m| m.starts_with("virtio:"))
            || self.find("virtio").is_some()
    }

    /// The paths of the SAS expanders between HBA and disk, nearest the HBA first.
    pub fn expanders(&self) -> Vec<String> {
        self.segs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.starts_with("expander-"))
            .map(|(i, _)| self.segs[..=i].join("/"))
            .collect()
    }

    /// The `phy-*` entries of the SCSI host `host`, sorted.
    pub fn host_phys(&self, root: &Path, host: &str) -> Vec<String> {
        let hostdir = root.join(self.segs[..self.segs.iter().position(|s| s == host).unwrap_or(0) + 1].join("/"));
        phys_in(&hostdir)
    }
}

/// The `phy-*` entries of a directory, sorted.
pub(super) fn phys_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
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
}

/// The negotiated link rate of each phy of an expander at `e` (relative to the root).
pub(super) fn expander_rates(root: &Path, e: &str, phys: &[String]) -> Vec<(String, Option<String>)> {
    let dir = root.join(e);
    phys.iter()
        .map(|p| {
            let r = read(&dir.join(format!("{p}/sas_phy/{p}/negotiated_linkrate")))
                .or_else(|| read(&root.join(format!("class/sas_phy/{p}/negotiated_linkrate"))));
            (p.clone(), r)
        })
        .collect()
}
