//! Writing a discovery as a topology file, and fake sysfs trees for tests.

use super::Discovered;
use iopath_model::catalog::Value;
use std::io;
use std::path::Path;

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn value_toml(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Num(n) => {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{}", *n as i64)
            } else {
                format!("{n}")
            }
        }
        Value::Str(s) => q(s),
    }
}

fn comment_lines(out: &mut String, lines: &[String]) {
    for l in lines {
        for part in l.lines() {
            out.push_str("# ");
            out.push_str(part);
            out.push('\n');
        }
    }
}

/// Writes a discovery as topology TOML (with comments saying what was read).
pub fn to_toml(d: &Discovered, hostname: &str) -> String {
    let mut s = String::new();
    s += "# Written by `iopath discover` from sysfs. Parts not in the catalog are defined at the\n";
    s += "# end of this file with what sysfs told; figures it cannot tell are marked inferred.\n";
    comment_lines(&mut s, &d.notes);
    s += &format!("name = {}\n", q(&format!("{hostname} (discovered)")));
    s += &format!("description = {}\n", q(&format!("{} drives found by iopath discover", d.drives.len())));
    s += "source = \"iopath discover (sysfs)\"\n\n[host]\npart = \"generic-host\"\n";
    for n in &d.nodes {
        s += "\n";
        comment_lines(&mut s, &n.comments);
        s += "[[node]]\n";
        s += &format!("id = {}\npart = {}\nparent = {}\n", q(&n.id), q(n.part.id()), q(&n.parent));
        if let Some(p) = n.port {
            s += &format!("port = {p}\n");
        }
        if let Some(l) = &n.link {
            s += &format!("link = {}\n", q(l));
        }
    }
    for dr in &d.drives {
        s += "\n";
        comment_lines(&mut s, &dr.comments);
        s += "[[drive]]\n";
        s += &format!("id = {}\npart = {}\nparent = {}\n", q(&dr.id), q(dr.part.id()), q(&dr.parent));
        if let Some(p) = dr.port {
            s += &format!("port = {p}\n");
        }
        if let Some(l) = &dr.link {
            s += &format!("link = {}\n", q(l));
        }
        s += &format!("dev = {}\n", q(&dr.dev));
    }
    for p in &d.parts {
        s += "\n[[part]]\n";
        s += &format!("id = {}\nkind = {}\nname = {}\n", q(&p.id), q(p.kind.as_str()), q(&p.name));
        if !p.pci_ids.is_empty() {
            let ids: Vec<String> = p.pci_ids.iter().map(|i| q(i)).collect();
            s += &format!("pci_ids = [{}]\n", ids.join(", "));
        }
        if !p.notes.is_empty() {
            s += &format!("notes = {}\n", q(&p.notes));
        }
        for (k, f) in &p.figures {
            s += &format!(
                "figures.{k} = {{ value = {}, source = {}, basis = {} }}\n",
                value_toml(&f.value),
                q(&f.source),
                q(&f.basis)
            );
        }
    }
    s
}

/// Builds a fake sysfs tree from a manifest, one entry a line:
/// `d PATH` a directory, `f PATH CONTENT...` a file (content is the rest of the line plus a
/// newline), `x PATH HEX` a binary file, `l PATH TARGET` a symlink. `#` starts a comment.
pub fn materialise_manifest(manifest: &str, root: &Path) -> io::Result<()> {
    for (i, line) in manifest.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let mut it = line.splitn(3, ' ');
        let (op, path, rest) = (it.next().unwrap_or(""), it.next().unwrap_or(""), it.next().unwrap_or(""));
        let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("manifest line {}: {line:?}", i + 1));
        if path.is_empty() || path.starts_with('/') || path.contains("..") && op != "l" {
            return Err(bad());
        }
        let p = root.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match op {
            "d" => std::fs::create_dir_all(&p)?,
            "f" => std::fs::write(&p, format!("{rest}\n"))?,
            "x" => {
                let hex: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
                let bytes: Result<Vec<u8>, _> =
                    (0..hex.len() / 2).map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16)).collect();
                std::fs::write(&p, bytes.map_err(|_| bad())?)?;
            }
            "l" => {
                if rest.is_empty() {
                    return Err(bad());
                }
                let _ = std::fs::remove_file(&p);
                std::os::unix::fs::symlink(rest, &p)?;
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}
