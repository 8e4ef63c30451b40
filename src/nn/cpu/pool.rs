//! A small persistent thread pool for the CPU backend: one job per evaluation, run by the
//! caller and the workers together, with a spinning barrier between layers.
//!
//! Why not spawn per call: at batch 1 an evaluation takes a fraction of a millisecond and
//! thread start-up would be a visible part of it. Workers spin briefly after a job (the
//! next evaluation usually follows soon) and then park.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle worker spins before parking.
const IDLE_SPIN: Duration = Duration::from_micros(200);

type Job = dyn Fn(usize) + Sync;

struct Shared {
    /// Incremented once per job (and once at shutdown).
    generation: AtomicUsize,
    /// Workers still running the current job.
    pending: AtomicUsize,
    stop: AtomicBool,
    /// A job panicked in a worker.
    panicked: AtomicBool,
    /// The current job, lifetime erased. Written only by `run` while no worker reads it
    /// (pending == 0), published by the `generation` increment (Release/Acquire).
    job: UnsafeCell<Option<*const Job>>,
}

// SAFETY: `job` is only written while every worker is idle (see `Pool::run`) and read
// after an Acquire of the generation that published it; the pointee is `Sync`.
unsafe impl Sync for Shared {}
// SAFETY: as above; the raw pointer is only dereferenced under that protocol.
unsafe impl Send for Shared {}

/// The pool: `threads − 1` workers plus the calling thread.
pub(crate) struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// A pool running jobs on `threads` threads in all (the caller included).
    pub fn new(threads: usize) -> Pool {
        let shared = Arc::new(Shared {
            generation: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            job: UnsafeCell::new(None),
        });
        let mut workers = Vec::new();
        for id in 1..threads.max(1) {
            let sh = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("pcn-nn-{id}"))
                .spawn(move || worker(sh, id));
            match spawned {
                Ok(h) => workers.push(h),
                // Fewer threads than asked still computes correctly (jobs split by the
                // count `threads()` reports).
                Err(_) => break,
            }
        }
        Pool { shared, workers }
    }

    /// Threads a job runs on.
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs `f(tid)` for every `tid < threads()` concurrently and waits for all. Returns
    /// false if a worker panicked.
    pub fn run<'a>(&self, f: &'a (dyn Fn(usize) + Sync + 'a)) -> bool {
        if self.workers.is_empty() {
            return catch_unwind(AssertUnwindSafe(|| f(0))).is_ok();
        }
        let sh = &*self.shared;
        // SAFETY: no worker is running a job (the previous `run` waited for pending == 0)
        // so nobody reads `job` now; the lifetime is erased only until this function
        // returns, and it returns after every worker finished with the pointer.
        unsafe {
            let ptr: *const Job =
                std::mem::transmute::<&'a (dyn Fn(usize) + Sync + 'a), &'static Job>(f);
            *sh.job.get() = Some(ptr);
        }
        sh.pending.store(self.workers.len(), Ordering::Relaxed);
        sh.generation.fetch_add(1, Ordering::Release);
        for w in &self.workers {
            w.thread().unpark();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| f(0))).is_ok();
        let mut spins = 0u32;
        while sh.pending.load(Ordering::Acquire) != 0 {
            spin(&mut spins);
        }
        mine && !sh.panicked.swap(false, Ordering::Relaxed)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.generation.fetch_add(1, Ordering::Release);
        for w in self.workers.drain(..) {
            w.thread().unpark();
            let _ = w.join();
        }
    }
}

/// Spin politely: pause instructions first, then yield the core (the machine may be
/// oversubscribed, and the thread we wait for may need this core).
#[inline]
fn spin(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

fn worker(sh: Arc<Shared>, id: usize) {
    let mut seen = 0usize;
    loop {
        // Wait for a new generation: spin a little, then park.
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            let g = sh.generation.load(Ordering::Acquire);
            if g != seen {
                seen = g;
                break;
            }
            if start.elapsed() > IDLE_SPIN {
                std::thread::park();
            } else {
                spin(&mut spins);
            }
        }
        if sh.stop.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: the Acquire load of the new generation makes the job pointer written
        // before its Release increment visible; `run` keeps the pointee alive until
        // `pending` reaches 0, which happens only after this call.
        let job = unsafe { *sh.job.get() };
        if let Some(f) = job {
            // SAFETY: see above.
            let ok = catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(id) })).is_ok();
            if !ok {
                sh.panicked.store(true, Ordering::Relaxed);
            }
        }
        sh.pending.fetch_sub(1, Ordering::Release);
    }
}

/// A reusable spinning barrier for the threads of one job.
pub(crate) struct Barrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl Barrier {
    /// A barrier for `n` threads.
    pub fn new(n: usize) -> Barrier {
        Barrier {
            n,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Waits until all `n` threads arrived. Writes before the call are visible to every
    /// thread after it.
    pub fn wait(&self) {
        if self.n <= 1 {
            return;
        }
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.generation.load(Ordering::Acquire) == g {
                spin(&mut spins);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_runs_and_barrier_orders() {
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads);
            let n = pool.threads();
            let cells: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            let bar = Barrier::new(n);
            let sums: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            for round in 1..50 {
                assert!(pool.run(&|tid| {
                    cells[tid].store(round * (tid + 1), Ordering::Relaxed);
                    bar.wait();
                    let s: usize = cells.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                    sums[tid].store(s, Ordering::Relaxed);
                }));
                let want: usize = (1..=n).map(|t| round * t).sum();
                for s in &sums {
                    assert_eq!(s.load(Ordering::Relaxed), want);
                }
            }
        }
    }
}
