package sessions

import "context"

// The tracked sessions: which agent each session runs (and, model.go, the
// model it was given), the most recently active first.

type sessionAgent struct {
	session, agent string
	model          *ModelDecision // the latest chat.message's (model.go); nil: none

	// With a database, as parentState's (backing.go).
	rev                      int64
	epoch                    uint64
	dirty, pinned, unwritten bool

	// parent, running and switches: health.go.
	parent, running string
	switches        []Switch
}

// SetAgent records which agent session runs; Agent reads it ("" unknown).
// Both count as the session's activity for the MaxTrackedSessions bound.
// A session id or agent name over its cap is not kept: the session's agent
// is then unknown.
func (s *Store) SetAgent(ctx context.Context, session, agent string) {
	s.lock(ctx)
	defer s.unlock()
	s.refresh()
	if len(session) > MaxIDBytes || len(agent) > MaxAgentNameBytes {
		if s.cachedAgent(session) != nil {
			s.begin()
			if s.db != nil {
				s.db.untracked = append(s.db.untracked, session)
			}
			s.untrack(session)
			s.changed()
		}
		return
	}
	if sa := s.cachedAgent(session); sa != nil && sa.agent == agent {
		s.agents.Touch(session)
		return
	}
	s.begin()
	if sa := s.cachedAgent(session); sa != nil {
		s.agents.Touch(session)
		if sa.agent != agent {
			before := trackedCost(sa)
			sa.agent = keep(agent)
			s.trackedBytes += trackedCost(sa) - before
			s.markTracked(sa)
			s.changed()
			s.enforceBudget()
		}
		return
	}
	sa := &sessionAgent{session: keep(session), agent: keep(agent), epoch: s.fresh()}
	s.track(sa, false)
	s.markTracked(sa)
	s.evictTracked()
	s.changed()
	s.enforceBudget()
}

// evictTracked forgets the least recently active sessions beyond
// MaxTrackedSessions.
func (s *Store) evictTracked() {
	for s.agents.Len() > s.cfg.MaxTrackedSessions {
		oldest, _, _ := s.agents.Back()
		s.untrack(oldest)
	}
}

// track adds sa, not yet tracked, as the most (or, oldest, the least)
// recently active session.
func (s *Store) track(sa *sessionAgent, oldest bool) {
	if oldest {
		s.agents.PushBack(sa.session, sa)
	} else {
		s.agents.PushFront(sa.session, sa)
	}
	s.trackedBytes += trackedCost(sa)
}

// untrack forgets session's agent.
func (s *Store) untrack(session string) {
	if sa, ok := s.agents.Remove(session); ok {
		s.trackedBytes -= trackedCost(sa)
	}
}

func (s *Store) Agent(session string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	sa := s.cachedAgent(session)
	if sa == nil {
		return ""
	}
	s.agents.Touch(session)
	return sa.agent
}
