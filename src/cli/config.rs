//! The engine configuration: the global options that shape a search (threads, table
//! memory, seed, node budget, network), read once from the command line into types, with
//! one default each. The front ends and `pcn solve` take their settings from here.

use super::GlobalOpts;
use crate::game::Game;
use std::sync::Arc;

use crate::search::gomoku::learn::evalnet::{self, EvalNet};
use crate::search::registry::{PlayerSettings, SolverNet};
use crate::search::DEFAULT_MEMORY_BYTES;

/// The network of `--net`, read once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetChoice {
    /// `none` (any case): the games' own heuristics.
    None,
    /// `auto` (any case): the network shipped in `weights/` for the game, rule and board
    /// being played, none where there is none ([`crate::nn::shipped`]).
    Auto,
    /// A model directory or file.
    Path(String),
}

impl NetChoice {
    /// Reads `none`, `auto` or a path.
    pub fn parse(s: &str) -> NetChoice {
        if s.trim().eq_ignore_ascii_case("none") {
            NetChoice::None
        } else if crate::nn::shipped::is_auto(s) {
            NetChoice::Auto
        } else {
            NetChoice::Path(s.to_string())
        }
    }

    /// The value as given on the command line (for messages).
    pub fn as_arg(&self) -> &str {
        match self {
            NetChoice::None => "none",
            NetChoice::Auto => "auto",
            NetChoice::Path(p) => p,
        }
    }
}

/// The Gomoku player's evaluation of `--eval`, read once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalChoice {
    /// `classic`: the pattern evaluation everywhere.
    Classic,
    /// `net`: the shipped evaluation networks, each under its rule.
    Net,
    /// `auto`: the shipped networks whose gate chose them over the pattern evaluation.
    Auto,
    /// A weight file.
    Path(String),
}

impl EvalChoice {
    /// Reads `classic`, `net`, `auto` (any case) or a path.
    pub fn parse(s: &str) -> EvalChoice {
        match s.trim().to_ascii_lowercase().as_str() {
            "classic" => EvalChoice::Classic,
            "net" => EvalChoice::Net,
            "auto" => EvalChoice::Auto,
            _ => EvalChoice::Path(s.to_string()),
        }
    }
}

/// Search threads when `--threads` is not given.
pub const DEFAULT_THREADS: usize = 1;

/// The global search settings, typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Search threads of the solvers that run several, and a network backend's threads.
    pub threads: usize,
    /// Solver workers of one problem (`--workers`; 1: the plain solver).
    pub workers: usize,
    /// Table memory of each searcher in bytes: `--memory` MB, else
    /// [`DEFAULT_MEMORY_BYTES`] (256 MiB) in every front end.
    pub memory_bytes: usize,
    /// `--memory` was given: Gomocup's `INFO max_memory` may then only lower the budget
    /// (without it, `INFO max_memory` replaces the default).
    pub memory_given: bool,
    /// Seed of every random choice.
    pub seed: u64,
    /// Deterministic mode: a node budget per move or problem instead of the clock.
    pub nodes: Option<u64>,
    /// The solvers' network.
    pub net: NetChoice,
    /// Board symmetries averaged per network evaluation (1..=8).
    pub symmetries: usize,
    /// Network backend name (`auto`, `cpu`).
    pub backend: String,
    /// The Gomoku player's evaluation.
    pub eval: EvalChoice,
}

impl EngineConfig {
    /// Reads the global options.
    pub fn from_global(g: &GlobalOpts) -> EngineConfig {
        EngineConfig {
            threads: g.threads.map_or(DEFAULT_THREADS, |t| t as usize),
            workers: g.workers.unwrap_or(1),
            memory_bytes: g.memory.map_or(DEFAULT_MEMORY_BYTES, |mb| {
                (mb as usize).saturating_mul(1 << 20)
            }),
            memory_given: g.memory.is_some(),
            seed: g.seed,
            nodes: g.nodes,
            net: NetChoice::parse(&g.net),
            symmetries: g.symmetries as usize,
            backend: g.backend.to_ascii_lowercase(),
            eval: EvalChoice::parse(&g.eval),
        }
    }

    /// The evaluation networks of `--eval` (none: the pattern evaluation); the error is the
    /// message for the command line.
    pub fn open_eval(&self) -> Result<Vec<Arc<EvalNet>>, String> {
        match &self.eval {
            EvalChoice::Classic => Ok(Vec::new()),
            EvalChoice::Net => Ok(evalnet::shipped()),
            EvalChoice::Auto => Ok(evalnet::shipped()
                .into_iter()
                .filter(|n| evalnet::default_for(n.rule()))
                .collect()),
            EvalChoice::Path(p) => EvalNet::load(std::path::Path::new(p))
                .map(|n| vec![Arc::new(n)])
                .map_err(|e| format!("--eval {p}: {e}")),
        }
    }

    /// Loads the network for an engine playing `sample`'s game (`None` for `none`, and for
    /// `auto` where no network is shipped for that game) with the configured backend
    /// threads; the error is the message for the command line.
    pub fn open_net_for<G: Game>(&self, sample: &G) -> Result<Option<SolverNet>, String> {
        let path = match &self.net {
            NetChoice::None => return Ok(None),
            NetChoice::Path(p) => p.clone(),
            NetChoice::Auto => match crate::nn::shipped::resolve_for_game(
                "auto",
                &sample.name(),
                sample.width(),
                sample.height(),
            ) {
                Some(p) => p,
                None => return Ok(None),
            },
        };
        SolverNet::open(&path, &self.backend, self.symmetries, self.threads)
            .map_err(|e| format!("--net {}: {e}", self.net.as_arg()))
    }

    /// The players' settings with a loaded network and the evaluation networks of
    /// [`EngineConfig::open_eval`].
    pub fn player_settings(
        &self,
        net: Option<SolverNet>,
        eval_nets: Vec<Arc<EvalNet>>,
    ) -> PlayerSettings {
        PlayerSettings {
            eval_nets,
            threads: self.threads,
            workers: self.workers,
            memory_bytes: self.memory_bytes,
            seed: self.seed,
            net,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    #[test]
    fn read_once_with_defaults() {
        let cli = Cli::try_parse_from(["pcn", "gomocup"]).unwrap();
        let c = EngineConfig::from_global(&cli.global);
        assert_eq!(c.threads, DEFAULT_THREADS);
        assert_eq!((c.memory_bytes, c.nodes, c.seed), (256 << 20, None, 0));
        assert!(!c.memory_given);
        assert_eq!(c.net, NetChoice::Auto);
        // No network is shipped for Gomoku: `auto` is none there.
        let gomoku =
            crate::game::gomoku::Gomoku::new(15, 15, crate::game::gomoku::Rule::Freestyle).unwrap();
        assert!(c.open_net_for(&gomoku).unwrap().is_none());
        let cli = Cli::try_parse_from([
            "pcn",
            "--threads",
            "3",
            "--memory",
            "2",
            "--seed",
            "5",
            "--net",
            "NONE",
            "gtp",
        ])
        .unwrap();
        let c = EngineConfig::from_global(&cli.global);
        assert_eq!((c.threads, c.memory_bytes, c.seed), (3, 2 << 20, 5));
        assert!(c.memory_given);
        assert_eq!(c.net, NetChoice::None);
        assert_eq!(NetChoice::parse("m/x").as_arg(), "m/x");
        assert_eq!(NetChoice::parse("AUTO"), NetChoice::Auto);
    }
}
