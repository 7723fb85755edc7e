//! The physics of a topology as shared resources and per-byte costs.
//!
//! Every element that data crosses becomes one or two [`Resource`]s, each with capacity
//! 1.0 (the whole of its time). A traffic class (one drive, one direction, one block size)
//! costs each resource on its path a number of *seconds per payload byte* ([`Cost`]):
//!
//! - a half-duplex SATA link is one resource that reads and writes share;
//! - a full-duplex link (PCIe, SAS) is two: `up` (towards the host: disk reads) and `down`;
//!   a disk write also costs its `up` a little (PCIe read requests);
//! - per-command protocol bytes and switching costs are spread over the command's bytes,
//!   so small blocks cost more per byte;
//! - an SSD's media is one resource whose cost is the slower of its sequential rate and its
//!   IOPS at the block size (random I/O);
//! - a controller with a command-rate limit gets a resource costing `1/(max_iops x bs)`;
//! - a SAS lane carrying a slower drive's connection is held at the connection's rate, so
//!   its bytes cost the lane more, up to the first expander that buffers (`store_forward`);
//! - a disk write costs its PCIe requester's outstanding-read resource (`X.rdreq`): tags x
//!   MRRS over the read round trip ([`crate::readreq`]);
//! - a SATA drive (SSD or HDD) behind an expander whose STP bridge paces writes gets an STP
//!   write-intake resource that only its writes use: the bridge paces the drive's write intake
//!   at `stp_write_efficiency` of its direct pace (an SSD's NAND write cost, an HDD's
//!   sustained media write rate) and adds a turnaround per write data FIS, while reads and
//!   the media they share are untouched. Whether it binds depends on the drive's rate;
//! - an FBS port multiplier's switch cost is not a class cost: it is paid only while two of
//!   its drives move data ([`ResourceGraph::fbs_switch_cost`]; the simulator adds it then);
//!
//! The closed-form bound ([`crate::bound`]) and the simulator both use these costs, so the
//! simulated throughput can never exceed the bound.

use crate::catalog::Kind;
use crate::link::{Family, LinkRates};
use crate::parts::{ExpanderFigures, Interface, PartSpec, PmSupport};
use crate::topology::{NodeIx, Topology};
use serde::Serialize;

mod host;
pub use host::{cpu_s_per_byte, iommu_read_stall_s_per_byte, iommu_walk_s_per_byte};

/// Direction of data for a traffic class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Dir {
    /// Drive to host (a disk read).
    Read,
    /// Host to drive (a disk write).
    Write,
}

/// Which side of a link a resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Side {
    /// Half duplex: one budget for both directions.
    Both,
    Up,
    Down,
    /// Not a link: a drive's media, a controller's command engine.
    Internal,
}

/// A shared element with capacity 1.0.
#[derive(Debug, Clone, Serialize)]
pub struct Resource {
    /// Report id: `hba.uplink`, `D.link`, `D.media`, `pm.upstream`, `hba.cmd`.
    pub id: String,
    pub node: NodeIx,
    pub side: Side,
    /// What it is, for reports: "pcie", "sata", "sas", "media", "command".
    pub kind: &'static str,
    /// Payload rate for 1 MiB reads (or writes for `Down`), for display [MB/s].
    pub nominal_mb_s: f64,
}

/// Seconds per payload byte a class costs one resource.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    pub resource: usize,
    pub s_per_byte: f64,
}

/// The resources of a topology, with per-node indices for quick lookup.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceGraph {
    pub resources: Vec<Resource>,
    /// For each node: its link resources (`[both]` or `[up, down]`), empty for the host.
    link_res: Vec<Vec<usize>>,
    /// For each drive node: its media resource.
    media_res: Vec<Option<usize>>,
    /// For each controller node: its command-rate resource, when it has a limit.
    cmd_res: Vec<Option<usize>>,
    /// For each SATA drive behind pacing STP bridges: its STP write-intake resource.
    stp_res: Vec<Option<usize>>,
    /// For each PCIe requester (NVMe drive, controller): its outstanding-read resource and
    /// the seconds per write byte it costs ([`crate::readreq`]).
    rdreq_res: Vec<Option<(usize, f64)>>,
    rates: Vec<Option<LinkRates>>,
    /// For each node on a SAS or SATA link: one lane's data rate [bytes/s] (the line rate
    /// less its encoding), which rate matching compares along a path.
    lane_bytes_per_s: Vec<Option<f64>>,
    /// The host's CPU and IOMMU resources (`paths/host.rs`).
    host: host::HostResources,
    /// NIC ports, client links and protocol processes ([`crate::net`]).
    pub(crate) net: crate::net::NetResources,
}

/// Per-class fixed latencies, outside any shared resource [us].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Latencies {
    /// Host software per I/O, submission and completion together.
    pub host_us: f64,
    /// Controller command processing, switch and expander hops, both ways.
    pub fabric_us: f64,
}

/// A resource's id, `a` then `b` (`d0` + `.link`): one exact allocation. Setup names several
/// resources per node: `format!` cost about 480 instructions a name, this about 270, most of
/// it the allocation (callgrind, the 1,024-drive example).
pub(crate) fn res_id(a: &str, b: &str) -> String {
    let mut s = String::with_capacity(a.len() + b.len());
    s.push_str(a);
    s.push_str(b);
    s
}

/// Largest data FIS payload: a write crosses STP in chunks of at most this size.
pub const FIS_BYTES: f64 = 8192.0;

impl ResourceGraph {
    pub fn new(t: &Topology) -> ResourceGraph {
        let n = t.nodes.len();
        let mut g = ResourceGraph {
            // Most nodes name a link or two and a drive its media; the host adds one CPU
            // resource per drive. Enough for most trees without regrowing.
            resources: Vec::with_capacity(2 * n + 2 * t.drives.len() + 8),
            link_res: vec![Vec::new(); n],
            media_res: vec![None; n],
            cmd_res: vec![None; n],
            stp_res: vec![None; n],
            rdreq_res: vec![None; n],
            rates: vec![None; n],
            lane_bytes_per_s: vec![None; n],
            host: Default::default(),
            net: Default::default(),
        };
        for (ix, node) in t.nodes.iter().enumerate() {
            if node.parent.is_none() {
                continue;
            }
            let link = node.link;
            if link.family != Family::Internal
                && let Some(gf) = t.generation(&link)
            {
                let r = link.rates(gf);
                g.rates[ix] = Some(r);
                if matches!(link.family, Family::Sas | Family::Sata) {
                    g.lane_bytes_per_s[ix] = Some(gf.line_gbps * gf.encoding / 8.0 * 1e9);
                }
                let id = node.id.as_str();
                let (name, kind) = match node.kind {
                    Kind::Drive => (res_id(id, ".link"), family_kind(link.family)),
                    Kind::PortMultiplier => (res_id(id, ".upstream"), "sata"),
                    _ => (res_id(id, ".uplink"), family_kind(link.family)),
                };
                if r.half_duplex {
                    let a = g.push(name, ix, Side::Both, kind, r.read_payload_bytes_per_s / 1e6);
                    g.link_res[ix].push(a);
                } else {
                    let up = g.push(res_id(&name, ".up"), ix, Side::Up, kind, r.read_payload_bytes_per_s / 1e6);
                    let down = g.push(res_id(&name, ".down"), ix, Side::Down, kind, r.write_payload_bytes_per_s / 1e6);
                    g.link_res[ix].extend([up, down]);
                }
            }
            match &node.spec {
                PartSpec::Drive(d) => {
                    let nominal = if d.is_hdd() { d.outer_mb_s } else { d.seq_read_mb_s };
                    g.media_res[ix] = Some(g.push(res_id(&node.id, ".media"), ix, Side::Internal, "media", nominal));
                    if stp_paces(t, ix) {
                        let nominal = stp_direct_pace_mb_s(d) * g.stp_write_efficiency(t, ix);
                        g.stp_res[ix] = Some(g.push(res_id(&node.id, ".stp"), ix, Side::Internal, "stp", nominal));
                    }
                }
                PartSpec::Controller(c) if c.max_iops.is_finite() => {
                    g.cmd_res[ix] = Some(g.push(res_id(&node.id, ".cmd"), ix, Side::Internal, "command", f64::NAN));
                }
                _ => {}
            }
        }
        g.push_request_paths(t);
        g.host = host::HostResources::push(&mut g, t);
        g.net = crate::net::push_resources(&mut g, t);
        g
    }

    /// One outstanding-read resource per PCIe requester (after every link's rates are known).
    fn push_request_paths(&mut self, t: &Topology) {
        for ix in 0..t.nodes.len() {
            if !crate::readreq::has_request_path(t, ix) {
                continue;
            }
            if let Some(rate) = crate::readreq::request_rate(t, ix, &self.rates) {
                let id = res_id(&t.nodes[ix].id, ".rdreq");
                let res = self.push(id, ix, Side::Internal, "pcie-reads", rate / 1e6);
                self.rdreq_res[ix] = Some((res, 1.0 / rate));
            }
        }
    }

    pub(crate) fn push(
        &mut self,
        id: String,
        node: NodeIx,
        side: Side,
        kind: &'static str,
        nominal_mb_s: f64,
    ) -> usize {
        self.resources.push(Resource { id, node, side, kind, nominal_mb_s });
        self.resources.len() - 1
    }

    /// The link capacities of a node's link to its parent.
    pub fn link_rates(&self, node: NodeIx) -> Option<&LinkRates> {
        self.rates[node].as_ref()
    }

    pub fn media_resource(&self, drive: NodeIx) -> Option<usize> {
        self.media_res[drive]
    }

    /// Resources of one node's link to its parent.
    pub fn link_resources(&self, node: NodeIx) -> &[usize] {
        &self.link_res[node]
    }

    /// What a class costs each resource on its path, for `bs`-byte commands.
    ///
    /// `include_hdd_media`: the bound includes an HDD's outer-zone media rate; the simulator
    /// models HDD mechanics itself and leaves it out.
    pub fn class_costs(
        &self,
        t: &Topology,
        drive: NodeIx,
        dir: Dir,
        bs: u64,
        random: bool,
        include_hdd_media: bool,
    ) -> Vec<Cost> {
        let bs = bs.max(1) as f64;
        // Room for a drive behind a few expanders and its host's terms in one allocation.
        let mut out = Vec::with_capacity(12);
        let d = t.drive_figures(drive);
        let path = t.path_to_host(drive);
        let n_fis = (bs / FIS_BYTES).ceil();

        // Media.
        if let Some(m) = self.media_res[drive] {
            let cost = if d.is_hdd() {
                if include_hdd_media {
                    let rate = d.outer_mb_s * 1e6 * if dir == Dir::Write { d.write_efficiency } else { 1.0 };
                    Some(1.0 / rate)
                } else {
                    None
                }
            } else {
                let (seq, iops) = match dir {
                    Dir::Read => (d.seq_read_mb_s, d.rand_read_iops),
                    Dir::Write => (d.seq_write_mb_s, d.rand_write_iops),
                };
                let mut c = 1.0 / (seq * 1e6);
                if random {
                    c = c.max(1.0 / (iops * bs));
                }
                // A device passed through to a VM writes read data into guest memory through
                // the IOMMU; the SSD's read stream stalls for every page it translates.
                c += iommu_read_stall_s_per_byte(t.host_figures(), dir);
                Some(c)
            };
            if let Some(c) = cost {
                out.push(Cost { resource: m, s_per_byte: c });
            }
            // Behind expanders, the STP bridge paces a SATA drive's write intake and adds a
            // turnaround per data FIS; the media behind it (shared with reads) is not slowed.
            if dir == Dir::Write
                && let Some(stp) = self.stp_res[drive]
            {
                // The drive's own write pace: an SSD's media cost for this class; an HDD's
                // sustained write rate (with a full write cache it takes data at that pace).
                let direct = match cost {
                    Some(c) if !d.is_hdd() => c,
                    _ => 1.0 / (stp_direct_pace_mb_s(d) * 1e6),
                };
                let eff: f64 = stp_expanders(t, drive).map(|e| e.stp_write_efficiency).product();
                let turnaround_us: f64 = stp_expanders(t, drive).map(|e| e.stp_write_turnaround_us).sum();
                out.push(Cost { resource: stp, s_per_byte: direct / eff + n_fis * turnaround_us * 1e-6 / bs });
            }
        }

        // Writes: the requester's outstanding memory reads ([`crate::readreq`]).
        if dir == Dir::Write
            && let Some((res, c)) = crate::readreq::requester_of(t, drive).and_then(|r| self.rdreq_res[r])
        {
            out.push(Cost { resource: res, s_per_byte: c });
        }

        self.link_costs(t, &path, dir, bs, &mut out);
        out.extend(self.host.costs(t, bs));
        out
    }

    /// What a class costs the links from the drive up to the host, and the command engines
    /// of the controllers on them (`path`: the drive, then each node above it).
    /// `conn`: the per-lane rate of the drive's SAS connection as far up as it is not re-timed
    /// by a store-and-forward expander.
    fn link_costs(&self, t: &Topology, path: &[NodeIx], dir: Dir, bs: f64, out: &mut Vec<Cost>) {
        let controller = path.iter().find_map(|&ix| t.nodes[ix].spec.controller());
        let mut conn = f64::INFINITY;
        for &ix in path {
            let node = &t.nodes[ix];
            if node.spec.expander().is_some_and(|e| e.store_forward) {
                conn = f64::INFINITY;
            }
            let Some(r) = self.rates[ix] else { continue };
            let res = &self.link_res[ix];
            let raw = r.raw_bytes_per_s;
            let cmd = r.command_overhead_bytes / (raw * bs);
            // A SAS lane carrying a slower connection is held at the connection's rate
            // (rate matching): its bytes cost the lane lane/conn times their own time.
            let mut rate_match = 1.0;
            if let Some(lane) = self.lane_bytes_per_s[ix] {
                if node.link.family == Family::Sas && conn < lane {
                    rate_match = lane / conn;
                }
                conn = conn.min(lane);
            }
            let first = out.len();
            match &node.spec {
                PartSpec::Drive(_) if r.half_duplex => {
                    // A drive's port without a controller above it (none in a loaded
                    // topology: SATA and SAS drives attach below one) loses nothing.
                    let (pe, payload) = match dir {
                        Dir::Read => (controller.map_or(1.0, |c| c.port_read_efficiency), r.read_payload_bytes_per_s),
                        Dir::Write => {
                            (controller.map_or(1.0, |c| c.port_write_efficiency), r.write_payload_bytes_per_s)
                        }
                    };
                    // Behind a port multiplier the drive's FISes are relayed by the PM.
                    let relay = node
                        .parent
                        .and_then(|p| t.nodes[p].spec.port_multiplier())
                        .map_or(1.0, |pm| pm.downstream_efficiency);
                    out.push(Cost { resource: res[0], s_per_byte: 1.0 / (payload * pe * relay) + cmd });
                }
                PartSpec::PortMultiplier(pm) => {
                    let payload = match dir {
                        Dir::Read => r.read_payload_bytes_per_s,
                        Dir::Write => r.write_payload_bytes_per_s,
                    };
                    // FBS switching is paid only while another drive moves data: not a
                    // cost of the class alone (`fbs_switch_cost`).
                    out.push(Cost { resource: res[0], s_per_byte: 1.0 / (payload * pm.upstream_efficiency) + cmd });
                }
                _ if r.half_duplex => {
                    let payload =
                        if dir == Dir::Read { r.read_payload_bytes_per_s } else { r.write_payload_bytes_per_s };
                    out.push(Cost { resource: res[0], s_per_byte: 1.0 / payload + cmd });
                }
                _ => {
                    // Only a controller's DMA engine has an efficiency of its own.
                    let (re, we) =
                        node.spec.controller().map_or((1.0, 1.0), |c| (c.dma_read_efficiency, c.dma_write_efficiency));
                    match dir {
                        Dir::Read => out
                            .push(Cost { resource: res[0], s_per_byte: 1.0 / (r.read_payload_bytes_per_s * re) + cmd }),
                        Dir::Write => {
                            out.push(Cost {
                                resource: res[1],
                                s_per_byte: 1.0 / (r.write_payload_bytes_per_s * we) + cmd,
                            });
                            if r.write_reverse_bytes_per_byte > 0.0 {
                                out.push(Cost { resource: res[0], s_per_byte: r.write_reverse_bytes_per_byte / raw });
                            }
                        }
                    }
                }
            }
            for c in &mut out[first..] {
                c.s_per_byte *= rate_match;
            }
            if let (Some(c), Some(ctrl)) = (self.cmd_res[ix], node.spec.controller()) {
                out.push(Cost { resource: c, s_per_byte: 1.0 / (ctrl.max_iops * bs) });
            }
        }
    }

    /// The switch term of an FBS port multiplier above `drive`: the extra cost per byte on
    /// the multiplier's upstream while FISes of another of its drives share it, one
    /// `switch_cost_us` per `bs`-byte command. `None` without a multiplier, or under CBS
    /// (which switches between queues, `cbs_handover_us`, not between FISes).
    pub fn fbs_switch_cost(&self, t: &Topology, drive: NodeIx, bs: u64) -> Option<Cost> {
        let ix = t.up_from(drive).find(|&ix| t.nodes[ix].kind == Kind::PortMultiplier)?;
        let pm = t.nodes[ix].spec.port_multiplier()?;
        let up = *self.link_res[ix].first()?;
        pm_uses_fbs(t, ix).then(|| Cost { resource: up, s_per_byte: pm.switch_cost_us * 1e-6 / bs.max(1) as f64 })
    }

    /// STP turnaround per write data FIS for a SATA drive behind expanders [us].
    pub fn stp_turnaround_us(&self, t: &Topology, drive: NodeIx) -> f64 {
        stp_expanders(t, drive).map(|e| e.stp_write_turnaround_us).sum()
    }

    /// Pace of a SATA drive's write intake through the STP bridges of the expanders above it,
    /// as a fraction of its direct pace (1 without expanders, or for SAS and NVMe drives).
    pub fn stp_write_efficiency(&self, t: &Topology, drive: NodeIx) -> f64 {
        stp_expanders(t, drive).map(|e| e.stp_write_efficiency).product()
    }

    /// An SSD write class's costs once its SLC write cache is full: the drive programs
    /// TLC/QLC directly at `post_cache_write_mb_s`, so its media cost (and the STP intake
    /// that paces the same writes) grows by `seq_write_mb_s / post_cache_write_mb_s`; the
    /// links are untouched. `cached` are the class's costs with the cache ([`Self::class_costs`]).
    pub fn post_cache_costs(&self, t: &Topology, drive: NodeIx, cached: &[Cost]) -> Vec<Cost> {
        let d = t.drive_figures(drive);
        let slow = (d.seq_write_mb_s / d.post_cache_write_mb_s).max(1.0);
        let media = self.media_res[drive];
        let media_cost = cached.iter().find(|c| Some(c.resource) == media).map_or(0.0, |c| c.s_per_byte);
        let eff = self.stp_write_efficiency(t, drive);
        cached
            .iter()
            .map(|c| {
                let s_per_byte = if Some(c.resource) == media {
                    c.s_per_byte * slow
                } else if Some(c.resource) == self.stp_res[drive] {
                    // The intake paces the media's write time: it grows by the same time / eff.
                    c.s_per_byte + media_cost * (slow - 1.0) / eff
                } else {
                    c.s_per_byte
                };
                Cost { resource: c.resource, s_per_byte }
            })
            .collect()
    }

    /// The note `check` gives for a drive whose write rate depends on how much it has written:
    /// the bound uses the cached rate (the highest the drive can do; a bound must not be beaten
    /// by a short run), and the note gives the sustained rate beyond the cache.
    pub fn write_cache_note(t: &Topology, drive: NodeIx) -> Option<String> {
        let d = t.drive_figures(drive);
        if d.write_cache_gb > 0.0 && d.post_cache_write_mb_s < d.seq_write_mb_s {
            return Some(format!(
                "writes run at {} MB/s into a {} GB SLC cache (the bound's rate); a sustained write beyond {} GB falls to {} MB/s, and the cache empties at {} MB/s while the drive is idle",
                d.seq_write_mb_s, d.write_cache_gb, d.write_cache_gb, d.post_cache_write_mb_s, d.cache_fold_mb_s
            ));
        }
        (d.smr && d.smr_cache_gb > 0.0).then(|| {
            format!(
                "drive-managed SMR: random writes are logged into a {} GB media cache; beyond it each byte needs a shingled band rewritten, and random writes over the whole drive fall to about {:.2} MB/s (cache x media rate / (2 x span)); sequential writes fill bands directly",
                d.smr_cache_gb,
                d.smr_cache_gb * 1e9 * (d.outer_mb_s + d.inner_mb_s) / 2.0 * d.write_efficiency / (2.0 * d.capacity_gb * 1e9)
            )
        })
    }

    /// Fixed latencies of a drive's path (both ways), outside shared resources.
    pub fn latencies(&self, t: &Topology, drive: NodeIx) -> Latencies {
        let host_us = t.host_figures().io_overhead_us;
        let mut fabric_us = 0.0;
        for ix in t.up_from(drive) {
            fabric_us += match &t.nodes[ix].spec {
                PartSpec::Controller(c) => c.cmd_overhead_us,
                PartSpec::Switch(s) => 2.0 * s.hop_latency_us,
                PartSpec::Expander(e) => 2.0 * e.hop_latency_us,
                _ => 0.0,
            };
        }
        Latencies { host_us, fabric_us }
    }
}

/// The expanders on a drive's path up to the host, when the drive is SATA and so crosses
/// them over STP; none for SAS and NVMe drives.
fn stp_expanders(t: &Topology, drive: NodeIx) -> impl Iterator<Item = &ExpanderFigures> + '_ {
    let sata = t.nodes[drive].spec.drive().is_some_and(|d| d.interface == Interface::Sata);
    t.up_from(drive).filter(move |_| sata).filter_map(move |ix| t.nodes[ix].spec.expander())
}

/// Whether a SATA drive's writes are paced by the STP bridges of the expanders above it:
/// some expander on its path has a write pacing or turnaround (SSDs and HDDs alike).
fn stp_paces(t: &Topology, drive: NodeIx) -> bool {
    stp_expanders(t, drive).any(|e| e.stp_write_efficiency < 1.0 || e.stp_write_turnaround_us > 0.0)
}

/// A SATA drive's direct sustained write pace [MB/s], the rate the STP bridge paces: an SSD's
/// sequential write rate; an HDD's outer-zone media rate times its write efficiency.
fn stp_direct_pace_mb_s(d: &crate::parts::DriveFigures) -> f64 {
    if d.is_hdd() { d.outer_mb_s * d.write_efficiency } else { d.seq_write_mb_s }
}

/// Whether a port multiplier switches by FIS: it is capable, it is on, and its controller
/// supports FBS. Otherwise it switches by command (CBS).
pub fn pm_uses_fbs(t: &Topology, pm: NodeIx) -> bool {
    let n = &t.nodes[pm];
    let ctrl_fbs = n.parent.and_then(|p| t.nodes[p].spec.controller()).is_some_and(|c| c.pm_support == PmSupport::Fbs);
    n.spec.port_multiplier().is_some_and(|p| p.fbs_capable && p.fbs) && ctrl_fbs
}

fn family_kind(f: Family) -> &'static str {
    match f {
        Family::Sata => "sata",
        Family::Sas => "sas",
        Family::Pcie => "pcie",
        Family::Internal => "internal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;

    /// A SAS3008 HBA with an expander on its port 0 (over `uplink`), and the `drives` tables.
    fn behind_expander(expander: &str, uplink: &str, drives: &str) -> Topology {
        let text = format!(
            r#"
[host]
part = "intel-xeon-sp"
[[node]]
id = "hba"
part = "lsi-sas3008"
parent = "host"
[[node]]
id = "exp"
part = "{expander}"
parent = "hba"
port = 0
link = "{uplink}"
{drives}"#
        );
        Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap()
    }

    /// One D3-S4610 behind a SAS3x28 expander, one straight on the HBA.
    fn expander_topology() -> Topology {
        let drives = r#"
[[drive]]
id = "ssd"
part = "intel-d3-s4610-960"
parent = "exp"
port = 0
[[drive]]
id = "direct"
part = "intel-d3-s4610-960"
parent = "hba"
port = 1
"#;
        behind_expander("broadcom-sas3x28", "sas3x4", drives)
    }

    fn ix(t: &Topology, id: &str) -> NodeIx {
        t.nodes.iter().position(|n| n.id == id).unwrap()
    }

    #[test]
    fn stp_intake_paces_only_writes_of_sata_ssds_behind_expanders() {
        let t = expander_topology();
        let g = ResourceGraph::new(&t);
        let stp: Vec<_> = g.resources.iter().filter(|r| r.kind == "stp").map(|r| r.id.as_str()).collect();
        assert_eq!(stp, ["ssd.stp"], "only the SATA SSD behind the expander gets an STP intake");
        let stp = g.resources.iter().position(|r| r.id == "ssd.stp").unwrap();
        let cost = |drive: &str, dir: Dir, bs: u64| g.class_costs(&t, ix(&t, drive), dir, bs, false, true);
        assert!(cost("ssd", Dir::Read, 1 << 20).iter().all(|c| c.resource != stp), "reads skip the STP intake");
        let media = g.media_resource(ix(&t, "ssd")).unwrap();
        let w = cost("ssd", Dir::Write, 1 << 20);
        let of = |r: usize| w.iter().find(|c| c.resource == r).unwrap().s_per_byte;
        // The intake is slower than the media by the bridge's pace, plus a turnaround per FIS,
        // and the media itself is what it is without the expander.
        let e = g.stp_write_efficiency(&t, ix(&t, "ssd"));
        let turn = g.stp_turnaround_us(&t, ix(&t, "ssd")) * 1e-6 / FIS_BYTES;
        assert!(e < 1.0);
        assert!((of(stp) - (of(media) / e + turn)).abs() < 1e-15);
        let direct = cost("direct", Dir::Write, 1 << 20);
        let direct_media = g.media_resource(ix(&t, "direct")).unwrap();
        assert_eq!(direct.iter().find(|c| c.resource == direct_media).unwrap().s_per_byte, of(media));
    }

    #[test]
    fn an_hdd_behind_a_pacing_stp_bridge_pays_it_on_writes() {
        // A SATA HDD behind the SAS3x28 (store-and-forward, fitted STP pacing 0.86 and 0.5 us
        // per data FIS, source 004's fit) and one behind a SAS2x36 (no pacing modelled).
        let hdds = |exp: &str| {
            let drives = r#"
[[drive]]
id = "hdd"
part = "seagate-ironwolf-8tb"
parent = "exp"
port = 0
"#;
            behind_expander(exp, "sas3x4", drives)
        };
        let t = hdds("broadcom-sas3x28");
        let g = ResourceGraph::new(&t);
        let stp = g.resources.iter().position(|r| r.id == "hdd.stp").expect("an STP intake for the HDD");
        let d = ix(&t, "hdd");
        let w = g.class_costs(&t, d, Dir::Write, 1 << 20, false, true);
        let on_stp = w.iter().find(|c| c.resource == stp).expect("writes cross it").s_per_byte;
        // Expected from the figures: the IronWolf's sustained write pace is its outer-zone
        // rate times its write efficiency (210 MB/s x e_w); the bridge takes it at 0.86 of
        // that, plus 0.5 us per 8 KiB data FIS: 1 MiB = 128 FISes.
        let f = t.drive_figures(d);
        let pace = 210e6 * f.write_efficiency;
        let expected = 1.0 / (pace * 0.86) + 128.0 * 0.5e-6 / 1048576.0;
        assert!((on_stp / expected - 1.0).abs() < 1e-9, "{on_stp} vs {expected}");
        // It binds for a sequential write (its cost exceeds the media's), so the bound is
        // the bridge's: 0.86 x the media rate, minus the turnarounds.
        let media = w.iter().find(|c| Some(c.resource) == g.media_resource(d)).unwrap().s_per_byte;
        assert!(on_stp > media);
        assert!(g.class_costs(&t, d, Dir::Read, 1 << 20, false, true).iter().all(|c| c.resource != stp));
        // Behind a SAS2 expander (not store-and-forward, no pacing) there is no intake.
        let t = hdds("lsi-sas2x36");
        assert!(ResourceGraph::new(&t).resources.iter().all(|r| r.kind != "stp"));
    }

    /// Two drives on an expander, one at `link`: the expander's uplink cost per byte of each.
    fn uplink_costs(expander: &str, link: &str) -> (f64, f64) {
        let drives = format!(
            r#"
[[drive]]
id = "slow"
part = "intel-d3-s4610-960"
parent = "exp"
port = 4
link = "{link}"
[[drive]]
id = "fast"
part = "intel-d3-s4610-960"
parent = "exp"
port = 5
"#
        );
        let t = behind_expander(expander, "sas2x4", &drives);
        let g = ResourceGraph::new(&t);
        let up = g.link_resources(ix(&t, "exp"))[0];
        let cost = |d: &str| {
            g.class_costs(&t, ix(&t, d), Dir::Read, 1 << 20, false, true)
                .iter()
                .find(|c| c.resource == up)
                .unwrap()
                .s_per_byte
        };
        (cost("slow"), cost("fast"))
    }

    #[test]
    fn a_slower_connection_holds_an_unbuffered_lane_at_its_own_rate() {
        // SAS2 expander (no store-and-forward): a 3 Gb/s drive holds a 6 Gb/s lane twice as
        // long per byte as a 6 Gb/s drive does.
        let (slow, fast) = uplink_costs("lsi-sas2x36", "sata2");
        assert!((slow / fast - 2.0).abs() < 1e-9, "{slow} vs {fast}");
        // The same drives behind a buffering expander cost the lane alike.
        let (slow, fast) = uplink_costs("broadcom-sas3x28", "sata2");
        assert_eq!(slow, fast);
    }
}
