package sessions

import "unicode/utf8"

// The byte budget (Config.MaxStateBytes) counts each item as what it takes
// in the database (its strings as stored: in its row and again in each
// index over them, and the overflow pages a long row fills) plus a fixed
// overhead, about what the item costs in memory beyond its strings
// (structs, list elements, map slots) and the rest of its row and index
// entries (keys, varints, cell pointers, pages not full). Counts are kept
// up to date as items change, so enforcing the budget is O(1) per
// eviction. Strings are counted at jsonLen, at least their stored size.
const (
	parentOverhead  = 256
	agentOverhead   = 256
	counterOverhead = 64
	entryOverhead   = 320
	frozenOverhead  = 128
	trackedOverhead = 160
	pendingOverhead = 256
	runOverhead     = 32 // `,"run":{"state":"","error":""}`
	// cacheRowOverhead is a prompt-cache row's (sessiondb/cachedb.go) beyond its
	// session id and figures: its key and used columns, record header,
	// cell pointer.
	cacheRowOverhead = 64
)

// dbPageSize is the database's page size (sessiondb/db.go sets it on a new file).
const dbPageSize = 8192

// storedBytes is what a row or index entry whose record is payload bytes
// takes in the database's pages, as SQLite lays it out (its file format,
// "Cell Payload Overflow Pages"): all of it in its page when it fits what
// a page keeps of one cell, else a part there and the rest in overflow
// pages that hold nothing else, so each is counted whole; and its share
// of the page, which holds as many whole cells as fit (a 4.4 KiB block
// takes an 8 KiB page alone) and is not all full. A table keyed by
// rowid keeps up to a page less 35 bytes in the page; a WITHOUT ROWID
// table or an index only about a quarter page (2 KiB of 8 KiB): a 2.5 KiB
// tracked session takes 1 KiB of its page and a whole overflow page.
func storedBytes(payload int, withoutRowid bool) int {
	const usable = dbPageSize
	const minLocal = (usable-12)*32/255 - 23
	maxLocal := usable - 35
	if withoutRowid {
		maxLocal = (usable-12)*64/255 - 23
	}
	local, pages := payload, 0
	if payload > maxLocal {
		local = minLocal + (payload-minLocal)%(usable-4)
		if local > maxLocal {
			local = minLocal
		}
		pages = (payload - local + usable - 5) / (usable - 4)
	}
	// A page holds whole cells (each with its 4-byte pointer and header):
	// a cell a little over half a page fills one alone. The pages of a
	// b-tree filled in no order, and thinned by deletes, are about three
	// quarters full, so a cell counts at least a third more than it holds.
	cell := local + 8
	perPage := max(1, (usable-8)/cell)
	return max(usable/perPage, cell*4/3) + pages*usable
}

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

// The items' rows and index entries beyond their strings: keys, integer
// columns, record headers (budget.go's storedBytes adds the cell pointer
// and the page's fill).
const (
	parentRow       = 24 // pid, rev, bytes
	entryRow        = 40 // pid, last_use, tick, run state
	frozenRow       = 24 // pid, seq
	trackedRowBytes = 24 // rev, bytes
	counterRow      = 16 // pid, n
	cacheRow        = 24 // used, bytes
	indexEntry      = 16 // the indexed columns' header and the key they point to
)

// parentCost is a parent's own: its id in its row and again in the index
// of ids, and its entry in the index by revision (sessiondb/schema.go).
func parentCost(id string) int {
	return parentOverhead + storedBytes(parentRow+jsonLen(id), false) + storedBytes(indexEntry+jsonLen(id), true) + storedBytes(indexEntry, true)
}
func agentCost(name string) int { return agentOverhead + jsonLen(name) }
func counterCost(prefix string) int {
	return counterOverhead + storedBytes(counterRow+jsonLen(prefix), true)
}

// trackedCost is a tracked session's: its row (a WITHOUT ROWID table, so
// a long row fills an overflow page) and its id again in the index by
// revision.
func trackedCost(sa *sessionAgent) int {
	row := trackedRowBytes + jsonLen(sa.session) + jsonLen(sa.agent) + modelCost(sa.model) + sessionExtraCost(sa)
	return trackedOverhead + storedBytes(row, true) + storedBytes(indexEntry+jsonLen(sa.session), true)
}

// entryCost is an entry's: its row (the agent's name is repeated in
// each), its alias again in the index by parent and alias, its task id in
// the index by task id, and its entry in the index by use.
func entryCost(e *entry) int {
	row := entryRow + jsonLen(e.agent.name) + jsonLen(e.alias) + jsonLen(e.taskID) + jsonLen(e.label) + runCost(e.run)
	return entryOverhead + storedBytes(row, false) + storedBytes(indexEntry+jsonLen(e.alias), true) +
		storedBytes(indexEntry+jsonLen(e.taskID), true) + storedBytes(indexEntry, true)
}

// runCost is what an entry's run state adds to it in the state file:
// nothing for a plain completed run, which the file leaves out.
func runCost(r Run) int {
	if r.State == RunCompleted && r.Error == "" || r.State == "" {
		return 0
	}
	return runOverhead + jsonLen(r.State) + jsonLen(r.Error)
}

// frozenCost is a frozen block's: its message id in its row and again in
// the index by parent and message, and the overflow pages of a long block.
func frozenCost(fb *frozenBlock) int {
	return frozenOverhead + storedBytes(frozenRow+jsonLen(fb.messageID)+jsonLen(fb.text), false) + storedBytes(indexEntry+jsonLen(fb.messageID), true)
}

// CacheRowCost is a prompt-cache row's (sessiondb/cachedb.go): its session id and
// figures (data, their JSON) in a WITHOUT ROWID table.
func CacheRowCost(session string, data int) int {
	return cacheRowOverhead + storedBytes(cacheRow+len(session)+data, true)
}

func pendingCost(pc *pendingCall) int {
	return pendingOverhead + len(pc.callID) + len(pc.parent) + len(pc.agent) + len(pc.prefix) + len(pc.label) + len(pc.resumes)
}

// enforceBudget forgets the least recently used items until the store fits
// Config.MaxStateBytes: the least recently active parent while the parents
// hold the most bytes (never the most recently active one, which the
// current request uses), else the least recently active tracked session or
// the oldest pending call, whichever kind holds more. The caller holds mu.
func (s *Store) enforceBudget() {
	for s.parents.bytes+s.tracked.bytes+s.calls.bytes > s.cfg.MaxStateBytes {
		parentsFirst := s.parents.list.Len() > 1 && s.parents.bytes >= s.tracked.bytes && s.parents.bytes >= s.calls.bytes
		switch {
		case parentsFirst:
			_, p, _ := s.parents.list.Back()
			s.parents.drop(p)
			s.changes++
		case s.tracked.list.Len() > 0 && s.tracked.bytes >= s.calls.bytes:
			session, _, _ := s.tracked.list.Back()
			s.tracked.untrack(session)
			s.changes++
		case s.calls.list.Len() > 0:
			callID, _, _ := s.calls.list.Back()
			s.calls.remove(callID)
		case s.parents.list.Len() > 1:
			_, p, _ := s.parents.list.Back()
			s.parents.drop(p)
			s.changes++
		default:
			return // one parent alone is over the budget: keep it
		}
	}
}
