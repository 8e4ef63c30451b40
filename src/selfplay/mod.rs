//! Self-play data for proof cost networks (`pcn selfplay`; docs/training.md).
//!
//! It uses [`crate::game`], [`crate::nn`], [`crate::sgf`] and [`crate::search`] (the Gomoku
//! player of [`player`]); it is lower than [`crate::cli`]. Games are played by the PCN self-play
//! search of [`mcts`] (the OR player prefers small proof costs, the AND player large ones,
//! Dirichlet noise at the root), several games at once so that a
//! [`crate::nn::eval::BatchingEvaluator`] can batch their network calls. Each game is seeded
//! by its index, and a game's records are appended in one write, so an interrupted run
//! resumes by skipping the indices already in the file.
//!
//! Few simulations per move: playout cap randomisation (Wu, KataGo): a share of the moves
//! (`full_prob`) gets a full search with noise whose visit counts become the policy target;
//! the others a fast search without noise whose visit counts are no target. Every position
//! still gets the value and proof-cost targets, which come from the game's result.
//!
//! Gomoku games may instead be played by our alpha-beta player ([`player`]), whose moves
//! are the policy targets; the records and labels are the same. Its games can also be
//! written as JSON lines with the player's root scores ([`gamelog`], the eval net's data).

pub mod gamelog;
pub mod label;
pub mod leaves;
pub mod mcts;
pub mod player;
pub mod record;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::game::{Color, Game, Move, Outcome};
use crate::nn::Evaluator;
use crate::util::Rng;

use gamelog::GameLog;
use label::{outcome_value, proof_costs};
use mcts::{search, Leaf, SearchParams};
use record::{Header, Record, RecordWriter, FLAG_FULL_SEARCH, FLAG_LAST, FLAG_NO_WINNER};

/// Self-play settings.
#[derive(Clone)]
pub struct Config {
    /// Games to have in the file (indices `0..games`; done ones are skipped).
    pub games: usize,
    /// Simulations of a full search.
    pub sims: usize,
    /// Simulations of a fast search.
    pub fast_sims: usize,
    /// Probability of a full search per move.
    pub full_prob: f64,
    /// Moves chosen in proportion to visits for this many plies, then the most visited.
    pub temp_plies: usize,
    /// Games longer than this end without a winner (flagged; trainers drop them).
    pub max_plies: usize,
    /// Bins per head.
    pub bins: usize,
    /// The OR player of the search.
    pub proof: Color,
    /// Dirichlet α at the root of full searches.
    pub dirichlet_alpha: f64,
    /// Base seed; game `i` uses a seed derived from it and `i`.
    pub seed: u64,
    /// Games played at once (threads).
    pub parallel: usize,
    /// Network (`None`: iteration 0, uniform priors).
    pub net: Option<Arc<dyn Evaluator>>,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// Its index.
    pub index: u32,
    /// The records, one per position before each ply.
    pub records: Vec<Record>,
    /// The moves.
    pub moves: Vec<Move>,
    /// The winner (`None`: draw or ply cap).
    pub winner: Option<Color>,
    /// The mover's root score before each move, from the side to move's view (`None`: no
    /// search chose it: a random opening move, a single legal move, or the MCTS mover).
    pub scores: Vec<Option<i32>>,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Games played in this run.
    pub games: usize,
    /// Games skipped (already in the file).
    pub skipped: usize,
    /// Positions written.
    pub positions: usize,
    /// Wins of Black, White; games without a winner.
    pub wins: [usize; 2],
    /// Games without a winner.
    pub no_winner: usize,
    /// Seconds.
    pub seconds: f64,
    /// Eval-set positions written.
    pub eval_positions: usize,
}

pub(crate) fn game_seed(seed: u64, i: u32) -> u64 {
    let mut r = Rng::new(seed ^ (u64::from(i) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    r.next_u64()
}

/// Plays game `index` from `start` with the PCN self-play search.
pub fn play_game<G: Game>(
    start: &G,
    cfg: &Config,
    index: u32,
    leaf: &mut Leaf,
) -> Result<PlayedGame, String> {
    let actions = start.num_actions();
    drive_game(start, cfg, index, |g, legal, ply, rng| {
        let full = rng.unit() < cfg.full_prob;
        let p = SearchParams {
            sims: if full { cfg.sims } else { cfg.fast_sims },
            proof: cfg.proof,
            bins: cfg.bins,
            dirichlet_alpha: if full { cfg.dirichlet_alpha } else { 0.0 },
            noise_frac: 0.25,
        };
        let r = search(g, &p, leaf, rng)?;
        let total: u32 = r.visits.iter().map(|v| v.1).sum();
        let mut policy = vec![0.0f32; actions];
        for &(m, v) in &r.visits {
            policy[m as usize] = v as f32 / total.max(1) as f32;
        }
        let mv = if ply < cfg.temp_plies && total > 0 {
            let mut x = rng.below(total as usize) as u32;
            let mut pick = r.visits[0].0;
            for &(m, v) in &r.visits {
                if x < v {
                    pick = m;
                    break;
                }
                x -= v;
            }
            pick
        } else {
            r.visits
                .iter()
                .max_by_key(|v| v.1)
                .map(|v| v.0)
                .unwrap_or(legal[0])
        };
        Ok(Choice {
            mv,
            policy,
            full,
            root_cost: r.root_cost,
            score: None,
        })
    })
}

/// One move of a self-play game with its policy target.
pub(crate) struct Choice {
    /// The move to play.
    pub mv: Move,
    /// The policy target: a distribution over the actions.
    pub policy: Vec<f32>,
    /// Whether the policy is a training target (the record's [`FLAG_FULL_SEARCH`]).
    pub full: bool,
    /// The search's root proof cost (NaN: none).
    pub root_cost: f32,
    /// The search's root score, side to move's view (`None`: none).
    pub score: Option<i32>,
}

/// Plays game `index` from `start` to its end or `cfg.max_plies`, whatever chooses the
/// moves: `choose(position, legal moves, ply, game rng)` picks each move where more than one
/// is legal (a single legal move is played with a one-hot target). One record per position,
/// labelled from the finished game ([`finish_game`]).
pub(crate) fn drive_game<G: Game>(
    start: &G,
    cfg: &Config,
    index: u32,
    mut choose: impl FnMut(&G, &[Move], usize, &mut Rng) -> Result<Choice, String>,
) -> Result<PlayedGame, String> {
    let mut rng = Rng::new(game_seed(cfg.seed, index));
    let mut g = start.clone();
    let actions = g.num_actions();
    let mut legal = Vec::new();
    let mut input = vec![0.0f32; g.input_planes() * g.width() * g.height()];
    let (mut recs, mut moves, mut scores) = (Vec::new(), Vec::new(), Vec::new());
    let (mut b_max, mut b_heur) = (Vec::new(), Vec::new());
    let mut no_winner = false;
    while g.outcome().is_none() {
        if moves.len() >= cfg.max_plies {
            no_winner = true;
            break;
        }
        g.legal_moves(&mut legal);
        if legal.is_empty() {
            no_winner = true;
            break;
        }
        g.encode_input(&mut input);
        let c = if legal.len() == 1 {
            let mut policy = vec![0.0f32; actions];
            policy[legal[0] as usize] = 1.0;
            Choice {
                mv: legal[0],
                policy,
                full: true,
                root_cost: f32::NAN,
                score: None,
            }
        } else {
            choose(&g, &legal, moves.len(), &mut rng)?
        };
        recs.push(Record {
            game: index,
            ply: moves.len().min(u16::MAX as usize) as u16,
            to_move: g.to_move().index() as u8,
            flags: if c.full { FLAG_FULL_SEARCH } else { 0 },
            z: 0.0,
            cost_max: [0.0; 2],
            cost_heur: [0.0; 2],
            root_cost: c.root_cost,
            planes: input.clone(),
            policy: c.policy,
        });
        b_max.push(actions as u32);
        b_heur.push(legal.len() as u32);
        g.play_unchecked(c.mv);
        moves.push(c.mv);
        scores.push(c.score);
    }
    let winner = match g.outcome() {
        Some(Outcome::Win(c)) if !no_winner => Some(c),
        _ => None,
    };
    let mut pg = finish_game(index, recs, &b_max, &b_heur, moves, winner, cfg.bins);
    pg.scores = scores;
    Ok(pg)
}

/// Fills in the labels that come from a finished game's result (the α0 value `z`, the
/// proof-cost targets with `b_max` and `b_heur`, the flags of its last record and of a game
/// without a winner) for whatever chose its moves; no scores (`PlayedGame::scores` all
/// `None`).
pub(crate) fn finish_game(
    index: u32,
    mut recs: Vec<Record>,
    b_max: &[u32],
    b_heur: &[u32],
    moves: Vec<Move>,
    winner: Option<Color>,
    bins: usize,
) -> PlayedGame {
    let cmax = proof_costs(b_max, winner, bins);
    let cheur = proof_costs(b_heur, winner, bins);
    let last = recs.len().saturating_sub(1);
    for (t, r) in recs.iter_mut().enumerate() {
        let to_move = if r.to_move == 0 {
            Color::Black
        } else {
            Color::White
        };
        r.z = outcome_value(winner, to_move);
        r.cost_max = [cmax[t].black, cmax[t].white];
        r.cost_heur = [cheur[t].black, cheur[t].white];
        if winner.is_none() {
            r.flags |= FLAG_NO_WINNER;
        }
        if t == last {
            r.flags |= FLAG_LAST;
        }
    }
    PlayedGame {
        index,
        records: recs,
        scores: vec![None; moves.len()],
        moves,
        winner,
    }
}

/// Eval-set settings: positions `back` plies before the end of games the OR player won.
#[derive(Clone, Debug)]
pub struct EvalSet {
    /// Directory for the SGF files (`<game index>.sgf`).
    pub dir: PathBuf,
    /// Plies before the end (odd, so that the winner is to move).
    pub back: usize,
}

/// The SGF main line of `moves` from the empty board (`GM[1]` Killall-Go with passes as
/// empty values, `GM[4]` Gomoku), with the result `RE`.
pub fn sgf_line<G: Game>(start: &G, moves: &[Move], winner: Option<Color>, gm: u32) -> String {
    let n = start.width();
    let h = start.height();
    let mut s = format!("(;FF[4]GM[{gm}]SZ[{n}]");
    if let Some(w) = winner {
        s.push_str(&format!("RE[{}+]", w.letter()));
    }
    let mut g = start.clone();
    for &m in moves {
        let c = g.to_move().letter();
        let v = if (m as usize) < n * h {
            crate::sgf::point_text(m as usize % n, m as usize / n, h)
        } else {
            String::new()
        };
        s.push_str(&format!(";{c}[{v}]"));
        g.play_unchecked(m);
    }
    s.push_str(")\n");
    s
}

/// Plays the missing games of `0..cfg.games`, appending them to `out` (when given) and
/// writing eval-set positions (when asked). `header` describes the file; `gm` is the SGF
/// game number.
pub fn run<G: Game + Sync>(
    start: &G,
    cfg: &Config,
    out: Option<&Path>,
    header: &Header,
    eval: Option<&EvalSet>,
    gm: u32,
) -> Result<Summary, String> {
    run_with(
        start,
        cfg,
        out,
        header,
        eval,
        gm,
        None,
        &|| Leaf::new(cfg.net.clone()),
        &|leaf: &mut Leaf, idx| play_game(start, cfg, idx, leaf),
    )
}

/// [`run`] with another move source: each of the `cfg.parallel` threads makes its state
/// with `make` and plays game `i` with `play(state, i)`; everything else (resuming, the
/// record file, the eval set, the summary) is [`run`]'s. `log` (when given) also receives
/// each game as a JSON line. A game is played when any of the files (`out`, `log`) lacks
/// it, and written only to those that lack it; with neither, every game is played.
#[allow(clippy::too_many_arguments)]
pub fn run_with<G: Game + Sync, S>(
    start: &G,
    cfg: &Config,
    out: Option<&Path>,
    header: &Header,
    eval: Option<&EvalSet>,
    gm: u32,
    log: Option<&GameLog>,
    make: &(dyn Fn() -> S + Sync),
    play: &(dyn Fn(&mut S, u32) -> Result<PlayedGame, String> + Sync),
) -> Result<Summary, String> {
    let t0 = Instant::now();
    let (writer, done) = match out {
        Some(p) => {
            let (w, d) = RecordWriter::open(p, header).map_err(|e| e.to_string())?;
            (Some(Mutex::new(w)), d)
        }
        None => (None, BTreeSet::new()),
    };
    if let Some(e) = eval {
        std::fs::create_dir_all(&e.dir).map_err(|err| format!("{}: {err}", e.dir.display()))?;
    }
    let missing = |i: u32| match (&writer, log) {
        (None, None) => true,
        (w, l) => (w.is_some() && !done.contains(&i)) || l.is_some_and(|l| !l.contains(i)),
    };
    let todo: Vec<u32> = (0..cfg.games as u32).filter(|&i| missing(i)).collect();
    let bar = if cfg.progress {
        let b = indicatif::ProgressBar::new(todo.len() as u64);
        if let Ok(st) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} games {per_sec} eta {eta} {msg}",
        ) {
            b.set_style(st.progress_chars("=> "));
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let summary = Mutex::new(Summary {
        skipped: cfg.games - todo.len(),
        ..Summary::default()
    });
    let first_err: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|sc| {
        for _ in 0..cfg.parallel.clamp(1, todo.len().max(1)) {
            sc.spawn(|| {
                let mut state = make();
                loop {
                    if first_err.lock().map(|e| e.is_some()).unwrap_or(true) {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&idx) = todo.get(k) else { return };
                    let res = play(&mut state, idx).and_then(|pg| {
                        if let Some(w) = writer.as_ref().filter(|_| !done.contains(&idx)) {
                            w.lock()
                                .map_err(|_| "record writer poisoned".to_string())?
                                .write_game(&pg.records)
                                .map_err(|e| e.to_string())?;
                        }
                        if let Some(l) = log.filter(|l| !l.contains(idx)) {
                            l.write(&pg).map_err(|e| e.to_string())?;
                        }
                        let mut wrote_eval = 0;
                        if let (Some(e), Some(w)) = (eval, pg.winner) {
                            let n = pg.moves.len();
                            if w == cfg.proof && n > e.back {
                                let cut = &pg.moves[..n - e.back];
                                let mut g = start.clone();
                                cut.iter().for_each(|&m| g.play_unchecked(m));
                                if g.to_move() == w {
                                    let text = sgf_line(start, cut, Some(w), gm);
                                    let p = e.dir.join(format!("{idx}.sgf"));
                                    std::fs::write(&p, text)
                                        .map_err(|err| format!("{}: {err}", p.display()))?;
                                    wrote_eval = 1;
                                }
                            }
                        }
                        Ok((pg, wrote_eval))
                    });
                    match res {
                        Ok((pg, ev)) => {
                            if let Ok(mut s) = summary.lock() {
                                s.games += 1;
                                s.positions += pg.records.len();
                                s.eval_positions += ev;
                                match pg.winner {
                                    Some(c) => s.wins[c.index()] += 1,
                                    None => s.no_winner += 1,
                                }
                                bar.set_message(format!(
                                    "B {} W {} none {}",
                                    s.wins[0], s.wins[1], s.no_winner
                                ));
                            }
                            bar.inc(1);
                        }
                        Err(e) => {
                            if let Ok(mut f) = first_err.lock() {
                                f.get_or_insert(e);
                            }
                        }
                    }
                }
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = first_err.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut s = summary
        .into_inner()
        .map_err(|_| "summary poisoned".to_string())?;
    s.seconds = t0.elapsed().as_secs_f64();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::killallgo::{KillallGo, Variant};

    fn cfg(games: usize) -> Config {
        Config {
            games,
            sims: 8,
            fast_sims: 4,
            full_prob: 0.5,
            temp_plies: 10,
            max_plies: 120,
            bins: 500,
            proof: Color::White,
            dirichlet_alpha: 0.2,
            seed: 7,
            parallel: 2,
            net: None,
            progress: false,
        }
    }

    /// A game's records carry the labels of `label::proof_costs` and end with FLAG_LAST; the
    /// same seed replays the same game.
    #[test]
    fn killallgo_game_records() {
        let start = KillallGo::new(Variant::Pcn9);
        let c = cfg(1);
        let a = play_game(&start, &c, 3, &mut Leaf::new(None)).unwrap();
        let b = play_game(&start, &c, 3, &mut Leaf::new(None)).unwrap();
        assert_eq!(a.moves, b.moves);
        assert_eq!(a.records.len(), a.moves.len());
        assert!(a.records.len() >= 7, "the forced opening is recorded");
        // Forced opening: one legal move, one-hot policy, b_heur = 1.
        assert_eq!(a.records[1].policy[81], 1.0);
        let last = a.records.last().unwrap();
        assert!(last.flags & FLAG_LAST != 0);
        assert!(a.records[..a.records.len() - 1]
            .iter()
            .all(|r| r.flags & FLAG_LAST == 0));
        if let Some(w) = a.winner {
            let i = w.index();
            assert!(last.cost_max[i] == 0.0 && last.cost_max[1 - i] == 499.0);
            // The first position's b_max label is log10(82) per loser ply.
            let loser_plies = a.moves.len() / 2;
            let want = (loser_plies as f32 * 82f32.log10()).min(499.0);
            assert!((a.records[0].cost_max[i] - want).abs() < 1e-3);
            assert_eq!(a.records[0].z, if i == 0 { 1.0 } else { -1.0 });
        }
    }

    #[test]
    fn run_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sp.rec");
        let start = KillallGo::new(Variant::Pcn9);
        let h = Header {
            format: record::FORMAT.into(),
            game: "killallgo".into(),
            rule: start.name(),
            board_size: 9,
            planes: 18,
            actions: 82,
            bins: 500,
            proof_color: "W".into(),
            record_bytes: Header::record_size(18, 9, 82),
        };
        let ev = EvalSet {
            dir: dir.path().join("eval"),
            back: 5,
        };
        let s = run(&start, &cfg(3), Some(&p), &h, Some(&ev), 1).unwrap();
        assert_eq!((s.games, s.skipped), (3, 0));
        let (_, recs) = record::read_all(&p).unwrap();
        assert_eq!(recs.len(), s.positions);
        let s2 = run(&start, &cfg(4), Some(&p), &h, None, 1).unwrap();
        assert_eq!((s2.games, s2.skipped), (1, 3));
        let games: BTreeSet<u32> = record::read_all(&p)
            .unwrap()
            .1
            .iter()
            .map(|r| r.game)
            .collect();
        assert_eq!(games.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        // Eval positions are SGF main lines the SGF reader accepts, the OR player to move.
        for e in std::fs::read_dir(&ev.dir).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            assert!(crate::sgf::GameTree::parse(&text).is_ok());
        }
    }
}
