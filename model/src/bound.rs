//! The closed-form bottleneck estimate: weighted max-min fair water-filling over the
//! resources of [`crate::paths`].
//!
//! Each active drive is a flow whose rate grows until a resource on its path is full
//! (`sum of rate x seconds-per-byte = 1`); flows through a full resource freeze, the others
//! keep growing. The result is the highest aggregate the topology can carry with every drive
//! asking for all it can do, and the element that binds. [`max_min`] is also the allocation
//! step of the simulator's fluid model.

use crate::paths::{Cost, Dir, ResourceGraph};
use crate::topology::{NodeIx, Topology};
use serde::Serialize;

/// Result of a weighted max-min allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// Rate of each flow [payload bytes/s].
    pub rates: Vec<f64>,
    /// Utilization of each resource (0..=1).
    pub util: Vec<f64>,
    /// For each flow, the resource that froze it (None: unconstrained).
    pub binding: Vec<Option<usize>>,
}

/// Weighted max-min fairness with equal rate increments.
///
/// `flows[f]` lists the costs of flow `f`; `n_res` is the number of resources, each of
/// capacity 1. `caps[f]` optionally caps a flow's rate (bytes/s).
pub fn max_min(flows: &[Vec<Cost>], n_res: usize, caps: &[f64]) -> Allocation {
    let refs: Vec<&[Cost]> = flows.iter().map(|f| f.as_slice()).collect();
    let mut ws = MaxMin::new(n_res);
    let rates = ws.solve(&refs, caps).to_vec();
    let mut util = vec![0.0; n_res];
    for (k, &r) in ws.res.iter().enumerate() {
        util[r] = ws.used[k].min(1.0);
    }
    let binding = ws.binding.iter().map(|b| b.map(|k| ws.res[k as usize])).collect();
    Allocation { rates, util, binding }
}

/// Reusable working memory for [`max_min`]: a solve costs time in proportion to the flows
/// and the resources they touch, never to every resource of the topology, which keeps a
/// simulator's reallocation cheap when a large topology has few active paths.
#[derive(Debug, Clone, Default)]
pub struct MaxMin {
    /// Local index of each global resource touched by the current solve (u32::MAX if not).
    local_of: Vec<u32>,
    /// Global ids of the touched resources, by local index.
    pub res: Vec<usize>,
    weight: Vec<f64>,
    /// Load of each touched resource (by local index) after the solve.
    pub used: Vec<f64>,
    full: Vec<bool>,
    rates: Vec<f64>,
    frozen: Vec<bool>,
    /// For each flow, the local index of the resource that froze it.
    pub binding: Vec<Option<u32>>,
    /// The flows' costs in one array, each flow's at `start[f]..start[f + 1]` (local
    /// resource, cost per byte): the rounds read them in order, without a lookup per cost.
    cost_res: Vec<u32>,
    cost_w: Vec<f64>,
    start: Vec<u32>,
    /// The flows not yet frozen, in order.
    live: Vec<u32>,
}

impl MaxMin {
    /// The rates of the last solve, by flow.
    pub fn rates(&self) -> &[f64] {
        &self.rates
    }

    pub fn new(n_res: usize) -> MaxMin {
        MaxMin { local_of: vec![u32::MAX; n_res], ..Default::default() }
    }

    /// Solves for `flows` (each a list of costs) and returns each flow's rate [bytes/s].
    // Several parallel arrays are indexed by flow; an index loop reads clearer than zips.
    #[allow(clippy::needless_range_loop)]
    pub fn solve(&mut self, flows: &[&[Cost]], caps: &[f64]) -> &[f64] {
        let nf = flows.len();
        // Forget the previous solve's resources.
        for &r in &self.res {
            self.local_of[r] = u32::MAX;
        }
        self.res.clear();
        self.cost_res.clear();
        self.cost_w.clear();
        self.start.clear();
        for f in flows {
            self.start.push(self.cost_res.len() as u32);
            for c in f.iter() {
                if c.resource >= self.local_of.len() {
                    self.local_of.resize(c.resource + 1, u32::MAX);
                }
                if self.local_of[c.resource] == u32::MAX {
                    self.local_of[c.resource] = self.res.len() as u32;
                    self.res.push(c.resource);
                }
                self.cost_res.push(self.local_of[c.resource]);
                self.cost_w.push(c.s_per_byte);
            }
        }
        self.start.push(self.cost_res.len() as u32);
        let nr = self.res.len();
        self.weight.clear();
        self.weight.resize(nr, 0.0);
        self.used.clear();
        self.used.resize(nr, 0.0);
        self.full.clear();
        self.full.resize(nr, false);
        self.rates.clear();
        self.rates.resize(nf, 0.0);
        self.frozen.clear();
        self.frozen.resize(nf, false);
        self.binding.clear();
        self.binding.resize(nf, None);
        self.live.clear();
        for f in 0..nf {
            if flows[f].is_empty() && caps.get(f).is_none_or(|c| !c.is_finite()) {
                // A flow that costs nothing and has no cap would be infinite: leave it at 0.
                self.frozen[f] = true;
            } else {
                self.live.push(f as u32);
            }
        }
        // Every loop below visits the live flows in order, as a loop over all flows that
        // skipped the frozen ones did: the same sums in the same order, the same rates.
        for _round in 0..=(nr + nf) {
            self.weight.iter_mut().for_each(|w| *w = 0.0);
            if self.live.is_empty() {
                break;
            }
            for &f in &self.live {
                let (a, b) = (self.start[f as usize] as usize, self.start[f as usize + 1] as usize);
                for (&r, &w) in self.cost_res[a..b].iter().zip(&self.cost_w[a..b]) {
                    self.weight[r as usize] += w;
                }
            }
            // Largest equal increment before a resource fills or a flow reaches its cap.
            let mut delta = f64::INFINITY;
            for r in 0..nr {
                if self.weight[r] > 0.0 && !self.full[r] {
                    delta = delta.min(((1.0 - self.used[r]) / self.weight[r]).max(0.0));
                }
            }
            for &f in &self.live {
                if let Some(&cap) = caps.get(f as usize) {
                    delta = delta.min((cap - self.rates[f as usize]).max(0.0));
                }
            }
            if !delta.is_finite() {
                break;
            }
            for &f in &self.live {
                self.rates[f as usize] += delta;
            }
            for r in 0..nr {
                self.used[r] += delta * self.weight[r];
                if self.weight[r] > 0.0 && self.used[r] >= 1.0 - 1e-9 {
                    self.full[r] = true;
                }
            }
            let (start, cost_res, full, rates) = (&self.start, &self.cost_res, &self.full, &self.rates);
            let (frozen, binding) = (&mut self.frozen, &mut self.binding);
            self.live.retain(|&f| {
                let f = f as usize;
                let own = &cost_res[start[f] as usize..start[f + 1] as usize];
                if let Some(&r) = own.iter().find(|&&r| full[r as usize]) {
                    frozen[f] = true;
                    binding[f] = Some(r);
                    false
                } else if caps.get(f).is_some_and(|&cap| rates[f] >= cap - 1e-9 * cap.max(1.0)) {
                    frozen[f] = true;
                    false
                } else {
                    true
                }
            });
        }
        &self.rates
    }
}

/// Traffic mix of a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mix {
    Read,
    Write,
    /// Half reads, half writes on every drive.
    Mixed,
}

impl Mix {
    /// The share of each drive's bytes that are reads.
    pub fn read_share(self) -> f64 {
        match self {
            Mix::Read => 1.0,
            Mix::Write => 0.0,
            Mix::Mixed => 0.5,
        }
    }
}

/// One row of the bound table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundRow {
    pub active: usize,
    pub mix: Mix,
    /// Highest aggregate payload rate [MB/s].
    pub total_mb_s: f64,
    pub per_drive_mb_s: Vec<f64>,
    /// The element that binds: the full resource most drives wait on.
    pub binding: String,
    pub binding_kind: String,
}

/// The bound for a set of drives, all asking for all they can do with `bs`-byte commands.
pub fn bound(t: &Topology, g: &ResourceGraph, drives: &[NodeIx], mix: Mix, bs: u64, random: bool) -> BoundRow {
    bound_with_share(t, g, drives, mix, mix.read_share(), bs, random)
}

/// Up to this many drives, a bound table has a row for every prefix 1..=N.
pub const FULL_TABLE_DRIVES: usize = 1024;
/// Beyond [`FULL_TABLE_DRIVES`]: every count up to this, then [`LOG_TABLE_STEPS`] counts
/// spaced evenly on a log scale up to N.
const LOG_TABLE_START: usize = 32;
const LOG_TABLE_STEPS: u32 = 64;

/// The drive counts a bound table has rows for: every count 1..=N up to
/// [`FULL_TABLE_DRIVES`] drives; beyond, 1..=32 and 64 counts spaced evenly on a log scale up
/// to N (N always included). A row is one max-min solve over its drives and lists each of
/// them, so a full table is quadratic in N in time and size (10,240 drives: 54 s, 2.5 GB and
/// a 4.4 GB JSON document); this keeps it at about 100 rows.
pub fn table_counts(n: usize) -> Vec<usize> {
    if n <= FULL_TABLE_DRIVES {
        return (1..=n).collect();
    }
    let mut v: Vec<usize> = (1..=LOG_TABLE_START).collect();
    let ratio = (n as f64 / LOG_TABLE_START as f64).powf(1.0 / f64::from(LOG_TABLE_STEPS));
    for k in 1..=LOG_TABLE_STEPS {
        let c = ((LOG_TABLE_START as f64 * ratio.powi(k as i32)).round() as usize).min(n);
        if c > *v.last().unwrap_or(&0) {
            v.push(c);
        }
    }
    if v.last() != Some(&n) {
        v.push(n);
    }
    v
}

/// The bound for the first n drives of `drives`, for every n of [`table_counts`], for one
/// mix: each drive's costs are derived once, not once per prefix (a 1,024-drive table was
/// O(N^2) path walks).
pub fn bound_prefixes(t: &Topology, g: &ResourceGraph, drives: &[NodeIx], mix: Mix, bs: u64) -> Vec<BoundRow> {
    let flows: Vec<Vec<Cost>> = drives.iter().map(|&d| drive_flow(t, g, d, mix.read_share(), bs, false)).collect();
    table_counts(flows.len()).into_iter().map(|n| bound_of_flows(t, g, &flows[..n], mix)).collect()
}

/// The bound when a share `read_share` of every drive's bytes are reads (rwmixread / 100).
pub fn bound_with_share(
    t: &Topology,
    g: &ResourceGraph,
    drives: &[NodeIx],
    mix: Mix,
    read_share: f64,
    bs: u64,
    random: bool,
) -> BoundRow {
    let flows: Vec<Vec<Cost>> = drives.iter().map(|&d| drive_flow(t, g, d, read_share, bs, random)).collect();
    bound_of_flows(t, g, &flows, mix)
}

/// One drive's cost per byte on each resource when a share `read_share` of its bytes are reads.
fn drive_flow(t: &Topology, g: &ResourceGraph, d: NodeIx, read_share: f64, bs: u64, random: bool) -> Vec<Cost> {
    let r = read_share.clamp(0.0, 1.0);
    let mut v: Vec<Cost> = Vec::new();
    let reads = g.class_costs(t, d, Dir::Read, bs, random, true).into_iter().map(|c| (c, r));
    let writes = g.class_costs(t, d, Dir::Write, bs, random, true).into_iter().map(|c| (c, 1.0 - r));
    for (c, k) in reads.chain(writes).filter(|(_, k)| *k > 0.0) {
        match v.iter_mut().find(|x| x.resource == c.resource) {
            Some(x) => x.s_per_byte += k * c.s_per_byte,
            None => v.push(Cost { resource: c.resource, s_per_byte: k * c.s_per_byte }),
        }
    }
    v
}

/// The bound of one class with these costs per byte (a pool's logical class,
/// [`crate::pool::bound`]).
pub fn bound_of_class(t: &Topology, g: &ResourceGraph, costs: Vec<Cost>, mix: Mix) -> BoundRow {
    bound_of_flows(t, g, &[costs], mix)
}

/// Water-fills the drives' flows and names the element that binds.
fn bound_of_flows(t: &Topology, g: &ResourceGraph, flows: &[Vec<Cost>], mix: Mix) -> BoundRow {
    let a = max_min(flows, g.resources.len(), &[]);
    // The binding element: the full resource that froze the most flows; ties go to the one
    // nearest the host (shared by more of the tree).
    let mut count = vec![0usize; g.resources.len()];
    for r in a.binding.iter().flatten() {
        count[*r] += 1;
    }
    let best = (0..g.resources.len()).filter(|&r| count[r] > 0).max_by(|&x, &y| {
        count[x]
            .cmp(&count[y])
            .then_with(|| t.path_to_host(g.resources[y].node).len().cmp(&t.path_to_host(g.resources[x].node).len()))
    });
    let (binding, binding_kind) = match best {
        Some(r) => {
            let res = &g.resources[r];
            let kind = if count[r] == 1 && flows.len() > 1 && res.kind == "media" {
                "media".to_string()
            } else {
                res.kind.to_string()
            };
            (res.id.clone(), kind)
        }
        None => ("none".to_string(), String::new()),
    };
    BoundRow {
        active: flows.len(),
        mix,
        total_mb_s: a.rates.iter().sum::<f64>() / 1e6,
        per_drive_mb_s: a.rates.iter().map(|r| r / 1e6).collect(),
        binding,
        binding_kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_filling_shares_a_full_resource_equally() {
        // Two flows share resource 0 (cost 1 s/B -> capacity 1 B/s); flow 1 also uses
        // resource 1 with capacity 0.25 B/s.
        let flows = vec![
            vec![Cost { resource: 0, s_per_byte: 1.0 }],
            vec![Cost { resource: 0, s_per_byte: 1.0 }, Cost { resource: 1, s_per_byte: 4.0 }],
        ];
        let a = max_min(&flows, 2, &[]);
        assert!((a.rates[1] - 0.25).abs() < 1e-9);
        assert!((a.rates[0] - 0.75).abs() < 1e-9);
        assert!(a.util.iter().all(|&u| u <= 1.0));
    }

    #[test]
    fn tables_of_many_drives_keep_about_a_hundred_rows() {
        assert_eq!(table_counts(6), [1, 2, 3, 4, 5, 6]);
        assert_eq!(table_counts(FULL_TABLE_DRIVES), (1..=FULL_TABLE_DRIVES).collect::<Vec<_>>());
        for n in [FULL_TABLE_DRIVES + 1, 10_240, 1 << 20] {
            let c = table_counts(n);
            assert!(c.windows(2).all(|w| w[0] < w[1]), "{n}: increasing");
            assert_eq!(c[..32], (1..=32).collect::<Vec<_>>()[..]);
            assert_eq!(c.last(), Some(&n));
            assert!(c.len() <= 32 + 64 + 1, "{n}: {} rows", c.len());
        }
    }

    #[test]
    fn caps_limit_flows() {
        let flows = vec![vec![Cost { resource: 0, s_per_byte: 1.0 }], vec![Cost { resource: 0, s_per_byte: 1.0 }]];
        let a = max_min(&flows, 1, &[0.1, f64::INFINITY]);
        assert!((a.rates[0] - 0.1).abs() < 1e-9);
        assert!((a.rates[1] - 0.9).abs() < 1e-9);
    }
}
