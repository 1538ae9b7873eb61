#!/usr/bin/env bash
# make bench: the sidecar against its floors, in one run (a few minutes).
#
#   1. Go benchmarks: chat.messages.transform on a 1 MB and a 5 MB history
#      (the handler, and rpc.Serve over io.Pipe) against encoding/json
#      decoding the same bytes into any, alternating round by round.
#   2. The Node client over real pipes: the 500 B tool.execute.before round
#      trip against a line-echo floor, pinned to one CPU (headline) and on
#      both CPUs; then the large histories against echo -len, the
#      sidecar's CPU and the wall time OpenCode waits (the whole history
#      sent, and the shim's first request of a new process) against Node's
#      deep copy, and the sidecar's RSS; then a history grown by one message at 100 KB, 1 MB
#      and 5 MB, incremental and full form through the shim's code, against
#      Node's deep copy of that history.
#   3. A summary of ratios against the targets (PASS/MISS).
#
# Not part of `make test`. Knobs: BENCH_ROUNDS (Go rounds, default 3),
# BENCH_SMALL_ROUNDS (default 20), BENCH_GROW_ROUNDS (default 30), BENCH_CPU (the CPU to pin to, default 1),
# HOOKWIRE_BENCH_STRICT=1 (exit 1 on a MISS). See scripts/bench/RESULTS.md.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
CPU=${BENCH_CPU:-1}
load=$(cut -d' ' -f1-3 /proc/loadavg)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hookwire-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# `make bench` has just built bin/hookwire; a direct run builds it when a Go
# file is newer.
if [[ ! -x bin/hookwire ]] || [[ -n $(find . -name '*.go' -newer bin/hookwire -not -path './shim/*' -print -quit) ]]; then
	echo "building bin/hookwire"
	"$GO" build -o bin/hookwire ./cmd/hookwire
fi
"$GO" build -o "$tmp/echo" ./scripts/bench/echo
node scripts/bench/gen.mjs --out "$tmp"

pin=()
if command -v taskset >/dev/null && taskset -c "$CPU" true 2>/dev/null; then
	pin=(taskset -c "$CPU")
else
	echo "taskset unavailable or CPU $CPU not allowed: the '1 CPU' figures run unpinned" >&2
fi

echo "== Go benchmarks (handlers; rpc if it has any) =="
rpc_pkg=()
if grep -qs '^func Benchmark' rpc/*_test.go; then
	rpc_pkg=(./rpc/)
fi
HOOKWIRE_BENCH_HISTORIES=$tmp HOOKWIRE_BENCH_ROUNDS=${BENCH_ROUNDS:-3} \
	"$GO" test -run '^$' -bench 'LargeHistory|SmallCall|ReadRequest|ScanRequest|DecodeAny' -benchmem -benchtime 0.5s \
	./handlers/ "${rpc_pkg[@]}" | tee "$tmp/go-bench.txt"
# The state database: opening it with 10k task sessions against an empty
# one (what initialize costs), and a task call's store work against memory.
"$GO" test -run '^$' -bench 'OpenDatabase|StoreCall|SubagentsPage' -benchtime 20x ./sessiondb/ | tee -a "$tmp/go-bench.txt"

# The large and grow modes run the shim's own code (shim/dist).
if [[ ! -d shim/node_modules ]]; then (cd shim && npm ci --no-audit --no-fund >/dev/null); fi
(cd shim && npm run --silent build)

client=(node --expose-gc scripts/bench/client.mjs --echo "$tmp/echo" --hookwire bin/hookwire)
rounds=${BENCH_SMALL_ROUNDS:-20}
echo
echo "== Node client over stdio pipes =="
# The small calls run as the shim runs the sidecar: with a state database.
"${pin[@]}" "${client[@]}" --mode small --rounds "$rounds" --label "1 CPU" --state "$tmp/small-1cpu.db" --json "$tmp/small-1cpu.json"
"${client[@]}" --mode small --rounds "$rounds" --label "2 CPUs" --state "$tmp/small-2cpu.db" --json "$tmp/small-2cpu.json"
"${client[@]}" --mode large --histories "$tmp" --label "2 CPUs" --json "$tmp/large.json"
# The grown-by-one-message transform, incremental (PROTOCOL.md 4.6) and full,
# through the shim's own code.
"${client[@]}" --mode grow --rounds "${BENCH_GROW_ROUNDS:-30}" --label "2 CPUs" --json "$tmp/grow.json"

node scripts/bench/summary.mjs --load "$load" --go "$tmp/go-bench.txt" \
	--small1 "$tmp/small-1cpu.json" --small2 "$tmp/small-2cpu.json" --large "$tmp/large.json" --grow "$tmp/grow.json"
