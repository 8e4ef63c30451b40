//! Leaf labels for the eval net (`pcn leaf-labels`, docs/training.md): the positions the
//! player's search scores with its static evaluation, each scored again by a deeper search.
//!
//! A network trained on the positions of games learns what games look like; the player asks
//! it about its search's leaves, which include the replies the search tries and rejects, so
//! those are what it should be trained on as well (docs/notebook/2026-12-05-leaf-labels.md).
//!
//! For each game of a game log (`pcn selfplay --eval-games`): one searched, undecided, quiet
//! position of the game (one with a `classic` value) is the root (chosen at random); the player searches it with
//! `root_nodes`, keeping a random sample of the positions it judges statically
//! ([`AlphaBeta::sample_leaves`]); up to `per_root` of them, chosen at random, are each
//! searched by a fresh player with `label_nodes`, whose root score is the label. Every
//! random choice is seeded by the run's seed and the game's index, and each search starts
//! from an empty table, so a game's lines do not depend on the order or the number of
//! threads, and a killed run resumes where it stopped (a game's lines are written in one
//! write).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use super::gamelog::{read_lines, GameLine, GameLog, LogSetting};
use super::record::RecordError;
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Game, Move};
use crate::search::gomoku::alphabeta::{classic_value, AlphaBeta};
use crate::search::gomoku::learn::evalnet::EvalNet;
use crate::search::{Limits, Searcher};
use crate::util::Rng;

/// Table memory of each search (the searches are small; a fresh table per search keeps the
/// labels independent of the order games are processed in).
const MEMORY: usize = 32 << 20;
/// Roots are positions whose recorded score is below this in size (undecided games).
const ROOT_SCORE_CAP: i32 = 20_000;
/// Plies from the empty board before a position can be a root (past the random opening of
/// most games).
const ROOT_MIN_PLY: usize = 4;

/// How `pcn leaf-labels` samples and scores.
#[derive(Clone, Debug)]
pub struct LeafConfig {
    /// Nodes of the search whose leaves are sampled.
    pub root_nodes: u64,
    /// Nodes of the search that scores a leaf.
    pub label_nodes: u64,
    /// Leaves kept per root at most.
    pub per_root: usize,
    /// The chance that the root search keeps a leaf it judges (before the `per_root` draw).
    pub rate: f64,
    /// Seed (with each game's index).
    pub seed: u64,
    /// Threads, each taking whole games.
    pub threads: usize,
    /// Skip this many games at the start of the input (in file order), e.g. the roots of an
    /// earlier round.
    pub skip_games: usize,
    /// Use at most this many games of the input (in file order, after the skipped ones).
    pub max_games: Option<usize>,
    /// The evaluation networks of both searches (none: the pattern evaluation). A network
    /// trained on one round's leaves can sample and label the next round, so that the data
    /// follows the search it will serve.
    pub nets: Vec<Arc<EvalNet>>,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeafSummary {
    /// Games of the input considered.
    pub games: usize,
    /// Games already in the output (resumed).
    pub skipped: usize,
    /// Leaf lines written by this run.
    pub leaves: usize,
}

/// Labels leaves of the games of the log `input` into the leaf log `out` (appending and
/// resuming). Errors: unreadable or malformed files, an output of another setting, a game
/// that is not legal under its rule.
pub fn run(input: &Path, out: &Path, cfg: &LeafConfig) -> Result<LeafSummary, RecordError> {
    let mut games = read_lines(input)?;
    games.retain(|g| !g.leaf);
    games.drain(..cfg.skip_games.min(games.len()));
    if let Some(n) = cfg.max_games {
        games.truncate(n);
    }
    let bad = |reason: String| RecordError::Bad {
        path: input.display().to_string(),
        reason,
    };
    let Some(first) = games.first() else {
        return Ok(LeafSummary::default());
    };
    let setting = LogSetting {
        nodes: cfg.label_nodes,
        ..LogSetting::of(first)
    };
    if let Some(g) = games.iter().find(|g| {
        LogSetting {
            nodes: cfg.label_nodes,
            ..LogSetting::of(g)
        } != setting
    }) {
        return Err(bad(format!(
            "game {} is of another setting than the first",
            g.index
        )));
    }
    let rule = Rule::from_name(&setting.rule)
        .ok_or_else(|| bad(format!("unknown rule {}", setting.rule)))?;
    let log = GameLog::open(out, &setting)?;
    let next = AtomicUsize::new(0);
    let leaves = AtomicUsize::new(0);
    let skipped = AtomicUsize::new(0);
    let failed: std::sync::Mutex<Option<RecordError>> = std::sync::Mutex::new(None);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..cfg.threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= games.len() || stop.load(Ordering::Relaxed) {
                    break;
                }
                let g = &games[i];
                if log.contains(g.index) {
                    skipped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let r = label_game(g, rule, cfg).map_err(bad).and_then(|lines| {
                    if !lines.is_empty() {
                        log.write_lines(&lines)?;
                    }
                    Ok(lines.len())
                });
                match r {
                    Ok(n) => {
                        leaves.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) => {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(e);
                        }
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(LeafSummary {
        games: games.len(),
        skipped: skipped.into_inner(),
        leaves: leaves.into_inner(),
    })
}

/// The board of `g` before its move `ply`.
fn board(g: &GameLine, rule: Rule, ply: usize) -> Result<Gomoku, String> {
    let [w, h] = g.size;
    let mut b = Gomoku::new(w, h, rule).map_err(|e| format!("game {}: {e}", g.index))?;
    for (i, &[x, y]) in g.moves[..ply].iter().enumerate() {
        if x >= w || y >= h {
            return Err(format!("game {}: move {i} is off the board", g.index));
        }
        b.play((y * w + x) as Move)
            .map_err(|e| format!("game {}: move {i}: {e}", g.index))?;
    }
    Ok(b)
}

/// The leaf lines of one game (none where it has no undecided searched position, or its
/// root search judged no position statically).
fn label_game(g: &GameLine, rule: Rule, cfg: &LeafConfig) -> Result<Vec<GameLine>, String> {
    let mut rng = Rng::new(cfg.seed ^ (u64::from(g.index) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let roots: Vec<usize> = (ROOT_MIN_PLY..g.moves.len())
        .filter(|&i| {
            g.scores
                .get(i)
                .copied()
                .flatten()
                .is_some_and(|s| s.abs() < ROOT_SCORE_CAP)
                && g.classic.get(i).copied().flatten().is_some()
        })
        .collect();
    if roots.is_empty() {
        return Ok(Vec::new());
    }
    let root = board(g, rule, roots[rng.below(roots.len())])?;
    let stop = AtomicBool::new(false);
    let mut player = AlphaBeta::new();
    player.set_memory(MEMORY);
    player.set_eval_nets(cfg.nets.clone());
    player.sample_leaves(cfg.rate, rng.next_u64());
    player.search(
        &root,
        &Limits::nodes(cfg.root_nodes.max(1)),
        &stop,
        &mut |_| {},
    );
    let mut kept = player.take_leaf_samples();
    kept.retain(|m| m.len() > root.stones());
    kept.sort_unstable();
    kept.dedup();
    let w = g.size[0];
    let mut out = Vec::new();
    while out.len() < cfg.per_root && !kept.is_empty() {
        let moves = kept.swap_remove(rng.below(kept.len()));
        let mut leaf = Gomoku::new(g.size[0], g.size[1], rule).map_err(|e| e.to_string())?;
        for &m in &moves {
            leaf.play(m)
                .map_err(|e| format!("game {}: a sampled leaf: {e}", g.index))?;
        }
        // The player judges only such positions statically; a sample is one by construction,
        // but the check costs nothing and keeps a label off a position it never scores.
        let Some(classic) = classic_value(&leaf) else {
            continue;
        };
        let mut labeller = AlphaBeta::new();
        labeller.set_memory(MEMORY);
        labeller.set_eval_nets(cfg.nets.clone());
        let r = labeller.search(
            &leaf,
            &Limits::nodes(cfg.label_nodes.max(1)),
            &stop,
            &mut |_| {},
        );
        let Some(best) = r.best else { continue };
        let mut xy: Vec<[usize; 2]> = moves
            .iter()
            .map(|&m| [m as usize % w, m as usize / w])
            .collect();
        xy.push([best as usize % w, best as usize / w]);
        let n = xy.len();
        let mut scores = vec![None; n];
        scores[n - 1] = Some(r.score);
        let mut classics = vec![None; n];
        classics[n - 1] = Some(classic);
        out.push(GameLine {
            size: g.size,
            rule: g.rule.clone(),
            seed: g.seed,
            index: g.index,
            nodes: cfg.label_nodes,
            mistakes: g.mistakes,
            moves: xy,
            scores,
            result: g.result.clone(),
            classic: classics,
            leaf: true,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log line of a short 15x15 game: every position from ply 4 on is "searched", with a
    /// small score and its pattern value (as `pcn selfplay --eval-games` writes them).
    fn game(index: u32) -> GameLine {
        let moves = [
            [7, 7],
            [8, 8],
            [6, 8],
            [8, 6],
            [9, 9],
            [6, 6],
            [7, 9],
            [9, 7],
        ];
        let mut b = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let (mut scores, mut classic) = (Vec::new(), Vec::new());
        for (i, &[x, y]) in moves.iter().enumerate() {
            let c = classic_value(&b);
            scores.push((i >= 4 && c.is_some()).then_some(10));
            classic.push(if i >= 4 { c } else { None });
            b.play((y * 15 + x) as Move).unwrap();
        }
        GameLine {
            size: [15, 15],
            rule: "freestyle".into(),
            seed: 5,
            index,
            nodes: 1000,
            mistakes: 0.0,
            moves: moves.to_vec(),
            scores,
            result: "black".into(),
            classic,
            leaf: false,
        }
    }

    /// A game log of `n` games (indices 0..n) in `dir`.
    fn write_games(dir: &Path, n: u32) -> std::path::PathBuf {
        let input = dir.join("games.jsonl");
        let text: String = (0..n)
            .map(|i| serde_json::to_string(&game(i)).unwrap() + "\n")
            .collect();
        std::fs::write(&input, text).unwrap();
        input
    }

    fn cfg(threads: usize) -> LeafConfig {
        LeafConfig {
            root_nodes: 4000,
            label_nodes: 600,
            per_root: 3,
            rate: 0.05,
            seed: 9,
            threads,
            skip_games: 0,
            max_games: None,
            nets: Vec::new(),
        }
    }

    /// Checks each leaf line of `lines` against a fresh 600-node search with `nets`: its
    /// label is that search's score, its last move that search's best, its `classic` value
    /// the leaf's pattern value.
    fn check_labels(lines: &[GameLine], nets: &[Arc<EvalNet>]) {
        let stop = AtomicBool::new(false);
        for l in lines {
            assert!(l.leaf && l.nodes == 600 && l.seed == 5 && l.result == "black");
            let n = l.moves.len();
            assert!(l.scores[..n - 1].iter().all(Option::is_none));
            assert!(l.classic[..n - 1].iter().all(Option::is_none));
            let leaf = board(l, Rule::Freestyle, n - 1).unwrap();
            assert_eq!(l.classic[n - 1], classic_value(&leaf));
            let mut p = AlphaBeta::new();
            p.set_memory(MEMORY);
            p.set_eval_nets(nets.to_vec());
            let r = p.search(&leaf, &Limits::nodes(600), &stop, &mut |_| {});
            assert_eq!(l.scores[n - 1], Some(r.score));
            let [x, y] = l.moves[n - 1];
            assert_eq!(r.best, Some((y * 15 + x) as Move));
        }
    }

    /// Sampling leaves leaves the search as it was, and what it keeps are positions below
    /// the root that the player judges statically.
    #[test]
    fn sampling_does_not_change_the_search() {
        let g = game(0);
        let root = board(&g, Rule::Freestyle, 6).unwrap();
        let stop = AtomicBool::new(false);
        let mut plain = AlphaBeta::new();
        plain.set_memory(MEMORY);
        let a = plain.search(&root, &Limits::nodes(5000), &stop, &mut |_| {});
        let mut sampling = AlphaBeta::new();
        sampling.set_memory(MEMORY);
        sampling.sample_leaves(0.2, 3);
        let b = sampling.search(&root, &Limits::nodes(5000), &stop, &mut |_| {});
        assert_eq!((a.best, a.score, a.nodes), (b.best, b.score, b.nodes));
        let kept = sampling.take_leaf_samples();
        assert!(kept.len() > 10, "{}", kept.len());
        let prefix: Vec<Move> = root.history_cells().map(|(c, _)| root.move_of(c)).collect();
        for moves in &kept {
            assert!(moves.len() > prefix.len() && moves.starts_with(&prefix));
            let mut leaf = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
            for &m in moves {
                leaf.play(m).unwrap();
            }
            assert!(classic_value(&leaf).is_some());
        }
        // Taking stops the sampling.
        sampling.search(&root, &Limits::nodes(2000), &stop, &mut |_| {});
        assert!(sampling.take_leaf_samples().is_empty());
    }

    /// Each leaf line's label is what a fresh search of the leaf scores, its `classic` value
    /// the leaf's pattern value; the lines do not depend on the threads, and a second run
    /// skips the games already done.
    #[test]
    fn labels_are_fresh_searches_and_runs_resume() {
        let dir = tempfile::tempdir().unwrap();
        let input = write_games(dir.path(), 4);
        let one = dir.path().join("one.jsonl");
        let s = run(&input, &one, &cfg(1)).unwrap();
        assert_eq!((s.games, s.skipped), (4, 0));
        assert!(s.leaves >= 4, "{s:?}");
        let lines = read_lines(&one).unwrap();
        assert_eq!(lines.len(), s.leaves);
        check_labels(&lines, &[]);
        // Two threads write the same lines (games may come in another order).
        let two = dir.path().join("two.jsonl");
        run(&input, &two, &cfg(2)).unwrap();
        let key = |v: Vec<GameLine>| {
            let mut t: Vec<String> = v
                .iter()
                .map(|l| serde_json::to_string(l).unwrap())
                .collect();
            t.sort();
            t
        };
        assert_eq!(key(read_lines(&two).unwrap()), key(lines.clone()));
        // Resumed: nothing new.
        let again = run(&input, &one, &cfg(1)).unwrap();
        assert_eq!((again.skipped, again.leaves), (4, 0));
        assert_eq!(read_lines(&one).unwrap().len(), lines.len());
        // Another label budget is another setting: refused, the file untouched.
        let other = LeafConfig {
            label_nodes: 700,
            ..cfg(1)
        };
        assert!(run(&input, &one, &other).is_err());
        assert_eq!(read_lines(&one).unwrap().len(), lines.len());
        // Skipping games: the lines of the others, and only theirs.
        let tail = dir.path().join("tail.jsonl");
        let skip = LeafConfig {
            skip_games: 2,
            max_games: Some(1),
            ..cfg(1)
        };
        let s = run(&input, &tail, &skip).unwrap();
        assert_eq!(s.games, 1);
        let want: Vec<GameLine> = lines.iter().filter(|l| l.index == 2).cloned().collect();
        assert!(!want.is_empty());
        assert_eq!(key(read_lines(&tail).unwrap()), key(want));
    }

    /// With a network, both searches evaluate with it: the labels are fresh searches with
    /// the network, and the data is not the pattern evaluation's.
    #[test]
    fn searches_use_the_given_network() {
        let Some(net) = crate::search::gomoku::learn::evalnet::shipped()
            .into_iter()
            .find(|n| n.rule() == Rule::Freestyle)
        else {
            panic!("the freestyle eval net is shipped in weights/");
        };
        let dir = tempfile::tempdir().unwrap();
        let input = write_games(dir.path(), 3);
        let (plain, netted) = (dir.path().join("plain.jsonl"), dir.path().join("net.jsonl"));
        run(&input, &plain, &cfg(1)).unwrap();
        let with_net = LeafConfig {
            nets: vec![net.clone()],
            ..cfg(1)
        };
        run(&input, &netted, &with_net).unwrap();
        let lines = read_lines(&netted).unwrap();
        assert!(!lines.is_empty());
        check_labels(&lines, &[net]);
        assert_ne!(read_lines(&plain).unwrap(), lines);
    }
}
