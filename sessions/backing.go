package sessions

import (
	"context"
	"sort"

	"github.com/hookwire/hookwire/core"
)

// The store's side of its Backend. With a database attached (Attach), the
// store's maps are a cache in front of it and the database is the truth:
//
//   - A method that may change what is kept runs its changes in one write
//     transaction (inWrite: Transactions.Write, which the Backend begins,
//     taking the database's write lock after this process's and other
//     processes' earlier writers, and ends), so it decides on the latest state: alias numbers are
//     allocated under the write lock, and two processes never hand out
//     the same one.
//   - Before reading, the store asks the Backend whether another process
//     committed since (DataVersion). If so, each cached parent and
//     tracked session is checked against its row's revision before use
//     and read again when it changed; a parent or session the cache lacks
//     is read through from the database.
//   - A changed parent is written whole (its entries and counters: a few
//     rows); frozen blocks are written one by one as they are made.
//   - The bounds of the whole database (parents, tracked sessions, the
//     byte budget, which counts the prompt-cache rows too) are enforced
//     in the transaction that grows it; the
//     cache's own evictions forget nothing from the database.
//
// Pending calls stay in memory: their outcome only reaches the process
// that saw the call begin.

// backing is the store's handle on its Backend; the store's mu guards it.
type backing struct {
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

	seen  int64  // data_version as last read
	epoch uint64 // bumped when another process committed
	// inRequest: a request is being served (BeginRequest); checked: its
	// data_version was read once already, so its reads outside a write
	// transaction use that answer.
	inRequest, checked bool
	inTx               bool
	// txErr: a write inside the transaction failed (abort): it is rolled
	// back when the change ends.
	txErr error
	seq   int64 // the revision this transaction writes (meta "seq")
	clock uint64

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

// newBacking is the store's handle on b, its statements run under ctx
// (less its cancellation) outside a method that gives its own.
func newBacking(ctx context.Context, b Backend, readOnly bool, report func(error)) *backing {
	base := context.WithoutCancel(ctx)
	return &backing{b: b, readOnly: readOnly, report: report, ctx: base, base: base}
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
	s.db = newBacking(ctx, b, readOnly, report)
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
	d := newBacking(base, b, false, report)
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

// BeginRequest marks the start of one request's work; the returned
// function its end. Within it, other processes' commits are looked for
// (PRAGMA data_version, a read transaction of its own) once for the reads
// and again in each write transaction, instead of once a store method: a
// transform told a dozen things of a session read the version twelve
// times. A write always decides on the latest state (begin refreshes
// inside the write lock); a read answers as of the request's start, as if
// the request had come a moment earlier.
func (s *Store) BeginRequest() (end func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return func() {}
	}
	d := s.db
	d.inRequest, d.checked = true, false
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		d.inRequest, d.checked = false, false
	}
}

// refresh notices other processes' commits; the caller holds mu.
func (d *backing) refresh() {
	if d == nil {
		return
	}
	if d.inRequest && d.checked && !d.inTx {
		return
	}
	d.checked = d.inRequest
	v, err := d.b.Tx.DataVersion(d.ctx)
	if err != nil {
		d.fail(err)
		return
	}
	if v != d.seen {
		d.seen = v
		d.epoch++
	}
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
	if d == nil || d.inTx {
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
			d.refresh()
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
// commits noticed, the write sequence and clock read, and what this
// process could not write before taken in.
func (s *Store) began() error {
	d := s.db
	d.refresh()
	seq, clock, err := d.b.Tx.SeqClock(d.ctx)
	if err != nil {
		return err
	}
	d.seq = seq
	d.clock = uint64(clock)
	s.clock = max(s.clock, d.clock)
	return s.takeUnwritten()
}

// takeUnwritten makes what this process acknowledged while no write could
// be made part of the transaction just begun: a parent or session whose
// row is as this process last saw it (or, new, still missing) is written
// whole; one another process changed or forgot meanwhile is dropped from
// the cache, read again at its next use, so a stale copy never overwrites
// another process's change.
func (s *Store) takeUnwritten() error {
	d := s.db
	for _, p := range d.unwrittenParents {
		if cur, ok := s.parents.list.Get(p.id); !ok || cur != p || !p.unwritten {
			continue
		}
		p.unwritten = false
		rev, ok, err := d.b.Parents.Rev(d.ctx, p.id)
		switch {
		case err == nil && !ok && p.rev == 0, err == nil && ok && rev == p.rev:
			p.dirty = true
			d.dirtyParents = append(d.dirtyParents, p)
		case err != nil:
			p.unwritten = true
			return err
		default:
			// Another process changed the parent meanwhile: its version
			// stands. The entries this process made and could not write
			// were never shown to the model by alias (entry.provisional),
			// so each is remembered again in that version, under the
			// alias it has free (issue 39 item 7: the alias was shown
			// and then given by the other process to its own child).
			mine := d.provisionalOf(p, s.parents.holds)
			p.epoch, p.newFrozen, p.goneFrozen = 0, nil, nil
			s.parents.drop(p)
			for _, e := range mine {
				pc := &pendingCall{parent: p.id, agent: e.agent.name, prefix: core.AliasPrefix(e.agent.name, s.cfg.AliasOverrides), label: e.label}
				if ne := s.Tasks().remember(pc, e.taskID); ne != nil && ne.run != e.run {
					s.parents.setRun(ne, e.run)
				}
			}
		}
	}
	d.unwrittenParents = d.unwrittenParents[:0]
	for _, sa := range d.unwrittenTracked {
		if cur, ok := s.tracked.list.Get(sa.session); !ok || cur != sa || !sa.unwritten {
			continue
		}
		sa.unwritten = false
		t, ok, err := d.b.Tracked.Read(d.ctx, sa.session)
		switch {
		case err == nil && !ok && sa.rev == 0, err == nil && ok && t.Rev == sa.rev:
			sa.dirty = true
			d.dirtyTracked = append(d.dirtyTracked, sa)
		case err != nil:
			sa.unwritten = true
			return err
		default:
			sa.epoch = 0
			s.tracked.untrack(sa.session)
		}
	}
	d.unwrittenTracked = d.unwrittenTracked[:0]
	return nil
}

// provisionalOf lists p's provisional entries, oldest use first (so that
// remembered again they keep their order).
func (d *backing) provisionalOf(p *parentState, holds func(*entry) bool) []*entry {
	var out []*entry
	for _, e := range d.provisional {
		if e.parent == p && holds(e) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tick < out[j].tick })
	return out
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
		p.rev, p.epoch = d.seq, d.epoch
	}
	for _, sa := range d.dirtyTracked {
		sa.dirty = false
		sa.rev, sa.epoch = d.seq, d.epoch
	}
	d.dirtyParents, d.dirtyTracked, d.deleted, d.untracked = d.dirtyParents[:0], d.dirtyTracked[:0], nil, nil
	d.settleProvisional(s.parents.holds)
}

// settleProvisional ends the provisional state of the entries now
// written, and forgets the ones no longer held; the caller holds mu.
func (d *backing) settleProvisional(holds func(*entry) bool) {
	keep := d.provisional[:0]
	for _, e := range d.provisional {
		if !holds(e) {
			continue
		}
		if e.parent.unwritten || e.parent.dirty {
			keep = append(keep, e)
			continue
		}
		e.provisional = false
	}
	clear(d.provisional[len(keep):])
	d.provisional = keep
}

// WriteUnwritten tries once more to write what this process acknowledged
// but could not write (before the store leaves its database).
func (s *Store) WriteUnwritten(ctx context.Context) {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly || len(d.unwrittenParents)+len(d.unwrittenTracked) == 0 {
		return
	}
	s.inWrite(noChange, false)
}

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

// fail reports err; the next commit that succeeds reports recovery. An
// error of a method whose context ended (the sidecar is stopping) is not
// the database's: what the method changed stays unwritten, for the next
// transaction or Close, and nothing is reported.
func (d *backing) fail(err error) {
	if d.ctx.Err() != nil {
		return
	}
	d.failed = true
	d.report(err)
}

// rollback is the cache's side of a transaction that did not commit (the
// Backend rolled it back). What the method changed stays in the cache, unwritten, and is checked against the database (its revision) at
// the next use after another process commits: kept while nobody else
// changed that parent or session, read again otherwise, so a later write
// never overwrites another process's change with a stale parent.
func (d *backing) rollback() {
	for _, p := range d.dirtyParents {
		p.dirty = false
		d.unwrite(p)
	}
	for _, sa := range d.dirtyTracked {
		sa.dirty = false
		d.unwriteTracked(sa)
	}
	d.dirtyParents, d.dirtyTracked, d.deleted, d.untracked = d.dirtyParents[:0], d.dirtyTracked[:0], nil, nil
}

// abort makes the write transaction running, if any, roll back when the
// change in it ends (a write in it failed).
func (d *backing) abort(err error) {
	if d.inTx && d.txErr == nil {
		d.txErr = err
	}
}

// unwrite keeps p, changed but not written, for the next transaction
// (takeUnwritten); its new frozen blocks stay listed for it.
func (d *backing) unwrite(p *parentState) {
	if !p.unwritten {
		p.unwritten = true
		d.unwrittenParents = append(d.unwrittenParents, p)
	}
}

func (d *backing) unwriteTracked(sa *sessionAgent) {
	if !sa.unwritten {
		sa.unwritten = true
		d.unwrittenTracked = append(d.unwrittenTracked, sa)
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

// markParent records that p changed (every change of a parent's contents
// counts its bytes, so addParentBytes calls it): in a transaction it is
// written at its end; read-only, the cache's version is pinned for the
// process's life; outside one (the database was busy) it stays in the
// cache only, as rollback says.
func (d *backing) markParent(p *parentState) {
	switch {
	case d == nil || d.loading || p.dirty:
	case d.readOnly:
		p.pinned = true
	case d.inTx:
		p.dirty = true
		d.dirtyParents = append(d.dirtyParents, p)
	default:
		d.unwrite(p)
	}
}

func (d *backing) markTracked(sa *sessionAgent) {
	switch {
	case d == nil || d.loading || sa.dirty:
	case d.readOnly:
		sa.pinned = true
	case d.inTx:
		sa.dirty = true
		d.dirtyTracked = append(d.dirtyTracked, sa)
	default:
		d.unwriteTracked(sa)
	}
}

// fresh stamps a parent or session the store just made as checked now.
func (d *backing) fresh() uint64 {
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
	d.seq++
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
		if err := b.Parents.Write(ctx, d.parentRecord(p, d.seq)); err != nil {
			return err
		}
	}
	for _, sa := range d.dirtyTracked {
		if err := b.Tracked.Write(ctx, trackedRecord(sa, d.seq)); err != nil {
			return err
		}
	}
	if err := s.prune(); err != nil {
		return err
	}
	d.pruneDue = d.overBound
	if err := b.Tx.SetMeta(ctx, "seq", d.seq); err != nil {
		return err
	}
	if s.clock > d.clock {
		if err := b.Tx.SetMeta(ctx, "clock", int64(s.clock)); err != nil {
			return err
		}
		d.clock = s.clock
	}
	return nil
}

// parentRecord is p as the Backend writes it, at revision seq: its
// entries and counters, and the frozen blocks made (each numbered from
// the transaction's sequence, the oldest first: seq grows with recency)
// or dropped since it was last written.
func (d *backing) parentRecord(p *parentState, seq int64) ParentRecord {
	rec := ParentRecord{ID: p.id, Rev: seq, Bytes: p.bytes, GoneFrozen: p.goneFrozen}
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
		d.seq++
		rec.Frozen = append(rec.Frozen, FrozenRecord{MessageID: id, Block: text, Seq: d.seq})
	}
	return rec
}

// trackedRecord is sa as the Backend writes it, at revision seq.
func trackedRecord(sa *sessionAgent, seq int64) TrackedRecord {
	return TrackedRecord{Session: sa.session, Agent: sa.agent, Rev: seq, Bytes: trackedCost(sa),
		Model: sa.model, Parent: sa.parent, Running: sa.running, Switches: sa.switches}
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

// WriteAll writes everything the memory-only store s holds into b,
// inside b's write transaction, keeping s's recency order (revisions
// grow with it), and prunes b to s's bounds: the import of a state file
// into a database.
func (s *Store) WriteAll(ctx context.Context, b Backend) error {
	seq, clock, err := b.Tx.SeqClock(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := newBacking(ctx, b, false, func(error) {})
	d.ctx, d.inTx, d.seq, d.clock = ctx, true, seq, uint64(clock)
	s.db = d
	defer func() { s.db = nil }()
	for _, p := range s.parents.list.Backward() { // oldest first: revisions grow with recency
		if p.frozen != nil {
			p.newFrozen = p.newFrozen[:0]
			for id := range p.frozen.Backward() {
				p.newFrozen = append(p.newFrozen, id)
			}
		}
		d.seq++
		if err := b.Parents.Write(ctx, d.parentRecord(p, d.seq)); err != nil {
			return err
		}
	}
	for _, sa := range s.tracked.list.Backward() {
		d.seq++
		if err := b.Tracked.Write(ctx, trackedRecord(sa, d.seq)); err != nil {
			return err
		}
	}
	if err := s.PromptCache().writeAll(); err != nil {
		return err
	}
	if err := s.prune(); err != nil {
		return err
	}
	if err := b.Tx.SetMeta(ctx, "seq", d.seq); err != nil {
		return err
	}
	return b.Tx.SetMeta(ctx, "clock", max(clock, int64(min(s.clock, maxClock))))
}
