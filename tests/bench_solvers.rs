//! `pcn bench` covers the solvers: every solver runs on every solver bench position, the
//! proven positions are proven by each, and the whole bench (nodes, moves, results) is the
//! same on every run.

use pcn::cli::bench::{run_bench, SOLVER_GOMOKU, SOLVER_KILLALLGO};
use pcn::search::solver::solver_names;

#[test]
fn bench_runs_every_solver_deterministically() {
    let a = run_bench(3000).unwrap();
    let b = run_bench(3000).unwrap();
    assert_eq!(a, b, "bench differs between runs");
    let labels: Vec<&str> = SOLVER_GOMOKU
        .iter()
        .map(|p| p.name)
        .chain(SOLVER_KILLALLGO.iter().map(|k| k.0))
        .collect();
    for solver in solver_names() {
        for label in &labels {
            let name = format!("{solver}:{label}");
            let line =
                a.0.iter()
                    .find(|l| l.0 == name)
                    .unwrap_or_else(|| panic!("no bench line {name}"));
            assert!(line.1 > 0, "{name}: no nodes");
            // 3000 / 30 = 100 nodes: enough for the VCF at the root; the won 9x9 position
            // is never disproven; the openings stay open.
            let result = line.2.split_whitespace().nth(1).unwrap_or("");
            match *label {
                "tac-vcf" => assert_eq!(result, "win", "{name}"),
                "free9-won" => assert_ne!(result, "loss", "{name}"),
                _ => assert_eq!(result, "unknown", "{name}"),
            }
        }
    }
    // The solver lines count towards the total.
    assert_eq!(a.1, a.0.iter().map(|l| l.1).sum::<u64>());
}
