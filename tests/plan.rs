//! `iopath plan` end to end: the builds it picks for the README's two cases follow from link
//! arithmetic, it enumerates hundreds of builds (pruned by the bound), and a build a board
//! cannot hold is refused with exit 2.

mod common;
use common::{iopath, json};

#[test]
fn eight_cmr_hdds_on_an_n100_all_streaming() {
    // An N100 with one M.2 slot wired PCIe 3.0 x2 and the SoC's two SATA ports.
    let v = json(&iopath(&[
        "plan",
        "--host",
        "intel-n100",
        "--slot",
        "pcie3x2",
        "--onboard",
        "intel-n100-sata",
        "--drives",
        "8xtoshiba-n300-8tb",
        "--runtime",
        "1s",
        "--json",
    ]));
    // Eight N300 8 TB at 251 MB/s (outer zone, catalog) want 8 x 251 = 2,008 MB/s; one card
    // in PCIe 3.0 x2 (2 x 985 raw, 1,782 MB/s of read payload) cannot carry all eight. Seven
    // (1,757) squeeze through at 98% of the uplink and six (1,506) at 84%: both builds meet
    // the goal, and the plan takes the one with room, the other two on the SoC's SATA ports.
    assert!((v["target"].as_f64().unwrap() - 2008.0).abs() < 1.0, "{v}");
    let best = &v["builds"][0];
    assert_eq!(best["met"], true, "{best}");
    assert_eq!(best["onboard_drives"], 2, "{best}");
    assert!(best["value"].as_f64().unwrap() >= 0.97 * 2008.0, "{best}");
    assert_eq!(best["slots_used"], 1, "{best}");
    let room = best["busiest_link"]["util"].as_f64().unwrap();
    assert!((room - 1506.0 / 1782.4).abs() < 0.02, "{best}");
    let builds = v["builds"].as_array().unwrap();
    let seven = builds.iter().position(|b| b["onboard_drives"] == 1).expect("a build with 7 on the card");
    assert_eq!(builds[seven]["met"], true, "{}", builds[seven]);
    assert!(builds[seven]["busiest_link"]["util"].as_f64().unwrap() > 0.95, "{}", builds[seven]);
    assert!(seven > 0, "the build at 98% of its uplink must not rank first");
}

#[test]
fn eight_cmr_hdds_on_an_n100_class_board_all_streaming() {
    // The ODROID-H4 (Alder Lake-N, catalog host intel-n100): an ASM1064 with four SATA ports
    // on one PCIe 3.0 lane of the SoC, and one M.2 socket with four lanes.
    let v = json(&iopath(&[
        "plan",
        "--board",
        "hardkernel-odroid-h4",
        "--drives",
        "8xtoshiba-n300-8tb",
        "--runtime",
        "1s",
        "--json",
    ]));
    // Eight N300 8 TB at 251 MB/s (outer zone, catalog) want 8 x 251 = 2,008 MB/s.
    assert!((v["target"].as_f64().unwrap() - 2008.0).abs() < 1.0, "{v}");
    let builds = v["builds"].as_array().unwrap();
    // Four drives on the ASM1064 want 4 x 251 = 1,004 MB/s through one PCIe 3.0 lane
    // (8 GT/s x 128/130 = 985 MB/s raw, about 850 of read payload after TLP headers): that
    // build cannot stream them all, and its onboard controller's uplink binds.
    let four = builds.iter().find(|b| b["onboard_drives"] == 4).expect("a build with 4 onboard");
    assert_eq!(four["met"], false, "{four}");
    assert!(four["bottleneck"]["id"].as_str().unwrap().starts_with("sata.uplink"), "{four}");
    // Three there (753 MB/s) fit the lane; the other five (or six) go on a card in the M.2
    // socket, PCIe 3.0 x2 for a JMB585/ASM1166 (1,970 MB/s raw, above 6 x 251 = 1,506).
    let best = &builds[0];
    assert_eq!(best["met"], true, "{best}");
    let on = best["onboard_drives"].as_u64().unwrap();
    assert!((2..=3).contains(&on), "{best}");
    assert_eq!(best["cards"][0][1], "M.2 socket M2_SSD1", "{best}");
    assert!(best["value"].as_f64().unwrap() >= 0.97 * 2008.0, "{best}");
    assert_eq!(best["slots_used"], 1, "{best}");
}

#[test]
fn an_n100_board_with_one_sata_port_and_one_x2_socket_cannot_hold_eight() {
    // The Topton X2F N100: one SATA port and one M.2 socket; the most ports a catalog card
    // in the socket has is six (ASM1166), so 1 + 6 = 7 ports for 8 drives.
    let o = iopath(&["plan", "--board", "topton-x2f-n100", "--drives", "8xtoshiba-n300-8tb", "--runtime", "1s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("takes 8 drives"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn sixteen_hdds_and_a_10gbe_client_on_a_b650_board() {
    let v = json(&iopath(&[
        "plan",
        "--board",
        "gigabyte-b650m-aorus-elite-ax-ice",
        "--drives",
        "16xtoshiba-n300-8tb",
        "--client",
        "10GbE",
        "--runtime",
        "1s",
        "--json",
    ]));
    // Thousands of builds (cards x places x onboard ports) considered; most hold a card
    // another dominates in its place, and the bound prunes some of the rest.
    assert!(v["considered"].as_u64().unwrap() >= 200, "{}", v["considered"]);
    assert!(v["dominated"].as_u64().unwrap() > 0);
    assert!(v["pruned"].as_u64().unwrap() > 0);
    let best = &v["builds"][0];
    // 16 x 251 MB/s of platters are above 10GBASE-T's 1,250 MB/s line, x 1448/1538 of TCP
    // payload = 1,177 MB/s; one smbd process's core (one copy per byte at the Ryzen's
    // 11,364 MB/s, net::smbd_s_per_byte) moves more: the NIC's line binds.
    assert_eq!(best["bottleneck"]["id"], "nic.p0.tx", "{best}");
    assert!((best["value"].as_f64().unwrap() - 1250.0 * 1448.0 / 1538.0).abs() < 12.0, "{best}");
    // The NIC takes a place too: cards, NIC and onboard SATA hold all sixteen drives.
    assert_eq!(best["parts"].as_array().unwrap().last().unwrap(), "aquantia-aqc107", "{best}");
}

#[test]
fn a_board_that_cannot_hold_the_build_exits_2() {
    // The PRIME B650M-K has one x16 slot and two x1 slots (physically x1): a 10 GbE NIC
    // (x4) takes the x16 one, the x1 slots take 4-port x1 cards at most, and with its four
    // SATA ports that is 4 + 4 + 4 = 12 ports for 16 drives.
    let o = iopath(&[
        "plan",
        "--board",
        "asus-prime-b650m-k",
        "--drives",
        "16xtoshiba-n300-8tb",
        "--client",
        "10GbE",
        "--runtime",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("takes 16 drives"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = iopath(&["plan", "--board", "asus-prime-b650m-k", "--drives", "sixteen"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected COUNTxPART"));
}
