//! A generic UCT player for any [`Game`]: UCB1 selection, random playouts and MCTS-solver
//! proven values.
//!
//! The tree is a real tree (no transpositions), so a value proven in it is exact even for
//! history-dependent rules such as Killall-Go's situational superko: a node is proven only
//! from terminal positions reached by actual play, and the proof climbs by the AND/OR rule
//! (a node is lost for the player who moved into it as soon as one reply wins for the
//! opponent; it is decided once every reply is decided). Unproven values never become
//! proofs, so [`SearchResult::proven`] never claims an unproven win.
//!
//! Playouts choose uniformly random legal moves (a few random probes, then the full legal
//! list), pass only when no board move is left, and stop after
//! [`UctOptions::playout_plies`] plies (counted as a draw). Every random choice comes from one
//! seeded [`Rng`], so a search under a node limit is deterministic.
//!
//! Progress: [`SearchEvent::Analysis`] with per-candidate statistics about every
//! [`UctOptions::report_every`] and at the end; [`SearchEvent::Proven`] when the root is
//! decided (the search then stops).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::{Budget, Candidate, Limits, SearchEvent, SearchResult, Searcher};
use crate::game::{Color, Game, Move, Outcome};
use crate::util::Rng;

/// Settings of the UCT player.
#[derive(Clone, Debug)]
pub struct UctOptions {
    /// Seed of every random choice.
    pub seed: u64,
    /// UCB1 exploration constant (rewards are in 0..1).
    pub exploration: f64,
    /// Largest tree (nodes); beyond it leaves are no longer expanded.
    pub max_nodes: usize,
    /// Longest playout in plies; a playout cut there counts as a draw.
    pub playout_plies: usize,
    /// Time between [`SearchEvent::Analysis`] reports.
    pub report_every: Duration,
    /// Longest principal variation reported per candidate.
    pub pv_len: usize,
}

impl Default for UctOptions {
    fn default() -> Self {
        UctOptions {
            seed: 1,
            exploration: 1.0,
            max_nodes: 2_000_000,
            playout_plies: 600,
            report_every: Duration::from_millis(40),
            pv_len: 10,
        }
    }
}

/// Game-theoretic value of a node for the player who moved into it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Proven {
    Unknown,
    Loss,
    Draw,
    Win,
}

impl Proven {
    fn reward(self) -> Option<f64> {
        match self {
            Proven::Unknown => None,
            Proven::Loss => Some(0.0),
            Proven::Draw => Some(0.5),
            Proven::Win => Some(1.0),
        }
    }
    /// The value for the other player.
    fn flip(self) -> Proven {
        match self {
            Proven::Loss => Proven::Win,
            Proven::Win => Proven::Loss,
            p => p,
        }
    }
    fn of_outcome(o: Outcome, mover: Color) -> Proven {
        match o {
            Outcome::Win(c) if c == mover => Proven::Win,
            Outcome::Win(_) => Proven::Loss,
            Outcome::Draw => Proven::Draw,
        }
    }
}

#[derive(Clone, Debug)]
struct Node {
    mv: Move,
    parent: u32,
    first_child: u32,
    num_children: u32,
    expanded: bool,
    visits: u32,
    /// Sum of rewards for the player who moved into this node.
    wins: f64,
    proven: Proven,
}

impl Node {
    fn new(mv: Move, parent: u32) -> Node {
        Node {
            mv,
            parent,
            first_child: 0,
            num_children: 0,
            expanded: false,
            visits: 0,
            wins: 0.0,
            proven: Proven::Unknown,
        }
    }
    /// Win rate for the player who moved into this node: proven values exactly (1, 0.5,
    /// 0), otherwise the mean reward shrunk towards 0.5 by one virtual draw, so that only a
    /// proof ever shows as exactly 1 or 0.
    fn winrate(&self) -> f64 {
        match self.proven.reward() {
            Some(r) => r,
            None => (self.wins + 0.5) / (self.visits as f64 + 1.0),
        }
    }
}

/// The UCT player. One object serves many searches; each search builds a fresh tree.
#[derive(Clone, Debug, Default)]
pub struct Uct {
    opts: UctOptions,
    nodes: Vec<Node>,
    buf: Vec<Move>,
}

impl Uct {
    /// A player with these options.
    pub fn new(opts: UctOptions) -> Uct {
        Uct {
            opts,
            nodes: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// The options.
    pub fn options(&self) -> &UctOptions {
        &self.opts
    }

    fn children(&self, n: usize) -> std::ops::Range<usize> {
        let f = self.nodes[n].first_child as usize;
        f..f + self.nodes[n].num_children as usize
    }

    /// Creates the children of `n` (the position `g`), in a random order so that ties and
    /// unvisited children are tried without a board-order bias.
    fn expand<G: Game>(&mut self, n: usize, g: &G, rng: &mut Rng) {
        g.legal_moves(&mut self.buf);
        // Fisher-Yates with the search's own generator (deterministic).
        for i in (1..self.buf.len()).rev() {
            let j = rng.below(i + 1);
            self.buf.swap(i, j);
        }
        let first = self.nodes.len() as u32;
        for &m in &self.buf {
            self.nodes.push(Node::new(m, n as u32));
        }
        let node = &mut self.nodes[n];
        node.first_child = first;
        node.num_children = self.buf.len() as u32;
        node.expanded = true;
    }

    /// After [`Uct::expand`]: marks the children whose move ends the game with its proven
    /// value (MCTS-solver "decisive move" check), so a one-move win or a position where
    /// every reply loses at once is proven without waiting for each child's visit.
    fn mark_terminal_children<G: Game>(&mut self, n: usize, g: &mut G) {
        let mover = g.to_move();
        for ch in self.children(n) {
            g.play_unchecked(self.nodes[ch].mv);
            if let Some(o) = g.outcome() {
                self.nodes[ch].proven = Proven::of_outcome(o, mover);
            }
            g.undo();
            if self.nodes[ch].proven == Proven::Win {
                break;
            }
        }
        self.update_proof(n);
    }

    fn select(&self, n: usize) -> usize {
        let parent_visits = self.nodes[n].visits.max(1) as f64;
        let log_n = parent_visits.ln();
        let c = self.opts.exploration;
        let mut best = usize::MAX;
        let mut best_score = f64::NEG_INFINITY;
        for ch in self.children(n) {
            let node = &self.nodes[ch];
            let score = match node.proven {
                // A winning reply decides the parent; taking it keeps the backups exact.
                Proven::Win => return ch,
                Proven::Loss => -1.0,
                _ if node.visits == 0 => f64::INFINITY,
                _ => node.winrate() + c * (log_n / node.visits as f64).sqrt(),
            };
            if score > best_score {
                best_score = score;
                best = ch;
            }
        }
        best
    }

    /// Recomputes the proven value of `n` from its children (AND/OR rule); returns whether it
    /// became proven.
    fn update_proof(&mut self, n: usize) -> bool {
        if self.nodes[n].proven != Proven::Unknown || !self.nodes[n].expanded {
            return false;
        }
        let mut best = Proven::Loss;
        let mut all = true;
        for ch in self.children(n) {
            let p = self.nodes[ch].proven;
            if p == Proven::Unknown {
                all = false;
            } else if p > best {
                best = p;
            }
        }
        if best == Proven::Win || (all && self.nodes[n].num_children > 0) {
            // The player to move at `n` gets `best`; the mover into `n` the opposite.
            self.nodes[n].proven = best.flip();
            return true;
        }
        false
    }

    /// A random playout from `g`; returns the reward for `mover` and leaves `g` unchanged.
    fn playout<G: Game>(&mut self, g: &mut G, mover: Color, rng: &mut Rng) -> f64 {
        let points = g.width() * g.height();
        let mut played = 0usize;
        let reward = loop {
            if let Some(o) = g.outcome() {
                break Proven::of_outcome(o, mover).reward().unwrap_or(0.5);
            }
            if played >= self.opts.playout_plies {
                break 0.5;
            }
            let mut chosen = None;
            for _ in 0..6 {
                let m = rng.below(points) as Move;
                if g.check_move(m).is_ok() {
                    chosen = Some(m);
                    break;
                }
            }
            let m = match chosen {
                Some(m) => m,
                None => {
                    g.legal_moves(&mut self.buf);
                    let board = self.buf.iter().filter(|&&m| (m as usize) < points).count();
                    if board > 0 {
                        let k = rng.below(board);
                        match self.buf.iter().filter(|&&m| (m as usize) < points).nth(k) {
                            Some(&m) => m,
                            None => break 0.5,
                        }
                    } else if let Some(&m) = self.buf.first() {
                        m
                    } else {
                        break 0.5;
                    }
                }
            };
            g.play_unchecked(m);
            played += 1;
        };
        for _ in 0..played {
            g.undo();
        }
        reward
    }

    fn pv_from(&self, n: usize) -> Vec<Move> {
        let mut pv = vec![self.nodes[n].mv];
        let mut cur = n;
        while pv.len() < self.opts.pv_len && self.nodes[cur].expanded {
            let next = self.children(cur).max_by(|&a, &b| {
                let (na, nb) = (&self.nodes[a], &self.nodes[b]);
                (na.proven == Proven::Win, na.visits)
                    .cmp(&(nb.proven == Proven::Win, nb.visits))
                    .then(b.cmp(&a))
            });
            match next {
                Some(ch) if self.nodes[ch].visits > 0 || self.nodes[ch].proven == Proven::Win => {
                    pv.push(self.nodes[ch].mv);
                    cur = ch;
                }
                _ => break,
            }
        }
        pv
    }

    /// Root children ordered best first: proven wins, then unproven/draws by visits, proven
    /// losses last.
    fn ranked_root(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.children(0).collect();
        let class = |p: Proven| match p {
            Proven::Win => 3,
            Proven::Unknown => 2,
            Proven::Draw => 1,
            Proven::Loss => 0,
        };
        v.sort_by(|&a, &b| {
            let (na, nb) = (&self.nodes[a], &self.nodes[b]);
            class(nb.proven)
                .cmp(&class(na.proven))
                .then(nb.visits.cmp(&na.visits))
                .then(nb.winrate().total_cmp(&na.winrate()))
                .then(a.cmp(&b))
        });
        v
    }

    fn candidates(&self) -> Vec<Candidate> {
        let n = self.nodes[0].num_children.max(1) as f64;
        self.ranked_root()
            .into_iter()
            .filter(|&ch| self.nodes[ch].visits > 0 || self.nodes[ch].proven != Proven::Unknown)
            .map(|ch| {
                let node = &self.nodes[ch];
                let wr = node.winrate();
                let lcb = match node.proven {
                    Proven::Unknown => (wr
                        - (wr * (1.0 - wr) / node.visits.max(1) as f64).sqrt() * 1.96)
                        .clamp(0.0, 1.0),
                    _ => wr,
                };
                Candidate {
                    mv: node.mv,
                    visits: node.visits as u64,
                    winrate: wr,
                    prior: 1.0 / n,
                    lcb,
                    proven: node.proven != Proven::Unknown,
                    pv: self.pv_from(ch),
                }
            })
            .collect()
    }

    fn result(&self, playouts: u64, root_color: Color) -> SearchResult {
        let ranked = self.ranked_root();
        let best = ranked.first().copied();
        let proven = match self.nodes[0].proven.flip() {
            Proven::Unknown => None,
            Proven::Draw => Some(None),
            Proven::Win => Some(Some(root_color)),
            Proven::Loss => Some(Some(root_color.opp())),
        };
        let winrate = best.map_or(0.5, |b| self.nodes[b].winrate());
        SearchResult {
            best: best.map(|b| self.nodes[b].mv),
            score: ((winrate - 0.5) * 2000.0).round() as i32,
            proven,
            nodes: playouts,
            pv: best.map(|b| self.pv_from(b)).unwrap_or_default(),
        }
    }
}

impl<G: Game> Searcher<G> for Uct {
    fn name(&self) -> &'static str {
        "uct"
    }

    fn search(
        &mut self,
        game: &G,
        limits: &Limits,
        stop: &AtomicBool,
        on_event: &mut dyn FnMut(&SearchEvent),
    ) -> SearchResult {
        let mut budget = Budget::new(limits, stop);
        let mut rng = Rng::new(self.opts.seed);
        let mut g = game.clone();
        let root_color = g.to_move();
        self.nodes.clear();
        self.nodes.push(Node::new(0, u32::MAX));
        if let Some(o) = g.outcome() {
            // Nothing to search: the game is over (the mover into the root made it so).
            self.nodes[0].proven = Proven::of_outcome(o, root_color.opp());
            return self.result(0, root_color);
        }
        self.expand(0, &g, &mut rng);
        self.mark_terminal_children(0, &mut g);
        if self.nodes[0].num_children == 0 {
            return self.result(0, root_color);
        }
        let mut path: Vec<(usize, Color)> = Vec::with_capacity(128);
        let mut last_report = Instant::now();
        let mut reported_once = false;
        while self.nodes[0].proven == Proven::Unknown && !budget.exhausted() {
            budget.nodes += 1;
            // Selection: descend while expanded and undecided.
            path.clear();
            let mut n = 0usize;
            let mut depth = 0usize;
            while self.nodes[n].expanded
                && self.nodes[n].num_children > 0
                && self.nodes[n].proven == Proven::Unknown
            {
                let ch = self.select(n);
                if ch == usize::MAX {
                    break;
                }
                let mover = g.to_move();
                g.play_unchecked(self.nodes[ch].mv);
                depth += 1;
                path.push((ch, mover));
                n = ch;
            }
            // Evaluation of the leaf `n` (reward for the player who moved into it).
            let mover = g.to_move().opp();
            let reward = if let Some(r) = self.nodes[n].proven.reward() {
                r
            } else if let Some(o) = g.outcome() {
                let p = Proven::of_outcome(o, mover);
                self.nodes[n].proven = p;
                p.reward().unwrap_or(0.5)
            } else if self.nodes[n].visits > 0 && self.nodes.len() < self.opts.max_nodes {
                self.expand(n, &g, &mut rng);
                self.mark_terminal_children(n, &mut g);
                if let Some(r) = self.nodes[n].proven.reward() {
                    r
                } else {
                    let unknown = self
                        .children(n)
                        .find(|&c| self.nodes[c].proven == Proven::Unknown);
                    match unknown.or(self.children(n).next()) {
                        Some(ch) => {
                            let m2 = g.to_move();
                            g.play_unchecked(self.nodes[ch].mv);
                            depth += 1;
                            path.push((ch, m2));
                            let r = if let Some(o) = g.outcome() {
                                let p = Proven::of_outcome(o, m2);
                                self.nodes[ch].proven = p;
                                p.reward().unwrap_or(0.5)
                            } else {
                                self.playout(&mut g, m2, &mut rng)
                            };
                            // `r` is for the child's mover; the leaf's mover is the other side.
                            1.0 - r
                        }
                        // No legal move without an outcome: count it as a draw.
                        None => 0.5,
                    }
                }
            } else {
                self.playout(&mut g, mover, &mut rng)
            };
            // Backup along the path: each node gets the reward of the player who moved
            // into it.
            for &(node, m) in path.iter().rev() {
                let r = if m == mover { reward } else { 1.0 - reward };
                let nd = &mut self.nodes[node];
                nd.visits += 1;
                nd.wins += r;
            }
            self.nodes[0].visits += 1;
            // Proof propagation from the deepest node upwards.
            let mut p = path.last().map_or(0, |&(x, _)| x);
            while self.nodes[p].proven != Proven::Unknown {
                let parent = self.nodes[p].parent;
                if parent == u32::MAX {
                    break;
                }
                p = parent as usize;
                if !self.update_proof(p) {
                    break;
                }
            }
            for _ in 0..depth {
                g.undo();
            }
            if (!reported_once && budget.nodes >= 16)
                || last_report.elapsed() >= self.opts.report_every
            {
                reported_once = true;
                last_report = Instant::now();
                on_event(&SearchEvent::Analysis {
                    nodes: budget.nodes,
                    candidates: self.candidates(),
                });
            }
        }
        let res = self.result(budget.nodes, root_color);
        if let Some(winner) = res.proven {
            on_event(&SearchEvent::Proven {
                winner,
                line: res.pv.clone(),
            });
        }
        on_event(&SearchEvent::Analysis {
            nodes: budget.nodes,
            candidates: self.candidates(),
        });
        res
    }

    fn clear(&mut self) {
        self.nodes = Vec::new();
    }

    fn set_memory(&mut self, bytes: usize) {
        if bytes > 0 {
            self.opts.max_nodes = (bytes / std::mem::size_of::<Node>()).max(1024);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::gomoku::{Gomoku, Rule};
    use crate::game::killallgo::{KillallGo, Variant};

    fn run<G: Game>(g: &G, nodes: u64, seed: u64) -> (SearchResult, Vec<SearchEvent>) {
        let mut u = Uct::new(UctOptions {
            seed,
            ..UctOptions::default()
        });
        let stop = AtomicBool::new(false);
        let mut evs = Vec::new();
        let r = u.search(g, &Limits::nodes(nodes), &stop, &mut |e| {
            evs.push(e.clone())
        });
        (r, evs)
    }

    #[test]
    fn proves_an_immediate_gomoku_win() {
        let mut g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
        // Black a1 b1 c1 d1, White on row 9: Black to move wins at e1.
        for x in 0..4u16 {
            g.play(x).unwrap();
            g.play(72 + x).unwrap();
        }
        let (r, evs) = run(&g, 100_000, 3);
        assert_eq!(r.best, Some(4));
        assert_eq!(r.proven, Some(Some(Color::Black)));
        assert!(r.nodes < 100_000, "stopped when proven");
        assert!(evs.iter().any(|e| matches!(
            e,
            SearchEvent::Proven {
                winner: Some(Color::Black),
                ..
            }
        )));
        let last = evs.iter().rev().find_map(|e| match e {
            SearchEvent::Analysis { candidates, .. } => Some(candidates.clone()),
            _ => None,
        });
        let c = last.expect("analysis event");
        assert_eq!(c[0].mv, 4);
        assert!(c[0].proven && c[0].winrate == 1.0);
    }

    #[test]
    fn proves_a_loss_when_every_reply_loses() {
        // White to move; Black has two open fours (a1-d1 needs e1, a3-d3 needs e3): White
        // blocks one, Black completes the other. Not provable for White: expect a proven
        // Black win after enough playouts.
        let mut g = Gomoku::new(9, 9, Rule::Freestyle).unwrap();
        for &(b, w) in &[
            (0u16, 80u16),
            (1, 60),
            (2, 44),
            (3, 64),
            (18, 50),
            (19, 33),
            (20, 41),
        ] {
            g.play(b).unwrap();
            g.play(w).unwrap();
        }
        g.play(21).unwrap();
        assert_eq!(g.to_move(), Color::White);
        let (r, _) = run(&g, 200_000, 5);
        assert_eq!(r.proven, Some(Some(Color::Black)), "{r:?}");
    }

    #[test]
    fn deterministic_under_node_limit() {
        let g = KillallGo::after_opening(Variant::Pcn9);
        let (a, ea) = run(&g, 800, 7);
        let (b, eb) = run(&g, 800, 7);
        assert_eq!(a, b);
        let last = |e: &Vec<SearchEvent>| e.last().cloned();
        assert_eq!(last(&ea), last(&eb));
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        assert!(legal.contains(&a.best.unwrap()));
        assert_eq!(a.proven, None, "800 playouts cannot prove 9x9 Killall-Go");
    }

    #[test]
    fn forced_opening_move() {
        let g = KillallGo::new(Variant::Pcn9);
        let (r, _) = run(&g, 50, 1);
        assert_eq!(g.move_to_gtp(r.best.unwrap()), "C7");
    }
}
