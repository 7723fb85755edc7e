//! btrfs profiles over one set of devices.
//!
//! - raid0/raid5/raid6 stripe `BTRFS_STRIPE_LEN` (64 KiB) elements over every device of
//!   the chunk; raid10 stripes them over mirror pairs (`sub_stripes = 2`), which is the near
//!   layout of [`super::md::Near`] with a 64 KiB unit.
//! - raid1/raid1c3: 2 or 3 copies of each block group on the devices with the most free
//!   space: equal devices take turns, the near layout whose unit is the data chunk's
//!   per-device stripe ([`mirror_chunk`]: 1 GiB, less on small file systems).
//! - Mirror reads: `find_live_mirror` with the default `read_policy` "pid" picks copy
//!   `pid % num_copies` (fs/btrfs/volumes.c), so one job reads from one device only.
//! - raid5/6: full stripe number `s` has its data stripes rotated by `s % n` (parity after
//!   the data, fs/btrfs/volumes.c `btrfs_map_block`'s `raid_map` rotation). A write that
//!   covers a full stripe writes data and parity; a partial one reads every data sector of
//!   the full stripe it does not overwrite (fs/btrfs/raid56.c: the rbio covers the full
//!   stripe and the rest is read before parity is computed), then writes the dirty sectors
//!   and parity at their offsets (`finish_rmw` skips clean sectors).
//! - Data checksums: crc32c per 4 KiB data block on write and read (metadata is ignored:
//!   its share of the I/O is small for large files and not modelled).

use super::md::{Near, Place, Rows, pieces, stripe};
use super::{BTRFS_STRIPE_LEN, Fanout, Layout, LogicalIo, MemberIo, PAGE, Pool};
use crate::topology::NodeIx;
use std::collections::BTreeSet;

/// btrfs's largest data chunk stripe per device: 1 GiB (fs/btrfs/volumes.c,
/// `init_alloc_chunk_ctl_policy_regular`: data block groups get `max_stripe_size = SZ_1G`).
pub const BLOCK_GROUP: u64 = 1 << 30;

/// The per-device stripe of a raid1/raid1c3 data chunk. btrfs caps a chunk at 10% of the
/// file system's writable bytes as well as at 1 GiB per device
/// (`init_alloc_chunk_ctl_policy_regular`; `decide_stripe_size_regular` rounds the 10% up to
/// 16 MiB, then down to `BTRFS_STRIPE_LEN`), so a small file system gets small chunks: two
/// 256 MiB devices in raid1 get 64 MiB chunks and store 256 MiB, where 1 GiB chunks would
/// fit none. A mirror chunk has one data stripe, so its size is its per-device stripe.
pub(crate) fn mirror_chunk(pool: &Pool) -> u64 {
    const SZ_16M: u64 = 16 << 20;
    let writable: u64 = pool.sizes.iter().flatten().sum();
    let tenth = (writable / 10).div_ceil(SZ_16M) * SZ_16M;
    let stripe = tenth.min(BLOCK_GROUP).min(pool.smallest(0));
    (stripe / BTRFS_STRIPE_LEN * BTRFS_STRIPE_LEN).max(BTRFS_STRIPE_LEN)
}

pub(crate) fn map(pool: &Pool, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
    let m = &pool.vdevs[0];
    let pick = Some(io.job);
    match pool.layout {
        Layout::BtrfsRaid0 => stripe(m, BTRFS_STRIPE_LEN, io),
        // The near layouts, with the unit `Pool::near_unit` gives capacity and maintenance.
        Layout::BtrfsRaid1 | Layout::BtrfsRaid1c3 | Layout::BtrfsRaid10 => {
            Near { members: m, unit: pool.near_unit(), copies: pool.layout.copies(m.len()) }.map(io, failed, pick)
        }
        _ => {
            let rows = Rows { members: m, unit: BTRFS_STRIPE_LEN, p: pool.layout.parity(), place: btrfs_place };
            if io.write { raid56_write(&rows, io, failed) } else { rows.read(io, failed) }
        }
    }
}

/// btrfs raid5/6: data stripe `i` of full stripe `s` on device `(i + s) % n`, P then Q after
/// the data.
pub(crate) fn btrfs_place(n: usize, p: usize, row: u64) -> Place {
    let rot = (row % n as u64) as usize;
    Place { data: (0..n - p).map(|i| (i + rot) % n).collect(), parity: (0..p).map(|j| (n - p + j + rot) % n).collect() }
}

/// A raid5/6 write, full stripe by full stripe (see the module notes).
fn raid56_write(rows: &Rows, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
    let n = rows.members.len();
    let d = n - rows.p;
    let unit = rows.unit;
    let row_bytes = d as u64 * unit;
    let (off, end) = (io.offset, io.offset + io.len);
    let mut f = Fanout::default();
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    let dead = |pos: usize| failed.contains(&rows.members[pos]);
    for row in off / row_bytes..=(end - 1) / row_bytes {
        let pl = btrfs_place(n, rows.p, row);
        let rs = row * row_bytes;
        // Dirty pages per data stripe and the union of their offsets.
        let mut dirty: Vec<BTreeSet<u64>> = vec![BTreeSet::new(); d];
        let mut offsets = BTreeSet::new();
        for (o, l) in pieces(off.max(rs), end.min(rs + row_bytes) - off.max(rs), PAGE) {
            let i = ((o - rs) / unit) as usize;
            let pg = (o - rs) % unit / PAGE * PAGE;
            let _ = l;
            dirty[i].insert(pg);
            offsets.insert(pg);
        }
        let full = off <= rs && end >= rs + row_bytes;
        let mo = row * unit;
        if !full {
            // Every data sector of the full stripe not wholly overwritten is read.
            let mut lost = false;
            for i in 0..d {
                for pg in (0..unit).step_by(PAGE as usize) {
                    let s = rs + i as u64 * unit + pg;
                    let whole = off <= s && end >= s + PAGE;
                    if whole {
                        continue;
                    }
                    if dead(pl.data[i]) {
                        lost = true;
                    } else {
                        reads.push(MemberIo::read(rows.members[pl.data[i]], mo + pg, PAGE));
                    }
                }
            }
            if lost {
                // A missing data stripe is rebuilt from the parity first.
                for &q in pl.parity.iter().filter(|&&q| !dead(q)) {
                    reads.push(MemberIo::read(rows.members[q], mo, unit));
                }
                f.add_cpu(rows.parity_kernel(), d as u64 * unit);
            }
        }
        for (i, pages) in dirty.iter().enumerate() {
            if dead(pl.data[i]) {
                continue;
            }
            for &pg in pages {
                writes.push(MemberIo::write(rows.members[pl.data[i]], mo + pg, PAGE));
            }
        }
        for &q in pl.parity.iter().filter(|&&q| !dead(q)) {
            for &pg in &offsets {
                writes.push(MemberIo::write(rows.members[q], mo + pg, PAGE));
            }
        }
        f.add_cpu(rows.parity_kernel(), d as u64 * offsets.len() as u64 * PAGE);
    }
    f.push_phase(reads);
    f.push_phase(writes);
    f
}
