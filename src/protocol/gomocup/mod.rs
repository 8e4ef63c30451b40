//! The Gomocup / Piskvork brain protocol (see `docs/gomocup.md`).
//!
//! [`run`] is the protocol loop: it waits on the input lines (read by another thread) and on
//! the engine's events at the same time. Every line is parsed once, when it arrives, by
//! [`parse::parse_line`] into a typed command; the command table ([`Command::spec`]) says
//! which commands need a started game and which may run during a search (YXSTOP and END at
//! once; ABOUT, INFO and unknown words at once unless earlier lines wait; the rest after the
//! move has been sent, in order). Commands are handled by an exhaustive `match`; bad input
//! gets `ERROR`/`UNKNOWN` and leaves the game unchanged.
//!
//! Coordinates: Gomocup `x` = column, `y` = row from the top (both 0-based); our actions are
//! `y * W + x` with `y = 0` the bottom row, so `y_ours = H - 1 - y_gomocup`.

pub mod parse;
pub mod tasks;

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crossbeam::channel::{select, Receiver};
use thiserror::Error;

use self::parse::{parse_line, BoardLine, Command, Info, Parsed, Point, WhileSearching};
use super::Input;
use crate::engine::clock::{MovePlan, TimeControl};
use crate::engine::{Engine, EngineEvent, SearchId};
use crate::game::gomoku::{Gomoku, Rule, MAX_SIZE, MIN_SIZE};
use crate::game::{Color, Game, Move};
use crate::search::gomoku::greedy::Greedy;
use crate::search::{Limits, SearchEvent, SearchResult, Searcher};

/// The `ABOUT` answer's name.
pub const BRAIN_NAME: &str = "pcn";

/// Settings from the command line that shape the brain.
#[derive(Clone, Debug)]
pub struct Options {
    /// Deterministic mode: a node budget per move instead of the clock's soft budget (the
    /// hard deadline still applies as a safety net), no timings in MESSAGE lines, and every
    /// command waits for a running search (STOP and END included), so the output depends
    /// only on the input.
    pub nodes: Option<u64>,
    /// Table memory of the searcher in bytes (`--memory` or the default), set before the
    /// first command.
    pub memory_bytes: usize,
    /// `memory_bytes` came from `--memory`: `INFO max_memory` may only lower it (otherwise
    /// `INFO max_memory` replaces it).
    pub memory_given: bool,
    /// What the process needs besides the search tables (code, threat-search and evaluation
    /// tables, stacks), `reserve_bytes` plus `reserve_per_thread` for each search thread:
    /// `INFO max_memory` caps the whole brain, so the tables get it less this.
    pub reserve_bytes: usize,
    /// See `reserve_bytes`.
    pub reserve_per_thread: usize,
    /// Threads from `--threads` (replaced by `INFO thread_num`).
    pub threads: Option<usize>,
}

/// The least table memory `INFO max_memory` leaves the searcher.
const MIN_TABLE_BYTES: usize = 1 << 20;

impl Options {
    /// What the process needs besides the search tables with `threads` search threads.
    pub fn reserve(&self, threads: usize) -> usize {
        self.reserve_bytes
            .saturating_add(self.reserve_per_thread.saturating_mul(threads.max(1)))
    }

    /// The table memory after `INFO max_memory` `bytes` (the whole brain's cap) with
    /// `threads` search threads: that less the reserve ([`Options::reserve`]), at
    /// least 1 MiB; it replaces the default, only lowers a `--memory` budget, and 0 (no
    /// limit) or a negative value leaves the budget.
    pub fn memory_after_info(&self, bytes: i64, threads: usize) -> usize {
        match usize::try_from(bytes).ok().filter(|&b| b > 0) {
            Some(b) => {
                let tables = b.saturating_sub(self.reserve(threads)).max(MIN_TABLE_BYTES);
                if self.memory_given {
                    tables.min(self.memory_bytes)
                } else {
                    tables
                }
            }
            None => self.memory_bytes,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            nodes: None,
            memory_bytes: crate::search::DEFAULT_MEMORY_BYTES,
            memory_given: false,
            reserve_bytes: crate::search::PROCESS_RESERVE_BYTES,
            reserve_per_thread: crate::search::PROCESS_RESERVE_PER_THREAD,
            threads: None,
        }
    }
}

/// Most threads `INFO thread_num` may ask for (the command line allows as many).
pub const MAX_THREADS: usize = 1024;

/// One unit of input, parsed once when it arrived.
enum Incoming {
    /// A non-blank line.
    Line {
        /// The text (echoed in errors about block lines).
        text: String,
        /// Its readings.
        parsed: Parsed,
        /// When it was read (move time counts from there).
        at: Instant,
    },
    /// A line too long to keep.
    TooLong,
}

impl Incoming {
    /// Parses `i`; `None` for blank lines and end of input.
    fn from_input(i: Input) -> Option<Incoming> {
        match i {
            Input::Line { text, at } => {
                let parsed = parse_line(&text)?;
                Some(Incoming::Line { text, parsed, at })
            }
            Input::TooLong { .. } => Some(Incoming::TooLong),
            Input::Eof => None,
        }
    }
}

/// Why a command could not be honoured (the text after `ERROR `).
#[derive(Debug, Error, PartialEq, Eq)]
enum CmdError {
    #[error("no game in progress (send START first)")]
    NoGame,
    #[error("unsupported board size {0}x{1} (supported: {MIN_SIZE}..{MAX_SIZE})")]
    Size(i64, i64),
    #[error("coordinates {0},{1} are off the board")]
    OffBoard(i64, i64),
    #[error("point {0},{1} is occupied")]
    Occupied(i64, i64),
    #[error("no stone at {0},{1}")]
    NoStone(i64, i64),
    #[error("bad {0}: {1}")]
    Board(&'static str, String),
    #[error("{0}")]
    Other(String),
}

/// Which reply a running search produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    /// `x,y` (BEGIN, TURN, BOARD).
    Move,
    /// `MESSAGE` lines, then `x,y` (YXNBEST n).
    NBest(usize),
    /// Swap2 with no stones: three moves.
    Swap2Open,
    /// Swap2 with 3 or 5 stones: `SWAP` or one move.
    Swap2Decide,
}

/// A search whose reply has not been sent yet.
struct Pending {
    id: SearchId,
    reply: Reply,
    /// Sent if the search has not answered by `fallback_at`.
    fallback: Option<Move>,
    fallback_at: Option<Instant>,
    started: Instant,
    /// `YXNBEST`: the candidates reported so far.
    lines: Vec<(i32, Vec<Move>, u64)>,
    /// A plain move's search: the depth of its last finished iteration (0 before one),
    /// reported with the move; `None` where no search ran (an instant answer).
    depth: Option<u32>,
}

/// A BOARD / YXBOARD / SWAP2BOARD block being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    Board,
    YxBoard,
    Swap2,
}

impl BlockKind {
    fn name(self) -> &'static str {
        match self {
            BlockKind::Board => "BOARD",
            BlockKind::YxBoard => "YXBOARD",
            BlockKind::Swap2 => "SWAP2BOARD",
        }
    }
}

struct Block {
    kind: BlockKind,
    at: Instant,
    stones: Vec<(Point, i64)>,
    error: Option<String>,
}

/// Most lines accepted in one BOARD block (a full 22x22 board has 484).
const MAX_BLOCK_LINES: usize = 1024;

/// What the loop does after a line.
enum Flow {
    Continue,
    Exit,
}

/// The state of one brain process.
struct Session<W: Write> {
    out: W,
    opts: Options,
    engine: Engine<Gomoku>,
    game: Option<Gomoku>,
    rule: Rule,
    tc: TimeControl,
    max_node: Option<u64>,
    max_depth: Option<u32>,
    /// The last `INFO max_memory` (applied again when `INFO thread_num` changes the reserve).
    max_memory: Option<i64>,
    /// Search threads now (`--threads`, then `INFO thread_num`).
    threads: usize,
    block: Option<Block>,
    pending: Option<Pending>,
    /// Lines that arrived during a search, to run after its reply.
    deferred: VecDeque<Incoming>,
    /// Output failed (manager gone): stop.
    broken: bool,
    /// The search thread is gone: answer static moves.
    engine_dead: bool,
}

/// Runs the Gomocup protocol: `prefix` (lines already read by protocol detection) first, then
/// `input` until `END` or end of input. Returns the process exit code.
pub fn run<W: Write>(
    input: Receiver<Input>,
    prefix: Vec<Input>,
    out: W,
    searcher: Box<dyn Searcher<Gomoku>>,
    opts: Options,
) -> i32 {
    // Every rule's pattern tables, built in the background from the start (about 0.25 s of
    // CPU, once per process): managers such as c-gomoku-cli send `INFO rule` after START's
    // OK with the first BEGIN/BOARD right behind it, so a table built on `INFO rule` was paid
    // for by the first move (the soak of 2026-12-01 saw 110-350 ms first moves at 100 ms a
    // move under exact five and renju). Not at START: building them all there once made a
    // brain on a loaded machine miss c-gomoku-cli's 3 s START deadline. A table still being
    // built when the game needs it is waited for, not built twice.
    let _ = std::thread::Builder::new()
        .name("pcn-tables".into())
        .spawn(|| {
            for rule in Rule::ALL {
                let _ = Gomoku::new(MIN_SIZE, MIN_SIZE, rule);
            }
        });
    let engine = Engine::new(searcher);
    engine.set_memory(opts.memory_bytes);
    if let Some(t) = opts.threads {
        engine.set_threads(t);
    }
    let threads = opts.threads.unwrap_or(1).max(1);
    let mut s = Session {
        out,
        opts,
        engine,
        game: None,
        rule: Rule::Freestyle,
        tc: TimeControl::default(),
        max_node: None,
        max_depth: None,
        max_memory: None,
        threads,
        block: None,
        pending: None,
        deferred: prefix
            .into_iter()
            .filter_map(Incoming::from_input)
            .collect(),
        broken: false,
        engine_dead: false,
    };
    s.main_loop(&input)
}

/// Formats an action as Gomocup `x,y`.
fn fmt_move(g: &Gomoku, m: Move) -> String {
    let (w, h) = (g.width(), g.height());
    let m = m as usize;
    if m >= w * h {
        // Never sent as a move (replies are checked first); only defensive.
        return "?".into();
    }
    format!("{},{}", m % w, h - 1 - m / w)
}

/// The `h8`-style name of a move (column letter from `a`, row from the top, 1-based), as
/// Rapfi prints PVs and pygomo-lib reads them.
fn alg_move(g: &Gomoku, m: Move) -> String {
    let (w, h) = (g.width(), g.height());
    let m = m as usize;
    if m >= w * h {
        return "?".into();
    }
    let x = m % w;
    let y = h - 1 - m / w;
    format!("{}{}", (b'a' + x as u8) as char, y + 1)
}

/// A search report in the line format of Rapfi's UCI-like mode, which pygomo-lib parses:
/// `MESSAGE depth D-D [multipv K] ev SCORE n NODES n/ms NPS tm MS pv h8 i9 ...`.
fn info_line(
    g: &Gomoku,
    depth: u32,
    multipv: Option<usize>,
    score: i32,
    nodes: u64,
    ms: u128,
    pv: &[Move],
) -> String {
    let pv: Vec<String> = pv.iter().map(|&m| alg_move(g, m)).collect();
    let nps = (nodes as u128).checked_div(ms).unwrap_or(0);
    let multipv = multipv.map(|k| format!(" multipv {k}")).unwrap_or_default();
    format!(
        "MESSAGE depth {depth}-{depth}{multipv} ev {score} n {nodes} n/ms {nps} tm {ms} pv {}",
        pv.join(" ")
    )
}

/// Converts a Gomocup point to an action, checking the board.
fn to_move(g: &Gomoku, p: Point) -> Result<Move, CmdError> {
    let (w, h) = (g.width() as i64, g.height() as i64);
    if p.x < 0 || p.y < 0 || p.x >= w || p.y >= h {
        return Err(CmdError::OffBoard(p.x, p.y));
    }
    Ok(((h - 1 - p.y) * w + p.x) as Move)
}

/// Sanitises text from the input for echoing in UNKNOWN/ERROR lines: printable ASCII only,
/// at most 40 characters.
fn echo(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(40)
        .collect()
}

/// Any empty point (last resort when no search answer is usable).
fn any_empty(g: &Gomoku) -> Option<Move> {
    (0..(g.width() * g.height()) as Move).find(|&m| g.stone(m).is_none())
}

/// Whether `m` is a point of the board with no stone on it.
fn playable(g: &Gomoku, m: Move) -> bool {
    (m as usize) < g.width() * g.height() && g.stone(m).is_none()
}

/// The greedy move, used for `timeout_turn 0` and as the fallback when a search is late.
fn greedy_move(g: &Gomoku) -> Option<Move> {
    let stop = AtomicBool::new(false);
    Greedy
        .search(g, &Limits::default(), &stop, &mut |_| {})
        .best
        .filter(|&m| g.stone(m).is_none())
        .or_else(|| any_empty(g))
}

/// Rebuilds a game on a new board with the stones of `stones` (in order), then sets the side
/// to move.
fn rebuild(
    w: usize,
    h: usize,
    rule: Rule,
    stones: &[(Move, Color)],
    to_move: Color,
) -> Result<Gomoku, CmdError> {
    let mut g = Gomoku::new(w, h, rule).map_err(|_| CmdError::Size(w as i64, h as i64))?;
    for &(m, c) in stones {
        g.place(m, c)
            .map_err(|e| CmdError::Other(format!("cannot rebuild position: {e}")))?;
    }
    g.set_to_move(to_move);
    Ok(g)
}

fn stones_of(g: &Gomoku) -> Vec<(Move, Color)> {
    g.history_cells()
        .map(|(c, col)| (g.move_of(c), col))
        .collect()
}

impl<W: Write> Session<W> {
    fn main_loop(&mut self, input: &Receiver<Input>) -> i32 {
        let mut eof = false;
        loop {
            if self.broken {
                return 0;
            }
            // Queued lines run as soon as no search is pending.
            while self.pending.is_none() {
                let Some(i) = self.deferred.pop_front() else {
                    break;
                };
                if let Flow::Exit = self.handle_input(i) {
                    return 0;
                }
            }
            if eof && self.pending.is_none() {
                return 0;
            }
            let wait = match self.pending.as_ref().and_then(|p| p.fallback_at) {
                Some(t) => t.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            let never = crossbeam::channel::never();
            let input = if eof { &never } else { input };
            let never_ev = crossbeam::channel::never();
            let events = if self.engine_dead {
                &never_ev
            } else {
                self.engine.events()
            };
            select! {
                recv(input) -> msg => match msg {
                    Ok(Input::Eof) | Err(_) => eof = true,
                    Ok(i) => {
                        if let Some(i) = Incoming::from_input(i) {
                            if self.pending.is_some() && self.must_defer(&i) {
                                self.deferred.push_back(i);
                            } else if let Flow::Exit = self.handle_input(i) {
                                return 0;
                            }
                        }
                    }
                },
                recv(events) -> ev => match ev {
                    Ok(ev) => self.on_engine_event(ev),
                    Err(_) => {
                        // The search thread is gone: answer with the fallback from now on.
                        log::error!("search thread stopped; answering greedy moves");
                        self.engine_dead = true;
                        if let Some(p) = self.pending.as_mut() {
                            p.fallback_at = None;
                        }
                        self.answer_fallback();
                    }
                },
                default(wait) => self.answer_fallback(),
            }
        }
    }

    /// Whether a line that arrives during a search must wait until the reply is sent, by
    /// the command table ([`Command::spec`]).
    fn must_defer(&self, i: &Incoming) -> bool {
        let Incoming::Line { parsed, .. } = i else {
            return true;
        };
        // Deterministic mode: strictly in order (STOP and END too, so they cannot cut a
        // search short), so the output depends only on the input. Lines of an open block
        // wait with it.
        if self.opts.nodes.is_some() || self.block.is_some() {
            return true;
        }
        match parsed.command.spec().while_searching {
            WhileSearching::Now => false,
            WhileSearching::InOrder => !self.deferred.is_empty(),
            WhileSearching::Queue => true,
        }
    }

    fn line(&mut self, s: &str) {
        if self.out.write_all(s.as_bytes()).is_err()
            || self.out.write_all(b"\n").is_err()
            || self.out.flush().is_err()
        {
            self.broken = true;
        }
    }

    fn error(&mut self, e: CmdError) {
        self.line(&format!("ERROR {e}"));
    }

    fn handle_input(&mut self, i: Incoming) -> Flow {
        match i {
            Incoming::TooLong => {
                if let Some(b) = self.block.as_mut() {
                    b.error.get_or_insert_with(|| "line too long".into());
                } else {
                    self.line("ERROR line too long");
                }
                Flow::Continue
            }
            Incoming::Line { text, parsed, at } => self.handle_line(&text, parsed, at),
        }
    }

    fn handle_line(&mut self, text: &str, parsed: Parsed, at: Instant) -> Flow {
        let Parsed { command, board } = parsed;
        if self.block.is_some() {
            match board {
                Some(BoardLine::Done) => {
                    if let Some(b) = self.block.take() {
                        self.finish_block(b);
                    }
                    return Flow::Continue;
                }
                Some(l) => {
                    if let Some(b) = self.block.as_mut() {
                        let entry = match l {
                            BoardLine::Stone(p, f) => (p, f),
                            BoardLine::Point(p) => (p, 0),
                            BoardLine::Done => return Flow::Continue,
                        };
                        if b.stones.len() >= MAX_BLOCK_LINES {
                            b.error.get_or_insert_with(|| "too many lines".into());
                        } else {
                            b.stones.push(entry);
                        }
                    }
                    return Flow::Continue;
                }
                None => {
                    // A known command inside a block means DONE never came: drop the block
                    // and run the command. Anything else is a bad stone line.
                    match command {
                        Command::Unknown(_) | Command::Bad { .. } => {
                            if let Some(b) = self.block.as_mut() {
                                b.error
                                    .get_or_insert_with(|| format!("bad line '{}'", echo(text)));
                            }
                            return Flow::Continue;
                        }
                        _ => {
                            if let Some(b) = self.block.take() {
                                self.error(CmdError::Board(b.kind.name(), "missing DONE".into()));
                            }
                        }
                    }
                }
            }
        }
        self.dispatch(command, at)
    }

    fn dispatch(&mut self, c: Command, at: Instant) -> Flow {
        if c.spec().needs_game && self.game.is_none() {
            self.error(CmdError::NoGame);
            return Flow::Continue;
        }
        match c {
            Command::Start(n) => self.start(n, n),
            Command::RectStart(w, h) => self.start(w, h),
            Command::Restart => match &self.game {
                Some(g) => {
                    let (w, h) = (g.width() as i64, g.height() as i64);
                    self.start(w, h)
                }
                None => self.error(CmdError::NoGame),
            },
            Command::Begin => {
                if self.game.is_none() {
                    self.error(CmdError::NoGame);
                } else {
                    self.think(Reply::Move, at);
                }
            }
            Command::Turn(p) => match self.opponent_move(p) {
                Ok(()) => self.think(Reply::Move, at),
                Err(e) => self.error(e),
            },
            Command::Board => self.open_block(BlockKind::Board, at),
            Command::YxBoard => self.open_block(BlockKind::YxBoard, at),
            Command::Swap2Board => self.open_block(BlockKind::Swap2, at),
            Command::Info(i) => self.info(i),
            Command::End => {
                self.engine.stop();
                return Flow::Exit;
            }
            Command::About => {
                let about = format!(
                    "name=\"{BRAIN_NAME}\", version=\"{}\", author=\"pcn developers\", country=\"XX\"",
                    env!("CARGO_PKG_VERSION")
                );
                self.line(&about);
            }
            Command::Play(p) => match self.play_own(p) {
                Ok(text) => self.line(&text),
                Err(e) => self.error(e),
            },
            Command::Takeback(p) => match self.takeback(p) {
                Ok(()) => self.line("OK"),
                Err(e) => self.error(e),
            },
            Command::Stop => self.engine.stop(),
            Command::HashClear => self.engine.clear(),
            Command::NBest(n) => {
                if self.game.is_none() {
                    self.error(CmdError::NoGame);
                } else if !(1..=64).contains(&n) {
                    self.error(CmdError::Other(format!("bad YXNBEST count {n} (1..64)")));
                } else {
                    self.think(Reply::NBest(n as usize), at);
                }
            }
            Command::ShowForbid => match &self.game {
                Some(g) => {
                    let mut s = String::from("FORBID ");
                    let (w, h) = (g.width(), g.height());
                    for m in g.forbidden_points() {
                        let m = m as usize;
                        s.push_str(&format!("{:02}{:02}", m % w, h - 1 - m / w));
                    }
                    s.push('.');
                    self.line(&s);
                }
                None => self.error(CmdError::NoGame),
            },
            Command::ShowInfo => {
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
                self.line(&format!("MESSAGE INFO MAX_THREAD_NUM {threads}"));
                // Largest table size we accept, in MB.
                self.line("MESSAGE INFO MAX_HASH_SIZE 4096");
            }
            Command::Bad { reason, .. } => self.error(CmdError::Other(reason)),
            Command::Unknown(w) => {
                let w = echo(&w);
                if w.is_empty() {
                    self.line("UNKNOWN unreadable command");
                } else {
                    self.line(&format!("UNKNOWN command '{w}'"));
                }
            }
        }
        Flow::Continue
    }

    fn start(&mut self, w: i64, h: i64) {
        let ok = (MIN_SIZE as i64..=MAX_SIZE as i64).contains(&w)
            && (MIN_SIZE as i64..=MAX_SIZE as i64).contains(&h);
        // Building the board here also builds the rule's pattern tables (lazily, once); the
        // other rules' tables are being built in the background since the brain started
        // (see `run`).
        match Gomoku::new(w as usize, h as usize, self.rule) {
            Ok(g) if ok => {
                self.game = Some(g);
                self.engine.clear();
                self.line("OK");
            }
            _ => self.error(CmdError::Size(w, h)),
        }
    }

    fn info(&mut self, i: Info) {
        match i {
            Info::TimeoutTurn(v) => self.tc.turn_ms = v,
            Info::TimeoutMatch(v) => self.tc.match_ms = Some(v.max(0)),
            Info::TimeLeft(v) => self.tc.time_left_ms = Some(v),
            Info::TimeIncrement(v) => self.tc.increment_ms = v.max(0),
            Info::MaxMemory(v) => {
                let need = self.opts.reserve(self.threads) + MIN_TABLE_BYTES;
                if usize::try_from(v).is_ok_and(|b| b > 0 && b < need) {
                    log::warn!(
                        "max_memory {v} is below what this brain needs with {} thread(s) (about {} MB); using the least it can",
                        self.threads,
                        need >> 20
                    );
                }
                self.max_memory = Some(v);
                self.engine
                    .set_memory(self.opts.memory_after_info(v, self.threads));
            }
            Info::GameType(_) | Info::Evaluate(_) | Info::Folder(_) => {}
            Info::Rule(mask) => match Rule::from_gomocup(mask) {
                Some(r) => self.set_rule(r),
                None => log::warn!("unsupported rule {mask}; keeping {}", self.rule.name()),
            },
            Info::MaxNode(v) => self.max_node = u64::try_from(v).ok().filter(|&n| n > 0),
            Info::MaxDepth(v) => self.max_depth = u32::try_from(v).ok().filter(|&n| n > 0),
            Info::ThreadNum(v) => {
                if let Ok(n) = usize::try_from(v) {
                    let n = n.clamp(1, MAX_THREADS);
                    self.engine.set_threads(n);
                    if self.threads != n {
                        self.threads = n;
                        // More threads, more per-thread tables: less for the shared ones.
                        if let Some(m) = self.max_memory {
                            self.engine.set_memory(self.opts.memory_after_info(m, n));
                        }
                    }
                }
            }
            Info::BadValue(k) => log::warn!("ignoring INFO {k} with a bad value"),
            Info::Unknown(k) => log::debug!("ignoring INFO {k}"),
        }
    }

    fn set_rule(&mut self, r: Rule) {
        if r == self.rule {
            return;
        }
        self.rule = r;
        if let Some(g) = &self.game {
            match rebuild(g.width(), g.height(), r, &stones_of(g), g.to_move()) {
                Ok(ng) => self.game = Some(ng),
                Err(e) => log::warn!("rule change: {e}"),
            }
        } else {
            // Build the tables now rather than during the first move.
            let _ = Gomoku::new(MIN_SIZE, MIN_SIZE, r);
        }
    }

    fn opponent_move(&mut self, p: Point) -> Result<(), CmdError> {
        let g = self.game.as_mut().ok_or(CmdError::NoGame)?;
        let m = to_move(g, p)?;
        if g.stone(m).is_some() {
            return Err(CmdError::Occupied(p.x, p.y));
        }
        let c = g.to_move();
        g.place(m, c).map_err(|e| CmdError::Other(e.to_string()))
    }

    fn play_own(&mut self, p: Point) -> Result<String, CmdError> {
        let g = self.game.as_mut().ok_or(CmdError::NoGame)?;
        let m = to_move(g, p)?;
        if g.stone(m).is_some() {
            return Err(CmdError::Occupied(p.x, p.y));
        }
        let c = g.to_move();
        g.place(m, c).map_err(|e| CmdError::Other(e.to_string()))?;
        Ok(fmt_move(g, m))
    }

    fn takeback(&mut self, p: Point) -> Result<(), CmdError> {
        let g = self.game.as_ref().ok_or(CmdError::NoGame)?;
        let m = to_move(g, p)?;
        let Some(color) = g.stone(m) else {
            return Err(CmdError::NoStone(p.x, p.y));
        };
        if g.last_move() == Some(m) {
            if let Some(g) = self.game.as_mut() {
                g.undo();
                g.set_to_move(color);
            }
            return Ok(());
        }
        let stones: Vec<_> = stones_of(g).into_iter().filter(|&(s, _)| s != m).collect();
        self.game = Some(rebuild(g.width(), g.height(), self.rule, &stones, color)?);
        Ok(())
    }

    fn open_block(&mut self, kind: BlockKind, at: Instant) {
        self.block = Some(Block {
            kind,
            at,
            stones: Vec::new(),
            error: None,
        });
    }

    fn finish_block(&mut self, b: Block) {
        let name = b.kind.name();
        let Some(g) = &self.game else {
            self.error(CmdError::NoGame);
            return;
        };
        if let Some(e) = b.error {
            self.error(CmdError::Board(name, e));
            return;
        }
        match self.position_from_block(g, &b) {
            Ok(ng) => {
                self.game = Some(ng);
                match b.kind {
                    BlockKind::Board => self.think(Reply::Move, b.at),
                    BlockKind::YxBoard => {}
                    BlockKind::Swap2 => {
                        let reply = if b.stones.is_empty() {
                            Reply::Swap2Open
                        } else {
                            Reply::Swap2Decide
                        };
                        self.think(reply, b.at);
                    }
                }
            }
            Err(e) => self.error(e),
        }
    }

    /// Builds the position of a block on a fresh board of the current size and rule.
    fn position_from_block(&self, g: &Gomoku, b: &Block) -> Result<Gomoku, CmdError> {
        let name = b.kind.name();
        let mut ng = Gomoku::new(g.width(), g.height(), self.rule)
            .map_err(|_| CmdError::Size(g.width() as i64, g.height() as i64))?;
        let bad = |s: String| CmdError::Board(name, s);
        if b.kind == BlockKind::Swap2 {
            if !matches!(b.stones.len(), 0 | 3 | 5) {
                return Err(bad(format!(
                    "{} stones (expected 0, 3 or 5)",
                    b.stones.len()
                )));
            }
            for (k, &(p, f)) in b.stones.iter().enumerate() {
                if f != 0 {
                    return Err(bad("SWAP2BOARD lines carry no field".into()));
                }
                let m = to_move(&ng, p)?;
                let c = if k % 2 == 0 {
                    Color::Black
                } else {
                    Color::White
                };
                ng.place(m, c).map_err(|_| CmdError::Occupied(p.x, p.y))?;
            }
            // After an odd number of stones White is to move; with none, Black.
            return Ok(ng);
        }
        let own = b.stones.iter().filter(|s| s.1 == 1).count();
        let opp = b.stones.iter().filter(|s| s.1 == 2).count();
        // The brain is to move: it is White when the opponent has one stone more, otherwise
        // Black (the first player) whenever the counts allow.
        let me = if opp > own {
            Color::White
        } else {
            Color::Black
        };
        let mut wall = Color::Black;
        for &(p, f) in &b.stones {
            let c = match f {
                1 => me,
                2 => me.opp(),
                // Continuous games: stones of a finished five. There are no neutral stones,
                // so they alternate colours, which occupies the points without creating a
                // new five for either side.
                3 => {
                    wall = wall.opp();
                    wall.opp()
                }
                _ => return Err(bad(format!("bad field {f} at {},{}", p.x, p.y))),
            };
            let m = to_move(&ng, p)?;
            ng.place(m, c).map_err(|_| CmdError::Occupied(p.x, p.y))?;
        }
        ng.set_to_move(me);
        Ok(ng)
    }

    /// Starts the search (or answers at once) for the current position.
    fn think(&mut self, reply: Reply, at: Instant) {
        let Some(g) = self.game.clone() else {
            self.error(CmdError::NoGame);
            return;
        };
        let Some(fallback) = greedy_move(&g) else {
            self.error(CmdError::Other("the board is full".into()));
            return;
        };
        let empty = g.width() * g.height() - g.stones();
        let plan = self.tc.plan(empty);
        let (limits, deadline) = match plan {
            MovePlan::Instant => (None, None),
            MovePlan::Search { soft, hard } => {
                let since = at.elapsed();
                let mut limits = Limits {
                    time: Some(soft.saturating_sub(since).max(Duration::from_millis(1))),
                    nodes: self.max_node,
                    depth: self.max_depth,
                };
                if let Some(n) = self.opts.nodes {
                    // Deterministic mode: the node budget decides, not the clock.
                    limits.time = None;
                    limits.nodes = Some(limits.nodes.map_or(n, |m| m.min(n)));
                }
                (Some(limits), at.checked_add(hard))
            }
        };
        let game_over = g.outcome().is_some();
        let (Some(limits), false) = (limits, game_over || self.engine_dead) else {
            // No time (timeout_turn 0, clock run out) or nothing to search: a static answer
            // from the greedy player, run here (it takes microseconds).
            let mut lines = Vec::new();
            let r = if game_over {
                SearchResult {
                    best: Some(fallback),
                    pv: vec![fallback],
                    ..SearchResult::default()
                }
            } else {
                let stop = AtomicBool::new(false);
                let l = Limits::nodes(1);
                let mut greedy = Greedy;
                let mut collect = |e: &SearchEvent| {
                    if let SearchEvent::Info {
                        score, pv, nodes, ..
                    } = e
                    {
                        lines.push((*score, pv.clone(), *nodes));
                    }
                };
                match reply {
                    Reply::Move => greedy.search(&g, &l, &stop, &mut collect),
                    Reply::NBest(n) => tasks::nbest(n, &mut greedy, &g, &l, &stop, &mut collect),
                    Reply::Swap2Open => tasks::swap2_open(&mut greedy, &g, &l, &stop, &mut collect),
                    Reply::Swap2Decide => {
                        tasks::swap2_decide(&mut greedy, &g, &l, &stop, &mut collect)
                    }
                }
            };
            if !matches!(reply, Reply::NBest(_)) {
                lines.clear();
            }
            self.pending = Some(Pending {
                id: 0,
                reply,
                fallback: Some(fallback),
                fallback_at: None,
                started: Instant::now(),
                lines,
                depth: None,
            });
            self.send_reply(r);
            return;
        };
        let id = match reply {
            Reply::Move => self.engine.search(g, limits, deadline),
            Reply::NBest(n) => self.engine.run_task(
                g,
                limits,
                deadline,
                Box::new(move |s, g, l, st, ev| tasks::nbest(n, s, g, l, st, ev)),
            ),
            Reply::Swap2Open => {
                self.engine
                    .run_task(g, limits, deadline, Box::new(tasks::swap2_open))
            }
            Reply::Swap2Decide => {
                self.engine
                    .run_task(g, limits, deadline, Box::new(tasks::swap2_decide))
            }
        };
        self.pending = Some(Pending {
            id,
            reply,
            fallback: Some(fallback),
            // Grace after the hard deadline before we answer without the searcher; the
            // margins in the clock leave at least 70 ms after the hard deadline.
            fallback_at: deadline.and_then(|d| d.checked_add(Duration::from_millis(35))),
            started: Instant::now(),
            lines: Vec::new(),
            depth: matches!(reply, Reply::Move).then_some(0),
        });
    }

    fn on_engine_event(&mut self, ev: EngineEvent) {
        match ev {
            EngineEvent::Progress { id, event } => {
                if let Some(p) = self.pending.as_mut().filter(|p| p.id == id) {
                    match (p.reply, event) {
                        (
                            Reply::NBest(_),
                            SearchEvent::Info {
                                score, pv, nodes, ..
                            },
                        ) => p.lines.push((score, pv, nodes)),
                        (Reply::Move, SearchEvent::Info { depth, pv, .. }) => {
                            p.depth = Some(depth);
                            // A search late for its deadline is answered for with the best
                            // move of its last finished iteration, not the static one.
                            if let Some(&m) = pv.first() {
                                if self.game.as_ref().is_some_and(|g| playable(g, m)) {
                                    p.fallback = Some(m);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            EngineEvent::Finished { id, result, .. } => {
                if self.pending.as_ref().is_some_and(|p| p.id == id) {
                    self.send_reply(result);
                }
                // Otherwise: a late search already answered by its fallback.
            }
        }
    }

    fn answer_fallback(&mut self) {
        let Some(p) = self.pending.as_ref() else {
            return;
        };
        if !self.engine_dead && p.fallback_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        log::warn!("search missed its deadline; answering with the fallback move");
        self.engine.stop();
        // No `MESSAGE` line for it: the search's own line comes with its own result only.
        if let Some(p) = self.pending.as_mut() {
            p.depth = None;
        }
        let Some(p) = self.pending.as_ref() else {
            return;
        };
        let m = p.fallback;
        self.send_reply(SearchResult {
            best: m,
            pv: m.into_iter().collect(),
            ..SearchResult::default()
        });
    }

    /// Sends the reply of the pending search and plays our move on the board.
    fn send_reply(&mut self, r: SearchResult) {
        let Some(p) = self.pending.take() else {
            return;
        };
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let best = r.best.filter(|&m| playable(g, m)).or(p.fallback);
        match p.reply {
            Reply::Move | Reply::NBest(_) => {
                let mut lines = Vec::new();
                // Deterministic mode reports no timing, so transcripts are reproducible.
                let ms = if self.opts.nodes.is_some() {
                    0
                } else {
                    p.started.elapsed().as_millis()
                };
                if let Reply::NBest(n) = p.reply {
                    let mut cands = p.lines.clone();
                    // Best first; stable, so equal scores keep search order.
                    cands.sort_by_key(|c| std::cmp::Reverse(c.0));
                    for (k, (score, pv, nodes)) in cands.iter().take(n).enumerate() {
                        lines.push(info_line(g, 1, Some(k + 1), *score, *nodes, ms, pv));
                    }
                }
                let Some(m) = best else {
                    self.error(CmdError::Other("the board is full".into()));
                    return;
                };
                // What the search thought, in the line format of the candidates above (the
                // one Rapfi and pygomo-lib use), just before the move as the protocol asks:
                // the depth of the last finished iteration, the score from our side, the
                // nodes and the principal variation of the move played. Only where a search
                // ran and reported (not for an instant answer or the deadline's fallback).
                if let (Reply::Move, Some(depth)) = (p.reply, p.depth) {
                    if r.best == Some(m) && (depth > 0 || r.proven.is_some()) {
                        let pv = if r.pv.first() == Some(&m) {
                            &r.pv[..]
                        } else {
                            std::slice::from_ref(&m)
                        };
                        lines.push(info_line(g, depth, None, r.score, r.nodes, ms, pv));
                    }
                }
                let c = g.to_move();
                let _ = g.place(m, c);
                let text = fmt_move(g, m);
                for l in lines {
                    self.line(&l);
                }
                self.line(&text);
            }
            Reply::Swap2Open => {
                let ok = r.pv.len() == 3 && r.pv.iter().all(|&m| playable(g, m));
                if !ok {
                    self.error(CmdError::Other("no swap2 opening found".into()));
                    return;
                }
                let mut parts = Vec::new();
                for (k, &m) in r.pv.iter().enumerate() {
                    let c = if k % 2 == 0 {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let _ = g.place(m, c);
                    parts.push(fmt_move(g, m));
                }
                self.line(&parts.join(" "));
            }
            Reply::Swap2Decide => {
                if r.score < 0 {
                    // We take Black; the opponent plays White's next move.
                    self.line("SWAP");
                } else if let Some(m) = best {
                    let c = g.to_move();
                    let _ = g.place(m, c);
                    let text = fmt_move(g, m);
                    self.line(&text);
                } else {
                    self.line("SWAP");
                }
            }
        }
    }
}

#[cfg(test)]
// Tests may unwrap: a panic there is a failed test, not a crashed engine.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn max_memory_replaces_the_default_and_lowers_a_given_budget() {
        let default = Options::default();
        assert_eq!(default.memory_bytes, crate::search::DEFAULT_MEMORY_BYTES);
        let r = default.reserve_bytes + default.reserve_per_thread;
        assert!(default.reserve_bytes > 0);
        // The whole brain's cap: the tables get it less the reserve.
        assert_eq!(default.memory_after_info(350 << 20, 1), (350 << 20) - r);
        assert_eq!(
            default.memory_after_info(350 << 20, 3),
            (350 << 20) - r - 2 * default.reserve_per_thread
        );
        assert_eq!(default.memory_after_info(0, 1), default.memory_bytes);
        // Below the reserve the tables keep 1 MiB.
        assert_eq!(default.memory_after_info(1 << 20, 1), 1 << 20);
        let given = Options {
            memory_bytes: 100 << 20,
            memory_given: true,
            ..Options::default()
        };
        assert_eq!(given.memory_after_info(350 << 20, 1), 100 << 20);
        assert_eq!(given.memory_after_info(50 << 20, 1), (50 << 20) - r);
        assert_eq!(given.memory_after_info(-1, 1), 100 << 20);
    }

    /// Runs a script through the protocol in-process and returns stdout.
    fn run_script(script: &str) -> String {
        let (tx, rx) = crossbeam::channel::unbounded();
        for l in script.lines() {
            tx.send(Input::Line {
                text: l.to_string(),
                at: Instant::now(),
            })
            .unwrap();
        }
        tx.send(Input::Eof).unwrap();
        let mut out = Vec::new();
        run(
            rx,
            Vec::new(),
            &mut out,
            Box::new(Greedy),
            Options::default(),
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn coordinates_flip_rows() {
        let g = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        // Gomocup (0,0) is the top-left corner: our row 14.
        let m = to_move(&g, Point { x: 0, y: 0 }).unwrap();
        assert_eq!(m, 14 * 15);
        assert_eq!(fmt_move(&g, m), "0,0");
        assert_eq!(alg_move(&g, m), "a1");
        assert!(to_move(&g, Point { x: 15, y: 0 }).is_err());
    }

    #[test]
    fn begin_turn_and_errors() {
        let out = run_script("TURN 1,1\nSTART 15\nBEGIN\nTURN 7,7\nTURN 0,0\nFOO\n");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("ERROR"), "{out}");
        assert_eq!(lines[1], "OK");
        assert_eq!(lines[2], "7,7");
        assert!(lines[3].starts_with("ERROR"), "occupied: {out}");
        let m: Vec<i64> = lines[4].split(',').map(|v| v.parse().unwrap()).collect();
        assert!(m[0] < 15 && m[1] < 15 && (m[0], m[1]) != (7, 7));
        assert!(lines[5].starts_with("UNKNOWN"));
    }

    #[test]
    fn board_colours() {
        // Opponent has one stone more: we are White and must block the open four.
        let out =
            run_script("START 15\nBOARD\n3,7,2\n0,0,1\n4,7,2\n0,2,1\n5,7,2\n0,4,1\n6,7,2\nDONE\n");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[1] == "2,7" || lines[1] == "7,7", "{out}");
    }
}
