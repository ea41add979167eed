//! **Placement**: where a cluster's workers feed the input edges when the run's algorithm
//! routes every edge to a worker by the edge alone ([`crate::dataflow::Algorithm::input_route`]):
//! each process keeps the edges whose worker it runs, reading the whole edge file split among its
//! own workers (with [`InputRoute::First`] only process 0 reads it), and of each epoch's updates
//! feeds the ones it keeps. The dataflow's own exchange then keeps every edge in its process: no
//! input edge crosses the network on its way to its worker. [`super::input`] applies it (the
//! tests below check that every edge and update is fed once, at its route's process).

use crate::dataflow::InputRoute;
use crate::types::Node;

/// Where a cluster's workers feed the input edges when the algorithm routes them by the edge
/// alone ([`crate::dataflow::Algorithm::input_route`]): every edge at a worker of the process
/// of the worker the route names, so that the dataflow's own exchange keeps it in that process.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The algorithm's route.
    pub route: InputRoute,
    /// Workers in the cluster.
    pub peers: usize,
    /// This process's first worker (global index) ...
    pub first: usize,
    /// ... and its number of workers.
    pub workers: usize,
}

impl Placement {
    /// Whether the edge `(s, d)` belongs to this process.
    #[inline]
    pub(super) fn keeps(&self, s: Node, d: Node) -> bool {
        let worker = match self.route {
            InputRoute::First => 0,
            InputRoute::By(route) => route(s, d, self.peers),
        };
        worker.wrapping_sub(self.first) < self.workers
    }

    /// Whether this process keeps no edge at all (it need not read the edge file).
    pub(super) fn keeps_none(&self) -> bool {
        matches!(self.route, InputRoute::First) && self.first > 0
    }
}

/// The placements of a cluster's run ([`Placement`]), one for each kind of stream the algorithm
/// routes differently: the loader picks one once it has read the update file.
#[derive(Clone, Copy, Debug, Default)]
pub struct Placements {
    /// For a stream that only inserts (and is not windowed).
    pub insert_only: Option<Placement>,
    /// For any other stream.
    pub deleting: Option<Placement>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::input::{cut_epochs, parse_files, FileSource, SharedUpdates, Source};
    use crate::types::{Diff, Update};

    /// Any route will do: the placement only follows it.
    fn route(s: Node, d: Node, peers: usize) -> usize {
        ((s.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ d.rotate_left(7)) % peers as u64) as usize
    }

    /// Every process reads the whole files (with `First`, process 0 alone); over all workers of
    /// all processes each edge copy and each update is fed exactly once, at a worker of the
    /// process the route names, and a worker that feeds nothing says so.
    #[test]
    fn a_cluster_feeds_each_edge_once_at_a_process_its_route_names() {
        let dir = std::env::temp_dir().join(format!("ripples-placement-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let edges: Vec<(Node, Node)> = (0..997u64).map(|i| (i * 7 % 101, i * 13 % 89)).collect();
        let updates: Vec<Update> = edges
            .iter()
            .step_by(3)
            .map(|&(s, d)| Update::delete(s, d))
            .chain((0..300).map(|i| Update::insert(i, i + 1)))
            .collect();
        let (graph, update_file) = (dir.join("g.e"), dir.join("u.txt"));
        crate::sources::write_edges(&graph, &edges).expect("edge file");
        crate::sources::write_updates(&update_file, &updates).expect("update file");
        let files =
            FileSource { graph: Some(graph), updates: Some(update_file), batch: Some(37), ..FileSource::default() };
        for ((processes, workers), first) in
            [(2usize, 1usize), (2, 2), (3, 2)].into_iter().flat_map(|c| [(c, false), (c, true)])
        {
            let (routed, owner): (InputRoute, fn(Node, Node, usize) -> usize) =
                if first { (InputRoute::First, |_, _, _| 0) } else { (InputRoute::By(route), route) };
            let peers = processes * workers;
            let what = format!("{processes} processes of {workers} workers, {routed:?}");
            let mut fed_initial: Vec<(Node, Node)> = Vec::new();
            let epochs = updates.len().div_ceil(37);
            let mut fed_epochs: Vec<Vec<(Node, Node, Diff)>> = vec![Vec::new(); epochs];
            for process in 0..processes {
                let shared = SharedUpdates::new(workers);
                for local in 0..workers {
                    let index = process * workers + local;
                    let placement = Placement { route: routed, peers, first: process * workers, workers };
                    let placements = Placements { insert_only: None, deleting: Some(placement) };
                    let parsed = parse_files(&files, index, peers, None, &shared, placements);
                    assert!(parsed.error.is_none(), "{what}: {:?}", parsed.error);
                    let share = cut_epochs(parsed, &Source::Files(files.clone()), index, peers, &shared);
                    assert_eq!(share.epochs(), epochs, "{what}");
                    let feeds = !share.initial.is_empty() || (1..=epochs).any(|e| share.epoch(e).next().is_some());
                    assert_eq!(share.feeds_nothing(), !feeds, "{what}: worker {index}");
                    if first {
                        assert_eq!(feeds, index == 0 || (process == 0 && workers > 1), "{what}: worker {index}");
                    }
                    for &(s, d, _) in &share.initial {
                        assert_eq!(owner(s, d, peers) / workers, process, "{what}: ({s}, {d}) at process {process}");
                        fed_initial.push((s, d));
                    }
                    for (e, fed) in fed_epochs.iter_mut().enumerate() {
                        for ((s, d, _), diff) in share.epoch(e + 1) {
                            assert_eq!(
                                owner(s, d, peers) / workers,
                                process,
                                "{what}: update ({s}, {d}) at process {process}"
                            );
                            fed.push((s, d, diff));
                        }
                    }
                }
            }
            let sorted = |mut v: Vec<(Node, Node)>| {
                v.sort_unstable();
                v
            };
            assert_eq!(sorted(fed_initial), sorted(edges.clone()), "{what}: the initial graph fed");
            for (e, fed) in fed_epochs.iter_mut().enumerate() {
                let mut want: Vec<(Node, Node, Diff)> = updates[e * 37..((e + 1) * 37).min(updates.len())]
                    .iter()
                    .map(|u| (u.src, u.dst, u.diff as Diff))
                    .collect();
                want.sort_unstable();
                fed.sort_unstable();
                assert_eq!(fed, &want, "{what}: epoch {}", e + 1);
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
