//! Host-level shared resources: the CPU cores that submit and complete I/O, and the IOMMU
//! that translates the DMA of devices passed through to a VM.
//!
//! - `host.cpu`: every I/O costs `cpu_per_io_us` of one core (system call, block layer,
//!   driver, completion interrupt); the host has `cpu_cores` of them, so a class of `bs`-byte
//!   I/Os costs `cpu_per_io_us / (cpu_cores x bs)` seconds per byte of the whole host's
//!   CPU time. Many fast drives at small blocks run out of cores before they run out of
//!   media or links, and the bottleneck is then named `host.cpu`.
//! - `host.iommu` (only where `iommu_walk_us > 0`, i.e. a host whose devices are passed
//!   through to a VM): streaming DMA into or out of a buffer larger than the IOTLB's reach
//!   misses once per mapped page, and each miss is a walk of the I/O page tables. The walker
//!   is shared by every passed-through device: a byte costs `iommu_walk_us /
//!   iommu_page_bytes` of it, in both directions.
//! - The read stall ([`iommu_read_stall_s_per_byte`]): a device writing read data into
//!   memory cannot post the write until its address is translated, so an SSD's read
//!   stream pauses for every walk. A disk write is the device *reading* memory, which it
//!   fetches ahead of the drive's need, so the walk is hidden (source 002: passthrough
//!   writes and HDD reads show no loss, SSD reads lose 5%). With 2 MiB mappings (huge pages
//!   backing the guest) there are 512 times fewer walks, which is why current passthrough
//!   results are near native.
//!
//! - `host.cpu.D` (per drive, where I/O costs CPU time): the thread of an fio job runs on
//!   one core, and with per-CPU queues its completions come back to that core, so a job's
//!   I/Os cost its one core `cpu_per_io_us` each: a drive driven by `numjobs` jobs gets at
//!   most `numjobs / cpu_per_io_us` I/Os per second (one job: 608K IOPS at 1.64 us, as the
//!   figure's source measured on one core). The simulator charges it with the workload's
//!   `numjobs` ([`ResourceGraph::job_cpu_cost`]); the closed-form bound, which knows no
//!   jobs, leaves it out and so stays an upper bound for any job count.
//!
//! A host resource joins every class into one component of the fluid allocation, which
//! makes the simulator re-solve all classes on every change (4x slower on the 1,024-drive
//! chassis). So a class is charged on it only where the resource can bind: when every
//! drive's link moving its raw rate (both directions where full duplex) would load it to
//! 1 or more at the class's block size. Below that its utilization stays under 1 whatever
//! the workload, and leaving it out changes no allocation.

use super::{Cost, Dir, ResourceGraph, Side};
use crate::parts::HostFigures;
use crate::topology::Topology;

/// The host resources of a graph, when the host has them.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(super) struct HostResources {
    cpu: Option<usize>,
    iommu: Option<usize>,
    /// Most bytes per second the drives' links can move together (an upper bound).
    max_bytes_per_s: f64,
    /// Per drive node: the core(s) of the jobs driving it, and its link's most bytes/s.
    jobs: Vec<Option<(usize, f64)>>,
}

impl HostResources {
    /// Adds `host.cpu` (when I/O costs CPU time) and `host.iommu` (when DMA is translated).
    pub(super) fn push(g: &mut ResourceGraph, t: &Topology) -> HostResources {
        let h = t.host_figures();
        let host = 0;
        let cpu = (h.cpu_per_io_us > 0.0).then(|| {
            // For display: the cores' budget in MB/s of 4 KiB I/Os.
            let nominal = h.cpu_cores / (h.cpu_per_io_us * 1e-6) * 4096.0 / 1e6;
            g.push("host.cpu".to_string(), host, Side::Internal, "cpu", nominal)
        });
        let iommu = (h.iommu_walk_us > 0.0).then(|| {
            let nominal = h.iommu_page_bytes / (h.iommu_walk_us * 1e-6) / 1e6;
            g.push("host.iommu".to_string(), host, Side::Internal, "iommu", nominal)
        });
        // Each drive's link at its raw rate, both directions where full duplex.
        let most =
            |d: usize| g.rates[d].map_or(f64::INFINITY, |r| r.raw_bytes_per_s * if r.half_duplex { 1.0 } else { 2.0 });
        let most: Vec<(usize, f64)> = t.drives.iter().map(|&d| (d, most(d))).collect();
        let max_bytes_per_s = most.iter().map(|&(_, m)| m).sum();
        let mut jobs = vec![None; t.nodes.len()];
        if h.cpu_per_io_us > 0.0 {
            for (d, most) in most {
                let id = format!("host.cpu.{}", t.nodes[d].id);
                jobs[d] = Some((g.push(id, host, Side::Internal, "cpu", f64::NAN), most));
            }
        }
        HostResources { cpu, iommu, max_bytes_per_s, jobs }
    }

    /// What one class of `bs`-byte I/Os costs the host's resources.
    pub(super) fn costs(&self, t: &Topology, bs: f64) -> impl Iterator<Item = Cost> + use<> {
        let h = t.host_figures();
        let max = self.max_bytes_per_s;
        let can_bind = move |c: &Cost| c.s_per_byte * max >= 1.0;
        let cpu = self.cpu.map(|r| Cost { resource: r, s_per_byte: cpu_s_per_byte(h, bs) });
        let iommu = self.iommu.map(|r| Cost { resource: r, s_per_byte: iommu_walk_s_per_byte(h) });
        cpu.into_iter().chain(iommu).filter(can_bind)
    }
}

/// Seconds of the whole host's CPU per byte of `bs`-byte I/Os.
pub fn cpu_s_per_byte(h: &HostFigures, bs: f64) -> f64 {
    h.cpu_per_io_us * 1e-6 / (h.cpu_cores * bs.max(1.0))
}

/// Seconds of the IOMMU's page walker per byte of DMA (0 when DMA is not translated).
pub fn iommu_walk_s_per_byte(h: &HostFigures) -> f64 {
    h.iommu_walk_us * 1e-6 / h.iommu_page_bytes
}

/// The pause of an SSD's read stream per byte for translating the pages it writes into
/// memory; nothing for writes (see the module documentation).
pub fn iommu_read_stall_s_per_byte(h: &HostFigures, dir: Dir) -> f64 {
    if dir == Dir::Read { iommu_walk_s_per_byte(h) } else { 0.0 }
}

impl ResourceGraph {
    /// What the jobs driving `drive` cost their cores per byte of `bs`-byte I/Os, `jobs` of
    /// them (`numjobs`): `None` where I/O costs no CPU time, or where even the drive's link
    /// at its raw rate could not keep the jobs' cores busy (then it cannot bind).
    pub fn job_cpu_cost(&self, t: &Topology, drive: usize, bs: u64, jobs: u32) -> Option<Cost> {
        let (resource, most) = self.host.jobs.get(drive).copied().flatten()?;
        let h = t.host_figures();
        let s_per_byte = h.cpu_per_io_us * 1e-6 / (f64::from(jobs.max(1)) * bs.max(1) as f64);
        (s_per_byte * most >= 1.0).then_some(Cost { resource, s_per_byte })
    }
}
