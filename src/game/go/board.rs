//! The Go board: stones, chains with pseudo-liberties, captures and exact undo.
//!
//! The board is padded with one wall cell on every side (`stride = width + 2`). Each chain is
//! a circular linked list of its stones (`next`) with a representative (`chain`); the
//! representative holds the chain's size and its *pseudo-liberties*: the count, sum and sum of
//! squares of the empty cells adjacent to its stones, one entry per (stone, empty neighbour)
//! pair. A chain is in atari exactly when all its pseudo-liberties are the same cell, i.e.
//! `n * sum2 == sum * sum`, so the legality test (suicide, captures) never walks a chain.
//!
//! Undo is exact and cheap: merging two circular lists swaps one `next` pointer of each, and
//! the same swap splits them again; captured stones keep their list links, so restoring a
//! capture only rewrites cell contents and the neighbours' liberty sums. Each move stores
//! what it overwrote at the played cell and which chains it merged and captured.

use std::fmt;

use once_cell::sync::Lazy;

use crate::game::{Color, Move, GTP_COLUMNS};
use crate::util::Zobrist;

/// Largest board side.
pub const MAX_SIZE: usize = 25;
/// Smallest board side.
pub const MIN_SIZE: usize = 2;
const MAX_STRIDE: usize = MAX_SIZE + 2;

/// Cell contents.
pub(crate) const EMPTY: u8 = 0;
pub(crate) const BLACK: u8 = 1;
pub(crate) const WHITE: u8 = 2;
pub(crate) const WALL: u8 = 3;

static ZOBRIST: Lazy<Zobrist> = Lazy::new(|| Zobrist::new(MAX_STRIDE * MAX_STRIDE));

/// Side-to-move key shared by the Go games (xored in when White is to move).
pub(crate) fn side_key() -> u64 {
    ZOBRIST.side
}

/// Cell value of a colour.
#[inline(always)]
pub(crate) fn cv(c: Color) -> u8 {
    c.index() as u8 + 1
}

/// Pseudo-liberties of a chain (see the module docs).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Libs {
    n: u32,
    sum: u32,
    sum2: u64,
}

impl Libs {
    #[inline(always)]
    fn add(&mut self, p: usize) {
        self.n += 1;
        self.sum += p as u32;
        self.sum2 += (p * p) as u64;
    }
    #[inline(always)]
    fn remove(&mut self, p: usize) {
        self.n -= 1;
        self.sum -= p as u32;
        self.sum2 -= (p * p) as u64;
    }
    #[inline(always)]
    fn merge(&mut self, o: Libs) {
        self.n += o.n;
        self.sum += o.sum;
        self.sum2 += o.sum2;
    }
    #[inline(always)]
    fn unmerge(&mut self, o: Libs) {
        self.n -= o.n;
        self.sum -= o.sum;
        self.sum2 -= o.sum2;
    }
    /// Exactly one distinct liberty.
    #[inline(always)]
    fn atari(&self) -> bool {
        self.n > 0 && (self.n as u64) * self.sum2 == (self.sum as u64) * (self.sum as u64)
    }
}

/// What one move changed, so [`Board::undo`] can restore it.
#[derive(Copy, Clone, Debug)]
struct Undo {
    /// Played cell, or `u16::MAX` for a pass.
    cell: u16,
    color: Color,
    old_next: u16,
    old_chain: u16,
    old_size: u16,
    old_libs: Libs,
    /// (big, small) representatives of each merge, in order.
    merges: [(u16, u16); 4],
    n_merges: u8,
    /// Representatives of captured chains, in order.
    caps: [u16; 4],
    n_caps: u8,
    /// Stones captured by this move.
    captured: u16,
    /// Simple-ko point before this move (cell or 0).
    prev_ko: u16,
}

/// A Go board of `width` x `height` (each 2..=25): stones, chains, captures, simple-ko point
/// and exact undo. Knows nothing about turns or superko; the games build on it.
#[derive(Clone, Debug)]
pub struct Board {
    width: usize,
    height: usize,
    stride: usize,
    cells: Vec<u8>,
    chain: Vec<u16>,
    next: Vec<u16>,
    size: Vec<u16>,
    libs: Vec<Libs>,
    /// Empty cells in arbitrary order and each cell's position in that list.
    empties: Vec<u16>,
    empty_pos: Vec<u16>,
    /// Action index of each cell (`u16::MAX` for walls).
    action: Vec<u16>,
    hash: u64,
    stones: [u32; 2],
    /// Bitboards by action index (only maintained when the board has at most 128 points).
    bits: [u128; 2],
    small: bool,
    /// Simple-ko point: the cell the side to move may not play because it would retake a
    /// single-stone ko at once (0 when none).
    ko: u16,
    undo: Vec<Undo>,
}

impl Board {
    /// An empty board, or `None` if a side lies outside 2..=25.
    pub fn new(width: usize, height: usize) -> Option<Board> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&width) || !(MIN_SIZE..=MAX_SIZE).contains(&height) {
            return None;
        }
        let stride = width + 2;
        let n = stride * (height + 2);
        let mut b = Board {
            width,
            height,
            stride,
            cells: vec![WALL; n],
            chain: vec![0; n],
            next: vec![0; n],
            size: vec![0; n],
            libs: vec![Libs::default(); n],
            empties: Vec::with_capacity(width * height),
            empty_pos: vec![0; n],
            action: vec![u16::MAX; n],
            hash: 0,
            stones: [0; 2],
            bits: [0; 2],
            small: width * height <= 128,
            ko: 0,
            undo: Vec::with_capacity(4 * width * height),
        };
        for y in 0..height {
            for x in 0..width {
                let c = b.cell(x, y);
                b.cells[c] = EMPTY;
                b.action[c] = (y * width + x) as u16;
                b.empty_pos[c] = b.empties.len() as u16;
                b.empties.push(c as u16);
            }
        }
        Some(b)
    }

    /// Board width.
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }
    /// Board height.
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }
    /// Number of points.
    #[inline]
    pub fn points(&self) -> usize {
        self.width * self.height
    }
    /// Padded-cell step to the next row.
    #[inline]
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// Padded cell of point (x, y).
    #[inline(always)]
    pub fn cell(&self, x: usize, y: usize) -> usize {
        (y + 1) * self.stride + x + 1
    }
    /// Padded cell of a board action (not pass).
    #[inline(always)]
    pub fn cell_of(&self, m: Move) -> usize {
        let m = m as usize;
        self.cell(m % self.width, m / self.width)
    }
    /// Action index of a padded cell on the board.
    #[inline(always)]
    pub fn move_of(&self, cell: usize) -> Move {
        self.action[cell]
    }
    /// Raw contents of a padded cell (0 empty, 1 black, 2 white, 3 wall).
    #[inline(always)]
    pub fn cell_value(&self, cell: usize) -> u8 {
        self.cells[cell]
    }
    /// The stone on a point, if any (`None` for an empty or off-board point).
    pub fn stone(&self, m: Move) -> Option<Color> {
        if m as usize >= self.points() {
            return None;
        }
        match self.cells[self.cell_of(m)] {
            BLACK => Some(Color::Black),
            WHITE => Some(Color::White),
            _ => None,
        }
    }
    /// Zobrist hash of the stones alone.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// Number of stones of a colour.
    #[inline]
    pub fn stone_count(&self, c: Color) -> usize {
        self.stones[c.index()] as usize
    }
    /// Stones of each colour as bitboards over action indices (boards of at most 128 points;
    /// zero otherwise).
    #[inline]
    pub fn bitboards(&self) -> [u128; 2] {
        self.bits
    }
    /// The empty cells, in no particular order.
    #[inline]
    pub fn empty_cells(&self) -> &[u16] {
        &self.empties
    }
    /// The simple-ko cell (0 when none): retaking there at once is a simple-ko violation.
    #[inline]
    pub fn ko_cell(&self) -> usize {
        self.ko as usize
    }
    /// Stones captured by the last move (0 after a pass or with no history).
    pub fn last_captures(&self) -> usize {
        self.undo.last().map_or(0, |u| u.captured as usize)
    }
    /// Representative cell of the chain through a stone cell.
    #[inline(always)]
    pub fn chain_id(&self, cell: usize) -> usize {
        self.chain[cell] as usize
    }
    /// The four orthogonal neighbour cells.
    #[inline(always)]
    pub fn neighbours(&self, c: usize) -> [usize; 4] {
        [c - self.stride, c - 1, c + 1, c + self.stride]
    }
    /// The four diagonal neighbour cells.
    #[inline(always)]
    pub fn diagonals(&self, c: usize) -> [usize; 4] {
        [
            c - self.stride - 1,
            c - self.stride + 1,
            c + self.stride - 1,
            c + self.stride + 1,
        ]
    }
    /// Stones of the chain through `cell`.
    pub fn chain_stones(&self, cell: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut s = cell;
        loop {
            out.push(s);
            s = self.next[s] as usize;
            if s == cell {
                break;
            }
        }
        out
    }
    /// Exact number of distinct liberties of the chain through a stone cell (walks the chain).
    pub fn liberties(&self, cell: usize) -> usize {
        let mut seen: Vec<usize> = Vec::new();
        for s in self.chain_stones(cell) {
            for q in self.neighbours(s) {
                if self.cells[q] == EMPTY && !seen.contains(&q) {
                    seen.push(q);
                }
            }
        }
        seen.len()
    }
    /// Whether the chain through a stone cell has exactly one liberty.
    #[inline(always)]
    pub fn in_atari(&self, cell: usize) -> bool {
        self.libs[self.chain[cell] as usize].atari()
    }

    /// Whether `color` playing the empty `cell` would be suicide (no liberty and no capture).
    #[inline]
    pub fn is_suicide(&self, cell: usize, color: Color) -> bool {
        let own = cv(color);
        for q in self.neighbours(cell) {
            let v = self.cells[q];
            if v == EMPTY {
                return false;
            }
            if v == WALL {
                continue;
            }
            let atari = self.libs[self.chain[q] as usize].atari();
            if (v == own) != atari {
                // Own chain with a second liberty, or an opponent chain we capture.
                return false;
            }
        }
        true
    }

    /// Whether `color` playing the empty `cell` captures something.
    #[inline]
    pub fn captures_any(&self, cell: usize, color: Color) -> bool {
        let opp = cv(color.opp());
        self.neighbours(cell)
            .into_iter()
            .any(|q| self.cells[q] == opp && self.in_atari(q))
    }

    /// Stone hash after `color` plays the empty `cell` (captures included), without playing.
    #[inline]
    pub fn hash_after(&self, cell: usize, color: Color) -> u64 {
        let mut h = self.hash ^ ZOBRIST.key(cell, color.index());
        let opp = color.opp();
        let mut done = [0usize; 4];
        let mut n = 0;
        for q in self.neighbours(cell) {
            if self.cells[q] == cv(opp) && self.in_atari(q) {
                let r = self.chain[q] as usize;
                if done[..n].contains(&r) {
                    continue;
                }
                done[n] = r;
                n += 1;
                let mut s = r;
                loop {
                    h ^= ZOBRIST.key(s, opp.index());
                    s = self.next[s] as usize;
                    if s == r {
                        break;
                    }
                }
            }
        }
        h
    }

    /// For `color` playing the empty `cell`: `None` if it is suicide, else the stone hash
    /// after the move (captures included). One pass over the neighbours does both checks.
    #[inline]
    pub fn try_hash_after(&self, cell: usize, color: Color) -> Option<u64> {
        let own = cv(color);
        let opp = color.opp();
        let mut h = self.hash ^ ZOBRIST.key(cell, color.index());
        let mut breathes = false;
        let mut done = [0usize; 4];
        let mut n = 0;
        for q in self.neighbours(cell) {
            let v = self.cells[q];
            if v == EMPTY {
                breathes = true;
                continue;
            }
            if v == WALL {
                continue;
            }
            let r = self.chain[q] as usize;
            let atari = self.libs[r].atari();
            if v == own {
                breathes |= !atari;
            } else if atari && !done[..n].contains(&r) {
                breathes = true;
                done[n] = r;
                n += 1;
                let mut s = r;
                loop {
                    h ^= ZOBRIST.key(s, opp.index());
                    s = self.next[s] as usize;
                    if s == r {
                        break;
                    }
                }
            }
        }
        breathes.then_some(h)
    }

    /// Whether the empty `cell` is a true eye of `color` in the Killall-Go sense: every
    /// on-board orthogonal neighbour is an own stone, and of the on-board diagonal neighbours
    /// at least 3 of 4 (interior) or all (edge, corner) are own stones.
    #[inline]
    pub fn is_true_eye(&self, cell: usize, color: Color) -> bool {
        let own = cv(color);
        for q in self.neighbours(cell) {
            let v = self.cells[q];
            if v != own && v != WALL {
                return false;
            }
        }
        let mut on_board = 0;
        let mut owned = 0;
        for q in self.diagonals(cell) {
            let v = self.cells[q];
            if v != WALL {
                on_board += 1;
                if v == own {
                    owned += 1;
                }
            }
        }
        if on_board == 4 {
            owned >= 3
        } else {
            owned == on_board
        }
    }

    #[inline(always)]
    fn remove_empty(&mut self, c: usize) {
        let i = self.empty_pos[c] as usize;
        let last = self.empties.pop().unwrap_or(c as u16);
        if last as usize != c {
            self.empties[i] = last;
            self.empty_pos[last as usize] = i as u16;
        }
    }

    #[inline(always)]
    fn add_empty(&mut self, c: usize) {
        self.empty_pos[c] = self.empties.len() as u16;
        self.empties.push(c as u16);
    }

    #[inline(always)]
    fn set_stone(&mut self, c: usize, color: Color) {
        self.cells[c] = cv(color);
        self.hash ^= ZOBRIST.key(c, color.index());
        self.stones[color.index()] += 1;
        if self.small {
            self.bits[color.index()] |= 1u128 << self.action[c];
        }
    }

    #[inline(always)]
    fn clear_stone(&mut self, c: usize, color: Color) {
        self.cells[c] = EMPTY;
        self.hash ^= ZOBRIST.key(c, color.index());
        self.stones[color.index()] -= 1;
        if self.small {
            self.bits[color.index()] &= !(1u128 << self.action[c]);
        }
    }

    /// Records a pass (clears the simple-ko point); undone by [`Board::undo`].
    pub fn pass(&mut self) {
        self.undo.push(Undo {
            cell: u16::MAX,
            color: Color::Black,
            old_next: 0,
            old_chain: 0,
            old_size: 0,
            old_libs: Libs::default(),
            merges: [(0, 0); 4],
            n_merges: 0,
            caps: [0; 4],
            n_caps: 0,
            captured: 0,
            prev_ko: self.ko,
        });
        self.ko = 0;
    }

    /// Plays `color` on the empty `cell`, which must not be suicide (the caller checks).
    /// Returns the number of stones captured.
    pub fn play(&mut self, cell: usize, color: Color) -> usize {
        debug_assert_eq!(self.cells[cell], EMPTY);
        let own = cv(color);
        let opp = cv(color.opp());
        let mut u = Undo {
            cell: cell as u16,
            color,
            old_next: self.next[cell],
            old_chain: self.chain[cell],
            old_size: self.size[cell],
            old_libs: self.libs[cell],
            merges: [(0, 0); 4],
            n_merges: 0,
            caps: [0; 4],
            n_caps: 0,
            captured: 0,
            prev_ko: self.ko,
        };
        self.remove_empty(cell);
        self.set_stone(cell, color);
        self.next[cell] = cell as u16;
        self.chain[cell] = cell as u16;
        self.size[cell] = 1;
        self.libs[cell] = Libs::default();
        let nb = self.neighbours(cell);
        for q in nb {
            match self.cells[q] {
                EMPTY => self.libs[cell].add(q),
                WALL => {}
                _ => {
                    let r = self.chain[q] as usize;
                    self.libs[r].remove(cell);
                }
            }
        }
        for q in nb {
            if self.cells[q] == own {
                let a = self.chain[cell] as usize;
                let r = self.chain[q] as usize;
                if a != r {
                    let (big, small) = if self.size[a] >= self.size[r] {
                        (a, r)
                    } else {
                        (r, a)
                    };
                    self.merge(big, small);
                    u.merges[u.n_merges as usize] = (big as u16, small as u16);
                    u.n_merges += 1;
                }
            }
        }
        for q in nb {
            if self.cells[q] == opp {
                let r = self.chain[q] as usize;
                if self.libs[r].n == 0 {
                    u.captured += self.capture(r, color.opp());
                    u.caps[u.n_caps as usize] = r as u16;
                    u.n_caps += 1;
                }
            }
        }
        // Simple ko: one stone captured by a lone stone left with a single liberty.
        let rep = self.chain[cell] as usize;
        self.ko = 0;
        if u.captured == 1 && self.size[rep] == 1 && self.libs[rep].atari() {
            self.ko = (self.libs[rep].sum / self.libs[rep].n) as u16;
        }
        let captured = u.captured as usize;
        self.undo.push(u);
        captured
    }

    fn merge(&mut self, big: usize, small: usize) {
        let mut s = small;
        loop {
            self.chain[s] = big as u16;
            s = self.next[s] as usize;
            if s == small {
                break;
            }
        }
        self.next.swap(big, small);
        self.size[big] += self.size[small];
        let l = self.libs[small];
        self.libs[big].merge(l);
    }

    fn unmerge(&mut self, big: usize, small: usize) {
        self.next.swap(big, small);
        let mut s = small;
        loop {
            self.chain[s] = small as u16;
            s = self.next[s] as usize;
            if s == small {
                break;
            }
        }
        self.size[big] -= self.size[small];
        let l = self.libs[small];
        self.libs[big].unmerge(l);
    }

    /// Removes the chain `r` (of colour `color`); returns its size.
    fn capture(&mut self, r: usize, color: Color) -> u16 {
        let mut s = r;
        loop {
            self.clear_stone(s, color);
            self.add_empty(s);
            s = self.next[s] as usize;
            if s == r {
                break;
            }
        }
        let capturer = cv(color.opp());
        let mut s = r;
        loop {
            for q in self.neighbours(s) {
                if self.cells[q] == capturer {
                    let rq = self.chain[q] as usize;
                    self.libs[rq].add(s);
                }
            }
            s = self.next[s] as usize;
            if s == r {
                break;
            }
        }
        self.size[r]
    }

    fn uncapture(&mut self, r: usize, color: Color) {
        let capturer = cv(color.opp());
        let mut s = r;
        loop {
            for q in self.neighbours(s) {
                if self.cells[q] == capturer {
                    let rq = self.chain[q] as usize;
                    self.libs[rq].remove(s);
                }
            }
            s = self.next[s] as usize;
            if s == r {
                break;
            }
        }
        let mut s = r;
        loop {
            self.remove_empty(s);
            self.set_stone(s, color);
            s = self.next[s] as usize;
            if s == r {
                break;
            }
        }
    }

    /// Number of moves (and passes) that can be undone.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// Takes back the last move or pass. Returns `None` when there is nothing to undo,
    /// `Some(None)` for a pass and `Some(Some(cell))` for a board move.
    pub fn undo(&mut self) -> Option<Option<usize>> {
        let u = self.undo.pop()?;
        self.ko = u.prev_ko;
        if u.cell == u16::MAX {
            return Some(None);
        }
        let cell = u.cell as usize;
        for i in (0..u.n_caps as usize).rev() {
            self.uncapture(u.caps[i] as usize, u.color.opp());
        }
        for i in (0..u.n_merges as usize).rev() {
            let (big, small) = u.merges[i];
            self.unmerge(big as usize, small as usize);
        }
        for q in self.neighbours(cell) {
            let v = self.cells[q];
            if v == BLACK || v == WHITE {
                let r = self.chain[q] as usize;
                self.libs[r].add(cell);
            }
        }
        self.clear_stone(cell, u.color);
        self.add_empty(cell);
        self.next[cell] = u.old_next;
        self.chain[cell] = u.old_chain;
        self.size[cell] = u.old_size;
        self.libs[cell] = u.old_libs;
        Some(Some(cell))
    }

    /// Whether `color` may play `cell` as far as the board alone says: empty and not suicide.
    pub fn can_play(&self, cell: usize, color: Color) -> bool {
        self.cells[cell] == EMPTY && !self.is_suicide(cell, color)
    }

    /// Area score (Tromp-Taylor): stones plus empty regions reaching only one colour.
    /// Returns (black, white) points.
    pub fn area_score(&self) -> (usize, usize) {
        let mut score = [self.stones[0] as usize, self.stones[1] as usize];
        let mut seen = vec![false; self.cells.len()];
        let mut stack = Vec::new();
        for &e in &self.empties {
            let e = e as usize;
            if seen[e] {
                continue;
            }
            seen[e] = true;
            stack.push(e);
            let mut size = 0;
            let mut touch = 0u8;
            while let Some(c) = stack.pop() {
                size += 1;
                for q in self.neighbours(c) {
                    match self.cells[q] {
                        EMPTY if !seen[q] => {
                            seen[q] = true;
                            stack.push(q);
                        }
                        BLACK => touch |= 1,
                        WHITE => touch |= 2,
                        _ => {}
                    }
                }
            }
            match touch {
                1 => score[0] += size,
                2 => score[1] += size,
                _ => {}
            }
        }
        (score[0], score[1])
    }

    /// Checks the incremental chain data against a recomputation (tests, debugging).
    pub fn validate(&self) -> Result<(), String> {
        for y in 0..self.height {
            for x in 0..self.width {
                let c = self.cell(x, y);
                let v = self.cells[c];
                if v == EMPTY {
                    if self.empties.get(self.empty_pos[c] as usize) != Some(&(c as u16)) {
                        return Err(format!("empty list broken at {c}"));
                    }
                    continue;
                }
                let r = self.chain[c] as usize;
                let stones = self.chain_stones(r);
                if !stones.contains(&c) {
                    return Err(format!("stone {c} not in the list of its chain {r}"));
                }
                if stones.len() != self.size[r] as usize {
                    return Err(format!(
                        "chain {r} size {} != {}",
                        self.size[r],
                        stones.len()
                    ));
                }
                let mut l = Libs::default();
                for &s in &stones {
                    if self.chain[s] as usize != r || self.cells[s] != v {
                        return Err(format!("chain {r} has foreign stone {s}"));
                    }
                    for q in self.neighbours(s) {
                        if self.cells[q] == EMPTY {
                            l.add(q);
                        }
                    }
                }
                if l != self.libs[r] {
                    return Err(format!("chain {r} libs {:?} != {:?}", self.libs[r], l));
                }
                if l.n == 0 {
                    return Err(format!("chain {r} has no liberty"));
                }
            }
        }
        if self.empties.len() + self.stones[0] as usize + self.stones[1] as usize != self.points() {
            return Err("empty count mismatch".into());
        }
        Ok(())
    }
}

/// ASCII diagram, top row first: `X` Black, `O` White, `.` empty, with GTP coordinates.
impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letters: String = GTP_COLUMNS[..self.width]
            .iter()
            .map(|&c| format!(" {}", c as char))
            .collect();
        writeln!(f, "   {letters}")?;
        for y in (0..self.height).rev() {
            write!(f, "{:>2} ", y + 1)?;
            for x in 0..self.width {
                let c = match self.cells[self.cell(x, y)] {
                    BLACK => 'X',
                    WHITE => 'O',
                    _ => '.',
                };
                write!(f, " {c}")?;
            }
            writeln!(f, "  {}", y + 1)?;
        }
        writeln!(f, "   {letters}")
    }
}
