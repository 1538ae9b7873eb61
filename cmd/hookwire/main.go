// Command hookwire is OpenCode's orchestration hooks as a sidecar: it
// speaks JSON-RPC 2.0 on stdin/stdout (PROTOCOL.md) and logs to stderr.
//
//	hookwire [serve] [--framing auto|header|line] [--log-level L] [--log-file F] [--state FILE]
//	hookwire demo
//	hookwire replay [-update] FILE...
//	hookwire forget [--project DIR | --state FILE] [--all | --parent ID | --alias A]
//	hookwire version
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stderr)
	case "demo":
		return demo(args, stdout, stderr)
	case "replay":
		return replayCmd(args, stdout, stderr)
	case "forget":
		return forgetCmd(args, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "hookwire %s (%s)\n", fullVersion(), goVersion())
		return 0
	case "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "hookwire: unknown command %q\n", cmd)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  hookwire [serve] [--framing auto|header|line] [--log-level trace|debug|info|warn|error]
                   [--log-file PATH] [--state FILE]
      speak the hookwire protocol (JSON-RPC 2.0) on stdin/stdout
  hookwire demo               run a scripted orchestrator session and show what each hook did
  hookwire replay [-update] FILE...
                              replay transcripts against this binary; exit 1 on a difference
  hookwire forget [--project DIR | --state FILE] [--all | --parent ID | --alias A]
                              forget remembered task sessions (refused while a sidecar holds the file)
  hookwire version
`)
}

func fullVersion() string { return version }

func goVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return "unknown go"
}
