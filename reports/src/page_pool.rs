//! The report page's pool section: the chain from a client's file to the pool's platters.
//!
//! For each run the caller made on the pool (a read and a write from the client, say): the
//! pool's logical MB/s, what its members moved for it (member bytes per logical byte: the
//! parity, copies and read-modify-writes), the CPU's utilization per kind of work, and each
//! stage of the chain (client link, NIC port, NIC PCIe link, uplinks, Samba's core, host CPU,
//! controllers, member links, member media) at its busiest resource's utilization, with the
//! stage that binds named; a bar chart (inline SVG, drawn here, no fonts embedded) shows the
//! stages' utilization side by side for the runs.

use crate::html::{HtmlSection, HtmlTable, escape};
use crate::tables::{fmt_mb_s, fmt_pct};
use iopath_model::WorkloadSpec;
use iopath_model::pool::chain::StageUse;
use iopath_model::report::Report;
use std::fmt::Write as _;

/// One run on the pool for the page: what it was, its report and its chain.
#[derive(Debug, Clone, Copy)]
pub struct PoolRun<'a> {
    /// What the run is, for a reader (`read 1 MiB, QD 8`).
    pub label: &'a str,
    /// The run's report (with its pool section).
    pub report: &'a Report,
    /// The chain's stages in order, at their busiest resource.
    pub chain: &'a [StageUse],
}

/// The page's runs on a pool, each from `client` when one is given: 1 MiB sequential reads
/// and writes at QD 8 (a file copied from and to the NAS), each run for `runtime` after a
/// ramp of the same length (as written, e.g. `1s`), so HDD members' write caches are full
/// before the window opens (a 128 MiB cache fills in under a second at a SATA link's excess
/// over the media rate). The label says what the run is.
pub fn pool_runs(pool: &str, client: Option<&str>, runtime: &str) -> Vec<(&'static str, WorkloadSpec)> {
    let spec = |rw: &str| WorkloadSpec {
        rw: Some(rw.into()),
        bs: Some("1m".into()),
        iodepth: Some(8),
        runtime: Some(runtime.into()),
        ramp: Some(runtime.into()),
        pool: Some(pool.into()),
        client: client.map(str::to_string),
        ..Default::default()
    };
    vec![("read 1 MiB, QD 8", spec("read")), ("write 1 MiB, QD 8", spec("write"))]
}

/// The stage that binds a run: the busiest of its chain (the first of equals, nearest the
/// client).
pub fn binding_stage(chain: &[StageUse]) -> Option<&StageUse> {
    chain.iter().fold(None, |best: Option<&StageUse>, s| match best {
        Some(b) if b.util >= s.util - 1e-9 => Some(b),
        _ => Some(s),
    })
}

fn member_mb_s(r: &Report) -> (f64, f64) {
    (r.drives.iter().map(|d| d.read_mb_s).sum(), r.drives.iter().map(|d| d.write_mb_s).sum())
}

/// A run's summary in words: logical rate, member traffic and overhead, CPU, what binds.
fn summary(run: &PoolRun) -> String {
    let r = run.report;
    let mut s = String::new();
    let Some(p) = &r.pool else { return s };
    let (mr, mw) = member_mb_s(r);
    let _ = write!(
        s,
        "{}: {} MB/s logical on pool {} ({}); the members read {} MB/s and wrote {} MB/s for it, \
         {:.3} member bytes per logical byte ({}% over the logical bytes).",
        run.label,
        fmt_mb_s(p.mb_s),
        p.id,
        p.layout,
        fmt_mb_s(mr),
        fmt_mb_s(mw),
        p.overhead,
        fmt_pct(p.overhead - 1.0)
    );
    if !r.cpu.is_empty() {
        let cpu: Vec<String> =
            r.cpu.iter().map(|c| format!("{} {}% ({} MB/s)", c.kind, fmt_pct(c.util), fmt_mb_s(c.mb_s))).collect();
        let _ = write!(s, " CPU work, share of all the host's cores: {}.", cpu.join(", "));
    }
    if let Some(b) = binding_stage(run.chain) {
        // Stages as busy as the binding one bind with it (a client's link and the NIC port
        // at the same line rate are one wire).
        let with: Vec<&StageUse> = run.chain.iter().filter(|s| s.util >= b.util - 1e-3).collect();
        let names: Vec<String> = with.iter().map(|s| format!("the {}", s.stage)).collect();
        let ids: Vec<&str> = with.iter().map(|s| s.id.as_str()).collect();
        let _ = write!(s, " Binds: {} ({} at {}%).", names.join(" and "), ids.join(", "), fmt_pct(b.util));
    }
    s
}

/// The table: one row per stage, and for each run its busiest resource and utilization.
fn chain_table(runs: &[PoolRun]) -> HtmlTable {
    let mut headers = vec!["stage".to_string()];
    for r in runs {
        headers.push(format!("{}: busiest", r.label));
        headers.push(format!("{}: util %", r.label));
    }
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        for s in r.chain {
            if !names.contains(&s.stage.as_str()) {
                names.push(&s.stage);
            }
        }
    }
    let rows = names
        .iter()
        .map(|n| {
            let mut row = vec![n.to_string()];
            for r in runs {
                match r.chain.iter().find(|s| s.stage == *n) {
                    Some(s) => {
                        row.push(s.id.clone());
                        row.push(fmt_pct(s.util));
                    }
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            row
        })
        .collect();
    HtmlTable { headers, rows }
}

/// The runs' bar colours, in order (none of them is a sweep chart's, so a screenshot shows
/// where this chart is).
pub const COLORS: [&str; 4] = ["#2b6cb0", "#c05621", "#2f855a", "#6b46c1"];

/// Horizontal bars: a row per stage (in chain order), a bar per run, 0-100% utilization.
pub fn chain_svg(runs: &[PoolRun]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        for s in r.chain {
            if !names.contains(&s.stage.as_str()) {
                names.push(&s.stage);
            }
        }
    }
    let (left, bar_w, bar_h, gap) = (230.0, 520.0, 14.0, 10.0);
    let row_h = bar_h * runs.len() as f64 + gap;
    let top = 30.0;
    let height = top + row_h * names.len() as f64 + 40.0;
    let width = left + bar_w + 150.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    // Legend and the 0/50/100% grid.
    for (k, r) in runs.iter().enumerate() {
        let x = left + 200.0 * k as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"18\">{}</text>",
            COLORS[k % COLORS.len()],
            x + 16.0,
            escape(r.label)
        );
    }
    for pct in [0.0, 50.0, 100.0] {
        let x = left + bar_w * pct / 100.0;
        let y1 = top + row_h * names.len() as f64;
        let _ = writeln!(
            s,
            "<line x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{y1}\" stroke=\"#bbb\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{pct}%</text>",
            y1 + 16.0
        );
    }
    for (i, n) in names.iter().enumerate() {
        let y = top + row_h * i as f64;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + row_h / 2.0,
            escape(n)
        );
        for (k, r) in runs.iter().enumerate() {
            let Some(st) = r.chain.iter().find(|x| x.stage == *n) else { continue };
            let by = y + bar_h * k as f64;
            let w = bar_w * st.util.clamp(0.0, 1.0);
            let _ = writeln!(
                s,
                "<rect x=\"{left}\" y=\"{by}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"10\">{}% {}</text>",
                bar_h - 2.0,
                COLORS[k % COLORS.len()],
                left + w + 4.0,
                by + bar_h - 4.0,
                fmt_pct(st.util),
                escape(&st.id)
            );
        }
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">utilization of the stage's busiest resource</text>",
        left + bar_w / 2.0,
        height - 6.0
    );
    s.push_str("</svg>\n");
    s
}

/// The page's pool section for `runs` (none: no section): the chain from the client (named
/// in the title when the runs have one) to the members.
pub fn pool_section(pool: &str, client: Option<&str>, runs: &[PoolRun]) -> Option<HtmlSection> {
    if runs.is_empty() {
        return None;
    }
    let title = match client {
        Some(c) => format!("Pool {pool} from client {c}: the chain from the client to the drives"),
        None => format!("Pool {pool}: the chain from the host to the drives"),
    };
    let mut text = String::from(
        "Each stage's utilization is its busiest resource's over the run; the stage at 100% binds. \
         Member traffic includes parity, copies and read-modify-writes.",
    );
    for r in runs {
        text.push_str("\n\n");
        text.push_str(&summary(r));
    }
    Some(HtmlSection { title, text: Some(text), svg: Some(chain_svg(runs)), table: Some(chain_table(runs)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(stage: &str, id: &str, util: f64) -> StageUse {
        StageUse { stage: stage.into(), id: id.into(), util }
    }

    #[test]
    fn the_busiest_stage_binds_and_the_chart_has_a_bar_per_stage_and_run() {
        let chain = [stage("client link", "client.l.link.rx", 0.94), stage("NIC port", "nic.p0.tx", 1.0)];
        assert_eq!(binding_stage(&chain).unwrap().id, "nic.p0.tx");
        // Equal utilizations: the one nearest the client.
        let tie = [stage("a", "x", 1.0), stage("b", "y", 1.0)];
        assert_eq!(binding_stage(&tie).unwrap().id, "x");
        let r: Report = serde_json::from_value(serde_json::json!({
            "kind": "simulated", "topology": "t",
            "workload": { "rw": "read", "bs": 1048576, "iodepth": 8, "numjobs": 1, "rwmixread": 50,
                          "region": 1.0, "runtime": 1000000000u64, "ramp": null, "targets": "all",
                          "copies": [], "seed": 1, "size": null },
            "total": { "read_mb_s": 1.0, "write_mb_s": 0.0, "mb_s": 1.0, "iops": 1.0,
                       "lat_us": { "mean": 1.0, "p50": 1.0, "p99": 1.0 } },
            "drives": [], "links": [], "bottleneck": { "id": "nic.p0.tx", "util": 1.0 },
            "cost": { "events": 1, "ios": 1, "wall_s": 0.0, "sim_s": 1.0 }
        }))
        .unwrap();
        let runs = [
            PoolRun { label: "read <1>", report: &r, chain: &chain },
            PoolRun { label: "write", report: &r, chain: &chain[..1] },
        ];
        let svg = chain_svg(&runs);
        assert_eq!(svg.matches("<rect").count(), 2 + 3, "two legend boxes, 2 + 1 bars");
        assert!(svg.contains("read &lt;1&gt;") && !svg.contains("read <1>"), "labels are escaped");
        let t = chain_table(&runs);
        assert_eq!(t.rows[1], ["NIC port", "nic.p0.tx", "100.0", "-", "-"]);
    }
}
