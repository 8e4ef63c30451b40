//! GTP transcript tests: every `protocol_tests/gtp/NAME.in` is piped into the release binary
//! in deterministic mode (`pcn --nodes 200 --seed 1` plus the arguments named on the file's
//! first line, `# args: gtp --game ...`), run from the repository root, and its stdout must
//! equal `NAME.out` byte for byte; stderr must stay empty.
//!
//! Regenerate the expected files with `UPDATE_TRANSCRIPTS=1 cargo test --release --test
//! gtp_transcripts`, then review the diff by hand. Transcripts that read `../shared/...` are
//! skipped with a notice when that directory is absent.
//!
//! The timed tests below (live analysis, genmove under a clock, queued input during a
//! genmove) check structure rather than bytes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::{root, run_pcn, Live};

const FIXED: &[&str] = &["--nodes", "200", "--seed", "1"];

fn args_of(text: &str) -> Vec<String> {
    let first = text.lines().next().unwrap_or("");
    // A transcript may name its own node budget.
    let fixed = if first.contains("--nodes") {
        &FIXED[2..]
    } else {
        FIXED
    };
    let mut args: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    match first.strip_prefix("# args:") {
        Some(a) => args.extend(a.split_whitespace().map(String::from)),
        None => args.push("gtp".into()),
    }
    args
}

/// Checks the framing of a whole GTP output: responses start with `=`/`?`, end with one
/// blank line, contain no blank line, and (outside analysis) no line starting `info `.
fn check_framing(name: &str, out: &str) -> usize {
    let mut responses = 0;
    let mut in_response = false;
    let mut analysis = false;
    for l in out.split_inclusive('\n') {
        assert!(l.ends_with('\n'), "{name}: unterminated line {l:?}");
        let l = &l[..l.len() - 1];
        if !in_response {
            assert!(
                l.starts_with('=') || l.starts_with('?'),
                "{name}: response starts with {l:?}"
            );
            responses += 1;
            in_response = true;
            analysis = false;
            continue;
        }
        if l.is_empty() {
            in_response = false;
            continue;
        }
        if l.starts_with("info ") {
            analysis = true;
        }
        assert!(
            !(l.starts_with("play ") || (l.starts_with("info ") && !analysis)),
            "{name}: bad line {l:?}"
        );
        assert!(!l.starts_with('=') && !l.starts_with('?'), "{name}: {l:?}");
    }
    assert!(!in_response, "{name}: last response not terminated");
    responses
}

/// Number of lines that need an answer (after preprocessing).
fn commands_in(text: &str) -> usize {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty())
        .count()
}

#[test]
fn gtp_transcripts() {
    let update = std::env::var_os("UPDATE_TRANSCRIPTS").is_some();
    let dir = root().join("protocol_tests/gtp");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("protocol_tests/gtp")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "in"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 12, "transcripts missing");
    let shared = root().join("../shared/problems");
    let mut failures = Vec::new();
    let mut ran = 0;
    for inp in &inputs {
        let name = inp
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(inp).expect("read .in");
        if text.contains("../shared/") && !shared.is_dir() {
            eprintln!("NOTICE: {name}: ../shared/problems is absent; transcript skipped");
            continue;
        }
        let (out, err, code) = run_pcn(&args_of(&text), text.as_bytes(), Duration::from_secs(60));
        ran += 1;
        assert_eq!(code, 0, "{name}: exit code");
        assert!(
            err.is_empty(),
            "{name}: stderr not quiet: {}",
            String::from_utf8_lossy(&err)
        );
        let out_s = String::from_utf8(out.clone()).expect("utf-8 output");
        let responses = check_framing(&name, &out_s);
        // `quit` ends the session early in framing.in; every other line is answered.
        if !text.contains("quit") {
            assert_eq!(
                responses,
                commands_in(&text),
                "{name}: one response per command"
            );
        }
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
                out_s
            ));
        }
    }
    assert!(ran >= 11);
    assert!(
        failures.is_empty(),
        "transcripts differ:\n{}",
        failures.join("\n")
    );
}

fn opening(e: &mut Live) {
    e.send("play B C7\nplay B G7\nplay B C3\nplay B G3\nplay W E5\n");
    for _ in 0..5 {
        assert_eq!(e.response(), vec!["="]);
    }
}

#[test]
fn live_analysis_streams_then_answers_the_interrupting_command() {
    for (cmd, kata) in [("kata-analyze B 10", true), ("7 lz-analyze B 10", false)] {
        let mut e = Live::start(&["gtp", "--game", "killallgo"]);
        opening(&mut e);
        e.send(&format!("{cmd}\n"));
        let first = e.line();
        assert_eq!(first, if kata { "=" } else { "=7" });
        std::thread::sleep(Duration::from_millis(400));
        e.send("protocol_version\n");
        let body = e.response();
        assert!(!body.is_empty(), "{cmd}: no info line in 400 ms");
        for l in &body {
            assert!(l.starts_with("info move "), "{l}");
            for seg in l.split("info ").skip(1) {
                let t: Vec<&str> = seg.split_whitespace().collect();
                assert_eq!(t[0], "move");
                assert_ne!(t[1], "pass");
                assert_eq!(t[2], "visits");
                assert_eq!(t[4], "winrate");
                let wr = t[5];
                if kata {
                    assert!(wr.contains('.'), "{wr}");
                    let v: f64 = wr.parse().unwrap();
                    assert!((0.0..=1.0).contains(&v));
                } else {
                    let v: i64 = wr.parse().expect("integer winrate");
                    assert!((0..=10000).contains(&v));
                }
                let pv = t.iter().position(|&x| x == "pv").expect("pv");
                assert!(pv + 1 < t.len(), "empty pv");
                assert_eq!(t[pv + 1], t[1], "pv starts with the move");
            }
        }
        assert_eq!(
            e.response(),
            vec!["= 2"],
            "{cmd}: interrupting command answered"
        );
        // A bare empty line also stops an analysis.
        e.send("kata-analyze W 5\n");
        assert_eq!(e.line(), "=");
        std::thread::sleep(Duration::from_millis(100));
        e.send("\nname\n");
        let _ = e.response();
        assert_eq!(e.response(), vec!["= pcn"]);
        e.send("quit\n");
        assert_eq!(e.response(), vec!["="]);
        assert_eq!(e.wait(Duration::from_secs(10)), 0);
    }
}

#[test]
fn genmove_is_not_interrupted_and_respects_time_left() {
    let mut e = Live::start(&["gtp", "--game", "killallgo", "--move-time", "0.4"]);
    opening(&mut e);
    let t0 = Instant::now();
    e.send("genmove b\nprotocol_version\n");
    let r = e.response();
    assert_eq!(r.len(), 1);
    assert!(r[0].starts_with("= ") && r[0] != "= 2", "{r:?}");
    assert!(t0.elapsed() >= Duration::from_millis(200), "searched");
    assert_eq!(e.response(), vec!["= 2"]);
    // Byo-yomi: 1 second for 1 stone; the move must come well within it.
    e.send("time_settings 0 1 1\ntime_left w 1 1\n");
    assert_eq!(e.response(), vec!["="]);
    assert_eq!(e.response(), vec!["="]);
    let t0 = Instant::now();
    e.send("genmove w\n");
    let r = e.response();
    let el = t0.elapsed();
    assert!(r[0].starts_with("= "), "{r:?}");
    assert!(
        el < Duration::from_millis(1000),
        "took {el:?} with 1 s left"
    );
    assert!(el > Duration::from_millis(300), "used its time: {el:?}");
}

#[test]
fn auto_detection_routes_gtp() {
    let (out, err, code) = run_pcn(
        &["--nodes", "50"],
        b"protocol_version\nboardsize 9\nplay b c7\nboardsize 19\nquit\n",
        Duration::from_secs(60),
    );
    assert_eq!(code, 0);
    assert!(err.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out),
        "= 2\n\n=\n\n=\n\n? unacceptable size\n\n=\n\n"
    );
}

#[test]
fn transcripts_cover_the_brief() {
    // The transcript set is the conformance list of protocols.md part H; keep it complete.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol_tests/gtp");
    let all: String = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "in"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    for needle in [
        "007 ",
        "\r\n",
        "\t",
        "boardsize 19",
        "play b I5",
        "play x e5",
        "play b A10",
        "undo",
        "list_commands",
        "known_command",
        "showboard",
        "loadsgf ../shared/problems/killallgo/1.sgf",
        "printsgf",
        "genmove",
        "time_left",
        "pcn-solve",
        "--game gomoku",
        "set_free_handicap",
        "kata-analyze",
        "lz-analyze",
    ] {
        assert!(all.contains(needle), "no transcript uses {needle:?}");
    }
}

/// The real-client test (protocol_tests/sabaki): @sabaki/gtp 3.0.0, installed under
/// .tools/node by `make test`, drives the engine like Sabaki. Skipped with a notice when
/// node or the package is missing.
#[test]
fn sabaki_real_client() {
    let modules = root().join(".tools/node/node_modules");
    if !modules.join("@sabaki/gtp").is_dir() {
        eprintln!("NOTICE: @sabaki/gtp not installed under .tools/node (run `make test`); Sabaki real-client test skipped");
        return;
    }
    let out = match Command::new("node")
        .arg(root().join("protocol_tests/sabaki/sabaki_client.js"))
        .arg(env!("CARGO_BIN_EXE_pcn"))
        .env("NODE_PATH", &modules)
        .current_dir(root())
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("NOTICE: cannot run node ({e}); Sabaki real-client test skipped");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    // A short excerpt for the log (visible with --nocapture).
    for l in text
        .lines()
        .filter(|l| l.contains("analyze") || l.contains("info"))
        .take(6)
    {
        println!("{l}");
    }
    assert_eq!(
        out.status.code(),
        Some(0),
        "sabaki client failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("all checks passed"));
}
