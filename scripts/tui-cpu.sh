#!/usr/bin/env bash
# CPU at rest of OpenCode's TUI with hookwire's section, against the same
# screen under `opencode --continue --pure` (issue 51's goal: within
# 1.25x). Reuses the TUI home of a registry run kept with
# HOOKWIRE_E2E_KEEP=1 (its plugin installed by name, one session with
# turns done):
#
#   scripts/tui-cpu.sh WORKDIR [ROUNDS] [SECONDS] [COLSxROWS]
#
# Each round starts `opencode --continue` (hookwire) and `opencode
# --continue --pure` in tmux (default 220x50: the sidebar and the section
# on screen), alternating which goes first, waits until the screen is up
# (and the section drawn) and 10 s more, types nothing, and measures the
# CPU time (utime+stime, /proc) of the TUI's whole process tree (OpenCode,
# its workers, hookwire's sidecar and observer) over SECONDS (default 60).
# Prints ms of CPU per second for each run, the medians and their ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/opencode.sh
. "$ROOT/scripts/lib/opencode.sh"
WORKDIR=${1:?usage: tui-cpu.sh WORKDIR [ROUNDS] [SECONDS] [COLSxROWS]}
ROUNDS=${2:-3}
SECS=${3:-60}
SIZE=${4:-220x50}
TUI=$WORKDIR/tui
OC_TAG=tui-cpu
OPENCODE=$(find_opencode) || { log "no opencode $OPENCODE_VERSION under $CACHE"; exit 1; }
SIDECAR=
oc_env
unset HOOKWIRE_BIN
oc_home "$TUI"
SOCK=hookwire-cpu-$$
OUT=$TUI/cpu
mkdir -p "$OUT"
trap 'tmux -L "$SOCK" kill-server 2>/dev/null || true' EXIT

# cpu_of PID: the CPU ticks of PID and every descendant, summed.
cpu_of() {
  node -e '
    const fs = require("fs");
    const kids = new Map(), ticks = new Map();
    for (const d of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const st = fs.readFileSync(`/proc/${d}/stat`, "utf8");
        const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
        const ppid = f[1];
        (kids.get(ppid) ?? kids.set(ppid, []).get(ppid)).push(d);
        ticks.set(d, Number(f[11]) + Number(f[12]));
      } catch {}
    }
    let sum = 0, n = 0;
    const walk = (p) => { sum += ticks.get(p) ?? 0; n++; for (const c of kids.get(p) ?? []) walk(c); };
    walk(process.argv[1]);
    console.log(sum, n);' "$1"
}

# measure NAME ARGS...: one run; prints ms of CPU per second.
measure() {
  local name=$1
  shift
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  sleep 1
  tmux -L "$SOCK" new-session -d -s cpu -x "${SIZE%x*}" -y "${SIZE#*x}" \
    "cd '$TUI/project' && exec '$OPENCODE' --continue $* 2>>'$OUT/$name.err'"
  local pid end
  pid=$(tmux -L "$SOCK" list-panes -t cpu -F '#{pane_pid}')
  end=$(( $(date +%s) + 120 ))
  while :; do
    local s
    s=$(tmux -L "$SOCK" capture-pane -p -t cpu 2>/dev/null || true)
    if [[ $s == *"ctrl+p"* ]] && { [ "$name" = pure ] || [[ $s == *"hookwire "* ]] || [ "${SIZE%x*}" -lt 121 ]; }; then break; fi
    [ "$(date +%s)" -ge "$end" ] && { log "$name: screen not ready"; echo "$s" >"$OUT/$name-notready.txt"; return 1; }
    sleep 0.5
  done
  sleep 10
  read -r t0 n0 < <(cpu_of "$pid")
  local s0 s1
  s0=$(date +%s%3N)
  tmux -L "$SOCK" capture-pane -p -t cpu >"$OUT/$name-before.txt"
  sleep "$SECS"
  read -r t1 n1 < <(cpu_of "$pid")
  s1=$(date +%s%3N)
  tmux -L "$SOCK" capture-pane -p -t cpu >"$OUT/$name-after.txt"
  local hz
  hz=$(getconf CLK_TCK)
  # ticks -> ms, per second of wall time
  node -e 'const [t0,t1,hz,s0,s1]=process.argv.slice(1).map(Number); console.log(((t1-t0)*1000/hz/((s1-s0)/1000)).toFixed(1))' "$t0" "$t1" "$hz" "$s0" "$s1"
  log "$name: $n1 processes"
  tmux -L "$SOCK" kill-server 2>/dev/null || true
}

hw=()
pure=()
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then
    hw+=("$(measure hookwire)")
    pure+=("$(measure pure --pure)")
  else
    pure+=("$(measure pure --pure)")
    hw+=("$(measure hookwire)")
  fi
  log "round $r: hookwire ${hw[-1]} ms/s, pure ${pure[-1]} ms/s"
done
node -e '
  const med = (a) => { const s = a.map(Number).sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
  const hw = process.argv[1].split(" "), pure = process.argv[2].split(" ");
  const h = med(hw), p = med(pure);
  console.log(`hookwire ${hw.join(", ")} ms/s (median ${h}); --pure ${pure.join(", ")} ms/s (median ${p}); ratio ${(h / p).toFixed(2)}x`);' "${hw[*]}" "${pure[*]}"
