//! Parser for Gomocup brain-protocol lines (nom). Each input line becomes one typed
//! [`Command`] (or, inside `BOARD`/`YXBOARD`/`SWAP2BOARD` blocks, a [`BoardLine`]).
//!
//! Command words and INFO keys are case-insensitive; surrounding blanks and a trailing CR are
//! ignored; every parser must consume the whole line, so `TURN 7,7x` is an error, not `TURN 7,7`.
//! Numbers are read as `i64` and range-checked by the dispatcher, which knows the board.

use nom::branch::alt;
use nom::bytes::complete::tag_no_case;
use nom::character::complete::{char, i64 as int, space0};
use nom::combinator::{all_consuming, map};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

/// A point as sent by the manager: `x` = column, `y` = row from the top, both 0-based.
/// Not yet checked against the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// Column, left to right.
    pub x: i64,
    /// Row, top to bottom.
    pub y: i64,
}

/// One `INFO key value` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Info {
    /// `timeout_turn` ms (0 = move at once).
    TimeoutTurn(i64),
    /// `timeout_match` ms (0 = unlimited).
    TimeoutMatch(i64),
    /// `time_left` ms (may be negative).
    TimeLeft(i64),
    /// `max_memory` bytes (0 = unlimited).
    MaxMemory(i64),
    /// `game_type` 0..3.
    GameType(i64),
    /// `rule` bitmask.
    Rule(i64),
    /// `evaluate x,y` (debugging aid of Piskvork; never answered).
    Evaluate(Option<Point>),
    /// `folder` for persistent files.
    Folder(String),
    /// `max_node` node budget per move (0 = unlimited).
    MaxNode(i64),
    /// `max_depth` depth limit (0 = unlimited).
    MaxDepth(i64),
    /// `thread_num` threads.
    ThreadNum(i64),
    /// `time_increment` ms per move.
    TimeIncrement(i64),
    /// A known key with a value that is not a number.
    BadValue(String),
    /// Any other key: ignored silently.
    Unknown(String),
}

/// One manager command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `START n`.
    Start(i64),
    /// `RECTSTART w,h`.
    RectStart(i64, i64),
    /// `RESTART`.
    Restart,
    /// `BEGIN`.
    Begin,
    /// `TURN x,y`.
    Turn(Point),
    /// `BOARD`: stones follow until `DONE`.
    Board,
    /// `YXBOARD`: like BOARD but no move is wanted.
    YxBoard,
    /// `SWAP2BOARD`: swap2 opening stones follow until `DONE`.
    Swap2Board,
    /// `INFO key value`.
    Info(Info),
    /// `END`.
    End,
    /// `ABOUT`.
    About,
    /// `PLAY x,y` (after a SUGGEST).
    Play(Point),
    /// `TAKEBACK x,y`.
    Takeback(Point),
    /// `YXSTOP` or `STOP`.
    Stop,
    /// `YXHASHCLEAR`.
    HashClear,
    /// `YXNBEST n`.
    NBest(i64),
    /// `YXSHOWFORBID`.
    ShowForbid,
    /// `YXSHOWINFO`.
    ShowInfo,
    /// A known command with unreadable arguments: answered `ERROR`.
    Bad {
        /// The command word (upper case).
        command: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An unknown command word: answered `UNKNOWN`.
    Unknown(String),
}

/// A line inside a BOARD / YXBOARD / SWAP2BOARD block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardLine {
    /// `x,y,field` (field 1 own, 2 opponent, 3 winning-line stone of a continuous game).
    Stone(Point, i64),
    /// `x,y` (SWAP2BOARD: colours alternate from Black).
    Point(Point),
    /// `DONE`.
    Done,
}

/// When a command may run while a search is in progress (the protocol loop's command
/// table, [`Command::spec`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhileSearching {
    /// At once, even ahead of lines already waiting (STOP, END: they end the search).
    Now,
    /// At once when no earlier line is waiting, else in turn (commands that only answer or
    /// set what the next search reads: ABOUT, INFO, unknown words).
    InOrder,
    /// After the search's reply (commands that change or read the position, or start a
    /// search).
    Queue,
}

/// What the protocol loop must know about a command before it runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// Answered `ERROR no game in progress` without a started game. (BOARD-like blocks
    /// check at their DONE, after their lines have been read.)
    pub needs_game: bool,
    /// When it may run during a search.
    pub while_searching: WhileSearching,
}

impl Command {
    /// The command table: which commands need a started game and which may run during a
    /// search. A new command gets its row here.
    pub fn spec(&self) -> CommandSpec {
        use WhileSearching::{InOrder, Now, Queue};
        let (needs_game, while_searching) = match self {
            Command::Start(_) | Command::RectStart(..) => (false, Queue),
            Command::Restart => (true, Queue),
            Command::Begin | Command::Turn(_) | Command::NBest(_) => (true, Queue),
            Command::Play(_) | Command::Takeback(_) | Command::ShowForbid => (true, Queue),
            Command::Board | Command::YxBoard | Command::Swap2Board => (false, Queue),
            Command::HashClear => (false, Queue),
            Command::Stop | Command::End => (false, Now),
            Command::Info(_) | Command::About | Command::ShowInfo => (false, InOrder),
            Command::Bad { .. } | Command::Unknown(_) => (false, InOrder),
        };
        CommandSpec {
            needs_game,
            while_searching,
        }
    }
}

/// One input line, parsed once when it arrives: as a command and, where it has that shape,
/// as a line of a BOARD-like block (which reading applies depends on whether a block is
/// open when the line runs, which may be later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The line as a command (a stone line outside a block is an unknown command).
    pub command: Command,
    /// The line as a block line, if it is one.
    pub board: Option<BoardLine>,
}

/// Parses one input line; `None` for a blank line, which the protocol ignores.
pub fn parse_line(line: &str) -> Option<Parsed> {
    let command = parse_command(line)?;
    Some(Parsed {
        command,
        board: parse_board_line(line),
    })
}

type Res<'a, T> = IResult<&'a str, T>;

fn sep(i: &str) -> Res<'_, char> {
    delimited(space0, char(','), space0).parse(i)
}

fn point(i: &str) -> Res<'_, Point> {
    map((int, sep, int), |(x, _, y)| Point { x, y }).parse(i)
}

/// Runs `p` over the whole (trimmed) argument string.
fn whole<'a, T>(
    s: &'a str,
    p: impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>>,
) -> Option<T> {
    all_consuming(p).parse(s).ok().map(|(_, v)| v)
}

/// Splits the command word from its arguments.
fn word(i: &str) -> (&str, &str) {
    let i = i.trim_start();
    match i.find([' ', '\t']) {
        Some(k) => (&i[..k], i[k..].trim()),
        None => (i, ""),
    }
}

/// Parses one non-empty command line (already stripped of its line ending).
/// Returns `None` for a blank line, which the protocol ignores.
pub fn parse_command(line: &str) -> Option<Command> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let (w, args) = word(line);
    let upper = w.to_ascii_uppercase();
    let no_args = |c: Command, name: &'static str| {
        if args.is_empty() {
            c
        } else {
            Command::Bad {
                command: name,
                reason: format!("{name} takes no arguments"),
            }
        }
    };
    let with_point = |f: fn(Point) -> Command, name: &'static str| match whole(args, point) {
        Some(p) => f(p),
        None => Command::Bad {
            command: name,
            reason: "bad coordinates".into(),
        },
    };
    let with_int = |f: fn(i64) -> Command, name: &'static str, what: &str| match whole(args, int) {
        Some(n) => f(n),
        None => Command::Bad {
            command: name,
            reason: format!("bad {name} parameter (expected {what})"),
        },
    };
    Some(match upper.as_str() {
        "START" => with_int(Command::Start, "START", "a board size"),
        "RECTSTART" => match whole(args, (int, sep, int)) {
            Some((w, _, h)) => Command::RectStart(w, h),
            None => Command::Bad {
                command: "RECTSTART",
                reason: "bad RECTSTART parameters (expected width,height)".into(),
            },
        },
        "RESTART" => no_args(Command::Restart, "RESTART"),
        "BEGIN" => no_args(Command::Begin, "BEGIN"),
        "TURN" => with_point(Command::Turn, "TURN"),
        "BOARD" => no_args(Command::Board, "BOARD"),
        "YXBOARD" => no_args(Command::YxBoard, "YXBOARD"),
        "SWAP2BOARD" => no_args(Command::Swap2Board, "SWAP2BOARD"),
        "INFO" => Command::Info(parse_info(args)),
        "END" => Command::End,
        "ABOUT" => Command::About,
        "PLAY" => with_point(Command::Play, "PLAY"),
        "TAKEBACK" => with_point(Command::Takeback, "TAKEBACK"),
        "YXSTOP" | "STOP" => Command::Stop,
        "YXHASHCLEAR" => Command::HashClear,
        "YXNBEST" => with_int(Command::NBest, "YXNBEST", "a count"),
        "YXSHOWFORBID" => Command::ShowForbid,
        "YXSHOWINFO" => Command::ShowInfo,
        _ => Command::Unknown(w.to_string()),
    })
}

/// Parses the `key value` part of an INFO line.
fn parse_info(args: &str) -> Info {
    let (key, value) = word(args);
    let lower = key.to_ascii_lowercase();
    let num = |f: fn(i64) -> Info| match whole(value, int) {
        Some(n) => f(n),
        None => Info::BadValue(lower.clone()),
    };
    match lower.as_str() {
        "timeout_turn" => num(Info::TimeoutTurn),
        "timeout_match" => num(Info::TimeoutMatch),
        "time_left" => num(Info::TimeLeft),
        "max_memory" => num(Info::MaxMemory),
        "game_type" => num(Info::GameType),
        "rule" => num(Info::Rule),
        "evaluate" => Info::Evaluate(whole(value, point)),
        "folder" => Info::Folder(value.to_string()),
        "max_node" => num(Info::MaxNode),
        "max_depth" => num(Info::MaxDepth),
        "thread_num" => num(Info::ThreadNum),
        "time_increment" => num(Info::TimeIncrement),
        _ => Info::Unknown(lower),
    }
}

/// Parses a line inside a BOARD-like block; `None` when it is neither `DONE` nor a point.
pub fn parse_board_line(line: &str) -> Option<BoardLine> {
    let line = line.trim();
    let stone = map((point, preceded(sep, int)), |(p, f)| BoardLine::Stone(p, f));
    let done = map(tag_no_case("DONE"), |_| BoardLine::Done);
    whole(line, alt((done, stone, map(point, BoardLine::Point))))
}

#[cfg(test)]
// Tests may unwrap: a panic there is a failed test, not a crashed engine.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn commands_any_case() {
        assert_eq!(parse_command("start 15"), Some(Command::Start(15)));
        assert_eq!(parse_command("START 15\r"), Some(Command::Start(15)));
        assert_eq!(
            parse_command("  Turn 7,8 "),
            Some(Command::Turn(Point { x: 7, y: 8 }))
        );
        assert_eq!(
            parse_command("TURN 7, 8"),
            Some(Command::Turn(Point { x: 7, y: 8 }))
        );
        assert_eq!(
            parse_command("RECTSTART 20,15"),
            Some(Command::RectStart(20, 15))
        );
        assert_eq!(parse_command("yxstop"), Some(Command::Stop));
        assert_eq!(parse_command("STOP"), Some(Command::Stop));
        assert_eq!(parse_command(""), None);
        assert_eq!(parse_command(" \r"), None);
    }

    #[test]
    fn whole_line_is_consumed() {
        assert!(matches!(
            parse_command("TURN 7,7x"),
            Some(Command::Bad { .. })
        ));
        assert!(matches!(parse_command("TURN 7"), Some(Command::Bad { .. })));
        assert!(matches!(parse_command("START"), Some(Command::Bad { .. })));
        assert!(matches!(
            parse_command("START 99999999999999999999999"),
            Some(Command::Bad { .. })
        ));
        assert!(matches!(
            parse_command("BEGIN now"),
            Some(Command::Bad { .. })
        ));
        assert_eq!(
            parse_command("START 99999999999"),
            Some(Command::Start(99_999_999_999))
        );
        assert_eq!(
            parse_command("TURN -1,3"),
            Some(Command::Turn(Point { x: -1, y: 3 }))
        );
    }

    #[test]
    fn unknown_commands() {
        assert_eq!(
            parse_command("FOO bar"),
            Some(Command::Unknown("FOO".into()))
        );
        assert_eq!(
            parse_command("\u{fffd}\u{1}"),
            Some(Command::Unknown("\u{fffd}\u{1}".into()))
        );
    }

    #[test]
    fn info_keys() {
        assert_eq!(
            parse_command("INFO TIMEOUT_TURN 1000"),
            Some(Command::Info(Info::TimeoutTurn(1000)))
        );
        assert_eq!(
            parse_command("info time_left -300"),
            Some(Command::Info(Info::TimeLeft(-300)))
        );
        assert_eq!(
            parse_command("INFO rule 4"),
            Some(Command::Info(Info::Rule(4)))
        );
        assert_eq!(
            parse_command("INFO folder C:\\x y"),
            Some(Command::Info(Info::Folder("C:\\x y".into())))
        );
        assert_eq!(
            parse_command("INFO caution_factor 3"),
            Some(Command::Info(Info::Unknown("caution_factor".into())))
        );
        assert_eq!(
            parse_command("INFO max_node abc"),
            Some(Command::Info(Info::BadValue("max_node".into())))
        );
        assert_eq!(
            parse_command("INFO evaluate 3,4"),
            Some(Command::Info(Info::Evaluate(Some(Point { x: 3, y: 4 }))))
        );
    }

    #[test]
    fn board_lines() {
        assert_eq!(
            parse_board_line("7,7,1"),
            Some(BoardLine::Stone(Point { x: 7, y: 7 }, 1))
        );
        assert_eq!(
            parse_board_line("7,7\r"),
            Some(BoardLine::Point(Point { x: 7, y: 7 }))
        );
        assert_eq!(parse_board_line("done"), Some(BoardLine::Done));
        assert_eq!(parse_board_line("7,7,1,1"), None);
        assert_eq!(parse_board_line("TURN 1,1"), None);
    }

    #[test]
    fn lines_carry_both_readings() {
        let p = parse_line("7,7,1").unwrap();
        assert_eq!(p.command, Command::Unknown("7,7,1".into()));
        assert_eq!(p.board, Some(BoardLine::Stone(Point { x: 7, y: 7 }, 1)));
        let p = parse_line("TURN 1,1").unwrap();
        assert_eq!(p.board, None);
        assert_eq!(parse_line("  \r"), None);
    }

    #[test]
    fn command_table() {
        let spec = |l: &str| parse_command(l).unwrap().spec();
        assert_eq!(spec("END").while_searching, WhileSearching::Now);
        assert_eq!(spec("YXSTOP").while_searching, WhileSearching::Now);
        assert_eq!(spec("ABOUT").while_searching, WhileSearching::InOrder);
        assert_eq!(spec("TURN 1,1").while_searching, WhileSearching::Queue);
        assert!(spec("TURN 1,1").needs_game && spec("BEGIN").needs_game);
        assert!(!spec("START 15").needs_game && !spec("BOARD").needs_game);
    }
}
