//! The solvers' options: a small part that every solver reads ([`CommonOptions`]), one
//! struct per solver or family with only what that solver reads ([`super::MctsOptions`],
//! [`super::DfpnOptions`], [`super::GpnOptions`], [`super::EwsOptions`],
//! [`super::PpnOptions`]; the αβ solver has none of its own), and [`SolverOptions`], all of
//! them together: what a front end fills once and the registry hands out, each solver getting
//! the common part and its own.

use super::dfpn::DfpnOptions;
use super::ews::EwsOptions;
use super::gpn::GpnOptions;
use super::mcts::MctsOptions;
use super::ppn::PpnOptions;
use super::tt::TableGroup;
use super::{GhiMode, HeuristicKind, Knowledge, SolverError};

/// What every solver reads. `Default` gives the PCN reference settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CommonOptions {
    /// Transposition-table budget in bytes (0: [`crate::search::DEFAULT_MEMORY_BYTES`]).
    pub memory_bytes: usize,
    /// Search threads of the solvers that run several (MCTS shares one tree between them;
    /// the others are single-threaded), and of a network's batching queue.
    pub threads: usize,
    /// Seed of every random choice (playouts, tie breaks).
    pub seed: u64,
    /// Domain knowledge (Gomoku threat search).
    pub knowledge: Knowledge,
    /// Heuristic when none is plugged in.
    pub heuristic: HeuristicKind,
    /// Graph-history interaction handling (Killall-Go).
    pub ghi: GhiMode,
    /// Maximum playout length in plies (random-playout values: the playout heuristics, EWS).
    pub playout_plies: usize,
    /// Node budget of the re-searches (and, separately, of the threat searches) that the first
    /// attempt of [`super::Solver::proof_tree`] may spend; a failed first attempt is retried
    /// with larger budgets (`proof::ATTEMPTS`).
    pub proof_search_nodes: u64,
    /// Largest proof tree [`super::Solver::proof_tree`] builds (nodes); larger gives `None`.
    pub proof_max_nodes: usize,
    /// A transposition table shared with other solvers of this process (the job-level
    /// workers): the DFPN solvers use it, with [`CommonOptions::memory_bytes`] as the whole
    /// group's budget; the others keep tables of their own. `None`: a table of its own.
    pub table_group: Option<TableGroup>,
    /// This solver's index among the members of [`CommonOptions::table_group`] (the
    /// job-level worker), under which the others see where it searches.
    pub group_member: usize,
}

impl Default for CommonOptions {
    fn default() -> Self {
        CommonOptions {
            memory_bytes: 0,
            threads: 1,
            seed: 1,
            knowledge: Knowledge::default(),
            heuristic: HeuristicKind::Default,
            ghi: GhiMode::Exact,
            playout_plies: 400,
            proof_search_nodes: 2_000_000,
            proof_max_nodes: 5_000_000,
            table_group: None,
            group_member: 0,
        }
    }
}

impl CommonOptions {
    /// The transposition-table budget in bytes (the default when 0).
    pub fn tt_bytes(&self) -> usize {
        if self.memory_bytes == 0 {
            crate::search::DEFAULT_MEMORY_BYTES
        } else {
            self.memory_bytes
        }
    }

    /// The threat tables' share of the budget for one knowledge state (one search thread):
    /// a sixth of [`CommonOptions::tt_bytes`], so that the default 256 MB keeps the largest
    /// tables (40 MB).
    pub fn knowledge_bytes(&self) -> usize {
        self.tt_bytes() / 6
    }

    /// A fresh knowledge state sized by [`CommonOptions::knowledge_bytes`].
    pub fn knowledge_state(&self) -> super::KnowledgeState {
        super::KnowledgeState::with_table_bytes(self.knowledge.clone(), self.knowledge_bytes())
    }

    /// The same with a table budget of `bytes`.
    pub fn with_memory(&self, bytes: usize) -> CommonOptions {
        CommonOptions {
            memory_bytes: bytes,
            ..self.clone()
        }
    }
}

/// The options of all solvers: what a front end configures once (`pcn solve`'s flags, GTP's
/// and Gomocup's settings) and [`super::make`] / [`crate::search::registry::build`] hand
/// out, each solver receiving [`SolverOptions::common`] and its own part. `Default` gives
/// the PCN reference settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolverOptions {
    /// What every solver reads.
    pub common: CommonOptions,
    /// The MCTS solver's own.
    pub mcts: MctsOptions,
    /// DFPN's and focused DFPN's own.
    pub dfpn: DfpnOptions,
    /// GPN-MCTS's own.
    pub gpn: GpnOptions,
    /// Expected Work Search's own.
    pub ews: EwsOptions,
    /// PPN's own.
    pub ppn: PpnOptions,
    /// The job-level search over several workers ([`crate::search::joblevel`]); one worker
    /// (the default) is the plain solver.
    pub jobs: crate::search::joblevel::JobOptions,
}

impl SolverOptions {
    /// The reference settings with `common` as the common part.
    pub fn with_common(common: CommonOptions) -> SolverOptions {
        SolverOptions {
            common,
            ..SolverOptions::default()
        }
    }

    /// The reference settings with a table budget of `bytes` (tests and tools).
    pub fn with_memory(bytes: usize) -> SolverOptions {
        SolverOptions::with_common(CommonOptions {
            memory_bytes: bytes,
            ..CommonOptions::default()
        })
    }

    /// Checks the ranges of every solver's options (so that a bad value is an error
    /// whichever solver is built).
    pub fn check(&self) -> Result<(), SolverError> {
        self.dfpn.check()?;
        self.jobs.check().map_err(SolverError::BadOption)?;
        self.ews.check()?;
        self.gpn.check()?;
        self.ppn.check()
    }
}
