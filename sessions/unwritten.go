package sessions

import (
	"context"
	"sort"

	"github.com/hookwire/hookwire/core"
)

// What this process acknowledged but could not write yet, and how the
// next transaction takes it in (PROTOCOL.md 6).

// takeUnwritten makes what this process acknowledged while no write could
// be made part of the transaction just begun: a parent or session whose
// row is as this process last saw it (or, new, still missing) is written
// whole; one another process changed or forgot meanwhile is dropped from
// the cache, read again at its next use, so a stale copy never overwrites
// another process's change.
func (s *Store) takeUnwritten() error {
	d := s.db
	for _, p := range d.unwrittenParents {
		if cur, ok := s.parents.list.Get(p.id); !ok || cur != p || !p.unwritten {
			continue
		}
		p.unwritten = false
		rev, ok, err := d.b.Parents.Rev(d.ctx, p.id)
		switch {
		case err == nil && !ok && p.rev == 0, err == nil && ok && rev == p.rev:
			p.dirty = true
			d.dirtyParents = append(d.dirtyParents, p)
		case err != nil:
			p.unwritten = true
			return err
		default:
			// Another process changed the parent meanwhile: its version
			// stands. The entries this process made and could not write
			// were never shown to the model by alias (entry.provisional),
			// so each is remembered again in that version, under the
			// alias it has free (issue 39 item 7: the alias was shown
			// and then given by the other process to its own child).
			mine := d.provisionalOf(p, s.parents.holds)
			p.epoch, p.newFrozen, p.goneFrozen = 0, nil, nil
			s.parents.drop(p)
			for _, e := range mine {
				pc := &pendingCall{parent: p.id, agent: e.agent.name, prefix: core.AliasPrefix(e.agent.name, s.cfg.AliasOverrides), label: e.label}
				if ne := s.Tasks().remember(pc, e.taskID); ne != nil && ne.run != e.run {
					s.parents.setRun(ne, e.run)
				}
			}
		}
	}
	d.unwrittenParents = d.unwrittenParents[:0]
	for _, sa := range d.unwrittenTracked {
		if cur, ok := s.tracked.list.Get(sa.session); !ok || cur != sa || !sa.unwritten {
			continue
		}
		sa.unwritten = false
		t, ok, err := d.b.Tracked.Read(d.ctx, sa.session)
		switch {
		case err == nil && !ok && sa.rev == 0, err == nil && ok && t.Rev == sa.rev:
			sa.dirty = true
			d.dirtyTracked = append(d.dirtyTracked, sa)
		case err != nil:
			sa.unwritten = true
			return err
		default:
			sa.epoch = 0
			s.tracked.untrack(sa.session)
		}
	}
	d.unwrittenTracked = d.unwrittenTracked[:0]
	return nil
}

// provisionalOf lists p's provisional entries, oldest use first (so that
// remembered again they keep their order).
func (d *persistence) provisionalOf(p *parentState, holds func(*entry) bool) []*entry {
	var out []*entry
	for _, e := range d.provisional {
		if e.parent == p && holds(e) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tick < out[j].tick })
	return out
}

// settleProvisional ends the provisional state of the entries now
// written, and forgets the ones no longer held; the caller holds mu.
func (d *persistence) settleProvisional(holds func(*entry) bool) {
	keep := d.provisional[:0]
	for _, e := range d.provisional {
		if !holds(e) {
			continue
		}
		if e.parent.unwritten || e.parent.dirty {
			keep = append(keep, e)
			continue
		}
		e.provisional = false
	}
	clear(d.provisional[len(keep):])
	d.provisional = keep
}

// WriteUnwritten tries once more to write what this process acknowledged
// but could not write (before the store leaves its database).
func (s *Store) WriteUnwritten(ctx context.Context) {
	s.lock(ctx)
	defer s.unlock()
	d := s.db
	if d == nil || d.readOnly || len(d.unwrittenParents)+len(d.unwrittenTracked) == 0 {
		return
	}
	s.inWrite(noChange, false)
}

// rollback is the cache's side of a transaction that did not commit (the
// Backend rolled it back). What the method changed stays in the cache, unwritten, and is checked against the database (its revision) at
// the next use after another process commits: kept while nobody else
// changed that parent or session, read again otherwise, so a later write
// never overwrites another process's change with a stale parent.
func (d *persistence) rollback() {
	for _, p := range d.dirtyParents {
		p.dirty = false
		d.unwrite(p)
	}
	for _, sa := range d.dirtyTracked {
		sa.dirty = false
		d.unwriteTracked(sa)
	}
	d.dirtyParents, d.dirtyTracked, d.deleted, d.untracked = d.dirtyParents[:0], d.dirtyTracked[:0], nil, nil
}

// unwrite keeps p, changed but not written, for the next transaction
// (takeUnwritten); its new frozen blocks stay listed for it.
func (d *persistence) unwrite(p *parentState) { unwriteRow(p, &d.unwrittenParents) }

func (d *persistence) unwriteTracked(sa *sessionAgent) { unwriteRow(sa, &d.unwrittenTracked) }
