//! `pcn verify FILE...`: checks proof files written by `pcn solve --proof-dir` (see
//! [`crate::proof`]) under the full game rules, independently of the solvers.
//!
//! Prints one line per sound file on stdout; stops at the first file that is not a sound
//! proof, printing the faulty path and the reason on stderr. Exit codes: 0 every file is a
//! sound proof, 1 a proof is unsound, 2 usage error, 3 a file cannot be read or is not a
//! proof file (bad SGF, no header, the problem position does not replay).
//!
//! `--records FILE` also writes every unfinished position of each sound proof as a training
//! record (docs/training.md, "Records from proofs"): the network learns the moves our own
//! solvers proved, next to the self-play searches' visit counts.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::game::Color;
use crate::proof::verify::{summary, verify_file, verify_file_visit, ProvenNode};
use crate::proof::ProofError;
use crate::selfplay::record::{
    encode, Header, Record, RecordWriter, FLAG_FULL_SEARCH, FLAG_LAST, FLAG_NO_COST, FORMAT,
};

/// Exit code: a proof is unsound.
pub const EXIT_UNSOUND: i32 = 1;
/// Exit code: a file is unreadable or not a proof file.
pub const EXIT_BAD_FILE: i32 = 3;

/// Options of `pcn verify`.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Proof files (SGF) to check.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print nothing for sound files.
    #[arg(short, long)]
    pub quiet: bool,
    /// Append every unfinished position of each sound proof to this record file
    /// (`pcn-selfplay-v1`) as a training record: the policy target is the proof's move
    /// where the prover is to move, and the share of the proof below each move where the
    /// opponent is; no proof-cost target (flag 8). Files that are not sound add nothing.
    #[arg(long, value_name = "FILE")]
    pub records: Option<PathBuf>,
    /// `--records`: only positions with at least this many proof positions below them
    /// (the shallow ends of a proof are what the solvers' own rules already find).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub records_min_size: u64,
    /// `--records`: bins of the file header (the network's PCN heads; records from proofs
    /// carry no cost target, but files train together only with the same shapes).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub records_bins: usize,
}

/// The training record of a proven position: one-hot on the prover's move (the smallest
/// subtree when the proof gives several), the subtree shares at the opponent's nodes.
/// The game index is left 0: [`Sink::write`] numbers the proof's records.
fn proof_record(n: &ProvenNode<'_>) -> Record {
    let mut policy = vec![0.0f32; n.num_actions];
    let prover_moves = n.to_move == n.prover;
    let total: u64 = n.sizes.iter().sum();
    if prover_moves {
        let best = n
            .moves
            .iter()
            .zip(n.sizes)
            .min_by_key(|(_, &s)| s)
            .map(|(&m, _)| m);
        if let Some(p) = best.and_then(|m| policy.get_mut(m as usize)) {
            *p = 1.0;
        }
    } else {
        for (&m, &s) in n.moves.iter().zip(n.sizes) {
            if let Some(p) = policy.get_mut(m as usize) {
                *p = s as f32 / total.max(1) as f32;
            }
        }
    }
    Record {
        game: 0,
        ply: n.ply.min(u16::MAX as usize) as u16,
        to_move: (n.to_move == Color::White) as u8,
        flags: FLAG_FULL_SEARCH | FLAG_NO_COST,
        z: if prover_moves { 1.0 } else { -1.0 },
        cost_max: [f32::NAN; 2],
        cost_heur: [f32::NAN; 2],
        root_cost: f32::NAN,
        planes: n.input.to_vec(),
        policy,
    }
}

/// The record-file header for the proofs' game (from a position of the first proof).
fn header_of(n: &ProvenNode<'_>, bins: usize) -> Header {
    Header {
        format: FORMAT.into(),
        game: n.rule.split('-').next().unwrap_or("").into(),
        rule: n.rule.to_string(),
        board_size: n.width,
        planes: n.planes,
        actions: n.num_actions,
        bins,
        proof_color: n.prover.letter().to_string(),
        record_bytes: Header::record_size(n.planes, n.width, n.num_actions),
    }
}

/// The open record file of `--records` and the next game index.
#[derive(Default)]
struct Sink {
    writer: Option<RecordWriter>,
    next_game: u32,
    written: u64,
}

impl Sink {
    /// Appends one proof's encoded records (`bytes`, made under `header`) as one "game":
    /// opens the file on first use; a proof of another game or prover than the file's is
    /// refused.
    fn write(&mut self, path: &Path, header: &Header, bytes: &mut [u8]) -> Result<(), String> {
        let size = header.record_bytes;
        if bytes.is_empty() || size == 0 {
            return Ok(());
        }
        if self.writer.is_none() {
            let (w, done) = RecordWriter::open(path, header).map_err(|e| e.to_string())?;
            self.next_game = done.last().map_or(0, |g| g + 1);
            self.writer = Some(w);
        }
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        if w.header() != header {
            return Err(format!(
                "{}: this proof ({}, prover {}) is not of the file's game ({}, prover {})",
                path.display(),
                header.rule,
                header.proof_color,
                w.header().rule,
                w.header().proof_color
            ));
        }
        let game = self.next_game.to_le_bytes();
        let n = bytes.len() / size;
        for (i, rec) in bytes.chunks_exact_mut(size).enumerate() {
            rec[..4].copy_from_slice(&game);
            if i + 1 == n {
                rec[7] |= FLAG_LAST;
            }
        }
        w.write_encoded_game(bytes).map_err(|e| e.to_string())?;
        self.next_game += 1;
        self.written += n as u64;
        Ok(())
    }
}

/// Runs `pcn verify`; returns the exit code.
pub fn run(args: VerifyArgs) -> i32 {
    let mut sink = Sink::default();
    for f in &args.files {
        let result = if let Some(path) = &args.records {
            // Records are encoded as they are visited (a few hundred bytes each: a large
            // proof's records take about as much memory as its parsed SGF does).
            let mut bytes: Vec<u8> = Vec::new();
            let mut header: Option<Header> = None;
            let r = verify_file_visit(f, &mut |n: &ProvenNode<'_>| {
                let h = header.get_or_insert_with(|| header_of(n, args.records_bins));
                if n.sizes.iter().sum::<u64>() + 1 >= args.records_min_size {
                    encode(h, &proof_record(n), &mut bytes);
                }
            });
            if let (Ok(_), Some(h)) = (&r, header) {
                if let Err(e) = sink.write(path, &h, &mut bytes) {
                    eprintln!("{}: records: {e}", f.display());
                    return EXIT_BAD_FILE;
                }
            }
            r
        } else {
            verify_file(f)
        };
        match result {
            Ok(r) => {
                if !args.quiet {
                    println!("{}: {}", f.display(), summary(&r));
                }
            }
            Err(e @ ProofError::Unsound { .. }) => {
                eprintln!("{}: UNSOUND: {e}", f.display());
                return EXIT_UNSOUND;
            }
            Err(e) => {
                eprintln!("{}: not a valid proof file: {e}", f.display());
                return EXIT_BAD_FILE;
            }
        }
    }
    if let Some(p) = &args.records {
        eprintln!("{} records appended to {}", sink.written, p.display());
    }
    0
}
