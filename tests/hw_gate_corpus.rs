//! The write gate against a corpus of real filesystems and containers (root only; the
//! formatting tools come from Debian's packages, installed by `.ci/run`; in CI a missing
//! tool or a missing root is a failure, locally a printed skip).
//!
//! For each format an image is made with its own tool, then `iopath measure --rw write
//! --allow-write` is pointed at it four ways:
//!
//! - `file`: the image file itself;
//! - `loop`: a loop device over it;
//! - `stacked`: loop A over the image, loop B over A (mounted read-only where the kernel
//!   can), target A with `--destroy-data-on A`: B, not A, is what is in use;
//! - `backing`: the image as the backing file of an attached loop device (mounted
//!   read-only where the kernel can), with `--destroy-data-on IMAGE`.
//!
//! Every case must exit 2 with a message naming what was found, and the image must be
//! byte-identical (sha256) before and after. Both layers of the gate must recognise every
//! format on their own: libblkid's findings (as iopath reports them) name the TYPE that
//! `blkid -p` prints, and the built-in probe alone finds a signature. Blank targets stay
//! writable with `--allow-write`, so the gate is no "refuse everything".
//!
//! `cargo test --test hw_gate_corpus -- --nocapture` prints the table.

use iopath_test_support::{self as rig, Rig};
use std::path::Path;
use std::process::{Command, Output};

struct Format {
    name: &'static str,
    /// Programs the recipe needs.
    tools: &'static [&'static str],
    size_mib: u64,
    /// A shell recipe: `$IMG` is the image file (already `size_mib` long, zeros), `$SRC`
    /// a directory with one small file.
    recipe: &'static str,
}

const FORMATS: &[Format] = &[
    Format { name: "ext2", tools: &["mkfs.ext2"], size_mib: 32, recipe: r#"mkfs.ext2 -q -F "$IMG""# },
    Format { name: "ext3", tools: &["mkfs.ext3"], size_mib: 32, recipe: r#"mkfs.ext3 -q -F "$IMG""# },
    Format { name: "ext4", tools: &["mkfs.ext4"], size_mib: 32, recipe: r#"mkfs.ext4 -q -F "$IMG""# },
    // mkfs.xfs wants 300 MB unless run as fstests runs it.
    Format {
        name: "xfs",
        tools: &["mkfs.xfs"],
        size_mib: 32,
        recipe: r#"TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -f "$IMG""#,
    },
    Format { name: "btrfs", tools: &["mkfs.btrfs"], size_mib: 128, recipe: r#"mkfs.btrfs -q -f "$IMG""# },
    Format { name: "f2fs", tools: &["mkfs.f2fs"], size_mib: 64, recipe: r#"mkfs.f2fs -q -f "$IMG""# },
    Format { name: "vfat", tools: &["mkfs.vfat"], size_mib: 32, recipe: r#"mkfs.vfat "$IMG" >/dev/null"# },
    Format { name: "exfat", tools: &["mkfs.exfat"], size_mib: 32, recipe: r#"mkfs.exfat "$IMG" >/dev/null"# },
    Format { name: "ntfs", tools: &["mkfs.ntfs"], size_mib: 32, recipe: r#"mkfs.ntfs -q -Q -F "$IMG""# },
    Format { name: "udf", tools: &["mkudffs"], size_mib: 32, recipe: r#"mkudffs "$IMG" >/dev/null"# },
    Format {
        name: "iso9660",
        tools: &["xorriso"],
        size_mib: 32,
        recipe: r#"rm -f "$IMG" && xorriso -as mkisofs -quiet -o "$IMG" "$SRC" 2>/dev/null && truncate -s 32M "$IMG""#,
    },
    Format {
        name: "squashfs",
        tools: &["mksquashfs"],
        size_mib: 32,
        recipe: r#"rm -f "$IMG" && mksquashfs "$SRC" "$IMG" -noappend -quiet >/dev/null && truncate -s 32M "$IMG""#,
    },
    Format { name: "nilfs2", tools: &["mkfs.nilfs2"], size_mib: 32, recipe: r#"mkfs.nilfs2 -q -f -B 128 "$IMG""# },
    Format { name: "jfs", tools: &["mkfs.jfs"], size_mib: 32, recipe: r#"mkfs.jfs -q "$IMG" >/dev/null"# },
    Format {
        name: "reiserfs",
        tools: &["mkfs.reiserfs"],
        size_mib: 64,
        recipe: r#"mkfs.reiserfs -q -f "$IMG" >/dev/null 2>&1"#,
    },
    Format { name: "minix", tools: &["mkfs.minix"], size_mib: 32, recipe: r#"mkfs.minix "$IMG" >/dev/null"# },
    Format { name: "bfs", tools: &["mkfs.bfs"], size_mib: 32, recipe: r#"mkfs.bfs "$IMG" >/dev/null 2>&1"# },
    Format {
        name: "cramfs",
        tools: &["mkfs.cramfs"],
        size_mib: 32,
        recipe: r#"rm -f "$IMG" && mkfs.cramfs "$SRC" "$IMG" >/dev/null && truncate -s 32M "$IMG""#,
    },
    Format { name: "swap", tools: &["mkswap"], size_mib: 32, recipe: r#"mkswap "$IMG" >/dev/null"# },
    // pvcreate wants a block device; it needs no device mapper for the label.
    Format {
        name: "LVM2 PV",
        tools: &["pvcreate", "losetup"],
        size_mib: 32,
        recipe: r#"L=$(losetup -f --show "$IMG") || exit 1; pvcreate -q -ff -y "$L" >/dev/null 2>&1; rc=$?; losetup -d "$L"; exit $rc"#,
    },
    Format {
        name: "LUKS2",
        tools: &["cryptsetup"],
        size_mib: 32,
        recipe: r#"head -c 32 /dev/urandom > "$IMG.key" && cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$IMG.key" "$IMG"; rc=$?; rm -f "$IMG.key"; exit $rc"#,
    },
    // ZFS through zfs-fuse: a daemon for the length of the recipe.
    Format {
        name: "ZFS",
        tools: &["zfs-fuse", "zpool"],
        size_mib: 64,
        recipe: r#"zfs-fuse --no-daemon >/dev/null 2>&1 & P=$!
for i in $(seq 100); do zpool list >/dev/null 2>&1 && break; sleep 0.1; done
zpool create -f -m none "iopathcorpus$$" "$IMG"; rc=$?
zpool export "iopathcorpus$$" || rc=1
kill $P; wait $P; exit $rc"#,
    },
    // md needs the md driver (absent from kernels without it; then the format is skipped).
    Format {
        name: "md 1.2",
        tools: &["mdadm", "losetup"],
        size_mib: 64,
        recipe: r#"L=$(losetup -f --show "$IMG") || exit 1; mdadm --create "/dev/md/iopath$$" --run --force --level=1 --raid-devices=1 --metadata=1.2 "$L" >/dev/null 2>&1; rc=$?; mdadm --stop "/dev/md/iopath$$" >/dev/null 2>&1; losetup -d "$L"; exit $rc"#,
    },
];

fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// Why the corpus cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    if !rig::is_root() {
        return Some("not root: loop devices and mkfs on them need root".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (loop driver missing)".into());
    }
    ["losetup", "blkid", "sha256sum", "mount"]
        .iter()
        .find(|t| rig::which(t).is_none())
        .map(|t| format!("{t} is not installed (util-linux, coreutils)"))
}

fn md_driver() -> bool {
    Path::new("/proc/mdstat").exists()
}

fn sha256(p: &Path) -> String {
    let o = Command::new("sha256sum").arg(p).output().unwrap();
    assert!(o.status.success(), "sha256sum {}", p.display());
    String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap().to_string()
}

fn measure(target: &Path, destroy: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iopath"));
    c.arg("measure").arg("--target").arg(target);
    c.args(["--rw", "write", "--bs", "1m", "--runtime", "1s", "--ramp", "0s", "--allow-write", "--quiet"]);
    if let Some(d) = destroy {
        c.arg("--destroy-data-on").arg(d);
    }
    c.output().unwrap()
}

/// `blkid -p` on the image: its TYPE or PTTYPE values.
fn blkid_types(img: &Path) -> Vec<String> {
    let o = Command::new("blkid").args(["-p", "-o", "export"]).arg(img).output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("TYPE=").or_else(|| l.strip_prefix("PTTYPE=")))
        .map(str::to_string)
        .collect()
}

/// One case: run iopath, check the refusal and the bytes; returns the table cell.
/// `hash` is the image's sha256 before the case (what the previous case left, or taken
/// again after a mount or unmount, which may write); it is updated to the hash after it.
fn case(
    img: &Path,
    hash: &mut String,
    target: &Path,
    destroy: Option<&Path>,
    needles: &[&str],
    failures: &mut Vec<String>,
    what: &str,
) -> String {
    let before = std::mem::take(hash);
    let o = measure(target, destroy);
    let after = sha256(img);
    *hash = after.clone();
    let err = String::from_utf8_lossy(&o.stderr);
    let mut cell = String::new();
    if o.status.code() != Some(2) {
        failures.push(format!("{what}: exit {:?}, expected 2: {err}", o.status.code()));
        cell += &format!("exit {:?} ", o.status.code());
    } else if let Some(n) = needles.iter().find(|n| !err.contains(**n)) {
        failures.push(format!("{what}: the message does not name {n:?}: {err}"));
        cell += "vague ";
    } else {
        cell += "refused ";
    }
    if before != after {
        failures.push(format!("{what}: bytes changed"));
        cell += "CHANGED";
    } else {
        cell += "0 B changed";
    }
    cell
}

#[test]
fn every_format_is_refused_and_left_byte_identical() {
    if let Some(why) = unavailable() {
        rig::skip(&why);
        return;
    }
    let root = Rig::new("corpus").unwrap();
    let src = root.dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("hello.txt"), "a small file for the read-only formats\n").unwrap();
    let mut failures: Vec<String> = Vec::new();
    let mut rows: Vec<[String; 7]> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for f in FORMATS {
        if f.name.starts_with("md") && !md_driver() {
            skipped.push(format!(
                "{}: no md driver in this kernel (no /proc/mdstat), so mdadm --create cannot work",
                f.name
            ));
            continue;
        }
        if let Some(t) = f.tools.iter().find(|t| rig::which(t).is_none()) {
            let why = format!("{}: {t} is not installed", f.name);
            assert!(!in_ci(), "{why}: .ci/run must install it");
            skipped.push(why);
            continue;
        }
        let img = root.dir.join(format!("{}.img", f.name.replace(' ', "-")));
        std::fs::File::create(&img).unwrap().set_len(f.size_mib << 20).unwrap();
        let mk = Command::new("sh").arg("-c").arg(f.recipe).env("IMG", &img).env("SRC", &src).output().unwrap();
        if !mk.status.success() {
            failures.push(format!("{}: the recipe failed: {}", f.name, String::from_utf8_lossy(&mk.stderr).trim()));
            continue;
        }
        // Both layers, each on its own.
        let types = blkid_types(&img);
        let builtin = {
            let fh = std::fs::File::open(&img).unwrap();
            iopath_validate::safety::probe_signatures(&fh, f.size_mib << 20)
        };
        if types.is_empty() {
            failures.push(format!("{}: blkid -p finds nothing on the image", f.name));
        }
        if builtin.is_empty() {
            failures.push(format!("{}: the built-in probe alone finds nothing (blkid -p: {types:?})", f.name));
        }
        let blkid_needle: Vec<String> = types.iter().take(1).map(|t| format!("libblkid: {t} (")).collect();
        let builtin_needle: Vec<String> = builtin.iter().take(1).map(|s| s.to_string()).collect();
        let mut sig_needles: Vec<&str> = blkid_needle.iter().map(String::as_str).collect();
        sig_needles.extend(builtin_needle.iter().map(String::as_str));
        let name = f.name;

        // file
        let mut hash = sha256(&img);
        let c_file = case(&img, &mut hash, &img, None, &sig_needles, &mut failures, &format!("{name} file"));
        // loop
        let mut rig = Rig::new("corpus-loop").unwrap();
        let a = rig.loop_dev(&img).unwrap();
        let c_loop = case(&img, &mut hash, &a, None, &sig_needles, &mut failures, &format!("{name} loop"));
        // stacked: B over A, mounted read-only where the kernel can
        let b = rig.loop_dev(&a).unwrap();
        let b_mounted = rig.mount(&b).is_ok();
        if b_mounted {
            // Some filesystems write even on a read-only mount (xfs does): hash after it.
            hash = sha256(&img);
        }
        let stacked_needles: &[&str] = if b_mounted { &["it is mounted", "mounted on"] } else { &["loop device"] };
        let c_stacked = case(&img, &mut hash, &a, Some(&a), stacked_needles, &mut failures, &format!("{name} stacked"));
        drop(rig);
        // backing file of an attached (mounted, where the kernel can) loop device
        let mut rig = Rig::new("corpus-backing").unwrap();
        let c = rig.loop_dev(&img).unwrap();
        let c_mounted = rig.mount(&c).is_ok();
        if b_mounted || c_mounted {
            hash = sha256(&img); // after the unmount of B and the mount of C
        }
        let c_backing = case(
            &img,
            &mut hash,
            &img,
            Some(&img),
            &["the backing file of a loop device", c.to_str().unwrap()],
            &mut failures,
            &format!("{name} backing"),
        );
        drop(rig);
        let m = |b: bool| if b { " (mounted)" } else { "" };
        rows.push([
            name.to_string(),
            c_file,
            c_loop,
            format!("{c_stacked}{}", m(b_mounted)),
            format!("{c_backing}{}", m(c_mounted)),
            types.join(","),
            builtin.first().map(|s| s.what.clone()).unwrap_or_else(|| "NOTHING".into()),
        ]);
        let _ = std::fs::remove_file(&img);
    }

    // Blank targets stay writable: a zeroed file, and a loop device over one.
    let blank = root.dir.join("blank.img");
    std::fs::File::create(&blank).unwrap().set_len(32 << 20).unwrap();
    let before = sha256(&blank);
    let o = measure(&blank, None);
    assert!(o.status.success(), "a blank file must be writable: {}", String::from_utf8_lossy(&o.stderr));
    assert_ne!(sha256(&blank), before, "the allowed write reached the blank file");
    let blank2 = root.dir.join("blank2.img");
    std::fs::File::create(&blank2).unwrap().set_len(32 << 20).unwrap();
    let mut rig = Rig::new("corpus-blank").unwrap();
    let l = rig.loop_dev(&blank2).unwrap();
    let before = sha256(&blank2);
    let o = measure(&l, None);
    assert!(o.status.success(), "a blank loop device must be writable: {}", String::from_utf8_lossy(&o.stderr));
    drop(rig);
    assert_ne!(sha256(&blank2), before, "the allowed write reached the blank loop device");

    let head = ["format", "file", "loop", "stacked (target A)", "backing file", "blkid -p", "built-in probe"];
    let mut w = head.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |cells: &[String]| -> String {
        cells.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect::<Vec<_>>().join("  ")
    };
    println!("{}", line(&head.map(String::from)));
    for r in &rows {
        println!("{}", line(r));
    }
    println!(
        "{} formats x 4 target kinds = {} cases; blank file and blank loop device written",
        rows.len(),
        rows.len() * 4
    );
    for s in &skipped {
        println!("skipped {s}");
    }
    assert!(rows.len() >= 15, "at least 15 formats must be made here, made {}", rows.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
