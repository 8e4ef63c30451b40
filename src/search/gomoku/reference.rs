//! "ab4": the Gomoku RL seed paper's depth-4 min-max baseline. Plain negamax alpha-beta to a
//! fixed depth of four plies; at every node the candidate points (within distance two of a
//! stone) are sorted by the greedy attack + defence pattern score and only the best
//! [`AB4_WIDTH`] are tried; leaves get the same pattern-sum evaluation as the main player.
//! No iterative deepening, no table, no threat rules: a faithful, simple baseline.
//! It ignores time and node limits (depth 4 is the whole point) but honours the stop flag.

use std::sync::atomic::{AtomicBool, Ordering};

use super::alphabeta::{near_stone, static_eval, WIN};
use super::greedy::cell_score;
use super::{Limits, SearchEvent, SearchResult, Searcher};
use crate::game::gomoku::pattern::EMPTY;
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Color, Game, Move, Outcome};

/// Search depth in plies.
pub const AB4_DEPTH: u32 = 4;
/// Candidates tried per node (the best by pattern score).
pub const AB4_WIDTH: usize = 12;

/// The depth-4 reference player.
#[derive(Debug, Default)]
pub struct Ab4 {
    nodes: u64,
    stopped: bool,
}

/// Candidate cells sorted by greedy score (best first) and the pattern sums for evaluation.
fn ordered(g: &Gomoku) -> (Vec<usize>, i32, i32) {
    let me = g.to_move();
    let renju_black = g.rule() == Rule::Renju && me == Color::Black;
    let mut v: Vec<(i32, usize)> = Vec::with_capacity(64);
    let (mut sa, mut sb) = (0, 0);
    if let Some(f) = g.forced_point() {
        return (vec![g.cell_of(f)], 0, 0);
    }
    let w = g.width();
    for y in 0..g.height() {
        let row = g.cell_of((y * w) as Move);
        for cell in row..row + w {
            if g.cell_value(cell) != EMPTY || !near_stone(g, cell) {
                continue;
            }
            let a = cell_score(g, cell, me);
            let b = cell_score(g, cell, me.opp());
            sa += a;
            sb += b;
            if renju_black && g.is_forbidden(cell) {
                continue;
            }
            v.push((a * 10 + b * 9, cell));
        }
    }
    v.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    v.truncate(AB4_WIDTH);
    (v.into_iter().map(|(_, c)| c).collect(), sa, sb)
}

impl Ab4 {
    fn negamax(
        &mut self,
        g: &mut Gomoku,
        stop: &AtomicBool,
        depth: u32,
        mut alpha: i32,
        beta: i32,
        ply: i32,
    ) -> i32 {
        self.nodes += 1;
        if self.nodes & 1023 == 0 && stop.load(Ordering::Relaxed) {
            self.stopped = true;
        }
        if self.stopped {
            return 0;
        }
        let (cells, sa, sb) = ordered(g);
        if depth == 0 || cells.is_empty() {
            return static_eval(sa, sb);
        }
        let mut best = -WIN;
        for c in cells {
            g.play_unchecked(g.move_of(c));
            let s = match g.outcome() {
                Some(Outcome::Win(_)) => WIN - ply - 1,
                Some(Outcome::Draw) => 0,
                None => -self.negamax(g, stop, depth - 1, -beta, -alpha, ply + 1),
            };
            g.undo();
            if s > best {
                best = s;
                alpha = alpha.max(s);
                if alpha >= beta {
                    break;
                }
            }
        }
        best
    }
}

impl Searcher<Gomoku> for Ab4 {
    fn name(&self) -> &'static str {
        "ab4"
    }

    fn search(
        &mut self,
        game: &Gomoku,
        _limits: &Limits,
        stop: &AtomicBool,
        _on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let mut g = game.clone();
        self.nodes = 0;
        self.stopped = false;
        if g.outcome().is_some() {
            return SearchResult::default();
        }
        if g.stones() == 0 {
            let m = g.centre();
            return SearchResult {
                best: Some(m),
                nodes: 1,
                pv: vec![m],
                ..SearchResult::default()
            };
        }
        let (cells, _, _) = ordered(&g);
        let mut best: Option<(i32, usize)> = None;
        let mut alpha = -WIN;
        for c in cells {
            g.play_unchecked(g.move_of(c));
            let s = match g.outcome() {
                Some(Outcome::Win(_)) => WIN - 1,
                Some(Outcome::Draw) => 0,
                None => -self.negamax(&mut g, stop, AB4_DEPTH - 1, -WIN, -alpha, 1),
            };
            g.undo();
            if self.stopped {
                break;
            }
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, c));
                alpha = alpha.max(s);
            }
        }
        let best_move = match best {
            Some((_, c)) => Some(g.move_of(c)),
            None => {
                let mut legal = Vec::new();
                g.legal_moves(&mut legal);
                legal.first().copied()
            }
        };
        SearchResult {
            best: best_move,
            score: best.map_or(0, |(s, _)| s),
            proven: None,
            nodes: self.nodes,
            pv: best_move.into_iter().collect(),
        }
    }
}
