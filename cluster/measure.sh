#!/bin/sh
# The measurements of docs/cluster.md: pcn-ray's overhead against plain pcn solve, and
# pcn-ray prove with 1 and 2 worker processes against one pcn solve process.
#
#   sh cluster/measure.sh OUTDIR [POSITION...]   (default: 69 28 of killallgo-jl-hard)
#
# Everything runs under `nice -n 19` (the machine is shared). One local Ray cluster on
# loopback per pcn-ray run (token authentication, no dashboard).
set -e
OUT=${1:?OUTDIR}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
PCN=$REPO/target/release/pcn
SET=$REPO/docs/data/solve/killallgo-jl-hard
QUICK=$REPO/docs/data/solve/killallgo-own-hard
POS=${*:-69 28}
mkdir -p "$OUT"
now() { python3 -c 'import time; print(time.time())'; }

# Each pcn-ray run starts (and stops) its own local cluster: a second cluster on the
# machine (a test's) is never touched. Its start is in the wall times; the JSON seconds are
# pcn's own.
echo "measure.sh on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start" | tee "$OUT/summary.txt"
RAYOPTS="--cpus 2 --no-progress"

# 1. Per-task overhead: the problems of killallgo-own-hard that focused DFPN without a
# network proves in under 20 000 nodes (well under a second each on an idle core).
mkdir -p "$OUT/quick"
for n in 1 12 15 43 59 62 138 155 166 175 181 184 191 192 194; do
  [ -f "$QUICK/$n.sgf" ] && ln -sf "$QUICK/$n.sgf" "$OUT/quick/$n.sgf"
done
N=$(ls "$OUT/quick" | wc -l)
t0=$(now)
nice -n 19 "$PCN" --net none --nodes 300000 solve --time 600 "$OUT/quick" >"$OUT/quick-pcn.jsonl" 2>"$OUT/quick-pcn.err"
t1=$(now)
nice -n 19 "$HERE/pcn-ray" solve $RAYOPTS --net none --nodes 300000 --time 600 \
  "$OUT/quick" >"$OUT/quick-ray.jsonl" 2>"$OUT/quick-ray.err"
t2=$(now)
nice -n 19 "$HERE/pcn-ray" solve $RAYOPTS --net none --nodes 300000 --time 600 \
  "$OUT/quick/1.sgf" >"$OUT/one-ray.jsonl" 2>"$OUT/one-ray.err"
t3=$(now)
python3 - "$OUT" "$N" "$t0" "$t1" "$t2" "$t3" >>"$OUT/summary.txt" <<'EOF'
import json, sys
out, n, t0, t1, t2, t3 = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
a = [json.loads(l) for l in open(f"{out}/quick-pcn.jsonl")]
b = [json.loads(l) for l in open(f"{out}/quick-ray.jsonl")]
sa = sum(r["seconds"] for r in a)
sb = sum(r["seconds"] for r in b)
one = json.loads(open(f"{out}/one-ray.jsonl").readline())["seconds"]
w20, w1 = t2 - t1, t3 - t2
print(f"quick set: {n} problems; pcn solve (1 process) wall {t1-t0:.1f} s (solver seconds {sa:.2f}); "
      f"pcn-ray solve (local cluster of 2 CPUs, its start included) wall {w20:.1f} s (solver seconds {sb:.2f}); "
      f"pcn-ray solve of one problem wall {w1:.1f} s (solver seconds {one:.2f})")
print(f"  per task beyond the first, 2 slots: {(w20 - w1) / (n - 1):.2f} s wall; "
      f"slot-seconds per task beyond pcn's own: {(2 * (w20 - w1) - (sb - one)) / (n - 1):.2f} s")
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
    nice -n 19 "$HERE/pcn-ray" prove $RAYOPTS --net auto --time 600 --workers $w "$f" \
      >"$OUT/ray$w-$p.jsonl" 2>"$OUT/ray$w-$p.err"
    t1=$(now)
    echo "$p ray$w wall $(python3 -c "print(round($t1-$t0,1))")" >>"$OUT/walls.txt"
  done
  nice -n 19 "$PCN" --net auto --workers 2 solve --time 600 --job-link spawn "$f" >"$OUT/spawn2-$p.jsonl" 2>/dev/null
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
