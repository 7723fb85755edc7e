//! fio job files as input: fio's INI format (`[global]` and job sections, `;`/`#` comments,
//! `key=value` or a bare `key` for a flag) read into the workloads iopath runs.
//!
//! What is decided here, as fio's HOWTO defines the options:
//! - Options apply in order: a `[global]` section sets defaults for the jobs after it; a job
//!   section's own options win. Sizes follow the file's `kb_base` (fio's default 1024, see
//!   [`KbBase`]), times are seconds without a unit, as fio.
//! - Jobs run at once unless `stonewall`/`wait_for_previous` or `new_group` start a new
//!   group. iopath runs one workload over its drives at a time, so a file holds one group,
//!   and all of its jobs run the same workload on different files (one section per drive,
//!   as `iopath measure --write-fio-job` writes); anything else is refused with the line.
//! - A job names one file or device: fio spreads the I/O of one job with `filename=a:b`
//!   over both files, which is not iopath's jobs per drive, so such a list is refused.
//! - `ioengine`: `io_uring` and `libaio` keep `iodepth` direct I/Os in flight (iopath's
//!   io_uring engine); `psync`, `pvsync`, `pvsync2` and `sync` are synchronous, which fio runs
//!   at depth 1 whatever `iodepth` says (iopath's threads engine at iodepth 1).
//! - `direct` must be 1; `include` and `$`-variables are refused; every option iopath does
//!   not model is refused by name and line, never ignored.

use iopath_model::WorkloadSpec;
use iopath_model::units::{KbBase, parse_fio_size};

/// Why a job file cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct JobFileError {
    pub file: String,
    pub line: usize,
    /// The option at fault, when one is.
    pub option: Option<String>,
    pub message: String,
}

/// Which engine a job file asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEngine {
    /// `io_uring` or `libaio`: `iodepth` I/Os in flight.
    Async,
    /// `psync`, `pvsync`, `pvsync2`, `sync`: one I/O at a time per job.
    Sync,
}

/// One file or device of the job file, with the section that names it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFileTarget {
    pub job: String,
    pub path: String,
    /// Line of the `filename` option.
    pub line: usize,
}

/// A job file as iopath runs it: one workload over its targets.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFileRun {
    pub file: String,
    /// The workload (`drives` unset: the caller maps the targets to drives).
    pub spec: WorkloadSpec,
    pub targets: Vec<JobFileTarget>,
    pub engine: JobEngine,
    /// fio's `group_reporting`: the jobs are reported as one.
    pub group_reporting: bool,
}

/// One `key=value` as written.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    line: usize,
}

/// Options a job section may hold that change nothing iopath measures (fio's HOWTO): names,
/// descriptions, seeding, cache invalidation (direct I/O bypasses the cache), threads
/// instead of processes.
const HARMLESS: &[&str] = &["description", "randrepeat", "invalidate", "thread", "group_reporting", "name"];

/// Reads a job file into the run it describes.
pub fn parse_job_file(file: &str, text: &str) -> Result<JobFileRun, JobFileError> {
    let err = |line: usize, option: Option<&str>, message: String| JobFileError {
        file: file.to_string(),
        line,
        option: option.map(str::to_string),
        message,
    };
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs: Vec<(String, usize, Vec<Opt>)> = Vec::new();
    let mut in_global = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| err(line, None, format!("{t:?}: a section is [NAME]")))?;
            in_global = name.trim() == "global";
            if !in_global {
                jobs.push((name.trim().to_string(), line, global.clone()));
            }
            continue;
        }
        if t.starts_with("include ") {
            return Err(err(
                line,
                Some("include"),
                "include is not read: put the included options in this file".into(),
            ));
        }
        let (key, value) = match t.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), Some(v.trim().to_string())),
            None => (t.to_ascii_lowercase(), None),
        };
        if value.as_deref().is_some_and(|v| v.contains('$')) {
            return Err(err(
                line,
                Some(&key),
                format!("{key}: $-variables (environment or $mb_memory) are not expanded: write the value"),
            ));
        }
        let o = Opt { key, value, line };
        match jobs.last_mut() {
            Some((_, _, opts)) if !in_global => opts.push(o),
            _ => global.push(o),
        }
    }
    if jobs.is_empty() {
        return Err(err(
            text.lines().count().max(1),
            None,
            "no job section: add one, e.g. [job1] with filename=".into(),
        ));
    }
    let mut run: Option<JobFileRun> = None;
    for (ix, (name, line, opts)) in jobs.iter().enumerate() {
        let job = job_of(file, name, *line, opts)?;
        if ix > 0 && job.new_group {
            return Err(err(
                job.group_line,
                Some("stonewall"),
                format!(
                    "job [{name}] starts a new group (stonewall, wait_for_previous or new_group): iopath runs one \
                     group of jobs at once; put each group in its own file"
                ),
            ));
        }
        match &mut run {
            None => {
                run = Some(JobFileRun {
                    file: file.to_string(),
                    spec: job.spec,
                    targets: vec![job.target],
                    engine: job.engine,
                    group_reporting: job.group_reporting,
                })
            }
            Some(r) => {
                if r.spec != job.spec || r.engine != job.engine || r.group_reporting != job.group_reporting {
                    return Err(err(
                        *line,
                        None,
                        format!(
                            "job [{name}] runs another workload than job [{}]: iopath runs one workload over \
                             its drives at once; give the jobs the same options but filename (or split the file)",
                            r.targets[0].job
                        ),
                    ));
                }
                r.targets.push(job.target);
            }
        }
    }
    Ok(run.expect("at least one job"))
}

struct Job {
    spec: WorkloadSpec,
    target: JobFileTarget,
    engine: JobEngine,
    group_reporting: bool,
    new_group: bool,
    group_line: usize,
}

/// One job section with the global options before it.
fn job_of(file: &str, name: &str, line: usize, opts: &[Opt]) -> Result<Job, JobFileError> {
    let err = |line: usize, key: &str, message: String| JobFileError {
        file: file.to_string(),
        line,
        option: Some(key.to_string()),
        message: format!("{key}: {message}"),
    };
    // kb_base first: it changes what every size means (fio reads it before sizes only when
    // written first; iopath applies it to the whole section, which is what a user means).
    let mut kb = KbBase::Binary;
    for o in opts.iter().filter(|o| o.key == "kb_base") {
        kb = o
            .value
            .as_deref()
            .and_then(KbBase::from_option)
            .ok_or_else(|| err(o.line, "kb_base", "expected 1024 (fio's default) or 1000".into()))?;
    }
    let mut spec = WorkloadSpec { rw: Some("read".into()), bs: Some("4096".into()), ..Default::default() };
    let mut filename: Option<(String, usize)> = None;
    // fio's default engine is psync (HOWTO, ioengine); fio-3.33 runs `--iodepth=8` without an
    // ioengine at depth 1 (its JSON's iodepth_level: 100% at 1).
    let mut engine = JobEngine::Sync;
    let (mut group_reporting, mut new_group, mut group_line) = (false, false, line);
    let mut time_based = false;
    for o in opts {
        let v = o.value.as_deref().unwrap_or("1");
        let bad = |m: String| err(o.line, &o.key, m);
        let whole = |max: u32| -> Result<u32, JobFileError> {
            v.parse::<u32>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| bad(format!("{v:?} is not a whole number up to {max}")))
        };
        let size = |s: &str| -> Result<String, JobFileError> {
            if s.trim().is_empty() {
                return Ok(String::new());
            }
            parse_fio_size(s, kb).map(|b| b.get().to_string()).map_err(|e| bad(e.to_string()))
        };
        match o.key.as_str() {
            "filename" => filename = Some((v.to_string(), o.line)),
            "rw" | "readwrite" => spec.rw = Some(v.to_string()),
            "bs" | "blocksize" => {
                let sides: Result<Vec<String>, _> = v.split(',').map(size).collect();
                spec.bs = Some(sides?.join(","));
            }
            "iodepth" => spec.iodepth = Some(whole(65536)?),
            "numjobs" => spec.numjobs = Some(whole(4096)?),
            "rwmixread" => spec.rwmixread = Some(whole(100)?),
            "rwmixwrite" => spec.rwmixread = Some(100 - whole(100)?),
            "size" | "filesize" if v.trim().ends_with('%') => spec.size = Some(v.trim().to_string()),
            "size" | "filesize" => spec.size = Some(size(v)?),
            "offset" => match v.trim() {
                "0" | "0%" => {}
                _ => {
                    return Err(bad(format!(
                        "{v:?}: iopath's workloads start at the beginning of each drive (offset=0); a region from \
                         an offset is not modelled yet"
                    )));
                }
            },
            "runtime" | "ramp_time" => {
                let d = fio_time(v).ok_or_else(|| bad(format!("{v:?} is not a time such as 10, 10s or 500ms")))?;
                if o.key == "runtime" { spec.runtime = Some(d) } else { spec.ramp = Some(d) }
            }
            "time_based" => time_based = v != "0",
            "direct" => {
                if v.trim() != "1" {
                    return Err(bad(
                        "iopath measures direct I/O (O_DIRECT) only: buffered I/O measures the page cache, \
                         not the drive; give direct=1"
                            .into(),
                    ));
                }
            }
            "ioengine" => {
                engine = match v.trim() {
                    "io_uring" | "libaio" => JobEngine::Async,
                    "psync" | "pvsync" | "pvsync2" | "sync" => JobEngine::Sync,
                    other => {
                        return Err(bad(format!(
                            "{other:?} is not an engine iopath runs: io_uring or libaio (iodepth I/Os in flight), \
                             psync, pvsync, pvsync2 or sync (one at a time)"
                        )));
                    }
                }
            }
            "randseed" => spec.seed = Some(v.parse().map_err(|_| bad(format!("{v:?} is not a whole number")))?),
            "stonewall" | "wait_for_previous" | "new_group" => {
                new_group = true;
                group_line = o.line;
            }
            "kb_base" => {}
            k if HARMLESS.contains(&k) => {
                if k == "group_reporting" {
                    group_reporting = v != "0";
                }
            }
            k => {
                return Err(bad(format!(
                    "job [{name}]: iopath does not model fio's {k}; remove it (or run the file with fio itself)"
                )));
            }
        }
    }
    if spec.runtime.is_some() && !time_based {
        // fio without time_based stops at the runtime or when the region is done, whichever
        // is first; iopath runs the runtime in full, fio's time_based.
        let o = opts.iter().find(|o| o.key == "runtime").expect("runtime given");
        return Err(err(
            o.line,
            "runtime",
            "without time_based=1 fio stops when the region has been covered once, iopath runs the runtime in full: \
             add time_based=1"
                .into(),
        ));
    }
    if engine == JobEngine::Sync {
        // fio's HOWTO, iodepth: "increasing iodepth beyond 1 will not affect synchronous
        // ioengines".
        spec.iodepth = Some(1);
    }
    let (path, fline) = filename.ok_or_else(|| JobFileError {
        file: file.to_string(),
        line,
        option: Some("filename".into()),
        message: format!("job [{name}] has no filename: name the file or device it runs on"),
    })?;
    let paths = crate_split(&path);
    if paths.len() != 1 {
        return Err(err(
            fline,
            "filename",
            format!(
                "{path:?} names {} files: fio spreads one job's I/O over them, iopath runs jobs per drive; give each \
                 file its own section",
                paths.len()
            ),
        ));
    }
    Ok(Job {
        spec,
        target: JobFileTarget { job: name.to_string(), path: paths[0].clone(), line: fline },
        engine,
        group_reporting,
        new_group,
        group_line,
    })
}

/// fio's filename list: `:` separates, `\:` is a colon in a name.
fn crate_split(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' if it.peek() == Some(&':') => {
                it.next();
                out.last_mut().expect("one").push(':');
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// fio's time values: seconds without a unit; `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`,
/// `h`/`hr` (fio's HOWTO, "Time values"), in iopath's spelling.
fn fio_time(v: &str) -> Option<String> {
    let v = v.trim().to_ascii_lowercase();
    let end = v.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(v.len());
    let (n, unit) = v.split_at(end);
    n.parse::<f64>().ok()?;
    let unit = match unit {
        "" | "s" | "sec" => "s",
        "ms" | "msec" => "ms",
        "us" | "usec" => "us",
        "m" | "min" => "m",
        "h" | "hr" => "h",
        _ => return None,
    };
    Some(format!("{n}{unit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "; two drives\n[global]\nioengine=psync\nrw=randread\nbs=4KiB\nkb_base=1000\niodepth=8\n\
        numjobs=2\ntime_based\nruntime=2\nramp_time=500ms\nsize=10%\ngroup_reporting\n\n[a]\nfilename=/dev/loop1\n\
        # comment\n[b]\nfilename=/dev/loop2\n";

    #[test]
    fn reads_global_and_job_sections() {
        let r = parse_job_file("t.fio", TWO).unwrap();
        assert_eq!(r.targets.iter().map(|t| t.path.as_str()).collect::<Vec<_>>(), ["/dev/loop1", "/dev/loop2"]);
        assert_eq!(r.targets[1].line, 19);
        assert_eq!(r.spec.rw.as_deref(), Some("randread"));
        // kb_base=1000: KiB is 1024 (fio's parse.c), so 4KiB = 4096 bytes.
        assert_eq!(r.spec.bs.as_deref(), Some("4096"));
        // psync is synchronous: fio runs it at depth 1 whatever iodepth says.
        assert_eq!((r.spec.iodepth, r.spec.numjobs), (Some(1), Some(2)));
        assert_eq!((r.spec.runtime.as_deref(), r.spec.ramp.as_deref()), (Some("2s"), Some("500ms")));
        assert_eq!(r.spec.size.as_deref(), Some("10%"));
        assert_eq!(r.engine, JobEngine::Sync);
        assert!(r.group_reporting);
    }

    #[test]
    fn refusals_name_the_line_and_option() {
        let cases = [
            ("[a]\nfilename=/dev/x\nverify=md5\n", 3, "verify"),
            ("[a]\nfilename=/dev/x\ndirect=0\n", 3, "direct"),
            ("[a]\nfilename=/dev/x:/dev/y\n", 2, "filename"),
            ("[a]\nfilename=$DEV\n", 2, "filename"),
            ("[a]\nfilename=/dev/x\nruntime=2\n", 3, "runtime"),
            ("[a]\nfilename=/dev/x\n[b]\nstonewall\nfilename=/dev/y\n", 4, "stonewall"),
            ("[a]\nfilename=/dev/x\nioengine=mmap\n", 3, "ioengine"),
            ("[a]\nfilename=/dev/x\noffset=1g\n", 3, "offset"),
        ];
        for (text, line, opt) in cases {
            let e = parse_job_file("t.fio", text).unwrap_err();
            assert_eq!((e.line, e.option.as_deref()), (line, Some(opt)), "{text}: {e}");
            assert!(e.to_string().starts_with(&format!("t.fio:{line}: ")), "{e}");
        }
        let e = parse_job_file("t.fio", "[a]\nfilename=/dev/x\nbs=4k\n[b]\nfilename=/dev/y\nbs=8k\n").unwrap_err();
        assert!(e.message.contains("another workload"), "{e}");
        assert!(parse_job_file("t.fio", "include other.fio\n").unwrap_err().message.contains("include"));
    }

    #[test]
    fn fio_defaults_apply_when_absent() {
        // fio's defaults (HOWTO): rw=read, bs=4k, numjobs=1, ioengine=psync (so depth 1).
        let r = parse_job_file("t.fio", "[only]\nfilename=/tmp/x\niodepth=8\n").unwrap();
        assert_eq!((r.spec.rw.as_deref(), r.spec.bs.as_deref()), (Some("read"), Some("4096")));
        assert_eq!((r.spec.iodepth, r.spec.numjobs, r.engine), (Some(1), None, JobEngine::Sync));
        let r = parse_job_file("t.fio", "[only]\nfilename=/tmp/x\nioengine=libaio\niodepth=8\n").unwrap();
        assert_eq!((r.spec.iodepth, r.engine), (Some(8), JobEngine::Async));
        let r = parse_job_file("t.fio", "[x]\nfilename=/tmp/a\\:b\nbs=4k,8k\nrwmixwrite=30\n").unwrap();
        assert_eq!(r.targets[0].path, "/tmp/a:b");
        assert_eq!((r.spec.bs.as_deref(), r.spec.rwmixread), (Some("4096,8192"), Some(70)));
    }
}
