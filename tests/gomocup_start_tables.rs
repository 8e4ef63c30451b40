//! Regression (soak of 2026-12-01): c-gomoku-cli sends `INFO rule` after START's `OK` and
//! the first BEGIN/BOARD right behind it, so a pattern table built on `INFO rule` was paid
//! for by the first move's clock (110-350 ms first moves at 100 ms a move under exact five
//! and renju). The brain now builds every rule's tables in the background from its start
//! (not at START, whose deadline a loaded machine then missed once). This test has its own
//! process (its own file), so no other test has built a table before it looks.

use std::time::Instant;

use pcn::game::gomoku::pattern::table_built;
use pcn::game::gomoku::Rule;
use pcn::protocol::gomocup::{run, Options};
use pcn::protocol::Input;

#[test]
fn the_brain_builds_every_rules_tables_without_being_asked() {
    assert!(
        !table_built(Rule::Renju.five_rule()),
        "the renju table exists before any START: this test cannot see the fix"
    );
    let (tx, rx) = crossbeam::channel::unbounded();
    // Freestyle only: nothing asks for the other rules.
    for l in ["START 15", "END"] {
        tx.send(Input::Line {
            text: l.into(),
            at: Instant::now(),
        })
        .expect("send");
    }
    let mut out = Vec::new();
    let code = run(
        rx,
        Vec::new(),
        &mut out,
        Box::new(pcn::search::gomoku::greedy::Greedy),
        Options::default(),
    );
    assert_eq!(code, 0);
    assert_eq!(String::from_utf8_lossy(&out).trim(), "OK");
    let t0 = Instant::now();
    while !Rule::ALL.iter().all(|r| table_built(r.five_rule())) {
        assert!(
            t0.elapsed().as_secs() < 30,
            "tables not built: {:?}",
            Rule::ALL
                .iter()
                .filter(|r| !table_built(r.five_rule()))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
