//! `pcn match`: plays two Gomoku searchers against each other (see [`crate::arena`]).

use std::time::Duration;

use clap::Args as ClapArgs;

use crate::arena::{run_match, GameResult, MatchConfig};
use crate::cli::config::EngineConfig;
use crate::game::gomoku::Rule;
use crate::game::Color;

/// Options of `pcn match`.
#[derive(ClapArgs, Debug, Clone)]
pub struct Args {
    /// Player A (registry name: pcn, greedy, ab4).
    #[arg(long, default_value = "pcn")]
    pub a: String,
    /// Player B.
    #[arg(long, default_value = "greedy")]
    pub b: String,
    /// Number of games (rounded up to even: each opening is played with both colours).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Time per move in milliseconds (0 = no time limit; then give --nodes).
    #[arg(long, default_value_t = 200)]
    pub time_ms: u64,
    /// Extra milliseconds allowed before a move counts as a time forfeit.
    #[arg(long, default_value_t = 300)]
    pub margin_ms: u64,
    /// Board size (square), or use --width/--height.
    #[arg(long, default_value_t = 15)]
    pub size: usize,
    /// Board width (overrides --size).
    #[arg(long)]
    pub width: Option<usize>,
    /// Board height (overrides --size).
    #[arg(long)]
    pub height: Option<usize>,
    /// Rule: a Gomocup rule number (0, 1, 4, 8, 9) or a name (freestyle, exact, renju,
    /// caro, caro-exact, 4t).
    #[arg(long, default_value = "0")]
    pub rule: String,
    /// Fewest opening stones.
    #[arg(long, default_value_t = 2)]
    pub min_opening: usize,
    /// Most opening stones.
    #[arg(long, default_value_t = 4)]
    pub max_opening: usize,
    /// Games played at once (each uses one thread).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Print every game's moves.
    #[arg(long)]
    pub verbose: bool,
}

/// Runs `pcn match`; returns the exit code.
/// Runs `pcn match`; `c` holds the global `--nodes`, `--seed` and `--memory` (each
/// player's table memory).
pub fn run(args: Args, c: &EngineConfig) -> i32 {
    let (nodes, seed) = (c.nodes, c.seed);
    let Some(rule) = Rule::parse(&args.rule) else {
        eprintln!("error: unknown rule '{}'", args.rule);
        return 2;
    };
    if args.time_ms == 0 && nodes.is_none() {
        eprintln!("error: give --time-ms > 0 or --nodes");
        return 2;
    }
    let cfg = MatchConfig {
        a: args.a.clone(),
        b: args.b.clone(),
        games: args.games,
        time: (args.time_ms > 0).then(|| Duration::from_millis(args.time_ms)),
        nodes,
        margin: Duration::from_millis(args.margin_ms),
        width: args.width.unwrap_or(args.size),
        height: args.height.unwrap_or(args.size),
        rule,
        seed,
        opening_stones: (args.min_opening, args.max_opening),
        concurrency: args.concurrency,
        memory: c.memory_bytes,
    };
    println!(
        "Match {} vs {}: {} games, {}x{} {}, {} ms/move{}, seed {}",
        cfg.a,
        cfg.b,
        cfg.games.div_ceil(2) * 2,
        cfg.width,
        cfg.height,
        rule.name(),
        args.time_ms,
        nodes
            .map(|n| format!(", {n} nodes/move"))
            .unwrap_or_default(),
        cfg.seed
    );
    let verbose = args.verbose;
    let mut on_game = |rec: &crate::arena::GameRecord, sum: &crate::arena::Summary| {
        let res = match rec.result {
            GameResult::AWin => "1-0",
            GameResult::Draw => "1/2",
            GameResult::BWin => "0-1",
        };
        let col = if rec.a_color == Color::Black {
            "B"
        } else {
            "W"
        };
        println!(
            "game {:4} A={} {} ({}, {} moves) running +{} ={} -{}",
            rec.index + 1,
            col,
            res,
            rec.reason,
            rec.moves.len(),
            sum.wins,
            sum.draws,
            sum.losses
        );
        if verbose {
            println!("  {}", rec.moves.join(" "));
        }
    };
    match run_match(&cfg, &mut on_game) {
        Ok(sum) => {
            println!("{}", sum.line(&cfg.a, &cfg.b));
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}
