//! The **model**: the graph stream's basic types, the formats results are written in
//! ([`format`](mod@format)), and the records a run reports ([`stats`]). Every other layer builds on these;
//! this module imports none of them.
//!
//! * A vertex id is a [`Node`] (`u64`) everywhere.
//! * Logical time is the epoch number, a [`Time`] (`u64`). Epoch 0 is the initial graph; every
//!   following batch of updates is the next epoch.
//! * An [`Update`] is `(src, dst, optional weight, ±1)`. Edges form a multiset: `+` adds one copy,
//!   `-` removes one copy; an edge is present while its count is positive.
//! * Inside a dataflow an edge is an [`Edge`] `(src, dst, weight_bits)`, where the weight is stored
//!   as the bit pattern of its `f64` so that edges are totally ordered and hash exactly. An absent
//!   weight means [`DEFAULT_WEIGHT`]; the identity of an edge copy is `(src, dst, weight)`.
//!
//! ```
//! use ripples::types::{weight_bits, weight_of, Update, DEFAULT_WEIGHT};
//! let add = Update::insert(1, 2);
//! assert_eq!((add.src, add.dst, add.weight, add.diff), (1, 2, None, 1));
//! // An absent weight and an explicit 1.0 are the same dataflow edge ...
//! let weighted = Update { weight: Some(DEFAULT_WEIGHT), ..add };
//! assert_eq!(add.edge(), weighted.edge());
//! assert_eq!(weight_of(&add.edge()), 1.0);
//! // ... and so are -0.0 and 0.0, while other weights are other edges.
//! assert_eq!(weight_bits(Some(-0.0)), weight_bits(Some(0.0)));
//! assert_ne!(Update { weight: Some(0.5), ..add }.edge(), add.edge());
//! // A deletion removes one copy of the same edge.
//! assert_eq!(Update::delete(1, 2).edge(), add.edge());
//! ```

pub mod format;
pub mod profile;
pub mod stats;

use serde::{Deserialize, Serialize};

/// A vertex id.
pub type Node = u64;
/// Logical time: the epoch number.
pub type Time = u64;
/// Multiplicity of a change in a differential collection.
pub type Diff = isize;
/// An edge inside a dataflow: `(src, dst, f64 weight bits)`.
pub type Edge = (Node, Node, u64);

/// The weight an edge has when its line gives none.
pub const DEFAULT_WEIGHT: f64 = 1.0;

/// Bit pattern of an optional weight (absent means [`DEFAULT_WEIGHT`]). `-0.0` is normalised to
/// `0.0` so that both spellings name the same edge.
pub fn weight_bits(weight: Option<f64>) -> u64 {
    let w = weight.unwrap_or(DEFAULT_WEIGHT);
    if w == 0.0 {
        0.0f64.to_bits()
    } else {
        w.to_bits()
    }
}

/// The `f64` weight stored in an [`Edge`].
pub fn weight_of(edge: &Edge) -> f64 {
    f64::from_bits(edge.2)
}

/// The check a user's record input applies to each record line's text before the line is
/// accepted (`record + TEXT` / `record - TEXT` on live input, `Job::push_record`): `Err(reason)`
/// rejects the line with that reason, like a malformed update line. A dataflow that takes
/// records declares its parser with `Typed::with_records`; the driver hands the check to the live
/// front end.
#[derive(Clone)]
pub struct RecordCheck(pub std::sync::Arc<CheckRecord>);

/// The function inside a [`RecordCheck`].
pub type CheckRecord = dyn Fn(&str) -> Result<(), String> + Send + Sync;

impl RecordCheck {
    /// A check from any parser: a record is accepted when `parse` reads it.
    pub fn from_parser<R, E: std::fmt::Display>(parse: impl Fn(&str) -> Result<R, E> + Send + Sync + 'static) -> Self {
        RecordCheck(std::sync::Arc::new(move |text| parse(text).map(|_| ()).map_err(|e| e.to_string())))
    }

    /// Every check of `checks` must accept a record (one record input feeds every dataflow of a
    /// run that takes records); `None` when there is none.
    pub fn all(checks: Vec<RecordCheck>) -> Option<RecordCheck> {
        match checks.len() {
            0 => None,
            1 => checks.into_iter().next(),
            _ => Some(RecordCheck(std::sync::Arc::new(move |text| checks.iter().try_for_each(|c| (c.0)(text))))),
        }
    }

    /// Applies the check.
    pub fn check(&self, text: &str) -> Result<(), String> {
        (self.0)(text)
    }
}

impl std::fmt::Debug for RecordCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordCheck")
    }
}

/// One change of the edge multiset.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Update {
    /// The edge's source vertex.
    pub src: Node,
    /// The edge's destination vertex.
    pub dst: Node,
    /// `None` when the line gave no weight ([`DEFAULT_WEIGHT`] is used).
    pub weight: Option<f64>,
    /// `+1` (insert one copy) or `-1` (delete one copy).
    pub diff: i8,
}

impl Update {
    /// Inserts one copy of the unweighted edge `src -> dst` (the line `+ src dst`).
    pub fn insert(src: Node, dst: Node) -> Self {
        Update { src, dst, weight: None, diff: 1 }
    }
    /// Deletes one copy of the unweighted edge `src -> dst` (the line `- src dst`).
    pub fn delete(src: Node, dst: Node) -> Self {
        Update { src, dst, weight: None, diff: -1 }
    }
    /// The dataflow edge this update changes.
    pub fn edge(&self) -> Edge {
        (self.src, self.dst, weight_bits(self.weight))
    }
}
