package sessiondb

import (
	"context"
	"errors"
)

// The write transactions of a connection: one writer at a time on the
// file, this process's first (dbwriters.go), then other processes' (the
// queue, dbqueue.go, and BEGIN IMMEDIATE).

// inTx runs fn in a write transaction (BEGIN IMMEDIATE: the write lock is
// taken first, so what fn reads stays true until it commits).
func (c *dbConn) inTx(ctx context.Context, fn func() error) (err error) {
	if err := c.beginWrite(ctx); err != nil {
		return classify(err)
	}
	// A panic in fn (a bug) still ends the transaction: one left open
	// kept SQLite's write lock for the life of the process, and every
	// other process on the file got "database is locked".
	done := false
	defer func() {
		if !done {
			c.rollback(ctx)
		}
	}()
	err = fn()
	done = true
	if err != nil {
		c.rollback(ctx)
		return classify(err)
	}
	if err := c.commit(ctx); err != nil {
		c.rollback(ctx)
		return classify(err)
	}
	return nil
}

// beginWrite starts a write transaction: it waits for this process's
// earlier writers on the file (dbwriters.go), then for other processes
// (BEGIN IMMEDIATE, within the busy timeout). commit or rollback ends it.
func (c *dbConn) beginWrite(ctx context.Context) error {
	if c.writing {
		return errors.New("a write transaction is already open on this connection")
	}
	if c.writers != nil {
		if err := c.writers.lock(ctx, busyTimeout); err != nil {
			return err
		}
		c.writing = true
	}
	if c.queue != nil {
		c.turn, _ = c.queue.lock(ctx, queueWait)
	}
	if _, err := c.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		c.endWrite()
		return err
	}
	return nil
}

// commit commits the write transaction; when it fails the transaction is
// still this connection's, for rollback to end.
func (c *dbConn) commit(ctx context.Context) error {
	if _, err := c.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	c.boundWAL(ctx)
	c.endWrite()
	return nil
}

// rollback ends the write transaction, if one is open, and gives the turn
// to the next writer. It runs when ctx is done too (what was cancelled is
// the work, not its undoing).
func (c *dbConn) rollback(ctx context.Context) {
	c.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	c.endWrite()
}

// endWrite gives the next writer on the file its turn: another
// process's waiting in the queue, and this process's.
func (c *dbConn) endWrite() {
	c.turn.release()
	c.turn = turn{}
	if c.writing {
		c.writing = false
		c.writers.unlock()
	}
}
