package incremental

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testStore = Store[uint8, int]

func ptr(n int) *int { return &n }

func keepItem(k, n int) Item { return Item{Keep: ptr(k), Count: ptr(n)} }

// commit holds h as session's base with no ops for any message.
func commit(h *History[uint8, int], session string) string {
	return h.Commit(session, make([][]Op, len(h.Entries)))
}

func wires(entries []Entry[uint8, int]) []Message {
	out := make([]Message, len(entries))
	for i := range entries {
		out[i] = entries[i].Wire
	}
	return out
}

// TestDiscardLeavesBase: a history rebuilt from a base borrows the base's
// array; when it is not held (the handler refused it), the base must be
// as it was, whatever the history wrote over.
func TestDiscardLeavesBase(t *testing.T) {
	h3 := []Message{msg("m1", "user", "s"), msg("m2", "assistant", "s", textPart("a")), msg("m3", "user", "s", textPart("b"))}
	m9 := msg("m9", "user", "s", textPart("new"))
	rows := []struct {
		name  string
		items []Item
		want  []Message
	}{
		{"a message put where base message 1 was", []Item{keepItem(0, 1), {Message: &m9}}, []Message{h3[0], m9}},
		{"base messages moved over others", []Item{keepItem(0, 1), keepItem(2, 1), keepItem(2, 1)}, []Message{h3[0], h3[2], h3[2]}},
		{"an edit", []Item{keepItem(0, 2), {Edit: ptr(0), Info: &m9.Info}}, []Message{h3[0], h3[1], {Info: m9.Info, Parts: h3[0].Parts}}},
		{"grown", []Item{keepItem(0, 3), {Message: &m9}}, []Message{h3[0], h3[1], h3[2], m9}},
		{"reverted", []Item{keepItem(0, 1)}, []Message{h3[0]}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := NewStore[uint8, int](DefaultMaxBytes)
			id := commit(s.Full(h3), "s")
			require.NotEmpty(t, id)
			h, err := s.Rebuild("s", id, row.items)
			require.NoError(t, err)
			assert.Equal(t, row.want, wires(h.Entries))
			h.Discard()
			h.Discard() // twice is once

			heldID, held := s.Held("s")
			assert.Equal(t, id, heldID)
			assert.Equal(t, h3, held, "the base is as it was")
			again, err := s.Rebuild("s", id, []Item{keepItem(0, 3)})
			require.NoError(t, err)
			assert.Equal(t, id, commit(again, "s"), "the base still names the same history")

			// Committed, the rebuilt history is the base, with the id the
			// full form of that history gets.
			h, err = s.Rebuild("s", id, row.items)
			require.NoError(t, err)
			got := commit(h, "s")
			h.Discard() // after Commit: nothing
			want := commit(NewStore[uint8, int](DefaultMaxBytes).Full(row.want), "s")
			assert.Equal(t, want, got)
			_, held = s.Held("s")
			assert.Equal(t, row.want, held)
		})
	}
}

// TestNeedsDerive: a message kept from a base needs deriving again only
// after the config changed; a message in full or edited always does.
func TestNeedsDerive(t *testing.T) {
	h2 := []Message{msg("m1", "user", "s"), msg("m2", "assistant", "s")}
	s := NewStore[uint8, int](DefaultMaxBytes)
	full := s.Full(h2)
	for i := range full.Entries {
		assert.True(t, full.Entries[i].NeedsDerive())
		full.Entries[i].MarkDerived()
	}
	id := commit(full, "s")
	m3 := msg("m3", "user", "s")
	derivedAfter := func(items ...Item) []bool {
		h, err := s.Rebuild("s", id, items)
		require.NoError(t, err)
		defer h.Discard()
		var needs []bool
		for i := range h.Entries {
			needs = append(needs, h.Entries[i].NeedsDerive())
		}
		return needs
	}
	assert.Equal(t, []bool{false, false, true, true}, derivedAfter(keepItem(0, 2), Item{Message: &m3}, Item{Edit: ptr(1), Info: &m3.Info}))
	assert.Equal(t, []bool{false, false}, derivedAfter(keepItem(1, 1), keepItem(0, 1)))
	s.ConfigChanged()
	assert.Equal(t, []bool{true, true}, derivedAfter(keepItem(0, 2)))
	assert.Equal(t, []bool{true}, derivedAfter(keepItem(1, 1)))
}

func TestRuns(t *testing.T) {
	a, b := []Op{{Part: -1, Text: "a"}}, []Op{{Part: 0, Text: "b"}}
	s := NewStore[uint8, int](DefaultMaxBytes)
	full := s.Full([]Message{msg("m1", "user", "s"), msg("m2", "assistant", "s"), msg("m3", "user", "s")})
	id := full.Commit("s", [][]Op{a, nil, b})
	m4 := msg("m4", "user", "s")
	h, err := s.Rebuild("s", id, []Item{keepItem(0, 3), {Message: &m4}, keepItem(0, 1), {Edit: ptr(2)}})
	require.NoError(t, err)
	defer h.Discard()
	// Message 2 gets other ops than base message 2 did; the edit of base
	// message 2 (5) the same, with equal ops in another array.
	per := [][]Op{h.Entries[0].StartOps(a), nil, {{Part: 1, Text: "c"}}, a, h.Entries[4].AddOp(nil, a[0]), {{Part: 0, Text: "b"}}}
	assert.Equal(t, []Run{{At: 0, Keep: 0, Count: 2}, {At: 4, Keep: 0, Count: 1}, {At: 5, Keep: 2, Count: 1}}, Runs(h.Entries, per))
	assert.Same(t, &h.Entries[0].ops[0], &per[0][0], "ops equal to the base message's share its array")
}

// TestRebuildBudget: a history rebuilt from a base is counted as it grows,
// as the store counts a history it holds, and refused (ErrOverBudget)
// before it would pass the budget, however its items repeat base messages
// or parts. A history that fits is held.
func TestRebuildBudget(t *testing.T) {
	parts := make([]Part, 50)
	for i := range parts {
		parts[i] = textPart("p")
	}
	h2 := []Message{msg("m1", "user", "s", textPart("hello")), msg("m2", "assistant", "s", parts...)}
	one := NewStore[uint8, int](DefaultMaxBytes)
	id := one.Full(h2).Commit("s", [][]Op{{{Part: -1, Text: "reminder"}}, nil})
	whole := one.Bytes() // both messages, and message 0's op
	m1Bytes := whole - int64(PartOverhead+len("text")+len("p"))*50 - MessageOverhead - int64(len("m2assistants"))
	require.Greater(t, 30*m1Bytes, whole, "the rows below hold the base too")
	repeat := func(n int, it Item) []Item {
		items := make([]Item, n)
		for i := range items {
			items[i] = it
		}
		return items
	}
	editKeepingParts := func(n int) Item {
		p := make([]PartItem, n)
		for i := range p {
			p[i] = PartItem{Keep: ptr(0), Count: ptr(50)}
		}
		return Item{Edit: ptr(1), Parts: &p}
	}
	rows := []struct {
		name   string
		budget int64
		items  []Item
		fits   bool
	}{
		{"the base kept three times, budget for three", 3 * whole, repeat(3, keepItem(0, 2)), true},
		{"the base kept three times, budget for two and a half", 5 * whole / 2, repeat(3, keepItem(0, 2)), false},
		{"keeps not from 0", 3 * whole, repeat(3, keepItem(1, 1)), true},
		{"a thousand keeps of all", 100 * whole, repeat(1000, keepItem(0, 2)), false},
		{"message 0 and its op, 30 times", 30 * m1Bytes, repeat(30, keepItem(0, 1)), true},
		{"message 0 and its op, 31 times", 30 * m1Bytes, repeat(31, keepItem(0, 1)), false},
		{"a message in full, many times", 100 * whole, repeat(1000, Item{Message: &h2[1]}), false},
		{"an edit keeping its 50 parts 20 times", 100 * whole, []Item{editKeepingParts(20)}, true},
		{"an edit keeping its 50 parts 1,000 times", 100 * whole, []Item{editKeepingParts(1000)}, false},
		{"edits keeping parts, within the budget one by one", 100 * whole, repeat(10, editKeepingParts(20)), false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := NewStore[uint8, int](row.budget)
			id2 := s.Full(h2).Commit("s", [][]Op{{{Part: -1, Text: "reminder"}}, nil})
			require.Equal(t, id, id2)
			h, err := s.Rebuild("s", id, row.items)
			if !row.fits {
				require.ErrorIs(t, err, ErrOverBudget)
				assert.Contains(t, err.Error(), "sync.messages[")
				heldID, held := s.Held("s")
				assert.Equal(t, id, heldID, "the base is still held")
				assert.Equal(t, h2, held)
				return
			}
			require.NoError(t, err)
			per := make([][]Op, len(h.Entries))
			for i := range h.Entries {
				per[i] = h.Entries[i].ops // each message gets what its base message got
			}
			assert.NotEmpty(t, h.Commit("s", per), "a history that fits is held")
			assert.LessOrEqual(t, s.Bytes(), row.budget)
		})
	}
}
