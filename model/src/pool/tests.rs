//! Hand-worked cases of the pool arithmetic.

use super::*;

/// A pool over members 1..=n of `size` bytes each.
pub(crate) fn pool(layout: Layout, n: usize, size: u64) -> Pool {
    Pool {
        id: "p".into(),
        layout,
        vdevs: vec![(1..=n).collect()],
        sizes: vec![vec![size; n]],
        chunk: if layout.family() == Family::Btrfs { BTRFS_STRIPE_LEN } else { MD_DEFAULT_CHUNK },
        recordsize: ZFS_DEFAULT_RECORDSIZE,
        ashift: ZFS_DEFAULT_ASHIFT,
        parity: if layout == Layout::Unraid { 1 } else { layout.parity() },
        write_mode: WriteMode::Rmw,
        checksum: layout.default_checksum(),
        compression: None,
        encryption: None,
    }
}

#[test]
fn a_raidz2_record_of_128k_on_8_disks_at_ashift_12() {
    // 128 KiB / 4 KiB = 32 data sectors over 8 - 2 = 6 data columns: ceil(32 / 6) = 6 rows,
    // 2 x 6 = 12 parity sectors, 44 in all, rounded up to a multiple of p + 1 = 3: 45, one
    // skip sector. q = 32 / 6 = 5, r = 2: the first r + p = 4 columns (P, Q and two data
    // columns) hold 6 sectors, the other four data columns 5: 6 + 6 + 4 x 5 = 32 data.
    assert_eq!(zfs::asize_sectors(128 << 10, 12, 8, 2), 45);
    let (cols, skip) = zfs::raidz_columns(8, 2, 12, 0, 128 << 10);
    assert_eq!(skip, 1);
    let sectors: Vec<u64> = cols.iter().map(|c| c.sectors).collect();
    assert_eq!(sectors, [6, 6, 6, 6, 5, 5, 5, 5]);
    assert_eq!(cols.iter().filter(|c| c.parity).map(|c| c.sectors).sum::<u64>(), 12);
    assert_eq!(cols.iter().filter(|c| !c.parity).map(|c| c.sectors).sum::<u64>(), 32);
    // Each disk once: disks 0..7.
    let mut disks: Vec<usize> = cols.iter().map(|c| c.disk).collect();
    disks.sort();
    assert_eq!(disks, (0..8).collect::<Vec<_>>());
    // Through the pool: a write of the record puts 6 x 4 KiB on four disks and 5 x 4 KiB on
    // four: 44 x 4 KiB = 180,224 bytes; a read reads the 32 data sectors only.
    let p = pool(Layout::Raidz2, 8, 1 << 40);
    let w = p.map_io(LogicalIo::new(true, 0, 128 << 10), &[]);
    assert_eq!(w.member_bytes(true), 44 * 4096);
    let mut per: Vec<u64> = w.phases.concat().iter().map(|m| m.len).collect();
    per.sort();
    assert_eq!(per, [20480, 20480, 20480, 20480, 24576, 24576, 24576, 24576]);
    let r = p.map_io(LogicalIo::new(false, 0, 128 << 10), &[]);
    assert_eq!((r.member_bytes(false), r.member_ios(false)), (32 * 4096, 6));
    // The next record starts 45 sectors on: disk (45 % 8) = 5, sector 45 / 8 = 5.
    let (next, _) = zfs::raidz_columns(8, 2, 12, 45, 128 << 10);
    assert_eq!((next[0].disk, next[0].sector), (5, 5));
    assert_eq!((next[3].disk, next[3].sector), (0, 6), "column 3 wraps to disk 0, one sector down");
}

#[test]
fn a_4k_write_on_an_8_disk_raid6_with_512k_chunks_is_a_read_modify_write() {
    // 8 members, 6 data per row. A 4 KiB write at 0 dirties one page of data unit 0 of row 0:
    // RMW reads old data + P + Q = 3 pages; RCW would read the other 5 data pages. 3 < 5, so
    // md reads 3 x 4 KiB, then writes data + P + Q = 3 x 4 KiB. Row 0: P on member
    // n - 1 - 0 = 7 (drive 8), Q on (7 + 1) % 8 = 0 (drive 1), data 0 on (7 + 2) % 8 = 1
    // (drive 2).
    let p = pool(Layout::Raid6, 8, 1 << 40);
    let f = p.map_io(LogicalIo::new(true, 0, 4096), &[]);
    assert_eq!(f.phases.len(), 2);
    let drives = |ph: &Vec<MemberIo>| ph.iter().map(|m| (m.drive, m.offset, m.len)).collect::<Vec<_>>();
    assert_eq!(drives(&f.phases[0]), [(1, 0, 4096), (2, 0, 4096), (8, 0, 4096)]);
    assert!(f.phases[0].iter().all(|m| !m.write));
    assert_eq!(drives(&f.phases[1]), [(1, 0, 4096), (2, 0, 4096), (8, 0, 4096)]);
    assert!(f.phases[1].iter().all(|m| m.write));
    // With 6 members RMW (3 reads) ties RCW (the other 3 data pages): md takes RCW on a tie.
    let p6 = pool(Layout::Raid6, 6, 1 << 40);
    let f = p6.map_io(LogicalIo::new(true, 0, 4096), &[]);
    // Row 0 of 6: P on member 5 (drive 6), Q on (5 + 1) % 6 = 0 (drive 1), data i on
    // (5 + 2 + i) % 6 = 1 + i (drives 2..5). The write is on data 0 (drive 2): RCW reads data
    // 1, 2, 3 (drives 3, 4, 5), then writes data, P and Q.
    assert_eq!(drives(&f.phases[0]), [(3, 0, 4096), (4, 0, 4096), (5, 0, 4096)]);
    assert_eq!(drives(&f.phases[1]), [(1, 0, 4096), (2, 0, 4096), (6, 0, 4096)]);
}
