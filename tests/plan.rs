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
    // in PCIe 3.0 x2 (2 x 985 raw, 1,782 MB/s of read payload) carries six (1,506), so the
    // other two go on the SoC's SATA ports.
    assert!((v["target"].as_f64().unwrap() - 2008.0).abs() < 1.0, "{v}");
    let best = &v["builds"][0];
    assert_eq!(best["met"], true, "{best}");
    assert_eq!(best["onboard_drives"], 2, "{best}");
    assert!(best["value"].as_f64().unwrap() >= 0.97 * 2008.0, "{best}");
    assert_eq!(best["slots_used"], 1, "{best}");
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
    // 16 x 251 MB/s of platters and 10GBASE-T's 1,250 MB/s line (x 1448/1538 of TCP
    // payload: 1,177 MB/s) are both above what one smbd process moves on its one core
    // (600 MB/s, the catalog's default from samba-technical, 2014): Samba binds.
    assert_eq!(best["bottleneck"]["id"], "host.smbd.client", "{best}");
    assert!((best["value"].as_f64().unwrap() - 600.0).abs() < 6.0, "{best}");
    assert_eq!(best["met"], false, "{best}");
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
