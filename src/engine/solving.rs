//! The solver in the engine's search thread: one mechanism for "solver first, then player"
//! (a move), analysis beside a running solver, and a one-off solve, as [`Task`]s over a
//! solver that the front end may replace between commands ([`SharedSolver`]). The policies
//! themselves live in [`crate::search::solver_player`]; the front ends only choose which
//! task a command runs. (A player built around its own solver, such as Gomocup's `solver`
//! players, uses the same [`solve_then_search`] through
//! [`crate::search::solver_player::SolverPlayer`].)

use std::sync::{Arc, Mutex, MutexGuard};

use super::Task;
use crate::search::registry::{self, SolverNet};
use crate::search::solver::{Solver, SolverChoice, SolverGame, SolverOptions};
use crate::search::solver_player::{analyze_beside, solve_once, solve_then_search, SolverPlay};
use crate::search::SearchResult;

/// A solver shared between the front end (which replaces or clears it between commands)
/// and the search tasks (only one of them runs at a time); `None` when switched off.
pub type SharedSolver<G> = Arc<Mutex<Option<Box<dyn Solver<G>>>>>;

/// Locks the shared solver; a panic in an earlier task (caught by the engine) does not make
/// it unusable.
pub fn lock<G: SolverGame>(s: &SharedSolver<G>) -> MutexGuard<'_, Option<Box<dyn Solver<G>>>> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// A move: the shared solver first with `cfg`'s share, then the engine's player (see
/// [`solve_then_search`]); the player alone when the solver is switched off.
pub fn play_task<G: SolverGame>(shared: SharedSolver<G>, cfg: SolverPlay) -> Task<G> {
    Box::new(
        move |player, game, limits, stop, on_event| match lock(&shared).as_mut() {
            Some(s) => solve_then_search(s.as_mut(), player, &cfg, game, limits, stop, on_event),
            None => player.search(game, limits, stop, on_event),
        },
    )
}

/// Analysis: the engine's player analyses while the shared solver runs beside it (see
/// [`analyze_beside`]); the player alone when the solver is switched off.
pub fn analysis_task<G: SolverGame>(shared: SharedSolver<G>, cfg: SolverPlay) -> Task<G> {
    Box::new(
        move |player, game, limits, stop, on_event| match lock(&shared).as_mut() {
            Some(s) => analyze_beside(s.as_mut(), player, &cfg, game, limits, stop, on_event),
            None => player.search(game, limits, stop, on_event),
        },
    )
}

/// A one-off solve of the side to move with a fresh solver (so the answer does not depend
/// on earlier searches), built by [`registry::build`] from `choice`, `opts` and `net`; the
/// engine's player is not used. A solver that cannot be built gives an empty result.
pub fn solve_task<G: SolverGame>(
    choice: SolverChoice,
    opts: SolverOptions,
    net: Option<SolverNet>,
) -> Task<G> {
    Box::new(move |_player, game, limits, stop, _on_event| {
        match registry::build::<G>(choice, &opts, net.as_ref()) {
            Ok(mut solver) => solve_once(solver.as_mut(), game, limits, stop),
            Err(_) => SearchResult::default(),
        }
    })
}
