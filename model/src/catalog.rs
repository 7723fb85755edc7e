//! The built-in parts catalog: link generations, hosts, chipsets and switches, controllers,
//! port multipliers, expanders and drives, each figure with its source.
//!
//! The catalog is a set of TOML files under `model/catalog/`, embedded in the binary with
//! `include_str!`, so nothing is read from disk at run time. A user's part file
//! (`--parts FILE`, written by `iopath fit`) is loaded over it with [`Catalog::overlay`].
//!
//! Every figure is a [`Figure`]: a value, the source it came from, and its basis
//! (`datasheet`, `spec`, `measurement`, `fit`, `derived`, `inferred`). The names a kind of
//! part may carry, their types and defaults are listed in [`FIGURES`]: the same names are
//! what `--set NODE.PARAM=VALUE` and `params = { ... }` in a topology override.
//!
//! Guarantee: [`Catalog::builtin`] parses and validates every embedded file; a unit test
//! fails the build if any part is malformed or any figure lacks a source.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The kinds of part the catalog holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Link,
    Host,
    Switch,
    Controller,
    PortMultiplier,
    Expander,
    Drive,
    /// A network interface controller on PCIe (`model/src/net.rs`).
    Nic,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Link => "link",
            Kind::Host => "host",
            Kind::Switch => "switch",
            Kind::Controller => "controller",
            Kind::PortMultiplier => "port_multiplier",
            Kind::Expander => "expander",
            Kind::Drive => "drive",
            Kind::Nic => "nic",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A figure's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Num(f64),
    Str(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Num(n) => write!(f, "{n}"),
            Value::Str(s) => write!(f, "{s}"),
        }
    }
}

impl Value {
    /// Parses a value written on the command line (`--set pm.fbs=false`, `hba.lanes=1`).
    pub fn parse_cli(s: &str) -> Value {
        let t = s.trim();
        match t {
            "true" | "on" | "yes" => Value::Bool(true),
            "false" | "off" | "no" => Value::Bool(false),
            _ => t.parse::<f64>().map(Value::Num).unwrap_or_else(|_| Value::Str(t.to_string())),
        }
    }
}

/// One figure of a part, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    pub value: Value,
    /// A datasheet, a specification section, or a published measurement plus the fit.
    pub source: String,
    /// datasheet | spec | measurement | fit | derived | inferred
    #[serde(default = "default_basis")]
    pub basis: String,
}

fn default_basis() -> String {
    "datasheet".to_string()
}

/// A part as the catalog lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub id: String,
    pub kind: Kind,
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// PCI `vendor:device` ids (lower-case hex) for discovery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pci_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    #[serde(default)]
    pub figures: BTreeMap<String, Figure>,
}

/// The type a figure must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureType {
    Num,
    Bool,
    Str,
}

/// What values of its type a figure accepts, beyond the type itself: the one rule every path
/// that sets a figure (catalog files, `[[part]]` tables, `params = {}`, `--set`, `--vary`,
/// `--parts` files) checks, in [`check_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepts {
    /// Any number in the figure's range.
    Number,
    /// A whole number in the figure's range (ports, lanes, generations).
    Integer,
    /// One of these whole numbers (PCIe widths, payload sizes).
    IntegerOf(&'static [i64]),
    /// `true` or `false`.
    Flag,
    /// A link generation of these families ([`crate::link::parse_link`]); `internal` only
    /// when `internal` is true.
    Link { internal: bool },
    /// One of these words.
    OneOf(&'static [&'static str]),
}

/// What one figure name means for one kind of part.
#[derive(Debug, Clone, Copy)]
pub struct FigureSpec {
    pub kind: Kind,
    pub name: &'static str,
    pub ty: FigureType,
    /// The values the figure accepts.
    pub accepts: Accepts,
    /// Whether a catalog part of this kind must state it.
    pub required: bool,
    /// Smallest and largest meaningful value (numbers only).
    pub range: (f64, f64),
    pub doc: &'static str,
    /// What a part that does not state the figure gets, and why; `None` only for required
    /// figures. A node's defaulted figures carry basis `default` ([`DEFAULT_BASIS`]).
    pub default: Option<FigureDefault>,
    /// The drive classes (`ssd`, `hdd`, `nvme`) the figure means something for; empty: every
    /// part of the kind. A default of a figure that does not apply is filled in but not shown.
    pub applies: &'static [&'static str],
}

/// The basis of a figure taken from its declared default rather than from the part.
pub const DEFAULT_BASIS: &str = "default";

/// A figure's declared default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureDefault {
    pub value: DefaultValue,
    /// What the default stands for and where it comes from.
    pub reason: &'static str,
}

/// The value of a default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    Num(f64),
    Flag(bool),
    /// The value of another figure of the same part (`dma_write_efficiency` as the read one).
    SameAs(&'static str),
    /// A share of another figure of the same part (`inner_mb_s` half the outer rate).
    Share(&'static str, f64),
    /// A word (`recording = "cmr"`).
    Word(&'static str),
}

impl FigureSpec {
    /// Declares the figure's default and its reason.
    const fn or(self, value: DefaultValue, reason: &'static str) -> FigureSpec {
        FigureSpec { default: Some(FigureDefault { value, reason }), ..self }
    }
    /// Limits the figure to drives of these classes.
    const fn only(self, classes: &'static [&'static str]) -> FigureSpec {
        FigureSpec { applies: classes, ..self }
    }
    /// Whether the figure means something for a part of this drive class (`None`: not a drive).
    pub fn applies_to(&self, class: Option<&str>) -> bool {
        self.applies.is_empty() || class.is_some_and(|c| self.applies.contains(&c))
    }
}

/// The widths a PCIe link trains at.
pub const PCIE_WIDTHS: &[i64] = &[1, 2, 4, 8, 16];
const PAYLOAD_SIZES: &[i64] = &[128, 256, 512, 1024, 2048, 4096];
const COMPLETION_SIZES: &[i64] = &[64, 128, 256, 512, 1024, 2048, 4096];
const IOMMU_PAGES: &[i64] = &[4096, 2_097_152, 1_073_741_824];

const fn num(kind: Kind, name: &'static str, required: bool, lo: f64, hi: f64, doc: &'static str) -> FigureSpec {
    FigureSpec {
        kind,
        name,
        ty: FigureType::Num,
        accepts: Accepts::Number,
        required,
        range: (lo, hi),
        doc,
        default: None,
        applies: &[],
    }
}
const fn int(kind: Kind, name: &'static str, required: bool, lo: f64, hi: f64, doc: &'static str) -> FigureSpec {
    FigureSpec {
        kind,
        name,
        ty: FigureType::Num,
        accepts: Accepts::Integer,
        required,
        range: (lo, hi),
        doc,
        default: None,
        applies: &[],
    }
}
const fn int_of(kind: Kind, name: &'static str, required: bool, of: &'static [i64], doc: &'static str) -> FigureSpec {
    let range = (of[0] as f64, of[of.len() - 1] as f64);
    FigureSpec {
        kind,
        name,
        ty: FigureType::Num,
        accepts: Accepts::IntegerOf(of),
        required,
        range,
        doc,
        default: None,
        applies: &[],
    }
}
const fn one_of(
    kind: Kind,
    name: &'static str,
    required: bool,
    of: &'static [&'static str],
    doc: &'static str,
) -> FigureSpec {
    FigureSpec {
        kind,
        name,
        ty: FigureType::Str,
        accepts: Accepts::OneOf(of),
        required,
        range: (0.0, 0.0),
        doc,
        default: None,
        applies: &[],
    }
}
const fn link(kind: Kind, name: &'static str, required: bool, internal: bool, doc: &'static str) -> FigureSpec {
    FigureSpec {
        kind,
        name,
        ty: FigureType::Str,
        accepts: Accepts::Link { internal },
        required,
        range: (0.0, 0.0),
        doc,
        default: None,
        applies: &[],
    }
}
const fn flag(kind: Kind, name: &'static str, required: bool, doc: &'static str) -> FigureSpec {
    FigureSpec {
        kind,
        name,
        ty: FigureType::Bool,
        accepts: Accepts::Flag,
        required,
        range: (0.0, 0.0),
        doc,
        default: None,
        applies: &[],
    }
}

use DefaultValue::{Num as N, SameAs, Share, Word};
use Kind::*;
const INF: f64 = f64::INFINITY;
const FLASH: &[&str] = &["ssd", "nvme"];
const HDD: &[&str] = &["hdd"];
const NVME: &[&str] = &["nvme"];
/// Host figures of the SMB3 server process: filled in on every host, shown only in
/// `check`'s client lines (a host without SMB3 clients never uses them).
const SMB: &[&str] = &["smb3"];
/// Host figures of the NFS server (knfsd), likewise shown only for NFS clients.
const NFS: &[&str] = &["nfs"];
const MPS_128: &str = "128 bytes, the smallest Max Payload Size every PCIe function supports and the power-on value of Max_Payload_Size (PCI Express Base Specification, Device Capabilities and Device Control registers)";

/// smbd's CPU time per request besides its copies [us] (`net::smbd_s_per_byte`).
pub const SMBD_REQUEST_US: f64 = 16.0;
const SMBD_REQUEST_DEFAULT: &str = "16 us, fitted on tests/net_rig.rs's unshaped veth (Samba 4.17): the slope of the CPU time per byte of smbd's main thread (/proc/PID/task/TID/stat) over 1/request between 4 KiB and 16 KiB requests (smb2 max read), where the request's share is many times the per-byte part; first fitted as 64 KiB less 8 MiB requests on one Emerald Rapids vCPU at 2.1 GHz, a difference the per-byte part's own change with request size confounds (0.4 to 10 us on re-measurement), and re-measured as the slope at 16.0, 16.3 and 17.6 us in three runs on a 2.6 GHz Xeon vCPU, 8 KiB on the line within 0-11%; the per-byte part is the copy, cpu_memcpy_mb_s (the line's intercept 0.09-0.12 ns/B against one copy at 12,952 MB/s, 0.077)";
const CPU_MEMCPY_DEFAULT: &str = "11,364 MB/s: one thread's memcpy of a 25,000,000-byte block, 2.2 ms on a Skylake desktop with dual-channel DDR4-2133 (stackoverflow.com/questions/39260020, 'Why is Skylake so much better than Broadwell-E for single-threaded memory throughput?'; 4.5 ms = 5,556 MB/s on a Broadwell-E, whose mesh-like ring and quad-channel controller give one core less: single-thread bandwidth is bounded by the misses a core keeps in flight over the memory latency, J. D. McCalpin); a client core with a ring bus";
const ROOT_GEN_DEFAULT: &str = "no root-port generation stated: the root port is taken to train at PCIe 5.0, the newest modelled, so the device and the slot decide";
const DMA_READ_LATENCY_DEFAULT: &str = "0.5 us, the order of an unloaded DMA read round trip measured by pcie-bench on Xeon hosts (Neugebauer et al., 'Understanding PCIe performance for end host networking', SIGCOMM 2018; summarised as 'PCIe latency adds 300-400ns on unloaded systems' in artpol84/poc arch/HW_characteristics.md) plus DRAM; not this host's";
const MRRS_DEFAULT: &str = "512 bytes, the power-on value of Max_Read_Request_Size (PCI Express Base Specification, Device Control register), which Linux keeps by default (pcie_bus_config PCIE_BUS_DEFAULT does not touch MRRS)";
const TAGS_5BIT: &str = "32, the outstanding non-posted requests a function can have with 5-bit tags (PCI Express Base Specification: Extended Tag Field Enable off); a SATA/SAS controller that states no other limit";
const TAGS_8BIT: &str = "256, the outstanding requests of 8-bit Extended Tags, which NVMe SSD controllers support and Linux enables since 4.13 (drivers/pci/probe.c pci_configure_extended_tags); not this drive's measured DMA depth";

const CPU_FLETCHER4_DEFAULT: &str = "22,378 MB/s: ZFS's avx2 fletcher4 (native byte order) on one core of a Xeon Platinum 8170 (Skylake-SP), /proc/spl/kstat/zfs/fletcher_4_bench posted in openzfs/zfs pull request 9517 (2019); superscalar4 without SIMD 7,909";
const CPU_SHA256_DEFAULT: &str = "1,678 MB/s: SHA-256 with the x86 SHA extensions on 10,000-byte blocks, one core (Tarsnap/libcperciva pull request 140, 2018: 1,678,288,816 bytes/s; 305 MB/s without them)";
const CPU_BLAKE3_DEFAULT: &str = "2,105 MB/s: BLAKE3 with AVX2 on 64 KiB inputs, one thread, i5-7600K at 3.8 GHz (lukechampine/blake3 README benchmarks, BenchmarkSum256/65536); the official crate with AVX-512 is faster";
const CPU_CRC32C_DEFAULT: &str = "31,590 MB/s: the kernel's PCLMULQDQ CRC32C (crc32c-intel, which btrfs uses) on 4 KiB blocks, one core: 30,126.7 MiB/s (Linux commit 'btrfs: add xxhash to fast checksum implementations', hash-speedtest from btrfs-progs)";
const CPU_XOR_DEFAULT: &str = "36,527 MB/s of data: single parity with AVX2 over 8 data buffers of 256 KiB, one core, Xeon D (family 6 model 86) (snapraid -T, 'gen1', amadvance/snapraid issue 64; snapraid's parity code follows Linux lib/raid6)";
const CPU_RAID_PQ_DEFAULT: &str = "23,595 MB/s of data: P+Q syndromes with AVX2 over 8 data buffers of 256 KiB, one core, Xeon D (family 6 model 86) (snapraid -T, 'gen2', amadvance/snapraid issue 64); int64 SWAR 4,956";
const CPU_RAID_PQR_DEFAULT: &str = "14,074 MB/s of data: three parities with AVX2 over 8 data buffers of 256 KiB, one core, Xeon D (family 6 model 86) (snapraid -T, 'gen3', amadvance/snapraid issue 64)";
const CPU_AES_GCM_DEFAULT: &str = "2,869 MB/s: openssl speed -evp aes-256-gcm at 16,384-byte blocks, one core, OpenSSL 3.0.8 on an x86_64 Mac with AES-NI (2,801,937k, asecuritysite.com 'What's the fastest symmetric cipher and mode?', 2023)";
const CPU_LZ4_DEFAULT: &str = "740 MB/s of input: lz4 1.9.2 compression, one core of a Core i9-9900K at 5.0 GHz, lzbench on the Silesia corpus (zstd README benchmark table, 2020); decompression 4,530 MB/s";
const CPU_ZSTD_DEFAULT: &str = "318 MB/s of input: zstd level 3 compression on one core, lz4's 740 MB/s on a Core i9-9900K at 5.0 GHz (zstd README's lzbench table, 2020) x 0.43, the zstd-3 / lz4 rate ratio iopath measure --cpu found on text-like 128 KiB records (118 vs 272 MB/s, 2026)";

/// Every figure name, by kind: the vocabulary of the catalog, of `params` and of `--set`.
/// A figure a part need not state declares its default here, with what it stands for:
/// the loader fills it in, marks it `default` and shows it (`iopath check`, `iopath catalog`).
pub const FIGURES: &[FigureSpec] = &[
    // Link generations.
    num(Link, "line_gbps", true, 0.1, 1000.0, "line rate per lane [Gb/s or GT/s]"),
    num(Link, "encoding", true, 0.5, 1.0, "payload bits per line bit (8b/10b = 0.8)"),
    num(Link, "frame_overhead_bytes", true, 0.0, 1000.0, "framing bytes per frame, header of the TLP excluded"),
    num(Link, "frame_payload_bytes", false, 0.0, 1e6, "largest payload per frame (SATA Data FIS 8192)")
        .or(N(0.0), "no frame limit: the family does not split payload into frames of its own (PCIe: TLPs by MPS)"),
    num(Link, "handshake_bytes", false, 0.0, 1000.0, "link handshake primitives per frame [bytes]")
        .or(N(0.0), "no per-frame handshake: the family does not exchange primitives per frame"),
    num(Link, "management_share", false, 0.0, 0.5, "share of the line for ALIGN/SKP/DLLP traffic")
        .or(N(0.0), "no management traffic modelled for the generation"),
    num(Link, "command_overhead_bytes", false, 0.0, 1e5, "protocol bytes per command besides data frames")
        .or(N(0.0), "no command frames modelled for the generation"),
    num(Link, "write_frame_extra_bytes", false, 0.0, 1e4, "extra bytes per write data frame (DMA Activate)")
        .or(N(0.0), "no extra bytes per write frame: only SATA has DMA Activate"),
    // Hosts (CPU root complex and OS).
    int_of(Host, "root_mps", true, PAYLOAD_SIZES, "largest Max Payload Size the root ports support [bytes]"),
    int_of(
        Host,
        "completion_bytes",
        true,
        COMPLETION_SIZES,
        "payload per completion the root complex returns for device reads [bytes]",
    ),
    int(Host, "root_gen", false, 1.0, 5.0, "newest PCIe generation the CPU's root ports train at")
        .or(N(5.0), ROOT_GEN_DEFAULT),
    num(
        Host,
        "dma_read_latency_us",
        false,
        0.0,
        100.0,
        "round trip of a device's memory read at the root port: request in, root complex and DRAM, first completion out [us]",
    )
    .or(N(0.5), DMA_READ_LATENCY_DEFAULT),
    num(Host, "io_overhead_us", true, 0.0, 10000.0, "host software cost per I/O, submission to completion [us]"),
    num(
        Host,
        "iommu_walk_us",
        false,
        0.0,
        1000.0,
        "time of one IOMMU translation miss (IOTLB miss: a walk of the I/O page tables) for a device passed through to a VM [us]",
    )
    .or(N(0.0), "no translation: the host does not pass devices through to a VM, so DMA is not translated by the IOMMU"),
    int_of(
        Host,
        "iommu_page_bytes",
        false,
        IOMMU_PAGES,
        "size of the IOMMU's mappings of a guest's memory: one translation miss per page of DMA data [bytes]",
    )
    .or(
        N(4096.0),
        "4 KiB, the base page of the VT-d and AMD-Vi I/O page tables (Intel VT-d specification ch. 3, AMD IOMMU specification 2.2.3); 2 MiB or 1 GiB only where the IOMMU supports superpages and the hypervisor maps guest memory with them",
    ),
    int(Host, "cpu_cores", false, 1.0, 4096.0, "CPU cores available for I/O submission and completion").or(
        N(4.0),
        "four cores: the fewest of a current x86 desktop or server CPU; a part states its CPU's cores",
    ),
    num(
        Host,
        "cpu_per_io_us",
        false,
        0.0,
        10000.0,
        "CPU time of one I/O on one core: system call, block layer, driver submission, completion interrupt [us]",
    )
    .or(
        N(1.64),
        "Linux libaio 4 KiB random reads at QD128 on one core: 608K IOPS (J. Axboe, 'Efficient IO with io_uring', kernel.dk/io_uring.pdf, 2019), 1/608K = 1.64 us per I/O",
    ),
    // Hosts: per-core rates of the storage stack's CPU kernels (`cpu.rs`), MB/s of the bytes
    // each kernel reads. The defaults stand for a current x86 core with AVX2, AES-NI and
    // the SHA extensions; a part states its own.
    num(Host, "cpu_fletcher4_mb_s", false, 1.0, 1e6, "ZFS fletcher4 checksum on one core [MB/s]").or(N(22_378.0), CPU_FLETCHER4_DEFAULT),
    num(Host, "cpu_sha256_mb_s", false, 1.0, 1e6, "SHA-256 on one core [MB/s]").or(N(1_678.0), CPU_SHA256_DEFAULT),
    num(Host, "cpu_blake3_mb_s", false, 1.0, 1e6, "BLAKE3 on one core, one thread [MB/s]").or(N(2_105.0), CPU_BLAKE3_DEFAULT),
    num(Host, "cpu_crc32c_mb_s", false, 1.0, 1e6, "CRC32C (btrfs checksum) on one core [MB/s]").or(N(31_590.0), CPU_CRC32C_DEFAULT),
    num(Host, "cpu_xor_mb_s", false, 1.0, 1e6, "XOR parity (RAID 5, RAIDZ1) on one core, MB/s of data [MB/s]").or(N(36_527.0), CPU_XOR_DEFAULT),
    num(Host, "cpu_raid_pq_mb_s", false, 1.0, 1e6, "P+Q syndromes (RAID 6, RAIDZ2) on one core, MB/s of data [MB/s]").or(N(23_595.0), CPU_RAID_PQ_DEFAULT),
    num(Host, "cpu_raid_pqr_mb_s", false, 1.0, 1e6, "P+Q+R syndromes (RAIDZ3) on one core, MB/s of data [MB/s]").or(N(14_074.0), CPU_RAID_PQR_DEFAULT),
    num(Host, "cpu_aes_gcm_mb_s", false, 1.0, 1e6, "AES-256-GCM encryption on one core [MB/s]").or(N(2_869.0), CPU_AES_GCM_DEFAULT),
    num(Host, "cpu_lz4_mb_s", false, 1.0, 1e6, "lz4 compression on one core, MB/s of input (decompression is ~6x faster) [MB/s]").or(N(740.0), CPU_LZ4_DEFAULT),
    num(Host, "cpu_zstd_mb_s", false, 1.0, 1e6, "zstd level 3 compression on one core, MB/s of input [MB/s]").or(N(318.0), CPU_ZSTD_DEFAULT),
    num(Host, "cpu_memcpy_mb_s", false, 1.0, 1e6, "one core's copy of data out of cache (a file server's page cache to its buffer, its buffer to a socket) [MB/s]").or(N(11_364.0), CPU_MEMCPY_DEFAULT),
    // Chipsets and PCIe switches: a shared uplink.
    link(Switch, "uplink", true, false, "uplink generation: pcie1..pcie5, dmi1..dmi4"),
    int_of(Switch, "lanes", true, PCIE_WIDTHS, "uplink lanes"),
    int_of(Switch, "mps", false, PAYLOAD_SIZES, "Max Payload Size the switch supports [bytes]").or(N(128.0), MPS_128),
    num(Switch, "hop_latency_us", false, 0.0, 1000.0, "added latency per command through the switch [us]")
        .or(N(0.0), "no latency stated: the hop adds none"),
    int_of(Switch, "port_lanes", false, PCIE_WIDTHS, "widest downstream port [lanes]")
        .or(SameAs("lanes"), "as wide as the uplink: a downstream port no wider than the switch's upstream port"),
    // Controllers and HBAs.
    link(Controller, "uplink", true, true, "host link generation: pcie1..pcie5, or internal"),
    int_of(Controller, "lanes", true, PCIE_WIDTHS, "uplink lanes"),
    int_of(Controller, "mps", false, PAYLOAD_SIZES, "Max Payload Size the controller supports (DevCap) [bytes]")
        .or(N(128.0), MPS_128),
    int_of(Controller, "mrrs", false, PAYLOAD_SIZES, "Max Read Request Size of its memory reads (disk writes) [bytes]")
        .or(N(512.0), MRRS_DEFAULT),
    int(Controller, "read_tags", false, 1.0, 4096.0, "memory read requests it keeps outstanding (PCIe tags)")
        .or(N(32.0), TAGS_5BIT),
    int(Controller, "ports", true, 1.0, 1024.0, "drive ports (SAS: phys)"),
    int(Controller, "sata_gen", true, 1.0, 3.0, "fastest SATA generation of its ports (1/2/3 = 1.5/3/6 Gb/s)"),
    int(Controller, "sas_gen", false, 0.0, 4.0, "fastest SAS generation, 0 if SATA only")
        .or(N(0.0), "SATA only: a controller that states no SAS generation has no SAS phys"),
    one_of(Controller, "pm_support", true, &["none", "cbs", "fbs"], "port multiplier support: none, cbs or fbs"),
    num(
        Controller,
        "dma_read_efficiency",
        false,
        0.05,
        1.0,
        "share of the uplink's payload rate the controller moves for disk reads",
    )
    .or(N(1.0), "no DMA limit measured: the controller moves the uplink's full payload rate"),
    num(
        Controller,
        "dma_write_efficiency",
        false,
        0.05,
        1.0,
        "share of the uplink's payload rate the controller moves for disk writes",
    )
    .or(SameAs("dma_read_efficiency"), "as dma_read_efficiency: no write measurement of its own"),
    num(
        Controller,
        "port_read_efficiency",
        false,
        0.05,
        1.0,
        "share of a port link's payload rate sustained for disk reads",
    )
    .or(N(1.0), "no port loss measured: a port sustains its link's full payload rate"),
    num(
        Controller,
        "port_write_efficiency",
        false,
        0.05,
        1.0,
        "share of a port link's payload rate sustained for disk writes",
    )
    .or(N(1.0), "no port loss measured: a port sustains its link's full payload rate"),
    num(Controller, "cmd_overhead_us", false, 0.0, 10000.0, "controller latency per command [us]")
        .or(N(0.0), "no latency stated: the controller adds none per command"),
    num(Controller, "max_iops", false, 1.0, INF, "commands per second the controller can process")
        .or(N(INF), "no command-rate limit stated: the controller is not modelled as a command engine"),
    // Port multipliers.
    int(PortMultiplier, "ports", true, 1.0, 15.0, "downstream ports"),
    int(PortMultiplier, "sata_gen", true, 1.0, 3.0, "fastest SATA generation, upstream and downstream"),
    flag(PortMultiplier, "fbs_capable", true, "whether FIS-based switching is supported"),
    flag(PortMultiplier, "fbs", false, "FIS-based switching in use (needs support here and at the controller)")
        .or(SameAs("fbs_capable"), "on when the port multiplier is capable: FBS is used where both ends support it"),
    num(
        PortMultiplier,
        "upstream_efficiency",
        false,
        0.05,
        1.0,
        "share of the upstream link's payload rate the PM sustains",
    )
    .or(N(1.0), "no loss measured: the upstream link's full payload rate"),
    num(
        PortMultiplier,
        "downstream_efficiency",
        false,
        0.05,
        1.0,
        "share of a drive port's payload rate the PM sustains when relaying that drive's FISes",
    )
    .or(N(1.0), "no loss measured: a drive port's full payload rate"),
    num(
        PortMultiplier,
        "switch_cost_us",
        false,
        0.0,
        100000.0,
        "upstream time per command for switching between drives (FBS), paid while another of its drives moves data [us]",
    )
    .or(N(0.0), "no switching cost measured"),
    num(
        PortMultiplier,
        "cbs_handover_us",
        false,
        0.0,
        100000.0,
        "time to hand the upstream to another drive under CBS [us]",
    )
    .or(N(0.0), "no handover time measured"),
    // SAS expanders.
    int(Expander, "sas_gen", true, 1.0, 4.0, "SAS generation of its phys"),
    int(Expander, "phys", true, 1.0, 256.0, "phys"),
    num(Expander, "hop_latency_us", true, 0.0, 1000.0, "added latency per command through the expander [us]"),
    num(
        Expander,
        "stp_write_turnaround_us",
        true,
        0.0,
        1000.0,
        "STP turnaround per write data FIS (<= 8 KiB) for a SATA drive [us]",
    ),
    num(
        Expander,
        "stp_write_efficiency",
        true,
        0.05,
        1.0,
        "pace of a SATA drive's write intake through the STP bridge, as a fraction of its direct pace",
    ),
    flag(
        Expander,
        "store_forward",
        true,
        "buffers a slower drive's connection so it crosses faster upstream lanes at their full rate; without it the connection holds each upstream lane at the drive's rate",
    ),
    // Network interface controllers (`model/src/net.rs`): a PCIe function like a controller,
    // with Ethernet ports that clients talk to.
    link(Nic, "uplink", true, true, "host link generation: pcie1..pcie5, or internal (a virtual interface)"),
    int_of(Nic, "lanes", true, PCIE_WIDTHS, "uplink lanes"),
    int_of(Nic, "mps", false, PAYLOAD_SIZES, "Max Payload Size the NIC supports (DevCap) [bytes]").or(N(128.0), MPS_128),
    int(Nic, "ports", true, 1.0, 16.0, "Ethernet ports"),
    num(Nic, "port_gbps", true, 0.0, 1000.0, "fastest data rate of one port [Gb/s]; 0: no line of its own (a veth)"),
    num(Host, "smbd_request_us", false, 0.0, 10_000.0, "CPU time smbd's process spends per SMB2 READ or WRITE besides copying its data: receiving and parsing the request, credits, handing the file I/O to its thread pool and queueing the response [us]").or(
        N(SMBD_REQUEST_US),
        SMBD_REQUEST_DEFAULT,
    )
    .only(SMB),
    num(Host, "nfsd_threads", false, 1.0, 4096.0, "knfsd server threads, each serving one RPC at a time on any core").or(
        N(8.0),
        "8: the default count of knfsd threads (nfs.conf(5) [nfsd] threads=8; rpc.nfsd(8): 'nproc ... 8 if not specified')",
    )
    .only(NFS),
    num(Host, "nfsd_request_us", false, 0.0, 10_000.0, "CPU time of one knfsd thread per NFS READ or WRITE RPC besides copying its data [us]").or(
        N(SMBD_REQUEST_US),
        "as smbd_request_us (a request received, decoded, dispatched to the filesystem and answered), taken for knfsd's RPC too; not measured for knfsd (this kernel's rig has no nfsd)",
    )
    .only(NFS),
    num(Host, "smbd_read_mb_s", false, 1.0, 1e6, "rate at which smbd reads a request's data (page cache to its buffer) before it sends any of it [MB/s]").or(
        N(2000.0),
        "2,000 MB/s, inferred: the order of one core's copy of 8 MiB out of the page cache under load (first fitted on tests/net_rig.rs's 1 Gbit/s smbclient get on a 2-core host at load average 10, 113 MB/s against 119.5 MB/s of link, as 1/(1/113 - 1/119.5)); on the idle host the same gets reach 119.0 and 296.2 MB/s at 1 and 2.5 Gbit/s, at the line, so with smbclient's two requests in flight this wait never binds and the rig does not constrain it further",
    )
    .only(SMB),
    // Drives.
    one_of(Drive, "class", true, &["ssd", "hdd", "nvme"], "ssd, hdd or nvme"),
    one_of(Drive, "interface", true, &["sata", "sas", "nvme"], "sata, sas or nvme"),
    int(
        Drive,
        "interface_gen",
        true,
        1.0,
        5.0,
        "fastest interface generation (SATA 3 = 6 Gb/s; NVMe: PCIe generation)",
    ),
    int_of(Drive, "lanes", false, PCIE_WIDTHS, "PCIe lanes (NVMe)")
        .or(N(4.0), "x4: the width of an M.2 or U.2 NVMe SSD's link")
        .only(NVME),
    int_of(Drive, "mps", false, PAYLOAD_SIZES, "Max Payload Size the drive supports (DevCap, NVMe) [bytes]")
        .or(
            N(256.0),
            "256 bytes, what client and data-centre NVMe SSDs commonly report as DevCap MaxPayload; inferred, not in a stored source",
        )
        .only(NVME),
    int_of(Drive, "mrrs", false, PAYLOAD_SIZES, "Max Read Request Size of its memory reads (disk writes, NVMe) [bytes]")
        .or(N(512.0), MRRS_DEFAULT)
        .only(NVME),
    int(Drive, "read_tags", false, 1.0, 4096.0, "memory read requests it keeps outstanding (PCIe tags, NVMe)")
        .or(N(256.0), TAGS_8BIT)
        .only(NVME),
    num(Drive, "capacity_gb", true, 0.001, 1e6, "capacity [GB, 10^9 bytes]"),
    num(Drive, "seq_read_mb_s", false, 1.0, 1e5, "sequential read rate [MB/s]")
        .or(N(500.0), "500 MB/s, the order of a SATA SSD's sequential read rate; typical, not this drive's")
        .only(FLASH),
    num(Drive, "seq_write_mb_s", false, 1.0, 1e5, "sequential write rate [MB/s]")
        .or(N(500.0), "500 MB/s, the order of a SATA SSD's sequential write rate; typical, not this drive's")
        .only(FLASH),
    num(Drive, "rand_read_iops", false, 1.0, 1e8, "4 KiB random read IOPS at high queue depth")
        .or(N(INF), "no random-read limit stated: random reads cost as sequential ones")
        .only(FLASH),
    num(Drive, "rand_write_iops", false, 1.0, 1e8, "4 KiB random write IOPS at high queue depth")
        .or(N(INF), "no random-write limit stated: random writes cost as sequential ones")
        .only(FLASH),
    num(Drive, "read_latency_us", false, 0.0, 1e6, "media read latency [us]")
        .or(N(50.0), "50 us, the order of a flash page read (tR) plus controller time; typical, not this drive's")
        .only(FLASH),
    num(Drive, "write_latency_us", false, 0.0, 1e6, "media write latency [us]")
        .or(N(30.0), "30 us, the order of a write into an SSD's DRAM or SLC cache; typical, not this drive's")
        .only(FLASH),
    int(Drive, "parallelism", false, 1.0, 1024.0, "commands the drive works on at once")
        .or(N(8.0), "8, the NAND channel count of a typical SATA SSD controller; not this drive's")
        .only(FLASH),
    num(Drive, "rpm", false, 1000.0, 20000.0, "spindle speed [rpm]")
        .or(N(7200.0), "7200 rpm, the most common spindle speed of 3.5-inch drives; not this drive's")
        .only(HDD),
    num(Drive, "outer_mb_s", false, 1.0, 1e4, "media rate at the outer zone (LBA 0) [MB/s]")
        .or(N(100.0), "100 MB/s, an old 7200 rpm drive's outer-zone rate; not this drive's")
        .only(HDD),
    num(Drive, "inner_mb_s", false, 1.0, 1e4, "media rate at the inner zone (last LBA) [MB/s]")
        .or(Share("outer_mb_s", 0.5), "half the outer rate: the inner track's radius is about half the outer one")
        .only(HDD),
    int(Drive, "zones", false, 1.0, 1000.0, "recording zones between the outer and inner rate")
        .or(N(16.0), "16 zones, the order of zoned-bit recording's zone count; not this drive's")
        .only(HDD),
    num(Drive, "avg_seek_ms", false, 0.0, 100.0, "average seek over a third of the stroke [ms]")
        .or(N(8.5), "8.5 ms, a 7200 rpm desktop drive's datasheet average read seek; not this drive's")
        .only(HDD),
    num(Drive, "track_to_track_ms", false, 0.0, 100.0, "track-to-track seek [ms]")
        .or(N(1.0), "1 ms, the order of a datasheet track-to-track seek; not this drive's")
        .only(HDD),
    num(Drive, "cmd_overhead_us", false, 0.0, 1e5, "drive firmware time per command [us]")
        .or(N(0.0), "no firmware time stated: the drive adds none per command")
        .only(HDD),
    num(Drive, "cache_mib", false, 0.0, 1e5, "read-ahead and write cache [MiB]")
        .or(N(16.0), "16 MiB, a small desktop drive's cache; not this drive's")
        .only(HDD),
    num(Drive, "write_efficiency", false, 0.05, 1.0, "sequential write media rate as a share of the read rate (HDD)")
        .or(N(1.0), "writes at the read rate: no write loss measured")
        .only(HDD),
    // Drive behaviour: SSD write caches, latency spread, HDD write caching and SMR.
    num(Drive, "write_cache_gb", false, 0.0, 1e5, "SLC write cache: bytes written at seq_write_mb_s before the cliff [GB]")
        .or(N(0.0), "no SLC write cache stated: the drive writes at seq_write_mb_s however much it writes, as enterprise SSDs whose datasheet rates are sustained ones")
        .only(FLASH),
    num(Drive, "post_cache_write_mb_s", false, 1.0, 1e5, "write rate once the SLC cache is full, direct to TLC/QLC [MB/s]")
        .or(SameAs("seq_write_mb_s"), "no cliff stated: after its cache the drive writes at its sequential rate")
        .only(FLASH),
    num(Drive, "cache_fold_mb_s", false, 0.1, 1e5, "rate at which idle NAND time empties the SLC cache into TLC/QLC [MB/s]")
        .or(
            SameAs("post_cache_write_mb_s"),
            "folding programs the cached data into TLC/QLC, the same program operation as a direct write once the cache is full, so it runs at the post-cache rate",
        )
        .only(FLASH),
    num(Drive, "read_latency_p999_us", false, 0.0, 1e6, "99.9th percentile of the media read latency, 4 KiB QD1 [us]")
        .or(
            Share("read_latency_us", 2.73),
            "2.73 x read_latency_us: Intel DC S4600 product specification, random 4 KB QD1 read latency 110 us typical and Quality of Service (99.9%) 300 us (300/110); a TLC SATA SSD's spread, not this drive's",
        )
        .only(FLASH),
    flag(Drive, "write_cache", false, "volatile write cache on: random writes are acknowledged from the cache and destaged in positioning order (HDD)")
        .or(
            DefaultValue::Flag(true),
            "on: SATA drives ship with the write cache enabled (ATA SET FEATURES, WCE); Seagate's product manuals: with WCE=1 the drive returns Good status once the data is in its buffer, before it is on the medium",
        )
        .only(HDD),
    one_of(Drive, "recording", false, &["cmr", "smr"], "cmr (conventional) or smr (drive-managed shingled: a CMR media cache in front of shingled bands)")
        .or(Word("cmr"), "cmr: conventional recording, what every drive used before drive-managed SMR (2015 on); not this drive's")
        .only(HDD),
    num(Drive, "smr_cache_gb", false, 0.0, 1e4, "drive-managed SMR: CMR media cache that random writes are logged into [GB]")
        .or(N(0.0), "no media cache: only a drive-managed SMR drive has one, and its size must be stated")
        .only(HDD),
];

/// Looks up what a figure name means for a kind.
pub fn figure_spec(kind: Kind, name: &str) -> Option<&'static FigureSpec> {
    FIGURES.iter().find(|f| f.kind == kind && f.name == name)
}

/// The figure names a kind accepts.
pub fn figure_names(kind: Kind) -> impl Iterator<Item = &'static str> {
    FIGURES.iter().filter(move |f| f.kind == kind).map(|f| f.name)
}

/// A value as a message names it: `5`, `2.5`, `true`, `"bogus"` (never Rust debug text).
pub fn shown(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// What a figure accepts, in words: `a whole number from 1 to 8`, `one of none, cbs, fbs`.
pub fn expectation(spec: &FigureSpec) -> String {
    let (lo, hi) = spec.range;
    let upto = |what: &str| {
        if hi.is_finite() { format!("{what} from {lo} to {hi}") } else { format!("{what} of at least {lo}") }
    };
    match spec.accepts {
        Accepts::Number => upto("a number"),
        Accepts::Integer => upto("a whole number"),
        Accepts::IntegerOf(of) => {
            format!("one of {}", of.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "))
        }
        Accepts::Flag => "true or false".to_string(),
        Accepts::Link { internal } => format!(
            "a PCIe link generation: pcie1..pcie5 (with a width if needed, e.g. pcie3x2), dmi1..dmi4{}",
            if internal { ", or internal" } else { "" }
        ),
        Accepts::OneOf(of) => format!("one of {}", of.join(", ")),
    }
}

/// Checks a value against a figure's type, range and kind; returns a sentence on failure:
/// `uplink: expected a PCIe link generation ...; found "bogus"`.
pub fn check_value(spec: &FigureSpec, v: &Value) -> Result<(), String> {
    let fail = |extra: String| Err(format!("{}: expected {}; found {}{extra}", spec.name, expectation(spec), shown(v)));
    match (spec.ty, v) {
        (FigureType::Num, Value::Num(n)) => {
            let (lo, hi) = spec.range;
            let whole = n.fract() == 0.0;
            let ok = match spec.accepts {
                _ if n.is_nan() || (n.is_infinite() && hi.is_finite()) => false,
                Accepts::Integer => whole && *n >= lo && *n <= hi,
                Accepts::IntegerOf(of) => whole && of.iter().any(|w| *w as f64 == *n),
                _ => *n >= lo && *n <= hi,
            };
            if ok { Ok(()) } else { fail(String::new()) }
        }
        (FigureType::Bool, Value::Bool(_)) => Ok(()),
        (FigureType::Str, Value::Str(s)) => match spec.accepts {
            Accepts::OneOf(of) => {
                if of.contains(&s.as_str()) {
                    Ok(())
                } else {
                    fail(did_you_mean(&suggest(s, of.iter().copied())))
                }
            }
            Accepts::Link { internal } => match crate::link::parse_link(s) {
                Ok(l) if l.family == crate::link::Family::Pcie => Ok(()),
                Ok(l) if l.family == crate::link::Family::Internal && internal => Ok(()),
                Ok(_) => fail(format!(" (not a PCIe link; a {}'s uplink reaches the host over PCIe)", spec.kind)),
                Err(e) => {
                    // The reason without the name, which the message shows already.
                    let q = format!("{s:?}");
                    let why = e.message.strip_prefix(&q).unwrap_or(&e.message).trim_start_matches(':').trim();
                    if why.starts_with("is ") { fail(format!(", which {why}")) } else { fail(format!(" ({why})")) }
                }
            },
            _ => Ok(()),
        },
        _ => fail(String::new()),
    }
}

/// Checks figures of one part that must agree: a drive's interface generation exists for its
/// interface (SATA 1-3, SAS 1-4, NVMe: PCIe 1-5). Returns the figure at fault and a sentence.
pub fn check_together(kind: Kind, figures: &BTreeMap<String, Figure>) -> Result<(), (&'static str, String)> {
    if kind != Kind::Drive {
        return Ok(());
    }
    let interface = match figures.get("interface").map(|f| &f.value) {
        Some(Value::Str(s)) => s.as_str(),
        _ => return Ok(()),
    };
    let (family, max) = match interface {
        "sata" => ("SATA", 3.0),
        "sas" => ("SAS", 4.0),
        _ => ("NVMe (PCIe)", 5.0),
    };
    match figures.get("interface_gen").map(|f| &f.value) {
        Some(Value::Num(g)) if *g > max => Err((
            "interface_gen",
            format!(
                "interface_gen: a {family} drive has generations 1 to {max}; found {g} with interface = {interface:?}"
            ),
        )),
        _ => Ok(()),
    }
}

/// Errors in catalog files (built-in ones are caught by tests; user part files at load).
/// `at` is `:LINE:COLUMN` in the file, or empty when no position is known.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    #[error("{file}{at}: {message}")]
    Parse { file: String, at: String, message: String },
    #[error("{file}{at}: part {part:?}: {message}")]
    Part { file: String, at: String, part: String, message: String },
}

/// The `[[part]]` tables of a part file or a topology again, only for positions: `Part`
/// keeps none. Loads whatever it can; a file it cannot read gives no positions.
#[derive(Deserialize)]
struct PartPositions {
    #[serde(default)]
    part: Vec<PartPosition>,
}

/// Where one `[[part]]`'s id, kind and figure values stand in its file.
#[derive(Deserialize)]
pub(crate) struct PartPosition {
    pub id: Option<toml::Spanned<toml::Value>>,
    pub kind: Option<toml::Spanned<toml::Value>>,
    #[serde(default)]
    pub figures: BTreeMap<toml::Spanned<String>, toml::Spanned<FigurePosition>>,
}

#[derive(Deserialize)]
pub(crate) struct FigurePosition {
    pub value: Option<toml::Spanned<toml::Value>>,
}

pub(crate) fn part_positions(text: &str) -> Vec<PartPosition> {
    toml::from_str::<PartPositions>(text).map(|p| p.part).unwrap_or_default()
}

/// `:LINE:COLUMN` of part `i` of a part file (of its figure `figure`'s value when given).
fn part_position(text: &str, i: usize, figure: Option<&str>) -> String {
    let positions = part_positions(text);
    let Some(pp) = positions.get(i) else {
        return String::new();
    };
    let span = figure
        .and_then(|f| pp.figures.iter().find(|(k, _)| k.get_ref() == f))
        .map(|(_, v)| v.get_ref().value.as_ref().map_or(v.span(), |x| x.span()))
        .or_else(|| pp.id.as_ref().map(|v| v.span()));
    match span {
        Some(s) => {
            let (l, c) = crate::topology::line_col(text, s.start);
            format!(":{l}:{c}")
        }
        None => String::new(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartFile {
    #[serde(default)]
    part: Vec<Part>,
}

const BUILTIN: &[(&str, &str)] = &[
    ("links.toml", include_str!("../catalog/links.toml")),
    ("hosts.toml", include_str!("../catalog/hosts.toml")),
    ("switches.toml", include_str!("../catalog/switches.toml")),
    ("controllers.toml", include_str!("../catalog/controllers.toml")),
    ("port_multipliers.toml", include_str!("../catalog/port_multipliers.toml")),
    ("expanders.toml", include_str!("../catalog/expanders.toml")),
    ("drives.toml", include_str!("../catalog/drives.toml")),
    ("nics.toml", include_str!("../catalog/nics.toml")),
];

/// Figures fitted to published measurements, loaded over the parts above.
const FITS: (&str, &str) = ("fits.toml", include_str!("../catalog/fits.toml"));

/// One figure of the built-in `fits.toml` ([`Catalog::builtin_fits`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FitEntry {
    /// The part's id.
    pub part: String,
    pub kind: Kind,
    /// The figure's name.
    pub figure: String,
    /// Its value, source (naming the published sources it was trained on, "source 002") and
    /// basis.
    pub fig: Figure,
}

/// The parts iopath knows. Every loaded topology keeps the catalog it was resolved against:
/// the maps are shared, so that copy is two reference counts (`plan` loads thousands of
/// builds), and a topology's own `[[part]]`s copy them on write.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    parts: std::sync::Arc<BTreeMap<String, Part>>,
    /// Where each part was defined (file name), for messages.
    origin: std::sync::Arc<BTreeMap<String, String>>,
}

impl Catalog {
    /// The built-in catalog. Panics only if an embedded file is broken, which the unit
    /// tests rule out before any release.
    pub fn builtin() -> Catalog {
        static CELL: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        CELL.get_or_init(|| {
            let mut c = Catalog::from_files(BUILTIN.iter().map(|(f, t)| (f.to_string(), t.to_string())))
                .unwrap_or_else(|e| panic!("built-in catalog is broken: {e}"));
            c.overlay(FITS.0, FITS.1).unwrap_or_else(|e| panic!("built-in fits are broken: {e}"));
            c
        })
        .clone()
    }

    /// The figures of the built-in `fits.toml`, in file order: the figures derived from
    /// published measurements, each with its part and the source string naming the fit.
    pub fn builtin_fits() -> Vec<FitEntry> {
        let pf: PartFile = toml::from_str(FITS.1).unwrap_or_else(|e| panic!("built-in fits are broken: {e}"));
        pf.part
            .into_iter()
            .flat_map(|p| {
                let (id, kind) = (p.id, p.kind);
                p.figures.into_iter().map(move |(figure, fig)| FitEntry { part: id.clone(), kind, figure, fig })
            })
            .collect()
    }

    /// The built-in catalog with only those `fits.toml` figures that `keep` accepts (as
    /// they are, or changed: `keep` may rewrite an entry, e.g. with a refitted value). A
    /// figure left out takes the value its part's own catalog file states, or, where that
    /// file does not state it, the figure's declared default. For leave-one-source-out
    /// predictions (`tests/fidelity.rs`): the catalog as if some fits had never been made.
    pub fn builtin_with_fits(mut keep: impl FnMut(&mut FitEntry) -> bool) -> Catalog {
        let mut c = Catalog::from_files(BUILTIN.iter().map(|(f, t)| (f.to_string(), t.to_string())))
            .unwrap_or_else(|e| panic!("built-in catalog is broken: {e}"));
        let mut parts: Vec<Part> = Vec::new();
        for mut e in Catalog::builtin_fits() {
            if !keep(&mut e) {
                continue;
            }
            let base = c.get(&e.part).filter(|p| p.kind == e.kind);
            let name = base.map_or_else(|| e.part.clone(), |p| p.name.clone());
            let i = match parts.iter().position(|p| p.id == e.part) {
                Some(i) => i,
                None => {
                    let p = Part {
                        id: e.part.clone(),
                        kind: e.kind,
                        name,
                        aliases: Vec::new(),
                        pci_ids: Vec::new(),
                        notes: String::new(),
                        figures: BTreeMap::new(),
                    };
                    parts.push(p);
                    parts.len() - 1
                }
            };
            parts[i].figures.insert(e.figure, e.fig);
        }
        let text = crate::toml_out::part_file(&parts, &[]).unwrap_or_else(|e| panic!("fits do not serialize: {e}"));
        c.overlay(FITS.0, &text).unwrap_or_else(|e| panic!("filtered fits are invalid: {e}"));
        c
    }

    /// Parses and validates a set of part files.
    pub fn from_files(files: impl IntoIterator<Item = (String, String)>) -> Result<Catalog, CatalogError> {
        let mut c = Catalog::default();
        for (file, text) in files {
            c.add_file(&file, &text, false)?;
        }
        Ok(c)
    }

    /// Loads a user's part file over this catalog. A part with a known id replaces only the
    /// figures it names; a new id adds a part.
    pub fn overlay(&mut self, file: &str, text: &str) -> Result<(), CatalogError> {
        self.add_file(file, text, true)
    }

    fn add_file(&mut self, file: &str, text: &str, overlay: bool) -> Result<(), CatalogError> {
        let pf: PartFile = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or_else(String::new, |s| {
                let (l, c) = crate::topology::line_col(text, s.start);
                format!(":{l}:{c}")
            });
            CatalogError::Parse { file: file.to_string(), at, message: e.message().trim().to_string() }
        })?;
        for (i, p) in pf.part.into_iter().enumerate() {
            // Located at the figure a problem is about, else at the part's id.
            let perr = |figure: Option<&str>, m: String| CatalogError::Part {
                file: file.to_string(),
                at: part_position(text, i, figure),
                part: p.id.clone(),
                message: m,
            };
            if overlay
                && self.parts.contains_key(&p.id)
                && let Some(existing) = std::sync::Arc::make_mut(&mut self.parts).get_mut(&p.id)
            {
                if existing.kind != p.kind {
                    return Err(perr(None, format!("is a {} in the catalog, not a {}", existing.kind, p.kind)));
                }
                for (k, f) in &p.figures {
                    let spec = figure_spec(p.kind, k)
                        .ok_or_else(|| perr(Some(k), format!("unknown figure {k:?} for a {}", p.kind)))?;
                    check_value(spec, &f.value).map_err(|m| perr(Some(k), m))?;
                }
                let mut merged = existing.figures.clone();
                merged.extend(p.figures.iter().map(|(k, f)| (k.clone(), f.clone())));
                check_together(p.kind, &merged).map_err(|(f, m)| perr(Some(f), m))?;
                existing.figures = merged;
                continue;
            }
            validate_part(&p).map_err(|(figure, m)| perr(figure.as_deref(), m))?;
            if !overlay && self.parts.contains_key(&p.id) {
                return Err(perr(None, "is defined twice".to_string()));
            }
            std::sync::Arc::make_mut(&mut self.origin).insert(p.id.clone(), file.to_string());
            std::sync::Arc::make_mut(&mut self.parts).insert(p.id.clone(), p);
        }
        Ok(())
    }

    pub fn parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.values()
    }

    /// Finds a part by id or alias, case-insensitively.
    pub fn get(&self, id: &str) -> Option<&Part> {
        let key = id.trim().to_ascii_lowercase();
        self.parts
            .get(&key)
            .or_else(|| self.parts.values().find(|p| p.aliases.iter().any(|a| a.eq_ignore_ascii_case(&key))))
    }

    /// Finds a part of a given kind.
    pub fn get_kind(&self, id: &str, kind: Kind) -> Option<&Part> {
        self.get(id).filter(|p| p.kind == kind)
    }

    /// The closest part ids to a misspelt one, best first.
    pub fn suggest(&self, id: &str, kind: Option<Kind>) -> Vec<String> {
        let names = self.parts.values().filter(|p| kind.is_none_or(|k| p.kind == k)).map(|p| p.id.as_str());
        suggest(id, names)
    }

    /// Finds a part by PCI `vendor:device` id.
    pub fn by_pci_id(&self, id: &str) -> Option<&Part> {
        let key = id.to_ascii_lowercase();
        self.parts.values().find(|p| p.pci_ids.contains(&key))
    }

    pub fn origin(&self, id: &str) -> Option<&str> {
        self.origin.get(id).map(|s| s.as_str())
    }
}

/// Checks a part; a problem comes with the figure it is about, if any.
fn validate_part(p: &Part) -> Result<(), (Option<String>, String)> {
    let whole = |m: String| (None, m);
    if p.id.is_empty() || p.id != p.id.to_ascii_lowercase() || p.id.contains(char::is_whitespace) {
        return Err(whole("ids are lower-case with no spaces".to_string()));
    }
    for (k, f) in &p.figures {
        let at = |m: String| (Some(k.clone()), m);
        let spec = figure_spec(p.kind, k).ok_or_else(|| {
            let s = suggest(k, figure_names(p.kind));
            at(format!("unknown figure {k:?} for a {}{}", p.kind, did_you_mean(&s)))
        })?;
        check_value(spec, &f.value).map_err(at)?;
        if f.source.trim().is_empty() {
            return Err(at(format!("figure {k:?} has no source")));
        }
        if f.source.trim().len() < 8 {
            return Err(at(format!(
                "figure {k:?}: source {:?} is too short to say where the number comes from (8 characters at least)",
                f.source.trim()
            )));
        }
        if !["datasheet", "spec", "measurement", "fit", "derived", "inferred"].contains(&f.basis.as_str()) {
            return Err(at(format!(
                "figure {k:?}: basis {:?} is not datasheet/spec/measurement/fit/derived/inferred",
                f.basis
            )));
        }
    }
    check_together(p.kind, &p.figures).map_err(|(f, m)| (Some(f.to_string()), m))?;
    for spec in FIGURES.iter().filter(|s| s.kind == p.kind && s.required) {
        if !p.figures.contains_key(spec.name) {
            return Err(whole(format!("missing required figure {:?} ({})", spec.name, spec.doc)));
        }
    }
    Ok(())
}

/// Levenshtein distance, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidates within a small edit distance of `word`, closest first (at most 3).
pub fn suggest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let w = word.to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .map(|c| (edit_distance(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(w.len()) / 3).max(2) || c.contains(w.as_str()) && w.len() >= 3)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c.to_string()).collect()
}

/// `; did you mean "x"?` or empty.
pub fn did_you_mean(s: &[String]) -> String {
    match s {
        [] => String::new(),
        [one] => format!("; did you mean {one:?}?"),
        many => {
            format!("; did you mean one of {}?", many.iter().map(|m| format!("{m:?}")).collect::<Vec<_>>().join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_without_a_fit_takes_the_parts_own_value() {
        // asm1062's read efficiency is fitted (fits.toml); controllers.toml states its own.
        let fitted = Catalog::builtin().get("asm1062").unwrap().figures["dma_read_efficiency"].clone();
        assert_eq!(fitted.basis, "fit");
        let all = Catalog::builtin_with_fits(|_| true);
        assert_eq!(all.get("asm1062").unwrap().figures["dma_read_efficiency"], fitted);
        let without = Catalog::builtin_with_fits(|e| !(e.part == "asm1062" && e.figure == "dma_read_efficiency"));
        let own = &without.get("asm1062").unwrap().figures.get("dma_read_efficiency");
        assert_ne!(own.map(|f| &f.basis), Some(&"fit".to_string()), "{own:?}");
        // The other fitted figure of the part stays.
        assert_eq!(without.get("asm1062").unwrap().figures["dma_write_efficiency"].basis, "fit");
        assert!(Catalog::builtin_fits().iter().any(|e| e.part == "asm1062" && e.figure == "dma_write_efficiency"));
    }

    #[test]
    fn builtin_catalog_loads_and_every_figure_has_a_source() {
        let c = Catalog::from_files(BUILTIN.iter().map(|(f, t)| (f.to_string(), t.to_string()))).unwrap();
        assert!(c.parts().count() > 20);
        for p in c.parts() {
            for (k, f) in &p.figures {
                assert!(f.source.len() >= 8, "{}.{} lacks a source", p.id, k);
            }
        }
    }

    #[test]
    fn suggests_close_names() {
        let c = Catalog::builtin();
        assert_eq!(c.suggest("asm1116", Some(Kind::Controller)).first().map(|s| s.as_str()), Some("asm1166"));
    }

    #[test]
    fn overlay_replaces_only_named_figures() {
        let mut c = Catalog::builtin();
        let before = c.get("asm1166").unwrap().figures.clone();
        c.overlay(
            "fit.toml",
            r#"[[part]]
id = "asm1166"
kind = "controller"
name = "ASMedia ASM1166"
figures.dma_read_efficiency = { value = 0.5, source = "iopath fit, test", basis = "fit" }
"#,
        )
        .unwrap();
        let p = c.get("asm1166").unwrap();
        // The named figure is replaced, value, source and basis alike ...
        let f = &p.figures["dma_read_efficiency"];
        assert_eq!((&f.value, f.source.as_str(), f.basis.as_str()), (&Value::Num(0.5), "iopath fit, test", "fit"));
        assert_ne!(before.get("dma_read_efficiency"), Some(f), "the test must change the figure");
        // ... and every other figure stays as it was: none lost, none added, none changed.
        let mut expected = before.clone();
        expected.insert("dma_read_efficiency".into(), f.clone());
        assert_eq!(p.figures, expected);
        assert!(before.len() > 5, "asm1166 states its figures: {before:?}");
    }

    #[test]
    fn part_file_errors_are_located_at_their_figure() {
        let mut c = Catalog::builtin();
        let text = "[[part]]\nid = \"asm1166\"\nkind = \"controller\"\nname = \"x\"\nfigures.uplink = { value = \"bogus\", source = \"a fit of mine\" }\n";
        let e = c.overlay("p.toml", text).unwrap_err().to_string();
        assert!(e.starts_with("p.toml:5:28: part \"asm1166\": uplink: expected a PCIe link"), "{e}");
        let e = c.overlay("p.toml", "[[part]\n").unwrap_err().to_string();
        assert!(e.starts_with("p.toml:1:"), "{e}");
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
