//! Harnesses for every input the engine reads, shared by the coverage-guided fuzz targets
//! (`fuzz/`, cargo-fuzz) and by the corpus replay test (`tests/fuzz_replay.rs`, run by
//! `cargo test`), so a crash the fuzzer found is replayed by the same code. See
//! `docs/testing.md`.
//!
//! Each harness takes arbitrary bytes and feeds them through the real code path: protocol
//! lines go through the line reader into a whole protocol session (parser, dispatcher,
//! engine thread, searches), files go through the same readers the commands use. Bad input
//! must be refused, never crash the process; each harness also checks what it can of the
//! answer (the output is protocol, a refused command left the position unchanged, what was
//! read writes back the same) and panics, as the fuzzer expects of a finding, when that
//! check fails.
//!
//! Resource settings a user chooses on purpose (table memory, search budget, threads) are
//! kept small here so that one input runs in well under a second and 512 MB; everything
//! else is the shipped behaviour. This is the top layer: it may use every module.

use std::io::Cursor;
use std::path::PathBuf;
use std::time::Instant;

use crossbeam::channel::{unbounded, Receiver};

use crate::game::gomoku::{Gomoku, Rule};
use crate::game::killallgo::{KillallGo, Variant};
use crate::protocol::gtp::parse::{parse_line as gtp_parse_line, preprocess, Command};
use crate::protocol::{gomocup, gtp, spawn_line_reader, Input};
use crate::sgf::GameTree;

/// Table memory of every searcher in a fuzzed session (the user's `--memory`).
pub const FUZZ_MEMORY_BYTES: usize = 4 << 20;

/// Node budget per search in a fuzzed session (`--nodes`): deterministic and quick.
pub const FUZZ_NODES: u64 = 64;

/// Inputs longer than this are cut (the fuzzers' `-max_len` is below it; replayed files
/// are bounded the same way).
pub const MAX_INPUT: usize = 1 << 20;

/// Every input line of `data` as the protocol reader delivers it (the real
/// [`spawn_line_reader`]: CR stripped, lossy UTF-8, over-long lines reported), ending with
/// [`Input::Eof`].
fn read_lines(data: &[u8]) -> Vec<Input> {
    let rx = spawn_line_reader(Cursor::new(data.to_vec()));
    let mut v = Vec::new();
    for i in rx.iter() {
        let eof = matches!(i, Input::Eof);
        v.push(i);
        if eof {
            break;
        }
    }
    if !matches!(v.last(), Some(Input::Eof)) {
        v.push(Input::Eof);
    }
    v
}

/// A channel already holding `inputs` (the session reads them as if from a manager that
/// sent everything at once, then closed the pipe).
fn channel_of(inputs: Vec<Input>) -> Receiver<Input> {
    let (tx, rx) = unbounded();
    for i in inputs {
        // The receiver is alive: it is returned below.
        let _ = tx.send(i);
    }
    rx
}

/// A scratch directory for this process (files that `loadsgf`, `printsgf` and the record
/// reader need); one per process so that parallel fuzzing jobs do not share files.
fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("pcn-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&d);
    d
}

fn cut(data: &[u8]) -> &[u8] {
    &data[..data.len().min(MAX_INPUT)]
}

/// Whether `l` is a line a Gomocup brain may print on a board of at most 22x22.
fn gomocup_output_line(l: &str) -> bool {
    let point = |p: &str| {
        let mut it = p.split(',');
        match (it.next(), it.next(), it.next()) {
            (Some(x), Some(y), None) => matches!(
                (x.parse::<u32>(), y.parse::<u32>()),
                (Ok(x), Ok(y)) if x < 22 && y < 22
            ),
            _ => false,
        }
    };
    l == "OK"
        || l == "SWAP"
        || l.starts_with("ERROR ")
        || l.starts_with("UNKNOWN ")
        || l.starts_with("MESSAGE ")
        || l.starts_with("DEBUG ")
        || l.starts_with("FORBID ")
        || l.starts_with("name=")
        || (!l.is_empty() && l.split(' ').all(point))
}

/// Gomocup: the bytes are what a manager sends on stdin (any bytes: lines, BOARD /
/// SWAP2BOARD blocks, INFO values, garbage). They go through the line reader into a whole
/// brain session ([`gomocup::run`] with the greedy player and a node budget). Checks: the
/// session ends at the end of input with exit code 0, and every output line is a protocol
/// line (`OK`, a move, `ERROR`, `UNKNOWN`, `MESSAGE`, ...).
pub fn gomocup_session(data: &[u8]) {
    let inputs = read_lines(cut(data));
    let mut out = Vec::new();
    let opts = gomocup::Options {
        nodes: Some(FUZZ_NODES),
        memory_bytes: FUZZ_MEMORY_BYTES,
        memory_given: true,
        ..gomocup::Options::default()
    };
    let code = gomocup::run(
        channel_of(inputs),
        Vec::new(),
        &mut out,
        Box::new(crate::search::gomoku::greedy::Greedy),
        opts,
    );
    assert_eq!(code, 0, "gomocup session exit code");
    let text = String::from_utf8(out).expect("gomocup output is UTF-8");
    for l in text.lines() {
        assert!(gomocup_output_line(l), "not a protocol line: {l:?}");
    }
}

/// The GTP command that dumps the state compared around refused commands.
const STATE: &str = "printsgf";

/// GTP: the bytes up to the first NUL are the command lines; the bytes after it are the
/// contents of the one file the session may read: every `loadsgf` loads that file and every
/// `printsgf FILE` writes into the scratch directory (the fuzzer must not read or write the
/// machine's files). The first byte picks the game (Killall-Go 7x7 or 9x9, Gomoku
/// freestyle 15x15 or renju). The lines go through the line reader into a whole GTP session
/// ([`gtp::run`]: genmove with the solver, `kata-analyze`, time commands, `undo`, ...).
/// Checks: exit code 0; exactly one response per command, each starting with `=` or `?`;
/// and the game after a refused command (`?`) is the game before it (`printsgf` is sent
/// before the first command and after each one, and compared).
pub fn gtp_session(data: &[u8]) {
    let data = cut(data);
    let (lines, file) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let dir = scratch();
    let sgf_path = dir.join("load.sgf");
    if std::fs::write(&sgf_path, file).is_err() {
        return;
    }
    let game_pick = lines.first().copied().unwrap_or(0) % 4;
    let mut inputs = Vec::new();
    // Commands that answer (non-blank after preprocessing, or too long).
    let mut answered = 0usize;
    let state = || Input::Line {
        text: STATE.into(),
        at: Instant::now(),
    };
    inputs.push(state());
    for i in read_lines(lines) {
        match i {
            Input::Eof => break,
            Input::TooLong { .. } => {
                inputs.push(i);
                inputs.push(state());
                answered += 1;
            }
            Input::Line { text, at } => {
                let Some(pre) = preprocess(&text) else {
                    inputs.push(Input::Line { text, at });
                    continue;
                };
                let parsed = gtp_parse_line(&pre);
                let id = parsed.id.clone().unwrap_or_default();
                let text = match parsed.command {
                    Ok(Command::Loadsgf(_, n)) => match n {
                        Some(n) => format!("{id} loadsgf {} {n}", sgf_path.display()),
                        None => format!("{id} loadsgf {}", sgf_path.display()),
                    },
                    Ok(Command::Printsgf(Some(_))) => {
                        format!("{id} printsgf {}", dir.join("print.sgf").display())
                    }
                    _ => text,
                };
                let quit = matches!(parsed.command, Ok(Command::Quit));
                inputs.push(Input::Line { text, at });
                answered += 1;
                if quit {
                    break;
                }
                inputs.push(state());
            }
        }
    }
    inputs.push(Input::Eof);
    let opts = gtp::Options {
        nodes: Some(FUZZ_NODES),
        memory_bytes: FUZZ_MEMORY_BYTES,
        ..gtp::Options::default()
    };
    let mut out = Vec::new();
    let rx = channel_of(inputs);
    let code = match game_pick {
        0 => gtp::run(
            rx,
            Vec::new(),
            &mut out,
            KillallGo::new(Variant::Seven),
            None,
            opts,
        ),
        1 => gtp::run(
            rx,
            Vec::new(),
            &mut out,
            KillallGo::new(Variant::Pcn9),
            None,
            opts,
        ),
        _ => {
            let rule = if game_pick == 2 {
                Rule::Freestyle
            } else {
                Rule::Renju
            };
            let Ok(g) = Gomoku::new(15, 15, rule) else {
                unreachable!("15x15 is a valid Gomoku board")
            };
            let player = Box::new(crate::search::gomoku::greedy::Greedy);
            gtp::run(rx, Vec::new(), &mut out, g, Some(player), opts)
        }
    };
    assert_eq!(code, 0, "gtp session exit code");
    let text = String::from_utf8(out).expect("GTP output is UTF-8");
    let responses: Vec<&str> = text.split_terminator("\n\n").collect();
    for r in &responses {
        assert!(
            r.starts_with('=') || r.starts_with('?'),
            "not a GTP response: {r:?}"
        );
    }
    // Responses: dump, (command, dump)*, possibly a final `quit` without a dump.
    let dumps_and_commands = responses.len();
    let expected_even = 1 + 2 * answered;
    let expected_quit = 2 * answered;
    assert!(
        dumps_and_commands == expected_even || dumps_and_commands == expected_quit,
        "{dumps_and_commands} responses for {answered} commands and their state dumps"
    );
    let mut i = 1;
    while i + 1 < responses.len() {
        let (before, cmd, after) = (responses[i - 1], responses[i], responses[i + 1]);
        if cmd.starts_with('?') {
            assert_eq!(before, after, "a refused command changed the game: {cmd:?}");
        }
        i += 2;
    }
}

/// SGF: the bytes are an SGF file (as `loadsgf`, `pcn solve` and `pcn verify` read it).
/// A parsed file is converted to every game (Killall-Go, Go, Gomoku freestyle and renju),
/// and must write out and parse back to the same tree.
pub fn sgf_reader(data: &[u8]) {
    let Ok(tree) = GameTree::parse_bytes(cut(data)) else {
        return;
    };
    let text = tree.to_sgf();
    let back = GameTree::parse(&text).expect("the writer's output parses");
    assert_eq!(back, tree, "SGF write/read round trip");
    let _ = crate::sgf::to_killallgo(&tree);
    let _ = crate::sgf::to_go(&tree, crate::game::go::KoRule::Positional);
    let _ = crate::sgf::to_gomoku(&tree, Rule::Freestyle);
    let _ = crate::sgf::to_gomoku(&tree, Rule::Renju);
}

/// Proof files: the bytes are a proof file as `pcn verify` reads it. A proof the checker
/// accepts must, written back as SGF and checked again, give the same report.
pub fn proof_verifier(data: &[u8]) {
    let text = String::from_utf8_lossy(cut(data));
    let Ok(report) = crate::proof::verify::verify_text(&text) else {
        return;
    };
    let Ok(tree) = GameTree::parse(&text) else {
        panic!("a proof the checker accepted does not parse as SGF");
    };
    let again = crate::proof::verify::verify_text(&tree.to_sgf()).expect("re-written proof");
    assert_eq!(again, report, "proof report after a write/read round trip");
}

/// Network models: the bytes up to the first NUL are `model.json`, the rest is
/// `model.safetensors` ([`crate::nn::model::Model::from_bytes`], what `--net` loads). A
/// model that loads is prepared for the CPU backend and evaluates one position.
pub fn model_loader(data: &[u8]) {
    use crate::nn::Evaluator;
    let data = cut(data);
    let (json, st) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let Ok(json) = std::str::from_utf8(json) else {
        return;
    };
    let path = std::path::Path::new("fuzz/model.safetensors");
    let Ok(model) = crate::nn::model::Model::from_bytes(st, json, path) else {
        return;
    };
    let Ok(backend) = crate::nn::cpu::CpuBackend::new(&model, 1) else {
        return;
    };
    let input = vec![0.0f32; backend.info().input_len()];
    let mut out = crate::nn::NetOutput::default();
    if backend.evaluate(&input, 1, &mut out).is_ok() {
        assert_eq!(
            out.policy.len(),
            backend.info().actions,
            "policy length of one position"
        );
    }
}

/// Self-play record files: the bytes are a record file ([`crate::selfplay::record`]), read
/// as the trainer's reader does and opened for appending as a resumed `pcn selfplay` does.
/// Every record read must encode back to its bytes' planes and numbers (decode/encode round
/// trip, compared by decoding again).
pub fn record_reader(data: &[u8]) {
    use crate::selfplay::record::{decode, encode, read_all, RecordWriter};
    let path = scratch().join("records.bin");
    if std::fs::write(&path, cut(data)).is_err() {
        return;
    }
    let Ok((h, recs)) = read_all(&path) else {
        return;
    };
    // The header describes its records: shapes that overflow must have been refused.
    let bits = h
        .planes
        .checked_mul(h.board_size)
        .and_then(|x| x.checked_mul(h.board_size));
    for r in &recs {
        assert_eq!(
            Some(r.planes.len()),
            bits,
            "planes of a record against the header"
        );
        assert_eq!(
            r.policy.len(),
            h.actions,
            "policy of a record against the header"
        );
        let mut b = Vec::new();
        encode(&h, r, &mut b);
        assert_eq!(b.len(), h.record_bytes, "encoded record size");
        let again = decode(&h, &b).expect("an encoded record decodes");
        // Bitwise: NaN labels must survive too.
        assert_eq!(again.game, r.game);
        assert_eq!(again.planes, r.planes);
        assert_eq!(
            again.policy.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            r.policy.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
    let _ = RecordWriter::open(&path, &h);
}

/// Command-line options: the bytes are the arguments after `pcn`, split at NUL and newline
/// bytes (so any byte may be part of an argument), parsed by the real parser
/// ([`crate::cli::Cli`]: `--rule`, `--size`, `--threads`, `--workers`, `--net`, ...). A
/// command line for a protocol session (none, `gomocup`, `gtp`) then runs that session as
/// the binary would, with a few fixed commands on its input: the options that survived
/// parsing must build a working engine or be refused with exit code 2. Table memory,
/// threads, workers and the node budget are capped, and `--net auto` becomes `none`
/// (resources, not parsing).
pub fn option_parsers(data: &[u8]) {
    use crate::cli::{run_protocol, Cli, Cmd};
    use clap::Parser;
    let data = cut(data);
    let args: Vec<String> = data
        .split(|&b| b == 0 || b == b'\n')
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let argv = std::iter::once("pcn".to_string()).chain(args.into_iter().filter(|a| !a.is_empty()));
    let Ok(mut cli) = Cli::try_parse_from(argv) else {
        return;
    };
    let g = &mut cli.global;
    // `--net auto` loads the shipped network (tens of milliseconds, but seconds under the
    // sanitizer, every input); the loader has its own target (`model`).
    if crate::nn::shipped::is_auto(&g.net) {
        g.net = "none".into();
    }
    g.memory = Some(g.memory.unwrap_or(4).min(4));
    g.threads = g.threads.map(|t| t.min(2));
    g.workers = g.workers.map(|w| w.min(2));
    g.nodes = Some(g.nodes.unwrap_or(FUZZ_NODES).min(FUZZ_NODES));
    let script: &[&str] = match &cli.cmd {
        Some(Cmd::Gomocup) => &["START 15", "BEGIN", "TURN 7,7", "END"],
        Some(Cmd::Gtp(_)) | None => &[
            "protocol_version",
            "boardsize 7",
            "clear_board",
            "genmove b",
            "pcn-net",
            "quit",
        ],
        Some(_) => return,
    };
    let inputs: Vec<Input> = script
        .iter()
        .map(|l| Input::Line {
            text: (*l).to_string(),
            at: Instant::now(),
        })
        .chain(std::iter::once(Input::Eof))
        .collect();
    let mut out = Vec::new();
    let code = run_protocol(&cli, channel_of(inputs), &mut out);
    assert!(
        matches!(code, Some(0) | Some(2)),
        "session exit code {code:?} for {:?}",
        cli
    );
}

/// A harness: its name and the function that runs one input.
pub type Harness = (&'static str, fn(&[u8]));

/// The harnesses by name, as the fuzz targets and the replay test call them. The name is
/// also the fuzz target's and the corpus folder's (`fuzz/corpus/NAME`).
pub const HARNESSES: &[Harness] = &[
    ("gomocup", gomocup_session),
    ("gtp", gtp_session),
    ("sgf", sgf_reader),
    ("proof", proof_verifier),
    ("model", model_loader),
    ("record", record_reader),
    ("options", option_parsers),
];
