//! [`to_first_worker`]: a parallelization contract that sends every record to worker 0, moving
//! containers whole instead of record by record.
//!
//! Timely's `Exchange` pact looks at every record: it hashes it, copies it into a buffer for
//! its target worker and ships the buffer when full. When every record goes to the same worker
//! (a result gathered for the writer, a sequential structure kept at one worker), that work is
//! pure overhead: [`to_first_worker`] hands each container at least half full as it is to
//! worker 0's channel (moved within a process, serialized whole between processes) and packs
//! the records of sparser ones into full buffers, as the exchange would. On `wcc-churn` one epoch
//! relabels a giant component, 1.3 M output changes, and the result sink's exchange and copy
//! of them took ~25 ms of that epoch's ~48.
//!
//! Progress stays exact: a container keeps its records and its time stamp, so the counts the
//! channel reports are the records sent.
//!
//! ```
//! use ripples::dataflow::gather::to_first_worker;
//! use timely::container::CapacityContainerBuilder;
//! use timely::dataflow::operators::{Inspect, Operator, ToStream};
//!
//! let seen = timely::execute(timely::Config::process(2), |worker| {
//!     let index = worker.index();
//!     let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
//!     let keep = seen.clone();
//!     worker.dataflow::<u64, _, _>(|scope| {
//!         (0..10u64)
//!             .filter(move |x| x % 2 == index as u64)
//!             .to_stream(scope)
//!             .unary::<CapacityContainerBuilder<Vec<u64>>, _, _, _>(to_first_worker(), "Gather", |_cap, _info| {
//!                 move |input, output| {
//!                     input.for_each(|time, data| output.session(&time).give_container(data));
//!                 }
//!             })
//!             .inspect(move |x: &u64| keep.borrow_mut().push(*x));
//!     });
//!     while worker.step() {}
//!     let mut seen = seen.borrow().clone();
//!     seen.sort();
//!     (index, seen)
//! })
//! .expect("runs")
//! .join()
//! .into_iter()
//! .map(|r| r.expect("joins"))
//! .collect::<Vec<_>>();
//! // Worker 0 has every record, worker 1 none.
//! assert_eq!(seen, vec![(0, (0..10).collect()), (1, vec![])]);
//! ```

use timely::communication::Push;
use timely::container::buffer::default_capacity;
use timely::dataflow::channels::pact::DistributorPact;
use timely::dataflow::channels::pushers::exchange::Distributor;
use timely::dataflow::channels::Message;
use timely::progress::Stamp;

/// The distributor behind [`to_first_worker`]: a container at least half full goes whole to
/// pusher 0; the records of a sparser one are packed into a buffer of timely's default size,
/// sent when full and when the time changes or the operator's output is flushed. (Moving sparse
/// containers whole would keep their empty capacity in flight: a windowed result emits a
/// million times' few changes each in containers of 8 KiB.)
#[derive(Debug)]
pub struct ToFirstWorker<T> {
    pending: Vec<T>,
}

impl<T> Default for ToFirstWorker<T> {
    fn default() -> Self {
        ToFirstWorker { pending: Vec::new() }
    }
}

impl<T> ToFirstWorker<T> {
    fn send<S: Clone, P: Push<Message<S, Vec<T>>>>(&mut self, stamp: &Stamp<S>, pushers: &mut [P]) {
        if 2 * self.pending.len() < self.pending.capacity() {
            // A few records (a flush): sent in a buffer of their size, this one kept.
            let mut few: Vec<T> = self.pending.drain(..).collect();
            if !few.is_empty() {
                Message::push_at(&mut few, stamp.clone(), &mut pushers[0]);
            }
        } else {
            Message::push_at(&mut self.pending, stamp.clone(), &mut pushers[0]);
            // The pusher may hand back an emptied buffer; else the next record starts one.
            self.pending.clear();
        }
    }
}

impl<T> Distributor<Vec<T>> for ToFirstWorker<T> {
    fn partition<S: Clone, P: Push<Message<S, Vec<T>>>>(
        &mut self,
        container: &mut Vec<T>,
        stamp: &Stamp<S>,
        pushers: &mut [P],
    ) {
        if container.is_empty() {
            return;
        }
        if 2 * container.len() >= container.capacity() {
            Message::push_at(container, stamp.clone(), &mut pushers[0]);
            // A pusher that serializes (to another process) may hand the records back: they
            // are sent, and must not go again with a later message (a stream with several
            // consumers hands the same buffer on).
            container.clear();
            return;
        }
        let size = default_capacity::<T>();
        for record in container.drain(..) {
            if self.pending.capacity() == 0 {
                self.pending.reserve_exact(size);
            }
            self.pending.push(record);
            if self.pending.len() >= size {
                self.send(stamp, pushers);
            }
        }
    }

    fn flush<S: Clone, P: Push<Message<S, Vec<T>>>>(&mut self, stamp: &Stamp<S>, pushers: &mut [P]) {
        self.send(stamp, pushers);
    }

    fn relax(&mut self) {
        self.pending = Vec::new();
    }
}

/// The builder of [`to_first_worker`]'s distributor.
pub type ToFirstWorkerPact<T> = DistributorPact<fn(usize) -> ToFirstWorker<T>>;

/// A pact that sends every record to worker 0 (the first worker of the first process): a
/// container at least half full whole and untouched, the records of sparser ones packed into
/// full buffers.
pub fn to_first_worker<T>() -> ToFirstWorkerPact<T> {
    DistributorPact(|_peers| ToFirstWorker::default())
}
