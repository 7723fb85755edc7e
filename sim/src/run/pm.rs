//! Port multipliers: who may use the shared upstream link, and what a switch costs.
//!
//! **Command-based switching (CBS)** follows Linux libata (`sata_pmp_qc_defer_cmd_switch`,
//! drivers/ata/libata-pmp.c): the link belongs to the drive that has commands outstanding,
//! and that drive keeps its NCQ queue. A command for another drive is deferred; the first
//! such drive *claims* the link (`excl_link`), after which no drive but the claimant may
//! issue, so the active drive drains and the claimant takes over (paying
//! `cbs_handover_us` once). Every command issued this way clears the claim when it
//! completes if its own drive holds it (`ATA_QCFLAG_CLEAR_EXCL`), so the claimant issues
//! whatever it has queued until its first completion and then yields to the next waiting
//! drive. Deferred commands are retried in arrival order at every completion (the SCSI
//! midlayer reruns its starved queues when a command completes).
//!
//! So a drive alone behind a CBS multiplier keeps its whole queue (QD32 on one HDD is QD32),
//! and several busy drives take turns, one queue-full each: they move about as much as one.
//!
//! **FIS-based switching (FBS)**: every drive may have commands outstanding, and the
//! multiplier pays `switch_cost_us` per command only while FISes of another drive share
//! the upstream, i.e. while another drive of the same multiplier moves data. The class's
//! cost on the upstream is raised by the switch term then and lowered again when it is alone.

use super::*;

/// A class's switch term on its FBS multiplier's upstream.
#[derive(Debug, Clone, Copy)]
pub(super) struct PmSwitch {
    pub(super) pm: u32,
    /// Index of the upstream in the class's `costs`.
    pub(super) ix: usize,
    /// Its cost without switching, and the switch term added while another drive moves data.
    pub(super) base: f64,
    pub(super) extra: f64,
}

/// A port multiplier's state in a run.
pub(super) struct PmSt {
    pub(super) cbs: bool,
    /// CBS: the drive whose commands are outstanding, and how many.
    pub(super) active: Option<u32>,
    pub(super) n_out: u32,
    /// CBS: the drive that claimed the link next (libata's `excl_link`).
    pub(super) excl: Option<u32>,
    /// CBS: the drive the link was last switched to (a handover is paid on a change).
    pub(super) last_active: Option<u32>,
    /// CBS: when the link is ready after the last handover.
    pub(super) ready: SimTime,
    /// CBS: deferred commands, in arrival order.
    pub(super) waiting: VecDeque<u32>,
    /// CBS: what switching the link to another drive costs.
    pub(super) handover: SimDuration,
    /// FBS: the classes (and their drives) whose upstream cost carries a switch term.
    pub(super) fbs_classes: Vec<(u32, u32)>,
}

impl PmSt {
    pub(super) fn new(cbs: bool, handover_us: f64) -> PmSt {
        PmSt {
            cbs,
            active: None,
            n_out: 0,
            excl: None,
            last_active: None,
            ready: SimTime::ZERO,
            waiting: VecDeque::new(),
            // Truncated to the nanosecond, as it always was (not rounded: outputs stay put).
            handover: SimDuration::from_nanos((handover_us * 1e3) as u64),
            fbs_classes: Vec::new(),
        }
    }
}

impl Sim {
    /// A command reaches the controller of a CBS multiplier: issued now, or deferred.
    pub(super) fn cbs_arrive(&mut self, pm: u32, io: u32) {
        if !self.cbs_try_issue(pm, io) {
            self.pms[pm as usize].waiting.push_back(io);
        }
    }

    /// libata's rule: a command may go when nobody else claimed the link and either no
    /// drive has commands outstanding or its own drive is the active one; otherwise the
    /// first deferred drive claims the link.
    fn cbs_try_issue(&mut self, pm: u32, io: u32) -> bool {
        let now = self.sched.now();
        let d = self.ios[io as usize].drive;
        let p = &mut self.pms[pm as usize];
        if p.excl.is_some_and(|x| x != d) {
            return false;
        }
        if p.n_out > 0 && p.active != Some(d) {
            p.excl = Some(d);
            return false;
        }
        p.active = Some(d);
        p.n_out += 1;
        if p.last_active.is_some_and(|h| h != d) {
            p.ready = now + p.handover;
        }
        p.last_active = Some(d);
        let ready = p.ready;
        self.ios[io as usize].pm = Some(pm);
        let lanes = self.drives[d as usize].lanes;
        if ready > now {
            // The link is being switched to this drive: its commands follow the handover.
            let at = ready + self.drives[d as usize].fabric_half;
            self.sched.at(at, Ev::Submitted { io });
        } else {
            self.sched.push(lanes.fabric, Ev::Submitted { io });
        }
        true
    }

    /// A command of a CBS multiplier completes at the controller: its drive's claim (if it
    /// held one) is cleared, and the deferred commands are retried in arrival order.
    pub(super) fn cbs_complete(&mut self, pm: u32, io: u32) {
        let d = self.ios[io as usize].drive;
        let p = &mut self.pms[pm as usize];
        p.n_out -= 1;
        if p.n_out == 0 {
            p.active = None;
        }
        if p.excl == Some(d) {
            p.excl = None;
        }
        let waiting = std::mem::take(&mut self.pms[pm as usize].waiting);
        let mut keep = VecDeque::with_capacity(waiting.len());
        for w in waiting {
            if !self.cbs_try_issue(pm, w) {
                keep.push_back(w);
            }
        }
        self.pms[pm as usize].waiting = keep;
    }

    /// Sets the FBS switch term of every class of `c`'s multiplier after `c` started
    /// (`joining`) or stopped moving data. Returns whether a moving class's cost changed,
    /// other than a joining class's own (its cost is read only when it joins): then the
    /// component needs a full reallocation.
    #[inline(always)]
    pub(super) fn fbs_switching(&mut self, c: usize, joining: bool) -> bool {
        // Without multipliers no class has a switch term; asking the class would read a
        // line of its record that nothing else on this path needs (a cache miss per
        // transfer at a thousand drives). Inline, so that the answer costs no call (a
        // call's register saves were 22 instructions per transfer start and end).
        if self.pms.is_empty() {
            return false;
        }
        self.fbs_switching_with_pms(c, joining)
    }

    #[inline(never)]
    fn fbs_switching_with_pms(&mut self, c: usize, joining: bool) -> bool {
        let Some(&sw) = self.classes[c].pm_switch.as_deref() else { return false };
        let members = &self.pms[sw.pm as usize].fbs_classes;
        let moving = |k: u32| self.alloc.active_pos[k as usize] != u32::MAX;
        let mut changed = false;
        for &(k, d) in members {
            let others = members.iter().any(|&(k2, d2)| d2 != d && moving(k2));
            let want = moving(k) && others;
            let cl = &mut self.classes[k as usize];
            let s = *cl.pm_switch.as_deref().expect("member of an FBS multiplier");
            let v = if want { s.base + s.extra } else { s.base };
            if cl.costs[s.ix].s_per_byte != v {
                cl.costs[s.ix].s_per_byte = v;
                changed |= !(joining && k as usize == c);
                // Its private headroom (vgroup.rs) is under other costs now.
                self.alloc.load_epoch += 1;
            }
        }
        changed
    }
}
