//! Training of the Gomoku pattern policy ([`crate::search::gomoku::learn::patpolicy`]), run by
//! `pcn train-patterns`: self-play samples of the alpha-beta player, their file format, and
//! the softmax regression that fits the table to the player's choices.

use std::sync::atomic::AtomicBool;

use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Color, Game};
use crate::search::gomoku::alphabeta::AlphaBeta;
use crate::search::gomoku::greedy::candidates;
use crate::search::gomoku::learn::patpolicy::{
    features_of_keys, static_score, PatternError, PatternPolicy,
};
use crate::search::gomoku::learn::{adagrad, cross_entropy, split_held_out, AdaGrad, Choice};
use crate::search::{Limits, Searcher};
use crate::util::Rng;

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

impl Choice for Feat<'_> {
    type Feats = [u32; 5];
    fn candidates(&self) -> &[[u32; 5]] {
        &self.feats
    }
    fn label(&self) -> usize {
        self.label
    }
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
        .collect();
    fit(&feats, o)
}

/// Softmax regression on prepared features (see [`train`]).
fn fit(feats: &[Feat], o: &FitOptions) -> (PatternPolicy, TrainReport) {
    let mut p = o.init.cloned().unwrap_or_default();
    let (mut tr, te) = split_held_out(feats);
    let mut z = Vec::new();
    let mut top1_start = 0.0;
    for s in &te {
        z.clear();
        z.extend(s.feats.iter().map(|f| p.logit_of(f)));
        top1_start += (argmax(&z) == s.label) as u8 as f64;
    }
    let a = AdaGrad {
        epochs: o.epochs,
        lr: o.lr,
        l2: o.l2,
        seed: o.seed ^ 0x7a11,
    };
    adagrad(p.weights_mut(), &mut tr, &a);
    let mut rep = TrainReport {
        train: tr.len(),
        held_out: te.len(),
        ..TrainReport::default()
    };
    for s in &te {
        z.clear();
        z.extend(s.feats.iter().map(|f| p.logit_of(f)));
        rep.top1 += (argmax(&z) == s.label) as u8 as f64;
        rep.top1_static += (argmax(s.scores) == s.label) as u8 as f64;
    }
    (rep.loss, rep.loss_uniform) = cross_entropy(p.weights(), &te);
    let n = te.len().max(1) as f64;
    rep.top1 /= n;
    rep.top1_static /= n;
    rep.top1_start = top1_start / n;
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
    use crate::search::gomoku::learn::patpolicy::{features, COMBOS, KEYS};

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
        assert!(p.weights()[5] > 0.0);
        // Fine-tuning starts from the given table: its held-out agreement is already there,
        // and no pass leaves the table as it was.
        let (q, rep) = fit(&feats, &opts(0, Some(&p)));
        assert_eq!(q, p);
        assert!(
            rep.top1_start > 0.95 && rep.top1 == rep.top1_start,
            "{rep:?}"
        );
    }

    /// FNV-1a of bytes: a fingerprint of a whole weight file for the golden tests.
    fn fnv(b: &[u8]) -> u64 {
        b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
            (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn fitting_gives_the_recorded_weights_bit_for_bit() {
        // Golden values, recorded from this fit as it stood before its loop was shared with
        // the ordering table's: any change to the order of the float operations, the
        // held-out split or the shuffles changes them.
        let mut rng = Rng::new(17);
        let scores: Vec<f32> = (0..12).map(|k| k as f32 * 0.5 - 2.0).collect();
        let feats: Vec<Feat> = (0..300)
            .map(|_| {
                let n = 2 + rng.below(10);
                let label = rng.below(n);
                let feats = (0..n)
                    .map(|k| {
                        let a = if k == label {
                            3 + rng.below(4)
                        } else {
                            rng.below(40)
                        };
                        [
                            a as u32,
                            40 + rng.below(30) as u32,
                            70 + rng.below(30) as u32,
                            a as u32 + 100,
                            (KEYS + rng.below(COMBOS)) as u32,
                        ]
                    })
                    .collect();
                Feat {
                    feats,
                    scores: &scores[..n],
                    label,
                }
            })
            .collect();
        let mut start = PatternPolicy::default();
        start.weights_mut()[3] = 0.25;
        start.weights_mut()[41] = -0.5;
        // Per start (zeros, then `start`): the weight file's fingerprint, then the report's
        // top-1, static top-1, starting top-1, loss and uniform loss as f64 bits.
        let recorded = [
            (
                0x96a1_cfe9_da51_db1f,
                [
                    0x3fe7_7777_7777_7777,
                    0x3fc5_5555_5555_5555,
                    0x3fc5_5555_5555_5555,
                    0x3fdb_ca6a_792f_1cc6,
                    0x3ffd_204b_b2d3_33d6,
                ],
            ),
            (
                0xba1b_8483_ee2f_23c1,
                [
                    0x3fe6_6666_6666_6666,
                    0x3fc5_5555_5555_5555,
                    0x3fcd_dddd_dddd_ddde,
                    0x3fdb_f79d_9c7f_c903,
                    0x3ffd_204b_b2d3_33d6,
                ],
            ),
        ];
        for (init, (file, report)) in [None, Some(&start)].into_iter().zip(recorded) {
            let o = FitOptions {
                epochs: 4,
                lr: 0.3,
                l2: 1e-3,
                seed: 5,
                init,
            };
            let (p, rep) = fit(&feats, &o);
            assert_eq!(fnv(&p.to_bytes()), file);
            assert_eq!((rep.train, rep.held_out), (270, 30));
            let got = [
                rep.top1,
                rep.top1_static,
                rep.top1_start,
                rep.loss,
                rep.loss_uniform,
            ];
            assert_eq!(got.map(f64::to_bits), report, "{rep:?}");
        }
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
