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
	if err == nil {
		err = c.revs.save(ctx, c)
	}
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
	c.revs = revisions{open: true}
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
	c.revs = revisions{}
	c.turn.release()
	c.turn = turn{}
	if c.writing {
		c.writing = false
		c.writers.unlock()
	}
}

// revisions are the revisions a write transaction gives the rows it
// writes (a parent, a tracked session, a frozen block): each the next of
// the database's write sequence (meta "seq"), so a row's revision changes
// whenever it is written and grows with the order rows were written in
// (the listing and the prune's "least recently written"). The sequence
// is read at the transaction's first row and saved before it commits.
type revisions struct {
	open       bool // a write transaction runs
	loaded     bool
	base, last int64
}

// saw primes r with the sequence read inside the write transaction
// (seqClock, as the store's transaction begins), sparing a read.
func (r *revisions) saw(seq int64) {
	if r.open && !r.loaded {
		r.loaded, r.base, r.last = true, seq, seq
	}
}

// next is the next revision of the transaction running on c.
func (r *revisions) next(ctx context.Context, c *dbConn) (int64, error) {
	if err := r.load(ctx, c); err != nil {
		return 0, err
	}
	r.last++
	return r.last, nil
}

// given notes a revision the writer gave a row itself (an import), so the
// sequence goes on past it.
func (r *revisions) given(ctx context.Context, c *dbConn, rev int64) error {
	if err := r.load(ctx, c); err != nil {
		return err
	}
	r.last = max(r.last, rev)
	return nil
}

func (r *revisions) load(ctx context.Context, c *dbConn) error {
	if r.loaded {
		return nil
	}
	var seq int64
	if err := c.queryRow(ctx, "SELECT coalesce((SELECT value FROM meta WHERE key='seq'),0)").Scan(&seq); err != nil {
		return err
	}
	r.loaded, r.base, r.last = true, seq, seq
	return nil
}

// save writes the sequence past the revisions given, inside the
// transaction (never back: an import may have moved it further).
func (r *revisions) save(ctx context.Context, c *dbConn) error {
	if !r.loaded || r.last <= r.base {
		return nil
	}
	return c.exec(ctx, "INSERT INTO meta(key,value) VALUES('seq',?) ON CONFLICT(key) DO UPDATE SET value=max(value,excluded.value)", r.last)
}
