//! SGF (FF[4]) game records: reading ([`parse`]), writing ([`write`]) and turning a main
//! line into a game position ([`to_gomoku`], [`to_go`], [`to_killallgo`]).
//!
//! The tree keeps every property as raw (unescaped) text, so unknown properties survive a
//! read/write round trip; typed accessors read the ones the engine needs (B, W, AB, AW, AE,
//! PL, SZ including `SZ[w:h]`, KM, RE, GM, C).
//!
//! Coordinates: SGF `B[pq]` is x = p - 'a', y = (height - 1) - (q - 'a'): our y = 0 is the
//! bottom row, SGF's first row is the top. An empty value, or `tt` on boards up to 19x19, is
//! a pass. Letters `a`..`z` then `A`..`Z` cover sides up to 52.
//!
//! ```
//! let t = pcn::sgf::GameTree::parse("(;GM[1]SZ[9];B[cc];W[])").unwrap();
//! let moves = t.main_line_moves().unwrap();
//! assert_eq!(moves[0].point, Some((2, 6)));
//! assert_eq!(moves[1].point, None);
//! ```

pub mod parse;
pub mod write;

use crate::game::go::{Go, KoRule};
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::killallgo::{KillallGo, KillallGoRules, Variant};
use crate::game::{Color, Game, Move, MoveError};

/// Errors from reading SGF text or turning it into a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SgfError {
    /// The text is not well-formed SGF.
    #[error("SGF syntax error at line {line}, column {column} (byte {offset}): {msg}")]
    Syntax {
        /// Byte offset into the text.
        offset: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column (characters).
        column: usize,
        /// What went wrong.
        msg: String,
    },
    /// A property value cannot be read.
    #[error("bad SGF value {prop}[{value}]: {msg}")]
    BadValue {
        /// Property identifier.
        prop: String,
        /// The value (truncated).
        value: String,
        /// What went wrong.
        msg: &'static str,
    },
    /// The record is well-formed but not something this function handles.
    #[error("unsupported SGF record: {0}")]
    Unsupported(String),
    /// A move of the main line is illegal under the chosen rules.
    #[error("illegal move {mv} at move {number}: {source}")]
    IllegalMove {
        /// 1-based index among the main line's moves.
        number: usize,
        /// The move as written.
        mv: String,
        /// The rules' reason.
        source: MoveError,
    },
}

/// One property: identifier and its (unescaped) values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// Identifier as written (`B`, `AB`, `SZ`, ...).
    pub id: String,
    /// Values with escapes resolved.
    pub values: Vec<String>,
}

/// A node: its properties in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// Properties in file order.
    pub props: Vec<Property>,
}

impl Node {
    /// The property with this identifier.
    pub fn get(&self, id: &str) -> Option<&Property> {
        self.props.iter().find(|p| p.id == id)
    }
    /// The first value of a property.
    pub fn value(&self, id: &str) -> Option<&str> {
        self.get(id)
            .and_then(|p| p.values.first())
            .map(|s| s.as_str())
    }
    /// Sets (replaces) a property.
    pub fn set(&mut self, id: &str, values: Vec<String>) {
        match self.props.iter_mut().find(|p| p.id == id) {
            Some(p) => p.values = values,
            None => self.props.push(Property {
                id: id.to_string(),
                values,
            }),
        }
    }
    /// The move in this node, if it has a `B` or `W` property.
    pub fn move_value(&self) -> Option<(Color, &str)> {
        if let Some(v) = self.value("B") {
            return Some((Color::Black, v));
        }
        self.value("W").map(|v| (Color::White, v))
    }
}

/// A game tree: a sequence of nodes followed by variations (the first is the main line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameTree {
    /// The node sequence (the first node of the top tree is the root).
    pub nodes: Vec<Node>,
    /// Alternative continuations after the last node.
    pub variations: Vec<GameTree>,
}

/// A setup stone: colour and (x, y).
pub type SetupStone = (Color, (usize, usize));

/// A move of the main line: colour and point (`None` = pass), in our coordinates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SgfMove {
    /// Who moves.
    pub color: Color,
    /// (x, y) with y = 0 the bottom row; `None` for a pass.
    pub point: Option<(usize, usize)>,
}

fn bad(prop: &str, value: &str, msg: &'static str) -> SgfError {
    SgfError::BadValue {
        prop: prop.to_string(),
        value: value.chars().take(32).collect(),
        msg,
    }
}

fn letter_index(c: u8) -> Option<usize> {
    match c {
        b'a'..=b'z' => Some((c - b'a') as usize),
        b'A'..=b'Z' => Some((c - b'A') as usize + 26),
        _ => None,
    }
}

fn index_letter(i: usize) -> char {
    if i < 26 {
        (b'a' + i as u8) as char
    } else {
        (b'A' + (i - 26) as u8) as char
    }
}

/// Reads a point value for a `width` x `height` board: `Ok(None)` for a pass (empty, or
/// `tt` on boards up to 19x19).
pub fn parse_point(
    prop: &str,
    v: &str,
    width: usize,
    height: usize,
) -> Result<Option<(usize, usize)>, SgfError> {
    let v = v.trim();
    if v.is_empty() || (v == "tt" && width <= 19 && height <= 19) {
        return Ok(None);
    }
    let b = v.as_bytes();
    if b.len() != 2 {
        return Err(bad(prop, v, "a point has two letters"));
    }
    let (Some(p), Some(q)) = (letter_index(b[0]), letter_index(b[1])) else {
        return Err(bad(prop, v, "point letters must be a-z or A-Z"));
    };
    if p >= width || q >= height {
        return Err(bad(prop, v, "point off the board"));
    }
    Ok(Some((p, height - 1 - q)))
}

/// SGF text of point (x, y) (y = 0 bottom) on a board of `height` rows.
pub fn point_text(x: usize, y: usize, height: usize) -> String {
    let q = height.saturating_sub(1).saturating_sub(y);
    format!("{}{}", index_letter(x), index_letter(q))
}

/// Reads a point list value, including the compressed rectangle form `aa:cc`.
pub fn parse_point_list(
    prop: &str,
    v: &str,
    width: usize,
    height: usize,
) -> Result<Vec<(usize, usize)>, SgfError> {
    if let Some((a, b)) = v.split_once(':') {
        let (Some((x1, y1)), Some((x2, y2))) = (
            parse_point(prop, a, width, height)?,
            parse_point(prop, b, width, height)?,
        ) else {
            return Err(bad(prop, v, "a rectangle needs two points"));
        };
        let mut out = Vec::new();
        for y in y1.min(y2)..=y1.max(y2) {
            for x in x1.min(x2)..=x1.max(x2) {
                out.push((x, y));
            }
        }
        return Ok(out);
    }
    match parse_point(prop, v, width, height)? {
        Some(p) => Ok(vec![p]),
        None => Err(bad(prop, v, "empty point in a point list")),
    }
}

impl GameTree {
    /// Reads the first game tree of an SGF collection.
    pub fn parse(text: &str) -> Result<GameTree, SgfError> {
        let mut trees = parse::parse_collection(text)?;
        Ok(trees.swap_remove(0))
    }

    /// Reads the first game tree from raw bytes; invalid UTF-8 (files in another `CA`
    /// charset) is replaced rather than rejected, since the properties the engine reads are
    /// ASCII.
    pub fn parse_bytes(bytes: &[u8]) -> Result<GameTree, SgfError> {
        GameTree::parse(&String::from_utf8_lossy(bytes))
    }

    /// Reads every game tree of a collection.
    pub fn parse_collection(text: &str) -> Result<Vec<GameTree>, SgfError> {
        parse::parse_collection(text)
    }

    /// Writes this tree as SGF text.
    pub fn to_sgf(&self) -> String {
        write::write_tree_string(self)
    }

    /// A new record with a root node `FF[4] GM[gm] SZ[...]` (`SZ[w:h]` when not square).
    pub fn new_record(gm: u32, width: usize, height: usize) -> GameTree {
        let mut root = Node::default();
        root.set("FF", vec!["4".into()]);
        root.set("GM", vec![gm.to_string()]);
        let sz = if width == height {
            width.to_string()
        } else {
            format!("{width}:{height}")
        };
        root.set("SZ", vec![sz]);
        GameTree {
            nodes: vec![root],
            variations: Vec::new(),
        }
    }

    /// Appends a move node (point `None` = pass, written as an empty value).
    pub fn push_move(&mut self, color: Color, point: Option<(usize, usize)>) {
        let (_, h) = self.size().unwrap_or((19, 19));
        let v = point.map_or(String::new(), |(x, y)| point_text(x, y, h));
        let mut n = Node::default();
        n.set(&color.letter().to_string(), vec![v]);
        self.nodes.push(n);
    }

    /// A record of a game's moves (`moves` as action indices, pass = `width * height`).
    pub fn from_moves(
        gm: u32,
        width: usize,
        height: usize,
        moves: impl IntoIterator<Item = (Color, Move)>,
    ) -> GameTree {
        let mut t = GameTree::new_record(gm, width, height);
        for (c, m) in moves {
            let m = m as usize;
            let p = (m < width * height).then(|| (m % width, m / width));
            t.push_move(c, p);
        }
        t
    }

    /// The root node.
    pub fn root(&self) -> Option<&Node> {
        self.nodes.first()
    }

    fn root_value(&self, id: &str) -> Option<&str> {
        self.root().and_then(|n| n.value(id))
    }

    /// `GM` (1 = Go, 4 = Gomoku); 1 when absent.
    pub fn game_type(&self) -> Result<u32, SgfError> {
        match self.root_value("GM") {
            None => Ok(1),
            Some(v) => v.trim().parse().map_err(|_| bad("GM", v, "not a number")),
        }
    }

    /// Board size (width, height) from `SZ[n]` or `SZ[w:h]`; 19 for Go and 15 for Gomoku
    /// when absent.
    pub fn size(&self) -> Result<(usize, usize), SgfError> {
        let Some(v) = self.root_value("SZ") else {
            return Ok(if self.game_type()? == 4 {
                (15, 15)
            } else {
                (19, 19)
            });
        };
        let num = |s: &str| -> Result<usize, SgfError> {
            match s.trim().parse::<usize>() {
                Ok(n) if (1..=52).contains(&n) => Ok(n),
                _ => Err(bad("SZ", v, "size must be 1..=52")),
            }
        };
        match v.split_once(':') {
            Some((w, h)) => Ok((num(w)?, num(h)?)),
            None => {
                let n = num(v)?;
                Ok((n, n))
            }
        }
    }

    /// `KM` (komi), if present.
    pub fn komi(&self) -> Result<Option<f32>, SgfError> {
        self.root_value("KM")
            .map(|v| v.trim().parse().map_err(|_| bad("KM", v, "not a number")))
            .transpose()
    }

    /// `RE` (result text such as `W+R`), if present.
    pub fn result(&self) -> Option<&str> {
        self.root_value("RE")
    }

    /// The root comment `C`, if present.
    pub fn comment(&self) -> Option<&str> {
        self.root_value("C")
    }

    /// `PL` (side to move after setup), if present.
    pub fn player(&self) -> Result<Option<Color>, SgfError> {
        match self.root_value("PL") {
            None => Ok(None),
            Some(v) => match v.trim() {
                "B" | "b" => Ok(Some(Color::Black)),
                "W" | "w" => Ok(Some(Color::White)),
                _ => Err(bad("PL", v, "must be B or W")),
            },
        }
    }

    /// The main line: this tree's nodes, then the first variation's, recursively.
    pub fn main_line(&self) -> Vec<&Node> {
        let mut out: Vec<&Node> = Vec::new();
        let mut t = self;
        loop {
            out.extend(t.nodes.iter());
            match t.variations.first() {
                Some(v) => t = v,
                None => return out,
            }
        }
    }

    /// Setup stones of the root (`AB`, `AW`; `AE` removes), as (colour, point) in file order.
    pub fn setup_stones(&self) -> Result<Vec<SetupStone>, SgfError> {
        let (w, h) = self.size()?;
        let mut out: Vec<(Color, (usize, usize))> = Vec::new();
        let Some(root) = self.root() else {
            return Ok(out);
        };
        for p in &root.props {
            let color = match p.id.as_str() {
                "AB" => Some(Color::Black),
                "AW" => Some(Color::White),
                "AE" => None,
                _ => continue,
            };
            for v in &p.values {
                for pt in parse_point_list(&p.id, v, w, h)? {
                    out.retain(|&(_, q)| q != pt);
                    if let Some(c) = color {
                        out.push((c, pt));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The moves (B/W properties) of the main line, in order.
    pub fn main_line_moves(&self) -> Result<Vec<SgfMove>, SgfError> {
        let (w, h) = self.size()?;
        let mut out = Vec::new();
        for n in self.main_line() {
            if let Some((color, v)) = n.move_value() {
                let id = color.letter().to_string();
                out.push(SgfMove {
                    color,
                    point: parse_point(&id, v, w, h)?,
                });
            }
        }
        Ok(out)
    }
}

fn illegal(number: usize, m: &SgfMove, source: MoveError) -> SgfError {
    let mv = match m.point {
        Some((x, y)) => format!("{}[{}]", m.color.letter(), crate::game::gtp_vertex(x, y)),
        None => format!("{}[pass]", m.color.letter()),
    };
    SgfError::IllegalMove { number, mv, source }
}

/// Replays a Gomoku record (`GM[4]`): root setup stones, then the main line. A move by the
/// colour not to move is placed as a setup stone.
pub fn to_gomoku(tree: &GameTree, rule: Rule) -> Result<Gomoku, SgfError> {
    to_gomoku_at(tree, rule, usize::MAX)
}

/// [`to_gomoku`] replaying only the first `max_moves` moves of the main line (GTP
/// `loadsgf file n` style: the position before move `n + 1`).
pub fn to_gomoku_at(tree: &GameTree, rule: Rule, max_moves: usize) -> Result<Gomoku, SgfError> {
    let gm = tree.game_type()?;
    if gm != 4 {
        return Err(SgfError::Unsupported(format!("GM[{gm}] is not Gomoku")));
    }
    let (w, h) = tree.size()?;
    let mut g = Gomoku::new(w, h, rule).map_err(|e| SgfError::Unsupported(e.to_string()))?;
    for (i, (c, (x, y))) in tree.setup_stones()?.into_iter().enumerate() {
        let m = (y * w + x) as Move;
        g.place(m, c).map_err(|e| {
            illegal(
                i + 1,
                &SgfMove {
                    color: c,
                    point: Some((x, y)),
                },
                e,
            )
        })?;
    }
    for (i, sm) in tree.main_line_moves()?.iter().take(max_moves).enumerate() {
        let Some((x, y)) = sm.point else {
            return Err(illegal(i + 1, sm, MoveError::Illegal("Gomoku has no pass")));
        };
        let m = (y * w + x) as Move;
        let r = if sm.color == g.to_move() {
            g.play(m)
        } else {
            g.place(m, sm.color)
        };
        r.map_err(|e| illegal(i + 1, sm, e))?;
    }
    if let Some(c) = tree.player()? {
        g.set_to_move(c);
    }
    Ok(g)
}

/// Replays a Go record (`GM[1]`): setup stones, `PL`, `KM`, then the main line (moves out
/// of turn are played for the colour given).
pub fn to_go(tree: &GameTree, ko: KoRule) -> Result<Go, SgfError> {
    to_go_at(tree, ko, usize::MAX)
}

/// [`to_go`] replaying only the first `max_moves` moves of the main line.
pub fn to_go_at(tree: &GameTree, ko: KoRule, max_moves: usize) -> Result<Go, SgfError> {
    let gm = tree.game_type()?;
    if gm != 1 {
        return Err(SgfError::Unsupported(format!("GM[{gm}] is not Go")));
    }
    let (w, h) = tree.size()?;
    let mut g = Go::new(w, h, ko).map_err(|e| SgfError::Unsupported(e.to_string()))?;
    if let Some(k) = tree.komi()? {
        g.set_komi(k);
    }
    for (i, (c, (x, y))) in tree.setup_stones()?.into_iter().enumerate() {
        let m = (y * w + x) as Move;
        g.place(m, c).map_err(|e| {
            illegal(
                i + 1,
                &SgfMove {
                    color: c,
                    point: Some((x, y)),
                },
                e,
            )
        })?;
    }
    if let Some(c) = tree.player()? {
        g.set_to_move(c);
    } else if !tree.setup_stones()?.is_empty() {
        g.set_to_move(Color::Black);
    }
    for (i, sm) in tree.main_line_moves()?.iter().take(max_moves).enumerate() {
        let m = sm.point.map_or(g.pass_move(), |(x, y)| (y * w + x) as Move);
        if sm.color == g.to_move() {
            g.play(m)
        } else if m == g.pass_move() {
            g.set_to_move(sm.color);
            g.play(m)
        } else {
            g.play_color(m, sm.color)
        }
        .map_err(|e| illegal(i + 1, sm, e))?;
    }
    Ok(g)
}

/// Replays a Killall-Go record (`GM[1]`, `SZ[9]` for the PCN variant or `SZ[7]`): the main
/// line's moves must follow the rules, except that Black's opening stones may come without
/// White's forced passes. Setup stones (`AB`/`AW`) are not supported (the problems use
/// moves).
pub fn to_killallgo(tree: &GameTree) -> Result<KillallGo, SgfError> {
    to_killallgo_at(tree, usize::MAX)
}

/// [`to_killallgo`] replaying only the first `max_moves` moves of the main line (passes and
/// the forced opening count as moves, as in the PCN golden files' `moves_applied`).
pub fn to_killallgo_at(tree: &GameTree, max_moves: usize) -> Result<KillallGo, SgfError> {
    to_killallgo_with(tree, max_moves, KillallGoRules::default())
}

/// [`to_killallgo_at`] under the given knowledge rules (the moves are checked under them).
pub fn to_killallgo_with(
    tree: &GameTree,
    max_moves: usize,
    rules: KillallGoRules,
) -> Result<KillallGo, SgfError> {
    let gm = tree.game_type()?;
    if gm != 1 {
        return Err(SgfError::Unsupported(format!("GM[{gm}] is not Go")));
    }
    let (w, h) = tree.size()?;
    let variant = (w == h)
        .then(|| Variant::from_size(w))
        .flatten()
        .ok_or_else(|| SgfError::Unsupported(format!("Killall-Go board {w}x{h}")))?;
    if !tree.setup_stones()?.is_empty() {
        return Err(SgfError::Unsupported(
            "Killall-Go records with setup stones".into(),
        ));
    }
    let mut g = KillallGo::with_rules(variant, rules);
    for (i, sm) in tree.main_line_moves()?.iter().take(max_moves).enumerate() {
        let r = match sm.point {
            None if sm.color == g.to_move() => g.play(g.pass_move()),
            None => Err(MoveError::Illegal("not this colour's turn")),
            Some((x, y)) => g.place((y * w + x) as Move, sm.color),
        };
        r.map_err(|e| illegal(i + 1, sm, e))?;
    }
    Ok(g)
}

/// A game whose positions SGF records hold: its `GM` value and how a main line becomes a
/// position under this game's rules (the front ends' `loadsgf`, `printsgf`).
pub trait SgfGame: Game {
    /// SGF `GM` value (1 = Go family, 4 = Gomoku).
    const GM: u32;

    /// Loads the main line of `tree` up to `max_moves` moves, keeping this game's rules.
    fn load_sgf(&self, tree: &GameTree, max_moves: usize) -> Result<Self, SgfError>;
}

impl SgfGame for KillallGo {
    const GM: u32 = 1;

    fn load_sgf(&self, tree: &GameTree, max_moves: usize) -> Result<Self, SgfError> {
        to_killallgo_at(tree, max_moves)
    }
}

impl SgfGame for Gomoku {
    const GM: u32 = 4;

    fn load_sgf(&self, tree: &GameTree, max_moves: usize) -> Result<Self, SgfError> {
        to_gomoku_at(tree, self.rule(), max_moves)
    }
}
