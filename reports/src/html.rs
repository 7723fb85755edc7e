//! One self-contained HTML page per report: inline CSS, inline SVG, no network, no JavaScript.
//!
//! The page is built from plain data ([`HtmlReport`]) that the caller fills, so this crate
//! needs nothing but result types: the topology as indented rows ([`TreeRow`]), the
//! closed-form bound per number of active drives ([`BoundRow`]), any number of sections
//! (a title, a paragraph, an SVG chart from [`crate::sweep_svg_string`], a table), and the
//! per-link utilization of a run at full load (a [`Report`]).
//!
//! Guarantees: every piece of caller text is HTML-escaped; SVG is inlined without its XML
//! prologue or namespace attributes, so the page holds no `http://` or `https://` reference
//! at all and loads nothing; the output is deterministic (no timestamps); the page prints
//! well (`@media print`: no backgrounds except the utilization bars, sections kept whole).

use crate::tables::{Align, TextTable, fmt_mb_s, fmt_pct, sweep_text_table, sweep_workload_label};
use iopath_model::report::{Report, Sweep};
use std::fmt::Write as _;

/// One node of the topology tree, in depth-first order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TreeRow {
    /// 0 for the host, 1 for its children, ...
    pub depth: usize,
    /// Node id (`hba`, `D`).
    pub id: String,
    /// Catalog part name (`asm1166`).
    pub part: String,
    /// The link to the parent as written (`pcie3x2`, `sata3`); empty for the host.
    pub link: String,
    /// Payload capacity of that link towards the host [MB/s].
    pub read_mb_s: f64,
    /// Payload capacity of that link towards the drives [MB/s].
    pub write_mb_s: f64,
}

/// The closed-form bound with `active` drives busy: MB/s and the binding element for reads,
/// writes and a mixed load.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoundRow {
    /// Number of active drives (the first n).
    pub active: usize,
    /// Bound on total read throughput [MB/s].
    pub read_mb_s: f64,
    /// The element that binds reads.
    pub read_binding: String,
    /// Bound on total write throughput [MB/s].
    pub write_mb_s: f64,
    /// The element that binds writes.
    pub write_binding: String,
    /// Bound on total mixed (read + write) throughput [MB/s].
    pub mixed_mb_s: f64,
    /// The element that binds the mixed load.
    pub mixed_binding: String,
}

/// A table of already formatted cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HtmlTable {
    /// Column titles, units included (`total MB/s`).
    pub headers: Vec<String>,
    /// Rows of cells; columns whose cells all look numeric (or `-`) are right-aligned.
    pub rows: Vec<Vec<String>>,
}

impl HtmlTable {
    /// The rows of [`crate::sweep_table`]: `param=value`, MB/s, IOPS, p99, bound, bottleneck.
    ///
    /// A bottleneck is named only near saturation ([`crate::page::SATURATED`]); a point
    /// whose busiest element is below it reads "latency-bound" with that element beside.
    pub fn from_sweep(sweep: &Sweep) -> HtmlTable {
        let t = sweep_text_table(sweep);
        let col = t.headers.iter().position(|h| h == "bottleneck");
        let rows = t
            .rows
            .into_iter()
            .map(|mut r| {
                if let Some(c) = col
                    && let Some(cell) = r.get_mut(c)
                {
                    *cell = bottleneck_cell(cell);
                }
                r
            })
            .collect();
        HtmlTable { headers: t.headers, rows }
    }
}

/// `id (13.0%)` as the page says it: the id when near saturation, else latency-bound.
fn bottleneck_cell(cell: &str) -> String {
    let pct = cell.rsplit_once(" (").and_then(|(id, p)| Some((id, p.strip_suffix("%)")?.trim().parse::<f64>().ok()?)));
    match pct {
        Some((id, p)) if p < 100.0 * crate::page::SATURATED => format!("latency-bound (busiest {id} at {p:.1}%)"),
        _ => cell.to_string(),
    }
}

/// The page's verdict: one sentence, then the top suggestions of `advise`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// The answer, what binds and the headroom ([`crate::page::verdict_sentence`]).
    pub sentence: String,
    /// How the suggestions were found (candidates, pruned, simulated).
    pub note: Option<String>,
    /// Best first.
    pub suggestions: Vec<SuggestionRow>,
}

/// One suggested change, formatted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SuggestionRow {
    /// What to do.
    pub change: String,
    /// `1234.5 -> 1391.9 MB/s`.
    pub result: String,
    /// `+157.4 MB/s (+12.7%)`.
    pub gain: String,
    /// What binds with the change.
    pub then_binds: String,
    /// Slots, ports or capacity it takes.
    pub cost: String,
}

fn verdict_html(out: &mut String, v: &Verdict) {
    out.push_str("<section class=\"verdict\">\n<h2>Verdict</h2>\n");
    let _ = writeln!(out, "<p class=\"answer\">{}</p>", escape(&v.sentence));
    if v.suggestions.is_empty() {
        out.push_str(
            "<p>No change iopath considers (controllers, slots, drive placement, pool layout, NIC) raises it.</p>\n",
        );
    } else {
        let mut t = TextTable::new(&[
            ("change", Align::Left),
            ("answer", Align::Right),
            ("gain", Align::Right),
            ("then binds", Align::Left),
            ("costs", Align::Left),
        ]);
        for s in &v.suggestions {
            t.row(vec![s.change.clone(), s.result.clone(), s.gain.clone(), s.then_binds.clone(), s.cost.clone()]);
        }
        table_html(out, &t, None);
    }
    if let Some(n) = &v.note {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
    }
    out.push_str("</section>\n");
}

/// One titled part of the page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HtmlSection {
    /// The section's heading.
    pub title: String,
    /// A paragraph of plain text (escaped; blank lines start new paragraphs).
    pub text: Option<String>,
    /// An SVG document, e.g. from [`crate::sweep_svg_string`]; inlined.
    pub svg: Option<String>,
    /// A table under the chart.
    pub table: Option<HtmlTable>,
}

impl HtmlSection {
    /// A section for a sweep: its table, the workload in the text, and the given chart.
    pub fn for_sweep(title: impl Into<String>, sweep: &Sweep, svg: Option<String>) -> HtmlSection {
        let mut text = format!("Sweep of {}", sweep.topology);
        if let Some(w) = sweep_workload_label(sweep) {
            let _ = write!(text, " with {w}");
        }
        text.push('.');
        if sweep.partial {
            text.push_str(" The sweep was interrupted; some points are missing.");
        }
        HtmlSection { title: title.into(), text: Some(text), svg, table: Some(HtmlTable::from_sweep(sweep)) }
    }
}

/// Everything one HTML page shows; the CLI fills it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HtmlReport {
    /// Page title and heading (usually the topology name).
    pub title: String,
    /// A line under the title: the setup's description or source.
    pub subtitle: Option<String>,
    /// The topology, depth-first.
    pub tree: Vec<TreeRow>,
    /// The closed-form bound for 1..n active drives.
    pub bounds: Vec<BoundRow>,
    /// The verdict the page leads with (after the title).
    pub verdict: Option<Verdict>,
    /// The caller's sections (sweeps, comparisons), in order.
    pub sections: Vec<HtmlSection>,
    /// A run at full load whose per-link utilization is shown.
    pub full_load: Option<Report>,
    /// Short lines at the foot of the page (how it was generated).
    pub footer: Vec<String>,
}

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Prepares an SVG document for inlining: drops any XML prologue, comments before the root
/// and namespace attributes (HTML5 needs none), makes it scale to the page width, and labels
/// it for screen readers.
pub(crate) fn inline_svg(svg: &str, label: &str) -> String {
    let Some(start) = svg.find("<svg") else {
        return format!("<p class=\"note\">chart unavailable: {}</p>", escape(label));
    };
    let body = &svg[start..];
    let Some(tag_end) = body.find('>') else {
        return format!("<p class=\"note\">chart unavailable: {}</p>", escape(label));
    };
    let (tag, rest) = body.split_at(tag_end);
    // Keep only the attributes that matter inline.
    let mut kept = String::from("<svg class=\"plot\" role=\"img\"");
    let _ = write!(kept, " aria-label=\"{}\"", escape(label));
    for attr in ["viewBox", "width", "height"] {
        if let Some(v) = attr_value(tag, attr) {
            if attr == "viewBox" {
                let _ = write!(kept, " viewBox=\"{}\"", escape(&v));
            } else {
                let _ = write!(kept, " data-{attr}=\"{}\"", escape(&v));
            }
        }
    }
    if let (None, Some(w), Some(h)) = (attr_value(tag, "viewBox"), attr_value(tag, "width"), attr_value(tag, "height"))
    {
        let _ = write!(kept, " viewBox=\"0 0 {} {}\"", escape(&w), escape(&h));
    }
    // Strip namespace references anywhere in the body (plotters writes none past the root,
    // but a caller's SVG might).
    let rest = rest
        .replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
        .replace(" xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
    format!("{kept}{rest}")
}

fn attr_value(tag: &str, name: &str) -> Option<String> {
    let pat = format!(" {name}=\"");
    let i = tag.find(&pat)? + pat.len();
    let j = tag[i..].find('"')?;
    Some(tag[i..i + j].to_string())
}

const CSS: &str = r#"
:root { --ink: #212121; --muted: #666; --rule: #ddd; --band: #f6f6f6; --accent: #1f77b4; --hot: #d62728; }
* { box-sizing: border-box; }
body { font-family: "DejaVu Sans", Verdana, Arial, sans-serif; color: var(--ink); margin: 2em auto; max-width: 1100px; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 2px solid var(--rule); padding-bottom: 0.2em; margin-top: 1.8em; }
section.verdict { border-left: 4px solid var(--accent); padding-left: 0.8em; }
p.answer { font-size: 1.1em; font-weight: bold; }
p.sub { color: var(--muted); margin-top: 0; }
p.note { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: var(--band); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.hot td { color: var(--hot); font-weight: bold; }
td.tree { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre; }
.bar { display: inline-block; height: 0.8em; background: var(--accent); vertical-align: middle; }
tr.hot .bar { background: var(--hot); }
.barbox { display: inline-block; width: 8em; border: 1px solid var(--rule); height: 1em; vertical-align: middle; margin-right: 0.4em; }
svg.plot { width: 100%; height: auto; max-width: 1100px; display: block; margin: 0.8em 0; }
footer { margin-top: 3em; color: var(--muted); font-size: 0.85em; border-top: 1px solid var(--rule); padding-top: 0.5em; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  section, table, svg.plot { break-inside: avoid; page-break-inside: avoid; }
  th { background: none; }
  .bar, .barbox { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  footer { position: static; }
}
"#;

fn table_html(out: &mut String, t: &TextTable, hot_row: Option<usize>) {
    out.push_str("<table>\n<thead><tr>");
    for (h, a) in t.headers.iter().zip(&t.align) {
        let class = if *a == Align::Right { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, row) in t.rows.iter().enumerate() {
        if hot_row == Some(i) {
            out.push_str("<tr class=\"hot\">");
        } else {
            out.push_str("<tr>");
        }
        for (j, cell) in row.iter().enumerate() {
            let right = t.align.get(j) == Some(&Align::Right);
            let class = if right { " class=\"num\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// Guesses alignment for a caller's table: columns whose cells all look numeric go right.
fn align_columns(t: &HtmlTable) -> Vec<Align> {
    (0..t.headers.len())
        .map(|j| {
            let numeric = t.rows.iter().all(|r| {
                r.get(j).is_none_or(|c| {
                    let c = c.trim();
                    c == "-" || c.parse::<f64>().is_ok()
                })
            });
            if numeric && !t.rows.is_empty() { Align::Right } else { Align::Left }
        })
        .collect()
}

fn tree_html(out: &mut String, rows: &[TreeRow]) {
    out.push_str(
        "<table class=\"tree\">\n<thead><tr><th>node</th><th>part</th><th>link</th>\
         <th class=\"num\">read MB/s</th><th class=\"num\">write MB/s</th></tr></thead>\n<tbody>\n",
    );
    // Whether each row is the last child of its parent: no later sibling before the
    // subtree ends.
    let last: Vec<bool> = (0..rows.len())
        .map(|i| rows[i + 1..].iter().take_while(|r| r.depth >= rows[i].depth).all(|r| r.depth != rows[i].depth))
        .collect();
    // For each depth, whether the ancestor at that depth was a last child (no rail below it).
    let mut rails: Vec<bool> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        rails.truncate(r.depth);
        let mut indent = String::new();
        if r.depth > 0 {
            for &ancestor_last in rails.iter().skip(1) {
                indent.push_str(if ancestor_last { "   " } else { "│  " });
            }
            indent.push_str(if last[i] { "└─ " } else { "├─ " });
        }
        while rails.len() < r.depth {
            rails.push(true);
        }
        rails.push(last[i]);
        let (read, write) = if r.read_mb_s == 0.0 && r.write_mb_s == 0.0 {
            (String::new(), String::new())
        } else {
            (fmt_mb_s(r.read_mb_s), fmt_mb_s(r.write_mb_s))
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"tree\">{}{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&indent),
            escape(&r.id),
            escape(&r.part),
            escape(&r.link),
            read,
            write
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

fn bounds_html(out: &mut String, rows: &[BoundRow]) {
    let mut t = TextTable::new(&[
        ("active drives", Align::Right),
        ("read MB/s", Align::Right),
        ("read bound by", Align::Left),
        ("write MB/s", Align::Right),
        ("write bound by", Align::Left),
        ("mixed 50/50 read/write MB/s", Align::Right),
        ("mixed bound by", Align::Left),
    ]);
    for b in rows {
        t.row(vec![
            b.active.to_string(),
            fmt_mb_s(b.read_mb_s),
            b.read_binding.clone(),
            fmt_mb_s(b.write_mb_s),
            b.write_binding.clone(),
            fmt_mb_s(b.mixed_mb_s),
            b.mixed_binding.clone(),
        ]);
    }
    table_html(out, &t, None);
}

fn utilization_html(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "<p>{} with {}: {} MB/s in total ({} read, {} write); bottleneck <strong>{}</strong> at {}%.</p>",
        escape(&r.topology),
        escape(&r.workload.describe()),
        fmt_mb_s(r.total.mb_s),
        fmt_mb_s(r.total.read_mb_s),
        fmt_mb_s(r.total.write_mb_s),
        escape(&r.bottleneck.id),
        fmt_pct(r.bottleneck.util)
    );
    out.push_str(
        "<table>\n<thead><tr><th>link</th><th>kind</th><th class=\"num\">capacity MB/s</th>\
         <th>util up (to host)</th><th>util down (to drives)</th></tr></thead>\n<tbody>\n",
    );
    for l in &r.links {
        let hot = l.id == r.bottleneck.id;
        let bar = |u: f64| {
            let pct = (u * 100.0).clamp(0.0, 100.0);
            format!(
                "<span class=\"barbox\"><span class=\"bar\" style=\"width:{pct:.1}%\"></span></span>{}%",
                fmt_pct(u)
            )
        };
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            if hot { " class=\"hot\"" } else { "" },
            escape(&l.id),
            escape(&l.kind),
            if l.capacity_mb_s > 0.0 { fmt_mb_s(l.capacity_mb_s) } else { "-".into() },
            bar(l.util_up),
            bar(l.util_down)
        );
    }
    out.push_str("</tbody>\n</table>\n");
    for w in &r.warnings {
        let _ = writeln!(out, "<p class=\"note\">warning: {}</p>", escape(w));
    }
    if r.partial {
        out.push_str("<p class=\"note\">partial: the run was interrupted; the numbers cover only part of it.</p>\n");
    }
}

fn paragraphs(out: &mut String, text: &str) {
    for p in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        let _ = writeln!(out, "<p>{}</p>", escape(p));
    }
}

/// Renders the whole page.
///
/// Sections appear in this order: title and subtitle; the verdict (if set); topology (if `tree` is not empty);
/// closed-form bound (if `bounds` is not empty); the caller's sections; per-link
/// utilization at full load (if `full_load` is set); the footer.
pub fn html_report(input: &HtmlReport) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(&input.title));
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(out, "<h1>{}</h1>", escape(&input.title));
    if let Some(sub) = &input.subtitle {
        let _ = writeln!(out, "<p class=\"sub\">{}</p>", escape(sub));
    }
    if let Some(v) = &input.verdict {
        verdict_html(&mut out, v);
    }
    if !input.tree.is_empty() {
        out.push_str("<section>\n<h2>Topology</h2>\n");
        out.push_str(
            "<p>Each row is a part and the link to its parent, with that link's payload capacity per direction.</p>\n",
        );
        tree_html(&mut out, &input.tree);
        out.push_str("</section>\n");
    }
    if !input.bounds.is_empty() {
        out.push_str("<section>\n<h2>Closed-form bound</h2>\n");
        out.push_str("<p>The most the topology can carry with the first n drives busy, and the element that binds, computed without simulation.</p>\n");
        bounds_html(&mut out, &input.bounds);
        out.push_str("</section>\n");
    }
    for s in &input.sections {
        out.push_str("<section>\n");
        let _ = writeln!(out, "<h2>{}</h2>", escape(&s.title));
        if let Some(text) = &s.text {
            paragraphs(&mut out, text);
        }
        if let Some(svg) = &s.svg {
            out.push_str(&inline_svg(svg, &s.title));
            out.push('\n');
        }
        if let Some(t) = &s.table {
            let text = TextTable { headers: t.headers.clone(), align: align_columns(t), rows: t.rows.clone() };
            table_html(&mut out, &text, None);
        }
        out.push_str("</section>\n");
    }
    if let Some(r) = &input.full_load {
        out.push_str("<section>\n<h2>Link utilization at full load</h2>\n");
        utilization_html(&mut out, r);
        out.push_str("</section>\n");
    }
    if !input.footer.is_empty() {
        out.push_str("<footer>\n");
        for line in &input.footer {
            let _ = writeln!(out, "<div>{}</div>", escape(line));
        }
        out.push_str("</footer>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bottleneck_is_named_only_near_saturation() {
        // 13% of the uplink at 4 KiB QD1: the run waits on latency, not on the link.
        assert_eq!(bottleneck_cell("hba.uplink.up (13.0%)"), "latency-bound (busiest hba.uplink.up at 13.0%)");
        assert_eq!(bottleneck_cell("d0.media (100.0%)"), "d0.media (100.0%)");
        assert_eq!(bottleneck_cell("x (90.0%)"), "x (90.0%)");
        assert_eq!(bottleneck_cell("-"), "-");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn inlined_svg_loses_prologue_and_namespace() {
        let svg = "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"20\" viewBox=\"0 0 10 20\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect/></svg>";
        let s = inline_svg(svg, "a <plot>");
        assert!(s.starts_with("<svg class=\"plot\""));
        assert!(s.contains("viewBox=\"0 0 10 20\""));
        assert!(s.contains("aria-label=\"a &lt;plot&gt;\""));
        assert!(!s.contains("http"));
        assert!(s.ends_with("<rect/></svg>"));
    }

    #[test]
    fn svg_without_viewbox_gets_one() {
        let s = inline_svg("<svg width=\"3\" height=\"4\"></svg>", "x");
        assert!(s.contains("viewBox=\"0 0 3 4\""));
    }
}
