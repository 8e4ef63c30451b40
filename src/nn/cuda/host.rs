//! The host side of the network's weights, laid out as the GPU stores them, and (in tests)
//! a CPU emulation of [`Plan::forward_ops`] that runs every step with the kernels' and
//! cuBLAS's exact index arithmetic: it checks the layouts, the GEMM dimensions and leading
//! dimensions and the heads' offsets against the golden outputs without a GPU.

use crate::nn::cpu::folded::{Conv, Folded, Heads};
use crate::nn::model::Model;
use crate::nn::NetKind;

use super::plan::Plan;
use super::CudaError;

/// One weight matrix with its bias and shape.
pub(crate) struct Layer {
    /// Weights, row-major (`[out][in_padded]`).
    pub w: Vec<f32>,
    /// Bias (`out` floats).
    pub b: Vec<f32>,
    /// Inputs (channels for a convolution).
    pub n_in: usize,
    /// Row length of `w` (padded GEMM depth for convolutions, `n_in` for linear layers).
    pub ld: usize,
    /// Outputs.
    pub n_out: usize,
}

/// The weights as the GPU holds them (all f32 here; the trunk and head convolutions are
/// converted to the stored type at upload).
pub(crate) struct HostWeights {
    /// Trunk convolutions: the stem, then conv1 and conv2 of each block (`[F][Kp]`).
    pub convs: Vec<Layer>,
    /// The stacked 1x1 head convolutions `[head_channels][F]` (padding rows zero).
    pub head: Layer,
    /// Fully connected layers `[out][in]`: policy, then AlphaZero fc1, fc2 or PCN Black,
    /// White.
    pub fcs: Vec<Layer>,
}

impl HostWeights {
    /// Checks every layer's shape against what [`Plan::forward_ops`] reads (so that no
    /// GEMM can read past a weight buffer).
    pub(crate) fn check(&self, plan: &Plan) -> Result<(), CudaError> {
        let bad = |what: String| Err(CudaError::Model(what));
        let expect = |l: &Layer, n_in: usize, ld: usize, n_out: usize| {
            l.n_in == n_in
                && l.ld == ld
                && l.n_out == n_out
                && l.w.len() == n_out * ld
                && l.b.len() == n_out
        };
        if self.convs.len() != 1 + 2 * plan.blocks {
            return bad(format!("{} trunk convolutions", self.convs.len()));
        }
        for (i, l) in self.convs.iter().enumerate() {
            let (cin, kp) = if i == 0 {
                (plan.planes, plan.k_stem())
            } else {
                (plan.filters, plan.k_trunk())
            };
            if !expect(l, cin, kp, plan.filters) {
                return bad(format!("trunk convolution {i} has an unexpected shape"));
            }
        }
        if !expect(&self.head, plan.filters, plan.filters, plan.head_channels()) {
            return bad("head convolutions have an unexpected shape".into());
        }
        let area = plan.area();
        let fcs: Vec<(usize, usize)> = if plan.alphazero {
            vec![
                (2 * area, plan.actions),
                (area, plan.hidden),
                (plan.hidden, 1),
            ]
        } else {
            vec![
                (2 * area, plan.actions),
                (2 * area, plan.bins),
                (2 * area, plan.bins),
            ]
        };
        if self.fcs.len() != fcs.len() {
            return bad(format!("{} linear layers", self.fcs.len()));
        }
        for (i, (l, &(n_in, n_out))) in self.fcs.iter().zip(&fcs).enumerate() {
            if !expect(l, n_in, n_in, n_out) {
                return bad(format!("linear layer {i} has an unexpected shape"));
            }
        }
        Ok(())
    }
}

/// A convolution's weights padded to `[Cout][kp]` (zeros past `Cin·k²`).
fn padded(cv: &Conv, kp: usize) -> Layer {
    let per = cv.cin * cv.k * cv.k;
    let mut w = vec![0f32; cv.cout * kp];
    for o in 0..cv.cout {
        w[o * kp..o * kp + per].copy_from_slice(&cv.w[o * per..(o + 1) * per]);
    }
    Layer {
        w,
        b: cv.b.clone(),
        n_in: cv.cin,
        ld: kp,
        n_out: cv.cout,
    }
}

/// Lays out the folded network `f` of `model` as `plan` says.
pub(crate) fn host_weights(
    f: &Folded,
    model: &Model,
    plan: &Plan,
) -> Result<HostWeights, CudaError> {
    let mut convs = Vec::new();
    let mut push = |cv: &Conv, kp: usize| -> Result<(), CudaError> {
        if cv.k != 3 {
            return Err(CudaError::Model(format!(
                "trunk kernel size {} (expected 3)",
                cv.k
            )));
        }
        convs.push(padded(cv, kp));
        Ok(())
    };
    push(&f.stem, plan.k_stem())?;
    for (a, b) in &f.blocks {
        push(a, plan.k_trunk())?;
        push(b, plan.k_trunk())?;
    }
    let heads: Vec<&Conv> = match &f.heads {
        Heads::AlphaZero { conv, .. } => vec![&f.policy_conv, conv],
        Heads::Pcn { black, white } => vec![&f.policy_conv, &black.0, &white.0],
    };
    let hc = plan.head_channels();
    let fl = plan.filters;
    let mut hw = vec![0f32; hc * fl];
    let mut hb = vec![0f32; hc];
    let mut row = 0;
    for cv in heads {
        if cv.k != 1 || cv.cin != fl {
            return Err(CudaError::Model(
                "head convolutions must be 1x1 over the trunk".into(),
            ));
        }
        for o in 0..cv.cout {
            if row >= hc {
                return Err(CudaError::Model("too many head channels".into()));
            }
            hw[row * fl..(row + 1) * fl].copy_from_slice(&cv.w[o * cv.cin..(o + 1) * cv.cin]);
            hb[row] = cv.b[o];
            row += 1;
        }
    }
    if row != plan.head_channels_used() {
        return Err(CudaError::Model(format!(
            "{row} head channels (expected {})",
            plan.head_channels_used()
        )));
    }
    let names: &[&str] = match model.info.kind {
        NetKind::AlphaZero => &["policy.fc", "value.fc1", "value.fc2"],
        NetKind::Pcn { .. } => &["policy.fc", "blackV.fc", "whiteV.fc"],
    };
    let mut fcs = Vec::new();
    for n in names {
        let w = model
            .tensor(&format!("{n}.weight"))
            .map_err(|e| CudaError::Model(e.to_string()))?;
        let b = model
            .tensor(&format!("{n}.bias"))
            .map_err(|e| CudaError::Model(e.to_string()))?;
        fcs.push(Layer {
            w: w.data.clone(),
            b: b.data.clone(),
            n_in: w.shape[1],
            ld: w.shape[1],
            n_out: w.shape[0],
        });
    }
    Ok(HostWeights {
        convs,
        head: Layer {
            w: hw,
            b: hb,
            n_in: fl,
            ld: fl,
            n_out: hc,
        },
        fcs,
    })
}

/// The weights of the implicit-GEMM path ([`super::mma`]) laid out from the im2col
/// path's: each trunk convolution as `[9][FP][Cin padded to 16]` (tap-major, so that one
/// tap's weights are one contiguous block streamed into shared memory; zero for padded
/// channels) with its bias padded to FP, and the stacked head convolutions as f32
/// `[HC][FP]` (only the used channels). The fully connected layers are unchanged.
pub(crate) fn mma_weights(hw: &HostWeights, plan: &Plan, t: &super::mma::Tiling) -> HostWeights {
    use super::mma::w_off;
    let fp = t.fp;
    let convs = hw
        .convs
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let cp = if i == 0 { t.cs } else { fp };
            let mut w = vec![0f32; 9 * fp * cp];
            for n in 0..l.n_out {
                for k in 0..l.n_in {
                    for tap in 0..9 {
                        // The im2col layout: row n, column k·9 + tap.
                        let o = w_off(tap as i32, n as i32, k as i32, fp as i32, cp as i32);
                        w[o as usize] = l.w[n * l.ld + k * 9 + tap];
                    }
                }
            }
            let mut b = vec![0f32; fp];
            b[..l.n_out].copy_from_slice(&l.b);
            Layer {
                w,
                b,
                n_in: l.n_in,
                ld: cp,
                n_out: fp,
            }
        })
        .collect();
    let hc = plan.head_channels_used();
    let mut w = vec![0f32; hc * fp];
    for c in 0..hc {
        w[c * fp..c * fp + plan.filters]
            .copy_from_slice(&hw.head.w[c * hw.head.ld..c * hw.head.ld + plan.filters]);
    }
    HostWeights {
        convs,
        head: Layer {
            w,
            b: hw.head.b[..hc].to_vec(),
            n_in: plan.filters,
            ld: fp,
            n_out: hc,
        },
        fcs: hw
            .fcs
            .iter()
            .map(|l| Layer {
                w: l.w.clone(),
                b: l.b.clone(),
                n_in: l.n_in,
                ld: l.ld,
                n_out: l.n_out,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::cuda::mma::Tiling;
    use crate::nn::cuda::plan::{bucket_for, Buf, Op};
    use crate::nn::{Evaluator, NetOutput};
    use std::collections::HashMap;

    /// Runs `plan.forward_ops(rows)` on the CPU with the kernels' index arithmetic (the
    /// loops run over the flat index `i` as the kernels' threads do, hence the lint).
    ///
    /// With `mma`, the implicit-GEMM path ([`Plan::forward_ops_mma`], weights from
    /// [`mma_weights`]) instead, every kernel emulated thread by thread and lane by lane
    /// ([`mma_emu`]); `round` rounds what the GPU stores in fp16 (weights, shared tiles,
    /// activations) to fp16, else everything stays f32 (to compare tightly).
    #[allow(clippy::needless_range_loop)]
    fn emulate(
        plan: &Plan,
        w: &HostWeights,
        input: &[f32],
        rows: usize,
        mma: Option<&Tiling>,
        round: bool,
    ) -> Vec<f32> {
        let s = match mma {
            Some(t) => plan.sizes_mma(rows, t.fp),
            None => plan.sizes(rows),
        };
        let area = plan.area();
        let m = rows * area;
        let mut bufs: HashMap<Buf, Vec<f32>> = HashMap::new();
        let mut inp = vec![0f32; s.input];
        inp[..input.len()].copy_from_slice(input);
        bufs.insert(Buf::Input, inp);
        for (b, n) in [
            (Buf::X0, s.act),
            (Buf::A, s.act),
            (Buf::H, s.act),
            (Buf::Col, s.col),
            (Buf::Acc, s.acc),
            (Buf::Feat, s.feat),
            (Buf::Hidden, s.hidden),
            (Buf::Out, s.out),
        ] {
            // NaN: a step reading what no step wrote shows in the outputs.
            bufs.insert(b, vec![f32::NAN; n]);
        }
        for (i, l) in w.convs.iter().enumerate() {
            bufs.insert(Buf::ConvW(i), l.w.clone());
            bufs.insert(Buf::ConvB(i), l.b.clone());
        }
        bufs.insert(Buf::HeadW, w.head.w.clone());
        bufs.insert(Buf::HeadB, w.head.b.clone());
        for (i, l) in w.fcs.iter().enumerate() {
            bufs.insert(Buf::FcW(i), l.w.clone());
            bufs.insert(Buf::FcB(i), l.b.clone());
        }
        let n = plan.n;
        let ops = match mma {
            Some(_) => plan.forward_ops_mma(rows),
            None => plan.forward_ops(rows),
        };
        let r16 = |v: &[f32]| -> Vec<f32> { v.iter().map(|&x| mma_emu::r16(x, round)).collect() };
        for op in ops {
            match op {
                Op::MmaStem => {
                    let t = mma.unwrap();
                    let mut out = bufs.remove(&Buf::A).unwrap();
                    mma_emu::stem(
                        t,
                        &bufs[&Buf::Input],
                        &r16(&bufs[&Buf::ConvW(0)]),
                        &bufs[&Buf::ConvB(0)],
                        &mut out,
                        rows,
                        round,
                    );
                    bufs.insert(Buf::A, out);
                }
                Op::MmaBlock { blk, src, dst } => {
                    let t = mma.unwrap();
                    let mut out = bufs.remove(&dst).unwrap();
                    let (i1, i2) = (1 + 2 * blk, 2 + 2 * blk);
                    mma_emu::block(
                        t,
                        &bufs[&src],
                        (&r16(&bufs[&Buf::ConvW(i1)]), &bufs[&Buf::ConvB(i1)]),
                        (&r16(&bufs[&Buf::ConvW(i2)]), &bufs[&Buf::ConvB(i2)]),
                        &mut out,
                        rows,
                        round,
                    );
                    bufs.insert(dst, out);
                }
                Op::MmaHeads { src } => {
                    let t = mma.unwrap();
                    let mut feat = bufs.remove(&Buf::Feat).unwrap();
                    mma_emu::heads(
                        t,
                        &bufs[&src],
                        &bufs[&Buf::HeadW],
                        &bufs[&Buf::HeadB],
                        &mut feat,
                        rows,
                    );
                    bufs.insert(Buf::Feat, feat);
                }
                Op::ToAct { src, dst, n } => {
                    let v = bufs[&src][..n].to_vec();
                    bufs.get_mut(&dst).unwrap()[..n].copy_from_slice(&v);
                }
                Op::Im2col {
                    src,
                    cin,
                    kp,
                    sb,
                    sc,
                } => {
                    let x = bufs[&src].clone();
                    let col = bufs.get_mut(&Buf::Col).unwrap();
                    // The kernel's work items: (group g, position mm), 9 rows each.
                    let groups = kp.div_ceil(9);
                    for i in 0..groups * m {
                        let (g, mm) = (i / m, i % m);
                        let (b, p) = (mm / area, mm % area);
                        let (py, px) = (p / n, p % n);
                        for r in 0..9 {
                            let k = g * 9 + r;
                            if k >= kp {
                                break;
                            }
                            let y = py as i64 + (r / 3) as i64 - 1;
                            let xx = px as i64 + (r % 3) as i64 - 1;
                            let mut v = 0.0;
                            if g < cin && y >= 0 && y < n as i64 && xx >= 0 && xx < n as i64 {
                                v = x[b * sb + g * sc + y as usize * n + xx as usize];
                            }
                            col[k * m + mm] = v;
                        }
                    }
                }
                Op::Gemm {
                    trans_a,
                    m: gm,
                    n: gn,
                    k,
                    a,
                    b,
                    c,
                    ..
                } => {
                    let av = bufs[&a.0].clone();
                    let bv = bufs[&b.0].clone();
                    let cv = bufs.get_mut(&c.0).unwrap();
                    for j in 0..gn {
                        for i in 0..gm {
                            let mut acc = 0f64;
                            for l in 0..k {
                                let ae = if trans_a {
                                    av[i * a.1 + l]
                                } else {
                                    av[l * a.1 + i]
                                };
                                acc += f64::from(ae) * f64::from(bv[b.1 + j * b.2 + l]);
                            }
                            cv[c.1 + j * c.2 + i] = acc as f32;
                        }
                    }
                }
                Op::BiasAct { bias, res, out, c } => {
                    let acc = bufs[&Buf::Acc].clone();
                    let bv = bufs[&bias].clone();
                    let rv = res.map(|r| bufs[&r].clone());
                    let o = bufs.get_mut(&out).unwrap();
                    for i in 0..c * m {
                        let mut v = acc[i] + bv[i / m];
                        if let Some(r) = &rv {
                            v += r[i];
                        }
                        o[i] = v.max(0.0);
                    }
                }
                Op::HeadGather { c0, cn } => {
                    let acc = bufs[&Buf::Acc].clone();
                    let hb = bufs[&Buf::HeadB].clone();
                    let feat = bufs.get_mut(&Buf::Feat).unwrap();
                    let per = cn * area;
                    for i in 0..rows * per {
                        let (b, r) = (i / per, i % per);
                        let (c, p) = (r / area, r % area);
                        feat[i] = (acc[(c0 + c) * m + b * area + p] + hb[c0 + c]).max(0.0);
                    }
                }
                Op::BiasRows {
                    y,
                    bias,
                    n_out,
                    act,
                } => {
                    let bv = bufs[&bias].clone();
                    let yv = bufs.get_mut(&y.0).unwrap();
                    for i in 0..rows * n_out {
                        let mut v = yv[y.1 + i] + bv[i % n_out];
                        if act == 1 {
                            v = v.max(0.0);
                        }
                        if act == 2 {
                            v = v.tanh();
                        }
                        yv[y.1 + i] = v;
                    }
                }
            }
        }
        bufs.remove(&Buf::Out).unwrap()
    }

    /// The GPU's forward pass, emulated on the CPU, agrees with the CPU backend on real
    /// models (one of each head kind), with a batch padded to its bucket.
    #[test]
    fn emulated_forward_pass_matches_the_cpu_backend() {
        let base = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/pcn/models");
        let mut checked = 0;
        for name in ["go_W-max", "gomoku_AZ"] {
            let dir = format!("{base}/{name}");
            if !std::path::Path::new(&dir).is_dir() {
                println!("NOTICE: {dir} absent: emulation test skipped for it");
                continue;
            }
            let model = Model::load(&dir).unwrap();
            let folded = Folded::new(&model).unwrap();
            let hidden = match &folded.heads {
                Heads::AlphaZero { fc1, .. } => fc1.n_out,
                Heads::Pcn { .. } => 0,
            };
            let plan = Plan::new(&model.info, folded.blocks.len(), folded.filters, hidden);
            let w = host_weights(&folded, &model, &plan).unwrap();
            w.check(&plan).unwrap();
            let rows = 3;
            let bucket = bucket_for(rows);
            assert_eq!(bucket, 4);
            let len = model.info.input_len();
            let mut rng = crate::util::Rng::new(11);
            let input: Vec<f32> = (0..rows * len)
                .map(|_| if rng.below(10) < 3 { 1.0 } else { 0.0 })
                .collect();
            let out = emulate(&plan, &w, &input, bucket, None, false);
            let cpu = crate::nn::cpu::CpuBackend::new(&model, 1).unwrap();
            let mut want = NetOutput::default();
            cpu.evaluate(&input, rows, &mut want).unwrap();
            let (_, off1, off2) = plan.out_offsets(bucket);
            let a = plan.actions;
            let diff = |got: &[f32], want: &[f32]| {
                assert_eq!(got.len(), want.len());
                got.iter()
                    .zip(want)
                    .map(|(x, y)| (x - y).abs())
                    .fold(
                        0f32,
                        |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
                    )
            };
            let dp = diff(&out[..rows * a], &want.policy);
            assert!(dp < 1e-3, "{name}: policy differs by {dp}");
            match model.info.kind {
                NetKind::AlphaZero => {
                    let dv = diff(&out[off1..off1 + rows], &want.value);
                    assert!(dv < 1e-4, "{name}: value differs by {dv}");
                }
                NetKind::Pcn { bins } => {
                    let db = diff(&out[off1..off1 + rows * bins], &want.black_v);
                    let dw = diff(&out[off2..off2 + rows * bins], &want.white_v);
                    assert!(db < 1e-3 && dw < 1e-3, "{name}: heads differ by {db} {dw}");
                }
            }
            checked += 1;
        }
        println!("emulated {checked} models");
    }
    /// The implicit-GEMM kernels of [`super::super::mma`] run on the CPU: every loop over
    /// threads, warps, lanes and fragment registers as the kernels run them, with the
    /// kernels' own index formulas (the shared functions), shared memory as arrays that
    /// start as NaN (a read of what no thread wrote shows in the outputs), and the MMA as
    /// the hardware's fragment tables say ([`mma::hw`]).
    mod mma_emu {
        use crate::nn::cuda::mma::{self, hw, Tiling, THREADS, WARPS};

        /// `x` rounded to the nearest fp16 (ties to even), when `round`.
        pub fn r16(x: f32, round: bool) -> f32 {
            if !round || !x.is_finite() {
                return x;
            }
            let a = x.abs();
            if a >= 65520.0 {
                return f32::INFINITY.copysign(x);
            }
            if a < 6.103_515_6e-5 {
                // Subnormal fp16: multiples of 2^-24.
                let q = 5.960_464_5e-8f32;
                return (x / q).round_ties_even() * q;
            }
            let b = x.to_bits();
            let lsb = (b >> 13) & 1;
            f32::from_bits((b + 0x0fff + lsb) & !0x1fff)
        }

        fn i(x: usize) -> i32 {
            x as i32
        }

        /// Accumulators of one block: `[warp][tile][n tile]`, each 32 lanes × 4.
        type Acc = Vec<[[f32; 4]; 32]>;

        fn acc_idx(t: &Tiling, warp: usize, tt: usize, nt: usize) -> usize {
            (warp * t.tpw + tt) * (t.fp / 8) + nt
        }

        /// `w_fetch`: (shared offset, 8 weights) of every thread's chunks of `tap`.
        fn w_fetch(t: &Tiling, cin: usize, gw: &[f32], tap: usize) -> Vec<(usize, Vec<f32>)> {
            let (fp, chunks) = (t.fp, t.fp * cin / 8);
            let mut v = Vec::new();
            for thread in 0..THREADS {
                for c in 0..chunks.div_ceil(THREADS) {
                    let j = thread + c * THREADS;
                    if j < chunks {
                        let (n, kc) = (j / (cin / 8), j % (cin / 8));
                        let src = mma::w_off(i(tap), i(n), i(kc * 8), i(fp), i(cin)) as usize;
                        let dst = mma::smem_off(i(n), i(kc * 8), i(cin)) as usize;
                        v.push((dst, gw[src..src + 8].to_vec()));
                    }
                }
            }
            v
        }

        /// `conv_tile`: the warps' accumulators of a 3x3 convolution of the shared tile
        /// `sx` (`cin` channels), weights streamed tap by tap through `sw`.
        fn conv_tile(t: &Tiling, cin: usize, sx: &[f32], gw: &[f32], sw: &mut [f32]) -> Acc {
            let (fp, n, area, harea) = (t.fp, i(t.n), i(t.area()), i(t.harea()));
            let rows = i(t.rows());
            let mut acc: Acc = vec![[[0f32; 4]; 32]; WARPS * t.tpw * (fp / 8)];
            let store = |sw: &mut [f32], base: usize, pre: Vec<(usize, Vec<f32>)>| {
                for (dst, v) in pre {
                    sw[base + dst..base + dst + 8].copy_from_slice(&v);
                }
            };
            store(sw, 0, w_fetch(t, cin, gw, 0));
            for tap in 0..9 {
                let swt = (tap & 1) * fp * cin;
                let pre = (tap + 1 < 9).then(|| w_fetch(t, cin, gw, tap + 1));
                for warp in 0..WARPS {
                    let mut pix = vec![[[0i32; 4]; 32]; t.tpw];
                    for (tt, pt) in pix.iter_mut().enumerate() {
                        for lane in 0..32 {
                            for r in 0..4 {
                                let mut row = mma::tile_row(i(warp), i(tt), i(WARPS))
                                    + mma::frag_a_row(lane, 2 * r);
                                if row > rows - 1 {
                                    row = rows - 1;
                                }
                                pt[lane as usize][r as usize] =
                                    (row / area) * harea + mma::halo_pixel(row % area, i(tap), n);
                            }
                        }
                    }
                    for ks in 0..cin / 16 {
                        let mut a = vec![[[0f32; 8]; 32]; t.tpw];
                        for tt in 0..t.tpw {
                            for lane in 0..32 {
                                for r in 0..4 {
                                    let k = i(ks * 16) + mma::frag_a_col(lane, 2 * r);
                                    let p = pix[tt][lane as usize][r as usize];
                                    let off = mma::smem_off(p, k, i(cin)) as usize;
                                    a[tt][lane as usize][2 * r as usize] = sx[off];
                                    a[tt][lane as usize][2 * r as usize + 1] = sx[off + 1];
                                }
                            }
                        }
                        for nt in 0..fp / 8 {
                            let mut b = [[0f32; 4]; 32];
                            for lane in 0..32 {
                                let nn = i(nt * 8) + mma::frag_b_n(lane, 0);
                                for (reg, e) in [(0usize, 0), (1, 2)] {
                                    let k = i(ks * 16) + mma::frag_b_k(lane, e);
                                    let off = swt + mma::smem_off(nn, k, i(cin)) as usize;
                                    b[lane as usize][2 * reg] = sw[off];
                                    b[lane as usize][2 * reg + 1] = sw[off + 1];
                                }
                            }
                            for tt in 0..t.tpw {
                                if mma::tile_row(i(warp), i(tt), i(WARPS)) < rows {
                                    let ai = acc_idx(t, warp, tt, nt);
                                    hw::mma(&a[tt], &b, &mut acc[ai]);
                                }
                            }
                        }
                    }
                }
                if let Some(pre) = pre {
                    store(sw, ((tap + 1) & 1) * fp * cin, pre);
                }
            }
            acc
        }

        /// Where `epilogue` writes: the block's shared middle tile, or global activations.
        enum Dst<'a> {
            Smem(&'a mut [f32]),
            Global(&'a mut [f32]),
        }

        /// `epilogue`: bias, the residual from `sres`, ReLU, fp16 store.
        #[allow(clippy::too_many_arguments)]
        fn epilogue(
            t: &Tiling,
            acc: &Acc,
            bias: &[f32],
            sres: Option<&[f32]>,
            mut dst: Dst<'_>,
            rows: usize,
            blk: usize,
            round: bool,
        ) {
            let (fp, n, area, harea) = (i(t.fp), i(t.n), i(t.area()), i(t.harea()));
            for warp in 0..WARPS {
                for tt in 0..t.tpw {
                    for nt in 0..t.fp / 8 {
                        let ac = &acc[acc_idx(t, warp, tt, nt)];
                        for lane in 0..32 {
                            for e in [0, 2] {
                                let row = mma::tile_row(i(warp), i(tt), i(WARPS))
                                    + mma::frag_c_row(lane, e);
                                if row >= i(t.rows()) {
                                    continue;
                                }
                                let col = i(nt * 8) + mma::frag_c_col(lane, e);
                                let (bb, p) = (row / area, row % area);
                                let pix = bb * harea + mma::halo_pixel(p, 4, n);
                                let mut v0 = ac[lane as usize][e as usize] + bias[col as usize];
                                let mut v1 =
                                    ac[lane as usize][e as usize + 1] + bias[col as usize + 1];
                                if let Some(r) = sres {
                                    let off = mma::smem_off(pix, col, fp) as usize;
                                    v0 += r[off];
                                    v1 += r[off + 1];
                                }
                                let v0 = r16(v0.max(0.0), round);
                                let v1 = r16(v1.max(0.0), round);
                                match &mut dst {
                                    Dst::Smem(s) => {
                                        let off = mma::smem_off(pix, col, fp) as usize;
                                        s[off] = v0;
                                        s[off + 1] = v1;
                                    }
                                    Dst::Global(o) => {
                                        let board = i(blk * t.bpb) + bb;
                                        if board < i(rows) {
                                            let off =
                                                mma::act_off(board, p, col, area, fp) as usize;
                                            o[off] = v0;
                                            o[off + 1] = v1;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        /// `mma_stem` over every block of a launch of `rows` boards.
        pub fn stem(
            t: &Tiling,
            input: &[f32],
            w: &[f32],
            bias: &[f32],
            out: &mut [f32],
            rows: usize,
            round: bool,
        ) {
            let (cs, n, area, harea) = (t.cs, i(t.n), i(t.area()), t.harea());
            for blk in 0..t.grid(rows) {
                let mut sx = vec![f32::NAN; t.tile(cs)];
                let mut sw = vec![f32::NAN; 2 * t.fp * cs];
                for j in 0..t.bpb * cs * harea {
                    let (bb, c, hp) = (j / (cs * harea), (j / harea) % cs, i(j % harea));
                    let board = blk * t.bpb + bb;
                    let mut v = 0.0;
                    if board < rows && c < t.planes && mma::halo_inside(hp, n) {
                        let p = mma::halo_to_p(hp, n);
                        v = input[mma::in_off(i(board), i(c), p, i(t.planes), area) as usize];
                    }
                    sx[mma::smem_off(i(bb * harea) + hp, i(c), i(cs)) as usize] = r16(v, round);
                }
                let acc = conv_tile(t, cs, &sx, w, &mut sw);
                epilogue(t, &acc, bias, None, Dst::Global(out), rows, blk, round);
            }
        }

        /// `mma_block` over every block of a launch of `rows` boards.
        pub fn block(
            t: &Tiling,
            x: &[f32],
            (w1, b1): (&[f32], &[f32]),
            (w2, b2): (&[f32], &[f32]),
            out: &mut [f32],
            rows: usize,
            round: bool,
        ) {
            let (fp, n, area, harea) = (t.fp, i(t.n), i(t.area()), t.harea());
            for blk in 0..t.grid(rows) {
                let mut sx = vec![f32::NAN; t.tile(fp)];
                let mut sw = vec![f32::NAN; 2 * fp * fp];
                // tile_load
                for j in 0..t.bpb * harea * (fp / 8) {
                    let (pix, kc) = (j / (fp / 8), j % (fp / 8));
                    let (bb, hp) = (pix / harea, i(pix % harea));
                    let board = blk * t.bpb + bb;
                    let dst = mma::smem_off(i(pix), i(kc * 8), i(fp)) as usize;
                    for q in 0..8 {
                        sx[dst + q] = 0.0;
                    }
                    if board < rows && mma::halo_inside(hp, n) {
                        let p = mma::halo_to_p(hp, n);
                        let src = mma::act_off(i(board), p, i(kc * 8), area, i(fp)) as usize;
                        sx[dst..dst + 8].copy_from_slice(&x[src..src + 8]);
                    }
                }
                // tile_zero
                let mut sh = vec![0f32; t.tile(fp)];
                let acc = conv_tile(t, fp, &sx, w1, &mut sw);
                epilogue(t, &acc, b1, None, Dst::Smem(&mut sh), rows, blk, round);
                let acc = conv_tile(t, fp, &sh, w2, &mut sw);
                epilogue(t, &acc, b2, Some(&sx), Dst::Global(out), rows, blk, round);
            }
        }

        /// `mma_heads`: one thread per pixel.
        pub fn heads(t: &Tiling, x: &[f32], hw: &[f32], hb: &[f32], feat: &mut [f32], rows: usize) {
            let (fp, area) = (t.fp, t.area());
            for idx in 0..rows * area {
                let (board, p) = (idx / area, idx % area);
                let mut s: Vec<f32> = hb[..t.hc].to_vec();
                let base = mma::act_off(i(board), i(p), 0, i(area), i(fp)) as usize;
                for kc in 0..fp / 8 {
                    for q in 0..4 {
                        let lo = x[base + kc * 8 + 2 * q];
                        let hi = x[base + kc * 8 + 2 * q + 1];
                        for (c, sc) in s.iter_mut().enumerate() {
                            *sc += lo * hw[c * fp + kc * 8 + 2 * q]
                                + hi * hw[c * fp + kc * 8 + 2 * q + 1];
                        }
                    }
                }
                for (c, sc) in s.iter().enumerate() {
                    let o = mma::feat_off(
                        i(rows),
                        i(board),
                        i(p),
                        i(c),
                        i(t.head_c0[c]),
                        i(t.head_cn[c]),
                        i(area),
                    );
                    feat[o as usize] = sc.max(0.0);
                }
            }
        }
    }

    /// Reads a tensor of a golden file as f32.
    fn golden_tensor(st: &safetensors::SafeTensors, name: &str) -> Option<Vec<f32>> {
        let t = st.tensor(name).ok()?;
        Some(
            t.data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    /// The implicit-GEMM kernels, emulated lane by lane (fragments, halo, swizzle, weight
    /// streaming, fused epilogues and heads), agree with the CPU backend on the golden
    /// inputs of every model: in f32 storage to 1e-3 (an index error gives differences of
    /// order one), and with fp16 storage within the fp16 check's bound, for the golden file's
    /// outputs too.
    #[test]
    fn emulated_mma_kernels_match_the_cpu_backend_on_every_golden_model() {
        let base = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/pcn/models");
        let Ok(dirs) = std::fs::read_dir(base) else {
            println!("NOTICE: {base} absent: MMA emulation test skipped");
            return;
        };
        let mut names: Vec<String> = dirs
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("golden.safetensors").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut checked = 0;
        for name in &names {
            let dir = format!("{base}/{name}");
            let model = Model::load(&dir).unwrap();
            let folded = Folded::new(&model).unwrap();
            let hidden = match &folded.heads {
                Heads::AlphaZero { fc1, .. } => fc1.n_out,
                Heads::Pcn { .. } => 0,
            };
            let plan = Plan::new(&model.info, folded.blocks.len(), folded.filters, hidden);
            let t = Tiling::new(&plan).unwrap();
            let w = mma_weights(&host_weights(&folded, &model, &plan).unwrap(), &plan, &t);
            let bytes = std::fs::read(format!("{dir}/golden.safetensors")).unwrap();
            let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
            let input = golden_tensor(&st, "input").unwrap();
            let len = model.info.input_len();
            // Up to 4 positions: for 9x9 (3 boards per block) a full block and a partial one.
            let rows = (input.len() / len).min(4);
            let input = &input[..rows * len];
            let cpu = crate::nn::cpu::CpuBackend::new(&model, 1).unwrap();
            let mut want = NetOutput::default();
            cpu.evaluate(input, rows, &mut want).unwrap();
            let golden_policy = golden_tensor(&st, "policy_logits").unwrap();
            let a = plan.actions;
            let diff = |got: &[f32], want: &[f32]| {
                assert_eq!(got.len(), want.len());
                got.iter()
                    .zip(want)
                    .map(|(x, y)| (x - y).abs())
                    .fold(
                        0f32,
                        |m, d| {
                            if d.is_nan() {
                                f32::INFINITY
                            } else {
                                m.max(d)
                            }
                        },
                    )
            };
            for round in [false, true] {
                let bucket = bucket_for(rows);
                let out = emulate(&plan, &w, input, bucket, Some(&t), round);
                let (_, off1, off2) = plan.out_offsets(bucket);
                let dp = diff(&out[..rows * a], &want.policy);
                let dg = diff(&out[..rows * a], &golden_policy[..rows * a]);
                let dv = match model.info.kind {
                    NetKind::AlphaZero => diff(&out[off1..off1 + rows], &want.value),
                    NetKind::Pcn { bins } => diff(&out[off1..off1 + rows * bins], &want.black_v)
                        .max(diff(&out[off2..off2 + rows * bins], &want.white_v)),
                };
                println!(
                    "mma emulation {name} (bpb {}, {} rows, fp16 {round}): policy {dp:.2e} \
                     (golden {dg:.2e}), value heads {dv:.2e}",
                    t.bpb, rows
                );
                let tol = if round { 0.5 } else { 1e-3 };
                assert!(
                    dp < tol && dv < tol && dg < tol,
                    "{name} fp16 {round}: {dp} {dv} {dg}"
                );
            }
            checked += 1;
        }
        assert_eq!(checked, names.len());
        println!("mma emulation: {checked} models");
    }
}
