#!/bin/sh
# Soak test under real managers (docs/testing.md): GAMES Gomoku games through c-gomoku-cli
# (the scripts/gauntlet.sh set-up: C_GOMOKU_CLI and RAPFI built outside the repository),
# pcn against itself and against Rapfi, in four leagues (freestyle 15x15 and 20x20,
# standard, renju), MOVE_TIME seconds a move, INFO max_memory MEMORY_MB, two games at a
# time; then KAG_GAMES Killall-Go 7x7 games through GTP (scripts/gtp_soak.py: pcn against
# pcn, genmove under time settings, undo, loadsgf); then the differential solver test at
# DIFF_POSITIONS positions. Reports games, time losses, illegal and forbidden moves,
# crashes and pcn's peak RSS against the cap; exits 1 on any of them.
#
#   make soak GAMES=1000              (the issue's size: several hours on 2 cores)
#   GAMES=48 KAG_GAMES=8 DIFF_POSITIONS=300 sh scripts/soak.sh
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
GAMES=${GAMES:-1000}
KAG_GAMES=${KAG_GAMES:-$((GAMES / 10))}
DIFF_POSITIONS=${DIFF_POSITIONS:-10000}
DIFF_SEED=${DIFF_SEED:-1}
MOVE_TIME=${MOVE_TIME:-0.1}
MEMORY_MB=${MEMORY_MB:-64}
CONCURRENCY=${CONCURRENCY:-2}
PCN=${PCN_BRAIN:-$root/engines/pbrain-pcn}
OUT=${OUT:-$root/target/soak/$(date -u +%Y%m%d-%H%M%S)}
CARGO=${CARGO:-cargo}

die() {
  echo "soak: $*" >&2
  exit 2
}
[ -n "${C_GOMOKU_CLI:-}" ] || die "set C_GOMOKU_CLI (build: docs/players.md, 'Measuring strength')"
[ -n "${RAPFI:-}" ] || die "set RAPFI (build: docs/players.md, 'Measuring strength')"
[ -x "$PCN" ] || die "no brain at $PCN (run 'make engines')"
mkdir -p "$OUT"
report=$OUT/report.txt
: >"$report"

# pcn's peak RSS: every brain process's VmHWM, sampled until the games end (the last
# sample of a process is at most 0.2 s before it exits, and VmHWM only grows).
rss_log=$OUT/rss.txt
: >"$rss_log"
name=$(basename "$PCN" | cut -c1-15)
sample_rss() {
  while :; do
    # By process name (pgrep only lists), then by executable: a scan of every /proc entry
    # took seconds on a loaded machine.
    for p in $(pgrep -x "$name" 2>/dev/null || true); do
      [ "$(readlink "/proc/$p/exe" 2>/dev/null || true)" = "$PCN" ] || continue
      sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB/$p \1/p" "/proc/$p/status" 2>/dev/null >>"$rss_log" || true
    done
    sleep 0.2
  done
}
sample_rss &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT INT TERM

leagues="freestyle15 freestyle20 standard renju"
# Eight matches: four leagues, each against pcn and against Rapfi.
per=$(((GAMES + 7) / 8))
status=0
for league in $leagues; do
  for opp in pcn rapfi; do
    if [ $opp = pcn ]; then
      opp_path=$PCN
      opp_name=pcn2
    else
      opp_path=$RAPFI
      opp_name=rapfi
    fi
    dir=$OUT/$league-$opp
    echo "soak: $league, pcn vs $opp_name, $per games" >&2
    sh "$here/gauntlet.sh" --league "$league" --pcn "$PCN" --opponent "$opp_path" \
      --opponent-name "$opp_name" --cli "$C_GOMOKU_CLI" --pcn-time "$MOVE_TIME" \
      --opp-time "$MOVE_TIME" --games "$per" --concurrency "$CONCURRENCY" \
      --memory "$MEMORY_MB" --out "$dir" >"$dir.log" 2>&1 || status=1
    {
      echo "== $league pcn vs $opp_name"
      cat "$dir/summary.txt" 2>/dev/null || echo "no summary (see $dir.log)"
    } >>"$report"
  done
done
kill $sampler 2>/dev/null || true
peak_kb=$(awk '$2 > m { m = $2 } END { print m + 0 }' "$rss_log")

# Totals over the eight matches (pcn's side only; pcn2 is pcn too).
awk -v cap="$MEMORY_MB" -v peak="$peak_kb" '
  /^Games: / { g += $2 }
  /^Time losses: / { for (i = 3; i <= NF; i += 2) if ($i ~ /^pcn/) tl += $(i + 1) }
  /^Illegal moves: / { for (i = 3; i <= NF; i += 2) if ($i ~ /^pcn/) il += $(i + 1) }
  /^Forbidden moves/ { for (i = 4; i <= NF; i += 2) if ($i ~ /^pcn/) fb += $(i + 1) }
  /^Crashes: / { for (i = 2; i <= NF; i += 2) if ($i ~ /^pcn/) cr += $(i + 1) }
  # "ERROR at START: sent by pcn N, OPP M; ...": pcn'"'"'s only (the opponent'"'"'s
  # ERROR at START is not pcn failing).
  /^ERROR at START/ {
    s = $0; sub(/.*sent by /, "", s); sub(/;.*/, "", s); split(s, a, /[ ,]+/)
    if (a[1] ~ /^pcn/) er += a[2]
    if (a[3] ~ /^pcn/) er += a[4]
  }
  END {
    gsub(/,/, "", tl)
    printf "GOMOKU TOTAL: %d games, pcn time losses %d, illegal %d, forbidden %d, crashes %d, pcn ERROR at START %d, peak RSS %.1f MB (INFO max_memory %d MB)\n", g, tl, il, fb, cr, er, peak / 1024, cap
    if (tl + il + fb + cr + er > 0 || peak / 1024 > cap) exit 1
  }' "$report" >"$OUT/total.txt" || status=1
cat "$OUT/total.txt" >>"$report"
cat "$OUT/total.txt"

if [ "$KAG_GAMES" -gt 0 ]; then
  echo "soak: Killall-Go through GTP, $KAG_GAMES games" >&2
  python3 "$here/gtp_soak.py" --pcn "$PCN" --games "$KAG_GAMES" --size 7 \
    --memory "$MEMORY_MB" >"$OUT/gtp.txt" 2>"$OUT/gtp.log" || status=1
  cat "$OUT/gtp.txt" >>"$report"
  cat "$OUT/gtp.txt"
fi

if [ "$DIFF_POSITIONS" -gt 0 ]; then
  echo "soak: differential solver test, $DIFF_POSITIONS positions" >&2
  (cd "$root" && PCN_DIFF_POSITIONS=$DIFF_POSITIONS PCN_DIFF_SEED=$DIFF_SEED \
    $CARGO test --release --test differential -- --nocapture) >"$OUT/differential.log" 2>&1 || status=1
  grep '^differential:' "$OUT/differential.log" | tee -a "$report" || echo "differential: FAILED (see $OUT/differential.log)" | tee -a "$report"
fi
echo "soak: report in $report" >&2
exit $status
