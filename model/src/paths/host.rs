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
//! - CPU work per byte (`cpu.rs`: checksums, parity, encryption, compression of a pool's
//!   logical I/O) is charged on `host.cpu` too, the same cores ([`ResourceGraph::cpu_work_cost`]);
//!   on a host whose I/O costs no CPU time (`cpu_per_io_us = 0`) `host.cpu` is still pushed,
//!   after every other resource, so that work has somewhere to go. No class without CPU
//!   work is charged on it for that, so no existing allocation changes.
//!
//! A host resource joins every class into one component of the fluid allocation, which
//! makes the simulator re-solve all classes on every change and keeps a saturated HBA's
//! classes from being served as one group while another HBA's change. So a class is charged
//! on it only where the resource can bind: when the most the drives can move to the host
//! together would load it to 1 or more at the class's block size. That most is a cut of the
//! topology's tree ([`tree_most`]): every node passes at most its own link's raw rate (both
//! directions where full duplex) and at most what its children pass it, so four HBAs on
//! PCIe 3.0 x8 move at most 4 x 2 x 7.9 GB/s however many drives hang below them. Below 1
//! the resource's utilization stays under 1 whatever the workload, and leaving it out
//! changes no allocation (`tests`: the max-min rates with and without it agree).

use super::{Cost, Dir, ResourceGraph, Side, res_id};
use crate::cpu::Kernel;
use crate::parts::HostFigures;
use crate::topology::Topology;

/// The host resources of a graph, when the host has them.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(super) struct HostResources {
    cpu: Option<usize>,
    iommu: Option<usize>,
    /// Where CPU work per byte is charged: `host.cpu` (pushed for it where I/O costs none).
    work: usize,
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
        let max_bytes_per_s = tree_most(t, &g.rates);
        let mut jobs = vec![None; t.nodes.len()];
        if h.cpu_per_io_us > 0.0 {
            for (d, most) in most {
                let id = res_id("host.cpu.", &t.nodes[d].id);
                jobs[d] = Some((g.push(id, host, Side::Internal, "cpu", f64::NAN), most));
            }
        }
        // CPU work (checksums, parity, ...) is charged on `host.cpu`; a host whose I/O costs
        // no CPU time gets the resource anyway, last, so no other index moves.
        let work = cpu.unwrap_or_else(|| g.push("host.cpu".to_string(), host, Side::Internal, "cpu", f64::NAN));
        HostResources { cpu, iommu, work, max_bytes_per_s, jobs }
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

/// Most bytes per second the drives can move to and from the host together: a node passes
/// at most its own link's raw rate (both directions where full duplex) and at most what the
/// nodes below it pass up to it; a drive passes its own link's. Every class's cost per byte
/// on a link is at least `1 / raw` (payload rates are below the raw rate), so the links of
/// any set of nodes that separates the drives from the host bound what all classes move
/// together, and this is the least such bound the tree gives. A node whose link has no
/// modelled rate (internal) passes what its children pass; a drive without one, unbounded.
pub(crate) fn tree_most(t: &Topology, rates: &[Option<crate::link::LinkRates>]) -> f64 {
    let n = t.nodes.len();
    let own =
        |ix: usize| rates[ix].map_or(f64::INFINITY, |r| r.raw_bytes_per_s * if r.half_duplex { 1.0 } else { 2.0 });
    let depth: Vec<usize> = (0..n).map(|ix| t.path_to_host(ix).len()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&ix| std::cmp::Reverse(depth[ix]));
    let mut below = vec![0.0f64; n];
    let mut total = 0.0;
    for ix in order {
        let node = &t.nodes[ix];
        let from = if node.is_drive() { f64::INFINITY } else { below[ix] };
        let pass = own(ix).min(from);
        match node.parent {
            Some(p) => below[p] += pass,
            None => total += below[ix],
        }
    }
    total
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
    /// What `bytes_per_member_byte` bytes of kernel `k` per byte of a class cost the host's
    /// cores (`host.cpu`), [`crate::cpu::kernel_s_per_byte`] each: the extra cost a pool's
    /// member class carries for the checksums, parity, encryption or compression of the
    /// logical I/O it serves. `None` where there is no such work (no bytes, or a rate the
    /// host states as unbounded).
    pub fn cpu_work_cost(&self, t: &Topology, k: Kernel, bytes_per_member_byte: f64) -> Option<Cost> {
        let s_per_byte = crate::cpu::kernel_s_per_byte(t, k) * bytes_per_member_byte;
        (s_per_byte.is_finite() && s_per_byte > 0.0).then_some(Cost { resource: self.host.work, s_per_byte })
    }

    /// What the jobs driving `drive` cost their cores per byte of `bs`-byte I/Os, `jobs` of
    /// them (`numjobs`): `None` where I/O costs no CPU time, or where even the drive's link
    /// at its raw rate could not keep the jobs' cores busy (then it cannot bind).
    pub fn job_cpu_cost(&self, t: &Topology, drive: usize, bs: u64, jobs: u32) -> Option<Cost> {
        let (resource, most) = self.host.jobs.get(drive).copied().flatten()?;
        let h = t.host_figures();
        let s_per_byte = h.cpu_per_io_us * 1e-6 / (f64::from(jobs.max(1)) * bs.max(1) as f64);
        (s_per_byte * most >= 1.0).then_some(Cost { resource, s_per_byte })
    }

    /// What a pool's jobs cost their cores per member byte: each of the `jobs` (`numjobs`)
    /// submits and completes its logical I/Os of `bs` bytes on its own core
    /// (`cpu_per_io_us` each, as a per-drive job does), and a member byte of this direction
    /// carries `logical_per_member` logical bytes. One resource stands for the pool's job
    /// cores, the first member's (`host.cpu.FIRST`); `None` where I/O costs no CPU time or
    /// where every member's link at its raw rate could not keep those cores busy.
    pub fn pool_job_cpu_cost(
        &self,
        t: &Topology,
        members: &[usize],
        bs: u64,
        jobs: u32,
        logical_per_member: f64,
    ) -> Option<Cost> {
        let (resource, _) = self.host.jobs.get(*members.first()?).copied().flatten()?;
        let most: f64 = members.iter().filter_map(|&d| self.host.jobs.get(d).copied().flatten()).map(|(_, m)| m).sum();
        let h = t.host_figures();
        let s_per_byte = h.cpu_per_io_us * 1e-6 / (f64::from(jobs.max(1)) * bs.max(1) as f64) * logical_per_member;
        (s_per_byte > 0.0 && s_per_byte * most >= 1.0).then_some(Cost { resource, s_per_byte })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;
    use crate::bound::max_min;

    /// `n` Samsung 990 PRO NVMe drives on their own PCIe 4.0 x4 root ports of a host with
    /// `params` set.
    fn nvme(n: usize, params: &str) -> Topology {
        let mut s = format!("[host]\npart = \"generic-host\"\nparams = {{ {params} }}\n");
        for i in 0..n {
            s.push_str(&format!(
                "[[drive]]\nid = \"n{i}\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\nlink = \"pcie4x4\"\n"
            ));
        }
        Topology::parse("t.toml", &s, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Four 990 PRO read 1 MiB blocks, each hashed with SHA-256 on a host of 2 cores at 1,000
    /// MB/s each. Each drive alone moves ~7,130 MB/s (its PCIe 4.0 x4 link at MPS 256, see
    /// tests/physics/host.rs), 28,500 MB/s together; the cores hash 2 x 1,000 = 2,000 MB/s.
    /// Expected: 2,000 MB/s in total, 500 MB/s per drive, bound by `host.cpu` at
    /// utilization 1. `cpu_per_io_us = 0` leaves the per-I/O cost out, so the work alone
    /// is checked (and `host.cpu` must exist for it all the same).
    #[test]
    fn cpu_work_binds_a_pool_whose_drives_outrun_its_cores() {
        let t = nvme(4, "cpu_cores = 2, cpu_sha256_mb_s = 1000, cpu_per_io_us = 0");
        let g = ResourceGraph::new(&t);
        let cpu = g.resources.iter().position(|r| r.id == "host.cpu").expect("host.cpu exists for CPU work");
        assert_eq!(cpu, g.resources.len() - 1, "pushed last where I/O costs no CPU time");
        let flows: Vec<Vec<Cost>> = t
            .drives
            .iter()
            .map(|&d| {
                let mut c = g.class_costs(&t, d, Dir::Read, 1 << 20, false, true);
                assert!(c.iter().all(|c| c.resource != cpu), "no CPU cost without CPU work");
                c.push(g.cpu_work_cost(&t, Kernel::Sha256, 1.0).expect("a cost"));
                c
            })
            .collect();
        let a = max_min(&flows, g.resources.len(), &[]);
        let total: f64 = a.rates.iter().sum();
        assert!((total / 1e6 - 2000.0).abs() < 1.0, "{total}");
        for r in &a.rates {
            assert!((r / 1e6 - 500.0).abs() < 0.5, "{r}");
        }
        assert!((a.util[cpu] - 1.0).abs() < 1e-9);
        assert!(a.binding.iter().all(|&b| b == Some(cpu)));
    }

    /// With fast cores the drives' links bind instead: 2 cores at 100,000 MB/s hash
    /// 200,000 MB/s, far above the ~28,500 MB/s the four links move, so the CPU is used
    /// 28,500 / 200,000 = 14% (plus 0.1% for the I/Os) and binds nothing.
    #[test]
    fn cpu_work_does_not_bind_fast_cores() {
        let t = nvme(4, "cpu_cores = 2, cpu_sha256_mb_s = 100000");
        let g = ResourceGraph::new(&t);
        let cpu = g.resources.iter().position(|r| r.id == "host.cpu").unwrap();
        let flows: Vec<Vec<Cost>> = t
            .drives
            .iter()
            .map(|&d| {
                let mut c = g.class_costs(&t, d, Dir::Read, 1 << 20, false, true);
                c.extend(g.cpu_work_cost(&t, Kernel::Sha256, 1.0));
                c
            })
            .collect();
        let a = max_min(&flows, g.resources.len(), &[]);
        assert!(a.binding.iter().all(|&b| b != Some(cpu)));
        let total: f64 = a.rates.iter().sum();
        assert!(a.util[cpu] < 0.2 && a.util[cpu] > 0.1, "{} at {total}", a.util[cpu]);
    }

    /// Five SATA SSDs behind a JMB585 held to PCIe 2.0 x1 (500 MB/s raw each way), on a host
    /// of one core: the drives' own links could move 5 x 600 = 3,000 MB/s, the card's link at
    /// most 2 x 500 = 1,000 MB/s. At 128 KiB a core that completes 2,000 MB/s of I/Os cannot
    /// bind behind that card, so no class is charged on `host.cpu` (and the classes of
    /// separate cards would stay separate components); one that completes 800 MB/s can, and
    /// is charged. Either way, the max-min rates with the cost forced in equal those without
    /// it where it cannot bind.
    #[test]
    fn host_cpu_is_charged_only_where_the_tree_can_load_it_to_one() {
        let topo = |cpu_mb_s: f64| {
            let us = 131_072.0 / (cpu_mb_s * 1e6) * 1e6;
            let s = format!(
                "[host]\npart = \"generic-host\"\nparams = {{ cpu_cores = 1, cpu_per_io_us = {us} }}\n\
                 [[node]]\nid = \"hba\"\npart = \"jmb585\"\nparent = \"host\"\nlink = \"pcie2x1\"\n\
                 [[drive]]\nid = \"d\"\ncount = 5\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\n"
            );
            Topology::parse("t.toml", &s, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
        };
        let t = topo(2000.0);
        let g = ResourceGraph::new(&t);
        let raw = g.rates[t.nodes.iter().position(|n| n.id == "hba").unwrap()].unwrap().raw_bytes_per_s;
        assert!((tree_most(&t, &g.rates) - 2.0 * raw).abs() < 1.0, "{} vs {raw}", tree_most(&t, &g.rates));
        let drive_links: f64 = t.drives.iter().map(|&d| g.rates[d].unwrap().raw_bytes_per_s).sum();
        assert!(drive_links > 2.5 * raw, "the drives' links alone would let the CPU bind");
        let cpu = g.resources.iter().position(|r| r.id == "host.cpu").unwrap();
        let costs = |g: &ResourceGraph, t: &Topology| -> Vec<Vec<Cost>> {
            t.drives.iter().map(|&d| g.class_costs(t, d, Dir::Read, 131_072, false, true)).collect()
        };
        let flows = costs(&g, &t);
        assert!(flows.iter().all(|f| f.iter().all(|c| c.resource != cpu)), "host.cpu cannot bind: left out");
        // Forced in, it changes no rate and stays under 1.
        let forced: Vec<Vec<Cost>> = flows
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.push(Cost { resource: cpu, s_per_byte: cpu_s_per_byte(t.host_figures(), 131_072.0) });
                f
            })
            .collect();
        let (a, b) = (max_min(&flows, g.resources.len(), &[]), max_min(&forced, g.resources.len(), &[]));
        for (x, y) in a.rates.iter().zip(&b.rates) {
            assert!((x - y).abs() <= 1e-9 * x, "{x} vs {y}");
        }
        assert!(b.util[cpu] < 1.0 - 1e-6, "{}", b.util[cpu]);
        // A slower core can bind behind the same card: charged.
        let t = topo(800.0);
        let g = ResourceGraph::new(&t);
        let cpu = g.resources.iter().position(|r| r.id == "host.cpu").unwrap();
        assert!(costs(&g, &t).iter().all(|f| f.iter().any(|c| c.resource == cpu)), "host.cpu can bind: charged");
    }

    /// Half a byte of P+Q per member byte costs half of a byte's; nothing for no bytes.
    #[test]
    fn cpu_work_cost_scales_with_bytes_per_member_byte() {
        let t = nvme(1, "cpu_cores = 4, cpu_raid_pq_mb_s = 10000");
        let g = ResourceGraph::new(&t);
        let one = g.cpu_work_cost(&t, Kernel::RaidPq, 1.0).unwrap();
        let half = g.cpu_work_cost(&t, Kernel::RaidPq, 0.5).unwrap();
        // 1 / (10,000 MB/s x 4 cores) = 25 ps per byte.
        assert!((one.s_per_byte - 2.5e-11).abs() < 1e-21);
        assert!((half.s_per_byte - one.s_per_byte / 2.0).abs() < 1e-21);
        assert_eq!(one.resource, half.resource);
        assert_eq!(g.resources[one.resource].id, "host.cpu");
        assert!(g.cpu_work_cost(&t, Kernel::RaidPq, 0.0).is_none());
    }
}
