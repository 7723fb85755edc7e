//! Property tests of the simulator over random small topologies and workloads.
//!
//! A topology is written as TOML text, as a user would, from real catalog parts: a host, one
//! or two controllers (an Intel Z87 PCH's SATA under its PCH, ASMedia, Marvell, LSI), one to
//! six SATA SSDs and HDDs, sometimes a narrower uplink (`link = "pcie2x1"`) and sometimes a
//! SATA II port multiplier under the Marvell 88SE9172. Workloads mix every `rw`, block sizes
//! from 4k to 1m, queue depths 1..32 and short runs (0.1-0.3 s simulated).
//!
//! The properties, for every case:
//!
//! - utilizations of links and of the bottleneck are fractions in [0, 1];
//! - bytes are conserved: what each drive's rates moved in the window, and the total's, are
//!   the bytes of the I/Os that completed (completions x block size, a count the rates are
//!   not computed from), give or take the I/Os in flight at either edge of the window;
//! - the simulated total never beats the closed-form bound;
//! - more hardware never slows a run: more uplink lanes, a newer PCIe generation, a faster
//!   drive;
//! - drives that the workload does not touch change nothing;
//! - HDD writers, which the bound and uplink properties skip while their write-back caches
//!   fill, hold both once the caches are full (a warm-up derived from the cache figure).

use iopath_model::{Catalog, ParamOverride, Topology, WorkloadSpec};
use iopath_sim::{Report, SimOptions, Workload, simulate, sweep::workload_bound};
use proptest::prelude::*;
use std::fmt::Write;
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(Catalog::builtin)
}

/// SATA SSDs and HDDs of the catalog, and whether each is an HDD.
const DRIVES: &[(&str, bool)] = &[
    ("kingston-dc600m-1920", false),
    ("micron-5300pro-3840", false),
    ("intel-ssd520-240", false),
    ("samsung-870evo-1tb", false),
    ("crucial-mx500-1tb", false),
    ("seagate-es3-3tb", true),
    ("generic-hdd-sata2", true),
    ("wd-red-plus-4tb", true),
    ("seagate-ironwolf-8tb", true),
];

/// Controllers, their SATA ports, and whether their uplink is PCIe (can be overridden).
const CONTROLLERS: &[(&str, usize, bool)] = &[
    ("asm1166", 6, true),
    ("asm1062", 2, true),
    ("lsi-sas2008", 8, true),
    ("lsi-sas3008", 8, true),
    ("marvell-88se9172", 2, true),
    ("intel-z87-sata", 6, false),
];

const LINKS: &[Option<&str>] = &[None, None, Some("pcie2x1"), Some("pcie3x1"), Some("pcie2x2")];
const RWS: &[&str] = &["read", "write", "randread", "randwrite", "rw", "randrw"];
const BSS: &[&str] = &["4k", "16k", "64k", "128k", "512k", "1m"];

#[derive(Debug, Clone)]
struct Ctl {
    part: usize,
    link: Option<&'static str>,
    /// A port multiplier on port 0 (Marvell 88SE9172 only); its drives hang below it.
    pm: bool,
    drives: Vec<usize>,
}

#[derive(Debug, Clone)]
struct Case {
    ctls: Vec<Ctl>,
    rw: &'static str,
    bs: &'static str,
    iodepth: u32,
    rwmixread: u32,
    runtime_ms: u32,
    seed: u64,
}

impl Case {
    fn drive_ids(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (c, ctl) in self.ctls.iter().enumerate() {
            for k in 0..ctl.drives.len() {
                v.push(format!("c{c}d{k}"));
            }
        }
        v
    }

    fn any_hdd(&self) -> bool {
        self.ctls.iter().flat_map(|c| &c.drives).any(|&d| DRIVES[d].1)
    }

    /// The topology as a user would write it, plus `extra` drives that no workload targets
    /// (on free ports of the existing controllers, else on a new ASM1166).
    fn toml(&self, extra: usize) -> String {
        let mut s = String::new();
        let z87 = self.ctls.iter().any(|c| CONTROLLERS[c.part].0 == "intel-z87-sata");
        let _ = writeln!(s, "name = \"prop\"\n[host]\npart = \"{}\"", if z87 { "intel-lga1150" } else { "amd-am5" });
        if z87 {
            let _ = writeln!(s, "[[node]]\nid = \"pch\"\npart = \"intel-z87-pch\"\nparent = \"host\"");
        }
        let mut left = extra;
        let mut extras = String::new();
        for (c, ctl) in self.ctls.iter().enumerate() {
            let (part, ports, _) = CONTROLLERS[ctl.part];
            let parent = if part == "intel-z87-sata" { "pch" } else { "host" };
            let _ = writeln!(s, "[[node]]\nid = \"c{c}\"\npart = \"{part}\"\nparent = \"{parent}\"");
            if let Some(l) = ctl.link {
                let _ = writeln!(s, "link = \"{l}\"");
            }
            let (under, first_port, ports) = if ctl.pm {
                let _ =
                    writeln!(s, "[[node]]\nid = \"c{c}pm\"\npart = \"sata2-pm-generic\"\nparent = \"c{c}\"\nport = 0");
                (format!("c{c}pm"), 0, 5)
            } else {
                (format!("c{c}"), 0, ports)
            };
            for (k, &d) in ctl.drives.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "[[drive]]\nid = \"c{c}d{k}\"\npart = \"{}\"\nparent = \"{under}\"\nport = {}",
                    DRIVES[d].0,
                    first_port + k
                );
            }
            // Idle drives on the free ports, after the used ones.
            for p in ctl.drives.len()..ports {
                if left == 0 {
                    break;
                }
                let _ = writeln!(
                    extras,
                    "[[drive]]\nid = \"idle{left}\"\npart = \"{}\"\nparent = \"{under}\"\nport = {p}",
                    DRIVES[left % DRIVES.len()].0
                );
                left -= 1;
            }
        }
        if left > 0 {
            let _ = writeln!(extras, "[[node]]\nid = \"spare\"\npart = \"asm1166\"\nparent = \"host\"");
            for p in 0..left.min(6) {
                let _ = writeln!(
                    extras,
                    "[[drive]]\nid = \"spare{p}\"\npart = \"{}\"\nparent = \"spare\"\nport = {p}",
                    DRIVES[p % DRIVES.len()].0
                );
            }
        }
        s + &extras
    }

    fn topology(&self, extra: usize) -> Topology {
        let text = self.toml(extra);
        Topology::parse("prop.toml", &text, catalog()).unwrap_or_else(|e| panic!("{e}\n--- topology ---\n{text}"))
    }

    /// The workload on the case's own drives, named (so idle drives can be added).
    fn workload(&self) -> Workload {
        WorkloadSpec {
            rw: Some(self.rw.into()),
            bs: Some(self.bs.into()),
            iodepth: Some(self.iodepth),
            rwmixread: Some(self.rwmixread),
            runtime: Some(format!("{}ms", self.runtime_ms)),
            drives: Some(self.drive_ids()),
            seed: Some(self.seed),
            ..Default::default()
        }
        .resolve()
        .unwrap_or_else(|e| panic!("{e:?}"))
    }
}

impl Case {
    /// The workload measured in steady state. HDDs start with transients that the bound does
    /// not describe and that a 10% warm-up does not cover: a sequential writer fills the
    /// write-back cache at link speed, and a deep queue of writes moves its data across the
    /// link long before the actuator completes it. A 2 s warm-up lets both settle; the
    /// measured window stays 0.1-0.3 s.
    fn steady_workload(&self) -> Workload {
        let mut w = self.workload();
        if self.any_hdd() {
            w.ramp = Some(iopath_model::units::SimDuration::from_secs_f64(2.0));
        }
        w
    }
}

/// The longest warm-up [s] a case may need for its HDD caches to fill; a case that needs
/// more is skipped (its cache fills at under (cache / this) bytes per second, so the
/// transient is also small).
const MAX_SETTLE_S: f64 = 60.0;

impl Case {
    /// Whether an HDD of the case takes writes (its write-back cache can be filling).
    fn hdd_writer(&self) -> bool {
        self.any_hdd() && !matches!(self.rw, "read" | "randread")
    }

    /// The case's steady workload on `t`, with a warm-up long enough for every HDD's
    /// write-back cache to be full, derived from the cache figure: a run after the 2 s warm-up
    /// shows how fast the caches still fill. An HDD that writes faster than its media drains
    /// (outer zone rate x write efficiency: the region starts there) fills its cache at
    /// (rate - drain); and a total above the bound is data going into caches faster than the
    /// media drain them (reads of a mix take media time too), at (total - bound). The rest of
    /// the caches is full within cache / fill rate. `None` when that is over [`MAX_SETTLE_S`].
    fn settled_workload(&self, t: &Topology) -> Option<Workload> {
        let mut w = self.steady_workload();
        if !self.hdd_writer() {
            return Some(w);
        }
        let r = run(t, &w);
        let (mut fill_s, mut caches) = (0.0f64, 0.0);
        for (id, hdd) in
            self.ctls.iter().enumerate().flat_map(|(c, ctl)| {
                ctl.drives.iter().enumerate().map(move |(k, &d)| (format!("c{c}d{k}"), DRIVES[d].1))
            })
        {
            if !hdd {
                continue;
            }
            let g = iopath_sim::hdd::HddGeometry::from_drive(t.drive_figures(t.node(&id).expect("case drive")));
            let drain = g.rate_at(0.0) * g.write_eff;
            let rate = r.drive(&id).expect("case drive").write_mb_s * 1e6;
            if rate > drain * 1.001 {
                fill_s = fill_s.max(g.cache_bytes / (rate - drain));
            }
            caches += g.cache_bytes;
        }
        let over = (r.total.mb_s - case_bound(self, t, &w, &r) * (1.0 + mix_noise(self, &r)) - 1.0) * 1e6;
        if over > 0.0 {
            fill_s = fill_s.max(caches / over);
        }
        let ramp = 2.0 + fill_s * 1.2;
        (ramp <= MAX_SETTLE_S).then(|| {
            w.ramp = Some(iopath_model::units::SimDuration::from_secs_f64(ramp));
            w
        })
    }
}

/// Allowed excess over the bound: 0.5% for rounding, and for a mix the sampling noise of its
/// realised read/write split in a short window, 3/sqrt(I/Os) (the bound takes one split for
/// every drive; a drive with a few hundred I/Os realises its own).
fn mix_noise(case: &Case, r: &Report) -> f64 {
    let noise =
        if matches!(case.rw, "rw" | "randrw") { 3.0 / (r.total.iops * r.cost.sim_s).max(1.0).sqrt() } else { 0.0 };
    0.005 + noise
}

/// The closed-form bound of a case's workload; for a mix, at the split the run realised (a
/// short window of a 95/5 mix may hold only reads, and reads are cheaper than writes on these
/// links).
fn case_bound(case: &Case, t: &Topology, w: &Workload, r: &Report) -> f64 {
    if matches!(case.rw, "rw" | "randrw") && r.total.mb_s > 0.0 {
        let g = iopath_model::paths::ResourceGraph::new(t);
        let drives = iopath_sim::target_drives(t, w).unwrap();
        let share = r.total.read_mb_s / r.total.mb_s;
        iopath_model::bound::bound_with_share(
            t,
            &g,
            &drives,
            iopath_model::bound::Mix::Mixed,
            share,
            w.bs.get(),
            w.rw.is_random(),
        )
        .total_mb_s
    } else {
        workload_bound(t, w).expect("a bound for the case's drives")
    }
}

/// Cases with an HDD that writes, sequentially in half of them (the writes its write-back
/// cache takes).
fn hdd_writer_strategy() -> impl Strategy<Value = Case> {
    (case_strategy().prop_filter("an HDD", Case::any_hdd), 0usize..4).prop_map(|(mut c, rw)| {
        c.rw = ["write", "write", "rw", "randwrite"][rw];
        c
    })
}

fn ctl_strategy() -> impl Strategy<Value = Ctl> {
    (0..CONTROLLERS.len(), 0..LINKS.len(), any::<bool>(), 1usize..=4, prop::collection::vec(0..DRIVES.len(), 6))
        .prop_map(|(part, link, pm, n, drives)| {
            let (name, ports, pcie) = CONTROLLERS[part];
            let pm = pm && name == "marvell-88se9172";
            let cap = if pm { 5 } else { ports };
            Ctl { part, link: if pcie { LINKS[link] } else { None }, pm, drives: drives[..n.min(cap)].to_vec() }
        })
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(ctl_strategy(), 1..=2),
        0..RWS.len(),
        0..BSS.len(),
        1u32..=32,
        0u32..=100,
        100u32..=300,
        any::<u64>(),
    )
        .prop_map(|(mut ctls, rw, bs, iodepth, rwmixread, runtime_ms, seed)| {
            // At most six drives in all.
            let mut room = 6usize;
            for c in &mut ctls {
                c.drives.truncate(room.max(1));
                room = room.saturating_sub(c.drives.len());
            }
            ctls.retain(|c| !c.drives.is_empty());
            Case { ctls, rw: RWS[rw], bs: BSS[bs], iodepth, rwmixread, runtime_ms, seed }
        })
        .prop_filter("six drives at most", |c| c.drive_ids().len() <= 6)
}

fn run(t: &Topology, w: &Workload) -> Report {
    simulate(t, w, &SimOptions::default()).expect("the case's workload runs")
}

/// Allowed relative loss when more hardware is added: 0.5% for SSDs; for HDDs 1% plus the
/// counting noise of random positioning, 3/sqrt(I/Os) (a 0.1 s window of 1m random reads on
/// one HDD holds about ten I/Os, so one I/O more or less is 10%).
/// Allowed relative shortfall: sampling noise of the I/Os in the window where the run is
/// stochastic (HDD mechanics; the read/write draws of a mixed workload, whose realised split
/// in a short window moves with event timing), rounding otherwise.
fn slack(case: &Case, r: &Report) -> f64 {
    let noise = 3.0 / (r.total.iops * r.cost.sim_s).max(1.0).sqrt();
    if case.any_hdd() {
        0.01 + noise
    } else if matches!(case.rw, "rw" | "randrw") {
        0.005 + noise
    } else {
        0.005
    }
}

fn close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + abs
}

proptest! {
    // 40 cases each (PROPTEST_CASES=N for a longer hunt); no regression files: a failure
    // prints its minimal case, to be kept as a named test. The cases come from a fixed seed,
    // so CI runs the same cases every time and a red run is never chance; a hunt picks
    // another with PROPTEST_RNG_SEED=N.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(40),
        rng_seed: proptest::test_runner::RngSeed::Fixed(
            std::env::var("PROPTEST_RNG_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(20_261_201),
        ),
        max_shrink_iters: 200,
        max_global_rejects: 100_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Utilizations are fractions; bytes add up; the bound is never beaten.
    #[test]
    fn utilization_conservation_and_bound(case in case_strategy()) {
        let t = case.topology(0);
        let w = case.steady_workload();
        let r = run(&t, &w);

        // Utilizations in [0, 1].
        for l in &r.links {
            prop_assert!((0.0..=1.0).contains(&l.util_up), "{}: util_up {}", l.id, l.util_up);
            prop_assert!((0.0..=1.0).contains(&l.util_down), "{}: util_down {}", l.id, l.util_down);
        }
        prop_assert!((0.0..=1.0).contains(&r.bottleneck.util), "bottleneck {:?}", r.bottleneck);

        // Conservation, against a count the rates are not computed from: the bytes each drive's
        // link moved in the window (its rates) are those of the I/Os that completed there
        // (completions x block size), give or take the I/Os in flight at the window's two
        // edges; over all drives, the total rate against every completed I/O of the run.
        let window = r.cost.sim_s;
        prop_assert!(window > 0.0);
        let bs = w.bs.get() as f64;
        let edge = (2.0 * f64::from(w.iodepth) + 1.0) * bs;
        for d in &r.drives {
            let moved = (d.read_mb_s + d.write_mb_s) * 1e6 * window;
            let done = d.ios as f64 * bs;
            prop_assert!((moved - done).abs() <= edge + 1.0,
                "{}: {} MB/s moved {} bytes in {} s, but {} I/Os of {} bytes completed", d.id,
                d.read_mb_s + d.write_mb_s, moved, window, d.ios, bs);
        }
        let moved = r.total.mb_s * 1e6 * window;
        let done = r.cost.ios as f64 * bs;
        prop_assert!((moved - done).abs() <= r.drives.len() as f64 * edge + 1.0,
            "total: {} MB/s over {} s is {} bytes, but {} I/Os of {} bytes completed", r.total.mb_s, window, moved, r.cost.ios, bs);
        prop_assert_eq!(r.drives.len(), case.drive_ids().len());

        // The closed-form bound holds (0.5% + 1 MB/s for rounding).
        let b = case_bound(&case, &t, &w, &r);
        // Not here for HDD writers: a sequential writer fills a 128-256 MB write-back cache
        // faster than the media drains it, which can outlast the 2 s warm-up (3 HDDs on an
        // asm1166 via pcie3x1, write 4k iodepth 2: 675 MB/s against a media bound of 550 after
        // 2 s); `hdd_writers_once_their_caches_are_full` checks them after the cache fills.
        if !case.hdd_writer() {
            prop_assert!(r.total.mb_s <= b * 1.005 + 1.0, "simulated {} MB/s > bound {b} MB/s", r.total.mb_s);
        }
    }

    /// More lanes or a newer PCIe generation on a controller's uplink never lowers the total.
    #[test]
    fn a_faster_uplink_never_slows_a_run(case in case_strategy(), which in 0usize..2, gen_not_lanes in any::<bool>()) {
        let c = which % case.ctls.len();
        prop_assume!(CONTROLLERS[case.ctls[c].part].2 && case.ctls[c].link.is_none());
        let t = case.topology(0);
        let w = case.steady_workload();
        let ix = t.node(&format!("c{c}")).unwrap();
        let link = t.nodes[ix].link;
        let o = if gen_not_lanes {
            prop_assume!(link.generation < 3);
            format!("c{c}.uplink=pcie{}", link.generation + 1)
        } else {
            format!("c{c}.lanes={}", link.lanes * 2)
        };
        let o: ParamOverride = o.parse().unwrap();
        let t2 = t.with_overrides(std::slice::from_ref(&o)).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let l2 = &t2.nodes[ix].link;
        prop_assert!(l2.generation > link.generation || l2.lanes > link.lanes, "{o:?} changed nothing: {link:?}");
        let (ra, rb) = (run(&t, &w), run(&t2, &w));
        let (a, b) = (ra.total.mb_s, rb.total.mb_s);
        // A sequential HDD writer may still be filling its write-back cache after the warm-up:
        // the slower variant then reports link speed while the faster one has reached media
        // speed (2 seagate-es3-3tb on a marvell-88se9172, write 4k iodepth 2: lanes 1 -> 2
        // gives 428 -> 338 MB/s). A transient, reported; compared in
        // `hdd_writers_once_their_caches_are_full` after the caches fill.
        prop_assume!(!(case.any_hdd() && case.rw == "write"));
        prop_assert!(b >= a * (1.0 - slack(&case, &ra)), "{o:?}: {a} MB/s -> {b} MB/s");
    }

    /// A faster drive (flash: its read rate; HDD: its media) never lowers the total.
    #[test]
    fn a_faster_drive_never_slows_a_run(case in case_strategy(), which in 0usize..6) {
        let ids = case.drive_ids();
        let id = &ids[which % ids.len()];
        let t = case.topology(0);
        let w = case.steady_workload();
        let ix = t.node(id).unwrap();
        // Faster: a flash drive's datasheet read rate, an HDD's zones' outer and inner rates
        // (its media rate), x 1.5.
        let d = t.drive_figures(ix);
        let faster: &[(&str, f64)] = if d.is_hdd() {
            &[("outer_mb_s", d.outer_mb_s), ("inner_mb_s", d.inner_mb_s)]
        } else {
            &[("seq_read_mb_s", d.seq_read_mb_s)]
        };
        let o: Vec<ParamOverride> =
            faster.iter().map(|(f, v)| format!("{id}.{f}={}", (v * 1.5).round()).parse().unwrap()).collect();
        let t2 = t.with_overrides(&o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let (ra, rb) = (run(&t, &w), run(&t2, &w));
        let (a, b) = (ra.total.mb_s, rb.total.mb_s);
        // A sequential HDD writer may still be filling its write-back cache after the warm-up:
        // the slower variant then reports link speed while the faster one has reached media
        // speed (2 seagate-es3-3tb on a marvell-88se9172, write 4k iodepth 2: lanes 1 -> 2
        // gives 428 -> 338 MB/s). `a_faster_hdd_never_slows_a_writer` compares those once
        // the caches are full.
        prop_assume!(!(case.any_hdd() && case.rw == "write"));
        prop_assert!(b >= a * (1.0 - slack(&case, &ra)), "{o:?}: {a} MB/s -> {b} MB/s");
    }

    /// Drives that the workload does not target leave the targeted drives' results alone.
    #[test]
    fn idle_drives_change_nothing(case in case_strategy(), extra in 1usize..=4) {
        let w = case.workload();
        let a = run(&case.topology(0), &w);
        let b = run(&case.topology(extra), &w);
        prop_assert_eq!(a.drives.len(), b.drives.len());
        for (x, y) in a.drives.iter().zip(&b.drives) {
            prop_assert_eq!(&x.id, &y.id);
            for (what, p, q) in [
                ("read_mb_s", x.read_mb_s, y.read_mb_s),
                ("write_mb_s", x.write_mb_s, y.write_mb_s),
                ("iops", x.iops, y.iops),
                ("lat mean", x.lat_us.mean, y.lat_us.mean),
                ("lat p99", x.lat_us.p99, y.lat_us.p99),
            ] {
                prop_assert!(close(p, q, 1e-9, 0.0), "{}: {} {} without idle drives, {} with {}", x.id, what, p, q, extra);
            }
            prop_assert_eq!(x.ios, y.ios, "{}: ios", &x.id);
        }
    }
}

proptest! {
    // Few cases (each simulates seconds of HDD writes, twice per variant); fixed seed as above.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(8),
        rng_seed: proptest::test_runner::RngSeed::Fixed(
            std::env::var("PROPTEST_RNG_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(20_261_201),
        ),
        max_shrink_iters: 50,
        max_global_rejects: 100_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// HDD writers, which the properties above skip while their write-back caches fill:
    /// measured once every cache is full (a warm-up derived from the cache figure), the bound
    /// holds and a faster uplink never slows them.
    #[test]
    fn hdd_writers_once_their_caches_are_full(
        case in hdd_writer_strategy(),
        which in 0usize..2,
        gen_not_lanes in any::<bool>(),
    ) {
        let t = case.topology(0);
        let w = case.settled_workload(&t);
        prop_assume!(w.is_some(), "cache fills too slowly to settle within MAX_SETTLE_S");
        let w = w.unwrap();
        let r = run(&t, &w);
        let b = case_bound(&case, &t, &w, &r);
        prop_assert!(r.total.mb_s <= b * (1.0 + mix_noise(&case, &r)) + 1.0,
            "simulated {} MB/s > bound {b} MB/s after a {:?} warm-up", r.total.mb_s, w.ramp);

        let c = which % case.ctls.len();
        if !(CONTROLLERS[case.ctls[c].part].2 && case.ctls[c].link.is_none()) {
            return Ok(());
        }
        let ix = t.node(&format!("c{c}")).unwrap();
        let link = t.nodes[ix].link;
        let o = if gen_not_lanes && link.generation < 3 {
            format!("c{c}.uplink=pcie{}", link.generation + 1)
        } else {
            format!("c{c}.lanes={}", link.lanes * 2)
        };
        let o: ParamOverride = o.parse().unwrap();
        let t2 = t.with_overrides(std::slice::from_ref(&o)).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let w2 = case.settled_workload(&t2);
        prop_assume!(w2.is_some(), "cache fills too slowly to settle within MAX_SETTLE_S");
        // Both variants after the longer of the two warm-ups.
        let mut w = w;
        w.ramp = w.ramp.max(w2.unwrap().ramp);
        let (ra, rb) = (run(&t, &w), run(&t2, &w));
        let (a, b) = (ra.total.mb_s, rb.total.mb_s);
        prop_assert!(b >= a * (1.0 - slack(&case, &ra)), "{o:?}: {a} MB/s -> {b} MB/s after a {:?} warm-up", w.ramp);
    }

    /// A faster HDD (its zones' outer and inner rates x 1.5) never slows an HDD writer, once
    /// every cache is full: the HDD half of `a_faster_drive_never_slows_a_run`, which compares
    /// flash drives only (an HDD's media rate is its zones', and its cache's transient is
    /// waited out here).
    #[test]
    fn a_faster_hdd_never_slows_a_writer(case in hdd_writer_strategy(), which in 0usize..6) {
        let hdds: Vec<String> = case
            .ctls
            .iter()
            .enumerate()
            .flat_map(|(c, ctl)| ctl.drives.iter().enumerate().filter(|(_, d)| DRIVES[**d].1).map(move |(k, _)| format!("c{c}d{k}")))
            .collect();
        let id = &hdds[which % hdds.len()];
        let t = case.topology(0);
        let d = t.drive_figures(t.node(id).unwrap());
        let o: Vec<ParamOverride> = [("outer_mb_s", d.outer_mb_s), ("inner_mb_s", d.inner_mb_s)]
            .map(|(f, v)| format!("{id}.{f}={}", (v * 1.5).round()).parse().unwrap())
            .to_vec();
        let t2 = t.with_overrides(&o).unwrap_or_else(|e| panic!("{o:?}: {e}"));
        let (w, w2) = (case.settled_workload(&t), case.settled_workload(&t2));
        prop_assume!(w.is_some() && w2.is_some(), "cache fills too slowly to settle within MAX_SETTLE_S");
        let mut w = w.unwrap();
        w.ramp = w.ramp.max(w2.unwrap().ramp);
        let (ra, rb) = (run(&t, &w), run(&t2, &w));
        let (a, b) = (ra.total.mb_s, rb.total.mb_s);
        prop_assert!(b >= a * (1.0 - slack(&case, &ra)), "{o:?}: {a} MB/s -> {b} MB/s after a {:?} warm-up", w.ramp);
    }
}

/// The transient `hdd_writers_once_their_caches_are_full` waits out, in the case that showed
/// it: 2 seagate-es3-3tb on a marvell-88se9172, write 4k iodepth 2. After the usual 2 s
/// warm-up the x1 uplink still reports the caches filling at link speed (428 MB/s) while x2
/// has reached media speed (338): a faster uplink "slows" the run. After the warm-up derived
/// from the cache figure, both report the media's rate, within the bound.
#[test]
fn a_filling_hdd_cache_is_waited_out_before_comparing() {
    let case = Case {
        ctls: vec![Ctl { part: 4, link: None, pm: false, drives: vec![5, 5] }],
        rw: "write",
        bs: "4k",
        iodepth: 2,
        rwmixread: 50,
        runtime_ms: 200,
        seed: 1,
    };
    assert_eq!((CONTROLLERS[4].0, DRIVES[5].0), ("marvell-88se9172", "seagate-es3-3tb"));
    let t = case.topology(0);
    let o: ParamOverride = "c0.lanes=2".parse().unwrap();
    let t2 = t.with_overrides(std::slice::from_ref(&o)).unwrap();
    let early = case.steady_workload();
    let (a, b) = (run(&t, &early).total.mb_s, run(&t2, &early).total.mb_s);
    assert!(a > b * 1.1, "the transient: x1 {a} MB/s, x2 {b} MB/s after 2 s");
    let w = case.settled_workload(&t).expect("settles");
    assert!(w.ramp > early.ramp, "{:?}", w.ramp);
    let (ra, rb) = (run(&t, &w), run(&t2, &w));
    let (a, b) = (ra.total.mb_s, rb.total.mb_s);
    assert!(b >= a * (1.0 - slack(&case, &ra)), "x1 {a} MB/s -> x2 {b} MB/s after {:?}", w.ramp);
    let bound = case_bound(&case, &t, &w, &ra);
    assert!(a <= bound * 1.005 + 1.0, "x1 {a} MB/s > bound {bound}");
}
