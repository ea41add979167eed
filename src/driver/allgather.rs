//! All-gather across every worker of every process, as a tiny timely dataflow.
//!
//! Used before the main dataflow starts, so that all workers agree on facts only some of them
//! know: the first input error (so that every process stops with the same message), global
//! counts, and the multiplicities needed to validate deletions.
//!
//! The test `the_module_example` below shows it at work.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{de::DeserializeOwned, Serialize};
use timely::dataflow::operators::vec::{Broadcast, Input};
use timely::dataflow::operators::Inspect;
use timely::dataflow::operators::Probe;
use timely::worker::Worker;

/// Every worker contributes `value`; every worker gets all values, ordered by worker index.
/// All workers must call this the same number of times, in the same order.
pub fn allgather<V>(worker: &mut Worker, value: V) -> Vec<V>
where
    V: Serialize + DeserializeOwned + Clone + Send + Sync + std::fmt::Debug + 'static,
{
    let index = worker.index();
    let gathered: Rc<RefCell<Vec<(usize, V)>>> = Rc::new(RefCell::new(Vec::new()));
    let sink = gathered.clone();
    let (mut input, probe) = worker.dataflow::<u64, _, _>(move |scope| {
        let (input, stream) = scope.new_input::<(usize, V)>();
        let (probe, _stream) = stream.broadcast().inspect(move |x| sink.borrow_mut().push(x.clone())).probe();
        (input, probe)
    });
    input.send((index, value));
    input.advance_to(1);
    drop(input);
    while probe.less_than(&1) {
        super::cluster::step_or_park(worker);
    }
    let mut all = gathered.borrow_mut().drain(..).collect::<Vec<_>>();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_module_example() {
        use crate::driver::allgather::allgather;
        // Three workers each know one number; afterwards every worker knows all three.
        let results = timely::execute(timely::Config::process(3), |worker| {
            let mine = worker.index() as u64 * 10;
            allgather(worker, mine)
        })
        .unwrap()
        .join();
        for result in results {
            assert_eq!(result.unwrap(), vec![0, 10, 20]);
        }
    }
}
