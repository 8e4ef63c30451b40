//! Training labels of PCN self-play (`../shared/pcn/README.md` §5, the paper's §3.2).
//!
//! For the position after `t` plies of a game of `N` plies won by `w`, the proof-cost
//! target of `w` is `S = Σ log10(b_i)` over the plies `i = N-1, N-3, ...` with `i ≥ t+1`
//! (plies numbered from 1): the plies of the player who did not make the final move, i.e.
//! the winner's AND nodes, so `10^S` approximates a proof-tree size. `b_i` is the branching
//! factor of the position in which ply `i` was chosen: the whole action space (`b_max`) or
//! the legal moves the solver considers (`b_heur`). The other colour's target is the top
//! bin ("this colour does not win"); a game without a winner gives the top bin to both.

use crate::game::Color;

/// The two proof-cost targets of one position, in log10 units, clamped to `[0, bins-1]`;
/// `bins - 1` means "this colour does not win".
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CostPair {
    /// Cost of proving "Black wins".
    pub black: f32,
    /// Cost of proving "White wins".
    pub white: f32,
}

impl CostPair {
    /// The target of `c`'s head.
    pub fn of(&self, c: Color) -> f32 {
        match c {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }
}

/// Proof-cost targets for every position of a finished game.
///
/// `branching[k]` is the branching factor of the position after `k` plies (the one in which
/// ply `k + 1` was chosen), so `branching.len()` is the game's length `N`; `winner` is the
/// colour that won (`None`: no winner). Returns `N` pairs, entry `t` for the position after
/// `t` plies. A branching factor below 1 counts as 1 (log10 of it as 0).
pub fn proof_costs(branching: &[u32], winner: Option<Color>, bins: usize) -> Vec<CostPair> {
    let n = branching.len();
    let top = bins.saturating_sub(1) as f32;
    let mut out = vec![
        CostPair {
            black: top,
            white: top,
        };
        n
    ];
    let Some(w) = winner else {
        return out;
    };
    // suffix[t] = Σ log10(b_i) over loser plies i ≥ t+1, built from the end. Ply i (1-based)
    // is a loser ply when N - i is odd.
    let mut s = 0.0f64;
    for t in (0..n).rev() {
        let ply = t + 1;
        if (n - ply) % 2 == 1 {
            s += f64::from(branching[t].max(1)).log10();
        }
        let v = (s as f32).clamp(0.0, top);
        match w {
            Color::Black => out[t].black = v,
            Color::White => out[t].white = v,
        }
    }
    out
}

/// The two-hot categorical form of a scalar target over `bins` categories: weight
/// `1 - frac` on `floor(v)` and `frac` on `ceil(v)` (one-hot when `v` is an integer);
/// `v` is clamped to `[0, bins-1]` first. Returns (index, weight) pairs with positive weight.
pub fn two_hot(v: f32, bins: usize) -> Vec<(usize, f32)> {
    if bins == 0 {
        return Vec::new();
    }
    let top = (bins - 1) as f32;
    let v = if v.is_finite() {
        v.clamp(0.0, top)
    } else {
        top
    };
    let lo = v.floor();
    let frac = v - lo;
    let lo_i = lo as usize;
    if frac <= 0.0 || lo_i + 1 >= bins {
        return vec![(lo_i.min(bins - 1), 1.0)];
    }
    vec![(lo_i, 1.0 - frac), (lo_i + 1, frac)]
}

/// The AlphaZero value target of a position whose side to move is `to_move`: +1 if that
/// colour won, -1 if it lost, 0 without a winner.
pub fn outcome_value(winner: Option<Color>, to_move: Color) -> f32 {
    match winner {
        Some(w) if w == to_move => 1.0,
        Some(_) => -1.0,
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-5
    }

    /// The paper's Figure 2: s0 .. s4, the OR player makes the final ply 4; the AND plies
    /// are 1 and 3, chosen in s0 and s2: n(s0) = b0·b2, n(s1) = n(s2) = b2, n(s3) = 1.
    #[test]
    fn paper_figure_two() {
        let b = [100, 7, 10, 5];
        let c = proof_costs(&b, Some(Color::White), 500);
        let want = [3.0, 1.0, 1.0, 0.0];
        for (t, w) in want.iter().enumerate() {
            assert!(close(c[t].white, *w), "t {t}: {} vs {w}", c[t].white);
            assert!(close(c[t].black, 499.0));
        }
    }

    /// Five plies, Black makes the last (plies 1, 3, 5 are Black's in a game starting with
    /// Black); White's plies 4 and 2 are Black's AND nodes: b = 10 (ply 2) and 1000 (ply 4).
    #[test]
    fn odd_length_black_wins() {
        let b = [82, 10, 82, 1000, 82];
        let c = proof_costs(&b, Some(Color::Black), 500);
        let want = [4.0, 4.0, 3.0, 3.0, 0.0];
        for (t, w) in want.iter().enumerate() {
            assert!(close(c[t].black, *w), "t {t}: {} vs {w}", c[t].black);
            assert!(close(c[t].white, 499.0));
        }
    }

    /// b_max on 9x9 Killall-Go is 82 at every ply: after t plies of an N-ply game the label
    /// is (number of loser plies ≥ t+1) · log10(82).
    #[test]
    fn b_max_counts_loser_plies() {
        let b = vec![82u32; 9];
        let c = proof_costs(&b, Some(Color::Black), 500);
        let l = 82f32.log10();
        // Loser plies: 8, 6, 4, 2.
        assert!(close(c[0].black, 4.0 * l));
        assert!(close(c[1].black, 4.0 * l));
        assert!(close(c[2].black, 3.0 * l));
        assert!(close(c[7].black, l));
        assert!(close(c[8].black, 0.0));
    }

    #[test]
    fn no_winner_and_clamping() {
        let c = proof_costs(&[5, 5, 5], None, 10);
        assert!(c.iter().all(|p| p.black == 9.0 && p.white == 9.0));
        // 40 loser plies of 10^1 each exceed the top bin of 10 bins: clamped to 9.
        let c = proof_costs(&[10u32; 80], Some(Color::White), 10);
        assert!(close(c[0].white, 9.0));
        assert!(proof_costs(&[], Some(Color::White), 10).is_empty());
    }

    #[test]
    fn two_hot_interpolates() {
        assert_eq!(two_hot(3.0, 500), vec![(3, 1.0)]);
        let t = two_hot(3.25, 500);
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].0, t[1].0), (3, 4));
        assert!(close(t[0].1, 0.75) && close(t[1].1, 0.25));
        assert_eq!(two_hot(499.0, 500), vec![(499, 1.0)]);
        assert_eq!(two_hot(1e9, 500), vec![(499, 1.0)]);
        assert_eq!(two_hot(-2.0, 500), vec![(0, 1.0)]);
        assert_eq!(two_hot(f32::NAN, 500), vec![(499, 1.0)]);
    }

    #[test]
    fn outcome_values() {
        assert_eq!(outcome_value(Some(Color::White), Color::White), 1.0);
        assert_eq!(outcome_value(Some(Color::White), Color::Black), -1.0);
        assert_eq!(outcome_value(None, Color::Black), 0.0);
    }
}
