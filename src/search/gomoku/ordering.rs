//! The `pcn` player's learned move ordering: a score for each candidate point of a quiet
//! position from the line patterns both colours would make there, trained to predict the
//! move a strong player chooses.
//!
//! The static attack + defence score ranks threats well but leaves quiet moves nearly flat,
//! and the player searches only the best few quiet candidates of a node (and reduces the
//! later ones), so a good quiet move ranked low is never looked at. This table ranks them
//! the way the imitated player does. Its pattern features are what the player's candidate
//! scan already reads at every point, so scoring a point costs a few table lookups:
//!
//! - the side to move's four line patterns at the point, as a multiset (1 001 weights);
//! - the opponent's four line patterns there, as a multiset (1 001 weights);
//! - the combination of the side to move's two strongest patterns and the opponent's
//!   strongest (1 331 weights, as in [`super::patpolicy::combo_of`]);
//! - its distance to the last move and to the one before (5 + 5 weights): play answers
//!   play, which the patterns alone do not see.
//!
//! A point's logit is the sum of its five weights; the training ([`fit`]) is a softmax
//! regression over the candidates of each position. The shipped table
//! (`weights/gomoku_order.bin`, compiled in) and how it was made are described in
//! `weights/README.md`.

use once_cell::sync::Lazy;

use super::learned::{
    adagrad, cross_entropy, logit, read_weights, split_held_out, write_weights, AdaGrad, Choice,
    WeightFileError,
};
use crate::game::gomoku::Pattern;

/// Distinct line patterns (`Pattern as usize` is below this).
pub const PATTERNS: usize = 11;

/// Index space of four patterns in a fixed order (`((p0 * 11 + p1) * 11 + p2) * 11 + p3`),
/// the index the player's candidate scan computes.
pub const RAW: usize = PATTERNS * PATTERNS * PATTERNS * PATTERNS;

/// Multisets of four patterns (four directions in any order): C(11 + 3, 4).
pub const MULTISETS: usize = 1001;

/// Combinations (own strongest, own second strongest, opponent's strongest).
pub const COMBOS: usize = PATTERNS * PATTERNS * PATTERNS;

/// Distance classes of a point to a recent move: Chebyshev distance 1, 2, 3, 4, and 5 or
/// more (or no such move).
pub const DISTANCES: usize = 5;

/// Weights of a table: own multisets, opponent multisets, combinations, then the distance
/// to the last move and to the one before it.
pub const WEIGHTS: usize = 2 * MULTISETS + COMBOS + 2 * DISTANCES;

/// File magic of a weight file: the magic, then [`WEIGHTS`] little-endian `f32`.
const MAGIC: &[u8; 8] = b"PCNORD2\n";

/// Per raw index: its multiset index, its two strongest patterns (`a * 11 + b`) and its
/// strongest pattern.
struct RawInfo {
    multiset: Vec<u16>,
    top2: Vec<u8>,
    top: Vec<u8>,
}

static RAW_INFO: Lazy<RawInfo> = Lazy::new(|| {
    // Multisets numbered in the order of their sorted (descending) raw index.
    let mut id = vec![u16::MAX; RAW];
    let mut next = 0u16;
    let sorted = |raw: usize| -> [usize; 4] {
        let mut v = [
            raw / (PATTERNS * PATTERNS * PATTERNS),
            raw / (PATTERNS * PATTERNS) % PATTERNS,
            raw / PATTERNS % PATTERNS,
            raw % PATTERNS,
        ];
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    };
    let index_of = |v: [usize; 4]| ((v[0] * PATTERNS + v[1]) * PATTERNS + v[2]) * PATTERNS + v[3];
    for (raw, slot) in id.iter_mut().enumerate() {
        if index_of(sorted(raw)) == raw {
            *slot = next;
            next += 1;
        }
    }
    debug_assert_eq!(next as usize, MULTISETS);
    let mut info = RawInfo {
        multiset: vec![0; RAW],
        top2: vec![0; RAW],
        top: vec![0; RAW],
    };
    for raw in 0..RAW {
        let v = sorted(raw);
        info.multiset[raw] = id[index_of(v)];
        info.top2[raw] = (v[0] * PATTERNS + v[1]) as u8;
        info.top[raw] = v[0] as u8;
    }
    info
});

/// The raw index of four patterns.
#[inline]
pub fn raw_index(p: &[Pattern; 4]) -> usize {
    p.iter().fold(0, |i, &x| i * PATTERNS + x as usize)
}

/// The distance class of two points given as (x, y), `None` when there is no recent move.
#[inline]
pub fn distance_class(a: (usize, usize), b: Option<(usize, usize)>) -> usize {
    match b {
        None => DISTANCES - 1,
        Some(b) => {
            let d = a.0.abs_diff(b.0).max(a.1.abs_diff(b.1));
            d.clamp(1, DISTANCES) - 1
        }
    }
}

/// The five weight indices of a point from the raw indices of the side to move's patterns
/// (`mine`) and the opponent's (`theirs`), and its [`distance_class`] to the last move
/// (`last`, the opponent's) and to the one before (`prev`, the side to move's).
#[inline]
pub fn features(mine: usize, theirs: usize, last: usize, prev: usize) -> [u32; 5] {
    let r = &*RAW_INFO;
    let d = 2 * MULTISETS + COMBOS;
    [
        u32::from(r.multiset[mine]),
        (MULTISETS + usize::from(r.multiset[theirs])) as u32,
        (2 * MULTISETS + usize::from(r.top2[mine]) * PATTERNS + usize::from(r.top[theirs])) as u32,
        (d + last.min(DISTANCES - 1)) as u32,
        (d + DISTANCES + prev.min(DISTANCES - 1)) as u32,
    ]
}

/// Errors reading a weight file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OrderError {
    /// Not an ordering weight file (magic or size wrong).
    #[error("not a pcn ordering weight file ({0})")]
    Format(String),
    /// A weight is NaN or infinite.
    #[error("ordering weight {0} is not finite")]
    NotFinite(usize),
}

impl From<WeightFileError> for OrderError {
    fn from(e: WeightFileError) -> Self {
        match e {
            WeightFileError::Format(why) => OrderError::Format(why),
            WeightFileError::NotFinite(i) => OrderError::NotFinite(i),
        }
    }
}

/// The weights of an ordering table, in logits.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderWeights {
    w: Vec<f32>,
}

impl Default for OrderWeights {
    fn default() -> Self {
        OrderWeights {
            w: vec![0.0; WEIGHTS],
        }
    }
}

impl OrderWeights {
    /// Reads a weight file's bytes.
    pub fn from_bytes(b: &[u8]) -> Result<OrderWeights, OrderError> {
        let w = read_weights(b, MAGIC, WEIGHTS)?;
        Ok(OrderWeights { w })
    }

    /// The weight file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        write_weights(MAGIC, &self.w)
    }

    /// The logit of a point from its [`features`].
    #[inline]
    pub fn logit_of(&self, f: &[u32; 5]) -> f32 {
        logit(&self.w, f)
    }
}

/// An ordering table expanded for the player's scan: integer scores (thousandths of a logit)
/// per raw index, so that a point costs five lookups and no sorting.
pub struct OrderTable {
    mine: Vec<i32>,
    theirs: Vec<i32>,
    top2: Vec<u8>,
    top: Vec<u8>,
    combo: Vec<i32>,
    distance: [i32; 2 * DISTANCES],
}

impl OrderTable {
    /// Expands weights into a table.
    pub fn new(w: &OrderWeights) -> OrderTable {
        let r = &*RAW_INFO;
        let milli = |x: f32| (x * 1000.0).round() as i32;
        OrderTable {
            mine: r.multiset.iter().map(|&m| milli(w.w[m as usize])).collect(),
            theirs: r
                .multiset
                .iter()
                .map(|&m| milli(w.w[MULTISETS + m as usize]))
                .collect(),
            top2: r.top2.clone(),
            top: r.top.clone(),
            combo: w.w[2 * MULTISETS..2 * MULTISETS + COMBOS]
                .iter()
                .map(|&x| milli(x))
                .collect(),
            distance: std::array::from_fn(|i| milli(w.w[2 * MULTISETS + COMBOS + i])),
        }
    }

    /// The score of a point (thousandths of a logit) from the raw indices of the side to
    /// move's patterns there and the opponent's ([`raw_index`]; both below [`RAW`]) and its
    /// distance classes to the last two moves (see [`features`]).
    #[inline(always)]
    pub fn score(&self, mine: usize, theirs: usize, last: usize, prev: usize) -> i32 {
        self.mine[mine]
            + self.theirs[theirs]
            + self.combo[usize::from(self.top2[mine]) * PATTERNS + usize::from(self.top[theirs])]
            + self.distance[last.min(DISTANCES - 1)]
            + self.distance[DISTANCES + prev.min(DISTANCES - 1)]
    }
}

/// The shipped table (`weights/gomoku_order.bin`, compiled in so that the engine needs no
/// file at run time). A unit test checks that it loads.
pub static BUILTIN: Lazy<Option<OrderTable>> = Lazy::new(|| {
    match OrderWeights::from_bytes(include_bytes!("../../../weights/gomoku_order.bin")) {
        Ok(w) => Some(OrderTable::new(&w)),
        Err(e) => {
            log::warn!("built-in ordering weights unusable: {e}");
            None
        }
    }
});

/// One training position: the [`features`] of each candidate and which one was played.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderSample {
    /// Features per candidate.
    pub feats: Vec<[u32; 5]>,
    /// Index of the chosen candidate.
    pub label: usize,
}

impl Choice for OrderSample {
    fn candidates(&self) -> &[[u32; 5]] {
        &self.feats
    }
    fn label(&self) -> usize {
        self.label
    }
}

/// What [`fit`] measured on the held-out samples (every tenth).
#[derive(Clone, Debug, Default)]
pub struct FitReport {
    /// Training samples.
    pub train: usize,
    /// Held-out samples.
    pub held_out: usize,
    /// Held-out mean cross-entropy of the fitted table (nats).
    pub loss: f64,
    /// Held-out mean cross-entropy of a uniform choice.
    pub loss_uniform: f64,
    /// Held-out share of positions whose chosen move the table ranks within the first
    /// 1, 3, 5, 10, 14, 20, 28 (ties count against it).
    pub within: [f64; 7],
}

/// The ranks of [`FitReport::within`].
pub const WITHIN: [usize; 7] = [1, 3, 5, 10, 14, 20, 28];

/// Number of candidates scored above the chosen one (its rank from 0; ties count against).
pub fn rank_of(scores: &[f32], label: usize) -> usize {
    scores.iter().filter(|&&s| s >= scores[label]).count() - 1
}

/// Fits the weights by softmax regression (AdaGrad, step `lr`, L2 penalty `l2` per weight
/// and step) over `epochs` passes on all but every tenth sample, which are held out for the
/// report. Deterministic for a `seed`.
pub fn fit(
    samples: &[OrderSample],
    epochs: usize,
    lr: f32,
    l2: f32,
    seed: u64,
) -> (OrderWeights, FitReport) {
    let mut w = OrderWeights::default();
    let (mut train, test) = split_held_out(samples);
    let o = AdaGrad {
        epochs,
        lr,
        l2,
        seed: seed ^ 0x0bde,
    };
    adagrad(&mut w.w, &mut train, &o);
    let mut rep = FitReport {
        train: train.len(),
        held_out: test.len(),
        ..FitReport::default()
    };
    let mut z = Vec::new();
    for s in &test {
        z.clear();
        z.extend(s.feats.iter().map(|f| w.logit_of(f)));
        let r = rank_of(&z, s.label);
        for (k, &n) in WITHIN.iter().enumerate() {
            rep.within[k] += f64::from(u8::from(r < n));
        }
    }
    (rep.loss, rep.loss_uniform) = cross_entropy(&w.w, &test);
    let n = test.len().max(1) as f64;
    rep.within.iter_mut().for_each(|x| *x /= n);
    (w, rep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::Rng;

    #[test]
    fn multisets_are_counted_and_shared_by_permutations() {
        let r = &*RAW_INFO;
        let max = r.multiset.iter().copied().max().unwrap_or(0) as usize;
        assert_eq!(max + 1, MULTISETS);
        let a = raw_index(&[Pattern::F3, Pattern::B2, Pattern::Dead, Pattern::F1]);
        let b = raw_index(&[Pattern::F1, Pattern::Dead, Pattern::F3, Pattern::B2]);
        assert_eq!(features(a, b, 0, 0)[0], features(b, a, 0, 0)[0]);
        assert_eq!(features(a, b, 0, 0)[1], features(b, a, 0, 0)[1]);
        let c = raw_index(&[Pattern::F3, Pattern::F3, Pattern::Dead, Pattern::F1]);
        assert_ne!(features(a, a, 0, 0)[0], features(c, a, 0, 0)[0]);
        assert_eq!(distance_class((3, 4), Some((5, 3))), 1);
        assert_eq!(distance_class((3, 4), Some((3, 14))), DISTANCES - 1);
        assert_eq!(distance_class((3, 4), None), DISTANCES - 1);
    }

    #[test]
    fn the_builtin_table_loads_and_ranks_an_open_three_above_nothing() {
        let t = BUILTIN.as_ref().expect("weights/gomoku_order.bin loads");
        let none = raw_index(&[Pattern::Dead; 4]);
        let three = raw_index(&[Pattern::F3, Pattern::Dead, Pattern::Dead, Pattern::Dead]);
        assert!(t.score(three, none, 4, 4) > t.score(none, none, 4, 4));
    }

    /// FNV-1a of bytes: a fingerprint of a whole weight file for the golden test.
    fn fnv(b: &[u8]) -> u64 {
        b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
            (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn fitting_gives_the_recorded_weights_bit_for_bit() {
        // Golden values, recorded from this fit as it stood before its loop was shared with
        // the pattern policy's: any change to the order of the float operations, the
        // held-out split or the shuffles changes them. One sample's label is out of range:
        // it is dropped before the split.
        let mut rng = Rng::new(29);
        let d = (2 * MULTISETS + COMBOS) as u32;
        let mut samples: Vec<OrderSample> = (0..300)
            .map(|_| {
                let n = 2 + rng.below(12);
                let label = rng.below(n);
                let feats = (0..n)
                    .map(|k| {
                        let mine = if k == label {
                            rng.below(5)
                        } else {
                            rng.below(60)
                        };
                        [
                            mine as u32,
                            (MULTISETS + rng.below(40)) as u32,
                            (2 * MULTISETS + rng.below(50)) as u32,
                            d + rng.below(DISTANCES) as u32,
                            d + (DISTANCES + rng.below(DISTANCES)) as u32,
                        ]
                    })
                    .collect();
                OrderSample { feats, label }
            })
            .collect();
        samples[4].label = samples[4].feats.len();
        let (w, rep) = fit(&samples, 4, 0.3, 1e-3, 9);
        assert_eq!(fnv(&w.to_bytes()), 0xb2f0_7300_f4f1_71fe);
        assert_eq!((rep.train, rep.held_out), (270, 29));
        assert_eq!(rep.loss.to_bits(), 0x3fde_fb4b_7226_a71e);
        assert_eq!(rep.loss_uniform.to_bits(), 0x3ffd_4a0b_6f59_977a);
        let one = 1f64.to_bits();
        assert_eq!(
            rep.within.map(f64::to_bits),
            [0x3fe9_611a_7b96_11a8, one, one, one, one, one, one]
        );
    }

    #[test]
    fn fitting_learns_a_planted_preference_and_files_round_trip() {
        // Positions of four candidates with random features; the chosen one is always the
        // candidate whose own multiset is feature 7.
        let mut rng = Rng::new(3);
        let mut samples = Vec::new();
        for _ in 0..2000 {
            let label = rng.below(4);
            let feats = (0..4)
                .map(|k| {
                    let mine = if k == label {
                        7
                    } else {
                        8 + rng.below(900) as u32
                    };
                    let d = (2 * MULTISETS + COMBOS) as u32;
                    [
                        mine,
                        (MULTISETS + rng.below(MULTISETS)) as u32,
                        (2 * MULTISETS + rng.below(COMBOS)) as u32,
                        d + rng.below(DISTANCES) as u32,
                        d + (DISTANCES + rng.below(DISTANCES)) as u32,
                    ]
                })
                .collect();
            samples.push(OrderSample { feats, label });
        }
        let (w, rep) = fit(&samples, 3, 0.3, 1e-4, 1);
        assert!(rep.within[0] > 0.95, "top-1 {}", rep.within[0]);
        assert!(rep.loss < rep.loss_uniform / 4.0);
        let back = OrderWeights::from_bytes(&w.to_bytes()).expect("round trip");
        assert_eq!(back, w);
        let mut bad = w.to_bytes();
        bad.pop();
        assert!(OrderWeights::from_bytes(&bad).is_err());
        let mut nan = w.to_bytes();
        nan[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            OrderWeights::from_bytes(&nan),
            Err(OrderError::NotFinite(0))
        );
    }
}
