//! `pcn solve` as scripts use it: JSON lines on stdout, numeric order in directories, a bad
//! file reported and skipped, stdin, exit codes, proofs that `pcn verify` accepts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn tmp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn pcn(args: &[&str], stdin: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pcn"));
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("run pcn");
    if let Some(mut i) = child.stdin.take() {
        use std::io::Write;
        let _ = i.write_all(stdin.unwrap_or("").as_bytes());
    }
    child.wait_with_output().expect("wait pcn")
}

fn lines(o: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// 5x5 freestyle: Black to move with four in a row on row 1 (wins at E1).
const BLACK_WINS: &str = "(;FF[4]GM[4]SZ[5];B[ae];W[ad];B[be];W[bd];B[ce];W[cd];B[de];W[dd])";
/// The same stones with White to move: White wins at E2 (proving Black fails).
const WHITE_TO_MOVE: &str =
    "(;FF[4]GM[4]SZ[5];B[ae];W[ad];B[be];W[bd];B[ce];W[cd];B[de];W[dd];B[aa])";

#[test]
fn json_lines_numeric_order_bad_file_continues() {
    let dir = tmp_dir("solve_dir");
    std::fs::write(dir.join("10.sgf"), BLACK_WINS).unwrap();
    std::fs::write(dir.join("2.sgf"), WHITE_TO_MOVE).unwrap();
    std::fs::write(dir.join("3.sgf"), "(;GM[4]SZ[5];B[zz]").unwrap();
    std::fs::write(dir.join("notes.txt"), "ignored").unwrap();
    let proofs = dir.join("proofs");
    let o = pcn(
        &[
            "solve",
            "--rule",
            "freestyle",
            "--time",
            "20",
            "--nodes",
            "100000",
            "--proof-dir",
            proofs.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a bad file gives exit 1: {stderr}"
    );
    let v = lines(&o);
    let names: Vec<String> = v
        .iter()
        .map(|r| {
            Path::new(r["file"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        ["2.sgf", "3.sgf", "10.sgf"],
        "numeric order, .sgf only"
    );
    for r in &v {
        for key in [
            "file",
            "result",
            "nodes",
            "seconds",
            "nodes_per_second",
            "solver",
        ] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
    }
    // 2.sgf: White to move, prover = side to move = White, who wins at E2.
    assert_eq!(v[0]["result"], "win");
    assert_eq!(v[0]["prover"], "W");
    assert_eq!(v[0]["move"], "E2");
    assert_eq!(v[1]["result"], "error");
    assert!(v[1]["error"].as_str().unwrap().contains("SGF"), "{}", v[1]);
    assert_eq!(v[2]["result"], "win");
    assert_eq!(v[2]["prover"], "B");
    assert_eq!(v[2]["move"], "E1");
    assert!(v[2]["nodes"].as_u64().unwrap() >= 1);
    // Proofs were written for both wins and pass the checker.
    let files: Vec<String> = [&v[0], &v[2]]
        .iter()
        .map(|r| r["proof"].as_str().expect("proof path").to_string())
        .collect();
    let mut args = vec!["verify"];
    args.extend(files.iter().map(|s| s.as_str()));
    let ver = pcn(&args, None);
    assert_eq!(
        ver.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ver.stderr)
    );
    // The summary table.
    assert!(
        stderr.contains("win") && stderr.contains("median"),
        "{stderr}"
    );
    let win_row = stderr.lines().find(|l| l.starts_with("win")).unwrap();
    assert_eq!(win_row.split_whitespace().nth(1), Some("2"), "{stderr}");
}

#[test]
fn prove_option_stdin_and_exit_zero() {
    // Proving White in the Black-to-move position: Black wins at once, so White loses.
    let o = pcn(
        &[
            "solve",
            "--rule",
            "freestyle",
            "--prove",
            "white",
            "--nodes",
            "50000",
            "-",
        ],
        Some(BLACK_WINS),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = lines(&o);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["file"], "-");
    assert_eq!(v[0]["prover"], "W");
    assert_eq!(v[0]["result"], "loss");
    for solver in ["mcts", "dfpn", "fdfpn"] {
        let o = pcn(
            &[
                "solve",
                "--rule",
                "freestyle",
                "--solver",
                solver,
                "--nodes",
                "50000",
                "-",
            ],
            Some(BLACK_WINS),
        );
        assert_eq!(o.status.code(), Some(0));
        let v = lines(&o);
        assert_eq!(v[0]["result"], "win", "{solver}");
        assert_eq!(v[0]["solver"], solver);
    }
}

#[test]
fn usage_errors_exit_2() {
    let cases: [&[&str]; 12] = [
        &["solve", "--net", "weights.safetensors", "-"],
        &["solve", "--net-weight=-1", "-"],
        &["solve", "--net-weight", "NaN", "-"],
        &["solve", "--patterns", "1.5", "-"],
        &["solve", "--patterns", "NaN", "-"],
        &["solve", "--solver", "alphabeta", "-"],
        &["solve", "--rule", "go", "-"],
        &["solve", "--vcf", "maybe", "-"],
        &["solve", "--benson", "maybe", "-"],
        &["solve", "--own-eye-ban", "1", "-"],
        &["solve", "--time", "-1", "-"],
        &["solve"],
    ];
    for args in cases {
        let o = pcn(args, Some(BLACK_WINS));
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn missing_file_and_unsupported_game_are_error_lines() {
    let dir = tmp_dir("solve_errors");
    let go19 = dir.join("go19.sgf");
    std::fs::write(&go19, "(;GM[1]SZ[19];B[dd])").unwrap();
    let missing = dir.join("missing.sgf");
    let o = pcn(
        &[
            "solve",
            "--nodes",
            "1000",
            missing.to_str().unwrap(),
            go19.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let v = lines(&o);
    assert_eq!(v.len(), 2);
    assert!(v
        .iter()
        .all(|r| r["result"] == "error" && r["error"].is_string()));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}

/// A 7x7 Killall-Go record (80 plies) in which White's block became unconditionally alive at
/// move 58: under the paper's rules the game ended there, so the record does not replay.
const KILLALLGO_AFTER_BENSON: &str = "(;FF[4]GM[1]SZ[7];B[gb];W[];B[ab];W[bd];B[fe];W[db];B[ba];\
W[ae];B[fa];W[ce];B[da];W[gf];B[cb];W[ee];B[fg];W[eg];B[bf];W[ag];B[df];W[dc];B[be];W[cg];\
B[ef];W[eb];B[ca];W[ec];B[fc];W[dg];B[ac];W[ed];B[aa];W[gd];B[fd];W[bg];B[gg];W[bc];B[dd];\
W[cf];B[ge];W[cc];B[cd];W[ad];B[ga];W[bb];B[de];W[af];B[bf];W[be];B[ff];W[fb];B[ea];W[gc];\
B[gb];W[ac];B[ca];W[aa];B[cb];W[gc];B[ba];W[ea];B[ga];W[fa];B[gb];W[ga];B[gd];W[gf];B[gd];\
W[fe];B[ge];W[gb];B[df];W[da];B[gg];W[ff];B[de];W[fg];B[fc];W[dd];B[cb];W[ef])";

/// `--benson off`: the record replays, White's win is proven, the proof records the switch,
/// `pcn verify` accepts it, and refuses it with the switch taken out of its header.
#[test]
fn killallgo_rule_switches_reach_the_proof() {
    let dir = tmp_dir("solve_benson_off");
    let o = pcn(
        &["solve", "--prove", "white", "--time", "10", "-"],
        Some(KILLALLGO_AFTER_BENSON),
    );
    assert_eq!(o.status.code(), Some(1));
    let v = lines(&o);
    assert_eq!(v[0]["result"], "error");
    assert!(
        v[0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("game is over"),
        "{:?}",
        v[0]
    );
    let proofs = dir.join("proofs");
    let o = pcn(
        &[
            "solve",
            "--benson",
            "off",
            "--prove",
            "white",
            "--time",
            "10",
            "--proof-dir",
            proofs.to_str().unwrap(),
            "-",
        ],
        Some(KILLALLGO_AFTER_BENSON),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = lines(&o);
    assert_eq!(v[0]["result"], "win", "{:?}", v[0]);
    let proof = PathBuf::from(v[0]["proof"].as_str().expect("proof path"));
    let text = std::fs::read_to_string(&proof).expect("proof file");
    assert!(text.contains(" benson=off"), "{text}");
    assert!(!text.contains("own_eye_ban"), "{text}");
    let ok = pcn(&["verify", proof.to_str().unwrap()], None);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    let plain = dir.join("plain.sgf");
    std::fs::write(&plain, text.replace(" benson=off", "")).unwrap();
    let bad = pcn(&["verify", plain.to_str().unwrap()], None);
    assert_ne!(bad.status.code(), Some(0));
}

/// The first shared Gomoku problem (Black to win under 4T): solved quickly with VCF, and the
/// proof passes `pcn verify`.
#[test]
fn shared_problem_proof_verifies() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/problems/gomoku/1.sgf");
    if !p.exists() {
        eprintln!("SKIP: {} not found", p.display());
        return;
    }
    let dir = tmp_dir("solve_shared");
    let o = pcn(
        &[
            "solve",
            "--nodes",
            "2000000",
            "--time",
            "120",
            "--proof-dir",
            dir.to_str().unwrap(),
            p.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = lines(&o);
    assert_eq!(v[0]["result"], "win", "{}", v[0]);
    assert_eq!(v[0]["prover"], "B");
    assert_eq!(v[0]["rule"], "4t");
    let proof = v[0]["proof"].as_str().expect("proof written");
    let ver = pcn(&["verify", proof], None);
    assert_eq!(
        ver.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ver.stderr)
    );
    // Corrupting the header's prover makes it fail.
    let text = std::fs::read_to_string(proof).unwrap();
    let bad = dir.join("bad.sgf");
    std::fs::write(&bad, text.replace("prover=B", "prover=W")).unwrap();
    let ver = pcn(&["verify", bad.to_str().unwrap()], None);
    assert_eq!(ver.status.code(), Some(1));
}

/// Plain `dfpn` uses no network: with `--net` it says so on stderr (and still solves); the
/// focused DFPN that does use it says nothing of the kind.
#[test]
fn dfpn_says_it_ignores_the_network() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    // Problem 9: both prove it at once (the threat search at the root).
    let p = root.join("problems/gomoku/9.sgf");
    let model = root.join("pcn/models/gomoku_AZ-4T");
    if !p.exists() || !model.is_dir() {
        eprintln!("SKIP: {} or {} not found", p.display(), model.display());
        return;
    }
    for (solver, says) in [("dfpn", true), ("fdfpn", false)] {
        let o = pcn(
            &[
                "solve",
                "--solver",
                solver,
                "--net",
                model.to_str().unwrap(),
                "--symmetries",
                "1",
                "--time",
                "60",
                p.to_str().unwrap(),
            ],
            None,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{solver}: {err}");
        assert_eq!(
            err.contains("dfpn uses no network"),
            says,
            "{solver}: {err}"
        );
        assert_eq!(lines(&o)[0]["result"], "win", "{solver}");
    }
}
