//! HDD command dispatch: stream hits, rotational position ordering, the actuator.

use super::*;

impl Sim {
    pub(super) fn hdd_dispatch(&mut self, d: usize) {
        let now = self.sched.now().nanos() as f64;
        let half = self.drives[d].fabric_half_ns;
        let ios = &self.ios;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        // Queued commands that a stream now serves need no positioning.
        let mut k = 0;
        while k < h.queue.len() {
            let (io, is_read) = h.queue[k];
            let x = &ios[io as usize];
            if is_read && h.ra.hits(&h.geo, x.offset, now) {
                h.queue.remove(k);
                let ready = h.ra.request(&h.geo, x.offset, x.len, now);
                h.wb.pause(now, x.len / h.geo.rate_at(x.offset) * 1e9);
                h.busy_ns += x.len / h.geo.rate_at(x.offset) * 1e9;
                self.sched.at(SimTime::from_nanos(ceil_ns(ready)), Ev::DataReady { io });
            } else if !is_read && h.wb.hits(&h.geo, x.offset) {
                h.queue.remove(k);
                let ack = h.wb.accept(&h.geo, x.offset, x.len, now);
                h.busy_ns += x.len / (h.geo.rate_at(x.offset) * h.geo.write_eff) * 1e9;
                self.sched.at(SimTime::from_nanos(ceil_ns(ack) + half), Ev::DriveDone { io });
            } else {
                k += 1;
            }
        }
        if h.busy || h.queue.is_empty() {
            return;
        }
        // Rotational position ordering over the queued commands (NCQ: at most 32 looked at).
        let mut best = 0;
        let mut best_t = f64::INFINITY;
        for (k, &(io, _)) in h.queue.iter().take(32).enumerate() {
            let p = h.geo.position_ns(h.head, now, ios[io as usize].offset);
            if p < best_t {
                best_t = p;
                best = k;
            }
        }
        let (io, is_read) = h.queue.remove(best);
        let x = &ios[io as usize];
        let rate = h.geo.rate_at(x.offset) * if is_read { 1.0 } else { h.geo.write_eff };
        let service = best_t + x.len / rate * 1e9;
        // Writes still in the cache wait while the head serves this command elsewhere, and
        // for the seek back: the backlog is neither lost nor allowed to block the command.
        h.wb.pause(now, service + best_t);
        h.busy = true;
        h.current = Some((io, is_read));
        h.busy_ns += service;
        h.head = h.geo.stroke(x.offset + x.len);
        self.sched.at(SimTime::from_nanos(ceil_ns(now + service)), Ev::HddDone { drive: d as u32 });
    }

    pub(super) fn hdd_done(&mut self, d: u32) {
        let now = self.sched.now().nanos() as f64;
        let d = d as usize;
        let Some(h) = self.drives[d].hdd.as_mut() else { return };
        h.busy = false;
        let Some((io, is_read)) = h.current.take() else { return };
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
