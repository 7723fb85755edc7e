//! A pool's options changed from outside its file: `--vary pool.tank.layout=raidz1,raidz2`
//! compares layouts on the same drives, `pool.tank.recordsize=128k,1m` a ZFS option.
//!
//! An override is applied to the `[[pool]]` table as written ([`RawPool`]) and the topology is
//! loaded again, so every check a written value gets (member counts, ranges, options that
//! apply to the layout) applies to it. A layout may carry a vdev width, `zfs-mirror:2`
//! (mirrors of two) or `raidz2:8` (RAIDZ2 vdevs of eight), since the same drives as one
//! 8-wide mirror and as four 2-way mirrors are different pools: the width is the pool's
//! `vdev_width`. Changing the layout drops the options the new layout does not take (an md
//! array has no recordsize, a btrfs one no fletcher4), so "the same drives, another layout"
//! needs no other change; the members stay, in order (a file's `vdevs` lists are joined
//! when the layout is not ZFS or a width regroups them).

use super::{Family, Layout};
use crate::topology::{ConfigError, Diagnostic, RawPool, RawTopology};
use toml::Spanned;

/// The fields of a `[[pool]]` an override may set.
pub const FIELDS: &[&str] = &[
    "layout",
    "vdev_width",
    "chunk",
    "stripe_cache_size",
    "recordsize",
    "ashift",
    "parity",
    "write_mode",
    "checksum",
    "compression",
    "encryption",
];

/// One pool option set from outside the file: `pool.tank.layout=raidz2`.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolOverride {
    pub pool: String,
    pub field: String,
    pub value: String,
}

/// Whether an axis or `--set` name is a pool's option (`pool.ID.FIELD`) rather than a node's
/// figure (`NODE.PARAM`).
pub fn is_pool_param(param: &str) -> bool {
    param.strip_prefix("pool.").is_some_and(|rest| rest.contains('.'))
}

impl std::str::FromStr for PoolOverride {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (lhs, value) = s.split_once('=').ok_or_else(|| format!("{s:?} is not pool.ID.FIELD=VALUE"))?;
        let rest = lhs.trim().strip_prefix("pool.").ok_or_else(|| format!("{lhs:?} is not pool.ID.FIELD"))?;
        let (pool, field) = rest.rsplit_once('.').ok_or_else(|| format!("{lhs:?} is not pool.ID.FIELD"))?;
        let field = field.trim().to_string();
        if !FIELDS.contains(&field.as_str()) {
            let s = crate::catalog::suggest(&field, FIELDS.iter().copied());
            return Err(format!(
                "{field:?} is not an option of a pool{}; a pool's options are {}",
                crate::catalog::did_you_mean(&s),
                FIELDS.join(", ")
            ));
        }
        let value = value.trim().to_string();
        if value.is_empty() {
            return Err(format!("{lhs}: an empty value"));
        }
        Ok(PoolOverride { pool: pool.trim().to_string(), field, value })
    }
}

/// Whether `layout` takes the option `field` (what the loader accepts, `load/pools.rs`).
fn takes(layout: Layout, field: &str) -> bool {
    let fam = layout.family();
    match field {
        "chunk" => matches!(layout, Layout::Stripe | Layout::Raid10 | Layout::Raid5 | Layout::Raid6),
        "stripe_cache_size" => matches!(layout, Layout::Raid5 | Layout::Raid6),
        "recordsize" | "ashift" | "encryption" | "vdev_width" => fam == Family::Zfs,
        "checksum" | "compression" => matches!(fam, Family::Zfs | Family::Btrfs),
        "parity" | "write_mode" => layout == Layout::Unraid,
        _ => true,
    }
}

/// A value set from outside the file: no position in it (span 0..0, see `known`).
fn unplaced<T>(v: T) -> Spanned<T> {
    Spanned::new(0..0, v)
}

fn whole(field: &str, v: &str) -> Result<i64, String> {
    v.parse::<i64>().map_err(|_| format!("{field} = {v:?}: expected a whole number"))
}

/// `raidz2` or `raidz2:8`: the layout and the vdev width, if given.
pub fn parse_layout(v: &str) -> Result<(Layout, Option<i64>), String> {
    let (name, width) = match v.split_once(':') {
        Some((n, w)) => (n, Some(w)),
        None => (v, None),
    };
    let Some(layout) = Layout::parse(name) else {
        let names: Vec<&str> = Layout::ALL.iter().map(|l| l.name()).collect();
        return Err(format!(
            "{name:?} is not a layout{}; the layouts are {}",
            crate::catalog::did_you_mean(&crate::catalog::suggest(name, names.iter().copied())),
            names.join(", ")
        ));
    };
    let width = match width {
        None => None,
        Some(w) if layout.family() != Family::Zfs => {
            return Err(format!("{v:?}: a vdev width (:{w}) applies to ZFS layouts only; write {:?}", layout.name()));
        }
        Some(w) => match w.trim().parse::<i64>() {
            Ok(n) if n >= 1 => Some(n),
            _ => return Err(format!("{v:?}: the vdev width after ':' is a whole number of drives, e.g. zfs-mirror:2")),
        },
    };
    Ok((layout, width))
}

/// Joins a pool's `vdevs` lists into one `members` list, in order.
fn join_vdevs(rp: &mut RawPool) {
    if let Some(v) = rp.vdevs.take() {
        let all: Vec<Spanned<String>> = v.into_inner().into_iter().flat_map(|l| l.into_inner()).collect();
        rp.members = Some(unplaced(all));
    }
}

/// Sets one option on a `[[pool]]` table as written.
fn set(rp: &mut RawPool, o: &PoolOverride) -> Result<(), String> {
    let v = o.value.clone();
    match o.field.as_str() {
        "layout" => {
            let (layout, width) = parse_layout(&v)?;
            let old = Layout::parse(rp.layout.get_ref());
            rp.layout = unplaced(layout.name().to_string());
            if layout.family() != Family::Zfs || width.is_some() {
                join_vdevs(rp);
            }
            if let Some(w) = width {
                rp.vdev_width = Some(unplaced(w));
            }
            // Options the new layout does not take go; a family's option words differ
            // (ZFS's fletcher4 is not a btrfs checksum), so a new family keeps none.
            let new_family = old.is_none_or(|l| l.family() != layout.family());
            let keep = |f: &str| takes(layout, f) && !new_family;
            if !keep("chunk") {
                rp.chunk = None;
            }
            if !keep("stripe_cache_size") {
                rp.stripe_cache_size = None;
            }
            if !keep("recordsize") {
                rp.recordsize = None;
            }
            if !keep("ashift") {
                rp.ashift = None;
            }
            if !keep("parity") {
                rp.parity = None;
            }
            if !keep("write_mode") {
                rp.write_mode = None;
            }
            if !keep("checksum") {
                rp.checksum = None;
            }
            if !keep("compression") {
                rp.compression = None;
            }
            if !keep("encryption") {
                rp.encryption = None;
            }
            if width.is_none() && !keep("vdev_width") {
                rp.vdev_width = None;
            }
        }
        "vdev_width" => {
            rp.vdev_width = Some(unplaced(whole("vdev_width", &v)?));
            join_vdevs(rp);
        }
        "ashift" => rp.ashift = Some(unplaced(whole("ashift", &v)?)),
        "stripe_cache_size" => rp.stripe_cache_size = Some(unplaced(whole("stripe_cache_size", &v)?)),
        "parity" => rp.parity = Some(unplaced(whole("parity", &v)?)),
        "chunk" => rp.chunk = Some(unplaced(v)),
        "recordsize" => rp.recordsize = Some(unplaced(v)),
        "write_mode" => rp.write_mode = Some(unplaced(v)),
        "checksum" => rp.checksum = Some(unplaced(v)),
        "compression" => rp.compression = Some(unplaced(v)),
        "encryption" => rp.encryption = Some(unplaced(v)),
        f => return Err(format!("{f:?} is not an option of a pool; a pool's options are {}", FIELDS.join(", "))),
    }
    Ok(())
}

/// Applies the overrides in order to the topology's pools as written; `origins[i]` names
/// override `i` as its user wrote it (`--vary pool.tank.layout=raidz9`). A problem found
/// here (no such pool, a word that is not a layout) is reported against that origin.
pub(crate) fn apply(raw: &mut RawTopology, overrides: &[PoolOverride], origins: &[String]) -> Result<(), ConfigError> {
    let mut diagnostics = Vec::new();
    for (i, o) in overrides.iter().enumerate() {
        let label = origin(overrides, origins, i);
        let ids: Vec<String> = raw.pool.iter().map(|p| p.id.get_ref().clone()).collect();
        let problem = match raw.pool.iter_mut().find(|p| p.id.get_ref() == &o.pool) {
            Some(rp) => set(rp, o).err().map(|m| (m, None)),
            None => Some((
                format!(
                    "no pool has id {:?}{}",
                    o.pool,
                    crate::catalog::did_you_mean(&crate::catalog::suggest(&o.pool, ids.iter().map(|s| s.as_str())))
                ),
                Some(if ids.is_empty() {
                    "the topology has no [[pool]]".to_string()
                } else {
                    format!("the pools are {}", ids.join(", "))
                }),
            )),
        };
        if let Some((message, help)) = problem {
            diagnostics.push(Diagnostic { file: label, line: 0, column: 0, key: String::new(), message, help });
        }
    }
    if diagnostics.is_empty() { Ok(()) } else { Err(ConfigError { diagnostics }) }
}

fn origin(overrides: &[PoolOverride], origins: &[String], i: usize) -> String {
    origins.get(i).cloned().unwrap_or_else(|| {
        let o = &overrides[i];
        format!("pool.{}.{}={}", o.pool, o.field, o.value)
    })
}

/// A problem the loader found in a value an override set has no position in the file
/// (`known` gives none for span 0..0): it is the override's, so it names the override's
/// origin instead of the file (`--vary pool.tank.recordsize=3k: pool[0].recordsize: ...`).
pub(crate) fn relabel(
    mut e: ConfigError,
    raw: &RawTopology,
    overrides: &[PoolOverride],
    origins: &[String],
) -> ConfigError {
    for d in &mut e.diagnostics {
        if d.line != 0 {
            continue;
        }
        let by = overrides.iter().enumerate().rev().find(|(_, o)| {
            raw.pool.iter().position(|p| p.id.get_ref() == &o.pool).is_some_and(|ix| {
                let key = format!("pool[{ix}].");
                // A layout's change is behind any problem with the members or options it
                // brought; another override only behind its own field's.
                d.key.starts_with(&key) && (o.field == "layout" || d.key[key.len()..].starts_with(o.field.as_str()))
            })
        });
        if let Some((i, _)) = by {
            d.file = origin(overrides, origins, i);
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pool_overrides_and_refuses_unknown_fields() {
        let o: PoolOverride = "pool.tank.layout=zfs-mirror:2".parse().unwrap();
        assert_eq!((o.pool.as_str(), o.field.as_str(), o.value.as_str()), ("tank", "layout", "zfs-mirror:2"));
        assert!(is_pool_param("pool.tank.layout"));
        assert!(!is_pool_param("pool"), "the workload's pool axis");
        assert!(!is_pool_param("hba.lanes"));
        let e = "pool.tank.layuot=raidz1".parse::<PoolOverride>().unwrap_err();
        assert!(e.contains("did you mean") && e.contains("layout"), "{e}");
        assert_eq!(parse_layout("raidz2:8").unwrap(), (Layout::Raidz2, Some(8)));
        assert!(parse_layout("raid6:4").unwrap_err().contains("ZFS layouts only"));
        assert!(parse_layout("zfs-mirror:0").is_err());
        assert!(parse_layout("raidz9").unwrap_err().contains("raidz"));
    }

    const EIGHT: &str = r#"
[host]
part = "intel-lga1700"
[[node]]
id = "hba"
part = "lsi-sas2308"
parent = "host"
[[drive]]
id = "d"
count = 8
part = "wd-red-plus-4tb"
parent = "hba"
[[pool]]
id = "tank"
layout = "raidz2"
members = ["d"]
recordsize = "1m"
"#;

    fn topo() -> crate::Topology {
        crate::Topology::parse("t.toml", EIGHT, &crate::Catalog::builtin()).unwrap()
    }

    fn changed(vals: &[&str]) -> Result<crate::Topology, ConfigError> {
        let o: Vec<PoolOverride> = vals.iter().map(|v| v.parse().unwrap()).collect();
        let origins: Vec<String> = vals.iter().map(|v| format!("--vary {v}")).collect();
        topo().with_changes(&[], &[], &o, &origins)
    }

    #[test]
    fn a_width_splits_the_members_in_order_and_a_new_family_drops_the_old_options() {
        // Eight members as 2-way mirrors: four vdevs, d0+d1, d2+d3, ...
        let t = changed(&["pool.tank.layout=zfs-mirror:2"]).unwrap();
        let p = t.pool("tank").unwrap();
        assert_eq!(p.layout, Layout::ZfsMirror);
        let ids: Vec<Vec<&str>> =
            p.vdevs.iter().map(|v| v.iter().map(|&ix| t.nodes[ix].id.as_str()).collect()).collect();
        assert_eq!(ids, [["d0", "d1"], ["d2", "d3"], ["d4", "d5"], ["d6", "d7"]]);
        // The same family keeps the file's recordsize; md has none, so raid6 drops it.
        assert_eq!(p.recordsize, 1 << 20);
        let t = changed(&["pool.tank.layout=raid6"]).unwrap();
        let p = t.pool("tank").unwrap();
        assert_eq!((p.layout, p.vdevs.len(), p.vdevs[0].len()), (Layout::Raid6, 1, 8));
        assert_eq!(p.chunk, crate::pool::MD_DEFAULT_CHUNK);
        // A value the loader refuses names the option, not the file.
        let e = changed(&["pool.tank.ashift=20"]).unwrap_err().to_string();
        assert!(e.contains("--vary pool.tank.ashift=20: pool[0].ashift: ashift 20 is outside 9..16"), "{e}");
    }
}
