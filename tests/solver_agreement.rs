//! Solver agreement: every solver agrees with exhaustive minimax on small positions (Gomoku
//! on 5x5..7x7 under several rules, Killall-Go 7x7 endgames), the solvers agree with each
//! other, and every proof tree they emit is complete (checked here by an independent replay).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::killallgo::{KillallGo, Variant};
use pcn::game::{Color, Game, Move, Outcome};
use pcn::search::solver::mcts::Mcts;
use pcn::search::solver::{
    solver_by_name, CommonOptions, Knowledge, MctsOptions, MctsPhases, ProofTree, SolveResult,
    Solver, SolverGame, SolverOptions,
};
use pcn::search::Limits;
use pcn::util::Rng;

/// Exhaustive minimax with a memo: does `prover` win? `key` must identify everything the
/// value depends on. `None` when `cap` nodes were exceeded.
fn brute<G: Game>(
    g: &mut G,
    prover: Color,
    key: &dyn Fn(&G) -> u64,
    memo: &mut HashMap<u64, bool>,
    nodes: &mut u64,
    cap: u64,
) -> Option<bool> {
    *nodes += 1;
    if *nodes > cap {
        return None;
    }
    if let Some(o) = g.outcome() {
        return Some(o == Outcome::Win(prover));
    }
    let k = key(g);
    if let Some(&v) = memo.get(&k) {
        return Some(v);
    }
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    let or = g.to_move() == prover;
    let mut result = !or;
    for m in moves {
        g.play_unchecked(m);
        let v = brute(g, prover, key, memo, nodes, cap);
        g.undo();
        let v = v?;
        if v == or {
            result = or;
            break;
        }
    }
    memo.insert(k, result);
    Some(result)
}

/// Independent proof check: replays the tree; at the chooser's nodes exactly one legal move,
/// at the other side's nodes every legal move, leaves terminal with the claimed result.
fn replay_proof<G: Game>(g: &mut G, t: &ProofTree, node: usize) -> Result<(), String> {
    let n = &t.nodes[node];
    let win = t.result == SolveResult::Win;
    if let Some(o) = g.outcome() {
        let prover_won = o == Outcome::Win(t.prover);
        return if n.children.is_empty() && prover_won == win {
            Ok(())
        } else {
            Err(format!("bad leaf {o:?} at ply {}", g.ply()))
        };
    }
    let chooser = if win { t.prover } else { t.prover.opp() };
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    if g.to_move() == chooser {
        if n.children.len() != 1 || !legal.contains(&n.children[0].0) {
            return Err(format!("choice node with {} children", n.children.len()));
        }
    } else {
        let mut kids: Vec<Move> = n.children.iter().map(|c| c.0).collect();
        kids.sort_unstable();
        legal.sort_unstable();
        if kids != legal {
            return Err(format!(
                "AND node lists {} of {} legal moves",
                kids.len(),
                legal.len()
            ));
        }
    }
    for &(m, c) in &n.children {
        if c as usize <= node || c as usize >= t.nodes.len() {
            return Err("bad child index".into());
        }
        g.play(m).map_err(|e| format!("illegal move: {e}"))?;
        let r = replay_proof(g, t, c as usize);
        g.undo();
        r?;
    }
    Ok(())
}

/// Whether `prover` wins the Gomoku position `g`, by exhaustive search within `cap` nodes.
fn gomoku_truth(g: &Gomoku, prover: Color, cap: u64) -> Option<bool> {
    let mut memo = HashMap::new();
    let mut n = 0;
    brute(
        &mut g.clone(),
        prover,
        &|x: &Gomoku| x.hash(),
        &mut memo,
        &mut n,
        cap,
    )
}

/// Runs solver `name` and checks its answer against `truth` (when solved) and its proof.
/// Returns the result.
fn check_solver<G: SolverGame>(
    name: &str,
    opts: &SolverOptions,
    g: &G,
    prover: Color,
    nodes: u64,
    truth: Option<bool>,
    label: &str,
) -> SolveResult {
    let mut s = solver_by_name::<G>(name, opts).expect("solver");
    let stop = AtomicBool::new(false);
    let before = g.hash();
    let o = s.solve(g, prover, &Limits::nodes(nodes), &stop, &mut |_| {});
    assert_eq!(g.hash(), before, "{label}: solve changed the position");
    assert_eq!(o.prover, prover);
    if o.result == SolveResult::Unknown {
        return o.result;
    }
    if let Some(t) = truth {
        assert_eq!(
            o.result == SolveResult::Win,
            t,
            "{label}: {name} says {:?}, brute force says prover wins = {t}",
            o.result
        );
    }
    if o.result == SolveResult::Win && g.to_move() == prover {
        let m = o
            .best
            .unwrap_or_else(|| panic!("{label}: {name} gave no winning move"));
        let mut h = g.clone();
        h.play(m).expect("legal best move");
    }
    // A build told to stop gives up, and leaves the solver able to build the proof after.
    assert!(
        s.proof_tree_until(&AtomicBool::new(true)).is_none(),
        "{label}: {name} built a proof with its stop flag set"
    );
    let tree = s
        .proof_tree()
        .unwrap_or_else(|| panic!("{label}: {name} solved {:?} but gave no proof", o.result));
    assert_eq!(tree.result, o.result);
    assert_eq!(tree.prover, prover);
    let mut h = g.clone();
    if let Err(e) = replay_proof(&mut h, &tree, 0) {
        panic!("{label}: {name} proof invalid: {e}");
    }
    tree.check(g)
        .unwrap_or_else(|e| panic!("{label}: {name} proof fails check: {e}"));
    o.result
}

fn configs() -> Vec<(&'static str, SolverOptions)> {
    let small = SolverOptions::with_memory(4 << 20);
    let mut bare = small.clone();
    bare.common.knowledge = Knowledge::none();
    // MCTS keeps a tree (no transpositions merged): a larger node pool.
    let big = SolverOptions::with_memory(16 << 20);
    let mut big_bare = big.clone();
    big_bare.common.knowledge = Knowledge::none();
    vec![
        ("dfpn", small.clone()),
        ("fdfpn", small.clone()),
        ("mcts", big),
        ("dfpn", bare.clone()),
        ("fdfpn", bare.clone()),
        ("mcts", big_bare),
    ]
}

/// Random non-terminal Gomoku positions with `empties` empty points left.
fn gomoku_positions(
    rule: Rule,
    size: usize,
    empties: usize,
    count: usize,
    seed: u64,
) -> Vec<Gomoku> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 200 {
        tries += 1;
        let Ok(mut g) = Gomoku::new(size, size, rule) else {
            return out;
        };
        let mut legal = Vec::new();
        while g.outcome().is_none() && size * size - g.ply() > empties {
            g.legal_moves(&mut legal);
            if legal.is_empty() {
                break;
            }
            g.play_unchecked(legal[rng.below(legal.len())]);
        }
        if g.outcome().is_none() && size * size - g.ply() == empties {
            out.push(g);
        }
    }
    out
}

#[test]
fn gomoku_solvers_agree_with_brute_force() {
    let mut solved = 0;
    let mut total = 0;
    let mut wins = 0;
    let mut per = [0usize; 6];
    let mut secs = [0f64; 6];
    for (i, &(rule, size, empties)) in [
        (Rule::Freestyle, 5, 11),
        (Rule::FourT, 5, 12),
        (Rule::Renju, 6, 11),
        (Rule::Exact, 6, 11),
        (Rule::Freestyle, 7, 11),
        (Rule::FourT, 7, 12),
        (Rule::Caro, 6, 10),
    ]
    .iter()
    .enumerate()
    {
        for (j, g) in gomoku_positions(rule, size, empties, 12, 100 + i as u64)
            .into_iter()
            .enumerate()
        {
            for prover in [g.to_move(), g.to_move().opp()] {
                let truth =
                    gomoku_truth(&g, prover, 2_000_000).expect("small enough for brute force");
                wins += truth as usize;
                for (ci, (name, opts)) in configs().into_iter().enumerate() {
                    total += 1;
                    let label = format!("{} {size}x{size} #{j} prover {prover:?}", rule.name());
                    let t0 = std::time::Instant::now();
                    // MCTS is the slow one (a playout per node): a smaller budget.
                    let budget = if name == "mcts" { 30_000 } else { 200_000 };
                    let r = check_solver(name, &opts, &g, prover, budget, Some(truth), &label);
                    secs[ci] += t0.elapsed().as_secs_f64();
                    solved += (r != SolveResult::Unknown) as usize;
                    per[ci] += (r != SolveResult::Unknown) as usize;
                }
            }
        }
    }
    eprintln!("gomoku: {solved}/{total} solver runs solved (per config {per:?}, seconds {secs:.1?}); {wins} prover wins");
    assert!(total >= 300, "too few positions generated: {total}");
    // Exhaustive DFPN must solve every one of these small positions.
    assert!(
        per[0] * 6 == total && per[1] * 6 == total && per[3] * 6 == total && per[4] * 6 == total,
        "dfpn/fdfpn left positions unsolved: {per:?}"
    );
    // MCTS keeps no transpositions in its tree; it still solves a good share.
    assert!(
        per[2] * 6 * 3 >= total && per[5] * 6 * 3 >= total,
        "mcts solved too few: {per:?}"
    );
    assert!(
        wins > 10 && wins * 10 < total,
        "value mix too one-sided: {wins}"
    );
}

/// MCTS's narrowed phase (the prover's moves narrowed to threats of a threat, fours and
/// defences; the opponent's replies proven by the pass-threat zone get no node), run alone
/// (`narrow_only`): every result must agree with exhaustive search, losses included (a
/// narrowed node whose kept moves all lose is widened again before it is called lost), with
/// a proof that checks. A small pool then checks that the two-phase solve reaches the
/// second phase and stays sound there.
#[test]
fn mcts_narrowed_phase_agrees_with_brute_force() {
    // (common options, MCTS options) per configuration.
    let narrow = (
        CommonOptions::default().with_memory(16 << 20),
        MctsOptions {
            phases: MctsPhases {
                narrow_only: true,
                ..MctsPhases::default()
            },
            ..MctsOptions::default()
        },
    );
    let small = (
        CommonOptions::default().with_memory(64 << 10),
        MctsOptions::default(),
    );
    // The narrowed phase without the pattern policy in its priors.
    let mut narrow_plain = narrow.clone();
    narrow_plain.1.phases.narrow_patterns = 0.0;
    assert!(
        narrow.1.phases.narrow_patterns > 0.0,
        "the policy is on by default"
    );
    let mut policy_changed = 0;
    // The second phase runs on every thread (the first on one).
    let mut small2 = small.clone();
    small2.0.threads = 2;
    assert!(
        small.0.knowledge.lambda_nodes > 0,
        "the narrowing is on by default"
    );
    let (mut solved_second, mut losses_second, mut total) = (0, 0, 0);
    // Per configuration: how many solves reached the second phase.
    let configs = [&narrow, &narrow_plain, &small, &small2];
    let mut reached = [0usize; 4];
    for (i, &(rule, size, empties)) in [
        (Rule::FourT, 7, 14),
        (Rule::Freestyle, 7, 13),
        (Rule::FourT, 6, 13),
    ]
    .iter()
    .enumerate()
    {
        for (j, g) in gomoku_positions(rule, size, empties, 14, 7100 + i as u64)
            .into_iter()
            .enumerate()
        {
            for prover in [g.to_move(), g.to_move().opp()] {
                let Some(truth) = gomoku_truth(&g, prover, 4_000_000) else {
                    continue;
                };
                total += 1;
                let label = format!("{} {size}x{size} #{j} prover {prover:?}", rule.name());
                let mut runs = Vec::with_capacity(configs.len());
                for (ci, opts) in configs.iter().enumerate() {
                    let (common, own) = (*opts).clone();
                    let h = Gomoku::default_heuristic(&common);
                    let mut s = Mcts::new(common, own, h);
                    let stop = AtomicBool::new(false);
                    let o = s.solve(&g, prover, &Limits::nodes(20_000), &stop, &mut |_| {});
                    runs.push((s.phases_used(), o.result, o.stats.nodes));
                    if s.phases_used() == 2 {
                        reached[ci] += 1;
                    }
                    if o.result == SolveResult::Unknown {
                        continue;
                    }
                    assert_eq!(
                    o.result == SolveResult::Win,
                    truth,
                    "{label}: mcts says {:?} after {} phase(s), brute force says prover wins = {truth}",
                    o.result,
                    s.phases_used()
                );
                    if s.phases_used() == 2 && ci == 0 {
                        solved_second += 1;
                        losses_second += usize::from(o.result == SolveResult::Loss);
                    }
                    let tree = s.proof_tree().unwrap_or_else(|| {
                        panic!("{label}: solved {:?} but gave no proof", o.result)
                    });
                    let mut h = g.clone();
                    if let Err(e) = replay_proof(&mut h, &tree, 0) {
                        panic!("{label}: proof invalid: {e}");
                    }
                    tree.check(&g)
                        .unwrap_or_else(|e| panic!("{label}: proof fails check: {e}"));
                }
                policy_changed += usize::from(runs[0] != runs[1]);
                // The first phase runs on one thread: a solve that ends there is the
                // single-threaded one, node for node.
                if runs[2].0 == 1 {
                    assert_eq!(
                        runs[3], runs[2],
                        "{label}: two threads changed the first phase"
                    );
                }
            }
        }
    }
    let [second, _, small_second, threaded_second] = reached;
    eprintln!(
        "narrowed phase alone: {second} of {total} solves, {solved_second} solved ({losses_second} losses); two phases with a small pool: {small_second} reached the second ({threaded_second} with two threads); the pattern policy changed {policy_changed} narrowed searches"
    );
    assert!(
        policy_changed > 0,
        "the pattern policy never changed the narrowed search"
    );
    // The first phase is single-threaded either way, so the same solves reach the second.
    assert_eq!(
        threaded_second, small_second,
        "the first phase must not depend on the thread count"
    );
    assert!(total >= 60, "too few positions: {total}");
    assert_eq!(second, total, "narrow_only must run the narrowed phase");
    assert!(
        solved_second * 3 >= total,
        "the narrowed phase solved too little: {solved_second} of {total}"
    );
    assert!(
        losses_second >= 5,
        "too few losses to check the widening: {losses_second}"
    );
    assert!(
        small_second * 4 >= total,
        "the second phase was rarely reached: {small_second} of {total}"
    );
}

/// Killall-Go 7x7 positions a few plies before the end of random games (board moves, a pass
/// now and then), not finished: real endgames whose values brute force can reach.
fn killallgo_positions(back: usize, count: usize, seed: u64) -> Vec<KillallGo> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut legal = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 50 {
        tries += 1;
        let mut g = KillallGo::new(Variant::Seven);
        let pass = g.pass_move();
        for _ in 0..300 {
            if g.outcome().is_some() {
                break;
            }
            g.legal_moves(&mut legal);
            let board: Vec<Move> = legal.iter().copied().filter(|&m| m != pass).collect();
            let m = if board.is_empty() || (legal.contains(&pass) && rng.below(20) == 0) {
                legal[legal.len() - 1]
            } else {
                board[rng.below(board.len())]
            };
            g.play_unchecked(m);
        }
        if g.outcome().is_none() {
            continue;
        }
        let k = 1 + rng.below(back);
        for _ in 0..k {
            g.undo();
        }
        if g.outcome().is_none() && !g.in_opening() {
            out.push(g);
        }
    }
    out
}

/// Exhaustive Killall-Go minimax. The memo key is exact: stones and side to move, the set of
/// positions seen after board moves (superko) as an xor of their keys, and whether the last
/// ply was a pass. `None` past `cap` nodes.
fn brute_kg(
    g: &mut KillallGo,
    prover: Color,
    seen: u64,
    memo: &mut HashMap<(u64, u64, bool), bool>,
    nodes: &mut u64,
    cap: u64,
) -> Option<bool> {
    *nodes += 1;
    if *nodes > cap {
        return None;
    }
    if let Some(o) = g.outcome() {
        return Some(o == Outcome::Win(prover));
    }
    let pass = g.pass_move();
    let k = (g.hash(), seen, g.last_move() == Some(pass));
    if let Some(&v) = memo.get(&k) {
        return Some(v);
    }
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    // Pass first: it ends many lines at once (double pass).
    moves.reverse();
    let or = g.to_move() == prover;
    let mut result = !or;
    for m in moves {
        g.play_unchecked(m);
        let s = if m == pass { seen } else { seen ^ g.hash() };
        let v = brute_kg(g, prover, s, memo, nodes, cap);
        g.undo();
        if v? == or {
            result = or;
            break;
        }
    }
    memo.insert(k, result);
    Some(result)
}

/// The xor of the keys of the positions after board moves in `g`'s history.
fn seen_xor(g: &KillallGo) -> u64 {
    let mut r = KillallGo::new(g.variant());
    let mut x = 0;
    for (_, m) in g.moves() {
        r.play_unchecked(m);
        if m != r.pass_move() {
            x ^= r.hash();
        }
    }
    x
}

#[test]
fn killallgo_solvers_agree_with_brute_force() {
    let back: usize = std::env::var("KG_BACK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let cap: u64 = std::env::var("KG_CAP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let positions = killallgo_positions(back, 100, 7);
    assert!(positions.len() >= 30, "only {} positions", positions.len());
    let (mut total, mut solved, mut white_wins, mut checked) = (0, 0, 0, 0);
    let mut per = [0usize; 3];
    for (j, g) in positions.iter().enumerate() {
        for prover in [Color::White, Color::Black] {
            let mut memo = HashMap::new();
            let mut n = 0;
            let mut h = g.clone();
            let Some(truth) = brute_kg(&mut h, prover, seen_xor(g), &mut memo, &mut n, cap) else {
                continue;
            };
            checked += 1;
            white_wins += (truth == (prover == Color::White)) as usize;
            for (ci, (name, opts)) in configs().into_iter().take(3).enumerate() {
                total += 1;
                let label = format!("killallgo 7x7 #{j} prover {prover:?}");
                let budget = if name == "mcts" { 30_000 } else { 200_000 };
                let r = check_solver(name, &opts, g, prover, budget, Some(truth), &label);
                solved += (r != SolveResult::Unknown) as usize;
                per[ci] += (r != SolveResult::Unknown) as usize;
            }
        }
    }
    eprintln!(
        "killallgo: {checked} brute-forced, {solved}/{total} solver runs solved (per config {per:?}); \
         {white_wins} White wins"
    );
    assert!(checked >= 40, "too few positions brute-forced: {checked}");
    assert!(
        white_wins >= 3 && white_wins + 3 <= checked,
        "one-sided values: {white_wins}/{checked}"
    );
    assert!(
        solved * 10 >= total * 8,
        "solvers solved only {solved}/{total}"
    );
}

/// Solvers agree with each other on larger random positions (beyond brute force): Gomoku
/// 9x9 under 4T and freestyle with 30 empty points, Killall-Go 7x7 endgames further from the
/// end. Only positions that both solvers of a pair solved count; every proof is checked.
#[test]
fn solvers_agree_with_each_other() {
    let mut agreed = 0;
    let mut runs = 0;
    let t0 = std::time::Instant::now();
    let cfg = configs();
    let mut compare = |results: &[SolveResult], label: &str| {
        let solved: Vec<SolveResult> = results
            .iter()
            .copied()
            .filter(|&r| r != SolveResult::Unknown)
            .collect();
        if solved.len() >= 2 {
            assert!(
                solved.iter().all(|&r| r == solved[0]),
                "{label}: solvers disagree: {results:?}"
            );
            agreed += 1;
        }
    };
    for (i, rule) in [Rule::FourT, Rule::Freestyle].into_iter().enumerate() {
        for (j, g) in gomoku_positions(rule, 9, 30, 90, 900 + i as u64)
            .iter()
            .enumerate()
        {
            let label = format!("{} 9x9 #{j}", rule.name());
            let results: Vec<SolveResult> = cfg
                .iter()
                .take(3)
                .map(|(name, opts)| {
                    runs += 1;
                    let budget = if *name == "mcts" { 5_000 } else { 20_000 };
                    check_solver(name, opts, g, g.to_move(), budget, None, &label)
                })
                .collect();
            compare(&results, &label);
        }
    }
    eprintln!("gomoku part done: {:?}", t0.elapsed());
    for (j, g) in killallgo_positions(14, 100, 77).iter().enumerate() {
        let label = format!("killallgo 7x7 #{j}");
        let results: Vec<SolveResult> = cfg
            .iter()
            .take(3)
            .map(|(name, opts)| {
                runs += 1;
                let budget = if *name == "mcts" { 3_000 } else { 6_000 };
                check_solver(name, opts, g, Color::White, budget, None, &label)
            })
            .collect();
        compare(&results, &label);
    }
    eprintln!("agreement: {agreed} positions solved by at least two solvers ({runs} runs)");
    assert!(
        agreed >= 200,
        "only {agreed} positions solved by two solvers"
    );
}

/// A corrupted proof (one defence removed, or a wrong choice) fails the check.
#[test]
fn corrupted_proofs_fail() {
    let positions = gomoku_positions(Rule::Freestyle, 6, 11, 40, 4242);
    let mut tested = 0;
    for g in &positions {
        let mut s = solver_by_name::<Gomoku>("dfpn", &configs()[0].1).expect("solver");
        let stop = AtomicBool::new(false);
        let o = s.solve(g, g.to_move(), &Limits::nodes(200_000), &stop, &mut |_| {});
        if o.result != SolveResult::Win {
            continue;
        }
        let tree = s.proof_tree().expect("proof");
        assert!(tree.check(g).is_ok());
        // Drop one defence from the first AND node with two or more children.
        let Some(and) = tree.nodes.iter().position(|n| n.children.len() >= 2) else {
            continue;
        };
        let mut bad = tree.clone();
        bad.nodes[and].children.pop();
        assert!(bad.check(g).is_err(), "a missing defence was not noticed");
        assert!(replay_proof(&mut g.clone(), &bad, 0).is_err());
        // Claim the opposite result.
        let mut flipped = tree.clone();
        flipped.result = SolveResult::Loss;
        assert!(flipped.check(g).is_err(), "a flipped claim was not noticed");
        tested += 1;
    }
    assert!(tested >= 3, "too few wins with AND nodes: {tested}");
}

/// A stand-in for a PCN network: pseudo-random priors and proof costs from the position
/// hash. Focused DFPN must stay exact whatever the heuristic says.
struct FakeCost;

impl<G: Game> pcn::search::solver::Heuristic<G> for FakeCost {
    fn name(&self) -> &'static str {
        "fake-cost"
    }
    fn evaluate_batch(&mut self, positions: &[&G], out: &mut [pcn::search::solver::Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            e.reset(g.num_actions());
            let mut r = Rng::new(g.hash());
            for p in e.policy.iter_mut() {
                *p = r.unit() as f32;
            }
            e.value = r.unit() as f32 * 2.0 - 1.0;
            e.cost = Some([r.unit() as f32 * 40.0, r.unit() as f32 * 40.0]);
        }
    }
    fn has_cost(&self) -> bool {
        true
    }
}

#[test]
fn focused_dfpn_with_cost_heuristic_agrees_with_brute_force() {
    let mut solved = 0;
    let mut total = 0;
    for (i, rule) in [Rule::Freestyle, Rule::FourT].into_iter().enumerate() {
        for g in gomoku_positions(rule, 6, 11, 15, 555 + i as u64) {
            let prover = g.to_move();
            let truth = gomoku_truth(&g, prover, 2_000_000).expect("small enough");
            for name in ["fdfpn", "mcts"] {
                let opts = SolverOptions::with_memory(8 << 20);
                let mut s = pcn::search::solver::solver_with_heuristic::<Gomoku>(
                    name,
                    &opts,
                    Box::new(FakeCost),
                )
                .expect("solver");
                let stop = AtomicBool::new(false);
                let o = s.solve(&g, prover, &Limits::nodes(100_000), &stop, &mut |_| {});
                total += 1;
                if o.result == SolveResult::Unknown {
                    continue;
                }
                solved += 1;
                assert_eq!(
                    o.result == SolveResult::Win,
                    truth,
                    "{name} with fake costs"
                );
                let t = s.proof_tree().expect("proof");
                replay_proof(&mut g.clone(), &t, 0).expect("valid proof");
            }
        }
    }
    assert!(
        total >= 40 && solved * 2 >= total,
        "solved {solved}/{total}"
    );
}

#[test]
fn mcts_proven_choices_are_wins_by_brute_force() {
    // Every decision the MCTS tree says it proved (training data for the pattern policy,
    // examples/decision_samples.rs) is a prover's node whose listed winning child really
    // wins, by exhaustive search. Without threat knowledge the tree proves its own nodes
    // (with it, on boards this small the knowledge proves them at expansion instead).
    let bare = CommonOptions {
        memory_bytes: 8 << 20,
        knowledge: Knowledge::none(),
        ..CommonOptions::default()
    };
    let (mut checked, mut wins) = (0, 0);
    for (rule, size, empties, seed) in [(Rule::FourT, 6, 14, 71), (Rule::Freestyle, 6, 13, 72)] {
        for (i, g) in gomoku_positions(rule, size, empties, 12, seed)
            .into_iter()
            .enumerate()
        {
            let prover = g.to_move();
            let h = Gomoku::default_heuristic(&bare);
            let mut s = Mcts::new(bare.clone(), MctsOptions::default(), h);
            let stop = AtomicBool::new(false);
            let o = s.solve(&g, prover, &Limits::nodes(20_000), &stop, &mut |_| {});
            wins += usize::from(o.result == SolveResult::Win);
            for c in s.proven_choices() {
                let label = format!("{rule:?} {size}x{size} #{i} path {:?}", c.path);
                let mut h = g.clone();
                for &m in &c.path {
                    h.play(m).expect("the path is legal");
                }
                assert_eq!(h.to_move(), prover, "{label}: not the prover's node");
                assert!(c.moves.len() > 1 && c.moves.contains(&c.win), "{label}");
                assert!(
                    !c.narrowed,
                    "{label}: nothing is narrowed without knowledge"
                );
                let mut legal = Vec::new();
                h.legal_moves(&mut legal);
                assert!(c.moves.iter().all(|m| legal.contains(m)), "{label}");
                h.play(c.win).expect("the winning child is legal");
                assert_eq!(
                    gomoku_truth(&h, prover, 3_000_000),
                    Some(true),
                    "{label}: {} does not win",
                    g.move_to_gtp(c.win)
                );
                checked += 1;
            }
        }
    }
    println!("proven choices checked: {checked} from {wins} wins");
    assert!(
        checked >= 50,
        "too few proven choices to mean anything: {checked}"
    );
}
