//! Pool workloads end to end (issue #14): logical I/O fanned out over the members, driven
//! through the public API and the command line. Each expectation is derived in a comment
//! from the drives' datasheet figures (model/catalog/drives.toml) and the layout's
//! arithmetic, never from the model's own output.
//!
//! Simulated runs are short (0.3-1 s); HDD writers get a ramp longer than their write cache
//! takes to fill, so the window sees the media rate.

mod common;
use common::command as iopath;

use iopath_model::report::Report;
use iopath_model::{Catalog, Topology, WorkloadSpec};
use iopath_test_support::within;

fn topology(text: &str) -> Topology {
    Topology::parse("pools.toml", text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

/// `n` drives of `part` each on its own SATA port of an LSI SAS2308 (PCIe 3.0 x8, far above
/// what eight SATA drives move), and a pool of them written as `pool` (the body of a
/// `[[pool]]` table, members excluded).
fn on_hba(part: &str, n: usize, pool: &str) -> Topology {
    let members: Vec<String> = (0..n).map(|i| format!("\"d{i}\"")).collect();
    topology(&format!(
        r#"
[host]
part = "intel-lga1700"
[[node]]
id = "hba"
part = "lsi-sas2308"
parent = "host"
[[drive]]
id = "d"
count = {n}
part = "{part}"
parent = "hba"
port = 0
[[pool]]
id = "tank"
members = [{}]
{pool}
"#,
        members.join(", ")
    ))
}

fn spec(rw: &str, bs: &str, qd: u32, ramp: &str, runtime: &str) -> WorkloadSpec {
    WorkloadSpec {
        rw: Some(rw.into()),
        bs: Some(bs.into()),
        iodepth: Some(qd),
        ramp: Some(ramp.into()),
        runtime: Some(runtime.into()),
        pool: Some("tank".into()),
        ..Default::default()
    }
}

fn run(t: &Topology, s: WorkloadSpec) -> Report {
    iopath_sim::simulate(t, &s.resolve().expect("workload"), &Default::default()).expect("simulate")
}

fn pool(r: &Report) -> &iopath_model::report::PoolResult {
    r.pool.as_ref().expect("a pool section")
}

/// md RAID 0 of four Samsung 870 EVO 1 TB: 1 MiB reads over 512 KiB chunks keep every
/// member streaming; each reads at its datasheet 560 MB/s and nothing shared binds (SATA 6G
/// carries ~570 MB/s of payload per drive, the SAS2308's PCIe 3.0 x8 ~7,000 MB/s), so the
/// pool reads 4 x 560 = 2,240 MB/s with no overhead, and the report's total is the pool's.
#[test]
fn a_stripe_of_ssds_reads_at_n_times_one_drive() {
    let t = on_hba("samsung-870evo-1tb", 4, r#"layout = "stripe""#);
    let r = run(&t, spec("read", "1m", 8, "20ms", "0.3s"));
    within("stripe of 4 870 EVO, logical MB/s", pool(&r).mb_s, 4.0 * 560.0, 0.03);
    assert_eq!(pool(&r).overhead, 1.0);
    assert_eq!(r.total.mb_s, pool(&r).mb_s, "the report's total is the pool's logical rate");
    for d in &r.drives {
        within(&format!("{} member MB/s", d.id), d.read_mb_s, 560.0, 0.03);
    }
}

/// The same stripe over six SATA SSDs behind an ASM1166 (PCIe 3.0 x2): the drives could read
/// 6 x 540+ MB/s, but the uplink carries 1,780 MB/s (source 000's plateau with 4-6 drives,
/// which the catalog's fit reproduces: PCIe 3.0 x2 read payload at MPS 512, 1,862.3 MB/s,
/// x 0.9558). The pool is bound by the uplink and the report names it.
#[test]
fn a_pool_whose_members_share_a_slow_uplink_is_bound_by_it() {
    let text = std::fs::read_to_string("configs/asm1166-6ssd.toml").expect("config");
    let t = topology(&format!(
        "{text}\n[[pool]]\nid = \"tank\"\nlayout = \"stripe\"\nmembers = [\"D\", \"E\", \"F\", \"G\", \"H\", \"I\"]\n"
    ));
    let r = run(&t, spec("read", "1m", 8, "20ms", "0.3s"));
    within("stripe of 6 behind an ASM1166, logical MB/s", pool(&r).mb_s, 1780.0, 0.03);
    assert_eq!(r.bottleneck.id, "hba.uplink.up");
}

/// md RAID 1 of two 870 EVO: a write goes to both sides (member bytes = 2 x logical) at one
/// drive's datasheet write rate, 530 MB/s; reads by two jobs go one stream per side (md's
/// read_balance keeps a sequential reader on its disk and sends another to the idle one):
/// 2 x 560 MB/s. A ZFS mirror spreads one job's reads by queue length: 2 x 560 MB/s too.
#[test]
fn a_mirror_writes_at_one_drive_and_reads_over_both_sides() {
    let t = on_hba("samsung-870evo-1tb", 2, r#"layout = "mirror""#);
    let w = run(&t, spec("write", "1m", 8, "20ms", "0.3s"));
    within("md mirror write, logical MB/s", pool(&w).mb_s, 530.0, 0.03);
    assert_eq!(pool(&w).overhead, 2.0);
    let r = run(&t, WorkloadSpec { numjobs: Some(2), ..spec("read", "1m", 8, "20ms", "0.3s") });
    within("md mirror read, two jobs, logical MB/s", pool(&r).mb_s, 2.0 * 560.0, 0.03);
    let z = on_hba("samsung-870evo-1tb", 2, r#"layout = "zfs-mirror""#);
    let r = run(&z, spec("read", "128k", 16, "20ms", "0.3s"));
    within("zfs mirror read, one job, logical MB/s", pool(&r).mb_s, 2.0 * 560.0, 0.03);
}

/// btrfs raid1 chooses the mirror by the reader's pid (`pid % 2`, the default read policy):
/// one job reads from one side only, at one drive's 560 MB/s, and the other side idles.
#[test]
fn btrfs_raid1_one_job_reads_at_one_drive() {
    let t = on_hba("samsung-870evo-1tb", 2, r#"layout = "btrfs-raid1""#);
    let r = run(&t, spec("read", "1m", 8, "20ms", "0.3s"));
    within("btrfs raid1 read, one job, logical MB/s", pool(&r).mb_s, 560.0, 0.03);
    let idle = r.drives.iter().filter(|d| d.read_mb_s == 0.0).count();
    assert_eq!(idle, 1, "{:?}", r.drives);
}

/// RAIDZ2 of eight WD Red Plus 4 TB, sequential 1 MiB writes. A 128 KiB record at ashift 12
/// is 32 data sectors over 6 data columns: 5 rows and 2 sectors, so 6 rows carry 2 parity
/// sectors each (12), 44 sectors in all, allocated as 45 (a multiple of p + 1 = 3). ZFS's
/// write aggregation covers the 4 KiB skip sector (zfs_vdev_write_gap_limit), so each record
/// puts 45 sectors on the members: member bytes = 45/32 = 1.40625 x logical. Each drive
/// writes at its outer-zone media rate (175 MB/s), so the pool writes 8 x 175 x 32/45 =
/// 995.6 MB/s; the outer 1% of the surface runs at 99.7% of it.
#[test]
fn raidz2_of_eight_hdds_writes_at_the_data_share_of_the_members() {
    let t = on_hba("wd-red-plus-4tb", 8, r#"layout = "raidz2""#);
    // Ramp: a 128 MiB write cache fills at (560 - 175) MB/s in 0.35 s.
    let r = run(&t, spec("write", "1m", 8, "0.5s", "0.5s"));
    let p = pool(&r);
    assert_eq!(p.overhead, 45.0 / 32.0, "member bytes per logical byte");
    within("raidz2 of 8 HDDs sequential write, logical MB/s", p.mb_s, 8.0 * 175.0 * 32.0 / 45.0, 0.04);
}

/// md RAID 6 of eight WD Red Plus (175 MB/s outer zone), chunk 512 KiB: 1 MiB sequential
/// writes at QD 8. A row is 6 x 512 KiB = 3 MiB of data, touched by 3 writes that are in
/// flight together, and its 128 stripe heads fit md's 256: the stripe cache gathers every
/// row into a full-stripe write (no reads), 8/6 member bytes per logical byte, each member
/// writing at its media rate: 8 x 175 x 6/8 = 6 x 175 = 1,050 MB/s. At QD 1 every write is
/// a reconstruct-write of a third of a row on its own (4 chunks read, 4 written per 1 MiB):
/// far slower, and the members read.
#[test]
fn raid6_sequential_1m_writes_at_qd8_gather_into_full_stripes() {
    let t = on_hba("wd-red-plus-4tb", 8, "layout = \"raid6\"\nchunk = \"512k\"");
    // Ramp: a 128 MiB write cache fills at (560 - 175) MB/s in 0.35 s.
    let r = run(&t, spec("write", "1m", 8, "0.5s", "0.5s"));
    let p = pool(&r);
    within("raid6 of 8 HDDs, 1 MiB writes QD 8: member bytes per logical byte", p.overhead, 8.0 / 6.0, 0.01);
    assert_eq!(p.member_read_bytes, 0, "full stripes read nothing");
    within("raid6 of 8 HDDs, 1 MiB writes QD 8, logical MB/s", p.mb_s, 6.0 * 175.0, 0.04);
    let r = run(&t, spec("write", "1m", 1, "0.5s", "0.5s"));
    let p = pool(&r);
    assert!(p.member_read_bytes > 0, "QD 1: each write reads before it writes");
    assert!(p.mb_s < 0.6 * 6.0 * 175.0, "QD 1: {} MB/s", p.mb_s);
}

/// A ZFS mirror of two WD Red Plus (175 MB/s outer zone) read by one sequential job:
/// `vdev_mirror_load` sends each read to the side whose queue plus seek increment is lowest,
/// so the stream moves between the sides in runs, and each disk must pass over (turn past,
/// or seek beyond) what the other side read: the pair delivers more than one disk's 175 MB/s
/// and less than both disks' 350. The closed-form bound, which has no head, keeps the upper
/// end, 2 x 175, and the simulation stays under it. Two jobs read two streams, one per side:
/// 2 x 175 MB/s (at the outer zone).
#[test]
fn a_zfs_mirror_of_disks_shares_one_stream_between_one_and_two_disks() {
    let t = on_hba("wd-red-plus-4tb", 2, r#"layout = "zfs-mirror""#);
    let one = spec("read", "1m", 8, "50ms", "0.5s");
    let w = one.clone().resolve().expect("workload");
    let g = iopath_model::paths::ResourceGraph::new(&t);
    let b = iopath_model::pool::bound::pool_bound(&t, &g, t.pool("tank").unwrap(), &w, &[]);
    within("zfs mirror of 2 HDDs, one job, bound MB/s", b.logical_mb_s, 2.0 * 175.0, 0.03);
    let r = run(&t, one);
    let mb_s = pool(&r).mb_s;
    println!("zfs mirror of 2 HDDs, one job: {mb_s:.1} MB/s");
    assert!(mb_s > 1.1 * 175.0 && mb_s <= b.logical_mb_s * 1.01, "{mb_s} MB/s");
    // The second job starts half-way through its region: over 1% of the pool both streams
    // stay in the outer zone.
    let two = WorkloadSpec { numjobs: Some(2), region: Some("1%".into()), ..spec("read", "1m", 8, "50ms", "0.5s") };
    let r = run(&t, two);
    within("zfs mirror of 2 HDDs, two jobs, logical MB/s", pool(&r).mb_s, 2.0 * 175.0, 0.04);
}

/// md RAID 0 of four Samsung 990 PRO (1.4M random 4 KiB read IOPS each by datasheet) on
/// their own PCIe 4.0 x4 root ports of the generic host (8 cores, 1.64 us of CPU per I/O:
/// 608K IOPS per core, Axboe's io_uring paper). One fio job submits and completes every
/// logical I/O on its one core: at most 1 / 1.64 us = 609.8K logical IOPS, however fast the
/// members; the member I/Os' own host CPU (8 cores, 4.9M IOPS) is far from binding. Two
/// jobs double it: 1.22M.
#[test]
fn a_pool_jobs_cores_bound_small_random_reads() {
    let mut text = String::from("[host]\npart = \"generic-host\"\n");
    for i in 0..4 {
        text.push_str(&format!(
            "[[drive]]\nid = \"n{i}\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\nlink = \"pcie4x4\"\n"
        ));
    }
    text.push_str("[[pool]]\nid = \"tank\"\nlayout = \"stripe\"\nmembers = [\"n0\", \"n1\", \"n2\", \"n3\"]\n");
    let t = topology(&text);
    let r = run(&t, spec("randread", "4k", 128, "20ms", "0.2s"));
    within("stripe of 4 990 PRO, one job, logical IOPS", pool(&r).iops, 1e6 / 1.64, 0.03);
    assert_eq!(r.bottleneck.id, "host.cpu.n0", "the job's core binds");
    let r = run(&t, WorkloadSpec { numjobs: Some(2), ..spec("randread", "4k", 128, "20ms", "0.2s") });
    within("stripe of 4 990 PRO, two jobs, logical IOPS", pool(&r).iops, 2.0 * 1e6 / 1.64, 0.03);
}

/// md RAID 6 of eight WD Red Plus, 4 KiB random writes: each is a read-modify-write of one
/// data chunk's page and of P and Q (3 reads), then 3 writes: 6 member I/Os per logical
/// write, so the pool's IOPS are the members' total over 6.
#[test]
fn raid6_small_random_writes_cost_six_member_ios() {
    let t = on_hba("wd-red-plus-4tb", 8, r#"layout = "raid6""#);
    let r = run(&t, spec("randwrite", "4k", 32, "0.2s", "1s"));
    let p = pool(&r);
    let member_ios: u64 = r.drives.iter().map(|d| d.ios).sum();
    within("member I/Os per logical write", member_ios as f64 / p.ios as f64, 6.0, 0.02);
    within("member bytes per logical byte", p.overhead, 6.0, 1e-9);
}

/// An md RAID 5 of four 870 EVO with one member failed, read in whole stripes (3 x 512 KiB):
/// the three survivors read every chunk of the stripe, data and parity, and the missing
/// chunk is their XOR, so member bytes = logical bytes and the pool reads 3 x 560 = 1,680
/// MB/s; healthy, the four members read only data chunks: 4 x 560 = 2,240 MB/s.
#[test]
fn a_degraded_raid5_reads_from_the_survivors() {
    let t = on_hba("samsung-870evo-1tb", 4, r#"layout = "raid5""#);
    let healthy = run(&t, spec("read", "1536k", 8, "20ms", "0.3s"));
    within("healthy raid5 read, logical MB/s", pool(&healthy).mb_s, 4.0 * 560.0, 0.03);
    let degraded =
        run(&t, WorkloadSpec { failed: Some(vec!["d1".into()]), ..spec("read", "1536k", 8, "20ms", "0.3s") });
    let p = pool(&degraded);
    within("degraded raid5 read, logical MB/s", p.mb_s, 3.0 * 560.0, 0.03);
    within("degraded member bytes per logical byte", p.overhead, 1.0, 0.01);
    assert_eq!(p.failed, ["d1"]);
    assert!(degraded.drive("d1").is_none(), "a failed member does no I/O");
}

/// Scrub time of a pool of two 18 TB Seagate Exos X18 (outer 270 MB/s, inner 135 MB/s).
/// With constant linear density the media rate is proportional to the radius and the LBA
/// to the area swept from the outer edge, so reading a whole surface takes capacity / the
/// mean of the outer and inner rates: 18e12 / 202.5e6 = 24.69 h. md's check reads both
/// whole members whatever the fill. A ZFS scrub reads only allocated data, which a fresh
/// pool allocates from the outer edge: at 50% fill it takes
/// (1 - sqrt(1 - 0.5 (1 - 0.5^2))) / (1 - 0.5) = 0.419 of the full surface's time.
#[test]
fn scrub_time_follows_the_zoned_surface_and_the_fill() {
    let scrub = |layout: &str, fill: &str| {
        let t = on_hba("seagate-exos-x18-18tb", 2, &format!("layout = \"{layout}\""));
        let s = WorkloadSpec {
            task: Some("scrub".into()),
            fill: Some(fill.into()),
            ..spec("read", "1m", 8, "50ms", "0.3s")
        };
        let r = run(&t, s);
        let m = pool(&r).maintenance.clone().expect("a maintenance section");
        assert_eq!(m.segments.len(), 4);
        assert!(m.segments.windows(2).all(|w| w[1].rate_mb_s < w[0].rate_mb_s), "inner parts are slower");
        m.hours
    };
    let full = 18e12 / ((270.0 + 135.0) / 2.0 * 1e6) / 3600.0;
    let md_full = scrub("mirror", "100%");
    within("md mirror check of 2 x 18 TB, hours", md_full, full, 0.03);
    within("md check at 50% fill, hours", scrub("mirror", "50%"), md_full, 0.005);
    let zfs_full = scrub("zfs-mirror", "100%");
    within("zfs mirror scrub of 2 x 18 TB, hours", zfs_full, full, 0.03);
    let ratio = (1.0 - (1.0f64 - 0.5 * 0.75).sqrt()) / 0.5;
    within("zfs scrub at 50% over 100%", scrub("zfs-mirror", "50%") / zfs_full, ratio, 0.03);
    // Rebuilding one member of the md mirror reads the other whole and writes the
    // replacement whole, both at the surface's rates: the same 24.69 h, bound by the media.
    let t = on_hba("seagate-exos-x18-18tb", 2, "layout = \"mirror\"");
    let s = WorkloadSpec {
        task: Some("rebuild".into()),
        failed: Some(vec!["d1".into()]),
        ..spec("read", "1m", 8, "50ms", "0.3s")
    };
    let r = run(&t, s);
    let m = pool(&r).maintenance.clone().expect("a maintenance section");
    // md uses whole chunks of each member: 18e12 B rounded down to 512 KiB chunks.
    let member = 18_000_000_000_000u64 / (512 * 1024) * (512 * 1024);
    assert_eq!((m.task.as_str(), m.logical_bytes), ("rebuild", member));
    within("md mirror rebuild of an 18 TB member, hours", m.hours, full, 0.03);
    assert!(m.bottleneck.id.ends_with(".media"), "{}", m.bottleneck.id);
}

/// The command line: `simulate --pool` prints the pool section and the logical total;
/// `sweep` of a pool workload takes the pool's logical totals as its value.
#[test]
fn simulate_prints_the_pool_and_sweep_takes_its_logical_totals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("pool.toml");
    let text = std::fs::read_to_string("configs/9207-8i-8ssd.toml").expect("config");
    std::fs::write(
        &cfg,
        format!("{text}\n[[pool]]\nid = \"tank\"\nlayout = \"mirror\"\nmembers = [\"ssd0\", \"ssd1\"]\n"),
    )
    .unwrap();
    let o = iopath()
        .args(["simulate", cfg.to_str().unwrap(), "--pool", "tank", "--rw", "write", "--bs", "1m", "--iodepth", "8"])
        .args(["--runtime", "0.2s", "--quiet"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("pool tank (mirror):"), "{out}");
    assert!(out.contains("pool tank (logical)"), "{out}");
    assert!(out.contains("2.000 member bytes per logical byte"), "{out}");
    let o = iopath()
        .args(["sweep", cfg.to_str().unwrap(), "--pool", "tank", "--rw", "write", "--bs", "1m", "--iodepth", "1,8"])
        .args(["--runtime", "0.2s", "--json", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: iopath_model::report::Sweep = serde_json::from_slice(&o.stdout).expect("sweep JSON");
    for p in &s.points {
        let r = p.report.as_ref().expect("a report");
        // A mirror write moves twice the logical bytes on the members.
        let members: f64 = r.drives.iter().map(|d| d.write_mb_s).sum();
        assert_eq!(r.total.mb_s, pool(r).mb_s);
        within("members over logical in a sweep point", members / r.total.mb_s, 2.0, 0.03);
        // The pool's closed form bounds its logical rate: 530 MB/s, one side's writes.
        let bound = p.bound_mb_s.expect("a pool bound");
        assert!(r.total.mb_s <= bound * 1.001, "{} over the bound {bound}", r.total.mb_s);
        within("the pool bound of a mirror write", bound, 530.0, 0.03);
    }
}

/// A laptop on 1 GbE reading over SMB3 from a stripe of four 870 EVO (2,240 MB/s): its link
/// binds (the client keeps 8 requests in flight, as the workload's iodepth, so the round trip
/// and smbd's read of each request are hidden behind the others' transfers). TCP carries 1448 B per 1538 B of line time (MTU 1500 less IPv4, TCP and the
/// timestamps option; frame, FCS, preamble and gap), 1448/1538 x 125 = 117.68 MB/s of
/// stream, and SMB2's 84 B of headers per 1 MiB READ response cost 0.008% of it.
#[test]
fn a_client_on_1gbe_reading_a_pool_is_bound_by_its_link() {
    let t = topology(
        r#"
[host]
part = "intel-lga1700"
[[node]]
id = "hba"
part = "lsi-sas2308"
parent = "host"
[[node]]
id = "nic"
part = "intel-i225-v"
parent = "host"
[[drive]]
id = "d"
count = 4
part = "samsung-870evo-1tb"
parent = "hba"
port = 0
[[pool]]
id = "tank"
layout = "stripe"
members = ["d0", "d1", "d2", "d3"]
[[client]]
id = "laptop"
nic = "nic"
link = "1GbE"
outstanding = 8
"#,
    );
    let s = WorkloadSpec { client: Some("laptop".into()), ..spec("read", "1m", 8, "20ms", "0.3s") };
    let r = run(&t, s);
    let want = 1448.0 / 1538.0 * 125.0 / (1.0 + 84.0 / 1048576.0);
    within("SMB3 read over 1 GbE from a stripe, logical MB/s", pool(&r).mb_s, want, 0.02);
    assert_eq!(r.bottleneck.id, "client.laptop.link.rx");
    // Each request waits the 100 us round trip once, so no logical read is faster than it.
    assert!(pool(&r).lat_us.p50 > 100.0, "{:?}", pool(&r).lat_us);
}

/// md RAID 5 of four Samsung 990 PRO (6,900 MB/s writes each) on a host of one core that
/// XORs 1,000 MB/s: full-stripe writes (3 x 512 KiB) compute parity over every data byte,
/// so the core binds the pool at 1,000 MB/s logical, and the report's CPU use names the
/// parity at that rate and a full core.
#[test]
fn parity_on_a_slow_cpu_binds_a_raid5_of_nvme_drives() {
    let mut text = String::from(
        "[host]\npart = \"generic-host\"\nparams = { cpu_cores = 1, cpu_xor_mb_s = 1000, cpu_per_io_us = 0 }\n",
    );
    for i in 0..4 {
        text += &format!(
            "[[drive]]\nid = \"n{i}\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\nlink = \"pcie4x4\"\n"
        );
    }
    text += "[[pool]]\nid = \"tank\"\nlayout = \"raid5\"\nmembers = [\"n0\", \"n1\", \"n2\", \"n3\"]\n";
    let t = topology(&text);
    let r = run(&t, spec("write", "1536k", 8, "20ms", "0.2s"));
    within("raid5 full-stripe writes on one 1,000 MB/s core, logical MB/s", pool(&r).mb_s, 1000.0, 0.02);
    assert_eq!(r.bottleneck.id, "host.cpu");
    let xor = r.cpu.iter().find(|c| c.kind == "xor").expect("xor in the CPU use");
    within("xor MB/s processed", xor.mb_s, 1000.0, 0.02);
    within("xor share of the host's cores", xor.util, 1.0, 0.02);
}

/// unRAID of three data disks and one parity disk (WD Red Plus 4 TB). Read-modify-write
/// reads the old data and the old parity, then writes both: every write costs the parity
/// disk two I/Os at one place. Random writes spread over the data disks leave the parity
/// disk alone doing two I/Os per write (each data disk two per third of them), so the
/// parity disk's I/O rate bounds the pool's at half of it. (Every disk is busy all the
/// time, the data disks seeking farther with shorter queues, so utilization alone does
/// not single the parity disk out.) Turbo (reconstruct-write) reads the same place on the two other data disks and
/// writes data and parity: one streaming I/O per disk per write, so sequential writes go
/// at one disk's media rate, 175 MB/s (no disk does two).
///
/// Sequential read-modify-write fills the first data disk: it and the parity disk each read
/// and then write every byte at the same place, so each moves two bytes of media per logical
/// byte: at most 175 / 2 = 87.5 MB/s (the read-ahead and the write-back share the disk's
/// media time).
#[test]
fn unraid_writes_are_bound_by_parity_in_rmw_and_by_the_disks_in_turbo() {
    let rmw = on_hba("wd-red-plus-4tb", 4, "layout = \"unraid\"\nparity = 1\nwrite_mode = \"rmw\"");
    let r = run(&rmw, spec("randwrite", "64k", 16, "1s", "1s"));
    let parity_ios = r.drive("d3").expect("parity disk").ios as f64;
    within("parity I/Os per logical write", parity_ios / pool(&r).ios as f64, 2.0, 0.03);
    for d in ["d0", "d1", "d2"] {
        let ios = r.drive(d).expect("data disk").ios as f64;
        assert!(ios < 0.5 * parity_ios, "{d}: {ios} I/Os, parity {parity_ios}");
    }
    let turbo = on_hba("wd-red-plus-4tb", 4, "layout = \"unraid\"\nparity = 1\nwrite_mode = \"turbo\"");
    let r = run(&turbo, spec("write", "1m", 4, "0.5s", "1s"));
    within("unraid turbo write, logical MB/s", pool(&r).mb_s, 175.0, 0.05);
    let r = run(&rmw, spec("write", "1m", 4, "0.5s", "1s"));
    let mb_s = pool(&r).mb_s;
    println!("unraid sequential rmw write: {mb_s:.1} MB/s");
    assert!(mb_s <= 87.5 * 1.01, "one disk reads and writes every byte: {mb_s} MB/s");
    within("unraid sequential rmw write, logical MB/s", mb_s, 87.5, 0.10);
}

/// The B550 build's copy: the desktop sends 1 MiB SMB3 writes, two in flight (smbclient's
/// window), fewer than the three a 3 MiB RAID 6 row needs; but smbd writes them into the
/// page cache, and writeback hands md at least 4 MiB of the file under one plug
/// (fs/fs-writeback.c MIN_WRITEBACK_PAGES), so the rows are still written whole: 8/6 member
/// bytes per logical byte and no member reads.
#[test]
fn a_smb_copy_to_md_raid6_is_written_in_full_stripes_through_the_page_cache() {
    let o = iopath()
        .args(["simulate", "configs/nas-b550-lsi-10g.toml", "--workload", "copy-to-nas"])
        .args(["--ramp", "0.1s", "--runtime", "1s", "--json", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Report = serde_json::from_slice(&o.stdout).expect("report json");
    let p = pool(&r);
    // Counted over the logical I/Os completed in the window: a 3 MiB row more or less at
    // its edges against ~600 MB of writes moves the ratio by under 1%.
    within("B550 copy-to-nas: member bytes per logical byte", p.overhead, 8.0 / 6.0, 0.02);
    assert_eq!(p.member_read_bytes, 0, "full stripes read nothing");
}
