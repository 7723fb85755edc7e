//! Real pools over throttled loop devices: btrfs profiles (raid0/1/10/5/6) and ZFS vdevs
//! through zfs-fuse (mirror, raidz1, raidz2), for `tests/pool_rigs.rs`.
//!
//! ```text
//!   iopath measure --target MNT/f            btrfs scrub / zpool scrub
//!                 |                                   |
//!        btrfs (kernel) or zfs-fuse (a daemon in userspace, FUSE)
//!          |        |        |        |
//!        loopA    loopB    loopC    loopD     member loop devices (--direct-io=on),
//!                                             each capped by a blkio throttle
//! ```
//!
//! Where the throttle sits (measured on this kernel, 6.18, cgroup v1): a child blkio group
//! caps the direct I/O a process in it issues and the reads of `btrfs scrub start -B` (the
//! scrub's bios are submitted from the ioctl's threads), but not btrfs RAID5/6 writes
//! (the stripe is written from btrfs's own workers: 181 MB/s through four 20 MiB/s caps).
//! Limits on the root group apply only to the root group's tasks, kernel threads included,
//! and not to a child group (v1 throttling is not hierarchical here: 881 MB/s from a child
//! group through root caps of 4 x 20 MiB/s). So [`Throttle`] writes every limit on the root
//! group *and* on the group of this process when that is another one: every issuer of I/O
//! to the members (this process and what it starts, the zfs-fuse daemon it starts, btrfs's
//! workers and scrub threads) is capped, and nothing else on the machine is touched (the
//! limits name only the rig's own loop devices, and are removed on drop, before the loop
//! devices are detached, so no later user of the same device number inherits them).
//!
//! zfs-fuse has one fixed control socket (`/var/run/zfs/zfs_socket`), so one daemon runs at
//! a time on a machine: [`PoolRig::zfs`] waits for another to go, starts its own with
//! `--no-daemon`, keeps its PID, and on drop destroys the pool and stops that PID.

use crate::{Rig, dev_numbers, run, which};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BLKIO: &str = "/sys/fs/cgroup/blkio";
const ZFS_SOCKET: &str = "/var/run/zfs/zfs_socket";

/// A btrfs data profile (metadata is always raid1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BtrfsProfile {
    Raid0,
    Raid1,
    Raid10,
    Raid5,
    Raid6,
}

impl BtrfsProfile {
    pub fn name(self) -> &'static str {
        match self {
            BtrfsProfile::Raid0 => "raid0",
            BtrfsProfile::Raid1 => "raid1",
            BtrfsProfile::Raid10 => "raid10",
            BtrfsProfile::Raid5 => "raid5",
            BtrfsProfile::Raid6 => "raid6",
        }
    }
}

/// A ZFS top-level vdev type (the pool has one vdev of all members).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZfsVdev {
    Mirror,
    Raidz1,
    Raidz2,
}

impl ZfsVdev {
    pub fn name(self) -> &'static str {
        match self {
            ZfsVdev::Mirror => "mirror",
            ZfsVdev::Raidz1 => "raidz1",
            ZfsVdev::Raidz2 => "raidz2",
        }
    }
}

/// `Ok` when pools of this kind can be built here; else why not (for skip messages).
pub fn available(zfs: bool) -> Result<(), String> {
    crate::available()?;
    if !Path::new(BLKIO).join("blkio.throttle.write_bps_device").exists() {
        return Err(format!("no cgroup v1 blkio write throttling at {BLKIO}"));
    }
    let tools: &[&str] = if zfs { &["zfs-fuse", "zpool", "zfs"] } else { &["mkfs.btrfs", "btrfs"] };
    if let Some(t) = tools.iter().find(|t| which(t).is_none()) {
        return Err(format!("{t} is not installed (apt-get install {})", if zfs { "zfs-fuse" } else { "btrfs-progs" }));
    }
    if zfs && !Path::new("/dev/fuse").exists() {
        return Err("no /dev/fuse (zfs-fuse needs the FUSE driver)".into());
    }
    if !zfs && !std::fs::read_to_string("/proc/filesystems").is_ok_and(|f| f.contains("btrfs")) {
        return Err("this kernel has no btrfs".into());
    }
    Ok(())
}

/// Bytes-per-second caps on some block devices, written on the root blkio group and on
/// this process's own group (see the module's notes), removed on drop.
#[derive(Debug)]
pub struct Throttle {
    groups: Vec<PathBuf>,
    devs: Vec<(u32, u32)>,
}

impl Throttle {
    pub fn new(devs: &[PathBuf], read_bps: u64, write_bps: u64) -> io::Result<Throttle> {
        let mut groups = vec![PathBuf::from(BLKIO)];
        if let Some(own) = own_blkio_group().filter(|g| g.as_path() != Path::new(BLKIO)) {
            groups.push(own);
        }
        let devs = devs.iter().map(|d| dev_numbers(d)).collect::<io::Result<Vec<_>>>()?;
        let t = Throttle { groups, devs };
        t.write(read_bps, write_bps)?;
        Ok(t)
    }

    fn write(&self, read_bps: u64, write_bps: u64) -> io::Result<()> {
        for g in &self.groups {
            for (maj, min) in &self.devs {
                std::fs::write(g.join("blkio.throttle.read_bps_device"), format!("{maj}:{min} {read_bps}"))?;
                std::fs::write(g.join("blkio.throttle.write_bps_device"), format!("{maj}:{min} {write_bps}"))?;
            }
        }
        Ok(())
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // 0 removes a limit.
        let _ = self.write(0, 0);
    }
}

/// This process's blkio group directory, from /proc/self/cgroup ("7:blkio:/PATH").
fn own_blkio_group() -> Option<PathBuf> {
    let t = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = t.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',').any(|c| c == "blkio").then(|| path.trim_start_matches('/').to_string())
    })?;
    Some(Path::new(BLKIO).join(rel))
}

/// Sectors read and written by a block device so far (`/sys/block/NAME/stat`, 512-byte
/// units whatever the device's own sector size).
pub fn dev_bytes(dev: &Path) -> io::Result<(u64, u64)> {
    let name = dev.file_name().unwrap_or_default().to_string_lossy().to_string();
    let t = std::fs::read_to_string(Path::new("/sys/block").join(&name).join("stat"))?;
    let f: Vec<u64> = t.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    if f.len() < 7 {
        return Err(io::Error::other(format!("/sys/block/{name}/stat: unexpected {t:?}")));
    }
    Ok((f[2] * 512, f[6] * 512))
}

/// What a scrub did: its wall time and, where the tool says, the bytes it verified.
#[derive(Debug, Clone, Copy)]
pub struct Scrub {
    pub seconds: f64,
    /// btrfs: data + tree bytes scrubbed (`btrfs scrub status -R`); zfs: not reported.
    pub bytes: Option<u64>,
}

#[derive(Debug)]
enum Fs {
    Btrfs,
    Zfs { pool: String, daemon: Option<Child> },
}

/// A pool over `members` loop devices, mounted at `mnt`; torn down on drop (pool, daemon,
/// throttle, loop devices, files, in that order), also when a test panics.
#[derive(Debug)]
pub struct PoolRig {
    pub mnt: PathBuf,
    pub members: Vec<PathBuf>,
    fs: Fs,
    // Dropped after `Drop::drop` has taken the filesystem down: the throttle first, then the
    // rig's loop devices and files.
    throttle: Option<Throttle>,
    rig: Rig,
}

impl PoolRig {
    /// `n` loop devices over new files of `member_bytes`: sparse ones (disk space only as
    /// the pool writes it) or fully written ones.
    fn members(tag: &str, n: usize, member_bytes: u64, sparse: bool) -> io::Result<(Rig, Vec<PathBuf>)> {
        let mut rig = Rig::new(tag)?;
        let dir = rig.dir.clone();
        let mut members = Vec::new();
        for i in 0..n {
            let name = format!("m{i}.img");
            let f =
                if sparse { rig.sparse_file(&dir, &name, member_bytes)? } else { rig.file(&dir, &name, member_bytes)? };
            members.push(rig.loop_dev(&f)?);
        }
        Ok((rig, members))
    }

    /// `mkfs.btrfs -d PROFILE -m raid1` over `n` new loop devices of `member_bytes`,
    /// mounted from the first. The members' backing files are sparse: `mkfs.btrfs` discards
    /// the whole of every device first (a loop device punches the discarded range out of its
    /// file), so data written into them beforehand was thrown away, after taking
    /// `n * member_bytes` of disk at once (10 GiB for raid6 over 5 members of 2 GiB, which
    /// a CI machine did not have); btrfs reads only what it wrote.
    pub fn btrfs(profile: BtrfsProfile, n: usize, member_bytes: u64) -> io::Result<PoolRig> {
        let (rig, members) = Self::members(&format!("btrfs-{}", profile.name()), n, member_bytes, true)?;
        let mnt = rig.dir.join("mnt");
        std::fs::create_dir_all(&mnt)?;
        let p = PoolRig { mnt, members, fs: Fs::Btrfs, throttle: None, rig };
        run(Command::new("mkfs.btrfs").args(["-f", "-q", "-d", profile.name(), "-m", "raid1"]).args(&p.members))?;
        run(Command::new("mount").arg(&p.members[0]).arg(&p.mnt))?;
        Ok(p)
    }

    /// A zfs-fuse daemon of its own and a pool of one `vdev` over `n` new loop devices of
    /// `member_bytes` (ashift 12, as zpool picks for them), mounted under the rig's
    /// directory, with `primarycache=metadata` so reads of file data go to the members
    /// (zfs-fuse's ARC would otherwise serve re-reads of a small file).
    pub fn zfs(vdev: ZfsVdev, n: usize, member_bytes: u64) -> io::Result<PoolRig> {
        let (rig, members) = Self::members(&format!("zfs-{}", vdev.name()), n, member_bytes, false)?;
        let mnt = rig.dir.join("mnt");
        // The rig's own name (pid and counter): a pool left by an earlier rig never collides.
        let pool = rig.name.replace('-', "");
        wait_for_no_zfs_daemon(Duration::from_secs(30))?;
        let log = std::fs::File::create(rig.dir.join("zfs-fuse.log"))?;
        let daemon = Command::new("zfs-fuse")
            .arg("--no-daemon")
            .arg("--pidfile")
            .arg(rig.dir.join("zfs-fuse.pid"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let p = PoolRig { mnt, members, fs: Fs::Zfs { pool: pool.clone(), daemon: Some(daemon) }, throttle: None, rig };
        let t0 = Instant::now();
        while run(Command::new("zpool").arg("list")).is_err() {
            if t0.elapsed() > Duration::from_secs(20) {
                return Err(io::Error::other("zfs-fuse did not answer `zpool list` within 20 s"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        run(Command::new("zpool")
            // No cache file: nothing of the rig's pool outlives its daemon.
            .args(["create", "-f", "-o", "cachefile=none", "-m"])
            .arg(&p.mnt)
            .arg(&pool)
            .arg(vdev.name())
            .args(&p.members))?;
        run(Command::new("zfs").args(["set", "primarycache=metadata", &pool]))?;
        Ok(p)
    }

    /// Caps every member at `read_bps` and `write_bps` (replacing an earlier cap).
    pub fn throttle(&mut self, read_bps: u64, write_bps: u64) -> io::Result<()> {
        self.throttle = None;
        self.throttle = Some(Throttle::new(&self.members, read_bps, write_bps)?);
        Ok(())
    }

    /// Lifts the caps.
    pub fn unthrottle(&mut self) {
        self.throttle = None;
    }

    /// A fully written file of `bytes` in the pool (pseudo-random data, synced), then the
    /// pool synced so that its metadata is on the members too.
    pub fn data_file(&mut self, name: &str, bytes: u64) -> io::Result<PathBuf> {
        let mnt = self.mnt.clone();
        let f = self.rig.file(&mnt, name, bytes)?;
        self.sync()?;
        Ok(f)
    }

    /// Flushes the filesystem (btrfs: `btrfs filesystem sync`; zfs: `sync` of the mount).
    pub fn sync(&self) -> io::Result<()> {
        match &self.fs {
            Fs::Btrfs => run(Command::new("btrfs").args(["filesystem", "sync"]).arg(&self.mnt)).map(|_| ()),
            Fs::Zfs { .. } => run(Command::new("sync").arg("-f").arg(&self.mnt)).map(|_| ()),
        }
    }

    /// Bytes read and written by each member so far.
    pub fn member_bytes(&self) -> io::Result<Vec<(u64, u64)>> {
        self.members.iter().map(|m| dev_bytes(m)).collect()
    }

    /// Scrubs the pool and waits for the end, at most `limit`.
    pub fn scrub(&self, limit: Duration) -> io::Result<Scrub> {
        let t0 = Instant::now();
        match &self.fs {
            Fs::Btrfs => {
                let secs = limit.as_secs().max(1).to_string();
                run(Command::new("timeout").args([&secs, "btrfs", "scrub", "start", "-B"]).arg(&self.mnt))?;
                let seconds = t0.elapsed().as_secs_f64();
                let st = run(Command::new("btrfs").args(["scrub", "status", "-R"]).arg(&self.mnt))?;
                let field = |name: &str| {
                    st.lines()
                        .find_map(|l| l.trim().strip_prefix(name)?.trim().strip_prefix(':')?.trim().parse::<u64>().ok())
                };
                let bytes = field("data_bytes_scrubbed").zip(field("tree_bytes_scrubbed")).map(|(d, t)| d + t);
                Ok(Scrub { seconds, bytes })
            }
            Fs::Zfs { pool, .. } => {
                run(Command::new("zpool").args(["scrub", pool]))?;
                loop {
                    let st = run(Command::new("zpool").args(["status", pool]))?;
                    if !st.contains("in progress") {
                        if !st.contains("scrub completed") {
                            return Err(io::Error::other(format!("zpool status after the scrub:\n{st}")));
                        }
                        return Ok(Scrub { seconds: t0.elapsed().as_secs_f64(), bytes: None });
                    }
                    if t0.elapsed() > limit {
                        let _ = run(Command::new("zpool").args(["scrub", "-s", pool]));
                        return Err(io::Error::other(format!("the scrub of {pool} took over {limit:?}")));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// Bytes the pool has allocated on its members, parity and padding included (zfs:
    /// `zpool list` ALLOC; btrfs: used bytes of every chunk type times its copies, from
    /// `btrfs filesystem usage -b`, "Used:" of the "Overall" section).
    pub fn allocated(&self) -> io::Result<u64> {
        match &self.fs {
            Fs::Btrfs => {
                let t = run(Command::new("btrfs").args(["filesystem", "usage", "-b"]).arg(&self.mnt))?;
                t.lines()
                    .find_map(|l| l.trim().strip_prefix("Used:")?.trim().parse().ok())
                    .ok_or_else(|| io::Error::other(format!("no Used: in btrfs filesystem usage:\n{t}")))
            }
            Fs::Zfs { pool, .. } => {
                let t = run(Command::new("zpool").args(["list", "-H", "-o", "alloc", pool]))?;
                parse_zfs_size(&t).ok_or_else(|| io::Error::other(format!("zpool list ALLOC: {t:?}")))
            }
        }
    }
}

/// "356M", "1.48G", "512K", "1234" as bytes (zpool's human sizes are binary).
fn parse_zfs_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<f64>().ok().map(|v| (v * mult as f64) as u64)
}

/// Waits until no zfs-fuse daemon answers on the fixed socket (another test's), at most
/// `limit`.
fn wait_for_no_zfs_daemon(limit: Duration) -> io::Result<()> {
    let t0 = Instant::now();
    while Path::new(ZFS_SOCKET).exists() && run(Command::new("zpool").arg("list")).is_ok() {
        if t0.elapsed() > limit {
            return Err(io::Error::other(format!(
                "another zfs-fuse daemon answers on {ZFS_SOCKET}; stop it (its pools would be mixed with the rig's)"
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

impl Drop for PoolRig {
    fn drop(&mut self) {
        match &mut self.fs {
            Fs::Btrfs => {
                for _ in 0..40 {
                    if run(Command::new("umount").arg(&self.mnt)).is_ok() || !is_mounted(&self.mnt) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Fs::Zfs { pool, daemon } => {
                // The daemon must stay up until the pool is destroyed (it is the pool's kernel).
                // A file closed just before may still be open in the daemon (FUSE sends its
                // release asynchronously): "pool is busy" for a moment. Unmount first; the
                // pool has no cache file, so one that cannot be destroyed dies with its daemon.
                let _ = run(Command::new("timeout").args(["30", "zfs", "umount", "-f", pool.as_str()]));
                for i in 0..10 {
                    match run(Command::new("timeout").args(["30", "zpool", "destroy", "-f", pool.as_str()])) {
                        Ok(_) => break,
                        Err(e) if i == 9 => eprintln!("rig teardown: {e}"),
                        Err(_) => std::thread::sleep(Duration::from_millis(200)),
                    }
                }
                if let Some(mut d) = daemon.take() {
                    let pid = rustix::process::Pid::from_child(&d);
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                    let t0 = Instant::now();
                    while !matches!(d.try_wait(), Ok(Some(_))) {
                        if t0.elapsed() > Duration::from_secs(10) {
                            let _ = d.kill();
                            let _ = d.wait();
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                if is_mounted(&self.mnt) {
                    let _ = run(Command::new("umount").arg("-l").arg(&self.mnt));
                }
            }
        }
        // Then `throttle` and `rig` drop, in that order.
    }
}

fn is_mounted(p: &Path) -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .is_ok_and(|m| m.lines().any(|l| l.split_whitespace().nth(1) == Some(&*p.to_string_lossy())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zpool_sizes_are_binary() {
        assert_eq!(parse_zfs_size("356M"), Some(356 << 20));
        assert_eq!(parse_zfs_size("1.50G"), Some(3 << 29));
        assert_eq!(parse_zfs_size("512K"), Some(512 << 10));
        assert_eq!(parse_zfs_size("4096"), Some(4096));
        assert_eq!(parse_zfs_size("lots"), None);
    }
}
