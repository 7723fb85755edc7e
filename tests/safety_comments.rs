//! Every `unsafe` block and `unsafe impl` in the workspace says why it is sound: a
//! `// SAFETY:` comment on one of the three lines above it (or on its own line).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

/// Whether the code part of a line (before any `//`) opens an unsafe block or impl.
fn opens_unsafe(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    code.match_indices("unsafe").any(|(i, _)| {
        let before_ok = code[..i].chars().last().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        let rest = code[i + "unsafe".len()..].trim_start();
        before_ok && (rest.starts_with('{') || rest.starts_with("impl "))
    })
}

#[test]
fn every_unsafe_block_has_a_safety_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["src", "model", "sim", "validate", "reports", "test-support", "tests", "benches"] {
        if root.join(d).is_dir() {
            rust_files(&root.join(d), &mut files);
        }
    }
    assert!(files.len() > 20, "found only {} Rust files under {}", files.len(), root.display());
    let (mut blocks, mut missing) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if !opens_unsafe(l) {
                continue;
            }
            blocks += 1;
            if !lines[i.saturating_sub(3)..=i].iter().any(|l| l.contains("SAFETY:")) {
                missing.push(format!("{}:{}: {}", f.strip_prefix(root).unwrap().display(), i + 1, l.trim()));
            }
        }
    }
    // The scan itself must see the unsafe code there is (validate's libc and io_uring calls).
    assert!(blocks >= 20, "found only {blocks} unsafe blocks: the scan is broken");
    assert!(missing.is_empty(), "unsafe without a `// SAFETY:` line:\n{}", missing.join("\n"));
}

#[test]
fn the_scan_sees_blocks_and_impls_but_not_fn_pointer_types() {
    // Built at run time, so this file's own text holds no unsafe block for the scan.
    let u = "unsafe";
    assert!(opens_unsafe(&format!("    let r = {u} {{ libc::geteuid() }};")));
    assert!(opens_unsafe(&format!("{u} impl Send for AlignedBuf {{}}")));
    assert!(!opens_unsafe(&format!("    new_probe: {u} extern \"C\" fn() -> Probe,")));
    assert!(!opens_unsafe(&format!("    // {u} {{ in a comment }}")));
    assert!(!opens_unsafe(&format!("    let not_{u} = 1;")));
}
