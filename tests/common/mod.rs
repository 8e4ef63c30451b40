//! Set-up shared by the integration tests: running the real `pcn` binary (one-shot with piped
//! input, or a live engine read line by line), the paths of `../shared`, and an exhaustive
//! AND/OR search with random positions that the solver tests check claims against.
//!
//! The exhaustive search shares nothing with the solvers (only the game rules), so a solver
//! bug cannot hide in both. Each test crate compiles this module on its own and uses only part
//! of it, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::killallgo::{KillallGo, KillallGoRules, Variant};
use pcn::game::{Color, Game, Move, Outcome};
use pcn::proof::{GameKind, MoveTree, ProofHeader};
use pcn::sgf::GameTree;
use pcn::util::Rng;

// ---------------------------------------------------------------------------------------
// The binary and the repository

/// The repository root (the tests run the binary there, so relative paths such as
/// `../shared/...` resolve the same way as in the README).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the checkout, or `None` when it is absent (tests then skip with a
/// notice, as CI without the data would).
pub fn shared() -> Option<PathBuf> {
    let p = root().join("../shared");
    p.is_dir().then_some(p)
}

/// `../shared/REL` when it exists, else `None` after printing a skip notice.
pub fn shared_path(rel: &str) -> Option<PathBuf> {
    let p = root().join("../shared").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("NOTICE: {} absent: test skipped", p.display());
        None
    }
}

/// A fresh empty directory `name` under Cargo's per-target test scratch space.
pub fn tmp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// Runs `pcn ARGS` in the repository root with `input` on stdin and returns (stdout, stderr,
/// exit code; -1 when killed by a signal). Fails the test when the process is still running
/// `limit` after its stdout closed.
pub fn run_pcn<S: AsRef<OsStr>>(
    args: &[S],
    input: &[u8],
    limit: Duration,
) -> (Vec<u8>, Vec<u8>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pcn");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.to_vec();
    // Written on another thread so that a full stdout pipe cannot deadlock the test; the
    // engine may exit before reading its input (a loading error), so EPIPE is ignored.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let err = std::thread::spawn(move || {
        let mut e = Vec::new();
        let _ = se.read_to_end(&mut e);
        e
    });
    let mut out = Vec::new();
    so.read_to_end(&mut out).expect("read stdout");
    let _ = writer.join();
    let code = wait_exit(&mut child, limit);
    (out, err.join().unwrap_or_default(), code)
}

/// [`run_pcn`] with text in and out (lossy UTF-8).
pub fn run_pcn_text(args: &[&str], input: &str, limit: Duration) -> (String, String, i32) {
    let (out, err, code) = run_pcn(args, input.as_bytes(), limit);
    (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
        code,
    )
}

/// Waits for `child` to exit (its exit code, -1 for a signal); kills it and fails the test
/// past `limit`.
pub fn wait_exit(child: &mut Child, limit: Duration) -> i32 {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s.code().unwrap_or(-1);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("pcn did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A running engine (GTP or Gomocup) whose stdout is read line by line, for tests that talk
/// to it while it thinks (`stop`, time limits). Killed when dropped.
pub struct Live {
    child: Child,
    stdin: ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Live {
    /// Starts `pcn ARGS` in the repository root (stderr discarded).
    pub fn start(args: &[&str]) -> Live {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pcn"))
            .args(args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn pcn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        Live {
            child,
            stdin,
            lines: rx,
        }
    }

    /// Writes `s` (with its own newlines) and flushes.
    pub fn send(&mut self, s: &str) {
        self.stdin.write_all(s.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The next output line; fails the test after 30 s of silence.
    pub fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("engine output")
    }

    /// One complete GTP response (up to its blank line), without the blank line.
    pub fn response(&self) -> Vec<String> {
        let mut v = Vec::new();
        loop {
            let l = self.line();
            if l.is_empty() {
                return v;
            }
            v.push(l);
        }
    }

    /// Waits for the engine to exit (after `quit`): its exit code; fails the test past
    /// `limit`.
    pub fn wait(&mut self, limit: Duration) -> i32 {
        wait_exit(&mut self.child, limit)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// Exhaustive reference

/// Exhaustive AND/OR search: does `prover` win from here? `None` once it was called more than
/// `cap` times (positions visited, terminal and memoised ones included). `key` gives a memo
/// key for games whose value does not depend on the history (Gomoku: [`gomoku_key`]);
/// Killall-Go (superko) is searched without a memo ([`no_key`]).
pub struct Brute<G> {
    /// Positions visited.
    pub nodes: u64,
    /// Give up after this many visits.
    pub cap: u64,
    memo: HashMap<(u64, u64), bool>,
    key: fn(&G) -> Option<(u64, u64)>,
}

impl<G: Game> Brute<G> {
    /// A search that gives up after `cap` visits.
    pub fn new(cap: u64, key: fn(&G) -> Option<(u64, u64)>) -> Self {
        Brute {
            nodes: 0,
            cap,
            memo: HashMap::new(),
            key,
        }
    }

    /// Whether `prover` wins from `g` (left unchanged), or `None` past the cap.
    pub fn wins(&mut self, g: &mut G, prover: Color) -> Option<bool> {
        self.nodes += 1;
        if self.nodes > self.cap {
            return None;
        }
        if let Some(o) = g.outcome() {
            return Some(o == Outcome::Win(prover));
        }
        let k = (self.key)(g);
        if let Some(v) = k.and_then(|k| self.memo.get(&k)) {
            return Some(*v);
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let or = g.to_move() == prover;
        // OR: some child wins; AND: every child wins. No legal move (cannot happen in these
        // games before the end) counts as not proven.
        let mut result = !or && !moves.is_empty();
        for m in moves {
            g.play_unchecked(m);
            let r = self.wins(g, prover);
            g.undo();
            let r = r?;
            if or && r {
                result = true;
                break;
            }
            if !or && !r {
                result = false;
                break;
            }
        }
        if let Some(k) = k {
            self.memo.insert(k, result);
        }
        Some(result)
    }

    /// Builds a proof tree below `node` (the position `g`, known to be a prover win): every
    /// legal defence, one winning move for the prover.
    pub fn prove(&mut self, g: &mut G, prover: Color, tree: &mut MoveTree, node: u32) {
        if g.outcome().is_some() {
            return;
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let color = g.to_move();
        for m in moves {
            g.play_unchecked(m);
            if color != prover {
                let c = tree.add(node, m, color);
                self.prove(g, prover, tree, c);
            } else if self.wins(g, prover) == Some(true) {
                let c = tree.add(node, m, color);
                self.prove(g, prover, tree, c);
                g.undo();
                return;
            }
            g.undo();
        }
    }
}

/// The memo key of a Gomoku position: its stones and its 4T forced point.
pub fn gomoku_key(g: &Gomoku) -> Option<(u64, u64)> {
    Some((g.hash(), g.forced_point().map_or(u64::MAX, u64::from)))
}

/// No memo (history-sensitive games).
pub fn no_key(_: &KillallGo) -> Option<(u64, u64)> {
    None
}

/// Random unfinished Gomoku positions: `stones` uniformly random legal moves from the empty
/// `size`x`size` board (positions where the game ended earlier are drawn again).
pub fn gomoku_positions(
    size: usize,
    rule: Rule,
    stones: usize,
    count: usize,
    seed: u64,
) -> Vec<Gomoku> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut legal = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 50 {
        tries += 1;
        let Ok(mut g) = Gomoku::new(size, size, rule) else {
            return out;
        };
        while g.ply() < stones && g.outcome().is_none() {
            g.legal_moves(&mut legal);
            if legal.is_empty() {
                break;
            }
            g.play_unchecked(legal[rng.below(legal.len())]);
        }
        if g.outcome().is_none() && g.ply() == stones {
            out.push(g);
        }
    }
    out
}

/// Random 7x7 Killall-Go positions after `plies` random plies (passes only when forced by
/// the opening), game not over.
pub fn killallgo_positions(plies: usize, count: usize, seed: u64) -> Vec<KillallGo> {
    killallgo_positions_with(KillallGoRules::default(), plies, count, seed)
}

/// [`killallgo_positions`] under the given knowledge rules.
pub fn killallgo_positions_with(
    rules: KillallGoRules,
    plies: usize,
    count: usize,
    seed: u64,
) -> Vec<KillallGo> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut legal = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < 100 * count {
        tries += 1;
        let mut g = KillallGo::with_rules(Variant::Seven, rules);
        while g.ply() < plies && g.outcome().is_none() {
            g.legal_moves(&mut legal);
            let pass = g.pass_move();
            let board: Vec<Move> = legal.iter().copied().filter(|&m| m != pass).collect();
            let m = if board.is_empty() {
                pass
            } else {
                board[rng.below(board.len())]
            };
            g.play_unchecked(m);
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

/// The problem record of a Gomoku position: its moves from the empty board.
pub fn gomoku_record(g: &Gomoku) -> GameTree {
    let w = g.width();
    let moves = g.history_cells().map(|(c, col)| (col, g.move_of(c)));
    GameTree::from_moves(4, w, g.height(), moves)
}

/// The problem record of a Killall-Go position: its moves from the empty board.
pub fn killallgo_record(g: &KillallGo) -> GameTree {
    GameTree::from_moves(1, g.width(), g.height(), g.moves())
}

/// The root header of a proof of `g` for `prover`, naming `solver`.
pub fn header(
    game: GameKind,
    rule: Option<Rule>,
    g: &impl Game,
    prover: Color,
    solver: &str,
) -> ProofHeader {
    ProofHeader {
        game,
        rule,
        size: (g.width(), g.height()),
        prover,
        plies: g.ply(),
        to_move: Some(g.to_move()),
        extra: vec![("solver".into(), solver.into())],
    }
}

/// The float32 tensor `name` of a golden file (`golden.safetensors`, little-endian), as the
/// network golden tests read it; a missing tensor fails the test with its name.
pub fn golden_floats(st: &safetensors::SafeTensors, name: &str) -> Vec<f32> {
    let t = st
        .tensor(name)
        .unwrap_or_else(|e| panic!("golden tensor {name}: {e}"));
    t.data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The largest absolute difference between two equally long outputs.
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Two 7x7 Killall-Go games that reach the same stones with White to move after Black's
/// C1, whose values differ only through situational superko:
///
/// ```text
///     A B C D E F G
///  7  . X X X X X .
///  6  X X X X X X X
///  5  X . X X . X X
///  4  X X X X X X X
///  3  X X X X X X X
///  2  O O O X X X X
///  1  . O X . X X .
/// ```
///
/// In the first, White's stone on D1 was the last stone placed and Black's C1 captured it:
/// White's recapture at D1 would repeat the position after White's D1 with Black to move, so
/// it is illegal, and Black wins. In the second, D1 was never played and C1 captured
/// nothing: the recapture is legal, and White wins. Black's stones are placed first (White
/// passing in between), then White's, so no two passes ever follow each other.
pub fn superko_pair() -> (KillallGo, KillallGo) {
    use pcn::game::edit::EditableGame;
    let region = ["A1", "B1", "C1", "D1", "A2", "B2", "C2", "D2"];
    let eyes = ["G1", "B5", "E5", "G7", "A7"];
    let build = |whites: &[&str]| {
        let mut g = KillallGo::new(Variant::Seven);
        let play = |g: &mut KillallGo, s: &str, c: Color| {
            let m = g.parse_gtp(s).expect("a 7x7 point");
            g.play_as(m, c)
                .unwrap_or_else(|e| panic!("setting up {s}: {e:?}"));
            assert!(g.outcome().is_none(), "the game ended at {s}");
        };
        for r in 1..=7 {
            for c in "ABCDEFG".chars() {
                let s = format!("{c}{r}");
                if !region.contains(&s.as_str()) && !eyes.contains(&s.as_str()) {
                    play(&mut g, &s, Color::Black);
                }
            }
        }
        play(&mut g, "D2", Color::Black);
        for s in whites {
            play(&mut g, s, Color::White);
        }
        play(&mut g, "C1", Color::Black);
        g
    };
    let through_ko = build(&["A2", "B2", "C2", "B1", "D1"]);
    let direct = build(&["A2", "B2", "C2", "B1"]);
    (through_ko, direct)
}
