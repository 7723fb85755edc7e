//! SATA/SAS fabric: port multipliers (CBS and FBS), controller command limits, expanders.
//! See main.rs.

use super::common::*;
use iopath_model::WorkloadSpec;

/// A JMB585 (PCIe 3.0 x2, FBS-capable AHCI) in a CPU slot; port 0 carries a JMB575 port
/// multiplier (`fbs` on or off) with `n` copies of `drive` below it, port 1 one more copy
/// of `drive` directly ("direct").
fn pm_topology(drive: &str, n: u32, fbs: bool) -> iopath_model::Topology {
    let text = format!(
        r#"
[host]
part = "intel-lga1700"
[[node]]
id = "sata"
part = "jmb585"
parent = "host"
[[node]]
id = "pm"
part = "jmb575"
parent = "sata"
port = 0
params = {{ fbs = {fbs} }}
[[drive]]
id = "d"
count = {n}
part = "{drive}"
parent = "pm"
port = 0
[[drive]]
id = "direct"
part = "{drive}"
parent = "sata"
port = 1
"#
    );
    topology("pm.toml", &text)
}

fn on(drives: &[&str], spec: WorkloadSpec) -> WorkloadSpec {
    WorkloadSpec { drives: Some(drives.iter().map(|d| d.to_string()).collect()), ..spec }
}

#[test]
fn one_ssd_behind_an_fbs_multiplier_runs_at_its_direct_rate() {
    // Expected: the Samsung 870 EVO's data sheet, 98,000 IOPS of 4 KiB random reads at QD32.
    // Its bytes, 98,000 x 4,096 B = 401 MB/s, fit the PM's SATA 6 Gb/s upstream (600 MB/s
    // of 8b/10b payload before FIS overheads), and with one drive busy no FIS of another
    // drive is interleaved, so FBS never switches: nothing behind the PM but the drive binds.
    let t = pm_topology("samsung-870evo-1tb", 1, true);
    let spec = |d: &str| on(&[d], WorkloadSpec { runtime: Some("0.3s".into()), ..ws("randread", "4k", 32) });
    let behind = sim(&t, spec("d0")).total.iops;
    let direct = sim(&t, spec("direct")).total.iops;
    assert_within("870 EVO behind an FBS PM, 4k randread QD32 [IOPS]", behind, 98_000.0, 0.10);
    assert_within("870 EVO behind an FBS PM vs on its own port [IOPS]", behind, direct, 0.10);
}

#[test]
fn fbs_switching_is_paid_while_two_drives_move_data() {
    // Two 870 EVOs behind the FBS multiplier, 4 KiB random reads at QD32: now FISes of two
    // drives interleave on the upstream and each command pays the multiplier's switch cost
    // (the JMB575 takes the generic PM's 20 us, fitted to source 003). Each command then holds
    // the upstream for its bytes plus one switch: 4,096 B over the SATA 6 Gb/s payload
    // (6 Gb/s x 8/10 = 600 MB/s) at the relay efficiency 0.92, less 0-15% for FIS framing,
    // + 20 us. Expected: 1 / (4096 / (600e6 x 0.92 x [0.85, 1]) + 20e-6) = 34,800-36,500
    // IOPS for the pair, far below two drives' worth (2 x 98,000) even though one of them
    // alone runs at its data sheet rate (the test above).
    let t = pm_topology("samsung-870evo-1tb", 2, true);
    let r = sim(&t, on(&["d0", "d1"], WorkloadSpec { runtime: Some("0.3s".into()), ..ws("randread", "4k", 32) }));
    let iops = r.total.iops;
    println!("two 870 EVO behind an FBS PM, 4k randread QD32: {iops:.0} IOPS (expected 34,800-36,500)");
    assert!((34_800.0..=36_500.0).contains(&iops), "{iops}");
    let (a, b) = (r.drives[0].iops, r.drives[1].iops);
    assert!((a / b - 1.0).abs() < 0.05, "the upstream is shared evenly: {a} vs {b}");
}

#[test]
fn one_hdd_behind_a_cbs_multiplier_keeps_its_queue() {
    // libata (sata_pmp_qc_defer_cmd_switch) defers a command only for a drive other than the
    // one with commands outstanding, so a drive alone keeps its NCQ queue of 32: it must run
    // as it does on its own port (the issue's tolerance, 10%), and well above its QD1 rate.
    // QD1 from the IronWolf's figures: one seek (8.5 ms) and half a turn at 7,200 rpm
    // (4.17 ms) per command, 1 / 12.67 ms = 79 IOPS; with 32 queued commands rotational
    // position ordering shortens both, so QD32 must exceed 1.5 x 79 = 118 IOPS.
    let t = pm_topology("seagate-ironwolf-8tb", 1, false);
    let spec = |d: &str| on(&[d], WorkloadSpec { runtime: Some("1s".into()), ..ws("randread", "4k", 32) });
    let behind = sim(&t, spec("d0")).total.iops;
    let direct = sim(&t, spec("direct")).total.iops;
    assert_within("IronWolf behind a CBS PM vs on its own port, 4k QD32 [IOPS]", behind, direct, 0.10);
    assert!(behind > 118.0, "QD32 behind CBS at {behind:.0} IOPS: the queue is not kept");
}

#[test]
fn four_hdds_behind_a_cbs_multiplier_move_about_as_much_as_one() {
    // Source 003's wiring (configs/marvell9172-pm-5hdd.toml: 88SE9172, a 3 Gb/s port
    // multiplier, SATA II-era HDDs on 1.5 Gb/s links), four drives, 1 MiB sequential reads at
    // QD32: a workload nobody published. Under CBS only the drive holding the link moves data,
    // at most at its own port's pace; the others wait (their read-ahead may fill their cache).
    // Expected band, from the sources: several disks under CBS move about as much as one
    // ("multi-disk performance is the same as a single disk" on a JMB575 before FBS was
    // enabled, github.com/ophub/kernel pull 31), and source 003's five drives under CBS read
    // 101-115 MiB/s where one alone read 78 MiB/s (1.3-1.5x). One drive: 82.9 MB/s at the
    // outer zone (fits.toml, source 003); one 1.5 Gb/s port: 150 MB/s of 8b/10b payload.
    // So 4 drives under CBS: between one drive's media rate and one port, 80-150 MB/s, far
    // below four drives' worth (4 x 82.9 = 332 MB/s; FBS reaches the 3 Gb/s upstream, ~270).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/marvell9172-pm-5hdd.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let spec = || WorkloadSpec { active: Some(4), runtime: Some("2s".into()), ..ws("read", "1m", 32) };
    let cbs = topology("cbs.toml", &text.replace("params = { fbs = true }", "params = { fbs = false }"));
    let mb_s = sim(&cbs, spec()).total.mb_s;
    println!("four HDDs behind a CBS PM (source 003 wiring), 1 MiB read QD32: {mb_s:.1} MB/s");
    assert!((80.0..=150.0).contains(&mb_s), "{mb_s:.1} MB/s outside 80-150 MB/s");
    // The same four under FBS share the upstream instead of taking turns.
    let fbs = sim(&topology("fbs.toml", &text), spec()).total.mb_s;
    println!("the same under FBS: {fbs:.1} MB/s");
    assert!(fbs > 2.0 * mb_s, "FBS {fbs:.1} vs CBS {mb_s:.1} MB/s");
}

/// Eight 870 EVOs, one per port, on the HBA `part` in a CPU slot.
fn eight_ssds(part: &str) -> iopath_model::Topology {
    let text = format!(
        r#"
[host]
part = "intel-lga1700"
[[node]]
id = "hba"
part = "{part}"
parent = "host"
[[drive]]
id = "ssd"
count = 8
part = "samsung-870evo-1tb"
parent = "hba"
port = 0
"#
    );
    topology("hba.toml", &text)
}

#[test]
fn eight_sata_ssds_on_a_sas2008_are_bound_by_its_command_rate() {
    // Expected: ServeTheHome (servethehome.com/lsi-9202-16): a SAS2008 card is "capable of
    // ... some 350,000 IOPS" (and two SAS2008s on the 9202-16e, 726,000). Eight 870 EVOs
    // could do 8 x 98,000 = 784,000 IOPS and the PCIe 2.0 x8 link ~3.2 GB/s = 780k IOPS of
    // 4 KiB, so the controller's command processing binds at its published figure.
    let t = eight_ssds("lsi-sas2008");
    let r = sim(&t, WorkloadSpec { runtime: Some("0.2s".into()), ..ws("randread", "4k", 32) });
    assert_within("8x 870 EVO on a SAS2008, 4k randread QD32 [IOPS]", r.total.iops, 350_000.0, 0.10);
    assert_eq!(r.bottleneck.id, "hba.cmd", "{:?}", r.bottleneck);
    assert!(r.bottleneck.util > 0.95, "{:?}", r.bottleneck);
}

#[test]
fn two_sas2008_chips_do_twice_one_the_9202_16e() {
    // A held-out check of both SAS2008 figures (fitted to the one-chip card figures of
    // ServeTheHome, servethehome.com/lsi-9202-16: 'some 350,000 IOPS' and '2,500MB/Second'):
    // the LSI 9202-16e puts two SAS2008s behind a PCIe switch on one card, and the same
    // article measures it at '726,000 IOPS' and 'over 5GB/s'. Each chip keeps its own command
    // engine and data mover and the switch's uplink (PCIe 3.0 x16 here, ~15 GB/s) binds
    // neither, so expected: 2 x 350,000 = 700,000 IOPS against the published 726,000 (-3.6%),
    // and 2 x 2,500 = 5,000 MB/s. Sixteen 870 EVOs, eight per chip, could do far more
    // (16 x 98,000 IOPS, 16 x 560 MB/s).
    let text = r#"
[host]
part = "intel-lga1700"
[[node]]
id = "sw"
part = "broadcom-pex8747"
parent = "host"
[[node]]
id = "hba0"
part = "lsi-sas2008"
parent = "sw"
[[node]]
id = "hba1"
part = "lsi-sas2008"
parent = "sw"
[[drive]]
id = "a"
count = 8
part = "samsung-870evo-1tb"
parent = "hba0"
port = 0
[[drive]]
id = "b"
count = 8
part = "samsung-870evo-1tb"
parent = "hba1"
port = 0
"#;
    let t = topology("9202-16e.toml", text);
    let iops = sim(&t, WorkloadSpec { runtime: Some("0.2s".into()), ..ws("randread", "4k", 32) }).total.iops;
    assert_within("9202-16e (2x SAS2008), 16 SSDs, 4k randread QD32 [IOPS]", iops, 726_000.0, 0.10);
    let mb_s = sim(&t, WorkloadSpec { runtime: Some("0.2s".into()), ..ws("read", "1m", 8) }).total.mb_s;
    assert_within("9202-16e (2x SAS2008), 16 SSDs, 1 MiB read QD8 [MB/s]", mb_s, 5_000.0, 0.10);
}
