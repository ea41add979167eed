//! The replacement search after a forest edge is cut: both sides of the cut are searched at
//! once, one adjacency entry at a time each, for a non-tree edge between them. Each side has two
//! cursors over the vertices it reached, taking turns: one walks their forest edges (it finds
//! the side's vertices), one scans their non-tree edges, newest first. A non-tree edge to a
//! vertex the other side reached is a replacement; so is, once the side is *complete* (its
//! forest-edge cursor is done), a non-tree edge to a vertex it did not reach. When a complete
//! side has no non-tree edge left to look at, the component splits ([`Search::Split`]). Every
//! step counts against the time's budget ([`super::rebuild::Budget`]).

use super::DynamicForest;
use crate::dataflow::id_index::{prefetch, prefetch_ptr};

/// How far ahead a replacement search prefetches the links of the adjacency it scans.
pub(super) const SCAN_AHEAD: usize = 8;

/// One side of a replacement search: two cursors over the vertices it reached, one walking their
/// forest edges (it finds the side's vertices), one their non-tree edges (it finds edges that
/// leave the side).
#[derive(Default)]
pub(super) struct Side {
    /// Vertices reached, in order (the first is where it started).
    pub(super) queue: Vec<u32>,
    /// The forest-edge cursor: the vertex being walked and the position in its forest edges.
    tree_at: usize,
    tree_pos: usize,
    /// The non-tree cursor: the vertex being scanned and the position in its non-tree edges.
    other_at: usize,
    other_pos: usize,
    /// The forest-edge cursor is done: the side has all its vertices.
    complete: bool,
    /// Which cursor moves next while both can.
    tree_turn: bool,
    /// Non-tree edges seen before the side was complete whose other end it had not reached:
    /// `(link, other end)`.
    open: Vec<(u32, u32)>,
}

/// What one step of a side found.
enum Step {
    /// Nothing yet.
    Continue,
    /// The side is complete and no non-tree edge leaves it.
    Exhausted,
    /// A replacement: this non-tree edge joins the two sides.
    Found(u32),
}

/// How a replacement search ended.
pub(super) enum Search {
    /// This non-tree edge joins the two sides: it becomes a forest edge.
    Replacement(u32),
    /// No replacement: side `0` or `1` was exhausted (its vertices are in `sides[i].queue`).
    Split(usize),
    /// The time's budget ran out.
    Aborted,
}

/// The search's state, kept between searches for its allocations.
#[derive(Default)]
pub(super) struct SearchState {
    /// The current search's stamp for `Vertex::mark`.
    pub(super) stamp: u32,
    pub(super) sides: [Side; 2],
}

impl DynamicForest {
    /// A fresh stamp for a search's `Vertex::mark`s (every mark is reset when the stamps wrap).
    fn next_stamp(&mut self) -> u32 {
        if self.search.stamp == u32::MAX - 1 {
            for x in &mut self.store.vertices {
                x.mark = 0;
            }
            self.search.stamp = 0;
        }
        self.search.stamp += 1;
        self.search.stamp
    }

    /// After the forest edge `u - v` was removed: searches both sides at once for a non-tree edge
    /// between them.
    pub(super) fn search(&mut self, u: u32, v: u32) -> Search {
        let stamp = self.next_stamp();
        for (s, start) in [u, v].into_iter().enumerate() {
            let side = &mut self.search.sides[s];
            side.queue.clear();
            side.open.clear();
            side.queue.push(start);
            (side.tree_at, side.tree_pos, side.other_at, side.other_pos) = (0, 0, 0, 0);
            (side.complete, side.tree_turn) = (false, true);
            let x = &mut self.store.vertices[start as usize];
            x.mark = stamp;
            x.side = s as u8;
        }
        loop {
            for s in 0..2 {
                if self.budget.work >= self.budget.limit {
                    return Search::Aborted;
                }
                self.budget.work += 1;
                match self.step(s, stamp) {
                    Step::Continue => {}
                    Step::Found(l) => return Search::Replacement(l),
                    // Its open edges were checked when it became complete: none leaves it.
                    Step::Exhausted => return Search::Split(s),
                }
            }
        }
    }

    /// One adjacency entry of side `s`: the forest-edge and non-tree cursors take turns (when the
    /// non-tree cursor has caught up with the vertices found so far, the forest-edge cursor
    /// moves instead). Once the forest-edge cursor is done, the side is complete: a non-tree edge
    /// of it to a vertex it did not reach leaves it, a replacement; when the non-tree cursor is
    /// done too, none does.
    fn step(&mut self, s: usize, stamp: u32) -> Step {
        let tree_first = !self.search.sides[s].complete && self.search.sides[s].tree_turn;
        self.search.sides[s].tree_turn = !tree_first;
        if tree_first {
            if let Some(step) = self.tree_step(s, stamp) {
                return step;
            }
        }
        if let Some(step) = self.other_step(s, stamp) {
            return step;
        }
        if !self.search.sides[s].complete {
            if let Some(step) = self.tree_step(s, stamp) {
                return step;
            }
        }
        // Complete, and the non-tree cursor has nothing left.
        Step::Exhausted
    }

    /// The forest-edge cursor of side `s` takes one entry: a vertex across it not reached yet
    /// joins the side. When it passes the last vertex, the side is complete, and a non-tree edge
    /// seen earlier to a vertex it did not reach is a replacement (`None`: there is none).
    fn tree_step(&mut self, s: usize, stamp: u32) -> Option<Step> {
        loop {
            let side = &self.search.sides[s];
            let Some(&x) = side.queue.get(side.tree_at) else {
                self.search.sides[s].complete = true;
                return self.search.sides[s].open.iter().find_map(|&(l, w)| {
                    let y = &self.store.vertices[w as usize];
                    (y.mark != stamp || y.side as usize != s).then_some(Step::Found(l))
                });
            };
            let pos = side.tree_pos;
            let vx = &self.store.vertices[x as usize];
            let nt = vx.tree_len as usize;
            if pos >= nt {
                let side = &mut self.search.sides[s];
                side.tree_at += 1;
                side.tree_pos = 0;
                if let Some(&next) = side.queue.get(side.tree_at) {
                    let vn = &self.store.vertices[next as usize];
                    for p in 0..(vn.tree_len as usize).min(SCAN_AHEAD) {
                        prefetch(&self.store.links[vn.adj[p] as usize]);
                    }
                }
                continue;
            }
            self.search.sides[s].tree_pos += 1;
            self.prefetch_scan(x, |p| vx.adj[p], pos, nt);
            let w = self.store.across(vx.adj[pos], x);
            let y = &mut self.store.vertices[w as usize];
            if y.mark != stamp {
                y.mark = stamp;
                y.side = s as u8;
                self.search.sides[s].queue.push(w);
                // Its adjacency, for both cursors.
                prefetch_ptr(y.adj.as_ptr());
            }
            return Some(Step::Continue);
        }
    }

    /// A search cursor at entry `pos` of `end` of vertex `x`'s list `at`: each entry costs two
    /// dependent misses (its link, then the vertex across it), so the link is prefetched
    /// [`SCAN_AHEAD`] entries ahead and the vertex across half as far.
    #[inline]
    fn prefetch_scan(&self, x: u32, at: impl Fn(usize) -> u32, pos: usize, end: usize) {
        if pos + SCAN_AHEAD < end {
            prefetch(&self.store.links[at(pos + SCAN_AHEAD) as usize]);
        }
        if pos + SCAN_AHEAD / 2 < end {
            prefetch(&self.store.vertices[self.store.across(at(pos + SCAN_AHEAD / 2), x) as usize]);
        }
    }

    /// The non-tree cursor of side `s` takes one entry (a vertex's non-tree edges newest first:
    /// a newer replacement tends to stay longer): an edge to a vertex the other side reached is a
    /// replacement, and so is, once the side is complete, one to a vertex it did not reach
    /// (`None`: it has caught up with the vertices found so far).
    fn other_step(&mut self, s: usize, stamp: u32) -> Option<Step> {
        loop {
            let side = &self.search.sides[s];
            let x = *side.queue.get(side.other_at)?;
            let pos = side.other_pos;
            let vx = &self.store.vertices[x as usize];
            let no = vx.other_len as usize;
            // Position `p` of the non-tree list, newest first.
            let at = |p: usize| vx.adj[vx.adj.len() - no + p];
            if pos >= no {
                let side = &mut self.search.sides[s];
                side.other_at += 1;
                side.other_pos = 0;
                continue;
            }
            self.search.sides[s].other_pos += 1;
            if pos == 0 {
                for p in 1..no.min(SCAN_AHEAD) {
                    prefetch(&self.store.links[at(p) as usize]);
                }
            }
            self.prefetch_scan(x, at, pos, no);
            let l = at(pos);
            if !self.store.other_live(x, no - 1 - pos, l) {
                // A stale entry (one step of the budget, like any entry read).
                return Some(Step::Continue);
            }
            let w = self.store.across(l, x);
            let y = &self.store.vertices[w as usize];
            if y.mark == stamp {
                if y.side as usize != s {
                    return Some(Step::Found(l));
                }
            } else if self.search.sides[s].complete {
                return Some(Step::Found(l));
            } else {
                self.search.sides[s].open.push((l, w));
            }
            return Some(Step::Continue);
        }
    }
}
