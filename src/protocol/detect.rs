//! Protocol detection: `pcn` without a subcommand reads stdin and decides from the first
//! recognisable command word whether it speaks to a Gomocup manager or a GTP controller.

use super::gtp::parse::ParseError;
use super::{gomocup, gtp};

/// The protocols the binary speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Gomocup / Piskvork brain protocol.
    Gomocup,
    /// Go Text Protocol.
    Gtp,
}

/// The protocol a line belongs to, or `None` when the line decides nothing (blank, garbage).
///
/// The line is read by both front ends' own parsers, so detection knows exactly the
/// commands they answer: a well-formed GTP command (GTP is case-sensitive, commands are
/// lower case, with an optional numeric id first) is GTP; otherwise a Gomocup command (any
/// case) is Gomocup; otherwise a GTP command word with bad arguments is GTP. The words
/// `play` and `PLAY` exist in both: `play b D4` is GTP, `play 7,7` Gomocup.
pub fn detect_line(line: &str) -> Option<Protocol> {
    let text = gtp::parse::preprocess(line)?;
    let as_gtp = gtp::parse::parse_line(&text).command;
    let as_gomocup = gomocup::parse::parse_command(line)
        .filter(|c| !matches!(c, gomocup::parse::Command::Unknown(_)));
    match (as_gtp, as_gomocup) {
        (Ok(_), _) => Some(Protocol::Gtp),
        (Err(_), Some(_)) => Some(Protocol::Gomocup),
        (Err(ParseError::Syntax), None) => Some(Protocol::Gtp),
        (Err(ParseError::Unknown), None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects() {
        assert_eq!(detect_line("START 15"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("start 15"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("ABOUT"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("INFO timeout_turn 5"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("protocol_version"), Some(Protocol::Gtp));
        assert_eq!(detect_line("1 name"), Some(Protocol::Gtp));
        assert_eq!(detect_line("boardsize 9"), Some(Protocol::Gtp));
        assert_eq!(detect_line("play b D4"), Some(Protocol::Gtp));
        assert_eq!(detect_line("play 7,7"), Some(Protocol::Gomocup));
        assert_eq!(detect_line(""), None);
        assert_eq!(detect_line("\u{fffd}garbage"), None);
        // Every command either parser knows decides, and nothing else.
        assert_eq!(detect_line("YXSTOP"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("STOP"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("START x"), Some(Protocol::Gomocup));
        assert_eq!(detect_line("pcn-solve 5"), Some(Protocol::Gtp));
        assert_eq!(detect_line("2 genmove b"), Some(Protocol::Gtp));
        assert_eq!(detect_line("1 START"), None);
        assert_eq!(detect_line("boardsize"), Some(Protocol::Gtp));
    }
}
