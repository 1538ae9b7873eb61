package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
func (b *parentBook) snapshot() []snapshotParent {
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
func (b *trackedBook) snapshot() []snapshotAgent {
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

// Restore replaces the store's state with a document Snapshot wrote, and
// forgets the pending calls. Malformed data or a version other than
// snapshotVersion is an error and leaves the store as it was. The store's
// Config bounds and string caps apply to what is restored (the most recent
// part is kept), and bad alias counters are repaired.
func (s *Store) Restore(data []byte) error {
	return s.RestoreFrom(context.Background(), bytes.NewReader(data))
}

// RestoreFrom is Restore reading from r (sessiondb's JSON import); it stops with ctx's error when ctx is
// done, changing nothing. It takes time linear in the document's size.
func (s *Store) RestoreFrom(ctx context.Context, r io.Reader) error {
	// Build into a scratch store, then swap: a bad document changes nothing.
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	n := New(cfg)
	if err := n.decode(ctx, r); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("decoding session state: %w", err)
	}

	s.Adopt(n)
	return nil
}

// decode fills the empty store s, owned by the caller alone, from the
// document r holds. It reads the document one parent at a time, so memory
// holds one parent's decoded form beyond what the store keeps; parents
// beyond the bounds are read (to check the syntax) but not decoded.
func (s *Store) decode(ctx context.Context, r io.Reader) error {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	var version *int
	seen := make(map[string]bool, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("member %q listed twice", key)
		}
		seen[key] = true
		switch key {
		case "version":
			if err := dec.Decode(&version); err != nil {
				return err
			}
			if version == nil {
				return errors.New("no format version")
			}
			if *version != snapshotVersion {
				return fmt.Errorf("unknown format version %d (this build reads %d)", *version, snapshotVersion)
			}
		case "clock":
			var clock uint64
			if err := dec.Decode(&clock); err != nil {
				return err
			}
			s.clock = max(s.clock, clock)
		case "parents":
			top, err := s.parents.decode(ctx, dec, s.cfg)
			if err != nil {
				return err
			}
			s.clock = max(s.clock, top)
		case "sessionAgents":
			if err := s.tracked.decode(ctx, dec, s.cfg.MaxTrackedSessions); err != nil {
				return err
			}
		case "health":
			var list []Health
			if err := dec.Decode(&list); err != nil {
				return err
			}
			for _, h := range list {
				if h.Model != "" && len(h.Model) <= MaxModelBytes {
					h.Message = cutText(h.Message, MaxReasonBytes)
					s.health.put(h)
				}
			}
		case "cache":
			var list []CacheRecord
			if err := dec.Decode(&list); err != nil {
				return err
			}
			if err := s.cache.restore(list); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the document")
	}
	if version == nil {
		return errors.New("no format version")
	}
	s.clock = s.parents.renumber(s.clock)
	s.enforceBudget()
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

// decode reads a state file's parents array, most recently active first,
// into the empty book, keeping parents while they fit cfg's MaxParents and
// byte budget; it returns the highest tick of the entries kept.
func (b *parentBook) decode(ctx context.Context, dec *json.Decoder, cfg Config) (uint64, error) {
	if err := expectDelim(dec, '['); err != nil {
		return 0, err
	}
	var clock uint64
	full := false
	ids := make(map[string]bool)
	for dec.More() {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if full {
			var skip struct{}
			if err := dec.Decode(&skip); err != nil {
				return 0, err
			}
			continue
		}
		var sp snapshotParent
		if err := dec.Decode(&sp); err != nil {
			return 0, err
		}
		if ids[sp.ID] {
			return 0, fmt.Errorf("parent %q listed twice", cutBytes(sp.ID, MaxIDBytes))
		}
		ids[sp.ID] = true
		if len(sp.ID) > MaxIDBytes {
			continue
		}
		p, top, err := b.load(&sp, cfg.MaxSessionsPerAgent, false)
		if err != nil {
			return 0, fmt.Errorf("parent %q: %w", sp.ID, err)
		}
		clock = max(clock, top)
		if b.bytes > cfg.MaxStateBytes && b.list.Len() > 1 {
			b.drop(p) // it and all older ones are beyond the budget
			full = true
		}
		if b.list.Len() >= cfg.MaxParents {
			full = true
		}
	}
	return clock, expectDelim(dec, ']')
}

// decode reads a state file's sessions' agents, most recently active
// first, into the empty book, keeping max of them.
func (b *trackedBook) decode(ctx context.Context, dec *json.Decoder, max int) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var sa snapshotAgent
		if err := dec.Decode(&sa); err != nil {
			return err
		}
		if b.list.Len() >= max || len(sa.Session) > MaxIDBytes || len(sa.Agent) > MaxAgentNameBytes {
			continue
		}
		if b.list.Has(sa.Session) {
			return fmt.Errorf("session %q's agent listed twice", sa.Session)
		}
		parent, running := sa.Parent, sa.Running
		if len(parent) > MaxIDBytes {
			parent = ""
		}
		if len(running) > MaxModelBytes {
			running = ""
		}
		b.track(&sessionAgent{session: sa.Session, agent: sa.Agent, model: restoredModel(sa.Model),
			parent: parent, running: running, switches: restoredSwitches(sa.Switches)}, true)
	}
	return expectDelim(dec, ']')
}

// load adds sp as the least recently active parent, keeping maxPerAgent
// entries an agent; written says its frozen blocks are to be written (a
// state file imported into a database, not a row read from one). It
// returns the highest tick of the entries kept.
func (b *parentBook) load(sp *snapshotParent, maxPerAgent int, written bool) (*parentState, uint64, error) {
	p := &parentState{id: sp.ID, counters: make(map[string]int), agents: make(map[string]*agentState)}
	b.list.PushBack(sp.ID, p)
	b.addBytes(p, parentCost(sp.ID))
	highest, top, err := b.loadEntries(p, sp.Entries, maxPerAgent)
	if err != nil {
		return p, 0, err
	}
	b.loadCounters(p, sp.Counters, highest)
	// Oldest first, up to the bound, as Frozen.Block would have kept them.
	for j := len(sp.Frozen) - 1; j >= 0; j-- {
		if frozenFull(p) {
			break
		}
		fb := sp.Frozen[j]
		if len(fb.MessageID) > MaxIDBytes {
			continue
		}
		if p.frozen != nil && p.frozen.Has(fb.MessageID) {
			return p, 0, fmt.Errorf("frozen block for message %q listed twice", fb.MessageID)
		}
		text := fb.Block
		if len(text) > MaxFrozenBlockBytes {
			text = "" // as Frozen.Block freezes an oversized block
		}
		b.freeze(p, fb.MessageID, text, written)
	}
	return p, top, nil
}

// loadEntries adds entries, newest first, keeping what the bounds allow:
// the MaxAgentsPerParent agents with the newest entries (the order in which
// agents first appear among the entries sorted newest first) and each
// one's MaxSessionsPerAgent newest entries. One pass after the sort: time
// is linear in the entries however many agents they name. It returns the
// highest alias number per prefix among all entries, kept or not, and the
// highest tick among those kept.
func (b *parentBook) loadEntries(p *parentState, entries []snapshotEntry, maxPerAgent int) (map[string]int, uint64, error) {
	var top uint64
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Use > entries[j].Use })
	aliases := make(map[string]bool, len(entries))
	highest := make(map[string]int)
	for i, se := range entries {
		if se.Agent == "" || se.Alias == "" || se.TaskID == "" {
			return nil, 0, fmt.Errorf("entry %d: agent, alias and taskId must not be empty", i)
		}
		if aliases[se.Alias] {
			return nil, 0, fmt.Errorf("alias %q listed twice", cutBytes(se.Alias, MaxIDBytes))
		}
		aliases[se.Alias] = true
		if prefix, n, ok := splitAlias(se.Alias); ok {
			highest[prefix] = max(highest[prefix], n)
		}
		if len(se.Agent) > MaxAgentNameBytes || len(se.Alias) > MaxIDBytes || len(se.TaskID) > MaxIDBytes {
			continue
		}
		a := p.agents[se.Agent]
		if a == nil {
			if len(p.agents) >= MaxAgentsPerParent {
				continue // an older agent than all those kept
			}
			a = b.newAgent(p, se.Agent)
		}
		if a.byTask[se.TaskID] != nil {
			return nil, 0, fmt.Errorf("agent %q: task %q listed twice", se.Agent, se.TaskID)
		}
		if a.entries.Len() >= maxPerAgent {
			continue
		}
		top = max(top, se.Use)
		e := &entry{parent: p, agent: a, alias: se.Alias, taskID: se.TaskID,
			label: cutBytes(se.Label, MaxLabelBytes), lastUse: se.LastUse, tick: se.Use, run: loadRun(&se)}
		b.link(e) // sorted newest first: PushBack keeps the order
	}
	return highest, top, nil
}

// saveRun is r as a state file keeps it: nil for a plain completed run.
func saveRun(r Run) *snapshotRun {
	if runCost(r) == 0 {
		return nil
	}
	return &snapshotRun{State: r.State, Error: r.Error}
}

// loadRun reads an entry's run state: none, or a state this build does
// not know, is completed; an error text only goes with RunError.
func loadRun(se *snapshotEntry) Run {
	if se.Run == nil {
		return Run{State: RunCompleted}
	}
	switch se.Run.State {
	case RunRunning:
		return Run{State: RunRunning}
	case RunError:
		return Run{State: RunError, Error: cutBytes(se.Run.Error, MaxRunErrorBytes)}
	}
	return Run{State: RunCompleted}
}

// loadCounters sets p's alias counters from the file's, repaired so that
// no alias is handed out twice and none overflows: a counter is at least
// the highest alias number among the file's entries with its prefix
// (highest), and one that is not an integer in [0, MaxAliasCounter] is
// recomputed from those entries. The prefixes of kept entries are always
// kept; others follow in name order within MaxAliasPrefixesPerParent.
func (b *parentBook) loadCounters(p *parentState, counters map[string]json.RawMessage, highest map[string]int) {
	set := func(prefix string, n int) {
		if _, had := p.counters[prefix]; !had {
			b.addBytes(p, counterCost(prefix))
		}
		p.counters[prefix] = n
	}
	for _, a := range p.agents {
		for _, e := range a.entries.All() {
			if prefix, _, ok := splitAlias(e.alias); ok {
				n, _ := counterValue(counters[prefix])
				set(prefix, max(n, highest[prefix]))
			}
		}
	}
	others := make([]string, 0, len(counters)+len(highest))
	for prefix := range counters {
		others = append(others, prefix)
	}
	for prefix := range highest {
		if _, listed := counters[prefix]; !listed {
			others = append(others, prefix)
		}
	}
	sort.Strings(others)
	for _, prefix := range others {
		if len(p.counters) >= MaxAliasPrefixesPerParent {
			break
		}
		if _, kept := p.counters[prefix]; kept || prefix == "" || len(prefix) >= MaxIDBytes {
			continue
		}
		n, _ := counterValue(counters[prefix])
		set(prefix, max(n, highest[prefix]))
	}
}

// counterValue reads a saved alias counter: an integer in
// [0, MaxAliasCounter], else !ok.
func counterValue(num json.RawMessage) (int, bool) {
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n < 0 || n > MaxAliasCounter {
		return 0, false
	}
	return int(n), true
}

// maxClock is where the logical clock is renumbered on load, far below
// where s.clock++ would wrap around.
const maxClock = 1 << 62

// renumber renumbers the entries' ticks 1..n in their order if clock,
// read from a file, is beyond maxClock, so it never wraps around; it
// returns the clock to go on from.
func (b *parentBook) renumber(clock uint64) uint64 {
	if clock <= maxClock {
		return clock
	}
	var all []*entry
	for _, p := range b.list.All() {
		for _, a := range p.agents {
			for _, e := range a.entries.All() {
				all = append(all, e)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].tick < all[j].tick })
	for i, e := range all {
		e.tick = uint64(i + 1)
	}
	return uint64(len(all))
}

// splitAlias splits "<prefix>-<n>" with 1 <= n <= MaxAliasCounter; the
// prefix may itself contain '-'.
func splitAlias(alias string) (string, int, bool) {
	i := strings.LastIndexByte(alias, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(alias[i+1:])
	if err != nil || n < 1 || n > MaxAliasCounter {
		return "", 0, false
	}
	return alias[:i], n, true
}
