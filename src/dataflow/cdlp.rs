//! PLACEHOLDER: being written; returns nothing yet.

use super::{Algorithm, GraphInput, ResultCollection};

#[derive(Clone, Debug)]
pub struct Cdlp {
    pub iterations: u32,
    pub undirected: bool,
}

impl Algorithm for Cdlp {
    fn name(&self) -> String {
        "cdlp".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        input.edges.filter(|_| false).map(|(s, _, _)| (s, 0))
    }
}
