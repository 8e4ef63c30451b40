//! Renju forbidden points: hand-built positions with reasoned answers, and agreement with a
//! naive checker written straight from the rule text on a plain 2D array.

use pcn::game::gomoku::{renju::MAX_DEPTH, Gomoku, Rule};
use pcn::game::{Color, Game, Move};
use pcn::util::Rng;

/// A position from rows (top row first) of `X`, `O`, `.` and one `*` (the point under test,
/// empty). Returns the board (Black to move) and the action of `*`.
/// Pictures shorter than the minimum board side get empty rows added at the bottom.
fn pos(rows: &[&str]) -> (Gomoku, Move) {
    let blank = ".".repeat(rows[0].len());
    let mut rows: Vec<&str> = rows.to_vec();
    while rows.len() < 5 {
        rows.push(&blank);
    }
    let h = rows.len();
    let w = rows[0].len();
    let mut g = Gomoku::new(w, h, Rule::Renju).expect("size");
    let mut star = None;
    for (r, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), w, "ragged picture");
        let y = h - 1 - r;
        for (x, ch) in row.chars().enumerate() {
            let m = (y * w + x) as Move;
            match ch {
                'X' => g.place(m, Color::Black).expect("place"),
                'O' => g.place(m, Color::White).expect("place"),
                '*' => star = Some(m),
                _ => {}
            }
        }
    }
    g.set_to_move(Color::Black);
    (g, star.expect("picture needs a *"))
}

// ---------------------------------------------------------------------------------------
// Naive checker: a plain grid, the rule text, no pattern tables.

const E: u8 = 0;
const B: u8 = 1;

struct Grid {
    w: i32,
    h: i32,
    c: Vec<u8>,
}

const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

impl Grid {
    fn from(g: &Gomoku) -> Grid {
        let (w, h) = (g.width(), g.height());
        let mut c = vec![E; w * h];
        for (m, v) in c.iter_mut().enumerate() {
            *v = match g.stone(m as Move) {
                Some(Color::Black) => 1,
                Some(Color::White) => 2,
                None => 0,
            };
        }
        Grid {
            w: w as i32,
            h: h as i32,
            c,
        }
    }
    fn get(&self, x: i32, y: i32) -> Option<u8> {
        (x >= 0 && y >= 0 && x < self.w && y < self.h).then(|| self.c[(y * self.w + x) as usize])
    }
    fn set(&mut self, x: i32, y: i32, v: u8) {
        self.c[(y * self.w + x) as usize] = v;
    }
    /// Length of the black run through (x, y) along (dx, dy).
    fn run(&self, x: i32, y: i32, dx: i32, dy: i32) -> i32 {
        let mut n = 1;
        for s in [1, -1] {
            let mut k = 1;
            while self.get(x + s * k * dx, y + s * k * dy) == Some(B) {
                n += 1;
                k += 1;
            }
        }
        n
    }
    /// With Black on (x, y): the fours through it in direction `dir`, as distinct sets of four
    /// black stones that one more stone turns into exactly five.
    fn fours(&mut self, x: i32, y: i32, (dx, dy): (i32, i32)) -> usize {
        let mut sets: Vec<Vec<(i32, i32)>> = Vec::new();
        for k in -4..=4 {
            let (ex, ey) = (x + k * dx, y + k * dy);
            if k == 0 || self.get(ex, ey) != Some(E) {
                continue;
            }
            self.set(ex, ey, B);
            let r = self.run(ex, ey, dx, dy);
            let mut stones = Vec::new();
            if r == 5 {
                // The five's stones other than the completion point, if it contains (x, y).
                let mut t = 1;
                while self.get(ex - t * dx, ey - t * dy) == Some(B) {
                    t += 1;
                }
                let start = (ex - (t - 1) * dx, ey - (t - 1) * dy);
                for i in 0..5 {
                    let p = (start.0 + i * dx, start.1 + i * dy);
                    if p != (ex, ey) {
                        stones.push(p);
                    }
                }
            }
            self.set(ex, ey, E);
            if r == 5 && stones.contains(&(x, y)) && !sets.contains(&stones) {
                sets.push(stones);
            }
        }
        sets.len()
    }
    /// With Black on (x, y): whether one more black stone at some point makes a straight four
    /// (four in a row through (x, y), both ends empty, each end completing exactly five) and
    /// that point is not forbidden.
    fn real_three(&mut self, x: i32, y: i32, (dx, dy): (i32, i32), depth: usize) -> bool {
        for k in -4..=4 {
            let (ex, ey) = (x + k * dx, y + k * dy);
            if k == 0 || self.get(ex, ey) != Some(E) {
                continue;
            }
            self.set(ex, ey, B);
            let straight = self.straight_four(x, y, dx, dy);
            let ok = straight && (depth == 0 || !self.forbidden(ex, ey, depth - 1));
            self.set(ex, ey, E);
            if ok {
                return true;
            }
        }
        false
    }
    fn straight_four(&mut self, x: i32, y: i32, dx: i32, dy: i32) -> bool {
        if self.run(x, y, dx, dy) != 4 {
            return false;
        }
        let mut t = 1;
        while self.get(x - t * dx, y - t * dy) == Some(B) {
            t += 1;
        }
        let lo = (x - t * dx, y - t * dy);
        let hi = (lo.0 + 5 * dx, lo.1 + 5 * dy);
        for e in [lo, hi] {
            if self.get(e.0, e.1) != Some(E) {
                return false;
            }
            self.set(e.0, e.1, B);
            let r = self.run(e.0, e.1, dx, dy);
            self.set(e.0, e.1, E);
            if r != 5 {
                return false;
            }
        }
        true
    }
    /// The rule text: exactly five is never forbidden; otherwise an overline, two or more
    /// fours, or two or more real threes are.
    fn forbidden(&mut self, x: i32, y: i32, depth: usize) -> bool {
        self.set(x, y, B);
        let runs: Vec<i32> = DIRS
            .iter()
            .map(|&(dx, dy)| self.run(x, y, dx, dy))
            .collect();
        let result = if runs.contains(&5) {
            false
        } else if runs.iter().any(|&r| r > 5) {
            true
        } else {
            let fours: Vec<usize> = DIRS.iter().map(|&d| self.fours(x, y, d)).collect();
            if fours.iter().sum::<usize>() >= 2 {
                true
            } else {
                let mut threes = 0;
                for (i, &d) in DIRS.iter().enumerate() {
                    if fours[i] == 0 && self.real_three(x, y, d, depth) {
                        threes += 1;
                    }
                }
                threes >= 2
            }
        };
        self.set(x, y, E);
        result
    }
}

fn naive(g: &Gomoku, m: Move) -> bool {
    let mut grid = Grid::from(g);
    let w = g.width() as i32;
    grid.forbidden(m as i32 % w, m as i32 / w, MAX_DEPTH)
}

fn check(name: &str, rows: &[&str], expected: bool) {
    let (g, m) = pos(rows);
    let c = g.cell_of(m);
    assert_eq!(g.is_forbidden(c), expected, "{name}: engine");
    assert_eq!(naive(&g, m), expected, "{name}: naive checker");
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    assert_eq!(!legal.contains(&m), expected, "{name}: legal_moves");
}

// ---------------------------------------------------------------------------------------

#[test]
fn double_threes() {
    // Open three vertically (rows 1-3) and horizontally (cols 2-4), all ends open: forbidden.
    check(
        "basic 3x3",
        &[
            ".........",
            "....X....",
            "....X....",
            "..XX*....",
            ".........",
            ".........",
        ],
        true,
    );
    // Horizontal three blocked by O at col 1: the four at cols 2-5 has a blocked end, so it
    // is no three; one three only.
    check(
        "blocked three",
        &[
            ".........",
            "....X....",
            "....X....",
            ".OXX*....",
            ".........",
            ".........",
        ],
        false,
    );
    // Broken three .X.XX.: filling col 2 gives the straight four cols 1-4.
    check(
        "broken three",
        &[
            ".........",
            "....X....",
            "....X....",
            ".X.X*....",
            ".........",
            ".........",
        ],
        true,
    );
    // Split three X*.X: filling col 3 gives cols 1-4 straight.
    check(
        "split three",
        &[
            ".........",
            "..X......",
            "..X......",
            ".X*.X....",
            ".........",
            ".........",
        ],
        true,
    );
    // Horizontal XX* against the left border: every four it can make touches the wall.
    check(
        "border three is no three",
        &[
            ".........",
            "..X......",
            "..X......",
            "XX*......",
            ".........",
            ".........",
        ],
        false,
    );
    // One column further from the border: col 4 makes the straight four cols 1-4.
    check(
        "three one off the border",
        &[
            ".........",
            "...X.....",
            "...X.....",
            ".XX*.....",
            ".........",
            ".........",
        ],
        true,
    );
    // Vertical stones at rows 3-5 with the bottom border right below: no straight four.
    check(
        "vertical three on the bottom border",
        &[
            ".........",
            ".........",
            ".........",
            "....X....",
            "....X....",
            "..XX*....",
        ],
        false,
    );
    // Both diagonals: (3,2)(5,4) around * and (3,4)(5,2) with open ends.
    check(
        "diagonal double three",
        &[
            ".........",
            ".........",
            ".........",
            "..X...X..",
            "...X.X...",
            "....*....",
            ".........",
            ".........",
        ],
        true,
    );
    // .XX*..O: the four cols 1-4 still has empty ends (cols 0 and 5): a real three.
    check(
        "white stone two away",
        &[
            "..........",
            "...X......",
            "...X......",
            ".XX*..O...",
            "..........",
            "..........",
        ],
        true,
    );
    // O.XX*.O: every four has an O right beyond one end.
    check(
        "blocked at distance both sides",
        &[
            "..........",
            "....X.....",
            "....X.....",
            "O.XX*.O...",
            "..........",
            "..........",
        ],
        false,
    );
    // X..XX*..X: filling col 2 or col 6 gives a four whose far completion makes six: no
    // straight four, no three.
    check(
        "overline-blocked three",
        &[
            "..........",
            ".....X....",
            ".....X....",
            "X..XX*..X.",
            "..........",
            "..........",
        ],
        false,
    );
    // Same without the right X: col 6 makes the straight four cols 3-6.
    check(
        "one side overline-blocked",
        &[
            "..........",
            ".....X....",
            ".....X....",
            "X..XX*....",
            "..........",
            "..........",
        ],
        true,
    );
}

#[test]
fn fours_and_overlines() {
    // Vertical four against the top wall and horizontal four OXXX*: double four.
    check(
        "double four",
        &[
            "....X....",
            "....X....",
            "....X....",
            "OXXX*....",
            ".........",
            ".........",
        ],
        true,
    );
    // Vertical four and open horizontal three: four-three is allowed.
    check(
        "four-three",
        &[
            "....X....",
            "....X....",
            "....X....",
            "..XX*....",
            ".........",
            ".........",
        ],
        false,
    );
    // Broken four XX.X* plus vertical four.
    check(
        "broken double four",
        &[
            "....X....",
            "....X....",
            "....X....",
            "XX.X*....",
            ".........",
            ".........",
        ],
        true,
    );
    check(
        "in-line X.XXX.X",
        &["..........", ".X.XX*.X..", ".........."],
        true,
    );
    check(
        "in-line XX.XX.XX",
        &["..........", "XX.X*.XX..", ".........."],
        true,
    );
    check(
        "in-line XXX.X.XXX",
        &["...........", "XXX.*.XXX..", "..........."],
        true,
    );
    // X.XX*.XX: col 1 gives five cols 0-4, but col 5 gives six (cols 2-7): one four only.
    check(
        "in-line look-alike",
        &["..........", "X.XX*.XX..", ".........."],
        false,
    );
    // Six in a row.
    check(
        "overline",
        &["..........", "XXX*XX....", ".........."],
        true,
    );
    check(
        "overline of seven",
        &["..........", "XXX*XXX...", ".........."],
        true,
    );
    // Six horizontally but exactly five vertically: the five wins, not forbidden.
    check(
        "overline with five",
        &[
            "...X......",
            "...X......",
            "...X......",
            ".XX*XXX...",
            "...X......",
            "..........",
        ],
        false,
    );
    // Exactly five plus an open three: the five exception.
    check(
        "five exception",
        &[
            "..........",
            "....X.....",
            "....X.....",
            "XXXX*.....",
            "..........",
            "..........",
        ],
        false,
    );
    // Five through a gap XXXX* with a stone beyond the next empty point: still exactly five.
    check(
        "five with gap beyond",
        &["..........", "XXXX*.X...", ".........."],
        false,
    );
    // Five plus a double four in the other directions: still allowed.
    check(
        "five with double four",
        &[
            "....X.....",
            "....X.....",
            "....X.....",
            "XXXX*.....",
            "...X......",
            "..X.......",
            ".X........",
        ],
        false,
    );
    // Four-three-three: two real threes make it forbidden whatever the four.
    check(
        "four-three-three",
        &[
            "....X....",
            "....X....",
            "....X....",
            "..XX*....",
            "...X.X...",
            "..X...X..",
            ".........",
        ],
        true,
    );
    // Single open four is fine.
    check(
        "single open four",
        &["..........", ".XXX*.....", ".........."],
        false,
    );
}

#[test]
fn recursive_threes() {
    // * = (4, row 7). Horizontal O.XX*: its only straight-four point is col 5 on the same row
    // (cols 2-5, ends 1 and 6). With * placed, that point would make that four plus open
    // threes vertically (col 5 rows 5-7 from the top... stones above) and on the anti-diagonal
    // ((6,8),(7,9) in picture rows), a double three: forbidden, so the horizontal three is
    // fake. * has one real three (vertical col 4): not forbidden.
    let fake = [
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
        ".....X.........",
        ".....X.........",
        "O.XX*..........",
        "....X.X........",
        "....X..X.......",
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
    ];
    check("fake three: four point is a double three", &fake, false);
    // Without the O, col 1 also makes a straight four (cols 1-4) and is playable: real.
    let mut real = fake;
    real[7] = "..XX*..........";
    check("real three: another four point", &real, true);
    // The only four point (col 5 of *'s row) would make six in column 5: an overline, so the
    // three is fake.
    let over = [
        "...............",
        "...............",
        "...............",
        "...............",
        ".....X.........",
        "....XX.........",
        "....XX.........",
        "O.XX*..........",
        ".....X.........",
        ".....X.........",
        "...............",
        "...............",
        "...............",
        "...............",
        "...............",
    ];
    check("fake three: four point is an overline", &over, false);
    let mut over_real = over;
    over_real[7] = "..XX*..........";
    check("real three: overline point avoided", &over_real, true);
}

#[test]
fn other_rules_and_white_have_no_forbidden_points() {
    let mut g = Gomoku::new(9, 6, Rule::Freestyle).expect("size");
    for (s, c) in [
        ("E5", Color::Black),
        ("E4", Color::Black),
        ("C3", Color::Black),
        ("D3", Color::Black),
    ] {
        let m = g.parse_gtp(s).expect("vertex");
        g.place(m, c).expect("place");
    }
    g.set_to_move(Color::Black);
    let m = g.parse_gtp("E3").expect("vertex");
    assert!(!g.is_forbidden(g.cell_of(m)));
    assert!(g.forbidden_points().is_empty());
    // The same shape under renju is a double three for Black but fine for White.
    let (mut r, star) = pos(&[
        ".........",
        "....X....",
        "....X....",
        "..XX*....",
        ".........",
        ".........",
    ]);
    assert!(r.forbidden_points().contains(&star));
    r.set_to_move(Color::White);
    let mut legal = Vec::new();
    r.legal_moves(&mut legal);
    assert!(
        legal.contains(&star),
        "White may play Black's forbidden point"
    );
}

/// Random dense renju positions: the engine and the naive checker agree on every empty point.
#[test]
fn agrees_with_naive_on_random_positions() {
    let mut rng = Rng::new(0x5EED_4E0C);
    let mut checked = 0;
    let mut forbidden = 0;
    let mut recursive = 0;
    for _ in 0..400 {
        let mut g = Gomoku::new(15, 15, Rule::Renju).expect("size");
        // Stones clustered in a 9x9 window, Black-heavy, so threes and fours are common.
        let n = 20 + rng.below(40);
        for _ in 0..n {
            let x = 3 + rng.below(9);
            let y = 3 + rng.below(9);
            let m = (y * 15 + x) as Move;
            let c = if rng.below(3) == 0 {
                Color::White
            } else {
                Color::Black
            };
            if g.stone(m).is_none() {
                let _ = g.place(m, c);
            }
        }
        for m in 0..225u32 {
            let m = m as Move;
            if g.stone(m).is_some() {
                continue;
            }
            let f = g.is_forbidden(g.cell_of(m));
            assert_eq!(
                f,
                naive(&g, m),
                "disagreement at {} in\n{g:?}",
                g.move_to_gtp(m)
            );
            checked += 1;
            forbidden += f as usize;
            let w = g.width() as i32;
            let shallow = Grid::from(&g).forbidden(m as i32 % w, m as i32 / w, 0);
            recursive += (shallow != f) as usize;
        }
    }
    eprintln!("checked {checked} points, {forbidden} forbidden, {recursive} decided by recursion");
    assert!(
        recursive > 0,
        "random positions should exercise the recursive three check"
    );
    assert!(
        forbidden > 100,
        "random positions should exercise forbidden points"
    );
}
