//! `--workers` through the real binary: `pcn solve` (JSON lines, merged proof files that
//! `pcn verify` accepts, the same answers as one worker, deterministic with `--nodes`), the
//! GTP solver's `pcn-solve`, and the Gomocup `solver` player.

use std::time::Duration;

use pcn::game::{Color, Game};

mod common;

use common::{killallgo_record, run_pcn_text, tmp_dir, Brute, Live};

fn lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Killall-Go 7x7 endgames whose value for the side to move exhaustive search finds, written
/// as problem files; returns (dir, whether the side to move wins, in file order).
fn killallgo_problems(name: &str) -> (std::path::PathBuf, Vec<bool>) {
    let dir = tmp_dir(name);
    let mut truths = Vec::new();
    for g in common::killallgo_positions(70, 80, 23) {
        if truths.len() == 8 {
            break;
        }
        let prover = g.to_move();
        let Some(t) = Brute::new(300_000, common::no_key).wins(&mut g.clone(), prover) else {
            continue;
        };
        let sgf = killallgo_record(&g).to_sgf();
        std::fs::write(dir.join(format!("{}.sgf", truths.len() + 1)), sgf).unwrap();
        truths.push(t);
    }
    // (Mostly wins for the side to move; tests/joblevel.rs checks losses.)
    assert_eq!(truths.len(), 8, "{truths:?}");
    (dir, truths)
}

#[test]
fn solve_with_workers_writes_merged_proofs_that_verify() {
    let (dir, truths) = killallgo_problems("joblevel_cli_kag");
    let d = dir.to_str().unwrap();
    let base = ["--net", "none", "solve", "--time", "20", d];
    let (one, _, code) = run_pcn_text(&base, "", Duration::from_secs(300));
    assert_eq!(code, 0);
    let one = lines(&one);
    // The manager's split (merged proofs of many jobs), and the default shared mode (each
    // worker on the whole problem; the proof is the finishing worker's).
    for mode in ["split", "shared"] {
        let proofs = tmp_dir(&format!("joblevel_cli_kag_proofs_{mode}"));
        let p = proofs.to_str().unwrap();
        let mut args = vec!["--workers", "2", "--net", "none", "solve", "--time", "20"];
        args.extend([
            "--job-mode",
            mode,
            "--job-nodes",
            "200",
            "--proof-dir",
            p,
            d,
        ]);
        let (two, err, code) = run_pcn_text(&args, "", Duration::from_secs(300));
        assert_eq!(code, 0, "{err}");
        let two = lines(&two);
        assert_eq!(one.len(), 8);
        assert_eq!(two.len(), 8);
        let mut proof_files = Vec::new();
        for (i, ((a, b), truth)) in one.iter().zip(&two).zip(&truths).enumerate() {
            assert!(a.get("jobs").is_none(), "one worker runs no manager: {a}");
            let jobs = b
                .get("jobs")
                .unwrap_or_else(|| panic!("no jobs object: {b}"));
            assert_eq!(jobs["workers"], 2, "{b}");
            assert_eq!(b["solver"], "fdfpn", "{b}");
            let want = if *truth { "win" } else { "loss" };
            assert_eq!(a["result"], want, "problem {}: {a}", i + 1);
            assert_eq!(b["result"], want, "{mode}, problem {}: {b}", i + 1);
            if *truth {
                let f = b["proof"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no proof: {b}"));
                proof_files.push(f.to_string());
            }
        }
        if mode == "split" {
            assert!(
                two.iter()
                    .any(|b| b["jobs"]["sent"].as_u64().unwrap_or(0) > 2),
                "no problem was spread over several jobs"
            );
        } else {
            assert!(
                two.iter().all(|b| b["jobs"]["tree_nodes"] == 1),
                "the manager split in shared mode"
            );
        }
        let mut vargs = vec!["verify"];
        vargs.extend(proof_files.iter().map(|s| s.as_str()));
        let (out, err, code) = run_pcn_text(&vargs, "", Duration::from_secs(120));
        assert_eq!(
            code, 0,
            "{mode}: pcn verify rejected a proof:\n{out}\n{err}"
        );
    }
}

#[test]
fn node_limited_solves_are_deterministic() {
    let (dir, _) = killallgo_problems("joblevel_cli_det");
    let f = dir.join("1.sgf");
    let f = f.to_str().unwrap();
    let run = |proofs: &str| {
        let args = [
            "--workers",
            "3",
            "--nodes",
            "200000",
            "--net",
            "none",
            "solve",
            "--job-nodes",
            "100",
            "--proof-dir",
            proofs,
            f,
        ];
        let (out, err, code) = run_pcn_text(&args, "", Duration::from_secs(300));
        assert_eq!(code, 0, "{err}");
        let l = lines(&out).remove(0);
        let proof = l["proof"]
            .as_str()
            .map(|p| std::fs::read_to_string(p).unwrap());
        (
            l["result"].clone(),
            l["nodes"].clone(),
            l["jobs"]["sent"].clone(),
            proof,
        )
    };
    let a = run(tmp_dir("joblevel_cli_det_a").to_str().unwrap());
    let b = run(tmp_dir("joblevel_cli_det_b").to_str().unwrap());
    assert_eq!(a, b, "two node-limited runs differ");
}

#[test]
fn gtp_pcn_solve_and_gomocup_solver_player_use_workers() {
    // A won 7x7 position for the side to move, as GTP plays.
    let mut won = None;
    for g in common::killallgo_positions(60, 40, 29) {
        let prover = g.to_move();
        if Brute::new(300_000, common::no_key).wins(&mut g.clone(), prover) == Some(true) {
            won = Some(g);
            break;
        }
    }
    let g = won.expect("a won position");
    let mut script = String::from("boardsize 7\nclear_board\n");
    for (c, m) in g.moves() {
        let col = if c == Color::Black { "B" } else { "W" };
        script.push_str(&format!("play {col} {}\n", g.move_to_gtp(m)));
    }
    script.push_str("pcn-solve 20\nquit\n");
    let (out, err, code) = run_pcn_text(
        &[
            "--workers",
            "2",
            "--net",
            "none",
            "gtp",
            "--game",
            "killallgo",
            "--size",
            "7",
        ],
        &script,
        Duration::from_secs(120),
    );
    assert_eq!(code, 0, "{err}");
    let answers: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with('=') || l.starts_with('?'))
        .collect();
    let solve = answers[answers.len() - 2];
    assert!(solve.starts_with("= win "), "pcn-solve: {solve}\n{out}");
    let mv = g
        .parse_gtp(solve.trim_start_matches("= win ").trim())
        .expect("a move");
    let mut after = g.clone();
    after.play(mv).expect("legal");
    assert_eq!(
        Brute::new(300_000, common::no_key).wins(&mut after, g.to_move()),
        Some(true),
        "the proven move does not win"
    );

    // Gomocup: the solver player with two workers plays the open four that wins (its
    // solver proves it), within the turn time.
    let mut e = Live::start(&[
        "--player",
        "solver",
        "--workers",
        "2",
        "--net",
        "none",
        "gomocup",
    ]);
    e.send("START 15\nINFO timeout_turn 2000\n");
    assert_eq!(e.line(), "OK");
    let t0 = std::time::Instant::now();
    e.send("BOARD\n7,7,1\n8,7,1\n9,7,1\n7,9,2\n8,9,2\n9,9,2\nDONE\n");
    let mv = loop {
        let l = e.line();
        if !l.starts_with("MESSAGE") && !l.starts_with("DEBUG") {
            break l;
        }
    };
    assert!(
        t0.elapsed() < Duration::from_millis(2000),
        "late: {:?}",
        t0.elapsed()
    );
    assert!(
        mv == "6,7" || mv == "10,7",
        "not the winning open four: {mv}"
    );
    e.send("END\n");
    assert_eq!(e.wait(Duration::from_secs(30)), 0);
}

/// The same stones with White to move through two histories whose values differ by
/// situational superko ([`common::superko_pair`]), as game records: `pcn solve` answers
/// each from its own history, with one worker and with two (which share a table within a
/// run: the two files are solved one after the other by the same workers); the win's proof
/// and the proof of Black's win through the ko (`--prove black`) verify.
#[test]
fn solve_reads_the_superko_history_of_each_record() {
    let (through_ko, direct) = common::superko_pair();
    let dir = tmp_dir("joblevel_cli_superko");
    std::fs::write(
        dir.join("1-through-ko.sgf"),
        killallgo_record(&through_ko).to_sgf(),
    )
    .unwrap();
    std::fs::write(dir.join("2-direct.sgf"), killallgo_record(&direct).to_sgf()).unwrap();
    let d = dir.to_str().unwrap();
    for workers in ["1", "2"] {
        let proofs = tmp_dir(&format!("joblevel_cli_superko_proofs_{workers}"));
        let p = proofs.to_str().unwrap();
        let args = [
            "--workers",
            workers,
            "--net",
            "none",
            "solve",
            "--time",
            "20",
            "--job-nodes",
            "5",
            "--proof-dir",
            p,
            d,
        ];
        let (out, err, code) = run_pcn_text(&args, "", Duration::from_secs(120));
        assert_eq!(code, 0, "{err}");
        let l = lines(&out);
        assert_eq!(l.len(), 2, "{out}");
        // White is to move in both: a loss through the ko, a win without it.
        assert_eq!(l[0]["result"], "loss", "{workers} workers: {}", l[0]);
        assert_eq!(l[1]["result"], "win", "{workers} workers: {}", l[1]);
        assert_eq!(l[1]["move"], "D1", "{workers} workers: {}", l[1]);
        let files: Vec<&str> = l.iter().filter_map(|x| x["proof"].as_str()).collect();
        assert_eq!(files.len(), 1, "a proof for the win: {out}");
        // The loss, proven for Black.
        let ko = dir.join("1-through-ko.sgf");
        let args = [
            "--workers",
            workers,
            "--net",
            "none",
            "solve",
            "--time",
            "20",
            "--prove",
            "black",
            "--proof-dir",
            p,
            ko.to_str().unwrap(),
        ];
        let (out, err, code) = run_pcn_text(&args, "", Duration::from_secs(120));
        assert_eq!(code, 0, "{err}");
        let b = lines(&out).remove(0);
        assert_eq!(
            b["result"], "win",
            "{workers} workers, Black through the ko: {b}"
        );
        let mut files: Vec<&str> = files;
        files.extend(b["proof"].as_str());
        assert_eq!(files.len(), 2, "{b}");
        let mut vargs = vec!["verify"];
        vargs.extend(files);
        let (vout, verr, code) = run_pcn_text(&vargs, "", Duration::from_secs(60));
        assert_eq!(code, 0, "pcn verify rejected a proof:\n{vout}\n{verr}");
    }
}
