package sessions

import (
	"context"
	"math"
)

// unbounded is a Config that drops nothing: what a reader of the whole
// database lists is what it holds.
var unbounded = Config{
	MaxSessionsPerAgent: math.MaxInt,
	MaxParents:          math.MaxInt,
	MaxTrackedSessions:  math.MaxInt,
	MaxStateBytes:       math.MaxInt,
}

// Unbounded returns an empty store with no bounds: what it reads from a
// database (ReadAll) or a state file is what that holds.
func Unbounded() *Store { return New(unbounded) }

// ReadAll reads the whole of b into a new memory-only store with no
// bounds, the most recently written parents and sessions first, in one
// read transaction, so it sees one state however others write.
func ReadAll(ctx context.Context, b Backend) (*Store, error) {
	return newPersistence(ctx, b, true, func(error) {}).readAll()
}

// readAll reads the whole database into a new memory-only store with no
// bounds, the most recently written parents and sessions first; the
// caller holds the store's mu (or owns d alone). It reads in one
// transaction, so it sees one state however others write.
func (d *persistence) readAll() (*Store, error) {
	if !d.inTx {
		var out *Store
		err := d.b.Tx.Read(d.ctx, func() error {
			var err error
			out, err = d.readAllIn()
			return err
		})
		return out, err
	}
	return d.readAllIn()
}

func (d *persistence) readAllIn() (*Store, error) {
	reader := New(unbounded)
	reader.db = newPersistence(d.ctx, d.b, true, func(error) {})
	reader.db.epoch = 1
	ids, err := d.b.Parents.Revs(d.ctx)
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- { // oldest first: each read becomes the most recent
		_, top, err := reader.db.readParent(&reader.parents, ids[i].ID, ids[i].Rev, reader.cfg.MaxSessionsPerAgent)
		if err != nil {
			return nil, err
		}
		reader.clock = max(reader.clock, top)
	}
	sessions, err := d.b.Tracked.List(d.ctx)
	if err != nil {
		return nil, err
	}
	for _, session := range sessions {
		reader.cachedAgent(session)
	}
	if list, err := d.b.Health.ReadAll(d.ctx); err == nil { // no table: a database no sidecar of this build has written
		for _, h := range list {
			reader.health.put(h)
		}
	}
	caches, err := d.b.Cache.ReadAll(d.ctx)
	if err != nil {
		return nil, err
	}
	if err := reader.cache.restore(caches); err != nil {
		return nil, err
	}
	reader.db = nil
	return reader, nil
}

// stats counts what the database holds.
func (d *persistence) stats() (Stats, error) {
	st, err := d.b.Upkeep.Stats(d.ctx)
	if err != nil {
		d.fail(err)
	}
	return st, err
}

// parentsOfTask lists the parents with an entry whose task id is id.
func (d *persistence) parentsOfTask(id string) []string {
	out, err := d.b.Parents.OfTask(d.ctx, id)
	if err != nil {
		d.fail(err)
		return nil
	}
	return out
}
