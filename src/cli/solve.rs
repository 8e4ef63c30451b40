//! `pcn solve` (placeholder until the solver API lands).
use clap::Args;

/// Options of `pcn solve`.
#[derive(Args, Debug, Clone)]
pub struct SolveArgs {}

/// Runs `pcn solve`; returns the exit code.
pub fn run(_args: SolveArgs) -> i32 {
    0
}
