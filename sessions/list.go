package sessions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sort"
)

// Listing the store a page at a time (issue 30 item 13): a page of the
// entries, newest use first, with a cursor for the next. With a Backend
// the page is read there (ParentRows.Page, without the store's mutex: its
// hooks go on while a page is read); memory-only it pages what the store
// holds.

// DefaultListLimit is how many entries sessions.list of all parents gives
// and sessions.page without a limit, and MaxListLimit the most one page
// holds: a page is read in a
// few milliseconds and held in a few hundred KiB whatever the database
// holds.
const (
	DefaultListLimit = 1000
	MaxListLimit     = 1000
)

// EntryPage is one page of entries, newest use first; Next is the cursor
// of the page after it ("" when this is the last).
type EntryPage struct {
	Entries []Entry `json:"entries"`
	Next    string  `json:"next,omitempty"`
}

// ErrRefusedFile wraps a backend's refusal to read what is at the state's
// path (a FIFO, a symlink, another non-regular file): the page is listed
// from what this process holds, and the refusal is not a write error (the
// file watcher reports the file in status).
var ErrRefusedFile = errors.New("the state path holds a file hookwire refuses to open")

// ErrBadCursor is a cursor no page gave.
var ErrBadCursor = errors.New("not a cursor a page of this listing gave")

// ListKey is an entry's place in the listing order: tick descending, then
// parent and alias ascending (a total order: (parent, alias) is unique).
type ListKey struct {
	Tick   int64  `json:"t"`
	Parent string `json:"p"`
	Alias  string `json:"a"`
}

// Cursor is the cursor of the page after the entry at k.
func (k ListKey) Cursor() string {
	b, _ := json.Marshal(k)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor is the place a cursor names (nil for "": from the start);
// a cursor no page gave is ErrBadCursor.
func ParseCursor(s string) (*ListKey, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadCursor
	}
	var k ListKey
	if json.Unmarshal(b, &k) != nil || k.Parent == "" || k.Alias == "" {
		return nil, ErrBadCursor
	}
	return &k, nil
}

// Before reports whether a comes before b in the listing order.
func (a ListKey) Before(b ListKey) bool {
	if a.Tick != b.Tick {
		return a.Tick > b.Tick
	}
	if a.Parent != b.Parent {
		return a.Parent < b.Parent
	}
	return a.Alias < b.Alias
}

// ClampLimit is limit within 1..MaxListLimit (0: DefaultListLimit).
func ClampLimit(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return min(limit, MaxListLimit)
}

// listed is an entry with its place in the listing order.
type listed struct {
	entry Entry
	key   ListKey
}

// memPage is the page of parent after cursor among entries the caller
// holds whole (a memory-only store, a JSON state file).
func memPage(all []listed, parent, cursor string, limit int) (EntryPage, error) {
	after, err := ParseCursor(cursor)
	if err != nil {
		return EntryPage{}, err
	}
	limit = ClampLimit(limit)
	sort.Slice(all, func(i, j int) bool { return all[i].key.Before(all[j].key) })
	out := EntryPage{Entries: []Entry{}}
	var last ListKey
	for _, l := range all {
		if parent != "" && l.entry.Parent != parent || after != nil && !after.Before(l.key) {
			continue
		}
		if len(out.Entries) == limit {
			out.Next = last.Cursor()
			break
		}
		out.Entries = append(out.Entries, l.entry)
		last = l.key
	}
	return out, nil
}

// Page returns the page of parent's entries ("" all parents) after
// cursor ("" from the newest), at most limit of them (0:
// DefaultListLimit; at most MaxListLimit), newest use first. With a
// database it reads the page there on a read connection of its own (a
// WAL reader: it never waits for a writer), without the store's mutex,
// so the store's other methods go on while it reads; memory-only it
// pages what the store holds (and so it does when the database cannot be
// read, which is reported). A cursor no page gave is ErrBadCursor.
func (t Tasks) Page(ctx context.Context, parent, cursor string, limit int) (EntryPage, error) {
	s := t.s
	s.pages.Lock()
	defer s.pages.Unlock()
	s.mu.Lock()
	if s.db == nil {
		all := t.listed(parent)
		s.mu.Unlock()
		return memPage(all, parent, cursor, limit)
	}
	b := s.db.b
	s.mu.Unlock()
	page, err := b.Parents.Page(ctx, parent, cursor, limit)
	if err == nil || errors.Is(err, ErrBadCursor) || ctx.Err() != nil {
		return page, err
	}
	// The database cannot be read: reported (status), and what this
	// process holds is listed, as List does.
	s.mu.Lock()
	if s.db != nil && !errors.Is(err, ErrRefusedFile) {
		s.db.report(err)
	}
	all := t.listed(parent)
	s.mu.Unlock()
	return memPage(all, parent, cursor, limit)
}

// listed is every entry of parent ("" all) the store holds with its
// place in the listing order; the caller holds mu.
func (t Tasks) listed(parent string) []listed {
	s := t.s
	var out []listed
	collect := func(p *parentState) {
		for _, a := range p.agents {
			for _, e := range a.entries.All() {
				x := e.export()
				x.Model = s.Tracked().entryModel(e.taskID)
				x.Switches = s.Tracked().switchesOf(e.taskID)
				out = append(out, listed{entry: x, key: ListKey{Tick: int64(e.tick), Parent: p.id, Alias: e.alias}})
			}
		}
	}
	if parent == "" {
		for _, p := range s.parents.list.All() {
			collect(p)
		}
	} else if p := s.cached(parent); p != nil {
		collect(p)
	}
	return out
}
