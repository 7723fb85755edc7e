//! Latency summaries: mean, the fio percentile list and fio json+'s histogram bins.
//!
//! Simulated and measured runs record every I/O's latency in a histogram (hdrhistogram in
//! `sim` and in the measure engine); a [`Latency`] is what a report keeps of it:
//!
//! - `mean`, `p50`, `p99`, `max`: the summary every table and CSV shows;
//! - `percentiles`: the latency at each of fio's default `percentile_list` ([`PERCENTILES`]),
//!   the list `fio --output-format=json` writes under `clat_ns.percentile`;
//! - `bins`: the I/O count per bucket of fio's own latency histogram ([`fio_bucket`]), keyed
//!   by the bucket's value in nanoseconds, the form `fio --output-format=json+` writes under
//!   `clat_ns.bins`. Tools written for fio's json+ (fio's `fio_jsonplus_clat2csv`) read
//!   them, and bins of two runs add.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// fio's default `percentile_list` (fio HOWTO, `percentile_list`: "1:5:10:20:30:40:50:60:70:
/// 80:90:95:99:99.5:99.9:99.95:99.99").
pub const PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// Latency summary [us].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    #[serde(default)]
    pub max: f64,
    /// The latency at each of [`PERCENTILES`], in that order (empty when no I/O completed,
    /// and in reports written before the list existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<Percentile>,
    /// I/O counts per bucket of fio's latency histogram, keyed by the bucket's value [ns]
    /// ([`fio_bucket`]); only buckets that counted something.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bins: BTreeMap<u64, u64>,
}

/// One entry of the percentile list: `us` is the latency at or under which `pct` percent
/// of the I/Os completed.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Percentile {
    pub pct: f64,
    pub us: f64,
}

impl Latency {
    /// The latency at percentile `pct` from the list, if the list holds it.
    pub fn at(&self, pct: f64) -> Option<f64> {
        self.percentiles.iter().find(|p| p.pct == pct).map(|p| p.us)
    }

    /// Adds `count` I/Os of latency `ns` to the bins.
    pub fn count(&mut self, ns: u64, count: u64) {
        *self.bins.entry(fio_bucket_value(fio_bucket(ns))).or_insert(0) += count;
    }

    /// The latency [us] at or under which `pct` percent of the binned I/Os completed, read
    /// from the bins as fio's `calc_clat_percentiles` reads its histogram: the value of the
    /// first bucket whose running count reaches `pct`% of the total. `None` without bins.
    pub fn from_bins(&self, pct: f64) -> Option<f64> {
        let n: u64 = self.bins.values().sum();
        let want = pct / 100.0 * n as f64;
        let mut sum = 0u64;
        for (&ns, &c) in &self.bins {
            sum += c;
            if sum as f64 >= want {
                return Some(ns as f64 / 1e3);
            }
        }
        None
    }

    /// Merges `other`, a summary of `n_other` I/Os, into this summary of `n_self` I/Os (two
    /// directions of one job, or the jobs of one drive): the mean is weighted by the counts
    /// and `max` is the larger. When both have bins the bins add and every percentile is
    /// read from the merged bins, as fio reads a group's; without bins a percentile of the
    /// whole is not known, and the larger of the two is kept (at least that many I/Os were
    /// that slow in one of the parts).
    pub fn merge(&mut self, other: &Latency, n_self: u64, n_other: u64) {
        if n_other == 0 && other.bins.is_empty() {
            return;
        }
        if n_self == 0 && self.bins.is_empty() {
            *self = other.clone();
            return;
        }
        let n = (n_self + n_other).max(1) as f64;
        self.mean = (self.mean * n_self as f64 + other.mean * n_other as f64) / n;
        self.max = self.max.max(other.max);
        if !self.bins.is_empty() && !other.bins.is_empty() {
            for (&k, &c) in &other.bins {
                *self.bins.entry(k).or_insert(0) += c;
            }
            let at = |l: &Latency, pct: f64| l.from_bins(pct).unwrap_or(0.0);
            self.p50 = at(self, 50.0);
            self.p99 = at(self, 99.0);
            let pcts: Vec<f64> = self.percentiles.iter().chain(&other.percentiles).map(|p| p.pct).collect();
            let mut pcts = if pcts.is_empty() { PERCENTILES.to_vec() } else { pcts };
            pcts.sort_by(f64::total_cmp);
            pcts.dedup();
            self.percentiles = pcts.into_iter().map(|pct| Percentile { pct, us: at(self, pct) }).collect();
            return;
        }
        self.bins.clear();
        self.p50 = self.p50.max(other.p50);
        self.p99 = self.p99.max(other.p99);
        for p in &mut self.percentiles {
            if let Some(o) = other.at(p.pct) {
                p.us = p.us.max(o);
            }
        }
        for o in &other.percentiles {
            if self.at(o.pct).is_none() {
                self.percentiles.push(*o);
            }
        }
        self.percentiles.sort_by(|a, b| a.pct.total_cmp(&b.pct));
    }
}

/// fio's latency histogram (stat.h, `FIO_IO_U_PLAT_BITS` 6, `FIO_IO_U_PLAT_GROUP_NR` 29):
/// values under 128 ns have a bucket each; above, each power of two is split into 64
/// buckets, so a bucket is at most 1/64 of its value wide; values past 2^35 ns share the
/// last bucket.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_NR: u64 = 29 * PLAT_VAL;

/// The fio histogram bucket of a latency of `ns` nanoseconds (fio stat.c `plat_val_to_idx`).
pub fn fio_bucket(ns: u64) -> u64 {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= PLAT_BITS {
        return ns;
    }
    let error_bits = msb - PLAT_BITS;
    let base = u64::from(error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (ns >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio writes for a bucket: the middle of its range [ns] (fio stat.c
/// `plat_idx_to_val`).
pub fn fio_bucket_value(idx: u64) -> u64 {
    if idx < PLAT_VAL << 1 {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(PLAT_BITS));
    let k = idx % PLAT_VAL;
    // (k + 0.5) * 2^error_bits, exact in integers since error_bits >= 1 here.
    base + (k << error_bits) + (1 << (error_bits - 1))
}

/// Weighted sums of latency summaries, for a report made of several runs (replications of a
/// sweep point, the quarters of a maintenance task): `mean`, `p50`, `p99` and each
/// percentile are weighted means, `max` the largest, the bins the sum of every run's counts
/// (a histogram of all the I/Os the runs simulated).
#[derive(Debug, Clone, Default)]
pub struct LatencyMean {
    mean: f64,
    p50: f64,
    p99: f64,
    max: f64,
    pcts: Vec<Percentile>,
    bins: BTreeMap<u64, u64>,
}

impl LatencyMean {
    /// Adds `w` times `l` (its bins once).
    pub fn add(&mut self, l: &Latency, w: f64) {
        self.mean += w * l.mean;
        self.p50 += w * l.p50;
        self.p99 += w * l.p99;
        self.max = self.max.max(l.max);
        if self.pcts.is_empty() {
            self.pcts = l.percentiles.iter().map(|p| Percentile { pct: p.pct, us: 0.0 }).collect();
        }
        for (s, p) in self.pcts.iter_mut().zip(&l.percentiles) {
            s.us += w * p.us;
        }
        for (&k, &n) in &l.bins {
            *self.bins.entry(k).or_insert(0) += n;
        }
    }

    /// The sums divided by `div` (the number of runs for a plain mean, 1 when the weights
    /// already sum to 1).
    pub fn finish(&self, div: f64) -> Latency {
        Latency {
            mean: self.mean / div,
            p50: self.p50 / div,
            p99: self.p99 / div,
            max: self.max,
            percentiles: self.pcts.iter().map(|p| Percentile { pct: p.pct, us: p.us / div }).collect(),
            bins: self.bins.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_binned_summaries_reads_percentiles_from_the_merged_bins() {
        // Drive A: 90 I/Os at 100 us; drive B: 10 at 1 ms. Apart, each one's p99 is its own
        // latency; together 90% are at 100 us, so p50 is 100 us and p95 and p99 are 1 ms.
        let mk = |ns: u64, n: u64| {
            let mut l = Latency {
                mean: ns as f64 / 1e3,
                p50: ns as f64 / 1e3,
                p99: ns as f64 / 1e3,
                max: ns as f64 / 1e3,
                ..Latency::default()
            };
            l.count(ns, n);
            l
        };
        let mut a = mk(100_000, 90);
        a.merge(&mk(1_000_000, 10), 90, 10);
        let near = |x: f64, want: f64| (x - want).abs() < want / 64.0;
        assert!((a.mean - 190.0).abs() < 1e-9, "{}", a.mean);
        assert!(near(a.p50, 100.0) && near(a.p99, 1_000.0) && near(a.at(95.0).unwrap(), 1_000.0), "{a:?}");
        assert!(near(a.at(90.0).unwrap(), 100.0), "{a:?}");
        assert_eq!(a.percentiles.len(), PERCENTILES.len());
        assert_eq!(a.bins.values().sum::<u64>(), 100);
        // Without bins (fio's plain JSON) the larger of each percentile is kept.
        let (mut c, d) = (mk(100_000, 1), mk(1_000_000, 1));
        c.bins.clear();
        c.merge(&Latency { bins: BTreeMap::new(), ..d }, 90, 10);
        assert_eq!((c.p50, c.p99, c.max), (1_000.0, 1_000.0, 1_000.0));
    }

    #[test]
    fn fio_buckets_match_fio_stat_c() {
        // Under 128 ns a value is its own bucket (msb <= 6).
        assert_eq!((fio_bucket(0), fio_bucket(127)), (0, 127));
        assert_eq!(fio_bucket_value(127), 127);
        // 128 = 2^7: msb 7, error_bits 1, base (1 + 1) << 6 = 128, offset (128 >> 1) & 63 = 0.
        assert_eq!(fio_bucket(128), 128);
        // Bucket 128 spans 128..130 (2 ns wide): fio writes 128 + 0.5 * 2 = 129.
        assert_eq!(fio_bucket_value(128), 129);
        assert_eq!(fio_bucket(129), 128);
        // 1 ms = 1,000,000 ns: msb 19, error_bits 13, base 14 << 6 = 896,
        // offset (1e6 >> 13) & 63 = 122 & 63 = 58: bucket 954, which spans
        // 2^19 + 58 * 2^13 = 999,424 .. 1,007,616; its value 999,424 + 4,096 = 1,003,520.
        assert_eq!(fio_bucket(1_000_000), 954);
        assert_eq!(fio_bucket_value(954), 1_003_520);
        // Past 2^35 ns everything shares the last bucket, 29 * 64 - 1.
        assert_eq!(fio_bucket(1 << 40), 1855);
    }

    #[test]
    fn every_bucket_value_falls_in_its_own_bucket() {
        for idx in 0..PLAT_NR {
            assert_eq!(fio_bucket(fio_bucket_value(idx)), idx, "bucket {idx}");
        }
    }

    #[test]
    fn means_weight_percentiles_and_add_bins() {
        let mk = |us: f64, ns: u64| {
            let mut l = Latency { mean: us, p50: us, p99: us, max: us, ..Latency::default() };
            l.percentiles = PERCENTILES.iter().map(|&pct| Percentile { pct, us }).collect();
            l.count(ns, 10);
            l
        };
        let (a, b) = (mk(100.0, 100_000), mk(300.0, 300_000));
        let mut m = LatencyMean::default();
        m.add(&a, 1.0);
        m.add(&b, 1.0);
        let l = m.finish(2.0);
        assert_eq!((l.mean, l.max, l.at(99.9)), (200.0, 300.0, Some(200.0)));
        // Two buckets of 10 I/Os each: 100 us and 300 us are far apart.
        assert_eq!(l.bins.values().copied().collect::<Vec<_>>(), vec![10, 10]);
    }
}
