//! The evaluation network in `weights/` against the golden values its exporter computed
//! with its own (numpy) quantized reference (`training/pcn_train/evalnet.py export`): the
//! engine's board walk and its incremental accumulator must both reproduce them, which
//! holds the two implementations of the line codes and the arithmetic to one another.

use std::path::Path;
use std::sync::Arc;

use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Game, Move};
use pcn::search::gomoku::learn::evalnet::{Accumulator, EvalNet, Simd};

/// One golden line: width, height, rule, moves (x, y), value.
type Golden = (usize, usize, Rule, Vec<(usize, usize)>, f32);

/// Reads one golden line.
fn parse(line: &str) -> Option<Golden> {
    let (pos, v) = line.split_once(';')?;
    let mut it = pos.split_whitespace();
    let w = it.next()?.parse().ok()?;
    let h = it.next()?.parse().ok()?;
    let rule = Rule::from_name(it.next()?)?;
    let mut moves = Vec::new();
    for m in it {
        let (x, y) = m.split_once(',')?;
        moves.push((x.parse().ok()?, y.parse().ok()?));
    }
    Some((w, h, rule, moves, v.trim().parse().ok()?))
}

#[test]
fn shipped_evaluation_networks_match_their_golden_values() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights");
    let mut checked = 0;
    for rule in Rule::ALL {
        let bin = dir.join(format!("gomoku_eval_{}.bin", rule.name()));
        let golden = dir.join(format!("gomoku_eval_{}.golden.txt", rule.name()));
        if !bin.exists() {
            continue;
        }
        let net = Arc::new(EvalNet::load(&bin).expect("the shipped network loads"));
        assert_eq!(net.rule(), rule);
        let text = std::fs::read_to_string(&golden).expect("a shipped network has golden values");
        let mut lines = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (w, h, r, moves, want) = parse(line).unwrap_or_else(|| panic!("bad line {line}"));
            let mut g = Gomoku::new(w, h, r).unwrap();
            let mut accs: Vec<Accumulator> = [Simd::Scalar, Simd::Avx2, Simd::Avx512]
                .into_iter()
                .filter(|s| s.available())
                .map(|s| Accumulator::with_simd(net.clone(), s))
                .collect();
            accs.iter_mut().for_each(|a| a.reset(&g));
            for (x, y) in moves {
                let m = (y * w + x) as Move;
                g.play(m).unwrap_or_else(|e| panic!("{line}: {e:?}"));
                accs.iter_mut().for_each(|a| a.played(g.cell_of(m)));
            }
            let walk = net.evaluate(&g);
            assert!((walk - want).abs() < 2e-3, "{line}: walk {walk}");
            for a in &mut accs {
                let v = a.value(&g);
                assert!((v - want).abs() < 2e-3, "{line}: {:?} {v}", a.simd());
            }
            lines += 1;
        }
        assert!(
            lines >= 10,
            "{}: only {lines} golden positions",
            golden.display()
        );
        checked += 1;
    }
    if checked == 0 {
        println!("NOTICE: no evaluation network in weights/; golden check skipped");
    }
}
