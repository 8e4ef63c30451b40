//! Depth-first proof-number search (DFPN) and focused DFPN (FDFPN).
//!
//! AND/OR formulation for a fixed prover: at OR nodes (prover to move) `pn = min pn(child)`,
//! `dn = Σ dn(child)`; at AND nodes `pn = Σ pn(child)`, `dn = min dn(child)`. MID with
//! thresholds (Nagai), the 1+ε trick (Pawlewicz & Lew) for the child's threshold, and a
//! transposition table with a fixed memory budget ([`super::tt`]) storing pn/dn, solved
//! results, effort and the best move. Children are regenerated on every visit and their
//! numbers read back from the table (the paper's memory mode).
//!
//! Leaf initialisation: with mobility (default for `dfpn`), an unseen OR child gets
//! `(1, legal moves)` and an AND child `(legal moves, 1)`; with a heuristic that gives proof
//! costs (PCN), the paper's §3.4 rule (OR node: child `(P, D/k)`, AND node: `(P/k, D)`);
//! otherwise `(1, 1)`.
//!
//! Focused DFPN orders the children by the heuristic's priors and lets only the first
//! `focus_base + ceil(focus_ratio · unsolved)` unsolved children count; the window widens as
//! children are solved. Solved status is always exact (a node is disproven only when every
//! child is), so the focus never makes a result unsound.
//!
//! Graph-history interaction: keys are [`SolverGame::solver_key`] (Killall-Go: the paper's
//! key with the points made illegal by superko); [`Solver::proof_tree`] replays the real game,
//! so an unsound reuse shows up as a failed proof build rather than a wrong tree.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::proof::{self, satisfies, ProofOracle, ResearchBudget};
use super::tt::{self, Tt, INF, NO_MOVE};
use super::{
    Evaluation, GhiMode, Heuristic, KnowledgeState, NetMode, ProofTree, SolveEvent, SolveOutcome,
    SolveResult, SolveStats, Solver, SolverError, SolverGame,
};
use crate::game::{Color, Move};
use crate::search::solver::CommonOptions;
use crate::search::{Budget, Limits};

/// DFPN's and focused DFPN's own options. `Default` gives the PCN reference settings.
#[derive(Clone, Debug, PartialEq)]
pub struct DfpnOptions {
    /// The 1+ε trick (PCN: 0.25).
    pub epsilon: f64,
    /// Focused DFPN window: `focus_base + ceil(focus_ratio · unsolved children)`.
    pub focus_base: usize,
    /// See `focus_base` (PCN: 0.1).
    pub focus_ratio: f64,
    /// DFPN without a window: initialise pn/dn from the number of legal moves (mobility).
    pub mobility: bool,
    /// How focused DFPN uses a network in games with their own move order
    /// ([`SolverGame::ORDER_HINTS`], Killall-Go); other games always use the paper's rule.
    pub net_mode: NetMode,
    /// [`NetMode::Hybrid`]: nodes fewer than this many plies below the root consult the
    /// network (0: none does).
    pub net_depth: usize,
    /// [`NetMode::Hybrid`]: weight of the network's log-prior in the ordering key, against
    /// the static score's weight of 1 (1: the two count alike; 0: the static order alone).
    pub net_weight: f32,
    /// Focused DFPN with a network outside [`NetMode::Hybrid`]: when a node is expanded,
    /// evaluate all its children in one batch (they are then in the heuristic's cache
    /// when expanded). Pays off where a batch costs about what one position does (a GPU);
    /// off by default.
    pub net_children_batch: bool,
}

impl Default for DfpnOptions {
    fn default() -> Self {
        DfpnOptions {
            epsilon: 0.25,
            focus_base: 1,
            focus_ratio: 0.1,
            mobility: true,
            net_mode: NetMode::default(),
            net_depth: 4,
            net_weight: 1.0,
            net_children_batch: false,
        }
    }
}

impl DfpnOptions {
    /// Checks the ranges.
    pub fn check(&self) -> Result<(), SolverError> {
        if !(self.epsilon >= 0.0 && self.epsilon <= 10.0) {
            return Err(SolverError::BadOption(format!("epsilon {}", self.epsilon)));
        }
        if !(self.focus_ratio >= 0.0 && self.focus_ratio <= 1.0) {
            return Err(SolverError::BadOption(format!(
                "focus ratio {}",
                self.focus_ratio
            )));
        }
        if !(self.net_weight >= 0.0 && self.net_weight <= 10.0) {
            return Err(SolverError::BadOption(format!(
                "net weight {}",
                self.net_weight
            )));
        }
        Ok(())
    }
}

/// Weight of the history heuristic: ordering points per doubling of a move's solve count.
const HISTORY_WEIGHT: f32 = 8.0;
/// Ordering-key points per factor e of the initial number ([`SolverGame::ORDER_HINTS`]).
const INIT_SCALE: f32 = 30.0;
/// Largest factor of the ordering-based initialisation.
const INIT_MAX: f32 = 40.0;
/// Scale of heuristic proof costs (log10 units) into integer proof numbers.
const COST_SCALE: f32 = 16.0;
/// Steering (shared job-level mode): each other worker in a child adds this many halves of
/// the child's selection number when this worker chooses (3: the number counts two and a
/// half times with one other worker there). Chosen on our own self-play positions; the
/// measurements are in the job-level notebook.
const STEER_HALVES: u64 = 3;

#[derive(Copy, Clone, Debug)]
struct Child {
    mv: Move,
    pn: u64,
    dn: u64,
    prior: f32,
    /// Numbers come from the initialisation rule (not the table, not a terminal).
    fresh: bool,
}

/// DFPN (`heuristic == None`) or focused DFPN.
pub struct Dfpn<G: SolverGame> {
    common: CommonOptions,
    opts: DfpnOptions,
    heuristic: Option<Box<dyn Heuristic<G>>>,
    know: KnowledgeState,
    tt: Tt,
    bufs: Vec<Vec<Child>>,
    moves: Vec<Move>,
    eval: Vec<Evaluation>,
    last: Option<(G, Color, SolveResult)>,
    /// Keys include the history ([`GhiMode::Exact`] on a history-sensitive game).
    exact: bool,
    /// History hash of the node being searched (exact mode).
    hist: u64,
    /// Count knowledge-search nodes against the node budget (proof re-searches).
    know_in_budget: bool,
    /// History heuristic ([`SolverGame::ORDER_HINTS`]): per colour and action, how often
    /// that move solved a node for the side to move (proof at OR, disproof at AND nodes).
    history: Vec<u32>,
    /// Scratch for [`SolverGame::order_scores`].
    scores: Vec<i32>,
    /// Scratch: (child index, table key) of the non-terminal children being generated.
    keys: Vec<(u32, u64)>,
    /// Scratch: (move, ordering key) of the node being generated, best first.
    order: Vec<(Move, f32)>,
    /// [`SolverGame::ORDER_HINTS`] apply: the game asks for them and the heuristic, if
    /// any, is the game's own no-network one or a network in [`NetMode::Hybrid`] (a
    /// network in [`NetMode::Paper`] keeps the paper's rules).
    hints: bool,
    /// A network in [`NetMode::Hybrid`]: it only orders the moves of nodes within
    /// [`DfpnOptions::net_depth`] plies of the root; the static rules do the rest.
    hybrid: bool,
    /// Scratch for [`DfpnOptions::net_children_batch`]: the children being evaluated
    /// together, and their evaluations.
    kids: Vec<G>,
    kid_eval: Vec<Evaluation>,
    /// Plies between the problem's root and the position solved ([`Solver::set_root_depth`]).
    root_depth: usize,
    /// The root's thresholds ([`Solver::set_thresholds`]).
    thresholds: (u64, u64),
    /// Steering in this search: a member of a table group solving the problem from its
    /// root publishes its path and steers away from the other members' (see [`tt::Paths`]).
    steer: bool,
    /// The moves from the root to the node being searched (steering, first plies only).
    path: Vec<Move>,
    /// Scratch: the children the other members are in.
    busy: Vec<Move>,
}

struct Ctx<'a, 'b> {
    budget: &'a mut Budget<'b>,
    prover: Color,
    on_event: &'a mut dyn FnMut(&SolveEvent),
    last_report: Instant,
    root_key: u64,
}

impl<G: SolverGame> Dfpn<G> {
    /// A solver; with a heuristic it is focused DFPN.
    pub fn new(
        common: CommonOptions,
        opts: DfpnOptions,
        heuristic: Option<Box<dyn Heuristic<G>>>,
    ) -> Self {
        let know = common.knowledge_state();
        let tt = Tt::lazy_in(common.tt_bytes(), common.table_group.clone());
        let own_heuristic = heuristic
            .as_ref()
            .is_none_or(|h| h.name() == G::default_heuristic(&common).name());
        let network = heuristic
            .as_ref()
            .is_some_and(|h| h.has_cost() || h.value_window());
        // Only networks are slow; the game's own heuristic keeps the exact paper-free path.
        let hybrid = G::ORDER_HINTS && network && opts.net_mode == NetMode::Hybrid;
        let exact = G::HISTORY_SENSITIVE && common.ghi == GhiMode::Exact;
        Dfpn {
            common,
            opts,
            heuristic,
            know,
            tt,
            bufs: Vec::new(),
            moves: Vec::with_capacity(512),
            eval: vec![Evaluation::default()],
            last: None,
            exact,
            hist: 0,
            know_in_budget: false,
            history: Vec::new(),
            scores: Vec::new(),
            keys: Vec::new(),
            order: Vec::new(),
            hints: G::ORDER_HINTS && (own_heuristic || hybrid),
            hybrid,
            kids: Vec::new(),
            kid_eval: Vec::new(),
            root_depth: 0,
            thresholds: (INF, INF),
            steer: false,
            path: Vec::new(),
            busy: Vec::new(),
        }
    }

    /// The table key of `g` for `prover`, where `hist` is the history hash of `g`.
    #[inline]
    fn key(&self, g: &G, prover: Color, hist: u64) -> u64 {
        if self.exact {
            tt::history_key(g, prover, hist)
        } else {
            tt::key(g, prover)
        }
    }

    /// The history hash of the position after a move was played at a node with `hist`.
    #[inline]
    fn child_hist(&self, g: &G, hist: u64) -> u64 {
        if self.exact {
            hist ^ g.history_mark()
        } else {
            0
        }
    }

    /// Focus window size for `unsolved` children with window ratio `ratio`.
    #[inline]
    fn window(&self, unsolved: usize, ratio: f64) -> usize {
        if self.heuristic.is_none() || (self.hints && !G::FOCUS_WINDOW) {
            return unsolved;
        }
        let w = self.opts.focus_base + (ratio * unsolved as f64).ceil() as usize;
        w.min(unsolved)
    }

    /// Fills `buf` with the children of `g` (not terminal) and their current numbers;
    /// returns the node's focus-window ratio (`focus_ratio`, or for heuristics with
    /// [`Heuristic::value_window`] (α0 networks) `min(focus_ratio, 1 + value)`).
    /// `use_net`: consult the heuristic (always true outside [`NetMode::Hybrid`]).
    fn generate(&mut self, g: &mut G, prover: Color, buf: &mut Vec<Child>, use_net: bool) -> f64 {
        buf.clear();
        let mut moves = std::mem::take(&mut self.moves);
        g.legal_moves(&mut moves);
        let or = g.to_move() == prover;
        // Priors and costs from the heuristic (focused DFPN).
        let mut cost_init: Option<(u64, u64)> = None;
        let mut have_priors = false;
        let mut ratio = self.opts.focus_ratio;
        let hybrid = self.hybrid;
        if let Some(h) = self.heuristic.as_mut().filter(|_| use_net) {
            let e = &mut self.eval[..1];
            have_priors = true;
            if hybrid {
                // Priors only: the initial numbers stay on the static rules' scale, so
                // nodes with and without the network compare fairly.
                h.priors_batch(&[&*g], e);
            } else {
                if h.has_cost() {
                    h.evaluate_batch(&[&*g], e);
                } else {
                    h.priors_batch(&[&*g], e);
                }
                if self.opts.net_children_batch {
                    // Every non-terminal child in one batch: the results stay in the
                    // heuristic's cache, so expanding a child later runs no network. On a
                    // GPU a node's children cost about what one position does.
                    let mut kids = std::mem::take(&mut self.kids);
                    kids.clear();
                    for &m in moves.iter() {
                        let mut c = g.clone();
                        c.play_unchecked(m);
                        if c.outcome().is_none() {
                            kids.push(c);
                        }
                    }
                    if !kids.is_empty() {
                        let refs: Vec<&G> = kids.iter().collect();
                        if self.kid_eval.len() < refs.len() {
                            self.kid_eval.resize(refs.len(), Evaluation::default());
                        }
                        let ke = &mut self.kid_eval[..refs.len()];
                        if h.has_cost() {
                            h.evaluate_batch(&refs, ke);
                        } else {
                            h.priors_batch(&refs, ke);
                        }
                    }
                    self.kids = kids;
                }
                if h.value_window() {
                    let v = e[0].value.clamp(-1.0, 1.0) as f64;
                    ratio = ratio.min(1.0 + v).max(0.0);
                }
                if let Some(c) = e[0].cost {
                    let k = moves.len().max(1) as f32;
                    let p = (c[prover.index()] * COST_SCALE).max(1.0);
                    let d = (c[prover.opp().index()] * COST_SCALE).max(1.0);
                    let (pn, dn) = if or { (p, d / k) } else { (p / k, d) };
                    cost_init = Some((pn.max(1.0) as u64, dn.max(1.0) as u64));
                }
            }
        }
        let mobility = self.opts.mobility && cost_init.is_none();
        let hints = self.hints;
        // Hybrid: the network's prior multiplies the static one (their logs add: the static
        // scores also count 20 points per factor e), so captures and atari saves keep their
        // weight where the network is unsure.
        let blend = self.hybrid;
        let net_weight = self.opts.net_weight;
        if hints {
            if !have_priors || blend {
                g.order_scores(&moves, &mut self.scores);
            }
            let n = g.num_actions();
            if self.history.len() != 2 * n {
                self.history.clear();
                self.history.resize(2 * n, 0);
            }
        }
        let hist_base = g.to_move().index() * g.num_actions();
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for (i, &m) in moves.iter().enumerate() {
            let mut prior = if have_priors {
                self.eval[0].policy.get(m as usize).copied().unwrap_or(0.0)
            } else {
                0.0
            };
            if hints {
                // One ordering key on the static score's scale: the heuristic's prior (20
                // points per factor e) or the static score, plus the history bonus.
                let base = if have_priors && blend {
                    net_weight * 20.0 * prior.max(1e-9).ln()
                        + self.scores.get(i).copied().unwrap_or(0) as f32
                } else if have_priors {
                    20.0 * prior.max(1e-9).ln()
                } else {
                    self.scores.get(i).copied().unwrap_or(0) as f32
                };
                let h = self
                    .history
                    .get(hist_base + m as usize)
                    .copied()
                    .unwrap_or(0);
                prior = base + HISTORY_WEIGHT * (1.0 + h as f32).log2();
            }
            order.push((m, prior));
        }
        if have_priors || hints {
            order.sort_unstable_by(|a, b| {
                b.1.partial_cmp(&a.1)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.0.cmp(&b.0))
            });
        }
        for &(m, prior) in &order {
            g.play_unchecked(m);
            let mut fresh = false;
            let (pn, dn) = if let Some(o) = g.outcome() {
                if satisfies(o, prover, SolveResult::Win) {
                    (0, INF)
                } else {
                    (INF, 0)
                }
            } else if let Some(e) = (G::QUICK_WINS && !or)
                .then(|| {
                    self.tt
                        .get(self.key(g, prover, self.child_hist(g, self.hist)))
                })
                .flatten()
            {
                // Games with quick wins probe the opponent's children at once, so that a
                // reply already proven below is not re-proven by `quick_win` on every visit.
                (e.pn(), e.dn())
            } else if let Some(w) = (G::QUICK_WINS && !or)
                .then(|| g.quick_win(&mut self.know))
                .flatten()
            {
                // A reply that ignores the prover's threat: proven without a visit.
                let k = self.key(g, prover, self.child_hist(g, self.hist));
                self.tt.put(k, 0, INF, 1, w);
                (0, INF)
            } else {
                if !G::QUICK_WINS || or {
                    self.keys.push((
                        buf.len() as u32,
                        self.key(g, prover, self.child_hist(g, self.hist)),
                    ));
                }
                fresh = true;
                if let Some(init) = cost_init {
                    init
                } else if mobility {
                    let n = (g.mobility() as u64).max(1);
                    if g.to_move() == prover {
                        (1, n)
                    } else {
                        (n, 1)
                    }
                } else {
                    (1, 1)
                }
            };
            g.undo();
            buf.push(Child {
                mv: m,
                pn,
                dn,
                prior,
                fresh,
            });
            // A child that decides the node (a prover win at an OR node, a prover loss at an
            // AND node) ends the generation: the node is solved, the rest would be wasted
            // plays (with good ordering the killer move comes first).
            if hints && ((or && pn == 0) || (!or && dn == 0)) {
                break;
            }
        }
        self.order = order;
        // Table lookups in a second pass: the probes are independent of each other, so
        // their cache misses overlap instead of each one stalling a play/undo.
        for &(i, key) in &self.keys {
            if let Some(e) = self.tt.get(key) {
                if let Some(c) = buf.get_mut(i as usize) {
                    c.pn = e.pn();
                    c.dn = e.dn();
                    c.fresh = false;
                }
            }
        }
        self.keys.clear();
        self.moves = moves;
        if hints {
            // Soft focus: a fresh child looks the more expensive the further its ordering key
            // lies below the best one (the side to move's number grows: pn at OR nodes, dn at
            // AND nodes), so DFPN does not spread its effort evenly over every move.
            let top = buf.first().map_or(0.0, |c| c.prior);
            for c in buf.iter_mut().filter(|c| c.fresh) {
                let f = ((top - c.prior) / INIT_SCALE).exp().min(INIT_MAX);
                if or {
                    c.pn = ((c.pn as f32 * f) as u64).max(1);
                } else {
                    c.dn = ((c.dn as f32 * f) as u64).max(1);
                }
            }
        }
        ratio
    }

    /// The group's paths and this solver's member index, while it steers.
    #[inline]
    fn steering(&self) -> Option<(&tt::Paths, usize)> {
        let group = self.common.table_group.as_ref().filter(|_| self.steer)?;
        Some((group.paths(), self.common.group_member))
    }

    /// The node's numbers from its children (window applied), plus the selected child and
    /// the second-best number among the window.
    ///
    /// `busy` holds the children other workers are in (one entry per worker): each one adds
    /// [`STEER_HALVES`] halves of a child's selection number for the choice of the child and
    /// of the second best (virtual proof numbers); the node's own numbers stay the real ones.
    fn combine(
        &self,
        buf: &[Child],
        or: bool,
        ratio: f64,
        busy: &[Move],
    ) -> (u64, u64, usize, u64) {
        let unsolved = buf.iter().filter(|c| c.pn != 0 && c.dn != 0).count();
        // A solved child decides at once where it can.
        if or {
            if let Some(i) = buf.iter().position(|c| c.pn == 0) {
                return (0, INF, i, INF);
            }
        } else if let Some(i) = buf.iter().position(|c| c.dn == 0) {
            return (INF, 0, i, INF);
        }
        if unsolved == 0 {
            return if or {
                (INF, 0, 0, INF)
            } else {
                (0, INF, 0, INF)
            };
        }
        let w = self.window(unsolved, ratio);
        let mut best = usize::MAX;
        let mut best_v = INF + 1;
        let mut second = INF;
        let mut sum: u64 = 0;
        let mut real = INF + 1;
        let mut seen = 0;
        for (i, c) in buf.iter().enumerate() {
            if c.pn == 0 || c.dn == 0 {
                continue;
            }
            if seen == w {
                break;
            }
            seen += 1;
            let (sel, add) = if or { (c.pn, c.dn) } else { (c.dn, c.pn) };
            sum = (sum + add).min(INF - 1);
            real = real.min(sel);
            let others = busy.iter().filter(|&&m| m == c.mv).count() as u64;
            let sel = if others > 0 && sel < INF {
                // sel · (1 + (STEER_HALVES / 2) · others), rounded up.
                sel.saturating_mul(2 + STEER_HALVES * others)
                    .div_ceil(2)
                    .min(INF - 1)
            } else {
                sel
            };
            if sel < best_v {
                second = best_v.min(INF);
                best_v = sel;
                best = i;
            } else if sel < second {
                second = sel;
            }
        }
        if or {
            (real, sum, best, second)
        } else {
            (sum, real, best, second)
        }
    }

    fn mid(&mut self, g: &mut G, tp: u64, td: u64, depth: usize, ctx: &mut Ctx) -> (u64, u64) {
        ctx.budget.nodes += 1;
        let prover = ctx.prover;
        if let Some(o) = g.outcome() {
            return if satisfies(o, prover, SolveResult::Win) {
                (0, INF)
            } else {
                (INF, 0)
            };
        }
        let start_nodes = ctx.budget.nodes;
        let key = self.key(g, prover, self.hist);
        let or = g.to_move() == prover;
        let seen = self.tt.get(key).is_some();
        // Hybrid: the top plies are few and decide where everything below is spent.
        let use_net = !self.hybrid || depth + self.root_depth < self.opts.net_depth;
        if or && !seen {
            let before = self.know.nodes;
            let win = g.knowledge_win(&mut self.know);
            if self.know_in_budget {
                ctx.budget.nodes += self.know.nodes - before;
            }
            if let Some(m) = win {
                self.tt.put(key, 0, INF, 1, m);
                return (0, INF);
            }
        }
        if self.bufs.len() <= depth {
            self.bufs.resize_with(depth + 1, || Vec::with_capacity(64));
        }
        let mut buf = std::mem::take(&mut self.bufs[depth]);
        let ratio = self.generate(g, prover, &mut buf, use_net);
        let (mut pn, mut dn);
        let mut best;
        loop {
            let steer = self.steer && depth < tt::STEER_PLIES;
            // (Fields, not `steering()`: `busy` is borrowed mutably beside the group.)
            if let Some(group) = self.common.table_group.as_ref().filter(|_| steer) {
                let path = &self.path[..depth.min(self.path.len())];
                group
                    .paths()
                    .others_at(self.common.group_member, path, &mut self.busy);
            }
            let busy = if steer { &self.busy[..] } else { &[] };
            let (p, d, b, second) = self.combine(&buf, or, ratio, busy);
            pn = p;
            dn = d;
            best = b;
            if pn == 0 || dn == 0 || pn >= tp || dn >= td || ctx.budget.exhausted() {
                break;
            }
            if ctx.budget.nodes & 0x3fff == 0 {
                self.report(ctx);
            }
            let c = buf[best];
            let eps = self.opts.epsilon;
            let grow = |x: u64| -> u64 {
                if x >= INF {
                    INF
                } else {
                    ((x as f64 * (1.0 + eps)).ceil() as u64).max(x + 1)
                }
            };
            let (ctp, ctd) = if or {
                let ctp = tp.min(grow(second));
                let ctd = if td >= INF { INF } else { td - dn + c.dn };
                (ctp, ctd)
            } else {
                let ctd = td.min(grow(second));
                let ctp = if tp >= INF { INF } else { tp - pn + c.pn };
                (ctp, ctd)
            };
            if let Some((paths, m)) = self.steering().filter(|_| steer) {
                paths.enter(m, depth, c.mv);
                self.path.truncate(depth);
                self.path.push(c.mv);
            }
            g.play_unchecked(c.mv);
            let saved = self.hist;
            self.hist = self.child_hist(g, saved);
            let (cp, cd) = self.mid(g, ctp, ctd, depth + 1, ctx);
            self.hist = saved;
            g.undo();
            if let Some((paths, m)) = self.steering().filter(|_| steer) {
                paths.leave(m, depth);
            }
            buf[best].pn = cp;
            buf[best].dn = cd;
        }
        let best_mv = buf.get(best).map_or(NO_MOVE, |c| c.mv);
        if self.hints && best_mv != NO_MOVE && ((or && pn == 0) || (!or && dn == 0)) {
            let i = g.to_move().index() * g.num_actions() + best_mv as usize;
            if let Some(h) = self.history.get_mut(i) {
                *h = h.saturating_add(1);
            }
        }
        let effort = ctx.budget.nodes - start_nodes + 1;
        self.tt.put(key, pn, dn, effort, best_mv);
        self.bufs[depth] = buf;
        (pn, dn)
    }

    fn report(&mut self, ctx: &mut Ctx) {
        if ctx.last_report.elapsed().as_millis() < 500 {
            return;
        }
        ctx.last_report = Instant::now();
        let e = self.tt.get(ctx.root_key);
        (ctx.on_event)(&SolveEvent::Progress {
            nodes: ctx.budget.nodes,
            elapsed: ctx.budget.elapsed(),
            best: e.and_then(|e| (e.best != NO_MOVE).then_some(e.best)),
            pn_dn: e.map(|e| (e.pn(), e.dn())),
            value: None,
            tt_used: self.tt.used(),
        });
    }

    /// The root move to report: the solving move, or the hardest refutation, or the most
    /// promising child.
    fn root_move(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let or = g.to_move() == prover;
        // The solving move is stored with the root (it may come from knowledge, e.g. VCF).
        let decided = matches!(
            (or, result),
            (true, SolveResult::Win) | (false, SolveResult::Loss)
        );
        // Unsolved: the child the search was about to enter is the best so far (children it
        // never entered would otherwise tie at (1, 1) with the most promising one).
        if decided || (result == SolveResult::Unknown && self.hints) {
            if let Some(e) = self.tt.get(self.key(g, prover, self.hist)) {
                if moves.contains(&e.best) {
                    return Some(e.best);
                }
            }
        }
        let mut best: Option<(Move, (u8, u64))> = None;
        for &m in &moves {
            g.play_unchecked(m);
            let (pn, dn, effort) = match g.outcome() {
                Some(o) if satisfies(o, prover, SolveResult::Win) => (0, INF, u64::MAX),
                Some(_) => (INF, 0, u64::MAX),
                None => self
                    .tt
                    .get(self.key(g, prover, self.child_hist(g, self.hist)))
                    .map_or((1, 1, 0), |e| (e.pn(), e.dn(), e.effort as u64)),
            };
            g.undo();
            // Score (class, tiebreak): larger is better for the side to move.
            let score = match (or, result) {
                (true, SolveResult::Win) => ((pn == 0) as u8, u64::MAX - effort.min(u64::MAX - 1)),
                (false, SolveResult::Loss) => {
                    ((dn == 0) as u8, u64::MAX - effort.min(u64::MAX - 1))
                }
                // Lost for the side to move: the hardest refutation.
                (_, SolveResult::Win) | (_, SolveResult::Loss) => (1, effort),
                (true, SolveResult::Unknown) => ((dn != 0) as u8, INF - pn.min(INF)),
                (false, SolveResult::Unknown) => ((pn != 0) as u8, INF - dn.min(INF)),
            };
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((m, score));
            }
        }
        best.map(|(m, _)| m)
    }
}

impl<G: SolverGame> Solver<G> for Dfpn<G> {
    fn name(&self) -> &'static str {
        if self.heuristic.is_some() {
            super::SolverKind::Fdfpn.name()
        } else {
            super::SolverKind::Dfpn.name()
        }
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
        self.tt.ensure();
        self.history.fill(0);
        let mut g = game.clone();
        self.hist = if self.exact { g.history_root() } else { 0 };
        let root_key = self.key(&g, prover, self.hist);
        let mut budget = Budget::new(limits, stop);
        let mut ctx = Ctx {
            budget: &mut budget,
            prover,
            on_event,
            last_report: Instant::now(),
            root_key,
        };
        let (mut pn, mut dn) = (1, 1);
        let (tp, td) = self.thresholds;
        // Steering compares paths from the problem's root: only a search rooted there.
        self.steer = self.common.table_group.is_some() && self.root_depth == 0;
        self.path.clear();
        if let Some((paths, m)) = self.steering() {
            paths.leave(m, 0);
        }
        while pn != 0 && dn != 0 && pn < tp && dn < td && !ctx.budget.exhausted() {
            (pn, dn) = self.mid(&mut g, tp, td, 0, &mut ctx);
        }
        if let Some((paths, m)) = self.steering() {
            paths.leave(m, 0);
        }
        self.steer = false;
        let result = if pn == 0 {
            SolveResult::Win
        } else if dn == 0 {
            SolveResult::Loss
        } else {
            SolveResult::Unknown
        };
        let best = self.root_move(&mut g, prover, result);
        let seconds = ctx.budget.elapsed().as_secs_f64();
        let nodes = ctx.budget.nodes;
        let stats = SolveStats {
            nodes,
            seconds,
            nodes_per_second: nodes as f64 / seconds.max(1e-9),
            tt_used: self.tt.used(),
            tt_capacity: self.tt.capacity(),
            tt_bytes: self.tt.bytes(),
            knowledge_nodes: self.know.nodes - know_before,
            jobs: None,
        };
        (ctx.on_event)(&SolveEvent::Progress {
            nodes,
            elapsed: ctx.budget.elapsed(),
            best,
            pn_dn: Some((pn, dn)),
            value: None,
            tt_used: stats.tt_used,
        });
        if result != SolveResult::Unknown {
            (ctx.on_event)(&SolveEvent::Solved { result, best });
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
        let mut know = self.common.knowledge_state();
        let (search_nodes, max_nodes) =
            (self.common.proof_search_nodes, self.common.proof_max_nodes);
        proof::with_growing_budgets(search_nodes, max_nodes, stop, |research, build| {
            let mut oracle = DfpnOracle::new(self, research, stop);
            proof::build(&root, prover, result, &mut oracle, &mut know, build)
        })
    }

    fn set_root_depth(&mut self, plies: usize) {
        self.root_depth = plies;
    }

    fn learn(&mut self, game: &G, prover: Color, result: SolveResult) {
        let (pn, dn) = match result {
            SolveResult::Win => (0, INF),
            SolveResult::Loss => (INF, 0),
            SolveResult::Unknown => return,
        };
        self.tt.ensure();
        let hist = if self.exact { game.history_root() } else { 0 };
        let key = self.key(game, prover, hist);
        self.tt.put(key, pn, dn, 1, NO_MOVE);
    }

    fn shares_table(&self) -> bool {
        self.tt.shared()
    }

    fn set_thresholds(&mut self, t: Option<(u64, u64)>) {
        self.thresholds = t.map_or((INF, INF), |(p, d)| (p.clamp(2, INF), d.clamp(2, INF)));
    }

    fn child_numbers(&mut self, game: &G, prover: Color) -> Option<Vec<(Move, u64, u64)>> {
        self.tt.ensure();
        let mut g = game.clone();
        let hist = if self.exact { g.history_root() } else { 0 };
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let mut out = Vec::new();
        for m in moves {
            g.play_unchecked(m);
            if g.outcome().is_none() {
                let k = self.key(&g, prover, self.child_hist(&g, hist));
                if let Some(e) = self.tt.get(k) {
                    out.push((m, e.pn(), e.dn()));
                }
            }
            g.undo();
        }
        Some(out)
    }

    fn clear(&mut self) {
        self.tt.clear();
        self.history.clear();
        self.know.clear();
        self.last = None;
    }

    fn set_memory(&mut self, bytes: usize) {
        self.common.memory_bytes = bytes;
        self.tt = Tt::lazy_in(self.common.tt_bytes(), self.common.table_group.clone());
        self.know = self.common.knowledge_state();
        self.last = None;
    }
}

/// The DFPN side of a proof build: the table's proven children, re-searching when the table
/// has lost them, within one node budget for the whole build.
pub(crate) struct DfpnOracle<'a, 'b, G: SolverGame> {
    dfpn: &'a mut Dfpn<G>,
    budget: Budget<'b>,
    /// The most one re-search may take of `budget`.
    per_search: u64,
}

impl<'a, 'b, G: SolverGame> DfpnOracle<'a, 'b, G> {
    /// An oracle over `dfpn`'s table with one node budget for all its re-searches
    /// (`research.total`, the stop flag's), each re-search taking at most
    /// `research.per_search` of it.
    pub(crate) fn new(
        dfpn: &'a mut Dfpn<G>,
        research: ResearchBudget,
        stop: &'b AtomicBool,
    ) -> Self {
        dfpn.tt.ensure();
        DfpnOracle {
            dfpn,
            budget: Budget::new(&Limits::nodes(research.total), stop),
            per_search: research.per_search,
        }
    }

    fn find(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        let hist = self.dfpn.hist;
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        // The node's own entry may carry the move (e.g. found by knowledge).
        let own = self.dfpn.tt.get(self.dfpn.key(g, prover, hist));
        if let Some(e) = own {
            let solved = if result == SolveResult::Win {
                e.proven()
            } else {
                e.disproven()
            };
            if solved && moves.contains(&e.best) {
                return Some(e.best);
            }
        }
        let mut found = None;
        for &m in &moves {
            g.play_unchecked(m);
            let ok = match g.outcome() {
                Some(o) => satisfies(o, prover, result),
                None => {
                    let key = self.dfpn.key(g, prover, self.dfpn.child_hist(g, hist));
                    self.dfpn.tt.get(key).is_some_and(|e| {
                        if result == SolveResult::Win {
                            e.proven()
                        } else {
                            e.disproven()
                        }
                    })
                }
            };
            g.undo();
            if ok {
                found = Some(m);
                break;
            }
        }
        found
    }
}

impl<G: SolverGame> ProofOracle<G> for DfpnOracle<'_, '_, G> {
    fn lookup(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        self.dfpn.hist = if self.dfpn.exact { g.history_root() } else { 0 };
        self.find(g, prover, result)
    }

    fn choose(&mut self, g: &mut G, prover: Color, result: SolveResult) -> Option<Move> {
        self.dfpn.hist = if self.dfpn.exact { g.history_root() } else { 0 };
        if let Some(m) = self.find(g, prover, result) {
            return Some(m);
        }
        // Re-search this node; its children's numbers land in the table.
        let mut sink = |_: &SolveEvent| {};
        let mut budget = self.budget.sub(self.per_search);
        let mut ctx = Ctx {
            budget: &mut budget,
            prover,
            on_event: &mut sink,
            last_report: Instant::now(),
            root_key: self.dfpn.key(g, prover, self.dfpn.hist),
        };
        let (mut pn, mut dn) = (1, 1);
        self.dfpn.know_in_budget = true;
        while pn != 0 && dn != 0 && !ctx.budget.exhausted() {
            (pn, dn) = self.dfpn.mid(g, INF, INF, 0, &mut ctx);
        }
        self.dfpn.know_in_budget = false;
        self.budget.nodes += budget.nodes;
        let solved = match result {
            SolveResult::Win => pn == 0,
            _ => dn == 0,
        };
        if solved {
            self.find(g, prover, result)
        } else {
            None
        }
    }
}
