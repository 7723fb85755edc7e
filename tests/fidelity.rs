//! Fidelity: every published data point in tests/data/seed-measurements.toml, predicted
//! through configs/ and the catalog only, within the tolerances of the project's issue #3;
//! and the leave-one-source-out table of issue #13.
//!
//! The points are data ([`points`]): the published source they come from, a label, the
//! runs (topology, `--set` overrides, workload, seeds) and how a value is made of their
//! reports, the published value, and how the two are compared. The per-source tolerance
//! tests and the leave-one-source-out table share that one list.
//!
//! Leave one source out: for each of the five sources, its points are predicted with the
//! figures fitted to the other four. A `fits.toml` figure is attributed to the sources its
//! source string names ("source 002"), plus those of any other `fits.toml` figure it names
//! ("same fit as upstream_efficiency", preferring the same part's figure), to a fixed
//! point. A figure that only the held-out source trained falls back to the value of its
//! part's own catalog file, or its declared default ([`Catalog::builtin_with_fits`]); a
//! figure trained jointly by the held-out source and others is refitted on the remaining
//! sources' points: the points whose prediction moves when the figure moves 10%, a
//! golden-section search of the figure over [value/2, value x 2] (within its accepted
//! range) minimising the sum of squared log errors (pp/100 for relative changes).
//! Run with `--nocapture` (or `scripts/loso.sh`) to see every point and both tables.
//!
//! No figure in this file tunes the model: the workloads are the published ones, the
//! expected values are read from the data file.

use iopath_model::catalog::{FitEntry, Value, figure_spec};
use iopath_model::report::Report;
use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

const SOURCES: [u32; 5] = [0, 1, 2, 3, 4];
const MIB: f64 = 1.048576;

fn seeds() -> toml::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/seed-measurements.toml");
    toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn num(v: &toml::Value) -> f64 {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap()
}

fn ws(rw: &str, bs: &str, qd: u32) -> WorkloadSpec {
    WorkloadSpec { rw: Some(rw.into()), bs: Some(bs.into()), iodepth: Some(qd), ..Default::default() }
}

fn one(d: &str) -> Option<Vec<String>> {
    Some(vec![d.to_string()])
}

// --- The points as data ----------------------------------------------------------------

/// One simulated run: a topology of configs/, its `--set` overrides, a workload, seeds.
#[derive(Debug, Clone)]
struct Run {
    config: &'static str,
    sets: Vec<String>,
    spec: WorkloadSpec,
    seeds: u32,
}

fn run(config: &'static str, sets: &[&str], spec: WorkloadSpec, seeds: u32) -> Run {
    Run { config, sets: sets.iter().map(|s| s.to_string()).collect(), spec, seeds }
}

/// How a predicted value is compared with the published one.
#[derive(Debug, Clone, Copy)]
enum Compare {
    /// Relative error within the fraction.
    Rel(f64),
    /// A relative change [%], within this many percentage points.
    Pp(f64),
    /// Inside the published range; the published value is the range's midpoint.
    Range(f64, f64),
}

type ValueFn = Box<dyn Fn(&[Report]) -> f64 + Send + Sync>;
type Check = Box<dyn Fn(&[Report]) -> Result<(), String> + Send + Sync>;

/// One published point.
struct Point {
    source: u32,
    label: String,
    runs: Vec<Run>,
    value: ValueFn,
    published: f64,
    compare: Compare,
    /// A property of the runs the source states besides the number (a bottleneck, even
    /// shares), checked in sample only.
    check: Option<Check>,
}

impl Point {
    fn new(source: u32, label: String, runs: Vec<Run>, value: ValueFn, published: f64, compare: Compare) -> Point {
        Point { source, label, runs, value, published, compare, check: None }
    }
    fn with(mut self, check: Check) -> Point {
        self.check = Some(check);
        self
    }

    /// Absolute error: % of the published value, or pp for a relative change.
    fn error(&self, predicted: f64) -> f64 {
        match self.compare {
            Compare::Rel(_) | Compare::Range(..) => (predicted / self.published - 1.0).abs() * 100.0,
            Compare::Pp(_) => (predicted - self.published).abs(),
        }
    }
    fn within(&self, predicted: f64) -> bool {
        match self.compare {
            Compare::Rel(tol) => (predicted / self.published - 1.0).abs() <= tol,
            Compare::Pp(tol) => (predicted - self.published).abs() <= tol,
            Compare::Range(lo, hi) => (lo..=hi).contains(&predicted),
        }
    }
    /// The residual a refit minimises.
    fn residual(&self, predicted: f64) -> f64 {
        match self.compare {
            Compare::Pp(_) => (predicted - self.published) / 100.0,
            _ => (predicted / self.published).ln(),
        }
    }
    fn line(&self, predicted: f64) -> String {
        self.line_marked(predicted, "  FAIL")
    }
    /// The point's line, `outside` appended when out of tolerance.
    fn line_marked(&self, predicted: f64, outside: &str) -> String {
        let ok = if self.within(predicted) { "" } else { outside };
        match self.compare {
            Compare::Rel(tol) => format!(
                "{:<60} published {:>9.2} predicted {predicted:>9.2} error {:>+6.1}% (tolerance {:.0}%){ok}",
                self.label,
                self.published,
                (predicted / self.published - 1.0) * 100.0,
                tol * 100.0
            ),
            Compare::Pp(tol) => format!(
                "{:<60} published {:>+8.1}% predicted {predicted:>+8.1}% (tolerance {tol} pp){ok}",
                self.label, self.published
            ),
            Compare::Range(lo, hi) => {
                format!("{:<60} predicted {predicted:.3} (published range {lo}..{hi}){ok}", self.label)
            }
        }
    }
}

fn source_number(case: &toml::Value) -> u32 {
    case["source"].as_str().and_then(|s| s.get(..3)).and_then(|s| s.parse().ok()).expect("case source NNN_...")
}

/// Every published point of tests/data/seed-measurements.toml.
fn points() -> Vec<Point> {
    let all = seeds();
    let cases: BTreeMap<String, toml::Value> =
        all["case"].as_array().unwrap().iter().map(|c| (c["id"].as_str().unwrap().to_string(), c.clone())).collect();
    let case = |id: &str| cases.get(id).unwrap_or_else(|| panic!("no case {id}"));
    let mut v = Vec::new();
    source_000(case, &mut v);
    source_001(case, &mut v);
    source_002(case, &mut v);
    source_003(case, &mut v);
    source_004(case, &mut v);
    v
}

/// Source 000: ASM1166 (PCIe 3.0 x2) with six SATA SSDs.
fn source_000<'a>(case: impl Fn(&str) -> &'a toml::Value, v: &mut Vec<Point>) {
    let c = case("asm1166-seqread");
    let s = source_number(c);
    for p in c["points"].as_array().unwrap() {
        let n = p["drives"].as_integer().unwrap() as usize;
        let r = run(
            "asm1166-6ssd.toml",
            &[],
            WorkloadSpec { active: Some(n), runtime: Some("2s".into()), ..ws("read", "1m", 8) },
            1,
        );
        let mut total = Point::new(
            s,
            format!("asm1166 read, {n} drives [MB/s]"),
            vec![r.clone()],
            Box::new(|r| r[0].total.mb_s),
            num(&p["total"]),
            Compare::Rel(0.05),
        );
        if n >= 4 {
            // From 4 drives the PCIe 3.0 x2 uplink binds.
            total = total.with(Box::new(|r| {
                let b = &r[0].bottleneck.id;
                if b == "hba.uplink.up" { Ok(()) } else { Err(format!("bottleneck {b}, expected hba.uplink.up")) }
            }));
        }
        v.push(total);
        if let Some(pd) = p.get("per_drive") {
            let label = format!("asm1166 read, {n} drives, per drive [MB/s]");
            v.push(Point::new(
                s,
                label,
                vec![r],
                Box::new(move |r| r[0].total.mb_s / n as f64),
                num(pd),
                Compare::Rel(0.05),
            ));
        }
    }
    let c = case("asm1166-copy");
    let copy = WorkloadSpec {
        copy: Some(vec!["D:E".into(), "F:G".into(), "H:I".into()]),
        runtime: Some("2s".into()),
        ..ws("read", "1m", 8)
    };
    let r = run("asm1166-6ssd.toml", &[], copy, 1);
    let p = Point::new(
        source_number(c),
        "asm1166 copies D->E, F->G, H->I, read + write [MB/s]".into(),
        vec![r],
        Box::new(|r| r[0].total.read_mb_s + r[0].total.write_mb_s),
        num(&c["points"][0]["total"]),
        Compare::Rel(0.07),
    );
    // Full duplex: the copies move more than one direction of the uplink can carry.
    v.push(p.with(Box::new(|r| {
        let up = r[0].links.iter().find(|l| l.id == "hba.uplink").ok_or("no hba.uplink")?;
        if up.util_up > 0.0 && up.util_down > 0.0 { Ok(()) } else { Err("the uplink is not used both ways".into()) }
    })));
}

/// Source 001: Z87 Deluxe, ASM106SE vs Intel PCH.
fn source_001<'a>(case: impl Fn(&str) -> &'a toml::Value, v: &mut Vec<Point>) {
    let c = case("asm106se-vs-intel");
    let p = &c["points"][0];
    // The source reports 25-27% lower; the band around it is 0.70-0.78.
    let (lo, hi) = (num(&p["ratio_low"]) - 0.03, num(&p["ratio_high"]) + 0.03);
    let mid = (num(&p["ratio_low"]) + num(&p["ratio_high"])) / 2.0;
    for rw in ["read", "write"] {
        let r = |d: &str| {
            let spec = WorkloadSpec { drives: one(d), runtime: Some("1s".into()), ..ws(rw, "128k", 32) };
            run("z87-deluxe-asm106se.toml", &[], spec, 1)
        };
        v.push(Point::new(
            source_number(c),
            format!("asm106se / intel, {rw} 128k QD32"),
            vec![r("asmedia"), r("intel")],
            Box::new(|r| r[0].total.mb_s / r[1].total.mb_s),
            mid,
            Compare::Range(lo, hi),
        ));
    }
}

/// The config and drive prefix of one of source 002's controllers.
/// The passthrough point runs on its own topology: the LSI card under the ESXi guest's host.
fn z87_controller(name: &str) -> (&'static str, &'static str, &'static str) {
    match name {
        "Intel Z87" => ("z87-extreme6.toml", "intel", ""),
        "ASM1062" => ("z87-extreme6.toml", "asm", ""),
        "LSI 9211-8i" => ("z87-extreme6.toml", "lsi", ""),
        "LSI 9211-8i, passed through to a VM (ESXi 5.5)" => {
            ("z87-extreme6-esxi-passthrough.toml", "lsi", " (VM passthrough)")
        }
        other => panic!("source 002 controller {other:?} has no topology"),
    }
}

/// Source 002: Z87 Extreme6, three controllers, SSD and HDD.
fn source_002<'a>(case: impl Fn(&str) -> &'a toml::Value, v: &mut Vec<Point>) {
    let mb_s: fn(&[Report]) -> f64 = |r| r[0].total.mb_s;
    let c = case("z87-asm1062-lsi9211-ssd");
    for p in c["points"].as_array().unwrap() {
        let (file, id, note) = z87_controller(p["controller"].as_str().unwrap());
        let drive = format!("{id}_ssd");
        for rw in ["read", "write"] {
            let spec = WorkloadSpec { drives: one(&drive), runtime: Some("1s".into()), ..ws(rw, "1m", 4) };
            let label = format!("z87 {drive}{note} {rw} [MB/s]");
            v.push(Point::new(
                source_number(c),
                label,
                vec![run(file, &[], spec, 1)],
                Box::new(mb_s),
                num(&p[rw]),
                Compare::Rel(0.05),
            ));
        }
    }
    let c = case("z87-asm1062-lsi9211-hdd");
    for p in c["points"].as_array().unwrap() {
        let (file, id, note) = z87_controller(p["controller"].as_str().unwrap());
        let drive = format!("{id}_hdd");
        // No runtime and --region 100%: a sequential job reads (writes) its whole region
        // once, as the published benchmark averaged over the whole surface.
        for rw in ["read", "write"] {
            let spec = WorkloadSpec { drives: one(&drive), region: Some("100%".into()), ..ws(rw, "1m", 4) };
            let label = format!("z87 {drive}{note} {rw}, whole surface [MB/s]");
            v.push(Point::new(
                source_number(c),
                label,
                vec![run(file, &[], spec, 1)],
                Box::new(mb_s),
                num(&p[rw]),
                Compare::Rel(0.03),
            ));
        }
        // The benchmark's "average access time": random single reads over the whole disk.
        let spec = WorkloadSpec { drives: one(&drive), runtime: Some("20s".into()), ..ws("randread", "4k", 1) };
        v.push(Point::new(
            source_number(c),
            format!("z87 {drive}{note} random read access time [ms]"),
            vec![run(file, &[], spec, 2)],
            Box::new(|r| r[0].total.lat_us.mean / 1e3),
            num(&p["access_ms"]),
            Compare::Rel(0.10),
        ));
    }
}

/// Source 003: Marvell 88SE9172 + port multiplier + five HDDs.
fn source_003<'a>(case: impl Fn(&str) -> &'a toml::Value, v: &mut Vec<Point>) {
    let cfg = "marvell9172-pm-5hdd.toml";
    let mib_s: fn(&[Report]) -> f64 = |r| r[0].total.mb_s / MIB;
    let c = case("marvell9172-pm-fbs-seqread");
    for p in c["points"].as_array().unwrap() {
        let (n, bs) = (p["drives"].as_integer().unwrap() as usize, p["bs_kib"].as_integer().unwrap());
        let spec = WorkloadSpec { active: Some(n), runtime: Some("5s".into()), ..ws("read", &format!("{bs}k"), 1) };
        let label = format!("pm FBS read {bs} KiB, {n} drives [MiB/s]");
        v.push(Point::new(
            source_number(c),
            label,
            vec![run(cfg, &[], spec, 1)],
            Box::new(mib_s),
            num(&p["total"]),
            Compare::Rel(0.10),
        ));
    }
    let c = case("marvell9172-pm-nofbs-seqread");
    for p in c["points"].as_array().unwrap() {
        let bs = p["bs_kib"].as_integer().unwrap();
        let spec = WorkloadSpec { active: Some(5), runtime: Some("5s".into()), ..ws("read", &format!("{bs}k"), 1) };
        let label = format!("pm CBS read {bs} KiB, 5 drives [MiB/s]");
        let r = run(cfg, &["pm.fbs=false"], spec, 1);
        let p = Point::new(source_number(c), label, vec![r], Box::new(mib_s), num(&p["total"]), Compare::Rel(0.15));
        // Command-based switching serves one drive at a time: shares are equal.
        v.push(p.with(Box::new(|r| {
            let per: Vec<f64> = r[0].drives.iter().map(|d| d.read_mb_s).collect();
            let lo = per.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = per.iter().copied().fold(0.0, f64::max);
            if hi / lo < 1.05 { Ok(()) } else { Err(format!("CBS shares should be even: {per:?}")) }
        })));
    }
    let c = case("marvell9172-pm-randread");
    for p in c["points"].as_array().unwrap() {
        let fbs = p["fbs"].as_bool().unwrap();
        let region = num(&p["region"]);
        let spec = WorkloadSpec {
            active: Some(5),
            numjobs: Some(2),
            region: Some(format!("{}%", region * 100.0)),
            runtime: Some("20s".into()),
            ..ws("randread", "512", 1)
        };
        let r = run(cfg, &[if fbs { "pm.fbs=true" } else { "pm.fbs=false" }], spec, 4);
        let label = format!("pm randread 512 B, FBS {fbs}, region {:.0}% [TPS]", region * 100.0);
        v.push(Point::new(
            source_number(c),
            label,
            vec![r],
            Box::new(|r| r[0].total.iops),
            num(&p["total"]),
            Compare::Rel(0.15),
        ));
    }
}

/// One of source 004's changes: label, rw, bs, iodepth, metric, published change [%], pp.
type ChangeRow = (&'static str, &'static str, &'static str, u32, fn(&Report) -> f64, f64, f64);

/// Source 004: one SSD on onboard C622 vs 9300-8i + SAS3 expander, as relative changes.
fn source_004<'a>(case: impl Fn(&str) -> &'a toml::Value, v: &mut Vec<Point>) {
    let c = case("expander-relative");
    let s = source_number(c);
    let published = |metric: &str, mix: &str, bs: Option<i64>| {
        let p = c["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| {
                p["metric"].as_str() == Some(metric)
                    && p["mix"].as_str() == Some(mix)
                    && bs.is_none_or(|b| p["bs_kib"].as_integer() == Some(b))
            })
            .unwrap_or_else(|| panic!("no source 004 point {metric} {mix}"));
        num(&p["change"]) * 100.0
    };
    let mb_s: fn(&Report) -> f64 = |r| r.total.mb_s;
    let iops: fn(&Report) -> f64 = |r| r.total.iops;
    let lat: fn(&Report) -> f64 = |r| r.total.lat_us.mean;
    let rows: [ChangeRow; 9] = [
        (
            "expander write 1m QD32, MB/s change",
            "write",
            "1m",
            32,
            mb_s,
            published("throughput", "write", Some(1024)),
            4.0,
        ),
        (
            "expander write 4k QD32, MB/s change",
            "write",
            "4k",
            32,
            mb_s,
            published("throughput", "write", Some(4)),
            4.0,
        ),
        (
            "expander randwrite 4k QD32, IOPS change",
            "randwrite",
            "4k",
            32,
            iops,
            published("iops", "100% write", None),
            4.0,
        ),
        (
            "expander write saturation (randwrite 4k QD32), IOPS change",
            "randwrite",
            "4k",
            32,
            iops,
            published("write-saturation iops", "100% write", None),
            4.0,
        ),
        (
            "expander randread 4k QD1, mean latency change",
            "randread",
            "4k",
            1,
            lat,
            published("latency", "100% read", None),
            4.0,
        ),
        (
            "expander randwrite 4k QD1, mean latency change",
            "randwrite",
            "4k",
            1,
            lat,
            published("latency", "100% write", None),
            4.0,
        ),
        // Not a printed number: the source names 8 KiB as the only read block size with a
        // noticeable difference, so 1 MiB reads are taken as unchanged (3 pp).
        ("expander read 1m QD32, MB/s change", "read", "1m", 32, mb_s, 0.0, 3.0),
        // "About the same" for 100% read and a 50/50 mix (4 KiB random, QD32). The mix is the
        // telling one: writes alone lose about 16%, yet a 50/50 mix, bound by the NAND that
        // reads and writes share, does not; the STP intake must be a separate stage.
        (
            "expander randread 4k QD32, IOPS change (about the same)",
            "randread",
            "4k",
            32,
            iops,
            published("iops", "100% read", None),
            4.0,
        ),
        (
            "expander randrw 50/50 4k QD32, IOPS change (about the same)",
            "randrw",
            "4k",
            32,
            iops,
            published("iops", "50/50", None),
            4.0,
        ),
    ];
    for (label, rw, bs, qd, f, pub_, tol) in rows {
        let r = |d: &str| {
            let spec = WorkloadSpec { drives: one(d), runtime: Some("1s".into()), ..ws(rw, bs, qd) };
            run("c622-vs-9300-expander.toml", &[], spec, 1)
        };
        let value: ValueFn = Box::new(move |r| (f(&r[0]) / f(&r[1]) - 1.0) * 100.0);
        v.push(Point::new(s, label.into(), vec![r("expander"), r("onboard")], value, pub_, Compare::Pp(tol)));
    }
}

// --- Evaluation --------------------------------------------------------------------------

/// A catalog and the runs simulated with it (points share runs: the same onboard run
/// serves several of source 004's changes).
struct Eval {
    catalog: Catalog,
    runs: Mutex<HashMap<String, Report>>,
}

impl Eval {
    fn new(catalog: Catalog) -> Eval {
        Eval { catalog, runs: Mutex::new(HashMap::new()) }
    }

    fn report(&self, r: &Run) -> Report {
        let key = format!("{}|{:?}|{:?}|{}", r.config, r.sets, r.spec, r.seeds);
        if let Some(rep) = self.runs.lock().unwrap().get(&key) {
            return rep.clone();
        }
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(r.config);
        let t = Topology::load(&path, &self.catalog).unwrap_or_else(|e| panic!("{}: {e}", r.config));
        let o: Vec<ParamOverride> = r.sets.iter().map(|s| s.parse().unwrap()).collect();
        let t = t.with_overrides(&o).unwrap();
        let rep = iopath_sim::replicate(&t, &r.spec.resolve().unwrap(), r.seeds, &Default::default()).unwrap();
        self.runs.lock().unwrap().insert(key, rep.clone());
        rep
    }

    fn reports(&self, p: &Point) -> Vec<Report> {
        p.runs.iter().map(|r| self.report(r)).collect()
    }

    fn predict(&self, p: &Point) -> f64 {
        (p.value)(&self.reports(p))
    }
}

/// The points with their in-sample predictions (the built-in catalog) and any failed
/// check, computed once for every test of this file.
struct InSample {
    points: Vec<Point>,
    predicted: Vec<f64>,
    checks: Vec<Option<String>>,
}

fn in_sample() -> &'static InSample {
    static CELL: OnceLock<InSample> = OnceLock::new();
    CELL.get_or_init(|| {
        let points = points();
        let eval = Eval::new(Catalog::builtin());
        let out: Vec<(f64, Option<String>)> = points
            .par_iter()
            .map(|p| {
                let reps = eval.reports(p);
                let mut check = p.check.as_ref().and_then(|c| c(&reps).err());
                // The host's CPU budget is far from binding on every published setup.
                if let Some(r) = reps.iter().find(|r| r.bottleneck.id == "host.cpu") {
                    check = Some(format!("bound by host.cpu ({:.0} IOPS)", r.total.iops));
                }
                ((p.value)(&reps), check)
            })
            .collect();
        let (predicted, checks) = out.into_iter().unzip();
        InSample { points, predicted, checks }
    })
}

/// Checks one source's points in sample: every point within its tolerance and every
/// stated property of its runs; prints each.
fn source_within_tolerance(source: u32) {
    let s = in_sample();
    let mut fails = Vec::new();
    for ((p, &v), check) in s.points.iter().zip(&s.predicted).zip(&s.checks).filter(|((p, _), _)| p.source == source) {
        println!("{}", p.line(v));
        if !p.within(v) {
            fails.push(p.line(v));
        }
        if let Some(m) = check {
            println!("  {m}  FAIL");
            fails.push(format!("{}: {m}", p.label));
        }
    }
    assert!(s.points.iter().any(|p| p.source == source), "source {source:03} has no points");
    assert!(fails.is_empty(), "source {source:03}, points out of tolerance:\n{}", fails.join("\n"));
}

#[test]
fn source_000_asm1166_within_tolerance() {
    source_within_tolerance(0);
}

#[test]
fn source_001_asm106se_vs_intel_within_tolerance() {
    source_within_tolerance(1);
}

#[test]
fn source_002_z87_extreme6_within_tolerance() {
    source_within_tolerance(2);
}

#[test]
fn source_003_port_multiplier_within_tolerance() {
    source_within_tolerance(3);
}

#[test]
fn source_004_expander_within_tolerance() {
    source_within_tolerance(4);
}

// --- Leave one source out ----------------------------------------------------------------

/// "source NNN" mentions in a source string.
fn named_sources(text: &str) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let b = text.as_bytes();
    for (i, _) in text.match_indices("source ") {
        let d = &b[i + 7..];
        if d.len() >= 3 && d[..3].iter().all(u8::is_ascii_digit) && d.get(3).is_none_or(|c| !c.is_ascii_digit()) {
            out.insert(text[i + 7..i + 10].parse().unwrap());
        }
    }
    out
}

/// Whether `text` names `word` as a whole identifier.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident) && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// The sources each fits.toml figure was trained on: those its source string names, plus
/// those of the fits.toml figures it names (its own part's first), to a fixed point.
fn attribution(fits: &[FitEntry]) -> Vec<BTreeSet<u32>> {
    let mut src: Vec<BTreeSet<u32>> = fits.iter().map(|e| named_sources(&e.fig.source)).collect();
    // For each entry, the entries it refers to: a figure name it mentions, of its own part
    // if that part has it, else of any part.
    let refs: Vec<Vec<usize>> = fits
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let names: BTreeSet<&str> = fits
                .iter()
                .map(|f| f.figure.as_str())
                .filter(|n| *n != e.figure && names_word(&e.fig.source, n))
                .collect();
            names
                .into_iter()
                .flat_map(|n| {
                    let same: Vec<usize> =
                        (0..fits.len()).filter(|&j| j != i && fits[j].figure == n && fits[j].part == e.part).collect();
                    if same.is_empty() { (0..fits.len()).filter(|&j| fits[j].figure == n).collect() } else { same }
                })
                .collect()
        })
        .collect();
    loop {
        let mut changed = false;
        for i in 0..fits.len() {
            for &j in &refs[i] {
                let add: Vec<u32> = src[j].difference(&src[i]).copied().collect();
                changed |= !add.is_empty();
                src[i].extend(add);
            }
        }
        if !changed {
            return src;
        }
    }
}

/// What happens to each fits.toml figure when `held` is left out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Keep,
    /// Trained by the held-out source only: the part's own value or the default.
    Drop,
    /// Trained by it and others: refitted on the others' points.
    Refit,
}

fn fate(sources: &BTreeSet<u32>, held: u32) -> Fate {
    match (sources.contains(&held), sources.len()) {
        (false, _) => Fate::Keep,
        (true, 1) => Fate::Drop,
        (true, _) => Fate::Refit,
    }
}

/// A catalog from fits.toml with `dropped` left out and `values` replacing fitted values.
fn catalog_with(fits: &[FitEntry], dropped: &[usize], values: &BTreeMap<usize, f64>) -> Catalog {
    Catalog::builtin_with_fits(|e| {
        let ix = fits.iter().position(|f| f.part == e.part && f.figure == e.figure).expect("fits entry");
        if let Some(v) = values.get(&ix) {
            e.fig.value = Value::Num(*v);
        }
        !dropped.contains(&ix)
    })
}

fn figure_value(e: &FitEntry) -> Option<f64> {
    if let Value::Num(v) = e.fig.value { Some(v) } else { None }
}

/// Refits fits.toml figure `ix` on `points` (of the remaining sources), the other figures as
/// in `dropped`/`values`: a golden-section search over [value/2, value x 2] within the
/// figure's accepted range, on the points whose prediction moves when the figure moves 10%.
/// `None` when no point moves: no remaining source constrains it, so it keeps its value.
fn refit(
    fits: &[FitEntry],
    ix: usize,
    dropped: &[usize],
    values: &BTreeMap<usize, f64>,
    points: &[&Point],
) -> Option<f64> {
    let e = &fits[ix];
    let v0 = figure_value(e)?;
    let spec = figure_spec(e.kind, &e.figure)?;
    let (lo, hi) = ((v0 / 2.0).max(spec.range.0), (v0 * 2.0).min(spec.range.1));
    let at = |v: f64| {
        let mut vals = values.clone();
        vals.insert(ix, v);
        Eval::new(catalog_with(fits, dropped, &vals))
    };
    // Only a topology with the part can depend on its figure.
    let cat = Catalog::builtin();
    let has_part = |r: &Run| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(r.config);
        let t = Topology::load(&path, &cat).unwrap_or_else(|e| panic!("{}: {e}", r.config));
        t.nodes.iter().any(|n| cat.get(&n.part).is_some_and(|p| p.id == e.part))
    };
    let points: Vec<&Point> = points.iter().copied().filter(|p| p.runs.iter().any(has_part)).collect();
    if points.is_empty() {
        return None;
    }
    let base = at(v0);
    let moved = at(if v0 * 1.1 <= hi { v0 * 1.1 } else { v0 * 0.9 });
    let sensitive: Vec<&Point> = points
        .par_iter()
        .filter(|p| {
            let (a, b) = (base.predict(p), moved.predict(p));
            (a - b).abs() > 5e-4 * a.abs().max(1e-9)
        })
        .copied()
        .collect();
    if sensitive.is_empty() {
        return None;
    }
    let cost = |v: f64| {
        let ev = at(v);
        sensitive.par_iter().map(|p| p.residual(ev.predict(p)).powi(2)).sum::<f64>()
    };
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (lo, hi);
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (cost(c), cost(d));
    for _ in 0..14 {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - g * (b - a);
            fc = cost(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + g * (b - a);
            fd = cost(d);
        }
    }
    Some((a + b) / 2.0)
}

/// Median and worst absolute error of a set of errors.
fn stats(errors: &[f64]) -> (f64, f64) {
    let mut e = errors.to_vec();
    e.sort_by(f64::total_cmp);
    let n = e.len();
    let median = if n % 2 == 1 { e[n / 2] } else { (e[n / 2 - 1] + e[n / 2]) / 2.0 };
    (median, e[n - 1])
}

#[test]
fn leave_one_source_out() {
    let s = in_sample();
    let fits = Catalog::builtin_fits();
    let attr = attribution(&fits);
    println!("fits.toml figures and the sources they were trained on:");
    for (e, a) in fits.iter().zip(&attr) {
        let names: Vec<String> = a.iter().map(|n| format!("{n:03}")).collect();
        // A figure fitted to other published data (no seed source named) stays in every pass.
        let names = if names.is_empty() { "none of 000-004: kept in every pass".to_string() } else { names.join(", ") };
        println!("  {:<28} {:<24} {:<8} sources {names}", e.part, e.figure, e.fig.basis);
    }
    let mut rows = Vec::new();
    for held in SOURCES {
        let dropped: Vec<usize> = (0..fits.len()).filter(|&i| fate(&attr[i], held) == Fate::Drop).collect();
        let mut values = BTreeMap::new();
        for ix in (0..fits.len()).filter(|&i| fate(&attr[i], held) == Fate::Refit) {
            let others: Vec<&Point> =
                s.points.iter().filter(|p| p.source != held && attr[ix].contains(&p.source)).collect();
            let v = refit(&fits, ix, &dropped, &values, &others);
            let e = &fits[ix];
            match v {
                Some(v) => {
                    println!("  without {held:03}: {}.{} refitted {} -> {v:.4}", e.part, e.figure, e.fig.value);
                    values.insert(ix, v);
                }
                None => println!(
                    "  without {held:03}: {}.{} keeps {} (no remaining point moves with it)",
                    e.part, e.figure, e.fig.value
                ),
            }
        }
        for &ix in &dropped {
            println!(
                "  without {held:03}: {}.{} falls back (was {})",
                fits[ix].part, fits[ix].figure, fits[ix].fig.value
            );
        }
        let eval = Eval::new(catalog_with(&fits, &dropped, &values));
        let mine: Vec<&Point> = s.points.iter().filter(|p| p.source == held).collect();
        let predicted: Vec<f64> = mine.par_iter().map(|p| eval.predict(p)).collect();
        let mut errors = Vec::new();
        for (p, &v) in mine.iter().zip(&predicted) {
            assert!(v.is_finite(), "{}: held-out prediction {v}", p.label);
            println!("  held out {held:03}: {}", p.line_marked(v, "  (outside the in-sample tolerance)"));
            errors.push(p.error(v));
        }
        let inside: Vec<f64> =
            s.points.iter().zip(&s.predicted).filter(|(p, _)| p.source == held).map(|(p, &v)| p.error(v)).collect();
        // The in-sample row is made of the very predictions the tolerance tests check.
        for (p, &v) in s.points.iter().zip(&s.predicted).filter(|(p, _)| p.source == held) {
            assert!(p.within(v), "in sample {}: {v} out of tolerance", p.label);
        }
        rows.push((held, mine.len(), stats(&errors), stats(&inside)));
    }
    println!();
    println!("Leave one source out (error: % of the published value; source 004: pp of its relative changes)");
    println!(
        "{:<8} {:>6} {:>14} {:>14} {:>16} {:>16}",
        "source", "points", "LOSO median", "LOSO worst", "in-sample median", "in-sample worst"
    );
    for (held, n, (m, w), (im, iw)) in &rows {
        println!("{held:03}      {n:>6} {m:>13.1}  {w:>13.1}  {im:>15.1}  {iw:>15.1}");
    }
}
