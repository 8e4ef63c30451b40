//! Domain knowledge for the solvers, each part switchable: Gomoku threat-space search (VCF at
//! every node where the prover is to move, VCT optionally). The 4T rule is a game rule
//! ([`Rule::FourT`]); the Killall-Go Benson test and own-eye ban live in the game rules too.

use std::sync::atomic::AtomicBool;

use super::heuristic::ThreatPriors;
use super::{CommonOptions, Heuristic, MctsPhases, SolverGame, SolverKind};
use crate::game::gomoku::pattern::Pattern;
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Game, Move, Outcome};
use crate::search::gomoku::threat::{immediate_win, ThreatSolver};
use crate::search::{Budget, Limits};

/// The Gomoku knowledge the solvers use: the threat searches (VCF, VCT) with their budgets
/// and staging, the narrowing's budget, and the pattern policy's share of the static priors.
/// The MCTS solver's own phase settings are [`super::mcts::MctsPhases`].
#[derive(Clone, Debug, PartialEq)]
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
    /// Gomoku, MCTS: at nodes where the prover's opponent is to move, once visited
    /// `defence_visits` times, search the prover's threat as if the opponent passed, then
    /// replay its proof after each unsolved reply (see [`SolverGame::quick_wins_second`]):
    /// the replies outside the threat's relevance zone are proven by a short hinted search
    /// each instead of a tree node with full knowledge searches each.
    pub defence: bool,
    /// Gomoku, MCTS: VCT runs at a node's second visit instead of its first (most leaves
    /// are never revisited; VCF and the cheap checks still run at once).
    pub defer_vct: bool,
    /// Visits a node where the prover's opponent is to move needs before the pass search
    /// and replays run there (MCTS).
    pub defence_visits: u32,
    /// Node budget of all the replays at one such node (the pass search itself is bounded
    /// by `vcf_nodes` / `vct_nodes`).
    pub defence_nodes: u64,
    /// Gomoku, MCTS and focused DFPN without a network: the share (0..=1) of the learned
    /// pattern policy ([`crate::search::gomoku::learn::patpolicy`]) in the static priors; 0 leaves the threat
    /// priors alone.
    pub patterns: f32,
    /// Gomoku, MCTS without a network: node budget (each VCF and VCT) of the narrowing of
    /// the prover's moves in the second search phase, run when the first search filled its
    /// node pool without a result ([`SolverGame::narrow_prover_moves`]). At a prover's node
    /// where the threat searches found no win it keeps only wins, fours and, when the
    /// defender threatens a threat-space win were the prover to pass, the moves that leave
    /// it none; otherwise the threats of a threat (λ2 moves of Thomsen's lambda search):
    /// moves after which the prover, were the defender to pass, has a VCF or VCT within this
    /// many nodes. 0: no second phase.
    pub lambda_nodes: u64,
}

impl Default for Knowledge {
    fn default() -> Self {
        // The VCT budget and depth balance wins found against the cost per node where the
        // prover is to move: a smaller search misses wins, a larger one costs more than it
        // finds. Staging (deferred VCT, pass search at the second visit of a defender node):
        // see docs/notebook/2026-11-22-gomoku-strength.md.
        Knowledge {
            vcf: true,
            vct: false,
            vcf_depth: 30,
            vct_depth: 8,
            vcf_nodes: 5_000,
            vct_nodes: 60_000,
            defence: true,
            defence_visits: 2,
            defer_vct: true,
            defence_nodes: 400_000,
            patterns: 0.0,
            lambda_nodes: 1_000,
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
    /// The narrowing's own threat searches ([`Knowledge::lambda_nodes`]): kept apart so
    /// that their many small wins do not evict the win table that proves replies cheaply.
    lambda_threat: Option<ThreatSolver>,
    /// The narrowing's results by position (direct-mapped, `NARROW_SLOTS` entries): the
    /// MCTS tree does not merge transpositions, and about half of the positions it narrows
    /// (four in five on some problems) it has narrowed before.
    narrowed: Vec<(u64, Box<[Move]>)>,
    never: AtomicBool,
    /// Recent winning threat lines (attacker move, forced reply, ..., winning move), newest
    /// last, replayed by [`SolverGame::quick_win`] at sibling positions.
    lines: Vec<Vec<Move>>,
    /// Hash of the last position where a threat search found a win (move-ordering hint for
    /// the next search: siblings usually differ from it by one stone each side).
    last_win_hash: Option<u64>,
    /// Size of the threat search's tables, as a power of two of entries
    /// ([`KnowledgeState::with_table_bytes`]).
    threat_bits: u32,
}

/// Threat-table entries at most (2^20: 32 MB with the win table), the size before tables
/// followed the memory budget.
const THREAT_BITS_MAX: u32 = 20;
/// Threat-table entries at least (2^12: 128 KB).
const THREAT_BITS_MIN: u32 = 12;
/// Bytes one threat-table entry costs (a failure entry and a win entry).
const THREAT_ENTRY_BYTES: usize = 32;

/// Entries of the narrowing's cache ([`KnowledgeState`]).
const NARROW_SLOTS: usize = 1 << 15;

/// How many recent winning lines [`KnowledgeState`] keeps for replay.
const MAX_LINES: usize = 6;

impl KnowledgeState {
    /// A fresh state for `opts` with the largest threat tables (32 MB, allocated at the first
    /// threat search).
    pub fn new(opts: Knowledge) -> Self {
        Self::with_table_bytes(opts, usize::MAX)
    }

    /// A fresh state whose threat tables take at most about `bytes` (the failure and win
    /// tables of the main search plus a quarter as much for the narrowing's own), within
    /// 128 KB..32 MB. Solvers give it [`super::CommonOptions::knowledge_bytes`], so that a
    /// small `--memory` is not exceeded by tables of a fixed size.
    pub fn with_table_bytes(opts: Knowledge, bytes: usize) -> Self {
        let entries = (bytes / (THREAT_ENTRY_BYTES + THREAT_ENTRY_BYTES / 4)).max(1);
        let threat_bits =
            (usize::BITS - 1 - entries.leading_zeros()).clamp(THREAT_BITS_MIN, THREAT_BITS_MAX);
        KnowledgeState {
            threat_bits,
            opts,
            nodes: 0,
            threat: None,
            lambda_threat: None,
            narrowed: Vec::new(),
            never: AtomicBool::new(false),
            lines: Vec::new(),
            last_win_hash: None,
        }
    }

    /// Bytes the threat tables take once allocated.
    pub fn table_bytes(&self) -> usize {
        (THREAT_ENTRY_BYTES << self.threat_bits) + (THREAT_ENTRY_BYTES << (self.threat_bits - 2))
    }

    /// Forgets the threat tables and the remembered lines.
    pub fn clear(&mut self) {
        if let Some(t) = self.threat.as_mut() {
            t.clear();
        }
        if let Some(t) = self.lambda_threat.as_mut() {
            t.clear();
        }
        self.narrowed.clear();
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
    /// The MCTS solver with threat knowledge solves the most Gomoku problems.
    const DEFAULT_SOLVER: SolverKind = SolverKind::Mcts;

    fn knowledge_win(&mut self, st: &mut KnowledgeState) -> Option<Move> {
        let (vcf, vct) = (st.opts.vcf, st.opts.vct);
        threat_win(self, st, vcf, vct)
    }

    fn knowledge_win_first(&mut self, st: &mut KnowledgeState) -> Option<Move> {
        let (vcf, vct) = (st.opts.vcf, st.opts.vct && !st.opts.defer_vct);
        threat_win(self, st, vcf, vct)
    }

    fn knowledge_win_second(&mut self, st: &mut KnowledgeState) -> Option<Move> {
        if !Self::knowledge_deferred(st) {
            return None;
        }
        threat_win(self, st, false, true)
    }

    fn knowledge_deferred(st: &KnowledgeState) -> bool {
        st.opts.vct && st.opts.defer_vct
    }

    const QUICK_WINS: bool = true;

    fn quick_wins_second(
        &mut self,
        st: &mut KnowledgeState,
        replies: &[Move],
        out: &mut Vec<(usize, Move)>,
    ) {
        // The prover's threat if the defender passed: its proof (recorded in the win table)
        // guides a short search after every reply. Replies outside the threat's zone leave
        // the proof intact and are proven by following it; the others fail within the small
        // budget and stay for the tree search. Each win is a real search result, so this is
        // sound whatever the pass search assumed.
        let pass = if st.opts.defence && !replies.is_empty() {
            pass_threat(self, st)
        } else {
            None
        };
        let mut left = st.opts.defence_nodes;
        for (i, &m) in replies.iter().enumerate() {
            self.play_unchecked(m);
            if self.outcome().is_none() {
                let mut w = self.quick_win(st);
                if let (None, Some((null_hash, vct, used))) = (w, pass) {
                    if left > 0 {
                        let cap = used.saturating_mul(2).saturating_add(64).min(left);
                        let (r, spent) = replay_threat(self, st, null_hash, vct, cap);
                        left = left.saturating_sub(spent);
                        w = r;
                    }
                }
                if let Some(w) = w {
                    out.push((i, w));
                }
            }
            self.undo();
        }
    }

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

    fn narrow_prover_moves(&mut self, st: &mut KnowledgeState, moves: &mut Vec<Move>) -> bool {
        if st.opts.lambda_nodes == 0
            || (!st.opts.vcf && !st.opts.vct)
            || self.outcome().is_some()
            || self.forced_point().is_some()
        {
            return false;
        }
        let before = moves.len();
        // The key covers the side to move; the budget is fixed for a state's life.
        let key = self.hash();
        let slot = (key as usize) & (NARROW_SLOTS - 1);
        if let Some((k, cached)) = st.narrowed.get(slot) {
            if *k == key {
                // Intersected with the legal moves: a key collision cannot add a move.
                moves.retain(|m| cached.contains(m));
                return moves.len() < before;
            }
        }
        let threatened = self.threat_after_pass(st, st.opts.lambda_nodes);
        let kept: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|&m| self.keeps(st, threatened, m))
            .collect();
        if kept.is_empty() {
            // Nothing threatens: keep the full width rather than a node without moves.
            return false;
        }
        if st.narrowed.is_empty() {
            st.narrowed = vec![(0, Box::default()); NARROW_SLOTS];
        }
        st.narrowed[slot] = (key, kept.clone().into_boxed_slice());
        *moves = kept;
        moves.len() < before
    }

    fn defence_deferred(st: &KnowledgeState) -> Option<u32> {
        (st.opts.defence && (st.opts.vcf || st.opts.vct)).then_some(st.opts.defence_visits)
    }

    fn mobility(&self) -> usize {
        if self.forced_point().is_some() {
            1
        } else {
            self.num_actions() - self.stones()
        }
    }

    fn default_heuristic(opts: &CommonOptions) -> Box<dyn Heuristic<Self>> {
        Box::new(ThreatPriors::new(opts))
    }

    /// With learned priors (a network) both stages as configured: VCT at a prover node's
    /// second visit, the pass-threat zone at a defender node's `defence_visits`-th. With the
    /// static heuristics VCT runs at once (the static priors cannot steer the search to where
    /// a deferred VCT would pay; see docs/notebook/2026-11-22-gomoku-strength.md) and the
    /// zone at a defender node's second visit, where the reply value is refreshed.
    fn mcts_knowledge(learned: bool, k: &Knowledge) -> Knowledge {
        if !learned {
            Knowledge {
                defer_vct: false,
                defence_visits: 1,
                ..k.clone()
            }
        } else {
            k.clone()
        }
    }

    /// With the static heuristics under the reply value (no network) and
    /// [`Knowledge::lambda_nodes`] set. The two searches solve different problems
    /// (docs/notebook/2026-11-25-thirteenth-session-narrowed-search.md): the narrowed one
    /// spreads its visits over the prover's threats and proves some that the plain one cannot
    /// reach before its pool fills.
    fn mcts_narrowing(learned: bool, reply_value: bool, k: &Knowledge) -> bool {
        !learned && reply_value && k.lambda_nodes > 0
    }

    /// The threat priors with [`MctsPhases::narrow_patterns`] as the pattern policy's share,
    /// where that differs from the first phase's ([`Knowledge::patterns`]) and is not 0.
    fn narrowed_heuristic(
        opts: &CommonOptions,
        phases: &MctsPhases,
    ) -> Option<Box<dyn Heuristic<Self>>> {
        let share = phases.narrow_patterns;
        if share > 0.0 && share != opts.knowledge.patterns {
            let narrowed = CommonOptions {
                knowledge: Knowledge {
                    patterns: share,
                    ..opts.knowledge.clone()
                },
                ..opts.clone()
            };
            Some(Self::default_heuristic(&narrowed))
        } else {
            None
        }
    }
}

impl Gomoku {
    /// Whether the side to move has a VCF or a VCT within `nodes` nodes each (no hint).
    fn has_threat_win(&mut self, st: &mut KnowledgeState, nodes: u64) -> bool {
        let ts = st
            .lambda_threat
            .get_or_insert_with(|| ThreatSolver::new(st.threat_bits - 2));
        ts.set_hint(None);
        let (o, n, sp) = (&st.opts, &st.never, &mut st.nodes);
        (o.vcf && bounded(ts, self, o, n, sp, nodes, false).0.is_some())
            || (o.vct && bounded(ts, self, o, n, sp, nodes, true).0.is_some())
    }

    /// Whether the defender (not to move here) would have a threat-space win were the side
    /// to move to pass.
    fn threat_after_pass(&mut self, st: &mut KnowledgeState, nodes: u64) -> bool {
        let me = self.to_move();
        self.set_to_move(me.opp());
        let r = self.has_threat_win(st, nodes);
        self.set_to_move(me);
        r
    }

    /// Whether the prover's move `m` (the prover to move) is kept by
    /// [`SolverGame::narrow_prover_moves`]: it wins or is a four (the reply is forced);
    /// when the defender threatens a threat-space win (`threatened`), it leaves the
    /// defender none; otherwise it is a threat of a threat: after it and a pass the prover
    /// has a threat-space win. Moves with no stone within two points on a line never are.
    fn keeps(&mut self, st: &mut KnowledgeState, threatened: bool, m: Move) -> bool {
        let c = self.cell_of(m);
        if !self.near_stone(c) || self.check_move(m).is_err() {
            return false;
        }
        if !threatened {
            // Decided by the patterns where they settle it: every open three and four is a
            // threat of a threat; a move that makes at most a blocked two and blocks no four
            // of the defender rarely is, and is dropped without the costly search (the rare
            // miss only narrows this phase more; the first phase keeps every move).
            let me = self.to_move();
            let own = self
                .patterns(c, me)
                .into_iter()
                .max()
                .unwrap_or(Pattern::Dead);
            if own >= Pattern::F3 {
                return true;
            }
            let opp = self
                .patterns(c, me.opp())
                .into_iter()
                .max()
                .unwrap_or(Pattern::Dead);
            if own <= Pattern::B2 && opp < Pattern::B4 {
                return false;
            }
        }
        self.play_unchecked(m);
        let n = st.opts.lambda_nodes;
        let r = if self.outcome().is_some() || self.forced_point().is_some() {
            true
        } else if threatened {
            !self.has_threat_win(st, n)
        } else {
            self.threat_after_pass(st, n)
        };
        self.undo();
        r
    }
}

/// The prover's threat at a node where the defender is to move, searched as if the defender
/// passed: `(hash of the passed position, whether VCT was needed, nodes spent)`, or `None`
/// when no threat was found (or the position does not allow a pass: a game over, a 4T forced
/// point). The position is left unchanged. A VCF line found is remembered for replay.
fn pass_threat(g: &mut Gomoku, st: &mut KnowledgeState) -> Option<(u64, bool, u64)> {
    if (!st.opts.vcf && !st.opts.vct) || g.outcome().is_some() || g.forced_point().is_some() {
        return None;
    }
    let defender = g.to_move();
    g.set_to_move(defender.opp());
    let null_hash = g.hash();
    let ts = st
        .threat
        .get_or_insert_with(|| ThreatSolver::new(st.threat_bits));
    ts.set_hint(Some(st.last_win_hash.map_or(0, |h| h ^ null_hash)));
    let mut found = None;
    let mut vcf_line = None;
    let (o, n, sp) = (&st.opts, &st.never, &mut st.nodes);
    if o.vcf {
        let (r, used) = bounded(ts, g, o, n, sp, o.vcf_nodes, false);
        if r.is_some() {
            found = Some((null_hash, false, used));
            vcf_line = r;
        }
    }
    if found.is_none() && o.vct {
        let (r, used) = bounded(ts, g, o, n, sp, o.vct_nodes, true);
        if r.is_some() {
            found = Some((null_hash, true, used));
        }
    }
    g.set_to_move(defender);
    if found.is_some() {
        // Later searches below this node are hinted by the passed position's proof.
        st.last_win_hash = Some(null_hash);
    }
    if let Some(l) = vcf_line {
        st.remember(&l);
    }
    found
}

/// After a defender reply (prover to move in `g`): the pass threat's proof searched again
/// here, its moves tried first (the hint maps each node to the passed position's node), within
/// `cap` nodes. Returns the winning move found and the nodes spent.
fn replay_threat(
    g: &mut Gomoku,
    st: &mut KnowledgeState,
    null_hash: u64,
    vct: bool,
    cap: u64,
) -> (Option<Move>, u64) {
    let ts = st
        .threat
        .get_or_insert_with(|| ThreatSolver::new(st.threat_bits));
    ts.set_hint(Some(null_hash ^ g.hash()));
    let (r, used) = bounded(ts, g, &st.opts, &st.never, &mut st.nodes, cap, vct);
    (r.and_then(|l| l.first().copied()), used)
}

/// The threat searches at a node where the prover is to move: the cheap checks, then VCF
/// when `vcf`, then VCT when `vct`.
fn threat_win(g: &mut Gomoku, st: &mut KnowledgeState, vcf: bool, vct: bool) -> Option<Move> {
    if !vcf && !vct {
        return None;
    }
    if let Some(m) = g.quick_win(st) {
        return Some(m);
    }
    let ts = st
        .threat
        .get_or_insert_with(|| ThreatSolver::new(st.threat_bits));
    ts.set_hint(Some(st.last_win_hash.map_or(0, |h| h ^ g.hash())));
    if vcf {
        let (r, _) = bounded(
            ts,
            g,
            &st.opts,
            &st.never,
            &mut st.nodes,
            st.opts.vcf_nodes,
            false,
        );
        if let Some(l) = r {
            st.remember(&l);
            st.last_win_hash = Some(g.hash());
            return l.first().copied();
        }
    }
    if vct {
        let (r, _) = bounded(
            ts,
            g,
            &st.opts,
            &st.never,
            &mut st.nodes,
            st.opts.vct_nodes,
            true,
        );
        if let Some(l) = r {
            st.last_win_hash = Some(g.hash());
            return l.first().copied();
        }
    }
    None
}

/// One bounded threat search for the side to move in `g`: VCT when `vct`, else VCF, at the
/// depth of `opts`, within `nodes` nodes (added to `spent`). Returns the winning line (an
/// empty one counts as none) and the nodes it took.
fn bounded(
    ts: &mut ThreatSolver,
    g: &mut Gomoku,
    opts: &Knowledge,
    never: &AtomicBool,
    spent: &mut u64,
    nodes: u64,
    vct: bool,
) -> (Option<Vec<Move>>, u64) {
    let limits = Limits::nodes(nodes);
    let mut b = Budget::new(&limits, never);
    let r = if vct {
        ts.vct(g, &mut b, opts.vct_depth)
    } else {
        ts.vcf(g, &mut b, opts.vcf_depth)
    };
    *spent += b.nodes;
    (r.filter(|l| !l.is_empty()), b.nodes)
}

/// Whether `rule` is the PCN paper's 4T knowledge rule set.
pub fn is_four_t(rule: Rule) -> bool {
    rule == Rule::FourT
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The threat tables follow the memory budget (a sixth of it per knowledge state):
    /// the default budget keeps the largest tables (2^20 entries, 2^18 for the narrowing),
    /// a small `--memory` gets small ones, never under 2^12 entries.
    #[test]
    fn threat_tables_follow_the_memory_budget() {
        let full = CommonOptions::default().knowledge_state();
        assert_eq!(full.threat_bits, 20);
        assert_eq!(full.table_bytes(), (32 << 20) + (8 << 20));
        assert_eq!(KnowledgeState::new(Knowledge::default()).threat_bits, 20);
        for mb in [1usize, 4, 16, 64] {
            let c = CommonOptions::default().with_memory(mb << 20);
            let k = c.knowledge_state();
            assert!(
                k.table_bytes() <= (c.knowledge_bytes()).max(160 << 10),
                "{mb} MB: {} bytes of threat tables",
                k.table_bytes()
            );
            assert!(k.threat_bits >= THREAT_BITS_MIN);
        }
        // The smallest tables still find a win: Black's open four on 15x15.
        let mut g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        for s in ["H8", "A1", "J8", "A3", "K8", "A5", "L8", "A7"] {
            let m = g.parse_gtp(s).unwrap();
            g.play(m).unwrap();
        }
        let mut small = KnowledgeState::with_table_bytes(Knowledge::default(), 0);
        assert_eq!(small.threat_bits, THREAT_BITS_MIN);
        assert!(g.knowledge_win(&mut small).is_some());
    }

    #[test]
    fn static_heuristics_run_vct_at_once_and_the_zone_at_the_second_visit() {
        let k = Knowledge::default();
        let s = Gomoku::mcts_knowledge(false, &k);
        assert!(!s.defer_vct);
        assert_eq!(s.defence_visits, 1);
        assert_eq!(s.defence, k.defence);
        let n = Gomoku::mcts_knowledge(true, &k);
        assert_eq!(n, k);
        // The static threat priors are such a heuristic.
        assert!(!Gomoku::default_heuristic(&CommonOptions::default()).learned());
    }

    #[test]
    fn the_narrowed_phase_runs_without_a_network_and_mixes_in_the_policy() {
        let k = Knowledge::default();
        assert!(Gomoku::mcts_narrowing(false, true, &k));
        assert!(!Gomoku::mcts_narrowing(true, true, &k));
        assert!(!Gomoku::mcts_narrowing(false, false, &k));
        let off = Knowledge {
            lambda_nodes: 0,
            ..k.clone()
        };
        assert!(!Gomoku::mcts_narrowing(false, true, &off));
        let common = CommonOptions::default();
        let phases = MctsPhases::default();
        assert!(phases.narrow_patterns > 0.0);
        assert!(Gomoku::narrowed_heuristic(&common, &phases).is_some());
        let same = MctsPhases {
            narrow_patterns: common.knowledge.patterns,
            ..phases
        };
        assert!(Gomoku::narrowed_heuristic(&common, &same).is_none());
    }
}
