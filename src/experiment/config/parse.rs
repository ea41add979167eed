//! Checking an experiment file: [`Experiment::parse`], one step per key or table, in the order
//! the problems are reported (the first problem found is the error).

use std::collections::BTreeMap;
use std::path::Path;

use toml::Spanned;

use super::{
    CommandSpec, Dataset, DatasetSource, DatasetSpec, Experiment, File, StreamParams, ALGORITHMS, RIPPLES, STREAMS,
    TIMED,
};
use crate::experiment::systems::System;
use crate::experiment::ExperimentError;
use crate::sources::parse::temporal::{self, CsvSpec, TemporalFormat, TimeFormat};

/// The file being checked: where a problem is, for its [`ExperimentError::File`].
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    /// The 1-based line of byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())].matches('\n').count() + 1
    }

    /// The problem with `key` at byte `offset`.
    fn err(&self, offset: usize, key: &str, problem: String) -> ExperimentError {
        ExperimentError::File {
            path: self.path.to_path_buf(),
            line: self.line_of(offset),
            key: key.to_string(),
            problem,
        }
    }

    /// The file's keys and tables, as written.
    fn file(&self) -> Result<File, ExperimentError> {
        let text = self.text;
        toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let message = e.message().to_string();
            // The key the parser stopped at: the first word of its line.
            let start = text[..offset.min(text.len())].rfind('\n').map(|i| i + 1).unwrap_or(0);
            let key: String = text[start..]
                .chars()
                .skip_while(|c| c.is_whitespace() || *c == '[')
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == '.')
                .collect();
            self.err(offset, &key, message)
        })
    }

    /// A list of counts, each at least 1 (`default` alone when the key is absent).
    fn positive(
        &self,
        v: &Option<Vec<Spanned<usize>>>,
        key: &str,
        default: usize,
    ) -> Result<Vec<usize>, ExperimentError> {
        let Some(v) = v else { return Ok(vec![default]) };
        if v.is_empty() {
            return Err(self.err(0, key, "must list at least one value".into()));
        }
        v.iter()
            .map(|s| {
                if *s.get_ref() == 0 {
                    Err(self.err(s.span().start, key, "must be at least 1".into()))
                } else {
                    Ok(*s.get_ref())
                }
            })
            .collect()
    }

    /// A list of names, each among `known` (`default` alone when the key is absent).
    fn names(
        &self,
        v: &Option<Vec<Spanned<String>>>,
        key: &str,
        known: &[&str],
        default: &str,
    ) -> Result<Vec<String>, ExperimentError> {
        let Some(v) = v else { return Ok(vec![default.to_string()]) };
        if v.is_empty() {
            return Err(self.err(0, key, "must list at least one name".into()));
        }
        v.iter()
            .map(|s| {
                if known.contains(&s.get_ref().as_str()) {
                    Ok(s.get_ref().clone())
                } else {
                    Err(self.err(
                        s.span().start,
                        key,
                        format!("unknown {:?} (known: {})", s.get_ref(), known.join(", ")),
                    ))
                }
            })
            .collect()
    }

    /// `memory_limit_mb`: at least 1 when given.
    fn memory_limit_mb(&self, file: &File) -> Result<Option<u64>, ExperimentError> {
        match &file.memory_limit_mb {
            Some(m) if *m.get_ref() == 0 => {
                Err(self.err(m.span().start, "memory_limit_mb", "must be at least 1 (MiB)".into()))
            }
            m => Ok(m.as_ref().map(|m| *m.get_ref())),
        }
    }

    /// `repetitions`: at least 1 (default 5).
    fn repetitions(&self, file: &File) -> Result<u32, ExperimentError> {
        match &file.repetitions {
            Some(r) if *r.get_ref() == 0 => Err(self.err(r.span().start, "repetitions", "must be at least 1".into())),
            Some(r) => Ok(*r.get_ref()),
            None => Ok(5),
        }
    }

    /// `timeout_secs`: a number of seconds > 0 (default 600).
    fn timeout_secs(&self, file: &File) -> Result<f64, ExperimentError> {
        match &file.timeout_secs {
            Some(t) if !(t.get_ref().is_finite() && *t.get_ref() > 0.0) => {
                Err(self.err(t.span().start, "timeout_secs", "must be a number of seconds > 0".into()))
            }
            Some(t) => Ok(*t.get_ref()),
            None => Ok(600.0),
        }
    }

    /// `algorithms`: at least one, each among [`ALGORITHMS`]; `bfs` and `sssp` need `source`.
    fn algorithms(&self, file: &File) -> Result<Vec<String>, ExperimentError> {
        if file.algorithms.is_empty() {
            return Err(self.err(0, "algorithms", "must list at least one algorithm".into()));
        }
        let algorithms = self.names(&Some(file.algorithms.clone()), "algorithms", ALGORITHMS, "")?;
        if algorithms.iter().any(|a| a == "bfs" || a == "sssp") && file.source.is_none() {
            let at = file.algorithms.iter().find(|a| a.get_ref() == "bfs" || a.get_ref() == "sssp");
            return Err(self.err(
                at.map(|a| a.span().start).unwrap_or(0),
                "algorithms",
                "bfs and sssp need `source = VERTEX`".into(),
            ));
        }
        Ok(algorithms)
    }

    /// The `[commands.NAME]` tables: a name other than `ripples`, a non-empty command line.
    fn commands(&self, file: &File) -> Result<BTreeMap<String, Vec<String>>, ExperimentError> {
        let mut commands = BTreeMap::new();
        for (name, spec) in &file.commands {
            let CommandSpec { command } = spec.get_ref();
            if command.is_empty() || name == RIPPLES {
                return Err(self.err(
                    spec.span().start,
                    &format!("commands.{name}"),
                    "needs a name other than `ripples` and a non-empty `command = [PROGRAM, ARGS...]`".into(),
                ));
            }
            commands.insert(name.clone(), command.clone());
        }
        Ok(commands)
    }

    /// `systems`: each one of [`System::known`] (default `ripples`), parsed.
    fn systems(&self, file: &File, commands: &BTreeMap<String, Vec<String>>) -> Result<Vec<System>, ExperimentError> {
        let known = System::known(commands);
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let names = self.names(&file.systems, "systems", &known, RIPPLES)?;
        Ok(names.iter().filter_map(|n| System::parse(n, commands)).collect())
    }

    /// The `[stream]` table: fractions in [0, 1], `window` and `span` at least 1.
    fn stream(&self, file: &File) -> Result<StreamParams, ExperimentError> {
        let p = &file.stream;
        if !(0.0..=1.0).contains(&p.bulk_fraction)
            || !(0.0..=1.0).contains(&p.delete_fraction)
            || p.window == 0
            || p.span == 0
        {
            return Err(self.err(
                self.text.find("[stream]").unwrap_or(0),
                "stream",
                "bulk_fraction and delete_fraction must be in [0, 1], window and span at least 1".into(),
            ));
        }
        Ok(p.clone())
    }

    /// The `[[datasets]]` tables, at least one, names unique; the temporal formats by name.
    fn datasets(
        &self,
        file: &File,
        dir: &Path,
    ) -> Result<(Vec<Dataset>, BTreeMap<String, TemporalFormat>), ExperimentError> {
        if file.datasets.is_empty() {
            return Err(self.err(0, "datasets", "needs at least one [[datasets]] table".into()));
        }
        let mut datasets: Vec<Dataset> = Vec::new();
        let mut formats = BTreeMap::new();
        for spanned in &file.datasets {
            let (d, at) = (spanned.get_ref(), spanned.span().start);
            if datasets.iter().any(|x| x.name == d.name) {
                return Err(self.err(at, "datasets.name", format!("dataset {:?} is defined twice", d.name)));
            }
            let (source, format) = self.dataset(d, at, dir)?;
            if let Some(format) = format {
                formats.insert(d.name.clone(), format);
            }
            datasets.push(Dataset { name: d.name.clone(), source });
        }
        Ok((datasets, formats))
    }

    /// One dataset table (at byte `at`): where its edges come from, and its temporal format.
    fn dataset(
        &self,
        d: &DatasetSpec,
        at: usize,
        dir: &Path,
    ) -> Result<(DatasetSource, Option<TemporalFormat>), ExperimentError> {
        let need = |v: Option<u64>, key: &str| {
            v.ok_or_else(|| {
                self.err(at, &format!("datasets.{key}"), format!("dataset {:?} ({}) needs `{key}`", d.name, d.kind))
            })
        };
        let seed = d.seed.unwrap_or(1);
        Ok(match d.kind.as_str() {
            "rmat" => {
                let scale = need(d.scale.map(u64::from), "scale")? as u32;
                if scale == 0 || scale > 30 {
                    return Err(self.err(at, "datasets.scale", format!("scale must be in 1..=30, got {scale}")));
                }
                (DatasetSource::Rmat { scale, edge_factor: d.edge_factor.unwrap_or(16), seed }, None)
            }
            "er" => {
                let source = DatasetSource::Er {
                    vertices: need(d.vertices, "vertices")?.max(1),
                    edges: need(d.edges, "edges")?,
                    seed,
                };
                (source, None)
            }
            "file" | "temporal" => {
                let rel = d.path.clone().ok_or_else(|| {
                    self.err(at, "datasets.path", format!("dataset {:?} ({}) needs `path`", d.name, d.kind))
                })?;
                let full = if rel.is_absolute() { rel } else { dir.join(rel) };
                if !full.is_file() {
                    return Err(self.err(at, "datasets.path", format!("{} is not a file", full.display())));
                }
                if d.kind == "file" {
                    (DatasetSource::File { path: full }, None)
                } else {
                    let format = temporal_format(d).map_err(|(key, p)| self.err(at, &format!("datasets.{key}"), p))?;
                    (DatasetSource::Temporal { path: full, format: d.format.clone().unwrap_or_default() }, Some(format))
                }
            }
            other => {
                return Err(self.err(
                    at,
                    "datasets.kind",
                    format!("unknown dataset kind {other:?} (known: rmat, er, file, temporal)"),
                ))
            }
        })
    }

    /// Streams of event times ([`TIMED`]) need a temporal dataset.
    fn timed_streams(
        &self,
        file: &File,
        streams: &[String],
        formats: &BTreeMap<String, TemporalFormat>,
    ) -> Result<(), ExperimentError> {
        if let Some(timed) = streams.iter().find(|s| TIMED.contains(&s.as_str())).filter(|_| formats.is_empty()) {
            let at = file.streams.iter().flatten().find(|s| s.get_ref() == timed).map(|s| s.span().start);
            return Err(self.err(at.unwrap_or(0), "streams", format!("`{timed}` needs a temporal dataset")));
        }
        Ok(())
    }
}

impl Experiment {
    /// Checks the text of an experiment file read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Experiment, ExperimentError> {
        let src = Source { path, text };
        let file = src.file()?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let workers = src.positive(&file.workers, "workers", 1)?;
        let batch_sizes = src.positive(&file.batch_sizes, "batch_sizes", 1000)?;
        let processes = src.positive(&file.processes, "processes", 1)?;
        let memory_limit_mb = src.memory_limit_mb(&file)?;
        let repetitions = src.repetitions(&file)?;
        let timeout_secs = src.timeout_secs(&file)?;
        let algorithms = src.algorithms(&file)?;
        let streams = src.names(&file.streams, "streams", STREAMS, "insert")?;
        let commands = src.commands(&file)?;
        let systems = src.systems(&file, &commands)?;
        let stream = src.stream(&file)?;
        let (datasets, formats) = src.datasets(&file, &dir)?;
        src.timed_streams(&file, &streams, &formats)?;
        let mut exp = Experiment {
            path: path.to_path_buf(),
            name: file.name.clone().unwrap_or_else(|| {
                path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "experiment".into())
            }),
            seed: file.seed.unwrap_or(1),
            repetitions,
            timeout_secs,
            warmup_epochs: file.warmup_epochs.unwrap_or(0),
            profile: file.profile.unwrap_or(false),
            workers,
            batch_sizes,
            processes,
            memory_limit_mb,
            algorithms,
            systems,
            streams,
            source: file.source,
            stream,
            datasets,
            formats,
            commands,
            estimate_updates_per_sec: file.estimate_updates_per_sec.unwrap_or(50_000.0),
            non_default: Vec::new(),
        };
        exp.non_default = non_default(&file, &exp);
        Ok(exp)
    }
}

/// `key = value` of every setting `file` gives that differs from its default (`exp` is the file
/// checked).
fn non_default(file: &File, exp: &Experiment) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut note = |key: &str, value: String| out.push((key.to_string(), value));
    if let Some(v) = &file.name {
        note("name", format!("{v:?}"));
    }
    if let Some(v) = file.seed {
        note("seed", v.to_string());
    }
    if exp.repetitions != 5 {
        note("repetitions", exp.repetitions.to_string());
    }
    if exp.timeout_secs != 600.0 {
        note("timeout_secs", exp.timeout_secs.to_string());
    }
    if let Some(v) = file.warmup_epochs.filter(|w| *w != 0) {
        note("warmup_epochs", v.to_string());
    }
    if exp.profile {
        note("profile", "true".into());
    }
    let list = |v: &[usize]| format!("{v:?}");
    if exp.workers != [1] {
        note("workers", list(&exp.workers));
    }
    if exp.batch_sizes != [1000] {
        note("batch_sizes", list(&exp.batch_sizes));
    }
    if exp.processes != [1] {
        note("processes", list(&exp.processes));
    }
    if let Some(m) = exp.memory_limit_mb {
        note("memory_limit_mb", m.to_string());
    }
    if exp.streams != ["insert"] {
        note("streams", format!("{:?}", exp.streams));
    }
    if exp.systems != [System::Ripples] {
        let names: Vec<String> = exp.systems.iter().map(System::to_string).collect();
        note("systems", format!("{names:?}"));
    }
    let (p, defaults) = (&exp.stream, StreamParams::default());
    for (key, a, b) in [
        ("stream.bulk_fraction", p.bulk_fraction, defaults.bulk_fraction),
        ("stream.churn_updates", p.churn_updates as f64, defaults.churn_updates as f64),
        ("stream.delete_fraction", p.delete_fraction, defaults.delete_fraction),
        ("stream.window", p.window as f64, defaults.window as f64),
        ("stream.span", p.span as f64, defaults.span as f64),
    ] {
        if a != b {
            note(key, a.to_string());
        }
    }
    out
}

/// The temporal format of a dataset table: `(key, problem)` on error.
fn temporal_format(d: &DatasetSpec) -> Result<TemporalFormat, (&'static str, String)> {
    match d.format.as_deref() {
        Some("snap") => Ok(TemporalFormat::Snap),
        Some("konect") => Ok(TemporalFormat::Konect),
        Some("csv") => {
            let delimiter = temporal::delimiter(d.delimiter.as_deref()).map_err(|p| ("delimiter", p))?;
            let time_format =
                TimeFormat::parse(d.time_format.as_deref().unwrap_or("unix")).map_err(|p| ("time_format", p))?;
            let column = |v: &Option<String>, default: &str| v.clone().unwrap_or_else(|| default.to_string());
            Ok(TemporalFormat::Csv(CsvSpec {
                columns: d.columns.clone(),
                delimiter,
                src: column(&d.src_column, "src"),
                dst: column(&d.dst_column, "dst"),
                time: d.time_column.clone().ok_or(("time_column", "a csv dataset needs `time_column`".to_string()))?,
                time_format,
            }))
        }
        other => Err(("format", format!("unknown temporal format {other:?} (known: snap, konect, csv)"))),
    }
}
