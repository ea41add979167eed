//! PLACEHOLDER: being written; returns nothing yet.

use super::{Algorithm, GraphInput, ResultCollection};

#[derive(Clone, Debug)]
pub struct Scc;

impl Algorithm for Scc {
    fn name(&self) -> String {
        "scc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        input.edges.filter(|_| false).map(|(s, _, _)| (s, 0))
    }
}
