//! Markdown export: a short header naming the topology and workload, then the table a
//! person reads in the terminal, as a GitHub-flavoured Markdown table.

use super::{ExportFormat, Exporter};
use crate::error::ReportError;
use crate::tables::{
    PARTIAL_MARKER, cost_line, drive_table, fmt_pct, link_table, sweep_text_table, sweep_workload_label,
};
use iopath_model::report::{Report, ReportKind, Sweep};
use std::fmt::Write as _;

/// Writes Markdown documents.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn format(&self) -> ExportFormat {
        ExportFormat::Markdown
    }

    fn sweep(&self, sweep: &Sweep) -> Result<Vec<u8>, ReportError> {
        let mut out = String::new();
        let _ = writeln!(out, "## Sweep: {}\n", sweep.topology);
        let mut params: Vec<&str> = Vec::new();
        if let Some(p) = sweep.points.first() {
            params.push(&p.param);
        }
        if let Some(p2) = sweep.points.iter().find_map(|p| p.param2.as_deref()) {
            params.push(p2);
        }
        if !params.is_empty() {
            let _ = write!(out, "Swept: `{}`", params.join("` x `"));
            if let Some(w) = sweep_workload_label(sweep) {
                let _ = write!(out, "; workload: `{w}`");
            }
            out.push_str(". Rates in MB/s (10^6 bytes/s), latency in microseconds.\n\n");
        }
        out.push_str(&sweep_text_table(sweep).render_markdown());
        if sweep.partial {
            let _ = writeln!(out, "\n_{PARTIAL_MARKER}_");
        }
        Ok(out.into_bytes())
    }

    fn report(&self, r: &Report) -> Result<Vec<u8>, ReportError> {
        let mut out = String::new();
        let kind = match r.kind {
            ReportKind::Simulated => "simulated",
            ReportKind::Measured => "measured",
        };
        let _ = writeln!(out, "## {} ({kind})\n", r.topology);
        let w = r.workload.describe();
        if !w.is_empty() {
            let _ = writeln!(out, "Workload: `{w}`\n");
        }
        out.push_str(&drive_table(r).render_markdown());
        if !r.links.is_empty() {
            out.push('\n');
            out.push_str(&link_table(r).render_markdown());
        }
        let _ =
            writeln!(out, "\nBottleneck: `{}` at {}%\n\n{}", r.bottleneck.id, fmt_pct(r.bottleneck.util), cost_line(r));
        for warning in &r.warnings {
            let _ = writeln!(out, "\n> warning: {warning}");
        }
        if r.partial {
            let _ = writeln!(out, "\n_{PARTIAL_MARKER}_");
        }
        Ok(out.into_bytes())
    }
}
