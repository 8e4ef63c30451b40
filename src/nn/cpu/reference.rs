//! A plain direct-convolution forward pass: slow, obviously correct, the yardstick the
//! fast path is tested against (and the fallback for shapes it does not handle).

#![allow(clippy::needless_range_loop)]

use super::folded::{Conv, Folded};

/// NCHW (`c · area`) → NHWC (`area · c`).
pub(crate) fn nchw_to_nhwc(x: &[f32], c: usize, area: usize, out: &mut [f32]) {
    for ch in 0..c {
        for p in 0..area {
            out[p * c + ch] = x[ch * area + p];
        }
    }
}

/// 3x3 conv (zero padding 1) on NHWC data, plus optional residual, then ReLU.
pub(crate) fn conv3x3_nhwc(
    cv: &Conv,
    n: usize,
    x: &[f32],
    residual: Option<&[f32]>,
    out: &mut [f32],
) {
    debug_assert_eq!(cv.k, 3);
    let (ci, co) = (cv.cin, cv.cout);
    for y in 0..n {
        for xx in 0..n {
            let p = y * n + xx;
            for o in 0..co {
                let mut s = cv.b[o];
                for dy in 0..3 {
                    let sy = y as isize + dy as isize - 1;
                    if sy < 0 || sy >= n as isize {
                        continue;
                    }
                    for dx in 0..3 {
                        let sx = xx as isize + dx as isize - 1;
                        if sx < 0 || sx >= n as isize {
                            continue;
                        }
                        let q = (sy as usize) * n + sx as usize;
                        let xin = &x[q * ci..(q + 1) * ci];
                        for c in 0..ci {
                            s += cv.w[((o * ci + c) * 3 + dy) * 3 + dx] * xin[c];
                        }
                    }
                }
                if let Some(r) = residual {
                    s += r[p * co + o];
                }
                out[p * co + o] = s.max(0.0);
            }
        }
    }
}

/// The trunk of one position: NCHW input → NHWC output (`area · filters`).
pub(crate) fn trunk(f: &Folded, input: &[f32], out: &mut Vec<f32>) {
    let area = f.n * f.n;
    let mut x = vec![0f32; area * f.planes];
    nchw_to_nhwc(input, f.planes, area, &mut x);
    let mut a = vec![0f32; area * f.filters];
    let mut h = vec![0f32; area * f.filters];
    conv3x3_nhwc(&f.stem, f.n, &x, None, &mut a);
    for (c1, c2) in &f.blocks {
        conv3x3_nhwc(c1, f.n, &a, None, &mut h);
        let mut y = vec![0f32; area * f.filters];
        conv3x3_nhwc(c2, f.n, &h, Some(&a), &mut y);
        a = y;
    }
    *out = a;
}
