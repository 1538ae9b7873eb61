package sessions

// What the persistence package (sessiondb) needs of the store beyond its
// Backend: the store's bounds, a store's contents whole, and a Config that
// drops nothing. (RestoreFrom, CacheRowCost, SortHealth and PruneBatch are
// exported where they are defined.)

// Config is the configuration s was made with (its bounds, its clock).
func (s *Store) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Adopt makes s hold what n holds (n is the caller's alone and is not used
// after): the swap by which a store built aside becomes the one served (a
// restored document; the in-memory store a JSON state file was read into,
// served in place of the database).
func (s *Store) Adopt(n *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = n.clock
	mark := s.parents.mark // n's marks for n
	s.calls, s.parents, s.tracked, s.health = n.calls, n.parents, n.tracked, n.health
	s.parents.mark = mark
	s.cache.sessions = n.cache.sessions
	s.changes++
}

// Contents is what a memory-only store holds, whole.
type Contents struct {
	Parents         int // parent sessions, with or without entries
	FrozenBlocks    int
	TrackedSessions int
	// ParentIDs are the parents, the most recently active first.
	ParentIDs []string
	Health    []Health
}

// Contents counts what s holds and lists its parents and models' health.
func (s *Store) Contents() Contents {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Contents{Parents: s.parents.list.Len(), FrozenBlocks: s.parents.frozen, TrackedSessions: s.tracked.list.Len(), Health: s.health.list()}
	out.ParentIDs = make([]string, 0, s.parents.list.Len())
	for id := range s.parents.list.All() {
		out.ParentIDs = append(out.ParentIDs, id)
	}
	return out
}

// UnboundedConfig is a Config that drops nothing (Unbounded's).
func UnboundedConfig() Config { return unbounded }

// SetBounds lowers or raises s's MaxParents and MaxTrackedSessions; what is
// over the new bounds is forgotten by the next prune (PruneStep).
func (s *Store) SetBounds(maxParents, maxTrackedSessions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.MaxParents, s.cfg.MaxTrackedSessions = maxParents, maxTrackedSessions
}
