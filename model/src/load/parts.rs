//! Pass 1: `[[part]]` tables of the file join the catalog, and part names resolve against it.

use crate::catalog::{Catalog, CatalogError, Kind, Part, check_value, did_you_mean, figure_names, figure_spec};
use crate::load::params::param_type_help;
use crate::topology::{Sink, known};
use toml::Spanned;

/// Adds the file's `[[part]]` tables to the catalog, reporting each broken one at the
/// figure, kind or id it is about.
pub(crate) fn load_parts(sink: &mut Sink, cat: &mut Catalog, parts: &[Part]) {
    if parts.is_empty() {
        return;
    }
    let positions = crate::catalog::part_positions(sink.text);
    for (i, p) in parts.iter().enumerate() {
        let pos = positions.get(i);
        // Every figure's value by its kind, each at its own position, all reported at once.
        let mut found_here = Vec::new();
        for (k, f) in &p.figures {
            let Some(spec) = figure_spec(p.kind, k) else {
                continue;
            };
            if let Err(m) = check_value(spec, &f.value) {
                let at = pos.and_then(|pp| pp.figures.iter().find(|(pk, _)| pk.get_ref() == k));
                let span = at.and_then(|(pk, v)| v.get_ref().value.as_ref().and_then(known).or_else(|| known(pk)));
                found_here.push((span, format!("part[{i}].figures.{k}"), format!("part {:?}: {m}", p.id), spec));
            }
        }
        // In file order.
        found_here.sort_by_key(|(span, ..)| span.as_ref().map_or(usize::MAX, |s| s.start));
        let bad = !found_here.is_empty();
        for (span, key, message, spec) in found_here {
            sink.at(span, key, message, Some(param_type_help(spec)));
        }
        if bad {
            sink.broken_parts.insert(p.id.to_ascii_lowercase());
            continue;
        }
        let t = crate::toml_out::part_file(std::slice::from_ref(p), &[]).unwrap_or_default();
        let Err(e) = cat.overlay(sink.file, &t) else {
            continue;
        };
        // The error's own text without the file name, which the diagnostic already shows.
        let message = match e {
            CatalogError::Parse { message, .. } | CatalogError::Part { message, .. } => message,
        };
        let figure = pos.and_then(|pp| {
            pp.figures.keys().find(|k| {
                message.contains(&format!("figure {:?}", k.get_ref()))
                    || message.starts_with(&format!("{} ", k.get_ref()))
            })
        });
        let (span, key, help) = match figure {
            Some(k) => (
                known(k),
                format!("part[{i}].figures.{}", k.get_ref()),
                if message.contains("unknown figure") {
                    format!(
                        "a {} has the figures: {}",
                        p.kind,
                        figure_names(p.kind).collect::<Vec<_>>().join(", ")
                    )
                } else {
                    format!(
                        "write it as figures.{} = {{ value = ..., source = \"where the number comes from\", basis = \"datasheet\" }}",
                        k.get_ref()
                    )
                },
            ),
            None if message.contains("in the catalog, not a") => (
                pos.and_then(|pp| pp.kind.as_ref()).and_then(known),
                format!("part[{i}].kind"),
                "a [[part]] with a catalog id changes that part's figures and keeps its kind; use a new id for a new part".to_string(),
            ),
            None => (
                pos.and_then(|pp| pp.id.as_ref()).and_then(known),
                format!("part[{i}].id"),
                "see `iopath catalog` for complete parts of each kind to copy from".to_string(),
            ),
        };
        sink.at(span, key, format!("part {:?}: {message}", p.id), Some(help));
        sink.broken_parts.insert(p.id.to_ascii_lowercase());
    }
}

pub(crate) fn resolve_part(
    sink: &mut Sink,
    cat: &Catalog,
    name: &Spanned<String>,
    key: &str,
    kinds: &[Kind],
) -> Option<Part> {
    let n = name.get_ref();
    let span = if name.span().end > 0 { Some(name.span()) } else { None };
    match cat.get(n) {
        // A [[part]] of this file that was rejected, and reported where it is written.
        None if sink.broken_parts.contains(&n.trim().to_ascii_lowercase()) => None,
        Some(p) if kinds.contains(&p.kind) => Some(p.clone()),
        Some(p) => {
            let want: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            sink.at(
                span,
                key,
                format!("part {n:?} is a {}, but a {} is expected here", p.kind, want.join(" or ")),
                Some(match p.kind {
                    Kind::Drive => "drives go in [[drive]] tables".to_string(),
                    _ => "switches, controllers, port multipliers and expanders go in [[node]] tables".to_string(),
                }),
            );
            None
        }
        None => {
            let mut s = Vec::new();
            for k in kinds {
                s.extend(cat.suggest(n, Some(*k)));
            }
            sink.at(
                span,
                key,
                format!("unknown part {n:?}{}", did_you_mean(&s)),
                Some(
                    "`iopath catalog` lists the built-in parts; a [[part]] table in this file can define a new one"
                        .into(),
                ),
            );
            None
        }
    }
}
