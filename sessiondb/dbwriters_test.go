package sessiondb

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
