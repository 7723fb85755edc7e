//! Least-squares fit of free part figures to measured points.
//!
//! Each point is predicted by simulating the workload it was measured with on the topology
//! with the free figures set (`Topology::with_overrides`), for at most
//! [`FitOptions::max_runtime_s`] simulated seconds with a fixed seed, so the objective is a
//! deterministic function of the figures. Residuals are `sqrt(weight) * (ln predicted -
//! ln observed)`. A figure bounded by `LO..HI` is optimised as `logit((v - LO)/(HI - LO))`,
//! one with no upper bound as `ln(v - LO)`, so every step stays inside the bounds. The
//! Jacobian is taken by central differences in that space; the simulations of one Jacobian
//! (2 x free figures x points) run in parallel with rayon.
//!
//! Uncertainty: covariance `s^2 (J^T J)^-1` in the transformed space (`s^2` = weighted sum of
//! squared residuals / (points - free figures)), mapped back with the delta method.

use super::CalibrateError;
use super::measurements::{Metric, Point};
use iopath_model::catalog::{Figure, Kind, Part, Value, figure_names, figure_spec, suggest};
use iopath_model::report::Report;
use iopath_model::toml_out::{self, WriteError};
use iopath_model::topology::ParamOverride;
use iopath_model::{Topology, catalog};
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A free figure as written: `NODE.PARAM` or `NODE.PARAM=LO..HI`.
#[derive(Debug, Clone, PartialEq)]
pub struct FreeSpec {
    pub node: String,
    pub param: String,
    pub bounds: Option<(f64, f64)>,
}

impl std::str::FromStr for FreeSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (lhs, rhs) = match s.split_once('=') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (s.trim(), None),
        };
        let (node, param) = lhs
            .split_once('.')
            .filter(|(n, p)| !n.is_empty() && !p.is_empty())
            .ok_or_else(|| format!("{s:?} is not NODE.PARAM[=LO..HI], e.g. hba.dma_read_efficiency=0.5..1"))?;
        let bounds = match rhs {
            None => None,
            Some(r) => {
                let (a, b) = r.split_once("..").ok_or_else(|| format!("{s:?}: bounds are LO..HI, e.g. 0.5..1"))?;
                let (a, b) = match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
                    (Ok(a), Ok(b)) if a.is_finite() && !b.is_nan() => (a, b),
                    _ => return Err(format!("{s:?}: LO and HI must be numbers, e.g. 0.5..1")),
                };
                if a >= b {
                    return Err(format!("{s:?}: LO must be below HI (got {a} >= {b})"));
                }
                Some((a, b))
            }
        };
        Ok(FreeSpec { node: node.to_string(), param: param.to_string(), bounds })
    }
}

/// A free figure resolved against a topology.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Free {
    pub node: String,
    pub param: String,
    /// The node's part: the fitted figure is written on it.
    pub part: String,
    pub part_name: String,
    pub kind: Kind,
    /// Every node built from that part: the figure is set on all of them while fitting, as
    /// the part file will set it.
    pub nodes: Vec<String>,
    pub lo: f64,
    pub hi: f64,
    pub start: f64,
}

impl Free {
    pub fn name(&self) -> String {
        format!("{}.{}", self.node, self.param)
    }
    fn to_x(&self, v: f64) -> f64 {
        if self.hi.is_finite() {
            let p = ((v - self.lo) / (self.hi - self.lo)).clamp(1e-9, 1.0 - 1e-9);
            (p / (1.0 - p)).ln()
        } else {
            (v - self.lo).max(1e-12).ln()
        }
    }
    fn to_v(&self, x: f64) -> f64 {
        if self.hi.is_finite() { self.lo + (self.hi - self.lo) / (1.0 + (-x).exp()) } else { self.lo + x.exp() }
    }
    /// dv/dx at x.
    fn slope(&self, x: f64) -> f64 {
        if self.hi.is_finite() {
            let s = 1.0 / (1.0 + (-x).exp());
            (self.hi - self.lo) * s * (1.0 - s)
        } else {
            x.exp()
        }
    }
}

/// Resolves `--free` specs: the node exists, the figure is a number its kind accepts, the
/// bounds lie inside the figure's range (the default bounds).
pub fn resolve_free(topo: &Topology, specs: &[FreeSpec]) -> Result<Vec<Free>, CalibrateError> {
    let bad = |m: String| {
        let (figure, message) =
            m.split_once(": ").map(|(a, b)| (a.to_string(), b.to_string())).unwrap_or((m, String::new()));
        CalibrateError::Free { figure, message }
    };
    let mut out: Vec<Free> = Vec::new();
    for s in specs {
        let name = format!("{}.{}", s.node, s.param);
        let Some(ix) = topo.node(&s.node) else {
            let sug = suggest(&s.node, topo.nodes.iter().map(|n| n.id.as_str()));
            let hint = if sug.is_empty() { String::new() } else { format!("; did you mean {}?", sug.join(", ")) };
            return Err(bad(format!(
                "{name}: no node or drive has id {:?} in {}{hint} (ids are listed by `iopath check`)",
                s.node, topo.file
            )));
        };
        let n = &topo.nodes[ix];
        let Some(spec) = figure_spec(n.kind, &s.param) else {
            let sug = suggest(&s.param, figure_names(n.kind));
            let hint = if sug.is_empty() { String::new() } else { format!("; did you mean {}?", sug.join(", ")) };
            return Err(bad(format!(
                "{name}: {:?} is not a figure of a {}{hint} (a {} has: {})",
                s.param,
                n.kind,
                n.kind,
                figure_names(n.kind).collect::<Vec<_>>().join(", ")
            )));
        };
        if spec.ty != catalog::FigureType::Num {
            return Err(bad(format!("{name}: {} is not a number ({}); only numbers can be fitted", s.param, spec.doc)));
        }
        let (rlo, rhi) = spec.range;
        let (lo, hi) = s.bounds.unwrap_or((rlo, rhi));
        if lo < rlo || hi > rhi {
            return Err(bad(format!("{name}={lo}..{hi}: outside the figure's range {rlo}..{rhi} ({})", spec.doc)));
        }
        if out.iter().any(|f| f.part == n.part && f.param == s.param) {
            return Err(bad(format!("{name}: {} of part {} is already free (through another node)", s.param, n.part)));
        }
        let mid = if hi.is_finite() { lo + 0.5 * (hi - lo) } else { lo + 1.0 };
        let start = match n.figures.get(&s.param).map(|f| &f.value) {
            Some(Value::Num(v)) => *v,
            _ => mid,
        };
        // Start strictly inside the bounds: a transformed parameter at a bound cannot move.
        let span = if hi.is_finite() { hi - lo } else { start.abs().max(1.0) };
        let start = start.clamp(lo + 1e-6 * span, if hi.is_finite() { hi - 1e-6 * span } else { f64::INFINITY });
        let nodes: Vec<String> = topo.nodes.iter().filter(|m| m.part == n.part).map(|m| m.id.clone()).collect();
        out.push(Free {
            node: s.node.clone(),
            param: s.param.clone(),
            part: n.part.clone(),
            part_name: n.part_name.clone(),
            kind: n.kind,
            nodes,
            lo,
            hi,
            start,
        });
    }
    Ok(out)
}

/// How points are simulated and how long the fit may run.
#[derive(Debug, Clone)]
pub struct FitOptions<'a> {
    /// Simulated seconds per point at most (the measured runtime, capped here).
    pub max_runtime_s: f64,
    /// Seed of every simulation.
    pub seed: u64,
    /// Seeds per point (the mean is used).
    pub replications: u32,
    /// Residual evaluations at most (each is one simulation per point).
    pub max_evaluations: usize,
    /// Central-difference step in the transformed space.
    pub step: f64,
    /// Figure overrides for every point (`--set`).
    pub sets: Vec<ParamOverride>,
    pub cancel: Option<&'a AtomicBool>,
}

impl Default for FitOptions<'_> {
    fn default() -> Self {
        FitOptions {
            max_runtime_s: 2.0,
            seed: 1,
            replications: 1,
            max_evaluations: 60,
            step: 0.01,
            sets: Vec::new(),
            cancel: None,
        }
    }
}

/// Progress of a fit, reported after every residual evaluation.
#[derive(Debug, Clone, Copy)]
pub struct FitProgress {
    pub evaluations: usize,
    pub simulations: usize,
    pub rms_log: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct ErrorStats {
    /// Root mean square of ln(predicted / observed).
    pub rms_log: f64,
    /// Mean absolute percentage error [%].
    pub mape_pct: f64,
}

impl ErrorStats {
    pub fn of(pred: &[f64], obs: &[f64]) -> ErrorStats {
        let n = pred.len().max(1) as f64;
        let rms = (pred.iter().zip(obs).map(|(p, o)| (p / o).ln().powi(2)).sum::<f64>() / n).sqrt();
        let mape = pred.iter().zip(obs).map(|(p, o)| (p / o - 1.0).abs()).sum::<f64>() / n * 100.0;
        ErrorStats { rms_log: rms, mape_pct: mape }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedParam {
    pub node: String,
    pub param: String,
    pub part: String,
    pub part_name: String,
    pub kind: Kind,
    pub nodes: Vec<String>,
    pub lo: f64,
    pub hi: f64,
    pub start: f64,
    pub value: f64,
    /// Standard error (delta method); `None` with no more points than free figures.
    pub std_err: Option<f64>,
    /// How it was fitted, when not by simulating the points (the host's CPU time per I/O).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl FittedParam {
    /// The result for the free figure `f`: its identity and bounds, with what the fit found.
    pub fn of(f: &Free, value: f64, std_err: Option<f64>, source: Option<String>) -> FittedParam {
        FittedParam {
            node: f.node.clone(),
            param: f.param.clone(),
            part: f.part.clone(),
            part_name: f.part_name.clone(),
            kind: f.kind,
            nodes: f.nodes.clone(),
            lo: f.lo,
            hi: f.hi,
            start: f.start,
            value,
            std_err,
            source,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointResult {
    pub label: String,
    pub workload: String,
    pub metric: Metric,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<String>,
    pub observed: f64,
    pub before: f64,
    pub after: f64,
    pub err_before_pct: f64,
    pub err_after_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitResult {
    pub params: Vec<FittedParam>,
    pub points: Vec<PointResult>,
    pub before: ErrorStats,
    pub after: ErrorStats,
    /// Correlations of the fitted figures (pairs, in the transformed space).
    pub correlations: Vec<(String, String, f64)>,
    pub warnings: Vec<String>,
    pub evaluations: usize,
    pub simulations: usize,
    pub termination: String,
}

/// One simulation of one point with figure overrides.
fn simulate_point(
    topo: &Topology,
    overrides: &[ParamOverride],
    p: &Point,
    opts: &FitOptions,
) -> Result<Report, String> {
    let mut all = opts.sets.clone();
    all.extend(overrides.iter().cloned());
    all.extend(p.sets.iter().cloned());
    let t = if all.is_empty() { topo.clone() } else { topo.with_overrides(&all).map_err(|e| e.to_string())? };
    let mut spec = p.spec.clone();
    let secs = p.runtime_s.unwrap_or(opts.max_runtime_s).min(opts.max_runtime_s).max(0.05);
    spec.runtime = Some(format!("{}ms", (secs * 1000.0).round() as u64));
    spec.ramp = None;
    spec.seed = Some(spec.seed.unwrap_or(opts.seed));
    let w = spec.resolve().map_err(|e| e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("; "))?;
    iopath_sim::replicate(
        &t,
        &w,
        opts.replications.max(1),
        &iopath_sim::SimOptions { cancel: opts.cancel, ..Default::default() },
    )
    .map_err(|e| e.to_string())
}

/// The value of a report that a point observed.
pub fn point_value(r: &Report, p: &Point) -> f64 {
    match (&p.drive, p.metric) {
        (None, Metric::MbS) => r.total.mb_s,
        (None, Metric::Iops) => r.total.iops,
        (Some(d), m) => {
            r.drive(d).map(|x| if m == Metric::MbS { x.read_mb_s + x.write_mb_s } else { x.iops }).unwrap_or(0.0)
        }
    }
}

/// Simulated reports of every point on the topology as it is (for `iopath compare`).
pub fn predict_reports(topo: &Topology, points: &[Point], opts: &FitOptions) -> Vec<Result<Report, String>> {
    points.par_iter().map(|p| simulate_point(topo, &[], p, opts)).collect()
}

fn overrides_of(frees: &[Free], values: &[f64]) -> Vec<ParamOverride> {
    frees
        .iter()
        .zip(values)
        .flat_map(|(f, v)| {
            f.nodes.iter().map(move |n| ParamOverride {
                node: n.clone(),
                param: f.param.clone(),
                value: Value::Num(*v),
            })
        })
        .collect()
}

struct Problem<'a> {
    topo: &'a Topology,
    frees: &'a [Free],
    points: &'a [Point],
    opts: &'a FitOptions<'a>,
    x: DVector<f64>,
    resid: Option<DVector<f64>>,
    evaluations: AtomicUsize,
    simulations: AtomicUsize,
    error: std::sync::Mutex<Option<String>>,
    progress: &'a (dyn Fn(FitProgress) + Sync),
}

impl Problem<'_> {
    fn values(&self, x: &DVector<f64>) -> Vec<f64> {
        self.frees.iter().zip(x.iter()).map(|(f, x)| f.to_v(*x)).collect()
    }

    /// Predictions at many parameter vectors, all simulations in parallel.
    fn predict_many(&self, xs: &[DVector<f64>]) -> Option<Vec<Vec<f64>>> {
        if self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some("interrupted".into());
            return None;
        }
        let ovs: Vec<Vec<ParamOverride>> = xs.iter().map(|x| overrides_of(self.frees, &self.values(x))).collect();
        let jobs: Vec<(usize, usize)> =
            (0..xs.len()).flat_map(|k| (0..self.points.len()).map(move |i| (k, i))).collect();
        let res: Vec<Result<f64, String>> = jobs
            .par_iter()
            .map(|&(k, i)| {
                let p = &self.points[i];
                simulate_point(self.topo, &ovs[k], p, self.opts)
                    .map(|r| point_value(&r, p))
                    .map_err(|e| format!("{}: {e}", p.label))
            })
            .collect();
        self.simulations.fetch_add(jobs.len(), Ordering::Relaxed);
        let mut out = vec![vec![0.0; self.points.len()]; xs.len()];
        for (&(k, i), r) in jobs.iter().zip(res) {
            match r {
                Ok(v) => out[k][i] = v,
                Err(e) => {
                    *self.error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                    return None;
                }
            }
        }
        Some(out)
    }

    fn residuals_of(&self, pred: &[f64]) -> DVector<f64> {
        DVector::from_iterator(
            pred.len(),
            pred.iter().zip(self.points).map(|(p, pt)| pt.weight.sqrt() * (p.max(1e-9).ln() - pt.observed.ln())),
        )
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x = x.clone();
        self.resid = self.predict_many(std::slice::from_ref(x)).map(|p| self.residuals_of(&p[0]));
        let n = self.evaluations.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(r) = &self.resid {
            (self.progress)(FitProgress {
                evaluations: n,
                simulations: self.simulations.load(Ordering::Relaxed),
                rms_log: (r.norm_squared() / r.len().max(1) as f64).sqrt(),
            });
        }
    }

    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        if self.evaluations.load(Ordering::Relaxed) >= self.opts.max_evaluations.max(2) {
            // Budget spent: stop here (the last accepted parameters are kept).
            return None;
        }
        self.resid.clone()
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let k = self.x.len();
        let h = self.opts.step;
        let mut xs = Vec::with_capacity(2 * k);
        for j in 0..k {
            for s in [h, -h] {
                let mut x = self.x.clone();
                x[j] += s;
                xs.push(x);
            }
        }
        let preds = self.predict_many(&xs)?;
        let m = self.points.len();
        let mut jac = DMatrix::zeros(m, k);
        for j in 0..k {
            let rp = self.residuals_of(&preds[2 * j]);
            let rm = self.residuals_of(&preds[2 * j + 1]);
            for (i, (a, b)) in rp.iter().zip(rm.iter()).enumerate() {
                jac[(i, j)] = (a - b) / (2.0 * h);
            }
        }
        Some(jac)
    }
}

/// Fits the free figures to the points. `progress` is called after every evaluation.
pub fn fit(
    topo: &Topology,
    frees: &[Free],
    points: &[Point],
    opts: &FitOptions,
    progress: &(dyn Fn(FitProgress) + Sync),
) -> Result<FitResult, CalibrateError> {
    if frees.is_empty() {
        return Err(CalibrateError::NothingToFit);
    }
    if points.is_empty() {
        return Err(CalibrateError::NoPoints);
    }
    for p in points {
        if !(p.observed.is_finite() && p.observed > 0.0) {
            return Err(CalibrateError::Point {
                point: p.label.clone(),
                message: format!("observed value {} is not positive", p.observed),
            });
        }
    }
    let x0 = DVector::from_iterator(frees.len(), frees.iter().map(|f| f.to_x(f.start)));
    let mut prob = Problem {
        topo,
        frees,
        points,
        opts,
        x: x0.clone(),
        resid: None,
        evaluations: AtomicUsize::new(0),
        simulations: AtomicUsize::new(0),
        error: std::sync::Mutex::new(None),
        progress,
    };
    let run_err = |p: &Problem| {
        CalibrateError::Run(
            p.error.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_else(|| "simulation failed".into()),
        )
    };
    prob.set_params(&x0);
    let before: Vec<f64> = match &prob.resid {
        Some(r) => r.iter().zip(points).map(|(r, p)| (r / p.weight.sqrt() + p.observed.ln()).exp()).collect(),
        None => return Err(run_err(&prob)),
    };
    let lm = LevenbergMarquardt::new().with_patience(opts.max_evaluations.max(2)).with_xtol(1e-6).with_ftol(1e-8);
    let (mut prob, report) = lm.minimize(prob);
    if let Some(e) = prob.error.lock().unwrap_or_else(|e| e.into_inner()).clone() {
        return Err(CalibrateError::Run(e));
    }
    // The minimiser may stop having evaluated a rejected step: re-evaluate at its answer.
    let x = prob.x.clone();
    prob.evaluations.store(0, Ordering::Relaxed);
    prob.set_params(&x);
    let resid = prob.resid.clone().ok_or_else(|| run_err(&prob))?;
    let after: Vec<f64> =
        resid.iter().zip(points).map(|(r, p)| (r / p.weight.sqrt() + p.observed.ln()).exp()).collect();
    let jac = prob.jacobian().ok_or_else(|| run_err(&prob))?;

    let (m, k) = (points.len(), frees.len());
    let mut warnings = Vec::new();
    let jtj = jac.transpose() * &jac;
    let inv =
        jtj.clone().try_inverse().filter(|i| i.iter().all(|v| v.is_finite())).unwrap_or_else(|| {
            jtj.clone().pseudo_inverse(1e-12).unwrap_or_else(|_| DMatrix::from_element(k, k, f64::NAN))
        });
    let s2 = if m > k { Some(resid.norm_squared() / (m - k) as f64) } else { None };
    if s2.is_none() {
        warnings
            .push(format!("{m} points for {k} free figures: no standard errors (give more points than free figures)"));
    }
    for (j, f) in frees.iter().enumerate() {
        if jac.column(j).iter().all(|v| v.abs() < 1e-9) {
            warnings.push(format!(
                "{} changes no prediction: these points say nothing about it (it never binds in them)",
                f.name()
            ));
        }
    }
    let mut correlations = Vec::new();
    for (a, fa) in frees.iter().enumerate() {
        for (b, fb) in frees.iter().enumerate().skip(a + 1) {
            let c = inv[(a, b)] / (inv[(a, a)] * inv[(b, b)]).sqrt();
            let c = if c.is_finite() { c.clamp(-1.0, 1.0) } else { 1.0 };
            correlations.push((fa.name(), fb.name(), c));
            if c.abs() > 0.95 {
                warnings.push(format!(
                    "{} and {} cannot be told apart by these points (correlation {c:+.3}): add points where only \
                     one of them binds (other block sizes, drive counts or queue depths), or fix one of them",
                    fa.name(),
                    fb.name()
                ));
            }
        }
    }
    let params: Vec<FittedParam> = frees
        .iter()
        .enumerate()
        .map(|(j, f)| {
            let value = f.to_v(x[j]);
            let std_err = s2.map(|s2| f.slope(x[j]) * (s2 * inv[(j, j)]).max(0.0).sqrt()).filter(|v| v.is_finite());
            if f.hi.is_finite() && ((value - f.lo) < 1e-4 * (f.hi - f.lo) || (f.hi - value) < 1e-4 * (f.hi - f.lo)) {
                warnings.push(format!(
                    "{} ended at a bound ({value:.6}, bounds {}..{}): the data want it further; check the bounds and the topology",
                    f.name(),
                    f.lo,
                    f.hi
                ));
            }
            FittedParam::of(f, value, std_err, None)
        })
        .collect();
    let termination = if matches!(report.termination, levenberg_marquardt::TerminationReason::User(_)) {
        warnings.push(format!(
            "stopped after {} evaluations without converging; raise the evaluation limit to go on",
            opts.max_evaluations.max(2)
        ));
        "evaluation budget spent".to_string()
    } else {
        format!("{:?}", report.termination)
    };
    let obs: Vec<f64> = points.iter().map(|p| p.observed).collect();
    let pts = points
        .iter()
        .enumerate()
        .map(|(i, p)| PointResult {
            label: p.label.clone(),
            workload: p.workload.clone(),
            metric: p.metric,
            drive: p.drive.clone(),
            observed: p.observed,
            before: before[i],
            after: after[i],
            err_before_pct: (before[i] / p.observed - 1.0) * 100.0,
            err_after_pct: (after[i] / p.observed - 1.0) * 100.0,
        })
        .collect();
    Ok(FitResult {
        params,
        points: pts,
        before: ErrorStats::of(&before, &obs),
        after: ErrorStats::of(&after, &obs),
        correlations,
        warnings,
        evaluations: report.number_of_evaluations,
        simulations: prob.simulations.load(Ordering::Relaxed),
        termination,
    })
}

/// Rounds to 6 significant digits (the fit is never that precise; the file stays readable).
fn tidy(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let mag = 10f64.powi(5 - v.abs().log10().floor() as i32);
    (v * mag).round() / mag
}

fn tidy_text(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 { format!("{v:.2e}") } else { format!("{}", tidy(v)) }
}

/// A part file with the fitted figures, loadable with `iopath --parts FILE`: one `[[part]]`
/// per part, each figure with its source (the files, the points and the error) and
/// `basis = "fit"`.
pub fn part_file(r: &FitResult, files: &[String]) -> Result<String, WriteError> {
    let mut parts: Vec<Part> = Vec::new();
    for p in &r.params {
        let se = p.std_err.map(|s| format!(", standard error {}", tidy_text(s))).unwrap_or_default();
        let source = p.source.clone().unwrap_or_else(|| {
            format!(
                "iopath fit: {}, {} points, RMS log error {:.4} -> {:.4} (MAPE {:.1}% -> {:.1}%), via node {}{se}",
                files.join(", "),
                r.points.len(),
                r.before.rms_log,
                r.after.rms_log,
                r.before.mape_pct,
                r.after.mape_pct,
                p.node
            )
        });
        let at = match parts.iter().position(|x| x.id == p.part) {
            Some(i) => i,
            None => {
                parts.push(Part {
                    id: p.part.clone(),
                    kind: p.kind,
                    name: p.part_name.clone(),
                    aliases: Vec::new(),
                    pci_ids: Vec::new(),
                    notes: String::new(),
                    figures: Default::default(),
                });
                parts.len() - 1
            }
        };
        let figure = Figure { value: Value::Num(tidy(p.value)), source, basis: "fit".into() };
        parts[at].figures.insert(p.param.clone(), figure);
    }
    toml_out::part_file(
        &parts,
        &[
            "Written by `iopath fit`; load it with `iopath --parts FILE ...`.".into(),
            "Fitted figures override the catalog's for these parts.".into(),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_part_file_loads_back_with_the_fitted_figures() {
        let free = |node: &str, param: &str, part: &str, kind| Free {
            node: node.into(),
            param: param.into(),
            part: part.into(),
            part_name: part.to_uppercase(),
            kind,
            nodes: vec![node.into()],
            lo: 0.0,
            hi: f64::INFINITY,
            start: 1.0,
        };
        // Two figures of one controller and one of a drive; 0.8123456 is tidied to 6 digits.
        let params = vec![
            FittedParam::of(
                &free("hba", "dma_read_efficiency", "asm1166", Kind::Controller),
                0.8123456,
                Some(0.01),
                None,
            ),
            FittedParam::of(&free("hba", "max_iops", "asm1166", Kind::Controller), 250_000.0, None, None),
            FittedParam::of(&free("D", "seq_read_mb_s", "kingston-dc600m-1920", Kind::Drive), 512.5, None, None),
        ];
        let stats = ErrorStats { rms_log: 0.1, mape_pct: 10.0 };
        let r = FitResult {
            params,
            points: Vec::new(),
            before: stats,
            after: stats,
            correlations: Vec::new(),
            warnings: Vec::new(),
            evaluations: 0,
            simulations: 0,
            termination: String::new(),
        };
        let text = part_file(&r, &["ramp.json".into()]).unwrap();
        assert!(text.contains("figures.max_iops = { value = 250000, source = \"iopath fit: ramp.json"), "{text}");
        let mut cat = iopath_model::Catalog::builtin();
        cat.overlay("fitted.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let hba = cat.get("asm1166").unwrap();
        assert_eq!(hba.figures["dma_read_efficiency"].value, Value::Num(0.812346), "{text}");
        assert_eq!(hba.figures["max_iops"].value, Value::Num(250_000.0));
        assert!(hba.figures["dma_read_efficiency"].source.contains("standard error 0.01"), "{text}");
        let d = &cat.get("kingston-dc600m-1920").unwrap().figures["seq_read_mb_s"];
        assert_eq!((&d.value, d.basis.as_str()), (&Value::Num(512.5), "fit"));
        assert_eq!(text.matches("[[part]]").count(), 2, "one table per part:\n{text}");
    }

    #[test]
    fn free_specs_parse_and_reject() {
        let f: FreeSpec = "pm.switch_cost_us=0..50".parse().unwrap();
        assert_eq!((f.node.as_str(), f.param.as_str(), f.bounds), ("pm", "switch_cost_us", Some((0.0, 50.0))));
        assert_eq!("hba.lanes".parse::<FreeSpec>().unwrap().bounds, None);
        for bad in ["hba", ".x", "a.b=1", "a.b=2..1", "a.b=1..1", "a.b=x..2"] {
            assert!(bad.parse::<FreeSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn transforms_stay_in_bounds_and_invert() {
        let mk = |lo, hi| Free {
            node: "n".into(),
            param: "p".into(),
            part: "q".into(),
            part_name: "Q".into(),
            kind: Kind::Controller,
            nodes: vec!["n".into()],
            lo,
            hi,
            start: 1.0,
        };
        for f in [mk(0.05, 1.0), mk(0.0, 1e5), mk(1.0, f64::INFINITY)] {
            for v in [0.06, 0.5, 0.99, 3.0, 12.0] {
                if v <= f.lo || v >= f.hi {
                    continue;
                }
                assert!((f.to_v(f.to_x(v)) - v).abs() < 1e-9 * v.max(1.0), "{v} in {}..{}", f.lo, f.hi);
                let h = 1e-6;
                let num = (f.to_v(f.to_x(v) + h) - f.to_v(f.to_x(v) - h)) / (2.0 * h);
                assert!((num - f.slope(f.to_x(v))).abs() < 1e-4 * num.abs().max(1e-9));
            }
            for x in [-50.0, -5.0, 0.0, 5.0, 30.0] {
                let v = f.to_v(x);
                assert!(v >= f.lo && v <= f.hi, "{x} -> {v}");
            }
        }
    }

    #[test]
    fn error_stats() {
        let e = ErrorStats::of(&[110.0, 90.0], &[100.0, 100.0]);
        assert!((e.mape_pct - 10.0).abs() < 1e-9);
        assert!((e.rms_log - ((1.1f64.ln().powi(2) + 0.9f64.ln().powi(2)) / 2.0).sqrt()).abs() < 1e-12);
    }
}
