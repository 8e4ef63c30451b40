//! Match runner: plays games between two named Gomoku searchers from random balanced
//! openings and summarises the result (W/D/L, score, Elo difference with a 95% error bar).
//!
//! Each opening (a few random stones near the centre, from a seed) is played twice with the
//! colours swapped, so deterministic players do not repeat games and neither side profits
//! from a lopsided opening. Games are adjudicated by the rules; an illegal move, no move, or
//! a move later than the time limit plus the margin loses for the side that made it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Color, Game, Move, Outcome};
use crate::search::gomoku::alphabeta::AlphaBeta;
use crate::search::registry::gomoku_searcher;
use crate::search::{Limits, Searcher};
use crate::util::Rng;

/// Settings of a match.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Registry name of player A.
    pub a: String,
    /// Registry name of player B.
    pub b: String,
    /// Number of games (rounded up to even so every opening is played with both colours).
    pub games: usize,
    /// Time per move; `None` when only a node budget is used.
    pub time: Option<Duration>,
    /// Node budget per move.
    pub nodes: Option<u64>,
    /// Grace added to the time limit before a move counts as too late.
    pub margin: Duration,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// Rule set.
    pub rule: Rule,
    /// Seed of the openings.
    pub seed: u64,
    /// Opening stones: a random count in this range (inclusive).
    pub opening_stones: (usize, usize),
    /// Games played at once (threads).
    pub concurrency: usize,
    /// Table memory of each player in bytes.
    pub memory: usize,
}

/// Why a match could not run.
#[derive(Debug, Error)]
pub enum ArenaError {
    /// A player name is not in the registry.
    #[error("unknown player '{0}'")]
    UnknownPlayer(String),
    /// The board size is out of range.
    #[error(transparent)]
    Size(#[from] crate::game::gomoku::SizeError),
}

/// How one game ended, from player A's view.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// A won.
    AWin,
    /// Draw.
    Draw,
    /// B won.
    BWin,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// Game number (0-based).
    pub index: usize,
    /// A's colour.
    pub a_color: Color,
    /// Result from A's view.
    pub result: GameResult,
    /// Why it ended (`five`, `full board`, `illegal move by A`, `time forfeit by B`, ...).
    pub reason: String,
    /// All moves, opening included, as GTP text.
    pub moves: Vec<String>,
    /// Number of opening stones among `moves`.
    pub opening: usize,
}

/// Totals of a match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// A's wins.
    pub wins: usize,
    /// Draws.
    pub draws: usize,
    /// A's losses.
    pub losses: usize,
    /// Finished opening pairs (games `2k` and `2k + 1` play opening `k` with the colours
    /// swapped) by A's points in the pair: index `i` counts pairs worth `i / 2` points
    /// (0, ½, 1, 1½, 2).
    pub pairs: [usize; 5],
    /// Pairs with one game finished: the pair's number and A's half-points in that game.
    pending: std::collections::BTreeMap<usize, usize>,
}

impl Summary {
    /// Counts game `index` (0-based; its pair is `index / 2`) with A's `result`.
    pub fn record(&mut self, index: usize, result: GameResult) {
        let half = match result {
            GameResult::AWin => {
                self.wins += 1;
                2
            }
            GameResult::Draw => {
                self.draws += 1;
                1
            }
            GameResult::BWin => {
                self.losses += 1;
                0
            }
        };
        match self.pending.remove(&(index / 2)) {
            Some(first) => self.pairs[first + half] += 1,
            None => {
                self.pending.insert(index / 2, half);
            }
        }
    }

    /// Games counted.
    pub fn games(&self) -> usize {
        self.wins + self.draws + self.losses
    }

    /// A's score fraction (0..=1).
    pub fn score(&self) -> f64 {
        let n = self.games().max(1) as f64;
        (self.wins as f64 + 0.5 * self.draws as f64) / n
    }

    /// Elo difference A - B and the half-width of its 95% interval (normal approximation
    /// on the per-game scores). Infinite when one side scored everything.
    pub fn elo(&self) -> (f64, f64) {
        // Scores per game, each with its count: 1 for a win, ½ for a draw, 0 for a loss.
        elo_interval(&[(1.0, self.wins), (0.5, self.draws), (0.0, self.losses)])
            .unwrap_or((0.0, f64::INFINITY))
    }

    /// Elo difference A - B and the half-width of its 95% interval from the finished
    /// opening pairs (pentanomial: the normal approximation on the pair means), `None`
    /// without a finished pair. Where an opening decides its games for whichever side holds
    /// it, the two games of a pair split 1-1 whoever is stronger and are not independent;
    /// the interval from the pairs is then the honest one (narrower than [`Self::elo`]'s).
    pub fn pair_elo(&self) -> Option<(f64, f64)> {
        let means: Vec<(f64, usize)> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, &c)| (i as f64 / 4.0, c))
            .collect();
        elo_interval(&means)
    }

    /// One-line summary; with finished opening pairs, their counts by A's points (0, ½, 1,
    /// 1½, 2) and the Elo from them follow.
    pub fn line(&self, a: &str, b: &str) -> String {
        let (elo, err) = self.elo();
        let mut line = format!(
            "Result {a} vs {b}: +{} ={} -{} ({} games), score {:.1}%, Elo {:+.0} +/- {:.0}",
            self.wins,
            self.draws,
            self.losses,
            self.games(),
            100.0 * self.score(),
            elo,
            err
        );
        if let Some((pe, perr)) = self.pair_elo() {
            let [p0, p1, p2, p3, p4] = self.pairs;
            line.push_str(&format!(
                "; pairs by {a}'s points 0/0.5/1/1.5/2: {p0}/{p1}/{p2}/{p3}/{p4}, Elo (pairs) {pe:+.0} +/- {perr:.0}"
            ));
        }
        line
    }
}

/// Elo of the mean of `samples` (score in 0..=1, count) and the half-width of its 95%
/// interval (normal approximation on the samples, mapped through the logistic curve);
/// infinite where the mean is 0 or 1, `None` without samples.
fn elo_interval(samples: &[(f64, usize)]) -> Option<(f64, f64)> {
    let n = samples.iter().map(|&(_, c)| c).sum::<usize>() as f64;
    if n == 0.0 {
        return None;
    }
    let p = samples.iter().map(|&(x, c)| x * c as f64).sum::<f64>() / n;
    if p <= 0.0 || p >= 1.0 {
        let e = if p >= 1.0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        return Some((e, f64::INFINITY));
    }
    let var = samples
        .iter()
        .map(|&(x, c)| c as f64 * (x - p) * (x - p))
        .sum::<f64>()
        / n;
    let se = (var / n).sqrt();
    let elo_of = |p: f64| -400.0 * (1.0 / p - 1.0).log10();
    let lo = (p - 1.96 * se).max(1e-6);
    let hi = (p + 1.96 * se).min(1.0 - 1e-6);
    Some((elo_of(p), (elo_of(hi) - elo_of(lo)) / 2.0))
}

/// Largest |score| (side to move's view, from a short search) of an accepted opening.
pub const BALANCE_LIMIT: i32 = 300;

/// The random opening of game pair `pair`: stones alternately Black/White within distance
/// 2 of the centre (3 on the first tries' failure), never a finished game. Among up to 64
/// random tries the first whose short-search score is within [`BALANCE_LIMIT`] is taken (else
/// the most balanced), so neither colour starts with a decisive edge.
pub fn opening(cfg: &MatchConfig, pair: usize) -> Result<Vec<Move>, ArenaError> {
    let mut rng = Rng::new(cfg.seed ^ (pair as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut best: Option<(i32, Vec<Move>)> = None;
    let stop = AtomicBool::new(false);
    let mut judge = AlphaBeta::new();
    judge.set_memory(1 << 20);
    let limits = Limits {
        time: None,
        nodes: Some(4000),
        depth: Some(3),
    };
    for _ in 0..64 {
        let moves = random_opening(cfg, &mut rng)?;
        let mut g = Gomoku::new(cfg.width, cfg.height, cfg.rule)?;
        for &m in &moves {
            g.play_unchecked(m);
        }
        judge.clear();
        let r = judge.search(&g, &limits, &stop, &mut |_| {});
        let s = r.score.abs();
        if s <= BALANCE_LIMIT {
            return Ok(moves);
        }
        if best.as_ref().is_none_or(|(b, _)| s < *b) {
            best = Some((s, moves));
        }
    }
    Ok(best.map(|(_, m)| m).unwrap_or_default())
}

fn random_opening(cfg: &MatchConfig, rng: &mut Rng) -> Result<Vec<Move>, ArenaError> {
    let (lo, hi) = cfg.opening_stones;
    let hi = hi.max(lo);
    let count = lo + rng.below(hi - lo + 1);
    let (w, h) = (cfg.width, cfg.height);
    let (cx, cy) = (w / 2, h / 2);
    let r = 2usize.min(cx).min(cy);
    let mut g = Gomoku::new(w, h, cfg.rule)?;
    let mut moves = Vec::new();
    let mut tries = 0;
    while moves.len() < count && tries < 1000 {
        tries += 1;
        let x = cx - r + rng.below(2 * r + 1);
        let y = cy - r + rng.below(2 * r + 1);
        let m = (y * w + x) as Move;
        if g.play(m).is_ok() {
            if g.outcome().is_some() {
                g.undo();
                continue;
            }
            moves.push(m);
        }
    }
    Ok(moves)
}

/// Plays one game; `a_black` says whether A has Black.
fn play_game(
    cfg: &MatchConfig,
    index: usize,
    players: &mut [Box<dyn Searcher<Gomoku>>; 2],
) -> Result<GameRecord, ArenaError> {
    let pair = index / 2;
    let a_color = if index.is_multiple_of(2) {
        Color::Black
    } else {
        Color::White
    };
    let open = opening(cfg, pair)?;
    let mut g = Gomoku::new(cfg.width, cfg.height, cfg.rule)?;
    for &m in &open {
        g.play_unchecked(m);
    }
    for p in players.iter_mut() {
        p.clear();
    }
    let limits = Limits {
        time: cfg.time,
        nodes: cfg.nodes,
        depth: None,
    };
    let stop = AtomicBool::new(false);
    let side_of = |c: Color| if c == a_color { 0 } else { 1 };
    let from_a = |winner_side: usize| {
        if winner_side == 0 {
            GameResult::AWin
        } else {
            GameResult::BWin
        }
    };
    let name = |s: usize| if s == 0 { "A" } else { "B" };
    let (result, reason) = loop {
        match g.outcome() {
            Some(Outcome::Win(c)) => break (from_a(side_of(c)), "five".to_string()),
            Some(Outcome::Draw) => break (GameResult::Draw, "full board".to_string()),
            None => {}
        }
        let side = side_of(g.to_move());
        let t0 = Instant::now();
        let r = players[side].search(&g, &limits, &stop, &mut |_| {});
        let took = t0.elapsed();
        if let Some(t) = cfg.time {
            if took > t + cfg.margin {
                break (
                    from_a(1 - side),
                    format!("time forfeit by {} ({} ms)", name(side), took.as_millis()),
                );
            }
        }
        match r.best {
            Some(m) if g.play(m).is_ok() => {}
            _ => break (from_a(1 - side), format!("illegal move by {}", name(side))),
        }
    };
    let moves: Vec<String> = g
        .history_cells()
        .map(|(c, _)| g.move_to_gtp(g.move_of(c)))
        .collect();
    Ok(GameRecord {
        index,
        a_color,
        result,
        reason,
        moves,
        opening: open.len(),
    })
}

/// Runs the match, calling `on_game` as each game finishes (in completion order).
pub fn run_match(
    cfg: &MatchConfig,
    on_game: &mut (dyn FnMut(&GameRecord, &Summary) + Send),
) -> Result<Summary, ArenaError> {
    for n in [&cfg.a, &cfg.b] {
        if gomoku_searcher(n).is_none() {
            return Err(ArenaError::UnknownPlayer(n.clone()));
        }
    }
    Gomoku::new(cfg.width, cfg.height, cfg.rule)?;
    let games = cfg.games.div_ceil(2) * 2;
    let next = AtomicUsize::new(0);
    let shared = Mutex::new((Summary::default(), on_game));
    let error: Mutex<Option<ArenaError>> = Mutex::new(None);
    let threads = cfg.concurrency.clamp(1, 64);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let (Some(pa), Some(pb)) = (gomoku_searcher(&cfg.a), gomoku_searcher(&cfg.b))
                else {
                    return;
                };
                let mut players = [pa, pb];
                for p in players.iter_mut() {
                    p.set_memory(cfg.memory);
                }
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= games {
                        break;
                    }
                    match play_game(cfg, i, &mut players) {
                        Ok(rec) => {
                            if let Ok(mut guard) = shared.lock() {
                                let (sum, cb) = &mut *guard;
                                sum.record(rec.index, rec.result);
                                cb(&rec, sum);
                            }
                        }
                        Err(e) => {
                            if let Ok(mut err) = error.lock() {
                                *err = Some(e);
                            }
                            break;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().ok().flatten() {
        return Err(e);
    }
    match shared.into_inner() {
        Ok((sum, _)) => Ok(sum),
        Err(p) => Ok(p.into_inner().0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_opening_pairs() {
        let mut s = Summary::default();
        // Finished out of order, as with several games at once.
        s.record(1, GameResult::BWin);
        s.record(0, GameResult::AWin); // pair 0: 1 point
        s.record(3, GameResult::AWin);
        s.record(4, GameResult::Draw);
        s.record(2, GameResult::AWin); // pair 1: 2 points
        s.record(5, GameResult::BWin); // pair 2: 0.5 points
        s.record(6, GameResult::AWin); // pair 3: unfinished
        assert_eq!((s.wins, s.draws, s.losses), (4, 1, 2));
        assert_eq!(s.pairs, [0, 1, 1, 0, 1]);
        let means = [0.5, 1.0, 0.25];
        let p: f64 = means.iter().sum::<f64>() / 3.0;
        let var = means.iter().map(|x| (x - p) * (x - p)).sum::<f64>() / 3.0;
        let se = (var / 3.0).sqrt();
        let elo = |p: f64| -400.0 * (1.0 / p - 1.0).log10();
        let (e, err) = s.pair_elo().expect("three pairs");
        assert!((e - elo(p)).abs() < 1e-9, "{e}");
        let want = (elo(p + 1.96 * se) - elo(p - 1.96 * se)) / 2.0;
        assert!((err - want).abs() < 1e-9, "{err} against {want}");
        let line = s.line("x", "y");
        assert!(
            line.ends_with(&format!(
                "; pairs by x's points 0/0.5/1/1.5/2: 0/1/1/0/1, Elo (pairs) {:+.0} +/- {:.0}",
                elo(p),
                want
            )),
            "{line}"
        );
    }

    #[test]
    fn split_pairs_give_the_narrower_interval() {
        // Ten openings each won by whoever held the better side, one swept by A.
        let mut s = Summary::default();
        for k in 0..10 {
            s.record(2 * k, GameResult::AWin);
            s.record(2 * k + 1, GameResult::BWin);
        }
        s.record(20, GameResult::AWin);
        s.record(21, GameResult::AWin);
        let (_, per_game) = s.elo();
        let (_, per_pair) = s.pair_elo().expect("pairs");
        assert!(per_pair < per_game, "{per_pair} against {per_game}");
        assert_eq!(Summary::default().pair_elo(), None);
        assert!(!Summary::default().line("x", "y").contains("pairs"));
    }
}
