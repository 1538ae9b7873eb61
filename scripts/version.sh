#!/usr/bin/env bash
# The version make stamps into hookwire (-X main.version) and the npm
# packages carry.
#
#   scripts/version.sh          the version of this checkout: the nearest
#                               v* tag as `git describe` gives it (v1.2.3, or
#                               v1.2.3-4-gabc1234[-dirty] past it), else
#                               0.0.0-dev+g<12 hex of HEAD>[.dirty]; nothing
#                               outside git (the binary then reports a
#                               development build itself)
#   scripts/version.sh --npm V  V as npm takes it: no leading v, and build
#                               metadata (+...) turned into prerelease
#                               identifiers, since npm drops build metadata
#                               (0.0.0-dev+gabc1234 -> 0.0.0-dev.gabc1234).
#                               The shim compares versions the same way
#                               (shim/src/binary.ts, comparableVersion).
set -euo pipefail

if [ "${1:-}" = --npm ]; then
  v=${2:?usage: version.sh --npm VERSION}
  v=${v#v}
  v=${v/+/.}
  # semver 2.0.0: MAJOR.MINOR.PATCH[-PRERELEASE], identifiers [0-9A-Za-z-],
  # numeric ones without leading zeros.
  id='(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)'
  if ! [[ $v =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-$id(\.$id)*)?$ ]]; then
    echo "version.sh: cannot make an npm version of '$2' (got '$v')" >&2
    exit 1
  fi
  echo "$v"
  exit 0
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0
if v=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
  echo "$v"
  exit 0
fi
dirty=
git diff --no-ext-diff --quiet HEAD -- 2>/dev/null || dirty=.dirty
echo "0.0.0-dev+g$(git rev-parse --short=12 HEAD)$dirty"
