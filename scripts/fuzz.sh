#!/bin/sh
# Coverage-guided fuzzing of every input the engine reads (docs/testing.md): runs each
# cargo-fuzz target of fuzz/ for FUZZ_SECONDS (default 600) with a per-input timeout of
# FUZZ_TIMEOUT seconds (default 1) and a memory cap of FUZZ_RSS_MB (default 512), one
# target after another, and prints one summary line per target (seconds, executions,
# coverage, corpus, findings).
#
#   scripts/fuzz.sh [TARGET...]          (default: every target)
#
# The committed seeds (fuzz/corpus/TARGET) are read, never written: what the fuzzer adds
# goes to fuzz/corpus-run/TARGET (ignored by git; kept between runs). A finding lands in
# fuzz/artifacts/TARGET; fix it, then copy the input into fuzz/regressions/TARGET, where
# tests/fuzz_replay.rs replays it in every `cargo test`.
#
# Needs cargo-fuzz (installed under .tools/cargo-fuzz on first use) and a nightly-capable
# compiler: RUSTC_BOOTSTRAP=1 lets the stable toolchain take cargo-fuzz's -Z flags.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
SECONDS_PER=${FUZZ_SECONDS:-600}
TIMEOUT=${FUZZ_TIMEOUT:-1}
RSS_MB=${FUZZ_RSS_MB:-512}
TOOLS=$root/.tools/cargo-fuzz
CARGO=${CARGO:-cargo}

targets="$*"
[ -n "$targets" ] || targets="gomocup gtp sgf proof model record options"

if ! command -v cargo-fuzz >/dev/null 2>&1 && [ ! -x "$TOOLS/bin/cargo-fuzz" ]; then
  echo "fuzz: installing cargo-fuzz under $TOOLS" >&2
  $CARGO install --quiet --root "$TOOLS" cargo-fuzz
fi
PATH=$TOOLS/bin:$PATH
export PATH RUSTC_BOOTSTRAP=1

cd "$root/fuzz"
# -O: optimised (with debug assertions, so integer overflow is a finding too); the default
# address sanitizer checks the unsafe code (the CPU backend's kernels).
$CARGO fuzz build -O >&2

summary=${FUZZ_SUMMARY:-$root/fuzz/last-run.txt}
: >"$summary"
status=0
for t in $targets; do
  [ -f "fuzz_targets/$t.rs" ] || { echo "fuzz: no target '$t'" >&2; exit 2; }
  mkdir -p "corpus-run/$t" "artifacts/$t"
  log=$root/fuzz/artifacts/$t/last.log
  dict=""
  [ -f "dict/$t.dict" ] && dict="-dict=dict/$t.dict"
  before=$(ls "artifacts/$t" | grep -cv '^last.log$' || true)
  echo "fuzz: $t for ${SECONDS_PER}s" >&2
  # shellcheck disable=SC2086
  if $CARGO fuzz run -O "$t" "corpus-run/$t" "corpus/$t" -- \
      -max_total_time="$SECONDS_PER" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" \
      -malloc_limit_mb="$RSS_MB" -artifact_prefix="artifacts/$t/" -print_final_stats=1 \
      $dict >"$log" 2>&1; then
    rc=0
  else
    rc=$?
    status=1
  fi
  after=$(ls "artifacts/$t" | grep -cv '^last.log$' || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*corp: \([0-9]*\).*/cov \1, corpus \2/p')
  line="$t: rc $rc, ${SECONDS_PER}s asked, ${execs:-?} executions (${secs:-?}/s), ${cov:-no coverage line}, $((after - before)) new findings in fuzz/artifacts/$t"
  echo "$line" | tee -a "$summary"
done
echo "fuzz: summary in $summary" >&2
exit $status
