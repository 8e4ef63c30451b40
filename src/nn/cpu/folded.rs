//! The network with BatchNorm folded into the convolutions, and the heads.
//!
//! Folding (eval-mode BN is an affine map per channel) turns `BN(conv(x))` into one conv:
//! `w' = w · s`, `b' = (b − mean) · s + beta` with `s = gamma / sqrt(var + eps)`, computed
//! in f64 so that folding adds no rounding of its own beyond the final f32 store.

use crate::nn::model::Model;
use crate::nn::{NetKind, NnError};

/// A convolution with its BatchNorm folded in: `w[out][in][k][k]`, `b[out]`.
#[derive(Clone, Debug)]
pub(crate) struct Conv {
    pub cin: usize,
    pub cout: usize,
    pub k: usize,
    pub w: Vec<f32>,
    pub b: Vec<f32>,
}

/// A linear layer `y = W x + b`, stored transposed (`wt[in][out]`) so that the product
/// runs along the outputs (vectorises without horizontal sums, and skips the zero inputs
/// that the ReLU before every linear layer produces).
#[derive(Clone, Debug)]
pub(crate) struct Linear {
    pub n_in: usize,
    pub n_out: usize,
    pub wt: Vec<f32>,
    pub b: Vec<f32>,
}

/// The value heads.
#[derive(Clone, Debug)]
pub(crate) enum Heads {
    /// conv1x1 → ReLU → fc1 → ReLU → fc2 → tanh.
    AlphaZero {
        conv: Conv,
        fc1: Linear,
        fc2: Linear,
    },
    /// Two conv1x1 → ReLU → fc heads (Black, White).
    Pcn {
        black: (Conv, Linear),
        white: (Conv, Linear),
    },
}

/// The whole network, folded.
#[derive(Clone, Debug)]
pub(crate) struct Folded {
    pub n: usize,
    pub planes: usize,
    pub filters: usize,
    pub stem: Conv,
    pub blocks: Vec<(Conv, Conv)>,
    pub policy_conv: Conv,
    pub policy_fc: Linear,
    pub heads: Heads,
}

fn conv(m: &Model, conv: &str, bn: &str) -> Result<Conv, NnError> {
    let w = m.tensor(&format!("{conv}.weight"))?;
    let b = &m.tensor(&format!("{conv}.bias"))?.data;
    let gamma = &m.tensor(&format!("{bn}.weight"))?.data;
    let beta = &m.tensor(&format!("{bn}.bias"))?.data;
    let mean = &m.tensor(&format!("{bn}.running_mean"))?.data;
    let var = &m.tensor(&format!("{bn}.running_var"))?.data;
    let (cout, cin, k) = (w.shape[0], w.shape[1], w.shape[2]);
    let per = cin * k * k;
    let mut wf = vec![0f32; cout * per];
    let mut bf = vec![0f32; cout];
    for o in 0..cout {
        let s = f64::from(gamma[o]) / (f64::from(var[o]) + f64::from(m.bn_eps)).sqrt();
        for i in 0..per {
            wf[o * per + i] = (f64::from(w.data[o * per + i]) * s) as f32;
        }
        bf[o] = ((f64::from(b[o]) - f64::from(mean[o])) * s + f64::from(beta[o])) as f32;
    }
    Ok(Conv {
        cin,
        cout,
        k,
        w: wf,
        b: bf,
    })
}

fn linear(m: &Model, name: &str) -> Result<Linear, NnError> {
    let w = m.tensor(&format!("{name}.weight"))?;
    let b = m.tensor(&format!("{name}.bias"))?;
    let (n_out, n_in) = (w.shape[0], w.shape[1]);
    let mut wt = vec![0f32; n_in * n_out];
    for o in 0..n_out {
        for i in 0..n_in {
            wt[i * n_out + o] = w.data[o * n_in + i];
        }
    }
    Ok(Linear {
        n_in,
        n_out,
        wt,
        b: b.data.clone(),
    })
}

impl Folded {
    /// Folds every BatchNorm of `m`.
    pub fn new(m: &Model) -> Result<Folded, NnError> {
        let stem = conv(m, "conv", "bn")?;
        let mut blocks = Vec::with_capacity(m.blocks);
        for r in 1..=m.blocks {
            blocks.push((
                conv(m, &format!("res{r}.conv1"), &format!("res{r}.bn1"))?,
                conv(m, &format!("res{r}.conv2"), &format!("res{r}.bn2"))?,
            ));
        }
        let heads = match m.info.kind {
            NetKind::AlphaZero => Heads::AlphaZero {
                conv: conv(m, "value.conv", "value.bn")?,
                fc1: linear(m, "value.fc1")?,
                fc2: linear(m, "value.fc2")?,
            },
            NetKind::Pcn { .. } => Heads::Pcn {
                black: (
                    conv(m, "blackV.conv", "blackV.bn")?,
                    linear(m, "blackV.fc")?,
                ),
                white: (
                    conv(m, "whiteV.conv", "whiteV.bn")?,
                    linear(m, "whiteV.fc")?,
                ),
            },
        };
        Ok(Folded {
            n: m.info.board_size,
            planes: m.info.planes,
            filters: m.filters,
            stem,
            blocks,
            policy_conv: conv(m, "policy.conv", "policy.bn")?,
            policy_fc: linear(m, "policy.fc")?,
            heads,
        })
    }
}

/// Where a board's pixels lie in an NHWC buffer: pixel `(y, x)` starts at
/// `((y + off)·side + x + off)·c` (`side = n, off = 0` plain; `side = P, off = 1` padded).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Layout {
    pub n: usize,
    pub side: usize,
    pub off: usize,
}

impl Layout {
    #[inline]
    fn pixel(&self, p: usize) -> usize {
        let (y, x) = (p / self.n, p % self.n);
        (y + self.off) * self.side + x + self.off
    }
}

/// Runs `$body` compiled for AVX-512F when the CPU has it, else as portable code (the
/// crate targets baseline x86-64, whose auto-vectorisation stops at SSE2). The body is the
/// same source either way and vectorises across independent outputs only, so both builds
/// add in the same order and give bit-identical results.
macro_rules! with_avx512 {
    ($name:ident, ($($arg:ident: $ty:ty),*), $body:block) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            unsafe fn $name($($arg: $ty),*) $body
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                return unsafe { $name($($arg),*) };
            }
        }
        $body
    }};
}

/// 1x1 conv + ReLU from an NHWC trunk output to channel-major flattened features
/// (`cout · area`, the PyTorch flatten order).
pub(crate) fn conv1x1_relu_flat(cv: &Conv, x: &[f32], lay: Layout, out: &mut [f32]) {
    with_avx512!(conv1x1_wide, (cv: &Conv, x: &[f32], lay: Layout, out: &mut [f32]), {
        conv1x1_body(cv, x, lay, out)
    })
}

#[inline(always)]
fn conv1x1_body(cv: &Conv, x: &[f32], lay: Layout, out: &mut [f32]) {
    let c = cv.cin;
    let area = lay.n * lay.n;
    for o in 0..cv.cout {
        let w = &cv.w[o * c..(o + 1) * c];
        for p in 0..area {
            let q = lay.pixel(p);
            let xp = &x[q * c..(q + 1) * c];
            out[o * area + p] = (dot(w, xp) + cv.b[o]).max(0.0);
        }
    }
}

/// Dot product with eight partial sums (so the compiler can vectorise it).
#[inline(always)]
fn dot(w: &[f32], x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut wc = w.chunks_exact(8);
    let mut xc = x.chunks_exact(8);
    for (wa, xa) in (&mut wc).zip(&mut xc) {
        for j in 0..8 {
            acc[j] += wa[j] * xa[j];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (a, b) in wc.remainder().iter().zip(xc.remainder()) {
        s += a * b;
    }
    s
}

/// `y = W x + b` for one vector.
pub(crate) fn linear_fwd(l: &Linear, x: &[f32], y: &mut [f32]) {
    with_avx512!(linear_wide, (l: &Linear, x: &[f32], y: &mut [f32]), {
        linear_body(l, x, y)
    })
}

#[inline(always)]
fn linear_body(l: &Linear, x: &[f32], y: &mut [f32]) {
    let y = &mut y[..l.n_out];
    y.copy_from_slice(&l.b);
    for (i, &xi) in x.iter().enumerate().take(l.n_in) {
        if xi == 0.0 {
            continue;
        }
        let w = &l.wt[i * l.n_out..(i + 1) * l.n_out];
        for (yo, &wo) in y.iter_mut().zip(w) {
            *yo += xi * wo;
        }
    }
}

/// Which heads [`heads_fwd`] runs (threads can split one position's heads).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum HeadPart {
    /// Policy and value heads.
    All,
    /// The policy head only.
    Policy,
    /// The value head(s) only.
    Value,
}

/// Runs the heads on one position's NHWC trunk output `x` (laid out as `lay` says), writing
/// the policy logits and the value outputs (`value`: one float; `black`/`white`: bins each).
#[allow(clippy::too_many_arguments)]
pub(crate) fn heads_fwd(
    f: &Folded,
    x: &[f32],
    lay: Layout,
    part: HeadPart,
    policy: &mut [f32],
    value: &mut [f32],
    black: &mut [f32],
    white: &mut [f32],
    scratch: &mut Vec<f32>,
) {
    let area = f.n * f.n;
    let hidden = match &f.heads {
        Heads::AlphaZero { fc1, .. } => fc1.n_out,
        Heads::Pcn { .. } => 0,
    };
    scratch.resize(2 * area + hidden, 0.0);
    let (feat, rest) = scratch.split_at_mut(2 * area);
    if part != HeadPart::Value {
        conv1x1_relu_flat(&f.policy_conv, x, lay, feat);
        linear_fwd(&f.policy_fc, feat, policy);
    }
    if part == HeadPart::Policy {
        return;
    }
    match &f.heads {
        Heads::AlphaZero { conv, fc1, fc2 } => {
            conv1x1_relu_flat(conv, x, lay, &mut feat[..area]);
            let hidden = &mut rest[..fc1.n_out];
            linear_fwd(fc1, &feat[..area], hidden);
            for h in hidden.iter_mut() {
                *h = h.max(0.0);
            }
            let mut v = [0f32];
            linear_fwd(fc2, hidden, &mut v);
            value[0] = v[0].tanh();
        }
        Heads::Pcn { black: b, white: w } => {
            conv1x1_relu_flat(&b.0, x, lay, feat);
            linear_fwd(&b.1, feat, black);
            conv1x1_relu_flat(&w.0, x, lay, feat);
            linear_fwd(&w.1, feat, white);
        }
    }
}
