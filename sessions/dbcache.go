package sessions

import (
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// The store's reads from the database (dbstore.go says how the cache and
// the database agree): a cached parent or tracked session checked against
// its row's revision, or read through when the cache lacks it.

// cached returns parent id from the cache, checked against the database
// when another process committed since it was last checked, or read
// through from the database; nil when it is kept nowhere. The caller holds
// mu.
func (s *Store) cached(id string) *parentState {
	p, ok := s.parents.Get(id)
	d := s.db
	if d == nil || ok && (p.epoch == d.epoch || p.dirty || p.pinned || p.unwritten) {
		return p
	}
	var rev int64
	err := d.c.queryRow(d.ctx, "SELECT rev FROM parents WHERE id=?", id).Scan(&rev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if ok {
			s.dropParent(p) // forgotten by another process
		}
		return nil
	case err != nil:
		d.fail(classify(err))
		return p
	case ok && p.rev == rev:
		p.epoch = d.epoch
		return p
	}
	if ok {
		s.dropParent(p)
	}
	p, err = s.readParent(id, rev)
	if err != nil {
		d.fail(classify(err))
		return nil
	}
	return p
}

// readParent reads parent id, at revision rev, into the cache as its most
// recently active parent; the cache's bounds then apply.
func (s *Store) readParent(id string, rev int64) (*parentState, error) {
	d := s.db
	sp := snapshotParent{ID: id, Counters: map[string]json.RawMessage{}}
	rows, err := d.c.query(d.ctx, "SELECT alias, agent, task_id, label, last_use, tick, run_state, run_error FROM entries WHERE pid=(SELECT pid FROM parents WHERE id=?) ORDER BY tick DESC", id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var se snapshotEntry
		var lastUse, tick int64
		var run snapshotRun
		if err := rows.Scan(&se.Alias, &se.Agent, &se.TaskID, &se.Label, &lastUse, &tick, &run.State, &run.Error); err != nil {
			rows.Close()
			return nil, err
		}
		se.LastUse, se.Use = time.Unix(0, lastUse).UTC(), uint64(max(tick, 0))
		if run.State != RunCompleted || run.Error != "" {
			se.Run = &run
		}
		sp.Entries = append(sp.Entries, se)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = d.c.query(d.ctx, "SELECT prefix, n FROM counters WHERE pid=(SELECT pid FROM parents WHERE id=?)", id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var prefix string
		var n int64
		if err := rows.Scan(&prefix, &n); err != nil {
			rows.Close()
			return nil, err
		}
		sp.Counters[prefix] = json.RawMessage(itoa(n))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = d.c.query(d.ctx, "SELECT message_id, block FROM frozen WHERE pid=(SELECT pid FROM parents WHERE id=?) ORDER BY seq DESC", id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var f snapshotFrozen
		if err := rows.Scan(&f.MessageID, &f.Block); err != nil {
			rows.Close()
			return nil, err
		}
		sp.Frozen = append(sp.Frozen, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}

	d.loading = true
	defer func() { d.loading = false }()
	p, err := s.loadParent(&sp)
	if err != nil {
		s.dropParent(p)
		return nil, err
	}
	p.rev, p.epoch = rev, d.epoch
	s.parents.Touch(id)
	s.evictParents()
	return p, nil
}

// cachedAgent is cached for a tracked session; the caller holds mu.
func (s *Store) cachedAgent(session string) *sessionAgent {
	sa, ok := s.agents.Get(session)
	d := s.db
	if d == nil || ok && (sa.epoch == d.epoch || sa.dirty || sa.pinned || sa.unwritten) {
		return sa
	}
	var agent string
	var model sql.NullString
	var rev int64
	err := d.c.queryRow(d.ctx, "SELECT agent, model, rev FROM tracked WHERE session=?", session).Scan(&agent, &model, &rev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if ok {
			s.untrack(session)
		}
		return nil
	case err != nil:
		d.fail(classify(err))
		return sa
	case ok && sa.rev == rev:
		sa.epoch = d.epoch
		return sa
	}
	if ok {
		s.untrack(session)
	}
	if len(session) > MaxIDBytes || len(agent) > MaxAgentNameBytes {
		return nil
	}
	sa = &sessionAgent{session: session, agent: agent, rev: rev, epoch: d.epoch}
	if model.Valid {
		restoreTrackedColumn(sa, model.String) // health.go
	}
	s.track(sa, false)
	s.evictTracked()
	return sa
}
