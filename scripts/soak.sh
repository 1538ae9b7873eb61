#!/usr/bin/env bash
# Soak test: one real sidecar process, 1,000,000+ pipelined mixed calls over
# 10,000 parent sessions; prints RSS, goroutines and store sizes at start
# (after warm-up), middle and end, and fails if memory or goroutines grow or
# the store exceeds its bounds. See cmd/hookwire/soak_test.go.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
exec "$GO" test -tags soak -run '^TestSoak$' -count=1 -timeout 30m -v ./cmd/hookwire/
