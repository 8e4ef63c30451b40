//! The proof checker behind `pcn verify`.
//!
//! It shares only the rules ([`crate::game`]) and the SGF reader ([`crate::sgf`]) with the
//! rest of the engine, never the solvers: the problem position is replayed with the same
//! SGF loader `pcn solve` uses, then every proof node is played with the checked
//! [`Game::play`], so the history (Killall-Go superko) is the real one along each path.
//!
//! Rules of soundness (prover = the header's colour):
//! * every move node's colour is the side to move and its move is legal;
//! * no node repeats a sibling's move;
//! * a node where the game is over has no children and is won by the prover;
//! * a node where the game goes on has children: where the prover is to move, at least one
//!   (each child must itself be a sound proof); where the opponent is to move, one for every
//!   legal move (the missing ones are listed).
//!
//! The walk is iterative, so deep files cannot exhaust the stack.

use std::collections::HashSet;

use super::{GameKind, ProofError, ProofHeader};
use crate::game::killallgo::KillallGo;
use crate::game::{Color, Game, Move, Outcome};
use crate::sgf::{self, GameTree, Node};

/// Statistics of a sound proof.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// The header.
    pub header: Option<ProofHeader>,
    /// Positions in the proof (root included).
    pub nodes: u64,
    /// Positions with the prover to move.
    pub or_nodes: u64,
    /// Positions with the opponent to move.
    pub and_nodes: u64,
    /// Finished games (all won by the prover).
    pub leaves: u64,
    /// Longest path, in plies from the proof's root.
    pub depth: usize,
}

/// An unfinished position of a proof, handed to the visitor of [`verify_file_visit`] once
/// the whole proof below it has been checked (children before parents).
pub struct ProvenNode<'a> {
    /// The prover (the header's colour).
    pub prover: Color,
    /// The side to move here.
    pub to_move: Color,
    /// Plies played before this position (the problem's moves included).
    pub ply: usize,
    /// Board width (Gomoku and Killall-Go boards are square).
    pub width: usize,
    /// Actions of the game (Killall-Go: the board points and pass).
    pub num_actions: usize,
    /// The game's rule name (`Game::name`, e.g. `killallgo-9x9`).
    pub rule: &'a str,
    /// Input planes of [`Self::input`].
    pub planes: usize,
    /// `Game::encode_input` of this position: the encoding every network reads.
    pub input: &'a [f32],
    /// The proof's moves here: the prover's winning move(s) where the prover is to move,
    /// every legal move where the opponent is.
    pub moves: &'a [Move],
    /// Positions in the proof below each move (its subtree, the child itself included).
    pub sizes: &'a [u64],
}

/// The visitor of [`verify_file_visit`].
pub type Visit<'v> = &'v mut dyn FnMut(&ProvenNode<'_>);

/// A node of the flattened SGF tree.
struct Flat<'a> {
    node: &'a Node,
    children: Vec<usize>,
}

/// Turns the nested SGF structure into one node list with explicit children.
fn flatten(tree: &GameTree) -> Vec<Flat<'_>> {
    let mut out: Vec<Flat<'_>> = Vec::new();
    let mut stack: Vec<(&GameTree, Option<usize>)> = vec![(tree, None)];
    while let Some((t, parent)) = stack.pop() {
        let mut prev = parent;
        for n in &t.nodes {
            let id = out.len();
            out.push(Flat {
                node: n,
                children: Vec::new(),
            });
            if let Some(p) = prev {
                out[p].children.push(id);
            }
            prev = Some(id);
        }
        // Pushed in reverse so variations keep their order in `children`.
        for v in t.variations.iter().rev() {
            stack.push((v, prev));
        }
    }
    // Children were appended as each variation was popped, which is in file order.
    out
}

/// Verifies proof text. `Ok` means the proof is sound.
pub fn verify_text(text: &str) -> Result<VerifyReport, ProofError> {
    let tree = GameTree::parse(text)?;
    verify_tree(&tree)
}

/// Verifies a proof file.
pub fn verify_file(path: &std::path::Path) -> Result<VerifyReport, ProofError> {
    verify_file_inner(path, None)
}

/// Verifies a proof file and hands every unfinished position of it to `visit` (children
/// before parents). The visits are made while the check runs: when the file turns out
/// unsound (an error), the positions visited so far may come from an unsound part.
pub fn verify_file_visit(
    path: &std::path::Path,
    visit: Visit<'_>,
) -> Result<VerifyReport, ProofError> {
    verify_file_inner(path, Some(visit))
}

fn verify_file_inner(
    path: &std::path::Path,
    visit: Option<Visit<'_>>,
) -> Result<VerifyReport, ProofError> {
    let bytes = std::fs::read(path).map_err(|e| ProofError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let tree = GameTree::parse_bytes(&bytes)?;
    verify_tree_inner(&tree, visit)
}

/// Verifies a parsed proof tree.
pub fn verify_tree(tree: &GameTree) -> Result<VerifyReport, ProofError> {
    verify_tree_inner(tree, None)
}

fn verify_tree_inner(
    tree: &GameTree,
    visit: Option<Visit<'_>>,
) -> Result<VerifyReport, ProofError> {
    let comment = tree
        .comment()
        .ok_or_else(|| ProofError::Header("the root node has no comment C[...]".into()))?;
    let header = ProofHeader::parse(comment)?;
    let gm = tree.game_type()?;
    if gm != header.game.sgf_gm() {
        return Err(ProofError::Header(format!(
            "GM[{gm}] does not match game={}",
            header.game.name()
        )));
    }
    let size = tree.size()?;
    if size != header.size {
        return Err(ProofError::Header(format!(
            "SZ {}x{} does not match the header's size {}x{}",
            size.0, size.1, header.size.0, header.size.1
        )));
    }
    let flat = flatten(tree);
    let root = proof_root(&flat, header.plies)?;
    let mut report = match header.game {
        GameKind::Gomoku => {
            let rule = header
                .rule
                .ok_or_else(|| ProofError::Header("gomoku proofs need rule=".into()))?;
            let g = sgf::to_gomoku_at(tree, rule, header.plies)?;
            check(g, &flat, root, &header, visit)?
        }
        GameKind::KillallGo => {
            let rules = header.killallgo_rules()?;
            let g: KillallGo = sgf::to_killallgo_with(tree, header.plies, rules)?;
            check(g, &flat, root, &header, visit)?
        }
    };
    report.header = Some(header);
    Ok(report)
}

/// The flat index of the proof's root: the node holding the `plies`-th move of the main
/// line (the root node when `plies` is 0). The prefix must not branch.
fn proof_root(flat: &[Flat<'_>], plies: usize) -> Result<usize, ProofError> {
    let mut cur = 0usize;
    let mut seen = usize::from(flat.first().is_some_and(|f| f.node.move_value().is_some()));
    if flat.is_empty() {
        return Err(ProofError::Header("empty SGF tree".into()));
    }
    while seen < plies {
        match flat[cur].children.as_slice() {
            [only] => {
                cur = *only;
                if flat[cur].node.move_value().is_some() {
                    seen += 1;
                }
            }
            [] => {
                return Err(ProofError::Header(format!(
                    "the main line has only {seen} moves, the header says plies={plies}"
                )))
            }
            _ => {
                return Err(ProofError::Header(format!(
                    "the problem's main line branches after {seen} of plies={plies} moves"
                )))
            }
        }
    }
    Ok(cur)
}

fn unsound<G: Game>(g: &G, path: &[Move], reason: String) -> ProofError {
    // Move text depends only on the board size, so the current position can render it.
    ProofError::Unsound {
        path: path.iter().map(|&m| g.move_to_gtp(m)).collect(),
        reason,
    }
}

/// Reads a node's move for the position `g` (colour must be the side to move).
fn node_move<G: Game>(g: &G, n: &Node) -> Result<Move, String> {
    let Some((color, v)) = n.move_value() else {
        return Err("a proof node without a B or W move".into());
    };
    if color != g.to_move() {
        return Err(format!(
            "move {}[{v}] by the wrong colour ({} is to move)",
            color.letter(),
            g.to_move().letter()
        ));
    }
    let id = color.letter().to_string();
    match sgf::parse_point(&id, v, g.width(), g.height()) {
        Err(e) => Err(e.to_string()),
        Ok(Some((x, y))) => Ok((y * g.width() + x) as Move),
        Ok(None) if g.num_actions() > g.width() * g.height() => {
            Ok((g.width() * g.height()) as Move)
        }
        Ok(None) => Err("a pass, but this game has no pass".into()),
    }
}

fn list<G: Game>(g: &G, ms: &[Move]) -> String {
    const SHOWN: usize = 16;
    let mut s: Vec<String> = ms.iter().take(SHOWN).map(|&m| g.move_to_gtp(m)).collect();
    if ms.len() > SHOWN {
        s.push(format!("... ({} in all)", ms.len()));
    }
    s.join(" ")
}

/// A node of the walk: (flat node, its children's moves, index of the next child to enter,
/// the finished children's subtree sizes, `report.nodes` when the current child was entered).
type Frame = (usize, Vec<Move>, usize, Vec<u64>, u64);

/// Depth-first check from `root` with `g` at the proof root's position.
fn check<G: Game>(
    mut g: G,
    flat: &[Flat<'_>],
    root: usize,
    header: &ProofHeader,
    mut visit: Option<Visit<'_>>,
) -> Result<VerifyReport, ProofError> {
    let prover = header.prover;
    if let Some(c) = header.to_move {
        if c != g.to_move() {
            return Err(ProofError::Header(format!(
                "tomove={} but {} is to move after the problem's {} moves",
                c.letter(),
                g.to_move().letter(),
                header.plies
            )));
        }
    }
    let mut report = VerifyReport::default();
    let mut path: Vec<Move> = Vec::new();
    let mut legal: Vec<Move> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut input: Vec<f32> = Vec::new();
    // The rule name does not change along the walk.
    let rule = if visit.is_some() {
        g.name()
    } else {
        String::new()
    };
    let mut enter = Some(root);
    loop {
        if let Some(id) = enter.take() {
            let kids = &flat[id].children;
            report.nodes += 1;
            report.depth = report.depth.max(path.len());
            if let Some(o) = g.outcome() {
                if !kids.is_empty() {
                    return Err(unsound(&g, &path, "moves after the end of the game".into()));
                }
                if o != Outcome::Win(prover) {
                    let what = match o {
                        Outcome::Win(c) => format!("won by {}", c.letter()),
                        Outcome::Draw => "a draw".into(),
                    };
                    return Err(unsound(
                        &g,
                        &path,
                        format!(
                            "leaf is {what}, not a win for the prover {}",
                            prover.letter()
                        ),
                    ));
                }
                report.leaves += 1;
                if id != root {
                    g.undo();
                    path.pop();
                }
            } else {
                if kids.is_empty() {
                    return Err(unsound(
                        &g,
                        &path,
                        format!(
                            "leaf is not a finished game ({} to move, no move given)",
                            g.to_move().letter()
                        ),
                    ));
                }
                let mut moves = Vec::with_capacity(kids.len());
                let mut seen = HashSet::with_capacity(kids.len());
                for &k in kids {
                    let m = node_move(&g, flat[k].node).map_err(|r| unsound(&g, &path, r))?;
                    if let Err(e) = g.check_move(m) {
                        return Err(unsound(
                            &g,
                            &path,
                            format!("illegal move {}: {e}", g.move_to_gtp(m)),
                        ));
                    }
                    if !seen.insert(m) {
                        return Err(unsound(
                            &g,
                            &path,
                            format!("move {} appears twice", g.move_to_gtp(m)),
                        ));
                    }
                    moves.push(m);
                }
                if g.to_move() == prover {
                    report.or_nodes += 1;
                } else {
                    report.and_nodes += 1;
                    g.legal_moves(&mut legal);
                    let missing: Vec<Move> = legal
                        .iter()
                        .copied()
                        .filter(|m| !seen.contains(m))
                        .collect();
                    if !missing.is_empty() {
                        return Err(unsound(
                            &g,
                            &path,
                            format!(
                                "{} defence(s) of {} missing: {}",
                                missing.len(),
                                g.to_move().letter(),
                                list(&g, &missing)
                            ),
                        ));
                    }
                }
                stack.push((id, moves, 0, Vec::new(), report.nodes));
            }
        }
        // Advance to the next child of the deepest unfinished node.
        let Some(top) = stack.last_mut() else {
            break;
        };
        let (id, moves, next, sizes, mark) = top;
        if visit.is_some() && sizes.len() < *next {
            // The child entered last is finished: everything counted since is its subtree
            // (kept only for a visitor).
            sizes.push(report.nodes - *mark);
        }
        if *next < moves.len() {
            let m = moves[*next];
            let child = flat[*id].children[*next];
            *next += 1;
            *mark = report.nodes;
            g.play_unchecked(m);
            path.push(m);
            enter = Some(child);
        } else {
            let done = *id;
            if let Some(v) = visit.as_mut() {
                let n = g.input_planes() * g.width() * g.height();
                input.resize(n, 0.0);
                g.encode_input(&mut input);
                v(&ProvenNode {
                    prover,
                    to_move: g.to_move(),
                    ply: g.ply(),
                    width: g.width(),
                    num_actions: g.num_actions(),
                    rule: &rule,
                    planes: g.input_planes(),
                    input: &input,
                    moves,
                    sizes,
                });
            }
            stack.pop();
            if done != root {
                g.undo();
                path.pop();
            }
        }
    }
    Ok(report)
}

/// One-line summary of a sound proof.
pub fn summary(r: &VerifyReport) -> String {
    let (prover, game) = r.header.as_ref().map_or(('?', String::new()), |h| {
        let rule = h.rule.map_or(String::new(), |r| format!(" {}", r.name()));
        (
            h.prover.letter(),
            format!("{}{} {}x{}", h.game.name(), rule, h.size.0, h.size.1),
        )
    });
    format!(
        "sound: {game}, prover {prover} wins; {} nodes ({} OR, {} AND, {} leaves), depth {}",
        r.nodes, r.or_nodes, r.and_nodes, r.leaves, r.depth
    )
}

/// The prover colour's name, for messages.
pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "Black",
        Color::White => "White",
    }
}
