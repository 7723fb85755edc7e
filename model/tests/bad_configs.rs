//! The bad-input corpus: every `tests/bad-configs/*.toml` is a small topology with exactly
//! one kind of mistake. Its first line is `# expect: TEXT`, a piece of the message the loader
//! must give; a `# at: LINE:COL` line, when present, is where the first diagnostic must point.
//!
//! Guarantees checked here: the loader rejects every file (it returns `Err`, it never panics),
//! some diagnostic's `Display` contains the expected text, and the first diagnostic's position
//! is the expected one. A mistake the loader does not catch yet is an open issue, not a file
//! here: every file in the corpus is run.

use iopath_model::{Catalog, Topology};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bad-configs")
}

/// The `.toml` files in `dir`, sorted by name. Anything else there (a subdirectory of
/// cases, a file with another extension) would be a case that is never run: refused.
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    let strays: Vec<&PathBuf> =
        v.iter().filter(|p| !p.is_file() || p.extension().is_none_or(|x| x != "toml")).collect();
    assert!(strays.is_empty(), "the corpus holds entries the test would not run: {strays:?}");
    v.sort();
    v
}

/// What a corpus file's header asks for.
struct Expectation {
    text: String,
    at: Option<(usize, usize)>,
}

/// Reads `# expect:` (first line) and an optional `# at: LINE:COL` from the header.
fn expectation(name: &str, text: &str) -> Expectation {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let expect = first
        .strip_prefix("# expect:")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("{name}: the first line must be `# expect: <message text>`"));
    let mut at = None;
    for line in lines.take_while(|l| l.starts_with('#')) {
        if let Some(pos) = line.strip_prefix("# at:") {
            let (l, c) =
                pos.trim().split_once(':').unwrap_or_else(|| panic!("{name}: `# at:` must be LINE:COL, found {pos:?}"));
            let parse = |s: &str| {
                s.trim().parse::<usize>().unwrap_or_else(|_| panic!("{name}: `# at:` must be LINE:COL, found {pos:?}"))
            };
            at = Some((parse(l), parse(c)));
        }
    }
    Expectation { text: expect.to_string(), at }
}

/// Parses under `catch_unwind`, so a panic is reported as a failure of that file.
fn parse_no_panic(name: &str, text: &str) -> Result<Result<(), Vec<String>>, String> {
    let catalog = Catalog::builtin();
    catch_unwind(AssertUnwindSafe(|| Topology::parse(name, text, &catalog)))
        .map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".to_string())
        })
        .map(|r| r.map(|_| ()).map_err(|e| diagnostics(&e)))
}

fn diagnostics(e: &iopath_model::topology::ConfigError) -> Vec<String> {
    e.diagnostics.iter().map(|d| d.to_string()).collect()
}

#[test]
fn every_bad_config_is_rejected_with_its_message_and_position() {
    let files = toml_files(&corpus_dir());
    assert!(files.len() >= 35, "the corpus should hold at least 35 files, found {}", files.len());
    let catalog = Catalog::builtin();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Bytes, not text: a file that is not UTF-8 is one of the mistakes.
        let bytes = std::fs::read(path).unwrap();
        let want = expectation(&name, &String::from_utf8_lossy(&bytes));
        let result = catch_unwind(AssertUnwindSafe(|| Topology::parse_bytes(&name, &bytes, &catalog)));
        let err = match result {
            Err(_) => {
                failures.push(format!("{name}: the loader panicked"));
                continue;
            }
            Ok(Ok(_)) => {
                failures.push(format!("{name}: loaded, but should fail with {:?}", want.text));
                continue;
            }
            Ok(Err(e)) => e,
        };
        assert!(!err.diagnostics.is_empty(), "{name}: an Err must carry at least one diagnostic");
        let shown = diagnostics(&err);
        if !shown.iter().any(|d| d.contains(&want.text)) {
            failures.push(format!(
                "{name}: no diagnostic contains {:?}; got:\n    {}",
                want.text,
                shown.join("\n    ")
            ));
        }
        if let Some((line, col)) = want.at {
            let d = &err.diagnostics[0];
            if (d.line, d.column) != (line, col) {
                failures.push(format!(
                    "{name}: first diagnostic at {}:{}, expected {line}:{col}: {}",
                    d.line, d.column, shown[0]
                ));
            }
        }
        for d in &err.diagnostics {
            if d.file != name {
                failures.push(format!("{name}: a diagnostic names file {:?}", d.file));
            }
            // Every problem in a file is located, and shown without Rust debug text.
            if d.line == 0 && !d.message.contains("no drives") && !d.message.contains("the file") {
                failures.push(format!("{name}: a diagnostic has no position: {d}"));
            }
            if ["Num(", "Str(", "Bool(", "Some(", "Pcie", "Sata "].iter().any(|t| d.to_string().contains(t)) {
                failures.push(format!("{name}: a diagnostic shows Rust debug text: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn empty_and_comment_only_texts_are_errors_not_panics() {
    for text in ["", "\n", "  \n\t\n", "# only a comment\n", "\u{feff}"] {
        match parse_no_panic("empty.toml", text) {
            Err(p) => panic!("{text:?}: the loader panicked: {p}"),
            Ok(Ok(())) => panic!("{text:?}: an empty topology loaded"),
            Ok(Err(d)) => assert!(!d.is_empty()),
        }
    }
}
