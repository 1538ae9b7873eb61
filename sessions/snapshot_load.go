package sessions

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// A parent loaded from the JSON form or a database row: its entries within
// the bounds, its counters repaired, its runs, and the clock renumbered.

// load adds sp as the least recently active parent, keeping maxPerAgent
// entries an agent; written says its frozen blocks are to be written (a
// state file imported into a database, not a row read from one). It
// returns the highest tick of the entries kept.
func (b *parentSet) load(sp *snapshotParent, maxPerAgent int, written bool) (*parentState, uint64, error) {
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
func (b *parentSet) loadEntries(p *parentState, entries []snapshotEntry, maxPerAgent int) (map[string]int, uint64, error) {
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
func (b *parentSet) loadCounters(p *parentState, counters map[string]json.RawMessage, highest map[string]int) {
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
func (b *parentSet) renumber(clock uint64) uint64 {
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
