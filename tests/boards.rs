//! Topologies on boards (model/src/board.rs, model/src/load/boards.rs): a board expands into
//! the same tree a user would write by hand, its sharing rules narrow and disable places, and
//! the API `advise` uses (free places, moving a card) sees the rules.

use iopath_model::board::{Place, find};
use iopath_model::bound::{Mix, bound};
use iopath_model::paths::ResourceGraph;
use iopath_model::{Catalog, Topology};

fn load(text: &str) -> Topology {
    Topology::parse("t.toml", text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn bound_of(t: &Topology, ids: &[&str], mix: Mix) -> iopath_model::bound::BoundRow {
    let g = ResourceGraph::new(t);
    let drives: Vec<usize> = ids.iter().map(|id| t.node(id).unwrap_or_else(|| panic!("no {id}"))).collect();
    bound(t, &g, &drives, mix, 1 << 20, false)
}

/// An MSI MEG B550 UNIFY with everything behind its chipset busy: four SATA SSDs on the
/// B550's own ports, a 970 EVO Plus in M2_2 (PCIe 3.0 x2) and one in M2_4 (PCIe 3.0 x4).
const UNIFY: &str = r#"
[host]
board = "msi-meg-b550-unify"
[[drive]]
id = "s"
count = 4
part = "samsung-870evo-1tb"
port = "SATA1"
[[drive]]
id = "a"
part = "samsung-970evoplus-1tb"
m2 = "M2_2"
[[drive]]
id = "b"
part = "samsung-970evoplus-1tb"
m2 = "M2_4"
"#;

/// The same build written as a tree: what the board stands for.
const UNIFY_BY_HAND: &str = r#"
[host]
part = "amd-am4"
[[node]]
id = "chipset"
part = "amd-b550"
parent = "host"
[[node]]
id = "sata"
part = "amd-chipset-sata"
parent = "chipset"
params = { ports = 6 }
[[drive]]
id = "s"
count = 4
part = "samsung-870evo-1tb"
parent = "sata"
port = 0
[[drive]]
id = "a"
part = "samsung-970evoplus-1tb"
parent = "chipset"
link = "pcie3x2"
[[drive]]
id = "b"
part = "samsung-970evoplus-1tb"
parent = "chipset"
link = "pcie3x4"
"#;

#[test]
fn a_board_gives_the_bound_of_the_tree_it_stands_for_and_its_chipset_uplink_binds() {
    let on_board = load(UNIFY);
    let by_hand = load(UNIFY_BY_HAND);
    let all = ["s0", "s1", "s2", "s3", "a", "b"];
    for mix in [Mix::Read, Mix::Write, Mix::Mixed] {
        let (x, y) = (bound_of(&on_board, &all, mix), bound_of(&by_hand, &all, mix));
        assert_eq!((x.total_mb_s, &x.binding), (y.total_mb_s, &y.binding), "{mix:?}");
    }
    // The drives could move 4 x 560 + 2 x 3,500 = 9,240 MB/s of reads (data sheets), far above
    // the B550's uplink: PCIe 3.0 x4 = 4 lanes x 8 GT/s x 128/130 / 8 = 3,938.5 MB/s each way
    // before TLP overhead. So the uplink binds, below its raw rate; TLP headers (about 24 bytes
    // per 256-byte payload) take it to about 90% of that.
    let r = bound_of(&on_board, &all, Mix::Read);
    assert!(r.binding.starts_with("chipset"), "{r:?}");
    assert!(r.total_mb_s < 3938.5 && r.total_mb_s > 0.85 * 3938.5, "{r:?}");
    // The sockets train at their wiring: M2_2 at x2, M2_4 at x4, both PCIe 3.0.
    let link = |id: &str| on_board.nodes[on_board.node(id).unwrap()].link;
    assert_eq!((link("a").generation, link("a").lanes, link("b").lanes), (3, 2, 4));
    assert_eq!(on_board.nodes[on_board.nodes[on_board.node("a").unwrap()].parent.unwrap()].id, "chipset");
}

#[test]
fn a_slot_shared_with_another_runs_at_the_width_the_manual_gives() {
    // Gigabyte X570 AORUS XTREME: 'The PCIEX8 slot shares bandwidth with the PCIEX16 slot ...
    // the PCIEX16 slot operates at up to x8 mode'. A PEX8747 switch card has an x16 uplink.
    let text = |second: &str| {
        format!(
            "[host]\nboard = \"gigabyte-x570-aorus-xtreme\"\n[[node]]\nid = \"sw\"\npart = \"broadcom-pex8747\"\nslot = \"PCIEX16\"\n{second}[[drive]]\nid = \"n\"\npart = \"samsung-970evoplus-1tb\"\nparent = \"sw\"\n"
        )
    };
    let alone = load(&text(""));
    let sw = |t: &Topology| t.nodes[t.node("sw").unwrap()].link;
    assert_eq!((sw(&alone).generation, sw(&alone).lanes), (3, 16), "the PEX8747 is a Gen3 x16 card");
    let shared = load(&text("[[node]]\nid = \"hba\"\npart = \"lsi-sas3008\"\nslot = \"PCIEX8\"\n"));
    assert_eq!(sw(&shared).lanes, 8, "PCIEX16 drops to x8 with PCIEX8 in use");
    assert_eq!(shared.board.as_ref().unwrap().slot("PCIEX16").unwrap().electrical_lanes, 8);
    assert_eq!(shared.slot_lanes("PCIEX16"), Some(8));
    assert_eq!(alone.slot_lanes("PCIEX16"), Some(16));
    // The second slot's own width: 8, from the CPU.
    let hba = shared.nodes[shared.node("hba").unwrap()].clone();
    assert_eq!((hba.link.lanes, shared.nodes[hba.parent.unwrap()].id.as_str()), (8, "host"));
}

/// The config of the README: a JMB585 in PCI_E4, disks on it and on the B550's SATA1..4, NVMe
/// SSDs in M2_1 and M2_3.
fn readme_board() -> Topology {
    Topology::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/board-b550-unify-jmb585-8hdd.toml"),
        &Catalog::builtin(),
    )
    .unwrap()
}

#[test]
fn free_places_leave_out_what_is_used_and_what_the_rules_disable() {
    let t = readme_board();
    // Used: PCI_E4, M2_1, M2_3, SATA1..4. The NVMe SSD in M2_3 disables SATA5 and SATA6
    // (rule m2_3-pcie-sata56) and, in Chipset mode, PCI_E2 and PCI_E3 (m2_3-x1-slots).
    let free = t.free_places();
    assert_eq!(free, [Place::Slot("PCI_E1".into()), Place::M2("M2_2".into()), Place::M2("M2_4".into())]);
    assert!(t.occupied(&Place::Sata("SATA4".into())) && !t.occupied(&Place::Sata("SATA5".into())));
}

#[test]
fn a_moved_card_loads_on_its_new_place_and_a_move_that_breaks_a_rule_names_it() {
    let t = readme_board();
    // To the CPU's x16 slot: the JMB585 then hangs on the host, still at its own x2.
    let moved = t.with_raw(t.with_card_moved("hba", &Place::Slot("PCI_E1".into())).unwrap()).unwrap();
    let hba = &moved.nodes[moved.node("hba").unwrap()];
    assert_eq!((moved.nodes[hba.parent.unwrap()].id.as_str(), hba.link.lanes), ("host", 2));
    assert!(moved.free_places().contains(&Place::Slot("PCI_E4".into())));
    // The boot SSD to M2_4 disables PCI_E4, where the card is: the reload says which rule.
    let e = t.with_raw(t.with_card_moved("boot", &Place::M2("M2_4".into())).unwrap()).unwrap_err();
    assert!(e.to_string().contains("rule m2_4-pci_e4"), "{e}");
    // A card cannot go to a SATA port, nor to a place the board lacks.
    assert!(t.with_card_moved("hba", &Place::Sata("SATA5".into())).is_err());
    let e = t.with_card_moved("hba", &Place::Slot("PCI_E9".into())).unwrap_err();
    assert!(e.message.contains("has no slot PCI_E9"), "{e}");
}

#[test]
fn every_sharing_rule_of_every_board_turns_a_populated_place_into_a_conflict() {
    // For each rule that disables places: put a device on every `when` place (of the rule's
    // mode) and one on the first disabled place, and expect the rule's id in the error.
    for b in iopath_model::board::builtin() {
        for r in b.rules.iter().filter(|r| !r.disables.is_empty()) {
            let mut text = format!("[host]\nboard = \"{}\"\n", b.id);
            let mut used = Vec::new();
            for (i, w) in r.when.iter().chain(r.disables.first()).enumerate() {
                text.push_str(&device_on(b, w, r.mode.filter(|_| i < r.when.len()), i));
                used.push(w.clone());
            }
            text.push_str("[[drive]]\nid = \"any\"\npart = \"wd-red-plus-4tb\"\nparent = \"host_hba\"\nport = 0\n[[node]]\nid = \"host_hba\"\npart = \"lsi-sas3008\"\nparent = \"host\"\n");
            let e = Topology::parse("t.toml", &text, &Catalog::builtin()).err();
            let e = e.unwrap_or_else(|| panic!("{} rule {} did not fire:\n{text}", b.id, r.id)).to_string();
            assert!(e.contains(&format!("rule {}", r.id)) && e.contains(&r.source[..20]), "{e}\n{text}");
        }
    }
    assert!(find("msi-meg-b550-unify").is_some_and(|b| b.rules.len() >= 4));
}

/// A `[[node]]` or `[[drive]]` that populates place `name` (with a device of `mode`).
fn device_on(b: &iopath_model::board::Board, name: &str, mode: Option<iopath_model::board::Mode>, i: usize) -> String {
    use iopath_model::board::Mode;
    match b.place(name).unwrap() {
        Place::Slot(s) => format!("[[node]]\nid = \"c{i}\"\npart = \"asm1061\"\nslot = \"{s}\"\n"),
        Place::M2(m) => {
            let part = if mode == Some(Mode::Sata) { "samsung-870evo-1tb" } else { "samsung-970evoplus-1tb" };
            format!("[[drive]]\nid = \"m{i}\"\npart = \"{part}\"\nm2 = \"{m}\"\n")
        }
        Place::Sata(p) => format!("[[drive]]\nid = \"p{i}\"\npart = \"wd-red-plus-4tb\"\nport = \"{p}\"\n"),
    }
}

#[test]
fn the_catalog_has_twenty_boards_and_each_takes_a_drive_on_every_sata_port() {
    let boards = iopath_model::board::builtin();
    assert!(boards.len() >= 20, "{} boards", boards.len());
    // Two boards' sources list no SATA ports (their notes say so).
    for b in boards.iter().filter(|b| !b.sata.is_empty()) {
        let mut text = format!("[host]\nboard = {:?}\n", b.id);
        for (i, p) in b.sata.iter().flat_map(|g| g.ports.iter()).enumerate() {
            text += &format!("[[drive]]\nid = \"d{i}\"\npart = \"toshiba-n300-8tb\"\nport = {p:?}\n");
        }
        let t = load(&text);
        // Each drive hangs on the port's onboard controller, at the port's number in it.
        for (i, p) in b.sata.iter().flat_map(|g| g.ports.iter()).enumerate() {
            let (g, ix) = b.sata_port(p).unwrap();
            let d = &t.nodes[t.node(&format!("d{i}")).unwrap()];
            assert_eq!(t.nodes[d.parent.unwrap()].id, g.controller, "{}: {p}", b.id);
            assert_eq!(d.port, Some(ix as u32), "{}: {p}", b.id);
        }
    }
}

#[test]
fn the_odroid_h4s_four_sata_ports_share_the_asm1064s_one_lane() {
    // Four N300 8 TB at 251 MB/s (outer zone, catalog) want 1,004 MB/s; the ASM1064 sits on
    // one PCIe 3.0 lane of the SoC (8 GT/s x 128/130 = 985 MB/s raw, less the TLP headers),
    // so the four together get less than 985 MB/s and each less than its own 251.
    let t = load(
        "[host]\nboard = \"hardkernel-odroid-h4\"\n[[drive]]\nid = \"d\"\ncount = 4\npart = \"toshiba-n300-8tb\"\nport = \"SATA1\"\n",
    );
    let row = bound_of(&t, &["d0", "d1", "d2", "d3"], Mix::Read);
    assert!(row.total_mb_s < 985.0 && row.total_mb_s > 0.85 * 985.0, "{row:?}");
    // The same four on an NVMe-socket JMB585 (PCIe 3.0 x2: 1,970 MB/s raw) run at their own
    // rate: 4 x 251 = 1,004 MB/s.
    let t = load(
        "[host]\nboard = \"hardkernel-odroid-h4\"\n[[node]]\nid = \"hba\"\npart = \"jmb585\"\nm2 = \"M2_SSD1\"\n\
         [[drive]]\nid = \"d\"\ncount = 4\npart = \"toshiba-n300-8tb\"\nparent = \"hba\"\nport = 0\n",
    );
    let row = bound_of(&t, &["d0", "d1", "d2", "d3"], Mix::Read);
    assert!((row.total_mb_s - 4.0 * 251.0).abs() < 0.02 * 1004.0, "{row:?}");
}

#[test]
fn the_unify_in_cpu_mode_gives_m2_2_four_cpu_lanes_and_keeps_the_x1_slots() {
    // MSI's table: in Chipset mode (default) M2_2 is PCIe 3.0 x2 from the B550 and takes the
    // lanes of PCI_E2/PCI_E3; in CPU mode PCI_E1 runs x8 and M2_2 gets 4.0 x4 from the CPU.
    let ssd = "[[drive]]\nid = \"a\"\npart = \"samsung-990pro-2tb\"\nm2 = \"M2_2\"\n";
    let nic = "[[node]]\nid = \"nic\"\npart = \"intel-i210\"\nslot = \"PCI_E2\"\n";
    let hba = "[[node]]\nid = \"hba\"\npart = \"lsi-sas3008\"\nslot = \"PCI_E1\"\n";
    let cpu = load(&format!("[host]\nboard = \"msi-meg-b550-unify\"\nbios = \"cpu-mode\"\n{ssd}{nic}{hba}"));
    let node = |t: &Topology, id: &str| t.nodes[t.node(id).unwrap()].clone();
    let a = node(&cpu, "a");
    assert_eq!((a.link.generation, a.link.lanes, cpu.nodes[a.parent.unwrap()].id.as_str()), (4, 4, "host"));
    // The SAS3008 is a x8 card: in PCI_E1 (x16 wired, x8 in CPU mode) it trains at x8 either
    // way; the slot's own width is what CPU mode narrows.
    assert_eq!(cpu.board.as_ref().unwrap().slot("PCI_E1").unwrap().electrical_lanes, 8);
    // The 990 PRO (PCIe 4.0 x4, 7,450 MB/s reads) on four CPU lanes: 4 x 1,969 = 7,877 MB/s
    // raw, so the drive's own rate binds, not a x2 chipset link (1,969 raw).
    let row = bound_of(&cpu, &["a"], Mix::Read);
    assert!(row.total_mb_s > 2.0 * 1969.0, "{row:?}");
    // Default (Chipset) mode: the same file without `bios` refuses the NIC in PCI_E2.
    let e =
        Topology::parse("t.toml", &format!("[host]\nboard = \"msi-meg-b550-unify\"\n{ssd}{nic}"), &Catalog::builtin())
            .unwrap_err()
            .to_string();
    assert!(e.contains("rule m2_2-x1-slots"), "{e}");
    let def = load(&format!("[host]\nboard = \"msi-meg-b550-unify\"\n{ssd}"));
    let a = node(&def, "a");
    assert_eq!((a.link.generation, a.link.lanes, def.nodes[a.parent.unwrap()].id.as_str()), (3, 2, "chipset"));
}

#[test]
fn a_cpu_with_pcie_3_root_ports_lowers_the_cpu_places_generation() {
    // The UNIFY's table gives M2_1 as '4.0/ 3.0 x4*': '* PCIe/ M.2 specifications may vary
    // depending on the CPU installed'. The generation is the CPU's root ports': a Ryzen APU
    // (PCIe 3.0) written as root_gen = 3 trains a PCIe 4.0 SSD in M2_1 at 3.0 x4 (3,938.5
    // MB/s raw, 3,565 of read payload), below the 990 PRO's 7,450.
    let t = |params: &str| {
        load(&format!(
            "[host]\nboard = \"msi-meg-b550-unify\"\n{params}[[drive]]\nid = \"a\"\npart = \"samsung-990pro-2tb\"\nm2 = \"M2_1\"\n"
        ))
    };
    let apu = t("params = { root_gen = 3 }\n");
    assert_eq!(apu.nodes[apu.node("a").unwrap()].link.generation, 3);
    let row = bound_of(&apu, &["a"], Mix::Read);
    assert!(row.total_mb_s < 3938.5, "{row:?}");
    let zen3 = t("");
    assert_eq!(zen3.nodes[zen3.node("a").unwrap()].link.generation, 4);
}
