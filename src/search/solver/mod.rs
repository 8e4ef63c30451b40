//! Solvers: prove that a chosen player (the *prover*) wins a position, or that it cannot.
//!
//! Every solver implements [`Solver`] and has one row in the solver table [`SOLVERS`]
//! ([`SolverKind`]: its name, what it uses, its constructor); a name is read once into a
//! [`SolverChoice`] (a kind or `auto`, the game's [`SolverGame::DEFAULT_SOLVER`]), and
//! [`crate::search::registry::build`] makes the solver with its network. The solvers:
//!
//! - `mcts`: MCTS solver (PUCT selection, AND/OR propagation of proven values), with a
//!   pluggable batch-shaped [`heuristic::Heuristic`] (priors + value);
//! - `dfpn`: depth-first proof-number search with thresholds, a fixed-budget transposition
//!   table, the 1+ε trick and mobility initialisation;
//! - `fdfpn`: focused DFPN (heuristic move order, focus window `1 + ceil(0.1 · unsolved)`,
//!   pn/dn initialised from heuristic values);
//! - `gpn`, `ews`, `ppn`, `ab` (suite II): GPN-MCTS, Expected Work Search, probability-based
//!   PNS and an iterative-deepening αβ solver (see their modules).
//!
//! Domain knowledge ([`Knowledge`]: VCF/VCT threat search in Gomoku) is switchable.
//! Games plug in through [`SolverGame`] (transposition key, knowledge, default heuristic).
//!
//! After a proven result, [`Solver::proof_tree`] returns a complete solution tree: one move
//! at the winner's nodes, every legal move at the loser's nodes, terminal leaves. It is built
//! by replaying the real game from the root, so results reused unsoundly from the
//! transposition table (graph-history interaction under superko) cannot enter it:
//! [`ProofTree::check`] replays a tree under the game rules.

pub mod absolver;
pub mod dfpn;
pub mod ews;
pub mod gpn;
pub mod heuristic;
pub mod killallgo;
pub mod knowledge;
pub mod mcts;
pub mod net;
pub mod options;
pub mod ppn;
mod proof;
mod suite;
pub mod tt;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use thiserror::Error;

use super::Limits;
use crate::game::{Color, Game, Move, Outcome};

pub use dfpn::DfpnOptions;
pub use ews::EwsOptions;
pub use gpn::{GpnOptions, PnBias};
pub use options::{CommonOptions, SolverOptions};
pub use ppn::PpnOptions;

pub use heuristic::{CostModel, Evaluation, Heuristic};
pub use knowledge::{Knowledge, KnowledgeState};
pub use mcts::{MctsOptions, MctsPhases};

/// The solvers. A new solver gets a variant here, a row in [`SOLVERS`] and an arm in
/// [`SolverKind::construct`] (the compiler and a unit test check all three).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SolverKind {
    /// MCTS solver.
    Mcts,
    /// Plain depth-first proof-number search (mobility order, no heuristic).
    Dfpn,
    /// Focused DFPN.
    Fdfpn,
    /// GPN-MCTS.
    Gpn,
    /// Expected Work Search.
    Ews,
    /// Probability-based proof-number search.
    Ppn,
    /// Iterative-deepening αβ solver.
    Ab,
}

/// What the registry knows of one solver (its row in [`SOLVERS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SolverSpec {
    /// The solver.
    pub kind: SolverKind,
    /// Its name on the command line and in GTP (lower case).
    pub name: &'static str,
    /// Whether it uses a [`Heuristic`] (and so a network): all but plain DFPN.
    pub heuristic: bool,
    /// Whether it runs several search threads ([`CommonOptions::threads`]).
    pub threaded: bool,
    /// Whether it reads [`DfpnOptions::net_mode`] and [`DfpnOptions::net_depth`].
    pub net_mode: bool,
}

/// The solver table: one row per [`SolverKind`], in the order the help texts list them.
pub const SOLVERS: &[SolverSpec] = &[
    SolverSpec {
        kind: SolverKind::Mcts,
        name: "mcts",
        heuristic: true,
        threaded: true,
        net_mode: false,
    },
    SolverSpec {
        kind: SolverKind::Dfpn,
        name: "dfpn",
        heuristic: false,
        threaded: false,
        net_mode: false,
    },
    SolverSpec {
        kind: SolverKind::Fdfpn,
        name: "fdfpn",
        heuristic: true,
        threaded: false,
        net_mode: true,
    },
    SolverSpec {
        kind: SolverKind::Gpn,
        name: "gpn",
        heuristic: true,
        threaded: false,
        net_mode: false,
    },
    SolverSpec {
        kind: SolverKind::Ews,
        name: "ews",
        heuristic: true,
        threaded: false,
        net_mode: false,
    },
    SolverSpec {
        kind: SolverKind::Ppn,
        name: "ppn",
        heuristic: true,
        threaded: false,
        net_mode: false,
    },
    SolverSpec {
        kind: SolverKind::Ab,
        name: "ab",
        heuristic: true,
        threaded: false,
        net_mode: false,
    },
];

impl SolverKind {
    /// Every solver, in table order.
    pub fn all() -> impl Iterator<Item = SolverKind> {
        SOLVERS.iter().map(|s| s.kind)
    }

    /// The solver named `name` (any case, surrounding blanks ignored).
    pub fn parse(name: &str) -> Option<SolverKind> {
        let n = name.trim();
        SOLVERS
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(n))
            .map(|s| s.kind)
    }

    /// Its row of [`SOLVERS`].
    pub fn spec(self) -> &'static SolverSpec {
        // Every kind has a row (unit test `every_solver_has_one_row`); the first row is
        // only a defensive answer.
        SOLVERS
            .iter()
            .find(|s| s.kind == self)
            .unwrap_or(&SOLVERS[0])
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The solver's constructor, with `heuristic` as its heuristic (ignored by plain DFPN):
    /// it gets the common options and its own part of `opts`, nothing else.
    fn construct<G: SolverGame>(
        self,
        opts: &SolverOptions,
        heuristic: Box<dyn Heuristic<G>>,
    ) -> Box<dyn Solver<G>> {
        let common = opts.common.clone();
        match self {
            SolverKind::Mcts => Box::new(mcts::Mcts::new(common, opts.mcts.clone(), heuristic)),
            SolverKind::Dfpn => Box::new(dfpn::Dfpn::new(common, opts.dfpn.clone(), None)),
            SolverKind::Fdfpn => {
                Box::new(dfpn::Dfpn::new(common, opts.dfpn.clone(), Some(heuristic)))
            }
            SolverKind::Gpn => Box::new(gpn::Gpn::new(common, opts.gpn.clone(), heuristic)),
            SolverKind::Ews => Box::new(ews::Ews::new(common, opts.ews.clone(), heuristic)),
            SolverKind::Ppn => Box::new(ppn::Ppn::new(common, opts.ppn.clone(), heuristic)),
            SolverKind::Ab => Box::new(absolver::AbSolver::new(common, heuristic)),
        }
    }
}

/// The names of all solvers, in table order (for help and error texts).
pub fn solver_names() -> Vec<&'static str> {
    SOLVERS.iter().map(|s| s.name).collect()
}

/// The spelling of [`SolverChoice::Auto`].
pub const AUTO_SOLVER: &str = "auto";

/// A solver as chosen on the command line or in GTP: a kind, or `auto` (the game's best,
/// [`SolverGame::DEFAULT_SOLVER`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SolverChoice {
    /// The game's default solver.
    #[default]
    Auto,
    /// This solver.
    Kind(SolverKind),
}

impl SolverChoice {
    /// Reads `auto` or a solver name (any case).
    pub fn parse(name: &str) -> Result<SolverChoice, SolverError> {
        if name.trim().eq_ignore_ascii_case(AUTO_SOLVER) {
            return Ok(SolverChoice::Auto);
        }
        SolverKind::parse(name)
            .map(SolverChoice::Kind)
            .ok_or_else(|| SolverError::UnknownSolver(name.trim().chars().take(32).collect()))
    }

    /// The solver it stands for in game `G`.
    pub fn resolve<G: SolverGame>(self) -> SolverKind {
        match self {
            SolverChoice::Auto => G::DEFAULT_SOLVER,
            SolverChoice::Kind(k) => k,
        }
    }

    /// `auto` or the solver's name.
    pub fn name(self) -> &'static str {
        match self {
            SolverChoice::Auto => AUTO_SOLVER,
            SolverChoice::Kind(k) => k.name(),
        }
    }
}

/// Whose win is to be proven.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Prover {
    /// The side to move at the root (the default).
    #[default]
    ToMove,
    /// A given colour.
    Color(Color),
}

impl Prover {
    /// The prover's colour in `game`.
    pub fn resolve<G: Game>(self, game: &G) -> Color {
        match self {
            Prover::ToMove => game.to_move(),
            Prover::Color(c) => c,
        }
    }
}

/// The value of a position for the prover.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SolveResult {
    /// Proven: the prover wins against every defence.
    Win,
    /// Disproven: the prover cannot force a win (the opponent wins, or, in Gomoku, it is a
    /// draw at best).
    Loss,
    /// Not solved within the limits.
    Unknown,
}

impl SolveResult {
    /// `win`, `loss` or `unknown` (the JSON spelling of `pcn solve`).
    pub fn as_str(self) -> &'static str {
        match self {
            SolveResult::Win => "win",
            SolveResult::Loss => "loss",
            SolveResult::Unknown => "unknown",
        }
    }
}

/// Search statistics of one [`Solver::solve`] call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveStats {
    /// Nodes visited (DFPN: node entries; MCTS: expanded/visited tree nodes).
    pub nodes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// `nodes / seconds`.
    pub nodes_per_second: f64,
    /// Transposition-table entries in use at the end.
    pub tt_used: usize,
    /// Transposition-table capacity (entries).
    pub tt_capacity: usize,
    /// Transposition-table memory in bytes.
    pub tt_bytes: usize,
    /// Nodes spent in knowledge searches (VCF/VCT), counted separately from `nodes`.
    pub knowledge_nodes: u64,
    /// The job-level search's own figures (several workers); `None` for a plain solver.
    pub jobs: Option<crate::search::joblevel::JobStats>,
}

/// What [`Solver::solve`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveOutcome {
    /// Win / loss for the prover, or unknown.
    pub result: SolveResult,
    /// The prover's colour.
    pub prover: Color,
    /// The move for the side to move at the root: with [`SolveResult::Win`] and the prover
    /// to move, the proven winning move; with [`SolveResult::Loss`] and the prover to move,
    /// the move whose refutation took the most effort; otherwise the best move so far (most
    /// visits / smallest proof number). `None` when the root has no legal move.
    pub best: Option<Move>,
    /// Statistics.
    pub stats: SolveStats,
}

/// Progress reports of a solver (the front ends render them; solvers never print).
#[derive(Clone, Debug, PartialEq)]
pub enum SolveEvent {
    /// Periodic progress (about every 0.5 s, and at the end).
    Progress {
        /// Nodes so far.
        nodes: u64,
        /// Time since the solve started.
        elapsed: Duration,
        /// Best root move so far.
        best: Option<Move>,
        /// DFPN: the root's (proof, disproof) numbers, for the prover.
        pn_dn: Option<(u64, u64)>,
        /// MCTS: the root's mean value for the prover, in [-1, 1].
        value: Option<f32>,
        /// Transposition-table entries in use.
        tt_used: usize,
    },
    /// The root was solved.
    Solved {
        /// Win or loss for the prover.
        result: SolveResult,
        /// The root move (see [`SolveOutcome::best`]).
        best: Option<Move>,
    },
}

/// Errors of the solver registry.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SolverError {
    /// No solver has this name.
    #[error("unknown solver '{0}' (expected auto, {names})", names = solver_names().join(", "))]
    UnknownSolver(String),
    /// An option value is out of range.
    #[error("bad solver option: {0}")]
    BadOption(String),
}

/// Which heuristic the MCTS solver and focused DFPN use when none is plugged in.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum HeuristicKind {
    /// The game's default ([`SolverGame::default_heuristic`]): threat-table priors and
    /// a static threat-score value in Gomoku, uniform priors with playouts elsewhere.
    #[default]
    Default,
    /// Uniform priors and random-playout values, for every game.
    Uniform,
}

/// How the solvers treat graph-history interaction in history-sensitive games
/// ([`SolverGame::HISTORY_SENSITIVE`]: Killall-Go's situational superko).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum GhiMode {
    /// Sound: table keys also encode the positions seen so far (and the last move), so a
    /// result is only reused under the same history.
    #[default]
    Exact,
    /// The PCN reference solver's key ([`SolverGame::solver_key`]: stones, side to move,
    /// points made illegal by superko, double pass). Faster, but a result can be reused
    /// under a different history; proof extraction then fails instead of giving a wrong
    /// tree.
    Paper,
}

/// How focused DFPN uses a network (see [`DfpnOptions::net_mode`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum NetMode {
    /// The PCN paper's rule: the network at every node, pn/dn initialised from its costs,
    /// a focus window over its priors.
    Paper,
    /// The game's cheap static order and initial numbers everywhere, with the network's
    /// priors taking over the move order in the top [`DfpnOptions::net_depth`] plies. On
    /// a CPU a network evaluation costs as much as tens of static nodes, so the paper's rule
    /// spends most of the time on nodes that are proven or refuted at once; the top plies
    /// are few, and their order decides where everything below is spent.
    #[default]
    Hybrid,
}

impl NetMode {
    /// Parses `paper` or `hybrid` (any case).
    pub fn parse(s: &str) -> Option<NetMode> {
        match s.to_ascii_lowercase().as_str() {
            "paper" => Some(NetMode::Paper),
            "hybrid" => Some(NetMode::Hybrid),
            _ => None,
        }
    }
}

impl std::str::FromStr for NetMode {
    type Err = String;

    fn from_str(s: &str) -> Result<NetMode, String> {
        NetMode::parse(s).ok_or_else(|| format!("expected hybrid or paper, not '{s}'"))
    }
}

/// What a solver needs from a game beyond [`Game`].
pub trait SolverGame: Game {
    /// Transposition key: everything the game-theoretic value depends on. Defaults to
    /// [`Game::hash`]; Killall-Go adds history-dependent illegal points (superko).
    fn solver_key(&self) -> u64 {
        self.hash()
    }

    /// Domain knowledge at a node where the side to move is the prover: the first move of a
    /// proven win found by a special search (Gomoku VCF/VCT), or `None`. Must leave the
    /// position unchanged and must be sound (a returned move wins by force).
    fn knowledge_win(&mut self, _state: &mut KnowledgeState) -> Option<Move> {
        None
    }

    /// Cheap knowledge at a node where the side to move is the prover, without any search:
    /// an immediate win, or a win already proven by an earlier knowledge search (Gomoku:
    /// the threat search's win table, a sibling's forced line replayed). The solvers call it
    /// on the children of the opponent's nodes so that replies that ignore the prover's
    /// threat are proven at once. Same contract as [`SolverGame::knowledge_win`].
    fn quick_win(&mut self, _state: &mut KnowledgeState) -> Option<Move> {
        None
    }

    /// At a node where the prover's opponent is to move, with `replies` its legal moves: the
    /// replies after which the prover provably wins, appended to `out` as (index in
    /// `replies`, the prover's winning move). The default tries [`SolverGame::quick_win`]
    /// after each reply; a game may spend a bounded search here (Gomoku: the prover's threat
    /// as if the opponent passed, then its proof replayed after each reply). Must leave the
    /// position unchanged; every entry must be sound.
    fn quick_wins(
        &mut self,
        state: &mut KnowledgeState,
        replies: &[Move],
        out: &mut Vec<(usize, Move)>,
    ) {
        for (i, &m) in replies.iter().enumerate() {
            self.play_unchecked(m);
            if self.outcome().is_none() {
                if let Some(w) = self.quick_win(state) {
                    out.push((i, w));
                }
            }
            self.undo();
        }
    }

    /// Staged knowledge for solvers that revisit nodes (MCTS): the part of
    /// [`SolverGame::knowledge_win`] worth running at a node's first visit. Same contract.
    /// Defaults to all of it.
    fn knowledge_win_first(&mut self, state: &mut KnowledgeState) -> Option<Move> {
        self.knowledge_win(state)
    }

    /// Staged knowledge: the rest of [`SolverGame::knowledge_win`], run when the node is
    /// visited again (most leaves never are, so their costly searches are saved). Same
    /// contract. Defaults to nothing.
    fn knowledge_win_second(&mut self, _state: &mut KnowledgeState) -> Option<Move> {
        None
    }

    /// Whether [`SolverGame::knowledge_win_second`] can find anything with these options.
    fn knowledge_deferred(_state: &KnowledgeState) -> bool {
        false
    }

    /// Staged knowledge at a node where the prover's opponent is to move, run when the node
    /// is visited again (MCTS): like [`SolverGame::quick_wins`] for the replies still
    /// unsolved, with a costlier search (Gomoku: the prover's threat as if the opponent
    /// passed, replayed after each reply). Defaults to nothing.
    fn quick_wins_second(
        &mut self,
        _state: &mut KnowledgeState,
        _replies: &[Move],
        _out: &mut Vec<(usize, Move)>,
    ) {
    }

    /// The visits a node where the prover's opponent is to move needs before
    /// [`SolverGame::quick_wins_second`] runs there; `None` when it never does.
    fn defence_deferred(_state: &KnowledgeState) -> Option<u32> {
        None
    }

    /// At a node where the prover is to move and no knowledge win was found: removes from
    /// `moves` the prover's moves that cannot be the first move of a short win by the
    /// knowledge's measure (Gomoku: the threats of a threat, see
    /// [`Knowledge::lambda_nodes`]), keeping their order. Returns whether any move was
    /// removed. The prover needs only one winning move, so a proof among the kept moves is
    /// a proof; a solver must widen the node again before it calls it lost. Must leave the
    /// position unchanged. Defaults to keeping every move.
    fn narrow_prover_moves(&mut self, _state: &mut KnowledgeState, _moves: &mut Vec<Move>) -> bool {
        false
    }

    /// The knowledge options the MCTS solver runs with, `k` being the configured ones and
    /// `learned` whether its heuristic is learned ([`Heuristic::learned`]): a game may stage
    /// its costly searches differently when its static priors cannot steer the search.
    /// Defaults to `k` as configured.
    fn mcts_knowledge(_learned: bool, k: &Knowledge) -> Knowledge {
        k.clone()
    }

    /// Whether the MCTS solver, after a first search that filled its node pool without a
    /// result (and with budget left), runs a second one with the prover's moves narrowed
    /// ([`SolverGame::narrow_prover_moves`]). `learned`: [`Heuristic::learned`];
    /// `reply_value`: whether values at the opponent's nodes come from the replies left
    /// unproven. Defaults to never.
    fn mcts_narrowing(_learned: bool, _reply_value: bool, _k: &Knowledge) -> bool {
        false
    }

    /// The heuristic of the MCTS solver's narrowed phase where it is to differ from the
    /// game's own default heuristic with `opts` (which the first phase runs with), or `None`
    /// to keep that one. Only asked when the solver runs the game's own heuristic.
    fn narrowed_heuristic(
        _opts: &CommonOptions,
        _phases: &MctsPhases,
    ) -> Option<Box<dyn Heuristic<Self>>> {
        None
    }

    /// Whether [`SolverGame::quick_win`] can ever succeed (DFPN then probes the table of
    /// the opponent's children at once, before trying it, instead of in a batched pass).
    const QUICK_WINS: bool = false;

    /// The solver `auto` stands for in this game: the one that proves the most of the
    /// game's shared problems (docs/solving.md, "Choosing a solver"). Focused DFPN unless a
    /// game says otherwise.
    const DEFAULT_SOLVER: SolverKind = SolverKind::Fdfpn;

    /// Whether the game-theoretic value depends on history beyond [`SolverGame::solver_key`]
    /// (superko). Then, with [`GhiMode::Exact`], the solvers key their tables by the history
    /// as well ([`SolverGame::history_mark`], [`SolverGame::history_root`]).
    const HISTORY_SENSITIVE: bool = false;

    /// Called right after a move: a key for the position that move created when that
    /// position constrains later moves (Killall-Go: every position after a board move, for
    /// situational superko), else 0. The solvers xor these along their paths.
    fn history_mark(&self) -> u64 {
        0
    }

    /// The xor of [`SolverGame::history_mark`] over the whole history of this position
    /// (computed once per search root; may replay the game).
    fn history_root(&self) -> u64 {
        0
    }

    /// A cheap estimate of the number of legal moves (DFPN mobility initialisation).
    /// Defaults to counting [`Game::legal_moves`].
    fn mobility(&self) -> usize {
        let mut v = Vec::new();
        self.legal_moves(&mut v);
        v.len()
    }

    /// Whether DFPN and focused DFPN (with the game's own default heuristic, not a plugged-in
    /// one) order children by [`SolverGame::order_scores`] (or the priors) plus a history
    /// heuristic (moves that solved earlier nodes first), scale fresh children's initial
    /// numbers by their rank, and stop generating at a child that decides the node.
    const ORDER_HINTS: bool = false;

    /// Whether focused DFPN with the game's own default heuristic applies its focus window
    /// (only the first `1 + ceil(r · unsolved)` children count). Games whose ordering already
    /// scales the initial numbers ([`SolverGame::ORDER_HINTS`]) may turn it off; a plugged-in
    /// heuristic (network) always gets the window.
    const FOCUS_WINDOW: bool = true;

    /// Static move-ordering scores for the side to move, one per move in `moves` (larger is
    /// tried first). Only used with [`SolverGame::ORDER_HINTS`]. Defaults to zeros.
    fn order_scores(&self, moves: &[Move], out: &mut Vec<i32>) {
        out.clear();
        out.resize(moves.len(), 0);
    }

    /// The heuristic used by MCTS and focused DFPN when none is plugged in.
    fn default_heuristic(opts: &CommonOptions) -> Box<dyn Heuristic<Self>>;
}

/// A solver for game `G`. One solver object is reused across problems (its tables persist
/// until [`Solver::clear`]).
pub trait Solver<G: SolverGame>: Send {
    /// The registry name (`mcts`, `dfpn`, `fdfpn`).
    fn name(&self) -> &'static str;

    /// Tries to prove that `prover` wins `game` (left unchanged) within `limits`; stops early
    /// when `stop` is set. Reports progress through `on_event`.
    fn solve(
        &mut self,
        game: &G,
        prover: Color,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome;

    /// After a proven [`Solver::solve`] (win or loss): the complete solution tree of that
    /// result, built from the solver's tables and re-searching sub-positions where needed.
    /// `None` when the last result was unknown or the tree could not be completed within
    /// [`CommonOptions::proof_search_nodes`] / [`CommonOptions::proof_max_nodes`].
    fn proof_tree(&mut self) -> Option<ProofTree> {
        self.proof_tree_until(&AtomicBool::new(false))
    }

    /// [`Solver::proof_tree`] that gives up (`None`) soon after `stop` is set, so a caller
    /// with a deadline gets its solver back instead of leaving the build running.
    fn proof_tree_until(&mut self, stop: &AtomicBool) -> Option<ProofTree>;

    /// Thresholds for the next solves (`None`: none): a solver that works with proof-number
    /// thresholds (DFPN's MID) returns unknown as soon as the root's proof number reaches
    /// `tp` or its disproof number `td`, as DFPN does below a node that is no longer the most
    /// proving one. The job-level manager sets them so that a job stops where DFPN would
    /// leave the node. Defaults to ignoring them.
    fn set_thresholds(&mut self, _t: Option<(u64, u64)>) {}

    /// Learns a result found elsewhere (another worker of the job-level search): `game` is
    /// won (`Win`) or not (`Loss`) for `prover`. A solver with a table records it, so that
    /// its own search does not prove the position again; a proof built later through it
    /// re-searches that position. Defaults to ignoring it.
    fn learn(&mut self, _game: &G, _prover: Color, _result: SolveResult) {}

    /// Says that the positions of the next solves lie `plies` below the problem's root (a
    /// job of the job-level search), so that settings counted in plies from the root
    /// (focused DFPN's network depth, [`DfpnOptions::net_depth`]) count from the problem's
    /// root, as in one solve of the whole problem. Defaults to ignoring it.
    fn set_root_depth(&mut self, _plies: usize) {}

    /// After a [`Solver::solve`] of `game` for `prover`: what the solver's tables know of
    /// each legal move's position, as (move, pn, dn) for the prover (0: proven, 0 dn:
    /// disproven), for the moves it has records of. The job-level manager starts the
    /// children of a position it expands from these, so that its numbers continue the
    /// worker's search. `None` (the default) when the solver keeps no such numbers.
    fn child_numbers(&mut self, _game: &G, _prover: Color) -> Option<Vec<(Move, u64, u64)>> {
        None
    }

    /// Whether the solver keeps its table in one shared with other solvers
    /// ([`tt::TableGroup`]), so that [`Solver::child_numbers`] also sees what they found
    /// (the job-level manager then places helpers by it).
    fn shares_table(&self) -> bool {
        false
    }

    /// Forgets all tables (new game).
    fn clear(&mut self);

    /// Sets the transposition-table budget in bytes (0: default); clears the table.
    fn set_memory(&mut self, bytes: usize);

    /// Sets the search threads (at least 1) of the solvers that run several (MCTS); the
    /// single-threaded ones ignore it.
    fn set_threads(&mut self, _threads: usize) {}
}

/// The heuristic a solver uses when none is plugged in ([`CommonOptions::heuristic`]).
pub fn plain_heuristic<G: SolverGame>(opts: &CommonOptions) -> Box<dyn Heuristic<G>> {
    match opts.heuristic {
        HeuristicKind::Default => G::default_heuristic(opts),
        HeuristicKind::Uniform => Box::new(heuristic::UniformPlayout::new(opts)),
    }
}

/// Solver `kind` with `heuristic` (ignored by plain DFPN), after checking the options. The
/// engines and `pcn solve` build through [`crate::search::registry::build`], which adds the
/// network.
pub fn make<G: SolverGame>(
    kind: SolverKind,
    opts: &SolverOptions,
    heuristic: Box<dyn Heuristic<G>>,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    opts.check()?;
    Ok(kind.construct(opts, heuristic))
}

/// A solver by name (`auto` allowed), with the game's default heuristic.
pub fn solver_by_name<G: SolverGame>(
    name: &str,
    opts: &SolverOptions,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    let kind = SolverChoice::parse(name)?.resolve::<G>();
    make(kind, opts, plain_heuristic(&opts.common))
}

/// A solver by name (`auto` allowed) with a given heuristic.
pub fn solver_with_heuristic<G: SolverGame>(
    name: &str,
    opts: &SolverOptions,
    heuristic: Box<dyn Heuristic<G>>,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    let kind = SolverChoice::parse(name)?.resolve::<G>();
    make(kind, opts, heuristic)
}

/// One node of a [`ProofTree`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProofNode {
    /// The moves from this position with the index of the resulting node in
    /// [`ProofTree::nodes`]: exactly one at the winner's nodes, every legal move at the
    /// loser's nodes, none at terminal positions.
    pub children: Vec<(Move, u32)>,
}

/// A complete solution tree for a solved root. `nodes[0]` is the root.
///
/// With `result == Win` the *winner* is the prover: its nodes have one child, the
/// opponent's nodes list every legal move, and every leaf is a terminal position won by the
/// prover. With `result == Loss` the roles swap: the opponent's nodes have one child, the
/// prover's nodes list every legal move, and every leaf is a terminal position the prover
/// did not win (the opponent won, or a draw).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofTree {
    /// The prover.
    pub prover: Color,
    /// [`SolveResult::Win`] or [`SolveResult::Loss`] for the prover.
    pub result: SolveResult,
    /// The nodes, root first; children always have larger indices than their parent.
    pub nodes: Vec<ProofNode>,
}

/// Why a proof tree failed [`ProofTree::check`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ProofError {
    /// The tree has no nodes or a bad child index.
    #[error("malformed tree: {0}")]
    Malformed(String),
    /// A move in the tree is illegal.
    #[error("illegal move {mv} after {line}")]
    Illegal {
        /// The move (GTP text).
        mv: String,
        /// The line leading to it (GTP text).
        line: String,
    },
    /// A node of the side that must answer everything misses a legal move.
    #[error("missing defence {mv} after {line}")]
    MissingDefence {
        /// The missing move (GTP text).
        mv: String,
        /// The line leading to the node.
        line: String,
    },
    /// A node of the side that chooses has no move or several.
    #[error("{count} moves at a choice node after {line} (expected 1)")]
    Choice {
        /// Number of children found.
        count: usize,
        /// The line leading to the node.
        line: String,
    },
    /// A leaf is not a terminal position with the claimed result.
    #[error("leaf after {line} is not a terminal {expected}")]
    BadLeaf {
        /// What the leaf should be.
        expected: &'static str,
        /// The line leading to it.
        line: String,
    },
}

impl ProofTree {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty (never for a tree returned by a solver).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The colour that chooses one move per node (the winner of the tree's claim).
    pub fn chooser(&self) -> Color {
        match self.result {
            SolveResult::Loss => self.prover.opp(),
            _ => self.prover,
        }
    }

    /// Replays the tree from `root` under the game rules and checks that it is a complete
    /// solution tree for its claim (see the type docs). The game is left unchanged.
    pub fn check<G: Game>(&self, root: &G) -> Result<(), ProofError> {
        if self.nodes.is_empty() {
            return Err(ProofError::Malformed("no nodes".into()));
        }
        if self.result == SolveResult::Unknown {
            return Err(ProofError::Malformed("result unknown".into()));
        }
        let mut g = root.clone();
        let mut line = Vec::new();
        let mut legal = Vec::new();
        // Explicit stack: (node, next child index). Trees can be deep.
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        self.check_node(&g, 0, &mut legal, &line)?;
        while let Some(top) = stack.last_mut() {
            let (ni, ci) = *top;
            let node = &self.nodes[ni as usize];
            if ci >= node.children.len() {
                stack.pop();
                if !stack.is_empty() {
                    g.undo();
                    line.pop();
                }
                continue;
            }
            top.1 += 1;
            let (mv, child) = node.children[ci];
            if child as usize >= self.nodes.len() || child <= ni {
                return Err(ProofError::Malformed(format!("bad child index {child}")));
            }
            if g.play(mv).is_err() {
                return Err(ProofError::Illegal {
                    mv: g.move_to_gtp(mv),
                    line: line_text(root, &line),
                });
            }
            line.push(mv);
            self.check_node(&g, child, &mut legal, &line)
                .map_err(|e| fix_line(e, root, &line))?;
            stack.push((child, 0));
        }
        Ok(())
    }

    fn check_node<G: Game>(
        &self,
        g: &G,
        ni: u32,
        legal: &mut Vec<Move>,
        line: &[Move],
    ) -> Result<(), ProofError> {
        let node = &self.nodes[ni as usize];
        let lt = || {
            line.iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        if let Some(o) = g.outcome() {
            let prover_won = o == Outcome::Win(self.prover);
            let ok = match self.result {
                SolveResult::Win => prover_won,
                _ => !prover_won,
            };
            if !ok || !node.children.is_empty() {
                return Err(ProofError::BadLeaf {
                    expected: if self.result == SolveResult::Win {
                        "prover win"
                    } else {
                        "prover non-win"
                    },
                    line: lt(),
                });
            }
            return Ok(());
        }
        if g.to_move() == self.chooser() {
            if node.children.len() != 1 {
                return Err(ProofError::Choice {
                    count: node.children.len(),
                    line: lt(),
                });
            }
        } else {
            g.legal_moves(legal);
            for &m in legal.iter() {
                if !node.children.iter().any(|&(c, _)| c == m) {
                    return Err(ProofError::MissingDefence {
                        mv: g.move_to_gtp(m),
                        line: lt(),
                    });
                }
            }
            if node.children.len() != legal.len() {
                return Err(ProofError::Malformed(format!(
                    "{} children for {} legal moves after {}",
                    node.children.len(),
                    legal.len(),
                    lt()
                )));
            }
        }
        Ok(())
    }
}

/// GTP text of a line of moves from `root`.
fn line_text<G: Game>(root: &G, line: &[Move]) -> String {
    let mut g = root.clone();
    let mut out = Vec::with_capacity(line.len());
    for &m in line {
        out.push(g.move_to_gtp(m));
        g.play_unchecked(m);
    }
    if out.is_empty() {
        "the root".into()
    } else {
        out.join(" ")
    }
}

/// Replaces the raw action numbers of a node error by GTP text.
fn fix_line<G: Game>(e: ProofError, root: &G, line: &[Move]) -> ProofError {
    let l = line_text(root, line);
    match e {
        ProofError::MissingDefence { mv, .. } => ProofError::MissingDefence { mv, line: l },
        ProofError::Choice { count, .. } => ProofError::Choice { count, line: l },
        ProofError::BadLeaf { expected, .. } => ProofError::BadLeaf { expected, line: l },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_solver_has_one_row() {
        let all = [
            SolverKind::Mcts,
            SolverKind::Dfpn,
            SolverKind::Fdfpn,
            SolverKind::Gpn,
            SolverKind::Ews,
            SolverKind::Ppn,
            SolverKind::Ab,
        ];
        assert_eq!(SOLVERS.len(), all.len());
        for k in all {
            assert_eq!(SOLVERS.iter().filter(|s| s.kind == k).count(), 1, "{k:?}");
            assert_eq!(k.spec().kind, k);
            assert_eq!(SolverKind::parse(&k.name().to_uppercase()), Some(k));
        }
        assert_eq!(SolverChoice::parse(" Auto "), Ok(SolverChoice::Auto));
        assert!(SolverChoice::parse("pcn").is_err());
    }
}
