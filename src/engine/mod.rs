//! The engine layer: runs any [`Searcher`] on a background thread so that a protocol front end
//! keeps reading its input while the search thinks.
//!
//! The front end owns an [`Engine`]. [`Engine::search`] sends a copy of the position and the
//! limits to the search thread and returns at once with a [`SearchId`]; progress and the final
//! result come back as [`EngineEvent`]s on [`Engine::events`] (a crossbeam channel, so the
//! front end can `select!` over it and its input lines). Each search gets its own stop flag:
//! [`Engine::stop`] sets it (YXSTOP, END), and a timer thread sets it at the hard deadline, so
//! a move is never late even when the searcher only looks at its own soft budget.
//!
//! Jobs run strictly in order on one thread; a job sent while another runs waits for it.

pub mod clock;
pub mod solving;
pub mod testing;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{unbounded, Receiver, RecvTimeoutError, Sender};

use crate::game::Game;
use crate::search::{Limits, SearchEvent, SearchResult, Searcher};

/// Identifies one search (or task) started on an [`Engine`].
pub type SearchId = u64;

/// A custom job run on the search thread with the engine's searcher: multi-PV, opening
/// choices and other analyses built from several searches. It must honour the stop flag and
/// may report through the event callback.
pub type Task<G> = Box<
    dyn FnOnce(
            &mut dyn Searcher<G>,
            &G,
            &Limits,
            &AtomicBool,
            &mut dyn FnMut(&SearchEvent),
        ) -> SearchResult
        + Send,
>;

/// A change to the searcher's settings, run on the search thread between searches.
pub type Configure<G> = Box<dyn FnOnce(&mut dyn Searcher<G>) + Send>;

/// What the search thread reports.
#[derive(Clone, Debug)]
pub enum EngineEvent {
    /// A progress report of search `id`.
    Progress {
        /// The search.
        id: SearchId,
        /// The searcher's event.
        event: SearchEvent,
    },
    /// Search `id` ended (normally, by its limits, or stopped).
    Finished {
        /// The search.
        id: SearchId,
        /// Its result.
        result: SearchResult,
        /// Time the search ran on the search thread.
        elapsed: Duration,
    },
}

enum Job<G: Game> {
    Run {
        id: SearchId,
        game: G,
        limits: Limits,
        stop: Arc<AtomicBool>,
        task: Option<Task<G>>,
    },
    Configure(Configure<G>),
}

enum TimerCmd {
    Arm(Instant, Arc<AtomicBool>),
}

/// A background search thread for one searcher. See the module docs.
pub struct Engine<G: Game> {
    jobs: Option<Sender<Job<G>>>,
    events: Receiver<EngineEvent>,
    timer: Sender<TimerCmd>,
    /// The latest started search and its stop flag.
    current: Option<(SearchId, Arc<AtomicBool>)>,
    next_id: SearchId,
    // Kept only to document ownership; never joined (see Drop).
    _worker: Option<JoinHandle<()>>,
}

impl<G: Game> Engine<G> {
    /// Starts the search thread (and its deadline timer) for `searcher`.
    pub fn new(searcher: Box<dyn Searcher<G>>) -> Self {
        let (job_tx, job_rx) = unbounded::<Job<G>>();
        let (ev_tx, ev_rx) = unbounded();
        let (timer_tx, timer_rx) = unbounded();
        let worker = std::thread::Builder::new()
            .name("pcn-search".into())
            .spawn(move || worker_loop(searcher, job_rx, ev_tx))
            .ok();
        // If the timer thread cannot start, searches still stop by their soft limits.
        let _ = std::thread::Builder::new()
            .name("pcn-timer".into())
            .spawn(move || timer_loop(timer_rx));
        Engine {
            jobs: Some(job_tx),
            events: ev_rx,
            timer: timer_tx,
            current: None,
            next_id: 1,
            _worker: worker,
        }
    }

    /// The channel of progress reports and results.
    pub fn events(&self) -> &Receiver<EngineEvent> {
        &self.events
    }

    /// Starts searching a copy of `game` within `limits`. At `hard_deadline` the engine sets
    /// the search's stop flag itself.
    pub fn search(&mut self, game: G, limits: Limits, hard_deadline: Option<Instant>) -> SearchId {
        self.submit(game, limits, hard_deadline, None)
    }

    /// Runs a custom [`Task`] on the search thread like a search.
    pub fn run_task(
        &mut self,
        game: G,
        limits: Limits,
        hard_deadline: Option<Instant>,
        task: Task<G>,
    ) -> SearchId {
        self.submit(game, limits, hard_deadline, Some(task))
    }

    fn submit(
        &mut self,
        game: G,
        limits: Limits,
        hard_deadline: Option<Instant>,
        task: Option<Task<G>>,
    ) -> SearchId {
        let id = self.next_id;
        self.next_id += 1;
        let stop = Arc::new(AtomicBool::new(false));
        if let Some(d) = hard_deadline {
            let _ = self.timer.send(TimerCmd::Arm(d, stop.clone()));
        }
        self.current = Some((id, stop.clone()));
        let job = Job::Run {
            id,
            game,
            limits,
            stop,
            task,
        };
        if let Some(tx) = &self.jobs {
            if tx.send(job).is_err() {
                log::error!("search thread is gone");
            }
        }
        id
    }

    /// Asks the latest search to stop now; its result still arrives as
    /// [`EngineEvent::Finished`].
    pub fn stop(&self) {
        if let Some((_, stop)) = &self.current {
            stop.store(true, Ordering::Relaxed);
        }
    }

    /// Changes the searcher's settings (runs after any search in progress).
    pub fn configure(&self, f: Configure<G>) {
        if let Some(tx) = &self.jobs {
            let _ = tx.send(Job::Configure(f));
        }
    }

    /// Clears the searcher's learned state (hash tables).
    pub fn clear(&self) {
        self.configure(Box::new(|s| s.clear()));
    }

    /// Caps the searcher's table memory in bytes (0 = default).
    pub fn set_memory(&self, bytes: usize) {
        self.configure(Box::new(move |s| s.set_memory(bytes)));
    }

    /// Sets the searcher's search threads (see [`Searcher::set_threads`]).
    pub fn set_threads(&self, threads: usize) {
        self.configure(Box::new(move |s| s.set_threads(threads)));
    }

    /// Blocks until search `id` finishes and returns its result, dropping other events.
    /// `None` if the search thread died.
    pub fn wait(&self, id: SearchId) -> Option<SearchResult> {
        loop {
            match self.events.recv() {
                Ok(EngineEvent::Finished { id: i, result, .. }) if i == id => return Some(result),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// Searches and waits for the result (tools, tests, bench).
    pub fn search_blocking(
        &mut self,
        game: G,
        limits: Limits,
        hard_deadline: Option<Instant>,
    ) -> Option<SearchResult> {
        let id = self.search(game, limits, hard_deadline);
        self.wait(id)
    }
}

impl<G: Game> Drop for Engine<G> {
    fn drop(&mut self) {
        self.stop();
        // Closing the job channel ends the worker after its current job. It is not joined:
        // END must exit promptly even if a searcher is slow to notice its stop flag.
        self.jobs = None;
        self._worker = None;
    }
}

fn worker_loop<G: Game>(
    mut searcher: Box<dyn Searcher<G>>,
    jobs: Receiver<Job<G>>,
    events: Sender<EngineEvent>,
) {
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Configure(f) => f(searcher.as_mut()),
            Job::Run {
                id,
                game,
                limits,
                stop,
                task,
            } => {
                let start = Instant::now();
                let mut on_event = |e: &SearchEvent| {
                    let _ = events.send(EngineEvent::Progress {
                        id,
                        event: e.clone(),
                    });
                };
                // A panicking searcher (a bug) must not take the brain down: report an empty
                // result (the front end then answers its fallback move) and keep serving.
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match task {
                    Some(t) => t(searcher.as_mut(), &game, &limits, &stop, &mut on_event),
                    None => searcher.search(&game, &limits, &stop, &mut on_event),
                }));
                let result = run.unwrap_or_else(|_| {
                    log::error!("search {id} panicked");
                    SearchResult::default()
                });
                let _ = events.send(EngineEvent::Finished {
                    id,
                    result,
                    elapsed: start.elapsed(),
                });
            }
        }
    }
}

fn timer_loop(rx: Receiver<TimerCmd>) {
    let mut armed: Option<(Instant, Arc<AtomicBool>)> = None;
    loop {
        let msg = match &armed {
            Some((d, _)) => rx.recv_deadline(*d),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match msg {
            // A newer search replaces the older one's deadline; the older one has either
            // finished or been superseded (its flag is then set by `stop`).
            Ok(TimerCmd::Arm(d, flag)) => armed = Some((d, flag)),
            Err(RecvTimeoutError::Timeout) => {
                if let Some((_, flag)) = armed.take() {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::{Gomoku, Rule};
    use crate::search::gomoku::greedy::Greedy;
    use crate::search::Budget;

    /// A searcher that only stops when its stop flag is set (ignores its own time limit), to
    /// prove the engine's timer enforces the hard deadline.
    struct Stubborn;
    impl Searcher<Gomoku> for Stubborn {
        fn name(&self) -> &'static str {
            "stubborn"
        }
        fn search(
            &mut self,
            game: &Gomoku,
            _limits: &Limits,
            stop: &AtomicBool,
            _on_event: &mut dyn FnMut(&SearchEvent),
        ) -> SearchResult {
            let budget = Budget::new(&Limits::default(), stop);
            while !budget.exhausted() {
                std::thread::sleep(Duration::from_millis(1));
            }
            let mut legal = Vec::new();
            game.legal_moves(&mut legal);
            SearchResult {
                best: legal.first().copied(),
                ..SearchResult::default()
            }
        }
    }

    #[test]
    fn runs_greedy_in_background() {
        let mut e: Engine<Gomoku> = Engine::new(Box::new(Greedy));
        let g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let r = e.search_blocking(g, Limits::default(), None).unwrap();
        // Greedy opens in the centre: (7, 7) is action 7 * 15 + 7.
        assert_eq!(r.best, Some(7 * 15 + 7));
    }

    #[test]
    fn hard_deadline_stops_a_stubborn_searcher() {
        let mut e: Engine<Gomoku> = Engine::new(Box::new(Stubborn));
        let g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let t0 = Instant::now();
        let r = e
            .search_blocking(g, Limits::default(), Some(t0 + Duration::from_millis(100)))
            .unwrap();
        let el = t0.elapsed();
        assert!(r.best.is_some());
        assert!(el >= Duration::from_millis(100), "stopped early: {el:?}");
        assert!(el < Duration::from_secs(3), "deadline ignored: {el:?}");
    }

    #[test]
    fn stop_ends_search() {
        let mut e: Engine<Gomoku> = Engine::new(Box::new(Stubborn));
        let g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let id = e.search(g, Limits::default(), None);
        std::thread::sleep(Duration::from_millis(30));
        let t0 = Instant::now();
        e.stop();
        assert!(e.wait(id).unwrap().best.is_some());
        assert!(t0.elapsed() < Duration::from_secs(3));
    }

    struct Panicky;
    impl Searcher<Gomoku> for Panicky {
        fn name(&self) -> &'static str {
            "panicky"
        }
        fn search(
            &mut self,
            _game: &Gomoku,
            _limits: &Limits,
            _stop: &AtomicBool,
            _on_event: &mut dyn FnMut(&SearchEvent),
        ) -> SearchResult {
            panic!("searcher bug (expected in this test)")
        }
    }

    #[test]
    fn panicking_searcher_yields_empty_result_and_engine_survives() {
        let mut e: Engine<Gomoku> = Engine::new(Box::new(Panicky));
        let g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
        for _ in 0..2 {
            let r = e
                .search_blocking(g.clone(), Limits::default(), None)
                .unwrap();
            assert_eq!(r.best, None);
        }
    }

    #[test]
    fn tasks_and_configure_run_in_order() {
        let mut e: Engine<Gomoku> = Engine::new(Box::new(Greedy));
        e.clear();
        e.set_memory(1 << 20);
        let g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
        let id = e.run_task(
            g,
            Limits::nodes(5),
            None,
            Box::new(|s, game, limits, stop, ev| {
                let mut r = s.search(game, limits, stop, ev);
                r.score = 4242;
                r
            }),
        );
        let r = e.wait(id).unwrap();
        assert_eq!(r.score, 4242);
        assert_eq!(r.best, Some(4 * 9 + 4));
    }
}
