package incremental

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveRebuild applies items to base as PROTOCOL.md 4.6 says, without a
// budget, and counts the result as the store counts a history held (the
// messages kept or edited with the ops their base message got). ok is
// false when an item does not fit the base.
func naiveRebuild(base []Message, ops [][]Op, items []Item) (msgs []Message, bytes int64, ok bool) {
	inRange := func(keep, count *int, n int) bool {
		return count != nil && *keep >= 0 && *count >= 1 && *keep <= n && *count <= n-*keep
	}
	for _, it := range items {
		switch {
		case it.Keep != nil && it.Message == nil && it.Edit == nil && it.Info == nil && it.Parts == nil:
			if !inRange(it.Keep, it.Count, len(base)) {
				return nil, 0, false
			}
			for k := *it.Keep; k < *it.Keep+*it.Count; k++ {
				msgs = append(msgs, base[k])
				_, b := hashMessage(&base[k])
				bytes += b + int64(len(ops[k]))*OpOverhead
			}
		case it.Message != nil && it.Keep == nil && it.Count == nil && it.Edit == nil && it.Info == nil && it.Parts == nil:
			msgs = append(msgs, *it.Message)
			_, b := hashMessage(it.Message)
			bytes += b
		case it.Edit != nil && it.Keep == nil && it.Count == nil && it.Message == nil:
			j := *it.Edit
			if j < 0 || j >= len(base) {
				return nil, 0, false
			}
			m := base[j]
			if it.Info != nil {
				m.Info = *it.Info
			}
			if it.Parts != nil {
				parts := []Part{}
				for _, pi := range *it.Parts {
					switch {
					case pi.Keep != nil && pi.Part == nil:
						if !inRange(pi.Keep, pi.Count, len(base[j].Parts)) {
							return nil, 0, false
						}
						parts = append(parts, base[j].Parts[*pi.Keep:*pi.Keep+*pi.Count]...)
					case pi.Part != nil && pi.Keep == nil && pi.Count == nil:
						parts = append(parts, *pi.Part)
					default:
						return nil, 0, false
					}
				}
				m.Parts = parts
			}
			msgs = append(msgs, m)
			_, b := hashMessage(&m)
			bytes += b + int64(len(ops[j]))*OpOverhead
		default:
			return nil, 0, false
		}
	}
	return msgs, bytes, true
}

// FuzzRebuild: whatever the items, Rebuild never builds a history over the
// budget, refuses one only when it would be, rebuilds what the protocol
// says otherwise, and leaves its base as it was when the history is
// discarded.
func FuzzRebuild(f *testing.F) {
	for _, seed := range []string{
		`[{"keep":0,"count":3}]`,
		`[{"keep":0,"count":3},{"keep":0,"count":3},{"keep":0,"count":3},{"keep":0,"count":3}]`,
		`[{"keep":0,"count":1},{"edit":2,"parts":[{"keep":0,"count":4},{"keep":0,"count":4},{"keep":1,"count":2}]}]`,
		`[{"keep":1,"count":1},{"message":{"info":{"id":"x","role":"user"},"parts":[{"type":"text","text":"hi"}]}},{"keep":0,"count":2}]`,
		`[{"edit":1,"info":{"id":"m9","role":"user","agent":"orchestrator"}},{"keep":2,"count":1}]`,
		`[{"keep":0,"count":0}]`, `[{"edit":5}]`, `[{}]`,
	} {
		f.Add([]byte(seed), uint16(3000))
	}
	base := []Message{
		msg("m1", "user", "s", textPart("hello")),
		msg("m2", "assistant", "s", taskPart("c1", "error", "boom"), textPart("x")),
		msg("m3", "assistant", "s", textPart("a"), textPart("bb"), textPart("ccc"), textPart("dddd")),
	}
	ops := [][]Op{{{Part: -1, Text: "reminder"}}, {{Part: 0, Text: "guided"}}, nil}
	f.Fuzz(func(t *testing.T, raw []byte, budget uint16) {
		var items []Item
		if json.Unmarshal(raw, &items) != nil {
			return
		}
		s := NewStore[uint8, int](int64(budget) + 1500)
		id := s.Full(base).Commit("s", ops)
		if id == "" {
			return // the base alone is over this budget
		}
		want, wantBytes, fits := naiveRebuild(base, ops, items)
		h, err := s.Rebuild("s", id, items)
		switch {
		case !fits:
			require.Error(t, err, "an item that does not fit")
		case wantBytes > s.Budget():
			require.ErrorIs(t, err, ErrOverBudget, "%d bytes over a budget of %d", wantBytes, s.Budget())
		default:
			require.NoError(t, err, "%d bytes within a budget of %d", wantBytes, s.Budget())
			if got := wires(h.Entries); len(want) > 0 || len(got) > 0 {
				assert.Equal(t, want, got)
			}
			h.Discard()
		}
		heldID, held := s.Held("s")
		require.Equal(t, id, heldID)
		require.Equal(t, base, held, "the base is as it was")
	})
}
