//! The `pcn` binary: see `pcn --help`.
fn main() {
    std::process::exit(pcn::cli::main());
}
