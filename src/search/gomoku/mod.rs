//! The Gomoku wing of the search: everything that knows Gomoku's threats and patterns and
//! nothing of the generic solvers.
//!
//! - [`threat`]: threat-space search (VCF/VCT) under every rule.
//! - [`alphabeta`]: the main player "pcn" (alpha-beta over threat-aware candidates).
//! - [`greedy`]: the one-ply pattern scorer, the first baseline.
//! - [`reference`]: "ab4", the depth-4 min-max baseline of the Gomoku seed paper.
//! - [`learn`]: what the wing learns from games: the player's move ordering and evaluation
//!   network, and the pattern policy (a move prior without a network).
//!
//! The solvers' Gomoku knowledge (`SolverGame for Gomoku`, the threat priors) builds on this
//! wing from [`crate::search::solver`].

pub mod alphabeta;
pub mod greedy;
pub mod learn;
pub mod reference;
pub mod threat;

// The search types the wing's files name as `super::...`: imported once here, so that a
// file reads the same whether it sits in the wing or beside the generic searches.
use super::{Budget, Limits, SearchEvent, SearchResult, Searcher};
