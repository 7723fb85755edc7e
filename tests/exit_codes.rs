//! Exit codes as one table (issue #12, item 6): 2 for every usage or configuration error,
//! found before any sweep point runs; 1 for run-time failures; 130 for an interrupt; and a
//! closed stdout ends every printing command quietly with 0.

mod common;
use common::iopath;

use std::process::{Command, Output, Stdio};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A sweep point that keeps more I/Os outstanding than a run may (1,024 drives x iodepth
/// 2,048 > 2^20) is a configuration error of that point: exit 2 before the first point runs,
/// naming the point and the problem (it used to run the first point and exit 1).
#[test]
fn a_point_with_too_many_outstanding_ios_exits_2_before_running() {
    let o = iopath(&[
        "sweep",
        "configs/1024-hdd-expanders.toml",
        "--rw",
        "read",
        "--bs",
        "128k",
        "--iodepth",
        "512,2048",
        "--runtime",
        "1ms",
        "--json",
        "-q",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert!(o.stdout.is_empty(), "no point may run: {}", String::from_utf8_lossy(&o.stdout));
    assert!(e.contains("--iodepth 2048") && e.contains("I/Os outstanding"), "{e}");
    assert!(!e.contains("--iodepth 512"), "the good point is not blamed: {e}");
    assert!(e.contains("no point was simulated"), "{e}");
}

/// A sweep of more active drives than the topology has exits 2 before running, naming
/// the option (the golden outputs of main recorded a run of every point and exit 1).
#[test]
fn an_active_range_past_the_drives_exits_2_before_running() {
    let o = iopath(&[
        "sweep",
        "configs/z87-deluxe-asm106se.toml",
        "--rw",
        "read",
        "--bs",
        "128k",
        "--active",
        "1..3",
        "--runtime",
        "20ms",
        "--json",
        "-q",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert!(o.stdout.is_empty());
    assert!(e.contains("--active 1..3") && e.contains("only 2 drives"), "{e}");
}

/// `simulate --active N` past the drives names the option once (the library message no
/// longer carries the flag itself, so the CLI's prefix is not doubled).
#[test]
fn too_many_active_drives_names_the_option_once() {
    let o = iopath(&["simulate", "configs/z87-deluxe-asm106se.toml", "--active", "5", "--runtime", "1ms"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.matches("--active").count(), 1, "{e}");
    assert!(e.contains("only 2 drives"), "{e}");
}

/// Every command that prints ends quietly when its stdout is closed before it writes: the
/// read end of the pipe is closed before iopath starts, so every write fails whatever the
/// timing (`iopath ... | head -0`).
#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    let cases: &[&[&str]] = &[
        &["check", "configs/asm1166-6ssd.toml"],
        &["check", "configs/asm1166-6ssd.toml", "--json"],
        &["simulate", "configs/asm1166-6ssd.toml", "--runtime", "5ms"],
        &["simulate", "configs/asm1166-6ssd.toml", "--runtime", "5ms", "--json"],
        &["sweep", "configs/asm1166-6ssd.toml", "--active", "1,2", "--runtime", "5ms", "-q"],
        &["catalog"],
        &["catalog", "asm1166"],
        &["schema"],
        &["completions", "bash"],
    ];
    for args in cases {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_iopath"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(*args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run iopath");
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: stderr: {e}");
        assert!(!e.contains("panicked") && !e.contains("Broken pipe"), "{args:?}: {e}");
    }
}

/// `sweep --measured` reads iopath's own `sweep.csv` (it used to be read as a CSV of
/// x,mb_s whose rows all looked like headers, so nothing was drawn and nothing said): its
/// totals are drawn as a labelled series. A CSV whose quoted label holds a comma keeps it.
#[test]
fn measured_overlays_read_sweep_csv_and_quoted_labels() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let cfg = "configs/asm1166-6ssd.toml";
    let o = iopath(&["sweep", cfg, "--active", "1,2", "--runtime", "5ms", "-q", "--out", first.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let own = dir.path().join("earlier-run.csv");
    std::fs::copy(first.join("sweep.csv"), &own).unwrap();
    let published = dir.path().join("published.csv");
    std::fs::write(&published, "x,mb_s,label\n1,500,\"Smith, 2023\"\n2,990,\"Smith, 2023\"\n").unwrap();
    let out = dir.path().join("second");
    let o = iopath(&[
        "sweep",
        cfg,
        "--active",
        "1,2",
        "--runtime",
        "5ms",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--measured",
        own.to_str().unwrap(),
        "--measured",
        published.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    assert!(svg.contains("earlier-run"), "the sweep.csv series is drawn and labelled");
    assert!(svg.contains("Smith, 2023"), "the quoted label keeps its comma");
    // A file that is none of the formats is a usage error naming the file, line and column.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "x,mb_s\n1,fast\n").unwrap();
    let o = iopath(&["sweep", cfg, "--active", "1,2", "--runtime", "5ms", "-q", "--measured", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.csv:2: column 2 (mb_s): expected a number, found \"fast\""), "{}", stderr(&o));
}

/// `measure`'s typed usage errors come back with the option that gave the value (the
/// library's message names none; `src/cmd/measure.rs` holds the table) and exit 2, before a
/// target is created: the drives' files do not exist and must not afterwards.
#[test]
fn measure_usage_errors_name_the_option_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let mut s =
        "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n".to_string();
    for id in ["D", "E", "F"] {
        s += &format!(
            "[[drive]]\nid = \"{id}\"\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\ndev = \"{id}.img\"\n"
        );
    }
    let t = d.path().join("t.toml");
    std::fs::write(&t, s).unwrap();
    let t = t.to_str().unwrap();
    // 3..2 runs backwards: the ramp is checked before any run (by sweep's own range parser).
    let o = iopath(&["measure", t, "--active", "3..2", "--runtime", "10ms", "--ramp", "0s", "--quiet"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert!(e.contains("--active 3..2:") && e.contains("START <= END"), "stderr: {e}");
    for id in ["D", "E", "F"] {
        assert!(!d.path().join(format!("{id}.img")).exists(), "{id}.img was created before the check");
    }
}
