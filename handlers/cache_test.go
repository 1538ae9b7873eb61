package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/core"
	"github.com/hookwire/hookwire/rpc"
)

// TestCacheAccounting plays an orchestrator session against a provider
// that caches prompt prefixes (the longest common prefix with any earlier
// request, a token a byte) and reports its usage as OpenCode forwards it
// (message.updated). hookwire's figures must be the provider's: the busts
// its usage implies, each attributed to hookwire's own change with
// cacheStable off, none with it on (PROTOCOL.md 4.9).
func TestCacheAccounting(t *testing.T) {
	for _, stable := range []bool{false, true} {
		t.Run(fmt.Sprintf("cacheStable=%v", stable), func(t *testing.T) {
			s := newServer(t, map[string]any{"cacheStable": stable})
			h := &history{session: "ses_orc"}
			call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": h.session, "agent": "orchestrator"}})
			var earlier []string
			var reads []int64
			var totalRead int64
			for turn := range 4 {
				h.user(fmt.Sprintf("turn %d", turn))
				for step := range 3 {
					msgs := h.request(t, s)
					system := []string{"base prompt"}
					for _, op := range call(t, s, "chat.system.transform", map[string]any{"input": map[string]any{"sessionID": h.session},
						"output": map[string]any{"system": system}}) {
						system = append(system, op["value"].(string))
					}
					var prompt strings.Builder
					prompt.WriteString(strings.Join(system, "\n"))
					for _, m := range msgs {
						prompt.Write(m)
					}
					p := prompt.String()
					read := 0
					for _, e := range earlier {
						n := 0
						for n < len(e) && n < len(p) && e[n] == p[n] {
							n++
						}
						read = max(read, n)
					}
					earlier = append(earlier, p)
					reads = append(reads, int64(read))
					totalRead += int64(read)
					message := fmt.Sprintf("msg_a%03d", h.n+1)
					call(t, s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "message.updated",
						"properties": map[string]any{"info": map[string]any{"id": message, "sessionID": h.session, "role": "assistant",
							"providerID": "fake", "modelID": "m", "tokens": map[string]any{"input": len(p) - read, "output": 5,
								"cache": map[string]any{"read": read, "write": 0}}}}}}})
					if step > 0 { // text only: the turn ends with two requests under the same block
						h.n++
						h.add(map[string]any{"info": map[string]any{"id": message, "role": "assistant", "sessionID": h.session},
							"parts": []any{map[string]any{"type": "text", "text": "answer"}}})
						continue
					}
					callID := fmt.Sprintf("c%d_%d", turn, step)
					agent := []string{"explorer", "oracle"}[step%2]
					delegate(t, s, h.session, callID, agent, fmt.Sprintf("ses_child_%d", turn*3+step), "")
					h.assistantTask(callID, "done")
				}
			}
			implied := 0
			for i := 1; i < len(reads); i++ {
				if reads[i] < reads[i-1] {
					implied++
				}
			}
			list := s.store.PromptCache().List()
			require.Len(t, list, 1)
			c := list[0]
			assert.Equal(t, "orchestrator", c.Agent)
			assert.Equal(t, int64(len(reads)), c.Requests)
			assert.Equal(t, totalRead, c.CacheReadTokens)
			assert.Len(t, c.Busts, implied)
			if stable {
				assert.Zero(t, implied, "cache-stable mode keeps the prefix")
				return
			}
			require.Positive(t, implied)
			causes := map[string]int{}
			for _, b := range c.Busts {
				assert.True(t, b.ByHookwire, "%+v", b)
				causes[b.Cause]++
			}
			assert.Positive(t, causes[core.CauseSystem], "the block in the system prompt changed")
			assert.Positive(t, causes[core.CauseMessage], "the reminder left an older user message")
			assert.Equal(t, implied, causes[core.CauseSystem]+causes[core.CauseMessage])

			st := mustJSON(t, s.statusForTest(t))
			assert.Contains(t, string(st), fmt.Sprintf(`"busts":%d`, implied))
		})
	}
}

func (s *Server) statusForTest(t *testing.T) any {
	t.Helper()
	res, err := s.Dispatch(t.Context(), rpc.Request{Method: "status"})
	require.NoError(t, err)
	return res
}

// BenchmarkCacheAccounting compares what the prompt-cache accounting of a
// request costs (hashing the history as it leaves hookwire, 4.9) with the
// whole chat.messages.transform of the same 200-message history, in one
// run: report the ratio, not the times.
func BenchmarkCacheAccounting(b *testing.B) {
	s := newServer(b, map[string]any{"cacheStable": true})
	h := &history{session: "ses_orc"}
	for turn := range 50 {
		h.user(fmt.Sprintf("turn %d: %s", turn, strings.Repeat("words ", 40)))
		for step := range 3 {
			h.assistantTask(fmt.Sprintf("c%d_%d", turn, step), strings.Repeat("output ", 100))
		}
	}
	var params strings.Builder
	params.WriteString(`{"input":{},"output":{"messages":[`)
	for i, m := range h.msgs {
		if i > 0 {
			params.WriteByte(',')
		}
		params.Write(m)
	}
	params.WriteString(`]}}`)
	raw := []byte(params.String())
	b.Run("transform", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Dispatch(b.Context(), rpc.Request{Method: "chat.messages.transform", Params: raw}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("accounting", func(b *testing.B) {
		p, err := decodeTransform(false, raw)
		if err != nil {
			b.Fatal(err)
		}
		hist := s.transform.bases.Full(p.Output.Messages)
		for i := range hist.Entries {
			s.transform.derive(&hist.Entries[i]) // the session each message names, as the transform reads it
		}
		per := s.transform.bases.PerMessage(len(hist.Entries))
		for b.Loop() {
			s.transform.notePromptMessages(p, hist.Entries, per)
		}
	})
}

// OpenCode reports an assistant message when it starts, with every token
// count 0, and again with its usage when it ends. The first is no
// request: counted, its cache read of 0 after one of 900 was a bust (a
// slip no test caught); it is skipped, and the message's real usage
// decides.
func TestCacheAllZeroUsageIsNoBust(t *testing.T) {
	s := newServer(t, nil)
	usage := func(message string, input, read int) {
		call(t, s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "message.updated",
			"properties": map[string]any{"info": map[string]any{"id": message, "sessionID": "ses_z", "role": "assistant",
				"providerID": "fake", "modelID": "m", "tokens": map[string]any{"input": input, "output": 0,
					"cache": map[string]any{"read": read, "write": 0}}}}}}})
	}
	usage("msg_1", 1000, 0)
	usage("msg_2", 100, 900)
	usage("msg_3", 0, 0) // started
	list := s.store.PromptCache().List()
	require.Len(t, list, 1)
	assert.Equal(t, int64(2), list[0].Requests, "the started message is no request yet")
	assert.Empty(t, list[0].Busts)
	usage("msg_3", 50, 1000) // ended: its cache read grew
	list = s.store.PromptCache().List()
	assert.Equal(t, int64(3), list[0].Requests)
	assert.Empty(t, list[0].Busts)
	assert.Equal(t, int64(1900), list[0].CacheReadTokens)
}
