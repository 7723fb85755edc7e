//! A run's tallies as the report: per-target rates and latencies, and warnings for
//! variation, other I/O on the devices and interruptions.

use super::MeasureOptions;
use super::plan::Plan;
use super::run::{Ran, per_target};
use crate::engine::{Tally, new_hist};
use hdrhistogram::Histogram;
use iopath_model::report::{
    Bottleneck, Cost, DriveResult, Latency, Measured, MeasuredTarget, Report, ReportKind, Total,
};
use std::time::Instant;

/// The report of a run.
pub(super) fn summarise(
    o: &MeasureOptions,
    plan: Plan,
    ran: Ran,
    engine: &str,
    mut warnings: Vec<String>,
    wall0: Instant,
) -> Report {
    let w = &o.workload;
    let Plan { targets, opened, sides, .. } = plan;
    let Ran { results, samples, counters, disk0, disk1, cpu_s, interrupted, secs } = ran;
    let ntargets = opened.len();
    let per_target = |counters: &[_]| per_target(counters, &sides, ntargets);
    if interrupted && secs <= 0.0 {
        warnings.push("stopped during the ramp: nothing was measured; let the run pass its ramp".into());
    }

    // Per target.
    let mut tallies: Vec<Tally> = (0..ntargets).map(Tally::new).collect();
    for r in &results {
        for t in &r.tallies {
            tallies[t.target].merge(t);
        }
    }
    let rate = |b: u64| if secs > 0.0 { b as f64 / secs / 1e6 } else { 0.0 };
    let mut total_hist = new_hist();
    let mut drives = Vec::new();
    let mut total = Total::default();
    let mut ios = 0;
    for (t, spec) in tallies.iter().zip(&targets) {
        let _ = total_hist.add(&t.hist);
        let n = t.read_ios + t.write_ios;
        ios += n;
        let d = DriveResult {
            id: spec.id.clone(),
            read_mb_s: rate(t.read_bytes),
            write_mb_s: rate(t.write_bytes),
            iops: if secs > 0.0 { n as f64 / secs } else { 0.0 },
            lat_us: latency(&t.hist),
            read_bytes: t.read_bytes,
            write_bytes: t.write_bytes,
            ios: n,
            ..Default::default()
        };
        total.read_mb_s += d.read_mb_s;
        total.write_mb_s += d.write_mb_s;
        total.iops += d.iops;
        drives.push(d);
    }
    total.mb_s = total.read_mb_s + total.write_mb_s;
    total.lat_us = latency(&total_hist);

    // Warnings: variation, other I/O on the devices.
    for (k, s) in samples.iter().enumerate() {
        if let Some(cv) = coefficient_of_variation(s)
            && cv > 0.05
        {
            warnings.push(format!(
                "{}: throughput varied by {:.1}% from second to second (coefficient of variation of {} one-second samples); look for other load, caching or thermal throttling, and measure longer (a runtime of 30 s)",
                targets[k].id,
                cv * 100.0,
                s.len()
            ));
        }
    }
    let ours = per_target(&counters);
    let mut by_dev: Vec<((u32, u32), u64, Vec<String>)> = Vec::new();
    for (k, t) in opened.iter().enumerate() {
        match by_dev.iter_mut().find(|e| e.0 == t.dev) {
            Some(e) => {
                e.1 += ours[k];
                e.2.push(targets[k].id.clone());
            }
            None => by_dev.push((t.dev, ours[k], vec![targets[k].id.clone()])),
        }
    }
    for (dev, our_bytes, ids) in by_dev {
        if let (Some((name, a)), Some((_, b))) = (disk0.get(&dev), disk1.get(&dev)) {
            let moved = a.bytes_until(b);
            if moved as f64 > our_bytes as f64 * 1.10 + 8e6 {
                warnings.push(format!(
                    "{name} (holding {}) moved {:.1} MB during the run while iopath moved {:.1} MB: other I/O was running on the device. Stop it or use an idle device, then measure again",
                    ids.join(", "),
                    moved as f64 / 1e6,
                    our_bytes as f64 / 1e6
                ));
            }
        }
    }
    if interrupted {
        warnings.push(format!(
            "interrupted: the numbers cover {secs:.1} s of the {:.1} s asked for",
            o.runtime.as_secs_f64()
        ));
    }

    let measured = Measured {
        engine: engine.to_string(),
        runtime_s: o.runtime.as_secs_f64(),
        ramp_s: o.ramp.as_secs_f64(),
        targets: targets
            .iter()
            .map(|t| MeasuredTarget { id: t.id.clone(), path: t.path.display().to_string() })
            .collect(),
        options: Default::default(),
    };
    drop(opened);
    Report {
        schema_version: iopath_model::report::SCHEMA_VERSION,
        kind: ReportKind::Measured,
        topology: o.topology.clone(),
        workload: w.clone(),
        measured: Some(measured),
        total,
        drives,
        links: Vec::new(),
        bottleneck: Bottleneck::default(),
        cost: Cost { events: 0, ios, wall_s: wall0.elapsed().as_secs_f64(), sim_s: secs, cpu_s: Some(cpu_s) },
        partial: interrupted,
        covered_s: None,
        warnings,
        spread: None,
        pool: None,
        cpu: Vec::new(),
    }
}

/// The summary of a latency histogram recorded in nanoseconds (the simulator's summary, so
/// measured and simulated reports carry the same percentile list and fio bins).
fn latency(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    iopath_sim::latency::summarize(h, 1, h.mean() / 1000.0)
}

/// Coefficient of variation of samples (std / mean); `None` with fewer than 3 samples.
pub fn coefficient_of_variation(samples: &[f64]) -> Option<f64> {
    if samples.len() < 3 {
        return None;
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}
