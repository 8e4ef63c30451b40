//! Command-line interface of the `pcn` binary.

pub mod arena_cmd;
pub mod bench;

/// Runs the binary and returns its exit code.
pub fn main() -> i32 {
    // Temporary dispatch (the lead wires the final subcommands).
    use clap::{Args, Command, FromArgMatches};
    let cmd = Command::new("pcn")
        .subcommand(bench::Args::augment_args(Command::new("bench")))
        .subcommand(arena_cmd::Args::augment_args(Command::new("match")));
    let m = match cmd.try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return 2;
        }
    };
    match m.subcommand() {
        Some(("bench", sm)) => match bench::Args::from_arg_matches(sm) {
            Ok(a) => bench::run(a),
            Err(e) => {
                let _ = e.print();
                2
            }
        },
        Some(("match", sm)) => match arena_cmd::Args::from_arg_matches(sm) {
            Ok(a) => arena_cmd::run(a),
            Err(e) => {
                let _ = e.print();
                2
            }
        },
        _ => 0,
    }
}
