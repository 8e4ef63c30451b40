//! Command-line interface of the `pcn` binary.
//!
//! `pcn` without a subcommand reads stdin and detects the protocol from the first command
//! line (Gomocup or GTP); `pcn gomocup` forces the Gomocup brain protocol. Add new
//! subcommands as variants of [`Cmd`] and a match arm in [`main`].

use clap::{Parser, Subcommand};

use self::config::EngineConfig;
use crate::engine::testing::{Frozen, Slow, Stubborn};
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::killallgo::{KillallGo, Variant};
use crate::protocol::detect::{detect_line, Protocol};
use crate::protocol::{gomocup, gtp, spawn_line_reader, Input};
use crate::search::gomoku::greedy::Greedy;
use crate::search::registry::{
    gomoku_searcher_with, PlayerSettings, SolverNet, AUTO_SOLVER, GOMOKU_SEARCHERS,
};
use crate::search::Searcher;

/// Game-solving engine for Gomoku (Gomocup brain protocol) and Killall-Go (GTP).
#[derive(Parser, Debug)]
#[command(name = "pcn", version, about)]
pub struct Cli {
    /// Options shared by all subcommands.
    #[command(flatten)]
    pub global: GlobalOpts,
    /// What to do; without one, speak the protocol detected on stdin.
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

/// Options shared by all subcommands.
#[derive(clap::Args, Debug, Clone)]
pub struct GlobalOpts {
    /// The player (searcher) to use.
    #[arg(long, global = true, default_value = "pcn")]
    pub player: String,
    /// Search threads.
    #[arg(long, global = true, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Solver workers of one problem: a number or `auto` (the machine's cores). With more
    /// than one, a job-level manager spreads the problem over that many solver threads and
    /// merges their proofs (`pcn solve`, `pcn gtp`'s solver, the Gomocup `solver` players;
    /// docs/solving.md, "Several workers"). 1: the plain solver.
    #[arg(long, global = true, value_parser = crate::search::joblevel::parse_workers)]
    pub workers: Option<usize>,
    /// Memory cap for the search tables, in MB.
    #[arg(long, global = true, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub memory: Option<u64>,
    /// Random seed (deterministic runs).
    #[arg(long, global = true, default_value_t = 0)]
    pub seed: u64,
    /// Deterministic mode: a node budget per move instead of the clock.
    #[arg(long, global = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Log level on stderr (off, error, warn, info, debug, trace); default: RUST_LOG or off.
    #[arg(long, global = true)]
    pub log_level: Option<log::LevelFilter>,
    /// Network for the solvers: a model directory (or its model.safetensors / model.json),
    /// `auto` (the network shipped in weights/ for the game and board, none if there is
    /// none; see docs/training.md) or `none`. `pcn solve`: every solver but plain `dfpn`; `pcn gtp`: the configured
    /// solver (genmove, analysis, `pcn-solve`); Gomocup: the `solver` players. α0 models
    /// give MCTS priors/values and the FDFPN value window; PCN models give proof-cost values
    /// (MCTS) and pn/dn initialisation (FDFPN).
    #[arg(long, global = true, default_value = "auto")]
    pub net: String,
    /// Board symmetries averaged per network evaluation (1..=8; the paper's solver used 8,
    /// its self-play 1). Each one costs a network evaluation, so 1 lets a timed solve search
    /// further (docs/solving.md).
    #[arg(long, global = true, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub symmetries: u8,
    /// Network backend: `auto` (the GPU when compiled in and usable, else the CPU), `cpu`,
    /// `cuda` (fp16), `cuda-im2col` (fp16 on the im2col fallback) or `cuda-fp32` (see
    /// docs/gpu.md).
    #[arg(long, global = true, default_value = "auto")]
    pub backend: String,
    /// Evaluation of the Gomoku player `pcn` (and of the `solver` players' fallback):
    /// `classic` (the pattern evaluation), `net` (the evaluation network shipped for the rule
    /// being played; the pattern evaluation under rules without one), `auto` (whichever of
    /// the two measured stronger for the rule: docs/players.md) or a weight file
    /// (docs/model-format.md, used under the rule it was trained for).
    #[arg(long, global = true, default_value = "auto")]
    pub eval: String,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Speak the Gomocup/Piskvork brain protocol on stdin/stdout.
    Gomocup,
    /// Search a fixed list of positions to fixed node counts and print `Bench: <nodes> <hash>`
    /// (`--speed`: throughput figures). `--nodes` sets the budget per position.
    Bench(bench::Args),
    /// Play a match between two Gomoku players (`--nodes`, `--seed` and `--memory` are the
    /// global options).
    Match(arena_cmd::Args),
    /// Speak GTP v2 on stdin/stdout (Sabaki, GoGui, scripts); see docs/gtp.md.
    Gtp(GtpArgs),
    /// Solve problem SGF files: one JSON line per problem (see docs/solving.md).
    Solve(solve::SolveArgs),
    /// Re-check proof files independently of the solvers (see docs/solving.md).
    Verify(verify::VerifyArgs),
    /// Network evaluation speed (positions/s per batch size; see docs/performance.md).
    Nnbench(nnbench::NnBenchArgs),
    /// Train the Gomoku pattern policy from alpha-beta self-play (see weights/README.md).
    TrainPatterns(train::TrainArgs),
    /// Self-play training data for proof cost networks (see docs/training.md).
    Selfplay(selfplay::SelfplayArgs),
    /// The eval net's leaf data: positions the player's search scores, labelled by deeper
    /// searches (see docs/training.md, "The eval net").
    LeafLabels(leaves::LeafArgs),
}

/// Options of `pcn gtp`.
#[derive(clap::Args, Debug, Clone)]
pub struct GtpArgs {
    /// The game: `killallgo` or `gomoku`.
    #[arg(long, default_value = "killallgo")]
    pub game: String,
    /// Board size (Killall-Go: 9 = PCN 9x9, 7 = 7x7; Gomoku: 5..=22).
    #[arg(long)]
    pub size: Option<usize>,
    /// Gomoku rule: freestyle (alias ndk), exact, renju, caro, caro-exact, 4t, or a Gomocup
    /// rule number (see `Rule::parse`).
    #[arg(long, default_value = "freestyle")]
    pub rule: String,
    /// Seconds per genmove when the controller sent no time settings.
    #[arg(long, default_value_t = 5.0)]
    pub move_time: f64,
    /// Default seconds of `pcn-solve` without an argument.
    #[arg(long, default_value_t = 10.0)]
    pub solve_time: f64,
    /// Solver of genmove, analysis and `pcn-solve`: auto (the game's best: mcts for Gomoku,
    /// fdfpn for Killall-Go), mcts, dfpn, fdfpn, gpn, ews, ppn, ab, or none (genmove and
    /// analysis without a solver; `pcn-solve` then uses auto's). GTP `pcn-solver NAME`
    /// changes it.
    #[arg(long, default_value = AUTO_SOLVER)]
    pub solver: String,
}

impl Default for GtpArgs {
    fn default() -> Self {
        GtpArgs {
            game: "killallgo".into(),
            size: None,
            rule: "freestyle".into(),
            move_time: 5.0,
            solve_time: 10.0,
            solver: AUTO_SOLVER.into(),
        }
    }
}

/// Builds a Gomoku player by name: the search registry's players
/// ([`crate::search::registry::GOMOKU_SEARCHERS`]; the `solver` players use the threads,
/// seed and network of `settings`) plus the time-handling test players `test-slow`,
/// `test-stubborn` and `test-frozen` (see [`crate::engine::testing`]; tests/gomocup_robustness.rs uses them).
pub fn make_gomoku_player(
    name: &str,
    settings: &PlayerSettings,
) -> Option<Box<dyn Searcher<Gomoku>>> {
    match name.to_ascii_lowercase().as_str() {
        "test-slow" => Some(Box::new(Slow(Greedy))),
        "test-stubborn" => Some(Box::new(Stubborn(Greedy))),
        "test-frozen" => Some(Box::new(Frozen(Greedy))),
        other => gomoku_searcher_with(other, settings),
    }
}

/// Loads `--net` for an engine playing `sample`'s game and checks that the model fits it;
/// the error is the message for the command line.
fn engine_net<G: crate::game::Game>(
    c: &EngineConfig,
    sample: &G,
) -> Result<Option<SolverNet>, String> {
    let net = c.open_net_for(sample)?;
    if let Some(n) = &net {
        n.check_fits(sample)
            .map_err(|e| format!("--net {}: {e}", c.net.as_arg()))?;
        log::info!("network: {}", n.describe());
    }
    Ok(net)
}

fn init_logging(level: Option<log::LevelFilter>) {
    let mut b = env_logger::Builder::new();
    // Quiet by default: Gomocup managers may merge stderr into the protocol pipe.
    b.filter_level(log::LevelFilter::Off);
    if let Ok(spec) = std::env::var("RUST_LOG") {
        b.parse_filters(&spec);
    }
    if let Some(l) = level {
        b.filter_level(l);
    }
    b.format_timestamp_millis();
    let _ = b.try_init();
}

fn gomocup_options(c: &EngineConfig, solver_player: bool) -> gomocup::Options {
    gomocup::Options {
        nodes: c.nodes,
        memory_bytes: c.memory_bytes,
        memory_given: c.memory_given,
        reserve_bytes: crate::search::PROCESS_RESERVE_BYTES,
        reserve_per_thread: if solver_player {
            crate::search::SOLVER_RESERVE_PER_THREAD
        } else {
            crate::search::PROCESS_RESERVE_PER_THREAD
        },
        threads: Some(c.threads),
    }
}

fn run_gomocup<W: std::io::Write>(
    g: &GlobalOpts,
    input: crossbeam::channel::Receiver<Input>,
    prefix: Vec<Input>,
    out: W,
) -> i32 {
    let c = EngineConfig::from_global(g);
    // The model must fit the standard 15x15 board (other START sizes solve without it).
    let net = match Gomoku::new(15, 15, Rule::Freestyle)
        .map_err(|e| e.to_string())
        .and_then(|sample| engine_net(&c, &sample))
    {
        Ok(n) => n,
        Err(e) => {
            eprintln!("pcn: {e}");
            return 2;
        }
    };
    let has_net = net.is_some();
    let eval_nets = match c.open_eval() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("pcn: {e}");
            return 2;
        }
    };
    let Some(player) = make_gomoku_player(&g.player, &c.player_settings(net, eval_nets)) else {
        eprintln!(
            "pcn: unknown player '{}' (known: {}, test-slow, test-stubborn, test-frozen)",
            g.player,
            GOMOKU_SEARCHERS.join(", ")
        );
        return 2;
    };
    let solver_player = g.player.to_ascii_lowercase().starts_with("solver");
    if has_net && !solver_player {
        log::warn!(
            "--net is used by the solver players only, not by '{}'",
            g.player
        );
    }
    gomocup::run(
        input,
        prefix,
        out,
        player,
        gomocup_options(&c, solver_player),
    )
}

fn seconds(name: &str, s: f64) -> Result<std::time::Duration, String> {
    if s.is_finite() && (0.0..=1.0e7).contains(&s) {
        Ok(std::time::Duration::from_secs_f64(s))
    } else {
        Err(format!("--{name} must be 0..=1e7 seconds"))
    }
}

fn run_gtp<W: std::io::Write>(
    g: &GlobalOpts,
    a: &GtpArgs,
    input: crossbeam::channel::Receiver<Input>,
    prefix: Vec<Input>,
    out: W,
) -> i32 {
    let c = EngineConfig::from_global(g);
    let solver = match gtp::parse_solver(&a.solver) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pcn: --solver '{}': {e}", a.solver);
            return 2;
        }
    };
    let opts = match (
        seconds("move-time", a.move_time),
        seconds("solve-time", a.solve_time),
    ) {
        (Ok(move_time), Ok(solve_time)) => gtp::Options {
            nodes: c.nodes,
            seed: c.seed,
            threads: c.threads,
            workers: c.workers,
            move_time,
            solve_time,
            memory_bytes: c.memory_bytes,
            solver,
            net: None,
        },
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("pcn: {e}");
            return 2;
        }
    };
    let mut opts = opts;
    match a.game.to_ascii_lowercase().as_str() {
        "killallgo" | "killall-go" => {
            let size = a.size.unwrap_or(9);
            let Some(v) = Variant::from_size(size) else {
                eprintln!("pcn: Killall-Go sizes are 9 (PCN) and 7");
                return 2;
            };
            let game = KillallGo::new(v);
            match engine_net(&c, &game) {
                Ok(n) => opts.net = n,
                Err(e) => {
                    eprintln!("pcn: {e}");
                    return 2;
                }
            }
            gtp::run(input, prefix, out, game, None, opts)
        }
        "gomoku" => {
            let Some(rule) = Rule::parse(&a.rule) else {
                eprintln!("pcn: unknown Gomoku rule '{}'", a.rule);
                return 2;
            };
            let size = a.size.unwrap_or(15);
            let game = match Gomoku::new(size, size, rule) {
                Ok(game) => game,
                Err(e) => {
                    eprintln!("pcn: {e}");
                    return 2;
                }
            };
            match engine_net(&c, &game) {
                Ok(n) => opts.net = n,
                Err(e) => {
                    eprintln!("pcn: {e}");
                    return 2;
                }
            }
            let eval_nets = match c.open_eval() {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("pcn: {e}");
                    return 2;
                }
            };
            let settings = c.player_settings(opts.net.clone(), eval_nets);
            let Some(player) = make_gomoku_player(&g.player, &settings) else {
                eprintln!("pcn: unknown player '{}'", g.player);
                return 2;
            };
            gtp::run(input, prefix, out, game, Some(player), opts)
        }
        other => {
            eprintln!("pcn: unknown game '{other}' (killallgo, gomoku)");
            2
        }
    }
}

/// Lines read before the protocol is known; after this many undecided lines, Gomocup (which
/// answers garbage with UNKNOWN) is assumed.
const DETECT_LINES: usize = 16;

fn run_detected<W: std::io::Write>(
    g: &GlobalOpts,
    input: crossbeam::channel::Receiver<Input>,
    out: W,
) -> i32 {
    let mut prefix = Vec::new();
    let mut proto = None;
    while proto.is_none() && prefix.len() < DETECT_LINES {
        match input.recv() {
            Ok(Input::Line { text, at }) => {
                proto = detect_line(&text);
                prefix.push(Input::Line { text, at });
            }
            Ok(i @ Input::TooLong { .. }) => prefix.push(i),
            Ok(Input::Eof) | Err(_) => {
                prefix.push(Input::Eof);
                break;
            }
        }
    }
    match proto.unwrap_or(Protocol::Gomocup) {
        Protocol::Gomocup => run_gomocup(g, input, prefix, out),
        Protocol::Gtp => run_gtp(g, &GtpArgs::default(), input, prefix, out),
    }
}

/// Runs the protocol session that `cli` asks for (no subcommand: detected from the first
/// lines; `gomocup`; `gtp`) on `input`, writing to `out`, exactly as the binary does on
/// stdin/stdout (minus logging set-up); `None` when `cli` names another subcommand. The
/// option-parser fuzz target ([`crate::fuzzing`]) drives parsed command lines through here.
pub fn run_protocol<W: std::io::Write>(
    cli: &Cli,
    input: crossbeam::channel::Receiver<Input>,
    out: W,
) -> Option<i32> {
    match &cli.cmd {
        None => Some(run_detected(&cli.global, input, out)),
        Some(Cmd::Gomocup) => Some(run_gomocup(&cli.global, input, Vec::new(), out)),
        Some(Cmd::Gtp(a)) => Some(run_gtp(&cli.global, a, input, Vec::new(), out)),
        Some(_) => None,
    }
}

pub mod arena_cmd;
pub mod bench;
pub mod config;
pub mod nnbench;

pub mod job_worker;
pub mod leaves;
pub mod selfplay;
pub mod solve;
pub mod train;
pub mod verify;

/// Runs the binary and returns its exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    init_logging(cli.global.log_level);
    match cli.cmd {
        None => run_detected(
            &cli.global,
            spawn_line_reader(std::io::stdin()),
            std::io::stdout().lock(),
        ),
        Some(Cmd::Gomocup) => {
            let input = spawn_line_reader(std::io::stdin());
            run_gomocup(&cli.global, input, Vec::new(), std::io::stdout().lock())
        }
        Some(Cmd::Bench(a)) => {
            let c = EngineConfig::from_global(&cli.global);
            match c.open_eval() {
                Ok(nets) => bench::run(a, cli.global.nodes, &nets),
                Err(e) => {
                    eprintln!("pcn: {e}");
                    2
                }
            }
        }
        Some(Cmd::Match(a)) => arena_cmd::run(a, &EngineConfig::from_global(&cli.global)),
        Some(Cmd::Solve(mut a)) => {
            let c = EngineConfig::from_global(&cli.global);
            a.nodes = c.nodes;
            a.threads = c.threads as u32;
            a.workers = c.workers;
            a.memory_bytes = c.memory_bytes;
            a.seed = c.seed;
            a.net = c.net.as_arg().to_string();
            a.symmetries = c.symmetries as u8;
            a.backend = c.backend;
            solve::run(a)
        }
        Some(Cmd::Verify(a)) => verify::run(a),
        Some(Cmd::Nnbench(mut a)) => {
            a.net = cli.global.net.clone().into();
            a.backend = cli.global.backend.to_ascii_lowercase();
            nnbench::run(a, cli.global.threads.unwrap_or(1) as usize)
        }
        Some(Cmd::TrainPatterns(a)) => {
            train::run(a, cli.global.seed, cli.global.threads.unwrap_or(1) as usize)
        }
        Some(Cmd::Selfplay(mut a)) => {
            a.net = cli.global.net.clone();
            a.backend = cli.global.backend.clone();
            let threads = cli.global.threads.unwrap_or(1) as usize;
            selfplay::run_cmd(a, cli.global.seed, threads)
        }
        Some(Cmd::LeafLabels(a)) => match EngineConfig::from_global(&cli.global).open_eval() {
            Ok(nets) => leaves::run_cmd(
                a,
                cli.global.seed,
                cli.global.threads.unwrap_or(1) as usize,
                nets,
            ),
            Err(e) => {
                eprintln!("pcn leaf-labels: {e}");
                2
            }
        },
        Some(Cmd::Gtp(a)) => {
            let input = spawn_line_reader(std::io::stdin());
            run_gtp(&cli.global, &a, input, Vec::new(), std::io::stdout().lock())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap's own consistency checks (run only in debug builds otherwise): an option defined
    /// twice, e.g. a subcommand redefining a global one, fails here.
    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn network_options_are_global() {
        let cli = Cli::try_parse_from([
            "pcn",
            "gtp",
            "--net",
            "m",
            "--symmetries",
            "2",
            "--backend",
            "cpu",
        ])
        .unwrap();
        assert_eq!(
            (
                cli.global.net.as_str(),
                cli.global.symmetries,
                cli.global.backend.as_str()
            ),
            ("m", 2, "cpu")
        );
        let cli = Cli::try_parse_from(["pcn", "--net", "m", "solve", "x.sgf"]).unwrap();
        assert_eq!(cli.global.net, "m");
        assert_eq!(cli.global.symmetries, 1);
        assert_eq!(cli.global.backend, "auto");
        let cli = Cli::try_parse_from(["pcn", "nnbench", "--net", "m"]).unwrap();
        assert_eq!(cli.global.net, "m");
        assert!(Cli::try_parse_from(["pcn", "gtp", "--symmetries", "0"]).is_err());
        assert_eq!(
            Cli::try_parse_from(["pcn", "gtp"]).unwrap().global.net,
            "auto"
        );
    }
}
