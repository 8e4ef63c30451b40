//! Engines with a network (issue 5): `pcn gtp --net DIR` and the Gomocup `solver` player
//! with `--net` load the model, use it in their solvers and show it (`pcn-net`, the log);
//! a model that cannot be loaded or does not fit is a clean error exit (code 2, a message
//! naming `--net`, no panic). The shared models are under `../shared/pcn/models`; the tests
//! that need them are skipped with a notice when that directory is absent.

use std::time::Duration;

mod common;

use common::{root, run_pcn_text};

/// Longest a test's engine may run after its input ended.
const LIMIT: Duration = Duration::from_secs(120);

/// The shared model `name`, or `None` (with a notice) when ../shared is absent.
fn shared_model(name: &str) -> Option<String> {
    let p = root().join("../shared/pcn/models").join(name);
    if p.exists() {
        Some(format!("../shared/pcn/models/{name}"))
    } else {
        eprintln!("NOTICE: {} absent: test skipped", p.display());
        None
    }
}

/// GTP responses (`= ...` / `? ...`, one string per response, lines joined by `\n`).
fn responses(out: &str) -> Vec<String> {
    out.split("\n\n")
        .map(|r| r.trim_matches('\n').to_string())
        .filter(|r| !r.is_empty())
        .collect()
}

#[test]
fn gtp_solver_uses_the_network() {
    let Some(model) = shared_model("go_W-max") else {
        return;
    };
    let problem = root().join("../shared/problems/killallgo/29.sgf");
    if !problem.exists() {
        eprintln!("NOTICE: {} absent: test skipped", problem.display());
        return;
    }
    let input = "pcn-net\n\
                 pcn-solver\n\
                 loadsgf ../shared/problems/killallgo/29.sgf\n\
                 pcn-solve 60\n\
                 boardsize 7\n\
                 pcn-net\n\
                 pcn-solve 0.2\n\
                 quit\n";
    let args = [
        "gtp",
        "--net",
        &model,
        "--symmetries",
        "1",
        "--log-level",
        "info",
    ];
    let (out, err, code) = run_pcn_text(&args, input, LIMIT);
    assert_eq!(code, 0, "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let r = responses(&out);
    assert_eq!(r.len(), 8, "{out}");
    // The model is loaded, with the options given.
    assert!(
        r[0].starts_with("= go_W-max pcn(") && r[0].contains("9x9 symmetries 1 backend"),
        "{}",
        r[0]
    );
    // auto: focused DFPN for Killall-Go.
    assert_eq!(r[1], "= fdfpn");
    assert_eq!(r[2], "=");
    // The networked solver proves the problem (a White win, White to move).
    assert!(r[3].starts_with("= win "), "{}", r[3]);
    // On 7x7 the 9x9 model does not fit: shown as unused, and the engine keeps solving.
    assert_eq!(r[4], "=");
    assert!(r[5].contains("not used"), "{}", r[5]);
    assert!(
        r[6].starts_with("= unknown") || r[6].starts_with("= win") || r[6] == "= loss",
        "{}",
        r[6]
    );
    // The solvers really were built on it (9x9) and without it (7x7): the log says so.
    assert!(
        err.contains("solver fdfpn: network heuristic of ../shared/pcn/models/go_W-max"),
        "{err}"
    );
    assert!(
        err.contains("solver fdfpn: killallgo-7x7 does not fit the network"),
        "{err}"
    );
}

#[test]
fn gtp_without_a_network_says_none() {
    let (out, err, code) = run_pcn_text(&["gtp", "--net", "none"], "pcn-net\nquit\n", LIMIT);
    assert_eq!(code, 0, "{err}");
    assert_eq!(responses(&out)[0], "= none");
    // Gomoku has no shipped network: the default `auto` is none there.
    let (out, err, code) = run_pcn_text(&["gtp", "--game", "gomoku"], "pcn-net\nquit\n", LIMIT);
    assert_eq!(code, 0, "{err}");
    assert_eq!(responses(&out)[0], "= none");
}

#[test]
fn gtp_uses_the_shipped_network_by_default() {
    // `--net auto` is the default: 9x9 Killall-Go gets weights/killallgo9-pcn with one
    // symmetry; after `boardsize 7` (no network of ours for 7x7) it is not used.
    let (out, err, code) = run_pcn_text(&["gtp"], "pcn-net\nboardsize 7\npcn-net\nquit\n", LIMIT);
    assert_eq!(code, 0, "{err}");
    let r = responses(&out);
    assert!(
        r[0].starts_with("= killallgo9-pcn") && r[0].contains("symmetries 1"),
        "{out}"
    );
    assert!(r[2].contains("not used"), "{out}");
}

#[test]
fn gomocup_solver_player_uses_the_network() {
    let Some(model) = shared_model("gomoku_AZ-4T") else {
        return;
    };
    // Deterministic mode (a node budget): END waits for the move. (BEGIN on an empty board
    // is answered without a search, so the brain replies to a move.)
    let input = "START 15\nTURN 7,7\nEND\n";
    let args = [
        "--nodes",
        "2000",
        "gomocup",
        "--player",
        "solver",
        "--net",
        &model,
        "--symmetries",
        "1",
        "--log-level",
        "info",
    ];
    let (out, err, code) = run_pcn_text(&args, input, LIMIT);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("network: gomoku_AZ-4T alphazero 15x15"),
        "{err}"
    );
    assert!(out.starts_with("OK"), "{out}");
    // The first move ran the MCTS solver (Gomoku's default) on the network.
    assert!(err.contains("solver mcts: network heuristic of"), "{err}");
    // A searched move is preceded by the search's MESSAGE line, which managers skip.
    let replies = out.lines().filter(|l| !l.starts_with("MESSAGE ")).count();
    assert_eq!(replies, 2, "OK and one move: {out}");
}

fn assert_clean_error(args: &[&str], input: &str, want: &str) {
    let (out, err, code) = run_pcn_text(args, input, LIMIT);
    assert_eq!(code, 2, "{args:?}: stdout {out:?} stderr {err:?}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        err.contains("--net") && err.contains(want),
        "{args:?}: {err}"
    );
    assert!(!out.contains('='), "{args:?} answered: {out}");
}

#[test]
fn bad_model_paths_are_clean_error_exits() {
    let missing = "/nonexistent/pcn-model";
    for args in [
        vec!["gtp", "--net", missing],
        vec!["gtp", "--game", "gomoku", "--net", missing],
        vec!["gomocup", "--player", "solver", "--net", missing],
        vec!["--net", missing],
    ] {
        assert_clean_error(&args, "protocol_version\nSTART 15\n", "cannot read");
    }
    // Files that are there but are no model.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("model.json"), "{ not json").expect("write");
    std::fs::write(dir.path().join("model.safetensors"), [0u8; 16]).expect("write");
    let garbage = dir.path().to_string_lossy().into_owned();
    assert_clean_error(&["gtp", "--net", &garbage], "quit\n", "bad model");
    assert_clean_error(
        &["gomocup", "--player", "solver", "--net", &garbage],
        "START 15\n",
        "bad model",
    );
    // An unknown backend.
    if let Some(model) = shared_model("go_W-max") {
        assert_clean_error(
            &["gtp", "--net", &model, "--backend", "tpu"],
            "quit\n",
            "unknown backend",
        );
    }
}

#[test]
fn a_model_for_another_game_is_refused() {
    let Some(go) = shared_model("go_W-max") else {
        return;
    };
    let Some(gomoku) = shared_model("gomoku_AZ-4T") else {
        return;
    };
    assert_clean_error(
        &["gtp", "--game", "gomoku", "--net", &go],
        "quit\n",
        "mismatch",
    );
    assert_clean_error(&["gtp", "--size", "7", "--net", &go], "quit\n", "mismatch");
    assert_clean_error(&["gtp", "--net", &gomoku], "quit\n", "mismatch");
    assert_clean_error(
        &["gomocup", "--player", "solver", "--net", &go],
        "START 15\n",
        "mismatch",
    );
}

#[test]
fn network_options_are_global_and_checked() {
    // --symmetries is range-checked by the parser (before any model is read).
    let (_, err, code) = run_pcn_text(&["gtp", "--symmetries", "9"], "quit\n", LIMIT);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--symmetries"), "{err}");
    // Defined once, for every subcommand: `pcn solve` still takes it (and reports a bad
    // path the way it always did).
    let (_, err, code) = run_pcn_text(&["solve", "--net", "/nonexistent/m", "-"], "", LIMIT);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--net /nonexistent/m"), "{err}");
}

#[test]
fn a_binary_copied_on_its_own_keeps_its_default_network() {
    // A Sabaki or Piskvork set-up often holds the binary alone: no weights/ beside it, none
    // in the working directory, no $PCN_WEIGHTS. `--net auto` then takes the copy built
    // into the binary, and the network answers as the one on disk does.
    // Outside the source tree (whose weights/ the binary would find by its own path).
    let dir = std::env::temp_dir().join(format!("pcn-lone-binary-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    let bin = dir.join("pcn");
    std::fs::copy(env!("CARGO_BIN_EXE_pcn"), &bin).expect("copy the binary");
    // One run of the copied binary, away from the source tree, with `input` on stdin.
    let run = |args: &[&str], input: &[u8]| {
        use std::io::Write;
        let mut child = std::process::Command::new(&bin)
            .args(args)
            .current_dir(&dir)
            .env_remove("PCN_WEIGHTS")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start the copied binary");
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input).expect("write stdin");
        }
        let out = child.wait_with_output().expect("wait");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code().unwrap_or(-1),
        )
    };
    let gtp = |net: &str| run(&["gtp", "--net", net], b"pcn-net\nquit\n").0;
    let auto = gtp("auto");
    assert!(auto.starts_with("= killallgo9-pcn"), "{auto}");
    let on_disk = root().join("weights/killallgo9-pcn");
    let on_disk = on_disk.to_str().expect("utf-8 path");
    assert_eq!(
        auto.lines().next(),
        gtp(on_disk).lines().next(),
        "the built-in network is the one in weights/"
    );
    // The same search with either copy: identical result, move and nodes (node-limited).
    let sgf = root().join("docs/data/solve/killallgo-own-hard/1.sgf");
    let sgf = sgf.to_str().expect("utf-8 path");
    let solve = |net: &str| {
        let (out, err, code) = run(
            &[
                "--net",
                net,
                "--threads",
                "1",
                "solve",
                "--solver",
                "fdfpn",
                "--nodes",
                "20000",
                "--time",
                "100",
                sgf,
            ],
            b"",
        );
        assert_eq!(code, 0, "{err}");
        let line = out.lines().find(|l| l.starts_with('{')).unwrap_or("");
        // Everything before the timing fields: file, result, prover, move, nodes.
        line.split(",\"seconds\"").next().unwrap_or("").to_string()
    };
    let a = solve("auto");
    assert!(
        a.contains("\"nodes\":") && a.contains("\"result\":\"win\""),
        "{a}"
    );
    assert_eq!(a, solve(on_disk));
    let _ = std::fs::remove_dir_all(&dir);
}
