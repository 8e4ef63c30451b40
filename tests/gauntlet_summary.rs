//! `scripts/gauntlet.sh --summarize DIR` against a hand-written c-gomoku-cli log: the
//! per-game counts and the per-opening-pair (pentanomial) statistics it prints are checked
//! against values computed here from the same games.

use std::path::PathBuf;
use std::process::Command;

/// Elo of a score in (0, 1), rounded as the script prints it (with a sign).
fn elo(s: f64) -> String {
    let e = -400.0 * (1.0 / s - 1.0).log10();
    if e.abs() < 0.5 {
        "0".to_string()
    } else {
        format!("{e:+.0}")
    }
}

#[test]
fn summary_counts_games_and_opening_pairs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("pcn-gauntlet-summary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Games 1-2: pcn wins both colours; 3-4: each side wins with one colour; 5-6: a draw
    // and a loss; 7: a game whose partner never finished (unpaired). Finished out of order,
    // as with several games at once. Results are from Black's side. Games 8 and 9 end with
    // an ERROR at START, which the manager records as a time forfeit of the side to move:
    // Rapfi's (game 8) is not scored, so game 7 stays unpaired; pcn's (game 9) is a loss
    // for pcn although the record gives Black, pcn, the win.
    let log = "\
# league freestyle15 (rule 0, 15x15), pcn 1s/move, rapfi 1s/move
[2] Finished game 2 (rapfi vs pcn): 0-1 {White win by five connection}
[1] Finished game 1 (pcn vs rapfi): 1-0 {Black win by five connection}
[1] Finished game 4 (rapfi vs pcn): 1-0 {Black win by five connection}
[2] Finished game 3 (pcn vs rapfi): 1-0 {Black win by five connection}
[1] Finished game 5 (pcn vs rapfi): 1/2-1/2 {Draw by adjudication}
[2] Finished game 6 (rapfi vs pcn): 1-0 {Black win by five connection}
[1] Finished game 7 (pcn vs rapfi): 0-1 {White win by five connection}
[2] engine rapfi output error: Unknown command: 20
[2] Finished game 8 (rapfi vs pcn): 1-0 {Black win by time forfeit}
[1] engine pcn output error: cannot start
[1] Finished game 9 (pcn vs rapfi): 1-0 {Black win by time forfeit}
";
    std::fs::write(dir.join("cli.log"), log).expect("write log");
    let out = Command::new("sh")
        .arg(root.join("scripts/gauntlet.sh"))
        .arg("--summarize")
        .arg(&dir)
        .output()
        .expect("run sh");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "summary failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Per game: W 3 (games 1, 2, 3), D 1 (5), L 4 (4, 6, 7, 9); game 8 not scored.
    assert!(text.contains("Games: 8 (pcn vs rapfi)"), "{text}");
    assert!(text.contains("W-D-L: 3-1-4"), "{text}");
    assert!(text.contains("Score: 43.8%"), "{text}");
    assert!(text.contains("Time losses: pcn 0, rapfi 0"), "{text}");
    assert!(
        text.contains("ERROR at START: sent by pcn 1, rapfi 1; those from pcn scored as its losses, 1 from the opponent not scored"),
        "{text}"
    );

    // Pairs: 2 points (1-2), 1 point (3-4), 0.5 points (5-6); games 7 and 9 unpaired.
    assert!(
        text.contains(
            "Pairs: 3 (pcn points per opening pair 0 / 0.5 / 1 / 1.5 / 2: 0 / 1 / 1 / 0 / 1; 2 games unpaired)"
        ),
        "{text}"
    );
    let means = [1.0, 0.5, 0.25];
    let m = means.iter().sum::<f64>() / 3.0;
    let var = means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 3.0;
    let se = (var / 3.0).sqrt();
    let want = format!(
        "Elo (pairs): {}, 95% interval [{}, {}]",
        elo(m),
        elo(m - 1.96 * se),
        elo(m + 1.96 * se)
    );
    assert!(text.contains(&want), "want {want:?} in:\n{text}");
}
