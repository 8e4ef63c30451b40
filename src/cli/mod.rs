//! Command-line interface of the `pcn` binary.

pub mod solve;
pub mod verify;

/// Runs the binary and returns its exit code.
pub fn main() -> i32 {
    // Temporary dispatch for `solve` and `verify` (the lead wires the final subcommands).
    use clap::{Args, Command, FromArgMatches};
    let cmd = Command::new("pcn")
        .subcommand(solve::SolveArgs::augment_args(Command::new("solve")))
        .subcommand(verify::VerifyArgs::augment_args(Command::new("verify")));
    let m = match cmd.try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let parsed = match m.subcommand() {
        Some(("solve", sm)) => solve::SolveArgs::from_arg_matches(sm).map(solve::run),
        Some(("verify", sm)) => verify::VerifyArgs::from_arg_matches(sm).map(verify::run),
        _ => Ok(0),
    };
    parsed.unwrap_or_else(|e| {
        let _ = e.print();
        2
    })
}
