#!/bin/sh
# Solver measurements on the shared problem sets, one configuration at a time, resumable.
#
#   scripts/solve_matrix.sh [-t SECONDS] [-j JOBS] [-o DIR] [-s SETDIR] [-f] CONFIG...
#   CONFIG = GAME:SOLVER[:NET[:SYMMETRIES[:EXTRA]]]
#            GAME killallgo|gomoku, NET a model name under ../shared/pcn/models, a model
#            directory path with a `/` in it (e.g. weights/killallgo9-pcn), or none,
#            EXTRA more `pcn solve` options with `,` for spaces (e.g. --net-mode,paper)
#
# Each problem runs as its own `pcn solve` process, JOBS at a time (default 2: one per core
# here), so a configuration's wall time is about half its CPU time. The JSON lines go to
# DIR/GAME_SOLVER_NET_sSYM[_EXTRA].jsonl (in problem order), with a .meta file beside it
# (commit, date, limit, jobs, load, proof check). Every proof is checked with `pcn verify`.
# A configuration whose .jsonl exists is skipped (-f re-runs it): the matrix can be filled
# over several sessions. Proof files go under target/solve-proofs/ (not committed).
# -s reads the problems from SETDIR instead of ../shared/problems/GAME (e.g. the positions
# of scripts/hard_positions.sh); the set's directory name is added to the output name.
set -eu

TIME=60
JOBS=2
OUT=docs/data/solve
FORCE=0
SET=""
while getopts "t:j:o:s:f" opt; do
  case $opt in
    t) TIME=$OPTARG ;;
    j) JOBS=$OPTARG ;;
    o) OUT=$OPTARG ;;
    s) SET=$OPTARG ;;
    f) FORCE=1 ;;
    *) echo "usage: $0 [-t SECONDS] [-j JOBS] [-o DIR] [-s SETDIR] [-f] CONFIG..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-t SECONDS] [-j JOBS] [-o DIR] [-s SETDIR] [-f] CONFIG..." >&2; exit 2; }

PCN=${PCN:-target/release/pcn}
SHARED=${SHARED:-../shared}
[ -x "$PCN" ] || { echo "$0: $PCN missing (cargo build --release)" >&2; exit 2; }
if [ -n "$SET" ] && [ ! -d "$SET" ]; then
  echo "$0: $SET is not a directory" >&2
  exit 2
fi
if [ -z "$SET" ] && [ ! -d "$SHARED/problems" ]; then
  echo "NOTICE: $SHARED/problems absent: nothing measured"
  exit 0
fi
mkdir -p "$OUT"

for cfg in "$@"; do
  game=$(echo "$cfg" | cut -d: -f1)
  solver=$(echo "$cfg" | cut -d: -f2)
  net=$(echo "$cfg" | cut -s -d: -f3)
  sym=$(echo "$cfg" | cut -s -d: -f4)
  extra=$(echo "$cfg" | cut -s -d: -f5)
  net=${net:-none}
  sym=${sym:-1}
  case $game in
    killallgo|gomoku) ;;
    *) echo "$0: $cfg: game must be killallgo or gomoku" >&2; exit 2 ;;
  esac
  name="${game}_${solver}_$(basename "$net")_s${sym}"
  [ -n "$extra" ] && name="${name}_$(echo "$extra" | tr -c 'A-Za-z0-9\n' '-' | sed 's/^-*//')"
  [ -n "$SET" ] && name="${name}_set-$(basename "$SET" | tr -c 'A-Za-z0-9\n' '-')"
  file="$OUT/$name.jsonl"
  if [ -f "$file" ] && [ "$FORCE" = 0 ]; then
    echo "skip $name (exists)"
    continue
  fi
  netopt=""
  case $net in
    # Explicitly: the default network is `auto` (the shipped one).
    none) netopt="--net none" ;;
    */*)
      # A path (our own networks, e.g. weights/killallgo9-pcn): used as it is.
      [ -d "$net" ] || { echo "$0: $net absent" >&2; exit 2; }
      netopt="--net $net --symmetries $sym" ;;
    *)
      [ -d "$SHARED/pcn/models/$net" ] || { echo "$0: $SHARED/pcn/models/$net absent" >&2; exit 2; }
      netopt="--net $SHARED/pcn/models/$net --symmetries $sym" ;;
  esac
  extraopt=$(echo "$extra" | tr ',' ' ')
  work="target/solve-proofs/$name"
  rm -rf "$work"
  mkdir -p "$work/json" "$work/proofs"
  load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
  start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
  echo "run $name: $TIME s per problem, $JOBS at a time"
  # Problems in numeric order; each process writes its own JSON line.
  dir=${SET:-$SHARED/problems/$game}
  for f in $(ls "$dir" | grep '\.sgf$' | sort -n); do echo "$dir/$f"; done |
    xargs -P "$JOBS" -I{} sh -c 'b=$(basename "$1" .sgf); '"$PCN"' solve --solver '"$solver"' '"$netopt"' '"$extraopt"' --time '"$TIME"' --proof-dir '"$work/proofs"' "$1" > '"$work/json"'/$b.json 2>/dev/null || true' _ {}
  for f in $(ls "$work/json" | sort -n); do cat "$work/json/$f"; done > "$file.tmp"
  mv "$file.tmp" "$file"
  proofs=$(ls "$work/proofs" | grep -c '\.sgf$' || true)
  if [ "$proofs" -gt 0 ]; then
    if "$PCN" verify "$work/proofs"/*.sgf > "$work/verify.txt" 2>&1; then
      check="$proofs proofs, all accepted by pcn verify"
    else
      check="$proofs proofs, pcn verify REJECTED some (see $work/verify.txt)"
    fi
  else
    check="no proofs"
  fi
  {
    echo "config: $cfg"
    echo "problems: ${SET:-$SHARED/problems/$game}"
    echo "commit: $commit"
    echo "binary: $PCN"
    echo "started: $start"
    echo "ended: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "time_limit_s: $TIME"
    echo "jobs: $JOBS (cores: $(nproc 2>/dev/null || echo ?))"
    echo "load_at_start: $load"
    echo "proofs: $check"
  } > "$OUT/$name.meta"
  echo "done $name: $(grep -c '"result":"win"' "$file" || true) wins; $check"
done
