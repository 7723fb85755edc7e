//! fio on the command line: the fio spellings of the workload options that need more than
//! an alias (`--rwmixwrite`, `--size`, `--filename`, `--direct`), and `--fio-job FILE` as an
//! input: a fio job file's jobs as iopath workloads over the topology's drives.

use super::{CliError, CliResult, WorkloadArgs};
use anyhow::anyhow;
use iopath_model::{Topology, WorkloadSpec};
use iopath_validate::fio::jobfile::{JobFileRun, parse_job_file};
use std::path::{Path, PathBuf};

fn usage(msg: String) -> CliError {
    CliError::usage(anyhow!(msg))
}

/// Puts the fio-only options of `a` into `spec`: `--rwmixwrite N` is `rwmixread` 100-N,
/// `--size` fio's size, `--direct` must be 1, and `--filename` names the drives whose `dev`
/// the paths are (with a topology; without one, measure takes them as its targets).
pub fn apply_fio_options(a: &WorkloadArgs, spec: &mut WorkloadSpec, topo: Option<&Topology>) -> CliResult<()> {
    if let Some(w) = &a.rwmixwrite {
        let n = w
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= 100)
            .ok_or_else(|| usage(format!("--rwmixwrite {w:?}: expected a percentage of writes from 0 to 100")))?;
        spec.rwmixread = Some(100 - n);
    }
    if let Some(s) = &a.size {
        spec.size = Some(s.clone());
    }
    if let Some(d) = &a.direct {
        check_direct(d).map_err(|m| usage(format!("--direct {d}: {m}")))?;
    }
    if let (Some(f), Some(t)) = (&a.filename, topo) {
        let mut ids = Vec::new();
        for p in split_filenames(f) {
            ids.push(drive_of(t, &p, &[]).map_err(|m| usage(format!("--filename {f}: {m}")))?);
        }
        spec.drives = Some(ids);
        spec.active = None;
    }
    Ok(())
}

/// fio's `direct`: iopath measures direct I/O only.
pub fn check_direct(v: &str) -> Result<(), String> {
    match v.trim() {
        "1" | "true" => Ok(()),
        "0" | "false" => Err("iopath measures direct I/O (O_DIRECT) only: buffered I/O would measure the page \
                              cache, not the drive; give direct=1"
            .to_string()),
        _ => Err("expected 1 (direct I/O)".to_string()),
    }
}

/// fio's `filename` list: paths separated by `:`, a `\:` inside a name being a colon.
pub fn split_filenames(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                out.last_mut().expect("one entry").push(':');
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one entry").push(c),
        }
    }
    out.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// The drive of `topo` a fio filename names: by `--map FILE=DRIVE`, else the drive whose
/// `dev` is that path (a relative `dev` is next to the topology file).
pub fn drive_of(topo: &Topology, path: &str, map: &[(String, String)]) -> Result<String, String> {
    if let Some((_, d)) = map.iter().find(|(f, _)| f == path) {
        return if topo.drives.iter().any(|&ix| topo.nodes[ix].id == *d) {
            Ok(d.clone())
        } else {
            Err(format!("--map {path}={d}: {} has no drive {d:?}", topo.file))
        };
    }
    let base = Path::new(&topo.file).parent().unwrap_or(Path::new(""));
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let want = canon(Path::new(path));
    for &ix in &topo.drives {
        let n = &topo.nodes[ix];
        let Some(dev) = n.dev.as_deref().filter(|d| !d.is_empty()) else { continue };
        let full: PathBuf = base.join(dev);
        if dev == path || full == Path::new(path) || (want.is_some() && canon(&full) == want) {
            return Ok(n.id.clone());
        }
    }
    let devs: Vec<String> = topo
        .drives
        .iter()
        .filter_map(|&ix| topo.nodes[ix].dev.as_ref().map(|d| format!("{}={d}", topo.nodes[ix].id)))
        .collect();
    Err(format!(
        "no drive of {} has dev = {path:?} ({}); give it that dev, or map it with --map {path}=DRIVE",
        topo.file,
        if devs.is_empty() { "no drive has a dev".to_string() } else { format!("its devs: {}", devs.join(", ")) }
    ))
}

/// Reads `--fio-job FILE`: fio's job format into one run (its refusals are usage errors,
/// each with the file, the line and the option).
pub fn load(path: &Path) -> CliResult<JobFileRun> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("--fio-job {}: cannot read the job file: {e}", path.display())))?;
    parse_job_file(&path.display().to_string(), &text).map_err(|e| usage(e.to_string()))
}

/// The workload of a job file: with a topology, over the drives its filenames name (a
/// drive's `dev`, or `--map FILE=DRIVE`); without one, the filenames are the targets.
pub fn job_spec(run: &JobFileRun, topo: Option<&Topology>, map: &[String]) -> CliResult<WorkloadSpec> {
    let mut pairs = Vec::new();
    for m in map {
        match m.split_once('=') {
            Some((f, d)) if !f.trim().is_empty() && !d.trim().is_empty() => {
                pairs.push((f.trim().to_string(), d.trim().to_string()))
            }
            _ => return Err(usage(format!("--map {m:?}: expected FILE=DRIVE, e.g. /dev/sdb=D1"))),
        }
    }
    let mut spec = run.spec.clone();
    if let Some(t) = topo {
        let mut ids = Vec::new();
        for target in &run.targets {
            let id = drive_of(t, &target.path, &pairs)
                .map_err(|m| usage(format!("{}:{}: filename={}: {m}", run.file, target.line, target.path)))?;
            if ids.contains(&id) {
                return Err(usage(format!(
                    "{}:{}: filename={} is drive {id}, which another job already runs on; one job section per drive",
                    run.file, target.line, target.path
                )));
            }
            ids.push(id);
        }
        spec.drives = Some(ids);
    } else if !pairs.is_empty() {
        return Err(usage("--map names drives of a topology: give the topology file".to_string()));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_split_at_unescaped_colons() {
        // fio's HOWTO, `filename`: "separate the files with a ':' character ... escape it
        // with a '\' character", e.g. filename=/dev/sda:/dev/sdb.
        assert_eq!(split_filenames("/dev/sda:/dev/sdb"), ["/dev/sda", "/dev/sdb"]);
        assert_eq!(split_filenames("/tmp/a\\:b.img"), ["/tmp/a:b.img"]);
        assert_eq!(split_filenames("/dev/sda"), ["/dev/sda"]);
    }

    #[test]
    fn direct_zero_is_refused_with_the_reason() {
        assert!(check_direct("1").is_ok());
        assert!(check_direct("0").unwrap_err().contains("page cache"));
        assert!(check_direct("2").is_err());
    }
}
