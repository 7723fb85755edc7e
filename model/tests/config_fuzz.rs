//! Config fuzz (issue #11): at least 2,000 mutated topology files, each loaded in-process
//! with [`Topology::parse_bytes`]. Checked for every one: no panic, and when it is rejected,
//! every diagnostic is located (file:line:column) and free of Rust debug text. The only
//! diagnostics without a position are the two about the file as a whole (it is empty, or it
//! declares no drive), and those are counted apart.
//!
//! Mutants start from every file in `configs/` and `tests/bad-configs/`, with one to three
//! mutations: a value replaced by a wrong one (types, ranges, link names, words of
//! enumerations, NaN, huge numbers), a `params = { FIGURE = VALUE }` line with a figure of
//! any kind, a `[[part]]` with a random figure, bytes that are not UTF-8, a deeply nested
//! header, lines deleted, duplicated or swapped, and the text cut short.
//!
//! The RNG is ChaCha8 with a fixed seed, so a failure reproduces; the case number is printed.
//! A wall-time budget stops generation early on a slow machine, and the test then asserts the
//! minimum was still reached. `cargo test -p iopath-model --test config_fuzz -- --nocapture`
//! prints the tally.

use iopath_model::catalog::FIGURES;
use iopath_model::{Catalog, Topology};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::{Duration, Instant};

const SEED: u64 = 0x11_2026;
const MIN_CASES: usize = 2_000;
const MAX_CASES: usize = 4_000;
const BUDGET: Duration = Duration::from_secs(60);

/// Values that are wrong somewhere: types, ranges, link names, enumeration words, units.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2.5",
    "3",
    "7",
    "300",
    "4096",
    "4097",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "\"\"",
    "\"x\"",
    "\"bogus\"",
    "\"tape\"",
    "\"sas3\"",
    "\"sata1\"",
    "\"pcie9\"",
    "\"pcie3x-1\"",
    "\"pcie3x3\"",
    "\"pcie3x2\"",
    "\"dmi4\"",
    "\"internal\"",
    "\"none\"",
    "\"fbs\"",
    "\"ssd\"",
    "\"nvme\"",
    "\"550MB/s\"",
    "\"50\"",
    "\"0.5\"",
    "\"50%\"",
    "\"1..6\"",
    "[\"d\", \"d\"]",
    "[]",
    "{}",
    "{ value = 5 }",
    "1979-05-27",
    "9223372036854775807",
    "-9223372036854775808",
    "\"host\"",
    "\"hba\"",
    "\"asm1166\"",
];

/// Every file of `configs/` then of `tests/bad-configs/`, and how many are from `configs/`.
fn files() -> (Vec<(String, Vec<u8>)>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut v = Vec::new();
    let mut shipped = 0;
    for dir in ["configs", "tests/bad-configs"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for p in paths {
            v.push((p.file_name().unwrap().to_string_lossy().to_string(), std::fs::read(&p).unwrap()));
        }
        if dir == "configs" {
            shipped = v.len();
        }
    }
    assert!(v.len() > 50 && shipped >= 5, "configs/ and tests/bad-configs/ should hold the corpus");
    (v, shipped)
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.random_range(0..xs.len())]
}

/// One mutation of the file's bytes.
fn mutate(rng: &mut ChaCha8Rng, bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes).to_string();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let value_lines: Vec<usize> =
        (0..n).filter(|&i| lines[i].contains('=') && !lines[i].trim_start().starts_with('#')).collect();
    let join = |l: &[String]| (l.join("\n") + "\n").into_bytes();
    match rng.random_range(0..10) {
        0 | 1 if !value_lines.is_empty() => {
            let i = *pick(rng, &value_lines);
            let key = lines[i].split('=').next().unwrap_or_default().to_string();
            lines[i] = format!("{key}= {}", pick(rng, VALUES));
            join(&lines)
        }
        2 | 3 => {
            // A figure of any kind on a node or drive, with any value.
            let tables: Vec<usize> =
                (0..n).filter(|&i| lines[i].trim() == "[[node]]" || lines[i].trim() == "[[drive]]").collect();
            let at = if tables.is_empty() { n } else { *pick(rng, &tables) + 1 };
            let f = pick(rng, FIGURES);
            lines.insert(at.min(lines.len()), format!("params = {{ {} = {} }}", f.name, pick(rng, VALUES)));
            join(&lines)
        }
        4 => {
            let f = pick(rng, FIGURES);
            let value = pick(rng, VALUES);
            lines.push(format!(
                "[[part]]\nid = \"fz\"\nkind = \"{}\"\nname = \"fuzz part\"\nfigures.{} = {{ value = {value}, source = \"datasheet page 1\" }}",
                f.kind, f.name
            ));
            join(&lines)
        }
        5 => {
            // Bytes that are not UTF-8, anywhere.
            let mut b = bytes.to_vec();
            let at = rng.random_range(0..=b.len());
            const BAD: &[&[u8]] = &[&[0xff], &[0xe9], &[0xc3], &[0xed, 0xa0, 0x80], &[0xf8, 0x88]];
            let bad: &[u8] = BAD[rng.random_range(0..BAD.len())];
            b.splice(at..at, bad.iter().copied());
            b
        }
        6 => {
            let depth = rng.random_range(50..400);
            let at = rng.random_range(0..=n);
            let head = if rng.random_bool(0.5) {
                format!("[{}]", vec!["a"; depth].join("."))
            } else {
                format!("x = {}1{}", "[".repeat(depth), "]".repeat(depth))
            };
            lines.insert(at, head);
            join(&lines)
        }
        7 => {
            let i = rng.random_range(0..n);
            if rng.random_bool(0.5) {
                lines.remove(i);
            } else {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            join(&lines)
        }
        8 => {
            let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
            lines.swap(a, b);
            join(&lines)
        }
        _ => {
            let mut b = bytes.to_vec();
            b.truncate(rng.random_range(0..=b.len()));
            b
        }
    }
}

/// Diagnostics about the file as a whole, which have no one place to point at.
fn whole_file(message: &str) -> bool {
    message.contains("the file is empty")
        || message.contains("the file has a name but no")
        || message.contains("the topology has no drives")
}

#[test]
fn mutated_configs_never_panic_and_every_error_is_located() {
    let (corpus, shipped) = files();
    let catalog = Catalog::builtin();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let start = Instant::now();
    let (mut cases, mut loaded, mut rejected, mut diagnostics, mut whole) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut failures: Vec<String> = Vec::new();
    while cases < MAX_CASES && (cases < MIN_CASES || start.elapsed() < BUDGET) && start.elapsed() < 3 * BUDGET {
        // Two in three from configs/ (they load before mutation), the rest from the corpus.
        let (name, bytes) =
            if rng.random_bool(0.67) { &corpus[rng.random_range(0..shipped)] } else { pick(&mut rng, &corpus) };
        let mut b = bytes.clone();
        for _ in 0..rng.random_range(1..=3) {
            b = mutate(&mut rng, &b);
        }
        cases += 1;
        match catch_unwind(AssertUnwindSafe(|| Topology::parse_bytes(name, &b, &catalog))) {
            Err(_) => failures
                .push(format!("case {cases} ({name}): the loader panicked on:\n{}", String::from_utf8_lossy(&b))),
            Ok(Ok(_)) => loaded += 1,
            Ok(Err(e)) => {
                rejected += 1;
                if e.diagnostics.is_empty() {
                    failures.push(format!("case {cases} ({name}): an error without a diagnostic"));
                }
                for d in &e.diagnostics {
                    diagnostics += 1;
                    let shown = d.to_string();
                    if d.line == 0 {
                        if whole_file(&d.message) {
                            whole += 1;
                        } else if failures.len() < 20 {
                            failures.push(format!("case {cases} ({name}): not located: {shown}"));
                        } else {
                            failures.push(String::new());
                        }
                    }
                    if ["Num(", "Str(", "Bool(", "Some(", "Integer(", "Float("].iter().any(|t| shown.contains(t)) {
                        failures.push(format!("case {cases} ({name}): Rust debug text: {shown}"));
                    }
                }
            }
        }
    }
    let unlocated = failures.iter().filter(|f| f.is_empty() || f.contains("not located")).count();
    println!(
        "config fuzz (seed {SEED:#x}): {cases} cases in {:.1} s: {loaded} loaded, {rejected} rejected with \
         {diagnostics} diagnostics ({whole} about the whole file); panics {}, unlocated {unlocated}",
        start.elapsed().as_secs_f64(),
        failures.iter().filter(|f| f.contains("panicked")).count(),
    );
    assert!(cases >= MIN_CASES, "only {cases} cases in the time budget; make each case cheaper");
    let shown: Vec<&String> = failures.iter().filter(|f| !f.is_empty()).take(20).collect();
    assert!(
        failures.is_empty(),
        "{} failures, the first ones:\n{}",
        failures.len(),
        shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    );
}
