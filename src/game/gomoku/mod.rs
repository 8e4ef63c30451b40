//! Gomoku on boards up to 22x22 under the Gomocup rule sets, plus the PCN paper's 4T variant.
//!
//! The board is padded with five wall cells on every side, so line scans and the incremental
//! key updates never bounds-check. Each play updates, for the four directions, the line keys
//! of the ten cells within distance five and re-reads their [`Pattern`]s from the rule's
//! table; undo does the same in reverse (keys are xor-updated, so the two are symmetric).

pub mod pattern;
pub mod renju;

use std::fmt;

use once_cell::sync::Lazy;

pub use pattern::Pattern;
use pattern::{table_index, FiveRule, BLACK, EMPTY, WALL, WHITE};

use super::{gtp_vertex, parse_gtp_vertex, Color, Game, Move, MoveError, Outcome};
use crate::util::Zobrist;

/// Largest board side.
pub const MAX_SIZE: usize = 22;
/// Smallest board side.
pub const MIN_SIZE: usize = 5;
const PAD: usize = 5;
const MAX_STRIDE: usize = MAX_SIZE + 2 * PAD;
const NONE: u16 = u16::MAX;
/// 64-bit words of a [`CellBits`]: one bit per padded cell of the largest board.
const BIT_WORDS: usize = MAX_STRIDE * MAX_STRIDE / 64;

static ZOBRIST: Lazy<Zobrist> = Lazy::new(|| Zobrist::new(MAX_STRIDE * MAX_STRIDE));

/// A Gomoku rule set.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Five or more in a row wins (Gomocup rule 0).
    Freestyle,
    /// Exactly five wins; overlines do not (rule 1).
    Exact,
    /// Renju (rule 4): Black needs exactly five and may not make a double three, double four
    /// or overline unless the move makes five; White wins with five or more. Black to move
    /// with every empty point forbidden has no legal move: the game is then a draw, as on a
    /// full board.
    Renju,
    /// Caro with overlines (rule 8): five or more wins unless blocked by the opponent at both ends.
    Caro,
    /// Standard caro (rule 9): exactly five, not blocked at both ends.
    CaroExact,
    /// The PCN paper's "4T" knowledge rule on top of freestyle: a move that makes two or more
    /// four-completion points wins at once; one completion point forces the reply there.
    FourT,
}

impl Rule {
    /// The rule for a Gomocup `INFO rule` bitmask (bit 2 "continuous" is the protocol's business).
    pub fn from_gomocup(mask: i64) -> Option<Rule> {
        if mask < 0 {
            return None;
        }
        let m = mask & !2;
        Some(match m {
            0 => Rule::Freestyle,
            1 => Rule::Exact,
            8 => Rule::Caro,
            9 => Rule::CaroExact,
            m if m & 4 != 0 => Rule::Renju,
            _ => return None,
        })
    }

    /// Short stable name (`freestyle`, `exact`, `renju`, `caro`, `caro-exact`, `4t`).
    pub fn name(self) -> &'static str {
        match self {
            Rule::Freestyle => "freestyle",
            Rule::Exact => "exact",
            Rule::Renju => "renju",
            Rule::Caro => "caro",
            Rule::CaroExact => "caro-exact",
            Rule::FourT => "4t",
        }
    }

    /// Every rule set.
    pub const ALL: [Rule; 6] = [
        Rule::Freestyle,
        Rule::Exact,
        Rule::Renju,
        Rule::Caro,
        Rule::CaroExact,
        Rule::FourT,
    ];

    /// Parses [`Rule::name`] output.
    pub fn from_name(s: &str) -> Option<Rule> {
        Rule::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s))
    }

    /// Parses a rule as the command line and GTP give it: a name of [`Rule::name`] (any
    /// case), `ndk` for freestyle (the PCN paper's name), or a Gomocup rule number
    /// ([`Rule::from_gomocup`]). The one parser of every front end's `--rule`.
    pub fn parse(s: &str) -> Option<Rule> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("ndk") {
            return Some(Rule::Freestyle);
        }
        match s.parse::<i64>() {
            Ok(n) => Rule::from_gomocup(n),
            Err(_) => Rule::from_name(s),
        }
    }

    /// The five rule behind this rule's pattern tables.
    pub fn five_rule(self) -> FiveRule {
        let (exact, caro) = match self {
            Rule::Freestyle | Rule::FourT => ([false, false], false),
            Rule::Exact => ([true, true], false),
            Rule::Renju => ([true, false], false),
            Rule::Caro => ([false, false], true),
            Rule::CaroExact => ([true, true], true),
        };
        FiveRule {
            exact,
            caro,
            narrow: !caro && exact == [false, false],
        }
    }
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    /// Padded index of the stone.
    cell: u16,
    color: Color,
    /// The move made a winning five (or, under 4T, two completion points).
    won: bool,
    /// 4T: the single point the opponent must play next, or NONE.
    forced: u16,
    /// Renju, after a White move: every empty point is forbidden for Black, who has no
    /// legal move (the game ends as a draw, like a full board).
    stuck: bool,
}

/// A Gomoku position with incremental line patterns. See the module docs.
#[derive(Clone)]
pub struct Gomoku {
    rule: Rule,
    width: usize,
    height: usize,
    stride: usize,
    narrow: bool,
    table: &'static [u16],
    /// 4T completion points per narrow line key ([`pattern::four_t_table`]); empty under
    /// the other rules, which never read it.
    four_t: &'static [u16],
    cells: Vec<u8>,
    keys: Vec<[u32; 4]>,
    pats: Vec<[u16; 4]>,
    /// Whether `near` and `near_empty` are kept ([`Gomoku::track_near`]). Only the searches
    /// that scan for candidates at every node want them; the others' moves skip the work.
    near_tracked: bool,
    /// Per padded cell, the stones within two points on its four lines (see
    /// [`Gomoku::near_stone`]), while tracked.
    near: Vec<u8>,
    /// The empty points with a stone within two on a line, while tracked.
    near_empty: CellBits,
    hash: u64,
    to_move: Color,
    history: Vec<Entry>,
}

impl fmt::Debug for Gomoku {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Gomoku {}x{} {} ({} to move)",
            self.width,
            self.height,
            self.rule.name(),
            self.to_move.letter()
        )?;
        for y in (0..self.height).rev() {
            for x in 0..self.width {
                let c = match self.cells[self.cell(x, y)] {
                    BLACK => 'X',
                    WHITE => 'O',
                    _ => '.',
                };
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Why a board could not be created.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported board size {0}x{1} (sides must be {MIN_SIZE}..={MAX_SIZE})")]
pub struct SizeError(pub usize, pub usize);

impl Gomoku {
    /// An empty `width` x `height` board (each side 5..=22).
    pub fn new(width: usize, height: usize, rule: Rule) -> Result<Gomoku, SizeError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&width) || !(MIN_SIZE..=MAX_SIZE).contains(&height) {
            return Err(SizeError(width, height));
        }
        let stride = width + 2 * PAD;
        let rows = height + 2 * PAD;
        let fr = rule.five_rule();
        let mut g = Gomoku {
            rule,
            width,
            height,
            stride,
            narrow: fr.narrow,
            table: pattern::table(fr),
            four_t: if rule == Rule::FourT {
                pattern::four_t_table()
            } else {
                &[]
            },
            cells: vec![WALL; stride * rows],
            keys: vec![[0; 4]; stride * rows],
            pats: vec![[0; 4]; stride * rows],
            near_tracked: false,
            near: vec![0; stride * rows],
            near_empty: CellBits::default(),
            hash: 0,
            to_move: Color::Black,
            history: Vec::with_capacity(width * height),
        };
        // The pattern keys index the table without bounds checks (`update_lines_reach`).
        debug_assert_eq!(g.table.len(), 1 << if g.narrow { 16 } else { 20 });
        for y in 0..height {
            for x in 0..width {
                let c = g.cell(x, y);
                g.cells[c] = EMPTY;
            }
        }
        for y in 0..height {
            for x in 0..width {
                let c = g.cell(x, y);
                for d in 0..4 {
                    let delta = g.delta(d);
                    let mut key = 0u32;
                    for (s, off) in [-5isize, -4, -3, -2, -1, 1, 2, 3, 4, 5]
                        .into_iter()
                        .enumerate()
                    {
                        let q = (c as isize + off * delta) as usize;
                        key |= (g.cells[q] as u32) << (2 * s);
                    }
                    g.keys[c][d] = key;
                    g.pats[c][d] = g.table[table_index(key, g.narrow)];
                }
            }
        }
        Ok(g)
    }

    /// The rule set.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Padded index of point (x, y).
    #[inline(always)]
    fn cell(&self, x: usize, y: usize) -> usize {
        (y + PAD) * self.stride + x + PAD
    }

    /// Padded index of an action.
    #[inline(always)]
    pub fn cell_of(&self, m: Move) -> usize {
        let m = m as usize;
        self.cell(m % self.width, m / self.width)
    }

    /// Board coordinates (x, y) of a padded index: those of [`Gomoku::move_of`] without
    /// going through the action number.
    #[inline(always)]
    pub fn coords_of(&self, cell: usize) -> (usize, usize) {
        (cell % self.stride - PAD, cell / self.stride - PAD)
    }

    /// Action of a padded index.
    #[inline(always)]
    pub fn move_of(&self, cell: usize) -> Move {
        let y = cell / self.stride - PAD;
        let x = cell % self.stride - PAD;
        (y * self.width + x) as Move
    }

    /// Padded-index step of direction `d` (0 horizontal, 1 vertical, 2 diagonal, 3 anti-diagonal).
    #[inline(always)]
    pub fn delta(&self, d: usize) -> isize {
        match d {
            0 => 1,
            1 => self.stride as isize,
            2 => self.stride as isize + 1,
            _ => self.stride as isize - 1,
        }
    }

    /// Contents of a padded cell: [`pattern::EMPTY`], `BLACK`, `WHITE` or `WALL`.
    #[inline(always)]
    pub fn cell_value(&self, cell: usize) -> u8 {
        self.cells[cell]
    }

    /// The stone on a point, if any.
    pub fn stone(&self, m: Move) -> Option<Color> {
        match self.cells[self.cell_of(m)] {
            BLACK => Some(Color::Black),
            WHITE => Some(Color::White),
            _ => None,
        }
    }

    /// What `color` makes in direction `d` by playing the empty padded cell `cell`.
    /// Meaningless for occupied cells.
    #[inline(always)]
    pub fn pattern(&self, cell: usize, color: Color, d: usize) -> Pattern {
        Pattern::from_u8((self.pats[cell][d] >> (8 * color.index())) as u8)
    }

    /// The pattern `color` makes with a stone on the centre of the line key `key` (see
    /// [`pattern`]): lets renju analysis evaluate hypothetical lines.
    #[inline(always)]
    pub fn pattern_of_key(&self, key: u32, color: Color) -> Pattern {
        let v = self.table[table_index(key, self.narrow)];
        Pattern::from_u8((v >> (8 * color.index())) as u8)
    }

    /// The four direction patterns of `color` at `cell`.
    #[inline(always)]
    pub fn patterns(&self, cell: usize, color: Color) -> [Pattern; 4] {
        let p = &self.pats[cell];
        let s = 8 * color.index();
        [
            Pattern::from_u8((p[0] >> s) as u8),
            Pattern::from_u8((p[1] >> s) as u8),
            Pattern::from_u8((p[2] >> s) as u8),
            Pattern::from_u8((p[3] >> s) as u8),
        ]
    }

    /// The four direction patterns of both colours at `cell` in one word: direction `d` in
    /// bits `16 d .. 16 d + 16`, Black's pattern (`Pattern as u8`) in the low byte and
    /// White's in the high byte. Lets board scans index their own per-point tables without
    /// decoding each pattern.
    #[inline(always)]
    pub fn pattern_word(&self, cell: usize) -> u64 {
        let p = &self.pats[cell];
        p[0] as u64 | (p[1] as u64) << 16 | (p[2] as u64) << 32 | (p[3] as u64) << 48
    }

    /// Whether `color` playing the empty `cell` makes a four or better (`B4`, `F4`, `F5`) in
    /// some direction: one bit test over the four packed patterns (those are the only
    /// patterns with bit 3 set), for board scans that look for winning points.
    #[inline(always)]
    pub fn makes_four(&self, cell: usize, color: Color) -> bool {
        let p = &self.pats[cell];
        ((p[0] | p[1] | p[2] | p[3]) >> (8 * color.index())) & 0x08 != 0
    }

    /// Whether `color` playing the empty `cell` makes `min` or better in some direction: the
    /// four packed patterns compared at once (each pattern is below 128, so adding
    /// `128 - min` to its byte sets the byte's top bit exactly when it is at least `min`).
    /// A cheap filter for board scans that only care about strong points.
    #[inline(always)]
    pub fn has_pattern_at_least(&self, cell: usize, color: Color, min: Pattern) -> bool {
        let p = &self.pats[cell];
        let x = p[0] as u64 | (p[1] as u64) << 16 | (p[2] as u64) << 32 | (p[3] as u64) << 48;
        let v = (x >> (8 * color.index())) & 0x00FF_00FF_00FF_00FF;
        let k = (128 - min as u64) * 0x0001_0001_0001_0001;
        (v + k) & 0x0080_0080_0080_0080 != 0
    }

    /// The raw line key of `cell` in direction `d` (see [`pattern`]).
    #[inline(always)]
    pub fn line_key(&self, cell: usize, d: usize) -> u32 {
        self.keys[cell][d]
    }

    /// The empty cells where Black makes at least `black` or White at least `white` in some
    /// direction (`None`: that colour is not asked about), in increasing cell order: the
    /// points a scan of [`Gomoku::cell_range`] with [`Gomoku::has_pattern_at_least`] would
    /// find. Board scans of the threat searches use it; on x86-64 it compares sixteen
    /// cells' patterns per step without a branch per cell.
    pub fn cells_at_least(&self, black: Option<Pattern>, white: Option<Pattern>) -> CellBits {
        #[cfg(target_arch = "x86_64")]
        {
            self.cells_at_least_sse2(black, white)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.cells_at_least_scalar(black, white)
        }
    }

    /// [`Gomoku::cells_at_least`] one cell at a time (the portable version and the tests'
    /// reference).
    pub fn cells_at_least_scalar(
        &self,
        black: Option<Pattern>,
        white: Option<Pattern>,
    ) -> CellBits {
        let mut bits = CellBits::default();
        for c in self.cell_range() {
            if self.cells[c] == EMPTY
                && (black.is_some_and(|m| self.has_pattern_at_least(c, Color::Black, m))
                    || white.is_some_and(|m| self.has_pattern_at_least(c, Color::White, m)))
            {
                bits.insert(c);
            }
        }
        bits
    }

    #[cfg(target_arch = "x86_64")]
    fn cells_at_least_sse2(&self, black: Option<Pattern>, white: Option<Pattern>) -> CellBits {
        use std::arch::x86_64::*;
        // A pattern byte `v` is at least `m` when `v > m - 1` as signed bytes (patterns are
        // 0..=10, so `Dead` gives -1, always true, and `None` 127, never).
        let thr = |m: Option<Pattern>| m.map_or(127i8, |p| p as i8 - 1) as u8 as u16;
        let lane = (thr(white) << 8 | thr(black)) as i16;
        let range = self.cell_range();
        let mut bits = CellBits::default();
        // Blocks of 16 cells from the first board cell; the five padding rows after the
        // board keep every block inside `pats` and `cells`, and padding cells are walls (not
        // empty), so they never enter the set.
        debug_assert!(range.end + 16 <= self.cells.len() && self.cells.len() == self.pats.len());
        let pats = self.pats.as_ptr() as *const u8;
        let cells = self.cells.as_ptr();
        let mut base = range.start;
        // SAFETY: SSE2 is part of the x86-64 baseline. Every load reads 16 bytes at
        // `cells[base..base + 16]` or at `pats[q..q + 2]` (8 bytes per cell) with
        // `q + 2 <= base + 16 <= range.end + 15 < len` (asserted above in debug builds;
        // `cell_range` ends five padding rows before the arrays do); unaligned loads are
        // allowed by `_mm_loadu_si128`.
        unsafe {
            let t = _mm_set1_epi16(lane);
            let zero = _mm_setzero_si128();
            while base < range.end {
                let p = pats.add(base * 8);
                let g =
                    |i: usize| _mm_cmpgt_epi8(_mm_loadu_si128(p.add(16 * i) as *const __m128i), t);
                // Signed saturating packs keep a lane nonzero exactly when it was: three
                // levels fold each cell's eight pattern bytes into one byte, in cell order.
                let q0 = _mm_packs_epi16(_mm_packs_epi16(g(0), g(1)), _mm_packs_epi16(g(2), g(3)));
                let q1 = _mm_packs_epi16(_mm_packs_epi16(g(4), g(5)), _mm_packs_epi16(g(6), g(7)));
                let miss = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_packs_epi16(q0, q1), zero)) as u32;
                let c = _mm_loadu_si128(cells.add(base) as *const __m128i);
                let empty = _mm_movemask_epi8(_mm_cmpeq_epi8(c, zero)) as u32;
                let mut m = !miss & empty & 0xFFFF;
                while m != 0 {
                    bits.insert(base + m.trailing_zeros() as usize);
                    m &= m - 1;
                }
                base += 16;
            }
        }
        bits
    }

    /// The centre point (the first move on an empty board).
    pub fn centre(&self) -> Move {
        ((self.height / 2) * self.width + self.width / 2) as Move
    }

    /// Number of stones on the board.
    pub fn stones(&self) -> usize {
        self.history.len()
    }

    /// Padded cells of the stones in play order.
    pub fn history_cells(&self) -> impl DoubleEndedIterator<Item = (usize, Color)> + '_ {
        self.history.iter().map(|e| (e.cell as usize, e.color))
    }

    /// Whether a stone lies within two points of the padded `cell` on one of its four
    /// lines: the zone the move generators consider (`greedy::candidates`).
    pub fn near_stone(&self, cell: usize) -> bool {
        (0..4).any(|d| {
            let dd = self.delta(d);
            [-2isize, -1, 1, 2].iter().any(|&k| {
                let v = self.cells[(cell as isize + k * dd) as usize];
                v == BLACK || v == WHITE
            })
        })
    }

    /// The empty points with a stone within two of them on one of their four lines (those
    /// where [`Gomoku::near_stone`] holds), in increasing cell order: the points a scan of
    /// the board for move candidates visits. A copy of the kept set once
    /// [`Gomoku::track_near`] was called, else found by a look at every point.
    #[inline]
    pub fn near_empty(&self) -> CellBits {
        if self.near_tracked {
            return self.near_empty;
        }
        let mut bits = CellBits::default();
        for c in self.cell_range() {
            if self.cells[c] == EMPTY && self.near_stone(c) {
                bits.insert(c);
            }
        }
        bits
    }

    /// From now on, keeps [`Gomoku::near_empty`] up to date with every move and undo (a small
    /// cost to every move), so that a search that scans for candidates at every node reads
    /// it instead of looking at every point. Clones keep tracking.
    pub fn track_near(&mut self) {
        if self.near_tracked {
            return;
        }
        self.near.fill(0);
        for cell in self.history.iter().map(|e| e.cell as usize) {
            for d in 0..4 {
                let delta = self.delta(d);
                for k in [-2isize, -1, 1, 2] {
                    self.near[(cell as isize + k * delta) as usize] += 1;
                }
            }
        }
        // Still untracked here, so this looks at every point.
        self.near_empty = self.near_empty();
        self.near_tracked = true;
    }

    /// Range of padded indices that covers the whole board.
    pub fn cell_range(&self) -> std::ops::Range<usize> {
        self.cell(0, 0)..self.cell(self.width - 1, self.height - 1) + 1
    }

    /// Whether `color` playing the empty `cell` makes a winning five.
    #[inline]
    pub fn makes_five(&self, cell: usize, color: Color) -> bool {
        let p = &self.pats[cell];
        let s = 8 * color.index();
        p.iter().any(|&v| (v >> s) as u8 == Pattern::F5 as u8)
    }

    /// Renju: whether Black may not play the empty `cell`. Always false under other rules.
    pub fn is_forbidden(&self, cell: usize) -> bool {
        self.rule == Rule::Renju && renju::is_forbidden(self, cell)
    }

    /// The point the side to move is forced to play under 4T, if any.
    pub fn forced_point(&self) -> Option<Move> {
        match self.history.last() {
            Some(e) if e.forced != NONE && !e.won => Some(self.move_of(e.forced as usize)),
            _ => None,
        }
    }

    #[inline(always)]
    fn update_lines<const ADD: bool>(&mut self, cell: usize, v: u32) {
        match (self.narrow, self.near_tracked) {
            (true, false) => self.update_lines_reach::<true, ADD, false>(cell, v),
            (false, false) => self.update_lines_reach::<false, ADD, false>(cell, v),
            (true, true) => self.update_lines_reach::<true, ADD, true>(cell, v),
            (false, true) => self.update_lines_reach::<false, ADD, true>(cell, v),
        }
        if !self.near_tracked {
            return;
        }
        // The stone's own point: no longer empty, or empty again and near a stone as before.
        if ADD {
            self.near_empty.remove(cell);
        } else if self.near[cell] > 0 {
            self.near_empty.insert(cell);
        }
    }

    /// [`Gomoku::update_lines`] for the narrow (16-bit) or wide (20-bit) pattern keys: the
    /// two are separate so that each inner loop has fixed bounds (play and undo are about
    /// two fifths of the threat searches' time). `ADD`: the stone on `cell` was just placed
    /// (else just taken away); with `NEAR` the neighbours' counts of stones within two
    /// ([`Gomoku::near_empty`]) follow it.
    #[inline(always)]
    fn update_lines_reach<const NARROW: bool, const ADD: bool, const NEAR: bool>(
        &mut self,
        cell: usize,
        v: u32,
    ) {
        let reach = if NARROW { 4 } else { 5 };
        // The stone is on the board, so every cell within five of it on a line lies inside
        // the five-cell padding: the indices below are in bounds (checked in debug builds).
        debug_assert!(
            cell >= 5 * (self.stride + 1) && cell + 5 * (self.stride + 1) < self.keys.len()
        );
        let deltas = [0, 1, 2, 3].map(|d| self.delta(d));
        let keys = &mut self.keys[..];
        let pats = &mut self.pats[..];
        let near = &mut self.near[..];
        let cells = &self.cells[..];
        let bits = &mut self.near_empty.0;
        let table = self.table;
        for (d, &delta) in deltas.iter().enumerate() {
            for k in 1..=5usize {
                let fwd = (cell as isize + k as isize * delta) as usize;
                let back = (cell as isize - k as isize * delta) as usize;
                // `cell` sits at offset -k from `fwd` (slot 5-k) and +k from `back` (slot 4+k).
                // SAFETY: `fwd` and `back` are within five cells of an on-board `cell` on a
                // line, inside the padding (asserted above), so below `keys.len()` ==
                // `pats.len()` == `near.len()` == `cells.len()` (one entry per padded cell),
                // and `fwd >> 6`, `back >> 6` are below `BIT_WORDS` (a padded index of any
                // board is below `MAX_STRIDE * MAX_STRIDE`); a narrow key index is masked to
                // 16 bits and a wide one has 20 (ten 2-bit cells), the sizes of the narrow
                // and wide tables.
                unsafe {
                    let kf = keys.get_unchecked_mut(fwd).get_unchecked_mut(d);
                    *kf ^= v << (2 * (5 - k));
                    let kf = *kf;
                    let kb = keys.get_unchecked_mut(back).get_unchecked_mut(d);
                    *kb ^= v << (2 * (4 + k));
                    let kb = *kb;
                    if k <= reach {
                        *pats.get_unchecked_mut(fwd).get_unchecked_mut(d) =
                            *table.get_unchecked(table_index(kf, NARROW));
                        *pats.get_unchecked_mut(back).get_unchecked_mut(d) =
                            *table.get_unchecked(table_index(kb, NARROW));
                    }
                    if NEAR && k <= 2 {
                        for n in [fwd, back] {
                            let c = near.get_unchecked_mut(n);
                            let w = bits.get_unchecked_mut(n >> 6);
                            if ADD {
                                *c += 1;
                                if *cells.get_unchecked(n) == EMPTY {
                                    *w |= 1 << (n & 63);
                                }
                            } else {
                                *c -= 1;
                                if *c == 0 {
                                    *w &= !(1 << (n & 63));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// 4T: the number of distinct completion points `color` gets by playing the empty `cell`
    /// (empty cells of five-cell windows through `cell`, on the board, free of opponent
    /// stones, holding four stones of `color`: the rule text of the shared README, §7.1),
    /// capped at 3 per direction, and the first of them (or NONE). Windows in different
    /// directions share only `cell`, so the per-direction counts add up. Only under 4T.
    #[inline]
    fn completion_points(&self, cell: usize, color: Color) -> (usize, u16) {
        let s = 8 * color.index();
        let mut n = 0;
        let mut first = NONE;
        for d in 0..4 {
            let v = (self.four_t[table_index(self.keys[cell][d], true)] >> s) & 0xFF;
            let c = (v & 3) as usize;
            if c > 0 && n == 0 {
                let off = (v >> 4) as isize - 4;
                first = (cell as isize + off * self.delta(d)) as u16;
            }
            n += c;
        }
        (n, first)
    }

    /// 4T: how many distinct completion points `color` would get by playing the empty
    /// `cell` (see the rule in the shared README, §7.1): two or more win at once, one forces
    /// the opponent's reply. Directions with more than three count three. Zero under the
    /// other rules.
    #[inline]
    pub fn four_t_completions(&self, cell: usize, color: Color) -> usize {
        if self.rule != Rule::FourT {
            return 0;
        }
        self.completion_points(cell, color).0
    }

    /// Places a stone of `color` (setup: protocol BOARD, SGF), after which the other colour is
    /// to move. Checks the point but not whose turn it is.
    pub fn place(&mut self, m: Move, color: Color) -> Result<(), MoveError> {
        if m as usize >= self.width * self.height {
            return Err(MoveError::OffBoard);
        }
        if self.cells[self.cell_of(m)] != EMPTY {
            return Err(MoveError::Occupied);
        }
        if self.to_move != color {
            self.hash ^= ZOBRIST.side;
            self.to_move = color;
        }
        self.play_unchecked(m);
        Ok(())
    }

    /// Sets the side to move (e.g. a Gomocup BOARD where the brain's colour is known).
    pub fn set_to_move(&mut self, color: Color) {
        if self.to_move != color {
            self.hash ^= ZOBRIST.side;
            self.to_move = color;
        }
    }

    /// Forbidden points for Black (renju), as actions.
    pub fn forbidden_points(&self) -> Vec<Move> {
        if self.rule != Rule::Renju {
            return Vec::new();
        }
        self.cell_range()
            .filter(|&c| self.cells[c] == EMPTY && self.is_forbidden(c))
            .map(|c| self.move_of(c))
            .collect()
    }
}

/// A set of padded cells of a board (one bit each), iterated in increasing cell order.
#[derive(Copy, Clone, Default, PartialEq, Eq)]
pub struct CellBits([u64; BIT_WORDS]);

impl fmt::Debug for CellBits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl CellBits {
    /// Adds a padded cell (every padded index is below the set's capacity).
    #[inline(always)]
    pub fn insert(&mut self, cell: usize) {
        self.0[cell >> 6] |= 1 << (cell & 63);
    }

    /// Removes a padded cell.
    #[inline(always)]
    pub fn remove(&mut self, cell: usize) {
        self.0[cell >> 6] &= !(1 << (cell & 63));
    }

    /// Whether the set holds `cell`.
    #[inline(always)]
    pub fn contains(&self, cell: usize) -> bool {
        self.0
            .get(cell >> 6)
            .is_some_and(|w| w >> (cell & 63) & 1 != 0)
    }

    /// Number of cells in the set.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The cells in increasing order.
    #[inline]
    pub fn iter(&self) -> CellBitsIter {
        CellBitsIter {
            words: self.0,
            i: 0,
            cur: self.0[0],
        }
    }
}

/// Iterator over a [`CellBits`] copy, lowest cell first.
pub struct CellBitsIter {
    words: [u64; BIT_WORDS],
    i: usize,
    cur: u64,
}

impl Iterator for CellBitsIter {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            self.i += 1;
            if self.i >= BIT_WORDS {
                return None;
            }
            self.cur = self.words[self.i];
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.i * 64 + b)
    }
}

impl Game for Gomoku {
    fn name(&self) -> String {
        format!("gomoku-{}", self.rule.name())
    }
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    fn num_actions(&self) -> usize {
        self.width * self.height
    }
    fn to_move(&self) -> Color {
        self.to_move
    }
    fn ply(&self) -> usize {
        self.history.len()
    }
    fn last_move(&self) -> Option<Move> {
        self.history.last().map(|e| self.move_of(e.cell as usize))
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        if self.outcome().is_some() {
            return;
        }
        if let Some(f) = self.forced_point() {
            out.push(f);
            return;
        }
        let renju_black = self.rule == Rule::Renju && self.to_move == Color::Black;
        for y in 0..self.height {
            let row = self.cell(0, y);
            for x in 0..self.width {
                let c = row + x;
                if self.cells[c] == EMPTY && !(renju_black && renju::is_forbidden(self, c)) {
                    out.push((y * self.width + x) as Move);
                }
            }
        }
    }

    fn check_move(&self, m: Move) -> Result<(), MoveError> {
        if m as usize >= self.width * self.height {
            return Err(MoveError::OffBoard);
        }
        let c = self.cell_of(m);
        if self.cells[c] != EMPTY {
            return Err(MoveError::Occupied);
        }
        if self.outcome().is_some() {
            return Err(MoveError::GameOver);
        }
        if let Some(f) = self.forced_point() {
            if f != m {
                return Err(MoveError::Illegal("the four must be blocked"));
            }
        }
        if self.to_move == Color::Black && self.is_forbidden(c) {
            return Err(MoveError::Forbidden);
        }
        Ok(())
    }

    #[inline]
    fn play_unchecked(&mut self, m: Move) {
        let cell = self.cell_of(m);
        let color = self.to_move;
        let (won, forced) = if self.rule == Rule::FourT {
            let (n, f) = self.completion_points(cell, color);
            (n >= 2, if n == 1 { f } else { NONE })
        } else {
            (self.makes_five(cell, color), NONE)
        };
        let v = color.index() as u32 + 1;
        self.cells[cell] = v as u8;
        self.update_lines::<true>(cell, v);
        self.hash ^= ZOBRIST.key(cell, color.index()) ^ ZOBRIST.side;
        self.to_move = color.opp();
        // Only Black has forbidden points; the scan stops at the first empty point that is
        // not forbidden, almost always the first one looked at.
        let stuck = !won
            && self.rule == Rule::Renju
            && color == Color::White
            && self
                .cell_range()
                .all(|c| self.cells[c] != EMPTY || renju::is_forbidden(self, c));
        self.history.push(Entry {
            cell: cell as u16,
            color,
            won,
            forced,
            stuck,
        });
    }

    fn undo(&mut self) -> Option<Move> {
        let e = self.history.pop()?;
        let cell = e.cell as usize;
        let v = e.color.index() as u32 + 1;
        self.cells[cell] = EMPTY;
        self.update_lines::<false>(cell, v);
        self.hash ^= ZOBRIST.key(cell, e.color.index());
        if self.to_move != e.color.opp() {
            // A setup stone changed the side to move; restore the state before it.
            self.hash ^= ZOBRIST.side;
        }
        self.hash ^= ZOBRIST.side;
        self.to_move = e.color;
        Some(self.move_of(cell))
    }

    fn outcome(&self) -> Option<Outcome> {
        match self.history.last() {
            Some(e) if e.won => Some(Outcome::Win(e.color)),
            _ if self.history.len() == self.width * self.height => Some(Outcome::Draw),
            // Renju: Black to move with every empty point forbidden cannot move (no passes
            // in Gomoku): a draw, so that no side is said to win a game nobody can go on with.
            Some(e) if e.stuck && self.to_move == Color::Black => Some(Outcome::Draw),
            _ => None,
        }
    }

    fn hash(&self) -> u64 {
        self.hash
    }

    fn move_to_gtp(&self, m: Move) -> String {
        let m = m as usize;
        gtp_vertex(m % self.width, m / self.width)
    }

    fn parse_gtp(&self, s: &str) -> Result<Move, MoveError> {
        let (x, y) = parse_gtp_vertex(s, self.width, self.height)?;
        Ok((y * self.width + x) as Move)
    }

    fn input_planes(&self) -> usize {
        4
    }

    /// PCN Gomoku encoding: own stones, opponent stones, Black-to-move, White-to-move.
    fn encode_input(&self, out: &mut [f32]) {
        let n = self.width * self.height;
        out[..4 * n].fill(0.0);
        let own = self.to_move.index() as u8 + 1;
        for a in 0..n {
            match self.cells[self.cell_of(a as Move)] {
                EMPTY => {}
                v if v == own => out[a] = 1.0,
                _ => out[n + a] = 1.0,
            }
        }
        let plane = 2 + self.to_move.index();
        out[plane * n..(plane + 1) * n].fill(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(g: &Gomoku, s: &str) -> Move {
        g.parse_gtp(s).expect("vertex")
    }

    /// The rule text of 4T (shared README §7.1) as a plain scan: distinct empty cells of
    /// five-cell windows through `cell` holding four stones of `color` (with `cell`) and no
    /// opponent stone or wall. The oracle of the table-driven [`Gomoku::four_t_completions`].
    fn completions_by_scan(g: &Gomoku, cell: usize, color: Color) -> (usize, Vec<usize>) {
        let own = color.index() as u8 + 1;
        let mut found = Vec::new();
        for d in 0..4 {
            let delta = g.delta(d);
            for start in -4isize..=0 {
                let mut count = 0;
                let mut empty = None;
                let mut ok = true;
                for i in start..start + 5 {
                    let q = (cell as isize + i * delta) as usize;
                    match g.cells[q] {
                        _ if q == cell => count += 1,
                        v if v == own => count += 1,
                        EMPTY => empty = Some(q),
                        _ => ok = false,
                    }
                }
                if let (true, 4, Some(e)) = (ok, count, empty) {
                    if !found.contains(&e) {
                        found.push(e);
                    }
                }
            }
        }
        (found.len(), found)
    }

    #[test]
    fn four_t_completions_match_the_rule_scan() {
        // Dense random boards (both colours, edges included) so that fours, open fours,
        // double fours in one line and blocked windows all occur; every empty cell, both colours.
        let mut rng = crate::util::Rng::new(0x4747);
        let mut checked = [0usize; 3];
        for board in 0..300 {
            let size = 5 + board % 11;
            let mut g = Gomoku::new(size, size, Rule::FourT).unwrap();
            let fill = 20 + rng.below(50);
            for c in g.cell_range() {
                if g.cells[c] == EMPTY && rng.below(100) < fill {
                    let color = if rng.below(2) == 0 {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let v = color.index() as u32 + 1;
                    g.cells[c] = v as u8;
                    g.update_lines::<true>(c, v);
                }
            }
            for c in g.cell_range() {
                if g.cells[c] != EMPTY {
                    continue;
                }
                for color in [Color::Black, Color::White] {
                    let (n, pts) = completions_by_scan(&g, c, color);
                    let (tn, first) = g.completion_points(c, color);
                    assert_eq!(tn, n, "count at {c} for {color:?}");
                    let four = g.patterns(c, color).iter().any(|&x| x >= Pattern::B4);
                    assert_eq!(g.makes_four(c, color), four, "makes_four at {c}");
                    if n == 1 {
                        assert_eq!(first as usize, pts[0], "forced point at {c}");
                    }
                    if n == 0 {
                        assert_eq!(first, NONE);
                    }
                    checked[n.min(2)] += 1;
                }
            }
        }
        // The sample must exercise every case, or the test proves little.
        assert!(checked.iter().all(|&k| k > 100), "{checked:?}");
    }

    /// The cell sets of [`Gomoku::cells_at_least`] (the vector scan on x86-64) equal the
    /// cell-by-cell scan along random games with take-backs, under every rule and on the
    /// smallest, the usual and the largest boards, for every pair of thresholds the threat
    /// searches ask (and some they do not, the always-true `Dead` included). Along the same
    /// games, the kept [`Gomoku::near_empty`] equals a look at every point, and tracking
    /// switched on in mid-game starts from the same state.
    #[test]
    fn cells_at_least_matches_the_cell_scan() {
        let mins = [
            None,
            Some(Pattern::Dead),
            Some(Pattern::B1),
            Some(Pattern::F1),
            Some(Pattern::B3),
            Some(Pattern::F3),
            Some(Pattern::B4),
            Some(Pattern::F4),
            Some(Pattern::F5),
        ];
        let mut rng = crate::util::Rng::new(0xCE11);
        let mut compared = 0usize;
        let mut nonempty = 0usize;
        for (i, &rule) in Rule::ALL.iter().enumerate() {
            for (w, h) in [
                (15, 15),
                (20, 20),
                (MIN_SIZE, MIN_SIZE),
                (MAX_SIZE, MAX_SIZE),
                (7, 19),
            ] {
                let mut g = Gomoku::new(w, h, rule).unwrap();
                g.track_near();
                assert!(g.near_empty().is_empty());
                let mut legal = Vec::new();
                for step in 0..(w * h).min(160) {
                    // Mostly forward, sometimes back: sets must follow undo as well as play.
                    if g.stones() > 0 && rng.below(4) == 0 {
                        g.undo();
                    } else {
                        g.legal_moves(&mut legal);
                        if legal.is_empty() {
                            break;
                        }
                        g.play_unchecked(legal[rng.below(legal.len())]);
                    }
                    let near: Vec<usize> = g
                        .cell_range()
                        .filter(|&c| g.cells[c] == EMPTY && g.near_stone(c))
                        .collect();
                    assert_eq!(g.near_empty().iter().collect::<Vec<_>>(), near, "{g:?}");
                    let mut late = g.clone();
                    late.near_tracked = false;
                    late.track_near();
                    assert_eq!(
                        (late.near_empty, &late.near),
                        (g.near_empty, &g.near),
                        "{g:?}"
                    );
                    if (step + i) % 3 != 0 {
                        continue;
                    }
                    for &b in &mins {
                        for &wm in &mins {
                            let fast = g.cells_at_least(b, wm);
                            let slow = g.cells_at_least_scalar(b, wm);
                            assert_eq!(fast, slow, "{rule:?} {w}x{h} {b:?} {wm:?}\n{g:?}");
                            let order: Vec<usize> = fast.iter().collect();
                            assert!(order.windows(2).all(|p| p[0] < p[1]));
                            assert_eq!(order.len(), fast.len());
                            compared += 1;
                            nonempty += !fast.is_empty() as usize;
                        }
                    }
                }
            }
        }
        // The sample must hold many non-trivial sets, or the test proves little.
        assert!(
            compared > 10_000 && nonempty > compared / 2,
            "{compared} {nonempty}"
        );
    }

    #[test]
    fn five_wins_and_undo_restores() {
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let fresh = g.clone();
        for s in ["H8", "A1", "J8", "A2", "K8", "A3", "L8", "A4"] {
            g.play(mv(&g, s)).unwrap();
        }
        assert_eq!(g.outcome(), None);
        g.play(mv(&g, "G8")).unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Color::Black)));
        assert_eq!(g.play(mv(&g, "B1")), Err(MoveError::GameOver));
        while g.undo().is_some() {}
        assert_eq!(g.hash(), fresh.hash());
        for c in g.cell_range() {
            if g.cells[c] != WALL {
                assert_eq!(g.keys[c], fresh.keys[c]);
                assert_eq!(g.pats[c], fresh.pats[c]);
            }
        }
    }

    #[test]
    fn overline_under_exact() {
        let mut g = Gomoku::new(15, 15, Rule::Exact).unwrap();
        for s in ["A8", "A1", "B8", "A2", "C8", "A3", "E8", "A4", "F8", "O15"] {
            g.play(mv(&g, s)).unwrap();
        }
        g.play(mv(&g, "D8")).unwrap();
        assert_eq!(
            g.outcome(),
            None,
            "six in a row does not win under exact five"
        );
    }

    #[test]
    fn four_t_forces_block() {
        let mut g = Gomoku::new(15, 15, Rule::FourT).unwrap();
        for s in ["H8", "A1", "J8", "A2", "K8", "O15"] {
            g.play(mv(&g, s)).unwrap();
        }
        g.play(mv(&g, "G8")).unwrap(); // open four: two completion points -> win at once
        assert_eq!(g.outcome(), Some(Outcome::Win(Color::Black)));
        g.undo();
        g.undo();
        g.play(mv(&g, "G8")).unwrap(); // White blocks one end instead
        g.play(mv(&g, "L8")).unwrap(); // H8..L8: one completion point (M8)
        assert_eq!(g.outcome(), None);
        assert_eq!(g.forced_point(), Some(mv(&g, "M8")));
        assert!(matches!(g.play(mv(&g, "A3")), Err(MoveError::Illegal(_))));
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        assert_eq!(legal, vec![mv(&g, "M8")]);
    }

    /// Renju: after White's A6 the only empty points of this 6x6 board, D4 and E5, are
    /// forbidden for Black, who cannot move: the game is a draw.
    #[test]
    fn renju_black_without_a_legal_move_is_a_draw() {
        let mut g = Gomoku::new(6, 6, Rule::Renju).unwrap();
        let moves = [
            "D5", "C1", "C6", "D6", "A4", "F5", "E2", "A1", "F2", "D3", "A3", "A5", "E6", "B1",
            "F6", "C3", "D1", "B6", "E1", "C5", "F3", "B3", "E3", "D2", "E4", "F1", "A2", "B2",
            "B4", "C2", "C4", "B5", "F4", "A6",
        ];
        for s in moves {
            assert_eq!(g.outcome(), None, "before {s}");
            let m = g.parse_gtp(s).unwrap();
            g.play(m).unwrap();
        }
        assert_eq!(g.to_move(), Color::Black);
        assert_eq!(g.outcome(), Some(Outcome::Draw));
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        assert!(legal.is_empty());
        assert_eq!(g.forbidden_points().len(), 2);
        g.undo();
        assert_eq!(g.outcome(), None);
        // The same stones under freestyle leave Black two moves.
        let mut f = Gomoku::new(6, 6, Rule::Freestyle).unwrap();
        for s in moves {
            let m = f.parse_gtp(s).unwrap();
            f.play(m).unwrap();
        }
        assert_eq!(f.outcome(), None);
    }
}

#[cfg(test)]
mod caro_tests {
    use super::*;

    /// A caro four whose two completion points are both killed by one block is not an open
    /// four: here Black's G5 takes one completion, and the other five (G6-G10) is then closed by
    /// G5 and Black's G11.
    #[test]
    fn caro_four_killed_by_one_block() {
        let mut g = Gomoku::new(15, 15, Rule::Caro).unwrap();
        for s in ["F10", "H10", "J9", "G9", "J11", "G8", "G11", "G7", "H11"] {
            let m = g.parse_gtp(s).unwrap();
            g.play(m).unwrap();
        }
        let g6 = g.cell_of(g.parse_gtp("G6").unwrap());
        let pats = g.patterns(g6, Color::White);
        assert!(!pats.contains(&Pattern::F4), "{pats:?}");
        assert_eq!(pats[1], Pattern::B4, "{pats:?}");
    }
}
