//! `iopath report` writes a self-contained page that renders in a real browser: headless
//! Chromium (Debian's package, installed by .ci/run) loads it without console errors and
//! takes a screenshot in which the plots are present. Skips, saying why, without Chromium.

use std::path::Path;
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

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
}
