//! The closed-form bound of a pool workload: one logical class whose cost on every resource
//! is the sum over the members of (member bytes per logical byte, per direction) x that
//! member's class costs at the mean member I/O size, plus the CPU work
//! (`ResourceGraph::cpu_work_cost`) and, for a workload naming a client, the network's
//! costs (`net::client_costs`) per logical byte.
//!
//! The fan-out ratios come from mapping a deterministic sample of the workload's logical
//! I/Os ([`demand`]): sequential workloads map consecutive I/Os from offset 0 as streams
//! (at least four periods of the layout's rotation: parity rows over `n` members, RAIDZ
//! start columns, vdevs), random ones 2,048 I/Os at offsets drawn from the workload's seed
//! over its region of the pool; scrub and rebuild map runs of their steps spread over the
//! whole task. Mean member I/O sizes are member bytes over member I/Os of each (drive,
//! direction), which keeps `n x per-I/O cost + per-byte cost` exact in aggregate.

use super::{Fanout, LogicalIo, Maintenance, Pool, Task};
use crate::bound::{BoundRow, Mix, bound_of_class};
use crate::cpu::Kernel;
use crate::paths::{Cost, Dir, ResourceGraph};
use crate::topology::{NodeIx, Topology};
use crate::workload::Workload;
use serde::Serialize;
use std::collections::BTreeMap;

/// What one member does per logical byte, in one direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberDemand {
    pub drive: NodeIx,
    pub write: bool,
    /// Member bytes per logical byte.
    pub bytes_per_logical: f64,
    /// Mean member I/O size [bytes].
    pub mean_io: u64,
}

/// A pool workload's fan-out per logical byte.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Demand {
    pub members: Vec<MemberDemand>,
    /// CPU work: bytes processed per logical byte, per kernel.
    pub cpu: Vec<(Kernel, f64)>,
    /// Logical bytes the sample covered.
    pub sampled_bytes: u64,
}

impl Demand {
    /// Member bytes per logical byte in one direction, over all members.
    pub fn per_logical(&self, write: bool) -> f64 {
        self.members.iter().filter(|m| m.write == write).map(|m| m.bytes_per_logical).sum::<f64>() + 0.0
    }
}

/// Sums fanouts into per-(drive, direction) bytes and I/Os and per-kernel bytes.
#[derive(Default)]
struct Tally {
    io: BTreeMap<(NodeIx, bool), (u64, u64)>,
    cpu: BTreeMap<Kernel, u64>,
    logical: u64,
}

impl Tally {
    /// `spread`: a read with alternatives is shared evenly by its sides (the simulator sends
    /// each to the shorter queue, which balances them when several I/Os are in flight).
    fn add(&mut self, f: &Fanout, logical: u64, spread: bool) {
        self.logical += logical;
        for m in f.phases.iter().flatten() {
            if spread && !m.alternatives.is_empty() {
                let k = 1 + m.alternatives.len() as u64;
                for &d in std::iter::once(&m.drive).chain(&m.alternatives) {
                    let e = self.io.entry((d, m.write)).or_default();
                    e.0 += m.len / k;
                    e.1 += 1;
                }
                continue;
            }
            let e = self.io.entry((m.drive, m.write)).or_default();
            e.0 += m.len;
            e.1 += 1;
        }
        for &(k, b) in &f.cpu {
            *self.cpu.entry(k).or_default() += b;
        }
    }

    /// Per logical byte, weighted by `w` (the share of logical bytes in this direction).
    fn into_demand(self, w: f64, out: &mut Demand) {
        if self.logical == 0 || w == 0.0 {
            return;
        }
        let l = self.logical as f64;
        for ((drive, write), (bytes, ios)) in self.io {
            out.members.push(MemberDemand {
                drive,
                write,
                bytes_per_logical: w * bytes as f64 / l,
                mean_io: bytes / ios.max(1),
            });
        }
        for (k, b) in self.cpu {
            match out.cpu.iter_mut().find(|(c, _)| *c == k) {
                Some((_, x)) => *x += w * b as f64 / l,
                None => out.cpu.push((k, w * b as f64 / l)),
            }
        }
        out.sampled_bytes += self.logical;
    }
}

/// A deterministic stream of offsets (SplitMix64).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The bytes after which a layout's placement repeats (parity rotation over `n` members,
/// RAIDZ's start column, vdevs in turn).
fn period(pool: &Pool) -> u64 {
    let n = pool.vdevs.iter().map(|v| v.len()).max().unwrap_or(1) as u64;
    let unit = match pool.layout.family() {
        super::Family::Zfs => pool.recordsize * pool.vdevs.len() as u64,
        super::Family::Unraid => 1 << 20,
        _ => pool.chunk,
    };
    // md RAID 5/6: `n` rows of `n - p` data chunks (whole rows, so a sample of whole periods
    // ends on a row the stripe cache has written).
    if matches!(pool.layout, super::Layout::Raid5 | super::Layout::Raid6) {
        return n * (n - pool.layout.parity() as u64) * unit;
    }
    n * n * unit
}

/// The fan-out of a pool workload per logical byte (see the module notes).
pub fn demand(pool: &Pool, w: &Workload, failed: &[NodeIx]) -> Demand {
    demand_at(pool, w, failed, w.iodepth)
}

/// [`demand`] with the depth md's stripe cache sees on a sequential stream
/// ([`super::stream_depth`]).
pub fn demand_at(pool: &Pool, w: &Workload, failed: &[NodeIx], depth: u32) -> Demand {
    let mut out = Demand::default();
    if w.task != Task::Io {
        let m = Maintenance::new(pool, w.task, w.fill, failed);
        maintenance_demand(&m, &mut out);
        return out;
    }
    let r = w.rw.read_share(w.rwmixread);
    let usable = pool.usable();
    let bs = w.bs.get().min(usable.max(1));
    let span = ((usable as f64 * w.region) as u64 / bs).max(1) * bs;
    for (write, share) in [(false, r), (true, 1.0 - r)] {
        if share <= 0.0 {
            continue;
        }
        let mut t = Tally::default();
        let jobs = w.numjobs.max(1);
        // md raid1/raid10 `read_balance` keeps a sequential stream on the disk whose head is
        // there: one sequential job reads one side. Otherwise, with more than one I/O in
        // flight, the sides share the reads. (A ZFS mirror of HDDs shares even one stream
        // by queue length, `vdev_mirror_load`; what each side then delivers depends on how
        // long its runs are against a track, since a disk turns past the records the other
        // side read: the simulator's head model gives between one and two disks' rate, and
        // this closed form, with no head or time, keeps the upper end.)
        let md_stream = pool.layout.family() == super::Family::Md && !w.rw.is_random() && jobs == 1;
        let spread = !md_stream && u64::from(jobs) * u64::from(w.iodepth) > 1;
        if w.rw.is_random() {
            let mut s = w.seed ^ 0x706f_6f6c;
            let slots = span / bs;
            for i in 0..2048u64 {
                let o = (splitmix(&mut s) % slots) * bs;
                let io =
                    LogicalIo { write, offset: o, len: bs, job: (i % u64::from(jobs)) as u32, stream: false, depth: 0 };
                t.add(&pool.map_io(io, failed), bs, spread);
            }
        } else {
            let want = (4 * period(pool)).max(64 * bs).min(span);
            let count = want.div_ceil(bs).clamp(1, 16_384);
            for i in 0..count {
                let o = (i * bs) % span;
                let job = (i % u64::from(jobs)) as u32;
                let io = LogicalIo { write, offset: o, len: bs, job, stream: true, depth };
                t.add(&pool.map_io(io, failed), bs, spread);
            }
        }
        t.into_demand(share, &mut out);
    }
    out
}

/// Scrub or rebuild: 16 runs of consecutive steps spread over the task.
fn maintenance_demand(m: &Maintenance, out: &mut Demand) {
    if m.steps == 0 || m.logical_bytes == 0 {
        return;
    }
    let per_step = m.logical_bytes as f64 / m.steps as f64;
    let mut t = Tally::default();
    let runs = 16u64.min(m.steps);
    let run_len = 64u64.min(m.steps / runs).max(1);
    let mut n = 0u64;
    for r in 0..runs {
        let start = r * (m.steps / runs);
        for i in start..(start + run_len).min(m.steps) {
            t.add(&m.step(i), 0, false);
            n += 1;
        }
    }
    t.logical = (per_step * n as f64).round().max(1.0) as u64;
    t.into_demand(1.0, out);
}

/// The logical class's costs: each member's class costs at its mean member I/O size,
/// weighted by its bytes per logical byte.
pub fn pool_costs(t: &Topology, g: &ResourceGraph, d: &Demand, random: bool) -> Vec<Cost> {
    let mut v: Vec<Cost> = Vec::new();
    let mut add = |c: Cost, k: f64| match v.iter_mut().find(|x| x.resource == c.resource) {
        Some(x) => x.s_per_byte += k * c.s_per_byte,
        None => v.push(Cost { resource: c.resource, s_per_byte: k * c.s_per_byte }),
    };
    for m in &d.members {
        let dir = if m.write { Dir::Write } else { Dir::Read };
        for c in g.class_costs(t, m.drive, dir, m.mean_io.max(512), random, true) {
            add(c, m.bytes_per_logical);
        }
    }
    // CPU work (checksums, parity, compression, encryption) on the host's CPU resource.
    for &(k, per_logical) in &d.cpu {
        if let Some(c) = g.cpu_work_cost(t, k, per_logical) {
            add(c, 1.0);
        }
    }
    v
}

/// A workload naming a client: the network's costs per logical byte (NET's
/// `client_costs` of the client's requests of `bs` bytes), reads and writes by their share.
pub fn add_client_costs(t: &Topology, g: &ResourceGraph, w: &Workload, costs: &mut Vec<Cost>) {
    let Some(client) = &w.client else { return };
    let r = w.rw.read_share(w.rwmixread);
    for (dir, share) in [(Dir::Read, r), (Dir::Write, 1.0 - r)] {
        if share <= 0.0 {
            continue;
        }
        for c in crate::net::client_costs(t, g, client, dir, w.bs.get()) {
            match costs.iter_mut().find(|x| x.resource == c.resource) {
                Some(x) => x.s_per_byte += share * c.s_per_byte,
                None => costs.push(Cost { resource: c.resource, s_per_byte: share * c.s_per_byte }),
            }
        }
    }
}

/// The bound of a pool workload: the highest logical rate, what binds, and for a scrub or
/// rebuild the time it takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolBound {
    pub pool: String,
    pub task: Task,
    /// Highest logical rate [MB/s].
    pub logical_mb_s: f64,
    /// Member traffic per logical byte: reads and writes.
    pub member_read_per_logical: f64,
    pub member_write_per_logical: f64,
    pub binding: String,
    pub binding_kind: String,
    /// Scrub or rebuild: logical bytes covered and the time at the bound [s].
    pub task_bytes: Option<u64>,
    pub task_s: Option<f64>,
}

/// The bound of a workload on `pool` (its `failed` members already resolved).
pub fn pool_bound(t: &Topology, g: &ResourceGraph, pool: &Pool, w: &Workload, failed: &[NodeIx]) -> PoolBound {
    let d = demand_at(pool, w, failed, super::stream_depth(t, w, w.iodepth));
    let random = w.rw.is_random() && w.task == Task::Io;
    let mut costs = pool_costs(t, g, &d, random);
    add_client_costs(t, g, w, &mut costs);
    let mix = match w.rw.read_share(w.rwmixread) {
        r if r >= 1.0 => Mix::Read,
        r if r <= 0.0 => Mix::Write,
        _ => Mix::Mixed,
    };
    let mut row: BoundRow = bound_of_class(t, g, costs, mix);
    let (task_bytes, task_s) = if w.task == Task::Io {
        (None, None)
    } else {
        let m = Maintenance::new(pool, w.task, w.fill, failed);
        // md's own speed limit binds where the hardware is faster.
        if let Some(cap) = m.cap_logical_b_s
            && cap / 1e6 < row.total_mb_s
        {
            row.total_mb_s = cap / 1e6;
            row.binding = "md.speed_limit_max".to_string();
            row.binding_kind = "software".to_string();
        }
        let s = if row.total_mb_s > 0.0 { m.logical_bytes as f64 / (row.total_mb_s * 1e6) } else { f64::INFINITY };
        (Some(m.logical_bytes), Some(s))
    };
    PoolBound {
        pool: pool.id.clone(),
        task: w.task,
        logical_mb_s: row.total_mb_s,
        member_read_per_logical: d.per_logical(false),
        member_write_per_logical: d.per_logical(true),
        binding: row.binding,
        binding_kind: row.binding_kind,
        task_bytes,
        task_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;
    use crate::units::Bytes;
    use crate::workload::Rw;

    fn topo() -> Topology {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/pools-9300-8i-exos.toml");
        Topology::load(&p, &Catalog::builtin()).unwrap()
    }

    #[test]
    fn cpu_work_enters_the_logical_class_per_logical_byte() {
        let t = topo();
        let g = ResourceGraph::new(&t);
        let tank = t.pool("tank").unwrap();
        let w = Workload { rw: Rw::Write, bs: Bytes::new(1 << 20), pool: Some("tank".into()), ..Default::default() };
        let d = demand(tank, &w, &[]);
        // A full-record write checksums each logical byte once (fletcher4) and computes P+Q
        // over it once.
        let per = |k: Kernel| d.cpu.iter().find(|(c, _)| *c == k).map(|(_, b)| *b);
        assert_eq!(per(Kernel::Fletcher4), Some(1.0));
        assert_eq!(per(Kernel::RaidPq), Some(1.0));
        let costs = pool_costs(&t, &g, &d, false);
        let want: f64 = [Kernel::Fletcher4, Kernel::RaidPq].iter().map(|&k| crate::cpu::kernel_s_per_byte(&t, k)).sum();
        let cpu = g.cpu_work_cost(&t, Kernel::Fletcher4, 1.0).unwrap().resource;
        let got = costs.iter().find(|c| c.resource == cpu).map(|c| c.s_per_byte).unwrap();
        assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    }

    #[test]
    fn one_sequential_job_reads_one_side_of_an_md_mirror_and_two_share_them() {
        let t = topo();
        let boot = t.pool("boot").unwrap();
        let one = Workload { rw: Rw::Read, iodepth: 8, pool: Some("boot".into()), ..Default::default() };
        let d = demand(boot, &one, &[]);
        assert_eq!(d.members.len(), 1, "{d:?}");
        let two = Workload { numjobs: 2, ..one };
        let d = demand(boot, &two, &[]);
        let shares: Vec<f64> = d.members.iter().map(|m| m.bytes_per_logical).collect();
        assert_eq!(shares, [0.5, 0.5]);
    }

    #[test]
    fn a_client_on_2_5_gbe_bounds_a_pool_read_by_its_link() {
        let text = r#"
[host]
part = "amd-am5"
[[node]]
id = "nic0"
part = "intel-i226-v"
parent = "host"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "d"
count = 4
part = "kingston-dc600m-1920"
parent = "hba"
[[client]]
id = "laptop"
nic = "nic0"
link = "2.5GbE"
[[pool]]
id = "tank"
layout = "raid5"
members = ["d"]
"#;
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap();
        let g = ResourceGraph::new(&t);
        let tank = t.pool("tank").unwrap();
        let local = Workload { rw: Rw::Read, bs: Bytes::new(1 << 20), pool: Some("tank".into()), ..Default::default() };
        let remote = Workload { client: Some("laptop".into()), ..local.clone() };
        let a = pool_bound(&t, &g, tank, &local, &[]);
        let b = pool_bound(&t, &g, tank, &remote, &[]);
        // 2.5 Gbit/s is 312.5 MB/s of bits on the wire before any framing: the client can
        // never read faster, while three data members of ~500 MB/s SSDs read far faster.
        assert!(b.logical_mb_s < 312.5 && b.logical_mb_s > 250.0, "{b:?}");
        assert!(a.logical_mb_s > 2.0 * b.logical_mb_s, "{a:?}");
        assert_ne!(b.binding_kind, "media", "{b:?}");
    }
}
