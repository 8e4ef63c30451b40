//! Expected Work Search (EWS; seed `ews-expected-work-search`).
//!
//! Every node X keeps, for its side to move, a win rate `WR(X)` and two expected-work
//! estimates: `EW_win(X)` (the work to prove X won for its mover) and `EW_loss(X)` (to
//! prove it lost). "Winning" is two-valued from the prover's goal: at the prover's nodes it
//! is a prover win, at the opponent's nodes it is keeping the prover from a win (a Gomoku
//! draw counts for the opponent). With the unsolved children C_1..C_n in search order:
//!
//! - `EW_loss(X) = Σ EW_win(C_i)` (every child must be proven won by the opponent);
//! - `EW_win(X) = Σ EW_loss(C_i) · Π_{j<i} WR(C_j)` (children are tried in order until one
//!   is proven lost for its mover);
//! - `WR(X) = 1 − Π WR(C_i)`;
//! - the order is ascending in `EW_loss(C) / (1 − WR(C))`, which minimises `EW_win(X)`.
//!
//! Selection always follows the first child. The 1+ε trick: the current first child keeps
//! its place until another child's key is smaller by the factor `1 + ε`
//! ([`EwsOptions::epsilon`]), so the search does not thrash between near-equal siblings.
//! Expansion adds every child with terminal checks: a child lost for its mover proves X, a
//! child won for its mover is dropped, X with no child left is lost.
//!
//! Initialisation (optimistic): with the no-network heuristics (`uniform`, `threat`: their
//! value is a playout anyway) one random playout per new child, counted as `wins 1 + result`
//! over `visits 2 + 1`, so WR is never 0 or 1, and `EW_win = EW_loss = Σ branching factors
//! along the playout`. With another heuristic (networks): WR from its value, EW from its
//! proof costs when [`Heuristic::has_cost`] (`10^cost`), else the child's mobility.
//!
//! Knowledge (VCF) proves a leaf where the prover is to move before it is expanded. Solved
//! positions go to the transposition table (history-exact keys where superko needs them) and
//! are reused when a transposition is met. `nodes` counts created children.

use super::suite::tree_solver;
use super::suite::{decisive_child, good_for, playout, terminal_status, Common, TreeSearch};
use super::tt::{NO_MOVE, UNKNOWN, WIN};
use super::{
    CommonOptions, Evaluation, Heuristic, SolveEvent, SolverError, SolverGame, SolverKind,
};
use crate::game::{Color, Move};
use crate::search::{Budget, Limits};
use crate::util::Rng;

/// Work estimates saturate here (keeps sums and products finite).
const EW_MAX: f64 = 1e150;

#[derive(Copy, Clone, Debug)]
struct Node {
    mv: Move,
    first: u32,
    count: u16,
    status: i8,
    expanded: bool,
    /// The current first child (offset from `first`), for the 1+ε trick.
    cur: u16,
    /// Win rate of the side to move here.
    wr: f64,
    ew_win: f64,
    ew_loss: f64,
}

impl Node {
    fn new(mv: Move) -> Node {
        Node {
            mv,
            first: 0,
            count: 0,
            status: UNKNOWN,
            expanded: false,
            cur: u16::MAX,
            wr: 0.5,
            ew_win: 1.0,
            ew_loss: 1.0,
        }
    }

    /// The ordering key `EW_loss / (1 − WR)`.
    #[inline]
    fn key(&self) -> f64 {
        self.ew_loss / (1.0 - self.wr).max(1e-12)
    }
}

/// Expected Work Search's own options. `Default` gives the settings of the suite-II study.
#[derive(Clone, Debug, PartialEq)]
pub struct EwsOptions {
    /// The 1+ε slack of the selection (as DFPN's 1+ε trick; PCN: 0.25).
    pub epsilon: f64,
}

impl Default for EwsOptions {
    fn default() -> Self {
        EwsOptions { epsilon: 0.25 }
    }
}

impl EwsOptions {
    /// Checks the range.
    pub fn check(&self) -> Result<(), SolverError> {
        if !(self.epsilon >= 0.0 && self.epsilon <= 10.0) {
            return Err(SolverError::BadOption(format!("epsilon {}", self.epsilon)));
        }
        Ok(())
    }
}

/// The Expected Work Search solver.
pub struct Ews<G: SolverGame> {
    c: Common<G>,
    opts: EwsOptions,
    heuristic: Box<dyn Heuristic<G>>,
    /// The heuristic's value is a random playout: use our own playouts (they also measure
    /// the branching).
    playouts: bool,
    rng: Rng,
    nodes: Vec<Node>,
    max_nodes: usize,
    eval: Vec<Evaluation>,
    moves: Vec<Move>,
    buf: Vec<Move>,
    order: Vec<u32>,
    path: Vec<u32>,
    hists: Vec<u64>,
    root_key: u64,
}

impl<G: SolverGame> Ews<G> {
    /// A solver with this heuristic.
    pub fn new(common: CommonOptions, opts: EwsOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let half = common.tt_bytes() / 2;
        let playouts = matches!(heuristic.name(), "uniform" | "threat");
        Ews {
            max_nodes: (half / std::mem::size_of::<Node>()).max(1024),
            rng: Rng::new(common.seed ^ 0xe5_0e5),
            c: Common::new(common, half),
            opts,
            heuristic,
            playouts,
            nodes: Vec::new(),
            eval: vec![Evaluation::default()],
            moves: Vec::with_capacity(512),
            buf: Vec::with_capacity(512),
            order: Vec::new(),
            path: Vec::with_capacity(256),
            hists: Vec::with_capacity(256),
            root_key: 0,
        }
    }

    fn kids(&self, idx: usize) -> std::ops::Range<usize> {
        let n = &self.nodes[idx];
        n.first as usize..n.first as usize + n.count as usize
    }

    /// Sets a node's numbers from its solved status (`mover` moves there).
    fn set_solved(n: &mut Node, status: i8, mover: Color, prover: Color) {
        n.status = status;
        if good_for(status, mover, prover) {
            (n.wr, n.ew_win, n.ew_loss) = (1.0, 0.0, EW_MAX);
        } else {
            (n.wr, n.ew_win, n.ew_loss) = (0.0, EW_MAX, 0.0);
        }
    }

    /// Recomputes expanded node `idx` (mover `mover`) from its children.
    fn recompute(&mut self, idx: usize, mover: Color, prover: Color) {
        if self.nodes[idx].status != UNKNOWN {
            return;
        }
        self.order.clear();
        let mut lost_child = false;
        for k in self.kids(idx) {
            let ch = &self.nodes[k];
            if ch.status == UNKNOWN {
                self.order.push(k as u32);
            } else if !good_for(ch.status, mover.opp(), prover) {
                // A child lost for its mover (the opponent of `mover`) proves this node.
                lost_child = true;
            }
        }
        if lost_child || self.order.is_empty() {
            let good = lost_child;
            let status = if good == (mover == prover) {
                WIN
            } else {
                super::tt::LOSS
            };
            Self::set_solved(&mut self.nodes[idx], status, mover, prover);
            return;
        }
        let nodes = &self.nodes;
        self.order.sort_by(|&a, &b| {
            nodes[a as usize]
                .key()
                .partial_cmp(&nodes[b as usize].key())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let (mut ew_win, mut ew_loss, mut reach) = (0.0f64, 0.0f64, 1.0f64);
        for &k in &self.order {
            let ch = &self.nodes[k as usize];
            ew_win += ch.ew_loss * reach;
            ew_loss += ch.ew_win;
            reach *= ch.wr;
        }
        let n2 = &mut self.nodes[idx];
        n2.ew_win = ew_win.min(EW_MAX);
        n2.ew_loss = ew_loss.min(EW_MAX);
        // Keep WR strictly inside (0, 1) while unsolved.
        n2.wr = (1.0 - reach).clamp(1e-9, 1.0 - 1e-9);
    }

    /// The child to follow: the first in the order, with the 1+ε hysteresis.
    fn select(&mut self, idx: usize) -> Option<usize> {
        let n = self.nodes[idx];
        let mut best = None;
        let mut best_k = f64::INFINITY;
        for k in self.kids(idx) {
            let ch = &self.nodes[k];
            if ch.status == UNKNOWN && ch.key() < best_k {
                best_k = ch.key();
                best = Some(k);
            }
        }
        let best = best?;
        let eps = self.opts.epsilon;
        if n.cur != u16::MAX {
            let cur = n.first as usize + n.cur as usize;
            if cur < n.first as usize + n.count as usize
                && self.nodes[cur].status == UNKNOWN
                && best_k * (1.0 + eps) >= self.nodes[cur].key()
            {
                return Some(cur);
            }
        }
        self.nodes[idx].cur = (best - n.first as usize) as u16;
        Some(best)
    }

    /// Initial numbers of a new, unfinished child (position `g`).
    fn init_child(&mut self, g: &G, prover: Color, ch: &mut Node) {
        if self.playouts {
            let (win, work) = playout(
                g,
                prover,
                &mut self.rng,
                self.c.opts.playout_plies,
                &mut self.buf,
            );
            ch.wr = (1.0 + win as u8 as f64) / 3.0;
            ch.ew_win = work.min(EW_MAX);
            ch.ew_loss = work.min(EW_MAX);
            return;
        }
        self.heuristic.evaluate_batch(&[g], &mut self.eval[..1]);
        Self::init_from(&self.eval[0], self.heuristic.has_cost(), g, ch);
    }

    /// Initial numbers of a child from its evaluation (networks: value and proof costs).
    fn init_from(e: &Evaluation, has_cost: bool, g: &G, ch: &mut Node) {
        let v = e.value.clamp(-1.0, 1.0) as f64;
        // The value is for the side to move; "winning" for the opponent includes draws,
        // which a value of 0 already sits between.
        ch.wr = ((v + 1.0) * 0.5).clamp(0.01, 0.99);
        let me = g.to_move();
        match e.cost.filter(|_| has_cost) {
            Some(c) => {
                ch.ew_win = 10f64.powf(c[me.index()] as f64).clamp(1.0, EW_MAX);
                ch.ew_loss = 10f64.powf(c[me.opp().index()] as f64).clamp(1.0, EW_MAX);
            }
            None => {
                let m = g.mobility().max(1) as f64;
                ch.ew_win = m;
                ch.ew_loss = m;
            }
        }
    }

    /// Expands leaf `idx`; `false` when the pool is full.
    fn expand(
        &mut self,
        idx: usize,
        g: &mut G,
        prover: Color,
        hist: u64,
        budget: &mut Budget,
    ) -> bool {
        let mover = g.to_move();
        if let Some(st) = terminal_status(g, prover) {
            Self::set_solved(&mut self.nodes[idx], st, mover, prover);
            return true;
        }
        let key = self.c.key(g, prover, hist);
        let mut st = self.c.stored(key);
        if st == UNKNOWN && self.c.knowledge(g, prover, key).is_some() {
            st = WIN;
        }
        if st != UNKNOWN {
            Self::set_solved(&mut self.nodes[idx], st, mover, prover);
            return true;
        }
        g.legal_moves(&mut self.moves);
        if self.nodes.len() + self.moves.len() > self.max_nodes {
            return false;
        }
        let first = self.nodes.len() as u32;
        let moves = std::mem::take(&mut self.moves);
        // Children for the heuristic, evaluated as one batch (a network's natural unit).
        let mut pending: Vec<(usize, G)> = Vec::new();
        for &m in &moves {
            g.play_unchecked(m);
            let mut ch = Node::new(m);
            let cm = g.to_move();
            if let Some(s) = terminal_status(g, prover) {
                Self::set_solved(&mut ch, s, cm, prover);
            } else {
                let s = self
                    .c
                    .stored(self.c.key(g, prover, self.c.child_hist(g, hist)));
                if s != UNKNOWN {
                    Self::set_solved(&mut ch, s, cm, prover);
                } else if self.playouts {
                    self.init_child(g, prover, &mut ch);
                } else {
                    pending.push((self.nodes.len(), g.clone()));
                }
            }
            g.undo();
            let decisive = ch.status != UNKNOWN && !good_for(ch.status, cm, prover);
            self.nodes.push(ch);
            budget.nodes += 1;
            if decisive {
                // A child lost for its mover: this node is proven, the rest need no work.
                break;
            }
        }
        self.moves = moves;
        if !pending.is_empty() {
            let refs: Vec<&G> = pending.iter().map(|(_, c)| c).collect();
            self.eval.resize_with(refs.len(), Evaluation::default);
            self.heuristic
                .evaluate_batch(&refs, &mut self.eval[..refs.len()]);
            let has_cost = self.heuristic.has_cost();
            for ((k, c), e) in pending.iter().zip(self.eval.iter()) {
                Self::init_from(e, has_cost, c, &mut self.nodes[*k]);
            }
        }
        let count = (self.nodes.len() - first as usize) as u16;
        let n = &mut self.nodes[idx];
        n.first = first;
        n.count = count;
        n.expanded = true;
        self.recompute(idx, mover, prover);
        true
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
                if !self.expand(idx, g, prover, hist, budget) {
                    for _ in 1..self.path.len() {
                        g.undo();
                    }
                    return false;
                }
                break;
            }
            match self.select(idx) {
                Some(k) => {
                    g.play_unchecked(self.nodes[k].mv);
                    let h = self.c.child_hist(g, hist);
                    self.path.push(k as u32);
                    self.hists.push(h);
                    idx = k;
                }
                None => {
                    let mover = g.to_move();
                    self.recompute(idx, mover, prover);
                    break;
                }
            }
        }
        for i in (0..self.path.len()).rev() {
            let id = self.path[i] as usize;
            let mover = g.to_move();
            let before = self.nodes[id].status;
            if i + 1 != self.path.len() {
                self.recompute(id, mover, prover);
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

    /// The child that decides a solved node (proven lost for its own mover), or none.
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
        self.kids(0)
            .filter(|&k| self.nodes[k].status == UNKNOWN)
            .min_by(|&a, &b| {
                self.nodes[a]
                    .key()
                    .partial_cmp(&self.nodes[b].key())
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .or_else(|| self.kids(0).next())
            .map(|k| self.nodes[k].mv)
    }

    /// The root's win rate for the prover, as a value in [-1, 1].
    fn root_value(&self, root_mover: Color, prover: Color) -> Option<f32> {
        let r = self.nodes.first()?;
        let wr = if root_mover == prover {
            r.wr
        } else {
            1.0 - r.wr
        };
        Some((wr * 2.0 - 1.0) as f32)
    }
}

tree_solver!(Ews);

impl<G: SolverGame> TreeSearch<G> for Ews<G> {
    const KIND: SolverKind = SolverKind::Ews;
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
        self.nodes.push(Node::new(NO_MOVE));
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

    fn root_report(&self, root_mover: Color, prover: Color) -> (Option<(u64, u64)>, Option<f32>) {
        (None, self.root_value(root_mover, prover))
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
