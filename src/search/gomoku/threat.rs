//! Threat-space search for Gomoku: VCF (victory by continuous fours) and VCT (victory by
//! continuous threats: fours and open threes), aware of every [`Rule`]: exact five, caro,
//! renju forbidden points for Black as attacker and as defender, and the 4T variant (a four
//! forces its block; two completion points win at once).
//!
//! Both searches are AND/OR proofs. At an attacker node the attacker either wins at once, or
//! plays a threat; at a defender node every reply that could stop the threat is searched and
//! must be refuted. Replies that cannot matter are skipped only when that is provably safe, so a
//! returned line is always a sound win (the searches may miss wins: they are bounded by depth
//! and budget).
//!
//! Depth counts attacker moves before the finishing ones: at depth 0 the attacker still wins
//! with an immediate five or an unstoppable open four / four-four (4T: a double completion).
//! Use [`ThreatSolver`] to keep the failure table between searches; [`vcf`]/[`vct`] allocate
//! a fresh one per call. Failed positions are remembered in a small fixed-size table
//! (hash -> depth searched), so a transposition is not searched again at the same or a
//! smaller depth.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{Budget, Limits};
use crate::game::gomoku::pattern::EMPTY;
use crate::game::gomoku::{CellBits, Gomoku, Pattern, Rule};
use crate::game::{Color, Game, Move, Outcome};
use crate::util::pages::{ZeroValid, ZeroedTable};

/// Whether `color` playing the empty `cell` wins at once: a five, or under 4T (where fives are
/// never checked) a move with two or more completion points (an open four, two fours in one
/// line, or fours in two lines).
#[inline]
pub fn wins_at(g: &Gomoku, cell: usize, color: Color) -> bool {
    if !g.makes_four(cell, color) {
        return false;
    }
    if g.rule() == Rule::FourT {
        // 4T never checks fives; two completion points win (a five-making move included,
        // when its five-cell windows leave two empty points).
        return four_t_completions(g, cell, color) >= 2;
    }
    g.makes_five(cell, color)
}

/// 4T: the number of distinct completion points `color` would get by playing the empty
/// `cell` (see [`Gomoku::four_t_completions`]).
#[inline]
pub fn four_t_completions(g: &Gomoku, cell: usize, color: Color) -> usize {
    g.four_t_completions(cell, color)
}

/// Whether `color` may play the empty `cell` (renju forbidden points; a five is always allowed).
#[inline]
pub fn allowed(g: &Gomoku, cell: usize, color: Color) -> bool {
    !(color == Color::Black && g.rule() == Rule::Renju && g.is_forbidden(cell))
}

/// Whether `color` playing the empty `cell` (assumed not to win at once) leaves it two or more
/// winning points the opponent cannot both block: an open four (or, outside renju Black, two
/// fours). Under 4T such a move wins at once. Checks renju legality.
#[inline]
pub fn makes_winning_threat(g: &Gomoku, cell: usize, color: Color) -> bool {
    if g.rule() == Rule::FourT {
        return wins_at(g, cell, color);
    }
    let p = g.patterns(cell, color);
    let black_renju = color == Color::Black && g.rule() == Rule::Renju;
    let hit = if black_renju {
        // A legal black F4 is a straight four (two fours in one line are forbidden).
        p.contains(&Pattern::F4)
    } else {
        p.contains(&Pattern::F4)
            || p.iter()
                .filter(|&&x| x == Pattern::B4 || x == Pattern::F4)
                .count()
                >= 2
    };
    hit && (!black_renju || !g.is_forbidden(cell))
}

/// Exact version of [`makes_winning_threat`]: under caro a four's five can be killed by
/// blocking its far end, so there the claim is verified by trying every reply on the lines
/// through `cell`; under the other rules it is the pattern test. The game is left unchanged.
pub fn is_winning_threat(g: &mut Gomoku, cell: usize, color: Color) -> bool {
    if !makes_winning_threat(g, cell, color) {
        return false;
    }
    if !matches!(g.rule(), Rule::Caro | Rule::CaroExact) {
        return true;
    }
    // The check may run with either side to move (defender nodes ask about the attacker).
    let saved = g.to_move();
    g.set_to_move(color);
    g.play_unchecked(g.move_of(cell));
    let mut ok = true;
    let mut region = Vec::with_capacity(40);
    region_cells(g, cell, 5, &mut region);
    for r in region {
        g.play_unchecked(g.move_of(r));
        let alive = has_five_near(g, cell, color);
        g.undo();
        if !alive {
            ok = false;
            break;
        }
    }
    g.undo();
    g.set_to_move(saved);
    ok
}

/// Empty cells on the four lines through `cell` within `reach` (excluding `cell`).
fn region_cells(g: &Gomoku, cell: usize, reach: isize, out: &mut Vec<usize>) {
    out.clear();
    for d in 0..4 {
        let delta = g.delta(d);
        for k in -reach..=reach {
            if k == 0 {
                continue;
            }
            let q = (cell as isize + k * delta) as usize;
            if g.cell_value(q) == EMPTY {
                out.push(q);
            }
        }
    }
}

/// Whether `color` has a five point on the lines through `cell` (within 4).
fn has_five_near(g: &Gomoku, cell: usize, color: Color) -> bool {
    for d in 0..4 {
        let delta = g.delta(d);
        for k in -4isize..=4 {
            let q = (cell as isize + k * delta) as usize;
            if k != 0 && g.cell_value(q) == EMPTY && g.makes_five(q, color) {
                return true;
            }
        }
    }
    false
}

/// The empty cells where `color` makes at least `min` or its opponent at least `opp_min`
/// (see [`Gomoku::cells_at_least`]), in cell order.
#[inline]
fn at_least(g: &Gomoku, color: Color, min: Pattern, opp_min: Option<Pattern>) -> CellBits {
    match color {
        Color::Black => g.cells_at_least(Some(min), opp_min),
        Color::White => g.cells_at_least(opp_min, Some(min)),
    }
}

/// Whether `color` playing `cell` makes at least one four (some direction B4/F4).
#[inline]
fn is_four_move(p: &[Pattern; 4]) -> bool {
    p.iter().any(|&x| x >= Pattern::B4)
}

/// Ordering score of a threat move: stronger combined patterns first.
fn move_score(p: &[Pattern; 4]) -> i32 {
    const W: [i32; 11] = [0, 0, 1, 2, 4, 8, 10, 40, 50, 200, 1000];
    p.iter().map(|&x| W[x as usize]).sum()
}

/// The point where the side to move wins at once, if any (five; 4T: two completion points).
/// Respects a 4T forced point.
pub fn immediate_win(g: &Gomoku) -> Option<Move> {
    if g.outcome().is_some() {
        return None;
    }
    let me = g.to_move();
    if let Some(f) = g.forced_point() {
        return wins_at(g, g.cell_of(f), me).then_some(f);
    }
    // A winning point makes a four.
    at_least(g, me, Pattern::B4, None)
        .iter()
        .find(|&c| wins_at(g, c, me))
        .map(|c| g.move_of(c))
}

/// The opponent's immediate winning points (its fives; under 4T, where fives are not checked,
/// its double-completion points), which the side to move must occupy unless it wins first.
/// Under 4T, when a forced point exists it is the only entry. Two or more entries mean the
/// side to move cannot block them all by occupation (under caro a five can also be killed by
/// closing its far end; this helper does not list those moves).
pub fn must_block(g: &Gomoku) -> Vec<Move> {
    if let Some(f) = g.forced_point() {
        return vec![f];
    }
    let opp = g.to_move().opp();
    at_least(g, opp, Pattern::B4, None)
        .iter()
        .filter(|&c| wins_at(g, c, opp))
        .map(|c| g.move_of(c))
        .collect()
}

/// Against the opponent's winning threats (points where the opponent would make an open four,
/// or two fours): the moves of the side to move that leave it without any such point, plus the
/// side to move's own four moves (which gain tempo). `None` when the opponent has no such
/// threat. Does not consider fives: check [`must_block`] first.
pub fn threat_defences(g: &mut Gomoku) -> Option<Vec<Move>> {
    let me = g.to_move();
    let opp = me.opp();
    // A winning threat makes a four.
    let threats: Vec<usize> = at_least(g, opp, Pattern::B4, None)
        .iter()
        .filter(|&c| makes_winning_threat(g, c, opp))
        .collect();
    let any_real = threats.into_iter().any(|c| is_winning_threat(g, c, opp));
    if !any_real {
        return None;
    }
    let mut out = Vec::new();
    let cells: Vec<usize> = g
        .cell_range()
        .filter(|&c| g.cell_value(c) == EMPTY)
        .collect();
    for c in cells {
        if !allowed(g, c, me) {
            continue;
        }
        if is_four_move(&g.patterns(c, me)) {
            out.push(g.move_of(c));
            continue;
        }
        g.play_unchecked(g.move_of(c));
        let threats_left: Vec<usize> = at_least(g, opp, Pattern::B4, None)
            .iter()
            .filter(|&p| makes_winning_threat(g, p, opp))
            .collect();
        let stopped = !threats_left
            .into_iter()
            .any(|p| is_winning_threat(g, p, opp));
        g.undo();
        if stopped {
            out.push(g.move_of(c));
        }
    }
    Some(out)
}

#[derive(Copy, Clone, Default)]
struct TtEntry {
    key: u64,
    depth: u32,
}

// SAFETY: two integer fields; all-zero is the empty entry (`Default`).
unsafe impl ZeroValid for TtEntry {}

/// A proven win of the side to move: the position key and the winning move.
#[derive(Copy, Clone, Default)]
struct WinEntry {
    key: u64,
    mv: Move,
}

// SAFETY: two integer fields (`Move` is a `u16`); all-zero is the empty entry (`Default`).
unsafe impl ZeroValid for WinEntry {}

/// A reusable VCF/VCT solver owning its table of failed positions and a table of the wins it
/// proved on the way (every attacker node of a successful line or tree), so a later caller
/// can follow a proof without searching again ([`ThreatSolver::cached_win`]).
pub struct ThreatSolver {
    tt: ZeroedTable<TtEntry>,
    wins: ZeroedTable<WinEntry>,
    hint: Option<u64>,
    /// A search ran since the tables were made or cleared (else they are all zero).
    used: bool,
}

impl Default for ThreatSolver {
    fn default() -> Self {
        ThreatSolver::new(16)
    }
}

impl ThreatSolver {
    /// A solver whose failure table has `2^bits` entries (clamped to 10..=24 bits).
    pub fn new(bits: u32) -> Self {
        Self::make(bits, false)
    }

    /// [`ThreatSolver::new`] with its tables on huge pages where the system has them
    /// ([`ZeroedTable::huge`]): for a solver that fills them, such as the player's, which
    /// runs a threat search at many of its leaves.
    pub fn dense(bits: u32) -> Self {
        Self::make(bits, true)
    }

    fn make(bits: u32, huge: bool) -> Self {
        let bits = bits.clamp(10, 24);
        ThreatSolver {
            tt: ZeroedTable::with_pages(1 << bits, huge),
            wins: ZeroedTable::with_pages(1 << bits, huge),
            hint: None,
            used: false,
        }
    }

    /// Move-ordering hint for the following searches: at each attacker node, a move the win
    /// table holds for this position is tried first, and so is one it holds for the position
    /// whose hash differs by `xor` (e.g. a sibling that differs in one defender stone, whose
    /// proof is likely to work here too). Ordering only: results stay proven by search.
    /// `None` turns hints off (the default; plain [`vcf`]/[`vct`] behaviour).
    pub fn set_hint(&mut self, xor: Option<u64>) {
        self.hint = xor;
    }

    /// Forgets the failure and win tables.
    pub fn clear(&mut self) {
        // Unused tables are all zero already; leaving them alone keeps their pages unmapped.
        if std::mem::take(&mut self.used) {
            self.tt.zero();
            self.wins.zero();
        }
    }

    /// A winning move for the side to move in `g` proven by an earlier search of this solver
    /// (VCF or VCT, any depth), if the table still holds it. The move is checked to be legal.
    pub fn cached_win(&self, g: &Gomoku) -> Option<Move> {
        if g.outcome().is_some() {
            return None;
        }
        let key = win_key(g);
        let e = self.wins[(key as usize) & (self.wins.len() - 1)];
        if e.key != key {
            return None;
        }
        let c = g.cell_of(e.mv);
        let legal = g.cell_value(c) == EMPTY
            && g.forced_point().is_none_or(|f| f == e.mv)
            && allowed(g, c, g.to_move());
        legal.then_some(e.mv)
    }

    /// VCF for the side to move: see [`vcf`].
    pub fn vcf(
        &mut self,
        game: &mut Gomoku,
        budget: &mut Budget,
        max_depth: u32,
    ) -> Option<Vec<Move>> {
        self.run(game, budget, max_depth, false)
    }

    /// VCT for the side to move: see [`vct`].
    pub fn vct(
        &mut self,
        game: &mut Gomoku,
        budget: &mut Budget,
        max_depth: u32,
    ) -> Option<Vec<Move>> {
        self.run(game, budget, max_depth, true)
    }

    fn run(
        &mut self,
        game: &mut Gomoku,
        budget: &mut Budget,
        max_depth: u32,
        vct: bool,
    ) -> Option<Vec<Move>> {
        if game.outcome().is_some() {
            return None;
        }
        let ply = game.ply();
        self.used = true;
        let mut s = Search {
            g: game,
            budget,
            tt: &mut self.tt,
            wins: &mut self.wins,
            hint: self.hint,
            vct,
            aborted: false,
        };
        let r = s.attack(max_depth);
        debug_assert_eq!(s.g.ply(), ply);
        r.map(|mut v| {
            v.reverse();
            v
        })
    }
}

/// Victory by continuous fours for the side to move, within `max_depth` attacker moves.
/// Returns the winning line (attacker move, forced reply, ..., the winning move), or `None`
/// when no win was found (none exists within the depth, or the budget ran out). The game is
/// left unchanged.
pub fn vcf(game: &mut Gomoku, budget: &mut Budget, max_depth: u32) -> Option<Vec<Move>> {
    ThreatSolver::new(14).vcf(game, budget, max_depth)
}

/// Victory by continuous threats (fours and open threes) for the side to move, within
/// `max_depth` attacker moves. Every defence that could stop a three (its defence points and
/// every counter-four) is refuted, so a returned line is a proven win; the line follows the
/// first defence searched. `None` when no win was found.
pub fn vct(game: &mut Gomoku, budget: &mut Budget, max_depth: u32) -> Option<Vec<Move>> {
    ThreatSolver::new(16).vct(game, budget, max_depth)
}

/// The win-table key of a position before the low bit is set: stones, side to move and the
/// 4T forced point. Linear in the hash, so hints can xor a stone difference into it.
fn raw_win_key(g: &Gomoku) -> u64 {
    let mut k = g.hash();
    if let Some(f) = g.forced_point() {
        k ^= (f as u64 + 1).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    }
    k
}

/// The win-table key of a position (never 0, the empty entry's key).
fn win_key(g: &Gomoku) -> u64 {
    raw_win_key(g) | 1
}

struct Search<'g, 'b, 's> {
    g: &'g mut Gomoku,
    budget: &'g mut Budget<'b>,
    tt: &'s mut [TtEntry],
    wins: &'s mut [WinEntry],
    hint: Option<u64>,
    vct: bool,
    aborted: bool,
}

/// Lines are built in reverse (winning move first) and reversed once at the root.
type RevLine = Vec<Move>;

impl Search<'_, '_, '_> {
    fn tt_key(&self) -> u64 {
        let mut k = self.g.hash() ^ if self.vct { 0x9E37_79B9_7F4A_7C15 } else { 0 };
        if let Some(f) = self.g.forced_point() {
            k ^= (f as u64 + 1).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        }
        k | 1
    }

    fn tt_failed(&self, key: u64, depth: u32) -> bool {
        let e = self.tt[(key as usize) & (self.tt.len() - 1)];
        e.key == key && e.depth >= depth
    }

    fn tt_store(&mut self, key: u64, depth: u32) {
        if self.aborted {
            return;
        }
        let i = (key as usize) & (self.tt.len() - 1);
        self.tt[i] = TtEntry { key, depth };
    }

    #[inline]
    fn play(&mut self, cell: usize) {
        let m = self.g.move_of(cell);
        self.g.play_unchecked(m);
        self.budget.nodes += 1;
    }

    fn line_cells(&self, cell: usize, reach: isize, out: &mut Vec<usize>) {
        region_cells(self.g, cell, reach, out);
    }

    /// Five points of `color` on the lines through `cell` (up to 3 collected).
    fn fives_near(&self, cell: usize, color: Color) -> Vec<usize> {
        let mut v = Vec::with_capacity(2);
        let mut buf = Vec::with_capacity(32);
        self.line_cells(cell, 4, &mut buf);
        for q in buf {
            if self.g.makes_five(q, color) && !v.contains(&q) {
                v.push(q);
            }
        }
        v
    }

    /// A legal move of `color` (the side to move) other than the points in `avoid`, for lines
    /// where the defender has no useful reply.
    fn any_legal(&self, avoid: &[usize]) -> Option<usize> {
        let me = self.g.to_move();
        self.g.cell_range().find(|&c| {
            self.g.cell_value(c) == EMPTY && !avoid.contains(&c) && allowed(self.g, c, me)
        })
    }

    /// After the attacker's winning-threat move `p` (already proven by [`is_winning_threat`]
    /// or winning at once under 4T), plays out a concrete finish and returns it reversed.
    fn finish(&mut self, p: usize) -> Option<RevLine> {
        let a = self.g.to_move();
        self.play(p);
        if let Some(Outcome::Win(w)) = self.g.outcome() {
            self.g.undo();
            return (w == a).then(|| vec![self.g.move_of(p)]);
        }
        let fives = self.fives_near(p, a);
        let d = self.g.to_move();
        let reply = fives
            .iter()
            .copied()
            .find(|&c| allowed(self.g, c, d))
            .or_else(|| self.any_legal(&fives));
        let mut out = None;
        if let Some(r) = reply {
            self.play(r);
            if self.g.outcome().is_none() {
                if let Some(f) = self.fives_near(p, a).first().copied() {
                    out = Some(vec![
                        self.g.move_of(f),
                        self.g.move_of(r),
                        self.g.move_of(p),
                    ]);
                }
            }
            self.g.undo();
        }
        self.g.undo();
        out
    }

    /// Attacker to move. Returns the reversed winning line (its last entry is this node's
    /// move) and records the win in the win table.
    fn attack(&mut self, depth: u32) -> Option<RevLine> {
        let r = self.attack_inner(depth);
        if let Some(&m) = r.as_ref().and_then(|l| l.last()) {
            // Every returned line is a proven win whatever the budget did later.
            let key = win_key(self.g);
            let i = (key as usize) & (self.wins.len() - 1);
            self.wins[i] = WinEntry { key, mv: m };
        }
        r
    }

    fn attack_inner(&mut self, depth: u32) -> Option<RevLine> {
        if self.g.outcome().is_some() {
            return None;
        }
        if self.budget.exhausted_coarse() {
            self.aborted = true;
            return None;
        }
        let a = self.g.to_move();
        let d = a.opp();
        let forced = self.g.forced_point().map(|m| self.g.cell_of(m));
        // Under 4T only the forced point constrains the attacker (fives are never checked).
        let four_t = self.g.rule() == Rule::FourT;

        // One pass over the board: wins, opponent fives, winning threats, fours and threes.
        let mut d_fives: [usize; 2] = [0; 2];
        let mut nd = 0;
        let mut threat_pt = None;
        let mut fours: Vec<(i32, usize)> = Vec::new();
        let mut threes: Vec<(i32, usize)> = Vec::new();
        // Only empty points where the attacker makes a three (VCT) or a four at least, or
        // the defender a five, can matter below. The board finds them in cell order (the
        // order of a scan over the whole board); under 4T only the forced point, if any, may
        // be played.
        let weakest = if self.vct { Pattern::B3 } else { Pattern::B4 };
        let mut cells = at_least(self.g, a, weakest, (!four_t).then_some(Pattern::F5));
        if let Some(f) = forced {
            let keep = cells.contains(f);
            cells = CellBits::default();
            if keep {
                cells.insert(f);
            }
        }
        for c in cells.iter() {
            let pa = self.g.patterns(c, a);
            let best = pa.iter().copied().max().unwrap_or(Pattern::Dead);
            if best >= Pattern::B4 && wins_at(self.g, c, a) {
                return Some(vec![self.g.move_of(c)]);
            }
            if !four_t && self.g.makes_five(c, d) {
                if nd < 2 {
                    d_fives[nd] = c;
                }
                nd += 1;
            }
            if best >= Pattern::B4 {
                if threat_pt.is_none() && makes_winning_threat(self.g, c, a) {
                    threat_pt = Some(c);
                }
                if threat_pt == Some(c) && !is_winning_threat(self.g, c, a) {
                    threat_pt = None;
                }
                fours.push((move_score(&pa), c));
            } else if self.vct
                && (best == Pattern::F3 || pa.iter().filter(|&&x| x >= Pattern::B3).count() >= 2)
            {
                threes.push((move_score(&pa), c));
            }
        }
        let must = if forced.is_some() {
            forced
        } else if nd >= 2 {
            return None;
        } else if nd == 1 {
            Some(d_fives[0])
        } else {
            None
        };
        if must.is_none() {
            if let Some(p) = threat_pt {
                if let Some(l) = self.finish(p) {
                    return Some(l);
                }
            }
        }
        if depth == 0 {
            return None;
        }
        let key = self.tt_key();
        if self.tt_failed(key, depth) {
            return None;
        }
        if let Some(m) = must {
            fours.retain(|&(_, c)| c == m);
            threes.retain(|&(_, c)| c == m);
        }
        fours.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
        threes.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
        if let Some(x) = self.hint {
            // Hinted moves first (the sibling's, then this position's own proven move).
            let raw = raw_win_key(self.g);
            for k in [(raw ^ x) | 1, raw | 1] {
                let e = self.wins[(k as usize) & (self.wins.len() - 1)];
                if e.key != k {
                    continue;
                }
                let c = self.g.cell_of(e.mv);
                if let Some(i) = fours.iter().position(|&(_, q)| q == c) {
                    fours[..=i].rotate_right(1);
                } else if let Some(i) = threes.iter().position(|&(_, q)| q == c) {
                    threes[..=i].rotate_right(1);
                }
            }
        }

        for &(_, c) in &fours {
            if !allowed(self.g, c, a) {
                continue;
            }
            if let Some(l) = self.try_four(c, depth) {
                return Some(l);
            }
            if self.aborted {
                return None;
            }
        }
        for &(_, c) in &threes {
            if !allowed(self.g, c, a) {
                continue;
            }
            if let Some(l) = self.try_three(c, depth) {
                return Some(l);
            }
            if self.aborted {
                return None;
            }
        }
        self.tt_store(key, depth);
        None
    }

    /// The attacker plays the four `c`; every reply that removes its five points is searched:
    /// the completion point (4T: the forced point), and under caro also the far ends that
    /// leave a five blocked at both ends. A renju Black defender cannot block on a forbidden
    /// point.
    fn try_four(&mut self, c: usize, depth: u32) -> Option<RevLine> {
        let a = self.g.to_move();
        self.play(c);
        let res = self.four_replies(c, a, depth);
        self.g.undo();
        res
    }

    fn four_replies(&mut self, c: usize, a: Color, depth: u32) -> Option<RevLine> {
        if self.g.outcome().is_some() {
            // A win was handled by the caller; anything else (a draw) is no win.
            return None;
        }
        let fives = self.fives_near(c, a);
        if fives.is_empty() {
            return None;
        }
        let d = self.g.to_move();
        let mut defs: Vec<usize> = Vec::with_capacity(4);
        if let Some(f) = self.g.forced_point() {
            defs.push(self.g.cell_of(f));
        } else {
            defs.extend(fives.iter().copied().filter(|&w| allowed(self.g, w, d)));
            if matches!(self.g.rule(), Rule::Caro | Rule::CaroExact) {
                let mut region = Vec::with_capacity(40);
                self.line_cells(c, 5, &mut region);
                for r in region {
                    if defs.contains(&r) || fives.contains(&r) || !allowed(self.g, r, d) {
                        continue;
                    }
                    self.g.play_unchecked(self.g.move_of(r));
                    let alive = has_five_near(self.g, c, a);
                    self.g.undo();
                    if !alive {
                        defs.push(r);
                    }
                }
            }
        }
        if defs.is_empty() {
            // Renju: Black cannot block on a forbidden point; any reply loses to the five.
            let x = self.any_legal(&fives)?;
            self.play(x);
            let f = self.fives_near(c, a).first().copied();
            self.g.undo();
            let f = f?;
            return Some(vec![
                self.g.move_of(f),
                self.g.move_of(x),
                self.g.move_of(c),
            ]);
        }
        let mut first: Option<RevLine> = None;
        for w in defs {
            self.play(w);
            let lost = matches!(self.g.outcome(), Some(Outcome::Win(x)) if x == d);
            let r = if lost { None } else { self.attack(depth - 1) };
            self.g.undo();
            let mut l = r?;
            if first.is_none() {
                l.push(self.g.move_of(w));
                l.push(self.g.move_of(c));
                first = Some(l);
            }
        }
        first
    }

    /// The attacker plays the three `c`; every defence that could stop it must be refuted.
    fn try_three(&mut self, c: usize, depth: u32) -> Option<RevLine> {
        let a = self.g.to_move();
        self.play(c);
        let res = self.defend(c, a, depth);
        self.g.undo();
        res
    }

    fn defend(&mut self, c: usize, a: Color, depth: u32) -> Option<RevLine> {
        if self.g.outcome().is_some() {
            return None;
        }
        let d = self.g.to_move();
        let mut buf = Vec::with_capacity(48);
        // The attacker's winning-threat points made by `c` (they lie on c's lines).
        self.line_cells(c, 5, &mut buf);
        let mut threats: Vec<usize> = Vec::new();
        for &q in &buf {
            if !threats.contains(&q) && is_winning_threat(self.g, q, a) {
                threats.push(q);
            }
        }
        if threats.is_empty() {
            return None;
        }
        // The defender's own immediate wins (4T double completions; fives cannot exist here
        // because the attacker had to block them first) refute the three.
        let mut counters: Vec<usize> = Vec::new();
        for q in at_least(self.g, d, Pattern::B4, None).iter() {
            if !self.g.makes_four(q, d) {
                continue;
            }
            if wins_at(self.g, q, d) {
                return None;
            }
            if allowed(self.g, q, d) {
                counters.push(q);
            }
        }
        // Replies that can stop every winning point. Outside renju-Black attacks, a threat
        // point's status depends only on the cells within 5 on its four lines; a renju Black
        // point's forbidden status can depend on farther cells, so there every empty cell is
        // examined.
        let region: Vec<usize> = if self.g.rule() == Rule::Renju && a == Color::Black {
            self.g
                .cell_range()
                .filter(|&q| self.g.cell_value(q) == EMPTY)
                .collect()
        } else {
            let p = threats[0];
            self.line_cells(p, 5, &mut buf);
            let mut v = buf.clone();
            v.push(p);
            v
        };
        let mut defences = counters;
        for q in region {
            if defences.contains(&q) || !allowed(self.g, q, d) {
                continue;
            }
            self.play(q);
            let mut still = false;
            for &p in &threats {
                if self.g.cell_value(p) == EMPTY && is_winning_threat(self.g, p, a) {
                    still = true;
                    break;
                }
            }
            self.g.undo();
            if !still {
                defences.push(q);
            }
        }
        if defences.is_empty() {
            // Nothing stops the threat: follow any legal reply to build the line.
            match self.any_legal(&[]) {
                Some(x) => defences.push(x),
                None => return None,
            }
        }
        let mut first: Option<RevLine> = None;
        for q in defences {
            if self.budget.exhausted_coarse() {
                self.aborted = true;
                return None;
            }
            self.play(q);
            let lost = matches!(self.g.outcome(), Some(Outcome::Win(x)) if x == d);
            let r = if lost { None } else { self.attack(depth - 1) };
            self.g.undo();
            match r {
                None => return None,
                Some(mut l) => {
                    if first.is_none() {
                        l.push(self.g.move_of(q));
                        l.push(self.g.move_of(c));
                        first = Some(l);
                    }
                }
            }
        }
        first
    }
}

/// Middle-game positions for speed measurements: seeded games where each side plays one of
/// the three best points by the greedy pattern score, sampled between plies 20 and 40 and
/// skipping positions with a five to play or to block.
pub fn sample_positions(rule: Rule, count: usize, seed: u64) -> Vec<Gomoku> {
    use crate::search::gomoku::greedy::{candidates, cell_score};
    let mut rng = crate::util::Rng::new(seed);
    let mut out = Vec::with_capacity(count);
    let mut cands = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 20 {
        tries += 1;
        let Ok(mut g) = Gomoku::new(15, 15, rule) else {
            break;
        };
        let stop_at = 20 + rng.below(21);
        while g.ply() < stop_at && g.outcome().is_none() {
            candidates(&g, &mut cands);
            let me = g.to_move();
            let mut scored: Vec<(i32, usize)> = cands
                .iter()
                .map(|&c| (cell_score(&g, c, me) + cell_score(&g, c, me.opp()), c))
                .collect();
            scored.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
            if scored.is_empty() {
                break;
            }
            let pick = scored[rng.below(scored.len().min(3))].1;
            g.play_unchecked(g.move_of(pick));
        }
        // Skip positions decided at once (a five to play or to block): they measure nothing.
        if g.outcome().is_none()
            && g.ply() == stop_at
            && immediate_win(&g).is_none()
            && must_block(&g).is_empty()
        {
            out.push(g);
        }
    }
    out
}

/// Runs VCF (depth 30) and VCT (depth 10) on each position with a node cap per search and
/// returns one line per search kind: total nodes, time, nodes per second and wins found.
pub fn speed_report_on(label: &str, positions: &[Gomoku], node_cap: u64) -> String {
    let stop = AtomicBool::new(false);
    let mut out = String::new();
    for (kind, vct_mode, depth) in [("vcf", false, 30), ("vct", true, 10)] {
        let mut nodes = 0u64;
        let mut wins = 0;
        let mut secs = 0.0f64;
        let mut solver = ThreatSolver::new(20);
        for p in positions {
            let mut g = p.clone();
            solver.clear();
            let limits = Limits::nodes(node_cap);
            let mut budget = Budget::new(&limits, &stop);
            let t = Instant::now();
            let r = if vct_mode {
                solver.vct(&mut g, &mut budget, depth)
            } else {
                solver.vcf(&mut g, &mut budget, depth)
            };
            secs += t.elapsed().as_secs_f64();
            nodes += budget.nodes;
            wins += r.is_some() as usize;
        }
        out.push_str(&format!(
            "{label} {kind}: {} positions, {nodes} nodes in {:.3} s = {:.0} nodes/s, {wins} wins\n",
            positions.len(),
            secs,
            nodes as f64 / secs.max(1e-9),
        ));
    }
    out
}

/// Measures VCF and VCT speed (nodes per second) on sampled freestyle, renju and 4T middle-game
/// positions (see [`sample_positions`]); one line per rule and search kind.
pub fn speed_report() -> String {
    let mut out = String::new();
    for rule in [Rule::Freestyle, Rule::Renju, Rule::FourT] {
        let positions = sample_positions(rule, 40, 0x5EED_0001);
        out.push_str(&speed_report_on(rule.name(), &positions, 200_000));
    }
    out
}
