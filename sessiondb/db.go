package sessiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The state database (PROTOCOL.md 6): one SQLite file per project, opened
// by every process on the project at once, in WAL mode. This file opens it
// safely; persistence.go is what the store reads and writes there.

// busyTimeout is how long a statement waits for another process's write
// transaction (each is a few milliseconds) before it fails.
const busyTimeout = 5 * time.Second

// ErrNewerFormat is returned for a database a newer hookwire wrote.
var ErrNewerFormat = errors.New("written by a newer hookwire")

// dbConn is one open state database: a single connection, so that
// PRAGMA data_version sees exactly the other processes' commits.
type dbConn struct {
	path     string
	db       *sql.DB
	conn     *sql.Conn
	readOnly bool
	// immutable: opened read-only with SQLite's immutable flag, as no -shm
	// could be made; other processes' changes are not seen.
	immutable bool
	stmts     map[string]*sql.Stmt
	// file is the file opened at path (nil: not known); close leaves a
	// connection whose path names another file or none open (abandoned).
	file os.FileInfo
	// writers orders this process's write transactions on the file
	// (dbwriters.go); writing: this connection holds its turn.
	writers *writerQueue
	writing bool
	// queue is the writers' turn across processes (dbqueue.go; nil: none
	// could be made); turn is this connection's while it writes.
	queue *writerLock
	turn  turn
	// wal is the record of the WAL's checkpoints (dbwal.go).
	wal walBound
	// revs gives the rows a write transaction writes their revisions
	// (dbtx.go).
	revs revisions
}

// dbURI is path as an SQLite URI filename with the given parameters.
// A relative path is made absolute first (the URI's path is absolute: a
// leading "/" made rel.db open /rel.db while the checks looked at the
// working directory's).
func dbURI(path string, params url.Values) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: params.Encode()}
	return u.String()
}

// openMode is how openDB opens a database.
type openMode int

const (
	openReadWrite openMode = iota // create if missing; read-only if it cannot be written
	openReadOnly                  // never write (observe, sessions, doctor)
)

// errNotDatabase marks a file that is not an SQLite database at all.
var errNotDatabase = errors.New("not a database")

// openDB opens the database at path, which CheckStatePath accepted. With
// openReadWrite it creates the file (0600, never through a link) and the
// schema when missing, and falls back to read-only when the file or its
// directory cannot be written; why is in roReason. A missing file with
// openReadOnly is fs.ErrNotExist.
func openDB(ctx context.Context, path string, mode openMode) (c *dbConn, roReason string, err error) {
	// Every open of the state goes through the path checks, whoever calls
	// (issue 39): a FIFO would hang the open, a symlink be followed.
	if err := CheckStatePath(path); err != nil {
		return nil, "", err
	}
	if mode == openReadWrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			if _, serr := os.Stat(path); serr != nil {
				return nil, "", fmt.Errorf("creating state directory: %w", err)
			}
		}
		if roReason = createFile(path); roReason == "" {
			roReason = writable(path)
		}
		if roReason == "" {
			err = retryBusy(ctx, func() error {
				c, err = connect(ctx, path, url.Values{"mode": {"rw"}}, false)
				if err == nil {
					err = c.setUp(ctx)
				}
				if err == nil {
					err = c.quickCheck(ctx)
				}
				if err != nil && c != nil {
					c.close()
					c = nil
				}
				return err
			})
			if err == nil {
				c.file, _ = os.Stat(path)
				return c, "", nil
			}
			if !isReadOnlyError(err) {
				return nil, "", err
			}
			roReason = err.Error()
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, "", err
	}
	err = retryBusy(ctx, func() error {
		c, err = connectReadOnly(ctx, path)
		if err == nil {
			if err = c.quickCheck(ctx); err != nil {
				c.close()
				c = nil
			}
		}
		return err
	})
	if err != nil {
		return nil, roReason, err
	}
	return c, roReason, nil
}

// createFile creates path empty with mode 0600 if it is missing, never
// following a link; "" when it exists or was made, else why not.
func createFile(path string) string {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	switch {
	case err == nil:
		f.Close()
		return ""
	case errors.Is(err, fs.ErrExist):
		return ""
	case errors.Is(err, fs.ErrPermission) || isReadOnlyFS(err):
		return "cannot create " + path + ": " + err.Error()
	}
	return ""
}

// writable says why path or its directory cannot be written ("" if both
// can): SQLite needs to create the -wal and -shm files beside it.
func writable(path string) string {
	f, err := os.OpenFile(path, os.O_RDWR|oNoFollow, 0)
	if err != nil {
		return "cannot write " + path + ": " + err.Error()
	}
	f.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".hookwire-probe-*")
	if err != nil {
		return "cannot write in " + filepath.Dir(path) + ": " + err.Error()
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return ""
}

func connect(ctx context.Context, path string, params url.Values, readOnly bool) (*dbConn, error) {
	db, err := sql.Open("sqlite", dbURI(path, params))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	c := &dbConn{path: path, db: db, conn: conn, readOnly: readOnly, stmts: map[string]*sql.Stmt{}}
	if !readOnly {
		c.writers = joinWriters(path)
		c.queue = newWriterLock(path)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(int(busyTimeout/time.Millisecond))); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// check reads the header: a file that is not a database, a database of
// another program, or one of a newer format is an error.
func (c *dbConn) check(ctx context.Context) error {
	// One statement, so one snapshot: read apart, a process making the
	// schema could commit between the reads, and its new database looked
	// like another program's (no application_id, but tables) and was moved
	// aside under it.
	var version, app int64
	var tables int
	if err := c.conn.QueryRowContext(ctx, "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_schema)").Scan(&version, &app, &tables); err != nil {
		return classify(err)
	}
	if version == 0 && app == 0 {
		if tables == 0 {
			if c.readOnly {
				return errEmptyDB
			}
			return nil // new: setUp creates the schema
		}
	}
	if app != applicationID {
		return fmt.Errorf("%w: an SQLite database of another program (application_id %#x)", errNotDatabase, app)
	}
	// hookwire's own database with a format number it never writes (issue
	// 39 item 3): a negative one made the migration index migrations[-1]
	// and panic holding the write lock; 0 with the schema there made every
	// migration fail "table meta already exists" for good. It is damaged:
	// moved aside as a corrupt file is, by a sidecar or `forget --all`.
	if version < 0 || (version == 0 && tables > 0) {
		return damagedFormat(version)
	}
	if version > int64(schemaVersion) {
		return fmt.Errorf("format %d %w (this build reads %d): upgrade hookwire, or point --state elsewhere", version, ErrNewerFormat, schemaVersion)
	}
	return nil
}

// quickCheck runs SQLite's quick_check over every page (a few ms a MiB):
// a database damaged past its header (every write failed "malformed"
// while it opened as persistent) is errCorrupt, so it is moved aside at
// open rather than failing each request.
func (c *dbConn) quickCheck(ctx context.Context) error {
	var res string
	if err := c.conn.QueryRowContext(ctx, "PRAGMA quick_check(1)").Scan(&res); err != nil {
		return classify(err)
	}
	if res != "ok" {
		return fmt.Errorf("%w: quick_check: %s", errCorrupt, res)
	}
	return nil
}

// errEmptyDB: a database file with no schema yet (a sidecar is creating it).
var errEmptyDB = errors.New("no state yet")

// setUp sets the connection up for writing: WAL, and the schema brought
// to this build's format (schema.go; one transaction, so a crash leaves
// none or all of it).
func (c *dbConn) setUp(ctx context.Context) error {
	if err := c.check(ctx); err != nil {
		return err
	}
	// A new file: pages that hold a few frozen blocks each, and the space
	// of forgotten items given back to the file system as it is pruned.
	// Both only take before the first table (and WAL) exists.
	var tables int
	if err := c.conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return classify(err)
	}
	if tables == 0 {
		if _, err := c.conn.ExecContext(ctx, "PRAGMA page_size = 8192; PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
			return classify(err)
		}
	}
	var jm string
	if err := c.conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&jm); err != nil {
		return classify(err)
	}
	if _, err := c.conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = "+strconv.Itoa(walFileLimit)); err != nil {
		return classify(err)
	}
	return c.migrate(ctx, migrations[:])
}

// stmt returns the statement for query, prepared once.
func (c *dbConn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.stmts[query]; st != nil {
		return st, nil
	}
	st, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = st
	return st, nil
}

// queryRow runs the prepared query for one row; a failed prepare shows in
// Scan.
func (c *dbConn) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// query runs the prepared query.
func (c *dbConn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

type rowScanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (c *dbConn) exec(ctx context.Context, query string, args ...any) error {
	_, err := c.execResult(ctx, query, args...)
	return err
}

// execResult runs a statement on the connection, prepared once, and
// returns its result.
func (c *dbConn) execResult(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// dataVersion changes when another connection commits (PRAGMA
// data_version): the cheap test for "someone else wrote".
func (c *dbConn) dataVersion(ctx context.Context) (int64, error) {
	st, err := c.stmt(ctx, "PRAGMA data_version")
	if err != nil {
		return 0, err
	}
	// Not cancellable: the read is instant and never waits for a lock,
	// and a cancellable context costs database/sql and the driver a
	// goroutine each (to interrupt the statement), which wakes another
	// thread on every request.
	var v int64
	err = st.QueryRowContext(context.WithoutCancel(ctx)).Scan(&v)
	return v, err
}

// seqClock reads the database's write sequence and logical clock (0 in a
// new database); inside a write transaction they are the ones it goes on
// from.
//
// It reads the database's format too, in the same statement: a newer
// hookwire that migrated the file while this process runs (a plugin
// upgraded with OpenCode open) may have changed what this build writes,
// so the transaction is refused with ErrNewerFormat (issue 39 item 6: a
// format-4 process's prompt-cache writes failed, a later alias write
// cleared the error, and its status said persistent while its figures
// never reached the file). Every later transaction is refused the same
// way, so the error stays in status; what the process acknowledged stays
// in its memory.
func (c *dbConn) seqClock(ctx context.Context) (seq, clock int64, err error) {
	var version int64
	err = c.queryRow(ctx, "SELECT coalesce((SELECT value FROM meta WHERE key='seq'),0), coalesce((SELECT value FROM meta WHERE key='clock'),0), (SELECT user_version FROM pragma_user_version)").Scan(&seq, &clock, &version)
	if err == nil && version > int64(schemaVersion) {
		err = newerWhileRunning(version)
	}
	if err == nil {
		c.revs.saw(seq)
	}
	return seq, clock, err
}

// close releases the connection. A writer that is the last one on the
// database checkpoints it and leaves it in rollback mode, a single file a
// read-only open can read without making a -shm; with others still on it
// the switch fails harmlessly and the database stays in WAL.
func (c *dbConn) close() error {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	if c.file != nil && !c.readOnly {
		if fi, err := os.Stat(c.path); err != nil || !os.SameFile(fi, c.file) {
			// The file was moved aside, replaced or deleted: closing the
			// last connection on it would checkpoint and delete the WAL
			// by its name, path-wal, which is now the new database's.
			abandonedMu.Lock()
			abandoned = append(abandoned, c.db)
			abandonedMu.Unlock()
			c.endWrite()
			if c.writers != nil {
				leaveWriters(c.path)
				c.writers = nil
			}
			return nil
		}
	}
	if !c.readOnly {
		c.conn.ExecContext(context.Background(), "PRAGMA busy_timeout = 0")
		var mode string
		c.conn.QueryRowContext(context.Background(), "PRAGMA journal_mode = DELETE").Scan(&mode)
	}
	c.conn.Close()
	err := c.db.Close()
	c.endWrite()
	if c.writers != nil {
		leaveWriters(c.path)
		c.writers = nil
	}
	return err
}

// abandoned holds the connections close left open (their file is no
// longer at their path), for the process's life.
var (
	abandonedMu sync.Mutex
	abandoned   []*sql.DB
)

// connectReadOnly connects to the database at path read-only and checks
// it, as immutable when no -shm can be made beside a WAL database (a
// read-only directory), as SQLite documents; on an error it holds no
// connection.
func connectReadOnly(ctx context.Context, path string) (*dbConn, error) {
	c, err := connect(ctx, path, url.Values{"mode": {"ro"}}, true)
	if err == nil {
		err = c.check(ctx)
		if err != nil && isReadOnlyError(err) {
			c.close()
			c, err = connect(ctx, path, url.Values{"mode": {"ro"}, "immutable": {"1"}}, true)
			if err == nil {
				c.immutable = true
				err = c.check(ctx)
			}
		}
	}
	if err != nil && c != nil {
		c.close()
		c = nil
	}
	return c, err
}
