//! Latency in JSON as fio's json+ has it (issue #16): every latency summary of a simulated or
//! measured report carries fio's default percentile list and the histogram bins in fio's
//! buckets, and the two agree with each other and with the I/O counts.
//!
//! What each check could catch: bins that miss or double-count I/Os (their counts must add
//! up to the I/Os the report counts), percentiles out of order or in another list than fio's,
//! a p50/p99 that disagrees with the list, bins whose keys are not fio bucket values, and a
//! replicated run that averages the summary fields but keeps one run's list and bins.

mod common;

use common::{iopath, json};
use iopath_test_support as rig;
use serde_json::Value;

/// fio's default `percentile_list` (fio HOWTO).
const FIO_LIST: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// fio stat.c's `plat_val_to_idx` then `plat_idx_to_val`, written out again here from fio's
/// source so the test does not read the value from the code under test.
fn fio_bucket_value(ns: u64) -> u64 {
    let msb = 63 - ns.max(1).leading_zeros();
    if msb <= 6 {
        return ns;
    }
    let e = msb - 6;
    let idx = ((u64::from(e) + 1) << 6) + ((ns >> e) & 63);
    let (e2, k) = ((idx >> 6) - 1, idx % 64);
    (1 << (e2 + 6)) + (k << e2) + (1 << (e2 - 1))
}

/// Checks one `lat_us` object of `ios` I/Os; `what` names it in failures.
fn check(l: &Value, ios: u64, what: &str) {
    let list = l["percentiles"].as_array().unwrap_or_else(|| panic!("{what}: no percentiles in {l}"));
    let pcts: Vec<f64> = list.iter().map(|p| p["pct"].as_f64().unwrap()).collect();
    assert_eq!(pcts, FIO_LIST, "{what}");
    let us: Vec<f64> = list.iter().map(|p| p["us"].as_f64().unwrap()).collect();
    assert!(us.windows(2).all(|w| w[0] <= w[1]), "{what}: percentiles not in order: {us:?}");
    assert_eq!(l["p50"].as_f64(), Some(us[6]), "{what}: p50 is not the list's 50%");
    assert_eq!(l["p99"].as_f64(), Some(us[12]), "{what}: p99 is not the list's 99%");
    assert!(us[0] > 0.0 && us[16] <= l["max"].as_f64().unwrap(), "{what}: {us:?} vs max {}", l["max"]);
    let bins = l["bins"].as_object().unwrap_or_else(|| panic!("{what}: no bins in {l}"));
    let mut counted = 0;
    for (k, c) in bins {
        let ns: u64 = k.parse().unwrap_or_else(|_| panic!("{what}: bin key {k:?} is not ns"));
        assert_eq!(fio_bucket_value(ns), ns, "{what}: {ns} is not a fio bucket value");
        counted += c.as_u64().unwrap();
    }
    assert_eq!(counted, ios, "{what}: the bins count {counted} I/Os, the report {ios}");
    // The median bucket holds the p50 within a bucket's width (1/64 of the value) and
    // hdrhistogram's 1%.
    // (A JSON object's keys come back in text order; the bins' order is the numbers'.)
    let mut sorted: Vec<(u64, u64)> = bins.iter().map(|(k, c)| (k.parse().unwrap(), c.as_u64().unwrap())).collect();
    sorted.sort();
    let mut sum = 0;
    let median = sorted
        .iter()
        .find(|(_, c)| {
            sum += c;
            sum * 2 >= ios
        })
        .map(|&(k, _)| k as f64 / 1e3)
        .unwrap();
    assert!((median - us[6]).abs() <= us[6] * (1.0 / 64.0 + 0.011), "{what}: median bin {median} vs p50 {}", us[6]);
}

fn check_report(r: &Value) {
    let mut total = 0;
    for d in r["drives"].as_array().unwrap() {
        let ios = d["ios"].as_u64().unwrap();
        if ios > 0 {
            check(&d["lat_us"], ios, &format!("drive {}", d["id"]));
        }
        total += ios;
    }
    if r.get("pool").is_none() {
        check(&r["total"]["lat_us"], total, "total");
    }
}

/// `simulate` of 4 KiB random reads on the 6-SSD topology, as JSON.
fn randread_6ssd(iodepth: &str, runtime: &str, replications: &str) -> Value {
    json(&iopath(&[
        "simulate",
        "configs/asm1166-6ssd.toml",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        iodepth,
        "--runtime",
        runtime,
        "--replications",
        replications,
        "--json",
    ]))
}

#[test]
fn a_simulated_run_has_fios_percentiles_and_bins_per_drive_and_in_total() {
    check_report(&randread_6ssd("8", "50ms", "1"));
}

#[test]
fn replications_average_the_list_and_add_the_bins() {
    let (one, three) = (randread_6ssd("4", "30ms", "1"), randread_6ssd("4", "30ms", "3"));
    // Three runs count three times the I/Os (drive `ios` are sums over the runs), and the
    // bins must count every one of them, not the first run's alone.
    check_report(&three);
    let ios = |r: &Value| r["cost"]["ios"].as_u64().unwrap();
    assert!(ios(&three) > 2 * ios(&one), "{} vs {}", ios(&three), ios(&one));
}

#[test]
fn a_pool_run_bins_its_logical_ios() {
    let r = json(&iopath(&[
        "simulate",
        "configs/pools-9300-8i-exos.toml",
        "--workload",
        "seqread",
        "--runtime",
        "300ms",
        "--json",
    ]));
    let p = &r["pool"];
    check(&p["lat_us"], p["ios"].as_u64().unwrap(), "pool");
    check_report(&r);
}

#[test]
fn a_measured_run_has_the_same_list_and_bins() {
    let d = tempfile::Builder::new().prefix("iopath-lat-").tempdir_in(rig::scratch_dir()).unwrap();
    let t = d.path().join("t.img");
    std::fs::write(&t, vec![0x5a; 4 << 20]).unwrap();
    let r = json(&iopath(&[
        "measure",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "4m",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "4",
        "--runtime",
        "0.2s",
        "--ramp",
        "0s",
        "--engine",
        "threads",
        "--json",
        "--quiet",
    ]));
    assert_eq!(r["kind"], "measured");
    check_report(&r);
}

/// fio's own json+ read back: the bins are fio's, and the percentile of every entry of the
/// list, read from those bins the way iopath merges groups, is the value fio printed.
#[test]
fn fio_json_plus_reads_back_with_fios_own_percentiles() {
    let Some(fio) = rig::which("fio") else {
        rig::skip("fio is not installed");
        return;
    };
    let d = tempfile::Builder::new().prefix("iopath-lat-fio-").tempdir_in(rig::scratch_dir()).unwrap();
    let t = d.path().join("t.img");
    std::fs::write(&t, vec![0x5a; 4 << 20]).unwrap();
    let o = std::process::Command::new(fio)
        .args(["--name=a", "--size=4m", "--rw=randread", "--bs=4k", "--ioengine=psync", "--number_ios=2000"])
        .arg(format!("--filename={}", t.display()))
        .arg("--output-format=json+")
        .output()
        .unwrap();
    assert!(o.status.success(), "fio: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let raw: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let clat = &raw["jobs"][0]["read"]["clat_ns"];
    let out = iopath_validate::fio::parse_fio_json("fio.json", &text).unwrap();
    let l = &out.jobs[0].read.lat_us;
    let fio_bins: Vec<(u64, u64)> =
        clat["bins"].as_object().unwrap().iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())).collect();
    let mut fio_bins = fio_bins;
    fio_bins.sort();
    assert_eq!(l.bins.iter().map(|(&k, &v)| (k, v)).collect::<Vec<_>>(), fio_bins);
    for (p, v) in clat["percentile"].as_object().unwrap() {
        let (pct, us): (f64, f64) = (p.parse().unwrap(), v.as_f64().unwrap() / 1e3);
        assert_eq!(l.at(pct), Some(us), "{pct}% as listed");
        assert_eq!(l.from_bins(pct), Some(us), "{pct}% from the bins");
    }
}
