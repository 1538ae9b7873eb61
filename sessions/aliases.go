package sessions

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/internal/lru"
)

// The store's entries: per parent and agent, the remembered task sessions
// with their aliases, and per parent the alias counters.

// agentState holds one agent's entries under one parent.
type agentState struct {
	name    string
	entries *lru.List[string, *entry] // by alias, most recently used first
	byTask  map[string]*entry
}

type entry struct {
	parent  *parentState
	agent   *agentState
	alias   string
	taskID  string
	label   string
	lastUse time.Time
	tick    uint64
	run     Run
	// provisional: made while this process's write of it has not
	// committed (the database busy or failing; issue 39 item 7). Another
	// process may take the same alias meanwhile, so the model is given
	// the task id, never the alias, until the entry is written.
	provisional bool
}

// resumeName is what the model is told to resume e by: its alias, or its
// task id while e is provisional.
func (e *entry) resumeName() string {
	if e.provisional {
		return e.taskID
	}
	return e.alias
}

// BeginCall records a pending task call (tool.execute.before) and resolves
// requestedID (args.task_id, "" when absent or not a string) among parent's
// remembered sessions for agent. It returns what to do with args.task_id
// and, for TaskIDReplace, the id to put there. A call whose ids or agent
// name exceed their caps, or with no callID (PROTOCOL.md 4.2: only the
// pending-call bookkeeping needs one), is resolved but not recorded, so
// its task is not remembered.
func (s *Store) BeginCall(ctx context.Context, callID, parent, agent, label, requestedID string) (TaskIDAction, string) {
	if len(agent) > MaxAgentNameBytes {
		return TaskIDLeave, ""
	}
	prefix := core.AliasPrefix(agent, s.cfg.AliasOverrides)
	if prefix == "" {
		return TaskIDLeave, ""
	}
	s.lock(ctx)
	defer s.release()

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
	s.begin()
	defer s.finish()
	if p := s.cached(parent); p != nil {
		s.parents.Touch(parent)
		if a := p.agents[agent]; a != nil {
			e, _ := a.entries.Get(requested)
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
func (s *Store) CompleteCall(ctx context.Context, callID string, out core.TaskOutcome) {
	s.lock(ctx)
	defer s.unlock()
	pc := s.removePending(callID)
	if pc == nil {
		return
	}
	if len(out.TaskID) > MaxIDBytes {
		return // not kept: served, not remembered
	}
	s.begin()
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

	s.PromptCache().attribute(id, pc.parent, pc.agent)
	var e *entry
	if pc.resumes != "" && pc.resumes != id {
		if pred := s.lookup(pc.parent, pc.agent, pc.resumes); pred != nil {
			if cur := s.lookup(pc.parent, pc.agent, id); cur != nil {
				s.forget(pred)
				s.parents.Touch(cur.parent.id)
				s.use(cur, pc.label)
				e = cur
			} else {
				s.parents.Touch(pred.parent.id)
				s.retarget(pred, id)
				// A new child, made by this resuming call: it does what
				// this call's description says, so its label is this
				// call's (issue 42 item 5), not the predecessor's.
				s.relabel(pred, pc.label)
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
		switch {
		case out.Error != "":
			s.setRun(e, Run{State: RunError, Error: cutBytes(out.Error, MaxRunErrorBytes)})
		case out.Running:
			s.setRun(e, Run{State: RunRunning}) // OpenCode 2's background subagent
		default:
			s.setRun(e, Run{State: RunCompleted})
		}
	}
}

// relabel gives e the label label (kept within MaxLabelBytes), counting
// its bytes; an empty label keeps e's.
func (s *Store) relabel(e *entry, label string) {
	if label == "" || e.label == label {
		return
	}
	before := entryCost(e)
	e.label = keep(label)
	s.addParentBytes(e.parent, entryCost(e)-before)
	s.changed()
}

// FailCall takes the pending call callID whose task failed without an
// outcome (OpenCode's native task tool throws, so tool.execute.after never
// comes; the errored part shows in chat.messages.transform) and marks the
// entry it resumed as failed with message. A call that resumed nothing
// started no remembered session, so there is nothing to mark.
func (s *Store) FailCall(ctx context.Context, callID, message string) {
	s.lock(ctx)
	defer s.unlock()
	pc := s.removePending(callID)
	if pc == nil || pc.resumes == "" {
		return
	}
	s.begin()
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
	before := entryCost(e)
	e.run = r
	s.addParentBytes(e.parent, entryCost(e)-before)
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
	if d := s.db; d != nil && !d.readOnly {
		e.provisional = true // until the transaction writing it commits
		d.provisional = append(d.provisional, e)
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
		entries: lru.New[string, *entry](),
		byTask:  make(map[string]*entry),
	}
	p.agents[name] = a
	s.addParentBytes(p, agentCost(name))
	return a
}

// link adds e, not yet in any index, to its agent (as its least recently
// used entry) and the task-id index.
func (s *Store) link(e *entry) {
	a := e.agent
	a.entries.PushBack(e.alias, e)
	a.byTask[e.taskID] = e
	s.indexTask(e)
	s.entryCount++
	s.addParentBytes(e.parent, entryCost(e))
}

// use marks e as the newest use. An entry keeps the label of the call
// that made it (a resume's description says what that call asks, not
// what the session is); label is taken only by an entry without one.
func (s *Store) use(e *entry, label string) {
	s.clock++
	e.tick = s.clock
	e.lastUse = s.now()
	if e.label == "" {
		before := entryCost(e)
		e.label = label
		s.addParentBytes(e.parent, entryCost(e)-before)
	}
	e.agent.entries.Touch(e.alias)
	s.changed()
}

// retarget makes e hold taskID id instead of its current one.
func (s *Store) retarget(e *entry, id string) {
	delete(e.agent.byTask, e.taskID)
	s.unindexTask(e)
	before := entryCost(e)
	e.taskID = id
	s.addParentBytes(e.parent, entryCost(e)-before)
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
	a.entries.Remove(e.alias)
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
		_, oldest, _ := a.entries.Back()
		s.forget(oldest)
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
		for _, e := range oldest.entries.All() {
			s.forget(e)
		}
	}
}

func newestTick(a *agentState) uint64 {
	_, e, _ := a.entries.Front()
	return e.tick
}

// ResumableSessions returns parent's remembered entries grouped by agent,
// newest first, ready for core.ResumableSessionsBlock. Agents are ordered
// by their newest entry's use. nil when nothing is remembered.
func (s *Store) ResumableSessions(parent string) []core.BlockAgent {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	p := s.cached(parent)
	if p == nil {
		return nil
	}
	s.parents.Touch(parent)
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
		for _, e := range a.entries.All() {
			ba.Entries = append(ba.Entries, core.BlockEntry{Alias: e.resumeName(), Label: e.label})
		}
		out = append(out, ba)
	}
	return out
}

// ResumeName is what the model is told to resume parent's task session
// taskID by (retry guidance), and the agent whose entry holds it: its
// alias, or taskID itself when no entry holds it (agent "") or its entry
// is not written yet (entry.provisional).
func (s *Store) ResumeName(parent, taskID string) (name, agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	p := s.cached(parent)
	if p == nil {
		return taskID, ""
	}
	for _, a := range p.agents {
		if e := a.byTask[taskID]; e != nil {
			return e.resumeName(), a.name
		}
	}
	return taskID, ""
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

// ForgetAlias forgets the entries named alias under parent (under every
// parent when parent is ""), in one transaction, as `hookwire forget
// --alias` asks; their alias counters stay, so the alias is never handed
// out again. It returns how many it forgot.
func (s *Store) ForgetAlias(ctx context.Context, alias, parent string) int {
	s.lock(ctx)
	defer s.unlock()
	s.begin()
	var parents []string
	if d := s.db; d != nil {
		var err error
		if parents, err = d.b.Parents.WithAlias(d.ctx, alias, parent); err != nil {
			d.fail(err)
			return 0
		}
	} else if parent != "" {
		parents = []string{parent}
	} else {
		for id := range s.parents.All() {
			parents = append(parents, id)
		}
	}
	n := 0
	for _, id := range parents {
		p := s.cached(id)
		if p == nil {
			continue
		}
		for _, a := range p.agents {
			if e, ok := a.entries.Get(alias); ok {
				s.forget(e)
				n++
			}
		}
	}
	s.changed()
	return n
}
