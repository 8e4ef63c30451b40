//! Protocol detection: `pcn` without a subcommand reads stdin and decides from the first
//! recognisable command word whether it speaks to a Gomocup manager or a GTP controller.

/// The protocols the binary speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Gomocup / Piskvork brain protocol.
    Gomocup,
    /// Go Text Protocol.
    Gtp,
}

const GOMOCUP_WORDS: &[&str] = &[
    "START",
    "RECTSTART",
    "RESTART",
    "BEGIN",
    "TURN",
    "BOARD",
    "INFO",
    "END",
    "ABOUT",
    "PLAY",
    "TAKEBACK",
    "SWAP2BOARD",
    "YXBOARD",
    "YXSTOP",
    "YXHASHCLEAR",
    "YXNBEST",
    "YXSHOWFORBID",
    "YXSHOWINFO",
];

const GTP_WORDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "showboard",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "time_settings",
    "time_left",
    "final_score",
    "final_status_list",
    "loadsgf",
    "reg_genmove",
    "kgs-genmove_cleanup",
    "lz-analyze",
    "kata-analyze",
    "genmove_analyze",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
    "gogui-analyze_commands",
    "kgs-game_over",
    "kgs-rules",
    "kata-get_rules",
    "kata-set_rules",
    "printsgf",
];

/// The protocol a line belongs to, or `None` when the line decides nothing (blank, garbage).
///
/// GTP is case-sensitive and commands are lower case, with an optional numeric id first;
/// Gomocup words are matched case-insensitively. The words `play` and `PLAY` exist in both:
/// lower-case `play` followed by a colour is GTP, anything else is Gomocup.
pub fn detect_line(line: &str) -> Option<Protocol> {
    let mut words = line.split_whitespace();
    let mut first = words.next()?;
    // GTP ids are numbers before the command.
    if first.bytes().all(|b| b.is_ascii_digit()) {
        first = words.next()?;
        return GTP_WORDS.contains(&first).then_some(Protocol::Gtp);
    }
    if GTP_WORDS.contains(&first) {
        if first == "play" {
            return match words.next() {
                Some(c) if c.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) => {
                    Some(Protocol::Gtp)
                }
                _ => Some(Protocol::Gomocup),
            };
        }
        return Some(Protocol::Gtp);
    }
    let upper = first.to_ascii_uppercase();
    GOMOCUP_WORDS
        .contains(&upper.as_str())
        .then_some(Protocol::Gomocup)
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
    }
}
