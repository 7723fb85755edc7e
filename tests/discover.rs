//! `iopath discover` on fake sysfs trees (validate/tests/fixtures/*.manifest, materialised
//! into a temp dir with real attribute names and symlinks) and on this machine's /sys.
//! Every output must load with `Topology::parse`, as `iopath check` would.

use iopath_model::catalog::Kind;
use iopath_model::catalog::Value;
use iopath_model::{Catalog, Topology};
use iopath_validate::discover::{
    DeviceClass, DiscoverOptions, Discovered, PartRef, discover, materialise_manifest, to_toml,
};
use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("validate/tests/fixtures").join(format!("{name}.manifest"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dir = tempfile::tempdir().unwrap();
    materialise_manifest(&text, dir.path()).unwrap();
    let root = dir.path().to_path_buf();
    (dir, root)
}

fn run(name: &str) -> (Discovered, Topology, String) {
    let (_d, root) = fixture(name);
    let cat = Catalog::builtin();
    let d = discover(&root, &cat, &DiscoverOptions::default()).unwrap();
    let text = to_toml(&d, name).unwrap();
    let t = Topology::parse(name, &text, &cat)
        .unwrap_or_else(|e| panic!("{name}: output does not load:\n{e}\n---\n{text}"));
    (d, t, text)
}

#[test]
fn ahci_controller_with_a_port_multiplier() {
    let (d, t, text) = run("ahci_pm");
    // The partition sda1 is skipped; three disks.
    let ids: Vec<&str> = d.drives.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids, ["sda", "sdb", "sdc"]);
    let hba = d.nodes.iter().find(|n| n.kind == Kind::Controller).unwrap();
    assert_eq!(hba.part, PartRef::Catalog("asm1166".into()), "matched by PCI id 1b21:1166");
    let pm = d.nodes.iter().find(|n| n.kind == Kind::PortMultiplier).expect("a port multiplier");
    assert_eq!(pm.parent, hba.id);
    assert_eq!(pm.port, Some(2), "ata3 is the controller's port 2");
    let sdb = d.drives.iter().find(|x| x.id == "sdb").unwrap();
    let sdc = d.drives.iter().find(|x| x.id == "sdc").unwrap();
    assert_eq!((sdb.parent.as_str(), sdb.port), (pm.id.as_str(), Some(0)));
    assert_eq!((sdc.parent.as_str(), sdc.port), (pm.id.as_str(), Some(1)));
    assert_eq!(sdc.link.as_deref(), Some("sata2"), "link3.1 trained at 3.0 Gbps");
    assert_eq!(d.drives[0].part, PartRef::Catalog("kingston-dc600m-1920".into()), "matched by model");
    assert_eq!(d.drives[0].dev, "/dev/sda");
    assert!(text.contains("Max Payload Size unreadable"), "{text}");
    assert!(text.contains("FBS yes"), "{text}");
    assert_eq!(t.drives.len(), 3);
    // The PM part comes from what sysfs said.
    let pmpart = d.parts.iter().find(|p| p.kind == Kind::PortMultiplier).unwrap();
    assert_eq!(pmpart.figures["ports"].value, iopath_model::catalog::Value::Num(5.0));
    assert_eq!(pmpart.figures["ports"].basis, "measurement");
}

#[test]
fn sas_hba_behind_an_expander() {
    let (d, t, text) = run("sas_expander");
    let hba = d.nodes.iter().find(|n| n.kind == Kind::Controller).unwrap();
    assert_eq!(hba.part, PartRef::Catalog("lsi-sas3008".into()));
    let exp = d.nodes.iter().find(|n| n.kind == Kind::Expander).expect("an expander");
    assert_eq!(exp.parent, hba.id);
    for dr in &d.drives {
        assert_eq!(dr.parent, exp.id, "{} hangs off the expander", dr.id);
    }
    let part = |id: &str| {
        d.parts
            .iter()
            .find(|p| Some(p.id.as_str()) == d.drives.iter().find(|x| x.id == id).map(|x| x.part.id()))
            .cloned()
    };
    let sdd = part("sdd").expect("unknown SAS drive becomes a part");
    assert_eq!(sdd.figures["interface"].value, iopath_model::catalog::Value::Str("sas".into()));
    assert_eq!(sdd.figures["class"].value, iopath_model::catalog::Value::Str("hdd".into()));
    let sde = d.drives.iter().find(|x| x.id == "sde").unwrap();
    assert_eq!(sde.part, PartRef::Catalog("micron-5300pro-3840".into()), "{text}");
    let ep = d.parts.iter().find(|p| p.kind == Kind::Expander).unwrap();
    assert_eq!(ep.figures["sas_gen"].value, iopath_model::catalog::Value::Num(3.0));
    assert_eq!(ep.figures["phys"].value, iopath_model::catalog::Value::Num(4.0));
    assert!(text.contains("phy reset problem"), "non-numeric link states are kept verbatim");
    assert_eq!(t.drives.len(), 2);
}

#[test]
fn nvme_behind_a_pcie_switch() {
    let (d, _t, text) = run("nvme_switch");
    let sw = d.nodes.iter().find(|n| n.kind == Kind::Switch).expect("a switch");
    assert_eq!(sw.parent, "host");
    let dr = &d.drives[0];
    assert_eq!(dr.id, "nvme0n1");
    assert_eq!(dr.parent, sw.id);
    assert!(dr.model.contains("970 EVO"), "model read through the nvme0 controller: {}", dr.model);
    // A catalog drive when the catalog knows the model; else a part with the link read.
    if let PartRef::Local(id) = &dr.part {
        let p = d.parts.iter().find(|p| &p.id == id).unwrap();
        assert_eq!(p.figures["interface_gen"].value, iopath_model::catalog::Value::Num(3.0));
        assert_eq!(p.figures["lanes"].value, iopath_model::catalog::Value::Num(4.0));
    }
    let sp = d.parts.iter().find(|p| p.kind == Kind::Switch).unwrap();
    assert_eq!(sp.figures["lanes"].value, iopath_model::catalog::Value::Num(8.0));
    assert!(text.contains("Max Payload Size 256 bytes in use, 512 supported"), "{text}");
}

#[test]
fn virtio_disk_and_skipped_loop() {
    let (d, _t, text) = run("virtio");
    assert_eq!(d.drives.len(), 1);
    assert_eq!(d.drives[0].id, "vda");
    assert!(text.contains("skipped loop0"), "{text}");
    // With --all the loop device is listed too, under a virtual controller.
    let (_dir, root) = fixture("virtio");
    let cat = Catalog::builtin();
    let all = discover(&root, &cat, &DiscoverOptions { include_virtual: true }).unwrap();
    assert_eq!(all.drives.len(), 2);
    Topology::parse("all", &to_toml(&all, "x").unwrap(), &cat).unwrap();
}

#[test]
fn cli_writes_a_file_that_check_loads() {
    let (_dir, root) = fixture("ahci_pm");
    let out = tempfile::tempdir().unwrap();
    let f = out.path().join("t.toml");
    let st = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["discover", "--sysfs-root"])
        .arg(&root)
        .arg("--out")
        .arg(&f)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let text = std::fs::read_to_string(&f).unwrap();
    Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap();
}

#[test]
fn missing_sysfs_root_is_a_clear_error() {
    let st = Command::new(env!("CARGO_BIN_EXE_iopath"))
        .args(["discover", "--sysfs-root", "/nonexistent/sys"])
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    let e = String::from_utf8_lossy(&st.stderr);
    assert!(e.contains("/nonexistent/sys/class/block") && e.contains("--sysfs-root"), "{e}");
}

/// The part a discovered drive names, when discover wrote one.
fn local_part<'a>(d: &'a Discovered, drive: &str) -> &'a iopath_model::catalog::Part {
    let dr = d.drives.iter().find(|x| x.id == drive).unwrap();
    d.parts.iter().find(|p| p.id == dr.part.id()).unwrap_or_else(|| panic!("{drive}: a catalog part"))
}

#[test]
fn sata_ssd_hdd_and_nvme_are_told_apart_by_what_sysfs_says() {
    // ahci_pm: sda has queue/rotational 0 on ata1, sdb and sdc 1 behind the PM.
    let (d, _t, text) = run("ahci_pm");
    let class = |id: &str| d.drives.iter().find(|x| x.id == id).unwrap().class;
    assert_eq!(class("sda"), DeviceClass::Ssd);
    assert_eq!((class("sdb"), class("sdc")), (DeviceClass::Hdd, DeviceClass::Hdd));
    assert!(text.contains("class: hdd") && text.contains("class: ssd"), "{text}");
    // nvme_switch: nvme0n1 under the nvme0 controller.
    let (d, _t, _) = run("nvme_switch");
    assert_eq!(d.drives[0].class, DeviceClass::Nvme);
    // Each drive has its own device node.
    for name in ["ahci_pm", "nvme_switch", "sas_expander"] {
        let (d, _t, _) = run(name);
        let mut devs: Vec<&str> = d.drives.iter().map(|x| x.dev.as_str()).collect();
        let n = devs.len();
        devs.sort();
        devs.dedup();
        assert_eq!(devs.len(), n, "{name}: a dev shared by two drives");
    }
}

#[test]
fn a_rotational_virtio_disk_is_virtual_not_nvme() {
    // virtio.manifest: vda under virtio1 (driver virtio_blk, modalias virtio:d00000002v00001AF4)
    // with queue/rotational 1.
    let (d, _t, text) = run("virtio");
    assert_eq!(d.drives[0].class, DeviceClass::Virtio { rotational: true });
    assert!(text.contains("class: virtual-rotational"), "{text}");
    let p = local_part(&d, "vda");
    // Not "nvme": the rotational flag is what the host passed on, so the medium is inferred.
    assert_eq!(p.figures["class"].value, Value::Str("hdd".into()));
    assert_eq!(p.figures["class"].basis, "inferred");
    assert!(p.figures["class"].source.contains("queue/rotational = 1"), "{}", p.figures["class"].source);
    for f in ["interface", "interface_gen"] {
        assert_eq!(p.figures[f].basis, "inferred", "{f}: {}", p.figures[f].source);
    }
}

#[test]
fn a_loop_device_gets_no_measured_link() {
    let (_dir, root) = fixture("virtio");
    let cat = Catalog::builtin();
    let d = discover(&root, &cat, &DiscoverOptions { include_virtual: true }).unwrap();
    let lp = d.drives.iter().find(|x| x.id == "loop0").expect("loop0 with --all");
    assert_eq!(lp.class, DeviceClass::Loop);
    let p = local_part(&d, "loop0");
    // Nothing about a loop device's link or medium was read from hardware: no figure of its
    // part is a measurement except its size.
    for (name, f) in &p.figures {
        if name != "capacity_gb" {
            assert_eq!(f.basis, "inferred", "{name}: {}", f.source);
        }
    }
    // 524288 sectors of 512 bytes = 268,435,456 bytes = 0.268 GB, read from size.
    assert_eq!(p.figures["capacity_gb"].value, Value::Num(0.268));
    let parent = d.nodes.iter().find(|n| n.id == lp.parent).unwrap();
    assert!(d.parts.iter().find(|x| x.id == parent.part.id()).unwrap().figures.values().all(|f| f.basis == "inferred"));
}

#[test]
fn the_library_names_no_option_and_the_cli_does() {
    let (_dir, root) = fixture("virtio");
    let d = discover(&root, &Catalog::builtin(), &DiscoverOptions::default()).unwrap();
    assert_eq!(d.skipped_virtual, ["loop0"]);
    assert!(d.notes.iter().all(|n| !n.contains("--")), "{:?}", d.notes);
    let e = iopath_validate::discover::discover(
        std::path::Path::new("/nonexistent/sys"),
        &Catalog::builtin(),
        &DiscoverOptions::default(),
    )
    .unwrap_err();
    assert!(!e.to_string().contains("--"), "{e}");
    let out =
        Command::new(env!("CARGO_BIN_EXE_iopath")).args(["discover", "--sysfs-root"]).arg(&root).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 virtual devices skipped; --all lists them"), "{text}");
}

#[test]
fn this_machine_discovers_and_loads() {
    if !std::path::Path::new("/sys/class/block").exists() {
        iopath_test_support::skip("no /sys/class/block on this machine");
        return;
    }
    let cat = Catalog::builtin();
    let d = discover(std::path::Path::new("/sys"), &cat, &DiscoverOptions::default()).unwrap();
    let text = to_toml(&d, "this machine").unwrap();
    Topology::parse("this machine", &text, &cat).unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
    eprintln!("discovered {} drives on this machine", d.drives.len());
}
