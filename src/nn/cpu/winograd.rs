//! Winograd F(m×m, 3×3) convolution: transform matrices and transformed weights.
//!
//! The matrices come from the Toom-Cook construction, computed here in f64 rather than
//! typed in: with `alpha = m + 2` evaluation points (`alpha − 1` finite ones plus
//! infinity), let `Vg` (alpha×3) and `Vh` (alpha×m) evaluate polynomials of degree 2 and
//! m−1 at the points, and `W` be the inverse of the alpha×alpha evaluation matrix (the
//! interpolation of the product). Linear convolution is `s = W ((Vg g) ⊙ (Vh h))`; the
//! correlation a conv layer computes is its transpose in `h`, so
//! `y = Vhᵀ ((Vg g) ⊙ (Wᵀ d))`: `G = Vg`, `Bᵀ = Wᵀ`, `Aᵀ = Vhᵀ`. In 2-D, per tile,
//! `Y = Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`.

#![allow(clippy::needless_range_loop)]

use super::folded::Conv;

/// Finite interpolation points per output tile size (infinity is the last point).
/// Small points keep the transforms well conditioned in f32.
fn points(m: usize) -> Option<&'static [f64]> {
    match m {
        2 => Some(&[0.0, 1.0, -1.0]),
        3 => Some(&[0.0, 1.0, -1.0, 0.5]),
        4 => Some(&[0.0, 1.0, -1.0, 0.5, -2.0]),
        5 => Some(&[0.0, 1.0, -1.0, 0.5, -0.5, -2.0]),
        6 => Some(&[0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0]),
        _ => None,
    }
}

/// Evaluation matrix (rows = points, last row = infinity) for polynomials with `cols`
/// coefficients.
fn eval_matrix(pts: &[f64], cols: usize) -> Vec<Vec<f64>> {
    let mut v: Vec<Vec<f64>> = pts
        .iter()
        .map(|&p| (0..cols).map(|j| p.powi(j as i32)).collect())
        .collect();
    let mut inf = vec![0.0; cols];
    inf[cols - 1] = 1.0;
    v.push(inf);
    v
}

/// Inverse of a small square matrix (Gauss-Jordan, partial pivoting).
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = r.clone();
            row.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            row
        })
        .collect();
    for c in 0..n {
        let p = (c..n).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[p][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, p);
        let d = m[c][c];
        for v in m[c].iter_mut() {
            *v /= d;
        }
        for r in 0..n {
            if r != c {
                let f = m[r][c];
                if f != 0.0 {
                    for j in 0..2 * n {
                        m[r][j] -= f * m[c][j];
                    }
                }
            }
        }
    }
    Some(m.into_iter().map(|r| r[n..].to_vec()).collect())
}

/// The transform matrices of F(m×m, 3×3).
#[derive(Clone, Debug)]
pub(crate) struct Matrices {
    /// Output tile side.
    pub m: usize,
    /// Input tile side, `m + 2`.
    pub alpha: usize,
    /// `Bᵀ`, alpha×alpha, row-major.
    pub bt: Vec<f64>,
    /// `G`, alpha×3.
    pub g: Vec<f64>,
    /// `Aᵀ`, m×alpha.
    pub at: Vec<f64>,
}

impl Matrices {
    /// The matrices for output tiles of side `m` (2..=6), or `None`.
    pub fn new(m: usize) -> Option<Matrices> {
        let pts = points(m)?;
        let alpha = m + 2;
        let vs = eval_matrix(pts, alpha);
        let w = invert(&vs)?;
        let vg = eval_matrix(pts, 3);
        let vh = eval_matrix(pts, m);
        let mut bt = vec![0.0; alpha * alpha];
        for i in 0..alpha {
            for j in 0..alpha {
                bt[i * alpha + j] = w[j][i];
            }
        }
        let g: Vec<f64> = vg.iter().flatten().copied().collect();
        let mut at = vec![0.0; m * alpha];
        for i in 0..m {
            for j in 0..alpha {
                at[i * alpha + j] = vh[j][i];
            }
        }
        Some(Matrices {
            m,
            alpha,
            bt,
            g,
            at,
        })
    }
}

/// A row of a transform matrix with its zero entries dropped: `(column, coefficient)`.
pub(crate) type SparseRow = Vec<(usize, f32)>;

fn sparse_rows(mat: &[f64], rows: usize, cols: usize) -> Vec<SparseRow> {
    (0..rows)
        .map(|i| {
            (0..cols)
                .filter(|&j| mat[i * cols + j] != 0.0)
                .map(|j| (j, mat[i * cols + j] as f32))
                .collect()
        })
        .collect()
}

/// One 3x3 conv layer prepared for Winograd: transformed weights and the sparse
/// transforms the kernels apply.
#[derive(Clone, Debug)]
pub(crate) struct WinoConv {
    /// Output tile side.
    pub m: usize,
    /// Input tile side.
    pub alpha: usize,
    /// Input channels, padded to a multiple of 8 (extra weights are zero).
    pub cin: usize,
    /// Output channels (a multiple of 8).
    pub cout: usize,
    /// `U[ξ][cin][cout]`, ξ = the alpha² transformed positions.
    pub u: Vec<f32>,
    /// Folded bias, `cout`.
    pub bias: Vec<f32>,
    /// Rows of `Bᵀ`.
    pub bt: Vec<SparseRow>,
    /// Rows of `Aᵀ`.
    pub at: Vec<SparseRow>,
}

impl WinoConv {
    /// Transforms a folded 3x3 conv. `cin_pad` ≥ `conv.cin`; `conv.cout` must be a
    /// multiple of 8.
    pub fn new(conv: &Conv, mats: &Matrices, cin_pad: usize) -> WinoConv {
        let (al, ci, co) = (mats.alpha, conv.cin, conv.cout);
        let mut u = vec![0f32; al * al * cin_pad * co];
        let g = &mats.g;
        for o in 0..co {
            for c in 0..ci {
                let k = &conv.w[(o * ci + c) * 9..(o * ci + c) * 9 + 9];
                // t = G k (alpha×3), then U = t Gᵀ (alpha×alpha), in f64.
                let mut t = vec![0f64; al * 3];
                for i in 0..al {
                    for j in 0..3 {
                        t[i * 3 + j] = (0..3).map(|q| g[i * 3 + q] * f64::from(k[q * 3 + j])).sum();
                    }
                }
                for i in 0..al {
                    for j in 0..al {
                        let v: f64 = (0..3).map(|q| t[i * 3 + q] * g[j * 3 + q]).sum();
                        u[((i * al + j) * cin_pad + c) * co + o] = v as f32;
                    }
                }
            }
        }
        WinoConv {
            m: mats.m,
            alpha: al,
            cin: cin_pad,
            cout: co,
            u,
            bias: conv.b.clone(),
            bt: sparse_rows(&mats.bt, al, al),
            at: sparse_rows(&mats.at, mats.m, al),
        }
    }
}

/// Compile-time transform tables for the SIMD kernels: with constant coefficients the
/// compiler drops the zero terms and turns ±1 into additions, which the run-time sparse
/// rows cannot do. Rows padded to 8 with zeros; only `AL`×`AL` (`M`×`AL` for `AT`) used.
/// Each table equals the Toom-Cook construction above (tested).
pub(crate) trait Tile {
    /// Output tile side.
    const M: usize;
    /// Input tile side.
    const AL: usize;
    /// `Bᵀ`.
    const BT: [[f32; 8]; 8];
    /// `Aᵀ`.
    const AT: [[f32; 8]; 8];
}

/// Tables of F(2x2, 3x3), points [0, 1, -1] and infinity.
pub(crate) struct F2;
impl Tile for F2 {
    const M: usize = 2;
    const AL: usize = 4;
    const BT: [[f32; 8]; 8] = [
        [1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0 / 2.0, 1.0 / 2.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, -1.0 / 2.0, 1.0 / 2.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
    ];
    const AT: [[f32; 8]; 8] = [
        [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
    ];
}

/// Tables of F(3x3, 3x3), points [0, 1, -1, 1/2] and infinity.
pub(crate) struct F3;
impl Tile for F3 {
    const M: usize = 3;
    const AL: usize = 5;
    const BT: [[f32; 8]; 8] = [
        [1.0, -2.0, -1.0, 2.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, -1.0 / 2.0, 1.0 / 2.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, -1.0 / 6.0, 1.0 / 2.0, -1.0 / 3.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 8.0 / 3.0, 0.0, -8.0 / 3.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0 / 2.0, -1.0, -1.0 / 2.0, 1.0, 0.0, 0.0, 0.0],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
    ];
    const AT: [[f32; 8]; 8] = [
        [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 1.0 / 2.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 1.0, 1.0 / 4.0, 1.0, 0.0, 0.0, 0.0],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
    ];
}

/// Tables of F(4x4, 3x3), points [0, 1, -1, 1/2, -2] and infinity.
pub(crate) struct F4;
impl Tile for F4 {
    const M: usize = 4;
    const AL: usize = 6;
    const BT: [[f32; 8]; 8] = [
        [1.0, -3.0 / 2.0, -2.0, 3.0 / 2.0, 1.0, 0.0, 0.0, 0.0],
        [
            0.0,
            -1.0 / 3.0,
            1.0 / 6.0,
            5.0 / 6.0,
            1.0 / 3.0,
            0.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            -1.0 / 3.0,
            5.0 / 6.0,
            -1.0 / 6.0,
            -1.0 / 3.0,
            0.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            32.0 / 15.0,
            16.0 / 15.0,
            -32.0 / 15.0,
            -16.0 / 15.0,
            0.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            1.0 / 30.0,
            -1.0 / 15.0,
            -1.0 / 30.0,
            1.0 / 15.0,
            0.0,
            0.0,
            0.0,
        ],
        [0.0, 1.0, -3.0 / 2.0, -2.0, 3.0 / 2.0, 1.0, 0.0, 0.0],
        [0.0; 8],
        [0.0; 8],
    ];
    const AT: [[f32; 8]; 8] = [
        [1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 1.0 / 2.0, -2.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 1.0, 1.0 / 4.0, 4.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 1.0 / 8.0, -8.0, 1.0, 0.0, 0.0],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
    ];
}

/// Tables of F(5x5, 3x3), points [0, 1, -1, 1/2, -1/2, -2] and infinity (15x15 boards are
/// exactly 3x3 tiles: 49 products per tile and channel pair instead of 25 per 3x3 tile,
/// 29 % fewer than F(3x3) over the board).
pub(crate) struct F5;
impl Tile for F5 {
    const M: usize = 5;
    const AL: usize = 7;
    const BT: [[f32; 8]; 8] = [
        [1.0, 1.0 / 2.0, -5.0, -5.0 / 2.0, 4.0, 2.0, 0.0, 0.0],
        [
            0.0,
            -1.0 / 9.0,
            -1.0 / 6.0,
            7.0 / 18.0,
            2.0 / 3.0,
            2.0 / 9.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            1.0 / 3.0,
            -1.0 / 6.0,
            -3.0 / 2.0,
            2.0 / 3.0,
            2.0 / 3.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            16.0 / 15.0,
            8.0 / 3.0,
            0.0,
            -8.0 / 3.0,
            -16.0 / 15.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            -16.0 / 9.0,
            8.0 / 3.0,
            32.0 / 9.0,
            -8.0 / 3.0,
            -16.0 / 9.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            -1.0 / 90.0,
            0.0,
            1.0 / 18.0,
            0.0,
            -2.0 / 45.0,
            0.0,
            0.0,
        ],
        [
            0.0,
            1.0 / 2.0,
            1.0 / 4.0,
            -5.0 / 2.0,
            -5.0 / 4.0,
            2.0,
            1.0,
            0.0,
        ],
        [0.0; 8],
    ];
    const AT: [[f32; 8]; 8] = [
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 1.0 / 2.0, -1.0 / 2.0, -2.0, 0.0, 0.0],
        [0.0, 1.0, 1.0, 1.0 / 4.0, 1.0 / 4.0, 4.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 1.0 / 8.0, -1.0 / 8.0, -8.0, 0.0, 0.0],
        [0.0, 1.0, 1.0, 1.0 / 16.0, 1.0 / 16.0, 16.0, 1.0, 0.0],
        [0.0; 8],
        [0.0; 8],
        [0.0; 8],
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1-D check of the matrices: `Aᵀ ((G g) ⊙ (Bᵀ d))` equals the direct correlation.
    #[test]
    fn one_dimensional_correlation() {
        for m in 2..=6 {
            let mats = Matrices::new(m).expect("matrices");
            let al = mats.alpha;
            let g = [0.3, -1.2, 0.7];
            let d: Vec<f64> = (0..al).map(|i| (i as f64 * 0.37).sin()).collect();
            let gg: Vec<f64> = (0..al)
                .map(|i| (0..3).map(|j| mats.g[i * 3 + j] * g[j]).sum())
                .collect();
            let bd: Vec<f64> = (0..al)
                .map(|i| (0..al).map(|j| mats.bt[i * al + j] * d[j]).sum())
                .collect();
            for i in 0..m {
                let y: f64 = (0..al).map(|j| mats.at[i * al + j] * gg[j] * bd[j]).sum();
                let want: f64 = (0..3).map(|k| d[i + k] * g[k]).sum();
                assert!((y - want).abs() < 1e-9, "m={m} i={i}: {y} vs {want}");
            }
        }
        assert!(Matrices::new(7).is_none());
    }

    fn same<T: Tile>() {
        let mats = Matrices::new(T::M).expect("matrices");
        assert_eq!(mats.alpha, T::AL);
        for i in 0..8 {
            for j in 0..8 {
                let bt = if i < T::AL && j < T::AL {
                    mats.bt[i * T::AL + j] as f32
                } else {
                    0.0
                };
                assert!((T::BT[i][j] - bt).abs() <= 1e-7, "BT m={} ({i},{j})", T::M);
                let at = if i < T::M && j < T::AL {
                    mats.at[i * T::AL + j] as f32
                } else {
                    0.0
                };
                assert!((T::AT[i][j] - at).abs() <= 1e-7, "AT m={} ({i},{j})", T::M);
            }
        }
    }

    #[test]
    fn fixed_tables_match_the_construction() {
        same::<F2>();
        same::<F3>();
        same::<F4>();
        same::<F5>();
    }
}
