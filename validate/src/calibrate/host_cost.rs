//! The host's CPU time per I/O (`cpu_per_io_us`), fitted from measured runs that carry CPU
//! time rather than by simulation: a measured report's `cost.cpu_s` is the measuring
//! process's user + system time (getrusage), which covers submission, reaping completions
//! and the interrupt work the kernel charges to it, and `cost.ios` its completed I/Os. CPU
//! seconds are core-seconds, so `sum cpu_s / sum ios` is the time of one I/O on one core,
//! what the figure means (`host.cpu` in the model divides it by the host's cores).

use super::fit::{FitResult, FittedParam, Free};
use super::{CalibrateError, Measured};
use iopath_model::catalog::Kind;
use serde_json::Value;

/// CPU time per I/O over a set of measured runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuCost {
    /// CPU time of one I/O on one core [us].
    pub per_io_us: f64,
    /// CPU seconds summed over the runs.
    pub cpu_s: f64,
    /// I/Os summed over the runs.
    pub ios: u64,
    /// Runs that carried CPU time.
    pub runs: usize,
    /// The files they came from, as named.
    pub files: Vec<String>,
}

impl CpuCost {
    /// The source string of the fitted figure: the measurements and the arithmetic.
    pub fn source(&self) -> String {
        format!(
            "iopath fit from measured CPU time: {}, {} runs, {:.4} CPU s over {} I/Os = {:.3} us per I/O on one core (the measuring process's user + system time)",
            self.files.join(", "),
            self.runs,
            self.cpu_s,
            self.ios,
            self.per_io_us
        )
    }
}

/// Whether a free figure is the host's CPU cost per I/O, which is fitted from CPU time.
pub fn is_cpu_cost(f: &Free) -> bool {
    f.kind == Kind::Host && f.param == "cpu_per_io_us"
}

/// The CPU cost per I/O of the measured runs in `files` (name, contents): iopath reports and
/// sweeps whose `cost` carries `cpu_s` (measured runs do; simulated ones do not).
pub fn cpu_per_io(files: &[(String, Measured)]) -> Result<CpuCost, CalibrateError> {
    let (mut cpu_s, mut ios, mut runs, mut names) = (0.0, 0u64, 0usize, Vec::new());
    for (name, m) in files {
        let reports: Vec<&Value> = match m {
            Measured::Report(v) => vec![v],
            Measured::Sweep(v) => v["points"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("report").filter(|r| !r.is_null()))
                .collect(),
            Measured::Fio { .. } | Measured::Table(_) => Vec::new(),
        };
        let before = runs;
        for r in reports {
            let (Some(c), Some(n)) = (r["cost"]["cpu_s"].as_f64(), r["cost"]["ios"].as_u64()) else { continue };
            if !(c.is_finite() && c >= 0.0) {
                return Err(CalibrateError::Format {
                    file: name.clone(),
                    message: format!("cost.cpu_s is {c}: expected CPU seconds, 0 or more"),
                });
            }
            if n > 0 {
                cpu_s += c;
                ios += n;
                runs += 1;
            }
        }
        if runs > before {
            names.push(name.clone());
        }
    }
    if ios == 0 || cpu_s <= 0.0 {
        return Err(CalibrateError::Free {
            figure: "cpu_per_io_us".to_string(),
            message: "no measured run carries CPU time and completed I/Os (a report's cost.cpu_s and cost.ios): \
                      the host's CPU cost per I/O is fitted from reports of measured runs, not from rates"
                .to_string(),
        });
    }
    Ok(CpuCost { per_io_us: cpu_s / ios as f64 * 1e6, cpu_s, ios, runs, files: names })
}

/// The fitted figure, for the result and the part file.
pub fn cpu_param(f: &Free, c: &CpuCost) -> FittedParam {
    FittedParam::of(f, c.per_io_us.clamp(f.lo, f.hi), None, Some(c.source()))
}

/// A fit result with no simulated figures (only figures fitted directly, added after).
pub fn direct_result() -> FitResult {
    FitResult {
        params: Vec::new(),
        points: Vec::new(),
        before: Default::default(),
        after: Default::default(),
        correlations: Vec::new(),
        warnings: Vec::new(),
        evaluations: 0,
        simulations: 0,
        termination: "fitted from measured CPU time, no simulation".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(cpu_s: Option<f64>, ios: u64) -> Measured {
        let mut cost = serde_json::json!({ "events": 0, "ios": ios, "wall_s": 1.0, "sim_s": 1.0 });
        if let Some(c) = cpu_s {
            cost["cpu_s"] = c.into();
        }
        Measured::Report(serde_json::json!({ "kind": "measured", "total": {}, "workload": {}, "cost": cost }))
    }

    #[test]
    fn cpu_seconds_over_ios_summed_over_runs() {
        // 0.30 s over 100,000 I/Os and 0.10 s over 100,000: 0.40 s / 200,000 = 2.0 us.
        let files = vec![
            ("a.json".to_string(), report(Some(0.30), 100_000)),
            ("b.json".to_string(), report(Some(0.10), 100_000)),
            ("sim.json".to_string(), report(None, 5_000_000)),
        ];
        let c = cpu_per_io(&files).unwrap();
        assert!((c.per_io_us - 2.0).abs() < 1e-9, "{c:?}");
        assert_eq!((c.ios, c.runs, c.files.clone()), (200_000, 2, vec!["a.json".to_string(), "b.json".to_string()]));
        assert!(c.source().contains("a.json, b.json") && c.source().contains("2.000 us"), "{}", c.source());
    }

    #[test]
    fn reports_without_cpu_time_are_refused_with_a_reason() {
        let e = cpu_per_io(&[("sim.json".to_string(), report(None, 10))]).unwrap_err();
        assert!(e.to_string().contains("cpu_per_io_us") && e.to_string().contains("cost.cpu_s"), "{e}");
        let e = cpu_per_io(&[("bad.json".to_string(), report(Some(-1.0), 10))]).unwrap_err();
        assert!(e.to_string().starts_with("bad.json: cost.cpu_s is -1"), "{e}");
    }
}
