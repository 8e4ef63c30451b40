//! Robustness and timing checks of the real binary in Gomocup mode. The timing tests are
//! correctness checks with generous bounds (they must not flake on a loaded 2-core machine),
//! not benchmarks: they use the `test-slow` player (spends its whole soft budget) and
//! `test-stubborn` (ignores its budget; only the engine's hard deadline or YXSTOP stops it).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use pcn::util::Rng;

struct Brain {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(String, Instant)>,
}

impl Brain {
    fn spawn(args: &[&str]) -> Brain {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pcn"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn pcn");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send((l, Instant::now())).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Brain {
            child,
            stdin,
            lines: rx,
        }
    }

    fn send_bytes(&mut self, b: &[u8]) {
        let s = self.stdin.as_mut().expect("stdin open");
        s.write_all(b).expect("write");
        s.flush().expect("flush");
    }

    /// Sends a line; returns when it was sent.
    fn send(&mut self, l: &str) -> Instant {
        self.send_bytes(format!("{l}\n").as_bytes());
        Instant::now()
    }

    fn expect(&self, within: Duration) -> (String, Instant) {
        self.lines
            .recv_timeout(within)
            .unwrap_or_else(|_| panic!("no reply within {within:?}"))
    }

    /// The next line that is not a `MESSAGE` (what a manager waits for after a turn; a
    /// searched move is preceded by a `MESSAGE` line with what the search thought).
    fn expect_reply(&self, within: Duration) -> (String, Instant) {
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let (l, at) = self.expect(left);
            if !l.starts_with("MESSAGE ") {
                return (l, at);
            }
        }
    }

    fn close(mut self) -> std::process::ExitStatus {
        self.stdin = None;
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "pcn did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const ABOUT_PREFIX: &str = "name=\"pcn\"";

fn is_point(l: &str, size: i64) -> bool {
    let p: Vec<&str> = l.split(',').collect();
    p.len() == 2
        && p.iter()
            .all(|v| v.parse::<i64>().is_ok_and(|n| (0..size).contains(&n)))
}

#[test]
fn random_garbage_then_about() {
    let mut b = Brain::spawn(&[]);
    let mut rng = Rng::new(7);
    let mut data = Vec::new();
    for _ in 0..200_000 {
        // Mostly random bytes, with newlines now and then.
        let v = (rng.next_u64() & 0xFF) as u8;
        data.push(if rng.below(40) == 0 { b'\n' } else { v });
    }
    data.push(b'\n');
    b.send_bytes(&data);
    b.send("ABOUT");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (l, _) = b.expect(deadline.saturating_duration_since(Instant::now()));
        assert!(
            l.starts_with("UNKNOWN") || l.starts_with("ERROR") || l.starts_with(ABOUT_PREFIX),
            "unexpected reply to garbage: {l:?}"
        );
        if l.starts_with(ABOUT_PREFIX) {
            break;
        }
    }
    // Still a working brain afterwards.
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    b.send("BEGIN");
    assert!(is_point(&b.expect_reply(Duration::from_secs(10)).0, 15));
    b.send("END");
    assert!(b.close().success());
}

#[test]
fn megabyte_line_then_about() {
    let mut b = Brain::spawn(&["gomocup"]);
    let mut line = vec![b'A'; 1 << 20];
    line.push(b'\n');
    b.send_bytes(&line);
    assert_eq!(b.expect(Duration::from_secs(10)).0, "ERROR line too long");
    b.send("ABOUT");
    assert!(b.expect(Duration::from_secs(5)).0.starts_with(ABOUT_PREFIX));
    b.send("END");
    assert!(b.close().success());
}

fn timed_move(player: &str, infos: &[&str]) -> Duration {
    let mut b = Brain::spawn(&["--player", player, "gomocup"]);
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    for i in infos {
        b.send(i);
    }
    let sent = b.send("TURN 7,7");
    let (l, at) = b.expect_reply(Duration::from_secs(20));
    assert!(is_point(&l, 15), "not a move: {l}");
    b.send("END");
    at - sent
}

#[test]
fn timeout_turn_is_used_and_respected() {
    // The slow player spends its whole soft budget: the move must come after a good part of
    // the second (the clock gave a real budget) and before it ends (plus pipe latency).
    let t = timed_move("test-slow", &["INFO timeout_turn 1000"]);
    assert!(t >= Duration::from_millis(500), "budget not used: {t:?}");
    assert!(t < Duration::from_millis(1250), "late: {t:?}");
}

#[test]
fn hard_deadline_stops_stubborn_searcher() {
    let t = timed_move("test-stubborn", &["INFO timeout_turn 1000"]);
    assert!(t < Duration::from_millis(1250), "late: {t:?}");
}

/// A search that misses its hard deadline (deaf to its stop flag) is answered for in time,
/// with the best move of the iteration it reported (`test-frozen` reports the last empty
/// point, a corner, which the static fallback would never play) and without a `MESSAGE` line of a
/// search that did not answer.
#[test]
fn a_late_search_is_answered_with_its_reported_move() {
    let mut b = Brain::spawn(&["--player", "test-frozen", "gomocup"]);
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    b.send("INFO timeout_turn 1000");
    let sent = b.send("TURN 7,7");
    let mut messages = Vec::new();
    let (l, at) = loop {
        let (l, at) = b.expect(Duration::from_secs(20));
        if l.starts_with("MESSAGE ") {
            messages.push(l);
        } else {
            break (l, at);
        }
    };
    // The last empty point in the board's order is a corner; the static move is not.
    let corner = l.split(',').all(|v| v.trim() == "0" || v.trim() == "14");
    assert!(corner, "not the reported move: {l}");
    assert!(
        at - sent < Duration::from_millis(1250),
        "late: {:?}",
        at - sent
    );
    assert!(
        !messages.iter().any(|m| m.starts_with("MESSAGE depth")),
        "a search line for a fallback: {messages:?}"
    );
}

#[test]
fn time_left_is_respected() {
    let t = timed_move(
        "test-stubborn",
        &[
            "INFO timeout_turn 30000",
            "INFO timeout_match 100000",
            "INFO time_left 600",
        ],
    );
    assert!(t < Duration::from_millis(850), "late: {t:?}");
}

#[test]
fn timeout_turn_zero_answers_at_once() {
    let t = timed_move("test-stubborn", &["INFO timeout_turn 0"]);
    assert!(t < Duration::from_millis(300), "not instant: {t:?}");
}

#[test]
fn yxstop_during_long_search() {
    let mut b = Brain::spawn(&["--player", "test-stubborn", "gomocup"]);
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    b.send("INFO timeout_turn 60000");
    b.send("TURN 7,7");
    // INFO during the search is accepted silently and nothing is answered yet.
    std::thread::sleep(Duration::from_millis(300));
    b.send("INFO time_left 50000");
    assert!(b.lines.try_recv().is_err(), "answered before YXSTOP");
    let sent = b.send("YXSTOP");
    let (l, at) = b.expect_reply(Duration::from_secs(10));
    assert!(is_point(&l, 15), "not a move: {l}");
    assert!(
        at - sent < Duration::from_millis(500),
        "slow stop: {:?}",
        at - sent
    );
    b.send("END");
    assert!(b.close().success());
}

#[test]
fn end_during_search_exits_promptly() {
    let mut b = Brain::spawn(&["--player", "test-stubborn", "gomocup"]);
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    b.send("INFO timeout_turn 60000");
    b.send("BEGIN");
    std::thread::sleep(Duration::from_millis(200));
    let sent = b.send("END");
    let t0 = Instant::now();
    loop {
        if let Some(s) = b.child.try_wait().expect("wait") {
            assert!(s.success());
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(1),
            "END did not exit in 1 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(sent.elapsed() < Duration::from_secs(2));
    // Nothing was printed after END (the move of the interrupted search is dropped).
    assert!(b.lines.recv_timeout(Duration::from_millis(200)).is_err());
}

#[test]
fn gtp_is_detected() {
    // Without a subcommand, GTP input goes to the GTP front end (tests/gtp_transcripts.rs).
    let mut b = Brain::spawn(&[]);
    b.send("protocol_version");
    let first = b
        .lines
        .recv_timeout(Duration::from_secs(10))
        .map(|(l, _)| l);
    assert_eq!(first.as_deref(), Ok("= 2"));
    let st = b.close();
    assert_eq!(st.code(), Some(0));
}

#[test]
fn bad_options_fail() {
    for args in [
        &["--threads", "0"][..],
        &["--nodes", "x"],
        &["--player", "nobody", "gomocup"],
        &["--bogus"],
    ] {
        let st = Command::new(env!("CARGO_BIN_EXE_pcn"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run");
        assert!(!st.success(), "{args:?} accepted");
    }
}

/// In-process fuzzing: thousands of random, mostly well-formed command lines (random
/// numbers, including extreme ones, random block contents, CRLF, case changes) must never
/// panic, and every output line must be a protocol line.
#[test]
fn random_commands_never_panic() {
    use pcn::protocol::gomocup::{run, Options};
    use pcn::protocol::Input;
    let mut rng = Rng::new(2026);
    let words = [
        "START",
        "RECTSTART",
        "RESTART",
        "BEGIN",
        "TURN",
        "BOARD",
        "YXBOARD",
        "SWAP2BOARD",
        "INFO",
        "ABOUT",
        "PLAY",
        "TAKEBACK",
        "YXSTOP",
        "STOP",
        "YXHASHCLEAR",
        "YXNBEST",
        "YXSHOWFORBID",
        "YXSHOWINFO",
        "DONE",
        "FOO",
        "",
    ];
    let keys = [
        "timeout_turn",
        "timeout_match",
        "time_left",
        "max_memory",
        "game_type",
        "rule",
        "evaluate",
        "folder",
        "max_node",
        "max_depth",
        "thread_num",
        "time_increment",
        "zzz",
    ];
    let nums = [
        "0",
        "1",
        "4",
        "5",
        "7",
        "8",
        "9",
        "14",
        "15",
        "19",
        "20",
        "21",
        "22",
        "23",
        "-1",
        "2147483647",
        "99999999999",
        "-9223372036854775808",
        "x",
        "",
    ];
    let num = |rng: &mut Rng| nums[rng.below(nums.len())].to_string();
    let (tx, rx) = crossbeam::channel::unbounded();
    let mut sent = 0;
    for _ in 0..6000 {
        let w = words[rng.below(words.len())];
        let mut l = match w {
            "START" | "YXNBEST" => format!("{w} {}", num(&mut rng)),
            "RECTSTART" | "TURN" | "PLAY" | "TAKEBACK" => {
                format!("{w} {},{}", num(&mut rng), num(&mut rng))
            }
            "INFO" => {
                let k = keys[rng.below(keys.len())];
                format!("INFO {k} {}", num(&mut rng))
            }
            "" => format!("{},{},{}", num(&mut rng), num(&mut rng), num(&mut rng)),
            _ => w.to_string(),
        };
        // Keep the time limits small so the test stays fast.
        if l.starts_with("INFO timeout_turn") {
            l = "INFO timeout_turn 5".into();
        }
        if rng.below(5) == 0 {
            l = l.to_lowercase();
        }
        if rng.below(5) == 0 {
            l.push('\r');
        }
        if !l.starts_with("START") || rng.below(3) == 0 {
            tx.send(Input::Line {
                text: l,
                at: Instant::now(),
            })
            .expect("send");
            sent += 1;
        }
        if sent % 40 == 0 {
            tx.send(Input::Line {
                text: "START 15".into(),
                at: Instant::now(),
            })
            .expect("send");
        }
    }
    tx.send(Input::Eof).expect("send");
    let mut out = Vec::new();
    let opts = Options {
        nodes: Some(50),
        ..Options::default()
    };
    let code = run(
        rx,
        Vec::new(),
        &mut out,
        Box::new(pcn::search::gomoku::greedy::Greedy),
        opts,
    );
    assert_eq!(code, 0);
    let text = String::from_utf8(out).expect("utf8 output");
    let mut moves = 0;
    for l in text.lines() {
        let ok = l == "OK"
            || l == "SWAP"
            || l.starts_with("ERROR ")
            || l.starts_with("UNKNOWN ")
            || l.starts_with("MESSAGE ")
            || l.starts_with("FORBID ")
            || l.starts_with(ABOUT_PREFIX)
            || l.split(' ').all(|p| is_point(p, 22));
        assert!(ok, "bad output line {l:?}");
        moves += usize::from(is_point(l, 22));
    }
    assert!(moves > 50, "too few moves played: {moves}");
}

/// ABOUT and END sent during a search are answered at once: ABOUT does not wait for the
/// move, and END is not queued behind it (a manager that asks anything before END would
/// otherwise wait for the whole turn, then kill the brain). The bounds are loose against a
/// 5 s turn: a correctness check, not a benchmark.
fn about_then_end_during_search(player: &str, begin: bool) {
    let mut b = Brain::spawn(&["--player", player, "gomocup"]);
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    b.send("INFO timeout_turn 5000");
    if begin {
        b.send("BEGIN");
        assert!(is_point(&b.expect_reply(Duration::from_secs(10)).0, 15));
    }
    b.send("TURN 3,3");
    std::thread::sleep(Duration::from_millis(200));
    let sent = b.send("ABOUT");
    b.send("END");
    let (l, at) = b.expect(Duration::from_secs(10));
    assert!(l.starts_with(ABOUT_PREFIX), "not the ABOUT answer: {l}");
    assert!(
        at - sent < Duration::from_secs(1),
        "ABOUT waited {:?}",
        at - sent
    );
    loop {
        if let Some(s) = b.child.try_wait().expect("wait") {
            assert!(s.success());
            break;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(2),
            "END queued behind the search"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // The interrupted search's move is dropped.
    assert!(b.lines.recv_timeout(Duration::from_millis(200)).is_err());
}

#[test]
fn about_and_end_during_a_search_are_not_queued() {
    about_then_end_during_search("test-stubborn", false);
}

#[test]
fn about_and_end_during_a_default_player_search() {
    // The reported case: the default player, BEGIN answered, then TURN starts a search.
    about_then_end_during_search("pcn", true);
}

/// Peak resident memory of a process in bytes (Linux `/proc`), `None` elsewhere.
fn peak_rss(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `INFO max_memory` caps the whole brain (Gomocup's rule), not only its tables: a few
/// searched moves stay under it, for the default player and a solver player, including the
/// memory the brain holds from its start (before `max_memory` arrives).
#[test]
fn max_memory_bounds_the_whole_process() {
    if peak_rss(std::process::id()).is_none() {
        println!("NOTICE: no /proc/<pid>/status here: peak memory not checked");
        return;
    }
    for (player, cap_mb) in [("pcn", 64u64), ("solver", 80)] {
        let mut b = Brain::spawn(&["--player", player, "--net", "none", "gomocup"]);
        b.send("START 15");
        assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
        b.send(&format!("INFO max_memory {}", cap_mb << 20));
        b.send("INFO timeout_turn 1500");
        b.send("BEGIN");
        let first = b.expect_reply(Duration::from_secs(10)).0;
        assert!(is_point(&first, 15), "{player}: {first}");
        // Three opponent moves on points the brain has not taken (its replies depend on
        // its evaluation, so a fixed list could hit one of them).
        let mut taken = vec![first];
        for _ in 0..3 {
            let Some(mv) = ["7,8", "8,9", "6,6", "9,9", "5,5", "9,5"]
                .into_iter()
                .find(|p| !taken.iter().any(|t| t == p))
            else {
                break;
            };
            taken.push(mv.to_string());
            b.send(&format!("TURN {mv}"));
            let reply = b.expect_reply(Duration::from_secs(10)).0;
            assert!(is_point(&reply, 15), "{player}: TURN {mv}: {reply}");
            taken.push(reply);
        }
        let peak = peak_rss(b.child.id()).expect("peak RSS");
        assert!(
            peak <= cap_mb << 20,
            "{player}: peak RSS {} MB over max_memory {cap_mb} MB",
            peak >> 20
        );
        b.send("END");
        assert!(b.close().success());
    }
}

/// The point `x,y` of a `MESSAGE ... pv` move (`h8`: column letter from `a`, row from the
/// top, 1-based, as the YXNBEST lines write them).
fn pv_point(mv: &str) -> String {
    let x = mv.as_bytes()[0] - b'a';
    let row: i64 = mv[1..].parse().expect("pv row");
    format!("{},{}", x, row - 1)
}

/// A searched move is preceded by one `MESSAGE` line in the format pygomo-lib and Rapfi use
/// (`depth D-D ev S n N n/ms R tm T pv ...`), whose PV starts with the move played; in
/// deterministic mode it has no timings. A proven win says so by its score.
#[test]
fn searched_move_reports_its_search() {
    let mut b = Brain::spawn(&["--player", "pcn", "--nodes", "3000", "gomocup"]);
    b.send("START 15");
    assert_eq!(b.expect(Duration::from_secs(5)).0, "OK");
    // A quiet middle-game position: the search runs to its node budget.
    b.send("BOARD");
    for l in ["7,7,1", "8,8,2", "8,6,1", "6,8,2"] {
        b.send(l);
    }
    b.send("DONE");
    let (msg, _) = b.expect(Duration::from_secs(20));
    let (mv, _) = b.expect(Duration::from_secs(20));
    assert!(is_point(&mv, 15), "not a move after the message: {mv}");
    let f: Vec<&str> = msg.split_whitespace().collect();
    assert_eq!(&f[..2], &["MESSAGE", "depth"], "{msg}");
    let (d1, d2) = f[2].split_once('-').expect("depth D-D");
    let depth: u32 = d1.parse().expect("depth");
    assert!(depth >= 2 && d1 == d2, "{msg}");
    assert_eq!(
        (f[3], f[5], f[7], f[9], f[11]),
        ("ev", "n", "n/ms", "tm", "pv"),
        "{msg}"
    );
    f[4].parse::<i32>().expect("score");
    let nodes: u64 = f[6].parse().expect("nodes");
    // The budget is checked between nodes, so a few more may be counted.
    assert!(nodes > 1000 && nodes <= 6000, "{msg}");
    assert_eq!(
        (f[8], f[10]),
        ("0", "0"),
        "timings in deterministic mode: {msg}"
    );
    assert_eq!(
        pv_point(f[12]),
        mv,
        "the PV does not start with the move: {msg}"
    );

    // Four in a row with an open end: the win is found and reported as one.
    b.send("BOARD");
    for l in [
        "3,4,1", "4,4,1", "5,4,1", "6,4,1", "3,5,2", "4,5,2", "5,5,2", "6,3,2",
    ] {
        b.send(l);
    }
    b.send("DONE");
    let (msg, _) = b.expect(Duration::from_secs(20));
    let (mv, _) = b.expect(Duration::from_secs(20));
    assert!(mv == "7,4" || mv == "2,4", "not the five: {mv}");
    let f: Vec<&str> = msg.split_whitespace().collect();
    let score: i32 = f.get(4).and_then(|s| s.parse().ok()).expect("score");
    assert!(
        score >= pcn::search::gomoku::alphabeta::WIN_THRESHOLD,
        "{msg}"
    );
    assert_eq!(f.get(11), Some(&"pv"), "{msg}");
    assert_eq!(f.get(12).map(|m| pv_point(m)), Some(mv), "{msg}");
    b.send("END");
    assert!(b.close().success());
}
