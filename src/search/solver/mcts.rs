//! MCTS solver (Winands et al.) with PUCT selection (AlphaZero; constants of the PCN
//! reference solver, `../shared/pcn/README.md` §8.1).
//!
//! Each simulation descends by `Q + c(N) · P · sqrt(N) / (1 + n)` over the unsolved children
//! (`c(N) = c_puct + ln((N + 19653) / 19652)`; an unvisited child's Q is the mean of its
//! visited siblings' Q minus one, shared by them and the child), expands the leaf with the
//! heuristic's priors and value (one batch per leaf), and backs the value up. Proven values
//! propagate as in an AND/OR tree: a node is a prover win when the prover is to move and one
//! child is a win, or the opponent is to move and every child is a win (symmetrically for
//! losses); solved children are never selected. Solved positions are stored in a
//! transposition table keyed by [`SolverGame::solver_key`] and reused on expansion.
//! Knowledge (VCF) proves nodes where the prover is to move.
//!
//! Final move: a proven win if any, else the most visited child. The node pool gets half of
//! the memory budget and the table the other half; the search stops when the pool is full.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::dfpn::{Dfpn, DfpnOracle};
use super::proof::{self, satisfies, ProofOracle};
use super::tt::{Tt, INF, NO_MOVE};
use super::{
    Evaluation, GhiMode, Heuristic, KnowledgeState, ProofTree, SolveEvent, SolveOutcome,
    SolveResult, SolveStats, Solver, SolverGame, SolverOptions,
};
use crate::game::{Color, Move};
use crate::search::{Budget, Limits};

const WHITE_PROVER: u64 = 0x9d3f_52a1_c6e8_0b47;

/// Solved status relative to the prover.
const UNKNOWN: i8 = 0;
const WIN: i8 = 1;
const LOSS: i8 = -1;

#[derive(Copy, Clone, Debug)]
struct Node {
    mv: Move,
    count: u16,
    status: i8,
    expanded: bool,
    prior: f32,
    visits: u32,
    /// Sum of values from the view of the player who moved into this node.
    wins: f32,
    first: u32,
}

impl Node {
    fn new(mv: Move, prior: f32) -> Node {
        Node {
            mv,
            count: 0,
            status: UNKNOWN,
            expanded: false,
            prior,
            visits: 0,
            wins: 0.0,
            first: 0,
        }
    }
}

/// The MCTS solver.
pub struct Mcts<G: SolverGame> {
    opts: SolverOptions,
    heuristic: Box<dyn Heuristic<G>>,
    know: KnowledgeState,
    tt: Tt,
    nodes: Vec<Node>,
    max_nodes: usize,
    eval: Vec<Evaluation>,
    moves: Vec<Move>,
    path: Vec<u32>,
    root_mover_good: i8,
    root_key: u64,
    /// Reuse solved positions through the table (off for history-sensitive games with
    /// [`GhiMode::Exact`]: the tree itself is path-exact).
    use_tt: bool,
    last: Option<(G, Color, SolveResult)>,
}

impl<G: SolverGame> Mcts<G> {
    /// A solver with this heuristic.
    pub fn new(opts: SolverOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let know = KnowledgeState::new(opts.knowledge.clone());
        let half = opts.tt_bytes() / 2;
        let use_tt = !(G::HISTORY_SENSITIVE && opts.ghi == GhiMode::Exact);
        Mcts {
            use_tt,
            tt: Tt::new(half),
            max_nodes: (half / std::mem::size_of::<Node>()).max(1024),
            opts,
            heuristic,
            know,
            nodes: Vec::new(),
            eval: vec![Evaluation::default()],
            moves: Vec::with_capacity(512),
            path: Vec::with_capacity(256),
            root_mover_good: WIN,
            root_key: 0,
            last: None,
        }
    }

    #[inline]
    fn key(g: &G, prover: Color) -> u64 {
        let k = g.solver_key();
        if prover == Color::White {
            k ^ WHITE_PROVER
        } else {
            k
        }
    }

    /// Expands leaf `idx` at position `g`; returns the value for the side to move at `g`
    /// (the node may become solved instead).
    fn expand(&mut self, idx: usize, g: &mut G, prover: Color) -> f32 {
        let me = g.to_move();
        if let Some(o) = g.outcome() {
            let st = if satisfies(o, prover, SolveResult::Win) {
                WIN
            } else {
                LOSS
            };
            self.nodes[idx].status = st;
            return match o {
                crate::game::Outcome::Win(c) if c == me => 1.0,
                crate::game::Outcome::Win(_) => -1.0,
                crate::game::Outcome::Draw => 0.0,
            };
        }
        let key = if self.use_tt { Self::key(g, prover) } else { 0 };
        let stored = self.tt.get(key).filter(|_| self.use_tt).map(|e| {
            if e.proven() {
                WIN
            } else if e.disproven() {
                LOSS
            } else {
                UNKNOWN
            }
        });
        let mut st = stored.unwrap_or(UNKNOWN);
        if st == UNKNOWN && me == prover {
            if let Some(m) = g.knowledge_win(&mut self.know) {
                if self.use_tt || idx == 0 {
                    self.tt.put(self.root_key_or(key, idx), 0, INF, 1, m);
                }
                st = WIN;
            }
        }
        if st != UNKNOWN {
            self.nodes[idx].status = st;
            return if (st == WIN) == (me == prover) {
                1.0
            } else {
                -1.0
            };
        }
        g.legal_moves(&mut self.moves);
        if self.nodes.len() + self.moves.len() > self.max_nodes {
            return f32::NAN; // pool full
        }
        self.heuristic.evaluate_batch(&[&*g], &mut self.eval[..1]);
        let first = self.nodes.len() as u32;
        let e = &self.eval[0];
        let mut order: Vec<(f32, Move)> = self
            .moves
            .iter()
            .map(|&m| (e.policy.get(m as usize).copied().unwrap_or(0.0), m))
            .collect();
        // Prior order: ties in selection go to the higher prior.
        order.sort_unstable_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        for &(p, m) in &order {
            self.nodes.push(Node::new(m, p));
        }
        if me != prover {
            // Replies that ignore the prover's threat are proven at once (cheap knowledge).
            for (i, &(_, m)) in order.iter().enumerate() {
                g.play_unchecked(m);
                if g.outcome().is_none() {
                    if let Some(w) = g.quick_win(&mut self.know) {
                        self.nodes[first as usize + i].status = WIN;
                        if self.use_tt {
                            self.tt.put(Self::key(g, prover), 0, INF, 1, w);
                        }
                    }
                }
                g.undo();
            }
        }
        let n = &mut self.nodes[idx];
        n.first = first;
        n.count = order.len() as u16;
        n.expanded = true;
        self.eval[0].value.clamp(-1.0, 1.0)
    }

    /// The key to store a knowledge win under: the root's own key at the root (so the root
    /// move can be found), else `key`.
    fn root_key_or(&self, key: u64, idx: usize) -> u64 {
        if idx == 0 {
            self.root_key
        } else {
            key
        }
    }

    /// The child of `idx` to descend into (unsolved, best PUCT score), or `None`.
    fn select(&self, idx: usize) -> Option<usize> {
        let n = &self.nodes[idx];
        let parent_visits = n.visits as f32;
        let c = self.opts.c_puct + (((n.visits as u64 + 19653) / 19652) as f32).ln();
        let sqrt_n = parent_visits.max(1.0).sqrt();
        let kids = n.first as usize..n.first as usize + n.count as usize;
        // First-play urgency: mean Q of visited siblings, minus one, over (visited + 1).
        let (mut qsum, mut qn) = (0.0f32, 0.0f32);
        for k in kids.clone() {
            let ch = &self.nodes[k];
            if ch.visits > 0 {
                qsum += ch.wins / ch.visits as f32;
                qn += 1.0;
            }
        }
        let fpu = (qsum - 1.0) / (qn + 1.0);
        let mut best = None;
        let mut best_s = f32::NEG_INFINITY;
        for k in kids {
            let ch = &self.nodes[k];
            if ch.status != UNKNOWN {
                continue;
            }
            let q = if ch.visits > 0 {
                ch.wins / ch.visits as f32
            } else {
                fpu
            };
            let s = q + c * ch.prior * sqrt_n / (1.0 + ch.visits as f32);
            if s > best_s {
                best_s = s;
                best = Some(k);
            }
        }
        best
    }

    /// Recomputes the status of `idx` (to move: `to_move`) from its children.
    fn update_status(&mut self, idx: usize, to_move: Color, prover: Color) -> i8 {
        let n = self.nodes[idx];
        if !n.expanded || n.status != UNKNOWN {
            return n.status;
        }
        let (good, bad) = if to_move == prover {
            (WIN, LOSS)
        } else {
            (LOSS, WIN)
        };
        let kids = &self.nodes[n.first as usize..n.first as usize + n.count as usize];
        let st = if kids.iter().any(|c| c.status == good) {
            good
        } else if kids.iter().all(|c| c.status == bad) {
            bad
        } else {
            UNKNOWN
        };
        self.nodes[idx].status = st;
        st
    }

    fn root_best(&self) -> Option<Move> {
        let root = self.nodes.first()?;
        if !root.expanded || root.count == 0 {
            // Solved on expansion (knowledge): the table holds the move.
            return self
                .tt
                .get(self.root_key)
                .and_then(|e| (e.best != NO_MOVE).then_some(e.best));
        }
        let kids = &self.nodes[root.first as usize..root.first as usize + root.count as usize];
        // The root's side to move wants children whose status is good for it: the status
        // of the root tells which colour that is only when solved, so rank by the value the
        // mover sees: proven good first, then visits.
        let mover_good = self.root_mover_good;
        kids.iter()
            .max_by_key(|c| {
                let class = if c.status == mover_good {
                    2
                } else if c.status == UNKNOWN {
                    1
                } else {
                    0
                };
                (class, c.visits)
            })
            .map(|c| c.mv)
    }
}

impl<G: SolverGame> Mcts<G> {
    /// One simulation from the root (`g` is the root position and is restored). `false` when
    /// the node pool is full.
    fn simulate(&mut self, g: &mut G, prover: Color) -> bool {
        self.path.clear();
        self.path.push(0);
        let mut idx = 0usize;
        let v = loop {
            let n = self.nodes[idx];
            if n.status != UNKNOWN {
                break if (n.status == WIN) == (g.to_move() == prover) {
                    1.0
                } else {
                    -1.0
                };
            }
            if !n.expanded {
                break self.expand(idx, g, prover);
            }
            match self.select(idx) {
                Some(k) => {
                    g.play_unchecked(self.nodes[k].mv);
                    self.path.push(k as u32);
                    idx = k;
                }
                None => {
                    // Every child solved: the status follows from them.
                    let st = self.update_status(idx, g.to_move(), prover);
                    break if st == UNKNOWN {
                        0.0
                    } else if (st == WIN) == (g.to_move() == prover) {
                        1.0
                    } else {
                        -1.0
                    };
                }
            }
        };
        let full = v.is_nan();
        // Back up: values alternate in sign; statuses are recomputed bottom-up.
        let mut val = if full { 0.0 } else { -v };
        let mut changed = true;
        for i in (0..self.path.len()).rev() {
            let id = self.path[i] as usize;
            if !full {
                let n = &mut self.nodes[id];
                n.visits += 1;
                n.wins += val;
                val = -val;
            }
            if changed {
                let before = self.nodes[id].status;
                let after = if i + 1 == self.path.len() {
                    before
                } else {
                    self.update_status(id, g.to_move(), prover)
                };
                if after != UNKNOWN && (after != before || i + 1 == self.path.len()) {
                    if self.use_tt && g.outcome().is_none() {
                        let key = Self::key(g, prover);
                        // Keep an entry that is already solved (it may carry the move).
                        if !self
                            .tt
                            .get(key)
                            .is_some_and(|e| e.proven() || e.disproven())
                        {
                            let (pn, dn) = if after == WIN { (0, INF) } else { (INF, 0) };
                            let effort = self.nodes[id].visits as u64;
                            self.tt.put(key, pn, dn, effort, NO_MOVE);
                        }
                    }
                } else if i + 1 != self.path.len() {
                    changed = false;
                }
            }
            if i > 0 {
                g.undo();
            }
        }
        !full
    }

    fn root_value(&self, prover: Color, root_mover: Color) -> Option<f32> {
        let r = self.nodes.first()?;
        if r.visits == 0 {
            return None;
        }
        // `wins` is from the view of the player who moved into the root (the opponent).
        let mover = -r.wins / r.visits as f32;
        Some(if root_mover == prover { mover } else { -mover })
    }
}

impl<G: SolverGame> Solver<G> for Mcts<G> {
    fn name(&self) -> &'static str {
        "mcts"
    }

    fn solve(
        &mut self,
        game: &G,
        prover: Color,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        let know_before = self.know.nodes;
        let mut g = game.clone();
        let root_mover = g.to_move();
        self.root_mover_good = if root_mover == prover { WIN } else { LOSS };
        self.root_key = Self::key(&g, prover);
        self.nodes.clear();
        self.nodes.push(Node::new(NO_MOVE, 1.0));
        let mut budget = Budget::new(limits, stop);
        let mut last_report = Instant::now();
        while self.nodes[0].status == UNKNOWN && !budget.exhausted() {
            budget.nodes += 1;
            if !self.simulate(&mut g, prover) {
                break;
            }
            if budget.nodes & 0xff == 0 && last_report.elapsed().as_millis() >= 500 {
                last_report = Instant::now();
                on_event(&SolveEvent::Progress {
                    nodes: budget.nodes,
                    elapsed: budget.elapsed(),
                    best: self.root_best(),
                    pn_dn: None,
                    value: self.root_value(prover, root_mover),
                    tt_used: self.tt.used(),
                });
            }
        }
        let result = match self.nodes[0].status {
            WIN => SolveResult::Win,
            LOSS => SolveResult::Loss,
            _ => SolveResult::Unknown,
        };
        let best = self.root_best();
        let seconds = budget.elapsed().as_secs_f64();
        let stats = SolveStats {
            nodes: budget.nodes,
            seconds,
            nodes_per_second: budget.nodes as f64 / seconds.max(1e-9),
            tt_used: self.tt.used(),
            tt_capacity: self.tt.capacity(),
            tt_bytes: self.tt.bytes() + self.max_nodes * std::mem::size_of::<Node>(),
            knowledge_nodes: self.know.nodes - know_before,
        };
        on_event(&SolveEvent::Progress {
            nodes: budget.nodes,
            elapsed: budget.elapsed(),
            best,
            pn_dn: None,
            value: self.root_value(prover, root_mover),
            tt_used: stats.tt_used,
        });
        if result != SolveResult::Unknown {
            on_event(&SolveEvent::Solved { result, best });
        }
        self.last = Some((game.clone(), prover, result));
        SolveOutcome {
            result,
            prover,
            best,
            stats,
        }
    }

    fn proof_tree(&mut self) -> Option<ProofTree> {
        let (root, prover, result) = self.last.clone()?;
        // The search's own knowledge state: its threat-win table already holds most of the
        // proof's threat sequences.
        let know = &mut self.know;
        let stop = AtomicBool::new(false);
        let limits = Limits::nodes(self.opts.proof_search_nodes);
        let mut dopts = self.opts.clone();
        dopts.memory_bytes = (self.opts.tt_bytes() / 4).max(1 << 20);
        let mut dfpn = Dfpn::new(dopts, None);
        let mut oracle = MctsOracle {
            tt: self.use_tt.then_some(&self.tt),
            fallback: DfpnOracle::new(&mut dfpn, Budget::new(&limits, &stop)),
        };
        proof::build(
            &root,
            prover,
            result,
            &mut oracle,
            know,
            self.opts.proof_max_nodes,
            self.opts.proof_search_nodes,
        )
    }

    fn clear(&mut self) {
        self.tt.clear();
        self.know.clear();
        self.nodes = Vec::new();
        self.last = None;
    }

    fn set_memory(&mut self, bytes: usize) {
        self.opts.memory_bytes = bytes;
        let half = self.opts.tt_bytes() / 2;
        self.tt = Tt::new(half);
        self.max_nodes = (half / std::mem::size_of::<Node>()).max(1024);
        self.nodes = Vec::new();
        self.last = None;
    }
}

/// The MCTS side of a proof build: solved children from the table, else a DFPN re-search.
struct MctsOracle<'a, 'b, 'c, G: SolverGame> {
    tt: Option<&'a Tt>,
    fallback: DfpnOracle<'b, 'c, G>,
}

impl<G: SolverGame> ProofOracle<G> for MctsOracle<'_, '_, '_, G> {
    fn choose(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        if let Some(m) = self.lookup(g, prover, result) {
            return Some(m);
        }
        self.fallback.choose(g, prover, result)
    }

    fn lookup(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        let tt = self.tt?;
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        // The node's own entry may carry the move (knowledge wins).
        if let Some(e) = tt.get(Mcts::<G>::key(g, prover)) {
            if result == SolveResult::Win && e.proven() && moves.contains(&e.best) {
                return Some(e.best);
            }
        }
        for &m in &moves {
            g.play_unchecked(m);
            let ok = match g.outcome() {
                Some(o) => satisfies(o, prover, result),
                None => tt.get(Mcts::<G>::key(g, prover)).is_some_and(|e| {
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
