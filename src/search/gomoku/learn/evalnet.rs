//! The player's evaluation network: a value for the side to move from the line shapes around
//! every point, updated move by move (docs/model-format.md, "Evaluation network").
//!
//! Every point of the board, empty or not, looks along its four lines at the three points on
//! each side; with the point itself that window has one of [`NCODES`] shapes per colour's
//! view (own stones, the other colour's stones, empty, off the board; a line read backwards
//! is the same shape). A table gives each
//! shape a vector of `C` int16 features; a point's features are the bias plus its four
//! shapes' vectors, clipped to `0..=128`, and summed over the board per view. A small
//! float head turns the two sums (the side to move's view first) into a logit of the side to
//! move winning.
//!
//! Why this shape of network: the board already keeps each point's line keys
//! ([`Gomoku::line_key`]), so a move changes the shapes of at most 25 points per view (the
//! point itself in four directions, three points on each side in one), and the sums follow
//! by adding the changed points' clipped features before and after. The update recomputes
//! the shapes from the board rather than from the move, so several moves can be applied at
//! once, in any order; taking moves back restores what the update saved (see
//! [`Accumulator`]).
//! Every feature and sum is int16 in wrapping arithmetic: a sum of clipped features is at
//! most 484 points times 128, under 2^16, so the wrapped sum read as unsigned is exact, and
//! the vector code (AVX2, AVX-512) and the scalar reference give the same bits.
//!
//! Why three points a side: a window of seven still holds every five-point shape whole (seen
//! from its middle points), and the table stays small enough for the second-level cache,
//! which a wider window's table outgrows (every changed shape would then wait on a slower
//! cache).

use std::path::Path;
use std::sync::Arc;

use once_cell::sync::Lazy;

use crate::game::gomoku::{Gomoku, Rule, MAX_SIZE};
use crate::game::{Color, Game};

/// Points looked at on each side of a point along a line.
pub const REACH: usize = 3;
/// Half-line shapes: up to [`REACH`] points on one side of a point, cut by the board's edge.
pub const HALF_SHAPES: usize = 40;
/// Unordered pairs of half-lines.
pub const PAIRS: usize = HALF_SHAPES * (HALF_SHAPES + 1) / 2;
/// Window shapes per direction and view: the point's own state times a pair of half-lines.
pub const NCODES: usize = 3 * PAIRS;
/// Largest absolute quantized table or bias entry: five of them never overflow int16.
pub const QUANT_LIMIT: i16 = 6000;
/// Quantized value of a feature of 1.0 (the clip's upper end).
pub const ACT_MAX: i16 = 128;
/// A view's sum over the points divided by this is the head's input (128 for the
/// quantization times the float network's 1/32).
pub const POOL_SCALE: f32 = 4096.0;
/// The first bytes of a weight file whose value is the evaluation.
pub const MAGIC: &[u8; 8] = b"PCNEVAL1";
/// The first bytes of a residual weight file: the same layout, but its value is a correction
/// that the player adds to the pattern evaluation (see [`EvalNet::residual`]).
pub const MAGIC_RESIDUAL: &[u8; 8] = b"PCNEVAL2";
/// Bytes of the rule name in a weight file.
const RULE_BYTES: usize = 16;
/// Largest channel and hidden counts a file may declare.
const MAX_WIDTH: usize = 256;

// The per-view sums stay exact in 16 bits only while the board has at most this many points.
const _: () = assert!(MAX_SIZE * MAX_SIZE * ACT_MAX as usize <= u16::MAX as usize);

/// First id of the half-line shapes with `n` points on the board before the edge.
const HALF_OFFSET: [u16; REACH + 1] = [39, 36, 27, 0];

/// Index of the unordered pair of half-line ids `a`, `b`.
#[inline(always)]
fn pair(a: u16, b: u16) -> u16 {
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    a * HALF_SHAPES as u16 - a * a.wrapping_sub(1) / 2 + (b - a)
}

/// Why a weight file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalNetError {
    /// The file could not be read.
    #[error("cannot read {0}")]
    Io(String),
    /// Wrong magic, size, dimension, rule name or value.
    #[error("not an evaluation network: {0}")]
    Format(String),
}

/// An evaluation network's weights (see the module docs and docs/model-format.md).
#[derive(Clone, Debug)]
pub struct EvalNet {
    rule: Rule,
    /// Other rules the network evaluates under besides the one it was trained for (only a
    /// shipped network whose gate measured it stronger there; a loaded file has none).
    also: Vec<Rule>,
    residual: bool,
    channels: usize,
    hidden: usize,
    /// `NCODES x channels`, shape-major.
    table: Vec<i16>,
    bias: Vec<i16>,
    b1: Vec<f32>,
    b2: Vec<f32>,
    w3: Vec<f32>,
    b3: f32,
    /// The file's `W1` (`hidden x 2 channels`) and `W2` (`hidden x hidden`) transposed
    /// (input-major), the layout the head reads: each input adds its column to all outputs
    /// at once.
    w1t: Vec<f32>,
    w2t: Vec<f32>,
}

/// `w` (`rows x cols`, row-major) transposed.
fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..cols * rows)
        .map(|k| w[(k % rows) * cols + k / rows])
        .collect()
}

/// Little-endian reader over a byte slice that reports what it ran out on.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], EvalNetError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return Err(EvalNetError::Format(format!(
                "{} bytes end inside {what}",
                self.b.len()
            )));
        };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<usize, EvalNetError> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
    }

    fn i16s(&mut self, n: usize, what: &str) -> Result<Vec<i16>, EvalNetError> {
        let s = self.take(2 * n, what)?;
        let v: Vec<i16> = s
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        if let Some(i) = v.iter().position(|x| x.unsigned_abs() > QUANT_LIMIT as u16) {
            return Err(EvalNetError::Format(format!(
                "{what}[{i}] = {} is beyond ±{QUANT_LIMIT}",
                v[i]
            )));
        }
        Ok(v)
    }

    fn f32s(&mut self, n: usize, what: &str) -> Result<Vec<f32>, EvalNetError> {
        let s = self.take(4 * n, what)?;
        let v: Vec<f32> = s
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(EvalNetError::Format(format!("{what}[{i}] is not finite")));
        }
        Ok(v)
    }
}

impl EvalNet {
    /// Reads a weight file.
    pub fn load(path: &Path) -> Result<EvalNet, EvalNetError> {
        let b = std::fs::read(path)
            .map_err(|e| EvalNetError::Io(format!("{}: {e}", path.display())))?;
        EvalNet::from_bytes(&b)
    }

    /// Parses a weight file's bytes; refuses anything but an exact, finite, in-range file.
    pub fn from_bytes(b: &[u8]) -> Result<EvalNet, EvalNetError> {
        let mut r = Reader { b, at: 0 };
        let residual = match r.take(MAGIC.len(), "the magic")? {
            m if m == MAGIC => false,
            m if m == MAGIC_RESIDUAL => true,
            _ => {
                return Err(EvalNetError::Format(
                    "wrong magic (expected PCNEVAL1 or PCNEVAL2)".into(),
                ))
            }
        };
        let name = r.take(RULE_BYTES, "the rule name")?;
        let end = name.iter().position(|&c| c == 0).unwrap_or(RULE_BYTES);
        let name = std::str::from_utf8(&name[..end])
            .map_err(|_| EvalNetError::Format("rule name is not ASCII".into()))?;
        let rule = Rule::from_name(name)
            .ok_or_else(|| EvalNetError::Format(format!("unknown rule '{name}'")))?;
        let channels = r.u32("the channel count")?;
        let hidden = r.u32("the hidden count")?;
        let codes = r.u32("the shape count")?;
        if !(16..=MAX_WIDTH).contains(&channels) || channels % 16 != 0 {
            return Err(EvalNetError::Format(format!(
                "{channels} channels (16..={MAX_WIDTH}, a multiple of 16)"
            )));
        }
        if !(1..=MAX_WIDTH).contains(&hidden) {
            return Err(EvalNetError::Format(format!(
                "{hidden} hidden units (1..={MAX_WIDTH})"
            )));
        }
        if codes != NCODES {
            return Err(EvalNetError::Format(format!(
                "{codes} shapes (expected {NCODES})"
            )));
        }
        let mut net = EvalNet::assemble(
            rule,
            channels,
            hidden,
            r.i16s(NCODES * channels, "the shape table")?,
            r.i16s(channels, "the bias")?,
            [
                r.f32s(hidden * 2 * channels, "W1")?,
                r.f32s(hidden, "b1")?,
                r.f32s(hidden * hidden, "W2")?,
                r.f32s(hidden, "b2")?,
                r.f32s(hidden, "w3")?,
            ],
            r.f32s(1, "b3")?[0],
        );
        if r.at != b.len() {
            return Err(EvalNetError::Format(format!(
                "{} bytes after the last weight",
                b.len() - r.at
            )));
        }
        net.residual = residual;
        Ok(net)
    }

    /// A network from its parts (the head's floats in file order), with the head's
    /// transposed copies.
    fn assemble(
        rule: Rule,
        channels: usize,
        hidden: usize,
        table: Vec<i16>,
        bias: Vec<i16>,
        head: [Vec<f32>; 5],
        b3: f32,
    ) -> EvalNet {
        let [w1, b1, w2, b2, w3] = head;
        EvalNet {
            rule,
            also: Vec::new(),
            residual: false,
            channels,
            hidden,
            w1t: transpose(&w1, hidden, 2 * channels),
            w2t: transpose(&w2, hidden, hidden),
            table,
            bias,
            b1,
            b2,
            w3,
            b3,
        }
    }

    /// The weight file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(if self.residual { MAGIC_RESIDUAL } else { MAGIC });
        let mut name = [0u8; RULE_BYTES];
        let n = self.rule.name().as_bytes();
        name[..n.len()].copy_from_slice(n);
        b.extend_from_slice(&name);
        for x in [self.channels, self.hidden, NCODES] {
            b.extend_from_slice(&(x as u32).to_le_bytes());
        }
        for x in self.table.iter().chain(&self.bias) {
            b.extend_from_slice(&x.to_le_bytes());
        }
        let w1 = transpose(&self.w1t, 2 * self.channels, self.hidden);
        let w2 = transpose(&self.w2t, self.hidden, self.hidden);
        let floats = [&w1, &self.b1, &w2, &self.b2, &self.w3];
        for x in floats
            .into_iter()
            .flatten()
            .chain(std::iter::once(&self.b3))
        {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b
    }

    /// A network with seeded random weights in the file's ranges: for tests and benchmarks
    /// of the arithmetic, never for play.
    pub fn random(rule: Rule, channels: usize, hidden: usize, seed: u64) -> EvalNet {
        let mut rng = crate::util::Rng::new(seed);
        let mut small = |n: usize, lim: i64| -> Vec<i16> {
            (0..n)
                .map(|_| (rng.below(2 * lim as usize + 1) as i64 - lim) as i16)
                .collect()
        };
        let table = small(NCODES * channels, 60);
        let bias = small(channels, 40);
        let mut rng = crate::util::Rng::new(seed ^ 0x9e37_79b9);
        let mut f = |n: usize, s: f32| -> Vec<f32> {
            (0..n)
                .map(|_| (rng.below(2001) as f32 / 1000.0 - 1.0) * s)
                .collect()
        };
        let head = [
            f(hidden * 2 * channels, 0.3),
            f(hidden, 0.1),
            f(hidden * hidden, 0.3),
            f(hidden, 0.1),
            f(hidden, 0.5),
        ];
        EvalNet::assemble(rule, channels, hidden, table, bias, head, 0.05)
    }

    /// The rule set the network was trained for.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Whether the player evaluates with this network under `rule`: the rule it was
    /// trained for, and the rules added by [`EvalNet::also_under`].
    pub fn serves(&self, rule: Rule) -> bool {
        rule == self.rule || self.also.contains(&rule)
    }

    /// This network, used as well under `rules`. The line codes are raw stones, the same
    /// under every rule, and a residual network adds its correction to the pattern
    /// evaluation of the rule being played; whether the correction learned under one rule
    /// helps under another is the gate's question, so only measured rules are added.
    pub fn also_under(mut self, rules: &[Rule]) -> EvalNet {
        for &r in rules {
            if !self.serves(r) {
                self.also.push(r);
            }
        }
        self
    }

    /// Whether the network's value is a correction to the pattern evaluation (a `PCNEVAL2`
    /// file, trained with the pattern evaluation's value as a fixed offset) rather than the
    /// evaluation itself: the player then adds the two.
    pub fn residual(&self) -> bool {
        self.residual
    }

    /// This network marked residual or not (the weights unchanged): for tests.
    #[cfg(test)]
    pub(crate) fn with_residual(mut self, residual: bool) -> EvalNet {
        self.residual = residual;
        self
    }

    /// Features per point (`C`).
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// The logit of the side to move winning, computed from scratch by walking the board:
    /// the scalar reference that [`Accumulator`] is held to (it shares only the weights).
    pub fn evaluate(&self, g: &Gomoku) -> f32 {
        let (w, h) = (g.width() as isize, g.height() as isize);
        let c = self.channels;
        let state = |x: isize, y: isize| -> Option<u8> {
            if x < 0 || y < 0 || x >= w || y >= h {
                return None;
            }
            Some(match g.stone((y * w + x) as crate::game::Move) {
                None => 0,
                Some(Color::Black) => 1,
                Some(Color::White) => 2,
            })
        };
        // Own = 1, other = 2 in `view`'s eyes.
        let relative = |s: u8, view: Color| -> u16 {
            match (s, view) {
                (0, _) => 0,
                (1, Color::Black) | (2, Color::White) => 1,
                _ => 2,
            }
        };
        let mut sums = [vec![0i32; c], vec![0i32; c]];
        for (vi, view) in [Color::Black, Color::White].into_iter().enumerate() {
            for y in 0..h {
                for x in 0..w {
                    let mut f: Vec<i32> = self.bias.iter().map(|&b| b as i32).collect();
                    for (dx, dy) in [(1isize, 0isize), (0, 1), (1, 1), (1, -1)] {
                        let mut half = [0u16; 2];
                        for (k, s) in [-1isize, 1].into_iter().enumerate() {
                            let mut n = 0;
                            let mut id = 0u16;
                            for i in 1..=REACH as isize {
                                match state(x + s * i * dx, y + s * i * dy) {
                                    Some(st) => {
                                        id += relative(st, view) * 3u16.pow(i as u32 - 1);
                                        n += 1;
                                    }
                                    None => break,
                                }
                            }
                            half[k] = HALF_OFFSET[n] + id;
                        }
                        let centre = relative(state(x, y).unwrap_or(0), view);
                        let code = centre as usize * PAIRS + pair(half[0], half[1]) as usize;
                        for (fi, t) in f.iter_mut().zip(&self.table[code * c..(code + 1) * c]) {
                            *fi += *t as i32;
                        }
                    }
                    for (s, fi) in sums[vi].iter_mut().zip(&f) {
                        *s += (*fi).clamp(0, ACT_MAX as i32);
                    }
                }
            }
        }
        let me = g.to_move().index();
        // Each sum is at most 484 * 128 < 2^16: its low 16 bits are the head's input.
        let [own, other] =
            [&sums[me], &sums[1 - me]].map(|v| v.iter().map(|&x| x as i16).collect::<Vec<_>>());
        self.head::<false>(&own, &other)
    }

    /// The float head on the two views' sums (the side to move's view first; the sums in
    /// wrapping int16, read unsigned and divided by [`POOL_SCALE`]); `FMA`: fused
    /// multiply-adds (only inside functions compiled for them). Each input adds its weight
    /// column to every output at once (vectors across the outputs, no horizontal sums), and
    /// inputs of 0, common after the clips and ReLUs, are skipped.
    #[inline(always)]
    fn head<const FMA: bool>(&self, own: &[i16], other: &[i16]) -> f32 {
        let n = self.hidden;
        let mut h1 = [0f32; MAX_WIDTH];
        let mut h2 = [0f32; MAX_WIDTH];
        let (h1, h2) = (&mut h1[..n], &mut h2[..n]);
        h1.copy_from_slice(&self.b1);
        for (i, &s) in own.iter().chain(other).enumerate() {
            if s != 0 {
                axpy::<FMA>(
                    h1,
                    s as u16 as f32 / POOL_SCALE,
                    &self.w1t[i * n..(i + 1) * n],
                );
            }
        }
        h2.copy_from_slice(&self.b2);
        for (i, &x) in h1.iter().enumerate() {
            if x > 0.0 {
                axpy::<FMA>(h2, x, &self.w2t[i * n..(i + 1) * n]);
            }
        }
        let mut v = self.b3;
        for (w, &x) in self.w3.iter().zip(h2.iter()) {
            if x > 0.0 {
                v = if FMA { x.mul_add(*w, v) } else { v + x * w };
            }
        }
        v
    }

    /// [`EvalNet::head`] in AVX2 registers: the common widths (16 and 32 hidden units)
    /// keep each layer's outputs in two or four vector registers; others take the generic
    /// path.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn head_avx2(&self, own: &[i16], other: &[i16]) -> f32 {
        match self.hidden {
            16 => self.head_avx2_k::<2>(own, other),
            32 => self.head_avx2_k::<4>(own, other),
            _ => self.head::<true>(own, other),
        }
    }

    /// The head with `8 K` hidden units, in `K` registers per layer.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn head_avx2_k<const K: usize>(&self, own: &[i16], other: &[i16]) -> f32 {
        use std::arch::x86_64::*;
        let n = 8 * K;
        debug_assert_eq!(n, self.hidden);
        // SAFETY (every load below): `w1t` holds 2C rows and `w2t` n rows of n floats, `b1`,
        // `b2` and `w3` n floats; each read is 8 floats at 8 k < n within one row.
        let load = |p: &[f32], k: usize| _mm256_loadu_ps(p.as_ptr().add(8 * k));
        let mut h1 = [_mm256_setzero_ps(); K];
        for (k, h) in h1.iter_mut().enumerate() {
            *h = load(&self.b1, k);
        }
        for (i, &s) in own.iter().chain(other).enumerate() {
            if s != 0 {
                let a = _mm256_set1_ps(s as u16 as f32 / POOL_SCALE);
                let w = &self.w1t[i * n..(i + 1) * n];
                for (k, h) in h1.iter_mut().enumerate() {
                    *h = _mm256_fmadd_ps(a, load(w, k), *h);
                }
            }
        }
        let zero = _mm256_setzero_ps();
        let mut x1 = [0f32; MAX_WIDTH];
        for (k, h) in h1.iter().enumerate() {
            _mm256_storeu_ps(x1.as_mut_ptr().add(8 * k), _mm256_max_ps(*h, zero));
        }
        let mut h2 = [_mm256_setzero_ps(); K];
        for (k, h) in h2.iter_mut().enumerate() {
            *h = load(&self.b2, k);
        }
        for (i, &x) in x1[..n].iter().enumerate() {
            if x > 0.0 {
                let a = _mm256_set1_ps(x);
                let w = &self.w2t[i * n..(i + 1) * n];
                for (k, h) in h2.iter_mut().enumerate() {
                    *h = _mm256_fmadd_ps(a, load(w, k), *h);
                }
            }
        }
        let mut v = _mm256_setzero_ps();
        for (k, h) in h2.iter().enumerate() {
            v = _mm256_fmadd_ps(_mm256_max_ps(*h, zero), load(&self.w3, k), v);
        }
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), v);
        self.b3
            + ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6]))
            + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]))
    }
}

/// `y += a * x`, element by element.
#[inline(always)]
fn axpy<const FMA: bool>(y: &mut [f32], a: f32, x: &[f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y = if FMA { a.mul_add(*x, *y) } else { *y + a * x };
    }
}

/// The evaluation networks shipped in `weights/` (built into the binary), one per rule at
/// most. A shipped file that does not load is a build defect: it is logged and left out, so
/// that the player falls back to the pattern evaluation rather than failing.
pub fn shipped() -> Vec<Arc<EvalNet>> {
    SHIPPED.clone()
}

/// Whether `--eval auto` uses the shipped network for `rule` (the gate's verdict, recorded
/// in docs/players.md): under freestyle, the rule the shipped network was trained for, and
/// under exact five and renju, where the same network measured stronger than the pattern
/// evaluation.
pub fn default_for(rule: Rule) -> bool {
    matches!(rule, Rule::Freestyle | Rule::Exact | Rule::Renju)
}

static SHIPPED: Lazy<Vec<Arc<EvalNet>>> = Lazy::new(|| {
    // Each file with the rules it is used under besides its own (docs/players.md has the
    // gates that put them there).
    let files: &[(&str, &[u8], &[Rule])] = &[(
        "gomoku_eval_freestyle.bin",
        include_bytes!("../../../../weights/gomoku_eval_freestyle.bin"),
        &[Rule::Exact, Rule::Renju],
    )];
    files
        .iter()
        .filter_map(|(name, b, also)| match EvalNet::from_bytes(b) {
            Ok(n) => Some(Arc::new(n.also_under(also))),
            Err(e) => {
                log::warn!("shipped evaluation network {name} unusable: {e}");
                None
            }
        })
        .collect()
});

/// Bits of a line key that hold [`REACH`] points.
const HALF_BITS: usize = 2 * REACH;

/// Half-line shape ids of a line key's [`REACH`] points (two bits each, [`Gomoku`]'s cell
/// values: 0 empty, 1 Black, 2 White, 3 off the board), per view (0: Black's, 1: White's)
/// and per order: `[view][0]` reads the nearest point from the low bits, `[view][1]` from
/// the high bits.
static HALF: Lazy<[[[u8; 1 << HALF_BITS]; 2]; 2]> = Lazy::new(|| {
    let mut t = [[[0u8; 1 << HALF_BITS]; 2]; 2];
    for (view, tv) in t.iter_mut().enumerate() {
        for (order, to) in tv.iter_mut().enumerate() {
            for (byte, id) in to.iter_mut().enumerate() {
                let mut n = 0;
                let mut v = 0u16;
                for i in 0..REACH {
                    let slot = if order == 0 { i } else { REACH - 1 - i };
                    let s = (byte >> (2 * slot)) & 3;
                    if s == 3 {
                        break;
                    }
                    let rel = match s {
                        0 => 0,
                        s if s - 1 == view => 1,
                        _ => 2,
                    };
                    v += rel * 3u16.pow(i as u32);
                    n += 1;
                }
                *id = (HALF_OFFSET[n] + v) as u8;
            }
        }
    }
    t
});

/// The point's own state per view, indexed by its cell value (off the board never asked).
const CENTRE: [[u16; 4]; 2] = [[0, 1, 2, 0], [0, 2, 1, 0]];

/// Bits of a line key around its point: [`REACH`] points on each side.
const WINDOW_BITS: usize = 2 * HALF_BITS;

/// Per view, the pair of half-line shapes ([`pair`]) of each window of a line key: the key's
/// bits 4..16, which hold offsets -3..=-1 (the nearest in the high bits) and +1..=+3 (the
/// nearest in the low bits). One lookup instead of two and the pair's arithmetic, in the
/// update's inner loop. The halves are unordered, so the direction's sign does not matter.
static PAIR_OF_WINDOW: Lazy<PairTable> = Lazy::new(|| {
    const MASK: usize = (1 << HALF_BITS) - 1;
    let mut t = [[0u16; 1 << WINDOW_BITS]; 2];
    for (view, tv) in t.iter_mut().enumerate() {
        for (w, p) in tv.iter_mut().enumerate() {
            let neg = HALF[view][1][w & MASK] as u16;
            let pos = HALF[view][0][(w >> HALF_BITS) & MASK] as u16;
            *p = pair(neg, pos);
        }
    }
    t
});

/// [`PAIR_OF_WINDOW`]'s type (taken once per update: each use of the lazy static checks it).
type PairTable = [[u16; 1 << WINDOW_BITS]; 2];

/// Shape codes of the on-board `cell` in direction `d` for both views (Black's, White's).
#[inline(always)]
fn codes_of(pairs: &PairTable, g: &Gomoku, cell: usize, d: usize) -> [u16; 2] {
    let w = (g.line_key(cell, d) >> 4) as usize & ((1 << WINDOW_BITS) - 1);
    let centre = g.cell_value(cell) as usize & 3;
    [0, 1].map(|view| CENTRE[view][centre] * PAIRS as u16 + pairs[view][w])
}

/// Which instruction set the accumulator's updates use.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Simd {
    /// Plain Rust (the compiler's baseline vectors).
    Scalar,
    /// 256-bit integer vectors.
    Avx2,
    /// 512-bit integer vectors (AVX-512BW).
    Avx512,
}

impl Simd {
    /// The best this processor has.
    pub fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            for s in [Simd::Avx512, Simd::Avx2] {
                if s.available() {
                    return s;
                }
            }
        }
        Simd::Scalar
    }

    /// Whether this processor can run it.
    pub fn available(self) -> bool {
        match self {
            Simd::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// The network's running sums for one board, kept in step with its moves: call
/// [`Accumulator::reset`] once, then [`Accumulator::played`] after every stone placed and
/// [`Accumulator::taken_back`] after every stone taken back; [`Accumulator::value`] reads
/// the evaluation.
///
/// Why lazily: a search makes many moves whose position it never evaluates (a table cut, a
/// win found by the threat checks, a forced block), and takes each back again. Moves are
/// only noted until a value is asked for; then the sums catch up with every noted move at
/// once, and what they overwrite is saved, so that taking those moves back copies it back
/// instead of computing the shapes again. A move taken back before it was applied costs
/// nothing.
#[derive(Clone)]
pub struct Accumulator {
    net: Arc<EvalNet>,
    simd: Simd,
    /// Padded cells of the board it was reset on.
    cells: usize,
    /// Per padded cell and view, the shape code of each direction.
    codes: Vec<[[u16; 4]; 2]>,
    /// Per view and padded cell, the point's `C` features (bias plus its four shapes).
    feats: Vec<i16>,
    /// Per view, the sum of the clipped features over the board (wrapping; read unsigned).
    sums: Vec<i16>,
    /// The cells of the stones placed since the reset and still on the board, in order.
    moves: Vec<u16>,
    /// How many of `moves` the codes, features and sums include.
    applied: usize,
    /// One per catch-up that applied moves, oldest first.
    frames: Vec<Frame>,
    /// Per point saved by a frame: the cell and its codes as they were (its two feature
    /// rows, Black's view first, are entry `k`'s `2 C` values of `saved_rows`).
    saved: Vec<(u16, [[u16; 4]; 2])>,
    /// The saved points' feature rows, `2 C` per entry of `saved`.
    saved_rows: Vec<i16>,
    /// Per frame, the sums at its start (`2 C` each).
    saved_sums: Vec<i16>,
    /// Per padded cell, the frame number that last saved it (saved once per frame).
    stamp: Vec<u32>,
    /// The current frame's number.
    epoch: u32,
}

/// One catch-up: the moves `moves[from..]` (up to the next frame's `from`) were applied,
/// and the points they changed were saved from `saved[saved_from..]`.
#[derive(Clone, Copy)]
struct Frame {
    from: usize,
    saved_from: usize,
}

impl Accumulator {
    /// An accumulator for `net` using the best instruction set available.
    pub fn new(net: Arc<EvalNet>) -> Accumulator {
        Accumulator::with_simd(net, Simd::detect())
    }

    /// An accumulator with a chosen instruction set (falls back to scalar where the
    /// processor lacks it).
    pub fn with_simd(net: Arc<EvalNet>, simd: Simd) -> Accumulator {
        let simd = if simd.available() { simd } else { Simd::Scalar };
        Accumulator {
            net,
            simd,
            cells: 0,
            codes: Vec::new(),
            feats: Vec::new(),
            sums: Vec::new(),
            moves: Vec::new(),
            applied: 0,
            frames: Vec::new(),
            saved: Vec::new(),
            saved_rows: Vec::new(),
            saved_sums: Vec::new(),
            stamp: Vec::new(),
            epoch: 0,
        }
    }

    /// The network.
    pub fn net(&self) -> &Arc<EvalNet> {
        &self.net
    }

    /// The instruction set in use.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// Recomputes everything for `g`.
    pub fn reset(&mut self, g: &Gomoku) {
        let c = self.net.channels;
        let cells = g.cell_range().end;
        self.cells = cells;
        self.codes.clear();
        self.codes.resize(cells, [[0; 4]; 2]);
        self.feats.clear();
        self.feats.resize(2 * cells * c, 0);
        self.sums.clear();
        self.sums.resize(2 * c, 0);
        self.moves.clear();
        self.applied = 0;
        self.frames.clear();
        self.saved.clear();
        self.saved_rows.clear();
        self.saved_sums.clear();
        self.stamp.clear();
        self.stamp.resize(cells, 0);
        self.epoch = 0;
        let pairs: &PairTable = &PAIR_OF_WINDOW;
        for m in 0..g.num_actions() {
            let cell = g.cell_of(m as crate::game::Move);
            for d in 0..4 {
                let codes = codes_of(pairs, g, cell, d);
                for (view, &code) in codes.iter().enumerate() {
                    self.codes[cell][view][d] = code;
                }
            }
            for view in 0..2 {
                let f = &mut self.feats[(view * cells + cell) * c..][..c];
                f.copy_from_slice(&self.net.bias);
                for d in 0..4 {
                    let code = self.codes[cell][view][d];
                    let t = &self.net.table[code as usize * c..][..c];
                    for (x, y) in f.iter_mut().zip(t) {
                        *x = x.wrapping_add(*y);
                    }
                }
                for (s, x) in self.sums[view * c..][..c].iter_mut().zip(f.iter()) {
                    *s = s.wrapping_add((*x).clamp(0, ACT_MAX));
                }
            }
        }
    }

    /// Notes that a stone was placed on the padded `cell` (call it after the move).
    #[inline]
    pub fn played(&mut self, cell: usize) {
        self.moves.push(cell as u16);
    }

    /// Takes back the last noted stone (call it after the board took it back).
    #[inline]
    pub fn taken_back(&mut self) {
        self.moves.pop();
        if self.applied > self.moves.len() {
            // The last frame applied this move (and maybe a few before it, which are noted
            // again as not applied).
            let Some(f) = self.frames.pop() else {
                return;
            };
            let c = self.net.channels;
            for (k, &(cell, codes)) in self.saved.iter().enumerate().skip(f.saved_from) {
                let cell = cell as usize;
                self.codes[cell] = codes;
                let rows = &self.saved_rows[k * 2 * c..][..2 * c];
                for view in 0..2 {
                    self.feats[(view * self.cells + cell) * c..][..c]
                        .copy_from_slice(&rows[view * c..][..c]);
                }
            }
            let at = self.frames.len() * 2 * c;
            self.sums.copy_from_slice(&self.saved_sums[at..]);
            self.saved.truncate(f.saved_from);
            self.saved_rows.truncate(f.saved_from * 2 * c);
            self.saved_sums.truncate(at);
            self.applied = f.from;
        }
    }

    /// Applies the noted moves that are not applied yet; `g` is the board with all of them.
    #[inline]
    fn catch_up(&mut self, g: &Gomoku) {
        if self.applied == self.moves.len() {
            return;
        }
        match self.simd {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_simd` keeps `Avx2` only where the processor reports AVX2.
            Simd::Avx2 => unsafe { self.catch_up_avx2(g) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_simd` keeps `Avx512` only where the processor reports AVX-512BW.
            Simd::Avx512 => unsafe { self.catch_up_avx512(g) },
            _ => self.catch_up_body(g),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn catch_up_avx2(&mut self, g: &Gomoku) {
        self.catch_up_body(g)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512bw")]
    unsafe fn catch_up_avx512(&mut self, g: &Gomoku) {
        self.catch_up_body(g)
    }

    /// The catch-up, compiled once per instruction set, with the common channel counts
    /// fixed at compile time (whole-register loops, fixed-size copies).
    #[inline(always)]
    fn catch_up_body(&mut self, g: &Gomoku) {
        match self.net.channels {
            16 => self.catch_up_c::<16>(g),
            32 => self.catch_up_c::<32>(g),
            _ => self.catch_up_c::<0>(g),
        }
    }

    /// The catch-up for `C` channels (0: the network's count, read at run time). Each
    /// point's shapes are computed from the board as it is now, so the order of the moves
    /// does not matter, and a shape two moves changed is moved once.
    #[inline(always)]
    fn catch_up_c<const C: usize>(&mut self, g: &Gomoku) {
        if self.epoch == u32::MAX {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
        self.frames.push(Frame {
            from: self.applied,
            saved_from: self.saved.len(),
        });
        self.saved_sums.extend_from_slice(&self.sums);
        let pairs: &PairTable = &PAIR_OF_WINDOW;
        for k in self.applied..self.moves.len() {
            let cell = self.moves[k] as usize;
            for d in 0..4 {
                self.refresh::<C>(pairs, g, cell, d);
                let step = g.delta(d);
                for sign in [-1isize, 1] {
                    let mut q = cell;
                    for _ in 0..REACH {
                        q = q.wrapping_add_signed(sign * step);
                        if g.cell_value(q) == crate::game::gomoku::pattern::WALL {
                            break;
                        }
                        self.refresh::<C>(pairs, g, q, d);
                    }
                }
            }
        }
        self.applied = self.moves.len();
    }

    /// Recomputes the shape of `cell` in direction `d` in both views and, where it changed,
    /// moves the point's features and the view's sum (saving the point first, once a frame).
    #[inline(always)]
    fn refresh<const C: usize>(&mut self, pairs: &PairTable, g: &Gomoku, cell: usize, d: usize) {
        let c = if C > 0 { C } else { self.net.channels };
        let new = codes_of(pairs, g, cell, d);
        let old = [self.codes[cell][0][d], self.codes[cell][1][d]];
        if old == new {
            return;
        }
        if self.stamp[cell] != self.epoch {
            self.stamp[cell] = self.epoch;
            self.saved.push((cell as u16, self.codes[cell]));
            for view in 0..2 {
                let f = &self.feats[(view * self.cells + cell) * c..][..c];
                self.saved_rows.extend_from_slice(f);
            }
        }
        for view in 0..2 {
            let (new, old) = (new[view], old[view]);
            if old == new {
                continue;
            }
            self.codes[cell][view][d] = new;
            let add = &self.net.table[new as usize * c..][..c];
            let sub = &self.net.table[old as usize * c..][..c];
            let f = &mut self.feats[(view * self.cells + cell) * c..][..c];
            let s = &mut self.sums[view * c..][..c];
            for i in 0..c {
                let before = f[i];
                let after = before.wrapping_add(add[i]).wrapping_sub(sub[i]);
                f[i] = after;
                s[i] = s[i]
                    .wrapping_add(after.clamp(0, ACT_MAX))
                    .wrapping_sub(before.clamp(0, ACT_MAX));
            }
        }
    }

    /// The logit of the side to move of `g` winning; `g` is the board with every noted move.
    pub fn value(&mut self, g: &Gomoku) -> f32 {
        self.catch_up(g);
        let c = self.net.channels;
        let me = g.to_move().index();
        let own = &self.sums[me * c..][..c];
        let other = &self.sums[(1 - me) * c..][..c];
        match self.simd {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `with_simd` keeps `Avx2` and `Avx512` only where the processor reports
            // them and FMA.
            Simd::Avx2 | Simd::Avx512 => unsafe { self.net.head_avx2(own, other) },
            _ => self.net.head::<false>(own, other),
        }
    }

    /// Per view (0 Black, 1 White), the unsigned sums: what [`EvalNet::evaluate`] adds up,
    /// after catching up with the noted moves on `g`.
    pub fn sums(&mut self, g: &Gomoku) -> [Vec<u16>; 2] {
        self.catch_up(g);
        let c = self.net.channels;
        [0, 1].map(|v| {
            self.sums[v * c..(v + 1) * c]
                .iter()
                .map(|&s| s as u16)
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Move;
    use crate::util::Rng;

    /// The sums of a fresh accumulator reset on `g` (scalar), per view.
    fn reference_sums(net: &EvalNet, g: &Gomoku) -> [Vec<u16>; 2] {
        let mut a = Accumulator::with_simd(Arc::new(net.clone()), Simd::Scalar);
        a.reset(g);
        a.sums(g)
    }

    /// The half-line ids cover 0..HALF_SHAPES exactly once per view and order over the
    /// keys that a board can hold (no point after the edge), and pairs are a bijection
    /// onto 0..PAIRS.
    #[test]
    fn half_shapes_are_a_bijection() {
        for view in 0..2 {
            for order in 0..2 {
                let mut seen = vec![0; HALF_SHAPES];
                for byte in 0..1usize << HALF_BITS {
                    let slots: Vec<usize> = (0..REACH)
                        .map(|i| {
                            let slot = if order == 0 { i } else { REACH - 1 - i };
                            (byte >> (2 * slot)) & 3
                        })
                        .collect();
                    let first_wall = slots.iter().position(|&s| s == 3).unwrap_or(REACH);
                    if slots[first_wall..].iter().all(|&s| s == 3) {
                        seen[HALF[view][order][byte] as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{view} {order}: {seen:?}");
            }
        }
        let mut seen = vec![0; PAIRS];
        for a in 0..HALF_SHAPES as u16 {
            for b in a..HALF_SHAPES as u16 {
                assert_eq!(pair(a, b), pair(b, a));
                seen[pair(a, b) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    fn random_game(size: usize, plies: usize, seed: u64) -> Vec<Move> {
        let mut g = Gomoku::new(size, size, Rule::Freestyle).unwrap();
        let mut rng = Rng::new(seed);
        let mut moves = Vec::new();
        while moves.len() < plies && g.outcome().is_none() {
            let mut legal = Vec::new();
            g.legal_moves(&mut legal);
            let m = legal[rng.below(legal.len())];
            g.play(m).unwrap();
            moves.push(m);
        }
        moves
    }

    /// Along random games with take-backs of one to three moves, on several board sizes
    /// (the edges matter), the sums equal the board walk's whenever they are read, however
    /// many moves were noted since the last read and however many of those were taken back
    /// unread, on every instruction set this processor has; and the values agree.
    #[test]
    fn incremental_sums_equal_the_board_walk() {
        for channels in [32, 48] {
            let net = Arc::new(EvalNet::random(Rule::Freestyle, channels, 16, 7));
            for simd in [Simd::Scalar, Simd::Avx2, Simd::Avx512] {
                if !simd.available() {
                    eprintln!("NOTICE: {simd:?} not available here; its update is not tested");
                    continue;
                }
                for (size, seed) in [(5, 1), (9, 2), (15, 3), (20, 4), (22, 5)] {
                    check_a_game(&net, simd, size, seed);
                }
            }
        }
    }

    fn check_a_game(net: &Arc<EvalNet>, simd: Simd, size: usize, seed: u64) {
        let mut g = Gomoku::new(size, size, Rule::Freestyle).unwrap();
        let mut acc = Accumulator::with_simd(net.clone(), simd);
        assert_eq!(acc.simd(), simd);
        acc.reset(&g);
        let moves = random_game(size, size * size / 2, seed);
        let mut rng = Rng::new(seed);
        let mut reads = 0;
        for &m in &moves {
            g.play(m).unwrap();
            acc.played(g.cell_of(m));
            // Read after about half the moves: the others pile up unread.
            if rng.below(2) == 0 {
                reads += 1;
                assert_eq!(acc.sums(&g), reference_sums(net, &g));
                let (v, r) = (acc.value(&g), net.evaluate(&g));
                assert!((v - r).abs() < 1e-4, "{v} vs {r}");
            }
            if rng.below(4) == 0 {
                let back = 1 + rng.below(3).min(g.stones() - 1);
                let mut taken = Vec::new();
                for _ in 0..back {
                    taken.push(g.history_cells().last().unwrap().0);
                    g.undo();
                    acc.taken_back();
                    if rng.below(2) == 0 {
                        assert_eq!(acc.sums(&g), reference_sums(net, &g));
                    }
                }
                for &cell in taken.iter().rev() {
                    g.play(g.move_of(cell)).unwrap();
                    acc.played(cell);
                }
            }
        }
        assert!(reads > 0);
        while g.stones() > 0 {
            g.undo();
            acc.taken_back();
        }
        let mut fresh = Accumulator::with_simd(net.clone(), simd);
        fresh.reset(&g);
        assert_eq!(acc.sums(&g), fresh.sums(&g), "back at the empty board");
    }

    /// The walk is an independent reference: it reads stones, not line keys; this checks
    /// it against the key-based codes on a board with stones at the edges.
    #[test]
    fn walk_and_keys_agree_at_the_edges() {
        let net = EvalNet::random(Rule::Freestyle, 16, 8, 3);
        let mut g = Gomoku::new(7, 7, Rule::Freestyle).unwrap();
        for m in [0, 6, 42, 48, 3, 21, 27, 45, 1, 13] {
            g.play(m).unwrap();
        }
        let mut acc = Accumulator::with_simd(Arc::new(net.clone()), Simd::Scalar);
        acc.reset(&g);
        assert!((acc.value(&g) - net.evaluate(&g)).abs() < 1e-5);
        // Different positions give different sums (the features see the stones).
        let mut h = g.clone();
        h.undo();
        assert_ne!(reference_sums(&net, &g), reference_sums(&net, &h));
    }

    /// The shipped freestyle network is built in and loads; it serves exact five and renju
    /// as well, and `auto` chooses it under those three rules only.
    #[test]
    fn the_shipped_network_loads() {
        let nets = shipped();
        assert_eq!(nets.len(), 1);
        assert_eq!(nets[0].rule(), Rule::Freestyle);
        assert!(nets[0].residual());
        for r in [Rule::Freestyle, Rule::Exact, Rule::Renju] {
            assert!(default_for(r), "{r:?}");
            assert!(nets[0].serves(r), "{r:?}");
        }
        for r in [Rule::Caro, Rule::CaroExact, Rule::FourT] {
            assert!(!default_for(r), "{r:?}");
            assert!(!nets[0].serves(r), "{r:?}");
        }
    }

    /// A loaded file serves its own rule only, whatever a shipped copy of it serves.
    #[test]
    fn a_loaded_file_serves_its_own_rule() {
        let net = EvalNet::random(Rule::Freestyle, 16, 4, 3);
        let loaded = EvalNet::from_bytes(&net.to_bytes()).unwrap();
        assert!(loaded.serves(Rule::Freestyle));
        assert!(!loaded.serves(Rule::Exact));
        let wider = loaded.also_under(&[Rule::Exact, Rule::Freestyle]);
        assert!(wider.serves(Rule::Exact) && wider.serves(Rule::Freestyle));
        assert!(!wider.serves(Rule::Renju));
        assert_eq!(wider.also, vec![Rule::Exact]);
    }

    /// The file round-trips, and every corruption is refused with a reason.
    #[test]
    fn weight_file_round_trip_and_refusals() {
        let net = EvalNet::random(Rule::Renju, 16, 4, 9);
        let b = net.to_bytes();
        assert_eq!(
            b.len(),
            8 + 16 + 12 + 2 * (NCODES * 16 + 16) + 4 * (4 * 32 + 4 + 16 + 4 + 4 + 1)
        );
        let back = EvalNet::from_bytes(&b).unwrap();
        assert_eq!(back.to_bytes(), b);
        assert_eq!(back.rule(), Rule::Renju);
        assert!(EvalNet::from_bytes(&b[..b.len() - 1]).is_err());
        let mut longer = b.clone();
        longer.push(0);
        assert!(EvalNet::from_bytes(&longer).is_err());
        let mut magic = b.clone();
        magic[0] = b'X';
        assert!(EvalNet::from_bytes(&magic).is_err());
        let mut rule = b.clone();
        rule[8] = b'?';
        assert!(EvalNet::from_bytes(&rule).is_err());
        let mut big = b.clone();
        big[36..38].copy_from_slice(&7000i16.to_le_bytes());
        let e = EvalNet::from_bytes(&big).unwrap_err();
        assert!(e.to_string().contains("beyond"), "{e}");
        let mut nan = b.clone();
        let at = b.len() - 4;
        nan[at..].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(EvalNet::from_bytes(&nan)
            .unwrap_err()
            .to_string()
            .contains("finite"));
        let mut chans = b.clone();
        chans[24..28].copy_from_slice(&20u32.to_le_bytes());
        assert!(EvalNet::from_bytes(&chans).is_err());
        assert!(EvalNet::from_bytes(&[]).is_err());
    }
}
