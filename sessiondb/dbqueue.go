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
	// gives it back; the files are opened per request (flockFile).
	lockFile   func(*os.File) error
	unlockFile func(*os.File) error

	// mu guards pending: the one lock request in flight (issue 39 item
	// 4). A request given up on is left blocked in flock(2), an OS thread
	// and an open file; each write while another process held the queue
	// left one more (60 writes: 60 threads, 60 fds, the threads never
	// given back). Now a writer joins the request in flight instead of
	// making its own: at most one waits per queue, whatever the holder.
	mu      sync.Mutex
	pending *acquisition
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

// acquisition is the lock request in flight, on an open file of its own
// (flock locks belong to an open file). Writers wait for it (waiting
// counts them, under the queue's mu); when it gets the lock with no one
// waiting, it closes its file, which gives the lock back.
type acquisition struct {
	since   time.Time
	waiting int
	granted chan *os.File // nil: the request failed
}

// lock waits up to wait for the writer's turn; ok false means the writer
// goes on without it (timed out, ctx ended, or the lock file cannot be
// opened; one deleted meanwhile is made again). A request already in
// flight for longer than wait (the holder has kept the queue past any
// turn: stopped, or not a writer at all) is not waited for again: the
// writer goes on at once, and the queue is used again once the holder
// lets go.
func (q *writerLock) lock(ctx context.Context, wait time.Duration) (t turn, ok bool) {
	q.mu.Lock()
	a := q.pending
	if a == nil {
		f, err := os.OpenFile(q.path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
		if err != nil {
			q.mu.Unlock()
			return turn{}, false
		}
		a = &acquisition{since: time.Now(), granted: make(chan *os.File, 1)}
		q.pending = a
		go q.run(a, f)
	} else if time.Since(a.since) >= wait {
		wait = 0
	}
	a.waiting++
	q.mu.Unlock()

	timer := time.NewTimer(wait) // 0: fires at once
	defer timer.Stop()
	select {
	case f := <-a.granted:
		q.mu.Lock()
		a.waiting--
		q.mu.Unlock()
		if f == nil {
			return turn{}, false
		}
		return turn{q: q, f: f}, true
	case <-timer.C:
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	a.waiting--
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

// run takes the lock on f for the request a and hands it to a writer
// waiting for it, or gives it back at once when none waits.
func (q *writerLock) run(a *acquisition, f *os.File) {
	err := q.lockFile(f)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == a {
		q.pending = nil
	}
	switch {
	case err != nil:
		f.Close()
		a.granted <- nil
	case a.waiting > 0:
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
