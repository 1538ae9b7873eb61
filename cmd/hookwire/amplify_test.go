package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAmplifiedSyncMemory is issue 23's amplified incremental requests
// against the real process (built without -race, so its RSS is its own):
// over a 5,000-message base, 1,000 items keeping all of it (a 28 KB
// request that once stood for 5 million messages and killed the sidecar),
// a message's 1,000 parts kept 2,000 times, and 100 keeps of all without
// reapply (a 2.9 KB request that once got a 49.7 MB reply). Each gets
// -32602; the sidecar stays up, its base intact, and its peak RSS (VmHWM)
// under the documented ceiling.
func TestAmplifiedSyncMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and drives a plain binary")
	}
	p := startBin(t, buildPlain(t), false, "--framing", "line", "--log-level", "warn")
	p.initialize()

	var msgs []string
	for i := range 5000 {
		role, agent, parts := "assistant", "", `[{"type":"text","text":"done"}]`
		if i%2 == 0 {
			role, agent, parts = "user", `,"agent":"orchestrator"`, fmt.Sprintf(`[{"type":"text","text":"turn %d"}]`, i)
		}
		if i == 1 {
			parts = "[" + strings.Repeat(`{"type":"text","text":"p"},`, 999) + `{"type":"text","text":"p"}]`
		}
		msgs = append(msgs, fmt.Sprintf(`{"info":{"id":"m%d","role":%q%s,"sessionID":"ses_1"},"parts":%s}`, i, role, agent, parts))
	}
	full := p.call("chat.messages.transform", json.RawMessage(`{"input":{},"output":{"messages":[`+strings.Join(msgs, ",")+`]},"sync":{"session":"ses_1"}}`))
	require.Nil(t, full.Error)
	var held struct {
		Base string `json:"base"`
	}
	require.NoError(t, json.Unmarshal(full.Result, &held))
	require.NotEmpty(t, held.Base)
	before := vmHWMKB(p.cmd.Process.Pid)

	incremental := func(reapply bool, items string) string {
		return fmt.Sprintf(`{"input":{},"sync":{"session":"ses_1","base":%q,"reapply":%v,"messages":[%s]}}`, held.Base, reapply, items)
	}
	repeat := func(item string, n int) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	requests := []struct {
		name, params string
	}{
		{"5,000 messages kept 1,000 times", incremental(true, repeat(`{"keep":0,"count":5000}`, 1000))},
		{"a message's 1,000 parts kept 2,000 times", incremental(true,
			`{"keep":0,"count":1},{"edit":1,"parts":[`+repeat(`{"keep":0,"count":1000}`, 2000)+`]}`)},
		{"100 keeps of all, without reapply", incremental(false, repeat(`{"keep":0,"count":5000}`, 100))},
	}
	for _, r := range requests {
		t.Logf("%s: a %d-byte request", r.name, len(r.params))
		reply := p.call("chat.messages.transform", json.RawMessage(r.params))
		require.NotNil(t, reply.Error, "%s: refused", r.name)
		assert.Equal(t, int64(-32602), reply.Error.Code, r.name)
		assert.Contains(t, reply.Error.Message, "budget", r.name)
	}

	// Alive, and the base serves as before.
	again := p.call("chat.messages.transform", json.RawMessage(incremental(false, `{"keep":0,"count":5000}`)))
	require.Nil(t, again.Error)
	assert.JSONEq(t, string(full.Result), string(again.Result), "the same history, the same reply and base")
	peak := vmHWMKB(p.cmd.Process.Pid)
	t.Logf("peak RSS: %d KiB after the full form, %d KiB after the amplified requests (ceiling %d KiB)", before, peak, soakMemoryCeilingKB)
	require.Positive(t, peak, "VmHWM readable")
	assert.Less(t, peak, soakMemoryCeilingKB, "peak RSS under the documented ceiling")
}
