//! Differential solver test at scale: seeded random small positions (Gomoku 5x5..7x7 under
//! freestyle, 4T, renju, exact five and caro; late 7x7 Killall-Go with either prover),
//! each solved by exhaustive AND/OR search (tests/common's `Brute`, which shares only the
//! rules with the solvers) and by every solver of the table
//! ([`pcn::search::solver::solver_names`]). A failure is: a solver's answer differs from
//! the exhaustive one; a solved result without a solution tree, or one that
//! `ProofTree::check` rejects; a win whose proof file the proof checker (`verify_text`,
//! what `pcn verify` runs) rejects; or the real `pcn verify` rejecting a sample of the
//! proof files.
//!
//! The count and seed come from `PCN_DIFF_POSITIONS` (default 120: a few seconds in
//! `cargo test --release`) and `PCN_DIFF_SEED` (default 1); `make soak` runs thousands.
//! solver_agreement.rs and solver_suite2.rs check the same properties on fixed position
//! sets with per-solver statistics; this test is the same check at any scale.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::Rule;
use pcn::game::{Color, Game};
use pcn::proof::verify::verify_text;
use pcn::proof::{self, GameKind, MoveTree};
use pcn::search::solver::{solver_by_name, solver_names, SolveResult, SolverGame, SolverOptions};
use pcn::search::Limits;
use pcn::sgf::GameTree;
use pcn::util::Rng;

mod common;

use common::{
    gomoku_key, gomoku_positions, gomoku_record, header, killallgo_positions, killallgo_record,
    no_key, tmp_dir, Brute,
};

/// Node budget of each solver on each position.
const BUDGET: u64 = 20_000;
/// Exhaustive-search cap; positions beyond it are drawn again.
const CAP: u64 = 100_000;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// What every solver said, summed over positions.
#[derive(Default, Debug)]
struct Tally {
    /// Per solver: (agreeing answers, unknown).
    per: HashMap<&'static str, (u64, u64)>,
    positions: u64,
    wins: u64,
    /// Proof files (SGF text) of solved wins, for `pcn verify`.
    proofs: Vec<String>,
}

/// Solves `g` for `prover` with every solver and checks each answer against `truth`.
#[allow(clippy::too_many_arguments)]
fn check_all<G: SolverGame>(
    g: &G,
    prover: Color,
    truth: bool,
    record: &GameTree,
    kind: GameKind,
    rule: Option<Rule>,
    label: &str,
    tally: &mut Tally,
) {
    tally.positions += 1;
    tally.wins += truth as u64;
    for name in solver_names() {
        let mut s = solver_by_name::<G>(name, &SolverOptions::with_memory(4 << 20))
            .unwrap_or_else(|e| panic!("solver {name}: {e}"));
        let o = s.solve(
            g,
            prover,
            &Limits::nodes(BUDGET),
            &AtomicBool::new(false),
            &mut |_| {},
        );
        let t = tally.per.entry(name).or_default();
        if o.result == SolveResult::Unknown {
            t.1 += 1;
            continue;
        }
        assert_eq!(
            o.result == SolveResult::Win,
            truth,
            "{label}: {name} says {:?}, exhaustive search says prover wins = {truth}",
            o.result
        );
        t.0 += 1;
        let tree = s
            .proof_tree()
            .unwrap_or_else(|| panic!("{label}: {name} solved {:?} without a tree", o.result));
        tree.check(g)
            .unwrap_or_else(|e| panic!("{label}: {name}: solution tree rejected: {e}"));
        if o.result == SolveResult::Win {
            let mt = MoveTree::from_solver(&tree, g.to_move(), 1_000_000)
                .unwrap_or_else(|| panic!("{label}: {name}: proof tree not convertible"));
            let h = header(kind, rule, g, prover, name);
            let text = proof::to_sgf(record, &h, &mt).to_sgf();
            if let Err(e) = verify_text(&text) {
                panic!("{label}: {name}: the proof checker rejects the proof: {e}\n{text}");
            }
            tally.proofs.push(text);
        }
    }
}

#[test]
fn every_solver_agrees_with_exhaustive_search_on_random_positions() {
    let target = env_or("PCN_DIFF_POSITIONS", 120);
    let seed = env_or("PCN_DIFF_SEED", 1);
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    let gomoku_sets = [
        (Rule::Freestyle, 5, 14),
        (Rule::FourT, 5, 14),
        (Rule::Freestyle, 6, 25),
        (Rule::FourT, 6, 25),
        (Rule::Renju, 6, 25),
        (Rule::Exact, 6, 25),
        (Rule::Caro, 6, 25),
        (Rule::Freestyle, 7, 38),
    ];
    let t0 = std::time::Instant::now();
    let mut brute_secs = 0.0;
    let mut round = 0u64;
    while tally.positions < target {
        round += 1;
        let s = rng.next_u64();
        // Two positions in three Gomoku, one Killall-Go.
        if !round.is_multiple_of(3) {
            let (rule, size, stones) = gomoku_sets[rng.below(gomoku_sets.len())];
            for mut g in gomoku_positions(size, rule, stones, 1, s) {
                let prover = if rng.below(2) == 0 {
                    g.to_move()
                } else {
                    g.to_move().opp()
                };
                let tb = std::time::Instant::now();
                let truth = Brute::new(CAP, gomoku_key).wins(&mut g, prover);
                brute_secs += tb.elapsed().as_secs_f64();
                let Some(truth) = truth else {
                    continue;
                };
                let label = format!(
                    "seed {seed} round {round}: {} prover {prover:?} {}",
                    rule.name(),
                    gomoku_record(&g).to_sgf()
                );
                let rec = gomoku_record(&g);
                check_all(
                    &g,
                    prover,
                    truth,
                    &rec,
                    GameKind::Gomoku,
                    Some(g.rule()),
                    &label,
                    &mut tally,
                );
            }
        } else {
            let plies = 78 + rng.below(10);
            for mut g in killallgo_positions(plies, 1, s) {
                let prover = if rng.below(2) == 0 {
                    Color::White
                } else {
                    Color::Black
                };
                let tb = std::time::Instant::now();
                let truth = Brute::new(CAP, no_key).wins(&mut g, prover);
                brute_secs += tb.elapsed().as_secs_f64();
                let Some(truth) = truth else {
                    continue;
                };
                let label = format!(
                    "seed {seed} round {round}: killallgo prover {prover:?} {}",
                    killallgo_record(&g).to_sgf()
                );
                let rec = killallgo_record(&g);
                check_all(
                    &g,
                    prover,
                    truth,
                    &rec,
                    GameKind::KillallGo,
                    None,
                    &label,
                    &mut tally,
                );
            }
        }
        assert!(
            round < target * 20,
            "too few positions within the exhaustive cap"
        );
    }
    let mut per: Vec<_> = tally.per.iter().collect();
    per.sort();
    eprintln!(
        "differential: seed {seed}, {} positions ({} prover wins) in {:.1} s ({brute_secs:.1} s exhaustive), {} win proofs; per solver (agree, unknown): {per:?}",
        tally.positions,
        tally.wins,
        t0.elapsed().as_secs_f64(),
        tally.proofs.len()
    );
    // The exhaustive values are mixed, and every solver answers a good share (an unknown is
    // no disagreement, but a solver that answers nothing would check nothing; depth-limited
    // αβ and the MCTS-style solvers leave many draws unknown within the budget).
    assert!(
        tally.wins > 0 && tally.wins < tally.positions,
        "one-sided values"
    );
    for (name, (agree, unknown)) in &tally.per {
        assert!(
            agree * 4 >= agree + unknown,
            "{name}: only {agree} answers, {unknown} unknown"
        );
    }
    // The real `pcn verify` on up to 200 of the proofs (one process).
    let dir = tmp_dir("differential_proofs");
    let files: Vec<_> = tally
        .proofs
        .iter()
        .take(200)
        .enumerate()
        .map(|(i, t)| {
            let p = dir.join(format!("p{i}.sgf"));
            std::fs::write(&p, t).expect("write a proof");
            p
        })
        .collect();
    assert!(!files.is_empty(), "no win proofs to verify");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pcn"))
        .arg("verify")
        .args(&files)
        .output()
        .expect("run pcn verify");
    assert_eq!(
        out.status.code(),
        Some(0),
        "pcn verify rejected a proof: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
