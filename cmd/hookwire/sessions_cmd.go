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
	// Cache is each session's prompt-cache figures (PROTOCOL.md 4.9),
	// the most recently used first; never null.
	Cache []cacheEntry `json:"cache"`
}

// cacheEntry is one session of sessions --json's cache list, in the shape
// PROTOCOL.md 4.9 gives (issue 24).
type cacheEntry struct {
	Session          string  `json:"session"`
	Parent           *string `json:"parent"` // null: a top-level session
	Agent            string  `json:"agent"`
	Requests         int64   `json:"requests"`
	InputTokens      int64   `json:"inputTokens"`
	CacheReadTokens  int64   `json:"cacheReadTokens"`
	CacheWriteTokens int64   `json:"cacheWriteTokens"`
	// NoCacheFigures: requests, and every one reported cache read 0 and
	// cache write 0 (the provider reports no cache figures, PROTOCOL.md 4.9).
	NoCacheFigures bool                 `json:"noCacheFigures,omitempty"`
	Busts          []sessions.CacheBust `json:"busts"` // never null

	share float64
}

func cacheEntries(list []sessions.CacheSession) []cacheEntry {
	out := make([]cacheEntry, 0, len(list))
	for _, c := range list {
		e := cacheEntry{Session: c.Session, Agent: c.Agent, Requests: c.Requests, InputTokens: c.InputTokens,
			CacheReadTokens: c.CacheReadTokens, CacheWriteTokens: c.CacheWriteTokens, NoCacheFigures: c.NoCacheFigures(), Busts: c.Busts, share: c.CacheShare()}
		if c.Parent != "" {
			e.Parent = &c.Parent
		}
		if e.Busts == nil {
			e.Busts = []sessions.CacheBust{}
		}
		out = append(out, e)
	}
	return out
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
	asJSON := flags.Bool("json", false, "print one JSON object (path, exists, parents, frozenBlocks, trackedSessions, sessions, health, cache)")
	if code, done := parseFlags(flags, args, "usage: hookwire sessions [--project DIR | --state FILE] [--json]", stdout, stderr); done {
		return code
	}
	path, code, ok := target.resolve(".", stderr)
	if !ok {
		return code
	}

	list := sessionsList{Path: path, Exists: true, Sessions: []sessions.Entry{}, Health: []sessions.Health{}, Cache: []cacheEntry{}}
	got, err := sessions.ReadStateFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		list.Exists = false
	case err != nil:
		what := "is not loadable state"
		if sessions.IsCorrupt(err) {
			what = "is not loadable state (corrupt)"
		}
		fmt.Fprintf(stderr, "hookwire sessions: %s %s: %v\n", path, what, err)
		if a := sessions.Advice(err, path); a != "" {
			fmt.Fprintf(stderr, "%s%s.\n", strings.ToUpper(a[:1]), a[1:])
		}
		return 1
	default:
		list.Parents, list.FrozenBlocks, list.TrackedSessions = got.Parents, got.FrozenBlocks, got.TrackedSessions
		if got.Sessions != nil {
			list.Sessions = got.Sessions
		}
		if got.Health != nil {
			list.Health = got.Health
		}
		list.Cache = cacheEntries(got.Cache)
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
	cacheOf := make(map[string]*cacheEntry, len(l.Cache))
	for i := range l.Cache {
		cacheOf[l.Cache[i].Session] = &l.Cache[i]
	}
	if len(l.Sessions) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PARENT\tAGENT\tALIAS\tLABEL\tTASK ID\tCACHE\tLAST USE\tMODEL")
		for _, e := range l.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(e.Parent), cell(e.Agent), cell(e.Alias),
				cell(e.Label), cell(e.TaskID), cacheCell(cacheOf[e.TaskID]), lastUse(e.LastUse), modelCell(e.Model))
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
	if len(l.Cache) > 0 {
		fmt.Fprintf(w, "\nprompt cache, per session (%s):\n", plural(len(l.Cache), "session"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tAGENT\tPARENT\tREQUESTS\tCACHE\tLAST BUST")
		for i := range l.Cache {
			c := &l.Cache[i]
			parent, last := "", "-"
			if c.Parent != nil {
				parent = *c.Parent
			}
			if n := len(c.Busts); n > 0 {
				last = cell(bustCause(c.Busts[n-1]))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", cell(c.Session), cell(c.Agent), cell(parent), c.Requests, cacheCell(c), last)
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

// cacheCell is a session's cache share and busts: "87% cached, 2 busts";
// "no cache figures" when the provider reported none (no share to give);
// "-" when no usage was counted for it.
func cacheCell(c *cacheEntry) string {
	if c == nil || c.Requests == 0 {
		return "-"
	}
	if c.NoCacheFigures {
		return "no cache figures"
	}
	return fmt.Sprintf("%d%% cached, %s", int(c.share*100+0.5), plural(len(c.Busts), "bust"))
}

// bustCause says a bust's cause in a few words: "system (hookwire): ...".
func bustCause(b sessions.CacheBust) string {
	who := ""
	if b.ByHookwire {
		who = " (hookwire)"
	}
	return fmt.Sprintf("%s%s, %d tokens: %s", b.Cause, who, b.TokensLost, b.Detail)
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

// pluralEntries is plural for "entry", whose plural is not "entrys".
func pluralEntries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
