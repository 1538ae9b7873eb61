package sessions

import (
	"context"
)

// Attaching the store to a database, and moving it to another (the file
// replaced under the process), and the import of a memory-only store into
// one (WriteAll).

// Attach makes b the store's database; the store's cache starts empty.
// Its statements run under ctx (less its cancellation) outside a method
// that gives its own. Read-only, what the store changes lives in memory
// only. report is told of each failed read or write (nil: one succeeded
// again); the store keeps serving from its cache.
func (s *Store) Attach(ctx context.Context, b Backend, readOnly bool, report func(error)) {
	s.pages.Lock()
	defer s.pages.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
	s.db = newPersistence(ctx, b, readOnly, report)
}

// Reattach moves the store to the database open makes at the same path
// (the file was replaced, deleted or moved aside under this process), and
// writes there every parent and tracked session the cache holds that it
// lacks: what this process acknowledged is not lost with the old file.
// One the new database holds is read from it (another process's stands).
// The old Backend is closed first: its -wal and -shm are named by the
// path, and the new file must not be read with the old file's WAL. When
// open fails the store serves from memory, and a later
// Reattach tries again with the same context and report. The new Backend is writable,
// and told of failures as the old one's were.
func (s *Store) Reattach(open func() (Backend, error)) error {
	s.pages.Lock()
	defer s.pages.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.db
	if old != nil {
		old.b.Tx.Close()
		s.db = nil
	} else {
		old = s.lost // an earlier open failed: this one is tried again
	}
	b, err := open()
	if err != nil {
		s.lost = old
		return err
	}
	s.lost = nil
	base, report := context.Background(), func(error) {}
	var provisional []*entry
	if old != nil {
		base, report, provisional = old.base, old.report, old.provisional
	}
	d := newPersistence(base, b, false, report)
	// The entries not yet written stay so until the new database has them
	// (settleProvisional, at the commit below).
	d.provisional = provisional
	s.db = d
	d.epoch = 1
	for _, p := range s.parents.list.All() {
		p.rev, p.epoch, p.dirty, p.pinned, p.unwritten, p.goneFrozen = 0, 0, false, false, false, nil
		p.newFrozen = p.newFrozen[:0]
		if p.frozen != nil {
			for id := range p.frozen.Backward() {
				p.newFrozen = append(p.newFrozen, id)
			}
		}
		d.unwrite(p)
	}
	for _, sa := range s.tracked.list.All() {
		sa.rev, sa.epoch, sa.dirty, sa.pinned, sa.unwritten = 0, 0, false, false, false
		d.unwriteTracked(sa)
	}
	if !d.readOnly {
		s.inWrite(noChange, false)
	}
	return nil
}

// Detach ends the store's use of its Backend (the caller closes it): it
// serves from memory with what it holds.
func (s *Store) Detach() {
	s.pages.Lock()
	defer s.pages.Unlock()
	s.mu.Lock()
	s.db = nil
	s.mu.Unlock()
}

// WriteAll writes everything the memory-only store s holds into b,
// inside b's write transaction, keeping s's recency order (revisions
// grow with it), and prunes b to s's bounds: the import of a state file
// into a database.
func (s *Store) WriteAll(ctx context.Context, b Backend) error {
	clock, err := b.Tx.Clock(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := newPersistence(ctx, b, false, func(error) {})
	d.ctx, d.inTx, d.clock = ctx, true, uint64(clock)
	s.db = d
	defer func() { s.db = nil }()
	for _, p := range s.parents.list.Backward() { // oldest first: revisions grow with recency
		if p.frozen != nil {
			p.newFrozen = p.newFrozen[:0]
			for id := range p.frozen.Backward() {
				p.newFrozen = append(p.newFrozen, id)
			}
		}
		if err := d.writeParent(p); err != nil {
			return err
		}
	}
	for _, sa := range s.tracked.list.Backward() {
		if err := d.writeTracked(sa); err != nil {
			return err
		}
	}
	if err := s.PromptCache().writeAll(); err != nil {
		return err
	}
	if err := s.prune(); err != nil {
		return err
	}
	return b.Tx.SetClock(ctx, max(clock, int64(min(s.clock, maxClock))))
}
