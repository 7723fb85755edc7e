//! Latency counts in hdrhistogram's bucket layout, recorded with one add per I/O.
//!
//! Every completion records its latency, and in a run of 1,024 drives the drive's histogram
//! is a cache miss away: `Histogram::saturating_record` is a call that also updates the
//! histogram's minimum, maximum and total (three more fields, often another cache line).
//! [`LatCounts`] keeps only the counts array, indexed exactly as the report's histogram
//! (`Histogram::<u32>::new_with_bounds(1, 36e9, 2)`) indexes it. Everything the report
//! reads of a histogram (percentiles, max, the recorded buckets, the sum over drives) depends
//! on the counts alone: max and min are reported as the highest and lowest value equivalent
//! to their bucket, so the report's summary is read from the counts directly
//! ([`LatCounts::summary`]). The tests below check the layout against hdrhistogram index by
//! index and value by value, and the summary against `latency::summarize` of the histogram.

#[cfg(test)]
use hdrhistogram::Histogram;
use iopath_model::latency::{Latency, PERCENTILES, Percentile};

/// The histograms' bounds [100 ns units] and precision: 100 ns to 1 h, 2 significant digits.
#[cfg(test)]
const LOW: u64 = 1;
const HIGH: u64 = 36_000_000_000;
#[cfg(test)]
const SIGFIG: u8 = 2;

/// hdrhistogram's layout for those bounds: `2 x 10^2` values at unit resolution need
/// `2^8` sub-buckets (half of them, 2^7, used past the first bucket), unit magnitude 0.
const SUB_HALF_MAGNITUDE: u32 = 7;
const SUB_HALF: u64 = 1 << SUB_HALF_MAGNITUDE;
const SUB_MASK: u64 = (1 << (SUB_HALF_MAGNITUDE + 1)) - 1;
/// 64 minus the unit magnitude (0) minus the sub-bucket count's magnitude (8).
const LZ_BASE: u32 = 56;

#[cfg(test)]
pub(super) fn new_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(LOW, HIGH, SIGFIG).expect("valid histogram bounds")
}

/// The counts index of `v` (hdrhistogram's `index_for`).
#[inline(always)]
const fn index(v: u64) -> usize {
    let bucket = LZ_BASE - (v | SUB_MASK).leading_zeros();
    let sub = v >> bucket;
    (((bucket as u64 + 1) << SUB_HALF_MAGNITUDE) + sub - SUB_HALF) as usize
}

/// Where a value past the counts goes: `saturating_record` clamps it to the highest
/// trackable value.
const TOP: usize = index(HIGH);
const _: () = assert!(TOP < LAYOUT_LEN);

/// The lowest value of counts index `i` (hdrhistogram's `value_for`).
fn value(i: usize) -> u64 {
    let i = i as u64;
    let b = (i >> SUB_HALF_MAGNITUDE) as i64 - 1;
    let sub = (i & (SUB_HALF - 1)) + SUB_HALF;
    if b < 0 { sub - SUB_HALF } else { sub << b }
}

/// The highest value of counts index `i` (hdrhistogram's `highest_equivalent` of its
/// values): the indices cover the values without gaps, so it is one below the next's lowest.
fn highest(i: usize) -> u64 {
    value(i + 1) - 1
}

/// Counts in the layout (hdrhistogram's `distinct_values` for the bounds; a test checks
/// it): indices past `TOP` up to here are the rest of the last bucket, recorded as they are.
const LAYOUT_LEN: usize = 3840;

/// Indices a window grows by at least, past what a record needs: a drive's latencies move
/// over a few hundred indices, so a window grows a few times and then stays.
const GROW: usize = 64;

/// Counts of the indices `base..base + counts.len()` of the layout, grown on demand: a
/// drive's latencies fill a few hundred of the 3,840 counts, so a window of them is all
/// a drive holds (1,024 drives held 15 MB of zeroed counts as full arrays, and zeroing them
/// was a sixtieth of a 1 s run of that chassis).
#[derive(Clone)]
pub(super) struct LatCounts {
    counts: Vec<u32>,
    base: usize,
    /// The lowest and highest index counted (`lo > hi`: none): only those are read back.
    lo: usize,
    hi: usize,
}

impl LatCounts {
    pub(super) fn new() -> LatCounts {
        LatCounts { counts: Vec::new(), base: 0, lo: usize::MAX, hi: 0 }
    }

    /// One latency [100 ns units], as `Histogram::saturating_record` records it.
    #[inline]
    pub(super) fn record(&mut self, v: u64) {
        let i = index(v);
        // An index past the layout is never in the window: `outside` clamps it.
        match self.counts.get_mut(i.wrapping_sub(self.base)) {
            Some(c) => {
                *c = c.saturating_add(1);
                self.lo = self.lo.min(i);
                self.hi = self.hi.max(i);
            }
            None => self.outside(i),
        }
    }

    /// `record` of an index outside the window.
    #[cold]
    #[inline(never)]
    fn outside(&mut self, i: usize) {
        let i = if i < LAYOUT_LEN { i } else { TOP };
        self.grow_to(i, 1);
        self.lo = self.lo.min(i);
        self.hi = self.hi.max(i);
    }

    /// Widens the window to hold index `i` (with `GROW` to spare, within the layout) and
    /// adds `n` there.
    fn grow_to(&mut self, i: usize, n: u32) {
        // The side `i` is past (both for an empty window) moves to `i` and `GROW` beyond.
        let (empty, end) = (self.counts.is_empty(), self.base + self.counts.len());
        let lo = if empty || i < self.base { i.saturating_sub(GROW) } else { self.base };
        let hi = if empty || i >= end { (i + 1 + GROW).min(LAYOUT_LEN) } else { end };
        let mut counts = vec![0u32; hi - lo];
        counts[self.base.max(lo) - lo..][..self.counts.len()].copy_from_slice(&self.counts);
        self.counts = counts;
        self.base = lo;
        self.counts[i - lo] = self.counts[i - lo].saturating_add(n);
    }

    /// The count at layout index `i` (0 outside the window).
    #[inline]
    fn at(&self, i: usize) -> u32 {
        self.counts.get(i.wrapping_sub(self.base)).copied().unwrap_or(0)
    }

    /// The indices that may hold counts.
    fn span(&self) -> std::ops::Range<usize> {
        if self.lo > self.hi { 0..0 } else { self.lo..self.hi + 1 }
    }

    /// Adds `o`'s counts (`Histogram::add`).
    pub(super) fn add(&mut self, o: &LatCounts) {
        let span = o.span();
        if span.is_empty() {
            return;
        }
        // Both ends of `o`'s span in the window first, then one pass over the span.
        for i in [span.start, span.end - 1] {
            if i.wrapping_sub(self.base) >= self.counts.len() {
                self.grow_to(i, 0);
            }
        }
        let off = self.base;
        for (a, i) in self.counts[span.start - off..span.end - off].iter_mut().zip(span.clone()) {
            *a = a.saturating_add(o.at(i));
        }
        self.lo = self.lo.min(span.start);
        self.hi = self.hi.max(span.end - 1);
    }

    /// `latency::summarize` of [`LatCounts::histogram`], exactly (the tests check it), read
    /// from the counted span in one pass without building the histogram: a report of the
    /// 1,024-drive chassis makes 1,025 summaries, and a histogram is ~3,700 counts to
    /// allocate and zero, and several passes over them, for a few hundred counted.
    pub(super) fn summary(&self, unit_ns: u64, mean_us: f64) -> Latency {
        let span = self.span();
        let total: u64 = span.clone().map(|i| u64::from(self.at(i))).sum();
        if total == 0 {
            return Latency::default();
        }
        let us = |v: u64| (v * unit_ns) as f64 / 1e3;
        // `value_at_quantile`: the first index whose running count reaches the quantile's
        // count (at least 1); its lowest value at quantile 0, its highest otherwise.
        let mut qs: Vec<f64> = Vec::with_capacity(PERCENTILES.len() + 2);
        qs.extend([0.5, 0.99]);
        qs.extend(PERCENTILES.iter().map(|p| p / 100.0));
        // Each quantile's count, computed once: the sort compares them, and the walk below
        // tests one at every counted index (`ceil` is a libm call on the default target).
        let targets: Vec<u64> = qs.iter().map(|&q| ((q.min(1.0) * total as f64).ceil() as u64).max(1)).collect();
        let mut order: Vec<usize> = (0..qs.len()).collect();
        order.sort_by_key(|&j| targets[j]);
        let mut at = vec![0u64; qs.len()];
        let mut l = Latency { mean: mean_us, ..Latency::default() };
        let (mut run, mut next, mut last) = (0u64, 0usize, span.start);
        for i in span {
            let c = u64::from(self.at(i));
            if c == 0 {
                continue;
            }
            run += c;
            last = i;
            while next < order.len() && targets[order[next]] <= run {
                let j = order[next];
                at[j] = if qs[j] == 0.0 { value(i) } else { highest(i) };
                next += 1;
            }
            // `iter_recorded`: each counted index at its highest value.
            l.count(highest(i) * unit_ns, c);
        }
        l.p50 = us(at[0]);
        l.p99 = us(at[1]);
        // `max`: the highest value equivalent to the largest recorded, the last counted index's.
        l.max = us(highest(last));
        l.percentiles = PERCENTILES.iter().zip(&at[2..]).map(|(&pct, &v)| Percentile { pct, us: us(v) }).collect();
        l
    }

    /// The histogram these counts are: the reference the tests hold `summary` to.
    #[cfg(test)]
    pub(super) fn histogram(&self) -> Histogram<u32> {
        let mut h = new_histogram();
        for i in self.span() {
            let c = self.at(i);
            if c > 0 {
                h.record_n(value(i), c).expect("a value of the layout is in range");
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn every_index_is_hdrhistograms() {
        let h = new_histogram();
        assert_eq!(h.distinct_values(), LAYOUT_LEN);
        // `iter_all` visits hdrhistogram's counts in index order.
        let mut n = 0;
        for (i, b) in h.iter_all().enumerate() {
            let v = value(i);
            assert_eq!(index(v), i, "value {v}");
            assert_eq!(h.lowest_equivalent(v), v, "index {i}");
            assert_eq!(b.value_iterated_to(), h.highest_equivalent(v), "index {i}");
            n += 1;
        }
        assert_eq!(n, h.distinct_values());
    }

    #[test]
    fn recorded_counts_are_hdrhistograms_saturating_record() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for round in 0..20 {
            let (mut h, mut c) = (new_histogram(), LatCounts::new());
            for _ in 0..5_000 {
                // Every magnitude, the edges of the range, and past it (clamped).
                let v = match rng.random_range(0..10) {
                    0 => rng.random_range(1..300),
                    1 => HIGH + rng.random_range(0..1u64 << 40),
                    2 => HIGH - rng.random_range(0..1_000),
                    _ => 1u64 << rng.random_range(0..35) | rng.random_range(0..1u64 << 20),
                };
                let v = v.max(1);
                h.saturating_record(v);
                c.record(v);
            }
            let g = c.histogram();
            let all = |x: &Histogram<u32>| x.iter_all().map(|b| b.count_at_value()).collect::<Vec<_>>();
            assert_eq!(all(&g), all(&h), "round {round}");
            assert_eq!((g.len(), g.max(), g.min()), (h.len(), h.max(), h.min()), "round {round}");
            let s = |x: &Histogram<u32>| crate::latency::summarize(x, 100, 1.0);
            assert_eq!(s(&g), s(&h), "round {round}");
            assert_eq!(c.summary(100, 1.0), s(&h), "round {round}: the one-pass summary");
        }
    }

    /// The window grows down and up from its first index and keeps every count; a drive's
    /// latencies over two decades hold a small part of the layout.
    #[test]
    fn the_window_grows_both_ways_and_keeps_its_counts() {
        let (mut h, mut c) = (new_histogram(), LatCounts::new());
        for v in [50_000u64, 49_000, 3, 51_000, 2_000_000, 1, 50_000, HIGH + 5, 2] {
            h.saturating_record(v);
            c.record(v);
            assert_eq!(c.histogram().len(), h.len(), "after {v}");
        }
        let all = |x: &Histogram<u32>| x.iter_all().map(|b| b.count_at_value()).collect::<Vec<_>>();
        assert_eq!(all(&c.histogram()), all(&h));
        let mut d = LatCounts::new();
        for v in (0..10_000u64).map(|k| 1_000 + k * 10) {
            d.record(v);
        }
        assert!(d.counts.len() < LAYOUT_LEN / 4, "{} counts held for 1,000-101,000", d.counts.len());
    }

    #[test]
    fn sums_are_hdrhistograms_add() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (mut all_h, mut all_c) = (new_histogram(), LatCounts::new());
        all_c.add(&LatCounts::new());
        assert!(all_c.histogram().is_empty() && all_c.span().is_empty());
        for _ in 0..8 {
            let (mut h, mut c) = (new_histogram(), LatCounts::new());
            for _ in 0..rng.random_range(0..2_000) {
                let v = rng.random_range(1..100_000_000u64);
                h.saturating_record(v);
                c.record(v);
            }
            all_h.add(&h).unwrap();
            all_c.add(&c);
        }
        let g = all_c.histogram();
        assert_eq!((g.len(), g.max(), g.min()), (all_h.len(), all_h.max(), all_h.min()));
        assert_eq!(crate::latency::summarize(&g, 100, 1.0), crate::latency::summarize(&all_h, 100, 1.0));
        assert_eq!(all_c.summary(100, 1.0), crate::latency::summarize(&all_h, 100, 1.0));
        assert_eq!(LatCounts::new().summary(100, 1.0), Latency::default());
    }

    /// Every index's highest value is hdrhistogram's, and the one-pass summary is
    /// `summarize` of the histogram for counts that are few, one value only, all in one
    /// index, at the first and at the last index.
    #[test]
    fn the_one_pass_summary_is_summarize() {
        let h = new_histogram();
        for (i, b) in h.iter_all().enumerate() {
            assert_eq!(highest(i), b.value_iterated_to(), "index {i}");
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for round in 0..300 {
            let (mut h, mut c) = (new_histogram(), LatCounts::new());
            let one = rng.random_range(1..5_000_000u64);
            for _ in 0..rng.random_range(1..50) {
                let v = match round % 4 {
                    0 => one,
                    1 => rng.random_range(1..200),
                    2 => HIGH + rng.random_range(0..10),
                    _ => {
                        let bits = rng.random_range(1..36);
                        rng.random_range(1..1u64 << bits)
                    }
                };
                h.saturating_record(v);
                c.record(v);
            }
            assert_eq!(c.summary(100, 2.5), crate::latency::summarize(&h, 100, 2.5), "round {round}");
        }
    }
}
