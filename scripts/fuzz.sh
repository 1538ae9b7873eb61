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

# Every Fuzz target of every package: the `func FuzzX(f *testing.F)` of the
# test files `go list` names for this build (its build constraints applied),
# so a new target runs here without editing this file. `go list` compiles
# nothing; `go test -list` linked every package's test binary first, a
# minute from an empty build cache.
module=$("$GO" list -m)
targets=()
while read -r path dir files; do
	[ -n "$files" ] || continue
	pkg=./${path#"$module"}/
	pkg=${pkg/#.\/\//./}
	for f in $files; do
		while IFS= read -r n; do targets+=("$n $pkg"); done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$dir/$f")
	done
done < <("$GO" list -f '{{.ImportPath}} {{.Dir}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' ./...)
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz: the test files go list names hold no Fuzz targets" >&2
	exit 1
fi

failed=()
ran=0
for t in "${targets[@]}"; do
	read -r name pkg <<<"$t"
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	ran=$((ran + 1))
	echo "== $name ($pkg) for $FUZZTIME"
	corpus=${pkg}testdata/fuzz/$name
	before=$(ls "$corpus" 2>/dev/null | LC_ALL=C sort || true)
	out=$(mktemp)
	if "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
		:
	elif [ "$(ls "$corpus" 2>/dev/null | LC_ALL=C sort || true)" = "$before" ] && grep -q '^    context deadline exceeded$' "$out"; then
		# Go's fuzz coordinator (go1.26.x) can report its own -fuzztime
		# deadline as a failure when a worker is mid-run at the end
		# (golang/go#75804, fixed in 1.27): no input failed and none was
		# written. Not a finding.
		echo "fuzz: $name stopped with Go's end-of-fuzztime race (golang/go#75804), no failing input: not a finding"
	else
		failed+=("$name")
	fi
	rm -f "$out"
done

if [ "$ran" -eq 0 ]; then
	echo "fuzz: no target named $* (go test -list '^Fuzz' ./... lists them)" >&2
	exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: findings in: ${failed[*]} (failing inputs are under <pkg>/testdata/fuzz/<Target>/)" >&2
	exit 1
fi
echo "fuzz: all targets passed"
