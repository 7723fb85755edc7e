//! Pools: how a logical I/O on a pool becomes I/Os on its member drives.
//!
//! A [`Pool`] (a validated `[[pool]]` table) maps a [`LogicalIo`] to a [`Fanout`]: the member
//! I/Os in phases (every I/O of a phase completes before the next phase starts: a parity
//! read-modify-write reads, then writes) and the CPU work it needs (checksums, parity,
//! compression, encryption), as Linux md, btrfs, ZFS and unRAID lay data out:
//!
//! - [`md`]: md RAID 0/1/10 ("near 2")/5/6 (left-symmetric), chunk-sized stripe units, 4 KiB
//!   stripe-cache pages choosing read-modify-write or reconstruct-write as md does;
//! - [`btrfs`]: btrfs profiles (64 KiB stripe elements, mirror choice by the reader's pid,
//!   raid5/6 partial writes reading the rest of the full stripe, crc32c per 4 KiB);
//! - [`zfs`]: vdevs (mirror, RAIDZ1/2/3) with records of `recordsize` split into `ashift`
//!   sectors, parity per row and padding to a multiple of `p + 1` (`vdev_raidz_asize`);
//! - [`unraid`]: independent data disks and one or two parity disks (read-modify-write or
//!   turbo reconstruct-write);
//! - [`maint`]: scrub and rebuild as a sequence of stripe fanouts with their totals;
//! - [`bound`]: the closed-form bound of a pool workload (one logical class).
//!
//! Offsets and lengths are bytes. A member offset is from the start of the member drive.

pub mod bound;
pub mod btrfs;
pub mod chain;
pub mod maint;
pub mod md;
pub mod unraid;
pub mod vary;
pub mod zfs;

pub use maint::Maintenance;

use crate::cpu::Kernel;
use crate::topology::{NodeIx, Topology};
use serde::Serialize;

/// The page md's stripe cache and btrfs work in (`STRIPE_SIZE` = `PAGE_SIZE`, 4 KiB on x86).
pub const PAGE: u64 = 4096;
/// btrfs's stripe element (`BTRFS_STRIPE_LEN`, fs/btrfs/volumes.h: 64 KiB, fixed).
pub const BTRFS_STRIPE_LEN: u64 = 64 * 1024;
/// md's default stripe cache: `stripe_cache_size` stripe heads of one page per member
/// (drivers/md/raid5.h `NR_STRIPES` 256, md(4) "stripe_cache_size ... default is 256";
/// NeilBrown, "md/raid5: allow the stripe_cache to grow and shrink", kernel commit
/// edbe83ab4c27: "The default setting of 256 stripe_heads"). A pool's `stripe_cache_size`.
pub const MD_DEFAULT_STRIPE_CACHE: u64 = 256;
/// The stripe cache sizes md accepts: drivers/md/raid5.c `raid5_set_cache_size` returns
/// -EINVAL for `size <= 16 || size > 32768`.
pub const MD_STRIPE_CACHE_RANGE: std::ops::RangeInclusive<u64> = 17..=32768;
/// What Linux writeback submits of a file at least in one pass under one block plug
/// (fs/fs-writeback.c `MIN_WRITEBACK_PAGES`, 4096 KiB of pages, the floor of
/// `writeback_chunk_size`): a file server writing through the page cache (smbd, nfsd) hands
/// md at least this much of a sequential stream together, whatever the client keeps in
/// flight.
pub const WRITEBACK_CHUNK: u64 = 4096 * 1024;
/// mdadm's default chunk (mdadm(8): "--chunk ... The default is 512K").
pub const MD_DEFAULT_CHUNK: u64 = 512 * 1024;
/// ZFS's default recordsize (zfsprops(7): "The default recordsize is 128 KiB").
pub const ZFS_DEFAULT_RECORDSIZE: u64 = 128 * 1024;
/// ZFS's default ashift as iopath assumes it (4 KiB sectors; zpoolprops(7) `ashift`).
pub const ZFS_DEFAULT_ASHIFT: u32 = 12;

/// A pool's layout (`layout = "raidz2"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// md RAID 0.
    Stripe,
    /// md RAID 1.
    Mirror,
    /// md RAID 10, "near 2".
    Raid10,
    Raid5,
    Raid6,
    BtrfsRaid0,
    BtrfsRaid1,
    BtrfsRaid1c3,
    BtrfsRaid10,
    BtrfsRaid5,
    BtrfsRaid6,
    Raidz1,
    Raidz2,
    Raidz3,
    ZfsMirror,
    Unraid,
}

/// The family of software that implements a layout: which options apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Md,
    Btrfs,
    Zfs,
    Unraid,
}

impl Layout {
    pub const ALL: [Layout; 16] = [
        Layout::Stripe,
        Layout::Mirror,
        Layout::Raid10,
        Layout::Raid5,
        Layout::Raid6,
        Layout::BtrfsRaid0,
        Layout::BtrfsRaid1,
        Layout::BtrfsRaid1c3,
        Layout::BtrfsRaid10,
        Layout::BtrfsRaid5,
        Layout::BtrfsRaid6,
        Layout::Raidz1,
        Layout::Raidz2,
        Layout::Raidz3,
        Layout::ZfsMirror,
        Layout::Unraid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layout::Stripe => "stripe",
            Layout::Mirror => "mirror",
            Layout::Raid10 => "raid10",
            Layout::Raid5 => "raid5",
            Layout::Raid6 => "raid6",
            Layout::BtrfsRaid0 => "btrfs-raid0",
            Layout::BtrfsRaid1 => "btrfs-raid1",
            Layout::BtrfsRaid1c3 => "btrfs-raid1c3",
            Layout::BtrfsRaid10 => "btrfs-raid10",
            Layout::BtrfsRaid5 => "btrfs-raid5",
            Layout::BtrfsRaid6 => "btrfs-raid6",
            Layout::Raidz1 => "raidz1",
            Layout::Raidz2 => "raidz2",
            Layout::Raidz3 => "raidz3",
            Layout::ZfsMirror => "zfs-mirror",
            Layout::Unraid => "unraid",
        }
    }

    pub fn parse(s: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == s.trim().to_ascii_lowercase())
    }

    pub fn family(self) -> Family {
        match self {
            Layout::Stripe | Layout::Mirror | Layout::Raid10 | Layout::Raid5 | Layout::Raid6 => Family::Md,
            Layout::BtrfsRaid0
            | Layout::BtrfsRaid1
            | Layout::BtrfsRaid1c3
            | Layout::BtrfsRaid10
            | Layout::BtrfsRaid5
            | Layout::BtrfsRaid6 => Family::Btrfs,
            Layout::Raidz1 | Layout::Raidz2 | Layout::Raidz3 | Layout::ZfsMirror => Family::Zfs,
            Layout::Unraid => Family::Unraid,
        }
    }

    /// Parity members per stripe row (RAID 5/6, RAIDZ); 0 for stripes and mirrors; unRAID's
    /// is the pool's `parity`.
    pub fn parity(self) -> usize {
        match self {
            Layout::Raid5 | Layout::BtrfsRaid5 | Layout::Raidz1 => 1,
            Layout::Raid6 | Layout::BtrfsRaid6 | Layout::Raidz2 => 2,
            Layout::Raidz3 => 3,
            _ => 0,
        }
    }

    /// Copies of each byte for mirrored layouts (ZFS mirror and md RAID 1: every member).
    pub fn copies(self, members: usize) -> usize {
        match self {
            Layout::Mirror | Layout::ZfsMirror => members,
            Layout::Raid10 | Layout::BtrfsRaid1 | Layout::BtrfsRaid10 => 2,
            Layout::BtrfsRaid1c3 => 3,
            _ => 1,
        }
    }

    /// The fewest members (per vdev for ZFS) the real tool accepts, and its source.
    pub fn min_members(self) -> (usize, &'static str) {
        match self {
            Layout::Stripe => (2, "mdadm --create --level=0 needs at least 2 devices (mdadm(8); 1 with --force)"),
            Layout::Mirror => (2, "a mirror needs 2 devices (mdadm(8) --level=1; 1 only with --force)"),
            Layout::Raid10 => (2, "md raid10 near=2 needs at least 2 devices (md(4): \"at least 2\")"),
            Layout::Raid5 => (3, "mdadm --level=5 needs at least 3 devices (2 only with --force, md(4))"),
            Layout::Raid6 => (4, "mdadm --level=6 needs at least 4 devices (md(4))"),
            Layout::BtrfsRaid0 => {
                (2, "btrfs raid0 devs_min = 1 since 5.15, 2 before (fs/btrfs/volumes.c btrfs_raid_array); 2 here")
            }
            Layout::BtrfsRaid1 => (2, "btrfs raid1 devs_min = 2 (fs/btrfs/volumes.c btrfs_raid_array)"),
            Layout::BtrfsRaid1c3 => (3, "btrfs raid1c3 devs_min = 3 (fs/btrfs/volumes.c btrfs_raid_array, Linux 5.5)"),
            Layout::BtrfsRaid10 => {
                (2, "btrfs raid10 devs_min = 2 since Linux 5.15 (4 before: fs/btrfs/volumes.c btrfs_raid_array)")
            }
            Layout::BtrfsRaid5 => (2, "btrfs raid5 devs_min = 2 (fs/btrfs/volumes.c btrfs_raid_array)"),
            Layout::BtrfsRaid6 => (3, "btrfs raid6 devs_min = 3 (fs/btrfs/volumes.c btrfs_raid_array)"),
            Layout::Raidz1 => (2, "zpool create raidz1 needs at least 2 devices (zpoolconcepts(7): N+1 for raidzN)"),
            Layout::Raidz2 => (3, "zpool create raidz2 needs at least 3 devices (zpoolconcepts(7): N+1 for raidzN)"),
            Layout::Raidz3 => (4, "zpool create raidz3 needs at least 4 devices (zpoolconcepts(7): N+1 for raidzN)"),
            Layout::ZfsMirror => (2, "a mirror vdev needs 2 devices (zpoolconcepts(7))"),
            Layout::Unraid => (2, "unRAID needs at least 1 data and 1 parity disk"),
        }
    }

    /// The default checksum of its filesystem, if any (ZFS fletcher4: zfsprops(7) `checksum`;
    /// btrfs crc32c: mkfs.btrfs(8) `--csum`).
    pub fn default_checksum(self) -> Option<Kernel> {
        match self.family() {
            Family::Zfs => Some(Kernel::Fletcher4),
            Family::Btrfs => Some(Kernel::Crc32c),
            _ => None,
        }
    }
}

/// unRAID's write method (`md_write_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteMode {
    /// Read-modify-write: read old data and old parity, then write both.
    #[default]
    Rmw,
    /// Reconstruct-write: read the same offset on every other data disk, then write.
    Turbo,
}

/// What a pool workload does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// The workload's own I/O (`rw`, `bs`, ...).
    #[default]
    Io,
    /// Read and verify every allocated byte (data, parity, copies).
    Scrub,
    /// Rebuild the failed member(s) onto replacements (resync, resilver, replace).
    Rebuild,
}

impl Task {
    pub fn name(self) -> &'static str {
        match self {
            Task::Io => "io",
            Task::Scrub => "scrub",
            Task::Rebuild => "rebuild",
        }
    }
}

impl std::str::FromStr for Task {
    type Err = String;
    fn from_str(s: &str) -> Result<Task, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "io" => Ok(Task::Io),
            "scrub" | "check" => Ok(Task::Scrub),
            "rebuild" | "resilver" | "resync" | "replace" => Ok(Task::Rebuild),
            other => Err(format!("{other:?} is not one of io, scrub, rebuild")),
        }
    }
}

/// A validated pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pool {
    pub id: String,
    pub layout: Layout,
    /// Members per vdev (one vdev for md, btrfs and unRAID; for unRAID the parity disks are
    /// the last `parity` members).
    pub vdevs: Vec<Vec<NodeIx>>,
    /// Each member's bytes (its drive's capacity), parallel to `vdevs`.
    pub sizes: Vec<Vec<u64>>,
    /// md chunk, btrfs stripe element (64 KiB); unused for ZFS and unRAID.
    pub chunk: u64,
    /// md raid5/raid6 stripe cache, in stripe heads ([`MD_DEFAULT_STRIPE_CACHE`] for the
    /// other layouts, which have none).
    pub stripe_cache: u64,
    /// ZFS recordsize (bytes).
    pub recordsize: u64,
    /// ZFS ashift (sector = 2^ashift bytes).
    pub ashift: u32,
    /// unRAID parity disks (1 or 2); the layout's parity for the others.
    pub parity: usize,
    pub write_mode: WriteMode,
    /// Checksum of data on write and read (ZFS, btrfs); `None` for md and unRAID.
    pub checksum: Option<Kernel>,
    /// Compression (ZFS, btrfs): the CPU work only, at ratio 1 (no ratio is sourced).
    pub compression: Option<Kernel>,
    /// Encryption (ZFS, btrfs over dm-crypt is not modelled): `aes-gcm`.
    pub encryption: Option<Kernel>,
}

/// One I/O on a pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LogicalIo {
    pub write: bool,
    pub offset: u64,
    pub len: u64,
    /// The job issuing it (btrfs chooses a mirror by the reader's pid).
    pub job: u32,
    /// It continues a sequential stream of the same job: ZFS aggregates such writes into
    /// whole records in the transaction group and reads a record once per stream (ARC), so
    /// a record's member I/O is issued by the I/O that reaches its last byte (writes) or its
    /// first byte (reads). Ignored by the other layouts.
    pub stream: bool,
    /// Logical I/Os the issuing job keeps in flight on its sequential stream (its
    /// `iodepth`), 0 for random I/O or when unknown: md RAID 5/6 holds a sequential
    /// stream's partial stripes in its stripe cache while the rest of the row arrives
    /// ([`md`]), which it can only do for the writes the job has in flight together.
    pub depth: u32,
}

impl LogicalIo {
    pub fn new(write: bool, offset: u64, len: u64) -> LogicalIo {
        LogicalIo { write, offset, len, job: 0, stream: false, depth: 0 }
    }
}

/// One I/O on a member drive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberIo {
    pub drive: NodeIx,
    pub write: bool,
    pub offset: u64,
    pub len: u64,
    /// Other drives holding the same bytes at the same offset (mirror reads): the
    /// simulator may serve the read from `drive` or any of these (md and ZFS choose the
    /// least busy side at run time). Empty for writes and where the layout decides alone.
    pub alternatives: Vec<NodeIx>,
}

impl MemberIo {
    pub fn read(drive: NodeIx, offset: u64, len: u64) -> MemberIo {
        MemberIo { drive, write: false, offset, len, alternatives: Vec::new() }
    }
    pub fn write(drive: NodeIx, offset: u64, len: u64) -> MemberIo {
        MemberIo { drive, write: true, offset, len, alternatives: Vec::new() }
    }
}

/// What one logical I/O does: phases run in order (every I/O of a phase completes before
/// the next starts): a RAID 6 read-modify-write is [reads of old data, P, Q], then [writes
/// of data, P, Q]; a read is one phase.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Fanout {
    pub phases: Vec<Vec<MemberIo>>,
    /// CPU work: (kernel, bytes it processes).
    pub cpu: Vec<(Kernel, u64)>,
}

impl Fanout {
    /// Bytes of member I/O in one direction.
    pub fn member_bytes(&self, write: bool) -> u64 {
        self.phases.iter().flatten().filter(|m| m.write == write).map(|m| m.len).sum()
    }
    /// Member I/Os in one direction.
    pub fn member_ios(&self, write: bool) -> u64 {
        self.phases.iter().flatten().filter(|m| m.write == write).count() as u64
    }
    /// Bytes processed by one kernel.
    pub fn cpu_bytes(&self, k: Kernel) -> u64 {
        self.cpu.iter().filter(|(c, _)| *c == k).map(|(_, b)| b).sum()
    }
    /// Adds CPU work, merging with work of the same kernel.
    pub(crate) fn add_cpu(&mut self, k: Kernel, bytes: u64) {
        if bytes == 0 {
            return;
        }
        match self.cpu.iter_mut().find(|(c, _)| *c == k) {
            Some((_, b)) => *b += bytes,
            None => self.cpu.push((k, bytes)),
        }
    }
    /// Appends a phase, its I/Os merged (overlapping or adjacent ranges of one drive and
    /// direction become one I/O, as the block layer's plug merges md's per-page bios);
    /// an empty phase is dropped.
    pub(crate) fn push_phase(&mut self, ios: Vec<MemberIo>) {
        let merged = merge(ios);
        if !merged.is_empty() {
            self.phases.push(merged);
        }
    }
}

/// Merges overlapping or adjacent I/Os of one drive and direction (reads with the same
/// alternatives), ordered by drive, direction and offset.
pub(crate) fn merge(mut ios: Vec<MemberIo>) -> Vec<MemberIo> {
    ios.retain(|m| m.len > 0);
    // Layouts mostly list a phase's I/Os in this order already (RAIDZ columns by disk); a
    // stable sort of a sorted list is the identity, so skip it then.
    if !ios.is_sorted_by_key(|a| (a.drive, a.write, a.offset)) {
        ios.sort_by_key(|a| (a.drive, a.write, a.offset));
    }
    // In place: `m` is folded into the last I/O kept before it.
    ios.dedup_by(|m, last| {
        let joins = last.drive == m.drive
            && last.write == m.write
            && last.alternatives == m.alternatives
            && m.offset <= last.offset + last.len;
        if joins {
            let end = (last.offset + last.len).max(m.offset + m.len);
            last.len = end - last.offset;
        }
        joins
    });
    ios
}

/// The depth md's stripe cache sees on a sequential stream whose job keeps `own` I/Os in
/// flight: for a workload from a client of a file server that writes through the page
/// cache (SMB3's smbd, NFS's nfsd; not an iSCSI target's block backstore), at least
/// writeback's chunk in I/Os of the workload's block size ([`WRITEBACK_CHUNK`]).
pub fn stream_depth(t: &Topology, w: &crate::workload::Workload, own: u32) -> u32 {
    use crate::net::Protocol;
    let Some(c) = w.client.as_deref().and_then(|c| t.client(c)) else { return own };
    match c.protocol {
        Protocol::Smb3 | Protocol::Nfs => {
            let chunk = WRITEBACK_CHUNK.div_ceil(w.bs.get().max(1));
            own.max(u32::try_from(chunk).unwrap_or(u32::MAX))
        }
        Protocol::Iscsi => own,
    }
}

/// Why a set of failed members is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FailedError {
    #[error("{drive:?} is not a member of pool {pool:?}")]
    NotAMember { pool: String, drive: String },
    #[error("pool {pool:?} ({layout}) survives {survives}, but {failed} of {group} failed")]
    TooMany { pool: String, layout: &'static str, survives: String, failed: usize, group: String },
}

impl Pool {
    /// Every member, vdev by vdev.
    pub fn members(&self) -> impl Iterator<Item = NodeIx> + '_ {
        self.vdevs.iter().flatten().copied()
    }

    /// Whether the drive is a member.
    pub fn contains(&self, d: NodeIx) -> bool {
        self.members().any(|m| m == d)
    }

    /// The smallest member of a vdev (every md, btrfs striped and RAIDZ member is used up
    /// to it).
    pub fn smallest(&self, vdev: usize) -> u64 {
        self.sizes[vdev].iter().copied().min().unwrap_or(0)
    }

    /// unRAID's data disks and parity disks (by position in the one vdev).
    pub(crate) fn unraid_split(&self) -> usize {
        self.vdevs[0].len() - self.parity
    }

    /// Bytes users can store: md (n - p) x smallest, mirror smallest, RAID 10 n x smallest /
    /// copies, RAIDZ the data fraction of the vdev at the recordsize (padding included),
    /// unRAID the sum of its data disks.
    pub fn usable_bytes(&self, _t: &Topology) -> u64 {
        self.usable()
    }

    pub(crate) fn usable(&self) -> u64 {
        let n = self.vdevs[0].len() as u64;
        let s = self.smallest(0);
        match self.layout {
            Layout::Stripe | Layout::BtrfsRaid0 => n * s,
            Layout::Raid5 | Layout::Raid6 | Layout::BtrfsRaid5 | Layout::BtrfsRaid6 => {
                (n - self.layout.parity() as u64) * s
            }
            Layout::Mirror => s,
            Layout::Raid10 | Layout::BtrfsRaid1 | Layout::BtrfsRaid1c3 | Layout::BtrfsRaid10 => {
                near_usable(n, s, self.near_unit(), self.layout.copies(n as usize) as u64)
            }
            Layout::Raidz1 | Layout::Raidz2 | Layout::Raidz3 | Layout::ZfsMirror => {
                (0..self.vdevs.len()).map(|v| zfs::vdev_usable(self, v)).sum()
            }
            Layout::Unraid => self.sizes[0][..self.unraid_split()].iter().sum(),
        }
    }

    /// The unit a near-copy layout places on one member before moving to the next: md's
    /// chunk (raid1, raid10 near-2), a btrfs data chunk's stripe (raid1, raid1c3) or btrfs's
    /// `BTRFS_STRIPE_LEN` (raid10).
    pub(crate) fn near_unit(&self) -> u64 {
        match self.layout {
            Layout::BtrfsRaid1 | Layout::BtrfsRaid1c3 => btrfs::mirror_chunk(self),
            Layout::BtrfsRaid10 => BTRFS_STRIPE_LEN,
            _ => self.chunk,
        }
    }

    /// Raw bytes of the members the pool can use (each striped member up to the smallest,
    /// unRAID every disk whole).
    pub fn raw_used_bytes(&self) -> u64 {
        match self.layout {
            Layout::Unraid => self.sizes[0].iter().sum(),
            _ => (0..self.vdevs.len()).map(|v| self.smallest(v) * self.vdevs[v].len() as u64).sum(),
        }
    }

    /// Raw bytes of the members beyond what the layout uses (members larger than the
    /// smallest of their vdev; unRAID loses nothing).
    pub fn lost_bytes(&self) -> u64 {
        let raw: u64 = self.sizes.iter().flatten().sum();
        raw - self.raw_used_bytes()
    }

    /// Checks that the pool survives these failed members: RAID 5/6 and RAIDZ lose at most
    /// their parity per vdev, mirrors all but one copy, RAID 10 one side of each pair.
    pub fn check_failed(&self, failed: &[NodeIx]) -> Result<(), FailedError> {
        let n = self.vdevs[0].len();
        let tm = |survives: String, failed: usize, group: String| FailedError::TooMany {
            pool: self.id.clone(),
            layout: self.layout.name(),
            survives,
            failed,
            group,
        };
        match self.layout {
            Layout::Stripe | Layout::BtrfsRaid0 if !failed.is_empty() => {
                return Err(tm("no failed member".into(), failed.len(), format!("its {n} members")));
            }
            Layout::Raid10 | Layout::BtrfsRaid1 | Layout::BtrfsRaid1c3 | Layout::BtrfsRaid10 => {
                // Near layout: the copies of a unit are `copies` consecutive members
                // (cyclically): any window of `copies` consecutive members all failed loses
                // data.
                let c = self.layout.copies(n);
                let pos: Vec<bool> = self.vdevs[0].iter().map(|d| failed.contains(d)).collect();
                let k = failed.len();
                // btrfs allocates block groups over any devices: it survives copies - 1.
                if self.layout.family() == Family::Btrfs {
                    if k >= c {
                        return Err(tm(format!("{} failed member(s)", c - 1), k, format!("its {n} members")));
                    }
                } else if (0..n).any(|s| (0..c).all(|j| pos[(s + j) % n])) || k >= n {
                    return Err(tm(
                        "one failure per mirror pair (near-2: members i and i+1 hold the same chunks)".into(),
                        k,
                        "a pair".into(),
                    ));
                }
            }
            _ => {
                let survives = match self.layout {
                    Layout::Mirror | Layout::ZfsMirror => None,
                    _ => Some(if self.layout == Layout::Unraid { self.parity } else { self.layout.parity() }),
                };
                for (v, members) in self.vdevs.iter().enumerate() {
                    let k = members.iter().filter(|d| failed.contains(d)).count();
                    let limit = survives.unwrap_or(members.len() - 1);
                    if k > limit {
                        let group = if self.vdevs.len() > 1 {
                            format!("vdev {v} ({} members)", members.len())
                        } else {
                            format!("its {} members", members.len())
                        };
                        return Err(tm(format!("{limit} failed member(s) per vdev"), k, group));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the layout can run a maintenance task (md RAID 0 has nothing to check).
    pub fn check_task(&self, task: Task) -> Result<(), String> {
        if task == Task::Scrub && self.layout == Layout::Stripe {
            return Err(format!(
                "pool {:?} is md RAID 0: it has no redundancy to scrub (md(4): `check` needs RAID 1, 4, 5, 6 or 10)",
                self.id
            ));
        }
        Ok(())
    }

    /// What one logical I/O does (degraded when `failed` is non-empty; `failed` must pass
    /// [`Pool::check_failed`], the loader and the binding check it). The I/O must lie in
    /// `0..usable_bytes`.
    pub fn map(&self, _t: &Topology, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
        self.map_io(io, failed)
    }

    /// [`Pool::map`] into `f`, replacing what it held: a ZFS pool reuses `f`'s buffers, so a
    /// simulator that keeps one `Fanout` per logical I/O slot allocates nothing per record.
    pub fn map_into(&self, t: &Topology, io: LogicalIo, failed: &[NodeIx], f: &mut Fanout) {
        if self.layout.family() == Family::Zfs {
            zfs::map_into(self, io, failed, f);
        } else {
            *f = self.map(t, io, failed);
        }
    }

    pub(crate) fn map_io(&self, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
        let mut f = match self.layout.family() {
            Family::Md => md::map(self, io, failed),
            Family::Btrfs => btrfs::map(self, io, failed),
            Family::Zfs => zfs::map(self, io, failed),
            Family::Unraid => unraid::map(self, io, failed),
        };
        // Per-byte work on the logical data (ZFS adds its own per record).
        if self.layout.family() == Family::Btrfs
            && let Some(k) = self.checksum
        {
            f.add_cpu(k, io.len);
        }
        f
    }

    /// Scrub or rebuild over `fill` of the pool (see [`Maintenance`]).
    pub fn maintenance(&self, _t: &Topology, task: Task, fill: f64, failed: &[NodeIx]) -> Maintenance {
        Maintenance::new(self, task, fill, failed)
    }
}

#[cfg(test)]
pub(crate) mod tests;

/// Logical bytes of a near-copy layout (`Near::copies_of`: unit `k` has its copies in slots
/// `c·k .. c·k+c-1`, slot `t` on member `t mod n` at row `t / n`) over `n` members of `size`
/// bytes: the whole units whose every copy lies in the `size / unit` full rows. md's
/// `raid10_size` (drivers/md/raid10.c) counts the same way: device sectors shifted down to
/// whole chunks, times the raid disks, divided by the near copies, shifted back up. It is
/// `n·size/c` only when `unit` divides `size` and `c` divides `n·rows`; a remainder is
/// never mapped, so no member I/O can land past a member's end.
fn near_usable(n: u64, size: u64, unit: u64, c: u64) -> u64 {
    n * (size / unit) / c * unit
}
