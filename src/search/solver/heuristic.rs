//! Heuristics for the solvers: priors over actions and a value, evaluated in batches (the
//! network issue plugs its α0 and PCN evaluators in through [`Heuristic`]).
//!
//! Without a network: [`UniformPlayout`] (uniform priors, random-playout value) for every
//! game, and [`ThreatPriors`] for Gomoku (priors from the pattern/threat scores of
//! [`crate::search::gomoku::greedy::cell_score`], optionally mixed with the learned pattern policy of
//! [`crate::search::gomoku::learn::patpolicy`]; a static value from the threat scores).

use super::CommonOptions;
use crate::game::gomoku::pattern::EMPTY;
use crate::game::gomoku::Gomoku;
use crate::game::{Game, Move, Outcome};
use crate::search::gomoku::greedy::{attack_defence, candidates, cell_score};
use crate::search::gomoku::learn::patpolicy::{PatternPolicy, BUILTIN};
use crate::search::gomoku::learn::softmax_into;
use crate::util::Rng;

/// One position's evaluation. Buffers are reused between calls (no per-node allocation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Prior per action (`Game::num_actions` entries; entries of illegal actions are ignored).
    /// Not necessarily normalised.
    pub policy: Vec<f32>,
    /// Value for the side to move, in [-1, 1] (+1: the side to move wins).
    pub value: f32,
    /// Proof-cost estimates (PCN heads, log10 units), indexed by colour: `cost[c]` estimates
    /// the cost of proving that colour `c` wins. `None` for heuristics without them.
    pub cost: Option<[f32; 2]>,
}

impl Evaluation {
    /// Resizes the policy for `n` actions and clears the rest.
    pub fn reset(&mut self, n: usize) {
        self.policy.clear();
        self.policy.resize(n, 0.0);
        self.value = 0.0;
        self.cost = None;
    }
}

/// How PCN proof costs enter MCTS values (`../shared/pcn/README.md` §8.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Categories per head: terminal losses for the prover cost `bins`, values are clamped
    /// to `[0, bins - 1]`.
    pub bins: usize,
    /// Per-edge addition `log10(b)` at the disprover's moves: `Some(b)` a constant ("max"
    /// models), `None` the number of legal moves at the parent ("heur" models).
    pub branching: Option<usize>,
}

/// A batch evaluator of positions. `out.len() == positions.len()`.
pub trait Heuristic<G: Game>: Send {
    /// A short name for reports (`uniform`, `threat`, `pcn-...`).
    fn name(&self) -> &'static str;

    /// Evaluates every position: priors and value (and costs where available).
    fn evaluate_batch(&mut self, positions: &[&G], out: &mut [Evaluation]);

    /// Priors only (DFPN move ordering): implementations with an expensive value (playouts)
    /// may skip it; the value and costs are then unspecified. Defaults to `evaluate_batch`.
    fn priors_batch(&mut self, positions: &[&G], out: &mut [Evaluation]) {
        self.evaluate_batch(positions, out);
    }

    /// Whether `evaluate_batch` fills [`Evaluation::cost`] (focused DFPN then initialises
    /// pn/dn from it).
    fn has_cost(&self) -> bool {
        false
    }

    /// PCN heuristics: how MCTS turns costs into values (None: use [`Evaluation::value`]).
    fn cost_model(&self) -> Option<CostModel> {
        None
    }

    /// Whether focused DFPN narrows its window by the value (AlphaZero networks:
    /// ratio `min(focus_ratio, 1 + value)`).
    fn value_window(&self) -> bool {
        false
    }

    /// Whether the priors and values are learned (a network) rather than static knowledge
    /// (uniform, threat tables, the Killall-Go order). MCTS stages its knowledge and sets
    /// its exploration by this: flat static priors need the cheap knowledge at once and
    /// less exploration.
    fn learned(&self) -> bool {
        false
    }

    /// An independent copy for another search thread (sharing caches/evaluators where it
    /// can), or `None` when the heuristic cannot be shared (the solver then runs one thread).
    fn fork(&self) -> Option<Box<dyn Heuristic<G>>> {
        None
    }
}

/// Plays uniformly random legal moves from `g` for at most `max_plies` plies and returns the
/// value for the side to move at `g` (+1 win, -1 loss, 0 draw or cut off).
pub fn random_playout<G: Game>(g: &G, rng: &mut Rng, max_plies: usize, buf: &mut Vec<Move>) -> f32 {
    let me = g.to_move();
    let mut p = g.clone();
    for _ in 0..max_plies {
        if p.outcome().is_some() {
            break;
        }
        p.legal_moves(buf);
        if buf.is_empty() {
            break;
        }
        let m = buf[rng.below(buf.len())];
        p.play_unchecked(m);
    }
    match p.outcome() {
        Some(Outcome::Win(c)) if c == me => 1.0,
        Some(Outcome::Win(_)) => -1.0,
        _ => 0.0,
    }
}

/// Uniform priors and random-playout values.
pub struct UniformPlayout {
    rng: Rng,
    plies: usize,
    buf: Vec<Move>,
}

impl UniformPlayout {
    /// Seeded from `opts.seed`; playouts of at most `opts.playout_plies` plies.
    pub fn new(opts: &CommonOptions) -> Self {
        UniformPlayout {
            rng: Rng::new(opts.seed ^ 0x5eed_0001),
            plies: opts.playout_plies,
            buf: Vec::with_capacity(512),
        }
    }
}

impl<G: Game> Heuristic<G> for UniformPlayout {
    fn name(&self) -> &'static str {
        "uniform"
    }

    fn fork(&self) -> Option<Box<dyn Heuristic<G>>> {
        let mut rng = self.rng.clone();
        Some(Box::new(UniformPlayout {
            rng: Rng::new(rng.next_u64()),
            plies: self.plies,
            buf: Vec::with_capacity(512),
        }))
    }

    fn evaluate_batch(&mut self, positions: &[&G], out: &mut [Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            self.priors_batch(std::slice::from_ref(g), std::slice::from_mut(e));
            e.value = random_playout(*g, &mut self.rng, self.plies, &mut self.buf);
        }
    }

    fn priors_batch(&mut self, positions: &[&G], out: &mut [Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            let n = g.num_actions();
            e.reset(n);
            g.legal_moves(&mut self.buf);
            let p = if self.buf.is_empty() {
                0.0
            } else {
                1.0 / self.buf.len() as f32
            };
            for &m in &self.buf {
                if let Some(x) = e.policy.get_mut(m as usize) {
                    *x = p;
                }
            }
        }
    }
}

/// Gomoku: priors from the pattern scores of both colours at each empty point (attack plus
/// defence, softmax-like), and a static value from the best scores of both sides.
pub struct ThreatPriors {
    buf: Vec<Move>,
    /// The learned pattern policy and its share of the prior (`Knowledge::patterns`).
    patterns: Option<(&'static PatternPolicy, f32)>,
    cells: Vec<usize>,
    z: Vec<f32>,
}

impl ThreatPriors {
    /// A heuristic for `opts` (deterministic: it has no random part). With
    /// `opts.knowledge.patterns` > 0 the learned pattern policy
    /// ([`crate::search::gomoku::learn::patpolicy`]) takes that share of the prior.
    pub fn new(opts: &CommonOptions) -> Self {
        let w = opts.knowledge.patterns;
        let patterns = if w > 0.0 {
            BUILTIN.as_ref().map(|p| (p, w.min(1.0)))
        } else {
            None
        };
        Self::with_patterns(patterns)
    }

    /// Threat priors mixed with `share` (0..=1) of the pattern policy `p` (an experiment's
    /// table instead of the shipped one).
    pub fn with_policy(p: &'static PatternPolicy, share: f32) -> Self {
        Self::with_patterns(Some((p, share.clamp(0.0, 1.0))))
    }

    fn with_patterns(patterns: Option<(&'static PatternPolicy, f32)>) -> Self {
        ThreatPriors {
            buf: Vec::with_capacity(512),
            patterns,
            cells: Vec::with_capacity(256),
            z: Vec::with_capacity(256),
        }
    }

    /// Mixes the pattern policy's softmax over the candidate points (empty points near a
    /// stone) into `e.policy` with weight `w`: `(1 - w) · threat prior + w · pattern prior`.
    fn mix_patterns(&mut self, g: &Gomoku, e: &mut Evaluation) {
        let Some((p, w)) = self.patterns else { return };
        if g.outcome().is_some() || g.forced_point().is_some() {
            return;
        }
        candidates(g, &mut self.cells);
        self.z.clear();
        self.z.extend(self.cells.iter().map(|&c| p.logit(g, c)));
        if !softmax_into(&mut self.z) {
            return;
        }
        for x in e.policy.iter_mut() {
            *x *= 1.0 - w;
        }
        for (&c, &x) in self.cells.iter().zip(&self.z) {
            if let Some(q) = e.policy.get_mut(g.move_of(c) as usize) {
                *q += w * x;
            }
        }
    }
}

/// Threat-table priors of the legal moves of `g` into `e.policy`; returns a static value
/// for the side to move in [-1, 1] from the best attacking scores of both sides (the side
/// to move gets the tempo).
pub fn threat_priors(g: &Gomoku, buf: &mut Vec<Move>, e: &mut Evaluation) -> f32 {
    e.reset(g.num_actions());
    g.legal_moves(buf);
    if buf.is_empty() {
        return 0.0;
    }
    let me = g.to_move();
    let mut total = 0.0f32;
    let (mut best_me, mut best_opp) = (0i32, 0i32);
    for &m in buf.iter() {
        let c = g.cell_of(m);
        if g.cell_value(c) != EMPTY {
            continue;
        }
        let (sm, so) = (cell_score(g, c, me), cell_score(g, c, me.opp()));
        best_me = best_me.max(sm);
        best_opp = best_opp.max(so);
        let s = attack_defence(sm, so);
        // Compress the score range (1 .. 100000) so that quiet moves keep some prior.
        let w = 1.0 + s.max(0.0).sqrt();
        e.policy[m as usize] = w;
        total += w;
    }
    if total > 0.0 {
        for &m in buf.iter() {
            e.policy[m as usize] /= total;
        }
    }
    let d = (best_me as f32 * 1.5 - best_opp as f32) / 600.0;
    d.tanh()
}

impl Heuristic<Gomoku> for ThreatPriors {
    fn name(&self) -> &'static str {
        "threat"
    }

    fn fork(&self) -> Option<Box<dyn Heuristic<Gomoku>>> {
        // Deterministic and stateless apart from scratch: a fresh copy is the same heuristic.
        Some(Box::new(ThreatPriors::with_patterns(self.patterns)))
    }

    fn evaluate_batch(&mut self, positions: &[&Gomoku], out: &mut [Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            // A static value: random playouts are too noisy in Gomoku, so a solver's result
            // would depend on the playouts' luck.
            e.value = threat_priors(g, &mut self.buf, e);
            self.mix_patterns(g, e);
        }
    }

    fn priors_batch(&mut self, positions: &[&Gomoku], out: &mut [Evaluation]) {
        for (g, e) in positions.iter().zip(out.iter_mut()) {
            threat_priors(g, &mut self.buf, e);
            self.mix_patterns(g, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::Rule;
    use crate::search::solver::knowledge::Knowledge;

    fn opts(patterns: f32) -> CommonOptions {
        CommonOptions {
            knowledge: Knowledge {
                patterns,
                ..Knowledge::default()
            },
            ..CommonOptions::default()
        }
    }

    #[test]
    fn pattern_share_mixes_the_learned_policy_into_the_threat_priors() {
        let mut g = Gomoku::new(15, 15, Rule::FourT).unwrap();
        for m in ["H8", "J9", "J8", "G8"] {
            g.play(g.parse_gtp(m).unwrap()).unwrap();
        }
        let eval = |w: f32| {
            let mut e = vec![Evaluation::default()];
            ThreatPriors::new(&opts(w)).evaluate_batch(&[&g], &mut e);
            e.pop().unwrap()
        };
        let (off, half, full) = (eval(0.0), eval(0.5), eval(1.0));
        // Off: exactly the threat priors.
        let mut plain = Evaluation::default();
        let v = threat_priors(&g, &mut Vec::new(), &mut plain);
        assert_eq!(off.policy, plain.policy);
        assert_eq!(off.value, v);
        // Full share: all the mass on the candidates near the stones, none far away.
        let a1 = g.parse_gtp("A1").unwrap() as usize;
        assert!(off.policy[a1] > 0.0);
        assert_eq!(full.policy[a1], 0.0);
        let total: f32 = full.policy.iter().sum();
        assert!((total - 1.0).abs() < 1e-4, "{total}");
        // Half: the average of the two, point by point; the value is untouched.
        for i in 0..off.policy.len() {
            let want = 0.5 * off.policy[i] + 0.5 * full.policy[i];
            assert!((half.policy[i] - want).abs() < 1e-5, "point {i}");
        }
        assert_eq!(half.value, off.value);
    }
}
