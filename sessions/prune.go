package sessions

import (
	"context"
)

// The database's bounds, kept by the transaction that grows it and by
// PruneStep (PROTOCOL.md 6, Limits).

// PruneStep runs one transaction that prunes (at most PruneBatch rows of
// each table) and reports whether the database is still over its bounds
// and the transaction worked (so another step is worth its turn).
func (s *Store) PruneStep(ctx context.Context) bool {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly {
		return false
	}
	d.pruneDue = true
	if err := s.inWrite(noChange, true); err != nil {
		return false
	}
	return d.overBound && !d.failed
}

// OverBounds reports whether the database holds more parents or tracked
// sessions than the store's bounds, or more bytes than its budget (the
// prompt-cache rows count).
func (s *Store) OverBounds(ctx context.Context) bool {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly {
		return false
	}
	parents, tracked, bytes, err := d.b.Upkeep.Counts(d.ctx)
	if err != nil {
		return false
	}
	return parents > s.cfg.MaxParents || tracked > s.cfg.MaxTrackedSessions || bytes > int64(s.cfg.MaxStateBytes)
}

// PruneBatch is the most parents and tracked sessions one transaction
// forgets. A database far over its bounds (a user who raised maxParents
// and lowered it again, two configs on one project) is brought within
// them over as many transactions as it takes (PruneStep), each a few
// milliseconds, so no request waits on an old database.
const PruneBatch = 200

// prune brings the database toward the store's bounds (Upkeep.Prune)
// and forgets from the cache what it forgot; d.overBound says whether
// more is left for the next transaction.
func (s *Store) prune() error {
	d := s.db
	pr, err := d.b.Upkeep.Prune(d.ctx, Bounds{MaxParents: s.cfg.MaxParents, MaxTrackedSessions: s.cfg.MaxTrackedSessions,
		MaxBytes: int64(s.cfg.MaxStateBytes), Batch: PruneBatch})
	if err != nil {
		return err
	}
	for _, id := range pr.Parents {
		if p, ok := s.parents.list.Get(id); ok && !p.dirty {
			s.parents.drop(p)
		}
	}
	for _, session := range pr.Tracked {
		if s.tracked.list.Has(session) {
			s.tracked.untrack(session)
		}
	}
	d.overBound = pr.OverBound
	return nil
}
