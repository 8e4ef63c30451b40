#!/bin/sh
# Positions from a network's proofs of hard Gomoku problems, written as SGF problems: a
# quicker and less chaotic yardstick for the no-network solver than whole problems at 60 s
# (docs/notebook/2026-11-25-thirteenth-session-narrowed-search.md).
#
#   scripts/hard_positions.sh [-n NET] [-t SECONDS] [-k TAKE] [-p MAXPLY] OUTDIR PROBLEM...
#
# Each PROBLEM (a number of ../shared/problems/gomoku, e.g. 49) is solved by MCTS with the
# network NET (default gomoku_AZ-4T, one symmetry, SECONDS per problem, default 60), its proof
# goes to OUTDIR/proofs/, and up to TAKE (default 8) of the proof's decision positions within
# MAXPLY (default 6) plies of the root go to OUTDIR/positions/ (`examples/proof_positions.rs`:
# the prover to move with a choice and no threat-space win). Measure a solver on them with
#   scripts/solve_matrix.sh -s OUTDIR/positions -t 10 -o DIR gomoku:mcts
# The positions come from third-party problems and networks: keep them out of the repository.
set -eu

NET=gomoku_AZ-4T
TIME=60
TAKE=8
MAXPLY=6
while getopts "n:t:k:p:" opt; do
  case $opt in
    n) NET=$OPTARG ;;
    t) TIME=$OPTARG ;;
    k) TAKE=$OPTARG ;;
    p) MAXPLY=$OPTARG ;;
    *) echo "usage: $0 [-n NET] [-t SECONDS] [-k TAKE] [-p MAXPLY] OUTDIR PROBLEM..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [-n NET] [-t SECONDS] [-k TAKE] [-p MAXPLY] OUTDIR PROBLEM..." >&2; exit 2; }
OUTDIR=$1
shift

PCN=${PCN:-target/release/pcn}
SHARED=${SHARED:-../shared}
[ -x "$PCN" ] || { echo "$0: $PCN missing (cargo build --release)" >&2; exit 2; }
if [ ! -d "$SHARED/problems/gomoku" ] || [ ! -d "$SHARED/pcn/models/$NET" ]; then
  echo "NOTICE: $SHARED/problems/gomoku or $SHARED/pcn/models/$NET absent: nothing written"
  exit 0
fi
cargo build --release --quiet --example proof_positions
mkdir -p "$OUTDIR/proofs" "$OUTDIR/positions"
for p in "$@"; do
  problem="$SHARED/problems/gomoku/$p.sgf"
  [ -f "$problem" ] || { echo "$0: $problem absent" >&2; exit 2; }
  "$PCN" solve --solver mcts --net "$SHARED/pcn/models/$NET" --symmetries 1 --time "$TIME" \
    --proof-dir "$OUTDIR/proofs" "$problem" 2>/dev/null
  proof="$OUTDIR/proofs/$p.proof.sgf"
  if [ -f "$proof" ]; then
    target/release/examples/proof_positions "$proof" "$problem" \
      --dump "$OUTDIR/positions" --take "$TAKE" --max-ply "$MAXPLY" | tail -2
  else
    echo "$p: no proof within $TIME s, no positions"
  fi
done
