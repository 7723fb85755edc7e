//! Which drives a workload runs on: the topology's drives bound by [`iopath_model::bind`].

use super::SimError;
use iopath_model::bind::{BindError, bind_workload};
use iopath_model::topology::{NodeIx, Topology};
use iopath_model::workload::Workload;

/// The drives a workload runs on, in order; for copies, each source and destination once
/// (one source may feed several destinations; chains are refused).
///
/// A pool workload runs on the pool's members that have not failed, in the pool's order (a
/// rebuild also on the failed ones: their replacements).
pub fn target_drives(t: &Topology, w: &Workload) -> Result<Vec<NodeIx>, SimError> {
    if let Some((pool, failed)) = super::pool::resolve(t, w)? {
        return Ok(super::pool::members_used(pool, &failed, w.task));
    }
    let ids: Vec<&str> = t.drives.iter().map(|&d| t.nodes[d].id.as_str()).collect();
    match bind_workload(&ids, w) {
        Ok(b) => Ok(b.drives.iter().map(|&k| t.drives[k]).collect()),
        Err(BindError::UnknownDrive { id, hint, .. }) => Err(SimError::UnknownDrive { id, hint }),
        Err(BindError::TooManyActive { asked, have }) => Err(SimError::TooManyActive { asked, have }),
        Err(e) => Err(SimError::Bind(e)),
    }
}
