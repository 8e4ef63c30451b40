//! Building complete solution trees by replaying the real game from the root.
//!
//! At the chooser's nodes (the side the claim says wins) one move is taken: a move that ends
//! the game as claimed, else a knowledge win (VCF) when the chooser is the prover, else what
//! the solver's oracle (its tables, re-searching where needed) proves. At the other side's
//! nodes every legal move is expanded. Because the replay uses the real game with its full
//! history, a result reused unsoundly from a transposition table (graph-history interaction)
//! makes the build fail instead of producing a wrong tree.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{KnowledgeState, ProofNode, ProofTree, SolveResult, SolverGame};
use crate::game::{Color, Move, Outcome};

/// The solver side of a proof build: a move for the chooser at a non-terminal node that
/// keeps the claim (`result` for `prover`), or `None`.
pub(crate) trait ProofOracle<G: SolverGame> {
    /// From the solver's tables only (cheap).
    fn lookup(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move>;
    /// Re-searching the position (costly; bounded by the proof search budget).
    fn choose(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move>;
}

/// Whether a terminal outcome satisfies the claim.
#[inline]
pub(crate) fn satisfies(o: Outcome, prover: Color, result: SolveResult) -> bool {
    let won = o == Outcome::Win(prover);
    match result {
        SolveResult::Win => won,
        _ => !won,
    }
}

struct Builder<'a, G: SolverGame> {
    prover: Color,
    result: SolveResult,
    chooser: Color,
    nodes: Vec<ProofNode>,
    max_nodes: usize,
    oracle: &'a mut dyn ProofOracle<G>,
    know: &'a mut KnowledgeState,
    know_budget: u64,
    stop: &'a AtomicBool,
}

const MAX_DEPTH: usize = 4000;

impl<G: SolverGame> Builder<'_, G> {
    fn node(&mut self, g: &mut G, depth: usize) -> Option<u32> {
        if self.nodes.len() >= self.max_nodes
            || depth > MAX_DEPTH
            || self.stop.load(Ordering::Relaxed)
        {
            return None;
        }
        let idx = self.nodes.len() as u32;
        self.nodes.push(ProofNode::default());
        if let Some(o) = g.outcome() {
            return satisfies(o, self.prover, self.result).then_some(idx);
        }
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        if legal.is_empty() {
            return None;
        }
        if g.to_move() == self.chooser {
            // A move that ends the game as claimed.
            for &m in &legal {
                g.play_unchecked(m);
                let ok = g
                    .outcome()
                    .is_some_and(|o| satisfies(o, self.prover, self.result));
                g.undo();
                if ok {
                    let c = self.node_after(g, m, depth)?;
                    self.nodes[idx as usize].children.push((m, c));
                    return Some(idx);
                }
            }
            if let Some(m) = self.oracle.lookup(g, self.prover, self.result) {
                if legal.contains(&m) {
                    let mark = self.nodes.len();
                    if let Some(c) = self.node_after(g, m, depth) {
                        self.nodes[idx as usize].children.push((m, c));
                        return Some(idx);
                    }
                    self.nodes.truncate(mark);
                }
            }
            let mut tried = None;
            // Knowledge searches share the proof budget (VCT calls can be costly).
            if self.result == SolveResult::Win && self.know.nodes < self.know_budget {
                if let Some(m) = g.knowledge_win(self.know) {
                    if legal.contains(&m) {
                        let mark = self.nodes.len();
                        if let Some(c) = self.node_after(g, m, depth) {
                            self.nodes[idx as usize].children.push((m, c));
                            return Some(idx);
                        }
                        self.nodes.truncate(mark);
                        tried = Some(m);
                    }
                }
            }
            let m = self.oracle.choose(g, self.prover, self.result)?;
            if Some(m) == tried || !legal.contains(&m) {
                return None;
            }
            let c = self.node_after(g, m, depth)?;
            self.nodes[idx as usize].children.push((m, c));
            Some(idx)
        } else {
            for &m in &legal {
                let c = self.node_after(g, m, depth)?;
                self.nodes[idx as usize].children.push((m, c));
            }
            Some(idx)
        }
    }

    fn node_after(&mut self, g: &mut G, m: Move, depth: usize) -> Option<u32> {
        g.play_unchecked(m);
        let r = self.node(g, depth + 1);
        g.undo();
        r
    }
}

/// The attempts of a proof build, in order: each one's node budget as a multiple of
/// [`super::CommonOptions::proof_search_nodes`], and how many parts of it one re-search may
/// take at most.
///
/// A small budget first: a re-search that fails sends the build back to a threat win higher
/// up, which usually gives a much smaller tree; a larger one when that fails (some proofs
/// need a long re-search). Capping each re-search at a part of the budget keeps the first
/// hard node from spending it all: with the whole budget for one re-search, every later
/// re-search (those that would find another move higher up) fails at once. The last
/// attempt lets one re-search take everything, for the proofs that need one very long one.
pub(crate) const ATTEMPTS: [Attempt; 3] = [
    Attempt { scale: 1, parts: 4 },
    Attempt {
        scale: 10,
        parts: 4,
    },
    Attempt {
        scale: 10,
        parts: 1,
    },
];

/// One attempt of a proof build (see [`ATTEMPTS`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attempt {
    /// The attempt's node budget, in units of the proof search budget.
    pub scale: u64,
    /// One re-search takes at most 1 / `parts` of the attempt's budget.
    pub parts: u64,
}

/// The re-search nodes of one attempt.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResearchBudget {
    /// For all re-searches of the attempt together.
    pub total: u64,
    /// For one re-search.
    pub per_search: u64,
}

/// Runs `attempt` with each budget of [`ATTEMPTS`] in turn (`search_nodes` times the
/// scale, for the attempt's re-searches and its threat searches alike) until one builds the
/// tree or `stop` is set.
pub(crate) fn with_growing_budgets(
    search_nodes: u64,
    max_nodes: usize,
    stop: &AtomicBool,
    mut attempt: impl FnMut(ResearchBudget, BuildLimits<'_>) -> Option<ProofTree>,
) -> Option<ProofTree> {
    for a in ATTEMPTS {
        let total = search_nodes.saturating_mul(a.scale);
        let limits = BuildLimits {
            max_nodes,
            know_nodes: total,
            stop,
        };
        let research = ResearchBudget {
            total,
            per_search: (total / a.parts.max(1)).max(1),
        };
        let tree = attempt(research, limits);
        if tree.is_some() || stop.load(Ordering::Relaxed) {
            return tree;
        }
    }
    None
}

/// What bounds one proof build.
pub(crate) struct BuildLimits<'a> {
    /// Largest tree built (nodes); larger gives `None`.
    pub max_nodes: usize,
    /// Knowledge (threat-search) nodes the build may spend.
    pub know_nodes: u64,
    /// Set by the caller to give up.
    pub stop: &'a AtomicBool,
}

/// Builds the solution tree of `result` (win or loss) for `prover` from `root`.
pub(crate) fn build<G: SolverGame>(
    root: &G,
    prover: Color,
    result: SolveResult,
    oracle: &mut dyn ProofOracle<G>,
    know: &mut KnowledgeState,
    limits: BuildLimits,
) -> Option<ProofTree> {
    let BuildLimits {
        max_nodes,
        know_nodes: know_budget,
        stop,
    } = limits;
    if result == SolveResult::Unknown {
        return None;
    }
    let mut b = Builder {
        prover,
        result,
        chooser: if result == SolveResult::Win {
            prover
        } else {
            prover.opp()
        },
        nodes: Vec::new(),
        max_nodes,
        oracle,
        know_budget: know.nodes.saturating_add(know_budget),
        know,
        stop,
    };
    let mut g = root.clone();
    b.node(&mut g, 0)?;
    Some(ProofTree {
        prover,
        result,
        nodes: b.nodes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(stop: &AtomicBool, succeed_at: Option<usize>) -> Vec<(u64, u64, u64)> {
        let mut seen = Vec::new();
        let tree = with_growing_budgets(1000, 50, stop, |r, b| {
            assert_eq!(b.max_nodes, 50);
            seen.push((r.total, r.per_search, b.know_nodes));
            (Some(seen.len()) == succeed_at).then(|| ProofTree {
                prover: Color::Black,
                result: SolveResult::Win,
                nodes: Vec::new(),
            })
        });
        assert_eq!(tree.is_some(), succeed_at.is_some());
        seen
    }

    #[test]
    fn attempts_grow_and_cap_one_research_until_the_last() {
        let go = AtomicBool::new(false);
        // All fail: 1x with a quarter per re-search, 10x with a quarter, 10x uncapped.
        assert_eq!(
            record(&go, None),
            vec![
                (1000, 250, 1000),
                (10_000, 2500, 10_000),
                (10_000, 10_000, 10_000)
            ]
        );
        // The first tree ends the build.
        assert_eq!(record(&go, Some(2)).len(), 2);
        // A stop ends it after the attempt that saw it.
        assert_eq!(record(&AtomicBool::new(true), None).len(), 1);
    }
}
