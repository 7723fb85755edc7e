//! # iopath-test-support: what iopath's tests need and the program never does
//!
//! A dev-dependency only (never a dependency of the `iopath` binary or a library): skips
//! that fail under CI ([`skip`]), a disk-backed scratch directory ([`scratch_dir`]), and
//! test rigs with known limits: loop devices over fully written files, ext4 on a loop
//! device (a shared "uplink"), and cgroup v1 blkio throttles (root only). It uses no
//! `unsafe` and no libc: system calls go through `rustix`'s safe wrappers, tools are run as
//! commands. [`retry::best_within`] measures a capped rate again while it falls short.
//!
//! A [`Rig`] records every step it takes (files, loop devices, mounts, cgroups) and undoes
//! them in reverse order when dropped, also when a test panics. Names carry the process
//! id and a counter, so rigs of tests running in parallel do not collide.
//!
//! ```text
//!   [cgroup NAME: read_bps on loopO = uplink cap, on loopA/loopB = drive caps]
//!        iopath measure --target /dev/loopA --target /dev/loopB
//!                 |                 |
//!              loopA             loopB        inner loop devices (--direct-io=on)
//!                 \_____ ext4 ______/
//!                        loopO                outer loop device over a scratch file
//! ```

pub mod net;
pub mod pools;
pub mod retry;

pub use retry::{around, within};

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory on a disk-backed filesystem (not tmpfs) for scratch files:
/// `$IOPATH_SCRATCH`, then /var/tmp, /tmp, the system temp dir.
pub fn scratch_dir() -> PathBuf {
    let mut c: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("IOPATH_SCRATCH") {
        c.push(p.into());
    }
    c.extend(["/var/tmp", "/tmp"].map(PathBuf::from));
    c.push(std::env::temp_dir());
    c.into_iter().find(|p| p.is_dir() && !is_memory_fs(p)).unwrap_or_else(std::env::temp_dir)
}

/// Whether `dir` is on tmpfs or ramfs (where `O_DIRECT` is refused).
pub fn is_memory_fs(dir: &Path) -> bool {
    const TMPFS_MAGIC: u64 = 0x0102_1994;
    const RAMFS_MAGIC: u64 = 0x8584_58f6;
    rustix::fs::statfs(dir).is_ok_and(|s| [TMPFS_MAGIC, RAMFS_MAGIC].contains(&(s.f_type as u64)))
}

/// Bytes this process may still write on the filesystem holding `dir` (root may use the
/// blocks a filesystem reserves for it, 5% of an ext4 by default; others may not).
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    let s = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    let blocks = if rustix::process::geteuid().is_root() { s.f_bfree } else { s.f_bavail };
    Ok(blocks.saturating_mul(s.f_frsize))
}

/// An error, before anything is written, when the filesystem of `dir` has less than
/// `bytes` free: a rig that fills the disk halfway fails with a bare "No space left on
/// device" from wherever it was, and may leave others' writes failing too. No margin is
/// added: a rig may fill a small filesystem of its own on purpose; a caller writing to the
/// machine's disk names the room it needs with its own headroom.
pub fn ensure_room(dir: &Path, bytes: u64, what: &str) -> io::Result<()> {
    let free = free_bytes(dir)?;
    if free < bytes {
        const MIB: u64 = 1 << 20;
        return Err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!(
                "{}: {} MiB free, and {what} needs {} MiB; free some space there, or set IOPATH_SCRATCH to a \
                 disk-backed directory with room",
                dir.display(),
                free / MIB,
                bytes.div_ceil(MIB)
            ),
        ));
    }
    Ok(())
}

/// `dir/name` for a loop device's backing file, refused on a memory filesystem (where
/// `O_DIRECT`, which the loop devices use, is refused).
fn backing_path(dir: &Path, name: &str) -> io::Result<PathBuf> {
    if is_memory_fs(dir) {
        return Err(io::Error::other(format!("{}: a memory filesystem; loop devices need a disk", dir.display())));
    }
    Ok(dir.join(name))
}

/// Reports a test that cannot run here. Locally it prints `skipped: WHY` (so a skip is
/// visible in `cargo test -- --nocapture` and in the captured output of a failure); under CI
/// (`CI` set, as `.ci/run` runs) it panics instead, because CI installs everything the tests
/// need and a skip there would hide a test that never ran.
pub fn skip(why: &str) {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("this test cannot run, and CI is set so a skip is a failure: {why}");
    }
    eprintln!("skipped: {why}");
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// `Ok` when loop devices and blkio throttles can be used; else why not (for skip messages).
pub fn available() -> Result<(), String> {
    if !is_root() {
        return Err("not root: loop devices and cgroups need root".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Err("no /dev/loop-control (loop driver missing)".into());
    }
    if which("losetup").is_none() || which("mkfs.ext4").is_none() {
        return Err("losetup or mkfs.ext4 not installed (apt-get install util-linux e2fsprogs)".into());
    }
    if !Path::new(BLKIO).join("blkio.throttle.read_bps_device").exists() {
        return Err(format!("no cgroup v1 blkio throttling at {BLKIO}"));
    }
    Ok(())
}

/// A headless-capable Chromium or Chrome at its usual Debian/Ubuntu path (the report page
/// tests render with it), if one is installed.
pub fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// The program's path on PATH or in /sbin, /usr/sbin (where root's tools live).
pub fn which(prog: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .chain(["/sbin", "/usr/sbin"].map(PathBuf::from))
            .map(|d| d.join(prog))
            .find(|f| f.is_file())
    })
}

pub(crate) fn run(cmd: &mut Command) -> io::Result<String> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!("{:?} failed: {}", cmd, String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Device numbers of a block device node.
pub fn dev_numbers(dev: &Path) -> io::Result<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dev)?;
    Ok((rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev())))
}

#[derive(Debug)]
enum Step {
    Dir(PathBuf),
    Loop(PathBuf),
    Mount(PathBuf),
    Cgroup(PathBuf),
}

/// A set of rig resources, torn down in reverse order on drop.
#[derive(Debug)]
pub struct Rig {
    pub name: String,
    /// Scratch directory of this rig.
    pub dir: PathBuf,
    steps: Vec<Step>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl Rig {
    /// A new rig with a scratch directory on a disk-backed filesystem.
    pub fn new(tag: &str) -> io::Result<Rig> {
        let name = format!("iopath-{tag}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let dir = scratch_dir().join(&name);
        std::fs::create_dir_all(&dir)?;
        Ok(Rig { name, dir: dir.clone(), steps: vec![Step::Dir(dir)] })
    }

    /// A fully written file of `size` bytes rounded up to whole MiB under `dir` (not
    /// sparse: pseudo-random bytes, synced), refused on a memory filesystem or over an
    /// existing file.
    pub fn file(&mut self, dir: &Path, name: &str, size: u64) -> io::Result<PathBuf> {
        const CHUNK: u64 = 1 << 20;
        let p = backing_path(dir, name)?;
        let bytes = size.div_ceil(CHUNK).max(1) * CHUNK;
        ensure_room(dir, bytes, &format!("the file {name}"))?;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&p)?;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ 42;
        let chunk: Vec<u8> = (0..CHUNK / 8)
            .flat_map(|_| {
                // xorshift64: incompressible enough that no device can shortcut the writes.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()
            })
            .collect();
        for _ in 0..size.div_ceil(CHUNK).max(1) {
            io::Write::write_all(&mut f, &chunk)?;
        }
        f.sync_all()?;
        Ok(p)
    }

    /// A sparse file of `size` bytes under `dir`: it takes disk space only as it is
    /// written. For the backing files of a filesystem's members, which it writes before it
    /// reads them (a read of a hole costs the backing disk nothing, so a rig that reads
    /// what it never wrote measures no disk): refused on a memory filesystem or over an
    /// existing file.
    pub fn sparse_file(&mut self, dir: &Path, name: &str, size: u64) -> io::Result<PathBuf> {
        let p = backing_path(dir, name)?;
        let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&p)?;
        f.set_len(size)?;
        Ok(p)
    }

    /// Attaches a loop device over `file` with direct I/O on.
    pub fn loop_dev(&mut self, file: &Path) -> io::Result<PathBuf> {
        let out = run(Command::new("losetup").args(["--find", "--show", "--direct-io=on"]).arg(file))?;
        let p = PathBuf::from(out);
        self.steps.push(Step::Loop(p.clone()));
        Ok(p)
    }

    /// Makes an ext4 filesystem on `dev` and mounts it on a new directory; returns it.
    pub fn ext4(&mut self, dev: &Path) -> io::Result<PathBuf> {
        run(Command::new("mkfs.ext4").args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"]).arg(dev))?;
        let mnt = self.dir.join(format!("mnt-{}", dev.file_name().unwrap_or_default().to_string_lossy()));
        std::fs::create_dir_all(&mnt)?;
        run(Command::new("mount").arg(dev).arg(&mnt))?;
        self.steps.push(Step::Mount(mnt.clone()));
        Ok(mnt)
    }

    /// Writes an ext4 signature-bearing filesystem on `dev` without mounting it.
    pub fn mkfs_ext4(&mut self, dev: &Path) -> io::Result<()> {
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(dev)).map(|_| ())
    }

    /// Mounts an existing filesystem on `dev` read-only; returns the mount point. Read-only,
    /// so that the kernel itself writes nothing to the device while it is mounted (ext4's
    /// journal and superblock updates would otherwise change it under a test's feet).
    pub fn mount(&mut self, dev: &Path) -> io::Result<PathBuf> {
        let mnt = self.dir.join(format!("m-{}", dev.file_name().unwrap_or_default().to_string_lossy()));
        std::fs::create_dir_all(&mnt)?;
        run(Command::new("mount").args(["-o", "ro"]).arg(dev).arg(&mnt))?;
        self.steps.push(Step::Mount(mnt.clone()));
        Ok(mnt)
    }

    /// A new blkio cgroup (v1).
    pub fn cgroup(&mut self) -> io::Result<Cgroup> {
        let p = Path::new(BLKIO).join(format!("{}-{}", self.name, self.steps.len()));
        std::fs::create_dir(&p)?;
        self.steps.push(Step::Cgroup(p.clone()));
        Ok(Cgroup { path: p })
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        while let Some(s) = self.steps.pop() {
            match s {
                Step::Cgroup(p) => {
                    // Move stragglers to the root, then remove (retry: exiting tasks linger).
                    if let Ok(t) = std::fs::read_to_string(p.join("cgroup.procs")) {
                        for pid in t.lines() {
                            let _ = std::fs::write(Path::new(BLKIO).join("cgroup.procs"), pid);
                        }
                    }
                    for _ in 0..50 {
                        if std::fs::remove_dir(&p).is_ok() {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                }
                Step::Mount(m) => {
                    for _ in 0..20 {
                        if run(Command::new("umount").arg(&m)).is_ok() {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                    let _ = std::fs::remove_dir(&m);
                }
                Step::Loop(d) => {
                    for _ in 0..20 {
                        if run(Command::new("losetup").arg("-d").arg(&d)).is_ok() {
                            break;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                }
                Step::Dir(d) => {
                    let _ = std::fs::remove_dir_all(&d);
                }
            }
        }
    }
}

/// A cgroup v1 blkio group; removed by its [`Rig`].
#[derive(Debug, Clone)]
pub struct Cgroup {
    pub path: PathBuf,
}

impl Cgroup {
    fn limit(&self, file: &str, dev: &Path, value: u64) -> io::Result<()> {
        let (maj, min) = dev_numbers(dev)?;
        std::fs::write(self.path.join(file), format!("{maj}:{min} {value}"))
    }
    /// Caps reads from `dev` at `bps` bytes per second.
    pub fn read_bps(&self, dev: &Path, bps: u64) -> io::Result<()> {
        self.limit("blkio.throttle.read_bps_device", dev, bps)
    }
    pub fn write_bps(&self, dev: &Path, bps: u64) -> io::Result<()> {
        self.limit("blkio.throttle.write_bps_device", dev, bps)
    }
    pub fn read_iops(&self, dev: &Path, iops: u64) -> io::Result<()> {
        self.limit("blkio.throttle.read_iops_device", dev, iops)
    }
    /// A command that moves itself into this cgroup, then execs `program args...`, so all
    /// of its I/O is throttled (the test harness itself stays outside).
    pub fn command(&self, program: &Path) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"echo $$ > "$IOPATH_CGROUP_PROCS" && exec "$0" "$@""#)
            .arg(program)
            .env("IOPATH_CGROUP_PROCS", self.path.join("cgroup.procs"));
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_dir_is_not_tmpfs() {
        let d = scratch_dir();
        assert!(d.is_dir());
        if is_memory_fs(&d) {
            eprintln!("note: every candidate scratch dir is a memory filesystem here");
        }
    }

    #[test]
    fn a_rig_larger_than_the_free_space_is_refused_before_it_writes() {
        let d = scratch_dir();
        let free = free_bytes(&d).unwrap();
        // A gigabyte more than is free: other writers on the machine do not free that much
        // between the two calls.
        let e = ensure_room(&d, free + (1 << 30), "a rig larger than the disk").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        let msg = e.to_string();
        assert!(msg.contains("IOPATH_SCRATCH") && msg.contains(&d.display().to_string()), "{msg}");
        ensure_room(&d, 0, "nothing").unwrap();
    }

    #[test]
    fn a_sparse_file_takes_no_disk_until_written() {
        if is_memory_fs(&scratch_dir()) {
            return eprintln!("skipped: the scratch dir is a memory filesystem");
        }
        let mut rig = Rig::new("sparse").unwrap();
        let dir = rig.dir.clone();
        let p = rig.sparse_file(&dir, "s.img", 1 << 30).unwrap();
        let st = rustix::fs::stat(&p).unwrap();
        assert_eq!(st.st_size, 1 << 30);
        // st_blocks counts 512-byte units actually allocated.
        assert!((st.st_blocks as u64) * 512 < 1 << 20, "{} blocks allocated", st.st_blocks);
        assert!(rig.sparse_file(&dir, "s.img", 1).is_err(), "an existing file is not replaced");
    }
}
