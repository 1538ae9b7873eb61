package sessions

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
)

// fakeDB is a database in memory shared by the stores attached to it (as
// two processes share a file), behind the Backend interfaces: rows by id,
// a data version bumped by each commit, and one writer at a time. A
// transaction's writes are kept aside and applied at its commit; failNext
// (once, the commit) and beginErr (the begin) make them fail.
type fakeDB struct {
	version  int64
	seq      int64
	parents  map[string]ParentRecord
	tracked  map[string]TrackedRecord
	health   map[string]Health
	writer   *fakeConn
	reads    int // parent rows read (Read)
	revs     int // parent revisions read (Rev)
	failNext error
}

func newFakeDB() *fakeDB {
	return &fakeDB{parents: map[string]ParentRecord{}, tracked: map[string]TrackedRecord{}, health: map[string]Health{}}
}

// fakeConn is one store's connection: its pending writes.
type fakeConn struct {
	db       *fakeDB
	parents  map[string]*ParentRecord // nil: deleted
	tracked  map[string]*TrackedRecord
	health   map[string]Health
	meta     map[string]int64
	beginErr error
	rev      int64 // the last revision the transaction gave
	begins   int   // write transactions asked for
	seen     int64 // db.version as last read (Epoch)
	epoch    uint64
}

func (db *fakeDB) backend() (Backend, *fakeConn) {
	c := &fakeConn{db: db}
	return Backend{Tx: c, Parents: fakeParents{c}, Tracked: fakeTracked{c}, Health: fakeHealth{c}, Cache: fakeCache{}, Upkeep: fakeUpkeep{c}}, c
}

func (c *fakeConn) Epoch(context.Context) (uint64, error) {
	if c.epoch == 0 {
		c.epoch = 1
	}
	if c.db.version != c.seen {
		c.seen = c.db.version
		c.epoch++
	}
	return c.epoch, nil
}

// BeginRequest: the fake's Epoch looks at every call.
func (c *fakeConn) BeginRequest() (end func()) { return func() {} }

func (c *fakeConn) Write(_ context.Context, fn func() error) error {
	c.begins++
	if c.beginErr != nil {
		return c.beginErr
	}
	if c.db.writer != nil {
		return errors.New("database is locked (fake)")
	}
	c.db.writer = c
	defer func() { c.db.writer = nil }()
	c.parents, c.tracked, c.health, c.meta = map[string]*ParentRecord{}, map[string]*TrackedRecord{}, map[string]Health{}, map[string]int64{}
	c.rev = c.db.seq
	if err := fn(); err != nil {
		return err
	}
	if err := c.db.failNext; err != nil {
		c.db.failNext = nil
		return err
	}
	for id, p := range c.parents {
		if p == nil {
			delete(c.db.parents, id)
		} else {
			c.db.parents[id] = *p
		}
	}
	for id, t := range c.tracked {
		if t == nil {
			delete(c.db.tracked, id)
		} else {
			c.db.tracked[id] = *t
		}
	}
	maps.Copy(c.db.health, c.health)
	c.db.seq = max(c.db.seq, c.rev)
	c.db.version++
	return nil
}
func (c *fakeConn) Read(_ context.Context, fn func() error) error { return fn() }
func (c *fakeConn) Clock(context.Context) (int64, error)          { return c.meta["clock"], nil }
func (c *fakeConn) SetClock(_ context.Context, v int64) error {
	c.meta["clock"] = v
	return nil
}
func (c *fakeConn) Close() error { return nil }

type fakeParents struct{ c *fakeConn }

func (f fakeParents) Rev(_ context.Context, id string) (int64, bool, error) {
	f.c.db.revs++
	p, ok := f.c.db.parents[id]
	return p.Rev, ok, nil
}
func (f fakeParents) Read(_ context.Context, id string) (ParentRecord, error) {
	f.c.db.reads++
	return f.c.db.parents[id], nil
}
func (f fakeParents) Write(_ context.Context, p ParentRecord) (int64, error) {
	// Entries are written whole; frozen blocks are added to the row's.
	f.c.rev++
	p.Rev = f.c.rev
	p.Frozen = slices.Clone(p.Frozen)
	for i := range p.Frozen {
		f.c.rev++
		p.Frozen[i].Seq = f.c.rev
	}
	if old, ok := f.c.db.parents[p.ID]; ok {
		p.Frozen = append(p.Frozen, old.Frozen...)
	}
	f.c.parents[p.ID] = &p
	return p.Rev, nil
}
func (f fakeParents) Delete(_ context.Context, id string) error {
	f.c.parents[id] = nil
	return nil
}
func (f fakeParents) Revs(context.Context) ([]ParentRev, error) {
	var out []ParentRev
	for id, p := range f.c.db.parents {
		out = append(out, ParentRev{ID: id, Rev: p.Rev})
	}
	slices.SortFunc(out, func(a, b ParentRev) int { return int(b.Rev - a.Rev) })
	return out, nil
}
func (f fakeParents) OfTask(_ context.Context, id string) ([]string, error) {
	var out []string
	for pid, p := range f.c.db.parents {
		for _, e := range p.Entries {
			if e.TaskID == id {
				out = append(out, pid)
				break
			}
		}
	}
	return out, nil
}
func (f fakeParents) WithAlias(context.Context, string, string) ([]string, error) { return nil, nil }
func (f fakeParents) Page(context.Context, string, string, int) (EntryPage, error) {
	return EntryPage{}, errors.New("no pages in the fake")
}

type fakeTracked struct{ c *fakeConn }

func (f fakeTracked) Read(_ context.Context, session string) (TrackedRecord, bool, error) {
	t, ok := f.c.db.tracked[session]
	return t, ok, nil
}
func (f fakeTracked) Write(_ context.Context, t TrackedRecord) (int64, error) {
	f.c.rev++
	t.Rev = f.c.rev
	f.c.tracked[t.Session] = &t
	return t.Rev, nil
}
func (f fakeTracked) Delete(_ context.Context, session string) error {
	f.c.tracked[session] = nil
	return nil
}
func (f fakeTracked) List(context.Context) ([]string, error) {
	return slices.Sorted(maps.Keys(f.c.db.tracked)), nil
}

type fakeHealth struct{ c *fakeConn }

func (f fakeHealth) Read(_ context.Context, model string) (Health, bool, error) {
	h, ok := f.c.db.health[model]
	return h, ok, nil
}
func (f fakeHealth) ReadAll(context.Context) ([]Health, error) {
	out := slices.Collect(maps.Values(f.c.db.health))
	SortHealth(out)
	return out, nil
}
func (f fakeHealth) Write(_ context.Context, h Health) error {
	f.c.health[h.Model] = h
	return nil
}

type fakeCache struct{}

func (fakeCache) Read(context.Context, string) (CacheRecord, bool, error) {
	return CacheRecord{}, false, nil
}
func (fakeCache) ReadAll(context.Context) ([]CacheRecord, error)      { return nil, nil }
func (fakeCache) Write(context.Context, CacheRecord, time.Time) error { return nil }
func (fakeCache) Delete(context.Context, string) error                { return nil }

type fakeUpkeep struct{ c *fakeConn }

func (fakeUpkeep) Prune(context.Context, Bounds) (Pruned, error) { return Pruned{}, nil }
func (f fakeUpkeep) Counts(context.Context) (int, int, int64, error) {
	return len(f.c.db.parents), len(f.c.db.tracked), 0, nil
}
func (f fakeUpkeep) Stats(context.Context) (Stats, error) {
	return Stats{Parents: len(f.c.db.parents), TrackedSessions: len(f.c.db.tracked)}, nil
}

// attachFake is a new store attached to db, with the connection it uses
// and the errors it reported.
func attachFake(t *testing.T, db *fakeDB) (*Store, *fakeConn, *[]error) {
	t.Helper()
	s := New(Config{MaxSessionsPerAgent: 5})
	b, c := db.backend()
	var reported []error
	s.Attach(t.Context(), b, false, func(err error) { reported = append(reported, err) })
	return s, c, &reported
}

// task runs one task call of s under parent that returns id.
func fakeTask(t *testing.T, s *Store, call, parent, label, id string) {
	t.Helper()
	ctx := context.Background()
	act, _ := s.Tasks().BeginCall(ctx, call, parent, "explorer", label, "")
	require.Equal(t, TaskIDLeave, act)
	s.Tasks().CompleteCall(ctx, call, core.TaskOutcome{TaskID: id})
}

func taskIDsOf(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.TaskID)
	}
	return out
}

// The read-through: a parent another store wrote is read from the
// database when this store's cache lacks it; a cached parent is checked
// against its row's revision only when the database's data version
// changed, and read again when its revision did.
func TestReadThroughFollowsTheDatabase(t *testing.T) {
	db := newFakeDB()
	a, _, _ := attachFake(t, db)
	b, _, _ := attachFake(t, db)
	fakeTask(t, a, "c1", "ses_p", "a's", "ses_1")
	require.Equal(t, []string{"ses_1"}, taskIDsOf(b.Tasks().List("ses_p")), "read through: b's cache lacked it")

	reads, revs := db.reads, db.revs
	assert.Equal(t, []string{"ses_1"}, taskIDsOf(b.Tasks().List("ses_p")))
	assert.Equal(t, []int{reads, revs}, []int{db.reads, db.revs}, "nobody committed: the cached parent is used as it is, unchecked")

	fakeTask(t, a, "c2", "ses_p", "a's second", "ses_2")
	assert.Equal(t, []string{"ses_2", "ses_1"}, taskIDsOf(b.Tasks().List("ses_p")), "a committed a new revision: read again")
	assert.Equal(t, reads+1, db.reads)

	a.Tracked().SetAgent(context.Background(), "ses_other", "explorer") // a commit that leaves ses_p alone
	reads = db.reads
	assert.Len(t, b.Tasks().List("ses_p"), 2)
	assert.Equal(t, reads, db.reads, "the data version changed, the parent's revision did not: not read again")

	b.DeleteSession(context.Background(), "ses_p")
	assert.Empty(t, a.Tasks().List("ses_p"), "forgotten by the other store: dropped from the cache")
}

// A change whose commit fails stays in the cache and is reported; the
// next transaction that begins writes it (whole, with what else changed),
// and recovery is reported.
func TestFailedCommitWrittenByTheNextTransaction(t *testing.T) {
	db := newFakeDB()
	a, _, reported := attachFake(t, db)
	fakeTask(t, a, "c1", "ses_p", "first", "ses_1")
	db.failNext = errors.New("disk full (fake)")
	fakeTask(t, a, "c2", "ses_p", "second", "ses_2")
	require.Len(t, *reported, 1)
	assert.ErrorContains(t, (*reported)[0], "disk full")
	assert.Len(t, db.parents["ses_p"].Entries, 1, "not written")
	assert.Equal(t, []string{"ses_2", "ses_1"}, taskIDsOf(a.Tasks().List("ses_p")), "kept in the cache")

	a.Tracked().SetAgent(context.Background(), "ses_x", "explorer") // the next transaction
	require.Len(t, *reported, 2)
	assert.NoError(t, (*reported)[1], "working again")
	assert.Len(t, db.parents["ses_p"].Entries, 2, "written with the next transaction")
}

// A parent changed while writes failed and, meanwhile, forgotten by
// another store is not written back (its forgotten entries would
// return); one never written before, and still missing, is.
func TestUnwrittenParentMissingFromTheDatabase(t *testing.T) {
	db := newFakeDB()
	a, ac, _ := attachFake(t, db)
	b, _, _ := attachFake(t, db)
	fakeTask(t, a, "c1", "ses_p", "written", "ses_old")
	ac.beginErr = errors.New("database is locked (fake)")
	fakeTask(t, a, "c2", "ses_p", "not written", "ses_new")
	fakeTask(t, a, "c3", "ses_q", "not written, new parent", "ses_q1")
	b.DeleteSession(context.Background(), "ses_p")
	ac.beginErr = nil
	a.Tracked().SetAgent(context.Background(), "ses_x", "explorer")

	var ids []string
	for _, e := range db.parents["ses_p"].Entries {
		ids = append(ids, e.TaskID)
	}
	assert.Equal(t, []string{"ses_new"}, ids, "the forgotten entry stays forgotten; the unshown one is remembered again")
	require.Contains(t, db.parents, "ses_q", "a new parent never written is written")
	assert.Equal(t, "ses_q1", db.parents["ses_q"].Entries[0].TaskID)
}

// A parent is known at the revision its row was written at, frozen blocks
// and all: another store's unrelated commit does not make this one read
// it again (its cached revision was the transaction's last number, past
// the row's, when blocks were written with it).
func TestWrittenParentKnownAtItsRevision(t *testing.T) {
	db := newFakeDB()
	a, _, _ := attachFake(t, db)
	b, _, _ := attachFake(t, db)
	ctx := context.Background()
	fakeTask(t, a, "c1", "ses_p", "first", "ses_1")
	for _, m := range []string{"msg_1", "msg_2"} {
		a.Frozen().Block(ctx, "ses_p", m, func() string { return "block " + m })
	}
	b.Tracked().SetAgent(ctx, "ses_other", "explorer") // another store commits
	reads := db.reads
	assert.Equal(t, "block msg_1", a.Frozen().Block(ctx, "ses_p", "msg_1", func() string { return "recomputed" }))
	assert.Len(t, a.Tasks().List("ses_p"), 1)
	assert.Equal(t, reads, db.reads, "the row's revision is the one the store knows: not read again")
}

// A change that cannot begin its transaction runs on the cache alone, and
// what it calls that writes (a task session's prompt-cache figures, with
// the call's outcome) does not ask the database again: one wait for the
// write lock, not one a write.
func TestChangeOnTheCacheAloneAsksOnce(t *testing.T) {
	db := newFakeDB()
	s, c, _ := attachFake(t, db)
	ctx := context.Background()
	s.PromptCache().Usage(ctx, Usage{Session: "ses_child", Message: "msg_1", Input: 10, Output: 5})
	act, _ := s.Tasks().BeginCall(ctx, "call_1", "ses_p", "explorer", "work", "")
	require.Equal(t, TaskIDLeave, act)
	c.beginErr = errors.New("database is locked (fake)")
	begins := c.begins
	s.Tasks().CompleteCall(ctx, "call_1", core.TaskOutcome{TaskID: "ses_child"})
	assert.Equal(t, 1, c.begins-begins, "one transaction asked for")
	assert.Equal(t, []string{"ses_child"}, taskIDsOf(s.Tasks().List("ses_p")), "served from the cache")
}
