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
    /// Global ids of the touched resources, by local index.
    pub res: Vec<usize>,
    /// Load of each touched resource (by local index) after the solve.
    pub used: Vec<f64>,
    /// For each flow, the local index of the resource that froze it.
    pub binding: Vec<Option<u32>>,
    /// Per global resource: the solve's figures, in one place so that one lookup reaches
    /// them all. Meaningful only for those in `res`; the others stay at [`Slot::IDLE`].
    slots: Vec<Slot>,
    rates: Vec<f64>,
    frozen: Vec<bool>,
    /// The flows not yet frozen, in order.
    live: Vec<u32>,
    /// The resources the live flows cross this round (each once): the only ones whose
    /// weight is not 0, so the only ones a round's increment and loads can involve.
    crossed: Vec<usize>,
}

/// A resource in a solve. The rounds read each flow's costs where they are, indexed by
/// their global resource: nothing is copied or renumbered per solve.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The live flows' summed cost per byte this round (0 between solves).
    weight: f64,
    /// Load so far.
    load: f64,
    /// Local index (u32::MAX if not touched by the current solve).
    local: u32,
    full: bool,
}

impl Slot {
    const IDLE: Slot = Slot { weight: 0.0, load: 0.0, local: u32::MAX, full: false };
}

impl MaxMin {
    /// The rates of the last solve, by flow.
    pub fn rates(&self) -> &[f64] {
        &self.rates
    }

    pub fn new(n_res: usize) -> MaxMin {
        MaxMin { slots: vec![Slot::IDLE; n_res], ..Default::default() }
    }

    /// Solves for `flows` (each a list of costs) and returns each flow's rate [bytes/s].
    pub fn solve(&mut self, flows: &[&[Cost]], caps: &[f64]) -> &[f64] {
        self.solve_with(flows.len(), |f| flows[f], caps)
    }

    /// [`MaxMin::solve`] for `nf` flows whose costs `flow(f)` gives. (Handing the simulator
    /// this form, to spare it collecting its moving classes' costs per solve, saved 0.4% of
    /// the 24-bay QD 1 run and cost the 6-SSD run 0.5% in code layout: it stays private.)
    fn solve_with<'a>(&mut self, nf: usize, flow: impl Fn(usize) -> &'a [Cost], caps: &[f64]) -> &[f64] {
        // Forget the previous solve's resources.
        for &r in &self.res {
            self.slots[r] = Slot::IDLE;
        }
        self.res.clear();
        // The first round's sums come with finding the resources: every flow with a cost
        // is live then, and a flow without one adds nothing (`weight` is 0 outside `res`).
        for f in 0..nf {
            for c in flow(f) {
                let r = c.resource;
                if r >= self.slots.len() {
                    self.slots.resize(r + 1, Slot::IDLE);
                }
                let slot = &mut self.slots[r];
                if slot.local == u32::MAX {
                    slot.local = self.res.len() as u32;
                    self.res.push(r);
                }
                slot.weight += c.s_per_byte;
            }
        }
        let nr = self.res.len();
        self.rates.clear();
        self.rates.resize(nf, 0.0);
        self.frozen.clear();
        self.frozen.resize(nf, false);
        self.binding.clear();
        self.binding.resize(nf, None);
        self.live.clear();
        for f in 0..nf {
            if flow(f).is_empty() && caps.get(f).is_none_or(|c| !c.is_finite()) {
                // A flow that costs nothing and has no cap would be infinite: leave it at 0.
                self.frozen[f] = true;
            } else {
                self.live.push(f as u32);
            }
        }
        // Every loop below visits the live flows in order, as a loop over all flows that
        // skipped the frozen ones did: the same sums in the same order, the same rates.
        // (A resource's sum depends only on the order of the flows crossing it, and the
        // increment is a minimum, so the order the resources are visited in is free.)
        // After the first round only the resources some live flow crosses have a weight:
        // a full one has none (its flows froze with it), and one whose flows all froze has
        // none either, so the rounds visit `crossed`, rebuilt with the weights. A weight is a
        // sum of costs of at least 0, so it leaves 0 at most once a round.
        self.crossed.clear();
        self.crossed.extend_from_slice(&self.res);
        for round in 0..=(nr + nf) {
            if round > 0 {
                for &r in &self.crossed {
                    self.slots[r].weight = 0.0;
                }
                self.crossed.clear();
                if self.live.is_empty() {
                    break;
                }
                for &f in &self.live {
                    for c in flow(f as usize) {
                        let slot = &mut self.slots[c.resource];
                        let was = slot.weight;
                        slot.weight += c.s_per_byte;
                        if was == 0.0 && slot.weight != 0.0 {
                            self.crossed.push(c.resource);
                        }
                    }
                }
            }
            // Largest equal increment before a resource fills or a flow reaches its cap.
            let mut delta = f64::INFINITY;
            for &r in &self.crossed {
                let s = &self.slots[r];
                if s.weight > 0.0 && !s.full {
                    delta = delta.min(((1.0 - s.load) / s.weight).max(0.0));
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
            for &r in &self.crossed {
                let s = &mut self.slots[r];
                s.load += delta * s.weight;
                if s.weight > 0.0 && s.load >= 1.0 - 1e-9 {
                    s.full = true;
                }
            }
            // The flows a full resource or their cap froze leave `live`, the rest keep their
            // order (an in-place `retain`, written out: the closure was a call per flow).
            let mut kept = 0;
            for i in 0..self.live.len() {
                let f = self.live[i] as usize;
                if let Some(c) = flow(f).iter().find(|c| self.slots[c.resource].full) {
                    self.frozen[f] = true;
                    self.binding[f] = Some(self.slots[c.resource].local);
                } else if caps.get(f).is_some_and(|&cap| self.rates[f] >= cap - 1e-9 * cap.max(1.0)) {
                    self.frozen[f] = true;
                } else {
                    self.live[kept] = f as u32;
                    kept += 1;
                }
            }
            self.live.truncate(kept);
        }
        // `weight` back to 0 everywhere, for the next solve's first round.
        for &r in &self.crossed {
            self.slots[r].weight = 0.0;
        }
        self.used.clear();
        self.used.extend(self.res.iter().map(|&r| self.slots[r].load));
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

    /// Water-filling as the definition reads, on fresh vectors per call: every round sums
    /// the live flows' costs from zero over all flows in order, and takes the least room
    /// over all resources and caps. The reference for [`MaxMin::solve`].
    fn reference(flows: &[Vec<Cost>], n_res: usize, caps: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<Option<usize>>) {
        let nf = flows.len();
        let (mut rates, mut used, mut full) = (vec![0.0; nf], vec![0.0; n_res], vec![false; n_res]);
        let mut binding = vec![None; nf];
        let mut frozen: Vec<bool> =
            (0..nf).map(|f| flows[f].is_empty() && caps.get(f).is_none_or(|c| !c.is_finite())).collect();
        for _ in 0..=(n_res + nf) {
            let mut weight = vec![0.0; n_res];
            for f in (0..nf).filter(|&f| !frozen[f]) {
                for c in &flows[f] {
                    weight[c.resource] += c.s_per_byte;
                }
            }
            if frozen.iter().all(|&x| x) {
                break;
            }
            let mut delta = f64::INFINITY;
            for r in 0..n_res {
                if weight[r] > 0.0 && !full[r] {
                    delta = delta.min(((1.0 - used[r]) / weight[r]).max(0.0));
                }
            }
            for f in (0..nf).filter(|&f| !frozen[f]) {
                if let Some(&cap) = caps.get(f) {
                    delta = delta.min((cap - rates[f]).max(0.0));
                }
            }
            if !delta.is_finite() {
                break;
            }
            for f in (0..nf).filter(|&f| !frozen[f]) {
                rates[f] += delta;
            }
            for r in 0..n_res {
                used[r] += delta * weight[r];
                if weight[r] > 0.0 && used[r] >= 1.0 - 1e-9 {
                    full[r] = true;
                }
            }
            for f in 0..nf {
                if frozen[f] {
                    continue;
                }
                if let Some(c) = flows[f].iter().find(|c| full[c.resource]) {
                    frozen[f] = true;
                    binding[f] = Some(c.resource);
                } else if caps.get(f).is_some_and(|&cap| rates[f] >= cap - 1e-9 * cap.max(1.0)) {
                    frozen[f] = true;
                }
            }
        }
        (rates, used, binding)
    }

    proptest::proptest! {
        /// One workspace solving problem after problem (as a simulator component does) gives
        /// each problem's reference answer to the bit: rates, every touched resource's load,
        /// and each flow's binding resource. Flows share resources, cross one twice, cost
        /// nothing, or carry caps; problems grow and shrink, so a solve that left state
        /// behind for the next would show here.
        #[test]
        fn a_reused_solve_is_the_reference_bit_for_bit(
            problems in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        proptest::collection::vec((0usize..12, 1u32..1000), 0..5),
                        1..12,
                    ),
                    proptest::collection::vec(proptest::option::of(1u32..5000), 0..12),
                ),
                1..6,
            )
        ) {
            let mut ws = MaxMin::new(4);
            for (spec, cap_spec) in &problems {
                let flows: Vec<Vec<Cost>> = spec
                    .iter()
                    .map(|f| f.iter().map(|&(r, w)| Cost { resource: r, s_per_byte: w as f64 * 1e-4 }).collect())
                    .collect();
                let caps: Vec<f64> = cap_spec.iter().map(|c| c.map_or(f64::INFINITY, |c| c as f64 * 0.37)).collect();
                let (rates, used, binding) = reference(&flows, 12, &caps);
                let refs: Vec<&[Cost]> = flows.iter().map(|f| f.as_slice()).collect();
                let got = ws.solve(&refs, &caps).to_vec();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                proptest::prop_assert_eq!(bits(&got), bits(&rates));
                for (k, &r) in ws.res.iter().enumerate() {
                    proptest::prop_assert_eq!(ws.used[k].to_bits(), used[r].to_bits(), "load of resource {}", r);
                }
                let got_binding: Vec<Option<usize>> = ws.binding.iter().map(|b| b.map(|k| ws.res[k as usize])).collect();
                proptest::prop_assert_eq!(got_binding, binding);
            }
        }
    }
}
