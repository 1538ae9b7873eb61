package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hookwire/hookwire/subagents"
)

// The subagents' records (PROTOCOL.md 4.10): subagents.Service over the
// state database, each intent one function that begins and ends its own
// write transaction. It has a connection of its own (the store's is the
// store's, under the store's lock); this process's writers on the file
// take turns with it (dbwriters.go), other processes' through SQLite's
// lock and the writers' queue (dbqueue.go).
//
// Here: the Subagents, its connection, and the row an intent reads; the
// tables and caps are in subagentschema.go, the intents' writes in
// subagentwrite.go, the reads and pages in subagentread.go, the revision
// the observer follows in subagentrev.go.

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
