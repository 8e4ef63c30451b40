//! A learned Gomoku move policy over line patterns (no network): the logit of an empty point
//! is the sum, over its four directions, of one weight per *line pattern*: the eight cells
//! within distance four along the line, seen from the side to move (own stone, opponent's
//! stone, empty, off the board), a line and its mirror image sharing one weight; plus one
//! weight for the point's *combination*: the two strongest line patterns the side to move
//! makes there and the strongest the opponent would make (double threats, attack while
//! defending). That is 65 536 + 1 331 weights, five table lookups per point, cheap enough
//! for every solver node.
//!
//! The static threat scores rank threats well but leave the quiet moves nearly flat; this
//! table is trained (`pcn train-patterns`, [`train`]) to imitate the alpha-beta player's
//! choices in its own self-play games from random openings, so it ranks quiet moves the way a
//! search does. The weights shipped in `weights/gomoku_patterns.bin` were made by the command
//! recorded in `weights/README.md`; nothing of the shared problems or networks goes into them.

use std::sync::atomic::AtomicBool;

use once_cell::sync::Lazy;

use super::alphabeta::AlphaBeta;
use super::greedy::{attack_defence, candidates, cell_score};
use super::{Limits, Searcher};
use crate::game::gomoku::{Gomoku, Pattern, Rule};
use crate::game::{Color, Game};
use crate::util::Rng;

/// Number of line patterns (8 cells, 2 bits each).
pub const KEYS: usize = 1 << 16;

/// Number of combination weights (11 patterns cubed).
pub const COMBOS: usize = 11 * 11 * 11;

/// All weights: line patterns, then combinations.
pub const WEIGHTS: usize = KEYS + COMBOS;

/// File magic of a weight file: the magic, then [`WEIGHTS`] little-endian `f32`.
const MAGIC: &[u8; 8] = b"PCNPAT2\n";

/// Errors reading a weight file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatternError {
    /// Not a pattern weight file (magic or size wrong).
    #[error("not a pcn pattern weight file ({0})")]
    Format(String),
    /// A weight is NaN or infinite.
    #[error("pattern weight {0} is not finite")]
    NotFinite(usize),
    /// The file could not be read.
    #[error("{0}")]
    Io(String),
}

/// Swaps black and white in every 2-bit slot of a 16-bit key (walls and empties stay).
#[inline]
fn swap_colours(k: u32) -> u32 {
    // A slot is 01 (black) or 10 (white) exactly when its two bits differ: flip both then.
    let lo = k & 0x5555;
    let hi = (k >> 1) & 0x5555;
    let differ = lo ^ hi;
    k ^ (differ | (differ << 1))
}

/// Reverses the order of the eight 2-bit slots (the line seen from the other end).
#[inline]
fn mirror(k: u32) -> u32 {
    let mut r = 0;
    for i in 0..8 {
        r |= ((k >> (2 * i)) & 3) << (2 * (7 - i));
    }
    r
}

/// The canonical pattern index of line key `key` (a raw 20-bit key, see
/// [`Gomoku::line_key`]) for `me` to move: the inner eight cells, own stones as black, and
/// the smaller of the line and its mirror.
#[inline]
pub fn feature_of_key(key: u32, me: Color) -> usize {
    let mut k = (key >> 2) & 0xFFFF;
    if me == Color::White {
        k = swap_colours(k);
    }
    CANON[k as usize] as usize
}

/// Canonical index per oriented 16-bit key (mirror pairs share the smaller).
static CANON: Lazy<Vec<u16>> =
    Lazy::new(|| (0..KEYS as u32).map(|k| k.min(mirror(k)) as u16).collect());

/// The combination index of a point from both colours' four line patterns: the strongest
/// and second strongest of the side to move's, and the opponent's strongest.
#[inline]
pub fn combo_of(mine: [Pattern; 4], theirs: [Pattern; 4]) -> usize {
    let (mut a, mut b) = (0usize, 0usize);
    for p in mine {
        let v = p as usize;
        if v > a {
            b = a;
            a = v;
        } else if v > b {
            b = v;
        }
    }
    let c = theirs.iter().map(|&p| p as usize).max().unwrap_or(0);
    (a * 11 + b) * 11 + c
}

/// The five features of the empty `cell` for the side to move: four line patterns (indices
/// below [`KEYS`]) and the combination (index [`KEYS`] + [`combo_of`]).
#[inline]
pub fn features(g: &Gomoku, cell: usize) -> [u32; 5] {
    let me = g.to_move();
    let mut f = [0u32; 5];
    for (d, x) in f.iter_mut().take(4).enumerate() {
        *x = feature_of_key(g.line_key(cell, d), me) as u32;
    }
    f[4] = (KEYS + combo_of(g.patterns(cell, me), g.patterns(cell, me.opp()))) as u32;
    f
}

/// [`features`] from the raw line keys of a point (as stored in a [`Sample`]), the patterns
/// read through `g`'s rule tables.
pub fn features_of_keys(g: &Gomoku, keys: &[u32; 4], me: Color) -> [u32; 5] {
    let mut f = [0u32; 5];
    let mut mine = [Pattern::Dead; 4];
    let mut theirs = [Pattern::Dead; 4];
    for (d, &k) in keys.iter().enumerate() {
        f[d] = feature_of_key(k, me) as u32;
        mine[d] = g.pattern_of_key(k, me);
        theirs[d] = g.pattern_of_key(k, me.opp());
    }
    f[4] = (KEYS + combo_of(mine, theirs)) as u32;
    f
}

/// The pattern weights.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternPolicy {
    w: Vec<f32>,
}

impl Default for PatternPolicy {
    fn default() -> Self {
        PatternPolicy {
            w: vec![0.0; WEIGHTS],
        }
    }
}

impl PatternPolicy {
    /// Reads a weight file.
    pub fn load(path: &std::path::Path) -> Result<PatternPolicy, PatternError> {
        let b = std::fs::read(path).map_err(|e| PatternError::Io(e.to_string()))?;
        Self::from_bytes(&b)
    }

    /// Reads a weight file's bytes.
    pub fn from_bytes(b: &[u8]) -> Result<PatternPolicy, PatternError> {
        let want = MAGIC.len() + 4 * WEIGHTS;
        if b.len() != want || &b[..MAGIC.len()] != MAGIC {
            return Err(PatternError::Format(format!(
                "{} bytes, expected {want} starting with {:?}",
                b.len(),
                String::from_utf8_lossy(MAGIC).trim_end()
            )));
        }
        let mut w = Vec::with_capacity(WEIGHTS);
        for (i, c) in b[MAGIC.len()..].chunks_exact(4).enumerate() {
            let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if !x.is_finite() {
                return Err(PatternError::NotFinite(i));
            }
            w.push(x);
        }
        Ok(PatternPolicy { w })
    }

    /// The weight file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(MAGIC.len() + 4 * WEIGHTS);
        b.extend_from_slice(MAGIC);
        for x in &self.w {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b
    }

    /// The logit of a point from its features.
    #[inline]
    pub fn logit_of(&self, f: &[u32; 5]) -> f32 {
        f.iter().map(|&i| self.w[i as usize]).sum()
    }

    /// The logit of the empty `cell` for the side to move.
    #[inline]
    pub fn logit(&self, g: &Gomoku, cell: usize) -> f32 {
        self.logit_of(&features(g, cell))
    }
}

/// The shipped weights (`weights/gomoku_patterns.bin`, compiled in so that the engine needs
/// no file at run time). A unit test checks that they load.
pub static BUILTIN: Lazy<Option<PatternPolicy>> = Lazy::new(|| {
    let r = PatternPolicy::from_bytes(include_bytes!("../../../weights/gomoku_patterns.bin"));
    if let Err(e) = &r {
        log::warn!("built-in pattern weights unusable: {e}");
    }
    r.ok()
});

/// One training position: the raw line keys of every candidate point, the side to move and
/// which candidate was played (raw keys, so that feature sets can change without replaying).
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Whether White is to move.
    pub white: bool,
    /// The four raw line keys per candidate.
    pub keys: Vec<[u32; 4]>,
    /// Static threat scores per candidate (the baseline ranking, for the report).
    pub scores: Vec<f32>,
    /// Index of the chosen candidate.
    pub label: usize,
}

/// Magic of a sample file ([`write_samples`]).
const SAMPLE_MAGIC: &[u8; 8] = b"PCNSMP1\n";

/// Serialises samples: the magic, then per sample `u8 white, u16 n, u16 label`, `n` times
/// four `u32` keys and one `f32` score, little-endian.
pub fn write_samples(samples: &[Sample]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(SAMPLE_MAGIC);
    for s in samples {
        b.push(s.white as u8);
        b.extend_from_slice(&(s.keys.len() as u16).to_le_bytes());
        b.extend_from_slice(&(s.label as u16).to_le_bytes());
        for (k, sc) in s.keys.iter().zip(&s.scores) {
            for x in k {
                b.extend_from_slice(&x.to_le_bytes());
            }
            b.extend_from_slice(&sc.to_le_bytes());
        }
    }
    b
}

/// Reads what [`write_samples`] wrote.
pub fn read_samples(b: &[u8]) -> Result<Vec<Sample>, PatternError> {
    let bad = |why: &str| PatternError::Format(format!("sample file: {why}"));
    if b.len() < SAMPLE_MAGIC.len() || &b[..SAMPLE_MAGIC.len()] != SAMPLE_MAGIC {
        return Err(bad("wrong magic"));
    }
    let mut at = SAMPLE_MAGIC.len();
    let mut take = |n: usize| -> Result<Option<&[u8]>, PatternError> {
        if at == b.len() {
            return Ok(None);
        }
        let r = b.get(at..at + n).ok_or_else(|| bad("truncated"))?;
        at += n;
        Ok(Some(r))
    };
    let mut out = Vec::new();
    while let Some(head) = take(5)? {
        let white = head[0] != 0;
        let n = u16::from_le_bytes([head[1], head[2]]) as usize;
        let label = u16::from_le_bytes([head[3], head[4]]) as usize;
        if label >= n {
            return Err(bad("label out of range"));
        }
        let mut keys = Vec::with_capacity(n);
        let mut scores = Vec::with_capacity(n);
        for _ in 0..n {
            let r = take(20)?.ok_or_else(|| bad("truncated"))?;
            let u = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
            keys.push([u(0), u(4), u(8), u(12)]);
            scores.push(f32::from_le_bytes([r[16], r[17], r[18], r[19]]));
        }
        out.push(Sample {
            white,
            keys,
            scores,
            label,
        });
    }
    Ok(out)
}

/// Self-play settings of [`generate`].
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Games to play (the caller splits them over threads; see [`generate`]).
    pub games: usize,
    /// Alpha-beta nodes per move.
    pub nodes: u64,
    /// Board size and rule.
    pub size: usize,
    /// The rule.
    pub rule: Rule,
    /// Random opening plies: between `opening.0` and `opening.1`, inside the central 7x7.
    pub opening: (usize, usize),
    /// Chance that a move is replaced by a random one of the five best by static score (the
    /// alpha-beta choice is still the position's label), for variety.
    pub explore: f64,
    /// Longest game in plies.
    pub max_plies: usize,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            games: 1000,
            nodes: 3000,
            size: 15,
            rule: Rule::FourT,
            opening: (2, 8),
            explore: 0.15,
            max_plies: 80,
        }
    }
}

/// The static threat score of a candidate for the side to move (the threat priors' ranking).
pub fn static_score(g: &Gomoku, cell: usize) -> f32 {
    let me = g.to_move();
    attack_defence(cell_score(g, cell, me), cell_score(g, cell, me.opp()))
}

/// Plays self-play games `first .. first + count` of the alpha-beta player (game `i` seeded
/// from `seed` and `i` alone, so any split over threads gives the same games) and returns one
/// sample per position where it chose among several candidates (4T forced replies skipped).
pub fn generate(opts: &GenOptions, seed: u64, first: usize, count: usize) -> Vec<Sample> {
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    let mut cells = Vec::new();
    for i in first..first + count {
        let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64 + 1));
        let Ok(mut g) = Gomoku::new(opts.size, opts.size, opts.rule) else {
            return out;
        };
        let mut ab = AlphaBeta::new();
        ab.set_memory(16 << 20);
        let span = opts.opening.1.saturating_sub(opts.opening.0) + 1;
        let opening = opts.opening.0 + rng.below(span);
        let c = opts.size / 2;
        let mut tries = 0;
        while g.stones() < opening && tries < 1000 {
            tries += 1;
            let x = c - 3 + rng.below(7);
            let y = c - 3 + rng.below(7);
            let m = (y * opts.size + x) as crate::game::Move;
            if g.check_move(m).is_ok() {
                g.play_unchecked(m);
            }
        }
        while g.outcome().is_none() && g.stones() < opts.max_plies {
            let r = ab.search(&g, &Limits::nodes(opts.nodes), &stop, &mut |_| {});
            let Some(best) = r.best else { break };
            if g.check_move(best).is_err() {
                break;
            }
            candidates(&g, &mut cells);
            let choice = g.forced_point().is_none() && cells.len() > 1;
            let scores: Vec<f32> = if choice {
                cells.iter().map(|&x| static_score(&g, x)).collect()
            } else {
                Vec::new()
            };
            if choice {
                let bc = g.cell_of(best);
                if let Some(label) = cells.iter().position(|&x| x == bc) {
                    out.push(Sample {
                        white: g.to_move() == Color::White,
                        keys: cells
                            .iter()
                            .map(|&x| [0, 1, 2, 3].map(|d| g.line_key(x, d)))
                            .collect(),
                        scores: scores.clone(),
                        label,
                    });
                }
            }
            let mut play = best;
            if choice && rng.unit() < opts.explore {
                let mut by: Vec<(f32, usize)> =
                    scores.iter().copied().zip(cells.iter().copied()).collect();
                by.sort_by(|a, b| b.0.total_cmp(&a.0));
                let k = by.len().min(5);
                play = g.move_of(by[rng.below(k)].1);
            }
            g.play_unchecked(play);
        }
    }
    out
}

/// What [`train`] measured on the held-out samples.
#[derive(Clone, Debug, Default)]
pub struct TrainReport {
    /// Training samples.
    pub train: usize,
    /// Held-out samples.
    pub held_out: usize,
    /// Held-out top-1 agreement with the label: the learned table.
    pub top1: f64,
    /// Held-out top-1 agreement of the static threat score.
    pub top1_static: f64,
    /// Held-out top-1 agreement of the starting weights (zeros, or the `init` table).
    pub top1_start: f64,
    /// Held-out mean cross-entropy of the learned table (nats).
    pub loss: f64,
    /// Held-out mean cross-entropy of a uniform choice among the candidates.
    pub loss_uniform: f64,
}

/// A sample's features for training.
struct Feat<'a> {
    feats: Vec<[u32; 5]>,
    scores: &'a [f32],
    label: usize,
}

/// Turns logits into probabilities in place (max-shifted); false, leaving `z` unnormalised,
/// when they cannot be (empty, or not finite).
pub fn softmax_into(z: &mut [f32]) -> bool {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut s = 0.0;
    for x in z.iter_mut() {
        *x = (*x - m).exp();
        s += *x;
    }
    if s.is_nan() || s <= 0.0 {
        return false;
    }
    for x in z.iter_mut() {
        *x /= s;
    }
    true
}

/// Settings of [`train`].
#[derive(Clone, Debug)]
pub struct FitOptions<'a> {
    /// Passes over the training samples.
    pub epochs: usize,
    /// AdaGrad step.
    pub lr: f32,
    /// L2 penalty per weight and step.
    pub l2: f32,
    /// Seed of the shuffles.
    pub seed: u64,
    /// Weights to start from (fine-tuning); zeros when `None`.
    pub init: Option<&'a PatternPolicy>,
}

/// Fits the table by softmax regression (AdaGrad) on all but every tenth sample, which are
/// held out for the report.
pub fn train(samples: &[Sample], rule: Rule, o: &FitOptions) -> (PatternPolicy, TrainReport) {
    // The rule's pattern tables, for the combination features.
    let board = Gomoku::new(15, 15, rule).ok();
    let feats: Vec<Feat> = samples
        .iter()
        .map(|s| {
            let me = if s.white { Color::White } else { Color::Black };
            let feats = match &board {
                Some(g) => s.keys.iter().map(|k| features_of_keys(g, k, me)).collect(),
                None => Vec::new(),
            };
            Feat {
                feats,
                scores: &s.scores,
                label: s.label,
            }
        })
        .filter(|f| f.feats.len() > f.label)
        .collect();
    fit(&feats, o)
}

/// Softmax regression on prepared features (see [`train`]).
fn fit(feats: &[Feat], o: &FitOptions) -> (PatternPolicy, TrainReport) {
    let (epochs, lr, l2) = (o.epochs, o.lr, o.l2);
    let mut p = o.init.cloned().unwrap_or_default();
    let mut g2 = vec![1e-6f32; WEIGHTS];
    let (mut tr, mut te) = (Vec::new(), Vec::new());
    for (i, s) in feats.iter().enumerate() {
        if i % 10 == 9 {
            te.push(s)
        } else {
            tr.push(s)
        }
    }
    let mut rng = Rng::new(o.seed ^ 0x7a11);
    let mut z = Vec::new();
    let mut top1_start = 0.0;
    for s in &te {
        z.clear();
        z.extend(s.feats.iter().map(|f| p.logit_of(f)));
        top1_start += (argmax(&z) == s.label) as u8 as f64;
    }
    let mut grad: Vec<(u32, f32)> = Vec::new();
    for _ in 0..epochs {
        // Fisher-Yates shuffle per epoch.
        for i in (1..tr.len()).rev() {
            let j = rng.below(i + 1);
            tr.swap(i, j);
        }
        for s in &tr {
            z.clear();
            z.extend(s.feats.iter().map(|f| p.logit_of(f)));
            softmax_into(&mut z);
            grad.clear();
            for (k, f) in s.feats.iter().enumerate() {
                let gk = z[k] - if k == s.label { 1.0 } else { 0.0 };
                for &i in f {
                    grad.push((i, gk));
                }
            }
            for &(i, gk) in &grad {
                let i = i as usize;
                let g = gk + l2 * p.w[i];
                g2[i] += g * g;
                p.w[i] -= lr * g / g2[i].sqrt();
            }
        }
    }
    let mut rep = TrainReport {
        train: tr.len(),
        held_out: te.len(),
        ..TrainReport::default()
    };
    for s in &te {
        z.clear();
        z.extend(s.feats.iter().map(|f| p.logit_of(f)));
        let best = argmax(&z);
        softmax_into(&mut z);
        rep.top1 += (best == s.label) as u8 as f64;
        rep.top1_static += (argmax(s.scores) == s.label) as u8 as f64;
        rep.loss -= (z[s.label].max(1e-12) as f64).ln();
        rep.loss_uniform += (s.feats.len() as f64).ln();
    }
    let n = te.len().max(1) as f64;
    rep.top1 /= n;
    rep.top1_static /= n;
    rep.top1_start = top1_start / n;
    rep.loss /= n;
    rep.loss_uniform /= n;
    (p, rep)
}

fn argmax(z: &[f32]) -> usize {
    let mut b = 0;
    for (i, &x) in z.iter().enumerate() {
        if x > z[b] {
            b = i;
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_swap_and_mirror_are_involutions() {
        for k in [0u32, 0x1234, 0xFFFF, 0x9a5c, 0x0003, 0xC000] {
            assert_eq!(swap_colours(swap_colours(k)), k);
            assert_eq!(mirror(mirror(k)), k);
        }
        // Black (01) <-> white (10); wall (11) and empty (00) stay.
        assert_eq!(swap_colours(0b11_10_01_00), 0b11_01_10_00);
        assert_eq!(mirror(0b01), 0b01 << 14);
    }

    #[test]
    fn features_are_colour_relative_and_mirror_symmetric() {
        // Black to move with a black stone left of the point sees the same feature as White
        // to move with a white stone on its right.
        let mut a = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        a.place(a.parse_gtp("G8").unwrap(), Color::Black).unwrap();
        a.set_to_move(Color::Black);
        let mut b = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        b.place(b.parse_gtp("J8").unwrap(), Color::White).unwrap();
        b.set_to_move(Color::White);
        let h8 = a.cell_of(a.parse_gtp("H8").unwrap());
        assert_eq!(features(&a, h8)[0], features(&b, h8)[0]);
        // With the colours not swapped the features differ (own stone against opponent's).
        b.set_to_move(Color::Black);
        assert_ne!(features(&a, h8)[0], features(&b, h8)[0]);
    }

    #[test]
    fn weight_file_round_trip_and_errors() {
        let mut p = PatternPolicy::default();
        p.w[7] = 1.5;
        let b = p.to_bytes();
        assert_eq!(PatternPolicy::from_bytes(&b), Ok(p));
        assert!(matches!(
            PatternPolicy::from_bytes(&b[..100]),
            Err(PatternError::Format(_))
        ));
        let mut bad = b.clone();
        bad[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            PatternPolicy::from_bytes(&bad),
            Err(PatternError::NotFinite(0))
        );
    }

    #[test]
    fn builtin_weights_load_and_rank_a_win_first() {
        let p = BUILTIN.as_ref().expect("weights/gomoku_patterns.bin loads");
        // 4T, Black to move with an open three (White has two stones in a row): the open
        // four (a win under 4T) must outrank every other point. (Fives never occur in the
        // 4T training games: a four forces its block, so the table need not know them.)
        let mut g = Gomoku::new(15, 15, Rule::FourT).unwrap();
        for (b, w) in [("H8", "H10"), ("J8", "J10"), ("K8", "C3")] {
            g.play(g.parse_gtp(b).unwrap()).unwrap();
            g.play(g.parse_gtp(w).unwrap()).unwrap();
        }
        let mut cells = Vec::new();
        candidates(&g, &mut cells);
        let best = cells
            .iter()
            .copied()
            .max_by(|&x, &y| p.logit(&g, x).total_cmp(&p.logit(&g, y)))
            .unwrap();
        let name = g.move_to_gtp(g.move_of(best));
        assert!(name == "G8" || name == "L8", "got {name}");
    }

    #[test]
    fn training_learns_a_planted_preference() {
        // Samples where the label is always the candidate with feature 5 in direction 0: the
        // trained table must rank it first on held-out samples, unlike a uniform table.
        let mut rng = Rng::new(3);
        let scores = [0.0f32; 16];
        let feats: Vec<Feat> = (0..400)
            .map(|_| {
                let n = 4 + rng.below(6);
                let label = rng.below(n);
                let feats = (0..n)
                    .map(|k| {
                        let a = if k == label {
                            5
                        } else {
                            6 + rng.below(50) as u32
                        };
                        [a, 100 + rng.below(50) as u32, 200, 300, KEYS as u32]
                    })
                    .collect();
                Feat {
                    feats,
                    scores: &scores[..n],
                    label,
                }
            })
            .collect();
        let opts = |epochs, init| FitOptions {
            epochs,
            lr: 0.5,
            l2: 0.0,
            seed: 1,
            init,
        };
        let (p, rep) = fit(&feats, &opts(3, None));
        assert!(rep.top1 > 0.95, "{rep:?}");
        assert!(
            rep.top1_start < 0.5,
            "zeros rank the first candidate: {rep:?}"
        );
        assert!(rep.loss < rep.loss_uniform * 0.5, "{rep:?}");
        assert!(p.w[5] > 0.0);
        // Fine-tuning starts from the given table: its held-out agreement is already there,
        // and no pass leaves the table as it was.
        let (q, rep) = fit(&feats, &opts(0, Some(&p)));
        assert_eq!(q, p);
        assert!(
            rep.top1_start > 0.95 && rep.top1 == rep.top1_start,
            "{rep:?}"
        );
    }

    #[test]
    fn sample_files_round_trip_and_reject_damage() {
        let opts = GenOptions {
            games: 2,
            nodes: 200,
            ..GenOptions::default()
        };
        let samples = generate(&opts, 7, 0, 2);
        assert!(!samples.is_empty());
        let b = write_samples(&samples);
        assert_eq!(read_samples(&b), Ok(samples.clone()));
        assert!(read_samples(&b[..b.len() - 3]).is_err());
        assert!(read_samples(b"PCNPAT2\n").is_err());
        // Features from the stored keys equal those read off the board.
        let g = Gomoku::new(15, 15, Rule::FourT).unwrap();
        let mut h = g.clone();
        h.play(h.parse_gtp("H8").unwrap()).unwrap();
        let c = h.cell_of(h.parse_gtp("J9").unwrap());
        let keys = [0, 1, 2, 3].map(|d| h.line_key(c, d));
        assert_eq!(features_of_keys(&g, &keys, Color::White), features(&h, c));
    }
}
