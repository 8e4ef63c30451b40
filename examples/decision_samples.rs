//! Training samples for the Gomoku pattern policy from the MCTS solver's own proofs
//! (expert iteration): positions from the alpha-beta player's self-play games (random
//! openings, rule 4T) where the game's winner is to move some plies before its win are
//! solved by the default no-network MCTS, and every prover's decision its final search tree
//! proved ([`Mcts::proven_choices`]) becomes a sample: the candidates are the node's children
//! near a stone (the kept moves of a narrowed node), the label the proven winning child.
//! Nothing of the shared problems or networks goes in.
//!
//! ```sh
//! cargo run --release --example decision_samples -- --games 400 --time 6 --out /tmp/dec.bin
//! ./target/release/pcn train-patterns --from-samples /tmp/dec.bin --out /tmp/p.bin
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Game, Move, Outcome};
use pcn::search::gomoku::alphabeta::AlphaBeta;
use pcn::search::gomoku::greedy::candidates;
use pcn::search::gomoku::learn::patpolicy::static_score;
use pcn::search::solver::mcts::Mcts;
use pcn::search::solver::{CommonOptions, Knowledge, MctsOptions, Solver, SolverGame};
use pcn::search::{Limits, Searcher};
use pcn::train::patterns::{write_samples, Sample};
use pcn::util::Rng;

#[derive(Parser)]
#[command(about = "Pattern-policy samples from the MCTS solver's proven decisions")]
struct Args {
    /// Self-play games (each gives up to three positions to solve).
    #[arg(long, default_value_t = 200)]
    games: usize,
    /// Alpha-beta nodes per self-play move.
    #[arg(long, default_value_t = 3000)]
    move_nodes: u64,
    /// Seconds per solve.
    #[arg(long, default_value_t = 6.0)]
    time: f64,
    /// Memory per solve in MB (a smaller node pool starts the narrowed phase sooner).
    #[arg(long, default_value_t = 64)]
    memory: usize,
    /// Solves run at once.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Seed of the games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only decisions at narrowed nodes (the narrowed phase's kept moves).
    #[arg(long)]
    narrowed_only: bool,
    /// Where to write the samples.
    #[arg(long)]
    out: PathBuf,
}

/// The moves of one self-play game that ended in a win, from a random opening in the
/// central 7x7.
fn self_play(seed: u64, i: usize, nodes: u64) -> Option<Vec<Move>> {
    let stop = AtomicBool::new(false);
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64 + 1));
    let mut g = Gomoku::new(15, 15, Rule::FourT).ok()?;
    let mut ab = AlphaBeta::new();
    ab.set_memory(16 << 20);
    let opening = 2 + rng.below(7);
    let mut tries = 0;
    while g.stones() < opening && tries < 1000 {
        tries += 1;
        let m = ((4 + rng.below(7)) * 15 + 4 + rng.below(7)) as Move;
        if g.check_move(m).is_ok() {
            g.play_unchecked(m);
        }
    }
    let mut cells = Vec::new();
    while g.outcome().is_none() && g.stones() < 120 {
        let r = ab.search(&g, &Limits::nodes(nodes), &stop, &mut |_| {});
        let mut play = r.best?;
        if g.check_move(play).is_err() {
            return None;
        }
        // Some variety: one move in ten is one of the five best by static score.
        if g.forced_point().is_none() && rng.below(10) == 0 {
            candidates(&g, &mut cells);
            let mut by: Vec<(f32, usize)> =
                cells.iter().map(|&c| (static_score(&g, c), c)).collect();
            by.sort_by(|a, b| b.0.total_cmp(&a.0));
            if !by.is_empty() {
                play = g.move_of(by[rng.below(by.len().min(5))].1);
            }
        }
        g.play_unchecked(play);
    }
    match g.outcome() {
        Some(Outcome::Win(_)) => Some(g.history_cells().map(|(c, _)| g.move_of(c)).collect()),
        _ => None,
    }
}

/// Samples from one solve of `root` (prover: the side to move).
fn solve_samples(root: &Gomoku, a: &Args) -> (Vec<Sample>, bool) {
    let opts = CommonOptions {
        memory_bytes: a.memory << 20,
        knowledge: Knowledge {
            vct: true,
            ..Knowledge::default()
        },
        ..CommonOptions::default()
    };
    let h = Gomoku::default_heuristic(&opts);
    let mut s = Mcts::new(opts, MctsOptions::default(), h);
    let stop = AtomicBool::new(false);
    let limits = Limits::time(Duration::from_secs_f64(a.time));
    let r = s.solve(root, root.to_move(), &limits, &stop, &mut |_| {});
    let won = r.result == pcn::search::solver::SolveResult::Win;
    let mut out = Vec::new();
    let mut cells = Vec::new();
    for c in s.proven_choices() {
        if a.narrowed_only && !c.narrowed {
            continue;
        }
        let mut g = root.clone();
        for &m in &c.path {
            g.play_unchecked(m);
        }
        candidates(&g, &mut cells);
        cells.retain(|&x| c.moves.contains(&g.move_of(x)));
        let wc = g.cell_of(c.win);
        let Some(label) = cells.iter().position(|&x| x == wc) else {
            continue;
        };
        if cells.len() < 2 {
            continue;
        }
        let me = g.to_move();
        out.push(Sample {
            white: me == pcn::game::Color::White,
            keys: cells
                .iter()
                .map(|&x| [0, 1, 2, 3].map(|d| g.line_key(x, d)))
                .collect(),
            scores: cells.iter().map(|&x| static_score(&g, x)).collect(),
            label,
        });
    }
    (out, won)
}

fn main() -> ExitCode {
    let a = Args::parse();
    let t0 = Instant::now();
    // Positions: the winner to move 8, 12 and 16 plies before its winning move.
    let mut roots = Vec::new();
    for i in 0..a.games {
        let Some(moves) = self_play(a.seed, i, a.move_nodes) else {
            continue;
        };
        let n = moves.len();
        for back in [8usize, 12, 16] {
            let Some(at) = (n - 1).checked_sub(back) else {
                continue;
            };
            let mut g = match Gomoku::new(15, 15, Rule::FourT) {
                Ok(g) => g,
                Err(_) => continue,
            };
            for &m in &moves[..at] {
                g.play_unchecked(m);
            }
            if g.outcome().is_none() && g.forced_point().is_none() {
                roots.push(g);
            }
        }
    }
    eprintln!(
        "{} positions from {} games in {:.1} s",
        roots.len(),
        a.games,
        t0.elapsed().as_secs_f64()
    );
    let next = AtomicUsize::new(0);
    let all: Mutex<Vec<(usize, Vec<Sample>, bool)>> = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..a.threads.max(1) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(root) = roots.get(i) else { break };
                let (v, won) = solve_samples(root, &a);
                if let Ok(mut all) = all.lock() {
                    all.push((i, v, won));
                    if all.len() % 20 == 0 {
                        let n: usize = all.iter().map(|x| x.1.len()).sum();
                        let w = all.iter().filter(|x| x.2).count();
                        eprintln!(
                            "{} of {} solved ({} wins), {} samples, {:.0} s",
                            all.len(),
                            roots.len(),
                            w,
                            n,
                            t0.elapsed().as_secs_f64()
                        );
                    }
                }
            });
        }
    });
    let mut all = all.into_inner().unwrap_or_default();
    all.sort_by_key(|x| x.0);
    let wins = all.iter().filter(|x| x.2).count();
    let samples: Vec<Sample> = all.into_iter().flat_map(|x| x.1).collect();
    eprintln!(
        "{} samples ({} wins of {} solves) in {:.1} s",
        samples.len(),
        wins,
        roots.len(),
        t0.elapsed().as_secs_f64()
    );
    if let Err(e) = std::fs::write(&a.out, write_samples(&samples)) {
        eprintln!("cannot write {}: {e}", a.out.display());
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
