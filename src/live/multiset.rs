//! **The edge multiset** the front end validates deletions against: the number of copies of
//! every present edge, as of the last closed epoch.
//!
//! An edge is identified by [`Update::edge`] (source, destination and weight bits), so copies
//! with different weights are different edges. Only valid updates are ever applied — a deletion
//! always finds a copy (see [`claims`](super::claims)) — so counts never go below zero, and an
//! edge whose last copy is deleted disappears from the map.
//!
//! In a windowed stream the multiset holds the *static* edges only (the initial graph, untimed
//! copies restored from a snapshot); timed copies live in the sequencer's `alive` set, keyed by
//! [`alive_key`] so that the ones that have left their window can be cut off in one split.

use std::collections::{BTreeMap, HashMap};

use crate::sources::window::WindowSpec;
use crate::types::{weight_bits, Edge, Time, Update};

/// Copies per present edge.
pub(super) type Multiset = HashMap<Edge, u64>;

/// Copies per present record of the run's record input (by text).
pub(super) type Records = HashMap<String, u64>;

/// Windowed streams: copies of timed edges, by [`alive_key`].
pub(super) type Alive = BTreeMap<(Time, Edge, Time), u64>;

/// Applies updates to the multiset (the updates are valid; counts never go below zero).
pub(super) fn apply(edges: &mut Multiset, updates: &[Update]) {
    for update in updates {
        let edge = update.edge();
        if update.diff > 0 {
            *edges.entry(edge).or_insert(0) += 1;
        } else if let Some(count) = edges.get_mut(&edge) {
            *count -= 1;
            if *count == 0 {
                edges.remove(&edge);
            }
        }
    }
}

/// Applies records (valid ones: a deletion always finds a copy) to the record multiset.
pub(super) fn apply_records(records: &mut Records, changes: &[(String, i8)]) {
    for (text, diff) in changes {
        if *diff > 0 {
            *records.entry(text.clone()).or_insert(0) += 1;
        } else if let Some(count) = records.get_mut(text) {
            *count -= 1;
            if *count == 0 {
                records.remove(text);
            }
        }
    }
}

/// Where a timed copy sits in the sequencer's `alive` set: by the time it leaves its window
/// (never: `u64::MAX`), then edge and event time.
pub(super) fn alive_key(spec: &WindowSpec, edge: Edge, time: Time) -> (Time, Edge, Time) {
    (spec.lifetime(time).1.unwrap_or(Time::MAX), edge, time)
}

/// The insertion of one copy of `edge` (no weight when it has the default weight).
pub(super) fn edge_update(edge: Edge) -> Update {
    let weight = (edge.2 != weight_bits(None)).then(|| f64::from_bits(edge.2));
    Update { src: edge.0, dst: edge.1, weight, diff: 1 }
}
