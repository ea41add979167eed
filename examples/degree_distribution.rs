//! Your own dataflow under the ripples driver: the degree distribution of a graph stream.
//!
//! The algorithm is not in the library; it is a closure over the edge collection. It gets the
//! same flags as `ripples run` (`--graph`, `--updates`, `--batch`, `--changes`, `--output`,
//! `--stats`, `-w/-n/-p/--hostfile`), the same progress, summary and metrics.
//!
//! Output: one line `degree count` per degree: how many vertices have that many distinct
//! neighbours (edge direction ignored; self-loops and parallel edges ignored).
//!
//! ```text
//! cargo run --release -- gen rmat --scale 12 --out /tmp/g.e
//! cargo run --release -- gen updates --graph /tmp/g.e --count 10000 --delete-fraction 0.3 --out /tmp/u.txt
//! cargo run --release --example degree_distribution -- --graph /tmp/g.e --updates /tmp/u.txt \
//!     --batch 1000 --output /tmp/degrees.txt -w 2
//! ```

use clap::Parser;

use ripples::cli::{exit_status, run_job, JobArgs};
use ripples::dataflow::custom;

#[derive(Parser)]
#[command(about = "Degree distribution of a graph stream, maintained incrementally")]
struct Args {
    #[command(flatten)]
    job: JobArgs,
}

fn main() {
    let args = Args::parse();
    let degree_distribution = custom("degree-distribution", |input| {
        input
            .edges
            // Undirected neighbour pairs, each once; self-loops dropped.
            .flat_map(|(s, d, _)| if s == d { vec![] } else { vec![(s, d), (d, s)] })
            .distinct()
            // Degree of each vertex ...
            .map(|(s, _)| s)
            .count()
            // ... and the number of vertices with each degree.
            .map(|(_vertex, degree)| degree as u64)
            .count()
            .map(|(degree, vertices)| (degree, vertices as u64))
    });
    std::process::exit(exit_status(run_job(&args.job, degree_distribution)));
}
