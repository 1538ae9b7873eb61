// Command hookwire is OpenCode's orchestration hooks as a sidecar: it
// speaks JSON-RPC 2.0 on stdin/stdout (PROTOCOL.md) and logs to stderr.
//
//	hookwire [serve] [--framing auto|header|line] [--log-level L] [--log-file F] [--project DIR | --state FILE]
//	                 [--record FILE [--record-redact]]
//	hookwire demo
//	hookwire replay [-update] [-json] [-bin PATH] FILE...
//	hookwire observe [--project DIR | --state FILE] [--framing auto|header|line]
//	hookwire sessions [--project DIR | --state FILE] [--json]
//	hookwire doctor [--project DIR]
//	hookwire forget [--project DIR | --state FILE] [--all | --parent ID | --alias A]
//	hookwire version | --version | -v
//	hookwire help | --help | -h
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			usage(stdout)
			return 0
		case "version", "-v", "-version", "--version":
			fmt.Fprintln(stdout, thisBuild())
			return 0
		}
		if len(args[0]) > 0 && args[0][0] != '-' {
			cmd, args = args[0], args[1:]
		}
	}
	if c, ok := commands[cmd]; ok {
		return c(args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "hookwire: unknown command %q\n", cmd)
	usage(stderr)
	return 2
}

// commands are the subcommands by name; each returns the exit code.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"serve":    serve,
	"demo":     demo,
	"replay":   replayCmd,
	"observe":  observeCmd,
	"sessions": sessionsCmd,
	"doctor":   doctorCmd,
	"forget":   forgetCmd,
}

const serveUsage = `usage: hookwire [serve] [--framing auto|header|line] [--log-level trace|debug|info|warn|error]
                      [--log-file PATH] [--project DIR | --state FILE] [--record FILE [--record-redact]]`

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  hookwire [serve] [--framing auto|header|line] [--log-level trace|debug|info|warn|error]
                   [--log-file PATH] [--project DIR | --state FILE] [--record FILE [--record-redact]]
      speak the hookwire protocol (JSON-RPC 2.0) on stdin/stdout; --project keeps
      the sessions in that project's state file, --state in FILE, neither in memory;
      --record appends every message to a transcript FILE for hookwire replay
  hookwire demo               play a stock OpenCode session (build delegating to explore and general)
                              through the sidecar, no OpenCode or network, and show what hookwire did
  hookwire replay [-update] [-json] [-bin PATH] FILE...
                              replay transcripts against this binary; exit 1 on a difference
  hookwire observe [--project DIR | --state FILE] [--framing F] [--log-level L]
                              a read-only peer of serve for editors: sessions.list, status and
                              sessions.changed from a state file another sidecar serves
  hookwire sessions [--project DIR | --state FILE] [--json]
                              list the sessions a state file remembers (works while a sidecar serves it)
  hookwire doctor [--project DIR]
                              check the binary, OpenCode's plugin config, the state file and the plugin's version
  hookwire forget [--project DIR | --state FILE] [--all | --parent ID | --alias A]
                              forget remembered task sessions (works while a sidecar serves the file)
  hookwire version            (also --version, -v) this build's version
  hookwire help               (also --help, -h) this text

--project defaults to the current directory for sessions, doctor and forget. Each command's
flags: hookwire COMMAND --help.
`)
}
