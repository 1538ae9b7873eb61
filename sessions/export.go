package sessions

import (
	"context"
	"io"
)

// What the persistence package (sessiondb) needs of the store beyond its
// Backend: the store's bounds, the JSON document read from a reader, a
// store's contents whole, and the costs and order the database's rows
// share with the store.

// Config is the configuration s was made with (its bounds, its clock).
func (s *Store) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// RestoreFrom is Restore reading the document from r; it stops with ctx's
// error when ctx is done, changing nothing.
func (s *Store) RestoreFrom(ctx context.Context, r io.Reader) error {
	return s.restore(ctx, r)
}

// Adopt makes s hold what n holds (n is not used after): the in-memory
// store a JSON state file was read into, served in place of the database.
func (s *Store) Adopt(n *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adopt(n)
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
	out := Contents{Parents: s.parents.Len(), FrozenBlocks: s.frozenCount, TrackedSessions: s.agents.Len(), Health: s.healthList()}
	out.ParentIDs = make([]string, 0, s.parents.Len())
	for id := range s.parents.All() {
		out.ParentIDs = append(out.ParentIDs, id)
	}
	return out
}

// UnboundedConfig is a Config that drops nothing (Unbounded's).
func UnboundedConfig() Config { return unbounded }

// CacheRowCost is what the byte budget counts for a prompt-cache row of
// session holding data bytes of figures.
func CacheRowCost(session string, data int) int { return cacheRowCost(session, data) }

// SortHealth orders out the latest failure first.
func SortHealth(out []Health) { sortHealth(out) }

// PruneBatch is the most parents and tracked sessions (of each) one
// prune transaction forgets.
const PruneBatch = pruneBatch

// SetBounds lowers or raises s's MaxParents and MaxTrackedSessions; what is
// over the new bounds is forgotten by the next prune (PruneStep).
func (s *Store) SetBounds(maxParents, maxTrackedSessions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.MaxParents, s.cfg.MaxTrackedSessions = maxParents, maxTrackedSessions
}
