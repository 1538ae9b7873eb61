package sessiondb

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"time"
)

// The WAL's bound (PROTOCOL.md 6). SQLite's automatic checkpoint is
// PASSIVE: it copies into FILE only the frames no reader still needs, and
// the WAL starts over from its beginning only when a checkpoint got to
// its end and no reader was left in it. With several processes reading
// and writing all the time that moment never came, and the WAL only
// grew: 566 MB in 19 s for four processes, 183 MiB in 3 s for eight.
//
// So the writer whose commit finds FILE-wal past walCheckpointBytes runs
// a RESTART checkpoint before it gives up its turn in the writers' queue
// (dbqueue.go): with the write lock held it copies the WAL into FILE,
// waits up to walCheckpointWait for the readers still in the WAL (each
// read is one short statement), and the next commit starts the WAL over
// from its beginning. The file is kept at walFileLimit (PRAGMA
// journal_size_limit cuts it back to that when the WAL starts over), so
// the next frames overwrite it in place, which syncs faster than a file
// that grows; it is longer only while the WAL holds more. A reader that
// holds its snapshot longer (a listing of a large store) makes the
// checkpoint give up; the next tries back off (walBound) so the writers
// do not pay for each, the wait for readers grows once the WAL is twice
// its bound, and the first try that finds no reader in the WAL ends the
// growth.

const (
	// walCheckpointBytes: FILE-wal past this is checkpointed by the writer
	// that committed, in its turn. With FILE within an eighth above the
	// byte budget (16 MiB) it keeps both files under 24 MiB.
	walCheckpointBytes = 6 << 20
	// walFileLimit: a WAL file longer than this is cut back to it when
	// the WAL starts over.
	walFileLimit = walCheckpointBytes
	// walCheckpointWait bounds a checkpoint's wait for readers, and
	// walCheckpointWaitFar once FILE-wal is past twice its bound (a reader
	// held up by a starved CPU is waited for a while longer).
	walCheckpointWait    = 20 * time.Millisecond
	walCheckpointWaitFar = 100 * time.Millisecond
	// walBackoffMin and walBackoffMax bound the wait after a checkpoint
	// that did not finish before the next is tried.
	walBackoffMin = 10 * time.Millisecond
	walBackoffMax = 100 * time.Millisecond
)

// walBound is a connection's record of its checkpoints.
type walBound struct {
	backoff time.Duration // 0: the last one finished
	retryAt time.Time
}

// due reports whether a WAL file of size bytes is to be checkpointed now,
// and how long the checkpoint waits for readers.
func (w *walBound) due(size int64, now time.Time) (wait time.Duration, ok bool) {
	if size <= walCheckpointBytes || w.backoff != 0 && now.Before(w.retryAt) {
		return 0, false
	}
	if size > 2*walCheckpointBytes {
		return walCheckpointWaitFar, true
	}
	return walCheckpointWait, true
}

// done records a checkpoint's outcome: a try that did not finish doubles
// the wait before the next (from walBackoffMin up to walBackoffMax).
func (w *walBound) done(finished bool, now time.Time) {
	if finished {
		w.backoff, w.retryAt = 0, time.Time{}
		return
	}
	w.backoff = min(max(2*w.backoff, walBackoffMin), walBackoffMax)
	w.retryAt = now.Add(w.backoff)
}

// boundWAL is called after each commit, with the writers' turn held: it
// checkpoints the WAL when FILE-wal is past its bound and a try is due.
func (c *dbConn) boundWAL(ctx context.Context) {
	fi, err := os.Stat(c.path + "-wal")
	if err != nil {
		return
	}
	wait, ok := c.wal.due(fi.Size(), time.Now())
	if !ok {
		return
	}
	c.wal.done(c.restart(ctx, wait), time.Now())
}

// restart runs a RESTART checkpoint, waiting at most wait for readers
// (another connection's checkpoint in progress makes it give up at once);
// it reports whether it finished: the next commit starts the WAL over.
func (c *dbConn) restart(ctx context.Context, wait time.Duration) bool {
	if _, err := c.conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(int(wait/time.Millisecond))); err != nil {
		return false
	}
	defer c.conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(int(busyTimeout/time.Millisecond)))
	return checkpoint(ctx, c.conn, "RESTART")
}

// checkpoint runs PRAGMA wal_checkpoint(mode) on conn and reports whether
// it finished (no reader or writer kept it from the WAL's end).
func checkpoint(ctx context.Context, conn *sql.Conn, mode string) bool {
	var busy, frames, copied int64
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &copied); err != nil {
		return false
	}
	return busy == 0
}
