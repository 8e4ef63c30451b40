//! Gomoku proof analysis for solver work: the prover's decision nodes of a proof file
//! (`pcn solve --proof-dir`), what kind of move the proof plays there, and the positions
//! themselves as SGF problems, a quicker yardstick than whole problems
//! (`scripts/hard_positions.sh`, docs/notebook/2026-11-25-thirteenth-session-narrowed-search.md).
//!
//! ```sh
//! cargo run --release --example proof_positions -- PROOF.sgf PROBLEM.sgf [--ranks] \
//!     [--lambda-nodes N] [--narrow N] [--zone N] [--deep-vct N] \
//!     [--dump DIR --max-ply P --take K]
//! ```
//!
//! A decision node is a position of the proof where the prover is to move, has a choice (no
//! 4T forced point) and has no threat-space win within the solver's default VCF/VCT budget:
//! the nodes where the solver must find a move by search. For each one it prints the proof's
//! move, whether that move is a four, and whether it is a *threat of a threat*: after it and a
//! pass by the defender, the prover has a VCF or VCT within `--lambda-nodes` nodes (the
//! λ2 moves of Thomsen's lambda search). `--ranks` adds the candidates (empty points near a
//! stone), how many of them are such threats, and the proof move's rank by the static threat
//! priors among all candidates and among the threats. `--dump` writes up to `--take`
//! decision positions within `--max-ply` plies of the proof's root, evenly spread, as
//! `DIR/<problem>_<NNN>.sgf` (the problem's moves followed by the proof's path).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use pcn::game::gomoku::{Gomoku, Rule};
use pcn::game::{Color, Game, Move};
use pcn::search::gomoku::greedy::candidates;
use pcn::search::gomoku::learn::patpolicy::{PatternPolicy, BUILTIN};
use pcn::search::gomoku::threat::ThreatSolver;
use pcn::search::solver::heuristic::{threat_priors, Evaluation, ThreatPriors};
use pcn::search::solver::knowledge::{Knowledge, KnowledgeState};
use pcn::search::solver::{Heuristic, SolverGame};
use pcn::search::{Budget, Limits};
use pcn::sgf::{self, GameTree};

#[derive(Parser)]
#[command(about = "Decision nodes of a Gomoku proof: move kinds, ranks, positions as SGF")]
struct Args {
    /// The proof file (`pcn solve --proof-dir`).
    proof: PathBuf,
    /// The problem it proves (its main line gives the proof's root).
    problem: PathBuf,
    /// Node budget of the VCF/VCT search after a move and a pass.
    #[arg(long, default_value_t = 1000)]
    lambda_nodes: u64,
    /// Also rank the proof's move among the candidates (one threat search per candidate).
    #[arg(long)]
    ranks: bool,
    /// Also report whether the solver's narrowing (`pcn solve --lambda N`) keeps the proof's
    /// move, with this node budget.
    #[arg(long, default_value_t = 0)]
    narrow: u64,
    /// Also rank the proof's move among the narrowed moves by the replies the pass-threat
    /// zone leaves open after it (fewest first), with this narrowing budget.
    #[arg(long, default_value_t = 0)]
    zone: u64,
    /// With `--ranks`, also rank the proof's move among the threats of a threat by the
    /// priors with this share of the learned pattern policy (the narrowed phase's
    /// `--narrow-patterns`); 0: not printed.
    #[arg(long, default_value_t = 0.0)]
    mixed: f32,
    /// Also report whether a fresh VCT search (depth as the solver's) within this many
    /// nodes finds a win at each decision node, and how long it took; 0: not run. The
    /// decision nodes are those without a win within the solver's own budget, so this
    /// measures how many of them a larger threat search alone would settle.
    #[arg(long, default_value_t = 0)]
    deep_vct: u64,
    /// The pattern weight file for `--mixed` (default: the shipped table).
    #[arg(long)]
    pattern_file: Option<PathBuf>,
    /// Write decision positions as SGF problems into this directory.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Deepest ply below the proof's root of a written position.
    #[arg(long, default_value_t = 6)]
    max_ply: usize,
    /// How many positions to write at most (evenly spread over those found).
    #[arg(long, default_value_t = 8)]
    take: usize,
}

static NEVER: AtomicBool = AtomicBool::new(false);

/// One decision node: the path from the proof's root and what was found there.
struct Decision {
    path: Vec<Move>,
    line: String,
    four: bool,
    lambda2: bool,
}

struct Walk {
    prover: Color,
    know: Knowledge,
    lambda_nodes: u64,
    ranks: bool,
    narrow: u64,
    zone: u64,
    deep_vct: u64,
    /// Decision nodes where `deep_vct` found a win.
    deep_wins: usize,
    mixed: f32,
    table: Option<&'static PatternPolicy>,
    threat: ThreatSolver,
    seen: HashSet<u64>,
    path: Vec<Move>,
    found: Vec<Decision>,
}

/// The children of node `i` of `t`: the next node of the sequence, or the variations.
fn children(t: &GameTree, i: usize) -> Vec<(&GameTree, usize)> {
    if i + 1 < t.nodes.len() {
        vec![(t, i + 1)]
    } else {
        t.variations.iter().map(|v| (v, 0)).collect()
    }
}

/// The static threat priors of the side to move (what the solver ranks moves by).
fn static_priors(g: &Gomoku) -> Evaluation {
    let mut e = Evaluation::default();
    threat_priors(g, &mut Vec::new(), &mut e);
    e
}

/// The priors with `share` of a learned pattern policy (the narrowed phase's): `table`, or
/// the shipped one (the threat priors alone when neither is there).
fn mixed_priors(g: &Gomoku, share: f32, table: Option<&'static PatternPolicy>) -> Evaluation {
    let Some(t) = table.or(BUILTIN.as_ref()) else {
        return static_priors(g);
    };
    let mut h = ThreatPriors::with_policy(t, share);
    let mut out = vec![Evaluation::default()];
    h.priors_batch(&[g], &mut out);
    out.pop().unwrap_or_default()
}

fn move_at(g: &Gomoku, t: &GameTree, i: usize) -> Option<Move> {
    let (c, v) = t.nodes[i].move_value()?;
    let id = c.letter().to_string();
    let (x, y) = sgf::parse_point(&id, v, g.width(), g.height()).ok()??;
    Some((y * g.width() + x) as Move)
}

impl Walk {
    /// Whether the side to move has a VCF within `vcf_nodes` or a VCT within `vct_nodes`.
    fn threat_win(&mut self, g: &mut Gomoku, vcf_nodes: u64, vct_nodes: u64) -> bool {
        let limits = Limits::nodes(vcf_nodes);
        let mut b = Budget::new(&limits, &NEVER);
        if self
            .threat
            .vcf(g, &mut b, self.know.vcf_depth)
            .is_some_and(|l| !l.is_empty())
        {
            return true;
        }
        let limits = Limits::nodes(vct_nodes);
        let mut b = Budget::new(&limits, &NEVER);
        self.threat
            .vct(g, &mut b, self.know.vct_depth)
            .is_some_and(|l| !l.is_empty())
    }

    /// After `m` and a pass, whether the mover has a threat-space win; `None` when `m` ends
    /// the game or forces the reply (a four: no pass is possible).
    fn after_pass(&mut self, g: &mut Gomoku, m: Move) -> Option<bool> {
        g.play(m).ok()?;
        let r = if g.outcome().is_some() || g.forced_point().is_some() {
            None
        } else {
            let defender = g.to_move();
            g.set_to_move(defender.opp());
            let r = self.threat_win(g, self.lambda_nodes, self.lambda_nodes);
            g.set_to_move(defender);
            Some(r)
        };
        g.undo();
        r
    }

    fn visit(&mut self, g: &mut Gomoku, t: &GameTree, i: usize) {
        if g.outcome().is_some() {
            return;
        }
        let kids = children(t, i);
        if g.to_move() == self.prover
            && kids.len() == 1
            && g.forced_point().is_none()
            && self.seen.insert(g.hash())
        {
            let (ct, ci) = kids[0];
            if let Some(m) = move_at(g, ct, ci) {
                let (vcf_nodes, vct_nodes) = (self.know.vcf_nodes, self.know.vct_nodes);
                if !self.threat_win(g, vcf_nodes, vct_nodes) {
                    self.decision(g, m);
                }
            }
        }
        for (ct, ci) in kids {
            let Some(m) = move_at(g, ct, ci) else {
                continue;
            };
            if g.play(m).is_err() {
                continue;
            }
            self.path.push(m);
            self.visit(g, ct, ci);
            self.path.pop();
            g.undo();
        }
    }

    fn decision(&mut self, g: &mut Gomoku, m: Move) {
        let four = g.makes_four(g.cell_of(m), self.prover);
        let lambda2 = self.after_pass(g, m) == Some(true);
        let mut line = format!(
            "ply {:2} move {:4} four {:5} lambda2 {:5}",
            self.path.len(),
            g.move_to_gtp(m),
            four,
            lambda2
        );
        if self.deep_vct > 0 {
            // A fresh table each time: the shared one holds failures of the solver's budget.
            let limits = Limits::nodes(self.deep_vct);
            let mut b = Budget::new(&limits, &NEVER);
            let t0 = std::time::Instant::now();
            let win = ThreatSolver::new(20)
                .vct(g, &mut b, self.know.vct_depth)
                .is_some_and(|l| !l.is_empty());
            self.deep_wins += usize::from(win);
            line += &format!(
                " deep_vct {win:5} nodes {:8} {:.2}s",
                b.nodes,
                t0.elapsed().as_secs_f64()
            );
        }
        if self.narrow > 0 {
            let mut st = KnowledgeState::new(Knowledge {
                lambda_nodes: self.narrow,
                ..Knowledge::default()
            });
            let mut moves = Vec::new();
            g.legal_moves(&mut moves);
            g.narrow_prover_moves(&mut st, &mut moves);
            line += &format!(" kept {:5} of {:3}", moves.contains(&m), moves.len());
        }
        if self.zone > 0 {
            let mut st = KnowledgeState::new(Knowledge {
                lambda_nodes: self.zone,
                vct: true,
                ..Knowledge::default()
            });
            let mut moves = Vec::new();
            g.legal_moves(&mut moves);
            g.narrow_prover_moves(&mut st, &mut moves);
            let e = static_priors(g);
            let mut scored = Vec::new();
            for &c in &moves {
                g.play_unchecked(c);
                let mut replies = Vec::new();
                g.legal_moves(&mut replies);
                let mut out = Vec::new();
                let open = if g.outcome().is_some() {
                    0
                } else {
                    g.quick_wins_second(&mut st, &replies, &mut out);
                    replies.len() - out.len()
                };
                g.undo();
                let p = e.policy.get(c as usize).copied().unwrap_or(0.0);
                scored.push((c, open, p));
            }
            if let Some(&(_, mo, mp)) = scored.iter().find(|x| x.0 == m) {
                let r_open = 1 + scored.iter().filter(|x| x.1 < mo).count();
                let r_prior = 1 + scored.iter().filter(|x| x.2 > mp).count();
                let mut opens: Vec<usize> = scored.iter().map(|x| x.1).collect();
                opens.sort_unstable();
                line += &format!(
                    " open {mo:3} rank_open {r_open:2} rank_prior {r_prior:2} of {:2} opens {:?}",
                    scored.len(),
                    &opens[..opens.len().min(8)]
                );
            } else {
                line += " (not kept)";
            }
        }
        if self.ranks {
            let mut cells = Vec::new();
            candidates(g, &mut cells);
            let e = static_priors(g);
            let pm = e.policy.get(m as usize).copied().unwrap_or(0.0);
            let mixed = (self.mixed > 0.0).then(|| mixed_priors(g, self.mixed, self.table));
            let qm = mixed
                .as_ref()
                .map_or(0.0, |x| x.policy.get(m as usize).copied().unwrap_or(0.0));
            let (mut threats, mut rank_all, mut rank_threats) = (0, 1, 1);
            let mut rank_mixed = 1;
            let moves: Vec<Move> = cells.iter().map(|&c| g.move_of(c)).collect();
            for c in moves {
                let better = e.policy.get(c as usize).copied().unwrap_or(0.0) > pm;
                rank_all += usize::from(better);
                if self.after_pass(g, c) == Some(true) {
                    threats += 1;
                    rank_threats += usize::from(better);
                    if let Some(x) = &mixed {
                        rank_mixed +=
                            usize::from(x.policy.get(c as usize).copied().unwrap_or(0.0) > qm);
                    }
                }
            }
            if mixed.is_some() {
                line += &format!(" rank_mixed_among_lambda2 {rank_mixed:3}");
            }
            line += &format!(
                " candidates {:3} lambda2 {:3} rank {:3} rank_among_lambda2 {:3}",
                cells.len(),
                threats,
                rank_all,
                rank_threats
            );
        }
        self.found.push(Decision {
            path: self.path.clone(),
            line,
            four,
            lambda2,
        });
    }
}

fn read_tree(p: &Path) -> Result<GameTree, String> {
    let text = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
    GameTree::parse_bytes(&text).map_err(|e| format!("{}: {e}", p.display()))
}

fn run(a: &Args) -> Result<(), String> {
    let problem = read_tree(&a.problem)?;
    let plies = problem.main_line_moves().map_err(|e| e.to_string())?.len();
    let proof = read_tree(&a.proof)?;
    // Every shared Gomoku problem and every proof `pcn solve` writes for it uses 4T.
    let mut g = sgf::to_gomoku_at(&proof, Rule::FourT, plies).map_err(|e| e.to_string())?;
    // The proof's root: the node holding the problem's last move.
    let mut cur = (&proof, 0usize);
    let mut seen = usize::from(
        proof
            .nodes
            .first()
            .is_some_and(|n| n.move_value().is_some()),
    );
    while seen < plies {
        let k = children(cur.0, cur.1);
        cur = *k.first().ok_or("the proof is shorter than the problem")?;
        seen += usize::from(cur.0.nodes[cur.1].move_value().is_some());
    }
    let mut w = Walk {
        prover: g.to_move(),
        know: Knowledge::default(),
        lambda_nodes: a.lambda_nodes,
        ranks: a.ranks,
        narrow: a.narrow,
        zone: a.zone,
        deep_vct: a.deep_vct,
        deep_wins: 0,
        mixed: a.mixed,
        table: match &a.pattern_file {
            Some(f) => {
                let p = PatternPolicy::load(f).map_err(|e| format!("{}: {e}", f.display()))?;
                // One table for the whole run.
                Some(&*Box::leak(Box::new(p)))
            }
            None => None,
        },
        threat: ThreatSolver::new(20),
        seen: HashSet::new(),
        path: Vec::new(),
        found: Vec::new(),
    };
    w.visit(&mut g, cur.0, cur.1);
    for d in &w.found {
        println!("{}", d.line);
    }
    let quiet: Vec<&Decision> = w.found.iter().filter(|d| !d.four).collect();
    println!(
        "decision nodes {}, fours {}, quiet {} of which threats of a threat (lambda2) {}",
        w.found.len(),
        w.found.len() - quiet.len(),
        quiet.len(),
        quiet.iter().filter(|d| d.lambda2).count()
    );
    if a.deep_vct > 0 {
        println!(
            "VCT within {} nodes (fresh table): a win at {} of the {} decision nodes",
            a.deep_vct,
            w.deep_wins,
            w.found.len()
        );
    }
    if let Some(dir) = &a.dump {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let near: Vec<&Decision> = w
            .found
            .iter()
            .filter(|d| (1..=a.max_ply).contains(&d.path.len()))
            .collect();
        let n = near.len().min(a.take);
        let stem = a
            .problem
            .file_stem()
            .map_or("problem".into(), |s| s.to_string_lossy().into_owned());
        for k in 0..n {
            let d = near[k * near.len() / n];
            let mut t = problem.clone();
            let mut c = w.prover;
            for &m in &d.path {
                let m = m as usize;
                t.push_move(c, Some((m % g.width(), m / g.width())));
                c = c.opp();
            }
            let f = dir.join(format!("{stem}_{k:03}.sgf"));
            std::fs::write(&f, t.to_sgf()).map_err(|e| format!("{}: {e}", f.display()))?;
        }
        println!(
            "wrote {n} of {} positions within {} plies",
            near.len(),
            a.max_ply
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("proof_positions: {e}");
            ExitCode::FAILURE
        }
    }
}
