#!/bin/sh
# The measurements of docs/cluster.md: pcn-ray's overhead against plain pcn solve, and
# pcn-ray prove with 1 and 2 worker processes against one pcn solve process.
#
#   sh cluster/measure.sh OUTDIR [POSITION...]   (default: 69 0 28 of killallgo-jl-hard)
#
# Everything runs under `nice -n 19` (the machine is shared). One local Ray cluster on
# loopback (token authentication, no dashboard) serves all pcn-ray runs, so that its start
# is counted once, and is stopped at the end.
set -e
OUT=${1:?OUTDIR}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
PCN=$REPO/target/release/pcn
SET=$REPO/docs/data/solve/killallgo-jl-hard
QUICK=$REPO/docs/data/solve/killallgo-own-hard
POS=${*:-69 0 28}
mkdir -p "$OUT"
export PYTHONPATH=$REPO/.tools/ray RAY_AUTH_MODE=token
RAY_AUTH_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
export RAY_AUTH_TOKEN RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
ray_cli() { nice -n 19 python3 -c 'import sys; from ray.scripts.scripts import main; sys.argv[0]="ray"; sys.exit(main())' "$@"; }
now() { python3 -c 'import time; print(time.time())'; }

t0=$(now)
ray_cli start --head --node-ip-address 127.0.0.1 --port 6390 --num-cpus 2 \
  --include-dashboard=false --object-store-memory 100000000 --disable-usage-stats >"$OUT/ray-start.log" 2>&1
t1=$(now)
echo "ray start: $(python3 -c "print(round($t1-$t0,1))") s" | tee "$OUT/summary.txt"
trap 'ray_cli stop --force >/dev/null 2>&1 || true' EXIT
ADDR=127.0.0.1:6390

# 1. Per-task overhead: 20 problems of killallgo-own-hard that take well under a second.
mkdir -p "$OUT/quick"
for n in 1 3 10 12 15 18 35 43 54 59 62 65 78 80 96 102 105 117 123 138; do
  [ -f "$QUICK/$n.sgf" ] && ln -sf "$QUICK/$n.sgf" "$OUT/quick/$n.sgf"
done
N=$(ls "$OUT/quick" | wc -l)
t0=$(now)
nice -n 19 "$PCN" --net none --nodes 300000 solve --time 600 "$OUT/quick" >"$OUT/quick-pcn.jsonl" 2>"$OUT/quick-pcn.err"
t1=$(now)
nice -n 19 "$HERE/pcn-ray" solve --address $ADDR --no-progress --net none --nodes 300000 --time 600 \
  "$OUT/quick" >"$OUT/quick-ray.jsonl" 2>"$OUT/quick-ray.err"
t2=$(now)
python3 - "$OUT" "$N" "$t0" "$t1" "$t2" >>"$OUT/summary.txt" <<'EOF'
import json, sys
out, n, t0, t1, t2 = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
a = [json.loads(l) for l in open(f"{out}/quick-pcn.jsonl")]
b = [json.loads(l) for l in open(f"{out}/quick-ray.jsonl")]
sa = sum(r["seconds"] for r in a)
sb = sum(r["seconds"] for r in b)
print(f"quick set: {n} problems; pcn solve (1 process) wall {t1-t0:.1f} s (solver seconds {sa:.2f}); "
      f"pcn-ray solve (2 CPUs, cluster already up) wall {t2-t1:.1f} s (solver seconds {sb:.2f}); "
      f"overhead per task {((t2-t1) - sb/2)/n*2:.2f} s of a CPU slot")
same = sorted((r['file'].split('/')[-1], r['result'], r['nodes']) for r in a) == \
       sorted((r['file'].split('/')[-1], r['result'], r['nodes']) for r in b)
print(f"  same answers and node counts: {same}")
EOF

# 2. prove with 1 and 2 workers against one pcn solve process, the shipped network.
for p in $POS; do
  f=$SET/$p.sgf
  nice -n 19 "$PCN" --net auto solve --time 600 "$f" >"$OUT/w1-$p.jsonl" 2>/dev/null
  for w in 1 2; do
    t0=$(now)
    nice -n 19 "$HERE/pcn-ray" prove --address $ADDR --net auto --time 600 --workers $w "$f" \
      >"$OUT/ray$w-$p.jsonl" 2>"$OUT/ray$w-$p.err"
    t1=$(now)
    echo "$p ray$w wall $(python3 -c "print(round($t1-$t0,1))")" >>"$OUT/walls.txt"
  done
  nice -n 19 "$PCN" --net auto --workers 2 solve --time 600 --job-link spawn "$f" >"$OUT/spawn2-$p.jsonl" 2>/dev/null
  nice -n 19 "$PCN" --net auto --workers 2 solve --time 600 "$f" >"$OUT/threads2-$p.jsonl" 2>/dev/null
done
python3 - "$OUT" $POS >>"$OUT/summary.txt" <<'EOF'
import json, sys
out, pos = sys.argv[1], sys.argv[2:]
print("position  run            result  seconds  nodes      jobs  wasted  busy")
for p in pos:
    for name in ("w1", "ray1", "ray2", "spawn2", "threads2"):
        try:
            r = json.loads(open(f"{out}/{name}-{p}.jsonl").readline())
        except (OSError, ValueError):
            continue
        j = r.get("jobs") or {}
        print(f"{p:<9} {name:<14} {r['result']:<7} {r['seconds']:>7.1f}  {r['nodes']:>9}  "
              f"{j.get('sent', '-'):>4}  {j.get('wasted', '-'):>6}  {j.get('busy', '-')}")
EOF
cat "$OUT/walls.txt" >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
