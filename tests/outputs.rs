//! Output paths (issue #11, items 4, 5 and the kill -9 half of 11): every writer refuses a
//! device node, FIFO, socket, directory or symbolic link where it was told to write a file;
//! temporaries have random names, so a symlink planted at a predictable name is never
//! followed; `measure` writes its fio job file only once the write gate has cleared the run;
//! and an output directory (`sweep --out DIR`) always holds one complete set of files, the
//! old one or the new one, even when iopath is killed with SIGKILL while writing it.
//!
//! Tests that need root (`mknod`) skip with a printed reason, and fail when `CI` is set.

use iopath_test_support as rig;
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn iopath() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iopath"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.stdin(Stdio::null());
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory on a disk filesystem (direct I/O, which `measure` needs, refuses tmpfs).
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("iopath-out-{tag}-")).tempdir_in(rig::scratch_dir()).unwrap()
}

/// Whether this test may run as root; says why not, and fails under CI.
fn as_root(test: &str) -> bool {
    if rig::is_root() {
        return true;
    }
    rig::skip(&format!("{test} needs root (mknod, mount)"));
    false
}

fn run_tool(prog: &str, args: &[&str]) {
    let o = Command::new(prog).args(args).output().unwrap_or_else(|e| panic!("{prog}: {e}"));
    assert!(o.status.success(), "{prog} {args:?}: {}", stderr(&o));
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 16 MiB file target, fully written, for `measure`.
fn target_file(dir: &Path) -> PathBuf {
    let f = dir.join("target.img");
    std::fs::write(&f, vec![0x5a; 16 << 20]).unwrap();
    f
}

/// A measurement CSV that `fit` and `compare` accept for the ASM1166 topology.
fn measurements(dir: &Path) -> PathBuf {
    let f = dir.join("points.csv");
    std::fs::write(&f, "rw,bs,iodepth,active,mb_s\nread,1m,8,1,550\nread,1m,8,2,1100\n").unwrap();
    f
}

/// Every way of naming one output file: the command line with `{}` where the path goes.
fn single_file_writers(dir: &Path) -> Vec<(String, Vec<String>)> {
    let target = target_file(dir);
    let points = measurements(dir);
    let t = path_str(&target).to_string();
    let p = path_str(&points).to_string();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("validate/tests/fixtures/ahci_pm.manifest");
    let sys = dir.join("sys");
    iopath_validate::discover::materialise_manifest(&std::fs::read_to_string(fixture).unwrap(), &sys).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let measure = ["measure", "--target", &t, "--rw", "read", "--bs", "64k", "--runtime", "0.2s", "--ramp", "0s", "-q"];
    let fit = [
        "fit",
        "configs/asm1166-6ssd.toml",
        &p,
        "--free",
        "hba.dma_read_efficiency",
        "--max-evaluations",
        "2",
        "--sim-runtime",
        "0.05",
        "-q",
    ];
    vec![
        (
            "simulate --out".into(),
            s(&["simulate", "configs/asm1166-6ssd.toml", "--runtime", "0.05s", "-q", "--out", "{}"]),
        ),
        ("fit --out".into(), [s(&fit), s(&["--out", "{}"])].concat()),
        ("discover --out".into(), s(&["discover", "--sysfs-root", path_str(&sys), "--out", "{}"])),
        ("measure --out".into(), [s(&measure), s(&["--out", "{}"])].concat()),
        ("measure --write-fio-job".into(), [s(&measure), s(&["--write-fio-job", "{}"])].concat()),
    ]
}

/// Every way of naming an output directory.
fn set_writers(dir: &Path) -> Vec<(String, Vec<String>)> {
    let p = path_str(&measurements(dir)).to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "sweep --out".into(),
            s(&["sweep", "configs/asm1166-6ssd.toml", "--runtime", "0.02s", "--active", "1..2", "-q", "--out", "{}"]),
        ),
        ("report --out".into(), s(&["report", "configs/asm1166-6ssd.toml", "--runtime", "0.02s", "-q", "--out", "{}"])),
        (
            "compare --out".into(),
            s(&["compare", "configs/asm1166-6ssd.toml", &p, "--sim-runtime", "0.05", "-q", "--out", "{}"]),
        ),
    ]
}

fn run_with(args: &[String], out: &Path) -> Output {
    let args: Vec<String> =
        args.iter().map(|a| if a == "{}" { path_str(out).to_string() } else { a.clone() }).collect();
    iopath().args(&args).output().unwrap()
}

/// Asserts a refusal: exit 2 and each needle in stderr.
fn assert_refused(what: &str, o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "{what}: expected a refusal (exit 2); stderr: {}", stderr(o));
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "{what}: missing {n:?} in: {e}");
    }
}

mod refused_paths {
    use super::*;

    /// Item 4: `--out /dev/null` turned the device node into a regular file. Every writer now
    /// refuses a character device (a copy of /dev/null's numbers, made with mknod in a temp
    /// dir) and leaves the node as it was: same inode, same device numbers.
    #[test]
    fn a_device_node_is_refused_and_left_as_it_was() {
        if !as_root("a_device_node_is_refused_and_left_as_it_was") {
            return;
        }
        let d = scratch("dev");
        let node = d.path().join("null");
        run_tool("mknod", &[path_str(&node), "c", "1", "3"]);
        let before = std::fs::symlink_metadata(&node).unwrap();
        let mut writers = single_file_writers(d.path());
        writers.extend(set_writers(d.path()));
        for (what, args) in &writers {
            let o = run_with(args, &node);
            assert_refused(what, &o, &["character device", path_str(&node)]);
            let after = std::fs::symlink_metadata(&node).unwrap();
            assert!(after.file_type().is_char_device(), "{what}: the device node was replaced");
            assert_eq!((after.ino(), after.rdev()), (before.ino(), before.rdev()), "{what}: the node changed");
        }
    }

    /// A FIFO is refused too (no root needed), and before any work starts: `measure` has not
    /// yet created its missing target file when it refuses.
    #[test]
    fn a_fifo_is_refused_before_the_run() {
        let d = scratch("fifo");
        let fifo = d.path().join("pipe");
        run_tool("mkfifo", &[path_str(&fifo)]);
        let mut writers = single_file_writers(d.path());
        writers.extend(set_writers(d.path()));
        for (what, args) in &writers {
            let o = run_with(args, &fifo);
            assert_refused(what, &o, &["FIFO", "refusing to write"]);
            assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "{what}: the FIFO was replaced");
            assert!(
                o.stdout.is_empty(),
                "{what}: printed results before refusing: {}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
        let fresh = d.path().join("fresh.img");
        let o = iopath()
            .args(["measure", "--target", path_str(&fresh), "--size", "4m", "--rw", "read", "--runtime", "0.1s"])
            .args(["--ramp", "0s", "-q", "--out", path_str(&fifo)])
            .output()
            .unwrap();
        assert_refused("measure --out FIFO", &o, &["FIFO"]);
        assert!(!fresh.exists(), "measure created its target before refusing the output path");
    }

    /// A symlink as the final path component is refused with a message naming it and its
    /// target; the target keeps its bytes and the link stays a link.
    #[test]
    fn a_symlink_is_refused_and_its_target_untouched() {
        let d = scratch("link");
        let elsewhere = scratch("link-target");
        let victim = elsewhere.path().join("precious.txt");
        std::fs::write(&victim, b"precious\n").unwrap();
        let link = d.path().join("out.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let dir_link = d.path().join("outdir");
        std::os::unix::fs::symlink(elsewhere.path(), &dir_link).unwrap();
        let mut cases: Vec<(String, Vec<String>, &Path)> =
            single_file_writers(d.path()).into_iter().map(|(w, a)| (w, a, link.as_path())).collect();
        cases.extend(set_writers(d.path()).into_iter().map(|(w, a)| (w, a, dir_link.as_path())));
        for (what, args, l) in &cases {
            let o = run_with(args, l);
            assert_refused(what, &o, &["symbolic link", path_str(l)]);
            assert!(std::fs::symlink_metadata(l).unwrap().file_type().is_symlink(), "{what}: the link was replaced");
            assert_eq!(std::fs::read(&victim).unwrap(), b"precious\n", "{what}: the link's target changed");
            let names: Vec<_> = std::fs::read_dir(elsewhere.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert_eq!(names, vec![std::ffi::OsString::from("precious.txt")], "{what}: wrote into the linked dir");
        }
    }

    /// A mount point cannot be swapped out, so it is refused as an output directory (before
    /// the run) rather than failing after it.
    #[test]
    fn a_mount_point_is_refused_as_an_output_directory() {
        if !as_root("a_mount_point_is_refused_as_an_output_directory") {
            return;
        }
        let d = scratch("mnt");
        let mnt = d.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        run_tool("mount", &["-t", "tmpfs", "-o", "size=1m", "iopath-test", path_str(&mnt)]);
        let (what, args) = &set_writers(d.path())[0];
        let o = run_with(args, &mnt);
        run_tool("umount", &[path_str(&mnt)]);
        assert_refused(what, &o, &["mount point", "name a directory inside it"]);
        assert!(o.stdout.is_empty(), "refused after the run");
    }

    /// The policy is about the last component only: a symlinked directory above the output
    /// is followed, and the file lands in the real directory.
    #[test]
    fn a_symlinked_directory_above_the_output_is_followed() {
        let d = scratch("linkdir");
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, d.path().join("via")).unwrap();
        let (what, args) = &single_file_writers(d.path())[0];
        let o = run_with(args, &d.path().join("via/r.json"));
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&std::fs::read(real.join("r.json")).unwrap()).unwrap();
        assert_eq!(r["kind"], "simulated");
        let (what, args) = &set_writers(d.path())[0];
        let o = run_with(args, &d.path().join("via/sweep"));
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(real.join("sweep/sweep.json").is_file(), "{what}: the set is not in the real directory");
        assert_eq!(temporaries(&real), Vec::<String>::new());
    }

    /// A directory where a file is expected, and a file where a directory is expected.
    #[test]
    fn a_directory_for_a_file_and_a_file_for_a_directory_are_refused() {
        let d = scratch("kind");
        let sub = d.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let (what, args) = &single_file_writers(d.path())[0];
        assert_refused(what, &run_with(args, &sub), &["is a directory"]);
        let file = d.path().join("file.txt");
        std::fs::write(&file, b"keep").unwrap();
        let (what, args) = &set_writers(d.path())[0];
        assert_refused(what, &run_with(args, &file), &["regular file", "not a directory"]);
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    }
}

mod measure_outputs {
    use super::*;

    /// Item 5: `measure` wrote `.NAME.tmp<PID>` with File::create, so a symlink planted there
    /// had its target overwritten. Plant links at every name an old version would have used
    /// (measure's and the reports crate's), as soon as the process exists: after the run no
    /// link target has changed and both outputs are regular files.
    #[test]
    fn symlinks_planted_at_predictable_temp_names_are_not_followed() {
        let d = scratch("plant");
        let elsewhere = scratch("plant-victims");
        let target = target_file(d.path());
        let out = d.path().join("r.json");
        let job = d.path().join("job.fio");
        let child = iopath()
            .args(["measure", "--target", path_str(&target), "--rw", "read", "--bs", "64k"])
            .args(["--runtime", "0.5s", "--ramp", "0s", "-q", "--json", "--out", path_str(&out)])
            .args(["--write-fio-job", path_str(&job)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut victims = Vec::new();
        for (i, name) in [
            format!(".r.json.tmp{pid}"),
            format!(".job.fio.tmp{pid}"),
            format!(".iopath-tmp.{pid}.0.r.json"),
            format!(".iopath-tmp.{pid}.1.job.fio"),
            "r.tmp~".to_string(),
        ]
        .iter()
        .enumerate()
        {
            let v = elsewhere.path().join(format!("victim{i}"));
            std::fs::write(&v, format!("victim {i}\n")).unwrap();
            std::os::unix::fs::symlink(&v, d.path().join(name)).unwrap();
            victims.push((v, format!("victim {i}\n")));
        }
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "measure failed: {}", stderr(&o));
        for (v, text) in &victims {
            assert_eq!(std::fs::read_to_string(v).unwrap(), *text, "{} was overwritten through a link", v.display());
        }
        for f in [&out, &job] {
            let m = std::fs::symlink_metadata(f).unwrap();
            assert!(m.file_type().is_file() && m.len() > 0, "{} is not a written regular file", f.display());
        }
        let r: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(r["kind"], "measured");
    }

    /// Item 5: the fio job file was written even when the write gate refused the run.
    #[test]
    fn a_refused_write_leaves_no_fio_job_file() {
        let d = scratch("gate");
        let target = target_file(d.path());
        let before = std::fs::read(&target).unwrap();
        let job = d.path().join("job.fio");
        let out = d.path().join("r.json");
        let o = iopath()
            .args(["measure", "--target", path_str(&target), "--rw", "write", "--bs", "64k"])
            .args([
                "--runtime",
                "0.2s",
                "--ramp",
                "0s",
                "-q",
                "--write-fio-job",
                path_str(&job),
                "--out",
                path_str(&out),
            ])
            .output()
            .unwrap();
        assert_refused("measure --rw write without --allow-write", &o, &["--allow-write"]);
        assert!(!job.exists(), "the fio job file was written although the run was refused");
        assert!(!out.exists(), "a report was written although the run was refused");
        assert_eq!(std::fs::read(&target).unwrap(), before, "the refused run changed the target");
    }
}

/// The names and contents of the regular files in `dir`, with the run-dependent cost fields
/// of JSON documents (wall and CPU time) removed so two runs of one sweep compare equal.
fn set_of(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut m = BTreeMap::new();
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in rd {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.file_type().unwrap().is_file() {
            return Err(format!("{name} is not a regular file"));
        }
        let mut bytes = std::fs::read(e.path()).unwrap();
        if name.ends_with(".json") {
            let mut v: Value =
                serde_json::from_slice(&bytes).map_err(|err| format!("{name} is not complete JSON: {err}"))?;
            strip_costs(&mut v);
            bytes = serde_json::to_vec(&v).unwrap();
        }
        m.insert(name, bytes);
    }
    Ok(m)
}

fn strip_costs(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("wall_s");
            o.remove("cpu_s");
            o.values_mut().for_each(strip_costs);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_costs),
        _ => {}
    }
}

/// Which of the known sets `dir` holds, or why it holds none of them (a mix, a missing or
/// extra file, a damaged file).
fn classify(dir: &Path, sets: &[BTreeMap<String, Vec<u8>>; 2]) -> Result<usize, String> {
    let got = set_of(dir)?;
    for (i, s) in sets.iter().enumerate() {
        if got == *s {
            return Ok(i);
        }
    }
    let mut why = Vec::new();
    for (name, bytes) in &got {
        let from: Vec<usize> = (0..2).filter(|&i| sets[i].get(name) == Some(bytes)).collect();
        why.push(format!("{name}: {}", if from.is_empty() { "neither set".into() } else { format!("set {from:?}") }));
    }
    Err(format!("a mix: {}", why.join(", ")))
}

/// iopath's temporaries (hidden names starting `.iopath-`) directly in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".iopath-"))
        .collect()
}

/// splitmix64: a seeded stream of delays, so a failing trial can be replayed.
struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

mod output_sets {
    use super::*;

    fn sweep(bs: &str, extra: &[&str], out: Option<&Path>) -> Command {
        let mut c = iopath();
        c.args(["sweep", "configs/asm1166-6ssd.toml", "--rw", "read", "--bs", bs, "--runtime", "0.02s", "-q"]);
        c.args(extra);
        if let Some(o) = out {
            c.arg("--out").arg(o);
        }
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        c
    }

    fn ok(mut c: Command) -> Duration {
        let t = Instant::now();
        let o = c.output().unwrap();
        assert!(o.status.success(), "sweep failed: {}", stderr(&o));
        t.elapsed()
    }

    /// Writing a sweep where an older one was replaces the whole set: the latency charts of
    /// an earlier queue-depth sweep do not stay behind next to an active-drive sweep.
    #[test]
    fn a_new_sweep_replaces_the_whole_old_set() {
        let parent = scratch("replace");
        let dir = parent.path().join("out");
        ok(sweep("128k", &["--iodepth", "1,2", "--active", "1"], Some(&dir)));
        assert!(dir.join("latency.png").exists(), "an iodepth sweep draws latency charts");
        ok(sweep("128k", &["--active", "1..2"], Some(&dir)));
        let mut names: Vec<String> = set_of(&dir).unwrap().into_keys().collect();
        names.sort();
        assert_eq!(names, ["sweep.csv", "sweep.json", "sweep.md", "sweep.png", "sweep.svg"]);
        assert_eq!(temporaries(parent.path()), Vec::<String>::new());
    }

    /// A directory holding files iopath did not write is refused before the run, and the
    /// files stay; an empty directory is used.
    #[test]
    fn a_directory_with_foreign_files_is_refused_and_kept() {
        let parent = scratch("foreign");
        let dir = parent.path().join("out");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
        std::fs::write(dir.join("sweep.csv"), b"an old sweep").unwrap();
        let o = sweep("128k", &["--active", "1..2"], Some(&dir)).output().unwrap();
        assert_refused("sweep --out DIR with notes.txt", &o, &["notes.txt", "iopath did not write"]);
        assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
        assert_eq!(std::fs::read(dir.join("sweep.csv")).unwrap(), b"an old sweep");
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        ok(sweep("128k", &["--active", "1..2"], Some(&dir)));
        assert!(set_of(&dir).unwrap().contains_key("sweep.png"));
    }

    /// The kill -9 half of item 11: 100 runs of `sweep --out DIR` killed at seeded random
    /// moments: half over the whole run, half within the writing phase (a random time after
    /// the run's staging directory appears). After every
    /// kill DIR holds exactly the old set or exactly the new one, byte for byte (run-time
    /// fields aside); a kill may leave a staging directory next to DIR, which the next run
    /// that writes there removes, so after a final normal run no temporary remains.
    #[test]
    fn sigkill_during_sweep_out_never_leaves_a_mixed_set() {
        let parent = scratch("kill");
        let dir = parent.path().join("out");
        let refs = scratch("kill-refs");
        let bs = ["128k", "1m"];
        let extra = ["--active", "1..2"];
        let mut sets = Vec::new();
        for (i, b) in bs.iter().enumerate() {
            let d = refs.path().join(format!("set{i}"));
            ok(sweep(b, &extra, Some(&d)));
            sets.push(set_of(&d).unwrap());
        }
        let sets: [BTreeMap<String, Vec<u8>>; 2] = sets.try_into().unwrap();
        // Every file differs between the two sets, so any mix shows.
        assert_eq!(sets[0].keys().collect::<Vec<_>>(), sets[1].keys().collect::<Vec<_>>());
        for (name, bytes) in &sets[0] {
            assert_ne!(Some(bytes), sets[1].get(name), "{name} is the same in both sets; a mix would not show");
        }
        ok(sweep(bs[0], &extra, Some(&dir)));
        let mut current = 0;
        // When, after the spawn, the staging directory exists and when the run ends (medians
        // of 3 runs watched by polling), so half the kills can aim at the writing itself.
        let mut windows = Vec::new();
        for _ in 0..3 {
            current = 1 - current;
            let t = Instant::now();
            let mut child = sweep(bs[current], &extra, Some(&dir)).spawn().unwrap();
            let (mut first, mut last) = (None, None);
            while child.try_wait().unwrap().is_none() {
                if temporaries(parent.path()).iter().any(|n| n.starts_with(".iopath-stage-")) {
                    first.get_or_insert(t.elapsed());
                    last = Some(t.elapsed());
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            windows.push((first, last, t.elapsed()));
        }
        let med = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let full_s = med(windows.iter().map(|w| w.2.as_secs_f64()).collect());
        let seen: Vec<_> = windows.iter().filter_map(|w| Some((w.0?.as_secs_f64(), w.1?.as_secs_f64()))).collect();
        let (stage_from, stage_to) = if seen.is_empty() {
            (0.5 * full_s, full_s) // too brief to see: aim at the second half
        } else {
            (med(seen.iter().map(|w| w.0).collect()), med(seen.iter().map(|w| w.1).collect()))
        };
        let (trials, mut finished, mut during_write, mut old, mut new) = (100, 0, 0, 0, 0);
        let mut rng = Rng(11);
        let t0 = Instant::now();
        for trial in 0..trials {
            let next = 1 - current;
            let mut child = sweep(bs[next], &extra, Some(&dir)).spawn().unwrap();
            let stage = format!(".iopath-stage-{}-", child.id());
            let delay = if trial % 2 == 0 {
                rng.next_f64() * full_s * 1.5
            } else {
                // Aimed: wait until this run's staging directory exists (timing alone misses
                // it on a loaded machine), then kill within the writing window.
                let spawned = Instant::now();
                while child.try_wait().unwrap().is_none()
                    && !temporaries(parent.path()).iter().any(|n| n.starts_with(&stage))
                    && spawned.elapsed().as_secs_f64() < 2.0 * full_s + 1.0
                {
                    std::thread::sleep(Duration::from_micros(200));
                }
                rng.next_f64() * (stage_to - stage_from)
            };
            std::thread::sleep(Duration::from_secs_f64(delay));
            if child.try_wait().unwrap().is_some() {
                finished += 1;
            } else {
                child.kill().unwrap();
            }
            let status = child.wait().unwrap();
            assert!(status.success() || status.code().is_none(), "trial {trial}: sweep failed: {status}");
            let left = temporaries(parent.path());
            if left.iter().any(|n| n.starts_with(&stage)) {
                during_write += 1;
            }
            match classify(&dir, &sets) {
                Ok(s) if s == current => old += 1,
                Ok(_) => new += 1,
                Err(why) => panic!("trial {trial} (killed after {delay:.3} s): {} holds {why}", dir.display()),
            }
            current = classify(&dir, &sets).unwrap();
        }
        // Make sure the final run has a dead run's staging directory to remove: kill runs in
        // their writing phase until one leaves it behind.
        for attempt in 0.. {
            if temporaries(parent.path()).iter().any(|n| n.starts_with(".iopath-stage-")) {
                break;
            }
            assert!(attempt < 100, "no kill left a staging directory behind in 100 attempts");
            let mut child = sweep(bs[1 - current], &extra, Some(&dir)).spawn().unwrap();
            while child.try_wait().unwrap().is_none()
                && !temporaries(parent.path()).iter().any(|n| n.starts_with(".iopath-stage-"))
            {
                std::thread::sleep(Duration::from_micros(100));
            }
            let _ = child.kill();
            child.wait().unwrap();
            current = classify(&dir, &sets).unwrap_or_else(|why| panic!("extra kill {attempt}: {why}"));
        }
        let left_by_kills = temporaries(parent.path()).len();
        let next = 1 - current;
        ok(sweep(bs[next], &extra, Some(&dir)));
        let left = temporaries(parent.path());
        eprintln!(
            "kill -9 during sweep --out: {trials} trials in {:.1} s (one run {:.0} ms, staging dir seen {:.0}..{:.0} ms): \
             {finished} finished before the kill, {during_write} killed while writing, old set {old}, new set {new}, \
             mixed 0; temporaries left by the kills {left_by_kills}, after the next run {}",
            t0.elapsed().as_secs_f64(),
            full_s * 1e3,
            stage_from * 1e3,
            stage_to * 1e3,
            left.len()
        );
        assert_eq!(classify(&dir, &sets), Ok(next), "the final run did not write its set");
        assert_eq!(left, Vec::<String>::new(), "temporaries remain after a normal run");
        assert!(during_write >= 10, "only {during_write} kills landed while writing; the test aims badly");
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1, "stray entries next to DIR");
    }

    /// Ctrl-C (SIGINT) at random moments of `sweep --out`: the process stops by itself (the
    /// interrupted sweep is still written, marked partial) and leaves no temporary at all,
    /// without waiting for a next run; DIR always holds one whole set of files.
    #[test]
    fn ctrl_c_during_sweep_out_leaves_no_temporaries() {
        let parent = scratch("sigint");
        let dir = parent.path().join("out");
        let extra = ["--active", "1..2"];
        let full = ok(sweep("1m", &extra, Some(&dir))).as_secs_f64();
        let names: Vec<String> = set_of(&dir).unwrap().into_keys().collect();
        let mut rng = Rng(7);
        let (trials, mut by_handler) = (20, 0);
        for trial in 0..trials {
            let delay = rng.next_f64() * full * 1.2;
            let child = sweep("1m", &extra, Some(&dir)).spawn().unwrap();
            std::thread::sleep(Duration::from_secs_f64(delay));
            let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
            let o = child.wait_with_output().unwrap();
            // Before the handler is installed SIGINT ends the process (nothing is written yet).
            // The handler's exit: 0 if the sweep finished first, 130 (interrupted) otherwise.
            if o.status.code().is_some() {
                by_handler += 1;
                assert!(matches!(o.status.code(), Some(0 | 130)), "trial {trial}: {:?}: {}", o.status, stderr(&o));
            }
            assert_eq!(temporaries(parent.path()), Vec::<String>::new(), "trial {trial}: temporaries left");
            let got = set_of(&dir).unwrap_or_else(|e| panic!("trial {trial}: {e}"));
            // A sweep interrupted before any point finished has nothing to plot: data files only.
            let data = ["sweep.csv", "sweep.json", "sweep.md"];
            let keys: Vec<&str> = got.keys().map(|k| k.as_str()).collect();
            assert!(keys == names || keys == data, "trial {trial}: {keys:?} is not a whole set");
        }
        eprintln!(
            "SIGINT during sweep --out: {trials} trials, {by_handler} stopped by the handler, 0 temporaries left"
        );
    }
}
