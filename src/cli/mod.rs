//! Command-line interface of the `pcn` binary.
//!
//! `pcn` without a subcommand reads stdin and detects the protocol from the first command
//! line (Gomocup or GTP); `pcn gomocup` forces the Gomocup brain protocol. Add new
//! subcommands as variants of [`Cmd`] and a match arm in [`main`].

use std::io::Write;

use clap::{Parser, Subcommand};

use crate::engine::testing::{Slow, Stubborn};
use crate::game::gomoku::Gomoku;
use crate::protocol::detect::{detect_line, Protocol};
use crate::protocol::{gomocup, spawn_line_reader, Input};
use crate::search::greedy::Greedy;
use crate::search::registry::{gomoku_searcher, GOMOKU_SEARCHERS};
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
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Speak the Gomocup/Piskvork brain protocol on stdin/stdout.
    Gomocup,
    /// Search a fixed list of positions to fixed node counts and print `Bench: <nodes> <hash>`
    /// (`--speed`: throughput figures). `--nodes` sets the budget per position.
    Bench(bench::Args),
    /// Play a match between two Gomoku players (`--nodes`/`--seed` are the global options).
    Match(arena_cmd::Args),
}

/// Builds a Gomoku player by name: the search registry's players
/// ([`crate::search::registry::GOMOKU_SEARCHERS`]) plus the time-handling test players
/// `test-slow` / `test-stubborn` (see [`crate::engine::testing`]; tests/gomocup_robustness.rs
/// uses them).
pub fn make_gomoku_player(name: &str) -> Option<Box<dyn Searcher<Gomoku>>> {
    match name.to_ascii_lowercase().as_str() {
        "test-slow" => Some(Box::new(Slow(Greedy))),
        "test-stubborn" => Some(Box::new(Stubborn(Greedy))),
        other => gomoku_searcher(other),
    }
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

fn gomocup_options(g: &GlobalOpts) -> gomocup::Options {
    gomocup::Options {
        nodes: g.nodes,
        memory_bytes: g.memory.map(|mb| (mb as usize).saturating_mul(1 << 20)),
        threads: g.threads.map(|t| t as usize),
    }
}

fn run_gomocup(
    g: &GlobalOpts,
    input: crossbeam::channel::Receiver<Input>,
    prefix: Vec<Input>,
) -> i32 {
    let Some(player) = make_gomoku_player(&g.player) else {
        eprintln!(
            "pcn: unknown player '{}' (known: {}, test-slow, test-stubborn)",
            g.player,
            GOMOKU_SEARCHERS.join(", ")
        );
        return 2;
    };
    let stdout = std::io::stdout();
    gomocup::run(input, prefix, stdout.lock(), player, gomocup_options(g))
}

/// Lines read before the protocol is known; after this many undecided lines, Gomocup (which
/// answers garbage with UNKNOWN) is assumed.
const DETECT_LINES: usize = 16;

fn run_detected(g: &GlobalOpts) -> i32 {
    let input = spawn_line_reader(std::io::stdin());
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
        Protocol::Gomocup => run_gomocup(g, input, prefix),
        Protocol::Gtp => {
            eprintln!("pcn: GTP detected, but the GTP front end is not built yet; use a Gomocup manager or `pcn gomocup`");
            let _ = std::io::stderr().flush();
            2
        }
    }
}

pub mod arena_cmd;
pub mod bench;

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
        None => run_detected(&cli.global),
        Some(Cmd::Gomocup) => {
            let input = spawn_line_reader(std::io::stdin());
            run_gomocup(&cli.global, input, Vec::new())
        }
        Some(Cmd::Bench(a)) => bench::run(a, cli.global.nodes),
        Some(Cmd::Match(a)) => arena_cmd::run(a, cli.global.nodes, cli.global.seed),
    }
}
