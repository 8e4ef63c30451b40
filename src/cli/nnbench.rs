//! `pcn nnbench --net PATH [--backend auto|cpu|cuda|cuda-fp32] [--batch 1,8,64]`: network
//! evaluation speed; with `--golden`, the backend's agreement with the model's golden
//! outputs (`golden.safetensors` beside the model, `../shared/pcn/README.md` §9) instead.
//!
//! For each batch size: a warm-up, then `--reps` timed repetitions of about `--seconds`
//! each; prints the median positions/s. The inputs are random 0/1 planes (a fixed seed):
//! the speed does not depend on them. `--net`, `--backend` and `--threads` are the global
//! options (defined once for every subcommand); `--threads` sets the backend's threads. The output format matches scripts/bench_nn_ort.py so `make bench-nn` can put
//! the two side by side.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use crate::nn::cpu::{ConvAlgo, CpuBackend, Simd};
use crate::nn::model::Model;
use crate::nn::{Evaluator, NetKind, NetOutput, NnError};
use crate::util::Rng;

/// Options of `pcn nnbench`. `--net` (required here) and `--backend` are the global options;
/// the CLI copies them in.
#[derive(Args, Debug, Clone)]
pub struct NnBenchArgs {
    /// Model directory (model.safetensors + model.json) or either file (the global `--net`).
    #[arg(skip)]
    pub net: PathBuf,
    /// Backend: `auto`, `cpu`, `cuda` (fp16) or `cuda-fp32` (the global `--backend`).
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
    /// Convolution algorithm: auto, direct, winograd2..winograd5 (the best SIMD kernels the
    /// CPU has), avx2 (winograd3 with AVX2 at most), scalar (winograd3 without SIMD).
    #[arg(long, default_value = "auto")]
    pub algo: String,
    /// Check the outputs against the model directory's golden.safetensors instead of
    /// timing: prints the largest differences, exit 1 when one exceeds `--tol`.
    #[arg(long)]
    pub golden: bool,
    /// `--golden`: the largest accepted difference on logits (and on the α0 value).
    #[arg(long, default_value_t = 1e-4)]
    pub tol: f64,
    /// Instead of timing, the top-1 move agreement with this reference backend (e.g.
    /// `cuda-fp32`) on `--positions` positions of games played by sampling the reference's
    /// policy: exit 1 below `--min-agree`.
    #[arg(long)]
    pub agree: Option<String>,
    /// `--agree`: positions compared.
    #[arg(long, default_value_t = 10_000)]
    pub positions: usize,
    /// `--agree`: the smallest accepted fraction of positions with the same top-1 legal move.
    #[arg(long, default_value_t = 0.99)]
    pub min_agree: f64,
}

fn parse_algo(s: &str, n: usize) -> Option<ConvAlgo> {
    match s {
        "auto" => Some(ConvAlgo::auto(n)),
        "direct" => Some(ConvAlgo::Direct),
        "scalar" => Some(ConvAlgo::Winograd {
            m: 3,
            simd: Simd::Scalar,
        }),
        "avx2" => Some(ConvAlgo::Winograd {
            m: 3,
            simd: Simd::Avx2,
        }),
        _ => {
            let m: usize = s.strip_prefix("winograd")?.parse().ok()?;
            (2..=5).contains(&m).then_some(ConvAlgo::Winograd {
                m,
                simd: Simd::Avx512,
            })
        }
    }
}

/// Runs `pcn nnbench`; returns the exit code (2 usage error, 3 model or backend error).
pub fn run(args: NnBenchArgs, threads: usize) -> i32 {
    if args.net.as_os_str().is_empty() || args.net.as_os_str().eq_ignore_ascii_case("none") {
        eprintln!("nnbench: --net PATH is required");
        return 2;
    }
    let backend = args.backend.trim().to_ascii_lowercase();
    if !crate::nn::BACKENDS.contains(&backend.as_str()) {
        eprintln!(
            "nnbench: unknown backend {:?} (available: {})",
            args.backend,
            crate::nn::BACKENDS.join(", ")
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
            "nnbench: unknown --algo {:?} (auto, direct, winograd2..5, avx2, scalar)",
            args.algo
        );
        return 2;
    };
    // Anything but `cpu` goes through the registry (`auto` may find a GPU); the CPU backend
    // is built here so that `--algo` applies.
    let gpu: Option<Arc<dyn Evaluator>> = if backend == "cpu" {
        None
    } else {
        match crate::nn::open(&args.net.to_string_lossy(), &backend, threads) {
            Ok(e) if e.name().starts_with("cuda") => Some(e),
            Ok(_) => None,
            Err(e) => {
                eprintln!("nnbench: {e}");
                return if matches!(e, NnError::Unavailable(_)) {
                    2
                } else {
                    3
                };
            }
        }
    };
    let be: Arc<dyn Evaluator> = match gpu {
        Some(g) => {
            println!("pcn {} {}", g.name(), args.net.display());
            g
        }
        None => match CpuBackend::with_algo(&model, threads, algo) {
            Ok(b) => {
                println!(
                    "pcn {} {} threads {} algo {:?}",
                    b.name(),
                    args.net.display(),
                    b.threads(),
                    b.algo()
                );
                Arc::new(b)
            }
            Err(e) => {
                eprintln!("nnbench: {e}");
                return 3;
            }
        },
    };
    if args.golden {
        return golden(&args.net, &model, &*be, args.tol);
    }
    if let Some(r) = &args.agree {
        let reference = match crate::nn::open(&args.net.to_string_lossy(), r, threads) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("nnbench: reference backend: {e}");
                return 3;
            }
        };
        let n = model.info.board_size;
        return match model.info.game {
            crate::nn::NetGame::KillallGo => match crate::game::killallgo::Variant::from_size(n) {
                Some(v) => agree(
                    &crate::game::killallgo::KillallGo::new(v),
                    &*be,
                    &*reference,
                    &args,
                ),
                None => {
                    eprintln!("nnbench: no Killall-Go variant of size {n}");
                    3
                }
            },
            crate::nn::NetGame::Gomoku => {
                match crate::game::gomoku::Gomoku::new(n, n, crate::game::gomoku::Rule::Freestyle) {
                    Ok(g) => agree(&g, &*be, &*reference, &args),
                    Err(e) => {
                        eprintln!("nnbench: {e}");
                        3
                    }
                }
            }
        };
    }
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

/// The largest absolute difference between two equally long float slices (∞ when the
/// lengths differ or a value is not finite).
fn max_diff(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from((x - y).abs()))
        .fold(
            0.0,
            |m, d| if d.is_nan() { f64::INFINITY } else { m.max(d) },
        )
}

/// `--agree`: plays games from `start` in lockstep (256 at a time), each move drawn from the
/// reference's policy over the legal moves (softmax of the logits, so the positions are
/// varied and typical of the network's own play), and counts the positions where `be` and
/// `reference` pick the same legal move with the highest logit. Near ties (the reference's
/// two best logits within 0.01) are reported apart: fp16 rounding may flip them. Returns
/// the exit code.
fn agree<G: crate::game::Game>(
    start: &G,
    be: &dyn Evaluator,
    reference: &dyn Evaluator,
    args: &NnBenchArgs,
) -> i32 {
    const LANES: usize = 256;
    let info = be.info();
    let len = info.input_len();
    let a = info.actions;
    if start.input_planes() * start.width() * start.height() != len || start.num_actions() != a {
        eprintln!("nnbench: the model's input does not match the game");
        return 3;
    }
    let mut rng = Rng::new(1);
    let mut games: Vec<G> = vec![start.clone(); LANES];
    let mut input = vec![0f32; LANES * len];
    let (mut got, mut want) = (NetOutput::default(), NetOutput::default());
    let mut moves = Vec::new();
    let (mut total, mut same, mut near_ties) = (0usize, 0usize, 0usize);
    let best = |logits: &[f32], moves: &[crate::game::Move]| {
        let mut b = (moves[0], f32::NEG_INFINITY);
        for &m in moves {
            if logits[m as usize] > b.1 {
                b = (m, logits[m as usize]);
            }
        }
        b
    };
    while total < args.positions {
        for (g, row) in games.iter_mut().zip(input.chunks_exact_mut(len)) {
            g.legal_moves(&mut moves);
            if g.outcome().is_some() || moves.is_empty() || g.ply() > 150 {
                *g = start.clone();
            }
            g.encode_input(row);
        }
        if let Err(e) = be
            .evaluate(&input, LANES, &mut got)
            .and_then(|_| reference.evaluate(&input, LANES, &mut want))
        {
            eprintln!("nnbench: {e}");
            return 3;
        }
        for (i, g) in games.iter_mut().enumerate() {
            g.legal_moves(&mut moves);
            if moves.is_empty() || total >= args.positions {
                continue;
            }
            let (pg, pw) = (
                &got.policy[i * a..(i + 1) * a],
                &want.policy[i * a..(i + 1) * a],
            );
            let (mg, _) = best(pg, &moves);
            let (mw, lw) = best(pw, &moves);
            total += 1;
            if mg == mw {
                same += 1;
            } else if lw - pw[mg as usize] < 0.01 {
                near_ties += 1;
            }
            // The next move: drawn from the reference's softmax over the legal moves.
            let z: Vec<f64> = moves
                .iter()
                .map(|&m| f64::from(pw[m as usize] - lw).exp())
                .collect();
            let mut u = rng.unit() * z.iter().sum::<f64>();
            let mut pick = moves[moves.len() - 1];
            for (&m, &w) in moves.iter().zip(&z) {
                if u < w {
                    pick = m;
                    break;
                }
                u -= w;
            }
            g.play_unchecked(pick);
        }
    }
    let frac = same as f64 / total.max(1) as f64;
    let ok = frac >= args.min_agree;
    println!(
        "agree {} {} vs {}: {total} positions, top-1 agreement {:.2}% ({} differ, {near_ties} of them near ties), min {:.2}% {}",
        info.name,
        be.name(),
        reference.name(),
        100.0 * frac,
        total - same,
        100.0 * args.min_agree,
        if ok { "ok" } else { "FAIL" }
    );
    i32::from(!ok)
}

/// `--golden`: runs the golden inputs (batch of all, and each row alone) and compares the
/// raw outputs; returns the exit code (0 within `tol`, 1 beyond, 3 unreadable files).
fn golden(net: &Path, model: &Model, be: &dyn Evaluator, tol: f64) -> i32 {
    let dir = if net.is_dir() {
        net.to_path_buf()
    } else {
        net.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let path = dir.join("golden.safetensors");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("nnbench: cannot read {}: {e}", path.display());
            return 3;
        }
    };
    let st = match safetensors::SafeTensors::deserialize(&bytes) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("nnbench: {}: {e}", path.display());
            return 3;
        }
    };
    let get = |name: &str| -> Option<Vec<f32>> {
        let t = st.tensor(name).ok()?;
        Some(
            t.data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    };
    let Some(input) = get("input") else {
        eprintln!("nnbench: {} has no `input` tensor", path.display());
        return 3;
    };
    let len = model.info.input_len();
    let n = input.len() / len;
    if n == 0 || n * len != input.len() {
        eprintln!("nnbench: {}: input is not whole positions", path.display());
        return 3;
    }
    let mut out = NetOutput::default();
    if let Err(e) = be.evaluate(&input, n, &mut out) {
        eprintln!("nnbench: {e}");
        return 3;
    }
    let mut diffs: Vec<(&str, f64)> = Vec::new();
    let mut missing = false;
    let mut cmp = |label: &'static str, got: &[f32], name: &str| match get(name) {
        Some(want) => diffs.push((label, max_diff(got, &want))),
        None => missing = true,
    };
    cmp("policy", &out.policy, "policy_logits");
    match model.info.kind {
        NetKind::AlphaZero => cmp("value", &out.value, "value"),
        NetKind::Pcn { .. } => {
            cmp("blackV", &out.black_v, "blackV_logits");
            cmp("whiteV", &out.white_v, "whiteV_logits");
        }
    }
    if missing {
        eprintln!("nnbench: {} lacks expected output tensors", path.display());
        return 3;
    }
    // Each row alone must give what it gives in the batch (to float rounding).
    let mut one = NetOutput::default();
    let a = model.info.actions;
    let mut alone: f64 = 0.0;
    for i in 0..n {
        if let Err(e) = be.evaluate(&input[i * len..(i + 1) * len], 1, &mut one) {
            eprintln!("nnbench: {e}");
            return 3;
        }
        alone = alone.max(max_diff(&one.policy, &out.policy[i * a..(i + 1) * a]));
    }
    let worst = diffs.iter().map(|d| d.1).fold(alone, f64::max);
    let parts: Vec<String> = diffs.iter().map(|(l, d)| format!("{l} {d:.2e}")).collect();
    let verdict = if worst <= tol { "ok" } else { "FAIL" };
    println!(
        "golden {} {}: {} positions, max |diff| {}, batch-1 vs batch {alone:.2e}, worst {worst:.2e} (tol {tol:.0e}) {verdict}",
        model.info.name,
        be.name(),
        n,
        parts.join(", ")
    );
    i32::from(worst > tol)
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
