#!/usr/bin/env node
// Packs the npm packages of a release into OUT/*.tgz (`make dist`):
//
//   hookwire-opencode                the plugin: shim/dist/index.js (the
//                                    1.x entry) and dist/server.js (the
//                                    `./server` entry, OpenCode 2 too), each
//                                    one esbuild bundle with no dependencies
//                                    left, their types, README and LICENSE; the five
//                                    platform packages as optionalDependencies;
//                                    dist/bin.js as its bin (hookwire-opencode
//                                    and hookwire: `npx hookwire-opencode
//                                    doctor` runs the platform binary)
//   hookwire-opencode-<os>-<cpu>     bin/hookwire[.exe] only, with os/cpu set
//                                    so npm installs the one that matches
//                                    (the layout of esbuild's @esbuild/* and
//                                    OpenCode's opencode-<os>-<cpu>)
//
// All six carry VERSION. Nothing in the tree is changed: each package is
// staged in a temporary directory and packed with `npm pack`, whose
// tarballs are byte-for-byte the same for the same inputs.
//
//   node scripts/npm-packages.mjs --version V --bin DIR --out OUT
//     DIR holds hookwire-V-<goos>-<goarch>[.exe] (the Makefile's dist-bin)

import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || !process.argv[i + 1]) {
    console.error(`npm-packages: --${name} is required`);
    process.exit(2);
  }
  return process.argv[i + 1];
};
const version = arg("version");
const binDir = resolve(arg("bin"));
const out = resolve(arg("out"));

/** node's platform/arch names (the package names) against Go's GOOS/GOARCH (the binaries'): the contract's list. */
const contract = JSON.parse(readFileSync(join(root, "contract", "contract.json"), "utf8"));
const PLATFORMS = contract.packages.platforms;

const shim = JSON.parse(readFileSync(join(root, "shim", "package.json"), "utf8"));
const repository = { type: "git", url: "git+https://github.com/hookwire/hookwire.git" };
const license = join(root, "LICENSE");

const stageRoot = mkdtempSync(join(tmpdir(), "hookwire-npm-"));
process.on("exit", () => rmSync(stageRoot, { recursive: true, force: true }));
mkdirSync(out, { recursive: true });

function write(dir, name, text) {
  mkdirSync(dirname(join(dir, name)), { recursive: true });
  writeFileSync(join(dir, name), text);
}

/** npm pack DIR into OUT; returns the tarball's file name. */
function pack(dir) {
  const json = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(json)[0].filename;
}

const packed = [];
for (const p of PLATFORMS) {
  const name = `${shim.name}-${p.os}-${p.cpu}`;
  const exe = p.os === "win32" ? "hookwire.exe" : "hookwire";
  const from = join(binDir, `hookwire-${version}-${p.goos}-${p.goarch}${p.os === "win32" ? ".exe" : ""}`);
  if (!existsSync(from)) {
    console.error(`npm-packages: ${from} is missing (make dist-bin builds it)`);
    process.exit(1);
  }
  const dir = join(stageRoot, name);
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(from, join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  copyFileSync(license, join(dir, "LICENSE"));
  const pkg = {
    name,
    version,
    description: `The hookwire sidecar binary for ${p.what}, installed by hookwire-opencode`,
    repository,
    license: shim.license,
    preferUnplugged: true,
    os: [p.os],
    cpu: [p.cpu],
    files: [`bin/${exe}`],
  };
  write(dir, "package.json", JSON.stringify(pkg, null, 2) + "\n");
  write(
    dir,
    "README.md",
    `# ${name}\n\nThe \`hookwire\` sidecar binary for ${p.what}. Install \`hookwire-opencode\`, not this: it lists this package as an optional dependency, and npm picks the one for your platform.\n`,
  );
  packed.push(pack(dir));
}

// The plugin: only what the bundle needs at run time.
{
  const dir = join(stageRoot, shim.name);
  // shim/package.json's files: the bundles of both entries (`.` and
  // `./server`), their types, README; LICENSE comes from the repository root.
  for (const f of shim.files.filter((f) => f !== "LICENSE")) {
    const from = join(root, "shim", f);
    if (!existsSync(from)) {
      console.error(`npm-packages: shim/${f} is missing (cd shim && npm ci && npm run build)`);
      process.exit(1);
    }
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(from, join(dir, f));
  }
  // The bin (`npx hookwire-opencode doctor`): executable in the tarball
  // too, as npm links it as it is on some installs.
  for (const f of new Set(Object.values(shim.bin ?? {}))) chmodSync(join(dir, f), 0o755);
  copyFileSync(license, join(dir, "LICENSE"));
  const pkg = {
    name: shim.name,
    version,
    description: shim.description,
    keywords: ["opencode", "opencode-plugin", "subagents", "hookwire"],
    repository,
    license: shim.license,
    type: shim.type,
    main: shim.main,
    bin: shim.bin,
    types: shim.types,
    exports: shim.exports,
    files: shim.files,
    engines: shim.engines,
    optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`${shim.name}-${p.os}-${p.cpu}`, version])),
  };
  write(dir, "package.json", JSON.stringify(pkg, null, 2) + "\n");
  packed.push(pack(dir));
}

for (const f of packed) console.log(join(out, f));
