//! Players for testing the engine and the protocols' time handling (`--player test-slow`,
//! `--player test-stubborn`, `--player test-frozen`). They wrap a real searcher for the move
//! and then spend time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::game::Game;
use crate::search::{Limits, SearchEvent, SearchResult, Searcher};

/// Plays the inner searcher's move, then waits until its time limit or stop flag: a search
/// that always uses its whole soft budget (proves the clock's budget, not the searcher's
/// speed, decides when the move comes).
pub struct Slow<S>(pub S);

/// Plays the inner searcher's move, then waits until its stop flag only, ignoring the time
/// and node limits: proves the engine's hard deadline and YXSTOP/END work on a searcher that
/// is slow to notice its budget.
pub struct Stubborn<S>(pub S);

/// Reports one finished iteration whose best move is the last legal move (a point no real
/// player would choose), then hangs for 3 s, deaf to its stop flag: proves that a search that
/// misses its hard deadline is answered for with the best move it reported, not a static
/// one.
pub struct Frozen<S>(pub S);

/// How long [`Frozen`] hangs: well past any deadline of the tests that use it.
const FROZEN_FOR: Duration = Duration::from_secs(3);

/// The settings of a test player are its inner searcher's: `clear`, `set_memory` and
/// `set_threads` pass through to field 0.
macro_rules! delegate_settings {
    () => {
        fn clear(&mut self) {
            self.0.clear()
        }
        fn set_memory(&mut self, bytes: usize) {
            self.0.set_memory(bytes)
        }
        fn set_threads(&mut self, threads: usize) {
            self.0.set_threads(threads)
        }
    };
}

fn wait_until(stop: &AtomicBool, deadline: Option<Instant>) {
    while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

impl<G: Game, S: Searcher<G>> Searcher<G> for Slow<S> {
    fn name(&self) -> &'static str {
        "test-slow"
    }
    fn search(
        &mut self,
        game: &G,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let start = Instant::now();
        let r = self.0.search(game, limits, stop, on_event);
        // Without a time limit, a node budget stands for "a short search".
        let t = limits.time.unwrap_or(Duration::from_millis(10));
        wait_until(stop, Some(start + t));
        r
    }
    delegate_settings!();
}

impl<G: Game, S: Searcher<G>> Searcher<G> for Stubborn<S> {
    fn name(&self) -> &'static str {
        "test-stubborn"
    }
    fn search(
        &mut self,
        game: &G,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let r = self.0.search(game, limits, stop, on_event);
        wait_until(stop, None);
        r
    }
    delegate_settings!();
}

impl<G: Game, S: Searcher<G>> Searcher<G> for Frozen<S> {
    fn name(&self) -> &'static str {
        "test-frozen"
    }
    fn search(
        &mut self,
        game: &G,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let start = Instant::now();
        let mut r = self.0.search(game, limits, stop, &mut |_| {});
        let mut legal = Vec::new();
        game.legal_moves(&mut legal);
        if let Some(&m) = legal.last() {
            on_event(&SearchEvent::Info {
                depth: 1,
                nodes: 1,
                score: 0,
                pv: vec![m],
                elapsed: start.elapsed(),
            });
            r.best = Some(m);
            r.pv = vec![m];
        }
        std::thread::sleep(FROZEN_FOR);
        r
    }
    delegate_settings!();
}
