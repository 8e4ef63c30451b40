//! Smoke test of the whole training loop (training/loop.py, `make train`) on a tiny
//! network: self-play games, a few training steps, export, gate (solving the loop's own
//! evaluation positions with and without the network), promotion, and one solve with the
//! promoted network; then a resumed second iteration with a node-limited gate and self-play
//! by the last candidate. Needs PyTorch under `.tools/torch` (`make test` installs it); skips
//! with a notice otherwise.

use std::path::Path;
use std::process::Command;

use pcn::nn::model::Model;
use pcn::nn::NetKind;

#[test]
fn loop_runs_end_to_end_on_a_tiny_network() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join(".tools/torch/torch").is_dir() {
        eprintln!(
            "NOTICE: PyTorch not installed under .tools/torch: training-loop smoke test skipped"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("run");
    let weights = tmp.path().join("weights");
    let mut loop_cmd = Command::new("python3");
    loop_cmd
        .arg(root.join("training/loop.py"))
        .args(["--game", "killallgo", "--iterations", "1", "--pcn"])
        .arg(env!("CARGO_BIN_EXE_pcn"))
        .arg("--work")
        .arg(&work)
        .arg("--weights")
        .arg(&weights)
        .args([
            "--games-per-iter",
            "12",
            "--steps-per-iter",
            "10",
            "--batch",
            "64",
        ])
        .args([
            "--blocks",
            "1",
            "--filters",
            "8",
            "--bins",
            "64",
            "--parallel",
            "2",
        ])
        .args([
            "--eval-games",
            "30",
            "--eval-positions",
            "4",
            "--eval-time",
            "1",
            // The proven-only filter: a reference solve without a network keeps the
            // positions it proves (here from one node up).
            "--eval-ref-nodes",
            "20000",
            "--eval-min-nodes",
            "1",
        ]);
    let st = loop_cmd.status().expect("python3 runs");
    assert!(st.success(), "training/loop.py failed");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 1);
    let h = &state["history"][0];
    assert_eq!(h["games"], 12);
    assert!(h["eval_positions"].as_u64().unwrap() >= 1);
    let count = |d: &std::path::Path| std::fs::read_dir(d).map(|r| r.count()).unwrap_or(0);
    let (raw, kept) = (count(&work.join("eval_raw")), count(&work.join("eval")));
    assert!(
        kept >= 1 && kept <= raw,
        "eval set {kept} of {raw} raw positions"
    );
    // The candidate is a loadable PCN of the asked shape; the replay buffer holds the games.
    let cand = Model::load(work.join("candidate")).unwrap();
    assert_eq!(cand.info.kind, NetKind::Pcn { bins: 64 });
    let (_, recs) = pcn::selfplay::record::read_all(&work.join("selfplay.rec")).unwrap();
    assert_eq!(
        recs.iter()
            .filter(|r| r.flags & pcn::selfplay::record::FLAG_LAST != 0)
            .count(),
        12
    );
    // Promoted or not as the gate said.
    let promoted = h["promoted"].as_bool().unwrap();
    assert_eq!(weights.join("model.safetensors").is_file(), promoted);
    // Resumed for a second iteration with a node-limited gate and self-play by the last
    // candidate: 12 more games, played by the candidate, gated in nodes.
    let st = loop_cmd
        .args(["--eval-nodes", "2000", "--selfplay-net", "latest"])
        .status()
        .expect("python3 runs");
    assert!(st.success(), "training/loop.py (resumed) failed");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 2);
    let h2 = &state["history"][1];
    assert_eq!(h2["games"], 24);
    assert_eq!(h2["gate_unit"], "nodes");
    assert_eq!(state["best"]["unit"], "nodes");
    assert!(
        h2["selfplay_net"].as_str().unwrap().ends_with("candidate"),
        "{h2}"
    );
    let (_, recs) = pcn::selfplay::record::read_all(&work.join("selfplay.rec")).unwrap();
    assert_eq!(
        recs.iter()
            .filter(|r| r.flags & pcn::selfplay::record::FLAG_LAST != 0)
            .count(),
        24
    );
    // One solve with the candidate on an evaluation position.
    let eval = work.join("eval");
    let first = std::fs::read_dir(&eval)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sgf"))
        .expect("an eval position");
    let out = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .arg("--net")
        .arg(work.join("candidate"))
        .args(["solve", "--time", "1"])
        .arg(&first)
        .output()
        .unwrap();
    assert!(out.status.success());
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_ne!(line["result"], "error", "{line}");
    assert_eq!(line["game"], "killallgo");
}

/// One Gomoku iteration of the loop whose games (training and eval set) come from the
/// alpha-beta player (`--selfplay-args "--mover player ..."`): the records are Gomoku
/// records whose policy targets after the random opening are the player's one-hot moves,
/// and the candidate is exported and gated.
#[test]
fn gomoku_loop_with_player_games() {
    use pcn::selfplay::record::{read_all, FLAG_FULL_SEARCH};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join(".tools/torch/torch").is_dir() {
        eprintln!("NOTICE: PyTorch not installed under .tools/torch: Gomoku loop test skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("run");
    let st = Command::new("python3")
        .arg(root.join("training/loop.py"))
        .args(["--game", "gomoku", "--iterations", "1", "--pcn"])
        .arg(env!("CARGO_BIN_EXE_pcn"))
        .arg("--work")
        .arg(&work)
        .arg("--weights")
        .arg(tmp.path().join("weights"))
        .args([
            "--games-per-iter",
            "6",
            "--steps-per-iter",
            "5",
            "--batch",
            "32",
        ])
        .args(["--blocks", "1", "--filters", "8", "--parallel", "2"])
        .args([
            "--eval-games",
            "12",
            "--eval-positions",
            "2",
            "--eval-nodes",
            "200",
        ])
        .args(["--eval-back", "9", "--threads", "1"])
        .args([
            "--selfplay-args",
            "--mover player --player-nodes 200 --random-plies 2",
        ])
        .status()
        .expect("python3 runs");
    assert!(st.success(), "training/loop.py failed");
    let (h, recs) = read_all(&work.join("selfplay.rec")).unwrap();
    assert_eq!(h.game, "gomoku");
    let after_opening: Vec<_> = recs.iter().filter(|r| r.ply >= 2).collect();
    assert!(!after_opening.is_empty());
    for r in after_opening {
        assert!(r.flags & FLAG_FULL_SEARCH != 0);
        assert_eq!(r.policy.iter().filter(|&&p| p == 1.0).count(), 1);
    }
    assert!(work.join("candidate/model.safetensors").is_file());
    assert!(std::fs::read_dir(work.join("eval")).unwrap().count() >= 1);
}
