//! Shell completion driven as bash drives it: clap_complete's dynamic protocol
//! (`COMPLETE=bash`, `_CLAP_COMPLETE_INDEX` = the index of the word being completed, the
//! words after `--`), the same call the script `COMPLETE=bash iopath` registers makes.

use std::process::Command;

/// The words iopath offers for the last of `words` (which may be empty: completing a new word).
fn offered(words: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .env("COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("--")
        .args(words)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn rw_offers_fios_values() {
    // fio's rw values the loader reads (model/src/workload.rs, Rw::from_str).
    let mut got = offered(&["iopath", "simulate", "configs/asm1166-6ssd.toml", "--rw", ""]);
    got.sort();
    assert_eq!(got, ["randread", "randrw", "randwrite", "read", "readwrite", "rw", "write"]);
    assert_eq!(offered(&["iopath", "sweep", "x.toml", "--rw", "rand"]), ["randread", "randwrite", "randrw"]);
}

#[test]
fn workload_names_come_from_the_topology_on_the_line() {
    // configs/pools-9300-8i-exos.toml declares [workload.*] tables; read them to compare.
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/pools-9300-8i-exos.toml")).unwrap();
    let mut want: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("[workload.").and_then(|r| r.strip_suffix(']')))
        .map(str::to_string)
        .collect();
    want.sort();
    assert!(!want.is_empty());
    let mut got = offered(&["iopath", "simulate", "configs/pools-9300-8i-exos.toml", "--workload", ""]);
    got.sort();
    assert_eq!(got, want);
    // Without a topology on the line there is nothing to offer.
    assert!(offered(&["iopath", "simulate", "--workload", ""]).is_empty());
}

#[test]
fn part_ids_come_from_the_catalog() {
    let got = offered(&["iopath", "catalog", "asm11"]);
    assert!(got.iter().any(|w| w == "asm1166"), "{got:?}");
    assert!(got.iter().all(|w| w.starts_with("asm11")), "{got:?}");
    // plan --onboard takes controllers only: no drive is offered.
    let on = offered(&["iopath", "plan", "--onboard", ""]);
    assert!(on.iter().any(|w| w == "asm1166"), "{on:?}");
    assert!(!on.iter().any(|w| w == "kingston-dc600m-1920"), "{on:?}");
}

#[test]
fn a_parts_file_on_the_line_adds_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mine.toml");
    std::fs::write(
        &f,
        "[[part]]\nid = \"zz-lab-ssd\"\nkind = \"drive\"\nname = \"Lab SSD\"\n\
         figures.class = { value = \"ssd\", source = \"the drive label\" }\n\
         figures.interface = { value = \"sata\", source = \"the drive label\" }\n\
         figures.interface_gen = { value = 3, source = \"the drive label\" }\n\
         figures.capacity_gb = { value = 480, source = \"the drive label\" }\n",
    )
    .unwrap();
    let p = f.to_str().unwrap();
    assert_eq!(offered(&["iopath", "--parts", p, "catalog", "zz-"]), ["zz-lab-ssd"]);
    assert!(offered(&["iopath", "catalog", "zz-"]).is_empty());
}

#[test]
fn the_static_script_lists_rw_values() {
    let out = Command::new(env!("CARGO_BIN_EXE_iopath")).args(["completions", "bash"]).output().unwrap();
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(script.contains("read write randread randwrite rw readwrite randrw"), "no --rw values in the script");
}
