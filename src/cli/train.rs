//! `pcn train-patterns`: makes the Gomoku pattern policy's weight file
//! (`weights/gomoku_patterns.bin`, see [`crate::search::gomoku::learn::patpolicy`], trained by
//! [`crate::train::patterns`]) from the alpha-beta
//! player's self-play games. `--seed` and `--threads` are the global options; the result is
//! the same for the same options whatever the thread count (games are seeded one by one and
//! gathered in order).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use crate::game::gomoku::Rule;
use crate::search::gomoku::learn::patpolicy::PatternPolicy;
use crate::train::patterns::{
    generate, read_samples, train, write_samples, FitOptions, GenOptions, Sample,
};

/// Options of `pcn train-patterns`.
#[derive(Args, Debug, Clone)]
pub struct TrainArgs {
    /// Self-play games.
    #[arg(long, default_value_t = 2000)]
    pub games: usize,
    /// Alpha-beta nodes per move (the quality of the moves imitated).
    #[arg(long = "move-nodes", default_value_t = 3000)]
    pub move_nodes: u64,
    /// Training passes over the samples.
    #[arg(long, default_value_t = 6)]
    pub epochs: usize,
    /// AdaGrad step.
    #[arg(long, default_value_t = 0.3)]
    pub lr: f32,
    /// L2 penalty per weight and step.
    #[arg(long, default_value_t = 1e-4)]
    pub l2: f32,
    /// Gomoku rule of the games (`4t`, `freestyle`, ...).
    #[arg(long, default_value = "4t")]
    pub rule: String,
    /// Also write the self-play samples to this file (to retrain without replaying).
    #[arg(long)]
    pub save_samples: Option<PathBuf>,
    /// Train on a sample file written by `--save-samples` instead of playing games.
    #[arg(long)]
    pub from_samples: Option<PathBuf>,
    /// Start from this weight file (fine-tuning) instead of zeros.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// Where to write the weights.
    #[arg(long, default_value = "weights/gomoku_patterns.bin")]
    pub out: PathBuf,
}

/// Runs the command; returns the exit code (2: bad options, 1: the file cannot be written).
pub fn run(a: TrainArgs, seed: u64, threads: usize) -> i32 {
    let Some(rule) = Rule::parse(&a.rule) else {
        eprintln!("pcn train-patterns: unknown rule {:?}", a.rule);
        return 2;
    };
    let finite_pos = a.lr.is_finite() && a.lr > 0.0 && a.l2.is_finite() && a.l2 >= 0.0;
    if a.games == 0 || a.epochs == 0 || !finite_pos {
        eprintln!("pcn train-patterns: --games and --epochs must be positive, --lr > 0, --l2 >= 0");
        return 2;
    }
    let opts = GenOptions {
        games: a.games,
        nodes: a.move_nodes,
        rule,
        ..GenOptions::default()
    };
    let t0 = Instant::now();
    let samples = match &a.from_samples {
        Some(f) => match std::fs::read(f)
            .map_err(|e| e.to_string())
            .and_then(|b| read_samples(&b).map_err(|e| e.to_string()))
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("pcn train-patterns: cannot read {}: {e}", f.display());
                return 1;
            }
        },
        None => self_play(&opts, seed, threads),
    };
    eprintln!(
        "pcn train-patterns: {} positions in {:.1} s",
        samples.len(),
        t0.elapsed().as_secs_f64()
    );
    if let Some(f) = &a.save_samples {
        if let Err(e) = std::fs::write(f, write_samples(&samples)) {
            eprintln!("pcn train-patterns: cannot write {}: {e}", f.display());
            return 1;
        }
    }
    let init = match &a.init {
        Some(f) => match PatternPolicy::load(f) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("pcn train-patterns: cannot read {}: {e}", f.display());
                return 1;
            }
        },
        None => None,
    };
    let t1 = Instant::now();
    let fit = FitOptions {
        epochs: a.epochs,
        lr: a.lr,
        l2: a.l2,
        seed,
        init: init.as_ref(),
    };
    let (p, rep) = train(&samples, rule, &fit);
    eprintln!(
        "pcn train-patterns: trained in {:.1} s on {} positions; held out {}: top-1 {:.3} (static threat score {:.3}, starting weights {:.3}), cross-entropy {:.3} (uniform {:.3})",
        t1.elapsed().as_secs_f64(),
        rep.train,
        rep.held_out,
        rep.top1,
        rep.top1_static,
        rep.top1_start,
        rep.loss,
        rep.loss_uniform
    );
    if let Err(e) = std::fs::write(&a.out, p.to_bytes()) {
        eprintln!("pcn train-patterns: cannot write {}: {e}", a.out.display());
        return 1;
    }
    0
}

/// Plays the self-play games on `threads` threads (games seeded one by one, gathered in
/// order, so the samples do not depend on the thread count).
fn self_play(opts: &GenOptions, seed: u64, threads: usize) -> Vec<Sample> {
    let threads = threads.clamp(1, 64);
    let per = opts.games.div_ceil(threads);
    let mut parts: Vec<Vec<Sample>> = Vec::new();
    crossbeam::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let first = (t * per).min(opts.games);
                let count = per.min(opts.games - first);
                s.spawn(move |_| generate(opts, seed, first, count))
            })
            .collect();
        for h in hs {
            parts.push(h.join().unwrap_or_default());
        }
    })
    .unwrap_or_default();
    parts.into_iter().flatten().collect()
}
