package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func render(t *testing.T, steps ...step) string {
	t.Helper()
	var buf bytes.Buffer
	tw := &transcriptWriter{w: &buf}
	for _, st := range steps {
		require.NoError(t, tw.write(st))
	}
	return buf.String()
}

// bigReply is a reply shaped like the recorded ones: too long for a line,
// with a long string and many short members.
func bigReply(third string) json.RawMessage {
	reminder := "<internal_reminder>\n" + strings.Repeat("Work in phases. ", 20) + "\n</internal_reminder>"
	b, _ := json.Marshal(map[string]any{"id": 2, "jsonrpc": "2.0", "result": map[string]any{"patch": []any{
		map[string]any{"op": "add", "path": "/messages/2/parts/-", "value": map[string]any{"type": "text", "text": reminder, "synthetic": true}},
		map[string]any{"op": "replace", "path": "/args/task_id", "value": "ses_1"},
		map[string]any{"op": "remove", "path": third},
	}}})
	return b
}

func TestTranscriptRoundTrip(t *testing.T) {
	long := strings.Repeat(`{"jsonrpc":"2.0","pad":"xxxxxxxxxx"}`+"é\n", 40)
	rows := []struct {
		name string
		st   step
	}{
		{"note", step{Note: "a <note> & more"}},
		{"short send", step{Send: raw(`{"jsonrpc":"2.0","id":1,"method":"status"}`)}},
		{"send keeps member order", step{Send: raw(`{"method":"status","jsonrpc":"2.0","id":"z"}`)}},
		{"big reply", step{Recv: bigReply("/args/x")}},
		{"wildcard", step{Recv: raw(`{"id":1,"result":{"uptime":"<any>"}}`)}},
		{"short raw text", step{SendRaw: raw(`"not json\n"`)}},
		{"long raw text", step{SendRaw: mustJSON(long)}},
		{"raw text in parts", step{SendRaw: raw(`["{\"a\":", "1}\n"]`)}},
		{"large integer", step{Recv: raw(`{"id":12345678901234567890}`)}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out := render(t, row.st)
			steps, err := parseTranscript([]byte(out))
			require.NoError(t, err, out)
			require.Len(t, steps, 1)
			got := steps[0]
			assert.Equal(t, row.st.Note, got.Note)
			for _, pair := range [][2]json.RawMessage{{row.st.Send, got.Send}, {row.st.Recv, got.Recv}} {
				if pair[0] != nil {
					assert.JSONEq(t, string(pair[0]), string(pair[1]))
					assert.Equal(t, canon(t, pair[0]), canon(t, pair[1]), "same members in the same order")
				}
			}
			if row.st.SendRaw != nil {
				want, _ := row.st.rawText()
				have, err := got.rawText()
				require.NoError(t, err)
				assert.Equal(t, want, have)
			}
			assert.NotContains(t, out, `\u003c`, "no HTML escaping")
			assert.Equal(t, out, render(t, got), "writing what was read changes nothing")
		})
	}
}

func TestTranscriptLinesStayShort(t *testing.T) {
	long := strings.Repeat(`{"jsonrpc":"2.0","id":7,"method":"status","params":{"pad":"xxxx"}}`, 80)
	out := render(t, step{Recv: bigReply("/args/x")}, step{SendRaw: mustJSON(long)})
	for i, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "internal_reminder") {
			continue // a string is never split
		}
		assert.LessOrEqual(t, len(line), transcriptWidth, "line %d: %s", i+1, line)
	}
	assert.Contains(t, out, `"text": "<internal_reminder>\n`)
}

// A reply that changes in one member changes one line of the transcript:
// that is what makes an -update diff reviewable.
func TestTranscriptChangeIsOneLine(t *testing.T) {
	before := strings.Split(render(t, step{Note: "n"}, step{Recv: bigReply("/args/x")}), "\n")
	after := strings.Split(render(t, step{Note: "n"}, step{Recv: bigReply("/args/y")}), "\n")
	require.Equal(t, len(before), len(after))
	var changed []string
	for i := range before {
		if before[i] != after[i] {
			changed = append(changed, after[i])
		}
	}
	assert.Equal(t, []string{`        {"op": "remove", "path": "/args/y"}`}, changed)
}

// A recorder appends steps one at a time: the result is the same file
// writeTranscript writes, and it reads back step by step.
func TestTranscriptAppend(t *testing.T) {
	steps := []step{
		{Note: "first"},
		{Send: raw(`{"jsonrpc":"2.0","id":1,"method":"status"}`)},
		{Recv: bigReply("/args/x")},
	}
	path := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, writeTranscript(path, steps))
	whole, err := os.ReadFile(path)
	require.NoError(t, err)

	var appended bytes.Buffer
	tw := &transcriptWriter{w: &appended}
	for i, st := range steps {
		require.NoError(t, tw.write(st))
		read, err := parseTranscript(appended.Bytes())
		require.NoError(t, err)
		assert.Len(t, read, i+1, "the file reads whole after each append")
	}
	assert.Equal(t, string(whole), appended.String())
	assert.Equal(t, "{\"note\": \"first\"}\n\n{\"send\": ", string(whole[:len("{\"note\": \"first\"}\n\n{\"send\": ")]),
		"steps are separated by a blank line")
}

func TestTranscriptReadsOnePerLine(t *testing.T) {
	old := `{"note":"the earlier format"}
{"send":{"jsonrpc":"2.0","id":1,"method":"status"}}

{"recv":{"id":1,"jsonrpc":"2.0","result":{"v":"\u003cany\u003e"}}}
`
	steps, err := parseTranscript([]byte(old))
	require.NoError(t, err)
	require.Len(t, steps, 3)
	assert.Equal(t, []int{1, 2, 4}, []int{steps[0].line, steps[1].line, steps[2].line})
	var v struct {
		Result struct{ V string }
	}
	require.NoError(t, json.Unmarshal(steps[2].Recv, &v))
	assert.Equal(t, anyValue, v.Result.V)
}

func TestTranscriptErrors(t *testing.T) {
	rows := []struct {
		name, in, want string
	}{
		{"unknown member", "{\"note\":\"a\"}\n\n{\"recieve\":{}}", `3: step 2: json: unknown field "recieve"`},
		{"two kinds in one step", `{"send":{},"recv":{}}`, "1: step 1: a step has exactly one of"},
		{"empty step", `{}`, "1: step 1: a step has exactly one of"},
		{"raw text of the wrong type", `{"sendRaw":7}`, "1: step 1: sendRaw must be a string or an array of strings"},
		{"broken JSON", "{\"note\":\"a\"}\n{\"send\":", "2: step 2 is not a JSON value"},
		{"not an object", `[1]`, "1: step 1: json: cannot unmarshal array"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			_, err := parseTranscript([]byte(row.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), row.want)
		})
	}
}

func TestSplitText(t *testing.T) {
	assert.Equal(t, []string{"ab", "c\n", "d"}, splitText("abc\nd", 2))
	assert.Equal(t, []string{"a\"", "b"}, splitText("a\"b", 3), "width counts the escaped form")
	assert.Equal(t, []string{"é", "é"}, splitText("éé", 1), "never inside a rune")
	assert.Nil(t, splitText("", 5))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// canon returns raw compact, with strings escaped the one way jsontext does.
func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	b, err := jsontext.AppendFormat(nil, raw)
	require.NoError(t, err)
	return string(b)
}
