//! Killall-Go for the solvers: the [`SolverGame`] implementation (history-exact table keys
//! for situational superko, mobility, the default heuristic).

use super::heuristic::UniformPlayout;
use super::{Heuristic, SolverGame, SolverOptions};
use crate::game::killallgo::KillallGo;
use crate::game::Game;

impl SolverGame for KillallGo {
    fn solver_key(&self) -> u64 {
        self.tt_key()
    }

    const HISTORY_SENSITIVE: bool = true;

    fn history_mark(&self) -> u64 {
        match self.last_move() {
            Some(m) if m != self.pass_move() => self.hash(),
            _ => 0,
        }
    }

    fn history_root(&self) -> u64 {
        let mut g = KillallGo::new(self.variant());
        let mut x = 0;
        for (_, m) in self.moves() {
            g.play_unchecked(m);
            x ^= g.history_mark();
        }
        x
    }

    fn mobility(&self) -> usize {
        // Empty points plus the pass; exact counting (superko, eyes) is not worth its cost.
        self.board().empty_cells().len() + 1
    }

    fn default_heuristic(opts: &SolverOptions) -> Box<dyn Heuristic<Self>> {
        Box::new(UniformPlayout::new(opts))
    }
}
