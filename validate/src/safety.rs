//! The write gate: nothing writes to a block device or an existing file that this module
//! has not cleared. It fails closed: what it cannot identify counts as data.
//!
//! Reading is always allowed. Writing needs permission to write (the CLI's `--allow-write`;
//! this module names each permission a refusal asks for as a [`Permission`], and the CLI
//! spells it as its option, [`Refusal::message`]); for a block device it also
//! needs, in this order (every refusal says why, what is on the device, and what to do):
//!
//! 1. not mounted, checked in `/proc/self/mountinfo` by device number, including its
//!    partitions and every device stacked on it (`slaves/`, and loop devices whose backing
//!    file is the device, recursively), as nwipe does — refused always;
//! 2. not active swap (`/proc/swaps`), through the same stack — refused always;
//! 3. no holders: `holders/` of the device and of its partitions (dm, md, bcache), and loop
//!    devices attached to it (loops fill no `slaves/` and claim nothing exclusively) —
//!    refused always;
//! 4. `open(O_RDWR|O_EXCL)` succeeds — EBUSY means mounted or held by the kernel or another
//!    exclusive opener, refused always; the descriptor is kept for the whole run, so the
//!    device cannot be mounted underneath the run;
//! 5. `flock(LOCK_EX|LOCK_NB)` on that descriptor succeeds (udev's convention: partitioning
//!    and formatting tools lock the device) — refused always; held for the run;
//! 6. no signature found by either of two independent layers: the system's libblkid
//!    ([`crate::blkid`], every superblock and partition-table probe it knows, as `wipefs`
//!    lists them) and the built-in probe below ([`probe_signatures`]) — refused unless
//!    `--destroy-data-on` names this exact device (same device number). When libblkid
//!    cannot be loaded or its probe fails, the device holds unidentified data: refused
//!    unless `--destroy-data-on` names it.
//!
//! An existing regular file that is written goes through [`check_file_write`]: refused
//! always when it backs a loop device (matched by `(st_dev, st_ino)` through
//! `LOOP_GET_STATUS64`) or is active swap; locked with `flock`; refused when either layer
//! finds a signature unless `--destroy-data-on` names it (same `(st_dev, st_ino)`).
//!
//! Refusals exit with code 2.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalKind {
    /// The workload writes but `--allow-write` was not given.
    NotAllowed,
    Mounted,
    Swap,
    /// Other devices are built on it, or (a file) it backs a loop device.
    Held,
    Busy,
    /// Another process holds a `flock` on it.
    Locked,
    /// A signature, or data that could not be identified.
    Signature,
    /// `--destroy-data-on` was given but names no write target, or without --allow-write.
    BadDestroyFlag,
}

/// A refused write, with what was found and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    pub device: PathBuf,
    pub kind: RefusalKind,
    pub reason: String,
    pub found: String,
    pub fix: Fix,
}

impl Refusal {
    /// The refusal in full, each permission named by `name` (the CLI's option names).
    pub fn message(&self, name: &dyn Fn(&Permission) -> String) -> String {
        format!(
            "refusing to write to {}: {}\n  found: {}\n  to proceed: {}",
            self.device.display(),
            self.reason,
            self.found,
            self.fix.render(name)
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(&Permission::words))
    }
}

/// A permission a refusal asks for (or asks to drop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// To write at all (the gate's first condition).
    Write,
    /// To destroy what is on this device or file; `None`: whatever it names.
    DestroyDataOn(Option<PathBuf>),
}

impl Permission {
    /// The permission in words, as a refusal reads without a front end's names.
    pub fn words(&self) -> String {
        match self {
            Permission::Write => "the permission to write".into(),
            Permission::DestroyDataOn(Some(p)) => format!("the permission to destroy the data on {}", p.display()),
            Permission::DestroyDataOn(None) => "the permission to destroy data".into(),
        }
    }
}

/// What to do: words, and the permissions among them, which a front end names its own way.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fix(pub Vec<FixPart>);

/// A piece of a [`Fix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixPart {
    Text(String),
    Permission(Permission),
}

impl Fix {
    /// Words, then a permission, then more words.
    pub fn around(before: &str, p: Permission, after: &str) -> Fix {
        Fix(vec![FixPart::Text(before.into()), FixPart::Permission(p), FixPart::Text(after.into())])
    }
    /// The fix with each permission named by `name`.
    pub fn render(&self, name: &dyn Fn(&Permission) -> String) -> String {
        self.0
            .iter()
            .map(|part| match part {
                FixPart::Text(t) => t.clone(),
                FixPart::Permission(p) => name(p),
            })
            .collect()
    }
}

impl From<String> for Fix {
    fn from(s: String) -> Fix {
        Fix(vec![FixPart::Text(s)])
    }
}

impl From<&str> for Fix {
    fn from(s: &str) -> Fix {
        Fix(vec![FixPart::Text(s.into())])
    }
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(&Permission::words))
    }
}

/// Which layer of the gate reported a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The system's libblkid.
    Blkid,
    /// iopath's own magic-number probe.
    Builtin,
    /// Nothing could be identified because libblkid failed: unidentified data.
    Unidentified,
}

/// A signature found on a device or file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// "ext4 filesystem", "GPT partition table", ...
    pub what: String,
    /// Byte offset of the magic, when known.
    pub offset: Option<u64>,
    pub by: Layer,
}

impl Signature {
    fn builtin(what: &str, offset: u64) -> Signature {
        Signature { what: what.to_string(), offset: Some(offset), by: Layer::Builtin }
    }
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.by, self.offset) {
            (Layer::Builtin, Some(o)) => write!(f, "{} signature at byte {o}", self.what),
            (Layer::Blkid, Some(o)) => write!(f, "libblkid: {} at byte {o}", self.what),
            (Layer::Blkid, None) => write!(f, "libblkid: {}", self.what),
            _ => write!(f, "{}", self.what),
        }
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
/// This layer is independent of libblkid: the gate refuses when either finds something.
pub fn probe_signatures(f: &File, size: u64) -> Vec<Signature> {
    let head = read_at(f, 0, 256 * 1024);
    let h = Head(&head);
    let mut found = Found(Vec::new());
    partition_tables(f, size, h, &mut found);
    filesystems(h, &mut found);
    volumes(f, size, h, &mut found);
    found.0
}

/// The first 256 KiB of a device, where every probed magic but a few tail ones lives.
#[derive(Clone, Copy)]
struct Head<'a>(&'a [u8]);

impl Head<'_> {
    /// Whether `magic` is at byte `off`.
    fn at(self, off: usize, magic: &[u8]) -> bool {
        self.0.len() >= off + magic.len() && &self.0[off..off + magic.len()] == magic
    }
    fn le16(self, off: usize) -> Option<u16> {
        self.0.get(off..off + 2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
}

/// What the probe found, in the order it looks.
struct Found(Vec<Signature>);

impl Found {
    fn add(&mut self, what: &str, offset: u64) {
        self.0.push(Signature::builtin(what, offset));
    }
}

/// GPT (primary and backup), and an MBR told apart from the boot sectors of FAT, NTFS and
/// exFAT, which carry 0x55AA too.
fn partition_tables(f: &File, size: u64, h: Head, found: &mut Found) {
    for lba in [512usize, 4096] {
        if h.at(lba, b"EFI PART") {
            found.add("GPT partition table", lba as u64);
        }
    }
    if size >= 512 {
        let tail = read_at(f, size - 512, 512);
        if tail.starts_with(b"EFI PART") {
            found.add("GPT backup partition table", size - 512);
        }
    }
    // Boot sectors of filesystems carry 0x55AA too: name them, and take 0x55AA for an MBR
    // only without one and with four plausible entries (boot flag 0x00 or 0x80), as
    // libblkid does.
    let ntfs = h.at(3, b"NTFS    ");
    let exfat = h.at(3, b"EXFAT   ");
    let fat = h.at(82, b"FAT32   ") || h.at(54, b"FAT12   ") || h.at(54, b"FAT16   ") || h.at(54, b"FAT");
    if ntfs {
        found.add("NTFS filesystem", 3);
    }
    if exfat {
        found.add("exFAT filesystem", 3);
    }
    if h.at(82, b"FAT32   ") {
        found.add("FAT32 filesystem", 82);
    } else if fat {
        found.add("FAT filesystem", 54);
    }
    let entries_ok = (0..4).all(|i| matches!(h.0.get(446 + 16 * i), Some(0x00 | 0x80)));
    if h.at(510, &[0x55, 0xAA]) && !ntfs && !fat && !exfat && entries_ok {
        found.add("MBR (DOS) partition table", 510);
    }
}

/// Filesystem superblocks and swap, at libblkid's offsets.
fn filesystems(h: Head, found: &mut Found) {
    if h.at(1080, &[0x53, 0xEF]) {
        found.add("ext2/3/4 filesystem", 1080);
    }
    if h.at(0, b"XFSB") {
        found.add("XFS filesystem", 0);
    }
    if h.at(65600, b"_BHRfS_M") {
        found.add("btrfs filesystem", 65600);
    }
    if h.at(1024, &0xF2F5_2010u32.to_le_bytes()) {
        found.add("F2FS filesystem", 1024);
    }
    if h.at(0, b"hsqs") || h.at(0, b"sqsh") {
        found.add("squashfs filesystem", 0);
    }
    for off in [0usize, 512] {
        if h.at(off, &0x28cd_3d45u32.to_le_bytes()) || h.at(off, &0x28cd_3d45u32.to_be_bytes()) {
            found.add("cramfs filesystem", off as u64);
        }
    }
    if h.at(0, &0x1bad_faceu32.to_le_bytes()) {
        found.add("BFS filesystem", 0);
    }
    if h.at(1024, &0xE0F5_E1E2u32.to_le_bytes()) {
        found.add("EROFS filesystem", 1024);
    }
    // nilfs2: a 16-bit magic, so also a plausible superblock length.
    if h.at(1030, &0x3434u16.to_le_bytes()) && h.le16(1032).is_some_and(|n| (256..=1024).contains(&n)) {
        found.add("NILFS2 filesystem", 1030);
    }
    if h.at(32768, b"JFS1") {
        found.add("JFS filesystem", 32768);
    }
    for base in [65536usize, 8192] {
        for m in [&b"ReIsErFs"[..], b"ReIsEr2Fs", b"ReIsEr3Fs"] {
            if h.at(base + 52, m) {
                found.add("ReiserFS filesystem", (base + 52) as u64);
            }
        }
    }
    if h.at(65536, b"ReIsEr4") {
        found.add("Reiser4 filesystem", 65536);
    }
    // Minix: 16-bit magics, so also a plausible superblock (inodes, zone size 0).
    let minix_sane = h.le16(1024).is_some_and(|n| n > 0) && h.le16(1034) == Some(0);
    for m in [0x137Fu16, 0x138F, 0x2468, 0x2478] {
        if minix_sane && (h.at(1040, &m.to_le_bytes()) || h.at(1040, &m.to_be_bytes())) {
            found.add("Minix filesystem", 1040);
        }
    }
    if h.at(1048, &0x4d5au16.to_le_bytes()) && h.le16(1036) == Some(0) && h.0.get(1024..1028) != Some(&[0; 4]) {
        found.add("Minix v3 filesystem", 1048);
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if h.at(page - 10, b"SWAPSPACE2") || h.at(page - 10, b"SWAP-SPACE") {
            found.add("Linux swap", (page - 10) as u64);
        }
    }
    if h.at(32769, b"CD001") {
        found.add("ISO 9660 filesystem", 32769);
    }
    // UDF: the volume recognition sequence from 32 KiB, one descriptor per 2 KiB (or per
    // block, for blocks up to 4 KiB); look at every 512-byte step.
    if let Some(off) = (0..128usize)
        .map(|i| 32768 + i * 512)
        .find(|&o| h.at(o + 1, b"NSR02") || h.at(o + 1, b"NSR03") || h.at(o + 1, b"BEA01") || h.at(o + 1, b"TEA01"))
    {
        found.add("UDF filesystem (volume recognition sequence)", off as u64 + 1);
    }
}

/// LVM, md RAID (all four superblock versions, two at the device's end), LUKS, bcache, ZFS.
fn volumes(f: &File, size: u64, h: Head, found: &mut Found) {
    for sector in 0..4usize {
        if h.at(sector * 512, b"LABELONE") {
            found.add("LVM2 physical volume", (sector * 512) as u64);
        }
    }
    let md_magic = 0xa92b_4efcu32.to_le_bytes();
    if h.at(0, &md_magic) {
        found.add("Linux RAID (md 1.1) superblock", 0);
    }
    if h.at(4096, &md_magic) {
        found.add("Linux RAID (md 1.2) superblock", 4096);
    }
    if size >= 128 * 1024 {
        let off090 = (size & !(65536 - 1)) - 65536;
        let b = read_at(f, off090, 4);
        if b == md_magic || b == 0xa92b_4efcu32.to_be_bytes() {
            found.add("Linux RAID (md 0.90) superblock", off090);
        }
        let off10 = ((size / 512 - 16) & !7) * 512;
        if read_at(f, off10, 4) == md_magic {
            found.add("Linux RAID (md 1.0) superblock", off10);
        }
    }
    if h.at(0, b"LUKS\xba\xbe") {
        found.add("LUKS encrypted volume", 0);
    }
    if h.at(16384, b"SKUL\xba\xbe") {
        found.add("LUKS2 secondary header", 16384);
    }
    const BCACHE: [u8; 16] =
        [0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81];
    if h.at(4096 + 24, &BCACHE) {
        found.add("bcache superblock", 4096 + 24);
    }
    // ZFS: uberblocks in label 0 from 128 KiB, 1 KiB apart.
    let zfs_le = 0x00ba_b10cu64.to_le_bytes();
    let zfs_be = 0x00ba_b10cu64.to_be_bytes();
    for i in 0..128usize {
        let off = 128 * 1024 + i * 1024;
        if h.at(off, &zfs_le) || h.at(off, &zfs_be) {
            found.add("ZFS pool label (uberblock)", off as u64);
            break;
        }
    }
}

/// Both layers on an open file or device of `size` bytes: libblkid's findings, then the
/// built-in probe's. When libblkid fails, an [`Layer::Unidentified`] entry says so, so
/// the result is never empty unless both layers looked and found nothing.
pub fn probe_all(f: &File, size: u64) -> Vec<Signature> {
    let mut v: Vec<Signature> = match crate::blkid::probe_fd(f.as_raw_fd()) {
        Ok(found) => found
            .into_iter()
            .map(|b| Signature {
                what: format!(
                    "{} ({}{})",
                    b.kind,
                    b.usage,
                    b.label.map(|l| format!(", label {l:?}")).unwrap_or_default()
                ),
                offset: b.offset,
                by: Layer::Blkid,
            })
            .collect(),
        Err(e) => vec![Signature {
            what: format!("unidentified data: {e}, so nothing on it can be ruled out"),
            offset: None,
            by: Layer::Unidentified,
        }],
    };
    v.extend(probe_signatures(f, size));
    v
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

/// Decodes the kernel's escapes in a mountinfo field (`mangle` in fs/proc_namespace.c writes
/// space, tab, newline, backslash and `#` as `\ooo`): any backslash and three octal digits is
/// that byte.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b.get(i + 1..i + 4).filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(d) => {
                out.push(d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0')) as u8);
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn read_dev(p: &Path) -> Option<(u32, u32)> {
    let t = std::fs::read_to_string(p).ok()?;
    let (a, b) = t.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// A bound loop device and what it sits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopDev {
    /// `/dev/loopN`.
    pub path: PathBuf,
    pub dev: (u32, u32),
    /// `loop/backing_file` as sysfs shows it (for messages).
    pub backing_file: String,
    /// `(st_dev, st_ino)` of the backing inode.
    pub backing_inode: Option<Inode>,
    /// Device number of the backing inode when it is a block device.
    pub backing_rdev: Option<(u32, u32)>,
}

/// `(st_dev, st_ino)` of a file.
pub type Inode = ((u32, u32), u64);

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdev: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

fn split_dev(d: u64) -> (u32, u32) {
    (libc::major(d as libc::dev_t), libc::minor(d as libc::dev_t))
}

/// The backing inode of a bound loop device node, from `LOOP_GET_STATUS64`:
/// `((st_dev, st_ino), rdev)`.
fn loop_status(node: &Path) -> Option<(Inode, (u32, u32))> {
    let f = File::open(node).ok()?;
    // SAFETY: the struct is plain data (integers and byte arrays): all zeroes is valid.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one `loop_info64`, the layout `LoopInfo64` mirrors,
    // into memory we own; `f` stays open for the call.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    (r == 0).then(|| ((split_dev(info.lo_device), info.lo_inode), split_dev(info.lo_rdev)))
}

fn loop_at(sysfs_dir: &Path) -> Option<LoopDev> {
    let name = sysfs_dir.file_name()?.to_string_lossy().into_owned();
    let backing_file = std::fs::read_to_string(sysfs_dir.join("loop/backing_file")).ok()?.trim_end().to_string();
    let dev = read_dev(&sysfs_dir.join("dev"))?;
    let node = PathBuf::from("/dev").join(&name);
    let (backing_inode, backing_rdev) = match (rdev_of(&node) == Some(dev)).then(|| loop_status(&node)).flatten() {
        Some((ino, rdev)) => (Some(ino), Some(rdev).filter(|r| *r != (0, 0))),
        // No node or no ioctl (a fixture tree): the backing file's path, as sysfs says it.
        None => match std::fs::metadata(&backing_file) {
            Ok(m) => {
                (Some((split_dev(m.dev()), m.ino())), m.file_type().is_block_device().then(|| split_dev(m.rdev())))
            }
            Err(_) => (None, None),
        },
    };
    Some(LoopDev { path: node, dev, backing_file, backing_inode, backing_rdev })
}

/// Every bound loop device under `sysfs`.
pub fn loop_devices(sysfs: &Path) -> Vec<LoopDev> {
    let Ok(rd) = std::fs::read_dir(sysfs.join("block")) else {
        return Vec::new();
    };
    let mut v: Vec<LoopDev> = rd.flatten().filter_map(|e| loop_at(&e.path())).collect();
    v.sort_by_key(|l| l.dev);
    v
}

/// Whether block device `dev` is, or sits on top of, `candidate`: equal, a partition of it,
/// or (recursively through `slaves/` and loop devices' backing devices) built from it.
/// `sysfs` is the sysfs root.
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
    // A loop device fills no slaves/: follow its backing block device.
    if real.join("loop").is_dir()
        && let Some(b) = loop_at(&real).and_then(|l| l.backing_rdev)
        && depends_on(sysfs, b, candidate, depth + 1)
    {
        return true;
    }
    false
}

/// Holders of the device and of its partitions (names under `holders/`), and every loop
/// device stacked on it, directly or through other loops (`/dev/loopN (backing file F)`).
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
    for l in loop_devices(sysfs) {
        if l.dev != dev && depends_on(sysfs, l.dev, dev, 0) {
            v.push(format!("loop device {} (backing file {})", l.path.display(), l.backing_file));
        }
    }
    v
}

fn rdev_of(path: &Path) -> Option<(u32, u32)> {
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| (libc::major(m.rdev()), libc::minor(m.rdev())))
}

/// What a path names, for comparing `--destroy-data-on` with targets: a block device by
/// its number, a regular file by `(st_dev, st_ino)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    Block((u32, u32)),
    File((u32, u32), u64),
}

/// The identity of an existing block device or regular file.
pub fn identity(path: &Path) -> Option<Identity> {
    let m = std::fs::metadata(path).ok()?;
    let ft = m.file_type();
    if ft.is_block_device() {
        Some(Identity::Block(split_dev(m.rdev())))
    } else if ft.is_file() {
        Some(Identity::File(split_dev(m.dev()), m.ino()))
    } else {
        None
    }
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

    fn swap_paths(&self) -> Vec<String> {
        self.swaps.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(unescape_mount).collect()
    }

    /// Mounts of `dev` or of anything stacked on it.
    fn mounts_on(&self, dev: (u32, u32)) -> Vec<Mount> {
        parse_mountinfo(&self.mountinfo)
            .into_iter()
            .filter(|m| {
                let mut d = m.dev;
                if d.0 == 0
                    && m.source.starts_with("/dev/")
                    && let Some(r) = rdev_of(Path::new(&m.source))
                {
                    d = r; // btrfs and other anonymous-device filesystems
                }
                depends_on(&self.sysfs, d, dev, 0)
            })
            .collect()
    }
}

/// A block device or file cleared for writing, with the descriptor the run must write
/// through and keep open to the end (it holds the `O_EXCL` claim and the `flock`).
#[derive(Debug)]
pub struct Cleared {
    pub path: PathBuf,
    pub dev: (u32, u32),
    /// Signatures that `--destroy-data-on` allowed the run to overwrite.
    pub destroyed: Vec<Signature>,
    pub file: File,
    /// The file's filesystem refused `O_DIRECT`, so it was opened through the page cache.
    pub buffered: bool,
}

fn refusal(path: &Path, kind: RefusalKind, reason: String, found: String, fix: impl Into<Fix>) -> Refusal {
    Refusal { device: path.to_path_buf(), kind, reason, found, fix: fix.into() }
}

fn mounted_refusal(path: &Path, mounted: &[Mount]) -> Refusal {
    let m = &mounted[0];
    refusal(
        path,
        RefusalKind::Mounted,
        "it is mounted; iopath never writes to a mounted device, whatever the flags".into(),
        format!(
            "{} filesystem from {} mounted on {}{}",
            m.fstype,
            m.source,
            m.mount_point,
            if mounted.len() > 1 { format!(" (and {} more mounts)", mounted.len() - 1) } else { String::new() }
        ),
        Fix::around(
            &format!("unmount it first (umount {}), or measure reads only (drop ", m.mount_point),
            Permission::Write,
            ")",
        ),
    )
}

fn open_raw(path: &Path, flags: libc::c_int) -> std::io::Result<File> {
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path contains a NUL byte"))?;
    loop {
        // SAFETY: valid C string.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: fd is ours.
            return Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// `flock(LOCK_EX|LOCK_NB)`, retried for up to a second (udev takes a shared lock for a
/// moment while it probes a device that was just closed after writing).
fn lock(path: &Path, f: &File) -> Result<(), Refusal> {
    let t0 = std::time::Instant::now();
    loop {
        // SAFETY: flock on our descriptor.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) if t0.elapsed() < std::time::Duration::from_secs(1) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Some(libc::EWOULDBLOCK) => {
                return Err(refusal(
                    path,
                    RefusalKind::Locked,
                    "another program holds a lock on it (flock)".into(),
                    "a flock(2) lock: another iopath run, or a partitioning or formatting tool (udev's convention)"
                        .into(),
                    format!("wait until it is done (find it with `lslocks` or `fuser -v {}`)", path.display()),
                ));
            }
            Some(libc::EINTR) => {}
            _ => {
                return Err(refusal(
                    path,
                    RefusalKind::Locked,
                    format!("it cannot be locked: {e}"),
                    "flock(LOCK_EX) failed".into(),
                    String::from("check the path and the filesystem"),
                ));
            }
        }
    }
}

/// Runs both probe layers through a second, buffered descriptor to the same open file
/// (probes are unaligned reads), and refuses unless `named`.
fn check_signatures(path: &Path, file: &File, size: u64, named: bool) -> Result<Vec<Signature>, Refusal> {
    let again = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let probe = File::open(&again).or_else(|_| File::open(path)).map_err(|e| {
        refusal(
            path,
            RefusalKind::Busy,
            format!("it cannot be read to look for signatures: {e}"),
            "the probe failed".into(),
            String::from("check permissions"),
        )
    })?;
    let sigs = probe_all(&probe, size);
    if !sigs.is_empty() && !named {
        let unidentified = sigs.iter().all(|s| s.by == Layer::Unidentified);
        let list: Vec<String> = sigs.iter().map(|s| s.to_string()).collect();
        return Err(refusal(
            path,
            RefusalKind::Signature,
            if unidentified {
                "what it holds cannot be identified, so it counts as data".into()
            } else {
                "it holds data".into()
            },
            list.join("; "),
            Fix::around(
                "if you mean to destroy everything on it, add ",
                Permission::DestroyDataOn(Some(path.to_path_buf())),
                &format!(
                    "; otherwise pick an empty device or a new file{}",
                    if unidentified { " (or install libblkid: Debian's libblkid1, from util-linux)" } else { "" }
                ),
            ),
        ));
    }
    Ok(sigs)
}

/// Checks that a block device may be written, given the devices named by
/// `--destroy-data-on`; on success returns the exclusive, locked descriptor to write through.
pub fn check_block_write(sys: &System, path: &Path, destroy_ok: &[PathBuf]) -> Result<Cleared, Refusal> {
    let refuse = |kind, reason: String, found: String, fix: String| refusal(path, kind, reason, found, fix);
    let Some(dev) = rdev_of(path) else {
        return Err(refuse(
            RefusalKind::Busy,
            "it is not a block device".into(),
            "no block device at this path".into(),
            "name a block device such as /dev/sdb".into(),
        ));
    };
    // 1. Mounts (by device number, through partitions and stacked devices and loops).
    let mounted = sys.mounts_on(dev);
    if !mounted.is_empty() {
        return Err(mounted_refusal(path, &mounted));
    }
    // 2. Swap.
    for p in sys.swap_paths() {
        if let Some(r) = rdev_of(Path::new(&p))
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
    // 3. Holders, loop devices on it included.
    let h = holders(&sys.sysfs, dev);
    if !h.is_empty() {
        return Err(refuse(
            RefusalKind::Held,
            "other block devices are built on it".into(),
            format!("holders: {} (device mapper, RAID, bcache, loop...)", h.join(", ")),
            "stop those devices first (losetup -d, dmsetup remove, mdadm --stop), or measure reads only".into(),
        ));
    }
    // 4. Exclusive open. This descriptor is the one the run writes through, so the claim
    // holds from the check to the end of the run.
    let file = open_raw(path, libc::O_RDWR | libc::O_EXCL | libc::O_DIRECT).map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
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
        }
    })?;
    // 5. The lock, for the whole run.
    lock(path, &file)?;
    // 6. Signatures, both layers.
    let size = crate::target::blk_size(file.as_raw_fd()).unwrap_or(0);
    let named = destroy_ok.iter().any(|p| rdev_of(p) == Some(dev));
    let destroyed = check_signatures(path, &file, size, named)?;
    Ok(Cleared { path: path.to_path_buf(), dev, destroyed, file, buffered: false })
}

/// Checks that an existing regular file may be written: it backs no loop device and is no
/// active swap (refused always), nobody holds a lock on it, and neither layer finds a
/// signature unless `--destroy-data-on` names it. `fresh` is a file this run has just laid
/// out itself: its content is iopath's, so it is not probed. On success returns the locked
/// `O_DIRECT` descriptor (buffered when the filesystem refuses `O_DIRECT`).
pub fn check_file_write(sys: &System, path: &Path, destroy_ok: &[PathBuf], fresh: bool) -> Result<Cleared, Refusal> {
    let refuse = |kind, reason: String, found: String, fix: String| refusal(path, kind, reason, found, fix);
    let Some(Identity::File(fdev, ino)) = identity(path) else {
        return Err(refuse(
            RefusalKind::Busy,
            "it is not a regular file".into(),
            "no regular file at this path".into(),
            "name a regular file or a block device".into(),
        ));
    };
    // 1. Backing a loop device: writing the file writes under whatever uses the loop.
    let loops: Vec<LoopDev> =
        loop_devices(&sys.sysfs).into_iter().filter(|l| l.backing_inode == Some((fdev, ino))).collect();
    if let Some(l) = loops.first() {
        let mounted: Vec<String> = loops
            .iter()
            .flat_map(|l| sys.mounts_on(l.dev))
            .map(|m| format!("{} on {}", m.source, m.mount_point))
            .collect();
        let names: Vec<String> = loops.iter().map(|l| l.path.display().to_string()).collect();
        return Err(refuse(
            RefusalKind::Held,
            "it is the backing file of a loop device; iopath never writes under an attached loop device, whatever the flags"
                .into(),
            format!(
                "attached to {} (backing_file {}){}",
                names.join(", "),
                l.backing_file,
                if mounted.is_empty() { String::new() } else { format!(", mounted: {}", mounted.join(", ")) }
            ),
            format!(
                "{}detach it first (losetup -d {}), or measure reads only",
                if mounted.is_empty() { String::new() } else { "unmount and ".to_string() },
                names.join(" ")
            ),
        ));
    }
    // 2. Swap file.
    for p in sys.swap_paths() {
        if let Some(Identity::File(d, i)) = identity(Path::new(&p))
            && (d, i) == (fdev, ino)
        {
            return Err(refuse(
                RefusalKind::Swap,
                "it is in use as swap".into(),
                format!("active swap file {p} (/proc/swaps)"),
                format!("turn the swap off first (swapoff {p}), or measure reads only"),
            ));
        }
    }
    // 3. Open for the run, and lock.
    // Buffered only where the filesystem refuses O_DIRECT (EINVAL).
    let opened = match open_raw(path, libc::O_RDWR | libc::O_DIRECT) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => open_raw(path, libc::O_RDWR).map(|f| (f, true)),
        r => r.map(|f| (f, false)),
    };
    let (file, buffered) = opened.map_err(|e| {
        refuse(
            RefusalKind::Busy,
            format!("it cannot be opened: {e}"),
            "the open failed".into(),
            "check permissions and the path".into(),
        )
    })?;
    lock(path, &file)?;
    // 4. Signatures.
    let destroyed = if fresh {
        Vec::new()
    } else {
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let named = destroy_ok.iter().any(|p| identity(p) == Some(Identity::File(fdev, ino)));
        check_signatures(path, &file, size, named)?
    };
    Ok(Cleared { path: path.to_path_buf(), dev: fdev, destroyed, file, buffered })
}

/// Checks `--destroy-data-on` names: each must be a block device or an existing regular
/// file among the write targets (the same device number, or the same `(st_dev, st_ino)`).
pub fn check_destroy_flags(
    destroy_ok: &[PathBuf],
    write_targets: &[PathBuf],
    allow_write: bool,
) -> Result<(), Refusal> {
    for d in destroy_ok {
        let bad = |reason: String, fix: Fix| Refusal {
            device: d.clone(),
            kind: RefusalKind::BadDestroyFlag,
            reason,
            found: format!("it is named as a device or file whose data may be destroyed ({})", d.display()),
            fix,
        };
        let named = Permission::DestroyDataOn(None);
        if !allow_write {
            return Err(bad(
                "destroying data is allowed only where writing is".into(),
                Fix(vec![
                    FixPart::Text("add ".into()),
                    FixPart::Permission(Permission::Write),
                    FixPart::Text(", or drop ".into()),
                    FixPart::Permission(named),
                ]),
            ));
        }
        let Some(id) = identity(d) else {
            return Err(bad(
                if d.exists() {
                    "it is neither a block device nor a regular file".into()
                } else {
                    "it does not exist".into()
                },
                Fix::around(
                    "name the block device or file that is written, e.g. ",
                    Permission::DestroyDataOn(Some("/dev/sdb".into())),
                    "",
                ),
            ));
        };
        if !write_targets.iter().any(|t| identity(t) == Some(id)) {
            return Err(bad(
                "it is not one of the devices or files this workload writes".into(),
                Fix::from("name exactly the device or file that is written (canonical path or a symlink to it)"),
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
            (1024, &0xF2F5_2010u32.to_le_bytes(), "F2FS"),
            (0, b"hsqs", "squashfs"),
            (0, &0x28cd_3d45u32.to_le_bytes(), "cramfs"),
            (0, &0x1bad_faceu32.to_le_bytes(), "BFS"),
            (32768, b"JFS1", "JFS"),
            (65588, b"ReIsEr2Fs", "ReiserFS"),
            (3, b"EXFAT   ", "exFAT"),
            (32769, b"CD001", "ISO 9660"),
            (34817, b"NSR03", "UDF"),
            (16384, b"SKUL\xba\xbe", "LUKS2"),
        ];
        for (off, magic, name) in cases {
            let s = probe(&[(*off, magic)]);
            assert!(s.iter().any(|x| x.what.contains(name) && x.offset == Some(*off)), "{name}: {s:?}");
        }
    }

    #[test]
    fn sixteen_bit_magics_need_a_plausible_superblock() {
        // Minix: the magic alone (no inodes) is noise; with inodes and zone size 0 it is one.
        assert!(!probe(&[(1040, &0x138Fu16.to_le_bytes())]).iter().any(|x| x.what.contains("Minix")));
        let s = probe(&[(1024, &[0x60, 0x55]), (1040, &0x138Fu16.to_le_bytes())]);
        assert!(s.iter().any(|x| x.what.contains("Minix") && x.offset == Some(1040)), "{s:?}");
        // NILFS2: magic plus the superblock length.
        assert!(!probe(&[(1030, &[0x34, 0x34])]).iter().any(|x| x.what.contains("NILFS2")));
        let s = probe(&[(1030, &[0x34, 0x34]), (1032, &280u16.to_le_bytes())]);
        assert!(s.iter().any(|x| x.what.contains("NILFS2") && x.offset == Some(1030)), "{s:?}");
    }

    #[test]
    fn boot_sectors_are_not_taken_for_an_mbr() {
        // exFAT's boot sector ends in 0x55AA: it is exFAT, not a partition table.
        let s = probe(&[(3, b"EXFAT   "), (510, &[0x55, 0xAA])]);
        assert!(s.iter().any(|x| x.what.contains("exFAT")), "{s:?}");
        assert!(!s.iter().any(|x| x.what.contains("MBR")), "{s:?}");
        // 0x55AA with an impossible boot flag in an entry is no MBR either.
        let s = probe(&[(446, &[0x42]), (510, &[0x55, 0xAA])]);
        assert!(!s.iter().any(|x| x.what.contains("MBR")), "{s:?}");
    }

    #[test]
    fn libblkid_finds_nothing_on_a_blank_image_or_says_why() {
        let size = 4 << 20;
        let (_t, f) = image(&[], size);
        match crate::blkid::probe_fd(std::os::fd::AsRawFd::as_raw_fd(&f)) {
            Ok(v) => assert!(v.is_empty(), "{v:?}"),
            Err(e) => {
                iopath_test_support::skip(&format!("libblkid does not work here: {e}"));
            }
        }
        // Both layers together: nothing on a blank image.
        if crate::blkid::available().is_ok() {
            assert!(probe_all(&f, size).is_empty());
        }
    }

    #[test]
    fn a_file_behind_a_loop_device_or_in_swap_is_refused_by_inode() {
        // A sysfs tree with one loop device whose backing file is `a.img` (a device number
        // no /dev node has, so the gate reads the backing file's path, not the ioctl).
        let d = tempfile::tempdir().unwrap();
        let img = d.path().join("a.img");
        std::fs::write(&img, vec![0u8; 64 << 10]).unwrap();
        let sysfs = d.path().join("sys");
        let l = sysfs.join("block/loop99");
        std::fs::create_dir_all(l.join("loop")).unwrap();
        std::fs::write(l.join("dev"), "250:99\n").unwrap();
        std::fs::write(l.join("loop/backing_file"), format!("{}\n", img.display())).unwrap();
        let sys = System { sysfs, mountinfo: String::new(), swaps: String::new() };
        let loops = loop_devices(&sys.sysfs);
        assert_eq!(loops.len(), 1, "{loops:?}");
        let Some(Identity::File(dev, ino)) = identity(&img) else { panic!("a.img is a file") };
        assert_eq!(loops[0].backing_inode, Some((dev, ino)));
        // Through a hard link (another name, the same inode) it is refused whatever the flags.
        let link = d.path().join("b.img");
        std::fs::hard_link(&img, &link).unwrap();
        let e = check_file_write(&sys, &link, std::slice::from_ref(&link), false).unwrap_err();
        assert_eq!(e.kind, RefusalKind::Held, "{e}");
        assert!(e.found.contains("/dev/loop99") && e.fix.to_string().contains("losetup -d"), "{e}");
        // A file listed in /proc/swaps, by another path to it, likewise.
        let other = d.path().join("c.img");
        std::fs::write(&other, vec![0u8; 64 << 10]).unwrap();
        let via = d.path().join("via");
        std::os::unix::fs::symlink(&other, &via).unwrap();
        let swapping = System {
            swaps: format!("Filename\tType\tSize\tUsed\tPriority\n{}\tfile\t60\t0\t-2\n", via.display()),
            ..sys.clone()
        };
        let e = check_file_write(&swapping, &other, std::slice::from_ref(&other), false).unwrap_err();
        assert_eq!(e.kind, RefusalKind::Swap, "{e}");
        // A blank file that nothing uses is cleared (when libblkid can look at it).
        match check_file_write(&sys, &other, &[], false) {
            Ok(c) => assert!(c.destroyed.is_empty()),
            Err(e) => {
                assert!(crate::blkid::available().is_err(), "a blank unused file must be writable: {e}");
                assert!(e.found.contains("unidentified data"), "{e}");
            }
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
        // Every escape the kernel writes (tab, newline, backslash, `#`), and a backslash
        // that is not one kept as it is.
        assert_eq!(unescape_mount("/a\\011b\\012c\\134d\\043e\\9"), "/a\tb\nc\\d#e\\9");
    }

    #[test]
    fn destroy_flag_needs_allow_write_and_a_block_device() {
        let e = check_destroy_flags(&["/dev/null".into()], &[], false).unwrap_err();
        assert_eq!(e.kind, RefusalKind::BadDestroyFlag);
        // The permissions are typed: in words here, as options where the CLI names them.
        assert_eq!(e.fix.to_string(), "add the permission to write, or drop the permission to destroy data");
        let cli = |p: &Permission| match p {
            Permission::Write => "--allow-write".to_string(),
            Permission::DestroyDataOn(Some(d)) => format!("--destroy-data-on {}", d.display()),
            Permission::DestroyDataOn(None) => "--destroy-data-on".to_string(),
        };
        assert!(e.message(&cli).ends_with("to proceed: add --allow-write, or drop --destroy-data-on"), "{e}");
        let e = check_destroy_flags(&["/dev/null".into()], &[], true).unwrap_err();
        assert!(e.reason.contains("neither a block device nor a regular file"), "{e}");
        let e = check_destroy_flags(&["/nonexistent/x.img".into()], &[], true).unwrap_err();
        assert!(e.reason.contains("does not exist"), "{e}");
        // A regular file is named by (st_dev, st_ino): it must be one of the written files.
        let e = check_destroy_flags(&["/etc/hostname".into()], &[], true).unwrap_err();
        assert!(e.reason.contains("not one of the devices or files"), "{e}");
        check_destroy_flags(&["/etc/hostname".into()], &["/etc/../etc/hostname".into()], true).unwrap();
    }
}
