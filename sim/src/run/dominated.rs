//! Resources that can never bind, left out of the groups' bookkeeping.
//!
//! A resource `r2` is dominated by `r1` when every class that can move data across `r2`
//! crosses `r1` too, costs `r1` at least as much per byte, and has costs that never change.
//! Then at every instant `load(r2) <= load(r1)`: `r2` fills only when `r1` is full as well,
//! and when it does it freezes no class `r1` has not frozen. This is the presolve step of a
//! linear program that drops a dominated constraint. Below an HBA that is its command-rate
//! resource at large transfers (128 KiB: 1/18 of its uplink's cost per byte, crossed by the
//! same drives) and the uplinks of a cascade's deeper expanders (each carries a subset of the
//! drives the first one carries, at the same cost per byte).
//!
//! A group ([`super::vgroup`]) keeps, per resource its members cross, their summed cost and
//! whether another group shares it, and checks each resource's room on every join: with
//! these resources left out, a drive at the end of a cascade in the 1,024-drive example has
//! three of its seven resources to walk (its link, the first uplink, the HBA's). Everything
//! else still sees every resource: the full solve, the loads of the classes outside groups,
//! and every resource's busy time (a member's bytes are charged to all the resources it
//! crosses when it is accounted).
//!
//! Within the groups the decisions stay the solver's: a dominated resource's room check is
//! implied by its dominator's, with two exceptions, both where the old check asked for a
//! full solve the allocation did not need:
//!
//! - the dominator is the group's own bottleneck and the two tie at the same cost per byte
//!   (the dominated one within a millionth of full): the group holds where the check would
//!   have dissolved it;
//! - a class beside the groups crosses a dominated resource that exactly one member crosses:
//!   it may join without a solve. That refusal protects a member's private headroom, which a
//!   dominated resource does not set (its dominator, which both cross, is still checked).
//!
//! The rates are then the same max-min rates, up to the rounding by which a group differs
//! from the solve (`vgroup::tests::dominated_resources_change_no_decision`).

use super::vgroup::GROUP_MIN_ACTIVE;
use super::{Class, DriveSt};

#[cfg(test)]
thread_local! {
    /// How tests ask for the split: `Some(false)` never (the reference), `Some(true)` even in
    /// a run too small for groups (they lower the groups' thresholds after setup), `None` as
    /// runs do.
    pub(super) static FORCE: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// The classes' costs for the groups: each class's list is reordered (stably) to put the
/// resources dominated for every one of its crossers last, and `n_grp` counts the others.
/// `idle[c]`: class `c` never moves data. Returns how many resources were left out (none in a
/// run with fewer moving classes than a group needs: there the lists stay as built).
pub(super) fn split_dominated(classes: &mut [Class], drives: &[DriveSt], idle: &[bool], n_res: usize) -> usize {
    // Groups form only in a component with `GROUP_MIN_ACTIVE` moving classes: in a smaller run
    // nothing reads `n_grp`, and the costs keep the order they were built in.
    let too_small = idle.iter().filter(|&&i| !i).count() < GROUP_MIN_ACTIVE;
    #[cfg(test)]
    let too_small = FORCE.with(std::cell::Cell::get).map_or(too_small, |on| !on);
    if too_small {
        return 0;
    }
    // Costs that change during the run: an FBS multiplier's switching term, a flash drive's
    // write rate once its SLC cache fills.
    let mut fixed: Vec<bool> = classes.iter().map(|cl| cl.pm_switch.is_none()).collect();
    for dr in drives {
        if dr.flash.as_ref().is_some_and(|f| f.has_cache()) {
            fixed[dr.class[1] as usize] = false;
        }
    }
    // The classes that can move data across each resource, resource by resource in one
    // array (`crossers(r)` is `at[r]..at[r + 1]`).
    let moving = || classes.iter().enumerate().filter(|&(c, _)| !idle[c]);
    let mut at = vec![0u32; n_res + 1];
    let mut all_fixed = vec![true; n_res];
    for (c, cl) in moving() {
        for x in &cl.costs {
            at[x.resource + 1] += 1;
            all_fixed[x.resource] &= fixed[c];
        }
    }
    for r in 0..n_res {
        at[r + 1] += at[r];
    }
    let mut fill = at.clone();
    let mut flat = vec![0u32; at[n_res] as usize];
    for (c, cl) in moving() {
        for x in &cl.costs {
            flat[fill[x.resource] as usize] = c as u32;
            fill[x.resource] += 1;
        }
    }
    let crossers = |r: usize| &flat[at[r] as usize..at[r + 1] as usize];
    let cost_of = |c: u32, r: usize| {
        classes[c as usize].costs.iter().find(|x| x.resource == r).map_or(f64::NEG_INFINITY, |x| x.s_per_byte)
    };
    // Whether every crosser of `r2` crosses `r1` at no lower cost per byte.
    let dominates = |r1: usize, r2: usize| crossers(r2).iter().all(|&c| cost_of(c, r1) >= cost_of(c, r2));
    let mut out = vec![false; n_res];
    let mut cands: Vec<(usize, usize)> = Vec::new();
    for r2 in 0..n_res {
        let xs = crossers(r2);
        let (Some(&first), Some(&last)) = (xs.first(), xs.last()) else { continue };
        if !all_fixed[r2] {
            continue;
        }
        // The candidates are on the first crosser's path; each crosser keeps those it crosses
        // at no lower cost. The last crosser goes first: it is the likeliest to be under
        // another branch of the tree, which settles most resources at once.
        let path = &classes[first as usize].costs;
        let at2 = path.iter().position(|x| x.resource == r2).expect("a crosser crosses it");
        cands.clear();
        cands.extend(
            path.iter()
                .enumerate()
                .filter(|&(_, x)| x.resource != r2 && !out[x.resource])
                .map(|(i, x)| (i, x.resource)),
        );
        for &c in std::iter::once(&last).chain(xs.iter()) {
            let own = cost_of(c, r2);
            cands.retain(|&(_, r1)| cost_of(c, r1) >= own);
            if cands.is_empty() {
                break;
            }
        }
        // Two resources that dominate each other are the same constraint: the one the solver
        // names first (earlier on the path) stays.
        out[r2] = cands.iter().any(|&(at1, r1)| at1 < at2 || !dominates(r2, r1));
    }
    let n = out.iter().filter(|&&o| o).count();
    if n == 0 {
        return 0;
    }
    for (c, cl) in classes.iter_mut().enumerate() {
        if idle[c] || !fixed[c] || !cl.costs.iter().any(|x| out[x.resource]) {
            continue;
        }
        // A stable sort: the kept costs keep their order (the solver names the first full
        // resource on a class's path as its bottleneck).
        cl.costs.sort_by_key(|x| out[x.resource]);
        cl.n_grp = cl.costs.iter().filter(|x| !out[x.resource]).count() as u32;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::super::Sim;
    use super::FORCE;
    use iopath_model::Catalog;
    use iopath_model::topology::Topology;
    use iopath_model::workload::WorkloadSpec;

    /// (resource id, kept for the groups) of drive `d`'s read class, in its costs' order.
    fn split_of(text: &str, rw: &str, bs: &str, d: usize) -> Vec<(String, bool)> {
        split_of_class(text, rw, bs, d, 0)
    }

    /// The same for class `k` (0 read, 1 write).
    fn split_of_class(text: &str, rw: &str, bs: &str, d: usize, k: usize) -> Vec<(String, bool)> {
        let t = Topology::parse("d.toml", text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let w = WorkloadSpec { rw: Some(rw.into()), bs: Some(bs.into()), ..Default::default() }.resolve().unwrap();
        FORCE.with(|f| f.set(Some(true)));
        let s = Sim::new(&t, &w).unwrap();
        FORCE.with(|f| f.set(None));
        let cl = &s.classes[s.drives[d].class[k] as usize];
        cl.costs
            .iter()
            .enumerate()
            .map(|(i, c)| (s.graph.resources[c.resource].id.clone(), i < cl.n_grp as usize))
            .collect()
    }

    /// An HBA, then `first` drives on expander e0 and four on e1 below it.
    fn cascade(first: usize) -> String {
        let mut s = String::from(
            "name = \"c\"\n[host]\npart = \"intel-xeon-sp\"\n[[node]]\nid = \"hba\"\npart = \"lsi-sas3008\"\n\
             parent = \"host\"\n[[node]]\nid = \"e0\"\npart = \"broadcom-sas3x48\"\nparent = \"hba\"\nport = 0\n\
             link = \"sas3x4\"\n[[node]]\nid = \"e1\"\npart = \"broadcom-sas3x48\"\nparent = \"e0\"\nport = 4\n\
             link = \"sas3x4\"\n",
        );
        if first > 0 {
            s += &format!(
                "[[drive]]\nid = \"a\"\ncount = {first}\npart = \"seagate-exos-x18-18tb\"\nparent = \"e0\"\nport = 8\n"
            );
        }
        s + "[[drive]]\nid = \"b\"\ncount = 4\npart = \"seagate-exos-x18-18tb\"\nparent = \"e1\"\nport = 8\n"
    }

    fn left_out(split: &[(String, bool)]) -> Vec<&str> {
        split.iter().filter(|(_, kept)| !kept).map(|(id, _)| id.as_str()).collect()
    }

    /// At 128 KiB the deeper uplink carries a subset of the first one's drives at its cost
    /// per byte; the HBA's PCIe 3.0 x8 uplink carries the same drives as the first (the only
    /// chain) at less per byte than SAS3 x4, and its command resource at 1/18 of that. All
    /// three are left out, last on the class's list, in their order; the drive's own link and
    /// the first uplink stay, in theirs.
    #[test]
    fn a_cascade_keeps_its_drive_link_and_first_uplink() {
        let split = split_of(&cascade(4), "read", "128k", 4);
        let kept: Vec<&str> = split.iter().filter(|(_, k)| *k).map(|(id, _)| id.as_str()).collect();
        assert_eq!(kept, ["b0.link", "e0.uplink.up"], "{split:?}");
        assert_eq!(left_out(&split), ["e1.uplink.up", "hba.uplink.up", "hba.cmd"], "{split:?}");
        assert!(split[..2].iter().all(|(_, k)| *k), "the kept costs come first: {split:?}");
    }

    /// With a second chain on the HBA's other port, its uplink carries drives neither chain's
    /// first uplink does: it stays.
    #[test]
    fn a_resource_shared_by_two_branches_stays() {
        let text = cascade(4)
            + "[[node]]\nid = \"f0\"\npart = \"broadcom-sas3x48\"\nparent = \"hba\"\nport = 4\nlink = \"sas3x4\"\n\
               [[drive]]\nid = \"c\"\ncount = 4\npart = \"seagate-exos-x18-18tb\"\nparent = \"f0\"\nport = 8\n";
        let split = split_of(&text, "read", "128k", 4);
        assert!(split.iter().any(|(id, kept)| id == "hba.uplink.up" && *kept), "{split:?}");
        assert!(split.iter().any(|(id, kept)| id == "hba.cmd" && !*kept), "{split:?}");
    }

    /// At 4 KiB the command rate costs more per byte than every link above the drive's own,
    /// and it is crossed by every drive: it stays, and the uplinks go.
    #[test]
    fn small_transfers_keep_the_command_rate_instead() {
        let split = split_of(&cascade(4), "randread", "4k", 4);
        assert!(split.iter().any(|(id, kept)| id == "hba.cmd" && *kept), "{split:?}");
        assert!(split.iter().any(|(id, kept)| id == "hba.uplink.up" && !*kept), "{split:?}");
    }

    /// With no drives of its own on e0, both uplinks carry the same four drives at the same
    /// cost: one constraint. The one nearer the drives stays (the one the solver names first).
    #[test]
    fn of_two_identical_resources_the_first_on_the_path_stays() {
        let split = split_of(&cascade(0), "read", "128k", 0);
        assert!(split.iter().any(|(id, kept)| id == "e1.uplink.up" && *kept), "{split:?}");
        assert!(split.iter().any(|(id, kept)| id == "e0.uplink.up" && !*kept), "{split:?}");
    }

    /// An FBS port multiplier's switching term changes a class's costs as drives start and
    /// stop, and an SSD's SLC cache its write class's: nothing such a class crosses is left out.
    #[test]
    fn changing_costs_leave_nothing_out() {
        let text = "name = \"pm\"\n[host]\npart = \"freebsd-2016\"\n[[node]]\nid = \"mv\"\n\
                    part = \"marvell-88se9172\"\nparent = \"host\"\n[[node]]\nid = \"pm\"\npart = \"sata2-pm-generic\"\n\
                    parent = \"mv\"\nport = 0\nparams = { fbs = true }\n[[drive]]\nid = \"d\"\ncount = 5\n\
                    part = \"generic-hdd-sata2\"\nparent = \"pm\"\nport = 0\nlink = \"sata1\"\n";
        for d in 0..5 {
            let split = split_of(text, "read", "128k", d);
            assert!(split.len() >= 2 && left_out(&split).is_empty(), "drive {d}: {split:?}");
        }
        // An SSD's write class takes other costs once its SLC cache fills: in a mixed run on a
        // cascade of them nothing is left out of a write class, and what a read class leaves
        // out (the uplinks' upstream sides: SAS is full duplex) no write class crosses.
        let ssds = cascade(4).replace("seagate-exos-x18-18tb", "samsung-870qvo-4tb");
        let write = split_of_class(&ssds, "randrw", "128k", 4, 1);
        assert!(write.len() >= 3 && left_out(&write).is_empty(), "{write:?}");
        let read = split_of_class(&ssds, "randrw", "128k", 4, 0);
        assert!(
            !left_out(&read).is_empty()
                && left_out(&read).iter().all(|id| id.ends_with(".up") && !write.iter().any(|(w, _)| w == id)),
            "read {read:?}, write {write:?}"
        );
        // In a pure read run the write classes never move: the read classes split as HDDs'.
        let split = split_of(&ssds, "read", "128k", 4);
        assert!(left_out(&split).contains(&"e1.uplink.up"), "{split:?}");
    }
}
