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
    let m = RaidzMap::new(n, p, ashift, b, psize);
    let cols = (0..m.acols).map(|c| m.column(c)).collect();
    (cols, asize_sectors(psize, ashift, n, p) - m.tot)
}

/// The arithmetic of [`raidz_columns`], column by column with nothing allocated (the
/// simulator maps a record per logical I/O).
struct RaidzMap {
    n: u64,
    p: u64,
    q: u64,
    /// Columns holding `q + 1` sectors.
    bc: u64,
    acols: u64,
    /// The first column's disk and sector.
    f: u64,
    o: u64,
    /// Sectors written: data and parity.
    tot: u64,
}

impl RaidzMap {
    fn new(n: usize, p: usize, ashift: u32, b: u64, psize: u64) -> RaidzMap {
        let (n, p) = (n as u64, p as u64);
        let s = ((psize - 1) >> ashift) + 1;
        let dc = n - p;
        let (q, r) = (s / dc, s % dc);
        let bc = if r == 0 { 0 } else { r + p };
        let acols = if q == 0 { bc } else { n };
        RaidzMap { n, p, q, bc, acols, f: b % n, o: b / n, tot: s + p * (q + u64::from(r != 0)) }
    }

    fn column(&self, c: u64) -> Column {
        let mut col = self.f + c;
        let mut coff = self.o;
        if col >= self.n {
            col -= self.n;
            coff += 1;
        }
        Column {
            disk: col as usize,
            sector: coff,
            sectors: if c < self.bc { self.q + 1 } else { self.q },
            parity: c < self.p,
        }
    }

    /// The columns in disk order: those that wrapped past the last disk first. A phase's
    /// I/Os are then already in the order [`super::merge`] sorts them into, so it skips the
    /// sort (the merged phase is the same in either order).
    fn by_disk(&self) -> impl Iterator<Item = Column> + '_ {
        let split = self.split();
        (split..self.acols).chain(0..split).map(|c| self.column(c))
    }

    /// The first column that wraps past the last disk ([`RaidzMap::by_disk`] starts there).
    fn split(&self) -> u64 {
        (self.n - self.f).min(self.acols)
    }
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
    let mut ios = Vec::new();
    let lost = record_ios_into(pool, rec, write, all, failed, &mut ios);
    (ios, lost)
}

/// [`record_ios`] appended to `out`: a RAIDZ record allocates nothing but `out`'s growth.
fn record_ios_into(pool: &Pool, rec: u64, write: bool, all: bool, failed: &[NodeIx], out: &mut Vec<MemberIo>) -> bool {
    let nv = pool.vdevs.len() as u64;
    let v = (rec % nv) as usize;
    let j = rec / nv;
    let members = &pool.vdevs[v];
    let dead = |d: &NodeIx| failed.contains(d);
    let rs = pool.recordsize;
    if pool.layout == Layout::ZfsMirror {
        let mut live = members.iter().copied().filter(|d| !dead(d));
        if write || all {
            out.extend(live.map(|d| MemberIo { drive: d, write, offset: j * rs, len: rs, alternatives: Vec::new() }));
        } else if let Some(first) = live.next() {
            out.push(MemberIo { drive: first, write: false, offset: j * rs, len: rs, alternatives: live.collect() });
        }
        return false;
    }
    let p = pool.layout.parity();
    let per = asize_sectors(rs, pool.ashift, members.len(), p);
    let m = RaidzMap::new(members.len(), p, pool.ashift, j * per, rs);
    let lost = !failed.is_empty() && m.by_disk().any(|c| !c.parity && dead(&members[c.disk]));
    // One plain loop over the columns in disk order ([`RaidzMap::by_disk`]'s): the same
    // I/Os as `by_disk().filter().filter().map()` gave, at half the instructions per column
    // (this runs once per logical I/O in the simulator).
    let every = write || all || lost;
    let split = m.split();
    out.reserve(m.acols as usize);
    for c in (split..m.acols).chain(0..split) {
        let col = m.column(c);
        let drive = members[col.disk];
        if col.sectors == 0 || (!every && col.parity) || (!failed.is_empty() && dead(&drive)) {
            continue;
        }
        out.push(MemberIo {
            drive,
            write,
            offset: col.sector << pool.ashift,
            len: col.sectors << pool.ashift,
            alternatives: Vec::new(),
        });
    }
    lost
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
    let mut f = Fanout::default();
    map_into(pool, io, failed, &mut f);
    f
}

/// [`map`] into `f`, whose buffers (phases, CPU list) are reused: what it held is replaced.
pub(crate) fn map_into(pool: &Pool, io: LogicalIo, failed: &[NodeIx], f: &mut Fanout) {
    let rs = pool.recordsize;
    let mut spare = std::mem::take(&mut f.phases);
    f.cpu.clear();
    let mut buf = || {
        let mut v = spare.pop().unwrap_or_default();
        v.clear();
        v
    };
    let (mut reads, mut writes) = (None, None);
    for (o, l) in pieces(io.offset, io.len, rs) {
        let rec = o / rs;
        let whole = l == rs;
        let starts = o % rs == 0;
        let ends = (o + l) % rs == 0;
        // Whether the record is read: reads (in a stream only from its first byte), and
        // partial writes outside a stream (the old block is read before it is dirtied).
        let read = if io.write { !whole && !io.stream } else { !io.stream || starts };
        if read {
            let lost = record_ios_into(pool, rec, false, false, failed, reads.get_or_insert_with(&mut buf));
            record_cpu(pool, f, false, lost);
        }
        if io.write && (!io.stream || ends) {
            record_ios_into(pool, rec, true, false, failed, writes.get_or_insert_with(&mut buf));
            record_cpu(pool, f, true, false);
        }
    }
    spare.clear();
    f.phases = spare;
    f.push_phase(reads.unwrap_or_default());
    f.push_phase(writes.unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_disk_is_the_columns_sorted_by_disk() {
        // Every start sector over two full turns of the disks, wide and narrow records
        // (4 KiB on 8 disks fills fewer columns than disks), RAIDZ1 to RAIDZ3.
        for (n, p) in [(3, 1), (5, 1), (8, 2), (6, 2), (11, 3)] {
            for psize in [4u64 << 10, 12 << 10, 128 << 10, 1 << 20] {
                for b in 0..2 * n as u64 {
                    let (mut want, _) = raidz_columns(n, p, 12, b, psize);
                    want.sort_by_key(|c| c.disk);
                    let got: Vec<Column> = RaidzMap::new(n, p, 12, b, psize).by_disk().collect();
                    assert_eq!(got, want, "n {n} p {p} psize {psize} b {b}");
                }
            }
        }
    }
}
