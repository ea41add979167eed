//! `-w/--workers N`: the one definition of the flag, for every command that starts workers.
//!
//! Commands differ only in the help line and the default: each names them in a [`WorkersFlag`]
//! constant, applies it to the flattened [`WorkersArgs`] with a struct-level
//! `#[command(mut_arg("workers", |a| FLAG.arg(a)))]`, and reads the number with
//! [`WorkersArgs::resolve`], which also rejects 0.

use clap::{Arg, Args};

use crate::driver::RunError;

/// `-w/--workers N`. Flatten it (`#[command(flatten)]`); see the module documentation.
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkersArgs {
    /// Number of timely worker threads.
    #[arg(short = 'w', long = "workers")]
    pub workers: Option<usize>,
}

/// A command's default number of workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultWorkers {
    /// This many (shown as `[default: N]`).
    Fixed(usize),
    /// One per core (the help line says so).
    AllCores,
}

impl DefaultWorkers {
    fn get(self) -> usize {
        match self {
            DefaultWorkers::Fixed(n) => n,
            DefaultWorkers::AllCores => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        }
    }
}

/// One command's `-w`: its help line and its default.
#[derive(Clone, Copy, Debug)]
pub struct WorkersFlag {
    /// The help line `ripples COMMAND --help` shows for `-w`.
    pub help: &'static str,
    /// The number used when `-w` is not given.
    pub default: DefaultWorkers,
}

impl WorkersFlag {
    /// The flag as this command shows it: its help line, and its default as clap shows defaults
    /// (the default itself is applied by [`WorkersArgs::resolve`]).
    pub fn arg(self, arg: Arg) -> Arg {
        let arg = arg.help(self.help);
        match self.default {
            DefaultWorkers::Fixed(n) => arg.default_value(default_text(n)),
            DefaultWorkers::AllCores => arg,
        }
    }
}

/// `n` as a `'static` string for clap: the small defaults in use are literals; another is leaked
/// once per command-line definition.
fn default_text(n: usize) -> &'static str {
    match n {
        1 => "1",
        2 => "2",
        n => Box::leak(n.to_string().into_boxed_str()),
    }
}

impl WorkersArgs {
    /// The number of workers: the flag's value, or the command's default; at least 1.
    pub fn resolve(&self, flag: WorkersFlag) -> Result<usize, RunError> {
        let workers = self.workers.unwrap_or_else(|| flag.default.get());
        if workers == 0 {
            return Err(RunError::Input("--workers must be at least 1".into()));
        }
        Ok(workers)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Command};

    /// Each command's `-w` default, and `-w N` / `--workers N` wherever the flag is.
    #[test]
    fn defaults_per_command() {
        let parse = |args: &[&str]| Cli::try_parse_from([&["ripples"], args].concat()).unwrap().command;
        let workers = |command: Command| {
            match command {
                Command::Run(args) => args.job.layout.layout().map(|l| l.workers),
                Command::Bench(args) => args.workers.resolve(super::super::bench::WORKERS),
                Command::Demo(args) => args.workers.resolve(super::super::demo::WORKERS),
                Command::Graphalytics(args) => args.workers.resolve(super::super::graphalytics::WORKERS),
                other => panic!("{:?}", other),
            }
            .map_err(|e| e.to_string())
        };
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        assert_eq!(workers(parse(&["run", "wcc"])), Ok(1));
        assert_eq!(workers(parse(&["bench", "wcc-insert"])), Ok(2));
        assert_eq!(workers(parse(&["demo"])), Ok(cores));
        assert_eq!(workers(parse(&["graphalytics"])), Ok(1));
        for command in [&["run", "wcc"][..], &["bench", "wcc-insert"], &["demo"], &["graphalytics"]] {
            assert_eq!(workers(parse(&[command, &["-w", "3"]].concat())), Ok(3), "{:?}", command);
            assert_eq!(workers(parse(&[command, &["--workers", "5"]].concat())), Ok(5), "{:?}", command);
            assert_eq!(
                workers(parse(&[command, &["-w", "0"]].concat())),
                Err("--workers must be at least 1".to_string()),
                "{:?}",
                command
            );
        }
    }
}
