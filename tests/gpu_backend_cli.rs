//! The GPU backend's command-line behaviour on a machine without a GPU (CI): `--backend
//! cuda` is a clear error with exit code 2, `--backend auto` falls back to the CPU and says
//! so at `--log-level info`. Holds for builds with and without the `cuda` feature; on a
//! machine with a usable GPU the tests say so and check nothing.

use std::path::PathBuf;
use std::process::{Command, Output};

fn model() -> Option<String> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/pcn/models/go_W-max");
    if d.join("model.safetensors").is_file() {
        Some(d.to_string_lossy().into_owned())
    } else {
        eprintln!(
            "NOTICE: {} absent: GPU backend CLI tests skipped",
            d.display()
        );
        None
    }
}

fn pcn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(args)
        .output()
        .expect("pcn runs")
}

/// Whether this machine has a usable GPU (then the no-GPU paths cannot be tested here).
fn gpu_here(out: &Output) -> bool {
    out.status.code() == Some(0)
}

#[test]
fn cuda_without_gpu_is_exit_2_with_a_reason() {
    let Some(net) = model() else { return };
    let nb = pcn(&[
        "nnbench",
        "--net",
        &net,
        "--backend",
        "cuda",
        "--batch",
        "1",
        "--reps",
        "1",
        "--seconds",
        "0.01",
    ]);
    if gpu_here(&nb) {
        eprintln!("NOTICE: a GPU is usable here: the no-GPU error path is not tested");
        return;
    }
    let err = String::from_utf8_lossy(&nb.stderr);
    assert_eq!(nb.status.code(), Some(2), "{err}");
    assert!(err.contains("backend unavailable: cuda:"), "{err}");
    // Either no GPU support compiled in, or no driver/GPU/library found: each says which.
    assert!(
        err.contains("no GPU support") || err.contains("no CUDA") || err.contains("not found"),
        "{err}"
    );
    // The same through the solver's network option, before any problem is read.
    let sv = pcn(&[
        "solve",
        "--backend",
        "cuda-fp32",
        "--net",
        &net,
        "/nonexistent.sgf",
    ]);
    let err = String::from_utf8_lossy(&sv.stderr);
    assert_eq!(sv.status.code(), Some(2), "{err}");
    assert!(err.contains("backend unavailable: cuda:"), "{err}");
    // An unknown backend names the accepted ones.
    let bad = pcn(&["nnbench", "--net", &net, "--backend", "tpu"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cuda-fp32"));
}

#[test]
fn auto_falls_back_to_the_cpu_and_says_so() {
    let Some(net) = model() else { return };
    let out = pcn(&[
        "--log-level",
        "info",
        "nnbench",
        "--net",
        &net,
        "--backend",
        "auto",
        "--batch",
        "1",
        "--reps",
        "1",
        "--seconds",
        "0.01",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{err}");
    if text.starts_with("pcn cuda") {
        assert!(err.contains("backend auto: using the GPU"), "{err}");
        return;
    }
    assert!(text.starts_with("pcn cpu"), "{text}");
    assert!(
        err.contains("backend auto:") && err.contains("CPU"),
        "{err}"
    );
    // Silent without --log-level.
    let quiet = pcn(&[
        "nnbench",
        "--net",
        &net,
        "--batch",
        "1",
        "--reps",
        "1",
        "--seconds",
        "0.01",
    ]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("backend auto"));
}

#[test]
fn golden_check_passes_on_the_cpu_and_fails_beyond_tolerance() {
    let Some(net) = model() else { return };
    let ok = pcn(&["nnbench", "--net", &net, "--backend", "cpu", "--golden"]);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert_eq!(ok.status.code(), Some(0), "{text}");
    assert!(
        text.contains("golden go_W-max cpu: 8 positions") && text.contains(" ok"),
        "{text}"
    );
    // A tolerance below the CPU's own rounding must fail (the check really compares).
    let strict = pcn(&[
        "nnbench",
        "--net",
        &net,
        "--backend",
        "cpu",
        "--golden",
        "--tol",
        "1e-9",
    ]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stdout).contains("FAIL"));
}
