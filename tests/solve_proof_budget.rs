//! `pcn solve` honesty about proofs: with `--proof-dir`, a win whose proof tree was not built
//! (here: `--proof-time 0`, no time for the extraction) is reported with `proof_error` and
//! counted as `win-noproof` ("win, no proof") in the summary, not as a win; with time, the
//! same problem gets its proof, a `proof_seconds` figure and the `win` row.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// 5x5 freestyle: Black to move with four in a row on row 1 (wins at E1).
const BLACK_WINS: &str = "(;FF[4]GM[4]SZ[5];B[ae];W[ad];B[be];W[bd];B[ce];W[cd];B[de];W[dd])";

fn tmp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn solve(proof_dir: &Path, proof_time: &str) -> (Value, String, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args([
            "solve",
            "--rule",
            "freestyle",
            "--nodes",
            "50000",
            "--proof-dir",
        ])
        .arg(proof_dir)
        .args(["--proof-time", proof_time, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pcn");
    if let Some(mut i) = child.stdin.take() {
        use std::io::Write;
        let _ = i.write_all(BLACK_WINS.as_bytes());
    }
    let o: Output = child.wait_with_output().expect("wait pcn");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Value = serde_json::from_str(out.lines().next().expect("a JSON line")).expect("JSON");
    (
        v,
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code(),
    )
}

fn row_count(summary: &str, row: &str) -> Option<String> {
    summary
        .lines()
        .find(|l| l.split_whitespace().next() == Some(row))
        .and_then(|l| l.split_whitespace().nth(1).map(String::from))
}

#[test]
fn win_without_proof_is_counted_separately() {
    let dir = tmp_dir("solve_proof_budget");
    let (v, summary, code) = solve(&dir, "0");
    assert_eq!(code, Some(0), "{summary}");
    assert_eq!(v["result"], "win");
    assert!(v["proof"].is_null());
    let why = v["proof_error"].as_str().expect("proof_error");
    assert!(why.contains("--proof-time"), "{why}");
    assert_eq!(
        row_count(&summary, "win").as_deref(),
        Some("0"),
        "{summary}"
    );
    assert_eq!(
        row_count(&summary, "win-noproof").as_deref(),
        Some("1"),
        "{summary}"
    );
    assert_eq!(
        row_count(&summary, "solved").as_deref(),
        Some("1"),
        "{summary}"
    );

    let (v, summary, code) = solve(&dir, "30");
    assert_eq!(code, Some(0), "{summary}");
    assert!(v["proof"].is_string(), "{v}");
    assert!(v["proof_seconds"].as_f64().is_some_and(|s| s < 30.0), "{v}");
    assert_eq!(
        row_count(&summary, "win").as_deref(),
        Some("1"),
        "{summary}"
    );
    assert_eq!(
        row_count(&summary, "win-noproof").as_deref(),
        Some("0"),
        "{summary}"
    );
}
