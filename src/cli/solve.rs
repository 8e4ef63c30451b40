//! `pcn solve [OPTIONS] PATH...`: runs a solver on problem SGF files, for scripts and pipes.
//!
//! Paths are SGF files, directories (their `*.sgf` files, sorted numerically by file name)
//! or `-` (SGF text on stdin). Stdout gets one JSON object per problem and line; stderr a
//! summary table at the end, and a progress bar while running when stderr is a terminal.
//! See docs/solving.md for the fields and the exit codes: 0 every problem ran (whatever
//! its result), 1 some problem could not be loaded or its proof not written, 2 usage error.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::game::gomoku::{Gomoku, Rule};
use crate::game::killallgo::{KillallGo, KillallGoRules};
use crate::game::Color;
use crate::proof::{self, GameKind, MoveTree, ProofHeader};
use crate::search::joblevel::link::{LinkEvent, LinkTransport, SpawnLink, StdioLink};
use crate::search::joblevel::{JobOptions, JobStats};
use crate::search::registry::{self, SolverNet};
use crate::search::solver::{
    solver_names, CommonOptions, DfpnOptions, Knowledge, MctsOptions, MctsPhases, NetMode,
    SolveEvent, SolveResult, Solver, SolverChoice, SolverGame, SolverKind, SolverOptions,
    AUTO_SOLVER,
};
use crate::search::Limits;
use crate::sgf::{self, GameTree};
use crate::util::OnOff;

/// Exit code: a problem could not be loaded, or its proof could not be written.
pub const EXIT_SOME_ERRORS: i32 = 1;
/// Exit code: bad options.
pub const EXIT_USAGE: i32 = 2;

/// Whose win to prove.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProveArg {
    /// The side to move in the problem.
    Tomove,
    /// Black.
    Black,
    /// White.
    White,
}

/// The game, when not taken from the SGF's `GM`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum GameArg {
    /// Gomoku (`GM[4]`).
    Gomoku,
    /// Killall-Go (`GM[1]`, `SZ[9]` PCN variant or `SZ[7]`).
    Killallgo,
}

/// Options of `pcn solve`. `--nodes`, `--threads`, `--memory`, `--seed`, `--net`,
/// `--symmetries` and `--backend` are the global options (clap cannot define them twice);
/// the CLI copies them in.
#[derive(Args, Debug, Clone)]
pub struct SolveArgs {
    /// SGF files, directories of `*.sgf` files (sorted numerically), or `-` for stdin.
    #[arg(required_unless_present = "job_worker")]
    pub paths: Vec<String>,
    /// Plumbing (docs/cluster.md): run as one job-level worker process, reading jobs on
    /// stdin and answering on stdout in the line protocol of `search::joblevel::wire`,
    /// instead of solving files.
    #[arg(long, hide = true)]
    pub job_worker: bool,
    /// Plumbing (docs/cluster.md): the job-level manager's workers are other processes:
    /// `spawn` starts `--workers` local `pcn solve --job-worker` processes; `stdio` reaches
    /// them through this process's stdin and stdout (lines `@<worker> …`), relayed by
    /// `cluster/pcn-ray prove`.
    #[arg(long, hide = true, value_enum)]
    pub job_link: Option<JobLinkArg>,
    /// The game (default: from the SGF: GM[4] Gomoku, GM[1] with SZ[9] or SZ[7] Killall-Go).
    #[arg(long, value_enum)]
    pub game: Option<GameArg>,
    /// Gomoku rule: 4t (the PCN paper's problem setting), freestyle (alias ndk), exact,
    /// renju, caro, caro-exact.
    #[arg(long, default_value = "4t")]
    pub rule: String,
    /// Solver: auto (the game's best: mcts for Gomoku, fdfpn for Killall-Go; see
    /// [`SolverGame::DEFAULT_SOLVER`]), mcts, fdfpn, dfpn, gpn, ews, ppn, ab.
    #[arg(long, default_value = AUTO_SOLVER)]
    pub solver: String,
    /// Network (the global `--net`): a model path or `none`. Plain `dfpn` ignores it.
    #[arg(skip)]
    pub net: String,
    /// Board symmetries per network evaluation (the global `--symmetries`, 1..=8).
    #[arg(skip)]
    pub symmetries: u8,
    /// Network backend (the global `--backend`).
    #[arg(skip)]
    pub backend: String,
    /// Whose win to prove.
    #[arg(long, value_enum, default_value = "tomove")]
    pub prove: ProveArg,
    /// Time limit per problem, in seconds.
    #[arg(long, default_value_t = 60.0)]
    pub time: f64,
    /// Node limit per problem (the global `--nodes`).
    #[arg(skip)]
    pub nodes: Option<u64>,
    /// Search threads (the global `--threads`, default 1): MCTS threads sharing one tree,
    /// and the network backend's threads. DFPN is single-threaded.
    #[arg(skip)]
    pub threads: u32,
    /// Solver workers (the global `--workers`, default 1): more than one runs the job-level
    /// search, its jobs on that many threads.
    #[arg(skip)]
    pub workers: usize,
    /// Node budget of one job with several workers.
    #[arg(long, default_value_t = crate::search::joblevel::DEFAULT_JOB_NODES)]
    pub job_nodes: u64,
    /// With several workers: at the prover's nodes the next job goes below one of the best
    /// K children (picked at random; 1: always the most-proving one).
    #[arg(long, default_value_t = crate::search::joblevel::DEFAULT_TOP_K)]
    pub job_top: usize,
    /// With several workers: jobs grow to at least the nodes so far / (G · workers); 0: fixed
    /// `--job-nodes`.
    #[arg(long, default_value_t = crate::search::joblevel::DEFAULT_GROWTH)]
    pub job_growth: u64,
    /// With several workers: a position that jobs left at their thresholds this many times is
    /// split among the workers (0: only after a whole job budget).
    #[arg(long, default_value_t = crate::search::joblevel::DEFAULT_SPLIT_AFTER)]
    pub job_split: u32,
    /// With several workers whose solver keeps one table for all of them (DFPN, focused
    /// DFPN), how they divide the problem: `shared` (each searches it all from the root,
    /// steering away from the others' paths), `helpers` (one searches it all, the others help
    /// below the opponent's nodes on its path) or `split` (the manager splits it by its own
    /// tree; always so with `--nodes` and for workers in other processes).
    #[arg(long, default_value_t = crate::search::joblevel::DEFAULT_MODE)]
    pub job_mode: crate::search::joblevel::JobMode,
    /// Transposition-table memory in bytes (the global `--memory`, default
    /// [`crate::search::DEFAULT_MEMORY_BYTES`]).
    #[arg(skip)]
    pub memory_bytes: usize,
    /// Write each proven win's solution tree as SGF into this directory.
    #[arg(long)]
    pub proof_dir: Option<PathBuf>,
    /// Gomoku: VCF threat search at every node where the prover is to move (on|off).
    #[arg(long, default_value = "on")]
    pub vcf: OnOff,
    /// Gomoku: VCT threat search as well, after VCF failed (on|off).
    #[arg(long, default_value = "on")]
    pub vct: OnOff,
    /// Gomoku without a network: share (0..=1) of the learned pattern policy
    /// (weights/gomoku_patterns.bin) in the MCTS and focused-DFPN priors; 0: threat priors only.
    #[arg(long, default_value_t = 0.0)]
    pub patterns: f32,
    /// Gomoku, MCTS without a network: when the search fills its node pool without a
    /// result, search again in the time left with the prover's moves narrowed to fours,
    /// defences against the opponent's threats, and threats of a threat (after the move and
    /// a pass the prover has a VCF or VCT within N nodes); 0: no second search.
    #[arg(long, default_value_t = Knowledge::default().lambda_nodes)]
    pub lambda: u64,
    /// Gomoku, MCTS without a network: share (0..=1) of the learned pattern policy in the
    /// priors of that second, narrowed search (the first keeps `--patterns`).
    #[arg(long, default_value_t = MctsPhases::default().narrow_patterns)]
    pub narrow_patterns: f32,
    /// Gomoku, MCTS without a network: weight (0..=100) of the proof-number bias at the root
    /// of that second, narrowed search (the root's moves with the smallest proof numbers
    /// first); 0: off.
    #[arg(long, default_value_t = MctsPhases::default().root_pn)]
    pub root_pn: f32,
    /// Killall-Go: White wins as soon as a White block is unconditionally alive (Benson).
    /// Off changes the game (it then ends only by two passes); proofs record it (on|off).
    #[arg(long, default_value = "on")]
    pub benson: OnOff,
    /// Killall-Go: filling an own true eye is illegal. Off changes the game; proofs record it
    /// (on|off).
    #[arg(long, default_value = "on")]
    pub own_eye_ban: OnOff,
    /// Random seed of the solvers (the global `--seed`).
    #[arg(skip)]
    pub seed: u64,
    /// Largest proof tree written (nodes).
    #[arg(long, default_value_t = 20_000_000)]
    pub proof_max_nodes: usize,
    /// Wall-clock budget of one proof extraction, seconds (default: what the solve left of
    /// `--time`, but at least `min(--time, 1 s)`; 0: no extraction). Past it the win is
    /// reported without a proof ("win, no proof").
    #[arg(long)]
    pub proof_time: Option<f64>,
    /// Focused DFPN with a network in Killall-Go: `hybrid` (the static move order, with the
    /// network ordering the top `--net-depth` plies) or `paper` (the network at every node,
    /// pn/dn from its costs). Other games always use `paper`.
    #[arg(long, default_value = "hybrid")]
    pub net_mode: NetMode,
    /// `--net-mode hybrid`: nodes fewer than this many plies below the root consult the
    /// network.
    #[arg(long, default_value_t = 4)]
    pub net_depth: usize,
    /// `--net-mode hybrid`: weight of the network's log-prior in the move order against the
    /// static score's 1 (0: the static order alone).
    #[arg(long, default_value_t = 1.0)]
    pub net_weight: f32,
    /// Focused DFPN with `--net-mode paper`: evaluate all children of an expanded node in
    /// one network batch (`auto`: on with a GPU backend, off on the CPU).
    #[arg(long, value_enum, default_value = "auto")]
    pub children_batch: ChildrenBatchArg,
}

/// `--job-link` values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum JobLinkArg {
    /// Worker processes started here.
    Spawn,
    /// Workers reached through stdin/stdout, relayed by someone else.
    Stdio,
}

/// `--children-batch` values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ChildrenBatchArg {
    /// On with a GPU backend, off on the CPU.
    Auto,
    /// Always.
    On,
    /// Never (one position per network call).
    Off,
}

/// One problem's JSON line.
#[derive(Serialize, Debug, Clone, Default)]
pub struct Record {
    /// The path as given (`-` for stdin).
    pub file: String,
    /// `win`, `loss`, `unknown` (for the prover) or `error`.
    pub result: String,
    /// `B` or `W` (null on errors before the position was known).
    pub prover: Option<String>,
    /// The root move (GTP vertex): the winning move, or the best so far; null if none.
    #[serde(rename = "move")]
    pub mv: Option<String>,
    /// Nodes searched.
    pub nodes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Nodes per second.
    pub nodes_per_second: f64,
    /// The solver's name.
    pub solver: String,
    /// `gomoku` or `killallgo`.
    pub game: Option<String>,
    /// Gomoku rule name.
    pub rule: Option<String>,
    /// Side to move in the problem.
    pub to_move: Option<String>,
    /// Nodes spent in knowledge searches (VCF/VCT).
    pub knowledge_nodes: u64,
    /// The proof file written, if any.
    pub proof: Option<String>,
    /// Nodes of the proof tree written.
    pub proof_nodes: Option<usize>,
    /// Why no proof was written for a win (with `--proof-dir`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof_error: Option<String>,
    /// Wall-clock seconds of the proof extraction (with `--proof-dir`, for wins), not
    /// included in `seconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof_seconds: Option<f64>,
    /// What went wrong (`result: "error"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With several workers: the job-level search's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobsRecord>,
}

/// The `jobs` object of a JSON line (several workers; see docs/solving.md).
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct JobsRecord {
    /// Workers at the start.
    pub workers: usize,
    /// Jobs sent.
    pub sent: u64,
    /// Answers proven or disproven.
    pub solved: u64,
    /// Answers unknown (the manager expanded their positions).
    pub unknown: u64,
    /// Answers for paths already solved, dropped.
    pub wasted: u64,
    /// Jobs cancelled at the end while their path was open.
    pub cancelled: u64,
    /// Wins whose sub-proof could not be built (treated as unknown).
    pub proof_failures: u64,
    /// Jobs sent again after a worker failed.
    pub resent: u64,
    /// Workers lost.
    pub lost_workers: u64,
    /// Nodes of the manager's tree.
    pub tree_nodes: u64,
    /// Jobs sent to helpers (`--job-mode helpers`).
    pub helper_jobs: u64,
    /// Share of the workers' time spent on jobs.
    pub busy: f64,
}

impl From<&JobStats> for JobsRecord {
    fn from(j: &JobStats) -> JobsRecord {
        JobsRecord {
            workers: j.workers,
            sent: j.jobs,
            solved: j.solved,
            unknown: j.unknown,
            wasted: j.wasted,
            cancelled: j.cancelled,
            proof_failures: j.proof_failures,
            resent: j.resent,
            lost_workers: j.lost_workers,
            tree_nodes: j.tree_nodes,
            helper_jobs: j.helper_jobs,
            busy: (j.busy * 1000.0).round() / 1000.0,
        }
    }
}

/// One input problem: display name and SGF text (or why it could not be read).
struct Input {
    name: String,
    stem: String,
    text: Result<String, String>,
}

/// Sort key for numeric file names: `2.sgf` before `10.sgf`, other names after, by name.
fn numeric_key(p: &Path) -> (u64, String) {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    (stem.parse::<u64>().unwrap_or(u64::MAX), stem)
}

fn collect_inputs(paths: &[String]) -> Vec<Input> {
    let mut out = Vec::new();
    let read = |p: &Path| std::fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    for p in paths {
        if p == "-" {
            let mut buf = Vec::new();
            let text = std::io::stdin()
                .read_to_end(&mut buf)
                .map(|_| String::from_utf8_lossy(&buf).into_owned())
                .map_err(|e| format!("stdin: {e}"));
            out.push(Input {
                name: "-".into(),
                stem: "stdin".into(),
                text,
            });
            continue;
        }
        let path = Path::new(p);
        if path.is_dir() {
            let entries = match std::fs::read_dir(path) {
                Ok(rd) => rd,
                Err(e) => {
                    out.push(Input {
                        name: p.clone(),
                        stem: "dir".into(),
                        text: Err(format!("cannot read directory: {e}")),
                    });
                    continue;
                }
            };
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.is_file()
                        && f.extension()
                            .is_some_and(|x| x.to_string_lossy().eq_ignore_ascii_case("sgf"))
                })
                .collect();
            files.sort_by_key(|f| numeric_key(f));
            for f in files {
                out.push(Input {
                    name: f.display().to_string(),
                    stem: numeric_key(&f).1,
                    text: read(&f).map_err(|e| e.to_string()),
                });
            }
        } else {
            out.push(Input {
                name: p.clone(),
                stem: numeric_key(path).1,
                text: read(path).map_err(|e| e.to_string()),
            });
        }
    }
    out
}

/// Settings shared by every problem of a run.
struct Run {
    args: SolveArgs,
    opts: SolverOptions,
    rule: Rule,
    limits: Limits,
    gomoku: Option<Box<dyn Solver<Gomoku>>>,
    killallgo: Option<Box<dyn Solver<KillallGo>>>,
    /// The solver of `--solver`, read once.
    choice: SolverChoice,
    /// The network as loaded (`--net`; with `--net auto` the shipped network of the last
    /// game resolved, see [`Run::resolve_auto`]).
    net: Option<SolverNet>,
    /// `--net auto`: the shipped network last resolved (per game, on first use).
    auto_path: Option<Option<String>>,
    written: std::collections::HashSet<PathBuf>,
    bar: Option<ProgressBar>,
    /// `--job-link`: the problem being solved, as the worker processes get it (see
    /// [`problem_text`]).
    problem: Arc<std::sync::Mutex<String>>,
    /// `--job-link stdio`: the lines read from stdin (one reader for the whole run).
    stdio: Option<crossbeam::channel::Receiver<LinkEvent>>,
}

/// The network of `--net` (None for `none`, and for `auto`, which is resolved per game,
/// see [`Run::resolve_auto`]).
fn open_net(args: &SolveArgs) -> Result<Option<SolverNet>, String> {
    open_path(args, &args.net)
}

fn open_path(args: &SolveArgs, path: &str) -> Result<Option<SolverNet>, String> {
    if crate::nn::shipped::is_auto(path) {
        return Ok(None);
    }
    let threads = args.threads.max(1) as usize;
    SolverNet::open(path, &args.backend, args.symmetries as usize, threads)
        .map_err(|e| e.to_string())
}

/// Whether focused DFPN evaluates all children of an expansion in one batch: `auto` turns
/// it on for a GPU backend only (on the CPU one batch of children costs more than it saves).
fn children_batch(arg: ChildrenBatchArg, net: Option<&SolverNet>) -> bool {
    match arg {
        ChildrenBatchArg::On => true,
        ChildrenBatchArg::Off => false,
        ChildrenBatchArg::Auto => net.is_some_and(|n| n.eval.name().starts_with("cuda")),
    }
}

/// Runs `pcn solve`; returns the exit code.
pub fn run(args: SolveArgs) -> i32 {
    if args.job_worker {
        return super::job_worker::serve(args);
    }
    let net = match open_net(&args) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("pcn solve: --net {}: {e}", args.net);
            return EXIT_USAGE;
        }
    };
    let (rule, choice, opts) = match options(&args, net.as_ref()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("pcn solve: {e}");
            return EXIT_USAGE;
        }
    };
    let limits = Limits {
        time: Some(Duration::from_secs_f64(args.time)),
        nodes: args.nodes,
        depth: None,
    };
    let inputs = collect_inputs(&args.paths);
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(inputs.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed_precise}] {msg}")
        {
            b.set_style(style);
        }
        b
    });
    let mut run = Run {
        args,
        opts,
        rule,
        limits,
        gomoku: None,
        killallgo: None,
        choice,
        net,
        auto_path: None,
        written: Default::default(),
        bar,
        problem: Default::default(),
        stdio: None,
    };
    let mut records = Vec::with_capacity(inputs.len());
    for input in &inputs {
        if let Some(b) = &run.bar {
            b.set_message(input.name.clone());
        }
        let rec = run.solve_one(input);
        let line = serde_json::to_string(&rec).unwrap_or_else(|e| {
            format!("{{\"file\":\"?\",\"result\":\"error\",\"error\":\"json: {e}\"}}")
        });
        // Stdout is locked per line only: with `--job-link stdio` the link writes its own
        // lines to stdout between ours.
        let put = || {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{line}");
            let _ = stdout.flush();
        };
        if let Some(b) = &run.bar {
            b.suspend(put);
            b.inc(1);
        } else {
            put();
        }
        records.push(rec);
    }
    if let Some(b) = &run.bar {
        b.finish_and_clear();
    }
    // The solvers (and with them any worker processes) end before the summary.
    run.gomoku = None;
    run.killallgo = None;
    eprint!("{}", summary_table(&records, &run));
    let errors = records.iter().any(|r| {
        r.result == "error"
            || r.proof_error
                .as_deref()
                .is_some_and(|e| e.starts_with("write"))
    });
    if errors {
        EXIT_SOME_ERRORS
    } else {
        0
    }
}

/// The rule, the solver and the solver options of `args` (the flags checked), for `pcn
/// solve` and its worker processes alike; warnings about useless flags go to stderr.
pub(crate) fn options(
    args: &SolveArgs,
    net: Option<&SolverNet>,
) -> Result<(Rule, SolverChoice, SolverOptions), String> {
    let children_batch = children_batch(args.children_batch, net);
    let Some(rule) = Rule::parse(&args.rule) else {
        return Err(format!(
            "unknown rule '{}' (expected 4t, freestyle, ndk, exact, renju, caro, caro-exact)",
            args.rule
        ));
    };
    let Ok(choice) = SolverChoice::parse(&args.solver) else {
        return Err(format!(
            "unknown solver '{}' (expected {AUTO_SOLVER}, {})",
            args.solver,
            solver_names().join(", ")
        ));
    };
    if !(args.time.is_finite() && args.time > 0.0) {
        return Err("--time must be a positive number of seconds".into());
    }
    if args
        .proof_time
        .is_some_and(|t| !(t.is_finite() && (0.0..=1.0e7).contains(&t)))
    {
        return Err("--proof-time must be 0..=1e7 seconds".into());
    }
    if !(0.0..=1.0).contains(&args.patterns) {
        return Err("--patterns must be 0..=1".into());
    }
    if !(0.0..=1.0).contains(&args.narrow_patterns) {
        return Err("--narrow-patterns must be 0..=1".into());
    }
    if !(0.0..=100.0).contains(&args.root_pn) {
        return Err("--root-pn must be 0..=100".into());
    }
    if !(0.0..=10.0).contains(&args.net_weight) {
        return Err("--net-weight must be 0..=10".into());
    }
    // What the chosen solver uses, for the warnings below (`auto` differs per game, so it
    // is checked per game when the solver is built).
    let spec = match choice {
        SolverChoice::Kind(k) => Some(k.spec()),
        SolverChoice::Auto => None,
    };
    if args.threads > 1 && spec.is_some_and(|s| !s.threaded) {
        eprintln!(
            "pcn solve: {} is single-threaded; --threads {} only sets the network backend's threads",
            args.solver, args.threads
        );
    }
    if net.is_some() && !args.job_worker && spec.is_some_and(|s| !s.heuristic) {
        // Plain DFPN orders by mobility only; a network is what makes it focused DFPN.
        eprintln!("pcn solve: dfpn uses no network; --net is ignored (fdfpn is DFPN with it)");
    }
    let knowledge = Knowledge {
        vcf: args.vcf.is_on(),
        vct: args.vct.is_on(),
        patterns: args.patterns,
        lambda_nodes: args.lambda,
        ..Knowledge::default()
    };
    let phases = MctsPhases {
        narrow_patterns: args.narrow_patterns,
        root_pn: args.root_pn,
        ..MctsPhases::default()
    };
    // The flags, each onto the one solver option it sets.
    let opts = SolverOptions {
        common: CommonOptions {
            memory_bytes: args.memory_bytes,
            threads: args.threads.max(1) as usize,
            seed: args.seed,
            knowledge,
            proof_max_nodes: args.proof_max_nodes,
            ..CommonOptions::default()
        },
        mcts: MctsOptions {
            phases,
            ..MctsOptions::default()
        },
        dfpn: DfpnOptions {
            net_mode: args.net_mode,
            net_depth: args.net_depth,
            net_weight: args.net_weight,
            net_children_batch: children_batch,
            ..DfpnOptions::default()
        },
        jobs: JobOptions {
            workers: args.workers.max(1),
            job_nodes: args.job_nodes,
            top_k: args.job_top,
            growth: args.job_growth,
            split_after: args.job_split,
            mode: args.job_mode,
            // Sub-proofs only when a proof file is wanted: building them costs the workers'
            // time.
            proofs: args.proof_dir.is_some(),
        },
        ..SolverOptions::default()
    };
    opts.jobs.check()?;
    Ok((rule, choice, opts))
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The stderr summary: problems per result with median seconds, nodes and nodes/s.
fn summary_table(records: &[Record], run: &Run) -> String {
    let a = &run.args;
    let mut s = format!(
        "pcn solve: {} problem(s), solver {}, rule {} (Gomoku), vcf {}, vct {}, benson {}, own-eye ban {} (Killall-Go), time {} s{}\n",
        records.len(),
        if run.choice == SolverChoice::Auto {
            format!(
                "{AUTO_SOLVER} ({} for Gomoku, {} for Killall-Go)",
                Gomoku::DEFAULT_SOLVER.name(),
                KillallGo::DEFAULT_SOLVER.name()
            )
        } else {
            a.solver.clone()
        },
        run.rule.name(),
        a.vcf,
        a.vct,
        a.benson,
        a.own_eye_ban,
        a.time,
        a.nodes.map_or(String::new(), |n| format!(", nodes {n}")),
    );
    s.push_str(&format!(
        "{:<11} {:>6} {:>10} {:>14} {:>12}\n",
        "result", "count", "median_s", "median_nodes", "median_nps"
    ));
    type Filter<'a> = &'a dyn Fn(&Record) -> bool;
    // With --proof-dir, a win whose proof tree could not be built (or written) counts as
    // "win, no proof" (`win-noproof`), not as a win.
    let no_proof = |r: &Record| a.proof_dir.is_some() && r.result == "win" && r.proof.is_none();
    let groups: [(&str, Filter); 7] = [
        ("win", &|r| r.result == "win" && !no_proof(r)),
        ("win-noproof", &|r| no_proof(r)),
        ("loss", &|r| r.result == "loss"),
        ("unknown", &|r| r.result == "unknown"),
        ("error", &|r| r.result == "error"),
        ("solved", &|r| r.result == "win" || r.result == "loss"),
        ("all", &|r| r.result != "error"),
    ];
    for (name, f) in groups {
        let sel: Vec<&Record> = records.iter().filter(|r| f(r)).collect();
        let mut secs: Vec<f64> = sel.iter().map(|r| r.seconds).collect();
        let mut nodes: Vec<f64> = sel.iter().map(|r| r.nodes as f64).collect();
        let mut nps: Vec<f64> = sel.iter().map(|r| r.nodes_per_second).collect();
        let fmt =
            |m: Option<f64>, prec: usize| m.map_or("-".to_string(), |x| format!("{x:.prec$}"));
        if name == "error" {
            s.push_str(&format!("{:<11} {:>6}\n", name, sel.len()));
        } else {
            s.push_str(&format!(
                "{:<11} {:>6} {:>10} {:>14} {:>12}\n",
                name,
                sel.len(),
                fmt(median(&mut secs), 2),
                fmt(median(&mut nodes), 0),
                fmt(median(&mut nps), 0)
            ));
        }
    }
    s
}

impl Run {
    /// `--net auto`: loads the shipped network for `g`'s game and board (none when there is
    /// none for it) when it differs from the one loaded.
    fn resolve_auto<G: SolverGame>(&mut self, g: &G) -> Result<(), String> {
        if !crate::nn::shipped::is_auto(&self.args.net) {
            return Ok(());
        }
        let path = crate::nn::shipped::resolve_for_game("auto", &g.name(), g.width(), g.height());
        if self.auto_path.as_ref() != Some(&path) {
            self.net = match &path {
                Some(p) => {
                    open_path(&self.args, p).map_err(|e| format!("--net auto ({p}): {e}"))?
                }
                None => None,
            };
            self.opts.dfpn.net_children_batch =
                children_batch(self.args.children_batch, self.net.as_ref());
            self.auto_path = Some(path);
        }
        Ok(())
    }

    fn error(&self, input: &Input, msg: String) -> Record {
        Record {
            file: input.name.clone(),
            result: "error".into(),
            solver: self.args.solver.to_ascii_lowercase(),
            error: Some(msg),
            ..Record::default()
        }
    }

    fn solve_one(&mut self, input: &Input) -> Record {
        let text = match &input.text {
            Ok(t) => t,
            Err(e) => return self.error(input, format!("cannot read: {e}")),
        };
        let tree = match GameTree::parse(text) {
            Ok(t) => t,
            Err(e) => return self.error(input, e.to_string()),
        };
        let game = match self.args.game {
            Some(GameArg::Gomoku) => GameKind::Gomoku,
            Some(GameArg::Killallgo) => GameKind::KillallGo,
            None => match (tree.game_type(), tree.size()) {
                (Ok(4), _) => GameKind::Gomoku,
                (Ok(1), Ok((w, h))) if w == h && (w == 9 || w == 7) => GameKind::KillallGo,
                (Ok(1), Ok((w, h))) => {
                    return self.error(
                        input,
                        format!("GM[1] with SZ {w}x{h}: only 9x9 and 7x7 Killall-Go are supported"),
                    )
                }
                (Ok(1), Err(e)) | (Err(e), _) => return self.error(input, e.to_string()),
                (Ok(gm), _) => {
                    return self.error(input, format!("unsupported game GM[{gm}] (use --game)"))
                }
            },
        };
        let plies = match tree.main_line_moves() {
            Ok(m) => m.len(),
            Err(e) => return self.error(input, e.to_string()),
        };
        match game {
            GameKind::Gomoku => match sgf::to_gomoku(&tree, self.rule) {
                Ok(g) => {
                    let mut s = self.gomoku.take();
                    let r = self.solve_game(input, &tree, &g, game, plies, &mut s);
                    self.gomoku = s;
                    r
                }
                Err(e) => self.error(input, e.to_string()),
            },
            GameKind::KillallGo => match sgf::to_killallgo_with(&tree, usize::MAX, self.kg_rules())
            {
                Ok(g) => {
                    let mut s = self.killallgo.take();
                    let r = self.solve_game(input, &tree, &g, game, plies, &mut s);
                    self.killallgo = s;
                    r
                }
                Err(e) => self.error(input, e.to_string()),
            },
        }
    }

    fn solve_game<G: SolverGame>(
        &mut self,
        input: &Input,
        tree: &GameTree,
        g: &G,
        game: GameKind,
        plies: usize,
        slot: &mut Option<Box<dyn Solver<G>>>,
    ) -> Record {
        if slot.is_none() {
            if let Err(e) = self.resolve_auto(g) {
                return self.error(input, e);
            }
            // Unlike the engines, a model that does not fit is an error here: a measurement
            // must not silently run without its network (plain dfpn has no use for one).
            let kind: SolverKind = self.choice.resolve::<G>();
            if let Some(net) = self.net.as_ref().filter(|_| kind.spec().heuristic) {
                if let Err(e) = net.check_fits(g) {
                    return self.error(input, e.to_string());
                }
            }
            let made = match self.args.job_link {
                None => registry::build::<G>(self.choice, &self.opts, self.net.as_ref()),
                Some(link) => self.link_solver::<G>(link),
            }
            .map_err(|e| e.to_string());
            match made {
                Ok(s) => *slot = Some(s),
                Err(e) => return self.error(input, e),
            }
        }
        let Some(solver) = slot.as_mut() else {
            return self.error(input, "no solver".into());
        };
        // Every problem starts from empty tables: fair timings, no cross-problem reuse.
        solver.clear();
        if let Ok(mut p) = self.problem.lock() {
            *p = problem_text(game, self.rule, self.kg_rules(), &tree.to_sgf());
        }
        let prover = match self.args.prove {
            ProveArg::Tomove => g.to_move(),
            ProveArg::Black => Color::Black,
            ProveArg::White => Color::White,
        };
        let stop = AtomicBool::new(false);
        let start = Instant::now();
        let bar = self.bar.clone();
        let name = input.name.clone();
        let mut on_event = |e: &SolveEvent| {
            if let (Some(b), SolveEvent::Progress { nodes, elapsed, .. }) = (&bar, e) {
                b.set_message(format!(
                    "{name}: {nodes} nodes, {:.1} s",
                    elapsed.as_secs_f64()
                ));
            }
        };
        let out = solver.solve(g, prover, &self.limits, &stop, &mut on_event);
        let seconds = if out.stats.seconds > 0.0 {
            out.stats.seconds
        } else {
            start.elapsed().as_secs_f64()
        };
        let mut rec = Record {
            file: input.name.clone(),
            result: out.result.as_str().into(),
            prover: Some(prover.letter().to_string()),
            mv: out.best.map(|m| g.move_to_gtp(m)),
            nodes: out.stats.nodes,
            seconds,
            nodes_per_second: if seconds > 0.0 {
                out.stats.nodes as f64 / seconds
            } else {
                0.0
            },
            solver: solver.name().to_string(),
            game: Some(game.name().into()),
            rule: (game == GameKind::Gomoku).then(|| self.rule.name().to_string()),
            to_move: Some(g.to_move().letter().to_string()),
            knowledge_nodes: out.stats.knowledge_nodes,
            jobs: out.stats.jobs.as_ref().map(JobsRecord::from),
            ..Record::default()
        };
        if let (Some(dir), SolveResult::Win) = (self.args.proof_dir.clone(), out.result) {
            let budget = self.proof_budget(seconds);
            let t0 = Instant::now();
            let (built, back) = extract_proof(slot, g.to_move(), self.args.proof_max_nodes, budget);
            rec.proof_seconds = Some(t0.elapsed().as_secs_f64());
            if !back {
                // The abandoned extraction keeps the solver; the next problem gets a new one.
                *slot = None;
            }
            match built {
                Err(e) => rec.proof_error = Some(e),
                Ok(mt) => {
                    let header = ProofHeader {
                        game,
                        rule: (game == GameKind::Gomoku).then_some(self.rule),
                        size: (g.width(), g.height()),
                        prover,
                        plies,
                        to_move: Some(g.to_move()),
                        extra: std::iter::once(("solver".into(), rec.solver.clone()))
                            .chain(match game {
                                GameKind::KillallGo => {
                                    ProofHeader::killallgo_rule_pairs(self.kg_rules())
                                }
                                GameKind::Gomoku => Vec::new(),
                            })
                            .collect(),
                    };
                    let sgf_tree = proof::to_sgf(tree, &header, &mt);
                    let path = self.proof_path(&dir, &input.stem);
                    match proof::write_file(&path, &sgf_tree) {
                        Ok(()) => {
                            rec.proof = Some(path.display().to_string());
                            rec.proof_nodes = Some(mt.len());
                        }
                        Err(e) => rec.proof_error = Some(format!("write: {e}")),
                    }
                }
            }
        }
        rec
    }

    /// `--job-link`: the job-level manager of `--workers` worker processes, reached as the
    /// link says.
    fn link_solver<G: SolverGame>(
        &mut self,
        link: JobLinkArg,
    ) -> Result<Box<dyn Solver<G>>, crate::search::solver::SolverError> {
        let workers = self.args.workers.max(1);
        let (link, events): (Box<dyn crate::search::joblevel::link::Link>, _) = match link {
            JobLinkArg::Spawn => {
                let exe = std::env::current_exe().map_err(|e| {
                    crate::search::solver::SolverError::BadOption(format!("own path: {e}"))
                })?;
                let (l, rx) = SpawnLink::spawn(&exe, &worker_args(&self.args, workers), workers);
                (Box::new(l), rx)
            }
            JobLinkArg::Stdio => {
                let rx = match &self.stdio {
                    Some(rx) => rx.clone(),
                    None => {
                        let (_, rx) = StdioLink::new(workers);
                        self.stdio = Some(rx.clone());
                        rx
                    }
                };
                (Box::new(StdioLink::with_count(workers)), rx)
            }
        };
        let problem = self.problem.clone();
        let transport = LinkTransport::<G>::new(
            link,
            events,
            Box::new(move |_g: &G, _prover| {
                problem
                    .lock()
                    .map(|p| p.clone())
                    .map_err(|_| "problem text unavailable".to_string())
            }),
        );
        let mut opts = self.opts.clone();
        opts.jobs.workers = workers;
        registry::build_job_level_over::<G>(
            self.choice,
            &opts,
            self.net.as_ref(),
            Box::new(transport),
        )
    }

    /// The Killall-Go knowledge rules of `--benson` and `--own-eye-ban`.
    fn kg_rules(&self) -> KillallGoRules {
        KillallGoRules {
            benson: self.args.benson.is_on(),
            own_eye_ban: self.args.own_eye_ban.is_on(),
        }
    }

    /// The wall-clock budget of one proof extraction after a solve that took `solve_s`:
    /// `--proof-time`, else what is left of `--time`, at least `min(--time, 1 s)` (so a
    /// problem takes at most about `--time + 1 s` in all).
    fn proof_budget(&self, solve_s: f64) -> Duration {
        let s = self.args.proof_time.unwrap_or_else(|| {
            let t = self.args.time;
            (t - solve_s).max(t.min(1.0))
        });
        Duration::from_secs_f64(s.clamp(0.0, 1.0e7))
    }

    /// `DIR/<stem>.proof.sgf`, made unique within this run.
    fn proof_path(&mut self, dir: &Path, stem: &str) -> PathBuf {
        let mut p = dir.join(format!("{stem}.proof.sgf"));
        let mut k = 2;
        while self.written.contains(&p) {
            p = dir.join(format!("{stem}_{k}.proof.sgf"));
            k += 1;
        }
        self.written.insert(p.clone());
        p
    }
}

/// What a job-level worker process gets of a problem (the `begin` line's `problem`): a first
/// line with the game and its rules, then the problem's SGF text; the worker loads it as
/// `pcn solve` does ([`load_problem`]).
pub(crate) fn problem_text(game: GameKind, rule: Rule, kg: KillallGoRules, sgf: &str) -> String {
    format!(
        "game={} rule={} benson={} own_eye_ban={}\n{sgf}",
        game.name(),
        rule.name(),
        if kg.benson { "on" } else { "off" },
        if kg.own_eye_ban { "on" } else { "off" }
    )
}

/// A problem loaded from [`problem_text`].
pub(crate) enum Problem {
    /// A Gomoku position.
    Gomoku(Gomoku),
    /// A Killall-Go position.
    KillallGo(KillallGo),
}

/// Reads [`problem_text`] back (errors, never panics, on bad text).
pub(crate) fn load_problem(text: &str) -> Result<Problem, String> {
    let (head, sgf_text) = text.split_once('\n').ok_or("no header line")?;
    let mut game = None;
    let mut rule = None;
    let mut kg = KillallGoRules::default();
    for tok in head.split_whitespace() {
        match tok.split_once('=') {
            Some(("game", v)) => game = GameKind::from_name(v),
            Some(("rule", v)) => rule = Rule::parse(v),
            Some(("benson", v)) => kg.benson = OnOff::parse(v).ok_or("bad benson")?.is_on(),
            Some(("own_eye_ban", v)) => {
                kg.own_eye_ban = OnOff::parse(v).ok_or("bad own_eye_ban")?.is_on()
            }
            _ => {}
        }
    }
    let tree = GameTree::parse(sgf_text).map_err(|e| e.to_string())?;
    match game.ok_or("no game")? {
        GameKind::Gomoku => sgf::to_gomoku(&tree, rule.ok_or("no rule")?)
            .map(Problem::Gomoku)
            .map_err(|e| e.to_string()),
        GameKind::KillallGo => sgf::to_killallgo_with(&tree, usize::MAX, kg)
            .map(Problem::KillallGo)
            .map_err(|e| e.to_string()),
    }
}

/// The command line of one `--job-link spawn` worker: `--workers N` share the table memory,
/// every other solver flag is the manager's.
fn worker_args(a: &SolveArgs, workers: usize) -> Vec<String> {
    let mb = (a.memory_bytes / workers.max(1) / (1 << 20)).max(1);
    let mut v: Vec<String> = vec![
        "--net".into(),
        a.net.clone(),
        "--backend".into(),
        a.backend.clone(),
        "--symmetries".into(),
        a.symmetries.max(1).to_string(),
        "--threads".into(),
        a.threads.max(1).to_string(),
        "--memory".into(),
        mb.to_string(),
        "--seed".into(),
        a.seed.to_string(),
        "solve".into(),
        "--job-worker".into(),
    ];
    let flags: [(&str, String); 16] = [
        ("--solver", a.solver.clone()),
        ("--rule", a.rule.clone()),
        ("--vcf", a.vcf.to_string()),
        ("--vct", a.vct.to_string()),
        ("--patterns", a.patterns.to_string()),
        ("--lambda", a.lambda.to_string()),
        ("--narrow-patterns", a.narrow_patterns.to_string()),
        ("--root-pn", a.root_pn.to_string()),
        ("--benson", a.benson.to_string()),
        ("--own-eye-ban", a.own_eye_ban.to_string()),
        ("--proof-max-nodes", a.proof_max_nodes.to_string()),
        (
            "--net-mode",
            match a.net_mode {
                NetMode::Paper => "paper".into(),
                NetMode::Hybrid => "hybrid".into(),
            },
        ),
        ("--net-depth", a.net_depth.to_string()),
        ("--net-weight", a.net_weight.to_string()),
        (
            "--children-batch",
            match a.children_batch {
                ChildrenBatchArg::Auto => "auto".into(),
                ChildrenBatchArg::On => "on".into(),
                ChildrenBatchArg::Off => "off".into(),
            },
        ),
        ("--time", a.time.to_string()),
    ];
    for (k, val) in flags {
        v.push(k.into());
        v.push(val);
    }
    v
}

/// Builds the proof tree of the solver's last win on a helper thread and waits at most
/// `budget` for it. The solver's own limits ([`CommonOptions::proof_search_nodes`],
/// `max_nodes`) bound the work; the wall-clock budget bounds the wait: past it the build is
/// told to stop, so it does not go on taking a core from the next problem, and its solver
/// comes back (a build that does not stop within [`PROOF_STOP_GRACE`] is abandoned; its
/// thread ends by the node limits and its solver is dropped then). Returns the tree (or why
/// none) and whether the solver came back into `slot`.
fn extract_proof<G: SolverGame>(
    slot: &mut Option<Box<dyn Solver<G>>>,
    to_move: Color,
    max_nodes: usize,
    budget: Duration,
) -> (Result<MoveTree, String>, bool) {
    if budget.is_zero() {
        return (
            Err("proof extraction skipped (--proof-time 0)".into()),
            slot.is_some(),
        );
    }
    let Some(mut solver) = slot.take() else {
        return (Err("no solver".into()), false);
    };
    let (tx, rx) = crossbeam::channel::bounded(1);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_build = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("pcn-proof".into())
        .spawn(move || {
            let tree = solver
                .proof_tree_until(&stop_build)
                .and_then(|t| MoveTree::from_solver(&t, to_move, max_nodes));
            let _ = tx.send((tree, solver));
        });
    if let Err(e) = spawned {
        return (
            Err(format!("cannot start the proof extraction: {e}")),
            false,
        );
    }
    match rx.recv_timeout(budget) {
        Ok((tree, solver)) => {
            *slot = Some(solver);
            let tree = tree.ok_or_else(|| {
                format!("no complete proof tree within the limits (--proof-max-nodes {max_nodes})")
            });
            (tree, true)
        }
        Err(_) => {
            stop.store(true, Ordering::Relaxed);
            let back = match rx.recv_timeout(PROOF_STOP_GRACE) {
                Ok((_, solver)) => {
                    *slot = Some(solver);
                    true
                }
                Err(_) => false,
            };
            let why = format!(
                "proof extraction stopped after its time budget of {:.3} s (--proof-time)",
                budget.as_secs_f64()
            );
            (Err(why), back)
        }
    }
}

/// How long a proof build told to stop may take to hand its solver back.
const PROOF_STOP_GRACE: Duration = Duration::from_secs(5);
