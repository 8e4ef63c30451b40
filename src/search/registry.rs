//! Gomoku players by name, for the front ends, `pcn match` and `pcn bench`.

use super::alphabeta::AlphaBeta;
use super::greedy::Greedy;
use super::reference::Ab4;
use super::solver::{solver_by_name, SolverOptions};
use super::solver_player::{SolverPlay, SolverPlayer};
use super::Searcher;
use crate::game::gomoku::Gomoku;

/// Registered Gomoku searcher names; the first is the default. `solver` also comes as
/// `solver-dfpn`, `solver-fdfpn` (the same as `solver`) and `solver-mcts`.
pub const GOMOKU_SEARCHERS: &[&str] = &["pcn", "greedy", "ab4", "solver"];

/// The solver behind the `solver` player.
pub const DEFAULT_PLAYER_SOLVER: &str = "fdfpn";

/// Table memory of the `solver` player's solver before any `set_memory` (the `pcn` player's
/// table is 64 MiB too).
const SOLVER_PLAYER_TABLE_BYTES: usize = 64 << 20;

/// Fraction of each move the `solver` player gives its solver.
pub const SOLVER_PLAYER_SHARE: f64 = 0.1;

/// The `solver` player: the named solver (with VCF knowledge) for [`SOLVER_PLAYER_SHARE`] of
/// each move, then the `pcn` alpha-beta player (see [`super::solver_player`]).
pub fn solver_player(solver: &str, seed: u64) -> Option<SolverPlayer<Gomoku>> {
    let opts = SolverOptions {
        memory_bytes: SOLVER_PLAYER_TABLE_BYTES,
        seed,
        ..SolverOptions::default()
    };
    let s = solver_by_name::<Gomoku>(solver, &opts).ok()?;
    Some(SolverPlayer::new(
        "solver",
        s,
        Box::new(AlphaBeta::new()),
        SolverPlay {
            share: SOLVER_PLAYER_SHARE,
            loss_is_lost: false,
        },
    ))
}

/// A fresh Gomoku searcher by registry name (`None` for an unknown name).
pub fn gomoku_searcher(name: &str) -> Option<Box<dyn Searcher<Gomoku>>> {
    match name {
        "pcn" => Some(Box::new(AlphaBeta::new())),
        "greedy" => Some(Box::new(Greedy)),
        "ab4" => Some(Box::new(Ab4::default())),
        "solver" => Some(Box::new(solver_player(DEFAULT_PLAYER_SOLVER, 1)?)),
        other => {
            let s = other.strip_prefix("solver-")?;
            Some(Box::new(solver_player(s, 1)?))
        }
    }
}
