//! The proof oracle: proof trees from the MCTS tree, re-searching with DFPN where the tree
//! lacks a branch.

use super::tree::Node;
use crate::game::{Color, Move};
use crate::search::solver::dfpn::DfpnOracle;
use crate::search::solver::proof::{satisfies, ProofOracle};
use crate::search::solver::tt::{self, Tt, LOSS, WIN};
use crate::search::solver::{SolveResult, SolverGame};

/// The MCTS side of a proof build: a solved child in the search tree itself, else solved
/// children from the table, else a DFPN re-search.
///
/// The tree is path-exact (a node is the position after its moves from the root), so its
/// statuses are sound even where the table is off (Killall-Go with [`GhiMode::Exact`]): there
/// the tree is the only record of the search, and without it every proof had to be found
/// again by DFPN (measured: Killall-Go wins of MCTS left without a proof when that re-search
/// ran out of time or nodes).
pub(super) struct MctsOracle<'a, 'b, 'c, G: SolverGame> {
    pub(super) tt: Option<&'a Tt>,
    pub(super) nodes: &'a [Node],
    pub(super) root_ply: usize,
    /// Scratch: the moves from the root to the position asked about.
    pub(super) path: Vec<Move>,
    pub(super) fallback: DfpnOracle<'b, 'c, G>,
}

impl<G: SolverGame> MctsOracle<'_, '_, '_, G> {
    /// The tree node of `g` (reached from the root by `g`'s moves since the root), if the
    /// search expanded its way there. `g` is left as it was.
    pub(super) fn tree_node(&mut self, g: &mut G) -> Option<usize> {
        let depth = g.ply().checked_sub(self.root_ply)?;
        self.path.clear();
        for _ in 0..depth {
            match g.undo() {
                Some(m) => self.path.push(m),
                None => break,
            }
        }
        let undone = self.path.len();
        self.path.reverse();
        for &m in &self.path {
            g.play_unchecked(m);
        }
        if undone != depth {
            return None;
        }
        let mut idx = 0usize;
        for &m in &self.path {
            let n = self.nodes.get(idx)?;
            if !n.expanded {
                return None;
            }
            let kids = n.kids();
            idx = kids.into_iter().find(|&k| self.nodes[k].mv == m)?;
        }
        Some(idx)
    }
}

impl<G: SolverGame> ProofOracle<G> for MctsOracle<'_, '_, '_, G> {
    fn choose(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        if let Some(m) = self.lookup(g, prover, result) {
            return Some(m);
        }
        self.fallback.choose(g, prover, result)
    }

    fn lookup(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        // The chooser's solved child in the tree (WIN for a win, LOSS for a loss).
        let want = if result == SolveResult::Win {
            WIN
        } else {
            LOSS
        };
        if let Some(idx) = self.tree_node(g) {
            let n = self.nodes[idx];
            if n.status == want && n.expanded {
                let kids = &self.nodes[n.kids()];
                if let Some(c) = kids
                    .iter()
                    .filter(|c| c.status == want && moves.contains(&c.mv))
                    // Most visited first: its subtree is the one the search built out.
                    .max_by_key(|c| (c.expanded, c.visits))
                {
                    return Some(c.mv);
                }
            }
        }
        let tt = self.tt?;
        // The node's own entry may carry the move (knowledge wins).
        if let Some(e) = tt.get(tt::key(g, prover)) {
            if result == SolveResult::Win && e.proven() && moves.contains(&e.best) {
                return Some(e.best);
            }
        }
        for &m in &moves {
            g.play_unchecked(m);
            let ok = match g.outcome() {
                Some(o) => satisfies(o, prover, result),
                None => tt.get(tt::key(g, prover)).is_some_and(|e| {
                    if result == SolveResult::Win {
                        e.proven()
                    } else {
                        e.disproven()
                    }
                }),
            };
            g.undo();
            if ok {
                return Some(m);
            }
        }
        None
    }
}
