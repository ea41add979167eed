//! Datasets, the streams cut from them, and the reference results.
//!
//! A dataset is written once as a canonical edge list (`OUT/data/NAME.e`: generated graphs in
//! generation order, files in file order, temporal files in time order); its checksum is the
//! CRC-32 of that file. A stream kind turns it into an initial graph and an update file
//! (`OUT/streams/`), and the reference result of an algorithm over the stream's final graph is
//! computed once by the sequential oracle (`OUT/reference/`). Weights are dropped: every edge
//! has unit weight.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use super::config::{Cell, DatasetSource, Experiment};
use super::ExperimentError;
use crate::dataflow::{self, Params};
use crate::sources::parse::{self, temporal};
use crate::sources::{generate, stream};
use crate::types::{Node, Time, Update};

/// What every record says about its dataset.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DatasetInfo {
    /// The dataset's name (its `name` key in the experiment file).
    pub name: String,
    /// CRC-32 (hex) of the canonical edge list.
    pub checksum: String,
    /// Distinct vertices among the canonical edges.
    pub vertices: u64,
    /// Edges in the canonical edge list (copies counted).
    pub edges: u64,
}

/// A prepared dataset: its canonical edges (in order) and its facts.
pub struct Prepared {
    /// The canonical edges as `(src, dst)`, in the order written to `OUT/data/NAME.e`.
    pub edges: Vec<(Node, Node)>,
    /// Temporal datasets: each edge's event time (non-decreasing; 0 for a line without one).
    pub times: Option<Vec<Time>>,
    /// Name, checksum and counts, as every record of this dataset carries them.
    pub info: DatasetInfo,
}

fn io<'a>(what: &'a str, path: &'a Path) -> impl FnOnce(std::io::Error) -> ExperimentError + 'a {
    move |e| ExperimentError::Io(format!("{} {}: {}", what, path.display(), e))
}

fn source_error(e: parse::SourceError) -> ExperimentError {
    match e {
        parse::SourceError::Input(i) => ExperimentError::Input(i.to_string()),
        other => ExperimentError::Io(other.to_string()),
    }
}

/// Reads or generates dataset `name` and writes its canonical edge list under `out/data`.
pub fn prepare(exp: &Experiment, name: &str, out: &Path) -> Result<Prepared, ExperimentError> {
    let d = exp.dataset(name).ok_or_else(|| ExperimentError::Input(format!("unknown dataset {name:?}")))?;
    let mut times = None;
    let edges: Vec<(Node, Node)> = match &d.source {
        DatasetSource::Rmat { scale, edge_factor, seed } => generate::rmat(*scale, *edge_factor, *seed),
        DatasetSource::Er { vertices, edges, seed } => generate::erdos_renyi(*vertices, *edges, *seed),
        DatasetSource::File { path } => {
            parse::read_edges(path).map_err(source_error)?.into_iter().map(|(s, d, _)| (s, d)).collect()
        }
        DatasetSource::Temporal { path, .. } => {
            let format = &exp.formats[name];
            let mut timed = temporal::read_temporal(path, format).map_err(source_error)?;
            // Time order (stable), as `arrival_order` sorts.
            timed.sort_by_key(|e| e.time);
            times = Some(timed.iter().map(|e| e.time.unwrap_or(0)).collect());
            timed.iter().map(|e| (e.src, e.dst)).collect()
        }
    };
    let dir = out.join("data");
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let file = dir.join(format!("{name}.e"));
    parse::write_edges(&file, &edges).map_err(io("cannot write", &file))?;
    let bytes = std::fs::read(&file).map_err(io("cannot read", &file))?;
    let mut vertices: Vec<Node> = edges.iter().flat_map(|&(s, d)| [s, d]).collect();
    vertices.sort_unstable();
    vertices.dedup();
    let info = DatasetInfo {
        name: name.to_string(),
        checksum: format!("{:08x}", crc32fast::hash(&bytes)),
        vertices: vertices.len() as u64,
        edges: edges.len() as u64,
    };
    Ok(Prepared { edges, times, info })
}

/// A stream's files.
#[derive(Clone, Debug)]
pub struct StreamFiles {
    /// The initial graph's edge file (epoch 0), under `OUT/streams/`.
    pub graph: PathBuf,
    /// The update file (`+ src dst` / `- src dst`, or `+ src dst @T` for event-time streams), under
    /// `OUT/streams/`.
    pub updates: PathBuf,
    /// Edges in the initial graph file.
    pub initial_edges: u64,
    /// Lines in the update file.
    pub updates_count: u64,
    /// The multiset of edges live at the end, one entry per copy.
    pub final_edges: Vec<(Node, Node)>,
}

/// The initial graph and updates of stream kind `kind` over `edges`.
pub fn cut(exp: &Experiment, kind: &str, edges: &[(Node, Node)], seed: u64) -> (Vec<(Node, Node)>, Vec<Update>) {
    let p = &exp.stream;
    match kind {
        "insert" | "timestamp" | "event-sliding" | "event-tumbling" => (Vec::new(), stream::insert_only(edges)),
        "insert-random" => {
            let mut shuffled = edges.to_vec();
            shuffled.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
            (Vec::new(), stream::insert_only(&shuffled))
        }
        "bulk" => {
            let k = ((edges.len() as f64) * p.bulk_fraction).floor() as usize;
            (edges[..k].to_vec(), stream::insert_only(&edges[k..]))
        }
        "churn" => (edges.to_vec(), stream::churn(edges, p.churn_updates, p.delete_fraction, seed)),
        // "window": explicit deletions, each edge leaving `window` insertions after it came.
        _ => (Vec::new(), stream::sliding_window(edges, p.window)),
    }
}

/// Writes the stream of `cell` over the prepared dataset (once per dataset, kind and seed).
pub fn stream_files(
    exp: &Experiment,
    cell: &Cell,
    data: &Prepared,
    out: &Path,
) -> Result<StreamFiles, ExperimentError> {
    let dir = out.join("streams");
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let stem = format!("{}-{}-s{}", cell.dataset, cell.stream, cell.seed);
    let (graph, updates) = (dir.join(format!("{stem}.e")), dir.join(format!("{stem}.u")));
    let (initial, ups) = cut(exp, &cell.stream, &data.edges, cell.seed);
    parse::write_edges(&graph, &initial).map_err(io("cannot write", &graph))?;
    if let (Some(times), "event-sliding" | "event-tumbling") = (&data.times, cell.stream.as_str()) {
        // Event times: the edges in time order, each line ending with `@T`; the final graph is the
        // window at the largest time M (sliding: M - span < T <= M; tumbling: M's window).
        let timed: Vec<(Update, Time)> = ups.iter().copied().zip(times.iter().copied()).collect();
        parse::write_timed_updates(&updates, &timed).map_err(io("cannot write", &updates))?;
        let span = exp.stream.span;
        let last = times.last().copied().unwrap_or(0);
        let start = if cell.stream == "event-sliding" { (last + 1).saturating_sub(span) } else { last / span * span };
        let final_edges = data.edges.iter().zip(times).filter(|(_, &t)| t >= start).map(|(&e, _)| e).collect();
        return Ok(StreamFiles { graph, updates, initial_edges: 0, updates_count: ups.len() as u64, final_edges });
    }
    parse::write_updates(&updates, &ups).map_err(io("cannot write", &updates))?;
    let mut live: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    for &e in &initial {
        *live.entry(e).or_insert(0) += 1;
    }
    for u in &ups {
        *live.entry((u.src, u.dst)).or_insert(0) += u.diff as i64;
    }
    let final_edges = live.into_iter().flat_map(|(e, n)| std::iter::repeat_n(e, n.max(0) as usize)).collect::<Vec<_>>();
    Ok(StreamFiles {
        graph,
        updates,
        initial_edges: initial.len() as u64,
        updates_count: ups.len() as u64,
        final_edges,
    })
}

/// The reference result (`vertex value` lines, sorted by vertex) of `algorithm` over `edges`,
/// from the sequential oracle; `None` for an algorithm without one.
pub fn reference(algorithm: &str, edges: &[(Node, Node)], source: Option<Node>) -> Option<String> {
    let weighted: Vec<(Node, Node, f64)> = edges.iter().map(|&(s, d)| (s, d, 1.0)).collect();
    let vertices = crate::oracle::vertex_set([], &weighted);
    let values: Vec<(Node, u64)> = match algorithm {
        "wcc" => crate::oracle::wcc(&vertices, &weighted).into_iter().collect(),
        "degree" => crate::oracle::degree(&vertices, &weighted).into_iter().collect(),
        other => crate::bench::reference::from_scratch(other, &weighted, source.unwrap_or(0))?,
    };
    let params = Params { source, ..Params::default() };
    let format = dataflow::by_name(algorithm, &params).ok()?.value_format();
    let mut text = String::new();
    for (v, x) in values {
        text.push_str(&v.to_string());
        text.push(' ');
        format.write(x, &mut text);
        text.push('\n');
    }
    Some(text)
}

/// The lines of a result file sorted by vertex (numerically), for comparison.
pub fn sorted_result(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.sort_by_key(|l| (l.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()), l.to_string()));
    lines.iter().map(|l| format!("{l}\n")).collect()
}
