package sessions

import (
	"encoding/json"
	"strconv"
)

// The store's reads from its Backend (persistence.go says how the cache and
// the database agree): a cached parent or tracked session checked against
// its row's revision, or read through when the cache lacks it.

// cached returns parent id from the cache, checked against the database
// when another process committed since it was last checked, or read
// through from the database; nil when it is kept nowhere. The caller holds
// mu.
func (s *Store) cached(id string) *parentState {
	p, ok := s.parents.list.Get(id)
	d := s.db
	if d == nil || ok && p.current(d.epoch) {
		return p
	}
	rev, found, err := d.b.Parents.Rev(d.ctx, id)
	switch {
	case err != nil:
		d.fail(err)
		return p
	case !found:
		if ok {
			s.parents.drop(p) // forgotten by another process
		}
		return nil
	case ok && p.rev == rev:
		p.epoch = d.epoch
		return p
	}
	if ok {
		s.parents.drop(p)
	}
	// Read through: the row becomes the cache's most recently active
	// parent; the cache's bounds then apply.
	p, top, err := d.readParent(&s.parents, id, rev, s.cfg.MaxSessionsPerAgent)
	if err != nil {
		d.fail(err)
		return nil
	}
	s.clock = max(s.clock, top)
	s.parents.evict(s.cfg.MaxParents)
	return p
}

// readParent reads parent id's row, at revision rev, into b as its most
// recently active parent, checked as of this epoch (what it loads is not
// marked changed); it returns the highest tick of the entries kept.
func (d *persistence) readParent(b *parentSet, id string, rev int64, maxPerAgent int) (*parentState, uint64, error) {
	rec, err := d.b.Parents.Read(d.ctx, id)
	if err != nil {
		return nil, 0, err
	}
	rec.ID = id
	d.loading = true
	p, top, err := b.loadRecord(rec, maxPerAgent)
	d.loading = false
	if err != nil {
		return nil, 0, err
	}
	p.rev, p.epoch = rev, d.epoch
	return p, top, nil
}

// loadRecord loads a parent's row as the set's most recently active
// parent (checked as a state file's would be: a damaged row is an error
// and loads nothing); it returns the highest tick of the entries kept.
func (b *parentSet) loadRecord(rec ParentRecord, maxPerAgent int) (*parentState, uint64, error) {
	p, top, err := b.load(recordParent(rec), maxPerAgent, false)
	if err != nil {
		b.drop(p)
		return nil, 0, err
	}
	b.list.Touch(p.id)
	return p, top, nil
}

// recordParent is rec in the state file's form, which the parent set
// loads (checking it as it would a file's).
func recordParent(rec ParentRecord) *snapshotParent {
	id := rec.ID
	sp := snapshotParent{ID: id, Counters: make(map[string]json.RawMessage, len(rec.Counters))}
	for _, e := range rec.Entries {
		se := snapshotEntry{Agent: e.Agent, Alias: e.Alias, TaskID: e.TaskID, Label: e.Label, LastUse: e.LastUse, Use: uint64(max(e.Tick, 0))}
		if run := e.Run; run.State != RunCompleted || run.Error != "" {
			se.Run = &snapshotRun{State: run.State, Error: run.Error}
		}
		sp.Entries = append(sp.Entries, se)
	}
	for prefix, n := range rec.Counters {
		sp.Counters[prefix] = json.RawMessage(strconv.FormatInt(n, 10))
	}
	for _, f := range rec.Frozen {
		sp.Frozen = append(sp.Frozen, snapshotFrozen{MessageID: f.MessageID, Block: f.Block})
	}
	return &sp
}

// cachedAgent is cached for a tracked session; the caller holds mu.
func (s *Store) cachedAgent(session string) *sessionAgent {
	sa, ok := s.tracked.list.Get(session)
	d := s.db
	if d == nil || ok && sa.current(d.epoch) {
		return sa
	}
	t, found, err := d.b.Tracked.Read(d.ctx, session)
	switch {
	case err != nil:
		d.fail(err)
		return sa
	case !found:
		if ok {
			s.tracked.untrack(session)
		}
		return nil
	case ok && sa.rev == t.Rev:
		sa.epoch = d.epoch
		return sa
	}
	if ok {
		s.tracked.untrack(session)
	}
	if len(session) > MaxIDBytes || len(t.Agent) > MaxAgentNameBytes {
		return nil
	}
	t = t.Bounded()
	sa = &sessionAgent{session: session, agent: t.Agent, rowSync: rowSync{rev: t.Rev, epoch: d.epoch},
		model: t.Model, parent: t.Parent, running: t.Running, switches: t.Switches}
	s.tracked.track(sa, false)
	s.tracked.evict(s.cfg.MaxTrackedSessions)
	return sa
}
