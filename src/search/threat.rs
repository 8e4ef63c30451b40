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
//! Depth counts attacker moves. Failed positions are remembered in a small fixed-size table
//! (hash -> depth searched), so a transposition is not searched again at the same or a
//! smaller depth.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::{Budget, Limits};
use crate::game::gomoku::pattern::EMPTY;
use crate::game::gomoku::{Gomoku, Pattern, Rule};
use crate::game::{Color, Game, Move, Outcome};

/// Whether `color` playing the empty `cell` wins at once: a five, or under 4T a move with two
/// or more completion points (an open four, two fours in one line, or fours in two lines).
#[inline]
pub fn wins_at(g: &Gomoku, cell: usize, color: Color) -> bool {
    let p = g.patterns(cell, color);
    if p.contains(&Pattern::F5) {
        return true;
    }
    g.rule() == Rule::FourT
        && (p.contains(&Pattern::F4) || p.iter().filter(|&&x| x == Pattern::B4).count() >= 2)
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
    g.cell_range()
        .find(|&c| g.cell_value(c) == EMPTY && wins_at(g, c, me))
        .map(|c| g.move_of(c))
}

/// The opponent's immediate winning points (its fives; under 4T also its double-completion
/// points), which the side to move must occupy unless it wins first. Under 4T, when a forced
/// point exists it is the only entry. Two or more entries mean the side to move cannot block.
pub fn must_block(g: &Gomoku) -> Vec<Move> {
    if let Some(f) = g.forced_point() {
        return vec![f];
    }
    let opp = g.to_move().opp();
    g.cell_range()
        .filter(|&c| g.cell_value(c) == EMPTY && wins_at(g, c, opp))
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
    let threats: Vec<usize> = g
        .cell_range()
        .filter(|&c| g.cell_value(c) == EMPTY && makes_winning_threat(g, c, opp))
        .collect();
    if threats.is_empty() {
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
        let stopped = !g
            .cell_range()
            .any(|p| g.cell_value(p) == EMPTY && makes_winning_threat(g, p, opp));
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

/// A reusable VCF/VCT solver owning its table of failed positions.
pub struct ThreatSolver {
    tt: Vec<TtEntry>,
}

impl Default for ThreatSolver {
    fn default() -> Self {
        ThreatSolver::new(16)
    }
}

impl ThreatSolver {
    /// A solver whose failure table has `2^bits` entries (clamped to 10..=24 bits).
    pub fn new(bits: u32) -> Self {
        let bits = bits.clamp(10, 24);
        ThreatSolver {
            tt: vec![TtEntry::default(); 1 << bits],
        }
    }

    /// Forgets the failure table.
    pub fn clear(&mut self) {
        self.tt.fill(TtEntry::default());
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
        let mut s = Search {
            g: game,
            budget,
            tt: &mut self.tt,
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

struct Search<'g, 'b, 's> {
    g: &'g mut Gomoku,
    budget: &'g mut Budget<'b>,
    tt: &'s mut [TtEntry],
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

    /// Empty cells on the four lines through `cell` within `reach`, deduplicated by geometry.
    fn line_cells(&self, cell: usize, reach: isize, out: &mut Vec<usize>) {
        out.clear();
        for d in 0..4 {
            let delta = self.g.delta(d);
            for k in -reach..=reach {
                if k == 0 {
                    continue;
                }
                let q = (cell as isize + k * delta) as usize;
                if self.g.cell_value(q) == EMPTY {
                    out.push(q);
                }
            }
        }
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

    /// After the attacker's winning-threat move `p` (already known to leave two winning points
    /// or to win at once under 4T), plays out a concrete finish and returns it reversed.
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
                if let Some(&f) = fives.iter().find(|&&f| self.g.cell_value(f) == EMPTY) {
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

    /// Attacker to move. Returns the reversed winning line.
    fn attack(&mut self, depth: u32) -> Option<RevLine> {
        if self.g.outcome().is_some() {
            return None;
        }
        if self.budget.exhausted() {
            self.aborted = true;
            return None;
        }
        let a = self.g.to_move();
        let d = a.opp();
        let forced = self.g.forced_point().map(|m| self.g.cell_of(m));

        // One pass over the board: wins, opponent fives, winning threats, fours and threes.
        let mut d_fives: [usize; 2] = [0; 2];
        let mut nd = 0;
        let mut threat_pt = None;
        let mut fours: Vec<(i32, usize)> = Vec::new();
        let mut threes: Vec<(i32, usize)> = Vec::new();
        for c in self.g.cell_range() {
            if self.g.cell_value(c) != EMPTY {
                continue;
            }
            if forced.is_some_and(|f| f != c) {
                continue;
            }
            let pa = self.g.patterns(c, a);
            let best = pa.iter().copied().max().unwrap_or(Pattern::Dead);
            if best == Pattern::F5 || (best >= Pattern::B4 && wins_at(self.g, c, a)) {
                return Some(vec![self.g.move_of(c)]);
            }
            if self.g.makes_five(c, d) {
                if nd < 2 {
                    d_fives[nd] = c;
                }
                nd += 1;
            }
            if best >= Pattern::B4 {
                if threat_pt.is_none() && makes_winning_threat(self.g, c, a) {
                    threat_pt = Some(c);
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
        fours.sort_unstable_by(|x, y| y.0.cmp(&x.0));
        threes.sort_unstable_by(|x, y| y.0.cmp(&x.0));

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

    /// The attacker plays the four `c`; the defender must block (or cannot).
    fn try_four(&mut self, c: usize, depth: u32) -> Option<RevLine> {
        let a = self.g.to_move();
        self.play(c);
        let mut res = None;
        let fives = self.fives_near(c, a);
        if self.g.outcome().is_some() {
            // A win was handled by the caller; anything else (a draw) is no win.
        } else if fives.len() >= 2 {
            // Reached through a forced block that also made an open four.
            self.g.undo();
            return self.finish(c);
        } else if fives.len() == 1 {
            let w = fives[0];
            let d = self.g.to_move();
            if !allowed(self.g, w, d) {
                // Renju: Black cannot block on a forbidden point.
                if let Some(x) = self.any_legal(&[w]) {
                    res = Some(vec![
                        self.g.move_of(w),
                        self.g.move_of(x),
                        self.g.move_of(c),
                    ]);
                }
            } else {
                self.play(w);
                let lost = matches!(self.g.outcome(), Some(Outcome::Win(x)) if x == d);
                if !lost {
                    if let Some(mut l) = self.attack(depth - 1) {
                        l.push(self.g.move_of(w));
                        l.push(self.g.move_of(c));
                        res = Some(l);
                    }
                }
                self.g.undo();
            }
        }
        self.g.undo();
        res
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
            if !threats.contains(&q) && makes_winning_threat(self.g, q, a) {
                threats.push(q);
            }
        }
        if threats.is_empty() {
            return None;
        }
        // The defender's own immediate wins (4T double completions; fives cannot exist here
        // because the attacker had to block them first) refute the three.
        let mut counters: Vec<usize> = Vec::new();
        for q in self.g.cell_range() {
            if self.g.cell_value(q) != EMPTY {
                continue;
            }
            let pd = self.g.patterns(q, d);
            if pd.iter().any(|&x| x >= Pattern::B4) {
                if wins_at(self.g, q, d) {
                    return None;
                }
                if allowed(self.g, q, d) {
                    counters.push(q);
                }
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
            let still = threats
                .iter()
                .any(|&p| self.g.cell_value(p) == EMPTY && makes_winning_threat(self.g, p, a));
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
            if self.budget.exhausted() {
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

/// Measures VCF and VCT speed (nodes per second) on a few fixed, realistic middle-game
/// positions (freestyle and renju, 15x15) and returns a one-line-per-search report.
pub fn speed_report() -> String {
    // Positions as GTP move sequences (Black first), chosen to have several fours and threes
    // for both sides so the searches have work to do.
    const POSITIONS: &[(&str, Rule, &str)] = &[
        (
            "open-a",
            Rule::Freestyle,
            "H8 J9 J8 G8 K9 H7 G9 K7 H10 J10 L8 J7 H6 G7 F7 K10",
        ),
        (
            "open-b",
            Rule::Freestyle,
            "H8 H9 G9 J7 J8 G10 K9 L10 G7 F6 K7 K8 H6 J6 F8 E7 G5 L8",
        ),
        (
            "renju-a",
            Rule::Renju,
            "H8 J9 J8 G8 K9 H7 G9 K7 H10 J10 L8 J7 H6 G7 F7 K10",
        ),
    ];
    let mut out = String::new();
    let stop = AtomicBool::new(false);
    for &(name, rule, moves) in POSITIONS {
        let Ok(mut g) = Gomoku::new(15, 15, rule) else {
            continue;
        };
        let mut ok = true;
        for s in moves.split_whitespace() {
            match g.parse_gtp(s) {
                Ok(m) if g.play(m).is_ok() => {}
                _ => ok = false,
            }
        }
        if !ok {
            out.push_str(&format!("{name}: bad position\n"));
            continue;
        }
        for (kind, vct_mode, depth, nodes) in
            [("vcf", false, 30, 2_000_000), ("vct", true, 8, 2_000_000)]
        {
            let mut solver = ThreatSolver::new(20);
            let limits = Limits::nodes(nodes);
            let mut budget = Budget::new(&limits, &stop);
            let t = Instant::now();
            let r = if vct_mode {
                solver.vct(&mut g, &mut budget, depth)
            } else {
                solver.vcf(&mut g, &mut budget, depth)
            };
            let secs = t.elapsed().as_secs_f64().max(1e-9);
            out.push_str(&format!(
                "{name} ({}) {kind}: {} nodes in {:.3} s = {:.0} nodes/s, result {}\n",
                rule.name(),
                budget.nodes,
                secs,
                budget.nodes as f64 / secs,
                match r {
                    Some(l) => format!("win in {} plies", l.len()),
                    None => "none".to_string(),
                }
            ));
        }
    }
    out
}
