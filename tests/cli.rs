//! End-to-end tests of the `iopath` command line, driven as a user drives it: real files in
//! `configs/` and `tests/bad-configs/`, real processes, exit codes, stdout and stderr.
//!
//! One integration-test binary (STYLE.md habit 12) with a module per concern:
//!
//! - [`check`]: every example topology validates; the closed-form bound of the ASM1166 names
//!   its PCIe 3.0 x2 uplink.
//! - [`simulate`]: every example topology simulates and its JSON keeps the DESIGN.md §4
//!   contract.
//! - [`exit_codes`]: configuration and usage errors exit 2 and say where and what.
//! - [`info`]: `catalog`, `schema`, `completions`.
//! - [`pipes`]: a closed stdout (`iopath ... | head -1`) is a quiet success.
//! - [`sweep`]: a sweep point is the same run as `simulate`; `--out` writes every export;
//!   widening an uplink never slows a sweep down.
//! - [`overrides`]: `--set` changes the physics it names (FIS-based switching).
//! - [`values`]: every value is checked by its kind before anything runs (issue #11, items
//!   9 and 11): bad part figures, lists and ranges exit 2 and name the option that gave them.
//!
//! Runs are short (`--runtime 0.2s`, a few drives of the big topologies) so the whole file
//! stays fast in the test profile.

mod common;
use common::assert_command as iopath;

use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A path relative to the package root.
fn root(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// Every `*.toml` file directly in `dir` (not in subfolders), sorted.
fn toml_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "{dir} holds no .toml files");
    v
}

/// Runs `iopath ARGS`, asserts exit 0 and parses stdout as one JSON document.
fn json_of(args: &[&str]) -> Value {
    let out = iopath().args(args).assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("iopath {}: stdout is not JSON ({e})", args.join(" ")))
}

fn num(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = cur.get(k).unwrap_or_else(|| panic!("missing field {path:?} (at {k:?}) in {v:#}"));
    }
    cur.as_f64().unwrap_or_else(|| panic!("field {path:?} is not a number: {cur}"))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

/// The number of drives of a topology, from `check --json`.
fn drive_count(file: &Path) -> usize {
    let f = file.to_str().expect("utf-8 path");
    let v = json_of(&["check", f, "--json"]);
    v["nodes"].as_array().expect("nodes").iter().filter(|n| n["kind"] == "drive").count()
}

mod check {
    use super::*;

    /// No example topology rots: each one validates, as text and as JSON.
    #[test]
    fn every_config_passes_check() {
        for f in toml_files("configs") {
            let f = f.to_str().unwrap();
            iopath().args(["check", f]).assert().success();
            let v = json_of(&["check", f, "--json"]);
            assert!(v["nodes"].as_array().is_some_and(|n| !n.is_empty()), "{f}: no nodes in {v:#}");
            assert!(v.get("bound").is_some(), "{f}: no bound");
        }
    }

    /// Source 000: four to six SATA SSDs on an ASM1166 plateau at its PCIe 3.0 x2 uplink,
    /// below what the drives' datasheets add up to.
    #[test]
    fn asm1166_read_bound_is_the_uplink_from_four_drives() {
        let v = json_of(&["check", "configs/asm1166-6ssd.toml", "--json"]);
        // Datasheet sequential read rate of each drive, in file order, from the catalog.
        let rates: Vec<f64> = v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["kind"] == "drive")
            .map(|n| {
                let part = n["part"].as_str().expect("part");
                num(&json_of(&["catalog", part, "--json"]), "figures.seq_read_mb_s.value")
            })
            .collect();
        assert_eq!(rates.len(), 6);
        let bounds = v["bound"].as_array().expect("bound is a list");
        for active in 4..=6u64 {
            let b = bounds
                .iter()
                .find(|b| b["active"] == active && b["mix"] == "read")
                .unwrap_or_else(|| panic!("no read bound for {active} drives"));
            assert_eq!(b["binding"], "hba.uplink.up", "{active} drives: {b:#}");
            let sum: f64 = rates[..active as usize].iter().sum();
            let total = num(b, "total_mb_s");
            assert!(total < sum, "{active} drives: bound {total} is not below the datasheets' {sum}");
        }
    }
}

mod simulate {
    use super::*;

    /// A window too short for any I/O to finish says so instead of printing zeros as if they
    /// were a prediction; a normal run does not warn.
    #[test]
    fn a_window_without_completed_io_warns() {
        let hdd = ["simulate", "configs/z87-extreme6.toml", "--drives", "intel_hdd", "--rw", "randread"];
        iopath()
            .args(hdd)
            .args(["--runtime", "1ms", "--json"])
            .assert()
            .success()
            .stderr(predicate::str::contains("no I/O completed"))
            .stdout(predicate::str::contains(
                r#""warnings": [
    "no I/O completed in the 0.001 s measured window"#,
            ));
        iopath()
            .args(hdd)
            .args(["--runtime", "0.5s", "--json"])
            .assert()
            .success()
            .stderr(predicate::str::contains("no I/O completed").not());
    }

    /// Checks every field DESIGN.md §4 names, the ranges of utilizations and that the total
    /// is the sum of the drives.
    pub fn assert_report_contract(r: &Value, what: &str) {
        assert_eq!(r["kind"], "simulated", "{what}");
        assert!(r["topology"].is_string(), "{what}: topology");
        assert!(r["workload"].is_object(), "{what}: workload");
        for k in ["read_mb_s", "write_mb_s", "mb_s", "iops", "lat_us.mean", "lat_us.p50", "lat_us.p99"] {
            let x = num(&r["total"], k);
            assert!(x.is_finite() && x >= 0.0, "{what}: total.{k} = {x}");
        }
        let drives = r["drives"].as_array().unwrap_or_else(|| panic!("{what}: drives"));
        assert!(!drives.is_empty(), "{what}: no drives");
        for d in drives {
            assert!(d["id"].is_string(), "{what}: drive id");
            for k in ["read_mb_s", "write_mb_s", "iops", "lat_us.mean", "lat_us.p50", "lat_us.p99"] {
                let x = num(d, k);
                assert!(x.is_finite() && x >= 0.0, "{what}: drive {}: {k} = {x}", d["id"]);
            }
        }
        let links = r["links"].as_array().unwrap_or_else(|| panic!("{what}: links"));
        assert!(!links.is_empty(), "{what}: no links");
        for l in links {
            assert!(l["id"].is_string(), "{what}: link id");
            for k in ["util_up", "util_down"] {
                let u = num(l, k);
                assert!((0.0..=1.0).contains(&u), "{what}: link {}: {k} = {u}", l["id"]);
            }
        }
        assert!(r["bottleneck"]["id"].is_string(), "{what}: bottleneck.id");
        let u = num(r, "bottleneck.util");
        assert!((0.0..=1.0).contains(&u), "{what}: bottleneck.util = {u}");
        for k in ["events", "ios"] {
            assert!(r["cost"][k].is_u64(), "{what}: cost.{k} is not a count");
        }
        assert!(num(r, "cost.wall_s") >= 0.0, "{what}: cost.wall_s");
        // The total is the sum of the drives.
        for k in ["read_mb_s", "write_mb_s", "iops"] {
            let sum: f64 = drives.iter().map(|d| num(d, k)).sum();
            let t = num(&r["total"], k);
            assert!(close(t, sum, 1e-9), "{what}: total.{k} = {t}, drives sum to {sum}");
        }
        let (rd, wr, mb) = (num(r, "total.read_mb_s"), num(r, "total.write_mb_s"), num(r, "total.mb_s"));
        assert!(close(mb, rd + wr, 1e-9), "{what}: total.mb_s {mb} != read {rd} + write {wr}");
    }

    /// Every example topology simulates a short run, on at most four drives.
    #[test]
    fn every_config_simulates_with_the_json_contract() {
        for f in toml_files("configs") {
            let active = drive_count(&f).min(4).to_string();
            let f = f.to_str().unwrap();
            for rw in ["read", "randwrite"] {
                let r = json_of(&[
                    "simulate",
                    f,
                    "--rw",
                    rw,
                    "--bs",
                    "128k",
                    "--iodepth",
                    "4",
                    "--runtime",
                    "0.2s",
                    "--active",
                    &active,
                    "--json",
                ]);
                assert_report_contract(&r, &format!("{f} {rw}"));
                assert!(num(&r, "total.mb_s") > 0.0, "{f} {rw}: nothing moved");
            }
        }
    }

    /// The readable table is the default output, and its numbers are the report's: every
    /// drive row and the total show the JSON output's read MB/s and IOPS of the same run.
    #[test]
    fn default_output_is_a_table() {
        let args = ["simulate", "configs/asm1166-6ssd.toml", "--runtime", "0.1s", "--active", "2"];
        let out = iopath().args(args).assert().success().get_output().stdout.clone();
        let table = String::from_utf8(out).unwrap();
        let r = json_of(&[&args[..], &["--json"]].concat());
        let row = |id: &str| -> Vec<f64> {
            let line = table
                .lines()
                .find(|l| l.split_whitespace().next() == Some(id))
                .unwrap_or_else(|| panic!("no row {id:?} in\n{table}"));
            line.split_whitespace().skip(1).map(|x| x.parse().unwrap()).collect()
        };
        let header = table.lines().find(|l| l.starts_with("drive ")).unwrap_or_else(|| panic!("no header:\n{table}"));
        assert!(header.contains("read MB/s  write MB/s  IOPS"), "{header}");
        let drives = r["drives"].as_array().unwrap();
        assert_eq!(drives.len(), 2, "{r}");
        for d in drives {
            let cells = row(d["id"].as_str().unwrap());
            assert!((cells[0] - d["read_mb_s"].as_f64().unwrap()).abs() <= 0.05, "{cells:?} vs {d}");
            assert!((cells[2] - d["iops"].as_f64().unwrap()).abs() <= 0.5, "{cells:?} vs {d}");
        }
        let total = row("total");
        assert!((total[0] - num(&r, "total.read_mb_s")).abs() <= 0.05, "{total:?} vs {}", r["total"]);
        assert!(total[0] > 0.0, "nothing moved:\n{table}");
    }
}

mod exit_codes {
    use super::*;

    /// Each broken file exits 2 and names its position (`# at: LINE:COL`) and problem
    /// (`# expect: TEXT`).
    #[test]
    fn bad_configs_exit_2_with_position_and_message() {
        for f in toml_files("tests/bad-configs") {
            // Lossy: one file of the corpus is deliberately not UTF-8.
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
            let header = |tag: &str| text.lines().find_map(|l| l.strip_prefix(tag)).map(|s| s.trim().to_string());
            let expect = header("# expect:").unwrap_or_else(|| panic!("{}: no `# expect:` line", f.display()));
            let rel = f.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_str().unwrap().trim_start_matches('/');
            let mut a =
                iopath().args(["check", rel]).assert().code(2).stderr(predicate::str::contains(expect.as_str()));
            if let Some(at) = header("# at:") {
                a = a.stderr(predicate::str::contains(format!("{rel}:{at}")));
            }
            let _ = a;
        }
    }

    #[test]
    fn unknown_subcommand_exits_2() {
        iopath().arg("frobnicate").assert().code(2).stderr(predicate::str::contains("frobnicate"));
    }

    #[test]
    fn unknown_flag_exits_2() {
        iopath()
            .args(["simulate", "configs/asm1166-6ssd.toml", "--frobnicate"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--frobnicate"));
    }

    #[test]
    fn unknown_drive_exits_2_with_a_suggestion() {
        iopath()
            .args(["simulate", "configs/asm1166-6ssd.toml", "--drives", "NOPE", "--runtime", "0.1s"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("NOPE"));
        iopath()
            .args(["simulate", "configs/z87-extreme6.toml", "--drives", "intel_sdd", "--runtime", "0.1s"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("did you mean").and(predicate::str::contains("intel_ssd")));
    }

    #[test]
    fn more_active_drives_than_the_topology_has_exits_2() {
        iopath()
            .args(["simulate", "configs/asm1166-6ssd.toml", "--active", "99", "--runtime", "0.1s"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "--active 99: 99 active drives asked for, but the topology has only {} drives",
                // The topology's drive count, from a run on all of them.
                json_of(&["simulate", "configs/asm1166-6ssd.toml", "--runtime", "10ms", "--json"])["drives"]
                    .as_array()
                    .unwrap()
                    .len()
            )));
    }

    #[test]
    fn missing_topology_file_exits_2() {
        iopath()
            .args(["simulate", "configs/no-such-file.toml"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("no-such-file.toml"));
        iopath().args(["check", "configs/no-such-file.toml"]).assert().code(2);
    }

    #[test]
    fn unknown_rw_exits_2_and_lists_the_choices() {
        iopath()
            .args(["simulate", "configs/asm1166-6ssd.toml", "--rw", "sideways"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("sideways").and(predicate::str::contains("randread")));
    }

    #[test]
    fn misspelt_catalog_part_exits_2_with_a_suggestion() {
        iopath()
            .args(["catalog", "asm1116"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("did you mean").and(predicate::str::contains("asm1166")));
    }
}

mod info {
    use super::*;

    /// The ASM1166's figures, each with its source.
    #[test]
    fn catalog_part_shows_figures_with_sources() {
        let out = iopath().args(["catalog", "asm1166"]).assert().success().get_output().stdout.clone();
        let s = String::from_utf8(out).unwrap();
        for fig in ["lanes", "uplink", "ports", "mps", "pm_support"] {
            let line = s
                .lines()
                .find(|l| l.split_whitespace().next() == Some(fig))
                .unwrap_or_else(|| panic!("no {fig} line in\n{s}"));
            // Every figure line carries a source text after its value.
            assert!(line.split_whitespace().count() >= 4, "{fig} has no source: {line:?}");
        }
        assert!(s.contains("pcie3"), "uplink generation missing:\n{s}");
        assert!(s.contains("'PCIe 3.0 x2 interface' (watchmysys.com 2021/03)"), "lanes source missing:\n{s}");
        assert!(s.contains("watchmysys.com"), "no cited source:\n{s}");
        // The same, machine-readable: value and source of every figure.
        let v = json_of(&["catalog", "asm1166", "--json"]);
        assert_eq!(num(&v, "figures.lanes.value"), 2.0);
        let figs = v["figures"].as_object().expect("figures");
        for (k, f) in figs {
            assert!(f["source"].as_str().is_some_and(|s| !s.is_empty()), "figure {k} has no source");
        }
    }

    #[test]
    fn schema_describes_nodes_and_drives() {
        let v = json_of(&["schema"]);
        let props = v["properties"].as_object().expect("properties");
        assert!(props.contains_key("node") && props.contains_key("drive"), "{props:?}");
    }

    #[test]
    fn completions_for_bash() {
        iopath()
            .args(["completions", "bash"])
            .assert()
            .success()
            .stdout(predicate::str::contains("_iopath").and(predicate::str::contains("complete")));
    }
}

mod pipes {
    /// Regression: `print_json` wrapped the write error in serde_json::Error, which the
    /// broken-pipe check did not recognise, so `iopath check ... --json | head -1` exited 1.
    #[test]
    fn closed_stdout_is_a_quiet_success_for_json_too() {
        let (status, stderr) = head_1(&["check", "configs/1024-hdd-expanders.toml", "--json"]);
        assert_eq!(status.code(), Some(0), "stderr: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "stderr: {stderr}");
    }

    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    /// Reads one line of `iopath ARGS` and closes the pipe, as `| head -1` does.
    fn head_1(args: &[&str]) -> (std::process::ExitStatus, String) {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_iopath"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn iopath");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        // The reader is dropped here: the pipe is closed with most of the output unread.
        let out = child.wait_with_output().expect("wait for iopath");
        assert!(!line.is_empty(), "no first line");
        (out.status, String::from_utf8_lossy(&out.stderr).to_string())
    }

    /// Regression: clap_complete panics on a write error, so `iopath completions bash |
    /// head -0` exited 101 with a panic. The pipe's read end is closed before iopath starts,
    /// so every write fails whatever the timing.
    #[test]
    fn completions_into_a_closed_pipe_are_a_quiet_success() {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_iopath"))
            .args(["completions", "bash"])
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run iopath");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
        assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    }

    /// The 1024-drive topology prints far more than a pipe buffer holds, so the closed pipe
    /// is certain to be hit.
    #[test]
    fn closed_stdout_is_a_quiet_success() {
        let (status, stderr) = head_1(&["check", "configs/1024-hdd-expanders.toml"]);
        assert_eq!(status.code(), Some(0), "stderr: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "stderr: {stderr}");
    }
}

mod sweep {
    use super::*;

    /// Zeroes what legitimately differs between two runs of the same thing.
    fn comparable(r: &Value) -> Value {
        serde_json::json!({ "total": r["total"], "drives": r["drives"], "links": r["links"],
                            "bottleneck": r["bottleneck"] })
    }

    /// Point k of `--active 1..3` is exactly `simulate --active k` with the same seed.
    #[test]
    fn a_sweep_point_equals_simulate() {
        for (file, rw, bs) in
            [("configs/asm1166-6ssd.toml", "read", "1m"), ("configs/z87-extreme6.toml", "randread", "4k")]
        {
            let common = ["--rw", rw, "--bs", bs, "--iodepth", "4", "--runtime", "0.2s", "--seed", "7"];
            let mut args = vec!["sweep", file, "--active", "1..3", "--json"];
            args.extend(common);
            let s = json_of(&args);
            let points = s["points"].as_array().expect("points");
            assert_eq!(points.len(), 3);
            for (i, p) in points.iter().enumerate() {
                let k = (i + 1).to_string();
                assert_eq!(p["param"], "active");
                assert_eq!(p["value"], i as u64 + 1);
                let mut args = vec!["simulate", file, "--active", &k, "--json"];
                args.extend(common);
                let one = json_of(&args);
                simulate::assert_report_contract(&p["report"], &format!("{file} point {k}"));
                assert_eq!(comparable(&p["report"]), comparable(&one), "{file} --active {k}");
            }
        }
    }

    /// `--out DIR` writes the sweep as JSON, CSV, Markdown, SVG and PNG.
    #[test]
    fn out_writes_every_export() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        iopath()
            .args([
                "sweep",
                "configs/asm1166-6ssd.toml",
                "--rw",
                "read",
                "--bs",
                "1m",
                "--runtime",
                "0.1s",
                "--active",
                "1..6",
                "--out",
                d,
                "--quiet",
            ])
            .assert()
            .success();
        let read = |name: &str| {
            let b = std::fs::read(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!b.is_empty(), "{name} is empty");
            b
        };
        let j: Value = serde_json::from_slice(&read("sweep.json")).expect("sweep.json is JSON");
        assert_eq!(j["points"].as_array().map(Vec::len), Some(6));
        let csv = String::from_utf8(read("sweep.csv")).unwrap();
        assert!(csv.lines().count() >= 7, "header and six rows expected:\n{csv}");
        let md = String::from_utf8(read("sweep.md")).unwrap();
        assert!(md.contains('|'), "not a Markdown table:\n{md}");
        let svg = String::from_utf8(read("sweep.svg")).unwrap();
        assert!(svg.contains("<svg"), "not an SVG");
        let png = read("sweep.png");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "no PNG signature");
        assert!(png.len() > 10 * 1024, "PNG is only {} bytes", png.len());
    }

    /// Six SSDs reading behind an ASM1166: a wider uplink never lowers the total.
    #[test]
    fn more_uplink_lanes_never_slow_six_drives() {
        let s = json_of(&[
            "sweep",
            "configs/asm1166-6ssd.toml",
            "--rw",
            "read",
            "--bs",
            "1m",
            "--iodepth",
            "8",
            "--runtime",
            "0.2s",
            "--active",
            "6",
            "--vary",
            "hba.lanes=1,2,4",
            "--json",
        ]);
        let totals: Vec<f64> =
            s["points"].as_array().unwrap().iter().map(|p| num(&p["report"], "total.mb_s")).collect();
        assert_eq!(totals.len(), 3);
        for w in totals.windows(2) {
            assert!(w[1] >= w[0] * (1.0 - 1e-9), "total fell as lanes grew: {totals:?}");
        }
        assert!(totals[2] > totals[0] * 1.5, "x1 -> x4 should lift an uplink-bound run: {totals:?}");
    }
}

mod overrides {
    use super::*;

    /// Source 003: with FIS-based switching off (command-based switching) the port
    /// multiplier serves one drive at a time, so five HDDs reading move less.
    #[test]
    fn fbs_off_lowers_port_multiplier_throughput() {
        let run = |set: &[&str]| {
            let mut args = vec![
                "simulate",
                "configs/marvell9172-pm-5hdd.toml",
                "--rw",
                "read",
                "--bs",
                "1m",
                "--iodepth",
                "8",
                "--active",
                "5",
                "--runtime",
                "1s",
                "--json",
            ];
            args.extend(set);
            num(&json_of(&args), "total.mb_s")
        };
        let fbs = run(&[]);
        let cbs = run(&["--set", "pm.fbs=false"]);
        assert!(cbs < fbs, "CBS {cbs} MB/s is not below FBS {fbs} MB/s");
        assert!(cbs > 0.0, "CBS moved nothing");
    }
}

mod values {
    use super::*;

    const ASM: &str = "configs/asm1166-6ssd.toml";

    /// Runs `iopath ARGS`, asserts exit 2, and returns stdout and stderr.
    fn usage_error(args: &[&str]) -> (String, String) {
        let out = iopath().args(args).output().unwrap();
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string());
        assert_eq!(out.status.code(), Some(2), "iopath {}: expected exit 2\n{stdout}\n{stderr}", args.join(" "));
        (stdout, stderr)
    }

    #[test]
    fn bad_part_figures_on_the_command_line_exit_2_and_name_the_option() {
        // Each of these used to run (exit 0); the uplink ones as an "internal link" at
        // 3,280 MB/s instead of the PCIe 3.0 x2 limit of 1,779.9 MB/s.
        for (set, want) in [
            ("hba.uplink=bogus", "not a link name"),
            ("hba.uplink=sas3", "not a PCIe link"),
            ("hba.uplink=sata1", "not a PCIe link"),
            ("hba.uplink=pcie9", "PCIe has generations 1 to 5"),
            ("hba.uplink=pcie3x-1", "not a number of lanes"),
            ("hba.uplink=pcie3x3", "not a PCIe width"),
            ("hba.lanes=2.5", "found 2.5"),
            ("hba.sata_gen=2.5", "whole number"),
            ("hba.pm_support=bogus", "one of none, cbs, fbs"),
            ("D.class=tape", "one of ssd, hdd, nvme"),
            ("D.interface=bogus", "one of sata, sas, nvme"),
            ("hba.mps=nan", "found NaN"),
            ("D.interface_gen=5", "a SATA drive has generations 1 to 3"),
        ] {
            let (_, err) = usage_error(&["simulate", ASM, "--runtime", "10ms", "--set", set]);
            assert!(err.contains(&format!("--set {set}: ")), "--set {set}: not attributed to the option:\n{err}");
            assert!(err.contains(want), "--set {set}: no {want:?} in\n{err}");
            assert!(!err.contains(ASM), "--set {set}: blamed on the topology file:\n{err}");
            assert!(!err.contains("Num(") && !err.contains("Str("), "debug text in\n{err}");
        }
        // A real generation still applies: PCIe 2.0 x2 is slower than the card's 3.0 x2.
        let r =
            json_of(&["simulate", ASM, "--rw", "read", "--bs", "1m", "--iodepth", "8", "--runtime", "50ms", "--json"]);
        let slow = json_of(&[
            "simulate",
            ASM,
            "--rw",
            "read",
            "--bs",
            "1m",
            "--iodepth",
            "8",
            "--runtime",
            "50ms",
            "--json",
            "--set",
            "hba.uplink=pcie2",
        ]);
        assert!(num(&slow, "total.mb_s") < 0.7 * num(&r, "total.mb_s"), "{slow:#}");
    }

    #[test]
    fn workload_lists_refuse_duplicates_zero_runs_and_bare_regions() {
        let (_, err) = usage_error(&["simulate", ASM, "--runtime", "10ms", "--drives", "D,D"]);
        assert!(err.contains("\"D\" is named twice"), "{err}");
        let (_, err) = usage_error(&["simulate", ASM, "--runtime", "10ms", "--drives", "D,,E"]);
        assert!(err.contains("empty"), "{err}");
        let (_, err) = usage_error(&["simulate", ASM, "--runtime", "10ms", "--replications", "0"]);
        assert!(err.contains("--replications 0"), "{err}");
        for (region, hint) in [("0.5", "write 50%"), ("50", "write 50%")] {
            let (_, err) = usage_error(&["simulate", ASM, "--runtime", "10ms", "--region", region]);
            assert!(err.contains(hint), "--region {region}: {err}");
        }
        iopath().args(["simulate", ASM, "--runtime", "10ms", "--region", "50%"]).assert().success();
    }

    #[test]
    fn sweep_checks_every_point_before_running_any() {
        // Each used to run the good points, print a table with FAILED rows and exit 1.
        for (args, want) in [
            (&["--bs", "0,4k"][..], "--bs 0: "),
            (&["--iodepth", "0..10"], "--iodepth 0: "),
            (&["--numjobs", "0,1"], "--numjobs 0: "),
            (&["--active", "1..7"], "only 6 drives"),
            (&["--active", "1..1000000"], "only 6 drives"),
            (&["--iodepth", "1..100000"], "100000 values"),
            (&["--vary", "hba.nope=1,2"], "--vary hba.nope=1: "),
            (&["--vary", "hba.mps=nan,inf"], "--vary hba.mps=inf: "),
            (&["--vary", "hba.lanes=1,2,,4"], "value 3 of 4 is empty"),
            (&["--active", "1..2", "--copy", "D:X"], "no drive has id \"X\""),
            (&["--active", "1..2", "--replications", "0"], "--replications 0"),
        ] {
            let mut full = vec!["sweep", ASM, "--runtime", "10ms", "--quiet"];
            full.extend_from_slice(args);
            let (out, err) = usage_error(&full);
            assert!(err.contains(want), "sweep {}: no {want:?} in\n{err}", args.join(" "));
            assert!(out.is_empty(), "sweep {}: points ran:\n{out}", args.join(" "));
            assert!(!err.contains("is not a range"), "{err}");
        }
        // Every bad value is listed, not only the first.
        let (_, err) = usage_error(&["sweep", ASM, "--runtime", "10ms", "--bs", "0,4k,100"]);
        assert!(err.contains("--bs 0: ") && err.contains("--bs 100: "), "{err}");
        // simulate agrees on the unknown drive of a copy.
        let (_, err) = usage_error(&["simulate", ASM, "--runtime", "10ms", "--copy", "D:X"]);
        assert!(err.contains("no drive has id \"X\""), "{err}");
    }

    #[test]
    fn part_file_errors_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("parts.toml");
        std::fs::write(
            &f,
            "[[part]]\nid = \"asm1166\"\nkind = \"controller\"\nname = \"x\"\nfigures.lanes = { value = 2.5, source = \"a fit of mine\" }\n",
        )
        .unwrap();
        let p = f.to_str().unwrap();
        let (_, err) = usage_error(&["--parts", p, "check", ASM]);
        assert!(err.contains(&format!("{p}:5:27: part \"asm1166\": lanes: expected one of 1, 2, 4, 8, 16")), "{err}");
        std::fs::write(&f, b"[[part]]\nid = \"x\xff\"\n").unwrap();
        let (_, err) = usage_error(&["--parts", p, "check", ASM]);
        assert!(err.contains(&format!("{p}:2:8: byte 16 (line 2, column 8): not valid UTF-8")), "{err}");
    }

    #[test]
    fn a_target_given_twice_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.bin");
        let p = f.to_str().unwrap();
        let (_, err) = usage_error(&["measure", "--target", p, "--target", p, "--runtime", "10ms", "--size", "1m"]);
        assert!(err.contains("given twice"), "{err}");
        assert!(!err.contains("another program"), "{err}");
        assert!(!f.exists(), "the target was created before the check");
    }
}

/// Command-line fuzz (issue #11): at least 400 odd command lines against the real binary,
/// from a fixed-seed ChaCha8 stream, each run tiny (`--runtime 10ms`, small topologies,
/// sweeps of a few points). Checked for each: no panic or crash, exit 0 or 2 (bad input is
/// never a run-time failure), and every exit 2 located: its first error names a file
/// position (`FILE:LINE:COL`) or the command-line option at fault (`--bs 0: ...`). A
/// wall-time budget stops generation; the test asserts the minimum was reached.
/// `cargo test --test cli fuzz -- --nocapture` prints the tally.
mod fuzz {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::time::{Duration, Instant};

    const SEED: u64 = 0x11_0400;
    const MIN_CASES: usize = 400;
    const CASES_PER_WORKER: usize = 500;
    const BUDGET: Duration = Duration::from_secs(100);

    const CONFIGS: &[(&str, &[&str])] = &[
        ("configs/asm1166-6ssd.toml", &["D", "E", "F", "hba"]),
        ("configs/9207-8i-8ssd.toml", &["ssd0", "ssd1", "ssd7", "hba"]),
        ("configs/z87-extreme6.toml", &["intel_ssd", "asm_ssd", "lsi_ssd", "asm", "lsi"]),
    ];
    const FIGS: &[&str] = &[
        "uplink",
        "lanes",
        "mps",
        "ports",
        "sata_gen",
        "pm_support",
        "class",
        "interface",
        "seq_read_mb_s",
        "dma_read_efficiency",
        "fbs",
        "nope",
        "",
    ];
    const VALUES: &[&str] = &[
        "bogus", "2.5", "nan", "inf", "-1", "0", "1", "2", "4", "256", "true", "pcie3x-1", "pcie3x3", "sas3", "pcie2",
        "pcie3x1", "dmi3", "internal", "tape", "ssd", "fbs", "550MB/s", "", "a=b", ",", "1e400",
    ];

    fn pick<'a>(rng: &mut ChaCha8Rng, xs: &[&'a str]) -> &'a str {
        xs[rng.random_range(0..xs.len())]
    }

    /// One odd command line: a subcommand, a topology, and a few options, some wrong.
    fn command_line(rng: &mut ChaCha8Rng, scratch: &Path) -> Vec<String> {
        let (config, ids) = CONFIGS[rng.random_range(0..CONFIGS.len())];
        // One in eight runs on a copy of the topology with one value replaced.
        let config = if rng.random_bool(0.125) {
            let text = std::fs::read_to_string(root(config)).unwrap();
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            let values: Vec<usize> =
                (0..lines.len()).filter(|&i| lines[i].contains(" = ") && !lines[i].starts_with('#')).collect();
            let i = values[rng.random_range(0..values.len())];
            let key = lines[i].split(" = ").next().unwrap_or_default().to_string();
            let v = pick(rng, &["\"bogus\"", "2.5", "-1", "\"pcie3x3\"", "{ uplink = \"sas3\" }", "[", "\"0.5\""]);
            lines[i] = format!("{key} = {v}");
            let path = scratch.join(format!("m{}.toml", rng.random_range(0..1_000_000u32)));
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            path.to_str().unwrap().to_string()
        } else {
            config.to_string()
        };
        let id =
            |rng: &mut ChaCha8Rng| if rng.random_bool(0.85) { pick(rng, ids) } else { pick(rng, &["X", "", "host"]) };
        let sub = pick(rng, &["check", "simulate", "simulate", "sweep", "sweep"]);
        let mut a: Vec<String> = vec![sub.into(), config];
        let push = |a: &mut Vec<String>, k: &str, v: String| {
            a.push(k.to_string());
            a.push(v);
        };
        if sub != "check" {
            let runtime =
                if rng.random_bool(0.9) { "10ms" } else { pick(rng, &["0", "-5ms", "abc", "", "10 parsecs"]) };
            push(&mut a, "--runtime", runtime.into());
            push(&mut a, "--quiet", String::new());
            a.pop();
        }
        for _ in 0..rng.random_range(0..4) {
            match rng.random_range(0..16) {
                0 | 1 => {
                    let v = format!("{}.{}={}", id(rng), pick(rng, FIGS), pick(rng, VALUES));
                    push(&mut a, "--set", v);
                }
                2 => push(&mut a, "--rw", pick(rng, &["read", "randwrite", "randrw", "sideways", ""]).into()),
                3 if sub != "sweep" => {
                    push(&mut a, "--bs", pick(rng, &["4k", "0", "100", "1m", "64m", "65m", "-4k", "1.5k", ""]).into())
                }
                4 if sub != "sweep" => {
                    push(&mut a, "--iodepth", pick(rng, &["1", "0", "-1", "65537", "x", "1e3", "4"]).into())
                }
                5 => push(&mut a, "--region", pick(rng, &["50%", "0.5", "50", "0%", "150%", "abc", "100%"]).into()),
                6 => {
                    let d = match rng.random_range(0..4) {
                        0 => format!("{},{}", ids[0], ids[0]),
                        1 => format!("{},,{}", ids[0], ids[1]),
                        _ => id(rng).to_string(),
                    };
                    push(&mut a, "--drives", d);
                }
                7 if sub == "simulate" => {
                    push(&mut a, "--active", pick(rng, &["1", "0", "7", "-1", "1..3", "x"]).into())
                }
                8 => {
                    let c = format!("{}:{}", id(rng), id(rng));
                    push(&mut a, "--copy", if rng.random_bool(0.2) { "D".into() } else { c });
                }
                9 if sub != "check" => push(&mut a, "--replications", pick(rng, &["0", "1", "2", "-1", "x"]).into()),
                10 => push(&mut a, "--seed", pick(rng, &["1", "-1", "x", "18446744073709551616"]).into()),
                11 => push(&mut a, "--workload", pick(rng, &["nope", ""]).into()),
                12 => a.push(pick(rng, &["--frobnicate", "--json", "-q", "--", "--set"]).into()),
                13 => push(&mut a, "--numjobs", pick(rng, &["1", "0", "2", "4097"]).into()),
                _ => {}
            }
        }
        if sub == "sweep" {
            for _ in 0..rng.random_range(0..3) {
                let (k, v) = match rng.random_range(0..6) {
                    0 => ("--bs", pick(rng, &["4k,1m", "0,4k", "4k,,1m", "4k", "1m,1m"])),
                    1 => ("--iodepth", pick(rng, &["1..3", "0..2", "3..1", "1..3:0", "1..100000", "1,,2"])),
                    2 => ("--active", pick(rng, &["1..3", "1..9", "1..1000000", "0..2", "2,1"])),
                    3 => ("--numjobs", pick(rng, &["0,1", "1,2"])),
                    4 => ("--rwmixread", pick(rng, &["0..100:50", "0,101", "x..y"])),
                    _ => {
                        let vary = format!(
                            "{}.{}={}",
                            id(rng),
                            pick(rng, &["lanes", "mps", "nope", "uplink", "fbs"]),
                            pick(rng, &["1,2", "nan,inf", "1,2,,4", "pcie2,bogus", "true,false", "128,256", ""])
                        );
                        push(&mut a, "--vary", vary);
                        continue;
                    }
                };
                push(&mut a, k, v.into());
            }
        }
        a
    }

    /// Whether an error message says where the problem is: a position in a file, or the
    /// option on the command line.
    fn located(stderr: &str) -> bool {
        let Some(first) = stderr.lines().find(|l| l.starts_with("error")) else {
            return false;
        };
        let file_pos = first.split(".toml:").nth(1).is_some_and(|rest| {
            let mut it = rest.split(':');
            let (l, c) = (it.next().unwrap_or(""), it.next().unwrap_or(""));
            l.parse::<usize>().is_ok() && c.parse::<usize>().is_ok()
        });
        // clap quotes the offending argument itself: `unexpected argument 'x' found`.
        let clap_quoted = first.starts_with("error: unexpected argument '");
        file_pos || first.contains("--") || clap_quoted
    }

    #[test]
    fn odd_command_lines_exit_0_or_2_and_every_error_is_located() {
        let start = Instant::now();
        let scratch = tempfile::tempdir().unwrap();
        let results = std::sync::Mutex::new(Vec::new());
        // Two workers, each with its own fixed-seed stream: the cases do not depend on timing,
        // only how many run does.
        std::thread::scope(|s| {
            for worker in 0..2u64 {
                let results = &results;
                let scratch = scratch.path();
                s.spawn(move || {
                    let mut rng = ChaCha8Rng::seed_from_u64(SEED + worker);
                    for _ in 0..CASES_PER_WORKER {
                        if start.elapsed() > BUDGET {
                            break;
                        }
                        let args = command_line(&mut rng, scratch);
                        let out = iopath().args(&args).timeout(Duration::from_secs(60)).output().unwrap();
                        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
                        results.lock().unwrap().push((args, out.status.code(), stderr));
                    }
                });
            }
        });
        let results = results.into_inner().unwrap();
        let mut by_code: std::collections::BTreeMap<String, usize> = Default::default();
        let mut failures = Vec::new();
        let (mut panics, mut unlocated) = (0, 0);
        for (args, code, stderr) in &results {
            let shown = format!("iopath {}", args.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>().join(" "));
            *by_code.entry(code.map_or("signal".to_string(), |c| c.to_string())).or_default() += 1;
            if stderr.contains("panicked") || *code == Some(101) {
                panics += 1;
                failures.push(format!("{shown}: panicked\n{stderr}"));
            } else if !matches!(code, Some(0) | Some(2)) {
                failures.push(format!("{shown}: exit {code:?}\n{stderr}"));
            } else if *code == Some(2) && !located(stderr) {
                unlocated += 1;
                failures.push(format!("{shown}: not located\n{stderr}"));
            }
        }
        println!(
            "cli fuzz (seed {SEED:#x}, 2 workers): {} command lines in {:.1} s; exits {by_code:?}; panics {panics}, unlocated {unlocated}",
            results.len(),
            start.elapsed().as_secs_f64()
        );
        assert!(results.len() >= MIN_CASES, "only {} command lines in the budget; make each cheaper", results.len());
        // One example of each kind of failure, by its first error line.
        let mut seen = std::collections::BTreeSet::new();
        let examples: Vec<&String> =
            failures.iter().filter(|f| seen.insert(f.lines().nth(1).unwrap_or("").to_string())).take(25).collect();
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            examples.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        );
    }
}
