//! Drive behaviour (issue #13, item 6): SSD write caches and their cliff, drive-managed SMR,
//! HDD write-back caching of random writes, and the spread of SSD latency. See main.rs.

use super::common::*;
use iopath_model::WorkloadSpec;
use iopath_model::paths::ResourceGraph;

/// One 970 EVO Plus 1 TB on the CPU's PCIe 3.0 x4 lanes: nothing between it and the host
/// carries less than the drive writes (PCIe 3.0 x4 write payload ~3,370 MB/s > 3,300 MB/s).
const NVME_970: &str = r#"
name = "nvme-970"
description = "one 970 EVO Plus on CPU lanes"
[host]
part = "amd-am4"
[[drive]]
id = "n"
part = "samsung-970evoplus-1tb"
parent = "host"
"#;

/// A workload with a runtime and a ramp, as fio's `runtime`/`ramp_time`.
fn timed(rw: &str, bs: &str, qd: u32, ramp: &str, runtime: &str) -> WorkloadSpec {
    WorkloadSpec { runtime: Some(runtime.into()), ramp: Some(ramp.into()), ..ws(rw, bs, qd) }
}

/// One drive on an Intel Z87 PCH SATA port, with `params` on the drive.
fn on_sata_port(part: &str, params: &str) -> String {
    format!(
        r#"
name = "one-sata-drive"
description = "one drive on a Z87 SATA port"
[host]
part = "intel-lga1150"
[[node]]
id = "pch"
part = "intel-z87-pch"
parent = "host"
[[node]]
id = "sata"
part = "intel-z87-sata"
parent = "pch"
[[drive]]
id = "d"
part = "{part}"
parent = "sata"
port = 0
params = {{ {params} }}
"#
    )
}

/// Host software and fabric time of the drive's path, both ways [us] (catalog figures: the
/// host's io_overhead_us and the controller's cmd_overhead_us), added to every I/O.
fn fixed_us(t: &iopath_model::Topology) -> f64 {
    let l = ResourceGraph::new(t).latencies(t, t.drives[0]);
    l.host_us + l.fabric_us
}

#[test]
fn an_ssd_write_longer_than_its_slc_cache_falls_off_the_cliff() {
    // Samsung 970 EVO Plus 1 TB data sheet: 3,300 MB/s sequential write into a 42 GB
    // Intelligent TurboWrite buffer, 1,700 MB/s after it.
    //
    // Shorter than the cache: 1 s writes 3.3 GB < 42 GB, all at the cached rate: 3,300 MB/s.
    //
    // Much longer: a 20 s write from an empty cache fills it after 42,000 MB / 3,300 MB/s =
    // 12.727 s and writes the remaining 7.273 s at 1,700 MB/s, so the average is
    //   (42,000 + 1,700 x (20 - 12.727)) / 20 = (42,000 + 12,364) / 20 = 2,718.2 MB/s,
    // where a drive without the cliff would report 3,300 MB/s.
    let t = topology("nvme-970", NVME_970);
    let short = sim(&t, timed("write", "1m", 32, "0s", "1s"));
    assert_within("970 EVO Plus 1 s sequential write [MB/s]", short.total.write_mb_s, 3300.0, 0.03);
    let cliff_s = 42_000.0 / 3300.0;
    let expected = (42_000.0 + 1700.0 * (20.0 - cliff_s)) / 20.0;
    let long = sim(&t, timed("write", "1m", 32, "0s", "20s"));
    assert_within("970 EVO Plus 20 s sequential write [MB/s]", long.total.write_mb_s, expected, 0.03);
    // check's bound is the cached rate (a short run reaches it); its note names the cliff.
    let note = ResourceGraph::write_cache_note(&t, t.drives[0]).expect("a note on the cache");
    assert!(note.contains("42 GB") && note.contains("1700 MB/s"), "{note}");
}

#[test]
fn a_qlc_ssd_falls_to_its_post_cache_rate_unless_idle_time_folds_the_cache() {
    // Samsung 870 QVO 4 TB (kitguru.net's review): 78 GB TurboWrite region, 160 MB/s after it.
    // The cache is cut to 0.2 GB here (a drive with little free space keeps only its static
    // part) so the run stays short; rates are the part's. Cached writes are bound by the
    // drive's 530 MB/s (the Z87 port carries more: ~530 MB/s of SATA 6G write payload after
    // its efficiency): the 1 s write from empty writes 200 MB at 530 MB/s in 0.377 s, then
    // 0.623 s at 160 MB/s: 200 + 160 x 0.623 = 299.6 MB/s.
    let text = on_sata_port("samsung-870qvo-4tb", "write_cache_gb = 0.2");
    let t = topology("qvo", &text);
    let cached = sim(&t, timed("write", "1m", 32, "0s", "0.3s")).total.write_mb_s;
    assert_within("870 QVO 0.3 s write inside the cache [MB/s]", cached, 530.0, 0.01);
    let expected = 200.0 + 160.0 * (1.0 - 200.0 / 530.0);
    let r = sim(&t, timed("write", "1m", 32, "0s", "1s"));
    assert_within("870 QVO 1 s write over a 0.2 GB cache [MB/s]", r.total.write_mb_s, expected, 0.03);
    // A 90/10 read/write mix at QD1 writes about 0.1 x 1 MiB per ~2.1 ms (~50 MB/s): in 10 s,
    // 500 MB, twice the cache, so without folding it would fill. But the NAND
    // is idle 1 - 50/530 of the time and folds at 160 MB/s in it, ~145 MB/s, more than comes
    // in, so the cache never fills and the writes keep the cached rate: the same run as on
    // a drive without a cliff (write_cache_gb = 0).
    let mix = |params: &str| {
        let t = topology("qvo-mix", &on_sata_port("samsung-870qvo-4tb", params));
        sim(&t, WorkloadSpec { rwmixread: Some(90), ..timed("rw", "1m", 1, "0s", "10s") }).total.write_mb_s
    };
    assert_within(
        "870 QVO 90/10 mix QD1, writes vs no cliff [MB/s]",
        mix("write_cache_gb = 0.2"),
        mix("write_cache_gb = 0"),
        0.02,
    );
}

#[test]
fn an_smr_drive_s_sustained_random_writes_fall_to_the_band_cleaning_floor() {
    // WD40EFAX, drive-managed SMR: random writes are logged into a CMR media cache; once it
    // is full, each byte accepted needs a shingled band read and rewritten. A cache of C bytes
    // holding writes spread over S bytes of LBA space frees C x B / S bytes per band of B
    // bytes cleaned in 2 B / r, so the floor is C r / (2 S) (sim/src/hdd.rs, SmrLog).
    //
    // Here C = 10 MB (cut from 20 GB so that the cache fills within the ramp: 2,441 writes of
    // 4 KiB, about 0.6 s at ~4,400 appends/s), S = the region, 0.1% of 4 TB = 4 GB, and r the
    // outer zone's rate: 180 MB/s x sqrt(1 - (1/60)(1 - 0.5^2)) = 178.9 MB/s (30 zones,
    // inner/outer 0.5). floor = 1e7 x 178.9e6 / (2 x 4e9) = 223.6 kB/s, so each 4 KiB write
    // takes 4096 / 223.6e3 = 18.32 ms + the firmware's 0.2 ms per command (+ host and fabric):
    // about 54 IOPS. The drive's write cache is off, so the media's pace is what the host sees.
    let text = on_sata_port("wd-red-4tb-efax", "smr_cache_gb = 0.01, write_cache = false");
    let t = topology("smr", &text);
    let r_outer = 180e6 * (1.0 - (1.0 / 60.0) * (1.0 - 0.25f64)).sqrt();
    let floor = 1e7 * r_outer / (2.0 * 4e9);
    let expected = 1.0 / (4096.0 / floor + 200e-6 + fixed_us(&t) * 1e-6);
    let spec = WorkloadSpec { region: Some("0.1%".into()), ..timed("randwrite", "4k", 1, "1s", "2s") };
    let r = sim(&t, spec);
    assert_within("WD40EFAX 4 KiB random write, media cache full [IOPS]", r.total.iops, expected, 0.10);
    // Before the cache fills the same writes are appends at the outer zone: no seek, no
    // rotational wait, 0.2 ms + 4096 / 178.9 MB/s each: ~4,400 IOPS, eighty times the floor.
    let fresh = sim(&t, WorkloadSpec { region: Some("0.1%".into()), ..timed("randwrite", "4k", 1, "0s", "0.2s") });
    let append = 1.0 / (200e-6 + 4096.0 / r_outer + fixed_us(&t) * 1e-6);
    assert_within("WD40EFAX 4 KiB random write, media cache empty [IOPS]", fresh.total.iops, append, 0.10);
    // Sequential writes fill whole bands and skip the media cache: the zone rate, not a floor.
    // (After a 3 s ramp: the first 256 MB go into the DRAM write cache at the port's pace.)
    let seq = sim(&t, timed("write", "1m", 4, "3s", "1s"));
    assert_within("WD40EFAX 1 MiB sequential write [MB/s]", seq.total.write_mb_s, r_outer / 1e6, 0.10);
}

#[test]
fn hdd_random_writes_are_acknowledged_from_the_write_cache_until_it_is_full() {
    // Seagate IronWolf 8 TB (7200 rpm, average seek 8.5 ms, 0.2 ms firmware time per command).
    // 4 KiB random read at QD1: every read waits for a seek and, on average, half a turn:
    //   8.5 + 60,000 / 7,200 / 2 + 0.2 = 8.5 + 4.167 + 0.2 = 12.87 ms (+ host and fabric)
    //   -> about 78 IOPS.
    // 4 KiB random write at QD1 with the write cache on (WCE, the SATA default; Seagate's
    // product manuals: Good status once the data is in the buffer): acknowledged after the
    // firmware's 0.2 ms (+ host and fabric, + 4 KiB at 6 Gb/s, ~7 us) -> about 4,500 IOPS,
    // while the 256 MB cache has room (0.5 s x 4,500 x 4 KiB = 9 MB).
    let t = topology("hdd", &on_sata_port("seagate-ironwolf-8tb", ""));
    let fixed = fixed_us(&t) * 1e-6;
    let read_expected = 1.0 / (8.5e-3 + 60.0 / 7200.0 / 2.0 + 0.2e-3 + fixed);
    let write_expected = 1.0 / (0.2e-3 + 4096.0 / 600e6 + fixed);
    let read = sim(&t, timed("randread", "4k", 1, "0s", "2s")).total.iops;
    let write = sim(&t, timed("randwrite", "4k", 1, "0s", "0.5s")).total.iops;
    assert_within("IronWolf 4 KiB random read QD1 [IOPS]", read, read_expected, 0.10);
    assert_within("IronWolf 4 KiB random write QD1, cache on [IOPS]", write, write_expected, 0.10);

    // Once the cache is full (cut to 1 MiB: 256 writes of 4 KiB), a write waits for room, so the
    // rate is the destage rate: the drive writes its dirty entries in rotational position order
    // over up to 32 of them, so each costs less positioning than a random access (at most the
    // 12.87 ms above: ~78 IOPS is a floor) and at least the firmware time, a track-to-track
    // seek and the shortest of 33 rotational gaps: 0.2 + 0.8 + 8.33 / 33 = 1.25 ms (~800 IOPS).
    let small = topology("hdd-small-cache", &on_sata_port("seagate-ironwolf-8tb", "cache_mib = 1"));
    let full = sim(&small, timed("randwrite", "4k", 1, "0.5s", "2s")).total.iops;
    println!("IronWolf 4 KiB random write QD1, cache full: {full:.0} IOPS (band 78..800)");
    assert!(full > read_expected && full < 800.0, "destage-bound rate {full:.0} IOPS outside 78..800");
    assert!(full < write_expected / 5.0, "a full cache must not acknowledge at the cached rate: {full:.0}");
    // The destage is the same ordering as 32 queued writes with the cache off.
    let off = topology("hdd-wce-off", &on_sata_port("seagate-ironwolf-8tb", "write_cache = false"));
    let qd32 = sim(&off, timed("randwrite", "4k", 32, "0.5s", "2s")).total.iops;
    assert_within("IronWolf full cache QD1 vs cache off QD32 [IOPS]", full, qd32, 0.25);
    // And with the cache off, a QD1 write positions like a read.
    let wt = sim(&off, timed("randwrite", "4k", 1, "0s", "2s")).total.iops;
    assert_within("IronWolf 4 KiB random write QD1, cache off [IOPS]", wt, read_expected, 0.10);
}

#[test]
fn ssd_read_latency_spreads_with_the_datasheet_mean_and_qos_percentile() {
    // 970 EVO Plus: read_latency_us 70 (its mean); no QoS figure on the data sheet, so the
    // catalog's default p99.9 = 2.73 x mean applies (Intel DC S4600 specification: random 4 KB
    // QD1 read 110 us typical, 99.9% QoS 300 us): 191.1 us.
    // Log-normal with that mean and p99.9 (z = 3.0902):
    //   k = ln(191.1 / 70) = 1.0043,  s = z - sqrt(z^2 - 2k) = 3.0902 - 2.7461 = 0.3441,
    //   mu = ln 70 - s^2 / 2 = 4.2485 - 0.0592 = 4.1893,
    //   p50 = e^mu = 65.98 us,  p99 = e^(mu + 2.3263 s) = e^4.9898 = 146.9 us.
    // At QD1 nothing queues: host and fabric time add a constant to each.
    let t = topology("nvme-970", NVME_970);
    let fixed = fixed_us(&t);
    let z = 3.0902f64;
    let k = (70.0f64 * 2.73 / 70.0).ln();
    let s = z - (z * z - 2.0 * k).sqrt();
    let mu = 70.0f64.ln() - s * s / 2.0;
    let r = sim(&t, timed("randread", "4k", 1, "0s", "1s"));
    let lat = &r.total.lat_us;
    // (+ 4 KiB over PCIe 3.0 x4 at its 3,565 MB/s read payload rate: 1.15 us.)
    let fixed = fixed + 4096.0 / 3565.0;
    assert_within("970 EVO Plus 4 KiB QD1 read, mean latency [us]", lat.mean, 70.0 + fixed, 0.03);
    assert_within("970 EVO Plus 4 KiB QD1 read, p50 latency [us]", lat.p50, mu.exp() + fixed, 0.05);
    assert_within("970 EVO Plus 4 KiB QD1 read, p99 latency [us]", lat.p99, (mu + 2.3263 * s).exp() + fixed, 0.05);
    assert!(lat.p99 > 2.0 * lat.p50, "p99 {} not well above p50 {}", lat.p99, lat.p50);
}
