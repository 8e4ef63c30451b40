//! Unconditional life: the Benson variant the PCN paper's Killall-Go solver applies
//! (`../shared/pcn/README.md` §7.2), plus the classic notion it approximates.
//!
//! For colour C:
//! 1. Regions are maximal 4-connected sets of points not occupied by C (empty points and
//!    opponent stones). Regions larger than [`MAX_REGION`] points are ignored.
//! 2. A region is *healthy* if it has one point; or it has at most two points and touches
//!    exactly one C block; or every empty point in it is adjacent to every C block touching
//!    the region.
//! 3. Each C block counts the healthy regions it touches. Blocks with a count below two are
//!    removed repeatedly; a removed block makes every healthy region it touches unhealthy,
//!    and every block touching such a region loses one from its count.
//! 4. The remaining blocks are unconditionally alive.

use super::board::{cv, Board, EMPTY, WALL};
use crate::game::Color;

/// Regions with more points than this are ignored (never healthy).
pub const MAX_REGION: usize = 30;

struct Region {
    size: usize,
    empties: Vec<usize>,
    /// Indices of the C blocks touching the region.
    blocks: Vec<usize>,
    healthy: bool,
}

/// Representative cells of the blocks of `color` that are unconditionally alive.
pub fn alive_blocks(board: &Board, color: Color) -> Vec<usize> {
    let own = cv(color);
    let n = board.stride() * (board.height() + 2);
    // Block index per representative cell.
    let mut block_of = vec![usize::MAX; n];
    let mut reps: Vec<usize> = Vec::new();
    for y in 0..board.height() {
        for x in 0..board.width() {
            let c = board.cell(x, y);
            if board.cell_value(c) == own {
                let r = board.chain_id(c);
                if block_of[r] == usize::MAX {
                    block_of[r] = reps.len();
                    reps.push(r);
                }
            }
        }
    }
    if reps.is_empty() {
        return reps;
    }
    // Flood-fill the regions.
    let mut region_of = vec![usize::MAX; n];
    let mut regions: Vec<Region> = Vec::new();
    let mut stack = Vec::new();
    for y in 0..board.height() {
        for x in 0..board.width() {
            let c0 = board.cell(x, y);
            let v0 = board.cell_value(c0);
            if v0 == own || region_of[c0] != usize::MAX {
                continue;
            }
            let id = regions.len();
            let mut reg = Region {
                size: 0,
                empties: Vec::new(),
                blocks: Vec::new(),
                healthy: false,
            };
            region_of[c0] = id;
            stack.push(c0);
            while let Some(c) = stack.pop() {
                reg.size += 1;
                if board.cell_value(c) == EMPTY {
                    reg.empties.push(c);
                }
                for q in board.neighbours(c) {
                    let v = board.cell_value(q);
                    if v == WALL {
                        continue;
                    }
                    if v == own {
                        let b = block_of[board.chain_id(q)];
                        if !reg.blocks.contains(&b) {
                            reg.blocks.push(b);
                        }
                    } else if region_of[q] == usize::MAX {
                        region_of[q] = id;
                        stack.push(q);
                    }
                }
            }
            regions.push(reg);
        }
    }
    // Healthy regions.
    for reg in &mut regions {
        if reg.size > MAX_REGION {
            continue;
        }
        reg.healthy = reg.size == 1
            || (reg.size <= 2 && reg.blocks.len() == 1)
            || reg.empties.iter().all(|&e| {
                // Every block touching the region must touch this empty point.
                reg.blocks.iter().all(|&b| {
                    board
                        .neighbours(e)
                        .into_iter()
                        .any(|q| board.cell_value(q) == own && block_of[board.chain_id(q)] == b)
                })
            });
    }
    let mut count = vec![0usize; reps.len()];
    for reg in &regions {
        if reg.healthy {
            for &b in &reg.blocks {
                count[b] += 1;
            }
        }
    }
    let mut alive = vec![true; reps.len()];
    while let Some(b) = (0..reps.len()).find(|&b| alive[b] && count[b] < 2) {
        alive[b] = false;
        for reg in &mut regions {
            if reg.healthy && reg.blocks.contains(&b) {
                reg.healthy = false;
                for &o in &reg.blocks {
                    count[o] = count[o].saturating_sub(1);
                }
            }
        }
    }
    reps.into_iter()
        .enumerate()
        .filter(|&(i, _)| alive[i])
        .map(|(_, r)| r)
        .collect()
}

/// Whether any block of `color` is unconditionally alive (README §7.2 variant). Uses the
/// bitboard version on boards of at most 128 points.
pub fn any_alive(board: &Board, color: Color) -> bool {
    match alive_mask_small(board, color) {
        Some(mask) => mask != 0,
        None => !alive_blocks(board, color).is_empty(),
    }
}

/// Most blocks or regions a board of at most 128 points can hold (a checkerboard).
const MAX_PARTS: usize = 64;

/// Bitboard geometry of a small board (bit `y * width + x`).
struct Geo {
    w: usize,
    all: u128,
    /// All points except column 0 (targets of a shift towards larger x).
    not_first: u128,
    /// All points except the last column (targets of a shift towards smaller x).
    not_last: u128,
}

impl Geo {
    fn new(w: usize, h: usize) -> Geo {
        let n = w * h;
        let all = if n == 128 {
            u128::MAX
        } else {
            (1u128 << n) - 1
        };
        let mut first = 0u128;
        for y in 0..h {
            first |= 1u128 << (y * w);
        }
        let last = first << (w - 1);
        Geo {
            w,
            all,
            not_first: all & !first,
            not_last: all & !last,
        }
    }
    /// The set plus its orthogonal neighbours.
    #[inline(always)]
    fn dilate(&self, b: u128) -> u128 {
        (b | ((b << 1) & self.not_first)
            | ((b >> 1) & self.not_last)
            | (b << self.w)
            | (b >> self.w))
            & self.all
    }
    /// The 4-connected component of `within` containing `seed`.
    #[inline(always)]
    fn fill(&self, seed: u128, within: u128) -> u128 {
        let mut r = seed & within;
        loop {
            let n = self.dilate(r) & within;
            if n == r {
                return r;
            }
            r = n;
        }
    }
}

/// Union of the unconditionally alive blocks of `color` as a bitboard over action indices,
/// or `None` when the board has more than 128 points. Same algorithm as [`alive_blocks`].
pub fn alive_mask_small(board: &Board, color: Color) -> Option<u128> {
    let (w, h) = (board.width(), board.height());
    if w * h > 128 {
        return None;
    }
    let geo = Geo::new(w, h);
    let bits = board.bitboards();
    let own = bits[color.index()];
    if own == 0 {
        return Some(0);
    }
    let empty = geo.all & !(bits[0] | bits[1]);
    let free = geo.all & !own;
    // Regions first: an alive block needs two healthy regions, and only regions of at most
    // MAX_REGION points can be healthy, so with fewer than two such regions nothing lives
    // (the common case in a fight; it skips the block fills).
    // A region holding an empty point next to no `color` stone is never healthy (with both
    // sides at least 2, each point of a region of one or two points has a `color`
    // neighbour, and the third rule needs every empty point next to the blocks). One fill
    // seeded at all such points removes those regions at once, and converges in a few steps
    // where the region-by-region fill of the open area takes its whole diameter.
    let far = empty & !geo.dilate(own);
    let hopeless = if w >= 2 && h >= 2 && far != 0 {
        geo.fill(far, free)
    } else {
        0
    };
    let mut small = [0u128; MAX_PARTS];
    let mut ns = 0;
    let mut rest = free & !hopeless;
    while rest != 0 && ns < MAX_PARTS {
        let r = geo.fill(rest & rest.wrapping_neg(), free);
        rest &= !r;
        if r.count_ones() as usize <= MAX_REGION {
            small[ns] = r;
            ns += 1;
        }
    }
    if ns < 2 {
        return Some(0);
    }
    let mut blocks = [0u128; MAX_PARTS];
    let mut halo = [0u128; MAX_PARTS];
    let mut nb = 0;
    let mut rest = own;
    while rest != 0 && nb < MAX_PARTS {
        let b = geo.fill(rest & rest.wrapping_neg(), own);
        rest &= !b;
        blocks[nb] = b;
        halo[nb] = geo.dilate(b);
        nb += 1;
    }
    // Healthy regions as masks of the blocks they touch (bit i = block i).
    let mut healthy = [0u64; MAX_PARTS];
    let mut nh = 0;
    for &r in &small[..ns] {
        let size = r.count_ones() as usize;
        let mut touching = 0u64;
        let mut all_adjacent = true;
        let r_empty = r & empty;
        for (i, &hl) in halo[..nb].iter().enumerate() {
            if hl & r != 0 {
                touching |= 1 << i;
                if r_empty & !hl != 0 {
                    all_adjacent = false;
                }
            }
        }
        let ok = size == 1 || (size <= 2 && touching.count_ones() == 1) || all_adjacent;
        if ok && touching != 0 && nh < MAX_PARTS {
            healthy[nh] = touching;
            nh += 1;
        }
    }
    let mut count = [0u32; MAX_PARTS];
    for &t in &healthy[..nh] {
        let mut t = t;
        while t != 0 {
            count[t.trailing_zeros() as usize] += 1;
            t &= t - 1;
        }
    }
    let mut alive: u64 = if nb == 64 { u64::MAX } else { (1u64 << nb) - 1 };
    let mut live_regions: u64 = if nh == 64 { u64::MAX } else { (1u64 << nh) - 1 };
    loop {
        let mut dead = None;
        let mut a = alive;
        while a != 0 {
            let i = a.trailing_zeros() as usize;
            if count[i] < 2 {
                dead = Some(i);
                break;
            }
            a &= a - 1;
        }
        let Some(b) = dead else { break };
        alive &= !(1 << b);
        let mut lr = live_regions;
        while lr != 0 {
            let j = lr.trailing_zeros() as usize;
            lr &= lr - 1;
            if healthy[j] & (1 << b) != 0 {
                live_regions &= !(1 << j);
                let mut t = healthy[j];
                while t != 0 {
                    let k = t.trailing_zeros() as usize;
                    count[k] = count[k].saturating_sub(1);
                    t &= t - 1;
                }
            }
        }
    }
    let mut mask = 0u128;
    let mut a = alive;
    while a != 0 {
        mask |= blocks[a.trailing_zeros() as usize];
        a &= a - 1;
    }
    Some(mask)
}
