//! Solve-time curves from `pcn solve` output: problems solved (win or loss) against the time
//! limit, one line per input file, as an SVG; and a Markdown summary table on stdout.
//!
//! ```sh
//! cargo run --release --example solve_plot -- --out docs/suite2_gomoku.svg \
//!     --title "Gomoku 4T, 3 s" --limit 3 g_dfpn.jsonl g_gpn.jsonl ...
//! ```
//!
//! Each input is the JSON-lines stdout of one `pcn solve` run; its line is labelled with the
//! file's stem minus anything up to the first `_` (`g_gpn.jsonl` → `gpn`). The SVG is written
//! by hand (a few dozen elements) rather than through a plotting crate, so the engine's
//! dependency tree stays as it is.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// One run: label, solved times (sorted), nodes/s of every problem, problem count.
struct Run {
    label: String,
    times: Vec<f64>,
    nps: Vec<f64>,
    problems: usize,
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

fn read_run(path: &Path) -> Result<Run, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("run")
        .to_string();
    let label = stem
        .split_once('_')
        .map_or(stem.clone(), |(_, b)| b.to_string());
    let mut run = Run {
        label,
        times: Vec::new(),
        nps: Vec::new(),
        problems: 0,
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
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

const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG: x = time on a log scale from `tmin` to `limit`, y = problems solved.
fn svg(runs: &[Run], title: &str, limit: f64) -> String {
    let (w, h) = (720.0, 440.0);
    let (l, r, t, b) = (60.0, 130.0, 40.0, 50.0);
    let pw = w - l - r;
    let ph = h - t - b;
    let tmin = 0.01f64;
    let ymax = runs.iter().map(|x| x.problems).max().unwrap_or(1).max(1) as f64;
    let x_of = |s: f64| l + pw * ((s.max(tmin) / tmin).ln() / (limit / tmin).ln()).clamp(0.0, 1.0);
    let y_of = |n: f64| t + ph * (1.0 - n / ymax);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        l + pw / 2.0,
        esc(title)
    );
    // Axes and grid.
    let mut tick = tmin;
    while tick <= limit * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let s = tick * m;
            if s > limit * 1.0001 {
                break;
            }
            let x = x_of(s);
            let _ = writeln!(
                o,
                r##"<line x1="{x:.1}" y1="{t}" x2="{x:.1}" y2="{}" stroke="#ddd"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                t + ph,
                t + ph + 16.0,
                if s < 1.0 {
                    format!("{}", (s * 1000.0).round() / 1000.0)
                } else {
                    format!("{s:.0}")
                }
            );
        }
        tick *= 10.0;
    }
    // The limit itself, where the curves end.
    let _ = writeln!(
        o,
        r##"<line x1="{0:.1}" y1="{t}" x2="{0:.1}" y2="{1}" stroke="#999" stroke-dasharray="4 3"/><text x="{0:.1}" y="{2}" text-anchor="middle">limit {3} s</text>"##,
        x_of(limit),
        t + ph,
        t - 4.0,
        limit
    );
    let ystep = if ymax > 40.0 { 10.0 } else { 5.0 };
    let mut yv = 0.0;
    while yv <= ymax {
        let y = y_of(yv);
        let _ = writeln!(
            o,
            r##"<line x1="{l}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{yv}</text>"##,
            l + pw,
            l - 6.0,
            y + 4.0
        );
        yv += ystep;
    }
    let _ = writeln!(
        o,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
    );
    let _ = writeln!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">time per problem (s, log scale)</text>"#,
        l + pw / 2.0,
        h - 12.0
    );
    let _ = writeln!(
        o,
        r#"<text transform="translate(16,{}) rotate(-90)" text-anchor="middle">problems solved (of {ymax})</text>"#,
        t + ph / 2.0
    );
    // One step line per run.
    for (i, run) in runs.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let mut pts = format!("{:.1},{:.1}", x_of(tmin), y_of(0.0));
        for (k, &s) in run.times.iter().enumerate() {
            let x = x_of(s);
            let _ = write!(
                pts,
                " {x:.1},{:.1} {x:.1},{:.1}",
                y_of(k as f64),
                y_of(k as f64 + 1.0)
            );
        }
        let _ = write!(
            pts,
            " {:.1},{:.1}",
            x_of(limit),
            y_of(run.times.len() as f64)
        );
        let _ = writeln!(
            o,
            r#"<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"/>"#
        );
        let ly = t + 14.0 + 18.0 * i as f64;
        let _ = writeln!(
            o,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{} ({})</text>"#,
            l + pw + 10.0,
            l + pw + 30.0,
            l + pw + 36.0,
            ly + 4.0,
            esc(&run.label),
            run.times.len()
        );
    }
    o.push_str("</svg>\n");
    o
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut out, mut title, mut limit) = (None, String::from("solve-time curves"), 60.0f64);
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next(),
            "--title" => title = args.next().unwrap_or_default(),
            "--limit" => match args.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(v) if v > 0.01 => limit = v,
                _ => {
                    eprintln!("solve_plot: --limit needs a number of seconds above 0.01");
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
    println!("| solver | solved | median s (solved) | median nodes/s |");
    println!("|---|---|---|---|");
    for r in &mut runs {
        let mut times = r.times.clone();
        let mt = median(&mut times).map_or("–".into(), |v| format!("{v:.2}"));
        let mn = median(&mut r.nps).map_or("–".into(), |v| format!("{v:.0}"));
        println!(
            "| {} | {}/{} | {mt} | {mn} |",
            r.label,
            r.times.len(),
            r.problems
        );
    }
    if let Some(path) = out {
        if let Err(e) = std::fs::write(&path, svg(&runs, &title, limit)) {
            eprintln!("solve_plot: {path}: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
