//! `iopath measure --cpu`: its figures against an independent timing of the same kernels
//! (`openssl speed` on the system's libcrypto, which `measure --cpu` calls for AES-256-GCM
//! and SHA-256), and the part file it writes loaded with `--parts`.

mod common;
use common::command as iopath;

use iopath_test_support as rig;
use std::path::Path;
use std::process::Command;

/// Runs `cmd` on CPU 0 where `taskset` exists (both tools on the same core, so neither sees
/// a faster or slower core than the other), else as it is.
fn pinned(cmd: &str, args: &[&str]) -> Command {
    match rig::which("taskset") {
        Some(t) => {
            let mut c = Command::new(t);
            c.arg("-c").arg("0").arg(cmd).args(args);
            c
        }
        None => {
            let mut c = Command::new(cmd);
            c.args(args);
            c
        }
    }
}

/// `openssl speed`'s rate of one algorithm at `bytes`-byte buffers [MB/s]: its last line,
/// `NAME  12345.67k`, in thousands of bytes per second of CPU time.
fn openssl_speed(openssl: &Path, alg: &str, bytes: usize) -> f64 {
    let b = bytes.to_string();
    let o = pinned(openssl.to_str().unwrap(), &["speed", "-seconds", "1", "-bytes", &b, "-evp", alg])
        .output()
        .expect("openssl runs");
    assert!(o.status.success(), "openssl speed {alg}: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let last = text.lines().rev().find(|l| l.trim_end().ends_with('k')).expect("a result line");
    let k: f64 = last.split_whitespace().last().unwrap().trim_end_matches('k').parse().expect("a number");
    k * 1e3 / 1e6
}

/// `measure --cpu --json`'s per-core rates of `kernels` [MB/s].
fn measured(kernels: &[&str]) -> Vec<f64> {
    let exe = env!("CARGO_BIN_EXE_iopath");
    let mut args = vec!["measure", "--cpu", "--json", "-q", "--seconds", "1"];
    for k in kernels {
        args.extend(["--kernel", k]);
    }
    let o = pinned(exe, &args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    kernels
        .iter()
        .map(|k| {
            let row = v["kernels"].as_array().unwrap().iter().find(|r| r["kernel"] == *k).expect("the kernel's row");
            row["mb_s_per_core"].as_f64().unwrap()
        })
        .collect()
}

/// The timing tests in this file run one at a time: the part-file test's three-thread
/// `measure --cpu` would otherwise share CPU 0 with the comparison below.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The AES-256-GCM and SHA-256 rates `measure --cpu` writes reproduce `openssl speed`'s on
/// this machine within 10% (the tolerance). Both time the same libcrypto code over
/// 128 KiB buffers in user CPU time for one second; the check is of the harness: buffer
/// handling, per-call overhead (a fresh GCM context and nonce per record) and the CPU-time
/// clock, any of which would show as a bias of the ratio.
///
/// The machine is a shared 2-core VM: single one-second runs of either tool vary by up to
/// 30% (neighbours on the host's cores; AES most), in both directions, so neither one run
/// nor the best of a few is a fair comparison (a best-of-three once gave 1.245 for
/// AES-GCM). The tools run in back-to-back pairs per kernel, each pair close enough in
/// time to see the same neighbours and the first of each alternating, and the median of the
/// pair ratios is compared: nine pairs, and nine more (at most 27, pooled) while a median is
/// outside the tolerance. A clean-clone CI once failed on nine pairs alone with nothing of
/// the CPU code changed: AES-GCM's median 1.164, pairs 0.90 to 1.34. (Both kernels of
/// `measure` in one run, then `openssl` for each, put two seconds between the two AES
/// timings; a loaded sitting once gave a median of 0.890 that way, pairs 0.78 to 1.82.)
/// Measured with that earlier pairing, idle, three repetitions: AES-GCM medians 1.008,
/// 1.000, 0.945 with single pairs from 0.76 to 1.30; SHA-256 0.990, 0.984, 0.997.
#[test]
fn measure_cpu_reproduces_openssl_speed_within_10_percent() {
    let Some(openssl) = rig::which("openssl") else {
        return rig::skip("openssl is not installed (apt-get install openssl)");
    };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let names = ["AES-256-GCM", "SHA-256"];
    let mut ratios = [Vec::new(), Vec::new()];
    // Rounds of nine pairs, pooled, until both medians are inside the tolerance or three
    // rounds are in: a bias of the harness stays in every round, while a sitting's noise
    // shrinks as the pairs add up.
    for round in 0..27 {
        for (i, (kernel, alg)) in [("aes-gcm", "aes-256-gcm"), ("sha256", "sha256")].into_iter().enumerate() {
            // One kernel at a time, the two tools back to back, which goes first alternating
            // by round: a neighbour's load that drifts over seconds weighs on both sides alike.
            let (m, o) = if round % 2 == 0 {
                let m = measured(&[kernel])[0];
                (m, openssl_speed(&openssl, alg, 128 << 10))
            } else {
                let o = openssl_speed(&openssl, alg, 128 << 10);
                (measured(&[kernel])[0], o)
            };
            ratios[i].push(m / o);
        }
        if (round + 1) % 9 == 0 {
            let medians = ratios.each_ref().map(|r| median(r));
            for (name, (r, m)) in names.iter().zip(ratios.iter().zip(medians)) {
                eprintln!("{name}: measure --cpu / openssl speed, median of {} pairs {m:.3} ({})", r.len(), shown(r));
            }
            if medians.iter().all(|m| (m - 1.0).abs() <= 0.10) {
                break;
            }
        }
    }
    for (name, r) in names.iter().zip(&ratios) {
        let m = median(r);
        assert!((m - 1.0).abs() <= 0.10, "{name}: median ratio {m:.3} over {} pairs ({})", r.len(), shown(r));
    }
}

/// The median of `r`.
fn median(r: &[f64]) -> f64 {
    let mut v = r.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `r` sorted, three decimals each.
fn shown(r: &[f64]) -> String {
    let mut v = r.to_vec();
    v.sort_by(f64::total_cmp);
    v.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" ")
}

/// The part file `measure --cpu --out` writes loads with `--parts`: the host part's kernel
/// figures and its cores become the measured ones, with basis `measurement` and a source
/// naming the machine; and `check` of a topology on that host no longer lists them among
/// the figures taken from defaults or the catalog.
#[test]
fn the_written_host_file_overrides_the_hosts_figures() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("host.toml");
    let o = iopath()
        .args(["measure", "--cpu", "-q", "--seconds", "0.02", "--cores", "3", "--part", "generic-host", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("raid-pq") && table.contains("MB/s x3"), "{table}");

    let o = iopath().arg("--parts").arg(&out).args(["catalog", "generic-host"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for k in ["cpu_sha256_mb_s", "cpu_raid_pq_mb_s", "cpu_fletcher4_mb_s", "cpu_zstd_mb_s"] {
        let line = text.lines().find(|l| l.trim_start().starts_with(k)).unwrap_or_else(|| panic!("{k}:\n{text}"));
        assert!(line.contains("[measurement]") && line.contains("iopath measure --cpu on"), "{line}");
    }
    let cores = text.lines().find(|l| l.trim_start().starts_with("cpu_cores")).unwrap();
    assert!(cores.contains(" 3 ") && cores.contains("[measurement]"), "{cores}");

    // A topology on that host: the measured file leaves no kernel figure to a default.
    let topo = dir.path().join("t.toml");
    std::fs::write(
        &topo,
        "[host]\npart = \"generic-host\"\n[[drive]]\nid = \"n0\"\npart = \"samsung-990pro-2tb\"\nparent = \"host\"\nlink = \"pcie4x4\"\n",
    )
    .unwrap();
    let o = iopath().arg("--parts").arg(&out).arg("check").arg(&topo).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("cpu_sha256_mb_s ="), "{text}");
}

/// Bad `--cpu` options are usage errors (exit 2) that name the option, before any timing.
#[test]
fn bad_cpu_options_exit_2() {
    for (args, names) in [
        (vec!["measure", "--cpu", "--seconds", "0"], "--seconds"),
        (vec!["measure", "--cpu", "--cores", "0"], "--cores"),
        (vec!["measure", "--cpu", "--part", "lsi-sas3008"], "--part"),
        (vec!["measure", "--cpu", "--target", "/tmp/x"], "--target"),
        (vec!["measure", "--seconds", "1"], "--cpu"),
        (vec!["measure", "--cpu", "--kernel", "raid7"], "--kernel"),
    ] {
        let o = iopath().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names), "{args:?} should name {names}: {err}");
    }
}
