//! Generalized proof-number MCTS (GPN-MCTS; seed `gpn-mcts-generalized-proof-number-mcts`).
//!
//! An MCTS solver whose selection adds a proof-number bias:
//! `score(i) = exploit(i) + explore(i) + C_pn · bias(i)`.
//!
//! - Proof numbers are kept **per player**, without disproof numbers: `pn[c]` estimates the
//!   effort to prove that colour `c` wins. At a node where `c` moves, `pn[c]` is the minimum
//!   over the children and the other colour's number is the sum. Terminal: 0 for the winner,
//!   ∞ for the others (a draw: ∞ for both). A new leaf gets the mobility initialisation:
//!   1 for the side to move, its number of legal moves ([`SolverGame::mobility`]) for the
//!   other side.
//! - The bias ([`PnBias`]) ranks the unsolved siblings by the proof number of the side to
//!   move at the parent: PNRank `1 - rank/max rank`, PNMax
//!   `1 - (pn - min)/(1 + max - min)`, PNSum `1 - pn/(1 + Σ pn)`, 0 for an infinite pn. It is
//!   recomputed lazily: a node's `need_recalc` flag is set when a child's numbers change and
//!   the biases are refreshed at its next selection.
//! - Exploitation/exploration: UCT (`(Q+1)/2 + C·sqrt(ln N / n)`, unvisited children first)
//!   when the heuristic's priors are uniform (the no-network setting: playout values), PUCT
//!   (`Q + c_puct · P · sqrt(N) / (1 + n)`) when they are not (threat priors, networks).
//! - Score bounds: with the prover's two-valued goal (win / no win) the bounds collapse to
//!   the solved statuses of the MCTS solver, propagated as in an AND/OR tree; solved
//!   children are never selected. A Gomoku draw is a non-win for the prover.
//! - Knowledge (VCF) proves nodes where the prover is to move; solved positions go to the
//!   table and are reused when a transposition is expanded.
//!
//! One simulation counts as one node. The node pool gets half of the memory budget and the
//! table the other half; the search stops when the pool is full.

use super::suite::tree_solver;
use super::suite::{decisive_child, good_for, terminal_status, Common, TreeSearch};
use super::tt::{LOSS, NO_MOVE, UNKNOWN, WIN};
use super::{
    CommonOptions, Evaluation, Heuristic, SolveEvent, SolverError, SolverGame, SolverKind,
};
use crate::game::{Color, Move, Outcome};
use crate::search::{Budget, Limits};

/// The proof-number bias of GPN-MCTS.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum PnBias {
    /// `1 - rank(i) / max rank` (rank 1: the smallest pn; ties share a rank).
    Rank,
    /// `1 - (pn_i - min) / (1 + max - min)` over the finite pns.
    Max,
    /// `1 - pn_i / (1 + Σ finite pn)` (the default: cheap and smooth).
    #[default]
    Sum,
}

impl PnBias {
    /// Parses `rank`, `max` or `sum`.
    pub fn from_name(s: &str) -> Option<PnBias> {
        match s.to_ascii_lowercase().as_str() {
            "rank" | "pnrank" => Some(PnBias::Rank),
            "max" | "pnmax" => Some(PnBias::Max),
            "sum" | "pnsum" => Some(PnBias::Sum),
            _ => None,
        }
    }
}

/// GPN-MCTS's own options. `Default` gives the settings of the suite-II study.
#[derive(Clone, Debug, PartialEq)]
pub struct GpnOptions {
    /// PUCT constant of the selection (the PCN reference solver's 1.5).
    pub c_puct: f32,
    /// Weight `C_pn` of the proof-number bias (0 gives plain MCTS; see
    /// docs/notebook/2026-11-22-solver-suite-ii.md for the tuning run behind the default).
    pub c_pn: f32,
    /// The bias function (PNRank, PNMax, PNSum).
    pub pn_bias: PnBias,
}

impl Default for GpnOptions {
    fn default() -> Self {
        GpnOptions {
            c_puct: 1.5,
            c_pn: 0.3,
            pn_bias: PnBias::default(),
        }
    }
}

impl GpnOptions {
    /// Checks the ranges.
    pub fn check(&self) -> Result<(), SolverError> {
        if !(self.c_pn >= 0.0 && self.c_pn <= 1000.0) {
            return Err(SolverError::BadOption(format!("c_pn {}", self.c_pn)));
        }
        Ok(())
    }
}

/// UCT exploration constant for values in [0, 1].
const C_UCT: f32 = 0.7;

#[derive(Copy, Clone, Debug)]
struct Node {
    mv: Move,
    first: u32,
    count: u16,
    status: i8,
    expanded: bool,
    need_recalc: bool,
    prior: f32,
    bias: f32,
    visits: u32,
    /// Sum of values from the view of the player who moved into this node.
    wins: f32,
    /// Proof numbers by colour index.
    pn: [f64; 2],
}

impl Node {
    fn new(mv: Move, prior: f32) -> Node {
        Node {
            mv,
            first: 0,
            count: 0,
            status: UNKNOWN,
            expanded: false,
            need_recalc: true,
            prior,
            bias: 0.0,
            visits: 0,
            wins: 0.0,
            pn: [1.0, 1.0],
        }
    }
}

/// Per-player proof numbers of a solved, unexpanded node.
fn solved_pn(status: i8, prover: Color, outcome: Option<Outcome>) -> [f64; 2] {
    let mut pn = [f64::INFINITY; 2];
    match outcome {
        Some(Outcome::Win(c)) => pn[c.index()] = 0.0,
        Some(Outcome::Draw) => {}
        None => {
            if status == WIN {
                pn[prover.index()] = 0.0;
            } else {
                // Not a prover win; whether the opponent wins is not known here.
                pn[prover.opp().index()] = 1.0;
            }
        }
    }
    pn
}

/// The GPN-MCTS solver.
pub struct Gpn<G: SolverGame> {
    c: Common<G>,
    opts: GpnOptions,
    heuristic: Box<dyn Heuristic<G>>,
    nodes: Vec<Node>,
    max_nodes: usize,
    eval: Vec<Evaluation>,
    moves: Vec<Move>,
    path: Vec<u32>,
    hists: Vec<u64>,
    scratch: Vec<f64>,
    root_key: u64,
}

impl<G: SolverGame> Gpn<G> {
    /// A solver with this heuristic (priors and values).
    pub fn new(common: CommonOptions, opts: GpnOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let half = common.tt_bytes() / 2;
        Gpn {
            max_nodes: (half / std::mem::size_of::<Node>()).max(1024),
            c: Common::new(common, half),
            opts,
            heuristic,
            nodes: Vec::new(),
            eval: vec![Evaluation::default()],
            moves: Vec::with_capacity(512),
            path: Vec::with_capacity(256),
            hists: Vec::with_capacity(256),
            scratch: Vec::new(),
            root_key: 0,
        }
    }

    fn kids(&self, idx: usize) -> std::ops::Range<usize> {
        let n = &self.nodes[idx];
        n.first as usize..n.first as usize + n.count as usize
    }

    /// Recomputes the numbers and status of expanded node `idx` (mover `mover`) from its
    /// children. Returns whether anything changed.
    fn recompute(&mut self, idx: usize, mover: Color, prover: Color) -> bool {
        let me = mover.index();
        let other = mover.opp().index();
        let (mut min, mut sum) = (f64::INFINITY, 0.0f64);
        let (mut any_good, mut all_bad) = (false, true);
        for k in self.kids(idx) {
            let ch = &self.nodes[k];
            min = min.min(ch.pn[me]);
            sum += ch.pn[other];
            if ch.status != UNKNOWN && good_for(ch.status, mover, prover) {
                any_good = true;
            }
            if ch.status == UNKNOWN || good_for(ch.status, mover, prover) {
                all_bad = false;
            }
        }
        let n = &mut self.nodes[idx];
        let mut pn = [0.0; 2];
        pn[me] = min;
        pn[other] = sum;
        let status = if n.status != UNKNOWN {
            n.status
        } else if any_good {
            if mover == prover {
                WIN
            } else {
                LOSS
            }
        } else if all_bad {
            if mover == prover {
                LOSS
            } else {
                WIN
            }
        } else {
            UNKNOWN
        };
        let changed = pn != n.pn || status != n.status;
        n.pn = pn;
        n.status = status;
        changed
    }

    /// Expands leaf `idx` (position `g`, history hash `hist`); returns the value for the side
    /// to move, or NaN when the node pool is full.
    fn expand(&mut self, idx: usize, g: &mut G, prover: Color, hist: u64) -> f32 {
        let mover = g.to_move();
        if let Some(st) = terminal_status(g, prover) {
            let n = &mut self.nodes[idx];
            n.status = st;
            n.pn = solved_pn(st, prover, g.outcome());
            return if good_for(st, mover, prover) {
                1.0
            } else {
                -1.0
            };
        }
        let key = self.c.key(g, prover, hist);
        let mut st = self.c.stored(key);
        if st == UNKNOWN && self.c.knowledge(g, prover, key).is_some() {
            st = WIN;
        }
        if st != UNKNOWN {
            let n = &mut self.nodes[idx];
            n.status = st;
            n.pn = solved_pn(st, prover, None);
            return if good_for(st, mover, prover) {
                1.0
            } else {
                -1.0
            };
        }
        g.legal_moves(&mut self.moves);
        if self.nodes.len() + self.moves.len() > self.max_nodes {
            return f32::NAN;
        }
        self.heuristic.evaluate_batch(&[&*g], &mut self.eval[..1]);
        let e = &self.eval[0];
        let mut order: Vec<(f32, Move)> = self
            .moves
            .iter()
            .map(|&m| (e.policy.get(m as usize).copied().unwrap_or(0.0).max(0.0), m))
            .collect();
        let total: f32 = order.iter().map(|x| x.0).sum();
        for x in order.iter_mut() {
            x.0 = if total > 0.0 {
                x.0 / total
            } else {
                1.0 / self.moves.len().max(1) as f32
            };
        }
        order.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        let value = e.value.clamp(-1.0, 1.0);
        let first = self.nodes.len() as u32;
        for &(p, m) in &order {
            g.play_unchecked(m);
            let mut ch = Node::new(m, p);
            if let Some(s) = terminal_status(g, prover) {
                ch.status = s;
                ch.pn = solved_pn(s, prover, g.outcome());
            } else {
                let s = self
                    .c
                    .stored(self.c.key(g, prover, self.c.child_hist(g, hist)));
                if s != UNKNOWN {
                    ch.status = s;
                    ch.pn = solved_pn(s, prover, None);
                } else {
                    // Mobility: the side to move needs one good move, the other side must
                    // refute every move.
                    let cm = g.to_move();
                    ch.pn[cm.index()] = 1.0;
                    ch.pn[cm.opp().index()] = g.mobility().max(1) as f64;
                }
            }
            g.undo();
            self.nodes.push(ch);
        }
        let n = &mut self.nodes[idx];
        n.first = first;
        n.count = order.len() as u16;
        n.expanded = true;
        n.need_recalc = true;
        self.recompute(idx, mover, prover);
        let st = self.nodes[idx].status;
        if st != UNKNOWN {
            return if good_for(st, mover, prover) {
                1.0
            } else {
                -1.0
            };
        }
        value
    }

    /// Refreshes the cached biases of `idx`'s children (mover `mover`).
    fn refresh_bias(&mut self, idx: usize, mover: Color) {
        let me = mover.index();
        let kids = self.kids(idx);
        let bias = self.opts.pn_bias;
        let finite = |n: &Node| n.status == UNKNOWN && n.pn[me].is_finite();
        let (mut min, mut max, mut sum) = (f64::INFINITY, 0.0f64, 0.0f64);
        self.scratch.clear();
        for k in kids.clone() {
            let n = &self.nodes[k];
            if finite(n) {
                min = min.min(n.pn[me]);
                max = max.max(n.pn[me]);
                sum += n.pn[me];
                self.scratch.push(n.pn[me]);
            }
        }
        if bias == PnBias::Rank {
            self.scratch
                .sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            self.scratch.dedup();
        }
        let max_rank = self.scratch.len().max(1) as f64;
        for k in kids {
            let n = self.nodes[k];
            let b = if !finite(&n) {
                0.0
            } else {
                let p = n.pn[me];
                match bias {
                    PnBias::Rank => {
                        // Ties share a rank: the position among the distinct values.
                        let rank = self.scratch.partition_point(|&x| x < p) as f64 + 1.0;
                        1.0 - rank / max_rank
                    }
                    PnBias::Max => 1.0 - (p - min) / (1.0 + max - min),
                    PnBias::Sum => 1.0 - p / (1.0 + sum),
                }
            };
            self.nodes[k].bias = b as f32;
        }
        self.nodes[idx].need_recalc = false;
    }

    /// The child of `idx` to descend into, or `None` when every child is solved.
    fn select(&mut self, idx: usize, mover: Color) -> Option<usize> {
        if self.nodes[idx].need_recalc {
            self.refresh_bias(idx, mover);
        }
        let n = self.nodes[idx];
        let kids = self.kids(idx);
        let c_pn = self.opts.c_pn;
        let (mut pmin, mut pmax) = (f32::INFINITY, 0.0f32);
        for k in kids.clone() {
            pmin = pmin.min(self.nodes[k].prior);
            pmax = pmax.max(self.nodes[k].prior);
        }
        let uniform = pmax - pmin < 1e-6;
        let ln_n = (n.visits.max(1) as f32).ln();
        let sqrt_n = (n.visits.max(1) as f32).sqrt();
        let mut best = None;
        let mut best_s = f32::NEG_INFINITY;
        for k in kids {
            let ch = &self.nodes[k];
            if ch.status != UNKNOWN {
                continue;
            }
            let s = if uniform {
                if ch.visits == 0 {
                    // Unvisited children first (UCT), the pn bias breaks the ties.
                    1e9 + ch.bias
                } else {
                    let q = (ch.wins / ch.visits as f32 + 1.0) * 0.5;
                    q + C_UCT * (ln_n / ch.visits as f32).sqrt() + c_pn * ch.bias
                }
            } else {
                let q = if ch.visits > 0 {
                    ch.wins / ch.visits as f32
                } else {
                    0.0
                };
                q + self.opts.c_puct * ch.prior * sqrt_n / (1.0 + ch.visits as f32) + c_pn * ch.bias
            };
            if s > best_s {
                best_s = s;
                best = Some(k);
            }
        }
        best
    }

    /// One simulation from the root (`g` is restored). `false` when the pool is full.
    fn simulate(&mut self, g: &mut G, prover: Color, root_hist: u64) -> bool {
        self.path.clear();
        self.hists.clear();
        self.path.push(0);
        self.hists.push(root_hist);
        let mut idx = 0usize;
        let v = loop {
            let n = self.nodes[idx];
            let mover = g.to_move();
            if n.status != UNKNOWN {
                break if good_for(n.status, mover, prover) {
                    1.0
                } else {
                    -1.0
                };
            }
            let hist = *self.hists.last().unwrap_or(&0);
            if !n.expanded {
                break self.expand(idx, g, prover, hist);
            }
            match self.select(idx, mover) {
                Some(k) => {
                    g.play_unchecked(self.nodes[k].mv);
                    let h = self.c.child_hist(g, hist);
                    self.path.push(k as u32);
                    self.hists.push(h);
                    idx = k;
                }
                None => {
                    self.recompute(idx, mover, prover);
                    let st = self.nodes[idx].status;
                    break if st == UNKNOWN {
                        0.0
                    } else if good_for(st, mover, prover) {
                        1.0
                    } else {
                        -1.0
                    };
                }
            }
        };
        let full = v.is_nan();
        let mut val = if full { 0.0 } else { -v };
        let mut child_changed = true;
        for i in (0..self.path.len()).rev() {
            let id = self.path[i] as usize;
            if !full {
                let n = &mut self.nodes[id];
                n.visits += 1;
                n.wins += val;
                val = -val;
            }
            let mover = g.to_move();
            let before = self.nodes[id].status;
            if i + 1 == self.path.len() {
                // The leaf was just expanded or found solved: its parent must look again.
                child_changed = true;
            } else if child_changed {
                self.nodes[id].need_recalc = true;
                child_changed = self.recompute(id, mover, prover);
            }
            let after = self.nodes[id].status;
            if after != UNKNOWN && (after != before || i + 1 == self.path.len()) {
                let key = self.c.key(g, prover, self.hists[i]);
                let best = self.decisive_move(id, mover, prover);
                let effort = self.nodes[id].visits as u64;
                self.c.store(key, after, best, effort);
            }
            if i > 0 {
                g.undo();
            }
        }
        !full
    }

    /// The child move that decides a solved node (a good child for the mover), or none.
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
        self.kids(0)
            .map(|k| &self.nodes[k])
            .max_by_key(|c| {
                let class = if c.status == UNKNOWN {
                    1
                } else if good_for(c.status, root_mover, prover) {
                    2
                } else {
                    0
                };
                (class, c.visits)
            })
            .map(|c| c.mv)
    }

    fn root_value(&self, prover: Color, root_mover: Color) -> Option<f32> {
        let r = self.nodes.first()?;
        if r.visits == 0 {
            return None;
        }
        let mover = -r.wins / r.visits as f32;
        Some(if root_mover == prover { mover } else { -mover })
    }

    /// The root's proof numbers as (prover, opponent), saturated for the event.
    fn root_pn(&self, prover: Color) -> Option<(u64, u64)> {
        let r = self.nodes.first()?;
        let f = |x: f64| if x.is_finite() { x as u64 } else { u64::MAX };
        Some((f(r.pn[prover.index()]), f(r.pn[prover.opp().index()])))
    }
}

tree_solver!(Gpn);

impl<G: SolverGame> TreeSearch<G> for Gpn<G> {
    const KIND: SolverKind = SolverKind::Gpn;
    // A simulation is cheap: the clock is read every 256 of them.
    const PROGRESS_MASK: Option<u64> = Some(0xff);
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
        self.nodes.push(Node::new(NO_MOVE, 1.0));
    }

    fn iterate(
        &mut self,
        g: &mut G,
        prover: Color,
        root_hist: u64,
        budget: &mut Budget,
        _on_event: &mut dyn FnMut(&SolveEvent),
    ) -> bool {
        budget.nodes += 1;
        self.simulate(g, prover, root_hist)
    }

    fn root_status(&self) -> i8 {
        self.nodes[0].status
    }

    fn root_best(&self, root_mover: Color, prover: Color) -> Option<Move> {
        self.best_root_move(root_mover, prover)
    }

    fn root_report(&self, root_mover: Color, prover: Color) -> (Option<(u64, u64)>, Option<f32>) {
        (self.root_pn(prover), self.root_value(prover, root_mover))
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
