//! Decoding raw network outputs and the 8 board symmetries (`../shared/pcn/README.md` §5, §6).
//!
//! - Policy: `softmax(logits)` over all actions; the caller keeps the legal moves **without
//!   renormalising** (a child's prior is its raw softmax mass).
//! - AlphaZero value: the tanh output, for the side to move.
//! - PCN heads: the expectation `E = Σ_j softmax(logits)_j · j` per head (log10 proof cost).
//! - Symmetries act on centred coordinates; with `k` symmetries (1..=8) a position is encoded
//!   `k` times (ids `0..k`, identity first) and the decoded results are averaged: priors
//!   `prior[a] = mean_s softmax_s[T_s(a)]`, values and expectations are plain means.
//!
//! The paper's solver averages all 8 (in a random order, which only changes float rounding);
//! fewer symmetries trade accuracy for speed.

use super::{NetInfo, NetKind, NetOutput};

/// Number of board symmetries (the dihedral group of the square).
pub const SYMMETRIES: usize = 8;

/// Inverse of each symmetry id (README §6 table).
pub const INVERSE: [usize; SYMMETRIES] = [0, 3, 2, 1, 4, 5, 6, 7];

/// Applies symmetry `s` to centred coordinates `(u, v)`.
#[inline]
pub fn apply(s: usize, u: i32, v: i32) -> (i32, i32) {
    match s & 7 {
        0 => (u, v),
        1 => (v, -u),
        2 => (-u, -v),
        3 => (-v, u),
        4 => (-u, v),
        5 => (v, u),
        6 => (u, -v),
        _ => (-v, -u),
    }
}

/// Action maps of the 8 symmetries for one board size: `map(s, a) = T_s(a)`, with every
/// action beyond the board (pass) mapped to itself.
#[derive(Clone, Debug)]
pub struct Symmetries {
    n: usize,
    actions: usize,
    /// `fwd[s * actions + a] = T_s(a)`.
    fwd: Vec<u16>,
}

impl Symmetries {
    /// Tables for an `n`×`n` board with `actions` actions (`n²`, or `n² + 1` with pass).
    pub fn new(n: usize, actions: usize) -> Self {
        // Doubled centred coordinates (2x - (n - 1)): the README's `x - n/2` for odd n, and
        // still a permutation of the board for even n.
        let c = n as i32 - 1;
        let mut fwd = vec![0u16; SYMMETRIES * actions];
        for s in 0..SYMMETRIES {
            for a in 0..actions {
                let t = if a < n * n {
                    let (x, y) = ((a % n) as i32, (a / n) as i32);
                    let (u, v) = apply(s, 2 * x - c, 2 * y - c);
                    (((v + c) / 2) as usize) * n + ((u + c) / 2) as usize
                } else {
                    a
                };
                fwd[s * actions + a] = t as u16;
            }
        }
        Symmetries { n, actions, fwd }
    }

    /// Board side.
    pub fn size(&self) -> usize {
        self.n
    }

    /// `T_s(a)`.
    #[inline]
    pub fn map(&self, s: usize, a: usize) -> usize {
        self.fwd[(s & 7) * self.actions + a] as usize
    }

    /// Writes input `src` (`planes` planes of `n²`) transformed by symmetry `s` into `dst`:
    /// `dst_plane[a] = src_plane[T_inv(s)(a)]`.
    pub fn transform_input(&self, s: usize, src: &[f32], planes: usize, dst: &mut [f32]) {
        let area = self.n * self.n;
        let inv = INVERSE[s & 7];
        for p in 0..planes {
            let (sp, dp) = (
                &src[p * area..(p + 1) * area],
                &mut dst[p * area..(p + 1) * area],
            );
            for (a, d) in dp.iter_mut().enumerate() {
                *d = sp[self.map(inv, a)];
            }
        }
    }
}

/// Softmax of `logits` into `out` (same length), numerically stable.
pub fn softmax(logits: &[f32], out: &mut [f32]) {
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f64;
    for (o, &l) in out.iter_mut().zip(logits) {
        let e = (l - m).exp();
        *o = e;
        sum += e as f64;
    }
    if sum > 0.0 && sum.is_finite() {
        let inv = (1.0 / sum) as f32;
        for o in out.iter_mut() {
            *o *= inv;
        }
    }
}

/// The PCN expectation `Σ_j softmax(logits)_j · j`.
pub fn expectation(logits: &[f32]) -> f32 {
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (j, &l) in logits.iter().enumerate() {
        let e = ((l - m) as f64).exp();
        num += e * j as f64;
        den += e;
    }
    if den > 0.0 && den.is_finite() {
        (num / den) as f32
    } else {
        0.0
    }
}

/// One position's decoded (symmetry-averaged) network output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    /// Averaged softmax mass per action (all actions, unmasked, not renormalised).
    pub policy: Vec<f32>,
    /// AlphaZero: averaged tanh value for the side to move (0 for PCN models).
    pub value: f32,
    /// PCN: averaged expectation of the Black-wins head (log10 cost; 0 for AlphaZero).
    pub black: f32,
    /// PCN: averaged expectation of the White-wins head.
    pub white: f32,
}

/// Encodes positions under `k` symmetries and decodes/averages the outputs.
#[derive(Clone, Debug)]
pub struct Decoder {
    info: NetInfo,
    sym: Symmetries,
    k: usize,
    scratch: Vec<f32>,
}

impl Decoder {
    /// A decoder for `info` averaging over `symmetries` (clamped to 1..=8) symmetries.
    pub fn new(info: &NetInfo, symmetries: usize) -> Self {
        Decoder {
            sym: Symmetries::new(info.board_size, info.actions),
            info: info.clone(),
            k: symmetries.clamp(1, SYMMETRIES),
            scratch: vec![0.0; info.actions],
        }
    }

    /// Symmetries per position.
    pub fn symmetries(&self) -> usize {
        self.k
    }

    /// The model description.
    pub fn info(&self) -> &NetInfo {
        &self.info
    }

    /// Appends the `k` transformed copies of one identity-encoded position (`input_len`
    /// floats) to `batch`.
    pub fn push_input(&self, identity: &[f32], batch: &mut Vec<f32>) {
        let len = self.info.input_len();
        for s in 0..self.k {
            let start = batch.len();
            batch.resize(start + len, 0.0);
            if s == 0 {
                batch[start..].copy_from_slice(&identity[..len]);
            } else {
                self.sym
                    .transform_input(s, identity, self.info.planes, &mut batch[start..]);
            }
        }
    }

    /// Decodes position `i` of a batch built with [`Decoder::push_input`] (rows
    /// `i·k .. i·k + k` of `out`) into `d`.
    pub fn decode(&mut self, out: &NetOutput, i: usize, d: &mut Decoded) {
        let a = self.info.actions;
        d.policy.clear();
        d.policy.resize(a, 0.0);
        d.value = 0.0;
        d.black = 0.0;
        d.white = 0.0;
        let k = self.k;
        let w = 1.0 / k as f32;
        for s in 0..k {
            let row = i * k + s;
            let Some(logits) = out.policy.get(row * a..(row + 1) * a) else {
                continue;
            };
            softmax(logits, &mut self.scratch);
            for (act, p) in d.policy.iter_mut().enumerate() {
                *p += self.scratch[self.sym.map(s, act)] * w;
            }
            match self.info.kind {
                NetKind::AlphaZero => {
                    d.value += out.value.get(row).copied().unwrap_or(0.0) * w;
                }
                NetKind::Pcn { bins } => {
                    if let Some(b) = out.black_v.get(row * bins..(row + 1) * bins) {
                        d.black += expectation(b) * w;
                    }
                    if let Some(wv) = out.white_v.get(row * bins..(row + 1) * bins) {
                        d.white += expectation(wv) * w;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_table_inverts() {
        let sym = Symmetries::new(9, 82);
        for (s, &inv) in INVERSE.iter().enumerate() {
            for a in 0..82 {
                assert_eq!(sym.map(inv, sym.map(s, a)), a, "s {s} a {a}");
            }
            assert_eq!(sym.map(s, 81), 81);
        }
        // Symmetry 1 maps (u, v) to (v, -u): the point right of centre goes below it.
        assert_eq!(sym.map(1, 4 * 9 + 5), 3 * 9 + 4);
    }

    #[test]
    fn maps_are_permutations() {
        for (n, a) in [(9, 82), (15, 225), (6, 36)] {
            let sym = Symmetries::new(n, a);
            for (s, &inv) in INVERSE.iter().enumerate() {
                assert_eq!(sym.map(inv, sym.map(s, a - 1)), a - 1);
                let mut seen = vec![false; a];
                for x in 0..a {
                    seen[sym.map(s, x)] = true;
                }
                assert!(seen.iter().all(|&b| b));
            }
        }
    }

    #[test]
    fn expectation_and_softmax() {
        let l = [0.0f32, 0.0, 0.0, 0.0];
        assert!((expectation(&l) - 1.5).abs() < 1e-6);
        let mut p = [0.0; 4];
        softmax(&[1.0, 2.0, 3.0, 4.0], &mut p);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(p[3] > p[2] && p[2] > p[1]);
    }
}
