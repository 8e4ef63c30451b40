//! Gomoku players by name, for the front ends, `pcn match` and `pcn bench`; and the one
//! place where a solver is built with its network ([`build`], [`SolverNet`]) for `pcn
//! solve`, `pcn gtp` and the Gomocup `solver` players. The solvers themselves, their names
//! and each game's default are the solver table ([`super::solver::SOLVERS`]).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::gomoku::alphabeta::AlphaBeta;
use super::gomoku::greedy::Greedy;
use super::gomoku::reference::Ab4;
use super::joblevel::threads::{ThreadTransport, WorkerFactory};
use super::joblevel::{HeuristicMaker, JobLevel, Transport};
use super::solver::net::{NetHeuristic, NetShare, DEFAULT_CACHE_ENTRIES};
use super::solver::tt::TableGroup;
use super::solver::{
    make, plain_heuristic, CommonOptions, Heuristic, ProofTree, SolveEvent, SolveOutcome,
    SolveResult, Solver, SolverError, SolverGame, SolverOptions,
};
pub use super::solver::{SolverChoice, SolverKind, AUTO_SOLVER};
use super::solver_player::{SolverPlay, SolverPlayer};
use super::{Limits, Searcher};
use crate::game::gomoku::Gomoku;
use crate::game::{Color, Game, Move};
use crate::nn::eval::BatchingEvaluator;
use crate::nn::{Evaluator, NetGame, NetInfo, NnError};

/// Registered Gomoku searcher names; the first is the default. `solver` also comes as
/// `solver-dfpn`, `solver-fdfpn`, `solver-mcts` (any solver name).
pub const GOMOKU_SEARCHERS: &[&str] = &["pcn", "greedy", "ab4", "solver"];

/// A loaded network for the solvers: the evaluator and the symmetries averaged per
/// evaluation (`--net`, `--symmetries`, `--backend`).
#[derive(Clone)]
pub struct SolverNet {
    /// The evaluator (shared by every solver built from it).
    pub eval: Arc<dyn Evaluator>,
    /// Board symmetries per evaluation (1..=8).
    pub symmetries: usize,
    /// The path it was loaded from, for reports.
    pub path: String,
    /// The decoded cache shared with other solvers (the job-level workers on one table);
    /// `None`: each solver made from it keeps its own.
    share: Option<NetShare>,
}

impl std::fmt::Debug for SolverNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SolverNet({})", self.describe())
    }
}

impl SolverNet {
    /// Loads the model at `path` (`none`, any case: `Ok(None)`) on `backend` with `threads`
    /// backend threads. `symmetries` must be 1..=8.
    pub fn open(
        path: &str,
        backend: &str,
        symmetries: usize,
        threads: usize,
    ) -> Result<Option<SolverNet>, NnError> {
        if path.trim().eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        if !(1..=8).contains(&symmetries) {
            return Err(NnError::Mismatch(format!(
                "symmetries must be 1..=8, got {symmetries}"
            )));
        }
        let eval = crate::nn::open(path, backend, threads.max(1))?;
        Ok(Some(SolverNet {
            eval,
            symmetries,
            path: path.to_string(),
            share: None,
        }))
    }

    /// The model's description.
    pub fn info(&self) -> &NetInfo {
        self.eval.info()
    }

    /// One line for reports (GTP `pcn-net`): name, kind, board, symmetries, backend.
    pub fn describe(&self) -> String {
        let i = self.info();
        let kind = match i.bins() {
            0 => "alphazero".to_string(),
            b => format!("pcn({b} bins)"),
        };
        format!(
            "{} {} {}x{} symmetries {} backend {}",
            i.name,
            kind,
            i.board_size,
            i.board_size,
            self.symmetries,
            self.eval.name()
        )
    }

    /// Whether the model evaluates positions like `g` (same board, planes and actions).
    pub fn fits<G: Game>(&self, g: &G) -> bool {
        let i = self.info();
        g.width() == i.board_size
            && g.height() == i.board_size
            && g.input_planes() == i.planes
            && g.num_actions() == i.actions
    }

    /// Checks that the model is for `g`'s game and board (for the command line: a model that
    /// cannot be used at all is an error there, not a silent fallback).
    pub fn check_fits<G: Game>(&self, g: &G) -> Result<(), NnError> {
        if self.fits(g) {
            return Ok(());
        }
        let i = self.info();
        let game = match i.game {
            NetGame::Gomoku => "Gomoku",
            NetGame::KillallGo => "Killall-Go",
        };
        Err(NnError::Mismatch(format!(
            "model {} is for {game} {}x{} ({} planes, {} actions), not {} {}x{} ({} planes, {} actions)",
            i.name,
            i.board_size,
            i.board_size,
            i.planes,
            i.actions,
            g.name(),
            g.width(),
            g.height(),
            g.input_planes(),
            g.num_actions()
        )))
    }
}

/// Builds the solver `choice` stands for in game `G` with `opts`: the one way every front
/// end makes a solver. Without a network (or for a solver that uses no heuristic, plain
/// `dfpn`) it has the game's default heuristic. With one, it is a solver whose heuristic is
/// the network ([`NetHeuristic`]) for positions the model fits and the plain solver for
/// other boards (a running engine whose board is resized keeps working; each is made on
/// first use). A solver that runs several threads shares the network behind a batching
/// queue ([`BatchingEvaluator`]). `pcn solve`, where a model that does not fit is an error,
/// checks [`SolverNet::check_fits`] first.
pub fn build<G: SolverGame>(
    choice: SolverChoice,
    opts: &SolverOptions,
    net: Option<&SolverNet>,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    if opts.jobs.workers > 1 {
        return build_job_level(choice, opts, net);
    }
    let kind = choice.resolve::<G>();
    let spec = kind.spec();
    match net {
        Some(net) if spec.heuristic => {
            // The options are checked now, so that errors come at once.
            opts.check()?;
            let mut net = net.clone();
            let threads = opts.common.threads.max(1);
            if spec.threaded && threads > 1 {
                // As many queue workers as the backend keeps batches in flight (1 on the
                // CPU, 2 on the GPU), so the next batch fills while one runs.
                let workers = net.eval.in_flight();
                net.eval = Arc::new(BatchingEvaluator::with_workers(
                    net.eval.clone(),
                    threads * net.symmetries,
                    BATCH_WAIT,
                    workers,
                ));
            }
            Ok(Box::new(NetOrPlain {
                kind,
                opts: opts.clone(),
                net,
                with_net: None,
                plain: None,
                last_net: false,
                root_depth: 0,
                thresholds: None,
            }))
        }
        _ => make::<G>(kind, opts, plain_heuristic(&opts.common)),
    }
}

/// The job-level search ([`crate::search::joblevel`]) with `opts.jobs.workers` threads,
/// each running solver `choice` as [`build`] makes it for one worker. The table budget is
/// the whole solve's: each worker gets its share. All workers share the network's
/// evaluator; a backend that keeps several batches in flight (a GPU) sees them through one
/// batching queue, so that it gets batches from all workers; on the CPU each worker calls
/// the backend directly. The manager orders its own expansions with the network where the
/// model fits the position, else with the game's plain heuristic.
fn build_job_level<G: SolverGame>(
    choice: SolverChoice,
    opts: &SolverOptions,
    net: Option<&SolverNet>,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    opts.check()?;
    let workers = opts.jobs.workers;
    let mut inner = opts.clone();
    inner.jobs.workers = 1;
    inner.common.threads = 1;
    let total = opts.common.tt_bytes();
    // DFPN's workers keep one table for all of them (the whole budget); the other solvers
    // keep their own, each with its part of the budget.
    let sharing = matches!(choice.resolve::<G>(), SolverKind::Dfpn | SolverKind::Fdfpn);
    let group = TableGroup::new();
    let mut net = net.cloned();
    if let Some(n) = net.as_mut() {
        if n.eval.in_flight() > 1 {
            n.eval = Arc::new(BatchingEvaluator::with_workers(
                n.eval.clone(),
                workers * n.symmetries,
                BATCH_WAIT,
                n.eval.in_flight(),
            ));
        }
    }
    let worker_net = net.clone();
    // Workers on one table also keep one decoded cache: they search the same positions near
    // the root, where the network runs. Not in the deterministic mode (`share` off), where a
    // cache filled by whichever worker came first would make the answer depend on timing.
    let net_share = NetShare::new();
    let factory: WorkerFactory<G> = Arc::new(move |index, memory, share| {
        let mut o = inner.clone();
        let mut n = worker_net.clone();
        if share && sharing {
            o.common.memory_bytes = memory;
            o.common.table_group = Some(group.clone());
            o.common.group_member = index;
            if let Some(n) = n.as_mut() {
                n.share = Some(net_share.clone());
            }
        } else {
            o.common.memory_bytes = (memory / workers).max(1 << 20);
        }
        build::<G>(choice, &o, n.as_ref()).ok()
    });
    let transport = ThreadTransport::new(workers, total, factory);
    build_job_level_over(choice, opts, net.as_ref(), Box::new(transport))
}

/// The job-level manager of solver `choice` over a given transport (workers in other
/// processes: [`super::joblevel::link`]). The manager orders its own expansions with the
/// network where the model fits the position, else with the game's plain heuristic.
pub fn build_job_level_over<G: SolverGame>(
    choice: SolverChoice,
    opts: &SolverOptions,
    net: Option<&SolverNet>,
    transport: Box<dyn Transport<G>>,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    opts.check()?;
    let net = net.cloned();
    let common = opts.common.clone();
    let heuristic: HeuristicMaker<G> = Box::new(move |g: &G| match &net {
        Some(n) if n.fits(g) => {
            match NetHeuristic::new(n.eval.clone(), n.symmetries, g, DEFAULT_CACHE_ENTRIES) {
                Ok(h) => Box::new(h) as Box<dyn Heuristic<G>>,
                Err(_) => plain_heuristic::<G>(&common),
            }
        }
        _ => plain_heuristic::<G>(&common),
    });
    Ok(Box::new(JobLevel::new(
        choice.resolve::<G>().name(),
        opts.jobs.clone(),
        transport,
        heuristic,
        opts.common.seed,
        opts.common.proof_max_nodes,
    )))
}

/// How long a batching queue waits for more positions before it evaluates a partial batch.
const BATCH_WAIT: Duration = Duration::from_millis(1);

/// A solver with the network heuristic where the model fits the position, and without it
/// elsewhere (see [`build`]). Both are made on first use of their kind.
struct NetOrPlain<G: SolverGame> {
    kind: SolverKind,
    opts: SolverOptions,
    net: SolverNet,
    with_net: Option<Box<dyn Solver<G>>>,
    plain: Option<Box<dyn Solver<G>>>,
    /// Which one ran last (for [`Solver::proof_tree`]).
    last_net: bool,
    /// [`Solver::set_root_depth`], passed on to the solvers made later.
    root_depth: usize,
    /// [`Solver::set_thresholds`], passed on to the solvers made later.
    thresholds: Option<(u64, u64)>,
}

impl<G: SolverGame> NetOrPlain<G> {
    /// The solver for `game`, made if needed; `None` only if it cannot be made.
    fn pick(&mut self, game: &G) -> Option<&mut Box<dyn Solver<G>>> {
        let use_net = self.net.fits(game);
        self.last_net = use_net;
        if use_net && self.with_net.is_none() {
            // Without a share of its own, a fresh one: a cache for this solver alone.
            let share = self.net.share.clone().unwrap_or_default();
            let made = NetHeuristic::new_in(
                &share,
                self.net.eval.clone(),
                self.net.symmetries,
                game,
                DEFAULT_CACHE_ENTRIES,
            )
            .ok()
            .and_then(|h| make::<G>(self.kind, &self.opts, Box::new(h)).ok());
            match made {
                Some(mut s) => {
                    s.set_root_depth(self.root_depth);
                    s.set_thresholds(self.thresholds);
                    log::info!(
                        "solver {}: network heuristic of {} ({})",
                        self.kind.name(),
                        self.net.path,
                        self.net.describe()
                    );
                    self.with_net = Some(s)
                }
                None => {
                    log::warn!(
                        "network {} unusable here; solving without it",
                        self.net.path
                    );
                    self.last_net = false;
                }
            }
        }
        if !self.last_net && self.plain.is_none() {
            log::info!(
                "solver {}: {} does not fit the network; solving without it",
                self.kind.name(),
                game.name()
            );
            self.plain = make::<G>(self.kind, &self.opts, plain_heuristic(&self.opts.common)).ok();
            if let Some(s) = self.plain.as_mut() {
                s.set_root_depth(self.root_depth);
                s.set_thresholds(self.thresholds);
            }
        }
        if self.last_net {
            self.with_net.as_mut()
        } else {
            self.plain.as_mut()
        }
    }
}

impl<G: SolverGame> Solver<G> for NetOrPlain<G> {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn solve(
        &mut self,
        game: &G,
        prover: Color,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        match self.pick(game) {
            Some(s) => s.solve(game, prover, limits, stop, on_event),
            None => SolveOutcome {
                result: SolveResult::Unknown,
                prover,
                best: None,
                stats: Default::default(),
            },
        }
    }

    fn proof_tree_until(&mut self, stop: &AtomicBool) -> Option<ProofTree> {
        let s = if self.last_net {
            self.with_net.as_mut()
        } else {
            self.plain.as_mut()
        };
        s?.proof_tree_until(stop)
    }

    fn set_root_depth(&mut self, plies: usize) {
        self.root_depth = plies;
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.set_root_depth(plies);
        }
    }

    fn learn(&mut self, game: &G, prover: Color, result: SolveResult) {
        if let Some(s) = self.pick(game) {
            s.learn(game, prover, result);
        }
    }

    fn set_thresholds(&mut self, t: Option<(u64, u64)>) {
        self.thresholds = t;
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.set_thresholds(t);
        }
    }

    fn child_numbers(&mut self, game: &G, prover: Color) -> Option<Vec<(Move, u64, u64)>> {
        let s = if self.last_net {
            self.with_net.as_mut()
        } else {
            self.plain.as_mut()
        };
        match s {
            Some(s) => s.child_numbers(game, prover),
            // Not solved anything yet (a reader of the shared table): made for `game`.
            None => self.pick(game)?.child_numbers(game, prover),
        }
    }

    fn shares_table(&self) -> bool {
        self.opts.common.table_group.is_some()
            && matches!(self.kind, SolverKind::Dfpn | SolverKind::Fdfpn)
    }

    fn clear(&mut self) {
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.clear();
        }
    }

    fn set_memory(&mut self, bytes: usize) {
        self.opts.common.memory_bytes = bytes;
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.set_memory(bytes);
        }
    }

    fn set_threads(&mut self, threads: usize) {
        self.opts.common.threads = threads.max(1);
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.set_threads(threads);
        }
    }
}

/// Fraction of each move the `solver` player gives its solver.
pub const SOLVER_PLAYER_SHARE: f64 = 0.1;

/// What the players are built with beyond their name: the command line's `--threads`,
/// `--memory`, `--seed` and `--net` (the players that have no use for one ignore it).
#[derive(Clone, Debug)]
pub struct PlayerSettings {
    /// Search threads of the players that run several (`pcn` and the solvers; at least 1).
    pub threads: usize,
    /// Workers of the `solver` players' solver (more than 1: the job-level search).
    pub workers: usize,
    /// Table memory of each player, in bytes (a `solver` player splits it between its
    /// solver and its fallback).
    pub memory_bytes: usize,
    /// Seed of the solvers' random choices.
    pub seed: u64,
    /// The solvers' network, used where it fits the board.
    pub net: Option<SolverNet>,
    /// The `pcn` player's evaluation networks (none: the pattern evaluation).
    pub eval_nets: Vec<Arc<crate::search::gomoku::learn::evalnet::EvalNet>>,
}

impl Default for PlayerSettings {
    fn default() -> Self {
        PlayerSettings {
            threads: 1,
            workers: 1,
            memory_bytes: super::DEFAULT_MEMORY_BYTES,
            seed: CommonOptions::default().seed,
            net: None,
            eval_nets: Vec::new(),
        }
    }
}

/// The `solver` player: the chosen solver (`auto`: Gomoku's default,
/// [`SolverGame::DEFAULT_SOLVER`]; with VCF knowledge, and the network of `settings` where it fits)
/// for [`SOLVER_PLAYER_SHARE`] of each move, then the `pcn` alpha-beta player (see
/// [`super::solver_player`]).
pub fn solver_player(
    solver: SolverChoice,
    settings: &PlayerSettings,
) -> Option<SolverPlayer<Gomoku>> {
    let mut opts = SolverOptions::with_common(CommonOptions {
        memory_bytes: settings.memory_bytes,
        seed: settings.seed,
        threads: settings.threads.max(1),
        ..CommonOptions::default()
    });
    opts.jobs.workers = settings.workers.max(1);
    let s = build::<Gomoku>(solver, &opts, settings.net.as_ref()).ok()?;
    Some(SolverPlayer::new(
        "solver",
        s,
        Box::new(pcn_player(settings)),
        SolverPlay {
            share: SOLVER_PLAYER_SHARE,
            loss_is_lost: false,
        },
    ))
}

/// The `pcn` alpha-beta player with the evaluation of `settings`.
fn pcn_player(settings: &PlayerSettings) -> AlphaBeta {
    let mut p = AlphaBeta::new();
    p.set_eval_nets(settings.eval_nets.clone());
    p
}

/// A fresh Gomoku searcher by registry name (`None` for an unknown name), with the default
/// [`PlayerSettings`].
pub fn gomoku_searcher(name: &str) -> Option<Box<dyn Searcher<Gomoku>>> {
    gomoku_searcher_with(name, &PlayerSettings::default())
}

/// [`gomoku_searcher`] built with `settings`: every player gets its table memory and its
/// threads (used by `pcn`, Lazy SMP, and the `solver` players); the `solver` players also
/// use its seed and network (the others are deterministic and have no network).
pub fn gomoku_searcher_with(
    name: &str,
    settings: &PlayerSettings,
) -> Option<Box<dyn Searcher<Gomoku>>> {
    let mut player: Box<dyn Searcher<Gomoku>> = match name {
        "pcn" => Box::new(pcn_player(settings)),
        "greedy" => Box::new(Greedy),
        "ab4" => Box::new(Ab4::default()),
        "solver" => Box::new(solver_player(SolverChoice::Auto, settings)?),
        other => {
            let s = SolverChoice::parse(other.strip_prefix("solver-")?).ok()?;
            Box::new(solver_player(s, settings)?)
        }
    };
    player.set_memory(settings.memory_bytes);
    player.set_threads(settings.threads);
    Some(player)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::killallgo::KillallGo;

    #[test]
    fn auto_picks_the_measured_best() {
        let auto = SolverChoice::parse("AUTO").unwrap();
        assert_eq!(auto.resolve::<Gomoku>(), SolverKind::Mcts);
        assert_eq!(auto.resolve::<KillallGo>(), SolverKind::Fdfpn);
        let dfpn = SolverChoice::parse("DFPN").unwrap();
        assert_eq!(dfpn.resolve::<KillallGo>(), SolverKind::Dfpn);
        let s = build::<Gomoku>(auto, &SolverOptions::default(), None).unwrap();
        assert_eq!(s.name(), "mcts");
        let s = build::<KillallGo>(auto, &SolverOptions::default(), None).unwrap();
        assert_eq!(s.name(), "fdfpn");
        assert!(gomoku_searcher("solver-nonsense").is_none());
        assert!(gomoku_searcher("solver-auto").is_some());
    }

    /// Counts evaluated positions of an inner evaluator.
    struct Counting(
        crate::nn::eval::RandomEvaluator,
        Arc<std::sync::atomic::AtomicUsize>,
    );

    impl Evaluator for Counting {
        fn info(&self) -> &NetInfo {
            self.0.info()
        }
        fn evaluate(
            &self,
            input: &[f32],
            batch: usize,
            out: &mut crate::nn::NetOutput,
        ) -> Result<(), NnError> {
            self.1
                .fetch_add(batch, std::sync::atomic::Ordering::Relaxed);
            self.0.evaluate(input, batch, out)
        }
        fn name(&self) -> String {
            "counting".into()
        }
    }

    #[test]
    fn network_where_it_fits_plain_elsewhere() {
        use crate::game::gomoku::Rule;
        use crate::game::killallgo::Variant;
        use crate::nn::eval::RandomEvaluator;
        use crate::nn::NetKind;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let info = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::AlphaZero);
        let count = Arc::new(AtomicUsize::new(0));
        let net = SolverNet {
            eval: Arc::new(Counting(RandomEvaluator::new(info, 7), count.clone())),
            symmetries: 1,
            path: "random".into(),
            share: None,
        };
        let nine = KillallGo::new(Variant::Pcn9);
        let seven = KillallGo::new(Variant::Seven);
        assert!(net.fits(&nine) && !net.fits(&seven));
        assert!(net.check_fits(&nine).is_ok());
        assert!(net.check_fits(&seven).is_err());
        assert!(net
            .check_fits(&Gomoku::new(15, 15, Rule::Freestyle).unwrap())
            .is_err());
        assert!(net
            .describe()
            .starts_with("random alphazero 9x9 symmetries 1"));
        let opts = SolverOptions::with_memory(4 << 20);
        assert!(SolverChoice::parse("nonsense").is_err());
        assert_eq!(
            build::<KillallGo>(SolverChoice::Auto, &opts, Some(&net))
                .unwrap()
                .name(),
            "fdfpn"
        );
        let mcts = SolverChoice::Kind(SolverKind::Mcts);
        let mut s = build::<KillallGo>(mcts, &opts, Some(&net)).unwrap();
        assert_eq!(s.name(), "mcts");
        let stop = AtomicBool::new(false);
        let mut solve = |g: &KillallGo| {
            let out = s.solve(g, Color::White, &Limits::nodes(200), &stop, &mut |_| {});
            assert!(out.stats.nodes > 0, "{}", g.name());
        };
        solve(&nine);
        let after_nine = count.load(Ordering::Relaxed);
        assert!(after_nine > 0, "the 9x9 solve used the network");
        // 7x7 does not fit the model: solved without it, no evaluation (and no panic).
        solve(&seven);
        assert_eq!(count.load(Ordering::Relaxed), after_nine);
    }

    #[test]
    fn heuristics_in_one_share_run_the_network_once_per_position() {
        use crate::nn::eval::RandomEvaluator;
        use crate::nn::NetKind;
        use crate::search::solver::heuristic::{Evaluation, Heuristic};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let info = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::AlphaZero);
        let count = Arc::new(AtomicUsize::new(0));
        let eval: Arc<dyn crate::nn::Evaluator> =
            Arc::new(Counting(RandomEvaluator::new(info, 7), count.clone()));
        let g = KillallGo::new(crate::game::killallgo::Variant::Pcn9);
        let share = NetShare::new();
        let make = |share: Option<&NetShare>| -> NetHeuristic<KillallGo> {
            match share {
                Some(s) => NetHeuristic::new_in(s, eval.clone(), 1, &g, 1024).unwrap(),
                None => NetHeuristic::new(eval.clone(), 1, &g, 1024).unwrap(),
            }
        };
        let mut out = vec![Evaluation::default()];
        let mut first = make(Some(&share));
        first.evaluate_batch(&[&g], &mut out);
        assert_eq!(count.load(Ordering::Relaxed), 1);
        let policy = out[0].policy.clone();
        // A second heuristic of the same share finds the position in the cache.
        let mut second = make(Some(&share.clone()));
        second.evaluate_batch(&[&g], &mut out);
        assert_eq!(count.load(Ordering::Relaxed), 1);
        assert_eq!(out[0].policy, policy);
        // One outside the share runs the network again.
        let mut alone = make(None);
        alone.evaluate_batch(&[&g], &mut out);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        // One over another evaluator keeps a cache of its own, even in the share.
        let other_count = Arc::new(AtomicUsize::new(0));
        let other: Arc<dyn crate::nn::Evaluator> = Arc::new(Counting(
            RandomEvaluator::new(
                RandomEvaluator::info_for(NetGame::KillallGo, NetKind::AlphaZero),
                8,
            ),
            other_count.clone(),
        ));
        let mut third = NetHeuristic::new_in(&share, other, 1, &g, 1024).unwrap();
        third.evaluate_batch(&[&g], &mut out);
        assert_eq!(other_count.load(Ordering::Relaxed), 1);
    }
}
