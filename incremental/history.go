package incremental

import "slices"

// Entry is one message of a history, as the per-request work reads it: a
// few words of its own, and the message as held (Content), which the bases
// that keep the message share. A request that keeps a message from its
// base touches little more than these words, as the message's content and
// what follows from it alone were worked out when it came (issue 14:
// between requests the process is idle, its memory cold, so every line
// read costs a miss).
type Entry[L, D any] struct {
	*Content[D]
	// Local is the hook's own words of the message (its flags, say): kept
	// in the history's array, so a pass over the history reads them
	// without touching Content.
	Local L
	// ops are the ops the message got in the reply that made its base,
	// opsHash their hash. In a history being built from a base they are
	// still the base message's.
	ops     []Op
	opsHash uint64
	// idHash and idBytes are the base id's hash state and the base's
	// counted bytes up to this message (Store.keep), so that a base kept
	// up to message k is not hashed again up to k. idBytes saturates at
	// the most a uint32 holds, far above any budget (NewStore).
	idHash  uint64
	idBytes uint32
	// place is, in its low 30 bits, the base message the message came
	// from plus one in a history being built from a base (0: a message in
	// full), and in its top two bits kept and derived: the entry is 80
	// bytes, so that a pass over a history touches as few lines as before
	// the hook's words were its own.
	place uint32
}

// Bits of Entry.place.
const (
	originMask uint32 = 1<<30 - 1
	// kept: kept from the base as it was (a keep item), so idHash and
	// idBytes are still those of base message origin-1.
	kept uint32 = 1 << 30
	// derived: the hook derived the message under the config in force
	// (MarkDerived).
	derived uint32 = 1 << 31
)

// origin is the base message the entry came from plus one (0: none).
func (e *Entry[L, D]) origin() int { return int(e.place & originMask) }

func (e *Entry[L, D]) setOrigin(o int) { e.place = e.place&^originMask | uint32(o) }

// Content is a message as a base holds it: its wire form, its content hash
// and counted bytes (0 until computed), and what the hook derives from its
// content and the config alone (Derived). The bases that keep the message
// share it.
type Content[D any] struct {
	// Derived comes first: a pass over a history reads it for message
	// after message, and each field further in may be a cache line more.
	Derived D
	Wire    Message
	hash    uint64
	bytes   int64
}

// NeedsDerive reports whether the hook has yet to derive the message under
// the config in force: a message in full, edited, or kept from a base made
// before the config changed (Store.ConfigChanged).
func (e *Entry[L, D]) NeedsDerive() bool { return e.place&derived == 0 }

// MarkDerived records that the hook has derived the message (its Local
// and Derived) under the config in force.
func (e *Entry[L, D]) MarkDerived() { e.place |= derived }

// Op is one op a message got, relative to the message. What it does is the
// hook's (the handler: part -1 adds a synthetic text part, part j replaces
// part j's state.error); this package only compares and hashes ops.
type Op struct {
	Part int
	Text string
}

// A message's ops are built in the order the hook adds them, from a first
// list (StartOps) on (AddOp). While they are those its base message got
// (immutable), they share that array: a message kept with the same ops
// allocates nothing, and sameOps is a pointer test. Ops that differ get
// their own array; none is ever appended to in place.

// StartOps returns first as the message's ops so far, sharing the array of
// the ops its base message got when those begin with first.
func (e *Entry[L, D]) StartOps(first []Op) []Op {
	base := e.ops
	if len(base) >= len(first) && slices.Equal(base[:len(first)], first) {
		return base[:len(first):len(first)]
	}
	return first
}

// AddOp returns ops with o appended, sharing the array of the ops the
// message's base message got while they agree.
func (e *Entry[L, D]) AddOp(ops []Op, o Op) []Op {
	base := e.ops
	n := len(ops)
	if n < len(base) && base[n] == o && (n == 0 || &ops[0] == &base[0]) {
		return base[: n+1 : n+1]
	}
	return append(ops[:n:n], o)
}

// sameOps reports whether two messages' ops are the same.
func sameOps(a, b []Op) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// Runs finds the messages of history that came from its base (kept or
// edited) and get exactly the ops their base message got (per[i] for
// message i), as reapply runs.
func Runs[L, D any](history []Entry[L, D], per [][]Op) []Run {
	var runs []Run
	for i := range history {
		k := history[i].origin() - 1 // history[i].ops are still base message k's
		if k < 0 || !sameOps(per[i], history[i].ops) {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].At+runs[n-1].Count == i && runs[n-1].Keep+runs[n-1].Count == k {
			runs[n-1].Count++
			continue
		}
		runs = append(runs, Run{At: i, Keep: k, Count: 1})
	}
	return runs
}
