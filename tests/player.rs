//! Tests of the Gomoku players: tactics of the main player ("pcn"), limits, rule handling,
//! bench determinism, and legality of the reference players.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use pcn::cli::bench::run_bench;
use pcn::game::gomoku::{Gomoku, Pattern, Rule};
use pcn::game::{Color, Game, Move, Outcome};
use pcn::search::gomoku::alphabeta::{AlphaBeta, WIN_THRESHOLD};
use pcn::search::registry::{gomoku_searcher, GOMOKU_SEARCHERS};
use pcn::search::{Limits, SearchEvent, SearchResult, Searcher};
use pcn::util::Rng;

fn game(rule: Rule, moves: &str) -> Gomoku {
    let mut g = Gomoku::new(15, 15, rule).unwrap();
    for s in moves.split_whitespace() {
        let m = g.parse_gtp(s).unwrap();
        g.play(m).unwrap();
    }
    g
}

fn search(g: &Gomoku, limits: Limits) -> SearchResult {
    let stop = AtomicBool::new(false);
    AlphaBeta::new().search(g, &limits, &stop, &mut |_| {})
}

fn best_gtp(g: &Gomoku, limits: Limits) -> String {
    let r = search(g, limits);
    g.move_to_gtp(r.best.expect("a move"))
}

#[test]
fn wins_in_one_under_every_rule() {
    for rule in [
        Rule::Freestyle,
        Rule::Exact,
        Rule::Renju,
        Rule::Caro,
        Rule::CaroExact,
    ] {
        let g = game(rule, "H8 A1 J8 A2 K8 A3 L8 A4");
        let r = search(&g, Limits::nodes(10_000));
        let m = g.move_to_gtp(r.best.unwrap());
        assert!(m == "G8" || m == "M8", "{rule:?}: wins with five, got {m}");
        assert_eq!(r.proven, Some(Some(Color::Black)), "{rule:?}");
    }
}

#[test]
fn blocks_five() {
    // Black has an open three, White a four: Black must block at A5.
    let g = game(Rule::Freestyle, "H8 A1 J8 A2 K8 A3 O15 A4");
    assert_eq!(best_gtp(&g, Limits::nodes(10_000)), "A5");
    assert_eq!(best_gtp(&g, Limits::time(Duration::from_millis(50))), "A5");
}

#[test]
fn makes_own_five_before_blocking() {
    // White to move has a four (A1-A4) and Black threatens an open four: White wins at A5.
    let g = game(Rule::Freestyle, "H8 A1 J8 A2 K8 A3 L8 A4 O15");
    // Black has H8..L8 (open four); White to move must take its own five.
    assert_eq!(g.to_move(), Color::White);
    assert_eq!(best_gtp(&g, Limits::nodes(10_000)), "A5");
}

/// Whether `color` can make five or an open four somewhere.
fn has_four_threat(g: &Gomoku, color: Color) -> bool {
    g.cell_range().any(|c| {
        g.cell_value(c) == 0 && {
            let p = g.patterns(c, color);
            p.contains(&Pattern::F5) || p.contains(&Pattern::F4)
        }
    })
}

#[test]
fn stops_open_three_from_becoming_open_four() {
    // White to move; Black has the open three H8 J8 K8. White has nothing.
    for moves in ["H8 H9 J8 J9 K8", "H8 A1 J9 A3 K10", "H8 H10 J8 O15 L8"] {
        let mut g = game(Rule::Freestyle, moves);
        assert!(has_four_threat(&g, Color::Black));
        let m = search(&g, Limits::nodes(50_000)).best.unwrap();
        g.play(m).unwrap();
        assert!(
            !has_four_threat(&g, Color::Black),
            "{moves}: after {} Black still threatens an open four",
            g.move_to_gtp(m)
        );
    }
}

/// Black to move with a two-move VCF (L9 four, then L8 double four) and no open three.
fn vcf_position() -> Gomoku {
    let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
    let black = ["H8", "J8", "K8", "L10", "L11", "J9", "K9", "M9"];
    let white = ["G8", "L12", "H9", "A1", "A3", "A5", "M12", "M11"];
    for (b, w) in black.iter().zip(white.iter()) {
        let mb = g.parse_gtp(b).unwrap();
        g.place(mb, Color::Black).unwrap();
        let mw = g.parse_gtp(w).unwrap();
        g.place(mw, Color::White).unwrap();
    }
    g.set_to_move(Color::Black);
    g
}

#[test]
fn plays_a_vcf() {
    let mut g = vcf_position();
    let threats: Vec<String> = g
        .cell_range()
        .filter(|&c| g.cell_value(c) == 0 && g.patterns(c, Color::Black).contains(&Pattern::F4))
        .map(|c| g.move_to_gtp(g.move_of(c)))
        .collect();
    assert!(
        threats.is_empty(),
        "no open three: the win needs the VCF; {threats:?}"
    );
    let mut proven = false;
    let stop = AtomicBool::new(false);
    let r = AlphaBeta::new().search(&g, &Limits::nodes(200_000), &stop, &mut |e| {
        if let SearchEvent::Proven { winner, .. } = e {
            proven = *winner == Some(Color::Black);
        }
    });
    assert!(r.score >= WIN_THRESHOLD, "score {}", r.score);
    assert!(proven, "a Proven event for Black");
    // Play it out against the same player defending: Black must win within a few moves.
    let mut white = AlphaBeta::new();
    let mut black = AlphaBeta::new();
    for _ in 0..12 {
        if g.outcome().is_some() {
            break;
        }
        let p = if g.to_move() == Color::Black {
            &mut black
        } else {
            &mut white
        };
        let m = p
            .search(&g, &Limits::nodes(100_000), &stop, &mut |_| {})
            .best
            .unwrap();
        g.play(m).unwrap();
    }
    assert_eq!(g.outcome(), Some(Outcome::Win(Color::Black)));
}

#[test]
fn legal_move_under_tiny_limits_and_no_mutation() {
    let g = game(
        Rule::Freestyle,
        "H8 J9 G9 G7 J7 K6 H10 H9 G10 F11 J10 K10 F9 E8",
    );
    let before = (g.hash(), g.ply(), format!("{g:?}"));
    let t = Instant::now();
    let r = search(&g, Limits::time(Duration::from_millis(1)));
    let took = t.elapsed();
    assert!(
        took < Duration::from_millis(100),
        "1 ms search took {took:?}"
    );
    assert!(g.check_move(r.best.unwrap()).is_ok());
    let r = search(&g, Limits::nodes(1));
    assert!(g.check_move(r.best.unwrap()).is_ok());
    let stop = AtomicBool::new(true);
    let r = AlphaBeta::new().search(&g, &Limits::default(), &stop, &mut |_| {});
    assert!(
        g.check_move(r.best.unwrap()).is_ok(),
        "stop flag already set"
    );
    assert_eq!(before, (g.hash(), g.ply(), format!("{g:?}")));
}

#[test]
fn renju_never_forbidden() {
    // K8 would make Black a double three (H8 J8 K8 and K8 K9 K10): forbidden.
    let g = game(Rule::Renju, "H8 A1 J8 A3 K9 A5 K10 O15");
    let k8 = g.parse_gtp("K8").unwrap();
    assert!(
        g.check_move(k8).is_err(),
        "K8 is forbidden in this position"
    );
    for limits in [
        Limits::nodes(1),
        Limits::nodes(50_000),
        Limits::time(Duration::from_millis(1)),
    ] {
        let r = search(&g, limits);
        let m = r.best.unwrap();
        assert_ne!(m, k8);
        assert!(g.check_move(m).is_ok());
    }
}

#[test]
fn four_t_forced_reply() {
    // Black H8 J8 K8 L8 blocked by G8: White must reply at M8 under 4T.
    let g = game(Rule::FourT, "H8 G8 J8 A1 K8 A2 L8");
    let m8 = g.parse_gtp("M8").unwrap();
    assert_eq!(g.forced_point(), Some(m8));
    for name in GOMOKU_SEARCHERS {
        let mut p = gomoku_searcher(name).unwrap();
        let stop = AtomicBool::new(false);
        let r = p.search(&g, &Limits::nodes(1000), &stop, &mut |_| {});
        assert_eq!(r.best, Some(m8), "{name}");
    }
}

fn random_position(rng: &mut Rng, rule: Rule, w: usize, h: usize, plies: usize) -> Gomoku {
    let mut g = Gomoku::new(w, h, rule).unwrap();
    let mut legal = Vec::new();
    for _ in 0..plies {
        g.legal_moves(&mut legal);
        if legal.is_empty() {
            break;
        }
        let centre_ish: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|&m| {
                let (x, y) = (m as usize % w, m as usize / w);
                x.abs_diff(w / 2) <= 4 && y.abs_diff(h / 2) <= 4
            })
            .collect();
        let pool = if centre_ish.is_empty() {
            &legal
        } else {
            &centre_ish
        };
        let m = pool[rng.below(pool.len())];
        g.play(m).unwrap();
        if g.outcome().is_some() {
            g.undo();
            break;
        }
    }
    g
}

#[test]
fn all_players_legal_in_random_positions() {
    let mut rng = Rng::new(42);
    let rules = Rule::ALL;
    let stop = AtomicBool::new(false);
    for i in 0..24 {
        let rule = rules[i % rules.len()];
        let (w, h) = [(15, 15), (20, 20), (9, 13), (7, 7)][i % 4];
        let plies = 4 + rng.below(30);
        let g = random_position(&mut rng, rule, w, h, plies);
        if g.outcome().is_some() {
            continue;
        }
        let before = g.hash();
        for name in GOMOKU_SEARCHERS {
            let mut p = gomoku_searcher(name).unwrap();
            let r = p.search(&g, &Limits::nodes(3000), &stop, &mut |_| {});
            let m = r.best.unwrap_or_else(|| panic!("{name} gave no move"));
            assert!(
                g.check_move(m).is_ok(),
                "{name} {rule:?} {w}x{h}: illegal {m}\n{g:?}"
            );
            assert_eq!(g.hash(), before, "{name} mutated the game");
        }
    }
}

#[test]
fn bench_is_deterministic() {
    let a = run_bench(3000).unwrap();
    let b = run_bench(3000).unwrap();
    assert_eq!(a, b);
    assert!(a.1 > 0);
}

#[test]
fn renju_lost_position_still_legal() {
    // White has the four J10 K10 L10 M10 (blocked by Black H10), completing at N10, which is
    // forbidden for Black (open threes N8 N9 N10 and L12 M11 N10): Black is lost but must
    // still get a legal move.
    let mut g = Gomoku::new(15, 15, Rule::Renju).unwrap();
    let black = ["H10", "N8", "N9", "M11", "L12"];
    let white = ["J10", "K10", "L10", "M10", "A1"];
    for (b, w) in black.iter().zip(white.iter()) {
        g.place(g.parse_gtp(b).unwrap(), Color::Black).unwrap();
        g.place(g.parse_gtp(w).unwrap(), Color::White).unwrap();
    }
    g.set_to_move(Color::Black);
    let n10 = g.parse_gtp("N10").unwrap();
    assert_eq!(g.check_move(n10), Err(pcn::game::MoveError::Forbidden));
    for limits in [Limits::nodes(1), Limits::nodes(10_000)] {
        let r = search(&g, limits);
        assert!(g.check_move(r.best.unwrap()).is_ok());
        assert_eq!(r.proven, Some(Some(Color::White)));
    }
}

#[test]
fn cell_classes_from_line_patterns() {
    use pcn::search::gomoku::alphabeta::{cell_class, CELL_CLASSES};
    use Pattern::*;
    let cases = [
        ([F5, Dead, Dead, Dead], 0),
        ([B4, B4, Dead, Dead], 1),
        ([F4, F1, Dead, Dead], 1),
        ([B4, F3, B1, Dead], 2),
        ([B4, F2, Dead, Dead], 3),
        ([B4, B2, Dead, Dead], 4),
        ([F3, F3, Dead, Dead], 5),
        ([F3, B3, Dead, Dead], 6),
        ([F3, F1, B2, Dead], 7),
        ([B3, F2, Dead, Dead], 8),
        ([F2, F2, B1, Dead], 9),
        ([B3, B2, Dead, Dead], 10),
        ([F2, B2, Dead, Dead], 11),
        ([B2, F1, B1, Dead], CELL_CLASSES),
    ];
    for (p, want) in cases {
        assert_eq!(cell_class(&p), want, "{p:?}");
    }
}

#[test]
fn tuned_evaluation_sees_threes_and_tactics() {
    use pcn::search::gomoku::alphabeta::{eval_features, tuned_eval};
    // Black has an open three and White only scattered stones; with White to move the
    // position is a defence (White must answer the three), with Black to move it is a win in
    // three plies: no static evaluation.
    let white_to_move = game(Rule::Freestyle, "H8 A1 J8 A15 K8");
    let f = eval_features(&white_to_move).expect("a defence is evaluated");
    assert!(tuned_eval(&f) < 0, "White faces an open three");
    let black_to_move = game(Rule::Freestyle, "H8 A1 J8 A15 K8 O1");
    assert_eq!(eval_features(&black_to_move), None);
    // The same stones with the colours swapped, Black to move in both: Black's own open two
    // (against two corner stones) is better for it than White's.
    let mine = game(Rule::Freestyle, "H8 A1 J8 A15");
    let theirs = game(Rule::Freestyle, "A1 H8 A15 J8");
    let (a, b) = (
        eval_features(&mine).unwrap(),
        eval_features(&theirs).unwrap(),
    );
    assert!(tuned_eval(&a) > tuned_eval(&b), "{a:?} vs {b:?}");
}
