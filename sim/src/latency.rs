//! A latency histogram turned into a report's [`Latency`]: shared by the simulator and the
//! measure engine, which both record in hdrhistogram.

use hdrhistogram::{Counter, Histogram};
use iopath_model::latency::{Latency, PERCENTILES, Percentile};

/// The summary of histogram `h`, whose values count in units of `unit_ns` nanoseconds;
/// `mean_us` comes from the caller (the simulator sums exact latencies; the histogram's own
/// mean is within its precision). Percentiles and `max` are the highest value equivalent to
/// the histogram bucket they fall in, as hdrhistogram reports them; the bins put each
/// recorded value into fio's bucket of the same value. An empty histogram gives the empty
/// summary.
pub fn summarize<T: Counter>(h: &Histogram<T>, unit_ns: u64, mean_us: f64) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let us = |v: u64| (v * unit_ns) as f64 / 1e3;
    let mut l = Latency {
        mean: mean_us,
        p50: us(h.value_at_quantile(0.5)),
        p99: us(h.value_at_quantile(0.99)),
        max: us(h.max()),
        // One pass over the counts for the whole (sorted) list.
        percentiles: PERCENTILES
            .iter()
            .zip(h.value_at_quantiles(PERCENTILES.iter().map(|p| p / 100.0)))
            .map(|(&pct, v)| Percentile { pct, us: us(v) })
            .collect(),
        ..Latency::default()
    };
    for v in h.iter_recorded() {
        l.count(v.value_iterated_to() * unit_ns, v.count_at_value().as_u64());
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_of_known_latencies() {
        // 1,000 I/Os at 100 us and 10 at 10 ms, recorded in 100 ns units as the simulator does.
        let mut h = Histogram::<u32>::new_with_bounds(1, 36_000_000_000, 2).unwrap();
        h.record_n(1_000, 1_000).unwrap();
        h.record_n(100_000, 10).unwrap();
        let l = summarize(&h, 100, 198.0);
        assert_eq!(l.mean, 198.0);
        // 99% of 1,010 is 999.9 I/Os: still among the 1,000 fast ones; 99.5% (1,004.95) is not.
        let near = |a: f64, b: f64| (a - b).abs() <= b * 0.01;
        assert!(near(l.p99, 100.0) && near(l.at(99.0).unwrap(), 100.0), "{l:?}");
        assert!(near(l.at(99.5).unwrap(), 10_000.0) && near(l.max, 10_000.0), "{l:?}");
        assert_eq!(l.percentiles.len(), PERCENTILES.len());
        // Two fio buckets: 100 us falls in one, 10 ms in another; counts kept whole.
        assert_eq!(l.bins.values().copied().collect::<Vec<_>>(), vec![1_000, 10]);
        let (&fast, &slow) = (l.bins.keys().next().unwrap(), l.bins.keys().last().unwrap());
        // Each key is the middle of a fio bucket at most 1/64 wide around its value.
        assert!((fast as f64 - 100_000.0).abs() < 100_000.0 / 64.0, "{fast}");
        assert!((slow as f64 - 10_000_000.0).abs() < 10_000_000.0 / 64.0, "{slow}");
    }

    #[test]
    fn the_one_pass_list_is_hdrhistograms_value_at_quantile() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50 {
            let mut h = Histogram::<u32>::new_with_bounds(1, 36_000_000_000, 2).unwrap();
            for _ in 0..rng.random_range(1..2_000) {
                h.record(rng.random_range(1..1_000_000u64)).unwrap();
            }
            let l = summarize(&h, 100, 1.0);
            for p in &l.percentiles {
                assert_eq!(p.us, (h.value_at_quantile(p.pct / 100.0) * 100) as f64 / 1e3, "{}", p.pct);
            }
        }
    }

    #[test]
    fn empty_is_empty() {
        let h = Histogram::<u64>::new(2).unwrap();
        assert_eq!(summarize(&h, 1, 0.0), Latency::default());
    }
}
