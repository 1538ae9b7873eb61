package sessions

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// snapshotVersion is the format version Snapshot writes and Restore reads.
const snapshotVersion = 1

// snapshotDoc is the persisted form of a store (PROTOCOL.md 6). Lists are
// ordered most recent first, so a restored store evicts in the same order.
type snapshotDoc struct {
	Version       int              `json:"version"`
	Clock         uint64           `json:"clock"`
	Parents       []snapshotParent `json:"parents"`
	SessionAgents []snapshotAgent  `json:"sessionAgents"`
}

type snapshotParent struct {
	ID       string           `json:"id"`
	Counters map[string]int   `json:"counters,omitempty"`
	Entries  []snapshotEntry  `json:"entries,omitempty"`
	Frozen   []snapshotFrozen `json:"frozen,omitempty"`
}

type snapshotEntry struct {
	Agent   string    `json:"agent"`
	Alias   string    `json:"alias"`
	TaskID  string    `json:"taskId"`
	Label   string    `json:"label"`
	LastUse time.Time `json:"lastUse"`
	Use     uint64    `json:"use"` // the logical clock's tick of the last use
}

type snapshotFrozen struct {
	MessageID string `json:"messageId"`
	Block     string `json:"block"`
}

type snapshotAgent struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
}

// Snapshot returns the store's state as a JSON document with a format
// version: parents with their entries, alias counters and frozen blocks,
// and the sessions' agents. Pending calls are not saved: their
// tool.execute.after will not reach a restarted process. The same state
// always gives the same bytes.
func (s *Store) Snapshot() ([]byte, error) {
	data, _, err := s.snapshot()
	return data, err
}

// snapshot also returns Changes as of the snapshot, so a writer knows
// exactly which state it wrote.
func (s *Store) snapshot() ([]byte, uint64, error) {
	s.mu.Lock()
	doc := snapshotDoc{Version: snapshotVersion, Clock: s.clock, Parents: []snapshotParent{}, SessionAgents: []snapshotAgent{}}
	for el := s.parentLRU.Front(); el != nil; el = el.Next() {
		p := el.Value.(*parentState)
		sp := snapshotParent{ID: p.id}
		if len(p.counters) > 0 {
			sp.Counters = make(map[string]int, len(p.counters))
			for k, v := range p.counters {
				sp.Counters[k] = v
			}
		}
		for _, a := range p.agents {
			for el := a.entries.Front(); el != nil; el = el.Next() {
				e := el.Value.(*entry)
				sp.Entries = append(sp.Entries, snapshotEntry{
					Agent: a.name, Alias: e.alias, TaskID: e.taskID,
					Label: e.label, LastUse: e.lastUse, Use: e.tick,
				})
			}
		}
		sort.Slice(sp.Entries, func(i, j int) bool { return sp.Entries[i].Use > sp.Entries[j].Use })
		if p.frozenQ != nil {
			for el := p.frozenQ.Front(); el != nil; el = el.Next() {
				fb := el.Value.(*frozenBlock)
				sp.Frozen = append(sp.Frozen, snapshotFrozen{MessageID: fb.messageID, Block: fb.text})
			}
		}
		doc.Parents = append(doc.Parents, sp)
	}
	for el := s.agentLRU.Front(); el != nil; el = el.Next() {
		sa := el.Value.(*sessionAgent)
		doc.SessionAgents = append(doc.SessionAgents, snapshotAgent{Session: sa.session, Agent: sa.agent})
	}
	changes := s.changes
	s.mu.Unlock()

	data, err := json.Marshal(doc)
	if err != nil {
		return nil, 0, fmt.Errorf("encoding session state: %w", err)
	}
	return data, changes, nil
}

// Restore replaces the store's state with a document Snapshot wrote, and
// forgets the pending calls. Malformed data or a version other than
// snapshotVersion is an error and leaves the store as it was. The store's
// Config bounds apply to what is restored (the most recent part is kept).
func (s *Store) Restore(data []byte) error {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("decoding session state: %w", err)
	}
	if head.Version == nil {
		return errors.New("decoding session state: no format version")
	}
	if *head.Version != snapshotVersion {
		return fmt.Errorf("decoding session state: unknown format version %d (this build reads %d)", *head.Version, snapshotVersion)
	}
	var doc snapshotDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("decoding session state: %w", err)
	}

	// Build into a scratch store, then swap: a bad document changes nothing.
	s.mu.Lock()
	cfg, now := s.cfg, s.now
	s.mu.Unlock()
	n := New(cfg)
	n.now = now
	if err := n.load(&doc); err != nil {
		return fmt.Errorf("decoding session state: %w", err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = n.clock
	s.pending, s.pendingLRU = n.pending, n.pendingLRU
	s.parents, s.parentLRU = n.parents, n.parentLRU
	s.byTaskID = n.byTaskID
	s.agents, s.agentLRU = n.agents, n.agentLRU
	s.entryCount, s.frozenCount = n.entryCount, n.frozenCount
	s.changed()
	return nil
}

// load fills the empty store s, owned by the caller alone, from doc.
func (s *Store) load(doc *snapshotDoc) error {
	s.clock = doc.Clock
	for i := range doc.Parents {
		if s.parentLRU.Len() >= s.cfg.MaxParents {
			break
		}
		sp := &doc.Parents[i]
		if _, dup := s.parents[sp.ID]; dup {
			return fmt.Errorf("parent %q listed twice", sp.ID)
		}
		p := &parentState{id: sp.ID, counters: make(map[string]int), agents: make(map[string]*agentState)}
		p.elem = s.parentLRU.PushBack(p)
		s.parents[sp.ID] = p
		for prefix, n := range sp.Counters {
			if prefix == "" || n < 0 {
				return fmt.Errorf("parent %q: bad alias counter %q: %d", sp.ID, prefix, n)
			}
			p.counters[prefix] = n
		}
		if err := s.loadEntries(p, sp.Entries); err != nil {
			return fmt.Errorf("parent %q: %w", sp.ID, err)
		}
		// Oldest first, up to the bound, as FrozenBlock would have kept them.
		for j := len(sp.Frozen) - 1; j >= 0; j-- {
			if p.frozenQ != nil && p.frozenQ.Len() >= MaxFrozenBlocksPerSession {
				break
			}
			fb := sp.Frozen[j]
			if p.frozen != nil && p.frozen[fb.MessageID] != nil {
				return fmt.Errorf("parent %q: frozen block for message %q listed twice", sp.ID, fb.MessageID)
			}
			s.freeze(p, fb.MessageID, fb.Block)
		}
	}
	for i := len(doc.SessionAgents) - 1; i >= 0; i-- {
		sa := doc.SessionAgents[i]
		if s.agents[sa.Session] != nil {
			return fmt.Errorf("session %q's agent listed twice", sa.Session)
		}
		s.agents[sa.Session] = s.agentLRU.PushFront(&sessionAgent{session: sa.Session, agent: sa.Agent})
	}
	for s.agentLRU.Len() > s.cfg.MaxTrackedSessions {
		sa := s.agentLRU.Remove(s.agentLRU.Back()).(*sessionAgent)
		delete(s.agents, sa.session)
	}
	return nil
}

func (s *Store) loadEntries(p *parentState, entries []snapshotEntry) error {
	sorted := make([]snapshotEntry, len(entries))
	copy(sorted, entries)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Use > sorted[j].Use })
	aliases := make(map[string]bool, len(sorted))
	for i, se := range sorted {
		if se.Agent == "" || se.Alias == "" || se.TaskID == "" {
			return fmt.Errorf("entry %d: agent, alias and taskId must not be empty", i)
		}
		if aliases[se.Alias] {
			return fmt.Errorf("alias %q listed twice", se.Alias)
		}
		aliases[se.Alias] = true
		// An alias is never handed out twice, even if the counter saved
		// with it is behind.
		if prefix, n, ok := splitAlias(se.Alias); ok && p.counters[prefix] < n {
			p.counters[prefix] = n
		}
		if se.Use > s.clock {
			s.clock = se.Use
		}
		a := p.agents[se.Agent]
		if a == nil {
			a = &agentState{name: se.Agent, entries: list.New(), byAlias: make(map[string]*entry), byTask: make(map[string]*entry)}
			p.agents[se.Agent] = a
		}
		if a.byTask[se.TaskID] != nil {
			return fmt.Errorf("agent %q: task %q listed twice", se.Agent, se.TaskID)
		}
		if a.entries.Len() >= s.cfg.MaxSessionsPerAgent {
			continue
		}
		e := &entry{parent: p, agent: a, alias: se.Alias, taskID: se.TaskID, label: se.Label, lastUse: se.LastUse, tick: se.Use}
		s.link(e) // sorted newest first: PushBack keeps the order
	}
	s.trimAgents(p)
	return nil
}

// splitAlias splits "<prefix>-<n>"; the prefix may itself contain '-'.
func splitAlias(alias string) (string, int, bool) {
	i := strings.LastIndexByte(alias, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(alias[i+1:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	return alias[:i], n, true
}
