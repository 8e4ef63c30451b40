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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::cuda::plan::{bucket_for, Buf, Op};
    use crate::nn::{Evaluator, NetOutput};
    use std::collections::HashMap;

    /// Runs `plan.forward_ops(rows)` on the CPU with the kernels' index arithmetic (the
    /// loops run over the flat index `i` as the kernels' threads do, hence the lint).
    #[allow(clippy::needless_range_loop)]
    fn emulate(plan: &Plan, w: &HostWeights, input: &[f32], rows: usize) -> Vec<f32> {
        let s = plan.sizes(rows);
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
        for op in plan.forward_ops(rows) {
            match op {
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
                                acc += f64::from(ae) * f64::from(bv[j * b.1 + l]);
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
            let out = emulate(&plan, &w, &input, bucket);
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
}
