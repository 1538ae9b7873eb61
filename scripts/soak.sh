#!/usr/bin/env bash
# Soak tests, each one real sidecar process (cmd/hookwire/soak_test.go):
# - TestSoak: 1,000,000+ pipelined mixed calls over 10,000 parent sessions;
#   prints RSS, goroutines and store sizes at start (after warm-up), middle
#   and end, and fails if memory or goroutines grow or the store exceeds its
#   bounds.
# - TestSoakHostile: long strings and cacheStable on, with a state file;
#   prints peak RSS and the state file's size, and fails above the byte
#   budget or the documented memory ceiling.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
exec "$GO" test -tags soak -run '^TestSoak(Hostile)?$' -count=1 -timeout 30m -v ./cmd/hookwire/
