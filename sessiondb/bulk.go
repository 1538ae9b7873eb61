package sessiondb

import (
	"context"
	"errors"

	"github.com/hookwire/hookwire/sessions"
)

// Writer is what Import hands its fill function: it writes records as the
// store writes them (the same statements), inside Import's one
// transaction.
type Writer struct {
	ctx context.Context
	c   *dbConn
	rev int64
}

// Parent writes p whole (its row, entries, counters and frozen blocks).
func (w *Writer) Parent(p sessions.ParentRecord) error {
	w.rev = max(w.rev, p.Rev)
	_, err := writeParent(w.ctx, w.c, p)
	return err
}

// Tracked writes a tracked session with its agent and model decision.
func (w *Writer) Tracked(t sessions.TrackedRecord) error {
	w.rev = max(w.rev, t.Rev)
	_, err := writeTracked(w.ctx, w.c, t)
	return err
}

// Import writes many records into the state database at path (made with
// the schema a sidecar makes when there is none) in one write
// transaction: what fill writes, then the database's revision and clock
// moved past the highest revision written, so that a store opening it goes
// on from there. For tools and tests that make large databases: through a
// store, each parent takes a transaction of its own (minutes for 100,000).
func Import(ctx context.Context, path string, fill func(*Writer) error) error {
	if err := CheckStatePath(path); err != nil {
		return err
	}
	c, ro, err := openDB(ctx, path, openReadWrite)
	if err != nil {
		return err
	}
	defer c.close()
	if ro != "" {
		return errors.New(ro)
	}
	return c.inTx(ctx, func() error {
		w := &Writer{ctx: ctx, c: c}
		if err := fill(w); err != nil {
			return err
		}
		b := txRows{newStoreDB(c)}
		seq, clock, err := b.c.seqClock(ctx)
		if err != nil {
			return err
		}
		if err := b.setMeta(ctx, "seq", max(seq, w.rev+1)); err != nil {
			return err
		}
		return b.setMeta(ctx, "clock", max(clock, w.rev+1))
	})
}
