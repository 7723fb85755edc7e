//! Sweep points checked before any of them runs: every point's topology (its part-figure
//! overrides) and workload pass the checks a single run makes, so a configuration error in
//! one point is found before the first point is simulated, not after the others ran.
//!
//! Problems are in the library's terms (an axis and its value, a workload field, a
//! simulator error); the caller names them as its user wrote them (a command line adds the
//! option that gave the value).

use crate::run::{MAX_OUTSTANDING_IOS, SimError, target_drives};
use crate::sweep::{Axis, apply_workload};
use iopath_model::pool::vary::PoolOverride;
use iopath_model::topology::ParamOverride;
use iopath_model::{Topology, Workload, WorkloadSpec};

/// One axis at one value: `bs` = `4k`, or the part figure `hba.lanes` = `2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisValue {
    /// The workload option (`bs`) or `NODE.PARAM`.
    pub param: String,
    /// The value as written.
    pub value: String,
}

impl AxisValue {
    /// Whether the axis overrides a part figure (`NODE.PARAM`) rather than a workload option.
    pub fn is_figure(&self) -> bool {
        self.param.contains('.')
    }

    /// Whether the axis sets a pool's option (`pool.ID.FIELD`, [`iopath_model::pool::vary`]).
    pub fn is_pool(&self) -> bool {
        iopath_model::pool::vary::is_pool_param(&self.param)
    }
}

/// Why a sweep point cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PointProblem {
    /// A value is empty (`1,,2`).
    #[error("{}: an empty value", .at.param)]
    Empty {
        /// The axis and its (empty) value.
        at: AxisValue,
    },
    /// A value is not one its axis takes (`iodepth` = `x`, `hba.lanes` = `a=b`).
    #[error("{message}")]
    Value {
        /// The axis and the value.
        at: AxisValue,
        /// What is wrong with it.
        message: String,
    },
    /// A part-figure override the topology refuses; the text is the located diagnostic,
    /// whose origin the caller named.
    #[error("{0}")]
    Figure(String),
    /// The point's workload is invalid (a field out of range after the axes were applied).
    #[error("{field}: {message}")]
    Workload {
        /// The values that make up the point.
        at: Vec<AxisValue>,
        /// The workload field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The workload cannot run on the point's topology (drives it names, I/Os it keeps).
    #[error("{error}")]
    Run {
        /// The values that make up the point.
        at: Vec<AxisValue>,
        /// The simulator's refusal.
        error: SimError,
    },
}

/// The checks a run makes before it allocates anything: the drives it names exist and the
/// I/Os it keeps outstanding (jobs x iodepth) are at most [`MAX_OUTSTANDING_IOS`].
pub fn check_runnable(t: &Topology, w: &Workload) -> Result<(), SimError> {
    let targets = target_drives(t, w)?;
    // The same count `simulate` refuses on (run.rs): a copy is one job, else numjobs per drive.
    let jobs = crate::run::jobs_count(w, targets.len());
    if jobs * u64::from(w.iodepth) > MAX_OUTSTANDING_IOS {
        return Err(SimError::TooManyIos { jobs, iodepth: w.iodepth, max: MAX_OUTSTANDING_IOS });
    }
    Ok(())
}

/// Every point of a sweep over `axes`, each as its axis values.
pub fn points(axes: &[Axis]) -> Vec<Vec<AxisValue>> {
    let mut combos: Vec<Vec<AxisValue>> = vec![Vec::new()];
    for x in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                x.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(AxisValue { param: x.param.clone(), value: v.clone() });
                    c
                })
            })
            .collect()
    }
    combos
}

/// Checks every point of a sweep before any runs and returns every problem found, each once,
/// in point order. `origin` names an override as the caller's user wrote it; it appears in
/// the topology's diagnostics (`origin(&AxisValue { param: "hba.lanes", value: "3" })`).
pub fn check_points(
    topo: &Topology,
    base: &WorkloadSpec,
    axes: &[Axis],
    origin: &dyn Fn(&AxisValue) -> String,
) -> Vec<PointProblem> {
    let mut problems: Vec<PointProblem> = Vec::new();
    let mut add = |p: PointProblem| {
        if !problems.contains(&p) {
            problems.push(p);
        }
    };
    for point in points(axes) {
        let mut spec = base.clone();
        let mut overrides = Vec::new();
        let mut origins = Vec::new();
        let mut pools = Vec::new();
        let mut pool_origins = Vec::new();
        let mut ok = true;
        for at in &point {
            if at.value.trim().is_empty() {
                add(PointProblem::Empty { at: at.clone() });
                ok = false;
            } else if at.is_pool() {
                match format!("{}={}", at.param, at.value).parse::<PoolOverride>() {
                    Ok(o) => {
                        pools.push(o);
                        pool_origins.push(origin(at));
                    }
                    Err(message) => {
                        add(PointProblem::Value { at: at.clone(), message });
                        ok = false;
                    }
                }
            } else if at.is_figure() {
                match format!("{}={}", at.param, at.value).parse::<ParamOverride>() {
                    Ok(o) => {
                        overrides.push(o);
                        origins.push(origin(at));
                    }
                    Err(message) => {
                        add(PointProblem::Value { at: at.clone(), message });
                        ok = false;
                    }
                }
            } else if let Err(message) = apply_workload(&mut spec, &at.param, &at.value) {
                add(PointProblem::Value { at: at.clone(), message });
                ok = false;
            }
        }
        if !ok {
            continue;
        }
        let owned;
        let t = if overrides.is_empty() && pools.is_empty() {
            topo
        } else {
            match topo.with_changes(&overrides, &origins, &pools, &pool_origins) {
                Ok(t) => {
                    owned = t;
                    &owned
                }
                Err(e) => {
                    for d in &e.diagnostics {
                        add(PointProblem::Figure(d.to_string()));
                    }
                    continue;
                }
            }
        };
        match spec.resolve() {
            Ok(w) => {
                if let Err(error) = check_runnable(t, &w) {
                    add(PointProblem::Run { at: point.clone(), error });
                }
            }
            Err(errs) => {
                for e in errs {
                    add(PointProblem::Workload { at: point.clone(), field: e.field.to_string(), message: e.message });
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::Catalog;

    const TOPO: &str = r#"
[host]
part = "amd-am5"
[[node]]
id = "hba"
part = "asm1166"
parent = "host"
[[drive]]
id = "ssd"
count = 2
part = "micron-5300pro-3840"
parent = "hba"
"#;

    fn topo() -> Topology {
        Topology::parse("t.toml", TOPO, &Catalog::builtin()).unwrap()
    }

    fn axis(p: &str, v: &str) -> Axis {
        Axis::parse(p, v).unwrap()
    }

    fn origin(a: &AxisValue) -> String {
        format!("<{}={}>", a.param, a.value)
    }

    #[test]
    fn points_are_every_combination_in_order() {
        let p = points(&[axis("bs", "4k,1m"), axis("iodepth", "1,8")]);
        let flat: Vec<String> = p
            .iter()
            .map(|c| c.iter().map(|a| format!("{}={}", a.param, a.value)).collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(flat, ["bs=4k iodepth=1", "bs=4k iodepth=8", "bs=1m iodepth=1", "bs=1m iodepth=8"]);
    }

    #[test]
    fn a_good_sweep_has_no_problems() {
        let base = WorkloadSpec { rw: Some("read".into()), ..Default::default() };
        assert!(check_points(&topo(), &base, &[axis("active", "1..2"), axis("bs", "4k,1m")], &origin).is_empty());
    }

    #[test]
    fn too_many_active_drives_is_found_at_its_point_only() {
        let p = check_points(&topo(), &WorkloadSpec::default(), &[axis("active", "1..3")], &origin);
        assert_eq!(p.len(), 1, "{p:?}");
        match &p[0] {
            PointProblem::Run { at, error: SimError::TooManyActive { asked: 3, have: 2 } } => {
                assert_eq!(at, &[AxisValue { param: "active".into(), value: "3".into() }]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn too_many_outstanding_ios_is_found_before_running() {
        // 2 drives x 8 jobs x 65,536 = 2^20 is allowed; 16 jobs is one step past it.
        let base = WorkloadSpec { iodepth: Some(65_536), ..Default::default() };
        let p = check_points(&topo(), &base, &[axis("numjobs", "8,16")], &origin);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            matches!(&p[0], PointProblem::Run { at, error: SimError::TooManyIos { jobs: 32, .. } } if at[0].value == "16"),
            "{p:?}"
        );
    }

    #[test]
    fn bad_values_and_figures_are_each_reported_once() {
        let p = check_points(
            &topo(),
            &WorkloadSpec::default(),
            &[axis("iodepth", "1,x"), axis("hba.lanes", "1,3")],
            &origin,
        );
        // iodepth=x fails at two points, hba.lanes=3 at one (the other is skipped by x): once each.
        assert_eq!(p.iter().filter(|p| matches!(p, PointProblem::Value { at, .. } if at.value == "x")).count(), 1);
        let figs: Vec<&PointProblem> = p.iter().filter(|p| matches!(p, PointProblem::Figure(_))).collect();
        assert_eq!(figs.len(), 1, "{p:?}");
        assert!(figs[0].to_string().contains("<hba.lanes=3>"), "the caller's origin names it: {}", figs[0]);
    }

    #[test]
    fn a_workload_field_out_of_range_names_the_field() {
        let p = check_points(&topo(), &WorkloadSpec::default(), &[axis("rwmixread", "50,101")], &origin);
        assert!(
            matches!(&p[..], [PointProblem::Workload { field, at, .. }] if field == "rwmixread" && at[0].value == "101"),
            "{p:?}"
        );
    }
}
