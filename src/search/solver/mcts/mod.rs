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
//! Threads ([`super::CommonOptions::threads`]) share one tree behind a mutex: a thread descends
//! under the lock adding a virtual loss to the path, marks the leaf as pending, evaluates it
//! (heuristic, knowledge) without the lock — so a batching network evaluator sees several
//! requests at once — and expands and backs up under the lock. Statuses are only ever
//! recomputed under the lock from the children, so concurrency cannot produce a wrong proof.
//! With one thread the search runs on the calling thread and is deterministic. Of two
//! phases (a game's narrowed second phase, [`SolverGame::mcts_narrowing`]), the first runs
//! on one thread.
//!
//! Final move: a proven win if any, else the most visited child. The node pool gets half of
//! the memory budget and the table the other half; the search stops when the pool is full.
//!
//! Rooms: `tree` (the node pool, selection and backup arithmetic, the per-solve `Setup`),
//! `worker` (one search thread's descent, expansion and backup), `phases` ([`MctsPhases`],
//! the knowledge staging and exploration per phase), `oracle` (proof trees from the tree,
//! with DFPN where it lacks a branch); this file holds the solver itself.

mod oracle;
mod phases;
mod tree;
mod worker;

use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use super::dfpn::{Dfpn, DfpnOracle};
use super::proof;
use super::tt::{self, LOSS, NO_MOVE, UNKNOWN, WIN};
use super::{
    CommonOptions, DfpnOptions, GhiMode, Heuristic, KnowledgeState, ProofTree, SolveEvent,
    SolveOutcome, SolveResult, SolveStats, Solver, SolverGame,
};
use crate::game::{Color, Move};
use crate::search::{Budget, Limits};

use self::oracle::*;
pub use self::phases::MctsPhases;
use self::phases::*;
use self::tree::*;
use self::worker::*;

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

/// The MCTS solver's own options. `Default` gives the PCN reference settings.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsOptions {
    /// PUCT constant (PCN: 1.5).
    pub c_puct: f32,
    /// The phases after the first search (Gomoku's narrowed phase).
    pub phases: MctsPhases,
    /// Gomoku with a proof-cost network: a prover's node gets children only for its
    /// highest-prior moves up to this share of the policy (at least [`NET_KEEP_MIN`]); the
    /// rest join when every kept move is lost. Without the narrowed phase every legal move
    /// would get a node, which fills the pool long before a timed search ends. 1: every
    /// legal move.
    pub net_keep: f32,
}

/// The fewest moves a prover's node keeps under [`MctsOptions::net_keep`].
pub const NET_KEEP_MIN: usize = 4;

impl Default for MctsOptions {
    fn default() -> Self {
        MctsOptions {
            c_puct: 1.5,
            phases: MctsPhases::default(),
            net_keep: 0.99,
        }
    }
}

/// The MCTS solver.
pub struct Mcts<G: SolverGame> {
    common: CommonOptions,
    opts: MctsOptions,
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
    /// The heuristic of the narrowed phase when it differs from `heuristic`
    /// ([`SolverGame::narrowed_heuristic`]); made at the first solve that needs it.
    narrow_heuristic: Option<Box<dyn Heuristic<G>>>,
}

// The pool's size per node (28 bytes): checked so that a new field does not shrink it.

impl<G: SolverGame> Mcts<G> {
    /// A solver with this heuristic.
    pub fn new(common: CommonOptions, opts: MctsOptions, heuristic: Box<dyn Heuristic<G>>) -> Self {
        let know = common.knowledge_state();
        let use_tt = !(G::HISTORY_SENSITIVE && common.ghi == GhiMode::Exact);
        Mcts {
            use_tt,
            tree: Mutex::new(Tree::new(common.tt_bytes())),
            common,
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
    /// ([`super::Knowledge::lambda_nodes`]).
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
        self.tree_mut().tt.ensure();
        let root_mover = game.to_move();
        self.root_mover_good = if root_mover == prover { WIN } else { LOSS };
        self.root_key = tt::key(game, prover);
        // Without threat searches no reply is ever proven early: nothing to count.
        let reply_value = G::QUICK_WINS
            && self.heuristic.cost_model().is_none()
            && (self.common.knowledge.vcf || self.common.knowledge.vct);
        let su = Setup {
            prover,
            root_mover,
            use_tt: self.use_tt,
            root_key: self.root_key,
            c_puct: c_puct_for(self.heuristic.learned(), reply_value, self.opts.c_puct),
            cost: self.heuristic.cost_model(),
            reply_value,
            narrow: false,
            root_pn: self.opts.phases.root_pn,
            // Gomoku only: there a network's tree has no narrowed phase and about 200 moves
            // a node, which outgrows the pool; Killall-Go keeps its expansion as it was.
            lean: G::QUICK_WINS && self.heuristic.cost_model().is_some(),
            keep: self.opts.net_keep.clamp(0.0, 1.0),
        };
        let phases = if G::mcts_narrowing(
            self.heuristic.learned(),
            reply_value,
            &self.common.knowledge,
        ) {
            2
        } else {
            1
        };
        if phases == 2 && self.narrow_heuristic.is_none() {
            // Only the game's own heuristic is replaced (a plugged-in one is kept).
            if let Some(h) = G::narrowed_heuristic(&self.common, &self.opts.phases) {
                if self.heuristic.name() == G::default_heuristic(&self.common).name() {
                    self.narrow_heuristic = Some(h);
                }
            }
        }
        // Forks for the extra threads (each from the previous one, so seeds differ), of the
        // heuristic of the phase that runs threaded (see below).
        let mut forks: Vec<Box<dyn Heuristic<G>>> = Vec::new();
        for _ in 1..self.common.threads.max(1) {
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
        log::debug!("mcts: {threads} search threads, seed {}", self.common.seed);
        let budget = Mutex::new(Budget::new(limits, stop));
        let root_mover_good = self.root_mover_good;
        let mut extra_know = 0u64;
        self.last_phases = 0;
        let first = if phases == 2 && self.opts.phases.narrow_only {
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
            let know_bytes = self.common.knowledge_bytes();
            let tree = &self.tree;
            let knowledge = G::mcts_knowledge(self.heuristic.learned(), &self.common.knowledge);
            self.know.opts = knowledge.clone();
            let mut w0 = Worker::new(
                match &mut self.narrow_heuristic {
                    Some(h) if phase == 1 => &mut **h,
                    _ => &mut *self.heuristic,
                },
                std::mem::replace(
                    &mut self.know,
                    KnowledgeState::with_table_bytes(knowledge.clone(), know_bytes),
                ),
                game.clone(),
            );
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
                        let know = KnowledgeState::with_table_bytes(knowledge, know_bytes);
                        let mut w = Worker::new(&mut **f, know, g);
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
        log::info!(
            "mcts pool: {sims} simulations, {} of {} nodes{}",
            t.nodes.len(),
            t.max_nodes,
            if t.full { " (full: stopped early)" } else { "" }
        );
        let stats = SolveStats {
            nodes: sims,
            seconds,
            nodes_per_second: sims as f64 / seconds.max(1e-9),
            tt_used: t.tt.used(),
            tt_capacity: t.tt.capacity(),
            tt_bytes: t.tt.bytes() + t.max_nodes * std::mem::size_of::<Node>(),
            knowledge_nodes: 0,
            jobs: None,
        };
        let value = t.root_value(&su);
        let stats = SolveStats {
            knowledge_nodes: self.know.nodes - know_before + extra_know,
            jobs: None,
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

    fn proof_tree_until(&mut self, stop: &AtomicBool) -> Option<ProofTree> {
        let (root, prover, result) = self.last.clone()?;
        // The search's own knowledge state: its threat-win table already holds most of the
        // proof's threat sequences.
        let know = &mut self.know;
        let dopts = self
            .common
            .with_memory((self.common.tt_bytes() / 4).max(1 << 20));
        // One re-search solver for all attempts: a retry reuses what the first one proved.
        let mut dfpn = Dfpn::new(dopts, DfpnOptions::default(), None);
        let use_tt = self.use_tt;
        let t = match self.tree.get_mut() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        let (search_nodes, max_nodes) =
            (self.common.proof_search_nodes, self.common.proof_max_nodes);
        proof::with_growing_budgets(search_nodes, max_nodes, stop, |research, build| {
            let mut oracle = MctsOracle {
                tt: use_tt.then_some(&t.tt),
                nodes: &t.nodes,
                root_ply: root.ply(),
                path: Vec::new(),
                fallback: DfpnOracle::new(&mut dfpn, research, stop),
            };
            proof::build(&root, prover, result, &mut oracle, know, build)
        })
    }

    fn clear(&mut self) {
        let t = self.tree_mut();
        t.tt.clear();
        t.nodes = Vec::new();
        self.know.clear();
        self.last = None;
    }

    fn set_memory(&mut self, bytes: usize) {
        self.common.memory_bytes = bytes;
        let b = self.common.tt_bytes();
        *self.tree_mut() = Tree::new(b);
        self.know = self.common.knowledge_state();
        self.last = None;
    }

    fn set_threads(&mut self, threads: usize) {
        self.common.threads = threads.max(1);
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
        // Static heuristics are not `learned` (checked in the games' heuristic tests; the
        // network's in tests/nn_solver.rs).
        assert_eq!(c_puct_for(false, true, 1.5), 0.75);
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
            lean: false,
            keep: 1.0,
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
    fn reclaim_drops_solved_subtrees_and_once_visited_leaves_only() {
        // Root (visited) with three children: 1 solved with two children, 2 unsolved whose
        // two children are unvisited, 3 unsolved with a visited child (4 grandchildren in
        // all below 3: the visited one with one child of its own).
        let mut t = Tree::new(1 << 20);
        t.nodes.clear();
        let mut root = Node::new(NO_MOVE, 1.0);
        (root.expanded, root.first, root.count, root.visits) = (true, 1, 3, 9);
        t.nodes.push(root);
        for (mv, first, status, visits) in [(1, 4, WIN, 3), (2, 6, UNKNOWN, 1), (3, 8, UNKNOWN, 5)]
        {
            let mut c = Node::new(mv, 0.3);
            (c.expanded, c.first, c.count, c.status, c.visits) = (true, first, 2, status, visits);
            c.wins = visits as f32;
            t.nodes.push(c);
        }
        for (mv, visits) in [(10, 2), (11, 0), (20, 0), (21, 0), (30, 4), (31, 0)] {
            let mut c = Node::new(mv, 0.5);
            c.visits = visits;
            t.nodes.push(c);
        }
        // Node 8 (move 30) was expanded and its one child visited twice: that path stays.
        (t.nodes[8].expanded, t.nodes[8].first, t.nodes[8].count) = (true, 10, 1);
        let mut leaf = Node::new(40, 1.0);
        leaf.visits = 2;
        t.nodes.push(leaf);
        t.reclaim();
        let moves: Vec<Move> = t.nodes.iter().map(|n| n.mv).collect();
        assert_eq!(moves, vec![NO_MOVE, 1, 2, 3, 30, 31, 40]);
        // The solved node and the once-visited one are leaves now, with their statistics.
        for i in [1, 2] {
            assert!(!t.nodes[i].expanded && t.nodes[i].count == 0);
        }
        assert_eq!((t.nodes[1].status, t.nodes[1].visits), (WIN, 3));
        assert_eq!((t.nodes[2].status, t.nodes[2].wins), (UNKNOWN, 1.0));
        // The visited path keeps its children, at their new places.
        assert_eq!(t.nodes[3].kids(), 4..6);
        assert_eq!(t.nodes[4].kids(), 6..7);
        assert_eq!(t.nodes[0].kids(), 1..4);
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
}
