//! The Winograd convolution kernels: input transform, batched GEMM, output transform.
//!
//! Activations are NHWC with a zero border: position `b`, pixel `(y, x)` lives at
//! `((b·P + y + 1)·P + x + 1)·C` where `P = tiles·m + 2` ≥ `n + 2`; only pixels with
//! `y, x < n` are ever written, so the border (the convolution's zero padding) stays zero.
//! Tile `t` = `b·tiles² + ty·tiles + tx` covers output pixels `(ty·m.., tx·m..)` and reads
//! the alpha×alpha padded patch starting at padded `(ty·m, tx·m)`.
//!
//! A thread handles a contiguous range of tiles at a time: transformed inputs
//! `V[ξ][tile][cin]`, products `M[ξ][tile][cout] = V[ξ] · U[ξ]`, then the inverse transform
//! with bias, residual and ReLU straight into the destination activation.
//!
//! Each kernel exists three times: AVX-512F and AVX2+FMA versions (`std::arch`, chosen at
//! run time by [`Simd::detect`]) and a portable scalar version with the same arithmetic
//! order per output. The AVX-512 GEMM blocks differ from the AVX2 ones, so the two paths
//! agree to rounding, not bit for bit (tested to 1e-4 on logits).

// Index loops over the small transform tables are the clearest form (and unroll to
// constant indices), so the range-loop lint is off here.
#![allow(clippy::needless_range_loop)]

use super::winograd::{Tile, WinoConv, F2, F3, F4, F5};
use super::Simd;

/// Geometry of a batch of boards in the padded layout.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Geom {
    /// Board side.
    pub n: usize,
    /// Output tile side.
    pub m: usize,
    /// Tiles per board side, `ceil(n / m)`.
    pub tiles: usize,
    /// Padded board side, `tiles·m + 2`.
    pub p: usize,
}

impl Geom {
    pub fn new(n: usize, m: usize) -> Geom {
        let tiles = n.div_ceil(m);
        Geom {
            n,
            m,
            tiles,
            p: tiles * m + 2,
        }
    }

    /// Tiles per position.
    pub fn tiles_per_pos(&self) -> usize {
        self.tiles * self.tiles
    }

    /// Floats per position of a padded activation with `c` channels.
    pub fn pos_len(&self, c: usize) -> usize {
        self.p * self.p * c
    }

    /// Offset of the top-left corner of tile `t`'s input patch (padded coordinates).
    #[inline(always)]
    fn patch_base(&self, t: usize, c: usize) -> usize {
        let tpp = self.tiles_per_pos();
        let (b, r) = (t / tpp, t % tpp);
        let (ty, tx) = (r / self.tiles, r % self.tiles);
        ((b * self.p + ty * self.m) * self.p + tx * self.m) * c
    }
}

/// Largest alpha² the kernels support (alpha ≤ 8).
const MAX_XI: usize = 64;

/// Runs one conv layer on tiles `[t0, t1)`: `src` is the padded input activation
/// (`layer.cin` channels), `v`/`mbuf` per-thread scratch (≥ alpha²·(t1−t0)·max(cin, cout)).
/// With `residual`, the value already in `dst` is added before the ReLU (the residual
/// connection, computed in place).
///
/// # Safety
/// `dst` must point to a padded activation with `layer.cout` channels large enough for
/// every position touched by tiles `[t0, t1)`, not overlapping `src`; no other thread may
/// read or write the pixels of these tiles during the call (other threads may write other
/// tiles' pixels). The CPU must support `simd` (as [`Simd::detect`] reports).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn conv_tiles(
    simd: Simd,
    layer: &WinoConv,
    g: &Geom,
    src: &[f32],
    residual: bool,
    dst: *mut f32,
    t0: usize,
    t1: usize,
    v: &mut [f32],
    mbuf: &mut [f32],
) {
    let nt = t1 - t0;
    if nt == 0 {
        return;
    }
    let xi = layer.alpha * layer.alpha;
    debug_assert!(xi <= MAX_XI);
    debug_assert!(v.len() >= xi * nt * layer.cin && mbuf.len() >= xi * nt * layer.cout);
    debug_assert!(layer.cin.is_multiple_of(8) && layer.cout.is_multiple_of(8));
    match simd {
        // The AVX-512 GEMM writes 16 output channels per register; a layer whose width is
        // only a multiple of 8 runs on the AVX2 kernels (which every AVX-512 CPU has).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 if layer.cout.is_multiple_of(16) => {
            // SAFETY: the caller guarantees AVX-512F (and the dst contract).
            unsafe {
                match layer.m {
                    2 => avx512::input_transform::<F2>(layer, g, src, t0, t1, v),
                    3 => avx512::input_transform::<F3>(layer, g, src, t0, t1, v),
                    4 => avx512::input_transform::<F4>(layer, g, src, t0, t1, v),
                    _ => avx512::input_transform::<F5>(layer, g, src, t0, t1, v),
                }
                avx512::gemm(layer, nt, v, mbuf);
                match layer.m {
                    2 => avx512::output_transform::<F2>(layer, g, mbuf, t0, t1, residual, dst),
                    3 => avx512::output_transform::<F3>(layer, g, mbuf, t0, t1, residual, dst),
                    4 => avx512::output_transform::<F4>(layer, g, mbuf, t0, t1, residual, dst),
                    _ => avx512::output_transform::<F5>(layer, g, mbuf, t0, t1, residual, dst),
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 | Simd::Avx512 => {
            // SAFETY: the caller guarantees AVX2+FMA (detection of AVX-512 includes them)
            // and the dst contract.
            unsafe {
                match layer.m {
                    2 => avx2::input_transform::<F2>(layer, g, src, t0, t1, v),
                    3 => avx2::input_transform::<F3>(layer, g, src, t0, t1, v),
                    4 => avx2::input_transform::<F4>(layer, g, src, t0, t1, v),
                    _ => avx2::input_transform::<F5>(layer, g, src, t0, t1, v),
                }
                avx2::gemm(layer, nt, v, mbuf);
                match layer.m {
                    2 => avx2::output_transform::<F2>(layer, g, mbuf, t0, t1, residual, dst),
                    3 => avx2::output_transform::<F3>(layer, g, mbuf, t0, t1, residual, dst),
                    4 => avx2::output_transform::<F4>(layer, g, mbuf, t0, t1, residual, dst),
                    _ => avx2::output_transform::<F5>(layer, g, mbuf, t0, t1, residual, dst),
                }
            }
        }
        _ => {
            scalar::input_transform(layer, g, src, t0, t1, v);
            scalar::gemm(layer, nt, v, mbuf);
            // SAFETY: forwarded caller contract.
            unsafe { scalar::output_transform(layer, g, mbuf, t0, t1, residual, dst) };
        }
    }
}

mod scalar {
    use super::{Geom, WinoConv, MAX_XI};

    pub fn input_transform(
        l: &WinoConv,
        g: &Geom,
        src: &[f32],
        t0: usize,
        t1: usize,
        v: &mut [f32],
    ) {
        let (al, c) = (l.alpha, l.cin);
        let nt = t1 - t0;
        let mut d = [0f32; MAX_XI];
        let mut tmp = [0f32; MAX_XI];
        for t in t0..t1 {
            let base = g.patch_base(t, c);
            for ch in 0..c {
                for i in 0..al {
                    for j in 0..al {
                        d[i * al + j] = src[base + (i * g.p + j) * c + ch];
                    }
                }
                for i in 0..al {
                    for j in 0..al {
                        tmp[i * al + j] = l.bt[i].iter().map(|&(k, w)| w * d[k * al + j]).sum();
                    }
                }
                for i in 0..al {
                    for j in 0..al {
                        let s: f32 = l.bt[j].iter().map(|&(k, w)| tmp[i * al + k] * w).sum();
                        v[((i * al + j) * nt + (t - t0)) * c + ch] = s;
                    }
                }
            }
        }
    }

    pub fn gemm(l: &WinoConv, nt: usize, v: &[f32], m: &mut [f32]) {
        let (ci, co) = (l.cin, l.cout);
        for xi in 0..l.alpha * l.alpha {
            let u = &l.u[xi * ci * co..(xi + 1) * ci * co];
            for r in 0..nt {
                let a = &v[(xi * nt + r) * ci..(xi * nt + r + 1) * ci];
                let out = &mut m[(xi * nt + r) * co..(xi * nt + r + 1) * co];
                out.fill(0.0);
                for (k, &av) in a.iter().enumerate() {
                    let urow = &u[k * co..(k + 1) * co];
                    for (o, &uv) in out.iter_mut().zip(urow) {
                        *o += av * uv;
                    }
                }
            }
        }
    }

    /// # Safety
    /// See [`super::conv_tiles`].
    pub unsafe fn output_transform(
        l: &WinoConv,
        g: &Geom,
        mb: &[f32],
        t0: usize,
        t1: usize,
        residual: bool,
        dst: *mut f32,
    ) {
        let (al, mm, co) = (l.alpha, l.m, l.cout);
        let nt = t1 - t0;
        let tpp = g.tiles_per_pos();
        let mut tmp = [0f32; MAX_XI];
        for t in t0..t1 {
            let (b, r) = (t / tpp, t % tpp);
            let (ty, tx) = (r / g.tiles, r % g.tiles);
            for ch in 0..co {
                let mv = |xi: usize| mb[(xi * nt + (t - t0)) * co + ch];
                for i in 0..mm {
                    for j in 0..al {
                        tmp[i * al + j] = l.at[i].iter().map(|&(k, w)| w * mv(k * al + j)).sum();
                    }
                }
                for i in 0..mm {
                    let y = ty * mm + i;
                    if y >= g.n {
                        break;
                    }
                    for j in 0..mm {
                        let x = tx * mm + j;
                        if x >= g.n {
                            break;
                        }
                        let s: f32 = l.at[j].iter().map(|&(k, w)| tmp[i * al + k] * w).sum();
                        let idx = ((b * g.p + y + 1) * g.p + x + 1) * co + ch;
                        let mut s = s + l.bias[ch];
                        if residual {
                            // SAFETY: as for the store below.
                            s += unsafe { *dst.add(idx) };
                        }
                        // SAFETY: idx is a pixel of tile t, inside dst (caller contract).
                        unsafe { *dst.add(idx) = s.max(0.0) };
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Geom, Tile, WinoConv};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `s + w·x` with a compile-time `w`: nothing for 0, an add/sub for ±1.
    #[inline(always)]
    unsafe fn acc(s: __m256, w: f32, x: __m256) -> __m256 {
        // SAFETY: only called from AVX2+FMA functions.
        unsafe {
            if w == 0.0 {
                s
            } else if w == 1.0 {
                _mm256_add_ps(s, x)
            } else if w == -1.0 {
                _mm256_sub_ps(s, x)
            } else {
                _mm256_fmadd_ps(_mm256_set1_ps(w), x, s)
            }
        }
    }

    /// # Safety
    /// AVX2+FMA available; `src` holds every patch of tiles `[t0, t1)`; `v` is large enough.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn input_transform<T: Tile>(
        l: &WinoConv,
        g: &Geom,
        src: &[f32],
        t0: usize,
        t1: usize,
        v: &mut [f32],
    ) {
        let al = T::AL;
        let c = l.cin;
        let nt = t1 - t0;
        let zero = _mm256_setzero_ps();
        let last = g.patch_base(t1 - 1, c) + ((al - 1) * g.p + al - 1) * c + c;
        assert!(last <= src.len() && v.len() >= al * al * nt * c && l.alpha == al);
        let sp = src.as_ptr();
        let vp = v.as_mut_ptr();
        let xstride = nt * c;
        for t in t0..t1 {
            let base = g.patch_base(t, c);
            for ch in (0..c).step_by(8) {
                // tmp = Bᵀ d, one column of the patch at a time. Left uninitialised: only
                // the al×al entries written below are read (zeroing 2 KB per tile showed up
                // in profiles).
                let mut tmp = [[MaybeUninit::<__m256>::uninit(); 8]; 8];
                for j in 0..al {
                    let mut col = [zero; 8];
                    for (i, x) in col.iter_mut().enumerate().take(al) {
                        // SAFETY: inside the patch of tile t (bounds asserted above; patch
                        // bases grow with t).
                        *x = unsafe { _mm256_loadu_ps(sp.add(base + (i * g.p + j) * c + ch)) };
                    }
                    for i in 0..al {
                        let mut s = zero;
                        for k in 0..al {
                            // SAFETY: AVX2+FMA (this function's target features).
                            s = unsafe { acc(s, T::BT[i][k], col[k]) };
                        }
                        tmp[i][j] = MaybeUninit::new(s);
                    }
                }
                // V = tmp B, row by row, stored to V[ξ][t][ch].
                let out = ((t - t0) * c + ch) as isize;
                for (i, row) in tmp.iter().enumerate().take(al) {
                    for j in 0..al {
                        let mut s = zero;
                        for k in 0..al {
                            // SAFETY: AVX2+FMA; row[k] (k < al) was written above.
                            s = unsafe { acc(s, T::BT[j][k], row[k].assume_init()) };
                        }
                        // SAFETY: below al²·nt·c (asserted).
                        unsafe {
                            _mm256_storeu_ps(vp.offset(out + ((i * al + j) * xstride) as isize), s)
                        };
                    }
                }
            }
        }
    }

    /// `R` rows × `NV`·8 columns of `C = A · B` with depth `k`.
    ///
    /// # Safety
    /// AVX2+FMA; `a` has R rows of `k` floats at stride `lda`; `b` has `k` rows of NV·8
    /// floats at stride `ldb`; `c` has R rows of NV·8 floats at stride `ldc`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn kernel<const R: usize, const NV: usize>(
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        ldb: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        let mut acc = [[_mm256_setzero_ps(); NV]; R];
        for kk in 0..k {
            let mut bv = [_mm256_setzero_ps(); NV];
            for (j, x) in bv.iter_mut().enumerate() {
                // SAFETY: row kk of b (caller contract).
                *x = unsafe { _mm256_loadu_ps(b.add(kk * ldb + j * 8)) };
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: element (r, kk) of a (caller contract).
                let av = unsafe { _mm256_broadcast_ss(&*a.add(r * lda + kk)) };
                for j in 0..NV {
                    row[j] = _mm256_fmadd_ps(av, bv[j], row[j]);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                // SAFETY: element (r, 8j) of c (caller contract).
                unsafe { _mm256_storeu_ps(c.add(r * ldc + j * 8), *x) };
            }
        }
    }

    /// Rows `r0..r0+rows` (rows ≤ 6) of one column block.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rows_block<const NV: usize>(
        rows: usize,
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        ldb: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        // SAFETY: forwarded caller contract; each arm uses `rows` rows.
        unsafe {
            match rows {
                6 => kernel::<6, NV>(k, a, lda, b, ldb, c, ldc),
                5 => kernel::<5, NV>(k, a, lda, b, ldb, c, ldc),
                4 => kernel::<4, NV>(k, a, lda, b, ldb, c, ldc),
                3 => kernel::<3, NV>(k, a, lda, b, ldb, c, ldc),
                2 => kernel::<2, NV>(k, a, lda, b, ldb, c, ldc),
                _ => kernel::<1, NV>(k, a, lda, b, ldb, c, ldc),
            }
        }
    }

    /// `M[ξ] = V[ξ] · U[ξ]` for every ξ.
    ///
    /// # Safety
    /// AVX2+FMA; `v` ≥ alpha²·nt·cin, `m` ≥ alpha²·nt·cout floats.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn gemm(l: &WinoConv, nt: usize, v: &[f32], m: &mut [f32]) {
        let (ci, co) = (l.cin, l.cout);
        let xis = l.alpha * l.alpha;
        assert!(v.len() >= xis * nt * ci && m.len() >= xis * nt * co && l.u.len() >= xis * ci * co);
        for xi in 0..xis {
            // SAFETY: slice starts within bounds (asserted above).
            let (a, b, c) = unsafe {
                (
                    v.as_ptr().add(xi * nt * ci),
                    l.u.as_ptr().add(xi * ci * co),
                    m.as_mut_ptr().add(xi * nt * co),
                )
            };
            let mut col = 0;
            while col < co {
                let wide = co - col >= 16;
                let mut r = 0;
                while r < nt {
                    let rows = (nt - r).min(6);
                    // SAFETY: rows r..r+rows < nt of a and c, columns col..col+8·NV ≤ co.
                    unsafe {
                        let (ar, br, cr) = (a.add(r * ci), b.add(col), c.add(r * co + col));
                        if wide {
                            rows_block::<2>(rows, ci, ar, ci, br, co, cr, co);
                        } else {
                            rows_block::<1>(rows, ci, ar, ci, br, co, cr, co);
                        }
                    }
                    r += rows;
                }
                col += if wide { 16 } else { 8 };
            }
        }
    }

    /// # Safety
    /// AVX2+FMA and the contract of [`super::conv_tiles`].
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn output_transform<T: Tile>(
        l: &WinoConv,
        g: &Geom,
        mb: &[f32],
        t0: usize,
        t1: usize,
        residual: bool,
        dst: *mut f32,
    ) {
        let (al, mm, co) = (T::AL, T::M, l.cout);
        let nt = t1 - t0;
        let tpp = g.tiles_per_pos();
        assert!(mb.len() >= al * al * nt * co && l.bias.len() >= co && l.alpha == al && l.m == mm);
        let mp = mb.as_ptr();
        let zero = _mm256_setzero_ps();
        let xstride = nt * co;
        for t in t0..t1 {
            let (b, r) = (t / tpp, t % tpp);
            let (ty, tx) = (r / g.tiles, r % g.tiles);
            let full = (ty + 1) * mm <= g.n && (tx + 1) * mm <= g.n;
            for ch in (0..co).step_by(8) {
                // tmp = Aᵀ M, one column at a time (uninitialised: see input_transform).
                let mut tmp = [[MaybeUninit::<__m256>::uninit(); 8]; 8];
                let inp = (t - t0) * co + ch;
                for j in 0..al {
                    let mut col = [zero; 8];
                    for (k, x) in col.iter_mut().enumerate().take(al) {
                        // SAFETY: below al²·nt·co (asserted).
                        *x = unsafe { _mm256_loadu_ps(mp.add(inp + (k * al + j) * xstride)) };
                    }
                    for i in 0..mm {
                        let mut s = zero;
                        for k in 0..al {
                            // SAFETY: AVX2+FMA.
                            s = unsafe { acc(s, T::AT[i][k], col[k]) };
                        }
                        tmp[i][j] = MaybeUninit::new(s);
                    }
                }
                // SAFETY: ch + 8 ≤ co = bias length.
                let bias = unsafe { _mm256_loadu_ps(l.bias.as_ptr().add(ch)) };
                for (i, row) in tmp.iter().enumerate().take(mm) {
                    let y = ty * mm + i;
                    for j in 0..mm {
                        let x = tx * mm + j;
                        if !full && (y >= g.n || x >= g.n) {
                            continue;
                        }
                        let mut s = bias;
                        for k in 0..al {
                            // SAFETY: AVX2+FMA; row[k] (i < m, k < al) was written above.
                            s = unsafe { acc(s, T::AT[j][k], row[k].assume_init()) };
                        }
                        let idx = ((b * g.p + y + 1) * g.p + x + 1) * co + ch;
                        // SAFETY: idx is a pixel of tile t inside dst (caller contract); the
                        // residual, when used, is the value already there.
                        unsafe {
                            if residual {
                                s = _mm256_add_ps(s, _mm256_loadu_ps(dst.add(idx)));
                            }
                            _mm256_storeu_ps(dst.add(idx), _mm256_max_ps(s, zero));
                        }
                    }
                }
            }
        }
    }
}

/// The AVX-512 versions: 16 channels per register and, with 32 registers, a 6×64 GEMM
/// block (every output channel of a 64-wide layer per pass over a row of `V`). On Zen 4 a
/// 512-bit FMA costs two 256-bit ones, so the gain is in fewer loads, broadcasts and
/// instructions per FMA rather than in peak arithmetic.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{Geom, Tile, WinoConv};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `s + w·x` with a compile-time `w`: nothing for 0, an add/sub for ±1.
    #[inline(always)]
    unsafe fn acc(s: __m512, w: f32, x: __m512) -> __m512 {
        // SAFETY: only called from AVX-512F functions.
        unsafe {
            if w == 0.0 {
                s
            } else if w == 1.0 {
                _mm512_add_ps(s, x)
            } else if w == -1.0 {
                _mm512_sub_ps(s, x)
            } else {
                _mm512_fmadd_ps(_mm512_set1_ps(w), x, s)
            }
        }
    }

    /// Lane mask of channels `ch..min(ch + 16, c)`: all 16, or the last 8 of a layer whose
    /// input width is an odd multiple of 8 (the stem's padded planes).
    #[inline(always)]
    fn lanes(c: usize, ch: usize) -> __mmask16 {
        let n = (c - ch).min(16);
        ((1u32 << n) - 1) as __mmask16
    }

    /// # Safety
    /// AVX-512F available; `src` holds every patch of tiles `[t0, t1)`; `v` is large enough.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn input_transform<T: Tile>(
        l: &WinoConv,
        g: &Geom,
        src: &[f32],
        t0: usize,
        t1: usize,
        v: &mut [f32],
    ) {
        let al = T::AL;
        let c = l.cin;
        let nt = t1 - t0;
        let zero = _mm512_setzero_ps();
        let last = g.patch_base(t1 - 1, c) + ((al - 1) * g.p + al - 1) * c + c;
        assert!(last <= src.len() && v.len() >= al * al * nt * c && l.alpha == al);
        let sp = src.as_ptr();
        let vp = v.as_mut_ptr();
        let xstride = nt * c;
        for t in t0..t1 {
            let base = g.patch_base(t, c);
            for ch in (0..c).step_by(16) {
                let k = lanes(c, ch);
                // tmp = Bᵀ d, one column of the patch at a time (uninitialised: only the
                // al×al entries written below are read).
                let mut tmp = [[MaybeUninit::<__m512>::uninit(); 8]; 8];
                for j in 0..al {
                    let mut col = [zero; 8];
                    for (i, x) in col.iter_mut().enumerate().take(al) {
                        // SAFETY: the lanes of `k` lie inside the patch of tile t (bounds
                        // asserted above; patch bases grow with t); masked lanes are not read.
                        *x = unsafe {
                            _mm512_maskz_loadu_ps(k, sp.add(base + (i * g.p + j) * c + ch))
                        };
                    }
                    for i in 0..al {
                        let mut s = zero;
                        for kk in 0..al {
                            // SAFETY: AVX-512F (this function's target feature).
                            s = unsafe { acc(s, T::BT[i][kk], col[kk]) };
                        }
                        tmp[i][j] = MaybeUninit::new(s);
                    }
                }
                // V = tmp B, row by row, stored to V[ξ][t][ch].
                let out = (t - t0) * c + ch;
                for (i, row) in tmp.iter().enumerate().take(al) {
                    for j in 0..al {
                        let mut s = zero;
                        for kk in 0..al {
                            // SAFETY: AVX-512F; row[kk] (kk < al) was written above.
                            s = unsafe { acc(s, T::BT[j][kk], row[kk].assume_init()) };
                        }
                        // SAFETY: the lanes of `k` are below al²·nt·c (asserted).
                        unsafe {
                            _mm512_mask_storeu_ps(vp.add(out + (i * al + j) * xstride), k, s)
                        };
                    }
                }
            }
        }
    }

    /// `R` rows × `NV`·16 columns of `C = A · B` with depth `k`.
    ///
    /// # Safety
    /// AVX-512F; `a` has R rows of `k` floats at stride `lda`; `b` has `k` rows of NV·16
    /// floats at stride `ldb`; `c` has R rows of NV·16 floats at stride `ldc`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn kernel<const R: usize, const NV: usize>(
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        ldb: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); NV]; R];
        for kk in 0..k {
            let mut bv = [_mm512_setzero_ps(); NV];
            for (j, x) in bv.iter_mut().enumerate() {
                // SAFETY: row kk of b (caller contract).
                *x = unsafe { _mm512_loadu_ps(b.add(kk * ldb + j * 16)) };
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: element (r, kk) of a (caller contract).
                let av = _mm512_set1_ps(unsafe { *a.add(r * lda + kk) });
                for j in 0..NV {
                    row[j] = _mm512_fmadd_ps(av, bv[j], row[j]);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                // SAFETY: element (r, 16j) of c (caller contract).
                unsafe { _mm512_storeu_ps(c.add(r * ldc + j * 16), *x) };
            }
        }
    }

    /// Up to [`max_rows`]`(NV)` rows of one column block.
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rows_block<const NV: usize>(
        rows: usize,
        k: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        ldb: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        // SAFETY: forwarded caller contract; each arm uses `rows` rows. The 4-register-wide
        // block stops at 6 rows (24 accumulators + 4 B rows + 1 broadcast ≤ 32 registers).
        unsafe {
            match rows {
                12 if NV <= 2 => kernel::<12, NV>(k, a, lda, b, ldb, c, ldc),
                11 if NV <= 2 => kernel::<11, NV>(k, a, lda, b, ldb, c, ldc),
                10 if NV <= 2 => kernel::<10, NV>(k, a, lda, b, ldb, c, ldc),
                9 if NV <= 2 => kernel::<9, NV>(k, a, lda, b, ldb, c, ldc),
                8 if NV <= 2 => kernel::<8, NV>(k, a, lda, b, ldb, c, ldc),
                7 if NV <= 2 => kernel::<7, NV>(k, a, lda, b, ldb, c, ldc),
                6 => kernel::<6, NV>(k, a, lda, b, ldb, c, ldc),
                5 => kernel::<5, NV>(k, a, lda, b, ldb, c, ldc),
                4 => kernel::<4, NV>(k, a, lda, b, ldb, c, ldc),
                3 => kernel::<3, NV>(k, a, lda, b, ldb, c, ldc),
                2 => kernel::<2, NV>(k, a, lda, b, ldb, c, ldc),
                _ => kernel::<1, NV>(k, a, lda, b, ldb, c, ldc),
            }
        }
    }

    /// Rows per GEMM block for a block `NV` registers wide (see `rows_block`).
    const fn max_rows(nv: usize) -> usize {
        if nv > 2 {
            6
        } else {
            12
        }
    }

    /// `M[ξ] = V[ξ] · U[ξ]` for every ξ.
    ///
    /// # Safety
    /// AVX-512F; `l.cout` a multiple of 16; `v` ≥ alpha²·nt·cin, `m` ≥ alpha²·nt·cout floats.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn gemm(l: &WinoConv, nt: usize, v: &[f32], m: &mut [f32]) {
        let (ci, co) = (l.cin, l.cout);
        let xis = l.alpha * l.alpha;
        assert!(v.len() >= xis * nt * ci && m.len() >= xis * nt * co && l.u.len() >= xis * ci * co);
        assert!(co.is_multiple_of(16));
        for xi in 0..xis {
            // SAFETY: slice starts within bounds (asserted above).
            let (a, b, c) = unsafe {
                (
                    v.as_ptr().add(xi * nt * ci),
                    l.u.as_ptr().add(xi * ci * co),
                    m.as_mut_ptr().add(xi * nt * co),
                )
            };
            let mut col = 0;
            while col < co {
                let nv = ((co - col) / 16).min(4);
                let nv = if nv == 3 { 2 } else { nv };
                let mut r = 0;
                while r < nt {
                    let rows = (nt - r).min(max_rows(nv));
                    // SAFETY: rows r..r+rows < nt of a and c, columns col..col+16·nv ≤ co.
                    unsafe {
                        let (ar, br, cr) = (a.add(r * ci), b.add(col), c.add(r * co + col));
                        match nv {
                            4 => rows_block::<4>(rows, ci, ar, ci, br, co, cr, co),
                            2 => rows_block::<2>(rows, ci, ar, ci, br, co, cr, co),
                            _ => rows_block::<1>(rows, ci, ar, ci, br, co, cr, co),
                        }
                    }
                    r += rows;
                }
                col += 16 * nv;
            }
        }
    }

    /// # Safety
    /// AVX-512F, `l.cout` a multiple of 16, and the contract of [`super::conv_tiles`].
    #[target_feature(enable = "avx512f")]
    pub unsafe fn output_transform<T: Tile>(
        l: &WinoConv,
        g: &Geom,
        mb: &[f32],
        t0: usize,
        t1: usize,
        residual: bool,
        dst: *mut f32,
    ) {
        let (al, mm, co) = (T::AL, T::M, l.cout);
        let nt = t1 - t0;
        let tpp = g.tiles_per_pos();
        assert!(mb.len() >= al * al * nt * co && l.bias.len() >= co && l.alpha == al && l.m == mm);
        assert!(co.is_multiple_of(16));
        let mp = mb.as_ptr();
        let zero = _mm512_setzero_ps();
        let xstride = nt * co;
        for t in t0..t1 {
            let (b, r) = (t / tpp, t % tpp);
            let (ty, tx) = (r / g.tiles, r % g.tiles);
            let full = (ty + 1) * mm <= g.n && (tx + 1) * mm <= g.n;
            for ch in (0..co).step_by(16) {
                // tmp = Aᵀ M, one column at a time (uninitialised: see input_transform).
                let mut tmp = [[MaybeUninit::<__m512>::uninit(); 8]; 8];
                let inp = (t - t0) * co + ch;
                for j in 0..al {
                    let mut col = [zero; 8];
                    for (k, x) in col.iter_mut().enumerate().take(al) {
                        // SAFETY: below al²·nt·co (asserted).
                        *x = unsafe { _mm512_loadu_ps(mp.add(inp + (k * al + j) * xstride)) };
                    }
                    for i in 0..mm {
                        let mut s = zero;
                        for k in 0..al {
                            // SAFETY: AVX-512F.
                            s = unsafe { acc(s, T::AT[i][k], col[k]) };
                        }
                        tmp[i][j] = MaybeUninit::new(s);
                    }
                }
                // SAFETY: ch + 16 ≤ co = bias length.
                let bias = unsafe { _mm512_loadu_ps(l.bias.as_ptr().add(ch)) };
                for (i, row) in tmp.iter().enumerate().take(mm) {
                    let y = ty * mm + i;
                    for j in 0..mm {
                        let x = tx * mm + j;
                        if !full && (y >= g.n || x >= g.n) {
                            continue;
                        }
                        let mut s = bias;
                        for k in 0..al {
                            // SAFETY: AVX-512F; row[k] (i < m, k < al) was written above.
                            s = unsafe { acc(s, T::AT[j][k], row[k].assume_init()) };
                        }
                        let idx = ((b * g.p + y + 1) * g.p + x + 1) * co + ch;
                        // SAFETY: idx is a pixel of tile t inside dst (caller contract); the
                        // residual, when used, is the value already there.
                        unsafe {
                            if residual {
                                s = _mm512_add_ps(s, _mm512_loadu_ps(dst.add(idx)));
                            }
                            _mm512_storeu_ps(dst.add(idx), _mm512_max_ps(s, zero));
                        }
                    }
                }
            }
        }
    }
}
