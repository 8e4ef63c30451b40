//! Reads a gauntlet run (scripts/gauntlet.sh's `games.sgf` and `messages.txt`) and looks at
//! each game pcn lost: where the opponent's evaluation (Rapfi's `Eval` messages) crossed
//! +300 and where it first announced a forced win (`+M..`), and, at pcn's moves before
//! that announcement, whether pcn's own threat search finds the opponent's win right after
//! the move pcn played (VCF, then VCT, each within a node budget) and what pcn's player
//! chooses on the same position with more time.
//!
//! ```sh
//! cargo run --release --example loss_probe -- DIR [SECONDS [VCT_NODES [MOVES [first]]]]
//! ```
//!
//! With `first`, every game (not only the losses) is read and pcn's first MOVES moves after
//! the opening are probed instead of the last ones before the announcement.
//!
//! SECONDS (default 4) is the re-search time per position, VCT_NODES (default 1 000 000)
//! the threat search's node budget (0: no VCT), MOVES (default 4) how many of pcn's moves
//! before the announcement are probed (0: all of them). Only 15x15 and 20x20 freestyle games are read.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Game, Move};
use pcn::search::gomoku::alphabeta::AlphaBeta;
use pcn::search::gomoku::threat;
use pcn::search::{Budget, Limits, SearchEvent, Searcher};

/// One game of the SGF file.
struct SgfGame {
    id: usize,
    size: usize,
    /// Name of the black player.
    black: String,
    /// "B+..." or "W+..." or a draw.
    result: String,
    /// Moves as (x, y), with whether the move was part of the opening.
    moves: Vec<(usize, usize, bool)>,
}

fn prop<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(&format!("{key}["))?;
    let rest = &text[at + key.len() + 1..];
    rest.find(']').map(|e| &rest[..e])
}

fn parse_sgf(text: &str) -> Vec<SgfGame> {
    let mut out = Vec::new();
    for chunk in text.split("(;").skip(1) {
        let id = prop(chunk, "GN").and_then(|s| s.parse().ok()).unwrap_or(0);
        let size = prop(chunk, "SZ").and_then(|s| s.parse().ok()).unwrap_or(15);
        let black = prop(chunk, "PB").unwrap_or("").to_string();
        let result = prop(chunk, "RE").unwrap_or("").to_string();
        let mut moves = Vec::new();
        for node in chunk.split(';').skip(1) {
            let node = node.trim();
            let coord = if let Some(r) = node.strip_prefix("B[") {
                r
            } else if let Some(r) = node.strip_prefix("W[") {
                r
            } else {
                continue;
            };
            let b = coord.as_bytes();
            if b.len() < 2 || !b[0].is_ascii_lowercase() || !b[1].is_ascii_lowercase() {
                continue;
            }
            let opening = node.contains("opening move");
            moves.push(((b[0] - b'a') as usize, (b[1] - b'a') as usize, opening));
        }
        out.push(SgfGame {
            id,
            size,
            black,
            result,
            moves,
        });
    }
    out
}

/// Rapfi's evaluation per game: (1-based ply of the move it was about to play, eval), where
/// a mate for Rapfi is +30000 - distance and against it -30000 + distance.
fn parse_messages(text: &str) -> Vec<(usize, Vec<(usize, i32)>)> {
    let mut out: Vec<(usize, Vec<(usize, i32)>)> = Vec::new();
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("Game ID: ") {
            out.push((id.trim().parse().unwrap_or(0), Vec::new()));
            continue;
        }
        let Some((ply, rest)) = line.split_once(") ") else {
            continue;
        };
        let Ok(ply) = ply.trim().parse::<usize>() else {
            continue;
        };
        let Some(e) = rest.split("| Eval ").nth(1) else {
            continue;
        };
        let e = e.split_whitespace().next().unwrap_or("");
        let v = if let Some(m) = e.strip_prefix("+M").or_else(|| e.strip_prefix('M')) {
            m.parse::<i32>().map(|d| 30000 - d).ok()
        } else if let Some(m) = e.strip_prefix("-M") {
            m.parse::<i32>().map(|d| -30000 + d).ok()
        } else {
            e.parse().ok()
        };
        if let (Some(v), Some(last)) = (v, out.last_mut()) {
            last.1.push((ply, v));
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: loss_probe DIR [SECONDS [VCT_NODES [MOVES [first]]]]");
        std::process::exit(2);
    };
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4.0);
    let vct_nodes: u64 = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let probe_moves: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(4);
    let first_mode = args.get(5).map(String::as_str) == Some("first");
    let read = |name: &str| match std::fs::read_to_string(format!("{dir}/{name}")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{dir}/{name}: {e}");
            std::process::exit(2);
        }
    };
    let games = parse_sgf(&read("games.sgf"));
    let evals = parse_messages(&read("messages.txt"));
    for sg in &games {
        let pcn_black = sg.black == "pcn";
        let pcn_lost =
            (pcn_black && sg.result.starts_with('W')) || (!pcn_black && sg.result.starts_with('B'));
        if !pcn_lost && !first_mode {
            continue;
        }
        let ev = evals
            .iter()
            .find(|(id, _)| *id == sg.id)
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let over300 = ev.iter().find(|(_, v)| *v >= 300).map(|(p, _)| *p);
        let mate = ev
            .iter()
            .find(|(_, v)| *v >= 20000)
            .map(|(p, v)| (*p, 30000 - v));
        let opening = sg.moves.iter().take_while(|m| m.2).count();
        println!(
            "game {} {} pcn {} plies {} opening {} | rapfi eval>=300 at ply {} | mate announced at ply {} | evals {}",
            sg.id,
            if pcn_lost { "lost" } else { "not-lost" },
            if pcn_black { "black" } else { "white" },
            sg.moves.len(),
            opening,
            over300.map_or("-".into(), |p| p.to_string()),
            mate.map_or("-".into(), |(p, d)| format!("{p} (M{d})")),
            ev.iter()
                .map(|(p, v)| format!("{p}:{v}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let Ok(mut g) = Gomoku::new(sg.size, sg.size, Rule::Freestyle) else {
            continue;
        };
        let mv = |x: usize, y: usize| (y * sg.size + x) as Move;
        // pcn's moves (0-based ply index i; the 1-based ply is i + 1) before the announcement.
        let last_ply = mate.map_or(sg.moves.len(), |(p, _)| p - 1);
        let pcn_plies: Vec<usize> = (opening..sg.moves.len())
            .filter(|&i| (i % 2 == 0) == pcn_black && i < last_ply)
            .collect();
        let take = if probe_moves == 0 {
            usize::MAX
        } else {
            probe_moves
        };
        let probe: Vec<usize> = if first_mode {
            pcn_plies.iter().take(take).copied().collect()
        } else {
            pcn_plies.iter().rev().take(take).rev().copied().collect()
        };
        for (i, &(x, y, _)) in sg.moves.iter().enumerate() {
            if probe.contains(&i) {
                let played = mv(x, y);
                // pcn's player on the position before the move, with more time.
                let mut ab = AlphaBeta::new();
                let stop = AtomicBool::new(false);
                let limits = Limits {
                    time: Some(Duration::from_secs_f64(secs)),
                    ..Limits::default()
                };
                let mut depth = 0;
                let r = ab.search(&g, &limits, &stop, &mut |e| {
                    if let SearchEvent::Info { depth: d, .. } = e {
                        depth = *d;
                    }
                });
                let best = r.best.map(|m| g.move_to_gtp(m)).unwrap_or_default();
                // The opponent's threats after the played move.
                let mut after = g.clone();
                let _ = after.play(played);
                let unlimited = AtomicBool::new(false);
                let mut b = Budget::new(&Limits::nodes(vct_nodes.max(1)), &unlimited);
                let vcf = threat::vcf(&mut after, &mut b, 40);
                let vcf_nodes = b.nodes;
                let mut b = Budget::new(&Limits::nodes(vct_nodes), &unlimited);
                let vct = if vcf.is_none() && vct_nodes > 0 {
                    threat::vct(&mut after, &mut b, 40)
                } else {
                    None
                };
                let rapfi_after = ev.iter().find(|(p, _)| *p == i + 2).map(|(_, v)| *v);
                println!(
                    "  ply {:3} played {:4} | pcn {secs}s: best {:4} score {:6} depth {:2}{} | opp VCF {} ({} nodes) VCT {} ({} nodes) | rapfi next {}",
                    i + 1,
                    g.move_to_gtp(played),
                    best,
                    r.score,
                    depth,
                    if r.proven.is_some() { " proven" } else { "" },
                    vcf.as_ref().map_or("-".into(), |l| format!("len {}", l.len())),
                    vcf_nodes,
                    vct.as_ref().map_or("-".into(), |l| format!("len {}", l.len())),
                    b.nodes,
                    rapfi_after.map_or("-".into(), |v| v.to_string()),
                );
            }
            if g.play(mv(x, y)).is_err() {
                println!("  illegal move in the record at ply {}", i + 1);
                break;
            }
        }
    }
}
