//! Search tasks behind the Gomocup extensions that need more than one search: `YXNBEST`
//! (multi-PV by searching each candidate's reply) and `SWAP2BOARD` (opening choice and the
//! swap decision). They run on the engine's search thread with the configured searcher.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::game::gomoku::Gomoku;
use crate::game::{Game, Move, Outcome};
use crate::search::gomoku::greedy::{candidates, cell_score};
use crate::search::{Limits, SearchEvent, SearchResult, Searcher};

/// Score given to a move that wins at once.
pub const WIN_SCORE: i32 = 1_000_000;

/// Divides a budget over `k` searches (at least one node / millisecond each).
fn split(limits: &Limits, k: usize) -> Limits {
    let k = k.max(1);
    Limits {
        time: limits
            .time
            .map(|t| (t / k as u32).max(std::time::Duration::from_millis(1))),
        nodes: limits.nodes.map(|n| (n / k as u64).max(1)),
        depth: limits.depth,
    }
}

/// The candidate moves of `game`, best greedy score first (ties by action index).
pub fn ordered_candidates(game: &Gomoku) -> Vec<Move> {
    let me = game.to_move();
    let mut cells = Vec::new();
    candidates(game, &mut cells);
    let mut scored: Vec<(i32, Move)> = cells
        .iter()
        .map(|&c| {
            let s = cell_score(game, c, me) * 10 + cell_score(game, c, me.opp()) * 9;
            (s, game.move_of(c))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, m)| m).collect()
}

/// Multi-PV: for up to `max(n + 4, 8)` candidates, plays the move and searches the reply;
/// each candidate is reported as a [`SearchEvent::Info`] (score from the mover's view, PV
/// starting with the candidate). Returns the best.
pub fn nbest(
    n: usize,
    s: &mut dyn Searcher<Gomoku>,
    game: &Gomoku,
    limits: &Limits,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&SearchEvent),
) -> SearchResult {
    let start = Instant::now();
    let me = game.to_move();
    let mut cands = ordered_candidates(game);
    cands.truncate((n + 4).max(8));
    let sub = split(limits, cands.len());
    let mut best = SearchResult::default();
    let mut nodes = 0u64;
    for (i, &m) in cands.iter().enumerate() {
        // The first candidate is always scored, so there is an answer even when stopped.
        if i > 0 && stop.load(Ordering::Relaxed) {
            break;
        }
        let mut g = game.clone();
        if g.place(m, me).is_err() {
            continue;
        }
        let (score, pv) = match g.outcome() {
            Some(Outcome::Win(c)) if c == me => (WIN_SCORE, vec![m]),
            Some(_) => (0, vec![m]),
            None => {
                let r = s.search(&g, &sub, stop, &mut |_| {});
                nodes += r.nodes;
                let mut pv = vec![m];
                pv.extend(r.pv.iter().copied());
                (r.score.saturating_neg(), pv)
            }
        };
        on_event(&SearchEvent::Info {
            depth: 1,
            nodes,
            score,
            pv: pv.clone(),
            elapsed: start.elapsed(),
        });
        if best.best.is_none() || score > best.score {
            best = SearchResult {
                best: Some(m),
                score,
                proven: None,
                nodes,
                pv,
            };
        }
    }
    best.nodes = nodes;
    best
}

/// Swap2 with stones on the board (3 or 5; White to move): searches for White. The caller
/// swaps when the score (White's view) is negative, otherwise plays `best`.
pub fn swap2_decide(
    s: &mut dyn Searcher<Gomoku>,
    game: &Gomoku,
    limits: &Limits,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&SearchEvent),
) -> SearchResult {
    s.search(game, limits, stop, on_event)
}

/// Swap2 on an empty board: the brain places three stones (Black, White, Black). Tries a few
/// fixed shapes around the centre and keeps the one whose evaluation for White (to move) is
/// closest to zero, so the opponent's colour choice gains least. Returns it as `pv`.
pub fn swap2_open(
    s: &mut dyn Searcher<Gomoku>,
    game: &Gomoku,
    limits: &Limits,
    stop: &AtomicBool,
    _on_event: &mut dyn FnMut(&SearchEvent),
) -> SearchResult {
    let (w, h) = (game.width() as i64, game.height() as i64);
    let (cx, cy) = (w / 2, h / 2);
    // Offsets (dx, dy) of Black, White, Black; y grows upwards here (our actions).
    const SHAPES: [[(i64, i64); 3]; 4] = [
        [(0, 0), (2, 0), (0, 2)],
        [(0, 0), (1, 2), (-2, 1)],
        [(0, 0), (2, 2), (-1, 2)],
        [(0, 0), (-2, -1), (2, -1)],
    ];
    let sub = split(limits, SHAPES.len());
    let mut best: Option<(i64, SearchResult)> = None;
    for shape in SHAPES {
        if best.is_some() && stop.load(Ordering::Relaxed) {
            break;
        }
        let mut g = game.clone();
        let mut pv = Vec::new();
        let mut ok = true;
        for (k, &(dx, dy)) in shape.iter().enumerate() {
            let (x, y) = (cx + dx, cy + dy);
            if x < 0 || y < 0 || x >= w || y >= h {
                ok = false;
                break;
            }
            let m = (y * w + x) as Move;
            let c = if k % 2 == 0 {
                crate::game::Color::Black
            } else {
                crate::game::Color::White
            };
            if g.place(m, c).is_err() {
                ok = false;
                break;
            }
            pv.push(m);
        }
        if !ok {
            continue;
        }
        let r = s.search(&g, &sub, stop, &mut |_| {});
        let imbalance = (r.score as i64).abs();
        if best.as_ref().is_none_or(|(b, _)| imbalance < *b) {
            best = Some((
                imbalance,
                SearchResult {
                    best: pv.first().copied(),
                    score: r.score,
                    proven: None,
                    nodes: r.nodes,
                    pv,
                },
            ));
        }
    }
    best.map(|(_, r)| r).unwrap_or_default()
}
