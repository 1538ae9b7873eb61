package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// The subagents' records (PROTOCOL.md 4.10): subagents.Service over the
// state database, each intent one function that begins and ends its own
// write transaction. It has a connection of its own (the store's is the
// store's, under the store's lock); this process's writers on the file
// take turns with it (dbwriters.go), other processes' through SQLite's
// lock and the writers' queue (dbqueue.go).
//
// The tables are made at each open for writing (IF NOT EXISTS) and the
// format number is not raised: a sidecar of format 6 still running on
// the same database (a plugin upgraded while OpenCode is open) goes on
// writing its own tables, where a raised format would refuse its every
// write (issue 39 item 6). It never reads these tables and never prunes
// them, so they are pruned here, within their own caps. The next format
// change lists this schema as a numbered migration with IF NOT EXISTS, as
// migrations 2 and 3 did for the tables builds of format 1 made.
const subagentSchema = `
CREATE TABLE IF NOT EXISTS subagents(session TEXT PRIMARY KEY, parent TEXT NOT NULL, root TEXT NOT NULL,
  depth INTEGER NOT NULL, agent TEXT NOT NULL DEFAULT '', label TEXT NOT NULL DEFAULT '', alias TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL, active INTEGER NOT NULL, started_ns INTEGER NOT NULL, ended_ns INTEGER NOT NULL DEFAULT 0,
  retry_attempt INTEGER NOT NULL DEFAULT 0, retry_next_ns INTEGER NOT NULL DEFAULT 0, retry_message TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', last_msg TEXT NOT NULL DEFAULT '', ctx_used INTEGER NOT NULL DEFAULT 0,
  t_in INTEGER NOT NULL DEFAULT 0, t_out INTEGER NOT NULL DEFAULT 0, t_reason INTEGER NOT NULL DEFAULT 0,
  t_cread INTEGER NOT NULL DEFAULT 0, t_cwrite INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0,
  owner INTEGER NOT NULL DEFAULT 0, rev INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS subagents_root ON subagents(root, active, started_ns, session);
CREATE INDEX IF NOT EXISTS subagents_parent ON subagents(parent, active, started_ns, session);
CREATE INDEX IF NOT EXISTS subagents_started ON subagents(started_ns);
CREATE INDEX IF NOT EXISTS subagents_rev ON subagents(rev);
CREATE TABLE IF NOT EXISTS subagent_roots(root TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0,
  o_in INTEGER NOT NULL DEFAULT 0, o_out INTEGER NOT NULL DEFAULT 0, o_reason INTEGER NOT NULL DEFAULT 0,
  o_cread INTEGER NOT NULL DEFAULT 0, o_cwrite INTEGER NOT NULL DEFAULT 0, o_cost REAL NOT NULL DEFAULT 0,
  a_in INTEGER NOT NULL DEFAULT 0, a_out INTEGER NOT NULL DEFAULT 0, a_reason INTEGER NOT NULL DEFAULT 0,
  a_cread INTEGER NOT NULL DEFAULT 0, a_cwrite INTEGER NOT NULL DEFAULT 0, a_cost REAL NOT NULL DEFAULT 0,
  used_ns INTEGER NOT NULL DEFAULT 0, rev INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS subagent_roots_used ON subagent_roots(used_ns);
CREATE INDEX IF NOT EXISTS subagent_roots_rev ON subagent_roots(rev);
CREATE TABLE IF NOT EXISTS subagent_messages(session TEXT NOT NULL, message TEXT NOT NULL,
  t_in INTEGER NOT NULL, t_out INTEGER NOT NULL, t_reason INTEGER NOT NULL, t_cread INTEGER NOT NULL, t_cwrite INTEGER NOT NULL,
  cost REAL NOT NULL, done INTEGER NOT NULL, PRIMARY KEY(session, message)) WITHOUT ROWID;
`

// The caps of the subagents' tables: rows beyond them go, the oldest
// first (PROTOCOL.md 4.10).
const (
	MaxSubagents       = 10000
	MaxSubagentParents = 2000
	// MaxSubagentMessages bounds the messages kept while their sessions
	// may still report them (folded at the end of each session).
	MaxSubagentMessages = 50000
)

// memoryStoreTables stand in for the store's tables in memory.
const memoryStoreTables = `CREATE TABLE entries(task_id TEXT, alias TEXT);
CREATE TABLE tracked(session TEXT PRIMARY KEY, model TEXT) WITHOUT ROWID;
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;`

// revKey is the subagents' revision counter in the store's meta table
// (the store reads only its own keys there).
const revKey = "subagent_rev"

// noSubagentTables: a database no writer of this build has opened yet,
// read-only: no subagents.
func noSubagentTables(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table: subagent")
}

// Subagents is subagents.Service over the state database at a path (or
// in memory). Its methods are safe for concurrent use.
type Subagents struct {
	path     string
	readOnly bool
	memory   bool
	pid      int
	// alive reports whether the process of a pid is alive (a row of a
	// dead writer reads interrupted).
	alive func(pid int) bool

	mu   sync.Mutex
	c    *dbConn
	file os.FileInfo
	// version and rev: PRAGMA data_version and the highest revision at the
	// last Changes, for the observer's check.
	version, rev int64
	seen         bool

	// rowsRead counts the rows this Subagents read from the database for
	// its callers (a test holds a page's reads to its rows).
	rowsRead atomic.Int64
}

var _ subagents.Service = (*Subagents)(nil)

// OpenSubagents opens the subagents' records in the state database at
// path for writing, making their tables when missing. The database must
// be one a sidecar opened (OpenDatabase checked and migrated it).
func OpenSubagents(ctx context.Context, path string) (*Subagents, error) {
	s := &Subagents{path: path, pid: os.Getpid(), alive: processAlive}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.conn(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadSubagents reads the subagents' records of the database at path,
// read-only, on one connection kept between calls (reopened when the
// path names another file): for `hookwire observe` and `hookwire
// sessions`. A missing file reads as no subagents.
func ReadSubagents(path string) *Subagents {
	return &Subagents{path: path, readOnly: true, pid: os.Getpid(), alive: processAlive}
}

// MemorySubagents keeps the records in memory, for a sidecar without a
// state database.
func MemorySubagents() *Subagents {
	return &Subagents{memory: true, pid: os.Getpid(), alive: processAlive}
}

// RowsRead is how many rows the Subagents has read for its callers.
func (s *Subagents) RowsRead() int64 { return s.rowsRead.Load() }

// Close releases the connection.
func (s *Subagents) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return nil
	}
	err := s.c.close()
	s.c = nil
	return err
}

// quiet is ctx without its cancellation: the records' statements are
// short and bounded by the busy timeout, and the SQLite driver starts a
// goroutine per statement to watch a context that can be cancelled (a
// busy sidecar's goroutines grew with its writes).
func quiet(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// errNoFile: a reader of a path where no database is.
var errNoFile = errors.New("no state database")

// conn is the connection, opened (again) when there is none or the path
// names another file than the one open. s.mu is held.
func (s *Subagents) conn(ctx context.Context) (*dbConn, error) {
	if s.memory {
		if s.c == nil {
			db, err := sql.Open("sqlite", "file::memory:")
			if err != nil {
				return nil, err
			}
			db.SetMaxOpenConns(1)
			conn, err := db.Conn(ctx)
			if err != nil {
				db.Close()
				return nil, err
			}
			c := &dbConn{db: db, conn: conn, stmts: map[string]*sql.Stmt{}}
			// The store's tables a page joins, empty: no aliases, no switches.
			if _, err := conn.ExecContext(ctx, subagentSchema+memoryStoreTables); err != nil {
				c.conn.Close()
				db.Close()
				return nil, err
			}
			s.c = c
		}
		return s.c, nil
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		if s.c != nil {
			s.c.close()
			s.c = nil
		}
		if s.readOnly && errors.Is(err, os.ErrNotExist) {
			return nil, errNoFile
		}
		return nil, err
	}
	if s.c != nil && s.file != nil && os.SameFile(fi, s.file) {
		return s.c, nil
	}
	if s.c != nil {
		s.c.close()
		s.c = nil
	}
	var c *dbConn
	if s.readOnly {
		c, err = openReader(ctx, s.path)
	} else {
		if err = CheckStatePath(s.path); err == nil {
			c, err = connect(ctx, s.path, map[string][]string{"mode": {"rw"}}, false)
		}
		if err == nil {
			if err = c.check(ctx); err == nil {
				// As the store's connection writes (setUp): the file is in
				// WAL already, the sidecar having opened it.
				_, err = c.conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL")
			}
			if err == nil {
				err = c.inTx(ctx, func() error { _, err := c.conn.ExecContext(ctx, subagentSchema); return err })
			}
			if err != nil {
				c.close()
				c = nil
			}
		}
	}
	if err != nil {
		return nil, classify(err)
	}
	s.c, s.file, s.seen = c, fi, false
	return c, nil
}

// known reports whether the records hold anything of session (a
// subagent's row, a parent's, or its messages): a status, an end or a
// deletion of a session they do not know writes nothing, so the events of
// sessions without subagents cost a read, not a write transaction. What
// another process records between this read and a write is recorded by
// that process's own intents.
func (s *Subagents) known(ctx context.Context, session string) (bool, error) {
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if err != nil {
		return false, err
	}
	var found bool
	err = c.queryRow(ctx, `SELECT EXISTS(SELECT 1 FROM subagents WHERE session=?) OR EXISTS(SELECT 1 FROM subagent_roots WHERE root=?)
		OR EXISTS(SELECT 1 FROM subagent_messages WHERE session=?)`, session, session, session).Scan(&found)
	return found, classify(err)
}

// write runs fn in one write transaction; changed collects the roots it
// names.
func (s *Subagents) write(ctx context.Context, fn func(c *dbConn, tx *subTx) error) (subagents.Changed, error) {
	if s.readOnly {
		return subagents.Changed{}, errors.New("the subagents' records are open read-only")
	}
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if err != nil {
		return subagents.Changed{}, err
	}
	tx := &subTx{c: c, pid: s.pid}
	err = c.inTx(ctx, func() error {
		if err := fn(c, tx); err != nil {
			return err
		}
		if tx.rev%pruneEvery != 0 {
			return nil
		}
		return pruneSubagents(ctx, c)
	})
	if err != nil {
		return subagents.Changed{}, err
	}
	return subagents.Changed{Parents: tx.roots}, nil
}

// subTx is one intent's transaction: its revision and the roots it
// changed.
type subTx struct {
	c     *dbConn
	pid   int
	rev   int64
	roots []string
}

// nextRev is the revision this transaction writes (the counter's next),
// taken once.
func (t *subTx) nextRev(ctx context.Context) (int64, error) {
	if t.rev == 0 {
		// A counter of its own in meta, never reused: a revision read
		// off the rows would go back when the newest rows are deleted,
		// and the observer (Changes) would miss the writes after.
		if err := t.c.exec(ctx, "INSERT INTO meta(key, value) VALUES('"+revKey+"', 1) ON CONFLICT(key) DO UPDATE SET value=value+1"); err != nil {
			return 0, err
		}
		if err := t.c.queryRow(ctx, "SELECT value FROM meta WHERE key='"+revKey+"'").Scan(&t.rev); err != nil {
			return 0, err
		}
	}
	return t.rev, nil
}

// changed notes root as changed and stamps its row with the revision.
func (t *subTx) changed(ctx context.Context, root string, at time.Time) error {
	rev, err := t.nextRev(ctx)
	if err != nil {
		return err
	}
	if err := t.c.exec(ctx, "INSERT INTO subagent_roots(root, used_ns, rev) VALUES(?,?,?) ON CONFLICT(root) DO UPDATE SET used_ns=max(used_ns, excluded.used_ns), rev=excluded.rev", root, at.UnixNano(), rev); err != nil {
		return err
	}
	for _, r := range t.roots {
		if r == root {
			return nil
		}
	}
	t.roots = append(t.roots, root)
	return nil
}

// subRow is what an intent reads of a subagent's row.
type subRow struct {
	parent, root string
	depth        int
	state        subagents.State
	lastMsg      string
	retryAttempt int
	retryNext    int64
	retryMessage string
	owner        int
}

// readRow reads session's row; ok false when it is no subagent.
func readRow(ctx context.Context, c *dbConn, session string) (r subRow, ok bool, err error) {
	var state string
	err = c.queryRow(ctx, "SELECT parent, root, depth, state, last_msg, retry_attempt, retry_next_ns, retry_message, owner FROM subagents WHERE session=?", session).
		Scan(&r.parent, &r.root, &r.depth, &state, &r.lastMsg, &r.retryAttempt, &r.retryNext, &r.retryMessage, &r.owner)
	if errors.Is(err, sql.ErrNoRows) {
		return subRow{}, false, nil
	}
	r.state = subagents.State(state)
	return r, err == nil, err
}

func active(s subagents.State) int {
	if subagents.Active(s) {
		return 1
	}
	return 0
}

// SubagentStarted implements subagents.Service.
func (s *Subagents) SubagentStarted(ctx context.Context, st subagents.Started) (subagents.Changed, error) {
	if st.Session == "" || st.Parent == "" || st.Session == st.Parent {
		return subagents.Changed{}, nil
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		if _, ok, err := readRow(ctx, c, st.Session); err != nil || ok {
			return err // known already: its creation is not news
		}
		root, depth := st.Parent, 1
		if p, ok, err := readRow(ctx, c, st.Parent); err != nil {
			return err
		} else if ok {
			root, depth = p.root, p.depth+1
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		if err := c.exec(ctx, `INSERT INTO subagents(session, parent, root, depth, agent, label, state, active, started_ns, owner, rev)
			VALUES(?,?,?,?,?,?,?,1,?,?,?)`, st.Session, st.Parent, root, depth, st.Agent, subagents.Cut(st.Label), subagents.Running, st.At.UnixNano(), tx.pid, rev); err != nil {
			return err
		}
		if err := tx.changed(ctx, root, st.At); err != nil {
			return err
		}
		return c.exec(ctx, "UPDATE subagent_roots SET n=n+1 WHERE root=?", root)
	})
}

// pruneEvery: the caps are enforced in the transaction of every
// pruneEvery-th revision (each check walks the indexes up to the caps),
// so the tables are over them by fewer than pruneEvery rows at most.
const pruneEvery = 64

// pruneSubagents keeps the tables within their caps, the oldest out
// first: subagents by start (with their messages), parents by use (with
// their subagents).
func pruneSubagents(ctx context.Context, c *dbConn) error {
	if err := c.exec(ctx, `DELETE FROM subagent_messages WHERE session IN
		(SELECT session FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?)`, MaxSubagents); err != nil {
		return err
	}
	if err := c.exec(ctx, `UPDATE subagent_roots SET n = n - (SELECT count(*) FROM
		(SELECT root FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?) o WHERE o.root = subagent_roots.root)
		WHERE root IN (SELECT root FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?)`, MaxSubagents, MaxSubagents); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM subagents WHERE session IN (SELECT session FROM subagents ORDER BY started_ns DESC LIMIT -1 OFFSET ?)", MaxSubagents); err != nil {
		return err
	}
	var old []string
	rows, err := c.query(ctx, "SELECT root FROM subagent_roots ORDER BY used_ns DESC LIMIT -1 OFFSET ?", MaxSubagentParents)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return err
		}
		old = append(old, r)
	}
	rows.Close()
	for _, r := range old {
		if err := forgetRoot(ctx, c, r); err != nil {
			return err
		}
	}
	// Messages beyond their cap: the oldest sessions' go first (a session
	// that reports a message again after that counts it anew).
	return c.exec(ctx, `DELETE FROM subagent_messages WHERE done=1 AND (SELECT count(*) FROM subagent_messages) > ?`, MaxSubagentMessages)
}

// forgetRoot drops a top-level session's records and its subagents'.
func forgetRoot(ctx context.Context, c *dbConn, root string) error {
	if err := c.exec(ctx, "DELETE FROM subagent_messages WHERE session IN (SELECT session FROM subagents WHERE root=?) OR session=?", root, root); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM subagents WHERE root=?", root); err != nil {
		return err
	}
	return c.exec(ctx, "DELETE FROM subagent_roots WHERE root=?", root)
}

// SubagentStatus implements subagents.Service.
func (s *Subagents) SubagentStatus(ctx context.Context, session string, ev subagents.Event, retry *subagents.Retry, at time.Time) (subagents.Changed, error) {
	if session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		r, ok, err := readRow(ctx, c, session)
		if err != nil || !ok {
			return err
		}
		next := subagents.Next(r.state, ev)
		attempt, nextNs, message := 0, int64(0), ""
		if next == subagents.Retrying && retry != nil {
			attempt, message = retry.Attempt, subagents.Cut(retry.Message)
			if retry.Next != nil {
				nextNs = retry.Next.UnixNano()
			}
		}
		if next == r.state && attempt == r.retryAttempt && nextNs == r.retryNext && message == r.retryMessage && r.owner == tx.pid {
			return nil
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		if err := c.exec(ctx, `UPDATE subagents SET state=?, active=?, ended_ns=0, error='', retry_attempt=?, retry_next_ns=?, retry_message=?, owner=?, rev=? WHERE session=?`,
			next, active(next), attempt, nextNs, message, tx.pid, rev, session); err != nil {
			return err
		}
		return tx.changed(ctx, r.root, at)
	})
}

// SubagentEnded implements subagents.Service.
func (s *Subagents) SubagentEnded(ctx context.Context, session string, ev subagents.Event, reason string, at time.Time) (subagents.Changed, error) {
	if session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		// What the session's messages will not report again is in its
		// sums: its messages' rows go.
		if err := c.exec(ctx, "DELETE FROM subagent_messages WHERE session=? AND done=1", session); err != nil {
			return err
		}
		r, ok, err := readRow(ctx, c, session)
		if err != nil || !ok {
			return err
		}
		next := subagents.Next(r.state, ev)
		if next == r.state && !subagents.Active(r.state) {
			// Ended already; a failure's later report may say more
			// (session.error's text after the message's error name).
			if next != subagents.Failed || reason == "" {
				return nil
			}
			res, err := c.execResult(ctx, "UPDATE subagents SET error=? WHERE session=? AND error<>? AND length(error)<?", subagents.Cut(reason), session, subagents.Cut(reason), len(subagents.Cut(reason)))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			rev, err := tx.nextRev(ctx)
			if err != nil {
				return err
			}
			if err := c.exec(ctx, "UPDATE subagents SET rev=? WHERE session=?", rev, session); err != nil {
				return err
			}
			return tx.changed(ctx, r.root, at)
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		set := "state=?, active=?, ended_ns=?, retry_attempt=0, retry_next_ns=0, retry_message='', owner=?, rev=?"
		args := []any{next, active(next), at.UnixNano(), tx.pid, rev}
		switch next {
		case subagents.Failed:
			set += ", error=?"
			args = append(args, subagents.Cut(reason))
		case subagents.Done:
			set += ", error=''"
		}
		if err := c.exec(ctx, "UPDATE subagents SET "+set+" WHERE session=?", append(args, session)...); err != nil {
			return err
		}
		return tx.changed(ctx, r.root, at)
	})
}

// SubagentMessage implements subagents.Service: the message's figures
// replace those it had (none the first time), and the difference goes to
// its session's sums and to its top-level parent's total (its own, when
// the session is no subagent).
func (s *Subagents) SubagentMessage(ctx context.Context, m subagents.Message) (subagents.Changed, error) {
	if m.Session == "" || m.ID == "" {
		return subagents.Changed{}, nil
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		var old subagents.Figures
		var oldDone bool
		err := c.queryRow(ctx, "SELECT t_in, t_out, t_reason, t_cread, t_cwrite, cost, done FROM subagent_messages WHERE session=? AND message=?", m.Session, m.ID).
			Scan(&old.Tokens.Input, &old.Tokens.Output, &old.Tokens.Reasoning, &old.Tokens.CacheRead, &old.Tokens.CacheWrite, &old.Cost, &oldDone)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		now := subagents.Figures{Tokens: m.Tokens, Cost: m.Cost}
		delta := now.Sub(old)
		if err := c.exec(ctx, `INSERT INTO subagent_messages(session, message, t_in, t_out, t_reason, t_cread, t_cwrite, cost, done) VALUES(?,?,?,?,?,?,?,?,?)
			ON CONFLICT(session, message) DO UPDATE SET t_in=excluded.t_in, t_out=excluded.t_out, t_reason=excluded.t_reason,
			t_cread=excluded.t_cread, t_cwrite=excluded.t_cwrite, cost=excluded.cost, done=excluded.done`,
			m.Session, m.ID, m.Tokens.Input, m.Tokens.Output, m.Tokens.Reasoning, m.Tokens.CacheRead, m.Tokens.CacheWrite, m.Cost, m.Done); err != nil {
			return err
		}
		r, child, err := readRow(ctx, c, m.Session)
		if err != nil {
			return err
		}
		if !child {
			if delta == (subagents.Figures{}) {
				return nil
			}
			if err := tx.changed(ctx, m.Session, m.At); err != nil {
				return err
			}
			return addFigures(ctx, c, m.Session, delta, true)
		}
		next := r.state
		if !m.Done && m.ErrName == "" && !subagents.Active(r.state) {
			next = subagents.Next(r.state, subagents.Busy) // a message growing: at work again
		}
		latest := m.ID >= r.lastMsg
		if delta == (subagents.Figures{}) && next == r.state && (!latest || m.ID == r.lastMsg) && r.owner == tx.pid {
			return nil
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		set := "t_in=t_in+?, t_out=t_out+?, t_reason=t_reason+?, t_cread=t_cread+?, t_cwrite=t_cwrite+?, cost=cost+?, state=?, active=?, owner=?, rev=?"
		args := []any{delta.Tokens.Input, delta.Tokens.Output, delta.Tokens.Reasoning, delta.Tokens.CacheRead, delta.Tokens.CacheWrite, delta.Cost, next, active(next), tx.pid, rev}
		if next != r.state {
			set += ", ended_ns=0, error=''"
		}
		if latest {
			set += ", last_msg=?, ctx_used=?"
			args = append(args, m.ID, m.Tokens.Context())
			if m.Model != "" {
				set += ", model=?"
				args = append(args, m.Model)
			}
		}
		if err := c.exec(ctx, "UPDATE subagents SET "+set+" WHERE session=?", append(args, m.Session)...); err != nil {
			return err
		}
		if err := tx.changed(ctx, r.root, m.At); err != nil {
			return err
		}
		return addFigures(ctx, c, r.root, delta, false)
	})
}

// addFigures adds delta to root's total, and to its own figures when own.
func addFigures(ctx context.Context, c *dbConn, root string, d subagents.Figures, own bool) error {
	if own {
		if err := c.exec(ctx, `UPDATE subagent_roots SET o_in=o_in+?, o_out=o_out+?, o_reason=o_reason+?, o_cread=o_cread+?, o_cwrite=o_cwrite+?, o_cost=o_cost+? WHERE root=?`,
			d.Tokens.Input, d.Tokens.Output, d.Tokens.Reasoning, d.Tokens.CacheRead, d.Tokens.CacheWrite, d.Cost, root); err != nil {
			return err
		}
	}
	return c.exec(ctx, `UPDATE subagent_roots SET a_in=a_in+?, a_out=a_out+?, a_reason=a_reason+?, a_cread=a_cread+?, a_cwrite=a_cwrite+?, a_cost=a_cost+? WHERE root=?`,
		d.Tokens.Input, d.Tokens.Output, d.Tokens.Reasoning, d.Tokens.CacheRead, d.Tokens.CacheWrite, d.Cost, root)
}

// SubagentTask implements subagents.Service: a label or agent the row
// lacks, and the alias.
func (s *Subagents) SubagentTask(ctx context.Context, t subagents.Task) (subagents.Changed, error) {
	if t.Session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, t.Session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		r, ok, err := readRow(ctx, c, t.Session)
		if err != nil || !ok {
			return err
		}
		rev, err := tx.nextRev(ctx)
		if err != nil {
			return err
		}
		res, err := c.execResult(ctx, `UPDATE subagents SET label=CASE WHEN label='' THEN ? ELSE label END, agent=CASE WHEN agent='' THEN ? ELSE agent END,
			alias=CASE WHEN ?<>'' THEN ? ELSE alias END, rev=? WHERE session=? AND (label='' AND ?<>'' OR agent='' AND ?<>'' OR ?<>'' AND alias<>?)`,
			subagents.Cut(t.Label), t.Agent, t.Alias, t.Alias, rev, t.Session, t.Label, t.Agent, t.Alias, t.Alias)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return tx.changed(ctx, r.root, t.At)
	})
}

// Forget implements subagents.Service: a top-level session's records go
// with its subagents'; a subagent's with its descendants', their figures
// out of the top-level parent's total.
func (s *Subagents) Forget(ctx context.Context, session string) (subagents.Changed, error) {
	if session == "" {
		return subagents.Changed{}, nil
	}
	if ok, err := s.known(ctx, session); err != nil || !ok {
		return subagents.Changed{}, err
	}
	return s.write(ctx, func(c *dbConn, tx *subTx) error {
		r, child, err := readRow(ctx, c, session)
		if err != nil {
			return err
		}
		if !child {
			return forgetRoot(ctx, c, session)
		}
		const tree = `WITH RECURSIVE tree(s) AS (SELECT ? UNION ALL SELECT x.session FROM subagents x JOIN tree ON x.parent=tree.s) `
		var gone subagents.Figures
		var n int
		if err := c.queryRow(ctx, tree+`SELECT count(*), coalesce(sum(t_in),0), coalesce(sum(t_out),0), coalesce(sum(t_reason),0), coalesce(sum(t_cread),0),
			coalesce(sum(t_cwrite),0), coalesce(sum(cost),0) FROM subagents WHERE session IN (SELECT s FROM tree)`, session).
			Scan(&n, &gone.Tokens.Input, &gone.Tokens.Output, &gone.Tokens.Reasoning, &gone.Tokens.CacheRead, &gone.Tokens.CacheWrite, &gone.Cost); err != nil {
			return err
		}
		if err := c.exec(ctx, tree+"DELETE FROM subagent_messages WHERE session IN (SELECT s FROM tree)", session); err != nil {
			return err
		}
		if err := c.exec(ctx, tree+"DELETE FROM subagents WHERE session IN (SELECT s FROM tree)", session); err != nil {
			return err
		}
		if err := tx.changed(ctx, r.root, time.Time{}); err != nil {
			return err
		}
		if err := c.exec(ctx, "UPDATE subagent_roots SET n=max(0, n-?) WHERE root=?", n, r.root); err != nil {
			return err
		}
		return addFigures(ctx, c, r.root, subagents.Figures{}.Sub(gone), false)
	})
}

// read runs fn on the connection in one read transaction (a writer's
// connection reads what it committed). A reader of a missing file or of
// a database without the tables reads nothing: ok false.
func (s *Subagents) read(ctx context.Context, fn func(c *dbConn) error) (ok bool, err error) {
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if s.readOnly && (errors.Is(err, errNoFile) || errors.Is(err, errEmptyDB) || errors.Is(err, errNotDatabase)) {
		return false, nil // nothing of ours there (an earlier release's JSON state, a database being made)
	}
	if err != nil {
		return false, err
	}
	if _, err := c.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return false, classify(err)
	}
	defer c.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	err = fn(c)
	if noSubagentTables(err) {
		return false, nil
	}
	return err == nil, classify(err)
}

// ParentFigures implements subagents.Service.
func (s *Subagents) ParentFigures(ctx context.Context, parent string) (subagents.Parent, error) {
	p := subagents.Parent{SessionID: parent}
	_, err := s.read(ctx, func(c *dbConn) error {
		var err error
		p, _, err = s.parentFigures(ctx, c, parent)
		return err
	})
	return p, err
}

// parentFigures reads parent's figures: a top-level session's from its
// row; a subagent's from its own row and its descendants'. child says
// which parent is.
func (s *Subagents) parentFigures(ctx context.Context, c *dbConn, parent string) (p subagents.Parent, child bool, err error) {
	p.SessionID = parent
	_, child, err = readRow(ctx, c, parent)
	if err != nil {
		return p, false, err
	}
	if child {
		const tree = `WITH RECURSIVE tree(s, d) AS (SELECT ?, 0 UNION ALL SELECT x.session, d+1 FROM subagents x JOIN tree ON x.parent=tree.s) `
		rows, err := c.query(ctx, tree+`SELECT d, state, owner, t_in, t_out, t_reason, t_cread, t_cwrite, cost FROM subagents JOIN tree ON session=tree.s`, parent)
		if err != nil {
			return p, true, err
		}
		defer rows.Close()
		for rows.Next() {
			var d, owner int
			var state string
			var f subagents.Figures
			if err := rows.Scan(&d, &state, &owner, &f.Tokens.Input, &f.Tokens.Output, &f.Tokens.Reasoning, &f.Tokens.CacheRead, &f.Tokens.CacheWrite, &f.Cost); err != nil {
				return p, true, err
			}
			s.rowsRead.Add(1)
			p.Total = p.Total.Add(f)
			if d == 0 {
				p.Own = f
				continue
			}
			p.Subagents++
			if subagents.Active(subagents.Shown(subagents.State(state), s.alive(owner))) {
				p.Running++
			}
		}
		return p, true, rows.Err()
	}
	err = c.queryRow(ctx, `SELECT n, o_in, o_out, o_reason, o_cread, o_cwrite, o_cost, a_in, a_out, a_reason, a_cread, a_cwrite, a_cost FROM subagent_roots WHERE root=?`, parent).
		Scan(&p.Subagents, &p.Own.Tokens.Input, &p.Own.Tokens.Output, &p.Own.Tokens.Reasoning, &p.Own.Tokens.CacheRead, &p.Own.Tokens.CacheWrite, &p.Own.Cost,
			&p.Total.Tokens.Input, &p.Total.Tokens.Output, &p.Total.Tokens.Reasoning, &p.Total.Tokens.CacheRead, &p.Total.Tokens.CacheWrite, &p.Total.Cost)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return p, false, nil
	case err != nil:
		return p, false, err
	}
	s.rowsRead.Add(1)
	// The rows at work, by writer: a dead writer's read interrupted.
	rows, err := c.query(ctx, "SELECT owner, count(*) FROM subagents WHERE root=? AND active=1 GROUP BY owner", parent)
	if err != nil {
		return p, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var owner, n int
		if err := rows.Scan(&owner, &n); err != nil {
			return p, false, err
		}
		s.rowsRead.Add(int64(n))
		if s.alive(owner) {
			p.Running += n
		}
	}
	return p, false, rows.Err()
}

// subagentColumns are a page row's columns: the row's own, then its
// alias in the entries (resumable when there) and its tracked session's
// model column (its switches).
const subagentColumns = `s.session, s.parent, s.depth, s.agent, s.label, s.alias, s.state, s.active, s.started_ns, s.ended_ns,
  s.retry_attempt, s.retry_next_ns, s.retry_message, s.error, s.model, s.ctx_used,
  s.t_in, s.t_out, s.t_reason, s.t_cread, s.t_cwrite, s.cost, s.owner`

// subagentPageQuery is a page's query: of a top-level session's
// subagents (by root) or a subagent's children (by parent), from the
// start or after a cursor. The page's rows are found on the index, in
// its order, and only they are joined with their entry and tracked
// session.
func subagentPageQuery(ofChild, after bool) string {
	key := "root"
	if ofChild {
		key = "parent"
	}
	q := "SELECT " + subagentColumns + `, e.alias, t.model FROM (SELECT * FROM subagents WHERE ` + key + `=?`
	if after {
		q += " AND (active, started_ns, session) < (?,?,?)"
	}
	return q + ` ORDER BY active DESC, started_ns DESC, session DESC LIMIT ?) s
		LEFT JOIN entries e ON e.rowid = (SELECT rowid FROM entries WHERE task_id=s.session LIMIT 1)
		LEFT JOIN tracked t ON t.session=s.session
		ORDER BY s.active DESC, s.started_ns DESC, s.session DESC`
}

// SubagentsOf implements subagents.Service: the page's rows read from the
// index in the list's order, limit+1 of them (the one more says whether
// a page follows), joined with their entries and tracked sessions.
func (s *Subagents) SubagentsOf(ctx context.Context, parent, cursor string, limit int) (subagents.Page, error) {
	page := subagents.Page{Parent: subagents.Parent{SessionID: parent}, Subagents: []subagents.Row{}}
	var after *subagents.Cursor
	if cursor != "" {
		cur, err := subagents.DecodeCursor(cursor)
		if err != nil {
			return page, err
		}
		after = &cur
	}
	if limit <= 0 {
		limit = subagents.DefaultLimit
	}
	limit = min(limit, subagents.MaxLimit)
	_, err := s.read(ctx, func(c *dbConn) error {
		p, child, err := s.parentFigures(ctx, c, parent)
		if err != nil {
			return err
		}
		page.Parent = p
		args := []any{parent}
		if after != nil {
			a := 0
			if after.Active {
				a = 1
			}
			args = append(args, a, after.StartedNs, after.Session)
		}
		rows, err := c.query(ctx, subagentPageQuery(child, after != nil), append(args, limit+1)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var last subagents.Cursor
		for rows.Next() {
			row, cur, err := s.scanSubagent(rows)
			if err != nil {
				return err
			}
			s.rowsRead.Add(1)
			if len(page.Subagents) == limit {
				page.Next = last.Encode()
				break
			}
			page.Subagents, last = append(page.Subagents, row), cur
		}
		return rows.Err()
	})
	return page, err
}

// scanSubagent reads one page row.
func (s *Subagents) scanSubagent(rows *sql.Rows) (subagents.Row, subagents.Cursor, error) {
	var r subagents.Row
	var state string
	var act, owner int
	var started, ended, retryNext, ctxUsed int64
	var retryAttempt int
	var retryMessage string
	var entryAlias, tracked sql.NullString
	err := rows.Scan(&r.SessionID, &r.ParentID, &r.Depth, &r.Agent, &r.Label, &r.Alias, &state, &act, &started, &ended,
		&retryAttempt, &retryNext, &retryMessage, &r.Error, &r.Model, &ctxUsed,
		&r.Tokens.Input, &r.Tokens.Output, &r.Tokens.Reasoning, &r.Tokens.CacheRead, &r.Tokens.CacheWrite, &r.Cost, &owner,
		&entryAlias, &tracked)
	if err != nil {
		return r, subagents.Cursor{}, err
	}
	r.State = subagents.Shown(subagents.State(state), s.alive(owner))
	r.StartedAt = time.Unix(0, started).UTC()
	if ended != 0 && !subagents.Active(r.State) {
		t := time.Unix(0, ended).UTC()
		r.EndedAt = &t
	}
	if r.State == subagents.Retrying {
		r.Retry = &subagents.Retry{Attempt: retryAttempt, Message: retryMessage}
		if retryNext != 0 {
			t := time.Unix(0, retryNext).UTC()
			r.Retry.Next = &t
		}
	}
	if entryAlias.Valid && entryAlias.String != "" {
		r.Alias, r.Resumable = entryAlias.String, true
	}
	if ctxUsed > 0 {
		r.Context = &subagents.Context{Used: ctxUsed}
	}
	if share, ok := r.Tokens.CacheShare(); ok {
		r.CacheShare = &share
	}
	if tracked.Valid {
		var t sessions.TrackedRecord
		restoreTrackedColumn(&t, tracked.String)
		recs := make([]subagents.SwitchRecord, 0, len(t.Switches))
		for _, sw := range t.Switches {
			recs = append(recs, subagents.SwitchRecord{From: sw.From, To: sw.To, Reason: sw.Reason, At: sw.At})
		}
		r.Switches = subagents.Switches(recs)
	}
	return r, subagents.Cursor{Active: act == 1, StartedNs: started, Session: r.SessionID}, nil
}

// Changes reports the top-level parents whose records changed since the
// last call (none at the first): for the observer. When no connection has
// committed since (PRAGMA data_version on the kept connection), it reads
// nothing more; else only the rows whose revision is past the last one
// seen.
func (s *Subagents) Changes(ctx context.Context) ([]string, error) {
	ctx = quiet(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.conn(ctx)
	if errors.Is(err, errNoFile) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := c.dataVersion(ctx)
	if err != nil {
		return nil, classify(err)
	}
	if s.seen && v == s.version {
		return nil, nil
	}
	if !s.seen {
		// The first look takes the revision to start from, from the
		// indexes' ends, reading no rows.
		err := c.queryRow(ctx, "SELECT coalesce((SELECT value FROM meta WHERE key='"+revKey+"'), 0)").Scan(&s.rev)
		if err != nil && !noSubagentTables(err) {
			return nil, classify(err)
		}
		s.version, s.seen = v, true
		return nil, nil
	}
	s.version = v
	var roots []string
	var top int64
	rows, err := c.query(ctx, `SELECT root, rev FROM subagents WHERE rev>? UNION ALL SELECT root, rev FROM subagent_roots WHERE rev>?`, s.rev, s.rev)
	if noSubagentTables(err) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var root string
		var rev int64
		if err := rows.Scan(&root, &rev); err != nil {
			return nil, classify(err)
		}
		s.rowsRead.Add(1)
		top = max(top, rev)
		if !seen[root] {
			seen[root] = true
			roots = append(roots, root)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	s.rev = max(s.rev, top)
	return roots, nil
}

// String names the records for logs.
func (s *Subagents) String() string {
	if s.memory {
		return "subagents in memory"
	}
	return fmt.Sprintf("subagents in %s", s.path)
}

// SubagentService is the Database's subagents' records as the handlers
// take them (handlers.SubagentRecords).
func (d *Database) SubagentService() subagents.Service { return d.Subagents() }

// RecentParents are the top-level sessions with subagents, the most
// recently changed first, at most limit of them (for `hookwire sessions`
// and doctor).
func (s *Subagents) RecentParents(ctx context.Context, limit int) ([]string, error) {
	var out []string
	_, err := s.read(ctx, func(c *dbConn) error {
		rows, err := c.query(ctx, "SELECT root FROM subagent_roots WHERE n>0 ORDER BY used_ns DESC LIMIT ?", limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				return err
			}
			s.rowsRead.Add(1)
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// StateOf is a subagent's state as a reader shows it; ok false when it is
// no subagent on record.
func (s *Subagents) StateOf(ctx context.Context, session string) (state subagents.State, ok bool, err error) {
	_, err = s.read(ctx, func(c *dbConn) error {
		r, found, err := readRow(ctx, c, session)
		if err == nil && found {
			s.rowsRead.Add(1)
			state, ok = subagents.Shown(r.state, s.alive(r.owner)), true
		}
		return err
	})
	return state, ok, err
}
