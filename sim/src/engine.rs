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

enum Item<E> {
    Event(E),
    Timer { key: usize, version: u32 },
}

/// `key` is `time << 64 | seq`: one integer comparison orders by time, then FIFO.
struct Entry<E> {
    key: u128,
    item: Item<E>,
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

/// A clock, a queue of future events, and keyed timers that can be moved or cancelled, for
/// things whose due time keeps changing (the completion of a transfer whose rate is
/// recomputed). A moved timer leaves its old entry behind, skipped when it surfaces.
pub struct Scheduler<E> {
    now: u64,
    seq: u64,
    /// A 4-ary heap: shallower than a binary one, so fewer cache misses per pop when
    /// tens of thousands of I/Os are in flight.
    queue: dary_heap::QuaternaryHeap<Entry<E>>,
    processed: u64,
    timer_version: Vec<u32>,
    timers_set: usize,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler {
            now: 0,
            seq: 0,
            queue: dary_heap::QuaternaryHeap::with_capacity(1024),
            processed: 0,
            timer_version: Vec::new(),
            timers_set: 0,
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

    /// Schedules `event` at an absolute time in nanoseconds (never in the past).
    pub fn at(&mut self, time_ns: u64, event: E) {
        self.push(time_ns, Item::Event(event));
    }

    fn push(&mut self, time_ns: u64, item: Item<E>) {
        let time = time_ns.max(self.now);
        self.seq += 1;
        self.queue.push(Entry { key: (u128::from(time) << 64) | u128::from(self.seq), item });
    }

    /// Pops the next event or live timer, whichever is due first, and advances the clock.
    pub fn pop(&mut self) -> Option<Next<E>> {
        loop {
            let Entry { key, item } = self.queue.pop()?;
            let time = (key >> 64) as u64;
            match item {
                Item::Event(e) => {
                    self.now = time;
                    self.processed += 1;
                    return Some(Next::Event(e));
                }
                Item::Timer { key, version } => {
                    if self.timer_version.get(key) != Some(&version) {
                        continue; // moved or cancelled since
                    }
                    self.timer_version[key] = version.wrapping_add(1) & !(1 << 31);
                    self.timers_set -= 1;
                    self.now = time;
                    self.processed += 1;
                    return Some(Next::Timer(key));
                }
            }
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

    /// Sets (or moves) timer `key` to fire at `time_ns` (never in the past).
    pub fn set_timer(&mut self, key: usize, time_ns: u64) {
        if key >= self.timer_version.len() {
            self.timer_version.resize(key + 1, 0);
        }
        // Versions of live timers have the top bit set; firing or cancelling clears it.
        let v = self.timer_version[key];
        if v & (1 << 31) == 0 {
            self.timers_set += 1;
        }
        let version = (v.wrapping_add(1) & !(1 << 31)) | (1 << 31);
        self.timer_version[key] = version;
        self.push(time_ns, Item::Timer { key, version });
    }

    /// Cancels timer `key` if it is set.
    pub fn cancel_timer(&mut self, key: usize) {
        if let Some(v) = self.timer_version.get_mut(key)
            && *v & (1 << 31) != 0
        {
            *v = v.wrapping_add(1) & !(1 << 31);
            self.timers_set -= 1;
        }
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Queued entries, including superseded timer entries not yet skipped.
    pub fn pending(&self) -> usize {
        self.queue.len()
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
