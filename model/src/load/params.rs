//! Pass 4: figure overrides (`params = {}` in the file, `--set` and `--vary` from the caller)
//! are type- and range-checked and applied, then every node's figures resolve into typed ones.

use super::Draft;
use crate::catalog::{
    Accepts, Figure, FigureSpec, FigureType, Value, check_together, check_value, did_you_mean, expectation,
    figure_names, figure_spec, suggest,
};
use crate::topology::{ParamOverride, Sink, found, known};
use crate::units::parse_rate;
use std::ops::Range;
use toml::Spanned;

/// Overrides from the command line become params of their nodes; their problems are
/// reported against the origin that gave them (the CLI's `--set hba.uplink=bogus: ...`).
/// `origins[i]` is how override `i` was written.
pub(crate) fn command_line(sink: &mut Sink, d: &mut Draft, overrides: &[ParamOverride], origins: &[String]) {
    let Draft { nodes, params_of, given_as, .. } = d;
    for (i, o) in overrides.iter().enumerate() {
        let label = origins.get(i).cloned().unwrap_or_else(|| o.label());
        match nodes.iter().position(|n| n.id == o.node) {
            Some(ix) => {
                // A figure that is a word takes the text as written (`--set hba.uplink=3`
                // is the word "3", refused as a link name, not the number 3).
                let wants_text = figure_spec(nodes[ix].kind, &o.param).is_some_and(|s| s.ty == FigureType::Str);
                let v = match &o.value {
                    v if wants_text => toml::Value::String(v.to_string()),
                    Value::Bool(b) => toml::Value::Boolean(*b),
                    Value::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => toml::Value::Integer(*n as i64),
                    Value::Num(n) => toml::Value::Float(*n),
                    Value::Str(s) => toml::Value::String(s.clone()),
                };
                params_of[ix].insert(Spanned::new(0..0, o.param.clone()), Spanned::new(0..0, v));
                given_as.insert((ix, o.param.clone()), label);
            }
            None => {
                let s = suggest(&o.node, nodes.iter().map(|n| n.id.as_str()));
                sink.cli(
                    &label,
                    format!("no node or drive has id {:?}{}", o.node, did_you_mean(&s)),
                    Some("ids are listed by `iopath check`".into()),
                );
            }
        }
    }
}

/// Applies every node's params over its part's figures, checks the figures that must agree,
/// and resolves the typed figures ([`crate::parts::resolve`]).
pub(crate) fn apply(sink: &mut Sink, d: &mut Draft, file: &str) {
    let Draft { nodes, params_of, part_span_of, key_of, given_as, .. } = d;
    for ix in 0..nodes.len() {
        let kind = nodes[ix].kind;
        let prm = params_of[ix].clone();
        for (k, v) in &prm {
            let cli = given_as.get(&(ix, k.get_ref().clone()));
            // A problem of a value from the command line is reported against its option.
            let report = |sink: &mut Sink, span: Option<Range<usize>>, key: String, m: String, h: String| match cli {
                Some(label) => sink.cli(label, m, Some(h)),
                None => sink.at(span, key, m, Some(h)),
            };
            let key = format!("{}.params.{}", key_of[ix], k.get_ref());
            let span = known(v);
            let Some(spec) = figure_spec(kind, k.get_ref()) else {
                let s = suggest(k.get_ref(), figure_names(kind));
                report(
                    sink,
                    known(k),
                    key,
                    format!("{:?} is not a figure of a {}{}", k.get_ref(), kind, did_you_mean(&s)),
                    format!("a {} accepts: {}", kind, figure_names(kind).collect::<Vec<_>>().join(", ")),
                );
                continue;
            };
            let value = match (spec.ty, v.get_ref()) {
                (FigureType::Num, toml::Value::Integer(i)) => Value::Num(*i as f64),
                (FigureType::Num, toml::Value::Float(f)) => Value::Num(*f),
                (FigureType::Num, toml::Value::String(s)) if spec.name.ends_with("_mb_s") => match parse_rate(s) {
                    Ok(r) => Value::Num(r.mb_s()),
                    Err(e) => {
                        report(
                            sink,
                            span,
                            key,
                            e.to_string(),
                            format!("write a rate with its unit, e.g. {} = \"550MB/s\"", spec.name),
                        );
                        continue;
                    }
                },
                (FigureType::Bool, toml::Value::Boolean(b)) => Value::Bool(*b),
                (FigureType::Str, toml::Value::String(s)) => Value::Str(s.clone()),
                (_, other) => {
                    report(
                        sink,
                        span,
                        key,
                        format!("expected {} ({}), found {}", expectation(spec), spec.doc, found(other)),
                        param_type_help(spec),
                    );
                    continue;
                }
            };
            if let Err(m) = check_value(spec, &value) {
                report(sink, span, key, m, param_type_help(spec));
                continue;
            }
            // A value from outside the file has the origin its caller gave as its source
            // (the CLI's `--set hba.mps=256`).
            let source = match (span.is_some(), cli) {
                (false, Some(label)) => label.clone(),
                _ => format!("{file}: params of {}", nodes[ix].id),
            };
            nodes[ix].figures.insert(spec.name.to_string(), Figure { value, source, basis: "measurement".into() });
        }
        // Figures that must agree (a SATA drive's generation is 1 to 3), at the param
        // that made them disagree, else at the part.
        if let Err((fig, m)) = check_together(kind, &nodes[ix].figures) {
            let help = Some(
                "SATA generations are 1 to 3 (1.5, 3, 6 Gb/s), SAS 1 to 4, NVMe the PCIe generation 1 to 5".to_string(),
            );
            let from_params = ["interface", fig]
                .iter()
                .find_map(|f| prm.iter().find(|(k, _)| k.get_ref() == f).map(|(k, v)| (k.get_ref().clone(), v)));
            match from_params {
                Some((k, _)) if given_as.contains_key(&(ix, k.clone())) => {
                    sink.cli(&given_as[&(ix, k)], m, help);
                }
                Some((k, v)) => sink.at(known(v), format!("{}.params.{k}", key_of[ix]), m, help),
                None => sink.at(
                    part_span_of[ix].clone(),
                    format!("{}.part", key_of[ix]),
                    format!("part {:?}: {m}", nodes[ix].part),
                    help,
                ),
            }
        }
        // The typed figures, every one the part does not state from its default.
        match crate::parts::resolve(kind, &nodes[ix].figures) {
            Ok(r) => {
                nodes[ix].spec = r.spec;
                nodes[ix].defaults = r.defaults;
            }
            Err(missing) => sink.at(
                part_span_of[ix].clone(),
                format!("{}.part", key_of[ix]),
                format!("part {:?} lacks the figures {}", nodes[ix].part, missing.join(", ")),
                Some("state them in the part; `iopath catalog` shows complete parts of each kind".into()),
            ),
        }
    }
}

/// The help for a param of the wrong type or value: what the figure is and how to write it.
pub(crate) fn param_type_help(spec: &FigureSpec) -> String {
    let n = spec.name;
    let how = match spec.accepts {
        Accepts::Number if n.ends_with("_mb_s") => {
            format!("{}, or a rate with its unit such as {n} = \"550MB/s\"", expectation(spec))
        }
        Accepts::Number | Accepts::Integer => {
            format!("{} without quotes, e.g. {n} = {}", expectation(spec), spec.range.0)
        }
        Accepts::IntegerOf(of) => format!("{} without quotes, e.g. {n} = {}", expectation(spec), of[0]),
        Accepts::Flag => format!("true or false without quotes, e.g. {n} = false"),
        Accepts::Link { .. } => format!("{} in quotes, e.g. {n} = \"pcie3\"", expectation(spec)),
        Accepts::OneOf(of) => format!("{} in quotes, e.g. {n} = \"{}\"", expectation(spec), of[0]),
    };
    format!("{n} is {}; write {how}", spec.doc)
}
