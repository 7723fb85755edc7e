//! One binding of a workload to the drives of a topology, for every front end: the
//! topology's own `[workload.*]` tables (`check`), `simulate`, `sweep`, `measure` and `fit`.
//!
//! A workload names its drives in one of four ways: all drives, the first N (`active`),
//! drives by id (`drives`), or `SRC:DST` copy pairs (`copy`). [`bind`] resolves them into a
//! [`Binding`], or reports every problem as a [`BindError`] that names the field and the
//! element it is about, so each caller can locate it (a TOML span for a topology workload,
//! the command-line option for a flag).
//!
//! Copies: one source may be copied to several destinations (it is read once per pair).
//! Chains (a drive that is the destination of one copy and the source of another) and a
//! drive written by two copies are refused: a chain's middle drive would be read while it
//! is being written, so what it measures depends on timing, not on the path.

use crate::catalog::{did_you_mean, suggest};
use crate::workload::{Copy, Targets, Workload};

/// The drives a workload runs on, as positions in the drive list it was bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// Each drive the workload touches, once, in order: file order for all drives and
    /// `active`, the order named for `drives`, the order the pairs name them for copies.
    pub drives: Vec<usize>,
    /// Copy pairs as positions in [`Binding::drives`]: `(source, destination)`, in the
    /// order given. Empty for a workload that is not a copy.
    pub copies: Vec<(usize, usize)>,
}

impl Binding {
    /// Whether the drive at position `k` of [`Binding::drives`] is a copy destination.
    pub fn is_copy_destination(&self, k: usize) -> bool {
        self.copies.iter().any(|&(_, d)| d == k)
    }
}

/// The field of a workload a [`BindError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindField {
    Active,
    Drives,
    Copy,
}

impl BindField {
    /// The field's name in a workload table (`active`, `drives`, `copy`).
    pub fn name(self) -> &'static str {
        match self {
            BindField::Active => "active",
            BindField::Drives => "drives",
            BindField::Copy => "copy",
        }
    }
}

/// Why a workload cannot run on a topology's drives. Messages name no command-line option:
/// callers add where the value came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// A drive id that is not in the topology (`index`: the element of `drives` or `copy`).
    #[error("no drive has id {id:?}{hint}")]
    UnknownDrive { field: BindField, index: usize, id: String, hint: String },
    #[error("{asked} active drives asked for, but the topology has only {have} drive{}", if *have == 1 { "" } else { "s" })]
    TooManyActive { asked: usize, have: usize },
    /// Copy pair `index` reads a drive another pair writes, or writes a drive another reads.
    #[error(
        "drive {drive:?} is both the destination of copy {into} and the source of copy {from}; chains of copies \
         are not supported (the middle drive would be read while it is written); copy from the original source \
         instead ({suggestion}), or run the copies one after the other"
    )]
    CopyChain { index: usize, drive: String, into: String, from: String, suggestion: String },
    /// Copy pair `index` writes a drive an earlier pair already writes.
    #[error(
        "drive {drive:?} is the destination of copies {first} and {second}; each destination takes one source \
         (one source may feed several destinations)"
    )]
    TwoSources { index: usize, drive: String, first: String, second: String },
}

impl BindError {
    /// The workload field the problem is about.
    pub fn field(&self) -> BindField {
        match self {
            BindError::UnknownDrive { field, .. } => *field,
            BindError::TooManyActive { .. } => BindField::Active,
            BindError::CopyChain { .. } | BindError::TwoSources { .. } => BindField::Copy,
        }
    }

    /// The element of a list field (`drives[i]`, `copy[i]`) the problem is about.
    pub fn index(&self) -> Option<usize> {
        match self {
            BindError::UnknownDrive { index, .. }
            | BindError::CopyChain { index, .. }
            | BindError::TwoSources { index, .. } => Some(*index),
            BindError::TooManyActive { .. } => None,
        }
    }
}

/// The hint after an unknown id: the closest ids, or the first few ids there are.
fn hint(id: &str, drive_ids: &[&str]) -> String {
    let s = did_you_mean(&suggest(id, drive_ids.iter().copied()));
    if !s.is_empty() {
        return s;
    }
    if drive_ids.is_empty() {
        return "; the topology has no drives".to_string();
    }
    let ids: Vec<&str> = drive_ids.iter().take(12).copied().collect();
    format!("; the drives are {}{}", ids.join(", "), if drive_ids.len() > 12 { ", ..." } else { "" })
}

fn pair(c: &Copy) -> String {
    format!("{}:{}", c.from, c.to)
}

/// Binds targets and copy pairs to `drive_ids` (the topology's drives in file order),
/// reporting every problem. Copy pairs, when given, decide the drives and `targets` is
/// not used.
pub fn bind(drive_ids: &[&str], targets: &Targets, copies: &[Copy]) -> Result<Binding, Vec<BindError>> {
    let mut errors = Vec::new();
    let find = |field: BindField, index: usize, id: &str, errors: &mut Vec<BindError>| {
        let found = drive_ids.iter().position(|d| *d == id);
        if found.is_none() {
            errors.push(BindError::UnknownDrive { field, index, id: id.to_string(), hint: hint(id, drive_ids) });
        }
        found
    };
    if !copies.is_empty() {
        let mut b = Binding { drives: Vec::new(), copies: Vec::new() };
        let slot = |d: usize, b: &mut Binding| match b.drives.iter().position(|&x| x == d) {
            Some(k) => k,
            None => {
                b.drives.push(d);
                b.drives.len() - 1
            }
        };
        let mut kept: Vec<&Copy> = Vec::new();
        for (i, c) in copies.iter().enumerate() {
            let (from, to) =
                (find(BindField::Copy, i, &c.from, &mut errors), find(BindField::Copy, i, &c.to, &mut errors));
            let (Some(from), Some(to)) = (from, to) else { continue };
            if let Some(e) = copy_conflict(i, c, &kept) {
                errors.push(e);
                continue;
            }
            kept.push(c);
            let pair = (slot(from, &mut b), slot(to, &mut b));
            b.copies.push(pair);
        }
        return if errors.is_empty() { Ok(b) } else { Err(errors) };
    }
    let drives = match targets {
        Targets::All => (0..drive_ids.len()).collect(),
        Targets::Active(n) if *n > drive_ids.len() => {
            return Err(vec![BindError::TooManyActive { asked: *n, have: drive_ids.len() }]);
        }
        Targets::Active(n) => (0..*n).collect(),
        Targets::Drives(ids) => {
            let v: Vec<usize> =
                ids.iter().enumerate().filter_map(|(i, id)| find(BindField::Drives, i, id, &mut errors)).collect();
            if !errors.is_empty() {
                return Err(errors);
            }
            v
        }
    };
    Ok(Binding { drives, copies: Vec::new() })
}

/// The conflict of copy pair `i` with the pairs kept before it: a chain either way, or a
/// second source for one destination.
fn copy_conflict(i: usize, c: &Copy, kept: &[&Copy]) -> Option<BindError> {
    if let Some(e) = kept.iter().find(|e| e.to == c.from) {
        return Some(BindError::CopyChain {
            index: i,
            drive: c.from.clone(),
            into: pair(e),
            from: pair(c),
            suggestion: format!("{}:{} and {}:{}", e.from, e.to, e.from, c.to),
        });
    }
    if let Some(e) = kept.iter().find(|e| e.from == c.to) {
        return Some(BindError::CopyChain {
            index: i,
            drive: c.to.clone(),
            into: pair(c),
            from: pair(e),
            suggestion: format!("{}:{} and {}:{}", c.from, c.to, c.from, e.to),
        });
    }
    kept.iter().find(|e| e.to == c.to).map(|e| BindError::TwoSources {
        index: i,
        drive: c.to.clone(),
        first: pair(e),
        second: pair(c),
    })
}

/// Binds a resolved workload; the first problem when there are several.
pub fn bind_workload(drive_ids: &[&str], w: &Workload) -> Result<Binding, BindError> {
    bind(drive_ids, &w.targets, &w.copies).map_err(|mut e| e.swap_remove(0))
}

/// A pool workload's pool and failed members, resolved against a topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolBinding {
    /// Index in [`crate::Topology::pools`].
    pub pool: usize,
    pub failed: Vec<crate::topology::NodeIx>,
}

/// Why a pool workload cannot run. Messages name no command-line option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolBindError {
    #[error("no pool has id {id:?}{hint}")]
    UnknownPool { id: String, hint: String },
    #[error("{0}")]
    Failed(#[from] crate::pool::FailedError),
    #[error("{0}")]
    Task(String),
}

/// Resolves a workload's `pool` and `failed` (`None` for a workload on drives): the pool
/// exists, the failed drives are its members, the layout survives them and can run the task.
pub fn bind_pool(t: &crate::Topology, w: &Workload) -> Result<Option<PoolBinding>, PoolBindError> {
    let Some(id) = &w.pool else { return Ok(None) };
    let Some(pool) = t.pools.iter().position(|p| &p.id == id) else {
        let ids: Vec<&str> = t.pools.iter().map(|p| p.id.as_str()).collect();
        let hint = match did_you_mean(&suggest(id, ids.iter().copied())) {
            h if !h.is_empty() => h,
            _ if ids.is_empty() => "; the topology has no [[pool]]".to_string(),
            _ => format!("; the pools are {}", ids.join(", ")),
        };
        return Err(PoolBindError::UnknownPool { id: id.clone(), hint });
    };
    let p = &t.pools[pool];
    let mut failed = Vec::new();
    for f in &w.failed {
        match t.node(f).filter(|&ix| p.contains(ix)) {
            Some(ix) => failed.push(ix),
            None => {
                return Err(crate::pool::FailedError::NotAMember { pool: id.clone(), drive: f.clone() }.into());
            }
        }
    }
    p.check_failed(&failed)?;
    p.check_task(w.task).map_err(PoolBindError::Task)?;
    Ok(Some(PoolBinding { pool, failed }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorkloadSpec;

    const IDS: [&str; 6] = ["D", "E", "F", "G", "H", "I"];

    fn copies(pairs: &[&str]) -> Result<Binding, Vec<BindError>> {
        let w = WorkloadSpec { copy: Some(pairs.iter().map(|s| s.to_string()).collect()), ..Default::default() }
            .resolve()
            .unwrap();
        bind(&IDS, &w.targets, &w.copies)
    }

    #[test]
    fn one_source_feeds_several_destinations() {
        let b = copies(&["D:E", "D:F"]).unwrap();
        assert_eq!(b.drives, vec![0, 1, 2]);
        assert_eq!(b.copies, vec![(0, 1), (0, 2)]);
        assert!(b.is_copy_destination(1) && b.is_copy_destination(2) && !b.is_copy_destination(0));
    }

    #[test]
    fn chains_are_refused_either_way_round_at_the_later_pair() {
        for (pairs, drive) in [(["D:E", "E:F"], "E"), (["E:F", "D:E"], "E")] {
            let e = copies(&pairs).unwrap_err();
            assert_eq!(e.len(), 1, "{e:?}");
            assert_eq!((e[0].field(), e[0].index()), (BindField::Copy, Some(1)));
            let m = e[0].to_string();
            assert!(m.contains(&format!("drive {drive:?} is both the destination")), "{m}");
            assert!(m.contains("copy from the original source instead (D:E and D:F)"), "{m}");
        }
    }

    #[test]
    fn a_destination_takes_one_source() {
        let e = copies(&["D:F", "E:F"]).unwrap_err();
        assert!(matches!(&e[0], BindError::TwoSources { index: 1, drive, .. } if drive == "F"), "{e:?}");
    }

    #[test]
    fn every_unknown_id_is_reported_with_its_element() {
        let e = copies(&["D:X", "Y:E"]).unwrap_err();
        let got: Vec<(Option<usize>, String)> = e.iter().map(|e| (e.index(), e.to_string())).collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].0, Some(0));
        assert!(got[0].1.starts_with("no drive has id \"X\"; did you mean"), "{got:?}");
        assert_eq!(got[1].0, Some(1));
    }

    #[test]
    fn an_unknown_id_with_no_close_match_lists_the_drives() {
        let ids: Vec<String> = (0..14).map(|i| format!("disk{i}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let e = bind(&ids, &Targets::Drives(vec!["zz".into()]), &[]).unwrap_err();
        let m = e[0].to_string();
        assert!(m.ends_with("; the drives are disk0, disk1, disk2, disk3, disk4, disk5, disk6, disk7, disk8, disk9, disk10, disk11, ..."), "{m}");
    }

    #[test]
    fn active_and_named_drives() {
        assert_eq!(bind(&IDS, &Targets::Active(2), &[]).unwrap().drives, vec![0, 1]);
        let e = bind(&IDS, &Targets::Active(7), &[]).unwrap_err();
        assert_eq!(e[0].to_string(), "7 active drives asked for, but the topology has only 6 drives");
        let named = Targets::Drives(vec!["G".into(), "D".into()]);
        assert_eq!(bind(&IDS, &named, &[]).unwrap().drives, vec![3, 0]);
        let e = bind(&IDS, &Targets::Drives(vec!["D".into(), "Q".into()]), &[]).unwrap_err();
        assert_eq!((e[0].field(), e[0].index()), (BindField::Drives, Some(1)));
    }
}
