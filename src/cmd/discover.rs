//! `iopath discover`: write this machine's storage topology as a topology file that
//! `iopath check` loads. Unknown parts are defined in the file with what sysfs told.

use super::{CliError, CliResult, print_text};
use iopath_model::{Catalog, Topology};
use iopath_validate::discover::{DiscoverError, DiscoverOptions, discover, hostname, to_toml};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct DiscoverArgs {
    /// Root of the sysfs tree to read (tests use fake trees)
    #[arg(long, value_name = "DIR", default_value = "/sys")]
    pub sysfs_root: PathBuf,
    /// Write the topology to FILE instead of stdout (atomically; a device node, FIFO or
    /// symbolic link there is refused)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also list virtual block devices (loop, dm, md, zram)
    #[arg(long)]
    pub all: bool,
}

pub fn run(a: DiscoverArgs, catalog: &Catalog) -> CliResult {
    if let Some(p) = &a.out {
        super::output::check_file("--out", p)?;
    }
    let mut d = discover(&a.sysfs_root, catalog, &DiscoverOptions { include_virtual: a.all }).map_err(|e| {
        let hint = match &e {
            DiscoverError::NoBlockClass { .. } => "give the sysfs root with --sysfs-root (default /sys)",
        };
        CliError::reworded(&e, format!("{e} ({hint})"))
    })?;
    // The library lists what it left out; the option that brings it in is the CLI's to name.
    if !d.skipped_virtual.is_empty() {
        d.notes.push(format!("{} virtual devices skipped; --all lists them", d.skipped_virtual.len()));
    }
    let host = hostname().unwrap_or_else(|| "this machine".into());
    let text = to_toml(&d, &host).map_err(CliError::runtime)?;
    // What we write must load; if it does not, that is our bug: say so and keep the text.
    let name = a.out.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "discovered topology".into());
    if let Err(e) = Topology::parse(&name, &text, catalog) {
        eprintln!(
            "warning: the discovered topology does not load yet:\n{e}\n(please report this with the output of `ls -lR /sys/class/block`)"
        );
    }
    if d.drives.is_empty() {
        eprintln!("warning: no drives found under {}/class/block", a.sysfs_root.display());
    }
    match &a.out {
        Some(p) => super::output::write_file("--out", p, text.as_bytes())?,
        None => print_text(&text)?,
    }
    Ok(0)
}
