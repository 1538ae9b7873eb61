package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/hookwire/hookwire/sessions"
)

// Listing a large database (issue 30 item 13): the entries are read from
// the database a row at a time (StateView.EachEntry, for `hookwire
// sessions`) or a page at a time (StateView.Page and Store.Page, for
// `observe` and `sessions.list`), never as a whole copy of the state. A
// serving store lists on a read connection of its own (lister), without
// its mutex: its hooks go on while a page is read.

const entryColumns = `p.id, e.agent, e.alias, e.task_id, e.label, e.last_use, e.tick, e.run_state, e.run_error, t.model
FROM entries e JOIN parents p ON p.pid=e.pid LEFT JOIN tracked t ON t.session=e.task_id`

// pageQuery is the query of a page: of one parent or all, after a cursor
// or from the start. The page's rows are found first and only they are
// joined with their tracked sessions (for the model and switches), not
// every row the sort passes over.
func pageQuery(parent, after bool) string {
	q := "SELECT x.id, x.agent, x.alias, x.task_id, x.label, x.last_use, x.tick, x.run_state, x.run_error, t.model FROM (SELECT p.id, e.* FROM entries e JOIN parents p ON p.pid=e.pid"
	switch {
	case parent && after:
		q += " WHERE p.id=? AND e.tick<=? AND (e.tick<? OR e.alias>?)"
	case parent:
		q += " WHERE p.id=?"
	case after: // the range e.tick<=? is the index's (schema.go, 4)
		q += " WHERE e.tick<=? AND (e.tick<? OR p.id>? OR (p.id=? AND e.alias>?))"
	}
	return q + " ORDER BY e.tick DESC, p.id, e.alias LIMIT ?) x LEFT JOIN tracked t ON t.session=x.task_id ORDER BY x.tick DESC, x.id, x.alias"
}

// scanEntry reads one row of entryColumns.
func scanEntry(rows *sql.Rows) (sessions.Entry, int64, error) {
	var e sessions.Entry
	var lastUse, tick int64
	var model sql.NullString
	if err := rows.Scan(&e.Parent, &e.Agent, &e.Alias, &e.TaskID, &e.Label, &lastUse, &tick, &e.Run.State, &e.Run.Error, &model); err != nil {
		return sessions.Entry{}, 0, err
	}
	e.LastUse = time.Unix(0, lastUse).UTC()
	if model.Valid {
		var t sessions.TrackedRecord
		restoreTrackedColumn(&t, model.String)
		t = t.Bounded()
		if t.Model != nil {
			e.Model = t.Model
		}
		if len(t.Switches) > 0 {
			e.Switches = t.Switches
		}
	}
	return e, tick, nil
}

// readPage reads the page of parent ("" all) after cursor from c.
func readPage(ctx context.Context, c *dbConn, parent, cursor string, limit int) (sessions.EntryPage, error) {
	after, err := sessions.ParseCursor(cursor)
	if err != nil {
		return sessions.EntryPage{}, err
	}
	limit = sessions.ClampLimit(limit)
	var args []any
	if parent != "" {
		args = append(args, parent)
	}
	if after != nil {
		if parent != "" {
			args = append(args, after.Tick, after.Tick, after.Alias)
		} else {
			args = append(args, after.Tick, after.Tick, after.Parent, after.Parent, after.Alias)
		}
	}
	args = append(args, limit+1) // one more: is there a next page?
	st, err := c.stmt(ctx, pageQuery(parent != "", after != nil))
	if err != nil {
		return sessions.EntryPage{}, classify(err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return sessions.EntryPage{}, classify(err)
	}
	defer rows.Close()
	out := sessions.EntryPage{Entries: make([]sessions.Entry, 0, min(limit, 64))}
	var last sessions.ListKey
	for rows.Next() {
		if len(out.Entries) == limit {
			out.Next = last.Cursor()
			break
		}
		e, tick, err := scanEntry(rows)
		if err != nil {
			return sessions.EntryPage{}, classify(err)
		}
		if listPause != nil {
			listPause()
		}
		out.Entries = append(out.Entries, e)
		last = sessions.ListKey{Tick: tick, Parent: e.Parent, Alias: e.Alias}
	}
	if err := rows.Err(); err != nil {
		return sessions.EntryPage{}, classify(err)
	}
	return out, nil
}

// listPause, when set (tests), is called after each row a page reads.
var listPause func()

// Page reads the page on the lister's connection.
func (d parentRows) Page(ctx context.Context, parent, cursor string, limit int) (sessions.EntryPage, error) {
	d.lister.mu.Lock()
	defer d.lister.mu.Unlock()
	return d.lister.page(ctx, d.c.path, parent, cursor, limit)
}

// lister is a Backend's read connection for Page, opened at the first
// page and closed with the Backend; its mu orders pages.
type lister struct {
	mu   sync.Mutex
	c    *dbConn
	file os.FileInfo
}

// page reads a page from the database at path, on the lister's
// connection (opened again when the file at path is another one); the
// caller holds l.mu.
func (l *lister) page(ctx context.Context, path, parent, cursor string, limit int) (sessions.EntryPage, error) {
	// What is at path now is checked before anything opens it (issue 39
	// items 1 and 2): a FIFO planted there would hang the open, and with
	// it every request after this one; a symlink would list its target's
	// rows. A refused file is not read at all (the connection open on the
	// file that was there is closed too: that file is gone from path).
	if err := CheckStatePath(path); err != nil {
		if l.c != nil {
			l.c.close()
			l.c = nil
		}
		return sessions.EntryPage{}, fmt.Errorf("%w: %w", sessions.ErrRefusedFile, err)
	}
	fi, err := os.Stat(path)
	if l.c != nil && (l.c.path != path || err != nil || !os.SameFile(fi, l.file)) {
		l.c.close()
		l.c = nil
	}
	if l.c == nil {
		c, err := openReader(ctx, path)
		if err != nil {
			return sessions.EntryPage{}, err
		}
		l.c, l.file = c, fi
	}
	return readPage(ctx, l.c, parent, cursor, limit)
}

// close closes the lister's connection, if open: before the Backend's
// own connection closes (the last connection on a database checkpoints
// it).
func (l *lister) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		l.c.close()
		l.c = nil
	}
}

// openReader opens the database at path read-only for listing: as openDB
// does with openReadOnly (immutable where no -shm can be made) but
// without quick_check, which reads every page: a listing opens it per
// page or per read and would pay that each time.
func openReader(ctx context.Context, path string) (*dbConn, error) {
	if err := CheckStatePath(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	var c *dbConn
	err := retryBusy(ctx, func() error {
		var err error
		c, err = connectReadOnly(ctx, path)
		return err
	})
	return c, err
}

// StateView is one read of a state, for `hookwire sessions` and
// `hookwire observe`: its counts, health and prompt-cache figures (each
// bounded: MaxHealthModels, MaxCacheSessions), and its entries streamed
// from the database (EachEntry) or read a page at a time (Page), so that
// memory holds no copy of the whole state. A database is read in one read
// transaction, from OpenStateView to Close: every read sees one state
// however others write (and never waits for them). A JSON state file of
// an earlier release is read whole, as before.
type StateView struct {
	Parents         int // parent sessions, with or without entries
	Entries         int // entries, all parents
	FrozenBlocks    int
	TrackedSessions int
	// Seq is the database's write sequence: every write that changes an
	// entry (or a tracked session, whose model and switches the entries
	// show) changes it. 0 for a JSON state file.
	Seq    int64
	Health []sessions.Health       // latest failure first
	Cache  []sessions.CacheSession // the most recently used first

	c    *dbConn
	ctx  context.Context // what the view's statements run under
	inTx bool
	// A JSON state file's entries, in EachEntry's order, and the
	// memory-only store that holds them (for Page).
	mem      []sessions.Entry
	memStore *sessions.Store
}

// OpenStateView opens the state at path for reading, with the errors
// ReadState gives: a path CheckStatePath refuses is a *FileError; a
// missing state an error matching fs.ErrNotExist; one the sidecar would
// move aside, or of a newer format, an error. An empty file, or a
// database with no schema yet, is an empty view. Close releases it.
func OpenStateView(path string) (*StateView, error) {
	if err := CheckStatePath(path); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if lp := legacyPath(path); lp != "" {
			return jsonView(lp)
		}
	}
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if fi.Size() == 0 {
		return &StateView{}, nil
	}
	if isJSONFile(path) {
		return jsonView(path)
	}
	ctx := context.Background() // OpenStateView takes none yet
	c, _, err := openDB(ctx, path, openReadOnly)
	if errors.Is(err, errEmptyDB) {
		return &StateView{}, nil
	}
	if err != nil {
		return nil, err
	}
	v := &StateView{c: c, ctx: ctx}
	if err := v.read(); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// read begins the view's transaction and reads its counts, health and
// figures.
func (v *StateView) read() error {
	c, ctx := v.c, v.ctx
	if err := c.exec(ctx, "BEGIN"); err != nil {
		return classify(err)
	}
	v.inTx = true
	if err := c.queryRow(ctx, `SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM entries e JOIN parents p ON p.pid=e.pid),
		(SELECT count(*) FROM tracked), (SELECT count(*) FROM frozen), coalesce((SELECT value FROM meta WHERE key='seq'),0)`).
		Scan(&v.Parents, &v.Entries, &v.TrackedSessions, &v.FrozenBlocks, &v.Seq); err != nil {
		return classify(err)
	}
	d := newStoreDB(c)
	if list, err := (healthRows{d}).ReadAll(ctx); err == nil { // no table: a database no sidecar of this build has written
		v.Health = list
	}
	caches, err := cacheRows{d}.ReadAll(ctx)
	if err != nil {
		return err
	}
	for _, sc := range caches {
		cs := sc.CacheSession
		if cs.Busts == nil {
			cs.Busts = []sessions.CacheBust{}
		}
		parent, agent := v.parentAndAgent(cs.Session)
		if parent != "" {
			cs.Parent = parent
		}
		if agent != "" {
			cs.Agent = agent
		}
		v.Cache = append(v.Cache, cs)
	}
	return nil
}

// parentAndAgent is Store.parentAndAgent read from the view's database.
func (v *StateView) parentAndAgent(session string) (parent, agent string) {
	var model sql.NullString
	if v.c.queryRow(v.ctx, "SELECT agent, model FROM tracked WHERE session=?", session).Scan(&agent, &model) == nil {
		if model.Valid {
			var t sessions.TrackedRecord
			restoreTrackedColumn(&t, model.String)
			if t = t.Bounded(); t.Parent != "" {
				return t.Parent, agent
			}
		}
	}
	var entryAgent string
	if v.c.queryRow(v.ctx, "SELECT p.id, e.agent FROM entries e JOIN parents p ON p.pid=e.pid WHERE e.task_id=? LIMIT 1", session).Scan(&parent, &entryAgent) == nil && agent == "" {
		agent = entryAgent
	}
	return parent, agent
}

func jsonView(path string) (*StateView, error) {
	s, err := decodeJSONState(context.Background(), path, sessions.UnboundedConfig())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			err = badJSONError{err}
		}
		return nil, err
	}
	got := contents(s)
	return &StateView{Parents: got.Parents, Entries: len(got.Sessions), FrozenBlocks: got.FrozenBlocks, TrackedSessions: got.TrackedSessions,
		Health: got.Health, Cache: got.Cache, mem: got.Sessions, memStore: s}, nil
}

// EachEntry calls fn with each entry, the most recently active parent's
// first and within a parent the most recently used first (the order of
// StateContents.Sessions), a row at a time; it stops at fn's first
// error and returns it. It may be called more than once: each call sees
// the same state.
func (v *StateView) EachEntry(fn func(sessions.Entry) error) error {
	if v.c == nil {
		for _, e := range v.mem {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
	rows, err := v.c.query(v.ctx, "SELECT "+entryColumns+" ORDER BY p.rev DESC, p.id, e.tick DESC, e.alias")
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		e, _, err := scanEntry(rows)
		if err != nil {
			return classify(err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return classify(rows.Err())
}

// Page is Store.Page of the view: entries newest use first.
func (v *StateView) Page(ctx context.Context, parent, cursor string, limit int) (sessions.EntryPage, error) {
	if v.c == nil {
		if v.memStore == nil {
			return sessions.EntryPage{Entries: []sessions.Entry{}}, nil
		}
		return v.memStore.Tasks().Page(ctx, parent, cursor, limit)
	}
	return readPage(ctx, v.c, parent, cursor, limit)
}

// Close ends the view's read.
func (v *StateView) Close() error {
	if v.c == nil {
		return nil
	}
	if v.inTx {
		v.c.exec(v.ctx, "COMMIT")
	}
	err := v.c.close()
	v.c = nil
	return err
}

// ReadPage reads one page of the state at path (as Store.Page orders
// it) without reading the rest, for an observer's sessions.list: a
// missing state is an empty page; the other errors are OpenStateView's.
func ReadPage(ctx context.Context, path, parent, cursor string, limit int) (sessions.EntryPage, error) {
	if _, err := sessions.ParseCursor(cursor); err != nil {
		return sessions.EntryPage{}, err
	}
	if err := CheckStatePath(path); err != nil {
		return sessions.EntryPage{}, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && !isJSONFile(path) {
		c, err := openReader(ctx, path)
		if errors.Is(err, errEmptyDB) {
			return sessions.EntryPage{Entries: []sessions.Entry{}}, nil
		}
		if err != nil {
			return sessions.EntryPage{}, err
		}
		defer c.close()
		return readPage(ctx, c, parent, cursor, limit)
	}
	v, err := OpenStateView(path)
	if errors.Is(err, fs.ErrNotExist) {
		return sessions.EntryPage{Entries: []sessions.Entry{}}, nil
	}
	if err != nil {
		return sessions.EntryPage{}, err
	}
	defer v.Close()
	return v.Page(ctx, parent, cursor, limit)
}
