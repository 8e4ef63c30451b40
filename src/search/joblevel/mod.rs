//! Job-level proof search: one problem spread over many workers, one merged proof.
//!
//! A manager keeps the top of the AND/OR tree for a fixed prover with proof and disproof
//! numbers ([`tree`]); it sends frontier positions as *jobs* to workers, each of which runs
//! the game's ordinary solver with a node budget on its position and answers proven,
//! disproven or unknown, with its node count and, for a win, the solution tree of its
//! position. The manager integrates the answers: a solved leaf is backed up, an unknown one
//! is expanded by the manager so that its children become the next jobs. This is JL-PNS
//! (Wu et al. 2013) with flagging: a node out with a job takes no second job, and the
//! selection of the next job goes around it, so workers get different positions; at the
//! prover's nodes the choice among the best few children is random (seeded), as in the
//! online fine-tuning solver. When the root is proven the manager's tree with the workers'
//! sub-proofs grafted in is one [`ProofTree`], checked by the same checker as any solver's
//! (`pcn verify` does not know a manager existed).
//!
//! Distribution is a transport, not a second search: the manager talks to workers only
//! through [`Transport`] (submit, cancel, receive answers), implemented for threads in this
//! process by [`threads::ThreadTransport`] (workers share one network evaluator, behind a
//! batching queue on a GPU) and across processes by the Ray front end. Every job names its
//! position by the moves from the problem root, and a worker plays them on the root with its
//! whole history, so Killall-Go's superko sees the real history of every job; the manager
//! never shares a result between two nodes (its tree is a tree, not a graph), and a worker's
//! tables key positions by their history ([`super::solver::GhiMode::Exact`]), so a result is
//! never reused where the history differs.
//!
//! [`JobLevel`] is the manager as a [`Solver`]: the registry builds it when more than one
//! worker is asked for ([`JobOptions::workers`]), so `pcn solve --workers N`, the GTP
//! solver and the Gomocup solver players all run it the same way.

pub mod link;
pub mod threads;
pub mod tree;
pub mod wire;

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::solver::{
    plain_heuristic, Heuristic, ProofTree, SolveEvent, SolveOutcome, SolveResult, SolveStats,
    Solver, SolverGame,
};
use super::Limits;
use crate::game::{Color, Move};
use tree::Tree;

/// Options of the job-level search. `Default` is one worker: the plain solver, no manager.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOptions {
    /// Workers (solver threads or processes); 1 runs the plain solver without a manager.
    pub workers: usize,
    /// Node budget of one job (the worker's solver nodes).
    pub job_nodes: u64,
    /// At the prover's nodes, the next job goes below one of the best `top_k` children that
    /// can take one, picked at random (1: always the most-proving child).
    pub top_k: usize,
    /// Jobs grow with the work done: a job's budget is at least the nodes answered so far
    /// divided by `growth` times the workers (0: always [`JobOptions::job_nodes`]), so that
    /// a hard problem is cut into fewer, larger jobs.
    pub growth: u64,
    /// A position the search comes back to this many times (jobs that ended at their
    /// thresholds) is split like one that spent a whole budget (0: only by budget).
    pub split_after: u32,
    /// Whether workers build the solution tree of every job they prove (needed for
    /// [`Solver::proof_tree`] of the whole problem; off saves the extraction time when no
    /// proof is wanted).
    pub proofs: bool,
    /// How the workers divide the problem where they keep one table for all of them
    /// ([`Transport::peek`]); elsewhere, and in deterministic mode, the manager splits it by
    /// its own tree ([`JobMode::Split`]).
    pub mode: JobMode,
}

/// How the job-level workers divide one problem (see [`JobOptions::mode`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum JobMode {
    /// Every worker searches the whole problem from its root on the shared table, each
    /// steering away from the children the others are in near the root (virtual proof
    /// numbers, [`crate::search::solver::tt::TableGroup`]); the first to finish answers.
    Shared,
    /// One worker searches the whole problem and the others are *helpers*, sent below the
    /// opponent's nodes on its path, to the replies it has not reached yet (all of them are
    /// needed if the path holds).
    Helpers,
    /// The manager grows the top of the tree and sends its frontier as jobs (JL-PNS).
    Split,
}

impl JobMode {
    /// The mode's name in options (`shared`, `helpers`, `split`).
    pub fn name(self) -> &'static str {
        match self {
            JobMode::Shared => "shared",
            JobMode::Helpers => "helpers",
            JobMode::Split => "split",
        }
    }
}

impl std::str::FromStr for JobMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "shared" => Ok(JobMode::Shared),
            "helpers" => Ok(JobMode::Helpers),
            "split" => Ok(JobMode::Split),
            _ => Err(format!(
                "expected shared, helpers or split, not '{}'",
                s.chars().take(32).collect::<String>()
            )),
        }
    }
}

impl std::fmt::Display for JobMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            workers: 1,
            job_nodes: DEFAULT_JOB_NODES,
            top_k: DEFAULT_TOP_K,
            growth: DEFAULT_GROWTH,
            split_after: DEFAULT_SPLIT_AFTER,
            proofs: true,
            mode: DEFAULT_MODE,
        }
    }
}

/// Default node budget of a job: about a second of focused DFPN on 9x9 Killall-Go on one
/// core (see docs/solving.md, "Several workers").
pub const DEFAULT_JOB_NODES: u64 = 20_000;

/// Default of [`JobOptions::growth`].
pub const DEFAULT_GROWTH: u64 = 8;

/// Default of [`JobOptions::split_after`] (2 did best of 0, 1, 2 and 4 on the set of
/// docs/notebook/2026-12-01-job-level.md).
pub const DEFAULT_SPLIT_AFTER: u32 = 2;

/// Default of [`JobOptions::mode`] (docs/solving.md, "Several workers", has the
/// measurements).
pub const DEFAULT_MODE: JobMode = JobMode::Shared;

/// How deep a helper's position may be below the problem root.
const HELPER_DEPTH: usize = 64;

/// A proof number no recorded child reaches (the root of a helper's walk with none open).
const INF_NUMBER: u64 = u64::MAX / 4;

/// Default number of best children among which the prover's choice is random.
pub const DEFAULT_TOP_K: usize = 2;

impl JobOptions {
    /// Checks the ranges.
    pub fn check(&self) -> Result<(), String> {
        if self.workers == 0 || self.workers > MAX_WORKERS {
            return Err(format!("workers must be 1..={MAX_WORKERS}"));
        }
        if self.job_nodes == 0 {
            return Err("job nodes must be at least 1".into());
        }
        if self.top_k == 0 || self.top_k > 64 {
            return Err("job top-k must be 1..=64".into());
        }
        Ok(())
    }
}

/// Most workers one process runs.
pub const MAX_WORKERS: usize = 1024;

/// Reads a `--workers` value: a number (at least 1) or `auto` (the machine's cores).
pub fn parse_workers(s: &str) -> Result<usize, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(std::thread::available_parallelism().map_or(1, |n| n.get()));
    }
    match t.parse::<usize>() {
        Ok(n) if (1..=MAX_WORKERS).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected auto or a number 1..={MAX_WORKERS}, not '{}'",
            t.chars().take(32).collect::<String>()
        )),
    }
}

/// One job: a position given by its moves from the problem root, to be solved for the
/// problem's prover within a node budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Unique within one problem.
    pub id: u64,
    /// The moves from the problem root (the root's own history comes with the root).
    pub path: Vec<Move>,
    /// Node budget.
    pub nodes: u64,
    /// Whether a win needs its solution tree.
    pub want_proof: bool,
    /// Deterministic mode: the worker forgets everything before this job, so that the
    /// answer depends on the job alone.
    pub fresh: bool,
    /// Proof-number thresholds (see [`Solver::set_thresholds`]): the job ends as soon as the
    /// position is no longer the most proving one.
    pub thresholds: Option<(u64, u64)>,
    /// The worker whose tables most likely hold this position (it worked on the parent);
    /// a transport gives the job to it when it is idle.
    pub prefer: Option<usize>,
}

/// A worker's answer to a job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobAnswer {
    /// The job's id.
    pub id: u64,
    /// The worker that ran it.
    pub worker: usize,
    /// Win / loss for the prover at the job's position, or unknown.
    pub result: SolveResult,
    /// Solver nodes spent.
    pub nodes: u64,
    /// Knowledge-search nodes spent.
    pub knowledge_nodes: u64,
    /// Wall-clock seconds of the job on the worker (solve and proof).
    pub seconds: f64,
    /// For a win with [`Job::want_proof`]: the solution tree of the job's position
    /// (`None` when it could not be built within the solver's limits).
    pub proof: Option<ProofTree>,
    /// For an unknown result, the position's (pn, dn) at the end of the job, where the
    /// solver reports them (DFPN).
    pub numbers: Option<(u64, u64)>,
    /// For an unknown result: what the worker's tables know of the position's children
    /// (move, pn, dn), see [`Solver::child_numbers`]; the manager's expansion starts from
    /// them. Empty when the solver keeps no such numbers.
    pub children: Vec<(Move, u64, u64)>,
}

impl JobAnswer {
    /// The answer to a job cancelled before any worker started it: unknown, no work.
    pub fn unstarted(id: u64) -> JobAnswer {
        JobAnswer {
            id,
            worker: usize::MAX,
            result: SolveResult::Unknown,
            nodes: 0,
            knowledge_nodes: 0,
            seconds: 0.0,
            proof: None,
            numbers: None,
            children: Vec::new(),
        }
    }
}

/// What a transport reports.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportEvent {
    /// A job was answered.
    Answer(JobAnswer),
    /// A job was lost: its worker failed (panicked, died, lost its connection). The job
    /// may be sent again.
    Failed {
        /// The job's id.
        id: u64,
        /// The worker.
        worker: usize,
        /// Whether the worker is gone for good (no more jobs should go to it).
        worker_lost: bool,
        /// What happened.
        why: String,
    },
}

/// How the manager reaches its workers: threads here ([`threads::ThreadTransport`]), other
/// processes or machines elsewhere. A transport runs one problem at a time.
pub trait Transport<G: SolverGame>: Send {
    /// Workers able to take jobs now (lost ones do not count).
    fn workers(&self) -> usize;
    /// Starts a problem: every job's path starts at `root` (which carries its history).
    fn begin(&mut self, root: &G, prover: Color) -> Result<(), String>;
    /// Sends a job to an idle worker (the manager never has more jobs out than workers).
    fn submit(&mut self, job: Job) -> Result<(), String>;
    /// Asks the worker of job `id` to stop it soon (it still answers, usually unknown).
    fn cancel(&mut self, id: u64);
    /// The next event, waiting at most `timeout`.
    fn recv(&mut self, timeout: Duration) -> Option<TransportEvent>;
    /// Tells the workers other than `from` that the position at `path` is won or lost for
    /// the prover (a job's answer), so that they do not prove it again. Transports that
    /// cannot reach the workers' tables may ignore it.
    fn share(&mut self, _path: &[Move], _result: SolveResult, _from: usize) {}
    /// What the workers' shared table knows of the children of the position at `path`
    /// (move, pn, dn for the prover; see [`Solver::child_numbers`]), where the workers keep
    /// one table for all of them; `None` where they do not (then no helpers are sent).
    fn peek(&mut self, _path: &[Move]) -> Option<Vec<(Move, u64, u64)>> {
        None
    }
    /// Forgets the workers' tables (a new game).
    fn clear(&mut self);
    /// Sets the table memory of all workers together, in bytes (a transport whose workers
    /// run on other machines may give each its own budget instead).
    fn set_memory(&mut self, bytes: usize);
}

/// Statistics of one job-level solve (in [`SolveStats::jobs`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobStats {
    /// Workers at the start.
    pub workers: usize,
    /// Jobs sent (resent ones included).
    pub jobs: u64,
    /// Answers proven or disproven.
    pub solved: u64,
    /// Answers unknown (their positions were expanded).
    pub unknown: u64,
    /// Answers that arrived for a path already solved, dropped.
    pub wasted: u64,
    /// Jobs cancelled at the end of the solve (time or node limit, stop) while their path
    /// was still open.
    pub cancelled: u64,
    /// Wins whose solution tree the worker could not build (treated as unknown).
    pub proof_failures: u64,
    /// Jobs lost with a failed worker and sent again.
    pub resent: u64,
    /// Workers lost for good.
    pub lost_workers: u64,
    /// Nodes of the manager's tree.
    pub tree_nodes: u64,
    /// Of the jobs, those sent to helpers ([`JobOptions::helpers`]).
    pub helper_jobs: u64,
    /// Share of the workers' time spent on jobs (0..1).
    pub busy: f64,
}

/// The job-level manager as a solver (see the module docs).
pub struct JobLevel<G: SolverGame> {
    /// The workers' solver name.
    name: &'static str,
    opts: JobOptions,
    transport: Box<dyn Transport<G>>,
    /// Makes the manager's own heuristic (priors for the move order at its expansions) for
    /// a position; `None` from it: the game's plain heuristic.
    heuristic: HeuristicMaker<G>,
    seed: u64,
    proof_max_nodes: usize,
    last: Option<Tree<G>>,
    /// Job ids are unique across solves, so that a late answer from an earlier problem is
    /// never taken for one of this problem's jobs.
    next_id: u64,
}

/// Builds the manager's heuristic for a position (the network where it fits).
pub type HeuristicMaker<G> = Box<dyn FnMut(&G) -> Box<dyn Heuristic<G>> + Send>;

impl<G: SolverGame> JobLevel<G> {
    /// A manager over `transport` whose workers run solver `name`. `heuristic` gives the
    /// priors that order the children of the manager's expansions; `seed` seeds its random
    /// choices; trees over `proof_max_nodes` nodes are not built.
    pub fn new(
        name: &'static str,
        opts: JobOptions,
        transport: Box<dyn Transport<G>>,
        heuristic: HeuristicMaker<G>,
        seed: u64,
        proof_max_nodes: usize,
    ) -> JobLevel<G> {
        JobLevel {
            name,
            opts,
            transport,
            heuristic,
            seed,
            proof_max_nodes,
            last: None,
            next_id: 1,
        }
    }

    /// A manager whose expansions use the game's plain heuristic.
    pub fn with_plain_heuristic(
        name: &'static str,
        opts: JobOptions,
        transport: Box<dyn Transport<G>>,
        common: &super::solver::CommonOptions,
    ) -> JobLevel<G> {
        let c = common.clone();
        let seed = common.seed;
        let max = common.proof_max_nodes;
        JobLevel::new(
            name,
            opts,
            transport,
            Box::new(move |_g: &G| plain_heuristic::<G>(&c)),
            seed,
            max,
        )
    }
}

/// How often the manager reports progress.
const REPORT_EVERY: Duration = Duration::from_millis(500);

/// How long the manager waits for cancelled jobs to come back at the end of a solve before
/// it leaves them (their answers are then dropped at the next problem's start).
const DRAIN_GRACE: Duration = Duration::from_secs(10);

impl<G: SolverGame> Solver<G> for JobLevel<G> {
    fn name(&self) -> &'static str {
        // The workers' solver names the result; the manager is a way of running it (the
        // statistics say so: [`SolveStats::jobs`]).
        self.name
    }

    fn solve(
        &mut self,
        game: &G,
        prover: Color,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        let start = Instant::now();
        let mut heuristic = (self.heuristic)(game);
        let mut tree = Tree::new(game.clone(), prover, self.seed, self.opts.top_k);
        let mut stats = JobStats {
            workers: self.transport.workers(),
            ..JobStats::default()
        };
        let mut run = Run {
            opts: &self.opts,
            transport: self.transport.as_mut(),
            tree: &mut tree,
            heuristic: heuristic.as_mut(),
            stats: &mut stats,
            limits,
            stop,
            start,
            next_id: self.next_id,
            nodes: 0,
            knowledge_nodes: 0,
            busy_seconds: 0.0,
            in_flight: Vec::new(),
            deterministic: limits.nodes.is_some(),
            prover,
            mode: JobMode::Split,
            leader: None,
            helper_paths: Vec::new(),
        };
        let began = run.transport.begin(game, prover);
        if began.is_ok() {
            let shared_table = !run.deterministic
                && run.transport.workers() > 1
                && !run.tree.solved()
                && run.transport.peek(&[]).is_some();
            if shared_table {
                run.mode = self.opts.mode;
            }
            if run.mode == JobMode::Split {
                run.tree.expand_root(run.heuristic);
            }
            run.main_loop(on_event);
        }
        run.finish();
        self.next_id = run.next_id;
        let (nodes, knowledge_nodes, busy) = (run.nodes, run.knowledge_nodes, run.busy_seconds);
        let result = tree.result();
        let best = tree
            .best_move()
            .or_else(|| best_from_table(&mut *self.transport, &tree, game, prover));
        let seconds = start.elapsed().as_secs_f64();
        stats.tree_nodes = tree.len() as u64;
        stats.busy = if stats.workers > 0 && seconds > 0.0 {
            (busy / (stats.workers as f64 * seconds)).min(1.0)
        } else {
            0.0
        };
        let (pn, dn) = tree.root_numbers();
        on_event(&SolveEvent::Progress {
            nodes,
            elapsed: start.elapsed(),
            best,
            pn_dn: Some((pn, dn)),
            value: None,
            tt_used: 0,
        });
        if result != SolveResult::Unknown {
            on_event(&SolveEvent::Solved { result, best });
        }
        self.last = Some(tree);
        SolveOutcome {
            result,
            prover,
            best,
            stats: SolveStats {
                nodes,
                seconds,
                nodes_per_second: nodes as f64 / seconds.max(1e-9),
                knowledge_nodes,
                jobs: Some(stats),
                ..SolveStats::default()
            },
        }
    }

    fn proof_tree_until(&mut self, _stop: &AtomicBool) -> Option<ProofTree> {
        // The sub-proofs came with the answers: grafting them is quick.
        self.last.as_ref()?.proof(self.proof_max_nodes)
    }

    fn clear(&mut self) {
        self.last = None;
        self.transport.clear();
    }

    fn set_memory(&mut self, bytes: usize) {
        // The budget is the whole solve's: the transport divides it among its workers (or
        // gives it to the table they share).
        self.transport.set_memory(bytes);
    }
}

/// A job out with a worker.
#[derive(Clone, Copy, Debug)]
struct Out {
    id: u64,
    leaf: u32,
    budget: u64,
    /// Its place in its round (deterministic mode: answers are integrated in this order).
    slot: usize,
    /// It fetches the sub-proof of a node a worker's table proved (see
    /// [`Tree::pending_proofs`]).
    proof_job: bool,
    thresholds: Option<(u64, u64)>,
    /// A helper's job (its position is not a node of the manager's tree).
    helper: bool,
}

/// Marks [`Out::leaf`] of a helper's job.
const NO_LEAF: u32 = u32::MAX;

/// One solve's loop state.
struct Run<'a, G: SolverGame> {
    opts: &'a JobOptions,
    transport: &'a mut dyn Transport<G>,
    tree: &'a mut Tree<G>,
    heuristic: &'a mut dyn Heuristic<G>,
    stats: &'a mut JobStats,
    limits: &'a Limits,
    stop: &'a AtomicBool,
    start: Instant,
    next_id: u64,
    /// Solver nodes answered so far.
    nodes: u64,
    knowledge_nodes: u64,
    busy_seconds: f64,
    in_flight: Vec<Out>,
    /// Lockstep rounds with fresh workers: the answer does not depend on timing.
    deterministic: bool,
    prover: Color,
    /// How the workers divide this problem: [`JobOptions::mode`] where they share a table,
    /// else [`JobMode::Split`].
    mode: JobMode,
    /// The job on the whole problem (helper mode).
    leader: Option<u64>,
    /// The helpers' jobs and their positions.
    helper_paths: Vec<(u64, Vec<Move>)>,
}

impl<G: SolverGame> Run<'_, G> {
    fn deadline_passed(&self) -> bool {
        self.limits.time.is_some_and(|t| self.start.elapsed() >= t)
    }

    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed) || self.deadline_passed()
    }

    /// Nodes still free for new jobs under the node limit.
    fn nodes_left(&self) -> u64 {
        match self.limits.nodes {
            None => u64::MAX,
            Some(n) => {
                let out: u64 = self.in_flight.iter().map(|j| j.budget).sum();
                n.saturating_sub(self.nodes.saturating_add(out))
            }
        }
    }

    fn send(
        &mut self,
        leaf: u32,
        budget: u64,
        thresholds: Option<(u64, u64)>,
        slot: usize,
        proof_job: bool,
    ) -> bool {
        let id = self.next_id;
        self.next_id += 1;
        let path = self.tree.path(leaf);
        log::debug!(
            "job {id}: {} nodes at {:?}{} (root pn/dn {:?})",
            budget,
            path,
            if proof_job { " (proof)" } else { "" },
            self.tree.root_numbers()
        );
        let job = Job {
            id,
            path,
            nodes: budget,
            want_proof: self.opts.proofs,
            fresh: self.deterministic,
            thresholds,
            prefer: self.tree.owner(leaf),
        };
        if self.transport.submit(job).is_err() {
            return false;
        }
        self.tree.set_job(leaf, Some(id));
        self.in_flight.push(Out {
            id,
            leaf,
            budget,
            slot,
            proof_job,
            thresholds,
            helper: false,
        });
        self.stats.jobs += 1;
        true
    }

    /// Sends a helper's job at `path` (helper mode).
    fn send_helper(&mut self, path: Vec<Move>, budget: u64) -> bool {
        let id = self.next_id;
        self.next_id += 1;
        log::debug!("helper job {id}: {budget} nodes at {path:?}");
        let job = Job {
            id,
            path: path.clone(),
            nodes: budget,
            // What it proves lands in the shared table, where the proof of the whole
            // problem finds it.
            want_proof: false,
            fresh: false,
            thresholds: None,
            prefer: None,
        };
        if self.transport.submit(job).is_err() {
            return false;
        }
        self.in_flight.push(Out {
            id,
            leaf: NO_LEAF,
            budget,
            slot: 0,
            proof_job: false,
            thresholds: None,
            helper: true,
        });
        self.helper_paths.push((id, path));
        self.stats.jobs += 1;
        self.stats.helper_jobs += 1;
        true
    }

    /// Shared mode: the whole problem, to the end, on every idle worker (the deadline, the
    /// stop flag or the first answer cancels the others).
    fn fill_shared(&mut self) {
        while self.in_flight.len() < self.width() && !self.stopped() && !self.tree.solved() {
            let budget = self.nodes_left();
            if budget == 0 || !self.send(0, budget, None, 0, false) {
                return;
            }
        }
    }

    /// Helper mode: the job on the whole problem when none is out, then a helper's job for
    /// every other idle worker.
    fn fill_helpers(&mut self) {
        if self.leader.is_none() && !self.tree.solved() {
            // The whole problem, to the end: the deadline or the stop flag cancels it.
            let budget = self.nodes_left();
            if budget == 0 || !self.send(0, budget, None, 0, false) {
                return;
            }
            self.leader = self.in_flight.last().map(|o| o.id);
        }
        while self.in_flight.len() < self.width() && !self.stopped() {
            let budget = self.budget();
            if budget == 0 {
                return;
            }
            let Some(path) = self.helper_path() else {
                return;
            };
            if !self.send_helper(path, budget) {
                return;
            }
        }
    }

    /// Where the next helper goes. It follows the path the whole-problem search is on in the
    /// shared table (at the prover's nodes the child with the smallest proof number, at the
    /// opponent's the smallest disproof number) to the first node where every child is
    /// needed for the result the root's numbers make likelier (the opponent's nodes for a
    /// win, the prover's for a loss), and takes the child there that neither that search
    /// nor another helper is in and that the search would reach last (recorded children
    /// before ones never entered; then the largest selection number). `None` when there is
    /// none.
    fn helper_path(&mut self) -> Option<Vec<Move>> {
        let mut g = self.tree.position(0);
        let mut path: Vec<Move> = Vec::new();
        let mut legal = Vec::new();
        let mut help_at_or = None;
        for _ in 0..HELPER_DEPTH {
            if g.outcome().is_some() {
                return None;
            }
            let known = self.transport.peek(&path)?;
            let or = g.to_move() == self.prover;
            // (selection number, other number) of a child at this node: pn at the
            // prover's nodes, dn at the opponent's.
            let sel = |k: &(Move, u64, u64)| if or { (k.1, k.2) } else { (k.2, k.1) };
            if known.iter().any(|k| sel(k).0 == 0) {
                // Solved for the side to move: nothing left to help with here.
                return None;
            }
            let open = || known.iter().filter(|k| sel(k).1 != 0);
            let leader = open().min_by_key(|k| sel(k).0).map(|k| k.0);
            let help_at_or = *help_at_or.get_or_insert_with(|| {
                // The root: a win is likelier when its proof number is the smaller.
                let min = open().map(|k| sel(k).0).min().unwrap_or(INF_NUMBER);
                let sum = open().fold(0u64, |a, k| a.saturating_add(sel(k).1));
                let (pn, dn) = if or { (min, sum) } else { (sum, min) };
                pn > dn
            });
            if or != help_at_or {
                let l = leader?;
                path.push(l);
                g.play(l).ok()?;
                continue;
            }
            g.legal_moves(&mut legal);
            // (recorded, selection number, other number): larger is later for the search.
            let mut pick: Option<(Move, (bool, u64, u64))> = None;
            for &m in &legal {
                if Some(m) == leader {
                    continue;
                }
                let rec = known.iter().find(|k| k.0 == m);
                if rec.is_some_and(|k| sel(k).1 == 0) {
                    // Already decided the way every child here must go.
                    continue;
                }
                g.play_unchecked(m);
                let over = g.outcome().is_some();
                g.undo();
                if over {
                    continue;
                }
                path.push(m);
                let taken = self
                    .helper_paths
                    .iter()
                    .any(|(_, t)| t.starts_with(&path) || path.starts_with(t));
                path.pop();
                if taken {
                    continue;
                }
                let key = rec.map_or((false, 0, 0), |k| (true, sel(k).0, sel(k).1));
                if pick.is_none_or(|(_, k)| key > k) {
                    pick = Some((m, key));
                }
            }
            if let Some((m, _)) = pick {
                path.push(m);
                return Some(path);
            }
            let l = leader?;
            path.push(l);
            g.play(l).ok()?;
        }
        None
    }

    /// A helper's answer: its work counts; what it solved is in the shared table already.
    fn helper_answered(&mut self, a: &JobAnswer) {
        self.helper_paths.retain(|(id, _)| *id != a.id);
        if a.result == SolveResult::Unknown {
            self.stats.unknown += 1;
        } else {
            self.stats.solved += 1;
        }
    }

    /// Jobs out at once: deterministic mode makes rounds as wide as the workers at the
    /// start, also after a worker is lost (the transport queues what the others cannot take
    /// at once), so that the rounds are those of a run without the loss.
    fn width(&self) -> usize {
        if self.deterministic {
            self.stats.workers
        } else {
            self.transport.workers()
        }
    }

    /// The next job's node budget.
    fn budget(&self) -> u64 {
        let grown = match self.opts.growth {
            0 => 0,
            g => self.nodes / g.saturating_mul(self.stats.workers.max(1) as u64),
        };
        self.opts.job_nodes.max(grown).min(self.nodes_left())
    }

    /// Sends jobs while workers are idle and positions are available.
    fn fill(&mut self) {
        match self.mode {
            JobMode::Helpers => return self.fill_helpers(),
            JobMode::Shared => return self.fill_shared(),
            JobMode::Split => {}
        }
        let mut slot = 0;
        while self.in_flight.len() < self.width() && !self.stopped() {
            let budget = self.budget();
            if budget == 0 {
                return;
            }
            let Some((leaf, tp, td)) = self.tree.select() else {
                return;
            };
            if !self.send(leaf, budget, Some((tp, td)), slot, false) {
                return;
            }
            slot += 1;
        }
    }

    /// The root is won: sends jobs that fetch the sub-proofs still pending in the merged
    /// proof. Returns whether any is pending.
    fn fill_proofs(&mut self) -> bool {
        let pending = self.tree.pending_proofs();
        let mut slot = 0;
        for n in pending.iter().copied() {
            if self.in_flight.len() >= self.width() || self.stopped() {
                break;
            }
            if self.in_flight.iter().any(|o| o.leaf == n) {
                continue;
            }
            let budget = self.budget().max(1);
            if !self.send(n, budget, None, slot, true) {
                break;
            }
            slot += 1;
        }
        !pending.is_empty()
    }

    fn main_loop(&mut self, on_event: &mut dyn FnMut(&SolveEvent)) {
        let mut last_report = Instant::now();
        // Deterministic mode: the answers of one round, integrated in slot order once all
        // are in.
        let mut round: Vec<JobAnswer> = Vec::new();
        while !self.stopped() {
            if self.transport.workers() == 0 {
                break;
            }
            let may_send = !self.deterministic || self.in_flight.is_empty();
            if self.tree.solved() {
                let want = self.opts.proofs && self.tree.result() == SolveResult::Win;
                let pending = want
                    && (if may_send {
                        self.fill_proofs()
                    } else {
                        !self.tree.pending_proofs().is_empty()
                    });
                if !pending {
                    break;
                }
            } else if may_send {
                self.fill();
            }
            if self.in_flight.is_empty() {
                // Nothing to send (node limit reached, or every open position is out).
                break;
            }
            // An idle helper looks again soon: the table it is placed by fills as the
            // whole-problem search goes.
            let poll = if self.mode == JobMode::Helpers && self.in_flight.len() < self.width() {
                Duration::from_millis(5)
            } else {
                Duration::from_millis(100)
            };
            let wait = match self.limits.time {
                Some(t) => t.saturating_sub(self.start.elapsed()).min(poll),
                None => poll,
            };
            match self.transport.recv(wait.max(Duration::from_millis(1))) {
                Some(TransportEvent::Answer(a)) => {
                    self.count(&a);
                    if self.deterministic {
                        round.push(a);
                        let all_in = self
                            .in_flight
                            .iter()
                            .all(|o| round.iter().any(|a| a.id == o.id));
                        if all_in {
                            let slot_of = |id: u64, out: &[Out]| {
                                out.iter()
                                    .find(|o| o.id == id)
                                    .map_or(usize::MAX, |o| o.slot)
                            };
                            let out = self.in_flight.clone();
                            round.sort_by_key(|a| slot_of(a.id, &out));
                            for a in std::mem::take(&mut round) {
                                self.integrate(a);
                            }
                        }
                    } else {
                        self.integrate(a);
                    }
                }
                Some(TransportEvent::Failed {
                    id, worker_lost, ..
                }) => self.failed(id, worker_lost),
                None => {}
            }
            if last_report.elapsed() >= REPORT_EVERY {
                last_report = Instant::now();
                on_event(&SolveEvent::Progress {
                    nodes: self.nodes,
                    elapsed: self.start.elapsed(),
                    best: self.tree.best_move(),
                    pn_dn: Some(self.tree.root_numbers()),
                    value: None,
                    tt_used: 0,
                });
            }
        }
    }

    /// Adds an answer's work to the totals.
    fn count(&mut self, a: &JobAnswer) {
        self.nodes = self.nodes.saturating_add(a.nodes);
        self.knowledge_nodes = self.knowledge_nodes.saturating_add(a.knowledge_nodes);
        self.busy_seconds += a.seconds;
    }

    /// Backs up an answer (its work is already counted).
    fn integrate(&mut self, a: JobAnswer) {
        log::debug!(
            "answer {}: {:?} {} nodes, {} child numbers, worker {}",
            a.id,
            a.result,
            a.nodes,
            a.children.len(),
            a.worker
        );
        let Some(pos) = self.in_flight.iter().position(|j| j.id == a.id) else {
            // Not a job of this solve (an answer left over from a cancelled one).
            self.stats.wasted += 1;
            return;
        };
        let out = self.in_flight.swap_remove(pos);
        if out.helper {
            self.helper_answered(&a);
            return;
        }
        if self.leader == Some(a.id) {
            self.leader = None;
        }
        let leaf = out.leaf;
        self.tree.set_job(leaf, None);
        self.tree.add_effort(leaf, a.nodes);
        if out.proof_job {
            if self.tree.is_pending(leaf) {
                match a.proof {
                    Some(p) if a.result == SolveResult::Win => self.tree.attach_proof(leaf, p),
                    _ => {
                        // The worker's table lost it: the position is searched again.
                        self.stats.proof_failures += 1;
                        self.tree.reopen(leaf);
                    }
                }
            }
            return;
        }
        if !self.deterministic {
            self.tree.set_owner(leaf, a.worker);
        }
        if self.tree.settled(leaf) {
            // The path was solved while the job was out.
            self.stats.wasted += 1;
            return;
        }
        let result = match a.result {
            SolveResult::Win if self.opts.proofs && a.proof.is_none() => {
                self.stats.proof_failures += 1;
                SolveResult::Unknown
            }
            r => r,
        };
        match result {
            SolveResult::Unknown => {
                self.stats.unknown += 1;
                if self.stopped() || self.mode != JobMode::Split {
                    // Cancelled at the end: nothing to learn, no expansion. (In the shared and
                    // helper modes the whole problem simply goes out again.)
                    return;
                }
                let split = self.opts.split_after;
                match a.numbers {
                    // Stopped by its thresholds: the node keeps the worker's numbers and is
                    // no longer the most proving one; it goes out again when it is.
                    Some((pn, dn))
                        if a.nodes < out.budget
                            && (split == 0 || self.tree.jobs_at(leaf) < split) =>
                    {
                        self.tree.set_numbers(leaf, pn, dn)
                    }
                    // Its whole budget spent, or the search keeps coming back to it: a large
                    // piece of work, split so that several workers can share it.
                    _ => self.tree.expand(leaf, self.heuristic, &a.children),
                }
            }
            r => {
                self.stats.solved += 1;
                if !self.deterministic {
                    let path = self.tree.path(leaf);
                    self.transport.share(&path, r, a.worker);
                }
                self.tree.solve_leaf(leaf, r, a.proof);
            }
        }
        self.cancel_settled();
    }

    /// Cancels the jobs whose path is solved now.
    fn cancel_settled(&mut self) {
        for o in &self.in_flight {
            if !o.proof_job && !o.helper && self.tree.settled(o.leaf) {
                self.transport.cancel(o.id);
            }
        }
    }

    fn failed(&mut self, id: u64, worker_lost: bool) {
        if worker_lost {
            self.stats.lost_workers += 1;
        }
        let Some(pos) = self.in_flight.iter().position(|j| j.id == id) else {
            return;
        };
        let o = self.in_flight.swap_remove(pos);
        if o.helper {
            self.helper_paths.retain(|(h, _)| *h != id);
            return;
        }
        if self.leader == Some(id) {
            self.leader = None;
        }
        self.tree.set_job(o.leaf, None);
        self.stats.resent += 1;
        if self.deterministic {
            // The same position goes out again in the same slot, so the round and its answers
            // are those of a run without the failure.
            if !self.send(o.leaf, o.budget, o.thresholds, o.slot, o.proof_job) {
                log::warn!("job-level: a failed job could not be sent again");
            }
        }
        // Otherwise the position is open again: the next selection finds it if it is still
        // the most proving one.
    }

    /// Cancels what is still out and collects the answers (their work counts).
    fn finish(&mut self) {
        for o in &self.in_flight {
            self.transport.cancel(o.id);
        }
        let t0 = Instant::now();
        while !self.in_flight.is_empty() && t0.elapsed() < DRAIN_GRACE {
            match self.transport.recv(Duration::from_millis(50)) {
                Some(TransportEvent::Answer(a)) => {
                    self.count(&a);
                    if let Some(pos) = self.in_flight.iter().position(|j| j.id == a.id) {
                        let out = self.in_flight.swap_remove(pos);
                        if out.helper {
                            self.stats.cancelled += 1;
                            continue;
                        }
                        let leaf = out.leaf;
                        self.tree.set_job(leaf, None);
                        if self.tree.settled(leaf) {
                            self.stats.wasted += 1;
                        } else {
                            self.stats.cancelled += 1;
                        }
                    }
                }
                Some(TransportEvent::Failed {
                    id, worker_lost, ..
                }) => {
                    if worker_lost {
                        self.stats.lost_workers += 1;
                    }
                    self.in_flight.retain(|j| j.id != id);
                }
                None => {
                    if self.transport.workers() == 0 {
                        break;
                    }
                }
            }
        }
    }
}

/// The root move from the shared table (helper mode, where the manager's tree is its root
/// alone): for a win with the prover to move the proven child, else at the prover's nodes
/// the smallest proof number, at the opponent's the smallest disproof number. `None` where
/// the workers share no table or it knows no child.
fn best_from_table<G: SolverGame>(
    transport: &mut dyn Transport<G>,
    tree: &Tree<G>,
    game: &G,
    prover: Color,
) -> Option<Move> {
    if let Some(m) = tree.proof_root_move() {
        return Some(m);
    }
    let known = transport.peek(&[])?;
    if game.to_move() == prover {
        known.iter().min_by_key(|k| k.1).map(|k| k.0)
    } else {
        known.iter().min_by_key(|k| k.2).map(|k| k.0)
    }
}
