//! What the report page shows: its standard sweeps and its full-load run, defined once so
//! every front end builds the same page. Running them is the simulator's job; this module
//! only says which workloads over which values.

use iopath_model::bound::{Mix, bound};
use iopath_model::paths::ResourceGraph;
use iopath_model::report::Report;
use iopath_model::{Topology, Workload, WorkloadSpec};
use std::fmt::Write;

/// One chart of the page: a workload swept over one workload option.
#[derive(Debug, Clone, PartialEq)]
pub struct StandardSweep {
    /// The chart's title.
    pub title: &'static str,
    /// The workload every point starts from.
    pub workload: WorkloadSpec,
    /// The swept workload option (`active`, `iodepth`).
    pub param: &'static str,
    /// Its values, as written.
    pub values: Vec<String>,
    /// Whether measured or published points are drawn over this chart.
    pub overlay_measured: bool,
    /// What the page says about how the sweep ran, where it differs from the others.
    pub note: Option<String>,
    /// Drawn in IOPS (small blocks), not MB/s.
    pub iops: bool,
}

fn spec(rw: &str, bs: &str, qd: u32, runtime: &str) -> WorkloadSpec {
    WorkloadSpec {
        rw: Some(rw.into()),
        bs: Some(bs.into()),
        iodepth: Some(qd),
        runtime: Some(runtime.into()),
        ..Default::default()
    }
}

/// The page's sweeps, each point run for `runtime` (as written, e.g. `1s`): sequential
/// reads, sequential writes and a 70/30 mix against 1..N active drives, and 4 KiB random
/// reads on all drives against queue depth 1..32. Measured points overlay the first.
pub fn standard_sweeps(t: &Topology, runtime: &str) -> Vec<StandardSweep> {
    let active: Vec<String> = (1..=t.drives.len()).map(|k| k.to_string()).collect();
    let mut mix = spec("rw", "128k", 16, runtime);
    mix.rwmixread = Some(70);
    let mut rand = spec("randread", "4k", 1, runtime);
    rand.active = Some(t.drives.len());
    let sweep = |title, workload, param, values: &Vec<String>, overlay_measured| StandardSweep {
        title,
        workload,
        param,
        values: values.clone(),
        overlay_measured,
        note: None,
        iops: false,
    };
    // HDD write-back caches take writes at the link's rate until full: the write sweep
    // warms up past that, so its points are the steady state the bound describes.
    let mut write = spec("write", "1m", 8, runtime);
    let mut write_note = None;
    if let Some(fill) = hdd_cache_fill_s(t) {
        let run = iopath_model::units::parse_duration(runtime).map(|d| d.secs_f64()).unwrap_or(1.0);
        let ramp = (1.25 * fill).max(0.1 * run);
        write.ramp = Some(format!("{:.0}ms", (ramp * 1000.0).ceil()));
        write_note = Some(format!(
            "Each point ran {runtime} after a {:.2} s warm-up: an HDD's write-back cache takes writes at its link's \
             rate until it is full, which takes {fill:.2} s here (cache size over link rate less media rate), \
             so the measured window is the drives' steady state.",
            (ramp * 1000.0).ceil() / 1000.0
        ));
    }
    let depths: Vec<String> = ["1", "2", "4", "8", "16", "32"].iter().map(|s| s.to_string()).collect();
    vec![
        sweep(
            "Sequential read against active drives (1 MiB, QD 8)",
            spec("read", "1m", 8, runtime),
            "active",
            &active,
            true,
        ),
        StandardSweep {
            note: write_note,
            ..sweep("Sequential write against active drives (1 MiB, QD 8)", write, "active", &active, false)
        },
        sweep("70/30 read/write mix against active drives (128 KiB, QD 16)", mix, "active", &active, false),
        StandardSweep {
            iops: true,
            ..sweep("4 KiB random read against queue depth, all drives", rand, "iodepth", &depths, false)
        },
    ]
}

/// The page's full-load run (per-link utilization): 1 MiB sequential reads at QD 8 on every
/// drive, for `runtime`.
pub fn full_load(runtime: &str) -> WorkloadSpec {
    spec("read", "1m", 8, runtime)
}

/// How many full-load runs the page costs, roughly, for `drives` drives: three sweeps over
/// 1..N drives (N/2 full-load runs each, on average) and six all-drive queue depths.
pub fn full_load_runs(drives: usize) -> f64 {
    3.0 * (drives as f64 + 1.0) / 2.0 + 6.0
}

/// Utilization at or above this is "near saturation": the element is named as binding.
/// Below it no element limits the run; what does is the time each I/O takes.
pub const SATURATED: f64 = 0.9;

/// What the drives a workload runs on could give alone: each drive's closed-form bound with
/// nothing shared (its own link and media at the workload's block size and mix), summed.
pub fn drives_alone_mb_s(t: &Topology, w: &Workload, drives: &[usize]) -> f64 {
    let g = ResourceGraph::new(t);
    let share = w.rw.read_share(w.rwmixread);
    let mix = match share {
        s if s >= 1.0 => Mix::Read,
        s if s <= 0.0 => Mix::Write,
        _ => Mix::Mixed,
    };
    drives.iter().map(|&d| bound(t, &g, &[d], mix, w.bs.get(), w.rw.is_random()).total_mb_s).sum()
}

/// The page's verdict: one sentence with the answer, what binds and the headroom.
///
/// Near saturation (the bottleneck at [`SATURATED`] or more) it names the element; if that
/// is a drive's own (its media or link), the headroom is the busiest shared element's spare
/// capacity; otherwise the share of what the drives could do alone that the element
/// leaves them. Below saturation the run is latency-bound: the queue depth over each I/O's
/// latency sets the rate, and the sentence says so with the busiest element's utilization.
pub fn verdict_sentence(r: &Report, drives_alone_mb_s: f64) -> String {
    let mut s = format!(
        "With {}, {} gives {:.0} MB/s ({:.0} IOPS)",
        r.workload.describe(),
        r.topology,
        r.total.mb_s,
        r.total.iops
    );
    let own = |id: &str| r.drives.iter().any(|d| id.starts_with(&format!("{}.", d.id)) || id == d.id);
    let b = &r.bottleneck;
    if b.util >= SATURATED {
        let _ = write!(s, "; {} binds at {:.0}%", b.id, 100.0 * b.util);
        if own(&b.id) {
            let shared = r.busiest_link(|l| !own(&l.id) && l.capacity_mb_s > 0.0);
            s.push_str(": every drive runs at its own rate");
            if let Some((l, u)) = shared {
                let _ = write!(
                    s,
                    ", and the busiest shared element, {}, is at {:.0}%: {:.0} MB/s of headroom for more drives",
                    l.id,
                    100.0 * u,
                    (1.0 - u).max(0.0) * l.capacity_mb_s
                );
            }
        } else if drives_alone_mb_s.is_finite() && drives_alone_mb_s > 0.0 {
            let _ = write!(
                s,
                ": the drives alone could give {:.0} MB/s, so it holds them to {:.0}% of that",
                drives_alone_mb_s,
                100.0 * (r.total.mb_s / drives_alone_mb_s).min(1.0)
            );
        }
    } else {
        let _ = write!(
            s,
            "; nothing is near saturation (the busiest element, {}, is at {:.0}%): the run is latency-bound, \
             {} I/Os in flight per job over a mean latency of {:.0} us",
            b.id,
            100.0 * b.util,
            r.workload.iodepth,
            r.total.lat_us.mean
        );
    }
    s.push('.');
    s
}

/// The write sweep's ramp for a topology with HDDs: long enough for the largest HDD write
/// cache to fill at the rate it fills (the drive's link rate less its media rate), so the
/// measured window sees the steady state the bound describes, not the cache's intake.
/// `None` without HDDs (SSDs' SLC caches are their own sweep's matter: the bound keeps
/// their cached rate).
pub fn hdd_cache_fill_s(t: &Topology) -> Option<f64> {
    let g = ResourceGraph::new(t);
    t.drives
        .iter()
        .filter_map(|&d| {
            let f = t.drive_figures(d);
            if !f.is_hdd() || f.cache_mib <= 0.0 {
                return None;
            }
            let cache = f.cache_mib * 1048576.0;
            // Link payload rate of one drive alone, writing: its bound with the media left
            // out is at least the media rate; the gap is what fills the cache.
            let link = g.link_rates(d).map(|l| l.write_payload_bytes_per_s / 1e6)?;
            let media = bound(t, &g, &[d], Mix::Write, 1 << 20, false).total_mb_s;
            (link > media * 1.01).then(|| cache / ((link - media) * 1e6))
        })
        .max_by(f64::total_cmp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::Catalog;

    fn topo(drives: usize) -> Topology {
        let text = format!(
            "[host]\npart = \"amd-am5\"\n[[node]]\nid = \"hba\"\npart = \"asm1166\"\nparent = \"host\"\n\
             [[drive]]\nid = \"ssd\"\ncount = {drives}\npart = \"micron-5300pro-3840\"\nparent = \"hba\"\n"
        );
        Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap()
    }

    #[test]
    fn three_active_sweeps_over_every_drive_count_and_one_over_queue_depth() {
        let s = standard_sweeps(&topo(3), "1s");
        assert_eq!(s.len(), 4);
        for x in &s[..3] {
            assert_eq!((x.param, x.values.clone()), ("active", vec!["1".into(), "2".into(), "3".into()]));
        }
        assert_eq!(s[3].param, "iodepth");
        assert_eq!(s[3].values, ["1", "2", "4", "8", "16", "32"]);
        // The queue-depth sweep runs on every drive; only the first chart takes measured points.
        assert_eq!(s[3].workload.active, Some(3));
        assert_eq!(s.iter().map(|x| x.overlay_measured).collect::<Vec<_>>(), [true, false, false, false]);
        assert_eq!(s[2].workload.rwmixread, Some(70));
        assert!(s.iter().all(|x| x.workload.runtime.as_deref() == Some("1s")));
        // Every workload is valid as written.
        for x in &s {
            x.workload.resolve().unwrap();
        }
    }

    fn report(util: f64, bottleneck: &str) -> Report {
        use iopath_model::report::{Bottleneck, Cost, DriveResult, LinkUtil, ReportKind, Total};
        let w = spec("randread", "4k", 1, "1s").resolve().unwrap();
        Report {
            schema_version: 1,
            kind: ReportKind::Simulated,
            topology: "t".into(),
            workload: w,
            measured: None,
            total: Total { mb_s: 100.0, iops: 25000.0, ..Default::default() },
            drives: vec![DriveResult { id: "d0".into(), ..Default::default() }],
            links: vec![LinkUtil {
                id: "hba.uplink.up".into(),
                util_up: 0.25,
                util_down: 0.0,
                capacity_mb_s: 1000.0,
                kind: "pcie".into(),
            }],
            bottleneck: Bottleneck { id: bottleneck.into(), util },
            cost: Cost::default(),
            partial: false,
            covered_s: None,
            warnings: Vec::new(),
            spread: None,
            pool: None,
            cpu: Vec::new(),
        }
    }

    #[test]
    fn verdict_names_a_bottleneck_only_near_saturation() {
        let low = verdict_sentence(&report(0.13, "hba.uplink.up"), 400.0);
        assert!(low.contains("latency-bound") && low.contains("hba.uplink.up, is at 13%"), "{low}");
        // A drive's own media at 100%: the headroom is the busiest shared link's spare
        // capacity, (1 - 0.25) x 1000 = 750 MB/s.
        let own = verdict_sentence(&report(1.0, "d0.media"), 100.0);
        assert!(own.contains("d0.media binds at 100%") && own.contains("750 MB/s of headroom"), "{own}");
        // A shared link at 100% with the drives able to do 400 alone: held to 100/400 = 25%.
        let shared = verdict_sentence(&report(1.0, "hba.uplink.up"), 400.0);
        assert!(shared.contains("could give 400 MB/s, so it holds them to 25% of that"), "{shared}");
    }

    #[test]
    fn full_load_and_its_cost() {
        let w = full_load("2s").resolve().unwrap();
        assert_eq!((w.bs.get(), w.iodepth), (1 << 20, 8));
        assert_eq!(full_load_runs(6), 16.5);
    }
}
