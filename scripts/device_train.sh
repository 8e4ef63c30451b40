#!/usr/bin/env bash
# A training session on the device (issue: our own networks, "a GPU where your task has one"):
# generations of Killall-Go self-play and training side by side, then a gate that picks the
# best network on our own positions, then the shared problems at 60 s, the best network
# beside none. Time-boxed: every stage gets a share of BURST_SECONDS and stops on time.
#
#   BURST_SECONDS=500 bash scripts/device_train.sh          # on the device
#   bash scripts/device_train.sh --dry-run                  # here: tiny, CPU, checks the wiring
#
# Each generation g plays self-play games with network g-1 (the shipped one for g = 1) on
# all cores but two, while PyTorch trains on the GPU over the carried records and the games
# of generations < g, continuing one checkpoint (started from weights/killallgo9-pcn), and
# exports network g. The data therefore lags one generation, as in asynchronous AlphaZero.
#
# Needs: .device/pcn (make device-bundle), optionally .device/train/*.rec.{gz,xz} (older records
# of our own self-play; never the paper's data), .device/gate/*.sgf (our own gate positions,
# docs/training.md), .device/problems/killallgo (a copy of ../shared/problems/killallgo, used
# only to measure), PyTorch. Writes under $OUT: burst.tgz (networks, logs, gate and solve
# results, proofs: only files directly under $OUT come back) and train_summary.md.
set -u -o pipefail

. "$(dirname "$0")/device_lib.sh"
device_setup device_train train_summary.md "${1:-}"
BURST_SECONDS=${BURST_SECONDS:-500}
left() { echo $(( BURST_SECONDS - ($(date +%s) - T0) )); }
if [ $DRY = 1 ]; then
  BE=cpu; DEVICE=cpu; SP_THREADS=1; PAR=4; GENS=${GENS:-2}; BLOCKS=1; FILTERS=8; INIT=""
  BATCH=32; GATE_NODES=2000; GATE_LIMIT=3; EVAL_TIME=2; EVAL_LIMIT=2; JOBS=2
  GATE_SECS=40; EVAL_SECS=40
else
  BE=cuda; DEVICE=cuda; SP_THREADS=$(( $(nproc) - 2 )); PAR=$(( SP_THREADS * 8 )); GENS=${GENS:-3}
  BLOCKS=6; FILTERS=64; INIT="--init $SHIPPED"; BATCH=1024; GATE_NODES=100000; GATE_LIMIT=1000
  EVAL_TIME=60; EVAL_LIMIT=1000; JOBS=$(nproc); GATE_SECS=${GATE_SECS:-60}; EVAL_SECS=${EVAL_SECS:-230}
fi
LR=${LR:-0.02}
GEN_SECS=$(( (BURST_SECONDS - GATE_SECS - EVAL_SECS - 15) / GENS ))
if [ "$GEN_SECS" -lt 15 ]; then echo "training: skipped (${BURST_SECONDS} s is too little)"; exit 0; fi
open_backend
row "# device training ($( [ $DRY = 1 ] && echo DRY RUN || echo device)): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores"
row ""
row "$GENS generations of ${GEN_SECS} s: self-play ($SP_THREADS threads, backend $BE, $PAR games at once, 1 symmetry) beside training ${BLOCKS}x${FILTERS} on $DEVICE (batch $BATCH, lr $LR, label max)"

# Records carried from earlier runs.
unpack_old

net=$SHIPPED
NEW=""
NETS="shipped=$SHIPPED"
for g in $(seq 1 "$GENS"); do
  rec=$WORK/gen$g.rec
  timeout -s INT -k 5 "$GEN_SECS" "$PCN" --net "$net" --threads "$SP_THREADS" --seed $(( 20261127 + g )) --symmetries 1 \
    --backend "$BE" selfplay --game killallgo --games 1000000 --parallel "$PAR" --out "$rec" 2>"$WORK/sp$g.err" &
  sp=$!
  recs="$OLD $NEW"
  if [ -z "${recs// /}" ]; then
    row "generation $g: no records to train on yet (nothing carried)"; wait $sp; NEW="$NEW $rec"; continue
  fi
  lr=$LR
  # The last generation's network plays no games: a lower rate settles it.
  if [ "$g" = "$GENS" ] && [ "$GENS" -gt 1 ]; then lr=$(python3 -c "print($LR / 4)"); fi
  timeout -k 5 $(( GEN_SECS + 60 )) python3 -m pcn_train train --records $recs --dir "$WORK/run" \
    --steps 100000000 --seconds $(( GEN_SECS - 12 )) --batch "$BATCH" --lr "$lr" --blocks "$BLOCKS" --filters "$FILTERS" \
    --label max --window 2000000 --device "$DEVICE" --threads 2 --log-every 500 $INIT \
    --export "$WORK/gen$g" --name "killallgo9-gpu-${BLOCKS}x${FILTERS}-g$g" > "$F/train_g$g.log" 2>&1 \
    || row "generation $g: training failed (train_g$g.log)"
  wait $sp
  NEW="$NEW $rec"
  read -r pos games < <(count "$rec")
  last=$(tail -1 "$WORK/run/train_log.csv" 2>/dev/null)
  row "generation $g: self-play with $(basename "$net"): $games games, $pos positions ($(( pos / GEN_SECS ))/s); training: step $(echo "$last" | cut -d, -f1), buffer $(echo "$last" | cut -d, -f7), $(echo "$last" | cut -d, -f6) samples/s, lr $lr, last loss/policy/black/white $(echo "$last" | cut -d, -f2-5)"
  if [ -f "$WORK/gen$g/model.safetensors" ]; then
    cp "$WORK/run/train_log.csv" "$WORK/gen$g/"
    cp -r "$WORK/gen$g" "$F/net_g$g"
    net=$WORK/gen$g
    NETS="$NETS g$g=$WORK/gen$g"
  fi
done
row "self-play records: $(count $NEW | cut -d' ' -f1) positions in $(( GENS * GEN_SECS )) s"

# Gate: our own positions (never the paper's problems), focused DFPN, a node limit (so the
# machine does not matter), 1 symmetry, CPU backend. Best: most solved, then fewest nodes.
BEST=$SHIPPED
BESTNAME=shipped
if ls "$BUNDLE"/gate/*.sgf >/dev/null 2>&1; then
  mkdir -p "$F/gate"
  for nv in $NETS; do
    for p in $(ls "$BUNDLE"/gate/*.sgf | head -n "$GATE_LIMIT"); do echo "${nv%%=*} ${nv#*=} $p"; done
  done | timeout -k 5 $(( GATE_SECS > 10 ? GATE_SECS : 10 )) xargs -P "$JOBS" -L 1 sh -c \
    '"$0" --net "$2" --threads 1 --symmetries 1 --backend cpu solve --solver fdfpn --nodes '"$GATE_NODES"' --time 300 --prove white "$3" > "'"$F"'/gate/$1_$(basename "$3" .sgf).json" 2>/dev/null || true' "$PCN"
  row ""
  row "## gate: $(ls "$BUNDLE"/gate/*.sgf | head -n "$GATE_LIMIT" | wc -l) own positions, fdfpn, $GATE_NODES nodes, 1 symmetry"
  best_line=$(python3 - "$F/gate" $NETS 2>"$WORK/gate.md" <<'EOF'
import json, os, sys, glob
d = sys.argv[1]
rows = []
for nv in sys.argv[2:]:
    name = nv.split("=", 1)[0]
    rs = []
    for f in glob.glob(os.path.join(d, name + "_*.json")):
        try:
            rs.append(json.loads(open(f).read().strip().splitlines()[-1]))
        except Exception:
            pass
    won = sum(r.get("result") == "win" for r in rs)
    nodes = sum(r.get("nodes", 0) for r in rs)
    rows.append((name, won, len(rs), nodes))
for name, won, n, nodes in rows:
    print(f"| {name} | {won} of {n} | {nodes} |", file=sys.stderr)
best = max(rows, key=lambda r: (r[1], -r[3]))
print(best[0])
EOF
  )
  row "| network | solved | nodes |"
  row "|---|---|---|"
  while read -r l; do row "$l"; done < "$WORK/gate.md"
  for nv in $NETS; do [ "${nv%%=*}" = "$best_line" ] && BEST=${nv#*=} && BESTNAME=$best_line; done
  row "best: $BESTNAME"
fi

# The shared problems at EVAL_TIME s, the best network beside none, interleaved so that a
# cut run stays side by side; every proof is checked by `pcn verify`.
PROBS=${PROBLEMS:-}
[ -z "$PROBS" ] && { [ -d ../shared/problems/killallgo ] && PROBS=../shared/problems/killallgo || PROBS=$BUNDLE/problems/killallgo; }
budget=$(( $(left) - 10 ))
if [ -d "$PROBS" ] && [ "$budget" -gt $(( EVAL_TIME + 10 )) ]; then
  mkdir -p "$F/solve/none" "$F/solve/$BESTNAME" "$F/proofs/none" "$F/proofs/$BESTNAME"
  for p in $(ls "$PROBS" | grep '\.sgf$' | sort -n | head -n "$EVAL_LIMIT"); do
    echo "$BESTNAME $BEST $PROBS/$p"; echo "none none $PROBS/$p"
  done | timeout -k 5 "$budget" xargs -P "$JOBS" -L 1 sh -c \
    'b=$(basename "$3" .sgf); "$0" --net "$2" --symmetries 1 --threads 1 --backend cpu solve --solver fdfpn --time '"$EVAL_TIME"' --proof-dir "'"$F"'/proofs/$1" "$3" > "'"$F"'/solve/$1/$b.json" 2>/dev/null || true' "$PCN"
  row ""
  row "## ${PROBS##*/} problems at ${EVAL_TIME} s, fdfpn, 1 symmetry, CPU backend, one core each ($JOBS at once; ${budget} s allowed)"
  for nm in "$BESTNAME" none; do
    won=$(cat "$F/solve/$nm"/*.json 2>/dev/null | grep -c '"result":"win"')
    ran=$(ls "$F/solve/$nm" | wc -l)
    v="no proofs"
    if ls "$F/proofs/$nm"/*.sgf >/dev/null 2>&1; then
      if "$PCN" verify "$F/proofs/$nm"/*.sgf > "$F/verify_$nm.txt" 2>&1; then v="all proofs accepted by pcn verify"; else v="pcn verify REJECTED some"; fi
    fi
    row "$nm: $won of $ran ($v): $(for f in $(ls "$F/solve/$nm" | sort -n); do grep -q '"result":"win"' "$F/solve/$nm/$f" && printf '%s ' "${f%.json}"; done)"
  done
fi
tar -czf "$OUT/burst.tgz" -C "$F" .
row ""
row "elapsed: $(( $(date +%s) - T0 )) s"
rm -rf "$WORK"
