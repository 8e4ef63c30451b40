//! The job-level search ([`pcn::search::joblevel`]): one problem over several worker
//! threads, one merged proof.
//!
//! - On random small positions (Gomoku 6x6 under 4T, 7x7 Killall-Go endgames) split into
//!   many small jobs, its answers agree with exhaustive search and every merged proof passes
//!   the proof checker.
//! - A worker that panics in the middle of a job, and a worker lost for good, lose nothing:
//!   the job goes out again, and in deterministic mode (a node limit) the answer and the
//!   merged proof are exactly those of the run without the fault.
//! - Killall-Go: each job's path is played on the root with its whole history and the
//!   workers share one table keyed by position and history; the answers are checked against
//!   exhaustive search, which applies situational superko on the real history; two
//!   histories of the same stones whose values differ through superko
//!   ([`common::superko_pair`]) get their own answers from one shared table.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::killallgo::KillallGo;
use pcn::game::{Color, Game, Move};
use pcn::search::joblevel::threads::{ThreadTransport, WorkerFactory};
use pcn::search::joblevel::{
    Job, JobLevel, JobMode, JobOptions, JobStats, Transport, TransportEvent,
};
use pcn::search::registry::{self, SolverChoice, SolverKind};
use pcn::search::solver::{
    ProofTree, SolveEvent, SolveOutcome, SolveResult, Solver, SolverGame, SolverOptions,
};
use pcn::search::Limits;

mod common;

use common::{gomoku_key, no_key, Brute};

/// A job-level solver with `workers` threads and jobs of `job_nodes` nodes, dividing the
/// problem by `mode`.
fn job_level<G: SolverGame>(
    kind: SolverKind,
    workers: usize,
    job_nodes: u64,
    mode: JobMode,
) -> Box<dyn Solver<G>> {
    let mut opts = SolverOptions::with_memory(8 << 20);
    opts.jobs = JobOptions {
        workers,
        job_nodes,
        growth: 0,
        mode,
        ..JobOptions::default()
    };
    registry::build::<G>(SolverChoice::Kind(kind), &opts, None).expect("job-level solver")
}

fn stats(o: &SolveOutcome) -> JobStats {
    o.stats.jobs.clone().expect("job-level statistics")
}

/// Solves `g` with `s`, checks the answer against `truth` and a win's merged proof with the
/// proof checker; returns the result and the job statistics.
fn check<G: SolverGame>(
    s: &mut dyn Solver<G>,
    g: &G,
    prover: Color,
    limits: &Limits,
    truth: bool,
    label: &str,
) -> (SolveResult, JobStats) {
    let stop = AtomicBool::new(false);
    let o = s.solve(g, prover, limits, &stop, &mut |_| {});
    let st = stats(&o);
    if o.result == SolveResult::Unknown {
        return (o.result, st);
    }
    assert_eq!(
        o.result == SolveResult::Win,
        truth,
        "{label}: job-level says {:?}, exhaustive search says prover wins = {truth} ({st:?})",
        o.result
    );
    if o.result == SolveResult::Win {
        let tree = s
            .proof_tree()
            .unwrap_or_else(|| panic!("{label}: a win without a merged proof ({st:?})"));
        tree.check(g)
            .unwrap_or_else(|e| panic!("{label}: merged proof rejected: {e}"));
        if g.to_move() == prover {
            let first = tree.nodes[0].children[0].0;
            assert_eq!(o.best, Some(first), "{label}: best move is not the proof's");
        }
    }
    (o.result, st)
}

#[test]
fn gomoku_answers_and_merged_proofs_check() {
    let positions = common::gomoku_positions(6, Rule::FourT, 20, 40, 11);
    let (mut solved, mut split, mut wins, mut checked) = (0, 0, 0, 0);
    for (kind, deterministic, job_nodes) in [
        (SolverKind::Fdfpn, true, 1_000),
        (SolverKind::Mcts, false, 1_000),
    ] {
        let mut s = job_level::<Gomoku>(kind, 3, job_nodes, JobMode::Split);
        for (i, g) in positions.iter().enumerate() {
            let prover = g.to_move();
            let mut brute = Brute::new(2_000_000, gomoku_key);
            let Some(truth) = brute.wins(&mut g.clone(), prover) else {
                continue;
            };
            if !truth {
                // Disproofs of these drawn-out 4T positions take either solver long; the
                // Killall-Go test below checks losses.
                continue;
            }
            checked += 1;
            s.clear();
            let limits = if deterministic {
                Limits::nodes(300_000)
            } else {
                Limits::time(Duration::from_secs(5))
            };
            let label = format!("gomoku 6x6 #{i} {kind:?}");
            let (r, st) = check(s.as_mut(), g, prover, &limits, truth, &label);
            if r != SolveResult::Unknown {
                solved += 1;
                wins += (r == SolveResult::Win) as usize;
                split += (st.jobs > 1) as usize;
            }
        }
    }
    eprintln!(
        "gomoku: {checked} brute-forced, {solved} solved ({wins} wins), {split} over several jobs"
    );
    assert!(checked >= 16, "too few positions: {checked}");
    assert!(
        solved * 10 >= checked * 8,
        "solved only {solved} of {checked}"
    );
    assert!(
        split * 5 >= solved,
        "few problems needed several jobs: {split} of {solved}"
    );
}

#[test]
fn killallgo_answers_and_merged_proofs_check() {
    let positions = common::killallgo_positions(70, 40, 5);
    let (mut solved, mut split, mut wins, mut checked) = (0, 0, 0, 0);
    let mut s = job_level::<KillallGo>(SolverKind::Fdfpn, 2, 30, JobMode::Split);
    for (i, g) in positions.iter().enumerate() {
        for prover in [Color::White, Color::Black] {
            let mut brute = Brute::new(300_000, no_key);
            let Some(truth) = brute.wins(&mut g.clone(), prover) else {
                continue;
            };
            checked += 1;
            s.clear();
            let label = format!("killallgo 7x7 #{i} prover {prover:?}");
            let (r, st) = check(
                s.as_mut(),
                g,
                prover,
                &Limits::time(Duration::from_secs(20)),
                truth,
                &label,
            );
            if r != SolveResult::Unknown {
                solved += 1;
                wins += (r == SolveResult::Win) as usize;
                split += (st.jobs > 1) as usize;
            }
        }
    }
    eprintln!("killallgo: {checked} brute-forced, {solved} solved ({wins} wins), {split} over several jobs");
    assert!(checked >= 20, "too few positions: {checked}");
    assert!(
        solved * 10 >= checked * 8,
        "solved only {solved} of {checked}"
    );
    assert!(
        wins >= 3 && wins < solved,
        "one-sided values: {wins} wins of {solved}"
    );
    assert!(
        split * 4 >= solved,
        "few problems needed several jobs: {split} of {solved}"
    );
}

/// Two workers on one table in `mode`, on 7x7 Killall-Go endgames (`seed`) for both provers:
/// every answer agrees with exhaustive search, every win's proof (from the shared table)
/// checks and the reported move is the proof's; at least 80% are solved. Returns the
/// job statistics of each solve.
fn one_table_mode_checks(mode: JobMode, seed: u64) -> Vec<JobStats> {
    let positions = common::killallgo_positions(70, 24, seed);
    let mut s = job_level::<KillallGo>(SolverKind::Fdfpn, 2, 30, mode);
    let (mut solved, mut all) = (0, Vec::new());
    for (i, g) in positions.iter().enumerate() {
        for prover in [Color::White, Color::Black] {
            let mut brute = Brute::new(300_000, no_key);
            let Some(truth) = brute.wins(&mut g.clone(), prover) else {
                continue;
            };
            s.clear();
            let label = format!("killallgo 7x7 #{i} prover {prover:?} {mode}");
            let limits = Limits::time(Duration::from_secs(20));
            let (r, st) = check(s.as_mut(), g, prover, &limits, truth, &label);
            solved += (r != SolveResult::Unknown) as usize;
            all.push(st);
        }
    }
    let checked = all.len();
    eprintln!("{mode}: {checked} brute-forced, {solved} solved");
    assert!(checked >= 12, "too few positions: {checked}");
    assert!(
        solved * 10 >= checked * 8,
        "solved only {solved} of {checked}"
    );
    // The manager's tree is the root alone: the problem is never split by the manager.
    assert!(
        all.iter().all(|st| st.tree_nodes == 1),
        "{mode}: the manager split"
    );
    all
}

/// Helper mode (`--job-mode helpers`): one worker on the whole problem, the other below the
/// opponent's nodes on its path, both on one table; helpers were sent.
#[test]
fn killallgo_with_helpers_answers_and_proofs_check() {
    let st = one_table_mode_checks(JobMode::Helpers, 5);
    let helper_jobs: u64 = st.iter().map(|s| s.helper_jobs).sum();
    assert!(helper_jobs > 0, "no helper was ever sent");
}

/// Shared mode (`--job-mode shared`, the default): every worker on the whole problem from
/// its root, one table, each steering away from the other's path; the problem went to both
/// workers, and no helper was sent.
#[test]
fn killallgo_shared_answers_and_proofs_check() {
    let st = one_table_mode_checks(JobMode::Shared, 7);
    assert!(
        st.iter().any(|s| s.jobs >= 2),
        "the problem never went to both workers"
    );
    assert!(st.iter().all(|s| s.helper_jobs == 0));
}

/// The same stones with White to move, reached through a ko capture (White's recapture
/// repeats a position: Black wins) and directly (the recapture is legal: White wins). The
/// job-level search, its table shared by the workers and kept from one solve to the next
/// (no `clear`), answers each history for itself, in either order and for either prover,
/// as exhaustive search does; every proof checks.
#[test]
fn superko_histories_never_share_a_result() {
    let (through_ko, direct) = common::superko_pair();
    assert_eq!(through_ko.hash(), direct.hash(), "the same stones");
    assert_eq!(through_ko.to_move(), Color::White);
    assert_eq!(direct.to_move(), Color::White);
    let truth = |g: &KillallGo| {
        Brute::new(1_000_000, no_key)
            .wins(&mut g.clone(), Color::White)
            .expect("exhaustive search finishes")
    };
    assert!(
        !truth(&through_ko),
        "through the ko White's recapture is barred"
    );
    assert!(truth(&direct), "without the ko White recaptures and lives");
    for mode in [JobMode::Split, JobMode::Helpers, JobMode::Shared] {
        let mut s = job_level::<KillallGo>(SolverKind::Fdfpn, 2, 5, mode);
        let limits = Limits::time(Duration::from_secs(20));
        let order = [&through_ko, &direct, &through_ko, &direct];
        for (i, g) in order.iter().enumerate() {
            for prover in [Color::White, Color::Black] {
                let t = truth(g) == (prover == Color::White);
                let label = format!("superko pair, solve {i}, prover {prover:?}, {mode}");
                let (r, _) = check(s.as_mut(), g, prover, &limits, t, &label);
                assert_ne!(r, SolveResult::Unknown, "{label}: not solved");
            }
        }
    }
}

/// A solver that panics in its `n`-th solve over all workers (counted in `count`), and,
/// with `lose`, whose worker can make no solver after that (the worker is lost for good).
struct Faulty<G: SolverGame> {
    inner: Box<dyn Solver<G>>,
    count: Arc<AtomicUsize>,
    n: usize,
}

impl<G: SolverGame> Solver<G> for Faulty<G> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn solve(
        &mut self,
        game: &G,
        prover: Color,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        if self.count.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            panic!("injected worker failure");
        }
        self.inner.solve(game, prover, limits, stop, on_event)
    }
    fn proof_tree_until(&mut self, stop: &AtomicBool) -> Option<ProofTree> {
        self.inner.proof_tree_until(stop)
    }
    fn child_numbers(&mut self, game: &G, prover: Color) -> Option<Vec<(Move, u64, u64)>> {
        self.inner.child_numbers(game, prover)
    }
    fn set_root_depth(&mut self, plies: usize) {
        self.inner.set_root_depth(plies)
    }
    fn clear(&mut self) {
        self.inner.clear()
    }
    fn set_memory(&mut self, bytes: usize) {
        self.inner.set_memory(bytes)
    }
}

/// A job-level fdfpn over `workers` threads whose `fail_at`-th job panics (0: none); with
/// `lose`, the failing worker cannot make a new solver afterwards.
fn faulty_job_level(
    workers: usize,
    fail_at: usize,
    lose: bool,
) -> (JobLevel<KillallGo>, Arc<AtomicUsize>) {
    let mut opts = SolverOptions::with_memory(8 << 20);
    opts.jobs.workers = 1;
    let count = Arc::new(AtomicUsize::new(0));
    let failed_worker = Arc::new(AtomicUsize::new(usize::MAX));
    let (c, fw) = (count.clone(), failed_worker.clone());
    let factory: WorkerFactory<KillallGo> = Arc::new(move |index, _memory, _share| {
        if lose && fw.load(Ordering::SeqCst) == index {
            return None;
        }
        let inner =
            registry::build::<KillallGo>(SolverChoice::Kind(SolverKind::Fdfpn), &opts, None)
                .ok()?;
        let (c2, fw2) = (c.clone(), fw.clone());
        Some(Box::new(Watch {
            faulty: Faulty {
                inner,
                count: c2,
                n: fail_at,
            },
            index,
            failed: fw2,
        }) as Box<dyn Solver<KillallGo>>)
    });
    let transport = ThreadTransport::new(workers, 8 << 20, factory);
    let jl = JobLevel::with_plain_heuristic(
        "fdfpn",
        JobOptions {
            workers,
            job_nodes: 40,
            growth: 0,
            mode: JobMode::Split,
            ..JobOptions::default()
        },
        Box::new(transport),
        &SolverOptions::default().common,
    );
    (jl, count)
}

/// Records which worker failed (so that, with `lose`, its factory refuses afterwards).
struct Watch {
    faulty: Faulty<KillallGo>,
    index: usize,
    failed: Arc<AtomicUsize>,
}

impl Solver<KillallGo> for Watch {
    fn name(&self) -> &'static str {
        self.faulty.name()
    }
    fn solve(
        &mut self,
        game: &KillallGo,
        prover: Color,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SolveEvent),
    ) -> SolveOutcome {
        let before = self.faulty.count.load(Ordering::SeqCst);
        if before + 1 == self.faulty.n {
            self.failed.store(self.index, Ordering::SeqCst);
        }
        self.faulty.solve(game, prover, limits, stop, on_event)
    }
    fn proof_tree_until(&mut self, stop: &AtomicBool) -> Option<ProofTree> {
        self.faulty.proof_tree_until(stop)
    }
    fn child_numbers(&mut self, game: &KillallGo, prover: Color) -> Option<Vec<(Move, u64, u64)>> {
        self.faulty.child_numbers(game, prover)
    }
    fn set_root_depth(&mut self, plies: usize) {
        self.faulty.set_root_depth(plies)
    }
    fn clear(&mut self) {
        self.faulty.clear()
    }
    fn set_memory(&mut self, bytes: usize) {
        self.faulty.set_memory(bytes)
    }
}

#[test]
fn a_failed_worker_loses_nothing() {
    // A position whose proof takes several rounds of jobs.
    let positions = common::killallgo_positions(40, 40, 17);
    let limits = Limits::nodes(20_000);
    let stop = AtomicBool::new(false);
    let mut chosen = None;
    for g in &positions {
        for prover in [Color::White, Color::Black] {
            let (mut jl, _) = faulty_job_level(2, 0, false);
            let o = jl.solve(g, prover, &limits, &stop, &mut |_| {});
            let st = stats(&o);
            if o.result == SolveResult::Win && (8..=400).contains(&st.jobs) {
                let proof = jl.proof_tree().expect("merged proof");
                proof.check(g).expect("merged proof checks");
                chosen = Some((g.clone(), prover, o.result, proof, st.jobs));
                break;
            }
        }
        if chosen.is_some() {
            break;
        }
    }
    let (g, prover, result, proof, jobs) =
        chosen.expect("no position needed several rounds of jobs");
    eprintln!(
        "fault test position: {jobs} jobs, proof of {} nodes",
        proof.len()
    );
    for (fail_at, lose) in [(3, false), (5, true), (jobs as usize, false)] {
        let (mut jl, count) = faulty_job_level(2, fail_at, lose);
        let o = jl.solve(&g, prover, &limits, &stop, &mut |_| {});
        let st = stats(&o);
        let label = format!("failure at job {fail_at}, worker lost {lose}");
        assert!(
            count.load(Ordering::SeqCst) >= fail_at,
            "{label}: the failure never happened"
        );
        // The panicked job goes out again; with the worker lost, the job it then refuses too.
        assert_eq!(st.resent, 1 + lose as u64, "{label}: {st:?}");
        assert_eq!(st.lost_workers, lose as u64, "{label}: {st:?}");
        assert_eq!(o.result, result, "{label}: another answer");
        let p = jl.proof_tree().expect("merged proof after the failure");
        assert_eq!(p, proof, "{label}: another proof");
    }
}

#[test]
fn a_panicking_worker_is_answered_as_failed_and_works_again() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let factory: WorkerFactory<KillallGo> = Arc::new(move |_, _, _| {
        let inner = registry::build::<KillallGo>(
            SolverChoice::Kind(SolverKind::Fdfpn),
            &SolverOptions::with_memory(4 << 20),
            None,
        )
        .ok()?;
        Some(Box::new(Faulty {
            inner,
            count: c.clone(),
            n: 1,
        }) as Box<dyn Solver<KillallGo>>)
    });
    let mut t = ThreadTransport::new(1, 4 << 20, factory);
    let g = common::killallgo_positions(20, 1, 3).remove(0);
    t.begin(&g, Color::White).unwrap();
    let job = |id| Job {
        id,
        path: Vec::new(),
        nodes: 1_000,
        want_proof: false,
        fresh: false,
        thresholds: None,
        prefer: None,
    };
    t.submit(job(1)).unwrap();
    match t.recv(Duration::from_secs(30)) {
        Some(TransportEvent::Failed {
            id: 1,
            worker_lost: false,
            why,
            ..
        }) => assert!(why.contains("injected"), "{why}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(t.workers(), 1);
    t.submit(job(2)).unwrap();
    match t.recv(Duration::from_secs(30)) {
        Some(TransportEvent::Answer(a)) => {
            assert_eq!(a.id, 2);
            assert!(a.nodes > 0);
        }
        other => panic!("expected an answer, got {other:?}"),
    }
    // An illegal path (a move after the game ended by two passes) is refused, not played.
    let mut bad = job(3);
    bad.path = vec![g.pass_move(), g.pass_move(), g.pass_move()];
    t.submit(bad).unwrap();
    match t.recv(Duration::from_secs(30)) {
        Some(TransportEvent::Failed { id: 3, why, .. }) => assert!(why.contains("job 3"), "{why}"),
        other => panic!("expected a refused path, got {other:?}"),
    }
}
