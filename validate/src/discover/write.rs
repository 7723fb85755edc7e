//! Writing a discovery as a topology file, and fake sysfs trees for tests.

use super::{Discovered, PartRef};
use iopath_model::toml_out::{HostOut, NodeOut, TomlFile, TopologyFile, WriteError};
use std::io;
use std::path::Path;

/// Writes a discovery as topology TOML (with comments saying what was read), through the one
/// TOML writer ([`iopath_model::toml_out`]).
pub fn to_toml(d: &Discovered, hostname: &str) -> Result<String, WriteError> {
    let out = |id: &str, part: &PartRef, parent: &str, port: Option<u32>, link: &Option<String>| NodeOut {
        id: id.to_string(),
        part: part.id().to_string(),
        parent: parent.to_string(),
        port,
        link: link.clone(),
        dev: None,
    };
    let file = TopologyFile {
        name: format!("{hostname} (discovered)"),
        description: format!("{} drives found by iopath discover", d.drives.len()),
        source: "iopath discover (sysfs)".into(),
        host: HostOut { part: "generic-host".into() },
        node: d.nodes.iter().map(|n| out(&n.id, &n.part, &n.parent, n.port, &n.link)).collect(),
        drive: d
            .drives
            .iter()
            .map(|x| NodeOut { dev: Some(x.dev.clone()), ..out(&x.id, &x.part, &x.parent, x.port, &x.link) })
            .collect(),
        part: d.parts.clone(),
    };
    let mut header = vec![
        "Written by `iopath discover` from sysfs. Parts not in the catalog are defined at the".to_string(),
        "end of this file with what sysfs told; figures it cannot tell are marked inferred.".to_string(),
    ];
    header.extend(d.notes.iter().cloned());
    let mut w = TomlFile::new(&file, &header)?;
    for (i, n) in d.nodes.iter().enumerate() {
        w.comment("node", i, &n.comments);
    }
    for (i, x) in d.drives.iter().enumerate() {
        w.comment("drive", i, &x.comments);
    }
    Ok(w.finish())
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
