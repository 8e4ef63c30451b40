//! Host-side planning of the GPU evaluation: batch buckets (one CUDA graph each), buffer
//! sizes and offsets, and how a large request is cut into launches. Pure arithmetic, so
//! that it is tested without a GPU.
//!
//! Layouts (all row-major): the trunk's activations are `[C][M]` with `M = batch · N²`
//! (pixel `m = b·N² + y·N + x`), so that a 3x3 convolution is one GEMM
//! `Y[Cout][M] = W[Cout][K] · col[K][M]` over the im2col matrix `col` (`K = Cin·9`, padded
//! to a multiple of 8 for the tensor cores), and a 1x1 head convolution is
//! `Y[Ch][M] = W[Ch][F] · X[F][M]`. Outputs go to one float buffer per launch, laid out as
//! [`Plan::out_offsets`] says, and come back in one copy.

use crate::nn::{NetInfo, NetKind};

/// The largest batch one launch (one graph) runs; larger requests are cut.
pub const MAX_BUCKET: usize = 4096;

/// Batch sizes that get a graph of their own: powers of two up to 32, then steps of about
/// 1.5× (a request is padded to the next one, so at most a third of a launch is padding
/// above 32, and about twenty graphs cover every batch size).
pub const BUCKETS: [usize; 20] = [
    1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
    MAX_BUCKET,
];

/// The bucket (graph batch size) that runs `batch` rows: the smallest bucket ≥ `batch`,
/// or [`MAX_BUCKET`] for larger batches (which are cut, see [`launches`]).
pub fn bucket_for(batch: usize) -> usize {
    BUCKETS
        .iter()
        .copied()
        .find(|&b| b >= batch)
        .unwrap_or(MAX_BUCKET)
}

/// How `batch` rows are run: `(first row, rows, bucket)` per launch, in order.
pub fn launches(batch: usize) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    let mut start = 0;
    while start < batch {
        let rows = (batch - start).min(MAX_BUCKET);
        v.push((start, rows, bucket_for(rows)));
        start += rows;
    }
    v
}

/// Numeric mode of the trunk.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// fp16 storage of activations and trunk weights, fp32 accumulation (tensor cores).
    F16,
    /// fp32 everywhere (strict fp32 GEMMs, no TF32): the reference mode.
    F32,
}

impl Precision {
    /// Bytes per stored activation.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F16 => 2,
            Precision::F32 => 4,
        }
    }

    /// The name used in backend names (`cuda-fp16`).
    pub fn name(self) -> &'static str {
        match self {
            Precision::F16 => "fp16",
            Precision::F32 => "fp32",
        }
    }
}

/// What a captured graph depends on: a graph replays fixed pointers and sizes, so it is
/// valid for one bucket of one lane's buffers (a buffer growth invalidates the lane's
/// graphs, see `generation`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GraphKey {
    /// The bucket (rows the graph runs).
    pub bucket: usize,
    /// The lane's buffer generation when the graph was captured.
    pub generation: u32,
}

impl GraphKey {
    /// The key of a launch of `rows` rows on buffers of `generation`.
    pub fn for_rows(rows: usize, generation: u32) -> GraphKey {
        GraphKey {
            bucket: bucket_for(rows),
            generation,
        }
    }
}

/// Round up to a multiple of 8 (fp16 tensor-core GEMMs want leading dimensions that are).
pub fn pad8(x: usize) -> usize {
    x.div_ceil(8) * 8
}

/// The shapes of one network, and the sizes derived from them.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Board side N.
    pub n: usize,
    /// Input planes P.
    pub planes: usize,
    /// Trunk width F.
    pub filters: usize,
    /// Residual blocks.
    pub blocks: usize,
    /// Policy outputs A.
    pub actions: usize,
    /// PCN bins per head (0 for AlphaZero).
    pub bins: usize,
    /// AlphaZero value hidden width (0 for PCN).
    pub hidden: usize,
    /// Whether the value head is AlphaZero's.
    pub alphazero: bool,
}

/// Element counts of one lane's device buffers for a given capacity (rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Input floats (`rows · P · N²`).
    pub input: usize,
    /// Each of the three activation buffers (stored type): `max(P, F) · M`.
    pub act: usize,
    /// im2col matrix (stored type): `max(Kstem, Ktrunk) · M`.
    pub col: usize,
    /// GEMM accumulator (f32): `max(F, head channels) · M`.
    pub acc: usize,
    /// Head features (f32): `rows · 2·N²`.
    pub feat: usize,
    /// AlphaZero hidden layer (f32): `rows · H`.
    pub hidden: usize,
    /// Outputs (f32): `rows · out_len`.
    pub out: usize,
}

impl Plan {
    /// The plan of a model with `info`, `blocks` residual blocks of `filters` channels and
    /// AlphaZero hidden width `hidden` (0 for PCN).
    pub fn new(info: &NetInfo, blocks: usize, filters: usize, hidden: usize) -> Plan {
        Plan {
            n: info.board_size,
            planes: info.planes,
            filters,
            blocks,
            actions: info.actions,
            bins: info.bins(),
            hidden,
            alphazero: info.kind == NetKind::AlphaZero,
        }
    }

    /// Board area N².
    pub fn area(&self) -> usize {
        self.n * self.n
    }

    /// Padded GEMM depth of the stem (`P·9` rounded up to 8).
    pub fn k_stem(&self) -> usize {
        pad8(self.planes * 9)
    }

    /// Padded GEMM depth of a trunk convolution (`F·9` rounded up to 8).
    pub fn k_trunk(&self) -> usize {
        pad8(self.filters * 9)
    }

    /// Channels of the heads' 1x1 convolutions, run as one GEMM: policy 2, then value 1
    /// (AlphaZero) or Black 2 and White 2 (PCN); padded to 8.
    pub fn head_channels(&self) -> usize {
        pad8(self.head_channels_used())
    }

    /// Head channels actually used (before padding).
    pub fn head_channels_used(&self) -> usize {
        if self.alphazero {
            3
        } else {
            6
        }
    }

    /// Output floats per position: policy, then the value (1) or the two PCN heads.
    pub fn out_len(&self) -> usize {
        self.actions + if self.alphazero { 1 } else { 2 * self.bins }
    }

    /// Offsets, within a launch's output buffer of `rows` rows, of the policy `[rows][A]`,
    /// the value `[rows]` (AlphaZero) or Black `[rows][bins]`, and White `[rows][bins]`
    /// (PCN; equal to the end of Black for AlphaZero).
    pub fn out_offsets(&self, rows: usize) -> (usize, usize, usize) {
        let policy_end = rows * self.actions;
        if self.alphazero {
            (0, policy_end, policy_end + rows)
        } else {
            (0, policy_end, policy_end + rows * self.bins)
        }
    }

    /// Buffer sizes for `rows` rows.
    pub fn sizes(&self, rows: usize) -> Sizes {
        let m = rows * self.area();
        Sizes {
            input: rows * self.planes * self.area(),
            act: self.planes.max(self.filters) * m,
            col: self.k_stem().max(self.k_trunk()) * m,
            acc: self.filters.max(self.head_channels()) * m,
            feat: rows * 2 * self.area(),
            hidden: rows * self.hidden.max(1),
            out: rows * self.out_len(),
        }
    }

    /// Device bytes of one lane for `rows` rows in `prec` (buffers only, weights apart).
    pub fn lane_bytes(&self, rows: usize, prec: Precision) -> usize {
        let s = self.sizes(rows);
        4 * (s.input + s.acc + s.feat + s.hidden + s.out) + prec.bytes() * (3 * s.act + s.col)
    }

    /// Multiply-adds per position in the trunk (for reports): `(P + 2B·F)·9·F·N²`.
    pub fn trunk_macs(&self) -> usize {
        (self.planes + 2 * self.blocks * self.filters) * 9 * self.filters * self.area()
    }
}

/// A buffer of the forward pass: a lane's scratch, or a weight of the network.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Buf {
    /// The input rows (f32, NCHW per row).
    Input,
    /// The input in the stored type.
    X0,
    /// The trunk (stored type, `[F][M]`).
    A,
    /// A block's middle activation (stored type).
    H,
    /// The im2col matrix (stored type, `[Kp][M]`).
    Col,
    /// GEMM results (f32).
    Acc,
    /// A head's flattened features (f32, `[rows][cn·area]`).
    Feat,
    /// The AlphaZero value's hidden layer (f32).
    Hidden,
    /// The outputs (f32, see [`Plan::out_offsets`]).
    Out,
    /// Trunk convolution `i`'s weights (stored type, `[F][Kp]`): 0 the stem, then conv1 and
    /// conv2 of each block.
    ConvW(usize),
    /// Trunk convolution `i`'s bias (f32).
    ConvB(usize),
    /// The stacked 1x1 head convolutions (stored type, `[head_channels][F]`).
    HeadW,
    /// Their biases (f32).
    HeadB,
    /// Fully connected layer `i` (f32 `[out][in]`): policy, then AlphaZero fc1, fc2 or PCN
    /// Black, White.
    FcW(usize),
    /// Its bias (f32).
    FcB(usize),
}

/// One step of the forward pass (the GPU launches it; the tests emulate it on the CPU).
/// Element offsets are in elements of the buffer's type.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `dst[i] = src[i]` (f32 to the stored type), `i < n`.
    ToAct {
        /// f32 source.
        src: Buf,
        /// Stored-type destination.
        dst: Buf,
        /// Elements.
        n: usize,
    },
    /// The im2col matrix of a 3x3 convolution (kernel `im2col3x3`).
    Im2col {
        /// Source activations.
        src: Buf,
        /// Input channels.
        cin: usize,
        /// Padded depth.
        kp: usize,
        /// Stride between rows (positions) in `src`.
        sb: usize,
        /// Stride between channels in `src`.
        sc: usize,
    },
    /// Column-major `C (m×n, ld ldc) = op(A) · B` in f32 accumulation; `op(A)` is `A`
    /// (`m×k`, ld `lda`) or, with `trans_a`, the transpose of `A` stored `k×m`. `half`:
    /// `A` and `B` are in the stored type, else f32. `C` is always f32.
    Gemm {
        /// Transpose A.
        trans_a: bool,
        /// Dimensions.
        m: usize,
        /// Dimensions.
        n: usize,
        /// Dimensions.
        k: usize,
        /// A and its leading dimension.
        a: (Buf, usize),
        /// B (with element offset) and its leading dimension.
        b: (Buf, usize, usize),
        /// C (with element offset) and its leading dimension.
        c: (Buf, usize, usize),
        /// A and B in the stored type (else f32).
        stored: bool,
    },
    /// `out[c][m] = relu(acc[c][m] + bias[c] (+ res[c][m]))` into the stored type.
    BiasAct {
        /// Bias.
        bias: Buf,
        /// Residual (may equal `out`).
        res: Option<Buf>,
        /// Destination.
        out: Buf,
        /// Channels.
        c: usize,
    },
    /// A head's features: `feat[b][c·area + p] = relu(acc[c0 + c][b·area + p] + bias[c0 + c])`.
    HeadGather {
        /// First channel.
        c0: usize,
        /// Channels.
        cn: usize,
    },
    /// The implicit-GEMM stem (kernel `mma_stem`, [`super::mma`]): `A` (NHWC fp16) =
    /// ReLU(conv3x3(`Input`) + bias), weights `ConvW(0)` in the `[9][FP][CS]` layout.
    MmaStem,
    /// One fused residual block (kernel `mma_block`): `dst` = ReLU(`src` + conv2(ReLU(
    /// conv1(`src`)))) with biases, weights `ConvW(1 + 2·blk)` and `ConvW(2 + 2·blk)`.
    MmaBlock {
        /// Block index.
        blk: usize,
        /// Input activations (NHWC).
        src: Buf,
        /// Output activations (NHWC, distinct from `src`).
        dst: Buf,
    },
    /// The fused heads (kernel `mma_heads`): every head's 1x1 convolution, bias and ReLU
    /// from `src` into `Feat`, head after head (`mma::feat_off`).
    MmaHeads {
        /// The trunk's output (NHWC).
        src: Buf,
    },
    /// `y[r][o] = act(y[r][o] + bias[o])` (act 0 none, 1 ReLU, 2 tanh).
    BiasRows {
        /// The rows (buffer, element offset).
        y: (Buf, usize),
        /// Bias.
        bias: Buf,
        /// Columns.
        n_out: usize,
        /// Activation.
        act: i32,
    },
}

impl Plan {
    /// Buffer sizes of the implicit-GEMM path ([`Plan::forward_ops_mma`]) for `rows` rows
    /// with activations of `fp` channels (NHWC): no im2col matrix, no GEMM accumulator, no
    /// separate fp16 input; the features hold every head at once.
    pub fn sizes_mma(&self, rows: usize, fp: usize) -> Sizes {
        let m = rows * self.area();
        Sizes {
            input: rows * self.planes * self.area(),
            act: fp * m,
            col: 0,
            acc: 0,
            feat: self.head_channels_used() * m,
            hidden: rows * self.hidden.max(1),
            out: rows * self.out_len(),
        }
    }

    /// The forward pass of the implicit-GEMM path: the stem, one fused kernel per residual
    /// block (ping-pong between `A` and `H`), the fused heads, then the fully connected
    /// layers as on the im2col path (each reading its head's slice of `Feat`).
    pub fn forward_ops_mma(&self, rows: usize) -> Vec<Op> {
        let area = self.area();
        let mut ops = vec![Op::MmaStem];
        let (mut src, mut dst) = (Buf::A, Buf::H);
        for blk in 0..self.blocks {
            ops.push(Op::MmaBlock { blk, src, dst });
            std::mem::swap(&mut src, &mut dst);
        }
        ops.push(Op::MmaHeads { src });
        let (_, off1, off2) = self.out_offsets(rows);
        // Head h's features start at rows·c0·area (c0 its first channel, mma::feat_off).
        let fc = |ops: &mut Vec<Op>,
                  i: usize,
                  n_in: usize,
                  n_out: usize,
                  x: (Buf, usize),
                  y: (Buf, usize),
                  act: i32| {
            ops.push(Op::Gemm {
                trans_a: true,
                m: n_out,
                n: rows,
                k: n_in,
                a: (Buf::FcW(i), n_in),
                b: (x.0, x.1, n_in),
                c: (y.0, y.1, n_out),
                stored: false,
            });
            ops.push(Op::BiasRows {
                y,
                bias: Buf::FcB(i),
                n_out,
                act,
            });
        };
        fc(
            &mut ops,
            0,
            2 * area,
            self.actions,
            (Buf::Feat, 0),
            (Buf::Out, 0),
            0,
        );
        if self.alphazero {
            let x = (Buf::Feat, rows * 2 * area);
            fc(&mut ops, 1, area, self.hidden, x, (Buf::Hidden, 0), 1);
            fc(
                &mut ops,
                2,
                self.hidden,
                1,
                (Buf::Hidden, 0),
                (Buf::Out, off1),
                2,
            );
        } else {
            let xb = (Buf::Feat, rows * 2 * area);
            let xw = (Buf::Feat, rows * 4 * area);
            fc(&mut ops, 1, 2 * area, self.bins, xb, (Buf::Out, off1), 0);
            fc(&mut ops, 2, 2 * area, self.bins, xw, (Buf::Out, off2), 0);
        }
        ops
    }

    /// The forward pass of `rows` rows (a bucket) as a list of steps: input conversion, the
    /// trunk (im2col, GEMM, bias/residual/ReLU per convolution), the stacked head
    /// convolutions as one GEMM, then each head's gather, fully connected GEMM and bias.
    /// Buffers are those of [`Plan::sizes`] for at least `rows` rows.
    pub fn forward_ops(&self, rows: usize) -> Vec<Op> {
        let area = self.area();
        let m = rows * area;
        let f = self.filters;
        let mut ops = vec![Op::ToAct {
            src: Buf::Input,
            dst: Buf::X0,
            n: rows * self.planes * area,
        }];
        let conv = |ops: &mut Vec<Op>,
                    i: usize,
                    src: Buf,
                    cin: usize,
                    kp: usize,
                    sb: usize,
                    sc: usize,
                    out: Buf,
                    res: Option<Buf>| {
            ops.push(Op::Im2col {
                src,
                cin,
                kp,
                sb,
                sc,
            });
            // acc (col-major M×F, i.e. [F][M]) = col^T (M×Kp) · W^T (Kp×F).
            ops.push(Op::Gemm {
                trans_a: false,
                m,
                n: f,
                k: kp,
                a: (Buf::Col, m),
                b: (Buf::ConvW(i), 0, kp),
                c: (Buf::Acc, 0, m),
                stored: true,
            });
            ops.push(Op::BiasAct {
                bias: Buf::ConvB(i),
                res,
                out,
                c: f,
            });
        };
        conv(
            &mut ops,
            0,
            Buf::X0,
            self.planes,
            self.k_stem(),
            self.planes * area,
            area,
            Buf::A,
            None,
        );
        for blk in 0..self.blocks {
            conv(
                &mut ops,
                1 + 2 * blk,
                Buf::A,
                f,
                self.k_trunk(),
                area,
                m,
                Buf::H,
                None,
            );
            conv(
                &mut ops,
                2 + 2 * blk,
                Buf::H,
                f,
                self.k_trunk(),
                area,
                m,
                Buf::A,
                Some(Buf::A),
            );
        }
        let hc = self.head_channels();
        ops.push(Op::Gemm {
            trans_a: false,
            m,
            n: hc,
            k: f,
            a: (Buf::A, m),
            b: (Buf::HeadW, 0, f),
            c: (Buf::Acc, 0, m),
            stored: true,
        });
        let (_, off1, off2) = self.out_offsets(rows);
        // y[rows][out] = x[rows][in] · W^T: col-major y (out×rows) = (W stored in×out)^T · x.
        let fc = |ops: &mut Vec<Op>,
                  i: usize,
                  n_in: usize,
                  n_out: usize,
                  x: Buf,
                  y: (Buf, usize),
                  act: i32| {
            ops.push(Op::Gemm {
                trans_a: true,
                m: n_out,
                n: rows,
                k: n_in,
                a: (Buf::FcW(i), n_in),
                b: (x, 0, n_in),
                c: (y.0, y.1, n_out),
                stored: false,
            });
            ops.push(Op::BiasRows {
                y,
                bias: Buf::FcB(i),
                n_out,
                act,
            });
        };
        ops.push(Op::HeadGather { c0: 0, cn: 2 });
        fc(
            &mut ops,
            0,
            2 * area,
            self.actions,
            Buf::Feat,
            (Buf::Out, 0),
            0,
        );
        if self.alphazero {
            ops.push(Op::HeadGather { c0: 2, cn: 1 });
            fc(
                &mut ops,
                1,
                area,
                self.hidden,
                Buf::Feat,
                (Buf::Hidden, 0),
                1,
            );
            fc(
                &mut ops,
                2,
                self.hidden,
                1,
                Buf::Hidden,
                (Buf::Out, off1),
                2,
            );
        } else {
            ops.push(Op::HeadGather { c0: 2, cn: 2 });
            fc(
                &mut ops,
                1,
                2 * area,
                self.bins,
                Buf::Feat,
                (Buf::Out, off1),
                0,
            );
            ops.push(Op::HeadGather { c0: 4, cn: 2 });
            fc(
                &mut ops,
                2,
                2 * area,
                self.bins,
                Buf::Feat,
                (Buf::Out, off2),
                0,
            );
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::eval::RandomEvaluator;
    use crate::nn::{NetGame, NetKind};

    #[test]
    fn buckets_cover_every_batch() {
        assert!(BUCKETS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(*BUCKETS.last().unwrap(), MAX_BUCKET);
        for b in 1..=MAX_BUCKET {
            let k = bucket_for(b);
            assert!(k >= b, "{b} -> {k}");
            // Never more than a third padding above 32 rows (half below).
            if b > 32 {
                assert!(k * 2 <= b * 3, "{b} -> {k}");
            } else {
                assert!(k < 2 * b, "{b} -> {k}");
            }
        }
        assert_eq!(bucket_for(0), 1);
        assert_eq!(bucket_for(257), 384);
        assert_eq!(bucket_for(10_000), MAX_BUCKET);
    }

    #[test]
    fn launches_cut_large_batches() {
        assert_eq!(launches(0), vec![]);
        assert_eq!(launches(5), vec![(0, 5, 8)]);
        assert_eq!(
            launches(2 * MAX_BUCKET + 100),
            vec![
                (0, MAX_BUCKET, MAX_BUCKET),
                (MAX_BUCKET, MAX_BUCKET, MAX_BUCKET),
                (2 * MAX_BUCKET, 100, 128)
            ]
        );
        let total: usize = launches(12_345).iter().map(|l| l.1).sum();
        assert_eq!(total, 12_345);
    }

    #[test]
    fn graph_keys_share_a_bucket() {
        assert_eq!(GraphKey::for_rows(200, 1), GraphKey::for_rows(256, 1));
        assert_ne!(GraphKey::for_rows(256, 1), GraphKey::for_rows(257, 1));
        assert_ne!(GraphKey::for_rows(256, 1), GraphKey::for_rows(256, 2));
        let keys: std::collections::HashSet<GraphKey> =
            (1..=MAX_BUCKET).map(|b| GraphKey::for_rows(b, 0)).collect();
        assert_eq!(keys.len(), BUCKETS.len());
    }

    #[test]
    fn sizes_of_the_paper_networks() {
        // 9x9 Killall-Go PCN: 18 planes, 82 actions, 500 bins, 5 blocks of 64.
        let go = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::Pcn { bins: 500 });
        let p = Plan::new(&go, 5, 64, 0);
        assert_eq!(p.k_stem(), 168); // 162 padded
        assert_eq!(p.k_trunk(), 576);
        assert_eq!(p.head_channels(), 8);
        assert_eq!(p.out_len(), 82 + 1000);
        assert_eq!(p.out_offsets(10), (0, 820, 820 + 5000));
        let s = p.sizes(256);
        let m = 256 * 81;
        assert_eq!(s.input, 256 * 18 * 81);
        assert_eq!(s.act, 64 * m);
        assert_eq!(s.col, 576 * m);
        assert_eq!(s.acc, 64 * m);
        assert_eq!(s.out, 256 * 1082);
        // 15x15 Gomoku AlphaZero: 4 planes, 225 actions, hidden 256.
        let gm = RandomEvaluator::info_for(NetGame::Gomoku, NetKind::AlphaZero);
        let q = Plan::new(&gm, 5, 64, 256);
        assert_eq!(q.k_stem(), 40); // 36 padded
        assert_eq!(q.head_channels_used(), 3);
        assert_eq!(q.out_len(), 226);
        assert_eq!(q.out_offsets(4), (0, 900, 904));
        assert_eq!(q.sizes(2).hidden, 512);
        // A lane at the largest bucket fits comfortably in an 80 GB GPU (about 1.4 GB).
        let bytes = q.lane_bytes(MAX_BUCKET, Precision::F16);
        assert!(bytes < 2 << 30, "{bytes}");
        assert!(q.lane_bytes(8, Precision::F32) > q.lane_bytes(8, Precision::F16));
        assert_eq!(q.trunk_macs(), (4 + 640) * 9 * 64 * 225);
    }
}
