package sessiondb

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"
)

// SQLite's busy handler is not a queue: a connection that finds the write
// lock taken sleeps (up to 100 ms at a time) and tries again, and a
// connection that has just committed takes the lock straight back. With
// several connections on one file in a process (the tests' stores; a
// process reopening its state) that keep writing, one of them can lose
// every retry for the whole busy timeout while the others commit dozens of
// transactions, and its method then serves from memory only. So a
// process's write transactions on one file wait for each other here, first
// come first served, and SQLite's busy handler is left to wait for other
// processes alone.

// writerQueue orders one process's write transactions on one database
// file: the token is handed to the longest waiting writer.
type writerQueue struct {
	token chan struct{}
	refs  int
}

var (
	writerQueuesMu sync.Mutex
	writerQueues   = map[string]*writerQueue{}
)

// errWritersBusy: this process's other writers on the file held it past
// the busy timeout.
var errWritersBusy = errors.New("database is locked: this process's other writers held it past the busy timeout")

// writerKey names the file a queue is for: its absolute path (links are
// refused by CheckStatePath, so one file has one name).
func writerKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// joinWriters returns the queue of the file at path, made on first use.
func joinWriters(path string) *writerQueue {
	writerQueuesMu.Lock()
	defer writerQueuesMu.Unlock()
	key := writerKey(path)
	q := writerQueues[key]
	if q == nil {
		q = &writerQueue{token: make(chan struct{}, 1)}
		q.token <- struct{}{}
		writerQueues[key] = q
	}
	q.refs++
	return q
}

// leaveWriters drops a connection's use of the queue of path.
func leaveWriters(path string) {
	writerQueuesMu.Lock()
	defer writerQueuesMu.Unlock()
	key := writerKey(path)
	if q := writerQueues[key]; q != nil {
		if q.refs--; q.refs <= 0 {
			delete(writerQueues, key)
		}
	}
}

// lock waits its turn, up to timeout; a channel hands its value to the
// receiver that has waited longest.
func (q *writerQueue) lock(ctx context.Context, timeout time.Duration) error {
	select {
	case <-q.token:
		return nil
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-q.token:
		return nil
	case <-t.C:
		return errWritersBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *writerQueue) unlock() { q.token <- struct{}{} }
