//! The write gate: nothing writes to a block device that this module has not cleared.
//!
//! Reading is always allowed. Writing needs `--allow-write`; for a block device it also
//! needs, in this order (every refusal says why, what is on the device, and what to do):
//!
//! 1. not mounted, checked in `/proc/self/mountinfo` by device number, including its
//!    partitions and the devices stacked on it (`slaves/`), as nwipe does — refused always;
//! 2. not active swap (`/proc/swaps`) — refused always;
//! 3. no holders (`holders/` of the device and of its partitions: dm, md, bcache) —
//!    refused always;
//! 4. `open(O_RDWR|O_EXCL)` succeeds — EBUSY means mounted or held by the kernel or another
//!    exclusive opener, refused always; the descriptor is kept for the whole run, so the
//!    device cannot be mounted underneath the run;
//! 5. no partition table or filesystem/RAID/LVM/crypto signature (probed as blkid does) —
//!    refused unless `--destroy-data-on` names this exact device (same device number).
//!
//! Refusals exit with code 2.

use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalKind {
    /// The workload writes but `--allow-write` was not given.
    NotAllowed,
    Mounted,
    Swap,
    Held,
    Busy,
    Signature,
    /// `--destroy-data-on` was given but names no write target, or without --allow-write.
    BadDestroyFlag,
}

/// A refused write, with what was found and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to write to {device}: {reason}\n  found: {found}\n  to proceed: {fix}")]
pub struct Refusal {
    pub device: PathBuf,
    pub kind: RefusalKind,
    pub reason: String,
    pub found: String,
    pub fix: String,
}

/// A signature found on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// "ext4 filesystem", "GPT partition table", ...
    pub what: &'static str,
    /// Byte offset of the magic.
    pub offset: u64,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} signature at byte {}", self.what, self.offset)
    }
}

fn read_at(f: &File, off: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let mut got = 0;
    while got < len {
        match f.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    buf.truncate(got);
    buf
}

/// Probes the well-known magic numbers of partition tables, filesystems, RAID, LVM,
/// crypto and swap (the offsets libblkid uses), in a device or image of `size` bytes.
pub fn probe_signatures(f: &File, size: u64) -> Vec<Signature> {
    let head = read_at(f, 0, 256 * 1024);
    let at = |off: usize, magic: &[u8]| -> bool {
        head.len() >= off + magic.len() && &head[off..off + magic.len()] == magic
    };
    let mut found = Vec::new();
    let mut add = |what: &'static str, offset: u64| found.push(Signature { what, offset });

    // Partition tables.
    for lba in [512usize, 4096] {
        if at(lba, b"EFI PART") {
            add("GPT partition table", lba as u64);
        }
    }
    if size >= 512 {
        let tail = read_at(f, size - 512, 512);
        if tail.starts_with(b"EFI PART") {
            add("GPT backup partition table", size - 512);
        }
    }
    // Filesystems with a boot sector carry 0x55AA too; name them before the MBR.
    let ntfs = at(3, b"NTFS    ");
    let fat = at(82, b"FAT32   ") || at(54, b"FAT12   ") || at(54, b"FAT16   ") || at(54, b"FAT");
    if ntfs {
        add("NTFS filesystem", 3);
    }
    if at(82, b"FAT32   ") {
        add("FAT32 filesystem", 82);
    } else if fat {
        add("FAT filesystem", 54);
    }
    if at(510, &[0x55, 0xAA]) && !ntfs && !fat {
        add("MBR (DOS) partition table", 510);
    }
    // Filesystems.
    if at(1080, &[0x53, 0xEF]) {
        add("ext2/3/4 filesystem", 1080);
    }
    if at(0, b"XFSB") {
        add("XFS filesystem", 0);
    }
    if at(65600, b"_BHRfS_M") {
        add("btrfs filesystem", 65600);
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if at(page - 10, b"SWAPSPACE2") || at(page - 10, b"SWAP-SPACE") {
            add("Linux swap", (page - 10) as u64);
        }
    }
    if at(32769, b"CD001") {
        add("ISO 9660 filesystem", 32769);
    }
    // LVM, RAID, crypto.
    for sector in 0..4usize {
        if at(sector * 512, b"LABELONE") {
            add("LVM2 physical volume", (sector * 512) as u64);
        }
    }
    let md_magic = 0xa92b_4efcu32.to_le_bytes();
    if at(0, &md_magic) {
        add("Linux RAID (md 1.1) superblock", 0);
    }
    if at(4096, &md_magic) {
        add("Linux RAID (md 1.2) superblock", 4096);
    }
    if size >= 128 * 1024 {
        let off090 = (size & !(65536 - 1)) - 65536;
        let b = read_at(f, off090, 4);
        if b == md_magic || b == 0xa92b_4efcu32.to_be_bytes() {
            add("Linux RAID (md 0.90) superblock", off090);
        }
        let off10 = ((size / 512 - 16) & !7) * 512;
        if read_at(f, off10, 4) == md_magic {
            add("Linux RAID (md 1.0) superblock", off10);
        }
    }
    if at(0, b"LUKS\xba\xbe") {
        add("LUKS encrypted volume", 0);
    }
    // ZFS: uberblocks in label 0 from 128 KiB, 1 KiB apart.
    let zfs_le = 0x00ba_b10cu64.to_le_bytes();
    let zfs_be = 0x00ba_b10cu64.to_be_bytes();
    for i in 0..128usize {
        let off = 128 * 1024 + i * 1024;
        if at(off, &zfs_le) || at(off, &zfs_be) {
            add("ZFS pool label (uberblock)", off as u64);
            break;
        }
    }
    found
}

/// A mount in `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dev: (u32, u32),
    pub mount_point: String,
    pub fstype: String,
    pub source: String,
}

/// Parses mountinfo text.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let mut v = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 7 {
            continue;
        }
        let Some((a, b)) = f[2].split_once(':') else {
            continue;
        };
        let (Ok(maj), Ok(min)) = (a.parse(), b.parse()) else {
            continue;
        };
        let sep = f.iter().position(|x| *x == "-");
        let (fstype, source) = match sep {
            Some(i) => (f.get(i + 1).unwrap_or(&"").to_string(), f.get(i + 2).unwrap_or(&"").to_string()),
            None => (String::new(), String::new()),
        };
        v.push(Mount { dev: (maj, min), mount_point: unescape_mount(f[4]), fstype, source: unescape_mount(&source) });
    }
    v
}

fn unescape_mount(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

fn read_dev(p: &Path) -> Option<(u32, u32)> {
    let t = std::fs::read_to_string(p).ok()?;
    let (a, b) = t.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Whether block device `dev` is, or sits on top of, `candidate`: equal, a partition of it,
/// or (recursively through `slaves/`) built from it. `sysfs` is the sysfs root.
pub fn depends_on(sysfs: &Path, dev: (u32, u32), candidate: (u32, u32), depth: u32) -> bool {
    if dev == candidate {
        return true;
    }
    if depth > 32 {
        return false;
    }
    let Ok(real) = std::fs::canonicalize(sysfs.join(format!("dev/block/{}:{}", dev.0, dev.1))) else {
        return false;
    };
    if real.join("partition").exists()
        && let Some(parent) = real.parent().and_then(|p| read_dev(&p.join("dev")))
        && depends_on(sysfs, parent, candidate, depth + 1)
    {
        return true;
    }
    if let Ok(rd) = std::fs::read_dir(real.join("slaves")) {
        for e in rd.flatten() {
            if let Some(s) = read_dev(&e.path().join("dev"))
                && depends_on(sysfs, s, candidate, depth + 1)
            {
                return true;
            }
        }
    }
    false
}

/// Holders of the device and of its partitions (names under `holders/`).
pub fn holders(sysfs: &Path, dev: (u32, u32)) -> Vec<String> {
    let mut v = Vec::new();
    let Ok(real) = std::fs::canonicalize(sysfs.join(format!("dev/block/{}:{}", dev.0, dev.1))) else {
        return v;
    };
    let mut dirs = vec![real.clone()];
    if let Ok(rd) = std::fs::read_dir(&real) {
        for e in rd.flatten() {
            if e.path().join("partition").exists() {
                dirs.push(e.path());
            }
        }
    }
    for d in dirs {
        if let Ok(rd) = std::fs::read_dir(d.join("holders")) {
            for e in rd.flatten() {
                v.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    v
}

fn rdev_of(path: &Path) -> Option<(u32, u32)> {
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| (libc::major(m.rdev()), libc::minor(m.rdev())))
}

/// What the gate needs to know about the system; [`System::live`] reads the real one.
#[derive(Debug, Clone)]
pub struct System {
    pub sysfs: PathBuf,
    pub mountinfo: String,
    pub swaps: String,
}

impl System {
    pub fn live() -> System {
        System {
            sysfs: PathBuf::from("/sys"),
            mountinfo: std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
            swaps: std::fs::read_to_string("/proc/swaps").unwrap_or_default(),
        }
    }
}

/// A block device cleared for writing, with the `O_RDWR|O_EXCL|O_DIRECT` descriptor the run
/// must write through and keep open to the end.
#[derive(Debug)]
pub struct Cleared {
    pub path: PathBuf,
    pub dev: (u32, u32),
    /// Signatures that `--destroy-data-on` allowed the run to overwrite.
    pub destroyed: Vec<Signature>,
    pub file: File,
}

/// Checks that a block device may be written, given the devices named by
/// `--destroy-data-on`; on success returns the exclusive descriptor to write through.
pub fn check_block_write(sys: &System, path: &Path, destroy_ok: &[PathBuf]) -> Result<Cleared, Refusal> {
    let refuse = |kind, reason: String, found: String, fix: String| Refusal {
        device: path.to_path_buf(),
        kind,
        reason,
        found,
        fix,
    };
    let Some(dev) = rdev_of(path) else {
        return Err(refuse(
            RefusalKind::Busy,
            "it is not a block device".into(),
            "no block device at this path".into(),
            "name a block device such as /dev/sdb".into(),
        ));
    };
    // 1. Mounts (by device number, through partitions and stacked devices).
    let mounted: Vec<Mount> = parse_mountinfo(&sys.mountinfo)
        .into_iter()
        .filter(|m| {
            let mut d = m.dev;
            if d.0 == 0
                && m.source.starts_with("/dev/")
                && let Some(r) = rdev_of(Path::new(&m.source))
            {
                d = r; // btrfs and other anonymous-device filesystems
            }
            depends_on(&sys.sysfs, d, dev, 0)
        })
        .collect();
    if let Some(m) = mounted.first() {
        return Err(refuse(
            RefusalKind::Mounted,
            "it is mounted; iopath never writes to a mounted device, whatever the flags".into(),
            format!(
                "{} filesystem from {} mounted on {}{}",
                m.fstype,
                m.source,
                m.mount_point,
                if mounted.len() > 1 { format!(" (and {} more mounts)", mounted.len() - 1) } else { String::new() }
            ),
            format!("unmount it first (umount {}), or measure reads only (drop --allow-write)", m.mount_point),
        ));
    }
    // 2. Swap.
    for line in sys.swaps.lines().skip(1) {
        if let Some(p) = line.split_whitespace().next()
            && let Some(r) = rdev_of(Path::new(p))
            && depends_on(&sys.sysfs, r, dev, 0)
        {
            return Err(refuse(
                RefusalKind::Swap,
                "it is in use as swap".into(),
                format!("active swap on {p} (/proc/swaps)"),
                format!("turn the swap off first (swapoff {p}), or measure reads only"),
            ));
        }
    }
    // 3. Holders.
    let h = holders(&sys.sysfs, dev);
    if !h.is_empty() {
        return Err(refuse(
            RefusalKind::Held,
            "other block devices are built on it".into(),
            format!("holders: {} (device mapper, RAID, bcache...)", h.join(", ")),
            "stop those devices first (dmsetup remove, mdadm --stop), or measure reads only".into(),
        ));
    }
    // 4. Exclusive open.
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
        .map_err(|_| refuse(RefusalKind::Busy, "bad path".into(), "a NUL byte".into(), "fix the path".into()))?;
    // SAFETY: valid C string. This descriptor is the one the run writes through, so the
    // claim holds from the check to the end of the run.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_EXCL | libc::O_DIRECT | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::EBUSY) {
            refuse(
                RefusalKind::Busy,
                "it is busy: an exclusive open failed with EBUSY".into(),
                "mounted, or held by the kernel (RAID, LVM, swap) or by another program that opened it exclusively"
                    .into(),
                "find the user (lsblk, fuser -v, `ls /sys/class/block/NAME/holders`), stop it, and try again".into(),
            )
        } else {
            refuse(
                RefusalKind::Busy,
                format!("it cannot be opened exclusively: {e}"),
                "the open failed".into(),
                "check permissions and the path".into(),
            )
        });
    }
    // SAFETY: fd is ours.
    let file = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let size = crate::target::blk_size(std::os::fd::AsRawFd::as_raw_fd(&file)).unwrap_or(0);
    // 5. Signatures, read through a second, buffered descriptor (probes are unaligned).
    let sigs = match File::open(path) {
        Ok(probe) => probe_signatures(&probe, size),
        Err(e) => {
            return Err(refuse(
                RefusalKind::Busy,
                format!("it cannot be read to look for signatures: {e}"),
                "the probe failed".into(),
                "check permissions".into(),
            ));
        }
    };
    let named = destroy_ok.iter().any(|p| rdev_of(p) == Some(dev));
    if !sigs.is_empty() && !named {
        let list: Vec<String> = sigs.iter().map(|s| s.to_string()).collect();
        return Err(refuse(
            RefusalKind::Signature,
            "it holds data".into(),
            list.join("; "),
            format!(
                "if you mean to destroy everything on it, add --destroy-data-on {}; otherwise pick an empty device or a file",
                path.display()
            ),
        ));
    }
    Ok(Cleared { path: path.to_path_buf(), dev, destroyed: sigs, file })
}

/// Checks `--destroy-data-on` names: each must be a block device among the write targets.
pub fn check_destroy_flags(
    destroy_ok: &[PathBuf],
    write_targets: &[PathBuf],
    allow_write: bool,
) -> Result<(), Refusal> {
    for d in destroy_ok {
        let bad = |reason: String, fix: String| Refusal {
            device: d.clone(),
            kind: RefusalKind::BadDestroyFlag,
            reason,
            found: "--destroy-data-on".into(),
            fix,
        };
        if !allow_write {
            return Err(bad(
                "--destroy-data-on only matters together with --allow-write".into(),
                "add --allow-write, or drop --destroy-data-on".into(),
            ));
        }
        let Some(dd) = rdev_of(d) else {
            return Err(bad(
                "it is not a block device".into(),
                "name the block device, e.g. --destroy-data-on /dev/sdb".into(),
            ));
        };
        if !write_targets.iter().any(|t| rdev_of(t) == Some(dd)) {
            return Err(bad(
                "it is not one of the devices this workload writes".into(),
                "name exactly the device that is written (canonical path or a symlink to it)".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn image(writes: &[(u64, &[u8])], size: u64) -> (tempfile::NamedTempFile, File) {
        let mut t = tempfile::NamedTempFile::new().unwrap();
        t.as_file_mut().set_len(size).unwrap();
        for (off, b) in writes {
            t.as_file().write_at(b, *off).unwrap();
        }
        t.flush().unwrap();
        let f = t.reopen().unwrap();
        (t, f)
    }

    fn probe(writes: &[(u64, &[u8])]) -> Vec<Signature> {
        let size = 4 << 20;
        let (_t, f) = image(writes, size);
        probe_signatures(&f, size)
    }

    #[test]
    fn a_blank_image_has_no_signature() {
        assert!(probe(&[]).is_empty());
    }

    #[test]
    fn finds_each_well_known_magic() {
        let cases: &[(u64, &[u8], &str)] = &[
            (510, &[0x55, 0xAA], "MBR"),
            (512, b"EFI PART", "GPT"),
            (1080, &[0x53, 0xEF], "ext2/3/4"),
            (0, b"XFSB", "XFS"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (512, b"LABELONE", "LVM2"),
            (4096, &0xa92b_4efcu32.to_le_bytes(), "md 1.2"),
            (3, b"NTFS    ", "NTFS"),
            (82, b"FAT32   ", "FAT32"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (128 * 1024 + 3 * 1024, &0x00ba_b10cu64.to_le_bytes(), "ZFS"),
        ];
        for (off, magic, name) in cases {
            let s = probe(&[(*off, magic)]);
            assert!(s.iter().any(|x| x.what.contains(name) && x.offset == *off), "{name}: {s:?}");
        }
    }

    #[test]
    fn md_090_superblock_at_the_end() {
        let size = 4u64 << 20;
        let off = (size & !(65536 - 1)) - 65536;
        let (_t, f) = image(&[(off, &0xa92b_4efcu32.to_le_bytes())], size);
        let s = probe_signatures(&f, size);
        assert!(s.iter().any(|x| x.what.contains("0.90")), "{s:?}");
    }

    #[test]
    fn describes_a_signature_with_its_offset() {
        let s = probe(&[(1080, &[0x53, 0xEF])]);
        assert_eq!(s[0].to_string(), "ext2/3/4 filesystem signature at byte 1080");
    }

    #[test]
    fn parses_mountinfo_with_escapes() {
        let t = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n22 1 0:21 / /proc rw - proc proc rw\n";
        let m = parse_mountinfo(t);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].dev, (98, 0));
        assert_eq!(m[0].mount_point, "/mnt/my disk");
        assert_eq!(m[0].fstype, "ext3");
        assert_eq!(m[0].source, "/dev/root");
    }

    #[test]
    fn destroy_flag_needs_allow_write_and_a_block_device() {
        let e = check_destroy_flags(&["/dev/null".into()], &[], false).unwrap_err();
        assert_eq!(e.kind, RefusalKind::BadDestroyFlag);
        let e = check_destroy_flags(&["/etc/hostname".into()], &[], true).unwrap_err();
        assert!(e.reason.contains("not a block device"));
    }
}
