//! The one place iopath writes output files: single files (`--out FILE`, `--fio-job`, part
//! files) and sets of files in a directory (`sweep --out DIR`, `report --out DIR`, ...).
//!
//! What it guarantees:
//!
//! - **Nothing is written through or over what is not iopath's to replace.** An output path
//!   that exists must be a regular file (a file) or a real directory (a set); a device node,
//!   FIFO, socket, or the other kind is refused. A symbolic link as the *final* component is
//!   refused too (its target is never written; the message names it so the user can pass the
//!   real path); symlinked *directories* above it are followed as usual. The CLI runs the
//!   same checks ([`check_output_file`], [`check_output_dir`]) before any work starts, and the
//!   writers run them again just before they replace anything.
//! - **Temporaries cannot be predicted or planted.** They are created with `O_EXCL` and a
//!   random name (`tempfile`) in the target's own directory, so the final rename stays on one
//!   filesystem: files as `.iopath-tmp-PID-RANDOM`, sets as `.iopath-stage-PID-RANDOM/`.
//! - **A reader sees the old output or the new one, never a part or a mix.** A file is
//!   written, synced and renamed over the target. A set is written complete into a fresh
//!   staging directory next to `DIR`, synced, then swapped with `DIR` in one
//!   `renameat2(RENAME_EXCHANGE)`; the old set, now under the staging name, is removed. On
//!   a filesystem without the exchange, `DIR` is renamed aside first, so for a moment there
//!   is no `DIR` (still never a mix).
//! - **No temporary outlives its process, or the next run.** Every error path removes what
//!   it made (the `tempfile` guards), and Ctrl-C only sets the CLI's flag, so writing
//!   finishes. A SIGKILL cannot be cleaned up after, so every writer first removes the
//!   temporaries of dead iopath processes in the directory it writes in: names with these
//!   prefixes whose PID no longer runs and whose lock (each temporary is `flock`ed by its
//!   writer while it lives) can be taken.
//! - A set directory that holds files iopath would not have written there is refused, not
//!   emptied: iopath replaces `DIR` whole, so it only does so when everything in it is
//!   iopath's (the names that command writes, or an old temporary).
//!
//! std has no `renameat2`, `flock` or `kill(pid, 0)`; they come from `rustix`'s safe
//! wrappers (no `unsafe` here), the one exception to "only `validate` makes system calls
//! beyond std" (ARCHITECTURE.md).

use crate::error::ReportError;
use rustix::fs::{FlockOperation, RenameFlags};
use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Prefix of a single file's temporary: `.iopath-tmp-PID-RANDOM`.
const TMP_PREFIX: &str = ".iopath-tmp-";
/// Prefix of a set's staging directory: `.iopath-stage-PID-RANDOM`.
const STAGE_PREFIX: &str = ".iopath-stage-";
/// Prefix of an old set renamed aside where the exchange is not supported.
const OLD_PREFIX: &str = ".iopath-old-";
/// Prefix of the temporaries of iopath 0.1 before this module: `.iopath-tmp.PID.N.NAME`.
const LEGACY_PREFIX: &str = ".iopath-tmp.";

fn refused(path: &Path, why: impl Into<String>, help: impl Into<String>) -> ReportError {
    ReportError::Refused { path: path.to_path_buf(), why: why.into(), help: help.into() }
}

/// What a file type is, in words, for messages.
fn kind_of(t: &fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

fn symlink_refusal(path: &Path, what: &str) -> ReportError {
    let target = fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_else(|_| "?".into());
    let real = fs::canonicalize(path).ok();
    refused(
        path,
        format!(
            "it is a symbolic link (to {target}); iopath does not write through a symbolic link given as the {what} \
             itself, so its target is untouched"
        ),
        match real {
            Some(r) => format!("name the real path ({}) if that is what you mean, or another path", r.display()),
            None => "name the real path, or remove the link".to_string(),
        },
    )
}

/// Checks that `path` may be written as an output file: it does not exist yet, or it is a
/// regular file (which is then replaced). A device node, FIFO, socket, directory or
/// symbolic link is refused ([`ReportError::Refused`]), as is a path whose directory does
/// not exist. Reads metadata only; creates nothing.
pub fn check_output_file(path: &Path) -> Result<(), ReportError> {
    if path.file_name().is_none() {
        return Err(refused(path, "it does not name a file", "give a file name, e.g. out/result.json"));
    }
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(symlink_refusal(path, "output file")),
        Ok(m) => {
            let kind = kind_of(&m.file_type());
            let help =
                if m.file_type().is_char_device() && m.rdev() == fs::metadata("/dev/null").map_or(0, |n| n.rdev()) {
                    "to discard the output, leave the option out; otherwise name a regular file"
                } else {
                    "name a regular file (one that does not exist yet, or one iopath may replace)"
                };
            Err(refused(
                path,
                format!(
                    "it is {kind}, not a regular file; iopath writes a file by replacing it, which would replace {kind}"
                ),
                help,
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let dir = parent_of(path);
            match fs::metadata(&dir) {
                Ok(d) if d.is_dir() => Ok(()),
                Ok(_) => {
                    Err(refused(path, format!("{} is not a directory", dir.display()), "name a path in a directory"))
                }
                Err(_) => Err(refused(
                    path,
                    format!("its directory {} does not exist", dir.display()),
                    format!("create it first (mkdir -p {}) or name a path in an existing directory", dir.display()),
                )),
            }
        }
        Err(e) => Err(ReportError::Write { path: path.to_path_buf(), source: e }),
    }
}

/// Checks that `dir` may be (re)written as an output set whose files are named in `names`:
/// it does not exist yet, or it is a real directory (not a symbolic link, not a mount point)
/// holding only regular files named in `names` and iopath's own temporaries. Anything else
/// in it means it holds files iopath did not write there, and it is refused rather than
/// replaced. Reads metadata only; creates nothing.
pub fn check_output_dir(dir: &Path, names: &[&str]) -> Result<(), ReportError> {
    check_dir(dir, names).map(|_| ())
}

/// [`check_output_dir`], returning the identity (device, inode) and permissions of an
/// existing directory.
fn check_dir(given: &Path, names: &[&str]) -> Result<Option<(u64, u64, Permissions)>, ReportError> {
    let dir = absolute(given)?;
    let m = match fs::symlink_metadata(&dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReportError::CreateDir { path: dir, source: e }),
    };
    let t = m.file_type();
    if t.is_symlink() {
        return Err(symlink_refusal(given, "output directory"));
    }
    if !t.is_dir() {
        return Err(refused(
            given,
            format!("it is {}, not a directory; this option names a directory for a set of files", kind_of(&t)),
            "name a directory that does not exist yet (it is created) or one iopath wrote before",
        ));
    }
    let parent = parent_of(&dir);
    if fs::metadata(&parent).is_ok_and(|p| p.dev() != m.dev() || p.ino() == m.ino()) {
        return Err(refused(
            given,
            "it is a mount point; iopath replaces an output directory as a whole, which a mount point cannot be",
            "name a directory inside it",
        ));
    }
    let mut foreign = Vec::new();
    let entries = fs::read_dir(&dir).map_err(|source| ReportError::CreateDir { path: dir.clone(), source })?;
    for e in entries {
        let e = e.map_err(|source| ReportError::CreateDir { path: dir.clone(), source })?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ours =
            is_temporary_name(&name) || (names.contains(&name.as_str()) && e.file_type().is_ok_and(|t| t.is_file()));
        if !ours {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        let n = foreign.len();
        let shown: Vec<String> = foreign.iter().take(5).map(|f| format!("{f:?}")).collect();
        return Err(refused(
            given,
            format!(
                "it holds {n} entr{} iopath did not write there ({}{}); iopath replaces the directory as a whole, \
                 so it would delete {}",
                if n == 1 { "y" } else { "ies" },
                shown.join(", "),
                if n > 5 { ", ..." } else { "" },
                if n == 1 { "it" } else { "them" }
            ),
            format!("name a new directory, or move those away; iopath writes only {} there", names.join(", ")),
        ));
    }
    Ok(Some((m.dev(), m.ino(), m.permissions())))
}

/// Writes `bytes` to the file `path` atomically: a temporary with a random name in the same
/// directory, synced, then renamed over `path` (see the module documentation for what is
/// refused). An existing file keeps its permissions; the directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let write_err = |source| ReportError::Write { path: path.to_path_buf(), source };
    check_output_file(path)?;
    let dir = parent_of(path);
    remove_stale_temporaries(&dir);
    let prefix = format!("{TMP_PREFIX}{}-", std::process::id());
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(&dir)
        .map_err(write_err)?;
    hold_lock(tmp.as_file()).map_err(write_err)?;
    tmp.write_all(bytes).map_err(write_err)?;
    if let Ok(old) = fs::symlink_metadata(path) {
        let _ = tmp.as_file().set_permissions(old.permissions());
    }
    tmp.as_file().sync_all().map_err(write_err)?;
    // The check again, as close to the rename as it gets: the rename replaces whatever is
    // at `path` then. (A failed check or rename drops `tmp`, which removes it.)
    check_output_file(path)?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    sync_dir(&dir);
    Ok(())
}

/// Writes a set of files as the directory `dir`, replacing an older set there whole (see
/// the module documentation). `files` are (name, contents) in the order to report them;
/// `names` are every name this kind of set may hold, which is what [`check_output_dir`]
/// accepts in an existing `dir`. Missing parent directories are created. Returns the paths
/// of the files written.
pub fn write_set(dir: &Path, files: &[(String, Vec<u8>)], names: &[&str]) -> Result<Vec<PathBuf>, ReportError> {
    for (name, _) in files {
        debug_assert!(names.contains(&name.as_str()), "{name} is not in the set's names");
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(refused(&dir.join(name), "not a plain file name", "this is a bug in iopath; please report it"));
        }
    }
    let abs = absolute(dir)?;
    let parent = parent_of(&abs);
    fs::create_dir_all(&parent).map_err(|source| ReportError::CreateDir { path: parent.clone(), source })?;
    let old = check_dir(&abs, names)?;
    remove_stale_temporaries(&parent);
    let stage_err = |source| ReportError::CreateDir { path: abs.clone(), source };
    let prefix = format!("{STAGE_PREFIX}{}-", std::process::id());
    let stage = tempfile::Builder::new()
        .prefix(&prefix)
        .permissions(Permissions::from_mode(0o777))
        .tempdir_in(&parent)
        .map_err(stage_err)?;
    let lock = File::open(stage.path()).map_err(stage_err)?;
    hold_lock(&lock).map_err(stage_err)?;
    for (name, bytes) in files {
        let p = stage.path().join(name);
        let write_err = |source| ReportError::Write { path: abs.join(name), source };
        let mut f = File::create_new(&p).map_err(write_err)?;
        f.write_all(bytes).map_err(write_err)?;
        f.sync_all().map_err(write_err)?;
    }
    if let Some((_, _, perms)) = &old {
        let _ = fs::set_permissions(stage.path(), perms.clone());
    }
    lock.sync_all().map_err(stage_err)?;
    match old {
        None => {
            // Nothing to swap with: a plain rename, which fails if something appeared there.
            fs::rename(stage.path(), &abs).map_err(stage_err)?;
            let _ = stage.keep();
        }
        Some(_) => {
            // Check again as late as possible, then swap; `stage` then holds the old set.
            let checked = check_dir(&abs, names)?.map(|(dev, ino, _)| (dev, ino));
            swap_in(stage.path(), &abs, &parent).map_err(stage_err)?;
            let swapped = fs::symlink_metadata(stage.path()).ok().map(|m| (m.dev(), m.ino()));
            if swapped != checked {
                // Something replaced `dir` between the check and the swap: put it back.
                let _ = rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    stage.path(),
                    rustix::fs::CWD,
                    &abs,
                    RenameFlags::EXCHANGE,
                );
                return Err(refused(&abs, "it was replaced while iopath was writing it", "run again"));
            }
            // Dropping `stage` removes the old set.
        }
    }
    drop(lock);
    sync_dir(&parent);
    Ok(files.iter().map(|(n, _)| dir.join(n)).collect())
}

/// Puts the directory `new` where `dir` is: an atomic exchange where the filesystem has
/// one; else `dir` is renamed aside first. Either way `new`'s path then holds the old set.
fn swap_in(new: &Path, dir: &Path, parent: &Path) -> io::Result<()> {
    match rustix::fs::renameat_with(rustix::fs::CWD, new, rustix::fs::CWD, dir, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(()),
        Err(e) if [rustix::io::Errno::INVAL, rustix::io::Errno::NOSYS, rustix::io::Errno::OPNOTSUPP].contains(&e) => {
            swap_by_renames(new, dir, parent)
        }
        Err(e) => Err(e.into()),
    }
}

/// The exchange without `RENAME_EXCHANGE`: `dir` -> aside, `new` -> `dir`, aside -> `new`.
fn swap_by_renames(new: &Path, dir: &Path, parent: &Path) -> io::Result<()> {
    let aside = tempfile::Builder::new().prefix(&format!("{OLD_PREFIX}{}-", std::process::id())).tempdir_in(parent)?;
    let aside = aside.keep();
    if let Err(e) = fs::rename(dir, &aside) {
        let _ = fs::remove_dir(&aside);
        return Err(e);
    }
    if let Err(e) = fs::rename(new, dir) {
        let _ = fs::rename(&aside, dir);
        return Err(e);
    }
    fs::rename(&aside, new)
}

/// Removes the temporaries of iopath processes that no longer run from `dir` (not below
/// it): entries named with one of this module's prefixes and a PID, whose PID is not a
/// running process and whose lock can be taken (a living writer holds it). Symbolic links
/// and other kinds of entries are left alone: iopath never makes them. Returns how many
/// were removed; problems are ignored (this is cleaning up, not the job).
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = temporary_pid(&name) else { continue };
        if pid == std::process::id() || process_runs(pid) {
            continue;
        }
        let path = e.path();
        let Ok(m) = fs::symlink_metadata(&path) else { continue };
        if !(m.is_file() || m.is_dir()) {
            continue;
        }
        // Open without following a link planted since the check above.
        let fd = rustix::fs::open(
            &path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        let Ok(fd) = fd else { continue };
        if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        let gone = if m.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
        if gone.is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether `name` is one of iopath's temporaries.
fn is_temporary_name(name: &str) -> bool {
    temporary_pid(name).is_some()
}

/// The PID in a temporary's name, if `name` is one of iopath's temporaries.
fn temporary_pid(name: &str) -> Option<u32> {
    let (rest, sep) = [(TMP_PREFIX, '-'), (STAGE_PREFIX, '-'), (OLD_PREFIX, '-'), (LEGACY_PREFIX, '.')]
        .iter()
        .find_map(|(p, sep)| name.strip_prefix(p).map(|r| (r, *sep)))?;
    let (pid, tail) = rest.split_once(sep)?;
    if tail.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// Whether a process with this PID exists (kill(pid, 0): "no such process" is the only
/// answer that means it does not; "not permitted" means it runs as another user).
fn process_runs(pid: u32) -> bool {
    let Some(p) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else { return false };
    !matches!(rustix::process::test_kill_process(p), Err(rustix::io::Errno::SRCH))
}

/// Takes the exclusive lock that marks a temporary as alive for as long as `f` is open.
fn hold_lock(f: &File) -> io::Result<()> {
    rustix::fs::flock(f, FlockOperation::NonBlockingLockExclusive).map_err(io::Error::from)
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` made absolute without resolving links, so `--out .` names the directory itself.
fn absolute(path: &Path) -> Result<PathBuf, ReportError> {
    let abs =
        std::path::absolute(path).map_err(|source| ReportError::CreateDir { path: path.to_path_buf(), source })?;
    // `absolute` keeps `..`; a set directory must be named by its last component.
    if abs.file_name().is_none() || abs.ends_with("..") {
        return Err(refused(path, "it does not name a directory by its own name", "name the directory, e.g. out/run1"));
    }
    Ok(abs)
}

/// Makes a rename in `dir` durable. Best effort: not every filesystem syncs directories.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    /// A PID that no process has: above the kernel's limit (pid_max is at most 2^22).
    const DEAD: u32 = 99_999_999;

    #[test]
    fn temporary_names_carry_a_pid() {
        assert_eq!(temporary_pid(".iopath-tmp-123-abCD12"), Some(123));
        assert_eq!(temporary_pid(".iopath-stage-7-x"), Some(7));
        assert_eq!(temporary_pid(".iopath-old-7-x"), Some(7));
        assert_eq!(temporary_pid(".iopath-tmp.42.0.sweep.csv"), Some(42));
        for not in
            [".iopath-tmp-", ".iopath-tmp-12", ".iopath-tmp-x-1", ".iopath-tmp-0-a", "iopath-tmp-1-a", "sweep.csv"]
        {
            assert_eq!(temporary_pid(not), None, "{not}");
        }
        assert!(!process_runs(DEAD));
        assert!(process_runs(std::process::id()));
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed_and_live_ones_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(p.join(format!(".iopath-tmp-{DEAD}-aaaaaa")), b"half a file").unwrap();
        fs::write(p.join(format!(".iopath-tmp.{DEAD}.3.sweep.png")), b"legacy").unwrap();
        fs::create_dir(p.join(format!(".iopath-stage-{DEAD}-bbbbbb"))).unwrap();
        fs::write(p.join(format!(".iopath-stage-{DEAD}-bbbbbb/sweep.json")), b"{").unwrap();
        // Ours (this process) and a dead one's whose lock is still held (its file was
        // inherited by a living process): both stay.
        fs::write(p.join(format!(".iopath-tmp-{}-cccccc", std::process::id())), b"mine").unwrap();
        let held = p.join(format!(".iopath-tmp-{DEAD}-dddddd"));
        fs::write(&held, b"locked").unwrap();
        let f = File::open(&held).unwrap();
        hold_lock(&f).unwrap();
        // A link with the prefix is not iopath's: iopath never makes links.
        std::os::unix::fs::symlink("/etc/hostname", p.join(format!(".iopath-tmp-{DEAD}-eeeeee"))).unwrap();
        fs::write(p.join("sweep.csv"), b"output").unwrap();
        assert_eq!(remove_stale_temporaries(p), 3);
        let mut want = vec![
            format!(".iopath-tmp-{}-cccccc", std::process::id()),
            format!(".iopath-tmp-{DEAD}-dddddd"),
            format!(".iopath-tmp-{DEAD}-eeeeee"),
            "sweep.csv".to_string(),
        ];
        want.sort();
        assert_eq!(names_in(p), want);
    }

    #[test]
    fn a_set_replaces_the_old_one_whole_and_leaves_nothing_beside_it() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let names = ["a.txt", "b.txt", "c.txt"];
        let set =
            |v: &[(&str, &str)]| v.iter().map(|(n, b)| (n.to_string(), b.as_bytes().to_vec())).collect::<Vec<_>>();
        write_set(&out, &set(&[("a.txt", "1"), ("b.txt", "1"), ("c.txt", "1")]), &names).unwrap();
        write_set(&out, &set(&[("a.txt", "2"), ("b.txt", "2")]), &names).unwrap();
        assert_eq!(names_in(&out), ["a.txt", "b.txt"]);
        assert_eq!(fs::read(out.join("a.txt")).unwrap(), b"2");
        assert_eq!(names_in(d.path()), ["out"]);
        fs::write(out.join("mine.txt"), b"keep").unwrap();
        let e = write_set(&out, &set(&[("a.txt", "3")]), &names).unwrap_err();
        assert!(e.is_refusal() && e.to_string().contains("\"mine.txt\""), "{e}");
        assert_eq!(fs::read(out.join("a.txt")).unwrap(), b"2");
    }

    #[test]
    fn the_fallback_swap_puts_the_old_set_under_the_staging_name() {
        let d = tempfile::tempdir().unwrap();
        let (new, dir) = (d.path().join("new"), d.path().join("dir"));
        fs::create_dir(&new).unwrap();
        fs::write(new.join("x"), b"new").unwrap();
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("x"), b"old").unwrap();
        swap_by_renames(&new, &dir, d.path()).unwrap();
        assert_eq!(fs::read(dir.join("x")).unwrap(), b"new");
        assert_eq!(fs::read(new.join("x")).unwrap(), b"old");
        assert_eq!(names_in(d.path()), ["dir", "new"]);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let e = write_set(&out, &[("../x".to_string(), vec![])], &["../x"]);
        assert!(e.is_err());
        // A set whose parent is a file cannot be created, and nothing is left.
        fs::write(d.path().join("f"), b"").unwrap();
        assert!(write_set(&d.path().join("f/sub"), &[("a".to_string(), vec![1])], &["a"]).is_err());
        assert!(write_atomic(&d.path().join("no/such/dir/x.csv"), b"x").is_err());
        assert_eq!(names_in(d.path()), ["f"]);
    }
}
