//! Targets of direct I/O: files and block devices.
//!
//! Guarantees:
//! - every target is opened with `O_DIRECT` (or refused; a filesystem that rejects
//!   `O_DIRECT` is opened buffered only with [`Opened::buffered`] set, so the caller warns);
//! - offsets and lengths are multiples of [`Opened::offset_align`], found with statx
//!   `STATX_DIOALIGN`, then `BLKSSZGET`, then the page size;
//! - buffers come from [`AlignedBuf`], aligned to `max(4096, dio_mem_align)`;
//! - a block device's size comes from `BLKGETSIZE64`, never from `fstat`;
//! - files on tmpfs/ramfs are refused (the kernel accepts `O_DIRECT` there and measures RAM);
//! - file targets that do not exist are created at the requested size and fully written
//!   before any read, so reads reach the device instead of holes; the path names the file
//!   only once it is complete (laid out under a temporary name, then linked), and Ctrl-C
//!   stops a layout within a MiB.

use rand::{Rng, SeedableRng};
use std::alloc::Layout;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Problems with a target, each naming the path and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "{path}: is on {fs} (memory), where O_DIRECT is accepted but bypasses nothing, so iopath would measure RAM; put the file on a disk-backed filesystem (check with `stat -f DIR`) or name a block device"
    )]
    MemoryFs { path: PathBuf, fs: &'static str },
    #[error("{path}: cannot open: {cause}{hint}")]
    Open { path: PathBuf, cause: io::Error, hint: String },
    #[error("{path}: {what}: {cause}")]
    Io { path: PathBuf, what: String, cause: io::Error },
    #[error(
        "{path}: is neither a regular file nor a block device; name a file (it is created) or a block device such as /dev/sdb"
    )]
    NotATarget { path: PathBuf },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(
        "{path}: interrupted while laying it out ({done} of {size} bytes written); nothing was measured, and the unfinished file was removed"
    )]
    Interrupted { path: PathBuf, done: u64, size: u64 },
}

/// A heap buffer aligned for direct I/O, freed on drop.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the pointer is to memory this value alone owns (allocated in `new`, freed in
// drop, never shared), so moving it to another thread moves that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes aligned to `align` (a power of two), at least 4096.
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let align = align.max(4096).next_power_of_two();
        let layout = Layout::from_size_align(len.max(1), align).expect("valid buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }
    pub fn len(&self) -> usize {
        self.layout.size()
    }
    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, initialised (zeroed) at allocation.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
    /// Fills the buffer with pseudo-random bytes (so compressing or deduplicating devices
    /// cannot shortcut writes).
    pub fn fill_random(&mut self, seed: u64) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        rng.fill_bytes(self.as_mut_slice());
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Direct-I/O alignment of an open file [bytes].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlign {
    pub mem: u32,
    pub offset: u32,
    /// Where the numbers came from: "statx", "BLKSSZGET", "page size".
    pub source: &'static str,
    /// statx said the file does not support direct I/O (both alignments 0).
    pub unsupported: bool,
}

const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

fn page_size() -> u32 {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u32 } else { 4096 }
}

/// statx `STATX_DIOALIGN` of an open file: `Some((mem, offset))` when the kernel reports it.
pub fn statx_dioalign(fd: RawFd) -> Option<(u32, u32)> {
    // SAFETY: statx writes into the zeroed struct; the empty path with AT_EMPTY_PATH
    // refers to fd.
    unsafe {
        let mut st: libc::statx = std::mem::zeroed();
        let r = libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &mut st);
        if r == 0 && st.stx_mask & libc::STATX_DIOALIGN != 0 {
            Some((st.stx_dio_mem_align, st.stx_dio_offset_align))
        } else {
            None
        }
    }
}

/// Logical block size of a block device (`BLKSSZGET`).
pub fn blk_sector_size(fd: RawFd) -> Option<u32> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int.
    let r = unsafe { libc::ioctl(fd, libc::BLKSSZGET, &mut v) };
    (r == 0 && v > 0).then_some(v as u32)
}

/// Size of a block device in bytes (`BLKGETSIZE64`).
pub fn blk_size(fd: RawFd) -> Option<u64> {
    let mut v: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64.
    let r = unsafe { libc::ioctl(fd, BLKGETSIZE64 as _, &mut v) };
    (r == 0).then_some(v)
}

/// The alignment chain of the notes: statx, then BLKSSZGET (block devices), then the page
/// size.
pub fn dio_align(fd: RawFd, is_block: bool) -> DioAlign {
    if let Some((mem, off)) = statx_dioalign(fd) {
        if mem == 0 || off == 0 {
            return DioAlign { mem: page_size(), offset: page_size(), source: "statx", unsupported: true };
        }
        return DioAlign { mem, offset: off, source: "statx", unsupported: false };
    }
    if is_block && let Some(s) = blk_sector_size(fd) {
        return DioAlign { mem: s, offset: s, source: "BLKSSZGET", unsupported: false };
    }
    DioAlign { mem: page_size(), offset: page_size(), source: "page size", unsupported: false }
}

/// Name of a memory filesystem holding `path` (or its directory), if it is one.
#[allow(clippy::unnecessary_cast)] // f_type and the magics differ in type across targets
pub fn memory_fs(path: &Path) -> Option<&'static str> {
    let probe = if path.exists() {
        path.to_path_buf()
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
    };
    let c = CString::new(probe.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes into the zeroed struct.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut s) != 0 {
            return None;
        }
        let t = s.f_type as i64;
        if t == libc::TMPFS_MAGIC as i64 {
            Some("tmpfs")
        } else if t == RAMFS_MAGIC {
            Some("ramfs")
        } else {
            None
        }
    }
}

/// How to open a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenMode {
    pub write: bool,
    /// `O_EXCL` on a block device: fails with EBUSY when mounted or held.
    pub exclusive: bool,
}

/// An open target.
#[derive(Debug)]
pub struct Opened {
    pub path: PathBuf,
    pub file: File,
    pub is_block: bool,
    pub size: u64,
    pub align: DioAlign,
    /// `O_DIRECT` was refused and the target was opened through the page cache.
    pub buffered: bool,
    /// Device number of the block device (rdev) or of the filesystem holding the file.
    pub dev: (u32, u32),
    /// The file was created (and written) by this run.
    pub created: bool,
}

impl Opened {
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

fn open_raw(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    loop {
        // SAFETY: c is a valid C string.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
        if fd >= 0 {
            // SAFETY: fd was just returned by open and is owned by nobody else.
            return Ok(unsafe { File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

fn open_hint(e: &io::Error, path: &Path, mode: OpenMode) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "; check the path".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "; run as a user who may open it (a sandbox may forbid raw disks even to root)".to_string()
        }
        Some(libc::EBUSY) if mode.exclusive => format!(
            "; {} is mounted or held by another program (filesystem, swap, RAID, LVM, or an exclusive opener)",
            path.display()
        ),
        Some(libc::EROFS) => "; the device or filesystem is read-only".to_string(),
        _ => String::new(),
    }
}

/// Opens an existing file or block device for direct I/O.
pub fn open_target(path: &Path, mode: OpenMode) -> Result<Opened, TargetError> {
    let meta = std::fs::metadata(path).map_err(|e| TargetError::Open {
        hint: open_hint(&e, path, mode),
        path: path.to_path_buf(),
        cause: e,
    })?;
    let ft = meta.file_type();
    let is_block = ft.is_block_device();
    if !is_block && !ft.is_file() {
        return Err(TargetError::NotATarget { path: path.to_path_buf() });
    }
    if !is_block && let Some(fs) = memory_fs(path) {
        return Err(TargetError::MemoryFs { path: path.to_path_buf(), fs });
    }
    let mut flags = if mode.write { libc::O_RDWR } else { libc::O_RDONLY };
    if mode.exclusive && is_block {
        flags |= libc::O_EXCL;
    }
    let (file, buffered) = match open_raw(path, flags | libc::O_DIRECT, 0) {
        Ok(f) => (f, false),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !is_block => {
            let f = open_raw(path, flags, 0).map_err(|e| TargetError::Open {
                hint: open_hint(&e, path, mode),
                path: path.to_path_buf(),
                cause: e,
            })?;
            (f, true)
        }
        Err(e) => {
            return Err(TargetError::Open { hint: open_hint(&e, path, mode), path: path.to_path_buf(), cause: e });
        }
    };
    adopt(path, file, &meta, buffered)
}

/// Describes a target opened elsewhere (the safety gate's exclusive descriptor).
pub fn adopt(path: &Path, file: File, meta: &std::fs::Metadata, buffered: bool) -> Result<Opened, TargetError> {
    let is_block = meta.file_type().is_block_device();
    let fd = file.as_raw_fd();
    let size = if is_block {
        blk_size(fd).ok_or_else(|| TargetError::Io {
            path: path.to_path_buf(),
            what: "BLKGETSIZE64 failed".into(),
            cause: io::Error::last_os_error(),
        })?
    } else {
        meta.len()
    };
    let align = dio_align(fd, is_block);
    let dev = if is_block { meta.rdev() } else { meta.dev() };
    Ok(Opened {
        path: path.to_path_buf(),
        file,
        is_block,
        size,
        align,
        buffered: buffered || align.unsupported,
        dev: (libc::major(dev), libc::minor(dev)),
        created: false,
    })
}

/// The prefix of the temporary file a layout of `path` writes before it is complete:
/// `.NAME.iopath-layout-` in the same directory (a PID follows).
fn layout_prefix(path: &Path) -> String {
    format!(".{}.iopath-layout-", path.file_name().unwrap_or_default().to_string_lossy())
}

fn dir_of(path: &Path) -> PathBuf {
    path.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

/// Unfinished layouts of `path` left by runs that were killed (their temporary files).
pub fn stale_layouts(path: &Path) -> Vec<PathBuf> {
    let prefix = layout_prefix(path);
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir_of(path))
        .map(|rd| {
            rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(&prefix)).map(|e| e.path()).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Creates a file target of `size` bytes (rounded up to 1 MiB) and writes every byte, as
/// fio's "Laying out IO file" does, so later reads reach the device. Refuses tmpfs/ramfs
/// and never overwrites an existing file.
///
/// The layout is written to a temporary name in the same directory (created with
/// `O_EXCL`), synced, and only then linked to `path` (which fails if `path` appeared
/// meanwhile), so `path` never names an unfinished file: a run killed during the layout
/// leaves only the temporary file ([`stale_layouts`]), which no later run takes for a
/// target. `stop` (Ctrl-C) is checked after every MiB: the layout stops, removes its
/// temporary file and returns [`TargetError::Interrupted`].
pub fn create_file_target(path: &Path, size: u64, seed: u64, stop: Option<&AtomicBool>) -> Result<(), TargetError> {
    if let Some(fs) = memory_fs(path) {
        return Err(TargetError::MemoryFs { path: path.to_path_buf(), fs });
    }
    if path.exists() {
        return Err(TargetError::Open {
            path: path.to_path_buf(),
            cause: io::Error::from_raw_os_error(libc::EEXIST),
            hint: "; a layout never overwrites an existing file".into(),
        });
    }
    let io_err =
        |what: &str, e: io::Error| TargetError::Io { path: path.to_path_buf(), what: what.to_string(), cause: e };
    const CHUNK: u64 = 1 << 20;
    let size = size.div_ceil(CHUNK).max(1) * CHUNK;
    let tmp = dir_of(path).join(format!("{}{}", layout_prefix(path), std::process::id()));
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
    let file = match open_raw(&tmp, flags | libc::O_DIRECT, 0o644) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            let _ = std::fs::remove_file(&tmp);
            open_raw(&tmp, flags, 0o644).map_err(|e| io_err("cannot create", e))?
        }
        Err(e) => {
            return Err(TargetError::Open {
                hint: open_hint(&e, path, OpenMode { write: true, exclusive: false }),
                path: path.to_path_buf(),
                cause: e,
            });
        }
    };
    let result = (|| {
        let mut buf = AlignedBuf::new(CHUNK as usize, 4096);
        buf.fill_random(seed);
        let mut off = 0u64;
        while off < size {
            if stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                return Err(TargetError::Interrupted { path: path.to_path_buf(), done: off, size });
            }
            write_full_at(&file, buf.as_slice(), off).map_err(|e| io_err("writing", e))?;
            off += CHUNK;
        }
        file.sync_all().map_err(|e| io_err("fsync", e))?;
        // link(2) fails with EEXIST instead of replacing a file that appeared meanwhile.
        std::fs::hard_link(&tmp, path).map_err(|e| io_err("cannot move the finished layout into place", e))?;
        if let Ok(d) = File::open(dir_of(path)) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

fn write_full_at(f: &File, buf: &[u8], off: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let n = f.write_at(buf, off)?;
    if n != buf.len() {
        return Err(io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short write: {n} of {} bytes at offset {off}", buf.len()),
        ));
    }
    Ok(())
}

/// Whether a regular file has holes (fewer allocated blocks than its length).
pub fn is_sparse(path: &Path) -> bool {
    std::fs::metadata(path).map(|m| m.is_file() && m.blocks() * 512 < m.len()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_aligned_and_freed() {
        for align in [512, 4096, 8192] {
            let mut b = AlignedBuf::new(12345, align);
            assert_eq!(b.as_ptr() as usize % align.max(4096), 0);
            b.as_mut_slice()[12344] = 7;
            assert_eq!(b.len(), 12345);
        }
    }

    #[test]
    fn created_file_targets_are_fully_written() {
        let d = tempfile::tempdir_in(iopath_test_support::scratch_dir()).unwrap();
        let p = d.path().join("t.img");
        if memory_fs(d.path()).is_some() {
            iopath_test_support::skip("the scratch directory is on tmpfs; set IOPATH_SCRATCH to a disk");
            return;
        }
        create_file_target(&p, 3 << 20, 1, None).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20);
        assert!(!is_sparse(&p));
        // Never overwrites.
        assert!(create_file_target(&p, 1 << 20, 1, None).is_err());
        assert!(stale_layouts(&p).is_empty(), "the temporary file is gone");
        let o = open_target(&p, OpenMode { write: false, exclusive: false }).unwrap();
        assert!(!o.is_block);
        assert!(o.align.offset >= 512);
    }

    #[test]
    fn refuses_tmpfs() {
        let shm = Path::new("/dev/shm");
        if memory_fs(shm).is_none() {
            iopath_test_support::skip("/dev/shm is not tmpfs here, so the tmpfs refusal cannot be shown");
            return;
        }
        let e = create_file_target(&shm.join("iopath-never.img"), 1 << 20, 1, None).unwrap_err();
        assert!(e.to_string().contains("tmpfs"), "{e}");
    }
}
