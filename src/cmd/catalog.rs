//! `iopath catalog [PART]`: list the built-in parts, or one part with every figure and source.
use super::{CliError, CliResult, print_json, print_text};
use iopath_model::Catalog;
use iopath_model::catalog::{Kind, did_you_mean};
use std::fmt::Write;

#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// A part or board id or alias (e.g. asm1166, msi-meg-b550-unify); omit to list all parts.
    pub part: Option<String>,
    /// Only parts of this kind: link, host, switch, controller, port_multiplier, expander, drive,
    /// nic, or board (the boards of catalog/boards.toml).
    #[arg(long)]
    pub kind: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: CatalogArgs, cat: &Catalog) -> CliResult {
    if let Some(id) = &a.part {
        if cat.get(id).is_none()
            && let Some(b) = iopath_model::board::find(id)
        {
            if a.json {
                print_json(b)?;
            } else {
                print_text(&super::board::show(b))?;
            }
            return Ok(0);
        }
        let Some(p) = cat.get(id) else {
            let mut s = cat.suggest(id, None);
            s.extend(iopath_model::catalog::suggest(id, iopath_model::board::builtin().iter().map(|b| b.id.as_str())));
            return Err(CliError::usage(anyhow::anyhow!(
                "unknown part {id:?}{}; `iopath catalog` lists them",
                did_you_mean(&s)
            )));
        };
        if a.json {
            print_json(p)?;
            return Ok(0);
        }
        let mut s = String::new();
        let _ = writeln!(s, "{} ({}): {}", p.id, p.kind, p.name);
        if !p.aliases.is_empty() {
            let _ = writeln!(s, "aliases: {}", p.aliases.join(", "));
        }
        if !p.pci_ids.is_empty() {
            let _ = writeln!(s, "pci ids: {}", p.pci_ids.join(", "));
        }
        if !p.notes.is_empty() {
            let _ = writeln!(s, "notes: {}", p.notes);
        }
        // The figures the part states, then those it takes from the catalog's defaults.
        let defaults = iopath_model::parts::part_defaults(p);
        let w = p.figures.keys().chain(defaults.keys()).map(|k| k.len()).max().unwrap_or(0);
        for (k, f) in &p.figures {
            let _ = writeln!(s, "  {k:<w$}  {:<10} [{}] {}", f.value.to_string(), f.basis, f.source);
        }
        if !defaults.is_empty() {
            let _ = writeln!(s, "defaults (figures this part does not state):");
            for (k, f) in &defaults {
                let _ = writeln!(s, "  {k:<w$}  {:<10} [{}] {}", f.value.to_string(), f.basis, f.source);
            }
        }
        print_text(&s)?;
        return Ok(0);
    }
    if a.kind.as_deref() == Some("board") {
        let boards = iopath_model::board::builtin();
        if a.json {
            print_json(&boards)?;
            return Ok(0);
        }
        let mut s = String::from("board:\n");
        for b in boards {
            let _ = writeln!(s, "  {:<34} {}", b.id, b.name);
        }
        print_text(&s)?;
        return Ok(0);
    }
    let kind: Option<Kind> = match &a.kind {
        None => None,
        Some(k) => Some(serde_json::from_value(serde_json::Value::String(k.clone())).map_err(|_| {
            CliError::usage(anyhow::anyhow!(
                "--kind {k:?}: expected link, host, switch, controller, port_multiplier, expander, drive, nic or board"
            ))
        })?),
    };
    let parts: Vec<_> = cat.parts().filter(|p| kind.is_none_or(|k| p.kind == k)).collect();
    if a.json {
        print_json(&parts)?;
        return Ok(0);
    }
    let mut s = String::new();
    let mut by_kind: Vec<_> = parts.clone();
    by_kind.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
    let mut last = None;
    for p in by_kind {
        if last != Some(p.kind) {
            let _ = writeln!(s, "{}:", p.kind);
            last = Some(p.kind);
        }
        let _ = writeln!(s, "  {:<26} {}", p.id, p.name);
    }
    print_text(&s)?;
    Ok(0)
}
