package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/sessions"
)

// A switch model.failed asks for is recorded pending until the session is
// seen on the fallback; a later attempt still on the model it left asks
// again in place of that record; the same attempt (or a failure naming
// none) reported again is one switch (PROTOCOL.md 4.8).
func TestModelFailedAttempts(t *testing.T) {
	entry := map[string]any{"model": "fake/fake-model-2", "fallbackChain": []any{map[string]any{"providers": []string{"fake"}, "model": "fake-model-3"}}}
	// step: a failure of the child on model at attempt (0: none given), or
	// with selected set, OpenCode 2's session.model.selected for it.
	type step struct {
		model    string
		attempt  int
		abort    bool // no inPlace: 1.x's abort-and-rescue path
		selected string
		want     string // the action
	}
	const m2, m3 = "fake-model-2", "fake-model-3"
	tests := []struct {
		name  string
		steps []step
		want  []string // the switch records, "from->to" with " pending" when pending
		model string   // the child's model decision after the steps ("" none)
	}{
		{"a later attempt on the model it left is switched again, in place of its record",
			[]step{{model: m2, attempt: 2, want: "switch"}, {model: m2, attempt: 3, want: "switch"}, {model: m2, attempt: 4, want: "switch"}},
			[]string{"m2->m3 pending@4"}, ""},
		{"the same attempt reported twice is one switch",
			[]step{{model: m2, attempt: 2, want: "switch"}, {model: m2, attempt: 2, want: "none"}},
			[]string{"m2->m3 pending@2"}, ""},
		{"a failure naming no attempt, reported twice, is one switch",
			[]step{{model: m2, want: "switch"}, {model: m2, want: "none"}},
			[]string{"m2->m3 pending@0"}, ""},
		{"a switch seen applied makes the decision; it is not asked again",
			[]step{{model: m2, attempt: 2, want: "switch"}, {selected: m3}, {model: m2, want: "none"}},
			[]string{"m2->m3@2"}, "fake/fake-model-3"},
		{"a selected model that is not the switch's leaves it pending",
			[]step{{model: m2, attempt: 2, want: "switch"}, {selected: m2}},
			[]string{"m2->m3 pending@2"}, ""},
		{"a failure on the fallback shows the switch applied; the next switch is a new one",
			[]step{{model: m2, attempt: 2, want: "switch"}, {model: m3, attempt: 3, want: "switch"}},
			[]string{"m2->m3@2", "m3->m1 pending@3"}, "fake/fake-model-3"},
		{"1.x: a later retry after an abort that never came is aborted again, one record",
			[]step{{model: m2, attempt: 1, abort: true, want: "abort"}, {model: m2, attempt: 2, abort: true, want: "abort"}, {model: m2, abort: true, want: "none"}},
			[]string{"m2->m3 pending@2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := v2ModelRig(t, entry)
			for i, st := range tt.steps {
				if st.selected != "" {
					notify(t, r.s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.model.selected",
						"properties": map[string]any{"sessionID": "ses_c", "model": map[string]any{"providerID": "fake", "id": st.selected}}}}})
					continue
				}
				p := map[string]any{"sessionID": "ses_c", "agent": "explore", "parentID": "ses_p", "inPlace": !st.abort,
					"model": map[string]any{"providerID": "fake", "modelID": st.model},
					"error": map[string]any{"statusCode": 429, "name": "provider.rate-limit", "message": "Rate limit reached for " + st.model}}
				if st.attempt > 0 {
					p["attempt"] = st.attempt
				}
				r.now = r.now.Add(2e9)
				assert.Equal(t, st.want, r.failed(p).Action, "step %d", i)
			}
			assert.Equal(t, tt.want, switchLines(r.s.Store().Tracked().Switches("ses_c")))
			d, ok := r.s.store.(*sessions.Store).Tracked().ModelDecision("ses_c")
			if tt.model == "" {
				assert.False(t, ok && d.Changed, "no decision says the fallback before the switch applied: %+v", d)
			} else {
				require.True(t, ok)
				assert.Equal(t, tt.model, d.Model)
				assert.True(t, d.Changed)
			}
		})
	}
}

func switchLines(list []sessions.Switch) []string {
	var out []string
	short := map[string]string{"fake/fake-model-2": "m2", "fake/fake-model-3": "m3", "fake/fake-model": "m1"}
	for _, sw := range list {
		p := ""
		if sw.Pending {
			p = " pending"
		}
		out = append(out, fmt.Sprintf("%s->%s%s@%d", short[sw.From], short[sw.To], p, sw.Attempt))
	}
	return out
}

// A switch asked again is not counted against maxInPlaceSwitches: a child
// whose every switch needed asking twice still gets its three.
func TestModelFailedAskedAgainIsNotCounted(t *testing.T) {
	models := []string{"m1", "m2", "m3", "m4", "m5"}
	var chain []any
	var available []string
	for _, m := range models {
		available = append(available, "fake/"+m)
		if m != "m1" {
			chain = append(chain, map[string]any{"providers": []string{"fake"}, "model": m})
		}
	}
	r := newFallbackRig(t, map[string]any{"taskTools": []string{"subagent"}, "subagents": []string{"explore"},
		"agentModels": map[string]any{"explore": map[string]any{"model": "fake/m1", "fallbackChain": chain}}})
	notify(t, r.s, "providers.update", map[string]any{"connectedProviders": []string{"fake"}, "availableModels": available, "defaultModel": "fake/m1"})
	var switched []string
	attempt := 1
	for _, m := range models {
		for range 2 { // each switch is lost once and asked again
			attempt++
			res := r.failed(map[string]any{"sessionID": "ses_c", "agent": "explore", "parentID": "ses_p", "inPlace": true, "attempt": attempt,
				"model": map[string]any{"providerID": "fake", "modelID": m}, "error": map[string]any{"statusCode": 429, "message": "Rate limit reached"}})
			if res.Action == "switch" {
				switched = append(switched, fmt.Sprintf("%s->%s", m, res.Fallback.ModelID))
			}
		}
	}
	assert.Equal(t, []string{"m1->m2", "m1->m2", "m2->m3", "m2->m3", "m3->m4", "m3->m4"}, switched)
	assert.Len(t, r.s.Store().Tracked().Switches("ses_c"), 3)
	res, err := r.s.Dispatch(context.Background(), rpc.Request{Method: "status"})
	require.NoError(t, err)
	var st struct {
		Models struct{ Switches int } `json:"models"`
	}
	require.NoError(t, json.Unmarshal(mustJSON(t, res), &st))
	assert.Equal(t, 3, st.Models.Switches, "status counts a switch asked again once")
}

// OpenCode 2's session.model.selected is an event, not awaited: the
// subagent call that switched its child may end before it comes. The call
// leaves the child on its model while the switch is pending; the event
// then applies the switch, and the child runs on the fallback.
func TestSwitchAppliedAfterTheCallEnded(t *testing.T) {
	entry := map[string]any{"model": "fake/fake-model-2", "fallbackChain": []any{map[string]any{"providers": []string{"fake"}, "model": "fake-model-3"}}}
	r := v2ModelRig(t, entry)
	r.subagentBefore("call_1", map[string]any{"agent": "explore", "description": "d", "prompt": "p"})
	res := r.failed(map[string]any{"sessionID": "ses_c", "agent": "explore", "parentID": "ses_p", "inPlace": true, "attempt": 2,
		"model": map[string]any{"providerID": "fake", "modelID": "fake-model-2"}, "error": map[string]any{"statusCode": 429, "message": "Rate limit"}})
	require.Equal(t, "switch", res.Action)
	r.subagentAfter("call_1", "", "<subagent sessionID=\"ses_c\" state=\"completed\">\ndone\n</subagent>")
	tracked := r.s.store.(*sessions.Store).Tracked()
	assert.Equal(t, "fake/fake-model-2", tracked.Running("ses_c"), "pending: the child is on the call's model")
	d, _ := tracked.ModelDecision("ses_c")
	assert.Equal(t, "fake/fake-model-2", d.Model)

	notify(t, r.s, "event", map[string]any{"input": map[string]any{"event": map[string]any{"type": "session.model.selected",
		"properties": map[string]any{"sessionID": "ses_c", "model": map[string]any{"providerID": "fake", "id": "fake-model-3"}}}}})
	assert.Equal(t, []string{"m2->m3@2"}, switchLines(tracked.Switches("ses_c")))
	assert.Equal(t, "fake/fake-model-3", tracked.Running("ses_c"), "applied: the child runs on the fallback")
	d, _ = tracked.ModelDecision("ses_c")
	assert.Equal(t, "fake/fake-model-3", d.Model)
	assert.True(t, d.Changed)
}
