package sessions

import (
	"context"
	"time"
)

// Backend is where a Store keeps what it remembers beyond the process:
// the project's state database (package sessiondb), shared with every
// other process on the project. The store's maps are a cache in front of
// it (persistence.go says how the two agree); the store decides, the backend
// reads and writes rows.
//
// It is asked for by kind of state: each of the store's parts names the few things
// it needs of the database (ParentRows for the task aliases and frozen
// blocks, TrackedRows for the tracked sessions, HealthRows, CacheRows for
// the prompt-cache figures), Transactions the one write transaction a
// request's work runs in (begun and ended by the Backend), Upkeep the
// bounds of the whole database.
//
// The store calls a Backend while it holds its own lock, one call at a
// time, except ParentRows.Page, which it calls without its lock and may
// call while another goroutine calls the others. Every method runs under
// the ctx it is given. An error means the read or write did not happen; a
// database found damaged is an error the backend marks (the store only
// reports it upward, to whoever attached the backend).
type Backend struct {
	Tx      Transactions
	Parents ParentRows
	Tracked TrackedRows
	Health  HealthRows
	Cache   CacheRows
	Upkeep  Upkeep
}

// Transactions run the store's work in the database's transactions, which
// the Backend begins and ends, and keep its write sequence.
type Transactions interface {
	// Epoch moves on (from 1) when another process committed since it
	// was last asked: the cheap test for "someone else wrote". The store
	// checks a cached row against the database again in a new epoch.
	Epoch(ctx context.Context) (uint64, error)
	// BeginRequest marks the start of one request's work, the function it
	// returns its end (the store calls both holding its lock): within it,
	// Epoch looks for other processes' commits once for the reads outside
	// a write transaction, and again in each write transaction.
	BeginRequest() (end func())
	// Write runs fn in one write transaction, which it begins (after
	// this process's and other processes' earlier writers) and ends:
	// committed when fn returns nil, rolled back when fn returns an error
	// or the commit fails. Its error is the begin's (fn did not run),
	// fn's or the commit's.
	Write(ctx context.Context, fn func() error) error
	// Read runs fn in one read transaction, which it begins and ends:
	// what fn reads is one state, however others write.
	Read(ctx context.Context, fn func() error) error
	// Clock reads the database's logical clock (0 in a new database),
	// SetClock moves it on: the store's ticks go on from it.
	Clock(ctx context.Context) (int64, error)
	SetClock(ctx context.Context, clock int64) error
	// Close releases the backend.
	Close() error
}

// ParentRows are the parent sessions: each one's task entries (aliases),
// alias counters and frozen blocks.
type ParentRows interface {
	// Rev is the revision of parent id's row; ok false when there is none.
	Rev(ctx context.Context, id string) (rev int64, ok bool, err error)
	// Read reads parent id's entries (the most recently used first),
	// counters and frozen blocks (the newest first).
	Read(ctx context.Context, id string) (ParentRecord, error)
	// Write writes p's row, entries and counters whole, adds p.Frozen
	// and deletes p.GoneFrozen, inside the write transaction. The row and
	// each new block get the transaction's next revisions (the Backend
	// keeps the write sequence): it returns the row's.
	Write(ctx context.Context, p ParentRecord) (rev int64, err error)
	// Delete deletes parent id with its entries, counters and frozen
	// blocks.
	Delete(ctx context.Context, id string) error
	// Revs lists every parent, the most recently written first.
	Revs(ctx context.Context) ([]ParentRev, error)
	// OfTask lists the parents with an entry whose task id is id;
	// WithAlias those with an entry named alias (under parent only, when
	// it is not "").
	OfTask(ctx context.Context, id string) ([]string, error)
	WithAlias(ctx context.Context, alias, parent string) ([]string, error)
	// Page reads a page of the listing (Store.Page) without the store's
	// lock, on a read connection of its own.
	Page(ctx context.Context, parent, cursor string, limit int) (EntryPage, error)
}

// TrackedRows are the tracked sessions: agent, model, parent, switches.
type TrackedRows interface {
	// Read reads a tracked session's row; ok false when there is none.
	Read(ctx context.Context, session string) (rec TrackedRecord, ok bool, err error)
	// Write writes t at the transaction's next revision and returns it.
	Write(ctx context.Context, t TrackedRecord) (rev int64, err error)
	Delete(ctx context.Context, session string) error
	// List lists every tracked session, the least recently written first.
	List(ctx context.Context) ([]string, error)
}

// HealthRows are the models' provider health.
type HealthRows interface {
	// Read reads one model's health; ReadAll every model's, the latest
	// failure first. Write writes one and keeps the newest
	// MaxHealthModels.
	Read(ctx context.Context, model string) (Health, bool, error)
	ReadAll(ctx context.Context) ([]Health, error)
	Write(ctx context.Context, h Health) error
}

// CacheRows are the sessions' prompt-cache figures.
type CacheRows interface {
	// Read reads one session's figures (ok false when there are none, or
	// none this build can read); ReadAll every session's, the most
	// recently used first. Write writes one, stamped used, and keeps the
	// newest MaxCacheSessions; Delete forgets one.
	Read(ctx context.Context, session string) (CacheRecord, bool, error)
	ReadAll(ctx context.Context) ([]CacheRecord, error)
	Write(ctx context.Context, c CacheRecord, used time.Time) error
	Delete(ctx context.Context, session string) error
}

// Upkeep keeps the whole database within its bounds.
type Upkeep interface {
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
}

// ParentRecord is a parent session as a Backend keeps it.
type ParentRecord struct {
	ID    string
	Rev   int64 // the revision read (written: 0, the Backend gives the next)
	Bytes int   // what the byte budget counts for it
	// Entries: read, the most recently used first.
	Entries  []EntryRecord
	Counters map[string]int64 // alias prefix → last n handed out
	// Frozen: read, every block, the newest first; written, the blocks
	// made since the parent was last written, the oldest first (each
	// given the next revision as its Seq).
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
