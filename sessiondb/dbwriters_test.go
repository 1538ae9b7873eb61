package sessiondb

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One file has one writer queue in a process, however its path is
// spelled, and it goes when its last connection leaves.
func TestWriterQueuePerFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs := filepath.Join(dir, "state.db")
	a := joinWriters(abs)
	b := joinWriters("state.db")
	c := joinWriters(filepath.Join(dir, "other.db"))
	assert.Same(t, a, b, "a relative and an absolute path to one file share a queue")
	assert.NotSame(t, a, c, "another file has its own queue")
	leaveWriters(abs)
	leaveWriters(filepath.Join(dir, "other.db"))
	writerQueuesMu.Lock()
	assert.Contains(t, writerQueues, abs, "still joined once")
	writerQueuesMu.Unlock()
	leaveWriters("state.db")
	writerQueuesMu.Lock()
	assert.NotContains(t, writerQueues, abs)
	writerQueuesMu.Unlock()
}

// A writer waits for the one before it; the wait is bounded, and the turn
// passes on when the holder ends its transaction.
func TestWriterQueueTurns(t *testing.T) {
	q := joinWriters(filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, q.lock(context.Background(), busyTimeout))
	assert.ErrorIs(t, q.lock(context.Background(), 0), errWritersBusy, "the turn is taken")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, q.lock(ctx, busyTimeout), context.Canceled)
	got := make(chan error)
	go func() { got <- q.lock(context.Background(), busyTimeout*10) }()
	q.unlock()
	require.NoError(t, <-got, "the waiting writer gets the turn")
	q.unlock()
}

// A connection's write transactions take the process's turn on the file:
// a second connection cannot begin one until the first commits or rolls
// back, and neither error leaves the turn taken.
func TestDatabaseWritersTakeTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, _, err := openDB(context.Background(), path, openReadWrite)
	require.NoError(t, err)
	defer a.close()
	b, _, err := openDB(context.Background(), path, openReadWrite)
	require.NoError(t, err)
	defer b.close()
	require.Same(t, a.writers, b.writers)

	require.NoError(t, a.beginWrite(context.Background()))
	assert.Error(t, a.beginWrite(context.Background()), "no transaction within a transaction")
	assert.True(t, a.writing, "the failed nested begin kept the turn")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, b.beginWrite(ctx), context.Canceled, "b waits for a's turn")
	require.NoError(t, a.commit(context.Background()))
	require.NoError(t, b.beginWrite(context.Background()))
	b.rollback(ctx)
	assert.ErrorIs(t, a.inTx(context.Background(), func() error { return os.ErrInvalid }), os.ErrInvalid)
	assert.False(t, a.writing, "a failed transaction gives the turn back")
	require.NoError(t, b.inTx(context.Background(), func() error { return nil }))
	assert.False(t, b.writing, "a committed transaction gives the turn back")
}

// Every way a write transaction ends gives both turns back: this
// process's writers' queue and the queue across processes (a slip that
// kept either was caught only by the suite's timeout). Each case is
// followed by another writer of this process and one of "another process"
// taking their turn at once.
func TestWriteTurnsReleasedHoweverTheTransactionEnds(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(t *testing.T, c *dbConn, path string)
	}{
		{"committed", func(t *testing.T, c *dbConn, _ string) {
			require.NoError(t, c.inTx(t.Context(), func() error { return c.exec(t.Context(), "INSERT INTO meta(key,value) VALUES('a',1)") }))
		}},
		{"its work failed", func(t *testing.T, c *dbConn, _ string) {
			require.Error(t, c.inTx(t.Context(), func() error { return c.exec(t.Context(), "INSERT INTO nowhere VALUES(1)") }))
		}},
		{"its work panicked", func(t *testing.T, c *dbConn, _ string) {
			require.Panics(t, func() { c.inTx(t.Context(), func() error { panic("a bug") }) })
		}},
		{"its commit failed", func(t *testing.T, c *dbConn, _ string) {
			// A deferred foreign key violated fails at COMMIT.
			_, err := c.conn.ExecContext(t.Context(), "PRAGMA foreign_keys=ON")
			require.NoError(t, err)
			require.NoError(t, c.inTx(t.Context(), func() error {
				if err := c.exec(t.Context(), "CREATE TABLE fk_parent(id INTEGER PRIMARY KEY)"); err != nil {
					return err
				}
				return c.exec(t.Context(), "CREATE TABLE fk_child(p INTEGER REFERENCES fk_parent(id) DEFERRABLE INITIALLY DEFERRED)")
			}))
			require.Error(t, c.inTx(t.Context(), func() error { return c.exec(t.Context(), "INSERT INTO fk_child VALUES(7)") }))
		}},
		{"its begin failed: another connection held SQLite's lock", func(t *testing.T, c *dbConn, path string) {
			other, err := sql.Open("sqlite", dbURI(path, url.Values{"mode": {"rw"}}))
			require.NoError(t, err)
			defer other.Close()
			conn, err := other.Conn(t.Context())
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.ExecContext(t.Context(), "BEGIN IMMEDIATE")
			require.NoError(t, err)
			defer conn.ExecContext(t.Context(), "ROLLBACK")
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			require.Error(t, c.inTx(ctx, func() error { return nil }))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			a, _, err := openDB(t.Context(), path, openReadWrite)
			require.NoError(t, err)
			defer a.close()
			b, _, err := openDB(t.Context(), path, openReadWrite)
			require.NoError(t, err)
			defer b.close()
			require.Same(t, a.writers, b.writers, "one queue for the file in a process")

			tt.end(t, a, path)

			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			require.NoError(t, b.writers.lock(ctx, time.Second), "this process's next writer has its turn")
			b.writers.unlock()
			if q := newWriterLock(path); q != nil {
				tr, ok := q.lock(ctx, time.Second)
				assert.True(t, ok, "and another process's writer its turn")
				tr.release()
			}
			assert.NoError(t, b.inTx(ctx, func() error { return b.exec(ctx, "INSERT INTO meta(key,value) VALUES('b',1)") }), "and SQLite's lock is free")
		})
	}
}
