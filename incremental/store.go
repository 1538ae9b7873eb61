package incremental

import (
	"errors"
	"math"
	"strconv"

	"github.com/hookwire/hookwire/internal/lru"
)

// Bounds of the histories held (PROTOCOL.md 7). The counted bytes are the
// strings a transform reads plus a fixed cost per message, part and op,
// about what they take in memory.
const (
	DefaultMaxBytes = 8 << 20
	MaxSessions     = 64
	MaxKeyBytes     = 256
	MessageOverhead = 128
	PartOverhead    = 112
	OpOverhead      = 32
)

// ErrUnknownBase: the request names a base the store does not hold for its
// session (after a restart, an eviction, or another request for the
// session first). The client resends in full.
var ErrUnknownBase = errors.New("unknown base: send the full history (output.messages) with sync")

// Store holds one history per session, the base of its next incremental
// request, within a byte budget and a session count; the least recently
// used goes first. It is not safe for concurrent use: the handler serves
// one request at a time.
type Store[L, D any] struct {
	maxBytes int64
	bytes    int64
	// session holds the bases, the one held last at the front.
	session *lru.List[string, *base[L, D]]
	// gen counts the config changes (ConfigChanged): a base derived under
	// an earlier one is derived again when a request keeps its messages.
	gen uint64
	// per is the hook's per-message ops, reused from request to request
	// (PerMessage).
	per [][]Op
	// opSteps remembers the hash of long ops' steps (hashOps).
	opSteps map[opStep]uint64
}

// base is the history held for one session, and the generation of the
// config its messages were derived under.
type base[L, D any] struct {
	id    string
	msgs  []Entry[L, D]
	bytes int64
	gen   uint64
}

// NewStore returns a store that holds at most maxBytes of histories (at
// most 1 GiB: a held history's running counts are 32 bits, and its
// messages' places 30).
func NewStore[L, D any](maxBytes int64) *Store[L, D] {
	maxBytes = min(maxBytes, 1<<30)
	return &Store[L, D]{maxBytes: maxBytes, session: lru.New[string, *base[L, D]]()}
}

// ConfigChanged marks what the hook derived of every held message as
// stale: a request that keeps one has it derived again.
func (s *Store[L, D]) ConfigChanged() { s.gen++ }

// PerMessage returns n empty ops lists, in an array that the previous
// request used: a request reads it only while it is handled.
func (s *Store[L, D]) PerMessage(n int) [][]Op {
	if cap(s.per) < n {
		s.per = make([][]Op, n, n+n/4)
		return s.per
	}
	clear(s.per) // past its length it is clear already
	s.per = s.per[:n]
	return s.per
}

// History is the history one request stands for. A history rebuilt from a
// base may borrow the base's array; until Commit, Discard puts the base
// back as it was.
type History[L, D any] struct {
	Entries []Entry[L, D]
	store   *Store[L, D]
	// from is the base it was rebuilt from (nil: the full form); undo
	// holds the base's messages from undoAt on that Entries overwrote.
	from   *base[L, D]
	undo   []Entry[L, D]
	undoAt int
	done   bool
}

// Full returns the history of the full form: msgs, none derived yet,
// their content hashes worked out (a base id and prompt-cache accounting
// read them all), four messages side by side (hashContents).
func (s *Store[L, D]) Full(msgs []Message) *History[L, D] {
	entries := make([]Entry[L, D], len(msgs))
	for i := range msgs {
		entries[i].Content = &Content[D]{Wire: msgs[i]}
	}
	hashContents(entries)
	return &History[L, D]{Entries: entries, store: s}
}

// Rebuild returns the history an incremental request stands for: the
// session's base named id, with items applied. ErrUnknownBase when the
// store holds no such base; another error names the item that does not
// fit. An error changes nothing.
func (s *Store[L, D]) Rebuild(session, id string, items []Item) (*History[L, D], error) {
	b, _ := s.session.Get(session)
	if b == nil || b.id != id {
		return nil, ErrUnknownBase
	}
	return b.rebuild(s, items)
}

// Discard drops a history that is not to be held: a base it was rebuilt
// from is as it was before. After Commit it does nothing.
func (h *History[L, D]) Discard() {
	if h.done {
		return
	}
	h.done = true
	if h.from != nil {
		copy(h.from.msgs[h.undoAt:], h.undo)
	}
}

// Commit records per[i] as the ops message i got, holds the history as
// session's base and returns the base's id: "" when the session cannot be
// a key or the history is over the budget on its own (the session's
// earlier base is dropped then too).
func (h *History[L, D]) Commit(session string, per [][]Op) string {
	if h.done {
		panic("incremental: Commit of a history already committed or discarded")
	}
	h.done = true
	if b := h.from; b != nil && len(h.Entries) < len(b.msgs) && len(h.Entries) > 0 && &h.Entries[0] == &b.msgs[0] {
		clear(b.msgs[len(h.Entries):]) // hold on to no message the history dropped
	}
	for i := range h.Entries {
		if e := &h.Entries[i]; e.origin() == 0 || !sameOps(per[i], e.ops) {
			e.ops, e.opsHash = per[i], h.store.hashOps(per[i])
			e.place &^= kept // the base's id hash up to it no longer holds
		}
	}
	return h.store.keep(session, h.Entries)
}

// keep holds msgs as the session's history and returns its base id.
func (s *Store[L, D]) keep(session string, msgs []Entry[L, D]) string {
	if old, ok := s.session.Remove(session); ok {
		s.bytes -= old.bytes
	}
	if session == "" || len(session) > MaxKeyBytes {
		return ""
	}
	b := &base[L, D]{msgs: msgs, gen: s.gen}
	h, bytes := fnvString(fnvOffset, session), int64(0)
	// The messages kept in place from the base this history was built
	// from (with their ops) hash as they did there: the base held for
	// session was made with this key.
	i := 0
	for i < len(msgs) && msgs[i].place&kept != 0 && msgs[i].origin() == i+1 {
		i++
	}
	if i > 0 {
		h, bytes = msgs[i-1].idHash, int64(msgs[i-1].idBytes)
	}
	for ; i < len(msgs); i++ {
		m := &msgs[i]
		if m.bytes == 0 {
			m.hash, m.bytes = hashMessage(&m.Wire)
		}
		bytes += m.bytes
		h = fnvUint64(h, m.hash)
		if len(m.ops) > 0 { // the answer is part of the base: see hashOps
			h = fnvUint64(h, m.opsHash)
			// The ops' texts are the hook's (frozen blocks, the
			// configured reminder, remembered guidance): counted there.
			bytes += int64(len(m.ops)) * OpOverhead
		}
		m.idHash, m.idBytes = h, uint32(min(bytes, math.MaxUint32))
	}
	b.bytes = bytes
	if b.bytes > s.maxBytes {
		return ""
	}
	b.id = strconv.FormatUint(fnvUint64(h, uint64(len(msgs))), 16)
	for s.session.Len() >= MaxSessions || s.bytes+b.bytes > s.maxBytes {
		oldest, _, _ := s.session.Back()
		evicted, _ := s.session.Remove(oldest)
		s.bytes -= evicted.bytes
	}
	s.session.PushFront(session, b)
	s.bytes += b.bytes
	return b.id
}

// Budget is the store's byte budget: the most a history held may count,
// and the most an incremental request's history may.
func (s *Store[L, D]) Budget() int64 { return s.maxBytes }

// Sessions is the number of sessions whose history is held.
func (s *Store[L, D]) Sessions() int { return s.session.Len() }

// Bytes is the counted bytes of the histories held.
func (s *Store[L, D]) Bytes() int64 { return s.bytes }

// Held returns the id and the messages of the history held for session
// ("" and nil when none is).
func (s *Store[L, D]) Held(session string) (string, []Message) {
	b, _ := s.session.Get(session)
	if b == nil {
		return "", nil
	}
	msgs := make([]Message, len(b.msgs))
	for i := range b.msgs {
		msgs[i] = b.msgs[i].Wire
	}
	return b.id, msgs
}
