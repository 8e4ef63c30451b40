//! Killall-Go: Black tries to capture every White stone; White lives.
//!
//! [`Variant::Pcn9`] follows the PCN paper's solver exactly (`../shared/pcn/README.md` §7.2):
//! 9x9, forced opening C7, pass, G7, pass, C3, pass, G3 (only the forced action is legal),
//! then White moves; situational superko over positions after board moves; filling an own
//! true eye is illegal for both colours; White wins as soon as any White block is
//! unconditionally alive ([`crate::game::go::benson`]); after two consecutive passes White
//! wins if Black still has a legal board move, otherwise Black wins iff no White stone is left.
//!
//! [`Variant::Seven`] (7x7): Black's first two moves are free board moves, White's first move
//! is a forced pass; the same move rules and the same Benson win for White; after two
//! consecutive passes Black wins iff no White stone remains.
//!
//! The Benson win and the own-eye ban are switchable ([`KillallGoRules`], `pcn solve
//! --benson off --own-eye-ban off`) for ablations; both are on unless a caller asks.
//!
//! Protocol front ends that receive Black's opening stones without White's passes (GTP
//! `play B C7`, `play B G7`, ...) use [`KillallGo::place`], which inserts the forced passes.

use once_cell::sync::Lazy;

use super::go::benson;
use super::go::board::{self, Board, EMPTY};
use super::go::PositionSet;
use super::{gtp_vertex, parse_gtp_vertex, Color, Game, Move, MoveError, Outcome};
use crate::util::Zobrist;

/// Keys for [`KillallGo::tt_key`]: one per point (illegal-point marks) plus a double-pass key.
static TT_KEYS: Lazy<Zobrist> = Lazy::new(|| Zobrist::new(130));

/// The Killall-Go variant.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// 9x9 with the PCN paper's forced four-stone opening.
    Pcn9,
    /// 7x7: Black places two free stones (White passes in between), then White moves.
    Seven,
}

/// What the opening prescribes at one ply.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpeningStep {
    /// Only this action is legal.
    Forced(Move),
    /// Any legal board move (no pass).
    FreeBoard,
}

impl Variant {
    /// Board side.
    pub fn size(self) -> usize {
        match self {
            Variant::Pcn9 => 9,
            Variant::Seven => 7,
        }
    }
    /// Short name (`9x9`, `7x7`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Pcn9 => "9x9",
            Variant::Seven => "7x7",
        }
    }
    /// The variant for a board side, if any.
    pub fn from_size(n: usize) -> Option<Variant> {
        match n {
            9 => Some(Variant::Pcn9),
            7 => Some(Variant::Seven),
            _ => None,
        }
    }
    /// Number of opening plies.
    pub fn opening_len(self) -> usize {
        match self {
            Variant::Pcn9 => 7,
            Variant::Seven => 3,
        }
    }
    /// The opening rule at `ply`, or `None` after the opening.
    pub fn opening(self, ply: usize) -> Option<OpeningStep> {
        let n = self.size();
        let pass = (n * n) as Move;
        let at = |x: usize, y: usize| (y * n + x) as Move;
        match self {
            Variant::Pcn9 => {
                let seq = [at(2, 6), pass, at(6, 6), pass, at(2, 2), pass, at(6, 2)];
                seq.get(ply).map(|&m| OpeningStep::Forced(m))
            }
            Variant::Seven => match ply {
                0 | 2 => Some(OpeningStep::FreeBoard),
                1 => Some(OpeningStep::Forced(pass)),
                _ => None,
            },
        }
    }
}

/// The two Killall-Go rules that act as domain knowledge, each switchable for ablations
/// (`pcn solve --benson off --own-eye-ban off`). Both are on in the PCN paper's rules, which
/// the shared problems and networks assume; switching one off changes the game, so a proof
/// records the setting in its header and `pcn verify` replays under it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct KillallGoRules {
    /// White wins as soon as a White block is unconditionally alive (Benson). Off: the game
    /// ends only by two passes.
    pub benson: bool,
    /// Filling an own true eye is illegal for both colours. Off: such a move is legal
    /// unless it is suicide.
    pub own_eye_ban: bool,
}

impl Default for KillallGoRules {
    fn default() -> Self {
        KillallGoRules {
            benson: true,
            own_eye_ban: true,
        }
    }
}

#[derive(Copy, Clone, Debug)]
struct Rec {
    mv: Move,
    color: Color,
    /// Situational key inserted by a board move.
    key: Option<u64>,
    /// Result after this ply.
    outcome: Option<Outcome>,
    /// Stones after this ply (network history planes).
    bits: [u128; 2],
}

/// A Killall-Go position with its full history. See the module docs.
#[derive(Clone, Debug)]
pub struct KillallGo {
    variant: Variant,
    rules: KillallGoRules,
    board: Board,
    to_move: Color,
    history: Vec<Rec>,
    seen: PositionSet,
}

impl KillallGo {
    /// The empty board before the opening, Black to move.
    pub fn new(variant: Variant) -> KillallGo {
        KillallGo::with_rules(variant, KillallGoRules::default())
    }

    /// [`KillallGo::new`] under the given knowledge rules.
    pub fn with_rules(variant: Variant, rules: KillallGoRules) -> KillallGo {
        let n = variant.size();
        KillallGo {
            variant,
            rules,
            // Sizes 7 and 9 are always valid.
            board: Board::new(n, n).unwrap_or_else(|| unreachable!("7x7 and 9x9 are valid")),
            to_move: Color::Black,
            history: Vec::with_capacity(128),
            seen: PositionSet::default(),
        }
    }

    /// The position after the forced opening (9x9: White to move after G3). For 7x7 the
    /// opening has free moves, so this is the empty board.
    pub fn after_opening(variant: Variant) -> KillallGo {
        let mut g = KillallGo::new(variant);
        while let Some(OpeningStep::Forced(m)) = variant.opening(g.ply()) {
            g.play_unchecked(m);
        }
        g
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }
    /// The knowledge rules in force.
    pub fn rules(&self) -> KillallGoRules {
        self.rules
    }
    /// The stones.
    pub fn board(&self) -> &Board {
        &self.board
    }
    /// The pass action.
    #[inline]
    pub fn pass_move(&self) -> Move {
        self.board.points() as Move
    }
    /// Moves played so far with their colours (opening and passes included).
    pub fn moves(&self) -> impl Iterator<Item = (Color, Move)> + '_ {
        self.history.iter().map(|r| (r.color, r.mv))
    }
    /// Whether the forced opening is still in progress.
    pub fn in_opening(&self) -> bool {
        self.history.len() < self.variant.opening_len()
    }

    fn situational_key(stones: u64, to_move: Color) -> u64 {
        if to_move == Color::White {
            stones ^ board::side_key()
        } else {
            stones
        }
    }

    /// Whether `color` may play the board point `m` by the move rules alone (empty, not
    /// suicide, not an own true eye under the ban, no situational superko); ignores opening
    /// and game end.
    #[inline]
    pub fn board_move_ok(&self, m: Move, color: Color) -> Result<(), MoveError> {
        if m >= self.pass_move() {
            return Err(MoveError::OffBoard);
        }
        let c = self.board.cell_of(m);
        if self.board.cell_value(c) != EMPTY {
            return Err(MoveError::Occupied);
        }
        if self.rules.own_eye_ban && self.board.is_true_eye(c, color) {
            return Err(MoveError::Illegal("filling an own true eye"));
        }
        let Some(after) = self.board.try_hash_after(c, color) else {
            return Err(MoveError::Illegal("suicide"));
        };
        if self
            .seen
            .contains(Self::situational_key(after, color.opp()))
        {
            return Err(MoveError::Illegal("situational superko"));
        }
        Ok(())
    }

    /// Checks an action by the rules, ignoring whether the game is already over.
    pub fn check_rules(&self, m: Move) -> Result<(), MoveError> {
        let pass = self.pass_move();
        if m > pass {
            return Err(MoveError::OffBoard);
        }
        match self.variant.opening(self.history.len()) {
            Some(OpeningStep::Forced(f)) => {
                if m == f {
                    Ok(())
                } else {
                    Err(MoveError::Illegal("forced opening move"))
                }
            }
            Some(OpeningStep::FreeBoard) if m == pass => {
                Err(MoveError::Illegal("no pass in the opening"))
            }
            _ if m == pass => Ok(()),
            _ => self.board_move_ok(m, self.to_move),
        }
    }

    /// Every action legal by the rules, ignoring whether the game is over (sorted; the
    /// golden vectors list these even at terminal positions).
    pub fn rule_legal_actions(&self, out: &mut Vec<Move>) {
        out.clear();
        if let Some(OpeningStep::Forced(f)) = self.variant.opening(self.history.len()) {
            out.push(f);
            return;
        }
        for m in 0..self.pass_move() {
            if self.board_move_ok(m, self.to_move).is_ok() {
                out.push(m);
            }
        }
        if self.variant.opening(self.history.len()).is_none() {
            out.push(self.pass_move());
        }
    }

    /// Whether Black has any legal board move in this position (the double-pass verdict).
    pub fn black_has_board_move(&self) -> bool {
        self.board.empty_cells().iter().any(|&c| {
            let m = self.board.move_of(c as usize);
            self.board_move_ok(m, Color::Black).is_ok()
        })
    }

    fn verdict_after(&self, mv: Move, board_move: bool) -> Option<Outcome> {
        if board_move {
            if self.rules.benson && benson::any_alive(&self.board, Color::White) {
                return Some(Outcome::Win(Color::White));
            }
            return None;
        }
        // `mv` is a pass: the game ends if the previous ply was a pass too.
        let pass = self.pass_move();
        let prev_pass = self
            .history
            .len()
            .checked_sub(1)
            .and_then(|i| self.history.get(i))
            .is_some_and(|r| r.mv == pass);
        debug_assert_eq!(mv, pass);
        if !prev_pass {
            return None;
        }
        let white_left = self.board.stone_count(Color::White) > 0;
        let black_wins = match self.variant {
            Variant::Pcn9 => !self.black_has_board_move() && !white_left,
            Variant::Seven => !white_left,
        };
        Some(Outcome::Win(if black_wins {
            Color::Black
        } else {
            Color::White
        }))
    }

    /// Setup: places a stone of `color`, inserting the opening's forced White pass when
    /// Black's stones arrive back to back (GTP `play B C7` then `play B G7`). Checked.
    pub fn place(&mut self, m: Move, color: Color) -> Result<(), MoveError> {
        if m >= self.pass_move() {
            return Err(MoveError::OffBoard);
        }
        if color != self.to_move {
            let forced_pass = self.variant.opening(self.history.len())
                == Some(OpeningStep::Forced(self.pass_move()));
            if color == Color::Black && forced_pass && self.outcome().is_none() {
                self.play_unchecked(self.pass_move());
                if let Err(e) = self.play(m) {
                    self.undo();
                    return Err(e);
                }
                return Ok(());
            }
            return Err(MoveError::Illegal("not this colour's turn"));
        }
        self.play(m)
    }

    /// Transposition key in the style of the paper's solver (README §8.1): stones, side to
    /// move, one key per empty point illegal for the side to move, and a key when the last
    /// two plies were passes, so superko-dependent legality is part of the key.
    pub fn tt_key(&self) -> u64 {
        let mut k = Game::hash(self);
        if self.outcome().is_none() && !self.in_opening() {
            for &c in self.board.empty_cells() {
                let m = self.board.move_of(c as usize);
                if self.board_move_ok(m, self.to_move).is_err() {
                    k ^= TT_KEYS.key(m as usize, 0);
                }
            }
        }
        let pass = self.pass_move();
        let n = self.history.len();
        if n >= 2 && self.history[n - 1].mv == pass && self.history[n - 2].mv == pass {
            k ^= TT_KEYS.side;
        }
        k
    }
}

impl Game for KillallGo {
    fn name(&self) -> String {
        format!("killallgo-{}", self.variant.name())
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
        if self.outcome().is_some() {
            out.clear();
            return;
        }
        self.rule_legal_actions(out);
    }

    fn check_move(&self, m: Move) -> Result<(), MoveError> {
        if self.outcome().is_some() {
            return Err(MoveError::GameOver);
        }
        self.check_rules(m)
    }

    fn play_unchecked(&mut self, m: Move) {
        let color = self.to_move;
        let pass = self.pass_move();
        let (key, board_move) = if m == pass {
            self.board.pass();
            (None, false)
        } else {
            let c = self.board.cell_of(m);
            self.board.play(c, color);
            let k = Self::situational_key(self.board.hash(), color.opp());
            self.seen.insert(k);
            (Some(k), true)
        };
        let outcome = self.verdict_after(m, board_move);
        self.history.push(Rec {
            mv: m,
            color,
            key,
            outcome,
            bits: self.board.bitboards(),
        });
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

    fn outcome(&self) -> Option<Outcome> {
        self.history.last().and_then(|r| r.outcome)
    }

    fn hash(&self) -> u64 {
        KillallGo::situational_key(self.board.hash(), self.to_move)
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
        let n = self.board.width();
        let (x, y) = parse_gtp_vertex(s, n, n)?;
        Ok((y * n + x) as Move)
    }

    fn input_planes(&self) -> usize {
        18
    }

    /// PCN Killall-Go encoding (README §4): planes 2k / 2k+1 hold Black / White stones after
    /// ply t-k (k = 0..7; zero before the first ply), plane 16 is all ones when Black is to
    /// move, plane 17 when White is.
    fn encode_input(&self, out: &mut [f32]) {
        let n = self.board.points();
        out[..18 * n].fill(0.0);
        for (k, r) in self.history.iter().rev().take(8).enumerate() {
            for colour in 0..2 {
                let plane = &mut out[(2 * k + colour) * n..(2 * k + colour + 1) * n];
                let mut b = r.bits[colour];
                while b != 0 {
                    let a = b.trailing_zeros() as usize;
                    plane[a] = 1.0;
                    b &= b - 1;
                }
            }
        }
        let plane = 16 + self.to_move.index();
        out[plane * n..(plane + 1) * n].fill(1.0);
    }
}
