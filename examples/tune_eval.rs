//! Texel-style tuning of the `pcn` player's evaluation weights (`EVAL_WEIGHTS` in
//! src/search/gomoku/alphabeta.rs): logistic regression of each game's result on the
//! evaluation features of its quiet positions, from the side to move's view.
//!
//! ```sh
//! cargo run --release --example tune_eval -- GAMES.sgf...
//! # the games behind the shipped weights:
//! zcat docs/data/eval-tuning-games.sgf.gz > /tmp/games.sgf
//! cargo run --release --example tune_eval -- /tmp/games.sgf
//! ```
//!
//! Input: c-gomoku-cli SGF files (`scripts/gauntlet.sh` writes them), freestyle games
//! (`RU[0]`) only; the opening stones (comment `opening move`) are skipped. Games whose index
//! is a multiple of 5 are held out to report the fit on unseen games. Output: the weights as a
//! Rust array in thousandths of a logit, ready to paste.

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::Game;
use pcn::search::gomoku::alphabeta::{eval_features, EVAL_FEATURES};

struct Sample {
    f: [f64; EVAL_FEATURES],
    y: f64,
    test: bool,
}

fn parse_games(text: &str, samples: &mut Vec<Sample>, games: &mut usize) {
    for chunk in text.split("(;").skip(1) {
        let prop = |name: &str| -> Option<String> {
            let i = chunk.find(&format!("{name}["))?;
            let rest = &chunk[i + name.len() + 1..];
            Some(rest[..rest.find(']')?].to_string())
        };
        if prop("RU").as_deref() != Some("0") {
            continue;
        }
        let Some(size) = prop("SZ").and_then(|s| s.parse::<usize>().ok()) else {
            continue;
        };
        let winner = match prop("RE").as_deref() {
            Some(r) if r.starts_with('B') => Some(0),
            Some(r) if r.starts_with('W') => Some(1),
            _ => None,
        };
        let Ok(mut g) = Gomoku::new(size, size, Rule::Freestyle) else {
            continue;
        };
        let test = (*games).is_multiple_of(5);
        *games += 1;
        // Moves: ";B[xy]" or ";W[xy]", each maybe followed by a comment.
        let mut rest = chunk;
        let mut ply = 0usize;
        while let Some(i) = rest.find(';') {
            rest = &rest[i + 1..];
            let b = rest.as_bytes();
            if b.len() < 5 || !(b[0] == b'B' || b[0] == b'W') || b[1] != b'[' {
                continue;
            }
            let opening = rest[5..].starts_with("C[opening move]");
            let x = (b[2] - b'a') as usize;
            let y = (b[3] - b'a') as usize;
            if !opening {
                if let Some(f) = eval_features(&g) {
                    let stm = ply % 2;
                    let yv = match winner {
                        Some(w) if w == stm => 1.0,
                        Some(_) => 0.0,
                        None => 0.5,
                    };
                    let mut ff = [0.0; EVAL_FEATURES];
                    for (a, b) in ff.iter_mut().zip(f.iter()) {
                        *a = *b as f64;
                    }
                    samples.push(Sample { f: ff, y: yv, test });
                }
            }
            if x >= size || y >= size || g.play((y * size + x) as u16).is_err() {
                break;
            }
            ply += 1;
        }
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn loss(samples: &[Sample], w: &[f64], b: f64, test: bool) -> f64 {
    let mut s = 0.0;
    let mut n: f64 = 0.0;
    for x in samples.iter().filter(|x| x.test == test) {
        let z: f64 = x.f.iter().zip(w).map(|(a, c)| a * c).sum::<f64>() + b;
        let p = sigmoid(z).clamp(1e-9, 1.0 - 1e-9);
        s -= x.y * p.ln() + (1.0 - x.y) * (1.0 - p).ln();
        n += 1.0;
    }
    s / n.max(1.0)
}

fn main() {
    let mut samples = Vec::new();
    let mut games = 0;
    for path in std::env::args().skip(1) {
        match std::fs::read_to_string(&path) {
            Ok(t) => parse_games(&t, &mut samples, &mut games),
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
    let train = samples.iter().filter(|s| !s.test).count();
    eprintln!(
        "{games} games, {} positions ({train} training)",
        samples.len()
    );
    if train == 0 {
        std::process::exit(2);
    }
    // Adam on the mean log loss plus a small L2 term.
    let l2 = 1e-4;
    let mut w = vec![0.0; EVAL_FEATURES];
    let mut b = 0.0;
    let (mut m, mut v) = (vec![0.0; EVAL_FEATURES + 1], vec![0.0; EVAL_FEATURES + 1]);
    for step in 1..=4000 {
        // Decaying step size: fast at first, settled at the end.
        let lr = 0.01 * (1.0 - step as f64 / 4400.0);
        let mut grad = vec![0.0; EVAL_FEATURES + 1];
        for x in samples.iter().filter(|x| !x.test) {
            let z: f64 = x.f.iter().zip(&w).map(|(a, c)| a * c).sum::<f64>() + b;
            let e = sigmoid(z) - x.y;
            for (gi, a) in grad.iter_mut().zip(x.f.iter()) {
                *gi += e * a;
            }
            grad[EVAL_FEATURES] += e;
        }
        for (i, gi) in grad.iter_mut().enumerate() {
            *gi /= train as f64;
            if i < EVAL_FEATURES {
                *gi += 2.0 * l2 * w[i];
            }
        }
        for i in 0..=EVAL_FEATURES {
            m[i] = 0.9 * m[i] + 0.1 * grad[i];
            v[i] = 0.999 * v[i] + 0.001 * grad[i] * grad[i];
            let mh = m[i] / (1.0 - 0.9f64.powi(step));
            let vh = v[i] / (1.0 - 0.999f64.powi(step));
            let d = lr * mh / (vh.sqrt() + 1e-8);
            if i < EVAL_FEATURES {
                w[i] -= d;
            } else {
                b -= d;
            }
        }
        if step % 1000 == 0 {
            eprintln!(
                "step {step}: train loss {:.4}, held-out loss {:.4}",
                loss(&samples, &w, b, false),
                loss(&samples, &w, b, true)
            );
        }
    }
    let zero = vec![0.0; EVAL_FEATURES];
    eprintln!(
        "constant model: train {:.4}, held-out {:.4}; intercept {b:.3}",
        loss(&samples, &zero, 0.0, false),
        loss(&samples, &zero, 0.0, true)
    );
    let ints: Vec<String> = w
        .iter()
        .map(|x| format!("{}", (x * 1000.0).round() as i64))
        .collect();
    println!("[{}]", ints.join(", "));
}
