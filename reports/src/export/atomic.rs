//! Atomic file writes: a temp file in the same directory, synced, then renamed over the target.
//!
//! A reader of the target sees either the old file or the complete new one, never a part;
//! a crash leaves at most a hidden `.iopath-tmp.PID.N.NAME` file next to the target, and every
//! error path removes the temp file it made. The temp name ends with the target's name, so a
//! writer that picks its format by extension (plotters' PNG encoder) still sees `.png`.

use crate::error::ReportError;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` atomically: into a temp file in the same directory, fsync, rename.
///
/// An existing file at `path` is replaced (keeping its permissions); the directory must exist.
/// The CLI uses this for every file it writes.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_path(path)?;
    let result = File::create_new(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    match result {
        Ok(()) => commit(&tmp, path),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Like [`write_atomic`] for writers that need a path (plotters' PNG encoder): `fill` creates
/// the temp file at the path it is given; this then syncs it and renames it over `path`.
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let write_err = |source| ReportError::Write { path: path.to_path_buf(), source };
    let tmp = temp_path(path).map_err(write_err)?;
    if let Err(e) = fill(&tmp) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    let synced = File::options().write(true).open(&tmp).and_then(|f| f.sync_all());
    if let Err(e) = synced {
        let _ = fs::remove_file(&tmp);
        return Err(write_err(e));
    }
    commit(&tmp, path).map_err(write_err)
}

/// A fresh, hidden temp name next to `path`.
fn temp_path(path: &Path) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{} does not name a file", path.display()))
    })?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp_name = format!(".iopath-tmp.{}.{n}.{}", std::process::id(), name.to_string_lossy());
    Ok(match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp_name),
        _ => PathBuf::from(tmp_name),
    })
}

/// Renames the synced temp file over `path` and syncs the directory; removes the temp file
/// if the rename fails.
fn commit(tmp: &Path, path: &Path) -> io::Result<()> {
    if let Ok(meta) = fs::metadata(path) {
        let _ = fs::set_permissions(tmp, meta.permissions());
    }
    if let Err(e) = fs::rename(tmp, path) {
        let _ = fs::remove_file(tmp);
        return Err(e);
    }
    // Make the rename itself durable. Directories cannot be opened for syncing everywhere
    // (Windows), so this is best effort.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_hidden_siblings_and_unique() {
        let a = temp_path(Path::new("/x/y/sweep.csv")).unwrap();
        let b = temp_path(Path::new("/x/y/sweep.csv")).unwrap();
        assert_eq!(a.parent(), Some(Path::new("/x/y")));
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".iopath-tmp.") && name.ends_with(".sweep.csv"));
        assert_ne!(a, b);
        assert!(temp_path(Path::new("/")).is_err());
    }

    #[test]
    fn failed_fill_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("iopath-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("plot.png");
        let err = write_atomic_with(&target, |tmp| {
            fs::write(tmp, b"half").unwrap();
            Err(ReportError::PlotSize { width: 1, height: 1 })
        });
        assert!(err.is_err());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
