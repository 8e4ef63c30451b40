//! The self-play search: PUCT over proof costs (the paper's §3.3).
//!
//! Every node's value is an estimate of log10 of the cost of proving the OR player's win
//! (`proof` colour): the network's head of that colour, `0` at a terminal win of the OR
//! player, the top bin at any other terminal. Q is the mean of those estimates below a move,
//! normalised to [-1, 1] by the smallest and largest Q in the tree (the paper's eq. 3); the OR
//! player maximises `-Q + U` (it wants a small cost), the AND player `Q + U`. Without a
//! network every leaf gets priors spread evenly over the legal moves and the middle bin as
//! its value, so only terminal positions inform the search (iteration 0).

use std::sync::Arc;

use crate::game::{Color, Game, Move, Outcome};
use crate::nn::decode::{expectation, softmax};
use crate::nn::{Evaluator, NetKind, NetOutput};
use crate::util::Rng;

/// Settings of one search.
#[derive(Clone, Debug)]
pub struct SearchParams {
    /// Simulations.
    pub sims: usize,
    /// The OR player (whose proof cost the values estimate).
    pub proof: Color,
    /// Bins per head (the cost of "does not win" is `bins - 1`).
    pub bins: usize,
    /// Dirichlet noise at the root: concentration α (0: no noise).
    pub dirichlet_alpha: f64,
    /// Share of the noise in the root priors (AlphaZero's 0.25).
    pub noise_frac: f64,
}

#[derive(Clone, Debug)]
struct Node {
    mv: Move,
    prior: f32,
    visits: u32,
    cost_sum: f64,
    first: u32,
    count: u32,
    expanded: bool,
    terminal: Option<f32>,
}

impl Node {
    fn new(mv: Move, prior: f32) -> Node {
        Node {
            mv,
            prior,
            visits: 0,
            cost_sum: 0.0,
            first: 0,
            count: 0,
            expanded: false,
            terminal: None,
        }
    }
    fn mean(&self) -> f64 {
        self.cost_sum / f64::from(self.visits.max(1))
    }
}

/// The result of one search at the root.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// (move, visits) per root child.
    pub visits: Vec<(Move, u32)>,
    /// Mean proof cost at the root.
    pub root_cost: f32,
}

/// A leaf evaluator: the network (any kind; only PCN models give costs) or nothing.
pub struct Leaf {
    net: Option<Arc<dyn Evaluator>>,
    input: Vec<f32>,
    out: NetOutput,
    probs: Vec<f32>,
}

impl Leaf {
    /// A leaf evaluator over `net` (`None`: uniform priors, middle-bin values).
    pub fn new(net: Option<Arc<dyn Evaluator>>) -> Leaf {
        Leaf {
            net,
            input: Vec::new(),
            out: NetOutput::default(),
            probs: Vec::new(),
        }
    }

    /// Priors over `legal` (renormalised over them) and the proof cost of `proof` at `g`.
    fn eval<G: Game>(
        &mut self,
        g: &G,
        legal: &[Move],
        proof: Color,
        bins: usize,
        priors: &mut Vec<f32>,
    ) -> Result<f32, String> {
        priors.clear();
        let mid = (bins.saturating_sub(1)) as f32 / 2.0;
        let Some(net) = &self.net else {
            let p = 1.0 / legal.len().max(1) as f32;
            priors.resize(legal.len(), p);
            return Ok(mid);
        };
        let info = net.info();
        self.input.resize(info.input_len(), 0.0);
        g.encode_input(&mut self.input);
        net.evaluate(&self.input, 1, &mut self.out)
            .map_err(|e| e.to_string())?;
        self.probs.resize(info.actions, 0.0);
        softmax(&self.out.policy[..info.actions], &mut self.probs);
        let mut sum = 0.0;
        for &m in legal {
            let p = self.probs.get(m as usize).copied().unwrap_or(0.0);
            priors.push(p);
            sum += p;
        }
        if sum > 0.0 {
            priors.iter_mut().for_each(|p| *p /= sum);
        } else {
            let p = 1.0 / legal.len().max(1) as f32;
            priors.iter_mut().for_each(|x| *x = p);
        }
        Ok(match info.kind {
            NetKind::Pcn { bins: nb } => {
                let head = match proof {
                    Color::Black => &self.out.black_v[..nb],
                    Color::White => &self.out.white_v[..nb],
                };
                // Rescaled when the net's bins differ from the labels'.
                expectation(head) * (bins.max(2) - 1) as f32 / (nb.max(2) - 1) as f32
            }
            // An α0 net: a win for the OR player is cheap, a loss the top bin.
            NetKind::AlphaZero => {
                let v = self.out.value.first().copied().unwrap_or(0.0);
                let v_or = if g.to_move() == proof { v } else { -v };
                mid * (1.0 - v_or)
            }
        })
    }
}

/// Draws a Dirichlet(α, …, α) vector of length `n` (Marsaglia–Tsang gamma draws).
pub fn dirichlet(rng: &mut Rng, alpha: f64, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n).map(|_| gamma(rng, alpha)).collect();
    let s: f64 = v.iter().sum();
    if s > 0.0 && s.is_finite() {
        v.iter_mut().for_each(|x| *x /= s);
    } else {
        v.iter_mut().for_each(|x| *x = 1.0 / n.max(1) as f64);
    }
    v
}

fn normal(rng: &mut Rng) -> f64 {
    let u1 = rng.unit().max(1e-300);
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn gamma(rng: &mut Rng, alpha: f64) -> f64 {
    if alpha <= 0.0 {
        return 0.0;
    }
    if alpha < 1.0 {
        // Γ(α) = Γ(α + 1) · U^(1/α).
        let u = rng.unit().max(1e-300);
        return gamma(rng, alpha + 1.0) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.unit();
        if u < 1.0 - 0.0331 * x.powi(4) || u.max(1e-300).ln() < 0.5 * x * x + d * (1.0 - v + v.ln())
        {
            return d * v;
        }
    }
}

/// Runs one search from `root` and returns the root's visit counts.
pub fn search<G: Game>(
    root: &G,
    p: &SearchParams,
    leaf: &mut Leaf,
    rng: &mut Rng,
) -> Result<SearchResult, String> {
    let mut nodes = vec![Node::new(0, 1.0)];
    let mut g = root.clone();
    let mut legal = Vec::new();
    let mut priors = Vec::new();
    let mut path: Vec<usize> = Vec::with_capacity(64);
    let (mut qmin, mut qmax) = (f64::INFINITY, f64::NEG_INFINITY);
    let top = p.bins.saturating_sub(1) as f32;
    for sim in 0..p.sims.max(1) {
        path.clear();
        path.push(0);
        let mut cur = 0usize;
        let value: f32 = loop {
            if let Some(t) = nodes[cur].terminal {
                break t;
            }
            if !nodes[cur].expanded {
                let v = match g.outcome() {
                    Some(Outcome::Win(c)) if c == p.proof => Some(0.0),
                    Some(_) => Some(top),
                    None => None,
                };
                if let Some(t) = v {
                    nodes[cur].terminal = Some(t);
                    nodes[cur].expanded = true;
                    break t;
                }
                g.legal_moves(&mut legal);
                let v = leaf.eval(&g, &legal, p.proof, p.bins, &mut priors)?;
                if cur == 0 && p.dirichlet_alpha > 0.0 && legal.len() > 1 {
                    let noise = dirichlet(rng, p.dirichlet_alpha, legal.len());
                    for (pr, n) in priors.iter_mut().zip(noise) {
                        *pr = ((1.0 - p.noise_frac) * f64::from(*pr) + p.noise_frac * n) as f32;
                    }
                }
                let first = nodes.len() as u32;
                nodes.extend(legal.iter().zip(&priors).map(|(&m, &pr)| Node::new(m, pr)));
                nodes[cur].first = first;
                nodes[cur].count = legal.len() as u32;
                nodes[cur].expanded = true;
                break v;
            }
            let parent = &nodes[cur];
            let n_parent = f64::from(parent.visits.max(1));
            let c = 1.5 + ((n_parent + 19653.0) / 19652.0).floor().ln();
            let sqrt_n = n_parent.sqrt();
            let or_node = g.to_move() == p.proof;
            let parent_q = parent.mean();
            let (first, count) = (parent.first as usize, parent.count as usize);
            let mut best = first;
            let mut best_score = f64::NEG_INFINITY;
            for (i, ch) in nodes.iter().enumerate().skip(first).take(count) {
                let q = if ch.visits > 0 { ch.mean() } else { parent_q };
                let qn = if qmax > qmin {
                    2.0 * (q - qmin) / (qmax - qmin) - 1.0
                } else {
                    0.0
                };
                let u = c * f64::from(ch.prior) * sqrt_n / (1.0 + f64::from(ch.visits));
                let score = if or_node { -qn } else { qn } + u;
                if score > best_score {
                    best_score = score;
                    best = i;
                }
            }
            g.play_unchecked(nodes[best].mv);
            path.push(best);
            cur = best;
        };
        for &i in &path {
            let n = &mut nodes[i];
            n.visits += 1;
            n.cost_sum += f64::from(value);
            let m = n.mean();
            qmin = qmin.min(m);
            qmax = qmax.max(m);
        }
        for _ in 1..path.len() {
            g.undo();
        }
        if sim == 0 && nodes[0].terminal.is_some() {
            break;
        }
    }
    let r = &nodes[0];
    let visits = (r.first as usize..(r.first + r.count) as usize)
        .map(|i| (nodes[i].mv, nodes[i].visits))
        .collect();
    Ok(SearchResult {
        visits,
        root_cost: r.mean() as f32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::{Gomoku, Rule};

    #[test]
    fn dirichlet_sums_to_one() {
        let mut rng = Rng::new(3);
        for alpha in [0.05, 0.2, 1.0, 3.0] {
            let d = dirichlet(&mut rng, alpha, 50);
            assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            assert!(d.iter().all(|&x| (0.0..=1.0).contains(&x)));
        }
        // Small α concentrates the mass: the largest share is far above 1/50.
        let d = dirichlet(&mut rng, 0.05, 50);
        assert!(d.iter().cloned().fold(0.0, f64::max) > 0.2);
    }

    /// Black (the OR player) has four in a row with both ends open: the search without a
    /// network finds the winning move among 221 and spends most visits on the two wins.
    #[test]
    fn or_player_finds_a_win() {
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        for m in ["F8", "F10", "G8", "G10", "H8", "H10", "J8", "J10"] {
            let mv = g.parse_gtp(m).unwrap();
            g.play(mv).unwrap();
        }
        let p = SearchParams {
            sims: 600,
            proof: Color::Black,
            bins: 500,
            dirichlet_alpha: 0.0,
            noise_frac: 0.0,
        };
        let mut leaf = Leaf::new(None);
        let r = search(&g, &p, &mut leaf, &mut Rng::new(1)).unwrap();
        let best = r.visits.iter().max_by_key(|x| x.1).unwrap().0;
        let name = g.move_to_gtp(best);
        assert!(name == "E8" || name == "K8", "best {name}");
    }
}
