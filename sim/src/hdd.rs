//! Hard-drive mechanics: zoned media rate by LBA, a seek curve, the platter's rotation,
//! rotational position ordering over queued commands, and read-ahead / write-back streams.
//!
//! Geometry: with constant linear density the media rate is proportional to the radius, and
//! LBAs fill the platter from the outside in, so the LBA fraction `x` maps to the radius
//! `r(x) = sqrt(1 - x (1 - rho^2))` (as a share of the outer radius, `rho` = inner/outer
//! rate). The drive has `zones` recording zones, each at the rate of its middle radius.
//! Seeks follow `t2t + (full - t2t) sqrt(d)` over the stroke share `d`, with `full` chosen so
//! that a random seek averages the datasheet's `avg_seek_ms` (E[sqrt|u-v|] = 8/15).
//! A sector's angle is a fixed pseudo-random function of its block, so rotational waits come
//! out of the geometry and ordering several queued commands shortens them (NCQ).
//! The platter's angle at a time is the drive's own: each spindle turns at its own phase
//! (`HddSt::spin_ns`), so drives of one model started together do not reach their sectors in
//! step, as unsynchronised spindles never do.

use iopath_model::parts::DriveFigures;
use iopath_model::units::Rate;

/// Figures of one HDD, in SI units.
#[derive(Debug, Clone, PartialEq)]
pub struct HddGeometry {
    pub capacity: f64,
    /// Media rate at the outer edge.
    pub outer: Rate,
    pub rho: f64,
    pub zones: usize,
    pub rev_ns: f64,
    pub t2t_ns: f64,
    pub full_ns: f64,
    pub cmd_ns: f64,
    pub cache_bytes: f64,
    pub write_eff: f64,
    /// Mean positioning time of a random access: average seek and half a turn [ns].
    pub avg_position_ns: f64,
    /// Each zone's media rate [bytes/s] (`rate_at`'s answer, computed once: every read and
    /// write asks it at least twice, and the square root and divisions cost more than the
    /// rest of a streamed read's arithmetic).
    zone_rates: Box<[f64]>,
    /// The number of zones, as an f64 (a usize converts to f64 in a dozen instructions).
    zones_f: f64,
}

impl HddGeometry {
    /// The geometry of a drive's figures (those of an HDD; every one is filled, from the
    /// catalog's defaults where the part states none).
    pub fn from_drive(d: &DriveFigures) -> HddGeometry {
        let outer = d.outer_mb_s * 1e6;
        let inner = d.inner_mb_s * 1e6;
        let t2t = d.track_to_track_ms * 1e6;
        let avg = d.avg_seek_ms * 1e6;
        let full = t2t + (avg - t2t).max(0.0) * 15.0 / 8.0;
        let rev = 60e9 / d.rpm;
        HddGeometry {
            capacity: d.capacity_gb * 1e9,
            outer: Rate::from_bytes_per_s(outer),
            rho: (inner / outer).clamp(0.05, 1.0),
            zones: d.zones.max(1) as usize,
            rev_ns: rev,
            t2t_ns: t2t,
            full_ns: full,
            cmd_ns: d.cmd_overhead_us * 1e3,
            cache_bytes: d.cache_mib * 1048576.0,
            write_eff: d.write_efficiency,
            avg_position_ns: t2t + (full - t2t) * 8.0 / 15.0 + rev / 2.0,
            zone_rates: Box::default(),
            zones_f: 0.0,
        }
        .with_zone_rates()
    }

    /// Fills `zone_rates` from the other figures.
    fn with_zone_rates(mut self) -> HddGeometry {
        let zones = self.zones.max(1);
        self.zones = zones;
        self.zone_rates = (0..zones)
            .map(|z| {
                let xm = (z as f64 + 0.5) / zones as f64;
                self.outer.bytes_per_s() * self.radius(xm)
            })
            .collect();
        self.zones_f = zones as f64;
        self
    }

    /// Media rate at a byte offset [bytes/s] (zoned): the rate at the middle radius of the
    /// zone the offset lies in.
    #[inline]
    pub fn rate_at(&self, offset: f64) -> f64 {
        let x = (offset / self.capacity).clamp(0.0, 1.0);
        // In [0, zones] (NaN: 0), where a conversion through u32 is exact and cheaper than
        // one to usize (which must handle the range past i64's).
        let z = ((x * self.zones_f) as u32 as usize).min(self.zone_rates.len() - 1);
        self.zone_rates[z]
    }

    fn radius(&self, x: f64) -> f64 {
        (1.0 - x * (1.0 - self.rho * self.rho)).max(0.0).sqrt()
    }

    /// Stroke position (0 = outer edge, 1 = inner) of a byte offset.
    pub fn stroke(&self, offset: f64) -> f64 {
        if self.rho >= 1.0 {
            return (offset / self.capacity).clamp(0.0, 1.0);
        }
        (1.0 - self.radius((offset / self.capacity).clamp(0.0, 1.0))) / (1.0 - self.rho)
    }

    /// Seek time between two stroke positions [ns].
    pub fn seek_ns(&self, from: f64, to: f64) -> f64 {
        let d = (from - to).abs();
        if d < 1e-7 { 0.0 } else { self.t2t_ns + (self.full_ns - self.t2t_ns) * d.sqrt() }
    }

    /// Angle (fraction of a turn) of the sector holding `offset`.
    pub fn angle(&self, offset: f64) -> f64 {
        let block = (offset / 4096.0) as u64;
        // A fixed scramble: sectors per track vary by zone, so any fixed map will do.
        let h = block.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 11) as f64 / (1u64 << 53) as f64
    }

    /// How far ahead of a stream a request may start and still be served by it: the bytes the
    /// media passes in an average positioning (seek and half a turn). Farther away, a seek
    /// is quicker than waiting for the stream to get there, and firmware seeks.
    pub fn stream_reach(&self, offset: f64) -> f64 {
        self.reach(self.rate_at(offset))
    }

    /// [`HddGeometry::stream_reach`] where the media rate is `rate` [bytes/s].
    pub fn reach(&self, rate: f64) -> f64 {
        rate * self.avg_position_ns * 1e-9
    }

    /// Positioning time from the head's state to `offset`, starting at time `now` [ns] of the
    /// platter's own clock (the run's time plus the spindle's phase): seek, then wait for the
    /// sector to come round.
    pub fn position_ns(&self, head_stroke: f64, now_ns: f64, offset: f64) -> f64 {
        let seek = self.seek_ns(head_stroke, self.stroke(offset));
        let arrive = now_ns + seek + self.cmd_ns;
        let platter = (arrive / self.rev_ns).fract();
        let wait = (self.angle(offset) - platter).rem_euclid(1.0) * self.rev_ns;
        self.cmd_ns + seek + wait
    }
}

/// `a.max(b)` and `a.min(b)` for the streams' arithmetic, whose operands (times, offsets,
/// byte counts) are never NaN: a compare and a select, where `f64::max` and `min` spend four
/// more instructions on NaN (the read-ahead runs a handful on every read of a stream).
#[inline(always)]
fn fmax(a: f64, b: f64) -> f64 {
    if a >= b { a } else { b }
}

#[inline(always)]
fn fmin(a: f64, b: f64) -> f64 {
    if a <= b { a } else { b }
}

/// A read-ahead stream: the media keeps reading past the last request, at most a cache
/// ahead of what the host has asked for.
#[derive(Debug, Clone, Default)]
pub struct ReadAhead {
    pub active: bool,
    /// Where the stream began.
    pub begin: f64,
    /// Where the next sequential request must start to hit the stream.
    pub next: f64,
    origin: f64,
    origin_t: f64,
    rate: f64,
    asked: f64,
}

impl ReadAhead {
    /// Starts a stream at `offset` (the head is there) at time `t`.
    pub fn start(&mut self, g: &HddGeometry, offset: f64, t: f64) {
        *self = ReadAhead {
            active: true,
            begin: offset,
            next: offset,
            origin: offset,
            origin_t: t,
            rate: g.rate_at(offset),
            asked: offset,
        };
    }

    fn pos(&self, t: f64, cache: f64) -> f64 {
        fmin(self.origin + fmax(t - self.origin_t, 0.0) * self.rate * 1e-9, self.asked + cache)
    }

    /// A request for `[offset, offset+len)` at time `t`, sequential to the stream: returns
    /// when its last byte is in the drive's buffer [ns].
    pub fn request(&mut self, g: &HddGeometry, offset: f64, len: f64, t: f64) -> f64 {
        // Re-anchor at the present position (the media may have stalled against the cache).
        // A pause for writes ([`ReadAhead::pause`]) holds it until its end.
        let p = self.pos(t, g.cache_bytes);
        self.origin = p;
        self.origin_t = fmax(self.origin_t, t);
        self.rate = g.rate_at(p);
        let end = offset + len;
        self.asked = fmax(self.asked, end);
        self.next = fmax(self.next, end);
        if end <= p { t } else { self.origin_t + (end - p) / self.rate * 1e9 }
    }

    /// The media is busy writing from `t` for `ns` (a write-back stream's data going to the
    /// platters): the read-ahead stands still meanwhile, as the write-back does for reads
    /// ([`WriteBack::pause`]), so reads and writes sharing the disk share its media time. A
    /// stream already a cache ahead of the requests was idle anyway and loses nothing.
    pub fn pause(&mut self, g: &HddGeometry, t: f64, ns: f64) {
        if !self.active {
            return;
        }
        let p = self.pos(t, g.cache_bytes);
        if p < self.asked + g.cache_bytes {
            self.origin = p;
            self.origin_t = fmax(self.origin_t, t) + ns;
        }
    }

    /// Whether a read at `offset`, arriving at time `t`, is served by this stream: at or after
    /// its start, and no farther than the stream's reach beyond what was asked so far (several
    /// sequential reads may be in flight) or beyond what the media has already read ahead.
    pub fn hits(&self, g: &HddGeometry, offset: f64, t: f64) -> bool {
        self.active && self.hits_within(g, offset, t, g.stream_reach(offset))
    }

    /// [`ReadAhead::hits`] for an active stream, with the reach at `offset` already known.
    pub fn hits_within(&self, g: &HddGeometry, offset: f64, t: f64, reach: f64) -> bool {
        offset + 0.5 >= self.begin && offset <= fmax(self.next, self.pos(t, g.cache_bytes)) + reach
    }
}

/// A write-back stream: the drive accepts sequential writes into its cache and writes them
/// to the media at the zone rate; a write is accepted once the cache has room for it.
#[derive(Debug, Clone, Default)]
pub struct WriteBack {
    pub active: bool,
    pub begin: f64,
    pub next: f64,
    origin: f64,
    origin_t: f64,
    rate: f64,
    accepted: f64,
}

impl WriteBack {
    pub fn start(&mut self, g: &HddGeometry, offset: f64, t: f64) {
        *self = WriteBack {
            active: true,
            begin: offset,
            next: offset,
            origin: offset,
            origin_t: t,
            rate: g.rate_at(offset) * g.write_eff,
            accepted: offset,
        };
    }

    /// Data for `[offset, offset+len)` has arrived at time `t`: returns when the drive
    /// acknowledges it [ns].
    pub fn accept(&mut self, g: &HddGeometry, offset: f64, len: f64, t: f64) -> f64 {
        // Media position now (it cannot pass what was accepted).
        let p = fmin(self.origin + fmax(t - self.origin_t, 0.0) * self.rate * 1e-9, self.accepted);
        self.origin = p;
        self.origin_t = t;
        self.rate = g.rate_at(p) * g.write_eff;
        let end = offset + len;
        self.accepted = fmax(self.accepted, end);
        self.next = fmax(self.next, end);
        let need = end - g.cache_bytes;
        if need <= p { t } else { t + (need - p) / self.rate * 1e9 }
    }

    /// The media is busy elsewhere from `t` for `ns`: a backlog in the cache drains that
    /// much later (a cache with nothing to write is unaffected).
    pub fn pause(&mut self, t: f64, ns: f64) {
        if !self.active {
            return;
        }
        let p = fmin(self.origin + fmax(t - self.origin_t, 0.0) * self.rate * 1e-9, self.accepted);
        if p < self.accepted {
            self.origin = p;
            self.origin_t = t + ns;
        }
    }

    /// Time the media still needs to write what the cache holds at time `t` [ns].
    pub fn backlog_ns(&self, t: f64) -> f64 {
        if !self.active {
            return 0.0;
        }
        let p = fmin(self.origin + fmax(t - self.origin_t, 0.0) * self.rate * 1e-9, self.accepted);
        (self.accepted - p).max(0.0) / self.rate * 1e9
    }

    /// Whether a write at `offset` continues this stream: at or after its start and within the
    /// stream's reach of what was accepted so far (several may be in flight). A write farther
    /// away is positioned on its own rather than filling the gap with data nobody wrote.
    pub fn hits(&self, g: &HddGeometry, offset: f64) -> bool {
        self.active && offset + 0.5 >= self.begin && offset <= self.next + g.stream_reach(offset)
    }
}

/// A drive-managed SMR drive's media cache: a CMR region at the outer edge that the drive logs
/// random writes into (appends, so no seek between them), and that it cleans by rewriting whole
/// shingled bands: read a band, merge the cached writes that belong to it, write it back.
///
/// Once the cache is full, every byte accepted needs a band cleaned. The cache holds `cap`
/// bytes spread over a span of `S` bytes of LBA space, so cleaning one band of `B` bytes frees
/// `cap x B / S` bytes and costs `2 B / r` (read and rewrite at the media rate `r`). The
/// sustained (floor) rate of random writes is then
///
/// ```text
/// floor = (cap B / S) / (2 B / r) = cap x r / (2 S)
/// ```
///
/// independent of the band size: a 20 GB cache over a 4 TB drive at 150 MB/s gives 375 kB/s,
/// about 90 writes of 4 KiB per second. Sequential writes fill whole bands and skip the cache.
#[derive(Debug, Clone)]
pub struct SmrLog {
    pub cap: f64,
    pub used: f64,
    lo: f64,
    hi: f64,
}

impl SmrLog {
    pub fn new(cap_bytes: f64) -> SmrLog {
        SmrLog { cap: cap_bytes, used: 0.0, lo: f64::INFINITY, hi: 0.0 }
    }

    /// Whether a write of `len` still fits into the media cache.
    pub fn has_room(&self, len: f64) -> bool {
        self.used + len <= self.cap
    }

    /// The span of LBA space the cached writes are spread over (at least the cache itself:
    /// writes over a smaller span overwrite each other's bands).
    pub fn span(&self) -> f64 {
        (self.hi - self.lo).max(self.cap)
    }

    /// Media time of a random write of `len` at `offset` [ns], beyond command and positioning
    /// (which `position_ns` gives): a log append at the outer zone's rate while the cache has
    /// room, else band cleaning at the floor rate. Records the write.
    pub fn write_ns(&mut self, g: &HddGeometry, offset: f64, len: f64) -> f64 {
        self.lo = self.lo.min(offset);
        self.hi = self.hi.max(offset + len);
        if self.has_room(len) {
            self.used += len;
            len / (g.rate_at(0.0) * g.write_eff) * 1e9
        } else {
            let floor = self.cap * g.rate_at(offset) * g.write_eff / (2.0 * self.span());
            len / floor * 1e9
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> HddGeometry {
        HddGeometry {
            capacity: 1e12,
            outer: Rate::from_mb_s(200.0),
            rho: 0.5,
            zones: 1000,
            rev_ns: 60e9 / 7200.0,
            t2t_ns: 1e6,
            full_ns: 1e6 + 7.5e6 * 15.0 / 8.0,
            cmd_ns: 0.0,
            cache_bytes: 64e6,
            write_eff: 1.0,
            avg_position_ns: 1e6 + 7.5e6 + 60e9 / 7200.0 / 2.0,
            zone_rates: Box::default(),
            zones_f: 0.0,
        }
        .with_zone_rates()
    }

    /// The zone table gives exactly the rate of the zone's middle radius, at every zone's
    /// edges and inside.
    #[test]
    fn zone_table_is_the_middle_radius_rate() {
        let g = geo();
        let n = g.zones as f64;
        for z in [0usize, 1, 499, 998, 999] {
            let xm = (z as f64 + 0.5) / n;
            let want = g.outer.bytes_per_s() * g.radius(xm);
            for x in [z as f64 / n + 1e-9, xm, (z as f64 + 1.0) / n - 1e-9] {
                assert_eq!(g.rate_at(x * g.capacity), want, "zone {z} at {x}");
            }
        }
        assert_eq!(g.rate_at(-1.0), g.rate_at(0.0));
        assert_eq!(g.rate_at(2.0 * g.capacity), g.rate_at(g.capacity));
    }

    #[test]
    fn whole_surface_average_is_the_mean_of_outer_and_inner() {
        // Time-averaged rate over all LBAs = (outer + inner) / 2 for r proportional to rate.
        let g = geo();
        let n = 100_000;
        let t: f64 =
            (0..n).map(|i| (g.capacity / n as f64) / g.rate_at((i as f64 + 0.5) * g.capacity / n as f64)).sum();
        let avg = g.capacity / t;
        assert!((avg / 150e6 - 1.0).abs() < 0.01, "{avg}");
    }

    #[test]
    fn seek_is_monotonic_and_zero_in_place() {
        let g = geo();
        assert_eq!(g.seek_ns(0.3, 0.3), 0.0);
        assert!(g.seek_ns(0.0, 0.1) < g.seek_ns(0.0, 0.5));
        assert!(g.seek_ns(0.0, 1.0) <= g.full_ns + 1.0);
    }

    #[test]
    fn read_ahead_streams_at_media_rate() {
        let g = geo();
        let mut ra = ReadAhead::default();
        ra.start(&g, 0.0, 0.0);
        let mut t = 0.0;
        let mut off = 0.0;
        for _ in 0..100 {
            t = ra.request(&g, off, 1e6, t);
            off += 1e6;
        }
        let rate = off / (t * 1e-9);
        assert!((rate / g.rate_at(0.0) - 1.0).abs() < 0.02, "{rate}");
    }

    #[test]
    fn a_random_read_far_ahead_of_the_stream_is_not_a_hit() {
        // A read 100 MB past the stream would wait ~0.5 s for the media to get there; a seek
        // is ~10 ms, so the stream must not claim it. A read just past it is a hit.
        let g = geo();
        let mut ra = ReadAhead::default();
        ra.start(&g, 0.0, 0.0);
        assert!(ra.hits(&g, 0.0, 0.0));
        assert!(ra.hits(&g, 1e6, 0.0));
        assert!(!ra.hits(&g, 100e6, 0.0));
        // Once the media has read ahead (at most a cache's worth), what it holds is a hit.
        assert!(ra.hits(&g, 50e6, 0.6e9));
        assert!(!ra.hits(&g, 100e6, 0.6e9));
        let mut wb = WriteBack::default();
        wb.start(&g, 0.0, 0.0);
        assert!(wb.hits(&g, 0.0));
        assert!(!wb.hits(&g, 100e6));
    }
}
