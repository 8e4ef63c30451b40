//! The solvers' transposition table: a fixed memory budget, four-entry buckets, and a
//! replacement policy that keeps the entries that cost the most search effort (solved
//! entries count double), so small transient subtrees are overwritten first.
//!
//! Proof and disproof numbers are stored for the prover (the solvers mix the prover's
//! colour into the key, so one table can serve several provers).
//!
//! The table keys ([`key`], [`history_key`]) and the solved status the tree solvers keep
//! per node ([`UNKNOWN`], [`WIN`], [`LOSS`]) are declared here once for every solver.

use std::sync::atomic::{AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::SolverGame;
use crate::game::{Color, Move};
use crate::util::pages::{ZeroValid, ZeroedTable};

/// Solved status relative to the prover: not solved.
pub(crate) const UNKNOWN: i8 = 0;
/// Solved: the prover wins.
pub(crate) const WIN: i8 = 1;
/// Solved: the prover cannot win.
pub(crate) const LOSS: i8 = -1;

/// Mixed into keys when White is the prover (one table serves both provers).
const WHITE_PROVER: u64 = 0x9d3f_52a1_c6e8_0b47;

/// A 64-bit mixer (splitmix64 finaliser) for history hashes.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The prover's colour mixed into a position key.
#[inline]
fn for_prover(k: u64, prover: Color) -> u64 {
    if prover == Color::White {
        k ^ WHITE_PROVER
    } else {
        k
    }
}

/// The table key of `g` for `prover`: the game's solver key, which includes what decides
/// legality beyond the stones (ko, illegal points).
#[inline]
pub(crate) fn key<G: SolverGame>(g: &G, prover: Color) -> u64 {
    for_prover(g.solver_key(), prover)
}

/// The table key of `g` for `prover` in exact history mode, where `hist` is the history hash
/// of `g`: stones, side to move, the positions seen and the last move determine legality,
/// so the (costly) illegal-point part of the solver key is not needed.
#[inline]
pub(crate) fn history_key<G: SolverGame>(g: &G, prover: Color, hist: u64) -> u64 {
    let last = g.last_move().map_or(0, |m| m as u64 + 1);
    for_prover(
        g.hash() ^ mix(hist ^ last.wrapping_mul(0xa076_1d64_78bd_642f)),
        prover,
    )
}

/// Infinity for proof and disproof numbers (the solvers compute in `u64` below this).
pub const INF: u64 = 1 << 40;

/// Stored numbers saturate here; [`INF`] is stored as `u32::MAX`.
const STORE_MAX: u64 = u32::MAX as u64 - 1;

/// No move.
pub const NO_MOVE: Move = Move::MAX;

/// One table entry as the solvers see it (stored in three 64-bit words, 24 bytes).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// Full key (0 = empty slot; a real key of 0 is stored as 1).
    pub key: u64,
    pn: u32,
    dn: u32,
    /// Search effort spent below this node (nodes, saturating).
    pub effort: u32,
    /// Best move found (the proving move when proven), or [`NO_MOVE`].
    pub best: Move,
    /// Unused (generation counter later).
    pub spare: u16,
}

// SAFETY: integer fields only (`Move` is a `u16`), no padding; all-zero is the empty entry
// (`Default`).
unsafe impl ZeroValid for Entry {}

impl Entry {
    /// Proof number (for the prover), `INF` when disproven.
    #[inline]
    pub fn pn(&self) -> u64 {
        unstore(self.pn)
    }
    /// Disproof number, `INF` when proven.
    #[inline]
    pub fn dn(&self) -> u64 {
        unstore(self.dn)
    }
    /// Proven for the prover.
    #[inline]
    pub fn proven(&self) -> bool {
        self.pn == 0
    }
    /// Disproven for the prover.
    #[inline]
    pub fn disproven(&self) -> bool {
        self.dn == 0
    }

    #[inline]
    fn numbers_word(&self) -> u64 {
        ((self.pn as u64) << 32) | self.dn as u64
    }

    #[inline]
    fn rest_word(&self) -> u64 {
        ((self.effort as u64) << 32) | ((self.best as u64) << 16) | self.spare as u64
    }
}

#[inline]
fn store(v: u64) -> u32 {
    if v >= INF {
        u32::MAX
    } else {
        v.min(STORE_MAX) as u32
    }
}

#[inline]
fn unstore(v: u32) -> u64 {
    if v == u32::MAX {
        INF
    } else {
        v as u64
    }
}

const WAYS: usize = 4;
/// Words per entry: the key mixed with the other two, the numbers, effort/move/spare.
const WORDS: usize = 3;

/// The slots of a table, which several solvers may share ([`TableGroup`]).
///
/// Each entry is three words written without a lock; the first holds the key exclusive-ored
/// with the other two, so an entry torn by two threads writing it at once reads back with a
/// key that matches nothing (a miss), never as another position's numbers. One thread alone
/// always reads back what it wrote, so a solver that does not share its table behaves, node
/// for node, as with a plain array.
struct Slots {
    words: ZeroedTable<AtomicU64>,
    /// Entries in use (counted when an empty slot is taken).
    used: AtomicUsize,
    /// The budget in bytes these slots were made for.
    budget: usize,
}

/// Buckets of a table of at most `bytes` bytes (at least one), a power of two.
fn buckets_for(bytes: usize) -> usize {
    let per = std::mem::size_of::<Entry>() * WAYS;
    let mut buckets = 1usize;
    while buckets * 2 * per <= bytes.max(per) {
        buckets *= 2;
    }
    buckets
}

impl Slots {
    fn new(bytes: usize) -> Slots {
        let buckets = buckets_for(bytes);
        Slots {
            words: ZeroedTable::new(buckets * WAYS * WORDS),
            used: AtomicUsize::new(0),
            budget: bytes,
        }
    }

    fn entries(&self) -> usize {
        self.words.len() / WORDS
    }

    #[inline]
    fn read(&self, i: usize) -> Entry {
        let w = &self.words[i * WORDS..i * WORDS + WORDS];
        let (a, n, r) = (
            w[0].load(Ordering::Relaxed),
            w[1].load(Ordering::Relaxed),
            w[2].load(Ordering::Relaxed),
        );
        Entry {
            key: a ^ n ^ r,
            pn: (n >> 32) as u32,
            dn: n as u32,
            effort: (r >> 32) as u32,
            best: (r >> 16) as Move,
            spare: r as u16,
        }
    }

    #[inline]
    fn write(&self, i: usize, e: &Entry) {
        let w = &self.words[i * WORDS..i * WORDS + WORDS];
        let (n, r) = (e.numbers_word(), e.rest_word());
        w[1].store(n, Ordering::Relaxed);
        w[2].store(r, Ordering::Relaxed);
        w[0].store(e.key ^ n ^ r, Ordering::Relaxed);
    }

    fn clear(&self) {
        // An unused table is all zero already; leaving it alone keeps its pages unmapped.
        if self.used.load(Ordering::Relaxed) == 0 {
            return;
        }
        for w in self.words.iter() {
            w.store(0, Ordering::Relaxed);
        }
        self.used.store(0, Ordering::Relaxed);
    }
}

/// Plies below the root over which the members of a group see each other's paths.
pub(crate) const STEER_PLIES: usize = 16;

/// Members of a group whose paths are published (the job-level manager's most workers);
/// members beyond it search without being seen.
const PATH_MEMBERS: usize = 1024;

/// Where each member of a [`TableGroup`] is searching near the root: the moves from the
/// problem's root to the member's current node, for its first [`STEER_PLIES`] plies. A
/// member whose search is rooted there steers away from the children the others are in
/// (virtual proof numbers, as parallel DFPN does), so that members searching one problem
/// from its root divide the work instead of repeating it. Written and read without locks:
/// a stale or mixed read only misplaces a heuristic, never a result.
pub(crate) struct Paths {
    /// Per member: the path's length, then its moves.
    members: Box<[[AtomicU16; STEER_PLIES + 1]]>,
    /// One more than the largest member that published a path.
    used: AtomicUsize,
}

impl Paths {
    fn new() -> Paths {
        Paths {
            members: (0..PATH_MEMBERS)
                .map(|_| std::array::from_fn(|_| AtomicU16::new(0)))
                .collect(),
            used: AtomicUsize::new(0),
        }
    }

    /// Member `m` enters its child `mv` at ply `depth` (its path becomes `depth + 1` long).
    #[inline]
    pub(crate) fn enter(&self, m: usize, depth: usize, mv: Move) {
        let (Some(p), true) = (self.members.get(m), depth < STEER_PLIES) else {
            return;
        };
        if self.used.load(Ordering::Relaxed) <= m {
            self.used.fetch_max(m + 1, Ordering::Relaxed);
        }
        p[1 + depth].store(mv, Ordering::Relaxed);
        p[0].store(depth as u16 + 1, Ordering::Release);
    }

    /// Member `m` is back at ply `depth` (its path is `depth` long).
    #[inline]
    pub(crate) fn leave(&self, m: usize, depth: usize) {
        if let (Some(p), true) = (self.members.get(m), depth <= STEER_PLIES) {
            p[0].store(depth as u16, Ordering::Release);
        }
    }

    /// Pushes to `out` the children that the other members are in at the node that
    /// member `m` reached by `path` from the root (one entry per member).
    pub(crate) fn others_at(&self, m: usize, path: &[Move], out: &mut Vec<Move>) {
        out.clear();
        let d = path.len();
        if d >= STEER_PLIES {
            return;
        }
        let used = self.used.load(Ordering::Relaxed).min(self.members.len());
        for (o, p) in self.members[..used].iter().enumerate() {
            if o == m || (p[0].load(Ordering::Acquire) as usize) <= d {
                continue;
            }
            if path
                .iter()
                .enumerate()
                .all(|(i, &mv)| p[1 + i].load(Ordering::Relaxed) == mv)
            {
                out.push(p[1 + d].load(Ordering::Relaxed));
            }
        }
    }
}

/// A transposition table that several solvers in one process share: the job-level workers
/// (threads) each hold a [`Tt`] made with the same group, so a position one of them has
/// proven, or searched, is known to all. Its memory is one budget for the whole group.
/// Sharing is sound because every key includes the prover and, where the game's results
/// depend on it, the history (a result is never read for a position reached another way).
/// The group also carries where its members search ([`Paths`]).
#[derive(Clone)]
pub struct TableGroup(Arc<Mutex<Option<Arc<Slots>>>>, Arc<Paths>);

impl Default for TableGroup {
    fn default() -> Self {
        TableGroup(Arc::default(), Arc::new(Paths::new()))
    }
}

impl TableGroup {
    /// A new group with no table yet (the first member to search allocates it).
    pub fn new() -> TableGroup {
        TableGroup::default()
    }

    /// Where the group's members search.
    pub(crate) fn paths(&self) -> &Paths {
        &self.1
    }

    /// The group's slots: for a new budget `bytes`, the current ones if they were made for
    /// it, else new ones that replace them (the other members move over at their next
    /// search); with no new budget, the current ones, or new ones of `fallback` bytes if the
    /// group has none yet.
    fn slots(&self, bytes: Option<usize>, fallback: usize) -> Arc<Slots> {
        let mut cur = match self.0.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        match (cur.as_ref(), bytes) {
            (Some(s), None) => s.clone(),
            (Some(s), Some(b)) if s.budget == b => s.clone(),
            _ => {
                // Let go of the old table before making the new one (memory budget).
                *cur = None;
                let s = Arc::new(Slots::new(bytes.unwrap_or(fallback)));
                *cur = Some(s.clone());
                s
            }
        }
    }
}

impl std::fmt::Debug for TableGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TableGroup({:p})", Arc::as_ptr(&self.0))
    }
}

impl PartialEq for TableGroup {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The transposition table: entries of its own (a plain array), or a [`TableGroup`]'s shared
/// slots. The two are separate paths so that a solver alone pays nothing for sharing.
pub struct Tt {
    /// The entries of a table of its own (empty when shared).
    own: ZeroedTable<Entry>,
    /// Entries in use in `own`.
    own_used: usize,
    /// The group's slots (a placeholder when not shared).
    slots: Arc<Slots>,
    mask: usize,
    /// A lazy table's budget (bytes), until [`Tt::ensure`] allocates it.
    pending: Option<usize>,
    /// The group whose table this one is, if shared.
    group: Option<TableGroup>,
}

impl Tt {
    /// A table of at most `bytes` bytes (at least one bucket), rounded down to a power of two.
    pub fn new(bytes: usize) -> Tt {
        let buckets = buckets_for(bytes);
        Tt {
            own: ZeroedTable::new(buckets * WAYS),
            own_used: 0,
            slots: Arc::new(Slots::new(0)),
            mask: buckets - 1,
            pending: None,
            group: None,
        }
    }

    fn from_slots(slots: Arc<Slots>, group: Option<TableGroup>) -> Tt {
        Tt {
            own: ZeroedTable::new(0),
            own_used: 0,
            mask: slots.entries() / WAYS - 1,
            slots,
            pending: None,
            group,
        }
    }

    /// A one-bucket table that [`Tt::ensure`] grows to `bytes`: solvers are built at start-up
    /// and reconfigured before their first search (Gomocup's `INFO max_memory` comes after the
    /// brain starts), so a table allocated at once would hold the default budget's memory
    /// before the real budget is known.
    pub fn lazy(bytes: usize) -> Tt {
        Tt {
            pending: Some(bytes),
            ..Tt::new(0)
        }
    }

    /// A lazy table (see [`Tt::lazy`]) that is `group`'s shared table when given: `bytes` is
    /// then the whole group's budget.
    pub fn lazy_in(bytes: usize, group: Option<TableGroup>) -> Tt {
        Tt {
            group,
            ..Tt::lazy(bytes)
        }
    }

    /// Allocates the budget of a [`Tt::lazy`] table if it has not been yet, and moves a
    /// shared table over to its group's current slots (a search calls it first; a table made
    /// by [`Tt::new`] is left as it is).
    pub fn ensure(&mut self) {
        let budget = self.pending.take();
        if let Some(group) = self.group.take() {
            let s = group.slots(budget, self.slots.budget);
            if !Arc::ptr_eq(&s, &self.slots) || !self.own.is_empty() {
                *self = Tt::from_slots(s, Some(group));
            } else {
                self.group = Some(group);
            }
        } else if let Some(bytes) = budget {
            *self = Tt::new(bytes);
        }
    }

    /// Forgets everything (for every member of a group).
    pub fn clear(&mut self) {
        if self.group.is_some() {
            self.slots.clear();
        } else {
            // Every store into an empty slot counts in `own_used`, so an unused table is all
            // zero already. A table used sparsely (one easy problem of a set) is made anew, so
            // that only the pages the next search touches get mapped; writing zeros over it
            // would map every page of the budget.
            if self.own_used > 0 && self.own_used < self.own.len() / 8 {
                let n = self.own.len();
                self.own = ZeroedTable::new(0);
                self.own = ZeroedTable::new(n);
            } else if self.own_used > 0 {
                self.own.zero();
            }
            self.own_used = 0;
        }
    }

    /// Entries in use.
    pub fn used(&self) -> usize {
        if self.group.is_some() {
            self.slots.used.load(Ordering::Relaxed)
        } else {
            self.own_used
        }
    }

    /// Capacity in entries.
    pub fn capacity(&self) -> usize {
        if self.group.is_some() {
            self.slots.entries()
        } else {
            self.own.len()
        }
    }

    /// Memory in bytes.
    pub fn bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<Entry>()
    }

    /// Whether this table is shared with other solvers ([`TableGroup`]).
    pub fn shared(&self) -> bool {
        self.group.is_some()
    }

    #[inline]
    fn fix(key: u64) -> u64 {
        if key == 0 {
            1
        } else {
            key
        }
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        // High bits pick the bucket; Zobrist keys are uniform.
        (((key >> 20) ^ key) as usize & self.mask) * WAYS
    }

    /// The entry for `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<Entry> {
        let key = Self::fix(key);
        let b = self.bucket(key);
        if self.group.is_none() {
            return self.own[b..b + WAYS].iter().find(|e| e.key == key).copied();
        }
        (b..b + WAYS)
            .map(|i| self.slots.read(i))
            .find(|e| e.key == key)
    }

    /// Stores numbers for `key`: overwrites its entry, else takes an empty slot, else
    /// replaces the bucket's entry of least value (effort, doubled when solved). `effort` is
    /// added to the entry's stored effort.
    pub fn put(&mut self, key: u64, pn: u64, dn: u64, effort: u64, best: Move) {
        let key = Self::fix(key);
        let b = self.bucket(key);
        let (victim, old) = if self.group.is_none() {
            choose(key, self.own[b..b + WAYS].iter().copied())
        } else {
            choose(key, (b..b + WAYS).map(|i| self.slots.read(i)))
        };
        let old_effort = if old.key == key { old.effort as u64 } else { 0 };
        let e = Entry {
            key,
            pn: store(pn),
            dn: store(dn),
            effort: (old_effort + effort).min(u32::MAX as u64) as u32,
            best,
            spare: 0,
        };
        if self.group.is_none() {
            self.own_used += (old.key == 0) as usize;
            self.own[b + victim] = e;
        } else {
            if old.key == 0 {
                self.slots.used.fetch_add(1, Ordering::Relaxed);
            }
            self.slots.write(b + victim, &e);
        }
    }
}

/// The way of a bucket that `key` goes to, and what it holds: its own entry, else the first
/// empty slot, else the entry of least value (effort, doubled when solved).
#[inline]
fn choose(key: u64, bucket: impl Iterator<Item = Entry>) -> (usize, Entry) {
    let mut victim = 0;
    let mut victim_value = u64::MAX;
    let mut old = Entry::default();
    for (i, e) in bucket.enumerate() {
        if e.key == key {
            return (i, e);
        }
        if e.key == 0 {
            if victim_value > 0 {
                victim = i;
                victim_value = 0;
                old = e;
            }
            continue;
        }
        let v = (e.effort as u64) << (e.pn == 0 || e.dn == 0) as u32;
        if v < victim_value {
            victim = i;
            victim_value = v;
            old = e;
        }
    }
    (victim, old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_replace() {
        let mut t = Tt::new(4 * 24);
        assert_eq!(t.capacity(), 4);
        t.put(5, 3, 4, 10, 7);
        let e = t.get(5).unwrap();
        assert_eq!((e.pn(), e.dn(), e.effort, e.best), (3, 4, 10, 7));
        t.put(5, 0, INF, 5, 8);
        let e = t.get(5).unwrap();
        assert!(e.proven() && e.dn() == INF && e.effort == 15);
        for k in 6..9 {
            t.put(k, 1, 1, k, NO_MOVE);
        }
        assert_eq!(t.used(), 4);
        // Full bucket: the least effort (key 6) goes.
        t.put(100, 1, 1, 50, NO_MOVE);
        assert!(t.get(6).is_none());
        assert!(t.get(5).is_some() && t.get(100).is_some());
        assert_eq!(t.used(), 4);
    }

    #[test]
    fn a_group_shares_one_table() {
        let g = TableGroup::new();
        let mut a = Tt::lazy_in(1 << 16, Some(g.clone()));
        let mut b = Tt::lazy_in(1 << 16, Some(g.clone()));
        a.ensure();
        b.ensure();
        assert!(a.shared() && b.shared());
        a.put(42, 0, INF, 3, 9);
        let e = b.get(42).expect("b sees a's entry");
        assert!(e.proven() && e.best == 9);
        assert_eq!(b.used(), 1);
        // A new budget: the member that asks first gets new slots, the other moves over at
        // its next search.
        let mut c = Tt::lazy_in(1 << 17, Some(g.clone()));
        c.ensure();
        assert!(c.get(42).is_none());
        assert_eq!((a.capacity(), c.capacity()), (2048, 4096));
        b.ensure();
        assert_eq!(b.capacity(), 4096);
        c.put(7, 1, 2, 1, NO_MOVE);
        assert!(b.get(7).is_some());
        // A table outside the group stays apart.
        let mut own = Tt::lazy(1 << 16);
        own.ensure();
        assert!(own.get(7).is_none() && !own.shared());
    }

    #[test]
    fn members_see_each_others_paths() {
        let g = TableGroup::new();
        let p = g.paths();
        // Member 0 at [3, 7, 9], member 2 at [3, 8], member 1 looks.
        for (d, mv) in [3, 7, 9].into_iter().enumerate() {
            p.enter(0, d, mv);
        }
        p.enter(2, 0, 3);
        p.enter(2, 1, 8);
        let mut out = Vec::new();
        p.others_at(1, &[], &mut out);
        assert_eq!(out, vec![3, 3]);
        p.others_at(1, &[3], &mut out);
        assert_eq!(out, vec![7, 8]);
        p.others_at(1, &[3, 7], &mut out);
        assert_eq!(out, vec![9]);
        p.others_at(1, &[3, 7, 9], &mut out);
        assert!(out.is_empty(), "member 0 is at that node, not below it");
        p.others_at(0, &[3], &mut out);
        assert_eq!(out, vec![8], "a member does not see itself");
        p.leave(0, 1);
        p.others_at(1, &[3], &mut out);
        assert_eq!(out, vec![8], "member 0 went back to ply 1");
        p.leave(2, 0);
        p.leave(0, 0);
        p.others_at(1, &[], &mut out);
        assert!(out.is_empty());
        // Deeper than the published plies, and members past the room: nothing, no panic.
        p.enter(0, STEER_PLIES, 1);
        p.enter(PATH_MEMBERS + 3, 0, 1);
        p.others_at(1, &[0; STEER_PLIES], &mut out);
        assert!(out.is_empty());
        // Clones share the paths.
        let h = g.clone();
        h.paths().enter(5, 0, 42);
        g.paths().others_at(1, &[], &mut out);
        assert_eq!(out, vec![42]);
    }

    /// Two threads writing the same buckets at once: whatever a reader finds for a key holds
    /// that key's numbers (a torn entry is a miss, never another position's numbers).
    #[test]
    fn concurrent_writers_never_mix_entries() {
        let g = TableGroup::new();
        let mut t0 = Tt::lazy_in(4 * 24 * 4, Some(g.clone()));
        t0.ensure();
        let handles: Vec<_> = (0..2u64)
            .map(|w| {
                let g = g.clone();
                std::thread::spawn(move || {
                    let mut t = Tt::lazy_in(4 * 24 * 4, Some(g));
                    t.ensure();
                    let mut seen = 0u64;
                    for i in 0..200_000u64 {
                        let key = 1 + (i * 7 + w * 3) % 64;
                        // Numbers derived from the key: a mixed entry would not match.
                        t.put(key, key * 3, key * 5, 1, key as Move);
                        if let Some(e) = t.get(1 + (i * 13) % 64) {
                            assert_eq!(
                                (e.pn(), e.dn(), e.best as u64),
                                (e.key * 3, e.key * 5, e.key)
                            );
                            seen += 1;
                        }
                    }
                    seen
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().expect("writer thread") > 0);
        }
    }
}
