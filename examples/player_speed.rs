//! Speed probe of the `pcn` Gomoku player: searches a few fixed middle-game positions and
//! prints, per position, the last completed depth, the nodes and the nodes per second.
//!
//! ```sh
//! cargo run --release --example player_speed            # 1 s per position
//! cargo run --release --example player_speed -- 2000    # 2 s per position
//! cargo run --release --example player_speed -- n300000 # 300 000 nodes per position
//! cargo run --release --example player_speed -- d9      # time to depth 9
//! cargo run --release --example player_speed -- 1000 2  # 1 s per position, 2 threads
//! ```
//!
//! The positions are two of the bench's (`pcn bench`) plus balanced openings that the player
//! itself continues for `CONTINUE` moves at 20 000 nodes each (deterministic, so every run
//! of the same search sees the same boards). Node-limited runs suit a profiler
//! (`perf record`), time-limited ones compare builds on the same machine and load.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use pcn::cli::bench::{setup, POSITIONS};
use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Game, Move};
use pcn::search::gomoku::alphabeta::AlphaBeta;
use pcn::search::{Limits, SearchEvent, Searcher};

/// Balanced openings (offsets from the centre, as in ../shared/openings) the probe continues.
const OPENINGS: &[(usize, &str)] = &[
    (15, "-1,0, -1,-2, 0,-2, 0,0, 0,3"),
    (15, "2,-4, 4,-1, 4,2"),
    (15, "-2,4, -4,4, -3,3, -1,2, 2,2"),
    (20, "-1,2, 1,3, 0,4, -4,2, 4,4"),
];
/// Moves the player adds to each opening (20 000 nodes each) before the probe.
const CONTINUE: usize = 10;

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "1000".into());
    let limits = if let Some(n) = arg.strip_prefix('n') {
        Limits::nodes(n.parse().unwrap_or(300_000))
    } else if let Some(d) = arg.strip_prefix('d') {
        Limits {
            depth: Some(d.parse().unwrap_or(8)),
            ..Limits::default()
        }
    } else {
        Limits::time(Duration::from_millis(arg.parse().unwrap_or(1000)))
    };
    // Search threads of the probe (the openings are continued with one, so the boards stay
    // the same whatever this is).
    let threads: usize = std::env::args()
        .nth(2)
        .and_then(|t| t.parse().ok())
        .unwrap_or(1);
    let mut boards: Vec<(String, Gomoku)> = Vec::new();
    for name in ["free15-mid", "free20"] {
        if let Some(p) = POSITIONS.iter().find(|p| p.name == name) {
            match setup(p) {
                Ok(g) => boards.push((name.to_string(), g)),
                Err(e) => eprintln!("{e}"),
            }
        }
    }
    for (k, (size, opening)) in OPENINGS.iter().enumerate() {
        let Ok(mut g) = Gomoku::new(*size, *size, Rule::Freestyle) else {
            continue;
        };
        let nums: Vec<i64> = opening
            .split(',')
            .filter_map(|t| t.trim().parse().ok())
            .collect();
        let c = (*size / 2) as i64;
        for xy in nums.chunks(2) {
            let m = ((c + xy[1]) * *size as i64 + c + xy[0]) as Move;
            g.play_unchecked(m);
        }
        let mut ab = AlphaBeta::new();
        let stop = AtomicBool::new(false);
        for _ in 0..CONTINUE {
            let r = ab.search(&g, &Limits::nodes(20_000), &stop, &mut |_| {});
            match r.best {
                Some(m) if g.outcome().is_none() => g.play_unchecked(m),
                _ => break,
            }
        }
        if g.outcome().is_none() {
            boards.push((format!("open{size}-{k}"), g));
        }
    }
    let (mut all_nodes, mut all_secs) = (0u64, 0f64);
    for (name, g) in &boards {
        let mut ab = AlphaBeta::new();
        ab.set_threads(threads);
        let stop = AtomicBool::new(false);
        let mut depth = 0;
        let t = Instant::now();
        let r = ab.search(g, &limits, &stop, &mut |e| {
            if let SearchEvent::Info { depth: d, .. } = e {
                depth = *d;
            }
        });
        let secs = t.elapsed().as_secs_f64();
        all_nodes += r.nodes;
        all_secs += secs;
        println!(
            "{name:12} stones {:3} depth {depth:2} nodes {:8} time {secs:.3} s  {:6.0} k nodes/s  best {} score {}{}",
            g.stones(),
            r.nodes,
            r.nodes as f64 / secs / 1000.0,
            r.best.map(|m| g.move_to_gtp(m)).unwrap_or_default(),
            r.score,
            if r.proven.is_some() { " proven" } else { "" }
        );
    }
    println!(
        "total        threads {threads} nodes {all_nodes} time {all_secs:.3} s  {:.0} k nodes/s",
        all_nodes as f64 / all_secs / 1000.0
    );
}
