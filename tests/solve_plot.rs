//! The `solve_plot` example's logic (included as a module) on synthetic `pcn solve` output:
//! the Markdown summary and the SVG (one curve per run, legend, log-scale ticks).

#[path = "../examples/solve_plot.rs"]
#[allow(dead_code)]
mod solve_plot;

use solve_plot::{curve, parse_run, summary, svg, time_ticks, Run, T_MIN};

fn line(file: &str, result: &str, seconds: f64, nps: f64) -> String {
    format!(
        r#"{{"file":"{file}","result":"{result}","nodes":10,"seconds":{seconds},"nodes_per_second":{nps},"solver":"x"}}"#
    )
}

fn runs() -> Vec<Run> {
    let a = [
        line("1.sgf", "win", 0.5, 100.0),
        line("2.sgf", "unknown", 3.0, 200.0),
        line("3.sgf", "win", 0.002, 300.0),
        String::new(),
        line("4.sgf", "loss", 1.5, 400.0),
    ]
    .join("\n");
    let b = [
        line("1.sgf", "unknown", 3.0, 50.0),
        line("2.sgf", "error", 0.0, 0.0),
    ]
    .join("\n");
    vec![
        parse_run("fdfpn", "a", &a).unwrap(),
        parse_run("mcts", "b", &b).unwrap(),
    ]
}

#[test]
fn parses_and_summarises() {
    let r = runs();
    assert_eq!(r[0].problems, 4);
    assert_eq!(r[0].times, vec![0.002, 0.5, 1.5]);
    assert_eq!(r[1].problems, 2);
    assert!(r[1].times.is_empty());
    let s = summary(&r);
    assert!(s.contains("| fdfpn | 3/4 | 0.50 | 250 |"), "{s}");
    assert!(s.contains("| mcts | 0/2 | – |"), "{s}");
    assert!(parse_run("bad", "bad.jsonl", "{not json").is_err());
}

#[test]
fn curve_is_a_staircase_to_the_limit() {
    let r = runs();
    let c = curve(&r[0], 3.0);
    assert_eq!(c.first(), Some(&(T_MIN, 0.0)));
    assert_eq!(c.last(), Some(&(3.0, 3.0)));
    // Solved counts never decrease, times never go back, and nothing leaves the axes.
    for w in c.windows(2) {
        assert!(w[1].0 >= w[0].0 && w[1].1 >= w[0].1, "{c:?}");
    }
    assert!(c.iter().all(|&(t, _)| (T_MIN..=3.0).contains(&t)));
    assert_eq!(curve(&r[1], 3.0), vec![(T_MIN, 0.0), (3.0, 0.0)]);
    let ticks = time_ticks(60.0);
    assert_eq!(ticks.first(), Some(&T_MIN));
    assert_eq!(ticks.last(), Some(&60.0));
    assert!(ticks.windows(2).all(|w| w[0] < w[1]), "{ticks:?}");
}

#[test]
fn svg_has_one_curve_per_run() {
    let r = runs();
    let text = svg(&r, "Synthetic <title>", 3.0).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..80.min(text.len())]);
    assert!(text.trim_end().ends_with("</svg>"));
    // The curves are the only 2-pixel polylines (axis ticks are 1 pixel, legend swatches
    // rectangles), one per run, each in its own colour.
    let curves: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(r#"stroke-width="2""#))
        .collect();
    assert_eq!(curves.len(), r.len(), "{text}");
    assert!(curves[0].contains("#1F77B4") && curves[1].contains("#FF7F0E"));
    // Legend entries with the solved counts, axis descriptions, escaped title.
    for want in [
        "fdfpn (3)",
        "mcts (0)",
        "problems solved (of 4)",
        "time limit per problem (s, log scale)",
        "Synthetic &lt;title&gt;",
        "0.01",
    ] {
        assert!(text.contains(want), "missing {want}");
    }
    assert!(svg(&r, "t", 0.001).is_err());
}
