//! The command line's and the protocol's engine settings reach the searches of every front
//! end: the search threads (`--threads`, Gomocup `INFO thread_num`) and the seed (`--seed`)
//! of the MCTS solver of the Gomocup `solver` players and of GTP, read from the solver's
//! debug log on stderr (`--log-level debug`), which reports what it actually ran with.

use std::time::Duration;

mod common;

use common::run_pcn_text;

/// Runs the `solver` player for one move in deterministic mode and returns stderr.
fn solver_log(extra: &[&str], script: &str) -> String {
    let mut args = vec![
        "--player",
        "solver",
        "--nodes",
        "300",
        "--log-level",
        "debug",
    ];
    args.extend_from_slice(extra);
    args.push("gomocup");
    let (out, err, code) = run_pcn_text(&args, script, Duration::from_secs(60));
    assert_eq!(code, 0, "exit code; stderr: {err}");
    assert!(
        out.lines().any(|l| l.split(',').count() == 2),
        "no move in {out:?}"
    );
    err
}

/// The "N search threads, seed S" of the MCTS solver's log lines.
fn mcts_runs(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.split("mcts: ").nth(1))
        .map(str::to_string)
        .collect()
}

const ONE_MOVE: &str = "START 15\nTURN 7,7\nEND\n";

#[test]
fn threads_reach_the_solver_player() {
    let default = mcts_runs(&solver_log(&[], ONE_MOVE));
    assert!(!default.is_empty(), "the solver did not run");
    assert!(default.iter().all(|r| r.starts_with("1 search threads")));
    let cli = mcts_runs(&solver_log(&["--threads", "3"], ONE_MOVE));
    assert!(!cli.is_empty() && cli.iter().all(|r| r.starts_with("3 search threads")));
    // INFO thread_num replaces --threads for the next search.
    let info = mcts_runs(&solver_log(
        &["--threads", "3"],
        "START 15\nINFO thread_num 2\nTURN 7,7\nEND\n",
    ));
    assert!(!info.is_empty() && info.iter().all(|r| r.starts_with("2 search threads")));
}

#[test]
fn seed_reaches_the_solver_player() {
    for seed in ["7", "12345"] {
        let runs = mcts_runs(&solver_log(&["--seed", seed], ONE_MOVE));
        assert!(!runs.is_empty(), "the solver did not run");
        let want = format!("seed {seed}");
        assert!(runs.iter().all(|r| r.ends_with(&want)), "{runs:?}");
    }
}

#[test]
fn threads_and_seed_reach_the_gtp_solver() {
    let args = [
        "--nodes",
        "300",
        "--threads",
        "2",
        "--seed",
        "9",
        "--log-level",
        "debug",
        "gtp",
        "--game",
        "gomoku",
        "--size",
        "9",
        "--solver",
        "mcts",
    ];
    let (out, err, code) = run_pcn_text(&args, "genmove b\nquit\n", Duration::from_secs(60));
    assert_eq!(code, 0, "exit code; stderr: {err}");
    assert!(out.starts_with("= "), "{out}");
    let runs = mcts_runs(&err);
    assert!(!runs.is_empty(), "the solver did not run: {err}");
    assert!(
        runs.iter().all(|r| r == "2 search threads, seed 9"),
        "{runs:?}"
    );
}
