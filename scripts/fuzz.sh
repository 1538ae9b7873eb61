#!/usr/bin/env bash
# Runs every Go fuzz target for $FUZZTIME each (default 60s). Go runs one
# fuzz target per `go test -fuzz` invocation, so this loops over them.
# A finding fails the script; Go writes the failing input under
# <pkg>/testdata/fuzz/<Target>/, where plain `go test` replays it from then on.
#
#   FUZZTIME=5s bash scripts/fuzz.sh      # make fuzz-short (part of make test)
#   FUZZTIME=60s bash scripts/fuzz.sh     # make fuzz
#   bash scripts/fuzz.sh FuzzHooks        # one target
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-60s}

# target package
targets=(
	"FuzzCodecLine ./rpc/"
	"FuzzCodecHeader ./rpc/"
	"FuzzHooks ./handlers/"
	"FuzzPruneTransform ./handlers/"
	"FuzzResolveModel ./core/"
)

failed=()
for t in "${targets[@]}"; do
	read -r name pkg <<<"$t"
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	echo "== $name ($pkg) for $FUZZTIME"
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"; then
		failed+=("$name")
	fi
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: findings in: ${failed[*]} (failing inputs are under <pkg>/testdata/fuzz/<Target>/)" >&2
	exit 1
fi
echo "fuzz: all targets passed"
