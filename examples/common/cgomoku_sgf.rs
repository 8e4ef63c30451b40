//! Freestyle games from the SGF files c-gomoku-cli writes (`-sgf FILE`), for the examples
//! that learn from played games (`train_order`, `tune_eval`). Each includes this file as a
//! module (`#[path]`) and uses only part of it, hence the `dead_code` allowance.
//!
//! c-gomoku-cli writes one game tree per game: a root node with `RU` (its rule number, 0 for
//! freestyle), `SZ` and `RE`, then one node per move, `B[xy]` or `W[xy]`, with a comment:
//! `C[opening move]` for the stones of the opening, the time taken for the others.
//!
//! A move's point is its two letters counted from `a`, the row as written (from the top):
//! the examples play it as the engine's row of that number, so their boards are the
//! recorded ones mirrored top to bottom, a symmetry of the freestyle rules. The shipped
//! ordering table was made that way; it is kept so that the table is reproduced byte for
//! byte.
#![allow(dead_code)]

use pcn::sgf::{GameTree, SgfError};

/// One freestyle game.
pub struct FreestyleGame {
    /// Board side (`SZ`, not checked: a size the rules refuse is the reader's to skip).
    pub size: usize,
    /// `RE` as written (`B+1`, `W+1`, `0.5-0.5`...), if any.
    pub result: Option<String>,
    /// The moves in order.
    pub moves: Vec<GameMove>,
}

/// One move of a game.
pub struct GameMove {
    /// (column, row) from the point's letters, `None` when its value is not two letters
    /// `a` to `z` (no such point: the game stops being read there).
    pub point: Option<(usize, usize)>,
    /// Part of the opening (the comment `opening move`), not chosen by the players.
    pub opening: bool,
}

/// The freestyle games (`RU[0]` and a numeric `SZ`) of an SGF file's text, in file order;
/// games under other rules are left out. An error when the text is not SGF.
pub fn freestyle_games(text: &str) -> Result<Vec<FreestyleGame>, SgfError> {
    let mut out = Vec::new();
    for tree in GameTree::parse_collection(text)? {
        let root = |id: &str| tree.root().and_then(|n| n.value(id));
        if root("RU") != Some("0") {
            continue;
        }
        let Some(size) = root("SZ").and_then(|s| s.parse::<usize>().ok()) else {
            continue;
        };
        let moves = tree
            .main_line()
            .into_iter()
            .filter_map(|n| {
                let (_, v) = n.move_value()?;
                Some(GameMove {
                    point: point_of(v),
                    opening: n.value("C") == Some("opening move"),
                })
            })
            .collect();
        out.push(FreestyleGame {
            size,
            result: tree.result().map(str::to_string),
            moves,
        });
    }
    Ok(out)
}

/// The point of a move's value: two letters `a` to `z`, (column, row) from `a`.
fn point_of(v: &str) -> Option<(usize, usize)> {
    match v.as_bytes() {
        &[x, y] if x.is_ascii_lowercase() && y.is_ascii_lowercase() => {
            Some(((x - b'a') as usize, (y - b'a') as usize))
        }
        _ => None,
    }
}
