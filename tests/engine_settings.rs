//! The command line's and the protocol's engine settings reach the searches of every front
//! end: the search threads (`--threads`, Gomocup `INFO thread_num`) and the seed (`--seed`)
//! of the MCTS solver of the Gomocup `solver` players and of GTP, and the threads of the
//! `pcn` player (Gomocup and GTP genmove), read from the searches' debug log on stderr
//! (`--log-level debug`), which reports what they actually ran with.

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

/// The "N search threads, M nodes (H by helpers)" of the `pcn` player's log lines, as
/// (threads, helper nodes).
fn pcn_runs(log: &str) -> Vec<(u64, u64)> {
    log.lines()
        .filter_map(|l| l.split("pcn: ").nth(1))
        .filter(|r| r.contains("search threads"))
        .filter_map(|r| {
            let threads = r.split(' ').next()?.parse().ok()?;
            let helpers = r.split('(').nth(1)?.split(' ').next()?.parse().ok()?;
            Some((threads, helpers))
        })
        .collect()
}

/// Runs the `pcn` player for one move (3 000 nodes for its main thread) and returns stderr.
fn pcn_log(extra: &[&str], script: &str) -> String {
    let mut args = vec!["--nodes", "3000", "--log-level", "debug"];
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

#[test]
fn threads_reach_the_pcn_player() {
    let default = pcn_runs(&pcn_log(&[], ONE_MOVE));
    assert_eq!(default, vec![(1, 0)], "one thread, no helper");
    // Two threads: the helper searches beside the main thread.
    let cli = pcn_runs(&pcn_log(&["--threads", "2"], ONE_MOVE));
    assert!(cli.len() == 1 && cli[0].0 == 2 && cli[0].1 > 0, "{cli:?}");
    let info = pcn_runs(&pcn_log(
        &[],
        "START 15\nINFO thread_num 2\nTURN 7,7\nEND\n",
    ));
    assert!(
        info.len() == 1 && info[0].0 == 2 && info[0].1 > 0,
        "{info:?}"
    );
    // Absurd requests are capped (at the hardware's threads, at least 2), not obeyed.
    let many = pcn_runs(&pcn_log(
        &[],
        "START 15\nINFO thread_num 2147483647\nTURN 7,7\nEND\n",
    ));
    let hw = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    assert!(many.len() == 1 && many[0].0 == hw.max(2), "{many:?}");
}

#[test]
fn threads_reach_the_gtp_gomoku_player() {
    let args = [
        "--nodes",
        "3000",
        "--threads",
        "2",
        "--log-level",
        "debug",
        "gtp",
        "--game",
        "gomoku",
        "--size",
        "15",
        "--solver",
        "none",
    ];
    let script = "play b h8\ngenmove w\nquit\n";
    let (out, err, code) = run_pcn_text(&args, script, Duration::from_secs(60));
    assert_eq!(code, 0, "exit code; stderr: {err}");
    assert!(out.contains("= "), "{out}");
    let runs = pcn_runs(&err);
    assert!(
        runs.len() == 1 && runs[0].0 == 2 && runs[0].1 > 0,
        "{runs:?}: {err}"
    );
}
