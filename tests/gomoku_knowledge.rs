//! Gomoku solver knowledge (4T): the threat search's win table, forced-line replay and the
//! cheap `quick_win` check. Every claimed win is checked on small boards by the exhaustive
//! search of tests/common (independent of the solvers), and the replay is checked to reject a
//! line that a defender stone broke.

use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game};
use pcn::search::solver::knowledge::replay_forced_line;
use pcn::search::solver::{Knowledge, KnowledgeState, SolverGame};
use pcn::search::threat::ThreatSolver;
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
