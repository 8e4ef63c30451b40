//! Probability-based proof-number search (PPN; seed `ppn-probability-based-proof-number-search`).
//!
//! One number per node: `p`, the probability that the prover wins there. A new child gets
//! the heuristic's value mapped to the prover's win probability (`(v + 1) / 2`; with the
//! no-network heuristics that is a random playout) clamped to `[θ, 1 − θ]`
//! ([`PpnOptions::theta`]); a finished game gets 1 (prover win) or 0. Interior nodes:
//! OR (prover to move) `p = 1 − Π (1 − p_c)`, AND `p = Π p_c`, children taken as independent.
//! Each iteration descends from the root through the unsolved child of **largest** `p` at OR
//! nodes and **smallest** `p` at AND nodes, expands the leaf (all children, each evaluated),
//! and recomputes `p` and the solved status (AND/OR) up the path.
//!
//! Knowledge (VCF) proves a leaf where the prover is to move before it is expanded. Solved
//! positions go to the table and are reused for transpositions. `nodes` counts created (and
//! evaluated) children. The node pool gets half of the memory budget, the table the other
//! half; the search stops when the pool is full.

use super::suite::tree_solver;
use super::suite::{decisive_child, terminal_status, Common, TreeSearch};
use super::tt::{LOSS, NO_MOVE, UNKNOWN, WIN};
use super::{
    CommonOptions, Evaluation, Heuristic, SolveEvent, SolverError, SolverGame, SolverKind,
};
use crate::game::{Color, Move};
use crate::search::{Budget, Limits};

#[derive(Copy, Clone, Debug)]
struct Node {
    mv: Move,
    first: u32,
    count: u16,
    status: i8,
    expanded: bool,
    /// Probability that the prover wins.
    p: f64,
}

impl Node {
    fn new(mv: Move, p: f64) -> Node {
        Node {
            mv,
            first: 0,
            count: 0,
            status: UNKNOWN,
            expanded: false,
            p,
        }
    }
}

fn p_of(status: i8) -> f64 {
    if status == WIN {
        1.0
    } else {
        0.0
    }
}

/// PPN's own options. `Default` gives the settings of the suite-II study.
#[derive(Clone, Debug, PartialEq)]
pub struct PpnOptions {
    /// Leaf probabilities are clamped to `[θ, 1 − θ]`.
    pub theta: f64,
}

impl Default for PpnOptions {
    fn default() -> Self {
        PpnOptions { theta: 0.02 }
    }
}

impl PpnOptions {
    /// Checks the range (0 < θ < 0.5).
    pub fn check(&self) -> Result<(), SolverError> {
        if !(self.theta > 0.0 && self.theta < 0.5) {
            return Err(SolverError::BadOption(format!("ppn theta {}", self.theta)));
        }
        Ok(())
    }
}

/// The PPN solver.
pub struct Ppn<G: SolverGame> {
    c: Common<G>,
    opts: PpnOptions,
    heuristic: Box<dyn Heuristic<G>>,
    nodes: Vec<Node>,
    max_nodes: usize,
    eval: Vec<Evaluation>,
    moves: Vec<Move>,
    path: Vec<u32>,
    hists: Vec<u64>,
    root_key: u64,
}

impl<G: SolverGame> Ppn<G> {
    /// A solver with this heuristic (its values initialise the leaves).
    pub fn new(common: CommonOptions, opts: PpnOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let half = common.tt_bytes() / 2;
        Ppn {
            max_nodes: (half / std::mem::size_of::<Node>()).max(1024),
            c: Common::new(common, half),
            opts,
            heuristic,
            nodes: Vec::new(),
            eval: vec![Evaluation::default()],
            moves: Vec::with_capacity(512),
            path: Vec::with_capacity(256),
            hists: Vec::with_capacity(256),
            root_key: 0,
        }
    }

    fn kids(&self, idx: usize) -> std::ops::Range<usize> {
        let n = &self.nodes[idx];
        n.first as usize..n.first as usize + n.count as usize
    }

    /// Recomputes `p` and the status of expanded node `idx` from its children.
    fn recompute(&mut self, idx: usize, or: bool) {
        let (mut prod, mut any_win, mut all_win, mut any_loss, mut all_loss) =
            (1.0f64, false, true, false, true);
        for k in self.kids(idx) {
            let ch = &self.nodes[k];
            prod *= if or { 1.0 - ch.p } else { ch.p };
            any_win |= ch.status == WIN;
            any_loss |= ch.status == LOSS;
            all_win &= ch.status == WIN;
            all_loss &= ch.status == LOSS;
        }
        let n = &mut self.nodes[idx];
        let status = if or {
            if any_win {
                WIN
            } else if all_loss {
                LOSS
            } else {
                UNKNOWN
            }
        } else if any_loss {
            LOSS
        } else if all_win {
            WIN
        } else {
            UNKNOWN
        };
        n.status = status;
        n.p = if status != UNKNOWN {
            p_of(status)
        } else if or {
            1.0 - prod
        } else {
            prod
        };
    }

    /// Expands leaf `idx` (position `g`, history `hist`). `None` when the pool is full; else
    /// the number of children created.
    fn expand(
        &mut self,
        idx: usize,
        g: &mut G,
        prover: Color,
        hist: u64,
        budget: &mut Budget,
    ) -> Option<u64> {
        if let Some(st) = terminal_status(g, prover) {
            self.nodes[idx].status = st;
            self.nodes[idx].p = p_of(st);
            return Some(0);
        }
        let key = self.c.key(g, prover, hist);
        let mut st = self.c.stored(key);
        if st == UNKNOWN && self.c.knowledge(g, prover, key).is_some() {
            st = WIN;
        }
        if st != UNKNOWN {
            self.nodes[idx].status = st;
            self.nodes[idx].p = p_of(st);
            return Some(0);
        }
        g.legal_moves(&mut self.moves);
        if self.nodes.len() + self.moves.len() > self.max_nodes {
            return None;
        }
        let theta = self.opts.theta;
        let first = self.nodes.len() as u32;
        let moves = std::mem::take(&mut self.moves);
        // Children to evaluate, as one batch (a network evaluates them together).
        let mut pending: Vec<(usize, G)> = Vec::new();
        for &m in &moves {
            g.play_unchecked(m);
            let mut ch = Node::new(m, 0.5);
            if let Some(s) = terminal_status(g, prover) {
                ch.status = s;
                ch.p = p_of(s);
            } else {
                let s = self
                    .c
                    .stored(self.c.key(g, prover, self.c.child_hist(g, hist)));
                if s != UNKNOWN {
                    ch.status = s;
                    ch.p = p_of(s);
                } else {
                    pending.push((self.nodes.len(), g.clone()));
                }
            }
            g.undo();
            self.nodes.push(ch);
            budget.nodes += 1;
        }
        if !pending.is_empty() {
            let refs: Vec<&G> = pending.iter().map(|(_, c)| c).collect();
            self.eval
                .resize_with(refs.len().max(1), Evaluation::default);
            self.heuristic
                .evaluate_batch(&refs, &mut self.eval[..refs.len()]);
            for ((k, c), e) in pending.iter().zip(self.eval.iter()) {
                let v = e.value.clamp(-1.0, 1.0) as f64;
                let v = if c.to_move() == prover { v } else { -v };
                self.nodes[*k].p = ((v + 1.0) * 0.5).clamp(theta, 1.0 - theta);
            }
        }
        let created = pending.len() as u64;
        self.moves = moves;
        let count = (self.nodes.len() - first as usize) as u16;
        let n = &mut self.nodes[idx];
        n.first = first;
        n.count = count;
        n.expanded = true;
        let or = g.to_move() == prover;
        self.recompute(idx, or);
        Some(created)
    }

    /// The unsolved child of `idx` to follow: max `p` at OR nodes, min `p` at AND nodes.
    fn select(&self, idx: usize, or: bool) -> Option<usize> {
        let mut best = None;
        let mut best_v = f64::NEG_INFINITY;
        for k in self.kids(idx) {
            let ch = &self.nodes[k];
            if ch.status != UNKNOWN {
                continue;
            }
            let v = if or { ch.p } else { -ch.p };
            if v > best_v {
                best_v = v;
                best = Some(k);
            }
        }
        best
    }

    /// One iteration; `false` when the pool is full.
    fn iteration(&mut self, g: &mut G, prover: Color, root_hist: u64, budget: &mut Budget) -> bool {
        self.path.clear();
        self.hists.clear();
        self.path.push(0);
        self.hists.push(root_hist);
        let mut idx = 0usize;
        loop {
            let n = self.nodes[idx];
            if n.status != UNKNOWN {
                break;
            }
            let hist = *self.hists.last().unwrap_or(&0);
            if !n.expanded {
                if self.expand(idx, g, prover, hist, budget).is_none() {
                    // Pool full: restore the position and stop.
                    for _ in 1..self.path.len() {
                        g.undo();
                    }
                    return false;
                }
                break;
            }
            let or = g.to_move() == prover;
            match self.select(idx, or) {
                Some(k) => {
                    g.play_unchecked(self.nodes[k].mv);
                    let h = self.c.child_hist(g, hist);
                    self.path.push(k as u32);
                    self.hists.push(h);
                    idx = k;
                }
                None => {
                    self.recompute(idx, or);
                    break;
                }
            }
        }
        for i in (0..self.path.len()).rev() {
            let id = self.path[i] as usize;
            let mover = g.to_move();
            let before = self.nodes[id].status;
            if i + 1 != self.path.len() {
                self.recompute(id, mover == prover);
            }
            let after = self.nodes[id].status;
            if after != UNKNOWN && (after != before || i + 1 == self.path.len()) {
                let key = self.c.key(g, prover, self.hists[i]);
                let best = self.decisive_move(id, mover, prover);
                self.c
                    .store(key, after, best, 1 + self.nodes[id].count as u64);
            }
            if i > 0 {
                g.undo();
            }
        }
        true
    }

    fn decisive_move(&self, idx: usize, mover: Color, prover: Color) -> Move {
        if !self.nodes[idx].expanded {
            return NO_MOVE;
        }
        let kids = self
            .kids(idx)
            .map(|k| (self.nodes[k].status, self.nodes[k].mv));
        decisive_child(kids, mover, prover)
    }

    fn best_root_move(&self, root_mover: Color, prover: Color) -> Option<Move> {
        let root = self.nodes.first()?;
        if !root.expanded || root.count == 0 {
            return self.c.stored_best(self.root_key);
        }
        let d = self.decisive_move(0, root_mover, prover);
        if d != NO_MOVE {
            return Some(d);
        }
        // Unsolved: the child the selection rule likes best.
        let or = root_mover == prover;
        self.select(0, or)
            .or_else(|| self.kids(0).next())
            .map(|k| self.nodes[k].mv)
    }
}

tree_solver!(Ppn);

impl<G: SolverGame> TreeSearch<G> for Ppn<G> {
    const KIND: SolverKind = SolverKind::Ppn;
    // Expansions add many nodes at once: the clock is read every iteration.
    const PROGRESS_MASK: Option<u64> = Some(0);
    const POOL: bool = true;

    fn common(&self) -> &Common<G> {
        &self.c
    }

    fn common_mut(&mut self) -> &mut Common<G> {
        &mut self.c
    }

    fn start(&mut self, _g: &G, _prover: Color, root_key: u64, _limits: &Limits) {
        self.root_key = root_key;
        self.nodes.clear();
        self.nodes.push(Node::new(NO_MOVE, 0.5));
    }

    fn iterate(
        &mut self,
        g: &mut G,
        prover: Color,
        root_hist: u64,
        budget: &mut Budget,
        _on_event: &mut dyn FnMut(&SolveEvent),
    ) -> bool {
        Self::iteration(self, g, prover, root_hist, budget)
    }

    fn root_status(&self) -> i8 {
        self.nodes[0].status
    }

    fn root_best(&self, root_mover: Color, prover: Color) -> Option<Move> {
        self.best_root_move(root_mover, prover)
    }

    fn root_report(&self, _root_mover: Color, _prover: Color) -> (Option<(u64, u64)>, Option<f32>) {
        (None, Some(self.nodes[0].p as f32 * 2.0 - 1.0))
    }

    fn pool_bytes(&self) -> usize {
        self.max_nodes * std::mem::size_of::<Node>()
    }

    fn reset_pool(&mut self, bytes: Option<usize>) {
        if let Some(b) = bytes {
            self.max_nodes = (b / std::mem::size_of::<Node>()).max(1024);
        }
        self.nodes = Vec::new();
    }
}
