//! Evaluator wrappers (batching, cache) against their inner evaluator, the symmetry code
//! against the golden vectors, and the network heuristics in the solvers.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pcn::nn::decode::{Decoded, Decoder, SYMMETRIES};
use pcn::nn::eval::{BatchingEvaluator, CachedEvaluator, RandomEvaluator};
use pcn::nn::{Evaluator, NetGame, NetKind, NetOutput, NnError};
use pcn::util::Rng;
use safetensors::SafeTensors;

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pcn/models");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("SKIP: {} absent", p.display());
        None
    }
}

fn random_rows(len: usize, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n * len).map(|_| rng.below(2) as f32).collect()
}

fn eval_all(e: &dyn Evaluator, x: &[f32], n: usize) -> NetOutput {
    let mut o = NetOutput::default();
    e.evaluate(x, n, &mut o).expect("evaluates");
    o
}

#[test]
fn batching_and_cache_match_inner_under_threads() {
    for kind in [NetKind::AlphaZero, NetKind::Pcn { bins: 500 }] {
        let info = RandomEvaluator::info_for(NetGame::KillallGo, kind);
        let inner: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(info.clone(), 3));
        let batching = Arc::new(BatchingEvaluator::new(
            inner.clone(),
            16,
            Duration::from_millis(2),
        ));
        let cached: Arc<dyn Evaluator> = Arc::new(CachedEvaluator::new(batching.clone(), 1 << 20));
        let len = info.input_len();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (inner, batching, cached) = (inner.clone(), batching.clone(), cached.clone());
                s.spawn(move || {
                    for i in 0..25u64 {
                        // Repeated rows (i % 7) make cache hits; sizes 1..=3 mix in batches.
                        let n = 1 + (i % 3) as usize;
                        let x = random_rows(len, n, (i % 7) * 100 + t % 2);
                        let want = eval_all(&*inner, &x, n);
                        assert_eq!(eval_all(&*batching, &x, n), want);
                        assert_eq!(eval_all(&*cached, &x, n), want);
                    }
                });
            }
        });
        let st = batching.stats();
        assert!(st.rows > 0 && st.batches > 0 && st.batches <= st.rows);
        // A bad length is an error, not a panic.
        let mut o = NetOutput::default();
        assert!(matches!(
            cached.evaluate(&[0.0; 3], 1, &mut o),
            Err(NnError::BadInput(_))
        ));
        // A stopped evaluator fails.
        batching.stop();
        let x = random_rows(len, 1, 99);
        assert!(matches!(
            batching.evaluate(&x, 1, &mut o),
            Err(NnError::Failed(_))
        ));
    }
}

#[test]
fn cache_hits_skip_inner_and_stay_bounded() {
    let info = RandomEvaluator::info_for(NetGame::Gomoku, NetKind::AlphaZero);
    let inner: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(info.clone(), 5));
    let cache = CachedEvaluator::new(inner.clone(), 64 << 20);
    let len = info.input_len();
    let x = random_rows(len, 4, 1);
    let a = eval_all(&cache, &x, 4);
    let b = eval_all(&cache, &x, 4);
    assert_eq!(a, b);
    assert_eq!(a, eval_all(&*inner, &x, 4));
    let (hits, misses) = cache.stats();
    assert_eq!(misses, 4);
    assert_eq!(hits, 4);
    // A tiny cache (64 entries minimum) with far more distinct rows: still correct.
    let cache = CachedEvaluator::new(inner.clone(), 1);
    for i in 0..300 {
        let y = random_rows(len, 1, 1000 + i);
        assert_eq!(eval_all(&cache, &y, 1), eval_all(&*inner, &y, 1));
        assert_eq!(eval_all(&cache, &y, 1), eval_all(&*inner, &y, 1));
    }
    let (hits, misses) = cache.stats();
    assert_eq!(hits + misses, 600);
    assert!(hits >= 300, "the repeat right after a store hits");
}

fn floats(st: &SafeTensors, name: &str) -> Option<Vec<f32>> {
    let t = st.tensor(name).ok()?;
    Some(
        t.data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}

/// Symmetry inputs (exact) for every model, and with the CPU backend the 8-symmetry
/// averaged priors and values.
#[test]
fn golden_symmetries() {
    let Some(dir) = shared() else { return };
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("models dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("golden.safetensors").is_file())
        .collect();
    names.sort();
    assert!(!names.is_empty());
    for mdir in names {
        let bytes = std::fs::read(mdir.join("golden.safetensors")).expect("golden");
        let st = SafeTensors::deserialize(&bytes).expect("golden parses");
        let eval = pcn::nn::open(mdir.to_str().expect("utf8"), "cpu", 1).expect("model opens");
        let info = eval.info().clone();
        let len = info.input_len();
        let input = floats(&st, "input").expect("input");
        let sym = floats(&st, "sym8_input").expect("sym8_input");
        let dec8 = Decoder::new(&info, SYMMETRIES);
        let mut batch = Vec::new();
        for i in 0..8 {
            dec8.push_input(&input[i * len..(i + 1) * len], &mut batch);
        }
        assert_eq!(batch, sym, "{}: sym8_input", info.name);
        // Averaged outputs from our network run.
        let mut dec8 = dec8;
        let mut out = NetOutput::default();
        eval.evaluate(&batch, 64, &mut out).expect("evaluates");
        let prob = floats(&st, "sym8_policy_prob_avg").expect("avg");
        let mut d = Decoded::default();
        for i in 0..8 {
            dec8.decode(&out, i, &mut d);
            let want = &prob[i * info.actions..(i + 1) * info.actions];
            let diff = d
                .policy
                .iter()
                .zip(want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(diff < 1e-5, "{} pos {i}: prior diff {diff}", info.name);
            match info.kind {
                NetKind::AlphaZero => {
                    let v = floats(&st, "sym8_value_avg").expect("value avg")[i];
                    assert!((d.value - v).abs() < 1e-5, "{} pos {i}: value", info.name);
                }
                NetKind::Pcn { .. } => {
                    let b = floats(&st, "sym8_blackV_expected_avg").expect("b avg")[i];
                    let w = floats(&st, "sym8_whiteV_expected_avg").expect("w avg")[i];
                    assert!(
                        (d.black - b).abs() < 5e-3,
                        "{} pos {i}: black {} {b}",
                        info.name,
                        d.black
                    );
                    assert!(
                        (d.white - w).abs() < 5e-3,
                        "{} pos {i}: white {} {w}",
                        info.name,
                        d.white
                    );
                }
            }
        }
        // One symmetry is the identity row's plain decoding.
        let mut dec1 = Decoder::new(&info, 1);
        let mut b1 = Vec::new();
        dec1.push_input(&input[..len], &mut b1);
        let mut o1 = NetOutput::default();
        eval.evaluate(&b1, 1, &mut o1).expect("evaluates");
        dec1.decode(&o1, 0, &mut d);
        let soft = floats(&st, "policy_softmax").expect("softmax");
        let diff = d
            .policy
            .iter()
            .zip(&soft[..info.actions])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "{}: identity prior diff {diff}", info.name);
    }
}
