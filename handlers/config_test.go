package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/rpc"
)

// TestInitializeWarnings: warnings come back in initialize's result, and
// are absent from it when there are none.
func TestInitializeWarnings(t *testing.T) {
	init := func(config string) map[string]any {
		s := New(Options{Version: "test", Log: zerolog.Nop()})
		res, err := s.Dispatch(context.Background(), rpc.Request{Method: "initialize",
			Params: json.RawMessage(`{"protocolVersion":1,"config":` + config + `}`)})
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(mustJSON(t, res), &out))
		return out
	}
	out := init(`{"cachestable":false,"maxParents":1.5}`)
	assert.Equal(t, []any{`config.cachestable: unknown member, ignored (did you mean "cacheStable"?)`,
		"config.maxParents must be an integer, got 1.5; using the default 1000"}, out["warnings"])
	assert.NotContains(t, init(`{"cacheStable":false}`), "warnings")
	out = init(`{"maxParents":1,"maxParents":2}`)
	assert.Equal(t, []any{"config.maxParents: given more than once; the last one applies"}, out["warnings"],
		"a duplicate inside config does not refuse initialize")
}

// TestAgentsUpdate: agents.update replaces the subagents and, unless the
// config named the managed agents, the default managed set.
func TestAgentsUpdate(t *testing.T) {
	rows := []struct {
		name          string
		config        map[string]any
		update        string
		managedBefore []string
		managedAfter  []string
		subagents     []string
	}{
		{"late primary agents become the managed set", nil,
			`{"primaryAgents":["build","plan"],"subagents":["explore","general"]}`,
			[]string{"orchestrator"}, []string{"build", "plan"}, []string{"explore", "general"}},
		{"a new list replaces the one from initialize", map[string]any{"primaryAgents": []string{"build"}, "subagents": []string{"a"}},
			`{"primaryAgents":["plan"],"subagents":["b"]}`,
			[]string{"build"}, []string{"plan"}, []string{"b"}},
		{"subagents alone leave the managed set", map[string]any{"primaryAgents": []string{"build"}},
			`{"subagents":["explore"]}`, []string{"build"}, []string{"build"}, []string{"explore"}},
		{"no primary agents: back to orchestrator", map[string]any{"primaryAgents": []string{"build"}},
			`{"primaryAgents":[]}`, []string{"build"}, []string{"orchestrator"}, []string{}},
		{"null is absent", map[string]any{"subagents": []string{"a"}},
			`{"primaryAgents":null,"subagents":null}`, []string{"orchestrator"}, []string{"orchestrator"}, []string{"a"}},
		{"blank names are dropped", nil,
			`{"primaryAgents":["build",""],"subagents":[" ","explore"]}`,
			[]string{"orchestrator"}, []string{"build"}, []string{"explore"}},
		{"explicit managedAgents stay", map[string]any{"managedAgents": []string{"lead"}},
			`{"primaryAgents":["build"],"subagents":["explore"]}`, []string{"lead"}, []string{"lead"}, []string{"explore"}},
		{"explicit orchestratorAgent stays", map[string]any{"orchestratorAgent": "boss"},
			`{"primaryAgents":["build"]}`, []string{"boss"}, []string{"boss"}, []string{}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := newServer(t, row.config)
			assert.Equal(t, row.managedBefore, s.cfg.ManagedSet())
			_, err := s.Dispatch(context.Background(), rpc.Request{Method: "agents.update", Params: json.RawMessage(row.update), Notification: true})
			require.NoError(t, err)
			assert.Equal(t, row.managedAfter, s.cfg.ManagedSet())
			assert.Equal(t, row.subagents, s.cfg.Subagents)
		})
	}

	t.Run("bad params change nothing", func(t *testing.T) {
		s := newServer(t, map[string]any{"subagents": []string{"a"}})
		for _, params := range []string{`{"subagents":"explore"}`, `{"primaryAgents":[1]}`, `[]`, ``} {
			_, err := s.Dispatch(context.Background(), rpc.Request{Method: "agents.update", Params: json.RawMessage(params)})
			var rerr *rpc.Error
			require.ErrorAs(t, err, &rerr, params)
			assert.Equal(t, rpc.CodeInvalidParams, rerr.Code)
		}
		assert.Equal(t, []string{"a"}, s.cfg.Subagents)
		assert.Equal(t, []string{"orchestrator"}, s.cfg.ManagedSet())
	})

	t.Run("late agents reach guidance and aliases", func(t *testing.T) {
		s := newServer(t, nil)
		_, err := s.Dispatch(context.Background(), rpc.Request{Method: "agents.update",
			Params: json.RawMessage(`{"primaryAgents":["build"],"subagents":["explore","general"]}`)})
		require.NoError(t, err)
		call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_b", "agent": "build"}})
		delegate(t, s, "ses_b", "c1", "general", "ses_g1", "")
		got := call(t, s, "tool.execute.before", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_b", "callID": "c2"},
			"output": map[string]any{"args": map[string]any{"subagent_type": "general", "task_id": "gen-1"}}})
		assert.Equal(t, []map[string]any{{"op": "replace", "path": "/args/task_id", "value": "ses_g1"}}, got)
		got = call(t, s, "tool.execute.after", map[string]any{"input": map[string]any{"tool": "task", "sessionID": "ses_b", "callID": "c9"},
			"output": map[string]any{"output": "[ERROR] Unknown agent: explorr"}})
		require.Len(t, got, 1)
		assert.Contains(t, got[0]["value"], "Available: explore, general")

		res, err := s.Dispatch(context.Background(), rpc.Request{Method: "status"})
		require.NoError(t, err)
		var st struct {
			Agents map[string][]string `json:"agents"`
		}
		require.NoError(t, json.Unmarshal(mustJSON(t, res), &st))
		assert.Equal(t, map[string][]string{"managed": {"build"}, "reminder": {"orchestrator"},
			"primary": {"build"}, "subagents": {"explore", "general"}}, st.Agents, "status shows the agents as they stand")
	})
}

// stockHistory is a build session's history as stock OpenCode sends it:
// every user message carries its agent.
func stockHistory(session, agent string, texts ...string) []map[string]any {
	var msgs []map[string]any
	for i, text := range texts {
		msgs = append(msgs, map[string]any{
			"info":  map[string]any{"id": fmt.Sprintf("msg_%d", i), "role": "user", "agent": agent, "sessionID": session},
			"parts": []any{map[string]any{"type": "text", "text": text}}})
	}
	return msgs
}

// TestReminderAgents: the phase reminder goes to the reminder agents'
// messages, in both modes; managed agents get the sessions block whether
// or not they get the reminder.
func TestReminderAgents(t *testing.T) {
	rows := []struct {
		name     string
		config   map[string]any
		agent    string // the session's agent, and its messages' info.agent
		noAgent  bool   // the messages carry no info.agent
		reminder bool
		block    bool
	}{
		{"build by default: block, no reminder", map[string]any{"primaryAgents": []string{"build", "plan"}}, "build", false, false, true},
		{"orchestrator by default: both", nil, "orchestrator", false, true, true},
		{"build among the reminder agents", map[string]any{"primaryAgents": []string{"build"}, "phaseReminder": map[string]any{"agents": []string{"build"}}},
			"build", false, true, true},
		{"reminder agent that is not managed: reminder only", map[string]any{"managedAgents": []string{"build"}}, "orchestrator", false, true, false},
		{"renamed orchestrator keeps its reminder", map[string]any{"orchestratorAgent": "lead"}, "lead", false, true, true},
		{"subagent session: neither", map[string]any{"primaryAgents": []string{"build"}}, "explore", false, false, false},
		{"no info.agent, orchestrator session", nil, "orchestrator", true, true, true},
		{"no info.agent, build session (cache-stable goes by the session)", map[string]any{"primaryAgents": []string{"build"}}, "build", true, false, true},
	}
	for _, stable := range []bool{true, false} {
		for _, row := range rows {
			t.Run(fmt.Sprintf("cacheStable=%v/%s", stable, row.name), func(t *testing.T) {
				config := map[string]any{"cacheStable": stable}
				for k, v := range row.config {
					config[k] = v
				}
				s := newServer(t, config)
				call(t, s, "chat.message", map[string]any{"input": map[string]any{"sessionID": "ses_p", "agent": row.agent}})
				delegate(t, s, "ses_p", "c1", "explore", "ses_e1", "")
				msgs := stockHistory("ses_p", row.agent, "first", "second")
				if row.noAgent {
					for _, m := range msgs {
						delete(m["info"].(map[string]any), "agent")
					}
				}
				ops := call(t, s, "chat.messages.transform", map[string]any{"input": map[string]any{}, "output": map[string]any{"messages": msgs}})
				var reminded, blocked bool
				for _, op := range ops {
					text := op["value"].(map[string]any)["text"].(string)
					reminded = reminded || strings.Contains(text, "<internal_reminder>")
					blocked = blocked || strings.Contains(text, "exp-1")
				}
				sys := call(t, s, "chat.system.transform", map[string]any{"input": map[string]any{"sessionID": "ses_p"},
					"output": map[string]any{"system": []string{}}})
				for _, op := range sys {
					blocked = blocked || strings.Contains(op["value"].(string), "exp-1")
				}
				wantReminder := row.reminder
				if !stable && row.noAgent {
					wantReminder = true // 4.3: a last user message without agent gets it
				}
				assert.Equal(t, wantReminder, reminded, "reminder")
				assert.Equal(t, row.block, blocked, "sessions block")
			})
		}
	}
}
