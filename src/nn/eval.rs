//! Evaluator wrappers: a batching queue, an evaluation cache, a seeded random evaluator for
//! tests, and the backend registry ([`super::open`]).
//!
//! Every wrapper implements [`Evaluator`] and returns exactly what its inner evaluator
//! returns for the same rows (batching and caching change speed, never results, up to the
//! backend's own batch-size rounding).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};

use super::{CostLabel, Evaluator, NetGame, NetInfo, NetKind, NetOutput, NnError};
use crate::util::Rng;

/// A 64-bit hash of one encoded input row (its float bits). The cache keys by it: the
/// encoding holds everything the network sees (Killall-Go: 8 plies of history, side to
/// move), so equal keys mean equal outputs up to 64-bit collisions.
pub fn input_hash(row: &[f32]) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ row.len() as u64;
    // Inputs are mostly 0/1 planes: fold runs of words cheaply, mix well at the end.
    for (i, &x) in row.iter().enumerate() {
        let b = x.to_bits() as u64;
        if b != 0 {
            h ^= (b ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .wrapping_mul(0xff51_afd7_ed55_8ccd);
            h = h.rotate_left(29).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        }
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

fn check_input(info: &NetInfo, input: &[f32], batch: usize) -> Result<(), NnError> {
    let want = batch
        .checked_mul(info.input_len())
        .ok_or_else(|| NnError::BadInput("batch too large".into()))?;
    if input.len() != want {
        return Err(NnError::BadInput(format!(
            "{} floats for a batch of {} (expected {})",
            input.len(),
            batch,
            want
        )));
    }
    Ok(())
}

/// Copies row `from` of `src` into row `to` of `dst` (both sized for `info`).
fn copy_row(info: &NetInfo, src: &NetOutput, from: usize, dst: &mut NetOutput, to: usize) {
    let a = info.actions;
    dst.policy[to * a..(to + 1) * a].copy_from_slice(&src.policy[from * a..(from + 1) * a]);
    match info.kind {
        NetKind::AlphaZero => dst.value[to] = src.value[from],
        NetKind::Pcn { bins } => {
            dst.black_v[to * bins..(to + 1) * bins]
                .copy_from_slice(&src.black_v[from * bins..(from + 1) * bins]);
            dst.white_v[to * bins..(to + 1) * bins]
                .copy_from_slice(&src.white_v[from * bins..(from + 1) * bins]);
        }
    }
}

/// Checks that a backend filled `out` for `batch` rows (so that copying cannot panic).
fn check_output(info: &NetInfo, out: &NetOutput, batch: usize) -> Result<(), NnError> {
    let ok = out.policy.len() >= batch * info.actions
        && match info.kind {
            NetKind::AlphaZero => out.value.len() >= batch,
            NetKind::Pcn { bins } => {
                out.black_v.len() >= batch * bins && out.white_v.len() >= batch * bins
            }
        };
    if ok {
        Ok(())
    } else {
        Err(NnError::Failed(
            "inner evaluator returned short outputs".into(),
        ))
    }
}

// ---------------------------------------------------------------------------------------
// Random evaluator

/// A deterministic pseudo-network for tests: each row's outputs are a function of the row's
/// contents and the seed only (so batching and caching wrappers must reproduce them).
pub struct RandomEvaluator {
    info: NetInfo,
    seed: u64,
}

impl RandomEvaluator {
    /// A random evaluator for a model shaped like `info`.
    pub fn new(info: NetInfo, seed: u64) -> Self {
        RandomEvaluator { info, seed }
    }

    /// The shape of a model for `game` and `kind` (9x9 Killall-Go: 18 planes, 82 actions;
    /// Gomoku: 15x15, 4 planes, 225 actions).
    pub fn info_for(game: NetGame, kind: NetKind) -> NetInfo {
        let (n, planes, actions) = match game {
            NetGame::Gomoku => (15, 4, 225),
            NetGame::KillallGo => (9, 18, 82),
        };
        NetInfo {
            name: "random".into(),
            game,
            board_size: n,
            planes,
            actions,
            kind,
            cost_label: CostLabel::Max,
        }
    }
}

impl Evaluator for RandomEvaluator {
    fn info(&self) -> &NetInfo {
        &self.info
    }

    fn evaluate(&self, input: &[f32], batch: usize, out: &mut NetOutput) -> Result<(), NnError> {
        check_input(&self.info, input, batch)?;
        out.resize(&self.info, batch);
        let len = self.info.input_len();
        let a = self.info.actions;
        for b in 0..batch {
            let mut rng = Rng::new(input_hash(&input[b * len..(b + 1) * len]) ^ self.seed);
            for x in &mut out.policy[b * a..(b + 1) * a] {
                *x = (rng.unit() as f32 - 0.5) * 6.0;
            }
            match self.info.kind {
                NetKind::AlphaZero => out.value[b] = ((rng.unit() as f32 - 0.5) * 3.0).tanh(),
                NetKind::Pcn { bins } => {
                    for x in &mut out.black_v[b * bins..(b + 1) * bins] {
                        *x = (rng.unit() as f32 - 0.5) * 8.0;
                    }
                    for x in &mut out.white_v[b * bins..(b + 1) * bins] {
                        *x = (rng.unit() as f32 - 0.5) * 8.0;
                    }
                }
            }
        }
        Ok(())
    }

    fn name(&self) -> String {
        "random".into()
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation cache

/// One cached row: the key and the raw outputs.
struct CacheEntry {
    key: u64,
    policy: Box<[f32]>,
    value: f32,
    black: Box<[f32]>,
    white: Box<[f32]>,
}

/// Number of independently locked shards (contention between search threads).
const SHARDS: usize = 64;

/// A bounded, direct-mapped cache of raw outputs keyed by [`input_hash`]. A row found in
/// the cache is not sent to the inner evaluator; the misses of one call go as one batch.
pub struct CachedEvaluator {
    inner: Arc<dyn Evaluator>,
    shards: Vec<Mutex<Vec<Option<CacheEntry>>>>,
    per_shard: usize,
    hits: std::sync::atomic::AtomicU64,
    misses: std::sync::atomic::AtomicU64,
}

impl CachedEvaluator {
    /// A cache of about `bytes` bytes (at least `SHARDS` entries) in front of `inner`.
    pub fn new(inner: Arc<dyn Evaluator>, bytes: usize) -> Self {
        let info = inner.info();
        let entry = 64 + 4 * (info.actions + 2 * info.bins());
        let entries = (bytes / entry).max(SHARDS);
        let per_shard = entries.div_ceil(SHARDS);
        let shards = (0..SHARDS)
            .map(|_| Mutex::new((0..per_shard).map(|_| None).collect()))
            .collect();
        CachedEvaluator {
            inner,
            shards,
            per_shard,
            hits: Default::default(),
            misses: Default::default(),
        }
    }

    /// (hits, misses) so far, in rows.
    pub fn stats(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.hits.load(Relaxed), self.misses.load(Relaxed))
    }

    fn slot(&self, key: u64) -> (usize, usize) {
        (
            (key as usize) % SHARDS,
            ((key >> 16) as usize) % self.per_shard,
        )
    }

    /// Fills row `row` of `out` from the cache; `false` on a miss.
    fn lookup(&self, key: u64, out: &mut NetOutput, row: usize) -> bool {
        let info = self.inner.info();
        let (s, i) = self.slot(key);
        let Ok(shard) = self.shards[s].lock() else {
            return false;
        };
        let Some(e) = shard[i].as_ref().filter(|e| e.key == key) else {
            return false;
        };
        let a = info.actions;
        out.policy[row * a..(row + 1) * a].copy_from_slice(&e.policy);
        match info.kind {
            NetKind::AlphaZero => out.value[row] = e.value,
            NetKind::Pcn { bins } => {
                out.black_v[row * bins..(row + 1) * bins].copy_from_slice(&e.black);
                out.white_v[row * bins..(row + 1) * bins].copy_from_slice(&e.white);
            }
        }
        true
    }

    fn store(&self, key: u64, src: &NetOutput, row: usize) {
        let info = self.inner.info();
        let a = info.actions;
        let bins = info.bins();
        let e = CacheEntry {
            key,
            policy: src.policy[row * a..(row + 1) * a].into(),
            value: src.value.get(row).copied().unwrap_or(0.0),
            black: src
                .black_v
                .get(row * bins..(row + 1) * bins)
                .unwrap_or(&[])
                .into(),
            white: src
                .white_v
                .get(row * bins..(row + 1) * bins)
                .unwrap_or(&[])
                .into(),
        };
        let (s, i) = self.slot(key);
        if let Ok(mut shard) = self.shards[s].lock() {
            shard[i] = Some(e);
        }
    }
}

impl Evaluator for CachedEvaluator {
    fn info(&self) -> &NetInfo {
        self.inner.info()
    }

    fn evaluate(&self, input: &[f32], batch: usize, out: &mut NetOutput) -> Result<(), NnError> {
        use std::sync::atomic::Ordering::Relaxed;
        let info = self.inner.info().clone();
        check_input(&info, input, batch)?;
        out.resize(&info, batch);
        let len = info.input_len();
        let mut miss_rows = Vec::new();
        let mut miss_keys = Vec::new();
        for b in 0..batch {
            let key = input_hash(&input[b * len..(b + 1) * len]);
            if !self.lookup(key, out, b) {
                miss_rows.push(b);
                miss_keys.push(key);
            }
        }
        self.hits
            .fetch_add((batch - miss_rows.len()) as u64, Relaxed);
        self.misses.fetch_add(miss_rows.len() as u64, Relaxed);
        if miss_rows.is_empty() {
            return Ok(());
        }
        let mut sub_in = Vec::with_capacity(miss_rows.len() * len);
        for &b in &miss_rows {
            sub_in.extend_from_slice(&input[b * len..(b + 1) * len]);
        }
        let mut sub_out = NetOutput::default();
        self.inner
            .evaluate(&sub_in, miss_rows.len(), &mut sub_out)?;
        check_output(&info, &sub_out, miss_rows.len())?;
        for (j, (&b, &key)) in miss_rows.iter().zip(&miss_keys).enumerate() {
            copy_row(&info, &sub_out, j, out, b);
            self.store(key, &sub_out, j);
        }
        Ok(())
    }

    fn name(&self) -> String {
        format!("cache({})", self.inner.name())
    }
}

// ---------------------------------------------------------------------------------------
// Batching evaluator

/// One caller's request: its rows and where to send the answer.
struct Request {
    input: Vec<f32>,
    batch: usize,
    reply: Sender<Result<NetOutput, NnError>>,
}

/// Statistics of a [`BatchingEvaluator`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatchStats {
    /// Inner evaluations run.
    pub batches: u64,
    /// Rows evaluated.
    pub rows: u64,
}

impl BatchStats {
    /// Mean rows per inner evaluation.
    pub fn mean_batch(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.rows as f64 / self.batches as f64
        }
    }
}

/// Collects the requests of several search threads into batches of at most `max_batch`
/// rows (waiting at most `max_wait` for a batch to fill) and runs them on evaluator
/// threads (one by default; [`BatchingEvaluator::with_workers`] runs several, each forming
/// and running its own batches, so that a backend with several lanes keeps that many
/// batches in flight). Dropping it stops the threads; a stopped evaluator answers
/// [`NnError::Failed`].
pub struct BatchingEvaluator {
    info: NetInfo,
    inner_name: String,
    tx: Mutex<Option<Sender<Request>>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    stats: Arc<Mutex<BatchStats>>,
}

impl BatchingEvaluator {
    /// Starts one evaluator thread.
    pub fn new(inner: Arc<dyn Evaluator>, max_batch: usize, max_wait: Duration) -> Self {
        BatchingEvaluator::with_workers(inner, max_batch, max_wait, 1)
    }

    /// Starts `workers` evaluator threads (at least one) sharing the request queue: while
    /// one runs its batch on the inner evaluator, the next collects the following batch.
    /// Useful when the inner evaluator overlaps calls ([`Evaluator::in_flight`]).
    pub fn with_workers(
        inner: Arc<dyn Evaluator>,
        max_batch: usize,
        max_wait: Duration,
        workers: usize,
    ) -> Self {
        let info = inner.info().clone();
        let inner_name = inner.name();
        let (tx, rx) = channel::unbounded::<Request>();
        let stats = Arc::new(Mutex::new(BatchStats::default()));
        let max_batch = max_batch.max(1);
        let mut handles = Vec::new();
        for i in 0..workers.max(1) {
            let (inner, rx, st) = (inner.clone(), rx.clone(), stats.clone());
            let name = if i == 0 {
                "pcn-nn-batch".to_string()
            } else {
                format!("pcn-nn-batch{i}")
            };
            if let Ok(h) = std::thread::Builder::new()
                .name(name)
                .spawn(move || batch_loop(inner, rx, max_batch, max_wait, st))
            {
                handles.push(h);
            }
        }
        BatchingEvaluator {
            info,
            inner_name,
            tx: Mutex::new((!handles.is_empty()).then_some(tx)),
            workers: Mutex::new(handles),
            stats,
        }
    }

    /// Batches run so far.
    pub fn stats(&self) -> BatchStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// Stops the evaluator threads (pending requests still get answers); later calls fail.
    pub fn stop(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let handles = self
            .workers
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default();
        for h in handles {
            let _ = h.join();
        }
    }
}

impl Drop for BatchingEvaluator {
    fn drop(&mut self) {
        self.stop();
    }
}

fn batch_loop(
    inner: Arc<dyn Evaluator>,
    rx: Receiver<Request>,
    max_batch: usize,
    max_wait: Duration,
    stats: Arc<Mutex<BatchStats>>,
) {
    let info = inner.info().clone();
    let len = info.input_len();
    let mut pending: Vec<Request> = Vec::new();
    let mut input: Vec<f32> = Vec::new();
    let mut out = NetOutput::default();
    // `carry`: a request that did not fit the previous batch.
    let mut carry: Option<Request> = None;
    loop {
        let first = match carry.take() {
            Some(r) => r,
            None => match rx.recv() {
                Ok(r) => r,
                Err(_) => return, // every sender gone: stop
            },
        };
        let mut rows = first.batch;
        pending.push(first);
        let deadline = Instant::now() + max_wait;
        while rows < max_batch {
            let now = Instant::now();
            let r = if now >= deadline {
                match rx.try_recv() {
                    Ok(r) => r,
                    Err(_) => break,
                }
            } else {
                match rx.recv_timeout(deadline - now) {
                    Ok(r) => r,
                    Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
                }
            };
            if rows + r.batch > max_batch {
                carry = Some(r);
                break;
            }
            rows += r.batch;
            pending.push(r);
        }
        input.clear();
        for r in &pending {
            input.extend_from_slice(&r.input);
        }
        let res = inner
            .evaluate(&input, rows, &mut out)
            .and_then(|_| check_output(&info, &out, rows));
        if let Ok(mut s) = stats.lock() {
            s.batches += 1;
            s.rows += rows as u64;
        }
        let mut row = 0;
        for r in pending.drain(..) {
            let answer = match &res {
                Ok(()) => {
                    let mut o = NetOutput::default();
                    o.resize(&info, r.batch);
                    for j in 0..r.batch {
                        copy_row(&info, &out, row + j, &mut o, j);
                    }
                    Ok(o)
                }
                Err(e) => Err(NnError::Failed(e.to_string())),
            };
            row += r.batch;
            debug_assert_eq!(r.input.len(), r.batch * len);
            // A caller that gave up is no error.
            let _ = r.reply.send(answer);
        }
    }
}

impl Evaluator for BatchingEvaluator {
    fn info(&self) -> &NetInfo {
        &self.info
    }

    fn evaluate(&self, input: &[f32], batch: usize, out: &mut NetOutput) -> Result<(), NnError> {
        check_input(&self.info, input, batch)?;
        if batch == 0 {
            out.resize(&self.info, 0);
            return Ok(());
        }
        let tx = self
            .tx
            .lock()
            .ok()
            .and_then(|t| t.clone())
            .ok_or_else(|| NnError::Failed("batching evaluator stopped".into()))?;
        let (rtx, rrx) = channel::bounded(1);
        tx.send(Request {
            input: input.to_vec(),
            batch,
            reply: rtx,
        })
        .map_err(|_| NnError::Failed("batching evaluator stopped".into()))?;
        drop(tx);
        match rrx.recv() {
            Ok(Ok(o)) => {
                *out = o;
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(NnError::Failed("batching evaluator stopped".into())),
        }
    }

    fn name(&self) -> String {
        format!("batch({})", self.inner_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(info: &NetInfo, n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        (0..n * info.input_len())
            .map(|_| (rng.below(2)) as f32)
            .collect()
    }

    #[test]
    fn random_is_row_deterministic() {
        let info = RandomEvaluator::info_for(NetGame::KillallGo, NetKind::Pcn { bins: 500 });
        let e = RandomEvaluator::new(info.clone(), 7);
        let x = rows(&info, 3, 1);
        let (mut a, mut b) = (NetOutput::default(), NetOutput::default());
        e.evaluate(&x, 3, &mut a).unwrap();
        let len = info.input_len();
        e.evaluate(&x[len..2 * len], 1, &mut b).unwrap();
        assert_eq!(&a.policy[82..164], &b.policy[..]);
        assert_eq!(&a.white_v[500..1000], &b.white_v[..]);
        assert!(e.evaluate(&x[..len - 1], 1, &mut b).is_err());
    }

    /// Two workers on 16 concurrent callers: every caller gets exactly its own rows'
    /// outputs, and rows are counted once.
    #[test]
    fn several_workers_answer_every_caller_exactly() {
        let info = RandomEvaluator::info_for(NetGame::Gomoku, NetKind::AlphaZero);
        let inner: Arc<dyn Evaluator> = Arc::new(RandomEvaluator::new(info.clone(), 3));
        let b = Arc::new(BatchingEvaluator::with_workers(
            inner.clone(),
            8,
            Duration::from_millis(2),
            2,
        ));
        let hs: Vec<_> = (0..16u64)
            .map(|t| {
                let (b, inner, info) = (b.clone(), inner.clone(), info.clone());
                std::thread::spawn(move || {
                    for i in 0..20 {
                        let n = 1 + (t as usize + i) % 3;
                        let x = rows(&info, n, t * 100 + i as u64);
                        let (mut got, mut want) = (NetOutput::default(), NetOutput::default());
                        b.evaluate(&x, n, &mut got).unwrap();
                        inner.evaluate(&x, n, &mut want).unwrap();
                        assert_eq!(got, want);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let st = b.stats();
        let want_rows: u64 = (0..16u64)
            .map(|t| (0..20).map(|i| 1 + (t + i) % 3).sum::<u64>())
            .sum();
        assert_eq!(st.rows, want_rows);
        assert!(st.batches < want_rows);
        b.stop();
        let mut o = NetOutput::default();
        assert!(b.evaluate(&rows(&info, 1, 0), 1, &mut o).is_err());
    }
}
