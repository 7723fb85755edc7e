//! The topology JSON Schema, checked with an independent validator (the `jsonschema` crate):
//! the shipped copy is what `iopath schema` prints, every config in `configs/` validates, every
//! file of the bad-config corpus whose fault a schema can express fails, and the patterns of
//! sizes, durations, percentages, rates and links agree with the loader's parsers.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn iopath(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_iopath")).args(args).output().unwrap();
    assert!(out.status.success(), "iopath {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn schema() -> Value {
    serde_json::from_str(&iopath(&["schema"])).unwrap()
}

fn validator(s: &Value) -> jsonschema::Validator {
    jsonschema::draft7::new(s).unwrap_or_else(|e| panic!("the schema is not valid draft-07: {e}"))
}

/// A TOML file as the JSON value an editor's validator sees; `None` when it is not TOML.
fn toml_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: toml::Value = toml::from_str(&text).ok()?;
    Some(serde_json::to_value(v).unwrap())
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

fn tomls(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn the_shipped_schema_is_what_iopath_prints() {
    let shipped: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schema/iopath-topology.json")).unwrap()).unwrap();
    assert!(shipped == schema(), "schema/iopath-topology.json is out of date: run scripts/schema.sh");
}

#[test]
fn title_and_a_plain_description_on_every_field() {
    let s = schema();
    assert_eq!(s["title"], "iopath topology");
    let mut tables = vec![("(root)".to_string(), &s)];
    for (name, d) in s["definitions"].as_object().unwrap() {
        tables.push((name.clone(), d));
    }
    for (table, t) in tables {
        for (field, p) in t["properties"].as_object().into_iter().flatten() {
            let d = p["description"].as_str().unwrap_or_else(|| panic!("{table}.{field} has no description"));
            assert!(d.len() > 10, "{table}.{field}: {d:?}");
            // Hover text for users: no rustdoc links or code spans.
            assert!(!d.contains('`') && !d.contains("[`") && !d.contains("]("), "{table}.{field}: {d:?}");
        }
    }
}

#[test]
fn every_config_validates_and_names_the_schema() {
    let v = validator(&schema());
    let configs = tomls("configs");
    assert!(configs.len() >= 10);
    for p in configs {
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text.lines().next(),
            Some("#:schema ../schema/iopath-topology.json"),
            "{}: the first line tells taplo where the schema is",
            p.display()
        );
        let doc = toml_json(&p).unwrap();
        let e = errors(&v, &doc);
        assert!(e.is_empty(), "{}: {e:#?}", p.display());
    }
}

/// Files of the corpus that are not TOML at all: a schema validates a parsed document, so the
/// TOML reader, not the schema, finds these.
const NOT_TOML: &[&str] = &[
    "not-utf8.toml",
    "syntax-bare-word-value.toml",
    "syntax-duplicate-key.toml",
    "syntax-missing-bracket.toml",
    "syntax-unclosed-string.toml",
    // 200 dotted levels: the toml crate's reader refuses the nesting, as the loader's does.
    "syntax-deep-dotted-header.toml",
];

/// Faults a JSON Schema cannot express, each with why: they need the values of other tables
/// (a parent's ports, which ids exist, what a port trains at) or arithmetic across fields.
const SCHEMA_CANNOT: &[(&str, &str)] = &[
    ("board-b760-m2_2-nvme-disables-sata4.toml", "a board's lane-sharing rule between two places"),
    ("board-card-wider-than-slot.toml", "a card's width against its slot's, two tables"),
    ("board-m2-disables-sata-port.toml", "a board's lane-sharing rule"),
    ("board-m2-disables-slot.toml", "a board's lane-sharing rule"),
    ("board-m2-disables-x1-slots.toml", "a board's lane-sharing rule"),
    ("board-m2-sata-ssd-disables-sata5.toml", "a board's lane-sharing rule"),
    ("board-nvme-in-sata-port.toml", "a drive's kind against the place's"),
    ("board-slot-without-board.toml", "a slot is valid only when the host names a board"),
    ("board-too-many-drives-for-ports.toml", "counting drives against a board's ports"),
    ("board-unknown-bios-mode.toml", "a BIOS mode exists per board"),
    ("board-unknown-slot.toml", "slot names exist per board"),
    ("board-x1-slot-in-chipset-mode.toml", "a board's BIOS mode against a slot"),
    ("controller-under-controller.toml", "which kinds may be a parent needs the parent's part"),
    ("count-too-big-auto-ports.toml", "count against the parent's port count"),
    ("count-too-big.toml", "count against the parent's port count"),
    ("drive-link-family-mismatch.toml", "a link's family against the parent's part"),
    ("drive-under-drive.toml", "which kinds may be a parent needs the parent's part"),
    ("duplicate-id-from-count.toml", "ids made by count against other ids"),
    ("duplicate-id.toml", "unique ids across array items by one field"),
    ("expander-on-sata-controller.toml", "the parent's protocol"),
    ("expander-port-beyond-phys.toml", "a port against the parent's phy count"),
    ("fbs-on-cbs-controller.toml", "a figure against the parent's figures"),
    ("link-family-mismatch.toml", "a link's family against the part's"),
    ("link-wider-than-port.toml", "a link width against the part's lanes"),
    ("missing-parent.toml", "parent may be left out on a board; whether a board is given is another table"),
    ("nvme-drive-on-sata-controller.toml", "the parent's protocol"),
    ("own-parent.toml", "a value against the table's own id"),
    ("param-interface-gen-beyond-sata.toml", "a figure against the part's interface"),
    ("parent-cycle.toml", "a cycle over parent ids"),
    ("pm-on-controller-without-pm-support.toml", "the parent's figures"),
    ("pm-under-pm.toml", "which kinds may be a parent needs the parent's part"),
    ("pool-chunk-not-power-of-two.toml", "a power of two is arithmetic, not a pattern"),
    ("pool-drive-in-two-pools.toml", "membership across two pools"),
    ("pool-recordsize-on-md.toml", "recordsize allowed by the layout's family"),
    ("pool-too-few-members.toml", "member count per layout"),
    ("pool-unknown-member.toml", "member ids against the drive ids"),
    ("pool-unraid-parity-too-small.toml", "parity disk sizes against data disks"),
    ("pool-workload-failed-too-many.toml", "failed members against the layout's redundancy"),
    ("pool-workload-unknown-pool.toml", "pool ids named elsewhere"),
    ("port-beyond-controller.toml", "a port against the parent's port count"),
    ("port-on-portless-parent.toml", "the parent's part"),
    ("port-overflow-with-count.toml", "ports plus count against the parent's ports"),
    ("port-used-twice.toml", "two tables with the same parent and port"),
    ("sas-drive-on-sata-controller.toml", "the parent's protocol"),
    ("sata-drive-on-host.toml", "the parent's kind"),
    ("unknown-parent.toml", "parent ids against node ids"),
    ("workload-active-too-many.toml", "active against the number of drives"),
    ("workload-bs-not-multiple-of-512.toml", "a multiple of 512 after k/m suffixes is arithmetic"),
    ("workload-copy-chain.toml", "copy pairs against each other"),
    ("workload-copy-onto-itself.toml", "SRC equal to DST"),
    ("workload-unknown-drive.toml", "drive ids against [[drive]] ids"),
    ("two-drives-one-dev.toml", "a value unique by one field across array items"),
];

#[test]
fn the_bad_configs_that_a_schema_can_judge_fail() {
    let v = validator(&schema());
    let cannot: Vec<&str> = SCHEMA_CANNOT.iter().map(|(f, _)| *f).collect();
    let mut wrong = Vec::new();
    let files = tomls("tests/bad-configs");
    assert!(files.len() > 100);
    for p in &files {
        let name = p.file_name().unwrap().to_str().unwrap();
        let Some(doc) = toml_json(p) else {
            assert!(NOT_TOML.contains(&name), "{name} is not TOML but not listed in NOT_TOML");
            continue;
        };
        assert!(!NOT_TOML.contains(&name), "{name} is TOML: take it off NOT_TOML");
        let e = errors(&v, &doc);
        match (cannot.contains(&name), e.is_empty()) {
            (false, true) => wrong.push(format!("{name}: the schema accepts it")),
            (true, false) => wrong.push(format!("{name}: listed as beyond a schema, but it fails: {e:?}")),
            _ => {}
        }
    }
    for (f, _) in SCHEMA_CANNOT {
        assert!(files.iter().any(|p| p.ends_with(f)), "{f} is listed but not in the corpus");
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A small valid topology, changed by `edit`, and whether the schema accepts it.
fn accepts(edit: impl FnOnce(&mut Value)) -> bool {
    let mut doc = json!({
        "name": "t",
        "host": { "part": "amd-am5" },
        "node": [{ "id": "hba", "part": "asm1166", "parent": "host", "params": { "lanes": 2 } }],
        "drive": [{ "id": "d", "part": "kingston-dc600m-1920", "parent": "hba", "port": 0, "count": 2 }],
        "workload": { "w": { "rw": "randread", "bs": "4k", "iodepth": 32, "rwmixread": 70, "region": "10%" } },
    });
    edit(&mut doc);
    validator(&schema()).is_valid(&doc)
}

#[test]
fn the_values_the_issue_names_fail() {
    assert!(accepts(|_| {}), "the base document is valid");
    // issue 16: rw = "randomread", bs = "4 potatoes", iodepth = 0, rwmixread = 150, a misspelt
    // part id and an unknown params key all validated.
    assert!(!accepts(|d| d["workload"]["w"]["rw"] = json!("randomread")));
    assert!(!accepts(|d| d["workload"]["w"]["bs"] = json!("4 potatoes")));
    assert!(!accepts(|d| d["workload"]["w"]["iodepth"] = json!(0)));
    assert!(!accepts(|d| d["workload"]["w"]["rwmixread"] = json!(150)));
    assert!(!accepts(|d| d["drive"][0]["part"] = json!("kingston-dc600m-1902")));
    assert!(!accepts(|d| d["node"][0]["params"] = json!({ "lanez": 1 })));
    // A figure of another kind is not one of a controller's: rpm is a drive's.
    assert!(!accepts(|d| d["node"][0]["params"] = json!({ "rpm": 7200 })));
    // lanes is one of 1, 2, 4, 8, 16 (PCIE_WIDTHS).
    assert!(!accepts(|d| d["node"][0]["params"] = json!({ "lanes": 3 })));
    assert!(!accepts(|d| d["drive"][0]["link"] = json!("sata4")));
    assert!(accepts(|d| d["drive"][0]["link"] = json!("sata2")));
    assert!(!accepts(|d| d["workload"]["w"]["region"] = json!("0%")));
    assert!(!accepts(|d| d["drive"][0]["count"] = json!(0)));
}

#[test]
fn ids_of_a_parts_file_are_in_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mine.toml");
    std::fs::write(
        &f,
        "[[part]]\nid = \"my-lab-ssd\"\nkind = \"drive\"\nname = \"Lab SSD\"\n\
         figures.class = { value = \"ssd\", source = \"the drive label\" }\n\
         figures.interface = { value = \"sata\", source = \"the drive label\" }\n\
         figures.interface_gen = { value = 3, source = \"the drive label\" }\n\
         figures.capacity_gb = { value = 480, source = \"the drive label\" }\n",
    )
    .unwrap();
    let with: Value = serde_json::from_str(&iopath(&["schema", "--parts", f.to_str().unwrap()])).unwrap();
    let ids = |s: &Value| s["then"]["properties"]["drive"]["items"]["properties"]["part"]["enum"].clone();
    assert!(ids(&with).as_array().unwrap().contains(&json!("my-lab-ssd")), "{}", ids(&with));
    assert!(!ids(&schema()).as_array().unwrap().contains(&json!("my-lab-ssd")));
}

/// Whether the schema's pattern for `what` (found at `at`) accepts `s`.
fn pattern_at<'a>(s: &'a Value, at: &[&str]) -> &'a str {
    let mut v = s;
    for k in at {
        v = &v[*k];
    }
    v.as_str().unwrap_or_else(|| panic!("no pattern at {at:?}"))
}

fn matches(pattern: &str, s: &str) -> bool {
    jsonschema::draft7::is_valid(&json!({ "type": "string", "pattern": pattern }), &json!(s))
}

#[test]
fn patterns_agree_with_the_parsers() {
    use iopath_model::units::{parse_duration, parse_rate, parse_size};
    let s = schema();
    let w = |f: &str| pattern_at(&s, &["definitions", "RawWorkload", "properties", f, "pattern"]).to_string();
    // Sizes: units.rs parse_size (k = 1024, b/kb/kib the same; any case).
    let size = w("bs");
    for t in ["4k", "128K", "1m", "1MiB", "512", " 2g ", "1.5k", "4 KiB", "64m", "1t", "3b"] {
        assert!(parse_size(t).is_ok() && matches(&size, t), "{t:?}");
    }
    for t in ["4 potatoes", "k", "-4k", "4q", "", "4kk", "1.2.3k", "4 k b"] {
        assert!(parse_size(t).is_err() && !matches(&size, t), "{t:?}");
    }
    // What a pattern cannot see: a fraction that does not come out whole (0.3 bytes).
    assert!(parse_size("0.3").is_err() && matches(&size, "0.3"));
    // Durations: parse_duration (bare seconds as fio; s, sec, ms, us, m, min, h).
    let dur = w("runtime");
    for t in ["20s", "500ms", "2m", "1h", "10", "0", "1.5s", "250us", "3min", "2 sec"] {
        assert!(parse_duration(t).is_ok() && matches(&dur, t), "{t:?}");
    }
    for t in ["20 seconds", "s", "-1s", "5d", "1h30m"] {
        assert!(parse_duration(t).is_err() && !matches(&dur, t), "{t:?}");
    }
    // Percentages of region and fill: above 0% and up to 100%, with the % (workload.rs).
    let pct = w("region");
    for t in ["10%", "100%", "0.5%", "99.9 %", "1%", "100.0%"] {
        let ok = iopath_model::WorkloadSpec { region: Some(t.into()), ..Default::default() }.resolve().is_ok();
        assert!(ok && matches(&pct, t), "{t:?}");
    }
    for t in ["0%", "150%", "100.5%", "10", "0.1", "%", "ten%"] {
        let ok = iopath_model::WorkloadSpec { region: Some(t.into()), ..Default::default() }.resolve().is_ok();
        assert!(!ok && !matches(&pct, t), "{t:?}");
    }
    // Rates in params (*_mb_s): parse_rate, a unit required.
    // The drive kind's branch is the only one of RawDrive's allOf.
    let rate_p = s["definitions"]["RawDrive"]["allOf"][0]["then"]["properties"]["params"]["properties"]["seq_read_mb_s"]
        ["anyOf"][1]["pattern"]
        .as_str()
        .unwrap()
        .to_string();
    for t in ["550MB/s", "550 MB/s", "1.5GB/s", "6Gbps", "6 Gb/s", "100MiB/s", "800 Mbit/s"] {
        assert!(parse_rate(t).is_ok() && matches(&rate_p, t), "{t:?}");
    }
    for t in ["550", "550 MB", "fast", "6 bps", "5 TB/s"] {
        assert!(parse_rate(t).is_err() && !matches(&rate_p, t), "{t:?}");
    }
}

#[test]
fn link_names_agree_with_parse_link() {
    let s = schema();
    let link = s["definitions"]["RawDrive"]["properties"]["link"].clone();
    let v = validator(&link);
    for t in [
        "sata1",
        "sata3",
        "sata-6g",
        "SATA3",
        "pcie3x2",
        "PCIe 3.0 x4",
        "gen4x16",
        "dmi3",
        "sas3x4",
        "sas-12g",
        "internal",
    ] {
        assert!(iopath_model::link::parse_link(t).is_ok() && v.is_valid(&json!(t)), "{t:?}");
    }
    for t in ["sata4", "pcie9", "pcie3x3", "sata3x2", "pcie3x-1", "internalx4", "usb3", "", "sas0"] {
        assert!(iopath_model::link::parse_link(t).is_err() && !v.is_valid(&json!(t)), "{t:?}");
    }
}
