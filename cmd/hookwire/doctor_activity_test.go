package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
	"github.com/hookwire/hookwire/sessions"
	"github.com/hookwire/hookwire/subagents"
)

// TestDoctorActivity: the activity line tells "installed but idle" from
// "working" by what the state database holds (issue 32).
func TestDoctorActivity(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	tests := []struct {
		name       string
		configured bool
		got        sessiondb.StateContents
		level      level
		want       string // a regexp the text matches
		fix        string // a regexp the fix matches ("" none)
	}{
		{name: "nothing, plugin configured", configured: true, level: levelInfo,
			want: `^installed but idle: no hook call has reached a sidecar in this project yet`, fix: `^start OpenCode in this project and give an agent work it delegates`},
		{name: "nothing, plugin not configured", level: levelInfo,
			want: `^installed but idle`, fix: `^configure the plugin`},
		{name: "hook calls, no delegation", configured: true, got: sessiondb.StateContents{TrackedSessions: 2, Parents: 1}, level: levelInfo,
			want: `^hook calls reached the sidecar \(2 sessions whose agent it knows\), but no task was delegated yet: no alias made\.$`},
		{name: "one delegation", configured: true, level: levelOK,
			got: sessiondb.StateContents{Parents: 1, TrackedSessions: 2, FrozenBlocks: 1, Sessions: []sessions.Entry{
				{Parent: "ses_p", Agent: "explore", Alias: "exp-1", TaskID: "ses_c", LastUse: at(3 * time.Minute), Run: sessions.Run{State: sessions.RunCompleted}}}},
			want: `^working: 1 alias made under 1 parent session: exp-1 \(explore\); the latest task call at 2026-12-01T11:57:00Z \(3 minutes ago\) \(exp-1, completed\); the Resumable Sessions list frozen on 1 user message; no model fallback\.$`},
		{name: "delegations, a failed one latest, a fallback, a model cooling", configured: true, level: levelOK,
			got: sessiondb.StateContents{Parents: 2, Sessions: []sessions.Entry{
				{Parent: "ses_p2", Agent: "general", Alias: "gen-1", LastUse: at(time.Hour), Run: sessions.Run{State: sessions.RunCompleted},
					Switches: []sessions.Switch{{From: "fake/a", To: "fake/b", Reason: "rate-limit: 429", At: at(time.Hour)},
						// chat.message's switch while fake/a cools down: the same failure (issue 51)
						{From: "fake/a", To: "fake/b", Reason: "cooling until 2026-12-01T11:05:00Z (rate-limit: 429)", At: at(time.Hour - time.Second)}}},
				{Parent: "ses_p1", Agent: "explore", Alias: "exp-2", LastUse: at(10 * time.Second), Run: sessions.Run{State: sessions.RunError, Error: "Provider\nerror"}},
				{Parent: "ses_p1", Agent: "explore", Alias: "exp-1", LastUse: at(2 * time.Hour)}},
				Health: []sessions.Health{{Model: "fake/a", Until: now.Add(time.Minute)}, {Model: "fake/c", Until: at(time.Minute)}}},
			want: `^working: 3 aliases made under 2 parent sessions: exp-2 \(explore\), gen-1 \(general\), exp-1 \(explore\); the latest task call at \S+ \(just now\) \(exp-2, error: Provider error\); 1 model fallback, the latest gen-1: fake/a -> fake/b at \S+ \(1 hour ago\) \(rate-limit\); 1 model cooling down now\.$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &doctor{}
			if tt.configured {
				d.entries = []pluginEntry{{config: "opencode.json", spec: pluginPackage}}
			}
			d.addActivity(tt.got, now)
			require.Len(t, d.findings, 1)
			f := d.findings[0]
			assert.Equal(t, "activity", f.what)
			assert.Equal(t, tt.level, f.level)
			assert.Regexp(t, tt.want, f.text)
			if tt.fix == "" {
				assert.Empty(t, f.fix)
			} else {
				assert.Regexp(t, tt.fix, f.fix)
			}
		})
	}
}

// TestDoctorActivityFromDatabase: the line from a real sidecar's database
// on the project's default path: idle before, working after a delegation.
func TestDoctorActivityFromDatabase(t *testing.T) {
	e := newDoctorEnv(t)
	e.sidecar("v0.3.0")
	e.installed("hookwire-opencode@latest", "0.3.0")
	e.globalJSON(`{"plugin":["hookwire-opencode"]}`)
	code, stdout, _ := runCmd("doctor", "--project", e.project)
	assert.Equal(t, 0, code, stdout)
	assert.Regexp(t, `(?m)^- +activity +installed but idle: `, stdout)

	state, err := sessiondb.ProjectStatePath(e.project)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(state), 0o700))
	p := start(t, false, "--state", state)
	p.initialize()
	p.orchestrate("ses_parent")
	p.createTask("ses_parent", "call_1", "explorer", "ses_child")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())

	code, stdout, _ = runCmd("doctor", "--project", e.project)
	assert.Equal(t, 0, code, stdout)
	assert.Regexp(t, `(?m)^ok +activity +working: 1 alias made under 1 parent session: exp-1 \(explorer\); the latest task call at \S+ \(just now\) \(exp-1, completed\)`, stdout)
}

// The subagents line: the latest parent's subagents with the figures
// `hookwire sessions` shows, its own and its total (issue 51).
func TestDoctorSubagentActivity(t *testing.T) {
	d := &doctor{}
	d.addSubagentActivity(subagents.Page{
		Parent: subagents.Parent{SessionID: "ses_P", Subagents: 6, Running: 1,
			Own:   subagents.Figures{Tokens: subagents.Tokens{Input: 10, Output: 5}, Cost: 0.0002},
			Total: subagents.Figures{Tokens: subagents.Tokens{Input: 30, Output: 15}, Cost: 0.0005}},
		Subagents: []subagents.Row{{SessionID: "ses_C", Alias: "gen-1", Agent: "general", Label: "Slow audit\x1b[2J", State: subagents.Cancelled,
			Tokens: subagents.Tokens{Input: 20, Output: 10}, Cost: 0.0003}},
	})
	require.Len(t, d.findings, 1)
	assert.Equal(t, "subagents", d.findings[0].what)
	assert.Equal(t, "6 subagents under ses_P, 1 running; its own 10 in, 5 out, $0.0002, total with subagents 30 in, 15 out, $0.0005; "+
		"the latest gen-1 (general) cancelled, 20 in, 10 out, $0.0003.", d.findings[0].text)
}
