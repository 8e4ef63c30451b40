//! The CUDA backend (feature `cuda`): cudarc with the CUDA libraries loaded at run time.
//!
//! Design (see docs/gpu.md for the user's side):
//! - **BatchNorm folded** at load (the CPU backend's [`crate::nn::cpu::folded`]).
//! - **Convolutions as cuBLAS GEMMs** over an explicit im2col matrix built by an NVRTC
//!   kernel ([`kernels`]), the GEMM reading fp16 (tensor cores, fp32 accumulation) or
//!   strict fp32 ([`Precision`]); one fused kernel adds bias and residual and applies the
//!   ReLU. With 64 channels a 3x3 convolution is a `M × 64 × 576` GEMM (`M` = batch · N²),
//!   large and regular at search batch sizes, which is what cuBLAS's tensor-core kernels
//!   are tuned for; the explicit im2col costs memory traffic but no hand-written matrix
//!   code, and needs neither cuDNN (absent from many installations) nor its plan cache.
//! - **CUDA graphs**, one per batch bucket ([`plan::BUCKETS`]) per lane: a whole forward
//!   pass (about 40 launches) replays as one launch.
//! - **Pinned host buffers** and **two lanes** (each: a stream, a cuBLAS handle, device
//!   buffers, graphs), so that two callers (the batching evaluator's workers) keep two
//!   batches in flight: one lane copies and computes while the other's batch is filled.
//!
//! Libraries are found by [`libs`] (system CUDA, Python wheels, `PCN_CUDA_LIB_DIR`).
//! Every failure to find a driver, a device or a library is a [`CudaError`], turned into
//! [`NnError::Unavailable`].

pub(crate) mod host;
pub mod kernels;
pub mod libs;
pub mod mma;
pub mod plan;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::cublas::sys as blas_sys;
use cudarc::cublas::CudaBlas;
use cudarc::driver::{
    result as drv, sys as drv_sys, CudaContext, CudaFunction, CudaGraph, CudaStream,
};
use thiserror::Error;

use crate::nn::cpu::folded::{Folded, Heads};
use crate::nn::model::Model;
use crate::nn::{Evaluator, NetInfo, NetKind, NetOutput, NnError};

pub use plan::Precision;
use plan::{Buf, GraphKey, Op, Plan};

/// Why the CUDA backend cannot run.
#[derive(Debug, Error)]
pub enum CudaError {
    /// No CUDA driver library (`libcuda.so.1`) could be loaded.
    #[error("no CUDA driver found (libcuda.so.1 is installed with the NVIDIA driver; searched the loader path and {searched})")]
    NoDriver {
        /// The folders searched, for the message.
        searched: String,
    },
    /// The driver loaded but reports no usable GPU.
    #[error("no CUDA GPU available: {0}")]
    NoDevice(String),
    /// A CUDA library other than the driver is missing.
    #[error("{lib} not found (install the {wheel} wheel or the CUDA toolkit, or point {env} at its folder; searched the loader path and {searched})")]
    MissingLibrary {
        /// The library's file name.
        lib: &'static str,
        /// The Python wheel that ships it.
        wheel: &'static str,
        /// The environment variable to set.
        env: &'static str,
        /// The folders searched.
        searched: String,
    },
    /// A library file was found but could not be loaded.
    #[error("cannot load {path}: {reason}")]
    BadLibrary {
        /// The file.
        path: String,
        /// The loader's message.
        reason: String,
    },
    /// NVRTC rejected the kernels (a bug or an NVRTC too old for the GPU).
    #[error("NVRTC could not compile the kernels for compute_{arch}: {log}")]
    Compile {
        /// The target architecture (`90`).
        arch: String,
        /// NVRTC's log.
        log: String,
    },
    /// A CUDA driver call failed.
    #[error("CUDA {what}: {reason}")]
    Driver {
        /// What was being done.
        what: &'static str,
        /// The driver's error.
        reason: String,
    },
    /// A cuBLAS call failed.
    #[error("cuBLAS {what}: {reason}")]
    Blas {
        /// What was being done.
        what: &'static str,
        /// cuBLAS's status.
        reason: String,
    },
    /// The model is not one this backend runs.
    #[error("model not supported by the CUDA backend: {0}")]
    Model(String),
}

impl CudaError {
    /// Whether this error means "no usable GPU here" (rather than a failure while running).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            CudaError::NoDriver { .. }
                | CudaError::NoDevice(_)
                | CudaError::MissingLibrary { .. }
                | CudaError::BadLibrary { .. }
                | CudaError::Compile { .. }
        )
    }
}

impl From<CudaError> for NnError {
    fn from(e: CudaError) -> NnError {
        if e.is_unavailable() {
            NnError::Unavailable(format!("cuda: {e}"))
        } else {
            NnError::Failed(format!("cuda: {e}"))
        }
    }
}

fn drv_err(what: &'static str) -> impl Fn(drv::DriverError) -> CudaError {
    move |e| CudaError::Driver {
        what,
        reason: format!("{e:?}"),
    }
}

fn blas_err(what: &'static str) -> impl Fn(cudarc::cublas::result::CublasError) -> CudaError {
    move |e| CudaError::Blas {
        what,
        reason: format!("{e:?}"),
    }
}

fn searched(env: &libs::Env, lib: libs::CudaLib) -> String {
    let d = libs::search_dirs(env, lib);
    if d.is_empty() {
        "no other folder".into()
    } else {
        d.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Finds and loads the libraries, checking that each can be had (cudarc itself panics on
/// a missing library, so nothing of cudarc runs before this has succeeded).
fn load_libraries() -> Result<libs::Loaded, CudaError> {
    let env = libs::Env::from_process();
    let (loaded, errors) = libs::preload(&env);
    if let Some((_, path, reason)) = errors.first() {
        return Err(CudaError::BadLibrary {
            path: path.display().to_string(),
            reason: reason.clone(),
        });
    }
    // SAFETY: these only try to open the libraries by name (no CUDA call is made).
    let present = unsafe {
        [
            (
                libs::CudaLib::Driver,
                cudarc::driver::sys::is_culib_present(),
            ),
            (libs::CudaLib::Nvrtc, cudarc::nvrtc::sys::is_culib_present()),
            (
                libs::CudaLib::Cublas,
                cudarc::cublas::sys::is_culib_present(),
            ),
        ]
    };
    for (lib, ok) in present {
        if ok {
            continue;
        }
        return Err(match lib {
            libs::CudaLib::Driver => CudaError::NoDriver {
                searched: searched(&env, lib),
            },
            _ => CudaError::MissingLibrary {
                lib: lib.stem(),
                wheel: lib.wheel(),
                env: libs::LIB_DIR_ENV,
                searched: searched(&env, lib),
            },
        });
    }
    Ok(loaded)
}

/// A device allocation owned by the backend (freed on drop).
struct DevBuf {
    ptr: drv_sys::CUdeviceptr,
    bytes: usize,
}

impl DevBuf {
    fn new(bytes: usize) -> Result<DevBuf, CudaError> {
        // SAFETY: a plain allocation in the current context (bound by the caller).
        let ptr = unsafe { drv::malloc_sync(bytes.max(4)) }.map_err(drv_err("allocation"))?;
        Ok(DevBuf { ptr, bytes })
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_sync` and freed once; no graph or stream uses it any
        // more (lanes synchronise before dropping buffers).
        let _ = unsafe { drv::free_sync(self.ptr) };
    }
}

/// Page-locked host memory of `len` floats (fast, asynchronous copies).
struct Pinned {
    ptr: *mut f32,
    len: usize,
}

impl Pinned {
    fn new(len: usize) -> Result<Pinned, CudaError> {
        // SAFETY: a plain page-locked allocation; the memory is zeroed below before use.
        let p =
            unsafe { drv::malloc_host(len.max(1) * 4, 0) }.map_err(drv_err("pinned allocation"))?;
        let ptr = p as *mut f32;
        // SAFETY: `ptr` points to `len` freshly allocated floats.
        unsafe { std::ptr::write_bytes(ptr, 0, len.max(1)) };
        Ok(Pinned { ptr, len })
    }

    fn slice(&self) -> &[f32] {
        // SAFETY: `len` floats owned by `self`, initialised at allocation.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn slice_mut(&mut self) -> &mut [f32] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_host`, freed once, after the lane synchronised.
        let _ = unsafe { drv::free_host(self.ptr as *mut c_void) };
    }
}

/// The kernels of one precision.
struct Kernels {
    to_act: CudaFunction,
    im2col: CudaFunction,
    bias_act: CudaFunction,
    head_gather: CudaFunction,
    bias_rows: CudaFunction,
    /// The implicit-GEMM kernels, when the trunk runs on them ([`mma`]).
    mma: Option<MmaKernels>,
}

/// The implicit-GEMM kernels of one network shape (generated source, [`mma::Tiling`]).
struct MmaKernels {
    tiling: mma::Tiling,
    stem: CudaFunction,
    block: CudaFunction,
    heads: CudaFunction,
}

/// Which convolution path the fp16 backend takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConvPath {
    /// The implicit-GEMM tensor-core kernels where the GPU and the network allow (fp16,
    /// compute capability 8.0 or later, shared memory for the tiling), else im2col.
    Auto,
    /// Explicit im2col + cuBLAS GEMMs (the fallback, kept selectable for comparison).
    Im2col,
}

/// One kernel argument (kept alive while the launch reads it).
enum KArg {
    Ptr(u64),
    Int(i32),
    Long(i64),
}

/// A layer on the device: weights, bias.
struct DevLayer {
    w: DevBuf,
    b: DevBuf,
}

/// The network's weights on the device (laid out by [`host::host_weights`]).
struct Weights {
    /// Trunk convolutions (weights in the stored type).
    convs: Vec<DevLayer>,
    /// The stacked 1x1 head convolutions (weights in the stored type).
    head: DevLayer,
    /// Fully connected layers (f32).
    fcs: Vec<DevLayer>,
}

/// One lane: a stream with its own buffers and graphs (see the module documentation).
struct Lane {
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    _workspace: DevBuf,
    /// Rows the buffers hold (0 before the first use).
    cap: usize,
    generation: u32,
    bufs: Option<LaneBufs>,
    graphs: HashMap<GraphKey, CudaGraph>,
}

struct LaneBufs {
    input: DevBuf,
    x0: DevBuf,
    a: DevBuf,
    h: DevBuf,
    col: DevBuf,
    acc: DevBuf,
    feat: DevBuf,
    hidden: DevBuf,
    out: DevBuf,
    host_in: Pinned,
    host_out: Pinned,
}

// SAFETY: a lane is only used under its mutex, so its graphs (which CUDA requires to be
// used by one thread at a time) and handles are never used concurrently; CUDA objects may
// be used from any thread once the context is bound (cudarc binds it in every call, and
// `Backend::bind` does before raw calls).
unsafe impl Send for Lane {}

/// cuBLAS's workspace per lane: set explicitly so that graph capture never allocates.
const BLAS_WORKSPACE: usize = 32 << 20;

/// The CUDA evaluator.
pub struct CudaBackend {
    info: NetInfo,
    plan: Plan,
    prec: Precision,
    ctx: Arc<CudaContext>,
    kernels: Kernels,
    weights: Weights,
    lanes: Vec<Mutex<Lane>>,
    next_lane: AtomicUsize,
    use_graphs: bool,
    device_name: String,
    loaded: libs::Loaded,
}

/// Lanes (batches in flight).
pub const LANES: usize = 2;

impl CudaBackend {
    /// Prepares `model` on GPU 0 in `prec`. Errors when no driver, GPU or library is
    /// found ([`CudaError::is_unavailable`]) or a CUDA call fails; never panics on a
    /// missing library (checked before cudarc is called).
    pub fn new(model: &Model, prec: Precision) -> Result<CudaBackend, CudaError> {
        CudaBackend::with_path(model, prec, ConvPath::Auto)
    }

    /// As [`CudaBackend::new`], choosing the convolution path.
    pub fn with_path(
        model: &Model,
        prec: Precision,
        path: ConvPath,
    ) -> Result<CudaBackend, CudaError> {
        let loaded = load_libraries()?;
        // cudarc panics where a symbol is missing from an older library; turn that into an
        // error rather than a crash.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            CudaBackend::build(model, prec, loaded, path)
        }));
        match r {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                Err(CudaError::NoDevice(format!(
                    "CUDA library call failed: {msg}"
                )))
            }
        }
    }

    fn build(
        model: &Model,
        prec: Precision,
        loaded: libs::Loaded,
        path: ConvPath,
    ) -> Result<CudaBackend, CudaError> {
        drv::init().map_err(|e| CudaError::NoDevice(format!("cuInit: {e:?}")))?;
        let count =
            CudaContext::device_count().map_err(|e| CudaError::NoDevice(format!("{e:?}")))?;
        if count < 1 {
            return Err(CudaError::NoDevice("the driver sees no GPU".into()));
        }
        let ctx = CudaContext::new(0).map_err(|e| CudaError::NoDevice(format!("{e:?}")))?;
        // SAFETY: every buffer of this backend is used on one stream only (its lane's), and
        // the weights are uploaded and synchronised before any lane reads them, so cudarc's
        // cross-stream event tracking has nothing to do (and would get in the way of graph
        // capture).
        unsafe { ctx.disable_event_tracking() };
        let device_name = ctx.name().unwrap_or_else(|_| "GPU 0".into());
        let (major, minor) = ctx
            .compute_capability()
            .map_err(drv_err("compute capability"))?;
        let mut kernels = compile(&ctx, major, minor, prec)?;

        let folded = Folded::new(model).map_err(|e| CudaError::Model(e.to_string()))?;
        let hidden = match &folded.heads {
            Heads::AlphaZero { fc1, .. } => fc1.n_out,
            Heads::Pcn { .. } => 0,
        };
        let plan = Plan::new(&model.info, folded.blocks.len(), folded.filters, hidden);
        // The implicit-GEMM path needs fp16 (the MMA's inputs), sm_80's mma.m16n8k16, and
        // the tiling's shared memory; otherwise (fp32 reference mode, older GPUs, very wide
        // trunks) the im2col path runs.
        if path == ConvPath::Auto && prec == Precision::F16 && major >= 8 {
            if let Some(t) = mma::Tiling::new(&plan) {
                let optin = ctx
                    .attribute(
                        drv_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                    )
                    .map_err(drv_err("device attribute"))?;
                if t.smem_block().max(t.smem_stem()) <= optin.max(0) as usize {
                    kernels.mma = Some(compile_mma(&ctx, major, minor, t)?);
                }
            }
        }
        let stream0 = ctx.new_stream().map_err(drv_err("stream"))?;
        let tiling = kernels.mma.as_ref().map(|k| &k.tiling);
        let weights = upload_weights(&stream0, &kernels, &folded, model, &plan, prec, tiling)?;
        stream0.synchronize().map_err(drv_err("weight upload"))?;

        let mut lanes = Vec::with_capacity(LANES);
        for _ in 0..LANES {
            let stream = ctx.new_stream().map_err(drv_err("stream"))?;
            let blas = CudaBlas::new(stream.clone()).map_err(blas_err("handle"))?;
            let ws = DevBuf::new(BLAS_WORKSPACE)?;
            // SAFETY: the workspace outlives the handle's use (both live in the lane; the
            // lane synchronises before dropping).
            unsafe {
                blas_sys::cublasSetWorkspace_v2(*blas.handle(), ws.ptr as *mut c_void, ws.bytes)
                    .result()
                    .map_err(blas_err("workspace"))?;
            }
            lanes.push(Mutex::new(Lane {
                stream,
                blas,
                _workspace: ws,
                cap: 0,
                generation: 0,
                bufs: None,
                graphs: HashMap::new(),
            }));
        }
        let use_graphs = std::env::var("PCN_CUDA_GRAPHS").map_or(true, |v| v != "0");
        Ok(CudaBackend {
            info: model.info.clone(),
            plan,
            prec,
            ctx,
            kernels,
            weights,
            lanes,
            next_lane: AtomicUsize::new(0),
            use_graphs,
            device_name,
            loaded,
        })
    }

    /// The GPU's name.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// The precision in use.
    pub fn precision(&self) -> Precision {
        self.prec
    }

    /// Where each library was loaded from (`by name` for the loader's own search).
    pub fn libraries(&self) -> String {
        let mut v: Vec<String> = self
            .loaded
            .by_path
            .iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        for l in &self.loaded.by_name {
            v.push(format!("{} (by name)", l.stem()));
        }
        v.join(", ")
    }

    fn bind(&self) -> Result<(), CudaError> {
        self.ctx.bind_to_thread().map_err(drv_err("bind context"))
    }

    /// A free lane if there is one, else waits for the next one in turn.
    fn lane(&self) -> Result<MutexGuard<'_, Lane>, NnError> {
        let start = self.next_lane.fetch_add(1, Ordering::Relaxed);
        for i in 0..self.lanes.len() {
            if let Ok(g) = self.lanes[(start + i) % self.lanes.len()].try_lock() {
                return Ok(g);
            }
        }
        self.lanes[start % self.lanes.len()]
            .lock()
            .map_err(|_| NnError::Failed("cuda: a lane panicked earlier".into()))
    }

    fn launch(
        &self,
        f: &CudaFunction,
        total: usize,
        stream: &CudaStream,
        args: &mut [KArg],
    ) -> Result<(), CudaError> {
        self.launch_cfg(
            f,
            (kernels::grid_for(total), kernels::BLOCK, 0),
            stream,
            args,
        )
    }

    /// Launches `f` with `(grid, block, dynamic shared bytes)`.
    fn launch_cfg(
        &self,
        f: &CudaFunction,
        (grid, block, smem): (u32, u32, usize),
        stream: &CudaStream,
        args: &mut [KArg],
    ) -> Result<(), CudaError> {
        let mut ptrs: Vec<*mut c_void> = args
            .iter_mut()
            .map(|a| match a {
                KArg::Ptr(v) => v as *mut u64 as *mut c_void,
                KArg::Int(v) => v as *mut i32 as *mut c_void,
                KArg::Long(v) => v as *mut i64 as *mut c_void,
            })
            .collect();
        // SAFETY: the argument list matches the kernel's parameters (types and count, see
        // kernels::SOURCE and mma's BODY), every pointer is a live device buffer sized by the
        // plan, the dynamic shared memory is what the kernel was allowed at load
        // (compile_mma), and `args` outlives the call (the driver copies the values at
        // launch or capture).
        unsafe {
            drv::launch_kernel(
                f.cu_function(),
                (grid, 1, 1),
                (block, 1, 1),
                smem as u32,
                stream.cu_stream(),
                &mut ptrs,
            )
        }
        .map_err(drv_err("kernel launch"))
    }

    /// `C[n×m] (col-major m×n, ld m) = A · B` in cuBLAS terms: `C = op(A)·B` with `A`
    /// `m×k` (or `k×m` transposed, `trans_a`), `B` `k×n`; `C` is always f32.
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        &self,
        blas: &CudaBlas,
        trans_a: bool,
        (m, n, k): (usize, usize, usize),
        a: u64,
        lda: usize,
        b: u64,
        ldb: usize,
        c: u64,
        ldc: usize,
        half: bool,
    ) -> Result<(), CudaError> {
        let ty = if half {
            blas_sys::cudaDataType::CUDA_R_16F
        } else {
            blas_sys::cudaDataType::CUDA_R_32F
        };
        let alpha: f32 = 1.0;
        let beta: f32 = 0.0;
        let op_a = if trans_a {
            blas_sys::cublasOperation_t::CUBLAS_OP_T
        } else {
            blas_sys::cublasOperation_t::CUBLAS_OP_N
        };
        // SAFETY: the pointers are live device buffers holding at least the matrices the
        // dimensions describe (sized by the plan); alpha and beta are host scalars read
        // during the call (or captured into the graph).
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *blas.handle(),
                op_a,
                blas_sys::cublasOperation_t::CUBLAS_OP_N,
                m as i32,
                n as i32,
                k as i32,
                &alpha as *const f32 as *const c_void,
                a as *const c_void,
                ty,
                lda as i32,
                b as *const c_void,
                ty,
                ldb as i32,
                &beta as *const f32 as *const c_void,
                c as *mut c_void,
                blas_sys::cudaDataType::CUDA_R_32F,
                ldc as i32,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(blas_err("GemmEx"))
    }

    /// The device address of `b` plus `off` elements of `size` bytes.
    fn ptr(&self, bufs: &LaneBufs, b: Buf, off: usize, size: usize) -> Result<u64, CudaError> {
        let missing = || CudaError::Model(format!("no buffer {b:?}"));
        let base = match b {
            Buf::Input => bufs.input.ptr,
            Buf::X0 => bufs.x0.ptr,
            Buf::A => bufs.a.ptr,
            Buf::H => bufs.h.ptr,
            Buf::Col => bufs.col.ptr,
            Buf::Acc => bufs.acc.ptr,
            Buf::Feat => bufs.feat.ptr,
            Buf::Hidden => bufs.hidden.ptr,
            Buf::Out => bufs.out.ptr,
            Buf::ConvW(i) => self.weights.convs.get(i).ok_or_else(missing)?.w.ptr,
            Buf::ConvB(i) => self.weights.convs.get(i).ok_or_else(missing)?.b.ptr,
            Buf::HeadW => self.weights.head.w.ptr,
            Buf::HeadB => self.weights.head.b.ptr,
            Buf::FcW(i) => self.weights.fcs.get(i).ok_or_else(missing)?.w.ptr,
            Buf::FcB(i) => self.weights.fcs.get(i).ok_or_else(missing)?.b.ptr,
        };
        Ok(base + (off * size) as u64)
    }

    /// Records the forward pass of `rows` rows (a bucket) on the lane's stream, step by
    /// step as [`Plan::forward_ops`] lists them: from the device input buffer to the device
    /// output buffer.
    fn record_forward(&self, lane: &Lane, rows: usize) -> Result<(), CudaError> {
        let bufs = lane.bufs.as_ref().ok_or_else(|| CudaError::Driver {
            what: "forward",
            reason: "buffers not allocated".into(),
        })?;
        let s = &lane.stream;
        let half = self.prec == Precision::F16;
        let es = self.prec.bytes();
        let area = self.plan.area();
        let m = rows * area;
        let i32c = |x: usize| KArg::Int(x as i32);
        let ops = match &self.kernels.mma {
            Some(_) => self.plan.forward_ops_mma(rows),
            None => self.plan.forward_ops(rows),
        };
        for op in ops {
            match op {
                Op::MmaStem | Op::MmaBlock { .. } | Op::MmaHeads { .. } => {
                    let mk = self.kernels.mma.as_ref().ok_or_else(|| {
                        CudaError::Model("implicit-GEMM step without its kernels".into())
                    })?;
                    let t = &mk.tiling;
                    let grid = t.grid(rows) as u32;
                    let threads = mma::THREADS as u32;
                    match op {
                        Op::MmaStem => self.launch_cfg(
                            &mk.stem,
                            (grid, threads, t.smem_stem()),
                            s,
                            &mut [
                                KArg::Ptr(bufs.input.ptr),
                                KArg::Ptr(self.ptr(bufs, Buf::ConvW(0), 0, es)?),
                                KArg::Ptr(self.ptr(bufs, Buf::ConvB(0), 0, 4)?),
                                KArg::Ptr(bufs.a.ptr),
                                i32c(rows),
                            ],
                        )?,
                        Op::MmaBlock { blk, src, dst } => self.launch_cfg(
                            &mk.block,
                            (grid, threads, t.smem_block()),
                            s,
                            &mut [
                                KArg::Ptr(self.ptr(bufs, src, 0, es)?),
                                KArg::Ptr(self.ptr(bufs, Buf::ConvW(1 + 2 * blk), 0, es)?),
                                KArg::Ptr(self.ptr(bufs, Buf::ConvB(1 + 2 * blk), 0, 4)?),
                                KArg::Ptr(self.ptr(bufs, Buf::ConvW(2 + 2 * blk), 0, es)?),
                                KArg::Ptr(self.ptr(bufs, Buf::ConvB(2 + 2 * blk), 0, 4)?),
                                KArg::Ptr(self.ptr(bufs, dst, 0, es)?),
                                i32c(rows),
                            ],
                        )?,
                        _ => self.launch_cfg(
                            &mk.heads,
                            (kernels::grid_for(rows * area), threads, 0),
                            s,
                            &mut [
                                KArg::Ptr(match op {
                                    Op::MmaHeads { src } => self.ptr(bufs, src, 0, es)?,
                                    _ => unreachable!("matched above"),
                                }),
                                KArg::Ptr(self.weights.head.w.ptr),
                                KArg::Ptr(self.weights.head.b.ptr),
                                KArg::Ptr(bufs.feat.ptr),
                                i32c(rows),
                            ],
                        )?,
                    }
                }
                Op::ToAct { src, dst, n } => self.launch(
                    &self.kernels.to_act,
                    n,
                    s,
                    &mut [
                        KArg::Ptr(self.ptr(bufs, src, 0, 4)?),
                        KArg::Ptr(self.ptr(bufs, dst, 0, es)?),
                        KArg::Long(n as i64),
                    ],
                )?,
                Op::Im2col {
                    src,
                    cin,
                    kp,
                    sb,
                    sc,
                } => self.launch(
                    &self.kernels.im2col,
                    kp.div_ceil(9) * m,
                    s,
                    &mut [
                        KArg::Ptr(self.ptr(bufs, src, 0, es)?),
                        KArg::Ptr(bufs.col.ptr),
                        i32c(self.plan.n),
                        i32c(cin),
                        i32c(kp),
                        i32c(m),
                        KArg::Long(sb as i64),
                        KArg::Long(sc as i64),
                    ],
                )?,
                Op::Gemm {
                    trans_a,
                    m: gm,
                    n: gn,
                    k,
                    a,
                    b,
                    c,
                    stored,
                } => {
                    let size = if stored { es } else { 4 };
                    self.gemm(
                        &lane.blas,
                        trans_a,
                        (gm, gn, k),
                        self.ptr(bufs, a.0, 0, size)?,
                        a.1,
                        self.ptr(bufs, b.0, b.1, size)?,
                        b.2,
                        self.ptr(bufs, c.0, c.1, 4)?,
                        c.2,
                        half && stored,
                    )?
                }
                Op::BiasAct { bias, res, out, c } => {
                    let out_p = self.ptr(bufs, out, 0, es)?;
                    let res_p = match res {
                        Some(r) => self.ptr(bufs, r, 0, es)?,
                        None => out_p,
                    };
                    self.launch(
                        &self.kernels.bias_act,
                        c * m,
                        s,
                        &mut [
                            KArg::Ptr(bufs.acc.ptr),
                            KArg::Ptr(self.ptr(bufs, bias, 0, 4)?),
                            KArg::Ptr(res_p),
                            KArg::Ptr(out_p),
                            i32c(c),
                            i32c(m),
                            KArg::Int(1),
                            KArg::Int(i32::from(res.is_some())),
                        ],
                    )?
                }
                Op::HeadGather { c0, cn } => self.launch(
                    &self.kernels.head_gather,
                    rows * cn * area,
                    s,
                    &mut [
                        KArg::Ptr(bufs.acc.ptr),
                        KArg::Ptr(self.weights.head.b.ptr),
                        KArg::Ptr(bufs.feat.ptr),
                        i32c(c0),
                        i32c(cn),
                        i32c(area),
                        i32c(rows),
                        i32c(m),
                    ],
                )?,
                Op::BiasRows {
                    y,
                    bias,
                    n_out,
                    act,
                } => self.launch(
                    &self.kernels.bias_rows,
                    rows * n_out,
                    s,
                    &mut [
                        KArg::Ptr(self.ptr(bufs, y.0, y.1, 4)?),
                        KArg::Ptr(self.ptr(bufs, bias, 0, 4)?),
                        i32c(n_out),
                        i32c(rows),
                        KArg::Int(act),
                    ],
                )?,
            }
        }
        Ok(())
    }

    /// Grows the lane's buffers to hold `rows` rows (dropping its graphs, which point at
    /// the old buffers).
    fn ensure_capacity(&self, lane: &mut Lane, rows: usize) -> Result<(), CudaError> {
        if lane.cap >= rows && lane.bufs.is_some() {
            return Ok(());
        }
        lane.stream.synchronize().map_err(drv_err("synchronize"))?;
        lane.graphs.clear();
        lane.bufs = None;
        let s = match &self.kernels.mma {
            Some(k) => self.plan.sizes_mma(rows, k.tiling.fp),
            None => self.plan.sizes(rows),
        };
        let es = self.prec.bytes();
        lane.bufs = Some(LaneBufs {
            input: DevBuf::new(s.input * 4)?,
            x0: DevBuf::new(s.act * es)?,
            a: DevBuf::new(s.act * es)?,
            h: DevBuf::new(s.act * es)?,
            col: DevBuf::new(s.col * es)?,
            acc: DevBuf::new(s.acc * 4)?,
            feat: DevBuf::new(s.feat * 4)?,
            hidden: DevBuf::new(s.hidden * 4)?,
            out: DevBuf::new(s.out * 4)?,
            host_in: Pinned::new(s.input)?,
            host_out: Pinned::new(s.out)?,
        });
        lane.cap = rows;
        lane.generation = lane.generation.wrapping_add(1);
        Ok(())
    }

    /// Runs `rows` rows of `input` as one launch of bucket `bucket` on `lane`; the outputs
    /// are left in the lane's pinned output buffer (bucket-shaped).
    fn run_launch(
        &self,
        lane: &mut Lane,
        input: &[f32],
        rows: usize,
        bucket: usize,
    ) -> Result<(), CudaError> {
        self.bind()?;
        self.ensure_capacity(lane, bucket)?;
        let len = self.info.input_len();
        let out_len = self.plan.out_len();
        {
            let bufs = lane.bufs.as_mut().ok_or_else(|| CudaError::Driver {
                what: "launch",
                reason: "buffers not allocated".into(),
            })?;
            let hin = bufs.host_in.slice_mut();
            hin[..rows * len].copy_from_slice(&input[..rows * len]);
            hin[rows * len..bucket * len].fill(0.0);
            // SAFETY: pinned source of bucket·len floats into a device buffer at least that
            // large; the lane's stream orders it before the forward pass.
            unsafe {
                drv::memcpy_htod_async(
                    bufs.input.ptr,
                    &bufs.host_in.slice()[..bucket * len],
                    lane.stream.cu_stream(),
                )
            }
            .map_err(drv_err("copy to GPU"))?;
        }
        let key = GraphKey::for_rows(bucket, lane.generation);
        if self.use_graphs {
            if let Some(g) = lane.graphs.get(&key) {
                g.launch().map_err(drv_err("graph launch"))?;
            } else {
                // First use of this bucket: run it directly (which also loads every kernel
                // and cuBLAS's own), then capture it for the next calls.
                self.record_forward(lane, bucket)?;
                lane.stream
                    .begin_capture(
                        drv_sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                    )
                    .map_err(drv_err("begin capture"))?;
                let rec = self.record_forward(lane, bucket);
                let graph = lane
                    .stream
                    .end_capture(drv_sys::CUgraphInstantiate_flags(0))
                    .map_err(drv_err("end capture"));
                rec?;
                if let Some(g) = graph? {
                    g.upload().map_err(drv_err("graph upload"))?;
                    lane.graphs.insert(key, g);
                }
            }
        } else {
            self.record_forward(lane, bucket)?;
        }
        let bufs = lane.bufs.as_mut().ok_or_else(|| CudaError::Driver {
            what: "launch",
            reason: "buffers not allocated".into(),
        })?;
        // SAFETY: device output of bucket·out_len floats into pinned memory of that size,
        // ordered after the forward pass on the lane's stream; synchronised below before
        // the host reads it.
        unsafe {
            drv::memcpy_dtoh_async(
                &mut bufs.host_out.slice_mut()[..bucket * out_len],
                bufs.out.ptr,
                lane.stream.cu_stream(),
            )
        }
        .map_err(drv_err("copy from GPU"))?;
        lane.stream.synchronize().map_err(drv_err("synchronize"))?;
        Ok(())
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // Device memory is freed in the backend's context: make it current on this thread
        // (the fields are dropped after this), after the lanes' last work is done.
        let _ = self.ctx.bind_to_thread();
        for l in &self.lanes {
            if let Ok(l) = l.lock() {
                let _ = l.stream.synchronize();
            }
        }
    }
}

/// Compiles the kernels with NVRTC for compute capability `major.minor` and loads them.
fn compile(
    ctx: &Arc<CudaContext>,
    major: i32,
    minor: i32,
    prec: Precision,
) -> Result<Kernels, CudaError> {
    let opts = cudarc::nvrtc::CompileOptions {
        options: kernels::nvrtc_options(major, minor, prec == Precision::F16),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(kernels::SOURCE, opts).map_err(|e| {
        CudaError::Compile {
            arch: format!("{major}{minor}"),
            log: format!("{e:?}"),
        }
    })?;
    let module = ctx
        .load_module(ptx)
        .map_err(drv_err("module load (PTX newer than the driver?)"))?;
    let get = |name: &str| module.load_function(name).map_err(drv_err("kernel lookup"));
    Ok(Kernels {
        to_act: get("to_act")?,
        im2col: get("im2col3x3")?,
        bias_act: get("bias_act")?,
        head_gather: get("head_gather")?,
        bias_rows: get("bias_rows")?,
        mma: None,
    })
}

/// Compiles the implicit-GEMM kernels of tiling `t` and allows them the dynamic shared
/// memory they use (above the default 48 KB).
fn compile_mma(
    ctx: &Arc<CudaContext>,
    major: i32,
    minor: i32,
    t: mma::Tiling,
) -> Result<MmaKernels, CudaError> {
    let opts = cudarc::nvrtc::CompileOptions {
        options: kernels::mma_nvrtc_options(major, minor),
        ..Default::default()
    };
    let ptx =
        cudarc::nvrtc::compile_ptx_with_opts(t.source(), opts).map_err(|e| CudaError::Compile {
            arch: format!("{major}{minor}"),
            log: format!("{e:?}"),
        })?;
    let module = ctx
        .load_module(ptx)
        .map_err(drv_err("module load (PTX newer than the driver?)"))?;
    let get = |name: &str, smem: usize| -> Result<CudaFunction, CudaError> {
        let f = module
            .load_function(name)
            .map_err(drv_err("kernel lookup"))?;
        // SAFETY: `f` is a function of the module just loaded; the value is within the
        // device's opt-in limit (checked by the caller).
        unsafe {
            drv::function::set_function_attribute(
                f.cu_function(),
                drv_sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem as i32,
            )
        }
        .map_err(drv_err("shared memory limit"))?;
        Ok(f)
    };
    Ok(MmaKernels {
        stem: get("mma_stem", t.smem_stem())?,
        block: get("mma_block", t.smem_block())?,
        heads: get("mma_heads", 0)?,
        tiling: t,
    })
}

/// Uploads f32 data to a new device buffer.
fn upload(stream: &CudaStream, data: &[f32]) -> Result<DevBuf, CudaError> {
    let b = DevBuf::new(data.len() * 4)?;
    // SAFETY: pageable source of data.len() floats into a buffer of that size; the stream
    // is synchronised below, before `data` can be dropped.
    unsafe { drv::memcpy_htod_async(b.ptr, data, stream.cu_stream()) }
        .map_err(drv_err("weight copy"))?;
    stream.synchronize().map_err(drv_err("weight copy"))?;
    Ok(b)
}

/// Uploads f32 data and converts it to the stored type.
fn upload_act(
    stream: &CudaStream,
    k: &Kernels,
    data: &[f32],
    prec: Precision,
) -> Result<DevBuf, CudaError> {
    let src = upload(stream, data)?;
    if prec == Precision::F32 {
        return Ok(src);
    }
    let dst = DevBuf::new(data.len() * prec.bytes())?;
    let mut args = [
        KArg::Ptr(src.ptr),
        KArg::Ptr(dst.ptr),
        KArg::Long(data.len() as i64),
    ];
    let mut ptrs: Vec<*mut c_void> = args
        .iter_mut()
        .map(|a| match a {
            KArg::Ptr(v) => v as *mut u64 as *mut c_void,
            KArg::Int(v) => v as *mut i32 as *mut c_void,
            KArg::Long(v) => v as *mut i64 as *mut c_void,
        })
        .collect();
    // SAFETY: `to_act(const float*, act_t*, long long)` with buffers of data.len() elements.
    unsafe {
        drv::launch_kernel(
            k.to_act.cu_function(),
            (kernels::grid_for(data.len()), 1, 1),
            (kernels::BLOCK, 1, 1),
            0,
            stream.cu_stream(),
            &mut ptrs,
        )
    }
    .map_err(drv_err("weight conversion"))?;
    stream.synchronize().map_err(drv_err("weight conversion"))?;
    Ok(dst)
}

fn upload_weights(
    s: &CudaStream,
    k: &Kernels,
    f: &Folded,
    model: &Model,
    plan: &Plan,
    prec: Precision,
    tiling: Option<&mma::Tiling>,
) -> Result<Weights, CudaError> {
    let hw = host::host_weights(f, model, plan)?;
    hw.check(plan)?;
    if let Some(t) = tiling {
        // Trunk weights in fp16 (the MMA's B), the heads' 1x1 weights in f32 (mma_heads).
        let mw = host::mma_weights(&hw, plan, t);
        let conv = |l: &host::Layer| -> Result<DevLayer, CudaError> {
            Ok(DevLayer {
                w: upload_act(s, k, &l.w, prec)?,
                b: upload(s, &l.b)?,
            })
        };
        let plain = |l: &host::Layer| -> Result<DevLayer, CudaError> {
            Ok(DevLayer {
                w: upload(s, &l.w)?,
                b: upload(s, &l.b)?,
            })
        };
        return Ok(Weights {
            convs: mw.convs.iter().map(conv).collect::<Result<_, _>>()?,
            head: plain(&mw.head)?,
            fcs: mw.fcs.iter().map(plain).collect::<Result<_, _>>()?,
        });
    }
    let stored = |l: &host::Layer| -> Result<DevLayer, CudaError> {
        Ok(DevLayer {
            w: upload_act(s, k, &l.w, prec)?,
            b: upload(s, &l.b)?,
        })
    };
    let plain = |l: &host::Layer| -> Result<DevLayer, CudaError> {
        Ok(DevLayer {
            w: upload(s, &l.w)?,
            b: upload(s, &l.b)?,
        })
    };
    Ok(Weights {
        convs: hw.convs.iter().map(stored).collect::<Result<_, _>>()?,
        head: stored(&hw.head)?,
        fcs: hw.fcs.iter().map(plain).collect::<Result<_, _>>()?,
    })
}

impl Evaluator for CudaBackend {
    fn info(&self) -> &NetInfo {
        &self.info
    }

    fn evaluate(&self, input: &[f32], batch: usize, out: &mut NetOutput) -> Result<(), NnError> {
        let len = self.info.input_len();
        if input.len() != batch.saturating_mul(len) {
            return Err(NnError::BadInput(format!(
                "{} floats for a batch of {batch} (expected {})",
                input.len(),
                batch.saturating_mul(len)
            )));
        }
        out.resize(&self.info, batch);
        if batch == 0 {
            return Ok(());
        }
        let mut lane = self.lane()?;
        let p = &self.plan;
        let a = p.actions;
        for (start, rows, bucket) in plan::launches(batch) {
            self.run_launch(
                &mut lane,
                &input[start * len..(start + rows) * len],
                rows,
                bucket,
            )
            .map_err(NnError::from)?;
            let bufs = lane
                .bufs
                .as_ref()
                .ok_or_else(|| NnError::Failed("cuda: buffers not allocated".into()))?;
            let host = bufs.host_out.slice();
            let (_, off1, off2) = p.out_offsets(bucket);
            out.policy[start * a..(start + rows) * a].copy_from_slice(&host[..rows * a]);
            match self.info.kind {
                NetKind::AlphaZero => {
                    out.value[start..start + rows].copy_from_slice(&host[off1..off1 + rows]);
                }
                NetKind::Pcn { bins } => {
                    out.black_v[start * bins..(start + rows) * bins]
                        .copy_from_slice(&host[off1..off1 + rows * bins]);
                    out.white_v[start * bins..(start + rows) * bins]
                        .copy_from_slice(&host[off2..off2 + rows * bins]);
                }
            }
        }
        Ok(())
    }

    fn name(&self) -> String {
        // The fp16 fallback path says so (the device check measures both).
        let im2col = self.prec == Precision::F16 && self.kernels.mma.is_none();
        format!(
            "cuda-{}{}",
            self.prec.name(),
            if im2col { "-im2col" } else { "" }
        )
    }

    fn in_flight(&self) -> usize {
        self.lanes.len()
    }
}

/// Opens `model` on the GPU in `prec` (see [`CudaBackend::new`]).
pub fn open(model: &Model, prec: Precision) -> Result<Arc<dyn Evaluator>, NnError> {
    open_with(model, prec, ConvPath::Auto)
}

/// Opens `model` on the GPU in `prec` on convolution path `path`.
pub fn open_with(
    model: &Model,
    prec: Precision,
    path: ConvPath,
) -> Result<Arc<dyn Evaluator>, NnError> {
    let be = CudaBackend::with_path(model, prec, path)?;
    log::info!(
        "cuda backend: {} ({}), libraries: {}",
        be.device_name(),
        be.name(),
        be.libraries()
    );
    Ok(Arc::new(be))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_to_do() {
        let e = CudaError::MissingLibrary {
            lib: "libcublas.so",
            wheel: "nvidia-cublas",
            env: libs::LIB_DIR_ENV,
            searched: "/x".into(),
        };
        let s = e.to_string();
        assert!(
            s.contains("nvidia-cublas") && s.contains("PCN_CUDA_LIB_DIR"),
            "{s}"
        );
        assert!(e.is_unavailable());
        assert!(matches!(NnError::from(e), NnError::Unavailable(_)));
        let d = CudaError::Driver {
            what: "GemmEx",
            reason: "x".into(),
        };
        assert!(!d.is_unavailable());
        assert!(matches!(NnError::from(d), NnError::Failed(_)));
        assert!(CudaError::NoDriver {
            searched: "a".into()
        }
        .to_string()
        .contains("libcuda.so.1"));
    }

    /// On a machine without a GPU (CI), opening must fail cleanly (never panic); on one
    /// with a GPU it must succeed and agree with the CPU backend.
    #[test]
    fn opens_or_fails_cleanly() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/pcn/models/go_W-max");
        if !std::path::Path::new(dir).is_dir() {
            println!("NOTICE: {dir} absent: CUDA open test skipped");
            return;
        }
        let m = Model::load(dir).unwrap();
        match CudaBackend::new(&m, Precision::F32) {
            Err(e) => {
                println!("no GPU here: {e}");
                assert!(e.is_unavailable(), "{e}");
            }
            Ok(be) => {
                let cpu = crate::nn::cpu::CpuBackend::new(&m, 1).unwrap();
                let len = m.info.input_len();
                let mut rng = crate::util::Rng::new(7);
                let batch = 5;
                let input: Vec<f32> = (0..batch * len)
                    .map(|_| if rng.below(10) < 3 { 1.0 } else { 0.0 })
                    .collect();
                let (mut a, mut b) = (NetOutput::default(), NetOutput::default());
                cpu.evaluate(&input, batch, &mut a).unwrap();
                for _ in 0..2 {
                    be.evaluate(&input, batch, &mut b).unwrap();
                    let d = a
                        .policy
                        .iter()
                        .zip(&b.policy)
                        .map(|(x, y)| (x - y).abs())
                        .fold(0f32, f32::max);
                    assert!(d < 1e-3, "policy differs by {d}");
                }
            }
        }
    }
}
