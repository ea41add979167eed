//! `ripples experiment plan|run|report|compare|convert` (see [`crate::experiment`]).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::driver::RunError;
use crate::experiment::systems::System;
use crate::experiment::{self, compare, output, runner, Experiment, ExperimentError};
use crate::sources::parse::{self, temporal};

#[derive(Subcommand, Debug)]
pub enum ExperimentCommand {
    /// Print the cells of an experiment file and an estimated time.
    Plan {
        file: PathBuf,
        /// Print every cell (default: the first 20).
        #[arg(long)]
        all: bool,
    },
    /// Run every cell in a fresh child process, then write the CSV, figures and report.
    Run(RunArgs),
    /// Write the CSV, figures and report of OUT/results.jsonl again.
    Report {
        /// The experiment's output directory.
        out: PathBuf,
        /// The experiment file (for the table of non-default settings).
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// Ratios B / A of the medians per configuration, with bootstrap CIs; a change is flagged
    /// only past the noise threshold.
    Compare {
        a: PathBuf,
        b: PathBuf,
        /// Relative noise threshold.
        #[arg(long, default_value_t = 0.05)]
        threshold: f64,
    },
    /// Convert a temporal edge list (SNAP, KONECT, CSV) to an update file: `+ src dst @T` lines
    /// (event times, for --window/--tumbling) or insertions in time order (arrival order).
    Convert(ConvertArgs),
    /// One cell of a `bench:` system (started by `ripples experiment run`).
    #[command(hide = true)]
    System(SystemArgs),
}

#[derive(Args, Debug)]
pub struct SystemArgs {
    #[arg(long)]
    pub system: String,
    #[arg(long)]
    pub algorithm: String,
    #[arg(long)]
    pub stream: String,
    #[arg(long)]
    pub graph: PathBuf,
    #[arg(long)]
    pub updates: PathBuf,
    #[arg(long)]
    pub batch: usize,
    #[arg(short = 'w', long)]
    pub workers: usize,
    #[arg(long)]
    pub time_limit: f64,
    #[arg(long)]
    pub output: PathBuf,
    #[arg(long)]
    pub stats: PathBuf,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    pub file: PathBuf,
    /// Output directory (default: results/NAME, NAME being the experiment's name).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Skip cells that already have a record in OUT/results.jsonl.
    #[arg(long)]
    pub resume: bool,
    /// Run again the cells whose record is a failure (and any cell without a record).
    #[arg(long)]
    pub rerun_failed: bool,
    /// Stop after running N cells (the rest with --resume).
    #[arg(long, value_name = "N")]
    pub max_cells: Option<usize>,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    pub input: PathBuf,
    /// snap (`src dst unixtime`), konect (`src dst [weight [time]]`), csv (named columns).
    #[arg(long)]
    pub format: String,
    /// csv: the time column's name.
    #[arg(long)]
    pub time_column: Option<String>,
    /// csv: unix, rfc3339, or a pattern such as "%Y-%m-%d %H:%M:%S" (UTC).
    #[arg(long, default_value = "unix")]
    pub time_format: String,
    /// csv: the column names, comma-separated, when the file has no header line.
    #[arg(long, value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
    /// csv: the field separator (one character, `tab`, or `whitespace`; default `,`).
    #[arg(long)]
    pub delimiter: Option<String>,
    /// csv: the source column.
    #[arg(long, default_value = "src")]
    pub src_column: String,
    /// csv: the target column.
    #[arg(long, default_value = "dst")]
    pub dst_column: String,
    /// event: `+ src dst @T` in file order; arrival: `+ src dst` sorted by time.
    #[arg(long, default_value = "event")]
    pub order: String,
    /// The update file to write.
    #[arg(long)]
    pub out: PathBuf,
}

fn error(e: ExperimentError) -> RunError {
    match e {
        ExperimentError::Io(m) => RunError::Other(m),
        other => RunError::Input(other.to_string()),
    }
}

pub fn experiment(command: ExperimentCommand) -> Result<(), RunError> {
    match command {
        ExperimentCommand::Plan { file, all } => plan(&file, all),
        ExperimentCommand::Run(args) => run(args),
        ExperimentCommand::Report { out, file } => {
            let exp = file.as_deref().map(Experiment::load).transpose().map_err(error)?;
            let results = out.join("results.jsonl");
            if !results.is_file() {
                return Err(RunError::Input(format!(
                    "{} does not exist: give the --out of an experiment run",
                    results.display()
                )));
            }
            let records = runner::load_records(&results).map_err(error)?;
            let path = output::report(exp.as_ref(), &records, &out).map_err(error)?;
            eprintln!("ripples experiment: wrote {}", path.display());
            Ok(())
        }
        ExperimentCommand::Compare { a, b, threshold } => {
            let ra = runner::load_records(&a).map_err(error)?;
            let rb = runner::load_records(&b).map_err(error)?;
            print!("{}", compare::table(&compare::compare(&ra, &rb, threshold), threshold));
            Ok(())
        }
        ExperimentCommand::Convert(args) => convert(args),
        ExperimentCommand::System(a) => runner::child_main(
            &System::named(&a.system),
            &a.algorithm,
            &a.stream,
            &a.graph,
            &a.updates,
            a.batch,
            a.workers,
            a.time_limit,
            &a.output,
            &a.stats,
        )
        .map_err(error),
    }
}

fn plan(file: &Path, all: bool) -> Result<(), RunError> {
    let exp = Experiment::load(file).map_err(error)?;
    let cells = exp.cells();
    let total: f64 = cells.iter().map(|c| runner::estimate_secs(&exp, c)).sum();
    println!(
        "experiment {}: {} cell(s) = {} dataset(s) x {} stream(s) x {} algorithm(s) x {} system(s) x {} process count(s) x {} worker count(s) x {} batch size(s) x {} repetition(s) (more than one process only for ripples, one worker for the sequential bench systems)",
        exp.name,
        cells.len(),
        exp.datasets.len(),
        exp.streams.len(),
        exp.algorithms.len(),
        exp.systems.len(),
        exp.processes.len(),
        exp.workers.len(),
        exp.batch_sizes.len(),
        exp.repetitions
    );
    for c in cells.iter().take(if all { usize::MAX } else { 20 }) {
        println!("  {} rep {}  ~{:.1}s", c.config(), c.repetition, runner::estimate_secs(&exp, c));
    }
    if !all && cells.len() > 20 {
        println!("  ... ({} more; --all lists them)", cells.len() - 20);
    }
    println!(
        "estimated time: {:.0}s (at most {}s per cell; assumes {:.0} updates/s, set estimate_updates_per_sec)",
        total, exp.timeout_secs, exp.estimate_updates_per_sec
    );
    Ok(())
}

fn run(args: RunArgs) -> Result<(), RunError> {
    let exp = Experiment::load(&args.file).map_err(error)?;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&exp.name));
    let options = runner::RunOptions {
        out: out.clone(),
        resume: args.resume,
        rerun_failed: args.rerun_failed,
        max_cells: args.max_cells,
        quiet: args.quiet,
    };
    let counts = experiment::run(&exp, &options).map_err(error)?;
    let records = runner::load_records(&out.join("results.jsonl")).map_err(error)?;
    let report = output::report(Some(&exp), &records, &out).map_err(error)?;
    eprintln!(
        "ripples experiment: {} cell(s) run ({} failed), {} skipped (already recorded), {} left; report {}",
        counts.ran,
        counts.failed,
        counts.skipped,
        counts.left,
        report.display()
    );
    if counts.left > 0 {
        eprintln!("ripples experiment: stopped at --max-cells; run again with --resume to finish");
    }
    Ok(())
}

fn convert(args: ConvertArgs) -> Result<(), RunError> {
    let format = match args.format.as_str() {
        "snap" => temporal::TemporalFormat::Snap,
        "konect" => temporal::TemporalFormat::Konect,
        "csv" => {
            let delimiter = temporal::delimiter(args.delimiter.as_deref()).map_err(RunError::Input)?;
            temporal::TemporalFormat::Csv(temporal::CsvSpec {
                columns: args.columns.clone(),
                delimiter,
                src: args.src_column.clone(),
                dst: args.dst_column.clone(),
                time: args.time_column.clone().ok_or_else(|| RunError::Input("csv needs --time-column NAME".into()))?,
                time_format: temporal::TimeFormat::parse(&args.time_format).map_err(RunError::Input)?,
            })
        }
        other => return Err(RunError::Input(format!("unknown --format {other:?} (snap, konect, csv)"))),
    };
    let edges = temporal::read_temporal(&args.input, &format).map_err(|e| match e {
        parse::SourceError::Input(i) => RunError::Input(i.to_string()),
        other => RunError::Other(other.to_string()),
    })?;
    let write_err = |e: std::io::Error| RunError::Other(format!("cannot write {}: {}", args.out.display(), e));
    match args.order.as_str() {
        "event" => {
            let timed = temporal::event_updates(&args.input, &edges).map_err(|e| RunError::Input(e.to_string()))?;
            parse::write_timed_updates(&args.out, &timed).map_err(write_err)?;
        }
        "arrival" => parse::write_updates(&args.out, &temporal::arrival_order(&edges)).map_err(write_err)?,
        other => return Err(RunError::Input(format!("unknown --order {other:?} (event, arrival)"))),
    }
    eprintln!("ripples: wrote {} updates to {}", edges.len(), args.out.display());
    Ok(())
}
