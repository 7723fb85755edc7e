//! # iopath-reports: tables, exports, plots and HTML pages from iopath's results
//!
//! This crate turns the shared result types of [`iopath_model::report`] (a [`Report`] of one
//! run, a [`Sweep`] of many) into things people read and scripts parse:
//!
//! - [`tables`]: aligned plain-text tables for a terminal ([`report_table`], [`sweep_table`]);
//! - [`export`]: JSON, CSV and Markdown exporters behind one small trait ([`Exporter`]), and
//!   the one output writer: every file written atomically ([`write_atomic`]), every set of
//!   files swapped in whole ([`write_set`], [`write_sweep_outputs`]), device nodes and
//!   symbolic links refused ([`export::output`]);
//! - [`plot`]: SVG and PNG charts of a sweep (throughput against the swept value, the
//!   closed-form bound dashed, the bottleneck annotated, measured points overlaid) and, for an
//!   `iodepth` sweep, latency against throughput;
//! - [`html`]: one self-contained HTML page (inline CSS and SVG, no network, no JavaScript).
//!
//! ```text
//!   Report / Sweep (iopath-model) ──► tables ──► terminal
//!                                 ├─► export ──► sweep.json  sweep.csv  sweep.md
//!                                 ├─► plot   ──► sweep.svg   sweep.png  latency.svg/png
//!                                 └─► html   ──► report.html (caller fills HtmlReport)
//! ```
//!
//! A report as the simulator writes it (DESIGN.md §4), printed for a terminal:
//!
//! ```
//! use iopath_reports::{Report, report_table};
//!
//! let report: Report = serde_json::from_value(serde_json::json!({
//!     "kind": "simulated", "topology": "one SSD on SATA",
//!     "workload": { "rw": "read", "bs": 131072, "iodepth": 1, "numjobs": 1, "rwmixread": 50,
//!                   "region": 1.0, "runtime": 5000000000u64, "ramp": null, "targets": "all",
//!                   "copies": [], "seed": 1, "size": null },
//!     "total": { "read_mb_s": 530.0, "write_mb_s": 0.0, "mb_s": 530.0, "iops": 4043.6,
//!                "lat_us": { "mean": 247.0, "p50": 240.0, "p99": 410.0 } },
//!     "drives": [ { "id": "D", "read_mb_s": 530.0, "write_mb_s": 0.0, "iops": 4043.6,
//!                   "lat_us": { "mean": 247.0, "p50": 240.0, "p99": 410.0 } } ],
//!     "links": [ { "id": "D.link", "util_up": 0.94, "util_down": 0.0,
//!                  "capacity_mb_s": 565.0, "kind": "sata3" } ],
//!     "bottleneck": { "id": "D", "util": 0.99 },
//!     "cost": { "events": 81000, "ios": 20000, "wall_s": 0.02, "sim_s": 5.0 }
//! })).unwrap();
//! let table = report_table(&report);
//! assert!(table.contains("bottleneck: D at 99.0%"));
//! assert_eq!(report.workload.describe(), "read bs=128k iodepth=1");
//! assert!(table.lines().any(|l| l.starts_with("D.link") && l.contains("94.0")));
//! ```
//!
//! Guarantees: this crate sees only result types (it never depends on the simulator or the
//! hardware mode); it writes files only where its caller names them, always through a temporary
//! with a random name in the same directory that is synced and renamed into place (a set of
//! files: a staging directory swapped with the old one); its output does not
//! depend on the machine (plots use the DejaVu Sans font bundled in `assets/`, registered
//! once before the first chart is drawn, so text renders where no system fonts exist).

#![warn(missing_docs)]

pub mod error;
pub mod export;
pub mod html;
pub mod page;
pub mod page_pool;
pub mod plot;
pub mod pool;
pub mod pools;
pub mod surface;
pub mod tables;
pub mod tree;

mod font;

pub use error::ReportError;
pub use export::{ExportFormat, Exporter, write_atomic, write_report_outputs, write_set, write_sweep_outputs};
pub use html::{BoundRow, HtmlReport, HtmlSection, HtmlTable, TreeRow, html_report};

pub use plot::{
    MeasuredSeries, PlotOptions, latency_png_bytes, latency_svg_string, sweep_png_bytes, sweep_svg_string,
    write_latency_png, write_latency_svg, write_sweep_png, write_sweep_svg,
};
pub use tables::{report_table, sweep_table};

#[doc(no_inline)]
pub use iopath_model::report::{Report, Sweep, SweepPoint};
