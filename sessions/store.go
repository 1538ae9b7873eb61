package sessions

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookwire/hookwire/internal/lru"
)

// Config bounds the store (PROTOCOL.md 4.2, 7).
type Config struct {
	MaxSessionsPerAgent int               // default 2
	MaxPendingCalls     int               // default 100
	MaxParents          int               // default 1000
	MaxTrackedSessions  int               // default 10000
	MaxStateBytes       int               // default 16 MiB
	AliasOverrides      map[string]string // config.taskSessions.agents
	// Now is the store's clock: entries' last use, the prompt-cache rows'
	// use stamps. nil: time.Now. The store reads no other clock.
	Now func() time.Time
}

// Defaults of Config's bounds; a zero or negative field takes its default.
const (
	DefaultMaxSessionsPerAgent = 2
	DefaultMaxPendingCalls     = 100
	DefaultMaxParents          = 1000
	DefaultMaxTrackedSessions  = 10000
	// DefaultMaxStateBytes is the byte budget of the store and its
	// database: what it holds, counted as what each item takes in the
	// database's pages plus a fixed overhead per item (budget.go,
	// PROTOCOL.md 7); the database's prompt-cache rows count too. Beyond it the least recently
	// active parent is forgotten (or, when tracked sessions or pending
	// calls hold more bytes than the parents, the oldest of those).
	DefaultMaxStateBytes = 16 << 20
)

// Caps on the strings the store keeps, so that one client cannot make the
// budget hold a few huge items. A call whose session id, call id, task id,
// message id or agent name is longer is served but not remembered; a longer
// label is cut; a longer frozen block is frozen empty (PROTOCOL.md 7).
const (
	// MaxIDBytes caps session ids, call ids, task ids, message ids and
	// aliases. OpenCode's ids are about 30 bytes.
	MaxIDBytes = 256
	// MaxAgentNameBytes caps agent names.
	MaxAgentNameBytes = 256
	// MaxLabelBytes caps task labels (core.TaskLabel keeps 48 code points,
	// at most 192 bytes).
	MaxLabelBytes = 256
	// MaxRunErrorBytes caps the error text kept with a failed run; a
	// longer one is cut.
	MaxRunErrorBytes = 256
	// MaxFrozenBlockBytes caps one frozen cache-stable block (4.4). A
	// larger block is frozen as "", so its message carries no block, every
	// time.
	MaxFrozenBlockBytes = 16 << 10
	// MaxAliasCounter is the highest alias number handed out; a prefix
	// whose counter reached it remembers no new task. A state file's
	// counter beyond it (or below 0) is repaired on load.
	MaxAliasCounter = 1<<31 - 1
)

// Fixed bounds that PROTOCOL.md leaves to the implementation. They keep
// memory flat when a client sends unbounded variety under one parent.
const (
	// MaxFrozenBlocksPerSession is how many cache-stable blocks (4.4) one
	// session keeps. A full session freezes no more: a message first seen
	// then carries no block, every time, so no earlier byte changes.
	// Forgetting the oldest block instead would rebuild it for the first
	// message of the history on the next request and break the whole
	// cached prefix (and, by evicting the next one, every request after).
	// Blocks of messages that left the history are dropped with
	// Frozen.Retain, which frees room after a compaction.
	MaxFrozenBlocksPerSession = 256
	// MaxAgentsPerParent is how many agents one parent remembers entries
	// for; beyond it the agent whose newest entry is oldest is forgotten
	// (its alias counter stays, so its aliases are still never reused).
	MaxAgentsPerParent = 64
	// MaxAliasPrefixesPerParent is how many alias counters one parent
	// keeps. A task for an agent with a new prefix beyond it is not
	// remembered: forgetting a counter would allow an alias to be reused.
	MaxAliasPrefixesPerParent = 256
)

// Entry is one remembered task session, as sessions.list reports it.
type Entry struct {
	Parent  string    `json:"parent"`
	Agent   string    `json:"agent"`
	Alias   string    `json:"alias"`
	TaskID  string    `json:"taskId"`
	Label   string    `json:"label"`
	LastUse time.Time `json:"lastUse"`
	// Run is how the entry's last task run went, as far as the hooks saw.
	Run Run `json:"run"`
	// Model is the model decision of the task session (model.go), if any.
	Model *ModelDecision `json:"model,omitempty"`
	// Switches are the task session's model switches (health.go), oldest first.
	Switches []Switch `json:"switches,omitempty"`
}

// Run is the state of an entry's last task run (PROTOCOL.md 5,
// sessions.list): RunRunning from a resuming tool.execute.before until its
// outcome, RunCompleted when tool.execute.after names the session, RunError
// when the task failed (Error says why, when known).
type Run struct {
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// Run states.
const (
	RunRunning   = "running"
	RunCompleted = "completed"
	RunError     = "error"
)

// Stats is what status reports about the store.
type Stats struct {
	Parents         int `json:"parents"`
	Entries         int `json:"entries"`
	PendingCalls    int `json:"pendingCalls"`
	TrackedSessions int `json:"trackedSessions"`
	FrozenBlocks    int `json:"frozenBlocks"`
}

// TaskIDAction says what tool.execute.before does with args.task_id.
type TaskIDAction int

const (
	TaskIDLeave   TaskIDAction = iota // no task_id given: leave args alone
	TaskIDReplace                     // set args.task_id to the returned id
	TaskIDRemove                      // remove args.task_id: start fresh
)

// String names the action for logs and test failures.
func (a TaskIDAction) String() string {
	switch a {
	case TaskIDLeave:
		return "leave"
	case TaskIDReplace:
		return "replace"
	case TaskIDRemove:
		return "remove"
	}
	return "TaskIDAction(?)"
}

// Store is the session store: it coordinates each kind of state with its
// rules (pure: no lock, no IO) under one mutex and, with a database, runs
// each change in one write transaction (persistence.go). The kinds are
// pendingCalls (calls.go, the pending task calls), parentSet (parents.go:
// the parents' entries, aliases, counters and frozen blocks), trackedSet
// (tracked.go: each session's agent, model, parent and switches),
// healthSet (health.go) and cacheSet (promptcache.go, the prompt-cache
// figures). Callers reach each through a small type of the store's methods
// for it, which take the lock, read through from the database and say what
// to write: Tasks (aliases.go, list.go), Frozen (frozen.go), Tracked
// (tracked_store.go), ProviderHealth (health.go) and PromptCache
// (promptcache_store.go). Every method is safe for concurrent use and does
// O(1) work (ResumableSessions, List and DeleteSession are linear in what
// they return or forget). budget.go holds the byte budget across them,
// snapshot.go the JSON form.
type Store struct {
	mu  sync.Mutex
	cfg Config

	// clock orders uses: a logical tick, so "most recent" is exact even when
	// two uses share a wall-clock instant.
	clock uint64
	// changes counts mutations of the persisted state (changeCount).
	// Since the state lives in the database (dirty parents and tracked
	// sessions say what to write, persistence.go) only the tests read it.
	changes uint64

	// Each kind of state, with its rules and its bytes counted against
	// Config.MaxStateBytes (budget.go).
	calls   pendingCalls // the pending task calls (calls.go)
	parents parentSet    // the parents: entries, aliases, frozen blocks (parents.go)
	tracked trackedSet   // the tracked sessions (tracked.go)
	health  healthSet    // by provider/model (health.go)

	// db is the database the maps cache (persistence.go); nil: memory only.
	db *persistence
	// lost is the persistence a failed Reattach left (its base context and
	// failure report), reused by the next Reattach that succeeds.
	lost *persistence

	// cache is the sessions' prompt-cache figures (promptcache.go; the
	// store's methods for them are PromptCache's).
	cache cacheSet

	// pages orders Page's reads of the database (list.go), made without
	// mu, with the store's moves between databases; it is taken before
	// mu.
	pages sync.Mutex
}

// parentState is everything remembered under one parent session.
type parentState struct {
	id       string
	bytes    int            // counted against the budget: all that follows
	counters map[string]int // alias prefix → last n handed out
	agents   map[string]*agentState
	frozen   *lru.List[string, *frozenBlock] // by message id, newest first; nil until the first

	// With a database: how the parent stands against its row, and the
	// frozen blocks made or dropped since it was last written.
	rowSync
	newFrozen, goneFrozen []string
}

// New returns an empty store; zero Config fields take their defaults.
func New(cfg Config) *Store {
	if cfg.MaxSessionsPerAgent <= 0 {
		cfg.MaxSessionsPerAgent = DefaultMaxSessionsPerAgent
	}
	if cfg.MaxPendingCalls <= 0 {
		cfg.MaxPendingCalls = DefaultMaxPendingCalls
	}
	if cfg.MaxParents <= 0 {
		cfg.MaxParents = DefaultMaxParents
	}
	if cfg.MaxTrackedSessions <= 0 {
		cfg.MaxTrackedSessions = DefaultMaxTrackedSessions
	}
	if cfg.MaxStateBytes <= 0 {
		cfg.MaxStateBytes = DefaultMaxStateBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Store{cfg: cfg}
	s.reset()
	return s
}

// reset empties every structure; the caller holds mu (or owns s alone).
func (s *Store) reset() {
	s.calls = newPendingCalls()
	// A parent's change goes to the database the store has at the time.
	s.parents = newParentSet(func(p *parentState) { s.db.markParent(p) })
	s.tracked = newTrackedSet()
	s.health = healthSet{}
	s.cache = newCacheSet()
}

// tick is the store's clock's next tick; the caller holds mu.
func (s *Store) tick() uint64 {
	s.clock++
	return s.clock
}

// parent returns id's state, creating it, and marks it most recently active;
// creating one may forget the least recently active parent.
func (s *Store) parent(id string) *parentState {
	if p := s.cached(id); p != nil {
		s.parents.list.Touch(id)
		return p
	}
	p := &parentState{
		id:       id,
		counters: make(map[string]int),
		agents:   make(map[string]*agentState),
		rowSync:  rowSync{epoch: s.db.fresh()},
	}
	s.parents.list.PushFront(id, p)
	s.parents.addBytes(p, parentCost(id))
	s.parents.evict(s.cfg.MaxParents)
	return p
}

// DeleteSession forgets everything about session id (session.deleted): what
// is remembered under it as a parent (entries, alias counters, frozen
// blocks), every entry under any parent whose task id it is, the pending
// calls made from it, and its agent.
func (s *Store) DeleteSession(ctx context.Context, id string) {
	s.lock(ctx)
	defer s.unlock()
	s.inWrite(func() error {
		s.deleteSession(id)
		return nil
	}, false)
}

// deleteSession is DeleteSession's change; the caller holds mu.
func (s *Store) deleteSession(id string) {
	if s.db != nil {
		// Load the parents that remember id as a task, so that forgetting
		// it rewrites them.
		for _, parent := range s.db.parentsOfTask(id) {
			s.cached(parent)
		}
		s.db.deleted = append(s.db.deleted, id)
		if s.cachedAgent(id) != nil {
			s.db.untracked = append(s.db.untracked, id)
		}
	}
	if p := s.cached(id); p != nil {
		s.parents.drop(p)
		s.changes++
	}
	if set := s.parents.byTaskID[id]; len(set) > 0 {
		for e := range set {
			s.parents.forget(e)
		}
		s.changes++
	}
	for callID, pc := range s.calls.list.All() {
		if pc.parent == id {
			s.calls.remove(callID)
		}
	}
	if s.tracked.list.Has(id) {
		s.tracked.untrack(id)
		s.changes++
	}
	s.PromptCache().forget(id)
}

// List returns remembered entries, newest first; parent "" lists all.
func (t Tasks) List(parent string) []Entry {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil && parent == "" {
		all, err := s.db.readAll()
		if err == nil {
			return all.Tasks().List("")
		}
		s.db.report(err)
	}
	s.db.refresh()
	var ents []*entry
	collect := func(p *parentState) {
		for _, a := range p.agents {
			for _, e := range a.entries.All() {
				ents = append(ents, e)
			}
		}
	}
	if parent == "" {
		for _, p := range s.parents.list.All() {
			collect(p)
		}
	} else if p := s.cached(parent); p != nil {
		collect(p)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].tick > ents[j].tick })
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = e.export()
		out[i].Model = s.Tracked().entryModel(e.taskID)
		out[i].Switches = s.Tracked().switchesOf(e.taskID)
	}
	return out
}

// Stats reports sizes.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		if st, err := s.db.stats(); err == nil {
			st.PendingCalls = s.calls.list.Len()
			return st
		}
	}
	return Stats{
		Parents:         s.parents.list.Len(),
		Entries:         s.parents.entries,
		PendingCalls:    s.calls.list.Len(),
		TrackedSessions: s.tracked.list.Len(),
		FrozenBlocks:    s.parents.frozen,
	}
}

// keep copies s into an allocation of its own size: a substring of a
// request's buffer, or a builder's string with spare capacity, would make
// the store hold more than the budget counts.
func keep(s string) string { return strings.Clone(s) }

func aliasFor(prefix string, n int) string {
	return prefix + "-" + strconv.Itoa(n)
}
