#!/usr/bin/env bash
# The GPU check, run from the repository root on a machine with an NVIDIA GPU, CUDA
# libraries (system or the nvidia-* Python wheels) and PyTorch, but no Rust: it uses the
# release binary built elsewhere with `--features cuda` (see `make device-bundle` and
# docs/performance.md, "GPU check"). Under 8 minutes; results under $OUT and on stdout.
#
#   scripts/device_check.sh            # the real check (backend cuda)
#   scripts/device_check.sh --dry-run  # every step on the CPU backend, tiny budgets (a test
#                                      # of this script; about a minute on 2 cores)
#
# Steps:
#  1. golden agreement of every model: cuda-fp32 within 1e-4 on logits (fails the script
#     otherwise), the observed maximum error of both fp16 paths, `cuda` (the implicit-GEMM
#     tensor-core kernels) and `cuda-im2col` (the fallback), each failing only beyond 1.0
#     (a broken kernel); then the top-1 move agreement of `cuda` with `cuda-fp32` on AGREE_N
#     (10,000) positions of games sampled from the network, 9x9 and 15x15 (fails below 99%);
#  2. positions/s at batch 1 ... 4096, pcn (fp16 implicit GEMM, fp16 im2col, fp32) beside
#     PyTorch fp16 + CUDA graphs, for the 9x9 (go_W-max) and the 15x15 (gomoku_AZ) networks;
#  3. end to end, go_W-max with the network at every node (--net-mode paper): nodes/s of
#     MCTS (E2E_THREADS search threads, virtual loss, one batching queue) and of focused
#     DFPN (4 processes side by side, single-threaded each; with and without evaluating
#     each expansion's children in one batch) on 4 problems, E2E_T (10) s each;
#  4. every Killall-Go problem at 10 s, 4 at a time with 4 threads each, with the GPU and
#     then (when the run is still under KAG_CPU_BEFORE seconds, 300) on the CPU backend
#     with the host's cores; every proof is checked by `pcn verify`.
# Environment: OUT (default target/device_check), BUNDLE (.device), PCN (the binary),
# MODELS, PROBLEMS (default ../shared/... when present, else the bundle's copies),
# E2E_THREADS (64), KAG_SOLVER (fdfpn), KAG_EXTRA (--net-mode paper --symmetries 1: with
# the network at every node, 8 symmetries cost 8 evaluations per child).
set -u -o pipefail

DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; fi

OUT=${OUT:-target/device_check}
BUNDLE=${BUNDLE:-.device}
mkdir -p "$OUT"
LOG="$OUT/device_check.log"
SUMMARY="$OUT/summary.md"
: > "$LOG"
: > "$SUMMARY"
STATUS=0
T_START=$(date +%s)

say() { echo "$*" | tee -a "$LOG"; }
row() { echo "$*" >> "$SUMMARY"; echo "$*"; }
fail() { say "FAIL: $*"; STATUS=1; }
# Every step is bounded, so one hung process cannot eat the device time of the rest.
tmo() { timeout -k 5 "$@"; }

if [ -z "${PCN:-}" ]; then
  if [ -x "$BUNDLE/pcn" ]; then PCN=$BUNDLE/pcn; else PCN=target/release/pcn; fi
fi
[ -x "$PCN" ] || { echo "device_check: no pcn binary ($PCN): run 'make device-bundle' where Rust is" >&2; exit 2; }
if [ -z "${MODELS:-}" ]; then
  if [ -d ../shared/pcn/models ]; then MODELS=../shared/pcn/models; else MODELS=$BUNDLE/models; fi
fi
if [ -z "${PROBLEMS:-}" ]; then
  if [ -d ../shared/problems/killallgo ]; then PROBLEMS=../shared/problems/killallgo; else PROBLEMS=$BUNDLE/problems/killallgo; fi
fi
[ -d "$MODELS" ] || { echo "device_check: no models at $MODELS" >&2; exit 2; }
[ -d "$PROBLEMS" ] || { echo "device_check: no problems at $PROBLEMS" >&2; exit 2; }

# The nvidia-* wheels' library folders of the Python that has PyTorch (pcn also finds the
# usual ones itself; this covers any other environment).
if command -v python3 >/dev/null 2>&1; then
  wheel_libs=$(python3 -c 'import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
seen = []
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib"))):
        if d not in seen: seen.append(d)
print(":".join(seen))' 2>/dev/null || true)
  if [ -n "$wheel_libs" ]; then
    export PCN_CUDA_LIB_DIR=${PCN_CUDA_LIB_DIR:+$PCN_CUDA_LIB_DIR:}$wheel_libs
  fi
fi

if [ $DRY = 1 ]; then
  BE=cpu; BE32=cpu; BEI=cpu; BATCHES=1,8; BATCHES32=1; BATCHESI=1; REPS=1; SECS=0.05
  E2E_T=2; KAG_T=1; E2E_THREADS=${E2E_THREADS:-2}; KAG_LIMIT=6; TORCH_DRY=--dry-run
  FP16_TOL=1e-4; AGREE_N=${AGREE_N:-300}
else
  BE=cuda; BE32=cuda-fp32; BEI=cuda-im2col; BATCHES=1,2,4,8,16,32,64,128,256,512,1024,2048,4096
  BATCHES32=1,64,1024; BATCHESI=1,64,256,1024,4096; REPS=3; SECS=0.2
  E2E_T=${E2E_T:-10}; KAG_T=10; E2E_THREADS=${E2E_THREADS:-64}; KAG_LIMIT=1000; TORCH_DRY=
  FP16_TOL=1.0; AGREE_N=${AGREE_N:-10000}
fi
KAG_CPU_BEFORE=${KAG_CPU_BEFORE:-300}
KAG_SOLVER=${KAG_SOLVER:-fdfpn}
KAG_EXTRA=${KAG_EXTRA:---net-mode paper --symmetries 1}
NET9=$MODELS/go_W-max
NET15=$MODELS/gomoku_AZ

row "# pcn device check ($( [ $DRY = 1 ] && echo 'DRY RUN, CPU backend' || echo 'backend cuda'))"
row ""
row "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); binary: $PCN ($(stat -c %s "$PCN" 2>/dev/null) bytes)"
row "- GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 || echo none)"
row "- torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>/dev/null || echo none)"
row "- cores: $(nproc); PCN_CUDA_LIB_DIR: ${PCN_CUDA_LIB_DIR:-unset}"
if ! tmo 90 "$PCN" --log-level info nnbench --net "$NET9" --backend "$BE" --batch 1 --reps 1 --seconds 0.01 >> "$LOG" 2>&1; then
  why=$(tail -3 "$LOG")
  fail "backend $BE does not open:"
  echo "$why" | tee -a "$SUMMARY"
fi
grep -h "cuda backend:" "$LOG" | sed 's/^.*cuda backend:/- cuda backend:/' | head -1 | tee -a "$SUMMARY"

# 1. Golden agreement.
row ""
row "## 1. Golden agreement (8 positions per model; max |diff| on raw outputs)"
row ""
row '```'
for m in "$MODELS"/*/; do
  m=${m%/}
  [ -f "$m/golden.safetensors" ] || continue
  for spec in "$BE32:1e-4" "$BE:$FP16_TOL" "$BEI:$FP16_TOL"; do
    be=${spec%%:*}; tol=${spec#*:}
    line=$(tmo 90 "$PCN" nnbench --net "$m" --backend "$be" --golden --tol "$tol" 2>>"$LOG")
    rc=$?
    line=$(echo "$line" | grep '^golden' || echo "golden $(basename "$m") $be: no result (rc $rc)")
    row "$line"
    [ $rc = 0 ] || fail "golden $(basename "$m") $be (rc $rc)"
  done
done
row '```'
row ""
row "Top-1 move agreement of $BE with $BE32 ($AGREE_N positions of games sampled from the network):"
row ""
row '```'
for net in "$NET9" "$NET15"; do
  line=$(tmo 120 "$PCN" nnbench --net "$net" --backend "$BE" --agree "$BE32" --positions "$AGREE_N" --min-agree 0.99 2>>"$LOG")
  rc=$?
  line=$(echo "$line" | grep '^agree' || echo "agree $(basename "$net") $BE: no result (rc $rc)")
  row "$line"
  [ $rc = 0 ] || fail "agreement $(basename "$net") $BE vs $BE32 (rc $rc)"
done
row '```'

# 2. Throughput beside PyTorch.
row ""
row "## 2. Positions/s per batch (pcn: copies + forward + copies back, synchronised per call)"
for net in "$NET9" "$NET15"; do
  row ""
  row "### $(basename "$net")"
  row ""
  row '```'
  tmo 150 "$PCN" nnbench --net "$net" --backend "$BE" --batch "$BATCHES" --reps $REPS --seconds $SECS 2>>"$LOG" | sed "s/^batch/$BE batch/" | tee -a "$SUMMARY" \
    || fail "nnbench $net $BE"
  tmo 90 "$PCN" nnbench --net "$net" --backend "$BEI" --batch "$BATCHESI" --reps $REPS --seconds $SECS 2>>"$LOG" | sed "s/^batch/$BEI batch/" | tee -a "$SUMMARY" \
    || fail "nnbench $net $BEI"
  tmo 90 "$PCN" nnbench --net "$net" --backend "$BE32" --batch "$BATCHES32" --reps $REPS --seconds $SECS 2>>"$LOG" | sed "s/^batch/$BE32 batch/" | tee -a "$SUMMARY" \
    || fail "nnbench $net $BE32"
  if python3 -c 'import torch' 2>/dev/null || [ -n "$TORCH_DRY" ]; then
    tmo 180 python3 scripts/torch_bench.py --net "$net" --batch "$BATCHES" --reps $REPS --seconds $SECS $TORCH_DRY 2>>"$LOG" | tee -a "$SUMMARY" \
      || fail "torch_bench $net"
  else
    row "torch: not available"
  fi
  row '```'
done

# JSON lines of `pcn solve` -> one summary line per file (python3: always there with torch).
summarise() {
  python3 - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        print("%-10s %-7s %-6s %8.2f s %12s nodes %10.0f nodes/s" % (
            r.get("file", "?").split("/")[-1], r.get("solver", "?"), r.get("result", "?"),
            r.get("seconds", r.get("time", 0.0)) or 0.0, r.get("nodes", "?"), r.get("nodes_per_second", 0.0) or 0.0))
EOF
}

# 3. End to end, network at every node.
row ""
row "## 3. End to end: go_W-max at every node (--net-mode paper), ${E2E_T} s per problem"
E2E="$OUT/e2e"
rm -rf "$E2E"; mkdir -p "$E2E"
probs=$(ls "$PROBLEMS" | grep '\.sgf$' | sort -n | head -4)
row ""
row "MCTS, $E2E_THREADS search threads, 8 symmetries (batches up to $((E2E_THREADS * 8)) rows), one problem at a time:"
row '```'
for p in $probs; do
  tmo $((E2E_T + 40)) "$PCN" solve --solver mcts --net "$NET9" --backend "$BE" --net-mode paper --symmetries 8 \
    --threads "$E2E_THREADS" --time "$E2E_T" "$PROBLEMS/$p" > "$E2E/mcts_$p.json" 2>>"$LOG" || fail "mcts $p"
done
summarise "$E2E"/mcts_*.json | tee -a "$SUMMARY"
row '```'
row ""
for cb in on off; do
  row ""
  row "Focused DFPN, 4 problems side by side (one process each), 1 symmetry, --children-batch $cb:"
  row '```'
  pids=""
  for p in $probs; do
    tmo $((E2E_T + 40)) "$PCN" solve --solver fdfpn --net "$NET9" --backend "$BE" --net-mode paper --symmetries 1 \
      --children-batch $cb --threads 4 --time "$E2E_T" "$PROBLEMS/$p" > "$E2E/fdfpn_${cb}_$p.json" 2>>"$LOG" &
    pids="$pids $!"
  done
  for pid in $pids; do wait "$pid" || fail "fdfpn --children-batch $cb (see $LOG)"; done
  summarise "$E2E"/fdfpn_${cb}_*.json | tee -a "$SUMMARY"
  row '```'
done

# 4. Every Killall-Go problem: kag BACKEND DIR (results under $OUT/DIR).
kag() {
  local be=$1 dir="$OUT/$2"
  rm -rf "$dir"; mkdir -p "$dir/json" "$dir/proofs"
  row ""
  row "Backend $be:"
  ls "$PROBLEMS" | grep '\.sgf$' | sort -n | head -n "$KAG_LIMIT" | \
    xargs -P 4 -I{} sh -c 'timeout -k 5 $(($6 + 30)) "$1" solve --solver "$2" --net "$3" --backend "$4" $5 --threads 4 --time "$6" --proof-dir "$7/proofs" "$8/$9" > "$7/json/$9.json" 2>/dev/null || true' \
      _ "$PCN" "$KAG_SOLVER" "$NET9" "$be" "$KAG_EXTRA" "$KAG_T" "$dir" "$PROBLEMS" {}
  local total wins proofs check
  total=$(ls "$dir/json" | wc -l)
  wins=$(cat "$dir"/json/*.json | grep -c '"result":"win"' || true)
  proofs=$(ls "$dir/proofs" | grep -c '\.sgf$' || true)
  if [ "$proofs" -gt 0 ]; then
    if tmo 180 "$PCN" verify "$dir"/proofs/*.sgf > "$dir/verify.txt" 2>&1; then
      check="$proofs proofs, all accepted by pcn verify"
    else
      check="$proofs proofs, pcn verify REJECTED some"
      fail "pcn verify rejected a proof (see $dir/verify.txt)"
    fi
  else
    check="no proofs"
  fi
  row ""
  row "solved (win): $wins of $total; $check"
  row '```'
  summarise $(ls "$dir"/json/*.json | sort -V) | tee -a "$SUMMARY"
  row '```'
}
row ""
row "## 4. Killall-Go set: $KAG_SOLVER $KAG_EXTRA, go_W-max, ${KAG_T} s per problem, 4 at a time, 4 threads each"
kag "$BE" kag
cp "$OUT/kag/verify.txt" "$OUT/verify.txt" 2>/dev/null || true
KAG_DIRS=kag
if [ $(( $(date +%s) - T_START )) -lt "$KAG_CPU_BEFORE" ]; then
  kag cpu kag_cpu
  cp "$OUT/kag_cpu/verify.txt" "$OUT/verify_cpu.txt" 2>/dev/null || true
  KAG_DIRS="kag kag_cpu"
else
  row ""
  row "Backend cpu: skipped (the run was past ${KAG_CPU_BEFORE} s; it would not finish under 8 minutes)"
fi

row ""
row "elapsed: $(( $(date +%s) - T_START )) s; status: $( [ $STATUS = 0 ] && echo ok || echo FAILED)"
# Only files directly under $OUT come back from the device (and at most 8 of them).
tar -czf "$OUT/runs.tgz" -C "$OUT" e2e $KAG_DIRS 2>/dev/null && (cd "$OUT" && rm -rf e2e $KAG_DIRS)
exit $STATUS
