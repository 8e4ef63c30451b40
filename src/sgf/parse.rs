//! SGF (FF[4]) reader built on nom.
//!
//! Grammar: `Collection = GameTree+`, `GameTree = "(" Node+ GameTree* ")"`,
//! `Node = ";" Property*`, `Property = Ident Value+`, `Value = "[" text "]"`, with white space
//! allowed between all tokens. Identifiers are letters (FF[3] lower-case letters are kept as
//! written). Values are unescaped while reading: `\]` and `\\` give `]` and `\`, a backslash
//! before a line break (a soft line break) removes both, and any other escaped character
//! stands for itself.

use nom::bytes::complete::take_while1;
use nom::character::complete::{char, multispace0};
use nom::multi::{many0, many1};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::{GameTree, Node, Property, SgfError};

type Res<'a, T> = IResult<&'a str, T>;

fn ws(i: &str) -> Res<'_, &str> {
    multispace0(i)
}

/// One bracketed value, unescaped.
fn value(i: &str) -> Res<'_, String> {
    let (i, _) = preceded(ws, char('[')).parse(i)?;
    let mut out = String::new();
    let mut chars = i.char_indices();
    while let Some((pos, c)) = chars.next() {
        match c {
            ']' => return Ok((&i[pos + 1..], out)),
            '\\' => match chars.next() {
                Some((_, '\n')) => {
                    // Soft line break; swallow a following \r of a \n\r pair too.
                    if i[pos + 2..].starts_with('\r') {
                        chars.next();
                    }
                }
                Some((_, '\r')) => {
                    if i[pos + 2..].starts_with('\n') {
                        chars.next();
                    }
                }
                Some((_, e)) => out.push(e),
                None => break,
            },
            c => out.push(c),
        }
    }
    // Unterminated value: report at the end of the input.
    Err(nom::Err::Failure(nom::error::Error::new(
        &i[i.len()..],
        nom::error::ErrorKind::Char,
    )))
}

fn property(i: &str) -> Res<'_, Property> {
    let (i, id) = preceded(ws, take_while1(|c: char| c.is_ascii_alphabetic())).parse(i)?;
    let (i, values) = many1(value).parse(i)?;
    Ok((
        i,
        Property {
            id: id.to_string(),
            values,
        },
    ))
}

fn node(i: &str) -> Res<'_, Node> {
    let (i, _) = preceded(ws, char(';')).parse(i)?;
    let (i, props) = many0(property).parse(i)?;
    Ok((i, Node { props }))
}

/// Deepest nesting of variations accepted; deeper input is refused instead of risking the
/// stack (the parser recurses once per level).
pub const MAX_DEPTH: usize = 1000;

fn game_tree(i: &str, depth: usize) -> Res<'_, GameTree> {
    let (i, _) = preceded(ws, char('(')).parse(i)?;
    if depth >= MAX_DEPTH {
        return Err(nom::Err::Failure(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TooLarge,
        )));
    }
    let (mut i, nodes) = many1(node).parse(i)?;
    let mut variations = Vec::new();
    loop {
        match game_tree(i, depth + 1) {
            Ok((rest, t)) => {
                variations.push(t);
                i = rest;
            }
            Err(nom::Err::Error(_)) => break,
            Err(e) => return Err(e),
        }
    }
    let (i, _) = preceded(ws, char(')')).parse(i)?;
    Ok((i, GameTree { nodes, variations }))
}

/// Line (1-based) and column (1-based, in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn syntax_error(text: &str, rest: &str, msg: &str) -> SgfError {
    let offset = text.len() - rest.len();
    let (line, column) = line_col(text, offset);
    SgfError::Syntax {
        offset,
        line,
        column,
        msg: msg.to_string(),
    }
}

/// Guess at what was expected at a failure point, for the error message.
fn expected_at(rest: &str) -> &'static str {
    match rest.trim_start().chars().next() {
        None => "unexpected end of input (missing ']' or ')')",
        Some(';') | Some('(') | Some(')') => "unexpected tree structure",
        Some('[') => "property value without an identifier",
        Some(_) => "expected '(', ';', ')', a property identifier or '['",
    }
}

/// Parses a whole collection (one or more game trees, nothing but white space after them).
pub fn parse_collection(text: &str) -> Result<Vec<GameTree>, SgfError> {
    // A UTF-8 byte-order mark is harmless.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut trees = Vec::new();
    let mut rest = body;
    loop {
        let (after_ws, _) = ws(rest).map_err(|_| syntax_error(body, rest, "bad white space"))?;
        if after_ws.is_empty() {
            break;
        }
        match game_tree(after_ws, 0) {
            Ok((r, t)) => {
                trees.push(t);
                rest = r;
            }
            Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                let at = e.input;
                let msg = if e.code == nom::error::ErrorKind::TooLarge {
                    "variations nested too deeply"
                } else {
                    expected_at(at)
                };
                return Err(syntax_error(body, at, msg));
            }
            Err(nom::Err::Incomplete(_)) => {
                return Err(syntax_error(body, "", "unexpected end of input"));
            }
        }
    }
    if trees.is_empty() {
        return Err(syntax_error(body, rest, "no game tree in the file"));
    }
    Ok(trees)
}
