//! The job-level search with its workers in other processes, without Ray: `pcn solve
//! --job-link spawn` (worker processes started by the manager), `--job-link stdio` through a
//! relay written here (what `cluster/pcn-ray prove` does with Ray actors), a worker killed in
//! the middle, and a worker process fed bad lines.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pcn::game::Color;
use pcn::search::joblevel::wire::{FromWorker, ToWorker};
use pcn::search::joblevel::Job;

mod common;

use common::{root, run_pcn_text, tmp_dir};

/// A 9x9 Killall-Go position that focused DFPN without a network proves in about 9 000
/// nodes: with 1000-node jobs it takes about sixty jobs.
fn problem() -> String {
    root()
        .join("docs/data/solve/killallgo-own-hard/12.sgf")
        .display()
        .to_string()
}

fn line(out: &str) -> serde_json::Value {
    let l = out
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line in {out}"));
    serde_json::from_str(l).expect("JSON")
}

/// `pcn --workers 2 --nodes 300000 solve --job-nodes 1000 --proof-dir DIR FILE`
/// with threads: (the JSON line, the proof text).
fn threads_run(name: &str) -> (serde_json::Value, String) {
    let dir = tmp_dir(name);
    let f = problem();
    let args = [
        "--net",
        "none",
        "--workers",
        "2",
        "--nodes",
        "300000",
        "solve",
        "--time",
        "900",
        "--job-nodes",
        "1000",
        "--proof-dir",
        dir.to_str().unwrap(),
        &f,
    ];
    let (out, err, code) = run_pcn_text(&args, "", Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    let l = line(&out);
    let proof = std::fs::read_to_string(l["proof"].as_str().expect("a proof")).unwrap();
    (l, proof)
}

fn verify(path: &str) {
    let (out, err, code) = run_pcn_text(&["verify", path], "", Duration::from_secs(60));
    assert_eq!(code, 0, "pcn verify rejected {path}:\n{out}\n{err}");
}

#[test]
fn spawned_worker_processes_answer_like_threads() {
    let (want, want_proof) = threads_run("jlproc_threads_a");
    let dir = tmp_dir("jlproc_spawn");
    let f = problem();
    let args = [
        "--net",
        "none",
        "--workers",
        "2",
        "--nodes",
        "300000",
        "solve",
        "--time",
        "900",
        "--job-nodes",
        "1000",
        "--job-link",
        "spawn",
        "--proof-dir",
        dir.to_str().unwrap(),
        &f,
    ];
    let (out, err, code) = run_pcn_text(&args, "", Duration::from_secs(300));
    assert_eq!(code, 0, "{err}");
    let got = line(&out);
    assert_eq!(got["result"], "win", "{got}");
    for k in ["result", "move", "nodes"] {
        assert_eq!(got[k], want[k], "{k}: {got} vs {want}");
    }
    assert_eq!(got["jobs"]["sent"], want["jobs"]["sent"], "{got}");
    assert!(got["jobs"]["sent"].as_u64().unwrap() > 20, "{got}");
    let p = got["proof"].as_str().expect("a proof");
    assert_eq!(
        std::fs::read_to_string(p).unwrap(),
        want_proof,
        "the proofs differ"
    );
    verify(p);
}

enum Heard {
    Manager(Option<String>),
    Worker(usize, Option<String>),
}

fn start_worker(k: usize, tx: mpsc::Sender<Heard>) -> (Child, ChildStdin) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(["--net", "none", "solve", "--job-worker"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn a worker");
    let stdin = c.stdin.take().unwrap();
    let out = BufReader::new(c.stdout.take().unwrap());
    std::thread::spawn(move || {
        for l in out.lines() {
            match l {
                Ok(l) => {
                    let _ = tx.send(Heard::Worker(k, Some(l)));
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(Heard::Worker(k, None));
    });
    (c, stdin)
}

/// What `cluster/pcn-ray prove` does with Ray, done here with plain processes: the manager
/// (`--job-link stdio`) and two `--job-worker` processes, the relay passing `@k` lines. After
/// 20 answers worker 1 is killed (SIGKILL); the relay says `lost` and starts a new one, whose
/// `ready` brings it back. In deterministic mode (`--nodes`) the answer, the node count and
/// the proof are those of the thread run.
#[test]
fn relayed_workers_survive_a_killed_worker() {
    let (want, want_proof) = threads_run("jlproc_threads_b");
    let dir = tmp_dir("jlproc_relay");
    let f = problem();
    let mut manager = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args([
            "--net",
            "none",
            "--workers",
            "2",
            "--nodes",
            "300000",
            "solve",
            "--time",
            "900",
            "--job-nodes",
            "1000",
            "--job-link",
            "stdio",
            "--proof-dir",
            dir.to_str().unwrap(),
            &f,
        ])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the manager");
    let mut to_manager = manager.stdin.take().unwrap();
    let (tx, rx) = mpsc::channel::<Heard>();
    let mout = BufReader::new(manager.stdout.take().unwrap());
    let mtx = tx.clone();
    std::thread::spawn(move || {
        for l in mout.lines() {
            match l {
                Ok(l) => {
                    let _ = mtx.send(Heard::Manager(Some(l)));
                }
                Err(_) => break,
            }
        }
        let _ = mtx.send(Heard::Manager(None));
    });
    let mut workers: Vec<(Child, ChildStdin)> =
        (0..2).map(|k| start_worker(k, tx.clone())).collect();
    let mut json = Vec::new();
    let mut answers = 0;
    let mut killed = false;
    let mut restarted = false;
    let t0 = Instant::now();
    loop {
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the relayed solve hangs"
        );
        match rx.recv_timeout(Duration::from_secs(60)).expect("silence") {
            Heard::Manager(None) => break,
            Heard::Manager(Some(l)) => {
                if let Some(rest) = l.strip_prefix('@') {
                    let (k, msg) = rest.split_once(' ').unwrap();
                    let k: usize = k.parse().unwrap();
                    // A dead worker's pipe fails; the relay says `lost` when its output ends.
                    let _ = writeln!(workers[k].1, "{msg}");
                } else {
                    json.push(l);
                }
            }
            Heard::Worker(k, Some(l)) => {
                if l.starts_with("answer") {
                    answers += 1;
                }
                writeln!(to_manager, "@{k} {l}").unwrap();
                if answers == 20 && !killed {
                    workers[1].0.kill().unwrap();
                    killed = true;
                }
            }
            Heard::Worker(k, None) => {
                writeln!(to_manager, "@{k} lost why=6b696c6c6564").unwrap();
                if killed && !restarted {
                    let _ = workers[k].0.wait();
                    workers[k] = start_worker(k, tx.clone());
                    restarted = true;
                }
            }
        }
    }
    drop(to_manager);
    assert_eq!(common::wait_exit(&mut manager, Duration::from_secs(30)), 0);
    for (mut c, stdin) in workers {
        drop(stdin);
        common::wait_exit(&mut c, Duration::from_secs(30));
    }
    assert!(
        killed && restarted,
        "the run ended before the kill ({answers} answers)"
    );
    assert_eq!(json.len(), 1, "{json:?}");
    let got: serde_json::Value = serde_json::from_str(&json[0]).unwrap();
    for k in ["result", "move", "nodes"] {
        assert_eq!(got[k], want[k], "{k}: {got} vs {want}");
    }
    assert!(got["jobs"]["lost_workers"].as_u64().unwrap() >= 1, "{got}");
    assert!(got["jobs"]["resent"].as_u64().unwrap() >= 1, "{got}");
    let p = got["proof"].as_str().expect("a proof");
    assert_eq!(
        std::fs::read_to_string(p).unwrap(),
        want_proof,
        "the proofs differ"
    );
    verify(p);
}

/// Bad lines cost an `error` or `failed` answer, never the worker; a good job after them is
/// answered.
#[test]
fn a_worker_process_survives_bad_lines() {
    let sgf = std::fs::read_to_string(problem()).unwrap();
    let begin = ToWorker::Begin {
        prover: Color::White,
        problem: format!("game=killallgo rule=4t benson=on own_eye_ban=on\n{sgf}"),
    }
    .encode();
    let job = |id: u64, path: Vec<u16>| {
        ToWorker::Job(Job {
            id,
            path,
            nodes: 2_000,
            want_proof: true,
            fresh: false,
            thresholds: None,
            prefer: None,
        })
        .encode()
    };
    let input = [
        "nonsense".to_string(),
        "job id=x".into(),
        job(1, vec![]),
        "begin prover=W problem=zz".into(),
        ToWorker::Begin {
            prover: Color::White,
            problem: "game=killallgo\n(;GM[1]SZ[19])".into(),
        }
        .encode(),
        begin,
        job(2, vec![9999]),
        "\u{0}\u{1}garbage=\u{ff}".into(),
        job(3, vec![]),
    ]
    .join("\n")
        + "\n";
    let mut c = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(["--net", "none", "solve", "--job-worker"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = c.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let out = BufReader::new(c.stdout.take().unwrap());
    let mut heard = Vec::new();
    for l in out.lines() {
        let l = l.unwrap();
        let done = l.starts_with("answer id=3");
        heard.push(FromWorker::decode(&l).unwrap_or_else(|e| panic!("{e}")));
        if done {
            break;
        }
    }
    writeln!(stdin, "quit").unwrap();
    assert_eq!(common::wait_exit(&mut c, Duration::from_secs(30)), 0);
    assert_eq!(heard[0], FromWorker::Ready);
    let errors = heard
        .iter()
        .filter(|m| matches!(m, FromWorker::Error(_)))
        .count();
    assert!(errors >= 4, "{heard:?}");
    let failed: Vec<u64> = heard
        .iter()
        .filter_map(|m| match m {
            FromWorker::Failed { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(failed, vec![1, 2], "{heard:?}");
    match heard.last() {
        Some(FromWorker::Answer(a)) => assert!(a.id == 3 && a.nodes > 0, "{a:?}"),
        other => panic!("no answer: {other:?}"),
    }
}
