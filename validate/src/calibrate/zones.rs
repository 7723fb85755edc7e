//! An HDD's outer and inner media rates fitted to a surface scan (`iopath measure
//! --surface`, [`Surface`]), for `fit --free D.outer_mb_s --free D.inner_mb_s`.
//!
//! The model is the simulator's zone geometry ([`zone_rate`], `sim::hdd`): the rate at the
//! LBA share `x` is `r(x) = sqrt(O^2 (1 - x) + I^2 x)`. Its square is linear in `x`, so an
//! ordinary least-squares line through `(x, r^2)` gives the start (`O^2` the intercept,
//! `I^2` the value at 1); Gauss-Newton steps on the rates themselves (the residuals
//! `r_i - r(x_i)`, whose Jacobian is `dr/dO = O (1 - x) / r`, `dr/dI = I x / r`) then
//! minimise the squared error in MB/s, which the squared rates would weight towards the
//! fast outer edge. Standard errors are the usual `s^2 (J^T J)^-1` with `s^2` the residual
//! variance over `n - 2` degrees of freedom. Each point sits at the middle of what it read
//! ([`SurfacePoint::mid_fraction`](iopath_model::surface::SurfacePoint::mid_fraction)).

use super::CalibrateError;
use iopath_model::surface::{SURFACE_KIND, Surface, zone_rate};
use std::path::Path;

/// The fitted rates [MB/s] with their standard errors (`None` with only two points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneFit {
    pub outer_mb_s: f64,
    pub inner_mb_s: f64,
    pub outer_se: Option<f64>,
    pub inner_se: Option<f64>,
    /// Root mean square of the residuals [MB/s].
    pub rms_mb_s: f64,
    /// Points fitted.
    pub points: usize,
}

/// A surface scan file, or `None` when the file is some other measurement (a report, a
/// sweep, fio JSON or CSV: not JSON with `kind = "surface"`).
pub fn read_surface(path: &Path) -> Result<Option<Surface>, CalibrateError> {
    let file = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| CalibrateError::Read { file: file.clone(), cause: e.to_string() })?;
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return Ok(None) };
    if v.get("kind").and_then(|k| k.as_str()) != Some(SURFACE_KIND) {
        return Ok(None);
    }
    serde_json::from_value(v)
        .map(Some)
        .map_err(|e| CalibrateError::Format { file, message: format!("not a surface scan iopath can read: {e}") })
}

/// The points of a scan to fit: `(LBA share, MB/s)` of every point with a result.
pub fn surface_points(s: &Surface) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .filter(|p| p.error.is_none() && p.mb_s > 0.0)
        .map(|p| (p.mid_fraction(s.size_bytes), p.mb_s))
        .collect()
}

/// Fits `O` and `I` to `(x, MB/s)` points (see the module's text for the method).
pub fn fit_zones(points: &[(f64, f64)]) -> Result<ZoneFit, CalibrateError> {
    let n = points.len();
    let spread = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min)
        ..=points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if n < 2 || spread.end() - spread.start() < 0.1 {
        return Err(CalibrateError::Free {
            figure: "outer_mb_s, inner_mb_s".into(),
            message: format!(
                "a surface fit needs at least 2 points spread over 10% of the drive or more; the scan has {n} with a result"
            ),
        });
    }
    // The start: least squares of r^2 = a + b x.
    let nf = n as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(sx, sy), p| (sx + p.0, sy + p.1 * p.1));
    let (mx, my) = (sx / nf, sy / nf);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 * p.1 - my)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let mut o = a.max(1e-6).sqrt();
    let mut i = (a + b).max(1e-6).sqrt();
    // Gauss-Newton on the rates.
    let jac = |o: f64, i: f64, x: f64| {
        let r = zone_rate(o, i, x).max(1e-9);
        (o * (1.0 - x) / r, i * x / r)
    };
    let mut jtj = [[0.0; 2]; 2];
    for _ in 0..50 {
        let (mut g, mut h) = ([0.0; 2], [[0.0; 2]; 2]);
        for &(x, y) in points {
            let res = y - zone_rate(o, i, x);
            let (jo, ji) = jac(o, i, x);
            g[0] += jo * res;
            g[1] += ji * res;
            h[0][0] += jo * jo;
            h[0][1] += jo * ji;
            h[1][1] += ji * ji;
        }
        h[1][0] = h[0][1];
        jtj = h;
        let det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
        if det.abs() < 1e-12 {
            break;
        }
        let d_o = (h[1][1] * g[0] - h[0][1] * g[1]) / det;
        let d_i = (h[0][0] * g[1] - h[1][0] * g[0]) / det;
        o = (o + d_o).max(1e-6);
        i = (i + d_i).max(1e-6);
        if d_o.abs() + d_i.abs() < 1e-9 * (o + i) {
            break;
        }
    }
    let ssr: f64 = points.iter().map(|&(x, y)| (y - zone_rate(o, i, x)).powi(2)).sum();
    let det = jtj[0][0] * jtj[1][1] - jtj[0][1] * jtj[1][0];
    let (outer_se, inner_se) = if n > 2 && det.abs() > 1e-12 {
        let s2 = ssr / (nf - 2.0);
        (Some((s2 * jtj[1][1] / det).sqrt()), Some((s2 * jtj[0][0] / det).sqrt()))
    } else {
        (None, None)
    };
    Ok(ZoneFit { outer_mb_s: o, inner_mb_s: i, outer_se, inner_se, rms_mb_s: (ssr / nf).sqrt(), points: n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Points on the model's own curve for a drive of 260 MB/s outer and 120 MB/s inner
    /// (a 3.5" 7,200 rpm drive's shape: inner about half of outer), with 2% Gaussian-ish
    /// noise (the sum of 4 uniforms, scaled to that standard deviation), fixed seed.
    fn synthetic(n: usize, noise: f64, seed: u64) -> Vec<(f64, f64)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|k| {
                let x = k as f64 / (n - 1) as f64;
                // Four uniforms on [-0.5, 0.5] sum to variance 4/12: scale by sqrt(3).
                let z: f64 = (0..4).map(|_| ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) - 0.5).sum::<f64>()
                    * 3f64.sqrt();
                (x, zone_rate(260.0, 120.0, x) * (1.0 + noise * z))
            })
            .collect()
    }

    #[test]
    fn the_fit_recovers_the_rates_of_a_noiseless_curve() {
        let f = fit_zones(&synthetic(11, 0.0, 1)).unwrap();
        assert!((f.outer_mb_s - 260.0).abs() < 1e-6, "{f:?}");
        assert!((f.inner_mb_s - 120.0).abs() < 1e-6, "{f:?}");
        assert!(f.rms_mb_s < 1e-6);
    }

    #[test]
    fn the_fit_recovers_the_rates_through_noise_within_its_standard_errors() {
        // 2% noise on ~200 MB/s is ~4 MB/s per point; over 41 points the ends are known to
        // about 4 / sqrt(41 / 4) ~ 1.3 MB/s (less well at the slow inner end, where 2% is
        // less and the curve flatter: ~1.6): each rate within 3 standard errors, and so
        // within 3 x 1.6 / 120 = 4% of the truth.
        for seed in 1..=5 {
            let f = fit_zones(&synthetic(41, 0.02, seed)).unwrap();
            let (so, si) = (f.outer_se.unwrap(), f.inner_se.unwrap());
            assert!((f.outer_mb_s - 260.0).abs() <= 3.0 * so, "seed {seed}: {f:?}");
            assert!((f.inner_mb_s - 120.0).abs() <= 3.0 * si, "seed {seed}: {f:?}");
            assert!((f.outer_mb_s / 260.0 - 1.0).abs() < 0.04 && (f.inner_mb_s / 120.0 - 1.0).abs() < 0.04, "{f:?}");
            // The residuals are the noise: about 2% of the mean rate (~195 MB/s) = 3.9 MB/s.
            assert!(f.rms_mb_s > 2.0 && f.rms_mb_s < 6.0, "{f:?}");
        }
    }

    #[test]
    fn a_flat_surface_fits_equal_rates_and_too_few_points_are_refused() {
        // A loop device or an SSD: no zones, outer = inner.
        let flat: Vec<(f64, f64)> = (0..5).map(|k| (k as f64 / 4.0, 31.5)).collect();
        let f = fit_zones(&flat).unwrap();
        assert!((f.outer_mb_s - 31.5).abs() < 1e-6 && (f.inner_mb_s - 31.5).abs() < 1e-6, "{f:?}");
        assert!(fit_zones(&[(0.0, 100.0)]).is_err());
        assert!(fit_zones(&[(0.5, 100.0), (0.52, 99.0), (0.55, 98.0)]).is_err());
    }
}
