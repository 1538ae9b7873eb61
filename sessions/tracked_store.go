package sessions

import "context"

// Tracked is the store's methods for the tracked sessions (tracked.go):
// trackedSet under the store's lock, read through from the database
// (cachedAgent) and written in the method's transaction.
type Tracked struct{ s *Store }

// Tracked is the store's tracked sessions.
func (s *Store) Tracked() Tracked { return Tracked{s} }

// SetAgent records which agent session runs; Agent reads it ("" unknown).
// Both count as the session's activity for the MaxTrackedSessions bound.
// A session id or agent name over its cap is not kept: the session's agent
// is then unknown.
func (t Tracked) SetAgent(ctx context.Context, session, agent string) {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	s.db.refresh()
	t.setAgent(session, agent)
}

// setAgent is SetAgent; the caller holds mu.
func (t Tracked) setAgent(session, agent string) {
	s := t.s
	if len(session) > MaxIDBytes || len(agent) > MaxAgentNameBytes {
		if s.cachedAgent(session) != nil {
			s.inWrite(func() error {
				if s.db != nil {
					s.db.untracked = append(s.db.untracked, session)
				}
				s.tracked.untrack(session)
				s.changes++
				return nil
			}, false)
		}
		return
	}
	if sa := s.cachedAgent(session); sa != nil && sa.agent == agent {
		s.tracked.list.Touch(session)
		return
	}
	s.inWrite(func() error {
		if sa := s.cachedAgent(session); sa != nil {
			s.tracked.list.Touch(session)
			if sa.agent != agent {
				s.tracked.change(sa, func(sa *sessionAgent) { sa.agent = keep(agent) })
				s.db.markTracked(sa)
				s.changes++
				s.enforceBudget()
			}
			return nil
		}
		sa := &sessionAgent{session: keep(session), agent: keep(agent), rowSync: rowSync{epoch: s.db.fresh()}}
		s.tracked.track(sa, false)
		s.db.markTracked(sa)
		s.tracked.evict(s.cfg.MaxTrackedSessions)
		s.changes++
		s.enforceBudget()
		return nil
	}, false)
}

// Agent returns the agent session runs ("" unknown).
func (t Tracked) Agent(session string) string {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.refresh()
	sa := s.cachedAgent(session)
	if sa == nil {
		return ""
	}
	s.tracked.list.Touch(session)
	return sa.agent
}

// change runs change on session's tracked state in a write
// transaction when wanted says it would change something; the caller
// holds mu. A session that is not tracked changes nothing.
func (t Tracked) change(session string, wanted func(*sessionAgent) bool, change func(*sessionAgent)) {
	s := t.s
	s.db.refresh()
	sa := s.cachedAgent(session)
	if sa == nil || !wanted(sa) {
		return
	}
	s.inWrite(func() error {
		if sa = s.cachedAgent(session); sa == nil {
			return nil
		}
		s.tracked.change(sa, change)
		s.db.markTracked(sa)
		s.changes++
		s.enforceBudget()
		return nil
	}, false)
}

// SetParent records session's parent session (from session.created), for a
// tracked session. Ids over the cap are not kept.
func (t Tracked) SetParent(ctx context.Context, session, parent string) {
	if len(parent) <= MaxIDBytes {
		t.set(ctx, session, parent, func(sa *sessionAgent) *string { return &sa.parent })
	}
}

// Parent returns session's parent ("" unknown).
func (t Tracked) Parent(session string) string {
	return t.get(session, func(sa *sessionAgent) string { return sa.parent })
}

// SetRunning records the model session's requests go to now (its latest
// chat.message, after any change the sidecar made).
func (t Tracked) SetRunning(ctx context.Context, session, model string) {
	if len(model) <= MaxModelBytes {
		t.set(ctx, session, model, func(sa *sessionAgent) *string { return &sa.running })
	}
}

// Running returns the model session's requests go to ("" unknown).
func (t Tracked) Running(session string) string {
	return t.get(session, func(sa *sessionAgent) string { return sa.running })
}

// set sets the string field of session's tracked state to value, when it
// is tracked and the field holds another.
func (t Tracked) set(ctx context.Context, session, value string, field func(*sessionAgent) *string) {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	t.setField(session, value, field)
}

// setField is set; the caller holds mu.
func (t Tracked) setField(session, value string, field func(*sessionAgent) *string) {
	t.change(session, func(sa *sessionAgent) bool { return *field(sa) != value },
		func(sa *sessionAgent) { *field(sa) = keep(value) })
}

// get reads a string field of session's tracked state ("" when it is not
// tracked).
func (t Tracked) get(session string, field func(*sessionAgent) string) string {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.refresh()
	return t.field(session, field)
}

// field is get; the caller holds mu.
func (t Tracked) field(session string, field func(*sessionAgent) string) string {
	if sa := t.s.cachedAgent(session); sa != nil {
		return field(sa)
	}
	return ""
}

// AddSwitch records sw for a tracked session, keeping the newest
// MaxSwitchesPerSession; the reason is cut to MaxReasonBytes. A switch the
// same as the latest (from, to and attempt) replaces it: one failure
// answered twice is one switch.
func (t Tracked) AddSwitch(ctx context.Context, session string, sw Switch) {
	t.putSwitch(ctx, session, sw, false)
}

// ReplaceSwitch records sw in place of session's latest switch (a switch
// asked again because the first did not apply, or the latest one seen
// applied: PROTOCOL.md 4.8), or as its first when it has none.
func (t Tracked) ReplaceSwitch(ctx context.Context, session string, sw Switch) {
	t.putSwitch(ctx, session, sw, true)
}

func (t Tracked) putSwitch(ctx context.Context, session string, sw Switch, replace bool) {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	t.putSwitchIn(session, sw, replace)
}

// putSwitchIn is putSwitch; the caller holds mu.
func (t Tracked) putSwitchIn(session string, sw Switch, replace bool) {
	if !sw.fits() {
		return
	}
	sw = sw.kept()
	t.change(session, func(sa *sessionAgent) bool {
		return !replace || len(sa.switches) == 0 || sa.switches[len(sa.switches)-1] != sw
	}, func(sa *sessionAgent) {
		list := append([]Switch(nil), sa.switches...)
		// The same switch added again (two processes answering one failure
		// at once: read in this write transaction) is one record.
		if replace && len(list) > 0 || len(list) > 0 && list[len(list)-1].sameAs(sw) {
			list[len(list)-1] = sw
		} else {
			list = append(list, sw)
		}
		if len(list) > MaxSwitchesPerSession {
			list = list[len(list)-MaxSwitchesPerSession:]
		}
		sa.switches = list
	})
}

// Switches returns session's switches, oldest first.
func (t Tracked) Switches(session string) []Switch {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.refresh()
	return t.switchesOf(session)
}

// switchesOf is Switches; the caller holds mu.
func (t Tracked) switchesOf(session string) []Switch {
	s := t.s
	sa := s.cachedAgent(session)
	if sa == nil || len(sa.switches) == 0 {
		return nil
	}
	return append([]Switch(nil), sa.switches...)
}

// SetModelDecision records d as session's latest model decision. The
// decision lives with the session's agent (SetAgent): a session whose agent
// is not tracked keeps none, and a decision over the string caps is not
// kept (the session's earlier one is dropped too, so none that is out of
// date is shown).
func (t Tracked) SetModelDecision(ctx context.Context, session string, d ModelDecision) {
	s := t.s
	s.lock(ctx)
	defer s.unlock()
	t.setModelDecision(session, d)
}

// setModelDecision is SetModelDecision; the caller holds mu.
func (t Tracked) setModelDecision(session string, d ModelDecision) {
	var next *ModelDecision
	if d.fits() {
		next = &ModelDecision{Model: keep(d.Model), Variant: keep(d.Variant), Rung: keep(d.Rung), Changed: d.Changed}
	}
	t.change(session, func(sa *sessionAgent) bool {
		return (sa.model == nil) != (next == nil) || sa.model != nil && *sa.model != *next
	}, func(sa *sessionAgent) { sa.model = next })
}

// ModelDecision returns session's latest model decision, if one is kept.
func (t Tracked) ModelDecision(session string) (ModelDecision, bool) {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.db.refresh()
	return t.modelDecision(session)
}

// modelDecision is ModelDecision; the caller holds mu.
func (t Tracked) modelDecision(session string) (ModelDecision, bool) {
	s := t.s
	sa := s.cachedAgent(session)
	if sa == nil || sa.model == nil {
		return ModelDecision{}, false
	}
	return *sa.model, true
}

// entryModel is the decision sessions.list shows with an entry: that of
// its task session. The caller holds mu.
func (t Tracked) entryModel(taskID string) *ModelDecision {
	if d, ok := t.modelDecision(taskID); ok {
		return &d
	}
	return nil
}
