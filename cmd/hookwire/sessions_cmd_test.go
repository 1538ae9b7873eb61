package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/sessiondb"
)

// twoParentState is a state file as a sidecar writes it: p1 with two
// explorer entries (one label with a tab and a newline) and an oracle one,
// p2 with one entry and two frozen blocks, two tracked sessions; the
// prompt-cache figures of p1 (two busts, one hookwire's) and of exp-2's
// session ses_b (none).
const twoParentState = `{"version":1,"clock":5,"parents":[
 {"id":"ses_p2","counters":{"exp":1},"entries":[
  {"agent":"explorer","alias":"exp-1","taskId":"ses_c","label":"three","lastUse":"2026-11-30T10:00:05Z","use":5}],
  "frozen":[{"messageId":"msg_1","block":"### Resumable Sessions"},{"messageId":"msg_2","block":""}]},
 {"id":"ses_p1","counters":{"exp":2,"ora":1},"entries":[
  {"agent":"explorer","alias":"exp-2","taskId":"ses_b","label":"find\tthe\ntests","lastUse":"2026-11-30T10:00:04Z","use":4},
  {"agent":"oracle","alias":"ora-1","taskId":"ses_o","label":"","lastUse":"2026-11-30T10:00:02Z","use":2},
  {"agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"one","lastUse":"2026-11-30T10:00:01Z","use":1}]}],
 "sessionAgents":[{"session":"ses_p1","agent":"orchestrator"},{"session":"ses_p2","agent":"build"}],
 "cache":[
  {"session":"ses_p1","requests":5,"inputTokens":300,"outputTokens":50,"cacheReadTokens":600,"cacheWriteTokens":100,
   "bustCount":2,"tokensLost":150,"bustsInARow":1,"busts":[
    {"message":"msg_a3","tokensLost":100,"cause":"system","byHookwire":true,"detail":"system prompt changed by hookwire (its Resumable Sessions block)"},
    {"message":"msg_a5","tokensLost":50,"cause":"message","byHookwire":false,"detail":"message 2 changed by another plugin or OpenCode"}],
   "last":{"message":"msg_a5","model":"fake/fake-model","cacheRead":200,"print":"s1f.0mAQAAAAAAAAACAAAAAAAAAAAAAAAAAAAA"}},
  {"session":"ses_b","requests":2,"inputTokens":100,"cacheReadTokens":100,"busts":[]}]}`

func TestSessionsCommand(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	project := filepath.Join(root, "proj")
	require.NoError(t, mkdirs(project))
	projectState, err := sessiondb.ProjectStatePath(project)
	require.NoError(t, err)
	require.NoError(t, mkdirs(filepath.Dir(projectState)))
	require.NoError(t, os.WriteFile(projectState, []byte(twoParentState), 0o600))

	write := func(name, content string) string {
		p := filepath.Join(root, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	empty := write("empty.json", "")
	corrupt := write("corrupt.json", `{"version":1,"parents":[{"id":`)
	future := write("future.json", `{"version":2}`)
	missing := filepath.Join(root, "missing.json")

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines, in order, each a substring of one line of stdout
		stderr string
	}{
		{
			name: "--project: the table, most recently active parent first",
			args: []string{"--project", project},
			stdout: []string{
				projectState + ": 4 subagent sessions under 2 parent sessions (2 saved session lists, 2 sessions with a known agent)",
				"",
				"PARENT  AGENT     ALIAS  LABEL           TASK ID  CACHE                LAST USE              MODEL",
				"ses_p2  explorer  exp-1  three           ses_c    -                    2026-11-30T10:00:05Z  -",
				"ses_p1  explorer  exp-2  find the tests  ses_b    50% cached, 0 busts  2026-11-30T10:00:04Z  -",
				"ses_p1  oracle    ora-1  -               ses_o    -                    2026-11-30T10:00:02Z  -",
				"ses_p1  explorer  exp-1  one             ses_a    -                    2026-11-30T10:00:01Z  -",
				"",
				"prompt cache, per session (2 sessions):",
				"SESSION  AGENT         PARENT  REQUESTS  CACHE                LAST BUST",
				"ses_p1   orchestrator  -       5         60% cached, 2 busts  message, 50 tokens: message 2 changed by another plugin or OpenCode",
				"ses_b    explorer      ses_p1  2         50% cached, 0 busts  -",
			},
		},
		{
			name:   "--state: an empty file is an empty state",
			args:   []string{"--state", empty},
			stdout: []string{empty + ": 0 subagent sessions under 0 parent sessions (0 saved session lists, 0 sessions with a known agent)"},
		},
		{
			name:   "a missing file: said, exit 0",
			args:   []string{"--state", missing},
			stdout: []string{missing + ": no state database yet, nothing remembered"},
		},
		{
			name:   "a corrupt file: exit 1, what to do",
			args:   []string{"--state", corrupt},
			code:   1,
			stderr: corrupt + " is not loadable state (corrupt): decoding session state: unexpected EOF",
		},
		{
			name:   "a file from a newer hookwire: exit 1",
			args:   []string{"--state", future, "--json"},
			code:   1,
			stderr: "unknown format version 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(append([]string{"sessions"}, tt.args...)...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
				assert.Empty(t, stdout)
				return
			}
			assert.Empty(t, stderr)
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			require.Len(t, lines, len(tt.stdout), "%s", stdout)
			for i, want := range tt.stdout {
				assert.Equal(t, want, strings.TrimRight(lines[i], " "), "line %d", i)
			}
		})
	}
}

func TestSessionsJSON(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(state, []byte(twoParentState), 0o600))
	missing := filepath.Join(dir, "missing.json")
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	noEntries := filepath.Join(dir, "no-entries.json")
	require.NoError(t, os.WriteFile(noEntries, []byte(`{"version":1,"parents":[],"sessionAgents":[{"session":"ses_p1","agent":"build"}]}`), 0o600))

	tests := []struct {
		name string
		path string
		want string
	}{
		{"a state file", state, `{"path":"` + state + `","exists":true,"parents":2,"frozenBlocks":2,"trackedSessions":2,"health":[],"sessions":[
			{"parent":"ses_p2","agent":"explorer","alias":"exp-1","taskId":"ses_c","label":"three","lastUse":"2026-11-30T10:00:05Z"},
			{"parent":"ses_p1","agent":"explorer","alias":"exp-2","taskId":"ses_b","label":"find\tthe\ntests","lastUse":"2026-11-30T10:00:04Z"},
			{"parent":"ses_p1","agent":"oracle","alias":"ora-1","taskId":"ses_o","label":"","lastUse":"2026-11-30T10:00:02Z"},
			{"parent":"ses_p1","agent":"explorer","alias":"exp-1","taskId":"ses_a","label":"one","lastUse":"2026-11-30T10:00:01Z"}],"cache":[
			{"session":"ses_p1","parent":null,"agent":"orchestrator","requests":5,"inputTokens":300,"cacheReadTokens":600,"cacheWriteTokens":100,"busts":[
				{"message":"msg_a3","tokensLost":100,"cause":"system","byHookwire":true,"detail":"system prompt changed by hookwire (its Resumable Sessions block)"},
				{"message":"msg_a5","tokensLost":50,"cause":"message","byHookwire":false,"detail":"message 2 changed by another plugin or OpenCode"}]},
			{"session":"ses_b","parent":"ses_p1","agent":"explorer","requests":2,"inputTokens":100,"cacheReadTokens":100,"cacheWriteTokens":0,"busts":[]}],"subagents":[]}`},
		{"no file: exists false, an empty list (not null)", missing,
			`{"path":"` + missing + `","exists":false,"parents":0,"frozenBlocks":0,"trackedSessions":0,"health":[],"sessions":[],"cache":[],"subagents":[]}`},
		{"an empty file: an empty list (not null)", empty,
			`{"path":"` + empty + `","exists":true,"parents":0,"frozenBlocks":0,"trackedSessions":0,"health":[],"sessions":[],"cache":[],"subagents":[]}`},
		{"a state file without entries: an empty list (not null)", noEntries,
			`{"path":"` + noEntries + `","exists":true,"parents":0,"frozenBlocks":0,"trackedSessions":1,"health":[],"sessions":[],"cache":[],"subagents":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd("sessions", "--state", tt.path, "--json")
			require.Equal(t, 0, code, stderr)
			// The entries are sessions.list's: compare the members this
			// command documents, whatever others sessions.Entry gains.
			assert.JSONEq(t, tt.want, string(documentedMembers(t, []byte(stdout))))
		})
	}
}

// documentedMembers keeps the top-level members and, in each entry, the
// six members README's Commands section lists. A "sessions" that is not
// an array (null) is kept as it is, so the comparison sees it.
func documentedMembers(t *testing.T, data []byte) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &doc))
	if !strings.HasPrefix(string(doc["sessions"]), "[") {
		return data
	}
	var entries []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["sessions"], &entries))
	kept := make([]map[string]json.RawMessage, len(entries))
	for i, e := range entries {
		kept[i] = map[string]json.RawMessage{}
		for _, k := range []string{"parent", "agent", "alias", "taskId", "label", "lastUse"} {
			require.Contains(t, e, k)
			kept[i][k] = e[k]
		}
	}
	out, err := json.Marshal(kept)
	require.NoError(t, err)
	doc["sessions"] = out
	out, err = json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// TestSessionsAndDoctorWhileServed: a real sidecar serves the project's
// state file (holding its lock); `hookwire sessions` lists what it wrote
// and `hookwire doctor` names its pid, and neither disturbs it: it goes
// on writing, and a second sidecar still finds the file locked.
func TestSessionsAndDoctorWhileServed(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	project := filepath.Join(root, "proj")
	require.NoError(t, mkdirs(home, project))
	state, err := sessiondb.ProjectStatePath(project)
	require.NoError(t, err)

	p := start(t, false, "--project", project)
	p.initialize()
	p.orchestrate("ses_a")
	p.createTask("ses_a", "call_1", "explorer", "ses_first")
	require.Nil(t, p.call("shutdown", nil).Error) // the process goes on holding the file

	out, err := exec.Command(binPath, "sessions", "--project", project, "--json").Output()
	require.NoError(t, err)
	var list sessionsList
	require.NoError(t, json.Unmarshal(out, &list))
	assert.Equal(t, state, list.Path)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, "exp-1", list.Sessions[0].Alias)
	assert.Equal(t, "ses_first", list.Sessions[0].TaskID)

	out, _ = exec.Command(binPath, "doctor", "--project", project).Output()
	assert.Contains(t, string(out), fmt.Sprintf("%s: ", state))
	assert.Contains(t, string(out), "1 subagent session under 1 parent session, 0 saved session lists; shared by every sidecar on the project.")

	// The sidecar still writes, and readers see each commit at once.
	p.createTask("ses_a", "call_2", "explorer", "ses_second")
	got, err := sessiondb.ReadState(state)
	require.NoError(t, err)
	assert.Len(t, got.Sessions, 2, "the sidecar wrote after sessions and doctor read")
	p.stdin.Close()
	require.Equal(t, 0, p.waitExit())

	out, _ = exec.Command(binPath, "doctor", "--project", project).Output()
	assert.Contains(t, string(out), "2 subagent sessions under 1 parent session, 0 saved session lists; shared by every sidecar on the project.")
}

// A share short of all never reads 100% (4,368 of 4,380 cached input
// tokens printed "100% cached"), one above none never 0%.
func TestSharePercent(t *testing.T) {
	for _, tt := range []struct {
		share float64
		want  int
	}{
		{4368.0 / 4380, 99}, {0.995, 99}, {1, 100}, {0.5, 50}, {0.874, 87}, {0.875, 88}, {0, 0}, {0.001, 1}, {0.006, 1},
	} {
		assert.Equal(t, tt.want, sharePercent(tt.share), "%v", tt.share)
	}
}
