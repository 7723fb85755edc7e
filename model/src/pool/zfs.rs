//! ZFS: a pool of vdevs (mirror, RAIDZ1/2/3) storing records of `recordsize` bytes.
//!
//! - Records go to vdevs in turn (record `R` on vdev `R % vdevs`): an approximation of the
//!   metaslab allocator, which spreads writes by free space (equal for equal vdevs).
//! - On a vdev, records are allocated one after another (a fresh pool's metaslabs fill
//!   in order): record `j` of a RAIDZ vdev starts at sector `j x asize`.
//! - RAIDZ (module/zfs/vdev_raidz.c): a record of `s = ceil(psize / 2^ashift)` data sectors
//!   over `n - p` data columns needs `p` parity sectors per row, `p x ceil(s / (n - p))`,
//!   and the allocation is rounded up to a multiple of `p + 1` (skip sectors;
//!   `vdev_raidz_asize`). `vdev_raidz_map_alloc` lays the columns out from the record's
//!   start sector `b`: column `c` is on disk `(b + c) % n` (one sector further down when it
//!   wraps), parity columns first; the first `r + p` columns hold `q + 1` sectors and the
//!   rest `q` (`q = s / (n - p)`, `r = s mod (n - p)`). So a record touches each disk once.
//!   Skip sectors are allocated, never written.
//! - ZFS reads whole blocks: a read of part of a record reads (and checksums) the whole
//!   record, from the data columns only when healthy; a column on a failed disk makes it
//!   read every surviving column and reconstruct.
//! - Writes are copy-on-write and always full records (no RMW of parity); a write of part
//!   of a record first reads the record (`dmu_buf_will_dirty` reads the old block), unless
//!   it continues a sequential stream (the transaction group collects the whole record).
//! - CPU: the checksum (fletcher4 by default) over the record on write and read; parity
//!   (raidz1 XOR, raidz2 P+Q, raidz3 P+Q+R) over the record's data on write and on
//!   reconstruction; compression and encryption over the record (ratio 1: no ratio is
//!   sourced for unknown data).

use super::md::pieces;
use super::{Fanout, Layout, LogicalIo, MemberIo, Pool};
use crate::cpu::Kernel;
use crate::topology::NodeIx;

/// Sectors a RAIDZ vdev allocates for `psize` bytes (module/zfs/vdev_raidz.c
/// `vdev_raidz_asize`), in units of `2^ashift`.
pub fn asize_sectors(psize: u64, ashift: u32, n: usize, p: usize) -> u64 {
    let (n, p) = (n as u64, p as u64);
    let s = ((psize - 1) >> ashift) + 1;
    let a = s + p * s.div_ceil(n - p);
    a.div_ceil(p + 1) * (p + 1)
}

/// One column of a RAIDZ record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Member position in the vdev.
    pub disk: usize,
    /// Sector offset on the disk.
    pub sector: u64,
    pub sectors: u64,
    pub parity: bool,
}

/// A RAIDZ record's columns (module/zfs/vdev_raidz.c `vdev_raidz_map_alloc`) when it
/// starts at vdev sector `b`, and its skip sectors.
pub fn raidz_columns(n: usize, p: usize, ashift: u32, b: u64, psize: u64) -> (Vec<Column>, u64) {
    let s = ((psize - 1) >> ashift) + 1;
    let dc = (n - p) as u64;
    let (q, r) = (s / dc, s % dc);
    let bc = if r == 0 { 0 } else { r + p as u64 };
    let acols = if q == 0 { bc } else { n as u64 };
    let tot = s + p as u64 * (q + u64::from(r != 0));
    let (f, o) = (b % n as u64, b / n as u64);
    let cols = (0..acols)
        .map(|c| {
            let mut col = f + c;
            let mut coff = o;
            if col >= n as u64 {
                col -= n as u64;
                coff += 1;
            }
            Column { disk: col as usize, sector: coff, sectors: if c < bc { q + 1 } else { q }, parity: c < p as u64 }
        })
        .collect();
    (cols, asize_sectors(psize, ashift, n, p) - tot)
}

fn parity_kernel(p: usize) -> Kernel {
    match p {
        1 => Kernel::Xor,
        2 => Kernel::RaidPq,
        _ => Kernel::RaidPqr,
    }
}

/// Records a vdev holds.
fn vdev_records(pool: &Pool, v: usize) -> u64 {
    let n = pool.vdevs[v].len();
    let s = pool.smallest(v);
    match pool.layout {
        Layout::ZfsMirror => s / pool.recordsize,
        _ => {
            let per = asize_sectors(pool.recordsize, pool.ashift, n, pool.layout.parity());
            (n as u64 * (s >> pool.ashift)) / per
        }
    }
}

/// Usable bytes of vdev `v` as the pool uses it: records go to vdevs in turn, so every
/// vdev holds as many as the smallest.
pub(crate) fn vdev_usable(pool: &Pool, _v: usize) -> u64 {
    let min = (0..pool.vdevs.len()).map(|v| vdev_records(pool, v)).min().unwrap_or(0);
    min * pool.recordsize
}

/// The member I/Os of record `rec` of the pool: reads (data columns, or every surviving
/// column when a data column is lost or `all` is set) or writes (every surviving column),
/// and whether reconstruction was needed.
pub(crate) fn record_ios(pool: &Pool, rec: u64, write: bool, all: bool, failed: &[NodeIx]) -> (Vec<MemberIo>, bool) {
    let nv = pool.vdevs.len() as u64;
    let v = (rec % nv) as usize;
    let j = rec / nv;
    let members = &pool.vdevs[v];
    let dead = |d: &NodeIx| failed.contains(d);
    let rs = pool.recordsize;
    if pool.layout == Layout::ZfsMirror {
        let live: Vec<NodeIx> = members.iter().copied().filter(|d| !dead(d)).collect();
        let ios = if write || all {
            live.iter()
                .map(|&d| MemberIo { drive: d, write, offset: j * rs, len: rs, alternatives: Vec::new() })
                .collect()
        } else {
            vec![MemberIo { drive: live[0], write: false, offset: j * rs, len: rs, alternatives: live[1..].to_vec() }]
        };
        return (ios, false);
    }
    let p = pool.layout.parity();
    let per = asize_sectors(rs, pool.ashift, members.len(), p);
    let (cols, _) = raidz_columns(members.len(), p, pool.ashift, j * per, rs);
    let lost = cols.iter().any(|c| !c.parity && dead(&members[c.disk]));
    let io = |c: &Column| MemberIo {
        drive: members[c.disk],
        write,
        offset: c.sector << pool.ashift,
        len: c.sectors << pool.ashift,
        alternatives: Vec::new(),
    };
    let ios = cols
        .iter()
        .filter(|c| c.sectors > 0 && !dead(&members[c.disk]))
        .filter(|c| write || all || lost || !c.parity)
        .map(io)
        .collect();
    (ios, lost)
}

/// The CPU work of moving one record: checksum, compression, encryption; parity on write.
fn record_cpu(pool: &Pool, f: &mut Fanout, write: bool, reconstruct: bool) {
    let rs = pool.recordsize;
    for k in [pool.checksum, pool.compression, pool.encryption].into_iter().flatten() {
        f.add_cpu(k, rs);
    }
    let p = pool.layout.parity();
    if p > 0 && (write || reconstruct) {
        f.add_cpu(parity_kernel(p), rs);
    }
}

pub(crate) fn map(pool: &Pool, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
    let rs = pool.recordsize;
    let mut f = Fanout::default();
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for (o, l) in pieces(io.offset, io.len, rs) {
        let rec = o / rs;
        let whole = l == rs;
        let starts = o % rs == 0;
        let ends = (o + l) % rs == 0;
        // Whether the record is read: reads (in a stream only from its first byte), and
        // partial writes outside a stream (the old block is read before it is dirtied).
        let read = if io.write { !whole && !io.stream } else { !io.stream || starts };
        if read {
            let (ios, lost) = record_ios(pool, rec, false, false, failed);
            reads.extend(ios);
            record_cpu(pool, &mut f, false, lost);
        }
        if io.write && (!io.stream || ends) {
            let (ios, _) = record_ios(pool, rec, true, false, failed);
            writes.extend(ios);
            record_cpu(pool, &mut f, true, false);
        }
    }
    f.push_phase(reads);
    f.push_phase(writes);
    f
}
