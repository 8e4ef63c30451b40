//! Solve-time curves from `pcn solve` output: problems solved (win or loss) against the time
//! limit, one line per input file, as an SVG; and a Markdown summary table on stdout.
//!
//! ```sh
//! cargo run --release --example solve_plot -- --out docs/suite2_gomoku.svg \
//!     --title "Gomoku 4T, 3 s" --limit 3 g_dfpn.jsonl g_gpn.jsonl ...
//! ```
//!
//! Each input is the JSON-lines stdout of one `pcn solve` run; its line is labelled with the
//! file's stem minus anything up to the first `_` (`g_gpn.jsonl` → `gpn`). A point (t, n) of
//! a curve says: with a time limit of t seconds per problem, n problems would have been
//! solved (each problem's solve time is in its line, so one run at the longest limit gives
//! the whole curve). x is on a log scale from 0.01 s to `--limit`.
//!
//! The chart is drawn with the `plotters` crate (SVG backend only, a dev-dependency: the
//! engine binary does not carry it), which lays out the axes, log-scale ticks, legend and
//! labels that the first hand-written version had to place by hand.
//!
//! tests/solve_plot.rs includes this file as a module and checks [`svg`] and [`summary`] on
//! synthetic runs.

use std::path::Path;
use std::process::ExitCode;

use plotters::prelude::*;

/// Left end of the log-scale time axis, seconds (solve times below it are drawn at it).
pub const T_MIN: f64 = 0.01;

/// One run: label, solved times (sorted), nodes/s of every problem, problem count.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The legend label.
    pub label: String,
    /// Seconds of every solved problem (win or loss), ascending.
    pub times: Vec<f64>,
    /// Nodes per second of every problem.
    pub nps: Vec<f64>,
    /// Problems in the run (every JSON line).
    pub problems: usize,
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The label of a run file: its stem minus anything up to the first `_`.
pub fn label_of(path: &Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("run")
        .to_string();
    stem.split_once('_')
        .map_or(stem.clone(), |(_, b)| b.to_string())
}

/// Parses the JSON lines of one `pcn solve` run (`name` is for error messages).
pub fn parse_run(label: &str, name: &str, text: &str) -> Result<Run, String> {
    let mut run = Run {
        label: label.to_string(),
        times: Vec::new(),
        nps: Vec::new(),
        problems: 0,
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{name}:{}: {e}", i + 1))?;
        run.problems += 1;
        let result = v.get("result").and_then(|r| r.as_str()).unwrap_or("");
        if let Some(n) = v.get("nodes_per_second").and_then(|x| x.as_f64()) {
            run.nps.push(n);
        }
        if result == "win" || result == "loss" {
            let t = v.get("seconds").and_then(|x| x.as_f64()).unwrap_or(0.0);
            run.times.push(t);
        }
    }
    run.times.sort_by(|a, b| a.total_cmp(b));
    Ok(run)
}

fn read_run(path: &Path) -> Result<Run, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_run(&label_of(path), &path.display().to_string(), &text)
}

/// The Markdown summary: solved count, median seconds of the solved, median nodes/s.
pub fn summary(runs: &[Run]) -> String {
    let mut s = String::from(
        "| solver | solved | median s (solved) | median nodes/s |\n|---|---|---|---|\n",
    );
    for r in runs {
        let mut times = r.times.clone();
        let mut nps = r.nps.clone();
        let mt = median(&mut times).map_or("–".into(), |v| format!("{v:.2}"));
        let mn = median(&mut nps).map_or("–".into(), |v| format!("{v:.0}"));
        s.push_str(&format!(
            "| {} | {}/{} | {mt} | {mn} |\n",
            r.label,
            r.times.len(),
            r.problems
        ));
    }
    s
}

/// The step curve of a run: (time, problems solved within it), from `T_MIN` to `limit`.
pub fn curve(run: &Run, limit: f64) -> Vec<(f64, f64)> {
    let clamp = |s: f64| s.clamp(T_MIN, limit);
    let mut pts = vec![(T_MIN, 0.0)];
    for (k, &s) in run.times.iter().enumerate() {
        pts.push((clamp(s), k as f64));
        pts.push((clamp(s), k as f64 + 1.0));
    }
    pts.push((limit, run.times.len() as f64));
    pts
}

/// Colours of the runs, in order (the matplotlib "tab10" colours).
const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// A tick label: `0.01`, `0.5`, `2`, `60`.
fn seconds_label(s: &f64) -> String {
    if *s < 1.0 {
        format!("{}", (s * 1000.0).round() / 1000.0)
    } else {
        format!("{}", s.round())
    }
}

/// x ticks: 1, 2 and 5 times the powers of ten from [`T_MIN`] up to `limit`, and `limit`.
pub fn time_ticks(limit: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = T_MIN;
    while decade <= limit {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            // Leave out a tick that would crowd the limit's own label.
            if t <= limit / 1.3 {
                ticks.push(t);
            }
        }
        decade *= 10.0;
    }
    ticks.push(limit);
    ticks
}

/// The SVG: x = time limit per problem on a log scale from [`T_MIN`] to `limit`, y =
/// problems solved, one line per run with a legend (`label (solved)`).
pub fn svg(runs: &[Run], title: &str, limit: f64) -> Result<String, String> {
    if !(limit.is_finite() && limit > T_MIN) {
        return Err(format!("the limit must be above {T_MIN} s"));
    }
    let ymax = runs.iter().map(|r| r.problems).max().unwrap_or(1).max(1) as f64;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (760, 460)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 24))
            .margin(14)
            .x_label_area_size(52)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (T_MIN..limit)
                    .log_scale()
                    .with_key_points(time_ticks(limit)),
                0.0..ymax,
            )
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("time limit per problem (s, log scale)")
            .y_desc(format!("problems solved (of {ymax})"))
            .x_label_formatter(&seconds_label)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style(("sans-serif", 16))
            .axis_desc_style(("sans-serif", 17))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(e)?;
        for (i, run) in runs.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(curve(run, limit), c.stroke_width(2)))
                .map_err(e)?
                .label(format!("{} ({})", run.label, run.times.len()))
                // A filled swatch rather than a line, so the SVG's polylines are the curves.
                .legend(move |(x, y)| Rectangle::new([(x, y - 3), (x + 18, y + 3)], c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(("sans-serif", 16))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(out)
}

#[allow(dead_code)] // tests/solve_plot.rs includes this file as a module
fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut out, mut title, mut limit) = (None, String::from("solve-time curves"), 60.0f64);
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next(),
            "--title" => title = args.next().unwrap_or_default(),
            "--limit" => match args.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(v) if v.is_finite() && v > T_MIN => limit = v,
                _ => {
                    eprintln!("solve_plot: --limit needs a number of seconds above {T_MIN}");
                    return ExitCode::from(2);
                }
            },
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        eprintln!("usage: solve_plot [--out FILE.svg] [--title T] [--limit S] RUN.jsonl...");
        return ExitCode::from(2);
    }
    let mut runs = Vec::new();
    for f in &files {
        match read_run(Path::new(f)) {
            Ok(r) => runs.push(r),
            Err(e) => {
                eprintln!("solve_plot: {e}");
                return ExitCode::from(1);
            }
        }
    }
    print!("{}", summary(&runs));
    if let Some(path) = out {
        let written = svg(&runs, &title, limit)
            .and_then(|text| std::fs::write(&path, text).map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!("solve_plot: {path}: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
