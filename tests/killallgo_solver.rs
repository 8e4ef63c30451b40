//! Killall-Go solving without a network: the static move ordering, DFPN / focused DFPN
//! proving shared PCN problems with complete, rule-checked proof trees, and MCTS building its
//! proof trees from its own search tree.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use pcn::game::killallgo::{KillallGo, Variant};
use pcn::game::{Color, Game, Move};
use pcn::search::solver::killallgo::move_score;
use pcn::search::solver::{solver_by_name, CommonOptions, SolveResult, SolverGame, SolverOptions};
use pcn::search::Limits;

mod common;

fn play(g: &mut KillallGo, s: &str) {
    let m = g.parse_gtp(s).expect("vertex");
    g.play(m).unwrap_or_else(|e| panic!("{s}: {e}"));
}

fn mv(g: &KillallGo, s: &str) -> Move {
    g.parse_gtp(s).expect("vertex")
}

fn score(g: &KillallGo, s: &str) -> i32 {
    let b = g.board();
    move_score(b, b.cell_of(mv(g, s)), g.to_move())
}

#[test]
fn static_order_prefers_captures_and_white_space_and_puts_pass_last() {
    let mut g = KillallGo::after_opening(Variant::Pcn9);
    // White E5, Black D5, White D4, Black E6; White to move: D6 ataris nothing yet, but
    // playing next to White beats the far corner.
    for s in ["E5", "D5", "D4", "E6"] {
        play(&mut g, s);
    }
    assert_eq!(g.to_move(), Color::White);
    assert!(
        score(&g, "E4") > score(&g, "J1"),
        "next to White beats the far corner"
    );
    // Black D5 has liberties C5, D6; put it in atari and check that the capture ranks first.
    play(&mut g, "C5"); // White
    play(&mut g, "J9"); // Black elsewhere
    assert_eq!(g.to_move(), Color::White);
    let cap = score(&g, "D6");
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    let mut scores = Vec::new();
    g.order_scores(&legal, &mut scores);
    let best = legal
        .iter()
        .zip(&scores)
        .max_by_key(|&(_, &s)| s)
        .map(|(&m, _)| m)
        .expect("moves");
    assert_eq!(
        g.move_to_gtp(best),
        "D6",
        "the capture comes first (score {cap})"
    );
    let pass_i = legal
        .iter()
        .position(|&m| m == g.pass_move())
        .expect("pass legal");
    assert!(scores.iter().all(|&s| s >= scores[pass_i]), "pass is last");
}

fn problem(name: &str) -> Option<KillallGo> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/problems/killallgo")
        .join(name);
    let Ok(text) = std::fs::read_to_string(&p) else {
        eprintln!("skipping: {} not found", p.display());
        return None;
    };
    let tree = pcn::sgf::GameTree::parse(&text).expect("problem SGF parses");
    Some(pcn::sgf::to_killallgo(&tree).expect("problem replays"))
}

#[test]
fn dfpn_and_fdfpn_prove_a_shared_problem_with_checked_trees() {
    let Some(g) = problem("29.sgf") else { return };
    assert_eq!(g.to_move(), Color::White);
    for name in ["dfpn", "fdfpn"] {
        let opts = SolverOptions::default();
        let mut s = solver_by_name::<KillallGo>(name, &opts).expect("solver");
        let stop = AtomicBool::new(false);
        let out = s.solve(
            &g,
            Color::White,
            &Limits::nodes(400_000),
            &stop,
            &mut |_| {},
        );
        assert_eq!(out.result, SolveResult::Win, "{name}: {out:?}");
        let tree = s.proof_tree().expect("proof tree");
        tree.check(&g)
            .unwrap_or_else(|e| panic!("{name}: unsound tree: {e}"));
        // The tree's root move is the reported move, and it is a White board move.
        let root = tree.nodes[0].children[0].0;
        assert_eq!(Some(root), out.best, "{name}");
        assert_ne!(root, g.pass_move(), "{name}");
    }
}

#[test]
fn mcts_proofs_come_from_its_own_tree_without_a_re_search() {
    // By default (GHI exact) the Killall-Go MCTS runs without its table (the table's keys do
    // not encode the history), so the search tree is the only record of a proof. With no
    // budget for the DFPN re-search, every proven result's tree must come from that tree.
    let opts = SolverOptions::with_common(CommonOptions {
        proof_search_nodes: 0,
        ..CommonOptions::default()
    });
    let mut solved = 0;
    for g in common::killallgo_positions(80, 12, 77) {
        for prover in [Color::White, Color::Black] {
            let mut s = solver_by_name::<KillallGo>("mcts", &opts).expect("mcts");
            let stop = AtomicBool::new(false);
            let out = s.solve(&g, prover, &Limits::nodes(20_000), &stop, &mut |_| {});
            if out.result == SolveResult::Unknown {
                continue;
            }
            solved += 1;
            let tree = s
                .proof_tree()
                .unwrap_or_else(|| panic!("{:?} for {prover:?} without a tree", out.result));
            tree.check(&g)
                .unwrap_or_else(|e| panic!("unsound tree for {prover:?}: {e}"));
            assert_eq!(tree.result, out.result);
        }
    }
    eprintln!("{solved} results, each with a sound tree from the search tree");
    assert!(
        solved >= 10,
        "too few solved positions to test anything: {solved}"
    );
}
