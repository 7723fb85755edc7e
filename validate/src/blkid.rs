//! What libblkid finds on a device or file: every superblock (filesystem, RAID, LVM, crypto,
//! swap) and partition-table signature, listed the way `wipefs` lists them (a loop of
//! `blkid_do_probe`, one signature per call).
//!
//! The system's `libblkid.so.1` is loaded at run time (`libloading`), with the few entry
//! points declared here by hand, so building iopath needs neither libblkid's headers nor
//! bindgen. `IOPATH_LIBBLKID` names another library file to load (tests use it to check
//! that the gate fails closed when the library is missing).
//!
//! Callers must treat every error as "unidentified data": the gate refuses then.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::os::fd::RawFd;
use std::sync::OnceLock;

/// A signature libblkid found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// `TYPE` (superblocks) or `PTTYPE` (partition tables): "ext4", "dos", "LVM2_member"...
    pub kind: String,
    /// `USAGE`: "filesystem", "raid", "crypto", "other"; "partition table" for tables.
    pub usage: String,
    pub label: Option<String>,
    /// `SBMAGIC_OFFSET` or `PTMAGIC_OFFSET`, when the probe has a magic.
    pub offset: Option<u64>,
}

/// Why libblkid could not say what is there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlkidError {
    #[error("libblkid could not be loaded ({0})")]
    Unavailable(String),
    #[error("libblkid's probe failed ({0})")]
    Probe(String),
}

type Probe = *mut c_void;

const SUBLKS_LABEL: c_int = 1 << 1;
const SUBLKS_TYPE: c_int = 1 << 5;
const SUBLKS_USAGE: c_int = 1 << 7;
const SUBLKS_MAGIC: c_int = 1 << 9;
const SUBLKS_BADCSUM: c_int = 1 << 10;
const PARTS_MAGIC: c_int = 1 << 3;

struct Api {
    _lib: libloading::Library,
    new_probe: unsafe extern "C" fn() -> Probe,
    free_probe: unsafe extern "C" fn(Probe),
    set_device: unsafe extern "C" fn(Probe, c_int, i64, i64) -> c_int,
    enable_superblocks: unsafe extern "C" fn(Probe, c_int) -> c_int,
    set_superblocks_flags: unsafe extern "C" fn(Probe, c_int) -> c_int,
    enable_partitions: unsafe extern "C" fn(Probe, c_int) -> c_int,
    set_partitions_flags: unsafe extern "C" fn(Probe, c_int) -> c_int,
    do_probe: unsafe extern "C" fn(Probe) -> c_int,
    lookup_value: unsafe extern "C" fn(Probe, *const c_char, *mut *const c_char, *mut usize) -> c_int,
}

fn load() -> Result<Api, String> {
    let name = std::env::var_os("IOPATH_LIBBLKID").unwrap_or_else(|| "libblkid.so.1".into());
    // SAFETY: libblkid's initialisers have no preconditions; the symbols below are declared
    // with the signatures of util-linux's blkid.h (stable ABI since libblkid 2.15).
    unsafe {
        let lib = libloading::Library::new(&name).map_err(|e| format!("{}: {e}", name.to_string_lossy()))?;
        macro_rules! sym {
            ($n:literal) => {
                *lib.get($n).map_err(|e| format!("{}: {e}", String::from_utf8_lossy($n)))?
            };
        }
        Ok(Api {
            new_probe: sym!(b"blkid_new_probe"),
            free_probe: sym!(b"blkid_free_probe"),
            set_device: sym!(b"blkid_probe_set_device"),
            enable_superblocks: sym!(b"blkid_probe_enable_superblocks"),
            set_superblocks_flags: sym!(b"blkid_probe_set_superblocks_flags"),
            enable_partitions: sym!(b"blkid_probe_enable_partitions"),
            set_partitions_flags: sym!(b"blkid_probe_set_partitions_flags"),
            do_probe: sym!(b"blkid_do_probe"),
            lookup_value: sym!(b"blkid_probe_lookup_value"),
            _lib: lib,
        })
    }
}

fn api() -> Result<&'static Api, BlkidError> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(|e| BlkidError::Unavailable(e.clone()))
}

/// Whether libblkid can be loaded here (for messages and tests).
pub fn available() -> Result<(), BlkidError> {
    api().map(|_| ())
}

struct Guard<'a>(&'a Api, Probe);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        // SAFETY: the probe came from blkid_new_probe and is freed once.
        unsafe { (self.0.free_probe)(self.1) }
    }
}

/// Lists every signature on the open file or device `fd` (read only; the descriptor stays
/// the caller's).
pub fn probe_fd(fd: RawFd) -> Result<Vec<Found>, BlkidError> {
    let api = api()?;
    // SAFETY: each call follows blkid.h; the probe is freed by the guard; value pointers
    // are read before the next probe call invalidates them.
    unsafe {
        let pr = (api.new_probe)();
        if pr.is_null() {
            return Err(BlkidError::Probe("blkid_new_probe returned NULL".into()));
        }
        let _g = Guard(api, pr);
        if (api.set_device)(pr, fd, 0, 0) != 0 {
            return Err(BlkidError::Probe(format!(
                "blkid_probe_set_device failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        let ok = (api.enable_superblocks)(pr, 1) == 0
            && (api.set_superblocks_flags)(
                pr,
                SUBLKS_TYPE | SUBLKS_USAGE | SUBLKS_LABEL | SUBLKS_MAGIC | SUBLKS_BADCSUM,
            ) == 0
            && (api.enable_partitions)(pr, 1) == 0
            && (api.set_partitions_flags)(pr, PARTS_MAGIC) == 0;
        if !ok {
            return Err(BlkidError::Probe("enabling the superblock and partition probes failed".into()));
        }
        let get = |name: &CStr| -> Option<String> {
            let mut data: *const c_char = std::ptr::null();
            let mut len = 0usize;
            ((api.lookup_value)(pr, name.as_ptr(), &mut data, &mut len) == 0 && !data.is_null())
                .then(|| CStr::from_ptr(data).to_string_lossy().into_owned())
        };
        let mut found = Vec::new();
        for _ in 0..256 {
            match (api.do_probe)(pr) {
                0 => {}
                1 => return Ok(found),
                r => {
                    return Err(BlkidError::Probe(format!(
                        "blkid_do_probe returned {r}: {}",
                        std::io::Error::last_os_error()
                    )));
                }
            }
            let (kind, usage, offset) = if let Some(t) = get(c"PTTYPE") {
                (t, "partition table".to_string(), get(c"PTMAGIC_OFFSET"))
            } else {
                (
                    get(c"TYPE").unwrap_or_else(|| "unnamed signature".into()),
                    get(c"USAGE").unwrap_or_else(|| "unknown use".into()),
                    get(c"SBMAGIC_OFFSET"),
                )
            };
            found.push(Found {
                kind,
                usage,
                label: get(c"LABEL").filter(|l| !l.is_empty()),
                offset: offset.and_then(|o| o.parse().ok()),
            });
        }
        Err(BlkidError::Probe("more than 256 signatures: not a plausible result".into()))
    }
}
