//! The discrete-event engine: a clock and an event queue, and nothing about storage.
//!
//! Events are ordered by `(time, seq)`: integer nanoseconds, then the order they were
//! scheduled, so events at the same instant run first-in first-out and a run is
//! deterministic. The payload type is the caller's.

use iopath_model::units::{SimDuration, SimTime};
use std::cmp::Ordering;

/// What [`Scheduler::pop`] returns: an event, or a keyed timer that fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<E> {
    Event(E),
    Timer(usize),
}

/// `key` is `time << 64 | seq`: one integer comparison orders by time, then FIFO.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so the max-heap pops the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// A clock, a queue of future events, and keyed timers whose due time can be moved in
/// place (an indexed binary heap), for things whose due time keeps changing, such as the
/// completion of a transfer whose rate is recomputed: moving a timer leaves no stale entry
/// behind. Events and timers share one `(time, seq)` order.
pub struct Scheduler<E> {
    now: u64,
    seq: u64,
    /// A 4-ary heap: shallower than a binary one, so fewer cache misses per pop when
    /// tens of thousands of I/Os are in flight.
    queue: dary_heap::QuaternaryHeap<Entry<E>>,
    processed: u64,
    /// Timer heap of (key = time << 64 | seq, timer id), min at index 0.
    timers: Vec<(u128, usize)>,
    /// Position of each timer id in `timers`, or usize::MAX when not set.
    timer_pos: Vec<usize>,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler {
            now: 0,
            seq: 0,
            queue: dary_heap::QuaternaryHeap::with_capacity(1024),
            processed: 0,
            timers: Vec::new(),
            timer_pos: Vec::new(),
        }
    }
}

impl<E> Scheduler<E> {
    pub fn now(&self) -> SimTime {
        SimTime::from_nanos(self.now)
    }

    /// Schedules `event` after `delay` from now.
    pub fn after(&mut self, delay: SimDuration, event: E) {
        self.at(self.now().nanos().saturating_add(delay.nanos()), event);
    }

    fn next_key(&mut self, time_ns: u64) -> u128 {
        let time = time_ns.max(self.now);
        self.seq += 1;
        (u128::from(time) << 64) | u128::from(self.seq)
    }

    /// Schedules `event` at an absolute time in nanoseconds (never in the past).
    pub fn at(&mut self, time_ns: u64, event: E) {
        let key = self.next_key(time_ns);
        self.queue.push(Entry { key, event });
    }

    /// Pops the next event or timer, whichever is due first, and advances the clock to it.
    pub fn pop(&mut self) -> Option<Next<E>> {
        let t = self.timers.first().map(|&(k, _)| k);
        let e = self.queue.peek().map(|e| e.key);
        let take_timer = match (t, e) {
            (None, None) => return None,
            (Some(t), Some(e)) => t < e,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        self.processed += 1;
        if take_timer {
            let (key, id) = self.timers[0];
            self.remove_timer_at(0);
            self.now = (key >> 64) as u64;
            Some(Next::Timer(id))
        } else {
            let Entry { key, event } = self.queue.pop()?;
            self.now = (key >> 64) as u64;
            Some(Next::Event(event))
        }
    }

    /// Pops the next event, skipping timers (for callers that use none).
    pub fn pop_event(&mut self) -> Option<E> {
        loop {
            match self.pop()? {
                Next::Event(e) => return Some(e),
                Next::Timer(_) => continue,
            }
        }
    }

    /// Sets (or moves) timer `id` to fire at `time_ns` (never in the past).
    pub fn set_timer(&mut self, id: usize, time_ns: u64) {
        let key = self.next_key(time_ns);
        if id >= self.timer_pos.len() {
            self.timer_pos.resize(id + 1, usize::MAX);
        }
        match self.timer_pos[id] {
            usize::MAX => {
                self.timers.push((key, id));
                let i = self.timers.len() - 1;
                self.timer_pos[id] = i;
                self.sift_up(i);
            }
            i => {
                self.timers[i].0 = key;
                let i = self.sift_up(i);
                self.sift_down(i);
            }
        }
    }

    /// Cancels timer `id` if it is set.
    pub fn cancel_timer(&mut self, id: usize) {
        if let Some(&i) = self.timer_pos.get(id)
            && i != usize::MAX
        {
            self.remove_timer_at(i);
        }
    }

    fn remove_timer_at(&mut self, i: usize) {
        let id = self.timers[i].1;
        let last = self.timers.len() - 1;
        self.timers.swap(i, last);
        self.timers.pop();
        self.timer_pos[id] = usize::MAX;
        if i < self.timers.len() {
            self.timer_pos[self.timers[i].1] = i;
            let i = self.sift_up(i);
            self.sift_down(i);
        }
    }

    fn sift_up(&mut self, mut i: usize) -> usize {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.timers[i].0 < self.timers[p].0 {
                self.swap_timers(i, p);
                i = p;
            } else {
                break;
            }
        }
        i
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.timers.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.timers[l].0 < self.timers[m].0 {
                m = l;
            }
            if r < n && self.timers[r].0 < self.timers[m].0 {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap_timers(i, m);
            i = m;
        }
    }

    fn swap_timers(&mut self, a: usize, b: usize) {
        self.timers.swap(a, b);
        self.timer_pos[self.timers[a].1] = a;
        self.timer_pos[self.timers[b].1] = b;
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Queued events and set timers.
    pub fn pending(&self) -> usize {
        self.queue.len() + self.timers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_move_cancel_and_interleave_with_events() {
        let mut s: Scheduler<char> = Scheduler::default();
        s.set_timer(3, 30);
        s.set_timer(1, 10);
        s.set_timer(2, 20);
        s.at(15, 'e');
        s.set_timer(1, 25); // moved later
        s.cancel_timer(2);
        let mut order = Vec::new();
        while let Some(n) = s.pop() {
            order.push((s.now().nanos(), n));
        }
        assert_eq!(order, [(15, Next::Event('e')), (25, Next::Timer(1)), (30, Next::Timer(3))]);
    }

    #[test]
    fn timer_heap_orders_many_keys() {
        let mut s: Scheduler<()> = Scheduler::default();
        let n = 500usize;
        for k in 0..n {
            s.set_timer(k, ((k * 7919) % 1000) as u64);
        }
        for k in (0..n).step_by(3) {
            s.set_timer(k, 2000 + k as u64);
        }
        let mut last = 0;
        let mut count = 0;
        while let Some(Next::Timer(_)) = s.pop() {
            assert!(s.now().nanos() >= last);
            last = s.now().nanos();
            count += 1;
        }
        assert_eq!(count, n);
    }

    #[test]
    fn same_time_events_pop_in_fifo_order() {
        let mut s = Scheduler::default();
        s.at(10, 'a');
        s.at(5, 'b');
        s.at(10, 'c');
        s.at(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| s.pop_event()).collect();
        assert_eq!(order, ['b', 'd', 'a', 'c']);
        assert_eq!(s.now().nanos(), 10);
    }

    #[test]
    fn never_schedules_in_the_past() {
        let mut s = Scheduler::default();
        s.at(100, 1);
        s.pop_event();
        s.at(50, 2);
        assert_eq!(s.pop_event(), Some(2));
        assert_eq!(s.now().nanos(), 100);
    }
}
