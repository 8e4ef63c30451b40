//! Shared parts of the suite-II solvers (`gpn`, `ews`, `ppn`, `ab`): the tree-solver
//! skeleton ([`TreeSearch`]: one solve loop and one [`Solver`] implementation for all four),
//! table keys that respect the history where the game needs it, the solved-position table,
//! terminal checks, random playouts that also measure the branching, and proof extraction.
//!
//! Every suite-II solver stores each position it solves in a [`Tt`] (the memory budget's
//! table) under [`Common::key`]. In [`GhiMode::Exact`] on a history-sensitive game
//! (Killall-Go superko) that key includes the history, so reusing a solved entry is always
//! sound. Proof trees are built by [`super::proof::build`] (replaying the real game) with an
//! oracle that reads this table and, for positions it lost, re-searches with plain DFPN
//! through the public registry (so this module does not depend on DFPN internals).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::proof::{self, satisfies, ProofOracle};
use super::tt::{self, Tt, INF, LOSS, NO_MOVE, UNKNOWN, WIN};
use super::{
    make, plain_heuristic, CommonOptions, GhiMode, KnowledgeState, ProofTree, SolveEvent,
    SolveOutcome, SolveResult, SolveStats, Solver, SolverGame, SolverKind, SolverOptions,
};
use crate::game::{Color, Move, Outcome};
use crate::search::{Budget, Limits};
use crate::util::Rng;

/// The status of a finished game for `prover`, or `None` while it goes on.
#[inline]
pub(crate) fn terminal_status<G: SolverGame>(g: &G, prover: Color) -> Option<i8> {
    g.outcome().map(|o| {
        if satisfies(o, prover, SolveResult::Win) {
            WIN
        } else {
            LOSS
        }
    })
}

/// Whether `status` (for `prover`) is good for `mover`: a prover win when the mover is the
/// prover, a prover non-win otherwise. This is the two-valued view every suite-II solver
/// takes: at the opponent's nodes "winning" means keeping the prover from a win (a draw
/// counts for the opponent).
#[inline]
pub(crate) fn good_for(status: i8, mover: Color, prover: Color) -> bool {
    (status == WIN) == (mover == prover)
}

/// The solve result of a status.
pub(crate) fn result_of(status: i8) -> SolveResult {
    match status {
        WIN => SolveResult::Win,
        LOSS => SolveResult::Loss,
        _ => SolveResult::Unknown,
    }
}

/// A random playout from `g` (uniform legal moves, at most `max_plies` plies). Returns
/// whether the side to move at `g` "wins" in the two-valued sense of [`good_for`] and the
/// sum of the branching factors met along the way (Expected Work Search's work estimate).
pub(crate) fn playout<G: SolverGame>(
    g: &G,
    prover: Color,
    rng: &mut Rng,
    max_plies: usize,
    buf: &mut Vec<Move>,
) -> (bool, f64) {
    let me = g.to_move();
    let mut p = g.clone();
    let mut work = 0.0f64;
    for _ in 0..max_plies {
        if p.outcome().is_some() {
            break;
        }
        p.legal_moves(buf);
        if buf.is_empty() {
            break;
        }
        work += buf.len() as f64;
        let m = buf[rng.below(buf.len())];
        p.play_unchecked(m);
    }
    let prover_won = p.outcome() == Some(Outcome::Win(prover));
    // Cut off without a result: count it as not proven (the opponent's side).
    ((me == prover) == prover_won, work.max(1.0))
}

/// State shared by the suite-II solvers: options, knowledge, the solved table, the last
/// result (for [`Solver::proof_tree`]).
pub(crate) struct Common<G: SolverGame> {
    pub opts: CommonOptions,
    pub know: KnowledgeState,
    pub tt: Tt,
    /// Keys include the history ([`GhiMode::Exact`] on a history-sensitive game).
    pub exact: bool,
    pub last: Option<(G, Color, SolveResult)>,
    /// Knowledge nodes at the start of the current solve.
    pub know_before: u64,
}

impl<G: SolverGame> Common<G> {
    /// Options `opts`, a solved table of `tt_bytes` bytes.
    pub fn new(opts: CommonOptions, tt_bytes: usize) -> Self {
        Common {
            know: opts.knowledge_state(),
            tt: Tt::lazy(tt_bytes),
            exact: G::HISTORY_SENSITIVE && opts.ghi == GhiMode::Exact,
            last: None,
            know_before: 0,
            opts,
        }
    }

    /// The table key of `g` for `prover`, where `hist` is the history hash of `g`.
    #[inline]
    pub fn key(&self, g: &G, prover: Color, hist: u64) -> u64 {
        if self.exact {
            tt::history_key(g, prover, hist)
        } else {
            tt::key(g, prover)
        }
    }

    /// The history hash of a search root (replays the game once).
    pub fn root_hist(&self, g: &G) -> u64 {
        if self.exact {
            g.history_root()
        } else {
            0
        }
    }

    /// The history hash right after a move was played from a node with `hist`.
    #[inline]
    pub fn child_hist(&self, g: &G, hist: u64) -> u64 {
        if self.exact {
            hist ^ g.history_mark()
        } else {
            0
        }
    }

    /// The move stored with `key` (the one that decided it, or the best so far), if any.
    pub fn stored_best(&self, key: u64) -> Option<Move> {
        self.tt
            .get(key)
            .and_then(|e| (e.best != NO_MOVE).then_some(e.best))
    }

    /// The stored status of `key`.
    #[inline]
    pub fn stored(&self, key: u64) -> i8 {
        match self.tt.get(key) {
            Some(e) if e.proven() => WIN,
            Some(e) if e.disproven() => LOSS,
            _ => UNKNOWN,
        }
    }

    /// Records a solved position (`best`: the move that decides it, or [`NO_MOVE`]). An
    /// entry that is already solved is kept (it may carry the move).
    pub fn store(&mut self, key: u64, status: i8, best: Move, effort: u64) {
        if status == UNKNOWN || self.stored(key) != UNKNOWN {
            return;
        }
        let (pn, dn) = if status == WIN { (0, INF) } else { (INF, 0) };
        self.tt.put(key, pn, dn, effort.max(1), best);
    }

    /// Knowledge at a node where the prover is to move: a forced win found by the game's
    /// special search, recorded under `key`.
    pub fn knowledge(&mut self, g: &mut G, prover: Color, key: u64) -> Option<Move> {
        if g.to_move() != prover {
            return None;
        }
        let m = g.knowledge_win(&mut self.know)?;
        self.store(key, WIN, m, 1);
        Some(m)
    }

    /// Statistics of a finished solve; `extra_bytes` is the node pool's memory.
    pub fn stats(&self, budget: &Budget, extra_bytes: usize) -> SolveStats {
        let seconds = budget.elapsed().as_secs_f64();
        SolveStats {
            nodes: budget.nodes,
            seconds,
            nodes_per_second: budget.nodes as f64 / seconds.max(1e-9),
            tt_used: self.tt.used(),
            tt_capacity: self.tt.capacity(),
            tt_bytes: self.tt.bytes() + extra_bytes,
            knowledge_nodes: self.know.nodes - self.know_before,
            jobs: None,
        }
    }

    /// Ends a solve: the final progress report (with the root's proof numbers and value for
    /// the prover, where the solver has them), the `Solved` event for a proven root, the result remembered for
    /// [`Common::proof_tree`], and the outcome.
    pub fn finish(
        &mut self,
        game: &G,
        prover: Color,
        (result, best): (SolveResult, Option<Move>),
        stats: SolveStats,
        (pn_dn, value): (Option<(u64, u64)>, Option<f32>),
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        on_event(&SolveEvent::Progress {
            nodes: stats.nodes,
            elapsed: std::time::Duration::from_secs_f64(stats.seconds),
            best,
            pn_dn,
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

    /// Forgets the solved table, the knowledge tables and the last result.
    pub fn clear(&mut self) {
        self.tt.clear();
        self.know.clear();
        self.last = None;
    }

    /// Sets the memory budget (0: default) and rebuilds the solved table with `1 / parts` of
    /// it; returns that share, for the caller's own node pool when `parts` is 2.
    pub fn set_memory(&mut self, bytes: usize, parts: usize) -> usize {
        self.opts.memory_bytes = bytes;
        let share = self.opts.tt_bytes() / parts.max(1);
        self.tt = Tt::lazy(share);
        self.know = self.opts.knowledge_state();
        self.last = None;
        share
    }

    /// The solution tree of the last proven result.
    pub fn proof_tree(&mut self, stop: &AtomicBool) -> Option<ProofTree> {
        let (root, prover, result) = self.last.clone()?;
        if result == SolveResult::Unknown {
            return None;
        }
        // The search's own knowledge state: its threat-win table already holds most of the
        // proof's threat sequences (a fresh one would search each again, which can take longer
        // than the solve itself).
        let mut know = std::mem::replace(&mut self.know, self.opts.knowledge_state());
        let (search_nodes, max_nodes) = (self.opts.proof_search_nodes, self.opts.proof_max_nodes);
        let common = &*self;
        let tree = proof::with_growing_budgets(search_nodes, max_nodes, stop, |research, build| {
            let mut oracle = SuiteOracle {
                common,
                fallback: None,
                left: research.total,
                per_search: research.per_search,
                stop,
            };
            proof::build(&root, prover, result, &mut oracle, &mut know, build)
        });
        self.know = know;
        tree
    }
}

/// The tree-solver skeleton: what GPN-MCTS, EWS, PPN and the αβ solver plug into the one
/// solve loop ([`solve_tree`]) and the one [`Solver`] implementation they share. Each keeps
/// only what differs: its start, one iteration (selection, expansion, backup), and how it
/// reads its root.
pub trait TreeSearch<G: SolverGame>: Send {
    /// Which solver it is.
    const KIND: SolverKind;
    /// Progress reports from the solve loop: every iteration after which the node count
    /// masked by this is 0 and half a second has passed; `None` when the search reports
    /// from inside its iterations (αβ).
    const PROGRESS_MASK: Option<u64>;
    /// Whether a node pool takes half the memory budget (the table the other half); without
    /// one the table takes it all.
    const POOL: bool;

    /// The shared state: options, knowledge, the solved table, the last result.
    fn common(&self) -> &Common<G>;
    /// The same, mutable.
    fn common_mut(&mut self) -> &mut Common<G>;
    /// Starts a solve of `g` for `prover` within `limits`: `root_key` is the root's table key.
    fn start(&mut self, g: &G, prover: Color, root_key: u64, limits: &Limits);
    /// One iteration from the root (`g` is restored). `false` when the search cannot go on
    /// (its node pool is full, its depth limit reached, or it was cut off).
    fn iterate(
        &mut self,
        g: &mut G,
        prover: Color,
        root_hist: u64,
        budget: &mut Budget,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> bool;
    /// The root's status for the prover ([`WIN`], [`LOSS`] or [`UNKNOWN`]).
    fn root_status(&self) -> i8;
    /// The move for the side to move at the root (see [`SolveOutcome::best`]).
    fn root_best(&self, root_mover: Color, prover: Color) -> Option<Move>;
    /// The root's (proof, disproof) numbers and value for the prover, where the search has
    /// them (progress reports).
    fn root_report(&self, root_mover: Color, prover: Color) -> (Option<(u64, u64)>, Option<f32>);
    /// Bytes of the node pool (statistics).
    fn pool_bytes(&self) -> usize {
        0
    }
    /// Frees the node pool and sizes the next one to `bytes` (`None`: the same size).
    fn reset_pool(&mut self, _bytes: Option<usize>) {}
}

/// The solve loop of a [`TreeSearch`]: the root set up, iterations until the root is
/// solved or the budget is spent, progress reports, then the outcome, its events and the
/// result kept for the proof tree.
pub fn solve_tree<G: SolverGame, S: TreeSearch<G>>(
    s: &mut S,
    game: &G,
    prover: Color,
    limits: &Limits,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&SolveEvent),
) -> SolveOutcome {
    let c = s.common_mut();
    c.tt.ensure();
    c.know_before = c.know.nodes;
    let mut g = game.clone();
    let root_mover = g.to_move();
    let root_hist = c.root_hist(&g);
    let root_key = c.key(&g, prover, root_hist);
    s.start(&g, prover, root_key, limits);
    let mut budget = Budget::new(limits, stop);
    let mut last_report = Instant::now();
    while s.root_status() == UNKNOWN && !budget.exhausted() {
        if !s.iterate(&mut g, prover, root_hist, &mut budget, on_event) {
            break;
        }
        let Some(mask) = S::PROGRESS_MASK else {
            continue;
        };
        if budget.nodes & mask == 0 && last_report.elapsed().as_millis() >= 500 {
            last_report = Instant::now();
            let (pn_dn, value) = s.root_report(root_mover, prover);
            on_event(&SolveEvent::Progress {
                nodes: budget.nodes,
                elapsed: budget.elapsed(),
                best: s.root_best(root_mover, prover),
                pn_dn,
                value,
                tt_used: s.common().tt.used(),
            });
        }
    }
    let result = result_of(s.root_status());
    let best = s.root_best(root_mover, prover);
    let stats = s.common().stats(&budget, s.pool_bytes());
    let report = s.root_report(root_mover, prover);
    s.common_mut()
        .finish(game, prover, (result, best), stats, report, on_event)
}

/// Forgets the tables and the node pool of a [`TreeSearch`] ([`Solver::clear`]).
pub fn clear_tree<G: SolverGame, S: TreeSearch<G>>(s: &mut S) {
    s.common_mut().clear();
    s.reset_pool(None);
}

/// Sets the memory budget of a [`TreeSearch`] ([`Solver::set_memory`]): the table gets it
/// all, or half of it beside a node pool that gets the other half.
pub fn set_tree_memory<G: SolverGame, S: TreeSearch<G>>(s: &mut S, bytes: usize) {
    let parts = if S::POOL { 2 } else { 1 };
    let share = s.common_mut().set_memory(bytes, parts);
    if S::POOL {
        s.reset_pool(Some(share));
    }
}

/// The [`Solver`] implementation of a [`TreeSearch`] type `$t<G>`, all through the
/// skeleton. (A blanket implementation over every `TreeSearch` would overlap, for the
/// compiler, with the other solvers' own.)
macro_rules! tree_solver {
    ($t:ident) => {
        impl<G: $crate::search::solver::SolverGame> $crate::search::solver::Solver<G> for $t<G> {
            fn name(&self) -> &'static str {
                <Self as $crate::search::solver::suite::TreeSearch<G>>::KIND.name()
            }

            fn solve(
                &mut self,
                game: &G,
                prover: $crate::game::Color,
                limits: &$crate::search::Limits,
                stop: &std::sync::atomic::AtomicBool,
                on_event: &mut dyn FnMut(&$crate::search::solver::SolveEvent),
            ) -> $crate::search::solver::SolveOutcome {
                $crate::search::solver::suite::solve_tree(
                    self, game, prover, limits, stop, on_event,
                )
            }

            fn proof_tree_until(
                &mut self,
                stop: &std::sync::atomic::AtomicBool,
            ) -> Option<$crate::search::solver::ProofTree> {
                $crate::search::solver::suite::TreeSearch::common_mut(self).proof_tree(stop)
            }

            fn clear(&mut self) {
                $crate::search::solver::suite::clear_tree(self);
            }

            fn set_memory(&mut self, bytes: usize) {
                $crate::search::solver::suite::set_tree_memory(self, bytes);
            }
        }
    };
}
pub(crate) use tree_solver;

/// The child that decides a solved node for `mover`: the first solved child in `children`
/// (status, move) that is good for `mover`; [`NO_MOVE`] when none is.
pub fn decisive_child(
    children: impl Iterator<Item = (i8, Move)>,
    mover: Color,
    prover: Color,
) -> Move {
    children
        .filter(|&(status, _)| status != UNKNOWN && good_for(status, mover, prover))
        .map(|(_, mv)| mv)
        .next()
        .unwrap_or(NO_MOVE)
}

/// The proof-build oracle of the suite-II solvers: the solved table first, else a DFPN
/// re-search (one solver kept across calls, so its table helps the later ones), all within
/// one node budget.
struct SuiteOracle<'a, G: SolverGame> {
    common: &'a Common<G>,
    fallback: Option<Box<dyn Solver<G>>>,
    /// Re-search nodes left to the build.
    left: u64,
    /// The most one re-search may take.
    per_search: u64,
    /// The build's stop flag, also its re-searches'.
    stop: &'a AtomicBool,
}

impl<G: SolverGame> SuiteOracle<'_, G> {
    /// A DFPN re-search of `g`: its result, charged to the budget.
    fn research(&mut self, g: &G, prover: Color) -> (SolveResult, Option<Move>) {
        if self.left == 0 {
            return (SolveResult::Unknown, None);
        }
        if self.fallback.is_none() {
            let o = SolverOptions::with_common(
                self.common
                    .opts
                    .with_memory((self.common.opts.tt_bytes() / 4).max(1 << 20)),
            );
            self.fallback = make::<G>(SolverKind::Dfpn, &o, plain_heuristic(&o.common)).ok();
        }
        let Some(s) = self.fallback.as_mut() else {
            return (SolveResult::Unknown, None);
        };
        let out = s.solve(
            g,
            prover,
            &Limits::nodes(self.left.min(self.per_search)),
            self.stop,
            &mut |_| {},
        );
        self.left = self.left.saturating_sub(out.stats.nodes.max(1));
        (out.result, out.best)
    }
}

impl<G: SolverGame> ProofOracle<G> for SuiteOracle<'_, G> {
    fn lookup(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        let c = self.common;
        let hist = c.root_hist(g);
        let want = if result == SolveResult::Win {
            WIN
        } else {
            LOSS
        };
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        if let Some(e) = c.tt.get(c.key(g, prover, hist)) {
            let solved = if want == WIN {
                e.proven()
            } else {
                e.disproven()
            };
            if solved && e.best != NO_MOVE && moves.contains(&e.best) {
                return Some(e.best);
            }
        }
        for &m in &moves {
            g.play_unchecked(m);
            let ok = match g.outcome() {
                Some(o) => satisfies(o, prover, result),
                None => c.stored(c.key(g, prover, c.child_hist(g, hist))) == want,
            };
            g.undo();
            if ok {
                return Some(m);
            }
        }
        None
    }

    fn choose(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        if let Some(m) = self.lookup(g, prover, result) {
            return Some(m);
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        if result == SolveResult::Win && g.to_move() == prover {
            // DFPN reports the proven winning move at the root when the prover moves.
            let (r, best) = self.research(g, prover);
            return best.filter(|m| r == SolveResult::Win && moves.contains(m));
        }
        // The opponent chooses a refutation: find a child that DFPN disproves.
        for &m in &moves {
            g.play_unchecked(m);
            let ok = match g.outcome() {
                Some(o) => satisfies(o, prover, result),
                None => self.research(g, prover).0 == result,
            };
            g.undo();
            if ok {
                return Some(m);
            }
        }
        None
    }
}
