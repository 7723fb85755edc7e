//! Figures a part does not state come from the catalog's declared defaults, and the CLI says
//! which: `iopath catalog PART` lists them apart, `iopath check` names them per node (text
//! only; `check --json` is unchanged).

mod common;

use assert_cmd::Command;

fn iopath() -> Command {
    let mut c = common::assert_command();
    c.env("NO_COLOR", "1");
    c
}

fn stdout(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const DEFAULTS_HEADER: &str = "defaults (figures this part does not state):";

#[test]
fn catalog_lists_the_figures_a_part_takes_from_defaults_apart_with_their_reasons() {
    let s = stdout(iopath().args(["catalog", "asm1166"]));
    let (stated, defaults) = s.split_once(DEFAULTS_HEADER).unwrap_or_else(|| panic!("no defaults section:\n{s}"));
    // Stated figures keep their own basis; none is marked default.
    assert!(stated.lines().any(|l| l.trim_start().starts_with("mps ") && l.contains("512")), "{stated}");
    assert!(!stated.contains("[default]"), "{stated}");
    // Every line after the header is a default with its reason; sas_gen is one (SATA only).
    let lines: Vec<&str> = defaults.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.iter().all(|l| l.contains("[default]")), "{defaults}");
    let sas = lines.iter().find(|l| l.trim_start().starts_with("sas_gen ")).unwrap_or_else(|| panic!("{defaults}"));
    assert!(sas.contains(" 0 ") && sas.contains("SATA only"), "{sas}");
    // A figure the part states is never listed as a default too.
    assert!(!lines.iter().any(|l| l.trim_start().starts_with("mps ")), "{defaults}");
}

#[test]
fn catalog_shows_no_defaults_section_for_a_part_that_states_everything() {
    // A port multiplier part of the catalog states every port multiplier figure.
    let s = stdout(iopath().args(["catalog", "jmb575"]));
    assert!(!s.contains(DEFAULTS_HEADER), "{s}");
}

/// A drive `iopath discover` could not identify: a `[[part]]` with only what sysfs tells.
const GENERIC_DRIVE: &str = r#"
name = "one unidentified disk"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "sdb"
part = "disk-unknown-480"
parent = "hba"
port = 0
[[part]]
id = "disk-unknown-480"
kind = "drive"
name = "unnamed disk (sata, 480 GB, not in the catalog)"
figures.class = { value = "ssd", source = "discovered from sysfs class/block/sdb/queue/rotational" }
figures.interface = { value = "sata", source = "discovered from sysfs class/block/sdb: device path" }
figures.interface_gen = { value = 3, source = "discovered from sysfs class/block/sdb: link speed" }
figures.capacity_gb = { value = 480, source = "discovered from sysfs class/block/sdb/size" }
"#;

#[test]
fn check_names_every_default_an_unidentified_drive_got() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("generic.toml");
    std::fs::write(&f, GENERIC_DRIVE).unwrap();
    let s = stdout(iopath().arg("check").arg(&f));
    let (_, section) = s.split_once("figures taken from defaults").unwrap_or_else(|| panic!("no section:\n{s}"));
    let line = section.lines().find(|l| l.trim_start().starts_with("sdb [disk-unknown-480]:")).unwrap_or_else(|| {
        panic!("no line for the drive:\n{section}");
    });
    // Every flash figure it lacks, with the value it got; no HDD figure (they do not apply).
    for shown in [
        "seq_read_mb_s = 500",
        "seq_write_mb_s = 500",
        "read_latency_us = 50",
        "write_latency_us = 30",
        "parallelism = 8",
        "rand_read_iops = inf",
        "rand_write_iops = inf",
    ] {
        assert!(line.contains(shown), "{shown} missing: {line}");
    }
    for hdd in ["avg_seek_ms", "rpm", "outer_mb_s"] {
        assert!(!line.contains(hdd), "{hdd} does not apply to an SSD: {line}");
    }
    // The catalog drive's figures are all stated: the controller is named, the drive is not twice.
    assert_eq!(section.matches("sdb").count(), 1, "{section}");
    // The JSON output is the same document as before: no such section in it.
    let json = stdout(iopath().arg("check").arg(&f).arg("--json"));
    assert!(!json.contains("figures taken from defaults"), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v.get("defaults").is_none(), "no field added");
}

#[test]
fn a_default_that_follows_another_figure_follows_a_set_of_it() {
    // jmb585 states no DMA efficiency: both default to 1, the write one as the read one.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("jmb.toml");
    std::fs::write(&f, GENERIC_DRIVE.replace("part = \"asm1166\"", "part = \"jmb585\"")).unwrap();
    let hba_line = |s: &str| -> String {
        let (_, section) = s.split_once("figures taken from defaults").unwrap_or_else(|| panic!("no section:\n{s}"));
        section.lines().find(|l| l.trim_start().starts_with("hba [jmb585]:")).unwrap_or_default().to_string()
    };
    let before = hba_line(&stdout(iopath().arg("check").arg(&f)));
    assert!(before.contains("dma_read_efficiency = 1,") && before.contains("dma_write_efficiency = 1"), "{before}");
    let after = hba_line(&stdout(iopath().arg("check").arg(&f).args(["--set", "hba.dma_read_efficiency=0.5"])));
    assert!(!after.contains("dma_read_efficiency"), "a figure given with --set is stated, not a default: {after}");
    assert!(after.contains("dma_write_efficiency = 0.5"), "{after}");
}
