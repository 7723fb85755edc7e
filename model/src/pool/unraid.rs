//! unRAID: independent data disks (each its own filesystem) and one or two parity disks
//! (the last `parity` members) holding parity over the same offset of every data disk.
//!
//! - A logical offset maps to one data disk: iopath fills the data disks in order (the
//!   "fill-up" allocation method; unRAID's default "high-water" also fills one disk at a
//!   time, in steps of half the largest disk's free space); a disk smaller than an offset
//!   counts as zeros in the parity there.
//! - Reads touch one disk. A failed data disk is read from every other data disk at that
//!   offset plus the parity (P alone when one disk is lost, P and Q for two).
//! - Writes, `write_mode = "rmw"` (unRAID's default read/modify/write): read the old data
//!   and the old parity, then write the new data and parity: each parity disk does two
//!   I/Os per write, which is why unRAID writes are slow. `"turbo"` (reconstruct write):
//!   read the same offset on every other data disk, then write data and parity.

use super::{Fanout, LogicalIo, MemberIo, Pool, WriteMode};
use crate::cpu::Kernel;
use crate::topology::NodeIx;

/// The data disk (position) and offset on it of logical offset `o`, and the bytes left on
/// that disk from `o`.
pub(crate) fn locate(pool: &Pool, o: u64) -> (usize, u64, u64) {
    let nd = pool.unraid_split();
    let mut start = 0;
    for i in 0..nd {
        let s = pool.sizes[0][i];
        if o < start + s {
            return (i, o - start, start + s - o);
        }
        start += s;
    }
    (nd - 1, o - (start - pool.sizes[0][nd - 1]), 0)
}

fn parity_kernel(pool: &Pool) -> Kernel {
    if pool.parity == 1 { Kernel::Xor } else { Kernel::RaidPq }
}

/// Reads of `[x, x + l)` on every data disk but `skip` that reaches that far, clipped to
/// the disk.
fn others(pool: &Pool, skip: usize, x: u64, l: u64, failed: &[NodeIx]) -> Vec<MemberIo> {
    let m = &pool.vdevs[0];
    (0..pool.unraid_split())
        .filter(|&i| i != skip && !failed.contains(&m[i]) && pool.sizes[0][i] > x)
        .map(|i| MemberIo::read(m[i], x, l.min(pool.sizes[0][i] - x)))
        .collect()
}

pub(crate) fn map(pool: &Pool, io: LogicalIo, failed: &[NodeIx]) -> Fanout {
    let m = &pool.vdevs[0];
    let nd = pool.unraid_split();
    let parity: Vec<NodeIx> = m[nd..].iter().copied().filter(|d| !failed.contains(d)).collect();
    let k = parity_kernel(pool);
    let mut f = Fanout::default();
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    // Split where a data disk ends.
    let mut pcs = Vec::new();
    let mut at = io.offset;
    while at < io.offset + io.len {
        let (i, x, left) = locate(pool, at);
        let l = (io.offset + io.len - at).min(left.max(1));
        pcs.push((i, x, l));
        at += l;
    }
    for (i, x, l) in pcs {
        let disk = m[i];
        let dead = failed.contains(&disk);
        if !io.write {
            if dead {
                reads.extend(others(pool, i, x, l, failed));
                let lost = m[..nd].iter().filter(|d| failed.contains(d)).count();
                reads.extend(parity.iter().take(lost).map(|&p| MemberIo::read(p, x, l)));
                f.add_cpu(k, nd as u64 * l);
            } else {
                reads.push(MemberIo::read(disk, x, l));
            }
            continue;
        }
        if pool.write_mode == WriteMode::Turbo || dead {
            reads.extend(others(pool, i, x, l, failed));
            f.add_cpu(k, nd as u64 * l);
        } else {
            reads.push(MemberIo::read(disk, x, l));
            reads.extend(parity.iter().map(|&p| MemberIo::read(p, x, l)));
            f.add_cpu(k, 2 * l);
        }
        if !dead {
            writes.push(MemberIo::write(disk, x, l));
        }
        writes.extend(parity.iter().map(|&p| MemberIo::write(p, x, l)));
    }
    f.push_phase(reads);
    f.push_phase(writes);
    f
}
