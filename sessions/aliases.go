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

// Tasks is the store's methods for the task sessions its parents remember
// (PROTOCOL.md 4.2): the pending calls and the parents' entries and aliases
// (calls.go and parents.go), under the store's lock, read through from
// the database and written in one transaction a change.
type Tasks struct{ s *Store }

// Tasks is the store's task sessions.
func (s *Store) Tasks() Tasks { return Tasks{s} }

// BeginCall records a pending task call (tool.execute.before) and resolves
// requestedID (args.task_id, "" when absent or not a string) among parent's
// remembered sessions for agent. It returns what to do with args.task_id
// and, for TaskIDReplace, the id to put there. A call whose ids or agent
// name exceed their caps, or with no callID (PROTOCOL.md 4.2: only the
// pending-call bookkeeping needs one), is resolved but not recorded, so
// its task is not remembered.
func (t Tasks) BeginCall(ctx context.Context, callID, parent, agent, label, requestedID string) (TaskIDAction, string) {
	s := t.s
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
		s.calls.add(pc, s.cfg.MaxPendingCalls)
		s.enforceBudget()
	}

	requested := strings.TrimSpace(requestedID)
	if requested == "" {
		return TaskIDLeave, ""
	}
	act, id := TaskIDRemove, ""
	if strings.HasPrefix(requested, "ses") {
		act, id = TaskIDReplace, requested
	}
	s.inWrite(func() error {
		p := s.cached(parent)
		if p == nil {
			return nil
		}
		s.parents.list.Touch(parent)
		a := p.agents[agent]
		if a == nil {
			return nil
		}
		e, _ := a.entries.Get(requested)
		if e == nil {
			e = a.byTask[requested]
		}
		if e == nil {
			return nil
		}
		s.parents.use(e, e.label, s.tick(), s.cfg.Now())
		s.calls.setResumes(pc, e.taskID)
		if recorded {
			// Only a recorded call has an outcome that ends the run.
			s.parents.setRun(e, Run{State: RunRunning})
		}
		act, id = TaskIDReplace, e.taskID
		return nil
	}, false)
	return act, id
}

// CompleteCall takes the pending call callID (tool.execute.after) and
// updates the remembered entries from what the task output said
// (core.ParseTaskOutput).
func (t Tasks) CompleteCall(ctx context.Context, callID string, out core.TaskOutcome) {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	pc := s.calls.remove(callID)
	if pc == nil {
		return
	}
	if len(out.TaskID) > MaxIDBytes {
		return // not kept: served, not remembered
	}
	s.inWrite(func() error {
		t.complete(pc, keep(out.TaskID), out)
		s.enforceBudget()
		return nil
	}, false)
}

// complete is CompleteCall's change: pc's entry after the call's outcome
// (its task id id); the caller holds mu.
func (t Tasks) complete(pc *pendingCall, id string, out core.TaskOutcome) {
	s := t.s
	if id == "" {
		if pc.resumes != "" {
			if e := lookup(s.cached(pc.parent), pc.agent, pc.resumes); e != nil {
				if out.SessionNotFound {
					s.parents.forget(e)
					s.changes++
				} else {
					s.parents.setRun(e, Run{State: RunError}) // the output names no session: the run failed
				}
			}
		}
		return
	}

	s.PromptCache().attribute(id, pc.parent, pc.agent)
	var e *entry
	if pc.resumes != "" && pc.resumes != id {
		if pred := lookup(s.cached(pc.parent), pc.agent, pc.resumes); pred != nil {
			if cur := lookup(s.cached(pc.parent), pc.agent, id); cur != nil {
				s.parents.forget(pred)
				s.parents.list.Touch(cur.parent.id)
				s.parents.use(cur, pc.label, s.tick(), s.cfg.Now())
				e = cur
			} else {
				s.parents.list.Touch(pred.parent.id)
				s.parents.retarget(pred, id)
				// A new child, made by this resuming call: it does what
				// this call's description says, so its label is this
				// call's (issue 42 item 5), not the predecessor's.
				s.parents.relabel(pred, pc.label)
				s.parents.use(pred, pc.label, s.tick(), s.cfg.Now())
				e = pred
			}
		}
		// Else the predecessor was forgotten meanwhile: remember id afresh.
	}
	if e == nil {
		e = t.remember(pc, id)
	}
	if e != nil {
		switch {
		case out.Error != "":
			s.parents.setRun(e, Run{State: RunError, Error: cutBytes(out.Error, MaxRunErrorBytes)})
		case out.Running:
			s.parents.setRun(e, Run{State: RunRunning}) // OpenCode 2's background subagent
		default:
			s.parents.setRun(e, Run{State: RunCompleted})
		}
	}
}

// FailCall takes the pending call callID whose task failed without an
// outcome (OpenCode's native task tool throws, so tool.execute.after never
// comes; the errored part shows in chat.messages.transform) and marks the
// entry it resumed as failed with message. A call that resumed nothing
// started no remembered session, so there is nothing to mark.
func (t Tasks) FailCall(ctx context.Context, callID, message string) {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	pc := s.calls.remove(callID)
	if pc == nil || pc.resumes == "" {
		return
	}
	s.inWrite(func() error {
		if e := lookup(s.cached(pc.parent), pc.agent, pc.resumes); e != nil {
			s.parents.setRun(e, Run{State: RunError, Error: cutBytes(message, MaxRunErrorBytes)})
			s.enforceBudget()
		}
		return nil
	}, false)
}

// remember records id for pc's parent and agent: an id already remembered
// keeps its alias, others get the parent's next alias for pc.prefix. It
// returns the entry, or nil when a bound leaves id unremembered.
func (t Tasks) remember(pc *pendingCall, id string) *entry {
	s := t.s
	p := s.parent(pc.parent)
	a := p.agents[pc.agent]
	if a != nil {
		if e := a.byTask[id]; e != nil {
			s.parents.use(e, pc.label, s.tick(), s.cfg.Now())
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
		s.parents.addBytes(p, counterCost(pc.prefix))
	}
	if a == nil {
		a = s.parents.newAgent(p, pc.agent)
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
	s.parents.link(e)
	s.parents.use(e, pc.label, s.tick(), s.cfg.Now())
	s.parents.trimAgent(a, s.cfg.MaxSessionsPerAgent)
	s.parents.trimAgents(p)
	return e
}

func newestTick(a *agentState) uint64 {
	_, e, _ := a.entries.Front()
	return e.tick
}

// ResumableSessions returns parent's remembered entries grouped by agent,
// newest first, ready for core.ResumableSessionsBlock. Agents are ordered
// by their newest entry's use. nil when nothing is remembered.
func (t Tasks) ResumableSessions(parent string) []core.BlockAgent {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.refresh()
	p := s.cached(parent)
	if p == nil {
		return nil
	}
	s.parents.list.Touch(parent)
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
func (t Tasks) ResumeName(parent, taskID string) (name, agent string) {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.refresh()
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

// export is e as sessions.list reports it; the caller holds mu. An entry
// not yet written is listed by its task id (resumeName), never under the
// alias another process may hand out meanwhile (issue 49).
func (e *entry) export() Entry {
	return Entry{
		Parent:  e.parent.id,
		Agent:   e.agent.name,
		Alias:   e.resumeName(),
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
func (t Tasks) ForgetAlias(ctx context.Context, alias, parent string) int {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	n := 0
	s.inWrite(func() error {
		var parents []string
		if d := s.db; d != nil {
			var err error
			if parents, err = d.b.Parents.WithAlias(d.ctx, alias, parent); err != nil {
				d.fail(err)
				return nil
			}
		} else if parent != "" {
			parents = []string{parent}
		} else {
			for id := range s.parents.list.All() {
				parents = append(parents, id)
			}
		}
		for _, id := range parents {
			p := s.cached(id)
			if p == nil {
				continue
			}
			for _, a := range p.agents {
				if e, ok := a.entries.Get(alias); ok {
					s.parents.forget(e)
					n++
				}
			}
		}
		s.changes++
		return nil
	}, false)
	return n
}
