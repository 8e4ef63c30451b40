//! `pcn train-patterns`: a small self-play run writes a weight file that loads, retraining
//! from the saved samples gives the same weights, and bad options or files are clear errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pcn::search::gomoku::learn::patpolicy::PatternPolicy;
use pcn::train::patterns::read_samples;

fn tmp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn pcn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(args)
        .output()
        .expect("run pcn")
}

/// A small self-play run on `threads` threads saving its samples to `samples`.
fn self_play(threads: &str, samples: &Path, out: &Path) -> Output {
    pcn(&[
        "--threads",
        threads,
        "train-patterns",
        "--games",
        "6",
        "--move-nodes",
        "300",
        "--save-samples",
        samples.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn self_play_train_save_and_retrain() {
    let d = tmp_dir("train_patterns");
    let (w1, w2, s) = (d.join("a.bin"), d.join("b.bin"), d.join("s.bin"));
    let o = self_play("2", &s, &w1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("top-1"), "{err}");
    let p1 = PatternPolicy::from_bytes(&std::fs::read(&w1).unwrap()).expect("weights load");
    assert_ne!(p1, PatternPolicy::default(), "training changed the weights");
    let samples = read_samples(&std::fs::read(&s).unwrap()).expect("samples load");
    assert!(samples.len() >= 20, "{} samples", samples.len());
    // Same samples, same seed: the same weights.
    let o = pcn(&[
        "train-patterns",
        "--from-samples",
        s.to_str().unwrap(),
        "--out",
        w2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&w1).unwrap(), std::fs::read(&w2).unwrap());
    // Fine-tuning from the first table starts where it ended: the report says so.
    let o = pcn(&[
        "train-patterns",
        "--from-samples",
        s.to_str().unwrap(),
        "--init",
        w1.to_str().unwrap(),
        "--epochs",
        "1",
        "--out",
        w2.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("starting weights"), "{err}");
    // One thread plays the same games as two.
    let s1 = d.join("s1.bin");
    let o = self_play("1", &s1, &w2);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&s).unwrap(), std::fs::read(&s1).unwrap());
}

#[test]
fn bad_options_and_files() {
    let d = tmp_dir("train_patterns_bad");
    let out = d.join("w.bin");
    let out = out.to_str().unwrap();
    for args in [
        &["train-patterns", "--games", "0", "--out", out][..],
        &["train-patterns", "--rule", "go", "--out", out],
        &["train-patterns", "--lr", "-1", "--out", out],
    ] {
        let o = pcn(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    let junk = d.join("junk.bin");
    std::fs::write(&junk, b"not samples").unwrap();
    let o = pcn(&[
        "train-patterns",
        "--from-samples",
        junk.to_str().unwrap(),
        "--out",
        out,
    ]);
    unreadable(&o, out);
    // A starting table that is not a weight file: the same clear error, nothing written.
    let samples = d.join("s.bin");
    let o = pcn(&[
        "train-patterns",
        "--games",
        "1",
        "--move-nodes",
        "100",
        "--save-samples",
        samples.to_str().unwrap(),
        "--out",
        d.join("ok.bin").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = pcn(&[
        "train-patterns",
        "--from-samples",
        samples.to_str().unwrap(),
        "--init",
        junk.to_str().unwrap(),
        "--out",
        out,
    ]);
    unreadable(&o, out);
}

/// The run failed on a file it could not read, with exit code 1, and wrote no weights.
fn unreadable(o: &Output, out: &str) {
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    assert!(!Path::new(out).exists(), "nothing written on error");
}
