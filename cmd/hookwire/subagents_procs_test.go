package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subagentEvent sends one of OpenCode's events to a serving sidecar.
func (p *proc) subagentEvent(typ string, props map[string]any) {
	p.t.Helper()
	p.send("event", nil, map[string]any{"input": map[string]any{"event": map[string]any{"type": typ, "properties": props}}})
}

type subagentsPage struct {
	Parent struct {
		Subagents int `json:"subagents"`
		Running   int `json:"running"`
		Total     struct {
			Cost   float64 `json:"cost"`
			Tokens struct {
				Input int64 `json:"input"`
			} `json:"tokens"`
		} `json:"total"`
	} `json:"parent"`
	Subagents []struct {
		SessionID string  `json:"sessionID"`
		State     string  `json:"state"`
		Cost      float64 `json:"cost"`
	} `json:"subagents"`
}

func (p *proc) subagents(parent string) subagentsPage {
	p.t.Helper()
	p.send("subagents.list", 1, map[string]any{"sessionID": parent, "limit": 200})
	r := p.recv()
	for len(r.ID) == 0 { // a subagents.changed the sidecar sent meanwhile
		r = p.recv()
	}
	require.Nil(p.t, r.Error)
	var page subagentsPage
	require.NoError(p.t, json.Unmarshal(r.Result, &page))
	return page
}

// Two sidecars on one project's database record their subagents at the
// same time: each sees every one, and the sums are exact (one intent,
// one transaction, across processes).
func TestSubagentsTwoProcesses(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	a := start(t, true, "--state", state)
	b := start(t, true, "--state", state)
	a.initialize()
	b.initialize()
	for i := range 10 {
		for w, p := range []*proc{a, b} {
			child := fmt.Sprintf("ses_%d_%02d", w, i)
			p.subagentEvent("session.created", map[string]any{"sessionID": child, "info": map[string]any{"id": child, "parentID": "ses_P",
				"title": "Work (@general subagent)", "time": map[string]any{"created": 1795993563894 + i}}})
			for range 2 { // a message reported twice counts once
				p.subagentEvent("message.updated", map[string]any{"sessionID": child, "info": map[string]any{"id": "msg_1", "sessionID": child,
					"role": "assistant", "providerID": "fake", "modelID": "m", "cost": 0.5, "tokens": map[string]any{"input": 10, "output": 1}}})
			}
		}
	}
	var page subagentsPage
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if page = b.subagents("ses_P"); page.Parent.Subagents == 20 && page.Parent.Total.Cost == 10 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.Equal(t, 20, page.Parent.Subagents)
	assert.Len(t, page.Subagents, 20)
	assert.InDelta(t, 10.0, page.Parent.Total.Cost, 1e-9)
	assert.Equal(t, int64(200), page.Parent.Total.Tokens.Input)
	assert.Equal(t, 20, page.Parent.Running, "both writers are alive")
	assert.Equal(t, page.Parent, a.subagents("ses_P").Parent, "the other process reads the same")
}

// A child recorded running by a sidecar that is killed is never shown
// running after: the next sidecar reads it interrupted until OpenCode
// reports it again (PROTOCOL.md 4.10).
func TestSubagentsInterruptedAfterKill(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	a := start(t, true, "--state", state)
	a.initialize()
	a.subagentEvent("session.created", map[string]any{"sessionID": "ses_C", "info": map[string]any{"id": "ses_C", "parentID": "ses_P",
		"title": "Slow audit (@general subagent)"}})
	require.Equal(t, "running", a.subagents("ses_P").Subagents[0].State)
	require.NoError(t, a.cmd.Process.Kill())
	a.waitExit()

	b := start(t, true, "--state", state)
	b.initialize()
	page := b.subagents("ses_P")
	require.Len(t, page.Subagents, 1)
	assert.Equal(t, "interrupted", page.Subagents[0].State)
	assert.Equal(t, 0, page.Parent.Running)

	b.subagentEvent("session.status", map[string]any{"sessionID": "ses_C", "status": map[string]any{"type": "busy"}})
	assert.Equal(t, "running", b.subagents("ses_P").Subagents[0].State, "OpenCode reported it again")
	b.subagentEvent("session.idle", map[string]any{"sessionID": "ses_C"})
	assert.Equal(t, "done", b.subagents("ses_P").Subagents[0].State)
}
