//! Domain knowledge for the solvers, each part switchable: Gomoku threat-space search (VCF at
//! every node where the prover is to move, VCT optionally). The 4T rule is a game rule
//! ([`Rule::FourT`]); the Killall-Go Benson test and own-eye ban live in the game rules too.

use std::sync::atomic::AtomicBool;

use super::heuristic::ThreatPriors;
use super::{Heuristic, SolverGame, SolverOptions};
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::{Game, Move};
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
        Knowledge {
            vcf: true,
            vct: false,
            vcf_depth: 30,
            vct_depth: 6,
            vcf_nodes: 5_000,
            vct_nodes: 20_000,
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
}

impl KnowledgeState {
    /// A fresh state for `opts`.
    pub fn new(opts: Knowledge) -> Self {
        KnowledgeState {
            opts,
            nodes: 0,
            threat: None,
            never: AtomicBool::new(false),
        }
    }

    /// Forgets the threat table.
    pub fn clear(&mut self) {
        if let Some(t) = self.threat.as_mut() {
            t.clear();
        }
    }
}

impl SolverGame for Gomoku {
    fn knowledge_win(&mut self, st: &mut KnowledgeState) -> Option<Move> {
        if !st.opts.vcf && !st.opts.vct {
            return None;
        }
        if let Some(m) = immediate_win(self) {
            return Some(m);
        }
        let ts = st.threat.get_or_insert_with(|| ThreatSolver::new(18));
        if st.opts.vcf {
            let limits = Limits::nodes(st.opts.vcf_nodes);
            let mut b = Budget::new(&limits, &st.never);
            let r = ts.vcf(self, &mut b, st.opts.vcf_depth);
            st.nodes += b.nodes;
            if let Some(m) = r.and_then(|l| l.first().copied()) {
                return Some(m);
            }
        }
        if st.opts.vct {
            let limits = Limits::nodes(st.opts.vct_nodes);
            let mut b = Budget::new(&limits, &st.never);
            let r = ts.vct(self, &mut b, st.opts.vct_depth);
            st.nodes += b.nodes;
            if let Some(m) = r.and_then(|l| l.first().copied()) {
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
