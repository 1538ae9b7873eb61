package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rs/zerolog"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/transcript"
)

const replayUsage = "usage: hookwire replay [-update] [-json] [-bin PATH] FILE..."

func replayCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	update := fs.Bool("update", false, "rewrite each transcript's replies with what the sidecar answered")
	bin := fs.String("bin", "", "sidecar binary to replay against (default: this executable)")
	asJSON := fs.Bool("json", false, "write one JSON object per transcript (its steps and differences) instead of the report, for scripts")
	if code, done := parseFlagsWithArgs(fs, args, replayUsage, stdout, stderr); done {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "hookwire replay: name one or more transcript files")
		return 2
	}
	if *bin == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(stderr, "hookwire replay:", err)
			return 2
		}
		*bin = exe
	}
	target := transcript.Process{Bin: *bin}
	failed := false
	for _, path := range fs.Args() {
		steps, diffs, err := transcript.ReplayFile(path, target, transcript.ReplayOptions{Update: *update})
		failed = failed || err != nil || len(diffs) > 0
		if *asJSON {
			if err := writeReplayJSON(stdout, path, steps, diffs, err); err != nil {
				fmt.Fprintln(stderr, "hookwire replay:", err)
				return 1
			}
			continue
		}
		switch {
		case err != nil:
			fmt.Fprintf(stdout, "FAIL %s: %v\n", path, err)
		case len(diffs) > 0:
			fmt.Fprintf(stdout, "FAIL %s\n", path)
			for _, d := range diffs {
				fmt.Fprintln(stdout, indent(d.String(), "  "))
			}
		case *update:
			fmt.Fprintf(stdout, "updated %s\n", path)
		default:
			fmt.Fprintf(stdout, "ok   %s\n", path)
		}
	}
	if failed {
		return 1
	}
	return 0
}

// replayJSON is what `hookwire replay -json` writes for each transcript,
// one line each, so a script reads transcripts and results without a
// parser of its own.
type replayJSON struct {
	File string `json:"file"`
	// OK: every reply matched (or, with -update, the file was rewritten).
	OK bool `json:"ok"`
	// Error says why the replay could not run or finish; absent when it did.
	Error string `json:"error,omitempty"`
	// Steps are the transcript's steps as read (with -update, as written);
	// absent when the file could not be read.
	Steps       []replayJSONStep       `json:"steps"`
	Differences []replayJSONDifference `json:"differences"`
}

type replayJSONStep struct {
	Step  int             `json:"step"` // counted from 1
	Line  int             `json:"line"`
	Value transcript.Step `json:"value"` // the step as the file holds it: {"send": ...}, ...
}

type replayJSONDifference struct {
	Step int             `json:"step"`
	Line int             `json:"line"`
	What string          `json:"what"`
	Want json.RawMessage `json:"want"`
	Got  json.RawMessage `json:"got"`
}

func writeReplayJSON(w io.Writer, path string, steps []transcript.Step, diffs []transcript.Difference, err error) error {
	out := replayJSON{File: path, OK: err == nil && len(diffs) == 0, Steps: []replayJSONStep{}, Differences: []replayJSONDifference{}}
	if err != nil {
		out.Error = err.Error()
	}
	for i, st := range steps {
		out.Steps = append(out.Steps, replayJSONStep{Step: i + 1, Line: st.Line, Value: st})
	}
	for _, d := range diffs {
		out.Differences = append(out.Differences, replayJSONDifference{Step: d.Step, Line: d.Line, What: d.What, Want: d.Want, Got: d.Got})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// serveInProcess is `hookwire serve --framing line` run in this process,
// without logs: the server of the demo, and a replay's in-process target
// (transcript.InProcess). state is the state file to serve, "" for none.
func serveInProcess(ctx context.Context, state string, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	log := zerolog.Nop()
	srv := newServer(ctx, cancel, log, state, "", nil)
	err := rpc.Serve(ctx, in, out, srv, rpc.Options{Framing: rpc.FramingLine, MaxMessageBytes: srv.MaxMessageBytes, Log: log})
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	return err
}
