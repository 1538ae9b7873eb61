package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/hookwire/hookwire/internal/textsafe"
	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
)

// sessionsList is `hookwire sessions --json`'s output (README, Commands).
type sessionsList struct {
	Path            string           `json:"path"`
	Exists          bool             `json:"exists"` // false: no state database yet, and every count is 0
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
		"read the default state database (the shim's) of the project in `DIR`; default: the current directory",
		"read the state database `FILE`")
	asJSON := flags.Bool("json", false, "print one JSON object (path, exists, parents, frozenBlocks, trackedSessions, sessions, health, cache)")
	if code, done := parseFlags(flags, args, "usage: hookwire sessions [--project DIR | --state FILE] [--json]", stdout, stderr); done {
		return code
	}
	path, code, ok := target.resolve(".", stderr)
	if !ok {
		return code
	}

	list := sessionsList{Path: path, Exists: true, Sessions: []sessions.Entry{}, Health: []sessions.Health{}, Cache: []cacheEntry{}}
	view, err := sessiondb.OpenStateView(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		list.Exists = false
		view = &sessiondb.StateView{}
	case err != nil:
		what := "is not loadable state"
		if sessiondb.IsCorrupt(err) {
			what = "is not loadable state (corrupt)"
		}
		fmt.Fprintf(stderr, "hookwire sessions: %s %s: %v\n", path, what, err)
		if a := sessiondb.Advice(err, path); a != "" {
			fmt.Fprintf(stderr, "%s%s.\n", strings.ToUpper(a[:1]), a[1:])
		}
		return 1
	default:
		list.Parents, list.FrozenBlocks, list.TrackedSessions = view.Parents, view.FrozenBlocks, view.TrackedSessions
		if view.Health != nil {
			list.Health = view.Health
		}
		list.Cache = cacheEntries(view.Cache)
	}
	defer view.Close()

	// The entries are streamed from the database, never held whole
	// (issue 30 item 13); the output is buffered a block at a time.
	out := bufio.NewWriterSize(stdout, 64<<10)
	if *asJSON {
		err = writeSessionsJSON(out, list, view)
	} else {
		err = printSessions(out, list, view)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintln(stderr, "hookwire sessions:", err)
		return 1
	}
	return 0
}

// writeSessionsJSON writes l as one indented JSON object, its sessions
// those of view, streamed: the same bytes as encoding l with them in it.
func writeSessionsJSON(w io.Writer, l sessionsList, view *sessiondb.StateView) error {
	l.Sessions = []sessions.Entry{}
	doc, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	// The one place "sessions": [] can stand: a string's newline is
	// escaped, so the pattern is the member's alone.
	const hole = "\n  \"sessions\": []"
	i := bytes.Index(doc, []byte(hole))
	if i < 0 {
		return errors.New("sessions --json: no sessions member to fill")
	}
	if _, err := w.Write(doc[:i+len(hole)-1]); err != nil {
		return err
	}
	n := 0
	err = view.EachEntry(func(e sessions.Entry) error {
		b, err := json.MarshalIndent(e, "    ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n    "
		if n == 0 {
			sep = "\n    "
		}
		n++
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		if _, err := io.WriteString(w, "\n  "); err != nil {
			return err
		}
	}
	if _, err := w.Write(doc[i+len(hole)-1:]); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

// sessionColumns are the session table's columns but the last (MODEL):
// each padded to its widest cell and two spaces, as text/tabwriter pads
// them (the widths are found in a first pass over the entries, so that
// the table is aligned without holding it).
var sessionColumns = []string{"PARENT", "AGENT", "ALIAS", "LABEL", "TASK ID", "CACHE", "LAST USE"}

func sessionCells(e sessions.Entry, cacheOf map[string]*cacheEntry) [8]string {
	return [8]string{cell(e.Parent), cell(e.Agent), cell(e.Alias), cell(e.Label), cell(e.TaskID),
		cacheCell(cacheOf[e.TaskID]), lastUse(e.LastUse), modelCell(e.Model)}
}

// printSessions writes the human form: a summary line, then an aligned
// table, the most recently active parent first.
func printSessions(w io.Writer, l sessionsList, view *sessiondb.StateView) error {
	if !l.Exists {
		_, err := fmt.Fprintf(w, "%s: no state database yet, nothing remembered\n", l.Path)
		return err
	}
	fmt.Fprintf(w, "%s: %s\n", l.Path, summaryWords(view.Entries, l.Parents, l.FrozenBlocks, l.TrackedSessions))
	cacheOf := make(map[string]*cacheEntry, len(l.Cache))
	for i := range l.Cache {
		cacheOf[l.Cache[i].Session] = &l.Cache[i]
	}
	if view.Entries > 0 {
		var widths [7]int
		for i, h := range sessionColumns {
			widths[i] = textsafe.Width(h)
		}
		err := view.EachEntry(func(e sessions.Entry) error {
			c := sessionCells(e, cacheOf)
			for i := range widths {
				widths[i] = max(widths[i], textsafe.Width(c[i]))
			}
			return nil
		})
		if err != nil {
			return err
		}
		row := func(c [8]string) error {
			for i, wd := range widths {
				if _, err := io.WriteString(w, c[i]); err != nil {
					return err
				}
				if _, err := io.WriteString(w, strings.Repeat(" ", wd-textsafe.Width(c[i])+2)); err != nil {
					return err
				}
			}
			_, err := io.WriteString(w, c[7]+"\n")
			return err
		}
		fmt.Fprintln(w)
		if err := row([8]string{sessionColumns[0], sessionColumns[1], sessionColumns[2], sessionColumns[3], sessionColumns[4], sessionColumns[5], sessionColumns[6], "MODEL"}); err != nil {
			return err
		}
		if err := view.EachEntry(func(e sessions.Entry) error { return row(sessionCells(e, cacheOf)) }); err != nil {
			return err
		}
		err = view.EachEntry(func(e sessions.Entry) error {
			for _, sw := range e.Switches {
				// A pending switch (4.8) was asked for, not seen applied:
				// the session is not said to run on its To.
				kind := "switch"
				if sw.Pending {
					kind = "switch (pending, not applied)"
				}
				if _, err := fmt.Fprintf(w, "%s: %s %s -> %s at %s: %s\n", kind, cell(e.Alias), cell(sw.From), cell(sw.To), lastUse(sw.At), textCell(sw.Reason)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(l.Health) > 0 {
		fmt.Fprintln(w)
		rows := [][]string{{"MODEL", "COOLING UNTIL", "STRIKES", "LAST FAILURE"}}
		for _, h := range l.Health {
			rows = append(rows, []string{cell(h.Model), lastUse(h.Until), strconv.Itoa(h.Strikes), textCell(switchWhy(h.Class, h.Message))})
		}
		if err := writeTable(w, rows); err != nil {
			return err
		}
	}
	if len(l.Cache) > 0 {
		fmt.Fprintf(w, "\nprompt cache, per session (%s):\n", plural(len(l.Cache), "session"))
		rows := [][]string{{"SESSION", "AGENT", "PARENT", "REQUESTS", "CACHE", "LAST BUST"}}
		for i := range l.Cache {
			c := &l.Cache[i]
			parent, last := "", "-"
			if c.Parent != nil {
				parent = *c.Parent
			}
			if n := len(c.Busts); n > 0 {
				last = textCell(bustCause(c.Busts[n-1]))
			}
			rows = append(rows, []string{cell(c.Session), cell(c.Agent), cell(parent), strconv.FormatInt(c.Requests, 10), cacheCell(c), last})
		}
		return writeTable(w, rows)
	}
	return nil
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
	return fmt.Sprintf("%d%% cached, %s", sharePercent(c.share), plural(len(c.Busts), "bust"))
}

// sharePercent is a share as a whole percentage, rounded, except that a
// share short of all never reads 100 (4,368 of 4,380 tokens is 99%) and
// one above none never reads 0.
func sharePercent(share float64) int {
	p := int(share*100 + 0.5)
	switch {
	case p >= 100 && share < 1:
		return 99
	case p <= 0 && share > 0:
		return 1
	}
	return p
}

// bustCause says a bust's cause in a few words: "system (hookwire): ...".
func bustCause(b sessions.CacheBust) string {
	who := ""
	if b.ByHookwire {
		who = " (hookwire)"
	}
	return fmt.Sprintf("%s%s, %d tokens: %s", b.Cause, who, b.TokensLost, b.Detail)
}

// Cells hold text from outside (labels, agent names, provider errors): a
// cell is made safe to print (textsafe.Line: no escape sequences,
// controls, bidi or zero-width characters, one line) and cut to a width
// in columns, an ellipsis saying it was; "" becomes "-". A table cell is
// cut to maxCellColumns, the free text that ends a line to
// maxTextColumns.
const (
	maxCellColumns = 80
	maxTextColumns = 160
)

func cell(s string) string { return cutCell(s, maxCellColumns) }

func textCell(s string) string { return cutCell(s, maxTextColumns) }

func cutCell(s string, cols int) string {
	s = textsafe.Fit(textsafe.Line(s), cols)
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// writeTable writes rows aligned as text/tabwriter aligns them (each cell
// but the last padded to its column's widest and two spaces), measuring
// cells in columns: tabwriter counts code points, so a CJK label pushed
// the columns after it out of line.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], textsafe.Width(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r[:len(r)-1] {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-textsafe.Width(c)+2))
		}
		b.WriteString(r[len(r)-1])
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
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

// summaryWords says what a state holds in a user's words (issue 42 item
// 12: "frozen blocks" and "tracked sessions" were hookwire's own terms):
// "4 subagent sessions under 2 parent sessions (2 saved session lists, 2
// sessions with a known agent)".
func summaryWords(sessions, parents, lists, known int) string {
	with := "sessions with a known agent"
	if known == 1 {
		with = "session with a known agent"
	}
	return fmt.Sprintf("%s under %s (%s, %d %s)", plural(sessions, "subagent session"), plural(parents, "parent session"),
		plural(lists, "saved session list"), known, with)
}

// pluralEntries is plural for "entry", whose plural is not "entrys".
func pluralEntries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
