//! The phases of a solve: their settings ([`MctsPhases`]), the exploration constant per
//! phase and the reply value. Whether a narrowed second phase runs, with which knowledge
//! staging and heuristic, is the game's to say ([`crate::search::solver::SolverGame::mcts_narrowing`],
//! [`crate::search::solver::SolverGame::mcts_knowledge`], [`crate::search::solver::SolverGame::narrowed_heuristic`]).

/// The MCTS solver's phases beyond its first search: the narrowed second phase, where the
/// game runs one ([`crate::search::solver::SolverGame::mcts_narrowing`]: Gomoku without a network, when
/// [`crate::search::solver::Knowledge::lambda_nodes`] is set) and the first search filled
/// its node pool without a result.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsPhases {
    /// MCTS: run only the narrowed search (from the start, with the whole budget), for
    /// ablations and tests of that phase.
    pub narrow_only: bool,
    /// Gomoku, MCTS without a network: the share (0..=1) of the learned pattern policy in the
    /// static priors of the narrowed phase only (the first phase keeps
    /// [`crate::search::solver::Knowledge::patterns`]; read by the game's
    /// [`crate::search::solver::SolverGame::narrowed_heuristic`]). The threat scores rank the kept moves
    /// poorly where the proof needs a quiet one, which the policy ranks better (docs/notebook/
    /// 2026-11-25-fourteenth-session-pattern-policy-in-narrowed-phase.md).
    pub narrow_patterns: f32,
    /// Gomoku, MCTS without a network: weight of a proof-number bias at the root of the
    /// narrowed phase (PNMax of GPN-MCTS: `w · (1 − (pn − min) / (1 + max − min))` over the
    /// unsolved root moves, the prover's proof numbers of the narrowed tree, doubled for a
    /// move leaving one open reply, mostly a four). The reply value rates every forcing line
    /// alike, so without it the root's visits can stay on one unproven move (docs/notebook/
    /// 2026-11-26-seventeenth-session-root-pn-bias.md). 0: off.
    pub root_pn: f32,
}

impl Default for MctsPhases {
    fn default() -> Self {
        MctsPhases {
            narrow_only: false,
            narrow_patterns: 0.5,
            root_pn: 2.0,
        }
    }
}

/// The exploration constant: `c_puct` of the options (the PCN reference solver's), but half
/// of it with a static heuristic under the reply value (Gomoku without a network). The
/// threat-table priors are nearly flat, so full exploration spreads the search over many
/// quiet moves (docs/notebook/2026-11-22-sixth-session-unsolved-problems.md).
/// `learned`: [`Heuristic::learned`].
pub(super) fn c_puct_for(learned: bool, reply_value: bool, c_puct: f32) -> f32 {
    if reply_value && !learned {
        c_puct * 0.5
    } else {
        c_puct
    }
}

/// The prover's value of a node where the opponent is to move with `replies` legal replies
/// of which `open` are not yet proven wins for the prover (by the cheap knowledge at the
/// node's expansion, or the pass-threat zone later): `1 - 2 ln(1 + open) / ln(1 + replies)`,
/// from 1 (all proven) to -1 (none). A strong threat leaves few defences; Gomoku's static
/// values cannot tell that apart, and MCTS with them dives into single lines; the α0
/// network's values gain from it too (docs/notebook/2026-11-22-reply-value.md).
pub(super) fn reply_value(replies: usize, open: usize) -> f32 {
    let (n, k) = (replies as f32, open.min(replies) as f32);
    1.0 - 2.0 * (1.0 + k).ln() / (1.0 + n).ln()
}
