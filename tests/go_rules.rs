//! Go and Killall-Go rules: hand-made positions, and randomized agreement (with undo) against
//! a naive flood-fill reference implementation for every ko rule and many board sizes.

use std::collections::HashSet;

use pcn::game::go::{benson, Board, Go, KoRule};
use pcn::game::killallgo::{KillallGo, Variant};
use pcn::game::{Color, Game, Move, MoveError, Outcome};
use pcn::util::Rng;

/// Naive reference: a plain grid, groups found by flood fill on demand.
#[derive(Clone)]
struct Reference {
    w: usize,
    h: usize,
    ko: KoRule,
    grid: Vec<u8>,
    to_move: Color,
    /// Grids (with side to move after the move) after every board move, plus the start.
    seen: Vec<(Vec<u8>, Color)>,
    /// Grid before the last move, if that move was a board move.
    before_last: Option<Vec<u8>>,
    passes: usize,
}

impl Reference {
    fn new(w: usize, h: usize, ko: KoRule) -> Self {
        let grid = vec![0; w * h];
        Reference {
            w,
            h,
            ko,
            seen: vec![(grid.clone(), Color::Black)],
            grid,
            to_move: Color::Black,
            before_last: None,
            passes: 0,
        }
    }
    fn nbrs(&self, p: usize) -> Vec<usize> {
        let (x, y) = (p % self.w, p / self.w);
        let mut v = Vec::new();
        if x > 0 {
            v.push(p - 1);
        }
        if x + 1 < self.w {
            v.push(p + 1);
        }
        if y > 0 {
            v.push(p - self.w);
        }
        if y + 1 < self.h {
            v.push(p + self.w);
        }
        v
    }
    fn group(&self, g: &[u8], p: usize) -> (Vec<usize>, bool) {
        let c = g[p];
        let mut seen = vec![p];
        let mut stack = vec![p];
        let mut libs = false;
        while let Some(q) = stack.pop() {
            for r in self.nbrs(q) {
                if g[r] == 0 {
                    libs = true;
                } else if g[r] == c && !seen.contains(&r) {
                    seen.push(r);
                    stack.push(r);
                }
            }
        }
        (seen, libs)
    }
    /// The grid after `c` plays `p`, or None if illegal (occupied, suicide, ko).
    fn result(&self, p: usize, c: Color) -> Option<Vec<u8>> {
        if self.grid[p] != 0 {
            return None;
        }
        let mut g = self.grid.clone();
        let own = c.index() as u8 + 1;
        g[p] = own;
        for q in self.nbrs(p) {
            if g[q] != 0 && g[q] != own {
                let (stones, libs) = self.group(&g, q);
                if !libs {
                    for s in stones {
                        g[s] = 0;
                    }
                }
            }
        }
        if !self.group(&g, p).1 {
            return None;
        }
        let repeat = match self.ko {
            KoRule::Simple => self.before_last.as_ref() == Some(&g),
            KoRule::Positional => self.seen.iter().any(|(s, _)| *s == g),
            KoRule::Situational => self.seen.iter().any(|(s, t)| *s == g && *t == c.opp()),
        };
        (!repeat).then_some(g)
    }
    fn legal(&self) -> Vec<Move> {
        let mut v: Vec<Move> = (0..self.w * self.h)
            .filter(|&p| self.result(p, self.to_move).is_some())
            .map(|p| p as Move)
            .collect();
        v.push((self.w * self.h) as Move);
        v
    }
    fn play(&mut self, m: Move) {
        let m = m as usize;
        if m == self.w * self.h {
            self.before_last = None;
            self.passes += 1;
        } else {
            let g = self.result(m, self.to_move).expect("reference: legal");
            self.before_last = Some(std::mem::replace(&mut self.grid, g));
            self.seen.push((self.grid.clone(), self.to_move.opp()));
            self.passes = 0;
        }
        self.to_move = self.to_move.opp();
    }
}

fn grid_of(g: &Go) -> Vec<u8> {
    (0..g.width() * g.height())
        .map(|m| match g.board().stone(m as Move) {
            None => 0,
            Some(c) => c.index() as u8 + 1,
        })
        .collect()
}

/// Random games on many sizes under all three ko rules, compared ply by ply with the
/// reference (legal sets and stones), with random undo runs that must restore everything.
#[test]
fn random_games_agree_with_reference() {
    let mut rng = Rng::new(7);
    let mut legal = Vec::new();
    let mut compared = 0usize;
    for &(w, h, games) in &[
        (2, 2, 40),
        (3, 3, 40),
        (4, 3, 30),
        (4, 4, 30),
        (5, 5, 20),
        (7, 7, 8),
        (9, 9, 5),
        (19, 19, 1),
        (25, 25, 1),
    ] {
        for ko in [KoRule::Simple, KoRule::Positional, KoRule::Situational] {
            for _ in 0..games {
                let mut g = Go::new(w, h, ko).expect("size");
                let mut r = Reference::new(w, h, ko);
                // Snapshots to check undo: (go clone state as hash+grid, reference).
                let mut stack: Vec<(u64, Vec<u8>, Reference)> = Vec::new();
                let max = 3 * w * h;
                for _ in 0..max {
                    if g.outcome().is_some() {
                        break;
                    }
                    g.legal_moves(&mut legal);
                    let want = r.legal();
                    assert_eq!(legal, want, "{w}x{h} {ko:?} ply {}\n{:?}", g.ply(), r.grid);
                    assert_eq!(grid_of(&g), r.grid);
                    assert!(g.board().validate().is_ok(), "{:?}", g.board().validate());
                    compared += 1;
                    // Mostly board moves; pass 4%.
                    let m = if legal.len() == 1 || rng.below(25) == 0 {
                        *legal.last().expect("pass")
                    } else {
                        legal[rng.below(legal.len() - 1)]
                    };
                    stack.push((g.hash(), grid_of(&g), r.clone()));
                    g.play(m).expect("legal");
                    r.play(m);
                    // Occasionally take back a few moves.
                    if rng.below(10) == 0 {
                        for _ in 0..rng.below(4).min(stack.len()) {
                            let (hash, grid, rr) = stack.pop().expect("non-empty");
                            g.undo();
                            assert_eq!(g.hash(), hash);
                            assert_eq!(grid_of(&g), grid);
                            r = rr;
                        }
                    }
                }
            }
        }
    }
    eprintln!("go reference agreement: {compared} positions");
    assert!(compared > 10_000);
}

fn go_from(size: usize, ko: KoRule, moves: &[&str]) -> Go {
    let mut g = Go::new(size, size, ko).expect("size");
    for s in moves {
        let m = g.parse_gtp(s).expect("vertex");
        g.play(m).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    g
}

#[test]
fn capture_suicide_and_simple_ko() {
    // Black captures a white corner stone.
    let g = go_from(5, KoRule::Simple, &["A2", "A1", "B1"]);
    assert_eq!(g.board().stone(0), None, "A1 captured");
    let diagram = g.board().to_string();
    let rows: Vec<&str> = diagram.lines().collect();
    assert_eq!(rows[0], "    A B C D E");
    assert_eq!(rows[4], " 2  X . . . .  2");
    assert_eq!(rows[5], " 1  . X . . .  1");
    assert_eq!(g.board().last_captures(), 1);
    // White may not play the suicide A1 (no liberties, captures nothing).
    assert_eq!(
        g.check_move(g.parse_gtp("A1").unwrap()),
        Err(MoveError::Illegal("suicide"))
    );
    // Multi-stone suicide is illegal too, but filling the last liberty while capturing is not.
    let g = go_from(4, KoRule::Simple, &["B1", "A1", "B2", "pass", "A3"]);
    // White A2 would join A1 into a two-stone chain without liberties.
    assert_eq!(
        g.check_move(g.parse_gtp("A2").unwrap()),
        Err(MoveError::Illegal("suicide"))
    );
    // A ko: white C3 is captured by black D3; the immediate retake is illegal.
    let mut g = go_from(
        5,
        KoRule::Simple,
        &["B3", "D2", "C2", "D4", "C4", "E3", "pass", "C3", "D3"],
    );
    assert_eq!(g.board().last_captures(), 1, "D3 captures C3");
    let c3 = g.parse_gtp("C3").unwrap();
    assert_eq!(g.check_move(c3), Err(MoveError::Illegal("ko")));
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    assert!(!legal.contains(&c3));
    g.play(g.parse_gtp("A5").unwrap()).unwrap();
    g.play(g.parse_gtp("E5").unwrap()).unwrap();
    g.play(c3)
        .expect("ko threat answered elsewhere: the retake is legal now");
    assert_eq!(g.board().last_captures(), 1);
    // Superko rules forbid the retake as well, and undo restores the position exactly.
    let mut g = go_from(
        5,
        KoRule::Situational,
        &["B3", "D2", "C2", "D4", "C4", "E3", "pass", "C3", "D3"],
    );
    assert_eq!(g.check_move(c3), Err(MoveError::Illegal("superko")));
    let h = g.hash();
    g.play(g.parse_gtp("A5").unwrap()).unwrap();
    g.undo();
    assert_eq!(g.hash(), h);
    assert!(g.board().validate().is_ok());
}

#[test]
fn two_passes_end_with_area_score() {
    let mut g = go_from(3, KoRule::Simple, &["B2", "pass", "pass"]);
    assert_eq!(
        g.outcome(),
        Some(Outcome::Win(Color::Black)),
        "9 points vs komi 7.5"
    );
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    assert!(legal.is_empty());
    g.set_komi(9.5);
    assert_eq!(g.outcome(), Some(Outcome::Win(Color::White)));
}

/// Positional and situational superko must actually differ somewhere in random small-board
/// games (otherwise the reference comparison above would not distinguish them).
#[test]
fn positional_and_situational_superko_differ() {
    let mut rng = Rng::new(99);
    let (mut diffs, mut a, mut b) = (0, Vec::new(), Vec::new());
    for _ in 0..300 {
        let mut p = Go::new(3, 3, KoRule::Positional).unwrap();
        let mut s = Go::new(3, 3, KoRule::Situational).unwrap();
        for _ in 0..40 {
            p.legal_moves(&mut a);
            s.legal_moves(&mut b);
            if a != b {
                diffs += 1;
                // Positional is the stricter rule.
                assert!(a.iter().all(|m| b.contains(m)));
            }
            let common: Vec<Move> = a.iter().copied().filter(|m| b.contains(m)).collect();
            if common.is_empty() || p.outcome().is_some() {
                break;
            }
            let m = common[rng.below(common.len())];
            p.play(m).unwrap();
            s.play(m).unwrap();
        }
    }
    eprintln!("positions where positional and situational superko differ: {diffs}");
    assert!(diffs > 0);
}

#[test]
fn benson_two_eyes_alive_one_eye_not() {
    // White wall on row 2 of a 5x5 board with two separate eyes at A1 and C1 (E1 filled).
    let mut b = Board::new(5, 5).unwrap();
    let w = |x: usize, y: usize, b: &mut Board| {
        let c = b.cell(x, y);
        b.play(c, Color::White);
    };
    for x in 0..5 {
        w(x, 1, &mut b);
    }
    w(1, 0, &mut b);
    w(3, 0, &mut b);
    w(4, 0, &mut b);
    // Regions: A1 (1 point), C1 (1 point), rows 3..5 (15 points: touches the wall block, but
    // its empty points are not all adjacent to it). Two healthy regions -> alive.
    assert_eq!(benson::alive_blocks(&b, Color::White).len(), 1);
    assert!(!benson::any_alive(&b, Color::Black));
    // Fill C1 with a white stone: only one eye remains.
    w(2, 0, &mut b);
    assert!(!benson::any_alive(&b, Color::White));
}

fn kg_play(g: &mut KillallGo, s: &str) {
    let m = g.parse_gtp(s).expect("vertex");
    g.play(m).unwrap_or_else(|e| panic!("{s}: {e}"));
}

#[test]
fn killallgo_opening_and_encoder() {
    let mut g = KillallGo::new(Variant::Pcn9);
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    assert_eq!(legal, vec![g.parse_gtp("C7").unwrap()], "forced C7");
    assert!(g.play(g.parse_gtp("D7").unwrap()).is_err());
    for s in ["C7", "pass", "G7", "pass", "C3", "pass", "G3"] {
        kg_play(&mut g, s);
    }
    assert_eq!(g.to_move(), Color::White);
    g.legal_moves(&mut legal);
    assert_eq!(legal.len(), 78, "77 empty points + pass");
    // README §4 example at t = 7.
    let n = 81;
    let mut planes = vec![0f32; 18 * n];
    g.encode_input(&mut planes);
    let set = |names: &[&str]| -> Vec<f32> {
        let mut v = vec![0f32; n];
        for s in names {
            v[g.parse_gtp(s).unwrap() as usize] = 1.0;
        }
        v
    };
    let plane = |k: usize| planes[k * n..(k + 1) * n].to_vec();
    assert_eq!(plane(0), set(&["C3", "G3", "C7", "G7"]));
    assert_eq!(plane(2), set(&["C3", "C7", "G7"]));
    assert_eq!(plane(4), set(&["C3", "C7", "G7"]));
    assert_eq!(plane(6), set(&["C7", "G7"]));
    assert_eq!(plane(8), set(&["C7", "G7"]));
    assert_eq!(plane(10), set(&["C7"]));
    assert_eq!(plane(12), set(&["C7"]));
    assert_eq!(plane(14), set(&[]));
    for k in 0..8 {
        assert_eq!(plane(2 * k + 1), set(&[]));
    }
    assert_eq!(plane(16), vec![0.0; n]);
    assert_eq!(plane(17), vec![1.0; n]);
    // The same position through the setup path: Black's stones without White's passes.
    let mut h = KillallGo::new(Variant::Pcn9);
    for s in ["C7", "G7", "C3", "G3"] {
        h.place(h.parse_gtp(s).unwrap(), Color::Black).unwrap();
    }
    assert_eq!(h.ply(), 7);
    assert_eq!(h.hash(), g.hash());
    assert!(h.place(h.parse_gtp("E5").unwrap(), Color::Black).is_err());
}

#[test]
fn killallgo_own_eye_ban_and_benson_win() {
    let mut g = KillallGo::after_opening(Variant::Pcn9);
    // White builds a bottom-right corner shape; Black passes throughout.
    // Eye at J1: H1, J2 white, H2 white -> J1 is a true corner eye, illegal to fill for White.
    for s in ["H1", "pass", "J2", "pass", "H2"] {
        kg_play(&mut g, s);
    }
    kg_play(&mut g, "pass");
    let j1 = g.parse_gtp("J1").unwrap();
    assert_eq!(
        g.check_move(j1),
        Err(MoveError::Illegal("filling an own true eye"))
    );
    assert_eq!(g.outcome(), None);
    // A second eye at J3 (J4, H3 white; H4 diagonal white): two eyes -> unconditionally alive.
    for s in ["J4", "pass", "H4", "pass"] {
        kg_play(&mut g, s);
    }
    assert_eq!(g.outcome(), None);
    kg_play(&mut g, "H3");
    assert_eq!(g.outcome(), Some(Outcome::Win(Color::White)));
    assert!(g.check_move(g.pass_move()).is_err(), "game over");
}

#[test]
fn killallgo_double_pass_verdicts() {
    // 9x9: White passes at once; Black still has moves when both pass -> White wins.
    let mut g = KillallGo::after_opening(Variant::Pcn9);
    kg_play(&mut g, "pass");
    kg_play(&mut g, "pass");
    assert_eq!(g.outcome(), Some(Outcome::Win(Color::White)));
    // 9x9: White always passes and Black fills the board until no board move is left, then
    // both pass: no White stone and no Black move -> Black wins.
    let mut g = KillallGo::after_opening(Variant::Pcn9);
    let mut legal = Vec::new();
    loop {
        kg_play(&mut g, "pass");
        g.legal_moves(&mut legal);
        assert!(g.outcome().is_none());
        if legal.len() == 1 {
            break;
        }
        let m = legal[0];
        g.play(m).unwrap();
    }
    assert!(!g.black_has_board_move());
    kg_play(&mut g, "pass");
    assert_eq!(g.outcome(), Some(Outcome::Win(Color::Black)));
    // 7x7: two free Black stones with White's forced pass between; then White must play.
    let mut g = KillallGo::new(Variant::Seven);
    assert!(
        g.check_move(g.pass_move()).is_err(),
        "Black may not pass in the opening"
    );
    kg_play(&mut g, "C3");
    g.legal_moves(&mut legal);
    assert_eq!(legal, vec![g.pass_move()]);
    kg_play(&mut g, "pass");
    kg_play(&mut g, "E5");
    assert_eq!(g.to_move(), Color::White);
    kg_play(&mut g, "D4");
    kg_play(&mut g, "pass");
    kg_play(&mut g, "pass");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Win(Color::White)),
        "a White stone remains"
    );
    g.undo();
    g.undo();
    g.undo();
    kg_play(&mut g, "pass");
    kg_play(&mut g, "pass");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Win(Color::Black)),
        "no White stone"
    );
    // Setup path for 7x7: two Black stones back to back.
    let mut h = KillallGo::new(Variant::Seven);
    h.place(h.parse_gtp("C3").unwrap(), Color::Black).unwrap();
    h.place(h.parse_gtp("E5").unwrap(), Color::Black).unwrap();
    assert_eq!(h.ply(), 3);
    assert_eq!(h.to_move(), Color::White);
}

/// Random Killall-Go games with undo: hashes, chains and legal sets restored exactly.
#[test]
fn killallgo_random_play_undo() {
    let mut rng = Rng::new(3);
    let mut legal = Vec::new();
    let mut seen_outcomes = HashSet::new();
    for variant in [Variant::Pcn9, Variant::Seven] {
        for _ in 0..30 {
            let mut g = KillallGo::new(variant);
            let mut trail = Vec::new();
            while g.outcome().is_none() && g.ply() < 400 {
                g.legal_moves(&mut legal);
                trail.push((g.hash(), legal.clone()));
                let m = legal[rng.below(legal.len())];
                g.play(m).unwrap();
            }
            seen_outcomes.insert(format!("{:?}", g.outcome()));
            while let Some((h, l)) = trail.pop() {
                g.undo();
                assert_eq!(g.hash(), h);
                g.legal_moves(&mut legal);
                assert_eq!(legal, l);
            }
            assert!(g.board().validate().is_ok());
        }
    }
    assert!(!seen_outcomes.is_empty());
}

#[test]
fn playout_speed_reports_moves() {
    let (moves, secs) = pcn::game::go::playout_speed(9, KoRule::Simple, 0.05, 1);
    assert!(moves > 0 && secs >= 0.05);
    // Playouts terminate: every game is at most 3 * 81 moves, and ends by two passes.
    let mut g = Go::new(9, 9, KoRule::Situational).unwrap();
    let mut rng = Rng::new(5);
    for _ in 0..50 {
        let n = g.random_playout(&mut rng, 10_000);
        assert!(n < 10_000, "playout did not end");
        assert!(g.outcome().is_some());
        assert!(g.board().validate().is_ok());
        while g.undo().is_some() {}
        assert_eq!(
            g.board().stone_count(Color::Black) + g.board().stone_count(Color::White),
            0
        );
    }
}

/// The bitboard Benson (boards of at most 128 points) equals the generic flood-fill one on
/// random positions, including many with living groups.
#[test]
fn benson_bitboard_matches_generic() {
    let mut rng = Rng::new(17);
    let (mut alive_cases, mut total) = (0, 0);
    for &(w, h) in &[(9usize, 9usize), (7, 7), (5, 5), (11, 11), (16, 8), (3, 2)] {
        for _ in 0..400 {
            let mut b = Board::new(w, h).unwrap();
            let white_share = 30 + rng.below(60);
            let fill = 40 + rng.below(55);
            for _ in 0..w * h * fill / 100 {
                let x = rng.below(w);
                let y = rng.below(h);
                let c = b.cell(x, y);
                let color = if rng.below(100) < white_share {
                    Color::White
                } else {
                    Color::Black
                };
                if b.can_play(c, color) {
                    b.play(c, color);
                }
            }
            for color in [Color::White, Color::Black] {
                let mut generic = 0u128;
                for r in benson::alive_blocks(&b, color) {
                    for s in b.chain_stones(r) {
                        generic |= 1u128 << b.move_of(s);
                    }
                }
                let fast = benson::alive_mask_small(&b, color).expect("small board");
                assert_eq!(fast, generic, "{w}x{h} {color:?}\n{b}");
                assert_eq!(benson::any_alive(&b, color), generic != 0);
                alive_cases += (generic != 0) as usize;
                total += 1;
            }
        }
    }
    eprintln!("benson: {alive_cases} of {total} random positions have living blocks");
    assert!(alive_cases > 100 && alive_cases < total);
}

#[test]
fn killallgo_tt_key_separates_double_pass() {
    let a = KillallGo::after_opening(Variant::Pcn9);
    let mut b = a.clone();
    kg_play(&mut b, "pass");
    kg_play(&mut b, "pass");
    assert_eq!(a.hash(), b.hash(), "same stones, same side to move");
    assert_ne!(a.tt_key(), b.tt_key(), "but the second game is over");
    // Same position reached twice gives the same key.
    let mut c = a.clone();
    kg_play(&mut c, "E5");
    c.undo();
    assert_eq!(c.tt_key(), a.tt_key());
}
