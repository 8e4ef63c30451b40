//! One search thread: descent from the root, expansion with the heuristic and the
//! knowledge, backup; [`run_worker`] runs one until the budget or a proof ends it.

use std::sync::Mutex;
use std::time::Instant;

use super::phases::reply_value;
use super::tree::{Backup, Node, Setup, Tree, DEFERRED, NARROW, PN_OPPONENT_NEW, WIDE};
use crate::game::{Move, Outcome};
use crate::search::solver::proof::satisfies;
use crate::search::solver::tt::{self, INF, LOSS, UNKNOWN, WIN};
use crate::search::solver::{
    Evaluation, Heuristic, KnowledgeState, SolveEvent, SolveResult, SolverGame,
};
use crate::search::Budget;

/// What a descent found.
pub(super) enum Leaf {
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

/// Per-thread scratch.
pub(super) struct Worker<'h, G: SolverGame> {
    pub(super) heuristic: &'h mut dyn Heuristic<G>,
    pub(super) know: KnowledgeState,
    pub(super) g: G,
    pub(super) eval: Vec<Evaluation>,
    pub(super) moves: Vec<Move>,
    pub(super) order: Vec<(f32, Move)>,
    /// The pending leaf's deferred knowledge is still to run.
    pub(super) defer: bool,
    /// At a revisited opponent's node: its unsolved children (node index, move).
    pub(super) dmoves: Vec<(u32, Move)>,
    /// Their wins from [`SolverGame::quick_wins_second`]: (node index, table key, move).
    pub(super) dwins: Vec<(u32, u64, Move)>,
    /// The pending leaf is a node widened again (no narrowing of its moves).
    pub(super) wide: bool,
    /// [`Worker::evaluate`] narrowed the pending leaf's moves.
    pub(super) narrowed: bool,
    /// Children of the pending leaf proven by [`SolverGame::quick_win`]: (index in
    /// `order`, table key, the prover's winning move).
    pub(super) quick: Vec<(u32, u64, Move)>,
    pub(super) path: Vec<u32>,
}

impl<'h, G: SolverGame> Worker<'h, G> {
    /// A worker at `g` (the root) with empty scratch buffers.
    pub(super) fn new(heuristic: &'h mut dyn Heuristic<G>, know: KnowledgeState, g: G) -> Self {
        Worker {
            heuristic,
            know,
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
        }
    }

    /// Descends from the root under the lock. On `Leaf::Expand` the path carries virtual
    /// losses and the leaf is pending; `self.g` is at the leaf.
    pub(super) fn descend(&mut self, t: &mut Tree, su: &Setup, vl: bool) -> Leaf {
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
    pub(super) fn evaluate(&mut self, su: &Setup) -> Option<Move> {
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
        if su.lean && prover_node && !self.wide && !self.narrowed {
            // Only the likeliest moves get nodes; the node is marked narrowed, so that all
            // of them lost re-expands it with every move instead of losing it.
            let total: f32 = self.order.iter().map(|x| x.0).sum();
            let (mut acc, mut n) = (0.0f32, 0usize);
            for &(p, _) in &self.order {
                if n >= super::NET_KEEP_MIN && acc >= su.keep * total {
                    break;
                }
                acc += p;
                n += 1;
            }
            if n < self.order.len() {
                self.order.truncate(n);
                self.narrowed = true;
            }
        }
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
    pub(super) fn evaluate_deferred(&mut self, su: &Setup) -> Option<Move> {
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
    pub(super) fn finish_deferred(
        &mut self,
        t: &mut Tree,
        su: &Setup,
        win: Option<Move>,
        vl: bool,
    ) {
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
    pub(super) fn finish(&mut self, t: &mut Tree, su: &Setup, win: Option<Move>, vl: bool) -> bool {
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
            t.abandon(&self.path, &mut self.g, vl);
            // One thread holds no other path into the pool, so it may be rebuilt; the leaf
            // is expanded again at its next visit. Too little freed: stop, as with threads.
            if su.lean && !vl {
                let before = t.nodes.len();
                t.reclaim();
                log::debug!("mcts pool full: {} of {before} nodes kept", t.nodes.len());
                if before - t.nodes.len() >= t.max_nodes / 8 {
                    return true;
                }
            }
            t.full = true;
            return false;
        }
        let first = t.nodes.len() as u32;
        // The replies proven at expansion get no node (the table holds their wins for the
        // proof), which saves most of the pool at the opponent's nodes: in the narrowed
        // phase, and wherever no reply value is taken (a proof-cost network), since the
        // reply value counts the proven replies among the node's children.
        let compact = (su.narrow || !su.reply_value) && su.use_tt && self.g.to_move() != su.prover;
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

/// The search loop of one thread. Thread 0 (`report` set) also sends progress events.
pub(super) fn run_worker<G: SolverGame>(
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
