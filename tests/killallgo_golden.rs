//! The PCN engine's own Killall-Go rules vectors (`../shared/pcn/rules_golden/`): replay every
//! random continuation from the problem SGF (read with our SGF reader) and compare, at every
//! ply, the sorted legal action list and the terminal flag, then the winner.

use std::path::{Path, PathBuf};

use pcn::game::killallgo::KillallGo;
use pcn::game::{Color, Game, Move, Outcome};
use pcn::sgf::{self, GameTree};
use serde::Deserialize;

#[derive(Deserialize)]
struct Golden {
    games: Vec<GoldenGame>,
}

#[derive(Deserialize)]
struct GoldenGame {
    sgf: String,
    moves: Vec<u16>,
    legal_per_ply: Vec<Vec<u16>>,
    terminal_per_ply: Vec<bool>,
    winner: Option<String>,
}

fn shared() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    p.join("pcn/rules_golden/killallgo_random_playouts.json")
        .exists()
        .then_some(p)
}

fn load(shared: &Path, rel: &str) -> KillallGo {
    let text = std::fs::read_to_string(shared.join(rel)).expect("problem file readable");
    let tree = GameTree::parse(&text).expect("problem SGF parses");
    sgf::to_killallgo(&tree).expect("problem replays legally")
}

#[test]
fn killallgo_rules_match_the_pcn_engine() {
    let Some(shared) = shared() else {
        eprintln!("SKIP: ../shared/pcn/rules_golden is absent");
        return;
    };
    let text =
        std::fs::read_to_string(shared.join("pcn/rules_golden/killallgo_random_playouts.json"))
            .expect("golden file readable");
    let golden: Golden = serde_json::from_str(&text).expect("golden JSON");
    let mut plies = 0;
    let mut failures = Vec::new();
    let mut legal: Vec<Move> = Vec::new();
    for gg in &golden.games {
        let mut g = load(&shared, &gg.sgf);
        assert_eq!(
            g.to_move(),
            Color::White,
            "{}: problems are White to move",
            gg.sgf
        );
        for (i, want) in gg.legal_per_ply.iter().enumerate() {
            g.rule_legal_actions(&mut legal);
            legal.sort_unstable();
            if &legal != want {
                failures.push(format!(
                    "{} ply +{i}: legal {legal:?} want {want:?}",
                    gg.sgf
                ));
                break;
            }
            if g.outcome().is_some() != gg.terminal_per_ply[i] {
                failures.push(format!(
                    "{} ply +{i}: terminal {:?} want {}",
                    gg.sgf,
                    g.outcome(),
                    gg.terminal_per_ply[i]
                ));
                break;
            }
            plies += 1;
            if let Some(&m) = gg.moves.get(i) {
                g.play(m).expect("golden move legal");
            }
        }
        let want = match gg.winner.as_deref() {
            Some("B") => Some(Outcome::Win(Color::Black)),
            Some("W") => Some(Outcome::Win(Color::White)),
            _ => None,
        };
        if g.ply() == 0 || g.outcome() != want {
            failures.push(format!(
                "{}: outcome {:?} want {want:?}",
                gg.sgf,
                g.outcome()
            ));
        }
    }
    eprintln!(
        "killallgo golden: {} games, {plies} positions compared, {} failures",
        golden.games.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(golden.games.len(), 41);
}

#[test]
fn undo_restores_every_golden_position() {
    let Some(shared) = shared() else {
        eprintln!("SKIP: ../shared/pcn/rules_golden is absent");
        return;
    };
    let text =
        std::fs::read_to_string(shared.join("pcn/rules_golden/killallgo_random_playouts.json"))
            .expect("golden file readable");
    let golden: Golden = serde_json::from_str(&text).expect("golden JSON");
    let mut legal = Vec::new();
    for gg in golden.games.iter().take(12) {
        let mut g = load(&shared, &gg.sgf);
        let mut hashes = Vec::new();
        for &m in &gg.moves {
            hashes.push(g.hash());
            g.play(m).expect("golden move legal");
        }
        for (i, h) in hashes.iter().enumerate().rev() {
            g.undo();
            assert_eq!(g.hash(), *h, "{} undo to +{i}", gg.sgf);
            assert!(g.board().validate().is_ok());
            g.rule_legal_actions(&mut legal);
            legal.sort_unstable();
            assert_eq!(&legal, &gg.legal_per_ply[i], "{} undo to +{i}", gg.sgf);
        }
    }
}

/// Reads one float32 tensor from a safetensors file (8-byte header length, JSON header,
/// little-endian data): returns (shape, values).
fn safetensor(path: &Path, name: &str) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).expect("safetensors readable");
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).expect("header");
    let t = &header[name];
    assert_eq!(t["dtype"], "F32");
    let shape: Vec<usize> = t["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|v| v.as_u64().expect("dim") as usize)
        .collect();
    let off = t["data_offsets"].as_array().expect("offsets");
    let (s, e) = (
        off[0].as_u64().expect("start") as usize,
        off[1].as_u64().expect("end") as usize,
    );
    let data = &bytes[8 + n + s..8 + n + e];
    let values = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    (shape, values)
}

#[derive(Deserialize)]
struct NetGolden {
    positions: Vec<NetPosition>,
}

#[derive(Deserialize)]
struct NetPosition {
    sgf: String,
    moves_applied: usize,
    side_to_move: String,
    legal_actions: Vec<u16>,
}

/// The 18-plane encoder reproduces the network golden inputs bit for bit (README §4, §9),
/// and the legal actions listed there agree.
#[test]
fn encoder_matches_network_golden_inputs() {
    let Some(shared) = shared() else {
        eprintln!("SKIP: ../shared is absent");
        return;
    };
    let dir = shared.join("pcn/models/go_AZ");
    if !dir.join("golden.safetensors").exists() {
        eprintln!("SKIP: ../shared/pcn/models/go_AZ is absent");
        return;
    }
    let meta: NetGolden = serde_json::from_str(
        &std::fs::read_to_string(dir.join("golden.json")).expect("golden.json"),
    )
    .expect("golden.json parses");
    let (shape, input) = safetensor(&dir.join("golden.safetensors"), "input");
    assert_eq!(shape, vec![meta.positions.len(), 18, 9, 9]);
    let per = 18 * 81;
    let mut planes = vec![0f32; per];
    let mut legal = Vec::new();
    for (i, p) in meta.positions.iter().enumerate() {
        let text = std::fs::read_to_string(shared.join(&p.sgf)).expect("problem readable");
        let tree = GameTree::parse(&text).expect("problem parses");
        let g = sgf::to_killallgo_at(&tree, p.moves_applied).expect("prefix replays");
        assert_eq!(g.ply(), p.moves_applied);
        assert_eq!(g.to_move().letter().to_string(), p.side_to_move);
        assert_eq!(g.input_planes(), 18);
        g.encode_input(&mut planes);
        assert_eq!(
            &planes[..],
            &input[i * per..(i + 1) * per],
            "position {i}: {}@{}",
            p.sgf,
            p.moves_applied
        );
        g.legal_moves(&mut legal);
        legal.sort_unstable();
        assert_eq!(legal, p.legal_actions, "position {i}");
    }
    eprintln!(
        "encoder golden: {} positions bit-identical",
        meta.positions.len()
    );
}
