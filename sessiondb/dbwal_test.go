package sessiondb

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/internal/racetest"
)

func TestWALBoundDue(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	failed := func(times int) walBound {
		var w walBound
		for range times {
			w.done(false, now)
		}
		return w
	}
	tests := []struct {
		name     string
		bound    walBound
		size     int64
		at       time.Time
		wantOK   bool
		wantWait time.Duration
	}{
		{"within the bound", walBound{}, walCheckpointBytes, now, false, 0},
		{"past it", walBound{}, walCheckpointBytes + 1, now, true, walCheckpointWait},
		{"past twice the bound: readers are waited for longer", walBound{}, 2*walCheckpointBytes + 1, now, true, walCheckpointWaitFar},
		{"just after a try that did not finish", failed(1), walCheckpointBytes + 1, now.Add(walBackoffMin - 1), false, 0},
		{"once its backoff has passed", failed(1), walCheckpointBytes + 1, now.Add(walBackoffMin), true, walCheckpointWait},
		{"the backoff doubles", failed(2), walCheckpointBytes + 1, now.Add(2*walBackoffMin - 1), false, 0},
		{"up to its maximum", failed(30), walCheckpointBytes + 1, now.Add(walBackoffMax), true, walCheckpointWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.bound
			wait, ok := w.due(tt.size, tt.at)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantWait, wait)
		})
	}
	w := failed(30)
	assert.Equal(t, walBackoffMax, w.backoff, "the backoff stops growing")
	w.done(true, now)
	assert.Equal(t, walBound{}, w, "a checkpoint that finished clears the backoff")
}

// walTestDB opens a database at a new path for writing, with a table of
// blobs to fill the WAL with, and returns it with a commit that adds n
// blobs of 64 KiB in one transaction.
func walTestDB(t *testing.T) (c *dbConn, path string, commit func(n int)) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "state.db")
	c, ro, err := openDB(t.Context(), path, openReadWrite)
	require.NoError(t, err)
	require.Empty(t, ro)
	t.Cleanup(func() { c.close() })
	require.NoError(t, c.inTx(t.Context(), func() error { return c.exec(t.Context(), "CREATE TABLE blobs(b BLOB)") }))
	commit = func(n int) {
		require.NoError(t, c.inTx(t.Context(), func() error {
			for range n {
				if err := c.exec(t.Context(), "INSERT INTO blobs VALUES(randomblob(65536))"); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return c, path, commit
}

// holdSnapshot opens a reader of the database at path whose read
// transaction pins a snapshot until the returned transaction ends.
func holdSnapshot(t *testing.T, path string) *sql.Tx {
	t.Helper()
	reader, err := sql.Open("sqlite", dbURI(path, url.Values{"mode": {"ro"}}))
	require.NoError(t, err)
	t.Cleanup(func() { reader.Close() })
	tx, err := reader.BeginTx(t.Context(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow("SELECT count(*) FROM blobs").Scan(&n), "the read pins a snapshot")
	return tx
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	return fi.Size()
}

// A commit of 1 MiB (16 blobs) adds at most this to the WAL.
const walTestCommit = 16*(64<<10)*9/8 + 64<<10

// Writing far more than the bound: FILE-wal never holds more than the
// bound and one commit (the writer that passes it starts it over).
func TestVolumeWALBoundedByTheWriter(t *testing.T) {
	racetest.Volume(t)
	_, path, commit := walTestDB(t)
	var peak int64
	for range 5 * walCheckpointBytes / (1 << 20) {
		commit(16)
		peak = max(peak, walSize(t, path))
	}
	t.Logf("%d MiB written in 1 MiB commits: FILE-wal peaked at %.1f MiB (bound %d MiB)", 5*walCheckpointBytes>>20, float64(peak)/(1<<20), walCheckpointBytes>>20)
	assert.LessOrEqual(t, peak, int64(walCheckpointBytes+walTestCommit))
	assert.Greater(t, peak, int64(walCheckpointBytes/2), "the WAL is kept between checkpoints, not emptied at each commit")
}

// A reader that holds its snapshot keeps the WAL from starting over (the
// checkpoint gives up and backs off, the WAL grows); once it ends, the
// next writer whose try is due starts it over and the file is cut back.
func TestVolumeWALReaderHoldsSnapshot(t *testing.T) {
	racetest.Volume(t)
	c, path, commit := walTestDB(t)
	commit(1)
	tx := holdSnapshot(t, path)

	for walSize(t, path) <= 2*walCheckpointBytes {
		commit(16)
	}
	assert.NotZero(t, c.wal.backoff, "the checkpoint did not finish and backs off")
	held := walSize(t, path)

	require.NoError(t, tx.Rollback())
	c.wal = walBound{} // the backoff has passed
	commit(16)         // its checkpoint finishes
	commit(1)          // the WAL starts over here
	after := walSize(t, path)
	t.Logf("with a reader holding its snapshot FILE-wal grew to %.1f MiB; after it ended, %.1f MiB", float64(held)/(1<<20), float64(after)/(1<<20))
	assert.LessOrEqual(t, after, int64(walFileLimit+walTestCommit), "cut back to the limit")
	assert.Zero(t, c.wal.backoff)
}

// A checkpoint waits for readers with a short busy timeout of its own;
// afterwards the connection's is the writers' again, whether the
// checkpoint finished or gave up (left short, the next write that met
// another process's lock failed "database is locked" and the process
// went on from memory).
func TestCheckpointRestoresBusyTimeout(t *testing.T) {
	c, path, commit := walTestDB(t)
	commit(1)
	timeout := func() int {
		var ms int
		require.NoError(t, c.conn.QueryRowContext(t.Context(), "PRAGMA busy_timeout").Scan(&ms))
		return ms
	}
	require.Equal(t, int(busyTimeout/time.Millisecond), timeout())

	assert.True(t, c.restart(t.Context(), 3*time.Millisecond), "nothing keeps it from finishing")
	assert.Equal(t, int(busyTimeout/time.Millisecond), timeout(), "after a checkpoint that finished")

	tx := holdSnapshot(t, path)
	commit(1)
	assert.False(t, c.restart(t.Context(), 3*time.Millisecond), "a reader holds its snapshot")
	assert.Equal(t, int(busyTimeout/time.Millisecond), timeout(), "after one that gave up")
	require.NoError(t, tx.Rollback())
}
