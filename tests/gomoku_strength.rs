//! Gomoku solving strength (branch gstrength): the staged knowledge of the MCTS solver. The
//! second-visit searches (`knowledge_win_second`: VCT; `quick_wins_second`: the prover's
//! threat as if the defender passed, replayed after each reply) must only claim real wins,
//! checked by the exhaustive search of tests/common on small 4T boards; on a shared
//! problem the staged MCTS solves and its proof passes the `pcn verify` checker.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game, Move};
use pcn::proof::verify::verify_text;
use pcn::proof::{self, GameKind, MoveTree, ProofHeader};
use pcn::search::solver::heuristic::ThreatPriors;
use pcn::search::solver::mcts::Mcts;
use pcn::search::solver::{
    CommonOptions, Evaluation, Heuristic, Knowledge, KnowledgeState, MctsOptions, SolveResult,
    Solver, SolverGame,
};
use pcn::search::Limits;
use pcn::sgf::GameTree;

mod common;

use common::{gomoku_key, gomoku_positions, Brute};

fn staged() -> Knowledge {
    Knowledge {
        vct: true,
        defence: true,
        defer_vct: true,
        ..Knowledge::default()
    }
}

#[test]
fn staged_knowledge_claims_are_real_wins() {
    assert!(
        <Gomoku as SolverGame>::knowledge_deferred(&KnowledgeState::new(staged())),
        "VCT is deferred"
    );
    assert_eq!(
        <Gomoku as SolverGame>::defence_deferred(&KnowledgeState::new(staged())),
        Some(staged().defence_visits)
    );
    let off = Knowledge {
        defence: false,
        defer_vct: false,
        ..staged()
    };
    assert!(!<Gomoku as SolverGame>::knowledge_deferred(
        &KnowledgeState::new(off.clone())
    ));
    assert_eq!(
        <Gomoku as SolverGame>::defence_deferred(&KnowledgeState::new(off)),
        None
    );

    let (mut defence_claims, mut defence_checked, mut rejected) = (0, 0, 0);
    let (mut second_claims, mut second_checked) = (0, 0);
    let (mut more, mut first_total) = (0, 0);
    for (i, g0) in gomoku_positions(6, Rule::FourT, 13, 160, 0x57_2E46)
        .into_iter()
        .enumerate()
    {
        let mut g = g0.clone();
        // The side not to move is the prover: `g` is a defender node.
        let prover = g.to_move().opp();
        let mut st = KnowledgeState::new(staged());
        let mut replies = Vec::new();
        g.legal_moves(&mut replies);
        let mut wins = Vec::new();
        g.quick_wins_second(&mut st, &replies, &mut wins);
        assert_eq!(
            g.hash(),
            g0.hash(),
            "quick_wins_second changed the position"
        );
        // The first stage alone (no pass search) never proves more replies.
        let mut first = Vec::new();
        g.quick_wins(&mut KnowledgeState::new(staged()), &replies, &mut first);
        first_total += first.len();
        assert!(first.len() <= wins.len() || wins.len() == replies.len());
        if wins.len() > first.len() {
            more += 1;
        }
        let mut brute = Brute::new(3_000_000, gomoku_key);
        rejected += replies.len() - wins.len();
        for &(k, w) in &wins {
            defence_claims += 1;
            let r = replies[k];
            g.play(r).expect("reply is legal");
            g.play(w).expect("claimed move is legal");
            let v = brute.wins(&mut g, prover);
            g.undo();
            g.undo();
            if let Some(v) = v {
                defence_checked += 1;
                assert!(
                    v,
                    "position {i}: after {r}, {w} is claimed to win but loses"
                );
            }
        }
        // The deferred VCT at the prover's nodes after the replies left open.
        for (k, &r) in replies.iter().enumerate() {
            if wins.iter().any(|&(j, _)| j == k) {
                continue;
            }
            g.play_unchecked(r);
            if g.outcome().is_none() {
                if let Some(w) = g.knowledge_win_second(&mut st) {
                    second_claims += 1;
                    g.play(w).expect("claimed move is legal");
                    let v = brute.wins(&mut g, prover);
                    g.undo();
                    if let Some(v) = v {
                        second_checked += 1;
                        assert!(v, "position {i}: after {r}, VCT move {w} loses");
                    }
                }
            }
            g.undo();
        }
    }
    eprintln!("pass search proved more replies at {more} positions (first stage: {first_total})");
    assert!(more >= 5, "the pass search added too little: {more}");
    eprintln!(
        "defence: {defence_claims} claims ({defence_checked} checked), {rejected} replies left; \
         deferred VCT: {second_claims} claims ({second_checked} checked)"
    );
    assert!(
        defence_checked >= 20,
        "too few defence claims checked: {defence_checked}"
    );
    assert!(
        rejected >= 20,
        "the defence claimed every reply: {rejected}"
    );
    // Deep VCT wins are mostly beyond the exhaustive search's cap here; the same search is
    // checked by tests/gomoku_knowledge.rs through `knowledge_win`.
    assert!(
        second_claims >= 3,
        "too few deferred VCT claims: {second_claims}"
    );
}

/// The static threat heuristic under another name: MCTS stages its knowledge only with
/// learned priors (a network), so this is how the staged path runs without a network.
struct Learned(ThreatPriors);

impl Heuristic<Gomoku> for Learned {
    fn name(&self) -> &'static str {
        "learned-stand-in"
    }

    fn evaluate_batch(&mut self, positions: &[&Gomoku], out: &mut [Evaluation]) {
        self.0.evaluate_batch(positions, out)
    }
}

/// A shared 4T problem (Black and White alternating from Black, no setup stones).
fn problem(path: &Path) -> Option<Gomoku> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut g = Gomoku::new(15, 15, Rule::FourT).ok()?;
    let b = text.as_bytes();
    for i in 1..b.len().saturating_sub(4) {
        if (b[i] == b'B' || b[i] == b'W')
            && b[i + 1] == b'['
            && b[i + 4] == b']'
            && b[i - 1] == b';'
        {
            let x = (b[i + 2] - b'a') as usize;
            let y = 14 - (b[i + 3] - b'a') as usize;
            g.play((y * 15 + x) as Move).ok()?;
        }
    }
    Some(g)
}

/// Shared problem 53, which the staged MCTS solves in about 1 000 simulations: solved, and its
/// proof passes the library checker and the real `pcn verify` checker. Skips when ../shared is
/// absent.
#[test]
fn staged_mcts_solves_a_shared_problem_with_a_sound_proof() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/problems/gomoku/53.sgf");
    if !path.exists() {
        eprintln!("SKIP: {} is absent", path.display());
        return;
    }
    let g = problem(&path).expect("problem 53 loads");
    let opts = CommonOptions {
        memory_bytes: 64 << 20,
        knowledge: staged(),
        ..CommonOptions::default()
    };
    let h = Learned(ThreatPriors::new(&opts));
    let mut s = Mcts::new(opts, MctsOptions::default(), Box::new(h));
    let stop = AtomicBool::new(false);
    let o = s.solve(&g, Color::Black, &Limits::nodes(20_000), &stop, &mut |_| {});
    assert_eq!(
        o.result,
        SolveResult::Win,
        "problem 53 solved: {:?}",
        o.stats
    );
    let tree = s.proof_tree().expect("a proof tree");
    tree.check(&g)
        .expect("the library checker accepts the tree");
    let mt = MoveTree::from_solver(&tree, g.to_move(), 10_000_000).expect("convertible");
    let moves = g.history_cells().map(|(c, col)| (col, g.move_of(c)));
    let record = GameTree::from_moves(4, 15, 15, moves);
    let header = ProofHeader {
        game: GameKind::Gomoku,
        rule: Some(Rule::FourT),
        size: (15, 15),
        prover: Color::Black,
        plies: g.ply(),
        to_move: Some(g.to_move()),
        extra: vec![("solver".into(), "mcts".into())],
    };
    let text = proof::to_sgf(&record, &header, &mt).to_sgf();
    let report = verify_text(&text).expect("pcn verify accepts the proof");
    assert!(report.nodes > 100, "a real proof: {} nodes", report.nodes);
}
