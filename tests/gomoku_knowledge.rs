//! Gomoku solver knowledge (4T): the threat search's win table, forced-line replay and the
//! cheap `quick_win` check. Every claimed win is checked on small boards by the exhaustive
//! search of tests/common (independent of the solvers), and the replay is checked to reject a
//! line that a defender stone broke.

use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game};
use pcn::search::gomoku::threat::ThreatSolver;
use pcn::search::solver::knowledge::replay_forced_line;
use pcn::search::solver::{Knowledge, KnowledgeState, SolverGame};
use pcn::search::{Budget, Limits};

mod common;

use common::{gomoku_key, gomoku_positions, Brute};

fn knowledge_vct() -> Knowledge {
    Knowledge {
        vct: true,
        ..Knowledge::default()
    }
}

#[test]
fn knowledge_and_quick_wins_are_real_wins() {
    let mut claims = 0;
    let mut quick = 0;
    let mut checked = 0;
    for (i, g0) in gomoku_positions(6, Rule::FourT, 14, 150, 0xC0FFEE)
        .into_iter()
        .enumerate()
    {
        let mut st = KnowledgeState::new(knowledge_vct());
        let mut g = g0.clone();
        let me = g.to_move();
        let Some(m) = g.knowledge_win(&mut st) else {
            continue;
        };
        claims += 1;
        assert_eq!(g.hash(), g0.hash(), "knowledge_win changed the position");
        let mut brute = Brute::new(4_000_000, gomoku_key);
        g.play(m).expect("claimed move is legal");
        if let Some(v) = brute.wins(&mut g, me) {
            checked += 1;
            assert!(
                v,
                "position {i}: knowledge claims {m} wins, exhaustive search disagrees"
            );
        }
        // Every reply to the winning move: quick_win (win table, replay) must only claim
        // real wins too.
        let mut replies = Vec::new();
        g.legal_moves(&mut replies);
        for r in replies {
            g.play_unchecked(r);
            if g.outcome().is_none() {
                if let Some(w) = g.quick_win(&mut st) {
                    quick += 1;
                    g.play(w).expect("quick move is legal");
                    let v = brute.wins(&mut g, me);
                    g.undo();
                    assert_ne!(
                        v,
                        Some(false),
                        "position {i}: quick_win {w} after {r} loses"
                    );
                }
            }
            g.undo();
        }
    }
    eprintln!("{claims} knowledge claims ({checked} checked), {quick} quick claims");
    assert!(claims >= 10, "too few claims to test anything: {claims}");
    assert!(
        quick >= 10,
        "too few quick claims to test anything: {quick}"
    );
}

/// A 4T VCF for Black on an otherwise quiet board: its line replays, the win table gives its
/// first move, and a White stone on one of the line's points breaks the replay.
#[test]
fn forced_line_replay_and_win_table() {
    let mut g = Gomoku::new(15, 15, Rule::FourT).expect("board");
    // Black: three in column J blocked at J14 by White, two on row 10; J10 makes a four
    // (forced reply J9) and an open three on row 10, then K10 or F10 wins (open four).
    let setup = [
        ("J11", Color::Black),
        ("J14", Color::White),
        ("J12", Color::Black),
        ("A1", Color::White),
        ("J13", Color::Black),
        ("A3", Color::White),
        ("G10", Color::Black),
        ("A5", Color::White),
        ("H10", Color::Black),
        ("C1", Color::White),
    ];
    for (v, c) in setup {
        let m = g.parse_gtp(v).expect("vertex");
        g.place(m, c).expect("empty");
    }
    assert_eq!(g.to_move(), Color::Black);
    let stop = AtomicBool::new(false);
    let limits = Limits::nodes(100_000);
    let mut b = Budget::new(&limits, &stop);
    let mut ts = ThreatSolver::new(12);
    let line = ts.vcf(&mut g, &mut b, 10).expect("Black has a VCF");
    assert!(line.len() >= 3, "a VCF with at least one four: {line:?}");
    assert!(
        replay_forced_line(&mut g, &line),
        "the VCF's own line replays"
    );
    assert_eq!(
        ts.cached_win(&g),
        Some(line[0]),
        "the win table holds the root win"
    );
    // After the first four and its forced reply the table holds the next attacker move.
    g.play(line[0]).expect("legal");
    g.play(line[1]).expect("forced reply");
    assert_eq!(ts.cached_win(&g), Some(line[2]));
    g.undo();
    g.undo();
    // A White stone on the line's last point kills it; on a far point it does not.
    let last = *line.last().expect("non-empty");
    let mut h = g.clone();
    h.place(last, Color::White).expect("empty");
    h.set_to_move(Color::Black);
    assert!(!replay_forced_line(&mut h, &line));
    let mut far = g.clone();
    far.place(far.parse_gtp("O15").expect("vertex"), Color::White)
        .expect("empty");
    far.set_to_move(Color::Black);
    assert!(replay_forced_line(&mut far, &line));
    // Not a forced line under freestyle rules (no 4T forced replies): refused.
    let mut fs = Gomoku::new(15, 15, Rule::Freestyle).expect("board");
    assert!(!replay_forced_line(&mut fs, &line));
}

/// A 15x15 4T position from GTP vertices, Black and White alternating from Black.
fn position(moves: &[&str]) -> Gomoku {
    let mut g = Gomoku::new(15, 15, Rule::FourT).expect("board");
    for v in moves {
        let m = g.parse_gtp(v).expect("vertex");
        g.play(m).expect("legal move");
    }
    g
}

fn narrowed(g: &mut Gomoku, lambda_nodes: u64) -> (bool, Vec<String>) {
    let mut st = KnowledgeState::new(Knowledge {
        vct: true,
        lambda_nodes,
        ..Knowledge::default()
    });
    let before = g.hash();
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    let cut = g.narrow_prover_moves(&mut st, &mut moves);
    assert_eq!(g.hash(), before, "narrowing changed the position");
    (cut, moves.iter().map(|&m| g.move_to_gtp(m)).collect())
}

/// Black's open two H8 J8 (White far away, no threat): the moves that make an open three
/// with it (threats of a threat: after them and a pass Black wins by VCT) are kept, far and
/// unrelated moves are not.
#[test]
fn narrowing_keeps_threats_of_a_threat() {
    let mut g = position(&["H8", "A15", "J8", "O1"]);
    let (cut, kept) = narrowed(&mut g, 300);
    assert!(cut, "nothing was removed");
    for v in ["G8", "K8"] {
        assert!(
            kept.contains(&v.to_string()),
            "{v} (open three) not kept: {kept:?}"
        );
    }
    for v in ["A1", "H3", "C12"] {
        assert!(!kept.contains(&v.to_string()), "{v} kept: {kept:?}");
    }
    assert!(kept.len() < 30, "too many kept: {kept:?}");
    // Every kept move really is a threat of a threat: Black wins by VCT after it and a pass.
    for v in &kept {
        let m = g.parse_gtp(v).expect("vertex");
        g.play(m).expect("legal");
        g.set_to_move(Color::Black);
        let limits = Limits::nodes(100_000);
        let never = AtomicBool::new(false);
        let mut b = Budget::new(&limits, &never);
        let win = ThreatSolver::new(16).vct(&mut g, &mut b, 8);
        assert!(
            win.is_some_and(|l| !l.is_empty()),
            "{v} kept but no VCT after it and a pass"
        );
        g.set_to_move(Color::White);
        g.undo();
    }
    // Budget 0 narrows nothing.
    let (cut, kept) = narrowed(&mut g, 0);
    assert!(!cut);
    assert_eq!(kept.len(), 15 * 15 - 4);
}

/// White's open three C3 D3 E3 threatens to win: Black's kept moves are its defences (a
/// block at either end, or the far end G3 that leaves only a blocked four), nothing else.
#[test]
fn narrowing_under_threat_keeps_defences_only() {
    let mut g = position(&["H8", "C3", "J8", "D3", "O15", "E3"]);
    assert_eq!(g.to_move(), Color::Black);
    let (cut, kept) = narrowed(&mut g, 300);
    assert!(cut);
    for v in ["B3", "F3"] {
        assert!(
            kept.contains(&v.to_string()),
            "{v} (defence) not kept: {kept:?}"
        );
    }
    for v in &kept {
        assert!(
            ["B3", "F3", "G3", "A3"].contains(&v.as_str()),
            "{v} kept though it does not defend: {kept:?}"
        );
    }
    // G8 would be a threat of a threat, but it ignores White's three.
    assert!(!kept.contains(&"G8".to_string()));
}
