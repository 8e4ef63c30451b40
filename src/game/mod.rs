//! The game layer: one trait for Gomoku, Go and Killall-Go.
//!
//! Moves are action indices `y * width + x` with `y = 0` the bottom row (GTP row 1),
//! matching the PCN networks' encoding (see `../shared/pcn/README.md` §2). Games with a
//! pass use `width * height` as the pass action.
//!
//! Positions from outside (protocol lines, SGF files) enter through checked calls
//! ([`Game::play`], [`Game::check_move`]); the search uses [`Game::play_unchecked`].

pub mod edit;
pub mod go;
pub mod gomoku;
pub mod killallgo;

use thiserror::Error;

/// An action index: `y * width + x`, or `width * height` for a pass.
pub type Move = u16;

/// A player's colour. Black moves first in every game here.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// The first player.
    Black = 0,
    /// The second player.
    White = 1,
}

impl Color {
    /// The other colour.
    #[inline]
    pub fn opp(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// 0 for Black, 1 for White.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// `B` or `W`.
    pub fn letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }
}

/// How a finished game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This colour won.
    Win(Color),
    /// Nobody won (e.g. a full Gomoku board).
    Draw,
}

/// Why a move was refused. The position is unchanged when one is returned.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MoveError {
    /// The coordinates lie outside the board.
    #[error("coordinates off the board")]
    OffBoard,
    /// The point already holds a stone.
    #[error("point is occupied")]
    Occupied,
    /// Renju: Black may not play here (double three, double four or overline).
    #[error("forbidden point for black")]
    Forbidden,
    /// The game is already over.
    #[error("game is over")]
    GameOver,
    /// Another rule forbids the move (suicide, ko, forced reply, ...).
    #[error("illegal move: {0}")]
    Illegal(&'static str),
    /// The move text could not be read.
    #[error("cannot parse move '{0}'")]
    Parse(String),
}

/// GTP column letters (no `I`), enough for 25 columns.
pub const GTP_COLUMNS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// Formats point `(x, y)` (y = 0 bottom) as a GTP vertex such as `D4`.
pub fn gtp_vertex(x: usize, y: usize) -> String {
    match GTP_COLUMNS.get(x) {
        Some(&c) => format!("{}{}", c as char, y + 1),
        None => format!("?{}-{}", x, y + 1),
    }
}

/// Parses a GTP vertex (any case, no `I`) into `(x, y)` with y = 0 the bottom row,
/// checked against the board size. `pass` is not handled here.
pub fn parse_gtp_vertex(s: &str, width: usize, height: usize) -> Result<(usize, usize), MoveError> {
    let bad = || MoveError::Parse(s.chars().take(16).collect());
    let mut chars = s.chars();
    let col = chars.next().ok_or_else(bad)?.to_ascii_uppercase();
    let x = GTP_COLUMNS
        .iter()
        .position(|&c| c as char == col)
        .ok_or_else(bad)?;
    let row: usize = chars.as_str().parse().map_err(|_| bad())?;
    if row == 0 || x >= width || row > height {
        return Err(MoveError::OffBoard);
    }
    Ok((x, row - 1))
}

/// The rules of one game, implemented by Gomoku, Go and Killall-Go.
///
/// Implementations are plain values (`Clone + Send`), so a search thread owns its copy.
pub trait Game: Clone + Send + 'static {
    /// Short name of the game and rule set, e.g. `gomoku-freestyle`.
    fn name(&self) -> String;
    /// Board width (columns).
    fn width(&self) -> usize;
    /// Board height (rows).
    fn height(&self) -> usize;
    /// Number of distinct actions (points, plus one for pass where passing exists).
    fn num_actions(&self) -> usize;
    /// The colour to play next.
    fn to_move(&self) -> Color;
    /// Plies played so far (passes and setup moves included).
    fn ply(&self) -> usize;
    /// The last action played, if any.
    fn last_move(&self) -> Option<Move>;
    /// Clears `out` and fills it with every legal action. Empty when the game is over.
    fn legal_moves(&self, out: &mut Vec<Move>);
    /// Checks a move without playing it.
    fn check_move(&self, m: Move) -> Result<(), MoveError>;
    /// Plays a move after checking it; on error the position is unchanged.
    fn play(&mut self, m: Move) -> Result<(), MoveError> {
        self.check_move(m)?;
        self.play_unchecked(m);
        Ok(())
    }
    /// Plays a move known to be legal (the search's fast path).
    fn play_unchecked(&mut self, m: Move);
    /// Takes back the last move; `None` when there is nothing to undo.
    fn undo(&mut self) -> Option<Move>;
    /// The result if the game is over.
    fn outcome(&self) -> Option<Outcome>;
    /// Zobrist hash of the position (stones and side to move).
    fn hash(&self) -> u64;
    /// A move as GTP text (`D4`, `pass`).
    fn move_to_gtp(&self, m: Move) -> String;
    /// Parses GTP move text for this board.
    fn parse_gtp(&self, s: &str) -> Result<Move, MoveError>;
    /// Number of network input planes (0 for games without an encoder yet).
    fn input_planes(&self) -> usize {
        0
    }
    /// Writes the network input (`input_planes() * height * width` floats, NCHW).
    fn encode_input(&self, _out: &mut [f32]) {}
}
