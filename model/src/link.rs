//! Links between parts: SATA, SAS, PCIe (and DMI, which is PCIe by another name), and the
//! internal paths inside a chip.
//!
//! A [`LinkSpec`] says which generation, how many lanes and (for PCIe) which Max Payload
//! Size the link runs at. Its [`LinkRates`] turn that into capacities: the raw payload rate
//! after line encoding, and the *cost per payload byte* in each direction for the two kinds
//! of traffic storage moves:
//!
//! - `read` traffic: data from a drive towards the host (a disk read);
//! - `write` traffic: data from the host towards a drive (a disk write).
//!
//! On a full-duplex link (PCIe, SAS) each direction is its own capacity; a flow also costs a
//! little in the reverse direction (PCIe read requests for a disk write). On a half-duplex
//! link (SATA) both kinds share one capacity.
//!
//! The per-generation figures (line rates, encodings, framing) live in the catalog
//! (`catalog/links.toml`), each with its source; this module only does the arithmetic.

use serde::Serialize;
use std::fmt;

/// The family of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Sata,
    Sas,
    Pcie,
    /// A path inside one chip or package (PCH SATA to its own fabric): no modelled limit.
    Internal,
}

/// A concrete link: generation, lanes, and the PCIe payload sizes it runs at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkSpec {
    pub family: Family,
    /// 1-based generation: SATA 1/2/3 = 1.5/3/6 Gb/s; SAS 1-4 = 3/6/12/22.5 Gb/s; PCIe 1-5.
    pub generation: u8,
    pub lanes: u32,
    /// PCIe Max Payload Size in bytes (posted writes: disk reads).
    pub mps: u32,
    /// PCIe completion payload in bytes the host returns for device reads (disk writes).
    pub completion_bytes: u32,
    /// PCIe Max Read Request Size of the device's memory reads (disk writes) [bytes]; 0: the
    /// power-on 512.
    pub mrrs: u32,
}

/// How a link was trained: the device's own end, its port's end, and a link written in the
/// topology (the wiring of a slot or cable). The trained link is the lower generation and the
/// narrower width of them all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Training {
    /// The device's kind, as messages name it (`drive`, `controller`, `switch`).
    pub kind: String,
    /// What the device (the child end) supports on its own.
    pub device: LinkSpec,
    /// Id of the node whose port the device sits in.
    pub port_id: String,
    /// What that port offers.
    pub port: LinkSpec,
    /// The link written for the attachment, as written.
    pub written: Option<String>,
}

impl Training {
    /// Why the link is what it is, in words: `drive pcie4x4, trained to its port sw pcie3x4`.
    pub fn why(&self, trained: &LinkSpec) -> String {
        let (d, p) = (&self.device, &self.port);
        let port_binds = (p.generation == trained.generation && p.generation < d.generation)
            || (p.lanes == trained.lanes && p.lanes < d.lanes && p.family != Family::Sata);
        let written_binds = trained.generation < d.generation.min(p.generation) || trained.lanes < d.lanes.min(p.lanes);
        let mut by = Vec::new();
        if port_binds {
            by.push(format!("its port {} {}", self.port_id, p.short_name()));
        }
        if let (true, Some(w)) = (written_binds, &self.written) {
            by.push(format!("the link written ({w:?})"));
        }
        let dev = format!("{} {}", self.kind, d.short_name());
        if by.is_empty() && d.short_name() == p.short_name() {
            format!("{} and its port {} both {}", self.kind, self.port_id, d.short_name())
        } else if by.is_empty() {
            format!("{dev} is the slower end, its port {} {}", self.port_id, p.short_name())
        } else {
            format!("{dev}, trained to {}", by.join(" and "))
        }
    }
}

impl LinkSpec {
    pub fn internal() -> Self {
        LinkSpec { family: Family::Internal, generation: 0, lanes: 1, mps: 0, completion_bytes: 0, mrrs: 0 }
    }

    /// The link as a link name: `pcie3x4`, `sata3`, `sas3x4`, `internal`.
    pub fn short_name(&self) -> String {
        match self.family {
            Family::Pcie | Family::Sas if self.lanes > 1 || self.family == Family::Pcie => {
                format!("{}x{}", self.generation_key(), self.lanes)
            }
            _ => self.generation_key(),
        }
    }

    /// The link both ends train at: the lower generation and the narrower width (PCIe, SAS
    /// wide ports), the device's payload sizes. Ends of different families do not train:
    /// `None`.
    pub fn trained_with(&self, port: &LinkSpec) -> Option<LinkSpec> {
        if self.family != port.family || self.family == Family::Internal {
            return None;
        }
        Some(LinkSpec {
            generation: self.generation.min(port.generation),
            lanes: self.lanes.min(port.lanes).max(1),
            ..*self
        })
    }

    /// The canonical name of the generation, as the catalog keys it: `sata3`, `pcie3`, ...
    pub fn generation_key(&self) -> String {
        match self.generation_name() {
            Some(name) => name.to_string(),
            None => match self.family {
                Family::Sata => format!("sata{}", self.generation),
                Family::Sas => format!("sas{}", self.generation),
                Family::Pcie => format!("pcie{}", self.generation),
                Family::Internal => "internal".to_string(),
            },
        }
    }

    /// [`Self::generation_key`] without an allocation, for the generations a family has
    /// (`None` for any other number, which only a topology being checked can hold). Setup
    /// asks for a link's generation once per class and node on its path: about 10,000 times
    /// for the 1,024-drive example.
    pub fn generation_name(&self) -> Option<&'static str> {
        const SATA: [&str; 4] = ["sata0", "sata1", "sata2", "sata3"];
        const SAS: [&str; 5] = ["sas0", "sas1", "sas2", "sas3", "sas4"];
        const PCIE: [&str; 6] = ["pcie0", "pcie1", "pcie2", "pcie3", "pcie4", "pcie5"];
        let g = self.generation as usize;
        match self.family {
            Family::Sata => SATA.get(g).copied(),
            Family::Sas => SAS.get(g).copied(),
            Family::Pcie => PCIE.get(g).copied(),
            Family::Internal => Some("internal"),
        }
    }

    pub fn is_half_duplex(&self) -> bool {
        self.family == Family::Sata
    }
}

impl fmt::Display for LinkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.family {
            Family::Sata => {
                let g = ["?", "1.5", "3", "6"].get(self.generation as usize).copied().unwrap_or("?");
                write!(f, "SATA {g} Gb/s")
            }
            Family::Sas => {
                let g = ["?", "3", "6", "12", "22.5"].get(self.generation as usize).copied().unwrap_or("?");
                if self.lanes > 1 { write!(f, "SAS {g} Gb/s x{}", self.lanes) } else { write!(f, "SAS {g} Gb/s") }
            }
            Family::Pcie => write!(f, "PCIe {}.0 x{} (MPS {})", self.generation, self.lanes, self.mps),
            Family::Internal => write!(f, "internal"),
        }
    }
}

/// A link name as written, read: `pcie3x2` is PCIe 3.0 with 2 lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkName {
    pub family: Family,
    pub generation: u8,
    /// The width written after `x` (for DMI: the width it always has, unless written).
    pub lanes: Option<u32>,
    /// DMI's fixed width (x4, DMI 4: x8).
    pub fixed_lanes: Option<u32>,
}

/// Why a link name was not understood, with how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LinkNameError {
    pub message: String,
    pub help: String,
}

/// Names a message may suggest for a misspelt link.
pub const LINK_EXAMPLES: &[&str] = &[
    "pcie1", "pcie2", "pcie3", "pcie4", "pcie5", "pcie3x1", "pcie3x2", "pcie3x4", "pcie3x8", "pcie3x16", "dmi1",
    "dmi2", "dmi3", "dmi4", "sata1", "sata2", "sata3", "sas1", "sas2", "sas3", "sas4", "sas3x4", "internal",
];

const LINK_HELP: &str = "write a generation, optionally with a width: pcie1..pcie5 (pcie3x2), dmi1..dmi4, sata1..sata3, sas1..sas4 (sas3x4), or internal";

/// Parses a link name: `sata1`..`sata3` (also `sata-6g`, `sata3g`, `sata1.5g`), `sas1`..`sas4`
/// (`sas-12g`), `pcie1`..`pcie5` (`pcie3.0`, `gen3`, `PCIe 3.0 x4`), `dmi1`..`dmi4`, `internal`,
/// each optionally with a width after `x`. A width must be a lane count the family has: PCIe
/// x1, x2, x4, x8, x16; SATA x1; SAS x1 or more (a wide port). `pcie3x-1`, `pcie3x3`, `pcie9`
/// and `sata3x2` are errors, never read as something else.
pub fn parse_link(s: &str) -> Result<LinkName, LinkNameError> {
    let t = s.trim().to_ascii_lowercase();
    let err = |message: String| LinkNameError { message, help: LINK_HELP.to_string() };
    if t.is_empty() {
        return Err(err("an empty link name".to_string()));
    }
    // No family or generation name has an 'x': everything after the first is the width.
    let (head, width) = match t.split_once('x') {
        Some((h, w)) => (h, Some(w.trim())),
        None => (t.as_str(), None),
    };
    let head = head.replace([' ', '_', '-'], "");
    let lanes: Option<u64> = match width {
        None => None,
        Some(w) if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) => Some(w.parse::<u64>().unwrap_or(u64::MAX)),
        Some(w) => {
            return Err(err(format!("{s:?}: the width {w:?} after x is not a number of lanes (x1, x2, x4, ...)")));
        }
    };
    if lanes == Some(0) {
        return Err(err(format!("{s:?} has no lanes; a link has at least one")));
    }
    let unknown = || {
        let near = crate::catalog::suggest(&t.replace([' ', '_', '-'], ""), LINK_EXAMPLES.iter().copied());
        err(format!("{s:?} is not a link name{}", crate::catalog::did_you_mean(&near)))
    };
    let (family, generation, fixed) = if head == "internal" {
        if lanes.is_some() {
            return Err(err(format!("{s:?}: an internal path has no width")));
        }
        (Family::Internal, 0, None)
    } else if let Some(g) = head.strip_prefix("dmi") {
        // DMI generations are PCIe links with a fixed width (Intel: DMI 1-3 x4, DMI 4 x8).
        match g.trim_end_matches(".0").parse::<u8>() {
            Ok(g @ 1..=4) => (Family::Pcie, g, Some(if g >= 4 { 8 } else { 4 })),
            Ok(_) => return Err(err(format!("{s:?}: DMI has generations 1 to 4"))),
            Err(_) => return Err(unknown()),
        }
    } else if let Some(g) = head.strip_prefix("sata") {
        let g = match g {
            "1" | "1.5g" | "1.5gbps" | "1.5gb/s" | "150" => 1,
            "2" | "3g" | "3gbps" | "ii" | "300" => 2,
            "3" | "6g" | "6gbps" | "iii" | "600" => 3,
            "" => return Err(err(format!("{s:?} names no generation; write sata1, sata2 or sata3"))),
            _ => {
                return Err(err(format!(
                    "{s:?}: SATA has generations 1 to 3 (sata1 = 1.5, sata2 = 3, sata3 = 6 Gb/s)"
                )));
            }
        };
        (Family::Sata, g, None)
    } else if let Some(g) = head.strip_prefix("sas") {
        let g = match g {
            "1" | "3g" => 1,
            "2" | "6g" => 2,
            "3" | "12g" => 3,
            "4" | "22.5g" | "24g" => 4,
            "" => return Err(err(format!("{s:?} names no generation; write sas1 .. sas4"))),
            _ => return Err(err(format!("{s:?}: SAS has generations 1 to 4 (3, 6, 12, 22.5 Gb/s)"))),
        };
        (Family::Sas, g, None)
    } else if let Some(g) = head.strip_prefix("pcie").or_else(|| head.strip_prefix("gen")) {
        match g.trim_end_matches(".0").parse::<u8>() {
            Ok(g @ 1..=5) => (Family::Pcie, g, None),
            Ok(_) => return Err(err(format!("{s:?}: PCIe has generations 1 to 5"))),
            Err(_) if g.is_empty() => {
                return Err(err(format!("{s:?} names no generation; write pcie1 .. pcie5, e.g. pcie3x2")));
            }
            Err(_) => return Err(unknown()),
        }
    } else {
        return Err(unknown());
    };
    let lanes = match (family, lanes) {
        (_, None) => fixed,
        (Family::Pcie, Some(n)) if !crate::catalog::PCIE_WIDTHS.contains(&(n.min(1 << 40) as i64)) => {
            return Err(LinkNameError {
                message: format!("{s:?}: x{n} is not a PCIe width; a PCIe link has 1, 2, 4, 8 or 16 lanes"),
                help: nearest_widths(&head, generation, n),
            });
        }
        (Family::Sata, Some(n)) if n != 1 => {
            return Err(err(format!("{s:?} asks for {n} lanes, but a SATA link has one")));
        }
        (_, Some(n)) => Some(u32::try_from(n).unwrap_or(u32::MAX)),
    };
    Ok(LinkName { family, generation, lanes, fixed_lanes: fixed })
}

/// The PCIe widths nearest to `n` lanes as link names: `write pcie3x2 or pcie3x4`.
fn nearest_widths(head: &str, generation: u8, n: u64) -> String {
    let widths = crate::catalog::PCIE_WIDTHS;
    let below = widths.iter().rev().find(|&&w| (w as u64) < n);
    let above = widths.iter().find(|&&w| (w as u64) > n);
    let name = |w: i64| {
        if head.starts_with("dmi") { format!("dmi{generation}x{w}") } else { format!("pcie{generation}x{w}") }
    };
    match (below, above) {
        (Some(&b), Some(&a)) => format!("the nearest PCIe widths are x{b} and x{a}: write {} or {}", name(b), name(a)),
        (Some(&b), None) => format!("the widest PCIe link has 16 lanes: write {}", name(b)),
        (None, Some(&a)) => format!("the narrowest PCIe link has one lane: write {}", name(a)),
        (None, None) => LINK_HELP.to_string(),
    }
}

/// [`parse_link`] as a tuple (family, generation, lanes, DMI's fixed width), `None` on error.
pub fn parse_generation(s: &str) -> Option<(Family, u8, Option<u32>, Option<u32>)> {
    parse_link(s).ok().map(|l| (l.family, l.generation, l.lanes, l.fixed_lanes))
}

/// Figures of one link generation, as read from the catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenerationFigures {
    /// Line rate per lane [Gb/s] (PCIe: GT/s).
    pub line_gbps: f64,
    /// Payload bits per line bit (8b/10b = 0.8, 128b/130b = 0.9846...).
    pub encoding: f64,
    /// Bytes of framing per frame (SATA FIS: SOF + CRC + EOF + FIS header; SAS frame; PCIe:
    /// framing + sequence number + LCRC, without the TLP header).
    pub frame_overhead_bytes: f64,
    /// Largest payload one frame carries (SATA Data FIS 8192, SAS SSP 1024; PCIe uses MPS).
    pub frame_payload_bytes: f64,
    /// Link-layer handshake bytes per frame (SATA X_RDY/R_RDY/R_IP/R_OK/WTRM/SYNC).
    pub handshake_bytes: f64,
    /// Share of the line taken by clock-compensation and link-management traffic
    /// (SATA ALIGN pairs, PCIe SKP ordered sets and DLLPs).
    pub management_share: f64,
    /// Per-command protocol bytes on the link besides data frames (SATA: Register H2D,
    /// DMA Setup and Set Device Bits FISes with their framing and handshakes).
    pub command_overhead_bytes: f64,
    /// Extra bytes per write data frame (SATA DMA Activate FIS with framing and handshakes).
    pub write_frame_extra_bytes: f64,
}

/// Capacities of one concrete link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkRates {
    /// Raw payload rate per direction after line encoding, before any framing [bytes/s].
    pub raw_bytes_per_s: f64,
    /// Payload rate for disk-read traffic (device -> host), all overheads included [bytes/s].
    pub read_payload_bytes_per_s: f64,
    /// Payload rate for disk-write traffic (host -> device) [bytes/s].
    pub write_payload_bytes_per_s: f64,
    /// Per-command protocol bytes (counted against the link in the command's direction).
    pub command_overhead_bytes: f64,
    /// Bytes a write costs in the reverse (device -> host) direction per payload byte
    /// (PCIe memory read requests); 0 where not modelled.
    pub write_reverse_bytes_per_byte: f64,
    pub half_duplex: bool,
}

/// Bytes of a PCIe TLP header: 16 for 64-bit-address memory requests, 12 for completions.
pub const PCIE_MEM_HEADER_BYTES: f64 = 16.0;
pub const PCIE_CPL_HEADER_BYTES: f64 = 12.0;
/// Max Read Request Size of a link whose requester states none (a switch's uplink carries
/// many requesters' reads): 512 bytes, the power-on value of Max_Read_Request_Size in the
/// Device Control register (PCI Express Base Specification), which Linux keeps by default.
pub const PCIE_MRRS_BYTES: f64 = 512.0;

impl LinkSpec {
    /// Computes the link's capacities from its generation figures.
    pub fn rates(&self, g: &GenerationFigures) -> LinkRates {
        let lanes = self.lanes.max(1) as f64;
        let raw = g.line_gbps * 1e9 * g.encoding / 8.0 * lanes;
        let mgmt = 1.0 - g.management_share;
        match self.family {
            Family::Internal => LinkRates {
                raw_bytes_per_s: f64::INFINITY,
                read_payload_bytes_per_s: f64::INFINITY,
                write_payload_bytes_per_s: f64::INFINITY,
                command_overhead_bytes: 0.0,
                write_reverse_bytes_per_byte: 0.0,
                half_duplex: false,
            },
            Family::Pcie => {
                let mps = self.mps.max(128) as f64;
                // A completion carries at most the link's MPS (PCI Express Base Specification:
                // Max_Payload_Size bounds completions too), whatever the root complex combines.
                let cpl = self.completion_bytes.max(64).min(self.mps.max(128)) as f64;
                let mrrs = if self.mrrs == 0 { PCIE_MRRS_BYTES } else { self.mrrs as f64 };
                let rd = mps / (mps + PCIE_MEM_HEADER_BYTES + g.frame_overhead_bytes);
                let wr = cpl / (cpl + PCIE_CPL_HEADER_BYTES + g.frame_overhead_bytes);
                LinkRates {
                    raw_bytes_per_s: raw,
                    read_payload_bytes_per_s: raw * rd * mgmt,
                    write_payload_bytes_per_s: raw * wr * mgmt,
                    command_overhead_bytes: 0.0,
                    write_reverse_bytes_per_byte: (PCIE_MEM_HEADER_BYTES + g.frame_overhead_bytes) / mrrs,
                    half_duplex: false,
                }
            }
            Family::Sata | Family::Sas => {
                let p = g.frame_payload_bytes;
                let per_frame = p + g.frame_overhead_bytes + g.handshake_bytes;
                LinkRates {
                    raw_bytes_per_s: raw,
                    read_payload_bytes_per_s: raw * mgmt * p / per_frame,
                    write_payload_bytes_per_s: raw * mgmt * p / (per_frame + g.write_frame_extra_bytes),
                    command_overhead_bytes: g.command_overhead_bytes,
                    write_reverse_bytes_per_byte: 0.0,
                    half_duplex: self.family == Family::Sata,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_names_are_the_catalog_keys() {
        let mut named = 0;
        for family in [Family::Sata, Family::Sas, Family::Pcie, Family::Internal] {
            for generation in 0..=u8::MAX {
                let link = LinkSpec { family, generation, ..LinkSpec::internal() };
                let key = match family {
                    Family::Sata => format!("sata{generation}"),
                    Family::Sas => format!("sas{generation}"),
                    Family::Pcie => format!("pcie{generation}"),
                    Family::Internal => "internal".to_string(),
                };
                assert_eq!(link.generation_key(), key);
                if let Some(name) = link.generation_name() {
                    assert_eq!(name, key);
                    named += 1;
                }
            }
        }
        // Every generation a family has (SATA 1-3, SAS 1-4, PCIe 1-5) has a name.
        for (family, most) in [(Family::Sata, 3), (Family::Sas, 4), (Family::Pcie, 5)] {
            for generation in 1..=most {
                assert!(LinkSpec { family, generation, ..LinkSpec::internal() }.generation_name().is_some());
            }
        }
        assert!(named >= 3 + 4 + 5 + 256);
    }

    fn pcie3() -> GenerationFigures {
        GenerationFigures {
            line_gbps: 8.0,
            encoding: 128.0 / 130.0,
            frame_overhead_bytes: 8.0,
            frame_payload_bytes: 0.0,
            handshake_bytes: 0.0,
            management_share: 0.0,
            command_overhead_bytes: 0.0,
            write_frame_extra_bytes: 0.0,
        }
    }

    #[test]
    fn parses_generation_names() {
        assert_eq!(parse_generation("pcie3x2"), Some((Family::Pcie, 3, Some(2), None)));
        assert_eq!(parse_generation("PCIe 3.0"), Some((Family::Pcie, 3, None, None)));
        assert_eq!(parse_generation("sata-6g"), Some((Family::Sata, 3, None, None)));
        assert_eq!(parse_generation("sata2"), Some((Family::Sata, 2, None, None)));
        assert_eq!(parse_generation("dmi2"), Some((Family::Pcie, 2, Some(4), Some(4))));
        assert_eq!(parse_generation("sas3x4"), Some((Family::Sas, 3, Some(4), None)));
        assert_eq!(parse_generation("pcie9"), None);
        assert_eq!(parse_generation("PCIe 3.0 x4"), Some((Family::Pcie, 3, Some(4), None)));
        assert_eq!(parse_generation("x"), None);
        assert_eq!(parse_generation(""), None);
    }

    #[test]
    fn impossible_link_names_are_errors_not_other_links() {
        // Each of these used to be read as another link (x-1 as x1) or a bare generation.
        for (name, want) in [
            ("pcie3x-1", "is not a number of lanes"),
            ("pcie3x3", "x3 is not a PCIe width"),
            ("pcie3x32", "x32 is not a PCIe width"),
            ("pcie9", "PCIe has generations 1 to 5"),
            ("pcie", "names no generation"),
            ("sata4", "SATA has generations 1 to 3"),
            ("sata3x2", "a SATA link has one"),
            ("pcie3x0", "has no lanes"),
            ("internalx2", "no width"),
            ("bogus", "is not a link name"),
            ("pcie3x", "is not a number of lanes"),
        ] {
            let e = parse_link(name).expect_err(name);
            assert!(e.message.contains(want), "{name}: {}", e.message);
        }
        let l = parse_link("sas3").unwrap();
        assert_eq!((l.family, l.generation, l.lanes), (Family::Sas, 3, None));
    }

    #[test]
    fn an_impossible_width_suggests_the_nearest_valid_ones() {
        for (name, want) in [
            ("pcie3x3", "x2 and x4: write pcie3x2 or pcie3x4"),
            ("pcie4x12", "x8 and x16: write pcie4x8 or pcie4x16"),
            ("pcie3x64", "write pcie3x16"),
            ("pcie3x32", "write pcie3x16"),
        ] {
            let e = parse_link(name).expect_err(name);
            assert!(e.help.contains(want), "{name}: {}", e.help);
        }
    }

    #[test]
    fn a_link_trains_at_the_lower_generation_and_width_of_its_ends() {
        let l = |family, generation, lanes| LinkSpec { family, generation, lanes, ..LinkSpec::internal() };
        let t = l(Family::Pcie, 4, 4).trained_with(&l(Family::Pcie, 3, 16)).unwrap();
        assert_eq!(t.short_name(), "pcie3x4");
        let t = l(Family::Pcie, 3, 2).trained_with(&l(Family::Pcie, 2, 1)).unwrap();
        assert_eq!(t.short_name(), "pcie2x1");
        assert_eq!(l(Family::Sata, 3, 1).trained_with(&l(Family::Sata, 2, 1)).unwrap().short_name(), "sata2");
        assert_eq!(l(Family::Sas, 3, 4).trained_with(&l(Family::Sas, 2, 4)).unwrap().short_name(), "sas2x4");
        assert!(l(Family::Sata, 3, 1).trained_with(&l(Family::Sas, 3, 1)).is_none());
    }

    #[test]
    fn pcie3_x2_raw_rate_is_1969_mb_s() {
        let l = LinkSpec { family: Family::Pcie, generation: 3, lanes: 2, mps: 256, completion_bytes: 128, mrrs: 512 };
        let r = l.rates(&pcie3());
        assert!((r.raw_bytes_per_s / 1e6 - 1969.23).abs() < 0.01);
        // 256 B payload, 16 B header, 8 B framing: 91.4 % (hardware-facts table).
        assert!((r.read_payload_bytes_per_s / r.raw_bytes_per_s - 256.0 / 280.0).abs() < 1e-9);
        assert!(r.write_payload_bytes_per_s < r.read_payload_bytes_per_s);
    }

    #[test]
    fn larger_mps_is_never_slower() {
        let mut prev = 0.0;
        for mps in [128, 256, 512, 1024, 4096] {
            let l = LinkSpec { family: Family::Pcie, generation: 3, lanes: 1, mps, completion_bytes: 64, mrrs: 512 };
            let r = l.rates(&pcie3()).read_payload_bytes_per_s;
            assert!(r > prev);
            prev = r;
        }
    }
}
