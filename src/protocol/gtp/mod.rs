//! The GTP v2 front end (see `docs/gtp.md`), generic over any [`GtpGame`] (Killall-Go,
//! Gomoku).
//!
//! [`run`] reads lines (from the input thread), preprocesses and parses them into typed
//! [`Command`]s and answers each one, strictly in order, with `=`/`?`, the id, and one blank
//! line, flushing after every response. Searches run on the engine thread:
//!
//! - `genmove`, `reg_genmove` and `pcn-solve` wait for their search; lines that arrive
//!   meanwhile stay queued and are answered afterwards (Sabaki's queued `protocol_version`
//!   does not cut a genmove short).
//! - `lz-analyze` / `kata-analyze` answer `=` at once, then print one `info` line per
//!   interval until *any* new input line arrives; then the search is stopped, the blank line
//!   ends the response, and the line that interrupted is handled like any other.
//!
//! The configured solver (`--solver`, default `auto`: the game's best; GTP `pcn-solver
//! NAME`; `none` switches it off) runs
//! first in every genmove ([`GtpGame::SOLVER_SHARE`] of the move, under the same hard
//! deadline) and at the start of every analysis: a proven win plays (shows) the proof's move
//! with win rate 1, a proven loss in a game without draws the hardest refutation with win
//! rate 0; otherwise the player (UCT, or the Gomoku player) decides with the rest of the
//! budget. See [`crate::engine::solving`] (the tasks) and [`crate::search::solver_player`]. With `--net`, the solvers (genmove,
//! analysis, `pcn-solve`) use the network heuristic where the model fits the board
//! (`pcn-net` shows it); the UCT player does not use it.
//!
//! Bad input gets `? reason` and changes nothing; only `quit` and the end of input end the
//! loop.

pub mod analyze;
pub mod error;
pub mod game;
pub mod parse;
pub mod time;

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam::channel::{never, select, Receiver};

pub use self::error::GtpError;
pub use self::game::GtpGame;
use self::parse::{preprocess, AnalyzeArgs, AnalyzeKind, Command, KgsTime, Vertex, COMMANDS};
use self::time::{GtpClock, TimeSystem};
use super::Input;
use crate::engine::clock::MovePlan;
use crate::engine::solving::{self, lock, SharedSolver};
use crate::engine::{Engine, EngineEvent};
use crate::game::{Color, Move, MoveError};
use crate::search::registry::{self, SolverNet};
use crate::search::solver::{CommonOptions, Solver, SolverChoice, SolverOptions};
use crate::search::solver_player::SolverPlay;
use crate::search::uct::{Uct, UctOptions};
use crate::search::{Candidate, Limits, SearchEvent, SearchResult, Searcher};
use crate::sgf::GameTree;

/// `name` answer.
pub const ENGINE_NAME: &str = "pcn";

/// Largest SGF file `loadsgf` reads.
const MAX_SGF_BYTES: u64 = 16 << 20;

/// The solver name that switches the solver off in genmove and analysis.
pub const NO_SOLVER: &str = "none";

/// Reads a GTP solver setting (`--solver`, `pcn-solver`): [`NO_SOLVER`] (`None`), `auto` or
/// a solver name, any case.
pub fn parse_solver(name: &str) -> Result<Option<SolverChoice>, GtpError> {
    if name.trim().eq_ignore_ascii_case(NO_SOLVER) {
        return Ok(None);
    }
    SolverChoice::parse(name)
        .map(Some)
        .map_err(|_| GtpError::UnknownSolver)
}

/// Settings from the command line.
#[derive(Clone, Debug)]
pub struct Options {
    /// Deterministic mode: a playout budget per search instead of the clock (genmove,
    /// analysis, pcn-solve); the hard deadline of a timed genmove still applies.
    pub nodes: Option<u64>,
    /// Seed of the searches.
    pub seed: u64,
    /// Search threads of the solver (MCTS; the others are single-threaded).
    pub threads: usize,
    /// Workers of the solver (more than 1: the job-level search over that many threads).
    pub workers: usize,
    /// Time per move when the controller sent no time settings.
    pub move_time: Duration,
    /// Default `pcn-solve` time.
    pub solve_time: Duration,
    /// Table memory of each searcher in bytes: the UCT tree, the player's table and the
    /// solver's table.
    pub memory_bytes: usize,
    /// The solver of genmove, analysis and `pcn-solve` (`auto`: the game's best); `None`
    /// ([`NO_SOLVER`]): genmove and analysis without a solver, `pcn-solve` with the game's
    /// best.
    pub solver: Option<SolverChoice>,
    /// The network of the solvers (`--net`), used where the model fits the board; `None`:
    /// the games' default heuristics.
    pub net: Option<SolverNet>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            nodes: None,
            seed: 1,
            threads: 1,
            workers: 1,
            move_time: Duration::from_secs(5),
            solve_time: Duration::from_secs(10),
            memory_bytes: crate::search::DEFAULT_MEMORY_BYTES,
            solver: Some(SolverChoice::Auto),
            net: None,
        }
    }
}

/// Runs the GTP loop on `input` (after replaying `prefix`, the lines protocol detection
/// already read) until `quit` or the end of input; returns the exit code. `player`, when
/// given, chooses the moves of genmove/reg_genmove (e.g. the Gomoku alpha-beta player);
/// otherwise, and always for analysis, the UCT searcher does.
pub fn run<G: GtpGame, W: Write>(
    input: Receiver<Input>,
    prefix: Vec<Input>,
    out: W,
    game: G,
    player: Option<Box<dyn Searcher<G>>>,
    opts: Options,
) -> i32 {
    let player = player.map(Engine::new);
    let engine = Engine::new(Box::new(Uct::new(UctOptions {
        seed: opts.seed,
        ..UctOptions::default()
    })));
    engine.set_memory(opts.memory_bytes);
    if let Some(p) = &player {
        p.set_memory(opts.memory_bytes);
    }
    let solver = Arc::new(Mutex::new(make_solver::<G>(opts.solver, &opts)));
    let mut gtp = Gtp {
        solver,
        undo: Vec::new(),
        clock: GtpClock::new(opts.move_time),
        komi: 0.0,
        pending: prefix.into(),
        engine,
        player,
        out,
        game,
        opts,
    };
    gtp.main_loop(&input)
}

/// The table options of the GTP solvers.
fn solver_options(opts: &Options) -> SolverOptions {
    let mut o = SolverOptions::with_common(CommonOptions {
        memory_bytes: opts.memory_bytes,
        seed: opts.seed,
        threads: opts.threads.max(1),
        ..CommonOptions::default()
    });
    o.jobs.workers = opts.workers.max(1);
    o
}

/// How a genmove or an analysis divides its budget with the configured solver.
fn solver_play<G: GtpGame>() -> SolverPlay {
    SolverPlay {
        share: G::SOLVER_SHARE,
        loss_is_lost: !G::DRAWS,
    }
}

/// The genmove/analysis solver, with the network where it fits (`None` when switched off).
fn make_solver<G: GtpGame>(
    choice: Option<SolverChoice>,
    opts: &Options,
) -> Option<Box<dyn Solver<G>>> {
    registry::build::<G>(choice?, &solver_options(opts), opts.net.as_ref()).ok()
}

struct Gtp<G: GtpGame, W: Write> {
    game: G,
    /// The configured solver (genmove, analysis); `None` when switched off.
    solver: SharedSolver<G>,
    /// Plies added by each undoable GTP move (0..=2), most recent last.
    undo: Vec<usize>,
    clock: GtpClock,
    komi: f64,
    /// Lines read but not yet handled (interrupting lines, detection prefix).
    pending: VecDeque<Input>,
    engine: Engine<G>,
    /// The genmove player when it is not the UCT searcher.
    player: Option<Engine<G>>,
    out: W,
    opts: Options,
}

/// A handler's answer: the text after `=`, or why it failed (the text after `?`).
type Reply = Result<String, GtpError>;

fn illegal(_: MoveError) -> GtpError {
    GtpError::IllegalMove
}

impl<G: GtpGame, W: Write> Gtp<G, W> {
    fn main_loop(&mut self, input: &Receiver<Input>) -> i32 {
        loop {
            let next = match self.pending.pop_front() {
                Some(i) => i,
                None => input.recv().unwrap_or(Input::Eof),
            };
            match next {
                Input::Eof => return 0,
                Input::TooLong { .. } => self.respond(&None, Err(GtpError::Syntax)),
                Input::Line { text, at } => {
                    let Some(line) = preprocess(&text) else {
                        continue;
                    };
                    let parsed = parse::parse_line(&line);
                    let id = parsed.id;
                    let cmd = match parsed.command {
                        Ok(c) => c,
                        Err(e) => {
                            self.respond(&id, Err(e.into()));
                            continue;
                        }
                    };
                    match cmd {
                        Command::Quit => {
                            self.respond(&id, Ok(String::new()));
                            return 0;
                        }
                        Command::Analyze(kind, args) => self.analyze(&id, kind, args, input),
                        c => {
                            let r = self.dispatch(c, at);
                            self.respond(&id, r);
                        }
                    }
                }
            }
        }
    }

    /// Writes one response: `=`/`?`, id, the text, and the blank line that ends it.
    fn respond(&mut self, id: &Option<String>, r: Reply) {
        let (mark, text) = match r {
            Ok(t) => ('=', t),
            Err(e) => ('?', e.to_string()),
        };
        let id = id.as_deref().unwrap_or("");
        // No blank line may appear inside a response.
        let body: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut s = format!("{mark}{id}");
        if text.starts_with('\n') {
            s.push('\n');
        } else if !body.is_empty() {
            s.push(' ');
        }
        s.push_str(&body.join("\n"));
        s.push_str("\n\n");
        self.write(&s);
    }

    fn write(&mut self, s: &str) {
        // A closed stdout leaves nothing to talk to; the loop ends at EOF on input.
        let _ = self.out.write_all(s.as_bytes());
        let _ = self.out.flush();
    }

    fn dispatch(&mut self, c: Command, at: Instant) -> Reply {
        use Command as C;
        match c {
            C::ProtocolVersion => Ok("2".into()),
            C::Name => Ok(ENGINE_NAME.into()),
            C::Version => Ok(env!("CARGO_PKG_VERSION").into()),
            C::KnownCommand(n) => Ok(parse::is_known(&n).to_string()),
            C::ListCommands => Ok(COMMANDS.join("\n")),
            C::Boardsize(n) => self.resize(n, n),
            C::RectangularBoardsize(w, h) => self.resize(w, h),
            C::ClearBoard => {
                let (w, h) = (self.game.width(), self.game.height());
                if let Some(g) = self.game.resized(w, h) {
                    self.game = g;
                }
                self.undo.clear();
                self.engine.clear();
                self.clear_solver();
                Ok(String::new())
            }
            C::Komi(k) => {
                self.komi = k;
                Ok(String::new())
            }
            C::Play(color, v) => {
                let m = self.vertex_move(v).map_err(illegal)?;
                let n = self.game.play_as(m, color).map_err(illegal)?;
                self.undo.push(n);
                Ok(String::new())
            }
            C::Genmove(color) => self.genmove(color, at, true),
            C::RegGenmove(color) => self.genmove(color, at, false),
            C::Undo => {
                let n = self.undo.pop().ok_or(GtpError::CannotUndo)?;
                for _ in 0..n {
                    self.game.undo();
                }
                Ok(String::new())
            }
            C::Showboard => Ok(self.showboard()),
            C::Loadsgf(file, n) => self.loadsgf(&file, n),
            C::Printsgf(file) => self.printsgf(file),
            C::TimeSettings(m, b, s) => {
                self.clock.time_settings(m, b, s);
                Ok(String::new())
            }
            C::TimeLeft(c, t, s) => {
                self.clock.time_left(c, t, s);
                Ok(String::new())
            }
            C::KgsTimeSettings(k) => {
                match k {
                    KgsTime::None => self.clock.set(TimeSystem::Unlimited),
                    KgsTime::Absolute(m) => self.clock.time_settings(m, 0, 0),
                    KgsTime::Canadian(m, b, s) => self.clock.time_settings(m, b, s),
                    // Japanese periods: every move must fit in one period.
                    KgsTime::Byoyomi(m, b, _) => self.clock.time_settings(m, b, 1),
                }
                Ok(String::new())
            }
            C::FinalScore => self.game.score_text().ok_or(GtpError::CannotScore),
            C::SetFreeHandicap(vs) => self.set_free_handicap(&vs),
            C::GoguiAnalyzeCommands => Ok([
                "string/PCN Solve (10 s)/pcn-solve 10",
                "string/PCN Solve (60 s)/pcn-solve 60",
                "string/PCN Solve.../pcn-solve %s",
                "string/PCN Network/pcn-net",
            ]
            .join("\n")),
            C::PcnSolve(secs) => self.solve(secs, at),
            C::PcnSolver(name) => self.set_solver(name),
            C::PcnNet => Ok(self.net_text()),
            // Handled by the main loop (they need the input channel or end it).
            C::Quit | C::Analyze(..) => Err(GtpError::Internal),
        }
    }

    fn resize(&mut self, w: u64, h: u64) -> Reply {
        let g = (w <= 25 && h <= 25)
            .then(|| self.game.resized(w as usize, h as usize))
            .flatten()
            .ok_or(GtpError::UnacceptableSize)?;
        self.game = g;
        self.undo.clear();
        self.clear_solver();
        Ok(String::new())
    }

    /// Forgets the solver's tables (new game or board).
    fn clear_solver(&mut self) {
        if let Some(s) = lock(&self.solver).as_mut() {
            s.clear();
        }
    }

    /// `pcn-net`: the network the solvers use (`none`, or the model, and whether it fits
    /// the current board).
    fn net_text(&self) -> String {
        match &self.opts.net {
            None => "none".into(),
            Some(n) if n.fits(&self.game) => n.describe(),
            Some(n) => format!("{} (not used: the board does not fit)", n.describe()),
        }
    }

    /// `pcn-solver [NAME]`: answers the current solver (`auto` resolved to the game's
    /// solver), or switches to `NAME`.
    fn set_solver(&mut self, name: Option<String>) -> Reply {
        let Some(name) = name else {
            return Ok(match self.opts.solver {
                None => NO_SOLVER.to_string(),
                Some(c) => c.resolve::<G>().name().to_string(),
            });
        };
        let choice = parse_solver(&name)?;
        let s = make_solver::<G>(choice, &self.opts);
        *lock(&self.solver) = s;
        self.opts.solver = choice;
        Ok(String::new())
    }

    fn vertex_move(&self, v: Vertex) -> Result<Move, MoveError> {
        match v {
            Vertex::Pass => self
                .game
                .pass_action()
                .ok_or(MoveError::Illegal("no pass in this game")),
            Vertex::Point { x, row } => {
                let (w, h) = (self.game.width(), self.game.height());
                if x >= w || row == 0 || row > h {
                    return Err(MoveError::OffBoard);
                }
                Ok(((row - 1) * w + x) as Move)
            }
        }
    }

    fn empty_points(&self) -> usize {
        let n = self.game.width() * self.game.height();
        (0..n as Move)
            .filter(|&m| self.game.stone_at(m).is_none())
            .count()
    }

    /// Runs the genmove player (the UCT search unless another player was given) on `pos`
    /// and waits for it; with a solver configured, the solver first (see the module docs).
    fn search_blocking(
        &mut self,
        pos: &G,
        limits: Limits,
        hard: Option<Instant>,
    ) -> Option<SearchResult> {
        let has_solver = lock(&self.solver).is_some();
        let engine = self.player.as_mut().unwrap_or(&mut self.engine);
        let id = if has_solver {
            let task = solving::play_task(self.solver.clone(), solver_play::<G>());
            engine.run_task(pos.clone(), limits, hard, task)
        } else {
            engine.search(pos.clone(), limits, hard)
        };
        engine.wait(id)
    }

    fn genmove(&mut self, color: Color, at: Instant, play: bool) -> Reply {
        let pass_text = || "pass".to_string();
        if self.game.outcome().is_some() {
            return Ok(pass_text());
        }
        let Some(pos) = self.game.with_to_move(color) else {
            // The rules give this colour no move now (e.g. White during Black's forced
            // opening stones): answer pass without changing the position.
            return Ok(pass_text());
        };
        let mut legal = Vec::new();
        pos.legal_moves(&mut legal);
        let mv = if legal.len() <= 1 {
            legal.first().copied()
        } else {
            let plan = self.clock.plan(color, self.empty_points());
            let (mut limits, hard) = match plan {
                MovePlan::Instant => (Limits::nodes(64), at + Duration::from_millis(20)),
                MovePlan::Search { soft, hard } => (Limits::time(soft), at + hard),
            };
            if let Some(n) = self.opts.nodes {
                limits = Limits::nodes(n);
            }
            let r = self.search_blocking(&pos, limits, Some(hard));
            r.and_then(|r| r.best)
                .filter(|m| legal.contains(m))
                .or(legal.first().copied())
        };
        let Some(mv) = mv else {
            return Ok(pass_text());
        };
        let text = pos.move_to_gtp(mv);
        if play {
            match self.game.play_as(mv, color) {
                Ok(n) => self.undo.push(n),
                Err(e) => {
                    log::error!("genmove chose {text}, which does not play: {e}");
                    return Ok(pass_text());
                }
            }
            self.clock.spend(color, at.elapsed());
        }
        Ok(text)
    }

    fn solve(&mut self, secs: Option<f64>, at: Instant) -> Reply {
        let secs = secs.map_or(self.opts.solve_time, |s| {
            Duration::from_secs_f64(s.min(1.0e7))
        });
        let me = self.game.to_move();
        let limits = match self.opts.nodes {
            Some(n) => Limits::nodes(n),
            None => Limits::time(secs),
        };
        let hard = at + secs + secs / 20 + Duration::from_millis(200);
        let hard = self.opts.nodes.is_none().then_some(hard);
        let pos = self.game.clone();
        // A fresh solver per call: the answer does not depend on earlier searches.
        let task = solving::solve_task::<G>(
            self.opts.solver.unwrap_or_default(),
            solver_options(&self.opts),
            self.opts.net.clone(),
        );
        let id = self.engine.run_task(pos.clone(), limits, hard, task);
        let r = self.engine.wait(id).unwrap_or_default();
        let mv = |m: Option<Move>| m.map_or_else(|| "pass".to_string(), |m| pos.move_to_gtp(m));
        Ok(match r.proven {
            Some(Some(w)) if w == me => format!("win {}", mv(r.best)),
            // A proven draw is not a win for the side to move either.
            Some(_) => "loss".to_string(),
            None => format!("unknown {}", mv(r.best)),
        })
    }

    fn showboard(&self) -> String {
        let (w, h) = (self.game.width(), self.game.height());
        let letters: String = crate::game::GTP_COLUMNS[..w]
            .iter()
            .map(|&c| format!(" {}", c as char))
            .collect();
        let mut s = format!("\n   {letters}\n");
        let last = self.game.last_move();
        for y in (0..h).rev() {
            s.push_str(&format!("{:>2}", y + 1));
            for x in 0..w {
                let m = (y * w + x) as Move;
                let c = match self.game.stone_at(m) {
                    Some(Color::Black) => 'X',
                    Some(Color::White) => 'O',
                    None => '.',
                };
                let mark = if last == Some(m) { '(' } else { ' ' };
                s.push(mark);
                s.push(c);
            }
            s.push_str(&format!(" {}\n", y + 1));
        }
        s.push_str(&format!("   {letters}\n"));
        let to_move = match self.game.to_move() {
            Color::Black => "black",
            Color::White => "white",
        };
        s.push_str(&format!(
            "{} ply {} to move {}",
            self.game.name(),
            self.game.ply(),
            to_move
        ));
        if let Some(r) = self.game.score_text() {
            s.push_str(&format!(" result {r}"));
        }
        s
    }

    fn loadsgf(&mut self, file: &str, n: Option<u64>) -> Reply {
        let io = |e: std::io::Error| {
            GtpError::cannot_load(match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_string(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                _ => format!("unreadable ({e})"),
            })
        };
        let meta = std::fs::metadata(file).map_err(io)?;
        if !meta.is_file() {
            return Err(GtpError::cannot_load("not a file"));
        }
        if meta.len() > MAX_SGF_BYTES {
            return Err(GtpError::cannot_load(format!(
                "larger than {MAX_SGF_BYTES} bytes"
            )));
        }
        let bytes = std::fs::read(file).map_err(io)?;
        let tree = GameTree::parse_bytes(&bytes).map_err(GtpError::cannot_load)?;
        // `loadsgf f n`: the position before move n.
        let max = n.map_or(usize::MAX, |n| {
            n.saturating_sub(1).min(usize::MAX as u64) as usize
        });
        let g = self
            .game
            .load_sgf(&tree, max)
            .map_err(GtpError::cannot_load)?;
        if let Ok(Some(k)) = tree.komi() {
            self.komi = k as f64;
        }
        self.undo = vec![1; g.ply()];
        self.game = g;
        self.clear_solver();
        Ok(String::new())
    }

    fn printsgf(&mut self, file: Option<String>) -> Reply {
        let mut t = GameTree::from_moves(
            G::GM,
            self.game.width(),
            self.game.height(),
            self.game.record(),
        );
        if let Some(root) = t.nodes.first_mut() {
            root.set("KM", vec![format!("{}", self.komi)]);
            if let Some(r) = self.game.score_text() {
                root.set("RE", vec![r]);
            }
        }
        let text = t.to_sgf();
        match file {
            Some(f) => {
                std::fs::write(&f, text).map_err(|_| GtpError::CannotSave)?;
                Ok(String::new())
            }
            None => Ok(text),
        }
    }

    fn set_free_handicap(&mut self, vs: &[Vertex]) -> Reply {
        let bad = || GtpError::BadVertexList;
        if self.game.ply() > 0 || self.empty_points() < self.game.width() * self.game.height() {
            return Err(GtpError::BoardNotEmpty);
        }
        let mut moves = Vec::new();
        for &v in vs {
            let m = match v {
                Vertex::Pass => return Err(bad()),
                p => self.vertex_move(p).map_err(|_| bad())?,
            };
            if moves.contains(&m) {
                return Err(bad());
            }
            moves.push(m);
        }
        if moves.len() < 2 {
            return Err(bad());
        }
        // Place in any order the rules accept (Killall-Go's opening fixes one).
        let start = self.game.ply();
        while !moves.is_empty() {
            let Some(i) = (0..moves.len()).find(|&i| {
                let mut g = self.game.clone();
                g.play_as(moves[i], Color::Black).is_ok()
            }) else {
                while self.game.ply() > start {
                    self.game.undo();
                }
                return Err(bad());
            };
            let m = moves.remove(i);
            if self.game.play_as(m, Color::Black).is_err() {
                return Err(bad());
            }
        }
        // Handicap stones cannot be undone.
        self.undo.clear();
        Ok(String::new())
    }

    /// `lz-analyze` / `kata-analyze`: streams until a new input line arrives.
    fn analyze(
        &mut self,
        id: &Option<String>,
        kind: AnalyzeKind,
        args: AnalyzeArgs,
        input: &Receiver<Input>,
    ) {
        let color = args.color.unwrap_or(self.game.to_move());
        let Some(pos) = self.game.with_to_move(color) else {
            self.respond(id, Err(GtpError::CannotAnalyzeColor));
            return;
        };
        self.write(&format!("={}\n", id.as_deref().unwrap_or("")));
        let interval = Duration::from_millis(args.interval_cs.unwrap_or(50).clamp(1, 1 << 30) * 10);
        let limits = self.opts.nodes.map(Limits::nodes).unwrap_or_default();
        let sid = if lock(&self.solver).is_some() {
            let task = solving::analysis_task(self.solver.clone(), solver_play::<G>());
            self.engine.run_task(pos.clone(), limits, None, task)
        } else {
            self.engine.search(pos.clone(), limits, None)
        };
        let events = self.engine.events().clone();
        let mut latest: Option<Vec<Candidate>> = None;
        let mut finished = false;
        let mut events_open = true;
        let mut next = Instant::now() + interval;
        while self.pending.is_empty() {
            let ev_rx = if events_open { events.clone() } else { never() };
            let wait = next.saturating_duration_since(Instant::now());
            select! {
                recv(input) -> msg => {
                    self.pending.push_back(msg.unwrap_or(Input::Eof));
                }
                recv(ev_rx) -> ev => match ev {
                    Ok(EngineEvent::Progress { id: i, event: SearchEvent::Analysis { candidates, .. } })
                        if i == sid => latest = Some(candidates),
                    Ok(EngineEvent::Finished { id: i, .. }) if i == sid => finished = true,
                    Ok(_) => {}
                    Err(_) => events_open = false,
                },
                default(wait) => {
                    if let Some(c) = &latest {
                        if let Some(line) =
                            analyze::info_line(&pos, kind, c, args.max_moves)
                        {
                            self.write(&format!("{line}\n"));
                        }
                    }
                    next += interval;
                    let now = Instant::now();
                    if next < now {
                        next = now + interval;
                    }
                }
            }
        }
        if !finished && events_open {
            self.engine.stop();
            self.engine.wait(sid);
        }
        self.write("\n");
    }
}
