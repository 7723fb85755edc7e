//! PCIe: link training (a device trains at the lower generation and width of its own and its
//! port's) and the read-request path of disk writes (MRRS, completions, tags, hop latency).
//! See main.rs.

use super::common::*;
use iopath_model::WorkloadSpec;
use iopath_model::paths::ResourceGraph;

/// PCIe payload rate of `lanes` lanes at `gt_s` GT/s with 128b/130b encoding, for TLPs of
/// `payload` bytes with a `header`-byte TLP header, 8 bytes of framing (STP token, sequence
/// number, LCRC: Intel AN 708) and 1% of the line for SKP ordered sets and ACK/UpdateFC DLLPs
/// (links.toml) [MB/s].
fn pcie_payload_mb_s(gt_s: f64, lanes: f64, payload: f64, header: f64) -> f64 {
    let raw = gt_s * 1e9 * (128.0 / 130.0) / 8.0 * lanes / 1e6;
    raw * payload / (payload + header + 8.0) * 0.99
}

fn node<'a>(t: &'a iopath_model::Topology, id: &str) -> &'a iopath_model::topology::Node {
    t.nodes.iter().find(|n| n.id == id).unwrap()
}

/// Two Samsung 990 PRO (PCIe 4.0 x4) below a Broadcom PEX8747 (a PCIe 3.0 switch, x16 up and
/// x16 downstream ports) on an LGA1700 host.
const GEN4_BELOW_GEN3_SWITCH: &str = r#"
name = "gen4-below-gen3"
[host]
part = "intel-lga1700"
[[node]]
id = "sw"
part = "broadcom-pex8747"
parent = "host"
[[drive]]
id = "a"
part = "samsung-990pro-2tb"
parent = "sw"
[[drive]]
id = "b"
part = "samsung-990pro-2tb"
parent = "sw"
"#;

/// Each drive trains at PCIe 3.0 x4, the switch's downstream port generation, and moves
/// Gen3 x4 payload. Expected: the PEX8747 is a PCIe Gen 3 (8 GT/s) switch; MPS is the
/// smallest on the path, min(990 PRO 256, PEX8747 2048, LGA1700 root port 256) = 256 B, so
/// posted writes of disk reads carry 256 B per 256 + 16 (4DW header) + 8 (framing) bytes:
/// 8e9 x 128/130 / 8 x 4 = 3,938.5 MB/s raw x 256/280 x 0.99 = 3,564.8 MB/s per drive, and
/// 7,129.7 MB/s for two (the x16 uplink carries 14,259 MB/s and does not bind; each drive's
/// 7,450 MB/s media does not either). Before link training each drive kept its own
/// PCIe 4.0 x4 link and the pair was predicted at 14,260 MB/s (the issue's figure).
#[test]
fn two_gen4_drives_below_a_gen3_switch_move_gen3_x4_payload() {
    let t = topology("gen4-below-gen3", GEN4_BELOW_GEN3_SWITCH);
    for id in ["a", "b"] {
        assert_eq!(node(&t, id).link.short_name(), "pcie3x4", "{id} trains at the switch's generation");
    }
    let per_drive = pcie_payload_mb_s(8.0, 4.0, 256.0, 16.0);
    let r = sim(&t, WorkloadSpec { runtime: Some("0.3s".into()), ..ws("read", "1m", 32) });
    for d in &r.drives {
        assert_within(&format!("990 PRO below a Gen3 switch, drive {}", d.id), d.read_mb_s, per_drive, 0.03);
    }
    assert_within("two 990 PRO below a Gen3 switch, total", r.total.read_mb_s, 2.0 * per_drive, 0.03);
}

/// A 990 PRO on a CPU root port (PCIe 4.0 x4) of an Intel (LGA1700) and an AMD (AM5) host.
fn cpu_attached(host: &str, drive: &str) -> iopath_model::Topology {
    topology(
        "cpu-attached",
        &format!(
            r#"
name = "cpu-attached"
[host]
part = "{host}"
[[drive]]
id = "d"
part = "{drive}"
parent = "host"
link = "pcie4x4"   # the CPU's M.2 slot: four PCIe 4.0 lanes
"#
        ),
    )
}

/// NVMe sequential writes on a CPU-attached PCIe 4.0 x4 link reach the data sheet, on an
/// Intel and an AMD host. Expected: Samsung 990 PRO 2 TB data sheet, sequential write up to
/// 6,900 MB/s; Samsung 970 EVO Plus 1 TB, 3,300 MB/s (its link trains at PCIe 3.0 x4, its
/// own generation). Neither link binds: the root complex returns completions of the link's
/// MPS (256 B, hosts.toml with AMD PG213's note on completion combining), so the write
/// payload rate is 3,938.5 x 2 x 256/(256 + 12 + 8) x 0.99 = 7,233 MB/s on Gen4 x4 and
/// 3,616 MB/s on Gen3 x4, and the read-request path (256 tags x 512 B over a 0.5 us round
/// trip: 262 GB/s) is far above both. With 64 B completions the same link carried only
/// 5,941 MB/s (the issue's figure).
#[test]
fn nvme_sequential_writes_reach_the_data_sheet_on_intel_and_amd_hosts() {
    for host in ["intel-lga1700", "amd-am5"] {
        for (drive, datasheet) in [("samsung-990pro-2tb", 6900.0), ("samsung-970evoplus-1tb", 3300.0)] {
            let t = cpu_attached(host, drive);
            let r = sim(&t, WorkloadSpec { runtime: Some("0.3s".into()), ..ws("write", "1m", 32) });
            assert_within(&format!("{drive} sequential write on {host}"), r.total.write_mb_s, datasheet, 0.05);
        }
    }
    // The Gen4 link's write payload rate, by the arithmetic above, is above the data sheet.
    assert!(pcie_payload_mb_s(16.0, 4.0, 256.0, 12.0) > 6900.0);
    assert!(pcie_payload_mb_s(16.0, 4.0, 64.0, 12.0) < 6900.0 * 0.9);
}

/// Six Samsung 870 EVO on the Z87 PCH's SATA ports (source 002's platform: LGA1150, DMI 2.0
/// x4).
const PCH_SATA_6SSD: &str = r#"
name = "z87-6ssd"
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
id = "s"
count = 6
part = "samsung-870evo-1tb"
parent = "sata"
port = 0
"#;

/// Sequential writes of SATA SSDs through a chipset link come out below reads where the
/// request path binds. Expected, from the figures:
/// - reads: six drives x 560 MB/s exceed the DMI 2.0 x4 link (5 GT/s, 8b/10b: 2,000 MB/s raw),
///   whose posted-write payload at MPS 128 is 2,000 x 128/(128 + 16 + 8) x 0.99 = 1,667 MB/s;
/// - writes: the PCH's AHCI engine reads the data from memory with 512 B requests, 4 of them
///   outstanding (intel-z87-sata read_tags, fitted to Tom's Hardware's six-S3500 JBOD: writes
///   'just over 1200 MB/s'), each waiting 0.5 us (host DMA read latency) + 2 x 0.5 us (the PCH
///   hop, up and down) + 512 B at the DMI's completion payload rate 2,000 x 128/(128 + 12 + 8)
///   x 0.99 = 1,712 MB/s (0.299 us): 4 x 512 B / 1.799 us = 1,138 MB/s.
///
/// So writes = 1,138 < reads = 1,667 MB/s, and the bound names the request path.
#[test]
fn sata_writes_through_a_chipset_stay_below_reads_when_the_request_path_binds() {
    let t = topology("z87-6ssd", PCH_SATA_6SSD);
    let dmi_read = 2000.0 * 128.0 / 152.0 * 0.99;
    let dmi_write = 2000.0 * 128.0 / 148.0 * 0.99;
    let rtt_s = (0.5 + 2.0 * 0.5) * 1e-6 + 512.0 / (dmi_write * 1e6);
    let request_bound = 4.0 * 512.0 / rtt_s / 1e6;
    let spec = |rw: &str| WorkloadSpec { runtime: Some("0.3s".into()), ..ws(rw, "1m", 32) };
    let read = sim(&t, spec("read"));
    let write = sim(&t, spec("write"));
    assert_within("6 SATA SSDs on the Z87 PCH, sequential read", read.total.read_mb_s, dmi_read, 0.03);
    assert_within("6 SATA SSDs on the Z87 PCH, sequential write", write.total.write_mb_s, request_bound, 0.03);
    assert!(write.total.write_mb_s < read.total.read_mb_s, "writes {write:?} above reads");
    assert_eq!(write.bottleneck.id, "sata.rdreq", "the request path is named as the bottleneck");
    // The closed-form bound agrees, for every drive count where the request path binds
    // (from 3 drives: 3 x 530 MB/s > 1,138; below that each drive's own rates decide).
    let g = ResourceGraph::new(&t);
    let rows = iopath_reports::tree::bound_table(&t, &g, 1 << 20);
    let bound_rows: Vec<_> = rows.chunks(3).filter(|r| r[1].binding == "sata.rdreq").collect();
    assert_eq!(bound_rows.len(), 4, "the request path binds the writes of 3 to 6 drives");
    for r in bound_rows {
        assert!(
            r[1].total_mb_s < r[0].total_mb_s,
            "{} drives: write {} above read {}",
            r[0].active,
            r[1].total_mb_s,
            r[0].total_mb_s
        );
    }
}

/// `check` of a PCIe 4.0 drive in a PCIe 3.0 port shows the trained link and why, in text
/// and in `check --json` (both ends). Expected from the parts: the 990 PRO is PCIe 4.0 x4
/// (data sheet), the PEX8747 a PCIe 3.0 switch, so the link is pcie3x4.
#[test]
fn check_shows_the_trained_link_and_why() {
    let dir = std::env::temp_dir().join(format!("iopath-physics-pcie-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gen4-below-gen3.toml");
    std::fs::write(&file, GEN4_BELOW_GEN3_SWITCH).unwrap();
    let run = |json: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_iopath"));
        c.arg("check").arg(&file);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(false);
    let line = text.lines().find(|l| l.trim_start().starts_with("a [drive")).unwrap();
    assert!(line.contains("pcie3x4 (drive pcie4x4, trained to its port sw pcie3x16; MPS 256)"), "{line}");
    let json: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    let a = json["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "a").unwrap();
    assert_eq!(a["link"]["trained"], "pcie3x4");
    assert_eq!(a["link"]["device"], "pcie4x4");
    assert_eq!(a["link"]["port"], "sw pcie3x16");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SATA and SAS links train like PCIe ones, at the slower end. Expected from the data
/// sheets: a SATA 6 Gb/s SSD (870 EVO) behind a SATA II port multiplier (SiI3726, 3 Gb/s)
/// runs at 3 Gb/s; a SAS3 HBA (SAS3008, 12 Gb/s) to a SAS2 expander (SAS2x36, 6 Gb/s) at
/// 6 Gb/s on all four lanes; a SATA SSD on a SAS HBA's phy at its SATA generation (6 Gb/s);
/// a SAS3 drive (Exos X18 SAS) on a SAS2 HBA (SAS2008) at 6 Gb/s. And a JMB585 (PCIe 3.0 x2)
/// below a PCIe 2.0 switch port (the Z87 PCH) at PCIe 2.0 x2, not its own PCIe 3.0.
#[test]
fn sata_and_sas_links_train_at_the_slower_end() {
    let t = topology(
        "sata-sas-training",
        r#"
name = "sata-sas-training"
[host]
part = "intel-lga1150"
[[node]]
id = "pch"
part = "intel-z87-pch"
parent = "host"
[[node]]
id = "jmb"
part = "jmb585"
parent = "pch"
[[node]]
id = "pm"
part = "sii3726"
parent = "jmb"
port = 0
[[node]]
id = "hba3"
part = "lsi-sas3008"
parent = "host"
[[node]]
id = "exp"
part = "lsi-sas2x36"
parent = "hba3"
port = 0
[[node]]
id = "hba2"
part = "lsi-sas2008"
parent = "host"
[[drive]]
id = "behind_pm"
part = "samsung-870evo-1tb"
parent = "pm"
port = 0
[[drive]]
id = "sata_on_sas"
part = "samsung-870evo-1tb"
parent = "hba3"
port = 4
[[drive]]
id = "sas3_on_sas2"
part = "seagate-exos-x18-sas"
parent = "hba2"
port = 0
[[drive]]
id = "behind_exp"
part = "seagate-exos-x18-sas"
parent = "exp"
port = 0
"#,
    );
    for (id, want) in [
        ("jmb", "pcie2x2"),
        ("behind_pm", "sata2"),
        ("exp", "sas2x4"),
        ("sata_on_sas", "sata3"),
        ("sas3_on_sas2", "sas2"),
        ("behind_exp", "sas2"),
    ] {
        assert_eq!(node(&t, id).link.short_name(), want, "{id}");
    }
    let why = node(&t, "behind_pm").training.as_ref().unwrap().why(&node(&t, "behind_pm").link);
    assert_eq!(why, "drive sata3, trained to its port pm sata2");
}
