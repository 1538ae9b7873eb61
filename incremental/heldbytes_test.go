package incremental

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An incremental request stands for a history: the sidecar builds it only
// when holding it would stay within the budget, counted as a history sent
// in full is counted (its messages and the ops each got), so a short
// request never makes the sidecar build a history over the budget. Edits
// of a message that got ops carry those ops along.
func TestRebuildRefusedExactlyWhenHoldingItWouldPassTheBudget(t *testing.T) {
	m0 := msg("m1", "user", "s", textPart("hello"))
	m1 := msg("m2", "assistant", "s", textPart("a"))
	ops := make([]Op, 8)
	for i := range ops {
		ops[i] = Op{Part: i - 1, Text: "reminder"}
	}
	base, basePer := []Message{m0, m1}, [][]Op{ops, nil}
	// fits: whether a store of budget holds msgs with per sent in full.
	fits := func(msgs []Message, per [][]Op, budget int64) bool {
		return NewStore[uint8, int](budget).Full(msgs).Commit("s", per) != ""
	}
	for _, n := range []int{3, 4, 6} { // the base (message 0 and 1) fits the lowest budget
		items := make([]Item, n)
		want, wantPer := make([]Message, n), make([][]Op, n)
		for i := range items {
			items[i] = Item{Edit: ptr(0)} // message 0 as it was, with its ops
			want[i], wantPer[i] = m0, ops
		}
		lo := NewStore[uint8, int](DefaultMaxBytes)
		lo.Full(want).Commit("s", make([][]Op, n))
		hi := NewStore[uint8, int](DefaultMaxBytes)
		hi.Full(want).Commit("s", wantPer)
		require.Greater(t, hi.Bytes(), lo.Bytes())
		for budget := lo.Bytes() - 8; budget <= hi.Bytes()+8; budget += 8 {
			s := NewStore[uint8, int](budget)
			id := s.Full(base).Commit("s", basePer)
			require.NotEmpty(t, id, "the base fits %d", budget)
			h, err := s.Rebuild("s", id, items)
			if !fits(want, wantPer, budget) {
				require.ErrorIs(t, err, ErrOverBudget, "%d edits, budget %d: the history would pass it", n, budget)
				continue
			}
			require.NoError(t, err, "%d edits, budget %d", n, budget)
			assert.Equal(t, want, wires(h.Entries))
			per := make([][]Op, len(h.Entries))
			for i := range per {
				per[i] = ops
			}
			assert.NotEmpty(t, h.Commit("s", per), "%d edits, budget %d: held", n, budget)
			assert.LessOrEqual(t, s.Bytes(), budget)
		}
	}
}

// A base's id names the history and the ops each message got, where in
// the message each went included: two bases that differ only there never
// share an id (the client reapplies the ops it holds for the id it names).
func TestBaseIDCoversWhereEachOpWent(t *testing.T) {
	hist := []Message{msg("m1", "user", "s", textPart("a"), textPart("b")), msg("m2", "assistant", "s", textPart("c"))}
	rows := map[string][][]Op{
		"no ops":                       {nil, nil},
		"appended":                     {{{Part: -1, Text: "x"}}, nil},
		"on part 0":                    {{{Part: 0, Text: "x"}}, nil},
		"on part 1":                    {{{Part: 1, Text: "x"}}, nil},
		"on part 0 of the next":        {nil, {{Part: 0, Text: "x"}}},
		"two, parts 0 and 1":           {{{Part: 0, Text: "x"}, {Part: 1, Text: "x"}}, nil},
		"two, parts 1 and 0":           {{{Part: 1, Text: "x"}, {Part: 0, Text: "x"}}, nil},
		"another text on part 0":       {{{Part: 0, Text: "y"}}, nil},
		"text split across two ops":    {{{Part: 0, Text: "x"}, {Part: 0, Text: "y"}}, nil},
		"the same split the other way": {{{Part: 0, Text: "xy"}}, nil},
	}
	ids := map[string]string{}
	for name, per := range rows {
		id := NewStore[uint8, int](DefaultMaxBytes).Full(hist).Commit("s", per)
		require.NotEmpty(t, id, name)
		again := NewStore[uint8, int](DefaultMaxBytes).Full(hist).Commit("s", per)
		assert.Equal(t, id, again, "%s: the same answer, the same id", name)
		if other, ok := ids[id]; ok {
			t.Errorf("%q and %q share the base id %s", name, other, id)
		}
		ids[id] = name
	}
}
