package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
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
	Health        []Health         `json:"health,omitempty"`
	Cache         []CacheRecord    `json:"cache,omitempty"` // promptcache_record.go
}

type snapshotParent struct {
	ID       string                     `json:"id"`
	Counters map[string]json.RawMessage `json:"counters,omitempty"` // read loosely: a bad one is repaired
	Entries  []snapshotEntry            `json:"entries,omitempty"`
	Frozen   []snapshotFrozen           `json:"frozen,omitempty"`
}

type snapshotEntry struct {
	Agent   string    `json:"agent"`
	Alias   string    `json:"alias"`
	TaskID  string    `json:"taskId"`
	Label   string    `json:"label"`
	LastUse time.Time `json:"lastUse"`
	Use     uint64    `json:"use"` // the logical clock's tick of the last use
	// Run is the entry's Run, absent when it is a plain completed run (and
	// in files written before runs were kept, whose entries were all
	// remembered completed). A pointer keeps the struct small: a large
	// file's entries are decoded and sorted by the tens of thousands.
	Run *snapshotRun `json:"run,omitempty"`
}

type snapshotRun struct {
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

type snapshotFrozen struct {
	MessageID string `json:"messageId"`
	Block     string `json:"block"`
}

type snapshotAgent struct {
	Session string         `json:"session"`
	Agent   string         `json:"agent"`
	Model   *ModelDecision `json:"model,omitempty"` // absent in files written before model decisions
	// Parent, Running and Switches (health.go): absent in older files.
	Parent   string   `json:"parent,omitempty"`
	Running  string   `json:"running,omitempty"`
	Switches []Switch `json:"switches,omitempty"`
}

// Snapshot returns the store's state as a JSON document with a format
// version: parents with their entries, alias counters and frozen blocks,
// and the sessions' agents. Pending calls are not saved: their
// tool.execute.after will not reach a restarted process. The same state
// always gives the same bytes.
func (s *Store) Snapshot() ([]byte, error) {
	src := s
	s.mu.Lock()
	if s.db != nil {
		all, err := s.db.readAll()
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		src = all
	}
	s.mu.Unlock()
	src.mu.Lock()
	doc := snapshotDoc{Version: snapshotVersion, Clock: src.clock, Parents: src.parents.snapshot(), SessionAgents: src.tracked.snapshot(),
		Health: src.health.list(), Cache: src.cache.records()}
	src.mu.Unlock()
	var buf bytes.Buffer
	if err := doc.encode(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// snapshot is the parents in the state file's form, the most recently
// active first (their strings are shared, not copied).
func (b *parentSet) snapshot() []snapshotParent {
	out := []snapshotParent{}
	for _, p := range b.list.All() {
		sp := snapshotParent{ID: p.id}
		if len(p.counters) > 0 {
			sp.Counters = make(map[string]json.RawMessage, len(p.counters))
			for k, v := range p.counters {
				sp.Counters[k] = json.RawMessage(strconv.Itoa(v))
			}
		}
		for _, a := range p.agents {
			for _, e := range a.entries.All() {
				sp.Entries = append(sp.Entries, snapshotEntry{
					Agent: a.name, Alias: e.alias, TaskID: e.taskID,
					Label: e.label, LastUse: e.lastUse, Use: e.tick,
					Run: saveRun(e.run),
				})
			}
		}
		sort.Slice(sp.Entries, func(i, j int) bool { return sp.Entries[i].Use > sp.Entries[j].Use })
		if p.frozen != nil {
			for _, fb := range p.frozen.All() {
				sp.Frozen = append(sp.Frozen, snapshotFrozen{MessageID: fb.messageID, Block: fb.text})
			}
		}
		out = append(out, sp)
	}
	return out
}

// snapshot is the tracked sessions in the state file's form, the most
// recently active first.
func (b *trackedSet) snapshot() []snapshotAgent {
	out := []snapshotAgent{}
	for _, sa := range b.list.All() {
		out = append(out, snapshotAgent{Session: sa.session, Agent: sa.agent, Model: sa.model,
			Parent: sa.parent, Running: sa.running, Switches: sa.switches})
	}
	return out
}

// encode writes doc as compact JSON, one parent at a time, so that writing
// a state file holds no more than one parent's encoding beyond the store.
// Without HTML escaping the blocks' `<` and `>` take one byte each, as the
// byte budget counts them (jsonLen).
func (doc *snapshotDoc) encode(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(v any) error {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encoding session state: %w", err)
		}
		_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	raw := func(s string) error {
		_, err := io.WriteString(w, s)
		return err
	}
	if err := raw(`{"version":` + strconv.Itoa(doc.Version) + `,"clock":` + strconv.FormatUint(doc.Clock, 10) + `,"parents":[`); err != nil {
		return err
	}
	for i := range doc.Parents {
		if i > 0 {
			if err := raw(","); err != nil {
				return err
			}
		}
		if err := put(&doc.Parents[i]); err != nil {
			return err
		}
	}
	if err := raw(`],"sessionAgents":[`); err != nil {
		return err
	}
	for i := range doc.SessionAgents {
		if i > 0 {
			if err := raw(","); err != nil {
				return err
			}
		}
		if err := put(&doc.SessionAgents[i]); err != nil {
			return err
		}
	}
	if err := raw("]"); err != nil {
		return err
	}
	if len(doc.Health) > 0 {
		if err := raw(`,"health":`); err != nil {
			return err
		}
		if err := put(doc.Health); err != nil {
			return err
		}
	}
	if len(doc.Cache) > 0 {
		if err := raw(`,"cache":[`); err != nil {
			return err
		}
		for i := range doc.Cache {
			if i > 0 {
				if err := raw(","); err != nil {
					return err
				}
			}
			if err := put(&doc.Cache[i]); err != nil {
				return err
			}
		}
		if err := raw("]"); err != nil {
			return err
		}
	}
	return raw("}")
}

// saveRun is r as a state file keeps it: nil for a plain completed run.
func saveRun(r Run) *snapshotRun {
	if runCost(r) == 0 {
		return nil
	}
	return &snapshotRun{State: r.State, Error: r.Error}
}
