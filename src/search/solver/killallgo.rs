//! Killall-Go for the solvers: the [`SolverGame`] implementation (history-exact table keys
//! for situational superko, mobility, move ordering) and the no-network heuristic
//! [`KillallGoPriors`].
//!
//! Without a network the solvers need some idea of which moves matter. In Killall-Go the
//! fight is always about White's eye space: White (who wants to live) extends, captures and
//! makes eyes next to its stones, Black (who wants to kill) plays into that space and
//! captures. Points far from White stones rarely matter for either side, and a pass is
//! almost never right (a Black pass lets White pass back and win at once when Black still
//! has a board move). [`move_score`] encodes that as a cheap static score per move.

use super::heuristic::random_playout;
use super::{CommonOptions, Evaluation, Heuristic, SolverGame};
use crate::game::go::board::{cv, Board, EMPTY, WALL};
use crate::game::killallgo::KillallGo;
use crate::game::{Color, Game, Move};
use crate::util::Rng;

impl SolverGame for KillallGo {
    fn solver_key(&self) -> u64 {
        self.tt_key()
    }

    const HISTORY_SENSITIVE: bool = true;

    fn history_mark(&self) -> u64 {
        match self.last_move() {
            Some(m) if m != self.pass_move() => self.hash(),
            _ => 0,
        }
    }

    fn history_root(&self) -> u64 {
        let mut g = KillallGo::with_rules(self.variant(), self.rules());
        let mut x = 0;
        for (_, m) in self.moves() {
            g.play_unchecked(m);
            x ^= g.history_mark();
        }
        x
    }

    fn mobility(&self) -> usize {
        // Empty points plus the pass; exact counting (superko, eyes) is not worth its cost.
        self.board().empty_cells().len() + 1
    }

    const ORDER_HINTS: bool = true;

    // Measured: the hard window (r = 0.1) loses to the ordering-scaled initial numbers.
    const FOCUS_WINDOW: bool = false;

    fn order_scores(&self, moves: &[Move], out: &mut Vec<i32>) {
        out.clear();
        let me = self.to_move();
        let pass = self.pass_move();
        out.extend(moves.iter().map(|&m| {
            if m == pass {
                PASS_SCORE
            } else {
                move_score(self.board(), self.board().cell_of(m), me)
            }
        }));
    }

    fn default_heuristic(opts: &CommonOptions) -> Box<dyn Heuristic<Self>> {
        Box::new(KillallGoPriors::new(opts))
    }
}

/// Score of a pass (below every board move).
const PASS_SCORE: i32 = -1000;

/// Static ordering score of `color` playing the empty `cell` (larger: try first). Both
/// colours fight over the points next to White stones; captures and saving a chain in
/// atari come first; White filling its own eye-like point comes last among board moves.
pub fn move_score(b: &Board, cell: usize, color: Color) -> i32 {
    let white = cv(Color::White);
    let black = cv(Color::Black);
    let own = cv(color);
    let opp = cv(color.opp());
    let mut w_orth = 0;
    let mut b_orth = 0;
    let mut empty_orth = 0;
    let mut walls = 0;
    let mut capture = false;
    let mut save = false;
    let mut own_safe = false;
    for q in b.neighbours(cell) {
        let v = b.cell_value(q);
        if v == WALL {
            walls += 1;
            continue;
        }
        if v == EMPTY {
            empty_orth += 1;
            continue;
        }
        if v == white {
            w_orth += 1;
        } else if v == black {
            b_orth += 1;
        }
        let atari = b.in_atari(q);
        if v == opp && atari {
            capture = true;
        }
        if v == own {
            if atari {
                save = true;
            } else {
                own_safe = true;
            }
        }
    }
    let mut w_diag = 0;
    for q in b.diagonals(cell) {
        if b.cell_value(q) == white {
            w_diag += 1;
        }
    }
    let mut s = 12 * w_orth + 4 * w_diag + 3 * b_orth;
    if capture {
        s += 60;
    }
    // A move with one liberty left and no capture is a throw-in or a blunder.
    let self_atari = !capture && empty_orth <= 1 && !own_safe;
    if save && !self_atari {
        s += 40;
    }
    if self_atari {
        s -= 8;
    }
    if color == Color::White && !capture && w_orth + walls == 4 {
        // Filling an own (false) eye point: destroys eye space.
        s -= 40;
    }
    if w_orth + w_diag == 0 {
        // Far from White: rarely relevant to either side.
        s -= 20;
    }
    s
}

/// The no-network heuristic for Killall-Go: priors from [`move_score`] (a softmax over the
/// static scores), values from random playouts (MCTS).
pub struct KillallGoPriors {
    rng: Rng,
    plies: usize,
    buf: Vec<Move>,
    scores: Vec<i32>,
}

impl KillallGoPriors {
    /// Seeded from `opts.seed`; playouts of at most `opts.playout_plies` plies.
    pub fn new(opts: &CommonOptions) -> Self {
        KillallGoPriors {
            rng: Rng::new(opts.seed ^ 0x5eed_0003),
            plies: opts.playout_plies,
            buf: Vec::with_capacity(128),
            scores: Vec::with_capacity(128),
        }
    }

    fn priors(&mut self, g: &KillallGo, e: &mut Evaluation) {
        e.reset(g.num_actions());
        g.legal_moves(&mut self.buf);
        g.order_scores(&self.buf, &mut self.scores);
        let Some(&top) = self.scores.iter().max() else {
            return;
        };
        let mut total = 0.0f32;
        for (&m, &s) in self.buf.iter().zip(&self.scores) {
            // 20 score points = a factor e.
            let w = ((s - top) as f32 / 20.0).exp();
            e.policy[m as usize] = w;
            total += w;
        }
        if total > 0.0 {
            for &m in &self.buf {
                e.policy[m as usize] /= total;
            }
        }
    }
}

impl Heuristic<KillallGo> for KillallGoPriors {
    fn name(&self) -> &'static str {
        "killallgo-static"
    }

    fn fork(&self) -> Option<Box<dyn Heuristic<KillallGo>>> {
        // Another search thread gets its own playout stream.
        let mut rng = self.rng.clone();
        Some(Box::new(KillallGoPriors {
            rng: Rng::new(rng.next_u64()),
            plies: self.plies,
            buf: Vec::with_capacity(512),
            scores: Vec::new(),
        }))
    }

    fn evaluate_batch(&mut self, positions: &[&KillallGo], out: &mut [Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            self.priors(g, e);
            e.value = random_playout(*g, &mut self.rng, self.plies, &mut self.buf);
        }
    }

    fn priors_batch(&mut self, positions: &[&KillallGo], out: &mut [Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            self.priors(g, e);
        }
    }
}
