//! The systems of the registry ([`super::system::all`]), one file per kind:
//! * [`dataflow`] — `ripples`, `ripples-general`, `dd-propagate`: dataflows under the driver;
//! * [`window`] — `ripples-window`: the `wcc-window` stream as an event-time window;
//! * [`union_find`] — `uf-hash`, `uf-dense`: one sequential union-find pass (insert-only WCC);
//! * [`recompute`] — `recompute`: from scratch over the live graph at every epoch.

pub mod dataflow;
pub mod recompute;
pub mod union_find;
pub mod window;
