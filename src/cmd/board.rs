//! `iopath catalog BOARD`: a board's slots, M.2 sockets, SATA ports, onboard devices, sharing
//! rules and bifurcation options, each with its source.
use iopath_model::board::{Board, Place};
use std::fmt::Write;

/// The board as text, every element with its source.
pub fn show(b: &Board) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} (board): {}", b.id, b.name);
    if !b.aliases.is_empty() {
        let _ = writeln!(s, "aliases: {}", b.aliases.join(", "));
    }
    let _ = writeln!(s, "host: {} (unless [host] part says otherwise)", b.host);
    let _ = writeln!(s, "source: {}", b.source);
    if !b.notes.is_empty() {
        let _ = writeln!(s, "notes: {}", b.notes);
    }
    if let Some(c) = &b.chipset {
        let _ = writeln!(s, "chipset: {} (node \"chipset\")  [{}] {}", c.part, c.basis, c.source);
    }
    section(&mut s, "slots", b.slots.iter().map(|x| (Place::Slot(x.name.clone()), &x.basis, &x.source)), b);
    section(&mut s, "M.2 sockets", b.m2.iter().map(|x| (Place::M2(x.name.clone()), &x.basis, &x.source)), b);
    if !b.sata.is_empty() {
        let _ = writeln!(s, "SATA ports:");
        for g in &b.sata {
            let _ = writeln!(s, "  {} on {}  [{}] {}", g.ports.join(", "), g.controller, g.basis, g.source);
        }
    }
    if !b.onboard.is_empty() {
        let _ = writeln!(s, "onboard devices (nodes):");
        for o in &b.onboard {
            let link = o.link.as_ref().map(|l| format!(", {l}")).unwrap_or_default();
            let params = if o.params.is_empty() {
                String::new()
            } else {
                let p: Vec<String> = o.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!(", {}", p.join(", "))
            };
            let _ = writeln!(
                s,
                "  {} [{}] on the {}{link}{params}  [{}] {}",
                o.id,
                o.part,
                o.attach.as_str(),
                o.basis,
                o.source
            );
        }
    }
    if !b.bifurcation.is_empty() {
        let _ = writeln!(s, "bifurcation:");
        for x in &b.bifurcation {
            let _ = writeln!(s, "  {}: {}  {}", x.slot, x.modes.join(", "), x.source);
        }
    }
    if !b.bios.is_empty() {
        let _ = writeln!(s, "BIOS lane modes ([host] bios = \"ID\"; default: as above):");
        for m in &b.bios {
            let places: Vec<String> = m
                .places
                .iter()
                .map(|r| {
                    let mut w = Vec::new();
                    if let Some(g) = r.generation {
                        w.push(format!("PCIe {g}.0"));
                    }
                    if let Some(l) = r.lanes {
                        w.push(format!("x{l}"));
                    }
                    if let Some(a) = r.attach {
                        w.push(format!("from the {}", a.as_str()));
                    }
                    format!("{} {}", r.place, w.join(" "))
                })
                .collect();
            let _ = writeln!(s, "  {}: {}", m.id, places.join("; "));
            let _ = writeln!(s, "      setting: {}", m.setting);
            let _ = writeln!(s, "      source: {}", m.source);
        }
    }
    if !b.rules.is_empty() {
        let _ = writeln!(s, "sharing rules:");
        for r in &b.rules {
            let mode = r.mode.map(|m| format!(" ({m:?} device)").to_lowercase()).unwrap_or_default();
            let mut effect = Vec::new();
            if !r.disables.is_empty() {
                effect.push(format!("disables {}", r.disables.join(", ")));
            }
            if let Some(n) = &r.narrows {
                effect.push(format!("{} runs x{}", n.place, n.lanes));
            }
            let only = r.bios.as_ref().map(|m| format!(" [BIOS mode {m} only]")).unwrap_or_default();
            let _ = writeln!(s, "  {}: {} populated{mode} -> {}{only}", r.id, r.when.join(" and "), effect.join("; "));
            let _ = writeln!(s, "      manual: {}", r.manual);
            let _ = writeln!(s, "      source: {}", r.source);
        }
    }
    s
}

fn section<'a>(s: &mut String, title: &str, items: impl Iterator<Item = (Place, &'a String, &'a String)>, b: &Board) {
    let items: Vec<_> = items.collect();
    if items.is_empty() {
        return;
    }
    let _ = writeln!(s, "{title}:");
    for (p, basis, source) in items {
        let _ = writeln!(s, "  {}  [{basis}] {source}", b.describe(&p));
    }
}
