//! `advise`: the changes that raise a topology's answer, ranked.
//!
//! Candidates ([`candidates`]) are edits of the topology as written, each loaded again
//! through the normal loader (a change it refuses is dropped); the closed-form bound of the
//! goal's workload on each prunes those that cannot beat today's answer (the simulator never
//! exceeds the bound it shares its costs with); the rest are simulated in parallel (rayon),
//! with the workload's fixed seed, so the ranking is the same whatever the thread count.
//! `plan` ([`plan`]) builds candidate builds from a board or host, drives and a goal.

pub mod candidates;
pub mod goal;
pub mod plan;

pub use candidates::{Change, ChangeKind};
pub use goal::{Goal, GoalError, Score};

use crate::run::{SimError, SimOptions, simulate};
use crate::sweep::workload_bound;
use iopath_model::report::Bottleneck;
use iopath_model::{Topology, WorkloadSpec};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Why advice could not be given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdviseError {
    #[error(transparent)]
    Goal(#[from] GoalError),
    #[error("the workload: {0}")]
    Workload(String),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("{0}")]
    Plan(String),
}

/// How much `advise` may spend.
#[derive(Debug, Clone)]
pub struct AdviseOptions {
    /// At most this many candidates are simulated (those with the highest bounds).
    pub max_simulated: usize,
    /// Price of each catalog part, from the user (`part,price`); iopath ships none.
    pub prices: Option<BTreeMap<String, f64>>,
}

impl Default for AdviseOptions {
    fn default() -> Self {
        AdviseOptions { max_simulated: 48, prices: None }
    }
}

/// One change, simulated.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    pub kind: ChangeKind,
    pub change: String,
    pub cost: String,
    /// Parts bought for it.
    pub parts: Vec<String>,
    /// PCIe slots it takes beyond those in use now.
    pub slots_added: u32,
    /// Their price from the price list (`None`: no list, or a part missing from it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
    /// The goal's value with the change (in [`Advice::unit`]).
    pub value: f64,
    /// How much better than today, in the unit (hours saved for a scrub or rebuild).
    pub gain: f64,
    /// `gain` as a share of today's value.
    pub gain_pct: f64,
    /// The closed-form bound of the workload with the change [MB/s].
    pub bound_mb_s: f64,
    /// What binds with the change.
    pub bottleneck: Bottleneck,
    /// Whether the goal is met with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// The topology file with the change applied.
    #[serde(skip)]
    pub topology_toml: String,
    /// Equivalent changes with other parts: the same change, the same gain (within 1% of
    /// today's value), the same new bottleneck and slots (SAS3008 for SAS2308). The
    /// suggestion itself is the best of them; `--apply` writes it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Alternative>,
}

/// A change equivalent to a suggestion's, with other parts.
#[derive(Debug, Clone, Serialize)]
pub struct Alternative {
    pub change: String,
    pub cost: String,
    pub parts: Vec<String>,
    pub value: f64,
    pub gain: f64,
    pub gain_pct: f64,
    pub bound_mb_s: f64,
}

/// The ranked changes for one goal.
#[derive(Debug, Clone, Serialize)]
pub struct Advice {
    pub goal: Goal,
    pub goal_text: String,
    /// The workload the goal is judged on, as given to the simulator.
    pub workload: WorkloadSpec,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// Today's value, bound and bottleneck.
    pub value: f64,
    pub bound_mb_s: f64,
    pub bottleneck: Bottleneck,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// Candidates considered, refused by the loader, pruned by the bound, simulated.
    pub considered: usize,
    pub invalid: usize,
    pub pruned: usize,
    pub simulated: usize,
    /// The changes that improve the value, best first.
    pub suggestions: Vec<Suggestion>,
}

/// A run's rate in MB/s, the quantity the bound limits: a scrub's or rebuild's logical
/// rate, else the total.
fn rate_mb_s(r: &iopath_model::report::Report) -> f64 {
    r.pool.as_ref().and_then(|p| p.maintenance.as_ref()).map(|m| m.rate_mb_s).unwrap_or(r.total.mb_s)
}

/// One candidate loaded and bounded, ready to simulate.
struct Loaded {
    change: Change,
    topo: Topology,
    text: String,
    bound: f64,
}

/// The topology as written, as a topology file.
pub fn to_toml(raw: &iopath_model::topology::RawTopology) -> Result<String, String> {
    toml::to_string(raw).map_err(|e| e.to_string())
}

/// A change applied: its file text and the topology loaded from it (`None`: the loader
/// refused it).
fn load_change(t: &Topology, c: &Change) -> Option<(String, Topology)> {
    let text = to_toml(&c.raw).ok()?;
    let topo = Topology::parse(&t.file, &text, t.catalog()).ok()?;
    Some((text, topo))
}

/// Ranks the candidate changes of `t` for `goal`, the workload `user` as written.
pub fn advise(
    t: &Topology,
    goal: &Goal,
    user: &WorkloadSpec,
    opts: &AdviseOptions,
    sim: &SimOptions,
) -> Result<Advice, AdviseError> {
    let spec = goal.workload(t, user)?;
    let w = spec
        .resolve()
        .map_err(|e| AdviseError::Workload(e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("; ")))?;
    let base = simulate(t, &w, sim)?;
    let base_score = goal.score(t, &spec, &base);
    let base_rate = rate_mb_s(&base);
    let base_bound = workload_bound(t, &w).unwrap_or(f64::INFINITY);
    let changes = candidates::candidates(t);
    let considered = changes.len();
    let loaded: Vec<Option<Loaded>> = changes
        .into_par_iter()
        .map(|mut change| {
            let (text, topo) = load_change(t, &change)?;
            let bound = workload_bound(&topo, &w)?;
            if change.kind == ChangeKind::PoolLayout
                && let Some(id) = spec.pool.as_deref().or(t.pools.first().map(|p| p.id.as_str()))
                && let Some(note) = candidates::capacity_note(t, &topo, id)
            {
                change.cost = format!("{note}; {}", change.cost);
            }
            Some(Loaded { change, topo, text, bound })
        })
        .collect();
    let invalid = loaded.iter().filter(|l| l.is_none()).count();
    // The simulator's rate never exceeds the bound (they share every cost), so a change
    // whose bound is within 0.5% of today's rate cannot raise it.
    let mut keep: Vec<Loaded> = loaded.into_iter().flatten().filter(|l| l.bound > base_rate * 1.005).collect();
    let pruned = considered - invalid - keep.len();
    // Highest bound first; ties in candidate order (a stable sort).
    keep.sort_by(|a, b| b.bound.total_cmp(&a.bound));
    keep.truncate(opts.max_simulated);
    let simulated = keep.len();
    let higher = goal.higher_is_better(&spec);
    let runs: Vec<Result<Suggestion, SimError>> = keep
        .into_par_iter()
        .map(|l| {
            let r = simulate(&l.topo, &w, sim)?;
            let s = goal.score(&l.topo, &spec, &r);
            let gain = if higher { s.value - base_score.value } else { base_score.value - s.value };
            let price = opts
                .prices
                .as_ref()
                .and_then(|p| l.change.parts.iter().map(|id| p.get(id).copied()).sum::<Option<f64>>());
            Ok(Suggestion {
                kind: l.change.kind,
                change: l.change.summary,
                cost: l.change.cost,
                parts: l.change.parts,
                slots_added: l.change.slots_added,
                price,
                value: s.value,
                gain,
                gain_pct: if base_score.value.is_finite() && base_score.value > 0.0 {
                    100.0 * gain / base_score.value
                } else {
                    0.0
                },
                bound_mb_s: l.bound,
                bottleneck: r.bottleneck,
                met: s.met,
                topology_toml: l.text,
                alternatives: Vec::new(),
            })
        })
        .collect();
    let mut suggestions = Vec::new();
    for r in runs {
        let s = r?;
        // Less than 0.5% better is within a run's noise: not worth a change.
        if s.gain.is_finite() && s.gain > 0.005 * base_score.value.abs() {
            suggestions.push(s);
        }
    }
    rank(&mut suggestions, opts.prices.is_some(), base_score.value.abs());
    if opts.prices.is_none() {
        // With a price list the parts' prices tell equivalent changes apart.
        suggestions =
            merge_equivalent(suggestions, base_score.value.abs(), |id| t.catalog().get(id).map(|p| p.name.clone()));
    }
    Ok(Advice {
        goal: goal.clone(),
        goal_text: goal.describe(),
        workload: spec.clone(),
        unit: goal.unit(&spec),
        higher_is_better: higher,
        value: base_score.value,
        bound_mb_s: base_bound,
        bottleneck: base.bottleneck,
        met: base_score.met,
        target: goal.target(t, &spec),
        considered,
        invalid,
        pruned,
        simulated,
        suggestions,
    })
}

/// Best first: changes that meet the goal, then by gain, rounded to 1% of today's value
/// (then fewer slots, fewer parts bought); with a price list, by gain per
/// money (a change that buys nothing first, then priced ones, then those with a part the
/// list lacks). Ties keep their order (stable).
pub(crate) fn rank(s: &mut [Suggestion], priced: bool, base: f64) {
    let step = if base > 0.0 { 0.01 * base } else { 1.0 };
    let per_money = |x: &Suggestion| -> (u8, f64) {
        if !priced {
            return (0, (x.gain / step).round());
        }
        match x.price {
            _ if x.parts.is_empty() => (0, x.gain),
            Some(p) if p > 0.0 => (1, x.gain / p),
            Some(_) => (0, x.gain),
            None => (2, x.gain),
        }
    };
    s.sort_by(|a, b| {
        let (ma, mb) = (a.met == Some(true), b.met == Some(true));
        let (ca, ga) = per_money(a);
        let (cb, gb) = per_money(b);
        mb.cmp(&ma)
            .then(ca.cmp(&cb))
            .then(gb.total_cmp(&ga))
            .then(a.slots_added.cmp(&b.slots_added))
            .then(a.parts.len().cmp(&b.parts.len()))
            .then(b.gain.total_cmp(&a.gain))
    });
}

/// The change with its parts' ids and names blanked: what equivalent changes share.
fn shape(x: &Suggestion, name: &impl Fn(&str) -> Option<String>) -> String {
    let mut c = x.change.clone();
    for id in &x.parts {
        if let Some(n) = name(id).filter(|n| !n.is_empty()) {
            c = c.replace(&n, "\u{b7}");
        }
        c = c.replace(id.as_str(), "\u{b7}");
    }
    c
}

/// Folds suggestions that differ only in the part bought into the best of them (ranked
/// first): the same kind and change with the parts blanked, the same new bottleneck, slots
/// added and goal state, and a gain in the same 1%-of-today bucket. What binds afterwards is
/// then the same place, so the parts are alternatives for one change, not different changes.
pub(crate) fn merge_equivalent(
    ranked: Vec<Suggestion>,
    base: f64,
    name: impl Fn(&str) -> Option<String>,
) -> Vec<Suggestion> {
    let step = if base > 0.0 { 0.01 * base } else { 1.0 };
    let key = |x: &Suggestion| {
        (x.kind, shape(x, &name), x.bottleneck.id.clone(), x.slots_added, x.met, (x.gain / step).round() as i64)
    };
    let mut out: Vec<Suggestion> = Vec::new();
    let mut keys = Vec::new();
    for x in ranked {
        let k = key(&x);
        if x.parts.is_empty() {
            out.push(x);
            keys.push(None);
            continue;
        }
        match keys.iter().position(|e| e.as_ref() == Some(&k)) {
            Some(i) => out[i].alternatives.push(Alternative {
                change: x.change,
                cost: x.cost,
                parts: x.parts,
                value: x.value,
                gain: x.gain,
                gain_pct: x.gain_pct,
                bound_mb_s: x.bound_mb_s,
            }),
            None => {
                out.push(x);
                keys.push(Some(k));
            }
        }
    }
    out
}

/// A price list as the user writes it: CSV lines `part,price` (a header line `part,price`
/// and `#` comments allowed). `Err` names the line.
pub fn parse_prices(text: &str) -> Result<BTreeMap<String, f64>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let Some((part, price)) = l.split_once(',') else {
            return Err(format!("line {}: expected `part,price`, found {l:?}", i + 1));
        };
        let (part, price) = (part.trim().trim_matches('"'), price.trim().trim_matches('"'));
        if i == 0 && part.eq_ignore_ascii_case("part") {
            continue;
        }
        match price.parse::<f64>() {
            Ok(p) if p.is_finite() && p >= 0.0 => {
                out.insert(part.to_string(), p);
            }
            _ => return Err(format!("line {}: price {price:?} of {part:?} is not a non-negative number", i + 1)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_lists_read_with_a_header_and_comments() {
        let p = parse_prices("part,price\n# mine\njmb585, 35\n\"lsi-sas2308\",\"89.5\"\n").unwrap();
        assert_eq!(p.get("jmb585"), Some(&35.0));
        assert_eq!(p.get("lsi-sas2308"), Some(&89.5));
        assert!(parse_prices("jmb585;35").unwrap_err().starts_with("line 1:"));
        assert!(parse_prices("jmb585,-1").unwrap_err().contains("not a non-negative number"));
    }

    fn s(gain: f64, parts: &[&str], price: Option<f64>, slots: u32) -> Suggestion {
        Suggestion {
            kind: ChangeKind::ReplaceController,
            change: format!("{gain}"),
            cost: String::new(),
            parts: parts.iter().map(|p| p.to_string()).collect(),
            slots_added: slots,
            price,
            value: 0.0,
            gain,
            gain_pct: 0.0,
            bound_mb_s: 0.0,
            bottleneck: Bottleneck::default(),
            met: None,
            topology_toml: String::new(),
            alternatives: Vec::new(),
        }
    }

    #[test]
    fn changes_that_differ_only_in_the_part_fold_into_the_best() {
        // Today 1000 MB/s; three replacements of hba with the same new bottleneck: two gain
        // +400 (within 1% of 1000 of each other), one +300. A spread with no part stays.
        let named = |change: &str, part: &str, gain: f64| {
            let mut x = s(gain, &[part], None, 0);
            x.change = change.to_string();
            x.bottleneck.id = "d0.media".into();
            x
        };
        let v = vec![
            named("replace hba (jmb585) with lsi-sas3008 (LSI SAS3008)", "lsi-sas3008", 401.0),
            named("replace hba (jmb585) with lsi-sas2308 (LSI SAS2308)", "lsi-sas2308", 398.0),
            named("replace hba (jmb585) with asm1166 (ASMedia ASM1166)", "asm1166", 300.0),
            s(390.0, &[], None, 0),
        ];
        let names = |id: &str| {
            Some(
                match id {
                    "lsi-sas3008" => "LSI SAS3008",
                    "lsi-sas2308" => "LSI SAS2308",
                    _ => "ASMedia ASM1166",
                }
                .to_string(),
            )
        };
        let m = merge_equivalent(v, 1000.0, names);
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!(m[0].parts, ["lsi-sas3008"]);
        assert_eq!(m[0].alternatives.len(), 1);
        assert_eq!(m[0].alternatives[0].parts, ["lsi-sas2308"]);
        // A gain 100 MB/s lower (10% of today) is another suggestion, as is a change with
        // another bottleneck.
        assert_eq!(m[1].parts, ["asm1166"]);
        assert!(m[1].alternatives.is_empty() && m[2].parts.is_empty());
        let mut other = named("replace hba (jmb585) with lsi-sas2308 (LSI SAS2308)", "lsi-sas2308", 401.0);
        other.bottleneck.id = "hba.uplink.up".into();
        let first = named("replace hba (jmb585) with lsi-sas3008 (LSI SAS3008)", "lsi-sas3008", 401.0);
        assert_eq!(merge_equivalent(vec![first, other], 1000.0, names).len(), 2);
    }

    #[test]
    fn ranking_by_gain_then_slots_or_by_gain_per_money() {
        // Gains within 1% of today's 1000 count as equal: the one taking no slot wins.
        let mut v = vec![s(150.0, &["a"], None, 1), s(149.0, &["b"], None, 0), s(10.0, &[], None, 0)];
        rank(&mut v, false, 1000.0);
        assert_eq!(v.iter().map(|x| x.change.as_str()).collect::<Vec<_>>(), ["149", "150", "10"]);
        // With prices: a free change first, then 100 per 10 (10/unit) before 150 per 100.
        let mut v = vec![s(150.0, &["a"], Some(100.0), 0), s(100.0, &["b"], Some(10.0), 0), s(5.0, &[], None, 0)];
        rank(&mut v, true, 1000.0);
        assert_eq!(v.iter().map(|x| x.change.as_str()).collect::<Vec<_>>(), ["5", "100", "150"]);
    }
}
