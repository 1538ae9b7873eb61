package sessions

import (
	"container/list"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookwire/hookwire/core"
)

// Config bounds the store (PROTOCOL.md 4.2, 7).
type Config struct {
	MaxSessionsPerAgent int               // default 2
	MaxPendingCalls     int               // default 100
	MaxParents          int               // default 1000
	MaxTrackedSessions  int               // default 10000
	MaxStateBytes       int               // default 16 MiB
	AliasOverrides      map[string]string // config.taskSessions.agents
}

// Defaults of Config's bounds; a zero or negative field takes its default.
const (
	DefaultMaxSessionsPerAgent = 2
	DefaultMaxPendingCalls     = 100
	DefaultMaxParents          = 1000
	DefaultMaxTrackedSessions  = 10000
	// DefaultMaxStateBytes is the byte budget of the store and its state
	// file: what it holds, counted as the state file's bytes plus a fixed
	// overhead per item (PROTOCOL.md 7). Beyond it the least recently
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
	// RetainFrozen, which frees room after a compaction.
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

// Store is the session store. Its methods are safe for concurrent use; each
// holds one mutex for O(1) work (ResumableSessions, List and DeleteSession are linear in
// what they return or forget).
type Store struct {
	mu  sync.Mutex
	cfg Config
	now func() time.Time

	// clock orders uses: a logical tick, so "most recent" is exact even when
	// two uses share a wall-clock instant.
	clock uint64
	// changes counts mutations of the persisted state (Changes).
	changes uint64

	pending     map[string]*list.Element // callID → *pendingCall in pendingLRU
	pendingLRU  *list.List               // oldest at the back
	parents     map[string]*parentState
	parentLRU   *list.List // *parentState, least recently active at the back
	byTaskID    map[string]map[*entry]struct{}
	agents      map[string]*list.Element // session → *sessionAgent in agentLRU
	agentLRU    *list.List               // least recently active at the back
	entryCount  int
	frozenCount int

	// Bytes counted against Config.MaxStateBytes (budget.go).
	parentBytes, trackedBytes, pendingBytes int
}

type pendingCall struct {
	callID, parent, agent, prefix, label string
	resumes                              string // task id this call resumes, "" if none
}

type sessionAgent struct {
	session, agent string
	model          *ModelDecision // the latest chat.message's (model.go); nil: none
}

// parentState is everything remembered under one parent session.
type parentState struct {
	id       string
	bytes    int            // counted against the budget: all that follows
	elem     *list.Element  // in Store.parentLRU
	counters map[string]int // alias prefix → last n handed out
	agents   map[string]*agentState
	frozen   map[string]*list.Element // messageID → *frozenBlock in frozenQ; nil until the first
	frozenQ  *list.List               // oldest at the back
}

type frozenBlock struct{ messageID, text string }

// agentState holds one agent's entries under one parent.
type agentState struct {
	name    string
	entries *list.List // *entry, most recently used at the front
	byAlias map[string]*entry
	byTask  map[string]*entry
}

type entry struct {
	parent  *parentState
	agent   *agentState
	elem    *list.Element // in agent.entries
	alias   string
	taskID  string
	label   string
	lastUse time.Time
	tick    uint64
	run     Run
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
	s := &Store{cfg: cfg, now: time.Now}
	s.reset()
	return s
}

// reset empties every structure; the caller holds mu (or owns s alone).
func (s *Store) reset() {
	s.pending = make(map[string]*list.Element)
	s.pendingLRU = list.New()
	s.parents = make(map[string]*parentState)
	s.parentLRU = list.New()
	s.byTaskID = make(map[string]map[*entry]struct{})
	s.agents = make(map[string]*list.Element)
	s.agentLRU = list.New()
	s.entryCount = 0
	s.frozenCount = 0
	s.parentBytes, s.trackedBytes, s.pendingBytes = 0, 0, 0
}

// BeginCall records a pending task call (tool.execute.before) and resolves
// requestedID (args.task_id, "" when absent or not a string) among parent's
// remembered sessions for agent. It returns what to do with args.task_id
// and, for TaskIDReplace, the id to put there. A call whose ids or agent
// name exceed their caps, or with no callID (PROTOCOL.md 4.2: only the
// pending-call bookkeeping needs one), is resolved but not recorded, so
// its task is not remembered.
func (s *Store) BeginCall(callID, parent, agent, label, requestedID string) (TaskIDAction, string) {
	if len(agent) > MaxAgentNameBytes {
		return TaskIDLeave, ""
	}
	prefix := core.AliasPrefix(agent, s.cfg.AliasOverrides)
	if prefix == "" {
		return TaskIDLeave, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	// The store keeps its own copies of what it keeps (keep), never a
	// substring that would pin a request's larger buffer.
	pc := &pendingCall{callID: keep(callID), parent: keep(parent), agent: keep(agent), prefix: keep(prefix), label: keep(cutBytes(label, MaxLabelBytes))}
	recorded := callID != "" && len(callID) <= MaxIDBytes && len(parent) <= MaxIDBytes && len(prefix) < MaxIDBytes-11
	if recorded {
		s.addPending(pc)
		s.enforceBudget()
	}

	requested := strings.TrimSpace(requestedID)
	if requested == "" {
		return TaskIDLeave, ""
	}
	if p := s.parents[parent]; p != nil {
		s.touchParent(p)
		if a := p.agents[agent]; a != nil {
			e := a.byAlias[requested]
			if e == nil {
				e = a.byTask[requested]
			}
			if e != nil {
				s.use(e, e.label)
				s.setResumes(pc, e.taskID)
				if recorded {
					// Only a recorded call has an outcome that ends the run.
					s.setRun(e, Run{State: RunRunning})
				}
				return TaskIDReplace, e.taskID
			}
		}
	}
	if strings.HasPrefix(requested, "ses") {
		return TaskIDReplace, requested
	}
	return TaskIDRemove, ""
}

// CompleteCall takes the pending call callID (tool.execute.after) and
// updates the remembered entries from what the task output said
// (core.ParseTaskOutput).
func (s *Store) CompleteCall(callID string, out core.TaskOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.pending[callID]
	if el == nil {
		return
	}
	pc := s.removePending(el)

	if len(out.TaskID) > MaxIDBytes {
		return // not kept: served, not remembered
	}
	id := keep(out.TaskID)
	defer s.enforceBudget()
	if id == "" {
		if pc.resumes != "" {
			if e := s.lookup(pc.parent, pc.agent, pc.resumes); e != nil {
				if out.SessionNotFound {
					s.forget(e)
					s.changed()
				} else {
					s.setRun(e, Run{State: RunError}) // the output names no session: the run failed
				}
			}
		}
		return
	}

	var e *entry
	if pc.resumes != "" && pc.resumes != id {
		if pred := s.lookup(pc.parent, pc.agent, pc.resumes); pred != nil {
			if cur := s.lookup(pc.parent, pc.agent, id); cur != nil {
				s.forget(pred)
				s.touchParent(cur.parent)
				s.use(cur, pc.label)
				e = cur
			} else {
				s.touchParent(pred.parent)
				s.retarget(pred, id)
				s.use(pred, pc.label)
				e = pred
			}
		}
		// Else the predecessor was forgotten meanwhile: remember id afresh.
	}
	if e == nil {
		e = s.remember(pc, id)
	}
	if e != nil {
		s.setRun(e, Run{State: RunCompleted})
	}
}

// FailCall takes the pending call callID whose task failed without an
// outcome (OpenCode's native task tool throws, so tool.execute.after never
// comes; the errored part shows in chat.messages.transform) and marks the
// entry it resumed as failed with message. A call that resumed nothing
// started no remembered session, so there is nothing to mark.
func (s *Store) FailCall(callID, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.pending[callID]
	if el == nil {
		return
	}
	pc := s.removePending(el)
	if pc.resumes == "" {
		return
	}
	if e := s.lookup(pc.parent, pc.agent, pc.resumes); e != nil {
		s.setRun(e, Run{State: RunError, Error: cutBytes(message, MaxRunErrorBytes)})
		s.enforceBudget()
	}
}

// setRun records e's run state, counting its bytes.
func (s *Store) setRun(e *entry, r Run) {
	if e.run == r {
		return
	}
	r.Error = keep(r.Error)
	s.addParentBytes(e.parent, runCost(r)-runCost(e.run))
	e.run = r
	s.changed()
}

// remember records id for pc's parent and agent: an id already remembered
// keeps its alias, others get the parent's next alias for pc.prefix. It
// returns the entry, or nil when a bound leaves id unremembered.
func (s *Store) remember(pc *pendingCall, id string) *entry {
	p := s.parent(pc.parent)
	a := p.agents[pc.agent]
	if a != nil {
		if e := a.byTask[id]; e != nil {
			s.use(e, pc.label)
			return e
		}
	}
	n, ok := p.counters[pc.prefix]
	if !ok && len(p.counters) >= MaxAliasPrefixesPerParent {
		return nil
	}
	if n >= MaxAliasCounter {
		return nil // no alias left for the prefix: never wrap around
	}
	if !ok {
		s.addParentBytes(p, counterCost(pc.prefix))
	}
	if a == nil {
		a = s.newAgent(p, pc.agent)
	}
	p.counters[pc.prefix] = n + 1
	e := &entry{
		parent: p,
		agent:  a,
		alias:  aliasFor(pc.prefix, p.counters[pc.prefix]),
		taskID: id,
	}
	s.link(e)
	s.use(e, pc.label)
	s.trimAgent(a)
	s.trimAgents(p)
	return e
}

// newAgent adds an agent without entries under p.
func (s *Store) newAgent(p *parentState, name string) *agentState {
	a := &agentState{
		name:    name,
		entries: list.New(),
		byAlias: make(map[string]*entry),
		byTask:  make(map[string]*entry),
	}
	p.agents[name] = a
	s.addParentBytes(p, agentCost(name))
	return a
}

// link adds e, not yet in any index, to its agent and the task-id index.
func (s *Store) link(e *entry) {
	a := e.agent
	e.elem = a.entries.PushBack(e)
	a.byAlias[e.alias] = e
	a.byTask[e.taskID] = e
	s.indexTask(e)
	s.entryCount++
	s.addParentBytes(e.parent, entryCost(e))
}

// use marks e as the newest use with label.
func (s *Store) use(e *entry, label string) {
	s.clock++
	e.tick = s.clock
	e.lastUse = s.now()
	s.addParentBytes(e.parent, jsonLen(label)-jsonLen(e.label))
	e.label = label
	e.agent.entries.MoveToFront(e.elem)
	s.changed()
}

// retarget makes e hold taskID id instead of its current one.
func (s *Store) retarget(e *entry, id string) {
	delete(e.agent.byTask, e.taskID)
	s.unindexTask(e)
	s.addParentBytes(e.parent, jsonLen(id)-jsonLen(e.taskID))
	e.taskID = id
	e.agent.byTask[id] = e
	s.indexTask(e)
}

func (s *Store) indexTask(e *entry) {
	set := s.byTaskID[e.taskID]
	if set == nil {
		set = make(map[*entry]struct{}, 1)
		s.byTaskID[e.taskID] = set
	}
	set[e] = struct{}{}
}

func (s *Store) unindexTask(e *entry) {
	set := s.byTaskID[e.taskID]
	delete(set, e)
	if len(set) == 0 {
		delete(s.byTaskID, e.taskID)
	}
}

// forget removes e everywhere; an agent left without entries goes too.
func (s *Store) forget(e *entry) {
	a := e.agent
	a.entries.Remove(e.elem)
	delete(a.byAlias, e.alias)
	delete(a.byTask, e.taskID)
	s.unindexTask(e)
	s.entryCount--
	s.addParentBytes(e.parent, -entryCost(e))
	if a.entries.Len() == 0 {
		delete(e.parent.agents, a.name)
		s.addParentBytes(e.parent, -agentCost(a.name))
	}
}

// trimAgent keeps a's MaxSessionsPerAgent most recently used entries.
func (s *Store) trimAgent(a *agentState) {
	for a.entries.Len() > s.cfg.MaxSessionsPerAgent {
		s.forget(a.entries.Back().Value.(*entry))
	}
}

// trimAgents keeps p's MaxAgentsPerParent most recently used agents. It
// scans, but only when a new agent pushed p over the bound.
func (s *Store) trimAgents(p *parentState) {
	for len(p.agents) > MaxAgentsPerParent {
		var oldest *agentState
		for _, a := range p.agents {
			if oldest == nil || newestTick(a) < newestTick(oldest) {
				oldest = a
			}
		}
		for oldest.entries.Len() > 0 {
			s.forget(oldest.entries.Front().Value.(*entry))
		}
	}
}

func newestTick(a *agentState) uint64 { return a.entries.Front().Value.(*entry).tick }

// lookup finds parent's entry for agent by task id, without touching it.
func (s *Store) lookup(parent, agent, taskID string) *entry {
	p := s.parents[parent]
	if p == nil {
		return nil
	}
	a := p.agents[agent]
	if a == nil {
		return nil
	}
	return a.byTask[taskID]
}

// parent returns id's state, creating it, and marks it most recently active;
// creating one may forget the least recently active parent.
func (s *Store) parent(id string) *parentState {
	if p := s.parents[id]; p != nil {
		s.touchParent(p)
		return p
	}
	p := &parentState{
		id:       id,
		counters: make(map[string]int),
		agents:   make(map[string]*agentState),
	}
	p.elem = s.parentLRU.PushFront(p)
	s.parents[id] = p
	s.addParentBytes(p, parentCost(id))
	for s.parentLRU.Len() > s.cfg.MaxParents {
		s.dropParent(s.parentLRU.Back().Value.(*parentState))
	}
	return p
}

func (s *Store) touchParent(p *parentState) { s.parentLRU.MoveToFront(p.elem) }

// dropParent forgets p with its counters, entries and frozen blocks.
func (s *Store) dropParent(p *parentState) {
	for _, a := range p.agents {
		for el := a.entries.Front(); el != nil; el = el.Next() {
			s.unindexTask(el.Value.(*entry))
			s.entryCount--
		}
	}
	s.frozenCount -= len(p.frozen)
	s.parentBytes -= p.bytes
	s.parentLRU.Remove(p.elem)
	delete(s.parents, p.id)
}

func (s *Store) addPending(pc *pendingCall) {
	if el := s.pending[pc.callID]; el != nil {
		s.removePending(el)
	}
	s.pending[pc.callID] = s.pendingLRU.PushFront(pc)
	s.pendingBytes += pendingCost(pc)
	for s.pendingLRU.Len() > s.cfg.MaxPendingCalls {
		s.removePending(s.pendingLRU.Back())
	}
}

// setResumes records the task id pc resumes, counting its bytes if pc is
// pending.
func (s *Store) setResumes(pc *pendingCall, taskID string) {
	if el := s.pending[pc.callID]; el != nil && el.Value == pc {
		s.pendingBytes += len(taskID) - len(pc.resumes)
	}
	pc.resumes = taskID
}

func (s *Store) removePending(el *list.Element) *pendingCall {
	pc := s.pendingLRU.Remove(el).(*pendingCall)
	delete(s.pending, pc.callID)
	s.pendingBytes -= pendingCost(pc)
	return pc
}

func (s *Store) changed() { s.changes++ }

// ResumableSessions returns parent's remembered entries grouped by agent,
// newest first, ready for core.ResumableSessionsBlock. Agents are ordered
// by their newest entry's use. nil when nothing is remembered.
func (s *Store) ResumableSessions(parent string) []core.BlockAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parents[parent]
	if p == nil {
		return nil
	}
	s.touchParent(p)
	if len(p.agents) == 0 {
		return nil
	}
	agents := make([]*agentState, 0, len(p.agents))
	for _, a := range p.agents {
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return newestTick(agents[i]) > newestTick(agents[j]) })
	out := make([]core.BlockAgent, 0, len(agents))
	for _, a := range agents {
		ba := core.BlockAgent{Agent: a.name, Entries: make([]core.BlockEntry, 0, a.entries.Len())}
		for el := a.entries.Front(); el != nil; el = el.Next() {
			e := el.Value.(*entry)
			ba.Entries = append(ba.Entries, core.BlockEntry{Alias: e.alias, Label: e.label})
		}
		out = append(out, ba)
	}
	return out
}

// SetAgent records which agent session runs; Agent reads it ("" unknown).
// Both count as the session's activity for the MaxTrackedSessions bound.
// A session id or agent name over its cap is not kept: the session's agent
// is then unknown.
func (s *Store) SetAgent(session, agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.agents[session]
	if len(session) > MaxIDBytes || len(agent) > MaxAgentNameBytes {
		if el != nil {
			s.untrack(el)
			s.changed()
		}
		return
	}
	if el != nil {
		sa := el.Value.(*sessionAgent)
		s.agentLRU.MoveToFront(el)
		if sa.agent != agent {
			s.trackedBytes += jsonLen(agent) - jsonLen(sa.agent)
			sa.agent = keep(agent)
			s.changed()
			s.enforceBudget()
		}
		return
	}
	s.track(&sessionAgent{session: keep(session), agent: keep(agent)}, false)
	for s.agentLRU.Len() > s.cfg.MaxTrackedSessions {
		s.untrack(s.agentLRU.Back())
	}
	s.changed()
	s.enforceBudget()
}

// track adds sa, not yet tracked, as the most (or, oldest, the least)
// recently active session.
func (s *Store) track(sa *sessionAgent, oldest bool) {
	if oldest {
		s.agents[sa.session] = s.agentLRU.PushBack(sa)
	} else {
		s.agents[sa.session] = s.agentLRU.PushFront(sa)
	}
	s.trackedBytes += trackedCost(sa)
}

// untrack forgets the session agent at el.
func (s *Store) untrack(el *list.Element) {
	sa := s.agentLRU.Remove(el).(*sessionAgent)
	delete(s.agents, sa.session)
	s.trackedBytes -= trackedCost(sa)
}

func (s *Store) Agent(session string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.agents[session]
	if el == nil {
		return ""
	}
	s.agentLRU.MoveToFront(el)
	return el.Value.(*sessionAgent).agent
}

// FrozenBlock returns the block frozen for (session, messageID), computing
// and storing it with compute on first sight (cache-stable mode, 4.4).
// compute runs without the store's lock held, so it may call
// ResumableSessions; if two
// callers race on one key, the first stored result wins and both get it.
// A session holding MaxFrozenBlocksPerSession blocks freezes no more: a new
// message gets "" and nothing is stored, so it gets "" again next time.
//
// A session or message id over MaxIDBytes gets "" (nothing is stored, so it
// gets "" every time); a block over MaxFrozenBlockBytes is frozen as "".
func (s *Store) FrozenBlock(session, messageID string, compute func() string) string {
	if len(session) > MaxIDBytes || len(messageID) > MaxIDBytes {
		return ""
	}
	s.mu.Lock()
	p := s.parent(session)
	if el := p.frozen[messageID]; el != nil {
		text := el.Value.(*frozenBlock).text
		s.mu.Unlock()
		return text
	}
	full := p.frozenQ != nil && p.frozenQ.Len() >= MaxFrozenBlocksPerSession
	s.mu.Unlock()
	if full {
		return ""
	}

	text := compute()
	if len(text) > MaxFrozenBlockBytes {
		text = ""
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	p = s.parent(session) // it may have been evicted or deleted meanwhile
	if el := p.frozen[messageID]; el != nil {
		return el.Value.(*frozenBlock).text
	}
	if p.frozenQ != nil && p.frozenQ.Len() >= MaxFrozenBlocksPerSession {
		return "" // filled up meanwhile
	}
	s.freeze(p, messageID, text)
	s.changed()
	s.enforceBudget()
	return text
}

// freeze stores a new frozen block under p; the caller checked the bound.
func (s *Store) freeze(p *parentState, messageID, text string) {
	if p.frozen == nil {
		p.frozen = make(map[string]*list.Element)
		p.frozenQ = list.New()
	}
	fb := &frozenBlock{messageID: keep(messageID), text: keep(text)}
	p.frozen[messageID] = p.frozenQ.PushFront(fb)
	s.frozenCount++
	s.addParentBytes(p, frozenCost(fb))
}

// RetainFrozen makes room in a session that holds MaxFrozenBlocksPerSession
// blocks: it forgets those whose message inHistory says is gone (OpenCode
// dropped it from the history, e.g. by compaction), as no request will
// carry that message again. Below the bound it does nothing, so a request
// that carries only part of a history (a title request) costs nothing.
func (s *Store) RetainFrozen(session string, inHistory func(messageID string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parents[session]
	if p == nil || p.frozenQ == nil || p.frozenQ.Len() < MaxFrozenBlocksPerSession {
		return
	}
	for e := p.frozenQ.Front(); e != nil; {
		next := e.Next()
		if fb := e.Value.(*frozenBlock); !inHistory(fb.messageID) {
			p.frozenQ.Remove(e)
			delete(p.frozen, fb.messageID)
			s.frozenCount--
			s.addParentBytes(p, -frozenCost(fb))
			s.changed()
		}
		e = next
	}
}

// DeleteSession forgets everything about session id (session.deleted): what
// is remembered under it as a parent (entries, alias counters, frozen
// blocks), every entry under any parent whose task id it is, the pending
// calls made from it, and its agent.
func (s *Store) DeleteSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.parents[id]; p != nil {
		s.dropParent(p)
		s.changed()
	}
	if set := s.byTaskID[id]; len(set) > 0 {
		for e := range set {
			s.forget(e)
		}
		s.changed()
	}
	for el := s.pendingLRU.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*pendingCall).parent == id {
			s.removePending(el)
		}
		el = next
	}
	if el := s.agents[id]; el != nil {
		s.untrack(el)
		s.changed()
	}
}

// List returns remembered entries, newest first; parent "" lists all.
func (s *Store) List(parent string) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ents []*entry
	collect := func(p *parentState) {
		for _, a := range p.agents {
			for el := a.entries.Front(); el != nil; el = el.Next() {
				ents = append(ents, el.Value.(*entry))
			}
		}
	}
	if parent == "" {
		for _, p := range s.parents {
			collect(p)
		}
	} else if p := s.parents[parent]; p != nil {
		collect(p)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].tick > ents[j].tick })
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = e.export()
		out[i].Model = s.entryModel(e.taskID)
	}
	return out
}

// export is e as sessions.list reports it; the caller holds mu.
func (e *entry) export() Entry {
	return Entry{
		Parent:  e.parent.id,
		Agent:   e.agent.name,
		Alias:   e.alias,
		TaskID:  e.taskID,
		Label:   e.label,
		LastUse: e.lastUse,
		Run:     e.run,
	}
}

// Stats reports sizes.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Parents:         len(s.parents),
		Entries:         s.entryCount,
		PendingCalls:    len(s.pending),
		TrackedSessions: len(s.agents),
		FrozenBlocks:    s.frozenCount,
	}
}

// changeCount counts the mutations of the state Snapshot saves; a writer
// compares it with the value it last wrote to know whether to write again.
// Marking a parent or session as active without changing what it holds
// does not count.
func (s *Store) changeCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes
}

// keep copies s into an allocation of its own size: a substring of a
// request's buffer, or a builder's string with spare capacity, would make
// the store hold more than the budget counts.
func keep(s string) string { return strings.Clone(s) }

func aliasFor(prefix string, n int) string {
	return prefix + "-" + strconv.Itoa(n)
}
