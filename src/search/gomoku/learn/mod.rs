//! Everything the Gomoku wing learns from games, in one place: the player's move ordering
//! ([`ordering`]), the pattern policy ([`patpolicy`]) and the player's evaluation network
//! ([`evalnet`]), with what the two pattern tables share here: their weight files and their
//! fit.
//!
//! A pattern table's weight file is an eight-byte magic naming the table, then its weights
//! as little-endian `f32`, nothing else; a file is read only when its size is exactly that
//! of its table and every weight is finite, so a table never holds a weight that would
//! poison every logit it enters. (The evaluation network has a file format of its own,
//! docs/model-format.md.)
//!
//! Both pattern tables score a candidate point by the sum of a few weights (its features)
//! and are fitted the same way: softmax regression over the candidates of each position,
//! the played one the label, by AdaGrad, with every tenth position held out for the report.
//! The steps here ([`split_held_out`], [`adagrad`], [`cross_entropy`], [`softmax_into`])
//! are that fit; each trainer adds its own report around them. The order of every float
//! operation is part of the contract: the shipped tables are reproduced byte for byte from
//! their recipes (`weights/README.md`), so a change here that reorders a sum changes them.
//! The evaluation network is trained in PyTorch (`training/`), not here.
//!
//! The dependencies run one way: the tables import this module, never each other's files
//! back.

use crate::util::Rng;

pub mod evalnet;
pub mod ordering;
pub mod patpolicy;

/// Why [`read_weights`] refused a file; each table turns it into its own error type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightFileError {
    /// Wrong size or magic: what was found and what was expected, in words.
    Format(String),
    /// The weight at this index is NaN or infinite.
    NotFinite(usize),
}

/// Reads a weight file of exactly `count` weights after `magic`.
pub fn read_weights(b: &[u8], magic: &[u8; 8], count: usize) -> Result<Vec<f32>, WeightFileError> {
    let want = magic.len() + 4 * count;
    if b.len() != want || &b[..magic.len()] != magic {
        return Err(WeightFileError::Format(format!(
            "{} bytes, expected {want} starting with {:?}",
            b.len(),
            String::from_utf8_lossy(magic).trim_end()
        )));
    }
    let mut w = Vec::with_capacity(count);
    for (i, c) in b[magic.len()..].chunks_exact(4).enumerate() {
        let x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        if !x.is_finite() {
            return Err(WeightFileError::NotFinite(i));
        }
        w.push(x);
    }
    Ok(w)
}

/// The bytes of a weight file: `magic`, then the weights.
pub fn write_weights(magic: &[u8; 8], w: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(magic.len() + 4 * w.len());
    b.extend_from_slice(magic);
    for x in w {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
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

/// One training position: the features of each candidate point and which one was played.
pub trait Choice {
    /// Weight indices per candidate (each table has its own number of features).
    type Feats: AsRef<[u32]>;
    /// Per candidate, the indices of its weights (its logit is their sum, see [`logit`]).
    fn candidates(&self) -> &[Self::Feats];
    /// Index of the played candidate; a position whose label is not below the number of
    /// candidates is not learned.
    fn label(&self) -> usize;
}

/// The logit of a candidate: the sum of its weights.
#[inline]
pub fn logit(w: &[f32], f: &[u32]) -> f32 {
    f.iter().map(|&i| w[i as usize]).sum()
}

/// The positions that can be learned (label among the candidates), in order, split into
/// (training, held out): the held-out ones are every tenth, counted among the learnable.
pub fn split_held_out<S: Choice>(samples: &[S]) -> (Vec<&S>, Vec<&S>) {
    let (mut train, mut held_out) = (Vec::new(), Vec::new());
    let usable = samples.iter().filter(|s| s.label() < s.candidates().len());
    for (i, s) in usable.enumerate() {
        if i % 10 == 9 {
            held_out.push(s);
        } else {
            train.push(s);
        }
    }
    (train, held_out)
}

/// Settings of [`adagrad`].
#[derive(Clone, Debug)]
pub struct AdaGrad {
    /// Passes over the training positions.
    pub epochs: usize,
    /// Step size.
    pub lr: f32,
    /// L2 penalty per weight and step.
    pub l2: f32,
    /// Seed of the shuffles (each trainer mixes its own constant into its seed, so the two
    /// tables do not see their positions in the same order).
    pub seed: u64,
}

/// Fits the weights `w` (started from whatever they hold) by softmax regression with
/// AdaGrad on the positions of `train`, which are shuffled in place before each pass.
/// Deterministic for a seed.
///
/// A position whose logits cannot be normalised (one of them not finite) teaches nothing and
/// is skipped, rather than writing NaN into every weight it touches.
pub fn adagrad<S: Choice>(w: &mut [f32], train: &mut [&S], o: &AdaGrad) {
    let mut g2 = vec![1e-6f32; w.len()];
    let mut rng = Rng::new(o.seed);
    let mut z = Vec::new();
    for _ in 0..o.epochs {
        // Fisher-Yates.
        for i in (1..train.len()).rev() {
            let j = rng.below(i + 1);
            train.swap(i, j);
        }
        for s in train.iter() {
            let feats = s.candidates();
            z.clear();
            z.extend(feats.iter().map(|f| logit(w, f.as_ref())));
            if !softmax_into(&mut z) {
                continue;
            }
            // The gradient of a candidate's logit is its probability, less one for the
            // played candidate; each of its weights takes it, plus the L2 term.
            for (k, f) in feats.iter().enumerate() {
                let gk = z[k] - if k == s.label() { 1.0 } else { 0.0 };
                for &i in f.as_ref() {
                    let i = i as usize;
                    let g = gk + o.l2 * w[i];
                    g2[i] += g * g;
                    w[i] -= o.lr * g / g2[i].sqrt();
                }
            }
        }
    }
}

/// The mean cross-entropy (nats) over the positions `held_out` of the weights `w` and of a
/// uniform choice among the candidates; zeros when there are none.
pub fn cross_entropy<S: Choice>(w: &[f32], held_out: &[&S]) -> (f64, f64) {
    let (mut loss, mut uniform) = (0.0, 0.0);
    let mut z = Vec::new();
    for s in held_out {
        z.clear();
        z.extend(s.candidates().iter().map(|f| logit(w, f.as_ref())));
        softmax_into(&mut z);
        loss -= f64::from(z[s.label()].max(1e-12)).ln();
        uniform += (s.candidates().len() as f64).ln();
    }
    let n = held_out.len().max(1) as f64;
    (loss / n, uniform / n)
}

#[cfg(test)]
mod tests {
    use super::ordering::OrderWeights;
    use super::patpolicy::PatternPolicy;
    use super::*;

    #[test]
    fn weight_files_round_trip_and_refuse_damage() {
        let magic = b"PCNTST1\n";
        let w = [0.5f32, -2.0, 0.0];
        let b = write_weights(magic, &w);
        assert_eq!(b.len(), 8 + 12);
        assert_eq!(read_weights(&b, magic, 3), Ok(w.to_vec()));
        assert_eq!(
            read_weights(&b[..19], magic, 3),
            Err(WeightFileError::Format(
                "19 bytes, expected 20 starting with \"PCNTST1\"".to_string()
            ))
        );
        assert!(matches!(
            read_weights(&b, b"PCNTST2\n", 3),
            Err(WeightFileError::Format(_))
        ));
        assert!(matches!(
            read_weights(b"short", magic, 0),
            Err(WeightFileError::Format(_))
        ));
        let mut inf = b.clone();
        inf[12..16].copy_from_slice(&f32::INFINITY.to_le_bytes());
        assert_eq!(
            read_weights(&inf, magic, 3),
            Err(WeightFileError::NotFinite(1))
        );
    }

    #[test]
    fn the_shipped_tables_are_rewritten_byte_for_byte() {
        let pat: &[u8] = include_bytes!("../../../../weights/gomoku_patterns.bin");
        let p = PatternPolicy::from_bytes(pat).expect("pattern table");
        assert!(p.to_bytes() == pat);
        let ord: &[u8] = include_bytes!("../../../../weights/gomoku_order.bin");
        let o = OrderWeights::from_bytes(ord).expect("ordering table");
        assert!(o.to_bytes() == ord);
    }
}
