//! PLACEHOLDER: being written; returns nothing yet.

use super::{Algorithm, GraphInput, ResultCollection};

#[derive(Clone, Debug)]
pub struct PageRank {
    pub iterations: u32,
    pub damping: f64,
    pub undirected: bool,
}

impl Algorithm for PageRank {
    fn name(&self) -> String {
        "pagerank".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        input.edges.filter(|_| false).map(|(s, _, _)| (s, 0))
    }
}
