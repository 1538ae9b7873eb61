package main

import (
	"bufio"
	"bytes"
	"context"
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
	"unicode/utf8"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
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
	// Subagents are the subagents of the most recently active parents
	// (PROTOCOL.md 4.10), each a subagents.list page: the parent's figures
	// and its first rows; never null.
	Subagents []subagents.Page `json:"subagents"`
}

// The subagents `hookwire sessions` shows: of this many parents, the
// most recently active first, this many rows each (a page says next when
// there are more).
const (
	sessionsSubagentParents = 20
	sessionsSubagentRows    = subagents.MaxLimit
)

// readSubagents reads the subagents' pages of the database at path.
func readSubagents(path string) ([]subagents.Page, error) {
	r := sessiondb.ReadSubagents(path)
	defer r.Close()
	ctx := context.Background()
	parents, err := r.RecentParents(ctx, sessionsSubagentParents)
	if err != nil {
		return nil, err
	}
	out := make([]subagents.Page, 0, len(parents))
	for _, p := range parents {
		page, err := r.SubagentsOf(ctx, p, "", sessionsSubagentRows)
		if err != nil {
			return nil, err
		}
		out = append(out, page)
	}
	return out, nil
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
	asJSON := flags.Bool("json", false, "print one JSON object (path, exists, parents, frozenBlocks, trackedSessions, sessions, health, cache, subagents)")
	if code, done := parseFlags(flags, args, "usage: hookwire sessions [--project DIR | --state FILE] [--json]", stdout, stderr); done {
		return code
	}
	path, code, ok := target.resolve(".", stderr)
	if !ok {
		return code
	}

	list := sessionsList{Path: path, Exists: true, Sessions: []sessions.Entry{}, Health: []sessions.Health{}, Cache: []cacheEntry{}, Subagents: []subagents.Page{}}
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
		if pages, err := readSubagents(path); err != nil {
			fmt.Fprintf(stderr, "hookwire sessions: the subagents' records of %s: %v\n", path, err)
		} else {
			list.Subagents = pages
		}
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
			widths[i] = utf8.RuneCountInString(h)
		}
		err := view.EachEntry(func(e sessions.Entry) error {
			c := sessionCells(e, cacheOf)
			for i := range widths {
				widths[i] = max(widths[i], utf8.RuneCountInString(c[i]))
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
				if _, err := io.WriteString(w, strings.Repeat(" ", wd-utf8.RuneCountInString(c[i])+2)); err != nil {
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
			for _, sw := range switchesOf(e) {
				if _, err := fmt.Fprintf(w, "switch: %s %s -> %s at %s: %s\n", cell(e.Alias), cell(sw.From), cell(sw.To), lastUse(sw.At), cell(sw.Class)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := printSubagents(w, l.Subagents); err != nil {
		return err
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
		return tw.Flush()
	}
	return nil
}

// switchesOf are an entry's model switches one per failure, each with its
// failure's class (PROTOCOL.md 4.10: the switch made while the model
// cools down is the same failure).
func switchesOf(e sessions.Entry) []subagents.Switch {
	recs := make([]subagents.SwitchRecord, 0, len(e.Switches))
	for _, sw := range e.Switches {
		recs = append(recs, subagents.SwitchRecord{From: sw.From, To: sw.To, Reason: sw.Reason, At: sw.At})
	}
	return subagents.Switches(recs)
}

// printSubagents writes each parent's subagents: its figures, own and
// with its subagents, then a row per subagent, running first.
func printSubagents(w io.Writer, pages []subagents.Page) error {
	for _, p := range pages {
		par := p.Parent
		fmt.Fprintf(w, "\nsubagents of %s: %s, %d running; own %s; total with subagents %s\n", cell(par.SessionID),
			plural(par.Subagents, "subagent"), par.Running, figuresCell(par.Own), figuresCell(par.Total))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STATE\tALIAS\tAGENT\tLABEL\tMODEL\tTOKENS\tCOST\tCONTEXT\tSESSION")
		for _, r := range p.Subagents {
			state := string(r.State)
			switch {
			case r.State == subagents.Retrying && r.Retry != nil:
				state = fmt.Sprintf("retrying (attempt %d)", r.Retry.Attempt)
			case r.State == subagents.Failed && r.Error != "":
				state = "failed: " + r.Error
			}
			alias := r.Alias
			if alias != "" && !r.Resumable {
				alias += " (not resumable)"
			}
			ctxUsed := "-"
			if r.Context != nil {
				ctxUsed = fmt.Sprint(r.Context.Used)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(cut(state, 48)), cell(alias), cell(r.Agent), cell(cut(r.Label, 48)), cell(r.Model),
				tokensCell(r.Tokens), costCell(r.Cost), ctxUsed, cell(r.SessionID))
			for _, sw := range r.Switches {
				fmt.Fprintf(tw, "\t  switch\t%s -> %s\t%s\t\t\t\t\t\n", cell(sw.From), cell(sw.To), cell(sw.Class))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if p.Next != "" {
			fmt.Fprintf(w, "(the first %d listed; hookwire observe's subagents.list pages through the rest)\n", len(p.Subagents))
		}
	}
	return nil
}

// cut shortens s to n runes, marking the cut with "…", splitting no
// character a user sees as one.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:core.ClusterStart(s, i)] + "…"
		}
		count++
	}
	return s
}

// figuresCell is figures in a few words: "1,234 tokens, $0.0123".
func figuresCell(f subagents.Figures) string {
	return tokensCell(f.Tokens) + ", " + costCell(f.Cost)
}

// tokensCell is tokens in a few words: "120 in, 40 out, 800 cached".
func tokensCell(t subagents.Tokens) string {
	s := fmt.Sprintf("%d in, %d out", t.Input, t.Output)
	if t.Reasoning > 0 {
		s += fmt.Sprintf(", %d reasoning", t.Reasoning)
	}
	if t.CacheRead > 0 {
		s += fmt.Sprintf(", %d cached", t.CacheRead)
	}
	if t.CacheWrite > 0 {
		s += fmt.Sprintf(", %d cache written", t.CacheWrite)
	}
	return s
}

// costCell is a cost as OpenCode computes it, in dollars.
func costCell(c float64) string { return fmt.Sprintf("$%.4f", c) }

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

// cell keeps a table cell on one line and safe on a terminal: control
// characters (tabs, newlines, ESC) become spaces, and format characters
// (bidi overrides, zero-width spaces) go, but for the zero-width joiner
// that holds an emoji together; "" becomes "-".
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r):
			return ' '
		case r != '\u200d' && unicode.Is(unicode.Cf, r):
			return -1
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
