//! Networks we train ourselves (training/, docs/training.md) load in pcn and match PyTorch.
//!
//! `tests/data/own-tiny-killallgo` is a tiny untrained PCN (1 block, 8 filters, 32 bins)
//! written by `python -m pcn_train random --records <our self-play records>` with its golden
//! vectors (PyTorch's outputs on 8 of those positions). The CPU backend must reproduce the
//! logits within 1e-4. When PyTorch is installed under `.tools/torch` (`make test` does
//! that), fresh networks of both games and both kinds are exported and checked the same
//! way; without it that part is skipped with a notice.

mod common;
use common::{golden_floats as floats, max_diff};
use std::path::{Path, PathBuf};
use std::process::Command;

use pcn::nn::cpu::CpuBackend;
use pcn::nn::model::Model;
use pcn::nn::{Evaluator, NetKind, NetOutput};
use safetensors::SafeTensors;

/// Loads `dir`, runs its golden inputs through the CPU backend (batch and one by one) and
/// compares with PyTorch's outputs.
fn check(dir: &Path) {
    let model = Model::load(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let bytes = std::fs::read(dir.join("golden.safetensors")).expect("golden readable");
    let st = SafeTensors::deserialize(&bytes).expect("golden parses");
    let input = floats(&st, "input");
    let len = model.info.input_len();
    let n = input.len() / len;
    assert!(n >= 1 && n * len == input.len());
    for threads in [1, 2] {
        let be = CpuBackend::new(&model, threads).expect("backend");
        let mut out = NetOutput::default();
        be.evaluate(&input, n, &mut out).expect("evaluate");
        let dp = max_diff(&out.policy, &floats(&st, "policy_logits"));
        assert!(
            dp <= 1e-4,
            "{}: policy logits differ by {dp}",
            dir.display()
        );
        match model.info.kind {
            NetKind::Pcn { .. } => {
                for (mine, name) in [
                    (&out.black_v, "blackV_logits"),
                    (&out.white_v, "whiteV_logits"),
                ] {
                    let d = max_diff(mine, &floats(&st, name));
                    assert!(d <= 1e-4, "{}: {name} differ by {d}", dir.display());
                }
            }
            NetKind::AlphaZero => {
                let d = max_diff(&out.value, &floats(&st, "value"));
                assert!(d <= 1e-5, "{}: values differ by {d}", dir.display());
            }
        }
        // Position by position: the same numbers as in the batch.
        let mut one = NetOutput::default();
        be.evaluate(&input[..len], 1, &mut one)
            .expect("evaluate one");
        assert!(max_diff(&one.policy, &out.policy[..model.info.actions]) <= 1e-5);
    }
}

#[test]
fn committed_tiny_network_matches_pytorch() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/own-tiny-killallgo");
    check(&dir);
    let m = Model::load(&dir).unwrap();
    assert_eq!(m.info.kind, NetKind::Pcn { bins: 32 });
    assert_eq!(
        (m.info.board_size, m.info.planes, m.info.actions),
        (9, 18, 82)
    );
}

fn torch_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let t = root.join(".tools/torch");
    if t.join("torch").is_dir() {
        Some(t)
    } else {
        eprintln!(
            "NOTICE: PyTorch not installed under {} (make test installs it): fresh-export checks skipped",
            t.display()
        );
        None
    }
}

#[test]
fn fresh_exports_match_pytorch() {
    let Some(torch) = torch_dir() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    for (game, kind, blocks, filters, bins) in [
        ("killallgo", "pcn", 2, 16, 500),
        ("gomoku", "pcn", 1, 8, 64),
        ("killallgo", "alphazero", 1, 8, 0),
        ("gomoku", "alphazero", 1, 4, 0),
    ] {
        let out = tmp.path().join(format!("{game}-{kind}"));
        let st = Command::new("python3")
            .args(["-m", "pcn_train", "random", "--game", game, "--kind", kind])
            .args([
                "--blocks",
                &blocks.to_string(),
                "--filters",
                &filters.to_string(),
            ])
            .args(["--bins", &bins.max(2).to_string(), "--seed", "5", "--out"])
            .arg(&out)
            .env(
                "PYTHONPATH",
                format!("{}:{}", torch.display(), root.join("training").display()),
            )
            .env("OMP_NUM_THREADS", "1")
            .status()
            .expect("python3 runs");
        assert!(st.success(), "pcn_train random {game} {kind} failed");
        check(&out);
    }
}

/// What `pcn --net NET gtp ARGS` answers to `pcn-net`.
fn pcn_net_reply(root: &Path, net: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .current_dir(root)
        .args(["--net", net, "gtp"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut ch| {
            use std::io::Write;
            ch.stdin.take().unwrap().write_all(b"pcn-net\nquit\n")?;
            ch.wait_with_output()
        })
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The shipped networks (weights/*-pcn) reproduce their own golden vectors; `--net auto`
/// picks the Killall-Go one for 9x9 Killall-Go, the Gomoku one for 15x15 under 4T (see
/// `shipped_name`), and nothing for a board or rule no network was made for.
#[test]
fn shipped_networks_match_their_golden_vectors_and_auto_finds_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, game, size, rule, auto) in [
        (
            "weights/killallgo9-pcn",
            "killallgo",
            "9",
            "freestyle",
            true,
        ),
        ("weights/gomoku15-pcn", "gomoku", "15", "4t", true),
    ] {
        let d = root.join(dir);
        if !d.join("model.safetensors").is_file() {
            eprintln!("NOTICE: {dir} not shipped: skipped");
            continue;
        }
        check(&d);
        let m = Model::load(&d).unwrap();
        let name = m.info.name.clone();
        let size_mb = std::fs::metadata(d.join("model.safetensors"))
            .unwrap()
            .len() as f64
            / 1e6;
        assert!(size_mb <= 5.0, "{dir}: {size_mb} MB");
        let net = if auto {
            "auto".to_string()
        } else {
            d.display().to_string()
        };
        let text = pcn_net_reply(
            root,
            &net,
            &["--game", game, "--size", size, "--rule", rule],
        );
        assert!(text.contains(&name), "{dir}: pcn-net said {text}");
    }
    // 7x7 Killall-Go, Gomoku under another rule than 4T and 20x20 Gomoku get no network
    // from auto.
    for args in [
        ["--game", "killallgo", "--size", "7", "--rule", "freestyle"],
        ["--game", "gomoku", "--size", "15", "--rule", "freestyle"],
        ["--game", "gomoku", "--size", "15", "--rule", "renju"],
        ["--game", "gomoku", "--size", "20", "--rule", "4t"],
    ] {
        assert!(
            pcn_net_reply(root, "auto", &args).contains("= none"),
            "{args:?}"
        );
    }
}

/// With our Gomoku network the MCTS tree is wide: in a pool of a few MB it fills within
/// seconds. The search then rebuilds its pool (solved subtrees and once-visited leaves out)
/// and goes on, and still proves the position of our gate (docs/data/solve/gomoku-own/eval,
/// positions from our own player's games) with a proof that `pcn verify` accepts.
#[test]
fn gomoku_network_search_reclaims_a_full_pool_and_still_proves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let net = root.join("weights/gomoku15-pcn");
    // A gate position whose proof, with the shipped network, takes more nodes than an 8 MB
    // pool holds. A better network may prove it before the pool fills (the first assert
    // below then fails): a harder position of the gate is needed then.
    let pos = root.join("docs/data/solve/gomoku-own/eval/8.sgf");
    if !net.join("model.safetensors").is_file() || !pos.is_file() {
        eprintln!("NOTICE: weights/gomoku15-pcn or the gate position missing: skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("pcn-reclaim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .current_dir(root)
        .args(["--net", &net.display().to_string(), "--threads", "1"])
        .args(["--symmetries", "1", "--memory", "8", "--log-level", "debug"])
        .args([
            "solve", "--prove", "black", "--rule", "4t", "--nodes", "60000",
        ])
        .args(["--time", "300", "--proof-dir", &dir.display().to_string()])
        .arg(&pos)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pool full") && stderr.contains("nodes kept"),
        "the pool was never reclaimed: {stderr}"
    );
    assert!(!stderr.contains("stopped early"), "{stderr}");
    assert!(stdout.contains("\"result\":\"win\""), "{stdout}");
    let proof = dir.join("8.proof.sgf");
    assert!(proof.is_file(), "no proof written: {stdout}");
    let ver = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(["verify", &proof.display().to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&ver.stdout);
    assert!(ver.status.success() && text.contains("sound"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
