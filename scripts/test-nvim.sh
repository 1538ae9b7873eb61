#!/usr/bin/env bash
# The Neovim plugin's test (editors/nvim): real `nvim --headless -u NONE`
# with the plugin on its runtimepath, a real `hookwire serve --project DIR`
# driven by the test over a pipe, and the real `hookwire observe` the
# plugin starts. It checks that an alias created through the serving
# sidecar appears in hookwire://sessions, that a later one appears without
# a manual refresh (each within 2 s), the run states, the mappings, the
# status and :checkhealth hookwire.
#
# Installs Debian's neovim (0.7.2) with apt when nvim is missing. Builds
# nothing: give the sidecar in HOOKWIRE_BIN (make test-nvim does).
#
# Env:
#   HOOKWIRE_BIN          the hookwire binary (required)
#   HOOKWIRE_NVIM_CAPTURE write the sessions buffer's final text to this file
#   HOOKWIRE_NVIM_RUNS    run the test this many times (default 1), for the latency's median
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
: "${HOOKWIRE_BIN:?set HOOKWIRE_BIN to the hookwire binary (make test-nvim builds it)}"
HOOKWIRE_BIN=$(cd "$(dirname "$HOOKWIRE_BIN")" && pwd)/$(basename "$HOOKWIRE_BIN")

if ! command -v nvim >/dev/null 2>&1; then
  echo "test-nvim: nvim not found; installing Debian's neovim" >&2
  if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq neovim >/dev/null
fi
nvim --version | head -1

# :help hookwire from a plain runtimepath, as the README installs it: the
# shipped doc/tags must be there and be what :helptags writes for the doc.
check_help() {
  local tmp got
  tmp=$(mktemp -d)
  cp "$root/editors/nvim/doc/hookwire.txt" "$tmp/"
  nvim --headless -u NONE -i NONE -n -c "helptags $tmp" -c 'qall!' </dev/null
  if ! cmp -s "$tmp/tags" "$root/editors/nvim/doc/tags"; then
    echo "test-nvim: FAIL editors/nvim/doc/tags is not what :helptags writes for hookwire.txt; regenerate it:" >&2
    echo "  nvim --headless -u NONE -c 'helptags editors/nvim/doc' -c q" >&2
    diff "$tmp/tags" "$root/editors/nvim/doc/tags" >&2 || true
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$tmp"
  got=$(cd / && HOME=/nonexistent timeout 20 nvim --headless -u NONE -i NONE -n \
    -c "set runtimepath^=$root/editors/nvim" \
    -c 'try | help hookwire | catch | echo v:exception | endtry' \
    -c 'echo "help:" . expand("%:t") . ":" . getline(".")' -c 'qall!' </dev/null 2>&1 | tr -d '\r')
  case $got in
    *"help:hookwire.txt:"*"*hookwire*"*) echo "ok   :help hookwire opens hookwire.txt from a plain runtimepath" ;;
    *) echo "test-nvim: FAIL :help hookwire from a plain runtimepath: $got" >&2; return 1 ;;
  esac
}
check_help

runs=${HOOKWIRE_NVIM_RUNS:-1}
for i in $(seq 1 "$runs"); do
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/project" "$scratch/state" "$scratch/home"
  # Isolated: the state file lands under the scratch XDG_STATE_HOME, and
  # no user config or shada is read or written.
  env HOME="$scratch/home" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/home/.config" \
    XDG_DATA_HOME="$scratch/home/.local/share" \
    HOOKWIRE_BIN="$HOOKWIRE_BIN" HW_PLUGIN="$root/editors/nvim" HW_PROJECT="$scratch/project" \
    HW_CAPTURE="${HOOKWIRE_NVIM_CAPTURE:-}" \
    timeout 60 nvim --headless -u NONE -i NONE -n \
      -c "luafile $root/editors/nvim/tests/sessions_test.lua" </dev/null
  rm -rf "$scratch"
  trap - EXIT
done
