//! Random-playout speed of the Go rules: `cargo run --release --example go_playout [size] [ko] [seconds]`
//! (defaults 9, simple, 3). Playouts never fill an own true eye, so they terminate; every
//! game is undone move by move, so undo is part of the measured cost.

use pcn::game::go::{playout_speed, KoRule};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let ko = args
        .get(2)
        .and_then(|s| KoRule::from_name(s))
        .unwrap_or(KoRule::Simple);
    let secs = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let (moves, t) = playout_speed(size, ko, secs, 1);
    println!(
        "go {size}x{size} ko={} : {moves} moves in {t:.2} s = {:.2} M moves/s (play + undo, one core)",
        ko.name(),
        moves as f64 / t / 1e6
    );
}
