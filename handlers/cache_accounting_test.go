package handlers

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/contract"
)

// TestCacheBustNotice: the sidecar alone finds busts (PROTOCOL.md 4.9), and
// tells the client of each bust in a row once, as cache.bust with the
// session's status.cache.perSession entry. A first fall, another session's
// fall and a message counted again with new figures tell nothing new.
func TestCacheBustNotice(t *testing.T) {
	s := newServer(t, nil)
	usage := func(session, message string, read int) {
		call(t, s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "message.updated",
			"properties": map[string]any{"info": map[string]any{"id": message, "sessionID": session, "role": "assistant",
				"providerID": "fake", "modelID": "m", "tokens": map[string]any{"input": 1, "output": 1,
					"cache": map[string]any{"read": read, "write": 0}}}}}}})
	}
	told := func() []cacheSummary {
		var out []cacheSummary
		for {
			select {
			case n := <-s.Notifications():
				require.Equal(t, contract.MethodCacheBust, n.Method)
				out = append(out, n.Params.(cacheSummary))
			default:
				return out
			}
		}
	}
	steps := []struct {
		name          string
		session, msg  string
		read          int
		wantBustInRow int // the bustsInARow told; 0: nothing told
	}{
		{"a first request", "ses_a", "m1", 100, 0},
		{"one fall", "ses_a", "m2", 50, 0},
		{"another session's falls do not add up with ses_a's", "ses_b", "m1", 100, 0},
		{"ses_b's first fall", "ses_b", "m2", 50, 0},
		{"the same message with new figures: not a new request", "ses_a", "m2", 60, 0},
		{"second in a row: told", "ses_a", "m3", 40, 2},
		{"the same bust counted again: not told twice", "ses_a", "m3", 30, 0},
		{"third in a row: a new bust, told", "ses_a", "m4", 20, 3},
		{"held: nothing", "ses_a", "m5", 300, 0},
		{"one fall after it", "ses_a", "m6", 200, 0},
		{"two: told again", "ses_a", "m7", 100, 2},
	}
	var last cacheSummary
	for _, st := range steps {
		usage(st.session, st.msg, st.read)
		got := told()
		if len(got) > 0 {
			last = got[0]
		}
		if st.wantBustInRow == 0 {
			assert.Empty(t, got, st.name)
			continue
		}
		if assert.Len(t, got, 1, st.name) {
			assert.Equal(t, st.session, got[0].Session, st.name)
			assert.Equal(t, st.wantBustInRow, got[0].BustsInARow, st.name)
			if assert.NotNil(t, got[0].LastBust, st.name) {
				assert.Equal(t, st.msg, got[0].LastBust.Message, st.name)
			}
		}
	}
	// What was told is what status says of the session.
	var st struct {
		Cache struct {
			PerSession []map[string]any `json:"perSession"`
		} `json:"cache"`
	}
	require.NoError(t, json.Unmarshal(mustJSON(t, s.statusForTest(t)), &st))
	var told0 map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, last), &told0))
	assert.Contains(t, st.Cache.PerSession, told0)
}

// TestCacheBustNoticeBounds: a client that reads no notifications
// (replay, a test) fills the queue and the sidecar drops the rest without
// waiting; the sessions remembered stay bounded.
func TestCacheBustNoticeBounds(t *testing.T) {
	n := newCacheAccounting()
	for i := range cap(n.notes) + 5 {
		n.tell(zerolog.Nop(), fmt.Sprintf("m%d", i), cacheSummary{Session: "ses_a"})
	}
	assert.Len(t, n.notes, cap(n.notes))
	for i := range bustNoticesKept + 10 {
		n.tell(zerolog.Nop(), "m", cacheSummary{Session: fmt.Sprintf("ses_%d", i)})
	}
	assert.Len(t, n.told, bustNoticesKept)
	assert.Len(t, n.order, bustNoticesKept)
	assert.NotContains(t, n.told, "ses_0", "the oldest is forgotten")
}
