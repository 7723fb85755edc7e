//! The one writer of the TOML files iopath hands to users: part files (`iopath fit`,
//! `iopath measure --cpu`, the `[[part]]` a loader message shows) and topologies
//! (`iopath discover`).
//!
//! A file is a serde mirror type serialised into a `toml_edit` document, then given the house
//! style, so every file reads like the hand-written catalog:
//!
//! - a part's figures are dotted keys with inline tables, the documented form
//!   `figures.NAME = { value = .., source = "..", basis = ".." }`, one line each;
//! - a whole number is written without a fraction (`value = 4`, not `4.0`): a catalog
//!   number accepts either, and a reader sees the datasheet's figure;
//! - arrays of tables (`[[part]]`, `[[node]]`, `[[drive]]`) are separated by a blank line,
//!   and may carry comment lines of their own ([`TomlFile::comment`]).
//!
//! What is written loads back with `--parts` or as a topology with the same figures (the
//! round-trip tests below and in the callers).

use crate::catalog::Part;
use serde::Serialize;
use toml_edit::{DocumentMut, Item, Table, Value};

/// Why a file could not be written: a mirror type that TOML cannot hold (a bug, not bad
/// input: every mirror type here is plain tables, strings, numbers and arrays).
#[derive(Debug, thiserror::Error)]
#[error("cannot write TOML: {0}")]
pub struct WriteError(#[from] toml_edit::ser::Error);

/// A part file: the `[[part]]` tables `--parts` loads over the catalog.
#[derive(Debug, Serialize)]
pub struct PartFile<'a> {
    pub part: &'a [Part],
}

/// A topology as `iopath discover` writes it: the host, nodes, drives and the parts the
/// catalog does not have. Empty or absent fields are left out, as a person would write it.
#[derive(Debug, Default, Serialize)]
pub struct TopologyFile {
    pub name: String,
    pub description: String,
    pub source: String,
    pub host: HostOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node: Vec<NodeOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drive: Vec<NodeOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub part: Vec<Part>,
}

/// `[host]`: the host's catalog part.
#[derive(Debug, Default, Serialize)]
pub struct HostOut {
    pub part: String,
}

/// A `[[node]]` or `[[drive]]` table (`dev` is a drive's block device).
#[derive(Debug, Default, Serialize)]
pub struct NodeOut {
    pub id: String,
    pub part: String,
    pub parent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dev: Option<String>,
}

/// A document being written: a serialised mirror type in the house style, plus comments.
pub struct TomlFile {
    header: Vec<String>,
    doc: DocumentMut,
}

impl TomlFile {
    /// `value` serialised and styled; `header` lines become the file's leading comments.
    pub fn new<T: Serialize>(value: &T, header: &[String]) -> Result<TomlFile, WriteError> {
        let mut doc = toml_edit::ser::to_document(value)?;
        style_table(doc.as_table_mut(), false);
        Ok(TomlFile { header: header.to_vec(), doc })
    }

    /// Comment lines (each may hold several lines) just above element `index` of the array
    /// of tables `array` (`node` 2: the third `[[node]]`); nothing when there is no such
    /// element.
    pub fn comment(&mut self, array: &str, index: usize, lines: &[String]) {
        let Some(t) = self.doc.get_mut(array).and_then(Item::as_array_of_tables_mut).and_then(|a| a.get_mut(index))
        else {
            return;
        };
        t.decor_mut().set_prefix(format!("\n{}", comment_block(lines)));
    }

    /// The file's text.
    pub fn finish(self) -> String {
        let body = self.doc.to_string();
        let head = comment_block(&self.header);
        let sep = if head.is_empty() { "" } else { "\n" };
        format!("{head}{sep}{}", body.trim_start_matches('\n'))
            .replacen("\n\n\n", "\n\n", usize::MAX)
            .trim_end()
            .to_string()
            + "\n"
    }
}

/// `parts` as a part file with `header` comment lines.
pub fn part_file(parts: &[Part], header: &[String]) -> Result<String, WriteError> {
    Ok(TomlFile::new(&PartFile { part: parts }, header)?.finish())
}

fn comment_block(lines: &[String]) -> String {
    let mut s = String::new();
    for l in lines {
        for part in l.lines() {
            s.push_str(if part.is_empty() { "#" } else { "# " });
            s.push_str(part);
            s.push('\n');
        }
    }
    s
}

/// The serialiser writes every table inline; this gives `t` the file layout: a table of
/// tables becomes a `[table]`, an array of tables `[[array]]` (each set off by a blank line
/// when `in_array`), a `figures` table dotted keys with one inline table per figure; whole
/// floats become integers.
fn style_table(t: &mut Table, in_array: bool) {
    if in_array {
        t.decor_mut().set_prefix("\n");
    }
    for (key, item) in t.iter_mut() {
        let figures = key.get() == "figures";
        let taken = std::mem::take(item);
        *item = match taken {
            Item::Value(Value::InlineTable(inline)) if figures => {
                let mut sub = Table::new();
                sub.set_dotted(true);
                for (k, mut v) in inline {
                    style_value(&mut v);
                    if let Value::InlineTable(f) = &mut v {
                        f.fmt();
                    }
                    sub.insert(&k, Item::Value(v));
                }
                Item::Table(sub)
            }
            Item::Value(Value::InlineTable(inline)) => {
                let mut sub = inline.into_table();
                style_table(&mut sub, false);
                Item::Table(sub)
            }
            Item::Value(Value::Array(a)) if !a.is_empty() && a.iter().all(Value::is_inline_table) => {
                let mut tables = toml_edit::ArrayOfTables::new();
                for v in a {
                    if let Value::InlineTable(inline) = v {
                        let mut sub = inline.into_table();
                        style_table(&mut sub, true);
                        tables.push(sub);
                    }
                }
                Item::ArrayOfTables(tables)
            }
            Item::Value(mut v) => {
                style_value(&mut v);
                Item::Value(v)
            }
            Item::Table(mut sub) => {
                style_table(&mut sub, false);
                Item::Table(sub)
            }
            Item::ArrayOfTables(mut a) => {
                a.iter_mut().for_each(|x| style_table(x, true));
                Item::ArrayOfTables(a)
            }
            Item::None => Item::None,
        };
    }
}

fn style_value(v: &mut Value) {
    match v {
        Value::Float(f) => {
            let x = *f.value();
            if x.fract() == 0.0 && x.abs() < 1e15 {
                *v = Value::from(x as i64);
            }
        }
        Value::InlineTable(t) => t.iter_mut().for_each(|(_, v)| style_value(v)),
        Value::Array(a) => a.iter_mut().for_each(style_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;
    use crate::catalog::{Figure, Kind, Value as FigValue};

    fn fig(v: FigValue, source: &str, basis: &str) -> Figure {
        Figure { value: v, source: source.into(), basis: basis.into() }
    }

    fn part() -> Part {
        let mut p = Part {
            id: "my-hba".into(),
            kind: Kind::Controller,
            name: "My \"quoted\" HBA".into(),
            aliases: Vec::new(),
            pci_ids: vec!["1000:0087".into()],
            notes: String::new(),
            figures: Default::default(),
        };
        p.figures.insert("ports".into(), fig(FigValue::Num(8.0), "LSI SAS2308 datasheet, p. 1", "datasheet"));
        p.figures.insert("max_iops".into(), fig(FigValue::Num(312_500.5), "iopath fit: a.json, 4 points", "fit"));
        p.figures.insert("uplink".into(), fig(FigValue::Str("pcie3".into()), "sysfs: 8.0 GT/s", "measurement"));
        p.figures.insert("lanes".into(), fig(FigValue::Num(8.0), "sysfs: current_link_width 8", "measurement"));
        p.figures.insert("sata_gen".into(), fig(FigValue::Num(3.0), "LSI SAS2308 datasheet", "datasheet"));
        p.figures.insert("pm_support".into(), fig(FigValue::Str("none".into()), "LSI SAS2308 datasheet", "datasheet"));
        p
    }

    #[test]
    fn figures_are_the_documented_inline_tables() {
        let text = part_file(&[part()], &["Written by a test.".into()]).unwrap();
        assert!(text.starts_with("# Written by a test.\n\n[[part]]\n"), "{text}");
        // One line per figure, in the catalog's form; 8.0 is written as the datasheet's 8.
        assert!(
            text.contains(
                "figures.ports = { value = 8, source = \"LSI SAS2308 datasheet, p. 1\", basis = \"datasheet\" }\n"
            ),
            "{text}"
        );
        assert!(text.contains("figures.max_iops = { value = 312500.5, "), "{text}");
        assert!(
            text.contains("name = 'My \"quoted\" HBA'") || text.contains(r#"name = "My \"quoted\" HBA""#),
            "{text}"
        );
        // Empty aliases and notes are not written.
        assert!(!text.contains("aliases") && !text.contains("notes"), "{text}");
    }

    #[test]
    fn a_part_file_loads_back_with_the_same_figures() {
        let p = part();
        let text = part_file(std::slice::from_ref(&p), &[]).unwrap();
        let mut cat = Catalog::builtin();
        cat.overlay("parts.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let back = cat.get("my-hba").unwrap();
        assert_eq!(back.figures, p.figures, "{text}");
        assert_eq!((back.name.as_str(), back.kind, &back.pci_ids), (p.name.as_str(), p.kind, &p.pci_ids));
    }

    #[test]
    fn a_topology_file_loads_back_as_written() {
        let mut f = TopologyFile {
            name: "box (discovered)".into(),
            description: "2 drives".into(),
            source: "a test".into(),
            host: HostOut { part: "generic-host".into() },
            ..Default::default()
        };
        f.node.push(NodeOut { id: "hba0".into(), part: "my-hba".into(), parent: "host".into(), ..Default::default() });
        for (i, port) in [(0, 0), (1, 5)] {
            f.drive.push(NodeOut {
                id: format!("sd{i}"),
                part: "samsung-870evo-1tb".into(),
                parent: "hba0".into(),
                port: Some(port),
                dev: Some(format!("/dev/sd{i}")),
                ..Default::default()
            });
        }
        f.part.push(part());
        let mut w = TomlFile::new(&f, &["line one\nline two".into()]).unwrap();
        w.comment("drive", 1, &["the second drive".into()]);
        let text = w.finish();
        assert!(text.starts_with("# line one\n# line two\n\nname = "), "{text}");
        assert!(text.contains("\n\n# the second drive\n[[drive]]\nid = \"sd1\"\n"), "{text}");
        assert!(!text.contains("\n\n\n"), "one blank line between tables:\n{text}");
        let t = crate::Topology::parse("discovered", &text, &Catalog::builtin())
            .unwrap_or_else(|e| panic!("{e}\n---\n{text}"));
        assert_eq!(t.drives.len(), 2);
        let sd1 = &t.nodes[t.drives[1]];
        assert_eq!((sd1.id.as_str(), sd1.port), ("sd1", Some(5)), "{text}");
    }
}
