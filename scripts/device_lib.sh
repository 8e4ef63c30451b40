# Shared by the device scripts (scripts/device_train.sh, scripts/device_burst.sh); sourced,
# not run. `device_setup NAME SUMMARY [--dry-run]` sets DRY, OUT (default target/NAME),
# BUNDLE, PCN, SHIPPED, PYTHONPATH, SUM (OUT/SUMMARY, emptied), WORK and F (a temporary
# directory and its files/), T0, and defines row (a line to stdout and the summary).

device_setup() {
  DRY=0
  if [ "${3:-}" = "--dry-run" ]; then DRY=1; fi
  OUT=${OUT:-target/$1}
  BUNDLE=${BUNDLE:-.device}
  PCN=${PCN:-$BUNDLE/pcn}
  [ -x "$PCN" ] || PCN=target/release/pcn
  SHIPPED=${SHIPPED:-weights/killallgo9-pcn}
  export PYTHONPATH=training${PYTHONPATH:+:$PYTHONPATH}
  T0=$(date +%s)
  mkdir -p "$OUT"
  SUM=$OUT/$2
  : > "$SUM"
  WORK=$(mktemp -d)
  F=$WORK/files
  mkdir -p "$F"
}

row() { echo "$*" | tee -a "$SUM"; }

# Positions and games of record files ("N G"; missing or unreadable files count 0).
count() { python3 -m pcn_train count "$@"; }

# The network backend BE must open, else self-play runs on the CPU backend (and says so).
open_backend() {
  if ! timeout -k 5 60 "$PCN" nnbench --net "$SHIPPED" --backend "$BE" --batch 1 --reps 1 --seconds 0.01 >/dev/null 2>"$WORK/be.err"; then
    row "backend $BE does not open ($(tail -1 "$WORK/be.err")); self-play on the CPU backend"
    BE=cpu
  fi
}

# Unpacks the carried records ($BUNDLE/train/*.rec.gz or *.rec.xz: older self-play of our
# own, never the paper's data) into $WORK; sets OLD to their paths.
unpack_old() {
  OLD=""
  local z o
  for z in "$BUNDLE"/train/*.rec.gz "$BUNDLE"/train/*.rec.xz; do
    [ -f "$z" ] || continue
    o=$WORK/old_$(basename "${z%.*}")
    case $z in *.gz) gunzip -c "$z" > "$o" ;; *) xz -d -c "$z" > "$o" ;; esac && OLD="$OLD $o"
  done
}
