//! Proof trees as SGF files, and their independent checker ([`verify`]).
//!
//! # File format
//!
//! A proof file is an ordinary SGF game tree (`GM[4]` Gomoku, `GM[1]` Killall-Go):
//!
//! * The root node carries `FF`, `GM`, `SZ`, the problem's setup properties (`AB`, `AW`,
//!   `AE`, `PL`) and a comment `C[...]` whose first line is the machine-readable header
//!   (see [`ProofHeader`]), for example
//!   `pcn-proof: game=gomoku rule=4t size=15 prover=B plies=30 tomove=B solver=fdfpn`.
//! * The first `plies` move nodes of the main line replay the problem position (the same
//!   replay as `pcn solve` uses to load the problem).
//! * Everything below the `plies`-th move node is the proof tree: at a node where the prover
//!   is to move (an OR node) one move (more are allowed, each must then be a sound proof);
//!   at a node where the opponent is to move (an AND node) one child for every legal move;
//!   every leaf is a finished game won by the prover. Chains of single children are written
//!   as node sequences, branches as variations.
//!
//! The header is one line of `key=value` tokens after the literal `pcn-proof:`; unknown keys
//! are kept and ignored, so later versions may add fields. Killall-Go proofs made with a
//! knowledge rule switched off say so ([`BENSON_KEY`], [`OWN_EYE_KEY`]), and the checker
//! plays by the recorded rules.

pub mod verify;

use std::fmt;

use crate::game::gomoku::Rule;
use crate::game::killallgo::KillallGoRules;
use crate::game::{Color, Move};
use crate::search::solver::ProofTree;
use crate::sgf::{GameTree, Node};
use crate::util::OnOff;

/// The literal that starts a proof header line.
pub const HEADER_TAG: &str = "pcn-proof:";

/// Errors from reading, writing or checking proofs.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The SGF text is malformed or its problem position does not replay.
    #[error("{0}")]
    Sgf(#[from] crate::sgf::SgfError),
    /// The root comment has no usable `pcn-proof:` header.
    #[error("bad proof header: {0}")]
    Header(String),
    /// The tree is well-formed but is not a proof.
    #[error("unsound proof at [{}]: {reason}", .path.join(" "))]
    Unsound {
        /// Moves from the proof's root to the faulty node (GTP vertices).
        path: Vec<String>,
        /// What is wrong there.
        reason: String,
    },
}

/// Which game a proof is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GameKind {
    /// Gomoku under a [`Rule`].
    Gomoku,
    /// Killall-Go (`SZ[9]`: the PCN variant; `SZ[7]`: 7x7).
    KillallGo,
}

impl GameKind {
    /// `gomoku` or `killallgo`.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Gomoku => "gomoku",
            GameKind::KillallGo => "killallgo",
        }
    }
    /// Parses [`GameKind::name`] output.
    pub fn from_name(s: &str) -> Option<GameKind> {
        match s.to_ascii_lowercase().as_str() {
            "gomoku" => Some(GameKind::Gomoku),
            "killallgo" | "killall-go" => Some(GameKind::KillallGo),
            _ => None,
        }
    }
    /// The SGF `GM` number (4 or 1).
    pub fn sgf_gm(self) -> u32 {
        match self {
            GameKind::Gomoku => 4,
            GameKind::KillallGo => 1,
        }
    }
}

/// Header key of the Killall-Go Benson rule ([`KillallGoRules::benson`]).
pub const BENSON_KEY: &str = "benson";
/// Header key of the Killall-Go own-eye ban ([`KillallGoRules::own_eye_ban`]).
pub const OWN_EYE_KEY: &str = "own_eye_ban";

/// The header in a proof's root comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofHeader {
    /// The game.
    pub game: GameKind,
    /// Gomoku rule (`None` for Killall-Go).
    pub rule: Option<Rule>,
    /// Board (width, height).
    pub size: (usize, usize),
    /// The colour that wins in this proof.
    pub prover: Color,
    /// Number of main-line move nodes that form the problem position.
    pub plies: usize,
    /// The side to move at the proof's root (a consistency check).
    pub to_move: Option<Color>,
    /// Other `key=value` pairs (`solver`, `nodes`, ...), kept in order.
    pub extra: Vec<(String, String)>,
}

fn color_of(s: &str) -> Option<Color> {
    match s {
        "B" | "b" => Some(Color::Black),
        "W" | "w" => Some(Color::White),
        _ => None,
    }
}

impl fmt::Display for ProofHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{HEADER_TAG} game={}", self.game.name())?;
        if let Some(r) = self.rule {
            write!(f, " rule={}", r.name())?;
        }
        let (w, h) = self.size;
        if w == h {
            write!(f, " size={w}")?;
        } else {
            write!(f, " size={w}:{h}")?;
        }
        write!(f, " prover={} plies={}", self.prover.letter(), self.plies)?;
        if let Some(c) = self.to_move {
            write!(f, " tomove={}", c.letter())?;
        }
        for (k, v) in &self.extra {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

impl ProofHeader {
    /// Finds and parses the header line in a root comment.
    pub fn parse(comment: &str) -> Result<ProofHeader, ProofError> {
        let herr = |m: String| ProofError::Header(m);
        let line = comment
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(HEADER_TAG))
            .ok_or_else(|| herr(format!("no line starting with '{HEADER_TAG}'")))?;
        let mut game = None;
        let mut rule = None;
        let mut size = None;
        let mut prover = None;
        let mut plies = None;
        let mut to_move = None;
        let mut extra = Vec::new();
        for tok in line.split_whitespace() {
            let Some((k, v)) = tok.split_once('=') else {
                return Err(herr(format!("token '{tok}' is not key=value")));
            };
            match k {
                "game" => {
                    game = Some(
                        GameKind::from_name(v)
                            .ok_or_else(|| herr(format!("unknown game '{v}'")))?,
                    )
                }
                "rule" => {
                    rule = Some(
                        Rule::from_name(v).ok_or_else(|| herr(format!("unknown rule '{v}'")))?,
                    )
                }
                "size" => {
                    let num = |s: &str| {
                        s.parse::<usize>()
                            .ok()
                            .filter(|n| (1..=52).contains(n))
                            .ok_or_else(|| herr(format!("bad size '{v}'")))
                    };
                    size = Some(match v.split_once(':') {
                        Some((a, b)) => (num(a)?, num(b)?),
                        None => (num(v)?, num(v)?),
                    });
                }
                "prover" => {
                    prover = Some(
                        color_of(v)
                            .ok_or_else(|| herr(format!("prover must be B or W, not '{v}'")))?,
                    )
                }
                "tomove" => {
                    to_move = Some(
                        color_of(v)
                            .ok_or_else(|| herr(format!("tomove must be B or W, not '{v}'")))?,
                    )
                }
                "plies" => {
                    plies = Some(
                        v.parse::<usize>()
                            .map_err(|_| herr(format!("bad plies '{v}'")))?,
                    )
                }
                _ => extra.push((k.to_string(), v.to_string())),
            }
        }
        let game = game.ok_or_else(|| herr("missing game=".into()))?;
        if game == GameKind::Gomoku && rule.is_none() {
            return Err(herr("gomoku proofs need rule=".into()));
        }
        let h = ProofHeader {
            game,
            rule: if game == GameKind::Gomoku { rule } else { None },
            size: size.ok_or_else(|| herr("missing size=".into()))?,
            prover: prover.ok_or_else(|| herr("missing prover=".into()))?,
            plies: plies.ok_or_else(|| herr("missing plies=".into()))?,
            to_move,
            extra,
        };
        if game == GameKind::KillallGo {
            h.killallgo_rules()?;
        }
        Ok(h)
    }

    /// The Killall-Go knowledge rules of the proof: `benson=off` and `own_eye_ban=off`
    /// switch them off; absent keys mean on (the paper's rules, and every proof written
    /// before the switches existed).
    pub fn killallgo_rules(&self) -> Result<KillallGoRules, ProofError> {
        let flag = |key: &str| match self.extra(key) {
            None => Ok(true),
            Some(v) => OnOff::parse(v)
                .map(OnOff::is_on)
                .ok_or_else(|| ProofError::Header(format!("{key} must be on or off, not '{v}'"))),
        };
        Ok(KillallGoRules {
            benson: flag(BENSON_KEY)?,
            own_eye_ban: flag(OWN_EYE_KEY)?,
        })
    }

    /// The header pairs that record `rules` (none for the default rules).
    pub fn killallgo_rule_pairs(rules: KillallGoRules) -> Vec<(String, String)> {
        let mut v = Vec::new();
        if !rules.benson {
            v.push((BENSON_KEY.to_string(), OnOff::Off.to_string()));
        }
        if !rules.own_eye_ban {
            v.push((OWN_EYE_KEY.to_string(), OnOff::Off.to_string()));
        }
        v
    }

    /// The value of an extra key.
    pub fn extra(&self, key: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A proof tree in plain form: the move leading to each node and its children. Node 0 is
/// the proof's root (the problem position; its `mv` is unused).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveTree {
    /// Nodes; `children` index into this vector.
    pub nodes: Vec<MoveNode>,
}

/// One node of a [`MoveTree`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveNode {
    /// The move played into this node (unused at the root).
    pub mv: Move,
    /// Colour that played `mv`.
    pub color: Option<Color>,
    /// Child nodes.
    pub children: Vec<u32>,
}

impl MoveTree {
    /// A tree with only the root.
    pub fn new() -> MoveTree {
        MoveTree {
            nodes: vec![MoveNode::default()],
        }
    }
    /// Adds a child of `parent` for `mv` played by `color`; returns its index.
    pub fn add(&mut self, parent: u32, mv: Move, color: Color) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(MoveNode {
            mv,
            color: Some(color),
            children: Vec::new(),
        });
        if let Some(p) = self.nodes.get_mut(parent as usize) {
            p.children.push(id);
        }
        id
    }
    /// Number of nodes (positions) in the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// Whether the tree has no node at all (not even a root).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Converts a solver's [`ProofTree`] for a root where `to_move` is to play (colours
    /// alternate in both games, passes included). `None` when the tree is malformed (a bad
    /// child index) or would exceed `max_nodes` nodes.
    pub fn from_solver(tree: &ProofTree, to_move: Color, max_nodes: usize) -> Option<MoveTree> {
        if tree.nodes.is_empty() {
            return None;
        }
        let mut out = MoveTree::new();
        // (solver node, our node, colour to move there)
        let mut stack = vec![(0u32, 0u32, to_move)];
        while let Some((src, dst, color)) = stack.pop() {
            for &(mv, child) in &tree.nodes.get(src as usize)?.children {
                if child <= src || out.len() >= max_nodes {
                    return None;
                }
                let c = out.add(dst, mv, color);
                stack.push((child, c, color.opp()));
            }
        }
        Some(out)
    }
}

fn move_node(color: Color, mv: Move, width: usize, height: usize) -> Node {
    let m = mv as usize;
    let v = if m < width * height {
        crate::sgf::point_text(m % width, m / width, height)
    } else {
        String::new()
    };
    let mut n = Node::default();
    n.set(&color.letter().to_string(), vec![v]);
    n
}

/// Builds the proof file for `problem` (the problem's SGF; its root setup properties and the
/// first `header.plies` moves of its main line are copied) and `tree`.
pub fn to_sgf(problem: &GameTree, header: &ProofHeader, tree: &MoveTree) -> GameTree {
    let (w, h) = header.size;
    let mut out = GameTree::new_record(header.game.sgf_gm(), w, h);
    if let Some(root) = problem.root() {
        for id in ["AB", "AW", "AE", "PL", "KM"] {
            if let Some(p) = root.get(id) {
                out.nodes[0].set(id, p.values.clone());
            }
        }
    }
    out.nodes[0].set("C", vec![header.to_string()]);
    let mut copied = 0;
    for n in problem.main_line() {
        if copied >= header.plies {
            break;
        }
        if let Some((c, v)) = n.move_value() {
            let mut m = Node::default();
            m.set(&c.letter().to_string(), vec![v.to_string()]);
            out.nodes.push(m);
            copied += 1;
        }
    }
    // A chain of single children stays in one node sequence; a branch opens one variation
    // per child, so recursion happens only at branches.
    attach(&mut out, tree, 0, w, h);
    out
}

/// Appends the subtree below `node` to `t` (whose last node is `node`'s position).
fn attach(t: &mut GameTree, tree: &MoveTree, node: u32, w: usize, h: usize) {
    let mut cur = node;
    loop {
        let Some(n) = tree.nodes.get(cur as usize) else {
            return;
        };
        match n.children.as_slice() {
            [] => return,
            [only] => {
                let Some(c) = tree.nodes.get(*only as usize) else {
                    return;
                };
                t.nodes
                    .push(move_node(c.color.unwrap_or(Color::Black), c.mv, w, h));
                cur = *only;
            }
            many => {
                for &k in many {
                    let Some(c) = tree.nodes.get(k as usize) else {
                        continue;
                    };
                    let mut v = GameTree {
                        nodes: vec![move_node(c.color.unwrap_or(Color::Black), c.mv, w, h)],
                        variations: Vec::new(),
                    };
                    attach(&mut v, tree, k, w, h);
                    t.variations.push(v);
                }
                return;
            }
        }
    }
}

/// Writes `tree` to `path` (creating parent directories).
pub fn write_file(path: &std::path::Path, tree: &GameTree) -> Result<(), ProofError> {
    let io = |e| ProofError::Io {
        path: path.display().to_string(),
        source: e,
    };
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
    }
    std::fs::write(path, tree.to_sgf()).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = ProofHeader {
            game: GameKind::Gomoku,
            rule: Some(Rule::FourT),
            size: (15, 15),
            prover: Color::Black,
            plies: 30,
            to_move: Some(Color::Black),
            extra: vec![("solver".into(), "fdfpn".into())],
        };
        let s = h.to_string();
        assert_eq!(
            s,
            "pcn-proof: game=gomoku rule=4t size=15 prover=B plies=30 tomove=B solver=fdfpn"
        );
        assert_eq!(ProofHeader::parse(&format!("hello\n{s}\n")).unwrap(), h);
        assert!(ProofHeader::parse("pcn-proof: game=gomoku size=15 prover=B plies=1").is_err());
        assert!(ProofHeader::parse("pcn-proof: game=chess size=8 prover=B plies=1").is_err());
        assert!(ProofHeader::parse("nothing here").is_err());
    }
}
