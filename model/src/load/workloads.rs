//! The `[workload.NAME]` tables of a topology: types, ranges and drive names.

use crate::bind::{BindError, BindField, bind};
use crate::topology::{RawWorkload, Sink, found, known};
use crate::workload::{Copy, Targets, WorkloadSpec};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// What a workload field must be, in words with an example, and what it means.
pub(crate) fn workload_words(field: &str) -> (&'static str, &'static str) {
    match field {
        "rw" => (
            "one of read, write, randread, randwrite, rw, randrw in quotes (e.g. rw = \"randread\")",
            "rw is fio's access pattern",
        ),
        "bs" => (
            "a block size in quotes, a multiple of 512 bytes up to 64m (e.g. bs = \"4k\" or bs = \"1m\")",
            "bs is the size of each I/O; k = 1024 as in fio",
        ),
        "iodepth" => (
            "a whole number of I/Os each job keeps in flight, from 1 to 65536 (e.g. iodepth = 32)",
            "iodepth is fio's queue depth per job",
        ),
        "numjobs" => (
            "a whole number of jobs per drive, from 1 to 4096 (e.g. numjobs = 4)",
            "numjobs is how many fio jobs run on each drive",
        ),
        "rwmixread" => (
            "a whole percentage of reads, from 0 to 100 (e.g. rwmixread = 70)",
            "rwmixread is the share of reads for rw = \"rw\" or \"randrw\"",
        ),
        "region" => (
            "a share of each drive in quotes, above 0% and up to 100% (e.g. region = \"10%\")",
            "region limits I/O to the start of each drive",
        ),
        "runtime" => ("a duration in quotes (e.g. runtime = \"20s\")", "runtime is the measured time"),
        "ramp" => ("a duration in quotes (e.g. ramp = \"2s\")", "ramp is the warm-up before measuring"),
        "active" => (
            "a whole number of drives, at least 1 (e.g. active = 4)",
            "active runs the workload on the first N drives in file order",
        ),
        "drives" => (
            "a list of drive ids in quotes (e.g. drives = [\"d0\", \"d1\"])",
            "drives names the [[drive]] ids the workload runs on; give either active or drives",
        ),
        "copy" => (
            "a list of \"SRC:DST\" pairs of drive ids (e.g. copy = [\"d0:d1\"])",
            "copy reads SRC sequentially and writes the data to DST",
        ),
        "seed" => ("a whole number from 0 (e.g. seed = 7)", "seed makes random workloads repeatable"),
        "size" => (
            "a file size in quotes (e.g. size = \"1g\")",
            "size is the file size for file targets in the hardware mode",
        ),
        "client" => (
            "a [[client]] id in quotes (e.g. client = \"laptop\")",
            "client runs the workload as that client's requests over the network",
        ),
        "pool" => ("a [[pool]] id in quotes (e.g. pool = \"tank\")", "pool runs the workload on a [[pool]]"),
        "failed" => (
            "a list of member drive ids in quotes (e.g. failed = [\"d3\"])",
            "failed names the pool's failed members (degraded mode; what a rebuild rebuilds)",
        ),
        "fill" => (
            "a share of the pool in quotes, above 0% and up to 100% (e.g. fill = \"60%\")",
            "fill is how full the pool is: ZFS and btrfs scrub and rebuild only allocated space",
        ),
        "task" => (
            "one of io, scrub, rebuild in quotes (e.g. task = \"scrub\")",
            "task runs the pool's own I/O (io), a scrub, or a rebuild of the failed members",
        ),
        _ => ("a value", "`iopath schema` lists the workload keys"),
    }
}

impl RawWorkload {
    /// The position of a field's value.
    pub(crate) fn span(&self, field: &str) -> Option<Range<usize>> {
        let v = match field {
            "rw" => &self.rw,
            "bs" => &self.bs,
            "iodepth" => &self.iodepth,
            "numjobs" => &self.numjobs,
            "rwmixread" => &self.rwmixread,
            "region" => &self.region,
            "runtime" => &self.runtime,
            "ramp" => &self.ramp,
            "active" => &self.active,
            "seed" => &self.seed,
            "size" => &self.size,
            "client" => &self.client,
            "pool" => &self.pool,
            "fill" => &self.fill,
            "task" => &self.task,
            "failed" => return self.failed.as_ref().and_then(known),
            "drives" => return self.drives.as_ref().and_then(known),
            "copy" => return self.copy.as_ref().and_then(known),
            _ => return None,
        };
        v.as_ref().and_then(known)
    }
}

/// How to name a drive, after an unknown id.
const DRIVE_NAME_HELP: &str = "name the id of a [[drive]]; a [[drive]] with id = \"d\" and count = N has the ids d0 .. dN-1 (`iopath check` lists them)";

/// Binds a table's drives and copy pairs to the topology's drives with [`bind`], the same
/// binding `simulate` and `measure` make, and reports each problem at its value.
fn check_binding(
    sink: &mut Sink,
    w: &RawWorkload,
    name: &str,
    spec: &WorkloadSpec,
    parsed: &[(usize, Copy)],
    drive_ids: &[&str],
) {
    // Each of drives, active and copy on its own (copies, when given, decide the drives), so
    // every mistake written in the file is reported.
    let copies: Vec<Copy> = parsed.iter().map(|(_, c)| c.clone()).collect();
    let mut errors = Vec::new();
    let mut check =
        |targets: Targets, copies: &[Copy]| errors.extend(bind(drive_ids, &targets, copies).err().unwrap_or_default());
    if let Some(d) = &spec.drives {
        check(Targets::Drives(d.clone()), &[]);
    }
    if let Some(n) = spec.active {
        check(Targets::Active(n), &[]);
    }
    if !copies.is_empty() {
        check(Targets::All, &copies);
    }
    for e in errors {
        let field = e.field().name();
        // The element of the list in the file: copy pairs that did not parse are not bound.
        let element = e.index().map(|i| match e.field() {
            BindField::Copy => parsed[i].0,
            _ => i,
        });
        let value = |list: &Option<Spanned<Vec<Spanned<toml::Value>>>>| {
            list.as_ref().and_then(|l| l.get_ref().get(element?)).and_then(known)
        };
        let (span, k) = match (e.field(), element) {
            (BindField::Drives, Some(i)) => (value(&w.drives), format!("workload.{name}.drives[{i}]")),
            (BindField::Copy, Some(i)) => (value(&w.copy), format!("workload.{name}.copy[{i}]")),
            _ => (w.span(field), format!("workload.{name}.{field}")),
        };
        let context = match (e.field(), element) {
            (BindField::Copy, Some(i)) => {
                format!("copy {:?}: ", spec.copy.as_ref().and_then(|c| c.get(i)).map_or("", |s| s))
            }
            _ => String::new(),
        };
        let help = match &e {
            BindError::UnknownDrive { .. } => DRIVE_NAME_HELP.to_string(),
            BindError::TooManyActive { have, .. } => {
                format!("use active = {have} or less, or leave active out to run on every drive")
            }
            BindError::CopyChain { .. } | BindError::TwoSources { .. } => {
                "give each copy its own destination drive, and read only drives no copy writes".to_string()
            }
        };
        let message = match &e {
            // In the file's own words.
            BindError::TooManyActive { asked, have } => {
                format!("active = {asked}, but the topology has only {have} drive{}", if *have == 1 { "" } else { "s" })
            }
            _ => format!("{context}{e}"),
        };
        sink.at(span, k, message, Some(help));
    }
}

/// Turns the file's `[workload.NAME]` tables into [`WorkloadSpec`]s, reporting every
/// problem at the value it is about: types, ranges (via [`WorkloadSpec::resolve`]), drive ids
/// that do not exist and `active` larger than the number of drives. `drives_complete` is
/// false when some [[drive]] was rejected; then drive names and counts are not checked.
pub(crate) fn check_workloads(
    sink: &mut Sink,
    raw: &BTreeMap<String, RawWorkload>,
    drive_ids: &[&str],
    drives_complete: bool,
) -> BTreeMap<String, WorkloadSpec> {
    let mut out = BTreeMap::new();
    for (name, w) in raw {
        let first = sink.out.len();
        let key = |f: &str| format!("workload.{name}.{f}");
        let type_error = |sink: &mut Sink, v: &Spanned<toml::Value>, field: &str, k: String| {
            let (what, help) = workload_words(field);
            sink.at(
                known(v),
                k,
                format!("expected {what}, found {}", found(v.get_ref())),
                Some(format!("{help}; write {what}")),
            );
        };
        let text = |sink: &mut Sink, v: &Option<Spanned<toml::Value>>, field: &str| {
            let v = v.as_ref()?;
            match v.get_ref() {
                toml::Value::String(s) => Some(s.clone()),
                _ => {
                    type_error(sink, v, field, key(field));
                    None
                }
            }
        };
        let whole = |sink: &mut Sink, v: &Option<Spanned<toml::Value>>, field: &str| {
            let v = v.as_ref()?;
            match v.get_ref() {
                toml::Value::Integer(i) => Some(*i),
                _ => {
                    type_error(sink, v, field, key(field));
                    None
                }
            }
        };
        // A whole number that must also fit the field's type (u32, usize, u64).
        let fits = |sink: &mut Sink, v: &Option<Spanned<toml::Value>>, field: &str, ok: bool| {
            if let Some(v) = v.as_ref().filter(|_| !ok) {
                type_error(sink, v, field, key(field));
            }
        };
        let mut spec = WorkloadSpec {
            rw: text(sink, &w.rw, "rw"),
            bs: text(sink, &w.bs, "bs"),
            region: text(sink, &w.region, "region"),
            runtime: text(sink, &w.runtime, "runtime"),
            ramp: text(sink, &w.ramp, "ramp"),
            size: text(sink, &w.size, "size"),
            client: text(sink, &w.client, "client"),
            pool: text(sink, &w.pool, "pool"),
            fill: text(sink, &w.fill, "fill"),
            task: text(sink, &w.task, "task"),
            ..WorkloadSpec::default()
        };
        if let Some(list) = &w.failed {
            let mut names = Vec::new();
            for (j, v) in list.get_ref().iter().enumerate() {
                match v.get_ref() {
                    toml::Value::String(s) => names.push(s.clone()),
                    _ => type_error(sink, v, "failed", format!("workload.{name}.failed[{j}]")),
                }
            }
            spec.failed = Some(names);
        }
        if let Some(i) = whole(sink, &w.iodepth, "iodepth") {
            spec.iodepth = u32::try_from(i).ok();
            fits(sink, &w.iodepth, "iodepth", spec.iodepth.is_some());
        }
        if let Some(i) = whole(sink, &w.numjobs, "numjobs") {
            spec.numjobs = u32::try_from(i).ok();
            fits(sink, &w.numjobs, "numjobs", spec.numjobs.is_some());
        }
        if let Some(i) = whole(sink, &w.rwmixread, "rwmixread") {
            spec.rwmixread = u32::try_from(i).ok();
            fits(sink, &w.rwmixread, "rwmixread", spec.rwmixread.is_some());
        }
        if let Some(i) = whole(sink, &w.seed, "seed") {
            spec.seed = u64::try_from(i).ok();
            fits(sink, &w.seed, "seed", spec.seed.is_some());
        }
        if let Some(i) = whole(sink, &w.active, "active") {
            spec.active = usize::try_from(i).ok();
            fits(sink, &w.active, "active", spec.active.is_some());
        }
        if let Some(list) = &w.drives {
            let mut names = Vec::new();
            for (j, v) in list.get_ref().iter().enumerate() {
                let k = format!("workload.{name}.drives[{j}]");
                match v.get_ref() {
                    toml::Value::String(s) => names.push(s.clone()),
                    _ => type_error(sink, v, "drives", k),
                }
            }
            spec.drives = Some(names);
        }
        // The copy pairs that parsed, with the element each came from.
        let mut parsed: Vec<(usize, Copy)> = Vec::new();
        if let Some(list) = &w.copy {
            let mut pairs = Vec::new();
            for (j, v) in list.get_ref().iter().enumerate() {
                let k = format!("workload.{name}.copy[{j}]");
                let toml::Value::String(s) = v.get_ref() else {
                    type_error(sink, v, "copy", k);
                    continue;
                };
                // Each pair on its own, so a problem points at its element.
                let one = WorkloadSpec { copy: Some(vec![s.clone()]), ..WorkloadSpec::default() };
                match one.resolve() {
                    Ok(r) => parsed.extend(r.copies.into_iter().map(|c| (j, c))),
                    Err(errs) => {
                        let (what, help) = workload_words("copy");
                        for e in errs {
                            sink.at(known(v), k.clone(), e.message, Some(format!("{help}; write {what}")));
                        }
                    }
                }
                pairs.push(s.clone());
            }
            spec.copy = Some(pairs);
        }
        if drives_complete {
            check_binding(sink, w, name, &spec, &parsed, drive_ids);
        }
        // Ranges and formats of the other fields.
        let rest = WorkloadSpec { copy: None, ..spec.clone() };
        if let Err(errs) = rest.resolve() {
            for e in errs {
                let (what, help) = workload_words(e.field);
                sink.at(w.span(e.field), key(e.field), e.message, Some(format!("{help}; write {what}")));
            }
        }
        // In file order within the table.
        sink.out[first..].sort_by_key(|d| (d.line == 0, d.line, d.column));
        out.insert(name.clone(), spec);
    }
    out
}
