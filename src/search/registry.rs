//! Gomoku players by name, for the front ends, `pcn match` and `pcn bench`; the per-game
//! default solver ([`default_solver_name`]); and solvers with an optional network
//! ([`SolverNet`], [`make_solver`]) for the engines (`pcn gtp`, the Gomocup `solver` player).

use std::any::TypeId;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::alphabeta::AlphaBeta;
use super::greedy::Greedy;
use super::reference::Ab4;
use super::solver::net::{NetHeuristic, DEFAULT_CACHE_ENTRIES};
use super::solver::{
    solver_by_name, solver_with_heuristic, ProofTree, SolveEvent, SolveOutcome, SolveResult,
    Solver, SolverError, SolverGame, SolverOptions, SOLVER_NAMES,
};
use super::solver_player::{SolverPlay, SolverPlayer};
use super::{Limits, Searcher};
use crate::game::gomoku::Gomoku;
use crate::game::{Color, Game};
use crate::nn::{Evaluator, NetGame, NetInfo, NnError};

/// Registered Gomoku searcher names; the first is the default. `solver` also comes as
/// `solver-dfpn`, `solver-fdfpn`, `solver-mcts` (any solver name).
pub const GOMOKU_SEARCHERS: &[&str] = &["pcn", "greedy", "ab4", "solver"];

/// The solver name that stands for "the best solver of this game" ([`default_solver_name`]):
/// the default of `pcn solve --solver`, `pcn gtp --solver` and the `solver` player.
pub const AUTO_SOLVER: &str = "auto";

/// The best solver of game `G`, which `auto` stands for. Decided by the 60 s measurements
/// on the shared problems (docs/solving.md, network `none`, one thread):
///
/// - Gomoku (4T, threat knowledge): `mcts` solved 25 of 39, focused DFPN about 19;
/// - Killall-Go 9x9: `fdfpn` solved 22 of 41, MCTS far fewer;
///
/// other games get `fdfpn`.
pub fn default_solver_name<G: SolverGame>() -> &'static str {
    // Killall-Go (and any other game) gets focused DFPN.
    if TypeId::of::<G>() == TypeId::of::<Gomoku>() {
        "mcts"
    } else {
        "fdfpn"
    }
}

/// `name` in lower case, with [`AUTO_SOLVER`] replaced by [`default_solver_name`].
pub fn resolve_solver_name<G: SolverGame>(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase();
    if n == AUTO_SOLVER {
        default_solver_name::<G>().to_string()
    } else {
        n
    }
}

/// Whether `name` names a solver ([`SOLVER_NAMES`] or [`AUTO_SOLVER`], any case).
pub fn is_solver_name(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    n == AUTO_SOLVER || SOLVER_NAMES.contains(&n.as_str())
}

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

/// A solver by name ([`AUTO_SOLVER`] allowed) for the engines. Without a network it is
/// [`solver_by_name`]. With one, it is a solver whose heuristic is the network
/// ([`NetHeuristic`], as `pcn solve --net` builds it) for positions the model fits, and the
/// game's default heuristic for other board sizes (a running engine whose board is resized
/// keeps working; the plain solver is made on first use). Plain `dfpn` ignores heuristics.
pub fn make_solver<G: SolverGame>(
    name: &str,
    opts: &SolverOptions,
    net: Option<&SolverNet>,
) -> Result<Box<dyn Solver<G>>, SolverError> {
    let name = resolve_solver_name::<G>(name);
    match net {
        None => solver_by_name::<G>(&name, opts),
        Some(net) => {
            // Both solvers are made on first use (each has its own table); the name is
            // checked now, so that errors come at once.
            if !SOLVER_NAMES.contains(&name.as_str()) {
                return Err(SolverError::UnknownSolver(name));
            }
            Ok(Box::new(NetOrPlain {
                name,
                opts: opts.clone(),
                net: net.clone(),
                with_net: None,
                plain: None,
                last_net: false,
            }))
        }
    }
}

/// A solver with the network heuristic where the model fits the position, and without it
/// elsewhere (see [`make_solver`]). Both are made on first use of their kind.
struct NetOrPlain<G: SolverGame> {
    name: String,
    opts: SolverOptions,
    net: SolverNet,
    with_net: Option<Box<dyn Solver<G>>>,
    plain: Option<Box<dyn Solver<G>>>,
    /// Which one ran last (for [`Solver::proof_tree`]).
    last_net: bool,
}

impl<G: SolverGame> NetOrPlain<G> {
    /// The solver for `game`, made if needed; `None` only if it cannot be made.
    fn pick(&mut self, game: &G) -> Option<&mut Box<dyn Solver<G>>> {
        let use_net = self.net.fits(game);
        self.last_net = use_net;
        if use_net && self.with_net.is_none() {
            let made = NetHeuristic::new(
                self.net.eval.clone(),
                self.net.symmetries,
                game,
                DEFAULT_CACHE_ENTRIES,
            )
            .ok()
            .and_then(|h| solver_with_heuristic::<G>(&self.name, &self.opts, Box::new(h)).ok());
            match made {
                Some(s) => {
                    log::info!(
                        "solver {}: network heuristic of {} ({})",
                        self.name,
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
                self.name,
                game.name()
            );
            self.plain = solver_by_name::<G>(&self.name, &self.opts).ok();
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
        // The registry's own spelling of the name (both solvers carry the same one).
        SOLVER_NAMES
            .iter()
            .copied()
            .find(|n| *n == self.name)
            .unwrap_or("solver")
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

    fn proof_tree(&mut self) -> Option<ProofTree> {
        let s = if self.last_net {
            self.with_net.as_mut()
        } else {
            self.plain.as_mut()
        };
        s?.proof_tree()
    }

    fn clear(&mut self) {
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.clear();
        }
    }

    fn set_memory(&mut self, bytes: usize) {
        self.opts.memory_bytes = bytes;
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.set_memory(bytes);
        }
    }

    fn set_threads(&mut self, threads: usize) {
        self.opts.threads = threads.max(1);
        for s in [&mut self.with_net, &mut self.plain].into_iter().flatten() {
            s.set_threads(threads);
        }
    }
}

/// Table memory of the `solver` player's solver before any `set_memory` (the `pcn` player's
/// table is 64 MiB too).
const SOLVER_PLAYER_TABLE_BYTES: usize = 64 << 20;

/// Fraction of each move the `solver` player gives its solver.
pub const SOLVER_PLAYER_SHARE: f64 = 0.1;

/// What the players are built with beyond their name: the command line's `--threads`,
/// `--seed` and `--net` (the players that have no use for one ignore it).
#[derive(Clone, Debug)]
pub struct PlayerSettings {
    /// Search threads of the solvers that run several (at least 1).
    pub threads: usize,
    /// Seed of the solvers' random choices.
    pub seed: u64,
    /// The solvers' network, used where it fits the board.
    pub net: Option<SolverNet>,
}

impl Default for PlayerSettings {
    fn default() -> Self {
        PlayerSettings {
            threads: 1,
            seed: SolverOptions::default().seed,
            net: None,
        }
    }
}

/// The `solver` player: the named solver ([`AUTO_SOLVER`]: Gomoku's default, see
/// [`default_solver_name`]; with VCF knowledge, and the network of `settings` where it fits)
/// for [`SOLVER_PLAYER_SHARE`] of each move, then the `pcn` alpha-beta player (see
/// [`super::solver_player`]).
pub fn solver_player(solver: &str, settings: &PlayerSettings) -> Option<SolverPlayer<Gomoku>> {
    let opts = SolverOptions {
        memory_bytes: SOLVER_PLAYER_TABLE_BYTES,
        seed: settings.seed,
        threads: settings.threads.max(1),
        ..SolverOptions::default()
    };
    let s = make_solver::<Gomoku>(solver, &opts, settings.net.as_ref()).ok()?;
    Some(SolverPlayer::new(
        "solver",
        s,
        Box::new(AlphaBeta::new()),
        SolverPlay {
            share: SOLVER_PLAYER_SHARE,
            loss_is_lost: false,
        },
    ))
}

/// A fresh Gomoku searcher by registry name (`None` for an unknown name), with the default
/// [`PlayerSettings`].
pub fn gomoku_searcher(name: &str) -> Option<Box<dyn Searcher<Gomoku>>> {
    gomoku_searcher_with(name, &PlayerSettings::default())
}

/// [`gomoku_searcher`] built with `settings` (the `solver` players use its threads, seed and
/// network; the others are single-threaded, deterministic and have no network).
pub fn gomoku_searcher_with(
    name: &str,
    settings: &PlayerSettings,
) -> Option<Box<dyn Searcher<Gomoku>>> {
    match name {
        "pcn" => Some(Box::new(AlphaBeta::new())),
        "greedy" => Some(Box::new(Greedy)),
        "ab4" => Some(Box::new(Ab4::default())),
        "solver" => Some(Box::new(solver_player(AUTO_SOLVER, settings)?)),
        other => {
            let s = other.strip_prefix("solver-")?;
            if !is_solver_name(s) {
                return None;
            }
            Some(Box::new(solver_player(s, settings)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::killallgo::KillallGo;

    #[test]
    fn auto_picks_the_measured_best() {
        assert_eq!(default_solver_name::<Gomoku>(), "mcts");
        assert_eq!(default_solver_name::<KillallGo>(), "fdfpn");
        assert_eq!(resolve_solver_name::<Gomoku>("AUTO"), "mcts");
        assert_eq!(resolve_solver_name::<KillallGo>("auto"), "fdfpn");
        assert_eq!(resolve_solver_name::<KillallGo>("DFPN"), "dfpn");
        assert!(is_solver_name("Auto") && is_solver_name("gpn") && !is_solver_name("pcn"));
        let s = make_solver::<Gomoku>("auto", &SolverOptions::default(), None).unwrap();
        assert_eq!(s.name(), "mcts");
        let s = make_solver::<KillallGo>("auto", &SolverOptions::default(), None).unwrap();
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
        let opts = SolverOptions {
            memory_bytes: 4 << 20,
            ..SolverOptions::default()
        };
        assert!(make_solver::<KillallGo>("nonsense", &opts, Some(&net)).is_err());
        assert_eq!(
            make_solver::<KillallGo>("auto", &opts, Some(&net))
                .unwrap()
                .name(),
            "fdfpn"
        );
        let mut s = make_solver::<KillallGo>("mcts", &opts, Some(&net)).unwrap();
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
}
