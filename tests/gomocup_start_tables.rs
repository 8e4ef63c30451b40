//! Regression (soak of 2026-12-01): c-gomoku-cli sends `INFO rule` after START's `OK` and
//! the first BEGIN/BOARD right behind it, so a pattern table built on `INFO rule` was paid
//! for by the first move's clock (110-350 ms first moves at 100 ms a move under exact five
//! and renju). START now builds every rule's tables. This test has its own process (its
//! own file), so no other test has built a table before it looks.

use std::time::Instant;

use pcn::game::gomoku::pattern::table_built;
use pcn::game::gomoku::Rule;
use pcn::protocol::gomocup::{run, Options};
use pcn::protocol::Input;

#[test]
fn start_builds_every_rules_tables() {
    assert!(
        !table_built(Rule::Renju.five_rule()),
        "the renju table exists before any START: this test cannot see the fix"
    );
    let (tx, rx) = crossbeam::channel::unbounded();
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
    for rule in Rule::ALL {
        assert!(table_built(rule.five_rule()), "{rule:?}: table not built at START");
    }
}
