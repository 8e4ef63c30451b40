//! A small persistent thread pool for the CPU backend: one job per evaluation, run by the
//! caller and whichever workers wake up in time.
//!
//! Why not spawn per call: at batch 1 an evaluation takes a fraction of a millisecond and
//! thread start-up would be a visible part of it. Workers spin briefly after a job (the
//! next evaluation usually follows soon) and then park.
//!
//! Why "whichever workers": on an oversubscribed machine a worker may not get a core for
//! milliseconds. Jobs are therefore written so that the caller alone can finish them (work
//! is claimed dynamically, see `CpuBackend`), and a worker that arrives after the caller
//! closed the job skips it instead of being waited for.

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
    /// The generation whose job may still be entered, 0 once the caller closed it.
    open: AtomicUsize,
    /// Workers that entered (or are checking whether they may enter) a job.
    active: AtomicUsize,
    stop: AtomicBool,
    /// A job panicked in a worker.
    panicked: AtomicBool,
    /// The current job, lifetime erased. Written only by `run` while no worker can read it
    /// (the previous job is closed and `active` is 0), published by the `generation`
    /// increment.
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
            open: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
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

    /// Runs `f(0)` on the calling thread and `f(tid)` on every worker that starts before
    /// `f(0)` returns, then waits for those. `f` must be complete when `f(0)` alone ran
    /// (workers only speed it up). Returns false if some call panicked.
    pub fn run<'a>(&self, f: &'a (dyn Fn(usize) + Sync + 'a)) -> bool {
        if self.workers.is_empty() {
            return catch_unwind(AssertUnwindSafe(|| f(0))).is_ok();
        }
        let sh = &*self.shared;
        // SAFETY: the previous job is closed and `active` was 0 when the previous `run`
        // returned; a worker entering later sees `open` != its generation and never reads
        // `job`. So nobody reads `job` now. The lifetime is erased only until this function
        // returns, which is after every worker that entered the job has left it.
        unsafe {
            let ptr: *const Job =
                std::mem::transmute::<&'a (dyn Fn(usize) + Sync + 'a), &'static Job>(f);
            *sh.job.get() = Some(ptr);
        }
        let g = sh.generation.load(Ordering::Relaxed).wrapping_add(1).max(1);
        sh.open.store(g, Ordering::SeqCst);
        sh.generation.store(g, Ordering::SeqCst);
        for w in &self.workers {
            w.thread().unpark();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| f(0))).is_ok();
        // Close the job, then wait for the workers inside it. SeqCst on both sides: a
        // worker that saw the job open incremented `active` before, so we see it here.
        sh.open.store(0, Ordering::SeqCst);
        let mut spins = 0u32;
        while sh.active.load(Ordering::SeqCst) != 0 {
            spin(&mut spins);
        }
        mine && !sh.panicked.swap(false, Ordering::Relaxed)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
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
        if sh.stop.load(Ordering::SeqCst) {
            return;
        }
        sh.active.fetch_add(1, Ordering::SeqCst);
        if sh.open.load(Ordering::SeqCst) == seen {
            // SAFETY: the job of generation `seen` is open, so `run` has published its
            // pointer (before the generation store we observed) and will not return before
            // our `active` decrement below.
            let job = unsafe { *sh.job.get() };
            if let Some(f) = job {
                // SAFETY: see above.
                let ok = catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(id) })).is_ok();
                if !ok {
                    sh.panicked.store(true, Ordering::Relaxed);
                }
            }
        }
        sh.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Dynamic work sharing for one job: a sequence of stages, each with `total` items claimed
/// in chunks by whoever is there; a stage starts only once the previous one is complete.
/// Any subset of threads (the caller alone included) finishes the job.
pub(crate) struct Stages {
    next: Vec<AtomicUsize>,
    done: Vec<AtomicUsize>,
    totals: Vec<usize>,
}

impl Stages {
    /// Stages with these item counts.
    pub fn new(totals: Vec<usize>) -> Stages {
        Stages {
            next: totals.iter().map(|_| AtomicUsize::new(0)).collect(),
            done: totals.iter().map(|_| AtomicUsize::new(0)).collect(),
            totals,
        }
    }

    /// Runs every stage: waits for stage `s − 1` to complete, then calls
    /// `work(s, i0, i1)` for chunks `[i0, i1)` of at most `chunk(s)` items until none is
    /// left. Writes made by `work` in one stage are visible to all threads in later stages.
    pub fn run(&self, chunk: impl Fn(usize) -> usize, mut work: impl FnMut(usize, usize, usize)) {
        for s in 0..self.totals.len() {
            if s > 0 {
                self.wait(s - 1);
            }
            let (total, ch) = (self.totals[s], chunk(s).max(1));
            loop {
                let i0 = self.next[s].fetch_add(ch, Ordering::Relaxed);
                if i0 >= total {
                    break;
                }
                let i1 = (i0 + ch).min(total);
                work(s, i0, i1);
                self.done[s].fetch_add(i1 - i0, Ordering::Release);
            }
        }
        if let Some(last) = self.totals.len().checked_sub(1) {
            self.wait(last);
        }
    }

    fn wait(&self, s: usize) {
        let mut spins = 0u32;
        while self.done[s].load(Ordering::Acquire) < self.totals[s] {
            spin(&mut spins);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item of every stage is done exactly once, after the whole previous stage,
    /// whatever number of threads joins.
    #[test]
    fn stages_complete_in_order() {
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads);
            for round in 0..30usize {
                let totals = vec![5 + round % 7, 1, 13, 2 * round + 1];
                let cells: Vec<Vec<AtomicUsize>> = totals
                    .iter()
                    .map(|&t| (0..t).map(|_| AtomicUsize::new(0)).collect())
                    .collect();
                let stages = Stages::new(totals.clone());
                assert!(pool.run(&|_tid| {
                    stages.run(
                        |s| s + 1,
                        |s, i0, i1| {
                            if s > 0 {
                                // The whole previous stage is done.
                                assert!(cells[s - 1]
                                    .iter()
                                    .all(|c| c.load(Ordering::Relaxed) == 1));
                            }
                            for c in &cells[s][i0..i1] {
                                c.fetch_add(1, Ordering::Relaxed);
                            }
                        },
                    )
                }));
                for st in &cells {
                    assert!(st.iter().all(|c| c.load(Ordering::Relaxed) == 1));
                }
            }
        }
    }
}
