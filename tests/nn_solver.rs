//! The network heuristics in the solvers: with a seeded random network (α0 and PCN shapes)
//! every solver agrees with plain DFPN on small Gomoku positions, multi-threaded MCTS agrees
//! with single-threaded MCTS, one thread is deterministic, and every proof tree checks.
//! With ../shared present, a real network solves an easy Killall-Go problem.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::Game;
use pcn::nn::eval::{BatchingEvaluator, RandomEvaluator};
use pcn::nn::{CostLabel, Evaluator, NetGame, NetInfo, NetKind};
use pcn::search::solver::net::NetHeuristic;
use pcn::search::solver::{
    solver_by_name, solver_with_heuristic, CommonOptions, Heuristic, Knowledge, NetMode,
    SolveResult, SolverGame, SolverOptions,
};
use pcn::search::Limits;
use pcn::util::Rng;

fn positions(size: usize, empties: usize, count: usize, seed: u64) -> Vec<Gomoku> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut legal = Vec::new();
    for _ in 0..count * 200 {
        if out.len() == count {
            break;
        }
        let Ok(mut g) = Gomoku::new(size, size, Rule::Freestyle) else {
            break;
        };
        while g.outcome().is_none() && size * size - g.ply() > empties {
            g.legal_moves(&mut legal);
            g.play_unchecked(legal[rng.below(legal.len())]);
        }
        if g.outcome().is_none() && size * size - g.ply() == empties {
            out.push(g);
        }
    }
    out
}

fn info(size: usize, kind: NetKind) -> NetInfo {
    NetInfo {
        name: "random-max".into(),
        game: NetGame::Gomoku,
        board_size: size,
        planes: 4,
        actions: size * size,
        kind,
        cost_label: CostLabel::Max,
    }
}

fn opts(threads: usize) -> SolverOptions {
    SolverOptions::with_common(CommonOptions {
        memory_bytes: 8 << 20,
        knowledge: Knowledge::none(),
        threads,
        ..CommonOptions::default()
    })
}

/// Solves `g` for the side to move; checks the proof of a solved result.
fn solve(
    name: &str,
    g: &Gomoku,
    eval: Option<Arc<dyn Evaluator>>,
    threads: usize,
    nodes: u64,
) -> (SolveResult, u64, Option<u16>) {
    let o = opts(threads);
    let mut s = match eval {
        None => solver_by_name::<Gomoku>(name, &o).expect("solver"),
        Some(e) => {
            let h = NetHeuristic::new(e, 2, g, 1 << 12).expect("fits");
            // A network: MCTS keeps the reference exploration and staging for it.
            assert!(h.learned());
            solver_with_heuristic::<Gomoku>(name, &o, Box::new(h)).expect("solver")
        }
    };
    let stop = AtomicBool::new(false);
    let out = s.solve(g, g.to_move(), &Limits::nodes(nodes), &stop, &mut |_| {});
    if out.result != SolveResult::Unknown {
        let t = s.proof_tree().expect("proof tree");
        t.check(g).expect("proof checks");
        assert_eq!(t.result, out.result);
    }
    (out.result, out.stats.nodes, out.best)
}

#[test]
fn network_solvers_agree_and_prove() {
    let ps = positions(6, 12, 8, 11);
    assert!(ps.len() >= 4);
    let mut compared = 0;
    let mut unsolved_mt = 0;
    for (i, g) in ps.iter().enumerate() {
        let (want, _, _) = solve("dfpn", g, None, 1, 400_000);
        if want == SolveResult::Unknown {
            continue;
        }
        for kind in [NetKind::AlphaZero, NetKind::Pcn { bins: 60 }] {
            let inner: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(info(6, kind), 9));
            for (name, threads) in [("fdfpn", 1), ("mcts", 1), ("mcts", 3)] {
                let eval: Arc<dyn Evaluator> = if threads > 1 {
                    Arc::new(BatchingEvaluator::new(
                        inner.clone(),
                        threads * 2,
                        Duration::from_millis(1),
                    ))
                } else {
                    inner.clone()
                };
                let (got, _, _) = solve(name, g, Some(eval), threads, 200_000);
                if threads > 1 && got == SolveResult::Unknown {
                    // Several threads share the node budget in a scheduling-dependent way: a
                    // run may end unsolved (seen once on a clean-clone run), never with the
                    // opposite result. The count below keeps the test meaningful.
                    unsolved_mt += 1;
                    continue;
                }
                assert_eq!(got, want, "position {i} {name} x{threads} {kind:?}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 12, "compared {compared}");
    assert!(
        unsolved_mt * 4 <= compared,
        "{unsolved_mt} multi-threaded runs unsolved, {compared} agreed"
    );
}

#[test]
fn one_thread_mcts_is_deterministic() {
    let ps = positions(6, 14, 3, 5);
    for g in &ps {
        for kind in [NetKind::AlphaZero, NetKind::Pcn { bins: 60 }] {
            let e: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(info(6, kind), 4));
            let a = solve("mcts", g, Some(e.clone()), 1, 3_000);
            let b = solve("mcts", g, Some(e), 1, 3_000);
            assert_eq!(a, b);
        }
    }
}

#[test]
fn mismatched_network_is_an_error() {
    let g = Gomoku::new(6, 6, Rule::Freestyle).expect("board");
    let e: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(
        RandomEvaluator::info_for(NetGame::KillallGo, NetKind::AlphaZero),
        1,
    ));
    assert!(NetHeuristic::new(e.clone(), 8, &g, 16).is_err());
    let e6: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(info(6, NetKind::AlphaZero), 1));
    assert!(NetHeuristic::new(e6, 9, &g, 16).is_err());
}

/// A real network on an easy shared Killall-Go problem (skips without ../shared).
#[test]
fn real_network_solves_easy_killallgo_problem() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let model = root.join("pcn/models/go_W-max");
    let problem = root.join("problems/killallgo/29.sgf");
    if !model.is_dir() || !problem.is_file() {
        eprintln!("SKIP: {} or {} absent", model.display(), problem.display());
        return;
    }
    let text = std::fs::read_to_string(&problem).expect("problem");
    let tree = pcn::sgf::GameTree::parse(&text).expect("sgf");
    let g = pcn::sgf::to_killallgo(&tree).expect("position");
    let eval = pcn::nn::open(model.to_str().expect("utf8"), "auto", 1).expect("model");
    // Both ways focused DFPN can use a network: the paper's and the hybrid one.
    for mode in [NetMode::Paper, NetMode::Hybrid] {
        let h = NetHeuristic::new(eval.clone(), 1, &g, 1 << 16).expect("fits");
        let mut o = opts(1);
        o.dfpn.net_mode = mode;
        let mut s = solver_with_heuristic("fdfpn", &o, Box::new(h)).expect("solver");
        let stop = AtomicBool::new(false);
        let limits = Limits {
            time: Some(Duration::from_secs(120)),
            nodes: Some(20_000),
            depth: None,
        };
        let out = s.solve(&g, g.to_move(), &limits, &stop, &mut |_| {});
        assert_eq!(out.result, SolveResult::Win, "{mode:?} {:?}", out.stats);
        let t = s.proof_tree().expect("proof");
        t.check(&g).expect("proof checks");
    }
    let _ = <pcn::game::killallgo::KillallGo as SolverGame>::HISTORY_SENSITIVE;
}

/// `pcn solve --net` writes a proof that `pcn verify` accepts (skips without ../shared).
#[test]
fn cli_network_proof_verifies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let model = root.join("pcn/models/go_W-max");
    let problem = root.join("problems/killallgo/29.sgf");
    if !model.is_dir() || !problem.is_file() {
        eprintln!("SKIP: {} or {} absent", model.display(), problem.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("pcn_nn_cli_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bin = env!("CARGO_BIN_EXE_pcn");
    let out = std::process::Command::new(bin)
        .args(["solve", "--net"])
        .arg(&model)
        .args([
            "--symmetries",
            "1",
            "--nodes",
            "20000",
            "--time",
            "120",
            "--proof-dir",
        ])
        .arg(&dir)
        .arg(&problem)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("json line");
    assert_eq!(v["result"], "win", "{line}");
    let proof = v["proof"].as_str().expect("proof written").to_string();
    let ver = std::process::Command::new(bin)
        .args(["verify", &proof])
        .output()
        .expect("runs");
    assert_eq!(
        ver.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ver.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Counts the rows and calls reaching the inner evaluator.
struct Counting {
    inner: Arc<dyn Evaluator>,
    calls: std::sync::atomic::AtomicU64,
    rows: std::sync::atomic::AtomicU64,
}

impl Evaluator for Counting {
    fn info(&self) -> &NetInfo {
        self.inner.info()
    }
    fn evaluate(
        &self,
        input: &[f32],
        batch: usize,
        out: &mut pcn::nn::NetOutput,
    ) -> Result<(), pcn::nn::NnError> {
        use std::sync::atomic::Ordering::Relaxed;
        self.calls.fetch_add(1, Relaxed);
        self.rows.fetch_add(batch as u64, Relaxed);
        self.inner.evaluate(input, batch, out)
    }
    fn name(&self) -> String {
        "counting".into()
    }
}

/// Focused DFPN evaluating all children of an expansion in one batch searches exactly the
/// same tree (same result, nodes and move) with several rows per network call.
#[test]
fn fdfpn_children_batch_searches_the_same_tree() {
    use std::sync::atomic::Ordering::Relaxed;
    let ps = positions(6, 12, 6, 5);
    assert!(ps.len() >= 3);
    let mut batched_calls = 0;
    for g in &ps {
        let mut runs = Vec::new();
        for on in [false, true] {
            let c = Arc::new(Counting {
                inner: Arc::new(RandomEvaluator::new(info(6, NetKind::Pcn { bins: 60 }), 4)),
                calls: Default::default(),
                rows: Default::default(),
            });
            let mut o = opts(1);
            o.dfpn.net_children_batch = on;
            let h = NetHeuristic::new(c.clone(), 1, g, 1 << 14).expect("fits");
            let mut s = solver_with_heuristic::<Gomoku>("fdfpn", &o, Box::new(h)).expect("solver");
            let stop = AtomicBool::new(false);
            let out = s.solve(g, g.to_move(), &Limits::nodes(50_000), &stop, &mut |_| {});
            if out.result != SolveResult::Unknown {
                s.proof_tree()
                    .expect("proof")
                    .check(g)
                    .expect("proof checks");
            }
            runs.push((
                out.result,
                out.stats.nodes,
                out.best,
                c.calls.load(Relaxed),
                c.rows.load(Relaxed),
            ));
        }
        let (off, on) = (runs[0], runs[1]);
        assert_eq!(
            (off.0, off.1, off.2),
            (on.0, on.1, on.2),
            "{off:?} vs {on:?}"
        );
        if on.3 > 0 && on.4 > on.3 {
            batched_calls += 1;
        }
        // Without batching every call is one position.
        assert_eq!(off.3, off.4);
    }
    assert!(
        batched_calls >= 2,
        "children were batched in {batched_calls} searches"
    );
}

/// A position of our own hard Killall-Go gate (docs/data/solve/killallgo-own-hard/): White
/// to move and live, proven by focused DFPN in a few ten thousand nodes.
const OWN_HARD_POSITION: &str = "(;FF[4]GM[1]SZ[9]RE[W+];B[cc];W[];B[gc];W[];B[cg];W[];B[gg];W[gf];B[ch];W[di];B[ci];W[gi];B[eh];W[fh];B[gh];W[ih];B[ag];W[ei];B[eg];W[af];B[hh];W[ig];B[bb];W[fi];B[ec];W[ef];B[ff];W[hf];B[if];W[ae];B[be];W[ce];B[de];W[ee];B[fe];W[ge];B[df];W[ie];B[ad])";

/// `--net-weight` scales the network's share of the hybrid move order: at 0 focused DFPN
/// with the shipped network searches exactly the tree of the no-network solver (the static
/// order, history and initial numbers are untouched), at the default 1 the network changes
/// it; every win's proof checks. Out-of-range weights are errors.
#[test]
fn hybrid_net_weight_scales_the_network_share() {
    use pcn::game::killallgo::KillallGo;
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/killallgo9-pcn");
    let tree = pcn::sgf::GameTree::parse(OWN_HARD_POSITION).expect("sgf");
    let g = pcn::sgf::to_killallgo(&tree).expect("position");
    let eval = pcn::nn::open(model.to_str().expect("utf8"), "cpu", 1).expect("shipped model");
    let run = |weight: Option<f32>| {
        let mut o = SolverOptions::with_memory(64 << 20);
        let mut s = match weight {
            None => solver_by_name::<KillallGo>("fdfpn", &o).expect("solver"),
            Some(w) => {
                o.dfpn.net_weight = w;
                let h = NetHeuristic::new(eval.clone(), 1, &g, 1 << 16).expect("fits");
                solver_with_heuristic::<KillallGo>("fdfpn", &o, Box::new(h)).expect("solver")
            }
        };
        let stop = AtomicBool::new(false);
        let out = s.solve(&g, g.to_move(), &Limits::nodes(300_000), &stop, &mut |_| {});
        if out.result != SolveResult::Unknown {
            s.proof_tree()
                .expect("proof")
                .check(&g)
                .expect("proof checks");
        }
        (out.result, out.stats.nodes, out.best)
    };
    let none = run(None);
    assert_eq!(none.0, SolveResult::Win, "{none:?}");
    assert_eq!(run(Some(0.0)), none);
    let net = run(Some(1.0));
    assert_eq!(net.0, SolveResult::Win, "{net:?}");
    assert_ne!(net.1, none.1, "the network changed nothing");
    for bad in [-1.0, f32::NAN, 11.0] {
        let mut o = SolverOptions::with_memory(1 << 20);
        o.dfpn.net_weight = bad;
        assert!(solver_by_name::<KillallGo>("fdfpn", &o).is_err(), "{bad}");
    }
}
