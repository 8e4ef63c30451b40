//! The solvers' transposition table: a fixed memory budget, four-entry buckets, and a
//! replacement policy that keeps the entries that cost the most search effort (solved
//! entries count double), so small transient subtrees are overwritten first.
//!
//! Proof and disproof numbers are stored for the prover (the solvers mix the prover's
//! colour into the key, so one table can serve several provers).
//!
//! The table keys ([`key`], [`history_key`]) and the solved status the tree solvers keep
//! per node ([`UNKNOWN`], [`WIN`], [`LOSS`]) are declared here once for every solver.

use super::SolverGame;
use crate::game::{Color, Move};

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

/// One table entry (24 bytes).
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
    /// Unused padding kept for alignment (generation counter later).
    pub spare: u16,
}

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

/// The transposition table.
pub struct Tt {
    slots: Vec<Entry>,
    mask: usize,
    used: usize,
    /// A lazy table's budget (bytes), until [`Tt::ensure`] allocates it.
    pending: Option<usize>,
}

impl Tt {
    /// A table of at most `bytes` bytes (at least one bucket), rounded down to a power of two.
    pub fn new(bytes: usize) -> Tt {
        let per = std::mem::size_of::<Entry>() * WAYS;
        let mut buckets = 1usize;
        while buckets * 2 * per <= bytes.max(per) {
            buckets *= 2;
        }
        Tt {
            slots: vec![Entry::default(); buckets * WAYS],
            mask: buckets - 1,
            used: 0,
            pending: None,
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

    /// Allocates the budget of a [`Tt::lazy`] table if it has not been yet (a search calls it
    /// first; a table made by [`Tt::new`] is left as it is).
    pub fn ensure(&mut self) {
        if let Some(bytes) = self.pending.take() {
            *self = Tt::new(bytes);
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.slots.fill(Entry::default());
        self.used = 0;
    }

    /// Entries in use.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Capacity in entries.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Memory in bytes.
    pub fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Entry>()
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
    pub fn get(&self, key: u64) -> Option<&Entry> {
        let key = Self::fix(key);
        let b = self.bucket(key);
        self.slots[b..b + WAYS].iter().find(|e| e.key == key)
    }

    /// Stores numbers for `key`: overwrites its entry, else takes an empty slot, else
    /// replaces the bucket's entry of least value (effort, doubled when solved). `effort` is
    /// added to the entry's stored effort.
    pub fn put(&mut self, key: u64, pn: u64, dn: u64, effort: u64, best: Move) {
        let key = Self::fix(key);
        let b = self.bucket(key);
        let bucket = &mut self.slots[b..b + WAYS];
        let mut victim = 0;
        let mut victim_value = u64::MAX;
        for (i, e) in bucket.iter().enumerate() {
            if e.key == key {
                victim = i;
                break;
            }
            if e.key == 0 {
                if victim_value > 0 {
                    victim = i;
                    victim_value = 0;
                }
                continue;
            }
            let v = (e.effort as u64) << (e.pn == 0 || e.dn == 0) as u32;
            if v < victim_value {
                victim = i;
                victim_value = v;
            }
        }
        let e = &mut bucket[victim];
        let (old_effort, new) = if e.key == key {
            (e.effort as u64, false)
        } else {
            (0, e.key == 0)
        };
        if new {
            self.used += 1;
        }
        *e = Entry {
            key,
            pn: store(pn),
            dn: store(dn),
            effort: (old_effort + effort).min(u32::MAX as u64) as u32,
            best,
            spare: 0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_replace() {
        let mut t = Tt::new(4 * 24);
        assert_eq!(t.capacity(), 4);
        t.put(5, 3, 4, 10, 7);
        let e = *t.get(5).unwrap();
        assert_eq!((e.pn(), e.dn(), e.effort, e.best), (3, 4, 10, 7));
        t.put(5, 0, INF, 5, 8);
        let e = *t.get(5).unwrap();
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
}
