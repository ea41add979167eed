//! A timely dataflow loop, the streaming iteration under every `iterate`: records travel round a
//! cycle (`feedback` + `connect_loop`), each trip advancing their timestamp by one, and leave
//! after a fixed number of rounds. An operator written here counts the records of every round
//! and reports a round only once the frontier says that no more of its records can arrive.
//!
//! What it teaches (timely 0.32, on which ripples runs):
//!
//! * `scope.feedback(1)` returns a handle and a stream: whatever is connected to the handle
//!   with `connect_loop` re-enters the stream with its timestamp advanced by the summary `1`;
//! * progress tracking knows the loop: a round `t` is complete once the input frontier of an
//!   operator has passed `t` (`!frontier.less_equal(&t)`), on every worker at once;
//! * a **capability** is the right to send at a time: the counter holds one for each round it
//!   still has to report (`retain_least`), which keeps the frontier of everything downstream at
//!   that round until the report is sent and the capability dropped;
//! * the loop ends when no record circulates and no capability is held: the dataflow completes.
//!
//! ```text
//! cargo run --release --example timely_loop -- 5 1000 -w 2    # 5 rounds, 1000 records, 2 workers
//! ```
//!
//! It exits non-zero unless every round is reported once, in order, with every record (CI runs it).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::{Filter, Map};
use timely::dataflow::operators::{Capability, Concat, ConnectLoop, Feedback, Inspect, ToStream};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let elements: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    // The remaining arguments are timely's own (`-w N`, `-n N -p I -h FILE`).
    let guards = timely::execute_from_args(args, move |worker| {
        let index = worker.index();
        let peers = worker.peers() as u64;
        let reports: Rc<RefCell<Vec<(u64, u64)>>> = Rc::default();
        let seen = reports.clone();
        worker.dataflow::<u64, _, _>(move |scope| {
            let (handle, cycle) = scope.feedback(1);
            // Each worker introduces its share of the records at time 0; a record counts its trips.
            let records = (0..elements)
                .filter(move |i| i % peers == index as u64)
                .map(|_| 0u64)
                .to_stream(scope)
                .container::<Vec<u64>>()
                .concat(cycle);
            // Count the records of each round at worker 0; report a round when it is complete.
            records
                .clone()
                .unary_frontier::<CapacityContainerBuilder<Vec<(u64, u64)>>, _, _, _>(
                    Exchange::new(|_x: &u64| 0u64),
                    "RoundCounter",
                    |_capability, _info| {
                        let mut pending: BTreeMap<u64, (Capability<u64>, u64)> = BTreeMap::new();
                        move |(input, frontier), output| {
                            input.for_each(|cap, data| {
                                let (Some(&round), Some(held)) = (cap.least(), cap.retain_least(0)) else { return };
                                pending.entry(round).or_insert((held, 0)).1 += data.len() as u64;
                            });
                            // Every round the frontier has passed is complete: report it, and
                            // drop its capability so that the frontier downstream moves on.
                            while let Some((&round, _)) = pending.first_key_value() {
                                if frontier.less_equal(&round) {
                                    break;
                                }
                                if let Some((held, count)) = pending.remove(&round) {
                                    output.session(&held).give((round, count));
                                }
                            }
                        }
                    },
                )
                .inspect(move |report| seen.borrow_mut().push(*report));
            // One more trip, until the last round.
            records.map(|trips| trips + 1).filter(move |trips| *trips < rounds).connect_loop(handle);
        });
        while worker.step() {}
        let out = reports.borrow().clone();
        out
    });
    let reports: Vec<(u64, u64)> = match guards {
        Ok(guards) => guards.join().into_iter().flat_map(|r| r.unwrap_or_default()).collect(),
        Err(e) => {
            eprintln!("timely_loop: cannot start the workers: {}", e);
            std::process::exit(2);
        }
    };
    let want: Vec<(u64, u64)> = (0..rounds).map(|r| (r, elements)).collect();
    for (round, count) in &reports {
        println!("round {}: {} records (reported once the frontier passed {})", round, count, round);
    }
    if reports != want {
        eprintln!("timely_loop: expected {:?}", want);
        std::process::exit(1);
    }
    println!("timely_loop: {} rounds, each complete and in order", rounds);
}
