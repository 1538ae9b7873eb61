package sessions

import (
	"context"
	"time"
)

// Backend is where a Store keeps what it remembers beyond the process:
// the project's state database (package sessiondb), shared with every
// other process on the project. The store's maps are a cache in front of
// it (backing.go says how the two agree); the store decides, the backend
// reads and writes rows.
//
// The store calls a Backend while it holds its own lock, one call at a
// time, except Page, which it calls without its lock and may call while
// another goroutine calls the others. Every method runs under the ctx it
// is given. An error means the read or write did not happen; a database
// found damaged is an error the backend marks (the store only reports it
// upward, to whoever attached the backend).
type Backend interface {
	// DataVersion changes when another process commits: the cheap test
	// for "someone else wrote".
	DataVersion(ctx context.Context) (int64, error)
	// BeginWrite starts a write transaction, after this process's and
	// other processes' earlier writers; Commit or Rollback ends it.
	// Commit failing leaves the transaction open for Rollback.
	BeginWrite(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context)
	// ReadTx runs fn in one read transaction: what fn reads is one state,
	// however others write.
	ReadTx(ctx context.Context, fn func() error) error
	// SeqClock reads the database's write sequence and logical clock (0
	// in a new database); SetMeta writes one of them ("seq", "clock") or
	// a marker ("imported").
	SeqClock(ctx context.Context) (seq, clock int64, err error)
	SetMeta(ctx context.Context, key string, value int64) error

	// ParentRev is the revision of parent id's row; ok false when there
	// is none.
	ParentRev(ctx context.Context, id string) (rev int64, ok bool, err error)
	// ReadParent reads parent id's entries (the most recently used first),
	// counters and frozen blocks (the newest first).
	ReadParent(ctx context.Context, id string) (ParentRecord, error)
	// WriteParent writes p's row, entries and counters whole, adds p.Frozen
	// and deletes p.GoneFrozen, inside the write transaction.
	WriteParent(ctx context.Context, p ParentRecord) error
	// DeleteParent deletes parent id with its entries, counters and frozen
	// blocks.
	DeleteParent(ctx context.Context, id string) error
	// ParentRevs lists every parent, the most recently written first.
	ParentRevs(ctx context.Context) ([]ParentRev, error)
	// ParentsOfTask lists the parents with an entry whose task id is id;
	// ParentsWithAlias those with an entry named alias (under parent only,
	// when it is not "").
	ParentsOfTask(ctx context.Context, id string) ([]string, error)
	ParentsWithAlias(ctx context.Context, alias, parent string) ([]string, error)

	// ReadTracked reads a tracked session's row; ok false when there is
	// none.
	ReadTracked(ctx context.Context, session string) (rec TrackedRecord, ok bool, err error)
	WriteTracked(ctx context.Context, t TrackedRecord) error
	DeleteTracked(ctx context.Context, session string) error
	// TrackedSessions lists every tracked session, the least recently
	// written first.
	TrackedSessions(ctx context.Context) ([]string, error)

	// ReadHealth reads one model's health; ReadHealthAll every model's,
	// the latest failure first. WriteHealth writes one and keeps the
	// newest MaxHealthModels.
	ReadHealth(ctx context.Context, model string) (Health, bool, error)
	ReadHealthAll(ctx context.Context) ([]Health, error)
	WriteHealth(ctx context.Context, h Health) error

	// ReadCache reads one session's prompt-cache figures (ok false when
	// there are none, or none this build can read); ReadCacheAll every
	// session's, the most recently used first. WriteCache writes one,
	// stamped used, and keeps the newest MaxCacheSessions; DeleteCache
	// forgets one.
	ReadCache(ctx context.Context, session string) (CacheRecord, bool, error)
	ReadCacheAll(ctx context.Context) ([]CacheRecord, error)
	WriteCache(ctx context.Context, c CacheRecord, used time.Time) error
	DeleteCache(ctx context.Context, session string) error

	// Prune brings the database toward b, inside the write transaction,
	// forgetting at most b.Batch parents, tracked sessions and
	// prompt-cache rows of each: it says which parents and sessions it
	// forgot and whether the database is still over b.
	Prune(ctx context.Context, b Bounds) (Pruned, error)
	// Counts counts the parents and tracked sessions, and the bytes of
	// those and of the prompt-cache rows.
	Counts(ctx context.Context) (parents, tracked int, bytes int64, err error)
	// Stats counts what the database holds (pending calls aside).
	Stats(ctx context.Context) (Stats, error)

	// Page reads a page of the listing (Store.Page) without the store's
	// lock, on a read connection of its own.
	Page(ctx context.Context, parent, cursor string, limit int) (EntryPage, error)
	// Close releases the backend.
	Close() error
}

// ParentRecord is a parent session as a Backend keeps it.
type ParentRecord struct {
	ID    string
	Rev   int64 // the revision written or read
	Bytes int   // what the byte budget counts for it
	// Entries: read, the most recently used first.
	Entries  []EntryRecord
	Counters map[string]int64 // alias prefix → last n handed out
	// Frozen: read, every block, the newest first; written, the blocks
	// made since the parent was last written, the oldest first.
	Frozen []FrozenRecord
	// GoneFrozen: written, the blocks dropped since (by message id).
	GoneFrozen []string
}

// EntryRecord is one remembered task session of a parent.
type EntryRecord struct {
	Agent, Alias, TaskID, Label string
	LastUse                     time.Time
	Tick                        int64 // the logical clock's tick of the last use
	Run                         Run
}

// FrozenRecord is one frozen cache-stable block; Seq orders a parent's
// blocks (higher is newer).
type FrozenRecord struct {
	MessageID, Block string
	Seq              int64
}

// ParentRev is a parent's id and revision.
type ParentRev struct {
	ID  string
	Rev int64
}

// TrackedRecord is a tracked session as a Backend keeps it: its agent,
// model decision, parent, running model and switches.
type TrackedRecord struct {
	Session, Agent string
	Rev            int64
	Bytes          int
	Model          *ModelDecision // nil: none
	Parent         string
	Running        string
	Switches       []Switch
}

// Bounded is r within the store's caps (what a row another build wrote,
// or a damaged one, may exceed).
func (r TrackedRecord) Bounded() TrackedRecord {
	r.Model = restoredModel(r.Model)
	if len(r.Parent) > MaxIDBytes {
		r.Parent = ""
	}
	if len(r.Running) > MaxModelBytes {
		r.Running = ""
	}
	r.Switches = restoredSwitches(r.Switches)
	return r
}

// Bounds is what Prune brings a database within.
type Bounds struct {
	MaxParents, MaxTrackedSessions int
	MaxBytes                       int64
	// Batch is the most parents, tracked sessions and prompt-cache rows
	// (of each) one Prune forgets.
	Batch int
}

// Pruned is what Prune forgot, and whether more is left.
type Pruned struct {
	Parents, Tracked []string
	OverBound        bool
}
