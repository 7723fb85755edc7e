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
        stripe_cache: MD_DEFAULT_STRIPE_CACHE,
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

/// 1 MiB sequential writes at QD 8 on RAID 6 of 8 with 512 KiB chunks: a row holds 6 x 512
/// KiB = 3 MiB of data, touched by 3 consecutive writes, all in flight together (3 <= 8),
/// and its 512 KiB / 4 KiB = 128 stripe heads fit the cache (256). So the stripe cache
/// gathers each row and the write that reaches the row's end writes it whole: 8 x 512 KiB
/// (6 data + P + Q) and no reads, 8/6 member bytes per logical byte; the first two writes
/// of the row write nothing themselves. At QD 1 each write is handled alone: its 2 chunks
/// are a partial stripe and md reads before writing.
#[test]
fn sequential_1m_writes_at_qd8_on_raid6_of_8_gather_into_full_stripes() {
    let p = pool(Layout::Raid6, 8, 1 << 40);
    let (mib, chunk) = (1u64 << 20, 512u64 << 10);
    let w =
        |k: u64, depth: u32| p.map_io(LogicalIo { stream: k > 0, depth, ..LogicalIo::new(true, k * mib, mib) }, &[]);
    let (mut read, mut written) = (0, 0);
    for k in 0..30 {
        let f = w(k, 8);
        read += f.member_bytes(false);
        written += f.member_bytes(true);
        if k % 3 == 2 {
            // The row's writer: one 512 KiB write on every member.
            assert_eq!(f.phases.len(), 1, "no read phase: {f:?}");
            assert_eq!(f.member_ios(true), 8);
            assert!(f.phases[0].iter().all(|m| m.len == chunk && m.offset == (k / 3) * chunk));
        } else {
            assert!(f.phases.is_empty(), "write {k} waits in the stripe cache: {f:?}");
        }
    }
    assert_eq!(read, 0);
    assert_eq!(written * 6, 30 * mib * 8, "8/6 member bytes per logical byte");
    // QD 1: write 0 covers data units 0 and 1 of row 0; per stripe head RMW would read 2 +
    // P + Q = 4 pages, RCW the 4 other data pages: a tie goes to RCW: 4 x 512 KiB read, then
    // 2 data + P + Q written.
    let f = w(0, 1);
    assert_eq!((f.member_bytes(false), f.member_bytes(true)), (4 * chunk, 4 * chunk));
    // Random writes (depth 0) are never gathered, however deep the queue.
    let r = p.map_io(LogicalIo::new(true, 5 * mib, mib), &[]);
    assert!(r.member_bytes(false) > 0);
}

/// A row that needs more writes than the job keeps in flight is not gathered: 256 KiB
/// writes at QD 8 on RAID 6 of 8 with 512 KiB chunks touch a 3 MiB row 12 times (> 8).
/// And a chunk whose stripe heads overflow the cache (4 MiB / 4 KiB = 1,024 > 256) is not
/// either, whatever the depth.
#[test]
fn rows_beyond_the_window_or_the_stripe_cache_are_not_gathered() {
    let p = pool(Layout::Raid6, 8, 1 << 40);
    let kib = 1u64 << 10;
    let f = p.map_io(LogicalIo { stream: true, depth: 8, ..LogicalIo::new(true, 256 * kib, 256 * kib) }, &[]);
    assert!(f.member_bytes(false) > 0 && f.member_bytes(true) > 0, "{f:?}");
    let big = Pool { chunk: 4 << 20, ..pool(Layout::Raid6, 8, 1 << 40) };
    let f = big.map_io(LogicalIo { stream: true, depth: 64, ..LogicalIo::new(true, 1 << 20, 1 << 20) }, &[]);
    assert!(f.member_bytes(false) > 0, "{f:?}");
    // 12 writes per row at depth 16: gathered; the 12th (the row's last 256 KiB) writes it.
    let last = p.map_io(LogicalIo { stream: true, depth: 16, ..LogicalIo::new(true, 11 * 256 * kib, 256 * kib) }, &[]);
    assert_eq!((last.member_bytes(false), last.member_bytes(true)), (0, 8 * 512 * kib));
}

/// The cache is the pool's `stripe_cache_size`: the 4 MiB chunk above has 1,024 stripe heads
/// per row, gathered with a cache of 1,024 and not with 1,023. A row of RAID 6 of 8 holds
/// 6 x 4 MiB, 24 writes of 1 MiB (23 < depth 64): over two rows, no reads and
/// 2 rows x 8 members x 4 MiB written, 8/6 member bytes per logical byte.
#[test]
fn the_stripe_cache_size_decides_which_rows_are_gathered() {
    let mib = 1u64 << 20;
    let with = |cache: u64| Pool { chunk: 4 * mib, stripe_cache: cache, ..pool(Layout::Raid6, 8, 1 << 40) };
    let run = |p: &Pool| {
        (0..48u64).fold((0, 0), |(r, w), k| {
            let f = p.map_io(LogicalIo { stream: k > 0, depth: 64, ..LogicalIo::new(true, k * mib, mib) }, &[]);
            (r + f.member_bytes(false), w + f.member_bytes(true))
        })
    };
    assert_eq!(run(&with(1024)), (0, 2 * 8 * 4 * mib));
    let (read, written) = run(&with(1023));
    assert!(read > 0 && written > 2 * 8 * 4 * mib, "{read} {written}");
}

fn ios(ph: &[MemberIo]) -> Vec<(NodeIx, u64, u64)> {
    ph.iter().map(|m| (m.drive, m.offset, m.len)).collect()
}

#[test]
fn raid5_full_stripe_writes_read_nothing_and_partial_ones_choose_the_fewer_reads() {
    // 4 members, 512 KiB chunks: a row holds 3 x 512 KiB of data. Row 0: P on member
    // 4 - 1 - 0 = 3 (drive 4), data i on (3 + 1 + i) % 4 = i (drives 1, 2, 3).
    let p = pool(Layout::Raid5, 4, 1 << 40);
    let full = p.map_io(LogicalIo::new(true, 0, (3 * 512) << 10), &[]);
    assert_eq!(full.phases.len(), 1, "no read phase");
    // 1.5 MiB of data x 4 / 3 = 2 MiB: 512 KiB on every member.
    assert_eq!(ios(&full.phases[0]), [(1, 0, 512 << 10), (2, 0, 512 << 10), (3, 0, 512 << 10), (4, 0, 512 << 10)]);
    // Row 1: P on member 2 (drive 3), data on members 3, 0, 1 (drives 4, 1, 2).
    let row1 = p.map_io(LogicalIo::new(false, (3 * 512) << 10, 4096), &[]);
    assert_eq!(ios(&row1.phases[0]), [(4, 512 << 10, 4096)]);
    // A 4 KiB write on 4 members: RMW reads old data + P = 2 pages, RCW the other 2 data
    // pages: a tie, so RCW (drives 2 and 3), then data + P are written.
    let part = p.map_io(LogicalIo::new(true, 0, 4096), &[]);
    assert_eq!(ios(&part.phases[0]), [(2, 0, 4096), (3, 0, 4096)]);
    assert_eq!(ios(&part.phases[1]), [(1, 0, 4096), (4, 0, 4096)]);
    // On 5 members RCW would read 3 pages: RMW (old data on drive 1, P on drive 5) wins.
    let p5 = pool(Layout::Raid5, 5, 1 << 40);
    let part = p5.map_io(LogicalIo::new(true, 0, 4096), &[]);
    assert_eq!(ios(&part.phases[0]), [(1, 0, 4096), (5, 0, 4096)]);
    assert_eq!(ios(&part.phases[1]), [(1, 0, 4096), (5, 0, 4096)]);
    assert_eq!(part.cpu_bytes(crate::cpu::Kernel::Xor), 2 * 4096, "old and new data XORed into P");
}

#[test]
fn mirror_reads_one_side_with_the_other_as_alternative_and_writes_both() {
    let p = pool(Layout::Mirror, 2, 1 << 40);
    let r = p.map_io(LogicalIo::new(false, 1 << 20, 128 << 10), &[]);
    assert_eq!(r.phases[0].len(), 1);
    assert_eq!(
        (r.phases[0][0].drive, r.phases[0][0].offset, r.phases[0][0].alternatives.clone()),
        (1, 1 << 20, vec![2])
    );
    let w = p.map_io(LogicalIo::new(true, 1 << 20, 128 << 10), &[]);
    assert_eq!(ios(&w.phases[0]), [(1, 1 << 20, 128 << 10), (2, 1 << 20, 128 << 10)]);
    // Degraded: the survivor alone.
    let r = p.map_io(LogicalIo::new(false, 0, 4096), &[1]);
    assert_eq!((r.phases[0][0].drive, r.phases[0][0].alternatives.len()), (2, 0));
    // RAID 10 near-2 over 4: chunk 0 on members 0 and 1, chunk 1 on 2 and 3, chunk 2 on 0
    // and 1 one chunk down.
    let p = pool(Layout::Raid10, 4, 1 << 40);
    let w = p.map_io(LogicalIo::new(true, (2 * 512) << 10, 4096), &[]);
    assert_eq!(ios(&w.phases[0]), [(1, 512 << 10, 4096), (2, 512 << 10, 4096)]);
}

#[test]
fn unraid_rmw_reads_data_and_parity_and_turbo_reads_the_other_data_disks() {
    // 4 data disks + 1 parity (drive 5). Offset 0 is on data disk 0 (drive 1).
    let mut p = pool(Layout::Unraid, 5, 1_000_000_000_000);
    let f = p.map_io(LogicalIo::new(true, 0, 64 << 10), &[]);
    // RMW: read old data and old parity, write both: the parity disk does 2 I/Os.
    assert_eq!(ios(&f.phases[0]), [(1, 0, 64 << 10), (5, 0, 64 << 10)]);
    assert_eq!(ios(&f.phases[1]), [(1, 0, 64 << 10), (5, 0, 64 << 10)]);
    p.write_mode = WriteMode::Turbo;
    let f = p.map_io(LogicalIo::new(true, 0, 64 << 10), &[]);
    // Turbo: read the three other data disks, then write data + parity.
    assert_eq!(ios(&f.phases[0]), [(2, 0, 64 << 10), (3, 0, 64 << 10), (4, 0, 64 << 10)]);
    assert_eq!(ios(&f.phases[1]), [(1, 0, 64 << 10), (5, 0, 64 << 10)]);
    // Reads touch one disk; the second data disk starts at 1e12.
    let r = p.map_io(LogicalIo::new(false, 1_000_000_000_000 + 4096, 4096), &[]);
    assert_eq!(ios(&r.phases[0]), [(2, 4096, 4096)]);
    assert_eq!(p.usable(), 4_000_000_000_000);
}

#[test]
fn btrfs_raid1_reads_the_copy_of_the_readers_pid() {
    let p = pool(Layout::BtrfsRaid1, 2, 1 << 40);
    let read = |job: u32| {
        let f = p.map_io(LogicalIo { job, ..LogicalIo::new(false, 8 << 20, 1 << 20) }, &[]);
        (f.phases[0].len(), f.phases[0][0].drive, f.phases[0][0].alternatives.len())
    };
    // pid % 2: job 0 copy 0 (drive 1), job 1 copy 1 (drive 2), job 2 copy 0 again; no
    // alternatives, the choice is fixed.
    assert_eq!([read(0), read(1), read(2)], [(1, 1, 0), (1, 2, 0), (1, 1, 0)]);
    // crc32c over the logical bytes.
    let f = p.map_io(LogicalIo::new(false, 0, 1 << 20), &[]);
    assert_eq!(f.cpu_bytes(crate::cpu::Kernel::Crc32c), 1 << 20);
    // A failed copy-0 device: job 0 falls to the next live copy.
    let f = p.map_io(LogicalIo::new(false, 0, 4096), &[1]);
    assert_eq!(f.phases[0][0].drive, 2);
}

#[test]
fn a_degraded_raid6_read_reads_the_rest_of_the_row() {
    // 6 members: row 0 has P on member 5, Q on 0, data i on 1 + i: data 0 is drive 2.
    let p = pool(Layout::Raid6, 6, 1 << 40);
    let f = p.map_io(LogicalIo::new(false, 0, 64 << 10), &[2]);
    // Every surviving member at the same offsets: drives 1 (Q), 3, 4, 5 (data), 6 (P).
    assert_eq!(
        ios(&f.phases[0]),
        [(1, 0, 64 << 10), (3, 0, 64 << 10), (4, 0, 64 << 10), (5, 0, 64 << 10), (6, 0, 64 << 10)]
    );
    // Reconstruction over the row's 4 data units at those offsets.
    assert_eq!(f.cpu_bytes(crate::cpu::Kernel::RaidPq), (4 * 64) << 10);
    // A healthy member's data is read from it alone.
    let f = p.map_io(LogicalIo::new(false, 512 << 10, 64 << 10), &[2]);
    assert_eq!(ios(&f.phases[0]), [(3, 0, 64 << 10)]);
    // Three failures are more than RAID 6 survives.
    assert!(p.check_failed(&[1, 2]).is_ok());
    assert!(p.check_failed(&[1, 2, 3]).is_err());
}

#[test]
fn usable_capacity_per_layout() {
    let tb = 1_000_000_000_000u64;
    let u = |l: Layout, n: usize| pool(l, n, tb).usable();
    assert_eq!(u(Layout::Stripe, 4), 4 * tb);
    assert_eq!(u(Layout::Mirror, 3), tb);
    // md raid10 counts whole chunks only (raid10_size): 1e12 / 512 KiB = 1,907,348 chunks
    // per member, x 4 / 2 = 3,814,696 chunks of 512 KiB.
    assert_eq!(u(Layout::Raid10, 4), 3_814_696 * 524_288);
    // btrfs raid1c3 on 4 members, 1 GiB units: 931 whole rows x 4 / 3 = 1,241 units (the
    // member size alone would give 4/3 TB, of which the last units do not fit).
    assert_eq!(u(Layout::BtrfsRaid1c3, 4), 1_241 << 30);
    assert_eq!(u(Layout::Raid5, 4), 3 * tb);
    assert_eq!(u(Layout::Raid6, 6), 4 * tb);
    // 1e12 / 1 GiB = 931 whole block groups per member, each in all three copies.
    assert_eq!(u(Layout::BtrfsRaid1c3, 3), 931 << 30);
    assert_eq!(u(Layout::BtrfsRaid6, 5), 3 * tb);
    // Small btrfs mirrors get small chunks (10% of the writable bytes, rounded up to
    // 16 MiB): raid1 over 2 x 256 MiB has 64 MiB chunks and stores all 256 MiB (1 GiB units
    // would store nothing); raid1c3 over 4 x 100 MiB: 10% of 400 MiB = 40 MiB, up to 48 MiB;
    // 2 whole rows per member x 4 / 3 = 2 chunks of 48 MiB.
    let mib = 1u64 << 20;
    let small = pool(Layout::BtrfsRaid1, 2, 256 * mib);
    assert_eq!((btrfs::mirror_chunk(&small), small.usable()), (64 * mib, 256 * mib));
    let small = pool(Layout::BtrfsRaid1c3, 4, 100 * mib);
    assert_eq!((btrfs::mirror_chunk(&small), small.usable()), (48 * mib, 2 * 48 * mib));
    // RAIDZ1 of 4 at 128 KiB, ashift 12: 32 data sectors + ceil(32 / 3) = 11 parity = 43,
    // rounded up to a multiple of 2: 44 sectors per record; 4 x 1e12 / 4096 = 976,562,500
    // sectors hold 22,194,602 records of 128 KiB.
    assert_eq!(u(Layout::Raidz1, 4), 22_194_602 * 131_072);
    // A larger member is not used beyond the smallest.
    let mut p = pool(Layout::Raid5, 3, tb);
    p.sizes[0][2] = 2 * tb;
    assert_eq!((p.usable(), p.lost_bytes()), (2 * tb, tb));
    // unRAID: the data disks add up.
    let mut p = pool(Layout::Unraid, 3, tb);
    p.sizes[0] = vec![2 * tb, tb, 2 * tb];
    assert_eq!((p.usable(), p.lost_bytes()), (3 * tb, 0));
}

#[test]
fn scrub_and_rebuild_totals() {
    // md RAID 6 of 6 x 1 GiB, 512 KiB chunks: 2,048 rows. A check reads every member whole
    // (fill does not matter); a rebuild of one reads the 5 others and writes it.
    let gib = 1u64 << 30;
    let p = pool(Layout::Raid6, 6, gib);
    let s = Maintenance::new(&p, Task::Scrub, 0.3, &[]);
    assert_eq!((s.steps, s.member_read_bytes, s.member_write_bytes), (2048, 6 * gib, 0));
    assert_eq!(s.logical_bytes, 4 * gib);
    let r = Maintenance::new(&p, Task::Rebuild, 1.0, &[3]);
    assert_eq!((r.member_read_bytes, r.member_write_bytes), (5 * gib, gib));
    let step = r.step(7);
    assert_eq!(step.member_bytes(true), 512 << 10);
    assert!(step.phases[1].iter().all(|m| m.drive == 3 && m.offset == 7 * (512 << 10)));
    // ZFS scrubs allocated space only. RAIDZ2 of 6 at 128 KiB: 32 data sectors over 4 data
    // columns = 8 rows, 16 parity sectors, 48 in all (a multiple of 3, no padding), 8 on
    // each disk: a scrub reads all 48 of each allocated record.
    let z = pool(Layout::Raidz2, 6, 1 << 40);
    let s = Maintenance::new(&z, Task::Scrub, 0.5, &[]);
    let records = s.steps;
    assert_eq!(s.member_read_bytes, records * 48 * 4096);
    assert_eq!(s.logical_bytes, (z.usable() as f64 * 0.5) as u64);
    // A resilver writes the failed disk's column of each record: 8 sectors.
    let r = Maintenance::new(&z, Task::Rebuild, 0.5, &[4]);
    assert_eq!(r.member_write_bytes, records * 8 * 4096);
    assert_eq!(r.member_read_bytes, records * 40 * 4096);
    // A btrfs fill is of the usable bytes, in whole chunks: raid1 over 2 x 2 GiB has
    // chunks of 10% of 4 GiB (410 MiB, up to 416 MiB) and stores 4 of them, 1,664 MiB. A
    // scrub of 10% of it reads 166.4 MiB (in 64 KiB rows) on each member, not 10% of 2 GiB.
    let mib = 1u64 << 20;
    let b = pool(Layout::BtrfsRaid1, 2, 2 * gib);
    assert_eq!(b.usable(), 1664 * mib);
    let s = Maintenance::new(&b, Task::Scrub, 0.1, &[]);
    assert_eq!(s.logical_bytes, (1664 * mib / (64 << 10)) / 10 * (64 << 10));
    assert_eq!(s.member_read_bytes, 2 * s.logical_bytes);
    assert_eq!(Maintenance::new(&b, Task::Scrub, 1.0, &[]).logical_bytes, b.usable());
    // A mirror rebuild reads one copy.
    let m = pool(Layout::Mirror, 2, gib);
    let r = Maintenance::new(&m, Task::Rebuild, 1.0, &[1]);
    assert_eq!((r.member_read_bytes, r.member_write_bytes), (gib, gib));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const LAYOUTS: [(Layout, usize, usize); 16] = [
        (Layout::Stripe, 2, 8),
        (Layout::Mirror, 2, 4),
        (Layout::Raid10, 2, 8),
        (Layout::Raid5, 3, 10),
        (Layout::Raid6, 4, 12),
        (Layout::BtrfsRaid0, 2, 8),
        (Layout::BtrfsRaid1, 2, 6),
        (Layout::BtrfsRaid1c3, 3, 6),
        (Layout::BtrfsRaid10, 2, 8),
        (Layout::BtrfsRaid5, 2, 8),
        (Layout::BtrfsRaid6, 3, 10),
        (Layout::Raidz1, 2, 10),
        (Layout::Raidz2, 3, 12),
        (Layout::Raidz3, 4, 12),
        (Layout::ZfsMirror, 2, 3),
        (Layout::Unraid, 2, 8),
    ];

    fn no_overlap(ios: &[MemberIo]) -> bool {
        let mut v: Vec<&MemberIo> = ios.iter().collect();
        v.sort_by_key(|m| (m.drive, m.offset));
        v.windows(2).all(|w| w[0].drive != w[1].drive || w[0].offset + w[0].len <= w[1].offset)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
        #[test]
        fn member_io_stays_inside_members_and_adds_up(
            which in 0usize..16,
            extra in 0usize..12,
            at in 0.0f64..1.0,
            len_k in 1u64..4096,
            job in 0u32..4,
        ) {
            let (layout, lo, hi) = LAYOUTS[which];
            let n = lo + extra % (hi - lo + 1);
            let size = 64u64 << 30;
            let p = pool(layout, n, size);
            let usable = p.usable();
            let len = (len_k * 512).min(usable);
            let off = ((at * (usable - len) as f64) as u64) / 512 * 512;
            for write in [false, true] {
                let f = p.map_io(LogicalIo { write, offset: off, len, job, stream: false, depth: 0 }, &[]);
                let all: Vec<&MemberIo> = f.phases.iter().flatten().collect();
                // Every member I/O is inside its member, on a member.
                for m in &all {
                    prop_assert!(p.contains(m.drive), "{m:?}");
                    prop_assert!(m.offset + m.len <= size, "{layout:?} {n}: {m:?} past the member's end");
                    prop_assert!(m.len > 0);
                }
                // Writes of one logical write never overlap on a drive.
                let writes: Vec<MemberIo> = all.iter().filter(|m| m.write).map(|m| (*m).clone()).collect();
                prop_assert!(no_overlap(&writes), "{layout:?} {n}: overlapping writes {writes:?}");
                if !write {
                    prop_assert_eq!(f.member_bytes(true), 0);
                    // Reads return exactly the logical bytes (ZFS reads whole records).
                    let r = f.member_bytes(false);
                    if layout.family() == Family::Zfs {
                        let records = (off + len).div_ceil(p.recordsize) - off / p.recordsize;
                        prop_assert_eq!(r, records * p.recordsize, "{:?} {}", layout, n);
                    } else {
                        prop_assert_eq!(r, len, "{:?} {}: reads", layout, n);
                    }
                }
            }
            // One failed member (where the layout survives it): nothing touches it, and a
            // read still fetches at least the logical bytes.
            let failed = [1usize];
            if p.check_failed(&failed).is_ok() {
                for write in [false, true] {
                    let f = p.map_io(LogicalIo { write, offset: off, len, job, stream: false, depth: 0 }, &failed);
                    prop_assert!(f.phases.iter().flatten().all(|m| m.drive != 1), "{layout:?} {n}: I/O on the failed drive");
                    if !write {
                        prop_assert!(f.member_bytes(false) >= len, "{layout:?} {n}: degraded read short");
                    }
                }
            }
            // Full stripes: member writes = logical x n / (n - p), no reads.
            let par = layout.parity();
            if par > 0 && layout.family() != Family::Zfs {
                let row = (n - par) as u64 * p.chunk;
                let rows = 1 + (len_k % 3);
                let start = (off / row) * row;
                if start + rows * row <= usable {
                    let f = p.map_io(LogicalIo::new(true, start, rows * row), &[]);
                    prop_assert_eq!(f.member_bytes(false), 0);
                    prop_assert_eq!(f.member_bytes(true), rows * row * n as u64 / (n - par) as u64);
                }
            }
        }
    }
}

#[test]
fn merge_in_place_is_the_sort_then_fold_it_replaced() {
    // The reference: sort by (drive, direction, offset), then fold each I/O into the last
    // one kept when it overlaps or touches it (same drive, direction and alternatives).
    fn reference(mut ios: Vec<MemberIo>) -> Vec<MemberIo> {
        ios.retain(|m| m.len > 0);
        ios.sort_by_key(|a| (a.drive, a.write, a.offset));
        let mut out: Vec<MemberIo> = Vec::new();
        for m in ios {
            match out.last_mut() {
                Some(l)
                    if l.drive == m.drive
                        && l.write == m.write
                        && l.alternatives == m.alternatives
                        && m.offset <= l.offset + l.len =>
                {
                    l.len = (l.offset + l.len).max(m.offset + m.len) - l.offset;
                }
                _ => out.push(m),
            }
        }
        out
    }
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for case in 0..2000 {
        let n = rng.random_range(0..12);
        let ios: Vec<MemberIo> = (0..n)
            .map(|_| MemberIo {
                drive: rng.random_range(1..4),
                write: rng.random_bool(0.5),
                // Offsets on a coarse grid so that overlaps, touching ends and equal keys occur.
                offset: rng.random_range(0..8u64) * 4096,
                len: rng.random_range(0..3u64) * 4096,
                alternatives: if rng.random_bool(0.2) { vec![9] } else { Vec::new() },
            })
            .collect();
        // Half the cases already in order: the path that skips the sort.
        let mut ios = ios;
        if case % 2 == 0 {
            ios.sort_by_key(|a| (a.drive, a.write, a.offset));
        }
        assert_eq!(merge(ios.clone()), reference(ios.clone()), "case {case}: {ios:?}");
    }
}

#[test]
fn zfs_map_into_a_reused_fanout_is_the_fresh_map() {
    // One Fanout per simulator slot, mapped into again and again: the same phases and CPU
    // work as a fresh map, whatever the slot held before (reads, writes, degraded, partial).
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
    for (layout, n) in [(Layout::Raidz1, 5), (Layout::Raidz2, 8), (Layout::Raidz3, 11), (Layout::ZfsMirror, 3)] {
        let p = pool(layout, n, 1 << 40);
        let mut f = Fanout::default();
        for case in 0..500 {
            let failed: Vec<NodeIx> = if rng.random_bool(0.2) { vec![rng.random_range(1..=n)] } else { Vec::new() };
            let io = LogicalIo {
                write: rng.random_bool(0.5),
                offset: (rng.random_range(0..64u64) * 32) << 10,
                len: (rng.random_range(1..16u64) * 32) << 10,
                job: 0,
                stream: rng.random_bool(0.5),
                depth: 0,
            };
            zfs::map_into(&p, io, &failed, &mut f);
            assert_eq!(f, p.map_io(io, &failed), "{layout:?} case {case}: {io:?} failed {failed:?}");
        }
    }
    // A stream of whole-record writes keeps reusing one buffer: nothing allocated per record.
    let p = pool(Layout::Raidz2, 8, 1 << 40);
    let io = |k: u64| LogicalIo { write: true, offset: k << 17, len: 1 << 17, job: 0, stream: true, depth: 4 };
    let mut f = Fanout::default();
    zfs::map_into(&p, io(0), &[], &mut f);
    let buf = f.phases[0].as_ptr();
    for k in 1..100 {
        zfs::map_into(&p, io(k), &[], &mut f);
        assert_eq!(f.phases.len(), 1);
        // 128 KiB at ashift 12: 32 data sectors over 6 data columns and 2 parity: 8 I/Os.
        assert_eq!(f.phases[0].len(), 8);
        assert_eq!(f.phases[0].as_ptr(), buf, "record {k} allocated a new phase buffer");
    }
}
