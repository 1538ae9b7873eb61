package sessions

import (
	"context"
)

// The store's side of its Backend. With a database attached (Attach), the
// store's maps are a cache in front of it and the database is the truth:
//
//   - A method that may change what is kept runs its changes in one write
//     transaction (inWrite: Transactions.Write, which the Backend begins,
//     taking the database's write lock after this process's and other
//     processes' earlier writers, and ends), so it decides on the latest
//     state: alias numbers are allocated under the write lock, and two
//     processes never hand out the same one.
//   - Before reading, the store asks the Backend whether another process
//     committed since (its Epoch). If so, each cached parent and
//     tracked session is checked against its row's revision (the one the
//     Backend gave it when it was written) before use and read again when
//     it changed; a parent or session the cache lacks is read through
//     from the database.
//   - A changed parent is written whole (its entries and counters: a few
//     rows); frozen blocks are written one by one as they are made.
//   - The bounds of the whole database (parents, tracked sessions, the
//     byte budget, which counts the prompt-cache rows too) are enforced
//     in the transaction that grows it; the
//     cache's own evictions forget nothing from the database.
//
// Pending calls stay in memory: their outcome only reaches the process
// that saw the call begin.

// persistence is the store's handle on its Backend; the store's mu guards it.
type persistence struct {
	b        Backend
	readOnly bool
	report   func(error) // a failed read or write (nil: working again): logged, shown in status
	failed   bool

	// ctx is what the store's statements run under: the context of the
	// method that holds mu (Store.lock, the caller's, for its transaction
	// and the reads it makes), else base.
	ctx context.Context
	// base is the context the database was opened with, less its
	// cancellation: for the methods that only read, and take none (a
	// read of the cache's row must answer while the sidecar stops).
	base context.Context

	epoch uint64 // the Backend's epoch as last read (moves on when another process committed)
	inTx  bool
	// txErr: a write inside the transaction failed (abort): it is rolled
	// back when the change ends. cacheOnly: a change runs on the cache
	// alone, no transaction could begin.
	txErr     error
	cacheOnly bool
	clock     uint64 // the database's logical clock as the transaction began

	dirtyParents []*parentState
	dirtyTracked []*sessionAgent
	// What this process acknowledged but could not write yet (a busy or
	// failing database): the next transaction that begins writes it.
	unwrittenParents []*parentState
	unwrittenTracked []*sessionAgent
	// provisional: the entries made but not yet written (entry.provisional).
	provisional []*entry
	deleted     []string // parents forgotten with DeleteSession
	untracked   []string // sessions whose agent was forgotten on purpose
	loading     bool     // filling the cache: nothing is dirty
	// overBound: the last prune left the database over its bounds (it
	// forgets at most PruneBatch rows a transaction); pruneDue: the next
	// transaction prunes even when it writes nothing else.
	overBound, pruneDue bool
}

// newPersistence is the store's handle on b, its statements run under ctx
// (less its cancellation) outside a method that gives its own.
func newPersistence(ctx context.Context, b Backend, readOnly bool, report func(error)) *persistence {
	base := context.WithoutCancel(ctx)
	return &persistence{b: b, readOnly: readOnly, report: report, ctx: base, base: base}
}

// lock takes mu for a method whose statements run under ctx (the
// caller's: a write transaction's wait for the lock ends with it); unlock
// releases mu.
func (s *Store) lock(ctx context.Context) {
	s.mu.Lock()
	if s.db != nil {
		s.db.ctx = ctx
	}
}

// BeginRequest marks the start of one request's work; the returned
// function its end. Within it, the Backend decides how often its Epoch
// looks for other processes' commits (Transactions.BeginRequest: once for
// the reads, again in each write transaction, so a write always decides
// on the latest state).
func (s *Store) BeginRequest() (end func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return func() {}
	}
	endTx := s.db.b.Tx.BeginRequest()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		endTx()
	}
}

// refresh notices other processes' commits (as often as the Backend's
// Epoch looks); the caller holds mu.
func (d *persistence) refresh() {
	if d == nil {
		return
	}
	e, err := d.b.Tx.Epoch(d.ctx)
	if err != nil {
		d.fail(err)
		return
	}
	d.epoch = max(d.epoch, e)
}

// inWrite runs change, what a method changes, in one write transaction
// of the database, which the Backend begins and ends (inside the
// transaction already running, when one is). The transaction first takes
// in what this process could not write before (takeUnwritten); after
// change it writes what changed and prunes. When the transaction cannot
// be begun (the database read-only, busy beyond the timeout, failing)
// change runs on the cache alone, and what it changes is written with the
// next transaction that works; unless whole, when change does not run and
// the error says why. When change fails, or the write or commit after it,
// what it changed stays in the cache, unwritten (rollback). The caller
// holds mu.
func (s *Store) inWrite(change func() error, whole bool) error {
	d := s.db
	if d == nil || d.inTx || d.cacheOnly {
		return change()
	}
	if d.readOnly {
		d.refresh()
		return change()
	}
	ran, wrote := false, false
	err := d.b.Tx.Write(d.ctx, func() error {
		d.inTx = true
		defer func() { d.inTx = false }()
		if err := s.began(); err != nil {
			return err
		}
		ran = true
		d.txErr = nil
		if err := change(); err != nil {
			return err
		}
		if err := d.txErr; err != nil {
			d.txErr = nil
			return err
		}
		if len(d.dirtyParents) == 0 && len(d.dirtyTracked) == 0 && len(d.deleted) == 0 && len(d.untracked) == 0 && !d.pruneDue {
			return nil
		}
		wrote = true
		return s.write()
	})
	if err != nil {
		d.fail(err)
		d.rollback()
		if !ran && !whole {
			// On the cache alone, what change calls that writes too
			// does not try the database again (one wait, not one a call).
			d.refresh()
			d.cacheOnly = true
			defer func() { d.cacheOnly = false }()
			return change()
		}
		return err
	}
	if wrote {
		s.committed()
	}
	return nil
}

// noChange is a change that changes nothing: the transaction writes what
// this process could not write before, or prunes.
func noChange() error { return nil }

// began readies the write transaction just begun: other processes'
// commits noticed, the logical clock read, and what this
// process could not write before taken in.
func (s *Store) began() error {
	d := s.db
	d.refresh()
	clock, err := d.b.Tx.Clock(d.ctx)
	if err != nil {
		return err
	}
	d.clock = uint64(clock)
	s.clock = max(s.clock, d.clock)
	return s.takeUnwritten()
}

// committed marks what the transaction wrote as the database's (its
// revision and epoch) and reports that writes work again.
func (s *Store) committed() {
	d := s.db
	if d.failed {
		d.failed = false
		d.report(nil)
	}
	for _, p := range d.dirtyParents {
		p.dirty, p.newFrozen, p.goneFrozen = false, nil, nil
		p.rev, p.epoch = p.written, d.epoch
	}
	for _, sa := range d.dirtyTracked {
		sa.dirty = false
		sa.rev, sa.epoch = sa.written, d.epoch
	}
	d.dirtyParents, d.dirtyTracked, d.deleted, d.untracked = d.dirtyParents[:0], d.dirtyTracked[:0], nil, nil
	d.settleProvisional(s.parents.holds)
}

// fail reports err; the next commit that succeeds reports recovery. An
// error of a method whose context ended (the sidecar is stopping) is not
// the database's: what the method changed stays unwritten, for the next
// transaction or Close, and nothing is reported.
func (d *persistence) fail(err error) {
	if d.ctx.Err() != nil {
		return
	}
	d.failed = true
	d.report(err)
}

// abort makes the write transaction running, if any, roll back when the
// change in it ends (a write in it failed).
func (d *persistence) abort(err error) {
	if d.inTx && d.txErr == nil {
		d.txErr = err
	}
}

// unlock releases mu (lock's).
func (s *Store) unlock() { s.release() }

// release gives the store's statements back to the database's own
// context (lock took the caller's) and releases mu.
func (s *Store) release() {
	if s.db != nil {
		s.db.ctx = s.db.base
	}
	s.mu.Unlock()
}

// rowSync is how a cached parent or tracked session stands against its
// row in the database: the revision read or written, the epoch it was
// last checked in, and whether it changed since (dirty: written at the
// transaction's end; unwritten: changed while no write could be made,
// written by the next transaction that begins unless another process
// changed the row meanwhile, unwritten.go; pinned: changed on a
// read-only database, this process's for its life).
type rowSync struct {
	rev                      int64
	written                  int64 // the revision the transaction running wrote it at
	epoch                    uint64
	dirty, pinned, unwritten bool
}

// current: the cached copy needs no check against its row in this epoch
// (checked in it, or this process's own change).
func (r *rowSync) current(epoch uint64) bool {
	return r.epoch == epoch || r.dirty || r.pinned || r.unwritten
}

func (r *rowSync) sync() *rowSync { return r }

// cachedRow is a parent or a tracked session, each with its rowSync.
type cachedRow interface {
	*parentState | *sessionAgent
	sync() *rowSync
}

// markParent records that p changed (every change of a parent's contents
// counts its bytes, so addParentBytes calls it), markTracked that sa did.
func (d *persistence) markParent(p *parentState) {
	if d != nil {
		markRow(d, p, &d.dirtyParents, &d.unwrittenParents)
	}
}

func (d *persistence) markTracked(sa *sessionAgent) {
	if d != nil {
		markRow(d, sa, &d.dirtyTracked, &d.unwrittenTracked)
	}
}

// markRow records that row changed: in a transaction it is written at
// its end (dirty); read-only, the cache's version is pinned for the
// process's life; outside one (the database was busy) it stays in the
// cache only, unwritten, as rollback says.
func markRow[T cachedRow](d *persistence, row T, dirty, unwritten *[]T) {
	r := row.sync()
	switch {
	case d.loading || r.dirty:
	case d.readOnly:
		r.pinned = true
	case d.inTx:
		r.dirty = true
		*dirty = append(*dirty, row)
	default:
		unwriteRow(row, unwritten)
	}
}

// unwriteRow keeps row, changed but not written, for the next
// transaction (takeUnwritten).
func unwriteRow[T cachedRow](row T, unwritten *[]T) {
	if r := row.sync(); !r.unwritten {
		r.unwritten = true
		*unwritten = append(*unwritten, row)
	}
}

// fresh stamps a parent or session the store just made as checked now.
func (d *persistence) fresh() uint64 {
	if d == nil {
		return 0
	}
	return d.epoch
}

// write writes the transaction's changes and prunes; inside the
// transaction.
func (s *Store) write() error {
	d := s.db
	b, ctx := d.b, d.ctx
	for _, id := range d.deleted {
		if err := b.Parents.Delete(ctx, id); err != nil {
			return err
		}
	}
	for _, session := range d.untracked {
		if err := b.Tracked.Delete(ctx, session); err != nil {
			return err
		}
	}
	for _, p := range d.dirtyParents {
		if err := d.writeParent(p); err != nil {
			return err
		}
	}
	for _, sa := range d.dirtyTracked {
		if err := d.writeTracked(sa); err != nil {
			return err
		}
	}
	if err := s.prune(); err != nil {
		return err
	}
	d.pruneDue = d.overBound
	if s.clock > d.clock {
		if err := b.Tx.SetClock(ctx, int64(s.clock)); err != nil {
			return err
		}
		d.clock = s.clock
	}
	return nil
}

// writeParent writes p, noting the revision the Backend gave it (its rev
// once the transaction commits); writeTracked writes sa so.
func (d *persistence) writeParent(p *parentState) error {
	rev, err := d.b.Parents.Write(d.ctx, d.parentRecord(p))
	p.written = rev
	return err
}

func (d *persistence) writeTracked(sa *sessionAgent) error {
	rev, err := d.b.Tracked.Write(d.ctx, trackedRecord(sa))
	sa.written = rev
	return err
}

// parentRecord is p as the Backend writes it: its entries and counters,
// and the frozen blocks made (the oldest first: the Backend numbers them
// so the numbers grow with recency) or dropped since it was last written.
func (d *persistence) parentRecord(p *parentState) ParentRecord {
	rec := ParentRecord{ID: p.id, Bytes: p.bytes, GoneFrozen: p.goneFrozen}
	for _, a := range p.agents {
		for _, e := range a.entries.All() {
			rec.Entries = append(rec.Entries, EntryRecord{Agent: a.name, Alias: e.alias, TaskID: e.taskID, Label: e.label,
				LastUse: e.lastUse, Tick: int64(e.tick), Run: e.run})
		}
	}
	rec.Counters = make(map[string]int64, len(p.counters))
	for prefix, n := range p.counters {
		rec.Counters[prefix] = int64(n)
	}
	for _, id := range p.newFrozen {
		text, ok := frozenText(p, id)
		if !ok {
			continue
		}
		rec.Frozen = append(rec.Frozen, FrozenRecord{MessageID: id, Block: text})
	}
	return rec
}

// trackedRecord is sa as the Backend writes it.
func trackedRecord(sa *sessionAgent) TrackedRecord {
	return TrackedRecord{Session: sa.session, Agent: sa.agent, Bytes: trackedCost(sa),
		Model: sa.model, Parent: sa.parent, Running: sa.running, Switches: sa.switches}
}
