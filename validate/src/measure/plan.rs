//! What a point runs: its targets, opened through the safety gate, aligned regions and
//! one job per target and `numjobs`.

use super::{MeasureError, MeasureOptions, Offset, TargetSpec};
use crate::engine::{JobKind, JobSpec, Side};
use crate::safety::{self, Refusal, RefusalKind};
use crate::target::{self, OpenMode, Opened, TargetError};
use iopath_model::bind::bind_workload;
use iopath_model::workload::Workload;
use std::path::{Path, PathBuf};

/// The targets of one point, open, with their jobs.
pub(super) struct Plan {
    pub targets: Vec<TargetSpec>,
    pub opened: Vec<Opened>,
    pub jobs: Vec<JobSpec>,
    /// Per job, the targets its bytes count for: `[its own target, the copy destination]`
    /// (the same index twice for a job that is not a copy).
    pub sides: Vec<[usize; 2]>,
}

/// Selects, opens and checks the targets and builds the jobs.
pub(super) fn plan(o: &MeasureOptions, warnings: &mut Vec<String>) -> Result<Plan, MeasureError> {
    let w = &o.workload;
    let targets = select_targets(w, &o.targets)?;
    let roles = roles(w, &targets);
    let opened = open_all(o, &targets, &roles, warnings)?;
    let regions = regions(w, o.offset, &opened)?;
    let (jobs, sides) = jobs(w, &targets, &roles, &opened, &regions);
    Ok(Plan { targets, opened, jobs, sides })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Mixed or pure I/O on this target; `read_pct` of the I/Os are reads.
    Mix {
        read_pct: u8,
    },
    CopySource,
    CopyDest,
}

/// Picks the targets a workload runs on, by the same [`bind`] as the simulator.
pub fn select_targets(w: &Workload, pool: &[TargetSpec]) -> Result<Vec<TargetSpec>, MeasureError> {
    let ids: Vec<&str> = pool.iter().map(|t| t.id.as_str()).collect();
    let v: Vec<TargetSpec> = bind_workload(&ids, w)?.drives.iter().map(|&k| pool[k].clone()).collect();
    if v.is_empty() {
        return Err(MeasureError::NoTargets);
    }
    Ok(v)
}

pub(super) fn roles(w: &Workload, targets: &[TargetSpec]) -> Vec<Role> {
    targets
        .iter()
        .map(|t| {
            if w.copies.is_empty() {
                Role::Mix { read_pct: (w.rw.read_share(w.rwmixread) * 100.0).round() as u8 }
            } else if w.copies.iter().any(|c| c.to == t.id) {
                Role::CopyDest
            } else {
                Role::CopySource
            }
        })
        .collect()
}

fn writes(r: Role) -> bool {
    match r {
        Role::Mix { read_pct } => read_pct < 100,
        Role::CopySource => false,
        Role::CopyDest => true,
    }
}

fn is_block(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

/// Opens a target the gate cleared for writing through the gate's own descriptor, and
/// says what `--destroy-data-on` let the run overwrite.
fn adopt_cleared(p: &Path, cleared: safety::Cleared, warnings: &mut Vec<String>) -> Result<Opened, TargetError> {
    if !cleared.destroyed.is_empty() {
        warnings.push(format!(
            "{}: overwrote data, as permitted for this target ({})",
            p.display(),
            cleared.destroyed.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("; ")
        ));
    }
    let meta =
        std::fs::metadata(p).map_err(|e| TargetError::Io { path: p.to_path_buf(), what: "stat".into(), cause: e })?;
    target::adopt(p, cleared.file, &meta, cleared.buffered)
}

/// Opens every target; block devices and existing files that are written go through the
/// safety gate first (file targets this run lays out are its own, and are only locked).
fn open_all(
    o: &MeasureOptions,
    targets: &[TargetSpec],
    roles: &[Role],
    warnings: &mut Vec<String>,
) -> Result<Vec<Opened>, MeasureError> {
    let write_paths: Vec<PathBuf> =
        targets.iter().zip(roles).filter(|(_, r)| writes(**r)).map(|(t, _)| t.path.clone()).collect();
    if !write_paths.is_empty() && !o.allow_write {
        let what = if o.workload.copies.is_empty() { format!("rw={}", o.workload.rw) } else { "copy".to_string() };
        return Err(Refusal {
            device: write_paths[0].clone(),
            kind: RefusalKind::NotAllowed,
            reason: format!("the workload ({what}) writes, and iopath is read-only by default"),
            found: format!(
                "writes would go to {}",
                write_paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
            // The CLI names the permission's option (src/cmd/spell.rs).
            fix: safety::Fix::around(
                "writing destroys the data there; give ",
                safety::Permission::Write,
                " if that is what you want",
            ),
        }
        .into());
    }
    safety::check_destroy_flags(&o.destroy_data_on, &write_paths, o.allow_write)?;
    let sys = safety::System::live();
    let mut out = Vec::new();
    for (t, r) in targets.iter().zip(roles) {
        let w = writes(*r);
        let p = &t.path;
        let opened = if is_block(p) {
            if w {
                adopt_cleared(p, safety::check_block_write(&sys, p, &o.destroy_data_on)?, warnings)?
            } else {
                let op = target::open_target(p, OpenMode { write: false, exclusive: false })?;
                let mounts = safety::parse_mountinfo(&sys.mountinfo);
                if let Some(m) = mounts.iter().find(|m| safety::depends_on(&sys.sysfs, m.dev, op.dev, 0)) {
                    warnings.push(format!(
                        "{}: is mounted on {}; the filesystem's own I/O may share the device during the run. Unmount it, or read a device nobody uses, for clean numbers",
                        p.display(),
                        m.mount_point
                    ));
                }
                op
            }
        } else {
            let mut created = false;
            if !p.exists() {
                if p.parent() == Some(Path::new("/dev")) {
                    return Err(MeasureError::NoSuchDevice { path: p.to_path_buf() });
                }
                for s in target::stale_layouts(p) {
                    warnings.push(format!(
                        "{}: an unfinished layout of this target, left by a run that was killed; it was not used (delete it to free the space)",
                        s.display()
                    ));
                }
                target::create_file_target(p, o.size, o.workload.seed, Some(&o.stop))?;
                created = true;
            } else if target::is_sparse(p) {
                warnings.push(format!(
                    "{}: the file has holes; reads of holes never reach the device. Write it fully first (e.g. with dd oflag=direct), or delete it and let iopath create it",
                    p.display()
                ));
            }
            let mut op = if w {
                adopt_cleared(p, safety::check_file_write(&sys, p, &o.destroy_data_on, created)?, warnings)?
            } else {
                target::open_target(p, OpenMode { write: false, exclusive: false })?
            };
            op.created = created;
            op
        };
        if opened.buffered {
            warnings.push(format!(
                "{}: the filesystem refused O_DIRECT (or reports no direct-I/O support), so the page cache is in the way and numbers may show RAM speed; put the file on ext4/xfs or name a block device",
                p.display()
            ));
        }
        out.push(opened);
    }
    Ok(out)
}

/// The region of each target, as its first byte and its length: checks alignment, and that
/// a block fits. The region starts at `offset` (fio's `offset`: a percentage is aligned up to
/// the block size, as fio aligns it to the minimum block size when `offset_align` is unset)
/// and holds `region` of the target's size, or what is left of it past the offset (fio's
/// HOWTO.rst, `offset`: "effectively caps the file size at real_size - offset";
/// `offset_align`: "Defaults to 0 meaning that a percentage offset is aligned to the
/// minimum block size", aligned upwards).
fn regions(w: &Workload, offset: Offset, opened: &[Opened]) -> Result<Vec<(u64, u64)>, MeasureError> {
    let bs = w.bs.get();

    // Alignment and regions.
    let mut regions = Vec::new();
    for t in opened {
        let a = u64::from(t.align.offset);
        if !t.buffered && !bs.is_multiple_of(a) {
            return Err(MeasureError::Misaligned {
                path: t.path.clone(),
                bs,
                align: a,
                from: t.align.source.to_string(),
            });
        }
        let start = offset.start(t.size, bs);
        if !t.buffered && !start.is_multiple_of(a) {
            return Err(MeasureError::OffsetMisaligned { path: t.path.clone(), offset: start, align: a });
        }
        let left = t.size.saturating_sub(start);
        // fio's `size` in bytes bounds the region on a device or an existing file too.
        let share = ((t.size as f64 * w.region) as u64).min(left);
        let len = (w.size.map_or(share, |s| share.min(s.get())) / bs) * bs;
        if len < bs {
            if start > 0 {
                return Err(MeasureError::OffsetPastEnd { path: t.path.clone(), offset: start, size: t.size, bs });
            }
            return Err(MeasureError::RegionTooSmall { path: t.path.clone(), region: w.region, size: t.size, bs });
        }
        regions.push((start, len));
    }
    Ok(regions)
}

/// One job per target and `numjobs`; a copy source gets one per destination.
fn jobs(
    w: &Workload,
    targets: &[TargetSpec],
    roles: &[Role],
    opened: &[Opened],
    regions: &[(u64, u64)],
) -> (Vec<JobSpec>, Vec<[usize; 2]>) {
    let bs = w.bs.get();
    let mut jobs = Vec::new();
    let mut sides: Vec<[usize; 2]> = Vec::new();
    for (i, (t, role)) in opened.iter().zip(roles).enumerate() {
        let side = Side { target: i, fd: t.fd(), path: t.path.clone() };
        let mem_align = (t.align.mem as usize).max(4096);
        let (kind, (region_start, region_len), to) = match role {
            Role::Mix { read_pct } => (JobKind::Mix { read_pct: *read_pct }, regions[i], i),
            Role::CopyDest => continue,
            Role::CopySource => {
                for c in w.copies.iter().filter(|c| c.from == targets[i].id) {
                    let j = targets.iter().position(|x| x.id == c.to).expect("copy destination selected");
                    for k in 0..w.numjobs {
                        jobs.push(JobSpec {
                            io: side.clone(),
                            kind: JobKind::Copy {
                                to: Side { target: j, fd: opened[j].fd(), path: opened[j].path.clone() },
                            },
                            bs,
                            iodepth: w.iodepth,
                            region_start: regions[i].0.min(regions[j].0),
                            region_len: regions[i].1.min(regions[j].1),
                            random: false,
                            seed: job_seed(w.seed, i, k),
                            mem_align: mem_align.max(opened[j].align.mem as usize),
                        });
                        sides.push([i, j]);
                    }
                }
                continue;
            }
        };
        for k in 0..w.numjobs {
            jobs.push(JobSpec {
                io: side.clone(),
                kind: kind.clone(),
                bs,
                iodepth: w.iodepth,
                region_start,
                region_len,
                random: w.rw.is_random(),
                seed: job_seed(w.seed, i, k),
                mem_align,
            });
            sides.push([i, to]);
        }
    }
    (jobs, sides)
}

fn job_seed(seed: u64, target: usize, job: u32) -> u64 {
    seed.wrapping_mul(0x100_0000_01b3)
        ^ (target as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ u64::from(job).rotate_left(32)
}
