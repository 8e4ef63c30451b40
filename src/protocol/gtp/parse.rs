//! GTP v2 input: line preprocessing (protocols.md A.1) and the typed command parser.
//!
//! [`preprocess`] drops control characters except HT and LF, cuts `#` comments and turns tabs
//! into spaces; a line that is then blank gets no response. [`parse_line`] reads the optional
//! numeric id and the command name (case-sensitive, as in GNU Go) and parses the arguments
//! with nom into a [`Command`]. Vertices are checked for syntax only (`I` is not a column);
//! the board size is checked by the front end, so `A10` on 9x9 is an illegal move, not a
//! syntax error. Extra trailing arguments are tolerated.

use nom::branch::alt;
use nom::bytes::complete::{tag_no_case, take_while1};
use nom::character::complete::{digit1, satisfy};
use nom::combinator::{all_consuming, map_res, opt, recognize, value};
use nom::sequence::pair;
use nom::{IResult, Parser};

use crate::game::Color;

/// A vertex as written: a point (0-based column index skipping `I`, 1-based row from the
/// bottom) or `pass`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Vertex {
    /// `pass`.
    Pass,
    /// Column index (A = 0, J = 8) and 1-based row.
    Point {
        /// Column index.
        x: usize,
        /// Row, 1 = bottom.
        row: usize,
    },
}

/// Which live-analysis dialect.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AnalyzeKind {
    /// `lz-analyze`: integer ten-thousandths.
    Lz,
    /// `kata-analyze`: floats 0..1.
    Kata,
}

/// Arguments of `lz-analyze` / `kata-analyze`.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyzeArgs {
    /// Side to analyse for (`None`: the side to move).
    pub color: Option<Color>,
    /// Report interval in centiseconds (`None`: the default).
    pub interval_cs: Option<u64>,
    /// At most this many candidates per line.
    pub max_moves: Option<usize>,
}

/// `kgs-time_settings` variants.
#[derive(Clone, Debug, PartialEq)]
pub enum KgsTime {
    /// No time limit.
    None,
    /// Main time only (seconds).
    Absolute(u64),
    /// Canadian byo-yomi: main time, byo-yomi time, stones.
    Canadian(u64, u64, u64),
    /// Japanese byo-yomi: main time, period time, periods.
    Byoyomi(u64, u64, u64),
}

/// A parsed GTP command.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `protocol_version`
    ProtocolVersion,
    /// `name`
    Name,
    /// `version`
    Version,
    /// `known_command NAME`
    KnownCommand(String),
    /// `list_commands`
    ListCommands,
    /// `quit`
    Quit,
    /// `boardsize N`
    Boardsize(u64),
    /// `rectangular_boardsize W H`
    RectangularBoardsize(u64, u64),
    /// `clear_board`
    ClearBoard,
    /// `komi F`
    Komi(f64),
    /// `play COLOR VERTEX`
    Play(Color, Vertex),
    /// `genmove COLOR`
    Genmove(Color),
    /// `reg_genmove COLOR`
    RegGenmove(Color),
    /// `undo`
    Undo,
    /// `showboard`
    Showboard,
    /// `loadsgf FILE [MOVE_NUMBER]`
    Loadsgf(String, Option<u64>),
    /// `printsgf [FILE]`
    Printsgf(Option<String>),
    /// `time_settings MAIN BYO_TIME BYO_STONES`
    TimeSettings(u64, u64, u64),
    /// `time_left COLOR TIME STONES`
    TimeLeft(Color, u64, u64),
    /// `kgs-time_settings ...`
    KgsTimeSettings(KgsTime),
    /// `final_score`
    FinalScore,
    /// `set_free_handicap VERTEX...`
    SetFreeHandicap(Vec<Vertex>),
    /// `gogui-analyze_commands`
    GoguiAnalyzeCommands,
    /// `lz-analyze` / `kata-analyze`
    Analyze(AnalyzeKind, AnalyzeArgs),
    /// `pcn-solve [SECONDS]`
    PcnSolve(Option<f64>),
    /// `pcn-solver [NAME]`: show or set the solver (a solver name or `none`; checked by the
    /// front end, lower-cased here).
    PcnSolver(Option<String>),
    /// `pcn-net`: the network the solvers use (`none`, or the model's description).
    PcnNet,
}

/// Every command the front end answers, in `list_commands` order.
pub const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "rectangular_boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "reg_genmove",
    "undo",
    "showboard",
    "loadsgf",
    "printsgf",
    "time_settings",
    "time_left",
    "kgs-time_settings",
    "final_score",
    "set_free_handicap",
    "gogui-analyze_commands",
    "lz-analyze",
    "kata-analyze",
    "pcn-solve",
    "pcn-solver",
    "pcn-net",
];

/// Why a line could not be parsed (the text after `?`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The command name is not one of [`COMMANDS`].
    #[error("unknown command")]
    Unknown,
    /// Missing or malformed arguments.
    #[error("syntax error")]
    Syntax,
}

/// One input line after preprocessing: optional id, then the parsed command (or why not).
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The id as it is echoed (leading zeros dropped, as GNU Go does).
    pub id: Option<String>,
    /// The command.
    pub command: Result<Command, ParseError>,
}

/// Applies A.1's preprocessing; `None` when nothing is left (no response at all).
pub fn preprocess(raw: &str) -> Option<String> {
    let mut s: String = raw
        .chars()
        .filter(|&c| c == '\t' || c == '\n' || !c.is_control())
        .collect();
    if let Some(i) = s.find('#') {
        s.truncate(i);
    }
    let s = s.replace('\t', " ");
    if s.trim().is_empty() {
        None
    } else {
        Some(s)
    }
}

type Res<'a, T> = IResult<&'a str, T>;

fn color(i: &str) -> Res<'_, Color> {
    alt((
        value(Color::Black, tag_no_case("black")),
        value(Color::White, tag_no_case("white")),
        value(Color::Black, tag_no_case("b")),
        value(Color::White, tag_no_case("w")),
    ))
    .parse(i)
}

fn uint(i: &str) -> Res<'_, u64> {
    map_res(digit1, |d: &str| d.parse::<u64>()).parse(i)
}

fn vertex(i: &str) -> Res<'_, Vertex> {
    alt((
        value(Vertex::Pass, tag_no_case("pass")),
        map_res(
            pair(
                satisfy(|c: char| c.is_ascii_alphabetic() && !c.eq_ignore_ascii_case(&'i')),
                digit1,
            ),
            |(c, d): (char, &str)| -> Result<Vertex, ()> {
                let up = c.to_ascii_uppercase() as u8;
                let x = (up - b'A') as usize - usize::from(up > b'I');
                let row = d.parse::<usize>().map_err(|_| ())?;
                Ok(Vertex::Point { x, row })
            },
        ),
    ))
    .parse(i)
}

fn float(i: &str) -> Res<'_, f64> {
    map_res(
        recognize((
            opt(alt((
                nom::character::complete::char('-'),
                nom::character::complete::char('+'),
            ))),
            take_while1(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '+' || c == '-'),
        )),
        |s: &str| s.parse::<f64>(),
    )
    .parse(i)
}

/// Parses one whole token with `p`.
fn tok<'a, T>(
    t: Option<&&'a str>,
    p: impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>>,
) -> Result<T, ParseError> {
    let t = t.ok_or(ParseError::Syntax)?;
    all_consuming(p)
        .parse(t)
        .map(|(_, v)| v)
        .map_err(|_| ParseError::Syntax)
}

/// Parses a colour token (`b`, `black`, `w`, `white`, any case).
pub fn parse_color(t: &str) -> Option<Color> {
    tok(Some(&t), color).ok()
}

/// Parses a vertex token.
pub fn parse_vertex(t: &str) -> Option<Vertex> {
    tok(Some(&t), vertex).ok()
}

fn analyze_args(args: &[&str]) -> Result<AnalyzeArgs, ParseError> {
    let mut a = AnalyzeArgs {
        color: None,
        interval_cs: None,
        max_moves: None,
    };
    let mut i = 0;
    if let Some(c) = args.first().and_then(|t| parse_color(t)) {
        a.color = Some(c);
        i = 1;
    }
    if let Some(n) = args.get(i).and_then(|t| tok(Some(t), uint).ok()) {
        a.interval_cs = Some(n);
        i += 1;
    }
    while i < args.len() {
        let key = args[i];
        let val = args.get(i + 1);
        match key {
            "interval" => a.interval_cs = Some(tok(val, uint)?),
            "maxmoves" => a.max_moves = Some(tok(val, uint)? as usize),
            "minmoves" => {
                tok(val, uint)?;
            }
            "ownership" | "ownershipStdev" | "movesOwnership" | "pvVisits" | "pvEdgeVisits"
            | "rootInfo" => {
                tok(
                    val,
                    alt((
                        value(true, tag_no_case("true")),
                        value(false, tag_no_case("false")),
                    )),
                )?;
            }
            "avoid" | "allow" => {
                // avoid COLOR VERTICES UNTIL_DEPTH: accepted and ignored.
                tok(val, color)?;
                tok(args.get(i + 2), take_while1(|c: char| c != ' '))?;
                tok(args.get(i + 3), uint)?;
                i += 4;
                continue;
            }
            _ => return Err(ParseError::Syntax),
        }
        i += 2;
    }
    Ok(a)
}

fn command(name: &str, args: &[&str]) -> Result<Command, ParseError> {
    use Command as C;
    let a = |k: usize| args.get(k);
    Ok(match name {
        "protocol_version" => C::ProtocolVersion,
        "name" => C::Name,
        "version" => C::Version,
        "known_command" => C::KnownCommand(a(0).ok_or(ParseError::Syntax)?.to_string()),
        "list_commands" => C::ListCommands,
        "quit" => C::Quit,
        "boardsize" => C::Boardsize(tok(a(0), uint)?),
        "rectangular_boardsize" => C::RectangularBoardsize(tok(a(0), uint)?, tok(a(1), uint)?),
        "clear_board" => C::ClearBoard,
        "komi" => C::Komi(tok(a(0), float)?),
        "play" => C::Play(tok(a(0), color)?, tok(a(1), vertex)?),
        "genmove" => C::Genmove(tok(a(0), color)?),
        "reg_genmove" => C::RegGenmove(tok(a(0), color)?),
        "undo" => C::Undo,
        "showboard" => C::Showboard,
        "loadsgf" => C::Loadsgf(
            a(0).ok_or(ParseError::Syntax)?.to_string(),
            match a(1) {
                Some(_) => Some(tok(a(1), uint)?),
                None => None,
            },
        ),
        "printsgf" => C::Printsgf(a(0).map(|s| s.to_string())),
        "time_settings" => C::TimeSettings(tok(a(0), uint)?, tok(a(1), uint)?, tok(a(2), uint)?),
        "time_left" => C::TimeLeft(tok(a(0), color)?, tok(a(1), uint)?, tok(a(2), uint)?),
        "kgs-time_settings" => C::KgsTimeSettings(match *a(0).ok_or(ParseError::Syntax)? {
            "none" => KgsTime::None,
            "absolute" => KgsTime::Absolute(tok(a(1), uint)?),
            "canadian" => KgsTime::Canadian(tok(a(1), uint)?, tok(a(2), uint)?, tok(a(3), uint)?),
            "byoyomi" => KgsTime::Byoyomi(tok(a(1), uint)?, tok(a(2), uint)?, tok(a(3), uint)?),
            _ => return Err(ParseError::Syntax),
        }),
        "final_score" => C::FinalScore,
        "set_free_handicap" => C::SetFreeHandicap(
            args.iter()
                .map(|t| tok(Some(t), vertex))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        "gogui-analyze_commands" => C::GoguiAnalyzeCommands,
        "lz-analyze" => C::Analyze(AnalyzeKind::Lz, analyze_args(args)?),
        "kata-analyze" => C::Analyze(AnalyzeKind::Kata, analyze_args(args)?),
        "pcn-solve" => C::PcnSolve(match a(0) {
            Some(_) => {
                let s = tok(a(0), float)?;
                if !(s.is_finite() && s >= 0.0) {
                    return Err(ParseError::Syntax);
                }
                Some(s)
            }
            None => None,
        }),
        "pcn-solver" => C::PcnSolver(a(0).map(|s| s.to_ascii_lowercase())),
        "pcn-net" => C::PcnNet,
        _ => return Err(ParseError::Unknown),
    })
}

/// Parses a preprocessed line (see [`preprocess`]).
pub fn parse_line(line: &str) -> Line {
    let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
    let mut rest: &[&str] = &words;
    let mut id = None;
    if let Some(first) = words.first() {
        if tok(Some(first), digit1::<&str, nom::error::Error<&str>>).is_ok() {
            let t = first.trim_start_matches('0');
            id = Some(if t.is_empty() {
                "0".to_string()
            } else {
                t.to_string()
            });
            rest = &words[1..];
        }
    }
    let command = match rest.split_first() {
        Some((name, args)) => command(name, args),
        None => Err(ParseError::Syntax),
    };
    Line { id, command }
}

/// Whether `name` is a command this front end answers.
pub fn is_known(name: &str) -> bool {
    COMMANDS.contains(&name)
}

#[cfg(test)]
// Tests may unwrap: a panic there is a failed test, not a crashed engine.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Result<Command, ParseError> {
        parse_line(&preprocess(s).unwrap()).command
    }

    #[test]
    fn preprocessing() {
        assert_eq!(preprocess("  # only a comment"), None);
        assert_eq!(preprocess("\r"), None);
        assert_eq!(preprocess("\t \t"), None);
        assert_eq!(preprocess("name\r").as_deref(), Some("name"));
        assert_eq!(preprocess("play\tb e5 # x").as_deref(), Some("play b e5 "));
        assert_eq!(preprocess("na\u{7}me").as_deref(), Some("name"));
    }

    #[test]
    fn ids_and_names() {
        let l = parse_line("007 name");
        assert_eq!(l.id.as_deref(), Some("7"));
        assert_eq!(l.command, Ok(Command::Name));
        assert_eq!(parse_line("0 name").id.as_deref(), Some("0"));
        assert_eq!(cmd("NAME"), Err(ParseError::Unknown));
        assert_eq!(cmd("PLAY b e5"), Err(ParseError::Unknown));
        assert_eq!(parse_line("12").command, Err(ParseError::Syntax));
    }

    #[test]
    fn arguments() {
        assert_eq!(
            cmd("play B e5 extra"),
            Ok(Command::Play(Color::Black, Vertex::Point { x: 4, row: 5 }))
        );
        assert_eq!(
            cmd("play white J9"),
            Ok(Command::Play(Color::White, Vertex::Point { x: 8, row: 9 }))
        );
        assert_eq!(
            cmd("play w PASS"),
            Ok(Command::Play(Color::White, Vertex::Pass))
        );
        assert_eq!(cmd("play b I5"), Err(ParseError::Syntax));
        assert_eq!(cmd("play x e5"), Err(ParseError::Syntax));
        assert_eq!(cmd("play b"), Err(ParseError::Syntax));
        assert_eq!(cmd("play b e"), Err(ParseError::Syntax));
        assert_eq!(cmd("boardsize nine"), Err(ParseError::Syntax));
        assert_eq!(cmd("boardsize -9"), Err(ParseError::Syntax));
        assert_eq!(cmd("komi -3.5"), Ok(Command::Komi(-3.5)));
        assert_eq!(cmd("komi 1e1"), Ok(Command::Komi(10.0)));
        assert_eq!(cmd("komi abc"), Err(ParseError::Syntax));
        assert_eq!(
            cmd("time_left b 30 0"),
            Ok(Command::TimeLeft(Color::Black, 30, 0))
        );
        assert_eq!(cmd("time_left b 30"), Err(ParseError::Syntax));
        assert_eq!(cmd("pcn-solve 2.5"), Ok(Command::PcnSolve(Some(2.5))));
        assert_eq!(cmd("pcn-solve -1"), Err(ParseError::Syntax));
        assert_eq!(
            cmd("pcn-solver MCTS"),
            Ok(Command::PcnSolver(Some("mcts".into())))
        );
        assert_eq!(cmd("pcn-solver"), Ok(Command::PcnSolver(None)));
        assert_eq!(
            cmd("kgs-time_settings byoyomi 10 5 3"),
            Ok(Command::KgsTimeSettings(KgsTime::Byoyomi(10, 5, 3)))
        );
    }

    #[test]
    fn analyze_forms() {
        let a = |color, interval_cs, max_moves| AnalyzeArgs {
            color,
            interval_cs,
            max_moves,
        };
        assert_eq!(
            cmd("kata-analyze B 20"),
            Ok(Command::Analyze(
                AnalyzeKind::Kata,
                a(Some(Color::Black), Some(20), None)
            ))
        );
        assert_eq!(
            cmd("lz-analyze interval 50 maxmoves 3"),
            Ok(Command::Analyze(
                AnalyzeKind::Lz,
                a(None, Some(50), Some(3))
            ))
        );
        assert_eq!(
            cmd("lz-analyze w 10 ownership true avoid b e5,d4 1"),
            Ok(Command::Analyze(
                AnalyzeKind::Lz,
                a(Some(Color::White), Some(10), None)
            ))
        );
        assert_eq!(cmd("kata-analyze B 20 bogus 1"), Err(ParseError::Syntax));
        assert_eq!(
            cmd("kata-analyze"),
            Ok(Command::Analyze(AnalyzeKind::Kata, a(None, None, None)))
        );
    }

    #[test]
    fn every_listed_command_parses_as_known() {
        for c in COMMANDS {
            assert_ne!(cmd(c), Err(ParseError::Unknown), "{c}");
        }
    }
}
