//! # iopath-validate: the hardware mode
//!
//! Runs the workloads of [`iopath_model::Workload`] as real direct I/O and reports them in
//! the same [`iopath_model::report::Report`] the simulator writes (`kind: measured`), so a
//! measured and a simulated report line up field by field.
//!
//! - [`target`]: opening files and block devices with `O_DIRECT`, their alignment
//!   (statx `STATX_DIOALIGN`, then `BLKSSZGET`, then the page size) and size, aligned
//!   buffers, laying out file targets (fully written, never sparse), refusing tmpfs;
//! - [`engine`]: the runners behind one trait: io_uring (one ring per worker thread),
//!   threads with `pread`/`pwrite` when io_uring is unavailable, and a mock for tests;
//! - [`measure`]: a whole measurement: safety gate, targets, timing with a ramp, per-second
//!   samples, latency histograms, warnings that say what to do, the report;
//! - [`safety`]: the write gate (mounts, holders, loops, swap, `O_EXCL`, `flock`, on-disk
//!   signatures found by libblkid and by a built-in probe, for devices and files alike);
//! - [`blkid`]: the system's libblkid, loaded at run time;
//! - [`discover`]: this machine's topology from sysfs, written as a topology file;
//! - [`fio`]: fio JSON ingest and fio job files for the same workload;
//! - [`cpubench`]: the storage stack's CPU kernels timed on this machine (`measure --cpu`);
//! - [`calibrate`]: measured points (reports, ramps, fio JSON, CSV), least-squares fits of
//!   part figures to them, part files for `--parts`.
//!
//! The loop-device rigs of the tests live in the `iopath-test-support` crate, a
//! dev-dependency only.
//!
//! Invariants: only this crate calls libc or reads `/sys` and `/proc`; nothing here writes
//! to a block device that [`safety`] has not cleared; every error names the path or
//! device and says how to fix it.

pub mod blkid;
pub mod calibrate;
pub mod compare;
pub mod cpubench;
pub mod discover;
pub mod engine;
pub mod fio;
pub mod measure;
pub mod safety;
pub mod sysstat;
pub mod target;

pub use measure::{MeasureError, MeasureOptions, TargetSpec, measure};
