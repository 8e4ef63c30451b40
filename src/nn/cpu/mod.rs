//! The pure-Rust CPU backend.
//!
//! BatchNorm is folded into the convolutions at load ([`folded`]). The trunk runs in NHWC
//! layout; the 3x3 convolutions use Winograd F(m×m, 3×3) transforms with a channel-blocked
//! GEMM (AVX2+FMA through `std::arch` when the CPU has it, a portable loop otherwise). The
//! plain direct convolution in [`reference`] is kept as the yardstick for tests.

pub(crate) mod folded;
pub(crate) mod reference;

use std::sync::Mutex;

use crate::nn::model::Model;
use crate::nn::{Evaluator, NetInfo, NetKind, NetOutput, NnError};

use folded::Folded;

/// Which convolution algorithm the backend uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ConvAlgo {
    /// Plain direct convolution, one position at a time (slow; the test yardstick).
    Direct,
}

/// Per-call scratch space, reused between calls.
#[derive(Default)]
struct Scratch {
    trunk: Vec<f32>,
    heads: Vec<f32>,
}

/// The CPU evaluator: see the module documentation.
pub struct CpuBackend {
    info: NetInfo,
    net: Folded,
    threads: usize,
    algo: ConvAlgo,
    scratch: Mutex<Scratch>,
}

impl CpuBackend {
    /// Prepares `model` for evaluation on `threads` threads (0 is taken as 1).
    pub fn new(model: &Model, threads: usize) -> Result<CpuBackend, NnError> {
        CpuBackend::with_algo(model, threads, ConvAlgo::Direct)
    }

    /// Like [`CpuBackend::new`] with an explicit convolution algorithm.
    pub fn with_algo(model: &Model, threads: usize, algo: ConvAlgo) -> Result<CpuBackend, NnError> {
        Ok(CpuBackend {
            info: model.info.clone(),
            net: Folded::new(model)?,
            threads: threads.max(1),
            algo,
            scratch: Mutex::new(Scratch::default()),
        })
    }

    /// Threads used per evaluation.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The convolution algorithm in use.
    pub fn algo(&self) -> ConvAlgo {
        self.algo
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
        let (a, bins) = (self.info.actions, self.info.bins());
        let mut guard = self
            .scratch
            .lock()
            .map_err(|_| NnError::Failed("cpu backend scratch poisoned by a panic".into()))?;
        let s = &mut *guard;
        let is_az = matches!(self.info.kind, NetKind::AlphaZero);
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
                &mut out.policy[i * a..(i + 1) * a],
                value,
                black,
                white,
                &mut s.heads,
            );
        }
        Ok(())
    }

    fn name(&self) -> String {
        "cpu".to_string()
    }
}
