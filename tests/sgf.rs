//! SGF reader/writer: properties, escapes, coordinates, variations, round trips, typed errors
//! on malformed input (truncation, garbage, a randomized mutation fuzz loop), and every
//! problem file of `../shared/problems`.

use std::path::PathBuf;

use pcn::game::go::KoRule;
use pcn::game::gomoku::Rule;
use pcn::game::{Color, Game};
use pcn::sgf::{self, GameTree, SgfError};
use pcn::util::Rng;

const SAMPLE: &str =
    "(;FF[4]GM[1]SZ[9]KM[6.5]RE[W+R]PL[B]XY[keep \\] me]C[multi\\\nline \\\\ \\] done]\n\
;B[cc]C[first];W[]\n(;B[gc];W[tt])\n(;B[ee]AB[aa:bb]))";

fn problems() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/problems");
    p.is_dir().then_some(p)
}

#[test]
fn properties_escapes_and_variations() {
    let t = GameTree::parse(SAMPLE).expect("parses");
    assert_eq!(t.game_type().unwrap(), 1);
    assert_eq!(t.size().unwrap(), (9, 9));
    assert_eq!(t.komi().unwrap(), Some(6.5));
    assert_eq!(t.result(), Some("W+R"));
    assert_eq!(t.player().unwrap(), Some(Color::Black));
    assert_eq!(
        t.comment(),
        Some("multiline \\ ] done"),
        "soft break and escapes"
    );
    assert_eq!(
        t.root().unwrap().value("XY"),
        Some("keep ] me"),
        "unknown property kept"
    );
    assert_eq!(t.variations.len(), 2);
    let moves = t.main_line_moves().unwrap();
    assert_eq!(moves.len(), 4);
    // B[cc] -> x = 2, y = 8 - 2 = 6 (GTP C7); W[] and W[tt] are passes.
    assert_eq!(moves[0].point, Some((2, 6)));
    assert_eq!(moves[1].point, None);
    assert_eq!(moves[2].point, Some((6, 6)));
    assert_eq!(moves[3].point, None);
    assert_eq!(moves[3].color, Color::White);
    // The second variation's compressed point list.
    let v = &t.variations[1];
    let ab = v.nodes[0].get("AB").unwrap();
    assert_eq!(
        sgf::parse_point_list("AB", &ab.values[0], 9, 9).unwrap(),
        vec![(0, 7), (1, 7), (0, 8), (1, 8)]
    );
}

#[test]
fn rectangular_size_and_setup() {
    let t = GameTree::parse("(;GM[1]SZ[5:3]AB[aa][ec]AW[ca]AE[aa]PL[W];W[ba])").unwrap();
    assert_eq!(t.size().unwrap(), (5, 3));
    let setup = t.setup_stones().unwrap();
    // aa removed again by AE; ec = (4, 0); ca = (2, 2).
    assert_eq!(setup, vec![(Color::Black, (4, 0)), (Color::White, (2, 2))]);
    let g = sgf::to_go(&t, KoRule::Simple).unwrap();
    assert_eq!(g.width(), 5);
    assert_eq!(g.height(), 3);
    assert_eq!(g.board().stone(4), Some(Color::Black));
    assert_eq!(g.board().stone(2 * 5 + 1), Some(Color::White), "W[ba] = B3");
    assert_eq!(g.to_move(), Color::Black);
    // tt is a point, not a pass, on boards larger than 19.
    let t = GameTree::parse("(;GM[1]SZ[21];B[tt])").unwrap();
    assert_eq!(t.main_line_moves().unwrap()[0].point, Some((19, 1)));
}

#[test]
fn round_trip_parse_write_parse() {
    let t = GameTree::parse(SAMPLE).unwrap();
    let text = t.to_sgf();
    let back = GameTree::parse(&text).unwrap();
    assert_eq!(back, t);
    // Records built by the writer.
    let mut r = GameTree::new_record(4, 15, 13);
    r.push_move(Color::Black, Some((7, 6)));
    r.push_move(Color::White, Some((0, 0)));
    r.nodes[0].set("C", vec!["odd ] text \\ here\n".into()]);
    let mut alt = GameTree::default();
    alt.nodes.push(Default::default());
    alt.nodes[0].set("B", vec!["aa".into()]);
    r.variations = vec![alt.clone(), alt];
    let back = GameTree::parse(&r.to_sgf()).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.size().unwrap(), (15, 13));
    assert_eq!(back.main_line_moves().unwrap()[1].point, Some((0, 0)));
    // A played Killall-Go game written and read back gives the same position.
    let g = sgf::to_killallgo(
        &GameTree::parse("(;GM[1]SZ[9];B[cc];W[];B[gc];W[];B[cg];W[];B[gg];W[ee];B[])").unwrap(),
    )
    .unwrap();
    let rec = GameTree::from_moves(1, 9, 9, g.moves());
    let g2 = sgf::to_killallgo(&GameTree::parse(&rec.to_sgf()).unwrap()).unwrap();
    assert_eq!(g2.hash(), g.hash());
    assert_eq!(g2.ply(), g.ply());
}

fn is_syntax(r: &Result<GameTree, SgfError>) -> Option<(usize, usize)> {
    match r {
        Err(SgfError::Syntax { offset, line, .. }) => Some((*offset, *line)),
        _ => None,
    }
}

#[test]
fn malformed_input_gives_positioned_errors() {
    // Every proper prefix is an error with an offset inside the text (never a panic).
    for cut in 0..SAMPLE.len() - 1 {
        if !SAMPLE.is_char_boundary(cut) {
            continue;
        }
        let r = GameTree::parse(&SAMPLE[..cut]);
        let (offset, _) = is_syntax(&r).unwrap_or_else(|| panic!("prefix {cut}: {r:?}"));
        assert!(offset <= cut);
    }
    // Error positions name the right line.
    let r = GameTree::parse("(;GM[1]\n;B[aa]\n;W[bb] ?? )");
    assert_eq!(is_syntax(&r).map(|p| p.1), Some(3), "{r:?}");
    for bad in [
        "", "   ", "garbage", ")(", "(;", "(;B[aa]", "(;B[aa)", "(B[aa])", "(;[aa])", "(;B)",
        "((;))",
    ] {
        assert!(is_syntax(&GameTree::parse(bad)).is_some(), "{bad:?}");
    }
    // Deep nesting is refused with an error, not a stack overflow; moderate nesting is fine.
    let deep = "(;B[aa]".repeat(100_000);
    assert!(is_syntax(&GameTree::parse(&deep)).is_some());
    let ok = format!("{}{}", "(;C[x]".repeat(900), ")".repeat(900));
    let t = GameTree::parse(&ok).expect("900 levels");
    assert_eq!(GameTree::parse(&t.to_sgf()).unwrap(), t);
    // Well-formed but bad values are typed errors too.
    let t = GameTree::parse("(;SZ[9];B[zz])").unwrap();
    assert!(matches!(
        t.main_line_moves(),
        Err(SgfError::BadValue { .. })
    ));
    let t = GameTree::parse("(;SZ[x])").unwrap();
    assert!(matches!(t.size(), Err(SgfError::BadValue { .. })));
    let t = GameTree::parse("(;GM[1]SZ[9];B[aa];B[aa])").unwrap();
    assert!(matches!(
        sgf::to_killallgo(&t),
        Err(SgfError::IllegalMove { number: 1, .. })
    ));
}

#[test]
fn fuzz_mutated_files_never_panic_and_round_trip() {
    let mut seeds = vec![SAMPLE.to_string()];
    if let Some(dir) = problems() {
        for sub in ["killallgo/1.sgf", "gomoku/1.sgf"] {
            if let Ok(t) = std::fs::read_to_string(dir.join(sub)) {
                seeds.push(t);
            }
        }
    }
    let alphabet: Vec<char> = "()[];\\:aBWSZGMtt9 \n\r]".chars().collect();
    let mut rng = Rng::new(2026);
    let (mut ok, mut err) = (0, 0);
    for i in 0..4000 {
        let mut s: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..1 + rng.below(4) {
            let pos = rng.below(s.len() + 1);
            match rng.below(3) {
                0 if pos < s.len() => {
                    s.remove(pos);
                }
                1 => s.insert(pos, alphabet[rng.below(alphabet.len())]),
                _ if pos < s.len() => s[pos] = alphabet[rng.below(alphabet.len())],
                _ => {}
            }
        }
        let text: String = s.into_iter().collect();
        match GameTree::parse(&text) {
            Ok(t) => {
                ok += 1;
                let back = GameTree::parse(&t.to_sgf()).expect("written SGF parses");
                assert_eq!(back, t);
                // Conversions must not panic either.
                let _ = sgf::to_killallgo(&t);
                let _ = sgf::to_gomoku(&t, Rule::Freestyle);
                let _ = sgf::to_go(&t, KoRule::Simple);
            }
            Err(SgfError::Syntax { offset, .. }) => {
                err += 1;
                assert!(offset <= text.len());
            }
            Err(e) => panic!("unexpected error kind {e}"),
        }
    }
    eprintln!("sgf fuzz: {ok} parsed, {err} syntax errors");
    assert!(ok > 0 && err > 0);
    // Random garbage bytes.
    for _ in 0..500 {
        let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.below(256) as u8).collect();
        let _ = GameTree::parse_bytes(&bytes);
    }
}

#[test]
fn every_problem_file_reads_replays_and_round_trips() {
    let Some(dir) = problems() else {
        eprintln!("SKIP: ../shared/problems is absent");
        return;
    };
    let mut count = 0;
    for (sub, gm) in [("gomoku", 4), ("killallgo", 1)] {
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(sub))
            .expect("problem dir")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "sgf"))
            .collect();
        entries.sort();
        for path in entries {
            let bytes = std::fs::read(&path).expect("readable");
            let t = GameTree::parse_bytes(&bytes).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert_eq!(t.game_type().unwrap(), gm);
            let back = GameTree::parse(&t.to_sgf()).unwrap();
            assert_eq!(back, t, "{path:?} round trip");
            let moves = t.main_line_moves().unwrap().len();
            if gm == 4 {
                for rule in [Rule::Freestyle, Rule::FourT] {
                    let g = sgf::to_gomoku(&t, rule).unwrap_or_else(|e| panic!("{path:?}: {e}"));
                    assert_eq!(g.ply(), moves);
                    assert_eq!(
                        g.to_move(),
                        Color::Black,
                        "Gomoku problems are Black to move"
                    );
                    assert!(g.outcome().is_none());
                }
            } else {
                let g = sgf::to_killallgo(&t).unwrap_or_else(|e| panic!("{path:?}: {e}"));
                assert_eq!(g.ply(), moves);
                assert_eq!(
                    g.to_move(),
                    Color::White,
                    "Killall-Go problems are White to move"
                );
                assert!(g.outcome().is_none());
            }
            count += 1;
        }
    }
    assert_eq!(count, 80);
}
