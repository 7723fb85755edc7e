//! HDD command dispatch: stream hits, the write cache, rotational position ordering, the
//! actuator.
//!
//! Write cache (on by default, `write_cache`): a write that no write-back stream continues is
//! acknowledged once its data is in the drive's buffer (after the firmware's command time) and
//! kept as a dirty entry, while the cache has room for it (`cache_mib`); the actuator destages
//! dirty entries in the same rotational position ordering as queued commands, so at a low
//! queue depth writes complete far faster than reads until the cache is full, and then at the
//! rate destaging frees room: a write that finds the cache full waits for a destage to make
//! room for it (oldest first). With the cache off, a write waits for its own media write.

use super::*;
use crate::hdd::SmrLog;

/// `HddSt::current` holds a destage (a cached write on its way to the media), not a command.
const DESTAGE: u32 = u32::MAX;

/// How many queued commands, and how many dirty entries, rotational ordering looks at (NCQ's 32).
const RPO_DEPTH: usize = 32;

impl HddSt {
    /// Positioning before a read of `offset` can start [ns], on this drive's platter (its
    /// spindle's phase added to the run's clock).
    fn read_position_ns(&self, now: f64, offset: f64) -> f64 {
        self.geo.position_ns(self.head, now + self.spin_ns, offset)
    }

    /// Positioning before a write of `offset` can start [ns]: a drive-managed SMR drive appends
    /// random writes to its media cache at the outer edge (a seek there, no rotational wait
    /// between appends) or, with the cache full, cleans a band (positioning is part of that).
    fn write_position_ns(&self, now: f64, offset: f64, len: f64) -> f64 {
        match &self.smr {
            Some(log) if log.has_room(len) => self.geo.cmd_ns + self.geo.seek_ns(self.head, 0.0),
            Some(_) => self.geo.cmd_ns,
            None => self.read_position_ns(now, offset),
        }
    }

    /// Media time of an access once positioned [ns], and where it leaves the head.
    fn media_ns(&mut self, offset: f64, len: f64, is_read: bool) -> (f64, f64) {
        let g = &self.geo;
        if is_read {
            return (len / g.rate_at(offset) * 1e9, g.stroke(offset + len));
        }
        match self.smr.as_mut() {
            Some(log) => {
                let room = log.has_room(len);
                let ns = log.write_ns(g, offset, len);
                (ns, if room { 0.0 } else { g.stroke(offset + len) })
            }
            None => (len / (g.rate_at(offset) * g.write_eff) * 1e9, g.stroke(offset + len)),
        }
    }
}

/// The SMR media cache of a drive's figures, when it is drive-managed SMR.
pub(super) fn smr_log(f: &iopath_model::parts::DriveFigures) -> Option<SmrLog> {
    (f.smr && f.smr_cache_gb > 0.0).then(|| SmrLog::new(f.smr_cache_gb * 1e9))
}

impl Sim {
    /// A write's data has reached HDD `d`: a write-back stream takes it, the write cache
    /// acknowledges it, or it queues for the actuator.
    pub(super) fn hdd_write_arrived(&mut self, d: usize, io: u32) {
        let now = self.sched.now().nanos_f64();
        let half = self.drives[d].fabric_half;
        let (offset, len) = (self.ios[io as usize].offset, self.ios[io as usize].len);
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        // A write that continues the previous one is a sequential stream's, not a random
        // write: it waits for the stream (the first write's positioning), as it always has.
        let continues = (offset - h.last_write_end).abs() < 0.5;
        h.last_write_end = offset + len;
        if h.wb.hits(&h.geo, offset) {
            let ack = h.wb.accept(&h.geo, offset, len, now);
            let media = len / (h.geo.rate_at(offset) * h.geo.write_eff) * 1e9;
            h.ra.pause(&h.geo, now, media);
            h.busy_ns += media;
            self.sched.at(ceil_time(ack) + half, Ev::DriveDone { io });
        } else if h.write_cache && !continues {
            h.wait_room.push_back(io);
            self.hdd_admit(d);
            self.hdd_dispatch(d);
        } else {
            h.queue.push((io, false));
            self.hdd_dispatch(d);
        }
    }

    /// Writes waiting for room in the write cache enter it, oldest first, while it has room;
    /// each is acknowledged after the firmware's command time.
    fn hdd_admit(&mut self, d: usize) {
        let now = self.sched.now().nanos_f64();
        let half = self.drives[d].fabric_half;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        while let Some(&io) = h.wait_room.front() {
            let (offset, len) = (self.ios[io as usize].offset, self.ios[io as usize].len);
            if h.dirty_bytes + len > h.geo.cache_bytes && !h.dirty.is_empty() {
                break;
            }
            h.wait_room.pop_front();
            h.dirty.push_back((offset, len));
            h.dirty_bytes += len;
            let ack = ceil_time(now + h.geo.cmd_ns);
            self.sched.at(ack + half, Ev::DriveDone { io });
        }
    }

    pub(super) fn hdd_dispatch(&mut self, d: usize) {
        let now = self.sched.now().nanos_f64();
        let half = self.drives[d].fabric_half;
        let ios = &self.ios;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        // Queued commands that a stream now serves need no positioning. A stream that is not
        // active serves nothing (`hits` is false), so with neither active (a drive's first
        // commands, queued behind its first seek) there is nothing to look for.
        let mut k = if h.ra.active || h.wb.active { 0 } else { h.queue.len() };
        while k < h.queue.len() {
            let (io, is_read) = h.queue[k];
            let x = &ios[io as usize];
            if is_read && h.ra.hits(&h.geo, x.offset, now) {
                h.queue.remove(k);
                let ready = h.ra.request(&h.geo, x.offset, x.len, now);
                h.wb.pause(now, x.len / h.geo.rate_at(x.offset) * 1e9);
                h.busy_ns += x.len / h.geo.rate_at(x.offset) * 1e9;
                self.sched.at(ceil_time(ready), Ev::DataReady { io });
            } else if !is_read && h.wb.hits(&h.geo, x.offset) {
                h.queue.remove(k);
                let ack = h.wb.accept(&h.geo, x.offset, x.len, now);
                let media = x.len / (h.geo.rate_at(x.offset) * h.geo.write_eff) * 1e9;
                h.ra.pause(&h.geo, now, media);
                h.busy_ns += media;
                self.sched.at(ceil_time(ack) + half, Ev::DriveDone { io });
            } else {
                k += 1;
            }
        }
        // Dirty entries a write-back stream now continues are written with it (their
        // acknowledgement has gone already): a sequential run that began in the cache.
        let mut k = if h.wb.active { 0 } else { h.dirty.len() };
        while k < h.dirty.len() {
            let (offset, len) = h.dirty[k];
            if h.wb.hits(&h.geo, offset) {
                h.dirty.remove(k);
                h.dirty_bytes = (h.dirty_bytes - len).max(0.0);
                h.wb.accept(&h.geo, offset, len, now);
                let media = len / (h.geo.rate_at(offset) * h.geo.write_eff) * 1e9;
                h.ra.pause(&h.geo, now, media);
                h.busy_ns += media;
            } else {
                k += 1;
            }
        }
        if h.busy || (h.queue.is_empty() && h.dirty.is_empty()) {
            return;
        }
        // Rotational position ordering over the queued commands and the dirty entries.
        let mut best = (0, false);
        let mut best_t = f64::INFINITY;
        for (k, &(io, is_read)) in h.queue.iter().take(RPO_DEPTH).enumerate() {
            let x = &ios[io as usize];
            let p = if is_read { h.read_position_ns(now, x.offset) } else { h.write_position_ns(now, x.offset, x.len) };
            if p < best_t {
                best_t = p;
                best = (k, false);
            }
        }
        for (k, &(offset, len)) in h.dirty.iter().take(RPO_DEPTH).enumerate() {
            let p = h.write_position_ns(now, offset, len);
            if p < best_t {
                best_t = p;
                best = (k, true);
            }
        }
        let (io, is_read, offset, len) = if best.1 {
            let (offset, len) = h.dirty.remove(best.0).expect("a dirty entry");
            h.destage = (offset, len);
            (DESTAGE, false, offset, len)
        } else {
            let (io, is_read) = h.queue.remove(best.0);
            (io, is_read, ios[io as usize].offset, ios[io as usize].len)
        };
        let (media, head) = h.media_ns(offset, len, is_read);
        let service = best_t + media;
        // Writes still in the cache wait while the head serves this command elsewhere, and
        // for the seek back: the backlog is neither lost nor allowed to block the command.
        h.wb.pause(now, service + best_t);
        h.busy = true;
        h.current = Some((io, is_read));
        h.busy_ns += service;
        h.head = head;
        self.sched.at(ceil_time(now + service), Ev::HddDone { drive: d as u32 });
    }

    pub(super) fn hdd_done(&mut self, d: u32) {
        let now = self.sched.now().nanos_f64();
        let d = d as usize;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        h.busy = false;
        let Some((io, is_read)) = h.current.take() else { return };
        if io == DESTAGE {
            // A cached write is on the media: its room in the cache is free again, and a
            // write stream starts after it, as after any write.
            let (offset, len) = h.destage;
            h.dirty_bytes = (h.dirty_bytes - len).max(0.0);
            let backlog = h.wb.backlog_ns(now);
            h.wb.start(&h.geo, offset + len, now + backlog);
            h.ra.active = false;
            self.hdd_admit(d);
            self.hdd_dispatch(d);
            return;
        }
        let x = &self.ios[io as usize];
        let end = x.offset + x.len;
        if is_read {
            h.ra.start(&h.geo, end, now);
            self.start_transfer(io);
        } else {
            // A new write stream starts here; what the cache still held is written first.
            let backlog = h.wb.backlog_ns(now);
            h.wb.start(&h.geo, end, now + backlog);
            h.ra.active = false;
            self.finish_at_drive(io);
        }
        self.hdd_dispatch(d);
    }
}
