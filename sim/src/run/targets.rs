//! Which drives a workload runs on.

use super::SimError;
use iopath_model::catalog::{did_you_mean, suggest};
use iopath_model::topology::{NodeIx, Topology};
use iopath_model::workload::{Targets, Workload};
/// The drives a workload runs on, in order; for copies, sources and destinations.
pub fn target_drives(t: &Topology, w: &Workload) -> Result<Vec<NodeIx>, SimError> {
    let find = |id: &str| -> Result<NodeIx, SimError> {
        t.drives.iter().copied().find(|&d| t.nodes[d].id == id).ok_or_else(|| SimError::UnknownDrive {
            id: id.to_string(),
            hint: {
                let s = did_you_mean(&suggest(id, t.drives.iter().map(|&d| t.nodes[d].id.as_str())));
                if s.is_empty() {
                    let ids: Vec<&str> = t.drives.iter().take(12).map(|&d| t.nodes[d].id.as_str()).collect();
                    format!("; the drives are {}{}", ids.join(", "), if t.drives.len() > 12 { ", ..." } else { "" })
                } else {
                    s
                }
            },
        })
    };
    if !w.copies.is_empty() {
        let mut v = Vec::new();
        for c in &w.copies {
            for id in [&c.from, &c.to] {
                let d = find(id)?;
                if v.contains(&d) {
                    return Err(SimError::CopyConflict(id.clone()));
                }
                v.push(d);
            }
        }
        return Ok(v);
    }
    match &w.targets {
        Targets::All => Ok(t.drives.clone()),
        Targets::Active(n) if *n > t.drives.len() => Err(SimError::TooManyActive { asked: *n, have: t.drives.len() }),
        Targets::Active(n) => Ok(t.drives[..*n].to_vec()),
        Targets::Drives(ids) => ids.iter().map(|id| find(id)).collect(),
    }
}
