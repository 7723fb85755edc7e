//! Linux md: RAID 0, RAID 1, RAID 10 ("near 2") and RAID 5/6 (left-symmetric), and the
//! striping arithmetic btrfs shares.
//!
//! - RAID 0: logical chunk `k` is on member `k % n` at `(k / n) x chunk`
//!   (drivers/md/raid0.c, one zone when the members are equal).
//! - Near layouts (RAID 1, RAID 10 near-2; btrfs raid1/raid1c3/raid10 reuse it): copy `j`
//!   of logical unit `k` is slot `s = c k + j`, on member `s % n` at `(s / n) x unit`
//!   (md(4) "near" layout: "each chunk is repeated n times ... on consecutive devices").
//! - RAID 5/6 left-symmetric (md's default; drivers/md/raid5.c `raid5_compute_sector`,
//!   ALGORITHM_LEFT_SYMMETRIC): row `r` has P on member `n - 1 - r % n`, RAID 6's Q on the
//!   next, and data unit `i` on `(P + 1 + i) % n` (RAID 5) or `(P + 2 + i) % n` (RAID 6).
//! - Writes are handled in 4 KiB stripe heads (one page of the row on every member): a page
//!   column written on every data member is a full-stripe write (parity from the new data
//!   only, no reads); otherwise md counts the reads read-modify-write needs (old data of the
//!   written members + the parities) and reconstruct-write needs (the data members not
//!   wholly overwritten) and takes RMW only if it needs fewer (drivers/md/raid5.c
//!   `handle_stripe_dirtying`: `rmw < rcw` with the default `rmw_level` PARITY_ENABLE_RMW,
//!   so a tie goes to RCW). RAID 6 RMW exists since Linux 4.1 (commit d06f191f8ecc,
//!   "md/raid5: introduce configuration option rmw_level").
//! - Sequential writes gather in the stripe cache: a stripe head that would need reads
//!   before it can be written (RMW or RCW) and is not yet "preread active" is parked on
//!   the delayed list (raid5.c `handle_stripe_dirtying`: `set_bit(STRIPE_DELAYED, ...)`)
//!   and only released when no other pre-reading stripe is active
//!   (`raid5_activate_delayed`: `preread_active_stripes < IO_THRESHOLD`, 1) or the
//!   submitter's plug is flushed (`raid5_unplug`); meanwhile the stream's next bios join the
//!   same stripe heads (`add_stripe_bio`), and a head whose data pages are all overwritten
//!   needs no reads (a full-stripe write). So when every I/O of a sequential job touching a
//!   row is in flight together (at most its `iodepth`) and the row's `chunk / 4 KiB`
//!   stripe heads fit the stripe cache (`stripe_cache_size`, 256), the row is written
//!   whole, once: 1 MiB writes at QD 8 on RAID 6 of 8 with 512 KiB chunks (rows of 3 MiB,
//!   128 heads) move 8/6 member bytes per logical byte. At QD 1 each write is handled on
//!   its own (today's per-I/O RMW/RCW; the pages md still caches from the previous write
//!   of the row, which would spare some reads, are not modelled).
//! - Degraded reads of a failed member's unit read every surviving member at the same
//!   offsets (raid5.c `need_this_block`: with a failed device to compute, every other block
//!   of the stripe is read) and reconstruct with XOR (RAID 5) or the RAID 6 syndrome.

use super::{Fanout, Layout, LogicalIo, MemberIo, PAGE, Pool};
use crate::cpu::Kernel;
use crate::topology::NodeIx;
use std::collections::BTreeSet;

pub(crate) fn map(pool: &Pool, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
    let m = &pool.vdevs[0];
    match pool.layout {
        Layout::Stripe => stripe(m, pool.chunk, io),
        Layout::Mirror => Near { members: m, unit: pool.chunk, copies: m.len() }.map(io, failed, None),
        Layout::Raid10 => Near { members: m, unit: pool.chunk, copies: 2 }.map(io, failed, None),
        _ => {
            let rows = Rows { members: m, unit: pool.chunk, p: pool.layout.parity(), place: md_place };
            if io.write { rows.md_write(io, failed, pool.stripe_cache) } else { rows.read(io, failed) }
        }
    }
}

/// Splits `[off, off + len)` at multiples of `unit`: (offset, length) pieces.
pub(crate) fn pieces(off: u64, len: u64, unit: u64) -> impl Iterator<Item = (u64, u64)> {
    let end = off + len;
    let mut at = off;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let next = ((at / unit + 1) * unit).min(end);
        let p = (at, next - at);
        at = next;
        Some(p)
    })
}

/// RAID 0 (and btrfs raid0): chunk `k` on member `k % n` at `(k / n) x chunk`.
pub(crate) fn stripe(members: &[NodeIx], chunk: u64, io: LogicalIo) -> Fanout {
    let n = members.len() as u64;
    let ios = pieces(io.offset, io.len, chunk)
        .map(|(o, l)| {
            let k = o / chunk;
            let d = members[(k % n) as usize];
            let mo = (k / n) * chunk + o % chunk;
            MemberIo { drive: d, write: io.write, offset: mo, len: l, alternatives: Vec::new() }
        })
        .collect();
    let mut f = Fanout::default();
    f.push_phase(ios);
    f
}

/// A near layout: `copies` copies of each `unit` on consecutive members.
pub(crate) struct Near<'a> {
    pub members: &'a [NodeIx],
    pub unit: u64,
    pub copies: usize,
}

impl Near<'_> {
    /// The copies of the unit holding logical offset `o`: (member position, member offset).
    pub(crate) fn copies_of(&self, o: u64) -> Vec<(usize, u64)> {
        let n = self.members.len() as u64;
        let k = o / self.unit;
        (0..self.copies as u64)
            .map(|j| {
                let s = self.copies as u64 * k + j;
                ((s % n) as usize, (s / n) * self.unit + o % self.unit)
            })
            .collect()
    }

    /// Reads go to one surviving copy: copy `job % copies` when `pick_by_job` is given
    /// (btrfs `find_live_mirror`, read_policy "pid": `pid % num_stripes`, the next live copy
    /// if that one is missing), else the first surviving copy with the others as
    /// alternatives (md raid1 `read_balance` picks at run time). Writes go to every
    /// surviving copy.
    pub(crate) fn map(&self, io: LogicalIo, failed: &[NodeIx], pick_by_job: Option<u32>) -> Fanout {
        let mut ios = Vec::new();
        for (o, l) in pieces(io.offset, io.len, self.unit) {
            let live: Vec<(NodeIx, u64)> = self
                .copies_of(o)
                .into_iter()
                .map(|(p, mo)| (self.members[p], mo))
                .filter(|(d, _)| !failed.contains(d))
                .collect();
            if io.write {
                ios.extend(live.iter().map(|&(d, mo)| MemberIo::write(d, mo, l)));
                continue;
            }
            match pick_by_job {
                Some(job) => {
                    let all = self.copies_of(o);
                    let start = job as usize % all.len();
                    let pick = (0..all.len())
                        .map(|j| all[(start + j) % all.len()])
                        .map(|(p, mo)| (self.members[p], mo))
                        .find(|(d, _)| !failed.contains(d));
                    if let Some((d, mo)) = pick {
                        ios.push(MemberIo::read(d, mo, l));
                    }
                }
                None => {
                    if let Some(&(d, mo)) = live.first() {
                        // The alternatives hold the bytes at the same offset only when the
                        // copies sit at one offset (RAID 1); RAID 10 near-2 copies in one
                        // row do too (same `s / n`) unless the pair wraps a row.
                        let alts = live[1..].iter().filter(|&&(_, m2)| m2 == mo).map(|&(a, _)| a).collect();
                        ios.push(MemberIo { drive: d, write: false, offset: mo, len: l, alternatives: alts });
                    }
                }
            }
        }
        let mut f = Fanout::default();
        f.push_phase(ios);
        f
    }
}

/// Where a row's data units and parity units are, by member position.
pub(crate) struct Place {
    pub data: Vec<usize>,
    pub parity: Vec<usize>,
}

/// md left-symmetric (raid5.c `raid5_compute_sector`, ALGORITHM_LEFT_SYMMETRIC).
pub(crate) fn md_place(n: usize, p: usize, row: u64) -> Place {
    let pd = n - 1 - (row % n as u64) as usize;
    let parity: Vec<usize> = (0..p).map(|j| (pd + j) % n).collect();
    let data = (0..n - p).map(|i| (pd + p + i) % n).collect();
    Place { data, parity }
}

/// Parity rows: `n - p` data units of `unit` bytes and `p` parity units per row.
pub(crate) struct Rows<'a> {
    pub members: &'a [NodeIx],
    pub unit: u64,
    pub p: usize,
    pub place: fn(usize, usize, u64) -> Place,
}

impl Rows<'_> {
    fn d(&self) -> usize {
        self.members.len() - self.p
    }

    pub(crate) fn parity_kernel(&self) -> Kernel {
        if self.p == 1 { Kernel::Xor } else { Kernel::RaidPq }
    }

    /// Row, data index and member offset of logical offset `o`.
    pub(crate) fn locate(&self, o: u64) -> (u64, usize, u64) {
        let k = o / self.unit;
        let d = self.d() as u64;
        let row = k / d;
        (row, (k % d) as usize, row * self.unit + o % self.unit)
    }

    /// A read: each piece from its data member; a piece on a failed member from every
    /// surviving member of its row at the same offsets, reconstructed by the parity kernel
    /// over the row's data bytes.
    pub(crate) fn read(&self, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
        let n = self.members.len();
        let mut f = Fanout::default();
        let mut ios = Vec::new();
        for (o, l) in pieces(io.offset, io.len, self.unit) {
            let (row, i, mo) = self.locate(o);
            let pl = (self.place)(n, self.p, row);
            let d = self.members[pl.data[i]];
            if !failed.contains(&d) {
                ios.push(MemberIo::read(d, mo, l));
                continue;
            }
            for &m in self.members.iter().filter(|m| !failed.contains(m)) {
                ios.push(MemberIo::read(m, mo, l));
            }
            f.add_cpu(self.parity_kernel(), self.d() as u64 * l);
        }
        f.push_phase(ios);
        f
    }

    /// Page offsets (within the unit) the write touches in `row`, and for each data index
    /// the bytes written in each of those pages.
    fn row_pages(&self, row: u64, off: u64, end: u64) -> BTreeSet<u64> {
        let d = self.d() as u64;
        let mut pages = BTreeSet::new();
        for i in 0..d {
            let us = (row * d + i) * self.unit;
            let (a, b) = (off.max(us), end.min(us + self.unit));
            if a < b {
                let mut pg = (a - us) / PAGE * PAGE;
                while us + pg < b {
                    pages.insert(pg);
                    pg += PAGE;
                }
            }
        }
        pages
    }

    /// Bytes of the write in data unit `i` of `row` at page `pg`.
    fn covered(&self, row: u64, i: usize, pg: u64, off: u64, end: u64) -> u64 {
        let s = (row * self.d() as u64 + i as u64) * self.unit + pg;
        let e = s + PAGE.min(self.unit);
        end.min(e).saturating_sub(off.max(s))
    }

    /// The spans of logical bytes md writes for this I/O (see the module notes): the I/O's
    /// own bytes, except on a sequential stream (`depth` > 0) whose I/Os touching a row are
    /// all in flight together and whose row fits the stripe cache: then the row's stripe
    /// heads wait on the delayed list until the I/O that reaches the row's end arrives, and
    /// that I/O writes the row's bytes of the stream at once (a full stripe when the stream
    /// covers the whole row); the I/Os before it in the row write nothing themselves.
    /// `cache` is the pool's stripe cache in stripe heads (`stripe_cache_size`).
    pub(crate) fn write_spans(&self, io: LogicalIo, cache: u64) -> Vec<(u64, u64)> {
        let (off, end) = (io.offset, io.offset + io.len);
        let row_bytes = self.d() as u64 * self.unit;
        let heads = self.unit.div_ceil(PAGE);
        if io.depth == 0 || heads > cache {
            return vec![(off, end)];
        }
        let mut spans = Vec::new();
        for row in off / row_bytes..=(end - 1) / row_bytes {
            let (rs, re) = (row * row_bytes, (row + 1) * row_bytes);
            // Where the stream's bytes in this row start: the row's start when the I/O
            // begins there or continues a stream (an earlier I/O of it is in the row), else
            // the I/O's own start (a stream beginning inside the row).
            let s0 = if io.stream || off <= rs { rs } else { off };
            // The stream's I/Os (consecutive, `len` bytes each, this one at `off`) that
            // touch [s0, re).
            let (len, o) = (io.len as i128, off as i128);
            let first = (s0 as i128 - o).div_euclid(len);
            let last = (re as i128 - o + len - 1).div_euclid(len) - 1;
            if last - first < i128::from(io.depth) {
                if end >= re {
                    spans.push((s0, re));
                }
            } else {
                spans.push((off.max(rs), end.min(re)));
            }
        }
        spans
    }

    /// md's write path, one 4 KiB stripe head at a time (see the module notes), over the
    /// spans [`Rows::write_spans`] gives.
    pub(crate) fn md_write(&self, io: LogicalIo, failed: &[NodeIx], cache: u64) -> Fanout {
        let mut f = Fanout::default();
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for (off, end) in self.write_spans(io, cache) {
            self.write_pages(off, end, failed, &mut f, &mut reads, &mut writes);
        }
        f.push_phase(reads);
        f.push_phase(writes);
        f
    }

    /// The stripe heads of `[off, end)`: each chooses full-stripe, read-modify-write or
    /// reconstruct-write and adds its reads, writes and parity work.
    fn write_pages(
        &self,
        off: u64,
        end: u64,
        failed: &[NodeIx],
        f: &mut Fanout,
        reads: &mut Vec<MemberIo>,
        writes: &mut Vec<MemberIo>,
    ) {
        let n = self.members.len();
        let d = self.d();
        let page = PAGE.min(self.unit);
        let row_bytes = d as u64 * self.unit;
        let k = self.parity_kernel();
        for row in off / row_bytes..=(end - 1) / row_bytes {
            let pl = (self.place)(n, self.p, row);
            for pg in self.row_pages(row, off, end) {
                let mo = row * self.unit + pg;
                let cov: Vec<u64> = (0..d).map(|i| self.covered(row, i, pg, off, end)).collect();
                let dead = |pos: usize| failed.contains(&self.members[pos]);
                let written: Vec<usize> = (0..d).filter(|&i| cov[i] > 0).collect();
                let not_full: Vec<usize> = (0..d).filter(|&i| cov[i] < page).collect();
                let parity_live: Vec<usize> = pl.parity.iter().copied().filter(|&q| !dead(q)).collect();
                let rmw_ok = written.iter().all(|&i| !dead(pl.data[i]));
                let rcw_ok = not_full.iter().all(|&i| !dead(pl.data[i]));
                let rmw = written.len() + parity_live.len();
                let rcw = not_full.len();
                let read_pos: Vec<usize> = if rcw == 0 && rcw_ok {
                    Vec::new()
                } else if rmw_ok && (rmw < rcw || !rcw_ok) {
                    f.add_cpu(k, 2 * written.len() as u64 * page);
                    written.iter().map(|&i| pl.data[i]).chain(parity_live.iter().copied()).collect()
                } else if rcw_ok {
                    f.add_cpu(k, d as u64 * page);
                    not_full.iter().map(|&i| pl.data[i]).collect()
                } else {
                    // Neither method has its blocks: read everything that survives and is
                    // not wholly overwritten, reconstruct, then write.
                    f.add_cpu(k, 2 * d as u64 * page);
                    not_full.iter().map(|&i| pl.data[i]).chain(parity_live.iter().copied()).collect()
                };
                if rcw == 0 && rcw_ok {
                    f.add_cpu(k, d as u64 * page);
                }
                reads.extend(
                    read_pos.into_iter().filter(|&q| !dead(q)).map(|q| MemberIo::read(self.members[q], mo, page)),
                );
                let targets = written.iter().map(|&i| pl.data[i]).chain(parity_live.iter().copied());
                writes.extend(targets.filter(|&q| !dead(q)).map(|q| MemberIo::write(self.members[q], mo, page)));
            }
        }
    }
}
