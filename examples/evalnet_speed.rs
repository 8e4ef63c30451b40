//! Times the evaluation network's parts: the accumulator's update of a move (placed, the
//! sums brought up to date, taken back) and the head, on random lines of play
//! (`cargo run --release --example evalnet_speed`).
use std::sync::Arc;
use std::time::Instant;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::Game;
use pcn::search::gomoku::learn::evalnet::{Accumulator, EvalNet, Simd};
use pcn::util::Rng;

fn main() {
    let c: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(32);
    let net = Arc::new(EvalNet::random(Rule::Freestyle, c, 32, 1));
    let mut rng = Rng::new(5);
    let mut lines = Vec::new();
    for _ in 0..64 {
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let mut line = Vec::new();
        let mut legal = Vec::new();
        while line.len() < 40 && g.outcome().is_none() {
            g.legal_moves(&mut legal);
            let m = legal[rng.below(legal.len())];
            g.play(m).unwrap();
            line.push(m);
        }
        lines.push(line);
    }
    for simd in [Simd::Scalar, Simd::Avx2, Simd::Avx512] {
        if !simd.available() {
            continue;
        }
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let mut acc = Accumulator::with_simd(net.clone(), simd);
        acc.reset(&g);
        let t = Instant::now();
        let mut n = 0u64;
        let mut sink = 0f32;
        for _ in 0..20 {
            for line in &lines {
                for &m in line {
                    g.play(m).unwrap();
                    acc.played(g.cell_of(m));
                    // Read the value after every move, as a search that evaluates each node.
                    sink += acc.value(&g);
                    n += 1;
                }
                for _ in line.iter() {
                    g.undo();
                    acc.taken_back();
                }
            }
        }
        let upd = t.elapsed().as_secs_f64() / n as f64 * 1e9;
        // The board's own play+undo, for the share of the above.
        let t = Instant::now();
        for _ in 0..20 {
            for line in &lines {
                for &m in line {
                    g.play(m).unwrap();
                }
                for _ in line.iter() {
                    g.undo();
                }
            }
        }
        let board = t.elapsed().as_secs_f64() / n as f64 * 1e9;
        let t = Instant::now();
        for _ in 0..200_000 {
            sink += acc.value(&g);
        }
        let head = t.elapsed().as_secs_f64() / 200_000.0 * 1e9;
        println!(
            "{simd:?}: play, value and undo {upd:.0} ns (board alone {board:.0} ns, head {head:.0} ns, so the update {:.0} ns) ({sink:.1})",
            upd - board - head
        );
    }
}
