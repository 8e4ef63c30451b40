//! `pcn verify FILE...`: checks proof files written by `pcn solve --proof-dir` (see
//! [`crate::proof`]) under the full game rules, independently of the solvers.
//!
//! Prints one line per sound file on stdout; stops at the first file that is not a sound
//! proof, printing the faulty path and the reason on stderr. Exit codes: 0 every file is a
//! sound proof, 1 a proof is unsound, 2 usage error, 3 a file cannot be read or is not a
//! proof file (bad SGF, no header, the problem position does not replay).

use std::path::PathBuf;

use clap::Args;

use crate::proof::verify::{summary, verify_file};
use crate::proof::ProofError;

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
}

/// Runs `pcn verify`; returns the exit code.
pub fn run(args: VerifyArgs) -> i32 {
    for f in &args.files {
        match verify_file(f) {
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
    0
}
