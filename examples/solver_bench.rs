//! Runs a solver on problem SGF files and prints one line per problem (nodes/s measurements).
//!
//! `cargo run --release --example solver_bench -- SOLVER SECONDS [--no-vcf] [--vct] [--4t]
//! [--ghi-paper] FILE...` (options apply to the files after them).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pcn::game::gomoku::Rule;
use pcn::game::{Color, Game};
use pcn::search::solver::{solver_by_name, GhiMode, Knowledge, SolverGame, SolverOptions};
use pcn::search::Limits;
use pcn::sgf::{self, GameTree};

fn run<G: SolverGame>(
    name: &str,
    g: &G,
    prover: Color,
    secs: f64,
    opts: &SolverOptions,
    file: &str,
) {
    let mut s = match solver_by_name::<G>(name, opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return;
        }
    };
    let stop = AtomicBool::new(false);
    let o = s.solve(
        g,
        prover,
        &Limits::time(Duration::from_secs_f64(secs)),
        &stop,
        &mut |_| {},
    );
    let proof = if o.result != pcn::search::solver::SolveResult::Unknown {
        match s.proof_tree() {
            Some(t) => match t.check(g) {
                Ok(()) => format!("proof ok ({} nodes)", t.len()),
                Err(e) => format!("PROOF BAD: {e}"),
            },
            None => "no proof".into(),
        }
    } else {
        String::new()
    };
    println!(
        "{file}\t{name}\t{}\t{}\tnodes {}\t{:.2}s\t{:.0} n/s\tknow {}\ttt {}/{}\t{proof}",
        o.result.as_str(),
        o.best.map_or("-".into(), |m| g.move_to_gtp(m)),
        o.stats.nodes,
        o.stats.seconds,
        o.stats.nodes_per_second,
        o.stats.knowledge_nodes,
        o.stats.tt_used,
        o.stats.tt_capacity
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().cloned().unwrap_or_else(|| "dfpn".into());
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let mut opts = SolverOptions {
        memory_bytes: 512 << 20,
        ..SolverOptions::default()
    };
    let mut rule = Rule::Freestyle;
    for a in args.iter().skip(2) {
        match a.as_str() {
            "--no-vcf" => opts.knowledge = Knowledge::none(),
            "--vct" => opts.knowledge.vct = true,
            "--4t" => rule = Rule::FourT,
            "--ghi-paper" => opts.ghi = GhiMode::Paper,
            file => {
                let Ok(text) = std::fs::read_to_string(file) else {
                    eprintln!("cannot read {file}");
                    continue;
                };
                let Ok(tree) = GameTree::parse(&text) else {
                    eprintln!("bad sgf {file}");
                    continue;
                };
                match tree.game_type() {
                    Ok(4) => match sgf::to_gomoku(&tree, rule) {
                        Ok(g) => run(&name, &g, g.to_move(), secs, &opts, file),
                        Err(e) => eprintln!("{file}: {e}"),
                    },
                    _ => match sgf::to_killallgo(&tree) {
                        Ok(g) => run(&name, &g, g.to_move(), secs, &opts, file),
                        Err(e) => eprintln!("{file}: {e}"),
                    },
                }
            }
        }
    }
}
