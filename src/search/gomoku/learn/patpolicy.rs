//! A learned Gomoku move policy over line patterns (no network): the logit of an empty point
//! is the sum, over its four directions, of one weight per *line pattern*: the eight cells
//! within distance four along the line, seen from the side to move (own stone, opponent's
//! stone, empty, off the board), a line and its mirror image sharing one weight; plus one
//! weight for the point's *combination*: the two strongest line patterns the side to move
//! makes there and the strongest the opponent would make (double threats, attack while
//! defending). That is 65 536 + 1 331 weights, five table lookups per point, cheap enough
//! for every solver node.
//!
//! The static threat scores rank threats well but leave the quiet moves nearly flat; this
//! table is trained (`pcn train-patterns`, [`crate::train::patterns`]) to imitate the
//! alpha-beta player's choices in its own self-play games from random openings, so it ranks
//! quiet moves the way a search does. The weights shipped in `weights/gomoku_patterns.bin` were made by the command
//! recorded in `weights/README.md`; nothing of the shared problems or networks goes into them.

use once_cell::sync::Lazy;

use super::{logit, read_weights, write_weights, WeightFileError};
use crate::game::gomoku::{Gomoku, Pattern};
use crate::game::{Color, Game};
use crate::search::gomoku::greedy::{attack_defence, cell_score};

/// Number of line patterns (8 cells, 2 bits each).
pub const KEYS: usize = 1 << 16;

/// Number of combination weights (11 patterns cubed).
pub const COMBOS: usize = 11 * 11 * 11;

/// All weights: line patterns, then combinations.
pub const WEIGHTS: usize = KEYS + COMBOS;

/// File magic of a weight file: the magic, then [`WEIGHTS`] little-endian `f32`.
const MAGIC: &[u8; 8] = b"PCNPAT2\n";

/// Errors reading a weight file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatternError {
    /// Not a pattern weight file (magic or size wrong).
    #[error("not a pcn pattern weight file ({0})")]
    Format(String),
    /// A weight is NaN or infinite.
    #[error("pattern weight {0} is not finite")]
    NotFinite(usize),
    /// The file could not be read.
    #[error("{0}")]
    Io(String),
}

impl From<WeightFileError> for PatternError {
    fn from(e: WeightFileError) -> Self {
        match e {
            WeightFileError::Format(why) => PatternError::Format(why),
            WeightFileError::NotFinite(i) => PatternError::NotFinite(i),
        }
    }
}

/// Swaps black and white in every 2-bit slot of a 16-bit key (walls and empties stay).
#[inline]
fn swap_colours(k: u32) -> u32 {
    // A slot is 01 (black) or 10 (white) exactly when its two bits differ: flip both then.
    let lo = k & 0x5555;
    let hi = (k >> 1) & 0x5555;
    let differ = lo ^ hi;
    k ^ (differ | (differ << 1))
}

/// Reverses the order of the eight 2-bit slots (the line seen from the other end).
#[inline]
fn mirror(k: u32) -> u32 {
    let mut r = 0;
    for i in 0..8 {
        r |= ((k >> (2 * i)) & 3) << (2 * (7 - i));
    }
    r
}

/// The canonical pattern index of line key `key` (a raw 20-bit key, see
/// [`Gomoku::line_key`]) for `me` to move: the inner eight cells, own stones as black, and
/// the smaller of the line and its mirror.
#[inline]
pub fn feature_of_key(key: u32, me: Color) -> usize {
    let mut k = (key >> 2) & 0xFFFF;
    if me == Color::White {
        k = swap_colours(k);
    }
    CANON[k as usize] as usize
}

/// Canonical index per oriented 16-bit key (mirror pairs share the smaller).
static CANON: Lazy<Vec<u16>> =
    Lazy::new(|| (0..KEYS as u32).map(|k| k.min(mirror(k)) as u16).collect());

/// The combination index of a point from both colours' four line patterns: the strongest
/// and second strongest of the side to move's, and the opponent's strongest.
#[inline]
pub fn combo_of(mine: [Pattern; 4], theirs: [Pattern; 4]) -> usize {
    let (mut a, mut b) = (0usize, 0usize);
    for p in mine {
        let v = p as usize;
        if v > a {
            b = a;
            a = v;
        } else if v > b {
            b = v;
        }
    }
    let c = theirs.iter().map(|&p| p as usize).max().unwrap_or(0);
    (a * 11 + b) * 11 + c
}

/// The five features of the empty `cell` for the side to move: four line patterns (indices
/// below [`KEYS`]) and the combination (index [`KEYS`] + [`combo_of`]).
#[inline]
pub fn features(g: &Gomoku, cell: usize) -> [u32; 5] {
    let me = g.to_move();
    let mut f = [0u32; 5];
    for (d, x) in f.iter_mut().take(4).enumerate() {
        *x = feature_of_key(g.line_key(cell, d), me) as u32;
    }
    f[4] = (KEYS + combo_of(g.patterns(cell, me), g.patterns(cell, me.opp()))) as u32;
    f
}

/// [`features`] from the raw line keys of a point (as stored in a [`crate::train::patterns::Sample`]), the patterns
/// read through `g`'s rule tables.
pub fn features_of_keys(g: &Gomoku, keys: &[u32; 4], me: Color) -> [u32; 5] {
    let mut f = [0u32; 5];
    let mut mine = [Pattern::Dead; 4];
    let mut theirs = [Pattern::Dead; 4];
    for (d, &k) in keys.iter().enumerate() {
        f[d] = feature_of_key(k, me) as u32;
        mine[d] = g.pattern_of_key(k, me);
        theirs[d] = g.pattern_of_key(k, me.opp());
    }
    f[4] = (KEYS + combo_of(mine, theirs)) as u32;
    f
}

/// The pattern weights.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternPolicy {
    w: Vec<f32>,
}

impl Default for PatternPolicy {
    fn default() -> Self {
        PatternPolicy {
            w: vec![0.0; WEIGHTS],
        }
    }
}

impl PatternPolicy {
    /// Reads a weight file.
    pub fn load(path: &std::path::Path) -> Result<PatternPolicy, PatternError> {
        let b = std::fs::read(path).map_err(|e| PatternError::Io(e.to_string()))?;
        Self::from_bytes(&b)
    }

    /// Reads a weight file's bytes.
    pub fn from_bytes(b: &[u8]) -> Result<PatternPolicy, PatternError> {
        let w = read_weights(b, MAGIC, WEIGHTS)?;
        Ok(PatternPolicy { w })
    }

    /// The weight file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        write_weights(MAGIC, &self.w)
    }

    /// The weights: [`KEYS`] line patterns, then [`COMBOS`] combinations.
    pub fn weights(&self) -> &[f32] {
        &self.w
    }

    /// The weights, to change (training).
    pub fn weights_mut(&mut self) -> &mut [f32] {
        &mut self.w
    }

    /// The logit of a point from its features.
    #[inline]
    pub fn logit_of(&self, f: &[u32; 5]) -> f32 {
        logit(&self.w, f)
    }

    /// The logit of the empty `cell` for the side to move.
    #[inline]
    pub fn logit(&self, g: &Gomoku, cell: usize) -> f32 {
        self.logit_of(&features(g, cell))
    }
}

/// The shipped weights (`weights/gomoku_patterns.bin`, compiled in so that the engine needs
/// no file at run time). A unit test checks that they load.
pub static BUILTIN: Lazy<Option<PatternPolicy>> = Lazy::new(|| {
    let r = PatternPolicy::from_bytes(include_bytes!("../../../../weights/gomoku_patterns.bin"));
    if let Err(e) = &r {
        log::warn!("built-in pattern weights unusable: {e}");
    }
    r.ok()
});

/// The static threat score of a candidate for the side to move (the threat priors' ranking).
pub fn static_score(g: &Gomoku, cell: usize) -> f32 {
    let me = g.to_move();
    attack_defence(cell_score(g, cell, me), cell_score(g, cell, me.opp()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::Rule;
    use crate::search::gomoku::greedy::candidates;

    #[test]
    fn colour_swap_and_mirror_are_involutions() {
        for k in [0u32, 0x1234, 0xFFFF, 0x9a5c, 0x0003, 0xC000] {
            assert_eq!(swap_colours(swap_colours(k)), k);
            assert_eq!(mirror(mirror(k)), k);
        }
        // Black (01) <-> white (10); wall (11) and empty (00) stay.
        assert_eq!(swap_colours(0b11_10_01_00), 0b11_01_10_00);
        assert_eq!(mirror(0b01), 0b01 << 14);
    }

    #[test]
    fn features_are_colour_relative_and_mirror_symmetric() {
        // Black to move with a black stone left of the point sees the same feature as White
        // to move with a white stone on its right.
        let mut a = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        a.place(a.parse_gtp("G8").unwrap(), Color::Black).unwrap();
        a.set_to_move(Color::Black);
        let mut b = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        b.place(b.parse_gtp("J8").unwrap(), Color::White).unwrap();
        b.set_to_move(Color::White);
        let h8 = a.cell_of(a.parse_gtp("H8").unwrap());
        assert_eq!(features(&a, h8)[0], features(&b, h8)[0]);
        // With the colours not swapped the features differ (own stone against opponent's).
        b.set_to_move(Color::Black);
        assert_ne!(features(&a, h8)[0], features(&b, h8)[0]);
    }

    #[test]
    fn weight_file_round_trip_and_errors() {
        let mut p = PatternPolicy::default();
        p.w[7] = 1.5;
        let b = p.to_bytes();
        assert_eq!(PatternPolicy::from_bytes(&b), Ok(p));
        assert!(matches!(
            PatternPolicy::from_bytes(&b[..100]),
            Err(PatternError::Format(_))
        ));
        let mut bad = b.clone();
        bad[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            PatternPolicy::from_bytes(&bad),
            Err(PatternError::NotFinite(0))
        );
    }

    #[test]
    fn builtin_weights_load_and_rank_a_win_first() {
        let p = BUILTIN.as_ref().expect("weights/gomoku_patterns.bin loads");
        // 4T, Black to move with an open three (White has two stones in a row): the open
        // four (a win under 4T) must outrank every other point. (Fives never occur in the
        // 4T training games: a four forces its block, so the table need not know them.)
        let mut g = Gomoku::new(15, 15, Rule::FourT).unwrap();
        for (b, w) in [("H8", "H10"), ("J8", "J10"), ("K8", "C3")] {
            g.play(g.parse_gtp(b).unwrap()).unwrap();
            g.play(g.parse_gtp(w).unwrap()).unwrap();
        }
        let mut cells = Vec::new();
        candidates(&g, &mut cells);
        let best = cells
            .iter()
            .copied()
            .max_by(|&x, &y| p.logit(&g, x).total_cmp(&p.logit(&g, y)))
            .unwrap();
        let name = g.move_to_gtp(g.move_of(best));
        assert!(name == "G8" || name == "L8", "got {name}");
    }
}
