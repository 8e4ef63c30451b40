//! Game logs: finished self-play games as JSON lines, one game a line, with the mover's
//! root score before each move (`pcn selfplay --mover player --eval-games FILE`; the data
//! of the learned evaluation, issue 61, docs/training.md).
//!
//! A line (the fields in this order):
//!
//! ```text
//! {"size":[15,15],"rule":"freestyle","seed":1,"index":0,"nodes":20000,
//!  "moves":[[7,7],[8,6],...],"scores":[null,null,35,...],"result":"black",
//!  "classic":[null,null,-120,...]}
//! ```
//!
//! `moves` are `[x, y]` (column, row) from the empty board, Black first; `scores[i]` is the
//! root score before `moves[i]` from the view of the side to move at ply `i` (thousandths of
//! a logit; `|s| >= 990000` is a proven win or loss), `null` where no search chose the move:
//! the random opening, a single legal move, and the block of the opponent's four, which the
//! player plays without a search. `result` is `black`, `white` or `draw` (also a full board or
//! a game cut at the ply cap). `classic[i]` is the pattern evaluation's static value of the
//! position before `moves[i]` (side to move's view, thousandths of a logit, as the player's
//! leaves use it), `null` where no score was kept or the position is not one the player
//! evaluates statically (a threat must be answered or wins); a residual eval net learns its
//! correction to it. Older logs have no `classic` field. Games played with
//! `--player-mistakes P` carry `"mistakes":P` after `nodes` (absent when 0): their unscored
//! moves include the random ones.
//!
//! Resuming: a game is a function of the seed and its index, each line is appended in one
//! write, and [`GameLog::open`] reads the indices already in the file (they may come in any
//! order when games run in parallel) and cuts off a torn last line (one without its newline),
//! so a killed run loses only the games it was playing. One run at a time per file.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::record::RecordError;
use super::PlayedGame;
use crate::game::gomoku::{Gomoku, Rule};
use crate::game::Color;
use crate::game::Game;
use crate::search::gomoku::alphabeta::classic_value;

/// One game of a game log (one JSON line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameLine {
    /// Board `[width, height]`.
    pub size: [usize; 2],
    /// The rule's name (`Rule::name`: `freestyle`, `exact`, `renju`, `caro`, `caro-exact`, `4t`).
    pub rule: String,
    /// The run's base seed (the global `--seed`).
    pub seed: u64,
    /// The game's index (with `seed`, it determines the game).
    pub index: u32,
    /// The player's nodes per move.
    pub nodes: u64,
    /// The chance of a random move in place of the player's (`--player-mistakes`; absent
    /// when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mistakes: f64,
    /// The moves, `[x, y]`, Black first.
    pub moves: Vec<[usize; 2]>,
    /// The root score before each move (side to move's view), `None` where none was searched.
    pub scores: Vec<Option<i32>>,
    /// `black`, `white` or `draw`.
    pub result: String,
    /// The pattern evaluation's static value before each scored move (see the module
    /// documentation); empty in logs written before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classic: Vec<Option<i32>>,
    /// A leaf line (`pcn leaf-labels`): `moves` lead to a position the player's search
    /// scored statically, plus the move a deeper search chose there; only that last position
    /// has a score (the deeper search's) and a `classic` value, and `result` is that of the
    /// game the search started from, not a label. Absent on game lines.
    #[serde(default, skip_serializing_if = "is_false")]
    pub leaf: bool,
}

fn is_false(x: &bool) -> bool {
    !*x
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// What every line of a log shares: the setting its games were played with.
#[derive(Clone, Debug, PartialEq)]
pub struct LogSetting {
    /// Board `[width, height]`.
    pub size: [usize; 2],
    /// The rule's name.
    pub rule: String,
    /// Base seed.
    pub seed: u64,
    /// Nodes per move.
    pub nodes: u64,
    /// The chance of a random move in place of the player's.
    pub mistakes: f64,
}

impl LogSetting {
    /// The setting of a line.
    pub fn of(l: &GameLine) -> LogSetting {
        LogSetting {
            size: l.size,
            rule: l.rule.clone(),
            seed: l.seed,
            nodes: l.nodes,
            mistakes: l.mistakes,
        }
    }
}

impl std::fmt::Display for LogSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{} {} seed {} nodes {} mistakes {}",
            self.size[0], self.size[1], self.rule, self.seed, self.nodes, self.mistakes
        )
    }
}

/// The result word of a winner.
pub fn result_name(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::Black) => "black",
        Some(Color::White) => "white",
        None => "draw",
    }
}

/// Every complete line of the game log at `path` (a torn last line, one without its
/// newline, is left out); a complete line that is not a game is an error.
pub fn read_lines(path: &Path) -> Result<Vec<GameLine>, RecordError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| RecordError::Io {
        path: shown.clone(),
        source,
    })?;
    Ok(parse_lines(&bytes, &shown)?
        .0
        .into_iter()
        .map(|(_, g)| g)
        .collect())
}

/// The complete lines of a log's bytes, each with its line number (from 1), and the length
/// of the complete part (a torn last line has no newline); a complete line that is not a
/// game is an error naming `shown`.
fn parse_lines(bytes: &[u8], shown: &str) -> Result<(Vec<(usize, GameLine)>, usize), RecordError> {
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for (n, line) in bytes[..keep].split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let g = serde_json::from_slice(line).map_err(|e| RecordError::Bad {
            path: shown.to_string(),
            reason: format!("line {} is not a game: {e}", n + 1),
        })?;
        out.push((n + 1, g));
    }
    Ok((out, keep))
}

/// An open game log: appends whole lines; safe to share between threads.
pub struct GameLog {
    file: Mutex<File>,
    path: String,
    setting: LogSetting,
    done: BTreeSet<u32>,
}

impl GameLog {
    /// Opens (or creates) the log at `path` for games of `setting`: reads the indices of the
    /// complete lines already there and cuts off a torn last line. A complete line that is not
    /// a game, or a game of another setting, is an error (the file is left as it was).
    pub fn open(path: &Path, setting: &LogSetting) -> Result<GameLog, RecordError> {
        let shown = path.display().to_string();
        let io = |source| RecordError::Io {
            path: shown.clone(),
            source,
        };
        let bad = |reason: String| RecordError::Bad {
            path: shown.clone(),
            reason,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(e)),
        };
        let (lines, keep) = parse_lines(&bytes, &shown)?;
        let mut done = BTreeSet::new();
        for (n, g) in &lines {
            let s = LogSetting::of(g);
            if &s != setting {
                return Err(bad(format!(
                    "holds games of another setting ({s}, line {n}) than asked for ({setting})"
                )));
            }
            done.insert(g.index);
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        if keep != bytes.len() {
            file.set_len(keep as u64).map_err(io)?;
        }
        Ok(GameLog {
            file: Mutex::new(file),
            path: shown,
            setting: setting.clone(),
            done,
        })
    }

    /// Whether the file held game `index` when it was opened.
    pub fn contains(&self, index: u32) -> bool {
        self.done.contains(&index)
    }

    /// The indices the file held when it was opened.
    pub fn done(&self) -> &BTreeSet<u32> {
        &self.done
    }

    /// The line of a finished game (moves as `[x, y]` on this log's board).
    pub fn line(&self, g: &PlayedGame) -> GameLine {
        let w = self.setting.size[0];
        GameLine {
            size: self.setting.size,
            rule: self.setting.rule.clone(),
            seed: self.setting.seed,
            index: g.index,
            nodes: self.setting.nodes,
            mistakes: self.setting.mistakes,
            moves: g
                .moves
                .iter()
                .map(|&m| [m as usize % w, m as usize / w])
                .collect(),
            scores: g.scores.clone(),
            result: result_name(g.winner).into(),
            classic: self.classic(g),
            leaf: false,
        }
    }

    /// The pattern evaluation's value of each scored position of `g` (`None` elsewhere, and
    /// all `None` where the log's rule or board is not one the player knows).
    fn classic(&self, g: &PlayedGame) -> Vec<Option<i32>> {
        let [w, h] = self.setting.size;
        let mut out = vec![None; g.moves.len()];
        let Some(mut b) =
            Rule::from_name(&self.setting.rule).and_then(|r| Gomoku::new(w, h, r).ok())
        else {
            return out;
        };
        for (i, &m) in g.moves.iter().enumerate() {
            if g.scores.get(i).copied().flatten().is_some() {
                out[i] = classic_value(&b);
            }
            if b.play(m).is_err() {
                break;
            }
        }
        out
    }

    /// Appends `g`'s line in one write.
    pub fn write(&self, g: &PlayedGame) -> Result<(), RecordError> {
        self.write_line(&self.line(g))
    }

    /// Appends lines in one write (a leaf log's lines of one root game: all or none).
    pub fn write_lines(&self, lines: &[GameLine]) -> Result<(), RecordError> {
        let mut text = String::new();
        for l in lines {
            text.push_str(&serde_json::to_string(l).map_err(|e| RecordError::Bad {
                path: self.path.clone(),
                reason: e.to_string(),
            })?);
            text.push('\n');
        }
        self.append(&text)
    }

    /// Appends one line in one write.
    pub fn write_line(&self, line: &GameLine) -> Result<(), RecordError> {
        self.write_lines(std::slice::from_ref(line))
    }

    fn append(&self, text: &str) -> Result<(), RecordError> {
        let mut f = self.file.lock().map_err(|_| RecordError::Bad {
            path: self.path.clone(),
            reason: "log writer poisoned".into(),
        })?;
        f.write_all(text.as_bytes())
            .map_err(|source| RecordError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::gomoku::alphabeta::{eval_features, static_eval, tuned_eval};

    fn setting() -> LogSetting {
        LogSetting {
            size: [15, 15],
            rule: "freestyle".into(),
            seed: 3,
            nodes: 100,
            mistakes: 0.0,
        }
    }

    fn game(index: u32) -> PlayedGame {
        PlayedGame {
            index,
            records: Vec::new(),
            moves: vec![112, 113, 7 * 15 + 14],
            winner: Some(Color::White),
            scores: vec![None, Some(-12), Some(WIN_LIKE)],
        }
    }

    const WIN_LIKE: i32 = 999_997;

    /// The line's fields and order are the spec's; indices come back in any order, a torn
    /// last line is cut off, and another setting's file is refused untouched.
    #[test]
    fn lines_resume_and_refuse_other_settings() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/g.jsonl");
        let log = GameLog::open(&p, &setting()).unwrap();
        assert!(log.done().is_empty());
        log.write(&game(2)).unwrap();
        log.write(&game(0)).unwrap();
        drop(log);
        let text = std::fs::read_to_string(&p).unwrap();
        // The pattern evaluation of the two scored positions (after one and two stones; both
        // quiet), computed here from the board, not from the log.
        let mut b = Gomoku::new(15, 15, Rule::Freestyle).unwrap();
        let mut classic = Vec::new();
        for m in [112, 113] {
            b.play(m).unwrap();
            classic.push(static_eval(tuned_eval(&eval_features(&b).unwrap()), 0));
        }
        assert_eq!(
            text.lines().next().unwrap(),
            r#"{"size":[15,15],"rule":"freestyle","seed":3,"index":2,"nodes":100,"moves":[[7,7],[8,7],[14,7]],"scores":[null,-12,999997],"result":"white","classic":[null,C1,C2]}"#
                .replace("C1", &classic[0].to_string())
                .replace("C2", &classic[1].to_string())
        );
        // A torn line (no newline) is dropped on open; the complete ones stay.
        let mut torn = text.clone().into_bytes();
        torn.extend_from_slice(br#"{"size":[15,15],"rule":"free"#);
        std::fs::write(&p, &torn).unwrap();
        let log = GameLog::open(&p, &setting()).unwrap();
        assert_eq!(log.done().iter().copied().collect::<Vec<_>>(), vec![0, 2]);
        assert!(log.contains(2) && !log.contains(1));
        log.write(&game(1)).unwrap();
        drop(log);
        let after = std::fs::read_to_string(&p).unwrap();
        assert!(after.starts_with(&text));
        assert_eq!(after.lines().count(), 3);
        for l in after.lines() {
            let g: GameLine = serde_json::from_str(l).unwrap();
            assert_eq!(g.moves.len(), g.scores.len());
            assert_eq!(g.classic.len(), g.moves.len());
        }
        let other = LogSetting {
            seed: 4,
            ..setting()
        };
        let e = GameLog::open(&p, &other).err().unwrap().to_string();
        assert!(e.contains("another setting"), "{e}");
        // A complete line that is no game is an error, not silently dropped.
        std::fs::write(&p, "{\"size\":1}\n").unwrap();
        let e = GameLog::open(&p, &setting()).err().unwrap().to_string();
        assert!(e.contains("line 1 is not a game"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"size\":1}\n");
    }
}
