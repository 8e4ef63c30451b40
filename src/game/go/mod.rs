//! Go on boards from 2x2 to 25x25 (rectangular allowed) with simple ko, positional or
//! situational superko, suicide forbidden, and area scoring for finished games.
//!
//! [`Board`] holds the stones with incremental chains and exact undo; [`Go`] adds turns,
//! passes and the ko rule, and implements [`Game`]. Superko keeps a multiset of the position
//! hashes after every board move (plus the start), so a legality check is one hash lookup
//! of the hash the move would produce ([`Board::hash_after`]).
//!
//! ```
//! use pcn::game::go::{Go, KoRule};
//! use pcn::game::Game;
//! let mut g = Go::new(9, 9, KoRule::Situational).unwrap();
//! let m = g.parse_gtp("E5").unwrap();
//! g.play(m).unwrap();
//! assert_eq!(g.move_to_gtp(g.last_move().unwrap()), "E5");
//! ```

pub mod benson;
pub mod board;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use board::{Board, MAX_SIZE, MIN_SIZE};

use super::{gtp_vertex, parse_gtp_vertex, Color, Game, Move, MoveError, Outcome};
use crate::util::Rng;

/// A hasher that passes Zobrist keys through unchanged (they are already uniform).
#[derive(Default, Clone, Copy)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Multiset of position keys (counts, so undo can remove exactly what play added).
///
/// Most lookups are misses (a legal-move scan asks about every empty point), so a small
/// counting filter on the low key bits answers those without touching the hash map.
#[derive(Clone, Debug)]
pub struct PositionSet {
    map: HashMap<u64, u32, BuildHasherDefault<IdentityHasher>>,
    /// Keys per low-bits bucket; 255 is sticky ("maybe", never decremented).
    filter: Box<[u8; FILTER]>,
}

const FILTER: usize = 4096;

impl Default for PositionSet {
    fn default() -> Self {
        PositionSet {
            map: HashMap::default(),
            filter: Box::new([0; FILTER]),
        }
    }
}

impl PositionSet {
    #[inline(always)]
    fn bucket(k: u64) -> usize {
        (k as usize) & (FILTER - 1)
    }
    /// Adds one occurrence.
    #[inline]
    pub fn insert(&mut self, k: u64) {
        let f = &mut self.filter[Self::bucket(k)];
        *f = f.saturating_add(1);
        *self.map.entry(k).or_insert(0) += 1;
    }
    /// Removes one occurrence.
    #[inline]
    pub fn remove(&mut self, k: u64) {
        if let Some(c) = self.map.get_mut(&k) {
            *c -= 1;
            if *c == 0 {
                self.map.remove(&k);
            }
            let f = &mut self.filter[Self::bucket(k)];
            if *f != u8::MAX {
                *f -= 1;
            }
        }
    }
    /// Whether the key occurred.
    #[inline]
    pub fn contains(&self, k: u64) -> bool {
        self.filter[Self::bucket(k)] != 0 && self.map.contains_key(&k)
    }
    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// Whether no key was stored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Which repetitions are forbidden.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KoRule {
    /// Only the immediate retake of a single-stone ko.
    Simple,
    /// No board move may recreate an earlier board position (stones only).
    Positional,
    /// No board move may recreate an earlier position with the same side to move.
    Situational,
}

impl KoRule {
    /// `simple`, `positional` or `situational`.
    pub fn name(self) -> &'static str {
        match self {
            KoRule::Simple => "simple",
            KoRule::Positional => "positional",
            KoRule::Situational => "situational",
        }
    }
    /// Parses [`KoRule::name`].
    pub fn from_name(s: &str) -> Option<KoRule> {
        [KoRule::Simple, KoRule::Positional, KoRule::Situational]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
    }
}

/// Why a Go board could not be created.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported Go board size {0}x{1} (sides must be {MIN_SIZE}..={MAX_SIZE})")]
pub struct GoSizeError(pub usize, pub usize);

#[derive(Copy, Clone, Debug)]
struct Rec {
    mv: Move,
    color: Color,
    /// Position key inserted into the superko set by this move (board moves only).
    key: Option<u64>,
}

/// A game of Go. See the module docs.
#[derive(Clone, Debug)]
pub struct Go {
    board: Board,
    ko_rule: KoRule,
    komi: f32,
    to_move: Color,
    history: Vec<Rec>,
    seen: PositionSet,
}

impl Go {
    /// An empty board, Black to move, komi 7.5.
    pub fn new(width: usize, height: usize, ko_rule: KoRule) -> Result<Go, GoSizeError> {
        let board = Board::new(width, height).ok_or(GoSizeError(width, height))?;
        let mut g = Go {
            board,
            ko_rule,
            komi: 7.5,
            to_move: Color::Black,
            history: Vec::new(),
            seen: PositionSet::default(),
        };
        let k = g.position_key(g.board.hash(), Color::Black);
        g.seen.insert(k);
        Ok(g)
    }

    /// The stones.
    pub fn board(&self) -> &Board {
        &self.board
    }
    /// The ko rule.
    pub fn ko_rule(&self) -> KoRule {
        self.ko_rule
    }
    /// Komi added to White's area score.
    pub fn komi(&self) -> f32 {
        self.komi
    }
    /// Sets the komi.
    pub fn set_komi(&mut self, komi: f32) {
        self.komi = komi;
    }
    /// The moves played so far with their colours (pass = `width * height`).
    pub fn moves(&self) -> impl Iterator<Item = (Color, Move)> + '_ {
        self.history.iter().map(|r| (r.color, r.mv))
    }
    /// The pass action.
    #[inline]
    pub fn pass_move(&self) -> Move {
        self.board.points() as Move
    }

    fn position_key(&self, stones: u64, to_move: Color) -> u64 {
        match self.ko_rule {
            KoRule::Situational if to_move == Color::White => stones ^ board::side_key(),
            _ => stones,
        }
    }

    /// Sets the side to move (setup, GTP `play` out of turn).
    pub fn set_to_move(&mut self, c: Color) {
        self.to_move = c;
    }

    /// Whether `color` may play the board move `m` now (ignoring whose turn it is).
    pub fn is_legal_for(&self, m: Move, color: Color) -> bool {
        self.check_for(m, color).is_ok()
    }

    /// Checks a board move or pass for `color`.
    pub fn check_for(&self, m: Move, color: Color) -> Result<(), MoveError> {
        let pass = self.pass_move();
        if m > pass {
            return Err(MoveError::OffBoard);
        }
        if self.outcome().is_some() {
            return Err(MoveError::GameOver);
        }
        if m == pass {
            return Ok(());
        }
        let c = self.board.cell_of(m);
        if self.board.cell_value(c) != board::EMPTY {
            return Err(MoveError::Occupied);
        }
        match self.ko_rule {
            KoRule::Simple => {
                if self.board.is_suicide(c, color) {
                    return Err(MoveError::Illegal("suicide"));
                }
                if c == self.board.ko_cell() && color == self.to_move {
                    return Err(MoveError::Illegal("ko"));
                }
            }
            _ => {
                let Some(after) = self.board.try_hash_after(c, color) else {
                    return Err(MoveError::Illegal("suicide"));
                };
                if self.seen.contains(self.position_key(after, color.opp())) {
                    return Err(MoveError::Illegal("superko"));
                }
            }
        }
        Ok(())
    }

    /// Plays a checked move for `color` (which need not be the side to move).
    pub fn play_color(&mut self, m: Move, color: Color) -> Result<(), MoveError> {
        if color != self.to_move {
            // The simple-ko point only binds the player who moves next.
            let saved = self.to_move;
            self.to_move = color;
            if let Err(e) = self.check_for(m, color) {
                self.to_move = saved;
                return Err(e);
            }
        } else {
            self.check_for(m, color)?;
        }
        self.play_unchecked(m);
        Ok(())
    }

    /// Places a setup stone of `color` (checked like a move, recorded in the history).
    pub fn place(&mut self, m: Move, color: Color) -> Result<(), MoveError> {
        if m >= self.pass_move() {
            return Err(MoveError::OffBoard);
        }
        self.play_color(m, color)
    }

    /// Number of consecutive passes at the end of the history.
    pub fn trailing_passes(&self) -> usize {
        let pass = self.pass_move();
        self.history
            .iter()
            .rev()
            .take_while(|r| r.mv == pass)
            .count()
    }

    /// Plays one uniformly random playout to the end (two passes) or for at most `max_moves`
    /// moves, never filling an own true eye ([`Board::is_true_eye`]) so that it terminates;
    /// passes only when no other legal move is left. Returns the moves played (passes
    /// included).
    pub fn random_playout(&mut self, rng: &mut Rng, max_moves: usize) -> usize {
        let mut played = 0;
        while played < max_moves && self.outcome().is_none() {
            let color = self.to_move;
            let empties = self.board.empty_cells();
            let n = empties.len();
            let mut chosen = self.pass_move();
            if n > 0 {
                let start = rng.below(n);
                for i in 0..n {
                    let c = empties[(start + i) % n] as usize;
                    if self.board.is_true_eye(c, color) {
                        continue;
                    }
                    let m = self.board.move_of(c);
                    if self.check_for(m, color).is_ok() {
                        chosen = m;
                        break;
                    }
                }
            }
            self.play_unchecked(chosen);
            played += 1;
        }
        played
    }
}

/// Measures random playouts (own-eye ban) on an empty `size` x `size` board for at least
/// `seconds`, undoing each game move by move; returns (moves played incl. passes, elapsed
/// seconds). Used by `cargo run --release --example go_playout`.
pub fn playout_speed(size: usize, ko_rule: KoRule, seconds: f64, seed: u64) -> (u64, f64) {
    let Ok(mut g) = Go::new(size, size, ko_rule) else {
        return (0, 0.0);
    };
    let mut rng = Rng::new(seed);
    let start = std::time::Instant::now();
    let mut moves = 0u64;
    loop {
        let n = g.random_playout(&mut rng, 3 * size * size);
        moves += n as u64;
        while g.undo().is_some() {}
        let t = start.elapsed().as_secs_f64();
        if t >= seconds {
            return (moves, t);
        }
    }
}

impl Game for Go {
    fn name(&self) -> String {
        format!("go-{}", self.ko_rule.name())
    }
    fn width(&self) -> usize {
        self.board.width()
    }
    fn height(&self) -> usize {
        self.board.height()
    }
    fn num_actions(&self) -> usize {
        self.board.points() + 1
    }
    fn to_move(&self) -> Color {
        self.to_move
    }
    fn ply(&self) -> usize {
        self.history.len()
    }
    fn last_move(&self) -> Option<Move> {
        self.history.last().map(|r| r.mv)
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        if self.outcome().is_some() {
            return;
        }
        for m in 0..self.pass_move() {
            if self.check_for(m, self.to_move).is_ok() {
                out.push(m);
            }
        }
        out.push(self.pass_move());
    }

    fn check_move(&self, m: Move) -> Result<(), MoveError> {
        self.check_for(m, self.to_move)
    }

    #[inline]
    fn play_unchecked(&mut self, m: Move) {
        let color = self.to_move;
        let key = if m == self.pass_move() {
            self.board.pass();
            None
        } else {
            let c = self.board.cell_of(m);
            self.board.play(c, color);
            if self.ko_rule == KoRule::Simple {
                None
            } else {
                let k = self.position_key(self.board.hash(), color.opp());
                self.seen.insert(k);
                Some(k)
            }
        };
        self.history.push(Rec { mv: m, color, key });
        self.to_move = color.opp();
    }

    fn undo(&mut self) -> Option<Move> {
        let r = self.history.pop()?;
        self.board.undo();
        if let Some(k) = r.key {
            self.seen.remove(k);
        }
        self.to_move = r.color;
        Some(r.mv)
    }

    /// Over after two consecutive passes; decided by area score with komi.
    fn outcome(&self) -> Option<Outcome> {
        if self.trailing_passes() < 2 {
            return None;
        }
        let (b, w) = self.board.area_score();
        let diff = b as f32 - w as f32 - self.komi;
        Some(if diff > 0.0 {
            Outcome::Win(Color::Black)
        } else if diff < 0.0 {
            Outcome::Win(Color::White)
        } else {
            Outcome::Draw
        })
    }

    fn hash(&self) -> u64 {
        let side = if self.to_move == Color::White {
            board::side_key()
        } else {
            0
        };
        self.board.hash() ^ side
    }

    fn move_to_gtp(&self, m: Move) -> String {
        if m >= self.pass_move() {
            return "pass".into();
        }
        let w = self.board.width();
        gtp_vertex(m as usize % w, m as usize / w)
    }

    fn parse_gtp(&self, s: &str) -> Result<Move, MoveError> {
        if s.eq_ignore_ascii_case("pass") {
            return Ok(self.pass_move());
        }
        let (x, y) = parse_gtp_vertex(s, self.board.width(), self.board.height())?;
        Ok((y * self.board.width() + x) as Move)
    }
}
