//! The job-level search's line protocol: how a manager and a worker in another process (or on
//! another machine, through a relay such as the Ray driver in `cluster/`) talk.
//!
//! One message per line, UTF-8, a word and then `key=value` tokens separated by single
//! spaces; values never hold spaces (free text goes last and is hex-encoded). Unknown keys
//! are ignored, so either side may add fields later. Moves are action indices (`y * width +
//! x`), the same numbers as [`crate::game::Move`], so the protocol needs no board.
//!
//! Manager to worker ([`ToWorker`]):
//!
//! ```text
//! begin prover=W problem=<hex>          a new problem: the root and its history (see below)
//! job id=7 nodes=20000 proof=1 fresh=0 th=12,40 path=30,31,40
//! cancel id=7
//! known result=win path=30,31           share a solved position (Transport::share)
//! clear                                 forget the tables (a new game)
//! memory bytes=67108864                 table budget
//! quit
//! ```
//!
//! `problem` is opaque to this module: the front end that made the transport decides what
//! describes its root (`pcn solve` sends the problem's SGF text with the game's rules, so that
//! the worker loads it exactly as `pcn solve` does, history included, which Killall-Go's
//! superko needs).
//!
//! Worker to manager ([`FromWorker`]):
//!
//! ```text
//! ready                                 the worker is up (its network loaded)
//! answer id=7 result=unknown nodes=20000 knodes=0 secs=0.912 numbers=3,5 children=40:2:3,41:1:9
//! answer id=8 result=win nodes=812 knodes=0 secs=0.05 proof=W,win,31.1,40.2;;
//! failed id=7 why=<hex>                 the job is lost (it may be sent again)
//! lost why=<hex>                        the worker is gone (said by a relay, or EOF)
//! error why=<hex>                       the worker could not read a line
//! ```
//!
//! A sub-proof ([`ProofTree`]) is `prover,result,` and then its nodes in order separated by
//! `;`, each node its children as `move.index` joined by commas: the text
//! `W,win,31.1,40.2;;` is a root with the children 31 (node 1) and 40 (node 2), both leaves.
//! The proof is a fragment of the problem below the job's path; the manager grafts it into
//! its tree and the whole is written as an ordinary proof file, which `pcn verify` checks
//! (the SGF proof format itself lives in [`crate::proof`], a layer above this one).
//!
//! Reading never panics: a bad line is an [`WireError`] with the reason.

use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::char;
use nom::multi::many0;
use nom::sequence::{preceded, separated_pair};
use nom::{IResult, Parser};

use super::{Job, JobAnswer};
use crate::game::{Color, Move};
use crate::search::solver::{ProofNode, ProofTree, SolveResult};

/// A line that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad protocol line ({why}): {line}")]
pub struct WireError {
    /// What is wrong.
    pub why: String,
    /// The start of the line.
    pub line: String,
}

/// Longest line accepted (a sub-proof of a few hundred thousand nodes); longer ones are
/// refused rather than buffered without end.
pub const MAX_LINE: usize = 64 << 20;

/// Most nodes of one sub-proof read from a line.
const MAX_PROOF_NODES: usize = 20_000_000;

/// A message from the manager to a worker.
#[derive(Clone, Debug, PartialEq)]
pub enum ToWorker {
    /// A new problem: the prover and the front end's description of the root.
    Begin {
        /// Whose win is proved.
        prover: Color,
        /// The root, as the front end describes it (opaque here).
        problem: String,
    },
    /// A job ([`Job::prefer`] does not travel: the transport has chosen the worker).
    Job(Job),
    /// Stop job `id` soon.
    Cancel(u64),
    /// The position at `path` is solved (see [`super::Transport::share`]).
    Known {
        /// Moves from the root.
        path: Vec<Move>,
        /// Win or loss for the prover.
        result: SolveResult,
    },
    /// Forget the tables.
    Clear,
    /// Table memory in bytes.
    Memory(usize),
    /// End the worker.
    Quit,
}

/// A message from a worker (or a relay speaking for it) to the manager.
#[derive(Clone, Debug, PartialEq)]
pub enum FromWorker {
    /// The worker is ready for a problem.
    Ready,
    /// A job's answer ([`JobAnswer::worker`] is set by the transport, not carried).
    Answer(JobAnswer),
    /// A job failed on a live worker.
    Failed {
        /// The job.
        id: u64,
        /// Why.
        why: String,
    },
    /// The worker is gone.
    Lost(String),
    /// The worker could not read one of our lines.
    Error(String),
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
        .collect();
    Some(String::from_utf8_lossy(&bytes?).into_owned())
}

fn moves(path: &[Move]) -> String {
    path.iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn result_word(r: SolveResult) -> &'static str {
    r.as_str()
}

fn color_letter(c: Color) -> &'static str {
    match c {
        Color::Black => "B",
        Color::White => "W",
    }
}

/// Writes a sub-proof (see the module docs).
pub fn encode_proof(p: &ProofTree) -> String {
    let mut s = format!("{},{},", color_letter(p.prover), result_word(p.result));
    for (i, n) in p.nodes.iter().enumerate() {
        if i > 0 {
            s.push(';');
        }
        let kids: Vec<String> = n.children.iter().map(|(m, c)| format!("{m}.{c}")).collect();
        s.push_str(&kids.join(","));
    }
    s
}

/// Reads a sub-proof; every child index must point further down the node list (so the
/// tree has no cycle and no index out of range).
pub fn decode_proof(s: &str) -> Result<ProofTree, String> {
    let mut parts = s.splitn(3, ',');
    let prover = parse_color(parts.next().unwrap_or(""))?;
    let result = parse_result(parts.next().unwrap_or(""))?;
    if result == SolveResult::Unknown {
        return Err("a proof of an unknown result".into());
    }
    let body = parts.next().ok_or("proof without nodes")?;
    let fields: Vec<&str> = body.split(';').collect();
    if fields.len() > MAX_PROOF_NODES {
        return Err(format!("proof over {MAX_PROOF_NODES} nodes"));
    }
    let len = fields.len();
    let mut nodes = Vec::with_capacity(len);
    for (i, f) in fields.iter().enumerate() {
        let mut children = Vec::new();
        for kid in f.split(',').filter(|k| !k.is_empty()) {
            let (m, c) = kid
                .split_once('.')
                .ok_or_else(|| format!("proof child '{kid}' is not move.index"))?;
            let m: Move = m.parse().map_err(|_| format!("proof move '{m}'"))?;
            let c: u32 = c.parse().map_err(|_| format!("proof index '{c}'"))?;
            if (c as usize) <= i || (c as usize) >= len {
                return Err(format!("proof node {i}: child index {c} out of order"));
            }
            children.push((m, c));
        }
        nodes.push(ProofNode { children });
    }
    Ok(ProofTree {
        prover,
        result,
        nodes,
    })
}

impl ToWorker {
    /// The line (without its newline).
    pub fn encode(&self) -> String {
        match self {
            ToWorker::Begin { prover, problem } => {
                format!(
                    "begin prover={} problem={}",
                    color_letter(*prover),
                    hex(problem)
                )
            }
            ToWorker::Job(j) => {
                let th = j
                    .thresholds
                    .map_or(String::new(), |(p, d)| format!(" th={p},{d}"));
                format!(
                    "job id={} nodes={} proof={} fresh={}{th} path={}",
                    j.id,
                    j.nodes,
                    u8::from(j.want_proof),
                    u8::from(j.fresh),
                    moves(&j.path)
                )
            }
            ToWorker::Cancel(id) => format!("cancel id={id}"),
            ToWorker::Known { path, result } => {
                format!("known result={} path={}", result_word(*result), moves(path))
            }
            ToWorker::Clear => "clear".into(),
            ToWorker::Memory(b) => format!("memory bytes={b}"),
            ToWorker::Quit => "quit".into(),
        }
    }

    /// Reads a line.
    pub fn decode(line: &str) -> Result<ToWorker, WireError> {
        let (word, kv) = split(line)?;
        let f = Fields { kv: &kv, line };
        Ok(match word {
            "begin" => ToWorker::Begin {
                prover: f.get("prover", parse_color)?,
                problem: f.get("problem", |s| unhex(s).ok_or("not hex".into()))?,
            },
            "job" => ToWorker::Job(Job {
                id: f.get("id", parse_num)?,
                path: f.get("path", parse_moves)?,
                nodes: f.get("nodes", parse_num)?,
                want_proof: f.opt("proof", parse_bool)?.unwrap_or(false),
                fresh: f.opt("fresh", parse_bool)?.unwrap_or(false),
                thresholds: f.opt("th", parse_pair)?,
                prefer: None,
            }),
            "cancel" => ToWorker::Cancel(f.get("id", parse_num)?),
            "known" => ToWorker::Known {
                path: f.get("path", parse_moves)?,
                result: f.get("result", parse_result)?,
            },
            "clear" => ToWorker::Clear,
            "memory" => ToWorker::Memory(f.get("bytes", parse_num)? as usize),
            "quit" => ToWorker::Quit,
            other => return Err(bad(line, format!("unknown message '{}'", clip(other)))),
        })
    }
}

impl FromWorker {
    /// The line (without its newline).
    pub fn encode(&self) -> String {
        match self {
            FromWorker::Ready => "ready".into(),
            FromWorker::Answer(a) => {
                let mut s = format!(
                    "answer id={} result={} nodes={} knodes={} secs={:.6}",
                    a.id,
                    result_word(a.result),
                    a.nodes,
                    a.knowledge_nodes,
                    a.seconds
                );
                if let Some((p, d)) = a.numbers {
                    s.push_str(&format!(" numbers={p},{d}"));
                }
                if !a.children.is_empty() {
                    let c: Vec<String> = a
                        .children
                        .iter()
                        .map(|(m, p, d)| format!("{m}:{p}:{d}"))
                        .collect();
                    s.push_str(&format!(" children={}", c.join(",")));
                }
                if let Some(p) = &a.proof {
                    s.push_str(" proof=");
                    s.push_str(&encode_proof(p));
                }
                s
            }
            FromWorker::Failed { id, why } => format!("failed id={id} why={}", hex(why)),
            FromWorker::Lost(why) => format!("lost why={}", hex(why)),
            FromWorker::Error(why) => format!("error why={}", hex(why)),
        }
    }

    /// Reads a line (`worker` of an answer is left 0 for the transport to set).
    pub fn decode(line: &str) -> Result<FromWorker, WireError> {
        let (word, kv) = split(line)?;
        let f = Fields { kv: &kv, line };
        let why = |f: &Fields| -> Result<String, WireError> {
            Ok(
                f.opt("why", |s| Ok(unhex(s).unwrap_or_else(|| s.to_string())))?
                    .unwrap_or_default(),
            )
        };
        Ok(match word {
            "ready" => FromWorker::Ready,
            "answer" => {
                let result = f.get("result", parse_result)?;
                FromWorker::Answer(JobAnswer {
                    id: f.get("id", parse_num)?,
                    worker: 0,
                    result,
                    nodes: f.get("nodes", parse_num)?,
                    knowledge_nodes: f.opt("knodes", parse_num)?.unwrap_or(0),
                    seconds: f
                        .opt("secs", |s| {
                            s.parse::<f64>()
                                .ok()
                                .filter(|x| x.is_finite() && *x >= 0.0)
                                .ok_or_else(|| "not a duration".to_string())
                        })?
                        .unwrap_or(0.0),
                    proof: f.opt("proof", decode_proof)?,
                    numbers: f.opt("numbers", parse_pair)?,
                    children: f.opt("children", parse_children)?.unwrap_or_default(),
                })
            }
            "failed" => FromWorker::Failed {
                id: f.get("id", parse_num)?,
                why: why(&f)?,
            },
            "lost" => FromWorker::Lost(why(&f)?),
            "error" => FromWorker::Error(why(&f)?),
            other => return Err(bad(line, format!("unknown message '{}'", clip(other)))),
        })
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

fn bad(line: &str, why: String) -> WireError {
    WireError {
        why,
        line: clip(line),
    }
}

type Res<'a, T> = IResult<&'a str, T>;

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `key=value` (the value may be empty: an empty path).
fn pair(i: &str) -> Res<'_, (&str, &str)> {
    preceded(
        char(' '),
        separated_pair(take_while1(is_word), tag("="), take_while(|c| c != ' ')),
    )
    .parse(i)
}

/// A message word and its `key=value` tokens.
type Message<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// Reads a [`Message`].
fn message(i: &str) -> Res<'_, Message<'_>> {
    (take_while1(is_word), many0(pair)).parse(i)
}

fn split(line: &str) -> Result<Message<'_>, WireError> {
    if line.len() > MAX_LINE {
        return Err(bad(line, "line too long".into()));
    }
    let l = line.trim_end_matches(['\r', '\n']);
    match message(l) {
        Ok(("", m)) => Ok(m),
        Ok((rest, _)) => Err(bad(line, format!("unexpected '{}'", clip(rest)))),
        Err(_) => Err(bad(line, "no message word".into())),
    }
}

struct Fields<'a> {
    kv: &'a [(&'a str, &'a str)],
    line: &'a str,
}

impl Fields<'_> {
    fn opt<T>(
        &self,
        key: &str,
        f: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, WireError> {
        match self.kv.iter().find(|(k, _)| *k == key) {
            None => Ok(None),
            Some((_, v)) => f(v)
                .map(Some)
                .map_err(|e| bad(self.line, format!("{key}: {e}"))),
        }
    }

    fn get<T>(&self, key: &str, f: impl Fn(&str) -> Result<T, String>) -> Result<T, WireError> {
        self.opt(key, f)?
            .ok_or_else(|| bad(self.line, format!("no {key}")))
    }
}

fn parse_num(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .map_err(|_| format!("'{}' is not a number", clip(s)))
}

fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(format!("'{}' is not 0 or 1", clip(s))),
    }
}

fn parse_pair(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once(',').ok_or("not a,b")?;
    Ok((parse_num(a)?, parse_num(b)?))
}

fn parse_move(s: &str) -> Result<Move, String> {
    s.parse::<Move>()
        .map_err(|_| format!("'{}' is not a move", clip(s)))
}

fn parse_moves(s: &str) -> Result<Vec<Move>, String> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(parse_move)
        .collect()
}

fn parse_children(s: &str) -> Result<Vec<(Move, u64, u64)>, String> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            let mut it = t.split(':');
            match (it.next(), it.next(), it.next(), it.next()) {
                (Some(m), Some(p), Some(d), None) => {
                    Ok((parse_move(m)?, parse_num(p)?, parse_num(d)?))
                }
                _ => Err(format!("child '{}' is not move:pn:dn", clip(t))),
            }
        })
        .collect()
}

fn parse_color(s: &str) -> Result<Color, String> {
    match s {
        "B" => Ok(Color::Black),
        "W" => Ok(Color::White),
        _ => Err(format!("'{}' is not B or W", clip(s))),
    }
}

fn parse_result(s: &str) -> Result<SolveResult, String> {
    match s {
        "win" => Ok(SolveResult::Win),
        "loss" => Ok(SolveResult::Loss),
        "unknown" => Ok(SolveResult::Unknown),
        _ => Err(format!("'{}' is not win, loss or unknown", clip(s))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            id: 7,
            path: vec![30, 31, 40],
            nodes: 20_000,
            want_proof: true,
            fresh: false,
            thresholds: Some((12, 40)),
            prefer: None,
        }
    }

    #[test]
    fn manager_messages_round_trip() {
        let msgs = [
            ToWorker::Begin {
                prover: Color::White,
                problem: "(;GM[1]SZ[9]\nC[a b])".into(),
            },
            ToWorker::Job(job()),
            ToWorker::Job(Job {
                path: vec![],
                thresholds: None,
                ..job()
            }),
            ToWorker::Cancel(9),
            ToWorker::Known {
                path: vec![1, 2],
                result: SolveResult::Loss,
            },
            ToWorker::Clear,
            ToWorker::Memory(1 << 26),
            ToWorker::Quit,
        ];
        for m in msgs {
            let line = m.encode();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(ToWorker::decode(&line), Ok(m), "{line}");
        }
    }

    #[test]
    fn answers_round_trip_with_their_proof() {
        let proof = ProofTree {
            prover: Color::White,
            result: SolveResult::Win,
            nodes: vec![
                ProofNode {
                    children: vec![(31, 1)],
                },
                ProofNode {
                    children: vec![(40, 2), (41, 3)],
                },
                ProofNode::default(),
                ProofNode::default(),
            ],
        };
        let a = JobAnswer {
            id: 8,
            worker: 0,
            result: SolveResult::Win,
            nodes: 812,
            knowledge_nodes: 3,
            seconds: 0.25,
            proof: Some(proof),
            numbers: None,
            children: vec![],
        };
        let u = JobAnswer {
            id: 9,
            result: SolveResult::Unknown,
            proof: None,
            numbers: Some((3, 5)),
            children: vec![(40, 2, 3), (41, 1, 9)],
            ..a.clone()
        };
        for m in [
            FromWorker::Answer(a),
            FromWorker::Answer(u),
            FromWorker::Ready,
            FromWorker::Failed {
                id: 4,
                why: "worker panicked: x = y".into(),
            },
            FromWorker::Lost("pcn exited (signal 9)".into()),
            FromWorker::Error("?".into()),
        ] {
            let line = m.encode();
            assert_eq!(FromWorker::decode(&line), Ok(m), "{line}");
        }
    }

    #[test]
    fn bad_lines_are_errors_not_panics() {
        for line in [
            "",
            " ",
            "answer",
            "answer id=x result=win nodes=1",
            "answer id=1 result=maybe nodes=1",
            "answer id=1 result=win nodes=1 proof=W,win,3.0",
            "answer id=1 result=win nodes=1 proof=W,win,3.9;",
            "answer id=1 result=win nodes=1 proof=W,unknown,",
            "answer id=1 result=unknown nodes=1 children=3:4",
            "answer id=1 result=unknown nodes=1 numbers=3",
            "answer id=1 result=unknown nodes=1 secs=NaN",
            "job id=1 nodes=5 path=1,x",
            "job id=1 nodes=5 path=99999999",
            "job id=1 path=1",
            "begin prover=W problem=zz",
            "begin prover=X problem=",
            "frobnicate",
            "answer  id=1",
            "ready trailing",
        ] {
            let a = FromWorker::decode(line);
            let b = ToWorker::decode(line);
            assert!(a.is_err() || b.is_err(), "accepted: {line}");
            if line.starts_with("answer") {
                assert!(a.is_err(), "accepted: {line}");
            }
        }
        // Unknown keys are ignored (later versions may add fields).
        assert_eq!(
            FromWorker::decode("failed id=3 why=41 extra=1"),
            Ok(FromWorker::Failed {
                id: 3,
                why: "A".into()
            })
        );
    }
}
