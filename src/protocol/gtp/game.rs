//! What the GTP front end needs from a game: the solver suite's knowledge ([`SolverGame`],
//! backing `pcn-solve`, genmove and analysis), free editing ([`EditableGame`]: plays by
//! either colour, board sizes, stones, the record) and SGF records ([`SgfGame`]), all
//! declared where they belong; GTP adds only how much of a move its solver gets.

use crate::game::edit::EditableGame;
use crate::game::gomoku::Gomoku;
use crate::game::killallgo::KillallGo;
use crate::search::solver::SolverGame;
use crate::sgf::SgfGame;

/// A game playable through GTP. See the module docs.
pub trait GtpGame: SolverGame + EditableGame + SgfGame {
    /// Fraction of a genmove's budget the configured solver gets before the fallback player
    /// (see [`crate::search::solver_player`]).
    const SOLVER_SHARE: f64;
}

impl GtpGame for KillallGo {
    // The UCT fallback is weak in Killall-Go: the solver gets half of the move.
    const SOLVER_SHARE: f64 = 0.5;
}

impl GtpGame for Gomoku {
    // The alpha-beta fallback already searches threats at the root: it keeps most of the move.
    const SOLVER_SHARE: f64 = 0.3;
}
