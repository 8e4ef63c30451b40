//! The CPU backend against the golden outputs of every model in ../shared/pcn/models
//! (produced by the original TorchScript networks): logits within 1e-4, tanh values within
//! 1e-5, expected PCN bins within 5e-3. Also checks batch-size independence and thread
//! counts. Skips with a notice when ../shared is absent.

mod common;
use common::{golden_floats as floats, max_diff};
use std::path::{Path, PathBuf};

use pcn::nn::cpu::{ConvAlgo, CpuBackend, Simd};
use pcn::nn::model::Model;
use pcn::nn::{Evaluator, NetKind, NetOutput};
use safetensors::SafeTensors;

fn models_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pcn/models");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!(
            "NOTICE: {} absent: golden network tests skipped",
            d.display()
        );
        None
    }
}

fn model_dirs() -> Vec<PathBuf> {
    let Some(d) = models_dir() else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.join("model.safetensors").is_file() && p.join("golden.safetensors").is_file());
    v.sort();
    v
}

fn expected_bins(logits: &[f32], bins: usize) -> Vec<f64> {
    logits
        .chunks_exact(bins)
        .map(|l| {
            let m = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f64> = l.iter().map(|&x| f64::from(x - m).exp()).collect();
            let z: f64 = e.iter().sum();
            e.iter().enumerate().map(|(j, p)| p / z * j as f64).sum()
        })
        .collect()
}

fn check_model(dir: &Path, algo: ConvAlgo, threads: usize) {
    let model = Model::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let bytes = std::fs::read(dir.join("golden.safetensors")).expect("golden file readable");
    let st = SafeTensors::deserialize(&bytes).expect("golden file parses");
    let input = floats(&st, "input");
    let n = input.len() / model.info.input_len();
    assert_eq!(n * model.info.input_len(), input.len());
    let be = CpuBackend::with_algo(&model, threads, algo).expect("backend");
    let mut out = NetOutput::default();
    be.evaluate(&input, n, &mut out).expect("evaluate");
    let name = &model.info.name;
    let dp = max_diff(&out.policy, &floats(&st, "policy_logits"));
    assert!(dp <= 1e-4, "{name} {algo:?}: policy logits differ by {dp}");
    match model.info.kind {
        NetKind::AlphaZero => {
            let dv = max_diff(&out.value, &floats(&st, "value"));
            assert!(dv <= 1e-5, "{name} {algo:?}: value differs by {dv}");
            eprintln!("{name} {algo:?} t{threads}: policy {dp:.2e} value {dv:.2e}");
        }
        NetKind::Pcn { bins } => {
            for head in ["blackV", "whiteV"] {
                let got = if head == "blackV" {
                    &out.black_v
                } else {
                    &out.white_v
                };
                let d = max_diff(got, &floats(&st, &format!("{head}_logits")));
                assert!(d <= 1e-4, "{name} {algo:?}: {head} logits differ by {d}");
                let want = floats(&st, &format!("{head}_expected"));
                let e = expected_bins(got, bins);
                let de = e
                    .iter()
                    .zip(&want)
                    .map(|(a, b)| (a - f64::from(*b)).abs())
                    .fold(0.0, f64::max);
                assert!(
                    de <= 5e-3,
                    "{name} {algo:?}: {head} expected bins differ by {de}"
                );
                eprintln!(
                    "{name} {algo:?} t{threads}: policy {dp:.2e} {head} logits {d:.2e} E {de:.2e}"
                );
            }
        }
    }
    // Batch independence: each position alone gives the same outputs (to float rounding).
    let len = model.info.input_len();
    let mut one = NetOutput::default();
    for i in [0, n - 1] {
        be.evaluate(&input[i * len..(i + 1) * len], 1, &mut one)
            .expect("evaluate 1");
        let a = model.info.actions;
        let d = max_diff(&one.policy, &out.policy[i * a..(i + 1) * a]);
        assert!(
            d <= 1e-5,
            "{name}: batch-1 vs batch-{n} policy differ by {d}"
        );
    }
}

#[test]
fn golden_outputs_direct() {
    for d in model_dirs() {
        check_model(&d, ConvAlgo::Direct, 1);
    }
}

#[test]
fn empty_batch_and_bad_length() {
    let Some(d) = model_dirs().into_iter().next() else {
        return;
    };
    let model = Model::load(&d).expect("load");
    let be = CpuBackend::new(&model, 2).expect("backend");
    let mut out = NetOutput::default();
    be.evaluate(&[], 0, &mut out).expect("empty batch is fine");
    assert!(out.policy.is_empty());
    let bad = vec![0f32; model.info.input_len() + 1];
    assert!(be.evaluate(&bad, 1, &mut out).is_err());
    assert_eq!(be.name(), "cpu");
}

#[test]
fn golden_outputs_winograd() {
    for d in model_dirs() {
        for (m, simd, threads) in [
            (3, Simd::Avx512, 1),
            (3, Simd::Avx512, 2),
            (3, Simd::Avx2, 2),
            (3, Simd::Scalar, 2),
            (2, Simd::Avx512, 2),
            (4, Simd::Avx512, 1),
            (4, Simd::Avx2, 1),
            (5, Simd::Avx512, 2),
            (5, Simd::Avx2, 1),
        ] {
            check_model(&d, ConvAlgo::Winograd { m, simd }, threads);
        }
    }
}

#[test]
fn default_backend_is_winograd() {
    let Some(d) = model_dirs().into_iter().next() else {
        return;
    };
    let model = Model::load(&d).expect("load");
    let be = CpuBackend::new(&model, 2).expect("backend");
    assert!(
        matches!(be.algo(), ConvAlgo::Winograd { m: 3, .. }),
        "{:?}",
        be.algo()
    );
    assert_eq!(be.threads(), 2);
}

/// `pcn nnbench` runs on a shared model and prints a rate per batch size; a bad path is
/// exit code 3, an unknown backend 2.
#[test]
fn nnbench_cli() {
    let exe = env!("CARGO_BIN_EXE_pcn");
    let run = |args: &[&str]| {
        std::process::Command::new(exe)
            .args(args)
            .output()
            .expect("pcn runs")
    };
    let bad = run(&["nnbench", "--net", "/nonexistent/model"]);
    assert_eq!(bad.status.code(), Some(3));
    let Some(d) = model_dirs().into_iter().next() else {
        return;
    };
    let net = d.to_string_lossy().to_string();
    let wrong = run(&["nnbench", "--net", &net, "--backend", "tpu"]);
    assert_eq!(wrong.status.code(), Some(2));
    let ok = run(&[
        "nnbench",
        "--net",
        &net,
        "--batch",
        "1,3",
        "--reps",
        "1",
        "--seconds",
        "0.01",
        "--threads",
        "2",
    ]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let text = String::from_utf8_lossy(&ok.stdout);
    for b in ["batch 1: ", "batch 3: "] {
        let line = text
            .lines()
            .find(|l| l.starts_with(b))
            .unwrap_or_else(|| panic!("no {b} line in {text}"));
        let rate: f64 = line[b.len()..]
            .split_whitespace()
            .next()
            .and_then(|x| x.parse().ok())
            .expect("a rate");
        assert!(rate > 0.0, "{line}");
    }
}
