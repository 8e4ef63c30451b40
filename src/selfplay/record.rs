//! The self-play record file (`pcn-selfplay-v1`, documented in docs/training.md).
//!
//! A file is an 8-byte magic `PCNSP01\n`, a little-endian `u32` header length `H`, `H`
//! bytes of JSON ([`Header`]), then fixed-size records (`Header::record_bytes` each), one
//! per position, a game's records written together in ply order. The position is stored as
//! the network's input planes (0/1, bit-packed), so readers need no game rules.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file magic.
pub const MAGIC: &[u8; 8] = b"PCNSP01\n";
/// The header's `format` value.
pub const FORMAT: &str = "pcn-selfplay-v1";

/// Record flag: the policy target comes from a full search (playout cap randomisation: the
/// fast searches' visit counts are no target).
pub const FLAG_FULL_SEARCH: u8 = 1;
/// Record flag: the last record of its game.
pub const FLAG_LAST: u8 = 2;
/// Record flag: the game ended without a winner (ply cap or draw).
pub const FLAG_NO_WINNER: u8 = 4;
/// Record flag: no proof-cost target (records made from proofs, `pcn verify --records`);
/// the trainer leaves the PCN heads' losses out for them.
pub const FLAG_NO_COST: u8 = 8;

/// Bytes of a record before the planes: game u32, ply u16, to_move u8, flags u8, six f32.
pub const FIXED_BYTES: usize = 32;

/// Largest record a file may declare (a 32x32 board with 64 planes and 1025 actions is
/// about 12 KB): the reader decodes the planes to one `f32` per bit, so this bounds its
/// memory per record.
pub const MAX_RECORD_BYTES: usize = 1 << 20;

/// The file header (JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// [`FORMAT`].
    pub format: String,
    /// `killallgo` or `gomoku`.
    pub game: String,
    /// The game's rule name (`Game::name`), e.g. `killallgo-9x9`, `gomoku-4t`.
    pub rule: String,
    /// Board side N.
    pub board_size: usize,
    /// Input planes P.
    pub planes: usize,
    /// Actions A.
    pub actions: usize,
    /// Bins per PCN head (the label's top bin is `bins - 1`).
    pub bins: usize,
    /// The self-play search's OR player (`B` or `W`).
    pub proof_color: String,
    /// Bytes per record: 32 + ceil(P·N²/8) + 4·A.
    pub record_bytes: usize,
}

impl Header {
    /// The record size for these shapes.
    pub fn record_size(planes: usize, board_size: usize, actions: usize) -> usize {
        FIXED_BYTES + (planes * board_size * board_size).div_ceil(8) + 4 * actions
    }

    /// [`Header::record_size`] for shapes read from a file: `None` when they overflow or
    /// exceed [`MAX_RECORD_BYTES`] (a header with wrapping shapes could otherwise claim a
    /// size its records do not have).
    pub fn checked_record_size(planes: usize, board_size: usize, actions: usize) -> Option<usize> {
        let bits = planes.checked_mul(board_size)?.checked_mul(board_size)?;
        let size = FIXED_BYTES
            .checked_add(bits.div_ceil(8))?
            .checked_add(actions.checked_mul(4)?)?;
        (size <= MAX_RECORD_BYTES).then_some(size)
    }

    fn input_len(&self) -> usize {
        self.planes * self.board_size * self.board_size
    }
}

/// One position and its targets.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Game index (games are seeded by index; resuming skips finished indices).
    pub game: u32,
    /// Plies played before this position.
    pub ply: u16,
    /// Side to move: 0 Black, 1 White.
    pub to_move: u8,
    /// [`FLAG_FULL_SEARCH`] | [`FLAG_LAST`] | [`FLAG_NO_WINNER`] | [`FLAG_NO_COST`].
    pub flags: u8,
    /// AlphaZero value target for the side to move (+1 win, -1 loss, 0 no winner).
    pub z: f32,
    /// Proof-cost targets (log10) with b_max: Black, White.
    pub cost_max: [f32; 2],
    /// Proof-cost targets with b_heur (legal moves): Black, White.
    pub cost_heur: [f32; 2],
    /// The search's mean proof cost at the root (for the proof colour; a diagnostic).
    pub root_cost: f32,
    /// The network input, `P·N²` values of 0 or 1.
    pub planes: Vec<f32>,
    /// Visit distribution of the search (sums to 1; all zero when the position had one move).
    pub policy: Vec<f32>,
}

/// Errors of record files.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a record file (or game log) of the expected kind, or holds another
    /// run's data: nothing was changed.
    #[error("{path}: {reason}")]
    Bad {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> RecordError + '_ {
    move |source| RecordError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Encodes one record (`h` gives the shapes) onto `out`.
pub fn encode(h: &Header, r: &Record, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&r.game.to_le_bytes());
    out.extend_from_slice(&r.ply.to_le_bytes());
    out.push(r.to_move);
    out.push(r.flags);
    for v in [
        r.z,
        r.cost_max[0],
        r.cost_max[1],
        r.cost_heur[0],
        r.cost_heur[1],
        r.root_cost,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let n = h.input_len();
    let mut bits = vec![0u8; n.div_ceil(8)];
    for (i, &v) in r.planes.iter().take(n).enumerate() {
        if v > 0.5 {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    out.extend_from_slice(&bits);
    for a in 0..h.actions {
        out.extend_from_slice(&r.policy.get(a).copied().unwrap_or(0.0).to_le_bytes());
    }
    debug_assert_eq!(out.len() - start, h.record_bytes);
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    f32::from_le_bytes(x)
}

/// Decodes one record of `h.record_bytes` bytes.
pub fn decode(h: &Header, b: &[u8]) -> Option<Record> {
    if b.len() != h.record_bytes {
        return None;
    }
    let game = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let ply = u16::from_le_bytes([b[4], b[5]]);
    let f = |k: usize| f32_at(b, 8 + 4 * k);
    let n = h.input_len();
    let bits = &b[FIXED_BYTES..FIXED_BYTES + n.div_ceil(8)];
    let planes = (0..n)
        .map(|i| f32::from((bits[i / 8] >> (i % 8)) & 1))
        .collect();
    let p0 = FIXED_BYTES + n.div_ceil(8);
    let policy = (0..h.actions).map(|a| f32_at(b, p0 + 4 * a)).collect();
    Some(Record {
        game,
        ply,
        to_move: b[6],
        flags: b[7],
        z: f(0),
        cost_max: [f(1), f(2)],
        cost_heur: [f(3), f(4)],
        root_cost: f(5),
        planes,
        policy,
    })
}

/// Reads a file's header; returns it and the offset of the first record.
pub fn read_header(path: &Path) -> Result<(Header, u64), RecordError> {
    let mut f = File::open(path).map_err(io_err(path))?;
    let bad = |reason: &str| RecordError::Bad {
        path: path.display().to_string(),
        reason: reason.to_string(),
    };
    let mut magic = [0u8; 12];
    f.read_exact(&mut magic)
        .map_err(|_| bad("too short for a record file"))?;
    if &magic[..8] != MAGIC {
        return Err(bad("not a pcn self-play record file (bad magic)"));
    }
    let len = u32::from_le_bytes([magic[8], magic[9], magic[10], magic[11]]) as usize;
    if len > 1 << 20 {
        return Err(bad("header too long"));
    }
    let mut js = vec![0u8; len];
    f.read_exact(&mut js).map_err(|_| bad("truncated header"))?;
    let h: Header =
        serde_json::from_slice(&js).map_err(|e| bad(&format!("bad header JSON: {e}")))?;
    if h.format != FORMAT {
        return Err(bad(&format!("format {:?}, expected {FORMAT:?}", h.format)));
    }
    match Header::checked_record_size(h.planes, h.board_size, h.actions) {
        Some(n) if n == h.record_bytes => {}
        Some(_) => return Err(bad("record_bytes does not match the shapes")),
        None => return Err(bad("shapes too large")),
    }
    Ok((h, 12 + len as u64))
}

/// Reads every complete record of a file.
pub fn read_all(path: &Path) -> Result<(Header, Vec<Record>), RecordError> {
    let (h, off) = read_header(path)?;
    let mut f = File::open(path).map_err(io_err(path))?;
    f.seek(SeekFrom::Start(off)).map_err(io_err(path))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(io_err(path))?;
    let recs = bytes
        .chunks_exact(h.record_bytes)
        .filter_map(|c| decode(&h, c))
        .collect();
    Ok((h, recs))
}

/// An open record file for appending whole games.
pub struct RecordWriter {
    file: File,
    header: Header,
    path: String,
}

impl RecordWriter {
    /// Opens `path` for appending records shaped like `header`. A new file gets the header;
    /// an existing one must have the same header, and is cut back to its last complete
    /// game (an interrupted write leaves a partial game behind). Returns the writer and the
    /// indices of the games already in the file.
    pub fn open(path: &Path, header: &Header) -> Result<(Self, BTreeSet<u32>), RecordError> {
        let mut done = BTreeSet::new();
        let exists = path.metadata().map(|m| m.len() > 0).unwrap_or(false);
        if exists {
            let (h, off) = read_header(path)?;
            if &h != header {
                return Err(RecordError::Bad {
                    path: path.display().to_string(),
                    reason: format!(
                        "holds other games ({} {} bins {} proof {}) than asked for ({} {} bins {} proof {})",
                        h.rule, h.board_size, h.bins, h.proof_color,
                        header.rule, header.board_size, header.bins, header.proof_color
                    ),
                });
            }
            let mut f = File::open(path).map_err(io_err(path))?;
            f.seek(SeekFrom::Start(off)).map_err(io_err(path))?;
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).map_err(io_err(path))?;
            let mut keep = 0usize;
            for (i, c) in bytes.chunks_exact(h.record_bytes).enumerate() {
                if c[7] & FLAG_LAST != 0 {
                    done.insert(u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                    keep = (i + 1) * h.record_bytes;
                }
            }
            if keep != bytes.len() {
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(io_err(path))?;
                f.set_len(off + keep as u64).map_err(io_err(path))?;
            }
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(io_err(path))?;
            }
            let mut f = File::create(path).map_err(io_err(path))?;
            let js = serde_json::to_vec(header).map_err(|e| RecordError::Bad {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
            let mut head = MAGIC.to_vec();
            head.extend_from_slice(&(js.len() as u32).to_le_bytes());
            head.extend_from_slice(&js);
            f.write_all(&head).map_err(io_err(path))?;
        }
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        Ok((
            RecordWriter {
                file,
                header: header.clone(),
                path: path.display().to_string(),
            },
            done,
        ))
    }

    /// Appends one game already encoded with [`encode`] under this file's header (whole
    /// records; the last must carry [`FLAG_LAST`]) in one write.
    pub fn write_encoded_game(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        if !bytes.len().is_multiple_of(self.header.record_bytes) {
            return Err(RecordError::Bad {
                path: self.path.clone(),
                reason: format!(
                    "{} bytes are not whole records of {} bytes",
                    bytes.len(),
                    self.header.record_bytes
                ),
            });
        }
        self.file
            .write_all(bytes)
            .and_then(|_| self.file.flush())
            .map_err(|source| RecordError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// The header of the file.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Appends one game's records in one write (the last must carry [`FLAG_LAST`]).
    pub fn write_game(&mut self, recs: &[Record]) -> Result<(), RecordError> {
        let mut buf = Vec::with_capacity(recs.len() * self.header.record_bytes);
        for r in recs {
            encode(&self.header, r, &mut buf);
        }
        self.write_encoded_game(&buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            format: FORMAT.into(),
            game: "killallgo".into(),
            rule: "killallgo-9x9".into(),
            board_size: 3,
            planes: 2,
            actions: 10,
            bins: 20,
            proof_color: "W".into(),
            record_bytes: Header::record_size(2, 3, 10),
        }
    }

    fn rec(game: u32, ply: u16, last: bool) -> Record {
        Record {
            game,
            ply,
            to_move: (ply % 2) as u8,
            flags: FLAG_FULL_SEARCH | if last { FLAG_LAST } else { 0 },
            z: -1.0,
            cost_max: [19.0, 2.5],
            cost_heur: [19.0, 1.25],
            root_cost: 3.0,
            planes: (0..18).map(|i| f32::from(u8::from(i % 3 == 0))).collect(),
            policy: (0..10).map(|i| i as f32 / 45.0).collect(),
        }
    }

    #[test]
    fn round_trip_and_resume() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.rec");
        let h = header();
        assert_eq!(h.record_bytes, 32 + 3 + 40);
        let (mut w, done) = RecordWriter::open(&p, &h).unwrap();
        assert!(done.is_empty());
        w.write_game(&[rec(0, 0, false), rec(0, 1, true)]).unwrap();
        w.write_game(&[rec(3, 0, true)]).unwrap();
        drop(w);
        let (h2, recs) = read_all(&p).unwrap();
        assert_eq!(h2, h);
        assert_eq!(
            recs,
            vec![rec(0, 0, false), rec(0, 1, true), rec(3, 0, true)]
        );
        // A half-written game at the end is dropped on reopening.
        let mut buf = Vec::new();
        encode(&h, &rec(5, 0, false), &mut buf);
        buf.truncate(buf.len() - 3);
        OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(&buf)
            .unwrap();
        let (_, done) = RecordWriter::open(&p, &h).unwrap();
        assert_eq!(done.into_iter().collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(read_all(&p).unwrap().1.len(), 3);
        // Another game's file is refused.
        let mut other = h.clone();
        other.bins = 30;
        assert!(RecordWriter::open(&p, &other).is_err());
        std::fs::write(&p, b"garbage").unwrap();
        assert!(read_header(&p).is_err());
    }

    /// Shapes whose size overflows (or is absurd) are refused by the reader instead of
    /// wrapping to a small size that the records do not have (found while fuzzing the
    /// reader; the input is fuzz/regressions/record/wrapping_shapes_accepted).
    #[test]
    fn overflowing_shapes_are_refused() {
        assert_eq!(
            Header::checked_record_size(18, 9, 82),
            Some(Header::record_size(18, 9, 82))
        );
        assert_eq!(Header::checked_record_size(1 << 32, 1 << 16, 1), None);
        assert_eq!(Header::checked_record_size(1, 1, usize::MAX / 2), None);
        assert_eq!(Header::checked_record_size(64, 1 << 10, 1), None);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("wrap.bin");
        let js = br#"{"format":"pcn-selfplay-v1","game":"killallgo","rule":"killallgo-9x9","board_size":65536,"planes":4294967296,"actions":1,"bins":500,"proof_color":"W","record_bytes":36}"#;
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&(js.len() as u32).to_le_bytes());
        b.extend_from_slice(js);
        b.extend_from_slice(&[0u8; 72]);
        std::fs::write(&p, &b).unwrap();
        match read_header(&p) {
            Err(RecordError::Bad { reason, .. }) => assert_eq!(reason, "shapes too large"),
            other => panic!("accepted: {other:?}"),
        }
    }
}
