//! Search: the players and (later) solvers. Searches never print; they report typed
//! [`SearchEvent`]s to a callback and return a [`SearchResult`].

pub mod gomoku;
pub mod joblevel;
pub mod registry;
pub mod solver;
pub mod solver_player;
pub mod uct;

/// Memory of a searcher's tables when none is configured, in bytes: the one default of every
/// player and solver (`--memory` and Gomocup's `INFO max_memory` replace it). The engine
/// configuration (`cli::config::EngineConfig`) starts from it and passes its budget down to
/// the front ends, which give it to every searcher they build.
pub const DEFAULT_MEMORY_BYTES: usize = 256 << 20;

/// What a brain process needs besides its search tables (code, evaluation and pattern
/// tables, I/O), with [`PROCESS_RESERVE_PER_THREAD`] for each search thread: Gomocup's
/// `max_memory` caps the whole process, so the tables get it less this. Set from the peak
/// RSS of real brains (docs/notebook/2026-11-27-brain-memory.md), plus about 9 MB since
/// a Gomocup brain builds every rule's pattern tables at its start (2026-12-01: 23.9 MB
/// resident after START against 14.6 MB with one rule's).
pub const PROCESS_RESERVE_BYTES: usize = 29 << 20;

/// The alpha-beta players' own memory per search thread (stacks, threat-search tables).
pub const PROCESS_RESERVE_PER_THREAD: usize = 4 << 20;

/// The solver players' own memory per search thread: each MCTS thread keeps its own
/// threat-search tables, whose size does not follow the memory budget.
pub const SOLVER_RESERVE_PER_THREAD: usize = 44 << 20;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::game::{Color, Game, Move};

/// Limits of one search. `None` means unlimited; a search also stops when its stop flag is set.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Time budget, counted from the search's start.
    pub time: Option<Duration>,
    /// Node budget.
    pub nodes: Option<u64>,
    /// Depth limit (plies), where the algorithm has a notion of depth.
    pub depth: Option<u32>,
}

impl Limits {
    /// Limits with only a node budget (deterministic runs, tests, bench).
    pub fn nodes(n: u64) -> Limits {
        Limits {
            nodes: Some(n),
            ..Limits::default()
        }
    }

    /// Limits with only a time budget.
    pub fn time(t: Duration) -> Limits {
        Limits {
            time: Some(t),
            ..Limits::default()
        }
    }
}

/// Tracks a search's budget: deadline, node count and the external stop flag.
#[derive(Debug)]
pub struct Budget<'a> {
    start: Instant,
    deadline: Option<Instant>,
    max_nodes: u64,
    stop: &'a AtomicBool,
    /// Nodes visited so far.
    pub nodes: u64,
}

impl<'a> Budget<'a> {
    /// A budget for `limits` starting now.
    pub fn new(limits: &Limits, stop: &'a AtomicBool) -> Self {
        let start = Instant::now();
        Budget {
            start,
            deadline: limits.time.map(|t| start + t),
            max_nodes: limits.nodes.unwrap_or(u64::MAX),
            stop,
            nodes: 0,
        }
    }

    /// Whether the search must stop now: node limit, stop flag, and the clock, read at
    /// every call (about 20 ns). Solver nodes differ in cost by orders of magnitude (a
    /// Gomoku node that runs VCT takes ~50 ms, a table hit under a microsecond): reading the
    /// clock only every 256 nodes let the αβ solver overrun a 1 s limit by 7 s after a burst
    /// of cheap nodes, and an adaptive step has the same hole.
    #[inline]
    pub fn exhausted(&self) -> bool {
        self.nodes >= self.max_nodes
            || self.stop.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Like [`Budget::exhausted`], but the clock is read only every 256 nodes: for searches
    /// whose nodes all cost about the same, well under a microsecond (the threat search's).
    #[inline]
    pub fn exhausted_coarse(&self) -> bool {
        if self.nodes >= self.max_nodes || self.stop.load(Ordering::Relaxed) {
            return true;
        }
        match self.deadline {
            Some(d) if self.nodes & 255 == 0 => Instant::now() >= d,
            _ => false,
        }
    }

    /// A budget for a sub-search of at most `nodes` nodes (and no more than this budget has
    /// left), sharing this budget's deadline and stop flag; its nodes count from zero, so the
    /// caller adds them back.
    pub fn sub(&self, nodes: u64) -> Budget<'a> {
        Budget {
            start: self.start,
            deadline: self.deadline,
            max_nodes: nodes.min(self.max_nodes.saturating_sub(self.nodes)),
            stop: self.stop,
            nodes: 0,
        }
    }

    /// Time since the search started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// Progress reports from a search, rendered by the front ends.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchEvent {
    /// Periodic progress.
    Info {
        /// Completed depth (or iteration).
        depth: u32,
        /// Nodes so far.
        nodes: u64,
        /// Score from the side to move's view (centi-units; large = winning).
        score: i32,
        /// Principal variation, best move first.
        pv: Vec<Move>,
        /// Time since the search started.
        elapsed: Duration,
    },
    /// The search proved the game-theoretic result.
    Proven {
        /// The winner (`None`: proven draw).
        winner: Option<Color>,
        /// The winning line from the root, if known.
        line: Vec<Move>,
    },
    /// Per-candidate statistics of the root moves (live analysis), best first.
    Analysis {
        /// Nodes (playouts) so far.
        nodes: u64,
        /// The root moves searched so far.
        candidates: Vec<Candidate>,
    },
}

/// Statistics of one root move, for live analysis (GTP `lz-analyze` / `kata-analyze`).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The move.
    pub mv: Move,
    /// Visits (playouts through this move).
    pub visits: u64,
    /// Win rate for the side to move at the root, 0..1 (exactly 1 / 0 when proven).
    pub winrate: f64,
    /// Prior probability of the move, 0..1.
    pub prior: f64,
    /// Lower confidence bound of the win rate, 0..1.
    pub lcb: f64,
    /// Whether the win rate is a proven game-theoretic value.
    pub proven: bool,
    /// Principal variation starting with the move.
    pub pv: Vec<Move>,
}

/// What a search returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResult {
    /// The move to play (`None` only when the position has no legal move).
    pub best: Option<Move>,
    /// Score from the side to move's view.
    pub score: i32,
    /// `Some(winner)` when the result is proven (`Some(None)`: proven draw).
    pub proven: Option<Option<Color>>,
    /// Nodes searched.
    pub nodes: u64,
    /// Principal variation.
    pub pv: Vec<Move>,
}

/// A player or solver for game `G`, chosen by name. Implementations own their tables.
pub trait Searcher<G: Game>: Send {
    /// The registry name.
    fn name(&self) -> &'static str;
    /// Searches `game` (which it must leave unchanged) within `limits`, until `stop` is set.
    fn search(
        &mut self,
        game: &G,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult;
    /// Forgets everything learned (new game, hash clear).
    fn clear(&mut self) {}
    /// Caps the memory of the searcher's tables, in bytes (0 = [`DEFAULT_MEMORY_BYTES`]).
    fn set_memory(&mut self, _bytes: usize) {}
    /// Sets the search threads (at least 1) of the searchers that run several; the others
    /// ignore it.
    fn set_threads(&mut self, _threads: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_seen_at_the_first_slow_node_after_cheap_ones() {
        // A burst of cheap nodes (table hits), then nodes of 3 ms (threat searches) against
        // a 60 ms limit: with the clock read every 256 nodes this ran about 0.8 s.
        let stop = AtomicBool::new(false);
        let limits = Limits::time(Duration::from_millis(60));
        let mut b = Budget::new(&limits, &stop);
        while b.nodes < 300 && !b.exhausted() {
            b.nodes += 1;
        }
        while !b.exhausted() {
            std::thread::sleep(Duration::from_millis(3));
            b.nodes += 1;
        }
        let t = b.elapsed();
        assert!(t >= Duration::from_millis(60), "stopped early: {t:?}");
        assert!(
            t < Duration::from_millis(400),
            "overran: {t:?} ({} nodes)",
            b.nodes
        );
    }

    #[test]
    fn node_limits_and_the_stop_flag_are_checked_at_every_call() {
        let stop = AtomicBool::new(false);
        let limits = Limits::nodes(10);
        let mut b = Budget::new(&limits, &stop);
        b.nodes = 9;
        assert!(!b.exhausted() && !b.exhausted_coarse());
        b.nodes = 10;
        assert!(b.exhausted() && b.exhausted_coarse());
        b.nodes = 3;
        stop.store(true, Ordering::Relaxed);
        assert!(b.exhausted() && b.exhausted_coarse());
    }
}
