package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookwire/hookwire/handlers"
	"github.com/hookwire/hookwire/rpc"
	"github.com/hookwire/hookwire/transcript"
)

// secrets are what a client that does not project sends in a history:
// none of them may reach a redacted recording.
var secrets = []string{"SECRET-FILE-CONTENTS", "SECRET-COMMAND-OUTPUT", "SECRET-UNKNOWN", "SECRET-DIFF"}

// recordSession runs one session through `serve --record` with a state
// file that already remembers explorer-1 for ses_p, and returns the
// recording's path.
func recordSession(t *testing.T, redact bool) string {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	seed := start(t, false, "--state", state)
	seed.initialize()
	seed.orchestrate("ses_p")
	seed.createTask("ses_p", "call_1", "explorer", "ses_t1")
	seed.send("exit", nil, nil)
	require.Equal(t, 0, seed.waitExit())

	rec := filepath.Join(dir, "session.json")
	args := []string{"--state", state, "--record", rec}
	if redact {
		args = append(args, "--record-redact")
	}
	p := start(t, true, args...)
	p.initialize()
	p.orchestrate("ses_p")
	// explorer-2: the counter comes from the state file.
	p.createTask("ses_p", "call_2", "explorer", "ses_t2")
	history := `{"input":{"sessionID":"ses_p"},"output":{"messages":[` +
		`{"info":{"id":"msg_1","role":"user","agent":"orchestrator","sessionID":"ses_p","extra":"SECRET-UNKNOWN"},"parts":[{"type":"text","text":"look around"}]},` +
		`{"info":{"id":"msg_2","role":"assistant","sessionID":"ses_p"},"parts":[` +
		`{"type":"tool","tool":"read","state":{"status":"completed","input":{"filePath":"/x"},"output":"SECRET-FILE-CONTENTS"}},` +
		`{"type":"tool","tool":"bash","state":{"status":"completed","output":"SECRET-COMMAND-OUTPUT","metadata":{"diff":["SECRET-DIFF"]}}},` +
		`{"type":"tool","tool":"task","state":{"status":"error","error":"Agent 'nope' not found. Available agents: explorer"}}]},` +
		`{"info":{"id":"msg_3","role":"user","agent":"orchestrator","sessionID":"ses_p"},"parts":[{"type":"text","text":"go on"}]}]}}`
	p.hookCall("chat.messages.transform", history)
	p.hookCall("chat.system.transform", `{"input":{"sessionID":"ses_p"},"output":{"system":["base"]}}`)
	p.call("sessions.list", map[string]any{})
	p.status()
	p.send("exit", nil, nil)
	require.Equal(t, 0, p.waitExit(), p.stderr.String())
	return rec
}

func TestRecordedSessionReplays(t *testing.T) {
	for _, redact := range []bool{false, true} {
		t.Run(map[bool]string{false: "as sent", true: "redacted"}[redact], func(t *testing.T) {
			rec := recordSession(t, redact)
			fi, err := os.Stat(rec)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			data, err := os.ReadFile(rec)
			require.NoError(t, err)
			assert.Contains(t, string(data), `"state": {`, "the recording starts from the loaded store")
			assert.Contains(t, string(data), "explorer: exp-2 work; exp-1 work", "the reply that used the loaded counter is recorded")
			for _, s := range secrets {
				if redact {
					assert.NotContains(t, string(data), s)
				} else {
					assert.Contains(t, string(data), s)
				}
			}
			assert.Contains(t, string(data), "Agent 'nope' not found", "task errors are read, so kept")

			_, diffs, err := transcript.ReplayFile(rec, transcript.Process{Bin: binPath}, transcript.ReplayOptions{})
			require.NoError(t, err)
			assert.Empty(t, diffs, "the recording replays against the binary that made it")

			// Without its state step the replay starts empty and hands out
			// exp-1 where the session got exp-2.
			steps, err := transcript.ReadFile(rec)
			require.NoError(t, err)
			var stateless []transcript.Step
			for _, st := range steps {
				if st.State == nil {
					stateless = append(stateless, st)
				}
			}
			require.Len(t, stateless, len(steps)-1)
			path := filepath.Join(t.TempDir(), "stateless.json")
			require.NoError(t, transcript.WriteFile(path, stateless))
			_, diffs, err = transcript.ReplayFile(path, transcript.Process{Bin: binPath}, transcript.ReplayOptions{})
			require.NoError(t, err)
			require.NotEmpty(t, diffs, "the state step is what makes the replay match")
			assert.Contains(t, diffs[0].String(), "exp-1 work")
		})
	}
}

// TestRedactedTranscriptsReplay is redaction's promise over every
// transcript: with the strings the sidecar never reads masked in every
// message sent, each replies as the transcript says.
func TestRedactedTranscriptsReplay(t *testing.T) {
	files, err := filepath.Glob("../../testdata/transcripts/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	masked := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			steps, err := transcript.ReadFile(f)
			require.NoError(t, err)
			for i, st := range steps {
				if st.Send == nil {
					continue
				}
				var buf bytes.Buffer
				require.NoError(t, json.Compact(&buf, st.Send))
				msg := buf.Bytes()
				env, err := rpc.ReadEnvelope(msg)
				require.NoError(t, err, "step %d", i+1)
				before := string(msg)
				if env.ParamsEnd == env.ParamsStart {
					continue // no params
				}
				params, err := handlers.RedactParams(env.Method, msg[env.ParamsStart:env.ParamsEnd])
				require.NoError(t, err, "step %d", i+1)
				require.Len(t, params, env.ParamsEnd-env.ParamsStart, "step %d: redaction keeps the length", i+1)
				copy(msg[env.ParamsStart:], params)
				masked += strings.Count(string(msg), "*") - strings.Count(before, "*")
				steps[i].Send = msg
			}
			path := filepath.Join(t.TempDir(), filepath.Base(f))
			require.NoError(t, transcript.WriteFile(path, steps))
			_, diffs, err := transcript.ReplayFile(path, transcript.Process{Bin: binPath}, transcript.ReplayOptions{})
			require.NoError(t, err)
			assert.Empty(t, diffs, "redacted, %s replies differently", f)
		})
	}
	assert.Positive(t, masked, "the transcripts hold strings to redact")
}

// replay -json writes one line per file: its steps as read and its
// differences, which scripts use instead of parsing transcripts.
func TestReplayJSON(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"note":"n"}
{"send":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}}
{"recv":{"jsonrpc":"2.0","id":1,"result":"<any>"}}
`), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte(`{"send":{"jsonrpc":"2.0","id":1,"method":"status"}}

{"recv":{"jsonrpc":"2.0","id":1,"result":{}}}
`), 0o644))
	missing := filepath.Join(dir, "missing.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "-json", "-bin", binPath, good, bad, missing}, nil, &stdout, &stderr)
	assert.Equal(t, 1, code, stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 3, stdout.String())
	var got []replayJSON
	for _, l := range lines {
		var r replayJSON
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		got = append(got, r)
	}

	assert.Equal(t, good, got[0].File)
	assert.True(t, got[0].OK)
	assert.Empty(t, got[0].Error)
	assert.Empty(t, got[0].Differences)
	require.Len(t, got[0].Steps, 3)
	assert.Equal(t, []int{1, 2, 3}, []int{got[0].Steps[0].Line, got[0].Steps[1].Line, got[0].Steps[2].Line})
	assert.Equal(t, "n", got[0].Steps[0].Value.Note)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, string(got[0].Steps[1].Value.Send))
	assert.Contains(t, lines[0], `"value":{"note":"n"}`, "a step's value is the step as the file holds it")

	assert.False(t, got[1].OK)
	require.Len(t, got[1].Differences, 1)
	d := got[1].Differences[0]
	assert.Equal(t, []int{2, 3}, []int{d.Step, d.Line})
	assert.Equal(t, "at /error: unexpected", d.What)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(d.Want))
	assert.Contains(t, string(d.Got), `"code":-32002`, "status before initialize")

	assert.False(t, got[2].OK)
	assert.Contains(t, got[2].Error, "no such file")
	assert.Empty(t, got[2].Steps)
}
