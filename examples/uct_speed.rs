use pcn::game::killallgo::{KillallGo, Variant};
use pcn::game::Game;
use pcn::search::uct::{Uct, UctOptions};
use pcn::search::{Limits, Searcher};
use std::sync::atomic::AtomicBool;
fn main() {
    let mut g = KillallGo::after_opening(Variant::Pcn9);
    g.play(g.parse_gtp("H5").unwrap()).unwrap();
    let mut u = Uct::new(UctOptions::default());
    let stop = AtomicBool::new(false);
    let t = std::time::Instant::now();
    let r = u.search(&g, &Limits::nodes(300), &stop, &mut |_| {});
    println!("{:?} {:?}", r, t.elapsed());
}
