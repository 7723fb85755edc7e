//! The discrete-event engine: a clock and an event queue, and nothing about storage.
//!
//! Events are ordered by `(time, seq)`: integer nanoseconds, then the order they were
//! scheduled, so events at the same instant run first-in first-out and a run is
//! deterministic. The payload type is the caller's.

use iopath_model::units::{SimDuration, SimTime};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
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
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

/// A clock and a queue of future events.
pub struct Scheduler<E> {
    now: u64,
    seq: u64,
    queue: BinaryHeap<Entry<E>>,
    processed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler { now: 0, seq: 0, queue: BinaryHeap::with_capacity(1024), processed: 0 }
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
        let time = time_ns.max(self.now);
        self.seq += 1;
        self.queue.push(Entry { time, seq: self.seq, event });
    }

    /// Pops the next event and advances the clock to it.
    pub fn pop(&mut self) -> Option<E> {
        let e = self.queue.pop()?;
        self.now = e.time;
        self.processed += 1;
        Some(e.event)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<u64> {
        self.queue.peek().map(|e| e.time)
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_fifo_order() {
        let mut s = Scheduler::default();
        s.at(10, 'a');
        s.at(5, 'b');
        s.at(10, 'c');
        s.at(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(order, ['b', 'd', 'a', 'c']);
        assert_eq!(s.now().nanos(), 10);
    }

    #[test]
    fn never_schedules_in_the_past() {
        let mut s = Scheduler::default();
        s.at(100, 1);
        s.pop();
        s.at(50, 2);
        assert_eq!(s.peek_time(), Some(100));
    }
}
