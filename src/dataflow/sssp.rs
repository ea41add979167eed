//! PLACEHOLDER: being written; returns nothing yet.

use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::Node;

#[derive(Clone, Debug)]
pub struct Sssp {
    pub source: Node,
    pub undirected: bool,
}

impl Algorithm for Sssp {
    fn name(&self) -> String {
        "sssp".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        input.edges.filter(|_| false).map(|(s, _, _)| (s, 0))
    }
}
