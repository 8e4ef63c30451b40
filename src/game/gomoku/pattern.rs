//! Line patterns and their lookup tables.
//!
//! For every empty point and each of the four directions the board keeps a *line key*: the
//! contents of the five cells on either side (2 bits each: empty, black, white, wall), 20 bits
//! in all. A table maps the key to the [`Pattern`] that each colour would make by playing the
//! point. Tables are built once per rule set (lazily, shared by every board).
//!
//! Slot order inside a key: offsets -5, -4, -3, -2, -1, +1, +2, +3, +4, +5 at bits 0..20.
//! Freestyle never needs the outermost cells (a five through the centre lies within ±4 and
//! overlines win), so its table is indexed by the inner 16 bits only and stays cache-resident.

use once_cell::sync::OnceCell;

/// Cell contents in line keys and on the board.
pub const EMPTY: u8 = 0;
/// A black stone.
pub const BLACK: u8 = 1;
/// A white stone.
pub const WHITE: u8 = 2;
/// Off the board.
pub const WALL: u8 = 3;

/// What a colour gets in one direction by playing an empty point, weakest first.
///
/// `F` = free/open, `B` = blocked: `F4` has two ways to five, `B4` one; `F3` can become an
/// `F4` with one more stone, `B3` only a `B4`; and so on. Renju's recursive validity of
/// threes (is the four-making point itself forbidden?) is not part of the line pattern.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Pattern {
    /// No five is possible through this point in this line.
    Dead = 0,
    /// Playing here makes a line of six or more that does not win (exact-five rules).
    Overline = 1,
    /// One stone towards a blocked line.
    B1 = 2,
    /// One stone towards an open line.
    F1 = 3,
    /// Blocked two.
    B2 = 4,
    /// Open two.
    F2 = 5,
    /// Blocked (closed) three: one more stone makes a four.
    B3 = 6,
    /// Open three, straight or broken: one more stone makes an open four.
    F3 = 7,
    /// Four: exactly one point completes a five.
    B4 = 8,
    /// Open four (or two fours in one line): two or more points complete a five.
    F4 = 9,
    /// Five: playing here wins.
    F5 = 10,
}

impl Pattern {
    const ALL: [Pattern; 11] = [
        Pattern::Dead,
        Pattern::Overline,
        Pattern::B1,
        Pattern::F1,
        Pattern::B2,
        Pattern::F2,
        Pattern::B3,
        Pattern::F3,
        Pattern::B4,
        Pattern::F4,
        Pattern::F5,
    ];

    /// The pattern stored as `u8` in the tables.
    #[inline]
    pub fn from_u8(v: u8) -> Pattern {
        Self::ALL[(v as usize).min(10)]
    }

    /// The pattern one stone weaker along the same line (F4 -> F3, B4 -> B3, ...).
    fn downgrade(self) -> Pattern {
        match self {
            Pattern::F4 => Pattern::F3,
            Pattern::B4 => Pattern::B3,
            Pattern::F3 => Pattern::F2,
            Pattern::B3 => Pattern::B2,
            Pattern::F2 => Pattern::F1,
            Pattern::B2 => Pattern::B1,
            _ => Pattern::Dead,
        }
    }
}

/// How fives are judged, per colour.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FiveRule {
    /// Only exactly five wins for [Black, White]; longer lines are overlines.
    pub exact: [bool; 2],
    /// Caro: a five blocked by the opponent at both ends does not win.
    pub caro: bool,
    /// The table ignores the outermost cells (freestyle only).
    pub narrow: bool,
}

/// Index into a table built for `narrow` keys.
#[inline(always)]
pub fn table_index(key: u32, narrow: bool) -> usize {
    if narrow {
        ((key >> 2) & 0xFFFF) as usize
    } else {
        key as usize
    }
}

/// The cell value in slot `slot` (0..10) of a key.
#[inline]
fn slot(key: u32, s: usize) -> u8 {
    ((key >> (2 * s)) & 3) as u8
}

/// Eleven cells of a line with the centre (index 5) holding the stone being placed.
fn line_of(key: u32, own: u8) -> [u8; 11] {
    let mut line = [0u8; 11];
    for s in 0..10 {
        line[if s < 5 { s } else { s + 1 }] = slot(key, s);
    }
    line[5] = own;
    line
}

enum RunKind {
    Short,
    Five,
    Overline,
}

/// Judges the run of `own` through the centre.
fn run_through_centre(line: &[u8; 11], own: u8, exact: bool, caro: bool) -> RunKind {
    let mut l = 5;
    while l > 0 && line[l - 1] == own {
        l -= 1;
    }
    let mut r = 5;
    while r < 10 && line[r + 1] == own {
        r += 1;
    }
    let len = r - l + 1;
    if len < 5 {
        return RunKind::Short;
    }
    if exact && len > 5 {
        return RunKind::Overline;
    }
    if caro {
        let opp = own ^ 3;
        let lb = if l > 0 { line[l - 1] } else { EMPTY };
        let rb = if r < 10 { line[r + 1] } else { EMPTY };
        if lb == opp && rb == opp {
            return RunKind::Short;
        }
    }
    RunKind::Five
}

/// Slots whose cells can lie in a five through the centre (offsets -4..=+4).
const INNER_SLOTS: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

fn classify(key: u32, own: u8, rule: &FiveRule, memo: &mut [u8]) -> Pattern {
    let cached = memo[key as usize];
    if cached != u8::MAX {
        return Pattern::from_u8(cached);
    }
    let exact = rule.exact[(own - 1) as usize];
    let line = line_of(key, own);
    let p = match run_through_centre(&line, own, exact, rule.caro) {
        RunKind::Five => Pattern::F5,
        RunKind::Overline => Pattern::Overline,
        RunKind::Short => {
            let mut fives = 0;
            let mut best = Pattern::Dead;
            for &s in &INNER_SLOTS {
                if slot(key, s) != EMPTY {
                    continue;
                }
                let next = classify(key | (own as u32) << (2 * s), own, rule, memo);
                if next == Pattern::F5 {
                    fives += 1;
                } else {
                    best = best.max(next.downgrade());
                }
            }
            match fives {
                0 => best,
                1 => Pattern::B4,
                _ if rule.caro && one_block_stops_all(key, own, rule, memo) => Pattern::B4,
                _ => Pattern::F4,
            }
        }
    };
    memo[key as usize] = p as u8;
    p
}

/// Caro: whether one opponent stone stops every five of `own` through the centre. Two
/// completion points are not an open four when a single stone both takes one of them and
/// closes the far end of the other (a five blocked at both ends does not win).
fn one_block_stops_all(key: u32, own: u8, rule: &FiveRule, memo: &mut [u8]) -> bool {
    let opp = (own ^ 3) as u32;
    (0..10).any(|b| {
        if slot(key, b) != EMPTY {
            return false;
        }
        let blocked = key | opp << (2 * b);
        !INNER_SLOTS.iter().any(|&e| {
            slot(blocked, e) == EMPTY
                && classify(blocked | (own as u32) << (2 * e), own, rule, memo) == Pattern::F5
        })
    })
}

/// Builds the table for one rule: entry = black pattern | white pattern << 8.
fn build(rule: FiveRule) -> Box<[u16]> {
    let n = 1usize << 20;
    let size = if rule.narrow { 1 << 16 } else { n };
    let mut out = vec![0u16; size].into_boxed_slice();
    for (ci, own) in [BLACK, WHITE].into_iter().enumerate() {
        let mut memo = vec![u8::MAX; n];
        for (idx, entry) in out.iter_mut().enumerate() {
            let key = if rule.narrow {
                (idx as u32) << 2
            } else {
                idx as u32
            };
            let p = classify(key, own, &rule, &mut memo) as u16;
            *entry |= p << (8 * ci);
        }
    }
    out
}

static TABLES: [OnceCell<Box<[u16]>>; 5] = [
    OnceCell::new(),
    OnceCell::new(),
    OnceCell::new(),
    OnceCell::new(),
    OnceCell::new(),
];

fn table_slot(rule: &FiveRule) -> usize {
    match (rule.exact, rule.caro, rule.narrow) {
        (_, false, true) => 0,
        ([true, true], false, _) => 1,
        ([true, false], false, _) => 2,
        ([false, false], true, _) => 3,
        _ => 4,
    }
}

/// The shared table for a five rule (built on first use; about 0.2 s for the wide ones).
pub fn table(rule: FiveRule) -> &'static [u16] {
    TABLES[table_slot(&rule)].get_or_init(|| build(rule))
}

/// Whether the table for `rule` has been built already (the Gomocup front end builds them
/// all at START, so that no move pays for one).
pub fn table_built(rule: FiveRule) -> bool {
    TABLES[table_slot(&rule)].get().is_some()
}

/// 4T completion points in one direction, per narrow line key (offsets ±4, the centre holding
/// the stone being placed): for each colour a byte, bits 0-1 the number of distinct empty
/// cells that complete a five-cell window of four own stones free of opponent stones and
/// walls (capped at 3), bits 4-7 the first such cell's offset + 4 (windows scanned from the
/// leftmost). Lets the 4T rule read a move's completion points with four lookups instead of
/// scanning twenty windows (the scan was a third of the threat search's time).
fn build_four_t() -> Box<[u16]> {
    let mut out = vec![0u16; 1 << 16].into_boxed_slice();
    for (idx, entry) in out.iter_mut().enumerate() {
        // Offsets -4..=4 from slots 1..=8 of the wide key; the centre is filled per colour.
        let key = (idx as u32) << 2;
        for (ci, own) in [BLACK, WHITE].into_iter().enumerate() {
            let line = line_of(key, own);
            // line[5] is the centre; offset o sits at line[5 + o].
            let mut found = [0i32; 3];
            let mut n = 0;
            for start in -4i32..=0 {
                let mut count = 0;
                let mut empty = None;
                let mut ok = true;
                for o in start..start + 5 {
                    match line[(5 + o) as usize] {
                        v if v == own => count += 1,
                        EMPTY => empty = Some(o),
                        _ => {
                            ok = false;
                            break;
                        }
                    }
                }
                if let (true, 4, Some(e)) = (ok, count, empty) {
                    if !found[..n].contains(&e) && n < 3 {
                        found[n] = e;
                        n += 1;
                    }
                }
            }
            let byte = n as u16
                | if n > 0 {
                    ((found[0] + 4) as u16) << 4
                } else {
                    0
                };
            *entry |= byte << (8 * ci);
        }
    }
    out
}

static FOUR_T: OnceCell<Box<[u16]>> = OnceCell::new();

/// The shared 4T completion table (see [`build_four_t`]), indexed like the narrow pattern
/// tables: `table_index(key, true)`.
pub fn four_t_table() -> &'static [u16] {
    FOUR_T.get_or_init(build_four_t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a key from a picture of the ten neighbours, e.g. "_XX_.XX___" (the '.' is the
    /// centre and is skipped); X = black, O = white, # = wall, _ = empty.
    fn key(s: &str) -> u32 {
        let mut k = 0u32;
        let mut i = 0;
        for ch in s.chars() {
            let v = match ch {
                '.' => continue,
                'X' => BLACK,
                'O' => WHITE,
                '#' => WALL,
                _ => EMPTY,
            };
            k |= (v as u32) << (2 * i);
            i += 1;
        }
        assert_eq!(i, 10, "picture must have ten neighbours");
        k
    }

    fn black(rule: FiveRule, s: &str) -> Pattern {
        let t = table(rule);
        Pattern::from_u8((t[table_index(key(s), rule.narrow)] & 0xFF) as u8)
    }

    const FREE: FiveRule = FiveRule {
        exact: [false, false],
        caro: false,
        narrow: true,
    };
    const EXACT: FiveRule = FiveRule {
        exact: [true, true],
        caro: false,
        narrow: false,
    };
    const CARO: FiveRule = FiveRule {
        exact: [false, false],
        caro: true,
        narrow: false,
    };

    #[test]
    fn basic_patterns() {
        assert_eq!(black(FREE, "_XXXX._____"), Pattern::F5);
        assert_eq!(black(FREE, "__XXX._O___"), Pattern::F4);
        assert_eq!(black(FREE, "_OXXX._____"), Pattern::B4);
        assert_eq!(black(FREE, "___XX._____"), Pattern::F3);
        assert_eq!(black(FREE, "____X._____"), Pattern::F2);
        assert_eq!(black(FREE, "___X_._____"), Pattern::F2);
        assert_eq!(black(FREE, "___OX._____"), Pattern::B2);
        assert_eq!(black(FREE, "____O.X____"), Pattern::B2);
        assert_eq!(black(FREE, "__OO_.O____"), Pattern::Dead);
        assert_eq!(black(FREE, "__X_X.X_X__"), Pattern::F4); // X_X.X_X (X_XXX_X): two fours in one line
        assert_eq!(black(FREE, "XXXXX._____"), Pattern::F5); // overline wins in freestyle
    }

    #[test]
    fn exact_and_caro() {
        assert_eq!(black(EXACT, "XXXXX._____"), Pattern::Overline);
        assert_eq!(black(EXACT, "X_XXX._____"), Pattern::B4); // completing at -4 makes six
        assert_eq!(black(EXACT, "_XXXX._____"), Pattern::F5);
        assert_eq!(black(EXACT, "OXXXX.O____"), Pattern::F5);
        assert_eq!(black(CARO, "OXXXX.O____"), Pattern::Dead);
        assert_eq!(black(CARO, "OXXXX._O___"), Pattern::F5);
        assert_eq!(black(CARO, "_OXXX._O___"), Pattern::Dead);
        // O_XXX._O: completing either end makes a five, but White at -4 both takes the left
        // completion and closes the right five's far end.
        assert_eq!(black(CARO, "O_XXX._O___"), Pattern::B4);
        assert_eq!(black(FREE, "O_XXX._O___"), Pattern::F4);
        assert_eq!(black(CARO, "__XXX.__O__"), Pattern::F4);
    }
}
