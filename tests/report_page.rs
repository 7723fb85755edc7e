//! `iopath report` writes a self-contained page that renders in a real browser: headless
//! Chromium (Debian's package, installed by .ci/run) loads it without console errors and
//! takes a screenshot in which the plots are present. Skips, saying why, without Chromium.

use std::process::Command;

use iopath_test_support::chromium;

#[test]
fn report_page_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let status = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args([
            "report",
            "configs/asm1166-6ssd.toml",
            "--runtime",
            "0.3s",
            "-q",
            "--measured",
            "configs/published/asm1166-seqread.csv",
            "--out",
        ])
        .arg(&out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg"), "plots are inline SVG");
    assert!(!html.contains("http://") && !html.contains("https://"), "the page loads nothing from the network");
    assert!(html.contains("hba.uplink"), "the bound names the binding element");
    // The page leads with the verdict: before the topology, the answer and what binds. Six
    // SSDs on the ASM1166's PCIe 3.0 x2 read about 1,780 MB/s (the published plateau), the
    // uplink at 100%; the drives alone: 2 x 530 + 4 x 560 = 3,300 MB/s or so.
    let verdict = html.find("<h2>Verdict</h2>").expect("a verdict section");
    assert!(verdict < html.find("<h2>Topology</h2>").unwrap());
    let sentence = &html[verdict..html[verdict..].find("</p>").unwrap() + verdict];
    assert!(sentence.contains("hba.uplink.up binds at 100%"), "{sentence}");
    // And the first suggestion: a card with more lanes in the same slot.
    assert!(html[verdict..].contains("replace hba (asm1166) with"), "a suggestion under the verdict");
    // The bound table says what its mixed column mixes.
    assert!(html.contains("mixed 50/50 read/write MB/s"));
    // The 4 KiB chart is in IOPS.
    assert!(html.contains("IOPS (I/Os per second)"));

    let Some(chrome) = chromium() else {
        iopath_test_support::skip("no Chromium (apt-get install chromium) to render the page");
        return;
    };
    let shot = dir.path().join("shot.png");
    let output = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2400",
        ])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", out.join("report.html").display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    let console_errors: Vec<&str> =
        log.lines().filter(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught"))).collect();
    assert!(console_errors.is_empty(), "console errors: {console_errors:?}");
    let png = std::fs::read(&shot).expect("Chromium wrote a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // A page with charts is far from blank: count distinct colours in the decoded image.
    let decoder = png::Decoder::new(std::io::Cursor::new(&png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1200, 2400));
    let px = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    for p in buf[..info.buffer_size()].chunks(px) {
        colours.insert(p.to_vec());
        if colours.len() > 64 {
            break;
        }
    }
    assert!(colours.len() > 64, "the screenshot shows charts (many colours), found {}", colours.len());
    // The verdict renders at the top: its accent rule (#1f77b4, the verdict's left border)
    // runs down the left of the first 600 rows, and nowhere else on the page.
    let row = info.width as usize * px;
    let accent = |p: &[u8]| p[0].abs_diff(0x1f) < 8 && p[1].abs_diff(0x77) < 8 && p[2].abs_diff(0xb4) < 8;
    let rows_with_rule = (0..600).filter(|y| buf[y * row..y * row + 200 * px].chunks(px).any(accent)).count();
    assert!(rows_with_rule > 150, "the verdict's rule spans {rows_with_rule} of the first 600 rows");
}
