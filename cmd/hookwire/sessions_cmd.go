package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/hookwire/hookwire/sessions"
)

// sessionsList is `hookwire sessions --json`'s output (README, Commands).
type sessionsList struct {
	Path            string           `json:"path"`
	Exists          bool             `json:"exists"` // false: no state file yet, and every count is 0
	Parents         int              `json:"parents"`
	FrozenBlocks    int              `json:"frozenBlocks"`
	TrackedSessions int              `json:"trackedSessions"`
	Sessions        []sessions.Entry `json:"sessions"` // never null
	// Health is the models' health (PROTOCOL.md 4.8), latest failure first; never null.
	Health []sessions.Health `json:"health"`
}

// sessionsCmd is `hookwire sessions`: it lists what a state file
// remembers, read without its lock, so it works while a sidecar serves the
// file. A missing file is an empty list (exit 0); one the sidecar could
// not load is an error (exit 1).
func sessionsCmd(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("sessions", flag.ContinueOnError)
	target := addStateFlags(flags,
		"read the default state file (the shim's) of the project in `DIR`; default: the current directory",
		"read the state file `FILE`")
	asJSON := flags.Bool("json", false, "print one JSON object (path, exists, parents, frozenBlocks, trackedSessions, sessions, health)")
	if code, done := parseFlags(flags, args, "usage: hookwire sessions [--project DIR | --state FILE] [--json]", stdout, stderr); done {
		return code
	}
	path, code, ok := target.resolve(".", stderr)
	if !ok {
		return code
	}

	list := sessionsList{Path: path, Exists: true, Sessions: []sessions.Entry{}, Health: []sessions.Health{}}
	got, err := sessions.ReadStateFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		list.Exists = false
	case err != nil:
		fmt.Fprintf(stderr, "hookwire sessions: %s is not loadable state: %v\n"+
			"A sidecar starting on it moves it aside and starts empty; `hookwire forget --all --state %s` resets it now.\n",
			path, err, path)
		return 1
	default:
		list.Parents, list.FrozenBlocks, list.TrackedSessions = got.Parents, got.FrozenBlocks, got.TrackedSessions
		if got.Sessions != nil {
			list.Sessions = got.Sessions
		}
		if got.Health != nil {
			list.Health = got.Health
		}
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(list); err != nil {
			fmt.Fprintln(stderr, "hookwire sessions:", err)
			return 1
		}
		return 0
	}
	printSessions(stdout, list)
	return 0
}

// printSessions writes the human form: a summary line, then an aligned
// table, the most recently active parent first.
func printSessions(w io.Writer, l sessionsList) {
	if !l.Exists {
		fmt.Fprintf(w, "%s: no state file yet, nothing remembered\n", l.Path)
		return
	}
	fmt.Fprintf(w, "%s: %s under %s, %s, %s\n", l.Path,
		plural(len(l.Sessions), "session"), plural(l.Parents, "parent"),
		plural(l.FrozenBlocks, "frozen block"), plural(l.TrackedSessions, "tracked session"))
	if len(l.Sessions) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PARENT\tAGENT\tALIAS\tLABEL\tTASK ID\tLAST USE\tMODEL")
		for _, e := range l.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(e.Parent), cell(e.Agent), cell(e.Alias),
				cell(e.Label), cell(e.TaskID), lastUse(e.LastUse), modelCell(e.Model))
		}
		tw.Flush()
		for _, e := range l.Sessions {
			for _, sw := range e.Switches {
				fmt.Fprintf(w, "switch: %s %s -> %s at %s: %s\n", cell(e.Alias), cell(sw.From), cell(sw.To), lastUse(sw.At), cell(sw.Reason))
			}
		}
	}
	if len(l.Health) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "MODEL\tCOOLING UNTIL\tSTRIKES\tLAST FAILURE")
		for _, h := range l.Health {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", cell(h.Model), lastUse(h.Until), h.Strikes, cell(switchWhy(h.Class, h.Message)))
		}
		tw.Flush()
	}
}

// switchWhy is a failure's class and message on one line.
func switchWhy(class, message string) string {
	if message == "" {
		return class
	}
	return class + ": " + message
}

// cell keeps a table cell on one line: control characters (tabs,
// newlines) become spaces; "" becomes "-".
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// modelCell is the task session's model decision (PROTOCOL.md 4.7):
// "fake/m2 high (fallback-chain, changed)"; "-" when none was made.
func modelCell(d *sessions.ModelDecision) string {
	if d == nil {
		return "-"
	}
	s := d.Model
	if d.Variant != "" {
		s += " " + d.Variant
	}
	rung := d.Rung
	if rung == "" {
		rung = "no rung"
	}
	if d.Changed {
		rung += ", changed"
	}
	return cell(s + " (" + rung + ")")
}

func lastUse(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
