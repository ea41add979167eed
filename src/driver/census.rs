//! **The graph's census** for `--stats`: at every epoch, how many vertices and edges are present,
//! and, when `triangles` runs, how many triangles the graph has.
//!
//! * `vertices`: the vertex set ([`GraphInput::vertex_set`]: vertex-file vertices ∪ endpoints of
//!   present edges);
//! * `edges`: the edges of the undirected simple graph — distinct present pairs `{u, v}` with
//!   `u != v` (direction, parallel copies, weights and self-loops ignored), what degree,
//!   triangles and kcore see: the sum of all degrees is twice it;
//! * `triangles`: the sum of the `triangles` output's values divided by 3.
//!
//! How: the changes of the shared vertex-set and edge-set arrangements (built anyway by most
//! algorithms; a run whose algorithms use neither builds them for `--stats`), and the
//! `triangles` output's changes weighted by their value, are summed per time at worker 0 into
//! a buffer the writer drains as epochs complete.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Probe;
use timely::dataflow::ProbeHandle;

use crate::dataflow::{GraphInput, ResultCollection};
use crate::types::{Diff, Time};

/// The counts after an epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphCounts {
    /// Vertices of the vertex set.
    pub vertices: u64,
    /// Distinct undirected vertex pairs without self-loops.
    pub edges: u64,
    /// `None` unless `triangles` runs.
    pub triangles: Option<u64>,
}

/// Changes of (vertices, edges, triangle corners) by time, filled at worker 0.
type Buffer = Rc<RefCell<BTreeMap<Time, [i64; 3]>>>;

/// The census of one worker's dataflow (only worker 0's receives anything).
pub struct Census {
    buffer: Buffer,
    totals: [i64; 3],
    triangles: bool,
}

impl Census {
    /// Builds the census over `input`, with the `triangles` output if that algorithm runs; its
    /// sink is probed with `probe`.
    pub fn build<'a>(
        input: &GraphInput<'a>,
        triangles: Option<ResultCollection<'a>>,
        probe: &ProbeHandle<Time>,
    ) -> Self {
        let buffer: Buffer = Rc::default();
        let has_triangles = triangles.is_some();
        let vertices = input.vertex_set().map(|_| 0u8);
        let edges = input.edge_set(true).filter(|(s, d)| s < d).map(|_| 1u8);
        let mut all = vertices.concat(edges);
        if let Some(t) = triangles {
            all = all.concat(t.explode(|(_, corners)| Some((2u8, corners as Diff))));
        }
        let sink = buffer.clone();
        all.inner
            .unary_frontier::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|_x: &(u8, Time, Diff)| 0u64),
                "Census",
                move |_capability, _info| {
                    move |(input, _frontier), _output| {
                        input.for_each(|_time, data| {
                            let mut sink = sink.borrow_mut();
                            for (kind, t, d) in data.drain(..) {
                                sink.entry(t).or_default()[kind as usize] += d as i64;
                            }
                        });
                    }
                },
            )
            .probe_with(probe);
        Census { buffer, totals: [0; 3], triangles: has_triangles }
    }

    /// The counts once every time below `frontier` is applied (the writer calls it as each
    /// epoch completes).
    pub fn below(&mut self, frontier: Time) -> GraphCounts {
        let mut buffer = self.buffer.borrow_mut();
        while let Some(entry) = buffer.first_entry().filter(|e| *e.key() < frontier) {
            for (total, d) in self.totals.iter_mut().zip(entry.remove()) {
                *total += d;
            }
        }
        let count = |i: usize| u64::try_from(self.totals[i]).unwrap_or(0);
        GraphCounts { vertices: count(0), edges: count(1), triangles: self.triangles.then(|| count(2) / 3) }
    }
}
