#!/usr/bin/env bash
# A training burst on the device (issue: our own networks, "a GPU where your task has one"),
# run after scripts/device_check.sh in the same call: Killall-Go self-play with the shipped
# network on every core (the network on the GPU through the batching evaluator), then
# PyTorch training on the GPU over the carried replay buffer plus the new games, then export.
# Time-boxed: it uses what is left of BURST_SECONDS and skips what no longer fits.
#
#   BURST_SECONDS=170 bash scripts/device_train.sh          # on the device
#   bash scripts/device_train.sh --dry-run                  # here: tiny, CPU, checks the wiring
#
# Needs: .device/pcn (make device-bundle), optionally .device/train/*.rec.gz (older records
# of our own self-play; never the paper's data), PyTorch. Writes under $OUT: burst.tgz (the
# exported networks and the training logs: only files directly under $OUT come back) and
# train_summary.md.
set -u -o pipefail

DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; fi
OUT=${OUT:-target/device_train}
BUNDLE=${BUNDLE:-.device}
PCN=${PCN:-$BUNDLE/pcn}
[ -x "$PCN" ] || PCN=target/release/pcn
BURST_SECONDS=${BURST_SECONDS:-170}
T0=$(date +%s)
left() { echo $(( BURST_SECONDS - ($(date +%s) - T0) )); }
if [ "$BURST_SECONDS" -lt 60 ]; then echo "training burst: skipped (${BURST_SECONDS} s left)"; exit 0; fi
mkdir -p "$OUT"
SUM="$OUT/train_summary.md"
: > "$SUM"
row() { echo "$*" | tee -a "$SUM"; }
WORK=$(mktemp -d)
mkdir -p "$WORK/files"

if [ $DRY = 1 ]; then
  BE=cpu; THREADS=2; PAR=4; SP_SECS=$(( BURST_SECONDS / 7 )); SIZES="1x8 1x4"; STEPS_CAP=1000000; DEVICE=cpu
else
  BE=cuda; THREADS=$(nproc); PAR=$(( $(nproc) * 8 )); SP_SECS=$(( BURST_SECONDS * 2 / 5 )); SIZES="3x32 6x64"; STEPS_CAP=1000000; DEVICE=cuda
fi
# The backend must open, else self-play runs on the CPU backend (and says so).
if ! timeout -k 5 60 "$PCN" nnbench --net weights/killallgo9-pcn --backend "$BE" --batch 1 --reps 1 --seconds 0.01 >/dev/null 2>"$WORK/be.err"; then
  row "backend $BE does not open ($(tail -1 "$WORK/be.err")); self-play on the CPU backend"
  BE=cpu
fi

row "# training burst ($( [ $DRY = 1 ] && echo DRY RUN || echo device)): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores"
# 1. Self-play, stopped by the clock (a cut game's tail is dropped by the reader).
SP=$WORK/new.rec
row ""
row "## self-play: killallgo, weights/killallgo9-pcn, backend $BE, $THREADS threads, $PAR games at once, ${SP_SECS} s"
timeout -s INT -k 5 "$SP_SECS" "$PCN" --net weights/killallgo9-pcn --threads "$THREADS" --seed 20261126 --symmetries 1 \
  --backend "$BE" selfplay --game killallgo --games 1000000 --parallel "$PAR" --out "$SP" 2>"$WORK/sp.err"
positions=$(python3 - "$SP" <<'EOF'
import sys
sys.path.insert(0, "training")
from pcn_train import data
try:
    h, r = data.read_records(sys.argv[1])
    print(len(r), len(set(r["game"].tolist())))
except Exception as e:
    print(0, 0)
EOF
)
row "positions: ${positions% *} in ${positions#* } games (${SP_SECS} s): $(( ${positions% *} / SP_SECS )) positions/s"
tail -2 "$WORK/sp.err" | tr '\r' '\n' | tail -2 >> "$WORK/files/train.log"

# 2. Training on the GPU: old buffer (carried) + the new games.
recs="$SP"
for gz in "$BUNDLE"/train/*.rec.gz; do
  [ -f "$gz" ] || continue
  out=$WORK/$(basename "${gz%.gz}")
  gunzip -c "$gz" > "$out" && recs="$out $recs"
done
# The sizes train side by side on the one GPU (its data loading is CPU work, one process each).
budget=$(( $(left) - 20 ))
pids=""
for sz in $SIZES; do
  b=${sz%x*}; f=${sz#*x}
  if [ "$budget" -lt 20 ]; then row "train $sz: skipped (${budget} s left)"; continue; fi
  PYTHONPATH=training${PYTHONPATH:+:$PYTHONPATH} timeout -k 5 $(( budget + 60 )) python3 -m pcn_train train --records $recs --dir "$WORK/run_$sz" \
    --steps $STEPS_CAP --seconds $(( budget - 15 )) --batch 256 --lr 0.02 --blocks "$b" --filters "$f" --label max \
    --device "$DEVICE" --threads 4 --log-every 200 --export "$WORK/run_$sz/net" --name "killallgo9-gpu-${b}x${f}" \
    > "$WORK/files/train_$sz.log" 2>&1 &
  pids="$pids $!"
done
for pid in $pids; do wait "$pid" || row "a training run failed (see train_*.log)"; done
for sz in $SIZES; do
  b=${sz%x*}; f=${sz#*x}; dir=$WORK/run_$sz
  [ -f "$dir/train_log.csv" ] || continue
  row ""
  row "## train ${b}x${f} on $DEVICE, about ${budget} s, batch 256, lr 0.02, label max"
  row "buffer: $(tail -1 "$dir/train_log.csv" | cut -d, -f7) positions; steps: $(tail -1 "$dir/train_log.csv" | cut -d, -f1); samples/s (mean): $(tail -1 "$dir/train_log.csv" | cut -d, -f6); last loss/policy/black/white: $(tail -1 "$dir/train_log.csv" | cut -d, -f2-5)"
  if [ -f "$dir/net/model.safetensors" ]; then
    cp "$dir/train_log.csv" "$dir/net/"
    cp -r "$dir/net" "$WORK/files/net_${b}x${f}"
    row "exported: net_${b}x${f} (in burst.tgz)"
  fi
done
# Only a few files come back from the device: one archive with the logs and the networks.
tar -czf "$OUT/burst.tgz" -C "$WORK/files" .
row ""
row "burst elapsed: $(( $(date +%s) - T0 )) s"
rm -rf "$WORK"
