//! `pcn bench`: a fixed list of Gomoku positions searched by the main player to fixed node
//! counts on one thread, then every solver (mcts, dfpn, fdfpn) on fixed Gomoku and
//! Killall-Go positions with a node limit ([`SOLVER_NODES_DIVISOR`] times smaller). Prints
//! per-position nodes and best move (and the solvers' results) and ends with
//! `Bench: <total-nodes> <hash>`, where the hash (FNV-1a, 8 hex digits) covers every node
//! count, move and result, so two runs of the same build must print the same line.
//! `pcn bench --speed` prints throughput figures instead.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;

use crate::game::gomoku::{Gomoku, Rule};
use crate::game::killallgo::{KillallGo, Variant};
use crate::game::{Game, Move};
use crate::search::gomoku::alphabeta::AlphaBeta;
use crate::search::gomoku::learn::evalnet::EvalNet;
use crate::search::solver::{make, plain_heuristic, SolverGame, SolverKind, SolverOptions};
use crate::search::{Limits, Searcher};
use crate::util::Rng;

/// Options of `pcn bench`.
#[derive(ClapArgs, Debug, Clone)]
pub struct Args {
    /// Print throughput figures (play+undo, player nodes/s) instead of the bench.
    #[arg(long)]
    pub speed: bool,
}

/// One bench position: board, rule and the moves from the empty board (GTP text).
#[derive(Clone, Debug)]
pub struct BenchPosition {
    /// Short label.
    pub name: &'static str,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// Rule.
    pub rule: Rule,
    /// Moves from the empty board, space separated.
    pub moves: &'static str,
}

/// The fixed bench positions (openings, middle games, tactics; several rules and sizes).
pub const POSITIONS: &[BenchPosition] = &[
    BenchPosition {
        name: "free15-open",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 J9 J8",
    },
    BenchPosition {
        name: "free15-mid",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 H9 J8 G8 J10 J9 K9 G7 G9 L8",
    },
    BenchPosition {
        name: "free15-mid2",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 J9 G9 G7 J7 K6 H10 H9 G10 F11 J10 K10",
    },
    BenchPosition {
        name: "exact15",
        width: 15,
        height: 15,
        rule: Rule::Exact,
        moves: "H8 J9 G7 J7 J8 K8 G9 H10",
    },
    BenchPosition {
        name: "renju15",
        width: 15,
        height: 15,
        rule: Rule::Renju,
        moves: "H8 J9 J8 G8 K9 L10 H10 G11 G9",
    },
    BenchPosition {
        name: "renju15-w",
        width: 15,
        height: 15,
        rule: Rule::Renju,
        moves: "H8 J9 J8 G8 K9 L10 H10 G11",
    },
    BenchPosition {
        name: "free20",
        width: 20,
        height: 20,
        rule: Rule::Freestyle,
        moves: "K10 L11 L10 J10 M10 K11 M11 N12",
    },
    BenchPosition {
        name: "renju20",
        width: 20,
        height: 20,
        rule: Rule::Renju,
        moves: "K10 K11 L11 M12 L10 L12 J10",
    },
    BenchPosition {
        name: "caro15",
        width: 15,
        height: 15,
        rule: Rule::Caro,
        moves: "H8 J9 J8 G8 K9 L10 H10",
    },
    BenchPosition {
        name: "4t15",
        width: 15,
        height: 15,
        rule: Rule::FourT,
        moves: "H8 H9 J8 J9 K7 G7",
    },
    BenchPosition {
        name: "tac-three",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 A1 J8 A2 K8 O15",
    },
    BenchPosition {
        name: "tac-defend",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 H9 J8 J9 K8",
    },
    BenchPosition {
        name: "tac-vcf",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 G7 J9 G9 K10 G8 H7 L11 J7 F7 K7 L7 H10 A1 J11 A15",
    },
];

/// The solvers' node limit per position is the bench budget divided by this.
pub const SOLVER_NODES_DIVISOR: u64 = 30;

/// Gomoku positions of the solver part: (bench position, label). The 9x9 one is a forced win
/// for Black; the others are not solved within the limit (the node count still checks the
/// search).
pub const SOLVER_GOMOKU: &[BenchPosition] = &[
    BenchPosition {
        name: "free9-won",
        width: 9,
        height: 9,
        rule: Rule::Freestyle,
        moves: "C3 J9 D3 J7 E5 A9 D5 J1",
    },
    BenchPosition {
        name: "4t15",
        width: 15,
        height: 15,
        rule: Rule::FourT,
        moves: "H8 H9 J8 J9 K7 G7",
    },
    BenchPosition {
        name: "tac-vcf",
        width: 15,
        height: 15,
        rule: Rule::Freestyle,
        moves: "H8 G7 J9 G9 K10 G8 H7 L11 J7 F7 K7 L7 H10 A1 J11 A15",
    },
];

/// Killall-Go positions of the solver part: (label, variant, moves after the forced opening).
pub const SOLVER_KILLALLGO: &[(&str, Variant, &str)] = &[
    ("kgo9-open", Variant::Pcn9, ""),
    ("kgo9-mid", Variant::Pcn9, "E5 D5 E4 D4 E6"),
    ("kgo7-open", Variant::Seven, "C4 pass E4 D4"),
];

/// Sets up a bench position (an error names the bad move).
pub fn setup(p: &BenchPosition) -> Result<Gomoku, String> {
    let mut g = Gomoku::new(p.width, p.height, p.rule).map_err(|e| e.to_string())?;
    for s in p.moves.split_whitespace() {
        let m = g
            .parse_gtp(s)
            .map_err(|e| format!("{}: {s}: {e}", p.name))?;
        g.play(m).map_err(|e| format!("{}: {s}: {e}", p.name))?;
    }
    Ok(g)
}

/// FNV-1a over bytes, continuing from `h`.
fn fnv(mut h: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// One bench line per position: (name, nodes, best move as GTP; for the solvers followed by
/// the result).
pub type BenchLine = (String, u64, String);

/// A Killall-Go solver bench position.
fn setup_killallgo(variant: Variant, moves: &str) -> Result<KillallGo, String> {
    let mut g = KillallGo::after_opening(variant);
    for s in moves.split_whitespace() {
        let m = g.parse_gtp(s).map_err(|e| format!("{s}: {e}"))?;
        g.play(m).map_err(|e| format!("{s}: {e}"))?;
    }
    Ok(g)
}

/// Runs every solver on `g` (prover: the side to move) with `nodes` and fresh tables, adding
/// to the lines, the total and the hash.
fn bench_solvers<G: SolverGame>(
    label: &str,
    g: &G,
    nodes: u64,
    acc: &mut (Vec<BenchLine>, u64, u32),
) -> Result<(), String> {
    let stop = AtomicBool::new(false);
    let opts = SolverOptions::with_memory(16 << 20);
    for kind in SolverKind::all() {
        let name = kind.name();
        let mut s =
            make::<G>(kind, &opts, plain_heuristic(&opts.common)).map_err(|e| e.to_string())?;
        let out = s.solve(g, g.to_move(), &Limits::nodes(nodes), &stop, &mut |_| {});
        let mv = out.best.map_or("none".to_string(), |m| g.move_to_gtp(m));
        // Tree nodes plus knowledge-search nodes: a solver that proves the root by its
        // threat search alone still did work.
        let n = out.stats.nodes + out.stats.knowledge_nodes;
        acc.1 += n;
        acc.2 = fnv(acc.2, &n.to_le_bytes());
        acc.2 = fnv(acc.2, &out.best.unwrap_or(u16::MAX).to_le_bytes());
        acc.2 = fnv(acc.2, out.result.as_str().as_bytes());
        acc.0.push((
            format!("{name}:{label}"),
            n,
            format!("{mv} {}", out.result.as_str()),
        ));
    }
    Ok(())
}

/// Runs the bench: returns the per-position lines, the total nodes and the hash.
pub fn run_bench(nodes: u64) -> Result<(Vec<BenchLine>, u64, u32), String> {
    let stop = AtomicBool::new(false);
    let mut lines = Vec::new();
    let mut total = 0u64;
    let mut h = 0x811C_9DC5u32;
    let mut player = AlphaBeta::new();
    player.set_memory(16 << 20);
    for p in POSITIONS {
        let g = setup(p)?;
        player.clear();
        let r = player.search(&g, &Limits::nodes(nodes), &stop, &mut |_| {});
        let mv = r.best.map_or("none".to_string(), |m| g.move_to_gtp(m));
        total += r.nodes;
        h = fnv(h, &r.nodes.to_le_bytes());
        h = fnv(h, &r.best.unwrap_or(u16::MAX).to_le_bytes());
        lines.push((p.name.to_string(), r.nodes, mv));
    }
    let sn = (nodes / SOLVER_NODES_DIVISOR).max(1);
    let mut acc = (lines, total, h);
    for p in SOLVER_GOMOKU {
        bench_solvers(p.name, &setup(p)?, sn, &mut acc)?;
    }
    for &(label, variant, moves) in SOLVER_KILLALLGO {
        let g = setup_killallgo(variant, moves).map_err(|e| format!("{label}: {e}"))?;
        bench_solvers(label, &g, sn, &mut acc)?;
    }
    Ok(acc)
}

/// Random move sequences (from near-stone points) for the play+undo timing.
fn random_lines(rule: Rule, count: usize, len: usize, seed: u64) -> Vec<Vec<Move>> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut cands = Vec::new();
    while out.len() < count {
        let Ok(mut g) = Gomoku::new(15, 15, rule) else {
            break;
        };
        let mut line = Vec::new();
        g.play_unchecked(7 * 15 + 7);
        line.push(7 * 15 + 7);
        while line.len() < len && g.outcome().is_none() {
            crate::search::gomoku::greedy::candidates(&g, &mut cands);
            if cands.is_empty() {
                break;
            }
            let m = g.move_of(cands[rng.below(cands.len())]);
            g.play_unchecked(m);
            line.push(m);
        }
        out.push(line);
    }
    out
}

fn play_undo_rate(rule: Rule) -> f64 {
    let lines = random_lines(rule, 64, 60, 7);
    let Ok(g0) = Gomoku::new(15, 15, rule) else {
        return 0.0;
    };
    let mut g = g0.clone();
    let mut n = 0u64;
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(700) {
        for line in &lines {
            for &m in line {
                g.play_unchecked(m);
            }
            for _ in line {
                g.undo();
            }
            n += line.len() as u64;
        }
    }
    n as f64 / t.elapsed().as_secs_f64()
}

/// Runs `pcn bench`; returns the exit code.
/// Default node budget per bench position (`pcn --nodes N bench` overrides it).
pub const DEFAULT_NODES: u64 = 150_000;

/// Runs `pcn bench`; `nodes` is the global `--nodes` option, `eval_nets` those of `--eval`
/// (the bench itself always uses the pattern evaluation, so that its signature stays that
/// of the build; `--speed` times the player with both).
pub fn run(args: Args, nodes: Option<u64>, eval_nets: &[Arc<EvalNet>]) -> i32 {
    let nodes = nodes.unwrap_or(DEFAULT_NODES);
    if args.speed {
        for rule in [Rule::Freestyle, Rule::Renju] {
            println!(
                "play+undo 15x15 {:9}: {:6.2} M/s",
                rule.name(),
                play_undo_rate(rule) / 1e6
            );
        }
        let stop = AtomicBool::new(false);
        // The evaluation network's cost per node: its speed does not depend on its weights,
        // so random ones stand in where `--eval` gives none for freestyle.
        let free_net = eval_nets
            .iter()
            .find(|n| n.rule() == Rule::Freestyle)
            .cloned();
        let (net, net_label) = match free_net {
            Some(n) => {
                let label = if n.residual() { "residual net" } else { "net" };
                (n, label)
            }
            None => (
                Arc::new(EvalNet::random(Rule::Freestyle, 32, 32, 1)),
                "net (random weights)",
            ),
        };
        let runs = [
            ("free15-mid", None),
            ("free15-mid", Some(net)),
            ("renju15", None),
        ];
        for (name, net) in runs {
            let Some(p) = POSITIONS.iter().find(|p| p.name == name) else {
                continue;
            };
            let Ok(g) = setup(p) else { continue };
            let mut player = AlphaBeta::new();
            let label = if net.is_some() { net_label } else { "classic" };
            player.set_eval_nets(net.into_iter().collect());
            let t = Instant::now();
            let r = player.search(
                &g,
                &Limits::time(Duration::from_secs(2)),
                &stop,
                &mut |_| {},
            );
            let s = t.elapsed().as_secs_f64();
            println!(
                "player {:12} {:20}: {:8} nodes in {:.2} s = {:6.0} k nodes/s",
                name,
                label,
                r.nodes,
                s,
                r.nodes as f64 / s / 1e3
            );
        }
        // Killall-Go solving throughput (focused DFPN, no network, a 64 MB table): the
        // rules (captures, superko, Benson's life) dominate it, unlike the bench's Gomoku.
        let kgo = SOLVER_KILLALLGO
            .iter()
            .find(|p| p.0 == "kgo9-mid")
            .and_then(|&(label, variant, moves)| {
                Some((label, setup_killallgo(variant, moves).ok()?))
            });
        let opts = SolverOptions::with_memory(64 << 20);
        let solver = make::<KillallGo>(SolverKind::Fdfpn, &opts, plain_heuristic(&opts.common));
        if let (Some((label, g)), Ok(mut s)) = (kgo, solver) {
            let t = Instant::now();
            let out = s.solve(
                &g,
                g.to_move(),
                &Limits::time(Duration::from_secs(2)),
                &stop,
                &mut |_| {},
            );
            let secs = t.elapsed().as_secs_f64();
            println!(
                "solver fdfpn {label:9}: {:8} nodes in {secs:.2} s = {:6.0} k nodes/s",
                out.stats.nodes,
                out.stats.nodes as f64 / secs.max(1e-9) / 1e3
            );
        }
        // Threat-space search throughput on the bench's middle games (both sides to move).
        for (kind, vct) in [("vcf", false), ("vct", true)] {
            let (mut nodes, mut secs) = (0u64, 0f64);
            for p in POSITIONS.iter().filter(|p| p.rule != Rule::FourT) {
                let Ok(mut g) = setup(p) else { continue };
                for side in [g.to_move(), g.to_move().opp()] {
                    g.set_to_move(side);
                    let mut solver = crate::search::gomoku::threat::ThreatSolver::new(16);
                    let limits = Limits::nodes(200_000);
                    let mut budget = crate::search::Budget::new(&limits, &stop);
                    let t = Instant::now();
                    let depth = if vct { 8 } else { 30 };
                    let _ = if vct {
                        solver.vct(&mut g, &mut budget, depth)
                    } else {
                        solver.vcf(&mut g, &mut budget, depth)
                    };
                    secs += t.elapsed().as_secs_f64();
                    nodes += budget.nodes;
                }
            }
            println!(
                "threat {kind} (bench positions, both sides): {nodes} nodes in {secs:.2} s = {:.0} k nodes/s",
                nodes as f64 / secs.max(1e-9) / 1e3
            );
        }
        print!("{}", crate::search::gomoku::threat::speed_report());
        return 0;
    }
    let t = Instant::now();
    match run_bench(nodes) {
        Ok((lines, total, h)) => {
            for (name, nodes, mv) in &lines {
                println!("{name:16} nodes {nodes:9} best {mv}");
            }
            let s = t.elapsed().as_secs_f64();
            println!("time {:.2} s, {:.0} k nodes/s", s, total as f64 / s / 1e3);
            println!("Bench: {total} {h:08x}");
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}
