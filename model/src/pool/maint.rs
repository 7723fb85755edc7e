//! Scrub and rebuild as sequences of fanouts in LBA order.
//!
//! - Scrub reads every allocated byte of every member (data and parity, or every copy)
//!   and verifies it: ZFS and btrfs scrub only allocated space (`fill` of the pool, taken
//!   from the start of each member as a fresh pool allocates), verifying checksums (and
//!   RAIDZ parity, `vdev_raidz_io_done` under a scrub); md `check` and the unRAID parity
//!   check read whole members regardless of fill and recompute parity.
//! - Rebuild (md recovery, ZFS resilver, btrfs replace, unRAID rebuild) of the failed
//!   members onto replacements in the same bays (the failed drive's node stands for its
//!   replacement, so the writes land on it): reads the surviving members (ZFS/btrfs:
//!   allocated only; md/unRAID: whole devices), reconstructs (CPU) and writes the
//!   replacement. ZFS resilvers only the records of vdevs with a failed member.
//! - A step is one member row of `unit` bytes (md chunk, btrfs 64 KiB, unRAID 1 MiB) on
//!   every member, or one ZFS record. Every row step of a layout moves the same bytes, so
//!   the totals are `steps x` one step's (ZFS per vdev; unRAID in closed form because its
//!   disks end at different offsets).

use super::md::{Near, Rows, md_place};
use super::{BTRFS_STRIPE_LEN, Family, Fanout, Layout, MemberIo, Pool, Task, btrfs, zfs};
use crate::cpu::Kernel;
use crate::topology::NodeIx;
use serde::Serialize;

/// unRAID's step (the parity check and rebuild walk the disks in 1 MiB requests here).
pub const UNRAID_STEP: u64 = 1 << 20;

/// md's resync/check/recovery speed ceiling, `/proc/sys/dev/raid/speed_limit_max`:
/// 200,000 KiB/s by default (drivers/md/md.c: `static int sysctl_speed_limit_max =
/// 200000`, in KiB/s of resync progress, which is member offset: every member advances
/// together), in bytes per second.
pub const MD_SPEED_LIMIT_MAX: f64 = 200_000.0 * 1024.0;

/// A scrub or rebuild: its steps and what they add up to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Maintenance {
    pub task: Task,
    /// Logical bytes covered: data verified (scrub) or made redundant again (rebuild).
    pub logical_bytes: u64,
    pub member_read_bytes: u64,
    pub member_write_bytes: u64,
    /// CPU work over the whole task: (kernel, bytes).
    pub cpu: Vec<(Kernel, u64)>,
    /// Steps in LBA order: [`Maintenance::step`] of `0..steps`.
    pub steps: u64,
    /// Member bytes per step (a row's height on each member), or the recordsize for ZFS.
    pub unit: u64,
    /// The most logical bytes per second the software lets the task move, if it caps it
    /// (md: `speed_limit_max` of member progress, so logical = limit x logical bytes per
    /// member row / row height).
    pub cap_logical_b_s: Option<f64>,
    #[serde(skip)]
    pool: Pool,
    #[serde(skip)]
    failed: Vec<NodeIx>,
    /// ZFS: the vdevs a step walks (all for a scrub, those with a failure for a rebuild).
    #[serde(skip)]
    vdevs: Vec<usize>,
}

impl Maintenance {
    pub(crate) fn new(pool: &Pool, task: Task, fill: f64, failed: &[NodeIx]) -> Maintenance {
        let fill = fill.clamp(0.0, 1.0);
        let fam = pool.layout.family();
        let allocated_only = matches!(fam, Family::Zfs | Family::Btrfs);
        let share = if allocated_only { fill } else { 1.0 };
        let mut m = Maintenance {
            task,
            logical_bytes: 0,
            member_read_bytes: 0,
            member_write_bytes: 0,
            cpu: Vec::new(),
            steps: 0,
            unit: 0,
            cap_logical_b_s: None,
            pool: pool.clone(),
            failed: failed.to_vec(),
            vdevs: Vec::new(),
        };
        let usable = pool.usable();
        m.logical_bytes = (usable as f64 * share) as u64;
        match fam {
            Family::Zfs => {
                m.unit = pool.recordsize;
                m.vdevs = (0..pool.vdevs.len())
                    .filter(|&v| task == Task::Scrub || pool.vdevs[v].iter().any(|d| failed.contains(d)))
                    .collect();
                let per_vdev = usable / pool.recordsize / pool.vdevs.len() as u64;
                let records = (per_vdev as f64 * fill) as u64;
                m.steps = records * m.vdevs.len() as u64;
                if task == Task::Rebuild {
                    m.logical_bytes = m.steps * pool.recordsize;
                }
                for i in 0..m.vdevs.len() as u64 {
                    let f = m.step(i);
                    m.add(&f, records);
                }
            }
            Family::Unraid => m.unraid_totals(),
            _ => {
                m.unit = if fam == Family::Btrfs { BTRFS_STRIPE_LEN } else { pool.chunk };
                // Logical bytes of one member row: its data units, or its units over copies.
                let n = pool.vdevs[0].len() as u64;
                let par = pool.layout.parity() as u64;
                let per_row =
                    if par > 0 { (n - par) * m.unit } else { n * m.unit / pool.layout.copies(n as usize) as u64 };
                // md walks whole members. btrfs's `fill` is of the pool's usable bytes, which
                // are whole chunks (`btrfs::mirror_chunk`) and can be fewer than the members'
                // rows: a 2 x 2 GiB raid1 stores 1,664 MiB in 416 MiB chunks, not 2 GiB.
                let rows = if fam == Family::Btrfs {
                    (usable / per_row).min(pool.smallest(0) / m.unit)
                } else {
                    pool.smallest(0) / m.unit
                };
                m.steps = (rows as f64 * share) as u64;
                m.logical_bytes = m.steps * per_row;
                if fam == Family::Md {
                    m.cap_logical_b_s = Some(MD_SPEED_LIMIT_MAX * per_row as f64 / m.unit as f64);
                }
                if m.steps > 0 {
                    let f = m.step(0);
                    m.add(&f, m.steps);
                }
            }
        }
        m
    }

    /// Adds `times` copies of a fanout to the totals.
    fn add(&mut self, f: &Fanout, times: u64) {
        self.member_read_bytes += f.member_bytes(false) * times;
        self.member_write_bytes += f.member_bytes(true) * times;
        for &(k, b) in &f.cpu {
            match self.cpu.iter_mut().find(|(c, _)| *c == k) {
                Some((_, t)) => *t += b * times,
                None => self.cpu.push((k, b * times)),
            }
        }
    }

    /// unRAID in closed form: the parity check reads every disk whole; a rebuild reads
    /// every surviving disk up to the failed disk's end and writes the failed disks.
    fn unraid_totals(&mut self) {
        let p = &self.pool;
        let m = &p.vdevs[0];
        let sizes = &p.sizes[0];
        let nd = p.unraid_split();
        self.unit = UNRAID_STEP;
        let dead = |i: usize| self.failed.contains(&m[i]);
        let k = if p.parity == 1 { Kernel::Xor } else { Kernel::RaidPq };
        let (reads, writes, end) = match self.task {
            Task::Scrub | Task::Io => (sizes.iter().sum::<u64>(), 0, sizes.iter().copied().max().unwrap_or(0)),
            Task::Rebuild => {
                let end = (0..m.len()).filter(|&i| dead(i)).map(|i| sizes[i]).max().unwrap_or(0);
                let r = (0..m.len()).filter(|&i| !dead(i)).map(|i| sizes[i].min(end)).sum();
                let w = (0..m.len()).filter(|&i| dead(i)).map(|i| sizes[i]).sum();
                (r, w, end)
            }
        };
        self.steps = end.div_ceil(UNRAID_STEP);
        self.member_read_bytes = reads;
        self.member_write_bytes = writes;
        let data: u64 = sizes[..nd].iter().map(|&s| s.min(end)).sum();
        self.logical_bytes =
            if self.task == Task::Rebuild { (0..nd).filter(|&i| dead(i)).map(|i| sizes[i]).sum() } else { data };
        self.cpu = vec![(k, data)];
    }

    /// Step `i` (in `0..steps`), in LBA order.
    pub fn step(&self, i: u64) -> Fanout {
        let p = &self.pool;
        match p.layout.family() {
            Family::Zfs => self.zfs_step(i),
            Family::Unraid => self.unraid_step(i),
            _ => self.row_step(i),
        }
    }

    fn zfs_step(&self, i: u64) -> Fanout {
        let p = &self.pool;
        let nv = p.vdevs.len() as u64;
        let a = self.vdevs.len() as u64;
        let v = self.vdevs[(i % a) as usize] as u64;
        let rec = (i / a) * nv + v;
        let mut f = Fanout::default();
        let (reads, _) = zfs::record_ios(p, rec, false, true, &self.failed);
        let (writes, _) = zfs::record_ios(p, rec, true, false, &[]);
        let rs = p.recordsize;
        if let Some(k) = p.checksum {
            f.add_cpu(k, rs);
        }
        let par = p.layout.parity();
        if par > 0 {
            f.add_cpu(zfs_parity(par), rs);
        }
        f.push_phase(reads);
        if self.task == Task::Rebuild {
            f.push_phase(writes.into_iter().filter(|w| self.failed.contains(&w.drive)).collect());
            // A mirror resilver reads one side.
            if p.layout == Layout::ZfsMirror
                && let Some(ph) = f.phases.first_mut()
            {
                ph.truncate(1);
            }
        }
        f
    }

    fn unraid_step(&self, i: u64) -> Fanout {
        let p = &self.pool;
        let m = &p.vdevs[0];
        let x = i * UNRAID_STEP;
        let mut f = Fanout::default();
        let reach = |j: usize| p.sizes[0][j] > x;
        let len = |j: usize| UNRAID_STEP.min(p.sizes[0][j].saturating_sub(x));
        let dead = |j: usize| self.failed.contains(&m[j]);
        let reads = (0..m.len()).filter(|&j| reach(j) && !dead(j)).map(|j| MemberIo::read(m[j], x, len(j))).collect();
        let nd = p.unraid_split();
        let data: u64 = (0..nd).filter(|&j| reach(j)).map(len).sum();
        f.add_cpu(if p.parity == 1 { Kernel::Xor } else { Kernel::RaidPq }, data);
        f.push_phase(reads);
        if self.task == Task::Rebuild {
            f.push_phase(
                (0..m.len()).filter(|&j| reach(j) && dead(j)).map(|j| MemberIo::write(m[j], x, len(j))).collect(),
            );
        }
        f
    }

    /// One member row: member offsets `[i u, (i + 1) u)` on every member.
    fn row_step(&self, i: u64) -> Fanout {
        let p = &self.pool;
        let m = &p.vdevs[0];
        let u = self.unit;
        let x = i * u;
        let mut f = Fanout::default();
        let dead = |d: &NodeIx| self.failed.contains(d);
        let par = p.layout.parity();
        if par > 0 {
            let rows = Rows {
                members: m,
                unit: u,
                p: par,
                place: if p.layout.family() == Family::Btrfs { btrfs::btrfs_place } else { md_place },
            };
            f.add_cpu(rows.parity_kernel(), (m.len() - par) as u64 * u);
        }
        if let Some(k) = p.checksum {
            let data =
                if par > 0 { (m.len() - par) as u64 * u } else { m.len() as u64 * u / p.layout.copies(m.len()) as u64 };
            f.add_cpu(k, data);
        }
        if self.task != Task::Rebuild || par > 0 {
            f.push_phase(m.iter().filter(|d| !dead(d)).map(|&d| MemberIo::read(d, x, u)).collect());
        } else {
            // Mirrors: each failed member's slice is read from a surviving copy.
            let near = self.near();
            let mut reads = Vec::new();
            for (pos, _) in m.iter().enumerate().filter(|(_, d)| dead(d)) {
                if let Some((src, off)) = near.other_copy(pos, x, &self.failed) {
                    reads.push(MemberIo::read(src, off, u));
                }
            }
            f.push_phase(reads);
        }
        if self.task == Task::Rebuild {
            f.push_phase(m.iter().filter(|d| dead(d)).map(|&d| MemberIo::write(d, x, u)).collect());
        }
        f
    }

    fn near(&self) -> Near<'_> {
        let p = &self.pool;
        let m = &p.vdevs[0];
        Near { members: m, unit: p.near_unit(), copies: p.layout.copies(m.len()) }
    }
}

fn zfs_parity(p: usize) -> Kernel {
    match p {
        1 => Kernel::Xor,
        2 => Kernel::RaidPq,
        _ => Kernel::RaidPqr,
    }
}

impl Near<'_> {
    /// A surviving copy of the bytes at member offset `x` of member position `pos`.
    pub(crate) fn other_copy(&self, pos: usize, x: u64, failed: &[NodeIx]) -> Option<(NodeIx, u64)> {
        let n = self.members.len() as u64;
        let c = self.copies as u64;
        let s = (x / self.unit) * n + pos as u64;
        let within = x % self.unit;
        let k = s / c;
        (0..c)
            .map(|j| k * c + j)
            .filter(|&s2| s2 != s)
            .map(|s2| (self.members[(s2 % n) as usize], (s2 / n) * self.unit + within))
            .find(|(d, _)| !failed.contains(d))
    }
}
