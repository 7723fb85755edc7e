//! Criterion benchmarks of the simulator (issue #7): the engine's event loop on its own, one
//! simulated run of a small and of a very large topology, and a small sweep.
//!
//! ```text
//! engine/hold/{256,4096}   pop one event, schedule one: a queue of steady size (events/s)
//! simulate/asm1166-6ssd     6 SATA SSDs behind a PCIe 3.0 x2 HBA, 128k reads QD32, 1 s simulated
//! simulate/1024-hdd         1,024 HDDs behind four HBAs and 32 expanders, 128k reads QD32, 0.2 s
//! sweep/9300-24bay-active-1..6   six points in parallel (rayon), 1m reads QD8, 0.5 s each
//! ```
//!
//! Run with `cargo bench --bench sim`; `benches/speed.sh` prints the numbers the issue asks for
//! from the release binary. Benchmarks only measure: nothing here asserts a time.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iopath_model::units::SimTime;
use iopath_model::{Catalog, Topology, WorkloadSpec};
use iopath_sim::engine::Scheduler;
use iopath_sim::{Axis, SimOptions};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// A small deterministic generator (xorshift64*), so the bench needs no extra dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A delay [ns] spread over five decades, as in a storage run: from a 1 us hop latency
    /// to a 100 ms seek-and-queue wait, log-uniformly.
    fn delay_ns(&mut self) -> u64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (1_000.0 * 10f64.powf(5.0 * u)) as u64
    }
}

/// Size of the delay table (a power of two, so indexing it is a mask).
const TABLE: usize = 4096;

/// Delays [ns] for the hold model, drawn up front so the timed loop is the queue alone.
fn delays() -> Vec<u64> {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    (0..TABLE).map(|_| rng.delay_ns()).collect()
}

/// Events processed by the hold model: keep `pending` events queued; pop the earliest and
/// schedule a new one after a random delay, `events` times.
fn hold(pending: usize, events: u64, delays: &[u64]) -> u64 {
    assert_eq!(delays.len(), TABLE);
    let mut s: Scheduler<u32> = Scheduler::default();
    for (i, &d) in delays.iter().cycle().take(pending).enumerate() {
        s.at(SimTime::from_nanos(d), i as u32);
    }
    // An odd stride through the table, so consecutive steps do not replay the initial fill.
    let mut k = 0usize;
    for i in 0..events {
        // Only the payload's presence is used, so this holds whatever `pop` wraps it in.
        black_box(s.pop().expect("the queue never empties"));
        k = (k + 2_654_435_761) & (TABLE - 1);
        let t = s.now().nanos() + delays[k];
        s.at(SimTime::from_nanos(t), i as u32);
    }
    s.processed()
}

fn engine(c: &mut Criterion) {
    const EVENTS: u64 = 1_000_000;
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(EVENTS));
    let d = delays();
    for pending in [256usize, 4096] {
        g.bench_with_input(BenchmarkId::new("hold", pending), &pending, |b, &p| b.iter(|| hold(p, EVENTS, &d)));
    }
    g.finish();
}

fn load(file: &str) -> Topology {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(file);
    Topology::load(&path, &Catalog::builtin()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn spec(bs: &str, iodepth: u32, runtime: &str, active: Option<usize>) -> WorkloadSpec {
    WorkloadSpec {
        rw: Some("read".into()),
        bs: Some(bs.into()),
        iodepth: Some(iodepth),
        runtime: Some(runtime.into()),
        active,
        ..Default::default()
    }
}

fn simulate(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for (name, file, w) in [
        ("asm1166-6ssd", "asm1166-6ssd.toml", spec("128k", 32, "1s", Some(6))),
        ("1024-hdd", "1024-hdd-expanders.toml", spec("128k", 32, "0.2s", None)),
    ] {
        let t = load(file);
        let w = w.resolve().expect("a valid workload");
        // Throughput in simulated I/Os: criterion then prints I/Os per wall-second.
        let ios = iopath_sim::simulate(&t, &w, &SimOptions::default()).expect("runs").cost.ios;
        g.throughput(Throughput::Elements(ios));
        g.bench_function(name, |b| {
            b.iter(|| iopath_sim::simulate(black_box(&t), black_box(&w), &SimOptions::default()).expect("runs"))
        });
    }
    g.finish();
}

fn sweep(c: &mut Criterion) {
    let t = load("9300-8i-24bay-expander.toml");
    let base = spec("1m", 8, "0.5s", None);
    let axes = [Axis::parse("active", "1..6").expect("a valid axis")];
    let mut g = c.benchmark_group("sweep");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("9300-24bay-active-1..6", |b| {
        b.iter(|| {
            let s = iopath_sim::sweep(black_box(&t), &base, &axes, 1, &SimOptions::default(), &|| {});
            assert!(s.points.iter().all(|p| p.error.is_none()), "a sweep point failed");
            s
        })
    });
    g.finish();
}

criterion_group!(benches, engine, simulate, sweep);
criterion_main!(benches);
