#!/usr/bin/env node
// The package's `bin` (hookwire-opencode, hookwire): cli.ts runs the
// platform package's sidecar binary with this command's arguments.
import { runPlatformBinary } from "./cli.js";

runPlatformBinary(process.argv.slice(2)).then(({ code, signal }) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code);
});
