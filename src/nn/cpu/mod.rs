//! The pure-Rust CPU backend.
//!
//! BatchNorm is folded into the convolutions at load ([`folded`]). The trunk runs in NHWC
//! layout with a zero border; the 3x3 convolutions use Winograd F(m×m, 3×3)
//! ([`winograd`]: by default m = 3 for 9x9 and m = 5 for 15x15, which tile the boards
//! exactly) with a register-blocked GEMM over channels ([`kernels`]: AVX-512 or AVX2+FMA
//! through `std::arch`, whichever the CPU has, checked at run time, and a portable scalar
//! version otherwise, so one binary runs anywhere). Threads claim chunks of tiles of each
//! layer, and head items, dynamically (a persistent [`pool`]; a layer starts once the
//! previous one is complete), so an evaluation never waits for a thread the OS has not
//! scheduled yet. The plain direct convolution in [`reference`] is
//! the yardstick for the tests.

pub(crate) mod folded;
pub(crate) mod kernels;
pub(crate) mod pool;
pub(crate) mod reference;
pub(crate) mod winograd;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::nn::model::Model;
use crate::nn::{Evaluator, NetInfo, NetKind, NetOutput, NnError};

use folded::{Folded, HeadPart, Layout};
use kernels::Geom;
use pool::{Pool, Stages};
use winograd::{Matrices, WinoConv};

/// Which convolution algorithm the backend uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConvAlgo {
    /// Plain direct convolution, one position at a time, one thread (slow; the test
    /// yardstick).
    Direct,
    /// Winograd F(m×m, 3×3), m in 2..=5, with kernels up to the instruction set `simd`.
    Winograd {
        /// Output tile side.
        m: usize,
        /// The best kernels allowed; the backend uses the best of these that the CPU has
        /// ([`CpuBackend::algo`] reports the one in use).
        simd: Simd,
    },
}

/// Instruction sets of the Winograd kernels, in increasing order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// Portable scalar code (any CPU).
    Scalar,
    /// x86-64 AVX2 + FMA.
    Avx2,
    /// x86-64 AVX-512F (16 lanes, 32 registers; layers whose width is not a multiple of 16
    /// use the AVX2 kernels).
    Avx512,
}

impl Simd {
    /// The best instruction set this CPU supports (checked at run time).
    pub fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            if avx2 && std::arch::is_x86_feature_detected!("avx512f") {
                return Simd::Avx512;
            }
            if avx2 {
                return Simd::Avx2;
            }
        }
        Simd::Scalar
    }
}

impl ConvAlgo {
    /// The default for a board of side `n`: Winograd with the tile size that needs the
    /// fewest multiplications (m = 3 for 9x9, m = 5 for 15x15: both tile the board
    /// exactly), the best SIMD kernels.
    pub fn auto(n: usize) -> ConvAlgo {
        // Cost ~ tiles² · alpha², plus a little for the transforms' growth with alpha.
        let cost = |m: usize| {
            let t = n.div_ceil(m) as f64;
            let al = (m + 2) as f64;
            t * t * al * al * (1.0 + 0.2 * al)
        };
        let m = (2..=5)
            .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
            .unwrap_or(3);
        ConvAlgo::Winograd {
            m,
            simd: Simd::Avx512,
        }
    }
}

/// Positions evaluated together (larger batches are split; see `evaluate`).
const SUB_BATCH: usize = 16;

/// Tiles a thread transforms and multiplies at a time (keeps V and M in cache).
const CHUNK_TILES: usize = 12;

/// The Winograd form of the trunk.
struct Fast {
    simd: Simd,
    geom: Geom,
    /// Input planes padded to a multiple of 8.
    cin_pad: usize,
    stem: WinoConv,
    blocks: Vec<(WinoConv, WinoConv)>,
}

/// Most lanes of a backend whose pool has one thread (one per concurrent caller).
const MAX_LANES: usize = 64;

/// Per-thread scratch.
#[derive(Default)]
struct ThreadScratch {
    v: Vec<f32>,
    m: Vec<f32>,
    heads: Vec<f32>,
}

/// Shared scratch space, reused between calls.
#[derive(Default)]
struct Scratch {
    /// Padded stem input, trunk activations (ping-pong).
    x0: Vec<f32>,
    a: Vec<f32>,
    h: Vec<f32>,
    /// Direct path: trunk output of one position.
    trunk: Vec<f32>,
    heads: Vec<f32>,
    /// Outputs of one sub-batch (large batches run in pieces).
    part: NetOutput,
}

/// The CPU evaluator: see the module documentation.
pub struct CpuBackend {
    info: NetInfo,
    net: Folded,
    fast: Option<Fast>,
    algo: ConvAlgo,
    pool: Pool,
    /// Scratch for concurrent callers: one lane per caller that may evaluate at the same
    /// time (several solver threads share one backend). With a pool of several threads
    /// there is one lane, since the pool runs one evaluation at a time.
    lanes: Vec<Lane>,
    /// Where the next caller starts looking for a free lane.
    next_lane: AtomicUsize,
    /// Per-thread scratch of the pool's threads (a pool of several threads; lane 0).
    per_thread: Vec<Mutex<ThreadScratch>>,
}

/// One caller's scratch: the shared buffers and, where the pool has one thread (the
/// caller's own), that thread's scratch.
#[derive(Default)]
struct Lane {
    scratch: Mutex<Scratch>,
    own: Mutex<ThreadScratch>,
}

/// A raw pointer that may cross threads: each thread writes a disjoint part of the
/// buffer, and barriers order the writes before any read (see `forward_fast`).
#[derive(Copy, Clone)]
struct SyncPtr(*mut f32);
// SAFETY: see the type's documentation; the pointer is only used inside `Pool::run`
// jobs, which end before the buffers are touched again.
unsafe impl Sync for SyncPtr {}
// SAFETY: as above.
unsafe impl Send for SyncPtr {}

impl SyncPtr {
    /// The pointer (a method, so closures capture the whole `Sync` wrapper).
    #[inline]
    fn get(self) -> *mut f32 {
        self.0
    }
}

impl CpuBackend {
    /// Prepares `model` for evaluation on `threads` threads (0 is taken as 1), with the
    /// default algorithm ([`ConvAlgo::auto`]).
    pub fn new(model: &Model, threads: usize) -> Result<CpuBackend, NnError> {
        CpuBackend::with_algo(model, threads, ConvAlgo::auto(model.info.board_size))
    }

    /// Like [`CpuBackend::new`] with an explicit convolution algorithm. Winograd needs a
    /// trunk width that is a multiple of 8; other models fall back to `Direct`.
    pub fn with_algo(model: &Model, threads: usize, algo: ConvAlgo) -> Result<CpuBackend, NnError> {
        let net = Folded::new(model)?;
        let (fast, algo) = match algo {
            ConvAlgo::Winograd { m, simd } if net.filters.is_multiple_of(8) => {
                let mats = Matrices::new(m)
                    .filter(|_| (2..=5).contains(&m))
                    .ok_or_else(|| {
                        NnError::Unavailable(format!("Winograd tile size {m} (supported: 2..=5)"))
                    })?;
                let cin_pad = net.planes.div_ceil(8) * 8;
                let simd = simd.min(Simd::detect());
                let fast = Fast {
                    simd,
                    geom: Geom::new(net.n, m),
                    cin_pad,
                    stem: WinoConv::new(&net.stem, &mats, cin_pad),
                    blocks: net
                        .blocks
                        .iter()
                        .map(|(a, b)| {
                            (
                                WinoConv::new(a, &mats, net.filters),
                                WinoConv::new(b, &mats, net.filters),
                            )
                        })
                        .collect(),
                };
                (Some(fast), ConvAlgo::Winograd { m, simd })
            }
            _ => (None, ConvAlgo::Direct),
        };
        let threads = if fast.is_some() { threads.max(1) } else { 1 };
        let pool = Pool::new(threads);
        let per_thread = (0..pool.threads())
            .map(|_| Mutex::new(ThreadScratch::default()))
            .collect();
        // Buffers grow at first use, so an unused lane costs nothing.
        let lanes = if pool.threads() == 1 {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_LANES))
        } else {
            1
        };
        Ok(CpuBackend {
            info: model.info.clone(),
            net,
            fast,
            algo,
            pool,
            lanes: (0..lanes).map(|_| Lane::default()).collect(),
            next_lane: AtomicUsize::new(0),
            per_thread,
        })
    }

    /// A free lane and its locked scratch; when every lane is busy, waits for one.
    fn lane(&self) -> Result<(&Lane, MutexGuard<'_, Scratch>), NnError> {
        let poisoned = || NnError::Failed("cpu backend scratch poisoned by a panic".into());
        let n = self.lanes.len();
        let start = self.next_lane.fetch_add(1, Ordering::Relaxed) % n;
        for k in 0..n {
            let lane = &self.lanes[(start + k) % n];
            match lane.scratch.try_lock() {
                Ok(g) => return Ok((lane, g)),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
            }
        }
        let lane = &self.lanes[start];
        lane.scratch
            .lock()
            .map(|g| (lane, g))
            .map_err(|_| poisoned())
    }

    /// Threads used per evaluation.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// The convolution algorithm in use (`simd`: the kernels really used on this CPU).
    pub fn algo(&self) -> ConvAlgo {
        self.algo
    }

    fn forward_direct(&self, s: &mut Scratch, input: &[f32], batch: usize, out: &mut NetOutput) {
        let len = self.info.input_len();
        let (a, bins) = (self.info.actions, self.info.bins());
        let is_az = matches!(self.info.kind, NetKind::AlphaZero);
        let lay = Layout {
            n: self.net.n,
            side: self.net.n,
            off: 0,
        };
        for i in 0..batch {
            reference::trunk(&self.net, &input[i * len..(i + 1) * len], &mut s.trunk);
            let mut dummy = [0f32; 1];
            let (value, black, white) = if is_az {
                (&mut out.value[i..i + 1], &mut [][..], &mut [][..])
            } else {
                (
                    &mut dummy[..],
                    &mut out.black_v[i * bins..(i + 1) * bins],
                    &mut out.white_v[i * bins..(i + 1) * bins],
                )
            };
            folded::heads_fwd(
                &self.net,
                &s.trunk,
                lay,
                HeadPart::All,
                &mut out.policy[i * a..(i + 1) * a],
                value,
                black,
                white,
                &mut s.heads,
            );
        }
    }

    fn forward_fast(
        &self,
        f: &Fast,
        own: &Mutex<ThreadScratch>,
        s: &mut Scratch,
        input: &[f32],
        batch: usize,
        out: &mut NetOutput,
    ) -> Result<(), NnError> {
        out.resize(&self.info, batch);
        let g = f.geom;
        let c = self.net.filters;
        let n = g.n;
        let area = n * n;
        let planes = self.net.planes;
        let len = self.info.input_len();
        let (a_len, x_len) = (batch * g.pos_len(c), batch * g.pos_len(f.cin_pad));
        // Growing keeps the zero border of the old part and zero-fills the new part; only
        // interior pixels are ever written.
        if s.a.len() < a_len {
            s.a.resize(a_len, 0.0);
            s.h.resize(a_len, 0.0);
        }
        if s.x0.len() < x_len {
            s.x0.resize(x_len, 0.0);
        }
        let nth = self.pool.threads();
        let total_tiles = batch * g.tiles_per_pos();
        let xi = (g.m + 2) * (g.m + 2);
        let scratch_len = xi * CHUNK_TILES * c.max(f.cin_pad);
        let (x0, a, h) = (
            SyncPtr(s.x0.as_mut_ptr()),
            SyncPtr(s.a.as_mut_ptr()),
            SyncPtr(s.h.as_mut_ptr()),
        );
        let (pol, val, bv, wv) = (
            SyncPtr(out.policy.as_mut_ptr()),
            SyncPtr(out.value.as_mut_ptr()),
            SyncPtr(out.black_v.as_mut_ptr()),
            SyncPtr(out.white_v.as_mut_ptr()),
        );
        let (actions, bins) = (self.info.actions, self.info.bins());
        let is_az = matches!(self.info.kind, NetKind::AlphaZero);
        let nconv = 1 + 2 * f.blocks.len();
        // Stages: input conversion (positions), the convolutions (tiles), the heads (a
        // policy and a value item per position).
        let mut totals = vec![batch];
        totals.extend(std::iter::repeat_n(total_tiles, nconv));
        totals.push(2 * batch);
        let stages = Stages::new(totals);
        let tile_chunk = total_tiles.div_ceil(nth).clamp(1, CHUNK_TILES);
        let chunk = |st: usize| if st == 0 || st > nconv { 1 } else { tile_chunk };
        let pos = g.pos_len(c);
        let lay = Layout {
            n,
            side: g.p,
            off: 1,
        };
        let job = |tid: usize| {
            // A poisoned lock only means an earlier call panicked; the scratch content is
            // rewritten before use anyway.
            let ts = if nth == 1 { own } else { &self.per_thread[tid] };
            let mut ts = ts.lock().unwrap_or_else(|e| e.into_inner());
            let ts = &mut *ts;
            if ts.v.len() < scratch_len {
                ts.v.resize(scratch_len, 0.0);
                ts.m.resize(scratch_len, 0.0);
            }
            stages.run(chunk, |st, i0, i1| {
                if st == 0 {
                    // NCHW → padded NHWC.
                    for b in i0..i1 {
                        let src = &input[b * len..(b + 1) * len];
                        for y in 0..n {
                            for x in 0..n {
                                let base = ((b * g.p + y + 1) * g.p + x + 1) * f.cin_pad;
                                for ch in 0..planes {
                                    // SAFETY: pixel (y, x) of position b, claimed by this
                                    // thread alone; nobody reads x0 during this stage.
                                    unsafe {
                                        *x0.get().add(base + ch) = src[ch * area + y * n + x]
                                    };
                                }
                            }
                        }
                    }
                } else if st <= nconv {
                    let k = st - 1;
                    let (layer, src, src_len, dst, residual) = if k == 0 {
                        (&f.stem, x0, x_len, a, false)
                    } else if k % 2 == 1 {
                        (&f.blocks[(k - 1) / 2].0, a, a_len, h, false)
                    } else {
                        (&f.blocks[(k - 1) / 2].1, h, a_len, a, true)
                    };
                    // SAFETY: no thread writes `src` during this stage (it was completed in
                    // an earlier one), so a shared slice over it is sound.
                    let src =
                        unsafe { std::slice::from_raw_parts(src.get() as *const f32, src_len) };
                    // SAFETY: dst is a different buffer from src, sized for the batch; this
                    // thread alone writes the pixels of tiles [i0, i1); `f.simd` is capped
                    // by what the CPU reported.
                    unsafe {
                        kernels::conv_tiles(
                            f.simd,
                            layer,
                            &g,
                            src,
                            residual,
                            dst.get(),
                            i0,
                            i1,
                            &mut ts.v,
                            &mut ts.m,
                        )
                    };
                } else {
                    // SAFETY: the trunk output is complete (earlier stage) and not written now.
                    let trunk = unsafe { std::slice::from_raw_parts(a.get() as *const f32, a_len) };
                    for item in i0..i1 {
                        let (b, part) = (
                            item / 2,
                            if item % 2 == 0 {
                                HeadPart::Policy
                            } else {
                                HeadPart::Value
                            },
                        );
                        // SAFETY: each item's output rows (the policy row, or the value rows
                        // of a position) are written by exactly one thread, and only the
                        // slices of this item's part are created; the buffers were sized by
                        // `out.resize`.
                        let (policy, value, black, white) = unsafe {
                            let (want_p, want_v) =
                                (part == HeadPart::Policy, part == HeadPart::Value);
                            (
                                if want_p {
                                    std::slice::from_raw_parts_mut(
                                        pol.get().add(b * actions),
                                        actions,
                                    )
                                } else {
                                    &mut [][..]
                                },
                                if want_v && is_az {
                                    std::slice::from_raw_parts_mut(val.get().add(b), 1)
                                } else {
                                    &mut [][..]
                                },
                                if want_v && !is_az {
                                    std::slice::from_raw_parts_mut(bv.get().add(b * bins), bins)
                                } else {
                                    &mut [][..]
                                },
                                if want_v && !is_az {
                                    std::slice::from_raw_parts_mut(wv.get().add(b * bins), bins)
                                } else {
                                    &mut [][..]
                                },
                            )
                        };
                        folded::heads_fwd(
                            &self.net,
                            &trunk[b * pos..(b + 1) * pos],
                            lay,
                            part,
                            policy,
                            value,
                            black,
                            white,
                            &mut ts.heads,
                        );
                    }
                }
            });
        };
        if !self.pool.run(&job) {
            return Err(NnError::Failed("a cpu backend thread failed".into()));
        }
        Ok(())
    }
}

impl Evaluator for CpuBackend {
    fn info(&self) -> &NetInfo {
        &self.info
    }

    fn evaluate(&self, input: &[f32], batch: usize, out: &mut NetOutput) -> Result<(), NnError> {
        let len = self.info.input_len();
        if input.len() != batch * len {
            return Err(NnError::BadInput(format!(
                "{} floats for a batch of {batch} positions of {len}",
                input.len()
            )));
        }
        out.resize(&self.info, batch);
        if batch == 0 {
            return Ok(());
        }
        let lane = self.lane()?;
        let (own, mut guard) = (&lane.0.own, lane.1);
        match &self.fast {
            Some(f) if batch <= SUB_BATCH => {
                self.forward_fast(f, own, &mut guard, input, batch, out)
            }
            Some(f) => {
                // Large batches run SUB_BATCH positions at a time: the activations of a
                // whole batch of 64 (2-5 MB per buffer) would not stay in cache.
                let s = &mut *guard;
                let mut part = std::mem::take(&mut s.part);
                let (a, bins) = (self.info.actions, self.info.bins());
                let mut b0 = 0;
                let mut res = Ok(());
                while b0 < batch && res.is_ok() {
                    let b1 = (b0 + SUB_BATCH).min(batch);
                    res = self.forward_fast(
                        f,
                        own,
                        s,
                        &input[b0 * len..b1 * len],
                        b1 - b0,
                        &mut part,
                    );
                    out.policy[b0 * a..b1 * a].copy_from_slice(&part.policy);
                    if bins == 0 {
                        out.value[b0..b1].copy_from_slice(&part.value);
                    } else {
                        out.black_v[b0 * bins..b1 * bins].copy_from_slice(&part.black_v);
                        out.white_v[b0 * bins..b1 * bins].copy_from_slice(&part.white_v);
                    }
                    b0 = b1;
                }
                s.part = part;
                res
            }
            None => {
                self.forward_direct(&mut guard, input, batch, out);
                Ok(())
            }
        }
    }

    fn name(&self) -> String {
        "cpu".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::model::{expected_tensors, Tensor};
    use crate::nn::{CostLabel, NetGame};
    use crate::util::Rng;

    /// A random model of the given shape (BN statistics included, variances positive).
    fn random_model(
        game: NetGame,
        n: usize,
        filters: usize,
        blocks: usize,
        kind: NetKind,
        seed: u64,
    ) -> Model {
        let planes = if game == NetGame::Gomoku { 4 } else { 18 };
        let info = NetInfo {
            name: "random".into(),
            game,
            board_size: n,
            planes,
            actions: n * n + usize::from(game == NetGame::KillallGo),
            kind,
            cost_label: CostLabel::Max,
        };
        let mut rng = Rng::new(seed);
        let mut tensors = std::collections::BTreeMap::new();
        for (name, shape) in expected_tensors(&info, blocks, filters, 16) {
            let len: usize = shape.iter().product();
            let fan_in = shape.iter().skip(1).product::<usize>().max(1) as f64;
            let data = (0..len)
                .map(|_| {
                    let u = rng.unit() * 2.0 - 1.0;
                    let v = if name.ends_with("running_var") {
                        0.5 + rng.unit()
                    } else if name.ends_with(".weight") && shape.len() > 1 {
                        u * (3.0 / fan_in).sqrt()
                    } else {
                        0.2 * u
                    };
                    v as f32
                })
                .collect();
            tensors.insert(name, Tensor { shape, data });
        }
        Model {
            info,
            blocks,
            filters,
            value_hidden: if kind == NetKind::AlphaZero { 16 } else { 0 },
            bn_eps: 1e-5,
            tensors,
            path: "random".into(),
        }
    }

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// Every Winograd variant, on every instruction set, on several thread counts, against
    /// the direct convolution: odd board sizes (partial tiles), widths 8 and 24 (8- and
    /// 16-column AVX2 blocks; AVX-512 falls back to AVX2 for them), 16, 32 and 48 (AVX-512
    /// blocks of 1, 2 and 2+1 registers), 18 input planes (the masked 8-channel tail of the
    /// AVX-512 input transform), both head kinds, batches that do not split evenly (37:
    /// sub-batches).
    #[test]
    fn winograd_matches_direct_on_random_models() {
        let cases = [
            (NetGame::Gomoku, 5, 8, 1, NetKind::AlphaZero),
            (NetGame::Gomoku, 7, 24, 2, NetKind::AlphaZero),
            (NetGame::KillallGo, 9, 16, 1, NetKind::Pcn { bins: 20 }),
            (NetGame::KillallGo, 7, 24, 1, NetKind::Pcn { bins: 7 }),
            (NetGame::KillallGo, 9, 32, 1, NetKind::Pcn { bins: 11 }),
            (NetGame::Gomoku, 6, 48, 1, NetKind::AlphaZero),
        ];
        for (ci, &(game, n, filters, blocks, kind)) in cases.iter().enumerate() {
            let model = random_model(game, n, filters, blocks, kind, ci as u64 + 1);
            let direct = CpuBackend::with_algo(&model, 1, ConvAlgo::Direct).expect("direct");
            let len = model.info.input_len();
            let mut rng = Rng::new(99);
            for batch in [1usize, 3, 37] {
                let input: Vec<f32> = (0..batch * len)
                    .map(|_| if rng.below(3) == 0 { 1.0 } else { 0.0 })
                    .collect();
                let mut want = NetOutput::default();
                direct
                    .evaluate(&input, batch, &mut want)
                    .expect("direct eval");
                for m in 2..=5 {
                    for simd in [Simd::Scalar, Simd::Avx2, Simd::Avx512] {
                        for threads in [1, 2, 3] {
                            let be = CpuBackend::with_algo(
                                &model,
                                threads,
                                ConvAlgo::Winograd { m, simd },
                            )
                            .expect("backend");
                            let mut got = NetOutput::default();
                            be.evaluate(&input, batch, &mut got).expect("eval");
                            let tag = format!(
                                "case {ci} batch {batch} m {m} simd {simd:?} threads {threads}"
                            );
                            assert!(max_diff(&got.policy, &want.policy) < 1e-4, "{tag}: policy");
                            assert!(max_diff(&got.value, &want.value) < 1e-5, "{tag}: value");
                            assert!(max_diff(&got.black_v, &want.black_v) < 1e-4, "{tag}: black");
                            assert!(max_diff(&got.white_v, &want.white_v) < 1e-4, "{tag}: white");
                            // Reuse with a smaller batch after a larger one (scratch reuse).
                            be.evaluate(&input[..len], 1, &mut got).expect("eval 1");
                            let a = model.info.actions;
                            assert!(
                                max_diff(&got.policy, &want.policy[..a]) < 1e-4,
                                "{tag}: reuse"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The AVX-512 and AVX2 kernels agree on the same inputs (1e-4 on logits): 64-wide
    /// layers (the 6×64 AVX-512 block), 32-wide, and a width the AVX-512 kernels hand to
    /// AVX2 (24). Skipped, with a notice, on a CPU without AVX-512.
    /// Several threads evaluating on one single-threaded backend at once (the job-level
    /// workers share one) each get exactly the outputs of evaluating alone; the backend has
    /// a lane per core (one where its pool has several threads).
    #[test]
    fn concurrent_callers_get_their_own_outputs() {
        let model = random_model(NetGame::KillallGo, 9, 16, 1, NetKind::Pcn { bins: 20 }, 7);
        let be = CpuBackend::new(&model, 1).expect("backend");
        assert_eq!(be.threads(), 1);
        let len = model.info.input_len();
        let mut rng = Rng::new(5);
        let inputs: Vec<Vec<f32>> = (0..4)
            .map(|i| {
                (0..(i + 1) * len)
                    .map(|_| if rng.below(3) == 0 { 1.0 } else { 0.0 })
                    .collect()
            })
            .collect();
        let alone: Vec<NetOutput> = inputs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let mut o = NetOutput::default();
                be.evaluate(x, i + 1, &mut o).expect("eval");
                o
            })
            .collect();
        std::thread::scope(|sc| {
            for (i, x) in inputs.iter().enumerate() {
                let (be, want) = (&be, &alone[i]);
                sc.spawn(move || {
                    let mut o = NetOutput::default();
                    for _ in 0..200 {
                        be.evaluate(x, i + 1, &mut o).expect("eval");
                        assert_eq!(o.policy, want.policy, "caller {i}: policy");
                        assert_eq!(o.black_v, want.black_v, "caller {i}: black");
                        assert_eq!(o.white_v, want.white_v, "caller {i}: white");
                    }
                });
            }
        });
        let lanes = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_LANES));
        assert_eq!(be.lanes.len(), lanes);
        // A backend whose pool has several threads runs one evaluation at a time.
        assert_eq!(CpuBackend::new(&model, 2).expect("backend").lanes.len(), 1);
    }

    #[test]
    fn avx512_matches_avx2() {
        if Simd::detect() < Simd::Avx512 {
            println!("NOTICE: this CPU has no AVX-512; avx512_matches_avx2 skipped");
            return;
        }
        let cases = [
            (NetGame::KillallGo, 9, 64, 2, NetKind::Pcn { bins: 30 }),
            (NetGame::Gomoku, 15, 64, 1, NetKind::AlphaZero),
            (NetGame::Gomoku, 11, 32, 2, NetKind::AlphaZero),
            (NetGame::KillallGo, 9, 24, 1, NetKind::AlphaZero),
        ];
        for (ci, &(game, n, filters, blocks, kind)) in cases.iter().enumerate() {
            let model = random_model(game, n, filters, blocks, kind, 50 + ci as u64);
            let len = model.info.input_len();
            let mut rng = Rng::new(7 + ci as u64);
            let batch = 21;
            let input: Vec<f32> = (0..batch * len)
                .map(|_| if rng.below(3) == 0 { 1.0 } else { 0.0 })
                .collect();
            let mut outs = Vec::new();
            for simd in [Simd::Avx2, Simd::Avx512] {
                let be = CpuBackend::with_algo(&model, 2, ConvAlgo::Winograd { m: 3, simd })
                    .expect("backend");
                assert_eq!(be.algo(), ConvAlgo::Winograd { m: 3, simd });
                let mut out = NetOutput::default();
                be.evaluate(&input, batch, &mut out).expect("eval");
                outs.push(out);
            }
            let (a, b) = (&outs[0], &outs[1]);
            assert!(!a.policy.is_empty());
            assert!(max_diff(&a.policy, &b.policy) < 1e-4, "case {ci}: policy");
            assert!(max_diff(&a.value, &b.value) < 1e-5, "case {ci}: value");
            assert!(max_diff(&a.black_v, &b.black_v) < 1e-4, "case {ci}: black");
            assert!(max_diff(&a.white_v, &b.white_v) < 1e-4, "case {ci}: white");
        }
    }

    #[test]
    fn auto_algorithm_choice() {
        assert_eq!(
            ConvAlgo::auto(9),
            ConvAlgo::Winograd {
                m: 3,
                simd: Simd::Avx512
            }
        );
        assert!(matches!(
            ConvAlgo::auto(15),
            ConvAlgo::Winograd { m: 5, .. }
        ));
        assert!(matches!(ConvAlgo::auto(7), ConvAlgo::Winograd { m: 4, .. }));
    }
}
