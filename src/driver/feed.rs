//! **Feeding**: how an epoch's changes enter the dataflow, and how the worker waits for them.
//!
//! One [`Feeder`] per worker owns the edge input. It does three things, each in one place:
//!
//! * [`Feeder::feed`] hands an epoch's changes over: untimed changes at the input's current time;
//!   in a windowed run, timed insertions in the order they enter their windows (the windowed
//!   layer (`Expiries`) schedules each copy's retraction for when it leaves).
//! * [`Feeder::settle`] advances the input to a frontier (handing over every retraction before
//!   it), flushes ([`Feeder::advance`]), and steps the worker until the probe at the sinks has
//!   passed the frontier ([`wait`]): the epoch is then complete. [`wait`] is the only place the
//!   driver waits for the dataflow. A worker that does not write may advance its input a few
//!   epochs before it waits for the oldest (see the feed loop's run-ahead).
//! * [`Feeder::replay`] feeds a restart's replay (epochs already in the change log) so that the
//!   dataflow computes it as one step.
//!
//! When an algorithm depends on arrival order (`spanner`, `matching`), the feeder also feeds
//! the *arrivals* input ([`GraphInput::arrivals`](crate::dataflow::GraphInput::arrivals)):
//! every untimed insertion once more, with its [`Position`] `(epoch, worker, index)`, at the
//! same time as the edge input. Each source hands a worker a contiguous slice of each epoch, in
//! worker order, so the positions order the copies as the stream did.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use differential_dataflow::input::InputSession;
use timely::dataflow::ProbeHandle;
use timely::worker::Worker;

use super::epochs::Epoch;
use crate::dataflow::Position;
use crate::sources::window::WindowSpec;
use crate::types::{Diff, Edge, Time};

/// Insertions handed over between worker steps when an epoch's list is longer.
const FEED_CHUNK: usize = 1 << 16;

/// The arrivals input: edge copies with their positions in the stream.
pub type ArrivalsInput = InputSession<Time, (Position, Edge), Diff>;

/// The record input: the text of each record of the run's record input.
pub type RecordsInput = InputSession<Time, String, Diff>;

/// The edge input of one worker, with the windowed layer over it.
pub struct Feeder {
    /// The worker's edge input: one `(edge, +1/-1)` per copy inserted or deleted.
    pub edges_in: InputSession<Time, Edge, Diff>,
    window: Option<WindowSpec>,
    expiries: Expiries,
    /// Windowed runs: this worker's timed copies of the replay so far.
    replayed: Vec<(Edge, Time)>,
    /// The arrivals input, when an algorithm depends on arrival order (never windowed).
    arrivals: Option<ArrivalsInput>,
    /// The record input, when an algorithm reads records (fed at the edge input's time).
    records: Option<RecordsInput>,
    /// The probe at the dataflow's outputs: a windowed epoch of many event times waits on it
    /// between chunks (see `Expiries::feed_in_time_order`).
    probe: Option<ProbeHandle<Time>>,
}

impl Feeder {
    /// A feeder over the worker's inputs; `window` makes it schedule each copy's retraction.
    pub fn new(
        edges_in: InputSession<Time, Edge, Diff>,
        window: Option<WindowSpec>,
        arrivals: Option<ArrivalsInput>,
        records: Option<RecordsInput>,
    ) -> Self {
        Feeder { edges_in, window, expiries: Expiries::default(), replayed: Vec::new(), arrivals, records, probe: None }
    }

    /// With the probe at the dataflow's outputs: an epoch of many event times is then fed a few
    /// thousand times at a time, each chunk waiting until the dataflow has caught up with the one
    /// before it, so that the times in flight (and their buffers) stay few.
    pub fn with_probe(mut self, probe: ProbeHandle<Time>) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Hands this worker's share of `epoch` over. `in_replay`: a replay is being fed (its epochs
    /// share one dataflow time, so the input is not advanced to each).
    pub fn feed(&mut self, worker: &mut Worker, epoch: Epoch, in_replay: bool) {
        // Unwindowed epochs are fed at their own number (live epochs may skip numbers);
        // windowed runs feed at event times, their input time is the watermark's frontier.
        if epoch.event.is_none() && !in_replay && self.edges_in.epoch() < &epoch.number {
            self.edges_in.advance_to(epoch.number);
        }
        let until = epoch.until();
        if let Some(arrivals) = &mut self.arrivals {
            // In step with the edge input; positions `(epoch, worker, index)`.
            let now = *self.edges_in.epoch();
            if arrivals.epoch() < &now {
                arrivals.advance_to(now);
            }
            let copies = epoch.inserts.iter().map(|&e| (e, 1)).chain(epoch.changes.iter().copied());
            for (i, (e, d)) in copies.enumerate() {
                arrivals.update(((epoch.number, worker.index() as u64, i as u64), e), d);
            }
        }
        if let Some(records) = &mut self.records {
            let now = *self.edges_in.epoch();
            if records.epoch() < &now {
                records.advance_to(now);
            }
            for (text, d) in epoch.records {
                records.update(text, d);
            }
        }
        self.feed_inserts(worker, epoch.inserts);
        for (e, d) in epoch.changes {
            self.edges_in.update(e, d);
        }
        match (&self.window, epoch.replay) {
            // A windowed replay is fed in one piece when it ends ([`Feeder::replay`]).
            (Some(_), true) => self.replayed.extend(epoch.timed),
            (Some(spec), false) => {
                let probe = self.probe.as_ref();
                self.expiries.feed_in_time_order(worker, &mut self.edges_in, spec, epoch.timed, until, probe)
            }
            // Timed copies only exist in windowed runs.
            (None, _) => debug_assert!(epoch.timed.is_empty()),
        }
    }

    /// Feeds `inserts` (one insertion per copy, in order). A large initial graph is fed in chunks,
    /// flushed and followed by a worker step each, and the list shrinks as it goes: the copies
    /// then move into the operators' state as they are fed instead of piling up in the input's
    /// buffers and channels first, and the list's memory is returned while they do. (The chunks
    /// stay in the input's current time: only the handing over is spread out.)
    fn feed_inserts(&mut self, worker: &mut Worker, mut inserts: Vec<Edge>) {
        if inserts.len() <= FEED_CHUNK {
            for e in inserts {
                self.edges_in.update(e, 1);
            }
            return;
        }
        // Reversed, the next chunk is at the end: fed, then cut off (in place, no copy).
        inserts.reverse();
        while !inserts.is_empty() {
            let rest = inserts.len().saturating_sub(FEED_CHUNK);
            for &e in inserts[rest..].iter().rev() {
                self.edges_in.update(e, 1);
            }
            inserts.truncate(rest);
            inserts.shrink_to_fit();
            self.edges_in.flush();
            worker.step();
        }
    }

    /// Ends a replay whose results before `frontier` are already written (see
    /// `Expiries::replay`). `exact`: the run declared every edge's lifetime.
    pub fn replay(&mut self, frontier: Time, exact: bool) {
        if let Some(spec) = &self.window {
            let copies = std::mem::take(&mut self.replayed);
            self.expiries.replay(&mut self.edges_in, spec, copies, frontier, exact);
        }
    }

    /// Advances the input to `until` and steps `worker` until `probe` has passed it.
    pub fn settle(&mut self, worker: &mut Worker, probe: &ProbeHandle<Time>, until: Time) {
        self.advance(until);
        wait(worker, probe, until);
    }

    /// Advances the input to `until` (handing over every retraction before it) and flushes it,
    /// without waiting for the dataflow: the epochs before `until` are then fed completely.
    pub fn advance(&mut self, until: Time) {
        self.expiries.advance(&mut self.edges_in, until);
        self.edges_in.flush();
        if let Some(arrivals) = &mut self.arrivals {
            if arrivals.epoch() < self.edges_in.epoch() {
                arrivals.advance_to(*self.edges_in.epoch());
            }
            arrivals.flush();
        }
        if let Some(records) = &mut self.records {
            if records.epoch() < self.edges_in.epoch() {
                records.advance_to(*self.edges_in.epoch());
            }
            records.flush();
        }
    }

    /// Closes the input: no more changes.
    pub fn close(self) {
        self.edges_in.close();
        if let Some(arrivals) = self.arrivals {
            arrivals.close();
        }
        if let Some(records) = self.records {
            records.close();
        }
    }
}

/// Steps `worker` until `probe` has passed `until`, parking while there is nothing to do:
/// timely's channels unpark a worker when data or progress arrives (from a local peer or another
/// process).
pub fn wait(worker: &mut Worker, probe: &ProbeHandle<Time>, until: Time) {
    while probe.less_than(&until) {
        super::cluster::step_or_park(worker);
    }
}

/// The input side of a windowed run on one worker: insertions go in at their window's first
/// time; each retraction is handed to differential dataflow as a future change (at the time the
/// edge leaves its window) once the input frontier is about to pass that time. Holding them back
/// until then, rather than handing them over with the insertion, keeps them out of the
/// arrangements while they are far in the future and leaves none to process after the final
/// frontier (the last window's retractions are never needed).
#[derive(Default)]
struct Expiries {
    /// `(time the copy leaves, edge)` in the order they came, which is by leaving time: copies
    /// are fed in the order they enter, and all live as long (a window's span). A pop is then
    /// O(1) and touches one line; in a heap of a million copies it passes about twenty levels,
    /// most of them cache misses.
    queue: LeaveQueue,
    /// The others (a late copy entering at the current time with its own expiry, a copy that
    /// came after a later-leaving one), earliest first.
    due: BinaryHeap<Reverse<(Time, Edge)>>,
}

impl Expiries {
    /// Schedules the retraction of `edge` at `leave`.
    fn push(&mut self, leave: Time, edge: Edge) {
        if self.queue.last_leave().is_none_or(|last| last <= leave) {
            self.queue.push_back(leave, edge);
        } else {
            self.due.push(Reverse((leave, edge)));
        }
    }

    /// Feeds one accepted insertion with event time `time`. A late one (`--late apply`) enters
    /// at the input's current time instead, keeping its expiry; one that has expired already is
    /// not fed at all.
    fn insert(&mut self, edges_in: &mut InputSession<Time, Edge, Diff>, spec: &WindowSpec, edge: Edge, time: Time) {
        let Some((enter, leave)) = spec.lifetime_from(time, *edges_in.epoch()) else { return };
        edges_in.update_at(edge, enter, 1);
        if let Some(leave) = leave {
            self.push(leave, edge);
        }
    }

    /// Feeds a restart's replay of a windowed stream, whose results before `frontier` are already
    /// written: only the collection from `frontier - 1` on has to be right (the change at
    /// `frontier` is taken against it, and the written state accumulated through `frontier - 1`
    /// telescopes to it). So copies that left their window before `frontier - 1` are skipped,
    /// those present at `frontier - 1` enter at the current (earliest) input time, and only later
    /// ones at their own times: the dataflow computes the replay as one step instead of time by
    /// time.
    ///
    /// With `exact` (the run declared `GraphInput::edge_lifetime`), present copies enter at
    /// their own times too, so that each still leaves exactly one span after it entered.
    fn replay(
        &mut self,
        edges_in: &mut InputSession<Time, Edge, Diff>,
        spec: &WindowSpec,
        copies: Vec<(Edge, Time)>,
        frontier: Time,
        exact: bool,
    ) {
        for (edge, time) in copies {
            let (enter, leave) = spec.lifetime(time);
            if enter >= frontier || (exact && leave.is_none_or(|leave| leave >= frontier)) {
                self.insert(edges_in, spec, edge, time);
            } else if leave.is_none_or(|leave| leave >= frontier) {
                edges_in.update(edge, 1);
                if let Some(leave) = leave {
                    self.push(leave, edge);
                }
            }
        }
    }

    /// Feeds an epoch's accepted copies (this worker's share) in the order they enter, advancing
    /// the input towards `until` (the frontier this epoch reaches; no later copy can enter
    /// before it) every few thousand copies and then waiting until `probe` has passed the chunk
    /// before (without a probe: one worker step): an epoch holding many distinct event times
    /// then keeps only a few thousand of them in flight at a time (each costs progress tracking
    /// and per-time buffers until the frontier passes it). Every worker only waits for a time its
    /// own input has passed, so the worker whose input is furthest behind never waits for
    /// another.
    ///
    /// The list is consumed from its end (sorted latest first) and given back as it shrinks: a
    /// window's fill epoch (a million copies, 32 MB) would otherwise stay whole until the
    /// window it builds is complete, the run's peak.
    fn feed_in_time_order(
        &mut self,
        worker: &mut Worker,
        edges_in: &mut InputSession<Time, Edge, Diff>,
        spec: &WindowSpec,
        mut copies: Vec<(Edge, Time)>,
        until: Time,
        probe: Option<&ProbeHandle<Time>>,
    ) {
        const CHUNK: usize = 4096;
        copies.sort_unstable_by_key(|&(_, t)| Reverse(spec.lifetime(t).0));
        while let Some(&(_, first)) = copies.last() {
            let rest = copies.len().saturating_sub(CHUNK);
            for &(edge, time) in copies[rest..].iter().rev() {
                self.insert(edges_in, spec, edge, time);
            }
            copies.truncate(rest);
            if copies.capacity() > 4 * CHUNK && copies.len() < copies.capacity() / 2 {
                copies.shrink_to_fit();
            }
            if let Some(&(_, next)) = copies.last() {
                let next_enter = spec.lifetime(next).0.min(until);
                self.advance(edges_in, next_enter);
                edges_in.flush();
                match probe {
                    // This chunk's first time (the input has passed it: see above).
                    Some(probe) => wait(worker, probe, spec.lifetime(first).0.min(next_enter)),
                    None => {
                        worker.step();
                    }
                }
            }
        }
    }

    /// Advances the input to `frontier`, first handing over every retraction before it.
    fn advance(&mut self, edges_in: &mut InputSession<Time, Edge, Diff>, frontier: Time) {
        // (In any order: every retraction before `frontier` is handed over before the input
        // advances to it.)
        while let Some((leave, edge)) = self.queue.front() {
            if leave >= frontier {
                break;
            }
            self.queue.pop_front();
            edges_in.update_at(edge, leave, -1);
        }
        while let Some(&Reverse((leave, edge))) = self.due.peek() {
            if leave >= frontier {
                break;
            }
            self.due.pop();
            edges_in.update_at(edge, leave, -1);
        }
        if edges_in.epoch() < &frontier {
            edges_in.advance_to(frontier);
        }
    }
}

/// The retractions in leaving order, as [`Expiries`] keeps them: 16 bytes each while every edge
/// has 32-bit ids and the default weight (a window of a million copies: 16 MB instead of 32),
/// the whole edge once one does not.
enum LeaveQueue {
    Narrow(VecDeque<(Time, [u32; 2])>),
    Wide(VecDeque<(Time, Edge)>),
}

impl Default for LeaveQueue {
    fn default() -> Self {
        LeaveQueue::Narrow(VecDeque::new())
    }
}

impl LeaveQueue {
    /// `edge` as a narrow entry, if it is one.
    fn narrow((src, dst, weight): Edge) -> Option<[u32; 2]> {
        (weight == crate::types::weight_bits(None)).then(|| super::packed::narrow_ends(src, dst)).flatten()
    }

    fn push_back(&mut self, leave: Time, edge: Edge) {
        match self {
            LeaveQueue::Narrow(queue) => match Self::narrow(edge) {
                Some(ends) => queue.push_back((leave, ends)),
                None => {
                    let default = crate::types::weight_bits(None);
                    let mut wide: VecDeque<(Time, Edge)> =
                        queue.drain(..).map(|(t, [s, d])| (t, (s as u64, d as u64, default))).collect();
                    wide.push_back((leave, edge));
                    *self = LeaveQueue::Wide(wide);
                }
            },
            LeaveQueue::Wide(queue) => queue.push_back((leave, edge)),
        }
    }

    fn last_leave(&self) -> Option<Time> {
        match self {
            LeaveQueue::Narrow(queue) => queue.back().map(|&(t, _)| t),
            LeaveQueue::Wide(queue) => queue.back().map(|&(t, _)| t),
        }
    }

    fn front(&self) -> Option<(Time, Edge)> {
        match self {
            LeaveQueue::Narrow(queue) => {
                queue.front().map(|&(t, [s, d])| (t, (s as u64, d as u64, crate::types::weight_bits(None))))
            }
            LeaveQueue::Wide(queue) => queue.front().copied(),
        }
    }

    fn pop_front(&mut self) {
        match self {
            LeaveQueue::Narrow(queue) => {
                queue.pop_front();
            }
            LeaveQueue::Wide(queue) => {
                queue.pop_front();
            }
        }
    }
}

#[cfg(test)]
mod leave_queue_tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against a plain queue of whole edges: the same entries in the same order, through a
    /// switch to wide entries (a large id or a weight) at a random point.
    #[test]
    fn the_queue_gives_back_what_a_plain_queue_would() {
        for seed in 0..40u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (mut queue, mut plain) = (LeaveQueue::default(), VecDeque::new());
            let default = crate::types::weight_bits(None);
            let odd_from = rng.gen_range(0..400);
            for i in 0..400u64 {
                let weight = if i >= odd_from && rng.gen_range(0..5) == 0 { 2.5f64.to_bits() } else { default };
                let src =
                    if i >= odd_from && rng.gen_range(0..5) == 0 { u64::MAX - i } else { rng.gen_range(0..1 << 32) };
                let edge = (src, rng.gen_range(0..1000), weight);
                queue.push_back(i / 3, edge);
                plain.push_back((i / 3, edge));
                if rng.gen_range(0..4) == 0 {
                    assert_eq!(queue.front(), plain.front().copied(), "seed {seed} at {i}");
                    queue.pop_front();
                    plain.pop_front();
                }
                assert_eq!(queue.last_leave(), plain.back().map(|&(t, _)| t), "seed {seed} at {i}");
            }
            while let Some(want) = plain.pop_front() {
                assert_eq!(queue.front(), Some(want), "seed {seed}");
                queue.pop_front();
            }
            assert_eq!(queue.front(), None, "seed {seed}");
        }
    }
}
