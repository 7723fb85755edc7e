//! Turning a finished run's state into a `Report`.

use super::*;

impl Sim {
    /// The report, and the utilization of every resource of the graph (in its order) that
    /// the bottleneck was chosen from (`replicate` averages them).
    pub(super) fn report(&self, t: &Topology, w: &Workload) -> (Report, Vec<f64>) {
        // The measured window; empty only when an interrupt stopped the run inside the ramp,
        // and then nothing is divided by it: rates are 0 and a warning says why.
        let window_ns = (self.win.end - self.win.start).nanos_f64();
        let per_s = |x: f64, secs: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let mut drives = Vec::with_capacity(self.drives.len());
        let mut total = Total::default();
        let mut all = LatCounts::new();
        let mut lat_sum = 0.0;
        let mut nios = 0u64;
        for dr in &self.drives {
            let st = &dr.st;
            // Coverage runs: each drive's rate over its own active time.
            let span = if self.win.time_based { window_ns } else { st.last.nanos_f64() };
            let secs = span * 1e-9;
            let lat = latency(&st.hist, st.lat_sum_ns, st.ios);
            // Time-based runs count the bytes that crossed the drive's link inside the window
            // (as the bound does); coverage runs count completed I/Os over the drive's span.
            let (rd, wr) = if self.win.time_based {
                (self.classes[dr.class[0] as usize].window_bytes, self.classes[dr.class[1] as usize].window_bytes)
            } else {
                (st.read_bytes, st.write_bytes)
            };
            let r = DriveResult {
                id: t.nodes[dr.node].id.clone(),
                read_mb_s: per_s(rd, secs) / 1e6,
                write_mb_s: per_s(wr, secs) / 1e6,
                iops: per_s(st.ios as f64, secs),
                lat_us: lat,
                read_bytes: rd as u64,
                write_bytes: wr as u64,
                ios: st.ios,
                bottleneck: None,
            };
            total.read_mb_s += r.read_mb_s;
            total.write_mb_s += r.write_mb_s;
            total.iops += r.iops;
            all.add(&st.hist);
            lat_sum += st.lat_sum_ns;
            nios += st.ios;
            drives.push(r);
        }
        total.mb_s = total.read_mb_s + total.write_mb_s;
        total.lat_us = latency(&all, lat_sum, nios);

        // Link utilization, by node.
        let g = &self.graph;
        let span = if self.win.time_based { window_ns } else { self.win.end.nanos_f64() };
        let util = |r: usize| per_s(self.alloc.util_ns[r], span).min(1.0);
        let mut links: Vec<LinkUtil> = Vec::with_capacity(t.nodes.len());
        for ix in 0..t.nodes.len() {
            let res = g.link_resources(ix);
            if res.is_empty() {
                continue;
            }
            let r0 = &g.resources[res[0]];
            let id = r0.id.trim_end_matches(".up").to_string();
            let (up, down) =
                if r0.side == Side::Both { (util(res[0]), util(res[0])) } else { (util(res[0]), util(res[1])) };
            links.push(LinkUtil {
                id,
                util_up: up,
                util_down: down,
                capacity_mb_s: r0.nominal_mb_s,
                kind: r0.kind.to_string(),
            });
        }
        // A media resource's drive, by node: looked up once per resource, not by a scan of
        // every drive per resource (half a million cold drive records at 1,024 drives).
        let mut drive_at = vec![usize::MAX; t.nodes.len()];
        for (d, dr) in self.drives.iter().enumerate().rev() {
            if let Some(at) = drive_at.get_mut(dr.node) {
                *at = d; // the first drive on a node wins, as a scan would find it
            }
        }
        let mut utils = Vec::with_capacity(g.resources.len());
        for (r, res) in g.resources.iter().enumerate() {
            let mut u = util(r);
            if res.kind == "media"
                && let Some(dr) = drive_at.get(res.node).and_then(|&d| self.drives.get(d))
                && let Some(h) = &dr.hdd
            {
                u = per_s(h.busy_ns, span).min(1.0);
            }
            utils.push(u);
        }
        let bottleneck = bottleneck_of(g, &utils);
        let own = self.drive_bottlenecks(&drives, &utils);
        for (r, b) in drives.iter_mut().zip(own) {
            r.bottleneck = Some(b);
        }
        let sim_s = window_ns * 1e-9;
        let mut warnings = Vec::new();
        if self.win.partial {
            warnings.push(self.partial_warning());
        } else if self.win.completed == 0 {
            warnings.push(format!(
                "no I/O completed in the {:.3} s measured window; the numbers are zeros, not a \
                 prediction. Lengthen the runtime (an HDD's first I/O alone takes ~10 ms).",
                if self.win.time_based { sim_s } else { self.win.end.secs_f64() }
            ));
        }
        let pool = self.pool_result(window_ns);
        if let Some((_, logical)) = &pool {
            total = logical.clone();
        }
        let report = Report {
            schema_version: iopath_model::report::SCHEMA_VERSION,
            kind: ReportKind::Simulated,
            topology: t.name.clone(),
            workload: w.clone(),
            measured: None,
            total,
            drives,
            links,
            bottleneck,
            cost: RunCost {
                events: self.sched.processed(),
                ios: self.win.completed,
                wall_s: 0.0,
                sim_s: if self.win.time_based { sim_s } else { self.win.end.secs_f64() },
                cpu_s: None,
            },
            partial: self.win.partial,
            covered_s: self.win.partial.then_some(self.win.reached.secs_f64()),
            warnings,
            spread: None,
            pool: pool.map(|(p, _)| p),
            cpu: self.pool_cpu_use(if self.win.time_based { window_ns } else { self.win.end.nanos_f64() }),
        };
        (report, utils)
    }

    /// Each drive's own binding resource, by max-min's bottleneck condition: a saturated
    /// resource on the drive's path (its read and write classes' resources, and its media)
    /// through which no other drive moves more. A drive held below the fair share of a
    /// saturated uplink by its own media is bound by the media, not by the uplink the others
    /// share. With no such resource (a latency-bound run: nothing saturated), the busiest
    /// resource on its path. Ties go to the first in graph order, as for the run's bottleneck.
    fn drive_bottlenecks(&self, drives: &[DriveResult], utils: &[f64]) -> Vec<Bottleneck> {
        let g = &self.graph;
        let paths: Vec<Vec<usize>> = self
            .drives
            .iter()
            .map(|dr| {
                let mut p: Vec<usize> =
                    dr.class.iter().flat_map(|&c| self.classes[c as usize].costs.iter().map(|k| k.resource)).collect();
                p.extend(g.media_resource(dr.node));
                p.sort_unstable();
                p.dedup();
                p
            })
            .collect();
        let rate: Vec<f64> = drives.iter().map(|d| d.read_mb_s + d.write_mb_s).collect();
        let mut most = vec![0.0f64; g.resources.len()];
        for (p, &r) in paths.iter().zip(&rate) {
            for &res in p {
                most[res] = most[res].max(r);
            }
        }
        let busiest = |cands: &mut dyn Iterator<Item = usize>| {
            let mut b = Bottleneck { id: "none".into(), util: 0.0 };
            for r in cands {
                if utils[r] > b.util + 1e-9 {
                    b = Bottleneck { id: g.resources[r].id.clone(), util: utils[r] };
                }
            }
            b
        };
        paths
            .iter()
            .zip(&rate)
            .map(|(p, &r)| {
                let b = busiest(
                    &mut p.iter().copied().filter(|&res| utils[res] >= SATURATED && r >= most[res] * (1.0 - 1e-6)),
                );
                if b.util > 0.0 { b } else { busiest(&mut p.iter().copied()) }
            })
            .collect()
    }

    /// What an interrupted run covered, in words.
    pub(super) fn partial_warning(&self) -> String {
        let s = |t: SimTime| t.secs_f64();
        if !self.win.time_based {
            return format!(
                "interrupted at {:.3} s of simulated time, before every drive covered its region: \
                 each drive's numbers are over the I/Os it completed",
                s(self.win.reached)
            );
        }
        if self.win.end <= self.win.start {
            format!(
                "interrupted at {:.3} s of simulated time, inside the {:.3} s ramp: nothing was measured, \
                 so there is no throughput (reported as 0); run longer or shorten the ramp",
                s(self.win.reached),
                s(self.win.start)
            )
        } else {
            format!(
                "interrupted at {:.3} s of simulated time: the numbers cover the {:.3} s from the end of \
                 the ramp ({:.3} s) to there, not the whole measured time",
                s(self.win.reached),
                (self.win.end - self.win.start).secs_f64(),
                s(self.win.start)
            )
        }
    }
}

/// Utilization from which a resource counts as saturated for a drive's bottleneck: a time
/// average over the window, so a resource busy all the time reads a little under 1.
const SATURATED: f64 = 0.98;

/// The most utilized resource (the first of equals, within 1e-9), or "none" when nothing
/// is used.
pub(crate) fn bottleneck_of(g: &ResourceGraph, utils: &[f64]) -> Bottleneck {
    let mut b = Bottleneck { id: "none".into(), util: 0.0 };
    for (res, &u) in g.resources.iter().zip(utils) {
        if u > b.util + 1e-9 {
            b = Bottleneck { id: res.id.clone(), util: u };
        }
    }
    b
}

/// Latency histograms count in units of 100 ns from 100 ns to 1 h with 2 significant
/// digits: percentiles within 1%, a few kilobytes per drive (1,024 drives stay cheap).
pub(super) const LAT_UNIT_NS: u64 = 100;

/// The latency summary of `n` completions with latencies summing to `sum_ns`.
pub(super) fn latency(h: &LatCounts, sum_ns: f64, n: u64) -> Latency {
    if n == 0 {
        return Latency::default();
    }
    h.summary(LAT_UNIT_NS, sum_ns / n as f64 / 1e3)
}
