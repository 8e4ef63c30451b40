//! Positions edited from outside the rules' turn order, as GUIs, problem setters and game
//! records do: boards of another size, stones played by either colour (GTP allows several
//! moves of one colour in a row; Sabaki sends setup stones as plays), the stone on a point,
//! the record and the result. The protocol front ends only translate their commands into
//! these calls.

use super::gomoku::Gomoku;
use super::killallgo::{KillallGo, Variant};
use super::{Color, Game, Move, MoveError, Outcome};

/// A game whose positions can be edited freely. See the module docs.
pub trait EditableGame: Game {
    /// Whether a game can end in a draw. Without draws a disproof for the side to move is a
    /// proven loss; with draws it only means "no forced win".
    const DRAWS: bool;

    /// An empty board of the same family and rules with this size, or `None` when the size
    /// is not supported.
    fn resized(&self, width: usize, height: usize) -> Option<Self>;

    /// The stone on a board point, if any.
    fn stone_at(&self, m: Move) -> Option<Color>;

    /// The pass action, for games that have one.
    fn pass_action(&self) -> Option<Move>;

    /// Plays `m` for `color`, whoever is to move. Returns the number of plies added to the
    /// history (0..=2: a forced or inserted pass of the other colour counts), which is what
    /// taking this play back must undo. On error the position is unchanged.
    fn play_as(&mut self, m: Move, color: Color) -> Result<usize, MoveError>;

    /// A copy in which `color` is to move (to search for either colour), or `None` when the
    /// rules allow no such position.
    fn with_to_move(&self, color: Color) -> Option<Self>;

    /// The moves played so far, with their colours (passes included).
    fn record(&self) -> Vec<(Color, Move)>;

    /// The result in GTP `final_score` / SGF `RE` notation (`B+`, `W+`, `0`), or `None` while
    /// the game is not over. Neither Killall-Go nor Gomoku has a point score.
    fn score_text(&self) -> Option<String> {
        self.outcome().map(|o| match o {
            Outcome::Win(c) => format!("{}+", c.letter()),
            Outcome::Draw => "0".to_string(),
        })
    }
}

impl EditableGame for KillallGo {
    const DRAWS: bool = false;

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

    fn record(&self) -> Vec<(Color, Move)> {
        self.moves().collect()
    }
}

impl EditableGame for Gomoku {
    const DRAWS: bool = true;

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

    fn record(&self) -> Vec<(Color, Move)> {
        self.history_cells()
            .map(|(cell, c)| (c, self.move_of(cell)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::Rule;

    #[test]
    fn killallgo_opening_stones_by_black_insert_the_passes() {
        let mut g = KillallGo::new(Variant::Pcn9);
        let c7 = g.parse_gtp("C7").unwrap();
        let g7 = g.parse_gtp("G7").unwrap();
        assert_eq!(g.play_as(c7, Color::Black), Ok(1));
        // White's forced pass is inserted before Black's second stone.
        assert_eq!(g.play_as(g7, Color::Black), Ok(2));
        assert_eq!(g.stone_at(g7), Some(Color::Black));
        let rec = g.record();
        assert_eq!(rec.len(), 3);
        assert_eq!(rec[1], (Color::White, g.pass_move()));
        assert!(g.resized(7, 7).is_some() && g.resized(9, 7).is_none());
        assert_eq!(g.score_text(), None);
    }

    #[test]
    fn gomoku_plays_either_colour_and_scores_fives() {
        let mut g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
        assert_eq!(g.pass_action(), None);
        assert!(g.play_as(81, Color::Black).is_err());
        for x in 0..5u16 {
            assert_eq!(g.play_as(x, Color::Black), Ok(1));
        }
        assert_eq!(g.record().len(), 5);
        assert_eq!(g.score_text().as_deref(), Some("B+"));
        assert_eq!(g.play_as(20, Color::White), Err(MoveError::GameOver));
        let w = Gomoku::new(9, 9, Rule::Freestyle)
            .unwrap()
            .with_to_move(Color::White)
            .unwrap();
        assert_eq!(w.to_move(), Color::White);
    }
}
