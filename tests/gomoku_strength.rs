//! Gomoku solving strength (branch gstrength): the staged knowledge of the MCTS solver. The
//! second-visit searches (`knowledge_win_second`: VCT; `quick_wins_second`: the prover's
//! threat as if the defender passed, replayed after each reply) must only claim real wins,
//! checked by an exhaustive search written in this file on small 4T boards; on shared
//! problems the staged MCTS solves and its proofs pass the real `pcn verify`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game, Move, Outcome};
use pcn::search::solver::{Knowledge, KnowledgeState, SolverGame};
use pcn::util::Rng;

/// Exhaustive memoised AND/OR search: does `prover` win from `g`? `None` past `cap` nodes.
struct Brute {
    nodes: u64,
    cap: u64,
    memo: HashMap<(u64, Option<Move>), bool>,
}

impl Brute {
    fn new(cap: u64) -> Self {
        Brute {
            nodes: 0,
            cap,
            memo: HashMap::new(),
        }
    }

    fn wins(&mut self, g: &mut Gomoku, prover: Color) -> Option<bool> {
        if let Some(o) = g.outcome() {
            return Some(o == Outcome::Win(prover));
        }
        let key = (g.hash(), g.forced_point());
        if let Some(&v) = self.memo.get(&key) {
            return Some(v);
        }
        self.nodes += 1;
        if self.nodes > self.cap {
            return None;
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let or = g.to_move() == prover;
        let mut v = !or;
        for m in moves {
            g.play_unchecked(m);
            let r = self.wins(g, prover);
            g.undo();
            let r = r?;
            if or == r {
                v = r;
                break;
            }
        }
        self.memo.insert(key, v);
        Some(v)
    }
}

/// Random unfinished 4T positions on a `size`x`size` board with `stones` stones.
fn positions(size: usize, stones: usize, count: usize, seed: u64) -> Vec<Gomoku> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut moves = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 50 {
        tries += 1;
        let Ok(mut g) = Gomoku::new(size, size, Rule::FourT) else {
            return out;
        };
        while g.ply() < stones && g.outcome().is_none() {
            g.legal_moves(&mut moves);
            let m = moves[rng.below(moves.len())];
            g.play_unchecked(m);
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

fn staged() -> Knowledge {
    Knowledge {
        vct: true,
        defence: true,
        defer_vct: true,
        ..Knowledge::default()
    }
}

#[test]
fn staged_knowledge_claims_are_real_wins() {
    assert!(
        <Gomoku as SolverGame>::knowledge_deferred(&KnowledgeState::new(staged())),
        "VCT is deferred"
    );
    assert_eq!(
        <Gomoku as SolverGame>::defence_deferred(&KnowledgeState::new(staged())),
        Some(staged().defence_visits)
    );
    let off = Knowledge {
        defence: false,
        defer_vct: false,
        ..staged()
    };
    assert!(!<Gomoku as SolverGame>::knowledge_deferred(
        &KnowledgeState::new(off.clone())
    ));
    assert_eq!(
        <Gomoku as SolverGame>::defence_deferred(&KnowledgeState::new(off)),
        None
    );

    let (mut defence_claims, mut defence_checked, mut rejected) = (0, 0, 0);
    let (mut second_claims, mut second_checked) = (0, 0);
    let (mut more, mut first_total) = (0, 0);
    for (i, g0) in positions(6, 13, 160, 0x57_2E46).into_iter().enumerate() {
        let mut g = g0.clone();
        // The side not to move is the prover: `g` is a defender node.
        let prover = g.to_move().opp();
        let mut st = KnowledgeState::new(staged());
        let mut replies = Vec::new();
        g.legal_moves(&mut replies);
        let mut wins = Vec::new();
        g.quick_wins_second(&mut st, &replies, &mut wins);
        assert_eq!(
            g.hash(),
            g0.hash(),
            "quick_wins_second changed the position"
        );
        // The first stage alone (no pass search) never proves more replies.
        let mut first = Vec::new();
        g.quick_wins(&mut KnowledgeState::new(staged()), &replies, &mut first);
        first_total += first.len();
        assert!(first.len() <= wins.len() || wins.len() == replies.len());
        if wins.len() > first.len() {
            more += 1;
        }
        let mut brute = Brute::new(300_000);
        rejected += replies.len() - wins.len();
        for &(k, w) in &wins {
            defence_claims += 1;
            let r = replies[k];
            g.play(r).expect("reply is legal");
            g.play(w).expect("claimed move is legal");
            let v = brute.wins(&mut g, prover);
            g.undo();
            g.undo();
            if let Some(v) = v {
                defence_checked += 1;
                assert!(
                    v,
                    "position {i}: after {r}, {w} is claimed to win but loses"
                );
            }
        }
        // The deferred VCT at the prover's nodes after the replies left open.
        for (k, &r) in replies.iter().enumerate() {
            if wins.iter().any(|&(j, _)| j == k) {
                continue;
            }
            g.play_unchecked(r);
            if g.outcome().is_none() {
                if let Some(w) = g.knowledge_win_second(&mut st) {
                    second_claims += 1;
                    g.play(w).expect("claimed move is legal");
                    let v = brute.wins(&mut g, prover);
                    g.undo();
                    if let Some(v) = v {
                        second_checked += 1;
                        assert!(v, "position {i}: after {r}, VCT move {w} loses");
                    }
                }
            }
            g.undo();
        }
    }
    eprintln!("pass search proved more replies at {more} positions (first stage: {first_total})");
    assert!(more >= 5, "the pass search added too little: {more}");
    eprintln!(
        "defence: {defence_claims} claims ({defence_checked} checked), {rejected} replies left; \
         deferred VCT: {second_claims} claims ({second_checked} checked)"
    );
    assert!(
        defence_checked >= 20,
        "too few defence claims checked: {defence_checked}"
    );
    assert!(
        rejected >= 20,
        "the defence claimed every reply: {rejected}"
    );
    // Deep VCT wins are mostly beyond the exhaustive search's cap here; the same search is
    // checked by tests/gomoku_knowledge.rs through `knowledge_win`.
    assert!(
        second_claims >= 3,
        "too few deferred VCT claims: {second_claims}"
    );
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// Two shared 4T problems that the staged MCTS solves in well under a second on a quiet core;
/// their proofs must pass `pcn verify`. Skips when ../shared is absent.
#[test]
fn staged_mcts_solves_shared_problems_with_sound_proofs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/problems/gomoku");
    let files: Vec<PathBuf> = ["45.sgf", "53.sgf"].iter().map(|f| dir.join(f)).collect();
    if files.iter().any(|f| !f.exists()) {
        eprintln!("SKIP: {} is absent", dir.display());
        return;
    }
    let out = tmp_dir("gomoku_strength_proofs");
    let mut args: Vec<String> = [
        "--nodes",
        "60000",
        "solve",
        "--solver",
        "mcts",
        "--time",
        "120",
        "--proof-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.to_string_lossy().into_owned());
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let o = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .args(&args)
        .output()
        .expect("run pcn solve");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let wins = stdout
        .lines()
        .filter(|l| l.contains("\"result\":\"win\""))
        .count();
    assert_eq!(wins, 2, "both problems solved: {stdout}");
    let proofs: Vec<String> = std::fs::read_dir(&out)
        .expect("proof dir")
        .flatten()
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    assert_eq!(proofs.len(), 2, "two proof files: {proofs:?}");
    let v = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .arg("verify")
        .args(&proofs)
        .output()
        .expect("run pcn verify");
    assert!(
        v.status.success(),
        "pcn verify rejected a proof: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
}
