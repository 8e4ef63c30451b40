//! Network heuristics: AlphaZero (priors + tanh value) and PCN (priors + expected log10
//! proof cost per colour) through any [`Evaluator`], with symmetry averaging
//! (`../shared/pcn/README.md` §5, §6, §8).
//!
//! The solvers use them as follows (see `mcts.rs` and `dfpn.rs`):
//! - MCTS: priors in PUCT; α0: the value backed up with alternating signs; PCN: the cost of
//!   the prover's head plus per-edge `log10(b)` along the path, min/max normalised.
//! - Focused DFPN: priors order the children; PCN: child (pn, dn) initialised from the
//!   costs at the parent; α0: the window ratio `min(0.1, 1 + value)`.
//!
//! Decoded results are cached (bounded, keyed by the hash of the identity encoding, which
//! holds the network's whole view: Killall-Go's 8-ply history and the side to move), so the
//! DFPN's re-visits of a node do not re-run the network. Evaluation errors never panic: the
//! position gets flat priors and a neutral value, and [`NetHeuristic::errors`] counts them.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::heuristic::{CostModel, Evaluation, Heuristic};
use crate::game::Game;
use crate::nn::decode::{Decoded, Decoder};
use crate::nn::eval::input_hash;
use crate::nn::{CostLabel, Evaluator, NetKind, NetOutput, NnError};

/// Shards of the decoded cache (search threads share it).
const SHARDS: usize = 32;

/// One shard of the decoded cache: direct-mapped `(key, decoded)` slots.
type Shard = Mutex<Vec<Option<(u64, Decoded)>>>;

/// A bounded, direct-mapped cache of decoded evaluations.
struct DecodedCache {
    shards: Vec<Shard>,
    per_shard: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl DecodedCache {
    fn new(entries: usize) -> Self {
        let per_shard = entries.div_ceil(SHARDS).max(1);
        DecodedCache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new((0..per_shard).map(|_| None).collect()))
                .collect(),
            per_shard,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn slot(&self, key: u64) -> (usize, usize) {
        (
            (key as usize) % SHARDS,
            ((key >> 20) as usize) % self.per_shard,
        )
    }

    fn get(&self, key: u64, d: &mut Decoded) -> bool {
        let (s, i) = self.slot(key);
        let found = self.shards[s].lock().ok().is_some_and(|sh| {
            if let Some((k, e)) = &sh[i] {
                if *k == key {
                    d.clone_from(e);
                    return true;
                }
            }
            false
        });
        if found {
            self.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    fn put(&self, key: u64, d: &Decoded) {
        let (s, i) = self.slot(key);
        if let Ok(mut sh) = self.shards[s].lock() {
            sh[i] = Some((key, d.clone()));
        }
    }
}

/// Shared state of a heuristic and its forks.
struct Shared {
    eval: Arc<dyn Evaluator>,
    cache: DecodedCache,
    errors: AtomicU64,
    last_error: Mutex<Option<String>>,
    cost: Option<CostModel>,
    symmetries: usize,
}

/// One decoded cache for several heuristics over the same evaluator: the job-level workers
/// of one solve that keep one table ([`crate::search::solver::tt::TableGroup`]) search the
/// same positions near the root, and with a cache each they would run the network on each
/// of them once per worker. Cloning gives another handle to the same cache; the first
/// heuristic made through it creates the cache, the later ones join it.
#[derive(Clone, Default)]
pub struct NetShare(Arc<Mutex<Option<Arc<Shared>>>>);

impl NetShare {
    /// A share with no cache yet.
    pub fn new() -> NetShare {
        NetShare::default()
    }
}

impl std::fmt::Debug for NetShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetShare")
    }
}

/// A [`Heuristic`] backed by a network: AlphaZero or PCN by the model's kind.
pub struct NetHeuristic<G: Game> {
    shared: Arc<Shared>,
    decoder: Decoder,
    identity: Vec<f32>,
    batch: Vec<f32>,
    out: NetOutput,
    decoded: Vec<Decoded>,
    keys: Vec<u64>,
    misses: Vec<usize>,
    _game: PhantomData<fn() -> G>,
}

/// Decoded-cache entries by default (about 100 bytes per entry for 9x9, 1 KB for 15x15).
pub const DEFAULT_CACHE_ENTRIES: usize = 1 << 18;

impl<G: Game> NetHeuristic<G> {
    /// A heuristic over `eval` averaging `symmetries` (1..=8) symmetries, checked against
    /// `sample` (board size, planes, actions). `cache_entries` bounds the decoded cache.
    pub fn new(
        eval: Arc<dyn Evaluator>,
        symmetries: usize,
        sample: &G,
        cache_entries: usize,
    ) -> Result<Self, NnError> {
        Self::check(eval.info(), symmetries, sample)?;
        let info = eval.info().clone();
        let cost = match info.kind {
            NetKind::AlphaZero => None,
            NetKind::Pcn { bins } => Some(CostModel {
                bins,
                // b_heur labels used the legal-move count as branching factor, b_max ones the
                // constant action count.
                branching: (info.cost_label == CostLabel::Max).then_some(info.actions),
            }),
        };
        let shared = Arc::new(Shared {
            eval,
            cache: DecodedCache::new(cache_entries.max(SHARDS)),
            errors: AtomicU64::new(0),
            last_error: Mutex::new(None),
            cost,
            symmetries,
        });
        Ok(Self::with_shared(shared, &info))
    }

    /// Whether a network of `info` averaging `symmetries` symmetries can evaluate positions
    /// like `sample` (board size, planes, actions).
    fn check(info: &crate::nn::NetInfo, symmetries: usize, sample: &G) -> Result<(), NnError> {
        if !(1..=8).contains(&symmetries) {
            return Err(NnError::Mismatch(format!(
                "symmetries must be 1..=8, got {symmetries}"
            )));
        }
        if sample.width() != info.board_size
            || sample.height() != info.board_size
            || sample.input_planes() != info.planes
            || sample.num_actions() != info.actions
        {
            return Err(NnError::Mismatch(format!(
                "model {} ({}x{}, {} planes, {} actions) does not fit {} ({}x{}, {} planes, {} actions)",
                info.name,
                info.board_size,
                info.board_size,
                info.planes,
                info.actions,
                sample.name(),
                sample.width(),
                sample.height(),
                sample.input_planes(),
                sample.num_actions()
            )));
        }
        Ok(())
    }

    /// As [`NetHeuristic::new`], but sharing the decoded cache of `share` with every other
    /// heuristic made through it (over the same evaluator and symmetries; one over another
    /// evaluator gets a cache of its own, as from `new`).
    pub fn new_in(
        share: &NetShare,
        eval: Arc<dyn Evaluator>,
        symmetries: usize,
        sample: &G,
        cache_entries: usize,
    ) -> Result<Self, NnError> {
        let mut slot = match share.0.lock() {
            Ok(slot) => slot,
            // A worker that panicked while holding the lock left the slot as it was (it only
            // ever holds a finished `Arc`): use it.
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(shared) = slot.as_ref() {
            if Arc::ptr_eq(&shared.eval, &eval) && shared.symmetries == symmetries {
                Self::check(eval.info(), symmetries, sample)?;
                return Ok(Self::with_shared(shared.clone(), eval.info()));
            }
            return Self::new(eval, symmetries, sample, cache_entries);
        }
        let h = Self::new(eval, symmetries, sample, cache_entries)?;
        *slot = Some(h.shared.clone());
        Ok(h)
    }

    fn with_shared(shared: Arc<Shared>, info: &crate::nn::NetInfo) -> Self {
        NetHeuristic {
            decoder: Decoder::new(info, shared.symmetries),
            identity: vec![0.0; info.input_len()],
            batch: Vec::new(),
            out: NetOutput::default(),
            decoded: Vec::new(),
            keys: Vec::new(),
            misses: Vec::new(),
            shared,
            _game: PhantomData,
        }
    }

    /// Evaluation errors so far (positions that got flat priors instead).
    pub fn errors(&self) -> u64 {
        self.shared.errors.load(Ordering::Relaxed)
    }

    /// The last evaluation error, if any.
    pub fn last_error(&self) -> Option<String> {
        self.shared.last_error.lock().ok().and_then(|e| e.clone())
    }

    /// Decoded-cache (hits, misses) so far.
    pub fn cache_stats(&self) -> (u64, u64) {
        (
            self.shared.cache.hits.load(Ordering::Relaxed),
            self.shared.cache.misses.load(Ordering::Relaxed),
        )
    }

    fn fill(&self, d: &Decoded, g: &G, e: &mut Evaluation) {
        let n = g.num_actions();
        e.reset(n);
        for (p, &q) in e.policy.iter_mut().zip(&d.policy) {
            *p = q;
        }
        match self.shared.cost {
            None => e.value = d.value.clamp(-1.0, 1.0),
            Some(cm) => {
                let (mine, other) = if g.to_move() == crate::game::Color::Black {
                    (d.black, d.white)
                } else {
                    (d.white, d.black)
                };
                // A value in [-1, 1] for consumers that want one: cheaper own proof is better.
                let span = (cm.bins.max(2) - 1) as f32;
                e.value = ((other - mine) / span).clamp(-1.0, 1.0);
                e.cost = Some([d.black, d.white]);
            }
        }
    }
}

impl<G: Game> Heuristic<G> for NetHeuristic<G> {
    fn name(&self) -> &'static str {
        if self.shared.cost.is_some() {
            "pcn"
        } else {
            "alphazero"
        }
    }

    fn learned(&self) -> bool {
        true
    }

    fn evaluate_batch(&mut self, positions: &[&G], out: &mut [Evaluation]) {
        let n = positions.len().min(out.len());
        self.decoded.resize_with(n, Decoded::default);
        self.keys.clear();
        self.misses.clear();
        self.batch.clear();
        let k = self.decoder.symmetries() as u64;
        for (i, g) in positions.iter().take(n).enumerate() {
            g.encode_input(&mut self.identity);
            let key = input_hash(&self.identity) ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            self.keys.push(key);
            if !self.shared.cache.get(key, &mut self.decoded[i]) {
                self.misses.push(i);
                self.decoder.push_input(&self.identity, &mut self.batch);
            }
        }
        if !self.misses.is_empty() {
            let rows = self.misses.len() * self.decoder.symmetries();
            match self.shared.eval.evaluate(&self.batch, rows, &mut self.out) {
                Ok(()) => {
                    for (j, &i) in self.misses.iter().enumerate() {
                        self.decoder.decode(&self.out, j, &mut self.decoded[i]);
                        self.shared.cache.put(self.keys[i], &self.decoded[i]);
                    }
                }
                Err(err) => {
                    self.shared
                        .errors
                        .fetch_add(self.misses.len() as u64, Ordering::Relaxed);
                    if let Ok(mut le) = self.shared.last_error.lock() {
                        *le = Some(err.to_string());
                    }
                    let info = self.decoder.info();
                    let flat = 1.0 / info.actions.max(1) as f32;
                    let mid = info.bins() as f32 / 2.0;
                    for &i in &self.misses {
                        let d = &mut self.decoded[i];
                        d.policy.clear();
                        d.policy.resize(info.actions, flat);
                        d.value = 0.0;
                        d.black = mid;
                        d.white = mid;
                    }
                }
            }
        }
        for i in 0..n {
            let d = std::mem::take(&mut self.decoded[i]);
            self.fill(&d, positions[i], &mut out[i]);
            self.decoded[i] = d;
        }
    }

    fn has_cost(&self) -> bool {
        self.shared.cost.is_some()
    }

    fn cost_model(&self) -> Option<CostModel> {
        self.shared.cost
    }

    fn value_window(&self) -> bool {
        self.shared.cost.is_none()
    }

    fn fork(&self) -> Option<Box<dyn Heuristic<G>>> {
        let info = self.decoder.info().clone();
        Some(Box::new(Self::with_shared(self.shared.clone(), &info)))
    }
}
