//! Trains the `pcn` player's move-ordering table (`weights/gomoku_order.bin`,
//! `src/search/gomoku/learn/ordering.rs`) to predict the moves played in a set of games.
//!
//! ```sh
//! cargo run --release --example train_order -- [--epochs N] [--l2 X] [--out FILE] GAMES.sgf...
//! # the shipped table (weights/README.md says where the games come from):
//! zcat docs/data/order-games.sgf.gz > /tmp/order-games.sgf
//! cargo run --release --example train_order -- --out weights/gomoku_order.bin /tmp/order-games.sgf
//! ```
//!
//! Input: c-gomoku-cli SGF files, freestyle games (`RU[0]`) of any size; the opening stones
//! (comment `opening move`) are played but not learned. A position is learned when the
//! player's classification calls it quiet (the positions where the table orders the moves)
//! and the move played is one of its candidates; the label is that move.
//!
//! Output: the held-out (every tenth position) share of positions whose played move the
//! table ranks within the first 1, 3, 5, 10, 14, 20 and 28 candidates, against the static
//! attack + defence score the player used before; then the weights file.

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game};
use pcn::search::gomoku::alphabeta::{classify, Tactic};
use pcn::search::gomoku::greedy::cell_score;
use pcn::search::gomoku::learn::ordering::{
    distance_class, features, fit, rank_of, raw_index, OrderSample, WITHIN,
};
use pcn::sgf::SgfError;

#[path = "common/cgomoku_sgf.rs"]
mod cgomoku_sgf;
use cgomoku_sgf::freestyle_games;

/// Reads the games of one SGF text; per learned position, the sample and the static scores
/// of its candidates. Returns the number of games read.
fn read_games(text: &str, out: &mut Vec<(OrderSample, Vec<f32>)>) -> Result<usize, SgfError> {
    let mut games = 0;
    let mut cands = Vec::new();
    for game in freestyle_games(text)? {
        let size = game.size;
        let Ok(mut g) = Gomoku::new(size, size, Rule::Freestyle) else {
            continue;
        };
        games += 1;
        for mv in &game.moves {
            let Some((x, y)) = mv.point.filter(|&(x, y)| x < size && y < size) else {
                break;
            };
            let m = (y * size + x) as u16;
            if !mv.opening && g.outcome().is_none() {
                let (t, _, _) = classify(&g, &mut cands);
                let cell = g.cell_of(m);
                let label = cands.iter().position(|c| c.cell == cell);
                if let (Tactic::Quiet, Some(label), true) = (t, label, cands.len() > 1) {
                    let me = g.to_move();
                    let opp: Color = me.opp();
                    let mut recent = g.history_cells().rev().map(|(c, _)| g.coords_of(c));
                    let (last, prev) = (recent.next(), recent.next());
                    let feats = cands
                        .iter()
                        .map(|c| {
                            let p = g.coords_of(c.cell);
                            features(
                                raw_index(&g.patterns(c.cell, me)),
                                raw_index(&g.patterns(c.cell, opp)),
                                distance_class(p, last),
                                distance_class(p, prev),
                                [0, 1, 2, 3].map(|d| g.line_key(c.cell, d)),
                                me,
                            )
                        })
                        .collect();
                    let statics = cands
                        .iter()
                        .map(|c| {
                            (10 * cell_score(&g, c.cell, me) + 9 * cell_score(&g, c.cell, opp))
                                as f32
                        })
                        .collect();
                    out.push((OrderSample { feats, label }, statics));
                }
            }
            if g.play(m).is_err() {
                break;
            }
        }
    }
    Ok(games)
}

fn usage_exit(msg: &str) -> ! {
    eprintln!(
        "train_order: {msg}\nusage: train_order [--epochs N] [--l2 X] [--out FILE] GAMES.sgf..."
    );
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut epochs, mut l2, mut out) = (6usize, 1e-4f32, None::<String>);
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let value = |i: usize| {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage_exit("missing value"))
        };
        match args[i].as_str() {
            "--epochs" => {
                epochs = value(i)
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--epochs: not a number"));
                i += 1;
            }
            "--l2" => {
                l2 = value(i)
                    .parse()
                    .unwrap_or_else(|_| usage_exit("--l2: not a number"));
                i += 1;
            }
            "--out" => {
                out = Some(value(i));
                i += 1;
            }
            f => files.push(f.to_string()),
        }
        i += 1;
    }
    if files.is_empty() {
        usage_exit("no game file");
    }
    let mut data = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| usage_exit(&format!("{f}: {e}")));
        let n = read_games(&text, &mut data).unwrap_or_else(|e| usage_exit(&format!("{f}: {e}")));
        eprintln!("{f}: {n} games");
    }
    let (samples, statics): (Vec<OrderSample>, Vec<Vec<f32>>) = data.into_iter().unzip();
    eprintln!("{} quiet positions", samples.len());
    let (w, rep) = fit(&samples, epochs, 0.3, l2, 0);
    let mut within_static = [0f64; 7];
    let mut n = 0;
    for (i, (s, st)) in samples.iter().zip(&statics).enumerate() {
        if i % 10 != 9 {
            continue;
        }
        n += 1;
        let r = rank_of(st, s.label);
        for (k, &m) in WITHIN.iter().enumerate() {
            within_static[k] += f64::from(u8::from(r < m));
        }
    }
    let show = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{:.3}", x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "trained on {}, held out {}; within the first {:?}:",
        rep.train, rep.held_out, WITHIN
    );
    println!(
        "  static score  {}",
        show(&within_static.map(|x| x / n.max(1) as f64))
    );
    println!("  table         {}", show(&rep.within));
    println!(
        "held-out cross-entropy {:.3} (uniform {:.3})",
        rep.loss, rep.loss_uniform
    );
    if let Some(path) = out {
        if let Err(e) = std::fs::write(&path, w.to_bytes()) {
            usage_exit(&format!("{path}: {e}"));
        }
        println!("wrote {path}");
    }
}
