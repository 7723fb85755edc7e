//! The event handlers: the life of an I/O from issue to completion.

use super::*;

impl Sim {
    pub(super) fn issue(&mut self, j: u32) {
        if self.pool.is_some() {
            return self.pool_issue(j);
        }
        let now = self.sched.now();
        let Some((read, offset, bs)) = self.next_job_io(j, now) else { return };
        let job = &self.jobs[j as usize];
        let drive = job.drive;
        let copy_to = job.copy_to;
        let io = self.alloc_io(Io {
            job: j,
            drive,
            stage: if read { Stage::Read } else { Stage::Write },
            offset,
            len: bs,
            start: now,
            pm: None,
            copy_to,
            parent: NO_PARENT,
        });
        self.begin_command(io);
    }

    /// Job `j`'s next I/O (read?, offset, length) over its region, counted as issued and
    /// outstanding; `None` once the job has stopped (time limit or byte budget reached).
    pub(super) fn next_job_io(&mut self, j: u32, now: SimTime) -> Option<(bool, f64, f64)> {
        let job = &mut self.jobs[j as usize];
        if job.stopped || job.until.is_some_and(|u| now >= u) || job.budget.is_some_and(|b| job.issued >= b) {
            job.stopped = true;
            return None;
        }
        let bs = job.bs;
        let read = job.read_share >= 1.0 || (job.read_share > 0.0 && job.rng.random::<f64>() < job.read_share);
        let offset = if job.random {
            job.rng.random_range(0..job.blocks) as f64 * bs
        } else {
            if job.next_off + bs > job.region {
                job.next_off = 0.0;
            }
            let o = job.next_off;
            job.next_off += bs;
            o
        };
        job.issued += bs;
        job.outstanding += 1;
        Some((read, offset, bs))
    }

    /// A command leaves the host for its drive (first for a copy's read, again for its write).
    pub(super) fn begin_command(&mut self, io: u32) {
        let now = self.sched.now();
        self.ios[io as usize].start = now;
        let x = &self.ios[io as usize];
        let d = x.drive as usize;
        let dr = &self.drives[d];
        // The class this command's transfer will join, a lane delay from now: with 1,024
        // drives at QD 1 its record is out of cache since the drive's last transfer, and the
        // start of the next one waited for it (an eighth of `start_transfer`'s samples).
        let c = &self.classes[dr.class[usize::from(x.stage == Stage::Write)] as usize];
        prefetch(c);
        prefetch_at(c, 64);
        if dr.pm.is_some_and(|pm| self.pms[pm as usize].cbs) {
            self.sched.push(dr.lanes.host, Ev::AtPort { io });
        } else {
            // Nothing to wait for at the controller: one event to the drive.
            self.sched.push(dr.lanes.host_fabric, Ev::Submitted { io });
        }
    }

    /// The command reaches the controller; under command-based switching it may be deferred
    /// while another drive holds the port multiplier's link (`pm.rs`).
    pub(super) fn at_port(&mut self, io: u32) {
        let d = self.ios[io as usize].drive as usize;
        if let Some(pm) = self.drives[d].pm
            && self.pms[pm as usize].cbs
        {
            self.cbs_arrive(pm, io);
            return;
        }
        let lane = self.drives[d].lanes.fabric;
        self.sched.push(lane, Ev::Submitted { io });
    }

    pub(super) fn at_drive(&mut self, io: u32) {
        let now = self.sched.now().nanos_f64();
        let (d, stage, offset, len) = {
            let x = &self.ios[io as usize];
            (x.drive as usize, x.stage, x.offset, x.len)
        };
        let dr = &mut self.drives[d];
        if let Some(h) = dr.hdd.as_mut() {
            match stage {
                Stage::Read => match stream_read(&h.geo, &mut h.ra, &mut h.wb, &mut h.busy_ns, offset, len, now) {
                    Some(ready) => {
                        let at = ceil_time(ready);
                        // Already in the drive's buffer (the stream is ahead of its reader, as
                        // a sequential reader below the media rate keeps it): the transfer
                        // starts now, as a write's does, not after the events already due now.
                        if at <= self.sched.now() {
                            self.start_transfer(io);
                        } else {
                            self.sched.at(at, Ev::DataReady { io });
                        }
                    }
                    None => {
                        h.queue.push((io, true));
                        self.hdd_dispatch(d);
                    }
                },
                Stage::Write => self.start_transfer(io),
            }
            return;
        }
        match stage {
            Stage::Read => self.acquire_unit(d, io),
            Stage::Write => self.start_transfer(io),
        }
    }

    pub(super) fn acquire_unit(&mut self, d: usize, io: u32) {
        let dr = &mut self.drives[d];
        if dr.units_free == 0 {
            dr.unit_wait.push_back(io);
            return;
        }
        dr.units_free -= 1;
        let lane = if self.ios[io as usize].stage == Stage::Read { dr.lanes.read } else { dr.lanes.write };
        if self.ios[io as usize].stage == Stage::Read
            && let Some(spread) = self.flash_read_time(d)
        {
            let now = self.sched.now();
            self.sched.at(now + spread, Ev::UnitDone { io });
            return;
        }
        self.sched.push(lane, Ev::UnitDone { io });
    }

    pub(super) fn unit_done(&mut self, io: u32) {
        let d = self.ios[io as usize].drive as usize;
        self.drives[d].units_free += 1;
        if let Some(next) = self.drives[d].unit_wait.pop_front() {
            self.acquire_unit(d, next);
        }
        match self.ios[io as usize].stage {
            Stage::Read => self.start_transfer(io),
            Stage::Write => self.finish_at_drive(io),
        }
    }

    pub(super) fn start_transfer(&mut self, io: u32) {
        let x = &self.ios[io as usize];
        let d = x.drive as usize;
        let c = self.drives[d].class[if x.stage == Stage::Read { 0 } else { 1 }] as usize;
        let len = x.len;
        let was_idle = self.classes[c].fifo.is_empty();
        self.classes[c].fifo.push_back((io, len));
        if was_idle {
            let k = self.alloc.comp_of[c] as usize;
            self.alloc.active_pos[c] = self.alloc.comps[k].active.len() as u32;
            self.alloc.comps[k].active.push(c as u32);
            let now = self.sched.now();
            self.classes[c].acc_t = now;
            self.classes[c].last = now;
            // An FBS multiplier's switching cost changes with the drives moving data. A class
            // that joins a group is counted on its resources by the group (`res_active`
            // counts the moving classes outside groups), any other from here on.
            let joined = if self.fbs_switching(c, true) {
                self.count_active(c, true);
                false
            } else if self.alloc.groups.comp[k].live.is_empty() {
                self.count_active(c, true);
                self.try_join(c, k, now)
            } else if self.group_join(c, k, now) {
                true
            } else {
                self.count_active(c, true);
                self.join_beside_groups(c, k, now)
            };
            if !joined {
                self.mark_dirty(k);
            }
        }
    }

    pub(super) fn xfer_done(&mut self, c: u32) {
        let now = self.sched.now();
        if self.classes[c as usize].fifo.is_empty() {
            return;
        }
        let (ws, we) = (self.win.start, self.win.end);
        let cl = &mut self.classes[c as usize];
        // Account for what moved up to now while the class still counts as moving.
        account(cl, now, ws, we);
        let (io, _) = cl.fifo.pop_front().expect("non-empty");
        cl.last = now;
        if let Some(&(_, rem)) = cl.fifo.front() {
            cl.version += 1;
            self.sched.set_timer(c as usize, now + transfer_time(rem, cl.rate));
        } else {
            // The class stops moving data: the others take its share.
            let old_rate = cl.rate;
            cl.rate = 0.0;
            cl.version += 1;
            let k = self.alloc.comp_of[c as usize] as usize;
            self.deactivate(c as usize, k);
            let left = if self.fbs_switching(c as usize, false) {
                false
            } else if self.alloc.groups.comp[k].live.is_empty() {
                self.try_leave(c as usize, k, old_rate, now)
            } else {
                self.leave_beside_groups(c as usize, k, old_rate, now)
            };
            if !left {
                self.mark_dirty(k);
            }
        }
        self.transfer_ended(c, io);
    }

    /// Class `c`'s transfer of `io` is done. A read on a drive behind no port multiplier is
    /// done at the drive and its completion goes to the host, which the class's drive and
    /// direction say without reading the I/O's record: with 32 I/Os in flight on each of
    /// 1,024 drives the record is 2 MB away from the last time it was touched, and reading
    /// it here stalled every end (a tenth of the QD 32 run's samples, on one load). The line
    /// is fetched instead, for the completion to read later.
    #[inline]
    pub(super) fn transfer_ended(&mut self, c: u32, io: u32) {
        let cd = self.class_drive[c as usize];
        if cd & WRITE_CLASS == 0 {
            debug_assert!(self.ios[io as usize].stage == Stage::Read);
            self.finish_on(cd as usize, io);
        } else {
            self.after_transfer(io);
        }
    }

    /// A transfer of `io` is done: a read is done at the drive, a write's data has arrived.
    pub(super) fn after_transfer(&mut self, io: u32) {
        let x = &self.ios[io as usize];
        match x.stage {
            Stage::Read => self.finish_at_drive(io),
            Stage::Write => {
                let d = x.drive as usize;
                let len = x.len;
                if self.drives[d].hdd.is_some() {
                    self.hdd_write_arrived(d, io);
                } else {
                    self.flash_wrote(d, len);
                    self.acquire_unit(d, io);
                }
            }
        }
    }

    /// The drive is done with the command; the completion travels back to the controller.
    pub(super) fn finish_at_drive(&mut self, io: u32) {
        self.finish_on(self.ios[io as usize].drive as usize, io);
    }

    /// [`Sim::finish_at_drive`] on drive `d`. A drive behind no port multiplier has no CBS
    /// state to tell, so its I/O's record is not read here (the completion reads it later,
    /// and its line is fetched for that).
    #[inline]
    fn finish_on(&mut self, d: usize, io: u32) {
        let dr = &self.drives[d];
        if dr.pm.is_none() {
            debug_assert!(self.ios[io as usize].pm.is_none());
            prefetch(&self.ios[io as usize]);
            self.sched.push(dr.lanes.host_fabric, Ev::Completed { io });
        } else if self.ios[io as usize].pm.is_some() {
            self.sched.push(dr.lanes.fabric, Ev::DriveDone { io });
        } else {
            // No CBS port multiplier to tell: one event to the host.
            self.sched.push(dr.lanes.host_fabric, Ev::Completed { io });
        }
    }

    /// The completion reaches the controller: a CBS port multiplier may switch to a waiting
    /// drive, and the host's completion path follows.
    pub(super) fn drive_done(&mut self, io: u32) {
        if let Some(pm) = self.ios[io as usize].pm {
            self.cbs_complete(pm, io);
            self.ios[io as usize].pm = None;
        }
        let d = self.ios[io as usize].drive as usize;
        self.sched.push(self.drives[d].lanes.host, Ev::Completed { io });
    }

    pub(super) fn completed(&mut self, io: u32) {
        let now = self.sched.now();
        let (job, d, stage, len, start, pm, copy_to) = {
            let x = &self.ios[io as usize];
            (x.job, x.drive as usize, x.stage, x.len, x.start, x.pm, x.copy_to)
        };
        debug_assert!(pm.is_none(), "a CBS command completes at the controller first");
        if now >= self.win.start && now <= self.win.end {
            let st = &mut self.drives[d].st;
            match stage {
                Stage::Read => st.read_bytes += len,
                Stage::Write => st.write_bytes += len,
            }
            st.ios += 1;
            let lat = (now - start).nanos();
            st.lat_sum_ns += lat as f64;
            st.hist.record((lat / LAT_UNIT_NS).max(1));
            st.first.get_or_insert(now);
            st.last = now;
            st.used = true;
            self.win.completed += 1;
        }
        let parent = self.ios[io as usize].parent;
        if parent != NO_PARENT {
            self.free_ios.push(io);
            self.member_done(parent, d);
            return;
        }
        if stage == Stage::Read
            && let Some(dst) = copy_to
        {
            // The read half of a copy is in the host's buffer: write it to the destination.
            let x = &mut self.ios[io as usize];
            x.stage = Stage::Write;
            x.drive = dst;
            x.copy_to = None;
            self.begin_command(io);
            return;
        }
        self.free_ios.push(io);
        let j = &mut self.jobs[job as usize];
        j.outstanding -= 1;
        self.issue(job);
    }
}

/// A read of `[offset, offset+len)` arriving at `now`, if the read-ahead stream serves it:
/// when its data is in the buffer [ns], with the media time charged to the drive (and the
/// write-back stream waiting meanwhile); `None`: it needs positioning. The zone rate at
/// `offset` is computed once, for the stream's reach and the media time (the geometry is
/// shared behind a pointer, and the compiler no longer merges the two computations).
#[inline]
fn stream_read(
    g: &HddGeometry,
    ra: &mut ReadAhead,
    wb: &mut WriteBack,
    busy_ns: &mut f64,
    offset: f64,
    len: f64,
    now: f64,
) -> Option<f64> {
    if !ra.active {
        return None;
    }
    let rate = g.rate_at(offset);
    if !ra.hits_within(g, offset, now, g.reach(rate)) {
        return None;
    }
    let ready = ra.request(g, offset, len, now);
    // The media reads this instead of writing back cached data.
    let media = len / rate * 1e9;
    wb.pause(now, media);
    *busy_ns += media;
    Some(ready)
}
