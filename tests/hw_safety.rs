//! The write gate on real block devices (loop devices; root only, skipped with a printed
//! reason otherwise). Every refusal is proven twice: `iopath measure` exits 2 with a
//! message saying why, what is on the device and how to proceed, and not one byte of the
//! device changed (hashed before and after).

use iopath_test_support::{self as rig, Rig};
use std::hash::Hasher;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Whether to skip (printed); in CI a skip is a failure.
fn skip() -> bool {
    match rig::available() {
        Ok(()) => false,
        Err(why) => {
            rig::skip(&why);
            true
        }
    }
}

fn hash(dev: &Path) -> u64 {
    let data = std::fs::read(dev).unwrap();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(&data);
    h.finish()
}

fn measure(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iopath"))
        .arg("measure")
        .args(["--runtime", "1s", "--ramp", "0s", "--bs", "64k", "--iodepth", "4", "--quiet"])
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A loop device over a fully written 32 MiB file.
fn loop_dev(rig: &mut Rig, name: &str) -> PathBuf {
    let dir = rig.dir.clone();
    let f = rig.file(&dir, name, 32 << 20).unwrap();
    rig.loop_dev(&f).unwrap()
}

fn assert_refused(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "expected a refusal (exit 2); stderr: {}", stderr(o));
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "missing {n:?} in: {e}");
    }
}

#[test]
fn a_blank_device_is_written_only_with_allow_write() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-blank").unwrap();
    let dev = loop_dev(&mut rig, "blank.img");
    let d = dev.to_str().unwrap();
    let before = hash(&dev);
    let o = measure(&["--target", d, "--rw", "randwrite"]);
    assert_refused(&o, &["refusing to write", "--allow-write"]);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
    // The random data iopath writes has no signature, so a blank device is allowed.
    let o = measure(&["--target", d, "--rw", "randwrite", "--allow-write", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(hash(&dev), before, "the allowed write reached the device");
}

#[test]
fn an_ext4_signature_is_refused_unless_destroy_names_the_device() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-ext4").unwrap();
    let dev = loop_dev(&mut rig, "ext4.img");
    rig.mkfs_ext4(&dev).unwrap();
    let d = dev.to_str().unwrap();
    let before = hash(&dev);
    let o = measure(&["--target", d, "--rw", "write", "--allow-write"]);
    assert_refused(&o, &["ext2/3/4 filesystem signature at byte 1080", &format!("--destroy-data-on {d}")]);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
    // Naming another device does not help.
    let other = loop_dev(&mut rig, "other.img");
    let o = measure(&["--target", d, "--rw", "write", "--allow-write", "--destroy-data-on", other.to_str().unwrap()]);
    assert_refused(&o, &["not one of the devices or files this workload writes"]);
    assert_eq!(hash(&dev), before);
    // A symlink to the device is the same device (compared by dev_t).
    let alias = rig.dir.join("alias");
    std::os::unix::fs::symlink(&dev, &alias).unwrap();
    let o = measure(&["--target", d, "--rw", "write", "--allow-write", "--destroy-data-on", alias.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(hash(&dev), before);
}

#[test]
fn a_mounted_device_is_refused_whatever_the_flags() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-mnt").unwrap();
    let dev = loop_dev(&mut rig, "mnt.img");
    rig.mkfs_ext4(&dev).unwrap();
    let mnt = rig.mount(&dev).unwrap();
    let d = dev.to_str().unwrap();
    let _ = Command::new("sync").status();
    let before = hash(&dev);
    let o = measure(&["--target", d, "--rw", "randwrite", "--allow-write", "--destroy-data-on", d]);
    assert_refused(&o, &["mounted", mnt.to_str().unwrap(), "umount"]);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
    // Reading a mounted device is allowed, with a warning.
    let o = measure(&["--target", d, "--rw", "randread", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("is mounted on"));
}

#[test]
fn a_device_held_by_another_exclusive_opener_is_refused() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-held").unwrap();
    let dev = loop_dev(&mut rig, "held.img");
    let before = hash(&dev);
    let holder = std::fs::OpenOptions::new().read(true).custom_flags(0o200 /* O_EXCL */).open(&dev).unwrap();
    let d = dev.to_str().unwrap();
    let o = measure(&["--target", d, "--rw", "write", "--allow-write", "--destroy-data-on", d]);
    assert_refused(&o, &["busy", "EBUSY"]);
    drop(holder);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
}

#[test]
fn partition_tables_are_refused() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-part").unwrap();
    // An MBR: four empty entries (boot flag 0, as in any real table) and 0x55AA.
    let mut mbr = vec![0u8; 64];
    mbr.extend([0x55, 0xAA]);
    for (name, off, magic, what) in [
        ("mbr.img", 446u64, &mbr[..], "MBR (DOS) partition table signature at byte 510"),
        ("gpt.img", 512u64, &b"EFI PART"[..], "GPT partition table signature at byte 512"),
    ] {
        let dir = rig.dir.clone();
        let f = rig.file(&dir, name, 32 << 20).unwrap();
        {
            use std::os::unix::fs::FileExt;
            let fh = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
            fh.write_all_at(magic, off).unwrap();
            fh.sync_all().unwrap();
        }
        let dev = rig.loop_dev(&f).unwrap();
        let before = hash(&dev);
        let o = measure(&["--target", dev.to_str().unwrap(), "--rw", "randrw", "--allow-write"]);
        assert_refused(&o, &[what]);
        assert_eq!(hash(&dev), before, "{name}: a refused write changed the device");
    }
}

#[test]
fn active_swap_is_refused() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-swap").unwrap();
    let dev = loop_dev(&mut rig, "swap.img");
    let mk = Command::new("mkswap").arg(&dev).output();
    if !mk.as_ref().map(|o| o.status.success()).unwrap_or(false) {
        rig::skip("mkswap failed or is not installed (Debian package util-linux)");
        return;
    }
    let on = Command::new("swapon").arg(&dev).output().unwrap();
    if !on.status.success() {
        rig::skip(&format!("swapon failed here: {}", String::from_utf8_lossy(&on.stderr).trim()));
        return;
    }
    struct Off(PathBuf);
    impl Drop for Off {
        fn drop(&mut self) {
            let _ = Command::new("swapoff").arg(&self.0).status();
        }
    }
    let _off = Off(dev.clone());
    let d = dev.to_str().unwrap();
    let before = hash(&dev);
    let o = measure(&["--target", d, "--rw", "write", "--allow-write", "--destroy-data-on", d]);
    assert_refused(&o, &["swap"]);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
}

#[test]
fn a_device_locked_by_another_program_is_refused() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-lock").unwrap();
    let dev = loop_dev(&mut rig, "locked.img");
    let d = dev.to_str().unwrap();
    let before = hash(&dev);
    // flock(1) holds LOCK_EX on the device, as a partitioning tool does (-o: only flock
    // itself holds it, so killing flock releases it).
    let mut holder = Command::new("flock").args(["-o", d, "sleep", "10"]).spawn().unwrap();
    let t0 = std::time::Instant::now();
    let o = loop {
        let o = measure(&["--target", d, "--rw", "write", "--allow-write"]);
        if o.status.code() == Some(2) || t0.elapsed() > std::time::Duration::from_secs(5) {
            break o;
        }
    };
    let _ = holder.kill();
    let _ = holder.wait();
    assert_refused(&o, &["holds a lock on it (flock)", "lslocks"]);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
    // Unlocked, the blank device is writable again.
    let o = measure(&["--target", d, "--rw", "write", "--allow-write"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn without_libblkid_a_device_counts_as_holding_unidentified_data() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-noblkid").unwrap();
    let dev = loop_dev(&mut rig, "noblkid.img");
    let d = dev.to_str().unwrap();
    let before = hash(&dev);
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_iopath"))
            .env("IOPATH_LIBBLKID", "/nonexistent/libblkid.so.1")
            .args(["measure", "--runtime", "1s", "--ramp", "0s", "--bs", "64k", "--quiet", "--target", d])
            .args(["--rw", "write", "--allow-write"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_refused(&o, &["cannot be identified", "libblkid could not be loaded", "--destroy-data-on"]);
    assert_eq!(hash(&dev), before, "a refused write changed the device");
    // Naming the device is the way through, and the warning says what was overwritten.
    let o = run(&["--destroy-data-on", d, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("unidentified data"));
    assert_ne!(hash(&dev), before);
}

#[test]
fn files_with_a_signature_or_in_use_are_refused() {
    if skip() {
        return;
    }
    let mut rig = Rig::new("safe-files").unwrap();
    let dir = rig.dir.clone();
    // An ext4 image: refused unless --destroy-data-on names the file (by inode: a symlink
    // to it works, another file does not).
    let img = rig.file(&dir, "ext4.img", 32 << 20).unwrap();
    rig.mkfs_ext4(&img).unwrap();
    let i = img.to_str().unwrap();
    let before = hash(&img);
    let o = measure(&["--target", i, "--rw", "write", "--allow-write"]);
    assert_refused(&o, &["libblkid: ext4 (filesystem)", "ext2/3/4 filesystem signature at byte 1080"]);
    assert_eq!(hash(&img), before, "a refused write changed the file");
    // The backing file of an attached loop device: refused whatever the flags.
    let dev = rig.loop_dev(&img).unwrap();
    let o = measure(&["--target", i, "--rw", "write", "--allow-write", "--destroy-data-on", i]);
    assert_refused(&o, &["backing file of a loop device", dev.to_str().unwrap(), "losetup -d"]);
    assert_eq!(hash(&img), before, "a refused write changed the file");
    drop(rig);
    let mut rig = Rig::new("safe-files2").unwrap();
    let dir = rig.dir.clone();
    let img = rig.file(&dir, "ext4.img", 32 << 20).unwrap();
    rig.mkfs_ext4(&img).unwrap();
    let i = img.to_str().unwrap();
    let alias = dir.join("alias.img");
    std::os::unix::fs::symlink(&img, &alias).unwrap();
    let before = hash(&img);
    let o = measure(&["--target", i, "--rw", "write", "--allow-write", "--destroy-data-on", alias.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(hash(&img), before);
    // An inactive swap file is a signature too.
    let sw = rig.file(&dir, "swap.img", 32 << 20).unwrap();
    assert!(Command::new("mkswap").arg(&sw).output().unwrap().status.success());
    let before = hash(&sw);
    let o = measure(&["--target", sw.to_str().unwrap(), "--rw", "write", "--allow-write"]);
    assert_refused(&o, &["libblkid: swap"]);
    assert_eq!(hash(&sw), before, "a refused write changed the swap file");
    // An active swap file: refused whatever the flags.
    std::fs::set_permissions(&sw, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let on = Command::new("swapon").arg(&sw).output().unwrap();
    if !on.status.success() {
        rig::skip(&format!("the active-swap-file case: swapon of a file failed here: {}", stderr(&on).trim()));
        return;
    }
    struct Off(PathBuf);
    impl Drop for Off {
        fn drop(&mut self) {
            let _ = Command::new("swapoff").arg(&self.0).status();
        }
    }
    let _off = Off(sw.clone());
    let s = sw.to_str().unwrap();
    let o = measure(&["--target", s, "--rw", "write", "--allow-write", "--destroy-data-on", s]);
    assert_refused(&o, &["in use as swap", "swapoff"]);
    assert_eq!(hash(&sw), before, "a refused write changed the swap file");
}
