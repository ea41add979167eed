//! **Typed dataflows**: a user's dataflow with outputs of its own key and value types, several
//! named outputs, and errors the driver reports.
//!
//! [`typed`] wraps a closure `(GraphInput, &mut Outputs) -> Result<(), E>` as an
//! [`Algorithm`]. The closure builds its collections and hands each output to [`Outputs`]:
//!
//! * [`Outputs::display`]: any `K, V` with [`Display`]; files as for the built-in algorithms,
//!   `epoch key value diff` lines in the change log and `key value` lines in the result file;
//! * [`Outputs::json`]: any `K, V` with [`Serialize`]; JSON lines,
//!   `{"epoch":E,"key":K,"value":V,"diff":D}` in the change log and `{"key":K,"value":V}` in the
//!   result file;
//! * [`Outputs::vertex`]: the built-in algorithms' `(vertex, u64)` output, written exactly as theirs;
//! * [`Outputs::errors`]: a collection of errors: a record in it at an epoch stops the run with
//!   [`RunError::Dataflow`](crate::driver::RunError::Dataflow) naming the dataflow and the epoch,
//!   and nothing of that epoch is written.
//!
//! A closure returning `Err(e)` fails the run before anything is fed or written
//! ([`RunError::Build`](crate::driver::RunError::Build), `e`'s `Display` as the message).
//!
//! Files: output `NAME` of dataflow `DF` is written to `DIR/DF.NAME.out` and
//! `DIR/DF.NAME.changes` with `--output-dir DIR`; a dataflow with a single output may use
//! `--output` and `--changes` instead. With a state directory (`--state-dir`) the typed change
//! logs continue across a resume and a `--restart` exactly as the built-ins' do: each is cut back
//! to the length the state directory's mark records for it (by output name), the recovered
//! epochs are recomputed without being written again, and the run appends after the last
//! durable epoch (`--changes -` included), ending byte-identical to an uninterrupted run
//! (`tests/typed_program.rs`, SIGKILL trials).
//!
//! **Cost.** Each typed output is rendered to text inside the dataflow, on the worker that holds
//! the record, by one operator per output (`Render`, the only code instantiated for `K, V`: it
//! moves each record's text into the rows or, when it cannot be written, into the errors); the
//! driver, the exchange to the writing worker and the sinks see one row type, `(String, String)`,
//! and the sink writes each change line into one reused buffer. Every output change therefore
//! allocates its key and value text and ships them to the writer, where the `(vertex, u64)` path
//! ships two integers. Measured (release build, 2-core machine, load 1.4-1.7 with
//! the runs themselves: out-degree of an R-MAT scale-14 graph, `ripples gen rmat --scale 14`,
//! under 300,000 updates, `ripples gen updates --count 300000 --delete-fraction 0.5`, in epochs
//! of 1,000, change log and result file written; `tests/typed_program.rs` hosts the three forms,
//! medians of 8 alternating runs): with 1 worker 0.77 M updates/s as `(vertex, u64)`, 0.67 M
//! through [`Outputs::display`] (1.14x), 0.61 M through [`Outputs::json`] (1.26x); with 2
//! workers 1.02 M, 1.02 M (1.01x) and 0.91 M (1.13x). The writing worker sorts the rows by their
//! text (by 16-byte prefixes first), keeps the rows' state in a hash map by key and writes the
//! lines; the rows' strings are made on one worker and freed on another, which the crate's
//! allocator ([`crate::allocator`], feature `mimalloc`) serves from mimalloc: with glibc's malloc
//! alone the 2-worker `display` run took 1.37x. An output-heavy dataflow pays that much, one whose work is not in its output changes
//! pays little. Rows are consolidated and ordered by their text (byte order of the rendered key,
//! then retractions before insertions, then the rendered value), not by `K`'s own order; two
//! values that render alike are one row.
//!
//! **Served.** With `--serve`, output `NAME` of dataflow `DF` is the table `DF_NAME` (`-` and
//! `.` written `_`) with columns `key` and `value`, typed from the Rust types: integers BIGINT,
//! `f32`/`f64`/[`Float`] DOUBLE PRECISION, anything else (strings, other `Display` values) TEXT;
//! a [`Outputs::json`] output's key and value are TEXT holding the JSON (SQLite's `json_extract`
//! reads it). `AS OF`, `SUBSCRIBE`, the `changes` view (the key in its `vertex` column) and
//! psql's `\d` work as for the built-ins' tables; an integer outside BIGINT stops the run with
//! an error naming the output, the key or value and the epoch. An embedded
//! [`Job`](crate::job::Job) reads the current rows of output `DF.NAME` as text
//! (`Job::rows`) or decoded to the dataflow's own types where they implement `Deserialize`
//! (`Job::rows_as`), and each epoch's changes (`EpochChanges::rows_as`).
//!
//! ```
//! use ripples::dataflow::typed::{typed, Float};
//! use ripples::driver::{self, MemoryStream, RunOptions};
//!
//! // Per vertex name: (out-degree, in-degree); and the mean out-degree, as JSON.
//! let degrees = typed("degrees", |input, out| {
//!     let outs = input.edges.clone().map(|(s, _, _)| s).count();
//!     let ins = input.edges.clone().map(|(_, d, _)| d).count();
//!     let both = outs.clone().join(ins).map(|(v, (o, i))| (format!("v{v}"), (o as u64, i as u64)));
//!     out.display("both", both.map(|(v, (o, i))| (v, format!("{o}/{i}"))));
//!     let mean = outs.map(|(_, d)| ((), d)).reduce(|_, counts, out| {
//!         let (sum, n) = counts.iter().fold((0, 0), |(s, n), (d, c)| (s + **d * *c, n + *c));
//!         out.push((Float(sum as f64 / n as f64), 1))
//!     });
//!     out.json("mean", mean.map(|((), m)| ("mean".to_string(), m)));
//!     Ok::<(), String>(())
//! });
//! let dir = tempfile::tempdir().unwrap();
//! let stream = MemoryStream { initial: vec![(1, 2, None), (2, 1, None), (1, 3, None)], batch: 1, ..Default::default() };
//! let options = RunOptions { output_dir: Some(dir.path().to_path_buf()), ..RunOptions::memory(stream, 1) };
//! driver::run(options, degrees).unwrap();
//! let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
//! assert_eq!(read("degrees.both.out"), "v1 2/1\nv2 1/1\n");
//! assert_eq!(read("degrees.mean.out"), "{\"key\":\"mean\",\"value\":1.5}\n");
//! assert_eq!(read("degrees.mean.changes"), "{\"epoch\":0,\"key\":\"mean\",\"value\":1.5,\"diff\":1}\n");
//! ```

use std::fmt::Display;
use std::marker::PhantomData;

use differential_dataflow::{Data, VecCollection};
use serde::Serialize;

use super::{Algorithm, GraphInput, ResultCollection, ValueFormat};
pub use crate::types::format::{ColumnType, RowFormat};
use crate::types::{Diff, RecordCheck, Time};

/// A rendered output record: the key's text and the value's text.
pub type Row = (String, String);
/// A collection of rendered output records.
pub type RowCollection<'a> = VecCollection<'a, Time, Row, Diff>;
/// A collection of error messages.
pub type ErrorCollection<'a> = VecCollection<'a, Time, String, Diff>;

/// A floating-point value usable as differential data: ordered by [`f64::total_cmp`] (so
/// retractions are bit-exact), written as the built-in algorithms write floats
/// ([`format_f64`](crate::types::format::format_f64)) and as a JSON number by serde.
///
/// ```
/// use ripples::dataflow::typed::Float;
/// assert!(Float(0.5) < Float(1.0));
/// assert_eq!(Float(1.5).to_string(), "1.5e0"); // as the built-in algorithms write floats
/// assert_eq!(serde_json::to_string(&Float(0.25)).unwrap(), "0.25");
/// ```
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(transparent)]
pub struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl Eq for Float {}
impl PartialOrd for Float {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Float {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl Display for Float {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::types::format::format_f64(self.0))
    }
}

/// One named row output of a dataflow.
pub struct RowOutput<'a> {
    /// The output's name (its files are `<dataflow>.<name>.out` and `.changes`).
    pub name: String,
    /// How it is written.
    pub format: RowFormat,
    /// The SQL types its key and value are served as (`--serve`).
    pub columns: (ColumnType, ColumnType),
    /// Its rendered records.
    pub rows: RowCollection<'a>,
}

/// The outputs one dataflow hands the driver: at most one `(vertex, u64)` output (the built-in
/// algorithms' kind), any number of named row outputs, and errors.
///
/// ```
/// use ripples::dataflow::typed::typed;
/// use ripples::driver::{self, MemoryStream, RunOptions};
/// // Two outputs may not share a name: the build fails, naming it.
/// let twice = typed("twice", |input, out| {
///     out.display("a", input.edges.clone().map(|(s, d, _)| (s, d)));
///     out.display("a", input.edges.map(|(s, d, _)| (d, s)));
///     Ok::<(), String>(())
/// });
/// let stream = MemoryStream { initial: vec![(1, 2, None)], batch: 1, ..Default::default() };
/// let e = driver::run(RunOptions::memory(stream, 1), twice).unwrap_err();
/// assert_eq!(e.to_string(), "cannot build dataflow twice: output 'a' is given twice");
/// ```
#[derive(Default)]
pub struct Outputs<'a> {
    /// The `(vertex, u64)` output, if any, and how its values are written.
    pub vertex: Option<(ResultCollection<'a>, ValueFormat)>,
    /// The named row outputs, in the order given.
    pub rows: Vec<RowOutput<'a>>,
    /// The errors: a record here at an epoch stops the run.
    pub errors: Option<ErrorCollection<'a>>,
    /// The first misuse (a name given twice, a bad name), reported as a build failure.
    problem: Option<String>,
}

impl<'a> Outputs<'a> {
    /// The single `(vertex, u64)` output of a built-in algorithm.
    pub fn of_vertex(result: ResultCollection<'a>, format: ValueFormat) -> Self {
        Outputs { vertex: Some((result, format)), ..Outputs::default() }
    }

    /// Sets the `(vertex, u64)` output, written exactly as the built-in algorithms' (its files
    /// are named after the dataflow: `<dataflow>.out`, `<dataflow>.changes`).
    ///
    /// ```
    /// use ripples::dataflow::typed::typed;
    /// use ripples::driver::{self, MemoryStream, RunOptions};
    /// use ripples::types::format::ValueFormat;
    /// let both = typed("both", |input, out| {
    ///     let degree = input.edges.map(|(s, _, _)| s).count().map(|(v, d)| (v, d as u64));
    ///     out.vertex(degree.clone(), ValueFormat::Integer);
    ///     out.display("text", degree.map(|(v, d)| (format!("vertex-{v}"), d)));
    ///     Ok::<(), String>(())
    /// });
    /// let stream = MemoryStream { initial: vec![(1, 2, None), (1, 3, None)], batch: 1, ..Default::default() };
    /// let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 1) };
    /// let report = driver::run(options, both).unwrap().unwrap();
    /// assert_eq!(report.final_state.unwrap(), vec![(1, 2)]);
    /// assert_eq!(report.outputs[0].final_state.clone().unwrap(), vec![("vertex-1".to_string(), "2".to_string())]);
    /// ```
    pub fn vertex(&mut self, result: ResultCollection<'a>, format: ValueFormat) -> &mut Self {
        if self.vertex.is_some() {
            self.problem.get_or_insert_with(|| "the (vertex, u64) output is given twice".into());
        }
        self.vertex = Some((result, format));
        self
    }

    /// Adds output `name`, written with `Display`: `key value` lines. Neither text may hold a
    /// line break (such a record is reported as an error of the run); a key with spaces makes
    /// the line ambiguous to a reader (prefer [`Outputs::json`]).
    ///
    /// ```
    /// use ripples::dataflow::typed::typed;
    /// use ripples::driver::{self, MemoryStream, RunOptions};
    /// let named = typed("named", |input, out| {
    ///     out.display("edge", input.edges.map(|(s, d, _)| (format!("{s}->{d}"), if s < d { "up" } else { "down" })));
    ///     Ok::<(), String>(())
    /// });
    /// let dir = tempfile::tempdir().unwrap();
    /// let (changes, output) = (dir.path().join("c"), dir.path().join("o"));
    /// let stream = MemoryStream { initial: vec![(2, 1, None), (1, 2, None)], batch: 1, ..Default::default() };
    /// let options = RunOptions { changes: Some(changes.clone()), output: Some(output.clone()), ..RunOptions::memory(stream, 1) };
    /// driver::run(options, named).unwrap();
    /// assert_eq!(std::fs::read_to_string(&changes).unwrap(), "0 1->2 up 1\n0 2->1 down 1\n");
    /// assert_eq!(std::fs::read_to_string(&output).unwrap(), "1->2 up\n2->1 down\n");
    /// ```
    pub fn display<K, V>(&mut self, name: &str, collection: VecCollection<'a, Time, (K, V), Diff>) -> &mut Self
    where
        K: Data + Display,
        V: Data + Display,
    {
        let output = name.to_string();
        let rendered = render_split(collection, move |k, v| {
            let (key, value) = (k.to_string(), v.to_string());
            if key.contains('\n') || value.contains('\n') {
                Err(format!("output '{output}': record {key:?} {value:?} holds a line break"))
            } else {
                Ok((key, value))
            }
        });
        self.add_rendered(name, RowFormat::Text, (column::<K>(), column::<V>()), rendered)
    }

    /// Adds output `name`, written as JSON lines by serde. A record serde cannot write (a map
    /// with non-string keys) is reported as an error of the run.
    ///
    /// ```
    /// use ripples::dataflow::typed::typed;
    /// use ripples::driver::{self, MemoryStream, RunOptions};
    /// let pairs = typed("pairs", |input, out| {
    ///     out.json("pair", input.edges.map(|(s, d, _)| ((s, d), vec!["an", "edge"])));
    ///     Ok::<(), String>(())
    /// });
    /// let dir = tempfile::tempdir().unwrap();
    /// let changes = dir.path().join("c");
    /// let stream = MemoryStream { initial: vec![(1, 2, None)], batch: 1, ..Default::default() };
    /// let options = RunOptions { changes: Some(changes.clone()), collect: true, ..RunOptions::memory(stream, 1) };
    /// let report = driver::run(options, pairs).unwrap().unwrap();
    /// let line = std::fs::read_to_string(&changes).unwrap();
    /// assert_eq!(line, "{\"epoch\":0,\"key\":[1,2],\"value\":[\"an\",\"edge\"],\"diff\":1}\n");
    /// let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
    /// assert_eq!(parsed["key"][1], 2);
    /// assert_eq!(report.outputs[0].changes.as_ref().unwrap()[0].key, "[1,2]");
    /// ```
    pub fn json<K, V>(&mut self, name: &str, collection: VecCollection<'a, Time, (K, V), Diff>) -> &mut Self
    where
        K: Data + Serialize,
        V: Data + Serialize,
    {
        let output = name.to_string();
        let rendered =
            render_split(collection, move |k, v| match (serde_json::to_string(&k), serde_json::to_string(&v)) {
                (Ok(key), Ok(value)) => Ok((key, value)),
                (Err(e), _) | (_, Err(e)) => Err(format!("output '{output}': a record cannot be written as JSON: {e}")),
            });
        self.add_rendered(name, RowFormat::Json, (ColumnType::Text, ColumnType::Text), rendered)
    }

    /// Adds already rendered rows as output `name` (the text is written as given, and served as
    /// TEXT).
    pub fn rows(&mut self, name: &str, format: RowFormat, rows: RowCollection<'a>) -> &mut Self {
        self.add_rows(name, format, (ColumnType::Text, ColumnType::Text), rows)
    }

    fn add_rows(
        &mut self,
        name: &str,
        format: RowFormat,
        columns: (ColumnType, ColumnType),
        rows: RowCollection<'a>,
    ) -> &mut Self {
        if name.is_empty() || name.contains(['/', '\\', '\n']) || name.starts_with('.') {
            self.problem.get_or_insert_with(|| format!("output name {name:?} cannot name a file"));
        } else if self.rows.iter().any(|o| o.name == name) {
            self.problem.get_or_insert_with(|| format!("output '{name}' is given twice"));
        }
        self.rows.push(RowOutput { name: name.to_string(), format, columns, rows });
        self
    }

    /// Adds a collection of errors: any record in it at an epoch stops the run there, with the
    /// record's `Display` as the message (the smallest, if there are several). Nothing of that
    /// epoch is written; every worker stops at the same epoch.
    ///
    /// ```
    /// use ripples::dataflow::typed::typed;
    /// use ripples::driver::{self, MemoryStream, RunError, RunOptions};
    /// use ripples::types::Update;
    /// // Self-loops are refused, as they arrive.
    /// let strict = typed("strict", |input, out| {
    ///     out.errors(input.edges.clone().filter(|(s, d, _)| s == d).map(|(s, _, _)| format!("self-loop at {s}")));
    ///     out.display("edges", input.edges.map(|(s, d, _)| (s, d)));
    ///     Ok::<(), String>(())
    /// });
    /// let stream = MemoryStream {
    ///     initial: vec![(1, 2, None)],
    ///     updates: vec![Update::insert(2, 3), Update::insert(4, 4)],
    ///     batch: 1,
    ///     ..Default::default()
    /// };
    /// let e = driver::run(RunOptions::memory(stream, 2), strict).unwrap_err();
    /// assert!(matches!(&e, RunError::Dataflow { epoch: 2, .. }));
    /// assert_eq!(e.to_string(), "dataflow strict failed at epoch 2: self-loop at 4");
    /// ```
    pub fn errors<M: Data + Display>(&mut self, errors: VecCollection<'a, Time, M, Diff>) -> &mut Self {
        let errors = errors.map(|m| m.to_string());
        self.errors = Some(match self.errors.take() {
            Some(e) => e.concat(errors),
            None => errors,
        });
        self
    }

    /// The first misuse, if any (the driver reports it as a build failure).
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    fn add_rendered(
        &mut self,
        name: &str,
        format: RowFormat,
        columns: (ColumnType, ColumnType),
        (rows, errors): (RowCollection<'a>, ErrorCollection<'a>),
    ) -> &mut Self {
        self.errors(errors);
        self.add_rows(name, format, columns, rows)
    }
}

/// Renders every record of `collection` with `render` in one operator, on the worker that holds
/// it: the rendered rows and the render errors, each moved into its own collection.
fn render_split<'a, K, V, F>(
    collection: VecCollection<'a, Time, (K, V), Diff>,
    render: F,
) -> (RowCollection<'a>, ErrorCollection<'a>)
where
    K: Data,
    V: Data,
    F: Fn(K, V) -> Result<Row, String> + 'static,
{
    use differential_dataflow::AsCollection;
    use timely::container::{CapacityContainerBuilder, ContainerBuilder, PushInto};
    use timely::dataflow::channels::pact::Pipeline;
    use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
    use timely::progress::operate::FrontierInterest;
    let stream = collection.inner;
    let mut builder = OperatorBuilder::new("Render".to_owned(), stream.scope());
    let mut input = builder.new_input(stream, Pipeline);
    builder.set_notify_for(0, FrontierInterest::Never);
    let (mut rows_out, rows) = builder.new_output::<Vec<(Row, Time, Diff)>>();
    let (mut errors_out, errors) = builder.new_output::<Vec<(String, Time, Diff)>>();
    builder.build(move |_| {
        let mut rows_cb = CapacityContainerBuilder::<Vec<(Row, Time, Diff)>>::default();
        let mut errors_cb = CapacityContainerBuilder::<Vec<(String, Time, Diff)>>::default();
        move |_frontiers| {
            let mut rows_h = rows_out.activate();
            let mut errors_h = errors_out.activate();
            input.for_each(|cap, data| {
                for ((k, v), t, d) in data.drain(..) {
                    match render(k, v) {
                        Ok(row) => {
                            rows_cb.push_into((row, t, d));
                            while let Some(container) = rows_cb.extract() {
                                rows_h.give(&cap, container);
                            }
                        }
                        Err(e) => {
                            errors_cb.push_into((e, t, d));
                            while let Some(container) = errors_cb.extract() {
                                errors_h.give(&cap, container);
                            }
                        }
                    }
                }
                while let Some(container) = rows_cb.finish() {
                    rows_h.give(&cap, container);
                }
                while let Some(container) = errors_cb.finish() {
                    errors_h.give(&cap, container);
                }
            });
        }
    });
    (rows.as_collection(), errors.as_collection())
}

/// The SQL type a `Display` key or value of type `T` is served as ([`Float`] too is a float).
fn column<T: 'static>() -> ColumnType {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<Float>() {
        ColumnType::Float
    } else {
        ColumnType::of::<T>()
    }
}

/// A user's dataflow with typed outputs: a name and a closure ([`typed`]).
pub struct Typed<F, E> {
    name: String,
    build: F,
    /// The record input's check, when the dataflow reads records ([`Typed::with_records`]).
    records: Option<RecordCheck>,
    error: PhantomData<fn() -> E>,
}

impl<F, E> Typed<F, E> {
    /// Declares that the dataflow reads the run's record input, whose records `parse` reads:
    /// live input then accepts `record + TEXT` and `record - TEXT` lines (TCP, `--follow`,
    /// stdin) and [`Job::push_record`](crate::job::Job::push_record), and each record's text
    /// must pass `parse` before its line is accepted (an error names the producer or source, the
    /// line and `parse`'s message, and nothing of that epoch is applied, as for a bad edge
    /// line). A deletion must find a copy of its record present. Records are logged to the
    /// state directory and recovered exactly like edges. The dataflow reads them with
    /// [`live_records`] (with the same `parse`). Not in windowed streams (a record line is
    /// refused there).
    pub fn with_records<R, RE: Display>(
        mut self,
        parse: impl Fn(&str) -> Result<R, RE> + Send + Sync + 'static,
    ) -> Self {
        self.records = Some(RecordCheck::from_parser(parse));
        self
    }
}

/// Wraps a closure that builds a dataflow's outputs as an [`Algorithm`] (see the module docs).
/// The closure runs once per worker; an `Err` fails the run before anything is fed.
///
/// ```
/// use ripples::dataflow::typed::typed;
/// use ripples::driver::{self, MemoryStream, RunError, RunOptions};
/// // A dataflow that refuses to be built.
/// let refused = typed("refused", |_input, _out| Err("needs a weighted graph"));
/// let stream = MemoryStream { initial: vec![(1, 2, None)], batch: 1, ..Default::default() };
/// let e = driver::run(RunOptions::memory(stream, 1), refused).unwrap_err();
/// assert!(matches!(e, RunError::Build { .. }));
/// assert_eq!(e.to_string(), "cannot build dataflow refused: needs a weighted graph");
/// ```
pub fn typed<F, E>(name: &str, build: F) -> Typed<F, E>
where
    F: for<'a> Fn(GraphInput<'a>, &mut Outputs<'a>) -> Result<(), E> + Send + Sync + 'static,
    E: Display + 'static,
{
    Typed { name: name.to_string(), build, records: None, error: PhantomData }
}

impl<F, E> Algorithm for Typed<F, E>
where
    F: for<'a> Fn(GraphInput<'a>, &mut Outputs<'a>) -> Result<(), E> + Send + Sync + 'static,
    E: Display + 'static,
{
    fn name(&self) -> String {
        self.name.clone()
    }
    /// A typed dataflow's `(vertex, u64)` output, if it sets one ([`Outputs::vertex`]); empty
    /// otherwise (the driver calls [`Algorithm::build_outputs`]).
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        let empty = input.edges.clone().filter(|_| false).map(|_| (0, 0));
        match self.build_outputs(input) {
            Ok(Outputs { vertex: Some((result, _)), .. }) => result,
            _ => empty,
        }
    }
    fn record_check(&self) -> Option<RecordCheck> {
        self.records.clone()
    }
    fn build_outputs<'a>(&self, input: GraphInput<'a>) -> Result<Outputs<'a>, String> {
        let mut outputs = Outputs::default();
        (self.build)(input, &mut outputs).map_err(|e| e.to_string())?;
        match outputs.problem() {
            Some(problem) => Err(problem.to_string()),
            None => Ok(outputs),
        }
    }
    fn value_format(&self) -> ValueFormat {
        ValueFormat::Integer
    }
}

/// Reads a file of the user's own records, one update per line: `EPOCH + RECORD` inserts
/// `RECORD` at epoch `EPOCH`, `EPOCH - RECORD` removes it (blank lines and lines starting with
/// `#` are skipped). `parse` reads the `RECORD` text (everything after the sign and one space).
/// Epochs are the driver's epoch numbers (0 is the initial graph); not for windowed runs. A bad
/// line is an error naming the file, the line and the problem (in a build closure, return it:
/// the run stops with [`RunError::Build`](crate::driver::RunError::Build) before anything is fed).
///
/// ```
/// use ripples::dataflow::typed::read_records;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("roots.txt");
/// std::fs::write(&path, "# roots\n0 + 1\n3 + 7\n3 - 1\n").unwrap();
/// let parse = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?} is not a vertex: {e}"));
/// assert_eq!(read_records(&path, parse).unwrap(), vec![(1, 0, 1), (7, 3, 1), (1, 3, -1)]);
/// std::fs::write(&path, "0 + 1\n2 + x\n").unwrap();
/// let e = read_records(&path, parse).unwrap_err();
/// assert_eq!(e, format!("{}:2: \"x\" is not a vertex: invalid digit found in string", path.display()));
/// ```
pub fn read_records<R, E, P>(path: &std::path::Path, parse: P) -> Result<Vec<(R, Time, Diff)>, String>
where
    E: Display,
    P: Fn(&str) -> Result<R, E>,
{
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = |problem: String| format!("{}:{}: {}", path.display(), i + 1, problem);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (epoch, rest) = line.split_once(' ').unwrap_or((line, ""));
        let epoch: Time = epoch.parse().map_err(|_| at(format!("{epoch:?} is not an epoch number")))?;
        let (diff, record) = match rest.split_once(' ') {
            Some(("+", record)) => (1, record),
            Some(("-", record)) => (-1, record),
            _ => return Err(at(format!("expected `EPOCH + RECORD` or `EPOCH - RECORD`, found {line:?}"))),
        };
        out.push((parse(record).map_err(|e| at(e.to_string()))?, epoch, diff));
    }
    Ok(out)
}

/// The user's records as a collection of the dataflow `input` belongs to: each update enters at
/// its epoch (fed once, by worker 0; records are exchanged like any other data). With
/// [`read_records`] this is a second input collection: BFS roots as data, where changing a root
/// is an update of the running dataflow, not a new one.
///
/// ```
/// use ripples::dataflow::bfs::hops;
/// use ripples::dataflow::typed::{records, typed};
/// use ripples::driver::{self, MemoryStream, RunOptions};
/// use ripples::types::Update;
/// // Hops from the roots present: 1 from epoch 0, then 3 instead from epoch 1.
/// let bfs = typed("bfs", |input, out| {
///     let roots = records(&input, vec![(1u64, 0, 1), (1, 1, -1), (3, 1, 1)]);
///     out.display("hops", hops(input.edges.map(|(s, d, _)| (s, d)), roots));
///     Ok::<(), String>(())
/// });
/// let stream = MemoryStream {
///     initial: vec![(1, 2, None), (2, 3, None), (3, 4, None)],
///     updates: vec![Update::insert(4, 5)],
///     batch: 1,
///     ..Default::default()
/// };
/// let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
/// let report = driver::run(options, bfs).unwrap().unwrap();
/// let rows = report.outputs[0].final_state.clone().unwrap();
/// let text: Vec<String> = rows.iter().map(|(k, v)| format!("{k}:{v}")).collect();
/// assert_eq!(text, ["3:0", "4:1", "5:2"]);
/// ```
pub fn records<'a, R: Data>(input: &GraphInput<'a>, updates: Vec<(R, Time, Diff)>) -> VecCollection<'a, Time, R, Diff> {
    use differential_dataflow::AsCollection;
    use timely::dataflow::operators::generic::operator::source;
    let scope = input.edges.scope();
    let mut updates = if scope.index() == 0 { updates } else { Vec::new() };
    updates.sort_by_key(|u| u.1);
    source::<_, timely::container::CapacityContainerBuilder<Vec<(R, Time, Diff)>>, _, _>(
        scope,
        "Records",
        move |capability, _info| {
            let mut capability = Some(capability);
            move |output| {
                if let Some(cap) = capability.take() {
                    for (record, time, diff) in updates.drain(..) {
                        output.session(&cap.delayed(&time)).give((record, time, diff));
                    }
                }
            }
        },
    )
    .as_collection()
}

/// The run's record input (see [`Typed::with_records`]) read by `parse`: each record accepted
/// from live input (`record + TEXT` lines, [`Job::push_record`](crate::job::Job::push_record))
/// enters at its epoch. `parse` must be the parser given to [`Typed::with_records`], which
/// every record has passed before it was accepted (a record it would refuse is left out). Empty
/// when the run has no record input (files, or a dataflow that did not declare one).
///
/// ```
/// use ripples::dataflow::bfs::hops;
/// use ripples::dataflow::typed::{live_records, typed};
/// use ripples::job::Job;
/// // Hops from the roots the program pushes as records.
/// let parse = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?} is not a vertex: {e}"));
/// let bfs = typed("bfs", move |input, out| {
///     let roots = live_records(&input, parse);
///     out.display("hops", hops(input.edges.map(|(s, d, _)| (s, d)), roots));
///     Ok::<(), String>(())
/// })
/// .with_records(parse);
/// let mut job = Job::builder().algorithm(bfs).start().unwrap();
/// for (s, d) in [(1, 2), (2, 3), (3, 4)] {
///     job.insert(s, d).unwrap();
/// }
/// job.push_record("1").unwrap();
/// let e = job.commit().unwrap();
/// job.wait(e).unwrap();
/// assert_eq!(job.rows_as::<u64, u64>("bfs.hops").unwrap(), [(1, 0), (2, 1), (3, 2), (4, 3)]);
/// // The root moves: one epoch deletes a record and inserts another.
/// job.remove_record("1").unwrap();
/// job.push_record("3").unwrap();
/// let e = job.commit().unwrap();
/// job.wait(e).unwrap();
/// assert_eq!(job.rows_as::<u64, u64>("bfs.hops").unwrap(), [(3, 0), (4, 1)]);
/// // A record the parser refuses stops the stream, naming the record.
/// job.push_record("x").unwrap();
/// let e = job.commit().and_then(|e| job.wait(e)).unwrap_err();
/// assert!(e.to_string().contains("bad record \"x\": \"x\" is not a vertex"), "{e}");
/// ```
pub fn live_records<'a, R, E, P>(input: &GraphInput<'a>, parse: P) -> VecCollection<'a, Time, R, Diff>
where
    R: Data,
    P: Fn(&str) -> Result<R, E> + 'static,
{
    match &input.records {
        Some(records) => records.clone().flat_map(move |text| parse(&text).ok()),
        None => input.edges.clone().flat_map(|_| None),
    }
}
