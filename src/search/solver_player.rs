//! Solvers as players: run a [`Solver`] for part of a move's budget, then fall back to an
//! ordinary player when the position was not solved.
//!
//! [`solve_then_search`] is the one place where that policy lives; [`SolverPlayer`] wraps it
//! as a [`Searcher`] (registry name `solver` in Gomoku; the GTP front end calls it from a
//! search task so that the solver can be changed by `pcn-solver`). For one move:
//!
//! 1. the solver tries to prove a win for the side to move with [`SolverPlay::share`] of the
//!    time (and of the node budget in deterministic mode); the engine's hard deadline sets
//!    the stop flag of both parts, so the move is never late;
//! 2. **proven win**: the proof's move ([`SolveOutcome::best`]) is played at once, reported
//!    as [`SearchEvent::Proven`] and as an [`SearchEvent::Analysis`] candidate with win
//!    rate 1;
//! 3. **proven loss** (only where a disproof means a loss: games without draws, see
//!    [`SolverPlay::loss_is_lost`]): the move whose refutation took the solver the most
//!    effort (also [`SolveOutcome::best`]), win rate 0;
//! 4. otherwise (unknown, or Gomoku's "no forced win", which may still be a draw): the
//!    fallback player searches with what is left of the budget and its move is played.
//!
//! The solver's tables persist between moves (they hold proven sub-positions of the game);
//! [`Searcher::clear`] clears both parts.
//!
//! Analysis beside a running solver ([`analyze_beside`]) and a one-off solve ([`solve_once`])
//! live here too; `crate::engine::solving` runs all three as engine tasks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::solver::{SolveEvent, SolveOutcome, SolveResult, Solver, SolverGame};
use super::{Candidate, Limits, SearchEvent, SearchResult, Searcher};
use crate::game::Move;

/// Score of a proven win for the side to move (the Gomoku tasks use the same scale).
pub const PROVEN_SCORE: i32 = 1_000_000;

/// How [`solve_then_search`] divides a move between the solver and the fallback player.
#[derive(Clone, Debug, PartialEq)]
pub struct SolverPlay {
    /// Fraction (0..=1) of the move's time and node budget given to the solver first.
    pub share: f64,
    /// Whether a disproof (the side to move cannot force a win) means the side to move
    /// loses. True for games without draws (Killall-Go); false for Gomoku, where the
    /// fallback player then chooses the move (the solver's "hardest refutation" is no
    /// defence against a mere draw).
    pub loss_is_lost: bool,
}

impl Default for SolverPlay {
    fn default() -> Self {
        SolverPlay {
            share: 0.3,
            loss_is_lost: false,
        }
    }
}

/// The solver's part of `limits`: `share` of the time and nodes (at least 1 ms / 1 node).
/// Unlimited stays unlimited (analysis: the solver runs until the stop flag).
pub fn solver_limits(limits: &Limits, share: f64) -> Limits {
    let share = share.clamp(0.0, 1.0);
    Limits {
        time: limits
            .time
            .map(|t| t.mul_f64(share).max(Duration::from_millis(1))),
        nodes: limits
            .nodes
            .map(|n| ((n as f64 * share) as u64).clamp(1, n.max(1))),
        depth: None,
    }
}

/// A proven root move as an analysis candidate (`winrate` 1 for a win, 0 for a loss).
pub fn proven_candidate(mv: Move, win: bool, visits: u64) -> Candidate {
    let v = if win { 1.0 } else { 0.0 };
    Candidate {
        mv,
        visits: visits.max(1),
        winrate: v,
        prior: 1.0,
        lcb: v,
        proven: true,
        pv: vec![mv],
    }
}

/// The move a solver's outcome decides, with whether it wins: a proven win's move, or (when
/// `loss_is_lost`) a proven loss's hardest refutation; `None` when the fallback must choose
/// (unknown, a disproof in a game with draws, or a move that is not in `legal`).
pub fn decided_move(
    out: &SolveOutcome,
    legal: &[Move],
    loss_is_lost: bool,
) -> Option<(Move, bool)> {
    let best = out.best.filter(|m| legal.contains(m))?;
    match out.result {
        SolveResult::Win => Some((best, true)),
        SolveResult::Loss if loss_is_lost => Some((best, false)),
        _ => None,
    }
}

/// The result for a move decided by a solver (see [`decided_move`]).
pub fn decided_result<G: SolverGame>(game: &G, mv: Move, win: bool, nodes: u64) -> SearchResult {
    let me = game.to_move();
    let winner = if win { me } else { me.opp() };
    SearchResult {
        best: Some(mv),
        score: if win { PROVEN_SCORE } else { -PROVEN_SCORE },
        proven: Some(Some(winner)),
        nodes,
        pv: vec![mv],
    }
}

/// Translates a solver's progress into the players' events (Gomocup `MESSAGE` lines, GTP
/// logs): nodes, best move so far and, for MCTS, the root value as a score.
fn progress_event(e: &SolveEvent) -> Option<SearchEvent> {
    match e {
        SolveEvent::Progress {
            nodes,
            elapsed,
            best,
            value,
            ..
        } => Some(SearchEvent::Info {
            depth: 0,
            nodes: *nodes,
            score: value.map_or(0, |v| (v.clamp(-1.0, 1.0) * 1000.0) as i32),
            pv: best.iter().copied().collect(),
            elapsed: *elapsed,
        }),
        // Reported by `solve_then_search` itself once the move is known to be legal.
        SolveEvent::Solved { .. } => None,
    }
}

/// Sets both flags when dropped: ends [`solve_until`]'s watcher even if the solver panics.
struct EndOnDrop<'a>(&'a AtomicBool, &'a AtomicBool);

impl Drop for EndOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        self.1.store(true, Ordering::Relaxed);
    }
}

/// `solver.solve` with a stop flag that a watcher thread sets at `deadline` (or when `stop`
/// is set). The solvers read the clock only every 256 nodes, and a node can carry a
/// knowledge search of thousands of threat nodes, so their own time limit can be overrun by
/// far more than a move's margin; the flag is read at every node.
fn solve_until<G: SolverGame>(
    solver: &mut dyn Solver<G>,
    game: &G,
    limits: &Limits,
    stop: &AtomicBool,
    deadline: Instant,
    on_event: &mut dyn FnMut(&SolveEvent),
) -> SolveOutcome {
    let local = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let (local, done) = (&local, &done);
        sc.spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
                    local.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let _end = EndOnDrop(local, done);
        solver.solve(game, game.to_move(), limits, local, on_event)
    })
}

/// Runs `solver` on `game` for the side to move with [`SolverPlay::share`] of `limits`, then
/// `fallback` with the rest when the result does not decide the move (see the module docs).
/// Returns the move to play; `proven` is set only from the solver's proof (or from the
/// fallback's own proof).
pub fn solve_then_search<G: SolverGame>(
    solver: &mut dyn Solver<G>,
    fallback: &mut dyn Searcher<G>,
    cfg: &SolverPlay,
    game: &G,
    limits: &Limits,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&SearchEvent),
) -> SearchResult {
    let start = Instant::now();
    let me = game.to_move();
    let mut legal = Vec::new();
    game.legal_moves(&mut legal);
    if game.outcome().is_some() || legal.is_empty() {
        return fallback.search(game, limits, stop, on_event);
    }
    let sl = solver_limits(limits, cfg.share);
    let mut relay = |e: &SolveEvent| {
        if let Some(ev) = progress_event(e) {
            on_event(&ev);
        }
    };
    let out: SolveOutcome = match sl.time {
        Some(t) => solve_until(solver, game, &sl, stop, start + t, &mut relay),
        None => solver.solve(game, me, &sl, stop, &mut relay),
    };
    let best = out.best.filter(|m| legal.contains(m));
    if let Some((mv, win)) = decided_move(&out, &legal, cfg.loss_is_lost) {
        let r = decided_result(game, mv, win, out.stats.nodes);
        on_event(&SearchEvent::Analysis {
            nodes: out.stats.nodes,
            candidates: vec![proven_candidate(mv, win, out.stats.nodes)],
        });
        on_event(&SearchEvent::Proven {
            winner: r.proven.flatten(),
            line: vec![mv],
        });
        return r;
    }
    // Unknown (or no forced win in a game with draws): the fallback gets what is left.
    let rest = Limits {
        time: limits.time.map(|t| {
            t.saturating_sub(start.elapsed())
                .max(Duration::from_millis(1))
        }),
        nodes: limits
            .nodes
            .map(|n| n.saturating_sub(sl.nodes.unwrap_or(0)).max(1)),
        depth: limits.depth,
    };
    let mut r = fallback.search(game, &rest, stop, on_event);
    r.nodes = r.nodes.saturating_add(out.stats.nodes);
    if r.best.is_none_or(|m| !legal.contains(&m)) {
        r.best = best.or(legal.first().copied());
    }
    r
}

/// Sets the solver's stop flag and the relay's end flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool, &'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        self.1.store(true, Ordering::Relaxed);
    }
}

/// Analysis with a solver: `solver` runs on a second thread beside `player`'s analysis (so
/// analysis events start at once), with [`SolverPlay::share`] of a node budget or until the
/// analysis stops. When it decides the root (see [`decided_move`]), the player's search is
/// stopped and the proven move is reported as the only candidate (win rate 1, or 0 for a
/// proven loss where [`SolverPlay::loss_is_lost`]); otherwise the player's analysis is
/// reported as usual. Returns the decided result, or the player's.
pub fn analyze_beside<G: SolverGame>(
    solver: &mut dyn Solver<G>,
    player: &mut dyn Searcher<G>,
    cfg: &SolverPlay,
    game: &G,
    limits: &Limits,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&SearchEvent),
) -> SearchResult {
    let mut legal = Vec::new();
    game.legal_moves(&mut legal);
    let sl = solver_limits(limits, cfg.share);
    let loss_is_lost = cfg.loss_is_lost;
    // The player's search and the solver stop on `inner`: set by the caller's stop (relayed
    // below), by a proof, or (timed mode) when the player's search ends.
    let inner = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let decided: Mutex<Option<(Move, bool, u64)>> = Mutex::new(None);
    std::thread::scope(|sc| {
        let (inner, done, decided, legal) = (&inner, &done, &decided, &legal);
        // Ends both helper threads even if the player's search panics (the engine catches
        // the panic, but only after the scope has joined its threads).
        let _guard = StopOnDrop(inner, done);
        sc.spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    inner.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let pos = game.clone();
        let solver_thread = sc.spawn(move || {
            let out = solver.solve(&pos, pos.to_move(), &sl, inner, &mut |_| {});
            if let Some((mv, win)) = decided_move(&out, legal, loss_is_lost) {
                *decided.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((mv, win, out.stats.nodes));
                inner.store(true, Ordering::Relaxed);
            }
        });
        let proven = || *decided.lock().unwrap_or_else(|e| e.into_inner());
        let mut relay = |e: &SearchEvent| match (e, proven()) {
            (SearchEvent::Analysis { .. }, Some((mv, win, n))) => {
                on_event(&SearchEvent::Analysis {
                    nodes: n,
                    candidates: vec![proven_candidate(mv, win, n)],
                })
            }
            _ => on_event(e),
        };
        let r = player.search(game, limits, inner, &mut relay);
        if limits.nodes.is_none() {
            inner.store(true, Ordering::Relaxed);
        }
        let _ = solver_thread.join();
        done.store(true, Ordering::Relaxed);
        match proven() {
            Some((mv, win, n)) => {
                relay(&SearchEvent::Analysis {
                    nodes: n,
                    candidates: Vec::new(),
                });
                decided_result(game, mv, win, n)
            }
            None => r,
        }
    })
}

/// One solve of the side to move as a search result: the proof's move and `proven` for a
/// win, the prover's loss (the opponent wins, or at best a draw) for a disproof, the best
/// move so far when unknown (`pcn-solve`).
pub fn solve_once<G: SolverGame>(
    solver: &mut dyn Solver<G>,
    game: &G,
    limits: &Limits,
    stop: &AtomicBool,
) -> SearchResult {
    let prover = game.to_move();
    let out = solver.solve(game, prover, limits, stop, &mut |_| {});
    SearchResult {
        best: out.best,
        proven: match out.result {
            SolveResult::Win => Some(Some(prover)),
            // Loss: the prover cannot force a win (the opponent wins, or a draw).
            SolveResult::Loss => Some(Some(prover.opp())),
            SolveResult::Unknown => None,
        },
        nodes: out.stats.nodes,
        ..SearchResult::default()
    }
}

/// A [`Searcher`] that runs a solver first and a fallback player for the rest of the move
/// (see the module docs).
pub struct SolverPlayer<G: SolverGame> {
    name: &'static str,
    solver: Box<dyn Solver<G>>,
    fallback: Box<dyn Searcher<G>>,
    cfg: SolverPlay,
}

impl<G: SolverGame> SolverPlayer<G> {
    /// A player named `name` that runs `solver` with `cfg.share` of each move's budget and
    /// `fallback` for the rest.
    pub fn new(
        name: &'static str,
        solver: Box<dyn Solver<G>>,
        fallback: Box<dyn Searcher<G>>,
        cfg: SolverPlay,
    ) -> Self {
        SolverPlayer {
            name,
            solver,
            fallback,
            cfg,
        }
    }
}

impl<G: SolverGame> Searcher<G> for SolverPlayer<G> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn search(
        &mut self,
        game: &G,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        solve_then_search(
            self.solver.as_mut(),
            self.fallback.as_mut(),
            &self.cfg,
            game,
            limits,
            stop,
            on_event,
        )
    }

    fn clear(&mut self) {
        self.solver.clear();
        self.fallback.clear();
    }

    /// Half of the budget each for the solver's table and the fallback's.
    fn set_memory(&mut self, bytes: usize) {
        let half = if bytes == 0 {
            0
        } else {
            (bytes / 2).max(1 << 20)
        };
        self.solver.set_memory(half);
        self.fallback.set_memory(half);
    }

    fn set_threads(&mut self, threads: usize) {
        self.solver.set_threads(threads);
        self.fallback.set_threads(threads);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::{Gomoku, Rule};
    use crate::game::{Color, Game};
    use crate::search::gomoku::greedy::Greedy;
    use crate::search::solver::{solver_by_name, SolverOptions};

    fn opts() -> SolverOptions {
        SolverOptions::with_memory(4 << 20)
    }

    fn play(g: &mut Gomoku, moves: &str) {
        for s in moves.split_whitespace() {
            let m = g.parse_gtp(s).unwrap();
            g.play(m).unwrap();
        }
    }

    #[test]
    fn proven_win_plays_the_proof_move() {
        // Black has an open three on row 3 (B3 C3 D3) and White nothing: Black wins by
        // making an open four (A3 or E3); the greedy fallback is never asked.
        let mut g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
        play(&mut g, "C3 J9 D3 J7 B3 A9");
        for name in ["dfpn", "fdfpn", "mcts"] {
            let solver = solver_by_name::<Gomoku>(name, &opts()).unwrap();
            let mut p =
                SolverPlayer::new("solver", solver, Box::new(Greedy), SolverPlay::default());
            let stop = AtomicBool::new(false);
            let mut proven_ev = false;
            let r = p.search(&g, &Limits::nodes(20_000), &stop, &mut |e| {
                proven_ev |= matches!(e, SearchEvent::Proven { .. });
            });
            assert_eq!(r.proven, Some(Some(Color::Black)), "{name}");
            assert!(proven_ev, "{name}");
            let m = r.best.unwrap();
            // The move must keep the win: after it, Black still wins (checked by a fresh
            // solve for Black with White to move).
            let mut after = g.clone();
            after.play(m).unwrap();
            let mut check = solver_by_name::<Gomoku>("dfpn", &opts()).unwrap();
            let o = check.solve(
                &after,
                Color::Black,
                &Limits::nodes(50_000),
                &stop,
                &mut |_| {},
            );
            assert_eq!(
                o.result,
                SolveResult::Win,
                "{name} played {}",
                g.move_to_gtp(m)
            );
        }
    }

    #[test]
    fn unknown_falls_back_to_the_player() {
        // The empty board cannot be solved in 50 nodes: the greedy fallback plays the centre.
        let g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let solver = solver_by_name::<Gomoku>("dfpn", &opts()).unwrap();
        let mut p = SolverPlayer::new("solver", solver, Box::new(Greedy), SolverPlay::default());
        let stop = AtomicBool::new(false);
        let r = p.search(&g, &Limits::nodes(50), &stop, &mut |_| {});
        assert_eq!(r.proven, None);
        assert_eq!(r.best, Some(7 * 15 + 7));
    }

    #[test]
    fn limits_split() {
        let l = Limits {
            time: Some(Duration::from_millis(1000)),
            nodes: Some(1000),
            depth: None,
        };
        let s = solver_limits(&l, 0.3);
        assert_eq!(s.time, Some(Duration::from_millis(300)));
        assert_eq!(s.nodes, Some(300));
        assert_eq!(solver_limits(&Limits::nodes(1), 0.0).nodes, Some(1));
        assert_eq!(solver_limits(&Limits::default(), 0.5).time, None);
    }
}
