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
}

pub mod cpu;
pub mod model;
pub mod shipped;

/// Backend names [`open`] accepts, best first (`""` or `auto` picks the first compiled in).
pub const BACKENDS: &[&str] = &["cpu"];

/// Opens the model at `path` on the backend called `backend` (`auto` or empty: the best
/// compiled in) with `threads` compute threads. Errors (never panics) on unreadable or
/// malformed files and unknown or unavailable backends.
pub fn open(path: &str, backend: &str, threads: usize) -> Result<Arc<dyn Evaluator>, NnError> {
    let name = backend.trim().to_ascii_lowercase();
    match name.as_str() {
        "" | "auto" | "cpu" => open_cpu(path, threads),
        other => Err(NnError::Unavailable(format!(
            "unknown backend '{}' (expected one of {})",
            other.chars().take(32).collect::<String>(),
            BACKENDS.join(", ")
        ))),
    }
}

fn open_cpu(path: &str, threads: usize) -> Result<Arc<dyn Evaluator>, NnError> {
    let m = model::Model::load(path)?;
    Ok(Arc::new(cpu::CpuBackend::new(&m, threads.max(1))?))
}
