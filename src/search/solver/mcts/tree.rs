//! The search tree: compact nodes in one pool, their proof status and statistics, the
//! selection and backup arithmetic on them.

use crate::game::{Color, Move};
use crate::search::solver::heuristic::CostModel;
use crate::search::solver::tt::{self, Tt, INF, LOSS, NO_MOVE, UNKNOWN, WIN};
use crate::search::solver::SolverGame;

#[derive(Copy, Clone, Debug)]
pub(super) struct Node {
    pub(super) mv: Move,
    pub(super) count: u16,
    pub(super) status: i8,
    pub(super) expanded: bool,
    /// A thread is evaluating this leaf (others must not expand it too).
    pub(super) pending: bool,
    /// [`DEFERRED`], [`NARROW`], [`WIDE`]: one byte, so that the node stays 28 bytes (a
    /// larger node is a smaller pool for the same memory).
    pub(super) flags: u8,
    pub(super) prior: f32,
    pub(super) visits: u32,
    /// Virtual losses of simulations in flight through this node.
    pub(super) vloss: u16,
    /// Narrowed phase: the prover's proof number (saturating; [`PN_INF`] when lost), for
    /// the root's proof-number bias ([`super::MctsPhases::root_pn`]).
    pub(super) pn: u16,
    /// α0: sum of values from the view of the player who moved into this node.
    /// PCN: sum of path costs (unsigned).
    pub(super) wins: f32,
    pub(super) first: u32,
}

/// [`Node::flags`]: the second stage of knowledge ([`SolverGame::knowledge_win_second`]) is
/// still to run at the next visit.
pub(super) const DEFERRED: u8 = 1;
/// [`Node::flags`]: a prover's node whose children are the moves kept by
/// [`SolverGame::narrow_prover_moves`]; all of them lost does not lose the node.
pub(super) const NARROW: u8 = 2;
/// [`Node::flags`]: re-expanded with every legal move after its narrowed children all lost.
pub(super) const WIDE: u8 = 4;

/// [`Node::pn`] of a lost node.
pub(super) const PN_INF: u16 = u16::MAX;

/// [`Node::pn`] of a new node where the prover's opponent is to move: its replies are not
/// known before its expansion, and a reply left open usually takes more than one node to
/// prove.
pub(super) const PN_OPPONENT_NEW: u16 = 20;

/// A root move that leaves one open reply counts this many times its proof number in the
/// root's bias. Mostly these are fours: the position after the forced reply is the problem
/// again with one exchange more, so its proof number is as small as the root's best and the
/// bias would always favour it. (In the narrowed tree `count` is the replies the pass-threat
/// zone left open, so a threat leaving a single defence counts here too.)
pub(super) const PN_FOUR_FACTOR: f32 = 2.0;

/// A child's proof number as the root's bias weighs it ([`PN_FOUR_FACTOR`]).
pub(super) fn bias_pn(ch: &Node) -> f32 {
    if ch.expanded && ch.count == 1 {
        ch.pn as f32 * PN_FOUR_FACTOR
    } else {
        ch.pn as f32
    }
}

impl Node {
    pub(super) fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    pub(super) fn set(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }

    /// Indices of the children in the pool (empty before expansion).
    pub(super) fn kids(&self) -> std::ops::Range<usize> {
        self.first as usize..self.first as usize + self.count as usize
    }

    pub(super) fn new(mv: Move, prior: f32) -> Node {
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

/// Everything the threads share, behind one mutex.
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    pub(super) tt: Tt,
    pub(super) max_nodes: usize,
    /// PCN: smallest and largest node mean seen (normalisation of Q).
    pub(super) cmin: f32,
    pub(super) cmax: f32,
    /// The node pool is full: stop.
    pub(super) full: bool,
    /// Simulations started (the node budget counts these).
    pub(super) sims: u64,
}

const _: () = assert!(std::mem::size_of::<Node>() == 28);

impl Tree {
    pub(super) fn new(bytes: usize) -> Tree {
        let half = bytes / 2;
        Tree {
            tt: Tt::lazy(half),
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
    pub(super) fn select(&self, idx: usize, su: &Setup, chooser_is_prover: bool) -> Option<usize> {
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

    /// Compacts the pool, in place, without the children of solved nodes (most of a long
    /// search's pool) and of the unsolved nodes none of whose children was visited yet (each
    /// was visited once, at its expansion). Those nodes become leaves again with their status
    /// and statistics; an unsolved one is expanded again (knowledge and heuristic anew) at
    /// its next visit, a solved one is never entered. The kept nodes keep their order, so the
    /// pool needs no second copy: only two bits and a few bytes of rank per 64 nodes, which
    /// keeps the search within its memory budget. Indices change: no path into the pool may
    /// be held.
    pub(super) fn reclaim(&mut self) {
        let n = self.nodes.len();
        if n == 0 {
            return;
        }
        let words = n.div_ceil(64);
        let bit = |v: &[u64], i: usize| v[i / 64] >> (i % 64) & 1 != 0;
        // Pass 1, in pool order: a node's children were appended after it at its expansion,
        // so every parent is seen before its children.
        let mut keep = vec![0u64; words];
        let mut cut = vec![0u64; words];
        keep[0] = 1;
        for i in 0..n {
            if !bit(&keep, i) {
                continue;
            }
            let node = self.nodes[i];
            if !node.expanded || node.count == 0 {
                continue;
            }
            let Some(kids) = self.nodes.get(node.kids()) else {
                cut[i / 64] |= 1 << (i % 64);
                continue;
            };
            // A solved node's subtree is needed no more by the search; the proof finds its
            // moves in the table (every status change is stored there) or searches them.
            let idle = node.status != UNKNOWN
                || (!node.pending
                    && kids
                        .iter()
                        .all(|c| c.visits == 0 && c.status == UNKNOWN && !c.pending));
            if idle {
                cut[i / 64] |= 1 << (i % 64);
            } else {
                for k in node.kids() {
                    keep[k / 64] |= 1 << (k % 64);
                }
            }
        }
        // New index of a kept node: the kept nodes before it.
        let mut before = Vec::with_capacity(words);
        let mut total = 0u32;
        for w in &keep {
            before.push(total);
            total += w.count_ones();
        }
        let rank = |i: usize| -> u32 {
            let below = keep[i / 64] & ((1u64 << (i % 64)) - 1);
            before[i / 64] + below.count_ones()
        };
        // Pass 2: each kept node moves down to its rank (never up), so nothing unread is
        // overwritten.
        for i in 0..n {
            if !bit(&keep, i) {
                continue;
            }
            let mut node = self.nodes[i];
            if bit(&cut, i) {
                node.expanded = false;
                node.count = 0;
                node.first = 0;
                node.set(DEFERRED, false);
                node.set(NARROW, false);
            } else if node.expanded && node.count > 0 {
                node.first = rank(node.first as usize);
            }
            self.nodes[rank(i) as usize] = node;
        }
        self.nodes.truncate(total as usize);
    }

    /// Recomputes the status of `idx` (to move: `to_move`) from its children.
    pub(super) fn update_status(&mut self, idx: usize, to_move: Color, prover: Color) -> i8 {
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
    pub(super) fn update_pn(&mut self, idx: usize, prover_to_move: bool) -> bool {
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
    pub(super) fn backup<G: SolverGame>(
        &mut self,
        path: &[u32],
        g: &mut G,
        b: Backup,
        su: &Setup,
        vl: bool,
    ) {
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
    pub(super) fn abandon<G: SolverGame>(&mut self, path: &[u32], g: &mut G, vl: bool) {
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

    pub(super) fn root_best(&self, root_mover_good: i8, root_key: u64) -> Option<Move> {
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

    pub(super) fn root_value(&self, su: &Setup) -> Option<f32> {
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

/// Read-only settings of one solve.
#[derive(Copy, Clone)]
pub(super) struct Setup {
    pub(super) prover: Color,
    pub(super) root_mover: Color,
    pub(super) use_tt: bool,
    pub(super) root_key: u64,
    pub(super) c_puct: f32,
    pub(super) cost: Option<CostModel>,
    /// Values at the opponent's nodes from the replies left unproven ([`reply_value`]):
    /// value heuristics (static or α0) in games with quick wins (Gomoku).
    pub(super) reply_value: bool,
    /// Narrow the prover's moves ([`SolverGame::narrow_prover_moves`]): the second phase of
    /// a solve ([`SolverGame::mcts_narrowing`]).
    pub(super) narrow: bool,
    /// Weight of the proof-number bias at the root of the narrowed phase
    /// ([`super::MctsPhases::root_pn`]).
    pub(super) root_pn: f32,
    /// Gomoku with a proof-cost network: a prover's node keeps the children of
    /// [`super::MctsOptions::net_keep`] of the policy, and one thread reclaims the pool
    /// ([`Tree::reclaim`]) when it is full instead of stopping.
    pub(super) lean: bool,
    /// The share of the policy a prover's node keeps as children when `lean`.
    pub(super) keep: f32,
}

impl Setup {
    /// Whether the nodes' proof numbers are kept: only the narrowed phase's root bias reads
    /// them.
    pub(super) fn tracks_pn(&self) -> bool {
        self.narrow && self.root_pn > 0.0
    }

    /// Whether a node with `to_move` to play and `replies` children takes the reply value:
    /// the opponent's nodes with a choice, when [`Setup::reply_value`] is on.
    pub(super) fn reply_value_at(&self, to_move: Color, replies: usize) -> bool {
        self.reply_value && to_move != self.prover && replies > 1
    }
}

/// A value to back up: α0 value for the side to move at the leaf, or a status-derived /
/// heuristic PCN cost.
#[derive(Copy, Clone, Debug)]
pub(super) enum Backup {
    /// Value for the side to move at the leaf (α0 mode).
    Value(f32),
    /// A solved status (the mode decides the number).
    Status(i8),
    /// The prover's estimated cost at the leaf (PCN mode).
    Cost(f32),
}
