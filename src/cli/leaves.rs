//! `pcn leaf-labels`: the eval net's leaf data from a game log ([`crate::selfplay::leaves`],
//! docs/training.md). `--seed`, `--threads` and `--eval` (the evaluation of both searches)
//! are the global options.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::search::gomoku::learn::evalnet::EvalNet;
use crate::selfplay::leaves::{run, LeafConfig};

/// Options of `pcn leaf-labels`.
#[derive(Args, Debug, Clone)]
pub struct LeafArgs {
    /// The game log whose games give the roots (`pcn selfplay --eval-games`).
    #[arg(long)]
    pub games: PathBuf,
    /// The leaf log to append to (resumed: games already in it are skipped).
    #[arg(long)]
    pub out: PathBuf,
    /// Nodes of the search whose leaves are sampled.
    #[arg(long, default_value_t = 200_000)]
    pub root_nodes: u64,
    /// Nodes of the search that scores a leaf.
    #[arg(long, default_value_t = 64_000)]
    pub label_nodes: u64,
    /// Leaves labelled per root at most.
    #[arg(long, default_value_t = 8)]
    pub per_root: usize,
    /// The chance that the root search keeps a position it judges statically (0..=1).
    #[arg(long, default_value_t = 0.0006)]
    pub rate: f64,
    /// Skip the first N games of the log (e.g. the roots of an earlier round).
    #[arg(long, default_value_t = 0)]
    pub skip_games: usize,
    /// Use at most N games of the log (the first N after the skipped ones).
    #[arg(long)]
    pub max_games: Option<usize>,
}

/// Runs `pcn leaf-labels` with the evaluation networks `nets` (`--eval`); the exit code (2:
/// bad options or files).
pub fn run_cmd(a: LeafArgs, seed: u64, threads: usize, nets: Vec<Arc<EvalNet>>) -> i32 {
    if !(0.0..=1.0).contains(&a.rate) || a.per_root == 0 {
        eprintln!("pcn leaf-labels: --rate must be 0..=1 and --per-root positive");
        return 2;
    }
    let cfg = LeafConfig {
        root_nodes: a.root_nodes,
        label_nodes: a.label_nodes,
        per_root: a.per_root,
        rate: a.rate,
        seed,
        threads,
        skip_games: a.skip_games,
        max_games: a.max_games,
        nets,
    };
    match run(&a.games, &a.out, &cfg) {
        Ok(s) => {
            eprintln!(
                "pcn leaf-labels: {} games, {} already done, {} leaves written to {}",
                s.games,
                s.skipped,
                s.leaves,
                a.out.display()
            );
            0
        }
        Err(e) => {
            eprintln!("pcn leaf-labels: {e}");
            2
        }
    }
}
