package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigTypoOverPipes: over the real binary's pipes, a typo in the
// config comes back as a warning in initialize's result (and in the log),
// and the rest of the config applies: the custom reminder text reaches a
// reply.
func TestConfigTypoOverPipes(t *testing.T) {
	for _, fr := range framings {
		t.Run(fr.name, func(t *testing.T) {
			p := start(t, fr.header)
			r := p.call("initialize", map[string]any{"protocolVersion": 1, "config": map[string]any{
				"cachestable":   false,
				"maxParents":    "many",
				"phaseReminder": map[string]any{"text": "<r>Plan first.</r>"},
			}})
			require.Nil(t, r.Error, "a config with a typo is accepted")
			var init struct {
				Warnings []string `json:"warnings"`
			}
			require.NoError(t, json.Unmarshal(r.Result, &init))
			assert.Equal(t, []string{
				`config.cachestable: unknown member, ignored (did you mean "cacheStable"?)`,
				"config.maxParents must be an integer, got a string; using the default 1000",
			}, init.Warnings)

			patch := p.hookCall("chat.messages.transform", `{"input":{},"output":{"messages":[`+
				`{"info":{"id":"m1","role":"user","agent":"orchestrator","sessionID":"ses_o"},"parts":[{"type":"text","text":"hi"}]}]}}`)
			assert.JSONEq(t, `[{"op":"add","path":"/messages/0/parts/-","value":{"type":"text","text":"<r>Plan first.</r>","synthetic":true}}]`, patch)

			var st struct {
				CacheStable *bool `json:"cacheStable"`
			}
			r = p.call("status", nil)
			require.Nil(t, r.Error)
			require.NoError(t, json.Unmarshal(r.Result, &st))
			require.NotNil(t, st.CacheStable)
			assert.True(t, *st.CacheStable, "the typo'd member did not apply: cacheStable keeps its default")
			p.stdin.Close()
			assert.Equal(t, 0, p.waitExit())
			assert.Contains(t, p.stderr.String(), `config.cachestable: unknown member, ignored`, "the warning is logged too")
		})
	}
}

// Over the real binary's pipes (issue 49 item 5): a look-alike key comes
// back quoted with its letter escaped, in initialize's warnings and in the
// log, and a managedAgents of 200,000 names makes no log line over 64 KB.
func TestConfigLookAlikeAndHugeOverPipes(t *testing.T) {
	agents := make([]string, 200_000)
	for i := range agents {
		agents[i] = fmt.Sprintf("agent-%d", i)
	}
	p := start(t, false)
	r := p.call("initialize", map[string]any{"protocolVersion": 1, "config": map[string]any{
		"maxP\u0430rents": 3,
		"managedAgents":   agents,
	}})
	require.Nil(t, r.Error)
	var init struct {
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &init))
	assert.Equal(t, []string{`config."maxP\u0430rents": unknown member, ignored (did you mean "maxParents"?)`}, init.Warnings)
	p.stdin.Close()
	assert.Equal(t, 0, p.waitExit())
	log := p.stderr.String()
	assert.Contains(t, log, `"warning":"config.\"maxP\\u0430rents\": unknown member, ignored`)
	assert.Contains(t, log, `"message":"initialized"`)
	for _, line := range strings.SplitAfter(log, "\n") {
		assert.LessOrEqual(t, len(line), 64<<10, "%.200s", line)
	}
}
