//! Why a GTP command failed: one typed error whose `Display` is the text after `?`.
//!
//! The handlers return [`GtpError`]; only the dispatcher's `respond` turns it into text, so the
//! failure replies are declared here, once. The texts are GTP v2's standard failure
//! messages where the specification names one ("unknown command", "syntax error", "illegal
//! move", "unacceptable size", "cannot undo", "cannot score", "board not empty", "bad vertex
//! list", "cannot load file", "cannot save file"), and GUIs show them to users.

use super::parse::ParseError;
use super::NO_SOLVER;
use crate::search::solver::{solver_names, AUTO_SOLVER};

/// A failed GTP command. The state is unchanged after every one of them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GtpError {
    /// The command name is not one we know.
    #[error("unknown command")]
    UnknownCommand,
    /// Missing or malformed arguments, or a line too long to read.
    #[error("syntax error")]
    Syntax,
    /// `play` of a move the rules forbid, off the board, or for a colour that has no move.
    #[error("illegal move")]
    IllegalMove,
    /// `boardsize` / `rectangular_boardsize` the game cannot be played on.
    #[error("unacceptable size")]
    UnacceptableSize,
    /// `undo` with no move of ours to take back.
    #[error("cannot undo")]
    CannotUndo,
    /// `final_score` of a position the game cannot score.
    #[error("cannot score")]
    CannotScore,
    /// `set_free_handicap` on a board that already has stones.
    #[error("board not empty")]
    BoardNotEmpty,
    /// `set_free_handicap` with a pass, a repeated or off-board vertex, fewer than two
    /// stones, or stones the rules do not accept.
    #[error("bad vertex list")]
    BadVertexList,
    /// `loadsgf` failed; the reason is one line (GUIs show the whole text).
    #[error("cannot load file: {0}")]
    CannotLoad(String),
    /// `printsgf FILE` could not write the file.
    #[error("cannot save file")]
    CannotSave,
    /// `lz-analyze` / `kata-analyze` for a colour that has no move now.
    #[error("cannot analyze for this color now")]
    CannotAnalyzeColor,
    /// `--solver` / `pcn-solver` with a name that is no solver.
    #[error(
        "unknown solver (expected {AUTO_SOLVER}, {} or {NO_SOLVER})",
        solver_names().join(", ")
    )]
    UnknownSolver,
    /// A command reached a handler that does not take it (a bug, reported, not fatal).
    #[error("internal error")]
    Internal,
}

impl GtpError {
    /// `loadsgf`'s failure with `why` made one line.
    pub fn cannot_load(why: impl std::fmt::Display) -> GtpError {
        GtpError::CannotLoad(why.to_string().replace(['\r', '\n'], " "))
    }
}

impl From<ParseError> for GtpError {
    fn from(e: ParseError) -> GtpError {
        match e {
            ParseError::Unknown => GtpError::UnknownCommand,
            ParseError::Syntax => GtpError::Syntax,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_the_gtp_failure_messages() {
        assert_eq!(
            GtpError::from(ParseError::Unknown).to_string(),
            "unknown command"
        );
        assert_eq!(
            GtpError::from(ParseError::Syntax).to_string(),
            "syntax error"
        );
        assert_eq!(GtpError::IllegalMove.to_string(), "illegal move");
        assert_eq!(
            GtpError::cannot_load("a\r\nb").to_string(),
            "cannot load file: a  b"
        );
        let s = GtpError::UnknownSolver.to_string();
        assert!(s.starts_with("unknown solver (expected auto, "), "{s}");
        assert!(s.ends_with(" or none)") && s.contains("fdfpn"), "{s}");
    }
}
