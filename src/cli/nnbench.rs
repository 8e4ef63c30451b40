//! `pcn nnbench --net PATH [--backend auto|cpu] [--batch 1,8,64]`: network evaluation speed.
//!
//! For each batch size: a warm-up, then `--reps` timed repetitions of about `--seconds`
//! each; prints the median positions/s. The inputs are random 0/1 planes (a fixed seed):
//! the speed does not depend on them. `--net`, `--backend` and `--threads` are the global
//! options (defined once for every subcommand); `--threads` sets the backend's threads. The output format matches scripts/bench_nn_ort.py so `make bench-nn` can put
//! the two side by side.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use crate::nn::cpu::{ConvAlgo, CpuBackend};
use crate::nn::model::Model;
use crate::nn::{Evaluator, NetOutput};
use crate::util::Rng;

/// Options of `pcn nnbench`. `--net` (required here) and `--backend` are the global options;
/// the CLI copies them in.
#[derive(Args, Debug, Clone)]
pub struct NnBenchArgs {
    /// Model directory (model.safetensors + model.json) or either file (the global `--net`).
    #[arg(skip)]
    pub net: PathBuf,
    /// Backend: `auto` or `cpu` (the global `--backend`).
    #[arg(skip)]
    pub backend: String,
    /// Batch sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    pub batch: Vec<usize>,
    /// Timed repetitions per batch size (the median is printed).
    #[arg(long, default_value_t = 7)]
    pub reps: usize,
    /// Seconds per repetition (approximately).
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Convolution algorithm: auto, direct, winograd2..winograd4, scalar (winograd3
    /// without SIMD).
    #[arg(long, default_value = "auto")]
    pub algo: String,
}

fn parse_algo(s: &str, n: usize) -> Option<ConvAlgo> {
    match s {
        "auto" => Some(ConvAlgo::auto(n)),
        "direct" => Some(ConvAlgo::Direct),
        "scalar" => Some(ConvAlgo::Winograd { m: 3, simd: false }),
        _ => {
            let m: usize = s.strip_prefix("winograd")?.parse().ok()?;
            (2..=4)
                .contains(&m)
                .then_some(ConvAlgo::Winograd { m, simd: true })
        }
    }
}

/// Runs `pcn nnbench`; returns the exit code (2 usage error, 3 model or backend error).
pub fn run(args: NnBenchArgs, threads: usize) -> i32 {
    if args.net.as_os_str().is_empty() || args.net.as_os_str().eq_ignore_ascii_case("none") {
        eprintln!("nnbench: --net PATH is required");
        return 2;
    }
    // `auto` is the global option's default; the CPU backend is the only one compiled in.
    if args.backend != "cpu" && args.backend != "auto" {
        eprintln!(
            "nnbench: unknown backend {:?} (available: auto, cpu)",
            args.backend
        );
        return 2;
    }
    if args.batch.is_empty()
        || args.batch.contains(&0)
        || args.reps == 0
        || args.seconds.is_nan()
        || args.seconds <= 0.0
    {
        eprintln!("nnbench: batch sizes, --reps and --seconds must be positive");
        return 2;
    }
    let model = match Model::load(&args.net) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("nnbench: {e}");
            return 3;
        }
    };
    let Some(algo) = parse_algo(&args.algo, model.info.board_size) else {
        eprintln!(
            "nnbench: unknown --algo {:?} (auto, direct, winograd2..4, scalar)",
            args.algo
        );
        return 2;
    };
    let be = match CpuBackend::with_algo(&model, threads, algo) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("nnbench: {e}");
            return 3;
        }
    };
    println!(
        "pcn {} {} threads {} algo {:?}",
        be.name(),
        args.net.display(),
        be.threads(),
        be.algo()
    );
    let len = model.info.input_len();
    let mut rng = Rng::new(0);
    let mut out = NetOutput::default();
    for &b in &args.batch {
        let input: Vec<f32> = (0..b * len)
            .map(|_| if rng.below(10) < 3 { 1.0 } else { 0.0 })
            .collect();
        let mut eval = || be.evaluate(&input, b, &mut out);
        // Warm-up (also sizes the scratch buffers), and the length of one repetition.
        let t0 = Instant::now();
        let mut iters = 0usize;
        while t0.elapsed().as_secs_f64() < 0.3 || iters < 3 {
            if let Err(e) = eval() {
                eprintln!("nnbench: {e}");
                return 3;
            }
            iters += 1;
        }
        let per = t0.elapsed().as_secs_f64() / iters as f64;
        let k = ((args.seconds / per) as usize).max(1);
        let mut rates = Vec::with_capacity(args.reps);
        let mut cpu_rates = Vec::with_capacity(args.reps);
        for _ in 0..args.reps {
            let t = Instant::now();
            let c = cpu_seconds();
            for _ in 0..k {
                if let Err(e) = eval() {
                    eprintln!("nnbench: {e}");
                    return 3;
                }
            }
            rates.push((k * b) as f64 / t.elapsed().as_secs_f64());
            if let (Some(c0), Some(c1)) = (c, cpu_seconds()) {
                cpu_rates.push((k * b) as f64 / (c1 - c0).max(1e-3));
            }
        }
        let med = median(&mut rates);
        let cpu = if cpu_rates.is_empty() {
            String::new()
        } else {
            format!(", {:.0} per CPU-second", median(&mut cpu_rates))
        };
        println!(
            "batch {b}: {med:.0} positions/s (median of {} runs of {k} evaluations{cpu})",
            args.reps
        );
    }
    0
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Process CPU time (user + system, all threads) from /proc/self/stat; `None` where that
/// is unavailable. On a loaded machine this shows the work per CPU-second, which wall
/// clock rates hide.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
