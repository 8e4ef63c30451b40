//! The greedy pattern scorer: the Gomoku seed's first baseline. It looks one ply ahead and
//! plays the point with the largest attack + defence pattern score.

use std::sync::atomic::AtomicBool;

use super::{Limits, SearchEvent, SearchResult, Searcher};
use crate::game::gomoku::{Gomoku, Pattern};
use crate::game::{Color, Game};

/// Per-direction value of a pattern, indexed by `Pattern as usize`.
const WEIGHT: [i32; 11] = [0, 0, 1, 3, 6, 20, 30, 100, 120, 2_000, 100_000];

/// Score of the empty `cell` for `color`: the sum of its four direction patterns' weights,
/// with bonuses for the combinations that win by force (double four, four-three, three-three).
pub fn cell_score(g: &Gomoku, cell: usize, color: Color) -> i32 {
    score_of_patterns(&g.patterns(cell, color))
}

/// [`cell_score`] of a point from its four direction patterns.
pub fn score_of_patterns(pats: &[Pattern; 4]) -> i32 {
    let mut s: i32 = pats.iter().map(|&p| WEIGHT[p as usize]).sum();
    let fours = pats
        .iter()
        .filter(|&&p| p == Pattern::B4 || p == Pattern::F4)
        .count();
    let threes = pats.iter().filter(|&&p| p == Pattern::F3).count();
    if fours >= 2 {
        s += 1_500;
    } else if fours == 1 && threes >= 1 {
        s += 1_000;
    } else if threes >= 2 {
        s += 400;
    }
    s
}

/// Empty padded cells within distance 2 of a stone (the centre on an empty board), excluding
/// Black's renju-forbidden points when Black is to move. Clears and fills `out`.
pub fn candidates(g: &Gomoku, out: &mut Vec<usize>) {
    out.clear();
    if let Some(m) = g.forced_point() {
        out.push(g.cell_of(m));
        return;
    }
    let range = g.cell_range();
    if g.stones() == 0 {
        out.push(g.cell_of(g.centre()));
        return;
    }
    let mut mark = vec![false; range.end];
    let deltas = [g.delta(0), g.delta(1), g.delta(2), g.delta(3)];
    for (cell, _) in g.history_cells() {
        for &d in &deltas {
            for k in [-2isize, -1, 1, 2] {
                let q = (cell as isize + k * d) as usize;
                if q < range.end
                    && !mark[q]
                    && g.cell_value(q) == crate::game::gomoku::pattern::EMPTY
                {
                    mark[q] = true;
                    out.push(q);
                }
            }
        }
    }
    out.sort_unstable();
    if g.to_move() == Color::Black {
        out.retain(|&c| !g.is_forbidden(c));
    }
}

/// The greedy reference player.
#[derive(Debug, Default)]
pub struct Greedy;

impl Searcher<Gomoku> for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }

    fn search(
        &mut self,
        game: &Gomoku,
        _limits: &Limits,
        _stop: &AtomicBool,
        _on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let me = game.to_move();
        let mut cells = Vec::new();
        candidates(game, &mut cells);
        let mut best: Option<(i32, usize)> = None;
        for &c in &cells {
            let s = cell_score(game, c, me) * 10 + cell_score(game, c, me.opp()) * 9;
            if best.is_none_or(|(bs, _)| s > bs) {
                best = Some((s, c));
            }
        }
        let best_move = best.map(|(_, c)| game.move_of(c)).or_else(|| {
            let mut legal = Vec::new();
            game.legal_moves(&mut legal);
            legal.first().copied()
        });
        SearchResult {
            best: best_move,
            score: best.map_or(0, |(s, _)| s),
            proven: None,
            nodes: cells.len() as u64,
            pv: best_move.into_iter().collect(),
        }
    }
}

/// The ranking score of the solvers' threat priors and the pattern policy's teacher of a point from the side to move's pattern score `sm`
/// there and the opponent's `so`: own threats count a little more than blocking the
/// opponent's.
#[inline]
pub fn attack_defence(sm: i32, so: i32) -> f32 {
    sm as f32 * 1.2 + so as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::Rule;

    fn play(g: &mut Gomoku, moves: &[&str]) {
        for s in moves {
            let m = g.parse_gtp(s).unwrap();
            g.play(m).unwrap();
        }
    }

    fn greedy_move(g: &Gomoku) -> String {
        let stop = AtomicBool::new(false);
        let r = Greedy.search(g, &Limits::default(), &stop, &mut |_| {});
        g.move_to_gtp(r.best.unwrap())
    }

    #[test]
    fn wins_and_blocks() {
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        play(&mut g, &["H8", "A1", "J8", "A2", "K8", "A3", "L8", "A4"]);
        let m = greedy_move(&g);
        assert!(m == "G8" || m == "M8", "wins with five, got {m}");
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        play(&mut g, &["H8", "A1", "J8", "A2", "K8", "A3", "O15", "A4"]);
        assert_eq!(greedy_move(&g), "A5", "blocks the four");
        assert_eq!(
            greedy_move(&Gomoku::new(15, 15, Rule::Freestyle).unwrap()),
            "H8"
        );
    }
}
