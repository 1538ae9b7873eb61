package handlers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OpenCode 2's subagent call carries the child's model (PROTOCOL.md 4.7
// and 4.8 on v2): tool.execute.before sets its `model` input from
// agentModels, skips a cooling model, keeps a model the call names, and a
// failed child's rate limit cools the model it ran on.
func v2ModelRig(t *testing.T, entry map[string]any) *fallbackRig {
	r := newFallbackRig(t, map[string]any{"cacheStable": false, "taskTools": []string{"subagent"},
		"primaryAgents": []string{"build"}, "subagents": []string{"explore", "general"},
		"agentModels": map[string]any{"explore": entry}})
	// The parent is build's session (managed), as the shim's bridge shows it.
	call(t, r.s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": "build"},
		"output": map[string]any{"message": map[string]any{}, "parts": []any{}}})
	return r
}

func (r *fallbackRig) subagentBefore(callID string, args map[string]any) []map[string]any {
	return call(r.t, r.s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "subagent", "sessionID": "ses_p", "callID": callID},
		"output": map[string]any{"args": args}})
}

func (r *fallbackRig) subagentAfter(callID, status, output string) []map[string]any {
	in := map[string]any{"tool": "subagent", "sessionID": "ses_p", "callID": callID}
	if status != "" {
		in["status"] = status
	}
	return call(r.t, r.s, "tool.execute.after", map[string]any{"input": in, "output": map[string]any{"output": output}})
}

func modelOps(ops []map[string]any) []map[string]any {
	var out []map[string]any
	for _, op := range ops {
		if op["path"] == "/args/model" {
			out = append(out, op)
		}
	}
	return out
}

func TestSubagentModelV2(t *testing.T) {
	setModel := func(m string) []map[string]any {
		return []map[string]any{{"op": "add", "path": "/args/model", "value": m}}
	}
	tests := []struct {
		name    string
		entry   map[string]any
		args    map[string]any
		cooling []string
		want    []map[string]any
	}{
		{"the entry's model", map[string]any{"model": "fake/fake-model-2"},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p"}, nil, setModel("fake/fake-model-2")},
		{"its variant after #", map[string]any{"model": "fake/fake-model-2 high"},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p"}, nil, setModel("fake/fake-model-2#high")},
		{"on a resume too", map[string]any{"model": "fake/fake-model-2"},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p", "sessionID": "ses_x"}, nil, setModel("fake/fake-model-2")},
		{"an agent without an entry: v2 chooses", map[string]any{"model": "fake/fake-model-2"},
			map[string]any{"agent": "general", "description": "d", "prompt": "p"}, nil, nil},
		{"an entry without a model: v2's own choice is not known, so it stays", map[string]any{"fallbackModels": []string{"fake/fake-model-3"}},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p"}, nil, nil},
		{"a model the call names is kept", map[string]any{"model": "fake/fake-model-2"},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p", "model": "fake/fake-model"}, nil, nil},
		{"an entry on a model that is not there falls to its fallback", map[string]any{"model": "gone/model", "fallbackModels": []string{"fake/fake-model-3"}},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p"}, nil, setModel("fake/fake-model-3")},
		{"a cooling model is skipped for the entry's fallback", map[string]any{"model": "fake/fake-model-2", "fallbackModels": []string{"fake/fake-model-3"}},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p"}, []string{"fake/fake-model-2"}, setModel("fake/fake-model-3")},
		{"runtimeFallback false: the cooling model stays", map[string]any{"model": "fake/fake-model-2", "fallbackModels": []string{"fake/fake-model-3"}, "runtimeFallback": false},
			map[string]any{"agent": "explore", "description": "d", "prompt": "p"}, []string{"fake/fake-model-2"}, setModel("fake/fake-model-2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := v2ModelRig(t, tt.entry)
			for _, m := range tt.cooling {
				r.failed(map[string]any{"sessionID": "ses_other", "model": m, "error": map[string]any{"message": "Rate limit reached", "statusCode": 429}})
			}
			assert.Equal(t, tt.want, modelOps(r.subagentBefore("call_1", tt.args)))
		})
	}

	t.Run("1.x's task tool gets no model argument", func(t *testing.T) {
		r := newFallbackRig(t, map[string]any{"agentModels": map[string]any{"explore": map[string]any{"model": "fake/fake-model-2"}}})
		ops := call(t, r.s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_p", "callID": "c"},
			"output": map[string]any{"args": map[string]any{"subagent_type": "explore", "description": "d", "prompt": "p"}}})
		assert.Empty(t, ops)
	})

	t.Run("the child keeps the decision; its rate limit cools the model and the next call falls back", func(t *testing.T) {
		r := v2ModelRig(t, map[string]any{"model": "fake/fake-model-2", "fallbackModels": []string{"fake/fake-model-3"}})
		args := map[string]any{"agent": "explore", "description": "d", "prompt": "p"}
		require.Equal(t, setModel("fake/fake-model-2"), modelOps(r.subagentBefore("call_1", args)))
		r.subagentAfter("call_1", "error", "Subagent failed (sessionID: ses_c1): Rate limit reached for fake-model-2")
		assert.Equal(t, "fake/fake-model-2", r.s.Store().Tracked().Running("ses_c1"))
		assert.Equal(t, "ses_p", r.s.Store().Tracked().Parent("ses_c1"))
		h, ok := r.s.Store().ProviderHealth().Of("fake/fake-model-2")
		require.True(t, ok, "the failed child's model has health")
		assert.True(t, h.Cooling(r.now))
		assert.Equal(t, "rate-limit", h.Class)

		// The resume (by the alias the guidance names) runs on the fallback, and the child keeps the switch.
		ops := r.subagentBefore("call_2", map[string]any{"agent": "explore", "description": "d", "prompt": "p", "sessionID": "exp-1"})
		assert.Equal(t, setModel("fake/fake-model-3"), modelOps(ops))
		assert.Contains(t, ops, map[string]any{"op": "replace", "path": "/args/sessionID", "value": "ses_c1"})
		r.subagentAfter("call_2", "", "<subagent sessionID=\"ses_c1\" state=\"completed\">\ndone\n</subagent>")
		assert.Equal(t, "fake/fake-model-3", r.s.Store().Tracked().Running("ses_c1"))
		sw := r.s.Store().Tracked().Switches("ses_c1")
		require.Len(t, sw, 1)
		assert.Equal(t, "fake/fake-model-2", sw[0].From)
		assert.Equal(t, "fake/fake-model-3", sw[0].To)

		// Cooled down, the entry's model again.
		r.now = r.now.Add(2 * time.Hour)
		assert.Equal(t, setModel("fake/fake-model-2"), modelOps(r.subagentBefore("call_3", args)))
	})

	t.Run("a failure that is not a provider's cools nothing", func(t *testing.T) {
		r := v2ModelRig(t, map[string]any{"model": "fake/fake-model-2"})
		r.subagentBefore("call_1", map[string]any{"agent": "explore", "description": "d", "prompt": "p"})
		r.subagentAfter("call_1", "error", "Subagent failed (sessionID: ses_c1): prompt is too long")
		_, ok := r.s.Store().ProviderHealth().Of("fake/fake-model-2")
		assert.False(t, ok)
	})
}
