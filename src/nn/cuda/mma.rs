//! The implicit-GEMM path of the trunk (issue 59): 3x3 convolutions on the tensor cores
//! (`mma.sync.aligned.m16n8k16`, fp16 in, fp32 accumulate) with whole boards in shared
//! memory, no im2col matrix.
//!
//! Design:
//! - **Layout**: activations are NHWC fp16, `[rows][N²][FP]` with the channel count padded
//!   to a multiple of 16 ([`Tiling::fp`]), so that one 16-channel step of the GEMM depth is
//!   one `k16` of the MMA. The stem reads the f32 NCHW input itself (no conversion kernel).
//! - **Tiling**: a thread block owns [`Tiling::bpb`] whole boards. Their pixels, board after
//!   board, are the GEMM's M dimension (so a 9x9 board's 81 rows do not each waste a tile:
//!   three boards make 243 rows, sixteen m16 tiles of which 13 are padding rows); each of
//!   the 8 warps owns [`Tiling::tpw`] m16 tiles (interleaved: tile `t·8 + warp`) and all
//!   output channels (8 n8 tiles for 64), so one A fragment feeds 8 MMAs.
//! - **Shared memory**: the boards with a one-pixel zero halo, `(N+2)²` pixels each, FP
//!   halves per pixel, the 16-byte chunks of a pixel rotated by the pixel index
//!   ([`smem_off`]) so that the 8 rows of a fragment load hit different banks. The GEMM's K
//!   is walked tap by tap (9 taps × FP/16 steps): tap `t` of output pixel `p` reads halo
//!   pixel [`halo_pixel`]`(p, t)`, so the convolution is a shifted read of the tile.
//! - **Weights streamed per tap**: global `[9][Cout][Cin]` ([`w_off`]), two shared buffers
//!   of one tap each; tap `t+1` is loaded into registers while tap `t` is computed, then
//!   stored into the other buffer.
//! - **Fusion**: bias, residual and ReLU are applied to the fp32 accumulators before the
//!   fp16 store. A residual block is one kernel: conv1's output (fp16, like the im2col
//!   path's H) goes to a second shared tile with its own zero halo, conv2 reads it there and
//!   adds the block's input from the first tile. The three head 1x1 convolutions, their
//!   bias, ReLU and the gather into PyTorch's flattened order are one kernel.
//!
//! **One source of truth for the index arithmetic**: every index formula the kernels use
//! (fragment lane → row/column, halo, shared-memory swizzle, global layouts) is written once
//! below through [`shared_fns!`], which makes it both a Rust function (used by the CPU
//! emulation in `host.rs`'s tests) and, stringified, a `__device__` function of the CUDA
//! source; the tile sizes are generated into the source from [`Tiling`]. The emulation's
//! MMA itself follows the PTX ISA's fragment tables written independently ([`hw`]), so a
//! wrong formula here makes the emulated forward pass disagree with the CPU backend.
//!
//! Rule for the shared formulas: integer arithmetic, shifts and bit operations only (their
//! precedences agree in Rust and C++), comparisons always in parentheses and combined with
//! `&&` (C++ binds comparisons tighter than `&`, Rust looser), no casts, no negative values.

use super::plan::Plan;

/// Threads per block of the MMA kernels (8 warps).
pub const THREADS: usize = 256;
/// Warps per block.
pub const WARPS: usize = THREADS / 32;
/// The most m16 tiles one warp owns (its fp32 accumulators: `tpw · FP/8 · 4` registers).
pub const MAX_TPW: usize = 4;
/// Shared memory one block may use, in bytes: two blocks fit on an sm_90 multiprocessor
/// (228 KB) and one on an sm_80 (164 KB).
pub const SMEM_BUDGET: usize = 113 * 1024;
/// Kernel names in the generated source.
pub const KERNEL_NAMES: [&str; 3] = ["mma_stem", "mma_block", "mma_heads"];

/// Defines each formula as a Rust function and as the C++ text of the same function.
macro_rules! shared_fns {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident),*) -> $ret:ident { $body:expr } )*) => {
        $(
            $(#[$doc])*
            #[inline]
            #[allow(clippy::too_many_arguments, clippy::precedence)]
            pub fn $name($($arg: i32),*) -> $ret { $body }
        )*
        /// The C++ definitions of the shared formulas (the same token text as the Rust).
        pub fn shared_source() -> String {
            let mut s = String::new();
            $(
                let args: &[&str] = &[$(stringify!($arg)),*];
                let args: Vec<String> = args.iter().map(|a| format!("int {a}")).collect();
                let ret = match stringify!($ret) {
                    "i32" => "int",
                    other => other,
                };
                s.push_str(&format!(
                    "__device__ __forceinline__ {} {}({}) {{ return {}; }}\n",
                    ret,
                    stringify!($name),
                    args.join(", "),
                    stringify!($body)
                ));
            )*
            s
        }
    };
}

shared_fns! {
    /// Row (within the m16 tile) of element `e` (0..8, two per 32-bit register) of a lane's
    /// A fragment.
    fn frag_a_row(lane, e) -> i32 { (lane >> 2) + 8 * ((e >> 1) & 1) }
    /// Column (k within the k16 step) of A fragment element `e`.
    fn frag_a_col(lane, e) -> i32 { (lane & 3) * 2 + (e & 1) + 8 * (e >> 2) }
    /// Row k (within the k16 step) of B fragment element `e` (0..4).
    fn frag_b_k(lane, e) -> i32 { (lane & 3) * 2 + (e & 1) + 8 * (e >> 1) }
    /// Column n (within the n8 tile) of B fragment element `e`.
    fn frag_b_n(lane, e) -> i32 { (lane >> 2) + 0 * e }
    /// Row of accumulator element `e` (0..4).
    fn frag_c_row(lane, e) -> i32 { (lane >> 2) + 8 * (e >> 1) }
    /// Column of accumulator element `e`.
    fn frag_c_col(lane, e) -> i32 { (lane & 3) * 2 + (e & 1) }
    /// First row (within the block's boards) of the warp's `t`-th m16 tile.
    fn tile_row(warp, t, warps) -> i32 { (t * warps + warp) * 16 }
    /// The halo pixel (index in the `(n+2)²` tile) that tap `tap` (ky·3 + kx) of output
    /// pixel `p` reads: input (y + ky − 1, x + kx − 1) shifted by the one-pixel halo.
    fn halo_pixel(p, tap, n) -> i32 { (p / n + tap / 3) * (n + 2) + p % n + tap % 3 }
    /// Whether halo pixel `hp` is on the board (else it is the zero border).
    fn halo_inside(hp, n) -> bool {
        (hp / (n + 2) >= 1) && (hp / (n + 2) <= n) && (hp % (n + 2) >= 1) && (hp % (n + 2) <= n)
    }
    /// The board pixel of an inside halo pixel.
    fn halo_to_p(hp, n) -> i32 { (hp / (n + 2) - 1) * n + hp % (n + 2) - 1 }
    /// Element offset of channel `k` of tile pixel `pix` (over all of the block's boards)
    /// in a shared tile of `cp` channels: 8-channel chunks rotated by the pixel, so that
    /// consecutive pixels' equal chunks fall in different banks.
    fn smem_off(pix, k, cp) -> i32 { pix * cp + ((k / 8 + pix) % (cp / 8)) * 8 + k % 8 }
    /// Element offset of weight (tap, output n, input k) in a `[9][cout][cin]` tensor.
    fn w_off(tap, n, k, cout, cin) -> i32 { (tap * cout + n) * cin + k }
    /// Element offset of (board, pixel, channel) in NHWC activations of `cp` channels.
    fn act_off(board, p, c, area, cp) -> i32 { (board * area + p) * cp + c }
    /// Element offset of (board, plane, pixel) in the NCHW f32 input.
    fn in_off(board, c, p, planes, area) -> i32 { (board * planes + c) * area + p }
    /// Element offset of head channel `c` (of the head starting at channel `c0` with `cn`
    /// channels) at (board, pixel) in the heads' features: each head `[rows][cn·area]`
    /// (PyTorch's flattening), head after head.
    fn feat_off(rows, board, p, c, c0, cn, area) -> i32 {
        rows * c0 * area + board * cn * area + (c - c0) * area + p
    }
}

/// Round up to a multiple of 16 (one k16 step of the MMA).
pub fn pad16(x: usize) -> usize {
    x.div_ceil(16) * 16
}

/// The tile sizes of one network (generated into the kernels' source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Board side N.
    pub n: usize,
    /// Input planes.
    pub planes: usize,
    /// Stem input channels padded to 16.
    pub cs: usize,
    /// Trunk channels padded to 16 (the activations' channel stride; conv output width).
    pub fp: usize,
    /// Boards per thread block.
    pub bpb: usize,
    /// m16 tiles per warp.
    pub tpw: usize,
    /// Head channels used (policy 2, then value 1 or Black 2 + White 2).
    pub hc: usize,
    /// First channel of each head channel's head (the feature layout, [`feat_off`]).
    pub head_c0: Vec<usize>,
    /// Channels of each head channel's head.
    pub head_cn: Vec<usize>,
}

impl Tiling {
    /// The tiling of `plan`: the boards per block that waste the fewest padding rows among
    /// those whose residual-block kernel fits [`SMEM_BUDGET`] (fewer boards on a tie, for
    /// small batches). `None` when not even one board fits (a wide trunk on a big board):
    /// the backend then uses the im2col path.
    pub fn new(plan: &Plan) -> Option<Tiling> {
        let mut best: Option<(Tiling, f64)> = None;
        for bpb in 1..=8 {
            let rows = bpb * plan.area();
            let tiles = rows.div_ceil(16);
            let tpw = tiles.div_ceil(WARPS);
            if tpw > MAX_TPW {
                break;
            }
            let (head_c0, head_cn): (Vec<usize>, Vec<usize>) = if plan.alphazero {
                (vec![0, 0, 2], vec![2, 2, 1])
            } else {
                (vec![0, 0, 2, 2, 4, 4], vec![2, 2, 2, 2, 2, 2])
            };
            let t = Tiling {
                n: plan.n,
                planes: plan.planes,
                cs: pad16(plan.planes),
                fp: pad16(plan.filters),
                bpb,
                tpw,
                hc: plan.head_channels_used(),
                head_c0,
                head_cn,
            };
            if t.smem_block() > SMEM_BUDGET || t.smem_stem() > SMEM_BUDGET {
                break;
            }
            let eff = rows as f64 / (WARPS * tpw * 16) as f64;
            if best.as_ref().is_none_or(|b| eff > b.1 + 1e-9) {
                best = Some((t, eff));
            }
        }
        best.map(|b| b.0)
    }

    /// Board area.
    pub fn area(&self) -> usize {
        self.n * self.n
    }

    /// Halo tile area `(N+2)²`.
    pub fn harea(&self) -> usize {
        (self.n + 2) * (self.n + 2)
    }

    /// GEMM rows of one block (its boards' pixels).
    pub fn rows(&self) -> usize {
        self.bpb * self.area()
    }

    /// Halves of one shared tile of `c` channels.
    pub fn tile(&self, c: usize) -> usize {
        self.bpb * self.harea() * c
    }

    /// Shared bytes of the stem kernel: its input tile and two weight buffers.
    pub fn smem_stem(&self) -> usize {
        2 * (self.tile(self.cs) + 2 * self.fp * self.cs)
    }

    /// Shared bytes of the residual-block kernel: input and middle tiles, two weight
    /// buffers.
    pub fn smem_block(&self) -> usize {
        2 * (2 * self.tile(self.fp) + 2 * self.fp * self.fp)
    }

    /// Blocks for `rows` boards.
    pub fn grid(&self, rows: usize) -> usize {
        rows.div_ceil(self.bpb).max(1)
    }

    /// The CUDA source of the three kernels for this tiling (no header; NVRTC alone).
    pub fn source(&self) -> String {
        let list = |v: &[usize]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = String::new();
        s.push_str("// Generated by pcn's src/nn/cuda/mma.rs (Tiling::source).\n");
        s.push_str(&format!(
            "#define N_ {}\n#define AREA {}\n#define HAREA {}\n#define PLANES {}\n#define CS {}\n\
             #define FP {}\n#define BPB {}\n#define ROWS {}\n#define WARPS {}\n#define THREADS {}\n\
             #define TPW {}\n#define HC {}\n",
            self.n,
            self.area(),
            self.harea(),
            self.planes,
            self.cs,
            self.fp,
            self.bpb,
            self.rows(),
            WARPS,
            THREADS,
            self.tpw,
            self.hc,
        ));
        s.push_str(&format!(
            "__device__ const int HEAD_C0[HC] = {{{}}};\n__device__ const int HEAD_CN[HC] = {{{}}};\n",
            list(&self.head_c0),
            list(&self.head_cn)
        ));
        s.push_str(&shared_source());
        s.push_str(BODY);
        s
    }
}

/// The hardware's fragment layouts of `mma.m16n8k16` with f16 inputs and f32 accumulators,
/// transcribed from the PTX ISA's figures ("Matrix Fragments for mma.m16n8k16 with
/// floating point type") independently of the kernels' formulas above: the CPU emulation's
/// MMA places each lane's registers with these, so a kernel formula that disagrees with
/// the hardware shows as a wrong result.
pub mod hw {
    /// (row, column) of element `e` (a0..a7) of lane `lane`'s A fragment (16×16, row-major).
    pub fn a(lane: usize, e: usize) -> (usize, usize) {
        let (group, tig) = (lane / 4, lane % 4);
        match e {
            0 | 1 => (group, tig * 2 + e),
            2 | 3 => (group + 8, tig * 2 + e - 2),
            4 | 5 => (group, tig * 2 + 8 + e - 4),
            6 | 7 => (group + 8, tig * 2 + 8 + e - 6),
            _ => unreachable!("A has 8 elements per lane"),
        }
    }

    /// (row k, column n) of element `e` (b0..b3) of the B fragment (16×8, "col").
    pub fn b(lane: usize, e: usize) -> (usize, usize) {
        let (group, tig) = (lane / 4, lane % 4);
        match e {
            0 | 1 => (tig * 2 + e, group),
            2 | 3 => (tig * 2 + 8 + e - 2, group),
            _ => unreachable!("B has 4 elements per lane"),
        }
    }

    /// (row, column) of element `e` (c0..c3) of the accumulator (16×8).
    pub fn c(lane: usize, e: usize) -> (usize, usize) {
        let (group, tig) = (lane / 4, lane % 4);
        match e {
            0 | 1 => (group, tig * 2 + e),
            2 | 3 => (group + 8, tig * 2 + e - 2),
            _ => unreachable!("C has 4 elements per lane"),
        }
    }

    /// One warp's `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`: `d = a·b + c` with
    /// each lane's registers (`a[lane][e]`, `b[lane][e]`, `c[lane][e]`), in f32.
    #[allow(clippy::needless_range_loop)]
    pub fn mma(a: &[[f32; 8]; 32], b: &[[f32; 4]; 32], c: &mut [[f32; 4]; 32]) {
        let mut am = [[0f32; 16]; 16];
        let mut bm = [[0f32; 8]; 16];
        for lane in 0..32 {
            for e in 0..8 {
                let (r, k) = self::a(lane, e);
                am[r][k] = a[lane][e];
            }
            for e in 0..4 {
                let (k, n) = self::b(lane, e);
                bm[k][n] = b[lane][e];
            }
        }
        for lane in 0..32 {
            for e in 0..4 {
                let (r, n) = self::c(lane, e);
                let mut s = c[lane][e];
                for k in 0..16 {
                    s += am[r][k] * bm[k][n];
                }
                c[lane][e] = s;
            }
        }
    }
}

/// The kernels (after the generated constants and shared formulas). Activations and
/// weights are fp16 bit patterns (`unsigned short`), converted with `cvt` so that no CUDA
/// header is needed.
const BODY: &str = r#"
typedef unsigned short half_t;

__device__ __forceinline__ float h2f(half_t v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
__device__ __forceinline__ half_t f2h(float f) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
    return (unsigned)f2h(lo) | ((unsigned)f2h(hi) << 16);
}
__device__ __forceinline__ float lo_half(unsigned v) { return h2f((half_t)(v & 0xffffu)); }
__device__ __forceinline__ float hi_half(unsigned v) { return h2f((half_t)(v >> 16)); }

// d = a * b + d on the tensor cores (one warp; fragments as frag_a_*, frag_b_*, frag_c_*).
__device__ __forceinline__ void mma16816(float* d, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 16-byte chunks of one tap's weights ([FP][CIN]) per thread, rounded up.
#define WCHUNKS(CIN) ((FP * CIN / 8 + THREADS - 1) / THREADS)

// Loads this thread's chunks of tap `tap` into registers (the next tap's weights are in
// flight while the current tap is computed).
template <int CIN>
__device__ __forceinline__ void w_fetch(const half_t* __restrict__ gw, int tap, uint4* pre) {
#pragma unroll
    for (int i = 0; i < WCHUNKS(CIN); ++i) {
        const int j = threadIdx.x + i * THREADS;
        if (j < FP * CIN / 8) {
            const int n = j / (CIN / 8);
            const int kc = j % (CIN / 8);
            pre[i] = *(const uint4*)(gw + w_off(tap, n, kc * 8, FP, CIN));
        }
    }
}

// Stores fetched chunks into a shared weight buffer ([FP][CIN], swizzled like a tile).
template <int CIN>
__device__ __forceinline__ void w_store(half_t* sw, const uint4* pre) {
#pragma unroll
    for (int i = 0; i < WCHUNKS(CIN); ++i) {
        const int j = threadIdx.x + i * THREADS;
        if (j < FP * CIN / 8) {
            const int n = j / (CIN / 8);
            const int kc = j % (CIN / 8);
            *(uint4*)(sw + smem_off(n, kc * 8, CIN)) = pre[i];
        }
    }
}

// acc = conv3x3(tile sx of CIN channels) for this warp's m16 tiles and all FP outputs.
// sw: two weight buffers of FP*CIN halves. Starts and ends with every thread synchronised.
template <int CIN>
__device__ __forceinline__ void conv_tile(const half_t* sx, const half_t* __restrict__ gw,
                                          half_t* sw, float (*acc)[FP / 8][4]) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
#pragma unroll
    for (int t = 0; t < TPW; ++t)
#pragma unroll
        for (int nt = 0; nt < FP / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[t][nt][e] = 0.0f;
    uint4 pre[WCHUNKS(CIN)];
    w_fetch<CIN>(gw, 0, pre);
    w_store<CIN>(sw, pre);
    __syncthreads();
    for (int tap = 0; tap < 9; ++tap) {
        const half_t* swt = sw + (tap & 1) * FP * CIN;
        if (tap + 1 < 9) w_fetch<CIN>(gw, tap + 1, pre);
        // The halo pixel of the A row of each of this lane's registers at this tap
        // (register r holds elements 2r and 2r + 1: one row, two adjacent columns).
        int pix[TPW][4];
#pragma unroll
        for (int t = 0; t < TPW; ++t)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                int row = tile_row(warp, t, WARPS) + frag_a_row(lane, 2 * r);
                if (row > ROWS - 1) row = ROWS - 1;  // padding rows: any pixel, never stored
                pix[t][r] = (row / AREA) * HAREA + halo_pixel(row % AREA, tap, N_);
            }
#pragma unroll
        for (int ks = 0; ks < CIN / 16; ++ks) {
            unsigned a[TPW][4];
#pragma unroll
            for (int t = 0; t < TPW; ++t)
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    // Register r holds elements 2r (low half) and 2r + 1 (the next column).
                    const int k = ks * 16 + frag_a_col(lane, 2 * r);
                    a[t][r] = *(const unsigned*)(sx + smem_off(pix[t][r], k, CIN));
                }
#pragma unroll
            for (int nt = 0; nt < FP / 8; ++nt) {
                const int n = nt * 8 + frag_b_n(lane, 0);
                const unsigned b0 =
                    *(const unsigned*)(swt + smem_off(n, ks * 16 + frag_b_k(lane, 0), CIN));
                const unsigned b1 =
                    *(const unsigned*)(swt + smem_off(n, ks * 16 + frag_b_k(lane, 2), CIN));
#pragma unroll
                for (int t = 0; t < TPW; ++t)
                    if (tile_row(warp, t, WARPS) < ROWS) mma16816(acc[t][nt], a[t], b0, b1);
            }
        }
        if (tap + 1 < 9) w_store<CIN>(sw + ((tap + 1) & 1) * FP * CIN, pre);
        __syncthreads();
    }
}

// Zero-fills a shared tile of c channels (the halo of the middle tile must be zero).
__device__ __forceinline__ void tile_zero(half_t* s, int halves) {
    for (int j = threadIdx.x; j < halves / 8; j += THREADS) ((uint4*)s)[j] = make_uint4(0, 0, 0, 0);
}

// The block's boards of NHWC activations x (FP channels) into a shared tile with a zero halo.
__device__ __forceinline__ void tile_load(const half_t* __restrict__ x, half_t* s, int rows) {
    const int total = BPB * HAREA * (FP / 8);
    for (int j = threadIdx.x; j < total; j += THREADS) {
        const int pix = j / (FP / 8);
        const int kc = j % (FP / 8);
        const int bb = pix / HAREA;
        const int hp = pix % HAREA;
        const int board = blockIdx.x * BPB + bb;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (board < rows && halo_inside(hp, N_))
            v = *(const uint4*)(x + act_off(board, halo_to_p(hp, N_), kc * 8, AREA, FP));
        *(uint4*)(s + smem_off(pix, kc * 8, FP)) = v;
    }
}

// out = ReLU(acc + bias (+ the residual, from the shared tile sres)) in fp16, to global
// NHWC (to_smem == 0) or into the interior of the shared tile sout (to_smem != 0).
__device__ __forceinline__ void epilogue(float (*acc)[FP / 8][4], const float* __restrict__ bias,
                                         const half_t* sres, half_t* sout,
                                         half_t* __restrict__ out, int rows) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
#pragma unroll
    for (int t = 0; t < TPW; ++t)
#pragma unroll
        for (int nt = 0; nt < FP / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; e += 2) {
                const int row = tile_row(warp, t, WARPS) + frag_c_row(lane, e);
                if (row < ROWS) {
                    const int col = nt * 8 + frag_c_col(lane, e);
                    const int bb = row / AREA;
                    const int p = row % AREA;
                    const int pix = bb * HAREA + halo_pixel(p, 4, N_);
                    float v0 = acc[t][nt][e] + bias[col];
                    float v1 = acc[t][nt][e + 1] + bias[col + 1];
                    if (sres) {
                        const unsigned r = *(const unsigned*)(sres + smem_off(pix, col, FP));
                        v0 += lo_half(r);
                        v1 += hi_half(r);
                    }
                    const unsigned v = pack2(fmaxf(v0, 0.0f), fmaxf(v1, 0.0f));
                    if (sout) {
                        *(unsigned*)(sout + smem_off(pix, col, FP)) = v;
                    } else {
                        const int board = blockIdx.x * BPB + bb;
                        if (board < rows) *(unsigned*)(out + act_off(board, p, col, AREA, FP)) = v;
                    }
                }
            }
}

// The stem: out (NHWC fp16) = ReLU(conv3x3(input) + bias), reading the f32 NCHW input.
extern "C" __global__ void __launch_bounds__(THREADS) mma_stem(
    const float* __restrict__ in, const half_t* __restrict__ w, const float* __restrict__ bias,
    half_t* __restrict__ out, int rows) {
    extern __shared__ uint4 smem_raw[];
    half_t* sx = (half_t*)smem_raw;
    half_t* sw = sx + BPB * HAREA * CS;
    // Pixel fastest, so that the f32 reads are coalesced.
    const int total = BPB * CS * HAREA;
    for (int j = threadIdx.x; j < total; j += THREADS) {
        const int bb = j / (CS * HAREA);
        const int c = (j / HAREA) % CS;
        const int hp = j % HAREA;
        const int board = blockIdx.x * BPB + bb;
        float v = 0.0f;
        if (board < rows && c < PLANES && halo_inside(hp, N_))
            v = in[in_off(board, c, halo_to_p(hp, N_), PLANES, AREA)];
        sx[smem_off(bb * HAREA + hp, c, CS)] = f2h(v);
    }
    __syncthreads();
    float acc[TPW][FP / 8][4];
    conv_tile<CS>(sx, w, sw, acc);
    epilogue(acc, bias, 0, 0, out, rows);
}

// One residual block: out = ReLU(x + bias2 + conv2(ReLU(conv1(x) + bias1))), the middle
// activation kept in shared memory. x and out are NHWC fp16 (distinct buffers).
extern "C" __global__ void __launch_bounds__(THREADS) mma_block(
    const half_t* __restrict__ x, const half_t* __restrict__ w1, const float* __restrict__ b1,
    const half_t* __restrict__ w2, const float* __restrict__ b2, half_t* __restrict__ out,
    int rows) {
    extern __shared__ uint4 smem_raw[];
    half_t* sx = (half_t*)smem_raw;
    half_t* sh = sx + BPB * HAREA * FP;
    half_t* sw = sh + BPB * HAREA * FP;
    tile_load(x, sx, rows);
    tile_zero(sh, BPB * HAREA * FP);
    __syncthreads();
    float acc[TPW][FP / 8][4];
    conv_tile<FP>(sx, w1, sw, acc);
    epilogue(acc, b1, 0, sh, 0, rows);
    __syncthreads();
    conv_tile<FP>(sh, w2, sw, acc);
    epilogue(acc, b2, sx, 0, out, rows);
}

// The heads' 1x1 convolutions (HC channels, f32 weights [HC][FP]), bias and ReLU, written
// flattened per head (feat_off) for the fully connected GEMMs. One thread per pixel.
extern "C" __global__ void __launch_bounds__(THREADS) mma_heads(
    const half_t* __restrict__ x, const float* __restrict__ hw, const float* __restrict__ hb,
    float* __restrict__ feat, int rows) {
    const int total = rows * AREA;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < total; i += gridDim.x * THREADS) {
        const int board = i / AREA;
        const int p = i % AREA;
        float s[HC];
#pragma unroll
        for (int c = 0; c < HC; ++c) s[c] = hb[c];
        const uint4* src = (const uint4*)(x + act_off(board, p, 0, AREA, FP));
        for (int kc = 0; kc < FP / 8; ++kc) {
            const uint4 v = src[kc];
            const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const float lo = lo_half(u[q]);
                const float hi = hi_half(u[q]);
#pragma unroll
                for (int c = 0; c < HC; ++c)
                    s[c] += lo * hw[c * FP + kc * 8 + 2 * q] + hi * hw[c * FP + kc * 8 + 2 * q + 1];
            }
        }
#pragma unroll
        for (int c = 0; c < HC; ++c)
            feat[feat_off(rows, board, p, c, HEAD_C0[c], HEAD_CN[c], AREA)] = fmaxf(s[c], 0.0f);
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::eval::RandomEvaluator;
    use crate::nn::{NetGame, NetKind};

    #[test]
    fn shared_formulas_agree_with_the_hardware_tables() {
        // The formulas the kernels use against the PTX ISA's tables (the emulation checks
        // them again end to end; this pinpoints a broken one).
        for lane in 0..32 {
            for e in 0..8 {
                let (r, c) = hw::a(lane, e);
                assert_eq!(
                    frag_a_row(lane as i32, e as i32),
                    r as i32,
                    "A row {lane} {e}"
                );
                assert_eq!(
                    frag_a_col(lane as i32, e as i32),
                    c as i32,
                    "A col {lane} {e}"
                );
            }
            for e in 0..4 {
                let (k, n) = hw::b(lane, e);
                assert_eq!(frag_b_k(lane as i32, e as i32), k as i32);
                assert_eq!(frag_b_n(lane as i32, e as i32), n as i32);
                let (r, c) = hw::c(lane, e);
                assert_eq!(frag_c_row(lane as i32, e as i32), r as i32);
                assert_eq!(frag_c_col(lane as i32, e as i32), c as i32);
            }
        }
    }

    #[test]
    fn halo_and_swizzle_are_bijective() {
        let n = 9;
        // Every inside halo pixel is one board pixel, each once.
        let mut seen = vec![0; 81];
        for hp in 0..121 {
            if halo_inside(hp, n) {
                seen[halo_to_p(hp, n) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
        // The centre tap reads the pixel itself; corner taps reach the halo.
        for p in 0..81 {
            assert_eq!(halo_to_p(halo_pixel(p, 4, n), n), p);
        }
        assert!(!halo_inside(halo_pixel(0, 0, n), n));
        assert!(!halo_inside(halo_pixel(80, 8, n), n));
        // The swizzle permutes each pixel's channels.
        for cp in [16, 32, 64] {
            let mut used = vec![false; 5 * cp as usize];
            for pix in 0..5 {
                for k in 0..cp {
                    let o = smem_off(pix, k, cp) as usize;
                    assert!(!used[o]);
                    used[o] = true;
                }
            }
        }
    }

    #[test]
    fn tilings_of_the_paper_networks() {
        let go = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::Pcn { bins: 500 });
        let t = Tiling::new(&Plan::new(&go, 5, 64, 0)).unwrap();
        // 3 boards: 243 rows in 16 tiles, 2 per warp (95% of the MMA rows are real).
        assert_eq!((t.bpb, t.tpw, t.cs, t.fp), (3, 2, 32, 64));
        assert!(t.smem_block() <= SMEM_BUDGET);
        let gm = RandomEvaluator::info_for(NetGame::Gomoku, NetKind::AlphaZero);
        let u = Tiling::new(&Plan::new(&gm, 5, 64, 256)).unwrap();
        assert_eq!((u.bpb, u.tpw, u.cs, u.hc), (1, 2, 16, 3));
        assert_eq!(u.grid(5), 5);
        assert_eq!(t.grid(4), 2);
        // Too wide for shared memory: no tiling (the backend falls back to im2col).
        assert!(Tiling::new(&Plan::new(&gm, 5, 256, 256)).is_none());
        let src = t.source();
        for k in KERNEL_NAMES {
            assert_eq!(
                src.matches(&format!("void __launch_bounds__(THREADS) {k}("))
                    .count(),
                1
            );
        }
        assert!(!src.contains("#include"));
        // The shared formulas are in the source verbatim.
        assert!(src.contains("int smem_off(int pix, int k, int cp)"));
        assert!(src.contains("#define BPB 3\n"));
    }
}
