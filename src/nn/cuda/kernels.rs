//! The CUDA C source of the backend's own kernels, compiled at run time by NVRTC.
//!
//! The convolutions themselves are cuBLAS GEMMs (see [`super::plan`] for the layouts);
//! these kernels do the rest: converting to the stored type, the explicit im2col, the fused
//! bias + residual + ReLU epilogue of each convolution, and the heads' gathering and bias.
//! The same source is compiled twice: with `PCN_HALF` (activations stored as fp16, read and
//! written through `cvt` instructions, arithmetic in fp32) and without (fp32). It includes
//! no header, so it compiles with NVRTC alone (no CUDA toolkit headers needed).

/// Every kernel's name (each must appear as `.entry NAME` in the compiled PTX).
pub const KERNEL_NAMES: [&str; 5] = [
    "to_act",
    "im2col3x3",
    "bias_act",
    "head_gather",
    "bias_rows",
];

/// Threads per block of every kernel (grid-stride loops cover any size).
pub const BLOCK: u32 = 256;

/// The most blocks a launch uses (grid-stride loops do the rest).
pub const MAX_GRID: u32 = 65_535 * 8;

/// Blocks for `total` elements.
pub fn grid_for(total: usize) -> u32 {
    let blocks = total.div_ceil(BLOCK as usize).max(1);
    blocks.min(MAX_GRID as usize) as u32
}

/// The NVRTC options for a device of compute capability `major.minor` (PTX for that
/// virtual architecture; the driver compiles it for the device at load) in `half` mode.
pub fn nvrtc_options(major: i32, minor: i32, half: bool) -> Vec<String> {
    let mut v = vec![
        format!("--gpu-architecture=compute_{major}{minor}"),
        "--std=c++17".to_string(),
    ];
    if half {
        v.push("-DPCN_HALF=1".to_string());
    }
    v
}

/// The NVRTC options of the implicit-GEMM kernels ([`super::mma`]): always fp16, and only
/// for compute capability 8.0 and later (`mma.sync.m16n8k16` with f16 inputs).
pub fn mma_nvrtc_options(major: i32, minor: i32) -> Vec<String> {
    vec![
        format!("--gpu-architecture=compute_{major}{minor}"),
        "--std=c++17".to_string(),
    ]
}

/// The kernels' source (see the module documentation).
pub const SOURCE: &str = r#"
#ifdef PCN_HALF
typedef unsigned short act_t;
__device__ __forceinline__ float act_ld(act_t v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}
__device__ __forceinline__ act_t act_st(float f) {
    act_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
#else
typedef float act_t;
__device__ __forceinline__ float act_ld(act_t v) { return v; }
__device__ __forceinline__ act_t act_st(float f) { return f; }
#endif

#define GRID_LOOP(i, total) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (total); \
         i += (long long)gridDim.x * blockDim.x)

// dst[i] = src[i] in the stored type (inputs, weights).
extern "C" __global__ void to_act(const float* __restrict__ src, act_t* __restrict__ dst,
                                  long long n) {
    GRID_LOOP(i, n) { dst[i] = act_st(src[i]); }
}

// col[k][m] (k < kp, m < M) for a 3x3 convolution with zero padding 1: k = c*9 + ky*3 + kx,
// m = b*n*n + y*n + x; rows k >= cin*9 are zero (padding for the GEMM). Element (b, c, p)
// of x is at b*sb + c*sc + p (NCHW input: sb = cin*n*n, sc = n*n; trunk [C][M]: sb = n*n,
// sc = M). One work item is one (channel group g = k / 9, position m) and writes the 9 rows
// of its group: the integer divisions that locate m are paid once per 9 elements, and they
// are 32-bit whenever the item count fits (64-bit division is a long software routine on the
// GPU). Consecutive items are consecutive m, so every row's reads and writes stay coalesced.
extern "C" __global__ void im2col3x3(const act_t* __restrict__ x, act_t* __restrict__ col,
                                     int n, int cin, int kp, int M, long long sb,
                                     long long sc) {
    const int area = n * n;
    const int groups = (kp + 8) / 9;
    const long long total = (long long)groups * M;
    const bool narrow = total <= 0xffffffffLL;
    GRID_LOOP(i, total) {
        int g, m;
        if (narrow) {
            const unsigned int iu = (unsigned int)i;
            g = (int)(iu / (unsigned int)M);
            m = (int)(iu - (unsigned int)g * (unsigned int)M);
        } else {
            g = (int)(i / M);
            m = (int)(i - (long long)g * M);
        }
        const int b = m / area;
        const int p = m - b * area;
        const int py = p / n;
        const int px = p - py * n;
        const act_t* src = x + (long long)b * sb + (long long)g * sc;
        act_t* dst = col + (long long)g * 9 * M + m;
#pragma unroll
        for (int r = 0; r < 9; ++r) {
            if (g * 9 + r >= kp) break;
            const int y = py + r / 3 - 1;
            const int xx = px + r % 3 - 1;
            act_t v = act_st(0.0f);
            if (g < cin && y >= 0 && y < n && xx >= 0 && xx < n) v = src[y * n + xx];
            dst[(long long)r * M] = v;
        }
    }
}

// out[c][m] = act(acc[c][m] + bias[c] (+ res[c][m])), act = ReLU when relu != 0. res may
// be out itself (the residual add is element-wise), so neither is __restrict__.
extern "C" __global__ void bias_act(const float* __restrict__ acc,
                                    const float* __restrict__ bias, const act_t* res,
                                    act_t* out, int C, int M, int relu, int has_res) {
    const long long total = (long long)C * M;
    const bool narrow = total <= 0xffffffffLL;
    GRID_LOOP(i, total) {
        // 32-bit division where it fits (see im2col3x3).
        const int c = narrow ? (int)((unsigned int)i / (unsigned int)M) : (int)(i / M);
        float v = acc[i] + bias[c];
        if (has_res) v += act_ld(res[i]);
        if (relu) v = fmaxf(v, 0.0f);
        out[i] = act_st(v);
    }
}

// feat[b][c*area + p] = ReLU(acc[(c0 + c)][b*area + p] + bias[c0 + c]) for c < cn: a head's
// 1x1-convolution output flattened channel-major per position (PyTorch's order).
extern "C" __global__ void head_gather(const float* __restrict__ acc,
                                       const float* __restrict__ bias,
                                       float* __restrict__ feat, int c0, int cn, int area,
                                       int rows, int M) {
    const int per = cn * area;
    const long long total = (long long)rows * per;
    GRID_LOOP(i, total) {
        const int b = (int)(i / per);
        const int r = (int)(i - (long long)b * per);
        const int c = r / area;
        const int p = r - c * area;
        const float v = acc[(long long)(c0 + c) * M + (long long)b * area + p] + bias[c0 + c];
        feat[i] = fmaxf(v, 0.0f);
    }
}

// y[r][o] += bias[o], then act: 0 none, 1 ReLU, 2 tanh.
extern "C" __global__ void bias_rows(float* __restrict__ y, const float* __restrict__ bias,
                                     int n_out, int rows, int act) {
    const long long total = (long long)rows * n_out;
    GRID_LOOP(i, total) {
        const int o = (int)(i % n_out);
        float v = y[i] + bias[o];
        if (act == 1) v = fmaxf(v, 0.0f);
        if (act == 2) v = tanhf(v);
        y[i] = v;
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_is_defined_once() {
        for k in KERNEL_NAMES {
            let decl = format!("__global__ void {k}(");
            assert_eq!(SOURCE.matches(&decl).count(), 1, "{k}");
        }
        assert_eq!(SOURCE.matches("__global__").count(), KERNEL_NAMES.len());
        // No header: NVRTC alone must compile it.
        assert!(!SOURCE.contains("#include"));
    }

    #[test]
    fn grids_cover_and_are_capped() {
        assert_eq!(grid_for(0), 1);
        assert_eq!(grid_for(1), 1);
        assert_eq!(grid_for(256), 1);
        assert_eq!(grid_for(257), 2);
        assert_eq!(grid_for(usize::MAX / 2), MAX_GRID);
        let o = nvrtc_options(9, 0, true);
        assert_eq!(o[0], "--gpu-architecture=compute_90");
        assert!(o.contains(&"-DPCN_HALF=1".to_string()));
        assert!(!nvrtc_options(8, 6, false)
            .iter()
            .any(|s| s.contains("PCN_HALF")));
    }

    /// Compiles the source in both modes to PTX with the NVRTC library found by the
    /// backend's discovery (`PCN_CUDA_LIB_DIR`, the `nvidia-cuda-nvrtc` wheel that
    /// `make test` installs under `.tools/nvrtc`, or the system's). Without NVRTC it prints a
    /// notice and checks nothing, unless `PCN_REQUIRE_NVRTC=1` (set by `make test` when the
    /// wheel installed), which makes a missing NVRTC a failure.
    #[test]
    fn kernels_compile_to_ptx_with_nvrtc() {
        use super::super::libs::{self, CudaLib};
        let mut env = libs::Env::from_process();
        let tools = concat!(env!("CARGO_MANIFEST_DIR"), "/.tools/nvrtc/nvidia/cu13/lib");
        env.lib_dir = Some(match env.lib_dir.take() {
            Some(d) => format!("{d}:{tools}"),
            None => tools.to_string(),
        });
        let required = std::env::var("PCN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
        let (loaded, errors) = libs::preload(&env);
        let found = loaded.by_path.iter().any(|(l, _)| *l == CudaLib::Nvrtc)
            // SAFETY: only probes whether the library can be opened by name.
            || unsafe { cudarc::nvrtc::sys::is_culib_present() };
        if !found {
            assert!(
                !required,
                "PCN_REQUIRE_NVRTC=1 but no libnvrtc was found ({errors:?})"
            );
            println!(
                "NOTICE: no libnvrtc found (set {}): PTX compile test skipped",
                libs::LIB_DIR_ENV
            );
            return;
        }
        for (major, minor) in [(8, 0), (9, 0)] {
            for half in [true, false] {
                let opts = cudarc::nvrtc::CompileOptions {
                    options: nvrtc_options(major, minor, half),
                    ..Default::default()
                };
                let ptx = cudarc::nvrtc::compile_ptx_with_opts(SOURCE, opts)
                    .unwrap_or_else(|e| panic!("compute_{major}{minor} half={half}: {e:?}"));
                let text = ptx.to_src();
                for k in KERNEL_NAMES {
                    assert!(
                        text.contains(&format!(".entry {k}(")),
                        "{k} missing from the PTX (compute_{major}{minor}, half={half})"
                    );
                }
                assert_eq!(text.contains("cvt.rn.f16.f32"), half);
                assert!(text.contains(&format!(".target sm_{major}{minor}")));
            }
            // The implicit-GEMM kernels, generated per network shape: 9x9 with 18 planes
            // (PCN and AlphaZero heads) and 15x15 with 4 planes.
            for t in mma_tilings() {
                let opts = cudarc::nvrtc::CompileOptions {
                    options: mma_nvrtc_options(major, minor),
                    ..Default::default()
                };
                let ptx =
                    cudarc::nvrtc::compile_ptx_with_opts(t.source(), opts).unwrap_or_else(|e| {
                        panic!("mma compute_{major}{minor} {}x{}: {e:?}", t.n, t.n)
                    });
                let text = ptx.to_src();
                for k in super::super::mma::KERNEL_NAMES {
                    assert!(
                        text.contains(&format!(".entry {k}(")),
                        "{k} missing from the PTX (compute_{major}{minor}, {}x{})",
                        t.n,
                        t.n
                    );
                }
                // Tensor-core MMAs, 8 per k16 step per m16 tile (unrolled): at least 8.
                let mmas = text
                    .matches("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
                    .count();
                assert!(mmas >= 8, "{mmas} MMAs (compute_{major}{minor})");
                println!(
                    "PTX compute_{major}{minor} {}x{} bpb {}: {} bytes, {mmas} mma.sync",
                    t.n,
                    t.n,
                    t.bpb,
                    text.len()
                );
            }
        }
    }

    fn mma_tilings() -> Vec<super::super::mma::Tiling> {
        use crate::nn::cuda::plan::Plan;
        use crate::nn::eval::RandomEvaluator;
        use crate::nn::{NetGame, NetKind};
        let go = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::Pcn { bins: 500 });
        let goaz = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::AlphaZero);
        let gm = RandomEvaluator::info_for(NetGame::Gomoku, NetKind::AlphaZero);
        [
            Plan::new(&go, 5, 64, 0),
            Plan::new(&goaz, 5, 64, 256),
            Plan::new(&gm, 5, 64, 256),
        ]
        .iter()
        .map(|p| super::super::mma::Tiling::new(p).unwrap())
        .collect()
    }
}
