//! αβ as a solver: iterative-deepening depth-limited search on the prover's two-valued goal
//! (the baseline of the Gomoku seed, `gomoku-rl-with-advisor`).
//!
//! A node is a prover win (OR: some child wins; AND: every child wins), a loss (OR: every
//! child loses; AND: some child loses), or unknown. With only these values αβ is a boolean
//! AND/OR search: an OR node stops at the first winning child (the β cut), an AND node at
//! the first refutation. A result is claimed only when the searched tree is complete: a node
//! at the depth horizon is unknown unless the game is over there or knowledge (VCF) proves
//! it, and an unknown child keeps its parent unknown unless a sibling decides it. So every
//! win and loss is exact, whatever the depth.
//!
//! Move ordering: the move stored for the position in the table (the one that decided it or
//! was best at the last depth) first, then the heuristic's priors (Gomoku: the threat-table
//! scores of [`crate::search::gomoku::greedy::cell_score`] through `ThreatPriors`; a network's policy
//! when one is plugged in), ties broken by closeness to the last move (Killall-Go's
//! uniform priors then give a simple local-first order), a pass last.
//!
//! The table stores solved positions (depth-independent) and, for unknown ones, the depth
//! searched and the best move. Depth grows by one per iteration until the root is solved,
//! the limits run out, or `Limits::depth` is reached.

use std::time::Instant;

use super::suite::tree_solver;
use super::suite::{terminal_status, Common, TreeSearch};
use super::tt::{LOSS, NO_MOVE, UNKNOWN, WIN};
use super::{CommonOptions, Evaluation, Heuristic, SolveEvent, SolverGame, SolverKind};
use crate::game::{Color, Move};
use crate::search::{Budget, Limits};

/// Deepest iteration tried when the limits give no depth.
const MAX_DEPTH: u32 = 200;

/// The αβ solver.
pub struct AbSolver<G: SolverGame> {
    c: Common<G>,
    heuristic: Box<dyn Heuristic<G>>,
    eval: Vec<Evaluation>,
    bufs: Vec<Vec<(f32, Move)>>,
    aborted: bool,
    last_report: Instant,
    root_best: Move,
    /// The root's table key, status, the depth of the next iteration and the deepest one
    /// (of the current solve).
    root_key: u64,
    status: i8,
    depth: u32,
    max_depth: u32,
}

/// Unknown entries keep the depth searched in the table's pn field (dn = 1).
fn unknown_numbers(depth: u32) -> (u64, u64) {
    (depth as u64 + 1, 1)
}

impl<G: SolverGame> AbSolver<G> {
    /// A solver with this heuristic (priors order the moves).
    pub fn new(opts: CommonOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let bytes = opts.tt_bytes();
        AbSolver {
            c: Common::new(opts, bytes),
            heuristic,
            eval: vec![Evaluation::default()],
            bufs: Vec::new(),
            aborted: false,
            last_report: Instant::now(),
            root_best: NO_MOVE,
            root_key: 0,
            status: UNKNOWN,
            depth: 1,
            max_depth: MAX_DEPTH,
        }
    }

    /// The ordered moves of `g` into `out`.
    fn order(&mut self, g: &G, hint: Move, out: &mut Vec<(f32, Move)>) {
        out.clear();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        self.heuristic.priors_batch(&[g], &mut self.eval[..1]);
        let w = g.width() as i64;
        let cells = (g.width() * g.height()) as u32;
        let recent: Vec<(i64, i64)> = g
            .last_move()
            .into_iter()
            .filter(|&m| (m as u32) < cells)
            .map(|m| (m as i64 % w, m as i64 / w))
            .collect();
        for m in moves {
            let prior = self.eval[0].policy.get(m as usize).copied().unwrap_or(0.0);
            let near = if (m as u32) < cells && !recent.is_empty() {
                let (x, y) = (m as i64 % w, m as i64 / w);
                let d = recent
                    .iter()
                    .map(|&(a, b)| (a - x).abs().max((b - y).abs()))
                    .min()
                    .unwrap_or(0);
                1.0 / (1.0 + d as f32)
            } else if (m as u32) < cells {
                0.0
            } else {
                -1.0 // a pass last
            };
            let score = if m == hint {
                f32::INFINITY
            } else {
                prior * 1000.0 + near
            };
            out.push((score, m));
        }
        out.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    }

    /// Depth-limited AND/OR search: WIN, LOSS or UNKNOWN for the prover.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        g: &mut G,
        prover: Color,
        depth: u32,
        hist: u64,
        ply: usize,
        budget: &mut Budget,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> i8 {
        if let Some(s) = terminal_status(g, prover) {
            return s;
        }
        if budget.exhausted() {
            self.aborted = true;
            return UNKNOWN;
        }
        budget.nodes += 1;
        if budget.nodes & 0xfff == 0 && self.last_report.elapsed().as_millis() >= 500 {
            self.last_report = Instant::now();
            on_event(&SolveEvent::Progress {
                nodes: budget.nodes,
                elapsed: budget.elapsed(),
                best: (self.root_best != NO_MOVE).then_some(self.root_best),
                pn_dn: None,
                value: None,
                tt_used: self.c.tt.used(),
            });
        }
        let key = self.c.key(g, prover, hist);
        let mut hint = NO_MOVE;
        let seen = self.c.tt.get(key).is_some();
        if let Some(e) = self.c.tt.get(key) {
            if e.proven() {
                return WIN;
            }
            if e.disproven() {
                return LOSS;
            }
            if e.pn() > depth as u64 && ply > 0 {
                // Already searched this deep without a result.
                return UNKNOWN;
            }
            hint = e.best;
        }
        let or = g.to_move() == prover;
        // Knowledge is deterministic: a position searched before already failed it.
        if or && !seen && self.c.knowledge(g, prover, key).is_some() {
            return WIN;
        }
        if depth == 0 {
            let (pn, dn) = unknown_numbers(0);
            self.c.tt.put(key, pn, dn, 1, NO_MOVE);
            return UNKNOWN;
        }
        let mut buf = self.bufs.pop().unwrap_or_default();
        self.order(g, hint, &mut buf);
        let mut unknown = false;
        let mut result = if or { LOSS } else { WIN };
        let mut best = NO_MOVE;
        let before = budget.nodes;
        for &(_, m) in buf.iter() {
            g.play_unchecked(m);
            let h = self.c.child_hist(g, hist);
            let r = self.search(g, prover, depth - 1, h, ply + 1, budget, on_event);
            g.undo();
            if best == NO_MOVE {
                best = m;
            }
            if (or && r == WIN) || (!or && r == LOSS) {
                result = r;
                best = m;
                unknown = false;
                break;
            }
            if r == UNKNOWN {
                unknown = true;
                if self.aborted {
                    break;
                }
            }
        }
        self.bufs.push(buf);
        if ply == 0 && best != NO_MOVE {
            self.root_best = best;
        }
        let effort = budget.nodes - before;
        if unknown {
            if !self.aborted {
                let (pn, dn) = unknown_numbers(depth);
                self.c.tt.put(key, pn, dn, effort, best);
            }
            return UNKNOWN;
        }
        // Complete: every child searched (or a decisive one found).
        self.c.store(key, result, best, effort);
        result
    }
}

tree_solver!(AbSolver);

impl<G: SolverGame> TreeSearch<G> for AbSolver<G> {
    const KIND: SolverKind = SolverKind::Ab;
    // Its iterations are whole depths: it reports from inside them.
    const PROGRESS_MASK: Option<u64> = None;
    const POOL: bool = false;

    fn common(&self) -> &Common<G> {
        &self.c
    }

    fn common_mut(&mut self) -> &mut Common<G> {
        &mut self.c
    }

    fn start(&mut self, g: &G, prover: Color, root_key: u64, limits: &Limits) {
        self.root_key = root_key;
        self.aborted = false;
        self.root_best = NO_MOVE;
        self.last_report = Instant::now();
        self.max_depth = limits.depth.unwrap_or(MAX_DEPTH).max(1);
        self.status = terminal_status(g, prover).unwrap_or(UNKNOWN);
        self.depth = 1;
    }

    /// One depth: the next iteration of the deepening.
    fn iterate(
        &mut self,
        g: &mut G,
        prover: Color,
        root_hist: u64,
        budget: &mut Budget,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> bool {
        if self.depth > self.max_depth {
            return false;
        }
        self.status = self.search(g, prover, self.depth, root_hist, 0, budget, on_event);
        if self.aborted {
            return false;
        }
        self.depth += 1;
        true
    }

    fn root_status(&self) -> i8 {
        self.status
    }

    /// The move stored for the root, else the best of the last iteration.
    fn root_best(&self, _root_mover: Color, _prover: Color) -> Option<Move> {
        self.c
            .stored_best(self.root_key)
            .or((self.root_best != NO_MOVE).then_some(self.root_best))
    }

    fn root_report(&self, _root_mover: Color, _prover: Color) -> (Option<(u64, u64)>, Option<f32>) {
        (None, None)
    }
}
