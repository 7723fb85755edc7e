//! Integration tests of iopath-reports, one binary with a module per output kind.
//!
//! Every test builds its inputs by hand ([`fixtures`]) with known numbers and checks that
//! those numbers come out where a person or a script would look for them.

/// Hand-built reports and sweeps.
mod fixtures;

/// Terminal tables: numbers, layout (insta snapshots), failed points, markers.
mod tables;

/// JSON, CSV and Markdown exporters, the atomic writer, and `write_sweep_outputs`.
mod export;

/// SVG and PNG charts: size, colours, title, the dashed bound, measured markers.
mod plot;

/// The self-contained HTML page.
mod html;
