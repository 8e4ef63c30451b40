#!/bin/sh
# Strength test: pcn's Gomocup brain against another brain (Rapfi by default) through the
# c-gomoku-cli match manager, on balanced openings, each opening played with both colours.
# Ends with W-D-L, score, Elo with a 95% interval, and time losses / illegal moves / crashes
# counted apart from the ordinary results; with --sprt, c-gomoku-cli's own GSPRT stops the
# match as soon as H0 or H1 is accepted. Manual: docs/players.md, "Measuring strength".
#
#   scripts/gauntlet.sh [options]
#   scripts/gauntlet.sh --summarize DIR     (summary of an earlier run's DIR/cli.log again)
#
# The manager and the opponent are built outside the repository (docs/players.md says how)
# and found through C_GOMOKU_CLI and RAPFI (or --cli / --opponent).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

LEAGUE=freestyle15
PCN=${PCN_BRAIN:-$root/engines/pbrain-pcn}
PCN_ARGS=""
OPP=${RAPFI:-}
OPP_NAME=""
CLI=${C_GOMOKU_CLI:-}
PCN_TIME=1
OPP_TIME=1
GAMES=""
CONCURRENCY=1
OPENINGS=$root/../shared/openings/openings15_freestyle.txt
MEMORY_MB=350
TOLERANCE=3
DRAWAFTER=0
SPRT=""
OUT=""
SUMMARIZE=""

usage() {
  cat <<EOF
usage: $0 [options]
  --league L        freestyle15 (default), freestyle20, standard (exact five, 15x15),
                    renju (15x15); caro is refused (neither c-gomoku-cli nor Rapfi has it)
  --pcn PATH        pcn's brain (default: \$PCN_BRAIN or engines/pbrain-pcn, from 'make engines')
  --pcn-args ARGS   extra arguments for pcn's brain, e.g. "--player solver"
  --opponent PATH   opponent brain (default: \$RAPFI, e.g. /work/ext/rapfi/build/pbrain-rapfi)
  --opponent-name N name in the results (default: the file name without pbrain-)
  --cli PATH        c-gomoku-cli binary (default: \$C_GOMOKU_CLI)
  --pcn-time S      seconds per move for pcn (default 1)
  --opp-time S      seconds per move for the opponent (default 1)
  --games N         games (default: every opening with both colours)
  --concurrency N   games at once (default 1; each game runs two brains)
  --openings FILE   openings, c-gomoku-cli offset format
                    (default ../shared/openings/openings15_freestyle.txt)
  --memory MB       INFO max_memory for both brains (default 350, as in Gomocup)
  --tolerance S     c-gomoku-cli's hang tolerance in seconds (default 3)
  --drawafter N     adjudicate a draw after N plies (default 0 = never)
  --sprt E0,E1[,ALPHA,BETA]  stop by GSPRT, H0: elo=E0 against H1: elo=E1
                    (alpha and beta default to 0.05)
  --out DIR         where the PGN, SGF, messages and log go
                    (default target/gauntlet/LEAGUE-DATE)
  --summarize DIR   only print the summary of DIR/cli.log
EOF
}

die() {
  echo "gauntlet: $*" >&2
  exit 2
}

need_arg() {
  [ "$#" -ge 2 ] || die "$1 needs a value (see --help)"
}

while [ "$#" -gt 0 ]; do
  case $1 in
    --league) need_arg "$@"; LEAGUE=$2; shift 2 ;;
    --pcn) need_arg "$@"; PCN=$2; shift 2 ;;
    --pcn-args) need_arg "$@"; PCN_ARGS=$2; shift 2 ;;
    --opponent) need_arg "$@"; OPP=$2; shift 2 ;;
    --opponent-name) need_arg "$@"; OPP_NAME=$2; shift 2 ;;
    --cli) need_arg "$@"; CLI=$2; shift 2 ;;
    --pcn-time) need_arg "$@"; PCN_TIME=$2; shift 2 ;;
    --opp-time) need_arg "$@"; OPP_TIME=$2; shift 2 ;;
    --games) need_arg "$@"; GAMES=$2; shift 2 ;;
    --concurrency) need_arg "$@"; CONCURRENCY=$2; shift 2 ;;
    --openings) need_arg "$@"; OPENINGS=$2; shift 2 ;;
    --memory) need_arg "$@"; MEMORY_MB=$2; shift 2 ;;
    --tolerance) need_arg "$@"; TOLERANCE=$2; shift 2 ;;
    --drawafter) need_arg "$@"; DRAWAFTER=$2; shift 2 ;;
    --sprt) need_arg "$@"; SPRT=$2; shift 2 ;;
    --out) need_arg "$@"; OUT=$2; shift 2 ;;
    --summarize) need_arg "$@"; SUMMARIZE=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

# The summary, from c-gomoku-cli's stdout: one "[w] Finished game N (BLACK vs WHITE): RESULT
# {REASON}" line per game, RESULT from Black's side. Elo and its 95% interval come from the
# per-game scores (normal approximation, as cutechess-cli and c-gomoku-cli's SPRT do); the
# interval is mapped through the logistic curve, so it is not symmetric.
summarize() {
  log=$1
  [ -f "$log" ] || die "no log at $log"
  awk -v pcn="pcn" '
    function elo(s) { return -400 * log(1 / s - 1) / log(10) }
    function fmt_elo(s) {
      if (s <= 0) return "-inf"
      if (s >= 1) return "+inf"
      e = elo(s)
      if (e > -0.5 && e < 0.5) return "0"
      return sprintf("%+.0f", e)
    }
    # An ERROR instead of OK after START ends the game as a "time forfeit" of the side to
    # move in the game record, whoever sent it (and the running score of c-gomoku-cli may
    # credit either brain): remember who sent it (per worker) and score the game below.
    /^\[[0-9]+\] engine .* output error/ {
      wid = $1; name = $0; sub(/^\[[0-9]+\] engine /, "", name); sub(/ output error.*/, "", name)
      senterr[wid] = name
      next
    }
    /^\[[0-9]+\] Finished game / {
      wid = $1; errname = senterr[wid]; senterr[wid] = ""
      line = $0
      sub(/^\[[0-9]+\] Finished game [0-9]+ \(/, "", line)
      split(line, a, " vs ")
      black = a[1]
      rest = a[2]
      white = rest; sub(/\): .*/, "", white)
      res = rest; sub(/^[^)]*\): /, "", res); sub(/ .*/, "", res)
      reason = rest; sub(/^[^{]*\{/, "", reason); sub(/\}.*/, "", reason)
      if (black == pcn) { col = "black"; opp = white } else if (white == pcn) { col = "white"; opp = black } else next
      gnum = $4 + 0
      # A game that never started says nothing about strength. An ERROR at START from the
      # opponent is not scored (Rapfi drops a START that arrives while the search of its
      # last move in the game before is still winding down); one from pcn is a loss for
      # pcn, whatever the record says. The log does not say when the ERROR came, so any
      # game with one that ends in a forfeit counts as such: an opponent that failed later
      # in the game loses pcn a win here, never gives it one.
      startfail = (reason ~ /time forfeit/ && errname != "")
      if (startfail) { serr[errname]++; if (errname != pcn) next }
      n++
      if (startfail) pts = 0
      else if (res == "1-0") pts = (col == "black") ? 1 : 0
      else if (res == "0-1") pts = (col == "white") ? 1 : 0
      else pts = 0.5
      # With -repeat, games 2k-1 and 2k play opening k with the colours swapped.
      gpts[gnum] = pts
      if (gnum > maxg) maxg = gnum
      if (pts == 1) { w++; wc[col]++ } else if (pts == 0) { l++; lc[col]++ } else { d++; dc[col]++ }
      games[col]++
      # Who lost by something other than the board: the side that did not score.
      loser = (pts == 1) ? opp : (pts == 0 ? pcn : "")
      if (reason ~ /time forfeit/) { if (!startfail) tl[loser]++ }
      else if (reason ~ /illegal move/) il[loser]++
      else if (reason ~ /forbidden move/) fb[loser]++
      else if (reason ~ /crash/) cr[loser]++
      else if (reason ~ /Unterminated/) un++
    }
    /^SPRT: / { sprt = $0 }
    END {
      if (n == 0) { print "no finished games in the log"; exit 1 }
      s = (w + d / 2) / n
      var = (w * (1 - s) ^ 2 + l * (0 - s) ^ 2 + d * (0.5 - s) ^ 2) / n
      se = sqrt(var / n)
      lo = s - 1.96 * se; hi = s + 1.96 * se
      printf "Games: %d (%s vs %s)\n", n, pcn, opp
      printf "W-D-L: %d-%d-%d   (as Black %d-%d-%d, as White %d-%d-%d)\n", w, d, l, \
        wc["black"], dc["black"], lc["black"], wc["white"], dc["white"], lc["white"]
      printf "Score: %.1f%%\n", 100 * s
      printf "Elo: %s, 95%% interval [%s, %s]\n", fmt_elo(s), fmt_elo(lo), fmt_elo(hi)
      # Per opening pair (pentanomial): where the opening decides a game whoever plays it,
      # the two games of a pair are not independent, and the interval from the pair means is
      # the honest one (narrower when pairs split 1-1, as fishtest reports paired games).
      np = 0; ps = 0
      for (k = 1; k < maxg; k += 2) {
        if (!((k in gpts) && ((k + 1) in gpts))) continue
        x = gpts[k] + gpts[k + 1]
        pc[x]++; np++; ps += x / 2; px[np] = x / 2
      }
      if (np > 0) {
        pm = ps / np; pv = 0
        for (i = 1; i <= np; i++) pv += (px[i] - pm) ^ 2
        pse = sqrt(pv / np / np)
        printf "Pairs: %d (pcn points per opening pair 0 / 0.5 / 1 / 1.5 / 2: %d / %d / %d / %d / %d; %d games unpaired)\n", \
          np, pc[0], pc[0.5], pc[1], pc[1.5], pc[2], n - 2 * np
        printf "Elo (pairs): %s, 95%% interval [%s, %s]\n", fmt_elo(pm), fmt_elo(pm - 1.96 * pse), fmt_elo(pm + 1.96 * pse)
      }
      printf "Time losses: %s %d, %s %d\n", pcn, tl[pcn], opp, tl[opp]
      if (serr[pcn] + serr[opp] > 0)
        printf "ERROR at START: sent by %s %d, %s %d; those from %s scored as its losses, %d from the opponent not scored\n", \
          pcn, serr[pcn], opp, serr[opp], pcn, serr[opp]
      printf "Illegal moves: %s %d, %s %d\n", pcn, il[pcn], opp, il[opp]
      printf "Forbidden moves (renju): %s %d, %s %d\n", pcn, fb[pcn], opp, fb[opp]
      printf "Crashes: %s %d, %s %d\n", pcn, cr[pcn], opp, cr[opp]
      if (un) printf "Unterminated: %d\n", un
      if (sprt != "") print "Last " sprt
    }' "$log" || return 1
  # Thinking times as the manager measured them (the SGF's C[...ms] after each move, the
  # opening moves excluded): how close each side came to its limit.
  # The manager only forfeits a late move in some cases (see docs/players.md), so moves
  # over the limit are counted here; the limits come from the log's header.
  sgf=$(dirname "$log")/games.sgf
  [ -f "$sgf" ] || return 0
  limits=$(sed -n 's|^# league .*, pcn \([0-9.]*\)s/move, .* \([0-9.]*\)s/move$|\1 \2|p' "$log")
  awk -v pcn=pcn -v limits="$limits" '
    BEGIN { nl = split(limits, lim, " ") }
    {
      text = $0
      while (match(text, /P[BW]\[[^]]*\]|;[BW]\[[a-z]*\]C\[[0-9]+ms\]/)) {
        tok = substr(text, RSTART, RLENGTH)
        text = substr(text, RSTART + RLENGTH)
        if (tok ~ /^PB/) { b = substr(tok, 4, length(tok) - 4); continue }
        if (tok ~ /^PW/) { w = substr(tok, 4, length(tok) - 4); continue }
        name = (substr(tok, 2, 1) == "B") ? b : w
        ms = tok; sub(/^.*C\[/, "", ms); sub(/ms\]$/, "", ms); ms += 0
        cnt[name]++; sum[name] += ms
        if (ms > mx[name]) mx[name] = ms
        if (nl == 2 && ms > 1000 * ((name == pcn) ? lim[1] : lim[2])) over[name]++
      }
    }
    END {
      for (p in cnt) {
        printf "Move time %s: mean %.0f ms, longest %d ms (%d moves", p, sum[p] / cnt[p], mx[p], cnt[p]
        if (nl == 2) printf ", %d over the %g ms limit", over[p], 1000 * ((p == pcn) ? lim[1] : lim[2])
        printf ")\n"
      }
    }' "$sgf" | sort
}

if [ -n "$SUMMARIZE" ]; then
  summarize "$SUMMARIZE/cli.log"
  exit $?
fi

case $LEAGUE in
  freestyle15) RULE=0; SIZE=15 ;;
  freestyle20) RULE=0; SIZE=20 ;;
  standard) RULE=1; SIZE=15 ;;
  renju) RULE=4; SIZE=15 ;;
  caro)
    die "caro (Gomocup rule 8) is not supported by c-gomoku-cli (rules 0, 1, 4) nor by Rapfi; measure caro with 'pcn match --rule caro' against the built-in players" ;;
  *) die "unknown league '$LEAGUE' (freestyle15, freestyle20, standard, renju)" ;;
esac

[ -n "$CLI" ] || die "c-gomoku-cli not given: set C_GOMOKU_CLI or pass --cli (build: docs/players.md, 'Measuring strength')"
[ -x "$CLI" ] || die "c-gomoku-cli '$CLI' is not an executable file"
[ -n "$OPP" ] || die "opponent not given: set RAPFI to Rapfi's pbrain-rapfi or pass --opponent (build: docs/players.md, 'Measuring strength')"
[ -x "$OPP" ] || die "opponent '$OPP' is not an executable file"
[ -x "$PCN" ] || die "pcn brain '$PCN' is not an executable file (run 'make engines')"
[ -f "$OPENINGS" ] || die "openings file '$OPENINGS' not found"

is_number() {
  echo "$1" | grep -Eq '^[0-9]+([.][0-9]+)?$'
}
is_number "$PCN_TIME" || die "--pcn-time '$PCN_TIME' is not a number of seconds"
is_number "$OPP_TIME" || die "--opp-time '$OPP_TIME' is not a number of seconds"
is_number "$TOLERANCE" || die "--tolerance '$TOLERANCE' is not a number of seconds"
echo "$CONCURRENCY" | grep -Eq '^[1-9][0-9]*$' || die "--concurrency '$CONCURRENCY' is not a positive integer"
echo "$MEMORY_MB" | grep -Eq '^[1-9][0-9]*$' || die "--memory '$MEMORY_MB' is not a positive integer"
echo "$DRAWAFTER" | grep -Eq '^[0-9]+$' || die "--drawafter '$DRAWAFTER' is not an integer"

# Absolute paths: c-gomoku-cli starts each brain in the brain's own directory.
abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")"); }
PCN=$(abspath "$PCN")
OPP=$(abspath "$OPP")
OPENINGS=$(abspath "$OPENINGS")

openings=$(grep -c '[0-9]' "$OPENINGS" || true)
[ "$openings" -gt 0 ] || die "no openings in '$OPENINGS'"
if [ -z "$GAMES" ]; then
  GAMES=$((2 * openings))
fi
echo "$GAMES" | grep -Eq '^[1-9][0-9]*$' || die "--games '$GAMES' is not a positive integer"

if [ -z "$OPP_NAME" ]; then
  OPP_NAME=$(basename "$OPP")
  OPP_NAME=${OPP_NAME#pbrain-}
fi
[ "$OPP_NAME" != pcn ] || OPP_NAME=opponent

sprt_args=""
if [ -n "$SPRT" ]; then
  echo "$SPRT" | grep -Eq '^-?[0-9.]+,-?[0-9.]+(,[0-9.]+,[0-9.]+)?$' ||
    die "--sprt wants E0,E1 or E0,E1,ALPHA,BETA, got '$SPRT'"
  old_ifs=$IFS
  IFS=,
  # shellcheck disable=SC2086
  set -- $SPRT
  IFS=$old_ifs
  sprt_args="elo0=$1 elo1=$2 alpha=${3:-0.05} beta=${4:-0.05}"
fi

if [ -z "$OUT" ]; then
  OUT=$root/target/gauntlet/$LEAGUE-$(date -u +%Y%m%d-%H%M%S)
fi
mkdir -p "$OUT"

# tc=0/T: no match clock, T seconds per move. A move later than T + min(tolerance/2, 1 s)
# is a time loss in c-gomoku-cli; later than T + tolerance the brain is killed.
pcn_cmd="$PCN gomocup"
[ -z "$PCN_ARGS" ] || pcn_cmd="$pcn_cmd $PCN_ARGS"
maxmem=$((MEMORY_MB * 1024 * 1024))

{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) pcn $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "# league $LEAGUE (rule $RULE, ${SIZE}x$SIZE), pcn ${PCN_TIME}s/move, $OPP_NAME ${OPP_TIME}s/move"
  echo "# games $GAMES, concurrency $CONCURRENCY, openings $OPENINGS, sprt ${SPRT:-none}"
} >"$OUT/cli.log"

set -- "$CLI" \
  -engine "name=pcn" "cmd=$pcn_cmd" "tc=0/$PCN_TIME" \
  -engine "name=$OPP_NAME" "cmd=$OPP" "tc=0/$OPP_TIME" \
  -each "maxmemory=$maxmem" "tolerance=$TOLERANCE" \
  -rule "$RULE" -boardsize "$SIZE" -games "$GAMES" -repeat -concurrency "$CONCURRENCY" \
  -openings "file=$OPENINGS" type=offset order=sequential \
  -pgn "$OUT/games.pgn" -sgf "$OUT/games.sgf" -msg "$OUT/messages.txt"
[ "$DRAWAFTER" -eq 0 ] || set -- "$@" -drawafter "$DRAWAFTER"
if [ -n "$sprt_args" ]; then
  # shellcheck disable=SC2086
  set -- "$@" -sprt $sprt_args
fi
echo "# $*" >>"$OUT/cli.log"
echo "gauntlet: $*" >&2
echo "gauntlet: output in $OUT" >&2

# The manager's own exit status is lost in the pipe; a run that died early shows in the
# summary (fewer games than asked, or none: then the summary fails).
# Line-buffered where stdbuf exists, so that the games show as they finish.
if command -v stdbuf >/dev/null 2>&1; then
  set -- stdbuf -oL "$@"
fi
"$@" 2>&1 | tee -a "$OUT/cli.log"
echo
rc=0
summarize "$OUT/cli.log" >"$OUT/summary.txt" || rc=$?
cat "$OUT/summary.txt"
exit "$rc"
