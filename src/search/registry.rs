//! Gomoku players by name, for the front ends, `pcn match` and `pcn bench`.

use super::alphabeta::AlphaBeta;
use super::greedy::Greedy;
use super::reference::Ab4;
use super::Searcher;
use crate::game::gomoku::Gomoku;

/// Registered Gomoku searcher names; the first is the default.
pub const GOMOKU_SEARCHERS: &[&str] = &["pcn", "greedy", "ab4"];

/// A fresh Gomoku searcher by registry name (`None` for an unknown name).
pub fn gomoku_searcher(name: &str) -> Option<Box<dyn Searcher<Gomoku>>> {
    match name {
        "pcn" => Some(Box::new(AlphaBeta::new())),
        "greedy" => Some(Box::new(Greedy)),
        "ab4" => Some(Box::new(Ab4::default())),
        _ => None,
    }
}
