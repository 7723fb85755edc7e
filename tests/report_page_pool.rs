//! `iopath report --pool ID --client ID`: the page's section on the chain from a client to a
//! pool's drives (issue #14), checked in the HTML and in a headless Chromium screenshot (as
//! `tests/report_page.rs` does for the rest of the page). Skips, saying why, without Chromium.

use std::process::Command;

use iopath_test_support::chromium;

/// The N100 build: a laptop on 2.5 GbE and six WD Red Plus in RAIDZ2. The wire binds both
/// ways: TCP carries 1448 B of every 1538 B of line time at MTU 1500 (IPv4 + TCP with
/// timestamps: 52 B of headers; Ethernet header, FCS, preamble and gap: 38 B), so 312.5 MB/s
/// x 1448/1538 = 294.2 MB/s, and both the client's link and the NIC's port (the same rate)
/// are at 100%. Writing, the members move 1.5 bytes per logical byte: a 128 KiB record is
/// 32 sectors on 4 data columns, 8 rows, 16 parity sectors, 48 in all (a multiple of p + 1 =
/// 3, no padding). The drives (6 x 175 MB/s) and the JMB585's PCIe 3.0 x2 are far from full.
#[test]
fn the_pool_section_shows_the_chain_and_what_binds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["report", "configs/nas-n100-jmb585-raidz2.toml", "--pool", "tank", "--client", "laptop"])
        .args(["--runtime", "0.3s", "-q", "--out"])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let start = html.find("<h2>Pool tank from client laptop").expect("the pool section");
    let sec = &html[start..start + html[start..].find("</section>").unwrap()];
    for stage in ["client link", "NIC port", "NIC PCIe link", "Samba (smbd core)", "host CPU", "controllers"] {
        assert!(sec.contains(&format!("<td>{stage}</td>")), "stage {stage} in the table");
    }
    assert!(sec.contains("<td>member media</td>"));
    // One bar per stage and run (8 stages x 2 runs) and the two legend boxes.
    assert_eq!(sec.matches("<rect").count(), 8 * 2 + 2, "bars in the chart");
    let mb_s = |label: &str| -> f64 {
        let i = sec.find(label).unwrap_or_else(|| panic!("{label} in {sec}")) + label.len();
        sec[i..].split_whitespace().next().unwrap().parse().unwrap()
    };
    for run in ["read 1 MiB, QD 8: ", "write 1 MiB, QD 8: "] {
        let got = mb_s(run);
        assert!((got - 294.2).abs() < 294.2 * 0.02, "{run}{got} MB/s, expected 294.2 (the 2.5 GbE wire)");
    }
    assert!(sec.contains("Binds: the client link and the NIC port"), "{sec}");
    assert!(sec.contains("1.500 member bytes per logical byte"), "RAIDZ2 writes: {sec}");

    // Bad flags are refused before anything runs.
    let bad = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["report", "configs/nas-n100-jmb585-raidz2.toml", "--pool", "tnak", "-q", "--out"])
        .arg(dir.path().join("bad"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--pool tnak: no pool has id \"tnak\"; did you mean \"tank\"?")
    );

    let Some(chrome) = chromium() else {
        iopath_test_support::skip("no Chromium (apt-get install chromium) to render the page");
        return;
    };
    let shot = dir.path().join("shot.png");
    let output = Command::new(chrome)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--enable-logging=stderr", "--v=0", "--window-size=1200,7000"])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", out.join("report.html").display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(!log.lines().any(|l| l.contains("CONSOLE") && l.contains("ERROR")), "console errors: {log}");
    let png = std::fs::read(&shot).expect("Chromium wrote a screenshot");
    let decoder = png::Decoder::new(std::io::Cursor::new(&png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    // The chart's bars are drawn in the section's own colours (page_pool::COLORS), which no
    // other chart uses: a bar's solid interior shows as many pixels of exactly that colour.
    for (name, rgb) in [("read", [0x2b, 0x6c, 0xb0]), ("write", [0xc0, 0x56, 0x21])] {
        let n = buf[..info.buffer_size()].chunks(px).filter(|p| p[..3] == rgb).count();
        assert!(n > 2000, "{name} bars in the screenshot: {n} pixels of #{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
    }
}
