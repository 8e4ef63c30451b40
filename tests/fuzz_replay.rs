//! Replays every committed fuzz input, the seed corpora (`fuzz/corpus/NAME`) and every
//! input that once crashed, hung or blew the memory of a target (`fuzz/regressions/NAME`),
//! through the same harnesses the fuzz targets call ([`pcn::fuzzing::HARNESSES`]). No
//! fuzzer is needed: a harness panics on a finding, and this test names the file.
//!
//! Each input must also finish within [`LIMIT`] (the fuzzers run with a 1 s timeout; the
//! margin is for a loaded 2-core machine in a test run).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pcn::fuzzing::HARNESSES;

/// Longest one replayed input may take.
const LIMIT: Duration = Duration::from_secs(10);

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"));
    v.sort();
    v
}

fn replay(kind: &str, min_files: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut failures = Vec::new();
    let mut n = 0;
    for (name, harness) in HARNESSES {
        let mut count = 0;
        for f in files(&root.join(kind).join(name)) {
            let data = std::fs::read(&f).expect("read a corpus file");
            let t0 = Instant::now();
            let r = catch_unwind(AssertUnwindSafe(|| harness(&data)));
            let took = t0.elapsed();
            if r.is_err() {
                failures.push(format!("{}: panicked", f.display()));
            } else if took > LIMIT {
                failures.push(format!("{}: took {took:?}", f.display()));
            }
            count += 1;
        }
        assert!(
            count >= min_files,
            "fuzz/{kind}/{name}: {count} files, expected at least {min_files}"
        );
        n += count;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("fuzz/{kind}: {n} inputs replayed");
}

/// The seed corpora: at least two inputs per target, none fails.
#[test]
fn seed_corpora_replay_cleanly() {
    replay("corpus", 2);
}

/// Every input that once made a target fail (kept in `fuzz/regressions/TARGET`, named
/// after the bug) passes now.
#[test]
fn fuzz_regressions_stay_fixed() {
    replay("regressions", 0);
}

/// Sessions with refused commands (bad vertex, occupied point, unknown command, undo with
/// nothing to undo, off-board TURN, an overfull BOARD) pass every check of the harnesses:
/// one answer per command, refused commands leave the game as it was, protocol output.
#[test]
fn sessions_with_refused_commands_pass_the_checks() {
    // Refused commands (bad vertex, occupied point, unknown command) among good ones.
    pcn::fuzzing::gtp_session(
        b"protocol_version\nboardsize 7\nplay b z9\nplay b c3\nplay w c3\nfoo\nundo\nundo\n",
    );
    pcn::fuzzing::gomocup_session(
        b"START 15\nBEGIN\nTURN 99,99\nTURN 7,7\nBOARD\n1,1,1\n1,1,2\nDONE\nEND\n",
    );
}
