package sessiondb

import (
	"context"
	"os"
	"sync"
	"time"
)

// Writers across processes take turns here. SQLite's busy handler is not
// a queue (dbwriters.go): a process that finds the write lock taken
// sleeps 1, 2, 5, ... up to 100 ms and tries again, while the processes
// that keep committing take the lock straight back. Eight processes at
// full rate gave 0.8% of tool calls over the shim's 250 ms deadline and
// a 2.1 s maximum. So before BEGIN IMMEDIATE a writer takes an advisory
// lock (flock, LOCK_EX) on FILE-writers: a process waiting there sleeps
// in the kernel and is woken the moment the holder lets go, and then
// SQLite's lock is free. The lock is only a queue: SQLite's own locks
// still serialize the writers, so a process that cannot have it within
// queueWait (the file cannot be made, the holder is stopped, an older
// hookwire that knows nothing of it) goes on to BEGIN IMMEDIATE and its
// busy handler as before. The kernel releases the lock of a process that
// dies, so kill -9 at any point wedges nobody.

// queueSuffix names the queue's lock file beside the database.
const queueSuffix = "-writers"

// queueWait is how long a writer waits in the queue before it goes on to
// SQLite's busy handler: well past any turn under load (a few ms each),
// short enough that a holder stopped with the lock (SIGSTOP) delays each
// other writer by at most this.
const queueWait = time.Second

// writerLock is the cross-process queue of one database file.
type writerLock struct {
	path string
	// lockFile takes the lock on an open file (blocking), unlockFile
	// gives it back; the files are opened per turn (flockFile).
	lockFile   func(*os.File) error
	unlockFile func(*os.File) error
}

// newWriterLock returns the queue of the database at path, creating its
// lock file (0600, never through a link); nil when it cannot be made (a
// read-only directory) or the system has no flock: the writers then wait
// in SQLite's busy handler alone.
func newWriterLock(path string) *writerLock {
	if !haveFlock {
		return nil
	}
	f, err := os.OpenFile(path+queueSuffix, os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return nil
	}
	f.Close()
	return &writerLock{path: path + queueSuffix, lockFile: flockFile, unlockFile: funlockFile}
}

// turn is one writer's hold on the queue: release ends it.
type turn struct {
	q *writerLock
	f *os.File
}

// acquisition is a lock request in flight. Each has its own open file
// (flock locks belong to an open file), so a request given up on after
// queueWait is left to finish by itself: when it gets the lock with no
// one waiting for it, it closes its file, which gives the lock back.
type acquisition struct {
	mu      sync.Mutex
	wanted  bool // the writer still waits for it
	granted chan *os.File
}

// lock waits up to wait for the writer's turn; ok false means the writer
// goes on without it (timed out, ctx ended, or the lock file cannot be
// opened; one deleted meanwhile is made again).
func (q *writerLock) lock(ctx context.Context, wait time.Duration) (t turn, ok bool) {
	f, err := os.OpenFile(q.path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return turn{}, false
	}
	a := &acquisition{wanted: true, granted: make(chan *os.File, 1)}
	go a.run(q, f)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case f := <-a.granted:
		if f == nil {
			return turn{}, false
		}
		return turn{q: q, f: f}, true
	case <-timer.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	a.wanted = false
	a.mu.Unlock()
	// Granted between the timer and the lock: take it after all.
	select {
	case f := <-a.granted:
		if f != nil {
			return turn{q: q, f: f}, true
		}
	default:
	}
	return turn{}, false
}

// run takes the lock on f and hands it to the writer, or gives it back
// at once when the writer stopped waiting.
func (a *acquisition) run(q *writerLock, f *os.File) {
	err := q.lockFile(f)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil:
		f.Close()
		a.granted <- nil
	case a.wanted:
		a.granted <- f
	default:
		f.Close() // releases the lock
	}
}

// release ends the turn: the next process waiting is woken.
func (t turn) release() {
	if t.f == nil {
		return
	}
	t.q.unlockFile(t.f)
	t.f.Close()
}
