//! The configured solver in the GTP front end, on a live engine process: genmove under a
//! clock stays in time with a solver; a proven position's genmove plays a move that still
//! wins (checked by an independent solve); live analysis shows the proven move as certain.
//! The deterministic transcript is protocol_tests/gtp/solver_genmove.in.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game};
use pcn::search::solver::{solver_by_name, SolveResult, SolverOptions};
use pcn::search::Limits;

mod common;

use common::Live;

/// Black to move on 9x9 freestyle with C3 D3 and D5 E5 against four scattered White stones:
/// a forced win for Black (a double three at D4 / open fours).
const WON: &[(&str, &str)] = &[
    ("B", "C3"),
    ("W", "J9"),
    ("B", "D3"),
    ("W", "J7"),
    ("B", "E5"),
    ("W", "A9"),
    ("B", "D5"),
    ("W", "J1"),
];

fn setup(e: &mut Live) -> Gomoku {
    let mut g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
    for (c, v) in WON {
        e.send(&format!("play {c} {v}\n"));
        assert_eq!(e.response(), vec!["="]);
        g.play(g.parse_gtp(v).unwrap()).unwrap();
    }
    g
}

fn black_still_wins_after(g: &Gomoku, v: &str) -> bool {
    let mut after = g.clone();
    after.play(after.parse_gtp(v).unwrap()).unwrap();
    let opts = SolverOptions::with_memory(16 << 20);
    let mut s = solver_by_name::<Gomoku>("dfpn", &opts).unwrap();
    let stop = AtomicBool::new(false);
    let o = s.solve(
        &after,
        Color::Black,
        &Limits::nodes(200_000),
        &stop,
        &mut |_| {},
    );
    o.result == SolveResult::Win
}

#[test]
fn proven_genmove_plays_a_winning_move() {
    for solver in ["dfpn", "fdfpn", "mcts"] {
        let mut e = Live::start(&[
            "gtp",
            "--game",
            "gomoku",
            "--size",
            "9",
            "--move-time",
            "1",
            "--solver",
            solver,
        ]);
        let g = setup(&mut e);
        let t0 = Instant::now();
        e.send("genmove b\n");
        let r = e.response();
        let el = t0.elapsed();
        let v = r[0].strip_prefix("= ").expect("a move");
        assert!(
            black_still_wins_after(&g, v),
            "{solver}: {v} gives the win away"
        );
        // A proof is answered at once, not after the whole move time.
        assert!(el < Duration::from_millis(900), "{solver}: took {el:?}");
    }
}

#[test]
fn genmove_with_a_solver_answers_in_time() {
    for solver in ["dfpn", "mcts"] {
        let mut e = Live::start(&["gtp", "--game", "killallgo", "--solver", solver]);
        e.send("play B C7\nplay B G7\nplay B C3\nplay B G3\n");
        for _ in 0..4 {
            assert_eq!(e.response(), vec!["="]);
        }
        // Byo-yomi: 2 seconds per move (hard deadline 1.88 s), for moves of both colours.
        e.send("time_settings 0 2 1\n");
        assert_eq!(e.response(), vec!["="]);
        for color in ["w", "b"] {
            let t0 = Instant::now();
            e.send(&format!("genmove {color}\n"));
            let r = e.response();
            let el = t0.elapsed();
            assert!(r[0].starts_with("= "), "{r:?}");
            assert!(el < Duration::from_millis(2000), "{solver} {color}: {el:?}");
            assert!(
                el > Duration::from_millis(600),
                "{solver}: searched only {el:?}"
            );
        }
    }
}

#[test]
fn analysis_shows_the_proven_move_as_certain() {
    for (cmd, certain) in [
        ("lz-analyze B 10", "10000"),
        ("kata-analyze B 10", "1.000000"),
    ] {
        let mut e = Live::start(&["gtp", "--game", "gomoku", "--size", "9"]);
        let g = setup(&mut e);
        e.send(&format!("{cmd}\n"));
        assert_eq!(e.line(), "=");
        std::thread::sleep(Duration::from_millis(600));
        e.send("protocol_version\n");
        let body = e.response();
        let last = body.last().unwrap_or_else(|| panic!("{cmd}: no info line"));
        let t: Vec<&str> = last.split_whitespace().collect();
        // One candidate only: the proven move, certain, its PV starting with it.
        assert_eq!(last.matches("info ").count(), 1, "{last}");
        assert_eq!(t[5], "winrate");
        assert_eq!(t[6], certain, "{last}");
        let pv = t.iter().position(|&x| x == "pv").unwrap();
        assert_eq!(t[pv + 1], t[2], "{last}");
        assert!(black_still_wins_after(&g, t[2]), "{last}");
        assert_eq!(e.response(), vec!["= 2"]);
    }
}
