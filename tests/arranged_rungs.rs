//! The arranged rungs and the shared-arrangement registry: PageRank, CDLP, LCC, SCC and WCC
//! written by a user over the shared edge indexes (looked up by name), in one run with the
//! built-in SCC, checked against the sequential oracles at every epoch of random insert/delete
//! streams (1 and 2 workers); a lookup returns the very trace registered (one arrange operator
//! in the dataflow); an unknown name, a wrong type and a taken name are errors, not panics.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use common::*;
use differential_dataflow::input::Input;
use ripples::dataflow::bfs::ArrangedEdges;
use ripples::dataflow::registry::{Orientation, RegistryError, EDGES_IN, EDGES_OUT, EDGES_UNDIRECTED};
use ripples::dataflow::wcc::ArrangedPairs;
use ripples::dataflow::{cdlp, custom, lcc, pagerank, scc, wcc, Algorithm, GraphInput, ValueFormat};
use ripples::driver::{self, RunOptions};
use ripples::oracle;
use ripples::types::{Node, Time};

const PR_ITERATIONS: u32 = 8;
const CDLP_ITERATIONS: u32 = 4;

/// The user's algorithms: every arranged rung over an index looked up by name.
fn user_algorithms() -> Vec<Box<dyn Algorithm>> {
    vec![
        Box::new(
            custom("pr-shared", |input| {
                let out = input.lookup::<ArrangedPairs<Time>>(EDGES_OUT).expect("edges.out");
                pagerank::ranks_arranged(out, input.vertex_set(), PR_ITERATIONS, 0.85)
            })
            .with_format(ValueFormat::Float),
        ),
        Box::new(custom("cdlp-shared", |input| {
            let undirected = input.lookup::<ArrangedPairs<Time>>(EDGES_UNDIRECTED).expect("edges.undirected");
            cdlp::labels_arranged(undirected, input.vertex_set(), CDLP_ITERATIONS)
        })),
        Box::new(
            custom("lcc-shared", |input| {
                lcc::coefficients_arranged(input.arranged_edge_set(Orientation::Out), input.vertex_set())
            })
            .with_format(ValueFormat::Float),
        ),
        Box::new(custom("scc-shared", |input| {
            let out = input.lookup::<ArrangedPairs<Time>>(EDGES_OUT).expect("edges.out");
            let into = input.lookup::<ArrangedPairs<Time>>(EDGES_IN).expect("edges.in");
            scc::strong_components_arranged(out, into, input.vertex_set())
        })),
        Box::new(custom("wcc-shared", |input| {
            let undirected = input.lookup::<ArrangedPairs<Time>>(EDGES_UNDIRECTED).expect("edges.undirected");
            wcc::components_arranged(undirected, input.vertex_set())
        })),
        Box::new(scc::Scc),
    ]
}

fn close(got: &BTreeMap<Node, u64>, want: &BTreeMap<Node, f64>, context: &str) {
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{context}: vertex sets differ");
    for (v, w) in want {
        let g = f64::from_bits(got[v]);
        assert!((g - w).abs() <= 1e-9 * w.abs().max(1e-300), "{context}: vertex {v}: got {g:e}, oracle {w:e}");
    }
}

#[test]
fn arranged_rungs_on_shared_indexes_match_the_oracles_every_epoch() {
    for (seed, workers) in [(21u64, 1usize), (22, 2)] {
        let batch = 4;
        let stream = rebatch(&random_stream(seed, 24, 40, 40, batch), batch);
        let report = driver::run_many(RunOptions::memory(memory(&stream, batch), workers), user_algorithms())
            .expect("run")
            .expect("report");
        let last = stream.epochs.len() as u64;
        let states: BTreeMap<String, Vec<BTreeMap<Node, u64>>> = report
            .algorithms
            .iter()
            .map(|a| (a.name.clone(), states_per_epoch(a.changes.as_deref().expect("changes"), last)))
            .collect();
        for (epoch, counts) in edge_counts_per_epoch(&stream).iter().enumerate() {
            let context = format!("seed {seed} workers {workers} epoch {epoch}");
            let (vertices, edges) = oracle_input(&stream.vertices, counts);
            let symmetric = oracle::symmetrize(&edges);
            let at = |name: &str| &states[name][epoch];
            close(at("pr-shared"), &oracle::pagerank(&vertices, &edges, 0.85, PR_ITERATIONS), &format!("{context} pr"));
            assert_eq!(at("cdlp-shared"), &oracle::cdlp(&vertices, &symmetric, CDLP_ITERATIONS), "{context} cdlp");
            close(at("lcc-shared"), &oracle::lcc(&vertices, &edges), &format!("{context} lcc"));
            assert_eq!(at("scc-shared"), &oracle::scc(&vertices, &edges), "{context} scc");
            assert_eq!(at("scc"), &oracle::scc(&vertices, &edges), "{context} built-in scc");
            assert_eq!(at("wcc-shared"), &oracle::wcc::wcc(&vertices, &edges), "{context} wcc");
        }
    }
}

/// The names of the operators a dataflow built, through timely's logging.
fn record_operator_names(worker: &mut timely::worker::Worker, names: Arc<Mutex<Vec<String>>>) {
    let sink = names;
    worker.log_register().expect("logging").insert::<timely::logging::TimelyEventBuilder, _>(
        "timely",
        move |_time, data| {
            if let Some(data) = data {
                for (_, event) in data.iter() {
                    if let timely::logging::TimelyEvent::Operates(op) = event {
                        sink.lock().unwrap().push(op.name.clone());
                    }
                }
            }
        },
    );
}

#[test]
fn a_lookup_returns_the_registered_index() {
    let result = Arc::new(Mutex::new(BTreeSet::new()));
    let seen = result.clone();
    let names = Arc::new(Mutex::new(Vec::new()));
    let recorded = names.clone();
    timely::execute_directly(move |worker| {
        record_operator_names(worker, recorded);
        worker.dataflow::<Time, _, _>(|scope| {
            let (_, edges) = scope.new_collection_from(vec![(1u64, 2u64, 0u64), (2, 3, 0), (3, 3, 0), (1, 2, 0)]);
            let (_, vertices) = scope.new_collection_from(Vec::<Node>::new());
            let input = GraphInput::new(edges, vertices, false);
            // A built-in algorithm builds edges.out; the user's lookup gets the same trace.
            let _pagerank = pagerank::pagerank(input.clone(), 3, 0.85, false);
            let built = input.arranged_edge_set(Orientation::Out);
            let looked_up = input.lookup::<ArrangedPairs<Time>>(EDGES_OUT).expect("edges.out");
            assert!(Rc::ptr_eq(&built.trace.trace_box_unstable(), &looked_up.trace.trace_box_unstable()));
            // The set without self-loops and parallel copies, as the documentation says.
            looked_up.as_collection(|s, d| (*s, *d)).inspect(move |(e, _, r)| {
                assert_eq!(*r, 1);
                seen.lock().unwrap().insert(*e);
            });
            // The user's own arrangement, registered and looked up by name.
            let mine = input.edges.clone().map(|(s, d, _)| (d, (s, ()))).arrange_by_key();
            input.register("mine.by-destination", &mine).expect("a free name");
            let again = input.lookup::<ArrangedEdges<Time, ()>>("mine.by-destination").expect("registered");
            assert!(Rc::ptr_eq(&mine.trace.trace_box_unstable(), &again.trace.trace_box_unstable()));
        });
    });
    assert_eq!(*result.lock().unwrap(), BTreeSet::from([(1, 2), (2, 3)]));
    let names = names.lock().unwrap();
    let arranges: Vec<&String> = names.iter().filter(|n| n.contains("edges.out")).collect();
    assert_eq!(arranges, vec!["Arrange: edges.out", "Shared: edges.out"], "one index, one import: {names:?}");
}

#[test]
fn wrong_names_and_types_are_clear_errors() {
    timely::execute_directly(|worker| {
        worker.dataflow::<Time, _, _>(|scope| {
            let (_, edges) = scope.new_collection_from(vec![(1u64, 2u64, 0u64)]);
            let (_, vertices) = scope.new_collection_from(Vec::<Node>::new());
            let input = GraphInput::new(edges, vertices, false);

            let unknown = input.lookup::<ArrangedPairs<Time>>("edges.outt").err().expect("an error");
            let RegistryError::Unknown { name, known } = &unknown else { panic!("{unknown:?}") };
            assert_eq!(name, "edges.outt");
            assert_eq!(known, &vec![EDGES_IN.to_string(), EDGES_OUT.to_string(), EDGES_UNDIRECTED.to_string()]);
            assert_eq!(
                unknown.to_string(),
                "no shared arrangement named 'edges.outt' (registered: edges.in, edges.out, edges.undirected)"
            );

            let wrong = input.lookup::<ArrangedEdges<Time, ()>>(EDGES_OUT).err().expect("an error");
            let RegistryError::WrongType { name, registered, requested } = &wrong else { panic!("{wrong:?}") };
            assert_eq!(name, EDGES_OUT);
            assert_eq!(registered, "Spine<Rc<OrdValBatch<Vector<((u64, u64), u64, isize)>>>>");
            assert_eq!(requested, "Spine<Rc<OrdValBatch<Vector<((u64, (u64, ())), u64, isize)>>>>");
            assert!(wrong.to_string().starts_with("the shared arrangement 'edges.out' is a "), "{wrong}");

            let arranged = input.edges.clone().map(|(s, d, _)| (s, d)).arrange_by_key();
            assert_eq!(input.register(EDGES_UNDIRECTED, &arranged), Err(RegistryError::Taken(EDGES_UNDIRECTED.into())));
            input.register("pairs", &arranged).expect("a free name");
            let taken = input.register("pairs", &arranged).expect_err("a taken name");
            assert_eq!(taken.to_string(), "a shared arrangement named 'pairs' is already registered");
            // A user's name is listed among the known ones.
            let RegistryError::Unknown { known, .. } =
                input.lookup::<ArrangedPairs<Time>>("pair").err().expect("an error")
            else {
                panic!("unknown name")
            };
            assert!(known.contains(&"pairs".to_string()), "{known:?}");
        });
    });
}
