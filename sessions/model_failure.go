package sessions

import (
	"context"
	"errors"
	"time"

	"github.com/hookwire/hookwire/core"
)

// One failed model call, recorded whole (PROTOCOL.md 4.8, 6): the model's
// health, the session's switch and model decision, and the agent and
// parent the report names are read and written in one write transaction,
// so two processes recording failures at once give the result of one
// after the other (a retry-after is not lost to a plain failure read
// before it was written; one child's failure is one switch), and a
// process killed meanwhile leaves all of them or none.

// ModelRecords is what recording a model failure reads and changes: the
// models' health and the tracked sessions as the database holds them
// while this process alone writes. Its methods are valid only inside the
// function given to RecordModels.
type ModelRecords struct {
	s *Store
	// before: each tracked session's state before the first change (nil:
	// it was not tracked), health the models' health, to put back when
	// the transaction does not commit.
	before map[string]*sessionAgent
	health map[string]*Health
	err    error // the first write that failed
}

// ErrNotRecorded is RecordModels's error when the database could
// not take the failure's records (its write lock not had within the
// timeout, a write or the commit failed): nothing was kept.
var ErrNotRecorded = errors.New("the model failure was not recorded")

// RecordModels runs record with the records of the models and
// sessions as of now, inside one write transaction, and commits what it
// changed: one failed model call (4.8), or a session seen on a model and
// moved off one that cools (4.7). With a database, when the transaction cannot be begun or
// committed, nothing record changed is kept (in the database or in this
// store) and the error wraps ErrNotRecorded and says why (status shows it
// too); record is then not run, or its changes are undone. In memory, or
// on a database open read-only, record's changes are kept in memory.
func (s *Store) RecordModels(ctx context.Context, record func(*ModelRecords)) error {
	s.lock(ctx)
	defer s.unlock()
	r := &ModelRecords{s: s, before: map[string]*sessionAgent{}, health: map[string]*Health{}}
	err := s.inWrite(func() error {
		record(r)
		return r.err
	}, true)
	if err != nil {
		r.undo()
		return errors.Join(ErrNotRecorded, err)
	}
	return nil
}

// undo puts back what record changed in the store's state (the database
// rolled back).
func (r *ModelRecords) undo() {
	s := r.s
	for session, was := range r.before {
		if was == nil {
			s.tracked.untrack(session)
			continue
		}
		sa, ok := s.tracked.list.Get(session)
		if !ok {
			continue
		}
		s.tracked.change(sa, func(sa *sessionAgent) { *sa = *was })
	}
	for model, was := range r.health {
		if was == nil {
			delete(s.health, model)
		} else {
			s.health.put(*was)
		}
	}
}

// touch notes session's state before its first change.
func (r *ModelRecords) touch(session string) {
	if _, ok := r.before[session]; ok {
		return
	}
	if sa := r.s.cachedAgent(session); sa != nil {
		was := *sa
		was.switches = append([]Switch(nil), sa.switches...)
		r.before[session] = &was
	} else {
		r.before[session] = nil
	}
}

// Health is model's health, if any is kept.
func (r *ModelRecords) Health(model string) (core.ModelHealth, bool) {
	return r.s.ProviderHealth().of(model)
}

// Cooling reports whether model cools down at now.
func (r *ModelRecords) Cooling(model string, now time.Time) bool {
	h, ok := r.Health(model)
	return ok && h.Cooling(now)
}

// SetHealth keeps h as model's health (as ProviderHealth.Set).
func (r *ModelRecords) SetHealth(model string, h core.ModelHealth) {
	if model == "" || len(model) > MaxModelBytes {
		return
	}
	if _, ok := r.health[model]; !ok {
		if was, kept := r.s.health.get(model); kept {
			r.health[model] = &was
		} else {
			r.health[model] = nil
		}
	}
	if err := r.s.ProviderHealth().set(model, h); err != nil && r.err == nil {
		r.err = err
	}
}

// Agent, Parent, Running and Switches read session's tracked state ("" or
// none when it is not tracked).
func (r *ModelRecords) Agent(session string) string {
	return r.s.Tracked().field(session, func(sa *sessionAgent) string { return sa.agent })
}

func (r *ModelRecords) Parent(session string) string {
	return r.s.Tracked().field(session, func(sa *sessionAgent) string { return sa.parent })
}

func (r *ModelRecords) Running(session string) string {
	return r.s.Tracked().field(session, func(sa *sessionAgent) string { return sa.running })
}

func (r *ModelRecords) Switches(session string) []Switch {
	return r.s.Tracked().switchesOf(session)
}

// SetAgent, SetParent, SetRunning, AddSwitch, ReplaceSwitch and
// SetModelDecision change session's
// tracked state as Tracked's methods of the same names do.
func (r *ModelRecords) SetAgent(session, agent string) {
	r.touch(session)
	r.s.Tracked().setAgent(session, agent)
}

func (r *ModelRecords) SetParent(session, parent string) {
	if len(parent) > MaxIDBytes {
		return
	}
	r.touch(session)
	r.s.Tracked().setField(session, parent, func(sa *sessionAgent) *string { return &sa.parent })
}

func (r *ModelRecords) AddSwitch(session string, sw Switch) {
	r.touch(session)
	r.s.Tracked().putSwitchIn(session, sw, false)
}

func (r *ModelRecords) ReplaceSwitch(session string, sw Switch) {
	r.touch(session)
	r.s.Tracked().putSwitchIn(session, sw, true)
}

func (r *ModelRecords) SetRunning(session, model string) {
	if len(model) > MaxModelBytes {
		return
	}
	r.touch(session)
	r.s.Tracked().setField(session, model, func(sa *sessionAgent) *string { return &sa.running })
}

func (r *ModelRecords) SetModelDecision(session string, d ModelDecision) {
	r.touch(session)
	r.s.Tracked().setModelDecision(session, d)
}
