//! Protocol front ends. They own the input loop and the output format; the engine layer runs
//! the searches. Input is read on its own thread by [`spawn_line_reader`] so a front end can
//! wait for its input and the search's events at the same time.
//!
//! - [`gomocup`]: the Gomocup/Piskvork brain protocol and its de-facto extensions.
//! - [`detect`]: tells Gomocup from GTP by the first command line.

pub mod detect;
pub mod gomocup;
pub mod gtp;

use std::io::Read;
use std::time::Instant;

use crossbeam::channel::{unbounded, Receiver};

/// Longest input line kept; the rest of a longer line is discarded (and the line reported as
/// [`Input::TooLong`]), so a runaway manager cannot exhaust memory.
pub const MAX_LINE: usize = 64 * 1024;

/// One unit of input, stamped with the time it was read (move time counts from there).
#[derive(Clone, Debug)]
pub enum Input {
    /// A line without its line ending (a trailing CR is removed), lossily decoded as UTF-8.
    Line {
        /// The text.
        text: String,
        /// When its end was read.
        at: Instant,
    },
    /// A line longer than [`MAX_LINE`] bytes (its content is dropped).
    TooLong {
        /// When its end was read.
        at: Instant,
    },
    /// End of input.
    Eof,
}

/// Reads `r` on a new thread and sends its lines. Never panics on any byte sequence.
pub fn spawn_line_reader<R: Read + Send + 'static>(mut r: R) -> Receiver<Input> {
    let (tx, rx) = unbounded();
    let spawned = std::thread::Builder::new()
        .name("pcn-input".into())
        .spawn(move || {
            let mut buf = vec![0u8; 16 * 1024];
            let mut line: Vec<u8> = Vec::new();
            let mut overflow = false;
            let send_line = |line: &mut Vec<u8>, overflow: &mut bool| {
                let at = Instant::now();
                let msg = if *overflow {
                    Input::TooLong { at }
                } else {
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    Input::Line {
                        text: String::from_utf8_lossy(line).into_owned(),
                        at,
                    }
                };
                line.clear();
                *overflow = false;
                tx.send(msg).is_ok()
            };
            loop {
                let n = match r.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                for &b in &buf[..n] {
                    if b == b'\n' {
                        if !send_line(&mut line, &mut overflow) {
                            return;
                        }
                    } else if line.len() < MAX_LINE {
                        line.push(b);
                    } else {
                        overflow = true;
                    }
                }
            }
            if !line.is_empty() || overflow {
                send_line(&mut line, &mut overflow);
            }
            let _ = tx.send(Input::Eof);
        });
    if spawned.is_err() {
        log::error!("cannot start the input thread");
    }
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &'static [u8]) -> Vec<String> {
        let rx = spawn_line_reader(data);
        let mut out = Vec::new();
        while let Ok(i) = rx.recv() {
            match i {
                Input::Line { text, .. } => out.push(text),
                Input::TooLong { .. } => out.push("<long>".into()),
                Input::Eof => break,
            }
        }
        out
    }

    #[test]
    fn splits_lf_and_crlf() {
        assert_eq!(lines(b"A\r\nB\n\nC"), vec!["A", "B", "", "C"]);
        assert_eq!(lines(b"\xff\xfeX\n"), vec!["\u{fffd}\u{fffd}X"]);
    }

    #[test]
    fn caps_long_lines() {
        let mut v = vec![b'x'; MAX_LINE + 10];
        v.extend_from_slice(b"\nABOUT\n");
        let rx = spawn_line_reader(std::io::Cursor::new(v));
        assert!(matches!(rx.recv(), Ok(Input::TooLong { .. })));
        assert!(matches!(rx.recv(), Ok(Input::Line { text, .. }) if text == "ABOUT"));
    }
}
