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

/// Most FIFO lanes a scheduler keeps; events on further lanes go to the heap.
const MAX_LANES: usize = 16;

/// Most timers [`Scheduler`] keeps as a list; one more makes them a heap.
const LIST_MAX: usize = 16;
/// Fewest timers [`Scheduler`] keeps as a heap; one fewer makes them a list again (the
/// gap keeps a count that hovers at a bound from rebuilding the heap at every step).
const HEAP_MIN: usize = 8;

/// A fixed delay registered with [`Scheduler::lane`]: events pushed on it run that long after
/// they are pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane(u32);

/// Events scheduled with one fixed delay, in scheduling order. The clock never goes back and
/// `seq` only grows, so their keys are already sorted: a FIFO is a priority queue for them.
struct LaneQ<E> {
    delay: u64,
    q: std::collections::VecDeque<Entry<E>>,
}

/// A clock, a queue of future events, and keyed timers whose due time can be moved in
/// place (a list with its earliest noted, or an indexed binary heap once there are many),
/// for things whose due time keeps changing, such as the completion of a transfer whose rate
/// is recomputed: moving a timer leaves no stale entry behind. Events and timers share one
/// `(time, seq)` order.
///
/// Events after a delay that recurs (a hop or a command latency) can go to a per-delay FIFO
/// lane instead of the heap ([`Scheduler::lane`], [`Scheduler::push`]): a push and a pop
/// cost O(1), and popping compares the few lane heads with the heap's top. Every entry keeps its
/// `(time, seq)` key, so the order of events is exactly the one a single heap gives.
pub struct Scheduler<E> {
    now: u64,
    seq: u64,
    /// A 4-ary heap: shallower than a binary one, so fewer cache misses per pop when
    /// tens of thousands of I/Os are in flight.
    queue: dary_heap::QuaternaryHeap<Entry<E>>,
    /// FIFO lanes (at most MAX_LANES; the delays of further lanes are in `heap_lanes`).
    lanes: Vec<LaneQ<E>>,
    /// Key of each FIFO lane's first entry, `u128::MAX` when it is empty.
    lane_head: Vec<u128>,
    /// Bit i set: FIFO lane i holds events (so `pop` looks at busy lanes only).
    busy_lanes: u32,
    /// Delays of the lanes past MAX_LANES, whose events go to the heap.
    heap_lanes: Vec<u64>,
    processed: u64,
    /// Set timers, (key = time << 64 | seq, timer id): a binary heap (min at index 0) when
    /// `heaped`, else in no order, with the earliest at `top`. A run's timers are mostly a
    /// few (one per shared-bottleneck group, one per moving class outside them); at that
    /// size a scan of the list after the earliest moves costs less than sifting a heap
    /// (a fifth of the 1,024-HDD QD 1 run's instructions went to the heap's two sifts per
    /// I/O). Past [`LIST_MAX`] timers the list becomes a heap, below [`HEAP_MIN`] a list
    /// again (a heap is a list whose earliest is at 0).
    timers: Vec<(u128, usize)>,
    heaped: bool,
    /// Index of the earliest timer in `timers` (0 when it is empty or heaped).
    top: usize,
    /// Position of each timer id in `timers`, or usize::MAX when not set.
    timer_pos: Vec<usize>,
    /// The timer `pop` just returned, still at `top` (usize::MAX: none). It is removed
    /// lazily: a handler that sets it again (the next transfer of a class) moves it in place,
    /// one sift or scan instead of a removal and an insertion. Every key set since is later
    /// than its key, so it stays the earliest until then.
    fired: usize,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Scheduler {
            now: 0,
            seq: 0,
            queue: dary_heap::QuaternaryHeap::with_capacity(1024),
            lanes: Vec::new(),
            lane_head: Vec::new(),
            busy_lanes: 0,
            heap_lanes: Vec::new(),
            processed: 0,
            timers: Vec::new(),
            heaped: false,
            top: 0,
            timer_pos: Vec::new(),
            fired: usize::MAX,
        }
    }
}

impl<E> Scheduler<E> {
    pub fn now(&self) -> SimTime {
        SimTime::from_nanos(self.now)
    }

    /// Schedules `event` after `delay` from now.
    pub fn after(&mut self, delay: SimDuration, event: E) {
        self.at(self.now() + delay, event);
    }

    fn next_key(&mut self, time_ns: u64) -> u128 {
        let time = time_ns.max(self.now);
        self.seq += 1;
        (u128::from(time) << 64) | u128::from(self.seq)
    }

    /// Schedules `event` at an absolute time (never in the past: an earlier time means now).
    pub fn at(&mut self, time: SimTime, event: E) {
        let key = self.next_key(time.nanos());
        self.queue.push(Entry { key, event });
    }

    /// The lane of a fixed delay (a hop or a command latency that recurs): register it once,
    /// then [`Scheduler::push`] events on it.
    pub fn lane(&mut self, delay: SimDuration) -> Lane {
        let delay_ns = delay.nanos();
        if let Some(i) = self.lanes.iter().position(|l| l.delay == delay_ns) {
            return Lane(i as u32);
        }
        if let Some(i) = self.heap_lanes.iter().position(|&d| d == delay_ns) {
            return Lane((MAX_LANES + i) as u32);
        }
        if self.lanes.len() < MAX_LANES {
            self.lanes.push(LaneQ { delay: delay_ns, q: std::collections::VecDeque::with_capacity(64) });
            self.lane_head.push(u128::MAX);
            Lane(self.lanes.len() as u32 - 1)
        } else {
            self.heap_lanes.push(delay_ns);
            Lane((MAX_LANES + self.heap_lanes.len() - 1) as u32)
        }
    }

    /// Schedules `event` after the lane's delay. Same order as
    /// [`Scheduler::at`]`(now + delay)`, only cheaper.
    #[inline(always)]
    pub fn push(&mut self, lane: Lane, event: E) {
        let i = lane.0 as usize;
        let Some(l) = self.lanes.get_mut(i) else {
            self.push_heap_lane(i, event);
            return;
        };
        self.seq += 1;
        // Same delay, later clock or same clock and later seq: the lane stays sorted.
        let key = (u128::from(self.now.saturating_add(l.delay)) << 64) | u128::from(self.seq);
        if l.q.is_empty() {
            self.lane_head[i] = key;
            self.busy_lanes |= 1 << i;
        }
        l.q.push_back(Entry { key, event });
    }

    #[cold]
    #[inline(never)]
    fn push_heap_lane(&mut self, i: usize, event: E) {
        let delay = self.heap_lanes[i - MAX_LANES];
        self.after(SimDuration::from_nanos(delay), event);
    }

    /// Schedules `event` after `delay` on that delay's lane ([`Scheduler::lane`] then
    /// [`Scheduler::push`]).
    pub fn after_fixed(&mut self, delay: SimDuration, event: E) {
        let lane = self.lane(delay);
        self.push(lane, event);
    }

    /// Pops the next event or timer, whichever is due first, and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<Next<E>> {
        if self.fired != usize::MAX {
            self.fired = usize::MAX;
            self.remove_timer_at(self.top);
        }
        // Keys are unique (one seq counter for events and timers), so "earliest" is exact.
        let mut best = self.queue.peek().map_or(u128::MAX, |e| e.key);
        let mut lane = usize::MAX;
        let mut busy = self.busy_lanes;
        while busy != 0 {
            let i = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            let h = self.lane_head[i];
            if h < best {
                best = h;
                lane = i;
            }
        }
        if let Some(&(t, id)) = self.timers.get(self.top)
            && t < best
        {
            self.processed += 1;
            self.fired = id;
            self.now = (t >> 64) as u64;
            return Some(Next::Timer(id));
        }
        let Entry { key, event } = if lane != usize::MAX {
            let q = &mut self.lanes[lane].q;
            let e = q.pop_front().expect("a lane with a head key has an entry");
            match q.front() {
                Some(next) => self.lane_head[lane] = next.key,
                None => {
                    self.lane_head[lane] = u128::MAX;
                    self.busy_lanes &= !(1 << lane);
                }
            }
            e
        } else {
            self.queue.pop()?
        };
        self.processed += 1;
        self.now = (key >> 64) as u64;
        Some(Next::Event(event))
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

    /// Sets (or moves) timer `id` to fire at `time` (never in the past).
    pub fn set_timer(&mut self, id: usize, time: SimTime) {
        let key = self.next_key(time.nanos());
        if id == self.fired {
            // The earliest, and every other key is later than its old one: only down.
            self.fired = usize::MAX;
            self.timers[self.top].0 = key;
            if self.heaped {
                self.sift_down(0);
            } else {
                self.rescan();
            }
            return;
        }
        if id >= self.timer_pos.len() {
            self.timer_pos.resize(id + 1, usize::MAX);
        }
        match self.timer_pos[id] {
            usize::MAX => {
                self.timers.push((key, id));
                let i = self.timers.len() - 1;
                self.timer_pos[id] = i;
                if self.heaped {
                    self.sift_up(i);
                } else if i >= LIST_MAX {
                    self.heapify();
                } else if i == 0 || key < self.timers[self.top].0 {
                    self.top = i;
                }
            }
            i => {
                // Moved later (a transfer slowed down), it can only go down; earlier, only up.
                let later = key > self.timers[i].0;
                self.timers[i].0 = key;
                if self.heaped {
                    if later {
                        self.sift_down(i);
                    } else {
                        self.sift_up(i);
                    }
                } else if i == self.top {
                    if later {
                        self.rescan();
                    }
                } else if key < self.timers[self.top].0 {
                    self.top = i;
                }
            }
        }
    }

    /// Cancels timer `id` if it is set.
    pub fn cancel_timer(&mut self, id: usize) {
        if id == self.fired {
            self.fired = usize::MAX;
        }
        if let Some(&i) = self.timer_pos.get(id)
            && i != usize::MAX
        {
            self.remove_timer_at(i);
        }
    }

    fn remove_timer_at(&mut self, i: usize) {
        let id = self.timers[i].1;
        self.timers.swap_remove(i);
        self.timer_pos[id] = usize::MAX;
        let n = self.timers.len();
        if i < n {
            self.timer_pos[self.timers[i].1] = i;
        }
        if self.heaped {
            if i < n {
                let i = self.sift_up(i);
                self.sift_down(i);
            }
            // The earliest is at 0 either way.
            self.heaped = n >= HEAP_MIN;
        } else if i == self.top {
            self.rescan();
        } else if self.top == n {
            // The earliest was the last, now moved into the gap.
            self.top = i;
        }
    }

    /// Finds the earliest of the listed timers (0 with none).
    fn rescan(&mut self) {
        let mut top = 0;
        for (i, t) in self.timers.iter().enumerate().skip(1) {
            if t.0 < self.timers[top].0 {
                top = i;
            }
        }
        self.top = top;
    }

    /// Puts the listed timers in heap order (the earliest stays the earliest: a timer that
    /// just fired is at the root after).
    #[cold]
    fn heapify(&mut self) {
        for i in (0..self.timers.len() / 2).rev() {
            self.sift_down(i);
        }
        self.heaped = true;
        self.top = 0;
    }

    fn sift_up(&mut self, mut i: usize) -> usize {
        let item = self.timers[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if item.0 < self.timers[p].0 {
                self.timers[i] = self.timers[p];
                self.timer_pos[self.timers[i].1] = i;
                i = p;
            } else {
                break;
            }
        }
        self.timers[i] = item;
        self.timer_pos[item.1] = i;
        i
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.timers.len();
        let item = self.timers[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.timers[r].0 < self.timers[l].0 { r } else { l };
            if self.timers[c].0 < item.0 {
                self.timers[i] = self.timers[c];
                self.timer_pos[self.timers[i].1] = i;
                i = c;
            } else {
                break;
            }
        }
        self.timers[i] = item;
        self.timer_pos[item.1] = i;
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Queued events and set timers.
    pub fn pending(&self) -> usize {
        let fired = usize::from(self.fired != usize::MAX);
        self.queue.len() + self.lanes.iter().map(|l| l.q.len()).sum::<usize>() + self.timers.len() - fired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_move_cancel_and_interleave_with_events() {
        let mut s: Scheduler<char> = Scheduler::default();
        s.set_timer(3, SimTime::from_nanos(30));
        s.set_timer(1, SimTime::from_nanos(10));
        s.set_timer(2, SimTime::from_nanos(20));
        s.at(SimTime::from_nanos(15), 'e');
        s.set_timer(1, SimTime::from_nanos(25)); // moved later
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
            s.set_timer(k, SimTime::from_nanos(((k * 7919) % 1000) as u64));
        }
        for k in (0..n).step_by(3) {
            s.set_timer(k, SimTime::from_nanos(2000 + k as u64));
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
        s.at(SimTime::from_nanos(10), 'a');
        s.at(SimTime::from_nanos(5), 'b');
        s.at(SimTime::from_nanos(10), 'c');
        s.at(SimTime::from_nanos(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| s.pop_event()).collect();
        assert_eq!(order, ['b', 'd', 'a', 'c']);
        assert_eq!(s.now().nanos(), 10);
    }

    #[test]
    fn never_schedules_in_the_past() {
        let mut s = Scheduler::default();
        s.at(SimTime::from_nanos(100), 1);
        s.pop_event();
        s.at(SimTime::from_nanos(50), 2);
        assert_eq!(s.pop_event(), Some(2));
        assert_eq!(s.now().nanos(), 100);
    }
}

#[cfg(test)]
mod lane_tests {
    use super::*;

    /// Lanes, heap and timers together pop in exactly the order one heap gives.
    #[test]
    fn lanes_pop_in_the_order_of_one_heap() {
        let (processed, _) = mix(10);
        assert!(processed > 10_000, "the mix keeps the queue busy");
    }

    /// With more timer ids the timers go from a list to a heap and back, many times, and
    /// still pop in the order of one heap.
    #[test]
    fn timers_pop_in_order_across_list_and_heap() {
        let (processed, switches) = mix(40);
        assert!(processed > 10_000, "the mix keeps the queue busy");
        assert!(switches > 20, "the timers switched between list and heap {switches} times");
    }

    /// A random mix of events, lane pushes and timer sets, moves and cancels (ids below
    /// `timer_ids`) against [`Reference`]: the events processed, and how many times the
    /// timers switched between a list and a heap.
    fn mix(timer_ids: u64) -> (u64, u32) {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut a: Scheduler<u32> = Scheduler::default();
        let mut b = Reference::default();
        // More distinct delays than lanes, so some fall back to the heap.
        let fixed: Vec<u64> = (0..20).map(|k| k * 7).collect();
        let mut id = 0u32;
        let (mut switches, mut heaped) = (0, false);
        for _ in 0..50 {
            id += 1;
            let t = rnd(100);
            a.at(SimTime::from_nanos(t), id);
            b.at(t, id);
        }
        for step in 0..20_000 {
            let (na, nb) = (a.pop(), b.pop());
            assert_eq!(na, nb);
            assert_eq!(a.now(), b.now());
            // Often re-set the timer that just fired, as a class with more transfers does.
            if let Some(Next::Timer(k)) = na
                && rnd(2) == 0
            {
                let t = a.now().nanos() + rnd(200);
                a.set_timer(k, SimTime::from_nanos(t));
                b.set_timer(k, t);
            }
            // Grow to about a hundred pending, then hover there.
            for _ in 0..rnd(if a.pending() < 100 { 4 } else { 2 }) {
                id += 1;
                match rnd(6) {
                    4 => {
                        let k = rnd(timer_ids) as usize;
                        a.cancel_timer(k);
                        b.cancel_timer(k);
                    }
                    5 => {
                        // In the past: runs now, after what is already due now.
                        let t = a.now().nanos().saturating_sub(rnd(50));
                        a.at(SimTime::from_nanos(t), id);
                        b.at(t, id);
                    }
                    0 => {
                        let t = a.now().nanos() + rnd(300);
                        a.at(SimTime::from_nanos(t), id);
                        b.at(t, id);
                    }
                    // With many ids, spells of cancels alone take the count down and up.
                    1 if timer_ids > 10 && (step / 300) % 2 == 1 => {
                        let k = rnd(timer_ids) as usize;
                        a.cancel_timer(k);
                        b.cancel_timer(k);
                    }
                    1 => {
                        let k = rnd(timer_ids) as usize;
                        let t = a.now().nanos() + rnd(200);
                        a.set_timer(k, SimTime::from_nanos(t));
                        b.set_timer(k, t);
                    }
                    _ => {
                        let d = fixed[rnd(fixed.len() as u64) as usize];
                        a.after_fixed(SimDuration::from_nanos(d), id);
                        b.at(b.now().nanos() + d, id);
                    }
                }
            }
            assert_eq!(a.pending(), b.pending());
            switches += u32::from(a.heaped != heaped);
            heaped = a.heaped;
            if a.pending() == 0 {
                break;
            }
        }
        (a.processed(), switches)
    }

    /// The plainest scheduler with the same contract: a sorted list of (key, what).
    #[derive(Default)]
    struct Reference {
        now: u64,
        seq: u64,
        q: Vec<(u128, Next<u32>)>,
    }

    impl Reference {
        fn now(&self) -> SimTime {
            SimTime::from_nanos(self.now)
        }
        fn key(&mut self, t: u64) -> u128 {
            self.seq += 1;
            (u128::from(t.max(self.now)) << 64) | u128::from(self.seq)
        }
        fn at(&mut self, t: u64, e: u32) {
            let k = self.key(t);
            self.q.push((k, Next::Event(e)));
        }
        fn set_timer(&mut self, id: usize, t: u64) {
            self.cancel_timer(id);
            let k = self.key(t);
            self.q.push((k, Next::Timer(id)));
        }
        fn cancel_timer(&mut self, id: usize) {
            self.q.retain(|&(_, n)| n != Next::Timer(id));
        }
        fn pop(&mut self) -> Option<Next<u32>> {
            let i = (0..self.q.len()).min_by_key(|&i| self.q[i].0)?;
            let (k, n) = self.q.swap_remove(i);
            self.now = (k >> 64) as u64;
            Some(n)
        }
        fn pending(&self) -> usize {
            self.q.len()
        }
    }
}
