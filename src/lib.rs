//! # pcn: a game-solving engine for Gomoku and Killall-Go
//!
//! Module map, lowest layer first. A module only imports modules above it in this list.
//!
//! - [`util`]: deterministic PRNG, Zobrist keys.
//! - [`game`]: the [`game::Game`] trait and the rules. [`game::gomoku`]: freestyle, exact five,
//!   renju (recursive forbidden points), caro and the PCN paper's 4T variant, with incremental
//!   per-direction pattern tables. [`game::go`]: Go (chains with liberties, simple/positional/
//!   situational ko, Benson). [`game::killallgo`]: the PCN 9x9 and the 7x7 Killall-Go.
//!   [`game::edit`]: positions edited outside the turn order (plays by either colour, other
//!   board sizes, the record), for the front ends.
//! - [`sgf`]: SGF (FF[4]) reader and writer (nom), and SGF main lines to positions
//!   ([`sgf::SgfGame`]).
//! - [`nn`]: network evaluation: the [`nn::Evaluator`] trait, model files, backends.
//! - [`search`]: typed [`search::SearchEvent`]s and the [`search::Searcher`] trait, in
//!   rooms by responsibility:
//!   - [`search::gomoku`], the Gomoku wing: threat-space search ([`search::gomoku::threat`]:
//!     VCF/VCT), the Gomoku players ([`search::gomoku::alphabeta`] "pcn",
//!     [`search::gomoku::greedy`], [`search::gomoku::reference`] "ab4") and the learned
//!     pattern policy ([`search::gomoku::learn::patpolicy`]);
//!   - [`search::uct`], the generic UCT player;
//!   - [`search::solver`], the solver suite (MCTS solver, DFPN, focused DFPN, suite II on
//!     one tree-solver skeleton, transposition table, proof trees, the games' solver
//!     knowledge and the hooks through which it reaches the MCTS phases; the MCTS solver in
//!     rooms: tree, worker, phases, proof oracle), one row each in the solver table
//!     [`search::solver::SOLVERS`], each with its own options beside the common ones
//!     ([`search::solver::options`]);
//!   - [`search::solver_player`] (a solver as a player) and [`search::registry`] (players by
//!     name, and the one builder [`search::registry::build`] of a solver with its network).
//! - [`selfplay`]: training data for proof cost networks (`pcn selfplay`): the PCN
//!   self-play search, Gomoku games of the alpha-beta player ([`selfplay::player`]), the
//!   paper's proof-cost labels, the record file format. A layer above search.
//! - [`train`]: the learned tables' trainers ([`train::patterns`]: the Gomoku pattern
//!   policy from the alpha-beta player's self-play, `pcn train-patterns`).
//! - [`proof`]: proof trees as SGF files and the independent proof checker (`pcn verify`).
//! - [`engine`]: the background search thread, the move clock, and the solver's tasks
//!   ([`engine::solving`]: solver then player, analysis beside a solver, a one-off solve).
//! - [`arena`]: matches between two players (`pcn match`).
//! - [`protocol`]: front ends: Gomocup/Piskvork brain protocol (a command table says what may
//!   run during a search), GTP v2, protocol detection. They translate; bad input never
//!   panics (`unwrap`/`expect`/`panic!` are denied there by a lint).
//! - [`cli`]: the `pcn` binary's subcommands (gomocup, gtp, solve, verify, bench, match,
//!   selfplay); [`cli::config`]: the global search settings read once into types.
//! - [`fuzzing`]: one harness per input the engine reads (protocol sessions, SGF, proofs,
//!   models, records, options), shared by the fuzz targets in `fuzz/` and the corpus replay
//!   test; the top layer.

pub mod arena;
pub mod cli;
pub mod engine;
pub mod fuzzing;
pub mod game;
pub mod nn;
pub mod proof;
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub mod protocol;
pub mod search;
pub mod selfplay;
pub mod sgf;
pub mod train;
pub mod util;
