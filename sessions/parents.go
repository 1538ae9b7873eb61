package sessions

import (
	"time"

	"github.com/hookwire/hookwire/internal/lru"
)

// parentSet is the parent sessions the store holds, the most recently
// active first: under each, the remembered task sessions (entries) with
// their aliases by agent, the alias counters and the frozen blocks; every
// parent's entries indexed by task id. It is pure: no lock and no IO.
// bytes is what the parents count against the byte budget; mark is told
// of each parent whose contents changed (the store writes it, persistence.go).
// The rules that need the database (read-through, which alias is free
// across processes) are Tasks' (aliases.go) and the store's.
type parentSet struct {
	list     *lru.List[string, *parentState]
	byTaskID map[string]map[*entry]struct{}
	entries  int // entries under every parent
	frozen   int // frozen blocks under every parent
	bytes    int
	changes  uint64 // what the tests count (changeCount)
	mark     func(*parentState)
}

func newParentSet(mark func(*parentState)) parentSet {
	return parentSet{list: lru.New[string, *parentState](), byTaskID: make(map[string]map[*entry]struct{}), mark: mark}
}

// holds reports whether e is still an entry of the set.
func (b *parentSet) holds(e *entry) bool {
	p, ok := b.list.Get(e.parent.id)
	if !ok || p != e.parent || p.agents[e.agent.name] != e.agent {
		return false
	}
	cur, ok := e.agent.entries.Get(e.alias)
	return ok && cur == e
}

// lookup finds p's entry for agent by task id, without touching it.
func lookup(p *parentState, agent, taskID string) *entry {
	if p == nil {
		return nil
	}
	a := p.agents[agent]
	if a == nil {
		return nil
	}
	return a.byTask[taskID]
}

// addBytes counts n more (or, negative, fewer) bytes under p.
func (b *parentSet) addBytes(p *parentState, n int) {
	p.bytes += n
	b.bytes += n
	b.mark(p)
}

// evict forgets the least recently active parents beyond
// MaxParents.
func (b *parentSet) evict(max int) {
	for b.list.Len() > max {
		_, oldest, _ := b.list.Back()
		b.drop(oldest)
	}
}

// drop forgets p with its counters, entries and frozen blocks.
func (b *parentSet) drop(p *parentState) {
	for _, a := range p.agents {
		for _, e := range a.entries.All() {
			b.unindex(e)
			b.entries--
		}
	}
	if p.frozen != nil {
		b.frozen -= p.frozen.Len()
	}
	b.bytes -= p.bytes
	b.list.Remove(p.id)
}

// newAgent adds an agent without entries under p.
func (b *parentSet) newAgent(p *parentState, name string) *agentState {
	a := &agentState{
		name:    name,
		entries: lru.New[string, *entry](),
		byTask:  make(map[string]*entry),
	}
	p.agents[name] = a
	b.addBytes(p, agentCost(name))
	return a
}

// link adds e, not yet in any index, to its agent (as its least recently
// used entry) and the task-id index.
func (b *parentSet) link(e *entry) {
	a := e.agent
	a.entries.PushBack(e.alias, e)
	a.byTask[e.taskID] = e
	b.index(e)
	b.entries++
	b.addBytes(e.parent, entryCost(e))
}

// use marks e as the newest use. An entry keeps the label of the call
// that made it (a resume's description says what that call asks, not
// what the session is); label is taken only by an entry without one.
func (b *parentSet) use(e *entry, label string, tick uint64, now time.Time) {
	e.tick = tick
	e.lastUse = now
	if e.label == "" {
		before := entryCost(e)
		e.label = label
		b.addBytes(e.parent, entryCost(e)-before)
	}
	e.agent.entries.Touch(e.alias)
	b.changes++
}

// relabel gives e the label label (kept within MaxLabelBytes), counting
// its bytes; an empty label keeps e's.
func (b *parentSet) relabel(e *entry, label string) {
	if label == "" || e.label == label {
		return
	}
	before := entryCost(e)
	e.label = keep(label)
	b.addBytes(e.parent, entryCost(e)-before)
	b.changes++
}

// setRun records e's run state, counting its bytes.
func (b *parentSet) setRun(e *entry, r Run) {
	if e.run == r {
		return
	}
	r.Error = keep(r.Error)
	before := entryCost(e)
	e.run = r
	b.addBytes(e.parent, entryCost(e)-before)
	b.changes++
}

// retarget makes e hold taskID id instead of its current one.
func (b *parentSet) retarget(e *entry, id string) {
	delete(e.agent.byTask, e.taskID)
	b.unindex(e)
	before := entryCost(e)
	e.taskID = id
	b.addBytes(e.parent, entryCost(e)-before)
	e.agent.byTask[id] = e
	b.index(e)
}

func (b *parentSet) index(e *entry) {
	set := b.byTaskID[e.taskID]
	if set == nil {
		set = make(map[*entry]struct{}, 1)
		b.byTaskID[e.taskID] = set
	}
	set[e] = struct{}{}
}

func (b *parentSet) unindex(e *entry) {
	set := b.byTaskID[e.taskID]
	delete(set, e)
	if len(set) == 0 {
		delete(b.byTaskID, e.taskID)
	}
}

// forget removes e everywhere; an agent left without entries goes too.
func (b *parentSet) forget(e *entry) {
	a := e.agent
	a.entries.Remove(e.alias)
	delete(a.byTask, e.taskID)
	b.unindex(e)
	b.entries--
	b.addBytes(e.parent, -entryCost(e))
	if a.entries.Len() == 0 {
		delete(e.parent.agents, a.name)
		b.addBytes(e.parent, -agentCost(a.name))
	}
}

// trimAgent keeps a's max most recently used entries.
func (b *parentSet) trimAgent(a *agentState, max int) {
	for a.entries.Len() > max {
		_, oldest, _ := a.entries.Back()
		b.forget(oldest)
	}
}

// trimAgents keeps p's MaxAgentsPerParent most recently used agents. It
// scans, but only when a new agent pushed p over the bound.
func (b *parentSet) trimAgents(p *parentState) {
	for len(p.agents) > MaxAgentsPerParent {
		var oldest *agentState
		for _, a := range p.agents {
			if oldest == nil || newestTick(a) < newestTick(oldest) {
				oldest = a
			}
		}
		for _, e := range oldest.entries.All() {
			b.forget(e)
		}
	}
}

// freeze stores a new frozen block under p as its newest; the caller
// checked the bound.
func (b *parentSet) freeze(p *parentState, messageID, text string, written bool) {
	if p.frozen == nil {
		p.frozen = lru.New[string, *frozenBlock]()
	}
	fb := &frozenBlock{messageID: keep(messageID), text: keep(text)}
	p.frozen.PushFront(fb.messageID, fb)
	if written {
		p.newFrozen = append(p.newFrozen, fb.messageID)
	}
	b.frozen++
	b.addBytes(p, frozenCost(fb))
}
