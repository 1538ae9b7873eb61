package sessions

import "github.com/hookwire/hookwire/internal/lru"

// The tracked sessions: which agent each session runs, the model it was
// given (model.go), its parent, the model it runs on and its switches
// (tracking.go), the most recently active first. Tracked holds the store's
// methods for them.

type sessionAgent struct {
	session, agent string
	model          *ModelDecision // the latest chat.message's (model.go); nil: none

	// With a database: how the session stands against its row.
	rowSync

	// parent, running and switches: tracking.go.
	parent, running string
	switches        []Switch
}

// trackedSet is the tracked sessions: pure, no lock and no IO. bytes is
// what they count against the byte budget (trackedCost).
type trackedSet struct {
	list  *lru.List[string, *sessionAgent] // by session, most recently active first
	bytes int
}

func newTrackedSet() trackedSet {
	return trackedSet{list: lru.New[string, *sessionAgent]()}
}

// track adds sa, not yet tracked, as the most (or, oldest, the least)
// recently active session.
func (b *trackedSet) track(sa *sessionAgent, oldest bool) {
	if oldest {
		b.list.PushBack(sa.session, sa)
	} else {
		b.list.PushFront(sa.session, sa)
	}
	b.bytes += trackedCost(sa)
}

// untrack forgets session.
func (b *trackedSet) untrack(session string) {
	if sa, ok := b.list.Remove(session); ok {
		b.bytes -= trackedCost(sa)
	}
}

// evict forgets the least recently active sessions beyond max.
func (b *trackedSet) evict(max int) {
	for b.list.Len() > max {
		oldest, _, _ := b.list.Back()
		b.untrack(oldest)
	}
}

// change runs change on sa, a tracked session, keeping its bytes counted.
func (b *trackedSet) change(sa *sessionAgent, change func(*sessionAgent)) {
	before := trackedCost(sa)
	change(sa)
	b.bytes += trackedCost(sa) - before
}
