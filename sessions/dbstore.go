package sessions

import (
	"context"
	"database/sql"
	"errors"
)

// The store's database side. With a database attached (Database), the
// store's maps are a cache in front of it and the database is the truth:
//
//   - A method that may change what is kept runs in one write transaction
//     (begin ... finish, BEGIN IMMEDIATE, after this process's earlier
//     writers on the file: dbwriters.go), so it decides on the latest
//     state: alias numbers are allocated under the write lock, and two
//     processes never hand out the same one.
//   - Before reading, the store asks SQLite whether another process
//     committed since (PRAGMA data_version). If so, each cached parent and
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

// storeDB is the store's handle on the database; the store's mu guards it.
type storeDB struct {
	c        *dbConn
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
	inTx  bool
	seq   int64 // the revision this transaction writes (meta "seq")
	clock uint64

	dirtyParents []*parentState
	dirtyTracked []*sessionAgent
	// What this process acknowledged but could not write yet (a busy or
	// failing database): the next transaction that begins writes it.
	unwrittenParents []*parentState
	unwrittenTracked []*sessionAgent
	deleted          []string // parents forgotten with DeleteSession
	untracked        []string // sessions whose agent was forgotten on purpose
	loading          bool     // filling the cache: nothing is dirty
	// overBound: the last prune left the database over its bounds (it
	// forgets at most pruneBatch rows a transaction); pruneDue: the next
	// transaction prunes even when it writes nothing else.
	overBound, pruneDue bool
}

// newStoreDB is the store's handle on c, its statements run under ctx
// (less its cancellation) outside a method that gives its own.
func newStoreDB(ctx context.Context, c *dbConn, readOnly bool, report func(error)) *storeDB {
	base := context.WithoutCancel(ctx)
	return &storeDB{c: c, readOnly: readOnly, report: report, ctx: base, base: base}
}

// lock takes mu for a method whose statements run under ctx (the
// caller's: a write transaction's wait for the lock ends with it); unlock
// finishes its transaction and releases mu.
func (s *Store) lock(ctx context.Context) {
	s.mu.Lock()
	if s.db != nil {
		s.db.ctx = ctx
	}
}

// attach makes d the store's database; the store's cache starts empty.
func (s *Store) attach(d *storeDB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
	s.db = d
}

// reattach moves the store to the database open makes at the same path
// (the file was replaced, deleted or moved aside under this process), and
// writes there every parent and tracked session the cache holds that it
// lacks: what this process acknowledged is not lost with the old file.
// One the new database holds is read from it (another process's stands).
// The old connection is closed first: its -wal and -shm are named by the
// path, and the new file must not be read with the old file's WAL. When
// open fails the store serves from memory.
func (s *Store) reattach(open func() (*storeDB, error)) error {
	s.closeLister()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.db; old != nil {
		old.c.close()
		s.db = nil
	}
	d, err := open()
	if err != nil {
		return err
	}
	s.db = d
	d.epoch = 1
	for _, p := range s.parents.All() {
		p.rev, p.epoch, p.dirty, p.pinned, p.unwritten, p.goneFrozen = 0, 0, false, false, false, nil
		p.newFrozen = p.newFrozen[:0]
		if p.frozen != nil {
			for id := range p.frozen.Backward() {
				p.newFrozen = append(p.newFrozen, id)
			}
		}
		d.unwrite(p)
	}
	for _, sa := range s.agents.All() {
		sa.rev, sa.epoch, sa.dirty, sa.pinned, sa.unwritten = 0, 0, false, false, false
		d.unwriteTracked(sa)
	}
	if !d.readOnly {
		s.begin()
		s.finish()
	}
	return nil
}

// detach closes the store's use of its database: it serves from memory
// with what it holds.
func (s *Store) detach() {
	s.mu.Lock()
	s.db = nil
	s.mu.Unlock()
	s.closeLister()
}

// refresh notices other processes' commits; the caller holds mu.
func (s *Store) refresh() {
	d := s.db
	if d == nil {
		return
	}
	v, err := d.c.dataVersion(d.ctx)
	if err != nil {
		d.fail(err)
		return
	}
	if v != d.seen {
		d.seen = v
		d.epoch++
	}
}

// begin starts the write transaction of a method that may change what is
// kept (once per method; finish ends it). Read-only, or when the database
// is busy beyond the timeout, the method works on the cache alone and what
// it changes is written with the next transaction that succeeds.
func (s *Store) begin() {
	d := s.db
	if d == nil || d.inTx {
		return
	}
	if d.readOnly {
		s.refresh()
		return
	}
	if err := d.c.beginWrite(d.ctx); err != nil {
		d.fail(classify(err))
		s.refresh()
		return
	}
	d.inTx = true
	s.refresh()
	seq, clock, err := d.c.seqClock(d.ctx)
	if err != nil {
		d.fail(err)
		d.rollback()
		return
	}
	d.seq = seq
	d.clock = uint64(clock)
	s.clock = max(s.clock, d.clock)
	if err := s.takeUnwritten(); err != nil {
		d.fail(classify(err))
		d.rollback()
	}
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
		if cur, ok := s.parents.Get(p.id); !ok || cur != p || !p.unwritten {
			continue
		}
		p.unwritten = false
		var rev int64
		err := d.c.queryRow(d.ctx, "SELECT rev FROM parents WHERE id=?", p.id).Scan(&rev)
		switch {
		case errors.Is(err, sql.ErrNoRows) && p.rev == 0, err == nil && rev == p.rev:
			p.dirty = true
			d.dirtyParents = append(d.dirtyParents, p)
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			p.unwritten = true
			return err
		default:
			p.epoch, p.newFrozen, p.goneFrozen = 0, nil, nil
			s.dropParent(p)
		}
	}
	d.unwrittenParents = d.unwrittenParents[:0]
	for _, sa := range d.unwrittenTracked {
		if cur, ok := s.agents.Get(sa.session); !ok || cur != sa || !sa.unwritten {
			continue
		}
		sa.unwritten = false
		var rev int64
		err := d.c.queryRow(d.ctx, "SELECT rev FROM tracked WHERE session=?", sa.session).Scan(&rev)
		switch {
		case errors.Is(err, sql.ErrNoRows) && sa.rev == 0, err == nil && rev == sa.rev:
			sa.dirty = true
			d.dirtyTracked = append(d.dirtyTracked, sa)
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			sa.unwritten = true
			return err
		default:
			sa.epoch = 0
			s.untrack(sa.session)
		}
	}
	d.unwrittenTracked = d.unwrittenTracked[:0]
	return nil
}

// finish writes what the method changed, prunes the database to its
// bounds and commits; the caller holds mu. It is deferred by every method
// that calls begin.
func (s *Store) finish() {
	d := s.db
	if d == nil || !d.inTx {
		return
	}
	if len(d.dirtyParents) == 0 && len(d.dirtyTracked) == 0 && len(d.deleted) == 0 && len(d.untracked) == 0 && !d.pruneDue {
		if err := d.c.commit(d.ctx); err != nil {
			d.fail(err)
			d.rollback()
		}
		d.inTx = false
		return
	}
	if err := s.write(); err != nil {
		d.fail(classify(err))
		d.rollback()
		return
	}
	if err := d.c.commit(d.ctx); err != nil {
		d.fail(classify(err))
		d.rollback()
		return
	}
	d.inTx = false
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
}

// writeUnwritten tries once more to write what this process acknowledged
// but could not write (Close, before the store leaves the database).
func (s *Store) writeUnwritten(ctx context.Context) {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly || len(d.unwrittenParents)+len(d.unwrittenTracked) == 0 {
		return
	}
	s.begin()
	s.finish()
}

// pruneStep runs one transaction that prunes (at most pruneBatch rows of
// each table) and reports whether the database is still over its bounds
// and the transaction worked (so another step is worth its turn).
func (s *Store) pruneStep(ctx context.Context) bool {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly {
		return false
	}
	d.pruneDue = true
	s.begin()
	if !d.inTx {
		return false
	}
	s.finish()
	return d.overBound && !d.failed
}

// overBounds reports whether the database holds more parents or tracked
// sessions than the store's bounds, or more bytes than its budget (a
// count of each table, by their indexes; the prompt-cache rows count).
func (s *Store) overBounds(ctx context.Context) bool {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly {
		return false
	}
	var parents, tracked int
	var bytes int64
	if err := d.c.queryRow(d.ctx, "SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM tracked), (SELECT coalesce(sum(bytes),0) FROM parents)+(SELECT coalesce(sum(bytes),0) FROM tracked)+(SELECT coalesce(sum(bytes),0) FROM cache)").Scan(&parents, &tracked, &bytes); err != nil {
		return false
	}
	return parents > s.cfg.MaxParents || tracked > s.cfg.MaxTrackedSessions || bytes > int64(s.cfg.MaxStateBytes)
}

// fail reports err; the next commit that succeeds reports recovery. An
// error of a method whose context ended (the sidecar is stopping) is not
// the database's: what the method changed stays unwritten, for the next
// transaction or Close, and nothing is reported.
func (d *storeDB) fail(err error) {
	if d.ctx.Err() != nil {
		return
	}
	d.failed = true
	d.report(err)
}

// rollback ends a failed transaction. What the method changed stays in the
// cache, unwritten, and is checked against the database (its revision) at
// the next use after another process commits: kept while nobody else
// changed that parent or session, read again otherwise, so a later write
// never overwrites another process's change with a stale parent.
func (d *storeDB) rollback() {
	d.c.rollback(d.ctx)
	d.inTx = false
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

// unwrite keeps p, changed but not written, for the next transaction
// (takeUnwritten); its new frozen blocks stay listed for it.
func (d *storeDB) unwrite(p *parentState) {
	if !p.unwritten {
		p.unwritten = true
		d.unwrittenParents = append(d.unwrittenParents, p)
	}
}

func (d *storeDB) unwriteTracked(sa *sessionAgent) {
	if !sa.unwritten {
		sa.unwritten = true
		d.unwrittenTracked = append(d.unwrittenTracked, sa)
	}
}

// unlock finishes the method's transaction, if any, and releases mu.
func (s *Store) unlock() {
	s.finish()
	s.release()
}

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
func (s *Store) markParent(p *parentState) {
	d := s.db
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

func (s *Store) markTracked(sa *sessionAgent) {
	d := s.db
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
func (s *Store) fresh() uint64 {
	if s.db == nil {
		return 0
	}
	return s.db.epoch
}

// write writes the transaction's changes and prunes; inside the
// transaction.
func (s *Store) write() error {
	d := s.db
	c, ctx := d.c, d.ctx
	d.seq++
	for _, id := range d.deleted {
		if err := deleteParentRows(ctx, c, id); err != nil {
			return err
		}
	}
	for _, session := range d.untracked {
		if err := c.exec(ctx, "DELETE FROM tracked WHERE session=?", session); err != nil {
			return err
		}
	}
	for _, p := range d.dirtyParents {
		if err := s.writeParent(p, d.seq); err != nil {
			return err
		}
	}
	for _, sa := range d.dirtyTracked {
		if err := writeTracked(ctx, c, sa, d.seq); err != nil {
			return err
		}
	}
	if err := s.prune(); err != nil {
		return err
	}
	d.pruneDue = d.overBound
	if err := c.exec(ctx, "INSERT INTO meta(key,value) VALUES('seq',?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", d.seq); err != nil {
		return err
	}
	if s.clock > d.clock {
		if err := c.exec(ctx, "INSERT INTO meta(key,value) VALUES('clock',?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", int64(s.clock)); err != nil {
			return err
		}
		d.clock = s.clock
	}
	return nil
}

func deleteParentRows(ctx context.Context, c *dbConn, id string) error {
	for _, q := range []string{
		"DELETE FROM entries WHERE pid=(SELECT pid FROM parents WHERE id=?)", "DELETE FROM counters WHERE pid=(SELECT pid FROM parents WHERE id=?)",
		"DELETE FROM frozen WHERE pid=(SELECT pid FROM parents WHERE id=?)", "DELETE FROM parents WHERE id=?",
	} {
		if err := c.exec(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// deleteParentPid deletes the rows of the parent keyed pid.
func deleteParentPid(ctx context.Context, c *dbConn, pid int64) error {
	for _, q := range []string{
		"DELETE FROM entries WHERE pid=?", "DELETE FROM counters WHERE pid=?",
		"DELETE FROM frozen WHERE pid=?", "DELETE FROM parents WHERE pid=?",
	} {
		if err := c.exec(ctx, q, pid); err != nil {
			return err
		}
	}
	return nil
}

// writeParent writes p whole: its row, entries and counters, and the
// frozen blocks made or dropped since it was last written.
func (s *Store) writeParent(p *parentState, seq int64) error {
	c, ctx := s.db.c, s.db.ctx
	if err := c.exec(ctx, "INSERT INTO parents(id,rev,bytes) VALUES(?,?,?) ON CONFLICT(id) DO UPDATE SET rev=excluded.rev, bytes=excluded.bytes", p.id, seq, p.bytes); err != nil {
		return err
	}
	st, err := c.stmt(ctx, "SELECT pid FROM parents WHERE id=?")
	if err != nil {
		return err
	}
	var pid int64
	if err := st.QueryRow(p.id).Scan(&pid); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM entries WHERE pid=?", pid); err != nil {
		return err
	}
	if err := c.exec(ctx, "DELETE FROM counters WHERE pid=?", pid); err != nil {
		return err
	}
	for _, a := range p.agents {
		for _, e := range a.entries.All() {
			if err := c.exec(ctx, "INSERT INTO entries(pid,alias,agent,task_id,label,last_use,tick,run_state,run_error) VALUES(?,?,?,?,?,?,?,?,?)",
				pid, e.alias, a.name, e.taskID, e.label, e.lastUse.UnixNano(), int64(e.tick), e.run.State, e.run.Error); err != nil {
				return err
			}
		}
	}
	for prefix, n := range p.counters {
		if err := c.exec(ctx, "INSERT INTO counters(pid,prefix,n) VALUES(?,?,?)", pid, prefix, n); err != nil {
			return err
		}
	}
	for _, id := range p.goneFrozen {
		if err := c.exec(ctx, "DELETE FROM frozen WHERE pid=? AND message_id=?", pid, id); err != nil {
			return err
		}
	}
	for _, id := range p.newFrozen { // oldest first: seq grows with recency
		text, ok := frozenText(p, id)
		if !ok {
			continue
		}
		s.db.seq++
		if err := c.exec(ctx, "INSERT INTO frozen(pid,message_id,seq,block) VALUES(?,?,?,?) ON CONFLICT(pid,message_id) DO NOTHING", pid, id, s.db.seq, text); err != nil {
			return err
		}
	}
	return nil
}

func writeTracked(ctx context.Context, c *dbConn, sa *sessionAgent, seq int64) error {
	model, err := trackedModelColumn(sa) // health.go
	if err != nil {
		return err
	}
	return c.exec(ctx, "INSERT INTO tracked(session,agent,model,rev,bytes) VALUES(?,?,?,?,?) ON CONFLICT(session) DO UPDATE SET agent=excluded.agent, model=excluded.model, rev=excluded.rev, bytes=excluded.bytes",
		sa.session, sa.agent, model, seq, trackedCost(sa))
}

// pruneBatch is the most parents and tracked sessions one transaction
// forgets. A database far over its bounds (a user who raised maxParents
// and lowered it again, two configs on one project) is brought within
// them over as many transactions as it takes (pruneLoop), each a few
// milliseconds, so no request waits on an old database.
const pruneBatch = 200

// prune brings the database toward the store's bounds: MaxParents and
// MaxTrackedSessions by least recent write, then the byte budget as
// enforceBudget keeps the cache (never the most recently written parent),
// the prompt-cache rows (cachedb.go) counted and forgotten with them.
// It forgets at most pruneBatch rows of each table, each found through the
// revision index (time linear in what it forgets); d.overBound says
// whether more is left for the next transaction.
func (s *Store) prune() error {
	d := s.db
	c, ctx := d.c, d.ctx
	var parents, tracked int
	var parentBytes, trackedBytes int64
	if err := c.queryRow(ctx, "SELECT count(*), coalesce(sum(bytes),0) FROM parents").Scan(&parents, &parentBytes); err != nil {
		return err
	}
	if err := c.queryRow(ctx, "SELECT count(*), coalesce(sum(bytes),0) FROM tracked").Scan(&tracked, &trackedBytes); err != nil {
		return err
	}
	// The prompt-cache rows (cachedb.go) count in the same budget.
	var cacheRows int
	var cacheBytes int64
	if err := c.queryRow(ctx, "SELECT count(*), coalesce(sum(bytes),0) FROM cache").Scan(&cacheRows, &cacheBytes); err != nil {
		return err
	}
	parentBudget, trackedBudget, cacheBudget := pruneBatch, pruneBatch, pruneBatch
	dropped := false
	// dropParents forgets the n least recently written parents.
	dropParents := func(n int) error {
		const oldest = "SELECT pid FROM parents ORDER BY rev, pid LIMIT ?"
		rows, err := c.query(ctx, "SELECT id, bytes FROM parents ORDER BY rev, pid LIMIT ?", n)
		if err != nil {
			return err
		}
		var ids []string
		var bytes int64
		for rows.Next() {
			var id string
			var b int64
			if err := rows.Scan(&id, &b); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
			bytes += b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// The same n parents (nothing else writes in the transaction),
		// each table's rows by its pid index.
		for _, q := range []string{
			"DELETE FROM entries WHERE pid IN (" + oldest + ")", "DELETE FROM counters WHERE pid IN (" + oldest + ")",
			"DELETE FROM frozen WHERE pid IN (" + oldest + ")", "DELETE FROM parents WHERE pid IN (" + oldest + ")",
		} {
			if err := c.exec(ctx, q, n); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if p, ok := s.parents.Get(id); ok && !p.dirty {
				s.dropParent(p)
			}
		}
		dropped = dropped || len(ids) > 0
		parents -= len(ids)
		parentBytes -= bytes
		parentBudget -= len(ids)
		if len(ids) < n {
			parentBudget = 0 // none left to drop
		}
		return nil
	}
	dropTracked := func(n int) error {
		rows, err := c.query(ctx, "SELECT session, bytes FROM tracked ORDER BY rev, session LIMIT ?", n)
		if err != nil {
			return err
		}
		var sessions []string
		var bytes int64
		for rows.Next() {
			var session string
			var b int64
			if err := rows.Scan(&session, &b); err != nil {
				rows.Close()
				return err
			}
			sessions = append(sessions, session)
			bytes += b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := c.exec(ctx, "DELETE FROM tracked WHERE session IN (SELECT session FROM tracked ORDER BY rev, session LIMIT ?)", n); err != nil {
			return err
		}
		for _, session := range sessions {
			if s.agents.Has(session) {
				s.untrack(session)
			}
		}
		dropped = dropped || len(sessions) > 0
		tracked -= len(sessions)
		trackedBytes -= bytes
		trackedBudget -= len(sessions)
		if len(sessions) < n {
			trackedBudget = 0
		}
		return nil
	}
	// dropCache forgets the least recently used prompt-cache row. A
	// process whose book holds the session writes it again at its next
	// usage.
	dropCache := func() error {
		var b int64
		err := c.queryRow(ctx, "DELETE FROM cache WHERE session=(SELECT session FROM cache ORDER BY used, session LIMIT 1) RETURNING bytes").Scan(&b)
		if errors.Is(err, sql.ErrNoRows) {
			cacheBudget = 0
			return nil
		}
		if err != nil {
			return err
		}
		dropped = true
		cacheRows--
		cacheBytes -= b
		cacheBudget--
		return nil
	}
	defer func() {
		if dropped {
			// Give the pages of what was forgotten back to the file
			// system, so the file stays near what the budget counts.
			c.exec(ctx, "PRAGMA incremental_vacuum")
		}
	}()
	if n := min(parents-s.cfg.MaxParents, parentBudget); n > 0 {
		if err := dropParents(n); err != nil {
			return err
		}
	}
	if n := min(tracked-s.cfg.MaxTrackedSessions, trackedBudget); n > 0 {
		if err := dropTracked(n); err != nil {
			return err
		}
	}
	budget := int64(s.cfg.MaxStateBytes)
	over := func() bool { return parentBytes+trackedBytes+cacheBytes > budget }
	// Beyond the budget, from the kind that holds the most bytes, as
	// enforceBudget does (never the last parent).
	for over() && (parentBudget > 0 || trackedBudget > 0 || cacheBudget > 0) {
		canParent := parents > 1 && parentBudget > 0
		canTracked := tracked > 0 && trackedBudget > 0
		canCache := cacheRows > 0 && cacheBudget > 0
		var err error
		switch {
		case canParent && (!canTracked || parentBytes >= trackedBytes) && (!canCache || parentBytes >= cacheBytes):
			err = dropParents(1)
		case canTracked && (!canCache || trackedBytes >= cacheBytes):
			err = dropTracked(1)
		case canCache:
			err = dropCache()
		default:
			parentBudget, trackedBudget, cacheBudget = 0, 0, 0
		}
		if err != nil {
			return err
		}
	}
	d.overBound = parents > s.cfg.MaxParents || tracked > s.cfg.MaxTrackedSessions ||
		(over() && (parents > 1 || tracked > 0 || cacheRows > 0))
	return nil
}
