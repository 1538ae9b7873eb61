package handlers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subagent call's execute.after on OpenCode 2 (subagentDone): a child
// switched off the call's model during the call (model.failed inPlace)
// keeps the switch's model and decision; a child whose latest switch left
// another model runs on the call's model, with the call's decision (issue
// 49 item 6: only the shim's tests caught a slip in this check).
func TestSubagentDoneKeepsAnInPlaceSwitch(t *testing.T) {
	r := v2ModelRig(t, map[string]any{"model": "fake/fake-model-2", "fallbackModels": []string{"fake/fake-model-3"}})
	args := map[string]any{"agent": "explore", "description": "d", "prompt": "p"}
	require.Len(t, modelOps(r.subagentBefore("call_1", args)), 1)
	res := r.failed(map[string]any{"sessionID": "ses_c1", "model": map[string]any{"providerID": "fake", "modelID": "fake-model-2"},
		"error": map[string]any{"statusCode": 429, "message": "Rate limit reached"}, "inPlace": true, "agent": "explore", "parentID": "ses_p"})
	require.Equal(t, "switch", res.Action)
	r.subagentAfter("call_1", "", "<subagent sessionID=\"ses_c1\" state=\"completed\">\ndone\n</subagent>")

	tracked := r.s.Store().Tracked()
	assert.Equal(t, "fake/fake-model-3", tracked.Running("ses_c1"), "the call finished on the fallback it was switched to")
	d, ok := tracked.ModelDecision("ses_c1")
	require.True(t, ok)
	assert.Equal(t, "fake/fake-model-3", d.Model, "the switch's decision stands, not the call's")
	require.Len(t, tracked.Switches("ses_c1"), 1)

	// The next call names its own model: the child's latest switch left
	// fake-model-2, not this call's model, so the child runs on the call's.
	resume := map[string]any{"agent": "explore", "description": "d", "prompt": "p", "sessionID": "ses_c1", "model": "fake/fake-model"}
	require.Empty(t, modelOps(r.subagentBefore("call_2", resume)))
	r.subagentAfter("call_2", "", "<subagent sessionID=\"ses_c1\" state=\"completed\">\ndone\n</subagent>")
	assert.Equal(t, "fake/fake-model", tracked.Running("ses_c1"))
}
