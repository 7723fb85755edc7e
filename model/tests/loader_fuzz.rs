//! Property tests: `Topology::parse` never panics, whatever text it is given.
//!
//! Inputs are random strings (arbitrary Unicode, and strings over TOML's punctuation, which
//! reach deeper into the parser), and mutations of every file in `configs/`: bytes deleted,
//! inserted or replaced, lines deleted, duplicated or swapped, and values after `=` replaced
//! by values of the wrong type, out of range, or of another kind of part. A panic fails the
//! test. Any outcome other than a panic is fine: most mutants are rejected, some still load.
//!
//! The runner uses a fixed seed so a failure reproduces; 300 cases per property keep the
//! whole file to a few seconds in the test profile.

use iopath_model::{Catalog, Topology};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::OnceLock;

const CASES: u32 = 300;

/// Every config shipped in `configs/`, as (file name, text).
fn configs() -> &'static [(String, String)] {
    static CELL: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CELL.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        v.sort();
        assert!(v.len() >= 5, "configs/ should hold the shipped topologies");
        v
    })
}

/// Parses and turns a panic into a test failure that shows the input.
fn must_not_panic(name: &str, text: &str) -> Result<(), TestCaseError> {
    let catalog = Catalog::builtin();
    match catch_unwind(AssertUnwindSafe(|| Topology::parse(name, text, &catalog).map(|_| ()))) {
        Ok(_) => Ok(()),
        Err(_) => Err(TestCaseError::fail(format!("Topology::parse panicked on {name}:\n{text}"))),
    }
}

fn runner() -> TestRunner {
    TestRunner::new_with_rng(
        Config { cases: CASES, failure_persistence: None, ..Config::default() },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

/// Values that are wrong in some way for some key: types, ranges, units, part kinds.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "7",
    "4096",
    "4097",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "-0.0",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "true",
    "\"\"",
    "\"x\"",
    "\"host\"",
    "\"hba\"",
    "\"pm\"",
    "\"550\"",
    "\"550MB/s\"",
    "\"-5MB/s\"",
    "\"1e400GB/s\"",
    "\"sata0\"",
    "\"pcie3x0\"",
    "\"pcie9x99\"",
    "\"dmi4x\"",
    "\"sas3x4\"",
    "\"internal\"",
    "\"asm1166\"",
    "\"jmb575\"",
    "\"broadcom-sas3x28\"",
    "\"samsung-990pro-2tb\"",
    "\"seagate-exos-x18-sas\"",
    "\"amd-b550\"",
    "[]",
    "[1, \"a\"]",
    "{}",
    "{ fbs = \"yes\" }",
    "{ seq_read_mb_s = \"1kb/s\" }",
    "1979-05-27",
];

#[derive(Debug, Clone)]
enum Mutation {
    DeleteBytes { at: usize, len: usize },
    InsertBytes { at: usize, bytes: Vec<u8> },
    ReplaceByte { at: usize, byte: u8 },
    DeleteLine { line: usize },
    DuplicateLine { line: usize },
    SwapLines { a: usize, b: usize },
    ReplaceValue { line: usize, value: usize },
    SwapValues { a: usize, b: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let ix = any::<usize>();
    prop_oneof![
        (ix, 1usize..16).prop_map(|(at, len)| Mutation::DeleteBytes { at, len }),
        (ix, prop::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Mutation::InsertBytes { at, bytes }),
        (ix, prop::sample::select(b"[]{}=\"'#\n,.-0 x".to_vec()))
            .prop_map(|(at, byte)| Mutation::ReplaceByte { at, byte }),
        ix.prop_map(|line| Mutation::DeleteLine { line }),
        ix.prop_map(|line| Mutation::DuplicateLine { line }),
        (ix, ix).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        (ix, 0..VALUES.len()).prop_map(|(line, value)| Mutation::ReplaceValue { line, value }),
        (ix, ix).prop_map(|(a, b)| Mutation::SwapValues { a, b }),
    ]
}

/// Lines of the form `key = value` (the ones a value mutation can touch).
fn value_lines(lines: &[String]) -> Vec<usize> {
    (0..lines.len()).filter(|&i| !lines[i].trim_start().starts_with('#') && lines[i].contains('=')).collect()
}

fn apply(text: &str, m: &Mutation) -> String {
    let bytes = text.as_bytes();
    let n = bytes.len().max(1);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let nl = lines.len().max(1);
    let join = |lines: Vec<String>| lines.join("\n") + "\n";
    match m {
        Mutation::DeleteBytes { at, len } => {
            let s = at % n;
            let e = (s + len).min(bytes.len());
            let mut b = bytes.to_vec();
            if s < e {
                b.drain(s..e);
            }
            String::from_utf8_lossy(&b).into_owned()
        }
        Mutation::InsertBytes { at, bytes: ins } => {
            let mut b = bytes.to_vec();
            let s = at % (b.len() + 1);
            b.splice(s..s, ins.iter().copied());
            String::from_utf8_lossy(&b).into_owned()
        }
        Mutation::ReplaceByte { at, byte } => {
            let mut b = bytes.to_vec();
            if !b.is_empty() {
                let s = at % b.len();
                b[s] = *byte;
            }
            String::from_utf8_lossy(&b).into_owned()
        }
        Mutation::DeleteLine { line } => {
            if !lines.is_empty() {
                lines.remove(line % nl);
            }
            join(lines)
        }
        Mutation::DuplicateLine { line } => {
            if !lines.is_empty() {
                let l = lines[line % nl].clone();
                lines.insert(line % nl, l);
            }
            join(lines)
        }
        Mutation::SwapLines { a, b } => {
            if !lines.is_empty() {
                lines.swap(a % nl, b % nl);
            }
            join(lines)
        }
        Mutation::ReplaceValue { line, value } => {
            let vl = value_lines(&lines);
            if !vl.is_empty() {
                let i = vl[line % vl.len()];
                let key = lines[i].split('=').next().unwrap_or_default().to_string();
                lines[i] = format!("{key}= {}", VALUES[*value]);
            }
            join(lines)
        }
        Mutation::SwapValues { a, b } => {
            let vl = value_lines(&lines);
            if !vl.is_empty() {
                let (i, j) = (vl[a % vl.len()], vl[b % vl.len()]);
                let split = |s: &str| {
                    let (k, v) = s.split_once('=').unwrap_or((s, ""));
                    (k.to_string(), v.to_string())
                };
                let ((ki, vi), (kj, vj)) = (split(&lines[i]), split(&lines[j]));
                lines[i] = format!("{ki}={vj}");
                lines[j] = format!("{kj}={vi}");
            }
            join(lines)
        }
    }
}

#[test]
fn random_unicode_strings_never_panic() {
    runner().run(&any::<String>(), |s| must_not_panic("random.toml", &s)).unwrap();
}

#[test]
fn random_toml_like_strings_never_panic() {
    // Keys, brackets, quotes, equals signs and newlines: text that gets past the first byte.
    let strategy = "(\\[\\[?(node|drive|host|part|workload\\.x)\\]\\]?\n|(id|part|parent|port|count|link|params|rw|bs|iodepth|name) = (\"[a-z0-9 ./-]{0,12}\"|-?[0-9]{1,20}|true|\\{ ?[a-z_]{1,12} = [0-9\"a-z]{1,6} ?\\}|\\[\\])\n|[#=\\[\\]{}\" \n,.a-z0-9-]{0,8}){0,24}";
    runner().run(&strategy, |s| must_not_panic("toml-like.toml", &s)).unwrap();
}

#[test]
fn mutated_configs_never_panic() {
    let files = configs();
    let strategy = (0..files.len(), prop::collection::vec(mutation(), 1..4));
    runner()
        .run(&strategy, |(f, ms)| {
            let (name, text) = &files[f];
            let mut t = text.clone();
            for m in &ms {
                t = apply(&t, m);
            }
            must_not_panic(name, &t)
        })
        .unwrap();
}

#[test]
fn every_value_in_every_config_position_never_panics() {
    // Exhaustive over the small files: each `key = value` line with each wrong value.
    for (name, text) in configs().iter().filter(|(_, t)| t.len() < 4000) {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (k, _) in value_lines(&lines).iter().enumerate() {
            for v in 0..VALUES.len() {
                let t = apply(text, &Mutation::ReplaceValue { line: k, value: v });
                if let Err(e) = must_not_panic(name, &t) {
                    panic!("{e}");
                }
            }
        }
    }
}
