//! Where a time-limited run stops: the last epoch every worker of every process feeds.
//!
//! The writer alone decides when the time limit has passed; the other workers must then feed
//! their shares of exactly the epochs some worker already fed, and no more. A worker that
//! stopped on its own clock would let the writer write an epoch without that worker's share of
//! it; one that stopped where it was, running ahead, would leave an epoch fed in part, whose
//! deletions may name copies another worker's share of it inserts.
//!
//! In one process the workers share a [`Stop`]: each claims an epoch before it feeds it; the
//! writer stops the claims and learns the last epoch claimed, and every worker feeds through it.
//!
//! In a cluster the other processes cannot see that [`Stop`], and their workers may have claimed
//! epochs (running ahead) that the writer's process has not. A small dataflow built on every
//! worker ([`StopChannel`]) carries the writer's request to every worker, where an operator stops
//! its own process's claims and answers with the last epoch claimed there; every worker collects
//! the answers, and once every process has answered, the run's last epoch is the largest. Every
//! worker of every process feeds through it, so each epoch up to it is fed completely and none
//! after it is fed at all; the writer writes none of them after its own last epoch. The channel
//! costs nothing while no run stops: nothing is sent and its one input never advances. The
//! unit tests below play the protocol, and `tests/wcc_stream.rs` runs it between two processes.

use std::sync::{Arc, Mutex, MutexGuard};

use timely::dataflow::operators::vec::{Broadcast, Input, Map};
use timely::dataflow::operators::Inspect;
use timely::dataflow::InputHandleVec;
use timely::worker::Worker;

use crate::types::Time;

/// The claims of one process's workers, and in a cluster the other processes' answers.
#[derive(Default)]
pub(crate) struct Stop {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The claims are stopped (by the writer, or by the writer's request from another process).
    stopped: bool,
    /// The last epoch any worker of this process claimed.
    last: Time,
    /// In a cluster: each process's answer (its last epoch claimed), by process.
    answers: Vec<Option<Time>>,
}

impl Stop {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker is about to feed `epoch`: `Ok` to feed it, or `Err` once the claims are stopped
    /// (the worker then asks [`Stop::last`] where to stop).
    pub(crate) fn claim(&self, epoch: Time) -> Result<(), ()> {
        let mut state = self.lock();
        if state.stopped {
            return Err(());
        }
        state.last = state.last.max(epoch);
        Ok(())
    }

    /// Stops the claims; returns the last epoch claimed in this process.
    pub(crate) fn stop(&self) -> Time {
        let mut state = self.lock();
        state.stopped = true;
        state.last
    }

    /// Records process `process`'s answer out of `processes`.
    fn answer(&self, process: usize, last: Time, processes: usize) {
        let mut state = self.lock();
        if state.answers.len() < processes {
            state.answers.resize(processes, None);
        }
        if let Some(slot) = state.answers.get_mut(process) {
            *slot = Some(slot.map_or(last, |l: Time| l.max(last)));
        }
    }

    /// The run's last epoch, once known: in one process (`processes == 1`) the last epoch
    /// claimed once the claims are stopped; in a cluster the largest answer once every process
    /// has answered.
    fn decided(&self, processes: usize) -> Option<Time> {
        let state = self.lock();
        if !state.stopped {
            return None;
        }
        if processes <= 1 {
            return Some(state.last);
        }
        let answers = state.answers.iter().take(processes).copied().collect::<Option<Vec<Time>>>()?;
        (answers.len() == processes).then(|| answers.into_iter().max().unwrap_or(state.last))
    }
}

/// One worker's end of the cluster's stop dataflow (see the module docs).
pub(crate) struct StopChannel {
    requests: InputHandleVec<Time, Time>,
    processes: usize,
}

impl StopChannel {
    /// Builds the stop dataflow on this worker; every worker of every process of a cluster
    /// builds it, in the same place among its dataflows.
    pub(crate) fn build(worker: &mut Worker, stop: &Arc<Stop>, processes: usize, workers: usize) -> Self {
        let workers = workers.max(1);
        let process = worker.index() / workers;
        let (answering, collecting) = (stop.clone(), stop.clone());
        let requests = worker.dataflow::<Time, _, _>(move |scope| {
            let (requests, stream) = scope.new_input::<Time>();
            stream
                .broadcast()
                .map(move |_request: Time| (process as u64, answering.stop()))
                .broadcast()
                .inspect(move |&(from, last): &(u64, Time)| collecting.answer(from as usize, last, processes));
            requests
        });
        StopChannel { requests, processes }
    }

    /// Closes this worker's request input (at the end of the run: the stop dataflow then
    /// completes once every worker has closed its own).
    pub(crate) fn close(self) {
        drop(self.requests);
    }
}

/// The last epoch this worker feeds, once the claims are stopped: in one process at once; in a
/// cluster, after every process has answered (the writer, `request`, first sends the request).
/// Parks while it waits: the answers arrive as the dataflow's messages.
pub(crate) fn last_epoch(worker: &mut Worker, stop: &Stop, channel: Option<&mut StopChannel>, request: bool) -> Time {
    let Some(channel) = channel else { return stop.stop() };
    if request {
        let last = stop.stop();
        channel.requests.send(last);
        channel.requests.flush();
    }
    loop {
        if let Some(last) = stop.decided(channel.processes) {
            return last;
        }
        super::cluster::step_or_park(worker);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_stops_at_the_last_claim() {
        let stop = Stop::default();
        assert_eq!(stop.claim(1), Ok(()));
        assert_eq!(stop.claim(3), Ok(()));
        assert_eq!(stop.claim(2), Ok(()));
        assert_eq!(stop.decided(1), None, "not stopped yet");
        assert_eq!(stop.stop(), 3);
        assert_eq!(stop.claim(4), Err(()));
        assert_eq!(stop.decided(1), Some(3));
    }

    #[test]
    fn a_cluster_stops_at_the_largest_answer_once_every_process_answered() {
        let stop = Stop::default();
        stop.claim(5).unwrap();
        assert_eq!(stop.stop(), 5);
        stop.answer(0, 5, 3);
        assert_eq!(stop.decided(3), None);
        stop.answer(2, 9, 3);
        assert_eq!(stop.decided(3), None, "process 1 has not answered");
        stop.answer(1, 7, 3);
        stop.answer(1, 6, 3);
        assert_eq!(stop.decided(3), Some(9));
    }

    /// Two workers in one process stand for two processes of one worker each: the writer's
    /// request stops the other's claims, and both learn the larger of their last claims.
    #[test]
    fn the_channel_carries_the_request_and_the_answers() {
        let stops: Vec<Arc<Stop>> = (0..2).map(|_| Arc::new(Stop::default())).collect();
        let results = timely::execute(timely::Config::process(2), move |worker| {
            let stop = stops[worker.index()].clone();
            let mut channel = StopChannel::build(worker, &stop, 2, 1);
            // Worker 1 ran ahead to epoch 7; worker 0 (the writer) is at 4.
            let claimed = if worker.index() == 0 { 4 } else { 7 };
            (1..=claimed).for_each(|e| stop.claim(e).unwrap());
            let last = if worker.index() == 0 {
                last_epoch(worker, &stop, Some(&mut channel), true)
            } else {
                // Worker 1 keeps stepping until its claims are stopped by the request.
                while stop.claim(claimed).is_ok() {
                    worker.step();
                }
                last_epoch(worker, &stop, Some(&mut channel), false)
            };
            channel.close();
            while worker.step_or_park(None) {}
            last
        })
        .expect("timely starts")
        .join();
        let lasts: Vec<Time> = results.into_iter().map(|r| r.expect("worker")).collect();
        assert_eq!(lasts, vec![7, 7]);
    }
}
