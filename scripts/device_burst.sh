#!/usr/bin/env bash
# A data-first Killall-Go burst on the device (issue: our own networks). Unlike
# scripts/device_train.sh (generations of self-play and training side by side; why data
# first: docs/notebook/2026-11-27-third-device-run.md), this spends most of the time on
# self-play with the shipped network, then trains candidates on a few passes over the data,
# and brings the records back so that later runs (on the device or here) can train on them. Gating and measuring happen here, with node-limited
# gates that do not depend on the machine (docs/training.md).
#
#   SP_SECONDS=330 TRAIN_SECONDS=110 bash scripts/device_burst.sh   # on the device
#   bash scripts/device_burst.sh --dry-run                          # here: tiny, CPU
#
# Candidates (each exported as model.safetensors + model.json under $OUT's burst.tgz):
#   cont: the shipped network trained on, on the new records only, at a lower rate;
#   fresh: a fresh network of the shipped size on the carried and the new records.
# Both train PASSES times over their buffer (a fixed number of samples per position, as
# KataGo bounds it), or until TRAIN_SECONDS. Self-play goes on with the shipped network on
# the cores the training leaves, into a second record file.
#
# Needs: .device/pcn (make device-bundle), optionally .device/train/*.rec.{gz,xz} (older records
# of our own self-play; never the paper's data), PyTorch. Writes under $OUT: burst.tgz,
# summary.md and the new records as xz parts of 15 MiB.
set -u -o pipefail

. "$(dirname "$0")/device_lib.sh"
device_setup device_burst summary.md "${1:-}"

if [ $DRY = 1 ]; then
  BE=cpu; DEVICE=cpu; SP_THREADS=2; SP2_THREADS=1; PAR=8; SP_SECONDS=${SP_SECONDS:-20}
  TRAIN_SECONDS=${TRAIN_SECONDS:-20}; BATCH=64; PASSES=${PASSES:-1}; TTHREADS=1
else
  BE=cuda; DEVICE=cuda; SP_THREADS=$(nproc); SP2_THREADS=$(( $(nproc) - 4 )); PAR=$(( SP_THREADS * 16 ))
  SP_SECONDS=${SP_SECONDS:-330}; TRAIN_SECONDS=${TRAIN_SECONDS:-110}; BATCH=1024; PASSES=${PASSES:-3}
  TTHREADS=2
fi
LR_FRESH=${LR_FRESH:-0.02}
LR_CONT=${LR_CONT:-0.005}
if ! read -r BLOCKS FILTERS < <(python3 -c "
import json; t = json.load(open('$SHIPPED/model.json'))['trunk']; print(t['blocks'], t['filters'])"); then
  row "cannot read the trunk of $SHIPPED/model.json"; exit 2
fi
open_backend
row "# device burst ($( [ $DRY = 1 ] && echo DRY RUN || echo device)): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores, shipped ${BLOCKS}x${FILTERS}"

selfplay() { # SECONDS THREADS SEED OUT
  timeout -s INT -k 5 "$1" "$PCN" --net "$SHIPPED" --threads "$2" --seed "$3" --symmetries 1 \
    --backend "$BE" selfplay --game killallgo --games 1000000 --parallel $(( $2 * PAR / SP_THREADS )) \
    --out "$4" 2>"$4.err"
}

# 1. Self-play on every core.
REC1=$WORK/sp1.rec
selfplay "$SP_SECONDS" "$SP_THREADS" 20261128 "$REC1"
read -r pos games < <(count "$REC1")
row "self-play 1: shipped network, $SP_THREADS threads, backend $BE, $PAR games at once, ${SP_SECONDS} s: $games games, $pos positions ($(( pos / SP_SECONDS ))/s)"

# 2. Two candidates on the GPU, self-play going on beside them.
unpack_old
read -r oldpos _ < <(count $OLD)
REC2=$WORK/sp2.rec
selfplay $(( TRAIN_SECONDS + 20 )) "$SP2_THREADS" 20261129 "$REC2" &
sp=$!
train() { # NAME LR INIT-ARGS RECORDS...
  local name=$1 lr=$2 init=$3; shift 3
  local n; n=$(count "$@" | cut -d' ' -f1)
  local steps=$(( PASSES * n / BATCH + 1 ))
  timeout -k 5 $(( TRAIN_SECONDS + 60 )) python3 -m pcn_train train --records "$@" --dir "$WORK/run_$name" \
    --steps "$steps" --seconds "$TRAIN_SECONDS" --batch "$BATCH" --lr "$lr" --blocks "$BLOCKS" --filters "$FILTERS" \
    --label max --window 5000000 --device "$DEVICE" --threads "$TTHREADS" --log-every 200 $init \
    --export "$F/net_$name" --name "killallgo9-burst-$name" > "$F/train_$name.log" 2>&1 \
    || echo "training $name failed" >> "$F/train_$name.log"
  cp "$WORK/run_$name/train_log.csv" "$F/train_log_$name.csv" 2>/dev/null
  echo "$n $steps"
}
train cont "$LR_CONT" "--init $SHIPPED" "$REC1" > "$WORK/cont.n" &
tc=$!
train fresh "$LR_FRESH" "" $OLD "$REC1" > "$WORK/fresh.n" &
tf=$!
wait $tc $tf
wait $sp
for name in cont fresh; do
  read -r n steps < "$WORK/$name.n"
  last=$(tail -1 "$F/train_log_$name.csv" 2>/dev/null)
  row "candidate $name: $n positions, $steps steps planned ($PASSES passes at batch $BATCH); reached step $(echo "$last" | cut -d, -f1), $(echo "$last" | cut -d, -f6) samples/s, last loss/policy/black/white $(echo "$last" | cut -d, -f2-5); $( [ -f "$F/net_$name/model.safetensors" ] && echo exported || echo NOT exported)"
done
read -r pos2 games2 < <(count "$REC2")
row "self-play 2 (beside training): $SP2_THREADS threads: $games2 games, $pos2 positions; carried records: $oldpos positions"

# 3. Back: networks and logs in one archive, the new records xz-compressed in
# parts of 15 MiB (join with cat); the second file only while everything stays under 60 MiB.
cp "$REC1.err" "$F/sp1.err" 2>/dev/null; cp "$REC2.err" "$F/sp2.err" 2>/dev/null
tar -czf "$OUT/burst.tgz" -C "$F" .
for r in sp1 sp2; do
  [ -s "$WORK/$r.rec" ] || continue
  xz -T0 -1 -c "$WORK/$r.rec" | split -b 15m -d -a 1 - "$OUT/$r.rec.xz.part"
done
while [ "$(du -cb "$OUT"/* | tail -1 | cut -f1)" -gt $(( 60 * 1024 * 1024 )) ] || [ "$(ls "$OUT" | wc -l)" -gt 8 ]; do
  last=$(ls "$OUT"/sp*.rec.xz.part* 2>/dev/null | sort | tail -1)
  [ -n "$last" ] || break
  base=${last%.part*}
  rm -f "$base".part*; row "dropped $(basename "$base") (over the 60 MiB or 8 files that come back)"
done
row "records back: $(cd "$OUT" && ls sp*.rec.xz.part* 2>/dev/null | tr '\n' ' ')(cat PARTS | xz -d > FILE.rec)"
row "elapsed: $(( $(date +%s) - T0 )) s"
rm -rf "$WORK"
