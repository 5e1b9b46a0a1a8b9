//! Candidate start positions: which positions a search needs to try at all.

use super::ast::Node;
use super::prog::Program;

/// Where matches can start.
#[derive(Debug)]
pub struct Prefilter {}

impl Prefilter {
    pub fn new(_node: &Node, _prog: &Program) -> Prefilter {
        Prefilter {}
    }

    /// The next position at or after `from` where a complete match could start.
    pub fn next(&self, hay: &str, from: usize) -> Option<usize> {
        if from > hay.len() { None } else { Some(from) }
    }

    /// The next position at or after `from` where a complete or partial match could start.
    pub fn next_partial(&self, hay: &str, from: usize) -> Option<usize> {
        self.next(hay, from)
    }
}
