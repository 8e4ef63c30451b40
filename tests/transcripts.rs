//! Transcript tests: every `protocol_tests/gomocup/NAME.in` is piped into the release binary
//! in deterministic mode (`pcn --player greedy --nodes 2000 --seed 1 gomocup`) and its stdout must equal
//! `NAME.out` byte for byte; stderr must stay empty (managers may merge it into the pipe).
//!
//! Regenerate the expected files with `UPDATE_TRANSCRIPTS=1 cargo test --release --test
//! transcripts`, then review the diff by hand.

use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;

use common::run_pcn;

/// The player is pinned so the expected files stay valid when the default player changes.
const ARGS: &[&str] = &[
    "--player", "greedy", "--nodes", "2000", "--seed", "1", "gomocup",
];

fn transcript_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol_tests/gomocup")
}

#[test]
fn gomocup_transcripts() {
    let update = std::env::var_os("UPDATE_TRANSCRIPTS").is_some();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(transcript_dir())
        .expect("protocol_tests/gomocup")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "in"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 10, "transcripts missing");
    let mut failures = Vec::new();
    for inp in &inputs {
        let input = std::fs::read(inp).expect("read .in");
        let (out, err, code) = run_pcn(ARGS, &input, Duration::from_secs(30));
        let name = inp
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        assert_eq!(code, 0, "{name}: exit code");
        assert!(
            err.is_empty(),
            "{name}: stderr not quiet: {}",
            String::from_utf8_lossy(&err)
        );
        let expected_path = inp.with_extension("out");
        if update {
            std::fs::write(&expected_path, &out).expect("write .out");
            continue;
        }
        let expected = std::fs::read(&expected_path).unwrap_or_default();
        if out != expected {
            failures.push(format!(
                "{name}:\n--- expected\n{}--- got\n{}",
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&out)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "transcripts differ:\n{}",
        failures.join("\n")
    );
}

/// Sanity checks that hold for every transcript whatever the player: every move line is a
/// point on the board, and nothing follows END.
#[test]
fn transcript_moves_are_on_board() {
    for e in std::fs::read_dir(transcript_dir()).expect("dir").flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "out") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("read");
        for l in text.lines() {
            let parts: Vec<&str> = l.split(',').collect();
            if parts.len() == 2 {
                if let (Ok(x), Ok(y)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
                    assert!((0..22).contains(&x) && (0..22).contains(&y), "{p:?}: {l}");
                }
            }
        }
    }
}
