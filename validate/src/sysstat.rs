//! System counters a measurement checks itself against: `/proc/diskstats` (is someone else
//! using the device?) and `getrusage` (what the measurement cost in CPU).

use std::collections::HashMap;
use std::path::Path;

/// One line of `/proc/diskstats`, cumulative since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_sectors: u64,
}

impl DiskStat {
    /// Bytes moved between `self` (earlier) and `later`.
    pub fn bytes_until(&self, later: &DiskStat) -> u64 {
        (later.read_sectors.saturating_sub(self.read_sectors) + later.write_sectors.saturating_sub(self.write_sectors))
            * 512
    }
}

/// Parses `/proc/diskstats` text: (major, minor) -> (name, counters). Each line is read by
/// `procfs-core` (the 14 fields every kernel since 2.6 writes, and the discard and flush
/// fields of newer ones); a line it cannot read is skipped, so one odd line does not hide
/// the others.
pub fn parse_diskstats(text: &str) -> HashMap<(u32, u32), (String, DiskStat)> {
    text.lines()
        .filter_map(|line| procfs_core::DiskStat::from_line(line).ok())
        .filter_map(|d| {
            let dev = (u32::try_from(d.major).ok()?, u32::try_from(d.minor).ok()?);
            let counters = DiskStat {
                read_ios: d.reads,
                read_sectors: d.sectors_read,
                write_ios: d.writes,
                write_sectors: d.sectors_written,
            };
            Some((dev, (d.name, counters)))
        })
        .collect()
}

/// The current `/proc/diskstats`, empty when unreadable.
pub fn diskstats() -> HashMap<(u32, u32), (String, DiskStat)> {
    std::fs::read_to_string("/proc/diskstats").map(|t| parse_diskstats(&t)).unwrap_or_default()
}

/// User + system CPU seconds of this process so far.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return 0.0;
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(ru.ru_utime) + tv(ru.ru_stime)
    }
}

/// The kernel name of a block device (`sda`, `loop3`) from its numbers, via sysfs.
pub fn block_name(sysfs: &Path, dev: (u32, u32)) -> Option<String> {
    let p = sysfs.join(format!("dev/block/{}:{}", dev.0, dev.1));
    std::fs::canonicalize(p).ok().and_then(|r| r.file_name().map(|n| n.to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_diskstats_lines() {
        let t = "   7       0 loop0 120 0 9600 12 40 0 320 8 0 20 20 0 0 0 0 0 0\n 254 0 vda 1 2 3 4 5 6 7 8 9 10 11\nbad line\n";
        let m = parse_diskstats(t);
        let (name, s) = &m[&(7, 0)];
        assert_eq!(name, "loop0");
        assert_eq!(s.read_sectors, 9600);
        assert_eq!(s.write_sectors, 320);
        let later = DiskStat { read_sectors: 9600 + 8, ..*s };
        assert_eq!(s.bytes_until(&later), 4096);
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn cpu_time_is_counted() {
        assert!(cpu_seconds() >= 0.0);
    }
}
