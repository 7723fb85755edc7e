//! A surface scan: sequential reads at evenly spaced windows from the start of one target to
//! its end, each a short run of its own, like DiskSpeed's drive curve. Point `k` of `n`
//! reads the window of `size / n` bytes (whole blocks) starting at `k (size - window) /
//! (n - 1)`, rounded down to a block, so the first window starts at LBA 0 and the last ends
//! at the end of the target. The reads wrap around inside the window.

use super::{MeasureError, MeasureOptions, Offset, Progress, measure_point};
use crate::engine::Runner;
use crate::target::{self, OpenMode};
use iopath_model::surface::{SURFACE_KIND, Surface, SurfacePoint};
use iopath_model::workload::{Rw, Targets};
use std::sync::atomic::Ordering;

/// The fewest points a scan takes (a curve needs its two ends).
pub const MIN_POINTS: usize = 2;
/// The most points a scan takes: 1,000 is a point every 0.1% of the drive, finer than any
/// HDD's zones (tens per surface), and keeps a scan's time bounded by the per-point runtime.
pub const MAX_POINTS: usize = 1000;

/// The windows of a scan of `points` points over `size` bytes in blocks of `bs`:
/// `(first byte, length)` of each, in order.
pub fn windows(size: u64, bs: u64, points: usize) -> Result<Vec<(u64, u64)>, MeasureError> {
    let blocks = size / bs.max(1);
    let max = (blocks as usize).clamp(MIN_POINTS, MAX_POINTS);
    if points < MIN_POINTS || points > max || blocks < points as u64 {
        return Err(MeasureError::SurfacePoints { points, min: MIN_POINTS, max });
    }
    let window = blocks / points as u64 * bs;
    let span = size - window;
    let n = points as u64 - 1;
    Ok((0..points as u64)
        .map(|k| {
            // k * span / n without overflow for drives of many TB (u128).
            let at = (u128::from(k) * u128::from(span) / u128::from(n)) as u64;
            (at / bs * bs, window)
        })
        .collect())
}

/// Scans the one target of `o` (`o.targets[0]`): `points` short sequential reads, each of
/// `o.runtime` after `o.ramp`, at the windows of [`windows`]. `o.workload` gives the block
/// size and queue depth; it must be a sequential read (`rw = read`) and `o.offset` is
/// ignored (each point sets its own). Stops early (marked partial) on Ctrl-C; a point that
/// fails on its own (an I/O error in that part of the drive) is recorded and the scan goes on.
pub fn surface_scan_with(
    o: &MeasureOptions,
    runner: Option<&dyn Runner>,
    points: usize,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Surface, MeasureError> {
    let w = &o.workload;
    if o.targets.len() != 1 {
        return Err(MeasureError::SurfaceWorkload { what: format!("{} targets were given", o.targets.len()) });
    }
    if w.rw != Rw::Read || !w.copies.is_empty() {
        let what = if w.copies.is_empty() { format!("rw={}", w.rw) } else { "a copy".to_string() };
        return Err(MeasureError::SurfaceWorkload { what: format!("the workload is {what}, not rw=read") });
    }
    let t = &o.targets[0];
    // A file target this run creates has the size asked for; any other is read as it is.
    let size = if t.path.exists() {
        target::open_target(&t.path, OpenMode { write: false, exclusive: false })?.size
    } else {
        o.size
    };
    let bs = w.bs.get();
    let wins = windows(size, bs, points)?;
    let mut out = Surface {
        schema_version: iopath_model::report::SCHEMA_VERSION,
        kind: SURFACE_KIND.to_string(),
        id: t.id.clone(),
        path: t.path.display().to_string(),
        size_bytes: size,
        bs,
        iodepth: w.iodepth,
        engine: String::new(),
        runtime_s: o.runtime.as_secs_f64(),
        ramp_s: o.ramp.as_secs_f64(),
        points: Vec::new(),
        partial: false,
        warnings: Vec::new(),
    };
    for (k, &(start, len)) in wins.iter().enumerate() {
        if o.stop.load(Ordering::Relaxed) {
            out.partial = true;
            break;
        }
        let mut oo = o.clone();
        oo.workload.targets = Targets::Active(1);
        // Half a block over the window, so the plan's whole-block floor of size x region
        // gives the window exactly despite the float.
        oo.workload.region = ((len as f64 + bs as f64 / 2.0) / size as f64).min(1.0);
        oo.workload.region_given = true;
        oo.offset = Offset::Bytes(start);
        let mut p = SurfacePoint {
            offset_bytes: start,
            window_bytes: len,
            position_pct: start as f64 / size as f64 * 100.0,
            mb_s: 0.0,
            iops: 0.0,
            read_bytes: 0,
            lat_p50_us: 0.0,
            lat_p99_us: 0.0,
            error: None,
        };
        match measure_point(&oo, runner, progress, Some((k + 1, wins.len()))) {
            Ok(r) => {
                out.partial |= r.partial;
                if let Some(m) = &r.measured {
                    out.engine = m.engine.clone();
                }
                if let Some(d) = r.drives.first() {
                    p.mb_s = d.read_mb_s;
                    p.iops = d.iops;
                    p.read_bytes = d.read_bytes;
                    p.lat_p50_us = d.lat_us.p50;
                    p.lat_p99_us = d.lat_us.p99;
                }
                for wn in r.warnings {
                    let wn = format!("at {:.1}%: {wn}", p.position_pct);
                    if !out.warnings.contains(&wn) {
                        out.warnings.push(wn);
                    }
                }
                out.points.push(p);
                if r.partial {
                    break;
                }
            }
            Err(e) if e.stops_a_sweep() => return Err(e),
            Err(e) => {
                p.error = Some(e.to_string());
                out.points.push(p);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_span_the_target_from_start_to_end() {
        // 1000 blocks of 4096 in 5 points: windows of 200 blocks; starts at k * 800 / 4
        // blocks = 0, 200, 400, 600, 800 blocks; the last ends at the end.
        let bs = 4096;
        let w = windows(1000 * bs, bs, 5).unwrap();
        let starts: Vec<u64> = w.iter().map(|x| x.0 / bs).collect();
        assert_eq!(starts, [0, 200, 400, 600, 800]);
        assert!(w.iter().all(|x| x.1 == 200 * bs));
        assert_eq!(w[4].0 + w[4].1, 1000 * bs);
        // 10 blocks in 3 points: windows of 3 blocks; starts 0, 7/2 -> 3.5 blocks rounded
        // down to 3, 7: every start a whole block.
        let w = windows(10 * bs, bs, 3).unwrap();
        assert_eq!(w.iter().map(|x| x.0 / bs).collect::<Vec<_>>(), [0, 3, 7]);
        // A 20 TB drive does not overflow k * span.
        let big = 20_000_000_000_000u64 / bs * bs;
        let w = windows(big, bs, 11).unwrap();
        assert_eq!(w[10].0 + w[10].1, big);
    }

    #[test]
    fn too_few_or_too_many_points_are_refused() {
        assert!(matches!(windows(1 << 20, 4096, 1), Err(MeasureError::SurfacePoints { points: 1, .. })));
        // 1 MiB holds 256 blocks of 4 KiB: 257 points cannot each have one.
        assert!(matches!(windows(1 << 20, 4096, 257), Err(MeasureError::SurfacePoints { points: 257, max: 256, .. })));
        assert!(windows(1 << 20, 4096, 256).is_ok());
    }
}
