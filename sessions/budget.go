package sessions

import "unicode/utf8"

// The byte budget (Config.MaxStateBytes) counts each item as the bytes its
// strings take in the state file plus a fixed overhead, about what the item
// costs in memory beyond its strings (structs, list elements, map slots)
// and the JSON around it in the file. Counts are kept up to date as items
// change, so enforcing the budget is O(1) per eviction.
const (
	parentOverhead  = 256
	agentOverhead   = 256
	counterOverhead = 64
	entryOverhead   = 320
	frozenOverhead  = 128
	trackedOverhead = 160
	pendingOverhead = 256
	runOverhead     = 32 // `,"run":{"state":"","error":""}`
)

// jsonLen is how many bytes s takes as a JSON string's contents, as
// encoding/json writes it without HTML escaping: control characters, `"`
// and `\` are escaped, and invalid UTF-8 and U+2028/U+2029 are written as
// \u escapes.
func jsonLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // written as \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// cutBytes keeps the longest prefix of s that is at most n bytes and does
// not split a UTF-8 sequence.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func parentCost(id string) int      { return parentOverhead + jsonLen(id) }
func agentCost(name string) int     { return agentOverhead + jsonLen(name) }
func counterCost(prefix string) int { return counterOverhead + jsonLen(prefix) }
func trackedCost(sa *sessionAgent) int {
	return trackedOverhead + jsonLen(sa.session) + jsonLen(sa.agent) + modelCost(sa.model) + sessionExtraCost(sa)
}

func entryCost(e *entry) int {
	// The state file repeats the agent's name in each entry.
	return entryOverhead + jsonLen(e.agent.name) + jsonLen(e.alias) + jsonLen(e.taskID) + jsonLen(e.label) + runCost(e.run)
}

// runCost is what an entry's run state adds to it in the state file:
// nothing for a plain completed run, which the file leaves out.
func runCost(r Run) int {
	if r.State == RunCompleted && r.Error == "" || r.State == "" {
		return 0
	}
	return runOverhead + jsonLen(r.State) + jsonLen(r.Error)
}

func frozenCost(fb *frozenBlock) int {
	return frozenOverhead + jsonLen(fb.messageID) + jsonLen(fb.text)
}

func pendingCost(pc *pendingCall) int {
	return pendingOverhead + len(pc.callID) + len(pc.parent) + len(pc.agent) + len(pc.prefix) + len(pc.label) + len(pc.resumes)
}

// addParentBytes counts n more (or, negative, fewer) bytes under p.
func (s *Store) addParentBytes(p *parentState, n int) {
	p.bytes += n
	s.parentBytes += n
	s.markParent(p)
}

// bytes is what the budget counts; the caller holds mu.
func (s *Store) bytes() int { return s.parentBytes + s.trackedBytes + s.pendingBytes }

// enforceBudget forgets the least recently used items until the store fits
// Config.MaxStateBytes: the least recently active parent while the parents
// hold the most bytes (never the most recently active one, which the
// current request uses), else the least recently active tracked session or
// the oldest pending call, whichever kind holds more. The caller holds mu.
func (s *Store) enforceBudget() {
	for s.bytes() > s.cfg.MaxStateBytes {
		parentsFirst := s.parents.Len() > 1 && s.parentBytes >= s.trackedBytes && s.parentBytes >= s.pendingBytes
		switch {
		case parentsFirst:
			_, p, _ := s.parents.Back()
			s.dropParent(p)
			s.changed()
		case s.agents.Len() > 0 && s.trackedBytes >= s.pendingBytes:
			session, _, _ := s.agents.Back()
			s.untrack(session)
			s.changed()
		case s.pending.Len() > 0:
			callID, _, _ := s.pending.Back()
			s.removePending(callID)
		case s.parents.Len() > 1:
			_, p, _ := s.parents.Back()
			s.dropParent(p)
			s.changed()
		default:
			return // one parent alone is over the budget: keep it
		}
	}
}
