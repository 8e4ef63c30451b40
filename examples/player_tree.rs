//! Shape of the `pcn` Gomoku player's tree: searches fixed middle-game positions to a fixed
//! depth and prints, per position, the nodes each iteration took (so the effective
//! branching factor, EBF = nodes of iteration d / nodes of iteration d-1), where the nodes
//! went (interior, leaves, leaf VCF, root threats), the move-ordering quality (share of
//! fail-highs on the first move, mean index of the cut move), the table's hit and cut rates,
//! PVS and LMR re-searches, and the best move at the last depth.
//!
//! ```sh
//! cargo run --release --example player_tree             # depth 8
//! cargo run --release --example player_tree -- 10       # depth 10
//! cargo run --release --example player_tree -- 8 gen    # print new positions (see below)
//! ```
//!
//! Every count is of nodes, not time, so the output does not depend on the machine or its
//! load; two builds are compared by their `best` lines (which positions change their move
//! at the fixed depth) and their `total` lines. The positions are in
//! `examples/player_tree_positions.txt` (board size and the moves in GTP coordinates), made
//! once by the `gen` mode: the ten balanced 15x15 openings of ../shared/openings, each
//! continued by the player at 20 000 nodes a move for 4 and for 10 moves, and the same
//! openings on 20x20 continued for 8 moves. They are written down so that a change of the
//! search does not change the positions it is measured on.

use std::sync::atomic::AtomicBool;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Game, Move};
use pcn::search::gomoku::alphabeta::AlphaBeta;
use pcn::search::{Limits, SearchEvent, Searcher};

/// The positions, one a line: board size, then the moves in GTP coordinates.
const POSITIONS: &str = include_str!("player_tree_positions.txt");
/// The balanced openings (offsets from the centre) that `gen` continues.
const OPENINGS: &str = "../shared/openings/openings15_freestyle.txt";

fn main() {
    let depth: u32 = std::env::args()
        .nth(1)
        .and_then(|d| d.parse().ok())
        .unwrap_or(8);
    if std::env::args().nth(2).as_deref() == Some("gen") {
        generate();
        return;
    }
    let mut rows = Vec::new();
    for (k, line) in POSITIONS.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse(line) {
            Ok(g) => rows.push((format!("p{k:02}"), g)),
            Err(e) => eprintln!("line {}: {e}", k + 1),
        }
    }
    // Per depth step d (iteration d / iteration d-1): the sum over positions of the log of
    // the ratio, and how many positions reached it.
    let mut ebf_log = vec![0f64; depth as usize + 1];
    let mut ebf_n = vec![0u32; depth as usize + 1];
    let mut total = pcn::search::gomoku::alphabeta::TreeStats::default();
    let mut all_nodes = 0u64;
    println!(
        "{:4} {:>3} {:>9}  {:>5} {:>5} {:>5} {:>5}  {:>5} {:>5}  {:>5} {:>5}  {:>5} {:>5} {:>5}  iteration nodes 1..{depth}",
        "pos", "st", "nodes", "int%", "leaf%", "lvcf%", "root%", "1st%", "idx", "hit%", "cut%", "pvs%", "lmr%", "frc%"
    );
    for (name, g) in &rows {
        let mut ab = AlphaBeta::new();
        let stop = AtomicBool::new(false);
        let limits = Limits {
            depth: Some(depth),
            ..Limits::default()
        };
        let mut cumulative = Vec::new();
        let r = ab.search(g, &limits, &stop, &mut |e| {
            if let SearchEvent::Info { nodes, .. } = e {
                cumulative.push(*nodes);
            }
        });
        let s = ab.tree_stats().clone();
        let best = r.best.map(|m| g.move_to_gtp(m)).unwrap_or_default();
        if cumulative.is_empty() {
            println!("{name:4} {:3} proven at the root ({best})", g.stones());
            println!("best {name} {best} proven");
            continue;
        }
        let mut iters = Vec::new();
        let mut prev = s.root_threat_nodes;
        for &c in &cumulative {
            iters.push(c.saturating_sub(prev).max(1));
            prev = c;
        }
        for d in 1..iters.len() {
            ebf_log[d + 1] += (iters[d] as f64 / iters[d - 1] as f64).ln();
            ebf_n[d + 1] += 1;
        }
        let n = r.nodes.max(1) as f64;
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        println!(
            "{name:4} {:3} {:9}  {:5.1} {:5.1} {:5.1} {:5.1}  {:5.1} {:5.2}  {:5.1} {:5.1}  {:5.1} {:5.1} {:5.1}  {}",
            g.stones(),
            r.nodes,
            100.0 * s.interior as f64 / n,
            100.0 * s.leaves as f64 / n,
            100.0 * s.leaf_vcf_nodes as f64 / n,
            100.0 * s.root_threat_nodes as f64 / n,
            pct(s.cuts_first, s.cuts),
            s.cut_index_sum as f64 / s.cuts.max(1) as f64,
            pct(s.tt_hits, s.tt_probes),
            pct(s.tt_cuts, s.tt_probes),
            pct(s.pvs_researches, s.interior),
            pct(s.lmr_researches, s.lmr_searches),
            pct(s.forced, s.interior),
            iters
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        println!(
            "best {name} {best} {}{}",
            r.score,
            if r.proven.is_some() { " proven" } else { "" }
        );
        all_nodes += r.nodes;
        add(&mut total, &s);
    }
    let s = &total;
    let n = all_nodes.max(1) as f64;
    let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "total nodes {all_nodes}: interior {:.1}% leaves {:.1}% leaf VCF {:.1}% ({} runs, {:.1}% won) root threats {:.1}%",
        100.0 * s.interior as f64 / n,
        100.0 * s.leaves as f64 / n,
        100.0 * s.leaf_vcf_nodes as f64 / n,
        s.leaf_vcf_runs,
        pct(s.leaf_vcf_wins, s.leaf_vcf_runs),
        100.0 * s.root_threat_nodes as f64 / n,
    );
    println!(
        "total interior: quiet {:.1}% (cut to the width {:.1}% of them, {} widened) defend {:.1}% forced {:.1}%; rfp cuts {} futility skips {} razor cuts {} of {}",
        pct(s.quiet, s.interior),
        pct(s.truncated, s.quiet),
        s.widened,
        pct(s.defend, s.interior),
        pct(s.forced, s.interior),
        s.rfp_cuts,
        s.futility_skips,
        s.razor_cuts,
        s.razor_tries
    );
    println!(
        "total fail-highs {}: first move {:.1}% mean index {:.2} with a table move {:.1}%; table hits {:.1}% cuts {:.1}%; PVS re-searches {:.1}% of interior; LMR {} searches, {:.1}% re-searched",
        s.cuts,
        pct(s.cuts_first, s.cuts),
        s.cut_index_sum as f64 / s.cuts.max(1) as f64,
        pct(s.cuts_with_tt_move, s.cuts),
        pct(s.tt_hits, s.tt_probes),
        pct(s.tt_cuts, s.tt_probes),
        pct(s.pvs_researches, s.interior),
        s.lmr_searches,
        pct(s.lmr_researches, s.lmr_searches),
    );
    let ebf: Vec<String> = (2..=depth as usize)
        .filter(|&d| ebf_n[d] > 0)
        .map(|d| format!("{}:{:.2}", d, (ebf_log[d] / ebf_n[d] as f64).exp()))
        .collect();
    println!(
        "total EBF (geometric mean over positions, depth d / d-1): {}",
        ebf.join(" ")
    );
}

/// Adds `s` to `t`, field by field.
fn add(
    t: &mut pcn::search::gomoku::alphabeta::TreeStats,
    s: &pcn::search::gomoku::alphabeta::TreeStats,
) {
    t.interior += s.interior;
    t.leaves += s.leaves;
    t.leaf_vcf_runs += s.leaf_vcf_runs;
    t.leaf_vcf_nodes += s.leaf_vcf_nodes;
    t.leaf_vcf_wins += s.leaf_vcf_wins;
    t.root_threat_nodes += s.root_threat_nodes;
    t.tt_probes += s.tt_probes;
    t.tt_hits += s.tt_hits;
    t.tt_cuts += s.tt_cuts;
    t.cuts += s.cuts;
    t.cuts_first += s.cuts_first;
    t.cut_index_sum += s.cut_index_sum;
    t.cuts_with_tt_move += s.cuts_with_tt_move;
    t.pvs_researches += s.pvs_researches;
    t.lmr_researches += s.lmr_researches;
    t.lmr_searches += s.lmr_searches;
    t.forced += s.forced;
    t.defend += s.defend;
    t.quiet += s.quiet;
    t.truncated += s.truncated;
    t.widened += s.widened;
    t.rfp_cuts += s.rfp_cuts;
    t.futility_skips += s.futility_skips;
    t.razor_tries += s.razor_tries;
    t.razor_cuts += s.razor_cuts;
}

/// A position line: the board size, then the moves in GTP coordinates.
fn parse(line: &str) -> Result<Gomoku, String> {
    let mut it = line.split_whitespace();
    let size: usize = it
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("no board size")?;
    let mut g = Gomoku::new(size, size, Rule::Freestyle).map_err(|e| e.to_string())?;
    for s in it {
        let m = g.parse_gtp(s).map_err(|e| format!("{s}: {e}"))?;
        g.play(m).map_err(|e| format!("{s}: {e}"))?;
    }
    Ok(g)
}

/// Prints the position lines (see the module docs) from the openings file.
fn generate() {
    let text = match std::fs::read_to_string(OPENINGS) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{OPENINGS}: {e}");
            std::process::exit(2);
        }
    };
    for (size, plies) in [(15usize, 4usize), (15, 10), (20, 8)] {
        for opening in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(mut g) = Gomoku::new(size, size, Rule::Freestyle) else {
                continue;
            };
            let nums: Vec<i64> = opening
                .split(',')
                .filter_map(|t| t.trim().parse().ok())
                .collect();
            let c = (size / 2) as i64;
            let mut moves = Vec::new();
            for xy in nums.chunks(2) {
                let m = ((c + xy[1]) * size as i64 + c + xy[0]) as Move;
                moves.push(g.move_to_gtp(m));
                g.play_unchecked(m);
            }
            let mut ab = AlphaBeta::new();
            let stop = AtomicBool::new(false);
            for _ in 0..plies {
                let r = ab.search(&g, &Limits::nodes(20_000), &stop, &mut |_| {});
                match r.best {
                    Some(m) if g.outcome().is_none() => {
                        moves.push(g.move_to_gtp(m));
                        g.play_unchecked(m);
                    }
                    _ => break,
                }
            }
            if g.outcome().is_none() {
                println!("{size} {}", moves.join(" "));
            }
        }
    }
}
