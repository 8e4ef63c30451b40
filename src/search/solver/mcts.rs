//! MCTS solver (Winands et al.) with PUCT selection (AlphaZero; constants of the PCN
//! reference solver, `../shared/pcn/README.md` §8.1), multi-threaded with virtual loss.
//!
//! Each simulation descends by `Q + c(N) · P · sqrt(N) / (1 + n)` over the unsolved children
//! (`c(N) = c_puct + ln((N + 19653) / 19652)`; an unvisited child's Q is the mean of its
//! visited siblings' Q minus one, shared by them and the child), expands the leaf with the
//! heuristic's priors and value, and backs the value up. Values:
//! - plain/α0 heuristics: the value for the side to move at the leaf, backed up with
//!   alternating signs (terminal: ±1);
//! - in games whose knowledge proves replies (Gomoku with VCF/VCT), static and α0
//!   heuristics alike: at a node where the prover's opponent is to move, a value from the
//!   share of replies the knowledge left unproven ([`reply_value`]) instead of the
//!   heuristic's;
//! - PCN heuristics ([`super::heuristic::CostModel`]): the prover's expected log10 proof cost
//!   at the leaf (terminal: 0 if the prover won, else `bins`) plus `log10(b)` for every edge
//!   on the path played by the disprover, clamped to `[0, bins - 1]`, added unsigned to every
//!   node on the path; Q is the node mean normalised by the min and max of all node means,
//!   negated at the prover's choices (the prover seeks cheap proofs).
//!
//! Proven values propagate as in an AND/OR tree: a node is a prover win when the prover is
//! to move and one child is a win, or the opponent is to move and every child is a win
//! (symmetrically for losses); solved children are never selected. Solved positions are
//! stored in a transposition table keyed by [`SolverGame::solver_key`] and reused on
//! expansion. Knowledge (VCF) proves nodes where the prover is to move.
//!
//! Threads ([`SolverOptions::threads`]) share one tree behind a mutex: a thread descends
//! under the lock adding a virtual loss to the path, marks the leaf as pending, evaluates it
//! (heuristic, knowledge) without the lock — so a batching network evaluator sees several
//! requests at once — and expands and backs up under the lock. Statuses are only ever
//! recomputed under the lock from the children, so concurrency cannot produce a wrong proof.
//! With one thread the search runs on the calling thread and is deterministic. Of the two
//! phases of a Gomoku solve without a network (see `narrowing_phase`), the first runs on one
//! thread.
//!
//! Final move: a proven win if any, else the most visited child. The node pool gets half of
//! the memory budget and the table the other half; the search stops when the pool is full.

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Instant;

use super::dfpn::{Dfpn, DfpnOracle};
use super::heuristic::CostModel;
use super::proof::{self, satisfies, ProofOracle};
use super::tt::{self, Tt, INF, LOSS, NO_MOVE, UNKNOWN, WIN};
use super::{
    Evaluation, GhiMode, Heuristic, Knowledge, KnowledgeState, ProofTree, SolveEvent, SolveOutcome,
    SolveResult, SolveStats, Solver, SolverGame, SolverOptions,
};
use crate::game::{Color, Move, Outcome};
use crate::search::{Budget, Limits};

#[derive(Copy, Clone, Debug)]
struct Node {
    mv: Move,
    count: u16,
    status: i8,
    expanded: bool,
    /// A thread is evaluating this leaf (others must not expand it too).
    pending: bool,
    /// [`DEFERRED`], [`NARROW`], [`WIDE`]: one byte, so that the node stays 28 bytes (a
    /// larger node is a smaller pool for the same memory).
    flags: u8,
    prior: f32,
    visits: u32,
    /// Virtual losses of simulations in flight through this node.
    vloss: u16,
    /// Narrowed phase: the prover's proof number (saturating; [`PN_INF`] when lost), for
    /// the root's proof-number bias ([`Knowledge::root_pn`]).
    pn: u16,
    /// α0: sum of values from the view of the player who moved into this node.
    /// PCN: sum of path costs (unsigned).
    wins: f32,
    first: u32,
}

/// [`Node::flags`]: the second stage of knowledge ([`SolverGame::knowledge_win_second`]) is
/// still to run at the next visit.
const DEFERRED: u8 = 1;
/// [`Node::flags`]: a prover's node whose children are the moves kept by
/// [`SolverGame::narrow_prover_moves`]; all of them lost does not lose the node.
const NARROW: u8 = 2;
/// [`Node::flags`]: re-expanded with every legal move after its narrowed children all lost.
const WIDE: u8 = 4;

/// [`Node::pn`] of a lost node.
const PN_INF: u16 = u16::MAX;

/// [`Node::pn`] of a new node where the prover's opponent is to move: its replies are not
/// known before its expansion, and a reply left open usually takes more than one node to
/// prove.
const PN_OPPONENT_NEW: u16 = 20;

/// A root move that leaves one open reply counts this many times its proof number in the
/// root's bias. Mostly these are fours: the position after the forced reply is the problem
/// again with one exchange more, so its proof number is as small as the root's best and the
/// bias would always favour it. (In the narrowed tree `count` is the replies the pass-threat
/// zone left open, so a threat leaving a single defence counts here too.)
const PN_FOUR_FACTOR: f32 = 2.0;

/// A child's proof number as the root's bias weighs it ([`PN_FOUR_FACTOR`]).
fn bias_pn(ch: &Node) -> f32 {
    if ch.expanded && ch.count == 1 {
        ch.pn as f32 * PN_FOUR_FACTOR
    } else {
        ch.pn as f32
    }
}

impl Node {
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    fn set(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }

    /// Indices of the children in the pool (empty before expansion).
    fn kids(&self) -> std::ops::Range<usize> {
        self.first as usize..self.first as usize + self.count as usize
    }

    fn new(mv: Move, prior: f32) -> Node {
        Node {
            mv,
            count: 0,
            status: UNKNOWN,
            expanded: false,
            pending: false,
            flags: 0,
            prior,
            visits: 0,
            vloss: 0,
            pn: 1,
            wins: 0.0,
            first: 0,
        }
    }
}

/// The MCTS solver's phases beyond its first search: the narrowed second phase of Gomoku
/// without a network (run when [`super::Knowledge::lambda_nodes`] is set and the first
/// search filled its node pool without a result).
#[derive(Clone, Debug, PartialEq)]
pub struct MctsPhases {
    /// MCTS: run only the narrowed search (from the start, with the whole budget), for
    /// ablations and tests of that phase.
    pub narrow_only: bool,
    /// Gomoku, MCTS without a network: the share (0..=1) of the learned pattern policy
    /// ([`crate::search::gomoku::patpolicy`]) in the static priors of the narrowed phase only (the
    /// first phase keeps [`super::Knowledge::patterns`]). The threat scores rank the kept moves
    /// poorly where the proof needs a quiet one, which the policy ranks better (docs/notebook/
    /// 2026-11-25-fourteenth-session-pattern-policy-in-narrowed-phase.md).
    pub narrow_patterns: f32,
    /// Gomoku, MCTS without a network: weight of a proof-number bias at the root of the
    /// narrowed phase (PNMax of GPN-MCTS: `w · (1 − (pn − min) / (1 + max − min))` over the
    /// unsolved root moves, the prover's proof numbers of the narrowed tree, doubled for a
    /// move leaving one open reply, mostly a four). The reply value rates every forcing line
    /// alike, so without it the root's visits can stay on one unproven move (docs/notebook/
    /// 2026-11-26-seventeenth-session-root-pn-bias.md). 0: off.
    pub root_pn: f32,
}

impl Default for MctsPhases {
    fn default() -> Self {
        MctsPhases {
            narrow_only: false,
            narrow_patterns: 0.5,
            root_pn: 2.0,
        }
    }
}

/// Everything the threads share, behind one mutex.
struct Tree {
    nodes: Vec<Node>,
    tt: Tt,
    max_nodes: usize,
    /// PCN: smallest and largest node mean seen (normalisation of Q).
    cmin: f32,
    cmax: f32,
    /// The node pool is full: stop.
    full: bool,
    /// Simulations started (the node budget counts these).
    sims: u64,
}

/// Read-only settings of one solve.
#[derive(Copy, Clone)]
struct Setup {
    prover: Color,
    root_mover: Color,
    use_tt: bool,
    root_key: u64,
    c_puct: f32,
    cost: Option<CostModel>,
    /// Values at the opponent's nodes from the replies left unproven ([`reply_value`]):
    /// value heuristics (static or α0) in games with quick wins (Gomoku).
    reply_value: bool,
    /// Narrow the prover's moves ([`SolverGame::narrow_prover_moves`]): the second phase of
    /// a solve ([`narrowing_phase`]).
    narrow: bool,
    /// Weight of the proof-number bias at the root of the narrowed phase
    /// ([`Knowledge::root_pn`]).
    root_pn: f32,
}

impl Setup {
    /// Whether the nodes' proof numbers are kept: only the narrowed phase's root bias reads
    /// them.
    fn tracks_pn(&self) -> bool {
        self.narrow && self.root_pn > 0.0
    }

    /// Whether a node with `to_move` to play and `replies` children takes the reply value:
    /// the opponent's nodes with a choice, when [`Setup::reply_value`] is on.
    fn reply_value_at(&self, to_move: Color, replies: usize) -> bool {
        self.reply_value && to_move != self.prover && replies > 1
    }
}

/// What a descent found.
enum Leaf {
    /// A value to back up now (solved node, terminal, table hit).
    Now(Backup),
    /// An unexpanded leaf, marked pending, to evaluate outside the lock.
    Expand,
    /// An expanded node revisited whose deferred knowledge must run (marked pending, path
    /// with virtual losses), outside the lock.
    Deferred,
    /// Another thread is expanding this leaf.
    Collision,
    /// The pool is full.
    Full,
}

/// A value to back up: α0 value for the side to move at the leaf, or a status-derived /
/// heuristic PCN cost.
#[derive(Copy, Clone, Debug)]
enum Backup {
    /// Value for the side to move at the leaf (α0 mode).
    Value(f32),
    /// A solved status (the mode decides the number).
    Status(i8),
    /// The prover's estimated cost at the leaf (PCN mode).
    Cost(f32),
}

/// Per-thread scratch.
struct Worker<'h, G: SolverGame> {
    heuristic: &'h mut dyn Heuristic<G>,
    know: KnowledgeState,
    g: G,
    eval: Vec<Evaluation>,
    moves: Vec<Move>,
    order: Vec<(f32, Move)>,
    /// The pending leaf's deferred knowledge is still to run.
    defer: bool,
    /// At a revisited opponent's node: its unsolved children (node index, move).
    dmoves: Vec<(u32, Move)>,
    /// Their wins from [`SolverGame::quick_wins_second`]: (node index, table key, move).
    dwins: Vec<(u32, u64, Move)>,
    /// The pending leaf is a node widened again (no narrowing of its moves).
    wide: bool,
    /// [`Worker::evaluate`] narrowed the pending leaf's moves.
    narrowed: bool,
    /// Children of the pending leaf proven by [`SolverGame::quick_win`]: (index in
    /// `order`, table key, the prover's winning move).
    quick: Vec<(u32, u64, Move)>,
    path: Vec<u32>,
}

/// A proven decision of the prover in the search tree ([`Mcts::proven_choices`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ProvenChoice {
    /// Moves from the solve's root to the node.
    pub path: Vec<Move>,
    /// The node's children (all legal moves, or the kept ones of a narrowed node).
    pub moves: Vec<Move>,
    /// The proven winning child (the most visited one when several are).
    pub win: Move,
    /// The node's moves were narrowed ([`SolverGame::narrow_prover_moves`]).
    pub narrowed: bool,
}

/// The MCTS solver.
pub struct Mcts<G: SolverGame> {
    opts: SolverOptions,
    heuristic: Box<dyn Heuristic<G>>,
    know: KnowledgeState,
    tree: Mutex<Tree>,
    root_mover_good: i8,
    root_key: u64,
    /// Reuse solved positions through the table (off for history-sensitive games with
    /// [`GhiMode::Exact`]: the tree itself is path-exact).
    use_tt: bool,
    last: Option<(G, Color, SolveResult)>,
    /// Threads used by the last solve.
    last_threads: usize,
    /// Search phases the last solve ran (2: it went on with narrowed prover moves).
    last_phases: usize,
    /// The heuristic of the narrowed phase when it differs from `heuristic` (the game's own
    /// with [`Knowledge::narrow_patterns`]); made at the first solve that needs it.
    narrow_heuristic: Option<Box<dyn Heuristic<G>>>,
}

// The pool's size per node (28 bytes): checked so that a new field does not shrink it.
const _: () = assert!(std::mem::size_of::<Node>() == 28);

impl Tree {
    fn new(bytes: usize) -> Tree {
        let half = bytes / 2;
        Tree {
            tt: Tt::new(half),
            max_nodes: (half / std::mem::size_of::<Node>()).max(1024),
            nodes: Vec::new(),
            cmin: f32::INFINITY,
            cmax: f32::NEG_INFINITY,
            full: false,
            sims: 0,
        }
    }

    /// The child of `idx` to descend into (unsolved, best PUCT score with virtual losses),
    /// or `None`. `chooser_is_prover`: the prover is to move at `idx`.
    fn select(&self, idx: usize, su: &Setup, chooser_is_prover: bool) -> Option<usize> {
        let n = &self.nodes[idx];
        let nv = n.visits + n.vloss as u32;
        let c = su.c_puct + (((nv as u64 + 19653) / 19652) as f32).ln();
        let sqrt_n = (nv as f32).max(1.0).sqrt();
        let kids = n.kids();
        let q_of = |ch: &Node| -> f32 {
            let mean = ch.wins / ch.visits as f32;
            match su.cost {
                None => mean,
                Some(_) => {
                    let q = if self.cmax > self.cmin {
                        (2.0 * (mean - self.cmin) / (self.cmax - self.cmin) - 1.0).clamp(-1.0, 1.0)
                    } else {
                        0.0
                    };
                    if chooser_is_prover {
                        -q
                    } else {
                        q
                    }
                }
            }
        };
        // First-play urgency: mean Q of visited siblings, minus one, over (visited + 1).
        let (mut qsum, mut qn) = (0.0f32, 0.0f32);
        for k in kids.clone() {
            let ch = &self.nodes[k];
            if ch.visits > 0 {
                qsum += q_of(ch);
                qn += 1.0;
            }
        }
        let fpu = (qsum - 1.0) / (qn + 1.0);
        // The root's proof-number bias (PNMax of GPN-MCTS) over the unsolved moves.
        let pn_range = if idx == 0 && su.tracks_pn() && chooser_is_prover {
            let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
            for k in n.kids() {
                let ch = &self.nodes[k];
                if ch.status == UNKNOWN {
                    lo = lo.min(bias_pn(ch));
                    hi = hi.max(bias_pn(ch));
                }
            }
            (lo <= hi).then_some((lo, hi))
        } else {
            None
        };
        let mut best = None;
        let mut best_s = f32::NEG_INFINITY;
        for k in kids {
            let ch = &self.nodes[k];
            if ch.status != UNKNOWN {
                continue;
            }
            let q = if ch.visits > 0 { q_of(ch) } else { fpu };
            // Virtual loss: each simulation in flight counts as a loss (-1) for the chooser.
            let cv = ch.visits.max(1) as f32;
            let q = if ch.vloss > 0 {
                (q * cv - ch.vloss as f32) / (cv + ch.vloss as f32)
            } else {
                q
            };
            let mut s = q + c * ch.prior * sqrt_n / (1.0 + (ch.visits + ch.vloss as u32) as f32);
            if let Some((lo, hi)) = pn_range {
                s += su.root_pn * (1.0 - (bias_pn(ch) - lo) / (1.0 + hi - lo));
            }
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
        let kids = &self.nodes[n.kids()];
        let st = if kids.iter().any(|c| c.status == good) {
            good
        } else if kids.iter().all(|c| c.status == bad) {
            if n.has(NARROW) {
                // Only the kept moves lost: expand the node again with every move (its old
                // children stay in the pool unused; this is rare).
                let m = &mut self.nodes[idx];
                m.set(NARROW, false);
                m.set(WIDE, true);
                m.expanded = false;
                m.count = 0;
                return UNKNOWN;
            }
            bad
        } else {
            UNKNOWN
        };
        self.nodes[idx].status = st;
        st
    }

    /// Recomputes the prover's proof number of `idx` from its status or children: 0 when
    /// won, [`PN_INF`] when lost, the minimum over the unsolved children where the prover is
    /// to move and their sum where the opponent is; unchanged before expansion. Returns
    /// whether it changed.
    fn update_pn(&mut self, idx: usize, prover_to_move: bool) -> bool {
        let n = self.nodes[idx];
        let pn = match n.status {
            WIN => 0,
            LOSS => PN_INF,
            _ if !n.expanded => n.pn,
            _ => {
                let open = self.nodes[n.kids()].iter().filter(|c| c.status == UNKNOWN);
                if prover_to_move {
                    open.map(|c| c.pn).min().unwrap_or(1)
                } else {
                    let s: u32 = open.map(|c| c.pn as u32).sum();
                    s.clamp(1, PN_INF as u32 - 1) as u16
                }
            }
        };
        self.nodes[idx].pn = pn;
        pn != n.pn
    }

    /// Backs `b` up along `path` (`g` is at the leaf and is rewound to the root), removing
    /// one virtual loss per node when `vl`.
    fn backup<G: SolverGame>(&mut self, path: &[u32], g: &mut G, b: Backup, su: &Setup, vl: bool) {
        let prover = su.prover;
        let leaf_mover = g.to_move();
        // The number added at every node (PCN) or the leaf node's value (α0).
        let (mut val, cost) = match (su.cost, b) {
            (None, Backup::Value(v)) => (-v, false),
            (None, Backup::Cost(_)) => (0.0, false),
            (None, Backup::Status(st)) => {
                let v = if (st == WIN) == (leaf_mover == prover) {
                    1.0
                } else {
                    -1.0
                };
                (-v, false)
            }
            (Some(cm), b) => {
                let top = cm.bins.max(1) as f32;
                let mut c = match b {
                    Backup::Status(WIN) => 0.0,
                    Backup::Status(_) => top,
                    Backup::Cost(c) => c,
                    Backup::Value(_) => top / 2.0,
                };
                // Per-edge additions at the disprover's moves (root mover at even depth).
                for i in 1..path.len() {
                    let mover = if (i - 1) % 2 == 0 {
                        su.root_mover
                    } else {
                        su.root_mover.opp()
                    };
                    if mover != prover {
                        let b = match cm.branching {
                            Some(b) => b,
                            None => self.nodes[path[i - 1] as usize].count as usize,
                        };
                        c += (b.max(1) as f32).log10();
                    }
                }
                (c.clamp(0.0, (cm.bins.max(1) - 1) as f32), true)
            }
        };
        let mut changed = true;
        // Proof numbers: recomputed upwards from the leaf while they (or a status) change.
        let mut pn_dirty = su.tracks_pn();
        for i in (0..path.len()).rev() {
            let id = path[i] as usize;
            {
                let n = &mut self.nodes[id];
                if vl {
                    n.vloss = n.vloss.saturating_sub(1);
                }
                n.visits += 1;
                n.wins += val;
                if cost {
                    let m = n.wins / n.visits as f32;
                    self.cmin = self.cmin.min(m);
                    self.cmax = self.cmax.max(m);
                } else {
                    val = -val;
                }
            }
            if changed {
                let before = self.nodes[id].status;
                let after = if i + 1 == path.len() {
                    before
                } else {
                    self.update_status(id, g.to_move(), prover)
                };
                if after != UNKNOWN && (after != before || i + 1 == path.len()) {
                    if su.use_tt && g.outcome().is_none() {
                        let key = tt::key(g, prover);
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
                } else if i + 1 != path.len() {
                    changed = false;
                }
                if after != before {
                    pn_dirty = su.tracks_pn();
                }
            }
            if pn_dirty {
                pn_dirty = self.update_pn(id, g.to_move() == prover);
            }
            if i > 0 {
                g.undo();
            }
        }
    }

    /// Removes the virtual losses of an abandoned descent and rewinds `g`.
    fn abandon<G: SolverGame>(&mut self, path: &[u32], g: &mut G, vl: bool) {
        for i in (0..path.len()).rev() {
            if vl {
                let n = &mut self.nodes[path[i] as usize];
                n.vloss = n.vloss.saturating_sub(1);
            }
            if i > 0 {
                g.undo();
            }
        }
    }

    fn root_best(&self, root_mover_good: i8, root_key: u64) -> Option<Move> {
        let root = self.nodes.first()?;
        if !root.expanded || root.count == 0 {
            // Solved on expansion (knowledge): the table holds the move.
            return self
                .tt
                .get(root_key)
                .and_then(|e| (e.best != NO_MOVE).then_some(e.best));
        }
        let kids = &self.nodes[root.kids()];
        // Rank by the value the root's mover sees: proven good first, then visits.
        kids.iter()
            .max_by_key(|c| {
                let class = if c.status == root_mover_good {
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

    fn root_value(&self, su: &Setup) -> Option<f32> {
        let r = self.nodes.first()?;
        if r.visits == 0 || su.cost.is_some() {
            return None;
        }
        // `wins` is from the view of the player who moved into the root (the opponent).
        let mover = -r.wins / r.visits as f32;
        Some(if su.root_mover == su.prover {
            mover
        } else {
            -mover
        })
    }
}

impl<G: SolverGame> Worker<'_, G> {
    /// Descends from the root under the lock. On `Leaf::Expand` the path carries virtual
    /// losses and the leaf is pending; `self.g` is at the leaf.
    fn descend(&mut self, t: &mut Tree, su: &Setup, vl: bool) -> Leaf {
        self.path.clear();
        self.path.push(0);
        let mut idx = 0usize;
        loop {
            let n = t.nodes[idx];
            if n.status != UNKNOWN {
                return Leaf::Now(Backup::Status(n.status));
            }
            if n.pending {
                return Leaf::Collision;
            }
            if !n.expanded {
                break;
            }
            let prover_node = self.g.to_move() == su.prover;
            let due = if prover_node {
                1
            } else {
                G::defence_deferred(&self.know).unwrap_or(u32::MAX)
            };
            if n.has(DEFERRED) && n.visits >= due {
                // The node is visited again: its costlier knowledge runs now.
                t.nodes[idx].set(DEFERRED, false);
                self.dmoves.clear();
                if !prover_node {
                    let kids = n.kids();
                    for k in kids {
                        if t.nodes[k].status == UNKNOWN {
                            self.dmoves.push((k as u32, t.nodes[k].mv));
                        }
                    }
                }
                t.nodes[idx].pending = true;
                if vl {
                    for &p in &self.path {
                        t.nodes[p as usize].vloss += 1;
                    }
                }
                return Leaf::Deferred;
            }
            let to_move = self.g.to_move();
            match t.select(idx, su, to_move == su.prover) {
                Some(k) => {
                    self.g.play_unchecked(t.nodes[k].mv);
                    self.path.push(k as u32);
                    idx = k;
                }
                None => {
                    // Every child solved: the status follows from them.
                    let st = t.update_status(idx, to_move, su.prover);
                    return Leaf::Now(if st == UNKNOWN {
                        Backup::Value(0.0)
                    } else {
                        Backup::Status(st)
                    });
                }
            }
        }
        // An unexpanded leaf: terminal positions and table hits are settled at once.
        if let Some(o) = self.g.outcome() {
            let st = if satisfies(o, su.prover, SolveResult::Win) {
                WIN
            } else {
                LOSS
            };
            t.nodes[idx].status = st;
            let me = self.g.to_move();
            return Leaf::Now(match (su.cost, o) {
                (Some(_), _) => Backup::Status(st),
                (None, Outcome::Win(c)) if c == me => Backup::Value(1.0),
                (None, Outcome::Win(_)) => Backup::Value(-1.0),
                (None, Outcome::Draw) => Backup::Value(0.0),
            });
        }
        if su.use_tt {
            let key = tt::key(&self.g, su.prover);
            if let Some(e) = t.tt.get(key) {
                let st = if e.proven() {
                    WIN
                } else if e.disproven() {
                    LOSS
                } else {
                    UNKNOWN
                };
                if st != UNKNOWN {
                    t.nodes[idx].status = st;
                    return Leaf::Now(Backup::Status(st));
                }
            }
        }
        if t.full {
            return Leaf::Full;
        }
        self.wide = t.nodes[idx].has(WIDE);
        t.nodes[idx].pending = true;
        if vl {
            for &p in &self.path {
                t.nodes[p as usize].vloss += 1;
            }
        }
        Leaf::Expand
    }

    /// Evaluates the pending leaf at `self.g` (no lock held): knowledge, legal moves,
    /// heuristic. Returns the knowledge win's move, if any.
    fn evaluate(&mut self, su: &Setup) -> Option<Move> {
        self.defer = false;
        self.narrowed = false;
        let prover_node = self.g.to_move() == su.prover;
        if prover_node {
            if let Some(m) = self.g.knowledge_win_first(&mut self.know) {
                return Some(m);
            }
            self.defer = G::knowledge_deferred(&self.know);
        } else {
            self.defer = G::defence_deferred(&self.know).is_some();
        }
        self.g.legal_moves(&mut self.moves);
        if su.narrow && prover_node && !self.wide {
            self.narrowed = self.g.narrow_prover_moves(&mut self.know, &mut self.moves);
        }
        self.heuristic
            .evaluate_batch(&[&self.g], &mut self.eval[..1]);
        let e = &self.eval[0];
        self.order.clear();
        self.order.extend(
            self.moves
                .iter()
                .map(|&m| (e.policy.get(m as usize).copied().unwrap_or(0.0), m)),
        );
        if self.narrowed {
            // The kept moves share the whole prior: with the static priors' small values
            // unscaled, the narrowed search behaves like the plain one (measured), and
            // exploring among the threats is what it is for.
            let total: f32 = self.order.iter().map(|x| x.0).sum();
            if total > 0.0 {
                for x in self.order.iter_mut() {
                    x.0 /= total;
                }
            }
        }
        // Prior order: ties in selection go to the higher prior.
        self.order
            .sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
        self.quick.clear();
        if G::QUICK_WINS && self.g.to_move() != su.prover {
            // Replies that ignore the prover's threat are proven at once (cheap knowledge).
            self.moves.clear();
            self.moves.extend(self.order.iter().map(|&(_, m)| m));
            let mut wins = Vec::new();
            if su.narrow && su.use_tt {
                // The prover's move here was a threat (of a threat): the pass-threat zone
                // runs at once, and finish() keeps only the replies it left open.
                self.g
                    .quick_wins_second(&mut self.know, &self.moves, &mut wins);
                self.defer = false;
            } else {
                self.g.quick_wins(&mut self.know, &self.moves, &mut wins);
            }
            for (i, w) in wins {
                let Some(&m) = self.moves.get(i) else {
                    continue;
                };
                self.g.play_unchecked(m);
                self.quick.push((i as u32, tt::key(&self.g, su.prover), w));
                self.g.undo();
            }
        }
        None
    }

    /// Runs the deferred knowledge of the pending revisited node (no lock held): at the
    /// prover's node its win, if any; at the opponent's node the wins after its unsolved
    /// children go to `dwins`.
    fn evaluate_deferred(&mut self, su: &Setup) -> Option<Move> {
        self.dwins.clear();
        if self.g.to_move() == su.prover {
            return self.g.knowledge_win_second(&mut self.know);
        }
        self.moves.clear();
        self.moves.extend(self.dmoves.iter().map(|&(_, m)| m));
        let mut wins = Vec::new();
        self.g
            .quick_wins_second(&mut self.know, &self.moves, &mut wins);
        for (i, w) in wins {
            let Some(&(k, m)) = self.dmoves.get(i) else {
                continue;
            };
            self.g.play_unchecked(m);
            self.dwins.push((k, tt::key(&self.g, su.prover), w));
            self.g.undo();
        }
        None
    }

    /// Settles a revisited node after its deferred knowledge (lock held): a win is recorded
    /// and backed up, else the node's own mean is backed up again (a neutral visit).
    fn finish_deferred(&mut self, t: &mut Tree, su: &Setup, win: Option<Move>, vl: bool) {
        let idx = *self.path.last().unwrap_or(&0) as usize;
        t.nodes[idx].pending = false;
        let path = std::mem::take(&mut self.path);
        for &(k, key, w) in &self.dwins {
            if t.nodes[k as usize].status == UNKNOWN {
                t.nodes[k as usize].status = WIN;
                if su.use_tt {
                    t.tt.put(key, 0, INF, 1, w);
                }
            }
        }
        if !self.dwins.is_empty() {
            let to_move = self.g.to_move();
            let st = t.update_status(idx, to_move, su.prover);
            if st != UNKNOWN {
                t.backup(&path, &mut self.g, Backup::Status(st), su, vl);
                self.path = path;
                return;
            }
        }
        if let Some(m) = win {
            if t.nodes[idx].status == UNKNOWN {
                if su.use_tt || idx == 0 {
                    let key = if idx == 0 {
                        su.root_key
                    } else {
                        tt::key(&self.g, su.prover)
                    };
                    t.tt.put(key, 0, INF, 1, m);
                }
                t.nodes[idx].status = WIN;
            }
            t.backup(&path, &mut self.g, Backup::Status(WIN), su, vl);
        } else {
            let n = t.nodes[idx];
            let mean = n.wins / n.visits.max(1) as f32;
            let b = match su.cost {
                // The zone search may have proven replies: the reply value again, now.
                None if su.reply_value_at(self.g.to_move(), n.count as usize) => {
                    let kids = &t.nodes[n.kids()];
                    let open = kids.iter().filter(|c| c.status == UNKNOWN).count();
                    Backup::Value(-reply_value(kids.len(), open))
                }
                // `wins` is from the view of the player who moved into the node.
                None => Backup::Value(-mean),
                Some(_) => Backup::Cost(mean),
            };
            t.backup(&path, &mut self.g, b, su, vl);
        }
        self.path = path;
    }

    /// Expands the pending leaf (lock held) with the results of [`Worker::evaluate`] and
    /// backs up. Returns `false` when the pool is full.
    fn finish(&mut self, t: &mut Tree, su: &Setup, win: Option<Move>, vl: bool) -> bool {
        let idx = *self.path.last().unwrap_or(&0) as usize;
        t.nodes[idx].pending = false;
        if let Some(m) = win {
            if su.use_tt || idx == 0 {
                let key = if idx == 0 {
                    su.root_key
                } else {
                    tt::key(&self.g, su.prover)
                };
                t.tt.put(key, 0, INF, 1, m);
            }
            t.nodes[idx].status = WIN;
            t.backup(&self.path, &mut self.g, Backup::Status(WIN), su, vl);
            return true;
        }
        if t.nodes.len() + self.order.len() > t.max_nodes {
            t.full = true;
            t.abandon(&self.path, &mut self.g, vl);
            return false;
        }
        let first = t.nodes.len() as u32;
        // Narrowed phase: the replies proven at expansion get no node (the table holds their
        // wins for the proof), which saves most of the pool at the opponent's nodes.
        let compact = su.narrow && su.use_tt && self.g.to_move() != su.prover;
        let mut count = 0u16;
        if compact {
            let mut proven = vec![false; self.order.len()];
            for &(i, _, _) in &self.quick {
                if let Some(x) = proven.get_mut(i as usize) {
                    *x = true;
                }
            }
            for (&(p, m), &done) in self.order.iter().zip(&proven) {
                if !done {
                    t.nodes.push(Node::new(m, p));
                    count += 1;
                }
            }
        } else {
            for &(p, m) in &self.order {
                t.nodes.push(Node::new(m, p));
            }
            count = self.order.len() as u16;
        }
        for &(i, key, w) in &self.quick {
            if !compact {
                t.nodes[first as usize + i as usize].status = WIN;
            }
            if su.use_tt {
                t.tt.put(key, 0, INF, 1, w);
            }
        }
        if su.tracks_pn() && self.g.to_move() == su.prover {
            for ch in &mut t.nodes[first as usize..] {
                ch.pn = PN_OPPONENT_NEW;
            }
        }
        let n = &mut t.nodes[idx];
        n.first = first;
        n.count = count;
        n.expanded = true;
        n.set(DEFERRED, self.defer);
        n.set(NARROW, self.narrowed);
        let e = &self.eval[0];
        let b = match (su.cost, e.cost) {
            (Some(_), Some(c)) => Backup::Cost(c[su.prover.index()]),
            _ if su.reply_value_at(self.g.to_move(), self.order.len()) => {
                // Value for the side to move (the opponent): minus the prover's.
                let open = self.order.len() - self.quick.len();
                Backup::Value(-reply_value(self.order.len(), open))
            }
            _ => Backup::Value(e.value.clamp(-1.0, 1.0)),
        };
        if compact && count == 0 && !self.order.is_empty() {
            // Every reply proven at once.
            t.nodes[idx].status = WIN;
            t.backup(&self.path, &mut self.g, Backup::Status(WIN), su, vl);
        } else if self.order.is_empty() {
            // No legal move but not terminal: leave it to the status rules (unknown value).
            t.backup(&self.path, &mut self.g, Backup::Value(0.0), su, vl);
        } else {
            t.backup(&self.path, &mut self.g, b, su, vl);
        }
        true
    }
}

/// The knowledge options MCTS runs with this heuristic. With learned priors (a network)
/// both stages as configured: VCT at a prover node's second visit, the pass-threat zone at
/// a defender node's `defence_visits`-th. With the static heuristics VCT runs at once
/// (the static priors cannot steer the search to where a deferred VCT would pay; see
/// docs/notebook/2026-11-22-gomoku-strength.md) and the zone at a
/// defender node's second visit, where the reply value ([`reply_value`]) is refreshed.
/// `learned`: [`Heuristic::learned`].
fn staged_knowledge(learned: bool, k: &Knowledge) -> Knowledge {
    if !learned {
        Knowledge {
            defer_vct: false,
            defence_visits: 1,
            ..k.clone()
        }
    } else {
        k.clone()
    }
}

/// Whether a solve that ends its first search with the node pool full and no result runs a
/// second one with the prover's moves narrowed ([`SolverGame::narrow_prover_moves`]) in the
/// budget left: with the static heuristics under the reply value (Gomoku without a network)
/// and [`Knowledge::lambda_nodes`] set. The two searches solve different problems
/// (docs/notebook/2026-11-25-thirteenth-session-narrowed-search.md): the narrowed one spreads
/// its visits over the prover's threats and proves some that the plain one cannot reach
/// before its pool fills.
fn narrowing_phase(learned: bool, reply_value: bool, k: &Knowledge) -> bool {
    !learned && reply_value && k.lambda_nodes > 0
}

/// The exploration constant: `c_puct` of the options (the PCN reference solver's), but half
/// of it with a static heuristic under the reply value (Gomoku without a network). The
/// threat-table priors are nearly flat, so full exploration spreads the search over many
/// quiet moves (docs/notebook/2026-11-22-sixth-session-unsolved-problems.md).
/// `learned`: [`Heuristic::learned`].
fn c_puct_for(learned: bool, reply_value: bool, c_puct: f32) -> f32 {
    if reply_value && !learned {
        c_puct * 0.5
    } else {
        c_puct
    }
}

/// The prover's value of a node where the opponent is to move with `replies` legal replies
/// of which `open` are not yet proven wins for the prover (by the cheap knowledge at the
/// node's expansion, or the pass-threat zone later): `1 - 2 ln(1 + open) / ln(1 + replies)`,
/// from 1 (all proven) to -1 (none). A strong threat leaves few defences; Gomoku's static
/// values cannot tell that apart, and MCTS with them dives into single lines; the α0
/// network's values gain from it too (docs/notebook/2026-11-22-reply-value.md).
fn reply_value(replies: usize, open: usize) -> f32 {
    let (n, k) = (replies as f32, open.min(replies) as f32);
    1.0 - 2.0 * (1.0 + k).ln() / (1.0 + n).ln()
}

/// The search loop of one thread. Thread 0 (`report` set) also sends progress events.
fn run_worker<G: SolverGame>(
    w: &mut Worker<'_, G>,
    tree: &Mutex<Tree>,
    budget: &Mutex<Budget<'_>>,
    su: &Setup,
    vl: bool,
    mut report: Option<&mut dyn FnMut(&SolveEvent)>,
    root_mover_good: i8,
) {
    let mut last_report = Instant::now();
    loop {
        let Ok(mut t) = tree.lock() else { return };
        if t.nodes[0].status != UNKNOWN || t.full {
            return;
        }
        {
            let Ok(mut b) = budget.lock() else { return };
            // Simulations are slow (playouts, networks): read the clock every time.
            if b.exhausted() {
                return;
            }
            b.nodes += 1;
            t.sims = b.nodes;
            // Progress (thread 0 only), while both locks are held.
            if let Some(on_event) = report.as_mut() {
                if last_report.elapsed().as_millis() >= 500 {
                    last_report = Instant::now();
                    on_event(&SolveEvent::Progress {
                        nodes: b.nodes,
                        elapsed: b.elapsed(),
                        best: t.root_best(root_mover_good, su.root_key),
                        pn_dn: None,
                        value: t.root_value(su),
                        tt_used: t.tt.used(),
                    });
                }
            }
        }
        match w.descend(&mut t, su, vl) {
            Leaf::Now(b) => {
                let path = std::mem::take(&mut w.path);
                t.backup(&path, &mut w.g, b, su, false);
                w.path = path;
            }
            Leaf::Full => {
                t.full = true;
                let path = std::mem::take(&mut w.path);
                t.abandon(&path, &mut w.g, false);
                w.path = path;
                return;
            }
            Leaf::Collision => {
                let path = std::mem::take(&mut w.path);
                t.abandon(&path, &mut w.g, false);
                w.path = path;
                if let Ok(mut b) = budget.lock() {
                    b.nodes = b.nodes.saturating_sub(1);
                }
                drop(t);
                std::thread::yield_now();
                continue;
            }
            Leaf::Deferred => {
                drop(t);
                let win = w.evaluate_deferred(su);
                let Ok(mut t) = tree.lock() else { return };
                w.finish_deferred(&mut t, su, win, vl);
            }
            Leaf::Expand => {
                drop(t);
                let win = w.evaluate(su);
                let Ok(mut t) = tree.lock() else { return };
                if !w.finish(&mut t, su, win, vl) {
                    return;
                }
            }
        }
    }
}

impl<G: SolverGame> Mcts<G> {
    /// A solver with this heuristic.
    pub fn new(opts: SolverOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let know = KnowledgeState::new(opts.knowledge.clone());
        let use_tt = !(G::HISTORY_SENSITIVE && opts.ghi == GhiMode::Exact);
        Mcts {
            use_tt,
            tree: Mutex::new(Tree::new(opts.tt_bytes())),
            opts,
            heuristic,
            know,
            root_mover_good: WIN,
            root_key: 0,
            last: None,
            last_threads: 1,
            last_phases: 0,
            narrow_heuristic: None,
        }
    }

    /// Threads used by the last solve (1 when the heuristic cannot be forked).
    pub fn threads_used(&self) -> usize {
        self.last_threads
    }

    /// Search phases the last solve ran: 2 when its first search filled the node pool
    /// without a result and a second one ran with the prover's moves narrowed
    /// ([`Knowledge::lambda_nodes`]).
    pub fn phases_used(&self) -> usize {
        self.last_phases
    }

    /// The prover's decisions that the last solve's final search tree proved: every node
    /// where the prover is to move with a choice of two or more children, one of which is a
    /// proven win. Training data for move rankings (`examples/decision_samples.rs`): the
    /// search found these moves among the node's children, whatever their prior said.
    /// Nodes a knowledge search proved at expansion have no children and are not listed.
    pub fn proven_choices(&mut self) -> Vec<ProvenChoice> {
        // The last solve's root position and prover.
        let Some((root_mover, prover)) = self.last.as_ref().map(|l| (l.0.to_move(), l.1)) else {
            return Vec::new();
        };
        let t = self.tree_mut();
        let mut out = Vec::new();
        // Depth-first over (node, path); the tree is a tree (no shared children).
        let mut stack: Vec<(usize, Vec<Move>)> = vec![(0, Vec::new())];
        while let Some((idx, path)) = stack.pop() {
            let Some(n) = t.nodes.get(idx).copied() else {
                continue;
            };
            if !n.expanded || n.count == 0 {
                continue;
            }
            let prover_to_move = (path.len() % 2 == 0) == (root_mover == prover);
            let kids = n.kids();
            if prover_to_move && n.status == WIN && n.count > 1 {
                let win = t.nodes[kids.clone()]
                    .iter()
                    .filter(|c| c.status == WIN)
                    .max_by_key(|c| c.visits)
                    .map(|c| c.mv);
                if let Some(win) = win {
                    out.push(ProvenChoice {
                        path: path.clone(),
                        moves: t.nodes[kids.clone()].iter().map(|c| c.mv).collect(),
                        win,
                        narrowed: n.has(NARROW),
                    });
                }
            }
            for k in kids {
                let c = t.nodes[k];
                if c.expanded && c.count > 0 {
                    let mut p = path.clone();
                    p.push(c.mv);
                    stack.push((k, p));
                }
            }
        }
        out
    }

    fn tree_mut(&mut self) -> &mut Tree {
        match self.tree.get_mut() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        }
    }
}

impl<G: SolverGame> Solver<G> for Mcts<G> {
    fn name(&self) -> &'static str {
        super::SolverKind::Mcts.name()
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
        let root_mover = game.to_move();
        self.root_mover_good = if root_mover == prover { WIN } else { LOSS };
        self.root_key = tt::key(game, prover);
        // Without threat searches no reply is ever proven early: nothing to count.
        let reply_value = G::QUICK_WINS
            && self.heuristic.cost_model().is_none()
            && (self.opts.knowledge.vcf || self.opts.knowledge.vct);
        let su = Setup {
            prover,
            root_mover,
            use_tt: self.use_tt,
            root_key: self.root_key,
            c_puct: c_puct_for(self.heuristic.learned(), reply_value, self.opts.c_puct),
            cost: self.heuristic.cost_model(),
            reply_value,
            narrow: false,
            root_pn: self.opts.mcts.root_pn,
        };
        let phases = if narrowing_phase(self.heuristic.learned(), reply_value, &self.opts.knowledge)
        {
            2
        } else {
            1
        };
        let k = &self.opts.knowledge;
        let narrow_patterns = self.opts.mcts.narrow_patterns;
        if phases == 2
            && self.narrow_heuristic.is_none()
            && narrow_patterns > 0.0
            && narrow_patterns != k.patterns
            && self.heuristic.name() == G::default_heuristic(&self.opts).name()
        {
            let opts = SolverOptions {
                knowledge: Knowledge {
                    patterns: narrow_patterns,
                    ..k.clone()
                },
                ..self.opts.clone()
            };
            self.narrow_heuristic = Some(G::default_heuristic(&opts));
        }
        // Forks for the extra threads (each from the previous one, so seeds differ), of the
        // heuristic of the phase that runs threaded (see below).
        let mut forks: Vec<Box<dyn Heuristic<G>>> = Vec::new();
        for _ in 1..self.opts.threads.max(1) {
            let f = match (forks.last(), &self.narrow_heuristic) {
                (Some(p), _) => p.fork(),
                (None, Some(h)) if phases == 2 => h.fork(),
                (None, _) => self.heuristic.fork(),
            };
            match f {
                Some(f) => forks.push(f),
                None => break,
            }
        }
        let threads = 1 + forks.len();
        self.last_threads = threads;
        log::debug!("mcts: {threads} search threads, seed {}", self.opts.seed);
        let budget = Mutex::new(Budget::new(limits, stop));
        let root_mover_good = self.root_mover_good;
        let mut extra_know = 0u64;
        self.last_phases = 0;
        let first = if phases == 2 && self.opts.mcts.narrow_only {
            1
        } else {
            0
        };
        for phase in first..phases {
            let su = Setup {
                narrow: phase == 1,
                // The halved constant is for the flat static priors; the narrowed phase's
                // priors are spread over the kept moves only, which need the full
                // exploration to be tried at all.
                c_puct: if phase == 1 {
                    self.opts.c_puct
                } else {
                    su.c_puct
                },
                ..su
            };
            if phase > first {
                // A later phase only after a search that stopped on a full pool, unsolved,
                // with budget left.
                let spent = budget.lock().map_or(true, |b| b.exhausted());
                let t = self.tree_mut();
                if spent || t.nodes[0].status != UNKNOWN || !t.full {
                    break;
                }
            }
            {
                // Each phase grows its own tree; the table keeps what earlier phases solved.
                let t = self.tree_mut();
                t.nodes.clear();
                t.nodes.push(Node::new(NO_MOVE, 1.0));
                t.cmin = f32::INFINITY;
                t.cmax = f32::NEG_INFINITY;
                t.full = false;
                t.sims = 0;
            }
            self.last_phases = phase + 1;
            let tree = &self.tree;
            let knowledge = staged_knowledge(self.heuristic.learned(), &self.opts.knowledge);
            self.know.opts = knowledge.clone();
            let mut w0 = Worker {
                heuristic: match &mut self.narrow_heuristic {
                    Some(h) if phase == 1 => &mut **h,
                    _ => &mut *self.heuristic,
                },
                know: std::mem::replace(&mut self.know, KnowledgeState::new(knowledge.clone())),
                g: game.clone(),
                eval: vec![Evaluation::default()],
                moves: Vec::with_capacity(512),
                order: Vec::with_capacity(512),
                quick: Vec::new(),
                wide: false,
                narrowed: false,
                defer: false,
                dmoves: Vec::new(),
                dwins: Vec::new(),
                path: Vec::with_capacity(256),
            };
            // The first of two phases runs on one thread: under virtual loss it spreads its
            // visits and takes longer on the problems it solves; the narrowed phase, where
            // the budget goes, gets them all.
            let helpers = if phases == 2 && phase == 0 {
                0
            } else {
                forks.len()
            };
            let vl = helpers > 0;
            std::thread::scope(|scope| {
                let mut handles = Vec::new();
                for f in forks.iter_mut().take(helpers) {
                    let budget = &budget;
                    let su = &su;
                    let knowledge = knowledge.clone();
                    let g = game.clone();
                    handles.push(scope.spawn(move || {
                        let mut w = Worker {
                            heuristic: &mut **f,
                            know: KnowledgeState::new(knowledge),
                            g,
                            eval: vec![Evaluation::default()],
                            moves: Vec::with_capacity(512),
                            order: Vec::with_capacity(512),
                            quick: Vec::new(),
                            wide: false,
                            narrowed: false,
                            defer: false,
                            dmoves: Vec::new(),
                            dwins: Vec::new(),
                            path: Vec::with_capacity(256),
                        };
                        run_worker(&mut w, tree, budget, su, vl, None, root_mover_good);
                        w.know.nodes
                    }));
                }
                run_worker(
                    &mut w0,
                    tree,
                    &budget,
                    &su,
                    vl,
                    Some(on_event),
                    root_mover_good,
                );
                for h in handles {
                    extra_know += h.join().unwrap_or(0);
                }
            });
            self.know = w0.know;
        }
        let (elapsed, sims) = match budget.lock() {
            Ok(b) => (b.elapsed(), b.nodes),
            Err(p) => {
                let b = p.into_inner();
                (b.elapsed(), b.nodes)
            }
        };
        let root_key = self.root_key;
        let t = self.tree_mut();
        let result = match t.nodes[0].status {
            WIN => SolveResult::Win,
            LOSS => SolveResult::Loss,
            _ => SolveResult::Unknown,
        };
        let best = t.root_best(root_mover_good, root_key);
        let seconds = elapsed.as_secs_f64();
        let stats = SolveStats {
            nodes: sims,
            seconds,
            nodes_per_second: sims as f64 / seconds.max(1e-9),
            tt_used: t.tt.used(),
            tt_capacity: t.tt.capacity(),
            tt_bytes: t.tt.bytes() + t.max_nodes * std::mem::size_of::<Node>(),
            knowledge_nodes: 0,
        };
        let value = t.root_value(&su);
        let stats = SolveStats {
            knowledge_nodes: self.know.nodes - know_before + extra_know,
            ..stats
        };
        on_event(&SolveEvent::Progress {
            nodes: sims,
            elapsed,
            best,
            pn_dn: None,
            value,
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
        let use_tt = self.use_tt;
        let max_nodes = self.opts.proof_max_nodes;
        let search_nodes = self.opts.proof_search_nodes;
        let t = match self.tree.get_mut() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        let mut oracle = MctsOracle {
            tt: use_tt.then_some(&t.tt),
            nodes: &t.nodes,
            root_ply: root.ply(),
            path: Vec::new(),
            fallback: DfpnOracle::new(&mut dfpn, Budget::new(&limits, &stop)),
        };
        proof::build(
            &root,
            prover,
            result,
            &mut oracle,
            know,
            max_nodes,
            search_nodes,
        )
    }

    fn clear(&mut self) {
        let t = self.tree_mut();
        t.tt.clear();
        t.nodes = Vec::new();
        self.know.clear();
        self.last = None;
    }

    fn set_memory(&mut self, bytes: usize) {
        self.opts.memory_bytes = bytes;
        let b = self.opts.tt_bytes();
        *self.tree_mut() = Tree::new(b);
        self.last = None;
    }

    fn set_threads(&mut self, threads: usize) {
        self.opts.threads = threads.max(1);
    }
}

/// The MCTS side of a proof build: a solved child in the search tree itself, else solved
/// children from the table, else a DFPN re-search.
///
/// The tree is path-exact (a node is the position after its moves from the root), so its
/// statuses are sound even where the table is off (Killall-Go with [`GhiMode::Exact`]): there
/// the tree is the only record of the search, and without it every proof had to be found
/// again by DFPN (measured: Killall-Go wins of MCTS left without a proof when that re-search
/// ran out of time or nodes).
struct MctsOracle<'a, 'b, 'c, G: SolverGame> {
    tt: Option<&'a Tt>,
    nodes: &'a [Node],
    root_ply: usize,
    /// Scratch: the moves from the root to the position asked about.
    path: Vec<Move>,
    fallback: DfpnOracle<'b, 'c, G>,
}

impl<G: SolverGame> MctsOracle<'_, '_, '_, G> {
    /// The tree node of `g` (reached from the root by `g`'s moves since the root), if the
    /// search expanded its way there. `g` is left as it was.
    fn tree_node(&mut self, g: &mut G) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_value_ranks_strong_threats_above_weak_ones() {
        // A strong threat leaves a few of some 200 replies open, a weak one most of them
        // (the shape of a shared problem's node, docs/notebook/2026-11-22-reply-value.md).
        assert!(reply_value(208, 3) > 0.4);
        assert!(reply_value(208, 152) < -0.8);
        assert_eq!(reply_value(208, 0), 1.0);
        assert_eq!(reply_value(208, 208), -1.0);
        // Fewer open replies, higher value; bounded by ±1 even for bad counts.
        for n in 2..300 {
            for k in 1..=n {
                assert!(reply_value(n, k) < reply_value(n, k - 1));
            }
            assert_eq!(reply_value(n, n + 5), -1.0);
        }
    }

    #[test]
    fn static_heuristics_explore_less_under_the_reply_value() {
        use crate::game::gomoku::Gomoku;
        use crate::search::solver::heuristic::UniformPlayout;
        // The static heuristics say so (the network's `learned` is checked in
        // tests/nn_solver.rs).
        let threat = Gomoku::default_heuristic(&SolverOptions::default());
        let uniform: Box<dyn Heuristic<Gomoku>> =
            Box::new(UniformPlayout::new(&SolverOptions::default()));
        assert!(!threat.learned() && !uniform.learned());
        assert_eq!(c_puct_for(threat.learned(), true, 1.5), 0.75);
        // Networks, and games without the reply value, keep the reference constant.
        assert_eq!(c_puct_for(true, true, 1.5), 1.5);
        assert_eq!(c_puct_for(false, false, 1.5), 1.5);
    }

    /// A root with three moves, equal in visits, value and prior: one with proof number 10
    /// and two open replies, one with 6 and a single open reply (a four), one with 30 and
    /// three (first in order, so ties go to it).
    fn pn_tree() -> Tree {
        let mut t = Tree::new(1 << 20);
        t.nodes.clear();
        let mut root = Node::new(NO_MOVE, 1.0);
        root.expanded = true;
        root.first = 1;
        root.count = 3;
        root.visits = 30;
        t.nodes.push(root);
        for (mv, pn, replies) in [(1, 30u16, 3u16), (2, 10, 2), (3, 6, 1)] {
            let mut c = Node::new(mv, 0.3);
            c.expanded = true;
            c.count = replies;
            c.first = 4;
            c.visits = 10;
            c.wins = 2.0;
            c.pn = pn;
            t.nodes.push(c);
        }
        t
    }

    fn pn_setup(narrow: bool, root_pn: f32) -> Setup {
        Setup {
            prover: Color::Black,
            root_mover: Color::Black,
            use_tt: true,
            root_key: 0,
            c_puct: 1.5,
            cost: None,
            reply_value: true,
            narrow,
            root_pn,
        }
    }

    #[test]
    fn the_root_bias_prefers_the_smallest_proof_number_and_discounts_fours() {
        let t = pn_tree();
        // Without the bias the tie goes to the first move.
        assert_eq!(t.select(0, &pn_setup(true, 0.0), true), Some(1));
        // The four's 6 counts as 12: the quiet move with 10 is preferred.
        assert_eq!(t.select(0, &pn_setup(true, 2.0), true), Some(2));
        // Only in the narrowed phase, only at the root, only for the prover.
        assert_eq!(t.select(0, &pn_setup(false, 2.0), true), Some(1));
        assert_eq!(t.select(0, &pn_setup(true, 2.0), false), Some(1));
        // A solved move drops out: the four is then the only other choice.
        let mut t = pn_tree();
        t.nodes[1].status = WIN;
        t.nodes[2].status = LOSS;
        assert_eq!(t.select(0, &pn_setup(true, 2.0), true), Some(3));
    }

    #[test]
    fn proof_numbers_take_the_minimum_at_the_prover_and_the_sum_at_the_opponent() {
        let mut t = pn_tree();
        assert!(t.update_pn(0, true));
        assert_eq!(t.nodes[0].pn, 6);
        assert!(t.update_pn(0, false));
        assert_eq!(t.nodes[0].pn, 46);
        assert!(!t.update_pn(0, false));
        // Solved children are left out; a won node is 0, a lost one infinite.
        t.nodes[3].status = WIN;
        t.update_pn(0, true);
        assert_eq!(t.nodes[0].pn, 10);
        t.nodes[0].status = WIN;
        t.update_pn(0, true);
        assert_eq!(t.nodes[0].pn, 0);
        t.nodes[0].status = LOSS;
        t.update_pn(0, true);
        assert_eq!(t.nodes[0].pn, PN_INF);
        // Before expansion the number stays as set.
        t.nodes[1].expanded = false;
        t.nodes[1].pn = PN_OPPONENT_NEW;
        assert!(!t.update_pn(1, false));
        assert_eq!(t.nodes[1].pn, PN_OPPONENT_NEW);
    }

    #[test]
    fn static_heuristics_run_vct_at_once_and_the_zone_at_the_second_visit() {
        let k = Knowledge::default();
        let s = staged_knowledge(false, &k);
        assert!(!s.defer_vct);
        assert_eq!(s.defence_visits, 1);
        assert_eq!(s.defence, k.defence);
        let n = staged_knowledge(true, &k);
        assert_eq!(n, k);
    }
}
