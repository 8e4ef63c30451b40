//! Random-playout speed of the Go rules: `cargo run --release --example go_playout [size] [ko] [seconds]`
//! (defaults 9, simple, 3), or `... --example go_playout killallgo [seconds]` for Killall-Go
//! random games with full legal-move generation. Playouts never fill an own true eye, so they terminate; every
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
    let secs = if args.get(1).map(String::as_str) == Some("killallgo") {
        args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3.0)
    } else {
        secs
    };
    if args.get(1).map(String::as_str) == Some("killallgo") {
        let (plies, t) = killall_speed(secs);
        println!(
            "killallgo 9x9: {plies} plies in {t:.2} s = {:.0} k plies/s (legal-move list, \
             play with Benson check, undo; one core)",
            plies as f64 / t / 1e3
        );
        return;
    }
    let (moves, t) = playout_speed(size, ko, secs, 1);
    println!(
        "go {size}x{size} ko={} : {moves} moves in {t:.2} s = {:.2} M moves/s (play + undo, one core)",
        ko.name(),
        moves as f64 / t / 1e6
    );
}

/// Killall-Go 9x9 random games from the position after the opening: full legal-move
/// generation, play (with the Benson check after every board move) and undo per ply.
fn killall_speed(seconds: f64) -> (u64, f64) {
    use pcn::game::killallgo::{KillallGo, Variant};
    use pcn::game::Game;
    let mut g = KillallGo::after_opening(Variant::Pcn9);
    let base = g.ply();
    let mut rng = pcn::util::Rng::new(1);
    let mut legal = Vec::new();
    let start = std::time::Instant::now();
    let mut plies = 0u64;
    loop {
        while g.outcome().is_none() && g.ply() < base + 300 {
            g.legal_moves(&mut legal);
            let m = legal[rng.below(legal.len())];
            g.play_unchecked(m);
            plies += 1;
        }
        while g.ply() > base {
            g.undo();
        }
        let t = start.elapsed().as_secs_f64();
        if t >= seconds {
            return (plies, t);
        }
    }
}
