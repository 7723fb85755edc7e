//! Resolved part figures: one typed struct per kind of part.
//!
//! The catalog keeps a part's figures as a map from name to [`Figure`] (value, source,
//! basis), which is what files hold and what `iopath catalog` and `check --json` show. Stage
//! two of loading turns each node's map (catalog part plus its `params`) into a
//! [`PartSpec`] here, filling every figure the part does not state with the default
//! [`crate::catalog::FIGURES`] declares for it. The paths, the bound and the simulator read
//! these fields; this module is the only place that looks a figure up by its name.
//!
//! A figure that came from a default is recorded in [`Resolved::defaults`] with basis
//! [`DEFAULT_BASIS`] and the default's reason as its source, so it can be shown.

use crate::catalog::{DEFAULT_BASIS, DefaultValue, Figure, Kind, Part, Value, figure_spec};
use crate::link::GenerationFigures;
use std::collections::BTreeMap;

/// What a drive stores data on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriveClass {
    /// A SATA or SAS flash drive.
    Ssd,
    /// A spinning disk: the simulator models its mechanics.
    Hdd,
    /// A flash drive on PCIe.
    Nvme,
}

impl DriveClass {
    pub fn as_str(self) -> &'static str {
        match self {
            DriveClass::Ssd => "ssd",
            DriveClass::Hdd => "hdd",
            DriveClass::Nvme => "nvme",
        }
    }
}

/// The protocol a drive speaks to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Sata,
    Sas,
    Nvme,
}

impl Interface {
    /// The figure's word (`interface = "sata"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Interface::Sata => "sata",
            Interface::Sas => "sas",
            Interface::Nvme => "nvme",
        }
    }
}

/// Which port multipliers a controller can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmSupport {
    None,
    /// Command-based switching: one drive holds the upstream link per command.
    Cbs,
    /// FIS-based switching.
    Fbs,
}

/// The CPU root complex and operating system.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFigures {
    pub root_mps: u32,
    pub completion_bytes: u32,
    /// Newest PCIe generation its root ports train at.
    pub root_gen: u8,
    /// Round trip of a device's memory read at the root port [us].
    pub dma_read_latency_us: f64,
    pub io_overhead_us: f64,
    /// One IOMMU translation miss (0: devices are not passed through to a VM) [us].
    pub iommu_walk_us: f64,
    /// The IOMMU's mapping size of guest memory: one miss per page of DMA data [bytes].
    pub iommu_page_bytes: f64,
    /// Cores available for I/O.
    pub cpu_cores: f64,
    /// CPU time of one I/O on one core, submission and completion [us].
    pub cpu_per_io_us: f64,
    /// CPU time of smbd's process per request besides its copies [us] ([`crate::net`]).
    pub smbd_request_us: f64,
    /// knfsd threads, and each one's CPU time per RPC besides its copies [us].
    pub nfsd_threads: f64,
    pub nfsd_request_us: f64,
    /// Rate at which smbd reads a request's data before sending any of it [MB/s].
    pub smbd_read_mb_s: f64,
    /// Per-core rates of the storage stack's CPU kernels ([`crate::cpu::Kernel`]) [MB/s].
    pub cpu_fletcher4_mb_s: f64,
    pub cpu_sha256_mb_s: f64,
    pub cpu_blake3_mb_s: f64,
    pub cpu_crc32c_mb_s: f64,
    pub cpu_xor_mb_s: f64,
    pub cpu_raid_pq_mb_s: f64,
    pub cpu_raid_pqr_mb_s: f64,
    pub cpu_aes_gcm_mb_s: f64,
    pub cpu_lz4_mb_s: f64,
    pub cpu_zstd_mb_s: f64,
    /// One core's copy of data out of cache [MB/s] ([`crate::cpu::Kernel::Memcpy`]).
    pub cpu_memcpy_mb_s: f64,
}

/// A chipset or PCIe switch: a shared uplink.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchFigures {
    /// The uplink generation as the part names it (`pcie3`, `dmi3`).
    pub uplink: String,
    pub lanes: u32,
    pub mps: u32,
    pub hop_latency_us: f64,
    /// Widest downstream port [lanes].
    pub port_lanes: u32,
}

/// A SATA controller or SAS HBA.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerFigures {
    /// The host link generation (`pcie3`) or `internal`.
    pub uplink: String,
    pub lanes: u32,
    pub mps: u32,
    /// Max Read Request Size of its memory reads [bytes].
    pub mrrs: u32,
    /// Memory read requests it keeps outstanding.
    pub read_tags: u32,
    pub ports: u32,
    pub sata_gen: u8,
    /// 0 for a SATA-only controller.
    pub sas_gen: u8,
    pub pm_support: PmSupport,
    pub dma_read_efficiency: f64,
    pub dma_write_efficiency: f64,
    pub port_read_efficiency: f64,
    pub port_write_efficiency: f64,
    pub cmd_overhead_us: f64,
    /// Infinite when the controller has no command-rate limit.
    pub max_iops: f64,
}

impl ControllerFigures {
    /// Whether it has SAS phys (expanders and SAS drives may attach).
    pub fn has_sas(&self) -> bool {
        self.sas_gen > 0
    }
}

/// A network interface controller: a PCIe function with Ethernet ports ([`crate::net`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NicFigures {
    /// The host link generation (`pcie3`) or `internal` (a virtual interface).
    pub uplink: String,
    pub lanes: u32,
    pub mps: u32,
    pub ports: u32,
    /// Data rate of one port [Gb/s]; 0 for an interface without a line of its own (veth).
    pub port_gbps: f64,
}

/// A SATA port multiplier.
#[derive(Debug, Clone, PartialEq)]
pub struct PmFigures {
    pub ports: u32,
    pub sata_gen: u8,
    pub fbs_capable: bool,
    /// FIS-based switching asked for (used only if the controller supports it).
    pub fbs: bool,
    pub upstream_efficiency: f64,
    pub downstream_efficiency: f64,
    pub switch_cost_us: f64,
    pub cbs_handover_us: f64,
}

/// A SAS expander.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpanderFigures {
    pub sas_gen: u8,
    pub phys: u32,
    pub hop_latency_us: f64,
    pub stp_write_turnaround_us: f64,
    pub stp_write_efficiency: f64,
    pub store_forward: bool,
}

/// A drive. Every field is filled for every class; the figures that do not apply to the
/// class (a flash drive's seek time) hold their defaults and are not shown as such.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveFigures {
    pub class: DriveClass,
    pub interface: Interface,
    pub interface_gen: u8,
    /// PCIe lanes (NVMe).
    pub lanes: u32,
    /// Max Payload Size the drive supports (NVMe) [bytes].
    pub mps: u32,
    /// Max Read Request Size of its memory reads (NVMe) [bytes].
    pub mrrs: u32,
    /// Memory read requests it keeps outstanding (NVMe).
    pub read_tags: u32,
    pub capacity_gb: f64,
    pub seq_read_mb_s: f64,
    pub seq_write_mb_s: f64,
    pub rand_read_iops: f64,
    pub rand_write_iops: f64,
    pub read_latency_us: f64,
    pub write_latency_us: f64,
    pub parallelism: u32,
    pub rpm: f64,
    pub outer_mb_s: f64,
    pub inner_mb_s: f64,
    pub zones: u32,
    pub avg_seek_ms: f64,
    pub track_to_track_ms: f64,
    pub cmd_overhead_us: f64,
    pub cache_mib: f64,
    pub write_efficiency: f64,
    /// SLC write cache [GB]; 0: none.
    pub write_cache_gb: f64,
    pub post_cache_write_mb_s: f64,
    pub cache_fold_mb_s: f64,
    pub read_latency_p999_us: f64,
    /// HDD volatile write cache enabled (random writes acknowledged from it).
    pub write_cache: bool,
    /// Drive-managed SMR (`recording = "smr"`).
    pub smr: bool,
    pub smr_cache_gb: f64,
}

impl DriveFigures {
    pub fn is_hdd(&self) -> bool {
        self.class == DriveClass::Hdd
    }
}

/// A node's figures, typed by its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum PartSpec {
    /// Only while loading, before a node's part is resolved; a loaded topology has none.
    Unresolved,
    Host(HostFigures),
    Switch(SwitchFigures),
    Controller(ControllerFigures),
    PortMultiplier(PmFigures),
    Expander(ExpanderFigures),
    Drive(DriveFigures),
    Nic(NicFigures),
}

impl PartSpec {
    pub fn host(&self) -> Option<&HostFigures> {
        if let PartSpec::Host(h) = self { Some(h) } else { None }
    }
    pub fn switch(&self) -> Option<&SwitchFigures> {
        if let PartSpec::Switch(s) = self { Some(s) } else { None }
    }
    pub fn controller(&self) -> Option<&ControllerFigures> {
        if let PartSpec::Controller(c) = self { Some(c) } else { None }
    }
    pub fn port_multiplier(&self) -> Option<&PmFigures> {
        if let PartSpec::PortMultiplier(p) = self { Some(p) } else { None }
    }
    pub fn expander(&self) -> Option<&ExpanderFigures> {
        if let PartSpec::Expander(e) = self { Some(e) } else { None }
    }
    pub fn drive(&self) -> Option<&DriveFigures> {
        if let PartSpec::Drive(d) = self { Some(d) } else { None }
    }
    pub fn nic(&self) -> Option<&NicFigures> {
        if let PartSpec::Nic(n) = self { Some(n) } else { None }
    }

    /// The lanes of its PCIe link: a switch's, controller's or NIC's uplink, a drive's (NVMe;
    /// other drives hold the figure's default); `None` for other kinds.
    pub fn lanes(&self) -> Option<u32> {
        match self {
            PartSpec::Switch(s) => Some(s.lanes),
            PartSpec::Controller(c) => Some(c.lanes),
            PartSpec::Nic(n) => Some(n.lanes),
            PartSpec::Drive(d) => Some(d.lanes),
            _ => None,
        }
    }

    /// The generation of its host link as the part names it (`pcie3`, `dmi3`, `internal`):
    /// a switch's, controller's or NIC's uplink; `None` for other kinds.
    pub fn uplink(&self) -> Option<&str> {
        match self {
            PartSpec::Switch(s) => Some(&s.uplink),
            PartSpec::Controller(c) => Some(&c.uplink),
            PartSpec::Nic(n) => Some(&n.uplink),
            _ => None,
        }
    }

    /// Numbered ports children attach to: a controller's or port multiplier's ports, an
    /// expander's phys (with the figure's name, for messages); `None` for other kinds.
    pub fn ports(&self) -> Option<(u32, &'static str)> {
        match self {
            PartSpec::Controller(c) => Some((c.ports, "ports")),
            PartSpec::PortMultiplier(p) => Some((p.ports, "ports")),
            PartSpec::Expander(e) => Some((e.phys, "phys")),
            _ => None,
        }
    }
}

/// A node's typed figures and the figures among them that came from defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub spec: PartSpec,
    /// Figures the part does not state, that apply to it, as filled in: basis `default`,
    /// the default's reason as source.
    pub defaults: BTreeMap<String, Figure>,
}

/// Reads figures by name for one part: stated, else the declared default (recorded).
struct Reader<'a> {
    kind: Kind,
    figures: &'a BTreeMap<String, Figure>,
    /// The drive class, once known: decides which defaults are shown.
    class: Option<&'static str>,
    defaults: BTreeMap<String, Figure>,
    /// Required figures the part lacks (the catalog refuses such parts; kept for safety).
    missing: Vec<&'static str>,
}

impl Reader<'_> {
    fn value(&mut self, name: &'static str) -> Value {
        if let Some(f) = self.figures.get(name) {
            return f.value.clone();
        }
        let spec = figure_spec(self.kind, name);
        let Some(d) = spec.and_then(|s| s.default) else {
            self.missing.push(name);
            return Value::Num(f64::NAN);
        };
        let value = match d.value {
            DefaultValue::Num(n) => Value::Num(n),
            DefaultValue::Flag(b) => Value::Bool(b),
            DefaultValue::Word(w) => Value::Str(w.to_string()),
            DefaultValue::SameAs(other) => self.value(other),
            DefaultValue::Share(other, share) => match self.value(other) {
                Value::Num(n) => Value::Num(n * share),
                v => v,
            },
        };
        if spec.is_some_and(|s| s.applies_to(self.class)) {
            let figure = Figure { value: value.clone(), source: d.reason.to_string(), basis: DEFAULT_BASIS.into() };
            self.defaults.insert(name.to_string(), figure);
        }
        value
    }

    fn num(&mut self, name: &'static str) -> f64 {
        match self.value(name) {
            Value::Num(n) => n,
            _ => {
                self.missing.push(name);
                f64::NAN
            }
        }
    }

    /// A whole-number figure (its range is checked on every path that sets it).
    fn count(&mut self, name: &'static str) -> u32 {
        self.num(name) as u32
    }

    fn generation(&mut self, name: &'static str) -> u8 {
        self.num(name) as u8
    }

    fn flag(&mut self, name: &'static str) -> bool {
        match self.value(name) {
            Value::Bool(b) => b,
            _ => {
                self.missing.push(name);
                false
            }
        }
    }

    fn word(&mut self, name: &'static str) -> String {
        match self.value(name) {
            Value::Str(s) => s,
            _ => {
                self.missing.push(name);
                String::new()
            }
        }
    }
}

/// Resolves a part's figures (with a node's overrides applied) into its typed struct.
/// `Err` names the required figures it lacks, which only a part that bypassed the catalog's
/// checks can.
pub fn resolve(kind: Kind, figures: &BTreeMap<String, Figure>) -> Result<Resolved, Vec<&'static str>> {
    let mut r = Reader { kind, figures, class: None, defaults: BTreeMap::new(), missing: Vec::new() };
    let spec = match kind {
        Kind::Host => PartSpec::Host(HostFigures {
            root_mps: r.count("root_mps"),
            completion_bytes: r.count("completion_bytes"),
            root_gen: r.generation("root_gen"),
            dma_read_latency_us: r.num("dma_read_latency_us"),
            io_overhead_us: r.num("io_overhead_us"),
            iommu_walk_us: r.num("iommu_walk_us"),
            iommu_page_bytes: r.num("iommu_page_bytes"),
            cpu_cores: r.num("cpu_cores"),
            cpu_per_io_us: r.num("cpu_per_io_us"),
            smbd_request_us: r.num("smbd_request_us"),
            nfsd_threads: r.num("nfsd_threads"),
            nfsd_request_us: r.num("nfsd_request_us"),
            smbd_read_mb_s: r.num("smbd_read_mb_s"),
            cpu_fletcher4_mb_s: r.num("cpu_fletcher4_mb_s"),
            cpu_sha256_mb_s: r.num("cpu_sha256_mb_s"),
            cpu_blake3_mb_s: r.num("cpu_blake3_mb_s"),
            cpu_crc32c_mb_s: r.num("cpu_crc32c_mb_s"),
            cpu_xor_mb_s: r.num("cpu_xor_mb_s"),
            cpu_raid_pq_mb_s: r.num("cpu_raid_pq_mb_s"),
            cpu_raid_pqr_mb_s: r.num("cpu_raid_pqr_mb_s"),
            cpu_aes_gcm_mb_s: r.num("cpu_aes_gcm_mb_s"),
            cpu_lz4_mb_s: r.num("cpu_lz4_mb_s"),
            cpu_zstd_mb_s: r.num("cpu_zstd_mb_s"),
            cpu_memcpy_mb_s: r.num("cpu_memcpy_mb_s"),
        }),
        Kind::Switch => PartSpec::Switch(SwitchFigures {
            uplink: r.word("uplink"),
            lanes: r.count("lanes"),
            mps: r.count("mps"),
            hop_latency_us: r.num("hop_latency_us"),
            port_lanes: r.count("port_lanes"),
        }),
        Kind::Controller => PartSpec::Controller(controller(&mut r)),
        Kind::PortMultiplier => PartSpec::PortMultiplier(PmFigures {
            ports: r.count("ports"),
            sata_gen: r.generation("sata_gen"),
            fbs_capable: r.flag("fbs_capable"),
            fbs: r.flag("fbs"),
            upstream_efficiency: r.num("upstream_efficiency"),
            downstream_efficiency: r.num("downstream_efficiency"),
            switch_cost_us: r.num("switch_cost_us"),
            cbs_handover_us: r.num("cbs_handover_us"),
        }),
        Kind::Expander => PartSpec::Expander(ExpanderFigures {
            sas_gen: r.generation("sas_gen"),
            phys: r.count("phys"),
            hop_latency_us: r.num("hop_latency_us"),
            stp_write_turnaround_us: r.num("stp_write_turnaround_us"),
            stp_write_efficiency: r.num("stp_write_efficiency"),
            store_forward: r.flag("store_forward"),
        }),
        Kind::Drive => PartSpec::Drive(drive(&mut r)),
        Kind::Nic => PartSpec::Nic(NicFigures {
            uplink: r.word("uplink"),
            lanes: r.count("lanes"),
            mps: r.count("mps"),
            ports: r.count("ports"),
            port_gbps: r.num("port_gbps"),
        }),
        Kind::Link => PartSpec::Unresolved,
    };
    if r.missing.is_empty() { Ok(Resolved { spec, defaults: r.defaults }) } else { Err(r.missing) }
}

fn controller(r: &mut Reader) -> ControllerFigures {
    let pm_support = match r.word("pm_support").as_str() {
        "cbs" => PmSupport::Cbs,
        "fbs" => PmSupport::Fbs,
        _ => PmSupport::None,
    };
    ControllerFigures {
        uplink: r.word("uplink"),
        lanes: r.count("lanes"),
        mps: r.count("mps"),
        mrrs: r.count("mrrs"),
        read_tags: r.count("read_tags"),
        ports: r.count("ports"),
        sata_gen: r.generation("sata_gen"),
        sas_gen: r.generation("sas_gen"),
        pm_support,
        dma_read_efficiency: r.num("dma_read_efficiency"),
        dma_write_efficiency: r.num("dma_write_efficiency"),
        port_read_efficiency: r.num("port_read_efficiency"),
        port_write_efficiency: r.num("port_write_efficiency"),
        cmd_overhead_us: r.num("cmd_overhead_us"),
        max_iops: r.num("max_iops"),
    }
}

fn drive(r: &mut Reader) -> DriveFigures {
    let class = match r.word("class").as_str() {
        "hdd" => DriveClass::Hdd,
        "nvme" => DriveClass::Nvme,
        _ => DriveClass::Ssd,
    };
    r.class = Some(class.as_str());
    let interface = match r.word("interface").as_str() {
        "sas" => Interface::Sas,
        "nvme" => Interface::Nvme,
        _ => Interface::Sata,
    };
    DriveFigures {
        class,
        interface,
        interface_gen: r.generation("interface_gen"),
        lanes: r.count("lanes"),
        mps: r.count("mps"),
        mrrs: r.count("mrrs"),
        read_tags: r.count("read_tags"),
        capacity_gb: r.num("capacity_gb"),
        seq_read_mb_s: r.num("seq_read_mb_s"),
        seq_write_mb_s: r.num("seq_write_mb_s"),
        rand_read_iops: r.num("rand_read_iops"),
        rand_write_iops: r.num("rand_write_iops"),
        read_latency_us: r.num("read_latency_us"),
        write_latency_us: r.num("write_latency_us"),
        parallelism: r.count("parallelism"),
        rpm: r.num("rpm"),
        outer_mb_s: r.num("outer_mb_s"),
        inner_mb_s: r.num("inner_mb_s"),
        zones: r.count("zones"),
        avg_seek_ms: r.num("avg_seek_ms"),
        track_to_track_ms: r.num("track_to_track_ms"),
        cmd_overhead_us: r.num("cmd_overhead_us"),
        cache_mib: r.num("cache_mib"),
        write_efficiency: r.num("write_efficiency"),
        write_cache_gb: r.num("write_cache_gb"),
        post_cache_write_mb_s: r.num("post_cache_write_mb_s"),
        cache_fold_mb_s: r.num("cache_fold_mb_s"),
        read_latency_p999_us: r.num("read_latency_p999_us"),
        write_cache: r.flag("write_cache"),
        smr: r.word("recording") == "smr",
        smr_cache_gb: r.num("smr_cache_gb"),
    }
}

/// A part's typed figures, its declared defaults filled in, for code that looks at a part
/// outside a loaded topology (a board's slot cards, `discover` matching what sysfs shows):
/// `None` for a link generation or a part whose figures do not resolve (the catalog and the
/// parts pass refuse such parts with their reasons).
pub fn spec_of(p: &Part) -> Option<PartSpec> {
    match p.kind {
        Kind::Link => None,
        k => resolve(k, &p.figures).ok().map(|r| r.spec),
    }
}

/// The figures of a link generation (a part of kind `link`).
pub fn generation_figures(p: &Part) -> GenerationFigures {
    let mut r =
        Reader { kind: Kind::Link, figures: &p.figures, class: None, defaults: BTreeMap::new(), missing: Vec::new() };
    GenerationFigures {
        line_gbps: r.num("line_gbps"),
        encoding: r.num("encoding"),
        frame_overhead_bytes: r.num("frame_overhead_bytes"),
        frame_payload_bytes: r.num("frame_payload_bytes"),
        handshake_bytes: r.num("handshake_bytes"),
        management_share: r.num("management_share"),
        command_overhead_bytes: r.num("command_overhead_bytes"),
        write_frame_extra_bytes: r.num("write_frame_extra_bytes"),
    }
}

/// The figures of a catalog part that it does not state and takes from defaults (those that
/// apply to it), for `iopath catalog PART`.
pub fn part_defaults(p: &Part) -> BTreeMap<String, Figure> {
    match p.kind {
        Kind::Link => {
            let mut r = Reader {
                kind: Kind::Link,
                figures: &p.figures,
                class: None,
                defaults: BTreeMap::new(),
                missing: Vec::new(),
            };
            for s in crate::catalog::FIGURES.iter().filter(|s| s.kind == Kind::Link) {
                let _ = r.value(s.name);
            }
            r.defaults
        }
        k => resolve(k, &p.figures).map(|r| r.defaults).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Accepts, FIGURES, FigureSpec, FigureType};

    /// A value the figure accepts, for a part that states only what it must.
    fn minimal(spec: &FigureSpec, class: &str) -> Value {
        match spec.accepts {
            Accepts::OneOf(_) if spec.name == "class" => Value::Str(class.into()),
            Accepts::OneOf(_) if spec.name == "interface" => {
                Value::Str(if class == "nvme" { "nvme" } else { "sata" }.into())
            }
            Accepts::OneOf(of) => Value::Str(of[0].into()),
            Accepts::Link { .. } => Value::Str("pcie3".into()),
            Accepts::Flag => Value::Bool(false),
            Accepts::IntegerOf(of) => Value::Num(of[0] as f64),
            Accepts::Number | Accepts::Integer => Value::Num(spec.range.0.max(1.0)),
        }
    }

    fn required_only(kind: Kind, class: &str) -> BTreeMap<String, Figure> {
        FIGURES
            .iter()
            .filter(|s| s.kind == kind && s.required)
            .map(|s| {
                let f =
                    Figure { value: minimal(s, class), source: "test: required only".into(), basis: "inferred".into() };
                (s.name.to_string(), f)
            })
            .collect()
    }

    #[test]
    fn every_figure_a_part_need_not_state_declares_a_default_with_a_reason() {
        for s in FIGURES {
            match (s.required, &s.default) {
                (true, None) => {}
                (true, Some(_)) => panic!("{}.{} is required and has a default", s.kind, s.name),
                (false, None) => panic!("{}.{} is optional and has no default", s.kind, s.name),
                (false, Some(d)) => {
                    assert!(d.reason.len() >= 20, "{}.{}: reason {:?} says too little", s.kind, s.name, d.reason)
                }
            }
            if let Some(DefaultValue::Share(_, _)) = s.default.map(|d| d.value) {
                assert_eq!(s.ty, FigureType::Num, "{}.{}: only a number is a share of another", s.kind, s.name);
            }
            if let Some(DefaultValue::SameAs(o) | DefaultValue::Share(o, _)) = s.default.map(|d| d.value) {
                let other =
                    figure_spec(s.kind, o).unwrap_or_else(|| panic!("{}.{}: default names {o:?}", s.kind, s.name));
                assert_eq!(other.ty, s.ty, "{}.{} follows {o}, a figure of another type", s.kind, s.name);
            }
        }
    }

    #[test]
    fn a_part_with_only_its_required_figures_resolves_with_every_other_one_marked_default() {
        let cases = [
            (Kind::Host, ""),
            (Kind::Switch, ""),
            (Kind::Controller, ""),
            (Kind::PortMultiplier, ""),
            (Kind::Expander, ""),
            (Kind::Nic, ""),
            (Kind::Drive, "ssd"),
            (Kind::Drive, "hdd"),
            (Kind::Drive, "nvme"),
        ];
        for (kind, class) in cases {
            let figures = required_only(kind, class);
            let r = resolve(kind, &figures).unwrap_or_else(|m| panic!("{kind} {class}: lacks {m:?}"));
            assert!(!format!("{:?}", r.spec).contains("NaN"), "{kind} {class}: a field was not filled: {:?}", r.spec);
            let cls = (kind == Kind::Drive).then_some(class);
            for s in FIGURES.iter().filter(|s| s.kind == kind && !s.required) {
                let shown = r.defaults.get(s.name);
                if s.applies_to(cls) {
                    let f = shown.unwrap_or_else(|| panic!("{kind} {class}: {} not marked as a default", s.name));
                    assert_eq!(f.basis, DEFAULT_BASIS);
                    assert_eq!(f.source, s.default.unwrap().reason);
                } else {
                    assert!(shown.is_none(), "{kind} {class}: {} does not apply but is shown", s.name);
                }
            }
            for s in FIGURES.iter().filter(|s| s.kind == kind && s.required) {
                assert!(!r.defaults.contains_key(s.name), "{kind}: required {} shown as a default", s.name);
            }
        }
    }

    #[test]
    fn a_stated_figure_is_used_and_defaults_that_follow_another_figure_follow_it() {
        let mut figures = required_only(Kind::Controller, "");
        let stated = |v: f64| Figure { value: Value::Num(v), source: "test: stated".into(), basis: "fit".into() };
        figures.insert("dma_read_efficiency".into(), stated(0.4));
        let r = resolve(Kind::Controller, &figures).unwrap();
        let c = r.spec.controller().unwrap();
        assert_eq!((c.dma_read_efficiency, c.dma_write_efficiency), (0.4, 0.4));
        assert!(!r.defaults.contains_key("dma_read_efficiency"));
        assert_eq!(r.defaults["dma_write_efficiency"].value, Value::Num(0.4));
        assert_eq!(c.sas_gen, 0, "no SAS generation stated: SATA only");
        assert!(!c.has_sas());

        let mut hdd = required_only(Kind::Drive, "hdd");
        hdd.insert("outer_mb_s".into(), stated(250.0));
        let d = resolve(Kind::Drive, &hdd).unwrap();
        assert_eq!(d.spec.drive().unwrap().inner_mb_s, 125.0);
        assert_eq!(d.spec.drive().unwrap().class, DriveClass::Hdd);
    }

    #[test]
    fn a_part_missing_a_required_figure_is_refused_by_name() {
        let mut figures = required_only(Kind::Expander, "");
        figures.remove("phys");
        assert_eq!(resolve(Kind::Expander, &figures).unwrap_err(), vec!["phys"]);
    }
}
