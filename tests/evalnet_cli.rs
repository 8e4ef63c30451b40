//! `--eval` through the real binary: a weight file reaches the `pcn` player (its debug log
//! says so) under the rule it was trained for and only there, the shipped network also
//! under exact five and renju (where its gate measured it stronger) but not caro,
//! `classic` turns it off, and a missing or damaged file is a clear error with exit
//! status 2.

use std::time::Duration;

use pcn::game::gomoku::Rule;
use pcn::search::gomoku::learn::evalnet::EvalNet;

mod common;

use common::run_pcn_text;

const ONE_MOVE: &str = "START 15\nTURN 7,7\nEND\n";

fn net_file(rule: Rule, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pcn-evalnet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, EvalNet::random(rule, 16, 8, 3).to_bytes()).unwrap();
    p
}

fn play(eval: &str) -> (String, String, i32) {
    play_rule(eval, None)
}

/// One move with `--eval eval`, under the Gomocup `rule` number when given.
fn play_rule(eval: &str, rule: Option<u32>) -> (String, String, i32) {
    let input = match rule {
        Some(r) => format!("START 15\nINFO rule {r}\nTURN 7,7\nEND\n"),
        None => ONE_MOVE.to_string(),
    };
    run_pcn_text(
        &[
            "--eval",
            eval,
            "--nodes",
            "3000",
            "--log-level",
            "debug",
            "gomocup",
        ],
        &input,
        Duration::from_secs(60),
    )
}

fn moved(out: &str) -> bool {
    out.lines().any(|l| l.split(',').count() == 2)
}

#[test]
fn a_weight_file_reaches_the_player_under_its_rule() {
    let free = net_file(Rule::Freestyle, "free.bin");
    let (out, err, code) = play(free.to_str().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(moved(&out), "{out}");
    assert!(
        err.contains("evaluation network (freestyle, 16 channels"),
        "{err}"
    );
    // A network for another rule leaves freestyle to the pattern evaluation.
    let renju = net_file(Rule::Renju, "renju.bin");
    let (out, err, code) = play(renju.to_str().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(
        moved(&out) && !err.contains("evaluation network ("),
        "{err}"
    );
    // `net`: the shipped network (freestyle); `auto` (the default): the same under
    // freestyle, which it won the gate for; `classic`: the pattern evaluation.
    let (out, err, code) = play("net");
    assert_eq!(code, 0, "{err}");
    assert!(moved(&out), "{out}");
    assert!(
        err.contains("evaluation network (freestyle, 32 channels"),
        "{err}"
    );
    let (out, err, code) = play("auto");
    assert_eq!(code, 0, "{err}");
    assert!(moved(&out), "{out}");
    assert!(
        err.contains("evaluation network (freestyle, 32 channels"),
        "{err}"
    );
    let (out, err, code) = play("classic");
    assert_eq!(code, 0, "{err}");
    assert!(
        moved(&out) && !err.contains("evaluation network ("),
        "{err}"
    );
}

#[test]
fn the_shipped_network_serves_exact_and_renju_but_not_caro() {
    for (rule, name) in [(1, "exact"), (4, "renju")] {
        for eval in ["auto", "net"] {
            let (out, err, code) = play_rule(eval, Some(rule));
            assert_eq!(code, 0, "{err}");
            assert!(moved(&out), "{out}");
            let want = "evaluation network (freestyle, 32 channels";
            assert!(
                err.lines()
                    .any(|l| l.contains(want) && l.ends_with(&format!("under {name}"))),
                "{eval} under {name}: {err}"
            );
        }
        let (out, err, code) = play_rule("classic", Some(rule));
        assert_eq!(code, 0, "{err}");
        assert!(
            moved(&out) && !err.contains("evaluation network ("),
            "{err}"
        );
        // A freestyle file given by path serves its own rule only.
        let free = net_file(Rule::Freestyle, "free-other-rule.bin");
        let (out, err, code) = play_rule(free.to_str().unwrap(), Some(rule));
        assert_eq!(code, 0, "{err}");
        assert!(
            moved(&out) && !err.contains("evaluation network ("),
            "{err}"
        );
    }
    // Caro: the pattern evaluation, whatever `--eval` asks for.
    for eval in ["auto", "net"] {
        let (out, err, code) = play_rule(eval, Some(8));
        assert_eq!(code, 0, "{err}");
        assert!(
            moved(&out) && !err.contains("evaluation network ("),
            "{err}"
        );
    }
}

#[test]
fn a_bad_weight_file_is_an_error() {
    let (out, err, code) = play("/nonexistent/eval.bin");
    assert_eq!(code, 2, "{out} {err}");
    assert!(
        err.contains("--eval /nonexistent/eval.bin: cannot read"),
        "{err}"
    );
    let bad = net_file(Rule::Freestyle, "bad.bin");
    let mut b = std::fs::read(&bad).unwrap();
    b.truncate(b.len() - 3);
    std::fs::write(&bad, b).unwrap();
    let (_, err, code) = play(bad.to_str().unwrap());
    assert_eq!(code, 2);
    assert!(err.contains("not an evaluation network"), "{err}");
}
