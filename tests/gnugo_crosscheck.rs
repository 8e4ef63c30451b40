//! Cross-check of the Go rules against GNU Go over GTP (`gnugo --mode gtp`): random games on
//! 5x5, 7x7 and 9x9; after every move the full legal-move set (`all_legal`) and the stones
//! (`list_stones`) must agree. GNU Go's defaults are simple ko and suicide forbidden, the same
//! as [`KoRule::Simple`]. Skipped with a notice when GNU Go is not installed
//! (`protocol_tests/install_gnugo.sh` installs it).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use pcn::game::go::{Go, KoRule};
use pcn::game::{Color, Game, Move, MoveError};
use pcn::util::Rng;

struct Gtp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Gtp {
    fn start(path: &str, extra: &[&str]) -> Option<Gtp> {
        let mut child = Command::new(path)
            .args(["--mode", "gtp", "--level", "0"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        Some(Gtp {
            child,
            stdin,
            stdout,
        })
    }

    /// Sends one command; returns the response text after `= ` (panics on `?`: a test).
    fn cmd(&mut self, c: &str) -> String {
        writeln!(self.stdin, "{c}").expect("write to gnugo");
        self.stdin.flush().expect("flush");
        let mut out = String::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read from gnugo");
            assert!(n > 0, "gnugo closed its output after {c}");
            if line.trim().is_empty() {
                if out.is_empty() {
                    continue;
                }
                break;
            }
            out.push_str(&line);
        }
        assert!(out.starts_with('='), "gnugo refused {c}: {out}");
        out[1..].trim().to_string()
    }
}

impl Drop for Gtp {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

fn gnugo() -> Option<&'static str> {
    ["/usr/games/gnugo", "/usr/bin/gnugo", "/usr/local/bin/gnugo"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

fn vertex_set(g: &Go, text: &str) -> Vec<Move> {
    let mut v: Vec<Move> = text
        .split_whitespace()
        .map(|s| g.parse_gtp(s).expect("gnugo vertex"))
        .collect();
    v.sort_unstable();
    v
}

fn our_stones(g: &Go, c: Color) -> Vec<Move> {
    (0..(g.width() * g.height()) as Move)
        .filter(|&m| g.board().stone(m) == Some(c))
        .collect()
}

fn colour_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// Plays `sizes` (size, games) against GNU Go started with `extra` flags under `ko`; returns
/// (games, plies, captured stones, illegal empty points, superko bans that
/// are not simple-ko bans), or None when GNU Go is missing.
fn cross_check(
    extra: &[&str],
    ko: KoRule,
    sizes: &[(usize, usize)],
    seed: u64,
) -> Option<[usize; 5]> {
    let Some(path) = gnugo() else {
        eprintln!("SKIP: GNU Go not installed (run protocol_tests/install_gnugo.sh)");
        return None;
    };
    let Some(mut gtp) = Gtp::start(path, extra) else {
        eprintln!("SKIP: GNU Go at {path} does not start");
        return None;
    };
    let mut rng = Rng::new(seed);
    let (mut games, mut plies, mut captures, mut illegal_seen) = (0, 0, 0usize, 0usize);
    let mut superko_only = 0;
    let mut legal = Vec::new();
    for &(size, count) in sizes {
        gtp.cmd(&format!("boardsize {size}"));
        for _ in 0..count {
            gtp.cmd("clear_board");
            let mut g = Go::new(size, size, ko).expect("size");
            for _ in 0..3 * size * size {
                let color = g.to_move();
                g.legal_moves(&mut legal);
                let board_moves: Vec<Move> = legal
                    .iter()
                    .copied()
                    .filter(|&m| m != g.pass_move())
                    .collect();
                let theirs = vertex_set(&g, &gtp.cmd(&format!("all_legal {}", colour_name(color))));
                assert_eq!(
                    board_moves,
                    theirs,
                    "legal moves differ, {size}x{size} ply {}: ours {:?}",
                    g.ply(),
                    g.moves().collect::<Vec<_>>()
                );
                let empty = g.board().empty_cells().len();
                illegal_seen += empty - board_moves.len();
                for &c in g.board().empty_cells() {
                    let m = g.board().move_of(c as usize);
                    let superko = matches!(g.check_move(m), Err(MoveError::Illegal("superko")));
                    if superko && c as usize != g.board().ko_cell() {
                        superko_only += 1;
                    }
                }
                // Random move, avoiding own true eyes so that games end; pass when nothing else.
                let candidates: Vec<Move> = board_moves
                    .into_iter()
                    .filter(|&m| !g.board().is_true_eye(g.board().cell_of(m), color))
                    .collect();
                let m = if candidates.is_empty() || rng.below(50) == 0 {
                    g.pass_move()
                } else {
                    candidates[rng.below(candidates.len())]
                };
                g.play(m).expect("our legal move");
                gtp.cmd(&format!("play {} {}", colour_name(color), g.move_to_gtp(m)));
                captures += g.board().last_captures();
                plies += 1;
                for c in [Color::Black, Color::White] {
                    let theirs =
                        vertex_set(&g, &gtp.cmd(&format!("list_stones {}", colour_name(c))));
                    assert_eq!(
                        our_stones(&g, c),
                        theirs,
                        "stones differ, {size}x{size} ply {}",
                        g.ply()
                    );
                }
                if g.outcome().is_some() {
                    break;
                }
            }
            games += 1;
        }
    }
    Some([games, plies, captures, illegal_seen, superko_only])
}

#[test]
fn random_games_agree_with_gnugo() {
    let start = std::time::Instant::now();
    let sizes = [(5usize, 100usize), (7, 60), (9, 40)];
    let Some([games, plies, captures, illegal, _]) = cross_check(&[], KoRule::Simple, &sizes, 11)
    else {
        return;
    };
    eprintln!(
        "gnugo cross-check (simple ko): {games} games, {plies} plies, {captures} stones \
         captured, {illegal} illegal empty points agreed, {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(games, 200);
    assert!(captures > 0 && illegal > 0);
}

#[test]
fn random_games_agree_with_gnugo_positional_superko() {
    let start = std::time::Instant::now();
    let sizes = [(3usize, 150usize), (4, 100), (5, 50)];
    let Some([games, plies, captures, illegal, superko]) =
        cross_check(&["--positional-superko"], KoRule::Positional, &sizes, 12)
    else {
        return;
    };
    eprintln!(
        "gnugo cross-check (positional superko): {games} games, {plies} plies, {captures} \
         stones captured, {illegal} illegal empty points agreed ({superko} superko bans \
         other than the simple-ko point), {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(games, 300);
    assert!(superko > 0, "no superko-only situation was exercised");
}
