//! `pcn selfplay` from the command line: records, resuming, the eval set, a network of
//! ours in the loop, and clear errors (exit 2) for bad options and networks that do not fit.

use std::path::Path;
use std::process::Command;

use pcn::selfplay::record::{read_all, FLAG_LAST};

fn pcn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pcn"))
}

fn tiny_net() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/own-tiny-killallgo")
        .display()
        .to_string()
}

fn games_in(p: &Path) -> usize {
    read_all(p)
        .unwrap()
        .1
        .iter()
        .filter(|r| r.flags & FLAG_LAST != 0)
        .count()
}

#[test]
fn writes_resumes_and_uses_a_network() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.rec");
    let st = pcn()
        .args([
            "--seed",
            "3",
            "selfplay",
            "--games",
            "3",
            "--sims",
            "8",
            "--fast-sims",
            "4",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(games_in(&out), 3);
    let first = std::fs::read(&out).unwrap();
    // Asking for 5 plays games 3 and 4 only; games 0..3 stay byte for byte.
    let st = pcn()
        .args([
            "--seed",
            "3",
            "selfplay",
            "--games",
            "5",
            "--sims",
            "8",
            "--fast-sims",
            "4",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(games_in(&out), 5);
    assert_eq!(&std::fs::read(&out).unwrap()[..first.len()], &first[..]);
    // Gomoku 4T, Black proving, with the Killall-Go file refused as another game's.
    let st = pcn()
        .args([
            "selfplay", "--game", "gomoku", "--games", "2", "--sims", "8",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&st.stderr).contains("other games"));
    let g = dir.path().join("g.rec");
    let st = pcn()
        .args([
            "selfplay", "--game", "gomoku", "--games", "2", "--sims", "8",
        ])
        .arg("--out")
        .arg(&g)
        .status()
        .unwrap();
    assert!(st.success());
    let (h, recs) = read_all(&g).unwrap();
    assert_eq!((h.board_size, h.planes, h.actions), (15, 4, 225));
    assert_eq!(h.proof_color, "B");
    assert!(!recs.is_empty());
    // Our tiny network (32 bins) in the loop, with an eval set.
    let n = dir.path().join("n.rec");
    let ev = dir.path().join("eval");
    let st = pcn()
        .args([
            "--net",
            &tiny_net(),
            "selfplay",
            "--games",
            "4",
            "--bins",
            "32",
        ])
        .args(["--sims", "8", "--parallel", "2", "--out"])
        .arg(&n)
        .arg("--emit-eval-set")
        .arg(&ev)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(games_in(&n), 4);
    assert!(ev.is_dir());
}

/// `--mover player`: two Gomoku games of the alpha-beta player at a few hundred nodes a
/// move; the records read back with the labels of the finished games, the player's moves
/// as one-hot policy targets, and the run resumes and replays the same games for a seed.
#[test]
fn gomoku_games_of_the_player() {
    use pcn::selfplay::record::{FLAG_FULL_SEARCH, FLAG_NO_WINNER};
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path, games: &str| {
        let st = pcn()
            .args([
                "--seed",
                "4",
                "selfplay",
                "--game",
                "gomoku",
                "--mover",
                "player",
                "--player-nodes",
                "300",
                "--random-plies",
                "2",
                "--games",
                games,
                "--parallel",
                "2",
                "--out",
            ])
            .arg(out)
            .status()
            .unwrap();
        assert!(st.success());
    };
    let (a, b) = (dir.path().join("a.rec"), dir.path().join("b.rec"));
    run(&a, "2");
    assert_eq!(games_in(&a), 2);
    let (h, recs) = read_all(&a).unwrap();
    assert_eq!(
        (h.game.as_str(), h.board_size, h.actions),
        ("gomoku", 15, 225)
    );
    for g in 0..2u32 {
        let rs: Vec<_> = recs.iter().filter(|r| r.game == g).collect();
        let last = rs.last().unwrap();
        assert!(last.flags & FLAG_LAST != 0);
        // The record before the winning move: its side to move wins, cost 0 on its head,
        // the top bin ("does not win") on the other, z = +1.
        if last.flags & FLAG_NO_WINNER == 0 {
            let w = last.to_move as usize;
            assert_eq!(last.z, 1.0);
            assert_eq!(last.cost_max[w], 0.0);
            assert_eq!(last.cost_heur[1 - w], 499.0);
        }
        // After the random opening every policy target is one move.
        for r in rs.iter().filter(|r| r.ply >= 2) {
            assert!(r.flags & FLAG_FULL_SEARCH != 0);
            assert_eq!(r.policy.iter().filter(|&&p| p == 1.0).count(), 1);
        }
    }
    // Resuming adds only the missing game; a fresh file replays the same three games.
    run(&a, "3");
    run(&b, "3");
    let key = |p: &Path| {
        let mut v: Vec<_> = read_all(p)
            .unwrap()
            .1
            .into_iter()
            .map(|r| (r.game, r.ply, r.policy))
            .collect();
        v.sort_by_key(|x| (x.0, x.1));
        v
    };
    assert_eq!(games_in(&a), 3);
    assert_eq!(key(&a), key(&b));
}

/// `--eval-games`: the JSON lines of the spec (issue 61), checked by replaying each game on
/// a board of its size and rule: the moves are legal, the result is the final position's, the
/// scores are null on the random opening (its length drawn from `--random-plies`) and
/// otherwise only on the block of a four; the run resumes (3 then 5 games, the first lines
/// unchanged, a torn last line rewritten) and a seed replays the same games.
#[test]
fn eval_games_lines_resume_and_replay() {
    use pcn::game::gomoku::{Gomoku, Rule};
    use pcn::game::{Color, Game, Move, Outcome};
    use pcn::selfplay::gamelog::GameLine;
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path, size: &str, games: &str| {
        let o = pcn()
            .args(["--seed", "5", "selfplay", "--game", "gomoku", "--rule"])
            .args(["freestyle", "--size", size, "--mover", "player"])
            .args([
                "--player-nodes",
                "300",
                "--random-plies",
                "2-5",
                "--parallel",
                "2",
            ])
            .args(["--games", games, "--eval-games"])
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let lines = |p: &Path| -> Vec<GameLine> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let check = |l: &GameLine, n: usize| {
        assert_eq!(
            (l.size, l.rule.as_str(), l.seed, l.nodes),
            ([n, n], "freestyle", 5, 300)
        );
        assert_eq!(l.scores.len(), l.moves.len());
        let k = l.scores.iter().take_while(|s| s.is_none()).count();
        assert!((2..=5).contains(&k), "{k} random plies");
        let mut g = Gomoku::new(n, n, Rule::Freestyle).unwrap();
        for (t, &[x, y]) in l.moves.iter().enumerate() {
            assert!(g.outcome().is_none(), "a move after the end");
            let m = (y * n + x) as Move;
            if t < k {
                assert!(x.abs_diff(n / 2) <= 3 && y.abs_diff(n / 2) <= 3);
            } else if l.scores[t].is_none() {
                let opp = g.to_move().opp();
                let five = (0..(n * n) as Move)
                    .any(|p| g.stone(p).is_none() && g.makes_five(g.cell_of(p), opp));
                assert!(
                    five,
                    "game {} ply {t}: null score, no four to block",
                    l.index
                );
            }
            g.play(m).unwrap();
        }
        let want = match g.outcome() {
            Some(Outcome::Win(Color::Black)) => "black",
            Some(Outcome::Win(Color::White)) => "white",
            _ => "draw",
        };
        assert_eq!(l.result, want);
        // The last mover won: its score before the winning move is a proven win.
        if want != "draw" {
            assert!(l.scores.last().unwrap().is_some_and(|s| s >= 990_000));
        }
    };
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    run(&a, "15", "3");
    let first = std::fs::read_to_string(&a).unwrap();
    assert_eq!(lines(&a).len(), 3);
    lines(&a).iter().for_each(|l| check(l, 15));
    run(&a, "15", "5");
    let text = std::fs::read_to_string(&a).unwrap();
    assert!(text.starts_with(&first));
    let mut idx: Vec<u32> = lines(&a).iter().map(|l| l.index).collect();
    idx.sort();
    assert_eq!(idx, vec![0, 1, 2, 3, 4]);
    // A torn last line (a run killed mid-write) is cut off and its game written again.
    let cut = text.trim_end().rfind('\n').unwrap() + 1;
    let torn_index = lines(&a)[4].index;
    std::fs::write(&a, &text[..cut + 20]).unwrap();
    run(&a, "15", "5");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), text);
    assert_eq!(lines(&a)[4].index, torn_index);
    // The same seed replays the same games (their order in the file may differ).
    run(&b, "15", "5");
    let sorted = |p: &Path| {
        let mut v = lines(p);
        v.sort_by_key(|l| l.index);
        v
    };
    assert_eq!(sorted(&a), sorted(&b));
    // 20x20 under the same options; another setting for an existing file is refused.
    let c = dir.path().join("c.jsonl");
    run(&c, "20", "2");
    lines(&c).iter().for_each(|l| check(l, 20));
    let o = pcn()
        .args([
            "--seed",
            "6",
            "selfplay",
            "--game",
            "gomoku",
            "--rule",
            "freestyle",
        ])
        .args(["--mover", "player", "--player-nodes", "300", "--eval-games"])
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("another setting"));
}

#[test]
fn bad_options_and_unfit_networks_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.rec");
    for args in [
        vec!["selfplay", "--games", "1"],
        vec!["selfplay", "--game", "chess", "--games", "1", "--out"],
        vec!["selfplay", "--sims", "0", "--out"],
        vec!["selfplay", "--eval-back", "4", "--out"],
        vec!["selfplay", "--prove", "red", "--out"],
        vec!["--net", "/nonexistent/model", "selfplay", "--out"],
        vec!["selfplay", "--mover", "player", "--out"],
        vec!["selfplay", "--game", "gomoku", "--mover", "oracle", "--out"],
        vec!["selfplay", "--game", "gomoku", "--eval-games"],
        vec!["selfplay", "--size", "15", "--out"],
        vec!["selfplay", "--game", "gomoku", "--size", "30", "--out"],
        vec![
            "selfplay",
            "--game",
            "gomoku",
            "--mover",
            "player",
            "--random-plies",
            "5-2",
            "--out",
        ],
        vec![
            "selfplay",
            "--game",
            "gomoku",
            "--mover",
            "player",
            "--random-plies",
            "x",
            "--out",
        ],
        vec!["selfplay", "--game", "gomoku", "--rule", "chess", "--out"],
    ] {
        let mut c = pcn();
        c.args(&args);
        if matches!(args.last(), Some(&"--out" | &"--eval-games")) {
            c.arg(&out);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("pcn selfplay"));
    }
    // A Killall-Go network for Gomoku: refused before any game, no panic.
    let o = pcn()
        .args([
            "--net",
            &tiny_net(),
            "selfplay",
            "--game",
            "gomoku",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not this game"));
    // And for pcn solve on a Gomoku problem: an error record, exit 1.
    let o = pcn()
        .args(["--net", &tiny_net(), "solve", "--time", "1", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut ch| {
            use std::io::Write;
            ch.stdin
                .take()
                .unwrap()
                .write_all(b"(;GM[4]SZ[15];B[hh])")?;
            ch.wait_with_output()
        })
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        line.contains("model mismatch") && line.contains("not gomoku"),
        "{line}"
    );
}

/// `pcn leaf-labels` through the binary: leaf lines from a game log of `--eval-games` (at most
/// `--per-root` a game, each flagged and scored only at its end), `--eval` choosing the
/// searches' evaluation (the pattern evaluation and the shipped network give other labels),
/// `--skip-games` leaving the first games alone, and clear errors (exit 2) for a bad
/// `--eval`, `--rate` or game log.
#[test]
fn leaf_labels_from_the_command_line() {
    use pcn::selfplay::gamelog::{read_lines, GameLine};
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.jsonl");
    let o = pcn()
        .args([
            "--seed",
            "3",
            "selfplay",
            "--game",
            "gomoku",
            "--rule",
            "freestyle",
        ])
        .args(["--size", "15", "--mover", "player", "--player-nodes", "300"])
        .args(["--random-plies", "2-4", "--games", "3", "--eval-games"])
        .arg(&games)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let leaves = |eval: &str, extra: &[&str], out: &Path| {
        let o = pcn()
            .args([
                "--seed",
                "7",
                "--threads",
                "2",
                "--eval",
                eval,
                "leaf-labels",
            ])
            .args([
                "--root-nodes",
                "3000",
                "--label-nodes",
                "400",
                "--rate",
                "0.05",
            ])
            .args(["--per-root", "2"])
            .args(extra)
            .arg("--games")
            .arg(&games)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        read_lines(out).unwrap()
    };
    let classic = leaves("classic", &[], &dir.path().join("classic.jsonl"));
    assert!(!classic.is_empty());
    for l in &classic {
        let n = l.moves.len();
        assert!(l.leaf && l.nodes == 400 && l.scores[n - 1].is_some());
        assert!(l.scores[..n - 1].iter().all(Option::is_none));
    }
    for i in 0..3 {
        assert!(classic.iter().filter(|l| l.index == i).count() <= 2);
    }
    let net = leaves("auto", &[], &dir.path().join("net.jsonl"));
    assert!(!net.is_empty());
    assert_ne!(net, classic);
    let tail = leaves(
        "classic",
        &["--skip-games", "2"],
        &dir.path().join("tail.jsonl"),
    );
    // The skipped games are the first in the file, which need not be in index order.
    let third = read_lines(&games).unwrap().swap_remove(2);
    let want: Vec<GameLine> = classic
        .iter()
        .filter(|l| l.index == third.index)
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_eq!(tail, want);
    for (args, says) in [
        (vec!["--eval", "/nonexistent.bin"], "--eval"),
        (vec!["--rate", "2"], "--rate"),
    ] {
        let o = pcn()
            .arg("leaf-labels")
            .args(&args)
            .arg("--games")
            .arg(&games)
            .arg("--out")
            .arg(dir.path().join("bad.jsonl"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{args:?}"
        );
    }
    let o = pcn()
        .args(["leaf-labels", "--games"])
        .arg(dir.path().join("missing.jsonl"))
        .arg("--out")
        .arg(dir.path().join("bad.jsonl"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("bad.jsonl").exists());
}
