//! What `advise` and `plan` optimize: a goal, the workload it is judged on, and its score.

use iopath_model::bound::{Mix, bound};
use iopath_model::paths::ResourceGraph;
use iopath_model::report::Report;
use iopath_model::{Topology, WorkloadSpec};
use serde::Serialize;

/// What a change should improve.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "goal", rename_all = "kebab-case")]
pub enum Goal {
    /// The workload's own answer: its total MB/s, or a scrub's or rebuild's hours.
    Answer,
    /// Every drive reading at its own full sequential rate, all at once.
    AllDrivesFullSpeed,
    /// The client's network link (or the server NIC's port) the element that binds.
    SaturateClient,
    /// A scrub of the pool in at most this many hours.
    ScrubUnder { hours: f64 },
    /// A rebuild of one member in at most this many hours.
    RebuildUnder { hours: f64 },
    /// At least this many IOPS.
    Iops { iops: f64 },
}

/// Why a goal cannot be judged on a topology, or was written wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GoalError {
    #[error(
        "unknown goal {0:?}: expected all-drives-full-speed, saturate-client, scrub-under HOURS, rebuild-under HOURS or iops N"
    )]
    Unknown(String),
    #[error("goal {goal}: {value:?} is not {what}")]
    Value { goal: String, value: String, what: &'static str },
    #[error("goal {goal} needs {what} in the topology")]
    Needs { goal: &'static str, what: &'static str },
}

/// A goal's measure of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score {
    /// In `unit`.
    pub value: f64,
    /// Whether the goal is met (`None` for [`Goal::Answer`], which has no target).
    pub met: Option<bool>,
}

/// A duration in hours: "12h", "90m", "1.5" (hours).
fn hours(goal: &str, s: &str) -> Result<f64, GoalError> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix('h') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("min") {
        (n, 1.0 / 60.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1.0 / 60.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 24.0 * 365.0 => Ok(v * scale),
        _ => Err(GoalError::Value {
            goal: goal.to_string(),
            value: s.to_string(),
            what: "a positive duration of at most a year (\"12h\", \"90m\")",
        }),
    }
}

impl Goal {
    /// Parses a goal as written: its name and, for the goals with a target, the target
    /// (`["scrub-under", "12h"]`, or one word `scrub-under=12h`).
    pub fn parse(words: &[String]) -> Result<Goal, GoalError> {
        let joined = words.join(" ");
        let (name, arg) = match words {
            [one] => match one.split_once(['=', ' ']) {
                Some((n, a)) => (n.to_string(), Some(a.to_string())),
                None => (one.clone(), None),
            },
            [n, a] => (n.clone(), Some(a.clone())),
            _ => return Err(GoalError::Unknown(joined)),
        };
        let need = |what: &'static str| GoalError::Value { goal: name.clone(), value: String::new(), what };
        match (name.as_str(), arg) {
            ("answer", None) => Ok(Goal::Answer),
            ("all-drives-full-speed", None) => Ok(Goal::AllDrivesFullSpeed),
            ("saturate-client", None) => Ok(Goal::SaturateClient),
            ("scrub-under", Some(a)) => Ok(Goal::ScrubUnder { hours: hours(&name, &a)? }),
            ("rebuild-under", Some(a)) => Ok(Goal::RebuildUnder { hours: hours(&name, &a)? }),
            ("scrub-under" | "rebuild-under", None) => Err(need("given: add a number of hours (\"12h\")")),
            ("iops", Some(a)) => match a.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 1e9 => Ok(Goal::Iops { iops: v }),
                _ => Err(GoalError::Value { goal: name, value: a, what: "a number of IOPS from 1 to 10^9" }),
            },
            ("iops", None) => Err(need("given: add the IOPS wanted (\"iops 50000\")")),
            _ => Err(GoalError::Unknown(joined)),
        }
    }

    /// The goal as a person reads it.
    pub fn describe(&self) -> String {
        match self {
            Goal::Answer => "the workload's answer".into(),
            Goal::AllDrivesFullSpeed => "all drives at full sequential speed at once".into(),
            Goal::SaturateClient => "the client's network link saturated".into(),
            Goal::ScrubUnder { hours } => format!("a scrub in under {hours:.1} h"),
            Goal::RebuildUnder { hours } => format!("a rebuild in under {hours:.1} h"),
            Goal::Iops { iops } => format!("at least {iops:.0} IOPS"),
        }
    }

    /// The workload the goal is judged on: the user's, with what the goal implies filled
    /// in where the user left it open (a scrub of the first pool, a client's reads, ...).
    pub fn workload(&self, t: &Topology, user: &WorkloadSpec) -> Result<WorkloadSpec, GoalError> {
        let mut s = user.clone();
        let first_pool = || t.pools.first().map(|p| p.id.clone());
        match self {
            Goal::Answer => {}
            Goal::AllDrivesFullSpeed => {
                s.rw.get_or_insert_with(|| "read".into());
                s.bs.get_or_insert_with(|| "1m".into());
                s.iodepth.get_or_insert(8);
                // Every drive at once: no subset, no pool.
                s.active = None;
                s.drives = None;
                s.pool = None;
                s.client = None;
                s.task = None;
            }
            Goal::SaturateClient => {
                if s.client.is_none() {
                    let c =
                        t.clients.first().ok_or(GoalError::Needs { goal: "saturate-client", what: "a [[client]]" })?;
                    s.client = Some(c.id.clone());
                }
                if s.pool.is_none() {
                    s.pool = Some(first_pool().ok_or(GoalError::Needs {
                        goal: "saturate-client",
                        what: "a [[pool]] (a client's requests are simulated against a pool)",
                    })?);
                }
                s.rw.get_or_insert_with(|| "read".into());
                s.bs.get_or_insert_with(|| "1m".into());
                s.iodepth.get_or_insert(8);
            }
            Goal::ScrubUnder { .. } | Goal::RebuildUnder { .. } => {
                let (goal, task) = if matches!(self, Goal::ScrubUnder { .. }) {
                    ("scrub-under", "scrub")
                } else {
                    ("rebuild-under", "rebuild")
                };
                if s.pool.is_none() {
                    s.pool = Some(first_pool().ok_or(GoalError::Needs { goal, what: "a [[pool]]" })?);
                }
                s.task = Some(task.into());
                s.client = None;
                s.fill.get_or_insert_with(|| "60%".into());
                s.bs.get_or_insert_with(|| "1m".into());
                s.iodepth.get_or_insert(8);
                if task == "rebuild" && s.failed.is_none() {
                    let pool = s.pool.as_deref().and_then(|id| t.pool(id));
                    let first = pool.and_then(|p| p.members().next()).map(|d| t.nodes[d].id.clone());
                    s.failed = first.map(|d| vec![d]);
                }
            }
            Goal::Iops { .. } => {
                if s.rw.is_none() {
                    s.rw = Some("randread".into());
                    s.bs.get_or_insert_with(|| "4k".into());
                    s.iodepth.get_or_insert(32);
                }
            }
        }
        Ok(s)
    }

    /// The unit of [`Score::value`] for a workload: hours for a scrub or rebuild, IOPS for
    /// an IOPS goal, else MB/s.
    pub fn unit(&self, spec: &WorkloadSpec) -> &'static str {
        match self {
            Goal::Iops { .. } => "IOPS",
            _ if is_task(spec) => "h",
            _ => "MB/s",
        }
    }

    /// Whether a larger value is better (hours are not).
    pub fn higher_is_better(&self, spec: &WorkloadSpec) -> bool {
        self.unit(spec) != "h"
    }

    /// The goal's target in its unit, where it has one: for all drives at full speed, the
    /// sum of each drive's own bound alone (its link and media with nothing shared).
    pub fn target(&self, t: &Topology, spec: &WorkloadSpec) -> Option<f64> {
        match self {
            Goal::Answer | Goal::SaturateClient => None,
            Goal::AllDrivesFullSpeed => {
                let g = ResourceGraph::new(t);
                let bs = spec.resolve().ok()?.bs.get();
                let mix = if spec.rw.as_deref() == Some("write") { Mix::Write } else { Mix::Read };
                Some(t.drives.iter().map(|&d| bound(t, &g, &[d], mix, bs, false).total_mb_s).sum())
            }
            Goal::ScrubUnder { hours } | Goal::RebuildUnder { hours } => Some(*hours),
            Goal::Iops { iops } => Some(*iops),
        }
    }

    /// The goal's measure of a run of [`Goal::workload`] on `t`.
    pub fn score(&self, t: &Topology, spec: &WorkloadSpec, r: &Report) -> Score {
        let value = match self.unit(spec) {
            "h" => r.pool.as_ref().and_then(|p| p.maintenance.as_ref()).map(|m| m.hours).unwrap_or(f64::INFINITY),
            "IOPS" => r.total.iops,
            _ => r.total.mb_s,
        };
        let met = match self {
            Goal::Answer => None,
            // Within 3% of the sum of the drives' own rates: a run's window and an HDD's
            // zone position move a rate by about that much.
            Goal::AllDrivesFullSpeed => self.target(t, spec).map(|x| value >= 0.97 * x),
            Goal::SaturateClient => Some(saturates_client(t, spec, r)),
            Goal::ScrubUnder { hours } | Goal::RebuildUnder { hours } => Some(value <= *hours),
            Goal::Iops { iops } => Some(value >= *iops),
        };
        Score { value, met }
    }
}

fn is_task(spec: &WorkloadSpec) -> bool {
    matches!(spec.task.as_deref(), Some("scrub" | "rebuild"))
}

/// Whether the run's bottleneck is the client's own link or its server NIC port, at 95%
/// or more.
fn saturates_client(t: &Topology, spec: &WorkloadSpec, r: &Report) -> bool {
    let Some(c) = spec.client.as_deref().and_then(|id| t.client(id)) else { return false };
    let nic_port = format!("{}.p{}.", t.nodes[c.nic].id, c.port);
    let own = format!("client.{}.link.", c.id);
    r.bottleneck.util >= 0.95 && (r.bottleneck.id.starts_with(&own) || r.bottleneck.id.starts_with(&nic_port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn goals_parse_with_their_targets() {
        assert_eq!(Goal::parse(&w(&["all-drives-full-speed"])).unwrap(), Goal::AllDrivesFullSpeed);
        assert_eq!(Goal::parse(&w(&["scrub-under", "12h"])).unwrap(), Goal::ScrubUnder { hours: 12.0 });
        // 90 minutes = 1.5 h.
        assert_eq!(Goal::parse(&w(&["rebuild-under=90m"])).unwrap(), Goal::RebuildUnder { hours: 1.5 });
        assert_eq!(Goal::parse(&w(&["iops", "50000"])).unwrap(), Goal::Iops { iops: 50000.0 });
        assert!(matches!(Goal::parse(&w(&["iops"])), Err(GoalError::Value { .. })));
        assert!(matches!(Goal::parse(&w(&["scrub-under", "-3h"])), Err(GoalError::Value { .. })));
        assert!(matches!(Goal::parse(&w(&["fastest"])), Err(GoalError::Unknown(_))));
    }
}
