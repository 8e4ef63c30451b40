//! `pcn selfplay`: training data for proof cost networks (docs/training.md).
//!
//! `--net`, `--threads`, `--seed` and `--backend` are the global options: `--net none` is
//! iteration 0 (uniform priors), `--net auto` the shipped network, else a model path (a PCN
//! model of the same game and board). `--threads` is the network backend's threads;
//! `--parallel` games run at once and share one batching evaluator. `--mover player` plays
//! Gomoku games with the alpha-beta player instead (no network); `--eval-games FILE` writes
//! its games as JSON lines with the player's scores ([`crate::selfplay::gamelog`]).

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::game::gomoku::{Gomoku, Rule};
use crate::game::killallgo::{KillallGo, Variant};
use crate::game::{Color, Game};
use crate::nn::eval::BatchingEvaluator;
use crate::nn::{Evaluator, NetGame};
use crate::selfplay::gamelog::{GameLog, LogSetting};
use crate::selfplay::player::PlayerConfig;
use crate::selfplay::record::{Header, FORMAT};
use crate::selfplay::{run, run_with, Config, EvalSet};

/// Options of `pcn selfplay`.
#[derive(Args, Debug, Clone)]
pub struct SelfplayArgs {
    /// The game: `killallgo` (9x9 PCN) or `gomoku` (15x15, or `--size`).
    #[arg(long, default_value = "killallgo")]
    pub game: String,
    /// Gomoku rule: freestyle, exact, renju, caro, caro-exact, 4t (the PCN paper's Gomoku
    /// networks use `4t`).
    #[arg(long, default_value = "4t")]
    pub rule: String,
    /// Gomoku board side (5..=22; default 15). Killall-Go is 9x9 only.
    #[arg(long)]
    pub size: Option<usize>,
    /// Games the record file should hold (indices 0..N; those already in it are skipped).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// The record file to append to (see docs/training.md).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Simulations of a full search (its visits are the policy target).
    #[arg(long, default_value_t = 64)]
    pub sims: usize,
    /// Simulations of a fast search (playout cap randomisation).
    #[arg(long, default_value_t = 16)]
    pub fast_sims: usize,
    /// Probability of a full search per move.
    #[arg(long, default_value_t = 0.25)]
    pub full_prob: f64,
    /// Plies whose move is drawn in proportion to the visits (then the most visited).
    #[arg(long)]
    pub temp_plies: Option<usize>,
    /// Games longer than this end without a winner (default 200 Killall-Go, the board's
    /// points in Gomoku).
    #[arg(long)]
    pub max_plies: Option<usize>,
    /// Bins per proof-cost head (the top bin means "does not win").
    #[arg(long, default_value_t = 500)]
    pub bins: usize,
    /// The OR player of the self-play search (default: White in Killall-Go, Black in Gomoku).
    #[arg(long)]
    pub prove: Option<String>,
    /// Dirichlet α at the root (default: 0.2 Killall-Go, 0.05 Gomoku, as in the paper).
    #[arg(long)]
    pub dirichlet: Option<f64>,
    /// Games played at once (they share one batching network evaluator).
    #[arg(long, default_value_t = 8)]
    pub parallel: usize,
    /// Also write evaluation positions (SGF, `<game>.sgf`) from games the OR player won,
    /// `--eval-back` plies before their end, to this directory.
    #[arg(long)]
    pub emit_eval_set: Option<PathBuf>,
    /// Plies before the end of the game for `--emit-eval-set` (odd: the winner is to move).
    #[arg(long, default_value_t = 9)]
    pub eval_back: usize,
    /// Move source of Gomoku games: `mcts` (the PCN self-play search) or `player` (our
    /// alpha-beta player at `--player-nodes` a move; its moves are one-hot policy targets).
    #[arg(long, default_value = "mcts")]
    pub mover: String,
    /// Nodes per move of `--mover player`.
    #[arg(long, default_value_t = 2000)]
    pub player_nodes: u64,
    /// Opening moves of `--mover player` drawn at random near the centre (seeded): `N`, or
    /// `MIN-MAX` for a number drawn per game.
    #[arg(long, default_value = "4")]
    pub random_plies: String,
    /// After the opening, the chance that a `--mover player` move is a random point next to
    /// a stone instead of the player's (0..=1; the eval net's off-line positions).
    #[arg(long, default_value_t = 0.0)]
    pub player_mistakes: f64,
    /// Also (or only) write the `--mover player` games as JSON lines with the player's root
    /// scores (the eval net's data; docs/training.md) to this file; resumes like `--out`.
    #[arg(long)]
    pub eval_games: Option<PathBuf>,
    /// Network (the global `--net`).
    #[arg(skip)]
    pub net: String,
    /// Backend (the global `--backend`).
    #[arg(skip)]
    pub backend: String,
}

/// `N` or `MIN-MAX` (MIN <= MAX) random opening plies, each below `limit`.
fn parse_plies(s: &str, limit: usize) -> Option<RangeInclusive<usize>> {
    let (lo, hi) = match s.split_once('-') {
        Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
        None => {
            let n = s.trim().parse().ok()?;
            (n, n)
        }
    };
    (lo <= hi && hi < limit).then_some(lo..=hi)
}

fn parse_color(s: &str) -> Option<Color> {
    match s.to_ascii_lowercase().as_str() {
        "b" | "black" => Some(Color::Black),
        "w" | "white" => Some(Color::White),
        _ => None,
    }
}

/// Opens `--net` for self-play on `game`'s board of side `size` (`shape`: planes, actions).
fn open_net(
    a: &SelfplayArgs,
    game: NetGame,
    size: usize,
    rule: &str,
    shape: (usize, usize),
    threads: usize,
) -> Result<Option<Arc<dyn Evaluator>>, String> {
    let Some(path) = crate::nn::shipped::resolve(&a.net, game, size, rule) else {
        eprintln!("pcn selfplay: --net auto: no shipped network for this game; none used");
        return Ok(None);
    };
    if path.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let inner =
        crate::nn::open(&path, &a.backend, threads).map_err(|e| format!("--net {path}: {e}"))?;
    let (sample_planes, sample_actions) = shape;
    let parallel = a.parallel;
    let i = inner.info();
    if i.game != game
        || i.board_size != size
        || i.planes != sample_planes
        || i.actions != sample_actions
    {
        return Err(format!(
            "--net {path}: the model is for {:?} {}x{} ({} planes), not this game",
            i.game, i.board_size, i.board_size, i.planes
        ));
    }
    let b: Arc<dyn Evaluator> = Arc::new(BatchingEvaluator::new(
        inner,
        parallel.max(1),
        Duration::from_micros(200),
    ));
    Ok(Some(b))
}

/// Runs the command; returns the exit code (2: bad options, 1: the run failed).
pub fn run_cmd(a: SelfplayArgs, seed: u64, threads: usize) -> i32 {
    match run_inner(&a, seed, threads) {
        Ok(()) => 0,
        Err((code, msg)) => {
            eprintln!("pcn selfplay: {msg}");
            code
        }
    }
}

fn run_inner(a: &SelfplayArgs, seed: u64, threads: usize) -> Result<(), (i32, String)> {
    let usage = |m: String| (2, m);
    if a.out.is_none() && a.emit_eval_set.is_none() && a.eval_games.is_none() {
        return Err(usage(
            "give --out FILE, --eval-games FILE and/or --emit-eval-set DIR".into(),
        ));
    }
    if a.sims == 0 || a.fast_sims == 0 || !(0.0..=1.0).contains(&a.full_prob) {
        return Err(usage(
            "--sims and --fast-sims must be positive, --full-prob 0..=1".into(),
        ));
    }
    if !(2..=100_000).contains(&a.bins) || a.games > u32::MAX as usize / 2 {
        return Err(usage("--bins must be 2..=100000".into()));
    }
    if a.eval_back.is_multiple_of(2) {
        return Err(usage("--eval-back must be odd (the winner to move)".into()));
    }
    let game = a.game.to_ascii_lowercase();
    let n = a.size.unwrap_or(15);
    let player = match a.mover.to_ascii_lowercase().as_str() {
        "mcts" => None,
        "player" if game == "gomoku" => Some(PlayerConfig {
            nodes: a.player_nodes.max(1),
            random_plies: parse_plies(&a.random_plies, n * n).ok_or_else(|| {
                usage(format!(
                    "--random-plies {}: N or MIN-MAX (MIN <= MAX < {})",
                    a.random_plies,
                    n * n
                ))
            })?,
            mistakes: if (0.0..=1.0).contains(&a.player_mistakes) {
                a.player_mistakes
            } else {
                return Err(usage(format!(
                    "--player-mistakes {}: a chance in 0..=1",
                    a.player_mistakes
                )));
            },
        }),
        "player" => return Err(usage("--mover player plays Gomoku only".into())),
        other => return Err(usage(format!("unknown --mover '{other}' (mcts, player)"))),
    };
    if a.eval_games.is_some() && player.is_none() {
        return Err(usage(
            "--eval-games needs --game gomoku --mover player".into(),
        ));
    }
    let (net_game, default_proof) = match game.as_str() {
        "killallgo" | "killall-go" => (NetGame::KillallGo, Color::White),
        "gomoku" => (NetGame::Gomoku, Color::Black),
        other => return Err(usage(format!("unknown game '{other}' (killallgo, gomoku)"))),
    };
    let proof = match &a.prove {
        None => default_proof,
        Some(s) => parse_color(s).ok_or_else(|| usage(format!("--prove {s}: black or white")))?,
    };
    let alpha = a.dirichlet.unwrap_or(match net_game {
        NetGame::KillallGo => 0.2,
        NetGame::Gomoku => 0.05,
    });
    if !(alpha.is_finite() && alpha >= 0.0) {
        return Err(usage("--dirichlet must be >= 0".into()));
    }
    let cfg = |max_plies: usize, temp: usize, net| Config {
        games: a.games,
        sims: a.sims,
        fast_sims: a.fast_sims,
        full_prob: a.full_prob,
        temp_plies: a.temp_plies.unwrap_or(temp),
        max_plies: a.max_plies.unwrap_or(max_plies),
        bins: a.bins,
        proof,
        dirichlet_alpha: alpha,
        seed,
        parallel: a.parallel.max(1),
        net,
        progress: true,
    };
    let eval = a.emit_eval_set.as_ref().map(|d| EvalSet {
        dir: d.clone(),
        back: a.eval_back,
    });
    let header = |g: &dyn Fn() -> (String, usize, usize, usize)| {
        let (rule, n, planes, actions) = g();
        Header {
            format: FORMAT.into(),
            game: match net_game {
                NetGame::KillallGo => "killallgo".into(),
                NetGame::Gomoku => "gomoku".into(),
            },
            rule,
            board_size: n,
            planes,
            actions,
            bins: a.bins,
            proof_color: proof.letter().to_string(),
            record_bytes: Header::record_size(planes, n, actions),
        }
    };
    let summary = match net_game {
        NetGame::KillallGo => {
            if a.size.is_some_and(|s| s != 9) {
                return Err(usage("--size: Killall-Go is 9x9 only".into()));
            }
            let start = KillallGo::new(Variant::Pcn9);
            let net = open_net(a, net_game, 9, "", (18, 82), threads).map_err(|e| (2, e))?;
            let h = header(&|| (start.name(), 9, 18, 82));
            // Moves after the forced opening drawn by visits for a while, then greedy.
            run(
                &start,
                &cfg(200, 7 + 16, net),
                a.out.as_deref(),
                &h,
                eval.as_ref(),
                1,
            )
        }
        NetGame::Gomoku => {
            let rule = Rule::from_name(&a.rule)
                .ok_or_else(|| usage(format!("unknown Gomoku rule '{}'", a.rule)))?;
            let start = Gomoku::new(n, n, rule).map_err(|e| usage(format!("--size {n}: {e}")))?;
            let h = header(&|| (start.name(), n, 4, n * n));
            if let Some(p) = &player {
                // The player needs no network: `--net` is not opened.
                let c = cfg(n * n, 0, None);
                let log = match &a.eval_games {
                    Some(path) => {
                        let setting = LogSetting {
                            size: [n, n],
                            rule: rule.name().into(),
                            seed,
                            nodes: p.nodes,
                            mistakes: p.mistakes,
                        };
                        Some(GameLog::open(path, &setting).map_err(|e| (1, e.to_string()))?)
                    }
                    None => None,
                };
                run_with(
                    &start,
                    &c,
                    a.out.as_deref(),
                    &h,
                    eval.as_ref(),
                    4,
                    log.as_ref(),
                    &|| (),
                    &|_: &mut (), i| crate::selfplay::player::play_game(&start, &c, p, i),
                )
            } else {
                let net = open_net(a, net_game, n, rule.name(), (4, n * n), threads)
                    .map_err(|e| (2, e))?;
                run(
                    &start,
                    &cfg(n * n, 8, net),
                    a.out.as_deref(),
                    &h,
                    eval.as_ref(),
                    4,
                )
            }
        }
    }
    .map_err(|e| (1, e))?;
    eprintln!(
        "pcn selfplay: {} games ({} already there), {} positions, Black {} White {} no winner {}, {} eval positions, {:.1} s ({:.2} games/s)",
        summary.games,
        summary.skipped,
        summary.positions,
        summary.wins[0],
        summary.wins[1],
        summary.no_winner,
        summary.eval_positions,
        summary.seconds,
        summary.games as f64 / summary.seconds.max(1e-9)
    );
    Ok(())
}
