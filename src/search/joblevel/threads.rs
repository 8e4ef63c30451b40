//! Workers as threads in this process: each owns one solver (made by a factory, so that all
//! of them share the network evaluator the factory captured) and runs one job at a time.
//!
//! A worker whose solver panics answers the job as failed (the manager sends it again) and
//! makes a new solver for its next job; a worker that cannot make a solver is lost, and its
//! job goes to the others. Jobs that find no idle worker wait in a queue here.

use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};

use super::{Job, JobAnswer, Transport, TransportEvent};
use crate::game::{Color, Move};
use crate::search::solver::{SolveEvent, SolveResult, Solver, SolverGame};
use crate::search::Limits;

/// Makes worker `index`'s solver (`None`: it cannot, and the worker is lost). `memory` is
/// the table budget of all workers together; with `share` the solver may keep its tables in
/// one shared by all workers (a [`crate::search::solver::tt::TableGroup`], which then has
/// the whole budget), otherwise it takes its part of the budget for tables of its own.
/// The deterministic mode's jobs ([`Job::fresh`]) are run with `share` off, so that no other
/// worker's timing can change their answers.
pub type WorkerFactory<G> =
    Arc<dyn Fn(usize, usize, bool) -> Option<Box<dyn Solver<G>>> + Send + Sync>;

enum Msg<G> {
    Job {
        root: G,
        prover: Color,
        job: Job,
        stop: Arc<AtomicBool>,
    },
    Known {
        game: G,
        prover: Color,
        result: SolveResult,
    },
    Clear,
    Memory(usize),
    Quit,
}

/// Worker threads behind the [`Transport`] interface (see the module docs).
pub struct ThreadTransport<G: SolverGame> {
    senders: Vec<Sender<Msg<G>>>,
    handles: Vec<Option<JoinHandle<()>>>,
    events: Receiver<TransportEvent>,
    /// The job each worker runs.
    assigned: Vec<Option<u64>>,
    alive: Vec<bool>,
    pending: VecDeque<Job>,
    cancels: HashMap<u64, Arc<AtomicBool>>,
    synthetic: VecDeque<TransportEvent>,
    root: Option<(G, Color)>,
    /// Makes the solvers: also the one that reads the shared table for [`Transport::peek`].
    factory: WorkerFactory<G>,
    memory: usize,
    /// A solver on the workers' shared table, never searching: it only reads the table
    /// (`None` until the first peek; `Some(None)` when the workers do not share one).
    reader: Option<Option<Box<dyn Solver<G>>>>,
}

impl<G: SolverGame> ThreadTransport<G> {
    /// Starts `workers` threads whose solvers `factory` makes (lazily, at the first job),
    /// with `memory` bytes of tables for all of them together.
    pub fn new(workers: usize, memory: usize, factory: WorkerFactory<G>) -> ThreadTransport<G> {
        let (etx, erx) = channel::unbounded();
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        let mut alive = Vec::new();
        for i in 0..workers.max(1) {
            let (tx, rx) = channel::unbounded::<Msg<G>>();
            let (f, etx) = (factory.clone(), etx.clone());
            let h = std::thread::Builder::new()
                .name(format!("pcn-worker{i}"))
                .spawn(move || worker_loop(i, rx, etx, f, memory));
            alive.push(h.is_ok());
            handles.push(h.ok());
            senders.push(tx);
        }
        ThreadTransport {
            assigned: vec![None; senders.len()],
            senders,
            handles,
            events: erx,
            alive,
            pending: VecDeque::new(),
            cancels: HashMap::new(),
            synthetic: VecDeque::new(),
            root: None,
            factory,
            memory,
            reader: None,
        }
    }

    fn idle(&self, w: usize) -> bool {
        self.alive[w] && self.assigned[w].is_none()
    }

    /// Gives `job` to worker `w` (idle and alive); the job back if its thread is gone.
    fn dispatch(&mut self, w: usize, job: Job) -> Result<(), Job> {
        let Some((root, prover)) = self.root.clone() else {
            return Err(job);
        };
        let stop = self
            .cancels
            .entry(job.id)
            .or_insert_with(|| Arc::new(AtomicBool::new(false)))
            .clone();
        let (id, back) = (job.id, job.clone());
        let sent = self.senders[w].send(Msg::Job {
            root,
            prover,
            job,
            stop,
        });
        if sent.is_err() {
            self.alive[w] = false;
            return Err(back);
        }
        self.assigned[w] = Some(id);
        Ok(())
    }

    /// Sends queued jobs to idle workers.
    fn drain_pending(&mut self) {
        while let Some(job) = self.pending.pop_front() {
            match (0..self.senders.len()).find(|&w| self.idle(w)) {
                Some(w) => {
                    if let Err(job) = self.dispatch(w, job) {
                        self.pending.push_front(job);
                    }
                }
                None => {
                    self.pending.push_front(job);
                    return;
                }
            }
        }
    }

    fn note(&mut self, ev: &TransportEvent) {
        let (id, worker, lost) = match ev {
            TransportEvent::Answer(a) => (a.id, a.worker, false),
            TransportEvent::Failed {
                id,
                worker,
                worker_lost,
                ..
            } => (*id, *worker, *worker_lost),
        };
        self.cancels.remove(&id);
        if let Some(a) = self.assigned.get_mut(worker) {
            if *a == Some(id) {
                *a = None;
            }
        }
        if lost {
            if let Some(a) = self.alive.get_mut(worker) {
                *a = false;
            }
        }
        self.drain_pending();
    }
}

impl<G: SolverGame> Transport<G> for ThreadTransport<G> {
    fn workers(&self) -> usize {
        self.alive.iter().filter(|&&a| a).count()
    }

    fn begin(&mut self, root: &G, prover: Color) -> Result<(), String> {
        self.root = Some((root.clone(), prover));
        self.pending.clear();
        self.synthetic.clear();
        if self.workers() == 0 {
            return Err("no worker left".into());
        }
        Ok(())
    }

    fn submit(&mut self, job: Job) -> Result<(), String> {
        if self.workers() == 0 {
            return Err("no worker left".into());
        }
        let w = job
            .prefer
            .filter(|&w| w < self.senders.len() && self.idle(w))
            .or_else(|| (0..self.senders.len()).find(|&w| self.idle(w)));
        match w {
            Some(w) => {
                if let Err(job) = self.dispatch(w, job) {
                    self.pending.push_back(job);
                    self.drain_pending();
                }
            }
            None => self.pending.push_back(job),
        }
        Ok(())
    }

    fn cancel(&mut self, id: u64) {
        if let Some(pos) = self.pending.iter().position(|j| j.id == id) {
            // Never started: answered at once, with no work.
            self.pending.remove(pos);
            self.synthetic
                .push_back(TransportEvent::Answer(JobAnswer::unstarted(id)));
            return;
        }
        if let Some(flag) = self.cancels.get(&id) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    fn recv(&mut self, timeout: Duration) -> Option<TransportEvent> {
        if let Some(ev) = self.synthetic.pop_front() {
            return Some(ev);
        }
        match self.events.recv_timeout(timeout) {
            Ok(ev) => {
                self.note(&ev);
                Some(ev)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    fn share(&mut self, path: &[Move], result: SolveResult, from: usize) {
        let Some((root, prover)) = self.root.clone() else {
            return;
        };
        let mut g = root;
        for &m in path {
            if g.play(m).is_err() {
                return;
            }
        }
        for (w, tx) in self.senders.iter().enumerate() {
            if w != from && self.alive[w] {
                let _ = tx.send(Msg::Known {
                    game: g.clone(),
                    prover,
                    result,
                });
            }
        }
    }

    fn peek(&mut self, path: &[Move]) -> Option<Vec<(Move, u64, u64)>> {
        let (root, prover) = self.root.clone()?;
        if self.reader.is_none() {
            let index = self.senders.len();
            let made = catch_unwind(AssertUnwindSafe(|| {
                (self.factory)(index, self.memory, true)
            }))
            .ok()
            .flatten()
            .filter(|s| s.shares_table());
            self.reader = Some(made);
        }
        let reader = self.reader.as_mut()?.as_mut()?;
        let mut g = root;
        for &m in path {
            g.play(m).ok()?;
        }
        reader.child_numbers(&g, prover)
    }

    fn clear(&mut self) {
        for (w, tx) in self.senders.iter().enumerate() {
            if self.alive[w] {
                let _ = tx.send(Msg::Clear);
            }
        }
    }

    fn set_memory(&mut self, bytes: usize) {
        // The workers make their solvers again with the new budget; so does the reader.
        self.memory = bytes;
        self.reader = None;
        for (w, tx) in self.senders.iter().enumerate() {
            if self.alive[w] {
                let _ = tx.send(Msg::Memory(bytes));
            }
        }
    }
}

impl<G: SolverGame> Drop for ThreadTransport<G> {
    fn drop(&mut self) {
        for flag in self.cancels.values() {
            flag.store(true, Ordering::Relaxed);
        }
        for tx in &self.senders {
            let _ = tx.send(Msg::Quit);
        }
        for h in self.handles.iter_mut().filter_map(Option::take) {
            let _ = h.join();
        }
    }
}

fn worker_loop<G: SolverGame>(
    index: usize,
    rx: Receiver<Msg<G>>,
    events: Sender<TransportEvent>,
    factory: WorkerFactory<G>,
    mut memory: usize,
) {
    let mut solver: Option<Box<dyn Solver<G>>> = None;
    // Whether `solver` was made to share its tables.
    let mut shared = false;
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Quit => return,
            Msg::Known {
                game,
                prover,
                result,
            } => {
                if let Some(s) = solver.as_mut() {
                    s.learn(&game, prover, result);
                }
            }
            Msg::Clear => {
                if let Some(s) = solver.as_mut() {
                    s.clear();
                }
            }
            Msg::Memory(b) => {
                // A new budget: the next job makes the solver again (its tables would be
                // emptied by the change anyway), with its part of it.
                memory = b;
                solver = None;
            }
            Msg::Job {
                root,
                prover,
                job,
                stop,
            } => {
                if job.fresh || shared == job.fresh {
                    // Deterministic mode: nothing from earlier jobs, nor the other workers,
                    // may change this answer. (And a solver made for the other mode goes.)
                    solver = None;
                }
                if solver.is_none() {
                    shared = !job.fresh;
                    solver = catch_unwind(AssertUnwindSafe(|| factory(index, memory, shared)))
                        .ok()
                        .flatten();
                }
                let Some(s) = solver.as_mut() else {
                    let _ = events.send(TransportEvent::Failed {
                        id: job.id,
                        worker: index,
                        worker_lost: true,
                        why: "the worker cannot make its solver".into(),
                    });
                    return;
                };
                let id = job.id;
                let ran = catch_unwind(AssertUnwindSafe(|| {
                    run_job(s.as_mut(), &root, prover, &job, &stop, index)
                }));
                let ev = match ran {
                    Ok(Ok(answer)) => TransportEvent::Answer(answer),
                    Ok(Err(why)) => TransportEvent::Failed {
                        id,
                        worker: index,
                        worker_lost: false,
                        why,
                    },
                    Err(panic) => {
                        // The solver's state is unknown after a panic: a new one next time.
                        solver = None;
                        TransportEvent::Failed {
                            id,
                            worker: index,
                            worker_lost: false,
                            why: format!("worker panicked: {}", panic_text(&panic)),
                        }
                    }
                };
                if events.send(ev).is_err() {
                    return;
                }
            }
        }
    }
}

/// Plays the job's path on the root (checked: a bad path is an error, not a panic) and
/// solves the position.
fn run_job<G: SolverGame>(
    solver: &mut dyn Solver<G>,
    root: &G,
    prover: Color,
    job: &Job,
    stop: &AtomicBool,
    worker: usize,
) -> Result<JobAnswer, String> {
    let t0 = Instant::now();
    let mut g = root.clone();
    for &m in &job.path {
        g.play(m)
            .map_err(|e| format!("job {}: move {} of its path: {e}", job.id, g.move_to_gtp(m)))?;
    }
    solver.set_root_depth(job.path.len());
    solver.set_thresholds(job.thresholds);
    let mut numbers = None;
    let out = solver.solve(&g, prover, &Limits::nodes(job.nodes), stop, &mut |e| {
        if let SolveEvent::Progress { pn_dn, .. } = e {
            numbers = *pn_dn;
        }
    });
    let proof = if out.result == SolveResult::Win && job.want_proof {
        solver.proof_tree_until(stop)
    } else {
        None
    };
    let children = if out.result == SolveResult::Unknown {
        solver.child_numbers(&g, prover).unwrap_or_default()
    } else {
        Vec::new()
    };
    Ok(JobAnswer {
        id: job.id,
        worker,
        result: out.result,
        nodes: out.stats.nodes,
        knowledge_nodes: out.stats.knowledge_nodes,
        seconds: t0.elapsed().as_secs_f64(),
        proof,
        numbers: numbers.filter(|_| out.result == SolveResult::Unknown),
        children,
    })
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}
