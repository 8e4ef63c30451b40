//! # pcn: a game-solving engine for Gomoku and Killall-Go
//!
//! Module map, lowest layer first. A module only imports modules above it in this list.
//!
//! - [`util`]: deterministic PRNG, Zobrist keys.
//! - [`game`]: the [`game::Game`] trait and the rules: [`game::gomoku`] (freestyle, exact five,
//!   renju, caro, the PCN paper's 4T variant) with incremental pattern/threat tables.
//! - `sgf`: SGF reading and writing (Go/GTP issue).
//! - `nn`: network evaluators (network issue).
//! - [`search`]: threat-space search (VCF/VCT), the players, reference players, typed events.
//! - [`engine`]: clock and the background search thread.
//! - [`protocol`]: front ends: Gomocup/Piskvork brain protocol, protocol auto-detection.
//! - [`cli`]: subcommands of the `pcn` binary (bench, match, ...).

pub mod arena;
pub mod cli;
pub mod engine;
pub mod game;
pub mod proof;
pub mod protocol;
pub mod search;
pub mod sgf;
pub mod util;
