//! Renju forbidden points for Black.
//!
//! Black may not play a point that makes a double three, a double four or an overline, unless
//! the same move makes exactly five.

use super::pattern::Pattern;
use super::Gomoku;
use crate::game::Color;

/// Whether Black playing the empty padded `cell` is forbidden.
pub fn is_forbidden(g: &Gomoku, cell: usize) -> bool {
    let pats = g.patterns(cell, Color::Black);
    if pats.contains(&Pattern::F5) {
        return false;
    }
    if pats.contains(&Pattern::Overline) {
        return true;
    }
    let fours = pats
        .iter()
        .filter(|&&p| p == Pattern::B4 || p == Pattern::F4)
        .count();
    let threes = pats.iter().filter(|&&p| p == Pattern::F3).count();
    fours >= 2 || threes >= 2
}
