//! VCF/VCT tests: hand-built positions with the reasoning in comments, replay checks of every
//! returned line, and agreement with naive brute-force searches written on a plain 2D grid.

use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game, Move, Outcome};
use pcn::search::gomoku::threat::{self, ThreatSolver};
use pcn::search::{Budget, Limits};
use pcn::util::Rng;

/// A position from rows (top row first) of `X` (Black), `O` (White) and `.`, with `to_move`
/// to play. Pictures shorter than five rows get empty rows added at the bottom.
fn board(rule: Rule, rows: &[&str], to_move: Color) -> Gomoku {
    let blank = ".".repeat(rows[0].len());
    let mut rows: Vec<&str> = rows.to_vec();
    while rows.len() < 5 {
        rows.push(&blank);
    }
    let h = rows.len();
    let w = rows[0].len();
    let mut g = Gomoku::new(w, h, rule).expect("size");
    for (r, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), w, "ragged picture");
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

/// Replays `line` with full legality checks; it must end with a win for the side to move.
fn replay_wins(g: &Gomoku, line: &[Move]) {
    let mut h = g.clone();
    let me = h.to_move();
    for (i, &m) in line.iter().enumerate() {
        assert!(
            h.outcome().is_none(),
            "game over before the end of the line"
        );
        if let Err(e) = h.play(m) {
            panic!(
                "illegal move {} (#{i}) in line: {e:?}\n{g:?}",
                h.move_to_gtp(m)
            );
        }
    }
    assert_eq!(
        h.outcome(),
        Some(Outcome::Win(me)),
        "line does not end with a win\n{g:?}"
    );
}

fn solve(g: &mut Gomoku, vct: bool, depth: u32) -> Option<Vec<Move>> {
    let stop = AtomicBool::new(false);
    let mut b = Budget::new(&Limits::nodes(3_000_000), &stop);
    let before = g.hash();
    let r = if vct {
        threat::vct(g, &mut b, depth)
    } else {
        threat::vcf(g, &mut b, depth)
    };
    assert_eq!(g.hash(), before, "search must leave the game unchanged");
    if let Some(l) = &r {
        replay_wins(g, l);
    }
    r
}

// ---------------------------------------------------------------------------------------
// Naive reference: plain grid, rules from their text, exhaustive replies.

struct Grid {
    w: i32,
    h: i32,
    c: Vec<u8>,
    exact: bool,
    caro: bool,
}

const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

impl Grid {
    fn from(g: &Gomoku) -> Grid {
        let (w, h) = (g.width(), g.height());
        let c = (0..w * h)
            .map(|m| match g.stone(m as Move) {
                Some(Color::Black) => 1,
                Some(Color::White) => 2,
                None => 0,
            })
            .collect();
        let (exact, caro) = match g.rule() {
            Rule::Freestyle => (false, false),
            Rule::Exact => (true, false),
            Rule::Caro => (false, true),
            Rule::CaroExact => (true, true),
            r => panic!("naive grid does not model {r:?}"),
        };
        Grid {
            w: w as i32,
            h: h as i32,
            c,
            exact,
            caro,
        }
    }
    fn get(&self, x: i32, y: i32) -> Option<u8> {
        (x >= 0 && y >= 0 && x < self.w && y < self.h).then(|| self.c[(y * self.w + x) as usize])
    }
    /// Whether colour `v` (1 or 2) playing the empty point `i` makes a winning line.
    fn five(&self, i: usize, v: u8) -> bool {
        let (x, y) = (i as i32 % self.w, i as i32 / self.w);
        DIRS.iter().any(|&(dx, dy)| {
            let mut n = 1;
            let mut ends = [None; 2];
            for (e, s) in [1, -1].into_iter().enumerate() {
                let mut k = 1;
                while self.get(x + s * k * dx, y + s * k * dy) == Some(v) {
                    n += 1;
                    k += 1;
                }
                ends[e] = self.get(x + s * k * dx, y + s * k * dy);
            }
            let long_ok = if self.exact { n == 5 } else { n >= 5 };
            let opp = Some(3 - v);
            long_ok && !(self.caro && ends[0] == opp && ends[1] == opp)
        })
    }
    fn empties(&self) -> Vec<usize> {
        (0..self.c.len()).filter(|&i| self.c[i] == 0).collect()
    }
    fn fives(&self, v: u8) -> Vec<usize> {
        self.empties()
            .into_iter()
            .filter(|&i| self.five(i, v))
            .collect()
    }
    /// Victory by continuous fours for `a` to move, using at most `depth` fours before the
    /// final five. Every defender reply is examined: a reply that makes the defender's five
    /// refutes; a reply that leaves the attacker a five is no defence; the others must all be
    /// refuted again.
    fn vcf(&mut self, a: u8, depth: u32) -> bool {
        if !self.fives(a).is_empty() {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let d = 3 - a;
        for c in self.empties() {
            self.c[c] = a;
            let f = self.fives(a);
            let mut ok = !f.is_empty();
            if ok {
                for r in self.empties() {
                    if self.five(r, d) {
                        ok = false;
                        break;
                    }
                    self.c[r] = d;
                    let still = f.iter().any(|&q| q != r && self.five(q, a));
                    let refuted = still || self.vcf(a, depth - 1);
                    self.c[r] = 0;
                    if !refuted {
                        ok = false;
                        break;
                    }
                }
            }
            self.c[c] = 0;
            if ok {
                return true;
            }
        }
        false
    }
    /// With `a` to move: does `a` win within two of its moves (a five now, or a move after
    /// which every reply still leaves a five)?
    fn win_in_two(&mut self, a: u8) -> bool {
        self.vcf(a, 1)
    }
    /// Checks a claimed depth-1 threat win: `a` plays `first`; against every defender reply
    /// (all empty points), `a` must still win within two moves.
    fn verify_threat(&mut self, a: u8, first: usize) -> bool {
        let d = 3 - a;
        if self.five(first, a) {
            return true;
        }
        self.c[first] = a;
        let mut ok = true;
        for r in self.empties() {
            if self.five(r, d) {
                ok = false;
                break;
            }
            self.c[r] = d;
            let w = self.win_in_two(a);
            self.c[r] = 0;
            if !w {
                ok = false;
                break;
            }
        }
        self.c[first] = 0;
        ok
    }
}

fn color_val(c: Color) -> u8 {
    match c {
        Color::Black => 1,
        Color::White => 2,
    }
}

/// Engine VCF at `depth` against the naive VCF: naive(depth) implies a found win, and a found
/// win implies naive(depth + 1) (the engine's last step may be an open four or a four-four,
/// which the naive search spends one more four on).
fn cross_check_vcf(g: &mut Gomoku, depth: u32) -> bool {
    let found = solve(g, false, depth).is_some();
    let mut grid = Grid::from(g);
    let a = color_val(g.to_move());
    if grid.vcf(a, depth) {
        assert!(
            found,
            "naive finds a VCF of depth {depth} that the engine misses\n{g:?}"
        );
    }
    if found {
        assert!(
            grid.vcf(a, depth + 1),
            "engine VCF not confirmed by naive search\n{g:?}"
        );
    }
    found
}

// ---------------------------------------------------------------------------------------
// Hand-built VCF positions.

struct Case {
    name: &'static str,
    rule: Rule,
    rows: &'static [&'static str],
    to_move: Color,
    depth: u32,
    win: bool,
}

fn run_cases(cases: &[Case], vct: bool) {
    for c in cases {
        let mut g = board(c.rule, c.rows, c.to_move);
        let r = solve(&mut g, vct, c.depth);
        assert_eq!(
            r.is_some(),
            c.win,
            "{}: expected win = {}\n{g:?}",
            c.name,
            c.win
        );
        if matches!(
            c.rule,
            Rule::Freestyle | Rule::Exact | Rule::Caro | Rule::CaroExact
        ) {
            let mut grid = Grid::from(&g);
            let a = color_val(c.to_move);
            if !vct {
                let naive = grid.vcf(a, c.depth + 1);
                assert_eq!(naive, c.win, "{}: naive VCF disagrees", c.name);
            } else if let Some(l) = &r {
                if c.depth <= 1 {
                    // Grid indices are actions (y * width + x).
                    let first = l[0] as usize;
                    assert!(
                        grid.verify_threat(a, first),
                        "{}: naive refutes the VCT",
                        c.name
                    );
                }
            }
        }
    }
}

const VCF_CASES: &[Case] = &[
    // Four in a row with an open end: five at once.
    Case {
        name: "five now",
        rule: Rule::Freestyle,
        rows: &["..........", ".XXXX.....", "..........", "O.O.O....."],
        to_move: Color::Black,
        depth: 3,
        win: true,
    },
    // An open three becomes an open four: two completion points.
    Case {
        name: "open three",
        rule: Rule::Freestyle,
        rows: &["..........", "..XXX.....", "..........", "O.O.O....."],
        to_move: Color::Black,
        depth: 3,
        win: true,
    },
    // F3 (col 5, row 2) makes a horizontal four (cols 2-5) and a vertical four (rows 2-5).
    Case {
        name: "double four point",
        rule: Rule::Freestyle,
        rows: &[
            ".........",
            ".........",
            ".OXXX....",
            ".....X...",
            ".....X...",
            ".....X...",
            ".....O...",
            ".........",
            ".........",
        ],
        to_move: Color::Black,
        depth: 3,
        win: true,
    },
    // (4, row 4) is a four-three: horizontal OXXX+X four, vertical open three rows 2-4.
    // White must block col 5; the three then becomes an open four.
    Case {
        name: "four-three",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            "..........",
            "....X.....",
            "....X.....",
            "OXXX......",
            "..........",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 3,
        win: true,
    },
    // Same, but White's forced block at (5, row 4) completes O at rows 1-4 of col 5, a four
    // (row 5 is Black), so Black must answer at (5, row 0), which is no four: the
    // counter-four refutes. Black's other four (5, row 4) leaves nothing either.
    Case {
        name: "counter-four refutes",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            ".....O....",
            "....XO....",
            "....XO....",
            "OXXX......",
            ".....X....",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    // Two lone stones: nothing to make a four with.
    Case {
        name: "sparse",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            "...X......",
            "......X...",
            "..O.......",
            ".......O..",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    // A blocked three makes one four; after the block nothing is left.
    Case {
        name: "single blocked three",
        rule: Rule::Freestyle,
        rows: &[
            "OXXX......",
            "..........",
            "..........",
            ".......O..",
            "..O.......",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    // White has a four (col 8 rows 0-3, completion row 4). Black must block there, which is
    // no four, so Black's own blocked three is too slow.
    Case {
        name: "must block without a four",
        rule: Rule::Freestyle,
        rows: &[
            "........O.",
            "........O.",
            ".OXXX...O.",
            "........O.",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    // White's four on the anti-diagonal completes at Black's double-four point: blocking it
    // wins for Black.
    Case {
        name: "block with a double four",
        rule: Rule::Freestyle,
        rows: &[
            ".......O.",
            "......O..",
            ".OXXX....",
            "....OX...",
            "...O.X...",
            ".....X...",
            ".....O...",
            ".........",
            ".........",
        ],
        to_move: Color::Black,
        depth: 3,
        win: true,
    },
    // White has an open four: Black has only fours, no five, and loses.
    Case {
        name: "opponent open four",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            ".OOOO.....",
            "..........",
            "...XXX....",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    // ...unless Black has a five first.
    Case {
        name: "five beats open four",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            ".OOOO.....",
            "..........",
            "...XXXX...",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    // Exact five: filling the gap of XXX.XX makes six, which does not win.
    Case {
        name: "exact: overline is no five",
        rule: Rule::Exact,
        rows: &[
            "..........",
            "XXX.XX....",
            "..........",
            "O..O..O...",
            "..........",
        ],
        to_move: Color::Black,
        depth: 4,
        win: false,
    },
    Case {
        name: "freestyle: overline wins",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            "XXX.XX....",
            "..........",
            "O..O..O...",
            "..........",
        ],
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    // Caro: OXXXX.O - the five would be blocked at both ends.
    Case {
        name: "caro: dead four",
        rule: Rule::Caro,
        rows: &[
            "..........",
            "OXXXX.O...",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 4,
        win: false,
    },
    // Caro: OXXXX. with an empty far end: a valid five.
    Case {
        name: "caro: four blocked on one side",
        rule: Rule::Caro,
        rows: &[
            "..........",
            "OXXXX.....",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    // Caro: .O.XXX..O. - the open four at col 6 dies when White blocks either end (the
    // other five is then closed by two O), and the four at col 2 can be killed at col 7.
    Case {
        name: "caro: open four killed at the far end",
        rule: Rule::Caro,
        rows: &[
            "..........",
            ".O.XXX..O.",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 4,
        win: false,
    },
    Case {
        name: "freestyle: same open four wins",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            ".O.XXX..O.",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    // Renju: the double-four point is forbidden for Black, and the single fours lead nowhere.
    Case {
        name: "renju: black double four forbidden",
        rule: Rule::Renju,
        rows: &[
            ".........",
            ".........",
            ".OXXX....",
            ".....X...",
            ".....X...",
            ".....X...",
            ".....O...",
            ".........",
            ".........",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    // Colours swapped: White may make a double four.
    Case {
        name: "renju: white double four allowed",
        rule: Rule::Renju,
        rows: &[
            ".........",
            ".........",
            ".XOOO....",
            ".....O...",
            ".....O...",
            ".....O...",
            ".....X...",
            ".........",
            ".........",
        ],
        to_move: Color::White,
        depth: 3,
        win: true,
    },
    // White's four (3,4)+(5,2)(6,1)(7,0) completes at (4,3), Black's double-three point:
    // Black may not block there, so White wins.
    Case {
        name: "renju: black cannot block on a forbidden point",
        rule: Rule::Renju,
        rows: &[
            ".......O.",
            "....X.O..",
            "....XO...",
            "..XX.....",
            ".........",
            ".........",
            ".........",
            ".........",
            ".........",
        ],
        to_move: Color::White,
        depth: 3,
        win: true,
    },
    Case {
        name: "freestyle: same four is blocked",
        rule: Rule::Freestyle,
        rows: &[
            ".......O.",
            "....X.O..",
            "....XO...",
            "..XX.....",
            ".........",
            ".........",
            ".........",
            ".........",
            ".........",
        ],
        to_move: Color::White,
        depth: 6,
        win: false,
    },
    // Renju: White's overline wins.
    Case {
        name: "renju: white overline wins",
        rule: Rule::Renju,
        rows: &[
            "..........",
            "OOO.OO....",
            "..........",
            "X..X..X...",
            "..........",
        ],
        to_move: Color::White,
        depth: 1,
        win: true,
    },
    // Renju: Black's overline is no five (and is forbidden).
    Case {
        name: "renju: black overline is no win",
        rule: Rule::Renju,
        rows: &[
            "..........",
            "XXX.XX....",
            "..........",
            "O..O..O...",
            "..........",
        ],
        to_move: Color::Black,
        depth: 4,
        win: false,
    },
    // Renju: Black's four-three is allowed.
    Case {
        name: "renju: black four-three",
        rule: Rule::Renju,
        rows: &[
            "..........",
            "..........",
            "....X.....",
            "....X.....",
            "OXXX......",
            "..........",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 3,
        win: true,
    },
    // 4T: the open three's open four has two completion points and wins at once.
    Case {
        name: "4t: open four wins at once",
        rule: Rule::FourT,
        rows: &["..........", "..XXX.....", "..........", "O.O.O....."],
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    // 4T: the counter-four position. White's forced block makes a four, which forces
    // Black's reply in turn.
    Case {
        name: "4t: counter-four refutes",
        rule: Rule::FourT,
        rows: &[
            "..........",
            ".....O....",
            "....XO....",
            "....XO....",
            "OXXX......",
            ".....X....",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 6,
        win: false,
    },
    Case {
        name: "4t: four-three",
        rule: Rule::FourT,
        rows: &[
            "..........",
            "..........",
            "....X.....",
            "....X.....",
            "OXXX......",
            "..........",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 2,
        win: true,
    },
];

#[test]
fn vcf_positions() {
    run_cases(VCF_CASES, false);
}

#[test]
fn vcf_lines_have_expected_shape() {
    // Five now: one move. Open three: four, block, five. Four-three: five plies.
    let lens = [
        ("five now", 1),
        ("open three", 3),
        ("four-three", 5),
        ("4t: open four wins at once", 1),
    ];
    for (name, want) in lens {
        let c = VCF_CASES.iter().find(|c| c.name == name).expect("case");
        let mut g = board(c.rule, c.rows, c.to_move);
        let l = solve(&mut g, false, c.depth).expect("win");
        assert_eq!(l.len(), want, "{name}: line length");
    }
}

#[test]
fn vcf_depth_limit() {
    // The four-three needs one four before the open four: depth 0 is not enough.
    let c = VCF_CASES
        .iter()
        .find(|c| c.name == "four-three")
        .expect("case");
    let mut g = board(c.rule, c.rows, c.to_move);
    assert!(solve(&mut g, false, 0).is_none());
    assert!(solve(&mut g, false, 1).is_some());
}

// ---------------------------------------------------------------------------------------
// Hand-built VCT positions.

/// Black twos around (5,5): vertical (5,3)(5,4) and horizontal (3,5)(4,5), all ends open.
const DOUBLE_THREE: &[&str] = &[
    "............",
    "............",
    "............",
    ".....X......",
    ".....X......",
    "...XX.......",
    "............",
    "............",
    "............",
    "............",
    "............",
    "............",
];

const VCT_CASES: &[Case] = &[
    // (5,5) makes two open threes; White stops one, the other becomes an open four.
    Case {
        name: "double three",
        rule: Rule::Freestyle,
        rows: DOUBLE_THREE,
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    Case {
        name: "exact: double three",
        rule: Rule::Exact,
        rows: DOUBLE_THREE,
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    Case {
        name: "caro: double three",
        rule: Rule::Caro,
        rows: DOUBLE_THREE,
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    Case {
        name: "4t: double three",
        rule: Rule::FourT,
        rows: DOUBLE_THREE,
        to_move: Color::Black,
        depth: 1,
        win: true,
    },
    // Renju: (5,5) is a forbidden double three for Black; with one threat and then an open
    // four (depth 1) nothing else works: any single three is stopped at (5,5) or its ends.
    Case {
        name: "renju: black double three forbidden",
        rule: Rule::Renju,
        rows: DOUBLE_THREE,
        to_move: Color::Black,
        depth: 1,
        win: false,
    },
    // Same shape for White under renju: allowed.
    Case {
        name: "renju: white double three",
        rule: Rule::Renju,
        rows: &[
            "............",
            "............",
            "............",
            ".....O......",
            ".....O......",
            "...OO.......",
            "............",
            "............",
            "............",
            "............",
            "............",
            "............",
        ],
        to_move: Color::White,
        depth: 1,
        win: true,
    },
    // Counter-four: White's O at (6,6)(6,7)(6,8) with Black (6,9) below: after Black's
    // double three, White plays (6,5), a four that also blocks the horizontal three; Black
    // must answer at (6,4) and has no threat left within depth 1.
    Case {
        name: "counter-four refutes double three",
        rule: Rule::Freestyle,
        rows: &[
            "............",
            "............",
            "............",
            ".....X......",
            ".....X......",
            "...XX.......",
            "......O.....",
            "......O.....",
            "......O.....",
            "......X.....",
            "............",
            "............",
        ],
        to_move: Color::Black,
        depth: 1,
        win: false,
    },
    // One open two: a three is simply blocked.
    Case {
        name: "single two",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            "..........",
            "...XX.....",
            "..........",
            "..........",
            "......O...",
        ],
        to_move: Color::Black,
        depth: 3,
        win: false,
    },
    // The four-three is also a VCT.
    Case {
        name: "four-three",
        rule: Rule::Freestyle,
        rows: &[
            "..........",
            "..........",
            "....X.....",
            "....X.....",
            "OXXX......",
            "..........",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 2,
        win: true,
    },
    // Renju four-three for Black is legal.
    Case {
        name: "renju: black four-three",
        rule: Rule::Renju,
        rows: &[
            "..........",
            "..........",
            "....X.....",
            "....X.....",
            "OXXX......",
            "..........",
            "..........",
            "..........",
            "..........",
            "..........",
        ],
        to_move: Color::Black,
        depth: 2,
        win: true,
    },
    // Depth 0 only allows an immediate open four or four-four: the double three needs 1.
    Case {
        name: "double three at depth 0",
        rule: Rule::Freestyle,
        rows: DOUBLE_THREE,
        to_move: Color::Black,
        depth: 0,
        win: false,
    },
];

#[test]
fn vct_positions() {
    run_cases(VCT_CASES, true);
}

#[test]
fn vct_without_counter_four_stones_wins() {
    // The counter-four case minus White's stones and Black's (6,9) is the plain double three.
    let c = VCT_CASES
        .iter()
        .find(|c| c.name == "counter-four refutes double three")
        .expect("case");
    let rows: Vec<String> = c
        .rows
        .iter()
        .map(|r| r.replace('O', ".").replace("......X.....", "............"))
        .collect();
    let rows: Vec<&str> = rows.iter().map(|s| s.as_str()).collect();
    let mut g = board(c.rule, &rows, c.to_move);
    assert!(solve(&mut g, true, 1).is_some());
}

// ---------------------------------------------------------------------------------------
// Random positions against the naive searches.

fn random_position(rng: &mut Rng, rule: Rule, size: usize, stones: usize) -> Option<Gomoku> {
    let mut g = Gomoku::new(size, size, rule).expect("size");
    for i in 0..stones {
        let m = rng.below(size * size) as Move;
        if g.stone(m).is_some() {
            continue;
        }
        let c = if i % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        g.place(m, c).expect("place");
        if g.outcome().is_some() {
            return None;
        }
    }
    let side = if rng.below(2) == 0 {
        Color::Black
    } else {
        Color::White
    };
    g.set_to_move(side);
    Some(g)
}

#[test]
fn vcf_agrees_with_naive_on_random_positions() {
    let mut rng = Rng::new(0xFCF0_1234);
    let mut wins = 0;
    let mut total = 0;
    for rule in [Rule::Freestyle, Rule::Exact, Rule::Caro, Rule::CaroExact] {
        let mut n = 0;
        while n < 100 {
            let stones = 22 + rng.below(16);
            let Some(mut g) = random_position(&mut rng, rule, 9, stones) else {
                continue;
            };
            n += 1;
            total += 1;
            wins += cross_check_vcf(&mut g, 2) as usize;
        }
    }
    eprintln!("{total} random positions, {wins} with a VCF");
    assert!(wins > 20, "random positions should contain VCF wins");
    assert!(wins < total, "and positions without");
}

#[test]
fn vct_claims_survive_naive_full_width_replies() {
    let mut rng = Rng::new(0x0C7_5EED);
    let mut claims = 0;
    for rule in [Rule::Freestyle, Rule::Exact, Rule::Caro] {
        let mut n = 0;
        while n < 60 {
            let stones = 12 + rng.below(14);
            let Some(mut g) = random_position(&mut rng, rule, 9, stones) else {
                continue;
            };
            n += 1;
            let Some(line) = solve(&mut g, true, 1) else {
                continue;
            };
            claims += 1;
            let mut grid = Grid::from(&g);
            let a = color_val(g.to_move());
            assert!(
                grid.verify_threat(a, line[0] as usize),
                "naive refutes the VCT starting {}\n{g:?}",
                g.move_to_gtp(line[0])
            );
        }
    }
    eprintln!("{claims} VCT claims verified");
    assert!(claims > 10, "random positions should contain VCT wins");
}

#[test]
fn helpers() {
    // White has a four: Black must block its completion point.
    let g = board(
        Rule::Freestyle,
        &[
            "..........",
            ".OOOO.....",
            "..........",
            "...XX.....",
            "..........",
        ],
        Color::Black,
    );
    let blocks = threat::must_block(&g);
    assert_eq!(blocks.len(), 2, "open four has two five points");
    assert!(threat::immediate_win(&g).is_none());
    let g2 = board(
        Rule::Freestyle,
        &[
            "..........",
            ".OOOO.....",
            "..........",
            "...XXXX...",
            "..........",
        ],
        Color::Black,
    );
    let w = threat::immediate_win(&g2).expect("five");
    assert!(matches!(g2.move_to_gtp(w).as_str(), "C2" | "H2"));
    // White has an open three: the defences are exactly the moves that leave no open four.
    let mut g3 = board(
        Rule::Freestyle,
        &[
            "..........",
            "..........",
            "...OOO....",
            "..........",
            "......X...",
        ],
        Color::Black,
    );
    let d = threat::threat_defences(&mut g3).expect("open three is a threat");
    for s in ["C3", "G3"] {
        let m = g3.parse_gtp(s).expect("vertex");
        assert!(d.contains(&m), "{s} stops the open three");
    }
    // ..OOO.. with two free points on each side: only the adjacent ends stop it (a far
    // block still leaves the open four on the other side).
    assert_eq!(d.len(), 2, "defences");
    // Black has no fours here, so after every listed defence White has no winning point,
    // and after any other move White still has one.
    let mut legal = Vec::new();
    g3.legal_moves(&mut legal);
    for m in legal {
        let mut h = g3.clone();
        h.play(m).expect("legal");
        let cells: Vec<usize> = h.cell_range().filter(|&c| h.cell_value(c) == 0).collect();
        let white_threat = cells
            .into_iter()
            .any(|c| threat::is_winning_threat(&mut h, c, Color::White));
        assert_eq!(!white_threat, d.contains(&m), "{}", g3.move_to_gtp(m));
    }
    assert!(threat::threat_defences(&mut board(
        Rule::Freestyle,
        &[
            "..........",
            "..........",
            "...OO.....",
            "..........",
            ".........."
        ],
        Color::Black
    ))
    .is_none());
    let _ = ThreatSolver::default();
}

/// Speed on the shared Gomoku problem positions (release mode; run with `--ignored
/// --nocapture`). Skips when ../shared is absent.
#[test]
#[ignore]
fn speed_on_shared_problems() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/problems/gomoku");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP: {} is absent", dir.display());
        return;
    };
    let mut positions = Vec::new();
    for e in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).expect("size");
        let b = text.as_bytes();
        for i in 1..b.len().saturating_sub(4) {
            if (b[i] == b'B' || b[i] == b'W')
                && b[i + 1] == b'['
                && b[i + 4] == b']'
                && b[i - 1] == b';'
            {
                let x = (b[i + 2] - b'a') as usize;
                let y = 14 - (b[i + 3] - b'a') as usize;
                let c = if b[i] == b'B' {
                    Color::Black
                } else {
                    Color::White
                };
                g.place((y * 15 + x) as Move, c).expect("sgf move");
            }
        }
        positions.push(g);
    }
    eprint!(
        "{}",
        threat::speed_report_on("problems", &positions, 1_000_000)
    );
    eprint!("{}", threat::speed_report());
}

// ---------------------------------------------------------------------------------------
// Renju and 4T: a naive VCF that knows nothing but the game's own rules (legal moves,
// outcome, the 4T forced point), with every legal defender reply examined.

fn wins_now(g: &mut Gomoku) -> bool {
    let me = g.to_move();
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    legal.into_iter().any(|m| {
        g.play_unchecked(m);
        let w = g.outcome() == Some(Outcome::Win(me));
        g.undo();
        w
    })
}

/// After the attacker's move (defender to move): was it a four? Under 4T a four is a move
/// that forces the reply (a threat to win at once there is an open three, not a four);
/// otherwise, would the attacker win at once if it could move again?
fn forcing(g: &Gomoku, a: Color) -> bool {
    if g.rule() == Rule::FourT {
        return g.forced_point().is_some();
    }
    let mut h = g.clone();
    h.set_to_move(a);
    wins_now(&mut h)
}

fn naive_game_vcf(g: &mut Gomoku, depth: u32) -> bool {
    if wins_now(g) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let a = g.to_move();
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    for m in legal {
        g.play_unchecked(m);
        let mut ok = g.outcome().is_none() && forcing(g, a);
        if ok {
            let mut replies = Vec::new();
            g.legal_moves(&mut replies);
            for r in replies {
                g.play_unchecked(r);
                let lost = g.outcome() == Some(Outcome::Win(a.opp()));
                let good = !lost && naive_game_vcf(g, depth - 1);
                g.undo();
                if !good {
                    ok = false;
                    break;
                }
            }
        }
        g.undo();
        if ok {
            return true;
        }
    }
    false
}

#[test]
fn renju_and_4t_vcf_agree_with_naive_game_search() {
    let mut rng = Rng::new(0x4E11_0777);
    for rule in [Rule::Renju, Rule::FourT] {
        let mut wins = 0;
        let mut n = 0;
        while n < 150 {
            let stones = 18 + rng.below(14);
            let Some(mut g) = random_position(&mut rng, rule, 9, stones) else {
                continue;
            };
            // A setup position may have a pending 4T forced point; keep it (it is the rule).
            n += 1;
            let depth = if n % 5 == 0 { 2 } else { 1 };
            let found = solve(&mut g, false, depth).is_some();
            let mut h = g.clone();
            if naive_game_vcf(&mut h, depth) {
                assert!(
                    found,
                    "{rule:?}: naive finds a VCF the engine misses\n{g:?}"
                );
            }
            if found {
                assert!(
                    naive_game_vcf(&mut h, depth + 1),
                    "{rule:?}: engine VCF not confirmed\n{g:?}"
                );
                wins += 1;
            }
        }
        eprintln!("{rule:?}: {n} positions, {wins} VCF wins");
        assert!(wins > 5, "{rule:?}: random positions should contain wins");
    }
}

/// VCT on random positions under every rule: each returned line must replay legally to a win
/// (checked inside `solve`), and a VCF win must also be a VCT win.
#[test]
fn vct_lines_replay_under_every_rule() {
    let mut rng = Rng::new(0x7C7_2026);
    for rule in Rule::ALL {
        let mut wins = 0;
        let mut n = 0;
        while n < 40 {
            let stones = 14 + rng.below(20);
            let Some(mut g) = random_position(&mut rng, rule, 11, stones) else {
                continue;
            };
            n += 1;
            let vcf = solve(&mut g, false, 4).is_some();
            let vct = solve(&mut g, true, 3).is_some();
            if vcf {
                assert!(vct, "{rule:?}: VCF win but no VCT win\n{g:?}");
            }
            wins += vct as usize;
        }
        eprintln!("{rule:?}: {wins} VCT wins in 40 positions");
        assert!(
            wins > 0,
            "{rule:?}: random positions should contain VCT wins"
        );
    }
}
