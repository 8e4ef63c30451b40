//! Texel-style tuning of the `pcn` player's evaluation weights (`EVAL_WEIGHTS` in
//! src/search/gomoku/alphabeta.rs): logistic regression of each game's result on the
//! evaluation features of its quiet positions, from the side to move's view.
//!
//! ```sh
//! cargo run --release --example tune_eval -- [OPTIONS] GAMES.sgf...
//! # the games behind the shipped weights: 1 200 earlier 15x15 games, then the 199 of a
//! # 0.2 s run on openings of our own, counted twice (docs/notebook/2026-11-27-honest-eval.md;
//! # none starts from a shipped test opening):
//! zcat docs/data/eval-tuning-games.sgf.gz | awk '/^\(;FF/ {n++} n <= 1200' > /tmp/rest.sgf
//! zcat docs/data/eval-tuning-games.sgf.gz | awk '/^\(;FF/ {n++} n > 1200' > /tmp/a.sgf
//! cargo run --release --example tune_eval -- --size 15 /tmp/rest.sgf --weight 2 /tmp/a.sgf
//! # 15x15 games only, a later time control counted three times, 1 s games as a test set:
//! cargo run --release --example tune_eval -- --size 15 gate.sgf --weight 3 slow.sgf \
//!     --test one-second.sgf
//! ```
//!
//! Input: c-gomoku-cli SGF files (`scripts/gauntlet.sh` writes them), freestyle games
//! (`RU[0]`) only; the opening stones (comment `opening move`) are skipped. Games whose index
//! is a multiple of 5 are held out to report the fit on unseen games. Options apply to the
//! files after them:
//!
//! - `--weight W`: each position of the following files counts W times in the fit (default 1);
//! - `--test`: the following files are never fitted, only reported (e.g. games on the test
//!   openings); `--train` switches back;
//! - `--size N`: keep only N x N games (all files; default: every size);
//! - `--extra centre`: two extra features per position (each side's stones near the centre,
//!   see `centre_score`), to see whether they lower the held-out loss; their weights are
//!   printed after the array and are not part of the player;
//! - `--extra pairs`: 168 extra features per position, the counts of the empty points near
//!   stones by their pair of cell classes (the side to move's, the opponent's; see
//!   `pair_counts`), to see how much a table over both colours' classes of a point would add;
//!   their weights are printed as a 13 x 13 table after the array, not part of the player.
//!
//! - `--teacher-scale S`: units of a teacher's evaluation per logit (default 200, Rapfi's).
//!
//! A file whose name ends in `.labels` holds positions labelled by a teacher engine instead of
//! games (`scripts/teacher_labels.py` writes them: the moves as concatenated SGF points, then
//! the teacher's evaluation from the side to move's view); each position's target is the
//! teacher's winning chance, sigmoid(evaluation / S), and every fifth line is held out:
//!
//! ```sh
//! zcat docs/data/eval-teacher-a.labels.gz > /tmp/a.labels
//! zcat docs/data/eval-teacher-b.labels.gz > /tmp/b.labels
//! cargo run --release --example tune_eval -- --size 15 /tmp/rest.sgf --weight 2 /tmp/a.sgf \
//!     /tmp/a.labels /tmp/b.labels
//! ```
//!
//! Output: per file, the held-out loss of the shipped weights and of the fit; the weights as a
//! Rust array in thousandths of a logit, ready to paste.

use pcn::game::gomoku::pattern::EMPTY;
use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::Game;
use pcn::search::gomoku::alphabeta::{
    cell_class, eval_features, near_stone, tuned_eval, CELL_CLASSES, EVAL_FEATURES,
};
use pcn::sgf::SgfError;

#[path = "common/cgomoku_sgf.rs"]
mod cgomoku_sgf;
use cgomoku_sgf::freestyle_games;

/// One position: its features, the game's result from the side to move's view, whether it is
/// held out, its weight in the fit, the file it came from, and the shipped evaluation's logit.
struct Sample {
    f: Vec<f64>,
    y: f64,
    test: bool,
    w: f64,
    file: usize,
    test_only: bool,
    shipped: f64,
}

/// How the positions of one file are used.
#[derive(Clone, Copy)]
struct FileUse {
    weight: f64,
    test_only: bool,
}

/// Stones of one colour near the centre, each counted by its closeness: 4 minus its distance
/// (the larger of the two coordinate distances) from the centre point, at least 0.
fn centre_score(stones: &[(usize, usize)], size: usize) -> f64 {
    let c = (size / 2) as isize;
    stones
        .iter()
        .map(|&(x, y)| {
            let d = (x as isize - c).abs().max((y as isize - c).abs());
            (4 - d).max(0) as f64
        })
        .sum()
}

/// Parses the games of one file into `samples` and returns their number (an error when the
/// file is not SGF); `games` numbers the fitted files' games across files (the held-out rule
/// uses it; test-only files leave it alone, so that adding one does not move the split of
/// the others).
#[allow(clippy::too_many_arguments)]
fn parse_games(
    text: &str,
    samples: &mut Vec<Sample>,
    games: &mut usize,
    file: usize,
    usage: FileUse,
    only_size: Option<usize>,
    extra: Extra,
) -> Result<usize, SgfError> {
    let mut parsed = 0;
    for game in freestyle_games(text)? {
        let size = game.size;
        if only_size.is_some_and(|n| n != size) {
            continue;
        }
        let winner = match game.result.as_deref() {
            Some(r) if r.starts_with('B') => Some(0),
            Some(r) if r.starts_with('W') => Some(1),
            _ => None,
        };
        let Ok(mut g) = Gomoku::new(size, size, Rule::Freestyle) else {
            continue;
        };
        let test = usage.test_only || (*games).is_multiple_of(5);
        if !usage.test_only {
            *games += 1;
        }
        parsed += 1;
        // Stones of each colour so far (for the extra features).
        let mut stones: [Vec<(usize, usize)>; 2] = [Vec::new(), Vec::new()];
        for (ply, mv) in game.moves.iter().enumerate() {
            if !mv.opening {
                if let Some(f) = eval_features(&g) {
                    let stm = ply % 2;
                    let yv = match winner {
                        Some(w) if w == stm => 1.0,
                        Some(_) => 0.0,
                        None => 0.5,
                    };
                    let mut ff: Vec<f64> = f.iter().map(|&a| a as f64).collect();
                    ff.extend(extra.features(&g, &stones, stm, size));
                    samples.push(Sample {
                        f: ff,
                        y: yv,
                        test,
                        w: usage.weight,
                        file,
                        test_only: usage.test_only,
                        shipped: tuned_eval(&f) as f64 / 1000.0,
                    });
                }
            }
            let Some((x, y)) = mv.point.filter(|&(x, y)| x < size && y < size) else {
                break;
            };
            if g.play((y * size + x) as u16).is_err() {
                break;
            }
            stones[ply % 2].push((x, y));
        }
    }
    Ok(parsed)
}

/// Parses a file of positions labelled by a teacher engine (one a line: the moves as
/// concatenated SGF points from the empty board, Black first, then the teacher's evaluation
/// from the side to move's view in units of `scale` per logit) into `samples`; each
/// position's target is the teacher's winning chance. Every fifth line is held out (test-only
/// files: every line). Returns the number of positions read.
fn parse_labels(
    text: &str,
    samples: &mut Vec<Sample>,
    file: usize,
    usage: FileUse,
    size: usize,
    scale: f64,
    extra: Extra,
) -> usize {
    let mut n = 0;
    for (k, line) in text.lines().enumerate() {
        let mut parts = line.split_whitespace();
        let (Some(moves), Some(ev)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(ev) = ev.parse::<f64>() else {
            continue;
        };
        let Ok(mut g) = Gomoku::new(size, size, Rule::Freestyle) else {
            return n;
        };
        let b = moves.as_bytes();
        if b.len() % 2 != 0 {
            continue;
        }
        let ok = b.chunks(2).all(|c| {
            let x = c[0].wrapping_sub(b'a') as usize;
            let y = c[1].wrapping_sub(b'a') as usize;
            x < size && y < size && g.play((y * size + x) as u16).is_ok()
        });
        if !ok || g.outcome().is_some() {
            continue;
        }
        let Some(f) = eval_features(&g) else {
            continue;
        };
        let mut stones: [Vec<(usize, usize)>; 2] = [Vec::new(), Vec::new()];
        for (i, c) in b.chunks(2).enumerate() {
            stones[i % 2].push(((c[0] - b'a') as usize, (c[1] - b'a') as usize));
        }
        let mut ff: Vec<f64> = f.iter().map(|&a| a as f64).collect();
        ff.extend(extra.features(&g, &stones, b.len() / 2 % 2, size));
        samples.push(Sample {
            f: ff,
            y: sigmoid(ev / scale),
            test: usage.test_only || k % 5 == 0,
            w: usage.weight,
            file,
            test_only: usage.test_only,
            shipped: tuned_eval(&f) as f64 / 1000.0,
        });
        n += 1;
    }
    n
}

/// Extra features added to each position (`--extra`), reported but not part of the player.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extra {
    None,
    /// Each side's stones near the centre (two features, see `centre_score`).
    Centre,
    /// Points by their pair of cell classes (`PAIRS` features, see `pair_counts`).
    Pairs,
}

impl Extra {
    /// How many features it adds.
    fn len(self) -> usize {
        match self {
            Extra::None => 0,
            Extra::Centre => 2,
            Extra::Pairs => PAIRS,
        }
    }

    /// Its features of the position `g`, whose stones of each colour are `stones` (Black
    /// first) and whose side to move is `stones[stm]`'s colour.
    fn features(
        self,
        g: &Gomoku,
        stones: &[Vec<(usize, usize)>; 2],
        stm: usize,
        size: usize,
    ) -> Vec<f64> {
        match self {
            Extra::None => Vec::new(),
            Extra::Centre => vec![
                centre_score(&stones[stm], size),
                centre_score(&stones[1 - stm], size),
            ],
            Extra::Pairs => pair_counts(g),
        }
    }
}

/// Number of pair features: (side to move's class, opponent's class) of a point, each
/// `CELL_CLASSES` for none, less the pair (none, none).
const PAIRS: usize = (CELL_CLASSES + 1) * (CELL_CLASSES + 1) - 1;

/// Counts of the empty points near stones by their pair of cell classes (side to move's,
/// opponent's): what one stone of each colour would make there, seen together.
fn pair_counts(g: &Gomoku) -> Vec<f64> {
    let me = g.to_move();
    let mut v = vec![0.0; PAIRS];
    for cell in g.cell_range() {
        if g.cell_value(cell) != EMPTY || !near_stone(g, cell) {
            continue;
        }
        let a = cell_class(&g.patterns(cell, me));
        let b = cell_class(&g.patterns(cell, me.opp()));
        let k = a * (CELL_CLASSES + 1) + b;
        if k < PAIRS {
            v[k] += 1.0;
        }
    }
    v
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Log loss of one prediction (logit `z`) against the result `y`.
fn log_loss(z: f64, y: f64) -> f64 {
    let p = sigmoid(z).clamp(1e-9, 1.0 - 1e-9);
    -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
}

/// The fitted model's logit for one sample.
fn logit(x: &Sample, w: &[f64], b: f64) -> f64 {
    x.f.iter().zip(w).map(|(a, c)| a * c).sum::<f64>() + b
}

/// Mean (weighted) log loss of the logits `z` over `samples`, and their number.
fn mean_loss<'a>(
    samples: impl Iterator<Item = &'a Sample>,
    z: impl Fn(&Sample) -> f64,
) -> (f64, usize) {
    let (mut s, mut n, mut count) = (0.0, 0.0, 0);
    for x in samples {
        s += x.w * log_loss(z(x), x.y);
        n += x.w;
        count += 1;
    }
    (s / f64::max(n, 1e-12), count)
}

fn usage_exit(msg: &str) -> ! {
    eprintln!("tune_eval: {msg}");
    std::process::exit(2);
}

/// The positive, finite number `arg` of `option`, or exit 2 with a message.
fn positive(arg: Option<&String>, option: &str) -> f64 {
    arg.and_then(|s| s.parse::<f64>().ok())
        .filter(|w| *w > 0.0 && w.is_finite())
        .unwrap_or_else(|| usage_exit(&format!("{option} needs a positive number")))
}

fn main() {
    let mut samples = Vec::new();
    let mut games = 0;
    let mut usage = FileUse {
        weight: 1.0,
        test_only: false,
    };
    let mut only_size = None;
    let mut extra = Extra::None;
    let mut scale = 200.0;
    let mut files = Vec::new();
    // First pass: --size and --extra apply to every file, so they are read before any file.
    let all: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < all.len() {
        match all[i].as_str() {
            "--size" => {
                i += 1;
                only_size = all.get(i).and_then(|s| s.parse::<usize>().ok());
                if only_size.is_none() {
                    usage_exit("--size needs a number");
                }
            }
            "--extra" => {
                i += 1;
                extra = match all.get(i).map(String::as_str) {
                    Some("centre") => Extra::Centre,
                    Some("pairs") => Extra::Pairs,
                    _ => usage_exit("--extra takes: centre, pairs"),
                };
            }
            _ => {}
        }
        i += 1;
    }
    let mut i = 0;
    while i < all.len() {
        let a = all[i].as_str();
        match a {
            "--size" | "--extra" => i += 1,
            "--teacher-scale" => {
                i += 1;
                scale = positive(all.get(i), "--teacher-scale");
            }
            "--weight" => {
                i += 1;
                usage.weight = positive(all.get(i), "--weight");
            }
            "--test" => usage.test_only = true,
            "--train" => usage.test_only = false,
            path => match std::fs::read_to_string(path) {
                Ok(t) if path.ends_with(".labels") => {
                    let n = parse_labels(
                        &t,
                        &mut samples,
                        files.len(),
                        usage,
                        only_size.unwrap_or(15),
                        scale,
                        extra,
                    );
                    eprintln!(
                        "{path}: {n} labelled positions, weight {}{}",
                        usage.weight,
                        if usage.test_only { ", test only" } else { "" }
                    );
                    files.push(path.to_string());
                }
                Ok(t) => {
                    let before = samples.len();
                    let parsed = parse_games(
                        &t,
                        &mut samples,
                        &mut games,
                        files.len(),
                        usage,
                        only_size,
                        extra,
                    );
                    match parsed {
                        Ok(n) => {
                            eprintln!(
                                "{path}: {n} games, {} positions, weight {}{}",
                                samples.len() - before,
                                usage.weight,
                                if usage.test_only { ", test only" } else { "" }
                            );
                            files.push(path.to_string());
                        }
                        // Not SGF: like an unreadable file, reported and left out.
                        Err(e) => eprintln!("{path}: {e}"),
                    }
                }
                Err(e) => eprintln!("{path}: {e}"),
            },
        }
        i += 1;
    }
    let nf = EVAL_FEATURES + extra.len();
    let train_w: f64 = samples.iter().filter(|s| !s.test).map(|s| s.w).sum();
    let train = samples.iter().filter(|s| !s.test).count();
    eprintln!(
        "{games} fitted games, {} positions ({train} training)",
        samples.len()
    );
    if train == 0 {
        std::process::exit(2);
    }
    // Adam on the weighted mean log loss plus a small L2 term.
    let l2 = 1e-4;
    let mut w = vec![0.0; nf];
    let mut b = 0.0;
    let (mut m, mut v) = (vec![0.0; nf + 1], vec![0.0; nf + 1]);
    // Only the held-out games of fitted files count as "held-out" (test-only files are
    // reported apart, per file).
    let held_out = |x: &&Sample| x.test && !x.test_only;
    let held = |w: &[f64], b: f64| mean_loss(samples.iter().filter(held_out), |x| logit(x, w, b)).0;
    for step in 1..=4000 {
        // Decaying step size: fast at first, settled at the end.
        let lr = 0.01 * (1.0 - step as f64 / 4400.0);
        let mut grad = vec![0.0; nf + 1];
        for x in samples.iter().filter(|x| !x.test) {
            let e = x.w * (sigmoid(logit(x, &w, b)) - x.y);
            for (gi, a) in grad.iter_mut().zip(x.f.iter()) {
                *gi += e * a;
            }
            grad[nf] += e;
        }
        for (i, gi) in grad.iter_mut().enumerate() {
            *gi /= train_w;
            if i < nf {
                *gi += 2.0 * l2 * w[i];
            }
        }
        for i in 0..=nf {
            m[i] = 0.9 * m[i] + 0.1 * grad[i];
            v[i] = 0.999 * v[i] + 0.001 * grad[i] * grad[i];
            let mh = m[i] / (1.0 - 0.9f64.powi(step));
            let vh = v[i] / (1.0 - 0.999f64.powi(step));
            let d = lr * mh / (vh.sqrt() + 1e-8);
            if i < nf {
                w[i] -= d;
            } else {
                b -= d;
            }
        }
        if step % 1000 == 0 {
            let tr = mean_loss(samples.iter().filter(|x| !x.test), |x| logit(x, &w, b)).0;
            eprintln!(
                "step {step}: train loss {tr:.4}, held-out loss {:.4}",
                held(&w, b)
            );
        }
    }
    // The player has no intercept (a constant for the side to move); the shipped weights are
    // compared with the fit each with its own intercept fitted on the training positions
    // (Newton's method in one variable), so that the comparison is of the weights.
    let mut bs = 0.0;
    for _ in 0..20 {
        let (mut g1, mut g2) = (0.0, 0.0);
        for x in samples.iter().filter(|x| !x.test) {
            let p = sigmoid(x.shipped + bs);
            g1 += x.w * (p - x.y);
            g2 += x.w * p * (1.0 - p);
        }
        bs -= g1 / g2.max(1e-12);
    }
    eprintln!("intercept: fit {b:.3}, shipped weights {bs:.3} (the player has none)");
    // Per file, unweighted: the held-out positions (every position of a test-only file).
    eprintln!("held-out log loss per file: constant 0.5 / shipped weights / fit (positions)");
    for (k, path) in files.iter().enumerate() {
        let sel = || samples.iter().filter(move |x| x.file == k && x.test);
        let c = mean_loss(sel(), |_| 0.0);
        let s = mean_loss(sel(), |x| x.shipped + bs);
        let f = mean_loss(sel(), |x| logit(x, &w, b));
        eprintln!("  {path}: {:.4} / {:.4} / {:.4} ({})", c.0, s.0, f.0, c.1);
    }
    let all_s = mean_loss(samples.iter().filter(held_out), |x| x.shipped + bs);
    let all_f = mean_loss(samples.iter().filter(held_out), |x| logit(x, &w, b));
    eprintln!(
        "  all held-out (weighted): shipped {:.4} / fit {:.4} ({})",
        all_s.0, all_f.0, all_s.1
    );
    let ints: Vec<String> = w[..EVAL_FEATURES]
        .iter()
        .map(|x| format!("{}", (x * 1000.0).round() as i64))
        .collect();
    println!("[{}]", ints.join(", "));
    if extra == Extra::Pairs {
        let n = CELL_CLASSES + 1;
        eprintln!("pair weights (thousandths), rows: side to move's class 0..=12, columns: the opponent's");
        for a in 0..n {
            let row: Vec<String> = (0..n)
                .map(|b| {
                    let k = a * n + b;
                    if k < PAIRS {
                        format!("{:5}", (w[EVAL_FEATURES + k] * 1000.0).round() as i64)
                    } else {
                        "    -".to_string()
                    }
                })
                .collect();
            eprintln!("  {a:2}: {}", row.join(" "));
        }
    }
    if extra == Extra::Centre {
        eprintln!(
            "extra weights (thousandths): centre own {:.0}, centre opponent {:.0}",
            w[EVAL_FEATURES] * 1000.0,
            w[EVAL_FEATURES + 1] * 1000.0
        );
    }
}
