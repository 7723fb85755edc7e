//! Pool workloads: jobs keep `iodepth` logical I/Os outstanding on a pool, and each logical
//! I/O fans out into member I/Os that walk the members' own paths.
//!
//! A logical I/O is the pool's [`Fanout`]: phases in order (a read-modify-write reads old
//! data and parity, then writes new data and parity), every member I/O of a phase issued at
//! once through the per-drive path (host latency, port multiplier, fabric, drive, fluid
//! transfer); the phase ends when all its member I/Os have completed, the logical I/O after
//! its last phase. A logical I/O with no member I/O (ZFS collects a sequential stream's
//! writes into whole records: only the I/O that completes a record writes it) completes
//! at once. Member I/Os count in the drives' statistics (member traffic), logical I/Os in
//! the pool's. A mirror read that may be served by several sides goes to the side with the
//! fewest member I/Os outstanding at issue (md's `read_balance` and ZFS's
//! `vdev_mirror_child_select` both prefer the least loaded side), the first listed on a tie.
//!
//! Member classes (one per drive and direction, as for per-drive jobs) take their costs at
//! the mean member I/O size of that drive and direction under the workload, estimated by
//! mapping a deterministic sample of the workload's logical I/Os at setup: n I/Os of mean
//! size m cost n x per-I/O + n x m x per-byte, exactly what the actual sizes cost in
//! aggregate. The CPU work of a logical I/O (checksums, parity) is added to the member
//! classes of the direction it is attributed to ([`attributed_dir`]) per member byte, so
//! the max-min allocation sees the CPU as a resource the members share.
//!
//! Maintenance (`task` scrub or rebuild) walks the plan's steps (a stripe row, a record) in
//! LBA order with `iodepth` steps outstanding, one job; a step is a logical I/O. An HDD's
//! media rate falls with the LBA, so the run measures a window at the middle of each of
//! [`SEGMENTS`] equal parts of the plan and the task's time is the sum of each part's
//! bytes over its rate (the midpoint rule over the members' range).

use super::*;
use iopath_model::cpu::Kernel;
use iopath_model::pool::{Fanout, LogicalIo, Maintenance, Pool, Task};
use iopath_model::report::{CpuUse, Latency, LatencyMean, MaintenanceResult, MaintenanceSegment};

/// Not part of a logical I/O: an I/O of a per-drive job.
pub(super) const NO_PARENT: u32 = u32::MAX;

/// Logical I/Os mapped at setup to estimate each member class's mean I/O size: enough that
/// every member of a 24-wide stripe sees hundreds of them, cheap next to any run.
const SAMPLE_IOS: u64 = 4096;

/// Parts of a maintenance plan measured: the midpoint rule over the members' range with 4
/// parts is within 0.2% of the exact time over a zoned disk whose inner rate is half its
/// outer (1/r is smooth in the stroke).
pub const SEGMENTS: u64 = 4;

/// A pool run's state: the pool, its logical I/Os in flight and their statistics.
pub(super) struct PoolSt {
    /// The topology the pool maps over (the run keeps its own copy: mapping happens at issue).
    topo: Topology,
    pool: Pool,
    failed: Vec<NodeIx>,
    /// Drive slot of each node (`u32::MAX`: not a member the run uses).
    slot_of: Vec<u32>,
    logical: Vec<Logical>,
    free: Vec<u32>,
    /// A phase's member I/Os as issued (drive slot, write, offset, length): one buffer that
    /// every phase reuses, so issuing a phase allocates nothing.
    issued: Vec<(u32, bool, u64, u64)>,
    st: PoolStats,
    /// Member I/Os issued and not completed, per drive slot.
    busy: Vec<u32>,
    /// Where each slot's last member I/O ended (`u64::MAX` before the first), and whether it
    /// is an HDD: what a mirror's read balancing looks at.
    head: Vec<u64>,
    hdd: Vec<bool>,
    /// Where each job's last logical I/O ended: the next one continues its stream there.
    last_end: Vec<u64>,
    /// A scrub or rebuild: the plan and the steps this run walks.
    maint: Option<MaintWalk>,
    /// Per member direction: each kernel's cost per member byte and bytes per member byte
    /// (what the report's CPU use is computed from).
    cpu: [Vec<(Kernel, Cost, f64)>; 2],
    /// Logical bytes per member byte, the share of logical bytes that are reads and the mean
    /// logical I/O [bytes] of the setup's sample: the rate's scale when no logical I/O
    /// completed inside the window.
    sample_ratio: f64,
    sample_read_share: f64,
    mean_len: f64,
    /// The protocol round trip each logical request of a client waits once
    /// (`net::request_latency_us`), before its first phase.
    request: SimDuration,
    /// A sequential job's depth as md's stripe cache sees it (`pool::stream_depth`).
    stream_depth: u32,
}

/// A maintenance run's walk: steps `from..to` of the plan in order, wrapping within them.
struct MaintWalk {
    plan: Maintenance,
    from: u64,
    to: u64,
    next: u64,
    /// Logical bytes each step covers (the plan's logical bytes over its steps).
    step_bytes: f64,
}

/// One logical I/O in flight.
struct Logical {
    job: u32,
    write: bool,
    len: f64,
    start: SimTime,
    fanout: Fanout,
    phase: usize,
    pending: u32,
    member_read: u64,
    member_write: u64,
}

/// Logical I/Os completed in the measured window.
struct PoolStats {
    read_bytes: f64,
    write_bytes: f64,
    ios: u64,
    member_read: f64,
    member_write: f64,
    hist: LatCounts,
    lat_sum_ns: f64,
    last: SimTime,
}

/// What a sample of a workload's logical I/Os does to each member, by member direction.
#[derive(Debug, Default, Clone)]
struct Sample {
    /// Per node: member bytes and I/Os, reads then writes.
    bytes: Vec<[f64; 2]>,
    ios: Vec<[f64; 2]>,
    /// Per member direction: the logical bytes attributed to it and the CPU work
    /// (kernel, bytes processed) of the logical I/Os attributed to it.
    logical: [f64; 2],
    cpu: [Vec<(Kernel, f64)>; 2],
    /// Logical I/Os sampled and the bytes of those that read.
    n: f64,
    read_bytes: f64,
    /// Where each node's last sampled member I/O ended.
    head: Vec<u64>,
}

impl Sample {
    fn new(nodes: usize) -> Sample {
        Sample {
            bytes: vec![[0.0; 2]; nodes],
            ios: vec![[0.0; 2]; nodes],
            head: vec![u64::MAX; nodes],
            ..Default::default()
        }
    }

    /// The mean member I/O size of a drive in a direction [bytes], `None` when the sample
    /// gave it none.
    fn mean_len(&self, node: NodeIx, dir: usize) -> Option<u64> {
        let n = self.ios.get(node)?[dir];
        (n > 0.0).then(|| (self.bytes[node][dir] / n).round().max(1.0) as u64)
    }

    /// Adds one logical I/O's fanout; a read with alternatives counts a share on each side
    /// (the run spreads them by load, evenly on equal sides).
    fn add(&mut self, pool: &Pool, f: &Fanout, logical_len: f64, read: bool) {
        // A logical I/O with no member I/O (a write md's stripe cache or ZFS's transaction
        // group holds for a later one) counts in its own direction: the members' I/O it
        // waits for is that direction's.
        let dir = if f.phases.iter().all(|p| p.is_empty()) { usize::from(!read) } else { attributed_dir(f) };
        self.logical[dir] += logical_len;
        self.n += 1.0;
        if read {
            self.read_bytes += logical_len;
        }
        for &(k, b) in &f.cpu {
            match self.cpu[dir].iter_mut().find(|(x, _)| *x == k) {
                Some((_, sum)) => *sum += b as f64,
                None => self.cpu[dir].push((k, b as f64)),
            }
        }
        for m in f.phases.iter().flatten() {
            let d = usize::from(m.write);
            let share = 1.0 / (1 + m.alternatives.len()) as f64;
            // As the run will issue it: aggregated with the drive's previous I/O.
            let (offset, len) = aggregated(pool, self.head[m.drive], m);
            self.head[m.drive] = offset + len;
            for &node in std::iter::once(&m.drive).chain(&m.alternatives) {
                self.bytes[node][d] += len as f64 * share;
                self.ios[node][d] += share;
            }
        }
    }
}

/// A member I/O as the drive receives it when its last I/O ended at `head`. ZFS's vdev queue
/// aggregates I/Os across small gaps, moving the gap's bytes too (zfs(4):
/// `zfs_vdev_write_gap_limit` 4 KiB, `zfs_vdev_read_gap_limit` 32 KiB): a RAIDZ record's
/// skip sectors are allocated but never written, so without this the next record's columns
/// would not continue a drive's stream. An I/O that starts at most that far past `head` is
/// extended back to it.
fn aggregated(pool: &Pool, head: u64, m: &iopath_model::pool::MemberIo) -> (u64, u64) {
    let limit = if m.write { 4096 } else { 32 * 1024 };
    let zfs = pool.layout.family() == iopath_model::pool::Family::Zfs;
    if zfs && head < m.offset && m.offset - head <= limit {
        (head, m.len + (m.offset - head))
    } else {
        (m.offset, m.len)
    }
}

/// The member direction a logical I/O's own costs (CPU work, network bytes) are carried by:
/// writes when it writes any member (a logical write, a rebuild's reconstruction), else
/// reads (a read, a degraded read, a scrub). Every byte of CPU work lands on some member
/// class, so the total is exact in aggregate.
fn attributed_dir(f: &Fanout) -> usize {
    usize::from(f.phases.iter().flatten().any(|m| m.write))
}

/// `costs` with each resource once: a pool's extra costs may fall on a resource the member's
/// path already crosses (a NIC behind the same chipset uplink), and a class charges each
/// resource the sum.
pub(super) fn merged(costs: Vec<Cost>) -> Vec<Cost> {
    let mut out: Vec<Cost> = Vec::with_capacity(costs.len());
    for c in costs {
        match out.iter_mut().find(|x| x.resource == c.resource) {
            Some(x) => x.s_per_byte += c.s_per_byte,
            None => out.push(c),
        }
    }
    out
}

/// Runs a pool workload and reports, with it, each stage of the chain from its client (if
/// any) to the members (`iopath_model::pool::chain`) at its busiest resource's utilization:
/// what a report page shows to say which stage binds. `Ok(None)` for a workload without a
/// pool.
pub fn simulate_chain(
    t: &Topology,
    w: &Workload,
    opts: &super::SimOptions,
) -> Result<Option<(Report, Vec<iopath_model::pool::chain::StageUse>)>, SimError> {
    let Some((pool, _)) = resolve(t, w)? else { return Ok(None) };
    let (r, utils) = super::simulate_with_utils(t, w, opts)?;
    let g = ResourceGraph::new(t);
    let client = w.client.as_deref().and_then(|c| t.client(c));
    let stages = iopath_model::pool::chain::stages(t, &g, pool, client);
    Ok(Some((r, iopath_model::pool::chain::uses(&g, &stages, &utils))))
}

/// The pool a workload names and its failed members, resolved against the topology.
pub(crate) fn resolve<'t>(t: &'t Topology, w: &Workload) -> Result<Option<(&'t Pool, Vec<NodeIx>)>, SimError> {
    let Some(id) = &w.pool else {
        return match &w.client {
            Some(c) => Err(SimError::ClientWithoutPool { client: c.clone() }),
            None => Ok(None),
        };
    };
    if w.client.is_some() && w.task != Task::Io {
        return Err(SimError::ClientInMaintenance { task: w.task.name().to_string() });
    }
    let Some(pool) = t.pool(id) else {
        let ids: Vec<&str> = t.pools.iter().map(|p| p.id.as_str()).collect();
        let hint = match ids.is_empty() {
            true => " (the topology has no [[pool]])".to_string(),
            false => format!(" (pools: {})", ids.join(", ")),
        };
        return Err(SimError::UnknownPool { id: id.clone(), hint });
    };
    let mut failed = Vec::new();
    for f in &w.failed {
        match pool.members().find(|&m| t.nodes[m].id == *f) {
            Some(m) => failed.push(m),
            None => {
                let names: Vec<&str> = pool.members().map(|m| t.nodes[m].id.as_str()).collect();
                return Err(SimError::NotAMember { id: f.clone(), pool: id.clone(), members: names.join(", ") });
            }
        }
    }
    pool.check_failed(&failed).map_err(|e| SimError::Failed(e.to_string()))?;
    Ok(Some((pool, failed)))
}

/// The drives a pool workload runs on: the members that have not failed; a rebuild's failed
/// members too (each stands for the replacement in its bay, which the rebuild writes).
pub(super) fn members_used(pool: &Pool, failed: &[NodeIx], task: Task) -> Vec<NodeIx> {
    pool.members().filter(|d| task == Task::Rebuild || !failed.contains(d)).collect()
}

/// What a pool run is set up from: the pool, the failed members, the logical region, the
/// maintenance plan and the sample of the workload's member I/Os.
pub(super) struct Setup {
    pool: Pool,
    failed: Vec<NodeIx>,
    /// Logical bytes the jobs address: the pool's usable space x region, whole blocks.
    region: f64,
    plan: Option<Maintenance>,
    sample: Sample,
    /// The client the workload comes from, and its block size.
    client: Option<String>,
    bs: u64,
    /// The workload's jobs (`numjobs`): each submits its logical I/Os on its own core.
    numjobs: u32,
    /// A sequential job's depth as md's stripe cache sees it (`pool::stream_depth`).
    stream_depth: u32,
}

/// A pool workload's setup (`None` for per-drive workloads).
pub(super) fn setup(t: &Topology, w: &Workload) -> Result<Option<Setup>, SimError> {
    let Some((pool, failed)) = resolve(t, w)? else { return Ok(None) };
    let bs = w.bs.get() as f64;
    let region = ((pool.usable_bytes(t) as f64 * w.region / bs).floor() * bs).max(bs);
    let plan = (w.task != Task::Io).then(|| pool.maintenance(t, w.task, w.fill, &failed));
    let mut sample = Sample::new(t.nodes.len());
    let depth = iopath_model::pool::stream_depth(t, w, job_depth(t, w, w.client.as_deref(), u64::from(w.numjobs)));
    match &plan {
        // Runs of consecutive steps (as a walk issues them) spread evenly over the plan.
        Some(m) => {
            let (runs, per_run) = if m.steps <= SAMPLE_IOS { (1, m.steps) } else { (8, SAMPLE_IOS / 8) };
            let step_bytes = m.logical_bytes as f64 / m.steps.max(1) as f64;
            for i in (0..runs).flat_map(|r| (0..per_run).map(move |k| r * m.steps / runs + k)) {
                let f = m.step(i);
                let read = attributed_dir(&f) == 0;
                sample.add(pool, &f, step_bytes, read);
            }
        }
        None => sample_io(t, pool, w, (&failed, depth), region, &mut sample),
    }
    let client = w.client.clone().filter(|_| plan.is_none());
    let (bs, numjobs, stream_depth) = (w.bs.get(), w.numjobs, depth);
    Ok(Some(Setup { pool: pool.clone(), failed, region, plan, sample, client, bs, numjobs, stream_depth }))
}

/// Logical I/Os each job keeps outstanding: the workload's iodepth, at most the client's
/// outstanding requests (SMB3 credits, NFS slots, iSCSI queue depth) shared by the jobs.
fn job_depth(t: &Topology, w: &Workload, client: Option<&str>, jobs: u64) -> u32 {
    let Some(i) = client.and_then(|c| iopath_model::net::client_index(t, c)) else {
        return w.iodepth;
    };
    let share = u64::from(t.clients[i].outstanding).div_ceil(jobs.max(1)).max(1);
    w.iodepth.min(u32::try_from(share).unwrap_or(u32::MAX))
}

/// Maps a deterministic sample of the workload's logical I/Os (its own generator: the jobs'
/// streams are untouched), as the jobs will issue them: sequential from the start of the
/// logical region, or uniformly random aligned offsets; `depth` is each job's iodepth.
fn sample_io(t: &Topology, pool: &Pool, w: &Workload, (failed, depth): (&[NodeIx], u32), region: f64, s: &mut Sample) {
    let bs = w.bs.get();
    let blocks = ((region / bs as f64).floor() as u64).max(1);
    let share = w.rw.read_share(w.rwmixread);
    let mut rng = ChaCha8Rng::seed_from_u64(w.seed ^ 0x5A3D_2C1B_0F9E_8D7C);
    let sequential = !w.rw.is_random();
    // One fanout reused by every sampled I/O, as the run keeps one per slot: a ZFS pool maps
    // into its buffers without allocating (4,096 maps of a RAIDZ2 at setup).
    let mut f = Fanout::default();
    for k in 0..SAMPLE_IOS {
        let read = share >= 1.0 || (share > 0.0 && rng.random::<f64>() < share);
        let block = if sequential { k % blocks } else { rng.random_range(0..blocks) };
        let stream = sequential && block > 0;
        let depth = if sequential { depth } else { 0 };
        let io = LogicalIo { write: !read, offset: block * bs, len: bs, job: 0, stream, depth };
        pool.map_into(t, io, failed, &mut f);
        s.add(pool, &f, bs as f64, read);
    }
}

impl Setup {
    /// The block size a member class's costs are computed at: its mean member I/O size under
    /// the workload (`dir` 0 read, 1 write); the workload's block size where the sample gave
    /// that class no I/O (it may still see a few).
    pub(super) fn class_bs(&self, node: NodeIx, dir: usize, bs: u64) -> u64 {
        self.sample.mean_len(node, dir).unwrap_or(bs)
    }

    /// The pool's own costs per member byte of direction `dir`: the CPU work of the logical
    /// I/Os attributed to it (`cpu_work_cost` on `host.cpu`), each kernel's bytes over the
    /// members' bytes in that direction, and for a workload from a client the network's
    /// costs per logical byte (`net::client_costs`: the NIC's line and PCIe links, the
    /// client's link, the protocol process) scaled by logical over member bytes.
    pub(super) fn extra_costs(&self, t: &Topology, g: &ResourceGraph, dir: usize) -> Vec<Cost> {
        let mut out: Vec<Cost> = self.cpu_terms(t, g, dir).into_iter().map(|(_, c, _)| c).collect();
        let member: f64 = self.sample.bytes.iter().map(|b| b[dir]).sum();
        // The jobs' own cores: each logical I/O costs its job `cpu_per_io_us`, as a
        // per-drive job's I/O does (a scrub or rebuild is the kernel's, not a job's).
        if self.plan.is_none() && member > 0.0 && self.sample.logical[dir] > 0.0 {
            let used = members_used(&self.pool, &self.failed, Task::Io);
            let per = self.sample.logical[dir] / member;
            out.extend(g.pool_job_cpu_cost(t, &used, self.bs, self.numjobs, per));
        }
        if let Some(client) = &self.client
            && member > 0.0
            && self.sample.logical[dir] > 0.0
        {
            let scale = self.sample.logical[dir] / member;
            let d = if dir == 0 { Dir::Read } else { Dir::Write };
            for c in iopath_model::net::client_costs(t, g, client, d, self.bs) {
                out.push(Cost { resource: c.resource, s_per_byte: c.s_per_byte * scale });
            }
        }
        out
    }

    /// Each kernel's cost per member byte of direction `dir` and its bytes per member byte.
    fn cpu_terms(&self, t: &Topology, g: &ResourceGraph, dir: usize) -> Vec<(Kernel, Cost, f64)> {
        let member: f64 = self.sample.bytes.iter().map(|b| b[dir]).sum();
        if member <= 0.0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for &(k, bytes) in &self.sample.cpu[dir] {
            let ratio = bytes / member;
            if let Some(c) = g.cpu_work_cost(t, k, ratio) {
                out.push((k, c, ratio));
            }
        }
        out
    }

    /// Logical I/Os each job keeps outstanding ([`job_depth`]).
    pub(super) fn iodepth(&self, t: &Topology, w: &Workload, jobs: u64) -> u32 {
        job_depth(t, w, self.client.as_deref(), jobs)
    }

    /// `numjobs` jobs over the logical region, each starting at its share of it (as per-drive
    /// jobs do); a run that covers the region once gives each its share of the bytes. A
    /// maintenance task is one job (one scan or resync per pool) walking the plan.
    pub(super) fn jobs(
        &self,
        w: &Workload,
        coverage: bool,
        until: Option<SimTime>,
        new_rng: &mut impl FnMut() -> ChaCha8Rng,
    ) -> Vec<Job> {
        let bs = w.bs.get() as f64;
        let n = if self.plan.is_some() { 1 } else { w.numjobs };
        (0..n)
            .map(|k| Job {
                drive: u32::MAX,
                copy_to: None,
                read_share: w.rw.read_share(w.rwmixread),
                random: w.rw.is_random(),
                next_off: ((self.region / f64::from(n) * f64::from(k)) / bs).floor() * bs,
                region: self.region,
                bs,
                blocks: Job::blocks_of(self.region, bs),
                rng: new_rng(),
                budget: coverage.then(|| self.region / f64::from(n)),
                issued: 0.0,
                until,
                stopped: false,
                outstanding: 0,
            })
            .collect()
    }

    /// The run's pool state, with the drive slot of each member in `targets`; a maintenance
    /// run walks segment `segment` of [`SEGMENTS`] from its middle.
    pub(super) fn into_state(
        self,
        t: &Topology,
        g: &ResourceGraph,
        targets: &[NodeIx],
        jobs: usize,
        segment: u64,
    ) -> Box<PoolSt> {
        let cpu = [self.cpu_terms(t, g, 0), self.cpu_terms(t, g, 1)];
        let member: f64 = self.sample.bytes.iter().map(|b| b[0] + b[1]).sum();
        let logical = self.sample.logical[0] + self.sample.logical[1];
        let sample_ratio = if member > 0.0 { logical / member } else { 1.0 };
        let sample_read_share = if logical > 0.0 { self.sample.read_bytes / logical } else { 1.0 };
        let mean_len = if self.sample.n > 0.0 { logical / self.sample.n } else { self.bs as f64 };
        let request = self.client.as_ref().map_or(SimDuration::ZERO, |c| {
            SimDuration::from_micros_f64(iopath_model::net::request_latency_us(t, c, self.bs))
        });
        let mut slot_of = vec![u32::MAX; t.nodes.len()];
        for (k, &d) in targets.iter().enumerate() {
            slot_of[d] = k as u32;
        }
        let maint = self.plan.map(|plan| {
            let steps = plan.steps;
            let (from, to) = (steps * segment / SEGMENTS, steps * (segment + 1) / SEGMENTS);
            let step_bytes = plan.logical_bytes as f64 / steps.max(1) as f64;
            MaintWalk { plan, from, to, next: from + (to - from) / 2, step_bytes }
        });
        Box::new(PoolSt {
            topo: t.clone(),
            pool: self.pool,
            failed: self.failed,
            slot_of,
            logical: Vec::new(),
            free: Vec::new(),
            issued: Vec::new(),
            st: PoolStats::new(),
            busy: vec![0; targets.len()],
            head: vec![u64::MAX; targets.len()],
            hdd: targets.iter().map(|&d| t.drive_figures(d).is_hdd()).collect(),
            cpu,
            sample_ratio,
            sample_read_share,
            mean_len,
            request,
            stream_depth: self.stream_depth,
            last_end: vec![u64::MAX; jobs],
            maint,
        })
    }
}

impl PoolSt {
    fn new_logical(&mut self, l: Logical) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.logical[i as usize] = l;
                i
            }
            None => {
                self.logical.push(l);
                (self.logical.len() - 1) as u32
            }
        }
    }

    /// The drive slot that serves a member I/O: its own, or for a read that several sides
    /// hold, the side the pool's software would pick at issue (`mirror_side`).
    fn choose(&self, m: &iopath_model::pool::MemberIo) -> u32 {
        let slot = |d: NodeIx| self.slot_of.get(d).copied().unwrap_or(u32::MAX);
        if m.alternatives.is_empty() {
            return slot(m.drive);
        }
        let sides: Vec<u32> = std::iter::once(m.drive)
            .chain(m.alternatives.iter().copied())
            .map(slot)
            .filter(|&s| s != u32::MAX)
            .collect();
        match sides.len() {
            0 => u32::MAX,
            1 => sides[0],
            _ => self.mirror_side(&sides, m.offset),
        }
    }

    /// A member I/O as the drive receives it ([`aggregated`]).
    fn aggregate(&self, slot: u32, m: &iopath_model::pool::MemberIo) -> (u64, u64) {
        aggregated(&self.pool, self.head[slot as usize], m)
    }

    /// The side a mirror read goes to.
    ///
    /// ZFS (`vdev_mirror_child_select`, module/zfs/vdev_mirror.c): the lowest load, a side's
    /// queue length plus a seek increment: HDDs 0 when the read starts where the side's last
    /// I/O ended, 5 / 2 = 2 within 1 MiB of it, 5 otherwise; SSDs 0 or 1
    /// (`zfs_vdev_mirror_rotating_inc` 0, `_rotating_seek_inc` 5, `_rotating_seek_offset`
    /// 1 MiB, `_non_rotating_inc` 0, `_non_rotating_seek_inc` 1); among equals, the
    /// `(offset >> 21) % count`-th. md (`read_balance`, drivers/md/raid1.c): a read that
    /// continues a side's last I/O stays on it; else an HDD side with its head nearest, an
    /// SSD side with the fewest pending (the first of equals).
    fn mirror_side(&self, sides: &[u32], offset: u64) -> u32 {
        let hdd = |s: u32| self.hdd[s as usize];
        let head = |s: u32| self.head[s as usize];
        if self.pool.layout.family() == iopath_model::pool::Family::Zfs {
            let load = |s: u32| {
                let inc = match (hdd(s), head(s) == offset) {
                    (_, true) => 0,
                    (true, false) if head(s).abs_diff(offset) < 1 << 20 => 2,
                    (true, false) => 5,
                    (false, false) => 1,
                };
                self.busy[s as usize] + inc
            };
            let low = sides.iter().map(|&s| load(s)).min().unwrap_or(0);
            let best: Vec<u32> = sides.iter().copied().filter(|&s| load(s) == low).collect();
            return best[((offset >> 21) % best.len() as u64) as usize];
        }
        if let Some(&s) = sides.iter().find(|&&s| head(s) == offset) {
            return s;
        }
        let key = |s: u32| if hdd(s) { head(s).abs_diff(offset) } else { u64::from(self.busy[s as usize]) };
        sides.iter().copied().min_by_key(|&s| key(s)).unwrap_or(sides[0])
    }
}

impl PoolStats {
    fn new() -> PoolStats {
        PoolStats {
            read_bytes: 0.0,
            write_bytes: 0.0,
            ios: 0,
            member_read: 0.0,
            member_write: 0.0,
            hist: LatCounts::new(),
            lat_sum_ns: 0.0,
            last: SimTime::ZERO,
        }
    }
}

impl Sim {
    /// A pool job issues its next logical I/O (a maintenance step), mapped onto the members.
    pub(super) fn pool_issue(&mut self, j: u32) {
        let now = self.sched.now();
        let (fanout, write, len) = if let Some(walk) = self.pool.as_mut().and_then(|p| p.maint.as_mut()) {
            let i = walk.next;
            walk.next = if i + 1 >= walk.to { walk.from } else { i + 1 };
            let f = walk.plan.step(i);
            let write = attributed_dir(&f) == 1;
            self.jobs[j as usize].outstanding += 1;
            (f, write, walk.step_bytes)
        } else {
            let sequential = !self.jobs[j as usize].random;
            let Some((read, offset, len)) = self.next_job_io(j, now) else { return };
            let Some(p) = self.pool.as_mut() else { return };
            let depth = if sequential { p.stream_depth } else { 0 };
            let (offset, len) = (offset as u64, len as u64);
            let stream = sequential && p.last_end[j as usize] == offset;
            p.last_end[j as usize] = offset + len;
            let io = LogicalIo { write: !read, offset, len, job: j, stream, depth };
            // The slot this I/O will take keeps the buffers of the fanout it last held.
            let mut f = p.free.last().map(|&i| std::mem::take(&mut p.logical[i as usize].fanout)).unwrap_or_default();
            p.pool.map_into(&p.topo, io, &p.failed, &mut f);
            (f, !read, len as f64)
        };
        let Some(p) = self.pool.as_mut() else { return };
        let l = p.new_logical(Logical {
            job: j,
            write,
            len,
            start: now,
            fanout,
            phase: 0,
            pending: 0,
            member_read: 0,
            member_write: 0,
        });
        match p.request {
            SimDuration::ZERO => self.start_phase(l),
            rtt => self.sched.at(now + rtt, Ev::LogicalStart { l }),
        }
    }

    /// Issues every member I/O of the logical I/O's current phase; a phase with none (every
    /// member it names has failed) is skipped, and past the last phase the logical I/O is done.
    pub(super) fn start_phase(&mut self, l: u32) {
        let now = self.sched.now();
        loop {
            let Some(p) = self.pool.as_mut() else { return };
            let lg = &mut p.logical[l as usize];
            if lg.phase >= lg.fanout.phases.len() {
                self.logical_done(l);
                return;
            }
            let ph = lg.phase;
            let members = std::mem::take(&mut lg.fanout.phases[ph]);
            lg.phase += 1;
            let job = lg.job;
            let mut issued = std::mem::take(&mut p.issued);
            issued.clear();
            for m in &members {
                let slot = p.choose(m);
                if slot == u32::MAX {
                    continue;
                }
                let (offset, len) = p.aggregate(slot, m);
                p.busy[slot as usize] += 1;
                p.head[slot as usize] = offset + len;
                let lg = &mut p.logical[l as usize];
                if m.write {
                    lg.member_write += len;
                } else {
                    lg.member_read += len;
                }
                lg.pending += 1;
                issued.push((slot, m.write, offset, len));
            }
            // The phase goes back into its fanout, whose buffers a later logical I/O reuses.
            p.logical[l as usize].fanout.phases[ph] = members;
            if issued.is_empty() {
                p.issued = issued;
                continue;
            }
            for &(slot, write, offset, len) in &issued {
                let io = self.alloc_io(Io {
                    job,
                    drive: slot,
                    stage: if write { Stage::Write } else { Stage::Read },
                    offset: offset as f64,
                    len: len as f64,
                    start: now,
                    pm: None,
                    copy_to: None,
                    parent: l,
                });
                // The command leaves later (a lane's delay): nothing completes inside this loop.
                self.begin_command(io);
            }
            if let Some(p) = self.pool.as_mut() {
                p.issued = issued;
            }
            return;
        }
    }

    /// A member I/O of logical I/O `l` on drive slot `slot` completed (its drive statistics
    /// are already counted).
    pub(super) fn member_done(&mut self, l: u32, slot: usize) {
        let Some(p) = self.pool.as_mut() else { return };
        p.busy[slot] -= 1;
        let lg = &mut p.logical[l as usize];
        lg.pending -= 1;
        if lg.pending == 0 {
            self.start_phase(l);
        }
    }

    /// The logical I/O's last phase is done: count it, free it, and let its job issue the
    /// next (as an event now, so a run of I/Os with no member I/O never recurses).
    fn logical_done(&mut self, l: u32) {
        let now = self.sched.now();
        let (ws, we) = (self.win.start, self.win.end);
        let Some(p) = self.pool.as_mut() else { return };
        let lg = &p.logical[l as usize];
        let job = lg.job;
        if now >= ws && now <= we {
            let st = &mut p.st;
            if lg.write {
                st.write_bytes += lg.len;
            } else {
                st.read_bytes += lg.len;
            }
            st.member_read += lg.member_read as f64;
            st.member_write += lg.member_write as f64;
            st.ios += 1;
            let lat = (now - lg.start).nanos();
            st.lat_sum_ns += lat as f64;
            st.hist.record((lat / LAT_UNIT_NS).max(1));
            st.last = now;
        }
        p.free.push(l);
        self.jobs[job as usize].outstanding -= 1;
        self.sched.at(now, Ev::Issue { job });
    }

    /// The pool section of the report and the pool's logical totals (which the report's
    /// `total` becomes). The member bytes and `overhead` are those of the logical I/Os
    /// completed in the measured window. In a time-based run the logical rate is the
    /// members' payload that crossed their links inside the window (what the drives' rates
    /// count) times logical over member bytes: counting whole logical completions instead
    /// would quantize a window holding few large I/Os (30 MiB-sized ones in 0.3 s at 110 MB/s
    /// are 3% apart). A run that covers the region once counts completions over its span.
    pub(super) fn pool_result(&self, window_ns: f64) -> Option<(PoolResult, Total)> {
        let p = self.pool.as_ref()?;
        let st = &p.st;
        let lat = report::latency(&st.hist, st.lat_sum_ns, st.ios);
        let logical = st.read_bytes + st.write_bytes;
        let member = st.member_read + st.member_write;
        let (read, write, ios) = if self.win.time_based {
            let secs = window_ns * 1e-9;
            let moved: f64 = self
                .drives
                .iter()
                .map(|d| {
                    self.classes[d.class[0] as usize].window_bytes + self.classes[d.class[1] as usize].window_bytes
                })
                .sum();
            let (ratio, read_share, mean) = if logical > 0.0 && member > 0.0 {
                (logical / member, st.read_bytes / logical, logical / st.ios as f64)
            } else {
                (p.sample_ratio, p.sample_read_share, p.mean_len)
            };
            let rate = if secs > 0.0 { moved * ratio / secs } else { 0.0 };
            (rate * read_share, rate * (1.0 - read_share), rate / mean)
        } else {
            let secs = st.last.secs_f64();
            let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
            (per_s(st.read_bytes), per_s(st.write_bytes), per_s(st.ios as f64))
        };
        let r = PoolResult {
            id: p.pool.id.clone(),
            layout: p.pool.layout.name().to_string(),
            read_mb_s: read / 1e6,
            write_mb_s: write / 1e6,
            mb_s: (read + write) / 1e6,
            iops: ios,
            lat_us: lat,
            read_bytes: st.read_bytes as u64,
            write_bytes: st.write_bytes as u64,
            ios: st.ios,
            member_read_bytes: st.member_read as u64,
            member_write_bytes: st.member_write as u64,
            overhead: if logical > 0.0 { member / logical } else { 0.0 },
            failed: p.failed.iter().map(|&d| p.topo.nodes[d].id.clone()).collect(),
            maintenance: None,
        };
        let total = Total {
            read_mb_s: r.read_mb_s,
            write_mb_s: r.write_mb_s,
            mb_s: r.mb_s,
            iops: r.iops,
            lat_us: r.lat_us.clone(),
        };
        Some((r, total))
    }
}

impl Sim {
    /// The host CPU's use by each kernel over the measured window: the member bytes each
    /// class moved in it times the kernel's cost per member byte.
    pub(super) fn pool_cpu_use(&self, window_ns: f64) -> Vec<CpuUse> {
        let Some(p) = self.pool.as_ref() else { return Vec::new() };
        let secs = window_ns * 1e-9;
        let mut out: Vec<CpuUse> = Vec::new();
        for (dir, terms) in p.cpu.iter().enumerate() {
            let moved: f64 = self.drives.iter().map(|d| self.classes[d.class[dir] as usize].window_bytes).sum();
            for &(k, c, ratio) in terms {
                let (util, mb_s) =
                    if secs > 0.0 { (moved * c.s_per_byte / secs, moved * ratio / secs / 1e6) } else { (0.0, 0.0) };
                match out.iter_mut().find(|u| u.kind == k.name()) {
                    Some(u) => {
                        u.util += util;
                        u.mb_s += mb_s;
                    }
                    None => out.push(CpuUse { kind: k.name().to_string(), util, mb_s }),
                }
            }
        }
        out
    }
}

/// A scrub or rebuild: a window at the middle of each of [`SEGMENTS`] parts of the plan;
/// the report is the slowest part's (what binds the task), with the projection over all.
pub(super) fn simulate_maintenance(
    t: &Topology,
    w: &Workload,
    opts: &SimOptions,
) -> Result<(Report, Vec<f64>), SimError> {
    let mut parts = Vec::new();
    let mut plan_totals = None;
    let mut base_ns = 0;
    for seg in 0..SEGMENTS {
        let mut s = Sim::with_segment(t, w, seg)?;
        s.wall_start = opts.wall_clock.map(|c| c());
        s.run(opts, base_ns);
        base_ns += s.win.reached.nanos();
        let (r, utils) = s.report(t, w);
        if plan_totals.is_none()
            && let Some(walk) = s.pool.as_ref().and_then(|p| p.maint.as_ref())
        {
            let m = &walk.plan;
            plan_totals = Some((m.task, m.logical_bytes, m.member_read_bytes + m.member_write_bytes, m.steps));
        }
        let stop = r.partial;
        parts.push((r, utils));
        if stop {
            break;
        }
    }
    let (task, logical, member, steps) = plan_totals.unwrap_or((w.task, 0, 0, 0));
    let mut segments = Vec::new();
    let mut hours = 0.0;
    for (k, (r, _)) in parts.iter().enumerate() {
        let k = k as u64;
        let share = (steps * (k + 1) / SEGMENTS - steps * k / SEGMENTS) as f64 / steps.max(1) as f64;
        let rate = r.pool.as_ref().map_or(0.0, |p| p.mb_s);
        let h = if rate > 0.0 { logical as f64 * share / (rate * 1e6) / 3600.0 } else { f64::INFINITY };
        hours += h;
        segments.push(MaintenanceSegment {
            from: k as f64 / SEGMENTS as f64,
            to: (k + 1) as f64 / SEGMENTS as f64,
            rate_mb_s: rate,
            hours: h,
            bottleneck: r.bottleneck.clone(),
        });
    }
    let slowest = (0..parts.len()).max_by(|&a, &b| segments[a].hours.total_cmp(&segments[b].hours)).unwrap_or(0);
    let complete = segments.len() as u64 == SEGMENTS && hours.is_finite();
    // The body is the whole task's: each quarter weighted by the time it takes, so its
    // rates are the bytes over the total time. Without a projected time (a quarter at rate
    // 0, an interrupted run) it stays the slowest quarter's run.
    let (mut report, utils) = if complete && hours > 0.0 {
        let weights: Vec<f64> = segments.iter().map(|s| s.hours / hours).collect();
        time_weighted(t, &parts, &weights, slowest)
    } else {
        parts.swap_remove(slowest)
    };
    let m = MaintenanceResult {
        task: task.name().to_string(),
        fill: w.fill,
        logical_bytes: logical,
        member_bytes: member,
        rate_mb_s: if complete && hours > 0.0 { logical as f64 / (hours * 3600.0) / 1e6 } else { 0.0 },
        hours: if complete { hours } else { 0.0 },
        bottleneck: segments.get(slowest).map(|s| s.bottleneck.clone()).unwrap_or_default(),
        segments,
    };
    if !complete && !report.partial {
        report.warnings.push(format!(
            "the {} rate was 0 in some part of the range, so there is no projected time: lengthen the runtime",
            task.name()
        ));
    }
    if let Some(p) = report.pool.as_mut() {
        p.maintenance = Some(m);
    }
    Ok((report, utils))
}

/// The quarters' runs of a task as one report over the whole task: rates, IOPS, latencies
/// (max: the largest), utilizations and CPU use are means weighted by `weights` (each
/// quarter's share of the task's time, summing to 1), so a rate is the task's bytes over its
/// time; counts and costs are sums; the bottleneck is the busiest resource of the weighted
/// utilizations; the member overhead is the summed member bytes over the summed logical ones.
/// Warnings and the workload are `base`'s (the slowest quarter's).
fn time_weighted(t: &Topology, parts: &[(Report, Vec<f64>)], weights: &[f64], base: usize) -> (Report, Vec<f64>) {
    let mut r = parts[base].0.clone();
    let mut utils = vec![0.0; parts[base].1.len()];
    let wsum = |f: &dyn Fn(&Report) -> f64| parts.iter().zip(weights).map(|((p, _), w)| w * f(p)).sum::<f64>();
    let lat = |f: &dyn Fn(&Report) -> &Latency| {
        let mut m = LatencyMean::default();
        for ((p, _), &w) in parts.iter().zip(weights) {
            m.add(f(p), w);
        }
        m.finish(1.0)
    };
    (r.total.read_mb_s, r.total.write_mb_s) = (wsum(&|p| p.total.read_mb_s), wsum(&|p| p.total.write_mb_s));
    (r.total.mb_s, r.total.iops) = (wsum(&|p| p.total.mb_s), wsum(&|p| p.total.iops));
    r.total.lat_us = lat(&|p| &p.total.lat_us);
    for i in 0..r.drives.len() {
        let d = &mut r.drives[i];
        (d.read_mb_s, d.write_mb_s) = (wsum(&|p| p.drives[i].read_mb_s), wsum(&|p| p.drives[i].write_mb_s));
        d.iops = wsum(&|p| p.drives[i].iops);
        d.lat_us = lat(&|p| &p.drives[i].lat_us);
        d.read_bytes = parts.iter().map(|(p, _)| p.drives[i].read_bytes).sum();
        d.write_bytes = parts.iter().map(|(p, _)| p.drives[i].write_bytes).sum();
        d.ios = parts.iter().map(|(p, _)| p.drives[i].ios).sum();
    }
    for i in 0..r.links.len() {
        r.links[i].util_up = wsum(&|p| p.links[i].util_up);
        r.links[i].util_down = wsum(&|p| p.links[i].util_down);
    }
    for i in 0..r.cpu.len() {
        r.cpu[i].util = wsum(&|p| p.cpu.get(i).map_or(0.0, |c| c.util));
        r.cpu[i].mb_s = wsum(&|p| p.cpu.get(i).map_or(0.0, |c| c.mb_s));
    }
    for ((_, u), w) in parts.iter().zip(weights) {
        for (s, v) in utils.iter_mut().zip(u) {
            *s += w * v;
        }
    }
    r.bottleneck = bottleneck_of(&ResourceGraph::new(t), &utils);
    r.cost.events = parts.iter().map(|(p, _)| p.cost.events).sum();
    r.cost.ios = parts.iter().map(|(p, _)| p.cost.ios).sum();
    r.cost.sim_s = parts.iter().map(|(p, _)| p.cost.sim_s).sum();
    r.cost.wall_s = parts.iter().map(|(p, _)| p.cost.wall_s).sum();
    if let Some(pool) = r.pool.as_mut() {
        let pr = |f: &dyn Fn(&PoolResult) -> f64| wsum(&|p| p.pool.as_ref().map_or(0.0, f));
        (pool.read_mb_s, pool.write_mb_s) = (pr(&|x| x.read_mb_s), pr(&|x| x.write_mb_s));
        (pool.mb_s, pool.iops) = (pr(&|x| x.mb_s), pr(&|x| x.iops));
        let sum =
            |f: &dyn Fn(&PoolResult) -> u64| parts.iter().filter_map(|(p, _)| p.pool.as_ref()).map(f).sum::<u64>();
        (pool.read_bytes, pool.write_bytes, pool.ios) =
            (sum(&|x| x.read_bytes), sum(&|x| x.write_bytes), sum(&|x| x.ios));
        (pool.member_read_bytes, pool.member_write_bytes) =
            (sum(&|x| x.member_read_bytes), sum(&|x| x.member_write_bytes));
        let logical = pool.read_bytes + pool.write_bytes;
        if logical > 0 {
            pool.overhead = (pool.member_read_bytes + pool.member_write_bytes) as f64 / logical as f64;
        }
        let mut m = LatencyMean::default();
        for ((p, _), &w) in parts.iter().zip(weights) {
            if let Some(x) = &p.pool {
                m.add(&x.lat_us, w);
            }
        }
        pool.lat_us = m.finish(1.0);
    }
    (r, utils)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iopath_model::Catalog;
    use iopath_model::pool::MemberIo;

    /// Four 870 EVO on an LSI SAS2308 in a pool of `layout`.
    fn topo(layout: &str) -> Topology {
        let text = format!(
            "[host]\npart = \"intel-lga1700\"\n[[node]]\nid = \"hba\"\npart = \"lsi-sas2308\"\nparent = \"host\"\n\
             [[drive]]\nid = \"d\"\ncount = 4\npart = \"samsung-870evo-1tb\"\nparent = \"hba\"\nport = 0\n\
             [[pool]]\nid = \"tank\"\nlayout = \"{layout}\"\nmembers = [\"d0\", \"d1\", \"d2\", \"d3\"]\n"
        );
        Topology::parse("t.toml", &text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A scrub's report is the whole task's: its quarters take equal shares of the bytes, so
    /// the rate over the task is their harmonic mean, 4 / sum(1 / rate_k), and the body's
    /// logical rate is that (not the slowest quarter's, which an HDD's inner zones make
    /// lower); the members' rates are the same weighted means.
    #[test]
    fn a_scrub_report_is_its_bytes_over_its_whole_time() {
        let text = "[host]\npart = \"intel-lga1700\"\n[[node]]\nid = \"hba\"\npart = \"lsi-sas2308\"\nparent = \"host\"\n\
             [[drive]]\nid = \"d\"\ncount = 4\npart = \"wd-red-plus-4tb\"\nparent = \"hba\"\nport = 0\n\
             [[pool]]\nid = \"tank\"\nlayout = \"raidz1\"\nmembers = [\"d\"]\n";
        let t = Topology::parse("t.toml", text, &Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let spec = iopath_model::WorkloadSpec {
            pool: Some("tank".into()),
            task: Some("scrub".into()),
            fill: Some("50%".into()),
            bs: Some("1m".into()),
            iodepth: Some(4),
            runtime: Some("0.3s".into()),
            ..Default::default()
        };
        let (r, _) = simulate_maintenance(&t, &spec.resolve().unwrap(), &SimOptions::default()).unwrap();
        let m = r.pool.as_ref().unwrap().maintenance.as_ref().unwrap();
        let rates: Vec<f64> = m.segments.iter().map(|s| s.rate_mb_s).collect();
        let harmonic = 4.0 / rates.iter().map(|r| 1.0 / r).sum::<f64>();
        let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(harmonic > slowest * 1.05, "the zones spread the quarters: {rates:?}");
        assert!((r.total.mb_s - harmonic).abs() < harmonic * 1e-3, "body {} vs {harmonic}", r.total.mb_s);
        assert!((m.rate_mb_s - harmonic).abs() < harmonic * 1e-3);
        // A scrub of RAIDZ1 of 4 reads data and parity: the members read 4/3 of the logical
        // bytes (padding aside), in the body's rates as in its byte counts.
        let members: f64 = r.drives.iter().map(|d| d.read_mb_s).sum();
        let over = r.pool.as_ref().unwrap().overhead;
        assert!((members / r.total.mb_s - over).abs() < 0.02 * over, "{members} / {} vs {over}", r.total.mb_s);
    }

    /// ZFS aggregates across a gap of at most 4 KiB for writes and 32 KiB for reads (zfs(4)
    /// defaults), moving the gap; md never does, and nothing aggregates backwards.
    #[test]
    fn zfs_aggregates_small_gaps_and_md_does_not() {
        let t = topo("raidz1");
        let p = &t.pools[0];
        let d = t.drives[0];
        let w = |off| MemberIo::write(d, off, 8192);
        let r = |off| MemberIo::read(d, off, 8192);
        assert_eq!(aggregated(p, 1 << 20, &w((1 << 20) + 4096)), (1 << 20, 8192 + 4096));
        assert_eq!(aggregated(p, 1 << 20, &w((1 << 20) + 4097)), ((1 << 20) + 4097, 8192));
        assert_eq!(aggregated(p, 1 << 20, &r((1 << 20) + 32768)), (1 << 20, 8192 + 32768));
        assert_eq!(aggregated(p, 1 << 20, &r((1 << 20) - 4096)), ((1 << 20) - 4096, 8192));
        assert_eq!(aggregated(p, u64::MAX, &w(0)), (0, 8192), "no previous I/O");
        let md = topo("raid5");
        assert_eq!(aggregated(&md.pools[0], 1 << 20, &w((1 << 20) + 4096)), ((1 << 20) + 4096, 8192));
    }

    /// A write that touches a member is carried by the write classes; a read-only fanout
    /// (a read, a degraded read, a scrub step) by the read classes.
    #[test]
    fn a_fanout_is_attributed_to_writes_when_it_writes_any_member() {
        let (a, b) = (1, 2);
        let rmw = Fanout {
            phases: vec![
                vec![MemberIo::read(a, 0, 4096)],
                vec![MemberIo::write(a, 0, 4096), MemberIo::write(b, 0, 4096)],
            ],
            cpu: Vec::new(),
        };
        assert_eq!(attributed_dir(&rmw), 1);
        let read =
            Fanout { phases: vec![vec![MemberIo::read(a, 0, 4096), MemberIo::read(b, 0, 4096)]], cpu: Vec::new() };
        assert_eq!(attributed_dir(&read), 0);
    }

    /// Duplicate resources in a class's costs are summed into one.
    #[test]
    fn merged_sums_costs_on_one_resource() {
        let c = |resource, s_per_byte| Cost { resource, s_per_byte };
        assert_eq!(merged(vec![c(3, 1.0), c(5, 2.0), c(3, 0.5)]), vec![c(3, 1.5), c(5, 2.0)]);
    }
}
