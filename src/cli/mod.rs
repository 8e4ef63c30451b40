//! Command-line interface of the `pcn` binary.

/// Runs the binary and returns its exit code.
pub fn main() -> i32 {
    0
}
