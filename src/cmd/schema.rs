//! `iopath schema`: the JSON Schema of topology files, for editors.
//!
//! The derive on the raw TOML types (`model/src/topology.rs`) gives the shape, the plain-language
//! descriptions, the fixed enums (rw, pool layouts, protocols) and the ranges. What depends on
//! the catalog or on the loader's parsers is added here, on the generated JSON:
//!
//! - part ids per kind (the built-in catalog's and those of `--parts FILE`), as enums;
//! - the figure names each kind of part accepts in `params`, with each figure's type, range and
//!   meaning; unknown names fail;
//! - patterns for sizes, durations, percentages, rates and link names, written from the parsers
//!   in `model/src/units.rs` and `model/src/link.rs` (`tests/schema.rs` checks that the parser
//!   and the pattern agree on a list of strings, and on every such string in `configs/`).
//!
//! Draft-07, the newest draft every TOML editor's validator reads (taplo, Even Better TOML).

use super::{CliResult, print_json};
use iopath_model::Catalog;
use iopath_model::catalog::{Accepts, FIGURES, FigureSpec, FigureType, Kind};
use serde_json::{Map, Value, json};

pub fn run(catalog: &Catalog) -> CliResult {
    print_json(&topology_schema(catalog))?;
    Ok(0)
}

/// One number as `parse_size`/`parse_duration`/`parse_rate` split it off (`split_number`):
/// digits with at most one dot, as Rust's `f64::from_str` reads them (`4`, `1.5`, `1.`, `.5`).
const NUMBER: &str = r"(\d+\.?\d*|\.\d+)";

/// A size as `parse_size` reads it: a number, then nothing or b (bytes) or k, m, g, t with an
/// optional b or ib (all powers of 1024), any case, spaces around.
pub fn size_pattern() -> String {
    format!(r"^\s*{NUMBER}\s*([bB]|[kKmMgGtT]([iI]?[bB])?)?\s*$")
}

/// A duration as `parse_duration` reads it: a number, then nothing or s, sec (seconds), ms,
/// us, m, min or h, any case.
pub fn duration_pattern() -> String {
    format!(r"^\s*{NUMBER}\s*({})?\s*$", ["s", "sec", "ms", "us", "m", "min", "h"].map(any_case).join("|"))
}

/// A percentage above 0 and up to 100, with its %, as a workload's region and fill must be
/// written (`parse_fraction` after the loader's check for the %): 100, 1 to 99 with any
/// decimals, or below 1 with a non-zero decimal.
pub fn percent_pattern() -> String {
    r"^\s*(100(\.0*)?|0*[1-9]\d?(\.\d*)?|0*\.\d*[1-9]\d*)\s*%\s*$".to_string()
}

/// A rate with its unit as `parse_rate` reads it: kB/s, MB/s, GB/s (decimal bytes), KiB/s,
/// MiB/s, GiB/s, or bits as kbps, Mbps, Gbps, Mbit/s, Gb/s.
pub fn rate_pattern() -> String {
    format!(r"^\s*{NUMBER}\s*[kKmMgG]([iI]?[bB]/[sS]|[bB][pP][sS]|[bB][iI][tT]/[sS])\s*$")
}

/// The letters of `s` in either case, for patterns (JSON Schema's ECMA-262 patterns have no
/// case-insensitive flag).
fn any_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A link name as `parse_link` reads it: a family and generation (`pcie3`, `PCIe 3.0`, `gen3`,
/// `dmi3`, `sata3`, `sata-6g`, `sas3`, `sas-12g`) with an optional width after x that the
/// family has (PCIe x1, x2, x4, x8, x16; SATA x1; SAS any), or `internal`. `pcie_only`: the
/// PCIe forms (with `internal` when `internal`), for figures that name an uplink.
pub fn link_pattern(pcie_only: bool, internal: bool) -> String {
    let sep = "[ _-]*";
    let pcie_width = format!(r"(\s*{}\s*(1|2|4|8|16))?", any_case("x"));
    let pcie = format!(r"({}|{}){sep}[1-5](\.0)?{pcie_width}", any_case("pcie"), any_case("gen"));
    let dmi = format!(r"{}{sep}[1-4](\.0)?{pcie_width}", any_case("dmi"));
    let mut forms = vec![pcie, dmi];
    if !pcie_only {
        let sata_gens = [
            "1", "2", "3", "1.5g", "1.5gbps", "1.5gb/s", "150", "3g", "3gbps", "ii", "300", "6g", "6gbps", "iii", "600",
        ];
        let sata_gens: Vec<String> = sata_gens.iter().map(|g| any_case(&g.replace('.', r"\."))).collect();
        forms.push(format!(r"{}{sep}({})(\s*{}\s*1)?", any_case("sata"), sata_gens.join("|"), any_case("x")));
        let sas_gens: Vec<String> = ["1", "2", "3", "4", "3g", "6g", "12g", "22.5g", "24g"]
            .iter()
            .map(|g| any_case(&g.replace('.', r"\.")))
            .collect();
        forms.push(format!(r"{}{sep}({})(\s*{}\s*0*[1-9]\d*)?", any_case("sas"), sas_gens.join("|"), any_case("x")));
    }
    if internal || !pcie_only {
        forms.push(any_case("internal"));
    }
    format!(r"^\s*({})\s*$", forms.join("|"))
}

/// The link names an editor offers: every generation, with the usual widths.
fn link_names(pcie_only: bool, internal: bool) -> Vec<String> {
    let mut out = Vec::new();
    let widths = ["", "x1", "x2", "x4", "x8", "x16"];
    for g in 1..=5 {
        out.extend(widths.iter().map(|w| format!("pcie{g}{w}")));
    }
    for g in 1..=4 {
        out.extend(widths.iter().map(|w| format!("dmi{g}{w}")));
    }
    if !pcie_only {
        out.extend((1..=3).map(|g| format!("sata{g}")));
        for g in 1..=4 {
            out.extend(["", "x1", "x2", "x4", "x8"].iter().map(|w| format!("sas{g}{w}")));
        }
    }
    if internal || !pcie_only {
        out.push("internal".into());
    }
    out
}

fn link_schema(description: Option<&Value>, pcie_only: bool, internal: bool) -> Value {
    let mut s = json!({
        "type": "string",
        "anyOf": [
            { "enum": link_names(pcie_only, internal) },
            { "pattern": link_pattern(pcie_only, internal) },
        ],
    });
    if let Some(d) = description {
        s["description"] = d.clone();
    }
    s
}

/// The kinds a `[[node]]` part may be.
const NODE_KINDS: [Kind; 5] = [Kind::Switch, Kind::Controller, Kind::PortMultiplier, Kind::Expander, Kind::Nic];

/// Ids (and aliases) of the catalog's parts of these kinds, sorted.
fn part_ids(catalog: &Catalog, kinds: &[Kind]) -> Vec<String> {
    let mut ids: Vec<String> = catalog
        .parts()
        .filter(|p| kinds.contains(&p.kind))
        .flat_map(|p| std::iter::once(p.id.clone()).chain(p.aliases.iter().cloned()))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The schema of one figure's value in `params`, from its declaration in `FIGURES`.
fn figure_schema(spec: &FigureSpec) -> Value {
    let (lo, hi) = spec.range;
    let bound = |s: &mut Value| {
        if lo.is_finite() {
            s["minimum"] = json!(lo);
        }
        if hi.is_finite() {
            s["maximum"] = json!(hi);
        }
    };
    let mut s = match (spec.ty, spec.accepts) {
        (FigureType::Bool, _) => json!({ "type": "boolean" }),
        (FigureType::Num, Accepts::IntegerOf(of)) => json!({ "type": "integer", "enum": of }),
        (FigureType::Num, Accepts::Integer) => {
            let mut s = json!({ "type": "integer" });
            bound(&mut s);
            s
        }
        (FigureType::Num, _) => {
            let mut n = json!({ "type": "number" });
            bound(&mut n);
            if spec.name.ends_with("_mb_s") {
                // The loader reads a rate with its unit too (`params.rs`), e.g. "550MB/s".
                json!({ "anyOf": [n, { "type": "string", "pattern": rate_pattern() }] })
            } else {
                n
            }
        }
        (FigureType::Str, Accepts::OneOf(of)) => json!({ "type": "string", "enum": of }),
        (FigureType::Str, Accepts::Link { internal }) => link_schema(None, true, internal),
        (FigureType::Str, _) => json!({ "type": "string" }),
    };
    s["description"] = json!(sentence(spec.doc));
    s
}

/// A figure's doc as a sentence: capitalised, with its unit in words rather than brackets.
fn sentence(doc: &str) -> String {
    let doc = doc.replace(" [", ", in ").replace(']', "");
    let mut c = doc.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect::<String>() + ".",
        None => String::new(),
    }
}

/// `params` for a part of one kind: its figures, nothing else.
fn params_schema(kind: Kind) -> Value {
    let props: Map<String, Value> =
        FIGURES.iter().filter(|s| s.kind == kind).map(|s| (s.name.to_string(), figure_schema(s))).collect();
    json!({ "type": "object", "properties": props, "additionalProperties": false })
}

/// The topology schema for this catalog.
pub fn topology_schema(catalog: &Catalog) -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let root = generator.into_root_schema_for::<iopath_model::topology::RawTopology>();
    let mut v = serde_json::to_value(root).unwrap_or(Value::Null);
    refine_values(&mut v);
    refine_parts(&mut v, catalog);
    unwrap_lines(&mut v);
    v
}

/// Doc comments wrap at 100 columns; a hover reflows its text, so a description is one line,
/// and code spans lose their backticks (a hover shows them as written).
fn unwrap_lines(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    Value::String(s) if k == "description" => {
                        *s = s.split('\n').map(str::trim).collect::<Vec<_>>().join(" ").replace('`', "")
                    }
                    _ => unwrap_lines(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(unwrap_lines),
        _ => {}
    }
}

/// A property of a definition, for editing (`None` when the derive did not write it).
fn prop<'a>(v: &'a mut Value, def: &str, name: &str) -> Option<&'a mut Value> {
    v.get_mut("definitions")?.get_mut(def)?.get_mut("properties")?.get_mut(name)
}

/// Adds a pattern to a string (or list of strings) property, keeping its description.
fn add_pattern(v: &mut Value, def: &str, name: &str, pattern: &str, list: bool) {
    if let Some(p) = prop(v, def, name) {
        let target = if list { &mut p["items"] } else { p };
        target["pattern"] = json!(pattern);
    }
}

/// Patterns of sizes, durations, percentages and links; the port's two forms.
fn refine_values(v: &mut Value) {
    for (def, name) in [
        ("RawWorkload", "bs"),
        ("RawWorkload", "size"),
        ("RawPool", "chunk"),
        ("RawPool", "recordsize"),
        ("RawClient", "request"),
    ] {
        add_pattern(v, def, name, &size_pattern(), false);
    }
    for name in ["runtime", "ramp"] {
        add_pattern(v, "RawWorkload", name, &duration_pattern(), false);
    }
    for name in ["region", "fill"] {
        add_pattern(v, "RawWorkload", name, &percent_pattern(), false);
    }
    // Node and drive ids: letters, digits, '_' or '-' (`load/nodes.rs` check_id).
    for def in ["RawNode", "RawDrive"] {
        add_pattern(v, def, "id", "^[A-Za-z0-9_-]+$", false);
    }
    // `copy = ["SRC:DST"]`: two drive ids around one colon (`WorkloadSpec::resolve`).
    add_pattern(v, "RawWorkload", "copy", r"^[^:\s][^:]*:[^:\s][^:]*$", true);
    // A drive named twice is an error (`WorkloadSpec::resolve`).
    for name in ["drives", "failed"] {
        if let Some(p) = prop(v, "RawWorkload", name) {
            p["uniqueItems"] = json!(true);
        }
    }
    if let Some(w) = v.get_mut("definitions").and_then(|d| d.get_mut("RawWorkload")) {
        // Either active or drives (`WorkloadSpec::resolve`); a pool workload runs on the pool's
        // members, so it names no drives itself.
        w["allOf"] = json!([
            { "not": { "required": ["active", "drives"] } },
            { "if": { "required": ["pool"] }, "then": { "not": { "anyOf": [{ "required": ["active"] }, { "required": ["drives"] }, { "required": ["copy"] }] } } },
        ]);
    }
    // RawDrive's `params` carries no doc comment of its own (the macro's shared field).
    if let Some(p) = prop(v, "RawDrive", "params") {
        p["description"] = json!("Figures of the drive part to override, e.g. { rpm = 5400 } or { cache_mib = 256 }.");
    }
    let boards = board_ports();
    for def in ["RawNode", "RawDrive"] {
        if let Some(p) = prop(v, def, "link") {
            let d = p.get("description").cloned();
            *p = link_schema(d.as_ref(), false, false);
        }
        if let Some(p) = prop(v, def, "port") {
            // A port number, or on a board one of its named ports (`SATA3`, `M2_1`).
            let d = p.get("description").cloned().unwrap_or(Value::Null);
            *p = json!({
                "description": d,
                "anyOf": [{ "type": "integer", "minimum": 0 }, { "type": "string", "enum": boards }],
            });
        }
    }
}

/// Every named SATA port of the built-in boards (`port = "SATA3"` on a board).
fn board_ports() -> Vec<String> {
    let mut names: Vec<String> = iopath_model::board::builtin()
        .iter()
        .flat_map(|b| b.places())
        .filter(|p| matches!(p, iopath_model::board::Place::Sata(_)))
        .map(|p| p.name().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Part ids per kind and the figures each kind accepts in `params`.
fn refine_parts(v: &mut Value, catalog: &Catalog) {
    let mut boards: Vec<&str> = iopath_model::board::builtin()
        .iter()
        .flat_map(|b| std::iter::once(b.id.as_str()).chain(b.aliases.iter().map(String::as_str)))
        .collect();
    boards.sort();
    if let Some(p) = prop(v, "RawHost", "board") {
        p["enum"] = json!(boards);
    }
    // A figure name of any kind a table may hold fails unless it is one of them; the part's own
    // kind narrows it (below) when the part is one the schema knows.
    let union = |kinds: &[Kind]| -> Vec<&str> {
        let mut n: Vec<&str> = FIGURES.iter().filter(|s| kinds.contains(&s.kind)).map(|s| s.name).collect();
        n.sort();
        n.dedup();
        n
    };
    for (def, kinds) in [("RawHost", &[Kind::Host][..]), ("RawNode", &NODE_KINDS[..]), ("RawDrive", &[Kind::Drive][..])]
    {
        if let Some(p) = prop(v, def, "params") {
            p["propertyNames"] = json!({ "enum": union(kinds) });
            if let Some(o) = p.as_object_mut() {
                o.remove("additionalProperties");
            }
        }
        let by_kind: Vec<Value> = kinds
            .iter()
            .filter(|k| !part_ids(catalog, &[**k]).is_empty())
            .map(|k| {
                json!({
                    "if": { "properties": { "part": { "enum": part_ids(catalog, &[*k]) } }, "required": ["part"] },
                    "then": { "properties": { "params": params_schema(*k) } },
                })
            })
            .collect();
        let mut all = by_kind;
        if def == "RawDrive" {
            // One dev is one drive's: a table with count above 1 takes none (the loader's check).
            all.push(json!({ "if": { "required": ["count", "dev"] }, "then": { "properties": { "count": { "maximum": 1 } } } }));
        }
        if let Some(d) = v.get_mut("definitions").and_then(|d| d.get_mut(def)) {
            d["allOf"] = json!(all);
        }
    }
    // A file with its own [[part]] tables may name them: the catalog's ids are then not the
    // only ones, so the part enums apply to files without [[part]] tables.
    let items = |ids: Vec<String>| json!({ "items": { "properties": { "part": { "enum": ids } } } });
    v["if"] = json!({ "not": { "required": ["part"] } });
    v["then"] = json!({
        "properties": {
            "host": { "properties": { "part": { "enum": part_ids(catalog, &[Kind::Host]) } } },
            "node": items(part_ids(catalog, &NODE_KINDS)),
            "drive": items(part_ids(catalog, &[Kind::Drive])),
        }
    });
    if let Some(p) = v.get_mut("properties").and_then(|p| p.get_mut("part")) {
        *p = part_table_schema();
    }
    // A topology models drives: one [[drive]] at least (`load/diagnostics.rs`).
    v["required"] = json!(["drive"]);
    if let Some(p) = v.get_mut("properties").and_then(|p| p.get_mut("drive")) {
        p["minItems"] = json!(1);
    }
}

/// `[[part]]`: a part in the catalog's own form.
fn part_table_schema() -> Value {
    let kinds =
        [Kind::Host, Kind::Switch, Kind::Controller, Kind::PortMultiplier, Kind::Expander, Kind::Drive, Kind::Nic];
    // Each kind's figures, as in `params`, with each value's type and range.
    let by_kind: Vec<Value> = kinds
        .iter()
        .map(|k| {
            let figures: Map<String, Value> = FIGURES
                .iter()
                .filter(|s| s.kind == *k)
                .map(|s| (s.name.to_string(), json!({ "properties": { "value": figure_schema(s) } })))
                .collect();
            // The figures a part of this kind must state (`FigureSpec::required`).
            let required: Vec<&str> = FIGURES.iter().filter(|s| s.kind == *k && s.required).map(|s| s.name).collect();
            json!({
                "if": { "properties": { "kind": { "const": k.as_str() } }, "required": ["kind"] },
                "then": {
                    "required": ["figures"],
                    "properties": { "figures": { "properties": figures, "required": required, "additionalProperties": false } },
                },
            })
        })
        .collect();
    json!({
        "description": "Parts defined in this file, in the same form as the catalog (iopath discover writes unknown controllers and drives this way).",
        "type": "array",
        "items": {
            "type": "object",
            "description": "A part: its id, kind, name and figures, each figure with its value and source.",
            "required": ["id", "kind", "name"],
            "additionalProperties": false,
            "allOf": by_kind,
            "properties": {
                "id": { "type": "string", "description": "The part's id, named by a node's or drive's part." },
                "kind": { "type": "string", "enum": kinds.map(|k| k.as_str()), "description": "What the part is." },
                "name": { "type": "string", "description": "The product's name." },
                "aliases": { "type": "array", "items": { "type": "string" }, "description": "Other ids that name this part." },
                "pci_ids": { "type": "array", "items": { "type": "string", "pattern": "^[0-9a-f]{4}:[0-9a-f]{4}$" }, "description": "PCI vendor:device ids in lower-case hex, for iopath discover." },
                "notes": { "type": "string", "description": "Free text shown with the part." },
                "figures": {
                    "type": "object",
                    "description": "The part's figures, each a table with value, source and basis.",
                    "additionalProperties": {
                        "type": "object",
                        "required": ["value", "source"],
                        "additionalProperties": false,
                        "properties": {
                            "value": { "description": "The figure's value: a number, true or false, or a word." },
                            // At least 8 characters once trimmed (`Catalog::check_part`).
                            "source": { "type": "string", "pattern": r"^\s*\S.{6,}\S\s*$", "description": "Where the value comes from: a datasheet, a specification, a measurement, at least 8 characters." },
                            "basis": { "type": "string", "enum": ["datasheet", "spec", "measurement", "fit", "derived", "inferred"], "description": "How the value was found (default datasheet)." },
                        },
                    },
                },
            },
        },
    })
}
