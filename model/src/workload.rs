//! Workloads in fio's vocabulary: `rw`, `bs`, `iodepth`, `numjobs`, `rwmixread`, plus
//! iopath's `region`, `active`/`drives` and `copy`.
//!
//! The same [`Workload`] drives the simulator and the hardware mode, so a simulated and a
//! measured report of one workload line up field by field. [`WorkloadSpec`] is the
//! unvalidated form (every field optional, as written in TOML or on the command line);
//! [`WorkloadSpec::resolve`] fills defaults and checks ranges.

use crate::units::{Bytes, KbBase, SimDuration, parse_duration, parse_fio_size, parse_fraction};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// fio's `rw` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (fio `rw`/`readwrite`).
    Rw,
    RandRw,
}

impl Rw {
    pub fn is_random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }
    /// Share of I/Os that are reads, given `rwmixread` (percent).
    pub fn read_share(self, rwmixread: u8) -> f64 {
        match self {
            Rw::Read | Rw::RandRead => 1.0,
            Rw::Write | Rw::RandWrite => 0.0,
            Rw::Rw | Rw::RandRw => f64::from(rwmixread) / 100.0,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Rw => "rw",
            Rw::RandRw => "randrw",
        }
    }
}

impl FromStr for Rw {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "rw" | "readwrite" => Rw::Rw,
            "randrw" => Rw::RandRw,
            other => {
                return Err(format!("{other:?} is not one of read, write, randread, randwrite, rw, randrw"));
            }
        })
    }
}

impl fmt::Display for Rw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which drives a workload runs on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Targets {
    /// Every drive in the topology.
    All,
    /// The first N drives in file order.
    Active(usize),
    /// Named drives.
    Drives(Vec<String>),
}

/// A copy: read `from` sequentially and write the same data to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Copy {
    pub from: String,
    pub to: String,
}

impl FromStr for Copy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
                Ok(Copy { from: a.trim().to_string(), to: b.trim().to_string() })
            }
            _ => Err(format!("{s:?} is not SRC:DST, e.g. D:E")),
        }
    }
}

/// A validated workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub rw: Rw,
    /// Block size [bytes].
    pub bs: Bytes,
    /// I/Os each job keeps outstanding.
    pub iodepth: u32,
    /// Jobs per target drive.
    pub numjobs: u32,
    /// Percent of I/Os that are reads for `rw`/`randrw`.
    pub rwmixread: u8,
    /// Fraction of each drive, from its start, that I/O touches (0, 1].
    pub region: f64,
    /// Whether `region` was given explicitly: then a sequential job without a runtime covers
    /// its region once (a whole-surface read with `--region 100%`).
    #[serde(default)]
    pub region_given: bool,
    /// Measured time; `None`: a sequential job with an explicit region covers it once,
    /// others run a default time.
    pub runtime: Option<SimDuration>,
    /// Warm-up before measuring.
    pub ramp: Option<SimDuration>,
    pub targets: Targets,
    pub copies: Vec<Copy>,
    pub seed: u64,
    /// File size for file targets in the hardware mode.
    pub size: Option<Bytes>,
    /// The `[[client]]` whose requests drive the I/O over the network ([`crate::net`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The `[[pool]]` the workload runs on (its offsets are the pool's logical bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// Failed members of the pool (degraded mode; a rebuild rebuilds them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// Share of the pool's usable bytes holding data, (0, 1]: what a ZFS or btrfs scrub or
    /// rebuild walks.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub fill: f64,
    /// The pool's own I/O, a scrub or a rebuild.
    #[serde(default, skip_serializing_if = "is_io")]
    pub task: crate::pool::Task,
}

fn one() -> f64 {
    1.0
}
fn is_one(f: &f64) -> bool {
    *f == 1.0
}
fn is_io(t: &crate::pool::Task) -> bool {
    *t == crate::pool::Task::Io
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            rw: Rw::Read,
            bs: Bytes::new(128 * 1024),
            iodepth: 1,
            numjobs: 1,
            rwmixread: 50,
            region: 1.0,
            region_given: false,
            runtime: None,
            ramp: None,
            targets: Targets::All,
            copies: Vec::new(),
            seed: 1,
            size: None,
            client: None,
            pool: None,
            failed: Vec::new(),
            fill: 1.0,
            task: crate::pool::Task::Io,
        }
    }
}

/// A workload as written: every field optional. Field names are fio's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// read | write | randread | randwrite | rw | randrw
    pub rw: Option<String>,
    /// Block size, k = 1024 as in fio: "4k", "128k", "1m", "512".
    pub bs: Option<String>,
    pub iodepth: Option<u32>,
    pub numjobs: Option<u32>,
    pub rwmixread: Option<u32>,
    /// Part of each drive that I/O touches, from its start: "10%".
    pub region: Option<String>,
    /// Measured (simulated) time: "20s".
    pub runtime: Option<String>,
    /// Warm-up time: "2s".
    pub ramp: Option<String>,
    /// The first N drives in file order.
    pub active: Option<usize>,
    /// Named drives.
    pub drives: Option<Vec<String>>,
    /// Copies "SRC:DST".
    pub copy: Option<Vec<String>>,
    pub seed: Option<u64>,
    /// File size for file targets (hardware mode): "1g".
    pub size: Option<String>,
    /// A `[[client]]` id: the I/O is that client's requests over the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// A `[[pool]]` id: the workload's I/O goes to the pool, not to drives.
    pub pool: Option<String>,
    /// Failed members of the pool (drive ids): degraded I/O, or what a rebuild rebuilds.
    pub failed: Option<Vec<String>>,
    /// Share of the pool holding data, a percentage: "60%" (ZFS and btrfs scrub and
    /// rebuild only allocated space). Default 100%.
    pub fill: Option<String>,
    /// io (default) | scrub | rebuild: the pool's own I/O, or maintenance over it.
    pub task: Option<String>,
}

/// A workload field that failed to validate.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct WorkloadError {
    pub field: &'static str,
    pub message: String,
}

impl WorkloadSpec {
    /// Fields set in `over` win over fields set here.
    pub fn merged(&self, over: &WorkloadSpec) -> WorkloadSpec {
        WorkloadSpec {
            rw: over.rw.clone().or_else(|| self.rw.clone()),
            bs: over.bs.clone().or_else(|| self.bs.clone()),
            iodepth: over.iodepth.or(self.iodepth),
            numjobs: over.numjobs.or(self.numjobs),
            rwmixread: over.rwmixread.or(self.rwmixread),
            region: over.region.clone().or_else(|| self.region.clone()),
            runtime: over.runtime.clone().or_else(|| self.runtime.clone()),
            ramp: over.ramp.clone().or_else(|| self.ramp.clone()),
            active: over.active.or(if over.drives.is_some() { None } else { self.active }),
            drives: over.drives.clone().or_else(|| if over.active.is_some() { None } else { self.drives.clone() }),
            copy: over.copy.clone().or_else(|| self.copy.clone()),
            seed: over.seed.or(self.seed),
            size: over.size.clone().or_else(|| self.size.clone()),
            client: over.client.clone().or_else(|| self.client.clone()),
            pool: over.pool.clone().or_else(|| self.pool.clone()),
            failed: over.failed.clone().or_else(|| self.failed.clone()),
            fill: over.fill.clone().or_else(|| self.fill.clone()),
            task: over.task.clone().or_else(|| self.task.clone()),
        }
    }

    /// Validates every field, reporting all problems at once.
    pub fn resolve(&self) -> Result<Workload, Vec<WorkloadError>> {
        let mut errs = Vec::new();
        let mut w = Workload::default();
        let mut e = |field: &'static str, message: String| errs.push(WorkloadError { field, message });
        if let Some(rw) = &self.rw {
            match rw.parse() {
                Ok(v) => w.rw = v,
                Err(m) => e("rw", m),
            }
        }
        if let Some(bs) = &self.bs {
            match block_size(bs, w.rw) {
                Ok(b) if b.get() >= 512 && b.get() % 512 == 0 && b.get() <= 64 << 20 => w.bs = b,
                Ok(b) => {
                    e("bs", format!("{bs:?} ({} bytes) must be a multiple of 512 bytes between 512 and 64m", b.get()))
                }
                Err(m) => e("bs", m),
            }
        }
        if let Some(q) = self.iodepth {
            if (1..=65536).contains(&q) { w.iodepth = q } else { e("iodepth", format!("{q} is outside 1..65536")) }
        }
        if let Some(n) = self.numjobs {
            if (1..=4096).contains(&n) { w.numjobs = n } else { e("numjobs", format!("{n} is outside 1..4096")) }
        }
        if let Some(m) = self.rwmixread {
            if m <= 100 { w.rwmixread = m as u8 } else { e("rwmixread", format!("{m} is not a percentage 0..100")) }
        }
        if let Some(r) = &self.region {
            // One spelling: a percentage. A bare number is refused rather than guessed at
            // (0.5 and 50 would both be read as something).
            let t = r.trim();
            match parse_fraction(r) {
                _ if !t.ends_with('%') => {
                    let hint = match t.parse::<f64>() {
                        Ok(v) if v > 0.0 && v < 1.0 => format!("write {}% for that fraction", v * 100.0),
                        Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => format!("write {v}%"),
                        _ => "write a percentage such as 10%".to_string(),
                    };
                    e("region", format!("{r:?} has no %: {hint} (a region is always written as a percentage)"));
                }
                Ok(f) => {
                    w.region = f;
                    w.region_given = true;
                }
                Err(err) => e("region", err.to_string()),
            }
        }
        for (field, val, slot) in [("runtime", &self.runtime, &mut w.runtime), ("ramp", &self.ramp, &mut w.ramp)] {
            if let Some(v) = val {
                match parse_duration(v) {
                    Ok(d) if field == "runtime" && d.nanos() == 0 => e(field, "must be longer than 0".to_string()),
                    Ok(d) => *slot = Some(d),
                    Err(err) => e(field, err.to_string()),
                }
            }
        }
        match (self.active, &self.drives) {
            (Some(_), Some(_)) => e("active", "give either active or drives, not both".to_string()),
            (Some(0), None) => e("active", "must be at least 1".to_string()),
            (Some(n), None) => w.targets = Targets::Active(n),
            (None, Some(d)) if d.is_empty() => e("drives", "names no drive".to_string()),
            (None, Some(d)) => {
                // A drive named twice would run twice; an empty name is a stray comma.
                let mut bad = false;
                for (i, id) in d.iter().enumerate() {
                    if id.trim().is_empty() {
                        e("drives", format!("drive {} of the list is empty (a stray comma?)", i + 1));
                        bad = true;
                    } else if d[..i].contains(id) {
                        e("drives", format!("{id:?} is named twice; name each drive once"));
                        bad = true;
                    }
                }
                if !bad {
                    w.targets = Targets::Drives(d.clone());
                }
            }
            (None, None) => {}
        }
        if let Some(copies) = &self.copy {
            for c in copies {
                match c.parse::<Copy>() {
                    Ok(c) if c.from == c.to => e("copy", format!("{}:{} copies a drive onto itself", c.from, c.to)),
                    Ok(c) => w.copies.push(c),
                    Err(m) => e("copy", m),
                }
            }
        }
        if let Some(s) = self.seed {
            w.seed = s;
        }
        if let Some(s) = &self.size {
            // fio's `size`: the bytes of each target I/O touches, or a share of it (`10%`,
            // iopath's region, from the start).
            if s.trim().ends_with('%') {
                match parse_fraction(s) {
                    _ if self.region.is_some() => {
                        e("size", format!("{s:?} and region both give the share of each drive: give one"))
                    }
                    Ok(f) if f > 0.0 && f <= 1.0 => {
                        w.region = f;
                        w.region_given = true;
                    }
                    Ok(_) => e("size", format!("{s:?} is outside (0%, 100%]")),
                    Err(err) => e("size", err.to_string()),
                }
            } else {
                match parse_fio_size(s, KbBase::Binary) {
                    Ok(b) if b.get() > 0 => w.size = Some(b),
                    Ok(_) => e("size", "must be larger than 0".to_string()),
                    Err(err) => e("size", err.to_string()),
                }
            }
        }
        if let Some(c) = &self.client {
            if c.trim().is_empty() { e("client", "names no client".to_string()) } else { w.client = Some(c.clone()) }
        }
        self.resolve_pool(&mut w, &mut e);
        if errs.is_empty() { Ok(w) } else { Err(errs) }
    }

    /// The pool fields: `pool`, `failed`, `fill`, `task` (which pool and members exist is
    /// checked against the topology by the binding).
    fn resolve_pool(&self, w: &mut Workload, e: &mut impl FnMut(&'static str, String)) {
        if let Some(p) = &self.pool {
            if p.trim().is_empty() {
                e("pool", "names no pool".to_string())
            } else {
                w.pool = Some(p.trim().to_string())
            }
        }
        if let Some(f) = &self.failed {
            for (i, id) in f.iter().enumerate() {
                if id.trim().is_empty() {
                    e("failed", format!("drive {} of the list is empty (a stray comma?)", i + 1));
                } else if f[..i].contains(id) {
                    e("failed", format!("{id:?} is named twice; name each failed drive once"));
                } else {
                    w.failed.push(id.trim().to_string());
                }
            }
        }
        if let Some(f) = &self.fill {
            match parse_fraction(f) {
                _ if !f.trim().ends_with('%') => e("fill", format!("{f:?} has no %: write a percentage such as 60%")),
                Ok(v) if v > 0.0 && v <= 1.0 => w.fill = v,
                Ok(_) => e("fill", format!("{f:?} is outside (0%, 100%]")),
                Err(err) => e("fill", err.to_string()),
            }
        }
        if let Some(t) = &self.task {
            match t.parse() {
                Ok(t) => w.task = t,
                Err(m) => e("task", m),
            }
        }
        if w.pool.is_none() {
            for (field, given) in
                [("failed", self.failed.is_some()), ("fill", self.fill.is_some()), ("task", self.task.is_some())]
            {
                if given {
                    e(field, "applies to a pool workload only: name the pool with pool = \"ID\"".to_string());
                }
            }
        } else if !w.copies.is_empty() || w.targets != Targets::All {
            e("pool", "a pool workload runs on the pool's members: give no active, drives or copy".to_string());
        }
        if w.task == crate::pool::Task::Rebuild && w.failed.is_empty() && w.pool.is_some() {
            e("task", "a rebuild rebuilds failed members: name them with failed = [\"ID\"]".to_string());
        }
    }
}

/// fio's `bs`: one size for reads and writes, or a `read,write` pair (`4k,8k`; an empty
/// side keeps fio's default of 4k, `bs=,8k`). iopath runs one block size per workload: the
/// direction the workload does picks its side of a pair; a mixed workload needs both sides
/// equal. Sizes have fio's meaning under its default `kb_base=1024` ([`KbBase`]).
pub fn block_size(bs: &str, rw: Rw) -> Result<Bytes, String> {
    let one = |v: &str| -> Result<Bytes, String> {
        if v.trim().is_empty() {
            Ok(Bytes::new(4096))
        } else {
            parse_fio_size(v, KbBase::Binary).map_err(|e| e.to_string())
        }
    };
    let Some((r, rest)) = bs.split_once(',') else {
        return one(bs);
    };
    // fio's third value is for trims, which iopath does not run.
    let wr = rest.split(',').next().unwrap_or(rest);
    let (r, wr) = (one(r)?, one(wr)?);
    match rw {
        Rw::Read | Rw::RandRead => Ok(r),
        Rw::Write | Rw::RandWrite => Ok(wr),
        Rw::Rw | Rw::RandRw if r == wr => Ok(r),
        Rw::Rw | Rw::RandRw => Err(format!(
            "{bs:?} gives reads {} bytes and writes {}: iopath runs one block size per mixed workload; give one size",
            r.get(),
            wr.get()
        )),
    }
}

impl Workload {
    /// A short fio-like description: `read bs=1m iodepth=8`.
    pub fn describe(&self) -> String {
        let mut s = if self.copies.is_empty() {
            format!("{} bs={} iodepth={}", self.rw, self.bs, self.iodepth)
        } else {
            let c: Vec<String> = self.copies.iter().map(|c| format!("{}:{}", c.from, c.to)).collect();
            format!("copy {} bs={} iodepth={}", c.join(","), self.bs, self.iodepth)
        };
        if self.numjobs > 1 {
            s += &format!(" numjobs={}", self.numjobs);
        }
        if matches!(self.rw, Rw::Rw | Rw::RandRw) {
            s += &format!(" rwmixread={}", self.rwmixread);
        }
        if self.region < 1.0 {
            s += &format!(" region={}%", self.region * 100.0);
        }
        if let Some(p) = &self.pool {
            s += &format!(" pool={p}");
            if self.task != crate::pool::Task::Io {
                s += &format!(" task={}", self.task.name());
            }
            if !self.failed.is_empty() {
                s += &format!(" failed={}", self.failed.join(","));
            }
            if self.fill < 1.0 {
                s += &format!(" fill={}%", self.fill * 100.0);
            }
        }
        match &self.targets {
            Targets::All => {}
            Targets::Active(n) => s += &format!(" active={n}"),
            Targets::Drives(d) => s += &format!(" drives={}", d.join(",")),
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_fio_style_fields() {
        let spec = WorkloadSpec {
            rw: Some("randread".into()),
            bs: Some("512".into()),
            numjobs: Some(2),
            region: Some("10%".into()),
            active: Some(5),
            ..Default::default()
        };
        let w = spec.resolve().unwrap();
        assert_eq!(w.rw, Rw::RandRead);
        assert_eq!(w.bs.get(), 512);
        assert_eq!(w.region, 0.1);
        assert_eq!(w.targets, Targets::Active(5));
    }

    #[test]
    fn reports_every_bad_field() {
        let spec = WorkloadSpec {
            rw: Some("sideways".into()),
            bs: Some("100".into()),
            iodepth: Some(0),
            rwmixread: Some(140),
            copy: Some(vec!["D".into()]),
            ..Default::default()
        };
        let errs = spec.resolve().unwrap_err();
        let fields: Vec<_> = errs.iter().map(|e| e.field).collect();
        assert_eq!(fields, ["rw", "bs", "iodepth", "rwmixread", "copy"]);
    }

    #[test]
    fn duplicate_drives_and_bare_regions_are_errors() {
        let dup = WorkloadSpec { drives: Some(vec!["D".into(), "D".into()]), ..Default::default() };
        let errs = dup.resolve().unwrap_err();
        assert!(errs[0].message.contains("\"D\" is named twice"), "{errs:?}");
        let empty = WorkloadSpec { drives: Some(vec!["D".into(), "".into()]), ..Default::default() };
        assert!(empty.resolve().unwrap_err()[0].message.contains("empty"));
        for (r, hint) in [("0.5", "write 50%"), ("50", "write 50%")] {
            let spec = WorkloadSpec { region: Some(r.into()), ..Default::default() };
            let errs = spec.resolve().unwrap_err();
            assert!(errs[0].message.contains(hint), "{r}: {errs:?}");
        }
        let ok = WorkloadSpec { region: Some("50%".into()), ..Default::default() };
        assert_eq!(ok.resolve().unwrap().region, 0.5);
    }

    #[test]
    fn bs_pairs_and_sizes_have_fios_meaning() {
        // fio's HOWTO, `bs`: "bs=256k,1M" gives reads 256 KiB and writes 1 MiB; a side left
        // empty keeps the default 4k. 4KiB is 4,000 bytes under fio's default kb_base.
        let bs = |rw: &str, bs: &str| {
            WorkloadSpec { rw: Some(rw.into()), bs: Some(bs.into()), ..Default::default() }
                .resolve()
                .map(|w| w.bs.get())
        };
        assert_eq!(bs("read", "4k,8k"), Ok(4096));
        assert_eq!(bs("randwrite", "4k,8k"), Ok(8192));
        assert_eq!(bs("write", ",8k"), Ok(8192));
        assert_eq!(bs("read", ",8k"), Ok(4096));
        assert_eq!(bs("randrw", "8k,8k"), Ok(8192));
        assert!(bs("randrw", "4k,8k").unwrap_err()[0].message.contains("one block size"));
        assert_eq!(bs("read", "4096"), Ok(4096));
        // 4KiB = 4,000 bytes: not a multiple of 512, so refused, as direct I/O would be.
        assert!(bs("read", "4KiB").unwrap_err()[0].message.contains("4000 bytes"));
        let size = |s: &str| WorkloadSpec { size: Some(s.into()), ..Default::default() }.resolve();
        let w = size("10%").unwrap();
        assert_eq!((w.region, w.region_given, w.size), (0.1, true, None));
        assert_eq!(size("1g").unwrap().size.map(|b| b.get()), Some(1 << 30));
        let both = WorkloadSpec { size: Some("10%".into()), region: Some("20%".into()), ..Default::default() };
        assert!(both.resolve().unwrap_err()[0].message.contains("give one"));
    }

    #[test]
    fn merge_lets_the_command_line_win() {
        let file = WorkloadSpec { rw: Some("read".into()), active: Some(3), ..Default::default() };
        let cli = WorkloadSpec { drives: Some(vec!["D".into()]), ..Default::default() };
        let m = file.merged(&cli);
        assert_eq!(m.active, None);
        assert_eq!(m.drives, Some(vec!["D".to_string()]));
        assert_eq!(m.rw.as_deref(), Some("read"));
    }
}
