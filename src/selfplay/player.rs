//! Gomoku self-play games played by our alpha-beta player ("pcn",
//! [`crate::search::gomoku::alphabeta`]) instead of the PCN self-play search
//! (`pcn selfplay --game gomoku --mover player`; docs/training.md).
//!
//! Why: a few-simulation MCTS without a network plays near-random Gomoku whose games end in
//! quick, uninstructive wins, while the alpha-beta player at a few thousand nodes a move
//! already plays sound tactics. Its games give the same records as the MCTS self-play: the
//! value and proof-cost labels come from the finished game ([`super::label`]); the policy
//! target is the player's move, one-hot (the player keeps no root move scores).
//!
//! Opening diversity: the first moves, as many as [`PlayerConfig::random_plies`] gives for
//! the game (a fixed number, or one drawn per game from a range), are drawn uniformly from
//! the legal moves within [`OPENING_RADIUS`] of the centre (seeded by the game index); they
//! are no policy target. After them each move is the player's at a fixed node budget, from a
//! fresh single-threaded player per game, so a game is a function of the seed and its index.
//! Each searched move keeps the player's root score ([`PlayedGame::scores`]); a move the
//! player names without a search (the one block of a four: its result then has one node, no
//! proof and score 0, which is no evaluation) keeps none.

use std::sync::atomic::AtomicBool;

use std::ops::RangeInclusive;

use super::{drive_game, game_seed, Choice, Config, PlayedGame};
use crate::game::gomoku::Gomoku;
use crate::game::{Game, Move};
use crate::search::gomoku::alphabeta::AlphaBeta;
use crate::search::{Limits, Searcher};
use crate::util::Rng;

/// Chebyshev distance from the centre within which the random opening moves are drawn.
pub const OPENING_RADIUS: usize = 3;

/// Table memory of each game's player: a few thousand nodes a move fill a fraction of it,
/// and a small table keeps many parallel games cheap.
const PLAYER_MEMORY: usize = 16 << 20;

/// Settings of the player move source.
#[derive(Clone, Debug)]
pub struct PlayerConfig {
    /// Nodes of the player's search per move.
    pub nodes: u64,
    /// Opening moves drawn at random near the centre: game `i` draws its number uniformly
    /// from this range, seeded by the base seed and `i` (a single value: always that many).
    pub random_plies: RangeInclusive<usize>,
    /// After the opening, the chance of each move that the player would search being a
    /// random legal move next to a stone instead (no score): the position after it is one a
    /// search meets at its leaves but a player never plays into, scored by the opponent's
    /// search (the eval net's off-line positions). 0: none, the games as before.
    pub mistakes: f64,
}

impl PlayerConfig {
    /// The number of random opening moves of game `index` under base seed `seed`. Drawn from
    /// its own generator, so that a fixed number leaves the game's move draws as they were.
    pub fn random_plies_of(&self, seed: u64, index: u32) -> usize {
        let (lo, hi) = (*self.random_plies.start(), *self.random_plies.end());
        if hi <= lo {
            return lo;
        }
        let mut r = Rng::new(game_seed(seed, index) ^ 0x0BE4_1A6F_5EED_D1CE);
        lo + r.below(hi - lo + 1)
    }
}

/// The legal moves within `radius` of the centre (all legal moves when none is).
fn near_centre(g: &Gomoku, legal: &[Move], radius: usize) -> Vec<Move> {
    let (w, h) = (g.width(), g.height());
    let (cx, cy) = (w / 2, h / 2);
    let near: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|&m| {
            let (x, y) = (m as usize % w, m as usize / w);
            x.abs_diff(cx) <= radius && y.abs_diff(cy) <= radius
        })
        .collect();
    if near.is_empty() {
        legal.to_vec()
    } else {
        near
    }
}

/// Plays game `index` from `start` with the alpha-beta player; labels as
/// [`super::play_game`] (`cfg`'s `max_plies`, `bins`, `seed`; its search settings are
/// unused).
pub fn play_game(
    start: &Gomoku,
    cfg: &Config,
    pcfg: &PlayerConfig,
    index: u32,
) -> Result<PlayedGame, String> {
    let mut player = AlphaBeta::new();
    player.set_memory(PLAYER_MEMORY);
    player.set_threads(1);
    let stop = AtomicBool::new(false);
    let limits = Limits::nodes(pcfg.nodes.max(1));
    let actions = start.num_actions();
    let random_plies = pcfg.random_plies_of(cfg.seed, index);
    drive_game(start, cfg, index, |g, legal, ply, rng| {
        let mut policy = vec![0.0f32; actions];
        // A random move, in the opening or as a mistake: no target (the flag says so) and no
        // score; the record still needs a distribution.
        let pool: Vec<Move> = if ply < random_plies {
            near_centre(g, legal, OPENING_RADIUS)
        } else if pcfg.mistakes > 0.0 && rng.unit() < pcfg.mistakes {
            legal
                .iter()
                .copied()
                .filter(|&m| g.near_stone(g.cell_of(m)))
                .collect()
        } else {
            Vec::new()
        };
        if !pool.is_empty() {
            let p = 1.0 / legal.len() as f32;
            legal.iter().for_each(|&m| policy[m as usize] = p);
            return Ok(Choice {
                mv: pool[rng.below(pool.len())],
                policy,
                full: false,
                root_cost: f32::NAN,
                score: None,
            });
        }
        let r = player.search(g, &limits, &stop, &mut |_| {});
        // The player only fails to name a move where none is legal (never asked here), but
        // a missing or illegal answer is an error, never a panic.
        let mv = r
            .best
            .filter(|m| legal.contains(m))
            .ok_or_else(|| format!("game {index}: the player gave no legal move"))?;
        policy[mv as usize] = 1.0;
        Ok(Choice {
            mv,
            policy,
            full: true,
            root_cost: f32::NAN,
            score: (r.nodes > 1 || r.proven.is_some()).then_some(r.score),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::record::FLAG_FULL_SEARCH;
    use super::*;
    use crate::game::gomoku::Rule;
    use crate::game::Color;

    fn cfg() -> Config {
        Config {
            games: 1,
            sims: 1,
            fast_sims: 1,
            full_prob: 0.0,
            temp_plies: 0,
            max_plies: 225,
            bins: 500,
            proof: Color::Black,
            dirichlet_alpha: 0.0,
            seed: 11,
            parallel: 1,
            net: None,
            progress: false,
        }
    }

    /// Whether the opponent of the side to move has a point that makes five on this 15x15
    /// board: the block the player plays without a search.
    fn four_to_block(g: &Gomoku) -> bool {
        let opp = g.to_move().opp();
        (0..225).any(|p: Move| g.stone(p).is_none() && g.makes_five(g.cell_of(p), opp))
    }

    /// The random opening stays near the centre and is no policy target; the player's moves
    /// are one-hot targets; the same seed replays the same game.
    #[test]
    fn player_game_is_seeded_and_targets_its_moves() {
        let start = Gomoku::new(15, 15, Rule::FourT).unwrap();
        let p = PlayerConfig {
            nodes: 300,
            random_plies: 3..=3,
            mistakes: 0.0,
        };
        let a = play_game(&start, &cfg(), &p, 5).unwrap();
        let b = play_game(&start, &cfg(), &p, 5).unwrap();
        assert_eq!(a.moves, b.moves);
        assert_eq!(a.records.len(), a.moves.len());
        assert!(a.moves.len() > 3);
        for (t, (r, &m)) in a.records.iter().zip(&a.moves).enumerate() {
            let (x, y) = (m as usize % 15, m as usize / 15);
            if t < 3 {
                assert!(x.abs_diff(7) <= OPENING_RADIUS && y.abs_diff(7) <= OPENING_RADIUS);
                assert_eq!(r.flags & FLAG_FULL_SEARCH, 0);
            } else {
                assert!(r.flags & FLAG_FULL_SEARCH != 0);
                assert_eq!(r.policy[m as usize], 1.0);
                assert_eq!(r.policy.iter().sum::<f32>(), 1.0);
            }
        }
        let c = play_game(&start, &cfg(), &p, 6).unwrap();
        assert_ne!(a.moves, c.moves, "another index, another opening");
        // No score on the random opening; after it, none only for the block of a four.
        assert_eq!(a.scores.len(), a.moves.len());
        assert!(a.scores[..3].iter().all(Option::is_none));
        let mut g = start.clone();
        for (t, &m) in a.moves.iter().enumerate() {
            if t >= 3 && a.scores[t].is_none() {
                assert!(four_to_block(&g), "ply {t}");
            }
            g.play_unchecked(m);
        }
        assert!(a.scores[3..].iter().any(Option::is_some));
    }

    /// A range of random plies gives each game its own number, from the seed and the index
    /// only, and covers the range.
    #[test]
    fn random_plies_vary_per_game() {
        let p = PlayerConfig {
            nodes: 1,
            random_plies: 2..=8,
            mistakes: 0.0,
        };
        let n: Vec<usize> = (0..200).map(|i| p.random_plies_of(5, i)).collect();
        assert!(n.iter().all(|k| (2..=8).contains(k)));
        assert!((2..=8).all(|k| n.contains(&k)));
        assert_eq!(
            n,
            (0..200)
                .map(|i| p.random_plies_of(5, i))
                .collect::<Vec<_>>()
        );
        let fixed = PlayerConfig {
            nodes: 1,
            random_plies: 4..=4,
            mistakes: 0.0,
        };
        assert!((0..50).all(|i| fixed.random_plies_of(5, i) == 4));
    }

    /// Mistakes: after the opening some moves are random points next to a stone, without a
    /// score and without a four to block; the same seed gives the same game.
    #[test]
    fn mistakes_are_unscored_moves_next_to_stones() {
        let start = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let p = PlayerConfig {
            nodes: 300,
            random_plies: 2..=2,
            mistakes: 0.5,
        };
        let a = play_game(&start, &cfg(), &p, 3).unwrap();
        assert_eq!(a.moves, play_game(&start, &cfg(), &p, 3).unwrap().moves);
        let mut g = start.clone();
        let mut mistakes = 0;
        for (t, &m) in a.moves.iter().enumerate() {
            if t >= 2 && a.scores[t].is_none() && !four_to_block(&g) {
                assert!(g.near_stone(g.cell_of(m)), "ply {t}");
                mistakes += 1;
            }
            g.play_unchecked(m);
        }
        assert!(mistakes > 0, "{:?}", a.scores);
        assert!(a.scores[2..].iter().any(Option::is_some));
    }
}
