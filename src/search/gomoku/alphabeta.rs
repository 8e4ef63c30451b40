//! The main Gomoku player ("pcn"): iterative-deepening principal-variation alpha-beta over
//! threat-aware, width-limited candidate moves, with a transposition table and a static
//! evaluation read from the incremental pattern tables.
//!
//! Every node first classifies the candidate points (empty points within distance two of a
//! stone along a line) by the patterns both colours would make there:
//! - the side to move can make five: a win in one ply;
//! - the opponent can make five at two points: a loss; at one point: the only move (searched
//!   without using depth, so forced sequences are read to the end);
//! - the side to move can make an open four (and the opponent has no five): a win in three;
//! - the opponent can make an open four: only the defences (points where the opponent would
//!   get a four) and the side to move's own fours are searched;
//! - otherwise the candidates are ordered by attack + defence pattern scores and the best
//!   few are searched, or all of them when those few all lose by force: so every mate score
//!   the search returns is a proof.
//!
//! These rules hold for every rule set because the patterns come from the rule's own table;
//! renju forbidden points are never generated for Black, and a 4T forced reply is the only
//! move when one is pending.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::greedy;
use super::learn::evalnet::{Accumulator, EvalNet};
use super::learn::ordering;
use super::threat::ThreatSolver;
use super::{Budget, Limits, SearchEvent, SearchResult, Searcher};
use crate::game::gomoku::{Gomoku, Pattern, Rule};
use crate::game::{Color, Game, Move, Outcome};
use crate::search::DEFAULT_MEMORY_BYTES;
use crate::util::pages::ZeroedTable;

/// Score of a won position (minus the distance to the win in plies).
pub const WIN: i32 = 1_000_000;
/// Scores beyond this are proven wins (or, negated, losses).
pub const WIN_THRESHOLD: i32 = WIN - 10_000;
/// Deepest ply the search ever reaches (forced sequences extend past the nominal depth).
const MAX_PLY: usize = 120;
/// Node cap of the VCF at the leaves (see `AlphaBeta::leaf_vcf`). The leaf VCFs hold most of
/// the tree's nodes; wins that need more than this many threat nodes are rare at a leaf and
/// are found at the root or a ply later (`examples/player_tree.rs` measures both).
const LEAF_VCF_NODES: u64 = 30;
/// Attacker moves of the VCF at the leaves.
const LEAF_VCF_DEPTH: u32 = 12;
/// Entries (log 2) of each table of a helper thread's threat solver (Lazy SMP).
const HELPER_THREAT_BITS: u32 = 16;
/// Late-move reductions: a quiet move that makes no four, searched `i`-th (from 0) at depth
/// `d`, is first searched `LMR_SCALE / 100 * ln(d) * ln(i)` plies shallower (rounded down),
/// one more ply when the node's evaluation is not above that of two plies before (the side
/// to move is not improving). The later a move comes in the ordering and the deeper the node,
/// the less likely it is best, and a move that beats alpha is searched again at full depth
/// (the measurement behind the formula: docs/notebook/2026-11-27-teacher-eval.md).
const LMR_SCALE: f64 = 60.0;
/// Depths and move indices of the reduction table (larger ones use its last entry).
const LMR_TABLE: usize = 64;

/// The reduction table of [`LMR_SCALE`], indexed `[depth][move index]`.
static LMR: once_cell::sync::Lazy<Vec<[i8; LMR_TABLE]>> = once_cell::sync::Lazy::new(|| {
    (0..LMR_TABLE)
        .map(|d| {
            let mut row = [0i8; LMR_TABLE];
            for (i, r) in row.iter_mut().enumerate().skip(1) {
                if d > 0 {
                    *r = (LMR_SCALE / 100.0 * (d as f64).ln() * (i as f64).ln()) as i8;
                }
            }
            row
        })
        .collect()
});
/// `cell_score` of a point where a colour makes an open three (or more) in one line.
const WEIGHT_THREE: i32 = 100;
/// Reverse futility: a quiet non-PV node at depth <= this whose static evaluation beats beta
/// by `RFP_MARGIN` per ply of depth is cut without search. It applies well above the last
/// plies, with a margin that grows with the depth left, so that clearly won subtrees are not
/// searched at any depth and each iteration completes sooner (the measurement behind the
/// values: docs/notebook/2026-11-27-deeper-reverse-futility.md).
const RFP_DEPTH: i32 = 8;
/// See `RFP_DEPTH` (thousandths of a logit per ply).
const RFP_MARGIN: i32 = 300;
/// Futility: at depth <= this, in a quiet node whose static evaluation plus `FUT_MARGIN` per
/// ply is still at most alpha, moves that make or stop no three are skipped.
const FUT_DEPTH: i32 = 2;
/// See `FUT_DEPTH` (thousandths of a logit per ply).
const FUT_MARGIN: i32 = 600;
/// Razoring: a quiet non-PV node at depth <= this whose static evaluation plus
/// `RAZOR_MARGIN` per ply is still at most alpha is judged as a leaf (a VCF for the side to
/// move, else the static evaluation) and cut when that does not beat alpha: a position this
/// far behind is rarely saved by a quiet move within a few plies, and the VCF catches the
/// wins by fours that the evaluation cannot see.
const RAZOR_DEPTH: i32 = 3;
/// See `RAZOR_DEPTH` (thousandths of a logit per ply).
const RAZOR_MARGIN: i32 = 500;
/// Internal iterative reduction: a quiet node at depth >= this with no table move is searched
/// one ply shallower. Without a table move its ordering is the static one, so a full-depth
/// search there costs the most; the next iteration finds the table move this one stored.
const IIR_DEPTH: i32 = 4;

/// Whether the empty `cell` has a stone within distance two along one of the four lines.
///
/// Reads the line keys: slots 3..=6 hold offsets -2, -1, +1, +2; a slot holds a stone when
/// its two bits differ (01 black, 10 white; 11 is a wall).
#[inline(always)]
pub fn near_stone(g: &Gomoku, cell: usize) -> bool {
    (0..4).any(|d| {
        let k = g.line_key(cell, d);
        (k ^ (k >> 1)) & 0x1540 != 0
    })
}

/// Counts of fours (B4 or F4) and whether an F4 / F3 is among the patterns.
#[inline(always)]
fn four_info(p: &[Pattern; 4]) -> (u32, bool) {
    let mut fours = 0;
    let mut open = false;
    for &x in p {
        match x {
            Pattern::F4 => {
                fours += 1;
                open = true;
            }
            Pattern::B4 => fours += 1,
            _ => {}
        }
    }
    (fours, open)
}

/// Cell classes of the tuned evaluation: what one more stone of a colour makes at an empty
/// point, from its four line patterns, strongest first (see [`cell_class`]).
pub const CELL_CLASSES: usize = 12;
/// Per-line pattern counts of one colour in the tuned evaluation (F1, B2, F2, B3).
const LINE_FEATURES: usize = 4;
/// Cell classes (2..2 + this) that also get a presence indicator: the first point of a
/// class is worth more than each further one.
const PRESENCE_FEATURES: usize = 7;
/// Features of one colour: its cell classes, its per-line pattern counts, then whether it has
/// a point of each class from four-three to blocked three plus.
const SIDE_FEATURES: usize = CELL_CLASSES + LINE_FEATURES + PRESENCE_FEATURES;
/// Length of the evaluation feature vector: the side to move's features, the opponent's, then
/// two threat indicators (see [`eval_features`]).
pub const EVAL_FEATURES: usize = 2 * SIDE_FEATURES + 2;

/// Weights of the tuned evaluation in thousandths of a logit of the side to move's winning
/// chance, fitted by `examples/tune_eval.rs` (logistic regression on game results, Texel
/// style) on positions of pcn's own 15x15 games; the layout is that of [`eval_features`].
/// No fitted game starts from a shipped test opening (`../shared/openings`), so the strength
/// measured on those openings is not measured on the fitting data (the command and the games
/// are in docs/data/eval-tuning-games.sgf.gz and docs/notebook/2026-11-27-honest-eval.md).
const EVAL_WEIGHTS: [i32; EVAL_FEATURES] = [
    0, 0, 1917, 560, 227, 203, 223, 143, 27, 9, -50, -30, -2, 31, 18, 68, 1649, -52, 119, 283, 774,
    237, 397, 0, -1113, -1469, -459, -344, 52, -129, -77, 52, 136, 63, 83, 1, -27, -65, -79, -6,
    -36, 313, -462, -748, -172, -123, 236, 2168,
];

/// Class of an empty point for a colour from its four line patterns, strongest first:
/// 0 five, 1 open four or double four, 2 four-three, 3 four plus a blocked three or open two,
/// 4 four, 5 double three, 6 open three plus a blocked three or open two, 7 open three,
/// 8 blocked three plus a blocked three or open two, 9 double open two, 10 blocked three,
/// 11 open two; `CELL_CLASSES` for none of these.
#[inline]
pub fn cell_class(p: &[Pattern; 4]) -> usize {
    let (mut n5, mut n4o, mut n4, mut n3o, mut n3, mut n2o) = (0, 0, 0, 0, 0, 0);
    for &x in p {
        match x {
            Pattern::F5 => n5 += 1,
            Pattern::F4 => n4o += 1,
            Pattern::B4 => n4 += 1,
            Pattern::F3 => n3o += 1,
            Pattern::B3 => n3 += 1,
            Pattern::F2 => n2o += 1,
            _ => {}
        }
    }
    let plus = n3 + n2o > 0;
    if n5 > 0 {
        0
    } else if n4o > 0 || n4 >= 2 {
        1
    } else if n4 == 1 {
        if n3o > 0 {
            2
        } else if plus {
            3
        } else {
            4
        }
    } else if n3o >= 2 {
        5
    } else if n3o == 1 {
        if plus {
            6
        } else {
            7
        }
    } else if n3 >= 2 || (n3 >= 1 && n2o >= 1) {
        8
    } else if n2o >= 2 {
        9
    } else if n3 == 1 {
        10
    } else if n2o == 1 {
        11
    } else {
        CELL_CLASSES
    }
}

/// What one colour's four line patterns at an empty point amount to, packed in a `u64` so
/// that the per-node scan reads one precomputed entry per colour instead of recomputing
/// [`cell_score`], [`cell_class`] and the four counts at every point of every node (the scan
/// was over half of the player's time). Every field is a function of the four patterns alone.
///
/// Layout: bits 0..20 `cell_score`; 20..24 `cell_class`; 24..27 fours (B4 or F4); bit 27 an
/// F4; bit 28 an F5; then the counts of F1, B2, F2, B3 in 4 bits each from bit 32 (the
/// order of the evaluation's per-line features).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct PointFacts(u64);

impl PointFacts {
    const SCORE_BITS: u32 = 20;

    /// Computes the facts from the patterns (the table's contents).
    fn compute(p: &[Pattern; 4]) -> PointFacts {
        let score = cell_score_of(p) as u64;
        debug_assert!(score < 1 << Self::SCORE_BITS);
        let class = cell_class(p) as u64;
        let (fours, open) = four_info(p);
        let five = p.contains(&Pattern::F5);
        let mut v = score | class << 20 | (fours as u64) << 24;
        v |= u64::from(open) << 27 | u64::from(five) << 28;
        for (i, want) in [Pattern::F1, Pattern::B2, Pattern::F2, Pattern::B3]
            .into_iter()
            .enumerate()
        {
            let n = p.iter().filter(|&&x| x == want).count() as u64;
            v |= n << (32 + 4 * i);
        }
        PointFacts(v)
    }

    /// `cell_score` of the point.
    #[inline(always)]
    fn score(self) -> i32 {
        (self.0 & ((1 << Self::SCORE_BITS) - 1)) as i32
    }

    /// [`cell_class`] of the point.
    #[inline(always)]
    fn class(self) -> usize {
        ((self.0 >> 20) & 0xF) as usize
    }

    /// Number of fours (B4 or F4) made here.
    #[inline(always)]
    fn fours(self) -> u32 {
        ((self.0 >> 24) & 0x7) as u32
    }

    /// An open four (F4) is among the patterns.
    #[inline(always)]
    fn open_four(self) -> bool {
        self.0 & 1 << 27 != 0
    }

    /// A five (F5) is among the patterns.
    #[inline(always)]
    fn five(self) -> bool {
        self.0 & 1 << 28 != 0
    }

    /// Count of the `i`-th per-line evaluation feature (F1, B2, F2, B3).
    #[inline(always)]
    fn line_count(self, i: usize) -> i32 {
        ((self.0 >> (32 + 4 * i)) & 0xF) as i32
    }
}

/// Distinct patterns (`Pattern as usize` is below this).
const PATTERNS: usize = 11;

/// [`PointFacts`] of every combination of four patterns, indexed by [`facts_index`]
/// (11^4 entries, 117 KB: small enough to stay in the second-level cache).
static FACTS: std::sync::LazyLock<Vec<PointFacts>> = std::sync::LazyLock::new(|| {
    let n = PATTERNS.pow(4);
    let mut t = Vec::with_capacity(n);
    for i in 0..n {
        let p = [
            Pattern::from_u8((i / (PATTERNS * PATTERNS * PATTERNS)) as u8),
            Pattern::from_u8((i / (PATTERNS * PATTERNS) % PATTERNS) as u8),
            Pattern::from_u8((i / PATTERNS % PATTERNS) as u8),
            Pattern::from_u8((i % PATTERNS) as u8),
        ];
        t.push(PointFacts::compute(&p));
    }
    t
});

/// The tuned evaluation's terms of one point, per side (0: the side to move's weights, 1:
/// the opponent's), indexed like [`FACTS`]: its class weight plus its per-line counts times
/// their weights. The evaluation is linear in these counts, so summing the terms of the
/// points gives [`tuned_eval`] of the summed features, up to the presence and threat
/// indicators (added once per node; see [`TunedSum`]).
static POINT_EVAL: std::sync::LazyLock<[Vec<i32>; 2]> = std::sync::LazyLock::new(|| {
    let side = |s: usize| -> Vec<i32> {
        let base = s * SIDE_FEATURES;
        FACTS
            .iter()
            .map(|p| {
                let c = p.class();
                let mut v = if c < CELL_CLASSES {
                    EVAL_WEIGHTS[base + c]
                } else {
                    0
                };
                for i in 0..LINE_FEATURES {
                    v += p.line_count(i) * EVAL_WEIGHTS[base + CELL_CLASSES + i];
                }
                v
            })
            .collect()
    };
    [side(0), side(1)]
});

/// The tuned evaluation summed point by point during the scan, without the feature vector.
#[derive(Copy, Clone, Debug, Default)]
struct TunedSum {
    /// Sum of the scanned points' [`POINT_EVAL`] terms (plus, once the scan is complete, the
    /// presence and threat terms).
    value: i32,
    /// Per side, bit `c` set when a point of class `c` was counted (the presence features).
    classes: [u32; 2],
}

/// Index in [`FACTS`] of `color`'s four patterns in a [`Gomoku::pattern_word`] (pattern values
/// are below `PATTERNS`).
#[inline(always)]
fn facts_index_of_word(word: u64, color: Color) -> usize {
    // The colour's four patterns, one per 16-bit lane (direction d in lane d).
    let y = (word >> (8 * color.index())) & 0x00FF_00FF_00FF_00FF;
    // One multiplication sums `n(d) * 11^(3 - d)` into the top lane: lane 3 of the product
    // collects exactly the pairs of lanes d + e = 3, and every lower lane's sum stays below
    // 2^16 (at most 10 * (121 + 11 + 1)), so no carry reaches it; the higher products fall
    // off the end of the word.
    const WEIGHTS: u64 = (PATTERNS.pow(3) as u64) << 48
        | (PATTERNS.pow(2) as u64) << 32
        | (PATTERNS as u64) << 16
        | 1;
    (y.wrapping_mul(WEIGHTS) >> 48) as usize
}

/// [`cell_score`] from the patterns already read.
fn cell_score_of(p: &[Pattern; 4]) -> i32 {
    greedy::score_of_patterns(p)
}

/// Adds one playable empty point's features for one colour, whose features start at `base`
/// in `f` (0 for the side to move, `SIDE_FEATURES` for the opponent).
#[inline(always)]
fn add_point_features(f: &mut [i32; EVAL_FEATURES], base: usize, p: PointFacts) {
    let c = p.class();
    if c < CELL_CLASSES {
        f[base + c] += 1;
    }
    for i in 0..LINE_FEATURES {
        f[base + CELL_CLASSES + i] += p.line_count(i);
    }
}

/// The evaluation features of a position that [`classify`] calls quiet or defensive (`None`
/// for the others, which the search never evaluates statically): per colour, the number of
/// empty points near stones in each [`cell_class`], the per-line counts of F1, B2, F2 and B3
/// patterns at them, and whether it has any point of classes 2 to 8 (side to move first);
/// then whether the side to move has a four-three (or better) point while the opponent has
/// no four point, and whether it has a double-three point while the opponent has neither a
/// four point nor an open-four threat.
pub fn eval_features(g: &Gomoku) -> Option<[i32; EVAL_FEATURES]> {
    let mut out = Vec::new();
    let mut f = [0; EVAL_FEATURES];
    match classify_impl(g, &mut out, Some(&mut f), None, false).0 {
        Tactic::Quiet | Tactic::Defend => Some(f),
        _ => None,
    }
}

/// The pattern evaluation's value of `g` as a leaf of the player scores it ([`static_eval`]
/// of the tuned sum; side to move's view, thousandths of a logit), `None` where the player
/// never evaluates `g` statically (see [`eval_features`]).
pub fn classic_value(g: &Gomoku) -> Option<i32> {
    eval_features(g).map(|f| static_eval(tuned_eval(&f), 0))
}

/// The tuned evaluation of a feature vector (thousandths of a logit, side to move's view).
#[inline]
pub fn tuned_eval(f: &[i32; EVAL_FEATURES]) -> i32 {
    f.iter().zip(EVAL_WEIGHTS.iter()).map(|(a, b)| a * b).sum()
}

/// Re-scores the candidates of a quiet position with the learned ordering table
/// ([`ordering::BUILTIN`]; freestyle only, the rule it was trained on): the attack + defence
/// score ranks threats well but quiet moves nearly flat, and a quiet node searches only its
/// best [`AlphaBeta`] width of them.
fn learned_order(g: &Gomoku, cands: &mut [Cand]) {
    if g.rule() != Rule::Freestyle {
        return;
    }
    let Some(t) = ordering::BUILTIN.as_ref() else {
        return;
    };
    let me = g.to_move();
    let opp = me.opp();
    let mut recent = g.history_cells().rev().map(|(c, _)| g.coords_of(c));
    let last = recent.next();
    let prev = recent.next();
    for c in cands.iter_mut() {
        let word = g.pattern_word(c.cell);
        let p = g.coords_of(c.cell);
        c.score = t.score(
            facts_index_of_word(word, me),
            facts_index_of_word(word, opp),
            ordering::distance_class(p, last),
            ordering::distance_class(p, prev),
            [0, 1, 2, 3].map(|d| g.line_key(c.cell, d)),
            me,
        );
    }
}

/// One candidate point with its ordering score.
#[derive(Copy, Clone, Debug)]
pub struct Cand {
    /// Padded cell.
    pub cell: usize,
    /// Ordering score (attack + defence).
    pub score: i32,
    /// The side to move makes a four here.
    pub my_four: bool,
    /// The opponent would make a four (or five) here: a defence against its threes.
    pub opp_four: bool,
    /// Either colour would make a four here, or patterns worth an open three or more in the
    /// greedy score (a move the low-depth pruning never skips).
    pub tactical: bool,
}

/// What the tactical classification of a position found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tactic {
    /// The side to move wins by playing this cell.
    WinNow(usize),
    /// The side to move wins by force in three plies (open four) starting here.
    WinIn3(usize),
    /// The opponent makes five at two points (or at a point Black may not block): lost.
    Lost(usize),
    /// The opponent makes five at this point: the only move (caro: `cands` may hold
    /// several five points, every one of them must be tried).
    MustBlock(usize),
    /// The opponent threatens an open four: `cands` holds only defences and own fours.
    Defend,
    /// Quiet position: `cands` holds all candidates.
    Quiet,
}

/// Classifies the position and fills `out` with the candidates (unsorted).
/// Also returns the static evaluation terms (own pattern sum, opponent pattern sum).
pub fn classify(g: &Gomoku, out: &mut Vec<Cand>) -> (Tactic, i32, i32) {
    classify_with(g, out, false)
}

/// [`classify`], or with `tuned` the tactic and the tuned evaluation of the side to move
/// ([`eval_features`], [`tuned_eval`]) in place of the two pattern sums (then the second
/// term is 0).
pub fn classify_with(g: &Gomoku, out: &mut Vec<Cand>, tuned: bool) -> (Tactic, i32, i32) {
    let (t, a, b, _) = classify_node(g, out, tuned, false);
    (t, a, b)
}

/// [`classify_with`]; with `leaf`, `out` only gets the points that block an opponent five
/// (all that a leaf searches, under [`Tactic::MustBlock`]). The last value says whether the
/// side to move can make a four at a candidate (whether or not `out` holds them all).
fn classify_node(
    g: &Gomoku,
    out: &mut Vec<Cand>,
    tuned: bool,
    leaf: bool,
) -> (Tactic, i32, i32, bool) {
    if !tuned {
        return classify_impl(g, out, None, None, leaf);
    }
    // The value equals `tuned_eval` of the features `classify_impl` would fill (also where
    // it stops early: both leave out the same points and terms).
    let mut sum = TunedSum::default();
    let (t, _, _, four) = classify_impl(g, out, None, Some(&mut sum), leaf);
    (t, sum.value, 0, four)
}

/// [`classify`] over the empty points near a stone ([`Gomoku::near_empty`]), filling the
/// evaluation features into `feats` and summing the tuned evaluation into `tuned` when
/// given.
fn classify_impl(
    g: &Gomoku,
    out: &mut Vec<Cand>,
    mut feats: Option<&mut [i32; EVAL_FEATURES]>,
    mut tuned: Option<&mut TunedSum>,
    leaf: bool,
) -> (Tactic, i32, i32, bool) {
    out.clear();
    let me = g.to_move();
    let opp = me.opp();
    if let Some(f) = g.forced_point() {
        let c = g.cell_of(f);
        out.push(Cand {
            cell: c,
            score: 0,
            my_four: false,
            opp_four: true,
            tactical: true,
        });
        return (Tactic::MustBlock(c), 0, 0, false);
    }
    let renju_black = g.rule() == Rule::Renju && me == Color::Black;
    let opp_renju_black = g.rule() == Rule::Renju && opp == Color::Black;
    let four_t = g.rule() == Rule::FourT;
    let facts: &[PointFacts] = &FACTS;
    let [eval_me, eval_opp] = &*POINT_EVAL;
    let mut opp_five: Option<usize> = None;
    let mut opp_fives = 0;
    let mut my_open: Option<usize> = None;
    let mut opp_open = false;
    let mut sum_me = 0;
    let mut sum_opp = 0;
    let (mut me43, mut me33, mut opp_fours) = (0, 0, 0);
    let mut my_four = false;
    // The empty points near a stone, in increasing (row-major) order.
    for cell in g.near_empty().iter() {
        let word = g.pattern_word(cell);
        let im = facts_index_of_word(word, me);
        let pm = facts[im];
        if pm.five() {
            return (Tactic::WinNow(cell), 0, 0, false);
        }
        let io = facts_index_of_word(word, opp);
        let po = facts[io];
        let mf = pm.fours();
        // Two fours at once win like an open four (not for renju Black: forbidden).
        let mo = pm.open_four() || (mf >= 2 && !renju_black);
        if four_t && (mo || mf >= 2) {
            // 4T: two completion points win at once.
            return (Tactic::WinNow(cell), 0, 0, false);
        }
        if po.five() {
            opp_fives += 1;
            if opp_five.is_none() {
                opp_five = Some(cell);
            }
        }
        let of = po.fours();
        let oo = po.open_four() || (of >= 2 && !opp_renju_black);
        let forbidden = renju_black && g.is_forbidden(cell);
        if !forbidden && mo && my_open.is_none() {
            my_open = Some(cell);
        }
        opp_open |= oo;
        let a = pm.score();
        let b = po.score();
        sum_me += a;
        sum_opp += b;
        if let Some(f) = feats.as_deref_mut() {
            if of > 0 {
                opp_fours += 1;
            }
            let (cm, co) = (pm.class(), po.class());
            if !forbidden && cm <= 2 {
                me43 += 1;
            } else if !forbidden && cm == 5 {
                me33 += 1;
            }
            if !forbidden {
                add_point_features(f, 0, pm);
            }
            let opp_forbidden = opp_renju_black && co < CELL_CLASSES && g.is_forbidden(cell);
            if !opp_forbidden {
                add_point_features(f, SIDE_FEATURES, po);
            }
        }
        if let Some(t) = tuned.as_deref_mut() {
            // The same terms as the features above, already weighted.
            if of > 0 {
                opp_fours += 1;
            }
            let (cm, co) = (pm.class(), po.class());
            if !forbidden {
                if cm <= 2 {
                    me43 += 1;
                } else if cm == 5 {
                    me33 += 1;
                }
                t.value += eval_me[im];
                t.classes[0] |= 1 << cm;
            }
            if !(opp_renju_black && co < CELL_CLASSES && g.is_forbidden(cell)) {
                t.value += eval_opp[io];
                t.classes[1] |= 1 << co;
            }
        }
        if forbidden {
            continue;
        }
        my_four |= mf > 0;
        if leaf && !po.five() {
            continue;
        }
        out.push(Cand {
            cell,
            score: a * 10 + b * 9,
            my_four: mf > 0,
            opp_four: of > 0 || po.five(),
            tactical: mf > 0 || of > 0 || a >= WEIGHT_THREE || b >= WEIGHT_THREE,
        });
    }
    // Caro: a five blocked at both ends does not win, so blocking one completion point of a
    // "double" four can also kill the other; the line patterns cannot see that, so two
    // completion points are neither a sure win nor a sure loss there: search every block.
    let caro = matches!(g.rule(), Rule::Caro | Rule::CaroExact);
    if let Some(c) = opp_five {
        if (opp_fives >= 2 && !caro) || (renju_black && g.is_forbidden(c)) {
            return (Tactic::Lost(c), sum_me, sum_opp, my_four);
        }
        out.retain(|x| g.patterns(x.cell, opp).contains(&Pattern::F5));
        return (Tactic::MustBlock(c), sum_me, sum_opp, my_four);
    }
    if let Some(c) = my_open.filter(|_| !caro) {
        return (Tactic::WinIn3(c), sum_me, sum_opp, my_four);
    }
    if let Some(f) = feats {
        for side in 0..2 {
            let base = side * SIDE_FEATURES;
            for k in 0..PRESENCE_FEATURES {
                f[base + CELL_CLASSES + LINE_FEATURES + k] = i32::from(f[base + 2 + k] > 0);
            }
        }
        if opp_fours == 0 {
            f[2 * SIDE_FEATURES] = i32::from(me43 > 0);
            f[2 * SIDE_FEATURES + 1] = i32::from(me43 == 0 && me33 > 0 && !opp_open);
        }
    }
    if let Some(t) = tuned {
        for side in 0..2 {
            let base = side * SIDE_FEATURES + CELL_CLASSES + LINE_FEATURES;
            for k in 0..PRESENCE_FEATURES {
                if t.classes[side] & 1 << (2 + k) != 0 {
                    t.value += EVAL_WEIGHTS[base + k];
                }
            }
        }
        if opp_fours == 0 {
            if me43 > 0 {
                t.value += EVAL_WEIGHTS[2 * SIDE_FEATURES];
            } else if me33 > 0 && !opp_open {
                t.value += EVAL_WEIGHTS[2 * SIDE_FEATURES + 1];
            }
        }
    }
    if opp_open {
        out.retain(|c| c.my_four || c.opp_four);
        return (Tactic::Defend, sum_me, sum_opp, my_four);
    }
    (Tactic::Quiet, sum_me, sum_opp, my_four)
}

/// The network's evaluation from `to_move`'s view in the search's units: a leaf's score
/// ([`static_eval`] of it, 1.5 times this) is the network's logit in thousandths, so that it
/// is on the scale of the pattern evaluation, which was fitted as a logit too. Bounded far
/// below the proven scores.
#[inline]
fn net_eval(a: &mut Accumulator, g: &Gomoku) -> i32 {
    let v = a.value(g) * (1000.0 / 1.5);
    v.clamp(-(WIN_THRESHOLD / 4) as f32, (WIN_THRESHOLD / 4) as f32) as i32
}

/// Whether two lists hold the same networks (the same allocations).
fn same_nets(a: &[Arc<EvalNet>], b: &[Arc<EvalNet>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
}

/// Static evaluation from the side to move's view, from the pattern sums of [`classify`].
/// The side to move gets a tempo bonus: its threats are one move closer than the opponent's.
#[inline]
pub fn static_eval(sum_me: i32, sum_opp: i32) -> i32 {
    (sum_me * 6 - sum_opp * 5) / 4
}

#[derive(Copy, Clone, Default)]
struct TtEntry {
    key: u64,
    score: i32,
    mv: u16,
    depth: i8,
    flag: u8,
}

impl TtEntry {
    /// Packed as two words (key, data) so the table is all-zero when empty: a zeroed
    /// allocation is lazy and nearly free, which keeps tiny time budgets cheap.
    fn pack(&self) -> [u64; 2] {
        let data = (self.score as u32 as u64)
            | (self.mv as u64) << 32
            | (self.depth as u8 as u64) << 48
            | (self.flag as u64) << 56;
        [self.key, data]
    }

    fn unpack(w: [u64; 2]) -> TtEntry {
        TtEntry {
            key: w[0],
            score: w[1] as u32 as i32,
            mv: (w[1] >> 32) as u16,
            depth: (w[1] >> 48) as u8 as i8,
            flag: (w[1] >> 56) as u8,
        }
    }
}

/// The transposition table, shared by the threads of one search (Lazy SMP). Each entry is
/// two atomic words, (key XOR data, data): a probe that reads a half-written entry (the two
/// words of different stores) recomputes a key that matches no position, so a torn entry
/// reads as a miss and is never trusted. The loads and stores are relaxed: an entry is a
/// hint checked by its key, and a stale one is as safe as a missing one.
struct SharedTable {
    slots: ZeroedTable<[AtomicU64; 2]>,
}

impl SharedTable {
    /// An all-zero (empty) table of `n` entries (`n` >= 1). Its pages are mapped on first
    /// touch, which keeps tiny time budgets cheap, and a large one asks for huge pages
    /// (`util::pages`): the probes land anywhere in it.
    fn new(n: usize) -> SharedTable {
        SharedTable {
            slots: ZeroedTable::huge(n.max(1)),
        }
    }

    /// Entries.
    fn len(&self) -> usize {
        self.slots.len()
    }

    /// The (key, data) words of entry `i` (a torn entry gives a key no position has).
    #[inline(always)]
    fn load(&self, i: usize) -> [u64; 2] {
        let s = &self.slots[i];
        let data = s[1].load(Ordering::Relaxed);
        [s[0].load(Ordering::Relaxed) ^ data, data]
    }

    /// Writes the (key, data) words to entry `i`.
    #[inline(always)]
    fn store(&self, i: usize, w: [u64; 2]) {
        let s = &self.slots[i];
        s[0].store(w[0] ^ w[1], Ordering::Relaxed);
        s[1].store(w[1], Ordering::Relaxed);
    }
}

const EXACT: u8 = 1;
const LOWER: u8 = 2;
const UPPER: u8 = 3;
const NO_CELL: u16 = u16::MAX;

/// Where a search's nodes went: plain counters, kept by every search (the increments cost
/// nothing measurable) and read by `examples/player_tree.rs` to see the shape of the tree.
/// Counts are of this thread only and start at zero with each [`Searcher::search`].
#[derive(Clone, Debug, Default)]
pub struct TreeStats {
    /// Interior nodes: `negamax` calls that searched moves (depth left, or a forced reply).
    pub interior: u64,
    /// Leaves: `negamax` calls at depth 0 that returned the evaluation or a leaf VCF.
    pub leaves: u64,
    /// Leaves where the leaf VCF ran (the side to move had a four).
    pub leaf_vcf_runs: u64,
    /// Nodes of the leaf VCFs (counted in the search's nodes too).
    pub leaf_vcf_nodes: u64,
    /// Leaf VCFs that found a win.
    pub leaf_vcf_wins: u64,
    /// Nodes of the root's threat searches (own VCF and VCT, the opponent's VCF).
    pub root_threat_nodes: u64,
    /// Table probes at `negamax` nodes, and how many found the position.
    pub tt_probes: u64,
    /// Probes that found the position.
    pub tt_hits: u64,
    /// Probes whose entry ended the node (deep enough and a usable bound).
    pub tt_cuts: u64,
    /// Interior nodes that failed high (a move reached beta).
    pub cuts: u64,
    /// Fail-highs on the first move searched.
    pub cuts_first: u64,
    /// Sum over fail-highs of the index of the move that failed high (0 = first).
    pub cut_index_sum: u64,
    /// Fail-highs where the table had a move for the node.
    pub cuts_with_tt_move: u64,
    /// Null-window searches of a later move that beat alpha and were searched again with
    /// the full window (PVS re-searches).
    pub pvs_researches: u64,
    /// Reduced searches (late-move reductions) that beat alpha and were searched again.
    pub lmr_researches: u64,
    /// Reduced searches.
    pub lmr_searches: u64,
    /// Interior nodes with a forced reply (the opponent makes five): searched at the
    /// parent's depth (the extension of the threat lines).
    pub forced: u64,
    /// Interior nodes that defend against an open-four threat (all defences searched).
    pub defend: u64,
    /// Interior quiet nodes.
    pub quiet: u64,
    /// Quiet nodes with more candidates than the width.
    pub truncated: u64,
    /// Of those, the nodes whose moves within the width all lost by force, so that the
    /// moves beyond it were searched too.
    pub widened: u64,
    /// Reverse-futility cuts.
    pub rfp_cuts: u64,
    /// Moves skipped by futility pruning.
    pub futility_skips: u64,
    /// Quiet nodes judged as a leaf by razoring.
    pub razor_tries: u64,
    /// Razoring cuts (the leaf judgement did not beat alpha, or found a VCF win).
    pub razor_cuts: u64,
}

/// The main player. See the module docs.
pub struct AlphaBeta {
    /// The transposition table, shared with the helper threads.
    tt: Arc<SharedTable>,
    /// A search ran since the table was made or cleared (else it is all zero).
    tt_used: bool,
    /// Search threads: this one plus `threads - 1` helpers (Lazy SMP).
    threads: usize,
    /// The helper threads' searchers (their own boards, stacks, history and threat solver;
    /// the table is this searcher's). Kept between searches; built on demand.
    helpers: Vec<AlphaBeta>,
    /// Which thread of a search this searcher is (0: the main one; helpers count from 1).
    id: usize,
    /// Nodes the helper threads searched in the last search's iterative deepening.
    helper_nodes: u64,
    memory: usize,
    stack: Vec<Vec<Cand>>,
    history: Vec<i32>,
    aborted: bool,
    /// Candidates searched at interior nodes in quiet positions.
    width: usize,
    /// Threat-space solver (VCF/VCT) used at the root.
    threats: ThreatSolver,
    /// The root moves were filtered against the opponent's VCF (do not truncate them).
    defending: bool,
    /// Node cap of the VCF run at each leaf where the side to move has a four (0: off).
    leaf_vcf_nodes: u64,
    /// Per ply of the current search, the static evaluation of a quiet node (`i32::MIN` for
    /// the others), for "improving" in the late-move reductions.
    evals: Vec<i32>,
    /// Where the last search's nodes went (this thread's).
    stats: TreeStats,
    /// Evaluation networks to use instead of the pattern evaluation; a position under a rule
    /// none of them serves ([`EvalNet::serves`]) uses the pattern evaluation.
    eval_nets: Vec<Arc<EvalNet>>,
    /// The running sums of the network in use for the current search's board.
    acc: Option<Accumulator>,
    /// Positions the static evaluation judged, sampled for the eval net's training data
    /// ([`AlphaBeta::sample_leaves`]); `None` (the default) samples nothing.
    leaf_sample: Option<LeafSample>,
}

/// A random sample of the positions a search scores with the static evaluation: its
/// quiet leaves where the leaf VCF found no win, and the nodes razoring judges the same way.
#[derive(Debug)]
struct LeafSample {
    /// Chance of keeping a position, in 1/65536.
    rate: u64,
    rng: crate::util::Rng,
    /// The kept positions, each as its moves from the empty board.
    kept: Vec<Vec<Move>>,
}

impl Default for AlphaBeta {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for AlphaBeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlphaBeta {{ tt: {} entries }}", self.tt.len())
    }
}

fn mate_to_tt(s: i32, ply: usize) -> i32 {
    if s >= WIN_THRESHOLD {
        s + ply as i32
    } else if s <= -WIN_THRESHOLD {
        s - ply as i32
    } else {
        s
    }
}

fn mate_from_tt(s: i32, ply: usize) -> i32 {
    if s >= WIN_THRESHOLD {
        s - ply as i32
    } else if s <= -WIN_THRESHOLD {
        s + ply as i32
    } else {
        s
    }
}

impl AlphaBeta {
    /// A player with the default table memory (allocated lazily on the first search).
    pub fn new() -> Self {
        Self::with_threat_bits(18)
    }

    /// A player whose threat solver has 2^`bits` entries per table.
    fn with_threat_bits(bits: u32) -> Self {
        AlphaBeta {
            tt: Arc::new(SharedTable::new(1)),
            tt_used: false,
            threads: 1,
            helpers: Vec::new(),
            id: 0,
            helper_nodes: 0,
            memory: DEFAULT_MEMORY_BYTES,
            stack: (0..=MAX_PLY + 1).map(|_| Vec::with_capacity(64)).collect(),
            history: Vec::new(),
            aborted: false,
            width: 14,
            threats: ThreatSolver::dense(bits),
            defending: false,
            leaf_vcf_nodes: LEAF_VCF_NODES,
            evals: vec![i32::MIN; MAX_PLY + 2],
            stats: TreeStats::default(),
            eval_nets: Vec::new(),
            acc: None,
            leaf_sample: None,
        }
    }

    /// From the next search on, keeps each position this searcher judges with the static
    /// evaluation with probability `rate` (0..=1, seeded by `seed`; with helper threads, the
    /// main thread's only): the leaves a search actually scores, which differ from the
    /// positions of its games (the eval net's leaf data, docs/training.md). Sampling does
    /// not change the search. [`AlphaBeta::take_leaf_samples`] collects them.
    pub fn sample_leaves(&mut self, rate: f64, seed: u64) {
        self.leaf_sample = Some(LeafSample {
            rate: (rate.clamp(0.0, 1.0) * 65536.0).round() as u64,
            rng: crate::util::Rng::new(seed),
            kept: Vec::new(),
        });
    }

    /// The positions kept since [`AlphaBeta::sample_leaves`] (each as its moves from the
    /// empty board, in order), and stops sampling.
    pub fn take_leaf_samples(&mut self) -> Vec<Vec<Move>> {
        self.leaf_sample.take().map(|s| s.kept).unwrap_or_default()
    }

    /// Evaluates with these networks where one serves the position's rule
    /// ([`EvalNet::serves`]; the pattern evaluation elsewhere, and with none).
    pub fn set_eval_nets(&mut self, nets: Vec<Arc<EvalNet>>) {
        self.eval_nets = nets;
        self.acc = None;
    }

    /// Whether the search of `g` evaluates with a network.
    pub fn uses_eval_net(&self, g: &Gomoku) -> bool {
        self.eval_nets.iter().any(|n| n.serves(g.rule()))
    }

    /// Starts the network's running sums on `g` (or drops them where no network fits).
    fn start_eval(&mut self, g: &Gomoku) {
        let Some(net) = self.eval_nets.iter().find(|n| n.serves(g.rule())) else {
            self.acc = None;
            return;
        };
        if !self.acc.as_ref().is_some_and(|a| Arc::ptr_eq(a.net(), net)) {
            self.acc = Some(Accumulator::new(net.clone()));
        }
        if let Some(a) = &mut self.acc {
            a.reset(g);
        }
    }

    /// Tells the network's sums that a stone was placed on `cell`.
    #[inline(always)]
    fn eval_played(&mut self, cell: usize) {
        if let Some(a) = &mut self.acc {
            a.played(cell);
        }
    }

    /// Tells the network's sums that the last stone was taken back.
    #[inline(always)]
    fn eval_taken_back(&mut self) {
        if let Some(a) = &mut self.acc {
            a.taken_back();
        }
    }

    /// Where the last search's nodes went (the main thread's share).
    pub fn tree_stats(&self) -> &TreeStats {
        &self.stats
    }

    fn ensure_tt(&mut self) {
        let entries = (self.memory / 16).max(1024);
        // Power of two so the index is a mask.
        let n = 1usize << (usize::BITS - 1 - entries.leading_zeros());
        if self.tt.len() != n {
            // Free the old table before allocating the new one (helpers hold it too).
            self.tt = Arc::new(SharedTable::new(1));
            for h in &mut self.helpers {
                h.tt = self.tt.clone();
            }
            self.tt = Arc::new(SharedTable::new(n));
        }
    }

    #[inline]
    fn tt_probe(&self, key: u64) -> Option<TtEntry> {
        let e = TtEntry::unpack(self.tt.load((key as usize) & (self.tt.len() - 1)));
        (e.key == key && e.flag != 0).then_some(e)
    }

    #[inline]
    fn tt_store(&mut self, key: u64, depth: i32, score: i32, flag: u8, mv: u16) {
        let i = (key as usize) & (self.tt.len() - 1);
        let e = TtEntry::unpack(self.tt.load(i));
        if e.key != key || depth >= e.depth as i32 || flag == EXACT {
            self.tt.store(
                i,
                TtEntry {
                    key,
                    score,
                    mv,
                    depth: depth.clamp(-100, 100) as i8,
                    flag,
                }
                .pack(),
            );
        }
    }

    /// Sorts `cands` for searching: table move first, then by score plus history. Only the
    /// first `keep` places are sorted (and hold the best `keep`) where the rest is searched
    /// only if those all lose (and then sorted by [`Self::sort_cands`]); the order is total
    /// (ties go to the lower cell), so they are the same as a full sort's.
    fn order(&self, cands: &mut [Cand], tt_cell: u16, keep: usize) {
        for c in cands.iter_mut() {
            if c.cell as u16 == tt_cell {
                c.score = i32::MAX;
            } else {
                let h = self.history.get(c.cell).copied().unwrap_or(0);
                // History only breaks ties between similar pattern scores.
                let h = h.min(40);
                c.score = c.score.saturating_add(h);
            }
        }
        self.sort_cands(cands, keep);
    }

    /// Sorts `cands` by score, best first (only the best `keep` of them when fewer).
    fn sort_cands(&self, cands: &mut [Cand], keep: usize) {
        // Helper threads break ties in another (still total) order, so that they do not all
        // walk the same tree (Lazy SMP diversity); the main thread's is the lower cell first.
        let mask = self.id.wrapping_mul(0x5B);
        let by = |a: &Cand, b: &Cand| {
            b.score
                .cmp(&a.score)
                .then((a.cell ^ mask).cmp(&(b.cell ^ mask)))
        };
        if keep < cands.len() {
            cands.select_nth_unstable_by(keep, by);
            cands[..keep].sort_unstable_by(by);
        } else {
            cands.sort_unstable_by(by);
        }
    }

    /// Negamax alpha-beta with PVS. Returns the score from the side to move's view.
    fn negamax(
        &mut self,
        g: &mut Gomoku,
        budget: &mut Budget,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        budget.nodes += 1;
        if budget.exhausted() {
            self.aborted = true;
            return 0;
        }
        if g.stones() >= g.width() * g.height() {
            return 0;
        }
        // Mate-distance pruning.
        let alpha0 = alpha.max(-(WIN - ply as i32));
        let beta0 = beta.min(WIN - ply as i32 - 1);
        if alpha0 >= beta0 {
            return alpha0;
        }
        let key = g.hash();
        let mut tt_cell = NO_CELL;
        self.stats.tt_probes += 1;
        if let Some(e) = self.tt_probe(key) {
            self.stats.tt_hits += 1;
            tt_cell = e.mv;
            if e.depth as i32 >= depth {
                let s = mate_from_tt(e.score, ply);
                let cut = match e.flag {
                    EXACT => true,
                    LOWER => s >= beta,
                    UPPER => s <= alpha,
                    _ => false,
                };
                if cut {
                    self.stats.tt_cuts += 1;
                    return s;
                }
            }
        }
        let mut cands = std::mem::take(&mut self.stack[ply]);
        // A leaf searches nothing but the blocks of a five: skip collecting the rest.
        let leaf = depth <= 0 || ply >= MAX_PLY;
        // A residual network corrects the pattern evaluation, which is then summed as well.
        let residual = self.acc.as_ref().is_some_and(|a| a.net().residual());
        let tuned = self.acc.is_none() || residual;
        let (tactic, mut sum_me, mut sum_opp, my_four) = classify_node(g, &mut cands, tuned, leaf);
        if let (Some(a), Tactic::Defend | Tactic::Quiet) = (&mut self.acc, &tactic) {
            let v = net_eval(a, g);
            (sum_me, sum_opp) = (if residual { sum_me + v } else { v }, 0);
        }
        let mut child_depth = depth - 1;
        match tactic {
            Tactic::WinNow(_) => {
                self.stack[ply] = cands;
                return WIN - ply as i32 - 1;
            }
            Tactic::WinIn3(_) => {
                self.stack[ply] = cands;
                return WIN - ply as i32 - 3;
            }
            Tactic::Lost(_) => {
                self.stack[ply] = cands;
                return -(WIN - ply as i32 - 2);
            }
            Tactic::MustBlock(_) => {
                // Forced replies do not use depth: threat sequences are read to their end.
                child_depth = depth;
                self.stats.forced += 1;
            }
            Tactic::Defend | Tactic::Quiet => {
                if depth <= 0 || ply >= MAX_PLY {
                    self.stats.leaves += 1;
                    let v = self.leaf_value(g, budget, my_four, ply, sum_me, sum_opp);
                    self.stack[ply] = cands;
                    return v;
                }
            }
        }
        if ply >= MAX_PLY {
            self.stack[ply] = cands;
            return static_eval(sum_me, sum_opp);
        }
        if cands.is_empty() {
            self.stack[ply] = cands;
            return static_eval(sum_me, sum_opp);
        }
        let quiet = matches!(tactic, Tactic::Quiet);
        self.stats.interior += 1;
        if quiet {
            self.stats.quiet += 1;
        } else if matches!(tactic, Tactic::Defend) {
            self.stats.defend += 1;
        }
        // The tuned evaluation; a leaf returns `static_eval` of it, 1.5 times as much, so
        // the futility margins below are in the same units as the leaves' scores / 1.5.
        let eval = sum_me;
        let non_pv = beta0 - alpha == 1;
        // Improving: the evaluation beats that of the side to move's last node two plies up
        // (unknown there, e.g. a forced reply, counts as improving).
        self.evals[ply] = if quiet { eval } else { i32::MIN };
        let improving = ply < 2 || self.evals[ply - 2] == i32::MIN || eval > self.evals[ply - 2];
        if quiet
            && non_pv
            && depth <= RFP_DEPTH
            && beta0.abs() < WIN_THRESHOLD
            && eval - RFP_MARGIN * depth >= beta0
        {
            self.stats.rfp_cuts += 1;
            self.stack[ply] = cands;
            return eval;
        }
        if quiet
            && non_pv
            && depth <= RAZOR_DEPTH
            && alpha.abs() < WIN_THRESHOLD
            && eval + RAZOR_MARGIN * depth <= alpha
        {
            self.stats.razor_tries += 1;
            let v = self.leaf_value(g, budget, my_four, ply, sum_me, sum_opp);
            // A VCF win is a proof: return it whatever the bound.
            if v <= alpha || v >= WIN_THRESHOLD {
                self.stats.razor_cuts += 1;
                self.stack[ply] = cands;
                return v;
            }
        }
        if quiet && depth >= IIR_DEPTH && tt_cell == NO_CELL {
            child_depth -= 1;
        }
        let futile = quiet
            && depth <= FUT_DEPTH
            && alpha.abs() < WIN_THRESHOLD
            && eval + FUT_MARGIN * depth <= alpha;
        if quiet {
            learned_order(g, &mut cands);
        }
        let keep = if quiet { self.width } else { usize::MAX };
        self.order(&mut cands, tt_cell, keep);
        let width = keep.min(cands.len());
        if width < cands.len() {
            self.stats.truncated += 1;
        }
        let mut best = -WIN;
        let mut best_cell = NO_CELL;
        let mut flag = UPPER;
        for i in 0..cands.len() {
            // Width and futility pruning apply only while some searched move does not lose by
            // force. A node whose searched moves all lose searches the pruned ones as well
            // before it concedes: otherwise its mate score would rest on defences it never
            // tried, and the side that "wins" would play a line the pruned move refutes.
            let all_lost = best <= -WIN_THRESHOLD;
            if i == width {
                if !all_lost {
                    break;
                }
                self.stats.widened += 1;
                self.sort_cands(&mut cands[width..], usize::MAX);
            }
            let c = cands[i];
            if futile && i > 0 && !c.tactical && !all_lost {
                self.stats.futility_skips += 1;
                continue;
            }
            let m = g.move_of(c.cell);
            g.play_unchecked(m);
            self.eval_played(c.cell);
            let score = match g.outcome() {
                Some(Outcome::Win(_)) => WIN - ply as i32 - 1,
                Some(Outcome::Draw) => 0,
                None => {
                    if i == 0 {
                        -self.negamax(g, budget, child_depth, -beta0, -alpha, ply + 1)
                    } else {
                        // Late quiet moves are searched shallower first; one that beats
                        // alpha is searched again at full depth.
                        let r = if quiet && depth >= 3 && !c.my_four && !c.opp_four {
                            let base = i32::from(
                                LMR[(depth as usize).min(LMR_TABLE - 1)][i.min(LMR_TABLE - 1)],
                            );
                            if base > 0 {
                                (base + i32::from(!improving)).min(depth - 1)
                            } else {
                                0
                            }
                        } else {
                            0
                        };
                        let mut s =
                            -self.negamax(g, budget, child_depth - r, -alpha - 1, -alpha, ply + 1);
                        if r > 0 {
                            self.stats.lmr_searches += 1;
                        }
                        if r > 0 && s > alpha && !self.aborted {
                            self.stats.lmr_researches += 1;
                            s = -self.negamax(g, budget, child_depth, -alpha - 1, -alpha, ply + 1);
                        }
                        if s > alpha && s < beta0 && !self.aborted {
                            self.stats.pvs_researches += 1;
                            -self.negamax(g, budget, child_depth, -beta0, -alpha, ply + 1)
                        } else {
                            s
                        }
                    }
                }
            };
            g.undo();
            self.eval_taken_back();
            if self.aborted {
                self.stack[ply] = cands;
                return 0;
            }
            if score > best {
                best = score;
                best_cell = c.cell as u16;
                if score > alpha {
                    alpha = score;
                    flag = EXACT;
                    if score >= beta0 {
                        flag = LOWER;
                        self.stats.cuts += 1;
                        self.stats.cuts_first += u64::from(i == 0);
                        self.stats.cut_index_sum += i as u64;
                        self.stats.cuts_with_tt_move += u64::from(tt_cell != NO_CELL);
                        if let Some(hv) = self.history.get_mut(c.cell) {
                            *hv += depth.max(1) * depth.max(1);
                        }
                        break;
                    }
                }
            }
        }
        self.stack[ply] = cands;
        self.tt_store(key, depth, mate_to_tt(best, ply), flag, best_cell);
        best
    }

    /// What a leaf is worth: the mate score of a [`Self::leaf_vcf`] win, else the static
    /// evaluation of the pattern sums (also razoring's judgement of a node).
    fn leaf_value(
        &mut self,
        g: &mut Gomoku,
        budget: &mut Budget,
        my_four: bool,
        ply: usize,
        sum_me: i32,
        sum_opp: i32,
    ) -> i32 {
        if let Some(v) = self.leaf_vcf(g, budget, my_four, ply) {
            return v;
        }
        if let Some(s) = self.leaf_sample.as_mut() {
            if s.rng.next_u64() & 0xffff < s.rate {
                s.kept
                    .push(g.history_cells().map(|(c, _)| g.move_of(c)).collect());
            }
        }
        static_eval(sum_me, sum_opp)
    }

    /// Threat search at a leaf: a win by continuous fours for the side to move, as a mate
    /// score (the line is a proof, so the score is sound). Only where the side to move can
    /// make a four at all (`my_four`: at a candidate point), and with a small node cap, so
    /// quiet leaves stay cheap. Not under caro, whose fours the line patterns overrate (see
    /// [`classify`]).
    fn leaf_vcf(
        &mut self,
        g: &mut Gomoku,
        budget: &mut Budget,
        my_four: bool,
        ply: usize,
    ) -> Option<i32> {
        if self.leaf_vcf_nodes == 0 || matches!(g.rule(), Rule::Caro | Rule::CaroExact) || !my_four
        {
            return None;
        }
        let mut sub = budget.sub(self.leaf_vcf_nodes);
        let line = self.threats.vcf(g, &mut sub, LEAF_VCF_DEPTH);
        budget.nodes += sub.nodes;
        self.stats.leaf_vcf_runs += 1;
        self.stats.leaf_vcf_nodes += sub.nodes;
        self.stats.leaf_vcf_wins += u64::from(line.is_some());
        line.map(|l| WIN - ply as i32 - l.len() as i32)
    }

    /// Root search of one iteration. Returns (score, best cell, completed moves).
    fn root(
        &mut self,
        g: &mut Gomoku,
        budget: &mut Budget,
        depth: i32,
        moves: &mut [Cand],
    ) -> (i32, usize, usize) {
        let mut alpha = -WIN;
        let beta = WIN;
        let mut best = (-WIN, moves[0].cell);
        let mut done = 0;
        let mut best_idx = 0;
        for (i, c) in moves.iter().enumerate() {
            budget.nodes += 1;
            let m = g.move_of(c.cell);
            g.play_unchecked(m);
            self.eval_played(c.cell);
            let score = match g.outcome() {
                Some(Outcome::Win(_)) => WIN - 1,
                Some(Outcome::Draw) => 0,
                None => {
                    if i == 0 {
                        -self.negamax(g, budget, depth - 1, -beta, -alpha, 1)
                    } else {
                        let s = -self.negamax(g, budget, depth - 1, -alpha - 1, -alpha, 1);
                        if s > alpha && !self.aborted {
                            -self.negamax(g, budget, depth - 1, -beta, -alpha, 1)
                        } else {
                            s
                        }
                    }
                }
            };
            g.undo();
            self.eval_taken_back();
            if self.aborted {
                break;
            }
            done += 1;
            if score > best.0 {
                best = (score, c.cell);
                best_idx = i;
                alpha = alpha.max(score);
            }
        }
        // Best move first for the next iteration.
        if best_idx > 0 {
            moves[..=best_idx].rotate_right(1);
        }
        (best.0, best.1, done)
    }

    /// Threat-space search at the root, each part with a share of the budget:
    /// the side to move's VCF, then its VCT (a found line is played and reported as proven);
    /// then the opponent's VCF: when it has one, the root moves are cut down to those after
    /// which it has none (own fours always stay), unless that leaves nothing.
    fn root_threats(
        &mut self,
        g: &mut Gomoku,
        limits: &Limits,
        stop: &AtomicBool,
        budget: &mut Budget,
        moves: &mut Vec<Cand>,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> Option<SearchResult> {
        self.defending = false;
        let me = g.to_move();
        // The threat search reads line patterns, which overrate caro fours (see `classify`):
        // its winning lines are not trusted there, only used to find threats to defend.
        let caro = matches!(g.rule(), Rule::Caro | Rule::CaroExact);
        // Share of the remaining budget: `pct` percent of the time and of the nodes.
        let share = |pct: u32, default_nodes: u64, budget: &Budget| -> Limits {
            let time = limits
                .time
                .map(|t| t.saturating_sub(budget.elapsed()) * pct / 100);
            let nodes = match (limits.nodes, limits.time) {
                (Some(n), _) => Some(n.saturating_sub(budget.nodes) * pct as u64 / 100),
                (None, None) => Some(default_nodes),
                (None, Some(_)) => None,
            };
            Limits {
                time,
                nodes,
                depth: None,
            }
        };
        let found = |line: Vec<Move>, nodes: u64, on_event: &mut dyn FnMut(&SearchEvent)| {
            on_event(&SearchEvent::Proven {
                winner: Some(me),
                line: line.clone(),
            });
            SearchResult {
                best: line.first().copied(),
                score: WIN - line.len() as i32,
                proven: Some(Some(me)),
                nodes,
                pv: line,
            }
        };
        let own = if caro {
            &[][..]
        } else {
            &[(false, 10, 40), (true, 6, 10)][..]
        };
        for &(vct, pct, depth) in own {
            let l = share(pct, 300_000, budget);
            if l.nodes == Some(0) || l.time == Some(Duration::ZERO) {
                continue;
            }
            let mut sub = Budget::new(&l, stop);
            let line = if vct {
                self.threats.vct(g, &mut sub, depth)
            } else {
                self.threats.vcf(g, &mut sub, depth)
            };
            budget.nodes += sub.nodes;
            if let Some(line) = line.filter(|l| !l.is_empty()) {
                if g.check_move(line[0]).is_ok() {
                    return Some(found(line, budget.nodes, on_event));
                }
            }
        }
        // The opponent's VCF, as if it were to move now.
        let l = share(5, 100_000, budget);
        if l.nodes == Some(0) || l.time == Some(Duration::ZERO) {
            return None;
        }
        let mut sub = Budget::new(&l, stop);
        g.set_to_move(me.opp());
        let opp_line = self.threats.vcf(g, &mut sub, 40);
        g.set_to_move(me);
        budget.nodes += sub.nodes;
        opp_line.as_ref()?;
        let per_move = share(15, 300_000, budget);
        let n = moves.len().max(1) as u32;
        let per = Limits {
            time: per_move.time.map(|t| t / n),
            nodes: per_move.nodes.map(|x| x / n as u64),
            depth: None,
        };
        let mut keep = Vec::new();
        for c in moves.iter() {
            if c.my_four {
                keep.push(*c);
                continue;
            }
            let mut sub = Budget::new(&per, stop);
            g.play_unchecked(g.move_of(c.cell));
            let refuted = self.threats.vcf(g, &mut sub, 40).is_some();
            g.undo();
            budget.nodes += sub.nodes;
            if !refuted {
                keep.push(*c);
            }
        }
        if !keep.is_empty() && keep.len() < moves.len() {
            *moves = keep;
            self.defending = true;
        }
        None
    }

    fn pv(&self, g: &mut Gomoku, first: usize) -> Vec<Move> {
        let mut pv = vec![g.move_of(first)];
        g.play_unchecked(g.move_of(first));
        let mut played = 1;
        while played < 32 && g.outcome().is_none() {
            let Some(e) = self.tt_probe(g.hash()) else {
                break;
            };
            if e.mv == NO_CELL {
                break;
            }
            let m = g.move_of(e.mv as usize);
            if g.check_move(m).is_err() {
                break;
            }
            pv.push(m);
            g.play_unchecked(m);
            played += 1;
        }
        for _ in 0..played {
            g.undo();
        }
        pv
    }
}

/// Which five point the side to move plays: `cell` (one of its five points), or under renju
/// another of Black's. A five that Black makes together with a line of six in another
/// direction wins (pcn's rules and Rapfi's check the five first), but a referee that checks
/// the overline first (c-gomoku-cli does) scores it as a forbidden move. So where Black has
/// another five point that makes no overline, that one is played; otherwise `cell`.
fn undisputed_five(g: &Gomoku, cell: usize) -> usize {
    let me = g.to_move();
    if g.rule() != Rule::Renju || me != Color::Black {
        return cell;
    }
    let overline = |c: usize| g.patterns(c, me).contains(&Pattern::Overline);
    if !overline(cell) {
        return cell;
    }
    g.near_empty()
        .iter()
        .find(|&c| g.patterns(c, me).contains(&Pattern::F5) && !overline(c))
        .unwrap_or(cell)
}

/// Fallback when no candidate exists (e.g. every nearby point is forbidden): the first legal move.
fn first_legal(g: &Gomoku) -> Option<Move> {
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    let c = g.cell_of(g.centre());
    // Prefer the centre-most legal move so the fallback is not absurd.
    legal.into_iter().min_by_key(|&m| {
        let d = g.cell_of(m) as isize - c as isize;
        d.abs()
    })
}

impl Searcher<Gomoku> for AlphaBeta {
    fn name(&self) -> &'static str {
        "pcn"
    }

    fn clear(&mut self) {
        self.threats.clear();
        // A searched table is zeroed in place: its pages stay mapped, so the next game's
        // first searches do not pay for mapping them again, and the zeros are written
        // between games. An unsearched one is all zero already. The helpers hand back
        // their handles first; were one still held elsewhere, a fresh table would do.
        for h in &mut self.helpers {
            h.tt = Arc::new(SharedTable::new(1));
        }
        if std::mem::take(&mut self.tt_used) {
            match Arc::get_mut(&mut self.tt) {
                Some(t) => t.slots.zero(),
                None => {
                    let n = self.tt.len();
                    self.tt = Arc::new(SharedTable::new(1));
                    self.tt = Arc::new(SharedTable::new(n));
                }
            }
        }
        self.history.iter_mut().for_each(|h| *h = 0);
        // The helpers get the new table at the next search; their own state goes now.
        for h in &mut self.helpers {
            h.tt = self.tt.clone();
            h.threats.clear();
            h.history.iter_mut().for_each(|x| *x = 0);
        }
    }

    /// Threads of the search: with more than one, helper threads run the same iterative
    /// deepening on their own boards and share the transposition table (Lazy SMP); 1 is
    /// the single-threaded search.
    fn set_threads(&mut self, threads: usize) {
        // More threads than the hardware runs at once only share the cores and the table
        // (and each helper has its own threat tables): capped there, but 2 stay possible.
        let hw = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.threads = threads.clamp(1, hw.max(2));
    }

    fn set_memory(&mut self, bytes: usize) {
        self.memory = if bytes == 0 {
            DEFAULT_MEMORY_BYTES
        } else {
            bytes
        };
    }

    fn search(
        &mut self,
        game: &Gomoku,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let mut budget = Budget::new(limits, stop);
        let mut g = game.clone();
        // Every node scans the empty points near a stone: keep them with the moves.
        g.track_near();
        let me = g.to_move();
        self.aborted = false;
        self.stats = TreeStats::default();
        self.helper_nodes = 0;
        self.ensure_tt();
        self.tt_used = true;
        let cells = g.cell_range().end;
        if self.history.len() != cells {
            self.history = vec![0; cells];
        }
        // Age the history so old games do not dominate.
        self.history.iter_mut().for_each(|h| *h /= 4);
        if g.outcome().is_some() {
            return SearchResult::default();
        }
        if g.stones() == 0 {
            let m = g.centre();
            return SearchResult {
                best: Some(m),
                nodes: 1,
                pv: vec![m],
                ..SearchResult::default()
            };
        }
        let mut moves = Vec::new();
        let (tactic, _, _) = classify(&g, &mut moves);
        let proven =
            |winner: Color, cell: usize, g: &Gomoku, on_event: &mut dyn FnMut(&SearchEvent)| {
                let m = g.move_of(cell);
                on_event(&SearchEvent::Proven {
                    winner: Some(winner),
                    line: vec![m],
                });
                SearchResult {
                    best: Some(m),
                    score: if winner == me { WIN - 1 } else { -WIN + 2 },
                    proven: Some(Some(winner)),
                    nodes: 1,
                    pv: vec![m],
                }
            };
        match tactic {
            Tactic::WinNow(c) => return proven(me, undisputed_five(&g, c), &g, on_event),
            Tactic::Lost(c) => {
                // Block one five if that point is playable (renju: it may be forbidden).
                let cell = if g.check_move(g.move_of(c)).is_ok() {
                    Some(c)
                } else {
                    moves
                        .first()
                        .map(|x| x.cell)
                        .or_else(|| first_legal(&g).map(|m| g.cell_of(m)))
                };
                if let Some(cell) = cell {
                    return proven(me.opp(), cell, &g, on_event);
                }
                return SearchResult::default();
            }
            Tactic::MustBlock(c) if moves.len() <= 1 => {
                let m = g.move_of(c);
                return SearchResult {
                    best: Some(m),
                    nodes: 1,
                    pv: vec![m],
                    ..SearchResult::default()
                };
            }
            _ => {}
        }
        if moves.is_empty() {
            let best = first_legal(&g);
            return SearchResult {
                best,
                nodes: 1,
                pv: best.into_iter().collect(),
                ..SearchResult::default()
            };
        }
        self.start_eval(&g);
        if let Some(a) = &self.acc {
            log::debug!(
                "pcn: evaluation network ({}, {} channels, {:?}) under {}",
                a.net().rule().name(),
                a.net().channels(),
                a.simd(),
                g.rule().name()
            );
        }
        let before_threats = budget.nodes;
        let threats = self.root_threats(&mut g, limits, stop, &mut budget, &mut moves, on_event);
        self.stats.root_threat_nodes = budget.nodes - before_threats;
        if let Some(r) = threats {
            return r;
        }
        if matches!(tactic, Tactic::Quiet) {
            learned_order(&g, &mut moves);
        }
        self.order(&mut moves, NO_CELL, usize::MAX);
        // The root keeps more candidates than interior nodes.
        let root_truncated =
            matches!(tactic, Tactic::Quiet) && !self.defending && moves.len() > self.width * 2;
        if root_truncated {
            moves.truncate(self.width * 2);
        }
        // Lazy SMP: the helpers run the same iterative deepening on their own boards, sharing
        // the table, until this thread's deepening ends; only this thread's iterations choose
        // the move (the helpers' work reaches it through the table).
        let mut helpers = std::mem::take(&mut self.helpers);
        helpers.truncate(self.threads.saturating_sub(1));
        while helpers.len() + 1 < self.threads {
            let id = helpers.len() + 1;
            // A helper's threat solver serves only its leaf VCFs: a quarter of the main one's.
            let mut h = AlphaBeta::with_threat_bits(HELPER_THREAT_BITS);
            h.id = id;
            helpers.push(h);
        }
        for h in &mut helpers {
            h.tt = self.tt.clone();
            h.width = self.width;
            h.leaf_vcf_nodes = self.leaf_vcf_nodes;
            if !same_nets(&h.eval_nets, &self.eval_nets) {
                h.set_eval_nets(self.eval_nets.clone());
            }
            if h.history.len() != cells {
                h.history = vec![0; cells];
            }
            h.history.iter_mut().for_each(|x| *x /= 4);
        }
        let halt = AtomicBool::new(false);
        let helper_nodes = AtomicU64::new(0);
        let max_depth = limits.depth.unwrap_or(64).clamp(1, 64) as i32;
        let result = std::thread::scope(|scope| {
            for h in helpers.iter_mut() {
                let (mut hg, hmoves) = (g.clone(), moves.clone());
                let (halt, helper_nodes) = (&halt, &helper_nodes);
                // A helper the system cannot start is left out: the search goes on without it.
                let started = std::thread::Builder::new().spawn_scoped(scope, move || {
                    h.helper_deepening(&mut hg, hmoves, limits, max_depth, halt, helper_nodes)
                });
                if let Err(e) = started {
                    log::warn!("pcn: helper thread not started: {e}");
                }
            }
            let r = self.deepen(
                &mut g,
                &mut budget,
                &mut moves,
                max_depth,
                root_truncated,
                &helper_nodes,
                on_event,
            );
            halt.store(true, Ordering::Relaxed);
            r
        });
        self.helpers = helpers;
        self.helper_nodes = helper_nodes.load(Ordering::Relaxed);
        log::debug!(
            "pcn: {} search threads, {} nodes ({} by helpers)",
            self.threads,
            result.nodes + self.helper_nodes,
            self.helper_nodes
        );
        SearchResult {
            nodes: result.nodes + self.helper_nodes,
            ..result
        }
    }
}

impl AlphaBeta {
    /// The main thread's iterative deepening over the root `moves`; `helper_nodes` counts
    /// the helper threads' nodes so far (reported with this thread's).
    #[allow(clippy::too_many_arguments)]
    fn deepen(
        &mut self,
        g: &mut Gomoku,
        budget: &mut Budget,
        moves: &mut [Cand],
        max_depth: i32,
        root_truncated: bool,
        helper_nodes: &AtomicU64,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let me = g.to_move();
        let mut best_cell = moves[0].cell;
        let mut best_score = 0;
        let mut last_pv = vec![g.move_of(best_cell)];
        let mut proven_result = None;
        for depth in 1..=max_depth {
            let (score, cell, done) = self.root(g, budget, depth, moves);
            if self.aborted {
                // Keep the best of this partial iteration only if it beat the previous best.
                if done > 0 && cell != best_cell {
                    best_cell = cell;
                    best_score = score;
                    last_pv = vec![g.move_of(cell)];
                }
                break;
            }
            best_cell = cell;
            best_score = score;
            last_pv = self.pv(g, cell);
            let nodes = budget.nodes + helper_nodes.load(Ordering::Relaxed);
            let elapsed = budget.elapsed();
            log::debug!(
                "pcn: depth {depth} score {score} nodes {nodes} ms {}",
                elapsed.as_millis()
            );
            on_event(&SearchEvent::Info {
                depth: depth as u32,
                nodes,
                score,
                pv: last_pv.clone(),
                elapsed,
            });
            // Every mate score is a proof: no pruning leaves a defence unsearched (see
            // `negamax`), except the root's own cut to its best candidates, which only a loss
            // can rest on.
            if (score >= WIN_THRESHOLD || score <= -WIN_THRESHOLD) && !(root_truncated && score < 0)
            {
                let winner = if score > 0 { me } else { me.opp() };
                on_event(&SearchEvent::Proven {
                    winner: Some(winner),
                    line: last_pv.clone(),
                });
                proven_result = Some(Some(winner));
                // A proven win is final; a proven loss too (the longest defence is kept).
                break;
            }
            if budget.exhausted() {
                break;
            }
        }
        SearchResult {
            best: Some(g.move_of(best_cell)),
            score: best_score,
            proven: proven_result,
            nodes: budget.nodes,
            pv: last_pv,
        }
    }

    /// A helper thread's iterative deepening (Lazy SMP): the main thread's root moves, from
    /// depth 1 on even ids and 2 on odd ones (so two threads do not search the same depth in
    /// step), until `halt` (set when the main thread is done), `limits`' time or `max_depth`.
    /// Its results only fill the shared table; its nodes are added to `nodes` as it goes.
    fn helper_deepening(
        &mut self,
        g: &mut Gomoku,
        mut moves: Vec<Cand>,
        limits: &Limits,
        max_depth: i32,
        halt: &AtomicBool,
        nodes: &AtomicU64,
    ) {
        let own = Limits {
            time: limits.time,
            nodes: None,
            depth: None,
        };
        let mut budget = Budget::new(&own, halt);
        self.aborted = false;
        self.start_eval(g);
        let mut counted = 0;
        for depth in (1 + (self.id % 2) as i32)..=max_depth {
            self.root(g, &mut budget, depth, &mut moves);
            nodes.fetch_add(budget.nodes - counted, Ordering::Relaxed);
            counted = budget.nodes;
            if self.aborted || budget.exhausted() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::pattern::EMPTY;
    use crate::util::Rng;

    /// Index of four patterns in [`FACTS`].
    #[inline(always)]
    fn facts_index(p: &[Pattern; 4]) -> usize {
        ((p[0] as usize * PATTERNS + p[1] as usize) * PATTERNS + p[2] as usize) * PATTERNS
            + p[3] as usize
    }

    /// The precomputed point facts agree with the functions they replace, for every
    /// combination of four patterns.
    #[test]
    fn facts_table_matches_the_pattern_functions() {
        let all: Vec<Pattern> = (0..PATTERNS as u8).map(Pattern::from_u8).collect();
        for &a in &all {
            for &b in &all {
                for &c in &all {
                    for &d in &all {
                        let p = [a, b, c, d];
                        let f = FACTS[facts_index(&p)];
                        assert_eq!(f.score(), greedy::score_of_patterns(&p), "{p:?}");
                        assert_eq!(f.class(), cell_class(&p), "{p:?}");
                        assert_eq!((f.fours(), f.open_four()), four_info(&p), "{p:?}");
                        assert_eq!(f.five(), p.contains(&Pattern::F5), "{p:?}");
                        for (i, want) in [Pattern::F1, Pattern::B2, Pattern::F2, Pattern::B3]
                            .into_iter()
                            .enumerate()
                        {
                            let n = p.iter().filter(|&&x| x == want).count() as i32;
                            assert_eq!(f.line_count(i), n, "{p:?}");
                        }
                    }
                }
            }
        }
    }

    /// The scan's one-multiplication index equals the plain one for every combination of
    /// four patterns of either colour, whatever the other colour's patterns are.
    #[test]
    fn word_index_matches_the_pattern_index() {
        let mut rng = Rng::new(7);
        for i in 0..PATTERNS.pow(4) {
            let p = [
                i / PATTERNS.pow(3),
                i / PATTERNS.pow(2) % PATTERNS,
                i / PATTERNS % PATTERNS,
                i % PATTERNS,
            ];
            let pats = p.map(|x| Pattern::from_u8(x as u8));
            assert_eq!(facts_index(&pats), i);
            for color in [Color::Black, Color::White] {
                let mut word = 0u64;
                for (d, &x) in p.iter().enumerate() {
                    let other = rng.below(PATTERNS) as u64;
                    let lane = match color {
                        Color::Black => x as u64 | other << 8,
                        Color::White => other | (x as u64) << 8,
                    };
                    word |= lane << (16 * d);
                }
                assert_eq!(facts_index_of_word(word, color), i, "{p:?} {color:?}");
            }
        }
    }

    /// Renju, Black to move with two five points: the first in the scan also makes six in
    /// its column, the other is a plain five. The player plays the plain one; with the
    /// plain one blocked it plays the first (a five is a win under these rules).
    #[test]
    fn renju_black_prefers_a_five_without_an_overline() {
        let at = |x: usize, y: usize| (y * 15 + x) as Move;
        // Black: a four in row 3 (blocked at both (2, 3) and (8, 3) but (7, 3)), which
        // also makes six in column 7; a four in row 10, five at (6, 10).
        #[rustfmt::skip]
        let black = [
            (3, 3), (4, 3), (5, 3), (6, 3),
            (7, 0), (7, 1), (7, 2), (7, 4), (7, 5),
            (2, 10), (3, 10), (4, 10), (5, 10),
        ];
        // White: the blocks, then stones far from everything (the last one can block row 10).
        #[rustfmt::skip]
        let white = [
            (8, 3), (2, 3), (1, 10),
            (12, 0), (14, 1), (12, 2), (14, 4), (12, 6), (14, 7), (12, 9), (14, 11), (12, 13),
            (10, 13),
        ];
        let position = |block: bool| {
            let Ok(mut g) = Gomoku::new(15, 15, Rule::Renju) else {
                panic!("board");
            };
            let mut white = white.to_vec();
            if block {
                white[12] = (6, 10);
            }
            for (b, w) in black.iter().zip(white.iter()) {
                g.play_unchecked(at(b.0, b.1));
                g.play_unchecked(at(w.0, w.1));
            }
            assert_eq!(g.to_move(), Color::Black);
            assert!(g.outcome().is_none());
            g
        };
        let stop = AtomicBool::new(false);
        for (block, want) in [(false, at(6, 10)), (true, at(7, 3))] {
            let g = position(block);
            let mut ab = AlphaBeta::default();
            let r = ab.search(&g, &Limits::nodes(10_000), &stop, &mut |_| {});
            assert_eq!(r.best, Some(want), "blocked {block}");
            assert_eq!(r.proven, Some(Some(Color::Black)));
            let mut after = g.clone();
            after.play_unchecked(want);
            assert_eq!(after.outcome(), Some(Outcome::Win(Color::Black)));
        }
    }

    /// A quiet 15x15 middle game: a balanced opening that the player continues for up to
    /// eight moves at 5 000 nodes each (deterministic), stopping before a position whose
    /// root threat search already settles it at 150 000 nodes (the multi-threaded tests need
    /// a search that reaches the deepening, where the helpers run).
    fn middle_game() -> Gomoku {
        let Ok(mut g) = Gomoku::new(15, 15, Rule::Freestyle) else {
            panic!("board");
        };
        for (x, y) in [(6, 7), (6, 5), (7, 5), (7, 7), (7, 10)] {
            g.play_unchecked((y * 15 + x) as Move);
        }
        let mut ab = AlphaBeta::new();
        ab.set_memory(8 << 20);
        let stop = AtomicBool::new(false);
        for _ in 0..8 {
            let Some(m) = ab
                .search(&g, &Limits::nodes(5_000), &stop, &mut |_| {})
                .best
            else {
                break;
            };
            let mut next = g.clone();
            next.play_unchecked(m);
            if next.outcome().is_some() {
                break;
            }
            let mut probe = AlphaBeta::new();
            probe.set_memory(8 << 20);
            let r = probe.search(&next, &Limits::nodes(150_000), &stop, &mut |_| {});
            if r.proven.is_some() || r.nodes < 1_000 {
                break;
            }
            g = next;
        }
        assert!(g.outcome().is_none(), "the test position is decided: {g:?}");
        g
    }

    /// A residual network adds its value to the pattern evaluation: with its output layer
    /// zeroed the search is the pattern evaluation's to the node; with it, and as a plain
    /// network, the same weights give other searches.
    #[test]
    fn a_residual_network_corrects_the_pattern_evaluation() {
        let g = middle_game();
        let net = EvalNet::random(Rule::Freestyle, 16, 8, 5);
        let mut bytes = net.clone().with_residual(true).to_bytes();
        assert_eq!(&bytes[..8], b"PCNEVAL2");
        // The file ends with w3 (8 floats) and b3.
        let n = bytes.len();
        bytes[n - 9 * 4..].fill(0);
        let Ok(zero) = EvalNet::from_bytes(&bytes) else {
            panic!("the zeroed residual file reads back");
        };
        assert!(zero.residual());
        let stop = AtomicBool::new(false);
        let run = |nets: Vec<Arc<EvalNet>>| {
            let mut ab = AlphaBeta::new();
            ab.set_memory(8 << 20);
            ab.set_threads(1);
            ab.set_eval_nets(nets);
            let r = ab.search(&g, &Limits::nodes(20_000), &stop, &mut |_| {});
            (r.best, r.score, r.nodes)
        };
        let classic = run(Vec::new());
        assert_eq!(run(vec![Arc::new(zero)]), classic);
        let residual = run(vec![Arc::new(net.clone().with_residual(true))]);
        let plain = run(vec![Arc::new(net)]);
        assert_ne!(residual, classic);
        assert_ne!(residual, plain);
    }

    /// With two threads the helper searches too, on the one table of the player, and its
    /// nodes are counted; back at one thread the search is the single-threaded one again.
    #[test]
    fn two_threads_share_one_table_and_count_the_helper() {
        let g = middle_game();
        let stop = AtomicBool::new(false);
        let limits = Limits::nodes(150_000);
        let mut ab = AlphaBeta::new();
        ab.set_memory(8 << 20);
        ab.set_threads(2);
        let r = ab.search(&g, &limits, &stop, &mut |_| {});
        let Some(best) = r.best else {
            panic!("no move");
        };
        assert!(g.check_move(best).is_ok(), "illegal move {best}");
        assert_eq!(ab.helpers.len(), 1);
        assert!(
            Arc::ptr_eq(&ab.tt, &ab.helpers[0].tt),
            "the helper has its own table"
        );
        assert!(ab.helper_nodes > 0, "the helper did not search");
        assert!(r.nodes > ab.helper_nodes, "{} nodes in all", r.nodes);
        // One thread again: the same result as a fresh single-threaded player.
        ab.set_threads(1);
        ab.clear();
        let one = ab.search(&g, &limits, &stop, &mut |_| {});
        assert!(ab.helpers.is_empty() && ab.helper_nodes == 0);
        let mut fresh = AlphaBeta::new();
        fresh.set_memory(8 << 20);
        let want = fresh.search(&g, &limits, &stop, &mut |_| {});
        assert_eq!(
            (one.best, one.nodes, one.score),
            (want.best, want.nodes, want.score)
        );
    }

    /// A two-thread search ends on its time limit and on the stop flag (the bounds are
    /// generous: the machine may be busy; the point is that the helpers stop too).
    #[test]
    fn two_threads_stop_on_time_and_on_the_flag() {
        let g = middle_game();
        let mut ab = AlphaBeta::new();
        ab.set_memory(8 << 20);
        ab.set_threads(2);
        let stop = AtomicBool::new(false);
        let t = std::time::Instant::now();
        let r = ab.search(
            &g,
            &Limits::time(Duration::from_millis(300)),
            &stop,
            &mut |_| {},
        );
        assert!(r.best.is_some());
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "took {:?}",
            t.elapsed()
        );
        let t = std::time::Instant::now();
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            ab.search(&g, &Limits::default(), &stop, &mut |_| {})
        });
        assert!(r.best.is_some());
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "took {:?}",
            t.elapsed()
        );
    }

    /// A node whose moves within the width all lose searches the rest before it concedes,
    /// so a mate score of the search is a proof. In this 15x15 position
    /// (examples/player_tree_positions.txt, p17) the width alone would leave out the defence
    /// that refutes a shorter "win" at C11; with it searched, depth 4 gives the proven win in
    /// 11 at D10.
    #[test]
    fn mate_scores_do_not_rest_on_pruned_defences() {
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        for v in "F10 D12 D7 G10 G11 E9 E7 E12 F7 G7 E6 E10 E8 F12 G12".split(' ') {
            let m = g.parse_gtp(v).unwrap();
            g.play(m).unwrap();
        }
        let me = g.to_move();
        let limits = Limits {
            depth: Some(4),
            ..Limits::default()
        };
        let stop = AtomicBool::new(false);
        let mut ab = AlphaBeta::new();
        ab.set_memory(8 << 20);
        let r = ab.search(&g, &limits, &stop, &mut |_| {});
        assert!(r.score >= WIN_THRESHOLD, "score {}", r.score);
        assert_eq!(r.proven, Some(Some(me)), "score {} unproven", r.score);
        assert_eq!(r.best, g.parse_gtp("D10").ok());
        assert_eq!(r.score, WIN - 11);
    }

    /// An entry half overwritten by another thread (its two words from different stores)
    /// reads as a miss, never as a wrong position's entry.
    #[test]
    fn a_torn_table_entry_reads_as_a_miss() {
        let mut ab = AlphaBeta::new();
        ab.set_memory(1 << 20);
        ab.ensure_tt();
        let key = 0x1234_5678_9abc_def0_u64;
        ab.tt_store(key, 5, 77, EXACT, 42);
        let Some(e) = ab.tt_probe(key) else {
            panic!("stored entry not found");
        };
        assert_eq!((e.score, e.mv, e.depth, e.flag), (77, 42, 5, EXACT));
        // Another store's data word lands without its key word.
        let i = (key as usize) & (ab.tt.len() - 1);
        let other = TtEntry {
            key: key ^ 0x10_0000_0000,
            score: -3,
            mv: 9,
            depth: 2,
            flag: LOWER,
        }
        .pack();
        ab.tt.slots[i][1].store(other[1], std::sync::atomic::Ordering::Relaxed);
        assert!(ab.tt_probe(key).is_none());
        assert!(ab.tt_probe(other[0]).is_none());
    }

    /// Sorted copy of a candidate list (the search sorts them; the scan order is not part of
    /// the contract), as comparable tuples.
    fn sorted(c: &[Cand]) -> Vec<(usize, i32, bool, bool, bool)> {
        let mut v: Vec<_> = c
            .iter()
            .map(|c| (c.cell, c.score, c.my_four, c.opp_four, c.tactical))
            .collect();
        v.sort_unstable();
        v
    }

    /// Along random games with take-backs, the scan visits exactly the empty points near a
    /// stone that a look at every point of the board finds, in the same order; the leaf scan,
    /// which collects only the blocks of a five, gives the same classification and
    /// evaluation; and the tuned evaluation summed point by point equals that of the
    /// feature vector.
    #[test]
    fn node_scan_matches_the_whole_board() {
        let mut rng = Rng::new(29);
        let setups = [
            (15, Rule::Freestyle),
            (20, Rule::Freestyle),
            (15, Rule::Exact),
            (15, Rule::Renju),
            (15, Rule::Caro),
            (15, Rule::FourT),
            (9, Rule::Freestyle),
        ];
        let mut checked = 0;
        for &(size, rule) in &setups {
            for _game in 0..6 {
                let Ok(mut g) = Gomoku::new(size, size, rule) else {
                    panic!("board {size}");
                };
                // Half the games keep the near points with the moves, as the search does.
                if rng.below(2) == 0 {
                    g.track_near();
                }
                // Start somewhere off-centre so that the stones also meet the edges.
                let first = rng.below(size * size) as Move;
                g.play_unchecked(first);
                let mut legal = Vec::new();
                for _step in 0..60 {
                    if g.outcome().is_some() || (rng.below(4) == 0 && g.stones() > 1) {
                        g.undo();
                    } else {
                        g.legal_moves(&mut legal);
                        if legal.is_empty() {
                            break;
                        }
                        let m = legal[rng.below(legal.len())];
                        g.play_unchecked(m);
                    }
                    let scratch: Vec<usize> = g
                        .cell_range()
                        .filter(|&c| g.cell_value(c) == EMPTY && near_stone(&g, c))
                        .collect();
                    let kept: Vec<usize> = g.near_empty().iter().collect();
                    assert_eq!(kept, scratch, "{g:?}");
                    for cell in g.cell_range() {
                        if g.cell_value(cell) == EMPTY {
                            for color in [Color::Black, Color::White] {
                                assert_eq!(
                                    facts_index_of_word(g.pattern_word(cell), color),
                                    facts_index(&g.patterns(cell, color))
                                );
                            }
                        }
                    }
                    for tuned in [false, true] {
                        let (mut full, mut part) = (Vec::new(), Vec::new());
                        let (t, x, y, four) = classify_node(&g, &mut full, tuned, false);
                        if matches!(t, Tactic::Quiet | Tactic::Defend) {
                            assert_eq!(four, full.iter().any(|c| c.my_four), "{g:?}");
                        }
                        // A leaf gets the same answers, and the candidates only to block a five.
                        let leaf = classify_node(&g, &mut part, tuned, true);
                        assert_eq!(leaf, (t.clone(), x, y, four), "{g:?}");
                        if matches!(t, Tactic::MustBlock(_)) {
                            assert_eq!(sorted(&full), sorted(&part), "{g:?}");
                        }
                        checked += 1;
                    }
                    // The tuned value summed point by point equals the feature vector's
                    // evaluation, for every tactic (also where the scan stops early).
                    let mut f = [0; EVAL_FEATURES];
                    let mut out = Vec::new();
                    let (t, ..) = classify_impl(&g, &mut out, Some(&mut f), None, false);
                    for leaf in [false, true] {
                        let (t2, v, ..) = classify_node(&g, &mut out, true, leaf);
                        assert_eq!((t2, v), (t.clone(), tuned_eval(&f)), "{g:?}");
                    }
                }
            }
        }
        assert!(checked > 1000, "only {checked} positions compared");
    }
}
