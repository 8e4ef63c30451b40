//! Renju forbidden points for Black.
//!
//! Black may not play a point that makes a double three, a double four or an overline, unless
//! the same move makes exactly five. Two fours in one line (`X_XXX_X`, `XX_XX_XX`,
//! `XXX_X_XXX` through the point) count as a double four. A three counts only if it is a
//! *real* three: some empty point of its line would turn it into a straight four (`_XXXX_`
//! with exactly-five completions at both ends) and that point is not itself forbidden once the
//! three is on the board. The last check is recursive; it is bounded by [`MAX_DEPTH`] nested
//! hypothetical stones, beyond which a four point is taken as playable.
//!
//! The analysis reads the incremental line keys and patterns as a cheap pre-filter: a point
//! whose four directions hold fewer than two three-or-better patterns (and no `F4`, which may
//! hide two fours in one line) cannot be forbidden unless it is an overline. Only the rare
//! remaining points get the exact line analysis, evaluated on a virtual board (the real one
//! plus up to [`MAX_DEPTH`] hypothetical black stones) without mutating the game.

use super::pattern::{Pattern, BLACK, EMPTY};
use super::Gomoku;
use crate::game::Color;

/// Nesting bound of the recursive "is the four point itself forbidden" check.
pub const MAX_DEPTH: usize = 5;

/// The real board plus a few hypothetical black stones.
struct View<'a> {
    g: &'a Gomoku,
    placed: [usize; MAX_DEPTH + 2],
    n: usize,
}

impl View<'_> {
    #[inline]
    fn val(&self, c: usize) -> u8 {
        if self.placed[..self.n].contains(&c) {
            BLACK
        } else {
            self.g.cell_value(c)
        }
    }

    /// Black's pattern at the empty `c` in direction `d` on the virtual board.
    #[inline]
    fn pattern(&self, c: usize, d: usize) -> Pattern {
        if self.n == 0 {
            return self.g.pattern(c, Color::Black, d);
        }
        let delta = self.g.delta(d);
        let mut key = self.g.line_key(c, d);
        for &s in &self.placed[..self.n] {
            let diff = s as isize - c as isize;
            if diff == 0 || diff % delta != 0 {
                continue;
            }
            let o = diff / delta;
            if (-5..=5).contains(&o) {
                let slot = if o < 0 { o + 5 } else { o + 4 } as u32;
                key |= (BLACK as u32) << (2 * slot);
            }
        }
        self.g.pattern_of_key(key, Color::Black)
    }

    /// The 11 cells at offsets -5..=5 from `c` along direction `d` (`c` itself as Black).
    #[inline]
    fn line(&self, c: usize, d: usize) -> [u8; 11] {
        let delta = self.g.delta(d);
        let mut line = [0u8; 11];
        for (i, v) in line.iter_mut().enumerate() {
            let q = (c as isize + (i as isize - 5) * delta) as usize;
            *v = self.val(q);
        }
        line[5] = BLACK;
        line
    }
}

/// Indices (1..=9) of the empty cells that would give Black exactly five through the centre.
/// Returns the count (at most 2 are recorded) and the first two indices.
#[inline]
fn five_points(line: &[u8; 11]) -> (usize, [usize; 2]) {
    let mut found = [0usize; 2];
    let mut k = 0;
    for q in 1..=9 {
        if line[q] != EMPTY {
            continue;
        }
        let (lo, hi) = if q < 5 { (q, 5) } else { (5, q) };
        if (lo..=hi).any(|i| i != q && line[i] != BLACK) {
            continue;
        }
        let mut l = lo;
        while l > 0 && line[l - 1] == BLACK {
            l -= 1;
        }
        let mut r = hi;
        while r < 10 && line[r + 1] == BLACK {
            r += 1;
        }
        if r - l + 1 == 5 {
            if k < 2 {
                found[k] = q;
            }
            k += 1;
        }
    }
    (k, found)
}

/// Number of fours (0, 1 or 2) Black has through the centre of `line`: a straight four
/// (completions exactly five apart) is one four; two completions otherwise are two fours.
#[inline]
fn fours_in_line(line: &[u8; 11]) -> usize {
    match five_points(line) {
        (0, _) => 0,
        (1, _) => 1,
        (2, [a, b]) if b - a == 5 => 1,
        _ => 2,
    }
}

/// Whether `line` holds a straight four through the centre (two completions five apart).
#[inline]
fn straight_four(line: &[u8; 11]) -> bool {
    matches!(five_points(line), (2, [a, b]) if b - a == 5)
}

/// Whether Black playing the empty padded `cell` is forbidden (renju; the caller checks the
/// rule).
pub fn is_forbidden(g: &Gomoku, cell: usize) -> bool {
    let mut v = View {
        g,
        placed: [0; MAX_DEPTH + 2],
        n: 0,
    };
    forbidden_at(&mut v, cell, MAX_DEPTH)
}

fn forbidden_at(v: &mut View, cell: usize, depth: usize) -> bool {
    let pats = [
        v.pattern(cell, 0),
        v.pattern(cell, 1),
        v.pattern(cell, 2),
        v.pattern(cell, 3),
    ];
    if pats.contains(&Pattern::F5) {
        return false;
    }
    if pats.contains(&Pattern::Overline) {
        return true;
    }
    let strong = pats.iter().filter(|&&p| p >= Pattern::F3).count();
    if strong < 2 && !pats.contains(&Pattern::F4) {
        return false;
    }
    // Fours first: a direction with a four is not also a three.
    let mut fours = 0;
    for (d, &p) in pats.iter().enumerate() {
        if p >= Pattern::B4 {
            fours += fours_in_line(&v.line(cell, d));
        }
    }
    if fours >= 2 {
        return true;
    }
    let three_dirs = pats.iter().filter(|&&p| p == Pattern::F3).count();
    if three_dirs < 2 {
        return false;
    }
    v.placed[v.n] = cell;
    v.n += 1;
    let mut threes = 0;
    for (d, &p) in pats.iter().enumerate() {
        if p == Pattern::F3 && real_three(v, cell, d, depth) {
            threes += 1;
            if threes >= 2 {
                break;
            }
        }
    }
    v.n -= 1;
    threes >= 2
}

/// With Black's stone already on `cell` (virtually), whether direction `d` holds a real three:
/// an empty point that makes a straight four through `cell` and is not itself forbidden.
fn real_three(v: &mut View, cell: usize, d: usize, depth: usize) -> bool {
    let line = v.line(cell, d);
    let delta = v.g.delta(d);
    for i in 1..=9 {
        if i == 5 || line[i] != EMPTY {
            continue;
        }
        let mut l2 = line;
        l2[i] = BLACK;
        if !straight_four(&l2) {
            continue;
        }
        if depth == 0 {
            return true;
        }
        let q = (cell as isize + (i as isize - 5) * delta) as usize;
        if !forbidden_at(v, q, depth - 1) {
            return true;
        }
    }
    false
}
