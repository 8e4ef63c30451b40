//! The manager's AND/OR tree: proof and disproof numbers for the prover, the positions out
//! with a job (flagged: the selection goes around them), the workers' sub-proofs, and the
//! merged solution tree.
//!
//! Numbers follow DFPN's conventions ([`crate::search::solver::dfpn`]): at the prover's
//! (OR) nodes `pn = min pn(child)`, `dn = Σ dn(child)`; at the opponent's (AND) nodes
//! `pn = Σ pn(child)`, `dn = min dn(child)`. A new leaf starts from its mobility (an OR leaf
//! `(1, moves)`, an AND leaf `(moves, 1)`), and the number its parent's mover selects by
//! (pn at OR parents, dn at AND parents) grows with its rank in the move order, as in focused
//! DFPN with ordering hints, so that the manager does not spread jobs evenly over every move.

use super::super::solver::tt::INF;
use super::super::solver::{Evaluation, Heuristic, ProofNode, ProofTree, SolveResult, SolverGame};
use crate::game::{Color, Move, Outcome};
use crate::util::Rng;

const NONE: u32 = u32::MAX;

/// Ordering-key points per factor e of a fresh child's initial number (as focused DFPN).
const INIT_SCALE: f32 = 30.0;
/// Largest factor of the rank on a fresh child's initial number.
const INIT_MAX: f32 = 40.0;
/// At the prover's nodes the random choice is among children whose proof number is at most
/// this factor above the best one (and among the best `top_k`).
const TOP_SPREAD: f64 = 1.5;

#[derive(Clone, Debug)]
struct Node {
    parent: u32,
    mv: Move,
    /// The prover is to move.
    or: bool,
    pn: u64,
    dn: u64,
    /// Children are `first..first + count` (set once, at the expansion).
    first: u32,
    count: u32,
    expanded: bool,
    /// A finished game (its numbers say who won).
    terminal: bool,
    /// The job out on this node.
    job: Option<u64>,
    /// An open leaf below this node can take a job.
    avail: bool,
    /// Index of the worker's sub-proof in [`Tree::proofs`].
    proof: u32,
    /// The worker that last answered a job here or at the parent (affinity).
    owner: u32,
    /// Solver nodes spent on jobs in this subtree.
    effort: u64,
    /// Proven by a worker's table at an expansion; its sub-proof is still to be fetched.
    pending: bool,
    /// Jobs sent here so far.
    jobs: u32,
}

impl Node {
    fn solved(&self) -> bool {
        self.pn == 0 || self.dn == 0
    }
}

/// The manager's tree for one problem (see the module docs).
pub struct Tree<G: SolverGame> {
    root: G,
    prover: Color,
    nodes: Vec<Node>,
    proofs: Vec<ProofTree>,
    rng: Rng,
    top_k: usize,
    moves: Vec<Move>,
    scores: Vec<i32>,
    eval: Vec<Evaluation>,
}

impl<G: SolverGame> Tree<G> {
    /// A tree holding only `root` (with its history), for `prover`.
    pub fn new(root: G, prover: Color, seed: u64, top_k: usize) -> Tree<G> {
        let mut node = Node {
            parent: NONE,
            mv: 0,
            or: root.to_move() == prover,
            pn: 1,
            dn: 1,
            first: 0,
            count: 0,
            expanded: false,
            terminal: false,
            job: None,
            avail: true,
            proof: NONE,
            owner: NONE,
            effort: 0,
            pending: false,
            jobs: 0,
        };
        if let Some(o) = root.outcome() {
            node.terminal = true;
            (node.pn, node.dn) = terminal_numbers(o, prover);
            node.avail = false;
        }
        Tree {
            root,
            prover,
            nodes: vec![node],
            proofs: Vec::new(),
            rng: Rng::new(seed ^ 0x6a09_e667_f3bc_c908),
            top_k: top_k.max(1),
            moves: Vec::new(),
            scores: Vec::new(),
            eval: vec![Evaluation::default()],
        }
    }

    /// Nodes in the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty (never: the root is always there).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The root's (pn, dn).
    pub fn root_numbers(&self) -> (u64, u64) {
        (self.nodes[0].pn, self.nodes[0].dn)
    }

    /// Whether the root is solved.
    pub fn solved(&self) -> bool {
        self.nodes[0].solved()
    }

    /// The root's value for the prover.
    pub fn result(&self) -> SolveResult {
        let r = &self.nodes[0];
        if r.pn == 0 {
            SolveResult::Win
        } else if r.dn == 0 {
            SolveResult::Loss
        } else {
            SolveResult::Unknown
        }
    }

    /// Expands the root (the manager always owns it, so the first jobs go to its
    /// children and every worker has work at once).
    pub fn expand_root(&mut self, heuristic: &mut dyn Heuristic<G>) {
        if !self.nodes[0].expanded && !self.nodes[0].solved() {
            self.expand(0, heuristic, &[]);
        }
    }

    /// The moves from the root to node `n`.
    pub fn path(&self, n: u32) -> Vec<Move> {
        let mut p = Vec::new();
        let mut i = n;
        while i != 0 && i != NONE {
            p.push(self.nodes[i as usize].mv);
            i = self.nodes[i as usize].parent;
        }
        p.reverse();
        p
    }

    /// The position of node `n` (the root with the path played: its history is real).
    pub fn position(&self, n: u32) -> G {
        let mut g = self.root.clone();
        for m in self.path(n) {
            g.play_unchecked(m);
        }
        g
    }

    /// Marks node `n` as out with job `job` (or back, with `None`).
    pub fn set_job(&mut self, n: u32, job: Option<u64>) {
        let node = &mut self.nodes[n as usize];
        if job.is_some() {
            node.jobs = node.jobs.saturating_add(1);
        }
        node.job = job;
        self.update_from(n);
    }

    /// The worker that answered here or at the parent, for affinity.
    pub fn owner(&self, n: u32) -> Option<usize> {
        let node = &self.nodes[n as usize];
        let o = if node.owner != NONE {
            node.owner
        } else if node.parent != NONE {
            self.nodes[node.parent as usize].owner
        } else {
            NONE
        };
        (o != NONE).then_some(o as usize)
    }

    /// Records the worker that answered at `n`.
    pub fn set_owner(&mut self, n: u32, worker: usize) {
        self.nodes[n as usize].owner = worker.min(NONE as usize - 1) as u32;
    }

    /// Adds a job's nodes to the effort of `n` and its ancestors.
    pub fn add_effort(&mut self, n: u32, nodes: u64) {
        let mut i = n;
        while i != NONE {
            let node = &mut self.nodes[i as usize];
            node.effort = node.effort.saturating_add(nodes);
            i = node.parent;
        }
    }

    /// Whether `n` or one of its ancestors is solved (a job there is no longer needed).
    pub fn settled(&self, n: u32) -> bool {
        let mut i = n;
        while i != NONE {
            let node = &self.nodes[i as usize];
            if node.solved() {
                return true;
            }
            i = node.parent;
        }
        false
    }

    /// The leaf for the next job with its thresholds: down from the root as DFPN's MID goes
    /// (at the prover's nodes one of the best few children by proof number, random among
    /// them, at the opponent's nodes the child with the smallest disproof number; each
    /// child's thresholds from its parent's and the second-best sibling by the 1+ε trick),
    /// only through nodes with an open leaf below that is not out with a job. `None` when
    /// every open leaf is out.
    pub fn select(&mut self) -> Option<(u32, u64, u64)> {
        if !self.nodes[0].avail {
            return None;
        }
        let (mut tp, mut td) = (INF, INF);
        let mut n = 0u32;
        loop {
            let node = &self.nodes[n as usize];
            if !node.expanded {
                return Some((n, tp, td));
            }
            let (first, count, or, npn, ndn) = (node.first, node.count, node.or, node.pn, node.dn);
            let kids = first..first + count;
            let pick = if or {
                let mut best: Vec<(u64, u32)> = kids
                    .clone()
                    .filter(|&c| self.nodes[c as usize].avail)
                    .map(|c| (self.nodes[c as usize].pn, c))
                    .collect();
                best.sort_by_key(|&(pn, c)| (pn, c));
                let top = best.first()?.0;
                let limit = (top as f64 * TOP_SPREAD).ceil() as u64;
                let k = best
                    .iter()
                    .take(self.top_k)
                    .take_while(|&&(pn, _)| pn <= limit)
                    .count()
                    .max(1);
                best[self.rng.below(k)].1
            } else {
                kids.clone()
                    .filter(|&c| self.nodes[c as usize].avail)
                    .min_by_key(|&c| (self.nodes[c as usize].dn, c))?
            };
            let c = &self.nodes[pick as usize];
            // The second-best sibling, unsolved ones only (as DFPN's combine).
            let second = kids
                .filter(|&k| k != pick)
                .map(|k| &self.nodes[k as usize])
                .filter(|k| !k.solved())
                .map(|k| if or { k.pn } else { k.dn })
                .min()
                .unwrap_or(INF);
            let (ctp, ctd) = if or {
                let ctd = if td >= INF {
                    INF
                } else {
                    td.saturating_sub(ndn).saturating_add(c.dn)
                };
                (tp.min(grow(second)), ctd)
            } else {
                let ctp = if tp >= INF {
                    INF
                } else {
                    tp.saturating_sub(npn).saturating_add(c.pn)
                };
                (ctp, td.min(grow(second)))
            };
            // A job always gets room to work: flagged siblings can make the threshold the
            // child's own number.
            tp = ctp.max(c.pn.saturating_add(1)).min(INF);
            td = ctd.max(c.dn.saturating_add(1)).min(INF);
            n = pick;
        }
    }

    /// Jobs sent to node `n` so far.
    pub fn jobs_at(&self, n: u32) -> u32 {
        self.nodes[n as usize].jobs
    }

    /// A worker's numbers for leaf `n` after a job that ended unknown.
    pub fn set_numbers(&mut self, n: u32, pn: u64, dn: u64) {
        let node = &mut self.nodes[n as usize];
        node.pn = pn.clamp(1, INF - 1);
        node.dn = dn.clamp(1, INF - 1);
        self.update_from(n);
    }

    /// Expands leaf `n`: every legal move becomes a child, ordered by `heuristic`'s priors
    /// (and the game's static order where it has one), with initial numbers from mobility
    /// and rank; finished games are solved at once. `known` holds a worker's numbers for
    /// some children (move, pn, dn; [`crate::search::solver::Solver::child_numbers`]): those
    /// start from them instead: a disproven one is lost at once (a loss needs no proof), a
    /// proven one is won at once with its sub-proof *pending*: it is fetched (a job to the
    /// worker whose tables hold it) only if the node ends up in the merged proof
    /// ([`Tree::pending_proofs`]).
    pub fn expand(&mut self, n: u32, heuristic: &mut dyn Heuristic<G>, known: &[(Move, u64, u64)]) {
        if self.nodes[n as usize].expanded || self.nodes[n as usize].terminal {
            return;
        }
        let mut g = self.position(n);
        let mut moves = std::mem::take(&mut self.moves);
        g.legal_moves(&mut moves);
        let keys = self.order_keys(&g, &moves, heuristic);
        let mut order: Vec<(Move, f32)> = moves.iter().copied().zip(keys).collect();
        order.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        let top = order.first().map_or(0.0, |o| o.1);
        let parent_or = self.nodes[n as usize].or;
        let first = self.nodes.len() as u32;
        for &(m, key) in &order {
            g.play_unchecked(m);
            let mut child = Node {
                parent: n,
                mv: m,
                or: g.to_move() == self.prover,
                pn: 1,
                dn: 1,
                first: 0,
                count: 0,
                expanded: false,
                terminal: false,
                job: None,
                avail: true,
                proof: NONE,
                owner: self.nodes[n as usize].owner,
                effort: 0,
                pending: false,
                jobs: 0,
            };
            if let Some(o) = g.outcome() {
                child.terminal = true;
                (child.pn, child.dn) = terminal_numbers(o, self.prover);
                child.avail = false;
            } else if let Some(&(_, pn, dn)) = known.iter().find(|k| k.0 == m) {
                if dn == 0 {
                    (child.pn, child.dn) = (INF, 0);
                } else if pn == 0 {
                    child.pending = true;
                    (child.pn, child.dn) = (0, INF);
                } else {
                    (child.pn, child.dn) = (pn.min(INF - 1), dn.min(INF - 1));
                }
                child.avail = pn != 0 && dn != 0;
            } else {
                let mob = (g.mobility() as u64).max(1);
                (child.pn, child.dn) = if child.or { (1, mob) } else { (mob, 1) };
                let f = ((top - key) / INIT_SCALE).exp().min(INIT_MAX) as f64;
                if parent_or {
                    child.pn = ((child.pn as f64 * f) as u64).max(1);
                } else {
                    child.dn = ((child.dn as f64 * f) as u64).max(1);
                }
            }
            g.undo();
            self.nodes.push(child);
        }
        self.moves = moves;
        let node = &mut self.nodes[n as usize];
        node.first = first;
        node.count = order.len() as u32;
        node.expanded = true;
        self.update_from(n);
    }

    /// Ordering keys of `moves` at `g` (larger first), on the static score's scale: 20
    /// points per factor e of the prior.
    fn order_keys(&mut self, g: &G, moves: &[Move], heuristic: &mut dyn Heuristic<G>) -> Vec<f32> {
        let learned = heuristic.learned();
        let use_priors = learned || !G::ORDER_HINTS;
        let mut keys = vec![0.0f32; moves.len()];
        if use_priors {
            heuristic.priors_batch(&[g], &mut self.eval[..1]);
            let pol = &self.eval[0].policy;
            for (k, &m) in keys.iter_mut().zip(moves) {
                let p = pol.get(m as usize).copied().unwrap_or(0.0);
                *k += 20.0 * p.max(1e-9).ln();
            }
        }
        if G::ORDER_HINTS {
            g.order_scores(moves, &mut self.scores);
            for (k, s) in keys.iter_mut().zip(&self.scores) {
                *k += *s as f32;
            }
        }
        keys
    }

    /// Records a worker's answer at leaf `n`: `result` is a win (with its sub-proof when one
    /// was asked for) or a loss for the prover.
    pub fn solve_leaf(&mut self, n: u32, result: SolveResult, proof: Option<ProofTree>) {
        let node = &mut self.nodes[n as usize];
        match result {
            SolveResult::Win => {
                (node.pn, node.dn) = (0, INF);
                if let Some(p) = proof {
                    node.proof = self.proofs.len() as u32;
                    self.proofs.push(p);
                }
            }
            SolveResult::Loss => (node.pn, node.dn) = (INF, 0),
            SolveResult::Unknown => return,
        }
        self.update_from(n);
    }

    /// Recomputes `n` and its ancestors.
    fn update_from(&mut self, n: u32) {
        let mut i = n;
        while i != NONE {
            self.recompute(i);
            i = self.nodes[i as usize].parent;
        }
    }

    fn recompute(&mut self, i: u32) {
        let node = &self.nodes[i as usize];
        if !node.expanded {
            let avail = !node.solved() && node.job.is_none() && !node.terminal;
            self.nodes[i as usize].avail = avail;
            return;
        }
        if node.solved() && node.terminal {
            return;
        }
        let (first, count, or) = (node.first as usize, node.count as usize, node.or);
        let kids = &self.nodes[first..first + count];
        let (mut min_sel, mut sum) = (INF, 0u64);
        let mut avail = false;
        for c in kids {
            let (sel, add) = if or { (c.pn, c.dn) } else { (c.dn, c.pn) };
            min_sel = min_sel.min(sel);
            sum = sum.saturating_add(add).min(INF);
            avail |= c.avail;
        }
        let (mut pn, mut dn) = if or { (min_sel, sum) } else { (sum, min_sel) };
        if count == 0 {
            // No legal move but not finished: cannot happen under the game trait (a
            // position without moves is over); treat it as lost for the side to move.
            (pn, dn) = if or { (INF, 0) } else { (0, INF) };
        }
        if pn == 0 {
            dn = INF;
        } else if dn == 0 {
            pn = INF;
        }
        let node = &mut self.nodes[i as usize];
        node.pn = pn;
        node.dn = dn;
        node.avail = avail && pn != 0 && dn != 0;
    }

    /// The root move: the proven one for a win with the prover to move; otherwise at the
    /// prover's turn the smallest proof number (the most worked-on among equals), at the
    /// opponent's the smallest disproof number. `None` before the root is expanded.
    pub fn best_move(&self) -> Option<Move> {
        let r = &self.nodes[0];
        if !r.expanded || r.count == 0 {
            return None;
        }
        let kids = &self.nodes[r.first as usize..(r.first + r.count) as usize];
        let pick = if r.or {
            if r.dn == 0 {
                // Lost: the move whose refutation took the most work.
                kids.iter().max_by_key(|c| c.effort)
            } else {
                kids.iter()
                    .min_by(|a, b| a.pn.cmp(&b.pn).then(b.effort.cmp(&a.effort)))
            }
        } else {
            kids.iter()
                .min_by(|a, b| a.dn.cmp(&b.dn).then(b.effort.cmp(&a.effort)))
        };
        pick.map(|c| c.mv)
    }

    /// The nodes of the would-be merged proof (the root is won) whose sub-proofs are still
    /// pending, first ones first.
    pub fn pending_proofs(&self) -> Vec<u32> {
        let mut out = Vec::new();
        if self.result() != SolveResult::Win {
            return out;
        }
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if node.pending {
                out.push(n);
                continue;
            }
            if node.terminal || node.proof != NONE || !node.expanded {
                continue;
            }
            let kids = node.first..node.first + node.count;
            if node.or {
                if let Some(c) = kids.clone().find(|&c| self.nodes[c as usize].pn == 0) {
                    stack.push(c);
                }
            } else {
                stack.extend(kids.rev());
            }
        }
        out
    }

    /// Whether node `n` waits for its sub-proof.
    pub fn is_pending(&self, n: u32) -> bool {
        self.nodes[n as usize].pending
    }

    /// A pending node's sub-proof arrived.
    pub fn attach_proof(&mut self, n: u32, proof: ProofTree) {
        let node = &mut self.nodes[n as usize];
        node.pending = false;
        node.proof = self.proofs.len() as u32;
        self.proofs.push(proof);
    }

    /// A pending node's proof could not be had after all: it is an open leaf again (its
    /// ancestors are unsolved again as far as it decided them).
    pub fn reopen(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        node.pending = false;
        (node.pn, node.dn) = (1, 1);
        self.update_from(n);
    }

    /// The proven move at the root when the root itself was proven by one job (never
    /// expanded) with the prover to move, from that job's sub-proof.
    pub fn proof_root_move(&self) -> Option<Move> {
        let r = &self.nodes[0];
        if r.expanded || !r.or || r.pn != 0 || r.proof == NONE {
            return None;
        }
        let p = self.proofs.get(r.proof as usize)?;
        p.nodes.first()?.children.first().map(|c| c.0)
    }

    /// The merged solution tree of a proven win: the manager's tree (one proven move at the
    /// prover's nodes, every move at the opponent's) with each worker's sub-proof grafted at
    /// its leaf. `None` for other results, when a proven leaf has no sub-proof (workers ran
    /// without proofs), or past `max_nodes` nodes.
    pub fn proof(&self, max_nodes: usize) -> Option<ProofTree> {
        if self.result() != SolveResult::Win {
            return None;
        }
        let mut out = ProofTree {
            prover: self.prover,
            result: SolveResult::Win,
            nodes: vec![ProofNode::default()],
        };
        let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
        while let Some((n, oi)) = stack.pop() {
            if out.nodes.len() > max_nodes {
                return None;
            }
            let node = &self.nodes[n as usize];
            if node.pn != 0 {
                return None;
            }
            if node.terminal {
                continue;
            }
            if node.proof != NONE {
                let sub = &self.proofs[node.proof as usize];
                if sub.nodes.is_empty() || sub.prover != self.prover {
                    return None;
                }
                // Sub-node i > 0 goes to base + i - 1; its root is `oi`.
                let base = out.nodes.len() as u32;
                let map = |j: u32| if j == 0 { oi } else { base + j - 1 };
                for (k, sn) in sub.nodes.iter().enumerate() {
                    let kids: Vec<(Move, u32)> =
                        sn.children.iter().map(|&(m, j)| (m, map(j))).collect();
                    if k == 0 {
                        out.nodes[oi as usize].children = kids;
                    } else {
                        out.nodes.push(ProofNode { children: kids });
                    }
                }
                continue;
            }
            if !node.expanded {
                return None;
            }
            let kids = node.first..node.first + node.count;
            let chosen: Vec<u32> = if node.or {
                vec![kids.clone().find(|&c| self.nodes[c as usize].pn == 0)?]
            } else {
                kids.collect()
            };
            for c in chosen {
                let idx = out.nodes.len() as u32;
                out.nodes.push(ProofNode::default());
                out.nodes[oi as usize]
                    .children
                    .push((self.nodes[c as usize].mv, idx));
                stack.push((c, idx));
            }
        }
        (out.nodes.len() <= max_nodes).then_some(out)
    }
}

/// DFPN's 1+ε growth of a sibling's number into a threshold.
fn grow(x: u64) -> u64 {
    if x >= INF {
        INF
    } else {
        ((x as f64 * (1.0 + EPSILON)).ceil() as u64).max(x + 1)
    }
}

/// The 1+ε trick's ε for jobs: larger than focused DFPN's own 0.25, because a job that
/// leaves its node early costs a round trip and a new descent from the job's root (1.0 beat
/// 0.25 on all three positions tried, docs/notebook/2026-12-01-job-level.md).
const EPSILON: f64 = 1.0;

/// A finished game's numbers for `prover`.
fn terminal_numbers(o: Outcome, prover: Color) -> (u64, u64) {
    if o == Outcome::Win(prover) {
        (0, INF)
    } else {
        (INF, 0)
    }
}
