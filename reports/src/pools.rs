//! `check`'s pool section (rows and text): each `[[pool]]` with its members, capacity and options, the
//! closed-form bound of sequential reads and writes on it, and of every topology workload
//! that names it (a scrub's or rebuild's time included).
use iopath_model::Topology;
use iopath_model::paths::ResourceGraph;
use iopath_model::pool::Pool;
use iopath_model::pool::bound::{PoolBound, pool_bound};
use iopath_model::workload::{Rw, Workload};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One pool as `check` shows it (and `check --json` writes it).
#[derive(Debug, Serialize)]
pub struct PoolJson {
    /// The pool's id.
    pub id: String,
    /// Its layout's name (`raidz2`).
    pub layout: &'static str,
    /// Member drive ids per vdev.
    pub vdevs: Vec<Vec<String>>,
    /// Bytes users can store.
    pub usable_bytes: u64,
    /// Raw bytes of members beyond the smallest of their vdev (unused by the layout).
    pub lost_bytes: u64,
    /// The layout's options in effect (chunk, recordsize, checksum, ...).
    pub options: BTreeMap<&'static str, String>,
    /// Sequential read and write at check's block size, one job, all it can do.
    pub bound: Vec<PoolBound>,
    /// The topology's workloads that name this pool.
    pub workloads: BTreeMap<String, PoolBound>,
}

fn options(p: &Pool) -> BTreeMap<&'static str, String> {
    use iopath_model::pool::{Family, Layout};
    let mut o = BTreeMap::new();
    let b = |v: u64| iopath_model::units::Bytes::new(v).to_string();
    match p.layout.family() {
        Family::Md if p.layout != Layout::Mirror => {
            o.insert("chunk", b(p.chunk));
            // Shown where the file sets it: md's default (256) is what every md pool has.
            if p.stripe_cache != iopath_model::pool::MD_DEFAULT_STRIPE_CACHE {
                o.insert("stripe_cache_size", p.stripe_cache.to_string());
            }
        }
        Family::Btrfs => {
            o.insert("stripe element", b(p.chunk));
        }
        Family::Zfs => {
            o.insert("recordsize", b(p.recordsize));
            o.insert("ashift", p.ashift.to_string());
        }
        Family::Unraid => {
            o.insert("parity", p.parity.to_string());
            o.insert("write_mode", format!("{:?}", p.write_mode).to_lowercase());
        }
        _ => {}
    }
    let k = |k: Option<iopath_model::cpu::Kernel>| {
        k.map_or("off".to_string(), |k| {
            serde_json::to_value(k).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
        })
    };
    if matches!(p.layout.family(), Family::Zfs | Family::Btrfs) {
        o.insert("checksum", k(p.checksum));
        o.insert("compression", k(p.compression));
    }
    if p.layout.family() == Family::Zfs {
        o.insert("encryption", k(p.encryption));
    }
    o
}

/// Every pool of the topology with its bounds.
pub fn pools_json(t: &Topology, g: &ResourceGraph, bs: u64) -> Vec<PoolJson> {
    t.pools
        .iter()
        .map(|p| {
            let bound = [Rw::Read, Rw::Write]
                .into_iter()
                .map(|rw| {
                    pool_bound(
                        t,
                        g,
                        p,
                        &Workload {
                            rw,
                            bs: iopath_model::units::Bytes::new(bs),
                            pool: Some(p.id.clone()),
                            ..Default::default()
                        },
                        &[],
                    )
                })
                .collect();
            let mut workloads = BTreeMap::new();
            for (name, spec) in &t.workloads {
                let Ok(w) = spec.resolve() else { continue };
                if w.pool.as_deref() != Some(p.id.as_str()) {
                    continue;
                }
                let failed: Vec<usize> = w.failed.iter().filter_map(|f| t.node(f)).collect();
                workloads.insert(name.clone(), pool_bound(t, g, p, &w, &failed));
            }
            PoolJson {
                id: p.id.clone(),
                layout: p.layout.name(),
                vdevs: p.vdevs.iter().map(|v| v.iter().map(|&d| t.nodes[d].id.clone()).collect()).collect(),
                usable_bytes: p.usable_bytes(t),
                lost_bytes: p.lost_bytes(),
                options: options(p),
                bound,
                workloads,
            }
        })
        .collect()
}

fn tb(b: u64) -> String {
    format!("{:.2} TB", b as f64 / 1e12)
}

fn bound_line(s: &mut String, what: &str, b: &PoolBound) {
    let _ = write!(
        s,
        "    {what:<22} {:>9.1} MB/s  member bytes per logical byte: read {:.3}, write {:.3}; binds {} ({})",
        b.logical_mb_s, b.member_read_per_logical, b.member_write_per_logical, b.binding, b.binding_kind
    );
    if let (Some(bytes), Some(secs)) = (b.task_bytes, b.task_s) {
        let _ = write!(s, "; {} {} in {:.1} h", b.task.name(), tb(bytes), secs / 3600.0);
    }
    let _ = writeln!(s);
}

/// The text of the pool section (empty without pools).
pub fn pools_section(pools: &[PoolJson], bs: u64) -> String {
    let mut s = String::new();
    if pools.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\npools (bound: one job asking for all it can do, member traffic and CPU work included)");
    for p in pools {
        let members: Vec<String> = p.vdevs.iter().map(|v| v.join(", ")).collect();
        let opts: Vec<String> = p.options.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            s,
            "  {} [{}] {}{}",
            p.id,
            p.layout,
            if p.vdevs.len() > 1 { "vdevs " } else { "" },
            members.join(" | ")
        );
        let lost = if p.lost_bytes > 0 {
            format!(" ({} of larger members unused: capacity follows the smallest member)", tb(p.lost_bytes))
        } else {
            String::new()
        };
        let opts = if opts.is_empty() { String::new() } else { format!("; {}", opts.join(", ")) };
        let _ = writeln!(s, "    usable {}{lost}{opts}", tb(p.usable_bytes));
        let bsz = iopath_model::units::Bytes::new(bs);
        bound_line(&mut s, &format!("read bs={bsz}"), &p.bound[0]);
        bound_line(&mut s, &format!("write bs={bsz}"), &p.bound[1]);
        for (name, b) in &p.workloads {
            bound_line(&mut s, &format!("workload {name}"), b);
        }
    }
    s
}
