#!/usr/bin/env bash
# `make dist` from clean clones (make test-dist):
#   1. a clone of HEAD builds dist/: the five binaries, each in its OS's
#      executable format for its CPU, stamped with the version; SHA256SUMS
#      verifies with `sha256sum -c`; the npm tarballs have the layout
#      OpenCode's npm install needs (the plugin's optionalDependencies at its
#      own version, each platform package with os/cpu and an executable
#      bin/hookwire[.exe]).
#   2. a second clone at another path, with a Go build cache of its own
#      (kept under $HOOKWIRE_CACHE/go-build-dist-check, so only its first run
#      compiles everything), builds the linux/amd64 binary again (one target:
#      the other four go through the same flags, and compiling each from an
#      empty cache is minutes on two cores) and packs the npm tarballs with
#      clone a's other four binaries: the same bytes, and the same tarballs.
# Clones hold the committed tree only: work in progress is not packed.
#
# Env: HOOKWIRE_DIST_KEEP=1 keeps the scratch directory (kept on failure too).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_ROOT=${HOOKWIRE_CACHE:-$HOME/.cache/hookwire}
export HOOKWIRE_CACHE=$CACHE_ROOT npm_config_cache=${npm_config_cache:-$CACHE_ROOT/npm}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hookwire-dist.XXXXXX")
log() { printf '[test-dist] %s\n' "$*" >&2; }
cleanup() {
  local rc=$?
  if [ "$rc" -eq 0 ] && [ "${HOOKWIRE_DIST_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; else log "scratch directory kept: $WORK"; fi
  exit "$rc"
}
trap cleanup EXIT

FAILED=0
pass() { echo "PASS $*"; }
fail() {
  echo "FAIL $*"
  FAILED=1
}

# Both clones get the same version: the one of HEAD, clean.
VERSION=$(cd "$ROOT" && git describe --tags --match 'v[0-9]*' HEAD 2>/dev/null || echo "0.0.0-dev+g$(git rev-parse --short=12 HEAD)")
NPM_VERSION=$(bash "$ROOT/scripts/version.sh" --npm "$VERSION")
log "version $VERSION (npm $NPM_VERSION)"

for c in a b; do git clone --quiet "$ROOT" "$WORK/$c"; done

START=$(date +%s)
log "make dist in clone a"
make -C "$WORK/a" --no-print-directory dist VERSION="$VERSION" >"$WORK/a.log" 2>&1 || {
  tail -30 "$WORK/a.log" >&2
  fail "make dist in a clean clone (see $WORK/a.log)"
  exit 1
}
log "clone a: $(($(date +%s) - START)) s"
DIST=$WORK/a/dist

# --- 1. what dist/ holds ------------------------------------------------------------
# OS/arch -> the header `file` would name: ELF machine, Mach-O cputype, PE machine.
node - "$DIST" "$NPM_VERSION" "$VERSION" <<'EOF' || FAILED=1
const fs = require("fs");
const path = require("path");
const [dist, version, stamp] = process.argv.slice(2);
const want = {
  "linux-amd64": "ELF x86-64", "linux-arm64": "ELF aarch64",
  "darwin-amd64": "Mach-O x86_64", "darwin-arm64": "Mach-O arm64",
  "windows-amd64.exe": "PE32+ x86-64",
};
function format(file) {
  const b = fs.readFileSync(file);
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const m = b.readUInt16LE(18);
    return `ELF ${{ 0x3e: "x86-64", 0xb7: "aarch64" }[m] ?? m}${b[4] === 2 ? "" : " (not 64-bit)"}`;
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4);
    return `Mach-O ${{ 0x01000007: "x86_64", 0x0100000c: "arm64" }[cpu] ?? cpu}`;
  }
  if (b.toString("latin1", 0, 2) === "MZ") {
    const pe = b.readUInt32LE(0x3c);
    if (b.toString("latin1", pe, pe + 4) !== "PE\0\0") return "MZ, no PE header";
    const m = b.readUInt16LE(pe + 4);
    const magic = b.readUInt16LE(pe + 24);
    return `${magic === 0x20b ? "PE32+" : "PE32"} ${{ 0x8664: "x86-64", 0xaa64: "arm64" }[m] ?? m}`;
  }
  return "unknown";
}
let ok = true;
for (const [suffix, expected] of Object.entries(want)) {
  const file = path.join(dist, `hookwire-${version}-${suffix}`);
  if (!fs.existsSync(file)) { console.log(`FAIL binary ${suffix}: ${file} missing`); ok = false; continue; }
  const got = format(file);
  const stamped = fs.readFileSync(file).includes(Buffer.from(stamp));
  if (got !== expected) { console.log(`FAIL binary ${suffix}: ${got}, want ${expected}`); ok = false; }
  else if (!stamped) { console.log(`FAIL binary ${suffix}: ${stamp} is not stamped in it`); ok = false; }
  else console.log(`PASS binary ${suffix}: ${got}, ${(fs.statSync(file).size / 1048576).toFixed(1)} MiB, ${stamp} stamped`);
}
process.exit(ok ? 0 : 1);
EOF

HOST_BIN=$DIST/hookwire-$NPM_VERSION-linux-amd64
if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
  got=$("$HOST_BIN" --version | head -1)
  case $got in "hookwire $VERSION "*) pass "the linux-amd64 binary says: $got" ;; *) fail "the linux-amd64 binary says '$got', want hookwire $VERSION" ;; esac
fi

if (cd "$DIST" && sha256sum --quiet -c SHA256SUMS); then
  pass "SHA256SUMS verifies ($(wc -l <"$DIST/SHA256SUMS") files)"
else
  fail "SHA256SUMS does not verify"
fi
if [ -n "$(ls "$DIST"/*.vsix 2>/dev/null)" ]; then pass "the VS Code extension: $(basename "$DIST"/*.vsix)"; else fail "no .vsix in dist/"; fi

node - "$DIST/npm" "$NPM_VERSION" "$WORK/a/contract/contract.json" <<'EOF' || FAILED=1
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const [dir, version, contractFile] = process.argv.slice(2);
// The platform packages the contract lists, all of them.
const platforms = JSON.parse(fs.readFileSync(contractFile, "utf8")).packages.platforms.map((p) => [p.os, p.cpu]);
const tar = (file, ...args) => execFileSync("tar", [...args, "-zf", path.join(dir, file)], { encoding: "utf8" });
let ok = true;
const say = (good, what) => { console.log(`${good ? "PASS" : "FAIL"} ${what}`); ok &&= good; };
const main = `hookwire-opencode-${version}.tgz`;
if (!fs.existsSync(path.join(dir, main))) { say(false, `${main} missing`); process.exit(1); }
const pkg = JSON.parse(tar(main, "-xO", "package/package.json"));
const files = tar(main, "-t").split("\n").filter(Boolean).sort();
say(JSON.stringify(files) === JSON.stringify(["package/LICENSE", "package/README.md", "package/dist/bin.js", "package/dist/index.d.ts", "package/dist/index.js", "package/dist/server.d.ts", "package/dist/server.js", "package/dist/tui.d.ts", "package/dist/tui.js", "package/package.json"]), `hookwire-opencode holds the bundles of its three entries (., ./server and ./tui), their types, the bin, README, LICENSE: ${files.join(" ")}`);
say(pkg.bin?.["hookwire-opencode"] === "dist/bin.js" && pkg.bin?.hookwire === "dist/bin.js" && /^-rwxr-xr-x/.test(tar(main, "-tv").split("\n").find((l) => l.endsWith("package/dist/bin.js")) ?? ""),
  "hookwire-opencode's bin (hookwire-opencode, hookwire: npx hookwire-opencode doctor) is dist/bin.js, executable");
say(pkg.exports?.["./server"]?.import === "./dist/server.js" && pkg.exports?.["."]?.import === "./dist/index.js", "hookwire-opencode exports . (dist/index.js) and ./server (dist/server.js)");
say(!pkg.dependencies && !pkg.scripts, "hookwire-opencode has no dependencies and no scripts (the bundle carries them)");
for (const entry of ["index", "server", "bin"]) {
  const bundle = tar(main, "-xO", `package/dist/${entry}.js`);
  say(!/^import .* from "(?!node:)/m.test(bundle) && !/require\("(?!node:)[^"]+"\)/.test(bundle), `dist/${entry}.js imports node: modules only`);
}
for (const [os, cpu] of platforms) {
  const name = `hookwire-opencode-${os}-${cpu}`;
  say(pkg.optionalDependencies?.[name] === version, `optionalDependencies["${name}"] is ${version}`);
  const file = `${name}-${version}.tgz`;
  if (!fs.existsSync(path.join(dir, file))) { say(false, `${file} missing`); continue; }
  const p = JSON.parse(tar(file, "-xO", "package/package.json"));
  const exe = os === "win32" ? "hookwire.exe" : "hookwire";
  const bin = tar(file, "-tv").split("\n").find((l) => l.endsWith(`package/bin/${exe}`));
  say(p.name === name && p.version === version && p.os?.join() === os && p.cpu?.join() === cpu && /^-rwxr-xr-x/.test(bin ?? ""),
    `${name}: os ${p.os}, cpu ${p.cpu}, ${bin ? bin.split(/\s+/)[0] + " bin/" + exe : "no bin/" + exe}`);
}
process.exit(ok ? 0 : 1);
EOF

# --- 2. the same bytes from another clone, another path, another build cache ---------
START=$(date +%s)
CHECK_BIN=hookwire-$NPM_VERSION-linux-amd64
log "make dist-bin (linux/amd64) and dist-npm in clone b (GOCACHE $CACHE_ROOT/go-build-dist-check)"
{
  GOCACHE=$CACHE_ROOT/go-build-dist-check make -C "$WORK/b" --no-print-directory dist-bin DIST_TARGETS=linux/amd64 VERSION="$VERSION" &&
    for f in "$DIST"/hookwire-"$NPM_VERSION"-*; do [ -e "$WORK/b/dist/$(basename "$f")" ] || cp "$f" "$WORK/b/dist/"; done &&
    GOCACHE=$CACHE_ROOT/go-build-dist-check make -C "$WORK/b" --no-print-directory -o dist-bin dist-npm VERSION="$VERSION"
} >"$WORK/b.log" 2>&1 || {
  tail -30 "$WORK/b.log" >&2
  fail "make dist-bin/dist-npm in clone b (see $WORK/b.log)"
  exit 1
}
log "clone b: $(($(date +%s) - START)) s"
same=0
differ=()
while read -r sum file; do
  case $file in
    *.vsix) continue ;;                         # vsce zips file times: not compared
    hookwire-"$NPM_VERSION"-*) [ "$file" = "$CHECK_BIN" ] || continue ;; # copied from clone a
  esac
  if [ "$(sha256sum <"$WORK/b/dist/$file" | cut -d' ' -f1)" = "$sum" ]; then same=$((same + 1)); else differ+=("$file"); fi
done <"$DIST/SHA256SUMS"
if [ ${#differ[@]} -eq 0 ] && [ "$same" -ge 7 ]; then
  pass "reproducible: all $same files (the linux/amd64 binary, the 6 npm tarballs) of two clones at different paths, with different Go build caches, are byte-identical"
else
  fail "not reproducible: ${differ[*]:-fewer files than expected ($same)} differ between the two clones"
fi

[ "$FAILED" -eq 0 ] && echo "test-dist: all passed" || echo "test-dist: FAILED"
exit "$FAILED"
