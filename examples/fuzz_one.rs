//! Runs one fuzz harness of [`pcn::fuzzing`] on files, without a fuzzer, and prints how long
//! each took: for triaging what `make fuzz` left in `fuzz/artifacts/TARGET` on a normal
//! (uninstrumented) build.
//!
//!     cargo run --release --example fuzz_one -- TARGET FILE...

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((target, files)) = args.split_first() else {
        eprintln!("usage: fuzz_one TARGET FILE...");
        std::process::exit(2);
    };
    let Some((_, harness)) = pcn::fuzzing::HARNESSES.iter().find(|(n, _)| n == target) else {
        eprintln!("unknown target {target}");
        std::process::exit(2);
    };
    for f in files {
        let data = match std::fs::read(f) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{f}: {e}");
                continue;
            }
        };
        let t0 = std::time::Instant::now();
        harness(&data);
        println!("{f}: {:.3} s", t0.elapsed().as_secs_f64());
    }
}
