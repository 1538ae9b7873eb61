#!/usr/bin/env bash
# make test's runner: the parts of the suite in lanes that run side by side.
#
#   scripts/test-lanes.sh build -- "lint test-go fuzz-short" "test-shim test-e2e ..."
#
# The targets before -- run first, one after another (the build the lanes
# share, so that two lanes do not compile it twice). Each argument after it
# is a lane: its make targets run one after another, the lanes at the same
# time. The Go parts are bound by the CPU (compiling, the race detector,
# fuzzing); the real-OpenCode parts spend much of their time waiting on
# OpenCode, the fake LLM and npm. Run side by side they use the two cores
# that one after another they left idle: from empty caches on a quiet
# 2-core machine, 1219 CPU-s in 733 s against 1579 CPU-s in 1169 s.
#
# A target's output goes to a log of its own and is printed whole when the
# target ends, with its time ("make test: T took N s"), so the output of
# two lanes never interleaves. When a target fails its log is printed with
# "make test: T FAILED after N s"; the other lanes finish the target they
# are in and start no other, and the run exits 1.
#
# Env: TEST_JOBS=1 runs the lanes one after another, the output of each
# target as it comes (as make test did before the lanes).
set -uo pipefail

MAKE=${MAKE:-make}
JOBS=${TEST_JOBS:-2}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/hookwire-test.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
all=$(date +%s)

# say prints one block (or line) at a time: the lock keeps two lanes'
# blocks apart.
say() { flock "$DIR/lock" cat; }

# result T START RC: the closing line of part T, started at START, that
# exited RC.
result() {
  if [ "$3" -eq 0 ]; then
    echo "make test: $1 took $(($(date +%s) - $2)) s"
  else
    echo "make test: $1 FAILED after $(($(date +%s) - $2)) s"
  fi
}

# lane N TARGETS...: run them in order; stop at a failure, or when another
# lane has failed.
lane() {
  local n=$1 t s rc
  shift
  for t in "$@"; do
    [ -e "$DIR/failed" ] && { echo "make test: $t not started (another part failed)" | say; return 1; }
    s=$(date +%s)
    echo "make test: $t started (lane $n)" | say
    "$MAKE" --no-print-directory "$t" >"$DIR/$t.log" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || echo "$t" >>"$DIR/failed"
    { cat "$DIR/$t.log"; result "$t" "$s" "$rc"; } | say
    [ "$rc" -eq 0 ] || return 1
  done
}

# serial TARGETS...: one after another, the output as it comes.
serial() {
  local t s rc
  for t in "$@"; do
    s=$(date +%s)
    "$MAKE" --no-print-directory "$t"
    rc=$?
    result "$t" "$s" "$rc"
    [ "$rc" -eq 0 ] || exit 1
  done
}

first=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do first+=("$1"); shift; done
[ $# -gt 0 ] && shift
serial "${first[@]}"

if [ "$JOBS" = 1 ]; then
  # shellcheck disable=SC2086,SC2048 # each lane is a space-separated list of targets
  serial $*
  echo "make test: all passed in $(($(date +%s) - all)) s"
  exit 0
fi

pids=()
n=0
for l in "$@"; do
  n=$((n + 1))
  # shellcheck disable=SC2086 # a lane is a space-separated list of targets
  lane "$n" $l &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
if [ "$failed" -ne 0 ]; then
  echo "make test: FAILED after $(($(date +%s) - all)) s: $(tr '\n' ' ' <"$DIR/failed")"
  exit 1
fi
echo "make test: all passed in $(($(date +%s) - all)) s"
