//! What the GTP front end needs from a game beyond [`Game`]: board sizes, plays by either
//! colour (GTP allows several moves of one colour in a row; Sabaki sends setup stones as
//! plays), stones for `showboard`, SGF loading and the game record.

use crate::game::gomoku::Gomoku;
use crate::game::killallgo::{KillallGo, Variant};
use crate::game::{Color, Game, Move, MoveError, Outcome};
use crate::search::solver::SolverGame;
use crate::sgf::{self, GameTree, SgfError};

/// A game playable through GTP. See the module docs. (`SolverGame` backs `pcn-solve`.)
pub trait GtpGame: SolverGame {
    /// SGF `GM` value (1 = Go family, 4 = Gomoku).
    const SGF_GM: u32;

    /// Whether a game can end in a draw. Without draws a solver's disproof for the side to
    /// move is a proven loss (genmove then plays the hardest refutation, analysis shows win
    /// rate 0); with draws it only means "no forced win".
    const DRAWS: bool;

    /// Fraction of a genmove's budget the configured solver gets before the fallback player
    /// (see [`crate::search::solver_player`]).
    const SOLVER_SHARE: f64;

    /// An empty board of the same family and rules with this size, or `None` when the size
    /// is not supported (`? unacceptable size`).
    fn resized(&self, width: usize, height: usize) -> Option<Self>;

    /// The stone on a board point, if any.
    fn stone_at(&self, m: Move) -> Option<Color>;

    /// The pass action, for games that have one.
    fn pass_action(&self) -> Option<Move>;

    /// Plays `m` for `color`, whoever is to move. Returns the number of plies added to the
    /// history (0..=2: a forced or inserted pass of the other colour counts), which is what
    /// one GTP `undo` takes back. On error the position is unchanged.
    fn play_as(&mut self, m: Move, color: Color) -> Result<usize, MoveError>;

    /// A copy in which `color` is to move (for `genmove`/analysis of either colour), or
    /// `None` when the rules allow no such position.
    fn with_to_move(&self, color: Color) -> Option<Self>;

    /// Loads the main line of an SGF record up to `max_moves` moves, keeping this game's
    /// rules.
    fn load_sgf(&self, tree: &GameTree, max_moves: usize) -> Result<Self, SgfError>;

    /// The moves played so far, with their colours (passes included).
    fn record(&self) -> Vec<(Color, Move)>;

    /// The result in `final_score` notation (`B+`, `W+`, `0`), or `None` while the game is
    /// not over. Neither Killall-Go nor Gomoku has a point score.
    fn score_text(&self) -> Option<String> {
        self.outcome().map(|o| match o {
            Outcome::Win(c) => format!("{}+", c.letter()),
            Outcome::Draw => "0".to_string(),
        })
    }
}

impl GtpGame for KillallGo {
    const SGF_GM: u32 = 1;
    const DRAWS: bool = false;
    // The UCT fallback is weak in Killall-Go: the solver gets half of the move.
    const SOLVER_SHARE: f64 = 0.5;

    fn resized(&self, width: usize, height: usize) -> Option<Self> {
        if width != height {
            return None;
        }
        Variant::from_size(width).map(KillallGo::new)
    }

    fn stone_at(&self, m: Move) -> Option<Color> {
        self.board().stone(m)
    }

    fn pass_action(&self) -> Option<Move> {
        Some(self.pass_move())
    }

    fn play_as(&mut self, m: Move, color: Color) -> Result<usize, MoveError> {
        let before = self.ply();
        let pass = self.pass_move();
        if color == self.to_move() {
            self.play(m)?;
            return Ok(self.ply() - before);
        }
        if m == pass {
            // A pass by the colour that just moved changes nothing: the same side is still
            // to move. Not recorded, so a later undo does not take anything back for it.
            return if self.outcome().is_some() {
                Err(MoveError::GameOver)
            } else {
                Ok(0)
            };
        }
        // Black's opening stones arriving without White's forced passes.
        match self.place(m, color) {
            Ok(()) => return Ok(self.ply() - before),
            Err(MoveError::Illegal("not this colour's turn")) => {}
            Err(e) => return Err(e),
        }
        // Otherwise the side to move passes first, unless that pass would end the game.
        if self.check_move(pass).is_err() || self.last_move() == Some(pass) {
            return Err(MoveError::Illegal("not this colour's turn"));
        }
        self.play_unchecked(pass);
        if let Err(e) = self.play(m) {
            self.undo();
            return Err(e);
        }
        Ok(self.ply() - before)
    }

    fn with_to_move(&self, color: Color) -> Option<Self> {
        if color == self.to_move() {
            return Some(self.clone());
        }
        let pass = self.pass_move();
        if self.check_move(pass).is_err() || self.last_move() == Some(pass) {
            return None;
        }
        let mut g = self.clone();
        g.play_unchecked(pass);
        Some(g)
    }

    fn load_sgf(&self, tree: &GameTree, max_moves: usize) -> Result<Self, SgfError> {
        sgf::to_killallgo_at(tree, max_moves)
    }

    fn record(&self) -> Vec<(Color, Move)> {
        self.moves().collect()
    }
}

impl GtpGame for Gomoku {
    const SGF_GM: u32 = 4;
    const DRAWS: bool = true;
    // The alpha-beta fallback already searches threats at the root: it keeps most of the move.
    const SOLVER_SHARE: f64 = 0.3;

    fn resized(&self, width: usize, height: usize) -> Option<Self> {
        Gomoku::new(width, height, self.rule()).ok()
    }

    fn stone_at(&self, m: Move) -> Option<Color> {
        self.stone(m)
    }

    fn pass_action(&self) -> Option<Move> {
        None
    }

    fn play_as(&mut self, m: Move, color: Color) -> Result<usize, MoveError> {
        if m as usize >= self.width() * self.height() {
            return Err(MoveError::Illegal("Gomoku has no pass"));
        }
        if self.outcome().is_some() {
            return Err(MoveError::GameOver);
        }
        if color == self.to_move() {
            self.play(m)?;
        } else {
            self.place(m, color)?;
        }
        Ok(1)
    }

    fn with_to_move(&self, color: Color) -> Option<Self> {
        let mut g = self.clone();
        g.set_to_move(color);
        Some(g)
    }

    fn load_sgf(&self, tree: &GameTree, max_moves: usize) -> Result<Self, SgfError> {
        sgf::to_gomoku_at(tree, self.rule(), max_moves)
    }

    fn record(&self) -> Vec<(Color, Move)> {
        self.history_cells()
            .map(|(cell, c)| (c, self.move_of(cell)))
            .collect()
    }
}
