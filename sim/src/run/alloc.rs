//! Fluid allocation: components of classes that share resources, max-min rates,
//! utilization integrated over the measured window.

use super::vgroup::Groups;
use super::*;

impl Sim {
    /// A class starts moving data. If it touches no full shared resource and what stops it
    /// is a resource no other moving class uses (its own media or link, typically), the
    /// max-min allocation of everyone else is unchanged: give it the leftover and stop there.
    /// Otherwise the component needs a full reallocation (returns false).
    pub(super) fn try_join(&mut self, c: usize, k: usize, now: SimTime) -> bool {
        if self.alloc.comps[k].dirty || self.classes[c].costs.is_empty() {
            return false;
        }
        let mut rate = f64::INFINITY;
        for cost in &self.classes[c].costs {
            if cost.s_per_byte > 0.0 {
                rate = rate.min((1.0 - self.alloc.load[cost.resource]).max(0.0) / cost.s_per_byte);
            }
        }
        if !(rate.is_finite() && rate > 0.0) {
            return false;
        }
        // Every resource this rate fills must be the class's alone.
        for cost in &self.classes[c].costs {
            let headroom = (1.0 - self.alloc.load[cost.resource]).max(0.0) / cost.s_per_byte;
            if cost.s_per_byte > 0.0 && headroom <= rate * (1.0 + 1e-9) && self.alloc.res_active[cost.resource] > 1 {
                return false;
            }
        }
        self.admit(c, k, rate, now);
        true
    }

    /// A class joins its component at `rate` without a solve: its load is added to every
    /// resource it crosses and its transfer timer is set. Shared by `try_join` and the
    /// groups' `join_beside_groups`.
    pub(super) fn admit(&mut self, c: usize, k: usize, rate: f64, now: SimTime) {
        self.integrate(k, now);
        // Loads rise: the groups' bounds on theirs are void.
        self.alloc.groups.comp[k].epoch += 1;
        self.alloc.load_epoch += 1;
        for cost in &self.classes[c].costs {
            self.alloc.load[cost.resource] += rate * cost.s_per_byte;
            if !self.alloc.is_loaded[cost.resource] {
                self.alloc.is_loaded[cost.resource] = true;
                self.alloc.comps[k].loaded.push(cost.resource);
            }
        }
        let cl = &mut self.classes[c];
        cl.rate = rate;
        cl.version += 1;
        let rem = cl.fifo.front().map(|h| h.1).unwrap_or(0.0);
        self.sched.set_timer(c, now + transfer_time(rem, rate));
    }

    /// A class stops moving data. If no resource it used is both full and used by another
    /// moving class, nobody else was held back by it: release its load and stop there.
    pub(super) fn try_leave(&mut self, c: usize, k: usize, old_rate: f64, now: SimTime) -> bool {
        if self.alloc.comps[k].dirty || !old_rate.is_finite() {
            return false;
        }
        for cost in &self.classes[c].costs {
            if self.alloc.res_active[cost.resource] > 0 && self.alloc.load[cost.resource] >= 1.0 - 1e-9 {
                return false;
            }
        }
        self.integrate(k, now);
        self.alloc.load_epoch += 1;
        for cost in &self.classes[c].costs {
            self.alloc.load[cost.resource] = (self.alloc.load[cost.resource] - old_rate * cost.s_per_byte).max(0.0);
        }
        true
    }

    pub(super) fn mark_dirty(&mut self, k: usize) {
        if !self.alloc.comps[k].dirty {
            self.alloc.comps[k].dirty = true;
            self.alloc.dirty.push(k as u32);
        }
    }

    /// For each component whose moving classes changed: brings its active classes' head
    /// transfers up to now, recomputes their max-min rates, and reschedules the head
    /// completions whose rate changed.
    pub(super) fn reallocate(&mut self) {
        let now = self.sched.now();
        let dirty = std::mem::take(&mut self.alloc.dirty);
        for &k in &dirty {
            self.reallocate_component(k as usize, now);
        }
        self.alloc.dirty = dirty;
        self.alloc.dirty.clear();
    }

    pub(super) fn reallocate_component(&mut self, k: usize, now: SimTime) {
        self.alloc.comps[k].dirty = false;
        self.alloc.solves += 1;
        if !self.alloc.groups.comp[k].live.is_empty() {
            self.dissolve_groups(k, now);
        }
        self.integrate(k, now);
        let (ws, we) = (self.win.start, self.win.end);
        let comp = &mut self.alloc.comps[k];
        for &c in &comp.active {
            let cl = &mut self.classes[c as usize];
            account(cl, now, ws, we);
            let dt = (now - cl.last).secs_f64();
            if let Some(h) = cl.fifo.front_mut() {
                h.1 = (h.1 - cl.rate * dt).max(0.0);
            }
            cl.last = now;
        }
        let flows: Vec<&[Cost]> = comp.active.iter().map(|&c| self.classes[c as usize].costs.as_slice()).collect();
        comp.maxmin.solve(&flows, &[]);
        drop(flows);
        // Resource loads: only those the previous or this allocation touched can be non-zero.
        self.alloc.load_epoch += 1;
        for &r in &comp.loaded {
            self.alloc.load[r] = 0.0;
            self.alloc.is_loaded[r] = false;
        }
        comp.loaded.clear();
        for (i, &r) in comp.maxmin.res.iter().enumerate() {
            self.alloc.load[r] = comp.maxmin.used[i];
            self.alloc.is_loaded[r] = true;
            comp.loaded.push(r);
        }
        for (i, &c) in comp.active.iter().enumerate() {
            let cl = &mut self.classes[c as usize];
            // A class that crosses no modelled resource moves its data at once.
            let rate = if cl.costs.is_empty() { f64::INFINITY } else { comp.maxmin.rates()[i] };
            if rate == cl.rate && cl.version > 0 {
                continue; // its head's completion is already scheduled at this rate
            }
            cl.rate = rate;
            cl.version += 1;
            let rem = cl.fifo.front().map(|h| h.1).unwrap_or(0.0);
            self.sched.set_timer(c as usize, now + transfer_time(rem, cl.rate));
        }
        self.form_groups(k, now);
    }

    /// Adds a component's resources' busy time since its last allocation, clipped to the
    /// measured window.
    pub(super) fn integrate(&mut self, k: usize, now: SimTime) {
        let comp = &mut self.alloc.comps[k];
        let a = comp.last.max(self.win.start);
        let b = now.min(self.win.end);
        if b > a {
            let dt = (b - a).nanos_f64();
            for &r in &comp.loaded {
                self.alloc.util_ns[r] += self.alloc.load[r].min(1.0) * dt;
            }
        }
        comp.last = now;
    }
}

/// The fluid allocation's state. Classes that share no resource cannot change each other's
/// rates: each connected group (a component, e.g. one HBA's subtree) is reallocated on its own.
pub(super) struct Alloc {
    pub(super) comps: Vec<Comp>,
    pub(super) comp_of: Vec<u32>,
    /// Components whose set of moving classes changed since their last allocation.
    pub(super) dirty: Vec<u32>,
    /// Each class's index in its component's `active` list (u32::MAX when idle).
    pub(super) active_pos: Vec<u32>,
    /// Moving classes outside groups using each resource (a group's members are counted in
    /// its `ResState::n` instead: [`Sim::active_on`]).
    pub(super) res_active: Vec<u32>,
    /// Whether a resource is in its component's `loaded` list.
    pub(super) is_loaded: Vec<bool>,
    /// Current load of each resource (sum of rate x cost) and its integral over the window.
    pub(super) load: Vec<f64>,
    /// Bumped by every change of `load` (and of a class's costs): a member's private
    /// headroom computed at an epoch still holds while the epoch has not moved.
    pub(super) load_epoch: u64,
    pub(super) util_ns: Vec<f64>,
    /// Classes a saturated resource shares equally, served in virtual time (`vgroup.rs`);
    /// where a component has groups, `load` holds the load of the classes outside them.
    pub(super) groups: Groups,
    /// Full solves so far (for tests and benchmarks: what groups save).
    pub(super) solves: u64,
}

impl Alloc {
    /// Nothing moving yet: the components of `classes` over `n_res` resources.
    /// `idle[c]`: class `c` never moves data in this run.
    pub(super) fn new(classes: &[Class], idle: &[bool], n_res: usize) -> Alloc {
        let (comp_of, n_comps) = components(classes, n_res);
        let groups = Groups::new(classes, idle, &comp_of, n_comps, n_res);
        Alloc {
            comps: (0..n_comps).map(|_| Comp { maxmin: MaxMin::new(n_res), ..Default::default() }).collect(),
            comp_of,
            dirty: Vec::new(),
            active_pos: vec![u32::MAX; classes.len()],
            res_active: vec![0; n_res],
            is_loaded: vec![false; n_res],
            load: vec![0.0; n_res],
            load_epoch: 0,
            util_ns: vec![0.0; n_res],
            groups,
            solves: 0,
        }
    }
}

/// A group of classes linked by shared resources.
#[derive(Default)]
pub(super) struct Comp {
    /// Classes moving data.
    pub(super) active: Vec<u32>,
    /// Resources this component's last allocation loaded.
    pub(super) loaded: Vec<usize>,
    /// Time up to which `loaded` is integrated into utilization.
    pub(super) last: SimTime,
    pub(super) dirty: bool,
    pub(super) maxmin: MaxMin,
}

/// Groups classes that share any resource (union-find over resources).
pub(super) fn components(classes: &[Class], n_res: usize) -> (Vec<u32>, usize) {
    let n = classes.len();
    let mut parent: Vec<usize> = (0..n).collect();
    pub(super) fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut first = vec![usize::MAX; n_res];
    for (c, cl) in classes.iter().enumerate() {
        for cost in &cl.costs {
            match first[cost.resource] {
                usize::MAX => first[cost.resource] = c,
                o => {
                    let (a, b) = (find(&mut parent, c), find(&mut parent, o));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut comp_of = vec![0u32; n];
    let mut count = 0;
    for (c, slot) in comp_of.iter_mut().enumerate() {
        let r = find(&mut parent, c);
        if id[r] == u32::MAX {
            id[r] = count;
            count += 1;
        }
        *slot = id[r];
    }
    (comp_of, count as usize)
}

/// Adds what a class moved since it was last accounted, clipped to the measured window.
pub(super) fn account(cl: &mut Class, now: SimTime, win_start: SimTime, win_end: SimTime) {
    let a = cl.acc_t.max(win_start);
    let b = now.min(win_end);
    if b > a && !cl.fifo.is_empty() && cl.rate.is_finite() {
        // rate x ns, then to seconds: this order of the products keeps every report's digits.
        cl.window_bytes += cl.rate * (b - a).nanos_f64() * 1e-9;
    }
    cl.acc_t = now;
}
