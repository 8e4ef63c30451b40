//! Live-analysis output (`lz-analyze`, `kata-analyze`) in the units Sabaki parses
//! (protocols.md B.5, C): one `info` line per update with every candidate on it,
//! `move visits winrate prior lcb order pv` per candidate, integers in ten-thousandths for
//! `lz-analyze`, floats with a decimal point in 0..1 for `kata-analyze`. `pass` candidates
//! are left out (Sabaki drops them) and every PV is cut before its first pass, so it is a
//! non-empty run of vertices starting with the move itself.

use super::parse::AnalyzeKind;
use crate::game::Game;
use crate::search::Candidate;

fn lz(v: f64) -> i64 {
    (v.clamp(0.0, 1.0) * 10000.0).round() as i64
}

/// The `info ...` line for `candidates` (best first) in position `g`, at most `max_moves`
/// candidates; `None` when no board move is among them.
pub fn info_line<G: Game>(
    g: &G,
    kind: AnalyzeKind,
    candidates: &[Candidate],
    max_moves: Option<usize>,
) -> Option<String> {
    let points = g.width() * g.height();
    let mut segs = Vec::new();
    for c in candidates
        .iter()
        .filter(|c| (c.mv as usize) < points)
        .take(max_moves.unwrap_or(usize::MAX).max(1))
    {
        let order = segs.len();
        let pv: Vec<String> =
            c.pv.iter()
                .take_while(|&&m| (m as usize) < points)
                .map(|&m| g.move_to_gtp(m))
                .collect();
        let mv = g.move_to_gtp(c.mv);
        let pv = if pv.is_empty() {
            mv.clone()
        } else {
            pv.join(" ")
        };
        segs.push(match kind {
            AnalyzeKind::Lz => format!(
                "info move {mv} visits {} winrate {} prior {} lcb {} order {order} pv {pv}",
                c.visits,
                lz(c.winrate),
                lz(c.prior),
                lz(c.lcb)
            ),
            AnalyzeKind::Kata => format!(
                "info move {mv} visits {} winrate {:.6} prior {:.6} lcb {:.6} order {order} pv {pv}",
                c.visits,
                c.winrate.clamp(0.0, 1.0),
                c.prior.clamp(0.0, 1.0),
                c.lcb.clamp(0.0, 1.0)
            ),
        });
    }
    if segs.is_empty() {
        None
    } else {
        Some(segs.join(" "))
    }
}

#[cfg(test)]
// Tests may unwrap: a panic there is a failed test, not a crashed engine.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::game::killallgo::{KillallGo, Variant};

    fn cand(g: &KillallGo, mv: &str, wr: f64, pv: &[&str]) -> Candidate {
        Candidate {
            mv: g.parse_gtp(mv).unwrap(),
            visits: 12,
            winrate: wr,
            prior: 0.09,
            lcb: wr / 2.0,
            proven: wr == 1.0,
            pv: pv.iter().map(|s| g.parse_gtp(s).unwrap()).collect(),
        }
    }

    #[test]
    fn units_and_pass_handling() {
        let g = KillallGo::after_opening(Variant::Pcn9);
        let c = vec![
            cand(&g, "E5", 1.0, &["E5", "D4", "pass", "F6"]),
            cand(&g, "pass", 0.3, &["pass"]),
            cand(&g, "D4", 0.51234, &["D4"]),
        ];
        let lz = info_line(&g, AnalyzeKind::Lz, &c, None).unwrap();
        assert_eq!(
            lz,
            "info move E5 visits 12 winrate 10000 prior 900 lcb 5000 order 0 pv E5 D4 \
             info move D4 visits 12 winrate 5123 prior 900 lcb 2562 order 1 pv D4"
        );
        let kata = info_line(&g, AnalyzeKind::Kata, &c, Some(1)).unwrap();
        assert_eq!(
            kata,
            "info move E5 visits 12 winrate 1.000000 prior 0.090000 lcb 0.500000 order 0 pv E5 D4"
        );
        assert_eq!(info_line(&g, AnalyzeKind::Lz, &c[1..2], None), None);
    }
}
