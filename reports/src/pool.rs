//! A pool workload's section of a report for a terminal: the logical rates the pool's users
//! see, what the members moved for them, and a scrub's or rebuild's projected time.

use crate::tables::{fmt_iops, fmt_mb_s, fmt_pct, fmt_us};
use iopath_model::report::Report;
use std::fmt::Write;

/// The pool section of a report (`None` for a per-drive workload).
///
/// Lines: the pool, its layout and logical rates (read, write, IOPS, latency mean/p50/p99);
/// the member bytes per logical byte (parity, copies, read-modify-write); the failed
/// members; for maintenance, the task, what it must process, its rate and hours, what binds
/// it and one line per segment of the members' range; the CPU's utilization by kind of work.
pub fn pool_section(r: &Report) -> Option<String> {
    let p = r.pool.as_ref()?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "pool {} ({}): {} MB/s logical (read {}, write {}), {} IOPS, latency mean {} / p50 {} / p99 {} us",
        p.id,
        p.layout,
        fmt_mb_s(p.mb_s),
        fmt_mb_s(p.read_mb_s),
        fmt_mb_s(p.write_mb_s),
        fmt_iops(p.iops),
        fmt_us(p.lat_us.mean),
        fmt_us(p.lat_us.p50),
        fmt_us(p.lat_us.p99)
    );
    let _ = writeln!(
        s,
        "  members: {} MB read + {} MB written for {} MB logical: {:.3} member bytes per logical byte",
        mb(p.member_read_bytes),
        mb(p.member_write_bytes),
        mb(p.read_bytes + p.write_bytes),
        p.overhead
    );
    if !p.failed.is_empty() {
        let _ = writeln!(s, "  failed: {} (degraded)", p.failed.join(", "));
    }
    if let Some(m) = &p.maintenance {
        let _ = writeln!(
            s,
            "  {} at fill {}%: {} GB of data ({} GB of member I/O) at {} MB/s: {:.2} h, bound by {} ({}%)",
            m.task,
            fmt_pct(m.fill),
            gb(m.logical_bytes),
            gb(m.member_bytes),
            fmt_mb_s(m.rate_mb_s),
            m.hours,
            m.bottleneck.id,
            fmt_pct(m.bottleneck.util)
        );
        for seg in &m.segments {
            let _ = writeln!(
                s,
                "    {:>3}-{:>3}% of the range: {} MB/s, {:.2} h ({} at {}%)",
                fmt_pct(seg.from),
                fmt_pct(seg.to),
                fmt_mb_s(seg.rate_mb_s),
                seg.hours,
                seg.bottleneck.id,
                fmt_pct(seg.bottleneck.util)
            );
        }
    }
    for c in &r.cpu {
        let _ = writeln!(
            s,
            "  cpu {}: {}% of the host's cores ({} MB/s processed)",
            c.kind,
            fmt_pct(c.util),
            fmt_mb_s(c.mb_s)
        );
    }
    Some(s)
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

fn gb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e9)
}
