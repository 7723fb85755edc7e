//! Shell completion: the values of `--rw`, part ids and workload names, on top of clap's own
//! completion of subcommands and options.
//!
//! Two ways in. `iopath completions SHELL` prints clap_complete's static script, which knows
//! the fixed values (`--rw`, `--kind`). `source <(COMPLETE=bash iopath)` registers the
//! dynamic completer (clap_complete's `CompleteEnv`, the `unstable-dynamic` feature of the
//! pinned 4.6): the shell then asks `iopath` itself for each word, so part ids come from the
//! catalog and workload names from the topology file already on the command line.
//!
//! The completers are attached here, to a copy of the command, rather than on the argument
//! definitions, so the options' parsing stays where it is.

use clap::CommandFactory;
use clap::builder::PossibleValuesParser;
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use iopath_model::Catalog;
use iopath_model::catalog::Kind;
use std::ffi::OsStr;

/// fio's `rw` values that the loader reads (`Rw::from_str`), with what each does.
pub const RW_VALUES: &[(&str, &str)] = &[
    ("read", "sequential reads"),
    ("write", "sequential writes"),
    ("randread", "random reads"),
    ("randwrite", "random writes"),
    ("rw", "sequential mixed reads and writes (rwmixread)"),
    ("readwrite", "the same as rw"),
    ("randrw", "random mixed reads and writes (rwmixread)"),
];

/// The kinds `catalog --kind` takes.
const KINDS: &[&str] =
    &["link", "host", "switch", "controller", "port_multiplier", "expander", "drive", "nic", "board"];

/// The CLI's command with value completers on the arguments that name things.
pub fn command() -> clap::Command {
    let mut c = super::Cli::command();
    let names: Vec<String> = c.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in names {
        c = c.mut_subcommand(&name, |mut s| {
            let has = |s: &clap::Command, id: &str| s.get_arguments().any(|a| a.get_id() == id);
            if has(&s, "rw") {
                s = s.mut_arg("rw", |a| {
                    a.value_parser(PossibleValuesParser::new(
                        RW_VALUES.iter().map(|(v, h)| clap::builder::PossibleValue::new(*v).help(*h)),
                    ))
                });
            }
            if has(&s, "workload") {
                s = s.mut_arg("workload", |a| a.add(ArgValueCompleter::new(workload_names)));
            }
            if has(&s, "part") {
                let kinds: &'static [Kind] = if name == "measure" { &[Kind::Host] } else { &[] };
                s = s.mut_arg("part", move |a| a.add(ArgValueCompleter::new(move |cur: &OsStr| part_ids(cur, kinds))));
            }
            if has(&s, "onboard") {
                s = s.mut_arg("onboard", |a| {
                    a.add(ArgValueCompleter::new(|cur: &OsStr| part_ids(cur, &[Kind::Controller])))
                });
            }
            if has(&s, "kind") {
                s = s.mut_arg("kind", |a| a.value_parser(PossibleValuesParser::new(KINDS.iter().copied())));
            }
            s
        });
    }
    c
}

/// Answers the shell when it asks (`COMPLETE=bash` and the words after `--`); returns
/// otherwise.
pub fn complete_if_asked() {
    clap_complete::CompleteEnv::with_factory(command).complete();
}

/// Catalog part ids (and aliases) starting with what is typed; every kind when `kinds` is
/// empty. Parts of `--parts FILE` on the command line are included.
fn part_ids(current: &OsStr, kinds: &[Kind]) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy().to_ascii_lowercase();
    let words = shell_words();
    let parts: Vec<std::path::PathBuf> =
        words.windows(2).filter(|w| w[0] == "--parts").map(|w| std::path::PathBuf::from(&w[1])).collect();
    let catalog = super::load_catalog(&parts).unwrap_or_else(|_| Catalog::builtin());
    let mut out: Vec<CompletionCandidate> = catalog
        .parts()
        .filter(|p| kinds.is_empty() || kinds.contains(&p.kind))
        .filter(|p| p.id.starts_with(&typed))
        .map(|p| CompletionCandidate::new(&p.id).help(Some(p.name.clone().into())))
        .collect();
    out.sort_by(|a, b| a.get_value().cmp(b.get_value()));
    out
}

/// The workload names of the topology file on the command line (the first word ending in
/// `.toml` that reads as TOML), starting with what is typed. A file with errors elsewhere still
/// offers its workload tables: only the TOML has to read.
fn workload_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    let Some(text) =
        shell_words().iter().filter(|w| w.ends_with(".toml")).find_map(|w| std::fs::read_to_string(w).ok())
    else {
        return Vec::new();
    };
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let Some(toml::Value::Table(w)) = doc.get("workload") else {
        return Vec::new();
    };
    w.keys().filter(|k| k.starts_with(typed.as_ref())).map(CompletionCandidate::new).collect()
}

/// The words the shell is completing: what follows `--` in iopath's own arguments.
fn shell_words() -> Vec<String> {
    std::env::args().skip_while(|a| a != "--").skip(1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn every_rw_value_offered_is_one_the_loader_reads() {
        for (v, _) in RW_VALUES {
            assert!(iopath_model::Rw::from_str(v).is_ok(), "{v}");
        }
        assert!(iopath_model::Rw::from_str("randomread").is_err());
    }

    #[test]
    fn the_completion_command_is_consistent() {
        // clap checks a command's definition in debug builds: ids, value parsers, conflicts.
        command().debug_assert();
    }
}
