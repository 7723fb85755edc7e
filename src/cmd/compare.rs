//! `iopath compare TOPOLOGY MEASUREMENTS...`: predicted against measured, point by point:
//! the error of each point, the mean absolute percentage error, the worst point, and
//! (`--out DIR`) a plot of the measured markers over the predicted line.
use super::fit::{MeasuredArgs, load_points};
use super::{CliError, CliResult, print_json, print_text};
use iopath_model::Catalog;
use iopath_model::report::{Sweep, SweepPoint};
use iopath_reports::export::COMPARE_SET;
use iopath_reports::plot::{MeasuredSeries, PlotOptions};
use iopath_validate::calibrate::{self, Metric};
use iopath_validate::compare::{Comparison, Row};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub measured: MeasuredArgs,
    /// Print the comparison as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Write the chart of measured markers over the predicted line as one file (.svg or
    /// .png, by extension), or compare.svg and compare.png as a directory (no extension, an
    /// existing directory, or ending in /), swapped in whole; an existing DIR must hold only
    /// those files, and a symbolic link is refused.
    #[arg(long, value_name = "FILE|DIR")]
    pub out: Option<PathBuf>,
    /// No notes on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: CompareArgs, cat: &Catalog) -> CliResult {
    use iopath_reports::export::{Bare, OutFormat};
    let out = match &a.out {
        Some(p) => Some(super::output::target("--out", p, &[OutFormat::Svg, OutFormat::Png], Bare::Dir, COMPARE_SET)?),
        None => None,
    };
    let (topo, opts) = a.measured.topology_and_options(cat)?;
    let (points, _) = load_points(&a.measured.measurements, &a.measured.map, &topo)?;
    let reports = calibrate::predict_reports(&topo, &points, &opts);
    let interrupted = opts.cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
    if interrupted {
        eprintln!("warning: interrupted: predictions after Ctrl-C cover only part of their runs");
    }
    let mut rows = Vec::new();
    let mut sim = Vec::new();
    for (p, r) in points.iter().zip(reports) {
        let r = r.map_err(|e| CliError::runtime(anyhow::anyhow!("{}: {e}", p.label)))?;
        rows.push(Row::new(p, calibrate::fit::point_value(&r, p)));
        sim.push(r);
    }
    if let Some(out) = &out {
        // x: the number of drives when that tells the points apart, else the point's index.
        let ndrives: Vec<usize> = sim.iter().map(|r| r.drives.len()).collect();
        let mut uniq = ndrives.clone();
        uniq.sort_unstable();
        uniq.dedup();
        let by_drives = uniq.len() == ndrives.len();
        let x = |i: usize| if by_drives { ndrives[i] as f64 } else { (i + 1) as f64 };
        let mut order: Vec<usize> =
            (0..rows.len()).filter(|&i| points[i].metric == Metric::MbS && points[i].drive.is_none()).collect();
        order.sort_by(|&i, &j| x(i).total_cmp(&x(j)));
        let sweep = Sweep {
            schema_version: iopath_model::report::SCHEMA_VERSION,
            topology: topo.name.clone(),
            points: order
                .iter()
                .map(|&i| SweepPoint {
                    param: if by_drives { "active".into() } else { "point".into() },
                    value: serde_json::Value::from(x(i)),
                    param2: None,
                    value2: None,
                    report: Some(sim[i].clone()),
                    error: None,
                    bound_mb_s: None,
                })
                .collect(),
            partial: false,
        };
        let measured = vec![MeasuredSeries {
            label: "measured".into(),
            points: order.iter().map(|&i| (x(i), rows[i].measured)).collect(),
        }];
        let popts = PlotOptions { title: Some(format!("{}: predicted vs measured", topo.name)), ..Default::default() };
        let plot_err = |e| super::output::error("--out", e);
        let mut files = Vec::new();
        if out.wants(OutFormat::Svg) {
            let svg = iopath_reports::plot::sweep_svg_string(&sweep, &measured, &popts).map_err(plot_err)?;
            files.push(("compare.svg".to_string(), svg.into_bytes()));
        }
        if out.wants(OutFormat::Png) {
            files.push((
                "compare.png".to_string(),
                iopath_reports::plot::sweep_png_bytes(&sweep, &measured, &popts).map_err(plot_err)?,
            ));
        }
        for p in super::output::write_target("--out", out, &files, COMPARE_SET)? {
            if !a.quiet {
                eprintln!("wrote {}", p.display());
            }
        }
    }
    let c = Comparison::new(&topo.name, rows);
    if a.json {
        print_json(&c)?;
    } else {
        let mut s = format!("{:<44} {:>10} {:>10} {:>8}\n", "point", "measured", "predicted", "err %");
        for r in &c.points {
            let what = match &r.drive {
                Some(d) => format!("{} [{d}]", r.workload),
                None => r.workload.clone(),
            };
            s += &format!(
                "{:<44} {:>10.2} {:>10.2} {:>+8.1}  {} {}\n",
                what,
                r.measured,
                r.predicted,
                r.error_pct,
                r.metric.unit(),
                r.label
            );
        }
        s += &format!("\nmean absolute error {:.2}%, RMS log error {:.4}\n", c.mape_pct, c.rms_log);
        if let Some(w) = &c.worst {
            s += &format!("worst: {} ({}): {:+.1}%\n", w.workload, w.label, w.error_pct);
        }
        print_text(&s)?;
    }
    Ok(if interrupted { super::exit::INTERRUPTED } else { 0 })
}
