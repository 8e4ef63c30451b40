//! Workers in other processes: a [`Transport`] over the line protocol of [`super::wire`].
//!
//! [`LinkTransport`] does the bookkeeping of a transport (which worker runs which job, a queue
//! for jobs that find no idle worker, lost and returning workers) and leaves the carrying of
//! lines to a [`Link`]:
//!
//! * [`SpawnLink`] starts the worker processes itself (`pcn solve --job-worker`, each in its
//!   own process group) and talks to them through their stdin and stdout: several processes
//!   on one machine, and the way the protocol is tested without any cluster;
//! * [`StdioLink`] multiplexes all workers over this process's own stdin and stdout, each line
//!   prefixed with `@<worker> `; something else (the Ray driver of `cluster/`) relays the lines
//!   to wherever the workers run, and says `@<k> lost why=…` when worker `k` died and
//!   `@<k> ready` when a new one took its place.
//!
//! A worker that dies takes its job with it: the manager hears [`TransportEvent::Failed`] with
//! `worker_lost` and sends the job again elsewhere. A worker that comes back (`ready` after
//! `lost`) is told the current problem and takes jobs again. A line that cannot be read costs
//! the job of its worker (failed, sent again), never the manager.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};

use super::wire::{FromWorker, ToWorker};
use super::{Job, JobAnswer, Transport, TransportEvent};
use crate::game::{Color, Move};
use crate::search::solver::{SolveResult, SolverGame};

/// What a link hears from a worker.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkEvent {
    /// A line from worker `.0`.
    Line(usize, String),
    /// Worker `.0` is gone (its process ended, its connection closed).
    Closed(usize, String),
}

/// Carries lines to workers; what comes back arrives on the receiver given with it.
pub trait Link: Send {
    /// Workers this link addresses (`0..count`).
    fn count(&self) -> usize;
    /// Sends one line (no newline) to worker `w`; an error means the worker is unreachable.
    fn send(&mut self, w: usize, line: &str) -> Result<(), String>;
}

/// Describes a problem's root for the workers' `begin` line (see [`ToWorker::Begin`]).
pub type RootDescriber<G> = Box<dyn Fn(&G, Color) -> Result<String, String> + Send>;

/// Workers behind a [`Link`] (see the module docs).
pub struct LinkTransport<G: SolverGame> {
    link: Box<dyn Link>,
    events: Receiver<LinkEvent>,
    describe: RootDescriber<G>,
    /// The current problem's `begin` line, for workers that come back.
    begin: Option<String>,
    alive: Vec<bool>,
    /// The job each worker runs.
    assigned: Vec<Option<u64>>,
    pending: VecDeque<Job>,
    synthetic: VecDeque<TransportEvent>,
    memory: Option<usize>,
}

impl<G: SolverGame> LinkTransport<G> {
    /// A transport over `link`, whose workers' lines arrive on `events`; `describe` writes
    /// the root of each problem for the `begin` line. All workers count as alive until they
    /// are heard to be gone.
    pub fn new(
        link: Box<dyn Link>,
        events: Receiver<LinkEvent>,
        describe: RootDescriber<G>,
    ) -> Self {
        let n = link.count();
        LinkTransport {
            link,
            events,
            describe,
            begin: None,
            alive: vec![true; n],
            assigned: vec![None; n],
            pending: VecDeque::new(),
            synthetic: VecDeque::new(),
            memory: None,
        }
    }

    fn idle(&self, w: usize) -> bool {
        self.alive[w] && self.assigned[w].is_none()
    }

    fn send(&mut self, w: usize, msg: &ToWorker) -> bool {
        match self.link.send(w, &msg.encode()) {
            Ok(()) => true,
            Err(e) => {
                log::warn!("job-level: worker {w} unreachable: {e}");
                self.lose(w, e);
                false
            }
        }
    }

    /// Marks `w` lost; its job (if any) fails.
    fn lose(&mut self, w: usize, why: String) {
        if !self.alive[w] {
            return;
        }
        self.alive[w] = false;
        if let Some(id) = self.assigned[w].take() {
            self.synthetic.push_back(TransportEvent::Failed {
                id,
                worker: w,
                worker_lost: true,
                why,
            });
        }
    }

    fn dispatch(&mut self, w: usize, job: Job) -> Result<(), Job> {
        let id = job.id;
        if self.send(w, &ToWorker::Job(job.clone())) {
            self.assigned[w] = Some(id);
            Ok(())
        } else {
            Err(job)
        }
    }

    fn drain_pending(&mut self) {
        while let Some(job) = self.pending.pop_front() {
            match (0..self.alive.len()).find(|&w| self.idle(w)) {
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

    /// Turns one link event into a transport event (or none).
    fn handle(&mut self, ev: LinkEvent) -> Option<TransportEvent> {
        let (w, line) = match ev {
            LinkEvent::Closed(w, why) if w < self.alive.len() => {
                self.lose(w, why);
                return self.synthetic.pop_front();
            }
            LinkEvent::Line(w, line) if w < self.alive.len() => (w, line),
            LinkEvent::Closed(w, _) | LinkEvent::Line(w, _) => {
                log::warn!("job-level: a line for worker {w}, which does not exist");
                return None;
            }
        };
        let msg = match FromWorker::decode(&line) {
            Ok(m) => m,
            Err(e) => {
                // The answer is unreadable: its job is lost, the worker may go on.
                log::warn!("job-level: worker {w}: {e}");
                let id = self.assigned[w].take()?;
                self.drain_pending();
                return Some(TransportEvent::Failed {
                    id,
                    worker: w,
                    worker_lost: false,
                    why: e.to_string(),
                });
            }
        };
        match msg {
            FromWorker::Ready => {
                if !self.alive[w] {
                    log::info!("job-level: worker {w} is back");
                    self.alive[w] = true;
                    self.assigned[w] = None;
                    if let Some(m) = self.memory {
                        self.send(w, &ToWorker::Memory(m));
                    }
                    if let Some(b) = self.begin.clone() {
                        if self.link.send(w, &b).is_err() {
                            self.lose(w, "unreachable".into());
                        }
                    }
                    self.drain_pending();
                }
                None
            }
            FromWorker::Answer(mut a) => {
                a.worker = w;
                if self.assigned[w] == Some(a.id) {
                    self.assigned[w] = None;
                }
                self.drain_pending();
                Some(TransportEvent::Answer(a))
            }
            FromWorker::Failed { id, why } => {
                if self.assigned[w] == Some(id) {
                    self.assigned[w] = None;
                }
                self.drain_pending();
                Some(TransportEvent::Failed {
                    id,
                    worker: w,
                    worker_lost: false,
                    why,
                })
            }
            FromWorker::Lost(why) => {
                log::warn!("job-level: worker {w} lost: {why}");
                self.lose(w, why);
                self.drain_pending();
                self.synthetic.pop_front()
            }
            FromWorker::Error(why) => {
                // The worker could not read one of our lines: if that was its job, the job
                // is lost.
                log::warn!("job-level: worker {w} could not read a line: {why}");
                None
            }
        }
    }
}

impl<G: SolverGame> Transport<G> for LinkTransport<G> {
    fn workers(&self) -> usize {
        self.alive.iter().filter(|&&a| a).count()
    }

    fn begin(&mut self, root: &G, prover: Color) -> Result<(), String> {
        let problem = (self.describe)(root, prover)?;
        let line = ToWorker::Begin { prover, problem }.encode();
        self.begin = Some(line.clone());
        self.pending.clear();
        self.synthetic.clear();
        for w in 0..self.alive.len() {
            if self.alive[w] && self.link.send(w, &line).is_err() {
                self.lose(w, "unreachable".into());
            }
        }
        if self.workers() == 0 {
            return Err("no worker left".into());
        }
        Ok(())
    }

    fn submit(&mut self, job: Job) -> Result<(), String> {
        if self.workers() == 0 {
            return Err("no worker left".into());
        }
        let n = self.alive.len();
        let w = job
            .prefer
            .filter(|&w| w < n && self.idle(w))
            .or_else(|| (0..n).find(|&w| self.idle(w)));
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
            self.pending.remove(pos);
            self.synthetic
                .push_back(TransportEvent::Answer(JobAnswer::unstarted(id)));
            return;
        }
        if let Some(w) = (0..self.alive.len()).find(|&w| self.assigned[w] == Some(id)) {
            self.send(w, &ToWorker::Cancel(id));
        }
    }

    fn recv(&mut self, timeout: Duration) -> Option<TransportEvent> {
        if let Some(ev) = self.synthetic.pop_front() {
            return Some(ev);
        }
        match self.events.recv_timeout(timeout) {
            Ok(ev) => self.handle(ev).or_else(|| self.synthetic.pop_front()),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                // Nobody can answer any more: every worker is lost.
                for w in 0..self.alive.len() {
                    self.lose(w, "the link closed".into());
                }
                self.synthetic.pop_front()
            }
        }
    }

    fn share(&mut self, path: &[Move], result: SolveResult, from: usize) {
        let msg = ToWorker::Known {
            path: path.to_vec(),
            result,
        };
        for w in 0..self.alive.len() {
            if w != from && self.alive[w] {
                self.send(w, &msg);
            }
        }
    }

    fn clear(&mut self) {
        for w in 0..self.alive.len() {
            if self.alive[w] {
                self.send(w, &ToWorker::Clear);
            }
        }
    }

    fn set_memory(&mut self, bytes: usize) {
        // The budget is all workers' together; each process gets its share.
        let bytes = (bytes / self.alive.len().max(1)).max(1 << 20);
        self.memory = Some(bytes);
        for w in 0..self.alive.len() {
            if self.alive[w] {
                self.send(w, &ToWorker::Memory(bytes));
            }
        }
    }
}

/// Reads lines from `r` as worker `w`'s, until EOF or an error, then says it closed.
fn pump<R: std::io::Read + Send + 'static>(w: usize, r: R, tx: Sender<LinkEvent>) {
    let spawned = std::thread::Builder::new()
        .name(format!("pcn-link{w}"))
        .spawn(move || {
            let mut r = BufReader::new(r);
            let mut buf = String::new();
            loop {
                buf.clear();
                match r.read_line(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {
                        let line = buf.trim_end_matches(['\r', '\n']).to_string();
                        if tx.send(LinkEvent::Line(w, line)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(LinkEvent::Closed(w, format!("read: {e}")));
                        return;
                    }
                }
            }
            let _ = tx.send(LinkEvent::Closed(w, "the worker's output ended".into()));
        });
    if let Err(e) = spawned {
        log::warn!("job-level: cannot start the reader of worker {w}: {e}");
    }
}

/// Worker processes started here (see the module docs).
pub struct SpawnLink {
    children: Vec<Option<(Child, ChildStdin)>>,
}

impl SpawnLink {
    /// Starts `count` copies of `program args…`, each in its own process group with its
    /// stdin and stdout piped (stderr is inherited, so their logs reach ours). Returns the
    /// link and the receiver of the workers' lines. A worker that cannot start is reported
    /// closed at once.
    pub fn spawn(
        program: &std::path::Path,
        args: &[String],
        count: usize,
    ) -> (SpawnLink, Receiver<LinkEvent>) {
        let (tx, rx) = channel::unbounded();
        let mut children = Vec::new();
        for w in 0..count {
            let mut cmd = Command::new(program);
            cmd.args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            #[cfg(unix)]
            {
                use std::os::unix::process::CommandExt;
                // Its own group: a worker and whatever it starts are ended together.
                cmd.process_group(0);
            }
            match cmd.spawn() {
                Ok(mut c) => match (c.stdin.take(), c.stdout.take()) {
                    (Some(i), Some(o)) => {
                        pump(w, o, tx.clone());
                        children.push(Some((c, i)));
                    }
                    _ => {
                        let _ = c.kill();
                        let _ = c.wait();
                        let _ = tx.send(LinkEvent::Closed(w, "no pipes".into()));
                        children.push(None);
                    }
                },
                Err(e) => {
                    let _ = tx.send(LinkEvent::Closed(
                        w,
                        format!("cannot start {}: {e}", program.display()),
                    ));
                    children.push(None);
                }
            }
        }
        (SpawnLink { children }, rx)
    }

    /// The process ids of the workers still started (for tests that kill one).
    pub fn pids(&self) -> Vec<Option<u32>> {
        self.children
            .iter()
            .map(|c| c.as_ref().map(|(c, _)| c.id()))
            .collect()
    }
}

impl Link for SpawnLink {
    fn count(&self) -> usize {
        self.children.len()
    }

    fn send(&mut self, w: usize, line: &str) -> Result<(), String> {
        let Some(Some((_, stdin))) = self.children.get_mut(w) else {
            return Err("not running".into());
        };
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        stdin
            .write_all(&buf)
            .and_then(|()| stdin.flush())
            .map_err(|e| e.to_string())
    }
}

impl Drop for SpawnLink {
    fn drop(&mut self) {
        for (mut child, mut stdin) in self.children.iter_mut().filter_map(Option::take) {
            let _ = stdin.write_all(b"quit\n");
            drop(stdin);
            // A worker in the middle of a job ends at its next look at stdin; one that does
            // not within the grace period is killed with its group.
            let t0 = std::time::Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if t0.elapsed() < Duration::from_secs(2) => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        // The worker starts no processes of its own: killing it is enough.
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
    }
}

/// All workers over this process's stdin and stdout, lines prefixed `@<worker> ` (see the
/// module docs). Lines on stdout without the prefix belong to the program (`pcn solve`'s JSON
/// lines), so a relay can tell them apart; every write is one whole line under stdout's lock.
pub struct StdioLink {
    count: usize,
}

impl StdioLink {
    /// A link for `count` workers; starts the thread that reads stdin. Lines on stdin that
    /// do not start with `@<k> ` are logged and dropped; EOF on stdin closes every worker.
    pub fn new(count: usize) -> (StdioLink, Receiver<LinkEvent>) {
        let (tx, rx) = channel::unbounded();
        let spawned = std::thread::Builder::new()
            .name("pcn-stdio-link".into())
            .spawn(move || {
                let stdin = std::io::stdin();
                let mut r = stdin.lock();
                let mut buf = String::new();
                loop {
                    buf.clear();
                    match r.read_line(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = buf.trim_end_matches(['\r', '\n']);
                            match parse_prefixed(line) {
                                Some((w, rest)) => {
                                    if tx.send(LinkEvent::Line(w, rest.to_string())).is_err() {
                                        return;
                                    }
                                }
                                None => log::warn!(
                                    "job-level: stdin line without @worker prefix: {}",
                                    line.chars().take(60).collect::<String>()
                                ),
                            }
                        }
                    }
                }
                for w in 0..count {
                    let _ = tx.send(LinkEvent::Closed(w, "stdin closed".into()));
                }
            });
        if let Err(e) = spawned {
            log::warn!("job-level: cannot read stdin: {e}");
        }
        (StdioLink { count }, rx)
    }
}

impl StdioLink {
    /// A link for `count` workers that reuses the stdin reader of an earlier
    /// [`StdioLink::new`] (a process has one stdin: its lines go to one receiver).
    pub fn with_count(count: usize) -> StdioLink {
        StdioLink { count }
    }
}

/// `@<k> rest` → (k, rest).
pub fn parse_prefixed(line: &str) -> Option<(usize, &str)> {
    let rest = line.strip_prefix('@')?;
    let (k, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((k.parse().ok()?, rest))
}

impl Link for StdioLink {
    fn count(&self) -> usize {
        self.count
    }

    fn send(&mut self, w: usize, line: &str) -> Result<(), String> {
        let mut out = std::io::stdout().lock();
        let text = format!("@{w} {line}\n");
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(parse_prefixed("@3 ready"), Some((3, "ready")));
        assert_eq!(parse_prefixed("@12 answer id=1"), Some((12, "answer id=1")));
        assert_eq!(parse_prefixed("@x ready"), None);
        assert_eq!(parse_prefixed("ready"), None);
        assert_eq!(parse_prefixed("@"), None);
    }
}
