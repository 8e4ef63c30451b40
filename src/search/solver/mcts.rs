//! MCTS solver (work in progress: API stub).

use std::sync::atomic::AtomicBool;

use super::{
    Heuristic, KnowledgeState, ProofTree, SolveEvent, SolveOutcome, SolveResult, SolveStats,
    Solver, SolverGame, SolverOptions,
};
use crate::game::Color;
use crate::search::Limits;

/// The MCTS solver.
pub struct Mcts<G: SolverGame> {
    opts: SolverOptions,
    heuristic: Box<dyn Heuristic<G>>,
    know: KnowledgeState,
}

impl<G: SolverGame> Mcts<G> {
    /// A solver with this heuristic.
    pub fn new(opts: SolverOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let know = KnowledgeState::new(opts.knowledge.clone());
        Mcts {
            opts,
            heuristic,
            know,
        }
    }
}

impl<G: SolverGame> Solver<G> for Mcts<G> {
    fn name(&self) -> &'static str {
"mcts"
    }
    fn solve(
        &mut self,
        _game: &G,
        prover: Color,
        _limits: &Limits,
        _stop: &AtomicBool,
        _on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        let _ = (&self.opts, &mut self.know);
        SolveOutcome {
            result: SolveResult::Unknown,
            prover,
            best: None,
            stats: SolveStats::default(),
        }
    }
    fn proof_tree(&mut self) -> Option<ProofTree> {
        None
    }
    fn clear(&mut self) {}
    fn set_memory(&mut self, bytes: usize) {
        self.opts.memory_bytes = bytes;
    }
}
