//! Training of the engine's learned tables from its own play (the networks are trained by
//! the Python loop under `training/`, from `pcn selfplay` records).
//!
//! - [`patterns`]: the Gomoku pattern policy, from the alpha-beta player's self-play.

pub mod patterns;
