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

/// Whether any block of `color` is unconditionally alive (README §7.2 variant).
pub fn any_alive(board: &Board, color: Color) -> bool {
    !alive_blocks(board, color).is_empty()
}
