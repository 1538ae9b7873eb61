#!/usr/bin/env node
// The package's `bin` (hookwire-opencode, hookwire): cli.ts runs the
// platform package's sidecar binary with this command's arguments.
import { runPlatformBinary } from "./cli.js";

// A signal that ended the binary ends this process too where Node lets it
// (SIGTERM, SIGINT, ...); Node ignores SIGPIPE, so the exit status says it
// as the shell would, 128+N (141 for `hookwire-opencode sessions | head`).
runPlatformBinary(process.argv.slice(2)).then(({ code, signal }) => {
  if (signal && signal !== "SIGPIPE") {
    try {
      process.kill(process.pid, signal);
      // It arrives at once, on whichever thread; should it not end us, the status below says it.
      setTimeout(() => process.exit(code), 1000);
      return;
    } catch {
      // not deliverable here: the status below says it
    }
  }
  process.exit(code);
});
