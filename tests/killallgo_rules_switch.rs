//! The switchable Killall-Go knowledge rules (`KillallGoRules`: the Benson win and the own-eye
//! ban, `pcn solve --benson off --own-eye-ban off`): switching one off changes the game as its
//! docs say; under every setting the solvers agree with each other (and with an exhaustive
//! search where one finishes, i.e. with the ban on); their proofs
//! record the setting and the real `pcn verify` replays them under it, so a proof made
//! without a rule is not accepted as a proof under the paper's rules.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use pcn::game::killallgo::{KillallGo, KillallGoRules, Variant};
use pcn::game::{Color, Game, MoveError, Outcome};
use pcn::proof::{self, GameKind, MoveTree, ProofHeader};
use pcn::search::solver::{solver_by_name, SolveResult, SolverOptions};
use pcn::search::Limits;
use pcn::util::Rng;

mod common;

use common::{header, killallgo_positions_with, killallgo_record, no_key, tmp_dir, Brute};

const BENSON_OFF: KillallGoRules = KillallGoRules {
    benson: false,
    own_eye_ban: true,
};
const EYE_OFF: KillallGoRules = KillallGoRules {
    benson: true,
    own_eye_ban: false,
};
const BOTH_OFF: KillallGoRules = KillallGoRules {
    benson: false,
    own_eye_ban: false,
};

/// `g`'s moves replayed (checked) under `rules`.
fn replay(g: &KillallGo, rules: KillallGoRules) -> KillallGo {
    let mut r = KillallGo::with_rules(g.variant(), rules);
    for (_, m) in g.moves() {
        r.play(m)
            .expect("a move legal with a rule on is legal with it off");
    }
    r
}

#[test]
fn each_switch_changes_the_game_as_documented() {
    let mut rng = Rng::new(7);
    let (mut benson_ends, mut eye_moves) = (0, 0);
    let mut legal = Vec::new();
    for _ in 0..300 {
        let mut g = KillallGo::new(Variant::Seven);
        while g.outcome().is_none() && g.ply() < 200 {
            // Own-eye points of either colour: illegal under the ban, playable without it
            // (unless the fill is suicide).
            if !g.in_opening() {
                let off = replay(&g, EYE_OFF);
                for m in 0..g.pass_move() {
                    if g.board_move_ok(m, g.to_move())
                        == Err(MoveError::Illegal("filling an own true eye"))
                    {
                        let r = off.board_move_ok(m, g.to_move());
                        assert!(
                            r.is_ok() || r == Err(MoveError::Illegal("suicide")),
                            "{r:?}"
                        );
                        eye_moves += usize::from(r.is_ok());
                    }
                }
            }
            g.legal_moves(&mut legal);
            let pass = g.pass_move();
            legal.retain(|&m| m != pass);
            let m = if legal.is_empty() {
                pass
            } else {
                legal[rng.below(legal.len())]
            };
            g.play_unchecked(m);
        }
        // A game won by White's living block after a board move goes on without Benson.
        if g.outcome() == Some(Outcome::Win(Color::White)) && g.last_move() != Some(g.pass_move()) {
            let off = replay(&g, BENSON_OFF);
            assert_eq!(off.outcome(), None, "{}", killallgo_record(&g).to_sgf());
            benson_ends += 1;
        }
    }
    eprintln!("{benson_ends} Benson wins, {eye_moves} own-eye fills made legal");
    assert!(benson_ends >= 5, "{benson_ends} Benson wins");
    assert!(eye_moves >= 5, "{eye_moves} own-eye fills");
}

#[test]
fn solvers_agree_and_their_proofs_verify_under_each_setting() {
    let dir = tmp_dir("killallgo_rules_switch");
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let (mut wins, mut losses) = (0, 0);
    for (i, rules) in [BENSON_OFF, EYE_OFF, BOTH_OFF].into_iter().enumerate() {
        let mut proven = 0;
        for mut g in killallgo_positions_with(rules, 80, 14, 40 + i as u64) {
            assert_eq!(g.rules(), rules);
            for prover in [Color::White, Color::Black] {
                // Without the ban, eyes get filled and groups die and come back: games
                // rarely end, and the exhaustive search is out of reach. There the solvers
                // are checked against each other, their trees by the checkers.
                let truth = if rules.own_eye_ban {
                    let Some(t) = Brute::new(300_000, no_key).wins(&mut g, prover) else {
                        continue;
                    };
                    if t {
                        wins += 1;
                    } else {
                        losses += 1;
                    }
                    Some(t)
                } else {
                    None
                };
                let mut claims = Vec::new();
                for name in ["dfpn", "fdfpn", "mcts", "gpn"] {
                    let opts = SolverOptions::with_memory(8 << 20);
                    let mut s = solver_by_name::<KillallGo>(name, &opts).expect("solver");
                    let stop = AtomicBool::new(false);
                    let o = s.solve(&g, prover, &Limits::nodes(60_000), &stop, &mut |_| {});
                    let label = format!("{rules:?} {prover:?} {name}");
                    if o.result == SolveResult::Unknown {
                        continue;
                    }
                    let win = o.result == SolveResult::Win;
                    if let Some(t) = truth {
                        assert_eq!(win, t, "{label}: exhaustive search says win={t}");
                    }
                    claims.push(win);
                    proven += 1;
                    let tree = s.proof_tree().expect("solution tree");
                    tree.check(&g).unwrap_or_else(|e| panic!("{label}: {e}"));
                    if win {
                        let mt = MoveTree::from_solver(&tree, g.to_move(), 10_000_000)
                            .expect("convertible");
                        let mut h = header(GameKind::KillallGo, None, &g, prover, name);
                        h.extra.extend(ProofHeader::killallgo_rule_pairs(rules));
                        let text = proof::to_sgf(&killallgo_record(&g), &h, &mt).to_sgf();
                        let p = dir.join(format!("p{}.sgf", files.len()));
                        std::fs::write(&p, &text).expect("write");
                        files.push((p, text));
                    }
                }
                assert!(
                    claims.windows(2).all(|w| w[0] == w[1]),
                    "{rules:?} {prover:?}: solvers disagree: {claims:?}"
                );
            }
        }
        eprintln!("{rules:?}: {proven} proven results");
        assert!(proven >= 20, "{rules:?}: {proven} proven results");
    }
    eprintln!(
        "exhaustive (Benson off): {wins} wins, {losses} losses; {} proofs",
        files.len()
    );
    assert!(wins >= 6 && losses >= 6, "{wins} / {losses}");
    assert!(files.len() >= 30, "{} proofs", files.len());
    let paths: Vec<&PathBuf> = files.iter().map(|(p, _)| p).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_pcn"))
        .arg("verify")
        .args(&paths)
        .output()
        .expect("run pcn verify");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same trees with the switches taken out of the header claim a win under the
    // paper's rules: the checker must refuse those that depend on a rule being off.
    let mut refused = 0;
    for (i, (_, text)) in files.iter().enumerate() {
        let plain = text
            .replace(" benson=off", "")
            .replace(" own_eye_ban=off", "");
        if plain == *text {
            continue;
        }
        let p = dir.join(format!("plain{i}.sgf"));
        std::fs::write(&p, &plain).expect("write");
        let out = Command::new(env!("CARGO_BIN_EXE_pcn"))
            .arg("verify")
            .arg(&p)
            .output()
            .expect("run pcn verify");
        refused += usize::from(out.status.code() != Some(0));
    }
    eprintln!("{refused} proofs refused under the paper's rules");
    assert!(refused >= 3, "{refused} refused");
}

#[test]
fn bad_switch_values_in_a_header_are_errors() {
    let h = ProofHeader::parse("pcn-proof: game=killallgo size=7 prover=W plies=3 benson=maybe")
        .expect_err("benson=maybe");
    assert!(h.to_string().contains("benson"), "{h}");
    let ok = ProofHeader::parse(
        "pcn-proof: game=killallgo size=7 prover=W plies=3 benson=off own_eye_ban=on",
    )
    .expect("valid header");
    assert_eq!(
        ok.killallgo_rules().expect("rules"),
        KillallGoRules {
            benson: false,
            own_eye_ban: true
        }
    );
    let default = ProofHeader::parse("pcn-proof: game=killallgo size=7 prover=W plies=3")
        .expect("valid header");
    assert_eq!(
        default.killallgo_rules().expect("rules"),
        KillallGoRules::default()
    );
}
