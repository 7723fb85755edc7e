//! Plain-text tables for a terminal: aligned columns, units in the headers.
//!
//! Numbers are formatted the same way everywhere in this crate (the Markdown and HTML outputs
//! reuse these helpers): MB/s with one decimal, IOPS without decimals, latencies in
//! microseconds with one decimal, utilizations in percent with one decimal. Text columns are
//! left-aligned, numbers right-aligned. The output never depends on the terminal width.

use iopath_model::report::{Report, Sweep, SweepPoint};
use serde_json::Value;
use std::fmt::Write as _;

/// How a column lines up its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A table of already formatted cells; renders with aligned columns.
#[derive(Debug, Clone, Default)]
pub(crate) struct TextTable {
    pub headers: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these `(header, alignment)` columns and no rows.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        TextTable {
            headers: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends one row; missing cells render empty.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(cell.chars().count());
                }
            }
        }
        w
    }

    /// Renders with two spaces between columns and no trailing spaces.
    pub fn render(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        let empty = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = &String>| {
            let mut s = String::new();
            for (i, cell) in cells.enumerate().take(widths.len()) {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = widths[i].saturating_sub(cell.chars().count());
                match self.align[i] {
                    Align::Left => {
                        s.push_str(cell);
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(cell);
                    }
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&mut self.headers.iter());
        for row in &self.rows {
            line(&mut row.iter().chain(std::iter::repeat(&empty)).take(widths.len()));
        }
        out
    }

    /// Renders as a GitHub-flavoured Markdown table (`|` in cells escaped).
    pub fn render_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let mut out = String::new();
        let n = self.headers.len();
        out.push('|');
        for h in &self.headers {
            let _ = write!(out, " {} |", esc(h));
        }
        out.push_str("\n|");
        for a in &self.align {
            out.push_str(match a {
                Align::Left => " :--- |",
                Align::Right => " ---: |",
            });
        }
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for i in 0..n {
                let _ = write!(out, " {} |", esc(row.get(i).map(String::as_str).unwrap_or("")));
            }
            out.push('\n');
        }
        out
    }
}

/// A rate \[MB/s\] with one decimal.
pub(crate) fn fmt_mb_s(v: f64) -> String {
    format!("{v:.1}")
}

/// I/Os per second, no decimals.
pub(crate) fn fmt_iops(v: f64) -> String {
    format!("{v:.0}")
}

/// A latency \[us\] with one decimal.
pub(crate) fn fmt_us(v: f64) -> String {
    format!("{v:.1}")
}

/// A utilization given as a fraction, printed in percent with one decimal.
pub(crate) fn fmt_pct(fraction: f64) -> String {
    format!("{:.1}", fraction * 100.0)
}

/// A swept value as people write it: strings bare, integers without a decimal point.
pub fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() == 0.0 && f.abs() < 1e15 { format!("{f:.0}") } else { format!("{f}") }
            }
        }
        Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// `param=value`, and for a grid also `param2=value2`, of one sweep point.
pub(crate) fn point_labels(p: &SweepPoint) -> (String, Option<String>) {
    let first = format!("{}={}", p.param, value_label(&p.value));
    let second = p
        .param2
        .as_ref()
        .map(|p2| format!("{}={}", p2, p.value2.as_ref().map(value_label).unwrap_or_else(|| "-".into())));
    (first, second)
}

/// The workload shared by a sweep's points: the first report's workload label without the
/// swept parameters (`read bs=128k` for an `iodepth` sweep), if any point has a report.
pub(crate) fn sweep_workload_label(s: &Sweep) -> Option<String> {
    let first = s.points.first()?;
    let swept: Vec<String> =
        std::iter::once(&first.param).chain(first.param2.as_ref()).map(|p| format!("{p}=")).collect();
    s.points
        .iter()
        .find_map(|p| p.report.as_ref())
        .map(|r| {
            r.workload
                .describe()
                .split(' ')
                .filter(|tok| !swept.iter().any(|p| tok.starts_with(p.as_str())))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|w| !w.is_empty())
}

/// The per-drive table of a report, with a total row.
pub(crate) fn drive_table(r: &Report) -> TextTable {
    use Align::*;
    let mut t = TextTable::new(&[
        ("drive", Left),
        ("read MB/s", Right),
        ("write MB/s", Right),
        ("IOPS", Right),
        ("lat mean us", Right),
        ("lat p50 us", Right),
        ("lat p99 us", Right),
    ]);
    for d in &r.drives {
        t.row(vec![
            d.id.clone(),
            fmt_mb_s(d.read_mb_s),
            fmt_mb_s(d.write_mb_s),
            fmt_iops(d.iops),
            fmt_us(d.lat_us.mean),
            fmt_us(d.lat_us.p50),
            fmt_us(d.lat_us.p99),
        ]);
    }
    let tot = &r.total;
    // A pool workload's total is the pool's logical I/O; the rows above are its members'.
    t.row(vec![
        r.pool.as_ref().map_or_else(|| "total".into(), |p| format!("pool {} (logical)", p.id)),
        fmt_mb_s(tot.read_mb_s),
        fmt_mb_s(tot.write_mb_s),
        fmt_iops(tot.iops),
        fmt_us(tot.lat_us.mean),
        fmt_us(tot.lat_us.p50),
        fmt_us(tot.lat_us.p99),
    ]);
    t
}

/// The per-link utilization table of a report.
pub(crate) fn link_table(r: &Report) -> TextTable {
    use Align::*;
    let mut t = TextTable::new(&[
        ("link", Left),
        ("kind", Left),
        ("capacity MB/s", Right),
        ("util up %", Right),
        ("util down %", Right),
    ]);
    for l in &r.links {
        t.row(vec![
            l.id.clone(),
            if l.kind.is_empty() { "-".into() } else { l.kind.clone() },
            if l.capacity_mb_s > 0.0 { fmt_mb_s(l.capacity_mb_s) } else { "-".into() },
            fmt_pct(l.util_up),
            fmt_pct(l.util_down),
        ]);
    }
    t
}

/// The cost line of a report: events, I/Os, wall and simulated seconds, events per second.
pub(crate) fn cost_line(r: &Report) -> String {
    let c = &r.cost;
    let rate = if c.wall_s > 0.0 { format!("{:.0}", c.events as f64 / c.wall_s) } else { "-".to_string() };
    let mut s = format!(
        "cost: {} events, {} I/Os, {:.3} s wall, {:.3} s simulated, {} events/s",
        c.events, c.ios, c.wall_s, c.sim_s, rate
    );
    if let Some(cpu) = c.cpu_s {
        let _ = write!(s, ", {cpu:.3} s CPU");
    }
    s
}

/// The marker printed when a run or sweep was interrupted.
pub(crate) const PARTIAL_MARKER: &str = "partial: interrupted; the numbers cover only part of the run";

/// One run as a terminal table.
///
/// In order: a header (topology, kind, workload); per drive read MB/s, write MB/s, IOPS and
/// latency mean/p50/p99 \[us\], then a `total` row; per link its kind, capacity \[MB/s\] and
/// utilization up/down \[%\]; `bottleneck: <id> at <util>%`; the cost line (events, I/Os,
/// wall s, simulated s, events/s); the spread over seeds if the run was replicated; one
/// `warning:` line per warning; and the `partial` marker if the run was interrupted.
pub fn report_table(r: &Report) -> String {
    let mut out = String::new();
    let kind = match r.kind {
        iopath_model::report::ReportKind::Simulated => "simulated",
        iopath_model::report::ReportKind::Measured => "measured",
    };
    let _ = writeln!(out, "topology: {} ({kind})", r.topology);
    let w = r.workload.describe();
    if !w.is_empty() {
        let _ = writeln!(out, "workload: {w}");
    }
    out.push('\n');
    out.push_str(&drive_table(r).render());
    if !r.links.is_empty() {
        out.push('\n');
        out.push_str(&link_table(r).render());
    }
    if let Some(pool) = crate::pool::pool_section(r) {
        out.push('\n');
        out.push_str(&pool);
    }
    out.push('\n');
    let _ = writeln!(out, "bottleneck: {} at {}%", r.bottleneck.id, fmt_pct(r.bottleneck.util));
    let _ = writeln!(out, "{}", cost_line(r));
    if let Some(sp) = &r.spread {
        let _ = writeln!(
            out,
            "spread over {} seeds: {}..{} MB/s, {}..{} IOPS",
            sp.replications,
            fmt_mb_s(sp.mb_s_min),
            fmt_mb_s(sp.mb_s_max),
            fmt_iops(sp.iops_min),
            fmt_iops(sp.iops_max)
        );
    }
    for warning in &r.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    if r.partial {
        let _ = writeln!(out, "{PARTIAL_MARKER}");
    }
    out
}

/// The sweep's rows as a [`TextTable`] (shared by the terminal, Markdown and HTML outputs).
pub(crate) fn sweep_text_table(s: &Sweep) -> TextTable {
    use Align::*;
    let grid = s.points.iter().any(|p| p.param2.is_some());
    let bound = s.points.iter().any(|p| p.bound_mb_s.is_some());
    let first_param = s.points.first().map(|p| p.param.as_str()).unwrap_or("point");
    let second_param = s.points.iter().find_map(|p| p.param2.as_deref()).unwrap_or("");
    let mut cols: Vec<(&str, Align)> = vec![(first_param, Left)];
    if grid {
        cols.push((second_param, Left));
    }
    cols.extend([
        ("total MB/s", Right),
        ("read MB/s", Right),
        ("write MB/s", Right),
        ("IOPS", Right),
        ("p99 us", Right),
    ]);
    if bound {
        cols.push(("bound MB/s", Right));
    }
    cols.push(("bottleneck", Left));
    let mut t = TextTable::new(&cols);
    for p in &s.points {
        let (a, b) = point_labels(p);
        let mut row = vec![a];
        if grid {
            row.push(b.unwrap_or_else(|| "-".into()));
        }
        match &p.report {
            Some(r) => row.extend([
                fmt_mb_s(r.total.mb_s),
                fmt_mb_s(r.total.read_mb_s),
                fmt_mb_s(r.total.write_mb_s),
                fmt_iops(r.total.iops),
                fmt_us(r.total.lat_us.p99),
            ]),
            None => row.extend(std::iter::repeat_n("-".to_string(), 5)),
        }
        if bound {
            row.push(p.bound_mb_s.map(fmt_mb_s).unwrap_or_else(|| "-".into()));
        }
        row.push(match (&p.report, &p.error) {
            (_, Some(e)) => format!("FAILED: {e}"),
            (Some(r), None) if r.partial => {
                format!("{} ({}%) [partial]", r.bottleneck.id, fmt_pct(r.bottleneck.util))
            }
            (Some(r), None) => format!("{} ({}%)", r.bottleneck.id, fmt_pct(r.bottleneck.util)),
            (None, None) => "FAILED: no result".into(),
        });
        t.row(row);
    }
    t
}

/// A sweep as a terminal table, one row per point.
///
/// Columns: `param=value` (and `param2=value2` for a grid), total, read and write MB/s, IOPS,
/// p99 latency \[us\], the closed-form bound \[MB/s\] when any point has one, and the bottleneck
/// with its utilization. A failed point shows `-` for its numbers and `FAILED: <error>` in
/// the last column. The `partial` marker closes the table if the sweep was interrupted.
pub fn sweep_table(s: &Sweep) -> String {
    let mut out = String::new();
    let _ = write!(out, "sweep: {}", s.topology);
    if let Some(w) = sweep_workload_label(s) {
        let _ = write!(out, " ({w})");
    }
    out.push_str("\n\n");
    out.push_str(&sweep_text_table(s).render());
    let failed = s.points.iter().filter(|p| p.report.is_none()).count();
    if failed > 0 && s.partial {
        let _ = writeln!(out, "\n{failed} of {} points failed or did not run", s.points.len());
    } else if failed > 0 {
        let _ = writeln!(out, "\n{failed} of {} points failed", s.points.len());
    }
    if s.partial {
        let _ = writeln!(out, "{PARTIAL_MARKER}");
    }
    out
}

/// A measured run (`iopath measure`) for a terminal: the workload, the engine and ramp, one
/// row per target (and a total), the cost and the run's warnings.
pub fn measured_table(r: &Report) -> String {
    let mut s = String::new();
    let (desc, engine, ramp_s) = measured_workload(r);
    s += &format!(
        "measured {desc}: {:.1} s after a {ramp_s:.1} s ramp, engine {engine}{}\n\n",
        r.cost.sim_s,
        if r.partial { " (interrupted: partial)" } else { "" }
    );
    let w = r.drives.iter().map(|d| d.id.len()).max().unwrap_or(5).max(6);
    s += &format!(
        "{:<w$}  {:>10}  {:>10}  {:>10}  {:>9}  {:>9}  {:>9}  {:>9}\n",
        "target", "read MB/s", "write MB/s", "IOPS", "lat mean", "p50", "p99", "max (us)"
    );
    let row = |id: &str, rd: f64, wr: f64, iops: f64, l: &iopath_model::report::Latency| {
        format!(
            "{id:<w$}  {rd:>10.1}  {wr:>10.1}  {iops:>10.0}  {:>9.1}  {:>9.1}  {:>9.1}  {:>9.1}\n",
            l.mean, l.p50, l.p99, l.max
        )
    };
    for d in &r.drives {
        s += &row(&d.id, d.read_mb_s, d.write_mb_s, d.iops, &d.lat_us);
    }
    if r.drives.len() > 1 {
        s += &row("total", r.total.read_mb_s, r.total.write_mb_s, r.total.iops, &r.total.lat_us);
    }
    s += &format!("\n{} I/Os, {:.2} s wall, {:.2} s CPU\n", r.cost.ios, r.cost.wall_s, r.cost.cpu_s.unwrap_or(0.0));
    if !r.warnings.is_empty() {
        s += "\nwarnings:\n";
        for w in &r.warnings {
            s += &format!("  - {w}\n");
        }
    }
    s
}

/// What a measured report says of its workload: a short description, the engine and the
/// ramp [s]. The one place these tables read the report's workload.
fn measured_workload(r: &Report) -> (String, String, f64) {
    let w = &r.workload;
    let desc = format!("{} bs={} iodepth={} numjobs={}", w.rw, w.bs.get(), w.iodepth, w.numjobs);
    let m = r.measured.as_ref();
    (desc, m.map_or("?", |m| m.engine.as_str()).to_string(), m.map_or(0.0, |m| m.ramp_s))
}

/// A measured ramp over active targets (`iopath measure --active 1..N`) for a terminal.
pub fn measured_sweep_table(s: &Sweep) -> String {
    let mut out = String::new();
    if let Some(r) = s.points.iter().find_map(|p| p.report.as_ref()) {
        out += &format!("measured ramp of {}\n\n", measured_workload(r).0);
    }
    // The swept values as the first column: `4k` under `bs`, or `bs=4k iodepth=8` in a grid.
    let label = |p: &iopath_model::report::SweepPoint| match (&p.param2, &p.value2) {
        (Some(q), Some(v)) => format!("{}={} {q}={}", p.param, value_label(&p.value), value_label(v)),
        _ => value_label(&p.value),
    };
    let head = s.points.first().map(|p| if p.param2.is_some() { "point".to_string() } else { p.param.clone() });
    let w = s.points.iter().map(|p| label(p).len()).chain(head.as_ref().map(|h| h.len())).max().unwrap_or(6).max(6);
    out += &format!(
        "{:>w$}  {:>10}  {:>10}  {:>10}  per target MB/s\n",
        head.unwrap_or_else(|| "active".into()),
        "MB/s",
        "IOPS",
        "p99 (us)"
    );
    for p in &s.points {
        match (&p.report, &p.error) {
            (Some(r), _) => {
                let per: Vec<String> =
                    r.drives.iter().map(|d| format!("{}={:.1}", d.id, d.read_mb_s + d.write_mb_s)).collect();
                out += &format!(
                    "{:>w$}  {:>10.1}  {:>10.0}  {:>10.1}  {}\n",
                    label(p),
                    r.total.mb_s,
                    r.total.iops,
                    r.total.lat_us.p99,
                    per.join(" ")
                );
            }
            (None, e) => out += &format!("{:>w$}  failed: {}\n", label(p), e.clone().unwrap_or_default()),
        }
    }
    let warns: Vec<String> = s
        .points
        .iter()
        .filter_map(|p| p.report.as_ref().map(|r| (p, r)))
        .flat_map(|(p, r)| r.warnings.iter().map(move |w| format!("{}={}: {w}", p.param, value_label(&p.value))))
        .collect();
    if !warns.is_empty() {
        out += "\nwarnings:\n";
        for w in warns {
            out += &format!("  - {w}\n");
        }
    }
    if s.partial {
        out += "\n(interrupted: partial)\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_align_and_no_trailing_spaces() {
        let mut t = TextTable::new(&[("id", Align::Left), ("MB/s", Align::Right)]);
        t.row(vec!["a".into(), "1.0".into()]);
        t.row(vec!["long-id".into(), "1234.5".into()]);
        let s = t.render();
        assert_eq!(s, "id         MB/s\na           1.0\nlong-id  1234.5\n");
    }

    #[test]
    fn markdown_escapes_pipes() {
        let mut t = TextTable::new(&[("a|b", Align::Left)]);
        t.row(vec!["x|y".into()]);
        assert!(t.render_markdown().contains("a\\|b"));
        assert!(t.render_markdown().contains("x\\|y"));
    }

    #[test]
    fn values_print_as_written() {
        assert_eq!(value_label(&json!(3)), "3");
        assert_eq!(value_label(&json!(3.0)), "3");
        assert_eq!(value_label(&json!(0.25)), "0.25");
        assert_eq!(value_label(&json!("128k")), "128k");
    }

    #[test]
    fn measured_tables_show_engine_ramp_targets_and_warnings() {
        let r: Report = serde_json::from_value(serde_json::json!({
            "kind": "measured", "topology": "t",
            "workload": serde_json::to_value(iopath_model::Workload { iodepth: 4, ..Default::default() }).unwrap(),
            "measured": { "engine": "io_uring", "runtime_s": 2.0, "ramp_s": 0.5,
                          "targets": [ { "id": "/dev/loop0", "path": "/dev/loop0" },
                                       { "id": "/dev/loop1", "path": "/dev/loop1" } ] },
            "total": { "read_mb_s": 300.0, "write_mb_s": 0.0, "mb_s": 300.0, "iops": 2400.0,
                       "lat_us": { "mean": 10.0, "p50": 9.0, "p99": 20.0, "max": 30.0 } },
            "drives": [
                { "id": "/dev/loop0", "read_mb_s": 100.0, "write_mb_s": 0.0, "iops": 800.0,
                  "lat_us": { "mean": 10.0, "p50": 9.0, "p99": 20.0, "max": 30.0 } },
                { "id": "/dev/loop1", "read_mb_s": 200.0, "write_mb_s": 0.0, "iops": 1600.0,
                  "lat_us": { "mean": 10.0, "p50": 9.0, "p99": 20.0, "max": 30.0 } } ],
            "links": [], "bottleneck": { "id": "", "util": 0.0 },
            "cost": { "events": 0, "ios": 4800, "wall_s": 2.0, "sim_s": 2.0 },
            "warnings": ["throughput varied"]
        }))
        .unwrap();
        let t = measured_table(&r);
        assert!(
            t.starts_with("measured read bs=131072 iodepth=4 numjobs=1: 2.0 s after a 0.5 s ramp, engine io_uring\n"),
            "{t}"
        );
        assert!(t.lines().any(|l| l.starts_with("/dev/loop1") && l.contains("200.0") && l.contains("1600")), "{t}");
        assert!(t.lines().any(|l| l.starts_with("total") && l.contains("300.0")), "{t}");
        assert!(t.contains("  - throughput varied"), "{t}");
        let s: Sweep = serde_json::from_value(serde_json::json!({
            "topology": "t", "points": [
                { "param": "active", "value": 2, "report": serde_json::to_value(&r).unwrap() },
                { "param": "active", "value": 3, "report": null, "error": "only 2 targets" } ] }))
        .unwrap();
        let t = measured_sweep_table(&s);
        assert!(t.contains("/dev/loop0=100.0 /dev/loop1=200.0"), "{t}");
        assert!(t.contains("     3  failed: only 2 targets"), "{t}");
        assert!(t.contains("active=2: throughput varied"), "{t}");
    }
}
