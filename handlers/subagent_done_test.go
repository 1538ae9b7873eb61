package handlers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subagent call's execute.after on OpenCode 2 (subagentDone): a child
// switched off the call's model during the call (model.failed inPlace),
// the switch seen applied, keeps the switch's model and decision; one
// whose switch never applied ran on the call's model; a child whose
// latest switch left another model runs on the call's model (issue 49
// item 6: only the shim's tests caught a slip in this check).
func TestSubagentDoneKeepsAnInPlaceSwitch(t *testing.T) {
	done := "<subagent sessionID=\"ses_c1\" state=\"completed\">\ndone\n</subagent>"
	for _, applied := range []bool{true, false} {
		name := "the switch applied"
		if !applied {
			name = "the switch never applied"
		}
		t.Run(name, func(t *testing.T) {
			r := v2ModelRig(t, map[string]any{"model": "fake/fake-model-2", "fallbackModels": []string{"fake/fake-model-3"}})
			args := map[string]any{"agent": "explore", "description": "d", "prompt": "p"}
			require.Len(t, modelOps(r.subagentBefore("call_1", args)), 1)
			res := r.failed(map[string]any{"sessionID": "ses_c1", "model": map[string]any{"providerID": "fake", "modelID": "fake-model-2"},
				"error": map[string]any{"statusCode": 429, "message": "Rate limit reached"}, "inPlace": true, "agent": "explore", "parentID": "ses_p"})
			require.Equal(t, "switch", res.Action)
			if applied {
				notify(t, r.s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.model.selected",
					"properties": map[string]any{"sessionID": "ses_c1", "model": map[string]any{"providerID": "fake", "id": "fake-model-3"}}}}})
			}
			r.subagentAfter("call_1", "", done)

			tracked := r.s.Store().Tracked()
			sw := tracked.Switches("ses_c1")
			require.Len(t, sw, 1)
			d, ok := tracked.ModelDecision("ses_c1")
			require.True(t, ok)
			if !applied {
				assert.Equal(t, "fake/fake-model-2", tracked.Running("ses_c1"), "the child ran on the call's model")
				assert.Equal(t, "fake/fake-model-2", d.Model, "the call's decision")
				assert.True(t, sw[0].Pending, "the switch's record stays pending")
				return
			}
			assert.Equal(t, "fake/fake-model-3", tracked.Running("ses_c1"), "the call finished on the fallback it was switched to")
			assert.Equal(t, "fake/fake-model-3", d.Model, "the switch's decision stands, not the call's")

			// The next call names its own model: the child's latest switch
			// left fake-model-2, not this call's model, so the child runs on
			// the call's.
			resume := map[string]any{"agent": "explore", "description": "d", "prompt": "p", "sessionID": "ses_c1", "model": "fake/fake-model"}
			require.Empty(t, modelOps(r.subagentBefore("call_2", resume)))
			r.subagentAfter("call_2", "", done)
			assert.Equal(t, "fake/fake-model", tracked.Running("ses_c1"))
		})
	}
}
