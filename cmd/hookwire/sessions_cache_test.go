package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noFiguresState: exp-1's session ses_n ran on a provider that reports no
// cache figures (every usage had cache read and write 0); exp-2's ses_w
// wrote to the cache and never read from it (a real 0%).
const noFiguresState = `{"version":1,"clock":2,"parents":[
 {"id":"ses_p","counters":{"exp":2},"entries":[
  {"agent":"explorer","alias":"exp-2","taskId":"ses_w","label":"writes only","lastUse":"2026-11-30T10:00:02Z","use":2},
  {"agent":"explorer","alias":"exp-1","taskId":"ses_n","label":"no figures","lastUse":"2026-11-30T10:00:01Z","use":1}]}],
 "sessionAgents":[{"session":"ses_p","agent":"build"}],
 "cache":[
  {"session":"ses_n","requests":3,"inputTokens":900,"outputTokens":30,"cacheReadTokens":0,"cacheWriteTokens":0,"busts":[]},
  {"session":"ses_w","requests":1,"inputTokens":50,"cacheReadTokens":0,"cacheWriteTokens":50,"busts":[]}]}`

// TestSessionsNoCacheFigures: a session whose provider reported no cache
// figures says so, in the table and in --json, never "0% cached"; one
// with figures keeps its share, a real 0% included.
func TestSessionsNoCacheFigures(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(state, []byte(noFiguresState), 0o600))

	code, stdout, stderr := runCmd("sessions", "--state", state)
	require.Equal(t, 0, code, stderr)
	// row is the line whose first n fields are want's.
	row := func(t *testing.T, want ...string) string {
		for _, l := range strings.Split(stdout, "\n") {
			if f := strings.Fields(l); len(f) >= len(want) && strings.Join(f[:len(want)], " ") == strings.Join(want, " ") {
				return l
			}
		}
		require.Failf(t, "no such line", "no line starting %q in:\n%s", want, stdout)
		return ""
	}
	for _, tt := range []struct {
		name      string
		row       []string
		want, not string
	}{
		{"the entry without figures", []string{"ses_p", "explorer", "exp-1"}, "no cache figures", "% cached"},
		{"the entry that only wrote: a real 0%", []string{"ses_p", "explorer", "exp-2"}, "0% cached, 0 busts", "no cache figures"},
		{"the cache table, without figures", []string{"ses_n"}, "no cache figures", "% cached"},
		{"the cache table, a real 0%", []string{"ses_w"}, "0% cached, 0 busts", "no cache figures"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := row(t, tt.row...)
			assert.Contains(t, l, tt.want)
			assert.NotContains(t, l, tt.not)
		})
	}

	code, stdout, stderr = runCmd("sessions", "--state", state, "--json")
	require.Equal(t, 0, code, stderr)
	var list struct {
		Cache []map[string]any `json:"cache"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &list))
	require.Len(t, list.Cache, 2)
	got := map[string]any{}
	for _, c := range list.Cache {
		got[c["session"].(string)] = c["noCacheFigures"]
	}
	assert.Equal(t, map[string]any{"ses_n": true, "ses_w": nil}, got, "noCacheFigures only where the provider reported none")
}
