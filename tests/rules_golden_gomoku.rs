//! Golden rules test: random playouts recorded by the PCN paper's own Gomoku classes
//! (`../shared/pcn/rules_golden/`). For every ply our legal moves and terminal flag must match,
//! and the final winner too. Skips with a notice when the shared data is absent.

use std::path::{Path, PathBuf};

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game, Move, Outcome};

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    p.is_dir().then_some(p)
}

/// Minimal SGF move reader: the `B[..]`/`W[..]` properties in order, as (colour, action) on an
/// `n` x `n` board (coordinates per the shared README: x = p - 'a', y = (n - 1) - (q - 'a')).
fn sgf_moves(text: &str, n: usize) -> Vec<(Color, Move)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        let is_prop = (b[i] == b'B' || b[i] == b'W')
            && b[i + 1] == b'['
            && (i == 0 || !b[i - 1].is_ascii_uppercase());
        if is_prop {
            let color = if b[i] == b'B' {
                Color::Black
            } else {
                Color::White
            };
            let start = i + 2;
            let end = start + b[start..].iter().position(|&c| c == b']').unwrap_or(0);
            let v = &b[start..end];
            if v.len() == 2 {
                let x = (v[0] - b'a') as usize;
                let y = n - 1 - (v[1] - b'a') as usize;
                out.push((color, (y * n + x) as Move));
            }
            i = end;
        }
        i += 1;
    }
    out
}

fn sgf_size(text: &str) -> usize {
    text.find("SZ[")
        .and_then(|i| text[i + 3..].split(']').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(15)
}

fn run(file: &str, rule: Rule) {
    let Some(root) = shared() else {
        eprintln!("SKIP: ../shared is absent");
        return;
    };
    let path = root.join("pcn/rules_golden").join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIP: {} is absent", path.display());
        return;
    };
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let games = doc["games"].as_array().expect("games");
    assert!(!games.is_empty());
    let mut plies = 0;
    let mut terminal_listed = Vec::new();
    for game in games {
        let sgf_rel = game["sgf"].as_str().expect("sgf");
        let sgf = std::fs::read_to_string(root.join(sgf_rel)).expect("problem sgf");
        let n = sgf_size(&sgf);
        let mut g = Gomoku::new(n, n, rule).expect("size");
        for (c, m) in sgf_moves(&sgf, n) {
            g.place(m, c).expect("sgf move");
        }
        let moves: Vec<Move> = game["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .map(|v| v.as_u64().expect("move") as Move)
            .collect();
        let legal = game["legal_per_ply"].as_array().expect("legal");
        let term = game["terminal_per_ply"].as_array().expect("terminal");
        let mut ours = Vec::new();
        for i in 0..legal.len() {
            let want_term = term[i].as_bool().expect("bool");
            let is_term = g.outcome().is_some();
            assert_eq!(
                is_term, want_term,
                "{sgf_rel} ply {i}: terminal flag\n{g:?}"
            );
            let mut want: Vec<Move> = legal[i]
                .as_array()
                .expect("list")
                .iter()
                .map(|v| v.as_u64().expect("action") as Move)
                .collect();
            want.sort_unstable();
            g.legal_moves(&mut ours);
            ours.sort_unstable();
            if is_term {
                // Ours lists no moves at a terminal position; record what the file lists.
                assert!(ours.is_empty());
                terminal_listed.push(want.len());
                let empty: Vec<Move> = (0..(n * n) as Move)
                    .filter(|&m| g.stone(m).is_none())
                    .collect();
                if rule == Rule::FourT {
                    // The file lists one point: a completion point of the winning four.
                    let Some(Outcome::Win(w)) = g.outcome() else {
                        panic!("{sgf_rel} ply {i}: terminal without a winner");
                    };
                    assert_eq!(want.len(), 1, "{sgf_rel} ply {i}");
                    assert!(g.makes_five(g.cell_of(want[0]), w), "{sgf_rel} ply {i}");
                } else {
                    // The file lists every empty point.
                    assert_eq!(want, empty, "{sgf_rel} ply {i}: terminal list");
                }
            } else {
                assert_eq!(ours, want, "{sgf_rel} ply {i}: legal moves\n{g:?}");
            }
            if i < moves.len() {
                g.play(moves[i])
                    .unwrap_or_else(|e| panic!("{sgf_rel} ply {i}: {e:?}"));
                plies += 1;
            }
        }
        let winner = match g.outcome() {
            Some(Outcome::Win(Color::Black)) => "B",
            Some(Outcome::Win(Color::White)) => "W",
            Some(Outcome::Draw) => "draw",
            None => "none",
        };
        let want = game["winner"].as_str().unwrap_or("?");
        assert_eq!(winner, want, "{sgf_rel}: winner");
    }
    eprintln!(
        "{file}: {} games, {plies} plies agree; {} terminal plies checked",
        games.len(),
        terminal_listed.len()
    );
}

#[test]
fn freestyle_random_playouts() {
    run("gomoku_ndk_random_playouts.json", Rule::Freestyle);
}

#[test]
fn four_t_random_playouts() {
    run("gomoku_4t_random_playouts.json", Rule::FourT);
}
