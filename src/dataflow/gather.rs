//! [`to_first_worker`]: a parallelization contract that sends every container, whole, to
//! worker 0.
//!
//! Timely's `Exchange` pact looks at every record: it hashes it, copies it into a buffer for
//! its target worker and ships the buffer when full. When every record goes to the same worker
//! (a result gathered for the writer, a sequential structure kept at one worker), that work is
//! pure overhead: [`to_first_worker`] hands each container as it is to worker 0's channel
//! (moved within a process, serialized whole between processes). On `wcc-churn` one epoch
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
use timely::dataflow::channels::pact::DistributorPact;
use timely::dataflow::channels::pushers::exchange::Distributor;
use timely::dataflow::channels::Message;
use timely::progress::Stamp;

/// The distributor behind [`to_first_worker`]: every container goes whole to pusher 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToFirstWorker;

impl<C: Default + timely::Accountable> Distributor<C> for ToFirstWorker {
    fn partition<T: Clone, P: Push<Message<T, C>>>(&mut self, container: &mut C, stamp: &Stamp<T>, pushers: &mut [P]) {
        if container.record_count() > 0 {
            Message::push_at(container, stamp.clone(), &mut pushers[0]);
        }
    }

    fn flush<T: Clone, P: Push<Message<T, C>>>(&mut self, _stamp: &Stamp<T>, _pushers: &mut [P]) {
        // Nothing is held back.
    }
}

/// A pact that sends every container, whole and untouched, to worker 0 (the first worker of
/// the first process).
pub fn to_first_worker() -> DistributorPact<fn(usize) -> ToFirstWorker> {
    DistributorPact(|_peers| ToFirstWorker)
}
