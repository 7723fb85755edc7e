//! The `[[pool]]` tables: members, layout and options, each problem at its value; and the
//! pool fields of the `[workload.NAME]` tables (the pool exists, failed drives are its
//! members and the layout survives them).

use super::Draft;
use crate::catalog::{did_you_mean, suggest};
use crate::cpu::Kernel;
use crate::pool::{
    Family, Layout, MD_DEFAULT_CHUNK, MD_DEFAULT_STRIPE_CACHE, MD_STRIPE_CACHE_RANGE, Pool, Task, WriteMode,
    ZFS_DEFAULT_ASHIFT, ZFS_DEFAULT_RECORDSIZE,
};
use crate::topology::{NodeIx, RawPool, RawTopology, Sink, known};
use crate::units::parse_size;
use crate::workload::WorkloadSpec;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use toml::Spanned;

/// Builds the pools, reporting every problem; a pool with a problem is left out.
pub(crate) fn build(sink: &mut Sink, raw: &RawTopology, d: &Draft) -> Vec<Pool> {
    let mut pools = Vec::new();
    let mut owner: HashMap<NodeIx, String> = HashMap::new();
    let mut ids: HashMap<String, Range<usize>> = HashMap::new();
    for (i, rp) in raw.pool.iter().enumerate() {
        let key = format!("pool[{i}]");
        let before = sink.out.len();
        if let Some(first) = ids.get(rp.id.get_ref()) {
            let (line, _) = crate::topology::line_col(sink.text, first.start);
            sink.at(
                known(&rp.id),
                format!("{key}.id"),
                format!("pool id {:?} is already used (line {line})", rp.id.get_ref()),
                Some("give each [[pool]] its own id".into()),
            );
        }
        ids.entry(rp.id.get_ref().clone()).or_insert(rp.id.span());
        if let Some(p) = pool(sink, raw, d, rp, &key, &mut owner)
            && sink.out.len() == before
        {
            pools.push(p);
        }
    }
    pools
}

/// The members of a `members` or `vdevs` list, group ids expanded.
fn members(
    sink: &mut Sink,
    raw: &RawTopology,
    d: &Draft,
    list: &[Spanned<String>],
    key: &str,
    owner: &mut HashMap<NodeIx, String>,
    pool_id: &str,
) -> Vec<NodeIx> {
    let drive_ids: Vec<&str> = d.nodes.iter().filter(|n| n.is_drive()).map(|n| n.id.as_str()).collect();
    let mut out = Vec::new();
    for (j, m) in list.iter().enumerate() {
        let k = format!("{key}[{j}]");
        let name = m.get_ref();
        let found: Vec<NodeIx> = match d.nodes.iter().position(|n| &n.id == name) {
            Some(ix) if d.nodes[ix].is_drive() => vec![ix],
            Some(ix) => {
                sink.at(
                    known(m),
                    k,
                    format!("{name:?} is a {}, not a drive", d.nodes[ix].kind.as_str()),
                    Some("a pool's members are [[drive]] ids".into()),
                );
                continue;
            }
            None => {
                // A [[drive]] group with count: its id stands for all its drives.
                let group = raw.drive.iter().position(|r| r.id.get_ref() == name && r.count.is_some());
                match group {
                    Some(g) => {
                        let gk = format!("drive[{g}]");
                        (0..d.nodes.len()).filter(|&ix| d.key_of[ix] == gk && d.nodes[ix].is_drive()).collect()
                    }
                    None => {
                        if d.drives_complete {
                            sink.at(
                                known(m),
                                k,
                                format!(
                                    "no drive has id {name:?}{}",
                                    did_you_mean(&suggest(name, drive_ids.iter().copied()))
                                ),
                                Some("name a [[drive]] id; a [[drive]] with id = \"d\" and count = N has the ids d0 .. dN-1 and \"d\" names them all".into()),
                            );
                        }
                        continue;
                    }
                }
            }
        };
        for ix in found {
            if let Some(other) = owner.get(&ix) {
                let what = if other == pool_id {
                    "is named twice in this pool".to_string()
                } else {
                    format!("is already a member of pool {other:?}")
                };
                sink.at(
                    known(m),
                    k.clone(),
                    format!("drive {:?} {what}", d.nodes[ix].id),
                    Some("a drive belongs to one pool, once".into()),
                );
                continue;
            }
            owner.insert(ix, pool_id.to_string());
            out.push(ix);
        }
    }
    out
}

/// A size option: a power of two within `lo..=hi`.
fn size_opt(sink: &mut Sink, v: &Spanned<String>, key: String, lo: u64, hi: u64, what: &str) -> Option<u64> {
    match parse_size(v.get_ref()) {
        Ok(b) if b.get().is_power_of_two() && (lo..=hi).contains(&b.get()) => Some(b.get()),
        Ok(b) => {
            let x = b.get().max(1);
            let down = 1u64 << (63 - x.leading_zeros());
            let near = [down, down.saturating_mul(2)]
                .into_iter()
                .filter(|c| (lo..=hi).contains(c))
                .map(|c| crate::units::Bytes::new(c).to_string())
                .collect::<Vec<_>>();
            sink.at(
                known(v),
                key,
                format!("{:?} is not a power of two from {} to {}", v.get_ref(), fmt(lo), fmt(hi)),
                Some(if near.is_empty() {
                    format!("{what}: write e.g. \"{}\"", fmt(lo.max(4096).min(hi)))
                } else {
                    format!("{what}: the nearest are {}", near.join(" and "))
                }),
            );
            None
        }
        Err(e) => {
            sink.at(known(v), key, e.to_string(), Some(format!("{what}: write a size such as \"128k\"")));
            None
        }
    }
}

fn fmt(b: u64) -> String {
    crate::units::Bytes::new(b).to_string()
}

/// Refuses an option the layout's family does not have.
fn not_for(sink: &mut Sink, span: Option<Range<usize>>, key: String, field: &str, layout: Layout, applies: &str) {
    sink.at(
        span,
        key,
        format!("{field} does not apply to layout {:?}", layout.name()),
        Some(format!("remove {field}: it applies to {applies}")),
    );
}

/// The kernel an option names, from the words it accepts.
fn kernel_opt(
    sink: &mut Sink,
    v: &Option<Spanned<String>>,
    key: String,
    accepts: &[(&str, Option<Kernel>)],
    default: Option<Kernel>,
) -> Option<Kernel> {
    let Some(v) = v else { return default };
    let w = v.get_ref().trim().to_ascii_lowercase();
    match accepts.iter().find(|(n, _)| *n == w) {
        Some((_, k)) => *k,
        None => {
            let names: Vec<&str> = accepts.iter().map(|(n, _)| *n).collect();
            sink.at(
                known(v),
                key,
                format!("{:?} is not one of {}", v.get_ref(), names.join(", ")),
                Some(format!("write one of {}", names.join(", "))),
            );
            default
        }
    }
}

/// One `[[pool]]` table as a `Pool`, each problem reported at its value; `None` where one
/// stops it.
fn pool(
    sink: &mut Sink,
    raw: &RawTopology,
    d: &Draft,
    rp: &RawPool,
    key: &str,
    owner: &mut HashMap<NodeIx, String>,
) -> Option<Pool> {
    let id = rp.id.get_ref().clone();
    let layout = layout(sink, rp, key)?;
    let before_members = sink.out.len();
    let vdevs = vdev_lists(sink, raw, d, rp, key, layout, owner)?;
    let list_span = rp.members.as_ref().and_then(known).or_else(|| rp.vdevs.as_ref().and_then(known));
    let parity_n = parity(sink, rp, key, layout);
    member_counts(sink, d, rp, key, (layout, parity_n), &vdevs, before_members);
    if vdevs.iter().any(|v| v.is_empty()) || vdevs.is_empty() {
        return None;
    }
    let chunk = chunk(sink, rp, key, layout);
    let stripe_cache = stripe_cache(sink, rp, key, layout);
    let (recordsize, ashift) = zfs_sizes(sink, rp, key, layout);
    let write_mode = write_mode(sink, rp, key, layout);
    let (checksum, compression, encryption) = kernels(sink, rp, key, layout);
    let sizes: Vec<Vec<u64>> = vdevs
        .iter()
        .map(|v| v.iter().map(|&ix| d.nodes[ix].spec.drive().map_or(0, |f| (f.capacity_gb * 1e9) as u64)).collect())
        .collect();
    if layout == Layout::Unraid {
        parity_sizes(sink, d, key, &list_span, &vdevs[0], &sizes[0], parity_n);
    }
    Some(Pool {
        id,
        layout,
        vdevs,
        sizes,
        chunk,
        stripe_cache,
        recordsize,
        ashift,
        parity: parity_n,
        write_mode,
        checksum,
        compression,
        encryption,
    })
}

/// unRAID's parity disks (the last `parity_n` members) are at least as large as the largest
/// data disk.
fn parity_sizes(
    sink: &mut Sink,
    d: &Draft,
    key: &str,
    list_span: &Option<Range<usize>>,
    members: &[NodeIx],
    s: &[u64],
    parity_n: usize,
) {
    let nd = s.len().saturating_sub(parity_n);
    let largest = s[..nd].iter().copied().max().unwrap_or(0);
    for j in nd..s.len() {
        if s[j] < largest {
            sink.at(
                list_span.clone(),
                format!("{key}.members"),
                format!("parity disk {:?} ({} GB) is smaller than the largest data disk ({} GB)", d.nodes[members[j]].id, s[j] / 1_000_000_000, largest / 1_000_000_000),
                Some("the parity disks are the last members: use parity disks at least as large as the largest data disk (they are the last members)".into()),
            );
        }
    }
}

/// The pool's layout, refused with the layouts there are.
fn layout(sink: &mut Sink, rp: &RawPool, key: &str) -> Option<Layout> {
    let Some(layout) = Layout::parse(rp.layout.get_ref()) else {
        let names: Vec<&str> = Layout::ALL.iter().map(|l| l.name()).collect();
        sink.at(
            known(&rp.layout),
            format!("{key}.layout"),
            format!(
                "{:?} is not a layout{}",
                rp.layout.get_ref(),
                did_you_mean(&suggest(rp.layout.get_ref(), names.iter().copied()))
            ),
            Some(format!("write one of {}", names.join(", "))),
        );
        return None;
    };
    Some(layout)
}

/// The members as vdevs: one `members` list, or ZFS's `vdevs` lists or `vdev_width`.
fn vdev_lists(
    sink: &mut Sink,
    raw: &RawTopology,
    d: &Draft,
    rp: &RawPool,
    key: &str,
    layout: Layout,
    owner: &mut HashMap<NodeIx, String>,
) -> Option<Vec<Vec<NodeIx>>> {
    let id = rp.id.get_ref().clone();
    let fam = layout.family();
    // Members: one list, or ZFS vdevs.
    let vdevs: Vec<Vec<NodeIx>> = match (&rp.members, &rp.vdevs) {
        (Some(_), Some(v)) => {
            sink.at(
                known(v),
                format!("{key}.vdevs"),
                "give either members or vdevs, not both",
                Some("members makes one vdev; vdevs lists several".into()),
            );
            return None;
        }
        (None, None) => {
            sink.at(
                known(&rp.id),
                format!("{key}.members"),
                format!("pool {id:?} has no members"),
                Some("add members = [\"d0\", \"d1\"] (drive ids)".into()),
            );
            return None;
        }
        (Some(m), None) => vec![members(sink, raw, d, m.get_ref(), &format!("{key}.members"), owner, &id)],
        (None, Some(v)) => {
            if fam != Family::Zfs {
                not_for(
                    sink,
                    known(v),
                    format!("{key}.vdevs"),
                    "vdevs",
                    layout,
                    "ZFS layouts (raidz1/2/3, zfs-mirror); use members",
                );
                return None;
            }
            v.get_ref()
                .iter()
                .enumerate()
                .map(|(j, vd)| members(sink, raw, d, vd.get_ref(), &format!("{key}.vdevs[{j}]"), owner, &id))
                .collect()
        }
    };
    Some(match &rp.vdev_width {
        Some(w) => match vdev_width(sink, w, &format!("{key}.vdev_width"), layout, rp.vdevs.is_some(), &vdevs) {
            Some(n) => vdevs.concat().chunks(n).map(|c| c.to_vec()).collect(),
            None => return None,
        },
        None => vdevs,
    })
}

/// unRAID's parity disks (1 or 2); the other layouts' parity is the layout's.
fn parity(sink: &mut Sink, rp: &RawPool, key: &str, layout: Layout) -> usize {
    match &rp.parity {
        Some(p) if layout != Layout::Unraid => {
            not_for(
                sink,
                known(p),
                format!("{key}.parity"),
                "parity",
                layout,
                "unraid (the layout sets the others' parity)",
            );
            0
        }
        Some(p) if !(1..=2).contains(p.get_ref()) => {
            sink.at(
                known(p),
                format!("{key}.parity"),
                format!("{} parity disks: unRAID has 1 or 2", p.get_ref()),
                Some("write parity = 1 or parity = 2".into()),
            );
            1
        }
        Some(p) => *p.get_ref() as usize,
        None if layout == Layout::Unraid => 1,
        None => layout.parity(),
    }
}

/// Each vdev has the members its layout (and unRAID's parity disks) need; not reported once a
/// member was refused (`before_members`: the diagnostics before the member lists).
fn member_counts(
    sink: &mut Sink,
    d: &Draft,
    rp: &RawPool,
    key: &str,
    (layout, parity_n): (Layout, usize),
    vdevs: &[Vec<NodeIx>],
    before_members: usize,
) {
    let list_span = rp.members.as_ref().and_then(known).or_else(|| rp.vdevs.as_ref().and_then(known));
    let (min, why) = layout.min_members();
    for (j, v) in vdevs.iter().enumerate() {
        let need = if layout == Layout::Unraid { parity_n + 1 } else { min };
        // Not after a member was refused: the count would only echo that problem.
        if v.len() < need && d.drives_complete && sink.out.len() == before_members {
            let which = if vdevs.len() > 1 { format!("vdev {j} has") } else { "it has".to_string() };
            sink.at(
                list_span.clone(),
                format!("{key}.members"),
                format!("layout {:?} needs at least {need} members, {which} {}", layout.name(), v.len()),
                Some(if layout == Layout::Unraid {
                    format!("add a data disk: {parity_n} parity disk(s) and at least one data disk")
                } else {
                    why.to_string()
                }),
            );
        }
    }
}

/// md's chunk (btrfs's fixed stripe element where the layout is btrfs).
fn chunk(sink: &mut Sink, rp: &RawPool, key: &str, layout: Layout) -> u64 {
    let fam = layout.family();
    match &rp.chunk {
        Some(c) if matches!(layout, Layout::Stripe | Layout::Raid10 | Layout::Raid5 | Layout::Raid6) => size_opt(
            sink,
            c,
            format!("{key}.chunk"),
            4096,
            1 << 30,
            "md's chunk is a power of two of at least 4k (a page)",
        )
        .unwrap_or(MD_DEFAULT_CHUNK),
        Some(c) => {
            let applies = if fam == Family::Btrfs {
                "md raid0/raid10/raid5/raid6 (btrfs's stripe element is fixed at 64 KiB)"
            } else {
                "md raid0/raid10/raid5/raid6"
            };
            not_for(sink, known(c), format!("{key}.chunk"), "chunk", layout, applies);
            MD_DEFAULT_CHUNK
        }
        None if fam == Family::Btrfs => crate::pool::BTRFS_STRIPE_LEN,
        None => MD_DEFAULT_CHUNK,
    }
}

/// md raid5/raid6's stripe cache in stripe heads (md(4) `stripe_cache_size`): 17..32768
/// as the kernel accepts it, refused on the layouts that have no stripe cache.
fn stripe_cache(sink: &mut Sink, rp: &RawPool, key: &str, layout: Layout) -> u64 {
    let Some(v) = &rp.stripe_cache_size else { return MD_DEFAULT_STRIPE_CACHE };
    if !matches!(layout, Layout::Raid5 | Layout::Raid6) {
        let field = "stripe_cache_size";
        not_for(sink, known(v), format!("{key}.{field}"), field, layout, "md raid5/raid6 (md's stripe cache)");
        return MD_DEFAULT_STRIPE_CACHE;
    }
    match u64::try_from(*v.get_ref()) {
        Ok(n) if MD_STRIPE_CACHE_RANGE.contains(&n) => n,
        _ => {
            sink.at(
                known(v),
                format!("{key}.stripe_cache_size"),
                format!(
                    "stripe_cache_size {} is outside {}..{}",
                    v.get_ref(),
                    MD_STRIPE_CACHE_RANGE.start(),
                    MD_STRIPE_CACHE_RANGE.end()
                ),
                Some(format!(
                    "md's stripe cache holds {}..{} stripe heads (drivers/md/raid5.c refuses other sizes); the default is {MD_DEFAULT_STRIPE_CACHE}",
                    MD_STRIPE_CACHE_RANGE.start(),
                    MD_STRIPE_CACHE_RANGE.end()
                )),
            );
            MD_DEFAULT_STRIPE_CACHE
        }
    }
}

/// ZFS's recordsize and ashift, each refused on other layouts.
fn zfs_sizes(sink: &mut Sink, rp: &RawPool, key: &str, layout: Layout) -> (u64, u32) {
    let fam = layout.family();
    let zfs_only = |sink: &mut Sink, span: Option<Range<usize>>, field: &str| {
        if fam != Family::Zfs {
            not_for(sink, span, format!("{key}.{field}"), field, layout, "ZFS layouts (raidz1/2/3, zfs-mirror)");
        }
    };
    let mut recordsize = ZFS_DEFAULT_RECORDSIZE;
    if let Some(r) = &rp.recordsize {
        zfs_only(sink, known(r), "recordsize");
        if fam == Family::Zfs {
            recordsize = size_opt(
                sink,
                r,
                format!("{key}.recordsize"),
                512,
                16 << 20,
                "ZFS's recordsize (zfsprops(7): a power of two from 512 to 16m)",
            )
            .unwrap_or(recordsize);
        }
    }
    let mut ashift = ZFS_DEFAULT_ASHIFT;
    if let Some(a) = &rp.ashift {
        zfs_only(sink, known(a), "ashift");
        if fam == Family::Zfs {
            if (9..=16).contains(a.get_ref()) {
                ashift = *a.get_ref() as u32;
            } else {
                sink.at(known(a), format!("{key}.ashift"), format!("ashift {} is outside 9..16", a.get_ref()), Some("ashift is log2 of the sector: 9 (512 B), 12 (4 KiB, the usual), 13 (8 KiB); zpoolprops(7) allows 9..16".into()));
            }
        }
    }
    if fam == Family::Zfs && recordsize < 1 << ashift {
        sink.at(
            rp.recordsize.as_ref().and_then(known),
            format!("{key}.recordsize"),
            format!("recordsize {} is smaller than a sector (ashift {ashift}: {})", fmt(recordsize), fmt(1 << ashift)),
            Some("raise recordsize or lower ashift".into()),
        );
    }
    (recordsize, ashift)
}

/// unRAID's write mode (rmw or turbo).
fn write_mode(sink: &mut Sink, rp: &RawPool, key: &str, layout: Layout) -> WriteMode {
    let mut write_mode = WriteMode::Rmw;
    if let Some(w) = &rp.write_mode {
        if layout != Layout::Unraid {
            not_for(sink, known(w), format!("{key}.write_mode"), "write_mode", layout, "unraid");
        } else {
            match w.get_ref().trim().to_ascii_lowercase().as_str() {
                "rmw" => write_mode = WriteMode::Rmw,
                "turbo" | "reconstruct" => write_mode = WriteMode::Turbo,
                other => sink.at(
                    known(w),
                    format!("{key}.write_mode"),
                    format!("{other:?} is not one of rmw, turbo"),
                    Some("write_mode = \"rmw\" (read/modify/write) or \"turbo\" (reconstruct write)".into()),
                ),
            }
        }
    }
    write_mode
}

/// The checksum, compression and encryption kernels the family supports.
fn kernels(
    sink: &mut Sink,
    rp: &RawPool,
    key: &str,
    layout: Layout,
) -> (Option<Kernel>, Option<Kernel>, Option<Kernel>) {
    let fam = layout.family();
    let checksum = match fam {
        Family::Zfs => kernel_opt(
            sink,
            &rp.checksum,
            format!("{key}.checksum"),
            &[
                ("fletcher4", Some(Kernel::Fletcher4)),
                ("sha256", Some(Kernel::Sha256)),
                ("blake3", Some(Kernel::Blake3)),
                ("off", None),
            ],
            Some(Kernel::Fletcher4),
        ),
        Family::Btrfs => kernel_opt(
            sink,
            &rp.checksum,
            format!("{key}.checksum"),
            &[
                ("crc32c", Some(Kernel::Crc32c)),
                ("sha256", Some(Kernel::Sha256)),
                ("blake2", Some(Kernel::Blake3)),
                ("blake3", Some(Kernel::Blake3)),
            ],
            Some(Kernel::Crc32c),
        ),
        _ => {
            if let Some(c) = &rp.checksum {
                not_for(
                    sink,
                    known(c),
                    format!("{key}.checksum"),
                    "checksum",
                    layout,
                    "ZFS and btrfs (md and unRAID keep no data checksums)",
                );
            }
            None
        }
    };
    let compression = match fam {
        Family::Zfs => kernel_opt(
            sink,
            &rp.compression,
            format!("{key}.compression"),
            &[("off", None), ("lz4", Some(Kernel::Lz4)), ("zstd", Some(Kernel::Zstd))],
            None,
        ),
        // btrfs compresses with zlib, lzo or zstd (btrfs(5)): no lz4.
        Family::Btrfs => kernel_opt(
            sink,
            &rp.compression,
            format!("{key}.compression"),
            &[("off", None), ("zstd", Some(Kernel::Zstd))],
            None,
        ),
        _ => {
            if let Some(c) = &rp.compression {
                not_for(sink, known(c), format!("{key}.compression"), "compression", layout, "ZFS and btrfs");
            }
            None
        }
    };
    let encryption = match fam {
        Family::Zfs => kernel_opt(
            sink,
            &rp.encryption,
            format!("{key}.encryption"),
            &[("off", None), ("aes-gcm", Some(Kernel::AesGcm))],
            None,
        ),
        _ => {
            if let Some(c) = &rp.encryption {
                not_for(sink, known(c), format!("{key}.encryption"), "encryption", layout, "ZFS native encryption");
            }
            None
        }
    };
    (checksum, compression, encryption)
}

/// A ZFS pool's `vdev_width`: its members split into vdevs of that many drives, in order; a
/// width that does not divide them, or one beside `vdevs` lists, is refused.
fn vdev_width(
    sink: &mut Sink,
    w: &Spanned<i64>,
    key: &str,
    layout: Layout,
    has_lists: bool,
    vdevs: &[Vec<NodeIx>],
) -> Option<usize> {
    if layout.family() != Family::Zfs {
        not_for(sink, known(w), key.to_string(), "vdev_width", layout, "ZFS layouts (raidz1/2/3, zfs-mirror)");
        return None;
    }
    if has_lists {
        sink.at(
            known(w),
            key.to_string(),
            "give either vdevs lists or vdev_width, not both",
            Some("vdev_width splits members into vdevs of that many drives; vdevs lists them".into()),
        );
        return None;
    }
    let n: usize = vdevs.iter().map(|v| v.len()).sum();
    let width = *w.get_ref();
    if width < 1 || !n.is_multiple_of(width as usize) {
        let fits: Vec<String> = (1..=n).filter(|d| n.is_multiple_of(*d)).map(|d| d.to_string()).collect();
        sink.at(
            known(w),
            key.to_string(),
            format!("{n} members do not split into vdevs of {width}"),
            Some(format!("a width that divides {n}: {}", fits.join(", "))),
        );
        return None;
    }
    Some(width as usize)
}

/// The pool fields of every `[workload.NAME]` table: the pool exists; failed drives are
/// members; the layout survives them; scrub and rebuild apply.
pub(crate) fn check_workloads(
    sink: &mut Sink,
    topo: &RawTopology,
    specs: &BTreeMap<String, WorkloadSpec>,
    pools: &[Pool],
    d: &Draft,
) {
    for (name, w) in &topo.workload {
        let Some(spec) = specs.get(name) else { continue };
        let Some(pid) = &spec.pool else { continue };
        // A pool that is written but has problems of its own: those are reported.
        if topo.pool.iter().any(|p| p.id.get_ref() == pid) && !pools.iter().any(|p| &p.id == pid) {
            continue;
        }
        let Some(pool) = pools.iter().find(|p| &p.id == pid) else {
            let ids: Vec<&str> = pools.iter().map(|p| p.id.as_str()).collect();
            sink.at(
                w.span("pool"),
                format!("workload.{name}.pool"),
                format!("no pool has id {pid:?}{}", did_you_mean(&suggest(pid, ids.iter().copied()))),
                Some(if ids.is_empty() {
                    "add a [[pool]] with id, layout and members".into()
                } else {
                    format!("the pools are {}", ids.join(", "))
                }),
            );
            continue;
        };
        let failed = spec.failed.clone().unwrap_or_default();
        let mut ixs = Vec::new();
        for (j, f) in failed.iter().enumerate() {
            let span = w.failed.as_ref().and_then(|l| l.get_ref().get(j)).and_then(known);
            match d.nodes.iter().position(|n| &n.id == f).filter(|&ix| pool.contains(ix)) {
                Some(ix) => ixs.push(ix),
                None => {
                    let ids: Vec<&str> = pool.members().map(|m| d.nodes[m].id.as_str()).collect();
                    sink.at(
                        span,
                        format!("workload.{name}.failed[{j}]"),
                        format!(
                            "{f:?} is not a member of pool {pid:?}{}",
                            did_you_mean(&suggest(f, ids.iter().copied()))
                        ),
                        Some(format!("name members of {pid:?}: {}", ids.join(", "))),
                    );
                }
            }
        }
        if ixs.len() == failed.len()
            && let Err(e) = pool.check_failed(&ixs)
        {
            sink.at(
                w.span("failed"),
                format!("workload.{name}.failed"),
                e.to_string(),
                Some("fail fewer members: the pool would have lost data".into()),
            );
        }
        let task = spec.task.as_deref().and_then(|t| t.parse::<Task>().ok()).unwrap_or_default();
        if let Err(e) = pool.check_task(task) {
            sink.at(
                w.span("task"),
                format!("workload.{name}.task"),
                e,
                Some("md RAID 0 has nothing to check; use a redundant layout".into()),
            );
        }
    }
}
