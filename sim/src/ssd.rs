//! Flash-drive behaviour beyond fixed rates: the SLC write cache and its cliff, and the
//! spread of the media's service time.
//!
//! SLC cache: a TLC/QLC drive programs incoming writes as SLC (fast) into a cache of
//! `write_cache_gb`, at `seq_write_mb_s`. Once the cache is full, writes go to TLC/QLC directly
//! at `post_cache_write_mb_s`. The cache empties (folds into TLC/QLC) at `cache_fold_mb_s` in
//! the NAND time the host's writes leave idle: over an interval of `dt` in which the host wrote
//! `B` bytes at a mode's rate `r`, the drive was busy for `B / r` and folded for the rest, so
//!
//! ```text
//! cache mode: occupancy += B - fold x (dt - B / cached_rate)+
//! full  mode: occupancy -= fold x (dt - B / post_rate)+
//! ```
//!
//! A write at full speed from an empty cache meets the cliff after `cache / cached_rate`; an idle
//! drive empties it in `cache / fold`. The full drive returns to the cached rate once folding
//! has freed 1% of the cache (a hysteresis, so one idle microsecond does not flip the rate back
//! and forth: the drive regains cache in chunks of NAND blocks in the same way).
//!
//! Latency spread: the media service time is log-normal with the datasheet's typical latency as
//! its mean and its 99.9th-percentile QoS figure as its 99.9th percentile.

use iopath_model::units::{Rate, SimDuration, SimTime};
use rand::Rng;
use rand_distr::{Distribution, LogNormal};

/// The state of one drive's SLC write cache.
#[derive(Debug, Clone)]
pub struct SlcCache {
    cap: f64,
    occ: f64,
    last: SimTime,
    full: bool,
    /// Write rates into the cache and, once it is full, straight to TLC/QLC; and the rate at
    /// which idle time folds the cache's contents out.
    cached: Rate,
    post: Rate,
    fold: Rate,
}

/// The share of the cache folding must free before a full drive writes at the cached rate again.
const REFILL_SHARE: f64 = 0.01;

impl SlcCache {
    /// A cache of `cap_bytes`, empty at time 0 (a fresh or long-idle drive, as reviews test it).
    pub fn new(cap_bytes: f64, cached: Rate, post: Rate, fold: Rate) -> SlcCache {
        SlcCache { cap: cap_bytes, occ: 0.0, last: SimTime::ZERO, full: false, cached, post, fold }
    }

    /// Whether writes now go to TLC/QLC directly (the post-cache rate).
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Bytes the cache holds.
    pub fn occupancy(&self) -> f64 {
        self.occ
    }

    /// `bytes` were written into the drive's NAND by time `now`; returns true when the
    /// write rate changes (the cache filled, or folding freed enough of it).
    pub fn wrote(&mut self, bytes: f64, now: SimTime) -> bool {
        let dt = (now - self.last).secs_f64();
        self.last = now;
        let was_full = self.full;
        if self.full {
            let idle = (dt - bytes / self.post.bytes_per_s()).max(0.0);
            self.occ = (self.occ - self.fold.bytes_per_s() * idle).max(0.0);
            if self.occ <= self.cap * (1.0 - REFILL_SHARE) {
                self.full = false;
            }
        } else {
            let idle = (dt - bytes / self.cached.bytes_per_s()).max(0.0);
            self.occ = (self.occ - self.fold.bytes_per_s() * idle).max(0.0) + bytes;
            if self.occ >= self.cap {
                self.occ = self.cap;
                self.full = true;
            }
        }
        self.full != was_full
    }
}

/// A log-normal service time with a given mean and 99.9th percentile.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    dist: LogNormal<f64>,
}

/// The standard normal's 99.9th percentile.
const Z_999: f64 = 3.090_232;

impl Spread {
    /// `None` when there is no spread (p99.9 at or below the mean, or a zero mean).
    pub fn from_mean_p999(mean_ns: f64, p999_ns: f64) -> Option<Spread> {
        if mean_ns <= 0.0 || p999_ns <= mean_ns {
            return None;
        }
        // mean = exp(mu + s^2/2), p99.9 = exp(mu + z s)  =>  s^2/2 - z s + ln(p999/mean) = 0.
        let k = (p999_ns / mean_ns).ln();
        let disc = Z_999 * Z_999 - 2.0 * k;
        let sigma = if disc > 0.0 { Z_999 - disc.sqrt() } else { Z_999 };
        let mu = mean_ns.ln() - sigma * sigma / 2.0;
        LogNormal::new(mu, sigma).ok().map(|dist| Spread { dist })
    }

    /// One service time, rounded to the nanosecond.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> SimDuration {
        SimDuration::from_nanos(self.dist.sample(rng).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn the_cache_fills_at_full_speed_and_empties_when_idle() {
        // 1 GB cache, 2000 MB/s cached, 500 MB/s after, folding at 500 MB/s.
        let mb_s = Rate::from_mb_s;
        let mut c = SlcCache::new(1e9, mb_s(2000.0), mb_s(500.0), mb_s(500.0));
        let mut t = SimTime::ZERO;
        let mut flips = 0;
        // 1 MB writes back to back at the cached rate: 0.5 ms each; the cliff at 1000 writes.
        for i in 0..1000 {
            t = t + SimDuration::from_nanos(500_000);
            if c.wrote(1e6, t) {
                flips += 1;
                assert_eq!(i, 999, "filled after exactly cache / bs writes");
            }
        }
        assert!(c.is_full() && flips == 1);
        // Idle 1 s: folding frees 500 MB; the next write finds room again.
        t = t + SimDuration::from_secs_f64(1.0);
        assert!(c.wrote(1e6, t));
        assert!(!c.is_full());
        assert!((c.occupancy() - 0.5e9).abs() < 2e6, "{}", c.occupancy());
    }

    #[test]
    fn spread_keeps_the_mean_and_puts_the_p999_where_asked() {
        let s = Spread::from_mean_p999(100_000.0, 273_000.0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut v: Vec<u64> = (0..200_000).map(|_| s.sample(&mut rng).nanos()).collect();
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        v.sort_unstable();
        let p999 = v[v.len() * 999 / 1000] as f64;
        assert!((mean / 100_000.0 - 1.0).abs() < 0.01, "{mean}");
        assert!((p999 / 273_000.0 - 1.0).abs() < 0.05, "{p999}");
        assert!(Spread::from_mean_p999(100.0, 100.0).is_none());
    }
}
