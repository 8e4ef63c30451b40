//! Neural-network evaluation: model files, backends and evaluator wrappers.
//!
//! Everything here speaks one batch-shaped trait, [`Evaluator`]: a batch of encoded
//! positions in (NCHW floats, [`crate::game::Game::encode_input`]) and raw network outputs
//! out ([`NetOutput`]). Backends (the pure-Rust CPU one; CUDA later) implement it, and so do
//! the wrappers (batching queue, evaluation cache, a seeded random evaluator for tests).
//! The search layer turns raw outputs into priors, values and proof costs.
//!
//! This module sits below `search`: it knows games (for encoders and legal moves) but
//! never searches.

pub mod decode;
pub mod eval;

use std::sync::Arc;

use thiserror::Error;

/// Which game a network was trained for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NetGame {
    /// Gomoku (4 input planes, no pass action).
    Gomoku,
    /// Killall-Go (18 input planes, pass is the last action).
    KillallGo,
}

/// The network's value output.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NetKind {
    /// AlphaZero: one tanh value for the side to move.
    AlphaZero,
    /// Proof cost network: two heads of `bins` logits (cost of proving Black / White wins).
    Pcn {
        /// Categories per head (500 for the Killall-Go models).
        bins: usize,
    },
}

/// The branching factor a proof-cost network's labels were built with (docs/training.md):
/// each AND ply of the winner adds log10 of it, so decoding a cost back into a node count
/// needs the same one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum CostLabel {
    /// `b_max`: the constant action count of the board.
    #[default]
    Max,
    /// `b_heur`: the legal-move count of each position.
    Heur,
}

impl CostLabel {
    /// The label of a model: its `training.label` entry (`max` or `heur`) when model.json
    /// has one, else its name (`go_W-heur` is a b_heur model; any other name, b_max).
    pub fn of_model(name: &str, training_label: Option<&str>) -> Option<CostLabel> {
        match training_label {
            Some("max") => Some(CostLabel::Max),
            Some("heur") => Some(CostLabel::Heur),
            Some(_) => None,
            None if name.to_ascii_lowercase().contains("heur") => Some(CostLabel::Heur),
            None => Some(CostLabel::Max),
        }
    }
}

/// What a model is: enough to encode its inputs and decode its outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct NetInfo {
    /// The model's name (`go_W-max`, ...).
    pub name: String,
    /// The game.
    pub game: NetGame,
    /// Board side (9 or 15).
    pub board_size: usize,
    /// Input planes per position (4 or 18).
    pub planes: usize,
    /// Policy outputs per position (`board_size²`, plus one for pass in Go).
    pub actions: usize,
    /// Value head kind.
    pub kind: NetKind,
    /// The branching factor of its proof-cost labels (PCN models; `Max` for AlphaZero).
    pub cost_label: CostLabel,
}

impl NetInfo {
    /// Floats per encoded position (`planes · board_size²`).
    pub fn input_len(&self) -> usize {
        self.planes * self.board_size * self.board_size
    }

    /// Bins per PCN head (0 for AlphaZero models).
    pub fn bins(&self) -> usize {
        match self.kind {
            NetKind::AlphaZero => 0,
            NetKind::Pcn { bins } => bins,
        }
    }
}

/// Raw outputs for a batch of `b` positions, row-major by position. Buffers are reused
/// between calls; [`NetOutput::resize`] sizes them for a batch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetOutput {
    /// Policy logits, `b · actions` (no softmax, no legality mask).
    pub policy: Vec<f32>,
    /// AlphaZero: tanh value for the side to move, `b` entries. Empty for PCN models.
    pub value: Vec<f32>,
    /// PCN: Black-wins cost logits, `b · bins`. Empty for AlphaZero models.
    pub black_v: Vec<f32>,
    /// PCN: White-wins cost logits, `b · bins`. Empty for AlphaZero models.
    pub white_v: Vec<f32>,
}

impl NetOutput {
    /// Sizes every buffer for `batch` positions of a model described by `info` (contents
    /// unspecified afterwards).
    pub fn resize(&mut self, info: &NetInfo, batch: usize) {
        self.policy.resize(batch * info.actions, 0.0);
        match info.kind {
            NetKind::AlphaZero => {
                self.value.resize(batch, 0.0);
                self.black_v.clear();
                self.white_v.clear();
            }
            NetKind::Pcn { bins } => {
                self.value.clear();
                self.black_v.resize(batch * bins, 0.0);
                self.white_v.resize(batch * bins, 0.0);
            }
        }
    }
}

/// Errors of model loading and evaluation.
#[derive(Debug, Error)]
pub enum NnError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The model files are malformed or do not describe a supported network.
    #[error("bad model {path}: {reason}")]
    BadModel {
        /// The model path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The model does not fit the request (wrong game, board size, ...).
    #[error("model mismatch: {0}")]
    Mismatch(String),
    /// An input batch has the wrong length.
    #[error("bad input: {0}")]
    BadInput(String),
    /// The backend is not available (not compiled in, no device, unknown name).
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    /// The evaluator stopped (its thread ended) or failed.
    #[error("evaluation failed: {0}")]
    Failed(String),
}

/// The one evaluator trait: backends and wrappers alike.
///
/// `&self` and `Sync` so that several search threads can share one evaluator (a batching
/// wrapper collects their requests); implementations keep scratch space internally.
pub trait Evaluator: Send + Sync {
    /// The model this evaluator runs.
    fn info(&self) -> &NetInfo;

    /// Evaluates `batch` positions. `input` holds `batch · info().input_len()` floats
    /// (positions one after another, each NCHW); `out` is resized and filled.
    fn evaluate(&self, input: &[f32], batch: usize, out: &mut NetOutput) -> Result<(), NnError>;

    /// A short name for reports (`cpu`, `batch(cpu)`, `random`, ...).
    fn name(&self) -> String;

    /// How many `evaluate` calls the evaluator overlaps usefully (the CUDA backend: one per
    /// lane, so a caller can fill one batch while another runs). Wrappers that batch use
    /// this many workers; 1 for backends that gain nothing from concurrent calls.
    fn in_flight(&self) -> usize {
        1
    }
}

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod model;
pub mod shipped;

/// Backend names [`open`] accepts (`""` or `auto`: the GPU when one is usable, else the
/// CPU). `cuda` is fp16 storage with fp32 accumulation (the implicit-GEMM tensor-core
/// kernels where the GPU allows), `cuda-im2col` the same precision on the im2col + cuBLAS
/// path (the fallback, for comparison), `cuda-fp32` strict fp32; all need a build with the
/// `cuda` feature.
pub const BACKENDS: &[&str] = &[
    "auto",
    "cpu",
    "cuda",
    "cuda-fp16",
    "cuda-im2col",
    "cuda-fp32",
];

/// Opens the model at `path` on the backend called `backend` with `threads` compute
/// threads (CPU). `auto` (or empty) takes the CUDA backend when it is compiled in and a GPU
/// is usable, else the CPU, and says which at log level info. Errors (never panics) on
/// unreadable or malformed files and unknown or unavailable backends
/// ([`NnError::Unavailable`]: `cuda` without a GPU, driver or library, or in a build
/// without the `cuda` feature).
pub fn open(path: &str, backend: &str, threads: usize) -> Result<Arc<dyn Evaluator>, NnError> {
    let name = backend.trim().to_ascii_lowercase();
    match name.as_str() {
        "cpu" => open_cpu(path, threads),
        "" | "auto" => open_auto(path, threads),
        "cuda" | "cuda-fp16" | "gpu" => open_cuda(path, false, false),
        "cuda-im2col" => open_cuda(path, false, true),
        "cuda-fp32" => open_cuda(path, true, false),
        other => Err(NnError::Unavailable(format!(
            "unknown backend '{}' (expected one of {})",
            other.chars().take(32).collect::<String>(),
            BACKENDS.join(", ")
        ))),
    }
}

fn open_auto(path: &str, threads: usize) -> Result<Arc<dyn Evaluator>, NnError> {
    if cfg!(feature = "cuda") {
        match open_cuda(path, false, false) {
            Ok(e) => {
                log::info!("backend auto: using the GPU ({})", e.name());
                return Ok(e);
            }
            // A bad model file is the same error on every backend: say it once.
            Err(e @ (NnError::Io { .. } | NnError::BadModel { .. })) => return Err(e),
            Err(e) => log::info!("backend auto: no usable GPU ({e}); using the CPU"),
        }
    } else {
        log::info!("backend auto: using the CPU (this build has no `cuda` feature)");
    }
    open_cpu(path, threads)
}

#[cfg(feature = "cuda")]
fn open_cuda(path: &str, fp32: bool, im2col: bool) -> Result<Arc<dyn Evaluator>, NnError> {
    let m = model::Model::load(path)?;
    let prec = if fp32 {
        cuda::Precision::F32
    } else {
        cuda::Precision::F16
    };
    let conv = if im2col {
        cuda::ConvPath::Im2col
    } else {
        cuda::ConvPath::Auto
    };
    cuda::open_with(&m, prec, conv)
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(path: &str, _fp32: bool, _im2col: bool) -> Result<Arc<dyn Evaluator>, NnError> {
    // The model is still checked, so that a bad path reads the same on every build.
    model::Model::load(path)?;
    Err(NnError::Unavailable(
        "cuda: this build has no GPU support (rebuild with `cargo build --release --features cuda`)"
            .into(),
    ))
}

fn open_cpu(path: &str, threads: usize) -> Result<Arc<dyn Evaluator>, NnError> {
    let m = model::Model::load(path)?;
    Ok(Arc::new(cpu::CpuBackend::new(&m, threads.max(1))?))
}
