//! The write gate on real block devices (loop devices; root only, skipped with a printed
//! reason otherwise). Every refusal is proven twice: `iopath measure` exits 2 with a
//! message saying why, what is on the device and how to proceed, and not one byte of the
//! device changed (hashed before and after).

use iopath_validate::rig::{self, Rig};
use std::hash::Hasher;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn skip() -> bool {
    match rig::available() {
        Ok(()) => false,
        Err(why) => {
            eprintln!("skipped: {why}");
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
        eprintln!("skipped: mkswap failed or is not installed");
        return;
    }
    let on = Command::new("swapon").arg(&dev).output().unwrap();
    if !on.status.success() {
        eprintln!("skipped: swapon failed here: {}", String::from_utf8_lossy(&on.stderr).trim());
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
