//! Domain knowledge for the solvers, each part switchable: Gomoku threat-space search (VCF at
//! every node where the prover is to move, VCT optionally). The 4T rule is a game rule
//! ([`Rule::FourT`]); the Killall-Go Benson test and own-eye ban live in the game rules too.

use std::sync::atomic::AtomicBool;

use super::heuristic::ThreatPriors;
use super::{Heuristic, SolverGame, SolverOptions};
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Game, Move, Outcome};
use crate::search::threat::{immediate_win, ThreatSolver};
use crate::search::{Budget, Limits};

/// Which knowledge the solvers use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knowledge {
    /// Gomoku: VCF (victory by continuous fours) at every node where the prover is to move;
    /// a VCF found proves the node.
    pub vcf: bool,
    /// Gomoku: VCT (fours and open threes) as well, after VCF failed.
    pub vct: bool,
    /// VCF depth limit in attacker moves.
    pub vcf_depth: u32,
    /// VCT depth limit in attacker moves.
    pub vct_depth: u32,
    /// Node budget of one VCF call.
    pub vcf_nodes: u64,
    /// Node budget of one VCT call.
    pub vct_nodes: u64,
}

impl Default for Knowledge {
    fn default() -> Self {
        // VCT budget and depth measured on the shared 4T problems (docs/solving.md): 20 000
        // nodes / depth 6 found fewer wins than 60 000 / 8; 200 000 / 10 cost too much per
        // node where the prover is to move.
        Knowledge {
            vcf: true,
            vct: false,
            vcf_depth: 30,
            vct_depth: 8,
            vcf_nodes: 5_000,
            vct_nodes: 60_000,
        }
    }
}

impl Knowledge {
    /// No knowledge at all.
    pub fn none() -> Self {
        Knowledge {
            vcf: false,
            vct: false,
            ..Knowledge::default()
        }
    }
}

/// The knowledge searches' state, owned by one solver: options, the threat search's table
/// of failed positions, and the nodes spent.
pub struct KnowledgeState {
    /// The options.
    pub opts: Knowledge,
    /// Nodes spent in knowledge searches.
    pub nodes: u64,
    threat: Option<ThreatSolver>,
    never: AtomicBool,
    /// Recent winning threat lines (attacker move, forced reply, ..., winning move), newest
    /// last, replayed by [`SolverGame::quick_win`] at sibling positions.
    lines: Vec<Vec<Move>>,
    /// Hash of the last position where a threat search found a win (move-ordering hint for
    /// the next search: siblings usually differ from it by one stone each side).
    last_win_hash: Option<u64>,
}

/// How many recent winning lines [`KnowledgeState`] keeps for replay.
const MAX_LINES: usize = 6;

impl KnowledgeState {
    /// A fresh state for `opts`.
    pub fn new(opts: Knowledge) -> Self {
        KnowledgeState {
            opts,
            nodes: 0,
            threat: None,
            never: AtomicBool::new(false),
            lines: Vec::new(),
            last_win_hash: None,
        }
    }

    /// Forgets the threat tables and the remembered lines.
    pub fn clear(&mut self) {
        if let Some(t) = self.threat.as_mut() {
            t.clear();
        }
        self.lines.clear();
        self.last_win_hash = None;
    }

    /// Remembers a winning line for replay (most recent last; the oldest is dropped).
    fn remember(&mut self, line: &[Move]) {
        if line.len() < 3 || self.lines.iter().any(|l| l.as_slice() == line) {
            return;
        }
        if self.lines.len() >= MAX_LINES {
            self.lines.remove(0);
        }
        self.lines.push(line.to_vec());
    }
}

/// 4T: whether `line` (attacker move, reply, attacker move, ..., winning move) is a forced
/// win for the side to move in `g`, checked under the game rules: every attacker move is
/// legal, every one but the last leaves the defender exactly one legal move (the 4T forced
/// point), and that reply is the next entry; the line ends in the attacker's win. Such a line
/// is a complete proof (the defender never had a choice). The game is left unchanged.
pub fn replay_forced_line(g: &mut Gomoku, line: &[Move]) -> bool {
    if g.rule() != Rule::FourT || line.is_empty() || g.outcome().is_some() {
        return false;
    }
    let attacker = g.to_move();
    let mut played = 0;
    let mut ok = false;
    let mut i = 0;
    while i < line.len() {
        let a = line[i];
        if g.check_move(a).is_err() {
            break;
        }
        g.play_unchecked(a);
        played += 1;
        if let Some(o) = g.outcome() {
            ok = o == Outcome::Win(attacker);
            break;
        }
        // The defender must have exactly one legal move, the recorded reply.
        let Some(&r) = line.get(i + 1) else { break };
        if g.forced_point() != Some(r) {
            break;
        }
        g.play_unchecked(r);
        played += 1;
        if g.outcome().is_some() {
            break;
        }
        i += 2;
    }
    for _ in 0..played {
        g.undo();
    }
    ok
}

impl SolverGame for Gomoku {
    fn knowledge_win(&mut self, st: &mut KnowledgeState) -> Option<Move> {
        if !st.opts.vcf && !st.opts.vct {
            return None;
        }
        if let Some(m) = self.quick_win(st) {
            return Some(m);
        }
        let ts = st.threat.get_or_insert_with(|| ThreatSolver::new(20));
        ts.set_hint(Some(st.last_win_hash.map_or(0, |h| h ^ self.hash())));
        if st.opts.vcf {
            let limits = Limits::nodes(st.opts.vcf_nodes);
            let mut b = Budget::new(&limits, &st.never);
            let r = ts.vcf(self, &mut b, st.opts.vcf_depth);
            st.nodes += b.nodes;
            if let Some(l) = r {
                if let Some(&m) = l.first() {
                    st.remember(&l);
                    st.last_win_hash = Some(self.hash());
                    return Some(m);
                }
            }
        }
        if st.opts.vct {
            let limits = Limits::nodes(st.opts.vct_nodes);
            let mut b = Budget::new(&limits, &st.never);
            let r = ts.vct(self, &mut b, st.opts.vct_depth);
            st.nodes += b.nodes;
            if let Some(m) = r.and_then(|l| l.first().copied()) {
                st.last_win_hash = Some(self.hash());
                return Some(m);
            }
        }
        None
    }

    const QUICK_WINS: bool = true;

    fn quick_win(&mut self, st: &mut KnowledgeState) -> Option<Move> {
        if !st.opts.vcf && !st.opts.vct {
            return None;
        }
        if let Some(m) = immediate_win(self) {
            return Some(m);
        }
        // A win proven by an earlier threat search (its whole tree was recorded).
        if let Some(m) = st.threat.as_ref().and_then(|t| t.cached_win(self)) {
            return Some(m);
        }
        // A sibling's forced line that still works here (the defender's extra stone did not
        // touch it): the usual case at a defender node where most replies ignore the threat.
        for i in (0..st.lines.len()).rev() {
            if replay_forced_line(self, &st.lines[i]) {
                let m = st.lines[i][0];
                // Most recently useful last, so it is tried first next time.
                let l = st.lines.remove(i);
                st.lines.push(l);
                return Some(m);
            }
        }
        None
    }

    fn mobility(&self) -> usize {
        if self.forced_point().is_some() {
            1
        } else {
            self.num_actions() - self.stones()
        }
    }

    fn default_heuristic(opts: &SolverOptions) -> Box<dyn Heuristic<Self>> {
        Box::new(ThreatPriors::new(opts))
    }
}

/// Whether `rule` is the PCN paper's 4T knowledge rule set.
pub fn is_four_t(rule: Rule) -> bool {
    rule == Rule::FourT
}
