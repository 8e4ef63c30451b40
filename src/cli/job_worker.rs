//! `pcn solve --job-worker`: one job-level worker as a process (plumbing for
//! `pcn solve --job-link` and `cluster/pcn-ray prove`, see docs/cluster.md).
//!
//! It loads the network once, says `ready`, and then reads the manager's lines on stdin
//! ([`crate::search::joblevel::wire::ToWorker`]) and answers on stdout. A job runs exactly as
//! on a worker thread of `pcn solve --workers N`: the worker process holds one
//! [`ThreadTransport`] with a single worker thread, whose solver the registry builds with the
//! same options as `pcn solve` would; the job's path is played on the problem's root with
//! its history, the solver gets the job's node budget and thresholds, and a win comes back
//! with its solution tree. Stdin is read on its own thread, so a `cancel` reaches a running
//! job; when stdin ends (the manager or the relay died) the process exits at once, so that no
//! orphaned worker goes on computing.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use crossbeam::channel::{self, RecvTimeoutError};

use super::solve::{load_problem, options, Problem, SolveArgs};
use crate::game::gomoku::Gomoku;
use crate::game::killallgo::KillallGo;
use crate::game::Color;
use crate::search::joblevel::threads::{ThreadTransport, WorkerFactory};
use crate::search::joblevel::wire::{FromWorker, ToWorker, MAX_LINE};
use crate::search::joblevel::{Transport, TransportEvent};
use crate::search::registry::{self, SolverNet};
use crate::search::solver::{SolverChoice, SolverGame, SolverOptions};

/// Exit code when the worker cannot start (bad options, the network missing).
const EXIT_START: i32 = 2;

/// Runs the worker until stdin ends or `quit`; returns the exit code.
pub fn serve(args: SolveArgs) -> i32 {
    let net = if crate::nn::shipped::is_auto(&args.net) {
        Ok(None)
    } else {
        SolverNet::open(
            &args.net,
            &args.backend,
            args.symmetries.max(1) as usize,
            args.threads.max(1) as usize,
        )
        .map_err(|e| format!("--net {}: {e}", args.net))
    };
    let net = match net {
        Ok(n) => n,
        Err(e) => return start_error(&e),
    };
    let (_, choice, mut opts) = match options(&args, net.as_ref()) {
        Ok(x) => x,
        Err(e) => return start_error(&e),
    };
    opts.jobs.workers = 1;
    let mut w = Worker {
        args,
        choice,
        opts,
        net,
        gomoku: None,
        killallgo: None,
        current: None,
        memory: None,
    };
    if !say(&FromWorker::Ready) {
        return 0;
    }
    let (tx, lines) = channel::unbounded::<String>();
    let reader = std::thread::Builder::new()
        .name("pcn-worker-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut r = stdin.lock();
            let mut buf = String::new();
            loop {
                buf.clear();
                match r.read_line(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx
                            .send(buf.trim_end_matches(['\r', '\n']).to_string())
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
        });
    if let Err(e) = reader {
        return start_error(&format!("cannot read stdin: {e}"));
    }
    loop {
        match lines.recv_timeout(Duration::from_millis(1)) {
            Ok(line) => {
                if !w.handle(&line) {
                    return 0;
                }
                continue;
            }
            Err(RecvTimeoutError::Timeout) => {}
            // The manager is gone: nobody wants the answers.
            Err(RecvTimeoutError::Disconnected) => std::process::exit(0),
        }
        if let Some(ev) = w.poll(Duration::from_millis(4)) {
            let msg = match ev {
                TransportEvent::Answer(a) => FromWorker::Answer(a),
                TransportEvent::Failed {
                    id,
                    why,
                    worker_lost,
                    ..
                } => {
                    if worker_lost {
                        // The thread could not make its solver: this process is of no use.
                        say(&FromWorker::Failed {
                            id,
                            why: why.clone(),
                        });
                        say(&FromWorker::Lost(why));
                        return EXIT_START;
                    }
                    FromWorker::Failed { id, why }
                }
            };
            if !say(&msg) {
                return 0;
            }
        }
    }
}

fn start_error(e: &str) -> i32 {
    eprintln!("pcn job worker: {e}");
    say(&FromWorker::Lost(format!("the worker cannot start: {e}")));
    EXIT_START
}

/// Writes one line to stdout; false when stdout is gone.
fn say(m: &FromWorker) -> bool {
    let mut out = std::io::stdout().lock();
    let mut text = m.encode();
    text.push('\n');
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_ok()
}

/// Which game the current problem is.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Current {
    Gomoku,
    KillallGo,
}

struct Worker {
    args: SolveArgs,
    choice: SolverChoice,
    opts: SolverOptions,
    net: Option<SolverNet>,
    gomoku: Option<ThreadTransport<Gomoku>>,
    killallgo: Option<ThreadTransport<KillallGo>>,
    current: Option<Current>,
    memory: Option<usize>,
}

/// A one-thread transport whose solver is built like `pcn solve`'s (the network where the
/// model fits the position).
fn one_thread<G: SolverGame>(
    choice: SolverChoice,
    opts: &SolverOptions,
    net: Option<&SolverNet>,
    memory: usize,
) -> ThreadTransport<G> {
    let opts = opts.clone();
    let net = net.cloned();
    // One worker: its share of the budget is the whole budget, shared or not.
    let factory: WorkerFactory<G> = Arc::new(move |_index, memory, _share| {
        let mut o = opts.clone();
        o.common.memory_bytes = memory;
        registry::build::<G>(choice, &o, net.as_ref()).ok()
    });
    ThreadTransport::new(1, memory, factory)
}

impl Worker {
    fn transport(&mut self) -> Option<&mut dyn TransportDyn> {
        match self.current? {
            Current::Gomoku => self.gomoku.as_mut().map(|t| t as &mut dyn TransportDyn),
            Current::KillallGo => self.killallgo.as_mut().map(|t| t as &mut dyn TransportDyn),
        }
    }

    fn poll(&mut self, timeout: Duration) -> Option<TransportEvent> {
        match self.transport() {
            Some(t) => t.recv_dyn(timeout),
            None => {
                std::thread::sleep(timeout);
                None
            }
        }
    }

    /// Handles one line; false to end the process.
    fn handle(&mut self, line: &str) -> bool {
        if line.len() > MAX_LINE {
            return say(&FromWorker::Error("line too long".into()));
        }
        let msg = match ToWorker::decode(line) {
            Ok(m) => m,
            Err(e) => return say(&FromWorker::Error(e.to_string())),
        };
        match msg {
            ToWorker::Quit => return false,
            ToWorker::Begin { prover, problem } => self.begin(prover, &problem),
            ToWorker::Job(job) => {
                let id = job.id;
                let sent = match self.transport() {
                    Some(t) => t.submit_dyn(job),
                    None => Err("no problem begun".to_string()),
                };
                if let Err(why) = sent {
                    return say(&FromWorker::Failed { id, why });
                }
            }
            ToWorker::Cancel(id) => {
                if let Some(t) = self.transport() {
                    t.cancel_dyn(id);
                }
            }
            ToWorker::Known { path, result } => {
                if let Some(t) = self.transport() {
                    t.share_dyn(&path, result);
                }
            }
            ToWorker::Clear => {
                if let Some(t) = self.transport() {
                    t.clear_dyn();
                }
            }
            ToWorker::Memory(b) => {
                self.memory = Some(b);
                if let Some(t) = self.transport() {
                    t.memory_dyn(b);
                }
            }
        }
        true
    }

    fn begin(&mut self, prover: Color, problem: &str) {
        let memory = self.memory.unwrap_or(self.args.memory_bytes);
        let began = match load_problem(problem) {
            Err(e) => Err(e),
            Ok(Problem::Gomoku(g)) => {
                self.current = Some(Current::Gomoku);
                if self.gomoku.is_none() {
                    match self.net_for(&g) {
                        Ok(n) => {
                            self.gomoku =
                                Some(one_thread(self.choice, &self.opts, n.as_ref(), memory))
                        }
                        Err(e) => return self.begin_failed(e),
                    }
                }
                match self.gomoku.as_mut() {
                    Some(t) => t.begin(&g, prover),
                    None => Err("no transport".into()),
                }
            }
            Ok(Problem::KillallGo(g)) => {
                self.current = Some(Current::KillallGo);
                if self.killallgo.is_none() {
                    match self.net_for(&g) {
                        Ok(n) => {
                            self.killallgo =
                                Some(one_thread(self.choice, &self.opts, n.as_ref(), memory))
                        }
                        Err(e) => return self.begin_failed(e),
                    }
                }
                match self.killallgo.as_mut() {
                    Some(t) => t.begin(&g, prover),
                    None => Err("no transport".into()),
                }
            }
        };
        if let Err(e) = began {
            self.begin_failed(e);
        }
    }

    fn begin_failed(&mut self, e: String) {
        // Jobs of this problem will fail with "no problem begun"; say why once.
        self.current = None;
        say(&FromWorker::Error(format!("begin: {e}")));
    }

    /// The network for `g`'s game: `--net`, or with `--net auto` the shipped one for the
    /// game and board (as `pcn solve` resolves it), loaded once per game.
    fn net_for<G: SolverGame>(&self, g: &G) -> Result<Option<SolverNet>, String> {
        if !crate::nn::shipped::is_auto(&self.args.net) {
            return Ok(self.net.clone());
        }
        match crate::nn::shipped::resolve_for_game("auto", &g.name(), g.width(), g.height()) {
            None => Ok(None),
            Some(p) => SolverNet::open(
                &p,
                &self.args.backend,
                self.args.symmetries.max(1) as usize,
                self.args.threads.max(1) as usize,
            )
            .map_err(|e| format!("--net auto ({p}): {e}")),
        }
    }
}

/// [`Transport`] without its game parameter, so that the worker can hold either game's.
trait TransportDyn {
    fn submit_dyn(&mut self, job: crate::search::joblevel::Job) -> Result<(), String>;
    fn cancel_dyn(&mut self, id: u64);
    fn recv_dyn(&mut self, timeout: Duration) -> Option<TransportEvent>;
    fn share_dyn(&mut self, path: &[crate::game::Move], r: crate::search::solver::SolveResult);
    fn clear_dyn(&mut self);
    fn memory_dyn(&mut self, bytes: usize);
}

impl<G: SolverGame> TransportDyn for ThreadTransport<G> {
    fn submit_dyn(&mut self, job: crate::search::joblevel::Job) -> Result<(), String> {
        self.submit(job)
    }
    fn cancel_dyn(&mut self, id: u64) {
        self.cancel(id)
    }
    fn recv_dyn(&mut self, timeout: Duration) -> Option<TransportEvent> {
        self.recv(timeout)
    }
    fn share_dyn(&mut self, path: &[crate::game::Move], r: crate::search::solver::SolveResult) {
        // From "nobody": the one worker thread hears it.
        self.share(path, r, usize::MAX)
    }
    fn clear_dyn(&mut self) {
        self.clear()
    }
    fn memory_dyn(&mut self, bytes: usize) {
        self.set_memory(bytes)
    }
}
